// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of the JIT symbol readers and table (tool/jitmap.c), TAP
 * output: perf maps with every kind of line the reader must take or skip
 * (0x prefixes, names with spaces, CRLF, malformed numbers, zero sizes,
 * overlong lines), a file read while it grows with a partial last line, a
 * large file across many buffers checked against the lines written, a
 * jitdump in both byte orders with a record still being written, the
 * ownership checks, and lookups among overlapping symbols.
 *
 * Usage: jitmap-test SCRATCH_DIR
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "jitmap.h"
#include "tap.h"

#define MAX_GOT	300000

struct got {
	uint64_t	start[MAX_GOT];
	uint64_t	size[MAX_GOT];
	char		*name[MAX_GOT];
	size_t		n;
	size_t		stop_after;	/* 0: never stop */
};

static int collect(void *arg, uint64_t start, uint64_t size,
		   const char *name, size_t len)
{
	struct got *g = arg;

	if (g->n < MAX_GOT) {
		g->start[g->n] = start;
		g->size[g->n] = size;
		g->name[g->n] = strndup(name, len);
		g->n++;
	}
	return g->stop_after && g->n >= g->stop_after;
}

static void got_reset(struct got *g)
{
	size_t i;

	for (i = 0; i < g->n; i++)
		free(g->name[i]);
	g->n = 0;
	g->stop_after = 0;
}

static int has(const struct got *g, size_t i, uint64_t start, uint64_t size,
	       const char *name)
{
	return i < g->n && g->start[i] == start && g->size[i] == size &&
	       !strcmp(g->name[i], name);
}

static void put(int fd, const void *p, size_t n)
{
	if (write(fd, p, n) != (ssize_t)n) {
		perror("write");
		exit(2);
	}
}

static void puts_fd(int fd, const char *s)
{
	put(fd, s, strlen(s));
}

static char path_buf[4096];

static const char *scratch(const char *dir, const char *name)
{
	snprintf(path_buf, sizeof(path_buf), "%s/%s", dir, name);
	return path_buf;
}

static void perfmap_lines(const char *dir, struct got *g)
{
	struct uwprof_jit_pos pos = { 0 };
	int fd = open(scratch(dir, "lines.map"),
		      O_RDWR | O_CREAT | O_TRUNC, 0644);
	long n;

	puts_fd(fd, "7f0000001000 40 LazyCompile:~hot1 /tmp/x.js:1\n"
		    "0x7f0000002000 0x10 with_prefix\n"
		    "7F0000003000 8 Upper\r\n"
		    "\n"
		    "garbage\n"
		    "7f0000004000\n"
		    "7f0000004000 10\n"
		    "7f0000004000 10 \n"
		    "7f0000005000 0 zero_size\n"
		    "zz000 10 bad_start\n"
		    "7f0000006000 1g bad_size\n"
		    "ffffffffffffffff0 10 too_big\n"
		    "fffffffffffffff0 20 wraps\n"
		    "7f0000007000  10 two_spaces\n"
		    "7f0000008000 20 last one\n"
		    "7f0000009000 20 partial");
	n = uwprof_jit_perfmap_read(fd, &pos, 0, collect, g);
	ok(n == 4 && g->n == 4, "perf map: 4 good lines of 15 (%ld)", n);
	ok(has(g, 0, 0x7f0000001000, 0x40, "LazyCompile:~hot1 /tmp/x.js:1"),
	   "perf map: name with spaces kept whole");
	ok(has(g, 1, 0x7f0000002000, 0x10, "with_prefix") &&
	   has(g, 2, 0x7f0000003000, 8, "Upper") &&
	   has(g, 3, 0x7f0000008000, 0x20, "last one"),
	   "perf map: 0x prefixes, upper case hex, CRLF");
	ok(pos.bad == 11, "perf map: 11 malformed lines counted (%llu)",
	   (unsigned long long)pos.bad);
	/* The partial line completes: read once, nothing read twice. */
	puts_fd(fd, "_now\n7f000000a000 8 next\n");
	n = uwprof_jit_perfmap_read(fd, &pos, 0, collect, g);
	ok(n == 2 && has(g, 4, 0x7f0000009000, 0x20, "partial_now") &&
	   has(g, 5, 0x7f000000a000, 8, "next"),
	   "perf map: the partial last line is read once it is whole");
	n = uwprof_jit_perfmap_read(fd, &pos, 0, collect, g);
	ok(n == 0 && g->n == 6, "perf map: nothing new, nothing read");
	/* Rewritten by a new writer (truncated): read from the start. */
	if (ftruncate(fd, 0) || lseek(fd, 0, SEEK_SET))
		perror("truncate");
	puts_fd(fd, "7f000000b000 8 rewritten\n");
	n = uwprof_jit_perfmap_read(fd, &pos, 0, collect, g);
	ok(n == 1 && has(g, 6, 0x7f000000b000, 8, "rewritten"),
	   "perf map: a truncated file is read again from its start");
	close(fd);
	got_reset(g);
}

