// SPDX-License-Identifier: GPL-2.0
/*
 * MMAP records (UWPROF_START_MMAP): the executable mappings the module saw
 * each profiled process make. They serve twice. A process gone before
 * /proc/PID/maps could be read (a compiler's helper that lived a few
 * milliseconds) still gets its last image's mappings, so its samples are
 * named and their stack snapshots finished. And a library mapped into a
 * process whose mappings were uploaded marks the process for an upload at
 * once, so the recorder need not poll processes for new mappings.
 *
 * Records of one process may come from several CPUs' rings out of order,
 * so each mapping keeps its time, and the last image is rebuilt by
 * replaying them in time order: a mapping replaces what it overlaps, and
 * the first mapping an exec makes (UWPROF_MMAP_EXEC) after the previous
 * image's starts an empty address space. Called from the run loop only.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "recorder.h"
#include "vec.h"

/* Mappings kept per process before they are compacted to the last image. */
#define REC_MM_MAX	1024

static int mm_time_cmp(const void *a, const void *b)
{
	const struct rec_mm *x = a, *y = b;

	return x->time_ns < y->time_ns ? -1 : x->time_ns > y->time_ns;
}

/* Whether an exec record of p lies in (a, b]. */
static int exec_between(const struct rec_proc *p, uint64_t a, uint64_t b)
{
	uint32_t i;

	for (i = 0; i < p->nr_execs; i++)
		if (p->exec_ns[i] > a && p->exec_ns[i] <= b)
			return 1;
	return 0;
}

/*
 * Replays p's mappings made before time 'before' in time order into 'keep'
 * (index list, sorted by start): returns how many the last image among
 * them holds; *from_exec says whether that image's records begin with its
 * exec (else they are only what was mapped after the records began).
 */
static size_t mm_last_image(struct rec_proc *p, size_t *keep, int *from_exec,
			    uint64_t before)
{
	size_t i, k, n = 0;

	qsort(p->mm, p->nr_mm, sizeof(*p->mm), mm_time_cmp);
	*from_exec = 0;
	for (i = 0; i < p->nr_mm && p->mm[i].time_ns < before; i++) {
		const struct rec_mm *m = &p->mm[i], *prev = i ? m - 1 : NULL;

		if (m->exec && (!prev || !prev->exec ||
				exec_between(p, prev->time_ns, m->time_ns))) {
			n = 0;
			*from_exec = 1;
		}
		/* Drop what it overlaps, keep the rest in start order. */
		for (k = 0; k < n;) {
			const struct rec_mm *o = &p->mm[keep[k]];

			if (o->e.start < m->e.end && m->e.start < o->e.end)
				memmove(&keep[k], &keep[k + 1],
					(--n - k) * sizeof(*keep));
			else
				k++;
		}
		for (k = n; k > 0 && p->mm[keep[k - 1]].e.start > m->e.start; k--)
			keep[k] = keep[k - 1];
		keep[k] = i;
		n++;
	}
	return n;
}

/* Keeps only the last image's mappings (their order: by start). */
static void mm_compact(struct rec_proc *p)
{
	size_t *keep = malloc((p->nr_mm ? p->nr_mm : 1) * sizeof(*keep));
	struct rec_mm *v;
	size_t n, i;
	int from_exec;

	if (!keep)
		return;
	n = mm_last_image(p, keep, &from_exec, UINT64_MAX);
	v = malloc((n ? n : 1) * sizeof(*v));
	if (!v) {
		free(keep);
		return;
	}
	for (i = 0; i < n; i++) {
		v[i] = p->mm[keep[i]];
		p->mm[keep[i]].e.path = NULL;
	}
	rec_mm_free(p);
	p->mm = v;
	p->nr_mm = p->cap_mm = n;
	free(keep);
}

void rec_mm_free(struct rec_proc *p)
{
	size_t i;

	for (i = 0; i < p->nr_mm; i++)
		free(p->mm[i].e.path);
	free(p->mm);
	p->mm = NULL;
	p->nr_mm = p->cap_mm = 0;
	free(p->mm_unread);
	p->mm_unread = NULL;
	p->nr_mm_unread = p->cap_mm_unread = 0;
}

static int mm_valid(const struct uwprof_rec_mmap *m)
{
	uint32_t room = m->hdr.size - (uint32_t)sizeof(*m);

	if (m->hdr.size < sizeof(*m) || m->path_size > room ||
	    m->end <= m->start)
		return 0;
	if (m->flags & UWPROF_MMAP_VDSO)
		return 1;
	return m->path_size && m->path[0] == '/' &&
	       !memchr(m->path, 0, m->path_size - 1) &&
	       !m->path[m->path_size - 1];
}

static int mm_add(struct rec_proc *p, const struct uwprof_rec_mmap *m)
{
	struct rec_mm *e;

	if (p->nr_mm >= REC_MM_MAX)
		mm_compact(p);
	if (VEC_RESERVE(p->mm, p->cap_mm, p->nr_mm + 1, 16))
		return -ENOMEM;
	e = &p->mm[p->nr_mm];
	memset(e, 0, sizeof(*e));
	e->e.path = strdup(m->flags & UWPROF_MMAP_VDSO ? "[vdso]" : m->path);
	if (!e->e.path)
		return -ENOMEM;
	e->e.start = m->start;
	e->e.end = m->end;
	e->e.offset = m->pgoff;
	e->e.dev_major = m->dev_major;
	e->e.dev_minor = m->dev_minor;
	e->e.inode = m->ino;
	e->e.kind = m->flags & UWPROF_MMAP_VDSO ? UWPROF_PM_VDSO : UWPROF_PM_FILE;
	e->e.pf = (m->prot & PROT_READ ? PF_R : 0) |
		  (m->prot & PROT_WRITE ? PF_W : 0) | PF_X;
	e->time_ns = m->time_ns;
	e->exec = !!(m->flags & UWPROF_MMAP_EXEC);
	p->nr_mm++;
	return 0;
}

