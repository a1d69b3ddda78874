// SPDX-License-Identifier: GPL-2.0
/*
 * The blob writer of the table compiler: cuts the compiled rows into pages,
 * gives each page the row it starts with, builds the palettes and writes
 * the uapi layout (see <linux/uwprof.h>). Called by table.c once per table;
 * no global state.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "table_pages.h"

/* A palette slot is a byte. */
#define TP_PALETTE_MAX	256

/* The rows laid out, before they go into the blob. */
struct tp {
	const uint32_t	*pc;
	const uint16_t	*rule;
	size_t		n;
	uint32_t	first;		/* pc[0]: the blob's base is there */
	unsigned int	shift;
	int		shared;		/* one palette, rules[] itself */
	uint32_t	nr_pages;
	struct uwprof_table_page *page;	/* nr_pages + 1 */
	uint16_t	*off;		/* rows: offset in the page */
	uint8_t		*slot;
	uint16_t	*palette;
	size_t		rows;
	size_t		nr_palette;
	uint32_t	*seen;		/* rule -> page + 1 that has it */
	uint8_t		*pos;		/* rule -> its slot in that page */
	uint64_t	*per_rule;
};

/* A page's palette slot for rule ru; -1 past 256 rules in the page. */
static inline int tp_slot(struct tp *t, uint32_t stamp, uint16_t ru,
			  uint32_t *k)
{
	if (t->seen[ru] != stamp) {
		if (*k == TP_PALETTE_MAX)
			return -1;
		t->seen[ru] = stamp;
		t->pos[ru] = (uint8_t)*k;
		t->palette[t->nr_palette + *k] = ru;
		(*k)++;
	}
	return t->pos[ru];
}

/*
 * Pages from the one after 'p' to the one holding offset 'off': each opens
 * with the row it starts with when none starts there, with the rule in
 * force, 'ru'. Returns the new page, or -1 past 256 rules in a page.
 */
static int64_t tp_open(struct tp *t, uint32_t p, uint32_t off, uint16_t ru,
		       uint32_t *k)
{
	uint32_t q = off >> t->shift;
	int s = 0;

	while (p < q) {
		if (!t->shared)
			t->nr_palette += *k;
		*k = 0;
		p++;
		t->page[p].row = (uint32_t)t->rows;
		t->page[p].palette = (uint32_t)t->nr_palette;
		if (p == q && off == (uint64_t)q << t->shift)
			break;
		if (!t->shared)
			s = tp_slot(t, p + 1, ru, k);
		if (s < 0)
			return -1;
		t->off[t->rows] = 0;
		t->slot[t->rows++] = t->shared ? (uint8_t)ru : (uint8_t)s;
		t->per_rule[ru]++;
	}
	return p;
}

/*
 * The rows of one stretch of pages, from row i on: stops at the first row
 * of a page not opened yet, or past 256 rules in a page (-ERANGE). The
 * arrays in locals: a store through the byte-wide slots may alias any of
 * t's fields, which the compiler would then load again for every row.
 */
static int tp_rows(struct tp *t, uint32_t *i, uint32_t end, uint32_t stamp,
		   uint32_t *k)
{
	const uint32_t *pc = t->pc, first = t->first, mask = (1U << t->shift) - 1;
	const uint16_t *rule = t->rule;
	uint16_t *off = t->off, *pal = t->palette + t->nr_palette;
	uint8_t *slot = t->slot, *pos = t->pos;
	uint64_t *per = t->per_rule;
	uint32_t *seen = t->seen;
	size_t r = t->rows, n = t->n;
	uint32_t j = *i, kk = *k;
	int ret = 0;

	if (t->shared) {
		for (; j < n; j++) {
			uint32_t o = pc[j] - first;

			if (o > end)
				break;
			slot[r] = (uint8_t)rule[j];
			off[r++] = (uint16_t)(o & mask);
			per[rule[j]]++;
		}
	}
	for (; !t->shared && j < n; j++) {
		uint32_t o = pc[j] - first;
		uint16_t ru = rule[j];

		if (o > end)
			break;
		if (seen[ru] != stamp) {
			if (kk == TP_PALETTE_MAX) {
				ret = -ERANGE;
				break;
			}
			seen[ru] = stamp;
			pos[ru] = (uint8_t)kk;
			pal[kk++] = ru;
		}
		slot[r] = pos[ru];
		off[r++] = (uint16_t)(o & mask);
		per[ru]++;
	}
	t->rows = r;
	*i = j;
	*k = kk;
	return ret;
}

/*
 * Lay the rows out with pages of 1 << shift bytes. A page whose first
 * byte no row starts at gets a row there with the rule in force, so a
 * lookup never needs the page before. Returns 0, or -ERANGE when a page
 * has more than 256 rules (the caller takes smaller pages).
 */
