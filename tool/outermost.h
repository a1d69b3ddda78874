/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Outermost frames the CFI does not mark. Go's toolchain writes
 * .debug_frame for every function, including the ones no caller returns
 * to (a goroutine's runtime.goexit, a thread's runtime.mstart, the main
 * thread's runtime.rt0_go), with an ordinary return-address rule: a walk
 * would go on into whatever lies above them on the stack. Their rows are
 * replaced by one that ends the walk as complete.
 */
#ifndef UWPROF_TOOL_OUTERMOST_H
#define UWPROF_TOOL_OUTERMOST_H

#include "cfi.h"
#include "elf_file.h"

/* uwprof_cfi_fde.cie of an FDE replaced by an outermost frame's row. */
#define UWPROF_OUTERMOST_CIE	(UINT32_MAX - 1)

/*
 * Marks the FDEs of the outermost functions of 'e' (found by name in its
 * symbol table; Go objects only), adding FDEs where the CFI has none.
 * Returns 0 or -ENOMEM.
 */
int uwprof_outermost_mark(const struct uwprof_elf *e, struct uwprof_cfi *c);

/* Emits the single row of a marked FDE. */
int uwprof_outermost_run(const struct uwprof_elf *e,
			 const struct uwprof_cfi_fde *f,
			 uwprof_cfi_row_fn fn, void *ctx);

#endif /* UWPROF_TOOL_OUTERMOST_H */
