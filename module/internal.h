/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Declarations shared by the uwprof module's files: sessions (dev.c), the
 * table and mapping store (store.c), rings (ring.c), sampling (sample.c) and
 * process lifecycle tracking (lifecycle.c). Not seen by userspace.
 */
#ifndef _UWPROF_INTERNAL_H
#define _UWPROF_INTERNAL_H

#include <linux/types.h>
#include <linux/atomic.h>
#include <linux/irq_work.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/ptrace.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/sched.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <linux/uwprof.h>

#include "unwind.h"

/* Kernel frames kept per sample when kernel stacks are asked for. */
#define UWPROF_KSTACK_MAX	128

/* ---- table and mapping store (store.c) ---- */

/*
 * One uploaded table. 'blob' is the caller's blob, copied and validated;
 * 't' points into it: the blob is its own lookup structure. References: one from the session's
 * object store (dropped by OBJECT_DEL or close) and one from every mapping
 * list that names it (dropped after an RCU grace period once the list is
 * unreachable from the sample path), so a table outlives every reader.
 */
struct uwprof_tab {
	struct kref ref;
	struct uwprof_session *s;	/* for memory accounting */
	u64 object_id;
	u64 bytes;			/* charged against table_mem_max */
	void *blob;
	struct uwprof_table t;
};

/*
 * One uploaded mapping list, immutable, shared by the process it was
 * uploaded for and every process forked from it while the session had it
 * (a fork costs a reference, not a copy of up to UWPROF_MAX_MAPS entries).
 * Holds a reference on each table it names; the last put, after a grace
 * period, drops them.
 */
struct uwprof_maps {
	refcount_t ref;
	struct uwprof_session *s;
	u64 bytes;			/* charged to 's' */
	const struct uwprof_python *py;	/* after maps[], or NULL */
	u32 nr;
	struct uwprof_unwind_map maps[];
};

/*
 * A process's entry in the session's 'procs' xarray, immutable once
 * published but for 'dead'; replaced as a whole and freed through
 * call_rcu(). 'maps' and 'nr_maps' repeat the list's, so the sample path
 * reads one struct. 'dead' (0 or 1) is set by the exit or exec probe,
 * which may not take the xarray's lock, and never cleared: from then on
 * the sample path treats the process as one without mappings, until a
 * lifecycle callback (lifecycle.c) takes the entry out or a MAPS_SET
 * replaces it.
 */
struct uwprof_proc {
	struct rcu_head rcu;
	struct uwprof_maps *set;
	const struct uwprof_unwind_map *maps;
	const struct uwprof_python *py;	/* the list's interpreter, or NULL */
	u32 nr_maps;
	u32 tgid;
	int dead;
	/*
	 * The rule cache's name for the list (uwprof_unwind_req.maps_id):
	 * unique for the module's lifetime; a forked process, with the same
	 * mappings and tables, keeps it.
	 */
	u64 id;
};

/* ---- rings (ring.c) ---- */

/*
 * Producer state of one CPU's ring of one session. Written only on its CPU
 * by the session's sample path, off-CPU probe and lifecycle records, all
 * inside the 'busy' guard; read by process context only once sampling
 * stopped and every producer is gone. Another session's producers never
 * touch it: each session nests on a CPU independently of the others.
 */
struct uwprof_ring {
	struct uwprof_ring_ctl *ctl;	/* shared page: module writes */
	struct uwprof_ring_tail *tailp;	/* shared page: reader writes */
	u8 *data;
	u64 head;			/* private copy; ctl->head is published */
	u64 lost_pending;		/* lost since the last LOST record */
	u64 lost_total;			/* mirrors ctl->lost */
	atomic_long_t nested_lost;	/* lost by nested producers */
	int busy;			/* recursion guard, this CPU only */
	struct irq_work wake;
	struct uwprof_rings *set;
};

