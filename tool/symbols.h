/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Symbolizer for the reporting commands: turns an object's virtual address
 * into a function name (demangled), its start, and optionally file:line.
 * Objects are ELF files on disk (their .symtab, else the .symtab of a
 * separate debug file found by build-id or .gnu_debuglink, else one
 * fetched by build-id from debuginfod when DEBUGINFOD_URLS is set, plus
 * .dynsym),
 * ELF images in memory (the vDSO stored in a profile), and the kernel
 * (a kallsyms text snapshot). Each object is loaded once and cached in the
 * 'struct uwprof_syms' that owns it; lookups are binary searches.
 * Called from the report and script commands only; single-threaded.
 */
#ifndef UWPROF_TOOL_SYMBOLS_H
#define UWPROF_TOOL_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

struct uwprof_syms;

/* The answer for one address; strings live as long as the cache. */
struct uwprof_sym_res {
	const char	*name;		/* demangled; NULL: no symbol covers it */
	uint64_t	start;		/* the symbol's address */
	const char	*file;		/* source file with lines, else NULL */
	unsigned int	line;		/* 0: unknown */
};

/* lines: also load DWARF line tables (libdw) for file:line answers. */
struct uwprof_syms *uwprof_syms_new(int lines);
void uwprof_syms_free(struct uwprof_syms *s);

/*
 * Find or load the object at 'path' (or, when 'image' is not NULL, the ELF
 * image of 'size' bytes, e.g. the vDSO, named 'path' in messages). A
 * non-empty 'build_id' that does not match the file's makes the object
 * count as missing (the file changed since recording). Returns an object
 * handle >= 0, or a negative errno when the object cannot be read; the
 * failure is remembered, so each object is tried and reported once. On
 * failure 'err' (may be NULL) gets one line; on success it may get one
 * line to show as a note (a debug file fetched from debuginfod, or why
 * none came), and is empty otherwise and for an object already loaded.
 */
int uwprof_syms_object(struct uwprof_syms *s, const char *path,
		       const void *image, size_t size,
		       const uint8_t *build_id, size_t build_id_size,
		       char *err, size_t errlen);

/* Build-id of a loaded object (size 0 when it has none). */
const uint8_t *uwprof_syms_build_id(struct uwprof_syms *s, int obj,
				    size_t *size);

/*
 * Look up 'addr' (the object's own virtual address). Returns 0 with 'res'
 * filled (res->name NULL when no symbol covers it), -EINVAL for a bad
 * handle.
 */
int uwprof_syms_lookup(struct uwprof_syms *s, int obj, uint64_t addr,
		       struct uwprof_sym_res *res);

/*
 * Load kernel symbols from kallsyms text ("addr type name [module]" lines).
 * Returns the number of text symbols kept, 0 when the addresses are hidden
 * (all zero), or a negative errno.
 */
int uwprof_syms_kernel_load(struct uwprof_syms *s, const char *text,
			    size_t len);

/*
 * A kernel address: name and start as above, and 'dso' set to
 * "[kernel.kallsyms]" or "[module]". Returns 0, or -ENOENT when no kernel
 * symbols are loaded or the address is outside them.
 */
int uwprof_syms_kernel_lookup(struct uwprof_syms *s, uint64_t addr,
			      struct uwprof_sym_res *res, const char **dso);

/*
 * Demangle C++ (Itanium) and Rust (legacy and v0) names through libiberty.
 * Returns a malloc'd string, or NULL when 'name' is not mangled.
 */
char *uwprof_syms_demangle(const char *name);

#endif /* UWPROF_TOOL_SYMBOLS_H */
