// SPDX-License-Identifier: GPL-2.0
/*
 * Table blob validation and lookup, on synthetic blobs: one corrupted blob
 * per check in uwprof_table_check() (each must be rejected with the right
 * errno), then lookups on random tables (page sizes, shared and per-page
 * palettes) compared with a plain binary search over the rows. Built once
 * per arch of the core (native and UWPROF_HOST_ARM64).
 */
#include <stdlib.h>

#include "testlib.h"

#if defined(UWPROF_ENV_X86_64)
#include "unwind_x86_64.h"
#define OTHER_ARCH	UWPROF_ARCH_ARM64
#elif defined(UWPROF_ENV_ARM64)
#include "unwind_arm64.h"
#define OTHER_ARCH	UWPROF_ARCH_X86_64
#endif

static const struct uwprof_rule base_rules[] = {
	{ .cfa_type = UWPROF_CFA_END },
	{ .cfa_type = UWPROF_CFA_SP, .cfa_off = 8, .fp_type = UWPROF_REG_SAME,
	  .ra_type = UWPROF_REG_AT_CFA, .ra_off = -8 },
	{ .cfa_type = UWPROF_CFA_FP, .cfa_off = 16, .fp_type = UWPROF_REG_AT_CFA,
	  .fp_off = -16, .ra_type = UWPROF_REG_AT_CFA, .ra_off = -8 },
};

/*
 * Three pages of 256 bytes, each with a palette of its own: rows 0, 4 and
 * 0x10 in page 0, 0x100 and 0x180 in page 1, and in page 2 the row it
 * starts with (0x200, rule 2, added by the builder) and END at 0x240. Seven
 * rows, so a byte of padding follows the slots; six palette entries, so
 * two bytes precede the rules.
 */
static const struct tb_row base_rows[] = {
	{ 0x0, 1 }, { 0x4, 2 }, { 0x10, 1 }, { 0x100, 1 }, { 0x180, 2 },
	{ 0x240, 0 },
};

#define NR(a)	(sizeof(a) / sizeof((a)[0]))

struct fixture {
	struct tb_blob b;
	struct uwprof_table_hdr *h;
	struct uwprof_table_page *page;
	u16 *pc;
	u8 *slot;
	u16 *palette;
	struct uwprof_rule *rules;
};

static void fixture_make(struct fixture *f)
{
	u8 *p;

	if (tb_build_pages(&f->b, 0x400000, base_rows, NR(base_rows), base_rules,
			   NR(base_rules), 8, true)) {
		perror("tb_build");
		exit(2);
	}
	p = f->b.data;
	f->h = f->b.data;
	f->page = (struct uwprof_table_page *)(p + UWPROF_TABLE_PAGES_OFF(f->h));
	f->pc = (u16 *)(p + UWPROF_TABLE_PC_OFF(f->h));
	f->slot = p + UWPROF_TABLE_SLOT_OFF(f->h);
	f->palette = (u16 *)(p + UWPROF_TABLE_PALETTE_OFF(f->h));
	f->rules = (struct uwprof_rule *)(p + UWPROF_TABLE_RULES_OFF(f->h));
	if (f->h->nr_pages != 3 || f->h->nr_rows != 7 || f->h->nr_palette != 6 ||
	    f->h->page_shift != 8) {
		fprintf(stderr, "fixture: %u pages, %u rows, %u palette entries\n",
			f->h->nr_pages, f->h->nr_rows, f->h->nr_palette);
		exit(2);
	}
}

static int check(struct fixture *f)
{
	return uwprof_table_check(f->b.data, f->b.size);
}

/* Each mutation gets a fresh valid blob. */
typedef void (*mutate_fn)(struct fixture *f);

#define MUT(name, body) static void name(struct fixture *f) { body; }

