// SPDX-License-Identifier: GPL-2.0
/*
 * The /dev/uwprof misc device: sessions (one per open file, state machine
 * in internal.h), ioctl dispatch, mmap of the rings and poll.
 * Process context only.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/cpumask.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/rculist.h>
#include <linux/slab.h>

#include "compat.h"
#include "internal.h"

/* Covers uwprof_sessions writes. */
static DEFINE_MUTEX(uwprof_dev_lock);
LIST_HEAD(uwprof_sessions);

static int uwprof_open(struct inode *inode, struct file *file)
{
	struct uwprof_session *s;
	int ret;

	if (!perfmon_capable())
		return -EPERM;
	s = kzalloc(sizeof(*s), GFP_KERNEL_ACCOUNT);
	if (!s)
		return -ENOMEM;
	/* Exec holds and the ring charge answer to the opener's credentials. */
	s->cred = get_current_cred();
	ret = uwprof_quota_open(s);
	if (ret) {
		put_cred(s->cred);
		kfree(s);
		return ret;
	}
	mutex_init(&s->lock);
	mutex_init(&s->ring_lock);
	init_waitqueue_head(&s->wq);
	uwprof_store_init(s);
	/*
	 * perf's rule: CAP_PERFMON (or CAP_SYS_ADMIN) lifts
	 * perf_event_paranoid, so the opener may see kernel addresses.
	 */
	s->may_kernel = perfmon_capable();
	/* Exec holds stop processes: ptrace's rule, decided at each exec. */
	s->may_ptrace = capable(CAP_SYS_PTRACE);
	s->state = UWPROF_IDLE;

	mutex_lock(&uwprof_dev_lock);
	list_add_rcu(&s->list, &uwprof_sessions);
	mutex_unlock(&uwprof_dev_lock);
	file->private_data = s;
	return 0;
}

/*
 * s->lock held, state SAMPLING. The probes stop reaching the sampler
 * here; uwprof_sample_stop() waits for the grace period that ends the
 * ones still using it.
 */
static void uwprof_dev_stop(struct uwprof_session *s)
{
	RCU_INIT_POINTER(s->active, NULL);
	uwprof_sample_stop(s->sampler);
	uwprof_hold_release_all(s);
	s->state = UWPROF_STOPPED;
}

static int uwprof_release(struct inode *inode, struct file *file)
{
	struct uwprof_session *s = file->private_data;

	mutex_lock(&s->lock);
	if (s->state == UWPROF_SAMPLING)
		uwprof_dev_stop(s);
	mutex_unlock(&s->lock);

	mutex_lock(&uwprof_dev_lock);
	list_del_rcu(&s->list);
	mutex_unlock(&uwprof_dev_lock);
	/*
	 * Wait for probes and lifecycle callbacks still walking the list,
	 * take back the lists of fork callbacks still pending, then wait for
	 * the RCU callbacks that free this session's dropped mapping lists
	 * (they uncharge it).
	 */
	synchronize_rcu();
	uwprof_lifecycle_forget(s);
	rcu_barrier();

	uwprof_sample_free(s->sampler);
	uwprof_store_destroy(s);
	uwprof_quota_release(s);
	mutex_destroy(&s->ring_lock);
	mutex_destroy(&s->lock);
	put_cred(s->cred);
	kfree(s);
	return 0;
}

