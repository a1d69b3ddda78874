// SPDX-License-Identifier: GPL-2.0
/*
 * 'uwprof agent --output-dir DIR / --push URL / --otlp URL': the whole
 * host's profile of each consecutive --interval seconds, the same profile
 * the HTTP endpoint answers, written to the directory (agent_files.c) and
 * pushed (agent_push.c: one push for --push, another for --otlp, which
 * gets the window's profile encoded as OTLP from the same report model).
 * One thread asks the source for the windows: the next one is asked for
 * before the current one is waited for, so that the recorder opens it in
 * time while this thread builds, writes and queues
 * the last; windows therefore follow each other without a gap, and at
 * most two are held at once. The thread never touches the network: the
 * push has its own, and the recorder's thread only opens and closes
 * window files.
 *
 * A reload (SIGHUP, agent_opts.c) hands this thread new settings, which it
 * takes when the window in progress has ended, before writing it: that
 * window keeps its span and samples, its profile goes where the new
 * settings say, and the window after it (already asked for) is moved to
 * the new interval's end.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void count(uint64_t *c)
{
	__atomic_add_fetch(c, 1, __ATOMIC_RELAXED);
}

/* Asks for the window starting at 'start'; 0, -ESHUTDOWN or -errno (said). */
static int out_ask(struct agent_out *out, uint64_t start, void **h)
{
	uint64_t len = (uint64_t)out->o.interval_s * 1000000000ULL;
	int ret = out->src.queue(out->src.ctx, start, start + len, h);

	if (ret && ret != -ESHUTDOWN && agent_once(&out->said, (unsigned int)-ret))
		fprintf(stderr, "uwprof agent: asking for a window: %s\n",
			strerror(-ret));
	if (ret)
		*h = NULL;
	return ret;
}

/* A reload's copy of the options, every string its own; NULL: no memory. */
static struct agent_out_opts *opts_dup(const struct agent_out_opts *o)
{
	struct agent_out_opts *n = calloc(1, sizeof(*n));
	size_t i;
	int bad = !n;

	if (bad)
		return NULL;
	*n = *o;
	n->dir = o->dir ? strdup(o->dir) : NULL;
	n->push_url = o->push_url ? strdup(o->push_url) : NULL;
	n->push_name = o->push_name ? strdup(o->push_name) : NULL;
	n->otlp_url = o->otlp_url ? strdup(o->otlp_url) : NULL;
	n->push_headers = calloc(o->nr_push_headers + 1, sizeof(char *));
	bad = (o->dir && !n->dir) || (o->push_url && !n->push_url) ||
	      (o->otlp_url && !n->otlp_url) ||
	      (o->push_name && !n->push_name) || !n->push_headers;
	for (i = 0; !bad && i < o->nr_push_headers; i++)
		bad = !(n->push_headers[i] = strdup(o->push_headers[i]));
	n->nr_push_headers = bad ? i : o->nr_push_headers;
	if (!bad)
		return n;
	agent_out_opts_free(n);
	return NULL;
}

void agent_out_opts_free(struct agent_out_opts *o)
{
	size_t i;

	if (!o)
		return;
	for (i = 0; o->push_headers && i < o->nr_push_headers; i++) {
		/* Headers may hold a secret: not left in freed memory. */
		explicit_bzero((char *)o->push_headers[i],
			       strlen(o->push_headers[i]));
		free((char *)o->push_headers[i]);
	}
	free(o->push_headers);
	free((char *)o->dir);
	free((char *)o->push_url);
	free((char *)o->push_name);
	free((char *)o->otlp_url);
	free(o);
}

int agent_out_reload(struct agent_out *out, const struct agent_out_opts *o)
{
	struct agent_out_opts *n = opts_dup(o), *old;

	if (!n)
		return -ENOMEM;
	pthread_mutex_lock(&out->lock);
	old = out->pending;
	out->pending = n;
	pthread_mutex_unlock(&out->lock);
	agent_out_opts_free(old);
	return 0;
}

