/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Between the CIE/FDE parser (cfi.c) and the CFA state machine
 * (cfi_exec.c): DWARF constants, the decoded CIE and register state, the
 * bounded byte readers. Not an interface of the table compiler.
 */
#ifndef UWPROF_TOOL_CFI_INT_H
#define UWPROF_TOOL_CFI_INT_H

#include <stdint.h>

#include "cfi.h"

/* DWARF constants, spelled out so no libdw header is needed. */
enum {
	CFA_advance_loc = 0x40, CFA_offset = 0x80, CFA_restore = 0xc0,
	CFA_nop = 0x00, CFA_set_loc = 0x01, CFA_advance_loc1 = 0x02,
	CFA_advance_loc2 = 0x03, CFA_advance_loc4 = 0x04,
	CFA_offset_extended = 0x05, CFA_restore_extended = 0x06,
	CFA_undefined = 0x07, CFA_same_value = 0x08, CFA_register = 0x09,
	CFA_remember_state = 0x0a, CFA_restore_state = 0x0b,
	CFA_def_cfa = 0x0c, CFA_def_cfa_register = 0x0d,
	CFA_def_cfa_offset = 0x0e, CFA_def_cfa_expression = 0x0f,
	CFA_expression = 0x10, CFA_offset_extended_sf = 0x11,
	CFA_def_cfa_sf = 0x12, CFA_def_cfa_offset_sf = 0x13,
	CFA_val_offset = 0x14, CFA_val_offset_sf = 0x15,
	CFA_val_expression = 0x16, CFA_MIPS_advance_loc8 = 0x1d,
	CFA_GNU_window_save = 0x2d, CFA_GNU_args_size = 0x2e,
	CFA_GNU_negative_offset_extended = 0x2f,
};

enum {
	PE_absptr = 0x00, PE_uleb128 = 0x01, PE_udata2 = 0x02,
	PE_udata4 = 0x03, PE_udata8 = 0x04, PE_signed = 0x08,
	PE_sleb128 = 0x09, PE_sdata2 = 0x0a, PE_sdata4 = 0x0b,
	PE_sdata8 = 0x0c, PE_pcrel = 0x10, PE_textrel = 0x20,
	PE_datarel = 0x30, PE_funcrel = 0x40, PE_aligned = 0x50,
	PE_indirect = 0x80, PE_omit = 0xff,
};

#define REMEMBER_DEPTH	64

/* Callee-saved general registers other than fp: x86_64 5, arm64 10. */
#define CS_MAX		10

struct cfi_reg {
	uint8_t		type;		/* enum uwprof_reg_rule */
	int64_t		off;
};

struct cfi_state {
	uint8_t		cfa_is_expr;
	uint8_t		pac;
	uint32_t	cfa_reg;
	int64_t		cfa_off;
	const uint8_t	*expr;
	uint64_t	expr_len;
	struct cfi_reg	fp;
	struct cfi_reg	ra;
	uint64_t	others;		/* registers 0-63 but sp, fp, ra with a rule */
	/*
	 * Callee-saved registers (cs_index()) whose rule is "saved at CFA +
	 * cs_off[i]", one bit each: the candidates for the rule's saved_reg.
	 */
	uint16_t	cs_at_cfa;
	int64_t		cs_off[CS_MAX];
};

struct uwprof_cfi_cie {
	uint64_t	off;
	uint64_t	code_align;
	int64_t		data_align;
	uint64_t	ra_reg;
	uint64_t	insn;		/* initial instructions [insn, end) */
	uint64_t	end;
	uint8_t		fde_enc;
	uint8_t		addr_size;
	uint8_t		aug_z;
	uint8_t		signal;
	struct cfi_state init;
};

struct cur {
	const uint8_t	*p;
	const uint8_t	*end;
};

