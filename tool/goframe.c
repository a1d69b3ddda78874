// SPDX-License-Identifier: GPL-2.0
/*
 * Rows of Go functions that move sp to another stack inside a frame of
 * their own (see goframe.h), decoded from their code.
 *
 * Go's assemblers give such a function a fixed prologue that saves the
 * caller's frame pointer and points the frame pointer at the save, and
 * an epilogue that undoes it just before the return:
 *   amd64: sub $S,%rsp; mov %rbp,S-8(%rsp); lea S-8(%rsp),%rbp
 *          ... mov S-8(%rsp),%rbp; add $S,%rsp; ret
 *   arm64: str x30,[sp,#-S]!; stur x29,[sp,#-8]; sub x29,sp,#8
 *          ... ldp x29,x30,[sp,#-8]; add sp,sp,#S; ret
 * Between the two the frame pointer locates the frame whatever sp holds.
 */
#include <errno.h>
#include <string.h>

#include "goframe.h"

struct go_frame {
	/* prologue offsets: frame allocated, fp saved, fp set (the body) */
	unsigned int		alloc, saved, body;
	struct uwprof_rule	entry, in_alloc, in_saved, in_body;
	int64_t			size;
};

/* Offsets in an epilogue: registers restored, frame freed, after the ret. */
struct go_epilogue {
	unsigned int	restored, freed, end;
};

static void rule(struct uwprof_rule *r, uint8_t cfa_type, int64_t cfa_off,
		 int64_t fp_off, int64_t ra_off)
{
	memset(r, 0, sizeof(*r));
	r->cfa_type = cfa_type;
	r->cfa_off = (int32_t)cfa_off;
	r->fp_type = fp_off ? UWPROF_REG_AT_CFA : UWPROF_REG_SAME;
	r->fp_off = (int32_t)fp_off;
	r->ra_type = ra_off ? UWPROF_REG_AT_CFA : UWPROF_REG_SAME;
	r->ra_off = (int32_t)ra_off;
}

/* ---------------------------------------------------------------- amd64 */

/* A little-endian field of 1 or 4 bytes, sign-extended. */
static int64_t imm(const uint8_t *p, int len)
{
	if (len == 1)
		return (int8_t)p[0];
	return (int32_t)(p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24);
}

/*
 * mov/lea between rbp and [rsp + d]: REX.W, 'opcode', ModRM 0x6c (d8) or
 * 0xac (d32), SIB 0x24, d. Returns the length and d, or 0.
 */
static unsigned int x86_bp_rsp(const uint8_t *p, size_t n, uint8_t opcode,
			       int64_t *d)
{
	int len;

	if (n < 5 || p[0] != 0x48 || p[1] != opcode || p[3] != 0x24)
		return 0;
	len = p[2] == 0x6c ? 1 : p[2] == 0xac ? 4 : 0;
	if (!len || n < (size_t)4 + len)
		return 0;
	*d = imm(p + 4, len);
	return 4 + len;
}

/*
 * sub (ModRM 0xec) or add (0xc4) of an immediate to rsp: REX.W, 0x83 i8
 * or 0x81 i32. Returns the length and the immediate, or 0.
 */
static unsigned int x86_rsp_imm(const uint8_t *p, size_t n, uint8_t modrm,
				int64_t *v)
{
	int len;

	if (n < 4 || p[0] != 0x48 || p[2] != modrm)
		return 0;
	len = p[1] == 0x83 ? 1 : p[1] == 0x81 ? 4 : 0;
	if (!len || n < (size_t)3 + len)
		return 0;
	*v = imm(p + 3, len);
	return 3 + len;
}

#define X86_MOV_TO_MEM	0x89	/* mov %rbp,d(%rsp) */
#define X86_MOV_TO_REG	0x8b	/* mov d(%rsp),%rbp */
#define X86_LEA		0x8d	/* lea d(%rsp),%rbp */
#define X86_SUB_RSP	0xec
#define X86_ADD_RSP	0xc4
#define X86_RET		0xc3

static int x86_prologue(const uint8_t *p, size_t n, struct go_frame *g)
{
	int64_t s = 0, d1 = 0, d2 = 0;
	unsigned int l1, l2 = 0, l3 = 0;

	l1 = x86_rsp_imm(p, n, X86_SUB_RSP, &s);
	if (l1)
		l2 = x86_bp_rsp(p + l1, n - l1, X86_MOV_TO_MEM, &d1);
	if (l2)
		l3 = x86_bp_rsp(p + l1 + l2, n - l1 - l2, X86_LEA, &d2);
	if (!l3 || s < 16 || (s & 7) || d1 != s - 8 || d2 != s - 8)
		return -EINVAL;
	g->size = s;
	g->alloc = l1;
	g->saved = l1 + l2;
	g->body = l1 + l2 + l3;
	rule(&g->entry, UWPROF_CFA_SP, 8, 0, -8);
	rule(&g->in_alloc, UWPROF_CFA_SP, s + 8, 0, -8);
	rule(&g->in_saved, UWPROF_CFA_SP, s + 8, -16, -8);
	rule(&g->in_body, UWPROF_CFA_FP, 16, -16, -8);
	return 0;
}

static int x86_epilogue(const uint8_t *p, size_t n, const struct go_frame *g,
			struct go_epilogue *e)
{
	unsigned int l1, l2;
	int64_t d = 0, v = 0;

