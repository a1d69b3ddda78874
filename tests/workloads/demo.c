// SPDX-License-Identifier: GPL-2.0
/*
 * The bundled demo: a small pipeline whose time splits between the program
 * itself (recursion, arithmetic), a shared library (libdemo.so, through the
 * PLT) and libc calling back into the program (qsort's comparator). Built
 * -O2 -fomit-frame-pointer, as distributions build, so frame-pointer
 * unwinding cannot follow it.
 *
 * Usage: demo [SECONDS]   (default 3)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "libdemo.h"

#define N 4096

static volatile uint64_t sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

__attribute__((noinline)) static void stage_sort(uint32_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		v[i] = (uint32_t)(v[i] * 2654435761U + i);
	qsort(v, n, sizeof(*v), cmp_u32);
}

__attribute__((noinline)) static void stage_hash(const uint32_t *v, size_t n)
{
	for (int r = 0; r < 8; r++)
		sink += demo_checksum(v, n);
}

__attribute__((noinline)) static uint64_t tree_walk(uint32_t depth, uint64_t acc)
{
	if (!depth)
		return acc * 31 + 7;
	acc = tree_walk(depth - 1, acc ^ depth) + depth;
	sink += acc;
	return acc;
}

__attribute__((noinline)) static void stage_tree(void)
{
	for (int r = 0; r < 2000; r++)
		sink += tree_walk(24, (uint64_t)r);
}

__attribute__((noinline)) static void run_pipeline(uint32_t *v, size_t n)
{
	stage_sort(v, n);
	stage_hash(v, n);
	stage_tree();
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3.0;
	static uint32_t v[N];
	double end = now() + secs;
	unsigned long rounds = 0;

	for (size_t i = 0; i < N; i++)
		v[i] = (uint32_t)(i * 2246822519U);
	while (now() < end) {
		run_pipeline(v, N);
		rounds++;
	}
	printf("demo: %lu rounds in %.1f s (checksum %llx)\n", rounds, secs,
	       (unsigned long long)sink);
	return 0;
}
