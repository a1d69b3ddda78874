/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel environment of the unwinder core (unwind.c, table_check.c):
 * fixed-width types, errno values, branch hints, the running arch, the
 * user address-space limit, the pointer-authentication strip hook, the
 * clock of walk deadlines and the user-memory reader. The host tests provide the same names in
 * tool/unwind_env_host.h.
 *
 * Everything here is usable from NMI: the sample path runs the walk with
 * page faults disabled, so a non-resident page is an -EFAULT, never a sleep.
 */
#ifndef _UWPROF_UNWIND_ENV_KERNEL_H
#define _UWPROF_UNWIND_ENV_KERNEL_H

#include <linux/types.h>
#include <linux/build_bug.h>
#include <linux/errno.h>
#include <linux/compiler.h>
#include <linux/bits.h>
#include <linux/uaccess.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <asm/processor.h>

#include "compat.h"

/* Which unwind_<arch>.h the core uses. */
#if defined(CONFIG_X86_64)
#define UWPROF_ENV_X86_64	1
#elif defined(CONFIG_ARM64)
#define UWPROF_ENV_ARM64	1
#else
#error "uwprof supports x86_64 and arm64 only"
#endif

/* First address above user space for the current (64-bit) task. */
#define UWPROF_ENV_USER_LIMIT(env)	((u64)TASK_SIZE)

/*
 * Strip pointer-authentication bits from a user return address. compat.h
 * may map uwprof_compat_strip_user_pac() to the kernel's helper of the
 * running version (ptrauth_strip_insn_pac in 6.1, ptrauth_strip_user_insn_pac
 * in 6.12); without it, keeping the bits below the user VA size is exact for
 * user addresses, PAC and top-byte tags living above it.
 */
#ifdef CONFIG_ARM64
#ifdef uwprof_compat_strip_user_pac
#define UWPROF_ENV_STRIP_PAC(env, a)	((u64)uwprof_compat_strip_user_pac(a))
#else
#define UWPROF_ENV_STRIP_PAC(env, a)	((a) & GENMASK_ULL(vabits_actual - 1, 0))
#endif
#else
#define UWPROF_ENV_STRIP_PAC(env, a)	(a)
#endif

/*
 * The clock of uwprof_unwind_req.deadline: the one the walk budget and the
 * records' times use, readable in NMI.
 */
#define UWPROF_ENV_NOW(env)	ktime_get_mono_fast_ns()

/* The reader's state for one walk (the request's env in the module). */
struct uwprof_kenv {
	bool uaccess_ok;	/* a read succeeded: user memory is reachable */
	const struct pt_regs *uregs;	/* the interrupted user registers */
	u64 tp;			/* its user thread pointer (Python walks) */
	u32 tid;		/* its id in its own pid namespace (ditto) */
};

#define UWPROF_ENV_TP(env)	(((struct uwprof_kenv *)(env))->tp)
#define UWPROF_ENV_TID(env)	(((struct uwprof_kenv *)(env))->tid)

/* General register 'regno' (DWARF numbering) of the interrupted frame. */
#define UWPROF_ENV_GPR(env, regno, val)					\
	uwprof_compat_user_gpr(((struct uwprof_kenv *)(env))->uregs,	\
			       (regno), (val))

/*
 * Read n bytes of user memory at addr; 0 on success. The core has already
 * checked [addr, addr + n) against UWPROF_ENV_USER_LIMIT, and the caller
 * has disabled page faults for the whole walk.
 *
 * An NMI can land in the middle of a context switch, when the user half of
 * the page tables is not current's. So every read goes through
 * uwprof_compat_user_read_nofault(), which refuses then (compat.h: x86's
 * nmi_uaccess_okay() through copy_from_user_nofault(), a check of the
 * loaded tables on arm64, where that one is always true), until one
 * succeeds; after that nothing can change before the walk ends: the rest
 * use plain accessors, one load per word, as perf's own user callchains
 * do. To the walk a refused read is an unreadable word: UWPROF_STOP_READ.
 */
static __always_inline int uwprof_kenv_read(void *ctx, void *dst, u64 addr,
					    size_t n)
{
	struct uwprof_kenv *k = ctx;
	const u64 __user *p = (const u64 __user *)(unsigned long)addr;

	if (unlikely(!k->uaccess_ok)) {
		if (uwprof_compat_user_read_nofault(dst, p, n))
			return -EFAULT;
		k->uaccess_ok = true;
		return 0;
	}
	if (n == 8 || n == 16) {
		u64 w[2];

		/* dst may be a byte array (code): words go through w. */
		if (__get_user(w[0], p) || (n == 16 && __get_user(w[1], p + 1)))
			return -EFAULT;
		memcpy(dst, w, n);
		return 0;
	}
	return __copy_from_user_inatomic(dst, p, n) ? -EFAULT : 0;
}

#define UWPROF_ENV_READ(env, dst, addr, n)				\
	uwprof_kenv_read((env), (dst), (addr), (n))

/*
 * The words at base + off[0 .. n - 1], all inside [base, base + span)
 * (which the core has checked against the user limit): several fields of
 * one object in one user-access window, a load each, where a read per
 * word costs a call and a speculation barrier each (the Python walk reads
 * four words of each frame and five of each code object). Until a read
 * has proven user memory reachable, the first read goes the careful way
 * (uwprof_kenv_read()).
 */
#define UWPROF_KENV_WORDS_MAX	6

static __always_inline int uwprof_kenv_read_words(void *ctx, u64 base,
						  u32 span, const u32 *off,
						  u64 *dst, u32 n)
{
	struct uwprof_kenv *k = ctx;
	const char __user *p = (const char __user *)(unsigned long)base;

	BUILD_BUG_ON(n > UWPROF_KENV_WORDS_MAX);
	/* Read again below, with the others. */
	if (unlikely(!k->uaccess_ok) &&
	    uwprof_kenv_read(ctx, &dst[0], base + off[0], 8))
		return -EFAULT;
	if (!user_access_begin(p, span))
		return -EFAULT;
	/*
	 * Written out: n is a constant at every call site, and no compiler
	 * unrolls a loop around an asm goto.
	 */
#define UWPROF_KENV_WORD(i)						\
	do {								\
		if ((i) < n)						\
			unsafe_get_user(dst[i],				\
				(const u64 __user *)(p + off[i]), fault); \
	} while (0)
	UWPROF_KENV_WORD(0);
	UWPROF_KENV_WORD(1);
	UWPROF_KENV_WORD(2);
	UWPROF_KENV_WORD(3);
	UWPROF_KENV_WORD(4);
	UWPROF_KENV_WORD(5);
#undef UWPROF_KENV_WORD
	user_access_end();
	return 0;
fault:
	user_access_end();
	return -EFAULT;
}

#define UWPROF_ENV_READ_WORDS(env, base, span, off, dst, n)		\
	uwprof_kenv_read_words((env), (base), (span), (off), (dst), (n))

#endif /* _UWPROF_UNWIND_ENV_KERNEL_H */
