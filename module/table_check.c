// SPDX-License-Identifier: GPL-2.0
/*
 * Table blobs: complete validation of the uapi layout, so that a lookup
 * (unwind.c) can follow every index without checking it again. Shared by
 * the module and the host tests.
 *
 * Process context only (the TABLE_ADD ioctl), on a blob already copied into
 * kernel memory and not yet published. Linear in the blob's size.
 */
#include "unwind.h"

#if defined(UWPROF_ENV_X86_64)
#include "unwind_x86_64.h"
#elif defined(UWPROF_ENV_ARM64)
#include "unwind_arm64.h"
#endif

/*
 * Offsets must be zero where a rule has none. Any AT_CFA / VAL_CFA offset
 * and any register number are well formed: rules the walk cannot follow
 * (an ra copied into a register other than arm64's x30, an fp in a vector
 * register) stop or degrade that one frame at run time rather than
 * rejecting the object's whole table here.
 */
static bool reg_rule_ok(u8 type, s32 off)
{
	switch (type) {
	case UWPROF_REG_SAME:
	case UWPROF_REG_UNDEF:
	case UWPROF_REG_UNSUPPORTED:
		return off == 0;
	case UWPROF_REG_AT_CFA:
	case UWPROF_REG_VAL_CFA:
		return true;
	case UWPROF_REG_IN_REG:
		return off >= 0;
	default:
		return false;
	}
}

/*
 * The saved register: none (all zero), or a general register the core can
 * hold (UWPROF_ARCH_NR_GPR) saved at CFA + saved_off, in a frame marked as
 * keeping a register elsewhere.
 */
static bool saved_ok(const struct uwprof_rule *r)
{
	if (r->saved_type == UWPROF_REG_SAME)
		return !r->saved_reg && !r->saved_off;
	return r->saved_type == UWPROF_REG_AT_CFA &&
	       r->saved_reg < UWPROF_ARCH_NR_GPR &&
	       (r->flags & UWPROF_RULE_REGS);
}

static bool rule_ok(const struct uwprof_rule *r)
{
	u8 known = UWPROF_RULE_SIGNAL | UWPROF_RULE_REGS |
		   (UWPROF_ARCH_HAS_PAC ? UWPROF_RULE_PAC : 0);

	if (!saved_ok(r))
		return false;
	if (r->flags & ~known)
		return false;

	switch (r->cfa_type) {
	case UWPROF_CFA_END:
		/* One canonical form, so "gap" can never carry stray state. */
		return !r->fp_type && !r->ra_type && !r->flags && !r->cfa_off &&
		       !r->fp_off && !r->ra_off && !r->cfa_arg &&
		       !r->saved_type;
	case UWPROF_CFA_SP:
	case UWPROF_CFA_FP:
		/*
		 * Any offset: real objects carry odd ones (glibc's arm64
		 * assembly has CFA = sp - 16); the walk's sp checks judge
		 * them per frame.
		 */
		if (r->cfa_arg)
			return false;
		break;
	case UWPROF_CFA_PLT:
		if (!UWPROF_ARCH_HAS_PLT || r->cfa_arg > 15)
			return false;
		break;
	case UWPROF_CFA_UNSUPPORTED:
		if (r->cfa_off || r->cfa_arg)
			return false;
		break;
	case UWPROF_CFA_DEREF_SP:
	case UWPROF_CFA_DEREF_FP:
		break;
	case UWPROF_CFA_REG:
		if (r->cfa_arg > 31)
			return false;
		break;
	default:
		return false;
	}
	return reg_rule_ok(r->fp_type, r->fp_off) &&
	       reg_rule_ok(r->ra_type, r->ra_off);
}

/* Header fields, sizes and padding: everything before the rows. */
static int hdr_check(const struct uwprof_table_hdr *h, u64 size)
{
	const u8 *bytes = (const u8 *)h;
	u64 off;
	u32 i;

	if (h->magic != UWPROF_TABLE_MAGIC ||
	    h->version != UWPROF_TABLE_VERSION ||
	    h->arch != UWPROF_ARCH_ID ||
	    h->hdr_size != sizeof(*h) ||
	    h->rule_size != sizeof(struct uwprof_rule) || h->__reserved)
		return -EINVAL;
	if (h->nr_rows > UWPROF_TABLE_MAX_ROWS ||
	    h->nr_rules > UWPROF_TABLE_MAX_RULES ||
	    h->nr_palette > UWPROF_TABLE_MAX_PALETTE)
		return -E2BIG;
	/* Every page has a row. */
	if (!h->nr_rows || !h->nr_rules || !h->nr_palette || !h->nr_pages ||
	    h->nr_pages > h->nr_rows)
		return -EINVAL;
	if (h->page_shift < UWPROF_TABLE_MIN_PAGE_SHIFT ||
	    h->page_shift > UWPROF_TABLE_MAX_PAGE_SHIFT)
		return -EINVAL;
	/* Counts are bounded above, so this u64 arithmetic cannot wrap. */
	if (size != UWPROF_TABLE_SIZE(h))
		return -EINVAL;
	if (h->build_id_size > sizeof(h->build_id))
		return -EINVAL;
	for (i = h->build_id_size; i < sizeof(h->build_id); i++)
		if (h->build_id[i])
			return -EINVAL;
	for (off = UWPROF_TABLE_SLOT_OFF(h) + h->nr_rows;
	     off < UWPROF_TABLE_PALETTE_OFF(h); off++)
		if (bytes[off])
			return -EINVAL;
	for (off = UWPROF_TABLE_PALETTE_OFF(h) + 2ULL * h->nr_palette;
	     off < UWPROF_TABLE_RULES_OFF(h); off++)
		if (bytes[off])
			return -EINVAL;
	return 0;
}

