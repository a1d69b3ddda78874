// SPDX-License-Identifier: GPL-2.0
/*
 * Python frames in the reports (see report_model.h): the profile's PYCODE
 * records looked up by the (pid, code address, fingerprint) of a frame,
 * and a frame named from one, its line computed from the recorded
 * location table. Called from report_model.c while it loads a profile;
 * single-threaded.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pycode.h"
#include "report_model.h"

static int py_cmp(const void *a, const void *b)
{
	const struct uwprof_pf_pycode *x = *(const struct uwprof_pf_pycode *const *)a;
	const struct uwprof_pf_pycode *y = *(const struct uwprof_pf_pycode *const *)b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->fingerprint != y->fingerprint)
		return x->fingerprint < y->fingerprint ? -1 : 1;
	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	/* File order last, so that the sort is stable. */
	return x < y ? -1 : x > y;
}

int uwprof_rep_py_load(struct uwprof_rep *r)
{
	size_t i, n = r->pf->nr_pycodes;

	if (!n)
		return 0;
	r->pycodes = malloc(n * sizeof(*r->pycodes));
	if (!r->pycodes)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		r->pycodes[i] = &r->pf->pycodes[i];
	qsort(r->pycodes, n, sizeof(*r->pycodes), py_cmp);
	r->nr_pycodes = n;
	return 0;
}

/* <0, 0, >0 as the record's key is below, equal to, above the one asked. */
static int py_key_cmp(const struct uwprof_pf_pycode *c, uint32_t pid,
		      uint64_t addr, uint32_t fp)
{
	if (c->pid != pid)
		return c->pid < pid ? -1 : 1;
	if (c->addr != addr)
		return c->addr < addr ? -1 : 1;
	if (c->fingerprint != fp)
		return c->fingerprint < fp ? -1 : 1;
	return 0;
}

const struct uwprof_pf_pycode *uwprof_rep_py_find(const struct uwprof_rep *r,
						  uint32_t pid, uint64_t addr,
						  uint32_t fingerprint,
						  uint64_t time_ns)
{
	size_t lo = 0, hi = r->nr_pycodes, mid;
	const struct uwprof_pf_pycode *c;

	/* The first record of the key at or after time_ns. */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		c = r->pycodes[mid];
		if (py_key_cmp(c, pid, addr, fingerprint) < 0 ||
		    (!py_key_cmp(c, pid, addr, fingerprint) && c->time_ns < time_ns))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < r->nr_pycodes && !py_key_cmp(r->pycodes[lo], pid, addr, fingerprint))
		return r->pycodes[lo];
	if (lo && !py_key_cmp(r->pycodes[lo - 1], pid, addr, fingerprint))
		return r->pycodes[lo - 1];
	return NULL;
}

/* A name safe for folded stacks: ';' and line breaks replaced. */
static void py_fold(char *s)
{
	for (; *s; s++)
		if (*s == ';' || *s == '\n' || *s == '\r')
			*s = '_';
}

int uwprof_rep_py_frame(struct uwprof_rep_frame *f,
			const struct uwprof_pf_pycode *c, uint64_t addr,
			int32_t lasti)
{
	char *label;
	int line, n;

	f->python = 1;
	f->ip = addr;
	f->vaddr = addr;
	f->sym_start = addr;
	if (!c) {
		if (asprintf(&label, "[python code 0x%llx]",
			     (unsigned long long)addr) < 0)
			return -ENOMEM;
		f->label = label;
		f->folded = strdup(label);
		return f->folded ? 0 : -ENOMEM;
	}
	line = uwprof_pycode_line(c->linetable, c->linetable_len,
				  c->firstlineno, lasti);
	f->sym = c->qualname;
	f->file = c->filename;
	f->dso = c->filename;
	f->line = line > 0 ? (unsigned int)line : 0;
	f->start_line = c->firstlineno > 0 ? (unsigned int)c->firstlineno : 0;
	if (line > 0)
		n = asprintf(&label, "%s (%s:%d)", c->qualname,
			     uwprof_rep_basename(c->filename), line);
	else
		n = asprintf(&label, "%s (%s)", c->qualname,
			     uwprof_rep_basename(c->filename));
	if (n < 0)
		return -ENOMEM;
	f->label = label;
	f->folded = strdup(label);
	if (!f->folded)
		return -ENOMEM;
	py_fold(f->folded);
	return 0;
}
