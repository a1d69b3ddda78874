/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What one aarch64 instruction does to the parts of the machine a frame
 * is unwound with: sp, x29 (fp), x30 (lr) and the flow of control. Any
 * instruction that could change one of them in a way not spelled out
 * here is reported as changing it unknowably, never as leaving it alone:
 * nocfi.c derives rows from these effects, and a missed write would make
 * a wrong row.
 */
#ifndef UWPROF_TOOL_A64INSN_H
#define UWPROF_TOOL_A64INSN_H

#include <stdint.h>

enum a64_flow {
	A64_NEXT,		/* falls through */
	A64_BRANCH,		/* to 'target' only */
	A64_COND,		/* to 'target' or falls through */
	A64_CALL,		/* bl, blr: x30 written, falls through */
	A64_RET,		/* ret (x30) */
	A64_INDIRECT,		/* br, ret xN: successors unknown */
	A64_TRAP,		/* brk, hlt: no successor */
	A64_INVALID,		/* unallocated, udf, or not user code */
};

enum a64_sp {
	A64_SP_KEPT,
	A64_SP_ADD,		/* sp += sp_delta */
	A64_SP_FROM_FP,		/* sp = x29 + sp_delta */
	A64_SP_UNKNOWN,
};

enum a64_reg {
	A64_REG_KEPT,
	A64_REG_FROM_SP,	/* x29 = sp + reg_delta (sp before this insn) */
	A64_REG_LOADED,		/* loaded from sp + mem_off (sp before) */
	A64_REG_CLOBBERED,	/* written otherwise */
};

/* Index of x29 and x30 in the arrays below. */
#define A64_FP	0
#define A64_LR	1

struct a64_effect {
	enum a64_flow	flow;
	uint64_t	target;		/* A64_BRANCH, A64_COND */
	enum a64_sp	sp;
	int64_t		sp_delta;
	enum a64_reg	reg[2];		/* x29, x30 */
	int64_t		reg_delta;	/* A64_REG_FROM_SP, x29 only */
	/* the 64-bit value of x29 / x30 stored at sp + mem_off[] */
	int		stored[2];
	int64_t		mem_off[2];	/* also A64_REG_LOADED's slot */
};

/* Decodes the instruction 'insn' at address 'pc'. */
void uwprof_a64_decode(uint32_t insn, uint64_t pc, struct a64_effect *e);

#endif /* UWPROF_TOOL_A64INSN_H */
