// SPDX-License-Identifier: GPL-2.0
/*
 * Accuracy workload: a parent that starts one short-lived child after the
 * other (fork and exec of this program), each working for a fraction of a
 * second: under a system-wide profiler every child is a process it has not
 * seen before. Hot leaf: sp_leaf, chain main > sp_run > sp_outer > sp_leaf
 * (the children's; the parent only waits).
 *
 * Usage: spawn [SECONDS]   (SECONDS of children's CPU time, 20 children)
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "acc.h"

#define SP_CHILDREN	20

volatile uint64_t acc_sink;

ACC_NOINLINE static uint64_t sp_leaf(uint64_t x)
{
	return acc_burn(x, 2000);
}

ACC_NOINLINE static uint64_t sp_outer(uint64_t x)
{
	return sp_leaf(x) + 1;
}

ACC_NOINLINE static void sp_run(double secs)
{
	double end = acc_cpu_now() + secs;

	while (acc_cpu_now() < end)
		acc_sink += sp_outer(acc_sink);
}

int main(int argc, char **argv)
{
	double secs = acc_seconds(argc, argv, 1);
	char sbuf[32];
	int i, st;
	pid_t pid;

	if (argc > 2 && !strcmp(argv[2], "child")) {
		sp_run(secs);
		return 0;
	}
	snprintf(sbuf, sizeof(sbuf), "%g", secs / SP_CHILDREN);
	for (i = 0; i < SP_CHILDREN; i++) {
		pid = fork();
		if (pid < 0) {
			perror("spawn: fork");
			return 1;
		}
		if (!pid) {
			execl("/proc/self/exe", argv[0], sbuf, "child", (char *)NULL);
			_exit(127);
		}
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
		    WEXITSTATUS(st)) {
			fprintf(stderr, "spawn: child %d failed\n", (int)pid);
			return 1;
		}
	}
	return 0;
}
