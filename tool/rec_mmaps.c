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
 * Replays p's mappings in time order into 'keep' (index list, sorted by
 * start): returns how many the last image holds; *from_exec says whether
 * that image's records begin with its exec (else they are only what was
 * mapped after the records began).
 */
static size_t mm_last_image(struct rec_proc *p, size_t *keep, int *from_exec)
{
	size_t i, k, n = 0;

	qsort(p->mm, p->nr_mm, sizeof(*p->mm), mm_time_cmp);
	*from_exec = 0;
	for (i = 0; i < p->nr_mm; i++) {
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
	n = mm_last_image(p, keep, &from_exec);
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

/*
 * The last image of a process that exited, from its records, when
 * /proc/PID/maps was never read for that image: its MAPS record, and a
 * generation to finish its samples' walks with. Returns 0, or -ENOENT
 * when the records do not hold that image from its exec on (a child that
 * did not exec ran its parent's, which FORK gave it).
 */
static int mm_image(struct recorder *r, struct rec_proc *p)
{
	size_t *keep, n, i;
	struct uwprof_pm pm = { 0 };
	uint64_t t = 0;
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
	n = mm_last_image(p, keep, &from_exec);
	if (!from_exec)
		n = 0;
	for (i = 0; i < n; i++) {
		pm.v[pm.n++] = p->mm[keep[i]].e;
		if (p->mm[keep[i]].time_ns > t)
			t = p->mm[keep[i]].time_ns;
	}
	/* After its exec: samples of the image are dated after that. */
	for (i = 0; i < p->nr_execs; i++)
		if (p->exec_ns[i] > t)
			t = p->exec_ns[i];
	ret = n ? rec_proc_upload_pm(r, p, &pm, t + 1, p->comm, 0) : -ENOENT;
	free(pm.v);		/* the paths stay p->mm's */
	free(keep);
	return ret;
}

/*
 * Processes that exited since the last drain: the records of every ring
 * read so far are in, so an image /proc was never read for is rebuilt.
 */
void rec_mm_exits(struct recorder *r)
{
	size_t i;

	if (!r->mm_exits)
		return;
	r->mm_exits = 0;
	for (i = 0; i < r->nr_procs; i++) {
		struct rec_proc *p = &r->procs[i];

		if (!p->mm_exit)
			continue;
		p->mm_exit = 0;
		if (!p->image_read && p->ours == 1 && !mm_image(r, p))
			r->mm_images++;
		rec_mm_free(p);
	}
}
