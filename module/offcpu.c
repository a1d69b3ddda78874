// SPDX-License-Identifier: GPL-2.0
/*
 * Off-CPU samples (UWPROF_START_OFF_CPU): a sched_switch probe, attached
 * only while such a session samples, walks the user stack of a traced
 * thread that blocks into a slot of a table allocated at START, and when
 * the thread is switched in again writes that slot as a sample weighted by
 * the time in between. sched_switch is not exported, so it is found by
 * name.
 *
 * Why the walk happens at switch-out: the stack is only readable while
 * the thread's mm is loaded, and at switch-in the probe runs in the task
 * leaving the CPU. Whether a block reaches the minimum is known only at
 * switch-in, so every block of a traced thread pays one walk; blocks under
 * the minimum cost no ring space and no reader work.
 *
 * Contexts: the probe runs in __schedule() with the runqueue lock held and
 * interrupts off (current is prev): no locks, no allocation, no sleeping,
 * no printing, and no direct wakeup (a wake_up would take the runqueue
 * lock again): ring writes signal the reader through the ring's irq_work.
 * NMIs (the sample path) may nest; the ring guard keeps this session's
 * out of this CPU's scratch, and another session's use their own. Each
 * off-CPU session attaches a probe of its own (the sampler is the probe's
 * data), so sessions never see each other's slots. The rest runs in
 * process context under the session mutex.
 */
#include <linux/hash.h>
#include <linux/kernel.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/slab.h>
#include <linux/stacktrace.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/tracepoint.h>
#include <trace/events/sched.h>

#include "compat.h"
#include "internal.h"

/*
 * Slots a thread's entry may occupy, starting at its tid's hash. Bounded,
 * so a lookup never scans the table; a block that finds all of them taken
 * is counted in off_cpu_dropped.
 */
#define UWPROF_OFFCPU_PROBES	16

/*
 * One blocked thread. 'tid' is claimed with cmpxchg at switch-out and
 * cleared (release) after its record was written at switch-in. 'ready'
 * says 'rec' is complete: stored with release at the end of switch-out,
 * loaded with acquire at switch-in, which may run on another CPU.
 */
struct uwprof_offcpu_slot {
	u32 tid;
	u32 ready;
	struct uwprof_rec_sample rec;	/* followed by its ips */
};

struct uwprof_offcpu {
	u8 *slots;
	u32 nr_slots;			/* a power of two */
	u32 stride;			/* bytes per slot */
	u32 depth;			/* user frames kept */
	u64 min_ns;
	bool registered;
};

static struct tracepoint *uwprof_offcpu_tp;

static void uwprof_offcpu_find(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_switch"))
		uwprof_offcpu_tp = tp;
}

void uwprof_offcpu_init(void)
{
	for_each_kernel_tracepoint(uwprof_offcpu_find, NULL);
}

bool uwprof_offcpu_available(void)
{
	return uwprof_offcpu_tp;
}

static struct uwprof_offcpu_slot *uwprof_offcpu_slot(struct uwprof_offcpu *off,
						     u32 i)
{
	return (struct uwprof_offcpu_slot *)(off->slots +
		(size_t)(i & (off->nr_slots - 1)) * off->stride);
}

/* A free slot for 'tid', or its own (left by a block never seen to end). */
static struct uwprof_offcpu_slot *uwprof_offcpu_claim(struct uwprof_offcpu *off,
						      u32 tid)
{
	u32 h = hash_32(tid, ilog2(off->nr_slots)), i;
	struct uwprof_offcpu_slot *sl;

	for (i = 0; i < UWPROF_OFFCPU_PROBES; i++) {
		sl = uwprof_offcpu_slot(off, h + i);
		if (READ_ONCE(sl->tid) == tid ||
		    (!READ_ONCE(sl->tid) && !cmpxchg(&sl->tid, 0, tid))) {
			WRITE_ONCE(sl->ready, 0);
			return sl;
		}
	}
	return NULL;
}

static struct uwprof_offcpu_slot *uwprof_offcpu_lookup(struct uwprof_offcpu *off,
						       u32 tid)
{
	u32 h = hash_32(tid, ilog2(off->nr_slots)), i;
	struct uwprof_offcpu_slot *sl;

	for (i = 0; i < UWPROF_OFFCPU_PROBES; i++) {
		sl = uwprof_offcpu_slot(off, h + i);
		/* Pairs with the release store of 'ready' at switch-out. */
		if (READ_ONCE(sl->tid) == tid && smp_load_acquire(&sl->ready))
			return sl;
	}
	return NULL;
}

