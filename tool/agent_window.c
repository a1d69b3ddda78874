// SPDX-License-Identifier: GPL-2.0
/*
 * The agent's profile windows. A request for N seconds becomes a window:
 * the recorder's thread opens a profile file for it in the agent's private
 * directory, writes the header and everything known that its samples need
 * (objects, the live processes' mappings), and from then on every record
 * to each open window (rec_sink.c) until its N seconds are up. The file
 * is committed, read back with the report model (the same reader and
 * symbolizer as 'uwprof report'), the samples outside the window or the
 * request's filters left out, and written as a gzipped pprof for the
 * waiting request. Only open windows hold samples: memory and disk follow
 * the requests, not the agent's uptime.
 *
 * The consecutive windows of --output-dir and --push (agent_output.c) are
 * windows asked for ahead, with a fixed span: each opens a little before
 * its start and every window closes a little after its end, so that the
 * samples drained around a boundary land in both files and each keeps
 * those of its own span; none falls between two windows.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "cgroup.h"
#include "otlp.h"
#include "pprof.h"
#include "recorder.h"
#include "report_model.h"

/*
 * A window with a span opens this long before its start: records are
 * drained some time after they are taken (the ring reader's poll, the
 * loop's pass), and one taken after the start may be drained before the
 * pass that would open the window at its start.
 */
#define WIN_LEAD_NS	1000000000ULL
/* Every window closes this long after its end, for the same reason. */
#define WIN_LAG_NS	500000000ULL

enum win_state { WIN_PENDING, WIN_OPEN, WIN_DONE, WIN_FAILED };

struct agent_win {
	struct agent_win *next;
	enum win_state	state;
	unsigned int	seconds;	/* start_ns 0: this long from its opening */
	uint64_t	start_ns, end_ns;
	int		until_stop;	/* stopping ends it early, not fails it */
	int		cancel;		/* its client went away: drop it */
	struct uwprof_pfw w;
	char		path[128];
	char		err[512];	/* WIN_FAILED */
};

int agent_wins_init(struct agent_wins *ws, struct recorder *r,
		    uint32_t start_flags, char *err, size_t errlen)
{
	const char *tmp = getenv("TMPDIR");

	memset(ws, 0, sizeof(*ws));
	ws->r = r;
	ws->start_flags = start_flags;
	snprintf(ws->dir, sizeof(ws->dir), "%s/uwprof-agent.XXXXXX",
		 tmp && *tmp && strlen(tmp) < 40 ? tmp : "/tmp");
	ws->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (ws->wake_fd < 0 || !mkdtemp(ws->dir)) {
		int e = errno;

		snprintf(err, errlen, "%s: %s", ws->dir, strerror(e));
		if (ws->wake_fd >= 0)
			close(ws->wake_fd);
		return -e;
	}
	pthread_mutex_init(&ws->lock, NULL);
	pthread_mutex_init(&ws->build_lock, NULL);
	pthread_cond_init(&ws->cond, NULL);
	return 0;
}

static void win_fail(struct agent_win *win, const char *why)
{
	snprintf(win->err, sizeof(win->err), "%s", why);
	win->state = WIN_FAILED;
}

/* Recorder thread, lock held. */
static void win_open(struct agent_wins *ws, struct agent_win *win)
{
	struct recorder *r = ws->r;
	struct rec_hdr hd;
	uint64_t now;

	snprintf(win->path, sizeof(win->path), "%s/window-%llu.data", ws->dir,
		 (unsigned long long)++ws->serial);
	rec_header_fill(r, ws->start_flags, &hd);
	if (uwprof_pfw_open(&win->w, win->path, &hd.h)) {
		win_fail(win, win->w.err);
		uwprof_pfw_abort(&win->w);
		return;
	}
	rec_objs_replay(r, &win->w);
	rec_procs_replay(r, &win->w);
	rec_py_replay(r, &win->w);
	/* Each thread sampled from now on is named again, in this window too. */
	rec_tids_forget(r);
	/*
	 * A span asked for ahead stays as asked, even when the loop was busy
	 * past its start: the records taken since then wait in the ring
	 * reader and are drained after this (agent.c opens before draining).
	 */
	if (!win->start_ns) {
		now = mono_ns();
		win->start_ns = now;
		win->end_ns = now + (uint64_t)win->seconds * 1000000000ULL;
	}
	win->state = WIN_OPEN;
}

/* Recorder thread, lock held. */
static void win_close(struct agent_win *win)
{
	if (uwprof_pfw_commit(&win->w)) {
		win_fail(win, win->w.err);
		return;
	}
	win->state = WIN_DONE;
}

