/* SPDX-License-Identifier: GPL-2.0 */
/*
 * TAP output for the host tests of single programs (tests/tool): one line
 * per check, the plan at the end, exit status 1 when any check failed.
 */
#ifndef UWPROF_TESTS_TAP_H
#define UWPROF_TESTS_TAP_H

#include <stdarg.h>
#include <stdio.h>

static int tap_tests, tap_failed;

static void ok(int cond, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void ok(int cond, const char *fmt, ...)
{
	va_list ap;

	tap_tests++;
	printf("%sok %d - ", cond ? "" : "not ", tap_tests);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!cond)
		tap_failed++;
}

/* Prints the plan; the program's exit status. */
static inline int tap_done(void)
{
	printf("1..%d\n", tap_tests);
	return tap_failed ? 1 : 0;
}

#endif /* UWPROF_TESTS_TAP_H */
