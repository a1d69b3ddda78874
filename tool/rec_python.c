// SPDX-License-Identifier: GPL-2.0
/*
 * Python frames named while their process lives: a drained sample's
 * Python pairs (UWPROF_IP_PYTHON tag, code object address) whose code
 * object the recorder has not read yet for that process are read at once
 * from the process's memory (pycode.c), since the interpreter frees code
 * objects and reuses their memory, and stored as PYCODE records that the
 * reports name the frames from. What was read is kept per process, keyed
 * by address with the fingerprint checked, until the process execs or
 * exits, and handed to the agent's new windows. A process that is gone,
 * or memory that is garbage, leaves its frames unnamed and a count.
 * Which interpreter each process runs, walked or not and why, is stored
 * as a PYINTERP record when the recorder first finds it and whenever it
 * changes (exec, dlopen). Called from the recorder's drain and its reading
 * of mappings; single-threaded.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pycode.h"
#include "recorder.h"

/*
 * Code objects kept per process, and the bytes of their names and tables:
 * a program that keeps making code (exec(), templates), or a hostile one
 * with huge names and tables, stops having new code named rather than
 * growing the recorder without end. Real programs have a few thousand
 * objects of a few hundred bytes.
 */
#define REC_PY_MAX_CODES	65536
#define REC_PY_MAX_BYTES	(64ULL << 20)

struct rec_pycode {
	struct uwprof_pycode c;		/* qualname NULL: could not be read */
	uint32_t	fp;
	uint64_t	time_ns;	/* when it was read */
};

struct rec_pycache {
	uint32_t	pid;
	int		dead;		/* exited, or its memory cannot be opened */
	/*
	 * When it was seen dead: a sample of its pid taken later is of
	 * another process (the pid reused); UINT64_MAX: never tried again.
	 */
	uint64_t	dead_ns;
	int		full;		/* REC_PY_MAX_*: no new code read */
	uint64_t	bytes;		/* of names and tables kept */
	/* Samples before this (its latest exec) belong to an image gone. */
	uint64_t	born_ns;
	struct uwprof_pymem mem;
	struct uwprof_u64map idx;	/* code address -> index in codes */
	struct rec_pycode *codes;
	size_t		nr, cap;
};

static void cache_clear(struct rec_pycache *c)
{
	size_t i;

	for (i = 0; i < c->nr; i++)
		uwprof_pycode_free(&c->codes[i].c);
	free(c->codes);
	c->codes = NULL;
	c->nr = c->cap = 0;
	c->bytes = 0;
	c->full = 0;
	uwprof_u64map_free(&c->idx);
	uwprof_pymem_close(&c->mem);
}

static struct rec_pycache *cache_find(struct recorder *r, uint32_t pid)
{
	size_t i;

	for (i = 0; i < r->nr_pycs; i++)
		if (r->pycs[i]->pid == pid)
			return r->pycs[i];
	return NULL;
}

static struct rec_pycache *cache_get(struct recorder *r, uint32_t pid)
{
	struct rec_pycache *c = cache_find(r, pid);

	if (c)
		return c;
	if (VEC_RESERVE(r->pycs, r->cap_pycs, r->nr_pycs + 1, 8))
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->pid = pid;
	c->mem.fd = -1;
	r->pycs[r->nr_pycs++] = c;
	return c;
}

/* Writes one PYCODE record to the file and every window. */
static void py_write(struct recorder *r, uint32_t pid,
		     const struct rec_pycode *e, struct uwprof_pfw *only)
{
	struct uwprof_pf_pycode pc = {
		.time_ns = e->time_ns, .addr = e->c.addr, .pid = pid,
		.fingerprint = e->fp, .size = e->c.size,
		.firstlineno = e->c.firstlineno,
		.firsttraceable = e->c.firsttraceable,
		.qualname = e->c.qualname, .filename = e->c.filename,
		.linetable = e->c.linetable,
		.linetable_len = e->c.linetable_len,
	};

	if (only)
		uwprof_pfw_pycode(only, &pc);
	else
		rec_w_pycode(r, &pc);
}