/* The recorder's tees: the open windows. */
static void tees_set(struct agent_wins *ws)
{
	struct recorder *r = ws->r;
	struct agent_win *win;
	size_t n = 0;

	for (win = ws->list; win; win = win->next)
		if (win->state == WIN_OPEN) {
			struct uwprof_pfw **nv = realloc(r->tees,
							 (n + 1) * sizeof(*nv));

			if (!nv) {
				win_fail(win, "out of memory");
				continue;
			}
			r->tees = nv;
			r->tees[n++] = &win->w;
		}
	r->nr_tees = n;
}

/* Recorder thread, lock held. */
static void state_copy(struct agent_wins *ws)
{
	const struct recorder *r = ws->r;
	size_t i;

	ws->state.py_walked = ws->state.py_not = 0;
	for (i = 0; i < r->nr_procs; i++) {
		if (!r->procs[i].py)
			continue;
		if (r->procs[i].py->found)
			ws->state.py_walked++;
		else
			ws->state.py_not++;
	}
	ws->state.processes = r->nr_procs;
	ws->state.objects = r->nr_objs;
	ws->state.objects_dropped = r->objects_dropped;
	ws->state.samples = r->samples;
	ws->state.lost = r->lost;
	ws->state.windows = r->nr_tees;
}

/*
 * Recorder thread, lock held: a window whose client went away stops
 * taking records and its file goes; the waiting request thread frees it.
 */
static void win_cancel(struct agent_wins *ws, struct agent_win *win)
{
	if (win->state == WIN_OPEN)
		uwprof_pfw_abort(&win->w);
	win_fail(win, "the client went away");
	ws->state.cancelled++;
}

/* When the recorder should open a pending window. */
static uint64_t win_open_at(const struct agent_win *win)
{
	if (!win->start_ns)
		return 0;
	return win->start_ns > WIN_LEAD_NS ? win->start_ns - WIN_LEAD_NS : 0;
}

int agent_wins_tick(struct agent_wins *ws, int max_ms, int open_only)
{
	struct agent_win *win;
	uint64_t now = mono_ns(), next = now + (uint64_t)max_ms * 1000000ULL;
	uint64_t junk;
	int changed = 0;

	if (read(ws->wake_fd, &junk, sizeof(junk)) < 0 && errno != EAGAIN)
		junk = 0;
	pthread_mutex_lock(&ws->lock);
	for (win = ws->list; win; win = win->next) {
		if (win->cancel &&
		    (win->state == WIN_PENDING || win->state == WIN_OPEN)) {
			win_cancel(ws, win);
			changed = 1;
		} else if (win->state == WIN_PENDING && now >= win_open_at(win)) {
			win_open(ws, win);
			changed = 1;
		} else if (win->state == WIN_OPEN && !open_only &&
			   now >= win->end_ns + WIN_LAG_NS) {
			win_close(win);
			changed = 1;
		}
		if (win->state == WIN_OPEN && win->end_ns + WIN_LAG_NS < next)
			next = win->end_ns + WIN_LAG_NS;
		if (win->state == WIN_PENDING && win_open_at(win) < next)
			next = win_open_at(win);
	}
	if (changed) {
		tees_set(ws);
		pthread_cond_broadcast(&ws->cond);
	}
	state_copy(ws);
	pthread_mutex_unlock(&ws->lock);
	return next > now ? (int)((next - now + 999999) / 1000000) : 0;
}

void agent_wins_stop(struct agent_wins *ws)
{
	struct agent_win *win;

	uint64_t now = mono_ns();

	pthread_mutex_lock(&ws->lock);
	ws->stopping = 1;
	for (win = ws->list; win; win = win->next) {
		if (win->state == WIN_OPEN && win->until_stop) {
			if (now < win->end_ns)
				win->end_ns = now;
			win_close(win);
			continue;
		}
		if (win->state == WIN_OPEN)
			uwprof_pfw_abort(&win->w);
		if (win->state == WIN_OPEN || win->state == WIN_PENDING)
			win_fail(win, "the agent is stopping");
	}
	ws->r->nr_tees = 0;
	pthread_cond_broadcast(&ws->cond);
	pthread_mutex_unlock(&ws->lock);
}

void agent_wins_fini(struct agent_wins *ws)
{
	if (ws->wake_fd >= 0)
		close(ws->wake_fd);
	rmdir(ws->dir);
	pthread_mutex_destroy(&ws->lock);
	pthread_mutex_destroy(&ws->build_lock);
	pthread_cond_destroy(&ws->cond);
}

/* ------------------------------------------------------- the answer */

static int sample_wanted(const struct agent_win *win, const struct agent_req *q,
			 const struct uwprof_rep_sample *s)
{
	if (s->time_ns < win->start_ns || s->time_ns >= win->end_ns)
		return 0;
	if (q->pid && s->pid != q->pid)
		return 0;
	if (q->cgroup[0] &&
	    (!s->cgroup || !uwprof_cgroup_under(s->cgroup, q->cgroup)))
		return 0;
	return !q->comm[0] || !strcmp(s->comm, q->comm);
}

