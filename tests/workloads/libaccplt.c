// SPDX-License-Identifier: GPL-2.0
/*
 * libaccplt.so: the shared library of the PLT workload (plt.c). Both
 * functions are exported, so with -fPIC the call from accplt_outer to
 * accplt_leaf also goes through this library's PLT.
 */
#include "acc.h"
#include "libaccplt.h"

ACC_NOINLINE uint64_t accplt_leaf(uint64_t x)
{
	return acc_burn(x, 200000);
}

ACC_NOINLINE uint64_t accplt_outer(uint64_t x)
{
	uint64_t r = accplt_leaf(x + 1);

	__asm__ volatile("" : "+r"(r));
	return r + 3;
}
