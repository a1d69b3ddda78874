// SPDX-License-Identifier: GPL-2.0
/*
 * 'uwprof agent --output-dir DIR / --push URL': the whole host's profile
 * of each consecutive --interval seconds, the same profile the HTTP
 * endpoint answers, written to the directory (agent_files.c) and pushed
 * (agent_push.c). One thread asks the source for the windows: the next
 * one is asked for before the current one is waited for, so that the
 * recorder opens it in time while this thread builds, writes and queues
 * the last; windows therefore follow each other without a gap, and at
 * most two are held at once. The thread never touches the network: the
 * push has its own, and the recorder's thread only opens and closes
 * window files.
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

/* Waits for one window, then hands its profile to the directory and the push. */
static void out_one(struct agent_out *out, void *h)
{
	uint64_t span[2], off;
	uint8_t *buf = NULL;
	size_t len = 0;
	char msg[512];
	int st;

	st = out->src.wait(out->src.ctx, h, &buf, &len, span, msg, sizeof(msg));
	if (st != 200) {
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
	if (out->has_push)
		agent_push_enqueue(&out->push, buf, len, span[0] + off,
				   span[1] + off);
	else
		free(buf);
}

static void *out_main(void *arg)
{
	struct agent_out *out = arg;
	uint64_t len = (uint64_t)out->o.interval_s * 1000000000ULL;
	uint64_t t = clock_ns(CLOCK_MONOTONIC);
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
		ret = out_ask(out, t + len, &next);
		out_one(out, cur);
		t += len;
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
		ret = agent_push_start(&out->push, o, err, errlen);
		if (ret)
			goto out_files;
		out->has_push = 1;
	}
	ret = -pthread_create(&out->thread, NULL, out_main, out);
	if (ret) {
		snprintf(err, errlen, "starting the output thread: %s",
			 strerror(-ret));
		if (out->has_push)
			agent_push_stop(&out->push);
		goto out_files;
	}
	out->running = 1;
	return 0;

out_files:
	if (out->has_files)
		agent_files_fini(&out->files);
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
	if (out->has_files)
		agent_files_fini(&out->files);
}

void agent_out_counts(struct agent_out *out, struct agent_out_counts *c)
{
	memset(c, 0, sizeof(*c));
	c->windows = __atomic_load_n(&out->windows, __ATOMIC_RELAXED);
	c->windows_failed = __atomic_load_n(&out->windows_failed,
					    __ATOMIC_RELAXED);
	c->files_written = __atomic_load_n(&out->files.written, __ATOMIC_RELAXED);
	c->files_removed = __atomic_load_n(&out->files.removed, __ATOMIC_RELAXED);
	c->file_errors = __atomic_load_n(&out->files.errors, __ATOMIC_RELAXED);
	if (!out->has_push)
		return;
	/* Once the push has stopped, its counters are final and unlocked. */
	if (out->push.running)
		pthread_mutex_lock(&out->push.lock);
	c->pushed = out->push.pushed;
	c->push_failed = out->push.failed;
	c->push_retries = out->push.retries;
	c->push_dropped = out->push.dropped;
	if (out->push.running)
		pthread_mutex_unlock(&out->push.lock);
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
