// SPDX-License-Identifier: GPL-2.0
/*
 * Accuracy workload: a recursion DEPTH frames deep (rec_down calls itself)
 * whose innermost call spends its time in rec_leaf. Every sample in
 * rec_leaf must carry all DEPTH rec_down frames: a walker that gives up
 * early (a stack copy too small, a depth cap) shows here.
 *
 * Usage: recurse DEPTH [SECONDS]
 */
#include <stdio.h>

#include "acc.h"

volatile uint64_t acc_sink;

ACC_NOINLINE static uint64_t rec_leaf(uint64_t x)
{
	return acc_burn(x, 200000);
}

ACC_NOINLINE static uint64_t rec_down(unsigned int n, uint64_t x)
{
	uint64_t r;

	if (n <= 1)
		r = rec_leaf(x);
	else
		r = rec_down(n - 1, x + n);
	/* Work after the call keeps it from becoming a jump or a loop. */
	__asm__ volatile("" : "+r"(r));
	return r ^ n;
}

ACC_NOINLINE static void rec_run(unsigned int depth, double secs)
{
	double end = acc_now() + secs;

	while (acc_now() < end)
		acc_sink += rec_down(depth, acc_sink);
}

int main(int argc, char **argv)
{
	unsigned int depth = argc > 1 ? (unsigned int)atoi(argv[1]) : 50;

	if (!depth) {
		fprintf(stderr, "usage: recurse DEPTH [SECONDS]\n");
		return 2;
	}
	rec_run(depth, acc_seconds(argc, argv, 2));
	return 0;
}
