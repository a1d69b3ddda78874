/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An interning table of strings: each distinct string gets the next
 * position (0, 1, ...) the first time it is asked for, and the same one
 * after. The string tables of the pprof and OTLP writers, and the keys
 * they deduplicate their other tables by. Single-threaded.
 */
#ifndef UWPROF_TOOL_STRTAB_H
#define UWPROF_TOOL_STRTAB_H

#include <stddef.h>
#include <stdint.h>

struct uwprof_strtab {
	char		**v;		/* by position, owned */
	size_t		n;
	size_t		cap;
	uint32_t	*slot;		/* position + 1, 0: empty */
	size_t		nslot;		/* power of two */
};

/* Position of 's', added when new; -ENOMEM on failure. */
long uwprof_strtab_id(struct uwprof_strtab *t, const char *s);
void uwprof_strtab_free(struct uwprof_strtab *t);

#endif /* UWPROF_TOOL_STRTAB_H */
