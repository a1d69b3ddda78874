// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of the compiled-table cache (tool/tablecache.c), TAP output:
 * a miss compiles and stores the blob under the current format version's
 * name, a hit serves it, and what must never be served is not: a blob of
 * the previous format version (under either name), a damaged blob, a blob
 * naming another build-id. Each of those is compiled again and replaced.
 * And the key is more than the build-id: two objects built here with one
 * build-id and different CFI get two entries, each its own table (a
 * user's binary carrying libc's build-id must not provide libc's rows).
 *
 * Usage: tcache-test SCRATCH_DIR OBJECT (an x86_64 object with a build-id)
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* One lookup of 'path' as the recorder makes it: through a descriptor. */
static int get_blob(struct uwprof_tcache *c, const char *path, int *hit,
		    struct uwprof_blob *b)
{
	uint64_t hits = c->hits;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = uwprof_tcache_get(c, path, fd, NULL, 0, 0, b);
	close(fd);
	*hit = c->hits > hits;
	return ret;
}

/* One lookup: whether it hit, and the blob passes as this version's. */
static int get(struct uwprof_tcache *c, int *hit)
{
	struct uwprof_blob b;
	char err[256];
	int ret;

	ret = get_blob(c, obj, hit, &b);
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

static int nr_entries(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0;

	while (d && (de = readdir(d)))
		n += strstr(de->d_name, ".uwtb") != NULL;
	if (d)
		closedir(d);
	return n;
}

/*
 * Two shared objects with one build-id (ld --build-id=0x...), one a leaf
 * function, the other with a frame of 4 KiB and a call: different CFI.
 */
static int build_twins(const char dir[1024], char *a, char *b, size_t n)
{
	static const char *src[2] = {
		"int f(int x) { return x * 3; }\n",
		"void g(volatile char *);\n"
		"int f(int x) { volatile char buf[4096]; g(buf); return buf[x]; }\n",
	};
	char cmd[4096], c[1100];
	FILE *f;
	int i;

	for (i = 0; i < 2; i++) {
		snprintf(c, sizeof(c), "%s/twin%d.c", dir, i);
		f = fopen(c, "w");
		if (!f || fputs(src[i], f) < 0 || fclose(f))
			return -1;
		snprintf(cmd, sizeof(cmd),
			 "cc -O2 -shared -fPIC -fasynchronous-unwind-tables "
			 "-Wl,--build-id=0x5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed "
			 "-o %s/twin%d.so %s", dir, i, c);
		if (system(cmd))
			return -1;
	}
	snprintf(a, n, "%s/twin0.so", dir);
	snprintf(b, n, "%s/twin1.so", dir);
	return 0;
}

static int same_blob(const struct uwprof_blob *x, const struct uwprof_blob *y)
{
	return x->size == y->size && !memcmp(x->data, y->data, x->size);
}

/* Looks 'path' up; whether the answer is the table compiled from it. */
static int served_own(struct uwprof_tcache *c, const char *path, int *hit)
{
	struct uwprof_blob got, want;
	int same;

	if (get_blob(c, path, hit, &got))
		return 0;
	if (uwprof_table_compile(path, &want, NULL)) {
		uwprof_blob_free(&got);
		return 0;
	}
	same = same_blob(&got, &want);
	uwprof_blob_free(&got);
	uwprof_blob_free(&want);
	return same;
}

/*
 * The same bytes owned by another user: an entry of their own, so that a
 * user's file never provides the table of root's (as root only: chown).
 */
static void owner(struct uwprof_tcache *c, const char *dir, const char *a)
{
	char cp[1200], cmd[2600];
	int hit;

	if (geteuid()) {
		ok(1, "twins: a copy owned by another user # SKIP not root");
		return;
	}
	snprintf(cp, sizeof(cp), "%s/twin0-nobody.so", dir);
	snprintf(cmd, sizeof(cmd), "cp %s %s", a, cp);
	if (system(cmd) || chown(cp, 65534, 65534)) {
		ok(0, "twins: a copy owned by uid 65534");
		return;
	}
	ok(served_own(c, cp, &hit) && !hit && nr_entries(dir) == 3,
	   "twins: the same bytes owned by another user are not served root's entry");
}

/* A user's object with libc's build-id must not give libc its rows. */
static void twins(const char *scratch)
{
	char dir[1024], a[1100], b[1100];
	struct uwprof_tcache c;
	struct uwprof_blob ba, bb;
	int hit;

	snprintf(dir, sizeof(dir), "%.1000s/twins", scratch);
	if (mkdir(dir, 0755) || build_twins(dir, a, b, sizeof(a))) {
		ok(0, "two objects with one build-id built with cc");
		return;
	}
	if (uwprof_table_compile(a, &ba, NULL) ||
	    uwprof_table_compile(b, &bb, NULL)) {
		ok(0, "both twins compile");
		return;
	}
	ok(ba.size >= sizeof(struct uwprof_table_hdr) &&
	   bb.size >= sizeof(struct uwprof_table_hdr) &&
	   !memcmp(((struct uwprof_table_hdr *)ba.data)->build_id,
		   ((struct uwprof_table_hdr *)bb.data)->build_id, 20) &&
	   !same_blob(&ba, &bb),
	   "twins: one build-id, different tables");
	uwprof_blob_free(&ba);
	uwprof_blob_free(&bb);
	uwprof_tcache_init(&c, dir);
	ok(served_own(&c, a, &hit) && !hit, "twins: the first compiles");
	ok(served_own(&c, a, &hit) && hit, "twins: the first is served from the cache");
	ok(served_own(&c, b, &hit) && !hit,
	   "twins: the second, same build-id, other CFI, gets its own table, not the first's");
	ok(nr_entries(dir) == 2, "twins: two cache entries (%d)", nr_entries(dir));
	ok(served_own(&c, b, &hit) && hit, "twins: the second is served its own entry");
	ok(served_own(&c, a, &hit) && hit, "twins: the first still gets its own");
	owner(&c, dir, a);
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

	twins(argv[1]);
	return tap_done();
}
