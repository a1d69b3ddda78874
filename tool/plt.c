// SPDX-License-Identifier: GPL-2.0
/*
 * PLT rows by decoding the stubs (see plt.h).
 *
 * x86_64: every stub is entered by a call, so the return address is at
 * the CFA - 8 with CFA = sp + 8, until the stub pushes (the lazy entry's
 * relocation index, PLT0's link-map word): each push moves the CFA 8
 * further from sp. A PLT0 that starts by pushing the link-map word is
 * entered by the lazy entry's jump, one push deep already; mold's passes
 * the index in r11 and pushes it in PLT0. An unconditional jump ends a
 * stub.
 *
 * aarch64: the return address stays in x30 throughout; only PLT0 moves
 * sp, by storing x16 and x30 below it. A br ends a stub.
 */
#include <errno.h>
#include <string.h>

#include "plt.h"

/* One decoded instruction: its length and what it does to the CFA. */
struct plt_insn {
	unsigned int	len;
	int		push;		/* bytes pushed */
	int		ends;		/* unconditional jump or branch */
};

static int x86_decode(const uint8_t *p, size_t n, struct plt_insn *in)
{
	static const uint8_t endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	size_t bnd = n && p[0] == 0xf2;	/* MPX prefix of IBT PLTs */

	memset(in, 0, sizeof(*in));
	if (n >= 4 && !memcmp(p, endbr64, 4))
		in->len = 4;
	else if (n >= 6 + bnd && p[bnd] == 0xff && p[bnd + 1] == 0x25)
		in->len = 6 + bnd, in->ends = 1;	/* jmp *rel(%rip) */
	else if (n >= 5 + bnd && p[bnd] == 0xe9)
		in->len = 5 + bnd, in->ends = 1;	/* jmp rel32 */
	else if (n >= 6 && p[0] == 0xff && p[1] == 0x35)
		in->len = 6, in->push = 8;		/* push rel(%rip) */
	else if (n >= 5 && p[0] == 0x68)
		in->len = 5, in->push = 8;		/* push $imm32 */
	else if (n >= 2 && p[0] == 0x41 && p[1] == 0x53)
		in->len = 2, in->push = 8;		/* push %r11 (mold) */
	else if (n >= 6 && p[0] == 0x41 && p[1] == 0xbb)
		in->len = 6;				/* mov $imm32, %r11d */
	else if (n >= 1 && (p[0] == 0x90 || p[0] == 0xcc))
		in->len = 1;				/* nop, int3 */
	else if (n >= 2 && p[0] == 0x66 && p[1] == 0x90)
		in->len = 2;
	else if (n >= 3 && p[0] == 0x0f && p[1] == 0x1f && p[2] == 0x00)
		in->len = 3;				/* nopl (%rax) */
	else if (n >= 4 && p[0] == 0x0f && p[1] == 0x1f && p[2] == 0x40)
		in->len = 4;
	else if (n >= 5 && p[0] == 0x0f && p[1] == 0x1f && p[2] == 0x44)
		in->len = 5;
	else if (n >= 6 && p[0] == 0x66 && p[1] == 0x0f && p[2] == 0x1f &&
		 p[3] == 0x44)
		in->len = 6;
	return in->len ? 0 : -1;
}

static int a64_decode(const uint8_t *p, size_t n, struct plt_insn *in)
{
	uint32_t w;

	memset(in, 0, sizeof(*in));
	if (n < 4)
		return -1;
	w = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
	in->len = 4;
	if (w == 0xa9bf7bf0)				/* stp x16, x30, [sp, #-16]! */
		in->push = 16;
	else if ((w & 0x9f00001f) == 0x90000010)	/* adrp x16 */
		return 0;
	else if ((w & 0xffc003ff) == 0xf9400211)	/* ldr x17, [x16, #i] */
		return 0;
	else if ((w & 0xffc003ff) == 0x91000210)	/* add x16, x16, #i */
		return 0;
	else if (w == 0xd61f0220)			/* br x17 */
		in->ends = 1;
	else if (w != 0xd503201f &&			/* nop */
		 w != 0xd503245f &&			/* bti c */
		 w != 0xd503219f &&			/* autia1716 */
		 w != 0xd50321df)			/* autib1716 */
		return -1;
	return 0;
}

static int plt_decode(uint16_t arch, const uint8_t *p, size_t n,
		      struct plt_insn *in)
{
	return arch == UWPROF_ARCH_X86_64 ? x86_decode(p, n, in) :
	       a64_decode(p, n, in);
}

/* The CFA's distance from sp where a stub starts. */
static int plt_entry_cfa(uint16_t arch, const uint8_t *p, size_t n)
{
	struct plt_insn in;

	if (arch != UWPROF_ARCH_X86_64)
		return 0;
	/* PLT0 begins with its push, maybe after endbr64: one push deep. */
	if (!x86_decode(p, n, &in) && in.len == 4 && !in.push)
		p += 4, n -= 4;
	return n >= 2 && p[0] == 0xff && p[1] == 0x35 ? 16 : 8;
}

/*
 * Walks the section's instructions; with 'fn' NULL only checks that all
 * decode, else emits a row wherever the CFA moves.
 */
