// SPDX-License-Identifier: GPL-2.0
/*
 * Shared library of the unwinder's live test target: the other half of a
 * recursion that alternates between the executable and this object, with
 * frames of different shapes (fixed, variable-length array, large).
 */
#include <string.h>

#include "target.h"

static volatile unsigned long lib_sink;

/* A variable-length array makes the compiler keep a frame pointer (CFA = fp). */
__attribute__((noinline)) static int lib_vla(int n, int (*cb)(int))
{
	volatile char buf[16 + (n & 7) * 24];

	buf[0] = (char)n;
	lib_sink += buf[0];
	return cb(n) + (int)(lib_sink & 1);
}

/* A large frame: CFA = sp + a big offset. */
__attribute__((noinline)) static int lib_big(int n, int (*cb)(int))
{
	volatile char buf[8192];

	memset((char *)buf, n, 64);
	lib_sink += buf[n & 63];
	return cb(n) + (int)(buf[1] & 1);
}

int uwt_lib_recurse(int n, int (*cb)(int))
{
	switch (n % 3) {
	case 0:
		return lib_vla(n, cb) + 1;
	case 1:
		return lib_big(n, cb) + 1;
	default:
		return cb(n) + 2;
	}
}

unsigned long uwt_lib_spin(unsigned long rounds)
{
	unsigned long i, x = lib_sink;

	for (i = 0; i < rounds; i++)
		x = x * 6364136223846793005UL + i;
	lib_sink = x;
	return x;
}
