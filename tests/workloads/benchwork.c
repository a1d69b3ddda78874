// SPDX-License-Identifier: GPL-2.0
/*
 * Benchmark workload: a fixed amount of work (unlike the accuracy
 * workloads, which run for a fixed time), so a profiler's overhead shows as
 * longer wall and CPU time. Each round recurses 40 frames into a busy leaf
 * and sorts with a comparator called back from libc. It prints its own
 * wall and CPU time, measured from main's start to its end, so the
 * profiler's start-up and shutdown are not counted.
 *
 * Usage: benchwork ROUNDS
 * Output: "benchwork: rounds N wall S cpu S"
 */
#include <stdio.h>
#include <stdlib.h>

#include "acc.h"

#define N 256

volatile uint64_t acc_sink;

ACC_NOINLINE static uint64_t bw_leaf(uint64_t x)
{
	return acc_burn(x, 20000);
}

ACC_NOINLINE static uint64_t bw_rec(unsigned int n, uint64_t x)
{
	uint64_t r = n <= 1 ? bw_leaf(x) : bw_rec(n - 1, x + n);

	__asm__ volatile("" : "+r"(r));
	return r ^ n;
}

ACC_NOINLINE static int bw_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	acc_sink += acc_burn(x ^ y, 50);
	return (x > y) - (x < y);
}

ACC_NOINLINE static void bw_round(uint64_t *v, uint64_t seed)
{
	for (size_t i = 0; i < N; i++) {
		seed = seed * 6364136223846793005ULL + 1;
		v[i] = seed >> 11;
	}
	qsort(v, N, sizeof(v[0]), bw_cmp);
	acc_sink += bw_rec(40, v[N / 2]);
}

int main(int argc, char **argv)
{
	static uint64_t v[N];
	long rounds = argc > 1 ? atol(argv[1]) : 100;
	double w0 = acc_now(), c0 = acc_cpu_now();

	for (long r = 0; r < rounds; r++)
		bw_round(v, (uint64_t)r + 1);
	printf("benchwork: rounds %ld wall %.6f cpu %.6f\n", rounds,
	       acc_now() - w0, acc_cpu_now() - c0);
	return 0;
}
