// SPDX-License-Identifier: GPL-2.0
/*
 * The agent's HTTP front end (tool/agent_front.c) and its messages to the
 * sampler (tool/agent_ipc.c) on the host. This test plays the sampler: it
 * binds the socket, forks the front end as the agent does, and answers
 * its messages with a fake profile source. Checked:
 *  - the process that holds the listening socket and answers HTTP is the
 *    front end, not this (root) process, and /proc/PID/status shows it
 *    without privilege: uid and gid nobody's, no supplementary group,
 *    every capability set empty (the bounding set too), no_new_privs,
 *    a seccomp filter;
 *  - requests pass through it as before: the index line, a profile's
 *    arguments, 400s, /metrics, the Host check (421), the token (401),
 *    and a client's disconnect cancels the window in the sampler;
 *  - messages a compromised front end could send to the sampler (the
 *    wrong size, an unknown endpoint, seconds negative or too large, an
 *    unterminated string, no socket or two, a pipe instead of a socket)
 *    are refused, counted, answered 400 where possible, never reach the
 *    source, and the sampler serves a good one after them;
 *  - a front end that never reads an answer holds the sampler's stop for
 *    the write's time limit, not forever;
 *  - the front end's seccomp filter (in a child of the test): opening a
 *    file, an AF_INET socket, execve and unlink EPERM, socketpair works;
 *  - the front end killed: the sampler sees the control socket end.
 * Must run as root (it switches the front end to nobody); otherwise it
 * says SKIP. Every wait is bounded.
 *
 *   agent-front-test SCRATCH-DIR
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "tap.h"

/* ---------------------------------------------------------- the source */

static int fake_calls, fake_cancelled, fake_waiting;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* pid=777: waits out 'seconds' as a window does, unless the client goes. */
static int fake_window(const struct agent_req *q, const struct agent_conn *conn,
		       char *msg, size_t msglen)
{
	double end = now_s() + q->seconds;

	__atomic_store_n(&fake_waiting, 1, __ATOMIC_SEQ_CST);
	while (now_s() < end) {
		if (agent_access_conn_gone(conn)) {
			__atomic_add_fetch(&fake_cancelled, 1, __ATOMIC_SEQ_CST);
			snprintf(msg, msglen, "gone");
			return 500;
		}
		usleep(20000);
	}
	snprintf(msg, msglen, "window done");
	return 500;
}

static int fake_profile(void *ctx, const struct agent_req *q,
			const struct agent_conn *conn, uint8_t **buf,
			size_t *len, char *msg, size_t msglen)
{
	char *s;

	(void)ctx;
	__atomic_add_fetch(&fake_calls, 1, __ATOMIC_SEQ_CST);
	if (q->pid == 999) {
		snprintf(msg, msglen, "fake failure");
		return 500;
	}
	if (q->pid == 777)
		return fake_window(q, conn, msg, msglen);
	if (q->pid == 555) {
		/* More than any socket buffer holds. */
		*len = 32u << 20;
		*buf = calloc(1, *len);
		return *buf ? 200 : 500;
	}
	if (asprintf(&s, "seconds=%u pid=%u comm=%s%s%s", q->seconds, q->pid,
		     q->comm, q->cgroup[0] ? " cgroup=" : "", q->cgroup) < 0)
		return 500;
	*buf = (uint8_t *)s;
	*len = strlen(s);
	return 200;
}

static int fake_metrics(void *ctx, char **text)
{
	(void)ctx;
	*text = strdup("# TYPE fake_metric gauge\nfake_metric 1\n");
	return *text ? 0 : -ENOMEM;
}

static const struct agent_source fake = {
	.profile = fake_profile, .metrics = fake_metrics,
	.about = "fake source in the sampler",
};

/* ------------------------------------------------------------ HTTP */

static int tcp_port;
static const char *unix_path;
static const char *req_host = "127.0.0.1";
static const char *req_auth;

static int dial(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons((uint16_t)tcp_port) };
	struct sockaddr_un su = { .sun_family = AF_UNIX };
	int fd;

	if (unix_path) {
		snprintf(su.sun_path, sizeof(su.sun_path), "%s", unix_path);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&su, sizeof(su))) {
			close(fd);
			return -1;
		}
		return fd;
	}
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

