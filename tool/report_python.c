// SPDX-License-Identifier: GPL-2.0
/*
 * Python frames in the reports (see report_model.h): the profile's PYCODE
 * records looked up by the (pid, code address, fingerprint) of a frame,
 * and a frame named from one, its line computed from the recorded
 * location table. Called from report_model.c while it loads a profile;
 * single-threaded. Also the interpreters the recorder found (PYINTERP
 * records), summed up for the reports' headers.
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

static int pi_cmp(const void *a, const void *b)
{
	const struct uwprof_pf_pyinterp *x = *(const struct uwprof_pf_pyinterp *const *)a;
	const struct uwprof_pf_pyinterp *y = *(const struct uwprof_pf_pyinterp *const *)b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	/* File order: the last of a pid is what it ran last. */
	return x < y ? -1 : x > y;
}

/* A name from the profiled process, printed without control characters. */
static void pi_put_name(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, f);
}

#define PI_MAX_VERSIONS	8
#define PI_MAX_LISTED	16

static void pi_line(FILE *f, const char *prefix,
		    const struct uwprof_pf_pyinterp *const *v, size_t n)
{
	uint32_t vers[PI_MAX_VERSIONS];
	size_t i, k, nv = 0, walked = 0, listed = 0;
	const char *base;

	for (i = 0; i < n; i++) {
		if (!(v[i]->flags & UWPROF_PF_INTERP_WALKED))
			continue;
		walked++;
		for (k = 0; k < nv && vers[k] != v[i]->hexversion >> 16; k++)
			;
		if (k == nv && nv < PI_MAX_VERSIONS)
			vers[nv++] = v[i]->hexversion >> 16;
	}
	fprintf(f, "%spython: %zu process%s walked", prefix, walked,
		walked == 1 ? "" : "es");
	for (k = 0; k < nv; k++)
		fprintf(f, "%s%u.%u", k ? ", " : " (", vers[k] >> 8,
			vers[k] & 0xff);
	fprintf(f, "%s", nv ? ")" : "");
	if (walked < n)
		fprintf(f, ", %zu not:", n - walked);
	for (i = 0; i < n; i++) {
		if (v[i]->flags & UWPROF_PF_INTERP_WALKED)
			continue;
		if (listed++ == PI_MAX_LISTED) {
			fprintf(f, " and %zu more", n - walked - PI_MAX_LISTED);
			break;
		}
		base = strrchr(v[i]->path, '/');
		fprintf(f, "%s pid %u ", listed > 1 ? ";" : "", v[i]->pid);
		pi_put_name(f, base ? base + 1 : v[i]->path);
		fputs(": ", f);
		pi_put_name(f, v[i]->reason[0] ? v[i]->reason : "no reason recorded");
	}
	fputc('\n', f);
}

int uwprof_rep_py_interps(const struct uwprof_pf *pf, FILE *f,
			  const char *prefix)
{
	const struct uwprof_pf_pyinterp **v;
	size_t i, npy = 0, other = 0;

	if (!pf->nr_pyinterps)
		return 0;
	v = malloc(pf->nr_pyinterps * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < pf->nr_pyinterps; i++)
		v[i] = &pf->pyinterps[i];
	qsort(v, pf->nr_pyinterps, sizeof(*v), pi_cmp);
	/* The last record of each pid, CPython's first. */
	for (i = 0; i < pf->nr_pyinterps; i++) {
		if (i + 1 < pf->nr_pyinterps && v[i + 1]->pid == v[i]->pid)
			continue;
		if (v[i]->kind == UWPROF_PF_INTERP_CPYTHON)
			v[npy++] = v[i];
		else
			other++;
	}
	if (npy)
		pi_line(f, prefix, v, npy);
	if (other)
		fprintf(f, "%s%zu process%s with an interpreter of a kind this uwprof does not know\n",
			prefix, other, other == 1 ? "" : "es");
	free(v);
	return 0;
}
