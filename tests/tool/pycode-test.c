// SPDX-License-Identifier: GPL-2.0
/*
 * Host test of pycode.c (TAP): code objects read out of a live Debian
 * /usr/bin/python3.11 (running tests/tool/pycode-target.py) must give
 * the qualified name, file name, first line and, for every code unit,
 * the line CPython itself gives (frame.f_lineno, code.co_lines()); a
 * wrong fingerprint must give -ESTALE. Then hostile memory: fake code
 * objects built in this program before it forks a child whose memory the
 * reader then reads (the same addresses), and random bytes, must give
 * errors and never crash (the check target builds this with sanitizers).
 *
 *	pycode-test TARGET.py
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pycode.h"
#include "tap.h"

#define PYTHON		"/usr/bin/python3.11"
#define MAX_FRAMES	32

struct frame {
	uint64_t	addr;
	int		lasti, lineno, firstlineno;
	uint32_t	size;
	unsigned long long qual_addr, file_addr;
	char		qualname[256];
	char		filename[512];
	char		*lines;		/* "START:END:LINE ..." of its code */
};

static struct frame frames[MAX_FRAMES];
static int nr_frames;

/* The lines record of 'addr' into every frame of that code object. */
static void lines_set(uint64_t addr, const char *ranges)
{
	int i;

	for (i = 0; i < nr_frames; i++)
		if (frames[i].addr == addr && !frames[i].lines)
			frames[i].lines = strdup(ranges);
}

/* Reads the target's output up to "ready"; 0 or -1. */
static int target_read(FILE *f)
{
	char buf[8192], *tab;
	unsigned long long addr;
	struct frame *fr;

	while (fgets(buf, sizeof(buf), f)) {
		buf[strcspn(buf, "\n")] = 0;
		if (!strcmp(buf, "ready"))
			return 0;
		if (!strncmp(buf, "lines\t", 6) &&
		    sscanf(buf + 6, "%llu", &addr) == 1) {
			tab = strchr(buf + 6, '\t');
			lines_set(addr, tab ? tab + 1 : "");
			continue;
		}
		if (nr_frames == MAX_FRAMES)
			return -1;
		fr = &frames[nr_frames];
		if (sscanf(buf, "frame\t%llu\t%d\t%d\t%u\t%d\t%llu\t%llu\t%255[^\t]\t%511[^\n]",
			   &addr, &fr->lasti, &fr->lineno, &fr->size,
			   &fr->firstlineno, &fr->qual_addr, &fr->file_addr,
			   fr->qualname, fr->filename) != 9)
			return -1;
		fr->addr = addr;
		nr_frames++;
	}
	return -1;
}

/* Every code unit of every co_lines() range has that range's line. */
static int lines_match(const struct uwprof_pycode *c, const char *ranges,
		       char *why, size_t whylen)
{
	int start, end, line, n, i, got, count = 0;
	const char *p = ranges;

	while (sscanf(p, "%d:%d:%d%n", &start, &end, &line, &n) == 3) {
		for (i = start; i < end; i++) {
			got = uwprof_pycode_line(c->linetable, c->linetable_len,
						 c->firstlineno, i);
			if (got != line) {
				snprintf(why, whylen, "unit %d: line %d, CPython %d",
					 i, got, line);
				return 0;
			}
		}
		count++;
		p += n;
		while (*p == ' ')
			p++;
	}
	snprintf(why, whylen, "%d ranges", count);
	return count > 0;
}

static void check_frame(struct uwprof_pymem *m, const struct uwprof_py_layout *l,
			const struct frame *fr)
{
	struct uwprof_pycode c;
	char why[128];
	int err, line;

	err = uwprof_pycode_read(m, l, fr->addr,
				 UWPROF_PY_FINGERPRINT(fr->size, fr->firstlineno,
						       fr->qual_addr, fr->file_addr),
				 &c);
	ok(!err, "%s: read (%d)", fr->qualname, err);
	if (err)
		return;
	ok(!strcmp(c.qualname, fr->qualname) && !strcmp(c.filename, fr->filename) &&
	   c.firstlineno == fr->firstlineno && c.size == fr->size,
	   "%s: qualname, filename, firstlineno %d, size %u as CPython says "
	   "(read '%s' '%s' %d %u)", fr->qualname, fr->firstlineno, fr->size,
	   c.qualname, c.filename, c.firstlineno, c.size);
	line = uwprof_pycode_line(c.linetable, c.linetable_len, c.firstlineno,
				  fr->lasti);
	ok(line == fr->lineno, "%s: lasti %d is line %d as f_lineno (got %d)",
	   fr->qualname, fr->lasti, fr->lineno, line);
	ok(uwprof_pycode_line(c.linetable, c.linetable_len, c.firstlineno, -1) ==
	   fr->firstlineno, "%s: lasti -1 is co_firstlineno", fr->qualname);
	ok(fr->lines && lines_match(&c, fr->lines, why, sizeof(why)),
	   "%s: every code unit's line as co_lines() (%s)", fr->qualname,
	   fr->lines ? why : "no lines");
	uwprof_pycode_free(&c);
	err = uwprof_pycode_read(m, l, fr->addr,
				 UWPROF_PY_FINGERPRINT(fr->size + 1, fr->firstlineno,
						       fr->qual_addr, fr->file_addr),
				 &c);
	ok(err == -ESTALE, "%s: another fingerprint is unknown (%d)",
	   fr->qualname, err);
}

