/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Live targets for the host tests and the benchmark: start a target
 * program, stop it (SIGSTOP, so gdb can attach to the same state), read its
 * registers with ptrace, and build the core's mapping list from
 * /proc/PID/maps with a table compiled by libuwtable for every executable
 * object (and the vDSO, read from /proc/PID/mem).
 */
#ifndef _UWPROF_LIVE_H
#define _UWPROF_LIVE_H

#include <sys/types.h>

#include "unwind.h"

#define LIVE_MAX_MAPS	128
#define LIVE_MAX_OBJS	64

/* One compiled object, keyed by path (or "[vdso]"), kept across stops. */
struct live_obj {
	char path[512];
	int err;			/* compile or check error, 0 if none */
	void *blob;
	size_t size;
	struct uwprof_table table;
	u64 rows;
};

struct live {
	pid_t pid;
	int out_fd;			/* target's stdout */
	struct uwprof_unwind_map maps[LIVE_MAX_MAPS];
	u32 nr_maps;
	struct live_obj objs[LIVE_MAX_OBJS];
	u32 nr_objs;
	u64 stack_lo, stack_hi;		/* the [stack] mapping */
	char err[512];			/* last error, one line */
};

/* Start argv[0] (with argv), wait for it to print "ready". 0 or -errno. */
int live_start(struct live *l, char *const argv[]);
/* SIGSTOP the target and wait until it is stopped. */
int live_stop(struct live *l);
int live_cont(struct live *l);
void live_kill(struct live *l);
/* Registers of the stopped target (ptrace seize, interrupt, detach). */
int live_regs(struct live *l, struct uwprof_regs *regs);
/*
 * (Re)build the mapping list from /proc/PID/maps, compiling objects not
 * seen before. 0, or -errno with l->err set when a table failed the
 * core's uwprof_table_check() (a tool / core disagreement).
 */
int live_maps(struct live *l);
void live_free(struct live *l);

#endif /* _UWPROF_LIVE_H */