MUT(m_magic, f->h->magic ^= 1)
MUT(m_version, f->h->version = UWPROF_TABLE_VERSION + 1)
MUT(m_version_old, f->h->version = UWPROF_TABLE_VERSION - 1)
/* What a tool of format 1 wrote: 16-byte rules. */
MUT(m_format1, f->h->version = 1; f->h->rule_size = 16)
MUT(m_arch, f->h->arch = OTHER_ARCH)
MUT(m_arch_zero, f->h->arch = 0)
MUT(m_hdr_size, f->h->hdr_size += 8)
MUT(m_rule_size, f->h->rule_size -= 4)
MUT(m_rows_big, f->h->nr_rows = UWPROF_TABLE_MAX_ROWS + 1)
MUT(m_rules_big, f->h->nr_rules = UWPROF_TABLE_MAX_RULES + 1)
MUT(m_rows_huge, f->h->nr_rows = 0xffffffff)
MUT(m_rows_zero, f->h->nr_rows = 0)
MUT(m_rules_zero, f->h->nr_rules = 0)
MUT(m_size_short, f->b.size -= 8)
MUT(m_size_long, f->b.size += 8)
MUT(m_size_tiny, f->b.size = sizeof(struct uwprof_table_hdr) - 1)
MUT(m_rules_more, f->h->nr_rules += 1)
MUT(m_bid_size, f->h->build_id_size = 21)
MUT(m_bid_tail, f->h->build_id_size = 4; f->h->build_id[4] = 1)
MUT(m_pad, ((u8 *)f->b.data)[UWPROF_TABLE_RULES_OFF(f->h) - 1] = 1)
MUT(m_pad_slot, ((u8 *)f->b.data)[UWPROF_TABLE_PALETTE_OFF(f->h) - 1] = 1)
MUT(m_reserved, f->h->__reserved = 1)
MUT(m_pages_zero, f->h->nr_pages = 0)
MUT(m_pages_over, f->h->nr_pages = f->h->nr_rows + 1)
MUT(m_pages_more, f->h->nr_pages += 1)
MUT(m_palette_zero, f->h->nr_palette = 0)
MUT(m_palette_big, f->h->nr_palette = UWPROF_TABLE_MAX_PALETTE + 1)
MUT(m_palette_more, f->h->nr_palette += 1)
MUT(m_shift_small, f->h->page_shift = UWPROF_TABLE_MIN_PAGE_SHIFT - 1)
MUT(m_shift_big, f->h->page_shift = UWPROF_TABLE_MAX_PAGE_SHIFT + 1)
MUT(m_page0, f->page[0].row = 1)
MUT(m_page_empty, f->page[1].row = f->page[2].row)
MUT(m_page_beyond, f->page[1].row = f->h->nr_rows + 1)
MUT(m_page_down, f->page[2].row = f->page[1].row - 1)
MUT(m_close_row, f->page[3].row = f->h->nr_rows - 1)
MUT(m_close_pal, f->page[3].palette = f->h->nr_palette - 1)
MUT(m_page_pal, f->page[1].palette = f->h->nr_palette + 1)
MUT(m_first_off, f->pc[f->page[1].row] = 4)
/* Offsets past the page: the last row's would take span past the pages. */
MUT(m_off_page, f->pc[4] = 1U << 8)
MUT(m_off_last, f->pc[6] = 0xffff)
MUT(m_slot, f->slot[6] = (u8)(f->h->nr_palette - f->page[2].palette))
MUT(m_slot_max, f->slot[0] = 0xff)
MUT(m_palette, f->palette[0] = NR(base_rules))
MUT(m_palette_max, f->palette[5] = 0xffff)
MUT(m_res0, f->rules[1].saved_reg = 3)
MUT(m_res1, f->rules[2].saved_off = INT16_MIN)
MUT(m_saved_type, f->rules[1].saved_type = UWPROF_REG_VAL_CFA;
    f->rules[1].flags = UWPROF_RULE_REGS)
MUT(m_saved_noregs, f->rules[1].saved_type = UWPROF_REG_AT_CFA)
MUT(m_saved_reg, f->rules[1].saved_type = UWPROF_REG_AT_CFA;
    f->rules[1].flags = UWPROF_RULE_REGS;
    f->rules[1].saved_reg = UWPROF_ARCH_NR_GPR)
