// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target over table blobs themselves: the input is a blob as
 * TABLE_ADD would receive it. The module's check (module/table_check.c)
 * must refuse it or accept a blob whose every lookup stays inside it
 * (blob_exercise.h); seeded with the blobs of the seed objects, so
 * mutations land in pages, rows, palettes and rules behind a valid header.
 */
#include "blob_exercise.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	bx_blob(data, size, 0);
	return 0;
}
