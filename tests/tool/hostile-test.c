// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of what a profiled user can do to the files the root recorder
 * reads (docs/reliability.md, "Hostile files named in /proc/PID/maps"),
 * TAP output. The objects are real ones built here with cc and objcopy;
 * each check runs in a child with a time limit, so a hang or a signal
 * fails the check instead of the test:
 *  - a path mapped as a regular ELF, then swapped for a FIFO, a symlink
 *    (to /dev/zero, a FIFO or another ELF) or another regular file: opened
 *    through /proc/PID/map_files it is still the mapped file; by path
 *    (mapping gone) it is refused at once with one line naming it; the
 *    readers that open a path (elf_file.c, elf_info.c, the compiler) never
 *    block on a FIFO;
 *  - a mapping split (as ld.so's mprotect() of a library's gap splits
 *    it), moved or replaced after maps was read, its path swapped for
 *    another ELF: the mapped file is still opened, through the link of
 *    the mapping the process has now, and another file never is;
 *  - a file truncated while it is read, and one whose section headers
 *    point past its end: errors, never SIGBUS;
 *  - a compressed .debug_frame that inflates to 256 MiB, or says it does
 *    to 4 GiB: refused before it is inflated, the child's peak RSS small;
 *  - a separate debug file next to an object another user owns, planted as
 *    a symlink or a hard link to a file only root may read: refused,
 *    while a genuine one there and a build-id symlink under a root-only
 *    debug directory (as /usr/lib/debug/.build-id) are found.
 *
 * Usage: hostile-test SCRATCH_DIR [LARGE_OBJECT]
 *   LARGE_OBJECT (default: this host's libc) is copied for the truncation
 *   race: the larger the object, the longer each compile reads it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "elf_file.h"
#include "procmaps.h"
#include "table.h"
#include "tap.h"

static char dir[1024];

/* --------------------------------------------------------- children */

/*
 * Runs fn(arg) in a child killed by SIGALRM after 'secs': 0 when it
 * returned 0, 1 when it returned non-zero, -signal when a signal ended it.
 * *rss_kb (may be NULL) gets the child's peak resident size.
 */
static int in_child(int (*fn)(void *), void *arg, unsigned int secs,
		    long *rss_kb)
{
	struct rusage ru;
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return 1;
	if (!pid) {
		alarm(secs);
		int r = fn(arg);

		fflush(stdout);
		_exit(r ? 1 : 0);
	}
	if (wait4(pid, &status, 0, &ru) != pid)
		return 1;
	if (rss_kb)
		*rss_kb = ru.ru_maxrss;
	if (WIFSIGNALED(status)) {
		printf("# child killed by signal %d (%s)\n", WTERMSIG(status),
		       strsignal(WTERMSIG(status)));
		return -WTERMSIG(status);
	}
	return WEXITSTATUS(status) ? 1 : 0;
}

static int run(const char *cmd)
{
	int r = system(cmd);

	if (r)
		printf("# '%s' failed (%d)\n", cmd, r);
	return r;
}

static int copy(const char *from, const char *to)
{
	char cmd[2400];

	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", from, to);
	return run(cmd);
}

/* ------------------------------------------------------- swap checks */

/* An object mapped executable here, as the recorder finds it in maps. */
struct mapped {
	char		path[1100];
	void		*addr;
	size_t		size;
	struct uwprof_pm_entry e;
	char		e_path[1100];
};

static int map_object(const char *src, const char *path, struct mapped *m)
{
	struct uwprof_pm pm;
	struct stat st;
	size_t i;
	int fd;

	memset(m, 0, sizeof(*m));
	snprintf(m->path, sizeof(m->path), "%s", path);
	if (copy(src, path))
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st))
		return -1;
	m->size = (size_t)st.st_size;
	m->addr = mmap(NULL, m->size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m->addr == MAP_FAILED)
		return -1;
	if (uwprof_pm_read(getpid(), &pm))
		return -1;
	for (i = 0; i < pm.n; i++)
		if (pm.v[i].inode == st.st_ino &&
		    pm.v[i].start == (uint64_t)(uintptr_t)m->addr)
			break;
	if (i == pm.n) {
		uwprof_pm_free(&pm);
		printf("# %s: not found executable in /proc/self/maps\n", path);
		return -1;
	}
	m->e = pm.v[i];
	snprintf(m->e_path, sizeof(m->e_path), "%s", pm.v[i].path);
	m->e.path = m->e_path;
	uwprof_pm_free(&pm);
	return 0;
}