static void rcv_timeout(int fd, int secs)
{
	struct timeval tv = { .tv_sec = secs };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

/* "METHOD TARGET HTTP/1.0": the status, the whole answer in 'out'. */
static int http(const char *method, const char *target, char *out, size_t len)
{
	char req[768], host[128] = "", auth[300] = "";
	size_t got = 0;
	ssize_t n;
	int fd = dial(), status = -1;

	out[0] = 0;
	if (fd < 0)
		return -1;
	rcv_timeout(fd, 5);
	if (req_host[0])
		snprintf(host, sizeof(host), "Host: %s\r\n", req_host);
	if (req_auth)
		snprintf(auth, sizeof(auth), "Authorization: %s\r\n", req_auth);
	n = snprintf(req, sizeof(req), "%s %s HTTP/1.0\r\n%s%s\r\n", method,
		     target, host, auth);
	if (write(fd, req, (size_t)n) != n) {
		close(fd);
		return -1;
	}
	while (got + 1 < len && (n = read(fd, out + got, len - 1 - got)) > 0)
		got += (size_t)n;
	out[got] = 0;
	close(fd);
	sscanf(out, "HTTP/1.%*d %d", &status);
	return status;
}

static const char *body(const char *answer)
{
	const char *b = strstr(answer, "\r\n\r\n");

	return b ? b + 4 : "";
}

/* ------------------------------------------------- the front's process */

/* The pids whose descriptors include socket inode 'ino', in 'pids'. */
static int socket_holders(unsigned long ino, pid_t *pids, int max)
{
	char path[600], target[64], want[64];
	struct dirent *p, *e;
	DIR *proc = opendir("/proc"), *fds;
	int n = 0;

	snprintf(want, sizeof(want), "socket:[%lu]", ino);
	while (proc && (p = readdir(proc))) {
		int found = 0;

		if (p->d_name[0] < '1' || p->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/fd", p->d_name);
		fds = opendir(path);
		while (fds && !found && (e = readdir(fds))) {
			ssize_t l;

			snprintf(path, sizeof(path), "/proc/%s/fd/%s", p->d_name,
				 e->d_name);
			l = readlink(path, target, sizeof(target) - 1);
			if (l <= 0)
				continue;
			target[l] = 0;
			found = !strcmp(target, want);
		}
		if (fds)
			closedir(fds);
		if (found && n < max)
			pids[n++] = (pid_t)atoi(p->d_name);
	}
	if (proc)
		closedir(proc);
	return n;
}

/* The value of 'key:' in /proc/PID/status, tabs as spaces; "" if none. */
static void status_field(pid_t pid, const char *key, char *out, size_t n)
{
	char path[64], line[512];
	size_t kl = strlen(key);
	FILE *f;

	out[0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		char *v, *t;

		if (strncmp(line, key, kl) || line[kl] != ':')
			continue;
		for (v = line + kl + 1; *v == '\t' || *v == ' '; v++)
			;
		v[strcspn(v, "\n")] = 0;
		for (t = v; *t; t++)
			if (*t == '\t')
				*t = ' ';
		snprintf(out, n, "%s", v);
		break;
	}
	if (f)
		fclose(f);
}

/*
 * Who serves: the only holder of the listening socket must be 'front'
 * (not this root process), and hold no privilege. Read once it has
 * answered a request: until it serves it is still dropping them (it
 * holds the socket from the fork on, but reads nothing from it before).
 */
static void check_unprivileged(unsigned long ino, pid_t front, uid_t uid,
			       gid_t gid)
{
	static const char *const caps[] = { "CapInh", "CapPrm", "CapEff",
					     "CapBnd", "CapAmb" };
	char v[256], want[128], out[4096];
	double t0 = now_s();
	pid_t holders[8];
	int n, i, st;

	/* Any answer will do (the unix one wants a token: 401). */
	while ((st = http("GET", "/", out, sizeof(out))) <= 0 &&
	       now_s() < t0 + 5.0)
		usleep(50000);
	ok(st == 200 || st == 401, "front: it answers HTTP (got %d)", st);
	n = socket_holders(ino, holders, 8);
	ok(n == 1 && holders[0] == front && front != getpid(),
	   "front: the listening socket is held by the front end only (%d holder(s), first %d; front end %d, this process %d)",
	   n, n ? (int)holders[0] : -1, (int)front, (int)getpid());
	if (n < 1)
		return;
	status_field(holders[0], "Uid", v, sizeof(v));
	snprintf(want, sizeof(want), "%u %u %u %u", uid, uid, uid, uid);
	ok(!strcmp(v, want), "front: the serving process's Uid is %s (got %s)",
	   want, v);
	status_field(holders[0], "Gid", v, sizeof(v));
	snprintf(want, sizeof(want), "%u %u %u %u", gid, gid, gid, gid);
	ok(!strcmp(v, want), "front: its Gid is %s (got %s)", want, v);
	status_field(holders[0], "Groups", v, sizeof(v));
	ok(!v[0], "front: no supplementary groups (got '%s')", v);
	for (i = 0; i < 5; i++) {
		status_field(holders[0], caps[i], v, sizeof(v));
		ok(!strcmp(v, "0000000000000000"), "front: %s is empty (got %s)",
		   caps[i], v);
	}
	status_field(holders[0], "NoNewPrivs", v, sizeof(v));
	ok(!strcmp(v, "1"), "front: NoNewPrivs is 1 (got %s)", v);
	status_field(holders[0], "Seccomp", v, sizeof(v));
	ok(!strcmp(v, "2"), "front: a seccomp filter is on, Seccomp 2 (got %s)", v);
}

/* Binds as the agent does and forks the front end to serve. */
static int serve(struct agent_http *h, const struct agent_http_opts *o,
		 struct agent_front *f, unsigned long *ino, char *err,
		 size_t errlen)
{
	struct stat st;
	int ret;

	ret = agent_front_user(f, NULL, err, errlen);
	if (!ret)
		ret = agent_http_listen(h, o, err, errlen);
	if (ret)
		return ret;
	*ino = fstat(h->fd, &st) ? 0 : (unsigned long)st.st_ino;
	return agent_front_start(f, h, err, errlen);
}

/* ------------------------------------------------- through the front */

static void check_through(const char *what)
{
	char out[8192];
	int st;

	st = http("GET", "/", out, sizeof(out));
	ok(st == 200 && strstr(body(out), "fake source in the sampler"),
	   "%s: the index page carries the sampler's line (got %d)", what, st);
	st = http("GET", "/debug/pprof/profile?seconds=7&pid=12&comm=sh", out,
		  sizeof(out));
	ok(st == 200 && !strcmp(body(out), "seconds=7 pid=12 comm=sh"),
	   "%s: a profile request reaches the sampler's source with its arguments (got %d '%s')",
	   what, st, body(out));
	st = http("GET", "/debug/pprof/profile?seconds=2&cgroup=/system.slice/a.service",
		  out, sizeof(out));
	ok(st == 200 && !strcmp(body(out),
				"seconds=2 pid=0 comm= cgroup=/system.slice/a.service"),
	   "%s: cgroup= reaches the source", what);
	st = http("GET", "/debug/pprof/profile?seconds=301", out, sizeof(out));
	ok(st == 400 && strstr(body(out), "bad seconds"),
	   "%s: seconds=301 is 400 from the front end (got %d)", what, st);
	st = http("GET", "/metrics", out, sizeof(out));
	ok(st == 200 && !strcmp(body(out), "# TYPE fake_metric gauge\nfake_metric 1\n"),
	   "%s: /metrics is the sampler's text (got %d)", what, st);
	st = http("GET", "/debug/pprof/profile?pid=999", out, sizeof(out));
	ok(st == 500 && strstr(body(out), "fake failure"),
	   "%s: the source's failure and message are passed on (got %d)", what, st);
}

/* A profile request whose client closes: the sampler's window cancelled. */
static void check_cancel(void)
{
	static const char req[] =
		"GET /debug/pprof/profile?seconds=20&pid=777 HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
	int fd, i;
	double t0, t1;

	__atomic_store_n(&fake_cancelled, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&fake_waiting, 0, __ATOMIC_SEQ_CST);
	fd = dial();
	if (fd >= 0 && write(fd, req, sizeof(req) - 1) < 0)
		perror("write");
	for (i = 0; i < 150 && !__atomic_load_n(&fake_waiting, __ATOMIC_SEQ_CST); i++)
		usleep(20000);
	ok(fd >= 0 && __atomic_load_n(&fake_waiting, __ATOMIC_SEQ_CST),
	   "cancel: a 20-second window is waiting in the sampler");
	usleep(300000);
	ok(!__atomic_load_n(&fake_cancelled, __ATOMIC_SEQ_CST),
	   "cancel: not cancelled while the client is there");
	t0 = now_s();
	if (fd >= 0)
		close(fd);
	while (!__atomic_load_n(&fake_cancelled, __ATOMIC_SEQ_CST) &&
	       now_s() < t0 + 5.0)
		usleep(20000);
	t1 = now_s() - t0;
	ok(__atomic_load_n(&fake_cancelled, __ATOMIC_SEQ_CST) == 1 && t1 < 2.0,
	   "cancel: the client's disconnect reaches the sampler and cancels the window (after %.2f s)",
	   t1);
}

static void check_token(void)
{
	char out[4096];
	int st;

	req_auth = NULL;
	st = http("GET", "/metrics", out, sizeof(out));
	ok(st == 401 && !strstr(out, "fake_metric"),
	   "token: no token is 401 (got %d)", st);
	req_auth = "Bearer s3cret-Token.43";
	st = http("GET", "/", out, sizeof(out));
	ok(st == 401, "token: a wrong token is 401 (got %d)", st);
	req_auth = "Bearer s3cret-Token.42";
	st = http("GET", "/debug/pprof/profile?seconds=3", out, sizeof(out));
	ok(st == 200 && !strcmp(body(out), "seconds=3 pid=0 comm="),
	   "token: with the token, 200 through the front end (got %d)", st);
	req_auth = NULL;
}

/* ------------------------------------------------ hostile messages */

/* Sends 'n' bytes on 'ctl' with 'nfd' descriptors; 0 or -errno. */
static int send_raw(int ctl, const void *buf, size_t n, const int *fds, int nfd)
{
	union {
		struct cmsghdr	h;
		char		b[CMSG_SPACE(4 * sizeof(int))];
	} c;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = n };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;

	memset(&c, 0, sizeof(c));
	if (nfd) {
		mh.msg_control = c.b;
		mh.msg_controllen = CMSG_SPACE((size_t)nfd * sizeof(int));
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN((size_t)nfd * sizeof(int));
		memcpy(CMSG_DATA(cm), fds, (size_t)nfd * sizeof(int));
	}
	return sendmsg(ctl, &mh, MSG_NOSIGNAL) == (ssize_t)n ? 0 : -errno;
}

/*
 * What came back on a request's socket within 3 s: the status of an
 * answer, 0 for an end without one, -1 for nothing (the sampler hung).
 */
static int answer_on(int fd)
{
	struct agent_ipc_resp r;
	ssize_t n;

	rcv_timeout(fd, 3);
	n = recv(fd, &r, sizeof(r), MSG_WAITALL);
	if (n == (ssize_t)sizeof(r) && r.magic == AGENT_IPC_MAGIC)
		return (int)r.status;
	return n < 0 ? -1 : 0;
}

struct bad_msg {
	const char	*what;
	void		(*spoil)(struct agent_ipc_msg *m);
};

static void spoil_endpoint(struct agent_ipc_msg *m) { m->endpoint = 99; }
static void spoil_seconds_neg(struct agent_ipc_msg *m) { m->seconds = (uint32_t)-1; }
static void spoil_seconds_big(struct agent_ipc_msg *m) { m->seconds = AGENT_MAX_SECONDS + 1; }
static void spoil_seconds_zero(struct agent_ipc_msg *m) { m->seconds = 0; }
static void spoil_pid(struct agent_ipc_msg *m) { m->pid = 0xffffffffU; }
static void spoil_comm(struct agent_ipc_msg *m) { memset(m->comm, 'A', sizeof(m->comm)); }
static void spoil_cgroup(struct agent_ipc_msg *m) { strcpy(m->cgroup, "etc/shadow"); }
static void spoil_reserved(struct agent_ipc_msg *m) { m->reserved[1] = 1; }
static void spoil_magic(struct agent_ipc_msg *m) { m->magic ^= 1; }
static void spoil_client(struct agent_ipc_msg *m) { m->client_kind = 7; }

static const struct bad_msg bad_msgs[] = {
	{ "an unknown endpoint (99)", spoil_endpoint },
	{ "seconds -1 (0xffffffff)", spoil_seconds_neg },
	{ "seconds above the cap (301)", spoil_seconds_big },
	{ "seconds 0", spoil_seconds_zero },
	{ "pid 0xffffffff", spoil_pid },
	{ "comm without its NUL", spoil_comm },
	{ "a cgroup not from /", spoil_cgroup },
	{ "reserved bytes set", spoil_reserved },
	{ "a wrong magic", spoil_magic },
	{ "an unknown client kind", spoil_client },
};

static void good_msg(struct agent_ipc_msg *m)
{
	struct agent_req q = { .seconds = 5 };

	agent_ipc_encode(m, AGENT_IPC_PROFILE, &q, AGENT_IPC_CLIENT_NONE, NULL);
}

/* One message with one fresh socket: what came back on it. */
static int one_bad(int ctl, const void *buf, size_t n)
{
	int sv[2], st;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return -2;
	if (send_raw(ctl, buf, n, &sv[1], 1)) {
		close(sv[0]);
		close(sv[1]);
		return -2;
	}
	close(sv[1]);
	st = answer_on(sv[0]);
	close(sv[0]);
	return st;
}

static void check_hostile_codes(struct agent_ipc_srv *s, int ctl)
{
	struct agent_ipc_msg m;
	uint8_t big[sizeof(m) + 200];
	size_t i;
	int st, calls = __atomic_load_n(&fake_calls, __ATOMIC_SEQ_CST);
	uint64_t refused0 = __atomic_load_n(&s->refused, __ATOMIC_RELAXED);

	good_msg(&m);
	memset(big, 0, sizeof(big));
	memcpy(big, &m, sizeof(m));
	st = one_bad(ctl, big, sizeof(big));
	ok(st == 400 || st == 0, "ipc: an oversized message (%zu bytes) is refused (answer %d)",
	   sizeof(big), st);
	st = one_bad(ctl, &m, 16);
	ok(st == 400 || st == 0, "ipc: a short one (16 bytes) is refused (answer %d)", st);
	for (i = 0; i < sizeof(bad_msgs) / sizeof(bad_msgs[0]); i++) {
		good_msg(&m);
		bad_msgs[i].spoil(&m);
		st = one_bad(ctl, &m, sizeof(m));
		ok(st == 400, "ipc: %s is refused with 400 (answer %d)",
		   bad_msgs[i].what, st);
	}
	ok(__atomic_load_n(&fake_calls, __ATOMIC_SEQ_CST) == calls &&
	   __atomic_load_n(&s->refused, __ATOMIC_RELAXED) - refused0 == i + 2,
	   "ipc: none reached the source, %llu refusals counted",
	   (unsigned long long)(__atomic_load_n(&s->refused, __ATOMIC_RELAXED) -
				refused0));
}

static void check_hostile_fds(struct agent_ipc_srv *s, int ctl)
{
	struct agent_ipc_msg m;
	int sv[2], sv2[2], p[2], fds[2], st, calls;
	uint64_t refused0 = __atomic_load_n(&s->refused, __ATOMIC_RELAXED);
	char out[128];

	calls = __atomic_load_n(&fake_calls, __ATOMIC_SEQ_CST);
	good_msg(&m);
	ok(send_raw(ctl, &m, sizeof(m), NULL, 0) == 0,
	   "ipc: a good message without a socket sent");
	if (!socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) &&
	    !socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv2)) {
		fds[0] = sv[1];
		fds[1] = sv2[1];
		send_raw(ctl, &m, sizeof(m), fds, 2);
		close(sv[1]);
		close(sv2[1]);
		st = answer_on(sv[0]);
		ok(st == 0 && answer_on(sv2[0]) == 0,
		   "ipc: one with two sockets is refused, both closed unanswered (%d)",
		   st);
		close(sv[0]);
		close(sv2[0]);
	}
	if (!pipe2(p, O_CLOEXEC)) {
		send_raw(ctl, &m, sizeof(m), &p[1], 1);
		close(p[1]);
		{
			struct pollfd pf = { .fd = p[0], .events = POLLIN };

			st = poll(&pf, 1, 3000);
		}
		ok(st == 1 && read(p[0], out, sizeof(out)) == 0,
		   "ipc: one with a pipe instead of a socket is refused, the pipe closed unwritten");
		close(p[0]);
	}
	usleep(100000);
	ok(__atomic_load_n(&fake_calls, __ATOMIC_SEQ_CST) == calls &&
	   __atomic_load_n(&s->refused, __ATOMIC_RELAXED) - refused0 == 3,
	   "ipc: none reached the source, 3 refusals counted (%llu)",
	   (unsigned long long)(__atomic_load_n(&s->refused, __ATOMIC_RELAXED) -
				refused0));
}

