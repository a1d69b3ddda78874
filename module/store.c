// SPDX-License-Identifier: GPL-2.0
/*
 * The per-session store of unwind tables (keyed by the caller's object id)
 * and of per-process mapping lists (keyed by tgid), with their memory
 * charged against the table_mem_max module parameter.
 *
 * Contexts: the ioctl handlers run in process context under the session
 * mutex. uwprof_store_proc_kill() and _dead() run from the lifecycle
 * tracepoint probes (preemption disabled: lock-free only); _reap() and
 * _inherit() from the lifecycle callbacks (process context, lifecycle.c).
 * The sample path never calls in here: it reads 'procs' under RCU, skips
 * dead entries and uses the tables the mappings point to.
 */
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "compat.h"
#include "internal.h"

/* Bytes of tables and mappings held by every session together. */
static atomic64_t uwprof_mem_used = ATOMIC64_INIT(0);

/*
 * Mapping list ids, the key of the samplers' rule caches: unique for the
 * module's lifetime, so a cached row can never outlive or mistake its list.
 */
static atomic64_t uwprof_maps_ids = ATOMIC64_INIT(0);

/*
 * The largest blob the uapi limits allow: header, a page per row, 3 bytes
 * per row, the palette, padding, rules. Anything bigger is refused before
 * a single byte is allocated.
 */
#define UWPROF_BLOB_MAX							\
	(4096ULL + (8ULL + 3) * UWPROF_TABLE_MAX_ROWS + 8 +		\
	 2ULL * UWPROF_TABLE_MAX_PALETTE + 8 +				\
	 sizeof(struct uwprof_rule) * (u64)UWPROF_TABLE_MAX_RULES)

/*
 * The blob layout of UWPROF_TABLE_VERSION, as the tool builds it
 * (tool/table_blob.c asserts the same): a change here needs a new version.
 */
static_assert(sizeof(struct uwprof_table_hdr) == 72);
static_assert(offsetof(struct uwprof_table_hdr, nr_pages) == 56);
static_assert(sizeof(struct uwprof_table_page) == 8);
static_assert(sizeof(struct uwprof_rule) == 24);
static_assert(offsetof(struct uwprof_rule, fp_off) == 8);
static_assert(offsetof(struct uwprof_rule, cfa_arg) == 16);
static_assert(offsetof(struct uwprof_rule, saved_off) == 22);

u64 uwprof_store_mem_used(void)
{
	return atomic64_read(&uwprof_mem_used);
}

static int uwprof_store_charge(struct uwprof_session *s, u64 bytes)
{
	u64 max = READ_ONCE(uwprof_table_mem_max);

	if (atomic64_add_return(bytes, &uwprof_mem_used) > max) {
		atomic64_sub(bytes, &uwprof_mem_used);
		return -ENOSPC;
	}
	if (uwprof_quota_charge(s, bytes)) {
		atomic64_sub(bytes, &uwprof_mem_used);
		return -ENOSPC;
	}
	atomic64_add(bytes, &s->mem);
	return 0;
}

static void uwprof_store_uncharge(struct uwprof_session *s, u64 bytes)
{
	atomic64_sub(bytes, &uwprof_mem_used);
	uwprof_quota_uncharge(s, bytes);
	atomic64_sub(bytes, &s->mem);
}

/*
 * Last reference gone: no mapping list reachable by the sample path names
 * the table any more. May run in an RCU callback (softirq); kvfree() copes.
 */
static void uwprof_tab_release(struct kref *ref)
{
	struct uwprof_tab *tab = container_of(ref, struct uwprof_tab, ref);

	uwprof_store_uncharge(tab->s, tab->bytes);
	kvfree(tab->blob);
	kfree(tab);
}

static void uwprof_tab_put(struct uwprof_tab *tab)
{
	kref_put(&tab->ref, uwprof_tab_release);
}

/* Drops a list's reference; the last drops its tables' and its charge. */
static void uwprof_maps_put(struct uwprof_maps *m)
{
	u32 i;

	if (!refcount_dec_and_test(&m->ref))
		return;
	for (i = 0; i < m->nr; i++) {
		const struct uwprof_table *t = m->maps[i].table;

		if (t)
			uwprof_tab_put(container_of(t, struct uwprof_tab, t));
	}
	uwprof_store_uncharge(m->s, m->bytes);
	kvfree(m);
}

