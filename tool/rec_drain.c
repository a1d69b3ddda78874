// SPDX-License-Identifier: GPL-2.0
/*
 * The ring records of 'uwprof record': each record the ring reader copied
 * out is handled here. Samples of the profiled processes go to the file
 * (or wait for their tables when they carry a stack snapshot); FORK, EXIT,
 * MMAP and UNKNOWN_MAP records keep the recorder's view of the processes and
 * their mappings current, and mark processes whose mappings must be
 * re-read and uploaded. Called from the run loop (record.c) only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "recorder.h"

/* ------------------------------------------------------------- records */

/*
 * The thread's name, stamped with the time it was read, not the sample's:
 * samples wait in the ring, and one taken before an exec is often read
 * after it, when the name is already the new program's. The reader names
 * a sample from the records between the execs around it (uwprof_pf_comm()).
 */
static void rec_thread(struct recorder *r, struct rec_proc *p, uint32_t tid)
{
	uint64_t key = (uint64_t)p->pid << 32 | tid, t;
	char comm[64];

	/* A thread's samples come in runs: most are the last one's. */
	if (key == r->last_tid)
		return;
	if (uwprof_u64map_put(&r->tids, key, 0) != 1) {
		r->last_tid = key;
		return;
	}
	t = rec_comm_at((pid_t)p->pid, (pid_t)tid, comm, sizeof(comm));
	if (!comm[0])
		return;
	rec_w_thread(r, t, p->pid, tid, comm);
	if (tid == p->pid && !p->first_name_ns)
		p->first_name_ns = t;
}

/*
 * A command's process whose first exec came before any record of its name
 * ran its parent's program until then, under the parent's name (a fork
 * keeps it; the command's processes all started after the recording did,
 * so this exec is their first): record that name just before the exec, so
 * that its samples from before it are not named after the new program.
 * Not when it was re-parented (its parent is gone).
 */
static void rec_name_before_exec(struct recorder *r, struct rec_proc *p,
				 uint64_t exec_ns)
{
	char comm[64];
	pid_t pp;

	if (r->o.mode != MODE_CMD || p->execs || !exec_ns ||
	    (p->first_name_ns && p->first_name_ns < exec_ns))
		return;
	pp = uwprof_pm_ppid((pid_t)p->pid);
	if (pp <= 1)
		return;
	uwprof_pm_comm(pp, pp, comm, sizeof(comm));
	if (comm[0])
		rec_w_thread(r, exec_ns - 1, p->pid, p->pid,
			     comm);
}

/*
 * A process forked from one the tool uploaded, and the module gave it a
 * copy of that list: it is the child's until it execs or is read itself,
 * so the file and the walks finished here use it too (a short-lived child
 * may be gone before the tool could read it).
 */
static void rec_fork(struct recorder *r, const struct uwprof_rec_fork *f)
{
	struct rec_proc *c = rec_proc_get(r, f->pid), *pp = rec_proc_find(r, f->ppid);

	if (!c || !pp || pp->ours != 1)
		return;
	c->ours = 1;
	/* A child starts in its parent's cgroup. */
	if (pp->cgroup && !c->cgroup) {
		c->cgroup = strdup(pp->cgroup);
		if (c->cgroup)
			rec_w_cgroup(r, f->time_ns, c->pid, c->cgroup);
	}
	if (!pp->pf_maps || c->pf_maps)
		return;
	rec_w_maps(r, f->time_ns, c->pid, pp->comm,
		   pp->pf_maps, pp->nr_pf_maps);
	if (r->o.snapshot_size && pp->maps)
		rec_proc_gen_push(c, pp->maps, pp->nr_maps, f->time_ns);
}

static void rec_sample(struct recorder *r, const struct uwprof_rec_sample *s)
{
	uint32_t stop = s->flags & UWPROF_SAMPLE_STOP_MASK, i;
	struct rec_proc *p = rec_proc_get(r, s->pid);

	if (!p || p->ours != 1) {
		r->filtered++;
		return;
	}
	rec_thread(r, p, s->tid);
	if (stop == UWPROF_STOP_NO_PROCESS || stop == UWPROF_STOP_NO_MAP)
		p->refresh = 1;
	if (r->o.kernel)
		for (i = 0; i < s->nr_kernel; i++)
			uwprof_u64map_put(&r->kips, s->ips[i], 0);
	/* Before anything waits: code objects are freed as the program runs. */
	rec_py_sample(r, p, s);
	if (s->flags & UWPROF_SAMPLE_SNAPSHOT)
		rec_snapshot_sample(r, s);
	else
		rec_sample_out(r, s);
}