static void uwprof_offcpu_release(struct uwprof_offcpu_slot *sl)
{
	WRITE_ONCE(sl->ready, 0);
	/* The record is read before anyone may claim the slot again. */
	smp_store_release(&sl->tid, 0);
}

/*
 * Kernel frames where the thread blocks: the scheduler and its callers,
 * without this module's own frames at the top.
 */
static u32 uwprof_offcpu_kstack(struct uwprof_scratch *sc, u64 *ips)
{
	u32 n, i, k = 0;

	n = stack_trace_save(sc->kstack, ARRAY_SIZE(sc->kstack), 0);
	for (i = 0; i < n && within_module(sc->kstack[i], THIS_MODULE); i++)
		;
	for (; i < n && k < UWPROF_KSTACK_MAX; i++)
		ips[k++] = sc->kstack[i];
	return k;
}

/* Switch-out of a thread in 'state'. Context: see the top of the file. */
static void uwprof_offcpu_out(struct uwprof_sampler *sp, struct task_struct *t,
			      unsigned int state)
{
	struct uwprof_pcpu_stats __percpu *st = sp->stats;
	struct uwprof_offcpu *off = sp->off;
	struct uwprof_unwind_res res = {};
	struct uwprof_offcpu_slot *sl;
	struct uwprof_scratch *sc;
	struct uwprof_ring *r;
	struct pt_regs *uregs;
	u32 cpu, nk = 0;
	u64 t0, t1;

	if ((t->flags & (PF_KTHREAD | UWPROF_PF_USER_WORKER)) || !t->mm)
		return;
	/* The last switch of an exiting thread: it never runs again. */
	if (state & TASK_DEAD)
		return;
	/* The reader's own waits would be news of themselves. */
	if (t->tgid == sp->owner_tgid || !uwprof_sample_traced(sp, t))
		return;
	uregs = task_pt_regs(t);
	if (uwprof_compat_user_regs(uregs))
		return;
	this_cpu_inc(st->off_cpu_blocks);

	sl = uwprof_offcpu_claim(off, t->pid);
	if (!sl) {
		this_cpu_inc(st->off_cpu_dropped);
		return;
	}
	cpu = smp_processor_id();
	r = &sp->rings->ring[cpu];
	if (!uwprof_ring_enter(r))
		goto drop;
	sc = sp->scratch[cpu];
	t0 = ktime_get_mono_fast_ns();
	if (uwprof_sample_over_budget(t0)) {
		uwprof_ring_exit(r);
		goto drop;
	}
	if (sp->kstack)
		nk = uwprof_offcpu_kstack(sc, sl->rec.ips);
	uwprof_sample_walk(sp, sc, uregs, t->tgid, sl->rec.ips + nk, off->depth,
			   t0 + (u64)READ_ONCE(uwprof_offcpu_walk_max_us) *
			   NSEC_PER_USEC, &res);
	t1 = ktime_get_mono_fast_ns();
	uwprof_sample_charge(t1 - t0);
	uwprof_ring_exit(r);

	sl->rec.hdr.type = UWPROF_REC_SAMPLE;
	sl->rec.hdr.size = sizeof(sl->rec) + (nk + res.nr) * sizeof(u64);
	sl->rec.time_ns = t0;
	sl->rec.pid = t->tgid;
	sl->rec.tid = t->pid;
	sl->rec.cpu = cpu;
	sl->rec.flags = (res.stop & UWPROF_SAMPLE_STOP_MASK) |
			(res.flags & (UWPROF_SAMPLE_FP_USED |
				      UWPROF_SAMPLE_EXEC |
				      UWPROF_SAMPLE_PYTHON)) |
			UWPROF_SAMPLE_IN_KERNEL | UWPROF_SAMPLE_OFF_CPU;
	sl->rec.nr_kernel = nk;
	sl->rec.nr_user = res.nr;
	sl->rec.__reserved = 0;
	sl->rec.period = 0;
	/* Pairs with the acquire load in uwprof_offcpu_lookup(). */
	smp_store_release(&sl->ready, 1);
	return;

drop:
	uwprof_offcpu_release(sl);
	this_cpu_inc(st->off_cpu_dropped);
}

