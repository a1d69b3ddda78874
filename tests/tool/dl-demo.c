// SPDX-License-Identifier: GPL-2.0
/*
 * dl-demo: spins in its own code for a while, then dlopen()s libdemo.so
 * (not linked at start) and calls demo_checksum through dlsym for the rest
 * of the time, so a recorder must pick up a mapping that appears late.
 * Built -O2 -fomit-frame-pointer.
 *
 * Usage: dl-demo LIBDEMO_PATH SECONDS
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef uint64_t (*checksum_fn)(const uint32_t *v, size_t n);

static volatile uint64_t sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void dl_spin(double until)
{
	while (now() < until)
		sink++;
}

__attribute__((noinline)) static void dl_stage(checksum_fn f, uint32_t *v,
					       size_t n)
{
	sink += f(v, n);
}

int main(int argc, char **argv)
{
	static uint32_t v[4096];
	double secs, end;
	checksum_fn f;
	void *h;

	if (argc < 3)
		return 2;
	secs = atof(argv[2]);
	end = now() + secs;
	for (size_t i = 0; i < 4096; i++)
		v[i] = (uint32_t)(i * 2246822519U);
	dl_spin(now() + secs / 5);
	h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "dl-demo: %s\n", dlerror());
		return 1;
	}
	f = (checksum_fn)(uintptr_t)dlsym(h, "demo_checksum");
	if (!f)
		return 1;
	while (now() < end)
		dl_stage(f, v, 4096);
	printf("dl-demo: done (%llx)\n", (unsigned long long)sink);
	return 0;
}
