// SPDX-License-Identifier: GPL-2.0
/*
 * The tool's one hash map keyed by 64-bit values (u64map.h): CIE offsets
 * in the CFI parser, thread and kernel-address sets in the recorder.
 */
#include <errno.h>
#include <stdlib.h>

#include "u64map.h"

/* Addresses and offsets share low bits: mix them all into the index. */
static uint64_t u64map_hash(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return k;
}

static struct uwprof_u64map_slot *u64map_slot(const struct uwprof_u64map *m,
					      uint64_t key)
{
	size_t i = u64map_hash(key) & (m->cap - 1);

	while (m->slots[i].used && m->slots[i].key != key)
		i = (i + 1) & (m->cap - 1);
	return &m->slots[i];
}

static int u64map_grow(struct uwprof_u64map *m)
{
	struct uwprof_u64map n = { .cap = m->cap ? m->cap * 2 : 64 };
	size_t i;

	n.slots = calloc(n.cap, sizeof(*n.slots));
	if (!n.slots)
		return -ENOMEM;
	for (i = 0; i < m->cap; i++)
		if (m->slots[i].used)
			*u64map_slot(&n, m->slots[i].key) = m->slots[i];
	n.n = m->n;
	free(m->slots);
	*m = n;
	return 0;
}

int uwprof_u64map_put(struct uwprof_u64map *m, uint64_t key, uint32_t val)
{
	struct uwprof_u64map_slot *s;

	if ((m->n + 1) * 2 > m->cap && u64map_grow(m))
		return -ENOMEM;
	s = u64map_slot(m, key);
	if (s->used)
		return 0;
	s->key = key;
	s->val = val;
	s->used = 1;
	m->n++;
	return 1;
}

int uwprof_u64map_get(const struct uwprof_u64map *m, uint64_t key,
		      uint32_t *val)
{
	const struct uwprof_u64map_slot *s;

	if (!m->cap)
		return 0;
	s = u64map_slot(m, key);
	if (!s->used)
		return 0;
	*val = s->val;
	return 1;
}

size_t uwprof_u64map_keys(const struct uwprof_u64map *m, uint64_t *out)
{
	size_t i, n = 0;

	for (i = 0; i < m->cap; i++)
		if (m->slots[i].used)
			out[n++] = m->slots[i].key;
	return n;
}

void uwprof_u64map_free(struct uwprof_u64map *m)
{
	free(m->slots);
	m->slots = NULL;
	m->cap = 0;
	m->n = 0;
}
