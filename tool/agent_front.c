// SPDX-License-Identifier: GPL-2.0
/*
 * The agent's HTTP front end: a process of its own, forked by the agent
 * (root, holding /dev/uwprof, reading every user's files) before sampling
 * starts, that drops every privilege and only then runs the HTTP layer
 * (agent_http.c: libmicrohttpd, the Host and token checks, the request
 * checks) on the socket the agent bound. What a request asks for goes to
 * the agent as a small message (agent_ipc.c) and the answer comes back;
 * a bug in libmicrohttpd or in our parsing reaches an unprivileged
 * process that can ask for profiles, nothing more.
 *
 * Dropped, in this order, before a byte is read from the network: the
 * descriptors other than the listening socket, the control socket and
 * stdio; the supplementary groups; every capability from the bounding
 * set; the gid and uid (real, effective, saved) for the --user's (nobody
 * by default); the ambient, inheritable, permitted and effective sets;
 * then no_new_privs, not dumpable (no ptrace by that user's other
 * processes), no core file; last a seccomp filter that answers EPERM to
 * the system calls a front end has no use for once it serves (executing,
 * tracing, opening files, new sockets, namespaces, mounts, modules, BPF,
 * perf, keys, io_uring, changes to files). Any step failing ends the
 * process before it serves. It dies with the agent (PR_SET_PDEATHSIG) and exits when the
 * agent closes the control socket.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"

#define FRONT_DEFAULT_USER	"nobody"
/* The front end's descriptors after the fork: stdio, then these. */
#define FRONT_FD_LISTEN		3
#define FRONT_FD_CTL		4

int agent_front_user(struct agent_front *f, const char *name, char *err,
		     size_t errlen)
{
	struct passwd *pw;
	char *end;
	unsigned long v;

	memset(f, 0, sizeof(*f));
	f->ctl = -1;
	if (geteuid()) {
		if (name) {
			snprintf(err, errlen,
				 "--user %s: only root can run the front end as another user",
				 name);
			return -1;
		}
		f->uid = geteuid();
		f->gid = getegid();
		return 0;
	}
	if (!name)
		name = FRONT_DEFAULT_USER;
	pw = getpwnam(name);
	if (!pw) {
		errno = 0;
		v = strtoul(name, &end, 10);
		pw = *name && !*end && !errno && v < 0x7fffffff ?
		     getpwuid((uid_t)v) : NULL;
	}
	if (!pw || !pw->pw_uid || !pw->pw_gid) {
		snprintf(err, errlen,
			 "--user %s: %s", name, !pw ? "no such user" :
			 "the front end's user must not be root or in group 0");
		return -1;
	}
	f->uid = pw->pw_uid;
	f->gid = pw->pw_gid;
	f->switch_user = 1;
	return 0;
}

/* ------------------------------------------------------ the child */

static int front_fail(const char *what)
{
	fprintf(stderr, "uwprof agent: front end: %s: %s\n", what,
		strerror(errno));
	return -1;
}

/*
 * Every capability out of the bounding set (needs CAP_SETPCAP: before
 * setuid). Without it ('must' 0: an agent not run by root) the set stays,
 * and no_new_privs keeps it from being used.
 */
static int front_drop_bounding(int must)
{
	int cap;

	for (cap = 0; cap <= 63; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) && errno != EINVAL) {
			if (!must && errno == EPERM)
				return 0;
			return front_fail("PR_CAPBSET_DROP");
		}
	return 0;
}

/* Ambient, inheritable, permitted, effective: all empty. */
static int front_drop_caps(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) &&
	    errno != EINVAL)
		return front_fail("PR_CAP_AMBIENT_CLEAR_ALL");
	if (syscall(SYS_capset, &h, d))
		return front_fail("capset");
	return 0;
}

/*
 * What the front end may not do once it serves, answered EPERM: it has
 * its sockets and needs no file, program, process or kernel facility
 * more. A denylist, not an allowlist: glibc and libmicrohttpd versions
 * differ in what else they call, and a call missing from an allowlist
 * would kill the front end (and so stop the agent).
 */
static const unsigned int front_denied[] = {
	SYS_execve, SYS_execveat, SYS_ptrace, SYS_process_vm_readv,
	SYS_process_vm_writev, SYS_openat, SYS_openat2, SYS_open_by_handle_at,
	SYS_name_to_handle_at, SYS_socket, SYS_connect, SYS_bind, SYS_listen,
	SYS_mount, SYS_umount2, SYS_pivot_root, SYS_chroot, SYS_unshare,
	SYS_setns, SYS_bpf, SYS_perf_event_open, SYS_userfaultfd,
	SYS_io_uring_setup, SYS_keyctl, SYS_add_key, SYS_request_key,
	SYS_init_module, SYS_finit_module, SYS_delete_module, SYS_kexec_load,
	SYS_mknodat, SYS_linkat, SYS_symlinkat, SYS_unlinkat, SYS_renameat2,
	SYS_mkdirat, SYS_fchmodat, SYS_fchownat, SYS_truncate, SYS_ftruncate,
#ifdef SYS_open	/* x86_64's older calls; arm64 has only the *at ones */
	SYS_open, SYS_creat, SYS_mknod, SYS_link, SYS_symlink, SYS_unlink,
	SYS_rename, SYS_renameat, SYS_mkdir, SYS_rmdir, SYS_chmod, SYS_chown,
	SYS_lchown, SYS_fork, SYS_vfork,
#endif
};

