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

/* Root to leaf: comm, user frames outermost first, then kernel ones. */
static char *stack_line(const struct uwprof_rep *r,
			const struct uwprof_rep_sample *s)
{
	size_t len = 0, cap = 256, n;
	const char *name;
	char *buf = malloc(cap), *nb;
	uint32_t i, nr = s->nr_kernel + s->nr_user, k;

	if (!buf)
		return NULL;
	for (i = 0; i <= nr; i++) {
		if (i == 0) {
			name = s->comm;
		} else {
			/* i-th frame from the root, in file order (leaf first) */
			k = i <= s->nr_user ? s->nr_kernel + s->nr_user - i :
					      s->nr_kernel - (i - s->nr_user);
			name = r->frames[s->frames[k]].folded;
		}
		n = strlen(name);
		if (len + n + 2 > cap) {
			cap = (len + n + 2) * 2;
			nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				return NULL;
			}
			buf = nb;
		}
		if (i)
			buf[len++] = ';';
		/* The comm is the one name not cleaned by the model. */
		for (k = 0; k < n; k++)
			if (i || (name[k] != ';' && name[k] != '\n'))
				buf[len++] = name[k];
	}
	buf[len] = 0;
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
			v[j - 1].count++;
			continue;
		}
		v[j].line = stack_line(r, &r->samples[idx[i]]);
		v[j].count = 1;
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
