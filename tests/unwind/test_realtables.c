// SPDX-License-Identifier: GPL-2.0
/*
 * Tables of real objects through the core's validation: every object named
 * on the command line (the Makefile passes the host's libraries and
 * programs) is compiled by libuwtable and must pass uwprof_table_check(),
 * or the module would refuse what the tool uploads. Each table's index is
 * then built and every row start looked up.
 *
 * usage: test_realtables OBJECT...
 */
#include <stdlib.h>
#include <sys/stat.h>

#include "table.h"
#include "testlib.h"

/* Keeps the run short: the largest libraries take seconds to compile. */
#define MAX_OBJECT_SIZE	(16 << 20)

int main(int argc, char **argv)
{
	struct tap t = { 0 };
	u64 rows = 0, objs = 0;
	int i;

	for (i = 1; i < argc; i++) {
		struct uwprof_table tab;
		struct uwprof_blob b;
		struct stat st;
		u64 idx_bytes = 0;
		u32 *idx, r, bad = 0;
		int err;

		if (stat(argv[i], &st) || !S_ISREG(st.st_mode) || st.st_size > MAX_OBJECT_SIZE)
			continue;
		err = uwprof_table_compile(argv[i], &b, NULL);
		if (err == -ENODATA || err == -ENOEXEC)
			continue;	/* nothing to check: no CFI, or not an object */
		if (err) {
			tap_skip(&t, b.err, "%s", argv[i]);
			continue;
		}
		err = uwprof_table_check(b.data, b.size, &idx_bytes);
		if (!tap_ok(&t, err == 0, "%s: %zu bytes pass uwprof_table_check (%d)",
			    argv[i], b.size, err)) {
			uwprof_blob_free(&b);
			continue;
		}
		idx = malloc(idx_bytes);
		if (!idx) {
			uwprof_blob_free(&b);
			return 2;
		}
		uwprof_table_init(&tab, b.data, idx, 0);
		/* Each row's first byte must find that row's rule. */
		for (r = 0; r + 1 < tab.nr_rows; r++)
			if (uwprof_table_lookup(&tab, tab.base + tab.pc[r]) !=
			    &tab.rules[tab.rule_idx[r]])
				bad++;
		tap_ok(&t, bad == 0, "%s: %u rows, each found by its first address (%u not)",
		       argv[i], tab.nr_rows, bad);
		rows += tab.nr_rows;
		objs++;
		free(idx);
		uwprof_blob_free(&b);
	}
	tap_diag("%llu objects, %llu rows checked", (unsigned long long)objs,
		 (unsigned long long)rows);
	return tap_done(&t);
}
