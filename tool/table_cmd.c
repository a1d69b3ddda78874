// SPDX-License-Identifier: GPL-2.0
/*
 * 'uwprof table': compiles one object's unwind info and prints the rows,
 * its statistics, and/or writes the blob to a file (for guest selftests
 * that cannot link libelf).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfi.h"
#include "exit_status.h"
#include "table.h"
#include "table_cmd.h"

static const char *const unsup_name[UWPROF_UNSUP__COUNT] = {
	[UWPROF_UNSUP_CFA_EXPR] = "cfa_expression",
	[UWPROF_UNSUP_CFA_REG] = "cfa_register",
	[UWPROF_UNSUP_FP_EXPR] = "fp_expression",
	[UWPROF_UNSUP_RA_EXPR] = "ra_expression",
	[UWPROF_UNSUP_RANGE] = "out_of_range",
	[UWPROF_UNSUP_STACK_SWITCH] = "stack_switch",
};

static const char *const source_name[] = {
	[UWPROF_SRC_NONE] = "none",
	[UWPROF_SRC_EH_FRAME] = ".eh_frame",
	[UWPROF_SRC_DEBUG_FRAME] = ".debug_frame",
	[UWPROF_SRC_DEBUG_FILE] = ".debug_frame (separate debug file)",
};

static void table_usage(FILE *f)
{
	fprintf(f,
		"usage: uwprof table [--stats] [--quiet] [--blob OUT] FILE\n"
		"  Print the unwind rows of an ELF object, one per line:\n"
		"    0x<addr> cfa=<reg><+|-><n>|*(<reg><+|-><n>)[+<k>] fp=<rule> ra=<rule>\n"
		"      [pac] [saved=<reg>:c<+|-><n>]\n"
		"  or 0x<addr> end|plt|sig ...; rules: s (unchanged), lr (arm64's\n"
		"  return address unchanged), u (undefined), c+N (saved at CFA+N),\n"
		"  v+N (is CFA+N), rN (in register N), exp (an expression);\n"
		"  saved: the callee-saved register the row records (see uwprof.h).\n"
		"  --stats      also print '# ' lines: rows, pages, bytes, bytes/row,\n"
		"               unsupported rows by reason, wall time\n"
		"  --quiet      do not print the rows\n"
		"  --blob OUT   write the table blob (uapi format) to OUT\n"
		"  exit: 0 ok, 1 error, 2 usage, 3 no unwind info\n");
}

static int write_file(const char *path, const void *p, size_t n)
{
	const char *q = p;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ssize_t w;

	if (fd < 0)
		return -errno;
	while (n) {
		w = write(fd, q, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			w = -errno;
			close(fd);
			return (int)w;
		}
		q += w;
		n -= (size_t)w;
	}
	if (close(fd))
		return -errno;
	return 0;
}

static void print_stats(const struct uwprof_table_stats *st)
{
	int i;

	printf("# source: %s %s\n", source_name[st->source], st->source_path);
	printf("# cies: %llu fdes: %llu overlapping: %llu outside: %llu\n",
	       (unsigned long long)st->cies, (unsigned long long)st->fdes,
	       (unsigned long long)st->fdes_overlapping,
	       (unsigned long long)st->fdes_outside);
	printf("# rows: %llu (end %llu, plt %llu, signal %llu, page starts %llu) rules: %llu\n",
	       (unsigned long long)st->rows, (unsigned long long)st->end_rows,
	       (unsigned long long)st->plt_rows,
	       (unsigned long long)st->signal_rows,
	       (unsigned long long)st->page_rows,
	       (unsigned long long)st->rules);
	printf("# no-cfi: %llu functions with rows from their code\n",
	       (unsigned long long)st->nocfi_fdes);
	printf("# pages: %llu of %llu bytes, palette entries: %llu\n",
	       (unsigned long long)st->pages, 1ULL << st->page_shift,
	       (unsigned long long)st->palette);
	printf("# bytes: %llu bytes/row: %.2f\n", (unsigned long long)st->bytes,
	       st->rows ? (double)st->bytes / (double)st->rows : 0.0);
	for (i = 0; i < UWPROF_UNSUP__COUNT; i++)
		printf("# unsupported %s: %llu\n", unsup_name[i],
		       (unsigned long long)st->unsupported[i]);
	printf("# wall: %.6f s\n", (double)st->wall_ns / 1e9);
}

int uwprof_cmd_table(int argc, char **argv)
{
	struct uwprof_table_stats st;
	struct uwprof_blob b;
	const char *file = NULL, *blob_out = NULL;
	int stats = 0, quiet = 0, ret, i;
	char check_err[256];

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--stats")) {
			stats = 1;
		} else if (!strcmp(argv[i], "--quiet") || !strcmp(argv[i], "-q")) {
			quiet = 1;
		} else if (!strcmp(argv[i], "--blob")) {
			if (++i == argc) {
				table_usage(stderr);
				return UWPROF_EX_USAGE;
			}
			blob_out = argv[i];
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			table_usage(stdout);
			return UWPROF_EX_OK;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "uwprof table: unknown option '%s'\n",
				argv[i]);
			table_usage(stderr);
			return UWPROF_EX_USAGE;
		} else if (!file) {
			file = argv[i];
		} else {
			table_usage(stderr);
			return UWPROF_EX_USAGE;
		}
	}
	if (!file) {
		table_usage(stderr);
		return UWPROF_EX_USAGE;
	}
	ret = uwprof_table_compile(file, &b, &st);
	if (ret) {
		fprintf(stderr, "uwprof table: %s\n", b.err);
		uwprof_blob_free(&b);
		return ret == -ENODATA ? UWPROF_EX_NO_UNWIND : UWPROF_EX_ERROR;
	}
	/* The writer's output goes through the same check as the module's. */
	if (uwprof_blob_check(b.data, b.size, check_err, sizeof(check_err))) {
		fprintf(stderr, "uwprof table: %s: %s\n", file, check_err);
		uwprof_blob_free(&b);
		return UWPROF_EX_ERROR;
	}
	if (!quiet && uwprof_blob_print(stdout, b.data, b.size)) {
		fprintf(stderr, "uwprof table: writing rows: %s\n",
			strerror(errno));
		uwprof_blob_free(&b);
		return UWPROF_EX_ERROR;
	}
	if (stats)
		print_stats(&st);
	if (blob_out) {
		ret = write_file(blob_out, b.data, b.size);
		if (ret) {
			fprintf(stderr, "uwprof table: %s: %s\n", blob_out,
				strerror(-ret));
			uwprof_blob_free(&b);
			return UWPROF_EX_ERROR;
		}
	}
	uwprof_blob_free(&b);
	if (fflush(stdout)) {
		fprintf(stderr, "uwprof table: stdout: %s\n", strerror(errno));
		return UWPROF_EX_ERROR;
	}
	return UWPROF_EX_OK;
}
