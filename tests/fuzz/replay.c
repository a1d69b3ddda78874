// SPDX-License-Identifier: GPL-2.0
/*
 * Replays inputs through the table compiler's in-memory entry point, the
 * way the fuzzer does: every input in tests/fuzz/regressions/ (inputs that
 * once crashed or hung it) and the seeds. An input may be rejected, but a
 * blob that compiles must pass uwprof_blob_check() and, for the host's
 * arch, the module's check with every lookup right (blob_exercise.h), and
 * for a seed the in-memory compile must give the same blob as compiling
 * the file. Inputs named blob-* are table blobs (fuzz-blob's): they go to
 * the module's check and lookups as they are.
 * TAP output: one line per input.
 */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blob_exercise.h"

static int read_all(const char *path, unsigned char **buf, size_t *len)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 1 << 16, n = 0, r;
	unsigned char *p = NULL, *q;

	if (!f)
		return -errno;
	do {
		q = realloc(p, cap);
		if (!q) {
			free(p);
			fclose(f);
			return -ENOMEM;
		}
		p = q;
		r = fread(p + n, 1, cap - n, f);
		n += r;
		if (n == cap)
			cap *= 2;
	} while (r);
	fclose(f);
	*buf = p;
	*len = n;
	return 0;
}

int main(int argc, char **argv)
{
	int i, failed = 0, same_as_file = 0, n = 1;
	struct uwprof_blob b, fb;
	unsigned char *buf = NULL;
	char err[256];
	size_t len = 0;

	for (i = 1; i < argc; i++) {
		const char *what = "rejected cleanly";
		int ok = 1, ret;

		if (!strcmp(argv[i], "--same-as-file")) {
			same_as_file = 1;
			continue;
		}
		if (read_all(argv[i], &buf, &len)) {
			printf("not ok %d - %s: unreadable\n", n++, argv[i]);
			failed++;
			continue;
		}
		if (!strncmp(basename(argv[i]), "blob-", 5)) {
			/* Aborts on a violation, as the fuzzer would. */
			ret = bx_blob(buf, len, 0);
			printf("ok %d - %s: blob %s\n", n++, argv[i],
			       ret ? "refused by the module's check" :
			       "accepted, every lookup inside it");
			free(buf);
			continue;
		}
		ret = uwprof_table_compile_mem(buf, len, argv[i], &b, NULL);
		if (!ret) {
			what = "compiles to a valid blob";
			if (uwprof_blob_check(b.data, b.size, err, sizeof(err))) {
				ok = 0;
				what = err;
			} else {
				bx_blob(b.data, b.size, b.arch == UWPROF_ARCH_ID);
			}
		} else if (!b.err[0] || strchr(b.err, '\n')) {
			ok = 0;
			what = "failed without a one-line message";
		}
		if (ok && same_as_file) {
			if (uwprof_table_compile(argv[i], &fb, NULL) != ret ||
			    (!ret && (fb.size != b.size ||
				      memcmp(fb.data, b.data, b.size)))) {
				ok = 0;
				what = "differs from compiling the file";
			}
			uwprof_blob_free(&fb);
		}
		printf("%s %d - %s: %s\n", ok ? "ok" : "not ok", n++, argv[i],
		       what);
		failed += !ok;
		uwprof_blob_free(&b);
		free(buf);
	}
	if (n == 1)
		printf("ok 1 - no inputs # SKIP nothing to replay\n");
	return failed ? 1 : 0;
}
