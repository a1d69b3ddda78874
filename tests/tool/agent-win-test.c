// SPDX-License-Identifier: GPL-2.0
/*
 * The agent's profile windows (tool/agent_window.c) when the client of a
 * request goes away: this test plays the recorder's thread (it calls
 * agent_wins_tick() as agent.c's loop does) over a recorder that has no
 * device, and a request thread waits in agent_wins_profile() with one end
 * of a socketpair as its connection. Closing the other end must cancel
 * the window, open or still pending: its file removed, no longer a tee,
 * the request answered, uwprof_agent_windows_cancelled_total's counter
 * up. A window whose client stays runs its time. Every wait is bounded.
 *
 *   agent-win-test SCRATCH-DIR
 *
 * The recorder's own parts and the report model are stubs below: only
 * the window's life is under test here.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "cgroup.h"
#include "otlp.h"
#include "pprof.h"
#include "recorder.h"
#include "report_model.h"
#include "tap.h"

/* ---------------------------------------------------------------- stubs */

void rec_header_fill(struct recorder *r, uint32_t start_flags,
		     struct rec_hdr *hd)
{
	(void)r;
	(void)start_flags;
	memset(hd, 0, sizeof(*hd));
	hd->h.fixed.arch = 1;
	hd->h.hostname = "test";
	hd->h.release = "test";
}

void rec_objs_replay(struct recorder *r, struct uwprof_pfw *w)
{
	(void)r;
	(void)w;
}

void rec_procs_replay(struct recorder *r, struct uwprof_pfw *w)
{
	(void)r;
	(void)w;
}

void rec_py_replay(struct recorder *r, struct uwprof_pfw *w)
{
	(void)r;
	(void)w;
}

void rec_tids_forget(struct recorder *r)
{
	(void)r;
}

static int loads;

int uwprof_rep_load(struct uwprof_rep *r, const char *path, int flags,
		    char *msg, size_t msglen)
{
	(void)r;
	(void)path;
	(void)flags;
	__atomic_add_fetch(&loads, 1, __ATOMIC_SEQ_CST);
	snprintf(msg, msglen, "no report model in this test");
	return -ENOSYS;
}

void uwprof_rep_free(struct uwprof_rep *r)
{
	(void)r;
}

int uwprof_pprof_write(const struct uwprof_rep *r, FILE *f)
{
	(void)r;
	(void)f;
	return -ENOSYS;
}

int uwprof_otlp_write(const struct uwprof_rep *r, FILE *f)
{
	(void)r;
	(void)f;
	return -ENOSYS;
}

int uwprof_cgroup_under(const char *path, const char *top)
{
	(void)path;
	(void)top;
	return 0;
}

/* ---------------------------------------------------------------- test */

static struct agent_wins ws;
static struct recorder *rec;

struct request {
	pthread_t	t;
	struct agent_conn conn;
	unsigned int	seconds;
	int		status, done;
	char		msg[256];
};