static void samples_filter(struct uwprof_rep *rep, const struct agent_win *win,
			   const struct agent_req *q)
{
	size_t i, n = 0;

	rep->total_period = 0;
	rep->total_weight_ns = 0;
	rep->nr_off_cpu = 0;
	for (i = 0; i < rep->nr_samples; i++) {
		if (!sample_wanted(win, q, &rep->samples[i]))
			continue;
		rep->samples[n] = rep->samples[i];
		rep->total_period += rep->samples[n].period;
		rep->total_weight_ns += rep->samples[n].weight_ns;
		rep->nr_off_cpu += uwprof_rep_off_cpu(&rep->samples[n]);
		n++;
	}
	rep->nr_samples = n;
}

/*
 * The same model as a gzipped OTLP request in memory, or *otlp NULL (said
 * the first time: the pprof goes out all the same).
 */
static void win_otlp(const struct uwprof_rep *rep, uint8_t **otlp,
		     size_t *otlp_len)
{
	static int said;	/* build_lock held */
	char *mem = NULL;
	FILE *f = open_memstream(&mem, otlp_len);
	int ret = f ? uwprof_otlp_write(rep, f) : -errno;

	if (f && fclose(f) && !ret)
		ret = -EIO;
	*otlp = ret ? NULL : (uint8_t *)mem;
	if (!ret)
		return;
	free(mem);
	if (!said++)
		fprintf(stderr, "uwprof agent: a window's OTLP profile: %s\n",
			strerror(-ret));
}

/*
 * The window's file, read back, as a gzipped pprof in memory; when 'otlp'
 * is not NULL, as a gzipped OTLP request too.
 */
static int win_pprof(struct agent_wins *ws, const struct agent_win *win,
		     const struct agent_req *q, uint8_t **buf, size_t *len,
		     uint8_t **otlp, size_t *otlp_len, char *msg,
		     size_t msglen)
{
	struct uwprof_rep rep;
	char *mem = NULL;
	FILE *f;
	int ret;

	memset(&rep, 0, sizeof(rep));
	pthread_mutex_lock(&ws->build_lock);
	ret = uwprof_rep_load(&rep, win->path, ws->r->o.python_native ?
			      UWPROF_REP_PYTHON_NATIVE : 0, msg, msglen);
	if (!ret) {
		samples_filter(&rep, win, q);
		f = open_memstream(&mem, len);
		ret = f ? uwprof_pprof_write(&rep, f) : -errno;
		if (f && fclose(f) && !ret)
			ret = -EIO;
		if (ret)
			snprintf(msg, msglen, "writing the profile: %s",
				 strerror(-ret));
		else if (otlp)
			win_otlp(&rep, otlp, otlp_len);
	}
	uwprof_rep_free(&rep);
	/*
	 * A build allocates megabytes in the arena of whichever thread runs
	 * it (a request's, the output's) and frees them all; glibc keeps
	 * freed pages of a thread's arena resident. Hand them back, or the
	 * agent's RSS follows the largest build of every thread so far.
	 */
	malloc_trim(0);
	pthread_mutex_unlock(&ws->build_lock);
	if (ret) {
		free(mem);
		return 500;
	}
	*buf = (uint8_t *)mem;
	return 200;
}

static void win_unlink(struct agent_wins *ws, struct agent_win *win)
{
	struct agent_win **pp;

	for (pp = &ws->list; *pp; pp = &(*pp)->next)
		if (*pp == win) {
			*pp = win->next;
			break;
		}
}

/*
 * Asks for a window: [start_ns, end_ns), or with start_ns 0 'seconds'
 * from when the recorder opens it. Returns 0 with *winp, or an HTTP
 * status (500, 503) with 'msg'.
 */
static int wins_queue(struct agent_wins *ws, uint64_t start_ns,
		      uint64_t end_ns, unsigned int seconds,
		      struct agent_win **winp, char *msg, size_t msglen)
{
	struct agent_win *win = calloc(1, sizeof(*win));
	uint64_t one = 1;

	if (!win) {
		snprintf(msg, msglen, "out of memory");
		return 500;
	}
	win->seconds = seconds;
	win->start_ns = start_ns;
	win->end_ns = end_ns;
	win->until_stop = start_ns != 0;
	pthread_mutex_lock(&ws->lock);
	if (ws->stopping) {
		pthread_mutex_unlock(&ws->lock);
		free(win);
		snprintf(msg, msglen, "the agent is stopping");
		return 503;
	}
	win->next = ws->list;
	ws->list = win;
	if (write(ws->wake_fd, &one, sizeof(one)) < 0)
		one = 0;
	pthread_mutex_unlock(&ws->lock);
	*winp = win;
	return 0;
}