static void unmap_object(struct mapped *m)
{
	if (m->addr && m->addr != MAP_FAILED)
		munmap(m->addr, m->size);
	m->addr = NULL;
}

enum swap_kind {
	SWAP_FIFO,		/* a FIFO under the path */
	SWAP_LINK_ZERO,		/* a symlink to /dev/zero */
	SWAP_LINK_FIFO,		/* a symlink to a FIFO */
	SWAP_LINK_ELF,		/* a symlink to another ELF */
	SWAP_OTHER,		/* another regular ELF */
};

static const char *const swap_name[] = {
	"a FIFO", "a symlink to /dev/zero", "a symlink to a FIFO",
	"a symlink to another ELF", "another regular ELF",
};

/* Puts 'kind' where m->path was, atomically (rename). */
static int swap_in(const struct mapped *m, enum swap_kind kind,
		   const char *other)
{
	char tmp[1200], fifo[1200];

	snprintf(tmp, sizeof(tmp), "%s.new", m->path);
	snprintf(fifo, sizeof(fifo), "%s.fifo", m->path);
	unlink(tmp);
	unlink(fifo);
	switch (kind) {
	case SWAP_FIFO:
		if (mkfifo(tmp, 0644))
			return -1;
		break;
	case SWAP_LINK_ZERO:
		if (symlink("/dev/zero", tmp))
			return -1;
		break;
	case SWAP_LINK_FIFO:
		if (mkfifo(fifo, 0644) || symlink(fifo, tmp))
			return -1;
		break;
	case SWAP_LINK_ELF:
		if (symlink(other, tmp))
			return -1;
		break;
	case SWAP_OTHER:
		if (copy(other, tmp))
			return -1;
		break;
	}
	return rename(tmp, m->path);
}

struct swap_case {
	struct mapped	*m;
	int		mapped;		/* map_files usable */
};

/*
 * The recorder's open of a swapped object: with the mapping there, the
 * mapped inode; without, a refusal naming the path; at once either way.
 */
static int swap_open(void *arg)
{
	struct swap_case *c = arg;
	char name[1200], err[1400];
	struct stat st;
	int fd;

	err[0] = 0;
	fd = uwprof_pm_object_open(getpid(), &c->m->e, name, sizeof(name), &st,
				   err, sizeof(err));
	printf("# opened %s: %d %s\n", name, fd < 0 ? fd : 0, err);
	if (c->mapped)
		return !(fd >= 0 && !fstat(fd, &st) && S_ISREG(st.st_mode) &&
			 st.st_ino == c->m->e.inode);
	if (fd >= 0) {
		fstat(fd, &st);
		printf("# not refused: got inode %llu, the mapping's is %llu\n",
		       (unsigned long long)st.st_ino,
		       (unsigned long long)c->m->e.inode);
		return 1;
	}
	return !strstr(err, c->m->e.path);
}

/* The path readers, given the swapped path itself: an error, at once. */
static int swap_readers(void *arg)
{
	const struct mapped *m = arg;
	struct uwprof_elf_info info;
	struct uwprof_elf *e = NULL;
	struct uwprof_blob b;
	char err[1400];
	int r1, r2, r3;

	r1 = uwprof_elf_info_file(m->path, &info);
	printf("# uwprof_elf_info_file: %d\n", r1);
	r2 = uwprof_elf_open(m->path, &e, err, sizeof(err));
	printf("# uwprof_elf_open: %d %s\n", r2, r2 ? err : "");
	uwprof_elf_close(e);
	r3 = uwprof_table_compile(m->path, &b, NULL);
	printf("# uwprof_table_compile: %d %s\n", r3, r3 ? b.err : "");
	uwprof_blob_free(&b);
	return !(r1 < 0 && r2 < 0 && r3 < 0);
}

