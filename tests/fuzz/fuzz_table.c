// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target over the whole table compiler: ELF parsing through
 * libelf, CIE/FDE parsing, the CFA machine, row building and the blob
 * writer. Whatever the input, a successful compile must yield a blob that
 * passes the tool's check and, for the host's arch, the module's own
 * (blob_exercise.h: every lookup answers as the layout says), and must
 * print.
 */
#include "blob_exercise.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct uwprof_table_stats st;
	struct uwprof_blob b;
	char err[256];
	FILE *null;

	if (uwprof_table_compile_mem(data, size, "fuzz-input", &b, &st)) {
		uwprof_blob_free(&b);
		return 0;
	}
	if (uwprof_blob_check(b.data, b.size, err, sizeof(err))) {
		fprintf(stderr, "compiled blob fails its check: %s\n", err);
		abort();
	}
	bx_blob(b.data, b.size, b.arch == UWPROF_ARCH_ID);
	null = fopen("/dev/null", "w");
	if (null) {
		uwprof_blob_print(null, b.data, b.size);
		fclose(null);
	}
	uwprof_blob_free(&b);
	return 0;
}
