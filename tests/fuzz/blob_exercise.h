/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the fuzz targets and the replay ask of a table blob, compiled or
 * made of raw bytes: the module's check (module/table_check.c, built here
 * with the host environment) either refuses it or accepts a blob whose
 * every lookup stays inside it. Under AddressSanitizer a read past the
 * blob is a crash; the lookups' answers are compared with the rows read
 * straight from the layout. The tool's check must accept what the
 * module's does (it checks a subset: both arches, rules less strictly).
 */
#ifndef UWPROF_BLOB_EXERCISE_H
#define UWPROF_BLOB_EXERCISE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "table.h"
#include "unwind.h"

#if defined(UWPROF_ENV_X86_64)
#include "unwind_x86_64.h"
#elif defined(UWPROF_ENV_ARM64)
#include "unwind_arm64.h"
#endif

/* A row's rule as the layout names it. */
static inline const struct uwprof_rule *
bx_row_rule(const struct uwprof_table *t, uint32_t p, uint32_t r)
{
	return &t->rules[t->palette[t->page[p].palette + t->slot[r]]];
}

/*
 * Lookups at every row's first and last byte, at page starts and around
 * the table's ends, and at addresses taken from 'probe'. Returns the
 * number of wrong answers.
 */
static inline unsigned int bx_lookups(const struct uwprof_table *t,
				      const unsigned char *probe, size_t n)
{
	unsigned int bad = 0;
	uint32_t p, r;
	size_t i;

	for (p = 0; p < t->nr_pages; p++) {
		uint64_t start = t->base + ((uint64_t)p << t->page_shift);

		for (r = t->page[p].row; r < t->page[p + 1].row; r++) {
			uint64_t a = start + t->pc[r], next;
			const struct uwprof_rule *want = bx_row_rule(t, p, r);

			if (r + 1 == t->nr_rows) {
				bad += uwprof_table_lookup(t, a) != NULL;
				break;
			}
			next = r + 1 < t->page[p + 1].row ? start + t->pc[r + 1] :
				start + (1ULL << t->page_shift);
			bad += uwprof_table_lookup(t, a) != want;
			bad += uwprof_table_lookup(t, next - 1) != want;
		}
	}
	bad += uwprof_table_lookup(t, t->base - 1) != NULL;
	bad += uwprof_table_lookup(t, t->base + t->span) != NULL;
	bad += uwprof_table_lookup(t, ~0ULL) != NULL;
	for (i = 0; i + 8 <= n && i < 512; i += 8) {
		const struct uwprof_rule *ru;
		uint64_t a;

		memcpy(&a, probe + i, 8);
		ru = uwprof_table_lookup(t, t->base + a % (t->span + 64));
		bad += ru && (ru < t->rules || ru >= t->rules + t->nr_rules);
	}
	return bad;
}

/*
 * Check and exercise the blob at data[0..size) (any alignment: it is
 * copied). 'must_pass': a compiled blob of the host's arch, which the
 * module's check must accept. Aborts on any violation; returns the
 * module check's result.
 */
static inline int bx_blob(const void *data, size_t size, int must_pass)
{
	struct uwprof_table t;
	char err[256];
	void *copy = aligned_alloc(8, (size + 15) & ~(size_t)7);
	unsigned int bad;
	int ret;

	if (!copy)
		abort();
	memcpy(copy, data, size);
	ret = uwprof_table_check(copy, size);
	if (ret && must_pass) {
		fprintf(stderr, "compiled blob refused by the module's check: %d\n", ret);
		abort();
	}
	if (!ret) {
		if (uwprof_blob_check(copy, size, err, sizeof(err))) {
			fprintf(stderr, "module's check accepts, tool's refuses: %s\n", err);
			abort();
		}
		uwprof_table_init(&t, copy);
		bad = bx_lookups(&t, data, size);
		if (bad) {
			fprintf(stderr, "%u lookups disagree with the layout\n", bad);
			abort();
		}
	}
	free(copy);
	return ret;
}

#endif /* UWPROF_BLOB_EXERCISE_H */
