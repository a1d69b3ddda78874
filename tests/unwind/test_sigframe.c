// SPDX-License-Identifier: GPL-2.0
/*
 * The signal-frame offsets of unwind_<arch>.h against the system's own
 * headers: glibc's ucontext_t / mcontext_t (<sys/ucontext.h>) and siginfo_t,
 * and the kernel uapi struct sigcontext (checked in sigframe_uapi.c, which
 * cannot share a unit with glibc's headers). Static assertions fail the
 * build; the TAP lines report each value. Built natively (x86_64) and with
 * the aarch64 cross compiler (run under qemu-aarch64 when present).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stddef.h>
#include <sys/ucontext.h>

#include "testlib.h"

#if defined(__x86_64__)
#include "unwind_x86_64.h"

/* rt_sigframe: pretcode (8), then struct ucontext; sp in the trampoline = &uc. */
_Static_assert(offsetof(ucontext_t, uc_mcontext) == UWPROF_SIG_UC_MCONTEXT,
	       "x86_64 uc_mcontext offset");
_Static_assert(offsetof(mcontext_t, gregs) + 8 * REG_RBP == UWPROF_SIG_SC_FP,
	       "x86_64 rbp in sigcontext");
_Static_assert(offsetof(mcontext_t, gregs) + 8 * REG_RSP == UWPROF_SIG_SC_SP,
	       "x86_64 rsp in sigcontext");
_Static_assert(offsetof(mcontext_t, gregs) + 8 * REG_RIP == UWPROF_SIG_SC_PC,
	       "x86_64 rip in sigcontext");

#define UC_FP	(offsetof(ucontext_t, uc_mcontext) + offsetof(mcontext_t, gregs) + 8 * REG_RBP)
#define UC_SP	(offsetof(ucontext_t, uc_mcontext) + offsetof(mcontext_t, gregs) + 8 * REG_RSP)
#define UC_PC	(offsetof(ucontext_t, uc_mcontext) + offsetof(mcontext_t, gregs) + 8 * REG_RIP)
/* The trampoline's sp is &uc: no siginfo before it. */
#define FRAME_UC	0
#elif defined(__aarch64__)
#include "unwind_arm64.h"

/* rt_sigframe: siginfo, then struct ucontext; sp in the trampoline = frame. */
_Static_assert(sizeof(siginfo_t) == UWPROF_SIG_SIGINFO_SIZE, "arm64 siginfo size");
_Static_assert(offsetof(ucontext_t, uc_mcontext) == UWPROF_SIG_UC_MCONTEXT,
	       "arm64 uc_mcontext offset");
_Static_assert(offsetof(mcontext_t, regs[29]) == UWPROF_SIG_SC_FP, "arm64 x29");
_Static_assert(offsetof(mcontext_t, regs[30]) == UWPROF_SIG_SC_LR, "arm64 x30");
_Static_assert(offsetof(mcontext_t, sp) == UWPROF_SIG_SC_SP, "arm64 sp");
_Static_assert(offsetof(mcontext_t, pc) == UWPROF_SIG_SC_PC, "arm64 pc");

#define UC_FP	(offsetof(ucontext_t, uc_mcontext) + offsetof(mcontext_t, regs[29]))
#define UC_SP	(offsetof(ucontext_t, uc_mcontext) + offsetof(mcontext_t, sp))
#define UC_PC	(offsetof(ucontext_t, uc_mcontext) + offsetof(mcontext_t, pc))
#define FRAME_UC	sizeof(siginfo_t)
#endif

/* From sigframe_uapi.c: the uapi struct sigcontext's offsets. */
void uapi_sigcontext_offsets(size_t *fp, size_t *sp, size_t *pc);

int main(void)
{
	struct tap t = { 0 };
	size_t fp, sp, pc;
	u64 rd = UWPROF_SIG_READ_OFF;

	tap_diag("signal frame layout, %s", UWPROF_ARCH_ID == UWPROF_ARCH_X86_64 ?
		 "x86_64" : "arm64");
	tap_ok(&t, FRAME_UC + UC_FP == rd + 8 * UWPROF_SIG_FP_WORD,
	       "fp at frame + %zu (glibc ucontext_t), core reads %llu",
	       (size_t)(FRAME_UC + UC_FP), (unsigned long long)(rd + 8 * UWPROF_SIG_FP_WORD));
	tap_ok(&t, FRAME_UC + UC_SP == rd + 8 * UWPROF_SIG_SP_WORD,
	       "sp at frame + %zu (glibc ucontext_t), core reads %llu",
	       (size_t)(FRAME_UC + UC_SP), (unsigned long long)(rd + 8 * UWPROF_SIG_SP_WORD));
	tap_ok(&t, FRAME_UC + UC_PC == rd + 8 * UWPROF_SIG_PC_WORD,
	       "pc at frame + %zu (glibc ucontext_t), core reads %llu",
	       (size_t)(FRAME_UC + UC_PC), (unsigned long long)(rd + 8 * UWPROF_SIG_PC_WORD));
	uapi_sigcontext_offsets(&fp, &sp, &pc);
	tap_ok(&t, fp == UWPROF_SIG_SC_FP && sp == UWPROF_SIG_SC_SP && pc == UWPROF_SIG_SC_PC,
	       "uapi struct sigcontext: fp %zu sp %zu pc %zu", fp, sp, pc);
	return tap_done(&t);
}
