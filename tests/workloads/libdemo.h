/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LIBDEMO_H
#define LIBDEMO_H
#include <stddef.h>
#include <stdint.h>

uint64_t demo_checksum(const uint32_t *v, size_t n);

#endif
