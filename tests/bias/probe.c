// SPDX-License-Identifier: GPL-2.0
/*
 * Runs a program that prints "SYMBOL ADDRESS" lines for functions it can
 * see, and for each address prints where uwprof's load-bias rule
 * (tool/elf_file.c) places it in its object:
 *
 *   SYMBOL PATH VADDR ADDRESS START OFFSET PF
 *
 * VADDR is the address in the object's own terms (pc - bias), which the
 * caller compares with the symbol table; the mapping's start, file offset
 * and permissions let other implementations of the rule be compared too.
 * The program's stdin is a pipe it waits on, so its mappings stay put.
 *
 * Usage: probe PROGRAM [ARGS...]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "elf_file.h"
#include "procmaps.h"

static int place(pid_t pid, const char *sym, uint64_t addr)
{
	const struct uwprof_pm_entry *e = NULL;
	struct uwprof_elf_info info;
	struct uwprof_pm pm;
	uint64_t bias;
	size_t i;
	int ret;

	ret = uwprof_pm_read(pid, &pm);
	if (ret)
		return ret;
	for (i = 0; i < pm.n; i++)
		if (addr >= pm.v[i].start && addr < pm.v[i].end)
			e = &pm.v[i];
	ret = -ENOENT;
	if (e && e->kind == UWPROF_PM_FILE &&
	    !uwprof_elf_info_file(e->path, &info) &&
	    !uwprof_elf_bias(&info, e->start, e->offset, e->pf, &bias)) {
		printf("%s %s %#" PRIx64 " %#" PRIx64 " %#" PRIx64
		       " %#" PRIx64 " %u\n", sym, e->path, addr - bias, addr,
		       e->start, e->offset, e->pf);
		ret = 0;
	}
	uwprof_pm_free(&pm);
	return ret;
}

int main(int argc, char **argv)
{
	int in[2], out[2], status, ret = 0;
	char sym[128], *line = NULL;
	unsigned long long addr;
	size_t cap = 0;
	pid_t pid;
	FILE *f;

	if (argc < 2 || pipe(in) || pipe(out)) {
		fprintf(stderr, "usage: probe PROGRAM [ARGS...]\n");
		return 2;
	}
	pid = fork();
	if (pid < 0)
		return 2;
	if (!pid) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execv(argv[1], argv + 1);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	f = fdopen(out[0], "r");
	while (f && getline(&line, &cap, f) > 0) {
		if (!strcmp(line, "end\n"))
			break;
		if (sscanf(line, "%127s %llx", sym, &addr) != 2)
			continue;
		if (place(pid, sym, addr)) {
			fprintf(stderr, "probe: %s at %#llx: no mapping or no PT_LOAD\n",
				sym, addr);
			ret = 1;
		}
	}
	free(line);
	close(in[1]);
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		ret = 1;
	return ret;
}
