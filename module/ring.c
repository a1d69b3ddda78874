// SPDX-License-Identifier: GPL-2.0
/*
 * Per-CPU record rings shared with the reader through one mmap (layout and
 * ordering rules in include/uapi/linux/uwprof.h).
 *
 * Contexts: uwprof_ring_enter/exit/write/count_nested run on the ring's own
 * CPU in NMI, hard IRQ or preemption-disabled process context (the sample
 * path and the lifecycle probes): no locks, no allocation, no sleeping.
 * Allocation, flushing, mmap and readiness checks run in process context
 * under the session mutex; the last reference is dropped by the sampler's
 * free or by a vma's close (process context, under mmap_lock).
 */
#include <linux/irq_work.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "compat.h"
#include "internal.h"

/* All rings together; beyond this START fails with E2BIG. */
#define UWPROF_RINGS_MAX_BYTES	((u64)SZ_1G)

static const struct uwprof_rec_lost uwprof_lost_proto = {
	.hdr = { .type = UWPROF_REC_LOST, .size = sizeof(struct uwprof_rec_lost) },
};

static void uwprof_ring_wake(struct irq_work *work)
{
	struct uwprof_ring *r = container_of(work, struct uwprof_ring, wake);

	wake_up_interruptible(r->set->wq);
}

/*
 * Pages charged to the caller's memory cgroup, mapped into one vmap area
 * that user space may map (VM_USERMAP); vmalloc_user() takes no
 * accounting flag. On failure nothing is left allocated.
 */
static int uwprof_ring_area(struct uwprof_rings *rs, unsigned long nr_pages)
{
	unsigned long i;

	rs->pages = kvmalloc_array(nr_pages, sizeof(*rs->pages),
				   GFP_KERNEL_ACCOUNT);
	if (!rs->pages)
		return -ENOMEM;
	for (i = 0; i < nr_pages; i++) {
		rs->pages[i] = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO |
					  __GFP_NOWARN);
		if (!rs->pages[i])
			goto free;
	}
	rs->area = vmap(rs->pages, nr_pages, VM_MAP | VM_USERMAP, PAGE_KERNEL);
	if (rs->area) {
		rs->nr_pages = nr_pages;
		return 0;
	}
free:
	while (i--)
		__free_page(rs->pages[i]);
	kvfree(rs->pages);
	return -ENOMEM;
}

static void uwprof_ring_area_free(struct uwprof_rings *rs)
{
	unsigned long i;

	vunmap(rs->area);
	for (i = 0; i < rs->nr_pages; i++)
		__free_page(rs->pages[i]);
	kvfree(rs->pages);
}

/*
 * START, in the caller's context: the pages are charged to the session
 * user's locked memory first (quota.c), as perf charges its rings, and to
 * the caller's memory cgroup.
 */
struct uwprof_rings *uwprof_ring_alloc(struct uwprof_session *s, u32 data_pages)
{
	struct user_struct *user;
	struct uwprof_rings *rs;
	u64 stride, total;
	u32 i, nr = nr_cpu_ids;

	stride = ((u64)data_pages + 2) << PAGE_SHIFT;
	if (check_mul_overflow(stride, (u64)nr, &total) ||
	    total > UWPROF_RINGS_MAX_BYTES)
		return ERR_PTR(-E2BIG);

	user = uwprof_quota_lock_pages(s, total >> PAGE_SHIFT);
	if (IS_ERR(user))
		return ERR_CAST(user);
	rs = kvzalloc(struct_size(rs, ring, nr), GFP_KERNEL_ACCOUNT);
	if (!rs)
		goto unlock;
	if (uwprof_ring_area(rs, total >> PAGE_SHIFT)) {
		kvfree(rs);
		goto unlock;
	}
	rs->user = user;
	rs->locked = total >> PAGE_SHIFT;
	rs->stride = stride;
	rs->data_size = (u64)data_pages << PAGE_SHIFT;
	rs->mmap_size = total;
	rs->nr = nr;
	rs->wq = &s->wq;
	refcount_set(&rs->ref, 1);
	atomic_set(&rs->mmapped, 0);