static void swaps(const char *lib, const char *other)
{
	enum swap_kind k;
	struct swap_case c;
	struct mapped m;
	char path[1100];
	int r;

	for (k = SWAP_FIFO; k <= SWAP_OTHER; k++) {
		snprintf(path, sizeof(path), "%s/victim%d.so", dir, (int)k);
		if (map_object(lib, path, &m) || swap_in(&m, k, other)) {
			ok(0, "swap to %s: set up", swap_name[k]);
			unmap_object(&m);
			continue;
		}
		c.m = &m;
		c.mapped = 1;
		if (geteuid()) {
			ok(1, "swap to %s: through map_files # SKIP not root",
			   swap_name[k]);
		} else {
			r = in_child(swap_open, &c, 5, NULL);
			ok(r == 0, "swap to %s: through map_files, the mapped file is opened (%d)",
			   swap_name[k], r);
		}
		unmap_object(&m);
		c.mapped = 0;
		r = in_child(swap_open, &c, 5, NULL);
		ok(r == 0, "swap to %s: by path, refused at once, the path named (%d)",
		   swap_name[k], r);
		if (k == SWAP_FIFO || k == SWAP_LINK_ZERO || k == SWAP_LINK_FIFO) {
			r = in_child(swap_readers, &m, 5, NULL);
			ok(r == 0, "swap to %s: info, ELF open and compile by path return errors at once (%d)",
			   swap_name[k], r);
		}
	}
}

/* ------------------------------------------------------ remap checks */

enum remap_kind {
	REMAP_SPLIT,		/* the tail mprotect()ed: two mappings */
	REMAP_MOVE,		/* mremap()ed elsewhere whole */
	REMAP_OTHER,		/* another file mapped over the same range */
	REMAP_GONE,		/* split, then unmapped */
};

static const char *const remap_name[] = {
	"split", "moved", "replaced by another file", "split, then unmapped",
};

struct remap_case {
	struct mapped	*m;
	enum remap_kind	kind;
	const char	*other;
};

/*
 * What ld.so does between the recorder's read of maps and its open (the
 * whole span mapped executable, then a gap mprotect()ed and data mapped
 * over the rest), and what a hostile process may do, done to a mapping
 * read from maps, with the path swapped for another ELF: the mapped file
 * is opened through the link of the mapping the process has now, and
 * never the one at the path; with no mapping of it left, refused.
 */
static int remap_open(void *arg)
{
	struct remap_case *c = arg;
	struct mapped *m = c->m;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), size;
	char name[1200], err[1400];
	struct stat st;
	void *to;
	int fd, ofd;

	size = (m->size + pg - 1) & ~(pg - 1);
	switch (c->kind) {
	case REMAP_SPLIT:
	case REMAP_GONE:
		if (size < 2 * pg ||
		    mprotect((char *)m->addr + pg, size - pg, PROT_READ))
			return 1;
		if (c->kind == REMAP_GONE && munmap(m->addr, size))
			return 1;
		break;
	case REMAP_MOVE:
		to = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
		if (to == MAP_FAILED ||
		    mremap(m->addr, size, size, MREMAP_MAYMOVE | MREMAP_FIXED,
			   to) != to)
			return 1;
		break;
	case REMAP_OTHER:
		ofd = open(c->other, O_RDONLY | O_CLOEXEC);
		if (ofd < 0 ||
		    mmap(m->addr, size, PROT_READ | PROT_EXEC,
			 MAP_PRIVATE | MAP_FIXED, ofd, 0) != m->addr)
			return 1;
		close(ofd);
		break;
	}
	err[0] = 0;
	fd = uwprof_pm_object_open(getpid(), &m->e, name, sizeof(name), &st,
				   err, sizeof(err));
	printf("# opened %s: %d %s\n", name, fd < 0 ? fd : 0, err);
	if (c->kind == REMAP_SPLIT || c->kind == REMAP_MOVE)
		return !(fd >= 0 && !fstat(fd, &st) && S_ISREG(st.st_mode) &&
			 st.st_ino == m->e.inode && strstr(name, "/map_files/"));
	if (fd >= 0) {
		fstat(fd, &st);
		printf("# not refused: got inode %llu, the mapping's was %llu\n",
		       (unsigned long long)st.st_ino,
		       (unsigned long long)m->e.inode);
		return 1;
	}
	return !strstr(err, m->e.path);
}

