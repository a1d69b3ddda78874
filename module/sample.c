// SPDX-License-Identifier: GPL-2.0
/*
 * Sampling: one kernel perf event per online CPU (a cpuhp multi-instance
 * state follows hotplug), the overflow handler that unwinds the
 * interrupted task's user stack into the CPU's ring, and the per-CPU
 * statistics.
 *
 * Contexts: uwprof_sample_take() and everything it calls run in NMI
 * (hardware cycles on x86) or hard IRQ (cpu-clock, arm64 PMU): no locks,
 * no allocation, no sleeping, no printing; mappings are read under RCU and
 * user memory through uwprof_compat_user_read_nofault(); the off-CPU probe
 * (offcpu.c) uses the walk and the budget from the scheduler, interrupts
 * off, under the same rules. uwprof_sample_emit_exit()
 * runs from the lifecycle probes with preemption disabled. The rest runs in
 * process context under the session mutex, or in the cpuhp thread of a CPU
 * coming online.
 *
 * Every sampling session has its own sampler (events, rings, scratch,
 * counters); the walk budget is the one thing all of them share, per CPU.
 */
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/cred.h>
#include <linux/error-injection.h>
#include <linux/kernel.h>
#include <linux/percpu.h>
#include <linux/perf_event.h>
#include <linux/preempt.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/stacktrace.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <asm/local64.h>

#include "compat.h"
#include "internal.h"

static enum cpuhp_state uwprof_cpuhp_state;
static bool uwprof_hw_ok;

/* Default data pages per CPU ring (256 KiB with 4 KiB pages). */
#define UWPROF_RING_PAGES_DEFAULT	64

bool uwprof_sample_hw_available(void)
{
	return uwprof_hw_ok;
}

static u32 uwprof_snapshot_max(const struct uwprof_sampler *sp)
{
	if (!sp->snapshot_size)
		return 0;
	return sizeof(struct uwprof_snapshot) +
	       UWPROF_COMPAT_NR_GPR * sizeof(u64) + sp->snapshot_size;
}

static u32 uwprof_rec_max(const struct uwprof_sampler *sp)
{
	u32 n = sp->max_depth + (sp->kstack ? UWPROF_KSTACK_MAX : 0);

	return sizeof(struct uwprof_rec_sample) + n * sizeof(u64) +
	       uwprof_snapshot_max(sp);
}