/*
 * All rings of one sampler. 'ref' counts the sampler's reference and one
 * per vma that maps them (as perf's ring_buffer does): a mapping made
 * while a START was still failing keeps the rings alive after the sampler
 * is gone, and the last munmap frees them. 'mmapped' counts the vmas
 * alone, for START's EBUSY rule.
 */
struct uwprof_rings {
	void *area;			/* vmap of pages[], all rings */
	struct page **pages;
	unsigned long nr_pages;
	u64 stride;
	u64 data_size;
	u64 mmap_size;
	u32 nr;
	refcount_t ref;
	atomic_t mmapped;		/* live vmas */
	/* Charged 'locked' pages, or NULL; pinned by the session's cred. */
	struct user_struct *user;
	unsigned long locked;
	wait_queue_head_t *wq;		/* the session's poll queue */
	struct uwprof_ring ring[];
};

/* ---- sampling (sample.c) ---- */

/* Per-CPU counters; summed by the STATS ioctl. */
struct uwprof_pcpu_stats {
	u64 events;
	u64 samples;
	u64 frames;
	u64 lost;
	u64 lost_samples;
	u64 skipped_kthread;
	u64 skipped_compat;
	u64 skipped_filter;
	u64 skipped_throttle;
	u64 fp_frames;
	u64 unknown_maps;
	u64 exit_records;
	u64 snapshots;
	u64 snapshot_bytes;
	u64 fork_records;
	u64 nmi_samples;
	u64 off_cpu_blocks;
	u64 off_cpu_samples;
	u64 off_cpu_short;
	u64 off_cpu_dropped;
	u64 off_cpu_lost;
	u64 mmap_records;
	u64 kernel_throttles;
	u64 mmap_throttled;
	u64 snapshots_time_cut;
	/* mmaprec.c's rate limit on this CPU: not counters, never summed. */
	u64 mmap_second;
	u64 mmap_in_second;
	u64 stop[UWPROF_STOP__COUNT];
	u64 hist[UWPROF_HIST_BUCKETS];
	u64 unwind_ns;
};

/*
 * Per-CPU scratch of one sampler for building one sample record: the
 * walk's rule cache, kernel frames, the record. Used only inside the
 * sampler's ring guard on that CPU, so by one walk at a time; a walk of
 * another session that interrupts this one (an NMI in a cpu-clock
 * handler, back-to-back handlers) has a scratch of its own.
 */
struct uwprof_scratch {
	u64 last_unknown_pid;		/* UNKNOWN_MAP rate limit */
	u64 last_unknown_page;
	/* Code objects of Python frames this CPU's samples carried lately. */
	u64 py_seen[1U << UWPROF_PY_SEEN_BITS];
	unsigned long kstack[UWPROF_KSTACK_MAX + 64];
	struct uwprof_rule_cache rule_cache;
	struct uwprof_rec_sample rec;	/* followed by its ips */
};

struct cgroup;

/*
 * One sampling run of a session, created by START and destroyed by the
 * session's next START or by close. Immutable configuration once the perf
 * events exist. Several sessions sample at once, each with a sampler of
 * its own: events, filter, rings, scratch and counters belong to one
 * sampler, so two sessions' sample paths share nothing that they write
 * but the CPU's walk budget (sample.c), which every context updates with
 * local64 operations.
 *
 * Contexts on one CPU that use a sampler's ring (and, for the first two,
 * its scratch): its perf overflow handler (NMI or hard IRQ) and the test
 * NMI handler; its off-CPU probe (scheduler, interrupts off); the
 * lifecycle probes (preemption off, records of their own). Any of them can
 * interrupt another: the ring's 'busy' guard admits the outermost, and a
 * nested one of the same sampler counts its record as lost. Handlers of
 * different samplers run back to back or nest freely, each inside its own
 * guard.
 */