static void rec_unknown_map(struct recorder *r,
			    const struct uwprof_rec_unknown_map *u)
{
	struct rec_proc *p;

	r->unknown++;
	p = rec_proc_get(r, u->pid);
	if (p && p->ours == 1 && !rec_proc_has_addr(p, u->addr)) {
		p->refresh = 1;
		p->urgent = 1;
	}
}

static void rec_exit(struct recorder *r, const struct uwprof_rec_exit *e)
{
	struct rec_proc *p;

	/*
	 * An exec of a process not seen yet (a command's child that
	 * inherited its parent's mappings) is the earliest news of it.
	 */
	p = e->exec ? rec_proc_get(r, e->pid) : rec_proc_find(r, e->pid);
	if (!p || p->ours != 1)
		return;
	r->exits++;
	if (e->exec)
		rec_name_before_exec(r, p, e->time_ns);
	rec_w_exit(r, e->time_ns, e->pid, e->exec);
	/* What it published so far is complete for the image that ran. */
	rec_jit_exit(r, p, e->exec);
	rec_py_exit(r, e->pid, e->time_ns, e->exec);
	/*
	 * The new name as the module saw it at the exec: names read
	 * from /proc race with it (one read just before the exec can
	 * be stamped just after it).
	 */
	if (e->exec && e->comm[0]) {
		char comm[sizeof(e->comm) + 1];

		memcpy(comm, e->comm, sizeof(e->comm));
		comm[sizeof(e->comm)] = 0;
		rec_w_thread(r, e->time_ns, e->pid,
			     e->pid, comm);
	}
	if (e->exec) {
		p->execs++;
		rec_proc_exec_seen(p, e->time_ns);
		rec_mm_exec(r, p, e->time_ns);
		p->image_read = 0;
		/* The module dropped its mappings: the new image's. */
		free(p->maps);
		p->maps = NULL;
		p->nr_maps = 0;
		p->refresh = 1;
		p->last_read_ns = 0;
	} else {
		/*
		 * Kept (not forgotten) so that its samples still
		 * waiting in other CPUs' rings are attributed.
		 */
		free(p->maps);
		p->maps = NULL;
		p->nr_maps = 0;
		p->gone = 1;
		rec_mm_exit(r, p);
	}
}

/*
 * A thread took a new name: the old one holds until just before the
 * rename, the new one from it on, whatever /proc said when it was read.
 */
static void rec_rename(struct recorder *r, const struct uwprof_rec_comm *c)
{
	char old[sizeof(c->old_comm) + 1], comm[sizeof(c->comm) + 1];

	memcpy(old, c->old_comm, sizeof(c->old_comm));
	old[sizeof(c->old_comm)] = 0;
	memcpy(comm, c->comm, sizeof(c->comm));
	comm[sizeof(c->comm)] = 0;
	if (old[0] && c->time_ns)
		rec_w_thread(r, c->time_ns - 1, c->pid, c->tid, old);
	if (comm[0])
		rec_w_thread(r, c->time_ns, c->pid, c->tid, comm);
}

static int on_record(const struct uwprof_rec_hdr *h, uint32_t ring, void *priv)
{
	struct recorder *r = priv;

	switch (h->type) {
	case UWPROF_REC_SAMPLE:
		rec_sample(r, (const void *)h);
		break;
	case UWPROF_REC_FORK:
		rec_fork(r, (const void *)h);
		break;
	case UWPROF_REC_LOST: {
		const struct uwprof_rec_lost *l = (const void *)h;

		r->lost += l->count;
		rec_w_lost(r, mono_ns(), ring, l->count);
		break;
	}
	case UWPROF_REC_UNKNOWN_MAP:
		rec_unknown_map(r, (const void *)h);
		break;
	case UWPROF_REC_EXIT:
		rec_exit(r, (const void *)h);
		break;
	case UWPROF_REC_MMAP:
		rec_mmap_record(r, (const void *)h);
		break;
	case UWPROF_REC_COMM:
		rec_rename(r, (const void *)h);
		break;
	default:
		break;
	}
	return 0;
}

/*
 * Takes every record the ring reader copied out, then finishes the queued
 * walks whose process's uploads and execs are now all known.
 */
void rec_drain(struct recorder *r)
{
	uint64_t start = mono_ns();

	uwprof_rreader_take(&r->rr, on_record, r);
	rec_mm_flush(r);
	r->horizon_ns = start - REC_HORIZON_NS;
	if (r->snapq.n)
		rec_snapshots_flush(r, 0, 0);
}