static inline uint64_t le_get(const uint8_t *p, int n)
{
	uint64_t v = 0;
	int i;

	for (i = n - 1; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static inline int rd_fixed(struct cur *k, int n, uint64_t *v)
{
	if (k->end - k->p < n)
		return -1;
	*v = le_get(k->p, n);
	k->p += n;
	return 0;
}

static inline int rd_u8(struct cur *k, uint8_t *v)
{
	if (k->p >= k->end)
		return -1;
	*v = *k->p++;
	return 0;
}

/* A LEB128 number's bits, its width in bits and its last byte. */
static inline int rd_leb(struct cur *k, uint64_t *v, unsigned int *shift,
			 uint8_t *last)
{
	uint64_t r = 0;
	unsigned int s = 0;
	uint8_t b;

	do {
		if (k->p >= k->end)
			return -1;
		b = *k->p++;
		if (s < 64)
			r |= (uint64_t)(b & 0x7f) << s;
		s += 7;
	} while (b & 0x80);
	*v = r;
	*shift = s;
	*last = b;
	return 0;
}

static inline int rd_uleb(struct cur *k, uint64_t *v)
{
	unsigned int shift;
	uint8_t b;

	return rd_leb(k, v, &shift, &b);
}

static inline int rd_sleb(struct cur *k, int64_t *v)
{
	unsigned int shift;
	uint64_t r;
	uint8_t b;

	if (rd_leb(k, &r, &shift, &b))
		return -1;
	if (shift < 64 && (b & 0x40))
		r |= ~(uint64_t)0 << shift;
	*v = (int64_t)r;
	return 0;
}

static inline int fp_reg(const struct uwprof_cfi *c)
{
	return c->arch == UWPROF_ARCH_X86_64 ? 6 : 29;
}

/*
 * General registers a CFA may be based on, by DWARF number: x86_64 rax-r15,
 * arm64 x0-x29 (x30 holds return addresses, sp is 31).
 */
static inline uint32_t gpr_count(const struct uwprof_cfi *c)
{
	return c->arch == UWPROF_ARCH_ARM64 ? 30 : 16;
}

static inline int sp_reg(const struct uwprof_cfi *c)
{
	return c->arch == UWPROF_ARCH_X86_64 ? 7 : 31;
}

/*
 * The callee-saved general register's index, lowest DWARF number first
 * (x86_64 rbx, r12 .. r15; arm64 x19 .. x28), or -1 for any other.
 */
static inline int cs_index(const struct uwprof_cfi *c, uint64_t reg)
{
	if (c->arch == UWPROF_ARCH_ARM64)
		return reg >= 19 && reg <= 28 ? (int)reg - 19 : -1;
	if (reg == 3)
		return 0;
	return reg >= 12 && reg <= 15 ? (int)reg - 11 : -1;
}

/* The DWARF number of callee-saved index i (the inverse of cs_index()). */
static inline uint8_t cs_reg(const struct uwprof_cfi *c, int i)
{
	if (c->arch == UWPROF_ARCH_ARM64)
		return (uint8_t)(19 + i);
	return (uint8_t)(i ? 11 + i : 3);
}

int cfi_fail(struct uwprof_cfi *c, const uint8_t *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/*
 * Read a pointer in encoding 'enc'. 'base_addr' is the address of the
 * first byte of the cursor's buffer, so pcrel and aligned work for both
 * sections and .eh_frame_hdr.
 */
int rd_enc(struct cur *k, const uint8_t *buf, uint64_t base_addr,
	   uint8_t enc, int addr_size, uint64_t text, uint64_t data,
	   uint64_t *val);
/*
 * Runs the instructions [insn, end) from state 's'; with an FDE, calls
 * 'fn' for each row of its range.
 */
int cfi_exec(struct uwprof_cfi *c, const struct uwprof_cfi_cie *cie,
	     uint64_t insn, uint64_t end, struct cfi_state *s,
	     const struct uwprof_cfi_fde *f, int signal,
	     uwprof_cfi_row_fn fn, void *ctx);

#endif /* UWPROF_TOOL_CFI_INT_H */
