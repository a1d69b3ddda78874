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
 * Contexts: the probe runs in the mapping task with its mm's lock held for
 * writing and preemption disabled (no sleeping; interrupts and the sample
 * path may nest); get/put in process context under uwprof_mmap_lock.
 */
#include <linux/dcache.h>
#include <linux/error-injection.h>
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
#include <linux/string.h>

#include "compat.h"
#include "internal.h"

/* A record under construction: header, then room for the longest path. */
struct uwprof_mmap_buf {
	struct uwprof_rec_mmap rec;
	char path[PATH_MAX];
};

static int uwprof_mmap_pre(struct kprobe *kp, struct pt_regs *regs);

static struct kprobe uwprof_mmap_kp = {
	.symbol_name	= "perf_event_mmap",
	.pre_handler	= uwprof_mmap_pre,
};

/* Covers uwprof_mmap_users and the buffers' allocation. */
static DEFINE_MUTEX(uwprof_mmap_lock);
static unsigned int uwprof_mmap_users;
/* Written under uwprof_mmap_lock while the kprobe is not registered. */
static struct uwprof_mmap_buf __percpu *uwprof_mmap_bufs;

/* The vDSO is the one executable special mapping named so. */
static bool uwprof_mmap_is_vdso(struct vm_area_struct *vma)
{
	const char *name;

	if (!vma->vm_ops || !vma->vm_ops->name)
		return false;
	name = vma->vm_ops->name(vma);
	return name && !strcmp(name, "[vdso]");
}

/* Fills b->rec for 'vma'; returns its size, 0 for a mapping not recorded. */
static u32 uwprof_mmap_fill(struct uwprof_mmap_buf *b,
			    struct vm_area_struct *vma)
{
	struct uwprof_rec_mmap *m = &b->rec;
	struct file *f = vma->vm_file;
	u32 size = 0, flags = 0;
	char *p;

	memset(m, 0, sizeof(*m));
	if (f) {
		struct inode *inode = file_inode(f);

		/*
		 * d_path() may take rename_lock: not from NMI context, where
		 * an int3-based kprobe runs on x86 (an ftrace-based one, the
		 * usual case at a function's entry, does not). It takes it,
		 * or mount_lock, only when it races a rename or a mount; on
		 * PREEMPT_RT both sleep, which is still open there.
		 */
		p = in_nmi() ? ERR_PTR(-EAGAIN) :
			       d_path(&f->f_path, b->path, sizeof(b->path));
		if (IS_ERR(p)) {
			flags |= UWPROF_MMAP_PATH_CUT;
		} else {
			size = strlen(p) + 1;
			memmove(b->path, p, size);
		}
		m->ino = inode->i_ino;
		m->dev_major = MAJOR(inode->i_sb->s_dev);
		m->dev_minor = MINOR(inode->i_sb->s_dev);
		m->pgoff = (u64)vma->vm_pgoff << PAGE_SHIFT;
	} else if (uwprof_mmap_is_vdso(vma)) {
		flags |= UWPROF_MMAP_VDSO;
	} else {
		return 0;		/* anonymous code: JIT, no file to read */
	}
	memset(b->path + size, 0, ALIGN(size, 8) - size);
	m->hdr.type = UWPROF_REC_MMAP;
	m->hdr.size = sizeof(*m) + ALIGN(size, 8);
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
	m->path_size = size;
	return m->hdr.size;
}

/*
 * At most UWPROF_MMAP_RATE records a second per CPU and session: a
 * process that loops over mprotect(PROT_EXEC) would otherwise fill the
 * ring, and cost this probe's time, with records of one page. Runs with
 * preemption disabled; the sample path that may nest never touches these
 * fields.
 */
static bool uwprof_mmap_admit(struct uwprof_sampler *sp, u64 now)
{
	struct uwprof_pcpu_stats *c = this_cpu_ptr(sp->stats);
	u64 sec = div_u64(now, NSEC_PER_SEC);

	if (c->mmap_second != sec) {
		c->mmap_second = sec;
		c->mmap_in_second = 0;
	}
	if (c->mmap_in_second >= UWPROF_MMAP_RATE) {
		c->mmap_throttled++;
		return false;
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

static int uwprof_mmap_pre(struct kprobe *kp, struct pt_regs *regs)
{
	struct vm_area_struct *vma =
		(struct vm_area_struct *)regs_get_kernel_argument(regs, 0);
	struct uwprof_sampler *sp;
	struct uwprof_session *s;
	struct uwprof_mmap_buf *b;
	u32 tgid = current->tgid, size = 0;
	bool wake;
	u64 now;

	if (!vma || !(vma->vm_flags & VM_EXEC) || vma->vm_mm != current->mm ||
	    (current->flags & PF_KTHREAD) ||
	    uwprof_compat_user_regs(task_pt_regs(current)))
		return 0;
	b = this_cpu_ptr(uwprof_mmap_bufs);
	now = ktime_get_mono_fast_ns();
	rcu_read_lock();
	list_for_each_entry_rcu(s, &uwprof_sessions, list) {
		sp = rcu_dereference(s->active);
		if (!uwprof_mmap_wanted(sp) || !uwprof_mmap_admit(sp, now))
			continue;
		/* One record for every session that wants it. */
		if (!size)
			size = uwprof_mmap_fill(b, vma);
		if (!size)
			break;
		/* A library of a process the reader uploaded: it should know now. */
		wake = xa_load(&s->procs, tgid);
		if (uwprof_sample_emit(sp, &b->rec, size, wake))
			this_cpu_inc(sp->stats->mmap_records);
	}
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
	uwprof_mmap_bufs = alloc_percpu(struct uwprof_mmap_buf);
	ret = uwprof_mmap_bufs ? 0 : -ENOMEM;
	if (!ret) {
		/* A kprobe struct cannot be registered twice without a reset. */
		uwprof_mmap_kp.addr = NULL;
		uwprof_mmap_kp.flags = 0;
		ret = register_kprobe(&uwprof_mmap_kp);
	}
	if (ret) {
		free_percpu(uwprof_mmap_bufs);
		uwprof_mmap_bufs = NULL;
		uwprof_mmap_users--;
	}
unlock:
	mutex_unlock(&uwprof_mmap_lock);
	return ret == -ENOMEM ? ret : ret ? -EOPNOTSUPP : 0;
}

ALLOW_ERROR_INJECTION(uwprof_mmap_get, ERRNO);

/*
 * The last session stops asking: unregister_kprobe() returns once no
 * handler runs any more, and only then are the buffers freed.
 */
void uwprof_mmap_put(void)
{
	mutex_lock(&uwprof_mmap_lock);
	if (!WARN_ON(!uwprof_mmap_users) && !--uwprof_mmap_users) {
		unregister_kprobe(&uwprof_mmap_kp);
		free_percpu(uwprof_mmap_bufs);
		uwprof_mmap_bufs = NULL;
	}
	mutex_unlock(&uwprof_mmap_lock);
}
