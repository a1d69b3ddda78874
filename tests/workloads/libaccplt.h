/* SPDX-License-Identifier: GPL-2.0 */
/* The exported functions of libaccplt.so, called by the plt workload. */
#ifndef LIBACCPLT_H
#define LIBACCPLT_H
#include <stdint.h>

uint64_t accplt_outer(uint64_t x);
uint64_t accplt_leaf(uint64_t x);

#endif