static void remaps(const char *lib, const char *other)
{
	enum remap_kind k;
	struct remap_case c;
	struct mapped m;
	char path[1100];
	int r;

	for (k = REMAP_SPLIT; k <= REMAP_GONE; k++) {
		if (geteuid()) {
			ok(1, "mapping %s after maps was read # SKIP not root (map_files)",
			   remap_name[k]);
			continue;
		}
		snprintf(path, sizeof(path), "%s/remap%d.so", dir, (int)k);
		if (map_object(lib, path, &m) || swap_in(&m, SWAP_OTHER, other)) {
			ok(0, "mapping %s after maps was read: set up",
			   remap_name[k]);
			unmap_object(&m);
			continue;
		}
		c.m = &m;
		c.kind = k;
		c.other = other;
		r = in_child(remap_open, &c, 5, NULL);
		ok(r == 0, "mapping %s after maps was read, the path swapped: %s (%d)",
		   remap_name[k],
		   k == REMAP_SPLIT || k == REMAP_MOVE ?
		   "the mapped file opened through its current mapping" :
		   "refused, the path named", r);
		unmap_object(&m);
	}
}

/* ------------------------------------------------------- truncation */

/*
 * Open, then truncate: what the compiler reads after the open (the CFI
 * and PLT sections, the whole file for a hash, bytes at the end) is an
 * error or the bytes read at the open, never SIGBUS.
 */
static int trunc_after_open(void *arg)
{
	const char *path = arg;
	struct uwprof_elf *e;
	char err[1400];
	uint8_t h[20], tail[16];
	unsigned int sum = 0;
	size_t i;
	int j, r;

	if (uwprof_elf_open(path, &e, err, sizeof(err))) {
		printf("# %s\n", err);
		return 1;
	}
	if (truncate(path, 64))
		return 1;
	for (i = 0; i < e->eh_frame.size; i++)
		sum += e->eh_frame.data[i];
	for (i = 0; i < e->debug_frame.size; i++)
		sum += e->debug_frame.data[i];
	for (j = 0; j < e->nr_plt; j++)
		for (i = 0; i < e->plt[j].size; i++)
			sum += e->plt[j].data[i];
	printf("# sections read after the truncation (sum %u)\n", sum);
	uwprof_elf_hash(e, h);
	r = uwprof_elf_pread(e, tail, sizeof(tail), e->image_size - sizeof(tail));
	printf("# bytes at the old end: %d\n", r);
	uwprof_elf_close(e);
	return r != -EIO;
}

/*
 * .eh_frame's section header made to point past the end of the file,
 * written in place (libelf would lay the file out again).
 */
static int sec_past_eof(const char *path)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Ehdr eh;
	GElf_Shdr sh;
	struct stat st;
	uint64_t at = 0, off;
	Elf *elf;
	int fd, done = -1;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st))
		return -1;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || !gelf_getehdr(elf, &eh) || elf_getshdrstrndx(elf, &shstrndx))
		goto out;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			goto out;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && !strcmp(name, ".eh_frame")) {
			at = eh.e_shoff + elf_ndxscn(scn) * eh.e_shentsize +
			     offsetof(Elf64_Shdr, sh_offset);
			break;
		}
	}
	off = (uint64_t)st.st_size + 4096;
	if (at && pwrite(fd, &off, sizeof(off), (off_t)at) == sizeof(off))
		done = 0;
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return done;
}

static int compile_fails(void *arg)
{
	struct uwprof_blob b;
	int r;

	r = uwprof_table_compile(arg, &b, NULL);
	printf("# uwprof_table_compile: %d %s\n", r, r ? b.err : "");
	uwprof_blob_free(&b);
	return r >= 0;
}

/* Compiles over and over for 3 s; any error is fine, a signal is not. */
static int compile_loop(void *arg)
{
	time_t end = time(NULL) + 3;
	struct uwprof_blob b;
	int n = 0, errs = 0;

	while (time(NULL) < end) {
		if (uwprof_table_compile(arg, &b, NULL))
			errs++;
		uwprof_blob_free(&b);
		n++;
	}
	printf("# %d compiles, %d errors\n", n, errs);
	fflush(stdout);
	return n == 0;
}

