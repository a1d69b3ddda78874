// SPDX-License-Identifier: GPL-2.0
/*
 * aarch64 instructions' effects on sp, x29, x30 and control flow (see
 * a64insn.h), decoded by the top-level groups of the Arm ARM's encoding
 * index. Within a group only the forms that move sp or transfer x29/x30
 * to and from the stack are decoded in full; for the rest a destination
 * field naming x29 or x30 counts as a write, which for SIMD forms whose
 * destination is a vector register is merely conservative.
 */
#include <string.h>

#include "a64insn.h"

#define BITS(x, hi, lo)	(((x) >> (lo)) & ((1U << ((hi) - (lo) + 1)) - 1))
#define RD(x)		BITS(x, 4, 0)
#define RN(x)		BITS(x, 9, 5)
#define RT2(x)		BITS(x, 14, 10)
#define RS(x)		BITS(x, 20, 16)
#define REG_SP		31

static int64_t sext(uint32_t v, unsigned int bits)
{
	uint64_t m = 1ULL << (bits - 1);

	return (int64_t)((v ^ m) - m);
}

/* Register 'r' (a destination field) is written: x29 and x30 count. */
static void writes(struct a64_effect *e, unsigned int r)
{
	if (r == 29)
		e->reg[A64_FP] = A64_REG_CLOBBERED;
	else if (r == 30)
		e->reg[A64_LR] = A64_REG_CLOBBERED;
}

/* A 64-bit load (store) of register r from (to) sp + off. */
static void transfer(struct a64_effect *e, unsigned int r, int load,
		     int64_t off)
{
	int k = r == 29 ? A64_FP : r == 30 ? A64_LR : -1;

	if (k < 0)
		return;
	e->mem_off[k] = off;
	if (load)
		e->reg[k] = A64_REG_LOADED;
	else
		e->stored[k] = 1;
}

/* Base register writeback: sp moves; x29 or x30 as a base is clobbered. */
static void writeback(struct a64_effect *e, unsigned int rn, int64_t delta)
{
	if (rn == REG_SP) {
		e->sp = A64_SP_ADD;
		e->sp_delta = delta;
	} else {
		writes(e, rn);
	}
}

/* Writeback by an amount not decoded here. */
static void unknown_writeback(struct a64_effect *e, unsigned int rn)
{
	if (rn == REG_SP)
		e->sp = A64_SP_UNKNOWN;
	else
		writes(e, rn);
}

/* ------------------------------------------------- branches, system */

static void branch_reg(uint32_t i, struct a64_effect *e)
{
	unsigned int opc = BITS(i, 24, 21);

	/* ret; retaa and retab name no register (Rn, Rm all ones) */
	if (opc == 2 && (RN(i) == 30 ||
			 (BITS(i, 15, 11) == 1 && RN(i) == 31 && RD(i) == 31)))
		e->flow = A64_RET;
	else if (opc == 0 || opc == 2 || opc == 8)
		e->flow = A64_INDIRECT;		/* br, braa, ret xN */
	else if (opc == 1 || opc == 9)
		e->flow = A64_CALL;		/* blr, blraa */
	else
		e->flow = A64_INVALID;		/* eret, drps */
	if (e->flow == A64_CALL)
		e->reg[A64_LR] = A64_REG_CLOBBERED;
}

