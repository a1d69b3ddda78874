// SPDX-License-Identifier: GPL-2.0
/*
 * Live test target for the unwinder, built -O2 -fomit-frame-pointer and
 * linked with target_lib.so. It runs one workload forever; the test stops
 * it at random moments and compares the unwinder with gdb. Workloads:
 *   recurse N	exe <-> library recursion N deep, spinning at the bottom
 *		and in every level, so stops land at every depth
 *   qsort	glibc qsort with a comparator that works
 *   signal	recursion in main, recursion in a SIGALRM handler (200 us timer)
 *   sigalt	the same with the handler on an alternate signal stack
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "target.h"

static volatile unsigned long sink;

__attribute__((noinline)) static unsigned long spin(unsigned long rounds)
{
	unsigned long i, x = sink;

	for (i = 0; i < rounds; i++)
		x = (x ^ (x >> 7)) * 31 + i;
	sink = x;
	return x;
}

static int depth_spin;

/* One level of the exe side; recursion continues in the library. */
__attribute__((noinline)) static int exe_recurse(int n)
{
	int r;

	spin(depth_spin);
	if (n <= 0)
		return (int)(spin(20000) & 1) + (int)(uwt_lib_spin(20000) & 1);
	r = uwt_lib_recurse(n - 1, exe_recurse);
	spin(depth_spin);
	return r + 1;
}

static int cmp_calls;

__attribute__((noinline)) static int key_of(const void *p)
{
	spin(40);
	return *(const int *)p;
}

static int cmp(const void *a, const void *b)
{
	int x = key_of(a), y = key_of(b);

	cmp_calls++;
	return (x > y) - (x < y);
}

static void run_qsort(void)
{
	static int v[4096];
	unsigned int i, s = 1;

	for (;;) {
		for (i = 0; i < 4096; i++) {
			s = s * 1103515245 + 12345;
			v[i] = (int)(s >> 8);
		}
		qsort(v, 4096, sizeof(v[0]), cmp);
	}
}

static void handler(int sig)
{
	(void)sig;
	exe_recurse(6);
}

static void run_signal(int alt)
{
	struct sigaction sa;
	struct itimerval it = {
		.it_interval = { 0, 200 },
		.it_value = { 0, 200 },
	};

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sa.sa_flags = SA_RESTART;
	if (alt) {
		static char altstack[1 << 16];
		stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };

		if (sigaltstack(&ss, NULL)) {
			perror("sigaltstack");
			exit(1);
		}
		sa.sa_flags |= SA_ONSTACK;
	}
	if (sigaction(SIGALRM, &sa, NULL) || setitimer(ITIMER_REAL, &it, NULL)) {
		perror("signal setup");
		exit(1);
	}
	for (;;)
		exe_recurse(12);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s recurse N | qsort | signal | sigalt\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IONBF, 0);
	if (!strcmp(argv[1], "recurse") && argc > 2) {
		int n = atoi(argv[2]);

		depth_spin = 200;
		printf("ready\n");
		for (;;)
			exe_recurse(n);
	}
	if (!strcmp(argv[1], "qsort")) {
		printf("ready\n");
		run_qsort();
	}
	if (!strcmp(argv[1], "signal") || !strcmp(argv[1], "sigalt")) {
		depth_spin = 100;
		printf("ready\n");
		run_signal(!strcmp(argv[1], "sigalt"));
	}
	fprintf(stderr, "unknown workload %s\n", argv[1]);
	return 2;
}