/* The child compiles while this process cuts the file and puts it back. */
static int trunc_race(const char *path)
{
	struct rusage ru;
	struct stat st;
	int status, fd;
	void *img;
	pid_t pid;

	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st))
		return 1;
	img = malloc((size_t)st.st_size);
	if (!img || pread(fd, img, (size_t)st.st_size, 0) != st.st_size)
		return 1;
	fflush(stdout);
	pid = fork();
	if (!pid) {
		alarm(20);
		_exit(compile_loop((void *)path));
	}
	while (waitpid(pid, &status, WNOHANG) == 0) {
		if (ftruncate(fd, 4096) ||
		    pwrite(fd, (char *)img + 4096, (size_t)st.st_size - 4096,
			   4096) != st.st_size - 4096)
			break;
		usleep(500);
	}
	wait4(pid, &status, 0, &ru);
	free(img);
	close(fd);
	if (WIFSIGNALED(status)) {
		printf("# child killed by signal %d (%s)\n", WTERMSIG(status),
		       strsignal(WTERMSIG(status)));
		return -WTERMSIG(status);
	}
	return WEXITSTATUS(status);
}

static void truncation(const char *lib, const char *large)
{
	char path[1100];
	int r;

	snprintf(path, sizeof(path), "%s/trunc-open.so", dir);
	r = copy(lib, path) ? 1 : in_child(trunc_after_open, path, 10, NULL);
	ok(r == 0, "truncated after the open: sections read, later reads -EIO, no SIGBUS (%d)", r);

	snprintf(path, sizeof(path), "%s/trunc-shdr.so", dir);
	r = (copy(lib, path) || sec_past_eof(path)) ? 1 :
	    in_child(compile_fails, path, 10, NULL);
	ok(r == 0, ".eh_frame's header pointing past the end of the file: an error (%d)", r);

	snprintf(path, sizeof(path), "%s/trunc-race.so", dir);
	r = copy(large, path) ? 1 : trunc_race(path);
	ok(r == 0, "truncated and restored while compiled over and over for 3 s: no signal (%d)", r);
}

/* ------------------------------------------------------------ bombs */

/* Chdr + a zlib stream of 'zeros' zero bytes, declaring 'declared'. */
static void *bomb_bytes(uint64_t zeros, uint64_t declared, size_t *len)
{
	static uint8_t in[1 << 20];
	size_t cap = (size_t)(zeros / 512) + 4096, used;
	Elf64_Chdr ch = { .ch_type = ELFCOMPRESS_ZLIB, .ch_size = declared,
			  .ch_addralign = 1 };
	uint64_t left = zeros;
	uint8_t *out;
	z_stream z;

	out = malloc(cap);
	if (!out)
		return NULL;
	memcpy(out, &ch, sizeof(ch));
	memset(&z, 0, sizeof(z));
	if (deflateInit(&z, 9) != Z_OK) {
		free(out);
		return NULL;
	}
	z.next_out = out + sizeof(ch);
	z.avail_out = (uInt)(cap - sizeof(ch));
	do {
		uInt n = left < sizeof(in) ? (uInt)left : sizeof(in);

		z.next_in = in;
		z.avail_in = n;
		left -= n;
		if (deflate(&z, left ? Z_NO_FLUSH : Z_FINISH) == Z_STREAM_ERROR ||
		    !z.avail_out) {
			deflateEnd(&z);
			free(out);
			return NULL;
		}
	} while (left);
	used = cap - z.avail_out;
	deflateEnd(&z);
	*len = used;
	return out;
}

/* Replaces the compressed .debug_frame of 'path' with 'buf'. */
static int put_debug_frame(const char *path, void *buf, size_t len)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;
	Elf_Data *d;
	Elf *elf;
	int fd, done = -1;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -1;
	elf = elf_begin(fd, ELF_C_RDWR, NULL);
	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		goto out;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			goto out;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || strcmp(name, ".debug_frame"))
			continue;
		if (!(sh.sh_flags & SHF_COMPRESSED))
			break;
		d = elf_getdata(scn, NULL);
		if (!d)
			break;
		d->d_buf = buf;
		d->d_size = len;
		d->d_type = ELF_T_BYTE;
		elf_flagdata(d, ELF_C_SET, ELF_F_DIRTY);
		done = elf_update(elf, ELF_C_WRITE) < 0 ? -1 : 0;
		break;
	}
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return done;
}

