/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The on-disk cache of compiled unwind tables, keyed by architecture and
 * GNU build-id: /var/cache/uwprof/tables when writable, else
 * $XDG_CACHE_HOME/uwprof/tables or ~/.cache/uwprof/tables. One blob file
 * per object, named <arch>-<build-id hex>.v<table format version>.uwtb,
 * written atomically. A cached blob is used only when it passes
 * uwprof_blob_check() (which rejects other format versions) and names
 * the same build-id. Objects without a build-id are compiled every time.
 */
#ifndef UWPROF_TOOL_TABLECACHE_H
#define UWPROF_TOOL_TABLECACHE_H

#include <stddef.h>
#include <stdint.h>

#include "table.h"

struct uwprof_tcache {
	char		dir[4000];	/* "" when no cache directory is usable */
	uint64_t	hits;
	uint64_t	misses;
	uint64_t	compile_ns;	/* time spent compiling on misses */
};

/* Picks the cache directory (creating it). Never fails: no dir, no cache. */
void uwprof_tcache_init(struct uwprof_tcache *c, const char *override_dir);

/*
 * The table of the object at 'path' (opened as is) or of 'image' (the
 * vDSO, when image is not NULL; 'path' then only names it). 'build_id'
 * (may be NULL) is the object's, read cheaply from its program headers: on
 * a hit the object is not compiled. Returns what uwprof_table_compile()
 * does; out->err is set on failure.
 */
int uwprof_tcache_get(struct uwprof_tcache *c, const char *path,
		      const void *image, size_t image_size, uint16_t arch,
		      const uint8_t *build_id, size_t build_id_size,
		      struct uwprof_blob *out);

#endif /* UWPROF_TOOL_TABLECACHE_H */