	for (i = 0; i < nr; i++) {
		struct uwprof_ring *r = &rs->ring[i];
		u8 *base = (u8 *)rs->area + i * stride;

		r->ctl = (struct uwprof_ring_ctl *)base;
		r->tailp = (struct uwprof_ring_tail *)(base + PAGE_SIZE);
		r->data = base + 2 * PAGE_SIZE;
		r->set = rs;
		atomic_long_set(&r->nested_lost, 0);
		init_irq_work(&r->wake, uwprof_ring_wake);
		r->ctl->version = UWPROF_RING_VERSION;
		r->ctl->cpu = i;
		r->ctl->data_offset = 2 * PAGE_SIZE;
		r->ctl->data_size = rs->data_size;
	}
	return rs;

unlock:
	uwprof_quota_unlock_pages(user, total >> PAGE_SHIFT);
	return ERR_PTR(-ENOMEM);
}

/*
 * Drops one reference; the last frees. The sampler drops its own only when
 * no producer may run any more (events released, probes past a grace
 * period), so the vmas' references never see a producer.
 */
void uwprof_ring_put(struct uwprof_rings *rs)
{
	u32 i;

	if (!rs || !refcount_dec_and_test(&rs->ref))
		return;
	for (i = 0; i < rs->nr; i++)
		irq_work_sync(&rs->ring[i].wake);
	uwprof_ring_area_free(rs);
	uwprof_quota_unlock_pages(rs->user, rs->locked);
	kvfree(rs);
}

/*
 * Recursion guard: an NMI that lands while this CPU's ring is being
 * written (from a cpu-clock IRQ or a lifecycle probe) must not touch it.
 * Only the owning CPU ever changes 'busy', so compiler barriers suffice.
 */
bool uwprof_ring_enter(struct uwprof_ring *r)
{
	if (READ_ONCE(r->busy))
		return false;
	WRITE_ONCE(r->busy, 1);
	barrier();
	return true;
}

void uwprof_ring_exit(struct uwprof_ring *r)
{
	barrier();
	WRITE_ONCE(r->busy, 0);
}

/* A nested producer lost its record; the owner folds it in later. */
void uwprof_ring_count_nested(struct uwprof_ring *r)
{
	atomic_long_inc(&r->nested_lost);
}

static void uwprof_ring_add_lost(struct uwprof_ring *r, u64 n)
{
	r->lost_pending += n;
	r->lost_total += n;
	WRITE_ONCE(r->ctl->lost, r->lost_total);
}

/* Bytes the reader has not consumed; an implausible tail means none. */
static u64 uwprof_ring_used(struct uwprof_ring *r)
{
	/* Pairs with the reader's release store of 'tail'. */
	u64 tail = smp_load_acquire(&r->tailp->tail);
	u64 used = r->head - tail;

	if (used > r->set->data_size)
		return r->set->data_size;
	return used;
}

static void uwprof_ring_copy(struct uwprof_ring *r, const void *rec, u32 size)
{
	u64 mask = r->set->data_size - 1;
	u64 off = r->head & mask;
	u64 first = min_t(u64, size, r->set->data_size - off);

	memcpy(r->data + off, rec, first);
	if (first < size)
		memcpy(r->data, (const u8 *)rec + first, size - first);
	r->head += size;
}

static void uwprof_ring_put_lost(struct uwprof_ring *r)
{
	struct uwprof_rec_lost lost = uwprof_lost_proto;

	lost.count = r->lost_pending;
	uwprof_ring_copy(r, &lost, sizeof(lost));
	r->lost_pending = 0;
}

/*
 * A wake per sample would cost the reader a context switch per sample on
 * the very CPUs being profiled, so records wake it only when the unread
 * part crosses a quarter of the ring (readers poll with a timeout for
 * latency), except those the reader must act on at once ('wake'): an exec
 * or exit, a known process running code in a mapping the reader has not
 * uploaded yet. The sooner it uploads, the fewer samples are cut short.
 */
