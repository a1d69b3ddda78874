// SPDX-License-Identifier: GPL-2.0
/*
 * MMAP records: every executable mapping a traced process makes, as it
 * makes it (UWPROF_START_MMAP). A reader that learns of a process's code
 * only from /proc/PID/maps misses processes that live a few milliseconds,
 * and learns of a dlopen() only when a sample cannot be unwound. No
 * tracepoint is passed by every mmap; perf_event_mmap(), which the kernel
 * calls with each new mapping of a file or special mapping (the vDSO), is,
 * so a kprobe on it writes the record. The kprobe is registered while a
 * session asks for records, and never otherwise.
 *
 * The probe runs with the mm's lock held for writing and preemption
 * disabled, where the file's path cannot be had: d_path() takes
 * rename_lock or mount_lock when it races a rename or a mount, and on
 * PREEMPT_RT both are sleeping locks. So the probe takes what it can
 * without a lock (the mapping, the file's identity, the time, a reference
 * on the file) and queues a task_work (uwprof_mmap_work) on the mapping
 * task, which resolves the path and writes the record on the way back to
 * user space, in process context. It runs before the task's next user
 * instruction, so before the task can run the code it mapped; an exec's
 * records are written when the exec returns, in either order with the
 * exec's EXIT record, which a lifecycle task_work may write at the same
 * point. The record keeps the time of the mapping, taken in the probe, so
 * a reader orders it by time_ns as it must anyway for records from
 * several CPUs' rings: an exec's mappings are dated before its EXIT
 * record, a library's before the samples of its code. The same on every
 * kernel, so the one code path is the one every kernel's tests run. When
 * a record cannot be deferred (every work of the pool pending, or the
 * probe in NMI context, where an int3-based kprobe runs on x86), the
 * probe writes it at once without its path (UWPROF_MMAP_PATH_CUT), which
 * a reader cannot attribute to a file by path: a shorter stack, never one
 * named after the wrong file. A task that exits before the callback runs
 * (exit_task_work()) never runs the code again: its record is dropped.
 * The vDSO has no path and is written by the probe.
 *
 * Contexts: the probe runs in the mapping task with its mm's lock held for
 * writing and preemption disabled (no sleeping, no spinlock_t; interrupts
 * and the sample path may nest); the callback in that task, in process
 * context; get/put in process context under uwprof_mmap_lock.
 */
#include <linux/bitmap.h>
#include <linux/dcache.h>
#include <linux/delay.h>
#include <linux/error-injection.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/hardirq.h>
#include <linux/kprobes.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/mutex.h>
#include <linux/path.h>
#include <linux/percpu.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/task_work.h>

#include "compat.h"
#include "internal.h"

/* A record with its path: header, then room for the longest path. */
struct uwprof_mmap_buf {
	struct uwprof_rec_mmap rec;
	char path[PATH_MAX];
};

/*
 * A record waiting for its path. Claimed by the probe (a bit in
 * uwprof_mmap_used), filled while only the probe can see it, queued on
 * the mapping task; the callback puts 'file' (taken by the probe once
 * queued) and gives the work back as its very last step.
 */
struct uwprof_mmap_work {
	struct callback_head cb;
	struct file *file;
	/* The record but its path; not the type: it ends in a flexible array. */
	u64 rec[sizeof(struct uwprof_rec_mmap) / sizeof(u64)];
};

static_assert(sizeof(struct uwprof_rec_mmap) % sizeof(u64) == 0);

/*
 * Records pending at once: one per mapping between the mmap (or exec) and
 * its task's return to user space; an exec makes one or two (the
 * program, its interpreter).
 */
#define UWPROF_MMAP_WORKS	512

/*
 * Static, not slab: task_work_add() asks KASAN to record a slab object's
 * queueing stack, which may allocate; for other memory it records none.
 */