static long uwprof_ioc_version(struct uwprof_session *s, void __user *arg)
{
	struct uwprof_version v = {};
	long usize;

	usize = uwprof_dev_out_size(arg, UWPROF_OUT_MIN);
	if (usize < 0)
		return usize;
	v.size = sizeof(v);
	v.abi_version = UWPROF_ABI_VERSION;
	v.table_version = UWPROF_TABLE_VERSION;
	v.arch = UWPROF_COMPAT_ARCH;
	if (uwprof_sample_hw_available())
		v.caps |= UWPROF_CAP_HW_CYCLES;
	if (s->may_kernel)
		v.caps |= UWPROF_CAP_KERNEL_STACK;
	v.caps |= UWPROF_CAP_SNAPSHOT | UWPROF_CAP_SESSIONS | UWPROF_CAP_COMM |
		  UWPROF_CAP_DESCENDANTS | UWPROF_CAP_MAPS_START |
		  UWPROF_CAP_WALK_TIME | UWPROF_CAP_PYTHON;
	if (uwprof_offcpu_available())
		v.caps |= UWPROF_CAP_OFF_CPU;
	if (uwprof_mmap_available())
		v.caps |= UWPROF_CAP_MMAP;
	if (uwprof_lifecycle_renames())
		v.caps |= UWPROF_CAP_RENAME;
	if (UWPROF_COMPAT_CGROUPS)
		v.caps |= UWPROF_CAP_CGROUP;
	v.nr_cpus = nr_cpu_ids;
	v.table_mem_max = READ_ONCE(uwprof_table_mem_max);
	return uwprof_dev_put(arg, &v, sizeof(v), usize);
}

/*
 * s->lock held. Other sessions' state plays no part: each samples with
 * its own events and rings.
 */
static long uwprof_ioc_start(struct uwprof_session *s, void __user *arg)
{
	struct uwprof_sampler *sp, *old;
	int ret;

	if (s->state == UWPROF_SAMPLING)
		return -EBUSY;
	sp = uwprof_sample_create(s, arg);
	if (IS_ERR(sp))
		return PTR_ERR(sp);

	mutex_lock(&s->ring_lock);
	old = s->sampler;
	if (old && atomic_read(&old->rings->mmapped)) {
		/* The reader still maps the previous run's rings. */
		mutex_unlock(&s->ring_lock);
		ret = -EBUSY;
		goto free;
	}
	s->sampler = sp;
	mutex_unlock(&s->ring_lock);
	uwprof_sample_free(old);

	/* Before the events: no exit or exec of a sampled process unreported. */
	rcu_assign_pointer(s->active, sp);
	ret = uwprof_sample_run(sp);
	if (ret) {
		RCU_INIT_POINTER(s->active, NULL);
		synchronize_rcu();
		mutex_lock(&s->ring_lock);
		s->sampler = NULL;
		mutex_unlock(&s->ring_lock);
		s->state = UWPROF_IDLE;
		goto free;
	}
	s->state = UWPROF_SAMPLING;
	return 0;

free:
	uwprof_sample_free(sp);
	return ret;
}

/* s->lock held. */
static long uwprof_ioc_stats(struct uwprof_session *s, void __user *arg)
{
	struct uwprof_stats *st;
	long usize;
	int ret;

	usize = uwprof_dev_out_size(arg, UWPROF_OUT_MIN);
	if (usize < 0)
		return usize;
	st = kzalloc(sizeof(*st), GFP_KERNEL);
	if (!st)
		return -ENOMEM;
	st->size = sizeof(*st);
	uwprof_sample_stats(s, st);
	st->tables = atomic64_read(&s->nr_tables);
	st->table_bytes = atomic64_read(&s->mem);
	st->processes = atomic64_read(&s->nr_procs);
	st->processes_dropped = atomic64_read(&s->procs_dropped);
	st->processes_inherited = atomic64_read(&s->procs_inherited);
	st->lifecycle_lost = atomic64_read(&s->lifecycle_lost);
	ret = uwprof_dev_put(arg, st, sizeof(*st), usize);
	kfree(st);
	return ret;
}

/* s->lock held. */
static long uwprof_ioc_ring_info(struct uwprof_session *s, void __user *arg)
{
	struct uwprof_ring_info ri = {};
	struct uwprof_rings *rs;
	long usize;

	usize = uwprof_dev_out_size(arg, UWPROF_OUT_MIN);
	if (usize < 0)
		return usize;
	if (!s->sampler)
		return -EINVAL;
	rs = s->sampler->rings;
	ri.size = sizeof(ri);
	ri.nr_rings = rs->nr;
	ri.stride = rs->stride;
	ri.data_size = rs->data_size;
	ri.mmap_size = rs->mmap_size;
	return uwprof_dev_put(arg, &ri, sizeof(ri), usize);
}

