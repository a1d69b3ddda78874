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
 * chain and dies with its parent.
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

int main(int argc, char **argv)
{
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
		x = chain_a(x);
	}
	sink = x;
	return 0;
}