static int plt_walk(const struct uwprof_elf *e, const struct uwprof_elf_sec *s,
		    uwprof_cfi_row_fn fn, void *ctx)
{
	int x86 = e->arch == UWPROF_ARCH_X86_64;
	struct uwprof_rule r;
	struct plt_insn in;
	size_t off = 0;
	int cfa = -1, next, ret;

	memset(&r, 0, sizeof(r));
	r.cfa_type = UWPROF_CFA_SP;
	r.fp_type = UWPROF_REG_SAME;
	r.ra_type = x86 ? UWPROF_REG_AT_CFA : UWPROF_REG_SAME;
	r.ra_off = x86 ? -8 : 0;
	next = plt_entry_cfa(e->arch, s->data, s->size);
	while (off < s->size) {
		if (plt_decode(e->arch, s->data + off, s->size - off, &in))
			return -EINVAL;
		if (fn && next != cfa) {
			r.cfa_off = next;
			ret = fn(ctx, s->addr + off, &r, UWPROF_CFI_NO_REASON);
			if (ret)
				return ret;
		}
		cfa = next;
		off += in.len;
		next = in.ends ? (x86 ? 8 : 0) : cfa + in.push;
	}
	return 0;
}

static int plt_covered(const struct uwprof_cfi *c, uint64_t lo, uint64_t hi)
{
	size_t i;

	for (i = 0; i < c->nr_fdes; i++)
		if (c->fdes[i].lo < hi && c->fdes[i].hi > lo)
			return 1;
	return 0;
}

int uwprof_plt_add(const struct uwprof_elf *e, struct uwprof_cfi *c)
{
	struct uwprof_cfi_fde *f;
	int i;

	if (e->arch != UWPROF_ARCH_X86_64 && e->arch != UWPROF_ARCH_ARM64)
		return 0;
	for (i = 0; i < e->nr_plt; i++) {
		const struct uwprof_elf_sec *s = &e->plt[i];

		if (!s->data || !s->size || s->addr + s->size < s->addr ||
		    plt_covered(c, s->addr, s->addr + s->size) ||
		    plt_walk(e, s, NULL, NULL))
			continue;
		f = uwprof_cfi_fde_add(c);
		if (!f)
			return -ENOMEM;
		f->lo = s->addr;
		f->hi = s->addr + s->size;
		f->insn = (uint64_t)i;
		f->cie = UWPROF_PLT_CIE;
	}
	return 0;
}

int uwprof_plt_run(const struct uwprof_elf *e, const struct uwprof_cfi_fde *f,
		   uwprof_cfi_row_fn fn, void *ctx)
{
	if (f->insn >= (uint64_t)e->nr_plt)
		return -EINVAL;
	return plt_walk(e, &e->plt[f->insn], fn, ctx);
}

/*
 * aarch64 lazy resolvers: PLT0 pushes {x16, x30} below the caller's sp and
 * branches to the resolver (glibc's _dl_runtime_resolve and
 * _dl_runtime_profile), whose CFI takes the CFA to be the sp it was entered
 * with and says x30 is saved at CFA + 8, above that CFA (a CFA from sp
 * with x30 above it marks such an FDE). The caller's sp is
 * the CFA + 16, so the rows of such an FDE move the CFA up by 16 and the
 * saved registers' offsets down by 16; until the CFI says where x30 is, it
 * is still in the register (PLT0 stored it, it did not change it).
 */
struct resolver_shift {
	uwprof_cfi_row_fn	fn;
	void			*ctx;
	int			found;
};

static int resolver_probe(void *arg, uint64_t addr,
			  const struct uwprof_rule *r, uint8_t reason)
{
	struct resolver_shift *rs = arg;

	(void)addr;
	(void)reason;
	if (r->cfa_type == UWPROF_CFA_SP && r->ra_type == UWPROF_REG_AT_CFA &&
	    r->ra_off > 0)
		rs->found = 1;
	return 0;
}

static void shift_reg(uint8_t type, int32_t *off)
{
	if (type == UWPROF_REG_AT_CFA || type == UWPROF_REG_VAL_CFA)
		*off -= 16;
}

static int resolver_row(void *arg, uint64_t addr,
			const struct uwprof_rule *r, uint8_t reason)
{
	struct resolver_shift *rs = arg;
	struct uwprof_rule m = *r;
	int32_t saved = m.saved_off;

	if (m.cfa_type != UWPROF_CFA_SP && m.cfa_type != UWPROF_CFA_FP)
		return rs->fn(rs->ctx, addr, r, reason);
	m.cfa_off += 16;
	shift_reg(m.fp_type, &m.fp_off);
	shift_reg(m.ra_type, &m.ra_off);
	if (m.ra_type == UWPROF_REG_UNDEF)
		m.ra_type = UWPROF_REG_SAME;
	if (m.saved_type == UWPROF_REG_AT_CFA) {
		saved -= 16;
		m.saved_off = (int16_t)saved;
		if (saved != m.saved_off) {
			m.saved_type = UWPROF_REG_SAME;
			m.saved_reg = 0;
			m.saved_off = 0;
		}
	}
	return rs->fn(rs->ctx, addr, &m, reason);
}

int uwprof_plt_cfi_run(const struct uwprof_elf *e, struct uwprof_cfi *c,
		       const struct uwprof_cfi_fde *f, uwprof_cfi_row_fn fn,
		       void *ctx)
{
	struct resolver_shift rs = { .fn = fn, .ctx = ctx };
	int ret;

	if (e->arch != UWPROF_ARCH_ARM64)
		return uwprof_cfi_run(c, f, fn, ctx);
	ret = uwprof_cfi_run(c, f, resolver_probe, &rs);
	if (ret || !rs.found)
		return ret ? ret : uwprof_cfi_run(c, f, fn, ctx);
	return uwprof_cfi_run(c, f, resolver_row, &rs);
}
