// SPDX-License-Identifier: GPL-2.0
/*
 * Accuracy workload: 8 threads, each with its own chain. Thread K starts in
 * thrK_main, recurses K+1 levels through thr_rec and spends its time in
 * thr_leaf, so the chain of a thr_leaf sample says which thread it came
 * from: thrK_main > thr_rec x (K+1) > thr_leaf.
 *
 * Usage: threads [SECONDS]
 */
#include <pthread.h>
#include <stdio.h>

#include "acc.h"

#define NR_THREADS 8

volatile uint64_t acc_sink;
static double end_time;

ACC_NOINLINE static uint64_t thr_leaf(uint64_t x)
{
	return acc_burn(x, 100000);
}

ACC_NOINLINE static uint64_t thr_rec(unsigned int n, uint64_t x)
{
	uint64_t r = n <= 1 ? thr_leaf(x) : thr_rec(n - 1, x + n);

	__asm__ volatile("" : "+r"(r));
	return r ^ n;
}

#define THREAD_MAIN(k)						\
ACC_NOINLINE static void *thr##k##_main(void *arg)		\
{								\
	uint64_t x = k;						\
								\
	while (acc_now() < end_time)				\
		x += thr_rec(k + 1, x);				\
	acc_sink += x;						\
	return arg;						\
}

THREAD_MAIN(0)
THREAD_MAIN(1)
THREAD_MAIN(2)
THREAD_MAIN(3)
THREAD_MAIN(4)
THREAD_MAIN(5)
THREAD_MAIN(6)
THREAD_MAIN(7)

static void *(*const thread_fns[NR_THREADS])(void *) = {
	thr0_main, thr1_main, thr2_main, thr3_main,
	thr4_main, thr5_main, thr6_main, thr7_main,
};

int main(int argc, char **argv)
{
	pthread_t t[NR_THREADS];
	int i;

	end_time = acc_now() + acc_seconds(argc, argv, 1);
	for (i = 0; i < NR_THREADS; i++) {
		if (pthread_create(&t[i], NULL, thread_fns[i], NULL)) {
			fprintf(stderr, "threads: pthread_create failed\n");
			return 1;
		}
	}
	for (i = 0; i < NR_THREADS; i++)
		pthread_join(t[i], NULL);
	return 0;
}