static struct uwprof_mmap_work uwprof_mmap_works[UWPROF_MMAP_WORKS];
static DECLARE_BITMAP(uwprof_mmap_used, UWPROF_MMAP_WORKS);
/* Set once a work was queued: unload then waits out its callbacks' ends. */
static bool uwprof_mmap_queued;

static int uwprof_mmap_pre(struct kprobe *kp, struct pt_regs *regs);

static struct kprobe uwprof_mmap_kp = {
	.symbol_name	= "perf_event_mmap",
	.pre_handler	= uwprof_mmap_pre,
};

/* Covers uwprof_mmap_users and the kprobe's registration. */
static DEFINE_MUTEX(uwprof_mmap_lock);
static unsigned int uwprof_mmap_users;

/* Any context but NMI: a free work, or NULL when all are pending. */
static struct uwprof_mmap_work *uwprof_mmap_work_get(void)
{
	unsigned long i;

	for_each_clear_bit(i, uwprof_mmap_used, UWPROF_MMAP_WORKS) {
		if (!test_and_set_bit(i, uwprof_mmap_used))
			return &uwprof_mmap_works[i];
	}
	return NULL;
}

/* Its fields are no longer read once the bit is clear (release order). */
static void uwprof_mmap_work_put(struct uwprof_mmap_work *w)
{
	clear_bit_unlock(w - uwprof_mmap_works, uwprof_mmap_used);
}

/* The vDSO is the one executable special mapping named so. */
static bool uwprof_mmap_is_vdso(struct vm_area_struct *vma)
{
	const char *name;

	if (!vma->vm_ops || !vma->vm_ops->name)
		return false;
	name = vma->vm_ops->name(vma);
	return name && !strcmp(name, "[vdso]");
}

/*
 * Fills 'm' for 'vma' as a record without a path (a file's has
 * UWPROF_MMAP_PATH_CUT until the callback finds its path); false for a
 * mapping not recorded. Context: the probe.
 */
static bool uwprof_mmap_fill(struct uwprof_rec_mmap *m,
			     struct vm_area_struct *vma)
{
	struct file *f = vma->vm_file;
	u32 flags = 0;

	memset(m, 0, sizeof(*m));
	if (f) {
		struct inode *inode = file_inode(f);

		flags |= UWPROF_MMAP_PATH_CUT;
		m->ino = inode->i_ino;
		m->dev_major = MAJOR(inode->i_sb->s_dev);
		m->dev_minor = MINOR(inode->i_sb->s_dev);
		m->pgoff = (u64)vma->vm_pgoff << PAGE_SHIFT;
	} else if (uwprof_mmap_is_vdso(vma)) {
		flags |= UWPROF_MMAP_VDSO;
	} else {
		return false;		/* anonymous code: JIT, no file to read */
	}
	m->hdr.type = UWPROF_REC_MMAP;
	m->hdr.size = sizeof(*m);
	m->time_ns = ktime_get_mono_fast_ns();
	m->pid = current->tgid;
	m->tid = current->pid;
	m->start = vma->vm_start;
	m->end = vma->vm_end;
	/* The loader sets start_code once the new image is mapped. */
	if (!current->mm->start_code)
		flags |= UWPROF_MMAP_EXEC;
	m->flags = flags;
	m->prot = (vma->vm_flags & VM_READ ? PROT_READ : 0) |
		  (vma->vm_flags & VM_WRITE ? PROT_WRITE : 0) | PROT_EXEC;
	return true;
}

/*
 * At most UWPROF_MMAP_RATE records a second per CPU and session: a
 * process that loops over mprotect(PROT_EXEC) would otherwise fill the
 * ring, and cost this probe's time, with records of one page. Runs with
 * preemption disabled; the sample path that may nest never touches these
 * fields.
 */
/* Whether 'sp' wrote its second's share of records on this CPU. */
static bool uwprof_mmap_full(struct uwprof_sampler *sp, u64 now)
{
	const struct uwprof_pcpu_stats *c = this_cpu_ptr(sp->stats);

	return c->mmap_second == div_u64(now, NSEC_PER_SEC) &&
	       c->mmap_in_second >= UWPROF_MMAP_RATE;
}