struct bomb {
	const char	*path;
	int		want;		/* the error expected, 0: any */
};

static int bomb_compile(void *arg)
{
	const struct bomb *b = arg;
	struct uwprof_blob out;
	int r;

	r = uwprof_table_compile(b->path, &out, NULL);
	printf("# uwprof_table_compile: %d %s\n", r, r ? out.err : "");
	uwprof_blob_free(&out);
	return !(r < 0 && (!b->want || r == b->want));
}

/*
 * A source of many small functions: enough .debug_frame that objcopy
 * finds it worth compressing.
 */
static int many_functions(char *c, size_t n)
{
	FILE *f;
	int i;

	snprintf(c, n, "%s/many.c", dir);
	f = fopen(c, "w");
	if (!f)
		return -1;
	for (i = 0; i < 400; i++)
		fprintf(f, "int f%d(int *p) { return p[%d] * %d + f%d(p + 1); }\n",
			i, i, i + 3, i ? i - 1 : 0);
	return fclose(f);
}

static void bombs(void)
{
	static const uint64_t zeros[2] = { 256ULL << 20, 4096 };
	static const uint64_t declared[2] = { 256ULL << 20, 4ULL << 30 };
	char base[1100], cmd[5000], path[1100], src_c[1100];
	struct bomb b;
	size_t len;
	long rss;
	void *buf;
	int i, r;

	if (many_functions(src_c, sizeof(src_c))) {
		ok(0, "decompression bombs: source written");
		return;
	}
	snprintf(base, sizeof(base), "%s/bomb-base.so", dir);
	snprintf(cmd, sizeof(cmd),
		 "cc -O2 -g -shared -fPIC -fno-asynchronous-unwind-tables -o %s.plain %s && "
		 "objcopy --compress-debug-sections=zlib %s.plain %s",
		 base, src_c, base, base);
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/bomb%d.so", dir, i);
		buf = NULL;
		if (run(cmd) || copy(base, path) ||
		    !(buf = bomb_bytes(zeros[i], declared[i], &len)) ||
		    put_debug_frame(path, buf, len)) {
			ok(0, "decompression bomb %d: built", i);
			free(buf);
			continue;
		}
		free(buf);
		printf("# %s: %zu bytes of zlib declaring %llu\n", path, len,
		       (unsigned long long)declared[i]);
		b.path = path;
		b.want = -EFBIG;
		rss = 0;
		r = in_child(bomb_compile, &b, 30, &rss);
		if (!i)
			ok(r == 0 && rss < 64 * 1024,
			   "a .debug_frame inflating to 256 MiB from %zu bytes: refused over the limit, peak RSS %ld KiB < 64 MiB (%d)",
			   len, rss, r);
		else
			ok(r == 0 && rss < 64 * 1024,
			   "a .debug_frame declaring 4 GiB: refused over the limit before allocating, peak RSS %ld KiB (%d)",
			   rss, r);
	}
}

/* ---------------------------------------------------- debug files */

#define DBG_USER	65534	/* the profiled user: nobody */

/* The candidate find_debug offered and this accepted: its inode. */
static int dbg_accept(const struct uwprof_elf *e, const char *cand, int fd,
		      struct uwprof_elf **out)
{
	struct stat st;

	(void)e;
	if (fstat(fd, &st))
		return -ENOENT;
	printf("# offered %s (inode %llu)\n", cand, (unsigned long long)st.st_ino);
	*out = (struct uwprof_elf *)(uintptr_t)st.st_ino;
	return 0;
}

/* The inode of the debug file found for 'obj', 0 for none. */
static unsigned long long dbg_found(const char *obj)
{
	struct uwprof_elf *e, *found = NULL;
	char err[512];

	if (uwprof_elf_open(obj, &e, err, sizeof(err))) {
		printf("# %s\n", err);
		return 0;
	}
	if (uwprof_elf_find_debug(e, dbg_accept, &found))
		found = NULL;
	uwprof_elf_close(e);
	return (unsigned long long)(uintptr_t)found;
}

