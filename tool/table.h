/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Unwind-table compiler: library API (libuwtable.a).
 *
 * Owns the public entry points that turn one ELF object's call-frame
 * information (.eh_frame, or .debug_frame, possibly from a separate debug
 * file) into the table blob defined by <linux/uwprof.h>, and the text form
 * of such a blob. Callers: the uwprof tool, host unwinder tests, fuzzers.
 * Every function is reentrant: no global mutable state.
 */
#ifndef UWPROF_TOOL_TABLE_H
#define UWPROF_TOOL_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <linux/uwprof.h>

#include "cfi.h"

/* Where the compiled CFI came from (uwprof_table_stats.source). */
enum uwprof_cfi_source {
	UWPROF_SRC_NONE = 0,
	UWPROF_SRC_EH_FRAME,		/* .eh_frame of the object itself */
	UWPROF_SRC_DEBUG_FRAME,		/* .debug_frame of the object itself */
	UWPROF_SRC_DEBUG_FILE,		/* .debug_frame of a separate debug file */
};

#define UWPROF_ERR_LEN	512

/*
 * A compiled table. 'data' holds the blob exactly as UWPROF_IOC_TABLE_ADD
 * takes it (header, pages, rows, palettes, rules: see <linux/uwprof.h>);
 * it is 8-byte aligned.
 */
struct uwprof_blob {
	void		*data;
	size_t		size;
	uint16_t	arch;			/* enum uwprof_arch */
	uint8_t		key_is_hash;		/* no build-id: key is a file hash */
	uint8_t		key_size;		/* bytes used in key[] */
	uint8_t		key[20];		/* GNU build-id, else file hash */
	char		err[UWPROF_ERR_LEN];	/* on failure: one line, no newline */
};

struct uwprof_table_stats {
	uint64_t	cies;
	uint64_t	fdes;			/* non-empty FDEs over code */
	uint64_t	fdes_overlapping;	/* of those, clipped by an earlier one */
	uint64_t	fdes_outside;		/* FDEs outside executable segments: dropped */
	uint64_t	rows;			/* rows in the blob, END rows included */
	uint64_t	page_rows;		/* of those, added to start a page */
	/* END, PLT and signal rows; signal rows are not counted unsupported */
	uint64_t	end_rows;
	uint64_t	plt_rows;
	uint64_t	signal_rows;
	/* functions without CFI given rows from their code (nocfi.h) */
	uint64_t	nocfi_fdes;
	uint64_t	rules;
	uint64_t	pages;
	uint64_t	page_shift;		/* pages of 1 << page_shift bytes */
	uint64_t	palette;		/* palette entries */
	uint64_t	bytes;			/* blob size */
	uint64_t	unsupported[UWPROF_UNSUP__COUNT];	/* rows, by reason */
	uint64_t	wall_ns;		/* time spent in the compile call */
	int		source;			/* enum uwprof_cfi_source */
	char		source_path[4096];	/* file the CFI was read from */
};

/*
 * Compile the CFI of the ELF object at 'path'. Returns 0, or a negative
 * errno with out->err set to one line naming the file, section and offset.
 * Without CFI in the object, a separate debug file is looked up by build-id
 * (<dir>/.build-id/xx/yyyy.debug) and by .gnu_debuglink (next to the
 * object, in its .debug/, and <dir>/<object's directory>/), where <dir> is
 * $UWPROF_DEBUG_DIR or /usr/lib/debug. Errors:
 *   -ENODATA	the object has no unwind information at all
 *   -ENOEXEC	not an ELF object this compiler handles (class, machine, type)
 *   -EINVAL	malformed ELF or CFI
 *   -E2BIG	more rows or rules than the blob format allows
 *   -EFBIG	a section over the reader's limits (elf_file.h): too large,
 *		or compressed to inflate past them
 *   -EIO	the file shrank while it was read
 *   other	I/O or allocation failure
 * 'st' may be NULL. On failure out->data is NULL; uwprof_blob_free() is
 * safe either way.
 */
int uwprof_table_compile(const char *path, struct uwprof_blob *out,
			 struct uwprof_table_stats *st);

/*
 * The same over a descriptor the caller opened and checked (a file named in
 * /proc/PID/maps: procmaps.h); 'name' names it in messages and is where a
 * separate debug file's .gnu_debuglink is looked for.
 */
int uwprof_table_compile_fd(int fd, const char *name, struct uwprof_blob *out,
			    struct uwprof_table_stats *st);

/*
 * The same over an object already open (elf_file.h), for a caller that
 * reads it first (the table cache hashes its CFI); with 'search_debug'
 * a separate debug file is looked for. 'e' stays the caller's.
 */
struct uwprof_elf;
int uwprof_table_compile_elf(struct uwprof_elf *e, int search_debug,
			     struct uwprof_blob *out,
			     struct uwprof_table_stats *st);

/*
 * The same over an ELF image in memory (a vDSO read from /proc/PID/mem, a
 * fuzzer input). 'name' is used in messages only. No separate debug file is
 * searched for. The image is not modified and may be freed on return.
 */
int uwprof_table_compile_mem(const void *image, size_t size, const char *name,
			     struct uwprof_blob *out,
			     struct uwprof_table_stats *st);

void uwprof_blob_free(struct uwprof_blob *b);

/*
 * Check that a blob is well formed the way the module requires (magic,
 * version, sizes, counts, pages in order each starting with a row at
 * offset 0, offsets strictly increasing in a page, palette slots and
 * entries in range, padding and reserved bytes zero, last row END).
 * Returns 0 or -EINVAL with 'err' set.
 */
int uwprof_blob_check(const void *data, size_t size, char *err, size_t errlen);

/*
 * Print one line per row of the blob (page starts included), addresses as
 * the object's virtual addresses:
 *   0x<addr> cfa=<reg><+|-><n> fp=<rule> ra=<rule>[ pac]
 *   0x<addr> plt cfa=<reg>+<n> arg=<t> fp=<rule> ra=<rule>
 *   0x<addr> sig ...		(signal trampoline)
 *   0x<addr> end
 * A rule is u (not saved), c<+|-><n> (saved at CFA+n), v<+|-><n> (value is
 * CFA+n), r<regno>, lr (arm64 ra still in the link register), s (same
 * value, ra only), exp (not evaluated). The blob must pass
 * uwprof_blob_check(). Returns 0 or -errno from the stream.
 */
int uwprof_blob_print(FILE *f, const void *data, size_t size);

#endif /* UWPROF_TOOL_TABLE_H */
