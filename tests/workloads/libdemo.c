// SPDX-License-Identifier: GPL-2.0
/*
 * libdemo.so: the shared library of the bundled demo, so profiles show
 * chains that cross from the program into a library through the PLT.
 * Built -O2 -fomit-frame-pointer like the rest of the demo.
 */
#include <stddef.h>
#include <stdint.h>

#include "libdemo.h"

__attribute__((noinline)) static uint64_t demo_mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdULL;
}

__attribute__((noinline)) uint64_t demo_checksum(const uint32_t *v, size_t n)
{
	uint64_t h = 0;

	for (size_t i = 0; i < n; i++)
		h = demo_mix(h, v[i]);
	return h;
}
