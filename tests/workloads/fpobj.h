/* SPDX-License-Identifier: GPL-2.0 */
/* The entry point of the frame-pointer-only object (fpobj.c). */
#ifndef FPOBJ_H
#define FPOBJ_H
#include <stdint.h>

uint64_t fpo_outer(uint64_t x);

#endif