static unsigned long long ino_of(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 1 : (unsigned long long)st.st_ino;
}

/* Whether every directory from / down to 'd' is root's and not g/o-writable. */
static int root_only_dir(const char *d)
{
	char buf[2100], *p;
	struct stat st;

	snprintf(buf, sizeof(buf), "%s/", d);
	for (p = buf + 1; (p = strchr(p, '/')); p++) {
		*p = 0;
		if (stat(buf, &st) || st.st_uid || (st.st_mode & 022))
			return 0;
		*p = '/';
	}
	return 1;
}

/*
 * A user (nobody) owns a directory with an object whose .gnu_debuglink
 * names x.debug, and plants x.debug as a symlink, then a hard link, to an
 * ELF only root may read (0600 in a 0700 directory): root must not open
 * it. A genuine x.debug, and a build-id symlink in a debug directory only
 * root can write, are found.
 */
static void debug_build_id(const char *dbgdir, const char *src);

static void debug_files(void)
{
	char src[1100], u[1100], obj[1200], secret[1100], dbgdir[1100];
	char lnk[1200], real[1300], full[1100];
	static char cmd[32768];
	unsigned long long got;
	FILE *f;

	snprintf(u, sizeof(u), "%.1000s/user", dir);
	snprintf(secret, sizeof(secret), "%.1000s/rootonly/secret.so", dir);
	snprintf(dbgdir, sizeof(dbgdir), "%.1000s/debugroot", dir);
	snprintf(src, sizeof(src), "%.1000s/dbg.c", dir);
	snprintf(full, sizeof(full), "%.1000s/dbg-full.so", dir);
	snprintf(obj, sizeof(obj), "%.1100s/obj.so", u);
	if (geteuid()) {
		ok(1, "# SKIP debug files: not root (the test chowns to uid %d)",
		   DBG_USER);
		return;
	}
	f = fopen(src, "w");
	if (!f || fputs("int h(int x) { return x - 3; }\n", f) < 0 || fclose(f))
		return ok(0, "debug files: source written");
	/* No build-id: only the debug link finds its debug file. */
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p %s %s/rootonly %s/usr && chmod 0700 %s/rootonly && "
		 "cc -O2 -g -shared -fPIC -Wl,--build-id=none -o %s %s && "
		 "cp %s %s && chmod 0600 %s && "
		 "objcopy --only-keep-debug %s %s/x.debug && "
		 "objcopy --strip-debug --add-gnu-debuglink=%s/x.debug %s %s && "
		 "chown -R %d:%d %s",
		 u, dir, dbgdir, dir, full, src, full, secret, secret, full, u,
		 u, full, obj, DBG_USER, DBG_USER, u);
	if (run(cmd))
		return ok(0, "debug files: objects built");
	setenv("UWPROF_DEBUG_DIR", dbgdir, 1);
	snprintf(lnk, sizeof(lnk), "%.1100s/x.debug", u);
	snprintf(real, sizeof(real), "%.1100s/x.debug.genuine", u);
	if (rename(lnk, real) || symlink(secret, lnk))
		return ok(0, "debug files: symlink planted");
	got = dbg_found(obj);
	ok(got == 0,
	   "debug files: x.debug next to a user's object, a symlink to a root-only ELF, is refused (%s)",
	   got == ino_of(secret) ? "the root-only file was opened" :
	   got ? "something else was opened" : "nothing opened");
	unlink(lnk);
	if (link(secret, lnk))
		return ok(0, "debug files: hard link planted");
	got = dbg_found(obj);
	ok(got == 0,
	   "debug files: x.debug a hard link to the root-only ELF (0600) is refused (%s)",
	   got == ino_of(secret) ? "the root-only file was opened" :
	   got ? "something else was opened" : "nothing opened");
	unlink(lnk);
	if (rename(real, lnk))
		return ok(0, "debug files: genuine debug file put back");
	got = dbg_found(obj);
	ok(got && got == ino_of(lnk),
	   "debug files: a genuine x.debug (the user's) next to the object is found");
	debug_build_id(dbgdir, src);
	unsetenv("UWPROF_DEBUG_DIR");
}