static void branch_sys(uint32_t i, uint64_t pc, struct a64_effect *e)
{
	if ((i & 0x7c000000) == 0x14000000) {		/* b, bl */
		e->target = pc + (uint64_t)(sext(BITS(i, 25, 0), 26) * 4);
		e->flow = (i >> 31) ? A64_CALL : A64_BRANCH;
		if (e->flow == A64_CALL)
			e->reg[A64_LR] = A64_REG_CLOBBERED;
	} else if ((i & 0xff000000) == 0x54000000) {	/* b.cond, bc.cond */
		e->target = pc + (uint64_t)(sext(BITS(i, 23, 5), 19) * 4);
		e->flow = A64_COND;
	} else if ((i & 0x7e000000) == 0x34000000) {	/* cbz, cbnz */
		e->target = pc + (uint64_t)(sext(BITS(i, 23, 5), 19) * 4);
		e->flow = A64_COND;
	} else if ((i & 0x7e000000) == 0x36000000) {	/* tbz, tbnz */
		e->target = pc + (uint64_t)(sext(BITS(i, 18, 5), 14) * 4);
		e->flow = A64_COND;
	} else if ((i & 0xfe000000) == 0xd6000000) {
		branch_reg(i, e);
	} else if ((i & 0xff000000) == 0xd4000000) {	/* exceptions */
		e->flow = BITS(i, 23, 21) == 0 ? A64_NEXT : A64_TRAP;
	} else if ((i & 0xffc00000) == 0xd5000000) {	/* system */
		/* hints (nop, paciasp, bti) and barriers write nothing */
		if (BITS(i, 21, 21))			/* mrs, sysl */
			writes(e, RD(i));
	} else {
		e->flow = A64_INVALID;
	}
}

/* ------------------------------------------ data processing, immediate */

static void add_sub_imm(uint32_t i, struct a64_effect *e)
{
	int sf = BITS(i, 31, 31), sub = BITS(i, 30, 30), s = BITS(i, 29, 29);
	int64_t v = (int64_t)BITS(i, 21, 10) << (BITS(i, 22, 22) ? 12 : 0);
	unsigned int rd = RD(i), rn = RN(i);

	if (sub)
		v = -v;
	if (rd == REG_SP && !s) {
		e->sp = A64_SP_UNKNOWN;
		if (sf && rn == REG_SP)
			e->sp = A64_SP_ADD;
		else if (sf && rn == 29)
			e->sp = A64_SP_FROM_FP;
		e->sp_delta = v;
	} else if (rd == 29 && !s && sf && rn == REG_SP) {
		e->reg[A64_FP] = A64_REG_FROM_SP;
		e->reg_delta = v;
	} else {
		writes(e, rd);
	}
}

static void dp_imm(uint32_t i, struct a64_effect *e)
{
	switch (BITS(i, 25, 23)) {
	case 2:						/* add/sub */
		add_sub_imm(i, e);
		return;
	case 3:						/* addg, subg */
	case 4:						/* logical */
		/* sp as destination unless flags are set (ands) */
		if (RD(i) == REG_SP &&
		    (BITS(i, 25, 23) == 3 || BITS(i, 30, 29) != 3)) {
			e->sp = A64_SP_UNKNOWN;
			return;
		}
		break;
	}
	writes(e, RD(i));
}

/* ----------------------------------------------------- loads, stores */

/* ldp/stp (and ldnp, ldpsw, stgp) of general or SIMD registers. */
static void ldst_pair(uint32_t i, struct a64_effect *e)
{
	unsigned int opc = BITS(i, 31, 30), mode = BITS(i, 24, 23);
	int v = BITS(i, 26, 26), load = BITS(i, 22, 22);
	int64_t scale = v ? 4 << opc : opc == 2 ? 8 : (opc == 1 && !load) ? 16 : 4;
	int64_t imm = sext(BITS(i, 21, 15), 7) * scale, at;
	unsigned int rn = RN(i);

	at = mode == 1 ? 0 : imm;			/* post-index: old sp */
	if (!v && opc == 2 && rn == REG_SP) {
		transfer(e, RD(i), load, at);
		transfer(e, RT2(i), load, at + 8);
	} else if (!v && load) {
		writes(e, RD(i));
		writes(e, RT2(i));
	}
	if (mode == 1 || mode == 3)
		writeback(e, rn, imm);
}