/* A process entry nobody can reach any more; charged sizeof(*p). */
static void uwprof_proc_free(struct uwprof_session *s, struct uwprof_proc *p)
{
	if (p->set)
		uwprof_maps_put(p->set);
	uwprof_store_uncharge(s, sizeof(*p));
	kfree(p);
}

static void uwprof_proc_free_rcu(struct rcu_head *rcu)
{
	struct uwprof_proc *p = container_of(rcu, struct uwprof_proc, rcu);

	uwprof_proc_free(p->set->s, p);
}

/*
 * A process entry for 'tgid' naming list 'm' (whose reference it takes
 * over on success), charged to the session; an ERR_PTR otherwise.
 */
static struct uwprof_proc *uwprof_proc_new(struct uwprof_session *s,
					   struct uwprof_maps *m, u32 tgid,
					   u64 id, gfp_t gfp)
{
	struct uwprof_proc *p;

	int ret;

	ret = uwprof_store_charge(s, sizeof(*p));
	if (ret)
		return ERR_PTR(ret);
	p = kzalloc(sizeof(*p), gfp);
	if (!p) {
		uwprof_store_uncharge(s, sizeof(*p));
		return ERR_PTR(-ENOMEM);
	}
	p->set = m;
	p->maps = m->maps;
	p->py = m->py;
	p->nr_maps = m->nr;
	p->tgid = tgid;
	p->id = id;
	return p;
}

int uwprof_store_table_add(struct uwprof_session *s, void __user *arg)
{
	struct uwprof_table_add a;
	struct uwprof_tab *tab;
	void *blob;
	int ret;

	ret = uwprof_dev_copy_args(&a, sizeof(a), sizeof(a), arg);
	if (ret)
		return ret;
	if (a.flags || !a.object_id)
		return -EINVAL;
	if (a.data_size < sizeof(struct uwprof_table_hdr))
		return -EINVAL;
	if (a.data_size > UWPROF_BLOB_MAX)
		return -E2BIG;
	if (xa_load(&s->objects, a.object_id))
		return -EEXIST;

	tab = kzalloc(sizeof(*tab), GFP_KERNEL_ACCOUNT);
	if (!tab)
		return -ENOMEM;
	kref_init(&tab->ref);
	tab->s = s;
	tab->object_id = a.object_id;

	/* Charge before allocating so a table over the cap costs nothing. */
	ret = uwprof_store_charge(s, a.data_size);
	if (ret)
		goto free_tab;
	tab->bytes = a.data_size;

	blob = kvmalloc(a.data_size, GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!blob) {
		ret = -ENOMEM;
		goto uncharge;
	}
	tab->blob = blob;
	if (copy_from_user(blob, u64_to_user_ptr(a.data), a.data_size)) {
		ret = -EFAULT;
		goto uncharge;
	}
	ret = uwprof_table_check(blob, a.data_size);
	if (ret)
		goto uncharge;
	uwprof_table_init(&tab->t, blob);

	ret = xa_insert(&s->objects, a.object_id, tab, GFP_KERNEL_ACCOUNT);
	if (ret) {
		if (ret == -EBUSY)
			ret = -EEXIST;
		goto uncharge;
	}
	atomic64_inc(&s->nr_tables);
	return 0;

uncharge:
	uwprof_store_uncharge(s, tab->bytes);
	kvfree(tab->blob);
free_tab:
	kfree(tab);
	return ret;
}

int uwprof_store_object_del(struct uwprof_session *s, void __user *arg)
{
	struct uwprof_object_del d;
	struct uwprof_tab *tab;
	int ret;

	ret = uwprof_dev_copy_args(&d, sizeof(d), sizeof(d), arg);
	if (ret)
		return ret;
	if (d.flags || !d.object_id)
		return -EINVAL;
	tab = xa_erase(&s->objects, d.object_id);
	if (!tab)
		return -ENOENT;
	atomic64_dec(&s->nr_tables);
	/* Mapping lists still naming it keep it alive until they go. */
	uwprof_tab_put(tab);
	return 0;
}

