/* SPDX-License-Identifier: GPL-2.0 */
/*
 * glibc's makecontext makes the function it is given look called from the
 * first byte of __start_context (arm64: __startcontext), which sets the
 * context uc_link names or exits: a return, not a call, leads there, and
 * nothing lies above it but the ucontext's own words. Its CFI gives it an
 * ordinary return address (x86_64) or none but lr (arm64), and a walk from
 * inside the context looks its return address up at the byte before it,
 * in padding no FDE covers. So its FDE and that padding byte (arm64: word)
 * get the outermost row (outermost.c), which ends the walk as complete.
 *
 * .dynsym does not name it: its address is makecontext's operand (x86_64:
 * 'lea disp(%rip)'; arm64: adrp, then add, or ldr from a slot a relative
 * relocation fills), taken only when exactly one such operand starts an
 * FDE whose code is __start_context's, and the bytes before it are padding
 * (x86_64: nops from the end of the code before it; arm64: a nop or zero
 * word) that no FDE or sized symbol covers, so that no call returns there.
 */
#ifndef UWPROF_TOOL_STARTCTX_H
#define UWPROF_TOOL_STARTCTX_H

#include <stdint.h>

#include "cfi.h"
#include "elf_file.h"

/*
 * Finds __start_context in 'e' (whose CFI 'c' holds): 1 with its address
 * in *start and in *pad the start of the padding byte (arm64: word) a walk
 * looks up for a return address of *start; 0 when it is not found exactly.
 */
int uwprof_startctx_find(const struct uwprof_elf *e,
			 const struct uwprof_cfi *c, uint64_t *pad,
			 uint64_t *start);

/*
 * arm64 glibc's __swapcontext (see startctx.c): its FDE [lo, hi); from
 * 'lost' to 'in_x1' the return address is in no register and not at a
 * place a rule can name, from 'in_x1' for one instruction it is in x1.
 */
struct uwprof_swapctx {
	uint64_t	lo, hi;
	uint64_t	lost;
	uint64_t	in_x1;
};

/* 1 with *s filled when the code at [lo, hi) is that function's, else 0. */
int uwprof_startctx_swap_code(const struct uwprof_elf *e, uint64_t lo,
			      uint64_t hi, struct uwprof_swapctx *s);

/*
 * 1 with *s filled when 'e' holds exactly that function (found by name,
 * its FDE starting where it does, checked by its code), else 0.
 */
int uwprof_startctx_swap_find(const struct uwprof_elf *e,
			      const struct uwprof_cfi *c,
			      struct uwprof_swapctx *s);

#endif /* UWPROF_TOOL_STARTCTX_H */