static void *request_main(void *arg)
{
	struct request *rq = arg;
	struct agent_req q = { .seconds = rq->seconds };
	uint8_t *buf = NULL;
	size_t len = 0;

	rq->status = agent_wins_profile(&ws, &q, &rq->conn, &buf, &len, rq->msg,
					sizeof(rq->msg));
	free(buf);
	__atomic_store_n(&rq->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The recorder's loop for a while: until 'cond' holds or 'secs' passed. */
static void run_until(int (*cond)(void *), void *arg, double secs)
{
	double end = now_s() + secs;
	struct pollfd p = { .fd = ws.wake_fd, .events = POLLIN };

	while (!cond(arg) && now_s() < end) {
		poll(&p, 1, 20);
		agent_wins_tick(&ws, 0, 1);
		agent_wins_tick(&ws, 20, 0);
	}
}

static int files_in(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.' || (e->d_name[1] && e->d_name[1] != '.' &&
					     e->d_name[1] != 0);
	if (d)
		closedir(d);
	return n;
}

static int window_open(void *arg)
{
	(void)arg;
	return rec->nr_tees == 1;
}

static int request_done(void *arg)
{
	return __atomic_load_n(&((struct request *)arg)->done, __ATOMIC_SEQ_CST);
}

static uint64_t cancelled(void)
{
	uint64_t n;

	pthread_mutex_lock(&ws.lock);
	n = ws.state.cancelled;
	pthread_mutex_unlock(&ws.lock);
	return n;
}

static int start(struct request *rq, int sv[2], unsigned int seconds)
{
	memset(rq, 0, sizeof(*rq));
	rq->seconds = seconds;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return -1;
	rq->conn.fd = sv[0];
	return pthread_create(&rq->t, NULL, request_main, rq) ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct request rq;
	char err[256];
	int sv[2], ret;
	double t0;

	if (argc != 2) {
		fprintf(stderr, "usage: agent-win-test SCRATCH-DIR\n");
		return 2;
	}
	setenv("TMPDIR", argv[1], 1);
	rec = calloc(1, sizeof(*rec));
	ret = rec ? agent_wins_init(&ws, rec, 0, err, sizeof(err)) : -ENOMEM;
	ok(ret == 0, "windows set up in %s (%s)", ws.dir, ret ? err : "ok");
	if (ret)
		return tap_done();

	/* An open window, its client gone. */
	ok(start(&rq, sv, 30) == 0, "a 30-second request waits");
	run_until(window_open, NULL, 3);
	ok(rec->nr_tees == 1 && files_in(ws.dir) == 1,
	   "open: the window takes records and has its file (%zu tees, %d files)",
	   rec->nr_tees, files_in(ws.dir));
	t0 = now_s();
	close(sv[1]);
	run_until(request_done, &rq, 5);
	ok(rq.done && now_s() - t0 < 2.0,
	   "open: the client's close ends the request in %.2f s, not 30 (%d: %s)",
	   now_s() - t0, rq.status, rq.msg);
	ok(cancelled() == 1 && rec->nr_tees == 0 && files_in(ws.dir) == 0,
	   "open: cancelled (%llu), no tee left (%zu), its file removed (%d left)",
	   (unsigned long long)cancelled(), rec->nr_tees, files_in(ws.dir));
	if (!rq.done)
		agent_wins_stop(&ws);
	pthread_join(rq.t, NULL);
	close(sv[0]);
	if (ws.stopping)
		return tap_done();

	/* A window still pending: never opened. */
	ok(start(&rq, sv, 30) == 0, "a second request waits, not yet opened");
	close(sv[1]);
	usleep(300000);
	run_until(request_done, &rq, 5);
	ok(rq.done && cancelled() == 2 && rec->nr_tees == 0 &&
	   files_in(ws.dir) == 0,
	   "pending: cancelled before it opened (%llu cancelled, %d files)",
	   (unsigned long long)cancelled(), files_in(ws.dir));
	if (!rq.done)
		agent_wins_stop(&ws);
	pthread_join(rq.t, NULL);
	close(sv[0]);

	/* A client that stays gets its window's whole second. */
	ok(start(&rq, sv, 1) == 0, "a 1-second request whose client stays");
	t0 = now_s();
	run_until(request_done, &rq, 5);
	ok(rq.done && now_s() - t0 >= 1.0 && cancelled() == 2 &&
	   __atomic_load_n(&loads, __ATOMIC_SEQ_CST) == 1,
	   "stays: the window ran its %.2f s and was read back, not cancelled",
	   now_s() - t0);
	if (!rq.done)
		agent_wins_stop(&ws);
	pthread_join(rq.t, NULL);
	close(sv[0]);
	close(sv[1]);
	agent_wins_stop(&ws);
	agent_wins_fini(&ws);
	free(rec->tees);
	free(rec);
	return tap_done();
}
