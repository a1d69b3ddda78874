// SPDX-License-Identifier: GPL-2.0
/*
 * What a parent sees of its children's signals: runs 'ARGS...' as a child
 * N times in a row, each time waiting with WUNTRACED, counts the SIGCHLDs
 * it is sent and the stops waitpid reports, and prints
 * "children=N sigchld=M stops=S". A profiler that stops its targets (a
 * SIGSTOP at exec) shows as stops and extra SIGCHLDs. Exit 0 when every
 * child exited 0.
 *
 *	sigwatch N PROGRAM [ARGS...]
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t sigchld;

static void on_chld(int sig)
{
	(void)sig;
	sigchld++;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	int n, i, st, stops = 0, bad = 0;
	pid_t pid;

	if (argc < 3 || (n = atoi(argv[1])) <= 0) {
		fprintf(stderr, "usage: sigwatch N PROGRAM [ARGS...]\n");
		return 2;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_chld;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGCHLD, &sa, NULL);
	for (i = 0; i < n; i++) {
		pid = fork();
		if (pid < 0)
			return 1;
		if (!pid) {
			execv(argv[2], argv + 2);
			_exit(127);
		}
		for (;;) {
			if (waitpid(pid, &st, WUNTRACED) < 0)
				return 1;
			if (!WIFSTOPPED(st))
				break;
			stops++;
			kill(pid, SIGCONT);
		}
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			bad++;
	}
	/* Let the last child's SIGCHLD land. */
	usleep(100000);
	printf("children=%d sigchld=%d stops=%d\n", n, (int)sigchld, stops);
	return bad ? 1 : 0;
}
