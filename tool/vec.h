/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Growable arrays: the one rule for every array the tool extends as it
 * goes. The capacity starts at 'first' elements and doubles until it
 * holds 'need', so appending costs amortized O(1); on failure the array
 * and its capacity are left as they were. Header only, so every program
 * that compiles a tool file by name gets it without another file.
 */
#ifndef UWPROF_TOOL_VEC_H
#define UWPROF_TOOL_VEC_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/* 0, or -ENOMEM (also when the size in bytes would overflow). */
static inline int uwprof_vec_reserve(void **v, size_t *cap, size_t need,
				     size_t size, size_t first)
{
	size_t nc = *cap ? *cap : first;
	void *nv;

	if (need <= *cap)
		return 0;
	while (nc < need) {
		if (nc > SIZE_MAX / 2)
			return -ENOMEM;
		nc *= 2;
	}
	if (nc > SIZE_MAX / size)
		return -ENOMEM;
	nv = realloc(*v, nc * size);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = nc;
	return 0;
}

/* Room for 'need' elements in 'arr' (any pointer lvalue), 'cap' its size_t. */
#define VEC_RESERVE(arr, cap, need, first) \
	uwprof_vec_reserve((void **)&(arr), &(cap), (need), sizeof(*(arr)), \
			   (first))

#endif /* UWPROF_TOOL_VEC_H */
