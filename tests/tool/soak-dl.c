// SPDX-License-Identifier: GPL-2.0
/*
 * soak-dl: dlopen/dlclose in a loop, for the agent's soak test
 * (tests/tool/guest-soak). Each round opens the libraries given, one at a
 * time, calls their demo_checksum (libdemo.so's, or a copy of it under
 * another name, which is another object to the profiler) for MS
 * milliseconds of CPU, so that samples land in it and the agent uploads
 * its table, then closes it, which unmaps it. Runs ROUNDS rounds (0: until
 * the file STOP exists); prints the number of dlopen calls.
 *
 * Usage: soak-dl ROUNDS MS STOP LIB...
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

typedef uint64_t (*checksum_fn)(const uint32_t *v, size_t n);

static volatile uint64_t sink;

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void dl_burn(checksum_fn f, uint32_t *v,
					      size_t n, double secs)
{
	double end = cpu_now() + secs;

	while (cpu_now() < end)
		sink += f(v, n);
}

int main(int argc, char **argv)
{
	static uint32_t v[1024];
	unsigned long rounds, r, opens = 0;
	double secs;
	int i;

	if (argc < 5) {
		fprintf(stderr, "usage: soak-dl ROUNDS MS STOP LIB...\n");
		return 2;
	}
	rounds = strtoul(argv[1], NULL, 10);
	secs = atof(argv[2]) / 1000;
	for (r = 0; !rounds || r < rounds; r++) {
		if (!rounds && !access(argv[3], F_OK))
			break;
		for (i = 4; i < argc; i++) {
			void *h = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
			checksum_fn f;

			if (!h) {
				fprintf(stderr, "soak-dl: %s\n", dlerror());
				return 1;
			}
			opens++;
			*(void **)&f = dlsym(h, "demo_checksum");
			if (f)
				dl_burn(f, v, 1024, secs);
			dlclose(h);
		}
	}
	printf("%lu\n", opens);
	return 0;
}
