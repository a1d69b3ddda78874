// SPDX-License-Identifier: GPL-2.0
/*
 * Process lifecycle: drops a process's mappings from every session when it
 * exits (its last thread) or execs, and tells the reader of every sampling
 * session that samples it with an EXIT record; gives a forked process a
 * copy of its parent's mappings in every session that has them, and tells
 * those sessions' readers with a FORK record; tells them of a thread's new
 * name with a COMM record. sched_process_{exit,exec,fork} and task_rename
 * are not exported to modules, so they are found by name.
 *
 * Contexts: the probes run in the exiting, exec'ing, forking or renaming
 * task (a rename through /proc may name another thread of its group) with
 * preemption disabled by the tracepoint, and may be interrupted by the
 * sample path: no allocation, no signal, no spinlock_t (all of which
 * sleep on PREEMPT_RT), only RCU lookups, atomics and ring records. Every
 * change to a session's xarrays, and the exec hold's SIGSTOP, is left to
 * a task_work callback (uwprof_lc_work), which runs in process context
 * in the task itself:
 *  - exit: in exit_task_work(), later in do_exit() and before the pid can
 *    be freed and reused;
 *  - exec: on the way back to user space, before the new image runs an
 *    instruction, so a SIGSTOP sent there stops it as the probe would;
 *  - fork: queued on the child, which the probe sees before
 *    wake_up_new_task(): it runs before the child's first user
 *    instruction, so the child's entry exists before any of its user-mode
 *    samples.
 * A workqueue would run the change at some later time, in another task:
 * samples, an exit or a pid reuse in between could meet the old state.
 * Meanwhile the probe marks a process's entries dead (uwprof_proc.dead),
 * and the sample path ignores dead entries: a new image or an exited
 * process never unwinds with the mappings it left. The callbacks' storage
 * is a fixed pool (no allocation in a probe); when it is empty the change
 * is not made, which only ever loses: entries stay dead until replaced,
 * an exec is not held, a child gets no inherited mappings (stats:
 * lifecycle_lost). Registration, unload and session close run in process
 * context.
 */
#include <linux/binfmts.h>
#include <linux/bitmap.h>
#include <linux/delay.h>
#include <linux/kernel.h>
#include <linux/rculist.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/task_work.h>
#include <linux/tracepoint.h>
#include <linux/wait_bit.h>
#include <trace/events/sched.h>
#include <trace/events/task.h>

#include "compat.h"
#include "internal.h"

struct uwprof_tp {
	const char *name;
	void *probe;
	struct tracepoint *tp;
	bool registered;
};

struct uwprof_lifecycle {
	struct uwprof_tp exit;
	struct uwprof_tp exec;
	struct uwprof_tp fork;
	struct uwprof_tp rename;	/* optional: without it, no COMM records */
};

/*
 * Work pending for one task. Claimed by a probe (a bit in uwprof_lc_used),
 * filled while only the probe can see it, queued with task_work_add();
 * the callback gives it back as its very last step. 'set' (fork only) is
 * a reference on the parent's list, published by the probe once the work
 * is queued (a single store: no lock in a probe) and taken by exactly one
 * of the callback and the closing session's uwprof_lifecycle_forget(),
 * each under uwprof_lc_set_lock.
 */
struct uwprof_lc_work {
	struct callback_head cb;
	u32 tgid;			/* exit, exec: the process; fork: the child */
	u32 ptgid;			/* fork: the parent */
	u64 id;				/* fork: the list's id */
	struct uwprof_maps *set;	/* fork: the parent's list */
};

/*
 * Works pending at once: a fork costs one per session holding the
 * parent's mappings until the child first runs; an exit or exec one.
 */
#define UWPROF_LC_WORKS		1024

/*
 * Static, not slab: task_work_add() asks KASAN to record a slab object's
 * queueing stack, which may allocate; for other memory it records none.
 */
static struct uwprof_lc_work uwprof_lc_works[UWPROF_LC_WORKS];
static DECLARE_BITMAP(uwprof_lc_used, UWPROF_LC_WORKS);
/* Covers taking a fork work's 'set' with uwprof_session.lc_busy. */
static DEFINE_SPINLOCK(uwprof_lc_set_lock);