/*
 * The rows of every page: the first at offset 0, offsets strictly
 * increasing and inside the page (the last row's bounds span, and so the
 * pages a lookup reaches), slots inside the palette; pages each start a
 * row later than the one before, and the last is closed by { nr_rows,
 * nr_palette }.
 */
static int pages_check(const struct uwprof_table *t, u32 nr_palette)
{
	const struct uwprof_table_page *pg = t->page;
	u32 p, i;

	if (pg[0].row || pg[t->nr_pages].row != t->nr_rows ||
	    pg[t->nr_pages].palette != nr_palette)
		return -EINVAL;
	for (p = 0; p < t->nr_pages; p++) {
		u32 lo = pg[p].row, hi = pg[p + 1].row;

		if (hi <= lo || hi > t->nr_rows || t->pc[lo] ||
		    pg[p].palette > nr_palette)
			return -EINVAL;
		for (i = lo; i < hi; i++) {
			if (i > lo && t->pc[i] <= t->pc[i - 1])
				return -EINVAL;
			if (t->pc[i] >> t->page_shift)
				return -EINVAL;
			if (t->slot[i] >= nr_palette - pg[p].palette)
				return -EINVAL;
		}
	}
	return 0;
}

int uwprof_table_check(const void *blob, u64 size)
{
	const struct uwprof_table_hdr *h = blob;
	struct uwprof_table t;
	u32 i;
	int ret;

	if (!blob || ((unsigned long)blob & 7) || size < sizeof(*h))
		return -EINVAL;
	ret = hdr_check(h, size);
	if (ret)
		return ret;
	uwprof_table_init(&t, blob);

	for (i = 0; i < t.nr_rules; i++)
		if (!rule_ok(&t.rules[i]))
			return -EINVAL;
	for (i = 0; i < h->nr_palette; i++)
		if (t.palette[i] >= t.nr_rules)
			return -EINVAL;
	ret = pages_check(&t, h->nr_palette);
	if (ret)
		return ret;
	/* The last row of the last page. */
	if (t.rules[t.palette[t.page[t.nr_pages - 1].palette +
			      t.slot[t.nr_rows - 1]]].cfa_type != UWPROF_CFA_END)
		return -EINVAL;
	if (h->base + t.span < h->base)
		return -EINVAL;
	return 0;
}

void uwprof_table_init(struct uwprof_table *t, const void *blob)
{
	const struct uwprof_table_hdr *h = blob;
	const u8 *bytes = blob;
	u32 i;

	t->hdr = h;
	t->page = (const struct uwprof_table_page *)(bytes + UWPROF_TABLE_PAGES_OFF(h));
	t->pc = (const u16 *)(bytes + UWPROF_TABLE_PC_OFF(h));
	t->slot = bytes + UWPROF_TABLE_SLOT_OFF(h);
	t->palette = (const u16 *)(bytes + UWPROF_TABLE_PALETTE_OFF(h));
	t->rules = (const struct uwprof_rule *)(bytes + UWPROF_TABLE_RULES_OFF(h));
	t->base = h->base;
	t->page_shift = h->page_shift;
	t->page_mask = (1U << h->page_shift) - 1;
	t->nr_rows = h->nr_rows;
	t->nr_rules = h->nr_rules;
	t->nr_pages = h->nr_pages;
	t->span = ((u64)(t->nr_pages - 1) << t->page_shift) + t->pc[t->nr_rows - 1];
	t->direct = h->nr_palette == h->nr_rules;
	for (i = 0; t->direct && i < h->nr_palette; i++)
		t->direct = t->palette[i] == i;
	for (i = 0; t->direct && i < t->nr_pages; i++)
		t->direct = !t->page[i].palette;
}