/* The output thread: the directory as 'n' says, its counts kept. */
static void out_files_apply(struct agent_out *out,
			    const struct agent_out_opts *n)
{
	struct agent_files nf, old = out->files;
	int had = out->has_files;
	char err[512];

	if (n->dir && had && !strcmp(n->dir, out->files.dir)) {
		pthread_mutex_lock(&out->lock);
		out->files.keep_files = n->keep_files;
		out->files.keep_bytes = n->keep_bytes;
		pthread_mutex_unlock(&out->lock);
		return;
	}
	if (n->dir && agent_files_init(&nf, n->dir, n->keep_files,
				       n->keep_bytes, err, sizeof(err))) {
		fprintf(stderr,
			"uwprof agent: reload: --output-dir %s; the profiles go where they went\n",
			err);
		return;
	}
	pthread_mutex_lock(&out->lock);
	if (had) {
		out->base.files_written += old.written;
		out->base.files_removed += old.removed;
		out->base.file_errors += old.errors;
	}
	if (n->dir)
		out->files = nf;
	out->has_files = n->dir != NULL;
	pthread_mutex_unlock(&out->lock);
	if (had)
		agent_files_fini(&old);
}

static int str_differ(const char *a, const char *b)
{
	return (!a != !b) || (a && strcmp(a, b));
}

/* Whether 'n' pushes ('form') otherwise than out->o. */
static int push_changed(const struct agent_out *out,
			const struct agent_out_opts *n, int form)
{
	const struct agent_out_opts *o = &out->o;
	size_t i;

	if (form == AGENT_PUSH_OTLP)
		return !out->has_otlp || str_differ(o->otlp_url, n->otlp_url) ||
		       o->push_timeout_s != n->push_timeout_s;
	if (!out->has_push || str_differ(o->push_url, n->push_url) ||
	    str_differ(o->push_name, n->push_name) ||
	    o->push_timeout_s != n->push_timeout_s ||
	    o->nr_push_headers != n->nr_push_headers)
		return 1;
	for (i = 0; i < n->nr_push_headers; i++)
		if (strcmp(o->push_headers[i], n->push_headers[i]))
			return 1;
	return 0;
}

/* p's counters added to *c ('add'), or put there (the others zeroed). */
static void push_counts(struct agent_push *p, struct agent_out_counts *c,
			int add)
{
	/* Once the push has stopped, its counters are final and unlocked. */
	if (p->running)
		pthread_mutex_lock(&p->lock);
	if (!add)
		memset(c, 0, sizeof(*c));
	if (p->form == AGENT_PUSH_OTLP) {
		c->otlp_pushed += p->pushed;
		c->otlp_failed += p->failed;
		c->otlp_retries += p->retries;
		c->otlp_dropped += p->dropped;
		c->otlp_partial += p->partial;
		c->otlp_rejected += p->rejected;
	} else {
		c->pushed += p->pushed;
		c->push_failed += p->failed;
		c->push_retries += p->retries;
		c->push_dropped += p->dropped;
	}
	if (p->running)
		pthread_mutex_unlock(&p->lock);
}

/* base += now - was, for the push counters. */
static void counts_moved(struct agent_out_counts *base,
			 const struct agent_out_counts *now,
			 const struct agent_out_counts *was)
{
	base->pushed += now->pushed - was->pushed;
	base->push_failed += now->push_failed - was->push_failed;
	base->push_retries += now->push_retries - was->push_retries;
	base->push_dropped += now->push_dropped - was->push_dropped;
	base->otlp_pushed += now->otlp_pushed - was->otlp_pushed;
	base->otlp_failed += now->otlp_failed - was->otlp_failed;
	base->otlp_retries += now->otlp_retries - was->otlp_retries;
	base->otlp_dropped += now->otlp_dropped - was->otlp_dropped;
	base->otlp_partial += now->otlp_partial - was->otlp_partial;
	base->otlp_rejected += now->otlp_rejected - was->otlp_rejected;
}

/*
 * The output thread: the push of 'form' as 'n' says; the old one sends
 * what it holds.
 */
static void out_push_apply(struct agent_out *out,
			   const struct agent_out_opts *n, int form)
{
	struct agent_out_counts was = { 0 }, now = { 0 };
	int otlp = form == AGENT_PUSH_OTLP;
	struct agent_push *p = otlp ? &out->otlp : &out->push;
	int *has = otlp ? &out->has_otlp : &out->has_push;
	const char *url = otlp ? n->otlp_url : n->push_url;
	char err[512] = "";
	int ret = 0;

	if (!url && !*has)
		return;
	if (url && !push_changed(out, n, form))
		return;
	if (*has) {
		/*
		 * /metrics counts what it had (has_* 0: it stops unread),
		 * then what it does while it sends what it holds.
		 */
		pthread_mutex_lock(&out->lock);
		push_counts(p, &was, 0);
		push_counts(p, &out->base, 1);
		*has = 0;
		pthread_mutex_unlock(&out->lock);
		agent_push_stop(p);
		push_counts(p, &now, 0);
	}
	pthread_mutex_lock(&out->lock);
	counts_moved(&out->base, &now, &was);
	if (url) {
		ret = agent_push_start(p, n, form, err, sizeof(err));
		*has = !ret;
	}
	pthread_mutex_unlock(&out->lock);
	if (ret)
		fprintf(stderr, "uwprof agent: reload: %s; no %s until a reload or restart that works\n",
			err, otlp ? "OTLP push" : "push");
}

