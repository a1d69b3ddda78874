// SPDX-License-Identifier: GPL-2.0
/*
 * What one user's sessions may take from the kernel. CAP_PERFMON lets a
 * user sample every process, as perf does; it does not let that user take
 * every other user's share of memory. Per user (the opener's real uid):
 *   - sessions open at once: user_sessions_max;
 *   - bytes of tables and mapping lists: user_mem_max, inside the pool
 *     all sessions share (table_mem_max);
 *   - ring pages: charged to the user's locked memory (user_struct's
 *     locked_vm, the counter perf charges its rings to), up to
 *     ring_mlock_kb per online CPU plus RLIMIT_MEMLOCK.
 * An opener with CAP_SYS_ADMIN is held to none of the first two, one with
 * CAP_IPC_LOCK not to the third, as perf exempts it.
 *
 * Contexts: open and release in process context; the byte charges also
 * from the lifecycle probes (preemption disabled: atomics only); the ring
 * charge at START and its release wherever the rings' last reference
 * goes (process context).
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/sched/signal.h>
#include <linux/sched/user.h>
#include <linux/slab.h>

#include "internal.h"

static unsigned int uwprof_user_sessions_max = 16;
module_param_named(user_sessions_max, uwprof_user_sessions_max, uint, 0644);
MODULE_PARM_DESC(user_sessions_max,
		 "Sessions one user may have open, CAP_SYS_ADMIN exempt (default 16)");

static unsigned long uwprof_user_mem_max = 256UL << 20;
module_param_named(user_mem_max, uwprof_user_mem_max, ulong, 0644);
MODULE_PARM_DESC(user_mem_max,
		 "Bytes of tables and mappings one user's sessions may hold, CAP_SYS_ADMIN exempt (default 256 MiB)");

static unsigned int uwprof_ring_mlock_kb = 516;
module_param_named(ring_mlock_kb, uwprof_ring_mlock_kb, uint, 0644);
MODULE_PARM_DESC(ring_mlock_kb,
		 "KiB of rings per online CPU a user may lock beyond RLIMIT_MEMLOCK, CAP_IPC_LOCK exempt (default 516, as perf_event_mlock_kb)");

/*
 * One per uid with a session open; on uwprof_quota_users under
 * uwprof_quota_lock, which also covers 'sessions'. 'bytes' is atomic: the
 * fork probe charges it.
 */
struct uwprof_quota {
	struct list_head node;
	kuid_t uid;
	unsigned int sessions;
	atomic64_t bytes;
};

static DEFINE_MUTEX(uwprof_quota_lock);
static LIST_HEAD(uwprof_quota_users);

static struct uwprof_quota *uwprof_quota_find(kuid_t uid)
{
	struct uwprof_quota *q;

	list_for_each_entry(q, &uwprof_quota_users, node)
		if (uid_eq(q->uid, uid))
			return q;
	return NULL;
}

/*
 * Open: counts the session against its opener's uid. -EMFILE when the
 * user has user_sessions_max open already.
 */
int uwprof_quota_open(struct uwprof_session *s)
{
	kuid_t uid = current_uid();
	struct uwprof_quota *q;
	int ret = 0;

	s->quota_exempt = capable(CAP_SYS_ADMIN);
	s->lock_exempt = capable(CAP_IPC_LOCK);
	mutex_lock(&uwprof_quota_lock);
	q = uwprof_quota_find(uid);
	if (!q) {
		q = kzalloc(sizeof(*q), GFP_KERNEL_ACCOUNT);
		if (!q) {
			ret = -ENOMEM;
			goto unlock;
		}
		q->uid = uid;
		atomic64_set(&q->bytes, 0);
		list_add(&q->node, &uwprof_quota_users);
	}
	if (!s->quota_exempt &&
	    q->sessions >= READ_ONCE(uwprof_user_sessions_max)) {
		ret = -EMFILE;
		if (!q->sessions) {
			list_del(&q->node);
			kfree(q);
		}
		goto unlock;
	}
	q->sessions++;
	s->quota = q;
unlock:
	mutex_unlock(&uwprof_quota_lock);
	return ret;
}

/* Release, after every byte and page the session held was uncharged. */
void uwprof_quota_release(struct uwprof_session *s)
{
	struct uwprof_quota *q = s->quota;

	if (!q)
		return;
	WARN_ON_ONCE(atomic64_read(&s->mem));
	mutex_lock(&uwprof_quota_lock);
	if (!--q->sessions) {
		list_del(&q->node);
		kfree(q);
	}
	mutex_unlock(&uwprof_quota_lock);
}

/* Table and mapping bytes: -ENOSPC past the user's share. */
int uwprof_quota_charge(struct uwprof_session *s, u64 bytes)
{
	u64 max = READ_ONCE(uwprof_user_mem_max);

	if (atomic64_add_return(bytes, &s->quota->bytes) > max &&
	    !s->quota_exempt) {
		atomic64_sub(bytes, &s->quota->bytes);
		return -ENOSPC;
	}
	return 0;
}

void uwprof_quota_uncharge(struct uwprof_session *s, u64 bytes)
{
	atomic64_sub(bytes, &s->quota->bytes);
}

/*
 * START, in the caller's context: 'pages' of rings against the session
 * opener's user's locked memory. Returns the user to uncharge later, NULL
 * when nothing was charged, or an ERR_PTR (-EPERM past the limit, perf's
 * answer). No reference is taken (free_uid() is not exported before
 * 5.11): the opener's cred, which the session holds until its file is
 * released, pins the user, and the rings never outlive that file (every
 * vma mapping them holds it).
 */
struct user_struct *uwprof_quota_lock_pages(struct uwprof_session *s,
					    unsigned long pages)
{
	unsigned long limit;

	if (s->lock_exempt)
		return NULL;
	limit = (rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT) +
		((unsigned long)READ_ONCE(uwprof_ring_mlock_kb) >>
		 (PAGE_SHIFT - 10)) * num_online_cpus();
	if (atomic_long_add_return(pages, &s->cred->user->locked_vm) > limit) {
		atomic_long_sub(pages, &s->cred->user->locked_vm);
		return ERR_PTR(-EPERM);
	}
	return s->cred->user;
}

void uwprof_quota_unlock_pages(struct user_struct *user, unsigned long pages)
{
	if (user)
		atomic_long_sub(pages, &user->locked_vm);
}
