// SPDX-License-Identifier: GPL-2.0
/*
 * What 'uwprof record' profiles, made ready before sampling starts: the
 * -p processes and (-a) every process uploaded, or the command forked,
 * its mappings uploaded while it waits, and let go to exec once sampling
 * runs; and whether those targets are still alive.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "exit_status.h"
#include "recorder.h"

static int spawn_cmd(struct recorder *r, struct rec_launch *l)
{
	int go[2], ep[2];
	sigset_t none;
	pid_t pid;

	if (pipe2(go, O_CLOEXEC) || pipe2(ep, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		char c;
		int e;

		close(go[1]);
		close(ep[0]);
		/* The command runs at the priority it would have had. */
		setpriority(PRIO_PROCESS, 0, r->nice0);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execvp(r->o.cmd[0], r->o.cmd);
		e = errno;
		if (write(ep[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(ep[1]);
	r->child = pid;
	l->go_w = go[1];
	l->err_r = ep[0];
	return 0;
}

void rec_reap(struct recorder *r)
{
	int status;
	pid_t p;

	while ((p = waitpid(-1, &status, WNOHANG)) > 0) {
		if (p == r->child) {
			r->child_status = status;
			r->child_done = 1;
		}
	}
}

/* Whether a process exists: kill(pid, 0), and /proc when that says no. */
static int pid_exists(uint32_t pid)
{
	char fn[32];

	if (!kill((pid_t)pid, 0) || errno != ESRCH)
		return 1;
	snprintf(fn, sizeof(fn), "/proc/%u/stat", pid);
	if (access(fn, F_OK))
		return 0;
	fprintf(stderr, "uwprof record: process %u: kill(0) says ESRCH but /proc/%u exists\n",
		pid, pid);
	return 1;
}

int rec_pids_alive(const struct recorder *r)
{
	uint32_t i;

	for (i = 0; i < r->o.nr_pids; i++)
		if (pid_exists(r->o.pids[i]))
			return 1;
	return 0;
}

/* Uploads the -p processes before sampling starts. */
static int upload_pids(struct recorder *r)
{
	uint32_t i;

	for (i = 0; i < r->o.nr_pids; i++) {
		struct rec_proc *p;
		int ret;

		if (!pid_exists(r->o.pids[i])) {
			fprintf(stderr,
				"uwprof record: process %u: no such process\n",
				r->o.pids[i]);
			return UWPROF_EX_TARGET;
		}
		p = rec_proc_get(r, r->o.pids[i]);
		if (!p)
			return UWPROF_EX_ERROR;
		ret = rec_proc_upload(r, p);
		if (ret == -ESRCH) {
			fprintf(stderr,
				"uwprof record: process %u: no such process (its maps vanished)\n",
				r->o.pids[i]);
			return UWPROF_EX_TARGET;
		}
		if (ret) {
			fprintf(stderr,
				"uwprof record: process %u: reading its mappings: %s\n",
				r->o.pids[i], strerror(-ret));
			return ret == -EACCES || ret == -EPERM ?
			       UWPROF_EX_PERM : UWPROF_EX_ERROR;
		}
	}
	return 0;
}

/*
 * Whether process 'pid' passes --cgroup and --comm now (its main thread's
 * name for --comm). The module judges every sample itself; this only
 * spares -a the uploads of processes it will not sample. A thread of
 * another process named NAME, or a process that moves into the cgroup
 * later, is found through its samples, as a new process is.
 */
static int proc_passes(const struct recorder *r, uint32_t pid)
{
	char cg[UWPROF_CGROUP_PATH_MAX], comm[64];

	if (r->o.cgroup &&
	    (uwprof_cgroup_of((pid_t)pid, cg, sizeof(cg)) ||
	     !uwprof_cgroup_under(cg, r->cgroup_path)))
		return 0;
	if (!r->o.comm)
		return 1;
	uwprof_pm_comm((pid_t)pid, (pid_t)pid, comm, sizeof(comm));
	return !strcmp(comm, r->o.comm);
}

/*
 * -a: every process that exists now (and passes the filters) gets its
 * tables and mappings before sampling starts (later ones are found
 * through UNKNOWN_MAP).
 */
static void upload_all(struct recorder *r)
{
	struct dirent *de;
	DIR *d = opendir("/proc");

	if (!d)
		return;
	while ((de = readdir(d))) {
		char *end;
		unsigned long pid = strtoul(de->d_name, &end, 10);
		struct rec_proc *p;

		if (*end || !pid || pid == (unsigned long)r->self ||
		    !proc_passes(r, (uint32_t)pid))
			continue;
		p = rec_proc_get(r, (uint32_t)pid);
		if (p && p->ours == 1)
			rec_proc_upload(r, p);
	}
	closedir(d);
}

/*
 * The -p processes or (-a) every process uploaded, or the command forked
 * and waiting. Returns 0 or the exit status.
 */
int rec_targets_ready(struct recorder *r, struct rec_launch *l)
{
	struct rec_proc *p;
	int ret;

	if (r->o.mode == MODE_PIDS)
		return upload_pids(r);
	if (r->o.mode == MODE_ALL)
		upload_all(r);
	if (!r->o.cmd)
		return 0;
	rec_prewarm_cmd(r);
	/* Orphaned grandchildren stay in the tree, and get reaped. */
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	ret = spawn_cmd(r, l);
	if (ret) {
		fprintf(stderr, "uwprof record: fork: %s\n", strerror(-ret));
		return UWPROF_EX_ERROR;
	}
	/*
	 * Until its exec the child runs this program's code: its
	 * mappings go up now, while it waits for the go-ahead, so
	 * those first samples unwind like any other.
	 */
	p = rec_proc_get(r, (uint32_t)r->child);
	if (p)
		rec_proc_upload(r, p);
	return 0;
}

/*
 * Sampling runs: lets the command exec. Returns 0, or the exit status
 * when it could not (sampling stopped then).
 */
int rec_cmd_go(struct recorder *r, struct rec_launch *l)
{
	int e = 0;
	ssize_t n;

	if (write(l->go_w, "g", 1) != 1)
		e = errno;
	close(l->go_w);
	l->go_w = -1;
	/* EOF: exec succeeded (the pipe is close-on-exec). */
	n = read(l->err_r, &e, sizeof(e));
	close(l->err_r);
	l->err_r = -1;
	if (n == (ssize_t)sizeof(e) || e) {
		fprintf(stderr, "uwprof record: cannot run '%s': %s\n",
			r->o.cmd[0], strerror(e));
		uwprof_dev_stop(&r->dev);
		return UWPROF_EX_TARGET;
	}
	return 0;
}

/* The recording failed to start: a command forked for it is killed. */
void rec_targets_abort(struct recorder *r, struct rec_launch *l)
{
	if (l->go_w >= 0)
		close(l->go_w);
	if (l->err_r >= 0)
		close(l->err_r);
	if (r->child > 0 && !r->child_done) {
		kill(r->child, SIGKILL);
		waitpid(r->child, NULL, 0);
	}
}