static void perfmap_overlong(const char *dir, struct got *g)
{
	struct uwprof_jit_pos pos = { 0 };
	int fd = open(scratch(dir, "long.map"),
		      O_RDWR | O_CREAT | O_TRUNC, 0644);
	static char big[200000];
	long n;

	memset(big, 'x', sizeof(big));
	puts_fd(fd, "1000 10 before\n2000 10 ");
	/* An overlong name, still being written when first read. */
	put(fd, big, sizeof(big) / 2);
	n = uwprof_jit_perfmap_read(fd, &pos, 0, collect, g);
	ok(n == 1 && has(g, 0, 0x1000, 0x10, "before"),
	   "overlong: the line before it read");
	put(fd, big, sizeof(big) / 2);
	puts_fd(fd, " 3000 10 inside_the_long_line\n4000 10 after\n");
	n = uwprof_jit_perfmap_read(fd, &pos, 0, collect, g);
	ok(n == 1 && g->n == 2 && has(g, 1, 0x4000, 0x10, "after"),
	   "overlong: skipped whole, its tail not taken for a line (%ld)", n);
	ok(pos.bad == 1, "overlong: counted once (%llu)",
	   (unsigned long long)pos.bad);
	close(fd);
	got_reset(g);
}

static void perfmap_large(const char *dir, struct got *g)
{
	struct uwprof_jit_pos pos = { 0 };
	int fd = open(scratch(dir, "large.map"),
		      O_RDWR | O_CREAT | O_TRUNC, 0644);
	FILE *f = fdopen(dup(fd), "w");
	size_t i, wrong = 0, lines = 250000;
	char name[64];
	long n, total = 0;

	for (i = 0; i < lines; i++)
		fprintf(f, "%llx %zx Function:fn_%zu%s\n",
			0x100000000ULL + i * 0x40ULL, (size_t)0x20 + i % 7, i,
			i % 3 ? "" : " /some/long/script/path.js:12:34");
	fclose(f);
	/* Limited reads resume where they stopped. */
	do {
		n = uwprof_jit_perfmap_read(fd, &pos, 1 << 20, collect, g);
		total += n > 0 ? n : 0;
	} while (n > 0);
	for (i = 0; i < g->n && i < lines; i++) {
		snprintf(name, sizeof(name), "Function:fn_%zu%s", i,
			 i % 3 ? "" : " /some/long/script/path.js:12:34");
		wrong += !has(g, i, 0x100000000ULL + i * 0x40ULL,
			      0x20 + i % 7, name);
	}
	ok(n == 0 && total == (long)lines && g->n == lines && !wrong &&
	   !pos.bad, "large: %zu lines in 1 MiB steps, %zu wrong", g->n,
	   wrong);
	got_reset(g);
	/* The emitter can stop the read; the rest comes next time. */
	memset(&pos, 0, sizeof(pos));
	g->stop_after = 10;
	n = uwprof_jit_perfmap_read(fd, &pos, 0, collect, g);
	g->stop_after = 0;
	n = n == 10 ? uwprof_jit_perfmap_read(fd, &pos, 0, collect, g) : -1;
	ok(n == (long)lines - 10 && g->n == lines &&
	   has(g, 10, 0x100000000ULL + 10 * 0x40ULL, 0x20 + 3,
	       "Function:fn_10"),
	   "large: a stop by the emitter resumes at the next line");
	close(fd);
	got_reset(g);
}

/* A jitdump as perf's format has it, in host or swapped byte order. */
static uint32_t s32(int sw, uint32_t v)
{
	return sw ? __builtin_bswap32(v) : v;
}

static uint64_t s64(int sw, uint64_t v)
{
	return sw ? __builtin_bswap64(v) : v;
}

