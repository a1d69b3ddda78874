/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host tests that need a live interpreter to read: starts 'exe' (a copy of
 * a CPython, isolated: -I -S) that says "ready" on its stdout and sleeps
 * for 'secs' seconds, with that stdout on a pipe the caller reads. Header
 * only: each test is one compiler call.
 */
#ifndef UWPROF_TESTS_PYSPAWN_H
#define UWPROF_TESTS_PYSPAWN_H

#include <stdio.h>
#include <sys/types.h>
#include <unistd.h>

static inline pid_t pyspawn_sleeper(const char *exe, int secs, FILE **out)
{
	char script[96];
	int pfd[2];
	pid_t pid;

	snprintf(script, sizeof(script),
		 "import time; print('ready', flush=True); time.sleep(%d)",
		 secs);
	if (pipe(pfd))
		return -1;
	pid = fork();
	if (!pid) {
		dup2(pfd[1], 1);
		close(pfd[0]);
		close(pfd[1]);
		execl(exe, exe, "-I", "-S", "-c", script, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	*out = fdopen(pfd[0], "r");
	return pid;
}

#endif /* UWPROF_TESTS_PYSPAWN_H */