/* Any context but NMI: a free work, or NULL when all are pending. */
static struct uwprof_lc_work *uwprof_lc_get(void)
{
	unsigned long i;

	for_each_clear_bit(i, uwprof_lc_used, UWPROF_LC_WORKS) {
		if (!test_and_set_bit(i, uwprof_lc_used))
			return &uwprof_lc_works[i];
	}
	return NULL;
}

/* Its fields are no longer read once the bit is clear (release order). */
static void uwprof_lc_put(struct uwprof_lc_work *w)
{
	clear_bit_unlock(w - uwprof_lc_works, uwprof_lc_used);
}

/* Queues 'fn' on 't' or gives 'w' back; whether it was queued. */
static bool uwprof_lc_queue(struct uwprof_lc_work *w, struct task_struct *t,
			    task_work_func_t fn)
{
	init_task_work(&w->cb, fn);
	if (!task_work_add(t, &w->cb, TWA_RESUME))
		return true;
	uwprof_lc_put(w);
	return false;
}

/*
 * Exec holds of process 'p' (UWPROF_START_HOLD_EXEC), in every sampling
 * session whose mappings of it the exec killed and that samples its new
 * image. All of them are taken before any session's EXIT record of this
 * exec is written: a reader lets go when that record made it upload, and
 * must then see every other session's hold (uwprof_hold_release()). A
 * session whose reader uploaded the new image already (a live entry)
 * holds nothing. Caller inside rcu_read_lock().
 */
static void uwprof_lifecycle_hold(struct task_struct *p)
{
	struct uwprof_sampler *sp;
	struct uwprof_session *s;

	list_for_each_entry_rcu(s, &uwprof_sessions, list) {
		sp = rcu_dereference(s->active);
		if (sp && (sp->flags & UWPROF_START_HOLD_EXEC) &&
		    uwprof_store_proc_dead(s, p->tgid) &&
		    uwprof_sample_traced(sp, p))
			uwprof_hold_exec(s, p);
	}
}

/*
 * Whether the reader of a sampling session hears of the exit (comm NULL)
 * or exec of 'p'; 'dropped': the session had its mappings. System-wide,
 * the exits of processes the session never uploaded are no news, but
 * every exec into something it samples is: a new image the reader may
 * want to upload before its first sample (a command's child whose parent
 * had no list yet when it forked would otherwise first be heard of by a
 * sample that cannot be unwound). An exec out of the filters is news
 * when the reader knew the process.
 */
static bool uwprof_lifecycle_news(struct uwprof_sampler *sp,
				  struct task_struct *p, bool dropped,
				  const char *comm)
{
	if (!uwprof_sample_traced_pid(sp, p->tgid))
		return false;
	if (!comm)
		return dropped || !(sp->flags & UWPROF_START_SYSTEM_WIDE);
	return dropped || uwprof_sample_traced(sp, p);
}

/*
 * The EXIT record of the exit (comm NULL) or exec of 'p' to the reader of
 * every sampling session it is news for. 'drop': take the dead entries
 * out of the xarrays too (the callback); without it, 'dropped' is
 * whether the entry is dead (the probe, or a callback that found it
 * replaced). Caller inside rcu_read_lock().
 */
static void uwprof_lifecycle_tell(struct task_struct *p, const char *comm,
				  bool drop)
{
	struct uwprof_sampler *sp;
	struct uwprof_session *s;
	bool dropped;

	list_for_each_entry_rcu(s, &uwprof_sessions, list) {
		if (drop)
			dropped = uwprof_store_proc_reap(s, p->tgid);
		else
			dropped = uwprof_store_proc_dead(s, p->tgid);
		sp = rcu_dereference(s->active);
		if (sp && uwprof_lifecycle_news(sp, p, dropped, comm)) {
			preempt_disable();
			uwprof_sample_emit_exit(sp, p->tgid, comm);
			preempt_enable();
		}
	}
}

/*
 * Marks the entries of 'tgid' dead in every session; whether any session
 * has a dead one (this probe's or an earlier one's) or holds the process,
 * that is whether there is anything for a callback to do. Caller inside
 * rcu_read_lock().
 */
