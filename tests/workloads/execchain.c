// SPDX-License-Identifier: GPL-2.0
/*
 * Accuracy workload: a program that execs itself again and again, each
 * image working for a slice of the run before it replaces itself, so most
 * samples fall in images the profiler learns of only at their exec. Hot
 * leaf: ex_leaf, chain main > ex_run > ex_outer > ex_leaf.
 *
 * Usage: execchain [SECONDS [IMAGES_LEFT]]   (SECONDS over 12 images)
 */
#include <stdio.h>
#include <unistd.h>

#include "acc.h"

#define EX_IMAGES	12

volatile uint64_t acc_sink;

ACC_NOINLINE static uint64_t ex_leaf(uint64_t x)
{
	return acc_burn(x, 2000);
}

ACC_NOINLINE static uint64_t ex_outer(uint64_t x)
{
	return ex_leaf(x) + 1;
}

/* A slice of CPU time, so that a loaded host still gives every image samples. */
ACC_NOINLINE static void ex_run(double secs)
{
	double end = acc_cpu_now() + secs;

	while (acc_cpu_now() < end)
		acc_sink += ex_outer(acc_sink);
}

int main(int argc, char **argv)
{
	double secs = acc_seconds(argc, argv, 1);
	int left = argc > 2 ? atoi(argv[2]) : EX_IMAGES;
	char sbuf[32], lbuf[16];

	ex_run(secs / EX_IMAGES);
	if (--left <= 0)
		return 0;
	snprintf(sbuf, sizeof(sbuf), "%g", secs);
	snprintf(lbuf, sizeof(lbuf), "%d", left);
	execl("/proc/self/exe", argv[0], sbuf, lbuf, (char *)NULL);
	perror("execchain: exec");
	return 1;
}