/* A good message after the bad ones: the sampler is alive and answers. */
static void check_still_serving(struct agent_ipc_srv *s, int ctl)
{
	struct agent_ipc_msg m;
	struct agent_conn conn = { .fd = -1 };
	uint8_t *buf = NULL;
	size_t len = 0;
	char msg[256];
	int st;

	good_msg(&m);
	st = agent_ipc_call(ctl, &m, &conn, &buf, &len, msg, sizeof(msg));
	ok(st == 200 && len == strlen("seconds=5 pid=0 comm=") &&
	   !memcmp(buf, "seconds=5 pid=0 comm=", len) && !agent_ipc_ended(s),
	   "ipc: after them a good message is answered 200 (%d)", st);
	free(buf);
}

/*
 * A front end that asks and never reads the answer holds the request's
 * thread for the write's time limit only: the sampler's stop returns.
 */
static void check_no_reader(struct agent_ipc_srv *s, int ctl)
{
	struct agent_ipc_msg m;
	struct agent_req q = { .seconds = 1, .pid = 555 };
	int sv[2];
	double t0;

	agent_ipc_encode(&m, AGENT_IPC_PROFILE, &q, AGENT_IPC_CLIENT_NONE, NULL);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) ||
	    send_raw(ctl, &m, sizeof(m), &sv[1], 1)) {
		ok(0, "ipc: a request whose answer is never read sent");
		return;
	}
	close(sv[1]);
	usleep(300000);
	t0 = now_s();
	agent_ipc_stop(s);
	ok(now_s() - t0 < 15.0,
	   "ipc: an answer the front end never reads (32 MiB) holds the sampler's stop %.1f s (< 15: the write's limit is 10 s)",
	   now_s() - t0);
	close(sv[0]);
}

