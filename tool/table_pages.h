/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Inside the table compiler: rows laid out as the uapi blob (pages, page
 * starts, palettes). table.c compiles the rows; table_pages.c writes them.
 */
#ifndef UWPROF_TOOL_TABLE_PAGES_H
#define UWPROF_TOOL_TABLE_PAGES_H

#include <stddef.h>
#include <stdint.h>

#include <linux/uwprof.h>

/*
 * Rows as the compiler builds them: pc[] offsets from the header's base,
 * strictly increasing, the last an END row; rule[] indexes into the
 * h->nr_rules rules. 'h' comes filled but for nr_rows, nr_pages,
 * nr_palette and page_shift, which this fills. On success *blob is the
 * zeroed blob with everything but the rules written (they go at
 * UWPROF_TABLE_RULES_OFF(h)), and per_rule[nr_rules] counts the blob's
 * rows of each rule, page starts included. Returns 0, -ENOMEM, or -E2BIG
 * when the rows and page starts exceed UWPROF_TABLE_MAX_ROWS.
 */
int uwprof_table_pages(struct uwprof_table_hdr *h, const uint32_t *pc,
		       const uint16_t *rule, size_t n, void **blob,
		       uint64_t *per_rule);

#endif /* UWPROF_TOOL_TABLE_PAGES_H */