static void dump_load(int fd, int sw, uint64_t addr, uint64_t size,
		      const char *name, size_t code)
{
	uint32_t h32[2];
	uint64_t h64[5];
	uint32_t total = 16 + 40 + (uint32_t)strlen(name) + 1 + (uint32_t)code;
	char *c = calloc(1, code + 1);

	h32[0] = s32(sw, 0);		/* JIT_CODE_LOAD */
	h32[1] = s32(sw, total);
	put(fd, h32, 8);
	h64[0] = s64(sw, 123);		/* timestamp */
	put(fd, h64, 8);
	h32[0] = s32(sw, 77);		/* pid */
	h32[1] = s32(sw, 78);		/* tid */
	put(fd, h32, 8);
	h64[0] = s64(sw, addr);		/* vma */
	h64[1] = s64(sw, addr);
	h64[2] = s64(sw, size);
	h64[3] = s64(sw, 1);		/* code index */
	put(fd, h64, 32);
	put(fd, name, strlen(name) + 1);
	put(fd, c, code);
	free(c);
}

static void dump_test(const char *dir, struct got *g, int sw)
{
	struct uwprof_jit_pos pos = { 0 };
	int fd = open(scratch(dir, "jit-77.dump"),
		      O_RDWR | O_CREAT | O_TRUNC, 0644);
	uint32_t hdr[10] = { 0 };
	uint32_t other[4];
	long n;

	hdr[0] = s32(sw, 0x4A695444);
	hdr[1] = s32(sw, 1);
	hdr[2] = s32(sw, 40);
	hdr[3] = s32(sw, 62);
	hdr[5] = s32(sw, 77);
	put(fd, hdr, 20);	/* a header still being written */
	n = uwprof_jit_dump_read(fd, &pos, 0, collect, g);
	ok(n == 0 && !pos.dump_ok, "jitdump%s: a partial header waits",
	   sw ? " (swapped)" : "");
	put(fd, (char *)hdr + 20, 20);
	dump_load(fd, sw, 0x7e0000001000, 0x80, "js:hot1", 0x80);
	/* JIT_CODE_CLOSE-like unknown record of 16 bytes: skipped */
	other[0] = s32(sw, 3);
	other[1] = s32(sw, 16);
	other[2] = other[3] = 0;
	put(fd, other, 16);
	dump_load(fd, sw, 0x7e0000002000, 0x40, "js:hot2", 5000);
	n = uwprof_jit_dump_read(fd, &pos, 0, collect, g);
	ok(n == 2 && has(g, 0, 0x7e0000001000, 0x80, "js:hot1") &&
	   has(g, 1, 0x7e0000002000, 0x40, "js:hot2"),
	   "jitdump%s: two loads read, the other record skipped (%ld)",
	   sw ? " (swapped)" : "", n);
	/* A load whose code bytes are not all written yet. */
	dump_load(fd, sw, 0x7e0000003000, 0x40, "js:hot3", 1000);
	if (ftruncate(fd, lseek(fd, 0, SEEK_END) - 500))
		perror("ftruncate");
	n = uwprof_jit_dump_read(fd, &pos, 0, collect, g);
	ok(n == 0 && g->n == 2, "jitdump%s: an unfinished record waits",
	   sw ? " (swapped)" : "");
	close(fd);
	got_reset(g);
}

static void dump_bad(const char *dir, struct got *g)
{
	struct uwprof_jit_pos pos = { 0 };
	int fd = open(scratch(dir, "notdump"), O_RDWR | O_CREAT | O_TRUNC,
		      0644);
	long n;

	puts_fd(fd, "7f0000001000 40 this is a perf map, not a jitdump\n");
	n = uwprof_jit_dump_read(fd, &pos, 0, collect, g);
	ok(n == -EINVAL && !g->n, "jitdump: a file without the magic: -EINVAL");
	close(fd);
	ok(uwprof_jit_is_dump(77, "/home/u/.debug/jit/x/jit-77.dump") &&
	   !uwprof_jit_is_dump(77, "/tmp/jit-777.dump") &&
	   !uwprof_jit_is_dump(77, "/tmp/jit-77.dump.old"),
	   "jitdump: recognised by its name jit-PID.dump");
}