static void check_hostile(void)
{
	struct agent_ipc_srv s;
	char err[256];
	int ctl[2];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ctl) ||
	    agent_ipc_serve(&s, ctl[0], &fake, err, sizeof(err))) {
		ok(0, "ipc: a sampler serving a control socket");
		return;
	}
	check_hostile_codes(&s, ctl[1]);
	check_hostile_fds(&s, ctl[1]);
	check_still_serving(&s, ctl[1]);
	check_no_reader(&s, ctl[1]);
	close(ctl[1]);
	close(ctl[0]);
}

/*
 * The front end's filter, in a child of this test: what it must refuse
 * is EPERM, what a front end does still works. Bits of the exit status
 * say which check failed.
 */
static int filter_child(void)
{
	char *const argv[] = { "true", NULL };
	int bad = 0, sv[2], fd;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || agent_front_seccomp())
		return 0x80;
	fd = open("/etc/hostname", O_RDONLY);
	bad |= !(fd < 0 && errno == EPERM);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	bad |= !(fd < 0 && errno == EPERM) << 1;
	execv("/bin/true", argv);
	bad |= (errno != EPERM) << 2;
	bad |= !(unlink("/nonexistent-uwprof-test") && errno == EPERM) << 3;
	bad |= socketpair(AF_UNIX, SOCK_STREAM, 0, sv) << 4;
	bad |= (write(sv[0], "x", 1) != 1) << 5;
	return bad;
}

