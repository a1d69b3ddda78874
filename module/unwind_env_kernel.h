/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel environment of the unwinder core (unwind.c, table_check.c):
 * fixed-width types, errno values, branch hints, the running arch, the
 * user address-space limit, the pointer-authentication strip hook and the
 * user-memory reader. The host tests provide the same names in
 * tests/unwind/unwind_env_host.h.
 *
 * Everything here is usable from NMI: copy_from_user_nofault() disables
 * page faults and returns -EFAULT instead of sleeping on a non-resident page.
 */
#ifndef _UWPROF_UNWIND_ENV_KERNEL_H
#define _UWPROF_UNWIND_ENV_KERNEL_H

#include <linux/types.h>
#include <linux/errno.h>
#include <linux/compiler.h>
#include <linux/bits.h>
#include <linux/uaccess.h>
#include <linux/sched.h>
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
 * Read n bytes of user memory at addr; 0 on success. The core has already
 * checked [addr, addr + n) against UWPROF_ENV_USER_LIMIT.
 */
#define UWPROF_ENV_READ(env, dst, addr, n)				\
	copy_from_user_nofault((dst),					\
			       (const void __user *)(unsigned long)(addr), (n))

#endif /* _UWPROF_UNWIND_ENV_KERNEL_H */
