// SPDX-License-Identifier: GPL-2.0
/*
 * Rows for aarch64 code without CFI, from its instructions (see nocfi.h).
 *
 * The analysis is a forward data flow over one function: each reached
 * instruction holds the frame at its start; an instruction reached twice
 * must be reached with the same frame, or the function is refused rather
 * than given a row that is right on one path only.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "a64insn.h"
#include "nocfi.h"
#include "vec.h"

#define A64_NOP		0xd503201fU
/* Offsets beyond this are not frames this analysis believes in. */
#define FRAME_MAX	(1 << 20)
/* Gaps larger than this are not searched (no function is that big). */
#define GAP_MAX		(16U << 20)

struct flow {
	const struct uwprof_elf *e;
	const uint8_t	*code;
	uint64_t	lo;
	size_t		n;
	struct uwprof_nocfi_state *st;
	uint32_t	*work;
	size_t		nr_work, cap_work;
	size_t		first, last;
	unsigned int	exits, rets;
};

static uint32_t insn_at(const uint8_t *code, size_t i)
{
	const uint8_t *p = code + 4 * i;

	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static int same_frame(const struct uwprof_nocfi_state *a,
		      const struct uwprof_nocfi_state *b)
{
	return a->sp_ok == b->sp_ok && (!a->sp_ok || a->off == b->off) &&
	       a->fpv_ok == b->fpv_ok && (!a->fpv_ok || a->fpv == b->fpv) &&
	       a->fp_loc == b->fp_loc && a->ra_loc == b->ra_loc &&
	       (a->fp_loc != UWPROF_NOCFI_SAVED || a->fp_slot == b->fp_slot) &&
	       (a->ra_loc != UWPROF_NOCFI_SAVED || a->ra_slot == b->ra_slot);
}

/* The entry's frame: what a return or a branch out must find again. */
static int is_entry_frame(const struct uwprof_nocfi_state *s)
{
	return s->sp_ok && s->off == 0 && s->fp_loc == UWPROF_NOCFI_IN_REG &&
	       s->ra_loc == UWPROF_NOCFI_IN_REG;
}

static int in_frame(int64_t v)
{
	return v > -FRAME_MAX && v < FRAME_MAX;
}

/* A store of x29 (k = A64_FP) or x30 to sp + mem_off. */
static int reg_store(struct uwprof_nocfi_state *s, int k, int64_t mem_off)
{
	int64_t slot = mem_off - s->off;
	uint8_t *loc = k == A64_FP ? &s->fp_loc : &s->ra_loc;

	if (!s->sp_ok || !in_frame(slot))
		return -EINVAL;
	if (*loc == UWPROF_NOCFI_IN_REG) {
		*loc = UWPROF_NOCFI_SAVED;
		*(k == A64_FP ? &s->fp_slot : &s->ra_slot) = (int32_t)slot;
	}
	return 0;
}

/* x29 or x30 written: from its saved slot, from sp, or otherwise. */
static void reg_write(struct uwprof_nocfi_state *s, int k,
		      const struct a64_effect *e)
{
	uint8_t *loc = k == A64_FP ? &s->fp_loc : &s->ra_loc;
	int32_t slot = k == A64_FP ? s->fp_slot : s->ra_slot;

	if (k == A64_FP)
		s->fpv_ok = 0;
	if (e->reg[k] == A64_REG_LOADED && s->sp_ok &&
	    *loc == UWPROF_NOCFI_SAVED && e->mem_off[k] - s->off == slot) {
		*loc = UWPROF_NOCFI_IN_REG;
		s->live |= 1U << k;
		return;
	}
	s->live &= ~(1U << k);
	if (*loc == UWPROF_NOCFI_IN_REG)
		*loc = UWPROF_NOCFI_LOST;
	if (k == A64_FP && e->reg[k] == A64_REG_FROM_SP && s->sp_ok &&
	    in_frame(e->reg_delta - s->off)) {
		s->fpv = (int32_t)(e->reg_delta - s->off);
		s->fpv_ok = 1;
	}
}

/* The frame after an instruction with effect 'e', from the one before. */
static int apply(struct uwprof_nocfi_state *s, const struct a64_effect *e)
{
	int64_t off;
	int k, ret;

	for (k = A64_FP; k <= A64_LR; k++) {
		if (e->stored[k]) {
			ret = reg_store(s, k, e->mem_off[k]);
			if (ret)
				return ret;
		}
		if (e->reg[k] != A64_REG_KEPT)
			reg_write(s, k, e);
	}
	switch (e->sp) {
	case A64_SP_KEPT:
		break;
	case A64_SP_ADD:
		off = (int64_t)s->off - e->sp_delta;
		s->sp_ok = s->sp_ok && in_frame(off);
		s->off = (int32_t)(s->sp_ok ? off : 0);
		break;
	case A64_SP_FROM_FP:
		off = -((int64_t)s->fpv + e->sp_delta);
		s->sp_ok = s->fpv_ok && in_frame(off);
		s->off = (int32_t)(s->sp_ok ? off : 0);
		break;
	default:
		s->sp_ok = 0;
		s->off = 0;
	}
	return s->sp_ok || s->fpv_ok ? 0 : -EINVAL;
}

/* Instruction i is reached with frame s. */
static int visit(struct flow *f, size_t i, const struct uwprof_nocfi_state *s)
{
	struct uwprof_nocfi_state *d = &f->st[i];

	if (d->owned) {
		/* another function's code: a tail call into it */
		f->exits++;
		return is_entry_frame(s) ? 0 : -EINVAL;
	}
	if (d->reached)
		return same_frame(d, s) ? 0 : -EINVAL;
	*d = *s;
	d->reached = 1;
	if (i < f->first)
		f->first = i;
	if (i > f->last)
		f->last = i;
	if (VEC_RESERVE(f->work, f->cap_work, f->nr_work + 1, 256))
		return -ENOMEM;
	f->work[f->nr_work++] = (uint32_t)i;
	return 0;
}

/* A branch to 'target' from a frame s: inside, or a tail call out. */
static int branch(struct flow *f, uint64_t target,
		  const struct uwprof_nocfi_state *s)
{
	if (target & 3)
		return -EINVAL;
	if (target >= f->lo && target < f->lo + 4 * f->n)
		return visit(f, (size_t)((target - f->lo) / 4), s);
	/* a tail call: into the object's code, from the entry's frame */
	if (f->e && !uwprof_elf_in_exec(f->e, target, target + 4))
		return -EINVAL;
	f->exits++;
	return is_entry_frame(s) ? 0 : -EINVAL;
}

static int step(struct flow *f, size_t i)
{
	struct uwprof_nocfi_state s = f->st[i];
	struct a64_effect e;
	int ret;

	uwprof_a64_decode(insn_at(f->code, i), f->lo + 4 * i, &e);
	switch (e.flow) {
	case A64_INVALID:
		return -EINVAL;
	case A64_TRAP:
	case A64_INDIRECT:
		return 0;
	case A64_RET:
		f->exits++;
		f->rets++;
		return is_entry_frame(&s) ? 0 : -EINVAL;
	default:
		break;
	}
	ret = apply(&s, &e);
	if (ret)
		return ret;
	if (e.flow == A64_BRANCH || e.flow == A64_COND) {
		ret = branch(f, e.target, &s);
		if (ret || e.flow == A64_BRANCH)
			return ret;
	}
	/* falling off the end runs into code this analysis did not see */
	return i + 1 < f->n ? visit(f, i + 1, &s) : -EINVAL;
}

int uwprof_nocfi_follow(const struct uwprof_elf *e, const uint8_t *code,
			uint64_t lo, uint64_t hi, uint64_t entry,
			struct uwprof_nocfi_state *st, size_t *first,
			size_t *last)
{
	struct uwprof_nocfi_state s0 = {
		.sp_ok = 1, .fp_loc = UWPROF_NOCFI_IN_REG,
		.ra_loc = UWPROF_NOCFI_IN_REG,
		.live = 1U << A64_FP | 1U << A64_LR,
	};
	struct flow f = {
		.e = e, .code = code, .lo = lo, .n = (size_t)(hi - lo) / 4, .st = st,
		.first = SIZE_MAX,
	};
	int ret;

	*first = *last = 0;
	if ((lo | hi | entry) & 3 || entry < lo || entry >= hi)
		return -EINVAL;
	ret = visit(&f, (size_t)(entry - lo) / 4, &s0);
	while (!ret && f.nr_work)
		ret = step(&f, f.work[--f.nr_work]);
	free(f.work);
	if (f.first != SIZE_MAX) {
		*first = f.first;
		*last = f.last;
	}
	/*
	 * A function returns: code whose every path leaves by branches
	 * (data read as instructions, mostly) proves too little.
	 */
	if (!ret && !f.rets)
		ret = -EINVAL;
	return ret;
}

void uwprof_nocfi_rule(const struct uwprof_nocfi_state *s,
		       struct uwprof_rule *r)
{
	memset(r, 0, sizeof(*r));
	if (!s->reached || s->ra_loc == UWPROF_NOCFI_LOST)
		return;				/* UWPROF_CFA_END */
	/* the code may keep any other register elsewhere */
	r->flags = UWPROF_RULE_REGS;
	r->cfa_type = s->sp_ok ? UWPROF_CFA_SP : UWPROF_CFA_FP;
	r->cfa_off = s->sp_ok ? s->off : -s->fpv;
	r->fp_type = s->fp_loc == UWPROF_NOCFI_IN_REG ? UWPROF_REG_SAME :
		     s->fp_loc == UWPROF_NOCFI_SAVED ? UWPROF_REG_AT_CFA :
		     UWPROF_REG_UNDEF;
	r->fp_off = s->fp_loc == UWPROF_NOCFI_SAVED ? s->fp_slot : 0;
	r->ra_type = s->ra_loc == UWPROF_NOCFI_SAVED ? UWPROF_REG_AT_CFA :
		     UWPROF_REG_SAME;
	r->ra_off = s->ra_loc == UWPROF_NOCFI_SAVED ? s->ra_slot : 0;
}

/* -------------------------------------------------------- gaps and FDEs */

struct range {
	uint64_t	lo, hi;
};

static int range_cmp(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Whether the instruction before i (padding skipped) ends a path. */
static int after_terminator(const uint8_t *code, size_t i)
{
	struct a64_effect e;
	uint32_t w;

	while (i > 0) {
		w = insn_at(code, --i);
		if (w == A64_NOP)
			continue;
		uwprof_a64_decode(w, 0, &e);
		return e.flow == A64_RET || e.flow == A64_BRANCH ||
		       e.flow == A64_INDIRECT || e.flow == A64_TRAP ||
		       e.flow == A64_INVALID;
	}
	return 1;
}

static int add_fde(struct uwprof_cfi *c, uint64_t lo, size_t first,
		   size_t last, uint64_t entry)
{
	struct uwprof_cfi_fde *f = uwprof_cfi_fde_add(c);

	if (!f)
		return -ENOMEM;
	f->lo = lo + 4 * first;
	f->hi = lo + 4 * (last + 1);
	f->insn = entry;
	f->cie = UWPROF_NOCFI_CIE;
	return 0;
}

/* Clears the states a refused function left, keeping accepted ones. */
static void forget(struct uwprof_nocfi_state *st, size_t first, size_t last)
{
	size_t i;

	for (i = first; i <= last; i++)
		if (!st[i].owned)
			memset(&st[i], 0, sizeof(st[i]));
}

static int overlaps_owned(const struct uwprof_nocfi_state *st, size_t first,
			  size_t last)
{
	size_t i;

	for (i = first; i <= last; i++)
		if (st[i].owned)
			return 1;
	return 0;
}

/* Every function of the gap [lo, hi) of code 'code'. */
static int gap_scan(const struct uwprof_elf *e, struct uwprof_cfi *c,
		    const uint8_t *code, uint64_t lo, uint64_t hi)
{
	size_t n = (size_t)(hi - lo) / 4, i, first, last;
	struct uwprof_nocfi_state *st = calloc(n, sizeof(*st));
	int ret = 0;

	if (!st)
		return -ENOMEM;
	for (i = 0; i < n && !ret; i++) {
		if (st[i].owned || insn_at(code, i) == A64_NOP ||
		    !after_terminator(code, i))
			continue;
		ret = uwprof_nocfi_follow(e, code, lo, hi, lo + 4 * i, st,
					  &first, &last);
		if (ret == -ENOMEM)
			break;
		if (!ret && !overlaps_owned(st, first, last)) {
			ret = add_fde(c, lo, first, last, lo + 4 * i);
			/* its FDE's range: code in its holes gets no rows */
			for (; first <= last; first++)
				st[first].owned = 1;
			continue;
		}
		forget(st, first, last);
		ret = 0;
	}
	free(st);
	return ret;
}

/* The FDEs' ranges, sorted and merged. */
static struct range *fde_ranges(const struct uwprof_cfi *c, size_t *nr)
{
	struct range *r = malloc((c->nr_fdes ? c->nr_fdes : 1) * sizeof(*r));
	size_t i, n = 0;

	if (!r)
		return NULL;
	for (i = 0; i < c->nr_fdes; i++) {
		r[i].lo = c->fdes[i].lo;
		r[i].hi = c->fdes[i].hi;
	}
	qsort(r, c->nr_fdes, sizeof(*r), range_cmp);
	for (i = 0; i < c->nr_fdes; i++) {
		if (n && r[i].lo <= r[n - 1].hi) {
			if (r[i].hi > r[n - 1].hi)
				r[n - 1].hi = r[i].hi;
			continue;
		}
		r[n++] = r[i];
	}
	*nr = n;
	return r;
}

int uwprof_nocfi_add(const struct uwprof_elf *e, struct uwprof_cfi *c)
{
	struct range *r;
	size_t nr, i;
	int ret = 0;

	if (e->arch != UWPROF_ARCH_ARM64 || !c->nr_fdes)
		return 0;
	r = fde_ranges(c, &nr);
	if (!r)
		return -ENOMEM;
	for (i = 0; i + 1 < nr && !ret; i++) {
		uint64_t lo = (r[i].hi + 3) & ~3ULL, hi = r[i + 1].lo & ~3ULL;
		const uint8_t *code;
		size_t avail;

		if (hi <= lo + 4 || hi - lo > GAP_MAX ||
		    !uwprof_elf_in_exec(e, lo, hi) ||
		    uwprof_elf_vaddr(e, lo, hi - lo, &code, &avail) ||
		    avail < hi - lo)
			continue;
		ret = gap_scan(e, c, code, lo, hi);
	}
	free(r);
	return ret;
}

int uwprof_nocfi_run(const struct uwprof_elf *e, const struct uwprof_cfi_fde *f,
		     uwprof_cfi_row_fn fn, void *ctx)
{
	struct uwprof_nocfi_state *st;
	struct uwprof_rule r, prev;
	size_t n, i, first, last;
	const uint8_t *code;
	size_t avail;
	int ret;

	if (f->hi <= f->lo || f->hi - f->lo > GAP_MAX ||
	    uwprof_elf_vaddr(e, f->lo, f->hi - f->lo, &code, &avail) ||
	    avail < f->hi - f->lo)
		return -EINVAL;
	n = (size_t)(f->hi - f->lo) / 4;
	st = calloc(n, sizeof(*st));
	if (!st)
		return -ENOMEM;
	ret = uwprof_nocfi_follow(e, code, f->lo, f->hi, f->insn, st, &first,
				  &last);
	for (i = 0; !ret && i < n; i++) {
		uwprof_nocfi_rule(&st[i], &r);
		if (i && !memcmp(&r, &prev, sizeof(r)))
			continue;
		ret = fn(ctx, f->lo + 4 * i, &r, UWPROF_CFI_NO_REASON);
		prev = r;
	}
	free(st);
	return ret;
}
