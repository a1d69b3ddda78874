// SPDX-License-Identifier: GPL-2.0
/*
 * The frame-pointer-only object of the fponly workload: built with
 * -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer and no unwind
 * tables, then stripped of .eh_frame and .debug_frame (see Makefile), so
 * nothing describes these frames but the frame-pointer chain.
 */
#include "acc.h"
#include "fpobj.h"

ACC_NOINLINE static uint64_t fpo_note(uint64_t x)
{
	__asm__ volatile("" : "+r"(x));
	return x;
}

/*
 * The call after the loop makes this a non-leaf function: x86_64 GCC sets
 * up no frame pointer in a leaf, even with -fno-omit-frame-pointer.
 */
ACC_NOINLINE static uint64_t fpo_leaf(uint64_t x)
{
	uint64_t r = fpo_note(acc_burn(x, 200000));

	__asm__ volatile("" : "+r"(r));
	return r;
}

ACC_NOINLINE static uint64_t fpo_mid(uint64_t x)
{
	uint64_t r = fpo_leaf(x ^ 5);

	__asm__ volatile("" : "+r"(r));
	return r + 2;
}

ACC_NOINLINE uint64_t fpo_outer(uint64_t x)
{
	uint64_t r = fpo_mid(x + 9);

	__asm__ volatile("" : "+r"(r));
	return r * 3;
}
