// SPDX-License-Identifier: GPL-2.0
/*
 * The CFA state machine of the table compiler: a CIE's initial
 * instructions and an FDE's program run over the three columns that
 * matter (CFA, frame pointer, return address), each row handed on with
 * its CFA and register rules, or with the reason it is unsupported.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cfi_int.h"
#include "table.h"

/*
 * The x86_64 lazy-PLT CFA expression binutils emits:
 *   breg7 (rsp) N; breg16 (rip) 0; lit15; and; litT | const1u T; ge;
 *   lit3; shl; plus
 * i.e. CFA = rsp + N + ((rip & 15) >= T ? 8 : 0).
 */
static int cfi_match_plt(const uint8_t *e, uint64_t len, int64_t *n,
			 uint8_t *t)
{
	struct cur k = { e, e + len };
	int64_t off, z;
	uint8_t b;

	if (rd_u8(&k, &b) || b != 0x77 || rd_sleb(&k, &off))
		return 0;
	if (rd_u8(&k, &b) || b != 0x80 || rd_sleb(&k, &z) || z != 0)
		return 0;
	if (rd_u8(&k, &b) || b != 0x3f || rd_u8(&k, &b) || b != 0x1a)
		return 0;
	if (rd_u8(&k, &b))
		return 0;
	if (b >= 0x30 && b <= 0x3f) {
		*t = b - 0x30;
	} else if (b == 0x08) {
		if (rd_u8(&k, &b) || b > 15)
			return 0;
		*t = b;
	} else {
		return 0;
	}
	if (k.end - k.p != 4 || memcmp(k.p, "\x2a\x33\x24\x22", 4))
		return 0;
	if (off < 0 || off > INT32_MAX)
		return 0;
	*n = off;
	return 1;
}

/*
 * A saved sp on the stack: breg<reg> N; deref; and optionally
 * plus_uconst K, i.e. CFA = *(reg + N) + K. Returns the register or -1;
 * N and K as the expression has them, whether or not a rule holds them.
 */
static int cfi_match_deref(const uint8_t *e, uint64_t len, int64_t *n,
			   uint64_t *k)
{
	struct cur c = { e, e + len };
	uint64_t add = 0;
	uint8_t op;
	int reg;

	if (rd_u8(&c, &op) || op < 0x70 || op > 0x8f || rd_sleb(&c, n))
		return -1;
	reg = op - 0x70;
	if (rd_u8(&c, &op) || op != 0x06)
		return -1;
	if (c.p < c.end && (rd_u8(&c, &op) || op != 0x23 ||
			    rd_uleb(&c, &add)))
		return -1;
	if (c.p != c.end)
		return -1;
	*k = add;
	return reg;
}

static void cfi_reg_rule(const struct cfi_reg *r, uint8_t *type, int32_t *off,
			 uint8_t *reason, uint8_t expr_reason)
{
	*type = r->type;
	*off = 0;
	switch (r->type) {
	case UWPROF_REG_AT_CFA:
	case UWPROF_REG_VAL_CFA:
	case UWPROF_REG_IN_REG:
		if (r->off < INT32_MIN || r->off > INT32_MAX ||
		    (r->type == UWPROF_REG_IN_REG && r->off < 0)) {
			*type = UWPROF_REG_UNSUPPORTED;
			if (*reason == UWPROF_CFI_NO_REASON)
				*reason = UWPROF_UNSUP_RANGE;
		} else {
			*off = (int32_t)r->off;
		}
		break;
	case UWPROF_REG_UNSUPPORTED:
		if (*reason == UWPROF_CFI_NO_REASON)
			*reason = expr_reason;
		break;
	default:
		break;
	}
}

/*
 * The rule's saved register: the lowest-numbered callee-saved register
 * saved at a CFA offset that fits the field (see struct uwprof_rule).
 * Those are the registers code bases a CFA on (ld.so's resolver: rbx).
 */
