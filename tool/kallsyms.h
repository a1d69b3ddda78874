/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's symbol list, /proc/kallsyms: reading it and splitting its
 * "addr type name [module]" lines. The one parser of that text, used by
 * the recorder (which stores the symbols its samples hit) and by the
 * symbolizer (which reads the running kernel's when a profile has none).
 */
#ifndef UWPROF_TOOL_KALLSYMS_H
#define UWPROF_TOOL_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

/* One code symbol. name and mod point into the text, not NUL-terminated. */
struct uwprof_kallsym {
	uint64_t	addr;		/* 0 when kptr_restrict hides it */
	const char	*name;
	size_t		name_len;
	const char	*mod;		/* module name without brackets, or NULL */
	size_t		mod_len;
};

/*
 * Reads /proc/kallsyms whole into a malloc'ed buffer (*text, *len).
 * Returns 0 or a negative errno.
 */
int uwprof_kallsyms_read(char **text, size_t *len);

/*
 * The next code symbol (types t, T, w, W) of text[*pos .. len), skipping
 * other lines; advances *pos past it. Returns 1, or 0 at the end.
 */
int uwprof_kallsyms_next(const char *text, size_t len, size_t *pos,
			 struct uwprof_kallsym *k);

/*
 * Among names at one address (memcpy, __memcpy, __pi_memcpy), orders the
 * one to show first before the others: fewest leading underscores, then
 * longest, then by bytes. strcmp-like.
 */
int uwprof_kallsyms_alias_cmp(const char *a, size_t alen, const char *b,
			      size_t blen);

#endif /* UWPROF_TOOL_KALLSYMS_H */
