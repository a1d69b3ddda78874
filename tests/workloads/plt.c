// SPDX-License-Identifier: GPL-2.0
/*
 * Accuracy workload: the program calls into a shared library of ours
 * (libaccplt.so) through the PLT; the library calls its own exported leaf
 * through its PLT too. Hot leaf: accplt_leaf, chain
 * main > plt_run > accplt_outer > accplt_leaf.
 *
 * Usage: plt [SECONDS]
 */
#include "acc.h"
#include "libaccplt.h"

volatile uint64_t acc_sink;

ACC_NOINLINE static void plt_run(double secs)
{
	double end = acc_now() + secs;

	while (acc_now() < end)
		acc_sink += accplt_outer(acc_sink);
}

int main(int argc, char **argv)
{
	plt_run(acc_seconds(argc, argv, 1));
	return 0;
}
