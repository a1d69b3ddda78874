// SPDX-License-Identifier: GPL-2.0
/*
 * thread-demo: two worker threads (and the main thread) hash through
 * libdemo.so for SECONDS, so samples come from several threads of one
 * process. Built -O2 -fomit-frame-pointer. With 'rename', the first worker
 * names itself uwt-early at its start and uwt-late halfway through, as
 * servers name their threads by their current task.
 *
 * Usage: thread-demo SECONDS [rename]
 */
#include <pthread.h>
#include <string.h>
#include <sys/prctl.h>
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

__attribute__((noinline)) static void thread_hash(int rename)
{
	static uint32_t v[4096];
	double half_time = 0;

	for (size_t i = 0; i < 4096; i++)
		v[i] = (uint32_t)(i * 2654435761U);
	if (rename) {
		prctl(PR_SET_NAME, "uwt-early", 0, 0, 0);
		/*
		 * Halfway through this thread's own time: a slow guest may
		 * start it well after main, and a half measured from main
		 * then leaves the first name few samples.
		 */
		half_time = now() + (end_time - now()) / 2;
	}
	while (now() < end_time) {
		sink += demo_checksum(v, 4096);
		if (rename && now() >= half_time) {
			prctl(PR_SET_NAME, "uwt-late", 0, 0, 0);
			rename = 0;
		}
	}
}

__attribute__((noinline)) static void *thread_main(void *arg)
{
	thread_hash(arg != NULL);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[2];
	int i;

	double secs = argc > 1 ? atof(argv[1]) : 2.0;
	int rename = argc > 2 && !strcmp(argv[2], "rename");

	end_time = now() + secs;
	for (i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, thread_main,
				   i == 0 && rename ? (void *)1 : NULL))
			return 1;
	thread_hash(0);
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("thread-demo: done (%llx)\n", (unsigned long long)sink);
	return 0;
}