MUT(m_end_saved, f->rules[0].saved_type = UWPROF_REG_AT_CFA)
MUT(m_flag_unknown, f->rules[1].flags = 1U << 7)
MUT(m_end_fp, f->rules[0].fp_type = UWPROF_REG_SAME + 1)
MUT(m_end_ra, f->rules[0].ra_type = UWPROF_REG_AT_CFA)
MUT(m_end_flags, f->rules[0].flags = UWPROF_RULE_SIGNAL)
MUT(m_end_off, f->rules[0].cfa_off = 8)
MUT(m_end_fpoff, f->rules[0].fp_off = 8)
MUT(m_end_raoff, f->rules[0].ra_off = 8)
MUT(m_end_arg, f->rules[0].cfa_arg = 1)
MUT(m_sp_arg, f->rules[1].cfa_arg = 3)
MUT(m_plt_arg2, f->rules[2].cfa_arg = 1)
MUT(m_plt_arg, f->rules[1].cfa_type = UWPROF_CFA_PLT; f->rules[1].cfa_arg = 16)
MUT(m_unsup_off, f->rules[1].cfa_type = UWPROF_CFA_UNSUPPORTED)
MUT(m_unsup_arg, f->rules[1].cfa_type = UWPROF_CFA_UNSUPPORTED;
    f->rules[1].cfa_off = 0; f->rules[1].cfa_arg = 2)
MUT(m_cfa_type, f->rules[1].cfa_type = UWPROF_CFA_REG + 1)
MUT(m_cfa_reg, f->rules[1].cfa_type = UWPROF_CFA_REG; f->rules[1].cfa_arg = 32)
MUT(m_cfa_reg_big, f->rules[1].cfa_type = UWPROF_CFA_REG;
    f->rules[1].cfa_arg = 1U << 8)
MUT(m_plt_arg_big, f->rules[1].cfa_type = UWPROF_CFA_PLT;
    f->rules[1].cfa_arg = 1U << 16 | 3)
MUT(m_inreg_min, f->rules[1].fp_type = UWPROF_REG_IN_REG;
    f->rules[1].fp_off = INT32_MIN)
MUT(m_fp_type, f->rules[1].fp_type = UWPROF_REG_UNSUPPORTED + 1)
MUT(m_ra_type, f->rules[1].ra_type = 0xff)
MUT(m_same_off, f->rules[1].fp_off = 8)
MUT(m_undef_off, f->rules[1].ra_type = UWPROF_REG_UNDEF)
MUT(m_unsupreg_off, f->rules[1].fp_type = UWPROF_REG_UNSUPPORTED; f->rules[1].fp_off = 1)
MUT(m_inreg_neg, f->rules[1].fp_type = UWPROF_REG_IN_REG; f->rules[1].fp_off = -1)
MUT(m_ra_inreg_neg, f->rules[1].ra_type = UWPROF_REG_IN_REG; f->rules[1].ra_off = -2)
MUT(m_pc_equal, f->pc[1] = f->pc[0])
MUT(m_pc_down, f->pc[2] = 2)
MUT(m_pc_equal2, f->pc[6] = 0)
MUT(m_last_not_end, f->slot[6] = 0)
MUT(m_base_wrap, f->h->base = ~0ULL - 0x10)

#if UWPROF_ARCH_HAS_PLT
MUT(m_arch_feature, f->rules[1].flags = UWPROF_RULE_PAC)
#define ARCH_FEATURE_DESC "PAC flag on x86_64"
#else
MUT(m_arch_feature, f->rules[1].cfa_type = UWPROF_CFA_PLT)
#define ARCH_FEATURE_DESC "PLT rule on arm64"
#endif

