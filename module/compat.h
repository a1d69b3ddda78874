/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every kernel-version and architecture difference the module's own files
 * care about lives here, so the .c files stay free of #if. Supported:
 * Linux 5.10 to 7.2 as Debian builds them (bullseye's 5.10, bookworm's 6.1
 * and 6.12, trixie's 6.12 PREEMPT_RT, sid's current kernel), x86_64 and
 * arm64.
 * Everything here is usable from NMI unless it says otherwise.
 */
#ifndef _UWPROF_COMPAT_H
#define _UWPROF_COMPAT_H

#include <linux/version.h>
#include <linux/cgroup.h>
#include <linux/err.h>
#include <linux/mm.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/ptrace.h>
#include <linux/uaccess.h>
#include <linux/uwprof.h>

/* vm_flags became read-only behind accessors in 6.3. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
#define uwprof_compat_vm_flags_set(vma, f)	vm_flags_set(vma, f)
#else
#define uwprof_compat_vm_flags_set(vma, f)	((vma)->vm_flags |= (f))
#endif

/* The largest user address space; arm64 names it only from 5.11 on. */
#if defined(TASK_SIZE_MAX)
#define UWPROF_TASK_SIZE_MAX	TASK_SIZE_MAX
#else
#define UWPROF_TASK_SIZE_MAX	(UL(1) << VA_BITS)
#endif

/* io_uring and vhost workers: user-space-cloned kernel threads (6.4+). */
#ifdef PF_USER_WORKER
#define UWPROF_PF_USER_WORKER	PF_USER_WORKER
#else
#define UWPROF_PF_USER_WORKER	0
#endif

/*
 * sched_switch probes: the tracepoint passes prev's state from 5.18 on;
 * before, the probe reads it (the value the tracepoint itself reports).
 * UWPROF_COMPAT_SWITCH_PROBE(name, fn) defines the probe 'name' with the
 * running kernel's prototype calling
 * fn(data, preempt, prev, next, prev_state).
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(5, 18, 0)
#define UWPROF_COMPAT_SWITCH_PROBE(name, fn)				\
static void name(void *data, bool preempt, struct task_struct *prev,	\
		 struct task_struct *next, unsigned int prev_state)	\
{									\
	fn(data, preempt, prev, next, prev_state);			\
}
#else
#if LINUX_VERSION_CODE >= KERNEL_VERSION(5, 14, 0)
#define uwprof_compat_task_state(t)	READ_ONCE((t)->__state)
#else
#define uwprof_compat_task_state(t)	READ_ONCE((t)->state)
#endif
#define UWPROF_COMPAT_SWITCH_PROBE(name, fn)				\
static void name(void *data, bool preempt, struct task_struct *prev,	\
		 struct task_struct *next)				\
{									\
	fn(data, preempt, prev, next,					\
	   (unsigned int)uwprof_compat_task_state(prev));		\
}
#endif

/*
 * Whether 'p' may be dumped and ptrace-attached by a process of its own
 * uid (not after a setuid or setgid exec): a flag of its mm, until kernels
 * that keep it in the task's exec state (<linux/sched/exec_state.h>; no
 * version number to test, so Kbuild looks for the header). Caller in an
 * RCU read-side section.
 */
#ifdef UWPROF_HAVE_EXEC_STATE
#include <linux/sched/exec_state.h>
static inline bool uwprof_compat_dumpable_by_owner(struct task_struct *p)
{
	struct task_exec_state *es = rcu_dereference(p->exec_state);

	return es && es->dumpable == TASK_DUMPABLE_OWNER;
}
#else
#include <linux/sched/coredump.h>
static inline bool uwprof_compat_dumpable_by_owner(struct task_struct *p)
{
	return p->mm && get_dumpable(p->mm) == SUID_DUMP_USER;
}
#endif

/*
 * A tracepoint probe's type against the kernel's own declaration of the
 * tracepoint (<trace/events/...>; unevaluated, nothing is registered), so
 * that a tracepoint whose prototype changed fails the build instead of
 * kCFI's check of the call at run time.
 */