static bool uwprof_mmap_admit(struct uwprof_sampler *sp, u64 now)
{
	struct uwprof_pcpu_stats *c = this_cpu_ptr(sp->stats);
	u64 sec = div_u64(now, NSEC_PER_SEC);

	if (uwprof_mmap_full(sp, now)) {
		c->mmap_throttled++;
		return false;
	}
	if (c->mmap_second != sec) {
		c->mmap_second = sec;
		c->mmap_in_second = 0;
	}
	c->mmap_in_second++;
	return true;
}

/* Whether sampler 'sp' wants the mappings of the current process. */
static bool uwprof_mmap_wanted(const struct uwprof_sampler *sp)
{
	return sp && (sp->flags & UWPROF_START_MMAP) &&
	       current->tgid != sp->owner_tgid &&
	       uwprof_sample_traced(sp, current);
}

/*
 * Whether a session wants the current process's mappings and has room for
 * one more record on this CPU this second. When every session that wants
 * them is full, the mapping is counted throttled in each, as
 * uwprof_mmap_admit() would, and nothing is queued: a process looping over
 * mprotect(PROT_EXEC) costs no path lookup per mapping. Otherwise the
 * callback admits. Context: the probe, inside rcu_read_lock().
 */
static bool uwprof_mmap_wanted_any(u64 now)
{
	struct uwprof_sampler *sp;
	struct uwprof_session *s;
	bool wanted = false;

	list_for_each_entry_rcu(s, &uwprof_sessions, list) {
		sp = rcu_dereference(s->active);
		if (!uwprof_mmap_wanted(sp))
			continue;
		if (!uwprof_mmap_full(sp, now))
			return true;
		wanted = true;
	}
	if (!wanted)
		return false;
	list_for_each_entry_rcu(s, &uwprof_sessions, list) {
		sp = rcu_dereference(s->active);
		if (uwprof_mmap_wanted(sp))
			this_cpu_ptr(sp->stats)->mmap_throttled++;
	}
	return false;
}

/*
 * Record 'm' of the current process to every session that wants it and
 * has not written its second's share on this CPU. Context: preemption
 * disabled, inside rcu_read_lock().
 */
static void uwprof_mmap_write(const struct uwprof_rec_mmap *m)
{
	u64 now = ktime_get_mono_fast_ns();
	struct uwprof_sampler *sp;
	struct uwprof_session *s;
	bool wake;

	list_for_each_entry_rcu(s, &uwprof_sessions, list) {
		sp = rcu_dereference(s->active);
		if (!uwprof_mmap_wanted(sp) || !uwprof_mmap_admit(sp, now))
			continue;
		/* A library of a process the reader uploaded: it should know now. */
		wake = xa_load(&s->procs, m->pid);
		if (uwprof_sample_emit(sp, m, m->hdr.size, wake))
			this_cpu_inc(sp->stats->mmap_records);
	}
}

/*
 * The callback: in the mapping task on its way back to user space (or in
 * exit_task_work()), process context, no lock held. d_path() may sleep
 * here. Without memory for the path the record goes without it.
 */
static void uwprof_mmap_work(struct callback_head *cb)
{
	struct uwprof_mmap_work *w = container_of(cb, struct uwprof_mmap_work, cb);
	struct uwprof_rec_mmap *m = (struct uwprof_rec_mmap *)w->rec;
	struct uwprof_mmap_buf *b = NULL;
	u32 size;
	char *p;

	if (current->flags & PF_EXITING)
		goto put;
	b = kmalloc(sizeof(*b), GFP_KERNEL);
	if (b) {
		memcpy(&b->rec, m, sizeof(b->rec));
		m = &b->rec;
		p = d_path(&w->file->f_path, b->path, sizeof(b->path));
		if (!IS_ERR(p)) {
			size = strlen(p) + 1;
			memmove(b->path, p, size);
			memset(b->path + size, 0, ALIGN(size, 8) - size);
			m->hdr.size = sizeof(*m) + ALIGN(size, 8);
			m->path_size = size;
			m->flags &= ~UWPROF_MMAP_PATH_CUT;
		}
	}
	rcu_read_lock();
	preempt_disable();
	uwprof_mmap_write(m);
	preempt_enable();
	rcu_read_unlock();
	kfree(b);
put:
	fput(w->file);
	uwprof_mmap_work_put(w);
}