struct uwprof_sampler {
	struct uwprof_session *s;
	u32 flags;			/* UWPROF_START_* */
	u32 max_depth;
	u32 freq_hz;
	u32 snapshot_size;		/* stack bytes per snapshot, 0: none */
	u32 owner_tgid;			/* the process that started it */
	const struct cred *cred;	/* its credentials: events of CPUs onlined later */
	u32 nr_pids;
	u32 *pids;			/* sorted tgids */
	/* UWPROF_START_CGROUP: referenced until the sampler is freed. */
	struct cgroup *cgroup;
	char comm[TASK_COMM_LEN];	/* UWPROF_START_COMM, NUL-padded */
	bool kstack;			/* kernel frames requested and allowed */
	bool hw;			/* try hardware cycles first */
	/* Written by the cpuhp callbacks, which the hotplug lock serialises. */
	int create_err;			/* last event creation error */
	u32 nr_events;
	u32 nr_hw;			/* events that are hardware cycles */
	struct hlist_node node;		/* cpuhp instance */
	struct perf_event **events;	/* [nr_cpu_ids] */
	struct uwprof_scratch **scratch; /* [nr_cpu_ids] */
	size_t scratch_ips;		/* ips[] capacity in a scratch record */
	struct uwprof_pcpu_stats __percpu *stats;
	struct uwprof_rings *rings;
	struct uwprof_offcpu *off;	/* UWPROF_START_OFF_CPU, else NULL */
};

/* ---- sessions (dev.c) ---- */

/*
 * One open file. State machine:
 *
 *	IDLE --START--> SAMPLING --STOP--> STOPPED --START--> SAMPLING ...
 *
 * In every state tables and mappings can be added and removed. Rings exist
 * in SAMPLING and STOPPED (readable after STOP); a new START frees the old
 * rings, which is refused with EBUSY while they are mmapped. Any number of
 * sessions may be SAMPLING at once; a START of a session already SAMPLING
 * gets EBUSY. close stops sampling, then frees everything.
 *
 * Locks: 'lock' serialises the ioctls of this session and covers 'state'
 * and the object store 'objects'; user memory is accessed under it.
 * 'ring_lock' (taken inside 'lock', and by mmap under mmap_lock, so never
 * held while touching user memory) covers the 'sampler' pointer that mmap
 * and poll follow to the rings. 'active' is the sampler while SAMPLING,
 * else NULL: written under 'lock', read under RCU by the lifecycle probes
 * and the test NMI handler, which walk the sessions to reach every
 * sampling one; STOP clears it, then waits a grace period before the
 * sampler's rings are flushed and it can be freed. 'procs' is written
 * under its own xa_lock (by ioctls and by the lifecycle callbacks, in
 * process context) and read under RCU by the sample path and the
 * lifecycle probes. 'held' likewise (hold.c). 'list' is on
 * uwprof_sessions (written under dev.c's mutex), walked under RCU.
 * 'lc_busy' counts the fork callbacks that took a list of this session
 * and still use it; close waits for it to reach zero
 * (uwprof_lifecycle_forget()).
 */
enum uwprof_state {
	UWPROF_IDLE,
	UWPROF_SAMPLING,
	UWPROF_STOPPED,
};

struct uwprof_session {
	struct mutex lock;		/* ioctls, state, objects */
	struct mutex ring_lock;		/* sampler pointer for mmap/poll */
	enum uwprof_state state;
	struct uwprof_sampler *sampler;
	struct uwprof_sampler __rcu *active;
	struct xarray objects;		/* object_id -> struct uwprof_tab */
	struct xarray procs;		/* tgid -> struct uwprof_proc (RCU) */
	atomic64_t mem;			/* bytes of tables and mappings */
	atomic64_t nr_tables;
	atomic64_t nr_procs;
	atomic64_t procs_dropped;
	atomic64_t procs_inherited;
	atomic64_t lifecycle_lost;	/* stats: lifecycle work not queued */
	atomic_t lc_busy;		/* fork callbacks using its lists */
	struct xarray held;		/* tgid -> hold start (hold.c) */
	struct delayed_work hold_work;	/* lets go of holds too old */
	wait_queue_head_t wq;
	struct list_head list;
	bool may_kernel;		/* opener may see kernel addresses */
	bool may_ptrace;		/* opener has CAP_SYS_PTRACE */
	const struct cred *cred;	/* opener's, for exec holds */
	struct uwprof_quota *quota;	/* opener's uid's share (quota.c) */
	bool quota_exempt;		/* CAP_SYS_ADMIN at open */
	bool lock_exempt;		/* CAP_IPC_LOCK at open */
};