/* Single-register loads and stores: immediate, register offset, atomics. */
static void ldst_reg(uint32_t i, struct a64_effect *e)
{
	unsigned int size = BITS(i, 31, 30), opc = BITS(i, 23, 22);
	unsigned int rn = RN(i), rt = RD(i), op4 = BITS(i, 11, 10);
	int v = BITS(i, 26, 26), x64 = !v && size == 3 && opc <= 1;
	int load = v ? 0 : !(opc == 0 || (size == 3 && opc == 2));
	int64_t off = 0;
	int known = 1;

	if (BITS(i, 24, 24)) {				/* unsigned offset */
		off = (int64_t)BITS(i, 21, 10) << (v && (opc & 2) ? 4 : size);
	} else if (!BITS(i, 21, 21)) {			/* imm9 forms */
		off = sext(BITS(i, 20, 12), 9);
		if (op4 == 1 || op4 == 3)
			writeback(e, rn, off);
		if (op4 == 1)
			off = 0;			/* post-index */
	} else if ((i & 0xff200400) == 0xf8200400) {	/* ldraa, ldrab */
		if (BITS(i, 11, 11))
			unknown_writeback(e, rn);
		known = 0;
		load = 1;
	} else {					/* register offset, atomics */
		known = 0;
		load = !v;
	}
	if (v)
		return;
	if (x64 && known && rn == REG_SP)
		transfer(e, rt, load, off);
	else if (load)
		writes(e, rt);
}

static void ldst(uint32_t i, struct a64_effect *e)
{
	if ((i & 0x3a000000) == 0x28000000) {
		ldst_pair(i, e);
	} else if ((i & 0x3a000000) == 0x38000000) {
		ldst_reg(i, e);
	} else if ((i & 0x3b000000) == 0x18000000) {	/* literal */
		if (!BITS(i, 26, 26))
			writes(e, RD(i));
	} else if ((i & 0xbe000000) == 0x0c000000) {	/* SIMD structures */
		if (BITS(i, 23, 23))			/* post-index */
			unknown_writeback(e, RN(i));
	} else {
		/*
		 * Exclusives, ordered, tags, RCpc forms: any register field may
		 * be written (a status, a loaded value); any sp base may move.
		 */
		writes(e, RD(i));
		writes(e, RT2(i));
		writes(e, RS(i));
		if (RN(i) == REG_SP)
			e->sp = A64_SP_UNKNOWN;
	}
}

/* ------------------------------------------ data processing, registers */

static void dp_reg(uint32_t i, struct a64_effect *e)
{
	/* add/sub (extended register) may write sp */
	if ((i & 0x1fe00000) == 0x0b200000 && RD(i) == REG_SP &&
	    !BITS(i, 29, 29)) {
		e->sp = A64_SP_UNKNOWN;
		return;
	}
	writes(e, RD(i));
}

static void simd_fp(uint32_t i, struct a64_effect *e)
{
	unsigned int opcode = BITS(i, 18, 16), imm4 = BITS(i, 14, 11);

	/* fcvt*, fmov to a general register */
	if ((i & 0x5f20fc00) == 0x1e200000 &&
	    (opcode <= 1 || opcode == 4 || opcode == 5 || opcode == 6))
		writes(e, RD(i));
	/* smov, umov */
	else if ((i & 0xbfe08400) == 0x0e000400 && (imm4 == 5 || imm4 == 7))
		writes(e, RD(i));
}

void uwprof_a64_decode(uint32_t insn, uint64_t pc, struct a64_effect *e)
{
	unsigned int op0 = BITS(insn, 28, 25);

	memset(e, 0, sizeof(*e));
	e->flow = A64_NEXT;
	if (op0 == 0 || op0 == 1 || op0 == 3)
		e->flow = A64_INVALID;		/* udf, reserved, SME */
	else if (op0 == 2)
		writes(e, RD(insn));		/* SVE */
	else if ((op0 & 0xe) == 0x8)
		dp_imm(insn, e);
	else if ((op0 & 0xe) == 0xa)
		branch_sys(insn, pc, e);
	else if ((op0 & 0x5) == 0x4)
		ldst(insn, e);
	else if ((op0 & 0x7) == 0x5)
		dp_reg(insn, e);
	else
		simd_fp(insn, e);
}
