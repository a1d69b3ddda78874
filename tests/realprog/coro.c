// SPDX-License-Identifier: GPL-2.0
/*
 * A coroutine workload for the real-program suite: two contexts made by
 * glibc's makecontext, each running nested work (a recursion a few calls
 * deep over a small matrix), switched to and from main with swapcontext
 * until the time is up; then each returns from its function, which glibc
 * follows into uc_link. Most samples land on the coroutines' own stacks,
 * whose outermost frame is glibc's __start_context.
 *
 * Usage: coro SECONDS
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <ucontext.h>

#define NR_CORO		2
#define CORO_STACK	(256 * 1024)
#define N		24

static ucontext_t main_ctx, coro_ctx[NR_CORO];
static int done;
static unsigned long sink[NR_CORO];

static __attribute__((noinline)) unsigned long mat_step(unsigned long *m,
							 unsigned int seed)
{
	unsigned long s = 0;
	int i, j;

	for (i = 0; i < N; i++)
		for (j = 0; j < N; j++) {
			m[i * N + j] = m[i * N + j] * 6364136223846793005UL +
				       seed + m[j * N + i];
			s += m[i * N + j] >> 17;
		}
	return s;
}

static __attribute__((noinline)) unsigned long nest(unsigned long *m,
						     int depth, unsigned int seed)
{
	unsigned long s;

	if (!depth)
		return mat_step(m, seed);
	s = nest(m, depth - 1, seed * 33 + 1);
	/* Work at every level, so that each one is sampled. */
	return s + mat_step(m, seed + depth) + nest(m, depth - 1, seed ^ s);
}

/* The function each context starts in (scored by name: see score). */
static __attribute__((noinline)) void coro_entry(int id)
{
	unsigned long m[N * N] = { 0 };
	unsigned int seed = (unsigned int)id + 1;

	while (!done) {
		sink[id] += nest(m, 4, seed++);
		swapcontext(&coro_ctx[id], &main_ctx);
	}
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* getcontext and swapcontext return twice: kept out of main's frame. */
static __attribute__((noinline)) int coro_make(int id)
{
	ucontext_t *c = &coro_ctx[id];

	if (getcontext(c))
		return -1;
	c->uc_stack.ss_sp = malloc(CORO_STACK);
	c->uc_stack.ss_size = CORO_STACK;
	c->uc_link = &main_ctx;
	if (!c->uc_stack.ss_sp)
		return -1;
	makecontext(c, (void (*)(void))coro_entry, 1, id);
	return 0;
}

static __attribute__((noinline)) int coro_resume(int id)
{
	return swapcontext(&main_ctx, &coro_ctx[id]);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3, t0 = now();
	unsigned long rounds = 0;
	int i;

	for (i = 0; i < NR_CORO; i++)
		if (coro_make(i))
			return 1;
	while (now() - t0 < secs) {
		for (i = 0; i < NR_CORO; i++)
			if (coro_resume(i))
				return 1;
		rounds++;
	}
	/* Each context leaves its function through __start_context. */
	done = 1;
	for (i = 0; i < NR_CORO; i++)
		if (coro_resume(i))
			return 1;
	printf("%lu rounds, %lx %lx\n", rounds, sink[0], sink[1]);
	return 0;
}