/*
 * How often a waiting request looks whether its client is still there:
 * the thread has nothing else that would tell it (libmicrohttpd reads
 * the connection only after the handler returns).
 */
#define WIN_POLL_NS	250000000L

/* Lock held: sleeps until the window changes or WIN_POLL_NS passed. */
static void wins_nap(struct agent_wins *ws)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += WIN_POLL_NS;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_cond_timedwait(&ws->cond, &ws->lock, &ts);
}

/*
 * Waits for a queued window to end, then builds its profile (filtered by
 * 'q'). A client that goes away meanwhile ('conn', or NULL) cancels the
 * window: the recorder's thread drops it at its next pass. Returns 200
 * with *buf and the span it covers, or an HTTP status with 'msg'. The
 * window is freed either way.
 */
static int wins_wait(struct agent_wins *ws, struct agent_win *win,
		     const struct agent_conn *conn, const struct agent_req *q,
		     uint8_t **buf, size_t *len, uint8_t **otlp,
		     size_t *otlp_len, uint64_t span[2], char *msg,
		     size_t msglen)
{
	uint64_t one = 1;
	int status;

	pthread_mutex_lock(&ws->lock);
	while (win->state == WIN_PENDING || win->state == WIN_OPEN) {
		if (!conn) {
			pthread_cond_wait(&ws->cond, &ws->lock);
			continue;
		}
		if (!win->cancel && agent_access_conn_gone(conn)) {
			win->cancel = 1;
			if (write(ws->wake_fd, &one, sizeof(one)) < 0)
				one = 1;
		}
		wins_nap(ws);
	}
	win_unlink(ws, win);
	pthread_mutex_unlock(&ws->lock);
	if (win->state == WIN_DONE) {
		status = win_pprof(ws, win, q, buf, len, otlp, otlp_len, msg,
				   msglen);
		unlink(win->path);
		span[0] = win->start_ns;
		span[1] = win->end_ns;
	} else {
		snprintf(msg, msglen, "%s", win->err);
		status = ws->stopping ? 503 : 500;
	}
	free(win);
	return status;
}

int agent_wins_profile(void *ctx, const struct agent_req *q,
		       const struct agent_conn *conn, uint8_t **buf,
		       size_t *len, char *msg, size_t msglen)
{
	struct agent_wins *ws = ctx;
	struct agent_win *win;
	uint64_t span[2];
	int status;

	status = wins_queue(ws, 0, 0, q->seconds, &win, msg, msglen);
	if (status)
		return status;
	return wins_wait(ws, win, conn, q, buf, len, NULL, NULL, span, msg,
			 msglen);
}

static int period_queue(void *ctx, uint64_t start_ns, uint64_t end_ns,
			void **h)
{
	struct agent_win *win;
	char msg[64];
	int status;

	status = wins_queue(ctx, start_ns ? start_ns : 1, end_ns, 0, &win, msg,
			    sizeof(msg));
	if (status)
		return status == 503 ? -ESHUTDOWN : -ENOMEM;
	*h = win;
	return 0;
}

static int period_wait(void *ctx, void *h, uint8_t **buf, size_t *len,
		       uint64_t span[2], char *msg, size_t msglen)
{
	const struct agent_req every = { .seconds = 0 };

	return wins_wait(ctx, h, NULL, &every, buf, len, NULL, NULL, span, msg,
			 msglen);
}

static int period_wait_otlp(void *ctx, void *h, uint8_t **buf, size_t *len,
			    uint8_t **otlp, size_t *otlp_len, uint64_t span[2],
			    char *msg, size_t msglen)
{
	const struct agent_req every = { .seconds = 0 };

	*otlp = NULL;
	return wins_wait(ctx, h, NULL, &every, buf, len, otlp, otlp_len, span,
			 msg, msglen);
}

static void period_retime(void *ctx, void *h, uint64_t end_ns)
{
	struct agent_wins *ws = ctx;
	struct agent_win *win = h;
	uint64_t one = 1;

	pthread_mutex_lock(&ws->lock);
	if ((win->state == WIN_PENDING || win->state == WIN_OPEN) &&
	    end_ns > win->start_ns) {
		win->end_ns = end_ns;
		/* The recorder's next tick is due at another time now. */
		if (write(ws->wake_fd, &one, sizeof(one)) < 0)
			one = 0;
	}
	pthread_mutex_unlock(&ws->lock);
}

void agent_wins_period_src(struct agent_wins *ws, struct agent_period_src *src)
{
	src->queue = period_queue;
	src->wait = period_wait;
	src->retime = period_retime;
	src->wait_otlp = period_wait_otlp;
	src->ctx = ws;
}