/* The output thread, between two windows: a reload's settings taken. */
static void out_apply(struct agent_out *out)
{
	struct agent_out_opts *n;

	pthread_mutex_lock(&out->lock);
	n = out->pending;
	out->pending = NULL;
	pthread_mutex_unlock(&out->lock);
	if (!n)
		return;
	out_files_apply(out, n);
	out_push_apply(out, n, AGENT_PUSH_PYROSCOPE);
	out_push_apply(out, n, AGENT_PUSH_OTLP);
	out->o = *n;
	agent_out_opts_free(out->own);
	out->own = n;
}

/*
 * Waits for one window, then hands its profile to the directory and the
 * push, as a reload made meanwhile says.
 */
static void out_one(struct agent_out *out, void *h)
{
	uint64_t span[2], off;
	uint8_t *buf = NULL, *obuf = NULL;
	size_t len = 0, olen = 0;
	char msg[512];
	int st, want;

	/*
	 * The OTLP encoding when there is an OTLP push, or a reload's
	 * pending one: a reload that comes while the window is built starts
	 * the OTLP push from the next window.
	 */
	pthread_mutex_lock(&out->lock);
	want = out->has_otlp || (out->pending && out->pending->otlp_url);
	pthread_mutex_unlock(&out->lock);
	if (want && out->src.wait_otlp)
		st = out->src.wait_otlp(out->src.ctx, h, &buf, &len, &obuf,
					&olen, span, msg, sizeof(msg));
	else
		st = out->src.wait(out->src.ctx, h, &buf, &len, span, msg,
				   sizeof(msg));
	out_apply(out);
	if (st != 200) {
		free(obuf);
		/* 503: a window not begun when the agent stopped; no news. */
		if (st != 503) {
			count(&out->windows_failed);
			if (agent_once(&out->said, (unsigned int)st))
				fprintf(stderr, "uwprof agent: a window's profile: %s\n",
					msg);
		}
		return;
	}
	count(&out->windows);
	off = clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_MONOTONIC);
	if (out->has_files)
		agent_files_write(&out->files, span[0] + off, buf, len);
	if (out->has_otlp && obuf)
		agent_push_enqueue(&out->otlp, obuf, olen, span[0] + off,
				   span[1] + off);
	else
		free(obuf);
	if (out->has_push)
		agent_push_enqueue(&out->push, buf, len, span[0] + off,
				   span[1] + off);
	else
		free(buf);
}

static uint64_t out_len(const struct agent_out *out)
{
	return (uint64_t)out->o.interval_s * 1000000000ULL;
}

static void *out_main(void *arg)
{
	struct agent_out *out = arg;
	uint64_t t = clock_ns(CLOCK_MONOTONIC), len;
	void *cur, *next;
	int ret;

	ret = out_ask(out, t, &cur);
	while (ret != -ESHUTDOWN) {
		if (ret) {
			/* Could not ask (memory): again in a moment, from then. */
			sleep(1);
			t = clock_ns(CLOCK_MONOTONIC);
			ret = out_ask(out, t, &cur);
			continue;
		}
		len = out_len(out);
		ret = out_ask(out, t + len, &next);
		out_one(out, cur);
		t += len;
		/* A reload's new interval: the next window already ends there. */
		if (!ret && out_len(out) != len && out->src.retime)
			out->src.retime(out->src.ctx, next, t + out_len(out));
		cur = next;
	}
	return NULL;
}