static void cfi_saved_rule(const struct uwprof_cfi *c,
			   const struct cfi_state *s, struct uwprof_rule *r)
{
	unsigned int m = s->cs_at_cfa, i;

	/* The saved ones only, lowest first: a row saves few, if any. */
	for (; m; m &= m - 1) {
		i = (unsigned int)__builtin_ctz(m);
		if (s->cs_off[i] < INT16_MIN || s->cs_off[i] > INT16_MAX)
			continue;
		r->saved_type = UWPROF_REG_AT_CFA;
		r->saved_reg = cs_reg(c, (int)i);
		r->saved_off = (int16_t)s->cs_off[i];
		return;
	}
}

static void cfi_to_rule(const struct uwprof_cfi *c, const struct cfi_state *s,
			int signal, struct uwprof_rule *r, uint8_t *reason)
{
	int64_t n;
	uint64_t k;
	uint8_t t;
	int reg;

	memset(r, 0, sizeof(*r));
	*reason = UWPROF_CFI_NO_REASON;
	if (s->cfa_is_expr) {
		if (c->arch == UWPROF_ARCH_X86_64 &&
		    cfi_match_plt(s->expr, s->expr_len, &n, &t)) {
			r->cfa_type = UWPROF_CFA_PLT;
			r->cfa_off = (int32_t)n;
			r->cfa_arg = t;
		} else if ((reg = cfi_match_deref(s->expr, s->expr_len, &n,
						  &k)) >= 0 &&
			   (reg == sp_reg(c) || reg == fp_reg(c))) {
			if (n < INT32_MIN || n > INT32_MAX || k > UINT32_MAX) {
				r->cfa_type = UWPROF_CFA_UNSUPPORTED;
				*reason = UWPROF_UNSUP_RANGE;
			} else {
				r->cfa_type = reg == sp_reg(c) ?
					      UWPROF_CFA_DEREF_SP :
					      UWPROF_CFA_DEREF_FP;
				r->cfa_off = (int32_t)n;
				r->cfa_arg = (uint32_t)k;
			}
		} else {
			r->cfa_type = UWPROF_CFA_UNSUPPORTED;
			*reason = UWPROF_UNSUP_CFA_EXPR;
		}
	} else if (s->cfa_off < INT32_MIN || s->cfa_off > INT32_MAX) {
		r->cfa_type = UWPROF_CFA_UNSUPPORTED;
		*reason = UWPROF_UNSUP_RANGE;
	} else if (s->cfa_reg != (uint32_t)sp_reg(c) &&
		   s->cfa_reg != (uint32_t)fp_reg(c)) {
		/* Known in the interrupted frame only: the module's walk. */
		if (s->cfa_reg < gpr_count(c)) {
			r->cfa_type = UWPROF_CFA_REG;
			r->cfa_arg = s->cfa_reg;
			r->cfa_off = (int32_t)s->cfa_off;
		} else {
			r->cfa_type = UWPROF_CFA_UNSUPPORTED;
			*reason = UWPROF_UNSUP_CFA_REG;
		}
	} else {
		r->cfa_type = s->cfa_reg == (uint32_t)sp_reg(c) ?
			      UWPROF_CFA_SP : UWPROF_CFA_FP;
		r->cfa_off = (int32_t)s->cfa_off;
	}
	cfi_reg_rule(&s->fp, &r->fp_type, &r->fp_off, reason,
		     UWPROF_UNSUP_FP_EXPR);
	cfi_reg_rule(&s->ra, &r->ra_type, &r->ra_off, reason,
		     UWPROF_UNSUP_RA_EXPR);
	if (signal) {
		r->flags |= UWPROF_RULE_SIGNAL;
		/* The kernel restores registers from its own signal frame. */
		*reason = UWPROF_CFI_NO_REASON;
	}
	if (s->pac)
		r->flags |= UWPROF_RULE_PAC;
	if (s->others & ((1ULL << gpr_count(c)) - 1))
		r->flags |= UWPROF_RULE_REGS;
	cfi_saved_rule(c, s, r);
}