/* NMI-safe: the pid list is immutable while events exist. */
bool uwprof_sample_traced_pid(const struct uwprof_sampler *sp, u32 tgid)
{
	u32 lo = 0, hi = sp->nr_pids;

	if (sp->flags & UWPROF_START_SYSTEM_WIDE)
		return true;
	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if (sp->pids[mid] == tgid)
			return true;
		if (sp->pids[mid] < tgid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/*
 * Whether 't' descends from the session's owner, by its parent links as
 * they are now. Context: any, including NMI: a parent read under RCU
 * stays valid to read until the lock is dropped, even if it exits.
 */
static bool uwprof_sample_descends(const struct uwprof_sampler *sp,
				   struct task_struct *t)
{
	bool found = false;
	u32 depth;

	rcu_read_lock();
	for (depth = 0; depth < UWPROF_MAX_ANCESTORS; depth++) {
		t = rcu_dereference(t->real_parent);
		if (t->tgid == sp->owner_tgid) {
			found = true;
			break;
		}
		if (t->pid <= 1)
			break;
	}
	rcu_read_unlock();
	return found;
}

/*
 * Whether task 't' passes every filter of the session: pid, comm,
 * descent, cgroup, cheapest first. A comm read while the task renames
 * itself may be torn: that sample is then left out, and the comparison
 * never reads past the 16 bytes. Context: any, including NMI.
 */
bool uwprof_sample_traced(const struct uwprof_sampler *sp,
			  struct task_struct *t)
{
	if (!uwprof_sample_traced_pid(sp, t->tgid))
		return false;
	if ((sp->flags & UWPROF_START_COMM) &&
	    strncmp(t->comm, sp->comm, sizeof(sp->comm)))
		return false;
	if ((sp->flags & UWPROF_START_DESCENDANTS) &&
	    !uwprof_sample_descends(sp, t))
		return false;
	return !sp->cgroup || uwprof_compat_task_in_cgroup(t, sp->cgroup);
}

/*
 * Whether 't' passes the filters under its own name or under 'comm' (a
 * name it is about to take). Context: as uwprof_sample_traced().
 */
bool uwprof_sample_traced_as(const struct uwprof_sampler *sp,
			     struct task_struct *t, const char *comm)
{
	if (uwprof_sample_traced(sp, t))
		return true;
	if (!(sp->flags & UWPROF_START_COMM) ||
	    strncmp(comm, sp->comm, sizeof(sp->comm)) ||
	    !uwprof_sample_traced_pid(sp, t->tgid))
		return false;
	if ((sp->flags & UWPROF_START_DESCENDANTS) &&
	    !uwprof_sample_descends(sp, t))
		return false;
	return !sp->cgroup || uwprof_compat_task_in_cgroup(t, sp->cgroup);
}

static u32 uwprof_hist_bucket(u64 ns)
{
	u64 v = ns >> 6;

	if (!v)
		return 0;
	return min_t(u32, fls64(v) - 1, UWPROF_HIST_BUCKETS - 1);
}

/* Length of the window cpu_max_percent is measured over. */
#define UWPROF_BUDGET_WINDOW_NS	(10 * NSEC_PER_MSEC)

/*
 * The walks' share of one CPU's time (cpu_max_percent): one budget per CPU
 * for every session together, so that two sessions sampling at once cannot
 * take twice the share. Every context that walks updates it (overflow
 * handlers in NMI or hard IRQ, the off-CPU probe with interrupts off), and
 * those nest on a CPU in any order with no guard in common: hence local64
 * operations, single instructions or atomics on this CPU. A walk that
 * another one interrupted is charged the nested walk's time too (it lies
 * between its clock reads): the budget errs on the CPU's side. A window
 * restart that races a nested charge may forget that one charge.
 */
struct uwprof_budget {
	local64_t start;	/* the current window's start, ns */
	local64_t used;		/* walk ns spent in it */
};

static DEFINE_PER_CPU(struct uwprof_budget, uwprof_budget);

/*
 * Whether this CPU's walks have used their share of the current window,
 * which starts anew once it is over. 'now' may predate a start a nested
 * context set: the signed difference then keeps the window.
 * Context: NMI, hard IRQ or the sched_switch probe (interrupts off).
 */
bool uwprof_sample_over_budget(u64 now)
{
	struct uwprof_budget *b = this_cpu_ptr(&uwprof_budget);
	u32 pct = READ_ONCE(uwprof_cpu_max_percent);
	s64 start;

	if (pct >= 100)
		return false;
	start = local64_read(&b->start);
	if ((s64)(now - start) >= (s64)UWPROF_BUDGET_WINDOW_NS &&
	    local64_cmpxchg(&b->start, start, now) == start)
		local64_set(&b->used, 0);
	return local64_read(&b->used) >= UWPROF_BUDGET_WINDOW_NS / 100 * pct;
}

/* A walk of 'ns' on this CPU. Context: as uwprof_sample_over_budget(). */
void uwprof_sample_charge(u64 ns)
{
	local64_add(ns, &this_cpu_ptr(&uwprof_budget)->used);
}

/*
 * Walk ns this CPU has left in the current window, U64_MAX without a
 * limit. Context: as uwprof_sample_over_budget(), after it.
 */
static u64 uwprof_sample_budget_left(void)
{
	u32 pct = READ_ONCE(uwprof_cpu_max_percent);
	u64 used, max = UWPROF_BUDGET_WINDOW_NS / 100 * pct;

	if (pct >= 100)
		return U64_MAX;
	used = local64_read(&this_cpu_ptr(&uwprof_budget)->used);
	return used < max ? max - used : 0;
}

/*
 * Kernel frames of the interrupted context, outermost last. stack_trace_save()
 * is the exported walker usable from NMI; it starts in this handler, so the
 * frames up to the interrupted pc (reported by the walkers when they cross
 * the exception frame) are dropped. Without a match only the pc is kept.
 * Context: NMI or hard IRQ.
 */
static u32 uwprof_sample_kstack(struct uwprof_scratch *sc, struct pt_regs *regs,
				u64 *ips)
{
	unsigned long ip = instruction_pointer(regs);
	u32 n, i, k = 0;

	n = stack_trace_save(sc->kstack, ARRAY_SIZE(sc->kstack), 0);
	for (i = 0; i < n; i++)
		if (sc->kstack[i] == ip)
			break;
	if (i == n) {
		ips[0] = ip;
		return 1;
	}
	for (; i < n && k < UWPROF_KSTACK_MAX; i++)
		ips[k++] = sc->kstack[i];
	return k;
}

/*
 * Context: NMI or hard IRQ, inside the ring guard. 'known': the process has
 * mappings (the walk stopped at NO_MAP); only then is the reader woken at
 * once. Processes nobody uploaded are news the reader can take at its own
 * pace: system-wide they include the reader itself, whose every wake would
 * be sampled and wake it again.
 */
static void uwprof_sample_unknown(struct uwprof_sampler *sp,
				  struct uwprof_scratch *sc,
				  struct uwprof_ring *r, u32 tgid, u32 tid,
				  u64 addr, u64 now, bool known)
{
	struct uwprof_pcpu_stats __percpu *st = sp->stats;
	struct uwprof_rec_unknown_map rec = {
		.hdr = { .type = UWPROF_REC_UNKNOWN_MAP, .size = sizeof(rec) },
		.time_ns = now,
		.pid = tgid,
		.tid = tid,
		.addr = addr,
	};

	/* One report per (process, page) in a row is enough for the tool. */
	if (sc->last_unknown_pid == tgid &&
	    sc->last_unknown_page == (addr >> PAGE_SHIFT))
		return;
	if (uwprof_ring_write(r, &rec, sizeof(rec), known)) {
		this_cpu_inc(st->lost);
		return;
	}
	sc->last_unknown_pid = tgid;
	sc->last_unknown_page = addr >> PAGE_SHIFT;
	this_cpu_inc(st->unknown_maps);
}

/*
 * What a stack copy costs, for deciding its size before it starts: a copy
 * of 64 KiB from memory not in any cache took a median 6.9 us (p90 8.8 us)
 * on the development host, 107 (138) ns per KiB; 6 bytes per ns errs on
 * the CPU's side.
 */
#define UWPROF_SNAP_BYTES_PER_NS	6

/*
 * Stack bytes a snapshot may copy in 'ns': the session's size, or less
 * (a multiple of 8) when that would take longer.
 */
static u32 uwprof_sample_snapshot_fit(const struct uwprof_sampler *sp, u64 ns)
{
	if (ns >= sp->snapshot_size / UWPROF_SNAP_BYTES_PER_NS + 1)
		return sp->snapshot_size;
	return round_down((u32)ns * UWPROF_SNAP_BYTES_PER_NS, 8);
}

/*
 * Appends to a record whose walk stopped for want of a mapping what the
 * reader needs to finish it: the registers of the frame it stopped at, the
 * interrupted general registers while they still apply, and the stack from
 * that frame's sp up to the session's size or the first unreadable page,
 * or up to 'max' bytes (below the size: what the time left allows; the
 * snapshot says so with UWPROF_SNAP_TIME). Returns the bytes appended (a
 * multiple of 8). Context: NMI or hard IRQ;
 * uwprof_compat_user_read_nofault() checks that current's mm is the one
 * loaded.
 */
static u32 uwprof_sample_snapshot(const struct uwprof_sampler *sp, void *dst,
				  const struct uwprof_regs *at, u32 flags,
				  const struct pt_regs *uregs, u32 max)
{
	struct uwprof_snapshot *sn = dst;
	u64 *gpr = (u64 *)(sn + 1);
	u32 i, nr_gpr = 0, got = 0, chunk;
	u64 addr = at->sp;
	u8 *stack;

	if (!(flags & UWPROF_SNAP_NO_GPR)) {
		for (i = 0; i < UWPROF_COMPAT_NR_GPR; i++)
			if (!uwprof_compat_user_gpr(uregs, i, &gpr[i]))
				gpr[i] = 0;
		nr_gpr = UWPROF_COMPAT_NR_GPR;
	}
	stack = (u8 *)(gpr + nr_gpr);
	while (got < max && addr + got < TASK_SIZE) {
		chunk = min_t(u64, PAGE_SIZE - offset_in_page(addr + got),
			      max - got);
		if (uwprof_compat_user_read_nofault(stack + got,
						    u64_to_user_ptr(addr + got),
						    chunk))
			break;
		got += chunk;
	}
	if (got == max)
		flags |= UWPROF_SNAP_CUT;
	if (max < sp->snapshot_size)
		flags |= UWPROF_SNAP_TIME;
	memset(stack + got, 0, ALIGN(got, 8) - got);

	sn->pc = at->pc;
	sn->sp = at->sp;
	sn->fp = at->fp;
	sn->lr = at->lr;
	sn->flags = flags;
	sn->nr_gpr = nr_gpr;
	sn->stack_size = got;
	sn->__reserved = 0;
	return sizeof(*sn) + nr_gpr * sizeof(u64) + ALIGN(got, 8);
}

/*
 * Whether current is inside execve with user registers and mappings that
 * do not belong together. From exec_mmap() until the ELF loader has mapped
 * the new image, the registers still describe the old image, whose address
 * space is gone: the new mm comes zeroed from mm_alloc() and gets
 * start_code only then. From start_thread() until the exec probe marks the
 * process's entry dead, the registers are the new image's (sp is still
 * start_stack: no user code ran) but the mappings and tables the old
 * one's. Before exec_mmap() registers, mm and mappings all match, and
 * every mm of a running program has start_code set.
 */
static bool uwprof_sample_in_exec_gap(struct pt_regs *uregs)
{
	const struct mm_struct *mm = current->mm;

	return current->in_execve &&
	       (!READ_ONCE(mm->start_code) ||
		user_stack_pointer(uregs) == READ_ONCE(mm->start_stack));
}

/*
 * Walks current's user stack from 'uregs' with the mappings of 'tgid' into
 * ips[] (at most max_depth frames, until ktime_get_mono_fast_ns() reaches
 * 'deadline': then UWPROF_STOP_TIME); a process without mappings gets its pc
 * and UWPROF_STOP_NO_PROCESS, a task inside execve no frame and
 * UWPROF_SAMPLE_EXEC in res->flags. Context: NMI, hard IRQ or the scheduler with
 * interrupts off, inside this CPU's ring guard (the scratch is its own).
 */
void uwprof_sample_walk(struct uwprof_sampler *sp, struct uwprof_scratch *sc,
			struct pt_regs *uregs, u32 tgid, u64 *ips,
			u32 max_depth, u64 deadline,
			struct uwprof_unwind_res *res)
{
	struct uwprof_kenv kenv = {};
	const struct uwprof_proc *p;

	if (uwprof_sample_in_exec_gap(uregs)) {
		res->nr = 0;
		res->stop = UWPROF_STOP_READ;
		res->flags = UWPROF_SAMPLE_EXEC;
		return;
	}
	rcu_read_lock();
	p = xa_load(&sp->s->procs, tgid);
	/* Dead: the mappings of an image that exec'd away, or that exited. */
	if (p && !READ_ONCE(p->dead)) {
		struct uwprof_unwind_req req = {
			.maps = p->maps,
			.nr_maps = p->nr_maps,
			.ips = ips,
			.max_depth = max_depth,
			.cache = &sc->rule_cache,
			.maps_id = p->id,
			.env = &kenv,
			.deadline = deadline,
			.py = p->py,
			.py_seen = sc->py_seen,
		};

		if (sp->flags & UWPROF_START_NO_FP_FALLBACK)
			req.flags |= UWPROF_UNWIND_NO_FP_FALLBACK;
		uwprof_compat_user_regs_get(uregs, &req.regs);
		kenv.uregs = uregs;
		if (p->py) {
			kenv.tp = uwprof_compat_user_tp();
			kenv.tid = task_pid_vnr(current);
		}
		pagefault_disable();
		uwprof_unwind_user(&req, res);
		pagefault_enable();
	} else {
		uwprof_compat_user_regs_get(uregs, &res->at);
		ips[0] = res->at.pc;
		res->nr = 1;
		res->stop = UWPROF_STOP_NO_PROCESS;
		res->unknown_pc = res->at.pc;
	}
	rcu_read_unlock();
}

/*
 * One sample of the task interrupted on this CPU: filter, ring guard,
 * budget, walk, snapshot, ring write. 'period' goes into the record as is.
 * Context: NMI (hardware cycles on x86, the NMI test hook) or hard IRQ,
 * with 'sp' kept alive by the caller (a perf event of it, or RCU). No
 * locks, no allocation, no sleeping, no printing.
 */
void uwprof_sample_take(struct uwprof_sampler *sp, struct pt_regs *regs,
			u64 period)
{
	struct uwprof_pcpu_stats __percpu *st = sp->stats;
	struct task_struct *t = current;
	struct uwprof_unwind_res res = {};
	struct uwprof_rec_sample *rec;
	struct uwprof_scratch *sc;
	struct uwprof_ring *r;
	struct pt_regs *uregs;
	u32 cpu, tgid, nk = 0, snap = 0, snap_max;
	u64 t0, t1, deadline, left, charged = 0;

	this_cpu_inc(st->events);
	if ((t->flags & (PF_KTHREAD | UWPROF_PF_USER_WORKER)) || !t->mm) {
		this_cpu_inc(st->skipped_kthread);
		return;
	}
	uregs = user_mode(regs) ? regs : task_pt_regs(t);
	if (uwprof_compat_user_regs(uregs)) {
		this_cpu_inc(st->skipped_compat);
		return;
	}
	tgid = t->tgid;
	if (!uwprof_sample_traced(sp, t)) {
		this_cpu_inc(st->skipped_filter);
		return;
	}

	cpu = smp_processor_id();
	r = &sp->rings->ring[cpu];
	if (!uwprof_ring_enter(r)) {
		uwprof_ring_count_nested(r);
		this_cpu_inc(st->lost);
		this_cpu_inc(st->lost_samples);
		return;
	}
	sc = sp->scratch[cpu];
	rec = &sc->rec;

	t0 = ktime_get_mono_fast_ns();
	if (uwprof_sample_over_budget(t0)) {
		uwprof_ring_exit(r);
		this_cpu_inc(st->skipped_throttle);
		return;
	}
	if (sp->kstack && !user_mode(regs))
		nk = uwprof_sample_kstack(sc, regs, rec->ips);

	deadline = t0 + (u64)READ_ONCE(uwprof_walk_max_us) * NSEC_PER_USEC;
	uwprof_sample_walk(sp, sc, uregs, tgid, rec->ips + nk, sp->max_depth,
			   deadline, &res);
	/*
	 * The reader does not finish walks of itself, nor walks with Python
	 * frames past their stop. The copy is sized to the time the walk and
	 * the CPU's budget have left, and charged before it starts, so that
	 * neither is overrun by it.
	 */
	if (sp->snapshot_size && tgid != sp->owner_tgid && !res.py_left &&
	    (res.stop == UWPROF_STOP_NO_MAP || res.stop == UWPROF_STOP_NO_PROCESS)) {
		t1 = ktime_get_mono_fast_ns();
		charged = t1 - t0;
		left = uwprof_sample_budget_left();
		left = min(left > charged ? left - charged : 0,
			   t1 < deadline ? deadline - t1 : 0);
		snap_max = uwprof_sample_snapshot_fit(sp, left);
		charged += snap_max / UWPROF_SNAP_BYTES_PER_NS;
		uwprof_sample_charge(charged);
		snap = uwprof_sample_snapshot(sp, rec->ips + nk + res.nr,
					      &res.at, res.at_flags, uregs,
					      snap_max);
	}
	t1 = ktime_get_mono_fast_ns();
	if (t1 - t0 > charged)
		uwprof_sample_charge(t1 - t0 - charged);

	this_cpu_inc(st->stop[res.stop < UWPROF_STOP__COUNT ? res.stop : 0]);
	this_cpu_inc(st->hist[uwprof_hist_bucket(t1 - t0)]);
	this_cpu_add(st->unwind_ns, t1 - t0);

	rec->hdr.type = UWPROF_REC_SAMPLE;
	rec->hdr.size = sizeof(*rec) + (nk + res.nr) * sizeof(u64) + snap;
	rec->time_ns = t0;
	rec->pid = tgid;
	rec->tid = t->pid;
	rec->cpu = cpu;
	rec->flags = (res.stop & UWPROF_SAMPLE_STOP_MASK) |
		     (res.flags & (UWPROF_SAMPLE_FP_USED | UWPROF_SAMPLE_EXEC |
				   UWPROF_SAMPLE_PYTHON)) |
		     (user_mode(regs) ? 0 : UWPROF_SAMPLE_IN_KERNEL) |
		     (snap ? UWPROF_SAMPLE_SNAPSHOT : 0);
	rec->nr_kernel = nk;
	rec->nr_user = res.nr;
	rec->__reserved = 0;
	rec->period = period;

	/*
	 * The reader reads each code object from the process soon after its
	 * first sample: the interpreter frees code (a module's or a class's
	 * body, once run) and reuses its memory within milliseconds, while a
	 * reader woken only as rings fill comes seconds later. Hot code stays
	 * in the walk's filter and wakes no one.
	 */
	if (uwprof_ring_write(r, rec, rec->hdr.size, res.py_fresh)) {
		this_cpu_inc(st->lost);
		this_cpu_inc(st->lost_samples);
	} else {
		this_cpu_inc(st->samples);
		if (in_nmi())
			this_cpu_inc(st->nmi_samples);
		this_cpu_add(st->frames, res.nr);
		this_cpu_add(st->fp_frames, res.fp_frames);
		if (snap) {
			const struct uwprof_snapshot *sn =
				(const void *)(rec->ips + nk + res.nr);

			this_cpu_inc(st->snapshots);
			this_cpu_add(st->snapshot_bytes, sn->stack_size);
			if (sn->flags & UWPROF_SNAP_TIME)
				this_cpu_inc(st->snapshots_time_cut);
		}
	}

	if (res.stop == UWPROF_STOP_NO_MAP || res.stop == UWPROF_STOP_NO_PROCESS)
		uwprof_sample_unknown(sp, sc, r, tgid, t->pid, res.unknown_pc, t0,
				      res.stop == UWPROF_STOP_NO_MAP);
	uwprof_ring_exit(r);
}

/* The perf overflow handler. Context: as uwprof_sample_take(). */
static void uwprof_sample_overflow(struct perf_event *event,
				   struct perf_sample_data *data,
				   struct pt_regs *regs)
{
	struct uwprof_sampler *sp = event->overflow_handler_context;

	if (uwprof_compat_event_throttled(event))
		this_cpu_inc(sp->stats->kernel_throttles);
	uwprof_sample_take(sp, regs, data->period);
}

/*
 * A lifecycle record into this CPU's ring; false when it was lost.
 * Context: a lifecycle probe, preemption disabled; interrupts (and the
 * sample path) may nest.
 */
bool uwprof_sample_emit(struct uwprof_sampler *sp, const void *rec, u32 size,
			bool wake)
{
	struct uwprof_ring *r = &sp->rings->ring[smp_processor_id()];
	bool ok;

	if (!uwprof_ring_enter(r)) {
		uwprof_ring_count_nested(r);
		this_cpu_inc(sp->stats->lost);
		return false;
	}
	ok = !uwprof_ring_write(r, rec, size, wake);
	if (!ok)
		this_cpu_inc(sp->stats->lost);
	uwprof_ring_exit(r);
	return ok;
}

/*
 * A traced process exited (comm NULL) or exec'd and is now named 'comm'.
 * Context: as uwprof_sample_emit().
 */
void uwprof_sample_emit_exit(struct uwprof_sampler *sp, u32 tgid,
			     const char *comm)
{
	struct uwprof_rec_exit rec = {
		.hdr = { .type = UWPROF_REC_EXIT, .size = sizeof(rec) },
		.time_ns = ktime_get_mono_fast_ns(),
		.pid = tgid,
		.exec = !!comm,
	};

	if (comm)
		strscpy_pad(rec.comm, comm, sizeof(rec.comm));

	if (uwprof_sample_emit(sp, &rec, sizeof(rec), true))
		this_cpu_inc(sp->stats->exit_records);
}

/*
 * A traced process was given its parent's mappings at fork. Not urgent:
 * its samples unwind already. Context: as uwprof_sample_emit().
 */
void uwprof_sample_emit_fork(struct uwprof_sampler *sp, u32 pid, u32 ppid)
{
	struct uwprof_rec_fork rec = {
		.hdr = { .type = UWPROF_REC_FORK, .size = sizeof(rec) },
		.time_ns = ktime_get_mono_fast_ns(),
		.pid = pid,
		.ppid = ppid,
	};

	if (uwprof_sample_emit(sp, &rec, sizeof(rec), false))
		this_cpu_inc(sp->stats->fork_records);
}

/*
 * Thread 't', sampled by this session, takes the name 'comm' now.
 * Context: as uwprof_sample_emit(); t->comm still holds the old name.
 */
void uwprof_sample_emit_comm(struct uwprof_sampler *sp, struct task_struct *t,
			     const char *comm)
{
	struct uwprof_rec_comm rec = {
		.hdr = { .type = UWPROF_REC_COMM, .size = sizeof(rec) },
		.time_ns = ktime_get_mono_fast_ns(),
		.pid = t->tgid,
		.tid = t->pid,
	};

	strscpy_pad(rec.comm, comm, sizeof(rec.comm));
	strscpy_pad(rec.old_comm, t->comm, sizeof(rec.old_comm));
	uwprof_sample_emit(sp, &rec, sizeof(rec), false);
}

static struct perf_event *uwprof_sample_event(struct uwprof_sampler *sp,
					      unsigned int cpu, bool hw)
{
	struct perf_event_attr attr = {
		.size		= sizeof(attr),
		.type		= hw ? PERF_TYPE_HARDWARE : PERF_TYPE_SOFTWARE,
		.config		= hw ? PERF_COUNT_HW_CPU_CYCLES :
				       PERF_COUNT_SW_CPU_CLOCK,
		.sample_freq	= sp->freq_hz,
		.freq		= 1,
		.exclude_hv	= 1,
		/* The arm64 PMU refuses exclude_idle; the idle task is skipped anyway. */
		.exclude_idle	= !hw,
	};

	return perf_event_create_kernel_counter(&attr, cpu, NULL,
						uwprof_sample_overflow, sp);
}

/*
 * START, in the caller's context under the hotplug lock, for every CPU
 * online then; later, the cpuhp thread of a CPU coming online. Event
 * creation runs the LSM perf_event hooks, which look at the current task:
 * the hotplug thread answers with the credentials of the task that
 * started the session, so a CPU coming online gets no event its starter
 * could not have created.
 */
static void uwprof_sample_cpu_create(struct uwprof_sampler *sp,
				     unsigned int cpu)
{
	struct perf_event *ev = ERR_PTR(-ENODEV);
	bool forced = sp->flags & UWPROF_START_CYCLES;

	if (sp->hw)
		ev = uwprof_sample_event(sp, cpu, true);
	if (IS_ERR(ev) && !forced)
		ev = uwprof_sample_event(sp, cpu, false);
	else if (!IS_ERR(ev))
		sp->nr_hw++;
	if (IS_ERR(ev)) {
		/* Never fail the hotplug itself: the CPU just goes unsampled. */
		sp->create_err = PTR_ERR(ev);
		return;
	}
	sp->nr_events++;
	WRITE_ONCE(sp->events[cpu], ev);
}

static int uwprof_sample_cpu_online(unsigned int cpu, struct hlist_node *node)
{
	struct uwprof_sampler *sp = hlist_entry(node, struct uwprof_sampler, node);
	const struct cred *old = override_creds(sp->cred);

	uwprof_sample_cpu_create(sp, cpu);
	revert_creds(old);
	return 0;
}

static int uwprof_sample_cpu_offline(unsigned int cpu, struct hlist_node *node)
{
	struct uwprof_sampler *sp = hlist_entry(node, struct uwprof_sampler, node);
	struct perf_event *ev = xchg(&sp->events[cpu], NULL);

	if (ev)
		perf_event_release_kernel(ev);
	return 0;
}

static int uwprof_sample_pid_cmp(const void *a, const void *b)
{
	u32 x = *(const u32 *)a, y = *(const u32 *)b;

	return x < y ? -1 : x > y;
}

/*
 * The filter fields: each set only with its flag; a comm of 1 to 15
 * bytes, NUL-padded, so that it compares equal to a task's comm exactly.
 */
static int uwprof_sample_check_filters(const struct uwprof_start *a)
{
	size_t len = strnlen(a->comm, sizeof(a->comm));

	if (a->__reserved2)
		return -EINVAL;
	if (!(a->flags & UWPROF_START_CGROUP) && a->cgroup_fd)
		return -EINVAL;
	if (!(a->flags & UWPROF_START_COMM))
		return len ? -EINVAL : 0;
	if (!len || len == sizeof(a->comm) ||
	    memchr_inv(a->comm + len, 0, sizeof(a->comm) - len))
		return -EINVAL;
	return 0;
}

static int uwprof_sample_check(const struct uwprof_start *a)
{
	const u32 known = UWPROF_START_SYSTEM_WIDE | UWPROF_START_KERNEL_STACK |
			  UWPROF_START_CPU_CLOCK | UWPROF_START_CYCLES |
			  UWPROF_START_NO_FP_FALLBACK | UWPROF_START_HOLD_EXEC |
			  UWPROF_START_SNAPSHOT | UWPROF_START_OFF_CPU |
			  UWPROF_START_CGROUP | UWPROF_START_COMM |
			  UWPROF_START_MMAP | UWPROF_START_DESCENDANTS;

	if (a->flags & ~known)
		return -EINVAL;
	if ((a->flags & UWPROF_START_CPU_CLOCK) && (a->flags & UWPROF_START_CYCLES))
		return -EINVAL;
	if (!a->freq_hz || a->freq_hz > UWPROF_MAX_FREQ)
		return -EINVAL;
	if (!a->max_depth)
		return -EINVAL;
	if (a->max_depth > UWPROF_MAX_DEPTH)
		return -E2BIG;
	if (a->__reserved)
		return -EINVAL;
	if (!(a->flags & UWPROF_START_SNAPSHOT) && a->snapshot_size)
		return -EINVAL;
	if (a->snapshot_size % 8)
		return -EINVAL;
	if (!(a->flags & UWPROF_START_OFF_CPU) && a->off_cpu_min_ns)
		return -EINVAL;
	if (a->snapshot_size > UWPROF_MAX_SNAPSHOT)
		return -E2BIG;
	if (a->ring_pages && !is_power_of_2(a->ring_pages))
		return -EINVAL;
	if (a->ring_pages > UWPROF_MAX_RING_PAGES)
		return -E2BIG;
	if (uwprof_sample_check_filters(a))
		return -EINVAL;
	if (a->flags & UWPROF_START_SYSTEM_WIDE) {
		if (a->nr_pids || a->pids)
			return -EINVAL;
	} else {
		if (!a->nr_pids || (a->flags & UWPROF_START_DESCENDANTS))
			return -EINVAL;
		if (a->nr_pids > UWPROF_MAX_PIDS)
			return -E2BIG;
	}
	return 0;
}

static int uwprof_sample_pids(struct uwprof_sampler *sp,
			      const struct uwprof_start *a)
{
	u32 i;

	if (!a->nr_pids)
		return 0;
	sp->pids = kcalloc(a->nr_pids, sizeof(u32), GFP_KERNEL_ACCOUNT);
	if (!sp->pids)
		return -ENOMEM;
	if (copy_from_user(sp->pids, u64_to_user_ptr(a->pids),
			   a->nr_pids * sizeof(u32)))
		return -EFAULT;
	for (i = 0; i < a->nr_pids; i++)
		if (!sp->pids[i] || sp->pids[i] > PID_MAX_LIMIT)
			return -EINVAL;
	sort(sp->pids, a->nr_pids, sizeof(u32), uwprof_sample_pid_cmp, NULL);
	sp->nr_pids = a->nr_pids;
	return 0;
}

/* The comm and cgroup filters; the cgroup is referenced until the free. */
static int uwprof_sample_filters(struct uwprof_sampler *sp,
				 const struct uwprof_start *a)
{
	struct cgroup *cg;

	static_assert(sizeof(sp->comm) == sizeof(a->comm));
	memcpy(sp->comm, a->comm, sizeof(sp->comm));
	if (!(a->flags & UWPROF_START_CGROUP))
		return 0;
	cg = uwprof_compat_cgroup_get(a->cgroup_fd);
	if (IS_ERR(cg))
		return PTR_ERR(cg);
	sp->cgroup = cg;
	return 0;
}

/* The ring size in pages: the caller's, or the default grown to fit. */
static int uwprof_sample_ring_pages(const struct uwprof_sampler *sp,
				    u32 asked, u32 *pages)
{
	u64 need = 2ULL * (uwprof_rec_max(sp) + 2 * sizeof(struct uwprof_rec_lost));
	u32 n = asked ? asked : UWPROF_RING_PAGES_DEFAULT;

	if (asked) {
		if (((u64)n << PAGE_SHIFT) < need)
			return -EINVAL;
	} else {
		while (((u64)n << PAGE_SHIFT) < 4 * need)
			n <<= 1;
	}
	*pages = n;
	return 0;
}

/* Process context, session mutex held: validates START and allocates. */
struct uwprof_sampler *uwprof_sample_create(struct uwprof_session *s,
					    void __user *arg)
{
	struct uwprof_sampler *sp;
	struct uwprof_start a;
	u32 pages, cpu;
	int ret;

	/* The first version of the struct ended before snapshot_size. */
	ret = uwprof_dev_copy_args(&a, sizeof(a),
				   offsetof(struct uwprof_start, snapshot_size), arg);
	if (ret)
		return ERR_PTR(ret);
	ret = uwprof_sample_check(&a);
	if (ret)
		return ERR_PTR(ret);
	if ((a.flags & UWPROF_START_KERNEL_STACK) && !s->may_kernel)
		return ERR_PTR(-EPERM);
	if ((a.flags & UWPROF_START_CYCLES) && !uwprof_hw_ok)
		return ERR_PTR(-EOPNOTSUPP);
	if ((a.flags & UWPROF_START_OFF_CPU) && !uwprof_offcpu_available())
		return ERR_PTR(-EOPNOTSUPP);

	sp = kzalloc(sizeof(*sp), GFP_KERNEL_ACCOUNT);
	if (!sp)
		return ERR_PTR(-ENOMEM);
	sp->s = s;
	sp->flags = a.flags;
	sp->freq_hz = a.freq_hz;
	sp->max_depth = a.max_depth;
	sp->owner_tgid = current->tgid;
	sp->cred = get_current_cred();
	if (a.flags & UWPROF_START_SNAPSHOT)
		sp->snapshot_size = a.snapshot_size ? a.snapshot_size :
				    UWPROF_SNAPSHOT_DEFAULT;
	sp->kstack = a.flags & UWPROF_START_KERNEL_STACK;
	sp->hw = !(a.flags & UWPROF_START_CPU_CLOCK) && uwprof_hw_ok;

	ret = uwprof_sample_pids(sp, &a);
	if (!ret)
		ret = uwprof_sample_filters(sp, &a);
	if (ret)
		goto free;
	ret = uwprof_sample_ring_pages(sp, a.ring_pages, &pages);
	if (ret)
		goto free;

	ret = -ENOMEM;
	sp->stats = alloc_percpu_gfp(struct uwprof_pcpu_stats, GFP_KERNEL_ACCOUNT);
	sp->events = kcalloc(nr_cpu_ids, sizeof(*sp->events), GFP_KERNEL_ACCOUNT);
	sp->scratch = kcalloc(nr_cpu_ids, sizeof(*sp->scratch), GFP_KERNEL_ACCOUNT);
	if (!sp->stats || !sp->events || !sp->scratch)
		goto free;
	for_each_possible_cpu(cpu) {
		sp->scratch[cpu] = kvzalloc_node(sizeof(*sp->scratch[cpu]) +
						 uwprof_rec_max(sp),
						 GFP_KERNEL_ACCOUNT, cpu_to_node(cpu));
		if (!sp->scratch[cpu])
			goto free;
	}
	sp->rings = uwprof_ring_alloc(s, pages);
	if (IS_ERR(sp->rings)) {
		ret = PTR_ERR(sp->rings);
		sp->rings = NULL;
		goto free;
	}
	if (a.flags & UWPROF_START_OFF_CPU) {
		ret = uwprof_offcpu_create(sp, a.off_cpu_min_ns);
		if (ret)
			goto free;
	}
	return sp;

free:
	uwprof_sample_free(sp);
	return ERR_PTR(ret);
}

/*
 * Process context: creates the events on every online CPU and keeps them
 * following hotplug. The caller published 'sp' as its session's active
 * sampler first. Open to fail_function, as are the off-CPU and MMAP
 * starts inside it: START's error paths run after the rings were
 * published, which real hosts reach only under memory pressure or with a
 * kprobe that cannot be placed (the ring suite injects them).
 */
int uwprof_sample_run(struct uwprof_sampler *sp)
{
	unsigned int cpu;
	int ret;

	/*
	 * Not cpuhp_state_add_instance(): it would create the events in each
	 * CPU's hotplug thread, out of reach of the caller's LSM context. A
	 * CPU that came online between the two steps has its event from the
	 * callback already; one that went away took its own with it.
	 */
	ret = cpuhp_state_add_instance_nocalls(uwprof_cpuhp_state, &sp->node);
	if (ret)
		return ret;
	cpus_read_lock();
	for_each_online_cpu(cpu)
		if (!sp->events[cpu])
			uwprof_sample_cpu_create(sp, cpu);
	cpus_read_unlock();
	if (!sp->nr_events) {
		cpuhp_state_remove_instance(uwprof_cpuhp_state, &sp->node);
		return sp->create_err ? sp->create_err : -ENODEV;
	}
	ret = uwprof_offcpu_start(sp);
	if (ret)
		goto events;
	if (sp->flags & UWPROF_START_MMAP) {
		ret = uwprof_mmap_get();
		if (ret) {
			uwprof_offcpu_stop(sp);
			goto events;
		}
	}
	return 0;
events:
	cpuhp_state_remove_instance(uwprof_cpuhp_state, &sp->node);
	return ret;
}

ALLOW_ERROR_INJECTION(uwprof_sample_run, ERRNO);

/*
 * Process context: releases every event and waits until no handler can
 * still be running, then emits each ring's final LOST count. The caller
 * already cleared its session's active sampler.
 */
void uwprof_sample_stop(struct uwprof_sampler *sp)
{
	u32 i;

	cpuhp_state_remove_instance(uwprof_cpuhp_state, &sp->node);
	/* Both wait for their probes themselves. */
	uwprof_offcpu_stop(sp);
	if (sp->flags & UWPROF_START_MMAP)
		uwprof_mmap_put();
	/* Handlers in NMI/IRQ and the lifecycle probes are RCU readers. */
	synchronize_rcu();
	for (i = 0; i < sp->rings->nr; i++)
		uwprof_ring_flush_lost(&sp->rings->ring[i]);
}

/* Process context, after uwprof_sample_stop() or before any event existed. */
void uwprof_sample_free(struct uwprof_sampler *sp)
{
	unsigned int cpu;

	if (!sp)
		return;
	uwprof_offcpu_free(sp);
	uwprof_ring_put(sp->rings);
	if (sp->scratch)
		for_each_possible_cpu(cpu)
			kvfree(sp->scratch[cpu]);
	kfree(sp->scratch);
	kfree(sp->events);
	free_percpu(sp->stats);
	kfree(sp->pids);
	if (sp->cgroup)
		uwprof_compat_cgroup_put(sp->cgroup);
	put_cred(sp->cred);
	kfree(sp);
}

/* Process context, session mutex held: sums the per-CPU counters. */
void uwprof_sample_stats(struct uwprof_session *s, struct uwprof_stats *st)
{
	struct uwprof_sampler *sp = s->sampler;
	unsigned int cpu;
	u32 i;

	if (!sp)
		return;
	for_each_possible_cpu(cpu) {
		const struct uwprof_pcpu_stats *c = per_cpu_ptr(sp->stats, cpu);

		st->events += c->events;
		st->samples += c->samples;
		st->frames += c->frames;
		st->lost += c->lost;
		st->lost_samples += c->lost_samples;
		st->skipped_kthread += c->skipped_kthread;
		st->skipped_compat += c->skipped_compat;
		st->skipped_filter += c->skipped_filter;
		st->skipped_throttle += c->skipped_throttle;
		st->fp_frames += c->fp_frames;
		st->unknown_maps += c->unknown_maps;
		st->exit_records += c->exit_records;
		st->snapshots += c->snapshots;
		st->snapshot_bytes += c->snapshot_bytes;
		st->fork_records += c->fork_records;
		st->nmi_samples += c->nmi_samples;
		st->off_cpu_blocks += c->off_cpu_blocks;
		st->off_cpu_samples += c->off_cpu_samples;
		st->off_cpu_short += c->off_cpu_short;
		st->off_cpu_dropped += c->off_cpu_dropped;
		st->off_cpu_lost += c->off_cpu_lost;
		st->mmap_records += c->mmap_records;
		st->kernel_throttles += c->kernel_throttles;
		st->mmap_throttled += c->mmap_throttled;
		for (i = 0; i < UWPROF_STATS_STOPS; i++)
			st->stop[i] += c->stop[i];
		st->stop_time += c->stop[UWPROF_STOP_TIME];
		st->stop_python += c->stop[UWPROF_STOP_PYTHON];
		st->snapshots_time_cut += c->snapshots_time_cut;
		for (i = 0; i < UWPROF_HIST_BUCKETS; i++)
			st->unwind_ns_hist[i] += c->hist[i];
		st->unwind_ns += c->unwind_ns;
	}
}

/* Module load: whether this machine's PMU gives a cycles event. */
static void uwprof_sample_probe_hw(void)
{
	struct perf_event_attr attr = {
		.size		= sizeof(attr),
		.type		= PERF_TYPE_HARDWARE,
		.config		= PERF_COUNT_HW_CPU_CYCLES,
		.sample_period	= 1ULL << 40,
		.disabled	= 1,
	};
	struct perf_event *ev;
	int cpu;

	cpus_read_lock();
	cpu = cpumask_first(cpu_online_mask);
	ev = perf_event_create_kernel_counter(&attr, cpu, NULL, NULL, NULL);
	cpus_read_unlock();
	if (IS_ERR(ev))
		return;
	uwprof_hw_ok = true;
	perf_event_release_kernel(ev);
}

int uwprof_sample_init(void)
{
	int ret;

	uwprof_sample_probe_hw();
	uwprof_offcpu_init();
	ret = cpuhp_setup_state_multi(CPUHP_AP_ONLINE_DYN, "uwprof:online",
				      uwprof_sample_cpu_online,
				      uwprof_sample_cpu_offline);
	if (ret < 0)
		return ret;
	uwprof_cpuhp_state = ret;
	return 0;
}

void uwprof_sample_exit(void)
{
	cpuhp_remove_multi_state(uwprof_cpuhp_state);
}