static const struct {
	mutate_fn fn;
	int err;
	const char *desc;
} cases[] = {
	{ m_magic, -EINVAL, "bad magic" },
	{ m_version, -EINVAL, "unknown version" },
	{ m_version_old, -EINVAL, "previous format version" },
	{ m_format1, -EINVAL, "format 1 header (16-byte rules)" },
	{ m_arch, -EINVAL, "other arch" },
	{ m_arch_zero, -EINVAL, "arch zero" },
	{ m_hdr_size, -EINVAL, "hdr_size differs" },
	{ m_rule_size, -EINVAL, "rule_size differs" },
	{ m_rows_big, -E2BIG, "nr_rows above UWPROF_TABLE_MAX_ROWS" },
	{ m_rules_big, -E2BIG, "nr_rules above UWPROF_TABLE_MAX_RULES" },
	{ m_rows_huge, -E2BIG, "nr_rows 0xffffffff (size math must not wrap)" },
	{ m_rows_zero, -EINVAL, "nr_rows zero" },
	{ m_rules_zero, -EINVAL, "nr_rules zero" },
	{ m_size_short, -EINVAL, "blob 8 bytes short" },
	{ m_size_long, -EINVAL, "blob 8 bytes long" },
	{ m_size_tiny, -EINVAL, "blob smaller than the header" },
	{ m_rules_more, -EINVAL, "nr_rules larger than the blob holds" },
	{ m_bid_size, -EINVAL, "build_id_size 21" },
	{ m_bid_tail, -EINVAL, "build-id padding not zero" },
	{ m_pad, -EINVAL, "padding before rules not zero" },
	{ m_pad_slot, -EINVAL, "padding after the slots not zero" },
	{ m_reserved, -EINVAL, "reserved header field set" },
	{ m_pages_zero, -EINVAL, "nr_pages zero" },
	{ m_pages_over, -EINVAL, "more pages than rows" },
	{ m_pages_more, -EINVAL, "nr_pages larger than the blob holds" },
	{ m_palette_zero, -EINVAL, "nr_palette zero" },
	{ m_palette_big, -E2BIG, "nr_palette above UWPROF_TABLE_MAX_PALETTE" },
	{ m_palette_more, -EINVAL, "nr_palette larger than the blob holds" },
	{ m_shift_small, -EINVAL, "page_shift below the minimum" },
	{ m_shift_big, -EINVAL, "page_shift above 16" },
	{ m_page0, -EINVAL, "page 0 not starting at row 0" },
	{ m_page_empty, -EINVAL, "a page without rows" },
	{ m_page_beyond, -EINVAL, "a page starting past the last row" },
	{ m_page_down, -EINVAL, "a page starting before the one before it" },
	{ m_close_row, -EINVAL, "closing page entry not at nr_rows" },
	{ m_close_pal, -EINVAL, "closing page entry not at nr_palette" },
	{ m_page_pal, -EINVAL, "a page's palette past the palettes" },
	{ m_first_off, -EINVAL, "a page's first row not at offset 0" },
	{ m_off_page, -EINVAL, "an offset past the end of its page" },
	{ m_off_last, -EINVAL, "the last row's offset past the end of its page" },
	{ m_slot, -EINVAL, "a slot past the palettes" },
	{ m_slot_max, -EINVAL, "slot 255" },
	{ m_palette, -EINVAL, "palette entry == nr_rules" },
	{ m_palette_max, -EINVAL, "palette entry 0xffff" },
	{ m_res0, -EINVAL, "saved_reg set, no saved register" },
	{ m_res1, -EINVAL, "saved_off set, no saved register" },
	{ m_saved_type, -EINVAL, "saved register with a type other than AT_CFA" },
	{ m_saved_noregs, -EINVAL, "saved register without UWPROF_RULE_REGS" },
	{ m_saved_reg, -EINVAL, "saved register number out of range" },
	{ m_end_saved, -EINVAL, "END rule with a saved register" },
	{ m_flag_unknown, -EINVAL, "unknown rule flag" },
	{ m_arch_feature, -EINVAL, ARCH_FEATURE_DESC },
	{ m_end_fp, -EINVAL, "END rule with fp rule" },
	{ m_end_ra, -EINVAL, "END rule with ra rule" },
	{ m_end_flags, -EINVAL, "END rule with flags" },
	{ m_end_off, -EINVAL, "END rule with cfa_off" },
	{ m_end_fpoff, -EINVAL, "END rule with fp_off" },
	{ m_end_raoff, -EINVAL, "END rule with ra_off" },
	{ m_end_arg, -EINVAL, "END rule with cfa_arg" },
	{ m_sp_arg, -EINVAL, "CFA=sp with cfa_arg" },
	{ m_plt_arg, -EINVAL, "PLT threshold above 15 (or PLT on arm64)" },
	{ m_plt_arg2, -EINVAL, "FP rule with a PLT threshold" },
	{ m_unsup_off, -EINVAL, "UNSUPPORTED CFA with an offset" },
	{ m_unsup_arg, -EINVAL, "UNSUPPORTED CFA with cfa_arg" },
	{ m_cfa_type, -EINVAL, "unknown CFA type" },
	{ m_cfa_reg, -EINVAL, "CFA from register 32" },
	{ m_cfa_reg_big, -EINVAL, "CFA from register 256 (not cut to 8 bits)" },
	{ m_plt_arg_big, -EINVAL, "PLT threshold 0x10003 (not cut to 16 bits)" },
	{ m_inreg_min, -EINVAL, "IN_REG register INT32_MIN" },
	{ m_fp_type, -EINVAL, "unknown fp rule type" },
	{ m_ra_type, -EINVAL, "unknown ra rule type" },
	{ m_same_off, -EINVAL, "SAME rule with an offset" },
	{ m_undef_off, -EINVAL, "UNDEF rule with an offset" },
	{ m_unsupreg_off, -EINVAL, "UNSUPPORTED register rule with an offset" },
	{ m_inreg_neg, -EINVAL, "IN_REG negative register" },
	{ m_ra_inreg_neg, -EINVAL, "ra IN_REG negative register" },
	{ m_pc_equal, -EINVAL, "pc equal to the previous row's" },
	{ m_pc_down, -EINVAL, "pc below the previous row's" },
	{ m_pc_equal2, -EINVAL, "a later row at its page's offset 0" },
	{ m_last_not_end, -EINVAL, "last row not END" },
	{ m_base_wrap, -EINVAL, "base + last pc wraps" },
};

