// SPDX-License-Identifier: GPL-2.0
/*
 * thread-demo: two worker threads (and the main thread) hash through
 * libdemo.so for SECONDS, so samples come from several threads of one
 * process. Built -O2 -fomit-frame-pointer.
 *
 * Usage: thread-demo SECONDS
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "libdemo.h"

static volatile uint64_t sink;
static double end_time;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void thread_hash(void)
{
	static uint32_t v[4096];

	for (size_t i = 0; i < 4096; i++)
		v[i] = (uint32_t)(i * 2654435761U);
	while (now() < end_time)
		sink += demo_checksum(v, 4096);
}

__attribute__((noinline)) static void *thread_main(void *arg)
{
	(void)arg;
	thread_hash();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[2];
	int i;

	end_time = now() + (argc > 1 ? atof(argv[1]) : 2.0);
	for (i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, thread_main, NULL))
			return 1;
	thread_hash();
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("thread-demo: done (%llx)\n", (unsigned long long)sink);
	return 0;
}
