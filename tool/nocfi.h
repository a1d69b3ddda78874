/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Rows for aarch64 code the CFI leaves out. Hand-written assembly often
 * has no CFI (OpenSSL 3.0's AES-GCM kernels: a leaf that moves sp down
 * and saves callee-saved registers there, with no frame record); the
 * frame-pointer fallback then returns through lr with sp unchanged, and
 * the caller's CFA lands in the assembly's save area. The rows here come
 * from following each function's instructions from its entry: sp, x29
 * and x30 are tracked along every path (a64insn.h says what each
 * instruction does to them), and a function gets rows only if every path
 * agrees at every join and every exit (ret, or a branch out) finds the
 * entry's frame again: sp back, x29 and x30 restored. An instruction no
 * path reaches, or whose return address is lost, gets no row.
 *
 * Entries are the first instruction of each gap between FDEs and every
 * instruction after an unconditional transfer (ret, b, br, brk) and its
 * padding that no accepted function reaches.
 */
#ifndef UWPROF_TOOL_NOCFI_H
#define UWPROF_TOOL_NOCFI_H

#include "cfi.h"
#include "elf_file.h"

/* uwprof_cfi_fde.cie of an FDE whose rows come from the analysis. */
#define UWPROF_NOCFI_CIE	(UINT32_MAX - 4)

/* Where the caller's x29 or x30 is. */
enum uwprof_nocfi_loc {
	UWPROF_NOCFI_IN_REG,	/* still in the register */
	UWPROF_NOCFI_SAVED,	/* at CFA + slot */
	UWPROF_NOCFI_LOST,	/* overwritten unsaved */
};

/* The frame at the start of one instruction. */
struct uwprof_nocfi_state {
	int32_t		off;		/* CFA - sp, if sp_ok */
	int32_t		fpv;		/* x29 - CFA, if fpv_ok */
	int32_t		fp_slot;	/* UWPROF_NOCFI_SAVED */
	int32_t		ra_slot;
	uint8_t		reached;
	uint8_t		sp_ok;
	uint8_t		fpv_ok;
	uint8_t		fp_loc;		/* enum uwprof_nocfi_loc */
	uint8_t		ra_loc;
	uint8_t		owned;		/* by an accepted function */
	/*
	 * Bit A64_FP / A64_LR: the register still holds the caller's value,
	 * saved or not (what CFI that is late to record a save says).
	 */
	uint8_t		live;
};

/*
 * Follows the function entered at 'entry' through the code at 'code'
 * (vaddr [lo, hi), 4-byte aligned; st[] has one zeroed entry per
 * instruction, entries already 'owned' count as code outside; a branch
 * out of [lo, hi) must reach code of 'e' unless 'e' is NULL). Returns 0
 * with st[] filled and [*first, *last] the reached instructions' index
 * range, or -EINVAL when the function does not analyze or never returns
 * (st[] then holds partial states: clear [*first, *last] before the next
 * call); -ENOMEM.
 */
int uwprof_nocfi_follow(const struct uwprof_elf *e, const uint8_t *code,
			uint64_t lo, uint64_t hi, uint64_t entry,
			struct uwprof_nocfi_state *st, size_t *first,
			size_t *last);

/* The row a reached state gives (END where the return address is lost). */
void uwprof_nocfi_rule(const struct uwprof_nocfi_state *s,
		       struct uwprof_rule *r);

/*
 * Appends one FDE (cie UWPROF_NOCFI_CIE, insn = entry address) for every
 * function found in the gaps between the FDEs of 'c' (aarch64 objects
 * only). Returns 0 or -ENOMEM.
 */
int uwprof_nocfi_add(const struct uwprof_elf *e, struct uwprof_cfi *c);

/* Emits the rows of such an FDE, as uwprof_cfi_run() does for CFI. */
int uwprof_nocfi_run(const struct uwprof_elf *e, const struct uwprof_cfi_fde *f,
		     uwprof_cfi_row_fn fn, void *ctx);

#endif /* UWPROF_TOOL_NOCFI_H */