static void test_corrupt(struct tap *t)
{
	struct fixture f;
	unsigned int i;
	int err;

	fixture_make(&f);
	err = uwprof_table_check(f.b.data, f.b.size);
	tap_ok(t, err == 0, "valid blob accepted (err %d)", err);
	tap_ok(t, uwprof_table_check(NULL, f.b.size) == -EINVAL,
	       "NULL blob rejected");
	tb_free(&f.b);

	/* Misaligned: the same bytes one byte further. */
	fixture_make(&f);
	{
		u8 *raw = malloc(f.b.size + 8);

		memcpy(raw + 1, f.b.data, f.b.size);
		tap_ok(t, uwprof_table_check(raw + 1, f.b.size) == -EINVAL,
		       "misaligned blob rejected");
		free(raw);
	}
	tb_free(&f.b);

	for (i = 0; i < NR(cases); i++) {
		fixture_make(&f);
		cases[i].fn(&f);
		err = check(&f);
		tap_ok(t, err == cases[i].err, "corrupt: %s -> %d (want %d)",
		       cases[i].desc, err, cases[i].err);
		tb_free(&f.b);
	}
}

/* Accepted variants: the check must not be stricter than the format. */
static void test_accept(struct tap *t)
{
	struct fixture f;
	int err;

	fixture_make(&f);
	f.h->build_id_size = 20;
	memset(f.h->build_id, 0xab, 20);
	f.rules[1].fp_type = UWPROF_REG_IN_REG;
	f.rules[1].fp_off = 6;
	f.rules[2].ra_type = UWPROF_REG_UNDEF;
	f.rules[2].ra_off = 0;
	f.rules[2].flags = UWPROF_RULE_SIGNAL;
	err = check(&f);
	tap_ok(t, err == 0, "full build-id, IN_REG fp, UNDEF ra, SIGNAL flag accepted (%d)", err);
	tb_free(&f.b);

	fixture_make(&f);
	f.rules[1].cfa_type = UWPROF_CFA_UNSUPPORTED;
	f.rules[1].cfa_off = 0;
	f.rules[1].ra_type = UWPROF_REG_UNSUPPORTED;
	f.rules[1].ra_off = 0;
	f.rules[2].fp_type = UWPROF_REG_VAL_CFA;
	f.rules[2].fp_off = -3;
	f.rules[2].ra_type = UWPROF_REG_IN_REG;
	f.rules[2].ra_off = 40;
	f.rules[2].cfa_off = -16;
	err = check(&f);
	tap_ok(t, err == 0,
	       "UNSUPPORTED CFA and ra, VAL_CFA fp, ra in register 40, CFA fp-16 accepted (%d)",
	       err);
	tb_free(&f.b);

	fixture_make(&f);
#if UWPROF_ARCH_HAS_PLT
	f.rules[1].cfa_type = UWPROF_CFA_PLT;
	f.rules[1].cfa_arg = 11;
	err = check(&f);
	tap_ok(t, err == 0, "x86_64 PLT rule accepted (%d)", err);
#else
	f.rules[1].flags = UWPROF_RULE_PAC;
	f.rules[1].ra_type = UWPROF_REG_IN_REG;
	f.rules[1].ra_off = UWPROF_ARCH_LR_REGNO;
	err = check(&f);
	tap_ok(t, err == 0, "arm64 PAC flag and ra in x30 accepted (%d)", err);
#endif
	tb_free(&f.b);

	/* Offsets and addends across the whole 32-bit range. */
	fixture_make(&f);
	f.rules[1].fp_type = UWPROF_REG_AT_CFA;
	f.rules[1].fp_off = INT32_MIN;
	f.rules[1].ra_off = INT32_MIN + 8;
	f.rules[1].cfa_off = INT32_MAX;
	f.rules[2].cfa_type = UWPROF_CFA_DEREF_SP;
	f.rules[2].cfa_arg = UINT32_MAX;
	f.rules[2].cfa_off = INT32_MIN;
	f.rules[2].fp_type = UWPROF_REG_VAL_CFA;
	f.rules[2].fp_off = INT32_MAX;
	f.rules[2].ra_off = -70000;
	err = check(&f);
	tap_ok(t, err == 0,
	       "fp/ra offsets INT32_MIN..INT32_MAX, DEREF addend UINT32_MAX accepted (%d)",
	       err);
	tb_free(&f.b);

	/*
	 * Pages sharing one palette, and a slot reaching past its page's own
	 * palette into the next one's: every index stays inside palette[].
	 */
	fixture_make(&f);
	f.page[1].palette = 0;
	f.slot[f.page[2].row - 1] = 2;
	err = check(&f);
	tap_ok(t, err == 0, "pages sharing a palette, a slot into the next page's accepted (%d)",
	       err);
	tb_free(&f.b);

	/* A single END row: valid, covers nothing. */
	{
		struct tb_row row = { 0x10, 0 };
		struct tb_blob b;

		tb_build(&b, 0x1000, &row, 1, base_rules, 1);
		err = tb_load(&b);
		tap_ok(t, err == 0 && !uwprof_table_lookup(&b.table, 0x1000) &&
		       !uwprof_table_lookup(&b.table, 0x1010),
		       "single END row accepted and covers nothing (%d)", err);
		tb_free(&b);
	}
}