extern unsigned long uwprof_table_mem_max;
extern unsigned int uwprof_cpu_max_percent;
extern unsigned int uwprof_walk_max_us;
extern unsigned int uwprof_offcpu_walk_max_us;

int uwprof_dev_init(void);
void uwprof_dev_exit(void);

/* quota.c: per-user limits on sessions, table bytes and ring pages */
int uwprof_quota_open(struct uwprof_session *s);
void uwprof_quota_release(struct uwprof_session *s);
int uwprof_quota_charge(struct uwprof_session *s, u64 bytes);
void uwprof_quota_uncharge(struct uwprof_session *s, u64 bytes);
struct user_struct *uwprof_quota_lock_pages(struct uwprof_session *s,
					    unsigned long pages);
void uwprof_quota_unlock_pages(struct user_struct *user, unsigned long pages);

/*
 * uargs.c: ioctl structs in and out. Output-only structs (VERSION, STATS,
 * RING_INFO) are filled up to the caller's size, which must cover at least
 * 'size' and the next field.
 */
#define UWPROF_OUT_MIN	8
int uwprof_dev_copy_args(void *dst, size_t ksize, size_t min, void __user *arg);
long uwprof_dev_out_size(void __user *arg, size_t min);
int uwprof_dev_put(void __user *arg, const void *src, size_t ksize, long usize);

/* hold.c: exec holds; process context (the lifecycle callbacks too) */
void uwprof_hold_init(struct uwprof_session *s);
void uwprof_hold_exec(struct uwprof_session *s, struct task_struct *p);
void uwprof_hold_exit(struct uwprof_session *s, u32 tgid);
void uwprof_hold_release(struct uwprof_session *s, u32 tgid);
void uwprof_hold_release_all(struct uwprof_session *s);
void uwprof_hold_destroy(struct uwprof_session *s);

/* store.c: process context unless noted */
void uwprof_store_init(struct uwprof_session *s);
void uwprof_store_destroy(struct uwprof_session *s);
int uwprof_store_table_add(struct uwprof_session *s, void __user *arg);
int uwprof_store_object_del(struct uwprof_session *s, void __user *arg);
int uwprof_store_maps_set(struct uwprof_session *s, void __user *arg);
int uwprof_store_process_del(struct uwprof_session *s, void __user *arg);
/* The lifecycle probes: lock-free, inside rcu_read_lock(). */
bool uwprof_store_proc_kill(struct uwprof_session *s, u32 tgid);
bool uwprof_store_proc_dead(struct uwprof_session *s, u32 tgid);
/* The lifecycle callbacks: process context. */
bool uwprof_store_proc_reap(struct uwprof_session *s, u32 tgid);
bool uwprof_store_proc_inherit(struct uwprof_session *s, struct uwprof_maps *m,
			       u32 child, u64 id);
void uwprof_store_maps_put(struct uwprof_maps *m);
u64 uwprof_store_mem_used(void);

/* ring.c */
struct uwprof_rings *uwprof_ring_alloc(struct uwprof_session *s, u32 data_pages);
void uwprof_ring_put(struct uwprof_rings *rs);
bool uwprof_ring_enter(struct uwprof_ring *r);
void uwprof_ring_exit(struct uwprof_ring *r);
int uwprof_ring_write(struct uwprof_ring *r, const void *rec, u32 size,
		      bool wake);