static void uwprof_ring_publish(struct uwprof_ring *r, u64 used_before,
				bool wake)
{
	u64 mark = r->set->data_size / 4;

	/* Pairs with the reader's acquire load of 'head'. */
	smp_store_release(&r->ctl->head, r->head);
	if (wake || (used_before < mark &&
		     r->head - READ_ONCE(r->tailp->tail) >= mark))
		irq_work_queue(&r->wake);
}

/*
 * Appends one record (8-byte aligned size), preceded by a LOST record when
 * records were dropped since the last one. Keeps room for one LOST record
 * free at all times so the final count can always be flushed.
 * Return: 0, or -ENOSPC when the record was counted as lost.
 */
int uwprof_ring_write(struct uwprof_ring *r, const void *rec, u32 size,
		      bool wake)
{
	u64 used, need, nested;

	nested = atomic_long_xchg(&r->nested_lost, 0);
	if (nested)
		uwprof_ring_add_lost(r, nested);

	used = uwprof_ring_used(r);
	need = size + sizeof(struct uwprof_rec_lost);
	if (r->lost_pending)
		need += sizeof(struct uwprof_rec_lost);
	if (need > r->set->data_size - used) {
		uwprof_ring_add_lost(r, 1);
		return -ENOSPC;
	}
	if (r->lost_pending)
		uwprof_ring_put_lost(r);
	uwprof_ring_copy(r, rec, size);
	uwprof_ring_publish(r, used, wake);
	return 0;
}

/*
 * After STOP, with every producer gone: emit the pending LOST count and
 * wake the reader for whatever is left, samples below the wake mark too.
 */
void uwprof_ring_flush_lost(struct uwprof_ring *r)
{
	u64 used, nested;

	nested = atomic_long_xchg(&r->nested_lost, 0);
	if (nested)
		uwprof_ring_add_lost(r, nested);
	used = uwprof_ring_used(r);
	if (r->lost_pending &&
	    sizeof(struct uwprof_rec_lost) <= r->set->data_size - used) {
		uwprof_ring_put_lost(r);
		/* Pairs with the reader's acquire load of 'head'. */
		smp_store_release(&r->ctl->head, r->head);
	}
	if (uwprof_ring_used(r))
		wake_up_interruptible(r->set->wq);
}

bool uwprof_ring_readable(struct uwprof_rings *rs)
{
	u32 i;

	for (i = 0; i < rs->nr; i++) {
		struct uwprof_ring *r = &rs->ring[i];

		/* Pairs with the producers' release store of 'head'. */
		if (smp_load_acquire(&r->ctl->head) != READ_ONCE(r->tailp->tail))
			return true;
	}
	return false;
}

static void uwprof_ring_vm_open(struct vm_area_struct *vma)
{
	struct uwprof_rings *rs = vma->vm_private_data;

	refcount_inc(&rs->ref);
	atomic_inc(&rs->mmapped);
}

static void uwprof_ring_vm_close(struct vm_area_struct *vma)
{
	struct uwprof_rings *rs = vma->vm_private_data;

	atomic_dec(&rs->mmapped);
	uwprof_ring_put(rs);
}

static const struct vm_operations_struct uwprof_ring_vm_ops = {
	.open	= uwprof_ring_vm_open,
	.close	= uwprof_ring_vm_close,
};

/* Only offset 0 and exactly mmap_size: the reader sees all rings or none. */
int uwprof_ring_mmap(struct uwprof_rings *rs, struct vm_area_struct *vma)
{
	int ret;

	if (vma->vm_pgoff)
		return -EINVAL;
	if (vma->vm_end - vma->vm_start != rs->mmap_size)
		return -EINVAL;
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	ret = remap_vmalloc_range(vma, rs->area, 0);
	if (ret)
		return ret;
	uwprof_compat_vm_flags_set(vma, VM_DONTCOPY);
	vma->vm_private_data = rs;
	vma->vm_ops = &uwprof_ring_vm_ops;
	refcount_inc(&rs->ref);
	atomic_inc(&rs->mmapped);
	return 0;
}