#if defined(__x86_64__)
#define FRONT_AUDIT_ARCH	AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define FRONT_AUDIT_ARCH	AUDIT_ARCH_AARCH64
#endif

/*
 * The filter: another architecture's calls (i386's int 0x80) kill; x32's
 * and the denied ones are EPERM; the rest allowed.
 */
int agent_front_seccomp(void)
{
	enum { N = sizeof(front_denied) / sizeof(front_denied[0]) };
	struct sock_filter f[N + 7];
	struct sock_fprog prog = { .len = 0, .filter = f };
	unsigned int i, n = 0;

	_Static_assert(N + 1 < 256, "jumps over the list fit in 8 bits");
#ifdef FRONT_AUDIT_ARCH
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		offsetof(struct seccomp_data, arch));
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
		FRONT_AUDIT_ARCH, 1, 0);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
		SECCOMP_RET_KILL_PROCESS);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		offsetof(struct seccomp_data, nr));
	/* x86_64's x32 calls: the same numbers with bit 30 set. */
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K,
		0x40000000U, N + 1, 0);
	for (i = 0; i < N; i++)
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
			front_denied[i], (unsigned char)(N - i), 0);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
		SECCOMP_RET_ALLOW);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
		SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA));
	prog.len = (unsigned short)n;
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0))
		return front_fail("PR_SET_SECCOMP");
#else
	(void)f;
	(void)prog;
	(void)i;
	(void)n;
#endif
	return 0;
}

