// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of the tool's growable array and u64 hash map (tool/vec.h,
 * tool/u64map.c), TAP output: keys that collide in the low bits, key 0,
 * duplicates, growth across many resizes checked against a plain array,
 * the key listing, and a reservation whose size would overflow.
 *
 * Usage: u64map-test
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "u64map.h"
#include "vec.h"

#define N	100000

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The i-th test key: 0 first, then multiples of 4096 and odd values. */
static uint64_t key(size_t i)
{
	return i % 2 ? (uint64_t)i << 12 : (uint64_t)i * 0x9e3779b97f4a7c15ULL;
}

static void map_tests(void)
{
	struct uwprof_u64map m = { 0 };
	uint64_t *keys = malloc(N * sizeof(*keys)), *want = malloc(N * sizeof(*want));
	size_t i, bad_put = 0, bad_get = 0, bad_dup = 0, n;
	uint32_t v = 0;

	ok(!uwprof_u64map_get(&m, 0, &v), "an empty map has no key 0");
	for (i = 0; i < N; i++)
		if (uwprof_u64map_put(&m, key(i), (uint32_t)i) != 1)
			bad_put++;
	ok(!bad_put && m.n == N, "%d distinct keys added (n %zu, failures %zu)",
	   N, m.n, bad_put);
	for (i = 0; i < N; i++)
		if (uwprof_u64map_put(&m, key(i), 7) != 0)
			bad_dup++;
	ok(!bad_dup && m.n == N, "adding them again adds nothing (%zu did)",
	   bad_dup);
	for (i = 0; i < N; i++)
		if (!uwprof_u64map_get(&m, key(i), &v) || v != (uint32_t)i)
			bad_get++;
	ok(!bad_get, "every key gives its first value (%zu did not)", bad_get);
	ok(!uwprof_u64map_get(&m, 3, &v) && !uwprof_u64map_get(&m, ~0ULL, &v),
	   "keys never added are absent");
	ok(m.cap >= 2 * m.n && !(m.cap & (m.cap - 1)),
	   "at most half full, power-of-two slots (%zu for %zu)", m.cap, m.n);
	n = keys && want ? uwprof_u64map_keys(&m, keys) : 0;
	for (i = 0; want && i < N; i++)
		want[i] = key(i);
	if (n == N) {
		qsort(keys, n, sizeof(*keys), u64_cmp);
		qsort(want, N, sizeof(*want), u64_cmp);
	}
	ok(n == N && !memcmp(keys, want, N * sizeof(*keys)),
	   "the key listing is exactly the keys added (%zu)", n);
	uwprof_u64map_free(&m);
	ok(!m.slots && !m.n && !m.cap && !uwprof_u64map_get(&m, key(1), &v),
	   "freed: empty again");
	free(keys);
	free(want);
}

static void vec_tests(void)
{
	uint32_t *v = NULL;
	size_t cap = 0, i, bad = 0, caps = 0, last = 0;
	char *big = NULL;
	size_t bcap = 0;

	for (i = 0; i < N; i++) {
		if (VEC_RESERVE(v, cap, i + 1, 16)) {
			bad++;
			break;
		}
		if (cap != last) {
			caps++;
			if (last && cap != 2 * last)
				bad++;
			last = cap;
		}
		v[i] = (uint32_t)i;
	}
	for (i = 0; !bad && i < N; i++)
		if (v[i] != i)
			bad++;
	ok(!bad && cap >= N && cap < 2 * N,
	   "appending %d elements: capacity 16 doubled %zu times to %zu, contents kept",
	   N, caps - 1, cap);
	ok(!VEC_RESERVE(v, cap, 10, 16) && cap == last,
	   "a smaller reservation changes nothing");
	ok(VEC_RESERVE(v, cap, SIZE_MAX / 2, 16) < 0 && cap == last && v[N - 1] == N - 1,
	   "a reservation whose byte size overflows fails and keeps the array");
	ok(!VEC_RESERVE(big, bcap, 1, 4096) && bcap == 4096,
	   "the first reservation takes the first capacity");
	free(v);
	free(big);
}

int main(void)
{
	map_tests();
	vec_tests();
	return tap_done();
}
