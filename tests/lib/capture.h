/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host tests: the process's standard error captured into memory through a
 * pipe (a file would meet the file size limit a check may set), so a test
 * can count the messages the code under test printed, then show them.
 *
 *	static struct capture log = { .lock = PTHREAD_MUTEX_INITIALIZER };
 *	capture_start(&log);  ... checks; capture_said(&log, "text") ...
 *	capture_finish(&log); (prints what was said as "# " lines)
 */
#ifndef UWPROF_TEST_CAPTURE_H
#define UWPROF_TEST_CAPTURE_H

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct capture {
	pthread_mutex_t	lock;
	char		text[65536];
	size_t		len;
	int		fd;		/* the pipe's read end */
	int		saved;		/* the real stderr */
	pthread_t	thread;
};

static void *capture_main(void *arg)
{
	struct capture *c = arg;
	char buf[1024];
	ssize_t n;

	while ((n = read(c->fd, buf, sizeof(buf))) > 0) {
		pthread_mutex_lock(&c->lock);
		if (c->len + (size_t)n < sizeof(c->text)) {
			memcpy(c->text + c->len, buf, (size_t)n);
			c->len += (size_t)n;
			c->text[c->len] = 0;
		}
		pthread_mutex_unlock(&c->lock);
	}
	return NULL;
}

/* From now on, stderr goes into c->text. 0, or -1 with errno. */
static inline int capture_start(struct capture *c)
{
	int fds[2];

	if (pipe(fds))
		return -1;
	c->fd = fds[0];
	fflush(stderr);
	c->saved = dup(2);
	dup2(fds[1], 2);
	close(fds[1]);
	return pthread_create(&c->thread, NULL, capture_main, c) ? -1 : 0;
}

/*
 * How often the captured stderr says 'what', waiting up to a second for
 * it to say it at all (the thread reads the pipe a moment after a message
 * is written).
 */
static inline int capture_said(struct capture *c, const char *what)
{
	const char *p;
	int n = 0, tries;

	for (tries = 0; tries < 100 && !n; tries++) {
		if (tries)
			usleep(10000);
		pthread_mutex_lock(&c->lock);
		for (p = c->text; (p = strstr(p, what)); p += strlen(what))
			n++;
		pthread_mutex_unlock(&c->lock);
	}
	return n;
}

/* stderr back; what was captured printed as TAP comments. */
static inline void capture_finish(struct capture *c)
{
	char *l;

	dup2(c->saved, 2);
	close(c->saved);
	pthread_join(c->thread, NULL);
	close(c->fd);
	for (l = strtok(c->text, "\n"); l; l = strtok(NULL, "\n"))
		printf("# %s\n", l);
}

#endif