static int uwprof_mmap_pre(struct kprobe *kp, struct pt_regs *regs)
{
	struct vm_area_struct *vma =
		(struct vm_area_struct *)regs_get_kernel_argument(regs, 0);
	struct uwprof_mmap_work *w;
	struct uwprof_rec_mmap m;

	if (!vma || !(vma->vm_flags & VM_EXEC) || vma->vm_mm != current->mm ||
	    (current->flags & PF_KTHREAD) ||
	    uwprof_compat_user_regs(task_pt_regs(current)))
		return 0;
	rcu_read_lock();
	if (!uwprof_mmap_fill(&m, vma) || !uwprof_mmap_wanted_any(m.time_ns))
		goto unlock;
	if (vma->vm_file && !in_nmi()) {
		w = uwprof_mmap_work_get();
		if (w) {
			memcpy(w->rec, &m, sizeof(w->rec));
			init_task_work(&w->cb, uwprof_mmap_work);
			/*
			 * The callback runs in this task, later: the file
			 * is taken after queueing, never put from here.
			 */
			if (!task_work_add(current, &w->cb, TWA_RESUME)) {
				w->file = get_file(vma->vm_file);
				WRITE_ONCE(uwprof_mmap_queued, true);
				goto unlock;
			}
			uwprof_mmap_work_put(w);
		}
	}
	uwprof_mmap_write(&m);
unlock:
	rcu_read_unlock();
	return 0;
}

/* Whether this kernel has kprobes; whether one fits is known at START. */
bool uwprof_mmap_available(void)
{
	return IS_ENABLED(CONFIG_KPROBES);
}

/*
 * A session starts asking for records: the first places the kprobe. Open
 * to fail_function: a kprobe that cannot be placed fails START late.
 */
int uwprof_mmap_get(void)
{
	int ret = 0;

	mutex_lock(&uwprof_mmap_lock);
	if (uwprof_mmap_users++)
		goto unlock;
	/* A kprobe struct cannot be registered twice without a reset. */
	uwprof_mmap_kp.addr = NULL;
	uwprof_mmap_kp.flags = 0;
	ret = register_kprobe(&uwprof_mmap_kp);
	if (ret)
		uwprof_mmap_users--;
unlock:
	mutex_unlock(&uwprof_mmap_lock);
	return ret == -ENOMEM ? ret : ret ? -EOPNOTSUPP : 0;
}

ALLOW_ERROR_INJECTION(uwprof_mmap_get, ERRNO);

/*
 * The last session stops asking: unregister_kprobe() returns once no
 * handler runs any more. Callbacks already queued still run, and write
 * to the sessions that want their records then.
 */
void uwprof_mmap_put(void)
{
	mutex_lock(&uwprof_mmap_lock);
	if (!WARN_ON(!uwprof_mmap_users) && !--uwprof_mmap_users)
		unregister_kprobe(&uwprof_mmap_kp);
	mutex_unlock(&uwprof_mmap_lock);
}

/*
 * Unload, with no session left: every queued callback runs soon (its
 * task returns to user space or goes on exiting) and gives its work back
 * last; the few instructions after that are waited out separately.
 */
void uwprof_mmap_exit(void)
{
	while (!bitmap_empty(uwprof_mmap_used, UWPROF_MMAP_WORKS))
		msleep(20);
	if (READ_ONCE(uwprof_mmap_queued))
		uwprof_compat_sync_tasks();
}
