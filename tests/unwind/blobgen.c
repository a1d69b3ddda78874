// SPDX-License-Identifier: GPL-2.0
/*
 * Compile one ELF object's unwind table with libuwtable and write the blob
 * to a file: feeds test_arm64_self, which runs under qemu-aarch64 where
 * libelf is not at hand.
 *
 * usage: blobgen OBJECT OUT
 */
#include <stdio.h>

#include "table.h"

int main(int argc, char **argv)
{
	struct uwprof_blob b;
	FILE *f;
	int err;

	if (argc != 3) {
		fprintf(stderr, "usage: %s OBJECT OUT\n", argv[0]);
		return 2;
	}
	err = uwprof_table_compile(argv[1], &b, NULL);
	if (err) {
		fprintf(stderr, "blobgen: %s\n", b.err);
		return 1;
	}
	f = fopen(argv[2], "wb");
	if (!f || fwrite(b.data, 1, b.size, f) != b.size || fclose(f)) {
		perror(argv[2]);
		return 1;
	}
	uwprof_blob_free(&b);
	return 0;
}
