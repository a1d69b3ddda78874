// SPDX-License-Identifier: GPL-2.0
/*
 * Accuracy workload: libc calling back into the program. qs_run sorts with
 * qsort and the comparator qs_cmp does enough work to be the hot leaf, so
 * its samples' chains run main > qs_run > (libc's sort frames) > qs_cmp.
 * Built twice: dynamically (the libc frames are in libc.so.6) and as the
 * static workload (-static: libc's code is inside the executable).
 *
 * Usage: qsortcb [SECONDS]
 */
#include <stdlib.h>

#include "acc.h"

#define N 512

volatile uint64_t acc_sink;

ACC_NOINLINE static int qs_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	acc_sink += acc_burn(x ^ y, 300);
	return (x > y) - (x < y);
}

ACC_NOINLINE static void qs_run(double secs)
{
	static uint64_t v[N];
	double end = acc_now() + secs;
	uint64_t seed = 1;

	while (acc_now() < end) {
		for (size_t i = 0; i < N; i++) {
			seed = seed * 6364136223846793005ULL + 1;
			v[i] = seed >> 11;
		}
		qsort(v, N, sizeof(v[0]), qs_cmp);
		acc_sink += v[N / 2];
	}
}

int main(int argc, char **argv)
{
	qs_run(acc_seconds(argc, argv, 1));
	return 0;
}