void rec_mmap_record(struct recorder *r, const struct uwprof_rec_mmap *m)
{
	struct rec_proc *p;

	r->mmap_records++;
	if (!mm_valid(m)) {
		r->bad_recs++;
		return;
	}
	if (m->flags & UWPROF_MMAP_PATH_CUT)
		return;
	p = rec_proc_get(r, m->pid);
	if (!p || p->ours != 1 || mm_add(p, m))
		return;
	/* Code of a process the module unwinds, outside what it was given. */
	if (p->maps && !(m->flags & UWPROF_MMAP_EXEC) &&
	    !rec_proc_has_addr(p, m->start)) {
		p->refresh = 1;
		p->urgent = 1;
	}
}

/* The latest exec of p before time t (0: none). */
static uint64_t exec_before(const struct rec_proc *p, uint64_t t)
{
	uint64_t best = 0;
	uint32_t i;

	for (i = 0; i < p->nr_execs; i++)
		if (p->exec_ns[i] < t && p->exec_ns[i] > best)
			best = p->exec_ns[i];
	return best;
}

/*
 * Where the image that the exec at 'exec_ns' replaced ends in the records:
 * at the first mapping that exec made (it maps the new image before its
 * record), else at the exec.
 */
static uint64_t image_end(const struct rec_proc *p, uint64_t exec_ns)
{
	uint64_t prev = exec_before(p, exec_ns), end = exec_ns;
	size_t i;

	for (i = 0; i < p->nr_mm; i++)
		if (p->mm[i].exec && p->mm[i].time_ns > prev &&
		    p->mm[i].time_ns <= exec_ns && p->mm[i].time_ns < end)
			end = p->mm[i].time_ns;
	return end;
}

/*
 * An image of p that /proc was never read for, from its records: the one
 * the exec at 'exec_ns' replaced, or (exec_ns 0) the last one of a
 * process that exited. Its MAPS record and a generation to finish its
 * samples' walks with are dated inside it, after its own exec. Returns 0,
 * or -ENOENT when the records do not hold that image from its exec on (a
 * child that did not exec ran its parent's, which FORK gave it).
 */
static int mm_image(struct recorder *r, struct rec_proc *p, uint64_t exec_ns)
{
	uint64_t end = exec_ns ? image_end(p, exec_ns) : UINT64_MAX, t;
	struct uwprof_pm pm = { 0 };
	size_t *keep, n, i;
	int ret, from_exec;

	if (!p->nr_mm)
		return -ENOENT;
	keep = malloc(p->nr_mm * sizeof(*keep));
	pm.v = calloc(p->nr_mm, sizeof(*pm.v));
	if (!keep || !pm.v) {
		free(keep);
		free(pm.v);
		return -ENOMEM;
	}
	n = mm_last_image(p, keep, &from_exec, end);
	/* Dated after the exec that began it, as its samples are. */
	t = exec_before(p, exec_ns ? exec_ns : UINT64_MAX);
	for (i = 0; from_exec && i < n; i++) {
		pm.v[pm.n++] = p->mm[keep[i]].e;
		if (p->mm[keep[i]].time_ns > t)
			t = p->mm[keep[i]].time_ns;
	}
	ret = -ENOENT;
	if (pm.n && (!exec_ns || t + 1 < exec_ns))
		ret = rec_proc_past_image(r, p, &pm, t + 1, p->comm);
	free(pm.v);		/* the paths stay p->mm's */
	free(keep);
	return ret;
}

void rec_mm_exec(struct recorder *r, struct rec_proc *p, uint64_t exec_ns)
{
	if (p->image_read || !p->nr_mm || p->ours != 1 ||
	    VEC_RESERVE(p->mm_unread, p->cap_mm_unread, p->nr_mm_unread + 1, 4))
		return;
	p->mm_unread[p->nr_mm_unread++] = exec_ns;
	r->mm_pending = 1;
}

void rec_mm_exit(struct recorder *r, struct rec_proc *p)
{
	p->mm_exit = 1;
	r->mm_pending = 1;
}

/*
 * Images that ended (by an exec, or the process's exit) since the last
 * drain and /proc was never read for: the records of every ring read so
 * far are in, so they are rebuilt now.
 */
void rec_mm_flush(struct recorder *r)
{
	size_t i, k;

	if (!r->mm_pending)
		return;
	r->mm_pending = 0;
	for (i = 0; i < r->nr_procs; i++) {
		struct rec_proc *p = &r->procs[i];

		for (k = 0; k < p->nr_mm_unread; k++)
			if (!mm_image(r, p, p->mm_unread[k]))
				r->mm_images++;
		p->nr_mm_unread = 0;
		if (!p->mm_exit)
			continue;
		p->mm_exit = 0;
		if (!p->image_read && p->ours == 1 && !mm_image(r, p, 0))
			r->mm_images++;
		rec_mm_free(p);
	}
}
