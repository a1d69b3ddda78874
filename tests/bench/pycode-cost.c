// SPDX-License-Identifier: GPL-2.0
/*
 * What the recorder spends naming one new Python code object: a live
 * python3.11 (argv[1], Debian's /usr/bin/python3.11 by default) imports a
 * set of standard-library packages and prints every code object their
 * functions and classes reach (address and the fields of its
 * fingerprint); this program reads each once with the recorder's own
 * reader (tool/pycode.c: /proc/PID/mem, the object, its names and its
 * location table), as the recorder does for a code object first seen in
 * a sample, and prints the CPU time (user and system: the reads are
 * system calls) per object. Each round reads every object again, cold
 * to the reader (it keeps no cache); the median round is reported.
 * Not a test: every read must succeed, else it says so and fails.
 *
 *	pycode-cost [PYTHON]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pycode.h"

#define ROUNDS		5

static const char py_script[] =
"import sys, types, time\n"
"import argparse, asyncio, email.parser, http.server, json, unittest\n"
"import xml.dom.minidom, logging, pathlib, subprocess, typing\n"
"seen = {}\n"
"def code(co):\n"
"    if id(co) in seen:\n"
"        return\n"
"    seen[id(co)] = co\n"
"    for c in co.co_consts:\n"
"        if isinstance(c, types.CodeType):\n"
"            code(c)\n"
"def walk(ns, depth=0):\n"
"    for v in list(vars(ns).values()):\n"
"        if isinstance(v, types.FunctionType):\n"
"            code(v.__code__)\n"
"        elif isinstance(v, type) and depth < 2 and v.__module__ == ns.__name__:\n"
"            walk(v, depth + 1)\n"
"for name, m in list(sys.modules.items()):\n"
"    if isinstance(m, types.ModuleType):\n"
"        walk(m)\n"
"out = sys.stdout\n"
"for a, co in seen.items():\n"
"    out.write('%d %d %d %d %d\\n' % (a, len(co.co_code) // 2,\n"
"              co.co_firstlineno, id(co.co_qualname), id(co.co_filename)))\n"
"out.write('ready\\n')\n"
"out.flush()\n"
"time.sleep(3600)\n";

struct code {
	uint64_t	addr;
	uint32_t	fingerprint;
};

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	const char *python = argc > 1 ? argv[1] : "/usr/bin/python3.11";
	struct uwprof_py_layout l;
	struct uwprof_pymem m;
	struct code *codes = NULL;
	size_t n = 0, cap = 0, i;
	double per[ROUNDS];
	unsigned long long bytes = 0;
	int fds[2], st, r, failed = 0;
	char line[256];
	pid_t pid;
	FILE *f;

	if (uwprof_py_layout_of(0x030b, &l) || pipe(fds))
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (!pid) {
		dup2(fds[1], 1);
		close(fds[0]);
		execl(python, python, "-c", py_script, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	while (f && fgets(line, sizeof(line), f) && strcmp(line, "ready\n")) {
		unsigned long long a, size, qual, file;
		long long first;

		if (sscanf(line, "%llu %llu %lld %llu %llu", &a, &size, &first,
			   &qual, &file) != 5)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 1024;
			codes = realloc(codes, cap * sizeof(*codes));
			if (!codes)
				return 1;
		}
		codes[n].addr = a;
		codes[n].fingerprint = UWPROF_PY_FINGERPRINT(size, (uint32_t)first,
							     qual, file);
		n++;
	}
	if (!n || uwprof_pymem_open(&m, pid)) {
		fprintf(stderr, "pycode-cost: %s printed no code objects, or its memory cannot be read\n",
			python);
		failed = 1;
		goto out;
	}
	for (r = 0; r < ROUNDS; r++) {
		double t0 = cpu_s();

		for (i = 0; i < n; i++) {
			struct uwprof_pycode c;

			if (uwprof_pycode_read(&m, &l, codes[i].addr,
					       codes[i].fingerprint, &c)) {
				failed++;
				continue;
			}
			if (!r)
				bytes += strlen(c.qualname) + strlen(c.filename) +
					 c.linetable_len;
			uwprof_pycode_free(&c);
		}
		per[r] = (cpu_s() - t0) / (double)n;
	}
	uwprof_pymem_close(&m);
	qsort(per, ROUNDS, sizeof(per[0]), cmp_double);
	if (failed)
		fprintf(stderr, "pycode-cost: %d reads of %zu code objects failed\n",
			failed, n * ROUNDS);
	else
		printf("pycode-cost: %zu code objects, %.1f bytes of names and location table each: %.2f us of CPU per new code object (median of %d rounds, %.2f to %.2f)\n",
		       n, (double)bytes / (double)n, per[ROUNDS / 2] * 1e6,
		       ROUNDS, per[0] * 1e6, per[ROUNDS - 1] * 1e6);
out:
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	free(codes);
	if (f)
		fclose(f);
	return failed ? 1 : 0;
}