/* Switch-in of 't'. Context: see the top of the file. */
static void uwprof_offcpu_in(struct uwprof_sampler *sp, struct task_struct *t)
{
	struct uwprof_pcpu_stats __percpu *st = sp->stats;
	struct uwprof_offcpu_slot *sl;
	struct uwprof_ring *r;
	u64 now;

	if (t->flags & PF_KTHREAD)
		return;
	sl = uwprof_offcpu_lookup(sp->off, t->pid);
	if (!sl)
		return;
	now = ktime_get_mono_fast_ns();
	sl->rec.period = now > sl->rec.time_ns ? now - sl->rec.time_ns : 0;
	if (sl->rec.period < sp->off->min_ns) {
		this_cpu_inc(st->off_cpu_short);
		goto release;
	}
	/* Like every record, it names the CPU whose ring carries it. */
	sl->rec.cpu = smp_processor_id();
	r = &sp->rings->ring[sl->rec.cpu];
	if (!uwprof_ring_enter(r)) {
		uwprof_ring_count_nested(r);
		goto lost;
	}
	if (uwprof_ring_write(r, &sl->rec, sl->rec.hdr.size, false)) {
		uwprof_ring_exit(r);
		goto lost;
	}
	uwprof_ring_exit(r);
	this_cpu_inc(st->off_cpu_samples);
	goto release;

lost:
	this_cpu_inc(st->lost);
	this_cpu_inc(st->off_cpu_lost);
release:
	uwprof_offcpu_release(sl);
}

/*
 * A switch from a thread that was not preempted is a block: it waits for
 * something (a sleep, a lock, I/O, a signal to continue). A preempted
 * thread stays runnable; its time waiting for a CPU is not counted.
 */
static void uwprof_offcpu_switch(void *data, bool preempt,
				 struct task_struct *prev,
				 struct task_struct *next,
				 unsigned int prev_state)
{
	struct uwprof_sampler *sp = data;

	if (!preempt && prev_state != TASK_RUNNING)
		uwprof_offcpu_out(sp, prev, prev_state);
	uwprof_offcpu_in(sp, next);
}

UWPROF_COMPAT_SWITCH_PROBE(uwprof_offcpu_probe, uwprof_offcpu_switch)
UWPROF_COMPAT_PROBE_CHECK(sched_switch, uwprof_offcpu_probe);

int uwprof_offcpu_create(struct uwprof_sampler *sp, u64 min_ns)
{
	struct uwprof_offcpu *off;
	u32 nr_ips;

	off = kzalloc(sizeof(*off), GFP_KERNEL_ACCOUNT);
	if (!off)
		return -ENOMEM;
	off->depth = min_t(u32, sp->max_depth, UWPROF_OFF_CPU_DEPTH);
	nr_ips = off->depth + (sp->kstack ? UWPROF_KSTACK_MAX : 0);
	off->stride = sizeof(struct uwprof_offcpu_slot) + nr_ips * sizeof(u64);
	off->nr_slots = UWPROF_OFF_CPU_SLOTS;
	off->min_ns = min_ns;
	off->slots = kvzalloc((size_t)off->nr_slots * off->stride, GFP_KERNEL_ACCOUNT);
	if (!off->slots) {
		kfree(off);
		return -ENOMEM;
	}
	sp->off = off;
	return 0;
}

int uwprof_offcpu_start(struct uwprof_sampler *sp)
{
	int ret;

	if (!sp->off)
		return 0;
	ret = tracepoint_probe_register(uwprof_offcpu_tp, uwprof_offcpu_probe,
					sp);
	if (ret)
		return ret;
	sp->off->registered = true;
	return 0;
}

/* Returns once no probe can still be running. */
void uwprof_offcpu_stop(struct uwprof_sampler *sp)
{
	if (!sp->off || !sp->off->registered)
		return;
	tracepoint_probe_unregister(uwprof_offcpu_tp, uwprof_offcpu_probe, sp);
	sp->off->registered = false;
	tracepoint_synchronize_unregister();
}

/* After uwprof_offcpu_stop(), or when the probe was never attached. */
void uwprof_offcpu_free(struct uwprof_sampler *sp)
{
	if (!sp->off)
		return;
	kvfree(sp->off->slots);
	kfree(sp->off);
	sp->off = NULL;
}