static void check_filter(void)
{
	int status = -1;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (!pid)
		_exit(filter_child());
	if (pid > 0)
		waitpid(pid, &status, 0);
	ok(pid > 0 && WIFEXITED(status) && !WEXITSTATUS(status),
	   "filter: open, socket(AF_INET), execve, unlink are EPERM; socketpair and write work (status 0x%x)",
	   (unsigned int)status);
}

/* ------------------------------------------------------------- main */

/* The front end killed: its end of the control socket closes. */
static void check_death(struct agent_front *f, struct agent_ipc_srv *s)
{
	char how[128];
	double t0 = now_s();
	pid_t pid = f->pid;

	kill(pid, SIGKILL);
	while (!agent_ipc_ended(s) && now_s() < t0 + 3.0)
		usleep(20000);
	ok(agent_ipc_ended(s), "death: the sampler sees the front end's end (after %.2f s)",
	   now_s() - t0);
	ok(agent_front_reap(f, 2000, how, sizeof(how)) == 1 && strstr(how, "signal 9"),
	   "death: reaped, said: %s", how);
}

int main(int argc, char **argv)
{
	struct agent_http_opts o, ou;
	struct agent_http h, hu;
	struct agent_front f, fu;
	struct agent_ipc_srv s, su;
	char err[512], path[300], tok[] = "s3cret-Token.42";
	unsigned long ino = 0, inou = 0;
	struct passwd *pw = getpwnam("nobody");
	struct stat sb;
	int ret;

	if (argc != 2) {
		fprintf(stderr, "usage: agent-front-test SCRATCH-DIR\n");
		return 2;
	}
	if (geteuid() || !pw) {
		printf("1..0 # SKIP needs root and a user nobody (the front end switches to it)\n");
		return 0;
	}
	/* Both front ends forked while this process has one thread. */
	agent_access_opts_init(&o);
	o.listen = "127.0.0.1:0";
	o.per_client = 0;
	ret = serve(&h, &o, &f, &ino, err, sizeof(err));
	ok(ret == 0, "front: TCP bound, front end %d forked (%s)", (int)f.pid,
	   ret ? err : "ok");
	if (ret)
		return tap_done();
	agent_access_opts_init(&ou);
	snprintf(path, sizeof(path), "%s/agent.sock", argv[1]);
	ou.socket_path = path;
	ou.token = tok;
	ret = serve(&hu, &ou, &fu, &inou, err, sizeof(err));
	ok(ret == 0, "front: unix socket bound, front end %d forked (%s)",
	   (int)fu.pid, ret ? err : "ok");
	if (ret)
		return tap_done();
	ok(agent_ipc_serve(&s, f.ctl, &fake, err, sizeof(err)) == 0 &&
	   agent_ipc_serve(&su, fu.ctl, &fake, err, sizeof(err)) == 0,
	   "front: the sampler serves both control sockets");
	tcp_port = h.port;
	check_unprivileged(ino, f.pid, pw->pw_uid, pw->pw_gid);
	check_through("tcp");
	check_cancel();
	unix_path = path;
	memset(&sb, 0, sizeof(sb));
	stat(path, &sb);
	ok(S_ISSOCK(sb.st_mode) && (sb.st_mode & 07777) == 0600 && !sb.st_uid,
	   "unix: the socket is root's, 0600, bound by the sampler (got %04o uid %u)",
	   (unsigned int)(sb.st_mode & 07777), (unsigned int)sb.st_uid);
	check_unprivileged(inou, fu.pid, pw->pw_uid, pw->pw_gid);
	check_token();
	unix_path = NULL;
	req_host = "evil.example";
	ret = http("GET", "/metrics", err, sizeof(err));
	ok(ret == 421 && !strstr(err, "fake_metric"),
	   "host: Host: evil.example is 421 from the front end on TCP (got %d)", ret);
	req_host = "127.0.0.1";
	check_hostile();
	check_filter();
	check_death(&f, &s);
	agent_ipc_stop(&s);
	agent_http_stop(&h);
	/* The agent's stop: the control socket shut down, the front end exits. */
	agent_ipc_stop(&su);
	ok(agent_front_reap(&fu, 3000, err, sizeof(err)) == 0,
	   "stop: the front end exits when the sampler shuts the control socket (%s)",
	   err);
	agent_http_stop(&hu);
	ok(stat(path, &sb) && errno == ENOENT, "stop: the sampler removed the socket");
	return tap_done();
}
