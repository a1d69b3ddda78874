// SPDX-License-Identifier: GPL-2.0
/*
 * Accuracy workload: a loop of clock_gettime calls, so most samples land
 * in the vDSO (or, when the clock source cannot be read from user space,
 * in the kernel under the vDSO's system call). The vDSO is not a file:
 * its unwind info comes from the process's memory. Hot leaf: any vDSO
 * function, chain main > vd_run > clock_gettime (libc) > vDSO frames.
 *
 * Usage: vdso [SECONDS]
 */
#include "acc.h"

volatile uint64_t acc_sink;

ACC_NOINLINE static void vd_run(double secs)
{
	struct timespec ts;
	double end = acc_now() + secs;
	unsigned int i = 0;

	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		acc_sink += (uint64_t)ts.tv_nsec;
		if (!(++i & 1023) && ts.tv_sec + ts.tv_nsec / 1e9 >= end)
			break;
	}
}

int main(int argc, char **argv)
{
	vd_run(acc_seconds(argc, argv, 1));
	return 0;
}
