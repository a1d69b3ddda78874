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
 * Contexts: the probes run in the exiting, exec'ing, forking or renaming task
 * (a rename through /proc may name another thread of its group), preemption
 * disabled by the tracepoint (may not sleep, may be interrupted by the
 * sample path). Registration runs in process context at load and unload.
 */
#include <linux/binfmts.h>
#include <linux/kernel.h>
#include <linux/rculist.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
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
 * Exec holds of process 'p' (UWPROF_START_HOLD_EXEC), in every sampling
 * session that has its mappings and samples its new image. All of them
 * are taken before any session's EXIT record of this exec is written: a
 * reader lets go when that record made it upload, and must then see every
 * other session's hold (uwprof_hold_release()).
 */
static void uwprof_lifecycle_hold(struct task_struct *p)
{
	struct uwprof_sampler *sp;
	struct uwprof_session *s;

	list_for_each_entry_rcu(s, &uwprof_sessions, list) {
		sp = rcu_dereference(s->active);
		if (sp && (sp->flags & UWPROF_START_HOLD_EXEC) &&
		    xa_load(&s->procs, p->tgid) && uwprof_sample_traced(sp, p))
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

/* comm: the new name of a process that exec'd, NULL when it exited. */
static void uwprof_lifecycle_drop(struct task_struct *p, const char *comm)
{
	struct uwprof_sampler *sp;
	struct uwprof_session *s;
	u32 tgid = p->tgid;
	bool dropped;

	rcu_read_lock();
	if (comm)
		uwprof_lifecycle_hold(p);
	list_for_each_entry_rcu(s, &uwprof_sessions, list) {
		dropped = uwprof_store_proc_drop(s, tgid);
		if (dropped)
			atomic64_inc(&s->procs_dropped);
		if (!comm)
			uwprof_hold_exit(s, tgid);
		sp = rcu_dereference(s->active);
		if (sp && uwprof_lifecycle_news(sp, p, dropped, comm)) {
			preempt_disable();
			uwprof_sample_emit_exit(sp, tgid, comm);
			preempt_enable();
		}
	}
	rcu_read_unlock();
}

static void uwprof_lifecycle_exited(void *data, struct task_struct *p)
{
	/* do_exit() already counted this thread out of signal->live. */
	if (atomic_read(&p->signal->live))
		return;
	if (p->flags & PF_KTHREAD)
		return;
	uwprof_lifecycle_drop(p, NULL);
}

UWPROF_COMPAT_EXIT_PROBE(uwprof_lifecycle_on_exit, uwprof_lifecycle_exited)

static void uwprof_lifecycle_on_exec(void *data, struct task_struct *p,
				     pid_t old_pid, struct linux_binprm *bprm)
{
	/* The exec'ing task is current: its comm is the new program's. */
	uwprof_lifecycle_drop(p, p->comm);
}

/*
 * Every session with the parent's mappings gives the child a copy; a
 * sampling one that samples the child tells its reader.
 */
static void uwprof_lifecycle_on_fork(void *data, struct task_struct *parent,
				     struct task_struct *child)
{
	struct uwprof_sampler *sp;
	struct uwprof_session *s;

	/* New processes only: a thread shares its group's list already. */
	if (child->tgid != child->pid || child->tgid == parent->tgid ||
	    (child->flags & PF_KTHREAD))
		return;
	rcu_read_lock();
	list_for_each_entry_rcu(s, &uwprof_sessions, list) {
		if (!uwprof_store_proc_clone(s, parent->tgid, child->tgid))
			continue;
		atomic64_inc(&s->procs_inherited);
		sp = rcu_dereference(s->active);
		if (sp && uwprof_sample_traced(sp, child)) {
			preempt_disable();
			uwprof_sample_emit_fork(sp, child->tgid, parent->tgid);
			preempt_enable();
		}
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
}
