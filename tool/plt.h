/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Rows for PLT stubs that the object's CFI leaves out. GNU ld describes
 * x86_64 lazy PLTs in .eh_frame; LLD, mold and every aarch64 linker do not,
 * and a stub without a row would send the walk to the frame-pointer
 * fallback, whose record belongs to the stub's caller's caller. The stubs
 * are a handful of fixed instruction sequences, so their rows are derived
 * by decoding them: a section with anything else in it gets no rows.
 */
#ifndef UWPROF_TOOL_PLT_H
#define UWPROF_TOOL_PLT_H

#include "cfi.h"
#include "elf_file.h"

/* uwprof_cfi_fde.cie of an FDE whose rows come from PLT decoding. */
#define UWPROF_PLT_CIE		UINT32_MAX

/*
 * Appends one FDE (cie UWPROF_PLT_CIE, insn = index of the section in
 * e->plt[]) for every PLT section of 'e' that decodes and that no FDE of
 * 'c' touches. Returns 0 or -ENOMEM.
 */
int uwprof_plt_add(const struct uwprof_elf *e, struct uwprof_cfi *c);

/* Emits the rows of a PLT FDE, as uwprof_cfi_run() does for CFI. */
int uwprof_plt_run(const struct uwprof_elf *e, const struct uwprof_cfi_fde *f,
		   uwprof_cfi_row_fn fn, void *ctx);

/*
 * Emits the CFI rows of FDE 'f' as uwprof_cfi_run() does, except for an
 * aarch64 lazy resolver entered from PLT0 (its CFI saves x30 above the
 * CFA): its rows are moved so that the CFA is the caller's sp.
 */
int uwprof_plt_cfi_run(const struct uwprof_elf *e, struct uwprof_cfi *c,
		       const struct uwprof_cfi_fde *f, uwprof_cfi_row_fn fn,
		       void *ctx);

#endif /* UWPROF_TOOL_PLT_H */
