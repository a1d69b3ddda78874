// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of the compiled-table cache (tool/tablecache.c), TAP output:
 * a miss compiles and stores the blob under the current format version's
 * name, a hit serves it, and what must never be served is not: a blob of
 * the previous format version (under either name), a damaged blob, a blob
 * naming another build-id. Each of those is compiled again and replaced.
 *
 * Usage: tcache-test SCRATCH_DIR OBJECT (an x86_64 object with a build-id)
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf_file.h"
#include "tablecache.h"
#include "tap.h"

static const char *obj;
static uint8_t bid[20];
static size_t bid_size;

/* The one cache file's path, or "" when the directory holds none. */
static void cache_file(const char *dir, char *out, size_t n)
{
	struct dirent *de;
	DIR *d = opendir(dir);

	out[0] = 0;
	while (d && (de = readdir(d)))
		if (strstr(de->d_name, ".uwtb"))
			snprintf(out, n, "%s/%s", dir, de->d_name);
	if (d)
		closedir(d);
}

static int write_blob(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	int ok = f && fwrite(p, 1, n, f) == n;

	return (f && !fclose(f) && ok) ? 0 : -EIO;
}

/* One lookup: whether it hit, and the blob passes as this version's. */
static int get(struct uwprof_tcache *c, int *hit)
{
	uint64_t hits = c->hits;
	struct uwprof_blob b;
	char err[256];
	int ret;

	ret = uwprof_tcache_get(c, obj, NULL, 0, UWPROF_ARCH_X86_64, bid,
				bid_size, &b);
	*hit = c->hits > hits;
	if (!ret)
		ret = uwprof_blob_check(b.data, b.size, err, sizeof(err));
	uwprof_blob_free(&b);
	return ret;
}

/* Rewrite the cached blob with 'fn' applied, then look it up again. */
static void stale(struct uwprof_tcache *c, const char *file, const char *what,
		  void (*fn)(struct uwprof_table_hdr *h))
{
	struct uwprof_blob b;
	int hit, ret;

	if (uwprof_table_compile(obj, &b, NULL)) {
		ok(0, "%s: the object compiles", what);
		return;
	}
	fn(b.data);
	write_blob(file, b.data, b.size);
	uwprof_blob_free(&b);
	ret = get(c, &hit);
	ok(!ret && !hit, "%s: not served, compiled again (%d, hit %d)", what,
	   ret, hit);
	ret = get(c, &hit);
	ok(!ret && hit, "%s: replaced by a blob of this version, served next time",
	   what);
}

static void old_version(struct uwprof_table_hdr *h)
{
	h->version = UWPROF_TABLE_VERSION - 1;
}

static void damaged(struct uwprof_table_hdr *h)
{
	h->nr_pages = 0;
}

static void other_id(struct uwprof_table_hdr *h)
{
	h->build_id[0] ^= 1;
}

int main(int argc, char **argv)
{
	struct uwprof_tcache c;
	struct uwprof_elf *e;
	char err[512], file[4400], want[64], old[4400];
	int hit, ret;

	if (argc != 3) {
		fprintf(stderr, "usage: tcache-test SCRATCH_DIR OBJECT\n");
		return 2;
	}
	obj = argv[2];
	if (uwprof_elf_open(obj, &e, err, sizeof(err)) || !e->build_id_size) {
		printf("1..0 # SKIP %s: no x86_64 object with a build-id\n", obj);
		return 0;
	}
	bid_size = e->build_id_size < 20 ? e->build_id_size : 20;
	memcpy(bid, e->build_id, bid_size);
	uwprof_elf_close(e);
	uwprof_tcache_init(&c, argv[1]);
	ok(c.dir[0] != 0, "cache directory %s usable", argv[1]);

	ret = get(&c, &hit);
	ok(!ret && !hit, "first lookup compiles (%d)", ret);
	cache_file(argv[1], file, sizeof(file));
	snprintf(want, sizeof(want), ".v%u.uwtb", UWPROF_TABLE_VERSION);
	ok(strstr(file, want) != NULL, "stored as %s", file);
	ret = get(&c, &hit);
	ok(!ret && hit, "second lookup served from the cache (%d)", ret);

	stale(&c, file, "a blob of the previous format version", old_version);
	stale(&c, file, "a damaged blob", damaged);
	stale(&c, file, "a blob of another build-id", other_id);

	/* An older uwprof's file, under its own version's name: left alone. */
	snprintf(old, sizeof(old), "%.*s.v%u.uwtb",
		 (int)(strlen(file) - strlen(want)), file, UWPROF_TABLE_VERSION - 1);
	ok(!rename(file, old), "cache file renamed to the previous version's name");
	ret = get(&c, &hit);
	ok(!ret && !hit, "a file under the previous version's name is not served");
	return tap_done();
}
