// SPDX-License-Identifier: GPL-2.0
/*
 * Accuracy workload: code with frame pointers and no unwind info. fp_run
 * (this file: -fomit-frame-pointer, with CFI) calls fpo_outer > fpo_mid >
 * fpo_leaf in fpobj.c, which is compiled with frame pointers, without
 * unwind tables, and has its .eh_frame and .debug_frame removed, so the
 * only way through it is the frame-pointer chain; above it the tables take
 * over again. Hot leaf: fpo_leaf, chain
 * main > fp_run > fpo_outer > fpo_mid > fpo_leaf.
 *
 * Usage: fponly [SECONDS]
 */
#include "acc.h"
#include "fpobj.h"

volatile uint64_t acc_sink;

ACC_NOINLINE static void fp_run(double secs)
{
	double end = acc_now() + secs;

	while (acc_now() < end)
		acc_sink += fpo_outer(acc_sink);
}

int main(int argc, char **argv)
{
	fp_run(acc_seconds(argc, argv, 1));
	return 0;
}
