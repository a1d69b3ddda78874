/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared pieces of the unwinder host tests: TAP reporting and a builder of
 * synthetic table blobs in the uapi layout (for corrupted-blob tests and
 * synthetic stacks). The builder is independent of the table compiler, so
 * the core's checks are tested against a second reading of the format.
 */
#ifndef _UWPROF_TESTLIB_H
#define _UWPROF_TESTLIB_H

#include <stdarg.h>
#include <stdio.h>

#include "unwind.h"

struct tap {
	unsigned int n;		/* tests run */
	unsigned int failed;
	unsigned int skipped;
};

/* Print "ok N - desc" or "not ok N - desc"; returns cond. */
bool tap_ok(struct tap *t, bool cond, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void tap_skip(struct tap *t, const char *why, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void tap_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Plan line at the end, and the exit status: 0 only if nothing failed. */
int tap_done(struct tap *t);

/* A synthetic table: rows as parallel arrays, rules deduplicated by caller. */
struct tb_row {
	u32 pc;			/* offset from base */
	u16 rule;		/* index into rules */
};

struct tb_blob {
	void *data;		/* 8-byte aligned, free() it */
	size_t size;
	struct uwprof_table table;	/* after tb_load() */
	u32 *idx;
};

/* Build a blob for the core's arch; returns 0 or -ENOMEM. */
int tb_build(struct tb_blob *b, u64 base, const struct tb_row *rows, u32 nr_rows,
	     const struct uwprof_rule *rules, u32 nr_rules);
/*
 * Check and index it with table id 'id' (see uwprof_table_init()); returns
 * uwprof_table_check()'s result.
 */
int tb_load(struct tb_blob *b, u64 id);
void tb_free(struct tb_blob *b);

/* The core's arch id. */
u16 tb_arch(void);

#endif /* _UWPROF_TESTLIB_H */
