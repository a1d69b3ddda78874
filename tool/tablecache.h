/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The on-disk cache of compiled unwind tables: /var/cache/uwprof/tables
 * when writable, else $XDG_CACHE_HOME/uwprof/tables or
 * ~/.cache/uwprof/tables. One blob file per key, named
 * <arch>-<build-id hex>-<owner uid>-<CFI hash hex>.v<format version>.uwtb,
 * written atomically. The key is more than the build-id, which any user
 * can copy into a binary of theirs: the file's owner (a user's file never
 * provides the table of root's or another user's) and a hash of the CFI
 * it was compiled from (uwprof_elf_cfi_hash(): one build-id with other CFI
 * is another table). A cached blob is used only when it passes
 * uwprof_blob_check() (which rejects other format versions) and names the
 * same build-id. Objects without a build-id, and tables compiled from a
 * separate debug file (found outside the object, so not in its hash), are
 * compiled every time.
 */
#ifndef UWPROF_TOOL_TABLECACHE_H
#define UWPROF_TOOL_TABLECACHE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

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
 * The table of the object read through 'fd' (opened and checked by the
 * caller: procmaps.h), or of 'image' (the vDSO, when image is not NULL;
 * 'owner' is then the uid of the process it was read from). 'name' names
 * it in messages. The object is opened (its CFI read and hashed for the
 * key) either way; on a hit it is not compiled. Returns what
 * uwprof_table_compile() does; out->err is set on failure.
 */
int uwprof_tcache_get(struct uwprof_tcache *c, const char *name, int fd,
		      const void *image, size_t image_size, uid_t owner,
		      struct uwprof_blob *out);

#endif /* UWPROF_TOOL_TABLECACHE_H */