/*
 * Reads the code object at addr with fingerprint fp into e (an entry of
 * c, new or reused). A process whose memory cannot be opened, or that
 * exited, is given up.
 */
static void py_resolve(struct recorder *r, struct rec_pycache *c,
		       const struct uwprof_py_layout *l, struct rec_pycode *e,
		       uint64_t addr, uint32_t fp)
{
	int err;

	if (e->c.qualname)
		c->bytes -= strlen(e->c.qualname) + strlen(e->c.filename) +
			    e->c.linetable_len;
	uwprof_pycode_free(&e->c);
	e->fp = fp;
	e->time_ns = mono_ns();
	if (c->mem.fd < 0 && uwprof_pymem_open(&c->mem, (pid_t)c->pid)) {
		c->dead = 1;
		c->dead_ns = UINT64_MAX;
		r->py_failed++;
		return;
	}
	err = uwprof_pycode_read(&c->mem, l, addr, fp, &e->c);
	if (err) {
		if (err == -ESRCH) {
			c->dead = 1;
			c->dead_ns = e->time_ns;
		}
		if (err == -ESTALE)
			r->py_stale++;
		else
			r->py_failed++;
		return;
	}
	r->py_codes++;
	c->bytes += strlen(e->c.qualname) + strlen(e->c.filename) +
		    e->c.linetable_len;
	py_write(r, c->pid, e, NULL);
}

/* One Python pair: resolved unless it was already, for this fingerprint. */
static void py_frame(struct recorder *r, struct rec_pycache *c,
		     const struct uwprof_py_layout *l, uint64_t tag,
		     uint64_t addr)
{
	uint32_t fp = UWPROF_IP_PY_FP(tag), i;
	struct rec_pycode *e;

	if (uwprof_u64map_get(&c->idx, addr, &i)) {
		if (c->codes[i].fp == fp)
			return;
		/* Freed and reused by another object: read it again. */
		py_resolve(r, c, l, &c->codes[i], addr, fp);
		return;
	}
	if (c->nr >= REC_PY_MAX_CODES || c->bytes >= REC_PY_MAX_BYTES) {
		c->full = 1;
		r->py_failed++;
		return;
	}
	if (VEC_RESERVE(c->codes, c->cap, c->nr + 1, 64) ||
	    uwprof_u64map_put(&c->idx, addr, (uint32_t)c->nr) < 0) {
		r->py_failed++;
		return;
	}
	e = &c->codes[c->nr++];
	memset(e, 0, sizeof(*e));
	py_resolve(r, c, l, e, addr, fp);
}

void rec_py_sample(struct recorder *r, struct rec_proc *p,
		   const struct uwprof_rec_sample *s)
{
	const __u64 *u = s->ips + s->nr_kernel;
	struct rec_pycache *c;
	uint32_t j;

	if (!(s->flags & UWPROF_SAMPLE_PYTHON) || !p->py || !p->py->found)
		return;
	c = cache_get(r, p->pid);
	if (!c) {
		r->py_failed++;
		return;
	}
	if (c->dead && s->time_ns > c->dead_ns) {
		cache_clear(c);
		c->dead = 0;
		c->born_ns = c->dead_ns;
	}
	if (c->dead || s->time_ns < c->born_ns)
		return;
	for (j = 0; j + 1 < s->nr_user && !c->dead && !c->full; j++) {
		if ((u[j] & UWPROF_IP_TAG_MASK) != UWPROF_IP_PYTHON)
			continue;
		py_frame(r, c, &p->py->layout, u[j], u[j + 1]);
		j++;
	}
}

void rec_py_exit(struct recorder *r, uint32_t pid, uint64_t time_ns, int exec)
{
	struct rec_pycache *c = cache_find(r, pid);

	if (!c)
		return;
	cache_clear(c);
	if (exec) {
		c->born_ns = time_ns;
		c->dead = 0;
	} else {
		c->dead = 1;
		c->dead_ns = time_ns;
	}
}

