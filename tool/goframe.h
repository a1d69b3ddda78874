/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Go functions that move sp to the thread's system stack inside a frame
 * of their own (runtime.nanotime1 and runtime.walltime for their vDSO
 * calls): their CFI keeps computing the CFA from sp, which then points
 * into the other stack, and a walk out of the vDSO would read that stack's
 * stale words as return addresses. Their rows are decoded from their code
 * instead: the CFA from sp through Go's prologue and each epilogue, from
 * Go's frame pointer everywhere in between (amd64 and arm64). Their
 * callees are vDSO functions, whose CFI says where they keep it. The same
 * decoding gives the signal handler's entry, which Go's CFI marks as a top
 * frame, rows with a return address.
 */
#ifndef UWPROF_TOOL_GOFRAME_H
#define UWPROF_TOOL_GOFRAME_H

#include <stddef.h>
#include <stdint.h>

#include "cfi.h"

/* 0 when 'code' starts with Go's frame prologue for 'arch', else -errno. */
int uwprof_goframe_check(uint16_t arch, const uint8_t *code, size_t n);

/*
 * Emits the rows of the function at [lo, hi) whose bytes are 'code', the
 * CFA of its body from the frame pointer ('by_fp': it moves sp) or from
 * sp (it does not, and its callees' CFI may not say where they keep the
 * frame pointer: Go's does not). Returns 0, -EINVAL when it does not
 * decode, or what 'fn' returned.
 */
int uwprof_goframe_run(uint16_t arch, const uint8_t *code, uint64_t lo,
		       uint64_t hi, int by_fp, uwprof_cfi_row_fn fn, void *ctx);

#endif /* UWPROF_TOOL_GOFRAME_H */