/* The build-id route: a symlink under a debug directory only root writes. */
static void debug_build_id(const char *dbgdir, const char *src)
{
	char obj[1100], target[1200], link[1300];
	static char cmd[32768];
	struct uwprof_elf *e;
	unsigned long long got;
	size_t i, n;

	if (!root_only_dir(dbgdir)) {
		ok(1, "# SKIP debug files: %s is not in directories only root may write",
		   dbgdir);
		return;
	}
	snprintf(obj, sizeof(obj), "%.1000s/user/bid.so", dir);
	snprintf(target, sizeof(target), "%.1100s/usr/bid.debug", dbgdir);
	snprintf(cmd, sizeof(cmd),
		 "cc -O2 -g -shared -fPIC -Wl,--build-id -o %s.full %s && "
		 "objcopy --only-keep-debug %s.full %s && objcopy --strip-debug %s.full %s && "
		 "chown %d:%d %s",
		 obj, src, obj, target, obj, obj, DBG_USER, DBG_USER, obj);
	if (run(cmd) || uwprof_elf_open(obj, &e, cmd, sizeof(cmd)) ||
	    e->build_id_size < 2)
		return ok(0, "debug files: object with a build-id built");
	n = (size_t)snprintf(link, sizeof(link), "%.1100s/.build-id/%02x", dbgdir,
			     e->build_id[0]);
	mkdir(link, 0755);
	snprintf(cmd, sizeof(cmd), "%.1100s/.build-id", dbgdir);
	mkdir(cmd, 0755);
	mkdir(link, 0755);
	n += (size_t)snprintf(link + n, sizeof(link) - n, "/");
	for (i = 1; i < e->build_id_size; i++)
		n += (size_t)snprintf(link + n, sizeof(link) - n, "%02x",
				      e->build_id[i]);
	snprintf(link + n, sizeof(link) - n, ".debug");
	uwprof_elf_close(e);
	unlink(link);
	if (symlink("../../usr/bid.debug", link))
		return ok(0, "debug files: build-id link made");
	got = dbg_found(obj);
	ok(got && got == ino_of(target),
	   "debug files: a build-id symlink under a root-only debug directory is followed");
}

/* ------------------------------------------------------------- main */

static int build(const char *name, const char *src, char *so, size_t n)
{
	char c[1100], cmd[2400];
	FILE *f;

	snprintf(c, sizeof(c), "%s/%s.c", dir, name);
	snprintf(so, n, "%s/%s.so", dir, name);
	f = fopen(c, "w");
	if (!f || fputs(src, f) < 0 || fclose(f))
		return -1;
	snprintf(cmd, sizeof(cmd), "cc -O2 -shared -fPIC -o %s %s", so, c);
	return run(cmd);
}

int main(int argc, char **argv)
{
	const char *large = argc > 2 ? argv[2] : NULL;
	char lib[1100], other[1100], abs[PATH_MAX];

	if (argc < 2) {
		fprintf(stderr, "usage: hostile-test SCRATCH_DIR [LARGE_OBJECT]\n");
		return 2;
	}
	/* Absolute: symlinks made here point into it. */
	if (!realpath(argv[1], abs)) {
		perror(argv[1]);
		return 2;
	}
	snprintf(dir, sizeof(dir), "%.1000s", abs);
	if (!large)
		large = access("/lib/x86_64-linux-gnu/libc.so.6", R_OK) ?
			"/lib/aarch64-linux-gnu/libc.so.6" :
			"/lib/x86_64-linux-gnu/libc.so.6";
	if (build("lib", "int f(int x) { return x + 1; }\n", lib, sizeof(lib)) ||
	    build("other", "int g(int x) { return x * 7; }\n", other,
		  sizeof(other))) {
		printf("1..0 # SKIP no C compiler to build the objects with\n");
		return 0;
	}
	swaps(lib, other);
	remaps(lib, other);
	truncation(lib, large);
	bombs();
	debug_files();
	return tap_done();
}