static int front_drop(const struct agent_front *f, pid_t parent)
{
	struct rlimit no_core = { 0, 0 };
	uid_t r, e, s;

	if (f->switch_user) {
		if (setgroups(0, NULL))
			return front_fail("setgroups");
		if (front_drop_bounding(1))
			return -1;
		if (setresgid(f->gid, f->gid, f->gid))
			return front_fail("setresgid");
		if (setresuid(f->uid, f->uid, f->uid))
			return front_fail("setresuid");
		/* Nothing left to regain root with. */
		if (getresuid(&r, &e, &s) || r != f->uid || e != f->uid ||
		    s != f->uid || !setuid(0)) {
			errno = EPERM;
			return front_fail("the user did not change");
		}
	}
	if ((!f->switch_user && front_drop_bounding(0)) || front_drop_caps())
		return -1;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return front_fail("PR_SET_NO_NEW_PRIVS");
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0))
		return front_fail("PR_SET_DUMPABLE");
	setrlimit(RLIMIT_CORE, &no_core);
	/* Cleared by the change of user: set after it. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0))
		return front_fail("PR_SET_PDEATHSIG");
	if (getppid() != parent) {
		errno = ESRCH;
		return front_fail("the agent is gone");
	}
	if (chdir("/"))
		return front_fail("chdir /");
	return agent_front_seccomp();
}

/* Only stdio, the listening socket and the control socket stay open. */
static int front_fds(int listen_fd, int ctl)
{
	sigset_t none;

	/* Out of the way first: either may be 3 or 4 now. */
	listen_fd = fcntl(listen_fd, F_DUPFD_CLOEXEC, FRONT_FD_CTL + 1);
	ctl = fcntl(ctl, F_DUPFD_CLOEXEC, FRONT_FD_CTL + 1);
	if (listen_fd < 0 || ctl < 0 || dup2(listen_fd, FRONT_FD_LISTEN) < 0 ||
	    dup2(ctl, FRONT_FD_CTL) < 0)
		return front_fail("dup2");
	if (close_range(FRONT_FD_CTL + 1, ~0U, 0)) {
		long fd, max = sysconf(_SC_OPEN_MAX);

		/* Before 5.9: one by one. */
		if (errno != ENOSYS)
			return front_fail("close_range");
		for (fd = FRONT_FD_CTL + 1; fd < (max > 0 ? max : 65536); fd++)
			close((int)fd);
	}
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* The agent stops it, by closing the control socket. */
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

static int front_ctl = -1;

/* Who asks: the peer's uid on the unix socket, its address on TCP. */
static void front_client(const struct agent_conn *conn, uint32_t *kind,
			 uint8_t id[16])
{
	struct sockaddr_storage ss;
	socklen_t l = sizeof(ss);
	struct ucred cr;
	socklen_t crl = sizeof(cr);

	*kind = AGENT_IPC_CLIENT_NONE;
	memset(id, 0, 16);
	if (!conn || conn->fd < 0 ||
	    getpeername(conn->fd, (struct sockaddr *)&ss, &l))
		return;
	if (ss.ss_family == AF_UNIX &&
	    !getsockopt(conn->fd, SOL_SOCKET, SO_PEERCRED, &cr, &crl)) {
		*kind = AGENT_IPC_CLIENT_UID;
		memcpy(id, &cr.uid, 4);
	} else if (ss.ss_family == AF_INET) {
		*kind = AGENT_IPC_CLIENT_IPV4;
		memcpy(id, &((struct sockaddr_in *)&ss)->sin_addr, 4);
	} else if (ss.ss_family == AF_INET6) {
		*kind = AGENT_IPC_CLIENT_IPV6;
		memcpy(id, &((struct sockaddr_in6 *)&ss)->sin6_addr, 16);
	}
}

static int front_profile(void *ctx, const struct agent_req *q,
			 const struct agent_conn *conn, uint8_t **buf,
			 size_t *len, char *msg, size_t msglen)
{
	struct agent_ipc_msg m;
	uint8_t id[16];
	uint32_t kind;

	(void)ctx;
	front_client(conn, &kind, id);
	agent_ipc_encode(&m, AGENT_IPC_PROFILE, q, kind, id);
	return agent_ipc_call(front_ctl, &m, conn, buf, len, msg, msglen);
}

static int front_metrics(void *ctx, char **text)
{
	struct agent_ipc_msg m;
	uint8_t *buf;
	size_t len;
	char msg[256];

	(void)ctx;
	agent_ipc_encode(&m, AGENT_IPC_METRICS, NULL, AGENT_IPC_CLIENT_NONE,
			 NULL);
	if (agent_ipc_call(front_ctl, &m, NULL, &buf, &len, msg,
			   sizeof(msg)) != 200)
		return -EIO;
	buf[len] = 0;	/* agent_ipc_call leaves a byte for it */
	*text = (char *)buf;
	return 0;
}

static int front_about(void *ctx, char *out, size_t outlen)
{
	struct agent_ipc_msg m;
	uint8_t *buf;
	size_t len;
	char msg[256];

	(void)ctx;
	agent_ipc_encode(&m, AGENT_IPC_ABOUT, NULL, AGENT_IPC_CLIENT_NONE, NULL);
	if (agent_ipc_call(front_ctl, &m, NULL, &buf, &len, msg,
			   sizeof(msg)) != 200)
		return -EIO;
	snprintf(out, outlen, "%.*s", (int)len, (char *)buf);
	free(buf);
	return 0;
}

static const struct agent_source front_src = {
	.profile = front_profile,
	.metrics = front_metrics,
	.about_get = front_about,
};

/* The child: never returns. */
static void front_main(const struct agent_front *f, struct agent_http *h,
		       int ctl, pid_t parent)
{
	struct pollfd p = { .fd = FRONT_FD_CTL, .events = POLLRDHUP };
	char err[512];

	if (front_fds(h->fd, ctl) || front_drop(f, parent))
		_exit(1);
	h->fd = FRONT_FD_LISTEN;
	/* The agent removes its socket; this process could not. */
	h->socket_path = NULL;
	front_ctl = FRONT_FD_CTL;
	if (agent_http_serve(h, &front_src, err, sizeof(err))) {
		fprintf(stderr, "uwprof agent: front end: %s\n", err);
		_exit(1);
	}
	while (poll(&p, 1, -1) < 0 && errno == EINTR)
		;
	agent_http_stop(h);
	_exit(0);
}

int agent_front_start(struct agent_front *f, struct agent_http *h, char *err,
		      size_t errlen)
{
	pid_t parent = getpid();
	int sv[2], e;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		e = errno;
		snprintf(err, errlen, "the front end's socket: %s", strerror(e));
		return -e;
	}
	fflush(NULL);
	f->pid = fork();
	if (f->pid < 0) {
		e = errno;
		close(sv[0]);
		close(sv[1]);
		f->pid = 0;
		snprintf(err, errlen, "fork: %s", strerror(e));
		return -e;
	}
	if (!f->pid)
		front_main(f, h, sv[1], parent);
	close(sv[1]);
	f->ctl = sv[0];
	/* The front end's now: the agent neither accepts nor reads on it. */
	close(h->fd);
	h->fd = -1;
	return 0;
}

/* How a process ended, in words. */
static void front_how(int status, char *how, size_t howlen)
{
	if (WIFSIGNALED(status))
		snprintf(how, howlen, "killed by signal %d (%s)",
			 WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		snprintf(how, howlen, "exited with status %d",
			 WEXITSTATUS(status));
}

int agent_front_reap(struct agent_front *f, int wait_ms, char *how,
		     size_t howlen)
{
	struct timespec nap = { 0, 20000000L };
	int status = 0, waited;
	pid_t p = 0;

	snprintf(how, howlen, "had ended (reaped already)");
	if (f->pid <= 0)
		return 0;
	for (waited = 0; waited <= wait_ms; waited += 20) {
		p = waitpid(f->pid, &status, WNOHANG);
		if (p)
			break;
		nanosleep(&nap, NULL);
	}
	if (!p) {
		kill(f->pid, SIGKILL);
		p = waitpid(f->pid, &status, 0);
		snprintf(how, howlen, "did not exit within %d ms: killed",
			 wait_ms);
		f->pid = 0;
		return 0;
	}
	f->pid = 0;
	if (p < 0)
		return 0;
	front_how(status, how, howlen);
	return !WIFEXITED(status) || WEXITSTATUS(status);
}
