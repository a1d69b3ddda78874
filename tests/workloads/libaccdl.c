// SPDX-License-Identifier: GPL-2.0
/*
 * libaccdl.so: loaded by the dlopen workload at run time. accdl_leaf is
 * static, so the call to it is direct.
 */
#include "acc.h"

uint64_t accdl_outer(uint64_t x);

ACC_NOINLINE static uint64_t accdl_leaf(uint64_t x)
{
	return acc_burn(x, 200000);
}

ACC_NOINLINE uint64_t accdl_outer(uint64_t x)
{
	uint64_t r = accdl_leaf(x + 7);

	__asm__ volatile("" : "+r"(r));
	return r - 1;
}
