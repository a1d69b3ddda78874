// SPDX-License-Identifier: GPL-2.0
/*
 * soak-churn: short-lived processes, one after another, for the agent's
 * soak test (tests/tool/guest-soak). Each child execs, in turn, one of
 * the commands given (separated by "--"); every one is waited for. It
 * stops after SECONDS or when the file STOP exists, and prints how many
 * processes it ran, and how many of them failed to exec or exited
 * non-zero. The children's output goes to /dev/null.
 *
 * Usage: soak-churn SECONDS STOP CMD [ARG...] [-- CMD [ARG...]]...
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	char **cmds[64];
	unsigned long runs = 0, bad = 0;
	int nr = 0, i, status;
	double end;

	if (argc < 4) {
		fprintf(stderr, "usage: soak-churn SECONDS STOP CMD [ARG...] [-- CMD...]...\n");
		return 2;
	}
	end = now() + atof(argv[1]);
	cmds[nr++] = &argv[3];
	for (i = 3; i < argc && nr < 64; i++)
		if (!strcmp(argv[i], "--")) {
			argv[i] = NULL;
			if (i + 1 < argc)
				cmds[nr++] = &argv[i + 1];
		}
	while (now() < end && access(argv[2], F_OK)) {
		char **cmd = cmds[runs % (unsigned long)nr];
		pid_t pid = fork();

		if (pid < 0) {
			bad++;
			usleep(100000);
			continue;
		}
		if (!pid) {
			int null = open("/dev/null", O_WRONLY);

			if (null >= 0)
				dup2(null, 1);
			execv(cmd[0], cmd);
			_exit(127);
		}
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		runs++;
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			bad++;
	}
	printf("%lu %lu\n", runs, bad);
	return 0;
}