int agent_out_start(struct agent_out *out, const struct agent_out_opts *o,
		    const struct agent_period_src *src, char *err,
		    size_t errlen)
{
	int ret;

	memset(out, 0, sizeof(*out));
	out->o = *o;
	out->src = *src;
	pthread_mutex_init(&out->lock, NULL);
	if (o->dir) {
		ret = agent_files_init(&out->files, o->dir, o->keep_files,
				       o->keep_bytes, err, errlen);
		if (ret) {
			out->files_failed = 1;
			return ret;
		}
		out->has_files = 1;
	}
	if (o->push_url) {
		ret = agent_push_start(&out->push, o, AGENT_PUSH_PYROSCOPE,
				       err, errlen);
		if (ret)
			goto out_files;
		out->has_push = 1;
	}
	if (o->otlp_url) {
		ret = agent_push_start(&out->otlp, o, AGENT_PUSH_OTLP, err,
				       errlen);
		if (ret)
			goto out_push;
		out->has_otlp = 1;
	}
	ret = -pthread_create(&out->thread, NULL, out_main, out);
	if (ret) {
		snprintf(err, errlen, "starting the output thread: %s",
			 strerror(-ret));
		if (out->has_otlp)
			agent_push_stop(&out->otlp);
		goto out_push;
	}
	out->running = 1;
	return 0;

out_push:
	if (out->has_push)
		agent_push_stop(&out->push);
out_files:
	if (out->has_files)
		agent_files_fini(&out->files);
	pthread_mutex_destroy(&out->lock);
	return ret;
}

void agent_out_stop(struct agent_out *out)
{
	if (!out->running)
		return;
	pthread_join(out->thread, NULL);
	out->running = 0;
	if (out->has_push)
		agent_push_stop(&out->push);
	if (out->has_otlp)
		agent_push_stop(&out->otlp);
	if (out->has_files)
		agent_files_fini(&out->files);
	agent_out_opts_free(out->pending);
	agent_out_opts_free(out->own);
	out->pending = out->own = NULL;
	/* The lock stays: agent_out_counts() may still be asked. */
}

void agent_out_counts(struct agent_out *out, struct agent_out_counts *c)
{
	pthread_mutex_lock(&out->lock);
	*c = out->base;
	c->windows = __atomic_load_n(&out->windows, __ATOMIC_RELAXED);
	c->windows_failed = __atomic_load_n(&out->windows_failed,
					    __ATOMIC_RELAXED);
	if (out->has_files) {
		c->files_written += __atomic_load_n(&out->files.written,
						    __ATOMIC_RELAXED);
		c->files_removed += __atomic_load_n(&out->files.removed,
						    __ATOMIC_RELAXED);
		c->file_errors += __atomic_load_n(&out->files.errors,
						  __ATOMIC_RELAXED);
	}
	if (out->has_push)
		push_counts(&out->push, c, 1);
	if (out->has_otlp)
		push_counts(&out->otlp, c, 1);
	pthread_mutex_unlock(&out->lock);
}

int agent_out_headers_read(const char *path, const char ***hdrs, size_t *n,
			   char *err, size_t errlen)
{
	char *line = NULL, *h, *end, **nv;
	size_t cap = 0, lineno = 0;
	ssize_t got;
	FILE *f;
	int fd, ret = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	f = fd < 0 ? NULL : fdopen(fd, "r");
	if (!f) {
		ret = -errno;
		snprintf(err, errlen, "--push-header-file %s: %s", path,
			 strerror(-ret));
		if (fd >= 0)
			close(fd);
		return ret;
	}
	while ((got = getline(&line, &cap, f)) >= 0) {
		lineno++;
		for (h = line; *h == ' ' || *h == '\t'; h++)
			;
		end = h + strlen(h);
		while (end > h && (end[-1] == '\n' || end[-1] == '\r' ||
				   end[-1] == ' ' || end[-1] == '\t'))
			*--end = 0;
		if (!*h || *h == '#')
			continue;
		/* "Name: value", one line: nothing that would start another header. */
		if (!strchr(h, ':') || *h == ':' || strpbrk(h, "\r\n") ||
		    strcspn(h, ": \t") != (size_t)(strchr(h, ':') - h)) {
			snprintf(err, errlen,
				 "--push-header-file %s:%zu: not a 'Name: value' line",
				 path, lineno);
			ret = -EINVAL;
			break;
		}
		if (*n >= AGENT_MAX_PUSH_HEADERS) {
			snprintf(err, errlen,
				 "--push-header-file %s: more than %d headers",
				 path, AGENT_MAX_PUSH_HEADERS);
			ret = -EINVAL;
			break;
		}
		nv = realloc((void *)*hdrs, (*n + 1) * sizeof(*nv));
		if (nv)
			*hdrs = (const char **)nv;
		if (!nv || !(nv[*n] = strdup(h))) {
			snprintf(err, errlen, "out of memory");
			ret = -ENOMEM;
			break;
		}
		(*n)++;
	}
	if (!ret && ferror(f)) {
		ret = -EIO;
		snprintf(err, errlen, "--push-header-file %s: %s", path,
			 strerror(EIO));
	}
	/* The line may hold a secret: not left in freed memory. */
	if (line)
		explicit_bzero(line, cap);
	free(line);
	fclose(f);
	return ret;
}