static void owner_test(const char *dir)
{
	char path[4200], link[4200];
	struct uwprof_jit_owner me;
	int fd;

	ok(!uwprof_jit_owner_read(getpid(), &me) && me.uid == getuid() &&
	   me.born > time(NULL) - 600 && me.born <= time(NULL),
	   "owner: this process's uid and start time");

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	unlink(path);
	ok(uwprof_jit_perfmap_open(getpid(), &me) == -ENOENT,
	   "open: no perf map: -ENOENT");
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
	puts_fd(fd, "1000 10 mine\n");
	close(fd);
	fd = uwprof_jit_perfmap_open(getpid(), &me);
	ok(fd >= 0, "open: this process's own perf map");
	if (fd >= 0)
		close(fd);
	if (getuid() == 0 && !chown(path, 65534, 65534)) {
		fd = uwprof_jit_perfmap_open(getpid(), &me);
		ok(fd == -EPERM, "open: a perf map of another owner: -EPERM");
		if (fd >= 0)
			close(fd);
	} else {
		/* A non-root run cannot make such a file: say so. */
		printf("# not root: the other-owner case is not run\n");
	}
	unlink(path);
	/* A file an earlier process of this pid left behind. */
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
	puts_fd(fd, "1000 10 stale\n");
	close(fd);
	{
		struct timespec old[2] = { { time(NULL) - 3600, 0 },
					   { time(NULL) - 3600, 0 } };

		utimensat(AT_FDCWD, path, old, 0);
	}
	fd = uwprof_jit_perfmap_open(getpid(), &me);
	ok(fd == -ESTALE, "open: a perf map older than the process: -ESTALE (%d)",
	   fd);
	if (fd >= 0)
		close(fd);
	unlink(path);
	snprintf(link, sizeof(link), "%s/target.map", dir);
	fd = open(link, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	close(fd);
	if (!symlink(link, path)) {
		fd = uwprof_jit_perfmap_open(getpid(), &me);
		ok(fd == -EPERM, "open: a symlink is not followed: -EPERM");
		if (fd >= 0)
			close(fd);
		unlink(path);
	}
}

static void table_test(void)
{
	struct uwprof_jitsyms t = { 0 };
	const struct uwprof_jit_sym *s;
	int bad = 0;

	uwprof_jitsyms_add(&t, 0x1000, 0x100, "old_big", 7);
	uwprof_jitsyms_add(&t, 0x1040, 0x20, "inner", 5);
	uwprof_jitsyms_add(&t, 0x3000, 0x10, "a", 1);
	uwprof_jitsyms_add(&t, 0x3000, 0x10, "a_again", 7);
	uwprof_jitsyms_add(&t, 0x5000, 0, "empty", 5);
	uwprof_jitsyms_add(&t, 0x10, 0x100000, "huge_first_then_replaced", 24);
	uwprof_jitsyms_add(&t, 0x20000, 0x10, "late", 4);
	s = uwprof_jitsyms_find(&t, 0x1050);
	bad += !s || strcmp(s->name, "huge_first_then_replaced");
	/* huge was published after the others: it covers them all */
	ok(!bad, "table: the newest covering symbol wins");
	uwprof_jitsyms_free(&t);

	memset(&t, 0, sizeof(t));
	uwprof_jitsyms_add(&t, 0x10, 0x100000, "huge_old", 8);
	uwprof_jitsyms_add(&t, 0x1000, 0x100, "old_big", 7);
	uwprof_jitsyms_add(&t, 0x1040, 0x20, "inner", 5);
	uwprof_jitsyms_add(&t, 0x3000, 0x10, "a", 1);
	uwprof_jitsyms_add(&t, 0x3000, 0x10, "a_again", 7);
	uwprof_jitsyms_add(&t, 0x5000, 0, "empty", 5);
	s = uwprof_jitsyms_find(&t, 0x1050);
	ok(s && !strcmp(s->name, "inner"), "table: a nested newer symbol");
	s = uwprof_jitsyms_find(&t, 0x1010);
	ok(s && !strcmp(s->name, "old_big"), "table: its outer one around it");
	s = uwprof_jitsyms_find(&t, 0x3008);
	ok(s && !strcmp(s->name, "a_again"), "table: same range, newer wins");
	s = uwprof_jitsyms_find(&t, 0x2000);
	ok(s && !strcmp(s->name, "huge_old"),
	   "table: an old large symbol still covers gaps");
	s = uwprof_jitsyms_find(&t, 0x5000);
	ok(s && !strcmp(s->name, "huge_old"), "table: size 0 ignored");
	ok(!uwprof_jitsyms_find(&t, 0x100010) && !uwprof_jitsyms_find(&t, 0x8),
	   "table: outside every symbol: none");
	uwprof_jitsyms_free(&t);
}

int main(int argc, char **argv)
{
	static struct got g;

	if (argc != 2) {
		fprintf(stderr, "usage: jitmap-test SCRATCH_DIR\n");
		return 2;
	}
	perfmap_lines(argv[1], &g);
	perfmap_overlong(argv[1], &g);
	perfmap_large(argv[1], &g);
	dump_test(argv[1], &g, 0);
	dump_test(argv[1], &g, 1);
	dump_bad(argv[1], &g);
	owner_test(argv[1]);
	table_test();
	return tap_done();
}