void uwprof_ring_count_nested(struct uwprof_ring *r);
void uwprof_ring_flush_lost(struct uwprof_ring *r);
bool uwprof_ring_readable(struct uwprof_rings *rs);
int uwprof_ring_mmap(struct uwprof_rings *rs, struct vm_area_struct *vma);

/* sample.c */
int uwprof_sample_init(void);
void uwprof_sample_exit(void);
struct uwprof_sampler *uwprof_sample_create(struct uwprof_session *s,
					    void __user *arg);
int uwprof_sample_run(struct uwprof_sampler *sp);
void uwprof_sample_stop(struct uwprof_sampler *sp);
void uwprof_sample_free(struct uwprof_sampler *sp);
void uwprof_sample_stats(struct uwprof_session *s, struct uwprof_stats *st);
void uwprof_sample_take(struct uwprof_sampler *sp, struct pt_regs *regs,
			u64 period);
bool uwprof_sample_traced_pid(const struct uwprof_sampler *sp, u32 tgid);
bool uwprof_sample_traced(const struct uwprof_sampler *sp,
			  struct task_struct *t);
void uwprof_sample_emit_exit(struct uwprof_sampler *sp, u32 tgid,
			     const char *comm);
void uwprof_sample_emit_fork(struct uwprof_sampler *sp, u32 pid, u32 ppid);
bool uwprof_sample_traced_as(const struct uwprof_sampler *sp,
			     struct task_struct *t, const char *comm);
void uwprof_sample_emit_comm(struct uwprof_sampler *sp, struct task_struct *t,
			     const char *comm);
/* A record into this CPU's ring (preemption disabled); false: lost. */
bool uwprof_sample_emit(struct uwprof_sampler *sp, const void *rec, u32 size,
			bool wake);
bool uwprof_sample_hw_available(void);
bool uwprof_sample_over_budget(u64 now);
void uwprof_sample_charge(u64 ns);
void uwprof_sample_walk(struct uwprof_sampler *sp, struct uwprof_scratch *sc,
			struct pt_regs *uregs, u32 tgid, u64 *ips,
			u32 max_depth, u64 deadline,
			struct uwprof_unwind_res *res);

/* offcpu.c: process context, session mutex held, unless noted */
void uwprof_offcpu_init(void);		/* module load */
bool uwprof_offcpu_available(void);
int uwprof_offcpu_create(struct uwprof_sampler *sp, u64 min_ns);
int uwprof_offcpu_start(struct uwprof_sampler *sp);
void uwprof_offcpu_stop(struct uwprof_sampler *sp);
void uwprof_offcpu_free(struct uwprof_sampler *sp);

/* mmaprec.c: process context, not under a session's lock */
bool uwprof_mmap_available(void);
int uwprof_mmap_get(void);
void uwprof_mmap_put(void);
void uwprof_mmap_exit(void);

/* lifecycle.c */
int uwprof_lifecycle_init(void);
void uwprof_lifecycle_exit(void);
bool uwprof_lifecycle_renames(void);
void uwprof_lifecycle_forget(struct uwprof_session *s);

/*
 * nmi_test.c: a test-only NMI handler that samples (Kbuild's
 * UWPROF_TEST_NMI=1, x86_64); nothing in other builds.
 */
#ifdef UWPROF_TEST_NMI
int uwprof_nmi_test_init(void);
void uwprof_nmi_test_exit(void);
#else
static inline int uwprof_nmi_test_init(void)
{
	return 0;
}

static inline void uwprof_nmi_test_exit(void)
{
}
#endif

/*
 * dev.c: every open session, walked under RCU by the lifecycle probes,
 * hold.c and the test NMI handler.
 */
extern struct list_head uwprof_sessions;

#endif /* _UWPROF_INTERNAL_H */