static u64 rnd(u64 *s)
{
	/* xorshift64: reproducible, seed printed. */
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/*
 * Rule index for vaddr by a plain binary search over all rows (no index),
 * -1 if none: an independent reference for the indexed lookup.
 */
static long reference(const struct tb_row *rows, u32 n, u64 base, u64 vaddr)
{
	u32 lo = 0, hi = n;	/* first row with pc > off is in [lo, hi] */
	u64 off;

	if (vaddr < base || vaddr - base < rows[0].pc || vaddr - base >= rows[n - 1].pc)
		return -1;
	off = vaddr - base;
	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if (rows[mid].pc > off)
			hi = mid;
		else
			lo = mid + 1;
	}
	return rows[lo - 1].rule;
}

static long lookup(const struct uwprof_table *t, u64 vaddr)
{
	const struct uwprof_rule *r = uwprof_table_lookup(t, vaddr);

	return r ? r - t->rules : -1;
}

/*
 * Tables of round r: 50 rows or up to 200000, dense or sparse, pages of
 * 256 bytes to 64 KiB, one palette or one per page, up to 1000 rules
 * (more than a palette slot can name: per-page palettes, smaller pages).
 */
static void lookup_shape(u32 round, u64 *seed, u32 *n, u32 *nr_rules, u32 *gap_max,
			 u32 *shift, bool *per_page)
{
	*n = 1 + (u32)(rnd(seed) % (round < 8 ? 50 : 200000));
	*nr_rules = 1 + (u32)(rnd(seed) % (round % 4 == 3 ? 1000 : 63));
	*gap_max = 1 + (u32)(rnd(seed) % (round & 1 ? 4 : 4000));
	*shift = UWPROF_TABLE_MIN_PAGE_SHIFT +
		 (u32)(rnd(seed) % (UWPROF_TABLE_MAX_PAGE_SHIFT - UWPROF_TABLE_MIN_PAGE_SHIFT + 1));
	*per_page = round % 4 >= 2;
}