static int cfi_emit(struct uwprof_cfi *c, const struct cfi_state *s,
		    int signal, uint64_t loc, uwprof_cfi_row_fn fn, void *ctx)
{
	struct uwprof_rule r;
	uint8_t reason;

	(void)c;
	cfi_to_rule(c, s, signal, &r, &reason);
	return fn(ctx, loc, &r, reason);
}

/*
 * Which tracked column a DWARF register is: fp, ra, or NULL. Any other
 * register but sp is marked in s->others as having a rule, which the
 * caller clears again for DW_CFA_same_value and restores; a callee-saved
 * one loses its "saved at CFA" rule, which the caller sets again for
 * DW_CFA_offset and its kin (cfi_cs_save()).
 */
static inline struct cfi_reg *cfi_col(const struct uwprof_cfi *c,
				      const struct uwprof_cfi_cie *cie,
				      struct cfi_state *s, uint64_t reg)
{
	int i = cs_index(c, reg);

	if (reg == cie->ra_reg)
		return &s->ra;
	if (reg == (uint64_t)fp_reg(c))
		return &s->fp;
	if (reg < 64 && reg != (uint64_t)sp_reg(c))
		s->others |= 1ULL << reg;
	if (i >= 0)
		s->cs_at_cfa &= (uint16_t)~(1U << i);
	return NULL;
}

/* A register other than fp and ra is saved at CFA + off. */
static void cfi_cs_save(const struct uwprof_cfi *c, struct cfi_state *s,
			uint64_t reg, int64_t off)
{
	int i = cs_index(c, reg);

	if (i < 0)
		return;
	s->cs_at_cfa |= (uint16_t)(1U << i);
	s->cs_off[i] = off;
}

/* DW_CFA_restore of a register other than fp and ra, in an FDE. */
static void cfi_cs_restore(const struct uwprof_cfi *c, struct cfi_state *s,
			   const struct cfi_state *init, uint64_t reg)
{
	int i = cs_index(c, reg);

	if (i < 0 || !(init->cs_at_cfa & (1U << i)))
		return;
	s->cs_at_cfa |= (uint16_t)(1U << i);
	s->cs_off[i] = init->cs_off[i];
}

/*
 * One switch over the DW_CFA opcodes, as the DWARF standard lists them:
 * each case is a few lines on the shared state (location, cursor, column,
 * remember stack), which split into functions would each need passed.
 */