static void live_python(const char *script)
{
	struct uwprof_py_layout l;
	struct uwprof_pymem m;
	int pfd[2], i, status, err, want_method = 0, want_utf8 = 0;
	int want_lambda = 0;
	FILE *f;
	pid_t pid;

	if (access(PYTHON, X_OK)) {
		printf("ok %d - live python # SKIP %s not installed\n",
		       ++tap_tests, PYTHON);
		return;
	}
	if (pipe(pfd))
		return ok(0, "pipe: %s", strerror(errno));
	pid = fork();
	if (!pid) {
		dup2(pfd[1], 1);
		close(pfd[0]);
		close(pfd[1]);
		execl(PYTHON, PYTHON, "-I", script, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	f = fdopen(pfd[0], "r");
	err = pid > 0 && f ? target_read(f) : -1;
	ok(!err && nr_frames >= 6, "%s ran %s and told of %d frames", PYTHON,
	   script, nr_frames);
	ok(!uwprof_py_layout_of(0x030b, &l), "the 3.11 layout");
	if (pid > 0 && nr_frames && !uwprof_pymem_open(&m, pid)) {
		for (i = 0; i < nr_frames; i++) {
			check_frame(&m, &l, &frames[i]);
			want_method |= !strcmp(frames[i].qualname, "Widget.method");
			want_utf8 |= !strcmp(frames[i].qualname, "größe_ñ");
			want_lambda |= !!strstr(frames[i].qualname, "<lambda>");
		}
		ok(want_method && want_utf8 && want_lambda,
		   "the frames include a method, a non-ASCII name, a lambda");
		uwprof_pymem_close(&m);
	} else {
		ok(0, "open the memory of %d", (int)pid);
	}
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	if (f)
		fclose(f);
	for (i = 0; i < nr_frames; i++)
		free(frames[i].lines);
}

/* ---- Hostile memory: fake objects laid out by the 3.11 layout. ---- */

struct fake {
	uint8_t		code[256];
	uint8_t		name[128];	/* compact ASCII str */
	uint8_t		file[128];	/* compact UCS-2 str */
	uint8_t		table[64];	/* bytes */
	uint8_t		*page_end;	/* a str head at the end of a mapping */
	uint8_t		random[8192];
};

static struct fake *fk;
static struct uwprof_py_layout L;

static void put64(uint8_t *p, uint32_t off, uint64_t v)
{
	memcpy(p + off, &v, 8);
}

static void put32(uint8_t *p, uint32_t off, uint32_t v)
{
	memcpy(p + off, &v, 4);
}

/* The code type the fake objects have (the process's PyCode_Type). */
#define FAKE_CODE_TYPE	0x5a5a5a5a5a50ULL

/* A well-formed code object "ok" in "f\u00e9.py" of size 10, line 5. */
static void fake_good(void)
{
	static const uint8_t table[] = { 0x80 | (13 << 3) | 1, 0, 0x80 | (10 << 3) | 7 };

	memset(fk->code, 0, sizeof(fk->code) + sizeof(fk->name) +
	       sizeof(fk->file) + sizeof(fk->table));
	put64(fk->code, 0, 1);
	put64(fk->code, 8, FAKE_CODE_TYPE);
	put64(fk->code, L.co_size, 10);
	put32(fk->code, L.co_firstlineno, 5);
	put32(fk->code, L.co_firsttraceable, 1);
	put64(fk->code, L.co_qualname, (uintptr_t)fk->name);
	put64(fk->code, L.co_filename, (uintptr_t)fk->file);
	put64(fk->code, L.co_linetable, (uintptr_t)fk->table);
	put64(fk->name, L.str_length, 2);
	fk->name[L.str_state] = (1 << 2) | (1 << 5) | (1 << 6);
	memcpy(fk->name + L.str_ascii_size, "ok", 3);
	put64(fk->file, L.str_length, 5);
	fk->file[L.str_state] = (2 << 2) | (1 << 5);
	memcpy(fk->file + L.str_compact_size, "f\0\xe9\0.\0p\0y\0", 10);
	put64(fk->table, L.bytes_size, sizeof(table));
	memcpy(fk->table + L.bytes_data, table, sizeof(table));
}

/* Reads addr from a fresh child that holds the fake objects as they are. */
static int fake_read(pid_t *child, struct uwprof_pycode *c, uint64_t addr,
		     uint32_t fp)
{
	struct uwprof_pymem m;
	int err, status;

	*child = fork();
	if (!*child) {
		pause();
		_exit(0);
	}
	err = uwprof_pymem_open(&m, *child);
	if (!err) {
		err = uwprof_pycode_read(&m, &L, addr, fp, c);
		uwprof_pymem_close(&m);
	}
	kill(*child, SIGKILL);
	waitpid(*child, &status, 0);
	return err;
}

/* The fingerprint the walk gives the fake code object as it is now. */
static uint32_t fake_fp(void)
{
	uint64_t size, qual, file;
	int32_t line;

	memcpy(&size, fk->code + L.co_size, 8);
	memcpy(&line, fk->code + L.co_firstlineno, 4);
	memcpy(&qual, fk->code + L.co_qualname, 8);
	memcpy(&file, fk->code + L.co_filename, 8);
	return UWPROF_PY_FINGERPRINT(size, (uint32_t)line, qual, file);
}

static void hostile_case_fp(const char *what, uint32_t fp, int want)
{
	struct uwprof_pycode c;
	pid_t child;
	int err = fake_read(&child, &c, (uintptr_t)fk->code, fp);

	ok(err == want, "hostile: %s gives %d (got %d)", what, want, err);
	if (!err)
		uwprof_pycode_free(&c);
}

static void hostile_case(const char *what, int want)
{
	hostile_case_fp(what, fake_fp(), want);
}

/* A process that exited after its memory was opened: -ESRCH, not -EFAULT. */
static void exited_case(void)
{
	struct uwprof_pymem m;
	struct uwprof_pycode c;
	int status, err = -1;
	pid_t child = fork();

	if (!child) {
		pause();
		_exit(0);
	}
	if (!uwprof_pymem_open(&m, child)) {
		kill(child, SIGKILL);
		waitpid(child, &status, 0);
		err = uwprof_pycode_read(&m, &L, (uintptr_t)fk->code, 10, &c);
		uwprof_pymem_close(&m);
	} else {
		kill(child, SIGKILL);
		waitpid(child, &status, 0);
	}
	ok(err == -ESRCH, "hostile: a process gone after its memory was opened "
	   "gives -ESRCH (got %d)", err);
	if (!err)
		uwprof_pycode_free(&c);
}

static void hostile(void)
{
	struct uwprof_pycode c;
	pid_t child;
	long pg = sysconf(_SC_PAGESIZE);
	int err, i, j, bad = 0;
	uint32_t fp;

	uwprof_py_layout_of(0x030b, &L);
	L.code_type = FAKE_CODE_TYPE;
	fk = malloc(sizeof(*fk));
	fk->page_end = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(fk->page_end + pg, pg);
	fake_good();
	err = fake_read(&child, &c, (uintptr_t)fk->code, fake_fp());
	ok(!err && !strcmp(c.qualname, "ok") && !strcmp(c.filename, "f\xc3\xa9.py") &&
	   c.firstlineno == 5 && c.linetable_len == 3 &&
	   uwprof_pycode_line(c.linetable, 3, 5, 3) == 5 &&
	   uwprof_pycode_line(c.linetable, 3, 5, 9) == 5,
	   "hostile: the well-formed fake reads (%d)", err);
	if (!err)
		uwprof_pycode_free(&c);
	err = fake_read(&child, &c, 0, 10);
	ok(err == -EFAULT, "hostile: a NULL code object (%d)", err);
	err = fake_read(&child, &c, 0x10, 10);
	ok(err == -EFAULT, "hostile: an unmapped code object (%d)", err);
	err = fake_read(&child, &c, ~0ULL << 3, 10);
	ok(err == -EFAULT, "hostile: a kernel address (%d)", err);
	fp = fake_fp();
	put64(fk->code, L.co_size, 11);
	hostile_case_fp("a size of another fingerprint", fp, -ESTALE);
	fake_good();
	put32(fk->code, L.co_firstlineno, 6);
	hostile_case_fp("another first line", fp, -ESTALE);
	fake_good();
	put64(fk->code, 8, FAKE_CODE_TYPE + 8);
	hostile_case("an object of another type", -ESTALE);
	fake_good();
	put64(fk->code, 0, 0);
	hostile_case("a reference count of 0 (freed)", -ESTALE);
	fake_good();
	put64(fk->code, 0, (uintptr_t)fk->code + 64);
	hostile_case("a pool free-list link for a count (freed)", -ESTALE);
	fake_good();
	put64(fk->code, L.co_qualname, (uintptr_t)fk->file);
	hostile_case_fp("another name", fp, -ESTALE);
	put64(fk->code, L.co_size, 10 | (1ULL << 40));
	hostile_case("a huge size with the right fingerprint", -EINVAL);
	fake_good();
	put32(fk->code, L.co_firsttraceable, 10);
	hostile_case("firsttraceable beyond the code", -EINVAL);
	fake_good();
	put64(fk->code, L.co_qualname, (uintptr_t)(fk->page_end + pg));
	hostile_case("a qualname pointing nowhere", -EFAULT);
	fake_good();
	put64(fk->code, L.co_qualname, (uintptr_t)fk->name + 3);
	hostile_case("a misaligned qualname", -EFAULT);
	fake_good();
	put64(fk->name, L.str_length, 1ULL << 62);
	hostile_case("a name of 2^62 characters", -ENAMETOOLONG);
	fake_good();
	fk->name[L.str_state] = (1 << 2) | (1 << 6);
	hostile_case("a str that is not compact", -EINVAL);
	fake_good();
	fk->name[L.str_state] = (3 << 2) | (1 << 5);
	hostile_case("a str of kind 3", -EINVAL);
	fake_good();
	fk->name[L.str_ascii_size] = 0xc3;
	hostile_case("an ASCII str with a byte above 0x7f", -EINVAL);
	fake_good();
	put64(fk->code, L.co_filename, (uintptr_t)fk->code);
	hostile_case("a file name that is the code object itself", -EINVAL);
	fake_good();
	put64(fk->table, L.bytes_size, 1ULL << 40);
	hostile_case("a location table of 2^40 bytes", -E2BIG);
	fake_good();
	memset(fk->page_end, 0, pg);
	put64(fk->page_end + pg - 64, L.bytes_size, 100);
	put64(fk->code, L.co_linetable, (uintptr_t)(fk->page_end + pg - 64));
	hostile_case("a location table running off its mapping", -EFAULT);
	fake_good();
	memset(fk->page_end, 0, pg);
	put64(fk->page_end + pg - L.str_ascii_size, L.str_length, 64);
	fk->page_end[pg - L.str_ascii_size + L.str_state] = (1 << 2) | (1 << 5) | (1 << 6);
	put64(fk->code, L.co_qualname, (uintptr_t)(fk->page_end + pg - L.str_ascii_size));
	hostile_case("a name whose characters lie past its mapping", -EFAULT);
	fake_good();
	exited_case();

	/*
	 * Random code objects, strings and tables whose words are often
	 * pointers back into them: any error will do, a crash will not.
	 */
	srand(1);
	for (i = 0; i < 300; i++) {
		uint64_t *w = (uint64_t *)fk->random;

		for (j = 0; j < (int)(sizeof(fk->random) / 8); j++)
			w[j] = rand() % 3 ? (uintptr_t)fk->random +
				(uint64_t)(rand() % (sizeof(fk->random) - 64)) :
				((uint64_t)rand() << 33) ^ (uint64_t)rand();
		err = fake_read(&child, &c, (uintptr_t)fk->random +
				(uint64_t)(rand() % 4096 & ~7),
				(uint32_t)rand());
		if (!err)
			uwprof_pycode_free(&c);
		else if (err != -EFAULT && err != -EINVAL && err != -ESTALE &&
			 err != -ESRCH &&
			 err != -ENAMETOOLONG && err != -E2BIG)
			bad++;
	}
	ok(!bad, "hostile: 300 random objects read, each to a reader's error or a name");
	for (i = 0; i < 20000; i++) {
		uint8_t t[64];

		for (j = 0; j < (int)sizeof(t); j++)
			t[j] = (uint8_t)rand();
		if (uwprof_pycode_line(t, (size_t)(rand() % 64), rand() - RAND_MAX / 2,
				       rand() % 200 - 1) < -1)
			bad = 1;
	}
	ok(!bad, "hostile: 20000 random location tables decode to a line or -1");
	munmap(fk->page_end, pg);
	free(fk);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: pycode-test TARGET.py\n");
		return 2;
	}
	live_python(argv[1]);
	hostile();
	return tap_done();
}
