// SPDX-License-Identifier: GPL-2.0
/*
 * TAP reporting and the synthetic blob builder for the unwinder host tests
 * (see testlib.h).
 */
#include <stdlib.h>

#include "testlib.h"

#if defined(UWPROF_ENV_X86_64)
#include "unwind_x86_64.h"
#elif defined(UWPROF_ENV_ARM64)
#include "unwind_arm64.h"
#endif

bool tap_ok(struct tap *t, bool cond, const char *fmt, ...)
{
	va_list ap;

	t->n++;
	if (!cond)
		t->failed++;
	printf("%sok %u - ", cond ? "" : "not ", t->n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	return cond;
}

void tap_skip(struct tap *t, const char *why, const char *fmt, ...)
{
	va_list ap;

	t->n++;
	t->skipped++;
	printf("ok %u - ", t->n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(" # SKIP %s\n", why);
	fflush(stdout);
}

void tap_diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

int tap_done(struct tap *t)
{
	printf("1..%u\n", t->n);
	if (t->failed)
		tap_diag("%u of %u failed", t->failed, t->n);
	return t->failed ? 1 : 0;
}

u16 tb_arch(void)
{
	return UWPROF_ARCH_ID;
}

/* The layout of 'rows' in pages of 1 << shift bytes, or -ERANGE. */
struct tb_lay {
	u32 nr_pages, rows, nr_palette;
	struct uwprof_table_page *page;
	u16 *off;
	u8 *slot;
	u16 *palette;
};

static int tb_lay(struct tb_lay *l, const struct tb_row *rows, u32 n,
		  u32 nr_rules, u32 shift, bool per_page)
{
	u32 first = rows[0].pc, p, i = 0, k, j;

	l->nr_pages = ((rows[n - 1].pc - first) >> shift) + 1;
	l->rows = 0;
	l->nr_palette = 0;
	for (p = 0; p < l->nr_pages; p++) {
		u64 lo = (u64)p << shift, hi = lo + (1ULL << shift);
		u32 start = l->rows;

		l->page[p].row = l->rows;
		l->page[p].palette = per_page ? l->nr_palette : 0;
		if (rows[i].pc - first != lo) {
			l->off[l->rows] = 0;
			l->slot[l->rows++] = (u8)0;
			l->palette[l->nr_palette] = rows[i - 1].rule;
		}
		for (; i < n && rows[i].pc - first < hi; i++) {
			l->off[l->rows] = (u16)(rows[i].pc - first - lo);
			l->slot[l->rows++] = 0;
			l->palette[l->nr_palette + l->rows - 1 - start] = rows[i].rule;
		}
		if (!per_page) {
			for (j = start; j < l->rows; j++)
				l->slot[j] = (u8)l->palette[l->nr_palette + j - start];
			continue;
		}
		/* Rules of the page, each once: slots into its palette. */
		for (j = start, k = 0; j < l->rows; j++) {
			u16 ru = l->palette[l->nr_palette + j - start];
			u32 s;

			for (s = 0; s < k && l->palette[l->nr_palette + s] != ru; s++)
				;
			if (s == k) {
				if (k == 256)
					return -ERANGE;
				l->palette[l->nr_palette + k++] = ru;
			}
			l->slot[j] = (u8)s;
		}
		l->nr_palette += k;
	}
	if (!per_page)
		for (l->nr_palette = 0; l->nr_palette < nr_rules; l->nr_palette++)
			l->palette[l->nr_palette] = (u16)l->nr_palette;
	l->page[l->nr_pages].row = l->rows;
	l->page[l->nr_pages].palette = l->nr_palette;
	return 0;
}

int tb_build_pages(struct tb_blob *b, u64 base, const struct tb_row *rows,
		   u32 nr_rows, const struct uwprof_rule *rules, u32 nr_rules,
		   u32 shift, bool per_page)
{
	struct uwprof_table_hdr h = {
		.magic = UWPROF_TABLE_MAGIC,
		.version = UWPROF_TABLE_VERSION,
		.arch = UWPROF_ARCH_ID,
		.hdr_size = sizeof(h),
		.rule_size = sizeof(struct uwprof_rule),
		.nr_rules = nr_rules,
		.base = base + rows[0].pc,
	};
	u32 max_pages = ((rows[nr_rows - 1].pc - rows[0].pc) >> 8) + 2;
	struct tb_lay l = {
		.page = malloc(max_pages * sizeof(*l.page)),
		.off = malloc((nr_rows + max_pages) * sizeof(*l.off)),
		.slot = malloc(nr_rows + max_pages),
		.palette = malloc((nr_rows + max_pages + nr_rules) * sizeof(*l.palette)),
	};
	int err = -ENOMEM;
	u8 *p;

	memset(b, 0, sizeof(*b));
	per_page = per_page || nr_rules > 256;
	if (!l.page || !l.off || !l.slot || !l.palette)
		goto out;
	while (tb_lay(&l, rows, nr_rows, nr_rules, shift, per_page) == -ERANGE)
		shift--;
	err = -E2BIG;
	if (l.rows > UWPROF_TABLE_MAX_ROWS)
		goto out;
	h.nr_rows = l.rows;
	h.nr_pages = l.nr_pages;
	h.nr_palette = l.nr_palette;
	h.page_shift = shift;
	b->size = UWPROF_TABLE_SIZE(&h);
	err = -ENOMEM;
	b->data = aligned_alloc(8, (b->size + 15) & ~(size_t)7);
	if (!b->data)
		goto out;
	p = b->data;
	memset(p, 0, b->size);
	memcpy(p, &h, sizeof(h));
	memcpy(p + UWPROF_TABLE_PAGES_OFF(&h), l.page, (l.nr_pages + 1) * sizeof(*l.page));
	memcpy(p + UWPROF_TABLE_PC_OFF(&h), l.off, l.rows * sizeof(*l.off));
	memcpy(p + UWPROF_TABLE_SLOT_OFF(&h), l.slot, l.rows);
	memcpy(p + UWPROF_TABLE_PALETTE_OFF(&h), l.palette, l.nr_palette * sizeof(*l.palette));
	memcpy(p + UWPROF_TABLE_RULES_OFF(&h), rules, sizeof(*rules) * nr_rules);
	err = 0;
out:
	free(l.page);
	free(l.off);
	free(l.slot);
	free(l.palette);
	return err;
}

int tb_build(struct tb_blob *b, u64 base, const struct tb_row *rows, u32 nr_rows,
	     const struct uwprof_rule *rules, u32 nr_rules)
{
	return tb_build_pages(b, base, rows, nr_rows, rules, nr_rules,
			      UWPROF_TABLE_MAX_PAGE_SHIFT, false);
}

int tb_load(struct tb_blob *b)
{
	int err = uwprof_table_check(b->data, b->size);

	if (!err)
		uwprof_table_init(&b->table, b->data);
	return err;
}

u32 tb_page_of(const struct uwprof_table *t, u32 r)
{
	u32 lo = 0, hi = t->nr_pages - 1;

	/* The last page whose first row is at or before r. */
	while (lo < hi) {
		u32 mid = lo + (hi - lo + 1) / 2;

		if (t->page[mid].row <= r)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

u64 tb_row_addr(const struct uwprof_table *t, u32 r)
{
	return t->base + ((u64)tb_page_of(t, r) << t->page_shift) + t->pc[r];
}

const struct uwprof_rule *tb_row_rule(const struct uwprof_table *t, u32 r)
{
	return &t->rules[t->palette[t->page[tb_page_of(t, r)].palette + t->slot[r]]];
}

void tb_free(struct tb_blob *b)
{
	free(b->data);
	b->data = NULL;
}