int cfi_exec(struct uwprof_cfi *c, const struct uwprof_cfi_cie *cie,
	     uint64_t insn, uint64_t end, struct cfi_state *s,
	     const struct uwprof_cfi_fde *f, int signal,
	     uwprof_cfi_row_fn fn, void *ctx)
{
	struct cfi_state stack[REMEMBER_DEPTH];
	struct cur k = { c->data + insn, c->data + end };
	unsigned int depth = 0;
	uint64_t loc = f ? f->lo : 0, reg, u, delta;
	int64_t sv;
	struct cfi_reg *col;
	const uint8_t *at;
	uint8_t op;
	int ret;

	while (k.p < k.end) {
		at = k.p;
		op = *k.p++;
		delta = 0;
		switch (op & 0xc0) {
		case CFA_advance_loc:
			delta = (uint64_t)(op & 0x3f) * cie->code_align;
			goto advance;
		case CFA_offset:
			if (rd_uleb(&k, &u))
				goto truncated;
			col = cfi_col(c, cie, s, op & 0x3f);
			sv = (int64_t)(u * (uint64_t)cie->data_align);
			if (col) {
				col->type = UWPROF_REG_AT_CFA;
				col->off = sv;
			} else {
				cfi_cs_save(c, s, op & 0x3f, sv);
			}
			continue;
		case CFA_restore:
			reg = op & 0x3f;
			goto restore;
		}
		switch (op) {
		case CFA_nop:
			continue;
		case CFA_set_loc: {
			uint64_t nl;

			if (rd_enc(&k, c->data, c->addr, cie->fde_enc,
				   cie->addr_size, c->text_addr, c->data_addr,
				   &nl))
				goto truncated;
			if (!f)
				continue;
			if (nl < loc)
				return cfi_fail(c, at,
						"DW_CFA_set_loc moves backwards");
			delta = nl - loc;
			goto advance;
		}
		case CFA_advance_loc1:
			if (rd_fixed(&k, 1, &u))
				goto truncated;
			delta = u * cie->code_align;
			goto advance;
		case CFA_advance_loc2:
			if (rd_fixed(&k, 2, &u))
				goto truncated;
			delta = u * cie->code_align;
			goto advance;
		case CFA_advance_loc4:
			if (rd_fixed(&k, 4, &u))
				goto truncated;
			delta = u * cie->code_align;
			goto advance;
		case CFA_MIPS_advance_loc8:
			if (rd_fixed(&k, 8, &u))
				goto truncated;
			delta = u * cie->code_align;
			goto advance;
		case CFA_offset_extended:
		case CFA_val_offset:
			if (rd_uleb(&k, &reg) || rd_uleb(&k, &u))
				goto truncated;
			col = cfi_col(c, cie, s, reg);
			sv = (int64_t)(u * (uint64_t)cie->data_align);
			if (col) {
				col->type = op == CFA_val_offset ?
					    UWPROF_REG_VAL_CFA : UWPROF_REG_AT_CFA;
				col->off = sv;
			} else if (op == CFA_offset_extended) {
				cfi_cs_save(c, s, reg, sv);
			}
			continue;
		case CFA_offset_extended_sf:
		case CFA_val_offset_sf:
			if (rd_uleb(&k, &reg) || rd_sleb(&k, &sv))
				goto truncated;
			col = cfi_col(c, cie, s, reg);
			sv = (int64_t)((uint64_t)sv * (uint64_t)cie->data_align);
			if (col) {
				col->type = op == CFA_val_offset_sf ?
					    UWPROF_REG_VAL_CFA : UWPROF_REG_AT_CFA;
				col->off = sv;
			} else if (op == CFA_offset_extended_sf) {
				cfi_cs_save(c, s, reg, sv);
			}
			continue;
		case CFA_GNU_negative_offset_extended:
			if (rd_uleb(&k, &reg) || rd_uleb(&k, &u))
				goto truncated;
			col = cfi_col(c, cie, s, reg);
			sv = (int64_t)(0 - u * (uint64_t)cie->data_align);
			if (col) {
				col->type = UWPROF_REG_AT_CFA;
				col->off = sv;
			} else {
				cfi_cs_save(c, s, reg, sv);
			}
			continue;
		case CFA_restore_extended:
			if (rd_uleb(&k, &reg))
				goto truncated;
			goto restore;
		case CFA_undefined:
		case CFA_same_value:
			if (rd_uleb(&k, &reg))
				goto truncated;
			col = cfi_col(c, cie, s, reg);
			if (col) {
				col->type = op == CFA_undefined ?
					    UWPROF_REG_UNDEF : UWPROF_REG_SAME;
				col->off = 0;
			} else if (op == CFA_same_value && reg < 64) {
				s->others &= ~(1ULL << reg);
			}
			continue;
		case CFA_register:
			if (rd_uleb(&k, &reg) || rd_uleb(&k, &u))
				goto truncated;
			col = cfi_col(c, cie, s, reg);
			if (col) {
				col->type = UWPROF_REG_IN_REG;
				col->off = u > INT32_MAX ? -1 : (int64_t)u;
			}
			continue;
		case CFA_remember_state:
			if (depth == REMEMBER_DEPTH)
				return cfi_fail(c, at,
						"DW_CFA_remember_state nested deeper than %d",
						REMEMBER_DEPTH);
			stack[depth++] = *s;
			continue;
		case CFA_restore_state:
			if (!depth)
				return cfi_fail(c, at,
						"DW_CFA_restore_state without remember_state");
			/* The location is not part of the remembered state. */
			*s = stack[--depth];
			continue;
		case CFA_def_cfa:
			if (rd_uleb(&k, &reg) || rd_uleb(&k, &u))
				goto truncated;
			s->cfa_is_expr = 0;
			s->cfa_reg = reg > UINT32_MAX ? UINT32_MAX : (uint32_t)reg;
			s->cfa_off = (int64_t)u;
			continue;
		case CFA_def_cfa_sf:
			if (rd_uleb(&k, &reg) || rd_sleb(&k, &sv))
				goto truncated;
			s->cfa_is_expr = 0;
			s->cfa_reg = reg > UINT32_MAX ? UINT32_MAX : (uint32_t)reg;
			s->cfa_off = (int64_t)((uint64_t)sv *
					       (uint64_t)cie->data_align);
			continue;
		case CFA_def_cfa_register:
			if (rd_uleb(&k, &reg))
				goto truncated;
			s->cfa_is_expr = 0;
			s->cfa_reg = reg > UINT32_MAX ? UINT32_MAX : (uint32_t)reg;
			continue;
		case CFA_def_cfa_offset:
			if (rd_uleb(&k, &u))
				goto truncated;
			s->cfa_off = (int64_t)u;
			continue;
		case CFA_def_cfa_offset_sf:
			if (rd_sleb(&k, &sv))
				goto truncated;
			s->cfa_off = (int64_t)((uint64_t)sv *
					       (uint64_t)cie->data_align);
			continue;
		case CFA_def_cfa_expression:
			if (rd_uleb(&k, &u) || u > (uint64_t)(k.end - k.p))
				goto truncated;
			s->cfa_is_expr = 1;
			s->expr = k.p;
			s->expr_len = u;
			k.p += u;
			continue;
		case CFA_expression:
		case CFA_val_expression:
			if (rd_uleb(&k, &reg) || rd_uleb(&k, &u) ||
			    u > (uint64_t)(k.end - k.p))
				goto truncated;
			k.p += u;
			col = cfi_col(c, cie, s, reg);
			if (col) {
				col->type = UWPROF_REG_UNSUPPORTED;
				col->off = 0;
			}
			continue;
		case CFA_GNU_args_size:
			if (rd_uleb(&k, &u))
				goto truncated;
			continue;
		case CFA_GNU_window_save:
			if (c->arch != UWPROF_ARCH_ARM64)
				return cfi_fail(c, at,
						"DW_CFA_GNU_window_save on x86_64");
			/* AArch64: DW_CFA_AARCH64_negate_ra_state. */
			s->pac ^= 1;
			continue;
		default:
			return cfi_fail(c, at, "unknown DW_CFA opcode 0x%02x", op);
		}
restore:
		col = cfi_col(c, cie, s, reg);
		if (col && !f) {
			/* In the CIE itself: back to the implicit start. */
			col->type = UWPROF_REG_SAME;
			col->off = 0;
		} else if (col) {
			*col = col == &s->fp ? cie->init.fp : cie->init.ra;
		} else if (reg < 64) {
			s->others &= ~(1ULL << reg);
			if (f) {
				s->others |= cie->init.others & (1ULL << reg);
				cfi_cs_restore(c, s, &cie->init, reg);
			}
		}
		continue;
advance:
		if (!f || !delta)
			continue;
		if (loc + delta < loc || loc + delta > f->hi) {
			/* Rows past the FDE's end describe no code. */
			if (loc < f->hi) {
				ret = cfi_emit(c, s, signal, loc, fn, ctx);
				if (ret)
					return ret;
			}
			loc = f->hi;
			continue;
		}
		ret = cfi_emit(c, s, signal, loc, fn, ctx);
		if (ret)
			return ret;
		loc += delta;
	}
	if (f && loc < f->hi)
		return cfi_emit(c, s, signal, loc, fn, ctx);
	return 0;

truncated:
	return cfi_fail(c, at, "truncated DW_CFA operand (opcode 0x%02x)", op);
}

int uwprof_cfi_run(struct uwprof_cfi *c, const struct uwprof_cfi_fde *f,
		   uwprof_cfi_row_fn fn, void *ctx)
{
	const struct uwprof_cfi_cie *cie = &c->cies[f->cie];
	struct cfi_state s = cie->init;

	return cfi_exec(c, cie, f->insn, f->end, &s, f, cie->signal, fn, ctx);
}