static void test_lookup(struct tap *t, u64 seed)
{
	static struct uwprof_rule rules[1000];
	static struct tb_row rows[200000];
	unsigned int round;

	for (round = 0; round < 16; round++) {
		u32 n, nr_rules, gap_max, shift, i, bad = 0, probes = 0;
		u64 base = (rnd(&seed) & 0xfffffffff000ULL);
		struct tb_blob b;
		u32 pc = (u32)(rnd(&seed) % 64);
		bool per_page;
		int err;

		lookup_shape(round, &seed, &n, &nr_rules, &gap_max, &shift, &per_page);
		memset(rules, 0, sizeof(rules));
		for (i = 1; i < nr_rules; i++) {
			rules[i].cfa_type = UWPROF_CFA_SP;
			rules[i].cfa_off = 8 * i;
			rules[i].ra_type = UWPROF_REG_AT_CFA;
			rules[i].ra_off = -8;
		}
		for (i = 0; i < n; i++) {
			rows[i].pc = pc;
			rows[i].rule = (u16)(rnd(&seed) % nr_rules);
			pc += 1 + (u32)(rnd(&seed) % gap_max);
		}
		rows[n - 1].rule = 0;
		tb_build_pages(&b, base, rows, n, rules, nr_rules, shift, per_page);
		err = tb_load(&b);
		if (!tap_ok(t, err == 0, "random table %u: %u rows, %u rules, pages of %u bytes%s loads (%d)",
			    round, n, nr_rules, 1U << b.table.page_shift,
			    per_page ? ", a palette each" : "", err)) {
			tb_free(&b);
			continue;
		}
		/* Every row boundary, its neighbours, and random addresses. */
		for (i = 0; i < n; i++) {
			u64 a = base + rows[i].pc;
			int d;

			for (d = -1; d <= 1; d++) {
				probes++;
				if (lookup(&b.table, a + d) != reference(rows, n, base, a + d))
					bad++;
			}
		}
		/* Page starts: the rows the builder added there. */
		for (i = 0; i < b.table.nr_pages; i++) {
			u64 a = b.table.base + ((u64)i << b.table.page_shift);

			probes++;
			if (lookup(&b.table, a) != reference(rows, n, base, a))
				bad++;
		}
		for (i = 0; i < 100000; i++) {
			u64 a = base - 16 + rnd(&seed) % ((u64)pc + 32);

			probes++;
			if (lookup(&b.table, a) != reference(rows, n, base, a))
				bad++;
		}
		probes++;
		if (uwprof_table_lookup(&b.table, 0) || uwprof_table_lookup(&b.table, ~0ULL))
			bad++;
		tap_ok(t, bad == 0, "random table %u: %u lookups agree with a plain binary search (%u differ)",
		       round, probes, bad);
		tb_free(&b);
	}
}

int main(int argc, char **argv)
{
	struct tap t = { 0 };
	u64 seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 0x9e3779b97f4a7c15ULL;

	tap_diag("table tests, arch %s, seed 0x%llx",
		 UWPROF_ARCH_ID == UWPROF_ARCH_X86_64 ? "x86_64" : "arm64",
		 (unsigned long long)seed);
	test_corrupt(&t);
	test_accept(&t);
	test_lookup(&t, seed);
	return tap_done(&t);
}