/*
 * A command without the struct size it was built with: the struct's own
 * 'size' field versions it (the uapi header's growth rules), so a caller
 * built against an older, smaller struct is understood.
 */
#define UWPROF_CMD(cmd)	((cmd) & ~(_IOC_SIZEMASK << _IOC_SIZESHIFT))

static long uwprof_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct uwprof_session *s = file->private_data;
	void __user *uarg = (void __user *)arg;
	long ret;

	if (UWPROF_CMD(cmd) == UWPROF_CMD(UWPROF_IOC_VERSION))
		return uwprof_ioc_version(s, uarg);

	mutex_lock(&s->lock);
	switch (UWPROF_CMD(cmd)) {
	case UWPROF_CMD(UWPROF_IOC_TABLE_ADD):
		ret = uwprof_store_table_add(s, uarg);
		break;
	case UWPROF_CMD(UWPROF_IOC_OBJECT_DEL):
		ret = uwprof_store_object_del(s, uarg);
		break;
	case UWPROF_CMD(UWPROF_IOC_MAPS_SET):
		ret = uwprof_store_maps_set(s, uarg);
		break;
	case UWPROF_CMD(UWPROF_IOC_PROCESS_DEL):
		ret = uwprof_store_process_del(s, uarg);
		break;
	case UWPROF_CMD(UWPROF_IOC_START):
		ret = uwprof_ioc_start(s, uarg);
		break;
	case UWPROF_CMD(UWPROF_IOC_STOP):
		if (s->state == UWPROF_SAMPLING) {
			uwprof_dev_stop(s);
			ret = 0;
		} else {
			ret = -EINVAL;
		}
		break;
	case UWPROF_CMD(UWPROF_IOC_STATS):
		ret = uwprof_ioc_stats(s, uarg);
		break;
	case UWPROF_CMD(UWPROF_IOC_RING_INFO):
		ret = uwprof_ioc_ring_info(s, uarg);
		break;
	default:
		ret = -ENOTTY;
		break;
	}
	mutex_unlock(&s->lock);
	return ret;
}

/* Called under mmap_lock: only ring_lock may be taken here. */
static int uwprof_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct uwprof_session *s = file->private_data;
	int ret = -EINVAL;

	mutex_lock(&s->ring_lock);
	if (s->sampler)
		ret = uwprof_ring_mmap(s->sampler->rings, vma);
	mutex_unlock(&s->ring_lock);
	return ret;
}

static __poll_t uwprof_poll(struct file *file, struct poll_table_struct *pt)
{
	struct uwprof_session *s = file->private_data;
	__poll_t mask = 0;

	poll_wait(file, &s->wq, pt);
	mutex_lock(&s->ring_lock);
	if (s->sampler && uwprof_ring_readable(s->sampler->rings))
		mask = EPOLLIN | EPOLLRDNORM;
	mutex_unlock(&s->ring_lock);
	return mask;
}

static const struct file_operations uwprof_fops = {
	.owner		= THIS_MODULE,
	.open		= uwprof_open,
	.release	= uwprof_release,
	.unlocked_ioctl	= uwprof_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.mmap		= uwprof_mmap,
	.poll		= uwprof_poll,
	.llseek		= noop_llseek,
};

static struct miscdevice uwprof_misc = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "uwprof",
	.fops	= &uwprof_fops,
	.mode	= 0600,
};

int uwprof_dev_init(void)
{
	return misc_register(&uwprof_misc);
}

void uwprof_dev_exit(void)
{
	misc_deregister(&uwprof_misc);
}
