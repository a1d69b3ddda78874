// SPDX-License-Identifier: GPL-2.0
/*
 * Compiled-table cache for 'uwprof record' (see tablecache.h): choosing a
 * writable directory, looking a blob up by its key (arch, build-id, owner,
 * CFI hash), checking it, and storing a freshly compiled one whole
 * (atomic_file.h), so concurrent recorders never see a partial blob.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "atomic_file.h"
#include "elf_file.h"
#include "tablecache.h"

/* What one cache entry is for (see tablecache.h). */
struct tc_key {
	uint16_t	arch;
	const uint8_t	*id;
	size_t		idn;
	uid_t		owner;
	uint8_t		cfi[16];
};

static int mkdir_p(const char *dir)
{
	char tmp[4096];
	size_t i, n = strlen(dir);

	if (n >= sizeof(tmp))
		return -ENAMETOOLONG;
	memcpy(tmp, dir, n + 1);
	for (i = 1; i <= n; i++) {
		if (tmp[i] != '/' && tmp[i] != 0)
			continue;
		tmp[i] = 0;
		if (mkdir(tmp, 0755) && errno != EEXIST)
			return -errno;
		tmp[i] = dir[i];
	}
	return 0;
}

static int dir_usable(const char *dir)
{
	return !mkdir_p(dir) && !access(dir, W_OK | X_OK);
}

void uwprof_tcache_init(struct uwprof_tcache *c, const char *override_dir)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char d[3900];

	memset(c, 0, sizeof(*c));
	if (override_dir) {
		if (dir_usable(override_dir))
			snprintf(c->dir, sizeof(c->dir), "%s", override_dir);
		return;
	}
	if (dir_usable("/var/cache/uwprof/tables")) {
		snprintf(c->dir, sizeof(c->dir), "/var/cache/uwprof/tables");
		return;
	}
	if (xdg && xdg[0])
		snprintf(d, sizeof(d), "%s/uwprof/tables", xdg);
	else if (home && home[0])
		snprintf(d, sizeof(d), "%s/.cache/uwprof/tables", home);
	else
		return;
	if (dir_usable(d))
		snprintf(c->dir, sizeof(c->dir), "%s", d);
}

static void cache_hex(const uint8_t *p, size_t n, char *out)
{
	static const char hex[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = hex[p[i] >> 4];
		out[2 * i + 1] = hex[p[i] & 15];
	}
	out[2 * n] = 0;
}

static void cache_name(const struct uwprof_tcache *c, const struct tc_key *k,
		       char *buf, size_t len)
{
	char id[2 * 20 + 1], cfi[2 * 16 + 1];

	cache_hex(k->id, k->idn, id);
	cache_hex(k->cfi, sizeof(k->cfi), cfi);
	/*
	 * The format version is in the name, so uwprof builds of different
	 * versions sharing a directory keep apart instead of replacing each
	 * other's blobs on every miss. The whole key is in the name: an
	 * entry of another key (an older uwprof's, keyed by build-id alone)
	 * is never opened.
	 */
	snprintf(buf, len, "%s/%s-%s-%u-%s.v%u.uwtb", c->dir,
		 k->arch == UWPROF_ARCH_ARM64 ? "arm64" : "x86_64", id,
		 (unsigned int)k->owner, cfi, UWPROF_TABLE_VERSION);
}

static int cache_load(const char *fn, uint16_t arch, const uint8_t *id,
		      size_t idn, struct uwprof_blob *out)
{
	const struct uwprof_table_hdr *h;
	struct stat st;
	void *data = NULL;
	char err[256];
	ssize_t n;
	int fd;

	fd = open(fn, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ENOENT;
	if (fstat(fd, &st) || st.st_size < (off_t)sizeof(*h) ||
	    st.st_size > (1LL << 30) ||
	    posix_memalign(&data, 8, (size_t)st.st_size)) {
		close(fd);
		return -ENOENT;
	}
	n = pread(fd, data, (size_t)st.st_size, 0);
	close(fd);
	h = data;
	if (n != st.st_size ||
	    uwprof_blob_check(data, (size_t)n, err, sizeof(err)) ||
	    h->arch != arch || idn > sizeof(h->build_id) ||
	    h->build_id_size != idn || memcmp(h->build_id, id, idn)) {
		free(data);
		return -ENOENT;
	}
	memset(out, 0, sizeof(*out));
	out->data = data;
	out->size = (size_t)n;
	out->arch = arch;
	out->key_size = (uint8_t)idn;
	memcpy(out->key, id, idn);
	return 0;
}

static void cache_store(const char *fn, const struct uwprof_blob *b)
{
	struct uwprof_afile f;
	size_t off = 0;
	ssize_t n;

	if (uwprof_afile_open(&f, fn, 0644))
		return;
	while (off < b->size) {
		n = write(f.fd, (const char *)b->data + off, b->size - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	/* A cache entry that did not make it whole is simply not there. */
	if (off != b->size)
		uwprof_afile_abort(&f);
	else
		(void)uwprof_afile_commit(&f);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The key of an object just opened; 0, or -ENOENT when it has none. */
static int cache_key(const struct uwprof_elf *e, int fd, uid_t owner,
		     struct tc_key *k)
{
	struct stat st;

	if (!e->build_id_size || e->build_id_size > 20)
		return -ENOENT;
	if (fd >= 0) {
		if (fstat(fd, &st))
			return -ENOENT;
		owner = st.st_uid;
	}
	k->arch = e->arch;
	k->id = e->build_id;
	k->idn = e->build_id_size;
	k->owner = owner;
	uwprof_elf_cfi_hash(e, k->cfi);
	return 0;
}

int uwprof_tcache_get(struct uwprof_tcache *c, const char *name, int fd,
		      const void *image, size_t image_size, uid_t owner,
		      struct uwprof_blob *out)
{
	struct uwprof_table_stats st;
	struct uwprof_elf *e;
	struct tc_key k;
	char fn[4400];
	uint64_t t0;
	int use, ret;

	memset(out, 0, sizeof(*out));
	if (image)
		ret = uwprof_elf_open_mem(image, image_size, name, &e, out->err,
					  sizeof(out->err));
	else
		ret = uwprof_elf_open_fd(fd, name, &e, out->err,
					 sizeof(out->err));
	if (ret)
		return ret;
	use = c->dir[0] && !cache_key(e, image ? -1 : fd, owner, &k);
	if (use) {
		cache_name(c, &k, fn, sizeof(fn));
		if (!cache_load(fn, k.arch, k.id, k.idn, out)) {
			c->hits++;
			uwprof_elf_close(e);
			return 0;
		}
	}
	c->misses++;
	t0 = now_ns();
	ret = uwprof_table_compile_elf(e, !image, out, &st);
	c->compile_ns += now_ns() - t0;
	/*
	 * Stored only when the table came from the object itself (the
	 * hash's bytes) and names the build-id of the key.
	 */
	if (!ret && use && st.source != UWPROF_SRC_DEBUG_FILE &&
	    !out->key_is_hash && out->key_size == k.idn &&
	    !memcmp(out->key, k.id, k.idn) && out->arch == k.arch)
		cache_store(fn, out);
	uwprof_elf_close(e);
	return ret;
}