/* Valid pids are 1 .. PID_MAX_LIMIT. */
static bool uwprof_pid_ok(u32 pid)
{
	return pid && pid <= PID_MAX_LIMIT;
}

static int uwprof_map_check(const struct uwprof_map *m, u64 prev_end)
{
	if (m->flags & ~UWPROF_MAP_NO_TABLE || m->__reserved)
		return -EINVAL;
	if (m->start >= m->end || m->end > UWPROF_TASK_SIZE_MAX)
		return -EINVAL;
	/* Sorted by start and non-overlapping. */
	if (m->start < prev_end)
		return -EINVAL;
	if (m->flags & UWPROF_MAP_NO_TABLE)
		return m->object_id ? -EINVAL : 0;
	return m->object_id ? 0 : -EINVAL;
}

/*
 * The live process 'pid' that started at 'ticks' (clock ticks since boot,
 * as /proc/PID/stat says), with a reference; NULL if there is none.
 */
static struct task_struct *uwprof_store_task(u32 pid, u64 ticks)
{
	struct task_struct *t;

	rcu_read_lock();
	t = pid_task(find_pid_ns(pid, &init_pid_ns), PIDTYPE_TGID);
	if (t && div_u64(t->start_boottime, NSEC_PER_SEC / USER_HZ) != ticks)
		t = NULL;
	if (t)
		get_task_struct(t);
	rcu_read_unlock();
	return t;
}

/*
 * A list bound to 'task' was stored: if the process exits meanwhile, its
 * exit probe may have run before the store and missed it, so take it back
 * (only ours: a newer list has its own check).
 */
static int uwprof_store_still_alive(struct uwprof_session *s,
				    struct task_struct *task,
				    struct uwprof_proc *p)
{
	/* Pairs with do_exit()'s decrement of live before the probe's xa_load. */
	smp_mb();
	if (atomic_read(&task->signal->live))
		return 0;
	if (xa_cmpxchg(&s->procs, p->tgid, p, NULL, GFP_KERNEL) == p) {
		atomic64_dec(&s->nr_procs);
		call_rcu(&p->rcu, uwprof_proc_free_rcu);
	}
	return -ESRCH;
}

static int uwprof_store_maps_publish(struct uwprof_session *s,
				     const struct uwprof_maps_set *a,
				     struct task_struct *task)
{
	struct uwprof_python py = {};
	struct uwprof_proc *p, *old;
	struct uwprof_maps *m;
	struct uwprof_map *um;
	u64 prev_end = 0;
	size_t bytes;
	u32 i, n;
	int ret;

	if (!uwprof_pid_ok(a->pid) || !a->nr_maps)
		return -EINVAL;
	if (a->nr_maps > UWPROF_MAX_MAPS)
		return -E2BIG;
	n = a->nr_maps;
	if (a->flags & UWPROF_MAPS_PYTHON) {
		ret = uwprof_dev_copy_args(&py, sizeof(py), sizeof(py),
					   u64_to_user_ptr(a->python));
		if (ret)
			return ret;
		ret = uwprof_py_check(&py, UWPROF_TASK_SIZE_MAX);
		if (ret)
			return ret;
	}

	um = kvmalloc_array(n, sizeof(*um), GFP_KERNEL | __GFP_NOWARN);
	if (!um)
		return -ENOMEM;
	if (copy_from_user(um, u64_to_user_ptr(a->maps), n * sizeof(*um))) {
		ret = -EFAULT;
		goto free_um;
	}
	for (i = 0; i < n; i++) {
		ret = uwprof_map_check(&um[i], prev_end);
		if (ret)
			goto free_um;
		prev_end = um[i].end;
	}

	bytes = struct_size(m, maps, n);
	if (a->flags & UWPROF_MAPS_PYTHON)
		bytes += sizeof(struct uwprof_python);
	m = kvzalloc(bytes, GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!m) {
		ret = -ENOMEM;
		goto free_um;
	}
	refcount_set(&m->ref, 1);
	m->s = s;
	if (a->flags & UWPROF_MAPS_PYTHON) {
		struct uwprof_python *kpy = (struct uwprof_python *)&m->maps[n];

		*kpy = py;
		m->py = kpy;
	}

