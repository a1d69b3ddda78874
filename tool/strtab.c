// SPDX-License-Identifier: GPL-2.0
/*
 * The interning table of strings (see strtab.h): open addressing over an
 * FNV-1a hash, kept at most half full. Called from the pprof and OTLP
 * writers.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "strtab.h"
#include "vec.h"

static uint64_t str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 0x100000001b3ULL;
	return h;
}

static int strtab_grow(struct uwprof_strtab *t)
{
	size_t n = t->nslot ? t->nslot * 2 : 1024, i, j;
	uint32_t *s = calloc(n, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (i = 0; i < t->n; i++) {
		j = str_hash(t->v[i]) & (n - 1);
		while (s[j])
			j = (j + 1) & (n - 1);
		s[j] = (uint32_t)i + 1;
	}
	free(t->slot);
	t->slot = s;
	t->nslot = n;
	return 0;
}

long uwprof_strtab_id(struct uwprof_strtab *t, const char *s)
{
	size_t j;

	if ((t->n + 1) * 2 > t->nslot && strtab_grow(t))
		return -ENOMEM;
	j = str_hash(s) & (t->nslot - 1);
	while (t->slot[j]) {
		if (!strcmp(t->v[t->slot[j] - 1], s))
			return t->slot[j] - 1;
		j = (j + 1) & (t->nslot - 1);
	}
	if (VEC_RESERVE(t->v, t->cap, t->n + 1, 1024))
		return -ENOMEM;
	t->v[t->n] = strdup(s);
	if (!t->v[t->n])
		return -ENOMEM;
	t->slot[j] = (uint32_t)t->n + 1;
	return (long)t->n++;
}

void uwprof_strtab_free(struct uwprof_strtab *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->v[i]);
	free(t->v);
	free(t->slot);
	memset(t, 0, sizeof(*t));
}