	l1 = x86_bp_rsp(p, n, X86_MOV_TO_REG, &d);
	if (!l1 || d != g->size - 8)
		return 0;
	l2 = x86_rsp_imm(p + l1, n - l1, X86_ADD_RSP, &v);
	if (!l2 || v != g->size || l1 + l2 >= n || p[l1 + l2] != X86_RET)
		return 0;
	e->restored = l1;
	e->freed = l1 + l2;
	e->end = l1 + l2 + 1;
	return 1;
}

/* ---------------------------------------------------------------- arm64 */

static uint32_t a64_insn(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

#define A64_STUR_FP	0xf81f83fdU	/* stur x29,[sp,#-8] */
#define A64_SET_FP	0xd10023fdU	/* sub x29,sp,#8 */
#define A64_LDP_FP_LR	0xa97ffbfdU	/* ldp x29,x30,[sp,#-8] */
#define A64_RET		0xd65f03c0U

static int a64_prologue(const uint8_t *p, size_t n, struct go_frame *g)
{
	uint32_t str;
	int64_t s;

	if (n < 12)
		return -EINVAL;
	str = a64_insn(p);		/* str x30,[sp,#imm9]! */
	if ((str & 0xffe00fffU) != 0xf8000ffeU ||
	    a64_insn(p + 4) != A64_STUR_FP || a64_insn(p + 8) != A64_SET_FP)
		return -EINVAL;
	s = (str >> 12) & 0x1ff;
	s = (s & 0x100) ? 0x200 - s : -s;
	if (s < 16 || (s & 15))
		return -EINVAL;
	g->size = s;
	g->alloc = 4;
	g->saved = 8;
	g->body = 12;
	rule(&g->entry, UWPROF_CFA_SP, 0, 0, 0);
	rule(&g->in_alloc, UWPROF_CFA_SP, s, 0, -s);
	rule(&g->in_saved, UWPROF_CFA_SP, s, -(s + 8), -s);
	rule(&g->in_body, UWPROF_CFA_FP, s + 8, -(s + 8), -s);
	return 0;
}

static int a64_epilogue(const uint8_t *p, size_t n, const struct go_frame *g,
			struct go_epilogue *e)
{
	uint32_t add;

	if (n < 12 || a64_insn(p) != A64_LDP_FP_LR || a64_insn(p + 8) != A64_RET)
		return 0;
	add = a64_insn(p + 4);		/* add sp,sp,#imm12 */
	if ((add & 0xffc003ffU) != 0x910003ffU ||
	    ((add >> 10) & 0xfff) != (uint32_t)g->size)
		return 0;
	e->restored = 4;
	e->freed = 8;
	e->end = 12;
	return 1;
}

/* --------------------------------------------------------------- common */

static int go_decode(uint16_t arch, const uint8_t *code, size_t n,
		     struct go_frame *g)
{
	if (arch == UWPROF_ARCH_X86_64)
		return x86_prologue(code, n, g);
	if (arch == UWPROF_ARCH_ARM64)
		return a64_prologue(code, n, g);
	return -EOPNOTSUPP;
}

static int go_epilogue_at(uint16_t arch, const uint8_t *p, size_t n,
			  const struct go_frame *g, struct go_epilogue *e)
{
	return arch == UWPROF_ARCH_X86_64 ? x86_epilogue(p, n, g, e) :
					    a64_epilogue(p, n, g, e);
}

int uwprof_goframe_check(uint16_t arch, const uint8_t *code, size_t n)
{
	struct go_frame g;

	return go_decode(arch, code, n, &g);
}

int uwprof_goframe_run(uint16_t arch, const uint8_t *code, uint64_t lo,
		       uint64_t hi, int by_fp, uwprof_cfi_row_fn fn, void *ctx)
{
	const uint8_t step = arch == UWPROF_ARCH_ARM64 ? 4 : 1;
	size_t n = hi - lo, i;
	struct go_epilogue e;
	struct go_frame g;
	int ret;

	ret = go_decode(arch, code, n, &g);
	if (!ret && !by_fp)
		g.in_body = g.in_saved;
	if (!ret)
		ret = fn(ctx, lo, &g.entry, UWPROF_CFI_NO_REASON);
	if (!ret)
		ret = fn(ctx, lo + g.alloc, &g.in_alloc, UWPROF_CFI_NO_REASON);
	if (!ret)
		ret = fn(ctx, lo + g.saved, &g.in_saved, UWPROF_CFI_NO_REASON);
	if (!ret)
		ret = fn(ctx, lo + g.body, &g.in_body, UWPROF_CFI_NO_REASON);
	for (i = g.body; !ret && i < n; i += step) {
		if (!go_epilogue_at(arch, code + i, n - i, &g, &e))
			continue;
		ret = fn(ctx, lo + i + e.restored, &g.in_alloc,
			 UWPROF_CFI_NO_REASON);
		if (!ret)
			ret = fn(ctx, lo + i + e.freed, &g.entry,
				 UWPROF_CFI_NO_REASON);
		if (!ret && i + e.end < n)
			ret = fn(ctx, lo + i + e.end, &g.in_body,
				 UWPROF_CFI_NO_REASON);
		i += e.end - step;
	}
	return ret;
}
