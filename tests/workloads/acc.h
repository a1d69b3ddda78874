/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the accuracy workloads: how long to run (argv), a clock, and
 * the busy loop that keeps a designated leaf function hot. The loop is
 * always inlined so its samples land in the leaf itself, never in a helper
 * frame of its own. Each workload lists its expected chains in
 * tests/accuracy/expected.
 */
#ifndef ACC_H
#define ACC_H

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#define ACC_NOINLINE __attribute__((noinline, noclone))

/* Keeps results alive so the compiler cannot drop the work. */
extern volatile uint64_t acc_sink;

static inline double acc_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* CPU seconds the process has used: work that must reach a sample count
 * whatever the host's load measures itself in these. */
static inline double acc_cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Seconds to run: argv[i] when present, else 1.5. */
static inline double acc_seconds(int argc, char **argv, int i)
{
	return argc > i ? atof(argv[i]) : 1.5;
}

static inline __attribute__((always_inline)) uint64_t acc_burn(uint64_t x, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

#endif