static bool uwprof_lifecycle_kill(u32 tgid)
{
	struct uwprof_session *s;
	bool work = false;

	list_for_each_entry_rcu(s, &uwprof_sessions, list) {
		if (uwprof_store_proc_kill(s, tgid))
			atomic64_inc(&s->procs_dropped);
		if (uwprof_store_proc_dead(s, tgid) || xa_load(&s->held, tgid))
			work = true;
	}
	return work;
}

/* The pool was empty: every session the work was for lost it. */
static void uwprof_lifecycle_lost(u32 tgid)
{
	struct uwprof_session *s;

	list_for_each_entry_rcu(s, &uwprof_sessions, list) {
		if (uwprof_store_proc_dead(s, tgid) || xa_load(&s->held, tgid))
			atomic64_inc(&s->lifecycle_lost);
	}
}

/* Exit callback: in do_exit(), process context, current is the task. */
static void uwprof_lifecycle_exit_work(struct callback_head *cb)
{
	struct uwprof_lc_work *w = container_of(cb, struct uwprof_lc_work, cb);
	struct uwprof_session *s;

	rcu_read_lock();
	list_for_each_entry_rcu(s, &uwprof_sessions, list) {
		uwprof_store_proc_reap(s, w->tgid);
		uwprof_hold_exit(s, w->tgid);
	}
	rcu_read_unlock();
	uwprof_lc_put(w);
}

static void uwprof_lifecycle_exited(void *data, struct task_struct *p)
{
	struct uwprof_lc_work *w;

	/* do_exit() already counted this thread out of signal->live. */
	if (atomic_read(&p->signal->live))
		return;
	if (p->flags & PF_KTHREAD)
		return;
	rcu_read_lock();
	if (uwprof_lifecycle_kill(p->tgid)) {
		w = uwprof_lc_get();
		if (w) {
			w->tgid = p->tgid;
			w = uwprof_lc_queue(w, p, uwprof_lifecycle_exit_work) ? w : NULL;
		}
		if (!w)
			uwprof_lifecycle_lost(p->tgid);
	}
	uwprof_lifecycle_tell(p, NULL, false);
	rcu_read_unlock();
}

UWPROF_COMPAT_EXIT_PROBE(uwprof_lifecycle_on_exit, uwprof_lifecycle_exited)

/*
 * Exec callback: on the way back to user space, process context, current
 * is the task, already the new image (its comm too).
 */
static void uwprof_lifecycle_exec_work(struct callback_head *cb)
{
	struct uwprof_lc_work *w = container_of(cb, struct uwprof_lc_work, cb);

	rcu_read_lock();
	uwprof_lifecycle_hold(current);
	uwprof_lifecycle_tell(current, current->comm, true);
	rcu_read_unlock();
	uwprof_lc_put(w);
}

static void uwprof_lifecycle_on_exec(void *data, struct task_struct *p,
				     pid_t old_pid, struct linux_binprm *bprm)
{
	struct uwprof_lc_work *w = NULL;

	rcu_read_lock();
	if (uwprof_lifecycle_kill(p->tgid)) {
		w = uwprof_lc_get();
		if (w) {
			w->tgid = p->tgid;
			w = uwprof_lc_queue(w, p, uwprof_lifecycle_exec_work) ? w : NULL;
		}
		if (!w)
			uwprof_lifecycle_lost(p->tgid);
	}
	/* The exec'ing task is current: its comm is the new program's. */
	if (!w)
		uwprof_lifecycle_tell(p, p->comm, false);
	rcu_read_unlock();
}

/*
 * Fork callback: in the child before its first user instruction, process
 * context. The list is the one the parent had when it forked, whatever
 * the parent did since.
 */
