/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A hash map from 64-bit keys to 32-bit values (an index into the
 * caller's own array, or nothing for a set): open addressing, linear
 * probing, kept at most half full. Zeroed means empty; every key,
 * including 0, is a key.
 */
#ifndef UWPROF_TOOL_U64MAP_H
#define UWPROF_TOOL_U64MAP_H

#include <stddef.h>
#include <stdint.h>

struct uwprof_u64map_slot {
	uint64_t	key;
	uint32_t	val;
	uint32_t	used;
};

struct uwprof_u64map {
	struct uwprof_u64map_slot *slots;
	size_t		cap;		/* power of two, or 0 */
	size_t		n;
};

/* Returns 1 when added, 0 when present (its value kept), -ENOMEM. */
int uwprof_u64map_put(struct uwprof_u64map *m, uint64_t key, uint32_t val);
/* Returns 1 and the value when present, else 0. */
int uwprof_u64map_get(const struct uwprof_u64map *m, uint64_t key,
		      uint32_t *val);
/* Copies the keys, in no order, to 'out' (room for m->n); returns n. */
size_t uwprof_u64map_keys(const struct uwprof_u64map *m, uint64_t *out);
void uwprof_u64map_free(struct uwprof_u64map *m);

#endif /* UWPROF_TOOL_U64MAP_H */
