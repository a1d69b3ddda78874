// SPDX-License-Identifier: GPL-2.0
/*
 * Exec holds (UWPROF_START_HOLD_EXEC). A process the session has mappings
 * for is stopped the moment it execs, before the new image runs a single
 * instruction, and let go (SIGCONT) as soon as the reader uploads its new
 * mappings (MAPS_SET or PROCESS_DEL for it), when sampling stops, when the
 * session closes, or after UWPROF_HOLD_MS at the latest, so a reader that
 * is slow, confused or gone cannot keep anything stopped. Without it, the
 * samples a new image takes before its upload cannot be unwound.
 *
 * Several sessions may hold one process: each keeps its own hold, and the
 * process continues when the last of them lets go. A session letting go
 * erases its hold, then looks for the others' (a full barrier between, so
 * of two letting go at once at least one sees the other's gone), and
 * continues the process only when it finds none; the exec probe takes
 * every session's hold before it writes any EXIT record of the exec, so
 * a reader that lets go because of that record sees them all. A reader
 * that lets go for another reason (a MAPS_SET of the old image crossing
 * the exec) in the instant between two sessions' holds may let the
 * process go early, as its time limit would.
 *
 * Contexts: process context throughout. uwprof_hold_exec() and
 * uwprof_hold_exit() run in the lifecycle callbacks (lifecycle.c), in the
 * exec'ing or exiting task itself and inside rcu_read_lock(), so they do
 * not sleep; everything else runs in the ioctls under the session mutex,
 * STOP, close, and the session's expiry work.
 */
#include <linux/cred.h>
#include <linux/jiffies.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/rculist.h>
#include <linux/sched/signal.h>
#include <linux/workqueue.h>

#include "compat.h"
#include "internal.h"

/* The longest a reader may take to upload an exec'd image. */
#define UWPROF_HOLD_MS		500

/* Hold start times in an xarray value: jiffies without the top bit. */
static unsigned long uwprof_hold_now(void)
{
	return jiffies & LONG_MAX;
}

/*
 * Session 's' erased its hold of 'tgid': the process continues unless
 * another session holds it still. A closing session is off the list
 * already, and its holds count no more.
 */
static void uwprof_hold_cont(struct uwprof_session *s, u32 tgid)
{
	struct uwprof_session *o;
	struct pid *pid;

	/* Pairs with the same barrier of another session letting go. */
	smp_mb();
	rcu_read_lock();
	list_for_each_entry_rcu(o, &uwprof_sessions, list) {
		if (o != s && xa_load(&o->held, tgid))
			goto out;
	}
	pid = find_pid_ns(tgid, &init_pid_ns);
	if (pid)
		kill_pid(pid, SIGCONT, 1);
out:
	rcu_read_unlock();
}

/*
 * Lets go of every hold at least 'min_age' jiffies old; returns whether
 * younger ones are left.
 */
static bool uwprof_hold_release_old(struct uwprof_session *s,
				    unsigned long min_age)
{
	unsigned long tgid, now = uwprof_hold_now();
	bool left = false;
	void *v;

	xa_for_each(&s->held, tgid, v) {
		if (((now - xa_to_value(v)) & LONG_MAX) < min_age) {
			left = true;
			continue;
		}
		/* Only the hold seen: a new one of the same pid stays. */
		if (xa_cmpxchg(&s->held, tgid, v, NULL, GFP_KERNEL) == v)
			uwprof_hold_cont(s, tgid);
	}
	return left;
}

static void uwprof_hold_expire(struct work_struct *work)
{
	struct uwprof_session *s = container_of(to_delayed_work(work),
						struct uwprof_session,
						hold_work);

	if (uwprof_hold_release_old(s, msecs_to_jiffies(UWPROF_HOLD_MS)))
		schedule_delayed_work(&s->hold_work,
				      msecs_to_jiffies(UWPROF_HOLD_MS / 4));
}

void uwprof_hold_init(struct uwprof_session *s)
{
	xa_init(&s->held);
	INIT_DELAYED_WORK(&s->hold_work, uwprof_hold_expire);
}

/*
 * Whether the session's opener may stop 'p', the task exec'ing now, with
 * its new credentials: ptrace-attach's own rule (PTRACE_MODE_REALCREDS)
 * less the LSM hook, which modules cannot call. CAP_SYS_PTRACE at open,
 * or the opener's real uid and gid equal to every uid and gid of the new
 * image, which must be dumpable: a setuid or setgid exec never is.
 */
static bool uwprof_hold_allowed(struct uwprof_session *s,
				struct task_struct *p)
{
	const struct cred *c = s->cred, *t;
	bool ok;

	if (s->may_ptrace)
		return true;
	rcu_read_lock();
	t = __task_cred(p);
	ok = uwprof_compat_dumpable_by_owner(p) &&
	     uid_eq(c->uid, t->euid) && uid_eq(c->uid, t->suid) &&
	     uid_eq(c->uid, t->uid) && gid_eq(c->gid, t->egid) &&
	     gid_eq(c->gid, t->sgid) && gid_eq(c->gid, t->gid);
	rcu_read_unlock();
	return ok;
}

/*
 * Exec callback, in the exec'ing task 'p' (current), which had mappings
 * in 's', on its way back to user space: the stop takes effect before
 * the new image runs an instruction. Best effort: without memory for the
 * entry the task simply runs.
 */
void uwprof_hold_exec(struct uwprof_session *s, struct task_struct *p)
{
	u32 tgid = p->tgid;

	if (!uwprof_hold_allowed(s, p))
		return;
	if (xa_is_err(xa_store(&s->held, tgid,
			       xa_mk_value(uwprof_hold_now()), GFP_ATOMIC)))
		return;
	send_sig(SIGSTOP, current, 1);
	schedule_delayed_work(&s->hold_work, msecs_to_jiffies(UWPROF_HOLD_MS));
}

/*
 * Exit callback, before the pid can be reused: an exiting process has
 * nothing left to wait for, and a later SIGCONT would reach whoever gets
 * its pid next.
 */
void uwprof_hold_exit(struct uwprof_session *s, u32 tgid)
{
	/* Lockless first: almost no exiting process is held. */
	if (xa_load(&s->held, tgid))
		xa_erase(&s->held, tgid);
}

/* MAPS_SET or PROCESS_DEL for 'tgid', whatever their outcome. */
void uwprof_hold_release(struct uwprof_session *s, u32 tgid)
{
	if (xa_erase(&s->held, tgid))
		uwprof_hold_cont(s, tgid);
}

/* STOP, after the probes are gone: nothing new can be held. */
void uwprof_hold_release_all(struct uwprof_session *s)
{
	uwprof_hold_release_old(s, 0);
}

/* Close, with the session unreachable from the probes. */
void uwprof_hold_destroy(struct uwprof_session *s)
{
	cancel_delayed_work_sync(&s->hold_work);
	uwprof_hold_release_all(s);
	xa_destroy(&s->held);
}