static void uwprof_lifecycle_fork_work(struct callback_head *cb)
{
	struct uwprof_lc_work *w = container_of(cb, struct uwprof_lc_work, cb);
	struct uwprof_sampler *sp;
	struct uwprof_session *s;
	struct uwprof_maps *m;

	spin_lock(&uwprof_lc_set_lock);
	m = READ_ONCE(w->set);
	WRITE_ONCE(w->set, NULL);
	if (m)
		atomic_inc(&m->s->lc_busy);
	spin_unlock(&uwprof_lc_set_lock);
	if (!m)
		goto put;
	s = m->s;
	if (uwprof_store_proc_inherit(s, m, w->tgid, w->id)) {
		atomic64_inc(&s->procs_inherited);
		rcu_read_lock();
		sp = rcu_dereference(s->active);
		if (sp && uwprof_sample_traced(sp, current)) {
			preempt_disable();
			uwprof_sample_emit_fork(sp, w->tgid, w->ptgid);
			preempt_enable();
		}
		rcu_read_unlock();
	}
	/* wake_up_var() only hashes the address: 's' may be gone already. */
	if (atomic_dec_and_test(&s->lc_busy))
		wake_up_var(&s->lc_busy);
put:
	uwprof_lc_put(w);
}

/*
 * Every session with the parent's mappings queues a callback on the child
 * that gives it a copy; a sampling one that samples the child tells its
 * reader then.
 */
static void uwprof_lifecycle_on_fork(void *data, struct task_struct *parent,
				     struct task_struct *child)
{
	const struct uwprof_proc *pp;
	struct uwprof_session *s;
	struct uwprof_lc_work *w;

	/* New processes only: a thread shares its group's list already. */
	if (child->tgid != child->pid || child->tgid == parent->tgid ||
	    (child->flags & PF_KTHREAD))
		return;
	rcu_read_lock();
	list_for_each_entry_rcu(s, &uwprof_sessions, list) {
		pp = xa_load(&s->procs, parent->tgid);
		if (!pp || READ_ONCE(pp->dead))
			continue;
		w = uwprof_lc_get();
		if (!w) {
			atomic64_inc(&s->lifecycle_lost);
			continue;
		}
		/* pp keeps its list's reference until a grace period after it left. */
		if (!refcount_inc_not_zero(&pp->set->ref)) {
			uwprof_lc_put(w);
			continue;
		}
		w->tgid = child->tgid;
		w->ptgid = parent->tgid;
		w->id = pp->id;
		if (!uwprof_lc_queue(w, child, uwprof_lifecycle_fork_work)) {
			/* Not a fresh child's answer; pp's reference remains. */
			refcount_dec(&pp->set->ref);
			atomic64_inc(&s->lifecycle_lost);
			continue;
		}
		/*
		 * The child runs the callback only once woken, after this
		 * probe; from here on the session's close may take the list.
		 */
		smp_store_release(&w->set, pp->set);
	}
	rcu_read_unlock();
}

/*
 * A thread is renamed: called before the new name is copied in, under the
 * task's lock. Every sampling session that samples the thread under its
 * old name or its new one tells its reader, as perf's COMM event does.
 */
static void uwprof_lifecycle_on_rename(void *data, struct task_struct *t,
				       const char *comm)
{
	struct uwprof_sampler *sp;
	struct uwprof_session *s;
	char name[TASK_COMM_LEN];

	if (t->flags & PF_KTHREAD)
		return;
	strscpy_pad(name, comm, sizeof(name));
	rcu_read_lock();
	list_for_each_entry_rcu(s, &uwprof_sessions, list) {
		sp = rcu_dereference(s->active);
		if (sp && uwprof_sample_traced_as(sp, t, name)) {
			preempt_disable();
			uwprof_sample_emit_comm(sp, t, name);
			preempt_enable();
		}
	}
	rcu_read_unlock();
}

/*
 * Close of 's', off uwprof_sessions and past a grace period, so no probe
 * queues work for it any more: takes back the lists of its pending fork
 * works (their children get none) and waits for the callbacks that took
 * theirs. Never waits for a pending callback: the closing task may be
 * the one it is queued on (an exiting task's last fput runs as a
 * task_work of its own).
 */
void uwprof_lifecycle_forget(struct uwprof_session *s)
{
	struct uwprof_maps *m;
	unsigned long i;

	for (i = 0; i < UWPROF_LC_WORKS; i++) {
		spin_lock(&uwprof_lc_set_lock);
		/* Pairs with the probe's smp_store_release(). */
		m = smp_load_acquire(&uwprof_lc_works[i].set);
		if (m && m->s == s)
			WRITE_ONCE(uwprof_lc_works[i].set, NULL);
		else
			m = NULL;
		spin_unlock(&uwprof_lc_set_lock);
		if (m)
			uwprof_store_maps_put(m);
	}
	wait_var_event(&s->lc_busy, !atomic_read(&s->lc_busy));
}

