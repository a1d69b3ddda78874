/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Frames the CFI does not describe. An object's entry point may have no
 * CFI at all (glibc's dynamic loader): a short CFI-less block there is
 * outermost code, whose row ends a walk as complete. So is glibc's
 * __start_context, where makecontext's coroutines return, and the padding
 * before it that a walk looks up for that return address; arm64
 * __swapcontext moves its return address out of lr for a while
 * (startctx.h).
 * Go frames the CFI does not describe. Go's toolchain writes .debug_frame
 * for every function, including the ones no caller returns to (a
 * goroutine's runtime.goexit, a thread's runtime.mstart, the main thread's
 * runtime.rt0_go) and the ones that switch stacks, with an ordinary
 * return-address rule: a walk would go on into whatever lies above them on
 * the stack. The rows of outermost ones are replaced by one that ends the
 * walk as complete. Those that switch sp inside a frame of their own get
 * rows decoded from their code (goframe.h); one whose frame does not
 * decode gets an unsupported rule, which stops the walk there with that
 * reason.
 */
#ifndef UWPROF_TOOL_OUTERMOST_H
#define UWPROF_TOOL_OUTERMOST_H

#include "cfi.h"
#include "elf_file.h"

/* uwprof_cfi_fde.cie of an FDE replaced by an outermost frame's row. */
#define UWPROF_OUTERMOST_CIE	(UINT32_MAX - 1)
/* uwprof_cfi_fde.cie of a stack-switching Go function's FDE. */
#define UWPROF_GOSWITCH_CIE	(UINT32_MAX - 2)
/* uwprof_cfi_fde.cie of Go's signal handler entry (arm64). */
#define UWPROF_GOSIGNAL_CIE	(UINT32_MAX - 3)
/* uwprof_cfi_fde.cie of Go's injected preemption call (arm64). */
#define UWPROF_GOPREEMPT_CIE	(UINT32_MAX - 5)
/* uwprof_cfi_fde.cie of a Go function with a stack-check block (arm64). */
#define UWPROF_GOMORESTACK_CIE	(UINT32_MAX - 6)
/* uwprof_cfi_fde.cie of glibc's arm64 __swapcontext (startctx.h). */
#define UWPROF_SWAPCTX_CIE	(UINT32_MAX - 7)

/*
 * Marks the FDEs of the outermost and stack-switching functions of 'e'
 * (found by name in its symbol table; Go objects only), the CFI-less
 * block at its entry point (any object: the dynamic loader's) and glibc's
 * __start_context and arm64 __swapcontext (startctx.h), adding FDEs where
 * the CFI has none. Returns 0 or -ENOMEM.
 */
int uwprof_outermost_mark(const struct uwprof_elf *e, struct uwprof_cfi *c);

/* Emits the rows of a marked FDE ('c' holds its CFI). */
int uwprof_outermost_run(const struct uwprof_elf *e, struct uwprof_cfi *c,
			 const struct uwprof_cfi_fde *f,
			 uwprof_cfi_row_fn fn, void *ctx);

#endif /* UWPROF_TOOL_OUTERMOST_H */
