/* SPDX-License-Identifier: GPL-2.0 */
/*
 * arm64 facts for the unwinder core (unwind.c, table_check.c): DWARF
 * register numbering, the link register, frame-record layout, where the
 * kernel's rt_sigframe keeps the interrupted registers, and the vDSO
 * sigreturn trampoline's code. Included by the core only; any context.
 */
#ifndef _UWPROF_UNWIND_ARM64_H
#define _UWPROF_UNWIND_ARM64_H

#define UWPROF_ARCH_ID			UWPROF_ARCH_ARM64

/* x30 holds the return address until a function saves it. */
#define UWPROF_ARCH_LR_REGNO		30
#define UWPROF_ARCH_HAS_PLT		0
#define UWPROF_ARCH_HAS_PAC		1

/*
 * General registers a saved-register rule may name, by DWARF number:
 * x0 .. x29 (x30 is the return address, 31 is sp).
 */
#define UWPROF_ARCH_NR_GPR		30

/*
 * sp is 16-byte aligned whenever it is used to access memory (the AAPCS64
 * requires it and the hardware checks it); frame records {x29, x30} are
 * stored at x29 with 8-byte alignment at least.
 */
#define UWPROF_ARCH_SP_ALIGN		16
#define UWPROF_ARCH_FP_ALIGN		8
/*
 * A frame record may sit anywhere in its frame (GCC puts it at the
 * bottom: stp x29, x30, [sp, #-N]!), so after a frame-pointer step the
 * caller's sp is only known to lie above the record.
 */
#define UWPROF_ARCH_FP_GIVES_SP		0

/*
 * Signal frames. The kernel points the handler's sp at struct rt_sigframe
 * { siginfo (128 bytes); struct ucontext uc; } and its x30 at the
 * trampoline, so in the trampoline's frame sp is the rt_sigframe. In the
 * kernel's struct ucontext, uc_mcontext (struct sigcontext, 16-byte
 * aligned) is at 176: uc_flags, uc_link, uc_stack (24), an 8-byte sigset
 * padded to glibc's 128 bytes, then alignment. In struct sigcontext,
 * fault_address comes first, then regs[31], sp, pc: x29 at 240, x30 at 248,
 * sp at 256, pc at 264. One read of 4 words from sp + 128 + 176 + 240.
 * Beside the frame the kernel pushes a frame record {interrupted x29, x30}
 * and points the handler's x29 at it.
 * The arm64 test build asserts these against the cross <asm/sigcontext.h>
 * and <sys/ucontext.h>.
 */
#define UWPROF_SIG_SIGINFO_SIZE		128
#define UWPROF_SIG_UC_MCONTEXT		176
#define UWPROF_SIG_SC_FP		240
#define UWPROF_SIG_SC_LR		248
#define UWPROF_SIG_SC_SP		256
#define UWPROF_SIG_SC_PC		264
#define UWPROF_SIG_READ_OFF		\
	(UWPROF_SIG_SIGINFO_SIZE + UWPROF_SIG_UC_MCONTEXT + UWPROF_SIG_SC_FP)
#define UWPROF_SIG_WORDS		4
#define UWPROF_SIG_FP_WORD		0
#define UWPROF_SIG_LR_WORD		1
#define UWPROF_SIG_SP_WORD		2
#define UWPROF_SIG_PC_WORD		3

#ifdef __KERNEL__
#include <linux/build_bug.h>
#include <linux/stddef.h>
#include <linux/signal.h>
#include <asm/ucontext.h>

/*
 * The kernel's rt_sigframe is private to signal.c; its parts are not: the
 * same offsets from them, at build time.
 */
static_assert(sizeof(struct siginfo) == UWPROF_SIG_SIGINFO_SIZE);
static_assert(offsetof(struct ucontext, uc_mcontext) == UWPROF_SIG_UC_MCONTEXT);
static_assert(offsetof(struct sigcontext, regs[29]) == UWPROF_SIG_SC_FP);
static_assert(offsetof(struct sigcontext, regs[30]) == UWPROF_SIG_SC_LR);
static_assert(offsetof(struct sigcontext, sp) == UWPROF_SIG_SC_SP);
static_assert(offsetof(struct sigcontext, pc) == UWPROF_SIG_SC_PC);
#endif

/*
 * The vDSO's __kernel_rt_sigreturn: mov x8, #139 (rt_sigreturn); svc #0.
 * Its CFI is deliberately absent in the kernel sources, so the code itself
 * is what identifies a signal frame.
 */
#define UWPROF_SIGRETURN_LEN		8
/*
 * Where an interrupted pc can be in it: at the mov, at the svc, or past the
 * svc while rt_sigreturn runs (a sample taken in the system call).
 */
#define UWPROF_SIGRETURN_PCS		{ 0, 4, 8 }

static inline bool uwprof_arch_is_sigreturn(const u8 *c)
{
	/* Instructions are little-endian words. */
	static const u8 code[UWPROF_SIGRETURN_LEN] = {
		0x68, 0x11, 0x80, 0xd2,		/* mov x8, #139 */
		0x01, 0x00, 0x00, 0xd4,		/* svc #0 */
	};
	unsigned int i;

	for (i = 0; i < UWPROF_SIGRETURN_LEN; i++)
		if (c[i] != code[i])
			return false;
	return true;
}

#define UWPROF_ARCH_CALL_LEN		4

static inline u32 uwprof_arm64_insn(const u8 *c)
{
	return c[0] | c[1] << 8 | c[2] << 16 | (u32)c[3] << 24;
}

/* Bytes of a PLT stub read to find its GOT slot. */
#define UWPROF_PLT_STUB_READ		12

/*
 * The GOT slot a PLT stub loads its target from: adrp x16, page; ldr x17,
 * [x16, #off], after a bti c where BTI stubs have one.
 */
static inline bool uwprof_arch_plt_slot(const u8 *c, u64 at, u64 *slot)
{
	u32 adrp = uwprof_arm64_insn(c), ldr;
	s64 page;

	if (adrp == 0xd503245f) {		/* bti c */
		c += 4;
		at += 4;
		adrp = uwprof_arm64_insn(c);
	}
	ldr = uwprof_arm64_insn(c + 4);
	if ((adrp & 0x9f00001f) != 0x90000010 ||	/* adrp x16 */
	    (ldr & 0xffc003ff) != 0xf9400211)		/* ldr x17, [x16, #imm] */
		return false;
	page = ((adrp >> 29) & 3) | ((adrp >> 3) & 0x1ffffc);
	if (page & 0x100000)
		page -= 0x200000;
	*slot = (at & ~0xfffULL) + (u64)(page << 12) + ((ldr >> 10) & 0xfff) * 8;
	return true;
}

/*
 * The target of a direct call: bl <imm26 words>, little-endian. Indirect
 * calls (blr) name no target and return false.
 */
static inline bool uwprof_arch_call_target(const u8 *c, u64 at, u64 *target)
{
	u32 insn = uwprof_arm64_insn(c);
	s64 words = insn & 0x03ffffff;

	if ((insn & 0xfc000000) != 0x94000000)
		return false;
	if (words & 0x02000000)
		words -= 0x04000000;
	*target = at + (u64)(words * 4);
	return true;
}

#endif /* _UWPROF_UNWIND_ARM64_H */