	/* Resolve object ids; the session mutex keeps 'objects' stable. */
	for (i = 0; i < n; i++) {
		struct uwprof_unwind_map *km = &m->maps[i];
		struct uwprof_tab *tab = NULL;

		if (um[i].object_id) {
			tab = xa_load(&s->objects, um[i].object_id);
			if (!tab) {
				ret = -ENOENT;
				goto put_maps;
			}
			kref_get(&tab->ref);
			km->table = &tab->t;
		}
		km->start = um[i].start;
		km->end = um[i].end;
		km->bias = um[i].bias;
		km->flags = um[i].flags;
		m->nr = i + 1;
	}

	ret = uwprof_store_charge(s, bytes);
	if (ret)
		goto put_maps;
	m->bytes = bytes;

	p = uwprof_proc_new(s, m, a->pid, atomic64_inc_return(&uwprof_maps_ids),
			    GFP_KERNEL_ACCOUNT);
	if (IS_ERR(p)) {
		ret = PTR_ERR(p);
		goto put_maps;
	}
	old = xa_store(&s->procs, a->pid, p, GFP_KERNEL_ACCOUNT);
	if (xa_is_err(old)) {
		ret = xa_err(old);
		uwprof_proc_free(s, p);
		goto free_um;
	}
	if (old)
		call_rcu(&old->rcu, uwprof_proc_free_rcu);
	else
		atomic64_inc(&s->nr_procs);
	kvfree(um);
	return task ? uwprof_store_still_alive(s, task, p) : 0;

put_maps:
	uwprof_maps_put(m);
free_um:
	kvfree(um);
	return ret;
}

int uwprof_store_maps_set(struct uwprof_session *s, void __user *arg)
{
	struct task_struct *task = NULL;
	struct uwprof_maps_set a;
	int ret;

	/* The first version of the struct ended before start_time. */
	ret = uwprof_dev_copy_args(&a, sizeof(a),
				   offsetof(struct uwprof_maps_set, start_time),
				   arg);
	if (ret)
		return ret;
	if (a.flags & ~(UWPROF_MAPS_START_TIME | UWPROF_MAPS_PYTHON) ||
	    (!(a.flags & UWPROF_MAPS_START_TIME) && a.start_time) ||
	    (!(a.flags & UWPROF_MAPS_PYTHON) && a.python)) {
		ret = -EINVAL;
	} else if (a.flags & UWPROF_MAPS_START_TIME) {
		task = uwprof_store_task(a.pid, a.start_time);
		ret = task ? 0 : -ESRCH;
	}
	if (!ret)
		ret = uwprof_store_maps_publish(s, &a, task);
	if (task)
		put_task_struct(task);
	/* The reader answered for this process, upload or not: let it go. */
	if (uwprof_pid_ok(a.pid))
		uwprof_hold_release(s, a.pid);
	return ret;
}

/* PROCESS_DEL: whatever entry 'tgid' has, dead or alive. */
static bool uwprof_store_proc_drop(struct uwprof_session *s, u32 tgid)
{
	struct uwprof_proc *p;

	p = xa_erase(&s->procs, tgid);
	if (!p)
		return false;
	atomic64_dec(&s->nr_procs);
	call_rcu(&p->rcu, uwprof_proc_free_rcu);
	return true;
}

/*
 * Exit or exec probe: from now on the sample path ignores the entry of
 * 'tgid' (its mappings are the old image's or a dead process's); a
 * callback takes it out of the xarray later. Whether it was alive.
 * Context: preemption disabled, inside rcu_read_lock(); lock-free.
 */
bool uwprof_store_proc_kill(struct uwprof_session *s, u32 tgid)
{
	struct uwprof_proc *p = xa_load(&s->procs, tgid);

	return p && !xchg(&p->dead, 1);
}

/* Whether 'tgid' has a dead entry. Any context but NMI, under RCU. */
bool uwprof_store_proc_dead(struct uwprof_session *s, u32 tgid)
{
	const struct uwprof_proc *p = xa_load(&s->procs, tgid);

	return p && READ_ONCE(p->dead);
}