void rec_py_prune(struct recorder *r)
{
	size_t i, n = 0;

	for (i = 0; i < r->nr_pycs; i++) {
		if (r->pycs[i]->dead && !rec_proc_find(r, r->pycs[i]->pid)) {
			cache_clear(r->pycs[i]);
			free(r->pycs[i]);
			continue;
		}
		r->pycs[n++] = r->pycs[i];
	}
	r->nr_pycs = n;
}

void rec_py_replay(struct recorder *r, struct uwprof_pfw *w)
{
	const struct rec_pycache *c;
	size_t i, k;

	for (i = 0; i < r->nr_pycs; i++) {
		c = r->pycs[i];
		if (c->dead)
			continue;
		for (k = 0; k < c->nr; k++)
			if (c->codes[k].c.qualname)
				py_write(r, c->pid, &c->codes[k], w);
	}
}

/* The PYINTERP record of what was found of process 'pid'. */
static void py_interp_write(struct recorder *r, uint32_t pid,
			    uint64_t time_ns,
			    const struct uwprof_py_proc *py,
			    struct uwprof_pfw *only)
{
	struct uwprof_pf_pyinterp pi = {
		.time_ns = time_ns, .pid = pid, .hexversion = py->hexversion,
		.kind = UWPROF_PF_INTERP_CPYTHON,
		.flags = py->found ? UWPROF_PF_INTERP_WALKED : 0,
		.path = py->path, .reason = py->found ? "" : py->why,
	};

	if (only)
		uwprof_pfw_pyinterp(only, &pi);
	else
		rec_w_pyinterp(r, &pi);
}

/*
 * Whether to say on stderr that p's interpreter is not walked: a
 * recording says it for each process; the agent (quiet), which runs for
 * months beside programs that come and go, once per interpreter file and
 * reason, its /metrics counting the processes.
 */
static int py_say(struct recorder *r, const struct uwprof_py_proc *py)
{
	uint64_t h = 0xcbf29ce484222325ULL;	/* FNV-1a */
	const char *s;

	if (!r->o.quiet)
		return 1;
	for (s = py->path; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ULL;
	h = (h ^ 0xff) * 0x100000001b3ULL;
	for (s = py->why; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ULL;
	/* Added (1), or no memory to remember it (-ENOMEM): said. */
	return uwprof_u64map_put(&r->py_said, h, 1) != 0;
}

static int py_same(const struct uwprof_py_proc *a,
		   const struct uwprof_py_proc *b)
{
	return a->found == b->found && a->hexversion == b->hexversion &&
	       !strcmp(a->path, b->path) && !strcmp(a->why, b->why);
}

void rec_py_found(struct recorder *r, struct rec_proc *p, uint64_t time_ns,
		  const struct uwprof_py_proc *now)
{
	if (!now->found && !now->why[0]) {
		free(p->py);
		p->py = NULL;
		return;
	}
	if (p->py && py_same(p->py, now)) {
		*p->py = *now;
		return;
	}
	if (!p->py) {
		p->py = malloc(sizeof(*p->py));
		if (!p->py)
			return;
	}
	*p->py = *now;
	py_interp_write(r, p->pid, time_ns, now, NULL);
	if (!now->found && py_say(r, now))
		fprintf(stderr, "%s: process %u (%s): no Python frames: %s%s\n",
			r->name, p->pid, now->path[0] ? now->path : "?",
			now->why, r->o.quiet ?
			" (said once per interpreter and reason)" : "");
}

void rec_py_interp_replay(struct recorder *r, const struct rec_proc *p,
			  uint64_t time_ns, struct uwprof_pfw *w)
{
	if (p->py)
		py_interp_write(r, p->pid, time_ns, p->py, w);
}

void rec_py_free(struct recorder *r)
{
	size_t i;

	for (i = 0; i < r->nr_pycs; i++) {
		cache_clear(r->pycs[i]);
		free(r->pycs[i]);
	}
	free(r->pycs);
	r->pycs = NULL;
	r->nr_pycs = r->cap_pycs = 0;
	uwprof_u64map_free(&r->py_said);
}