static int tp_layout(struct tp *t, uint32_t nr_rules)
{
	uint32_t mask = (1U << t->shift) - 1, p = 0, k = 0, i = 0;
	int64_t np;

	t->rows = 0;
	t->nr_palette = 0;
	memset(t->per_rule, 0, nr_rules * sizeof(*t->per_rule));
	if (!t->shared)
		memset(t->seen, 0, nr_rules * sizeof(*t->seen));
	t->page[0].row = 0;
	t->page[0].palette = 0;
	/* Page 0 starts with row 0; every later stretch with i > 0. */
	for (;;) {
		if (tp_rows(t, &i, ((uint64_t)p << t->shift) | mask, p + 1, &k))
			return -ERANGE;
		if (i == t->n)
			break;
		np = tp_open(t, p, t->pc[i] - t->first, t->rule[i - 1], &k);
		if (np < 0)
			return -ERANGE;
		p = (uint32_t)np;
	}
	if (t->shared) {
		for (i = 0; i < nr_rules; i++)
			t->palette[i] = (uint16_t)i;
		t->nr_palette = nr_rules;
	} else {
		t->nr_palette += k;
	}
	t->page[t->nr_pages].row = (uint32_t)t->rows;
	t->page[t->nr_pages].palette = (uint32_t)t->nr_palette;
	return 0;
}

static void tp_free(struct tp *t)
{
	free(t->page);
	free(t->off);
	free(t->slot);
	free(t->palette);
	free(t->seen);
	free(t->pos);
}

/* Buffers for pages of 1 << shift bytes: at most a row more per page. */
static int tp_alloc(struct tp *t, uint32_t nr_rules)
{
	size_t max_rows;

	t->nr_pages = (uint32_t)(((uint64_t)(t->pc[t->n - 1] - t->first) >>
				  t->shift) + 1);
	max_rows = t->n + t->nr_pages;
	free(t->page);
	free(t->off);
	free(t->slot);
	free(t->palette);
	t->page = malloc((t->nr_pages + 1ULL) * sizeof(*t->page));
	t->off = malloc(max_rows * sizeof(*t->off));
	t->slot = malloc(max_rows);
	t->palette = malloc((t->shared ? nr_rules : max_rows) *
			    sizeof(*t->palette));
	if (!t->page || !t->off || !t->slot || !t->palette)
		return -ENOMEM;
	return 0;
}

static void tp_write(const struct tp *t, struct uwprof_table_hdr *h,
		     uint8_t *b)
{
	memcpy(b, h, sizeof(*h));
	memcpy(b + UWPROF_TABLE_PAGES_OFF(h), t->page,
	       (t->nr_pages + 1ULL) * sizeof(*t->page));
	memcpy(b + UWPROF_TABLE_PC_OFF(h), t->off, t->rows * sizeof(*t->off));
	memcpy(b + UWPROF_TABLE_SLOT_OFF(h), t->slot, t->rows);
	memcpy(b + UWPROF_TABLE_PALETTE_OFF(h), t->palette,
	       t->nr_palette * sizeof(*t->palette));
}

int uwprof_table_pages(struct uwprof_table_hdr *h, const uint32_t *pc,
		       const uint16_t *rule, size_t n, void **blob,
		       uint64_t *per_rule)
{
	struct tp t = {
		.pc = pc, .rule = rule, .n = n, .first = pc[0],
		.shared = h->nr_rules <= TP_PALETTE_MAX, .per_rule = per_rule,
	};
	int ret = -ENOMEM;

	*blob = NULL;
	if (!t.shared) {
		t.seen = malloc(h->nr_rules * sizeof(*t.seen));
		t.pos = malloc(h->nr_rules);
		if (!t.seen || !t.pos)
			goto out;
	}
	/*
	 * The largest pages whose palettes fit a byte: 64 KiB for every
	 * object measured; a page of 256 bytes has at most 256 rows.
	 */
	for (t.shift = UWPROF_TABLE_MAX_PAGE_SHIFT;; t.shift--) {
		ret = tp_alloc(&t, h->nr_rules);
		if (ret)
			goto out;
		ret = tp_layout(&t, h->nr_rules);
		if (ret != -ERANGE || t.shift == UWPROF_TABLE_MIN_PAGE_SHIFT)
			break;
	}
	if (ret)
		goto out;
	if (t.rows > UWPROF_TABLE_MAX_ROWS) {
		ret = -E2BIG;
		goto out;
	}
	h->base += t.first;
	h->nr_rows = (uint32_t)t.rows;
	h->nr_pages = t.nr_pages;
	h->nr_palette = (uint32_t)t.nr_palette;
	h->page_shift = t.shift;
	*blob = calloc(1, UWPROF_TABLE_SIZE(h));
	if (!*blob) {
		ret = -ENOMEM;
		goto out;
	}
	tp_write(&t, h, *blob);
out:
	tp_free(&t);
	return ret;
}