/*
 * The lifecycle callbacks (process context, inside rcu_read_lock()):
 * takes a dead entry of 'tgid' out, not one a MAPS_SET put in since.
 * Whether it did.
 */
bool uwprof_store_proc_reap(struct uwprof_session *s, u32 tgid)
{
	struct uwprof_proc *p = xa_load(&s->procs, tgid);

	if (!p || !READ_ONCE(p->dead))
		return false;
	/* Storing NULL allocates nothing. */
	if (xa_cmpxchg(&s->procs, tgid, p, NULL, GFP_NOWAIT) != p)
		return false;
	atomic64_dec(&s->nr_procs);
	call_rcu(&p->rcu, uwprof_proc_free_rcu);
	return true;
}

/* A reference on a list dropped outside this file (lifecycle.c). */
void uwprof_store_maps_put(struct uwprof_maps *m)
{
	uwprof_maps_put(m);
}

/*
 * A new process starts with its parent's address space, so it starts with
 * a copy of its parent's mapping list 'm' (list id 'id'), whose reference
 * this takes over: its first samples unwind before the tool has even seen
 * it. Best effort: an allocation failure or the memory cap just leaves
 * the child without a list (UNKNOWN_MAP follows); so does an entry its
 * reader uploaded already. Context: the fork callback, process context
 * in the child itself, before its first user instruction.
 */
bool uwprof_store_proc_inherit(struct uwprof_session *s, struct uwprof_maps *m,
			       u32 child, u64 id)
{
	struct uwprof_proc *p, *old, *cur;

	/* Killed before it ran: its exit may not see an entry put in now. */
	if (current->flags & PF_EXITING)
		goto put;
	p = uwprof_proc_new(s, m, child, id, GFP_KERNEL | __GFP_NOWARN);
	if (IS_ERR(p))
		goto put;
	/* A dead entry is a former process's of this pid, whose exit lost it. */
	old = xa_load(&s->procs, child);
	if (old && !READ_ONCE(old->dead))
		goto free;
	cur = xa_cmpxchg(&s->procs, child, old, p, GFP_KERNEL | __GFP_NOWARN);
	if (cur != old)
		goto free;
	if (old)
		call_rcu(&old->rcu, uwprof_proc_free_rcu);
	else
		atomic64_inc(&s->nr_procs);
	return true;

free:
	uwprof_proc_free(s, p);		/* puts m */
	return false;
put:
	uwprof_maps_put(m);
	return false;
}

int uwprof_store_process_del(struct uwprof_session *s, void __user *arg)
{
	struct uwprof_process_del d;
	int ret;

	ret = uwprof_dev_copy_args(&d, sizeof(d), sizeof(d), arg);
	if (ret)
		return ret;
	if (!uwprof_pid_ok(d.pid))
		return -EINVAL;
	uwprof_hold_release(s, d.pid);
	return uwprof_store_proc_drop(s, d.pid) ? 0 : -ENOENT;
}

void uwprof_store_init(struct uwprof_session *s)
{
	xa_init(&s->objects);
	xa_init(&s->procs);
	atomic64_set(&s->mem, 0);
	atomic64_set(&s->nr_tables, 0);
	atomic64_set(&s->nr_procs, 0);
	atomic64_set(&s->procs_dropped, 0);
	atomic64_set(&s->procs_inherited, 0);
	atomic64_set(&s->lifecycle_lost, 0);
	atomic_set(&s->lc_busy, 0);
	uwprof_hold_init(s);
}

/*
 * Frees everything. The caller made the session unreachable from the
 * sample path and the probes and waited for a grace period and for every
 * pending RCU callback (rcu_barrier()), so lists can be freed directly.
 */
void uwprof_store_destroy(struct uwprof_session *s)
{
	struct uwprof_proc *p;
	struct uwprof_tab *tab;
	unsigned long i;

	uwprof_hold_destroy(s);
	xa_for_each(&s->procs, i, p) {
		xa_erase(&s->procs, i);
		uwprof_proc_free(s, p);
	}
	xa_destroy(&s->procs);
	xa_for_each(&s->objects, i, tab) {
		xa_erase(&s->objects, i);
		uwprof_tab_put(tab);
	}
	xa_destroy(&s->objects);
}
