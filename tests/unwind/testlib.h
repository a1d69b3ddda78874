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
};

/*
 * Build a blob for the core's arch from rows in address order: pages of
 * 64 KiB, or smaller until every page has at most 256 rules, with the row
 * each page starts with added; one palette for all pages when there are
 * at most 256 rules. Rows before rows[0].pc are not covered (the blob's
 * base is there). Returns 0 or -ENOMEM.
 */
int tb_build(struct tb_blob *b, u64 base, const struct tb_row *rows, u32 nr_rows,
	     const struct uwprof_rule *rules, u32 nr_rules);
/*
 * The same with pages of 1 << shift bytes (smaller if a page needs it),
 * and a palette of its own for every page if per_page. Returns 0, -ENOMEM
 * or -E2BIG (more rows than a table holds).
 */
int tb_build_pages(struct tb_blob *b, u64 base, const struct tb_row *rows,
		   u32 nr_rows, const struct uwprof_rule *rules, u32 nr_rules,
		   u32 shift, bool per_page);
/* Check the blob and fill b->table; returns uwprof_table_check()'s result. */
int tb_load(struct tb_blob *b);
void tb_free(struct tb_blob *b);

/* Row r of a checked table: its page, address and rule. */
u32 tb_page_of(const struct uwprof_table *t, u32 r);
u64 tb_row_addr(const struct uwprof_table *t, u32 r);
const struct uwprof_rule *tb_row_rule(const struct uwprof_table *t, u32 r);

/* The core's arch id. */
u16 tb_arch(void);

#endif /* _UWPROF_TESTLIB_H */
