// SPDX-License-Identifier: GPL-2.0
/*
 * Target of the sampling suite: a fixed call chain
 *	main -> chain_a -> chain_b -> chain_c -> chain_leaf
 * built -O2 -fomit-frame-pointer, with frames of different shapes (a big
 * local array, callee-saved registers, a leaf without a frame), so that
 * only correct unwind tables recover it. Spins for argv[1] seconds (10 by
 * default) or until killed. Every function is noinline and keeps its
 * call non-tail by using the result. Tells whoever started it that it
 * runs by writing a byte to fd 3, when that is open. With "fork" as
 * second argument, SIGUSR1 makes it fork once; the child runs the same
 * chain and dies with its parent. With "deep", the chain runs under
 * DEEP_FRAMES frames of chain_deep (see there).
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static volatile unsigned long sink;
static volatile sig_atomic_t fork_now;
static time_t until;

static void on_usr1(int sig)
{
	(void)sig;
	fork_now = 1;
}

NOINLINE unsigned long chain_leaf(unsigned long x)
{
	unsigned long i;

	for (i = 0; i < 100000; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

NOINLINE unsigned long chain_c(unsigned long x)
{
	/* Callee-saved registers live across the call. */
	unsigned long a = x * 3, b = x ^ 0x55, c = x + 7, d = x >> 2;
	unsigned long r = chain_leaf(x);

	return r + a * b + c * d;
}

NOINLINE unsigned long chain_b(unsigned long x)
{
	/* A large frame: CFA far from sp. */
	volatile unsigned long buf[300];
	unsigned long i;

	for (i = 0; i < 300; i++)
		buf[i] = x + i;
	return chain_c(buf[x % 300]) + buf[7];
}

NOINLINE unsigned long chain_a(unsigned long x)
{
	return chain_b(x + 1) * 2 + 1;
}

/*
 * A stack made to cost its walker the most per frame: each frame returns
 * to one of 1024 call sites in turn, more distinct return addresses than
 * the module's rule cache holds, so every frame needs a mapping and a
 * table search; DEEP_FRAMES of them reach the module's largest max_depth.
 * Each call site multiplies by its own constant, so none is merged, and
 * the result goes through an empty asm first, so that the compiler cannot
 * turn the recursion into a loop.
 */
#define KEEP(v)	__asm__ volatile("" : "+r"(v))
#define DEEP_FRAMES	8200
#define D1(k)	case (k): r = chain_deep(n - 1, x + (k)); KEEP(r); r *= 2 * (k) + 1; break;
#define D4(k)	D1((k) * 4) D1((k) * 4 + 1) D1((k) * 4 + 2) D1((k) * 4 + 3)
#define D16(k)	D4((k) * 4) D4((k) * 4 + 1) D4((k) * 4 + 2) D4((k) * 4 + 3)
#define D64(k)	D16((k) * 4) D16((k) * 4 + 1) D16((k) * 4 + 2) D16((k) * 4 + 3)
#define D256(k)	D64((k) * 4) D64((k) * 4 + 1) D64((k) * 4 + 2) D64((k) * 4 + 3)

NOINLINE unsigned long chain_deep(unsigned long n, unsigned long x)
{
	unsigned long r = 0;

	if (!n)
		return chain_a(x);
	switch (n & 1023) {
	D256(0) D256(1) D256(2) D256(3)
	}
	return r;
}

int main(int argc, char **argv)
{
	int deep = argc > 2 && !strcmp(argv[2], "deep");
	unsigned long x = 1;

	until = time(NULL) + (argc > 1 ? atoi(argv[1]) : 10);
	if (argc > 2 && !strcmp(argv[2], "fork"))
		signal(SIGUSR1, on_usr1);
	if (write(3, "r", 1) == 1)
		close(3);
	while (time(NULL) < until) {
		if (fork_now) {
			fork_now = 0;
			if (!fork())
				prctl(PR_SET_PDEATHSIG, SIGKILL);
		}
		x = deep ? chain_deep(DEEP_FRAMES, x) : chain_a(x);
	}
	sink = x;
	return 0;
}