#define UWPROF_COMPAT_PROBE_CHECK(tp, probe)				\
	static_assert(sizeof(register_trace_##tp(probe, NULL)))

/*
 * sched_process_exit passes 'group_dead' from 6.16 on. A probe's type
 * must be the tracepoint's exactly: kCFI kernels check each indirect
 * call. UWPROF_COMPAT_EXIT_PROBE(name, fn) defines the probe 'name' with
 * the running kernel's prototype calling fn(data, p); lifecycle.c checks
 * it against the kernel's own declaration at build time.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 16, 0)
#define UWPROF_COMPAT_EXIT_PROBE(name, fn)				\
static void name(void *data, struct task_struct *p, bool group_dead)	\
{									\
	fn(data, p);							\
}
#else
#define UWPROF_COMPAT_EXIT_PROBE(name, fn)				\
static void name(void *data, struct task_struct *p)			\
{									\
	fn(data, p);							\
}
#endif

/*
 * Unload waits out the lifecycle work callbacks (lifecycle.c) that gave
 * their slot back but still run their last instructions in module text.
 * Tasks RCU ends once every task passed a voluntary switch or user mode,
 * which such a callback reaches only by returning. Kernels without it
 * here do not preempt (Debian's arm64 6.1 and 6.12): a task cannot be
 * switched out between the release and the return, so a normal grace
 * period, which needs every CPU to schedule, ends only after the return.
 */
#if defined(CONFIG_TASKS_RCU)
#define uwprof_compat_sync_tasks()	synchronize_rcu_tasks()
#elif defined(CONFIG_PREEMPTION)
#error "uwprof needs CONFIG_TASKS_RCU on a preemptible kernel"
#else
#define uwprof_compat_sync_tasks()	synchronize_rcu()
#endif

/*
 * The cgroup filter (UWPROF_START_CGROUP). cgroup_get_from_fd() (GPL,
 * 4.11 on) takes a reference on a cgroup v2 directory's cgroup: -EBADF
 * for anything else, -ENOENT once it was removed. The membership test is
 * the inline one BPF's bpf_current_task_under_cgroup() uses from any
 * context, NMI included: it follows task->cgroups, which RCU protects,
 * and compares the cgroup's ancestors array without a lock. Kernels
 * built without cgroups refuse the filter. Getting and putting the
 * reference: process context.
 */
#ifdef CONFIG_CGROUPS
#define UWPROF_COMPAT_CGROUPS	1

static inline struct cgroup *uwprof_compat_cgroup_get(int fd)
{
	return cgroup_get_from_fd(fd);
}

static inline void uwprof_compat_cgroup_put(struct cgroup *cg)
{
	cgroup_put(cg);
}

static inline bool uwprof_compat_task_in_cgroup(struct task_struct *t,
						struct cgroup *cg)
{
	bool in;

	rcu_read_lock();
	in = task_under_cgroup_hierarchy(t, cg);
	rcu_read_unlock();
	return in;
}
#else
#define UWPROF_COMPAT_CGROUPS	0

static inline struct cgroup *uwprof_compat_cgroup_get(int fd)
{
	return ERR_PTR(-EOPNOTSUPP);
}

static inline void uwprof_compat_cgroup_put(struct cgroup *cg)
{
}

static inline bool uwprof_compat_task_in_cgroup(struct task_struct *t,
						struct cgroup *cg)
{
	return false;
}
#endif

/*
 * perf's core throttles an event that overflows more than
 * kernel.perf_event_max_sample_rate allows in a tick: it stops the event
 * until the next tick and marks it by storing ~0 in hw.interrupts (its
 * private MAX_INTERRUPTS, the same value in every supported kernel), then
 * still calls the overflow handler for the interrupt that did it.
 */
#define uwprof_compat_event_throttled(event)	\
	(READ_ONCE((event)->hw.interrupts) == ~0ULL)

#if defined(CONFIG_X86_64)

#include <asm/fsgsbase.h>

#define UWPROF_COMPAT_ARCH	UWPROF_ARCH_X86_64

/* User registers of a 32-bit task (ia32 emulation). */
static inline bool uwprof_compat_user_regs(struct pt_regs *regs)
{
	return !user_64bit_mode(regs);
}

/* A macro: struct uwprof_regs (unwind.h) includes this header. */
#define uwprof_compat_user_regs_get(pt, out)		\
	do {						\
		const struct pt_regs *__r = (pt);	\
		typeof(out) __o = (out);		\
							\
		__o->pc = __r->ip;			\
		__o->sp = __r->sp;			\
		__o->fp = __r->bp;			\
		__o->lr = 0;				\
	} while (0)

/*
 * A user read from the sample path, which may interrupt a context switch.
 * copy_from_user_nofault() refuses unless nmi_uaccess_okay(): on x86 the
 * mm whose tables CR3 holds (cpu_tlbstate.loaded_mm) must be current's.
 */
#define uwprof_compat_user_read_nofault(dst, src, n)	\
	copy_from_user_nofault((dst), (src), (n))

/*
 * current's user thread pointer: the kernel never loads FS for itself, so
 * the register holds the user's value in any context, NMI included.
 */
static inline u64 uwprof_compat_user_tp(void)
{
	return x86_fsbase_read_cpu();
}

/* DWARF numbers 0-15: rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8-r15. */
#define UWPROF_COMPAT_NR_GPR	16

static inline bool uwprof_compat_user_gpr(const struct pt_regs *r,
					  unsigned int regno, u64 *val)
{
	static const unsigned short off[16] = {
		offsetof(struct pt_regs, ax), offsetof(struct pt_regs, dx),
		offsetof(struct pt_regs, cx), offsetof(struct pt_regs, bx),
		offsetof(struct pt_regs, si), offsetof(struct pt_regs, di),
		offsetof(struct pt_regs, bp), offsetof(struct pt_regs, sp),
		offsetof(struct pt_regs, r8), offsetof(struct pt_regs, r9),
		offsetof(struct pt_regs, r10), offsetof(struct pt_regs, r11),
		offsetof(struct pt_regs, r12), offsetof(struct pt_regs, r13),
		offsetof(struct pt_regs, r14), offsetof(struct pt_regs, r15),
	};

	if (!r || regno >= ARRAY_SIZE(off))
		return false;
	*val = *(const unsigned long *)((const char *)r + off[regno]);
	return true;
}

#elif defined(CONFIG_ARM64)

#include <asm/pgtable.h>
#include <asm/sysreg.h>

#define UWPROF_COMPAT_ARCH	UWPROF_ARCH_ARM64

/*
 * current's user thread pointer: TPIDR_EL0 keeps the user's value in the
 * kernel and is switched with the task.
 */
static inline u64 uwprof_compat_user_tp(void)
{
	return read_sysreg(tpidr_el0);
}

static inline bool uwprof_compat_user_regs(struct pt_regs *regs)
{
	return compat_user_mode(regs);
}

#define uwprof_compat_user_regs_get(pt, out)		\
	do {						\
		const struct pt_regs *__r = (pt);	\
		typeof(out) __o = (out);		\
							\
		__o->pc = __r->pc;			\
		__o->sp = __r->sp;			\
		__o->fp = __r->regs[29];		\
		__o->lr = __r->regs[30];		\
	} while (0)

/*
 * The user page-table base a uaccess goes through now. With software PAN
 * in use, TTBR0_EL1 holds the reserved table while in the kernel and
 * uaccess_ttbr0_enable() loads current_thread_info()->ttbr0. switch_mm()
 * writes that of the task coming in, so in the context-switch window
 * current's still names its own tables and such a read is right: the
 * check agrees, and still catches kthread_use_mm() and exec's
 * activate_mm(), which set current->mm before writing it. Otherwise
 * TTBR0_EL1 holds the tables cpu_do_switch_mm() last loaded, whatever
 * current is. KPTI swaps only TTBR1_EL1 on kernel entry and exit:
 * TTBR0_EL1 keeps the user tables.
 */
#ifdef CONFIG_ARM64_SW_TTBR0_PAN
static __always_inline u64 uwprof_compat_user_ttbr0(void)
{
	if (system_uses_ttbr0_pan())
		return READ_ONCE(current_thread_info()->ttbr0);
	return read_sysreg(ttbr0_el1);
}
#else
static __always_inline u64 uwprof_compat_user_ttbr0(void)
{
	return read_sysreg(ttbr0_el1);
}
#endif

/*
 * TTBR0_EL1's ASID (bits 63:48) and CnP (bit 0) fields, as the
 * architecture fixes them: the kernel's names for them changed in 7.x
 * (generated TTBRx_EL1_* replaced TTBR_ASID_MASK and TTBR_CNP_BIT).
 */
#define UWPROF_TTBR_ASID_CNP	(GENMASK_ULL(63, 48) | BIT_ULL(0))

/*
 * Whether the user tables a uaccess goes through now are mm's: the base
 * address cpu_do_switch_mm() or update_saved_ttbr0() wrote for mm's pgd,
 * phys_to_ttbr() packing PA bits 51:48 into bits 5:2 with 52-bit PAs,
 * the ASID (set in TTBR0 only with SW PAN) and CNP bits aside. The
 * reserved table, the idmap and EFI's tables never match a process's mm.
 */
static __always_inline bool uwprof_compat_user_tables_are(struct mm_struct *mm)
{
	u64 base = uwprof_compat_user_ttbr0() & ~(u64)UWPROF_TTBR_ASID_CNP;

	return mm && base == (u64)phys_to_ttbr(virt_to_phys(mm->pgd));
}

/*
 * A user read from the sample path. arm64's nmi_uaccess_okay() is always
 * true, yet a pseudo-NMI (the PMU overflow with CONFIG_ARM64_PSEUDO_NMI)
 * can land in __schedule() after switch_mm() loaded next's tables and
 * before cpu_switch_to() made next current: reading there would copy
 * next's memory under prev's registers. The same holds from the moment
 * kthread_use_mm() or exec_mmap() set current->mm until they load it. So
 * the tables are checked against current's mm first; nothing can switch
 * them between the check and the copy, the caller being in NMI, hard IRQ
 * or the scheduler with interrupts off.
 */
static __always_inline long uwprof_compat_user_read_nofault(void *dst,
							    const void __user *src,
							    size_t n)
{
	if (!uwprof_compat_user_tables_are(current->mm))
		return -EFAULT;
	return copy_from_user_nofault(dst, src, n);
}

/* DWARF numbers 0-30: x0-x30; 31: sp. */
#define UWPROF_COMPAT_NR_GPR	32

static inline bool uwprof_compat_user_gpr(const struct pt_regs *r,
					  unsigned int regno, u64 *val)
{
	if (!r || regno > 31)
		return false;
	*val = regno == 31 ? r->sp : r->regs[regno];
	return true;
}

#else
#error "uwprof supports x86_64 and arm64 only"
#endif

#endif /* _UWPROF_COMPAT_H */
