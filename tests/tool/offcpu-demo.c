// SPDX-License-Identifier: GPL-2.0
/*
 * offcpu-demo: a thread with a known split between running and waiting.
 * For SECONDS, offcpu_loop() repeats: spin_cpu() runs on the clock for
 * 3 ms, block_sleep() sleeps 3.5 ms in nanosleep, block_pipe() waits
 * 3.5 ms in a pipe read that a helper thread answers. At the end it prints
 * the loop's wall time, its thread's CPU time (as the scheduler accounts
 * it: what it did not run of the wall time it was off CPU, blocked or
 * waiting for a CPU) and the wall time it spent in the two blocking calls:
 *	loop_wall_ns=N loop_cpu_ns=N block_ns=N
 * Built -O2 -fomit-frame-pointer.
 *
 * Usage: offcpu-demo SECONDS
 *        offcpu-demo --pingpong SECONDS: two threads pass a byte through
 *        two pipes as fast as they can; prints switches=N ns=N (the
 *        context-switch rate a tracer slows down)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int req[2], ans[2];
static uint64_t block_ns;

static uint64_t ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

static void sleep_ns(long n)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = n };

	while (nanosleep(&ts, &ts))
		;
}

__attribute__((noinline, noclone)) static void spin_cpu(uint64_t n)
{
	uint64_t end = ns(CLOCK_MONOTONIC) + n;

	while (ns(CLOCK_MONOTONIC) < end)
		;
}

__attribute__((noinline, noclone)) static void block_sleep(long n)
{
	sleep_ns(n);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline, noclone)) static void block_pipe(void)
{
	char c = 0;

	if (write(req[1], &c, 1) != 1 || read(ans[0], &c, 1) != 1) {
		perror("offcpu-demo: pipe");
		exit(1);
	}
	__asm__ volatile("" ::: "memory");
}

/* Answers each request on the pipe after 3.5 ms. */
static void *helper(void *arg)
{
	char c;

	(void)arg;
	while (read(req[0], &c, 1) == 1) {
		sleep_ns(3500000);
		if (write(ans[1], &c, 1) != 1)
			break;
	}
	return NULL;
}

__attribute__((noinline, noclone)) static void offcpu_loop(double seconds)
{
	uint64_t end = ns(CLOCK_MONOTONIC) + (uint64_t)(seconds * 1e9);

	uint64_t t0;

	while (ns(CLOCK_MONOTONIC) < end) {
		spin_cpu(3000000);
		t0 = ns(CLOCK_MONOTONIC);
		block_sleep(3500000);
		block_pipe();
		block_ns += ns(CLOCK_MONOTONIC) - t0;
	}
}

static void *ponger(void *arg)
{
	char c;

	(void)arg;
	while (read(req[0], &c, 1) == 1 && write(ans[1], &c, 1) == 1)
		;
	return NULL;
}

static int pingpong(double seconds)
{
	uint64_t t0 = ns(CLOCK_MONOTONIC), n = 0, t;
	pthread_t th;
	char c = 0;

	if (pthread_create(&th, NULL, ponger, NULL))
		return 1;
	do {
		for (int i = 0; i < 100; i++) {
			if (write(req[1], &c, 1) != 1 || read(ans[0], &c, 1) != 1)
				return 1;
		}
		n += 200;
		t = ns(CLOCK_MONOTONIC) - t0;
	} while (t < seconds * 1e9);
	printf("switches=%llu ns=%llu\n", (unsigned long long)n,
	       (unsigned long long)t);
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t c0, c1, w0, w1;
	pthread_t th;

	if (pipe(req) || pipe(ans)) {
		perror("offcpu-demo: pipe");
		return 1;
	}
	if (argc == 3 && !strcmp(argv[1], "--pingpong"))
		return pingpong(atof(argv[2]));
	if (argc != 2) {
		fprintf(stderr, "usage: offcpu-demo SECONDS | --pingpong SECONDS\n");
		return 2;
	}
	if (pthread_create(&th, NULL, helper, NULL)) {
		fprintf(stderr, "offcpu-demo: cannot start the helper thread\n");
		return 1;
	}
	w0 = ns(CLOCK_MONOTONIC);
	c0 = ns(CLOCK_THREAD_CPUTIME_ID);
	offcpu_loop(atof(argv[1]));
	c1 = ns(CLOCK_THREAD_CPUTIME_ID);
	w1 = ns(CLOCK_MONOTONIC);
	printf("loop_wall_ns=%llu loop_cpu_ns=%llu block_ns=%llu\n",
	       (unsigned long long)(w1 - w0), (unsigned long long)(c1 - c0),
	       (unsigned long long)block_ns);
	return 0;
}
