/* SPDX-License-Identifier: GPL-2.0 */
/*
 * x86_64 facts for the unwinder core (unwind.c, table_check.c): DWARF
 * register numbering, which row kinds exist, frame-pointer layout, where
 * the kernel's rt_sigframe keeps the interrupted registers, and the
 * sigreturn trampoline's code. Included by the core only; any context.
 */
#ifndef _UWPROF_UNWIND_X86_64_H
#define _UWPROF_UNWIND_X86_64_H

#define UWPROF_ARCH_ID			UWPROF_ARCH_X86_64

/* No link register: the return address is always on the stack. */
#define UWPROF_ARCH_LR_REGNO		(-1)
#define UWPROF_ARCH_HAS_PLT		1
#define UWPROF_ARCH_HAS_PAC		0

/*
 * General registers a rule may name (CFA base, saved register), by DWARF
 * number: rax .. r15.
 */
#define UWPROF_ARCH_NR_GPR		16

/*
 * rsp is 8-byte aligned in any code the compilers emit (pushes and calls
 * move it by 8); the frame-pointer record {saved rbp, return address} sits
 * at rbp.
 */
#define UWPROF_ARCH_SP_ALIGN		8
#define UWPROF_ARCH_FP_ALIGN		8
/*
 * push %rbp; mov %rsp, %rbp: the record lies right below the caller's sp,
 * so a frame-pointer step finds that sp exactly.
 */
#define UWPROF_ARCH_FP_GIVES_SP		1

/*
 * Signal frames. The handler returns into the sigreturn trampoline with its
 * ret having popped rt_sigframe.pretcode, so in the trampoline's frame sp
 * points at rt_sigframe.uc (struct ucontext). Its uc_mcontext is struct
 * sigcontext at offset 40 (uc_flags, uc_link, uc_stack precede it), and in
 * that rbp, rsp and rip are at 80, 120 and 128 (r8..r15, rdi, rsi first).
 * One read of 7 words from sp + 120 fetches rbp .. rip. The host tests
 * assert these against <sys/ucontext.h> and <asm/sigcontext.h>.
 */
#define UWPROF_SIG_UC_MCONTEXT		40
#define UWPROF_SIG_SC_FP		80
#define UWPROF_SIG_SC_SP		120
#define UWPROF_SIG_SC_PC		128
#define UWPROF_SIG_READ_OFF		(UWPROF_SIG_UC_MCONTEXT + UWPROF_SIG_SC_FP)
#define UWPROF_SIG_WORDS		7
#define UWPROF_SIG_FP_WORD		0
#define UWPROF_SIG_SP_WORD		((UWPROF_SIG_SC_SP - UWPROF_SIG_SC_FP) / 8)
#define UWPROF_SIG_PC_WORD		((UWPROF_SIG_SC_PC - UWPROF_SIG_SC_FP) / 8)
#define UWPROF_SIG_LR_WORD		(-1)

#ifdef __KERNEL__
#include <linux/build_bug.h>
#include <linux/stddef.h>
#include <asm/sigframe.h>

/* The same offsets from the kernel's own signal frame, at build time. */
#define UWPROF_SIG_FRAME_OFF(m)	\
	(offsetof(struct rt_sigframe, m) - offsetof(struct rt_sigframe, uc))
static_assert(offsetof(struct rt_sigframe, uc) == 8);
static_assert(UWPROF_SIG_FRAME_OFF(uc.uc_mcontext) == UWPROF_SIG_UC_MCONTEXT);
static_assert(UWPROF_SIG_FRAME_OFF(uc.uc_mcontext.bp) ==
	      UWPROF_SIG_READ_OFF + 8 * UWPROF_SIG_FP_WORD);
static_assert(UWPROF_SIG_FRAME_OFF(uc.uc_mcontext.sp) ==
	      UWPROF_SIG_READ_OFF + 8 * UWPROF_SIG_SP_WORD);
static_assert(UWPROF_SIG_FRAME_OFF(uc.uc_mcontext.ip) ==
	      UWPROF_SIG_READ_OFF + 8 * UWPROF_SIG_PC_WORD);
#endif

/*
 * The trampoline every x86_64 libc installs as sa_restorer:
 * mov $15 (rt_sigreturn), %rax; syscall. Recognised by its code when no
 * table row marks it as a signal frame.
 */
#define UWPROF_SIGRETURN_LEN		9
/*
 * Where an interrupted pc can be in it: at the mov, at the syscall, or past
 * it while rt_sigreturn runs (a sample taken in the system call).
 */
#define UWPROF_SIGRETURN_PCS		{ 0, 7, 9 }

static inline bool uwprof_arch_is_sigreturn(const u8 *c)
{
	static const u8 code[UWPROF_SIGRETURN_LEN] = {
		0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05,
	};
	unsigned int i;

	for (i = 0; i < UWPROF_SIGRETURN_LEN; i++)
		if (c[i] != code[i])
			return false;
	return true;
}

/* A direct call is e8 <rel32>, relative to the next instruction. */
#define UWPROF_ARCH_CALL_LEN		5

static inline s32 uwprof_x86_rel32(const u8 *c)
{
	return (s32)(c[0] | c[1] << 8 | c[2] << 16 | (u32)c[3] << 24);
}

/* The target of a direct call; indirect calls name none and return false. */
static inline bool uwprof_arch_call_target(const u8 *c, u64 at, u64 *target)
{
	if (c[0] != 0xe8)
		return false;
	*target = at + UWPROF_ARCH_CALL_LEN + (u64)(s64)uwprof_x86_rel32(c + 1);
	return true;
}

/* Bytes of a PLT stub read to find its GOT slot. */
#define UWPROF_PLT_STUB_READ		11

/*
 * The GOT slot a PLT stub jumps through: jmp *rel32(%rip) (ff 25), after
 * an endbr64 (f3 0f 1e fa) and a bnd prefix (f2) where IBT or MPX stubs
 * have them.
 */
static inline bool uwprof_arch_plt_slot(const u8 *c, u64 at, u64 *slot)
{
	u32 i = 0;

	if (c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e && c[3] == 0xfa)
		i = 4;
	if (c[i] == 0xf2)
		i++;
	if (c[i] != 0xff || c[i + 1] != 0x25)
		return false;
	*slot = at + i + 6 + (u64)(s64)uwprof_x86_rel32(c + i + 2);
	return true;
}

#endif /* _UWPROF_UNWIND_X86_64_H */