UWPROF_COMPAT_PROBE_CHECK(sched_process_exit, uwprof_lifecycle_on_exit);
UWPROF_COMPAT_PROBE_CHECK(sched_process_exec, uwprof_lifecycle_on_exec);
UWPROF_COMPAT_PROBE_CHECK(sched_process_fork, uwprof_lifecycle_on_fork);
UWPROF_COMPAT_PROBE_CHECK(task_rename, uwprof_lifecycle_on_rename);

static struct uwprof_lifecycle uwprof_lc = {
	.exit = { .name = "sched_process_exit", .probe = uwprof_lifecycle_on_exit },
	.exec = { .name = "sched_process_exec", .probe = uwprof_lifecycle_on_exec },
	.fork = { .name = "sched_process_fork", .probe = uwprof_lifecycle_on_fork },
	.rename = { .name = "task_rename", .probe = uwprof_lifecycle_on_rename },
};

static void uwprof_lifecycle_find(struct tracepoint *tp, void *priv)
{
	struct uwprof_lifecycle *lc = priv;

	if (!strcmp(tp->name, lc->exit.name))
		lc->exit.tp = tp;
	else if (!strcmp(tp->name, lc->exec.name))
		lc->exec.tp = tp;
	else if (!strcmp(tp->name, lc->fork.name))
		lc->fork.tp = tp;
	else if (!strcmp(tp->name, lc->rename.name))
		lc->rename.tp = tp;
}

static int uwprof_lifecycle_attach(struct uwprof_tp *t)
{
	int ret;

	if (!t->tp) {
		pr_err("uwprof: tracepoint %s not found\n", t->name);
		return -ENOENT;
	}
	ret = tracepoint_probe_register(t->tp, t->probe, NULL);
	if (ret) {
		pr_err("uwprof: cannot attach to %s: %d\n", t->name, ret);
		return ret;
	}
	t->registered = true;
	return 0;
}

static void uwprof_lifecycle_detach(struct uwprof_tp *t)
{
	if (t->registered)
		tracepoint_probe_unregister(t->tp, t->probe, NULL);
	t->registered = false;
}

int uwprof_lifecycle_init(void)
{
	int ret;

	for_each_kernel_tracepoint(uwprof_lifecycle_find, &uwprof_lc);
	ret = uwprof_lifecycle_attach(&uwprof_lc.exit);
	if (!ret)
		ret = uwprof_lifecycle_attach(&uwprof_lc.exec);
	if (!ret)
		ret = uwprof_lifecycle_attach(&uwprof_lc.fork);
	if (ret) {
		uwprof_lifecycle_exit();
		return ret;
	}
	/* Renames are news, not a condition of correct stacks. */
	if (!uwprof_lc.rename.tp ||
	    tracepoint_probe_register(uwprof_lc.rename.tp,
				      uwprof_lc.rename.probe, NULL))
		pr_info("uwprof: no task_rename tracepoint: thread renames are not reported\n");
	else
		uwprof_lc.rename.registered = true;
	return 0;
}

/* Whether renames come as UWPROF_REC_COMM (UWPROF_CAP_RENAME). */
bool uwprof_lifecycle_renames(void)
{
	return uwprof_lc.rename.registered;
}

void uwprof_lifecycle_exit(void)
{
	uwprof_lifecycle_detach(&uwprof_lc.rename);
	uwprof_lifecycle_detach(&uwprof_lc.fork);
	uwprof_lifecycle_detach(&uwprof_lc.exec);
	uwprof_lifecycle_detach(&uwprof_lc.exit);
	/* No probe may still run module code once unload proceeds. */
	tracepoint_synchronize_unregister();
	/*
	 * Nor a callback: every queued one runs soon (its task returns to
	 * user space or goes on exiting) and gives its work back last; the
	 * few instructions after that are waited out separately.
	 */
	while (!bitmap_empty(uwprof_lc_used, UWPROF_LC_WORKS))
		msleep(20);
	uwprof_compat_sync_tasks();
}
