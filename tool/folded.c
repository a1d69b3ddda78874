// SPDX-License-Identifier: GPL-2.0
/*
 * Folded-stack writer (see folded.h). Called from the report command.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "folded.h"
#include "report_model.h"
#include "vec.h"

/* Appends ";name" (just "name" first); the comm alone is cleaned here. */
static int line_add(char **buf, size_t *len, size_t *cap, const char *name,
		    int clean)
{
	size_t n = strlen(name), k;

	if (VEC_RESERVE(*buf, *cap, *len + n + 2, 256))
		return -ENOMEM;
	if (*len)
		(*buf)[(*len)++] = ';';
	for (k = 0; k < n; k++)
		if (!clean || (name[k] != ';' && name[k] != '\n'))
			(*buf)[(*len)++] = name[k];
	(*buf)[*len] = 0;
	return 0;
}

/*
 * Root to leaf: comm, the off-CPU mark, the incomplete mark when asked
 * for, user frames outermost first, then kernel ones.
 */
static char *stack_line(const struct uwprof_rep *r,
			const struct uwprof_rep_sample *s)
{
	size_t len = 0, cap = 256;
	const char *mark;
	char *buf = malloc(cap);
	uint32_t i, nr = s->nr_kernel + s->nr_user, k;
	int err;

	if (!buf)
		return NULL;
	buf[0] = 0;
	err = line_add(&buf, &len, &cap, s->comm, 1);
	if (!err && uwprof_rep_off_cpu(s))
		err = line_add(&buf, &len, &cap, UWPROF_REP_OFF_CPU_MARK, 0);
	mark = r->mark_incomplete ? uwprof_rep_incomplete_mark(r, s) : NULL;
	if (!err && mark)
		err = line_add(&buf, &len, &cap, mark, 0);
	for (i = 1; i <= nr && !err; i++) {
		/* i-th frame from the root, in file order (leaf first) */
		k = i <= s->nr_user ? nr - i : s->nr_kernel - (i - s->nr_user);
		err = line_add(&buf, &len, &cap, r->frames[s->frames[k]].folded, 0);
	}
	if (err) {
		free(buf);
		return NULL;
	}
	return buf;
}

static int stack_cmp(const void *a, const void *b)
{
	const struct uwprof_folded_stack *x = a, *y = b;

	return strcmp(x->line, y->line);
}

void uwprof_folded_free(struct uwprof_folded_stack *v, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++)
		free(v[i].line);
	free(v);
}

/* Samples with the same comm and frame indexes share one line. */
static int sample_cmp(const void *a, const void *b, void *arg)
{
	const struct uwprof_rep *r = arg;
	const struct uwprof_rep_sample *x = &r->samples[*(const size_t *)a];
	const struct uwprof_rep_sample *y = &r->samples[*(const size_t *)b];
	int c = strcmp(x->comm, y->comm);

	if (c)
		return c;
	if (uwprof_rep_off_cpu(x) != uwprof_rep_off_cpu(y))
		return uwprof_rep_off_cpu(x) - uwprof_rep_off_cpu(y);
	if (r->mark_incomplete &&
	    (x->flags & UWPROF_SAMPLE_STOP_MASK) != (y->flags & UWPROF_SAMPLE_STOP_MASK))
		return (x->flags & UWPROF_SAMPLE_STOP_MASK) <
		       (y->flags & UWPROF_SAMPLE_STOP_MASK) ? -1 : 1;
	if (x->nr_kernel != y->nr_kernel)
		return x->nr_kernel < y->nr_kernel ? -1 : 1;
	if (x->nr_user != y->nr_user)
		return x->nr_user < y->nr_user ? -1 : 1;
	return memcmp(x->frames, y->frames,
		      (x->nr_kernel + x->nr_user) * sizeof(*x->frames));
}

int uwprof_folded_collect(const struct uwprof_rep *r,
			  struct uwprof_folded_stack **out, size_t *nr)
{
	struct uwprof_folded_stack *v = NULL;
	size_t i, j, n = 0, *idx;

	*out = NULL;
	*nr = 0;
	idx = malloc((r->nr_samples ? r->nr_samples : 1) * sizeof(*idx));
	if (!idx)
		return -ENOMEM;
	for (i = 0; i < r->nr_samples; i++)
		idx[i] = i;
	qsort_r(idx, r->nr_samples, sizeof(*idx), sample_cmp, (void *)r);
	for (i = 0; i < r->nr_samples; i++)
		n += !i || sample_cmp(&idx[i - 1], &idx[i], (void *)r);
	v = calloc(n ? n : 1, sizeof(*v));
	if (!v) {
		free(idx);
		return -ENOMEM;
	}
	/* Distinct frame lists first, then merge equal names. */
	for (i = 0, j = 0; i < r->nr_samples; i++) {
		if (i && !sample_cmp(&idx[i - 1], &idx[i], (void *)r)) {
			v[j - 1].count += uwprof_rep_weight(r, &r->samples[idx[i]]);
			continue;
		}
		v[j].line = stack_line(r, &r->samples[idx[i]]);
		v[j].count = uwprof_rep_weight(r, &r->samples[idx[i]]);
		if (!v[j++].line) {
			free(idx);
			uwprof_folded_free(v, j);
			return -ENOMEM;
		}
	}
	free(idx);
	qsort(v, n, sizeof(*v), stack_cmp);
	for (i = 0, j = 0; i < n; i++) {
		if (j && !strcmp(v[j - 1].line, v[i].line)) {
			v[j - 1].count += v[i].count;
			free(v[i].line);
			continue;
		}
		v[j++] = v[i];
	}
	*out = v;
	*nr = j;
	return 0;
}

int uwprof_folded_write(const struct uwprof_rep *r, FILE *f)
{
	struct uwprof_folded_stack *v;
	size_t i, n;
	int ret;

	ret = uwprof_folded_collect(r, &v, &n);
	if (ret)
		return ret;
	for (i = 0; i < n; i++)
		if (fprintf(f, "%s %llu\n", v[i].line,
			    (unsigned long long)v[i].count) < 0)
			break;
	ret = i < n ? -(errno ? errno : EIO) : 0;
	uwprof_folded_free(v, n);
	return ret;
}
