/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the guest programs outside the kselftest harness share
 * (tests/stress/uwprof_stress.c, tests/security/uwprof_security.c): TAP
 * output, opening the device or bailing out, synthetic tables, a clock.
 * On top of the kselftests' uwprof_test.h; header-only, so each program
 * stays one static binary built by one compiler call.
 */
#ifndef UWPROF_GUEST_H
#define UWPROF_GUEST_H

#include "../selftests/uwprof_test.h"

#include <stdarg.h>

/*
 * The TAP stream is the process's stdout, one per program, so its test
 * number and verdict are too: they live here rather than in a struct every
 * check would have to be handed.
 */
static int uwg_tap_n;
static int uwg_tap_failed;

static inline void tap(bool ok, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static inline void tap(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", ok ? "" : "not ", ++uwg_tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!ok)
		uwg_tap_failed = 1;
}

/* A TAP diagnostic line ("# ..."). */
static inline void diag(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static inline void diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

/* 1 when any tap() failed: the program's exit status. */
static inline int tap_status(void)
{
	return uwg_tap_failed;
}

/* Opens the device; a program that cannot has nothing to test: bail out. */
static inline int uwg_open(void)
{
	const char *why = NULL;
	int fd = uwt_open(&why);

	if (fd < 0) {
		printf("Bail out! cannot open " UWT_DEV ": %s\n", why);
		exit(1);
	}
	return fd;
}

/* Uploads a synthetic table of 'rows' rows (uwt_blob_make) as 'id'. */
static inline int uwg_add_synthetic(int fd, uint64_t id, uint32_t rows)
{
	struct uwt_blob b;
	int ret;

	if (uwt_blob_make(&b, rows))
		return -ENOMEM;
	ret = uwt_table_add(fd, id, b.data, b.size);
	free(b.data);
	return ret;
}

static inline double uwg_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

#endif
