// SPDX-License-Identifier: GPL-2.0
/*
 * Samples that carry stack snapshots: kept until the recorder has the
 * mappings they were taken under, then finished with the unwinder core
 * (snapshot.h) and written.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "recorder.h"

/*
 * The sample's stop reason in the file's numbers, which differ from the
 * module's (profile_file.h): a sample taken inside execve carries the
 * module's UWPROF_STOP_READ, and gets a reason of its own so that reports
 * say why it has no user frames; the module's reasons past the first ten
 * move. A walk the tool finished has the file's numbers already.
 */
static uint32_t rec_file_stop(const struct uwprof_rec_sample *s)
{
	uint32_t stop = s->flags & UWPROF_SAMPLE_STOP_MASK;

	if (s->flags & UWPROF_SAMPLE_EXEC)
		return UWPROF_PF_STOP_EXEC;
	if (!(s->flags & UWPROF_PF_SAMPLE_FINISHED))
		return uwprof_pf_stop_of_module(stop);
	return stop;
}

/* A sample as it goes into the file, counted by how its stack ended. */
void rec_sample_out(struct recorder *r, const struct uwprof_rec_sample *s)
{
	uint32_t stop = rec_file_stop(s);
	struct uwprof_rec_sample *copy = NULL;

	if (stop != (s->flags & UWPROF_SAMPLE_STOP_MASK)) {
		copy = malloc(s->hdr.size);
		if (!copy) {
			rec_out(r, -ENOMEM);
			return;
		}
		memcpy(copy, s, s->hdr.size);
		copy->flags = (copy->flags & ~UWPROF_SAMPLE_STOP_MASK) | stop;
		s = copy;
	}
	if (stop < UWPROF_PF_STOP__COUNT)
		r->stops[stop]++;
	r->samples++;
	if (s->flags & UWPROF_SAMPLE_OFF_CPU) {
		r->off_cpu_samples++;
		r->off_cpu_ns += s->period;
	}
	rec_w_sample(r, s);
	free(copy);
}

/* The process's code, for the instructions the core inspects at a pc. */
struct rec_code {
	pid_t			pid;
	const struct uwprof_map	*maps;
	uint32_t		nr_maps;
};

static int rec_read_code(void *arg, void *dst, uint64_t addr, size_t n)
{
	const struct rec_code *c = arg;
	struct iovec local = { .iov_base = dst, .iov_len = n };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = n };
	uint32_t i;

	for (i = 0; i < c->nr_maps; i++)
		if (addr >= c->maps[i].start && n <= c->maps[i].end - addr)
			return process_vm_readv(c->pid, &local, 1, &remote, 1, 0) ==
			       (ssize_t)n ? 0 : -EFAULT;
	return -EFAULT;
}

/* Whether a sample at 't' ran in the image whose maps were read at 'm'. */
static int proc_same_image(const struct rec_proc *p, uint64_t t, uint64_t m)
{
	uint32_t i;

	for (i = 0; i < p->nr_execs; i++)
		if ((t < p->exec_ns[i]) != (m < p->exec_ns[i]))
			return 0;
	return 1;
}

/*
 * The upload that describes the image the process ran at 'time_ns' and
 * holds 'pc', once every exec around both times has been seen; NULL when
 * the tool has none (yet).
 */
static const struct rec_gen *proc_gen_at(const struct rec_proc *p,
					 uint64_t time_ns, uint64_t pc,
					 uint64_t horizon)
{
	const struct rec_gen *g;
	int i;

	for (i = 0; i < REC_GENS; i++) {
		g = &p->gens[i];
		if (!g->maps || time_ns >= horizon || g->read_ns >= horizon)
			continue;
		if (proc_same_image(p, time_ns, g->read_ns) &&
		    rec_maps_have(g->maps, g->nr_maps, pc))
			return g;
	}
	return NULL;
}

/* Keeps a copy of an upload for finishing walks. */
void rec_proc_gen_push(struct rec_proc *p, const struct uwprof_map *km,
		       uint32_t nr, uint64_t read_ns)
{
	struct uwprof_map *c = malloc((nr ? nr : 1) * sizeof(*c));

	if (!c)
		return;
	memcpy(c, km, nr * sizeof(*c));
	free(p->gens[REC_GENS - 1].maps);
	memmove(&p->gens[1], &p->gens[0], (REC_GENS - 1) * sizeof(p->gens[0]));
	p->gens[0].maps = c;
	p->gens[0].nr_maps = nr;
	p->gens[0].read_ns = read_ns;
	p->gen_serial++;
}

