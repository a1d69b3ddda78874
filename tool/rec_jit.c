// SPDX-License-Identifier: GPL-2.0
/*
 * JIT symbols of the profiled processes: the perf map (/tmp/perf-PID.map)
 * and perf's jitdump file a runtime publishes are opened when the
 * process's mappings are read, or at its exit (checked against its owner
 * and start time, read while it lived), read when it exits or execs and
 * at the end of recording (the files keep growing until then), and stored
 * as JITSYMS records, so that reports name code in anonymous executable
 * memory after the files are gone. Called from the recorder's loop;
 * single-threaded.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jitmap.h"
#include "recorder.h"

/* Symbols per JITSYMS record, and name bytes: records stay small. */
#define JIT_BATCH		16384
#define JIT_BATCH_NAMES		(1U << 20)
/* A file larger than this is a runaway: its tail is left unread. */
#define JIT_FILE_MAX		(1ULL << 30)

struct jit_batch {
	struct recorder	*r;
	uint32_t	pid;
	uint32_t	source;
	struct uwprof_pf_jitsym v[JIT_BATCH];
	size_t		n;
	char		names[JIT_BATCH_NAMES];
	size_t		used;
	uint64_t	total;
};

static void jit_flush(struct jit_batch *b)
{
	if (!b->n)
		return;
	rec_w_jitsyms(b->r, mono_ns(), b->pid,
		      b->source, b->v, b->n);
	b->total += b->n;
	b->n = 0;
	b->used = 0;
}

static int jit_emit(void *arg, uint64_t start, uint64_t size,
		    const char *name, size_t len)
{
	struct jit_batch *b = arg;
	struct uwprof_pf_jitsym *e;

	if (b->n == JIT_BATCH || b->used + len > JIT_BATCH_NAMES)
		jit_flush(b);
	memcpy(b->names + b->used, name, len);
	e = &b->v[b->n++];
	e->pid = b->pid;
	e->start = start;
	e->size = size;
	e->name = b->names + b->used;
	e->len = (uint32_t)len;
	b->used += len;
	return 0;
}

static void jit_read_one(struct recorder *r, struct rec_proc *p,
			 struct rec_jit *j, struct jit_batch *b)
{
	uint64_t left;
	long ret;

	if (j->fd < 0)
		return;
	left = j->pos.off < JIT_FILE_MAX ? JIT_FILE_MAX - j->pos.off : 0;
	if (!left) {
		if (!j->warned && !r->o.quiet)
			fprintf(stderr, "uwprof record: %s of process %u is over %llu MiB: its tail is not read\n",
				j->dump ? "the jitdump file" : "the perf map",
				p->pid, JIT_FILE_MAX >> 20);
		j->warned = 1;
		return;
	}
	b->source = j->dump ? UWPROF_PF_JIT_DUMP : UWPROF_PF_JIT_PERF_MAP;
	ret = j->dump ? uwprof_jit_dump_read(j->fd, &j->pos, left, jit_emit, b) :
			uwprof_jit_perfmap_read(j->fd, &j->pos, left, jit_emit, b);
	jit_flush(b);
	if (ret < 0 && !j->warned && !r->o.quiet) {
		fprintf(stderr, "uwprof record: reading the %s of process %u: %s\n",
			j->dump ? "jitdump file" : "perf map", p->pid,
			strerror((int)-ret));
		j->warned = 1;
	}
}

void rec_jit_read(struct recorder *r, struct rec_proc *p)
{
	struct jit_batch *b;

	if (p->jit_done || (p->jit_map.fd < 0 && p->jit_dump.fd < 0))
		return;
	b = malloc(sizeof(*b));
	if (!b)
		return;
	b->r = r;
	b->pid = p->pid;
	b->n = 0;
	b->used = 0;
	b->total = 0;
	jit_read_one(r, p, &p->jit_map, b);
	jit_read_one(r, p, &p->jit_dump, b);
	r->jit_syms += b->total;
	free(b);
}

void rec_jit_init(struct rec_proc *p)
{
	memset(&p->jit_map, 0, sizeof(p->jit_map));
	memset(&p->jit_dump, 0, sizeof(p->jit_dump));
	p->jit_map.fd = -1;
	p->jit_dump.fd = -1;
	p->jit_dump.dump = 1;
}

void rec_jit_close(struct rec_proc *p)
{
	int refused_map = p->jit_map.refused, refused_dump = p->jit_dump.refused;

	if (p->jit_map.fd >= 0)
		close(p->jit_map.fd);
	if (p->jit_dump.fd >= 0)
		close(p->jit_dump.fd);
	rec_jit_init(p);
	p->jit_map.refused = refused_map;
	p->jit_dump.refused = refused_dump;
}

/* A file that is there but must not be used: said once, never retried. */
static void jit_refused(struct recorder *r, struct rec_proc *p,
			struct rec_jit *j, int err)
{
	if (err != -EPERM)
		return;	/* none yet, stale, or the process gone: try again */
	j->refused = 1;
	if (!r->o.quiet)
		fprintf(stderr, "uwprof record: the %s of process %u is not a regular file of its owner: not read\n",
			j->dump ? "jitdump file" : "perf map", p->pid);
}

void rec_jit_look(struct recorder *r, struct rec_proc *p,
		  const struct uwprof_pm *pm)
{
	size_t i;
	int fd;

	if (p->jit_done)
		return;
	/* Kept from its life: its files may be opened after its exit. */
	if (!p->jit_owner_ok)
		p->jit_owner_ok = !uwprof_jit_owner_read((pid_t)p->pid,
							 &p->jit_owner);
	if (!p->jit_owner_ok)
		return;
	if (p->jit_map.fd < 0 && !p->jit_map.refused) {
		fd = uwprof_jit_perfmap_open((pid_t)p->pid, &p->jit_owner);
		if (fd >= 0)
			p->jit_map.fd = fd;
		else
			jit_refused(r, p, &p->jit_map, fd);
	}
	for (i = 0; pm && p->jit_dump.fd < 0 && !p->jit_dump.refused &&
	     i < pm->n; i++) {
		if (pm->v[i].kind != UWPROF_PM_FILE ||
		    !uwprof_jit_is_dump((pid_t)p->pid, pm->v[i].path))
			continue;
		fd = uwprof_jit_dump_open(pm->v[i].path, &p->jit_owner);
		if (fd >= 0)
			p->jit_dump.fd = fd;
		else
			jit_refused(r, p, &p->jit_dump, fd);
	}
}

void rec_jit_finish(struct recorder *r)
{
	struct rec_proc *p;
	size_t i;

	for (i = 0; i < r->nr_procs; i++) {
		p = &r->procs[i];
		if (p->ours != 1 || p->jit_done)
			continue;
		/* Published after the last look at its mappings. */
		rec_jit_look(r, p, NULL);
		rec_jit_read(r, p);
		rec_jit_close(p);
	}
}

void rec_jit_exit(struct recorder *r, struct rec_proc *p, int exec)
{
	rec_jit_look(r, p, NULL);
	rec_jit_read(r, p);
	if (exec)
		return;
	rec_jit_close(p);
	p->jit_done = 1;
}
