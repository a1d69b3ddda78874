// SPDX-License-Identifier: GPL-2.0
/*
 * Table blobs: complete validation of the uapi layout and the build of the
 * coarse lookup index that uwprof_table_lookup() (unwind.c) searches.
 * Shared by the module and the host tests.
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
 * Aim for about this many rows per index slot: the index then costs 2 bytes
 * per row (the blob 6) and leaves a search of one or two probes. Measured
 * with 'make -C tests/unwind bench': 4 rows per slot 10.0 ns/frame, 2 rows
 * 9.5, 1 row 9.0 (the walk is bound by its chain of dependent loads).
 */
#define UWPROF_IDX_ROWS_PER_SLOT	2
#define UWPROF_IDX_MIN_SHIFT		4

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

/* Smallest shift whose index stays within the rows-per-slot budget. */
static u32 idx_shift_for(u64 span, u32 nr_rows)
{
	u64 max_slots = nr_rows / UWPROF_IDX_ROWS_PER_SLOT + 1;
	u32 shift = UWPROF_IDX_MIN_SHIFT;

	while ((span >> shift) + 1 > max_slots)
		shift++;
	return shift;
}

int uwprof_table_check(const void *blob, u64 size, u64 *idx_bytes)
{
	const struct uwprof_table_hdr *h = blob;
	const struct uwprof_rule *rules;
	const u8 *bytes = blob;
	const u16 *ri;
	const u32 *pc;
	u64 off, end, span;
	u32 i;

	if (!blob || ((unsigned long)blob & 7) || size < sizeof(*h))
		return -EINVAL;
	if (h->magic != UWPROF_TABLE_MAGIC ||
	    h->version != UWPROF_TABLE_VERSION ||
	    h->arch != UWPROF_ARCH_ID ||
	    h->hdr_size != sizeof(*h) ||
	    h->rule_size != sizeof(struct uwprof_rule))
		return -EINVAL;
	if (h->nr_rows > UWPROF_TABLE_MAX_ROWS ||
	    h->nr_rules > UWPROF_TABLE_MAX_RULES)
		return -E2BIG;
	if (!h->nr_rows || !h->nr_rules)
		return -EINVAL;
	/* Counts are bounded above, so this u64 arithmetic cannot wrap. */
	if (size != UWPROF_TABLE_SIZE(h))
		return -EINVAL;
	if (h->build_id_size > sizeof(h->build_id))
		return -EINVAL;
	for (i = h->build_id_size; i < sizeof(h->build_id); i++)
		if (h->build_id[i])
			return -EINVAL;

	pc = (const u32 *)(bytes + UWPROF_TABLE_ROWS_OFF(h));
	ri = (const u16 *)(bytes + UWPROF_TABLE_IDX_OFF(h));
	rules = (const struct uwprof_rule *)(bytes + UWPROF_TABLE_RULES_OFF(h));

	for (off = UWPROF_TABLE_IDX_OFF(h) + 2ULL * h->nr_rows;
	     off < UWPROF_TABLE_RULES_OFF(h); off++)
		if (bytes[off])
			return -EINVAL;

	for (i = 0; i < h->nr_rules; i++)
		if (!rule_ok(&rules[i]))
			return -EINVAL;

	for (i = 0; i < h->nr_rows; i++) {
		if (ri[i] >= h->nr_rules)
			return -EINVAL;
		if (i && pc[i] <= pc[i - 1])
			return -EINVAL;
	}
	if (rules[ri[h->nr_rows - 1]].cfa_type != UWPROF_CFA_END)
		return -EINVAL;

	span = pc[h->nr_rows - 1];
	end = h->base + span;
	if (end < h->base)
		return -EINVAL;

	if (idx_bytes)
		*idx_bytes = 4 * ((span >> idx_shift_for(span, h->nr_rows)) + 2);
	return 0;
}

void uwprof_table_init(struct uwprof_table *t, const void *blob, u32 *idx,
		       u64 id)
{
	const struct uwprof_table_hdr *h = blob;
	const u8 *bytes = blob;
	u32 b, row = 0;

	t->hdr = h;
	t->id = id;
	t->pc = (const u32 *)(bytes + UWPROF_TABLE_ROWS_OFF(h));
	t->rule_idx = (const u16 *)(bytes + UWPROF_TABLE_IDX_OFF(h));
	t->rules = (const struct uwprof_rule *)(bytes + UWPROF_TABLE_RULES_OFF(h));
	t->base = h->base;
	t->nr_rows = h->nr_rows;
	t->nr_rules = h->nr_rules;
	t->span = t->pc[t->nr_rows - 1];
	t->idx_shift = idx_shift_for(t->span, t->nr_rows);
	t->nr_idx = (u32)((t->span >> t->idx_shift) + 1);
	t->idx = idx;

	/* Slot b: the last row starting at or before block b's first byte. */
	for (b = 0; b < t->nr_idx; b++) {
		u64 at = (u64)b << t->idx_shift;

		while (row + 1 < t->nr_rows && t->pc[row + 1] <= at)
			row++;
		idx[b] = row;
	}
	idx[t->nr_idx] = t->nr_rows - 1;
}