void rec_proc_exec_seen(struct rec_proc *p, uint64_t time_ns)
{
	uint64_t *nv = realloc(p->exec_ns, (p->nr_execs + 1) * sizeof(*nv));

	if (!nv)
		return;
	p->exec_ns = nv;
	nv[p->nr_execs++] = time_ns;
}

/* Resumes the walk of 's' over its snapshot with these mappings. */
static struct uwprof_rec_sample *rec_finish(struct recorder *r,
					    const struct rec_proc *p,
					    const struct uwprof_map *km,
					    uint32_t nr,
					    const struct uwprof_rec_sample *s)
{
	struct rec_code code = { .pid = (pid_t)p->pid, .maps = km, .nr_maps = nr };
	struct uwprof_snap_req req = {
		.nr_maps = nr,
		.max_depth = r->o.depth,
		.no_fp = r->o.no_fp,
	};
	struct uwprof_unwind_map *um = calloc(nr ? nr : 1, sizeof(*um));
	struct uwprof_rec_sample *out;
	uint32_t i;

	if (!um)
		return NULL;
	/*
	 * The code the core inspects at a pc is read from the live process,
	 * only while it still runs the image the sample was taken in.
	 */
	if (!p->gone && proc_same_image(p, s->time_ns, mono_ns())) {
		req.read_code = rec_read_code;
		req.read_code_arg = &code;
	}
	for (i = 0; i < nr; i++) {
		const struct rec_obj *o = km[i].object_id ?
					  rec_obj_by_id(r, km[i].object_id) : NULL;

		um[i].start = km[i].start;
		um[i].end = km[i].end;
		um[i].bias = km[i].bias;
		um[i].flags = km[i].flags;
		if (o && o->tab)
			um[i].table = &o->tab->t;
		else
			um[i].flags |= UWPROF_MAP_NO_TABLE;
	}
	req.maps = um;
	out = uwprof_snap_finish(s, &req);
	free(um);
	return out;
}

/*
 * Writes a sample that carries a snapshot: finished with the mappings it
 * was taken under once the tool has them; as it came when 'final' and it
 * has none. Else it is kept waiting (returns 1), also when the finished
 * walk left those mappings: an upload read later may hold the rest
 * (*tag: the uploads already tried).
 */
static int rec_snapshot_out(struct recorder *r, const struct uwprof_rec_sample *s,
			    uint64_t *tag, int final)
{
	const struct rec_proc *p = rec_proc_find(r, s->pid);
	struct uwprof_rec_sample *out = NULL;
	const struct rec_gen *g = NULL;
	struct uwprof_snap_view v;
	int ok = !uwprof_snap_parse(s, &v);

	if (ok && p)
		g = proc_gen_at(p, s->time_ns, v.sn->pc,
				final ? UINT64_MAX : r->horizon_ns);
	if (ok && !g && !final)
		return 1;
	if (g && !final && *tag == p->gen_serial)
		return 1;
	if (g)
		out = rec_finish(r, p, g->maps, g->nr_maps, s);
	if (out && !final &&
	    (out->flags & UWPROF_SAMPLE_STOP_MASK) == UWPROF_STOP_NO_MAP) {
		*tag = p->gen_serial;
		free(out);
		return 1;
	}
	if (out) {
		r->snap_finished++;
	} else {
		r->snap_unfinished++;
		out = uwprof_snap_strip(s);
	}
	rec_sample_out(r, out ? out : s);
	free(out);
	return 0;
}

struct rec_take {
	struct recorder	*r;
	int		final;
};

static int rec_take_queued(void *arg, struct uwprof_snap_queued *e)
{
	struct rec_take *t = arg;

	if (rec_snapshot_out(t->r, e->s, &e->tag, t->final))
		return 1;
	free(e->s);
	return 0;
}

/* Finishes the queued samples of 'pid' (0: all) that now can be. */
void rec_snapshots_flush(struct recorder *r, uint32_t pid, int final)
{
	struct rec_take t = { .r = r, .final = final };

	uwprof_snap_queue_take(&r->snapq, pid, rec_take_queued, &t);
}

/* A sample with a snapshot: out now if it can be finished, else queued. */
void rec_snapshot_sample(struct recorder *r, const struct uwprof_rec_sample *s)
{
	uint64_t tag = 0;

	if (!rec_snapshot_out(r, s, &tag, 0))
		return;
	if (uwprof_snap_queue_add(&r->snapq, s))
		rec_snapshot_out(r, s, &tag, 1);	/* queue full: as it is */
}

/* Whether the process's executable mappings still are those in 'pm'. */
