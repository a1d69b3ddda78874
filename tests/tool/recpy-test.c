// SPDX-License-Identifier: GPL-2.0
/*
 * Host test of the recorder's Python part, rec_python.c (TAP): a sample
 * as the module would take it of a live Debian /usr/bin/python3.11
 * (running tests/tool/pycode-target.py: its frames' code object
 * addresses, instruction offsets and sizes as CPython prints them) goes
 * through rec_py_sample(), which must read each code object once and
 * store it as a PYCODE record; another fingerprint at a known address
 * must be read again and counted as replaced; once the process is gone
 * nothing is read and the failure counted, and a sample taken after that
 * is another process's with the pid. The profile written is then
 * reported with the real 'uwprof report --folded', whose Python frames
 * must carry the names and lines CPython gave.
 *
 * The interpreter is found as the recorder finds it (python_find.c over
 * the process's mappings) and said once in a PYINTERP record; beside it
 * runs a copy of the same interpreter whose Py_Version says 3.10, which
 * the tool does not walk: the report's header must name both, the one
 * walked and the one not with its pid, file and reason, and 'uwprof
 * script' must say the same on standard error. Quiet, as the agent runs,
 * the recorder says such an interpreter once per file and reason.
 *
 *	recpy-test TARGET.py SCRATCH_DIR UWPROF
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pycode.h"
#include "recorder.h"
#include "pyspawn.h"
#include "tap.h"

#define PYTHON		"/usr/bin/python3.11"
#define MAX_FRAMES	32

/* The recorder's sink and process table, as far as rec_python.c uses them. */
void rec_w_pycode(struct recorder *r, const struct uwprof_pf_pycode *c)
{
	uwprof_pfw_pycode(&r->w, c);
}

static int nr_interps;

void rec_w_pyinterp(struct recorder *r, const struct uwprof_pf_pyinterp *p)
{
	uwprof_pfw_pyinterp(&r->w, p);
	nr_interps++;
}

struct rec_proc *rec_proc_find(struct recorder *r, uint32_t pid)
{
	(void)r;
	(void)pid;
	return NULL;
}

struct frame {
	unsigned long long addr;
	int		lasti, lineno, firstlineno;
	unsigned int	size;
	unsigned long long qual_addr, file_addr;
	char		qualname[256];
	char		filename[512];
};

static struct frame fr[MAX_FRAMES];
static int nr_fr;

static int target_read(FILE *f)
{
	char buf[8192];
	struct frame *x;

	while (fgets(buf, sizeof(buf), f)) {
		if (!strcmp(buf, "ready\n"))
			return 0;
		if (strncmp(buf, "frame\t", 6) || nr_fr == MAX_FRAMES)
			continue;
		x = &fr[nr_fr];
		if (sscanf(buf, "frame\t%llu\t%d\t%d\t%u\t%d\t%llu\t%llu\t%255[^\t]\t%511[^\n]",
			   &x->addr, &x->lasti, &x->lineno, &x->size,
			   &x->firstlineno, &x->qual_addr, &x->file_addr,
			   x->qualname, x->filename) == 9)
			nr_fr++;
	}
	return -1;
}

/* The walk's tag of frame x at instruction 'lasti' (uapi fingerprint). */
static uint64_t tag_of(const struct frame *x, int lasti)
{
	return UWPROF_IP_PYTHON |
	       (uint64_t)UWPROF_PY_FINGERPRINT(x->size, x->firstlineno,
					       x->qual_addr, x->file_addr) << 32 |
	       (uint32_t)lasti;
}

/* A sample of pid: a native leaf, then every frame, innermost first. */
static struct uwprof_rec_sample *sample_of(pid_t pid, uint64_t t)
{
	struct uwprof_rec_sample *s;
	int i, n = 1 + 2 * nr_fr;

	s = calloc(1, sizeof(*s) + 8 * (size_t)n);
	s->hdr.type = UWPROF_REC_SAMPLE;
	s->hdr.size = (uint32_t)(sizeof(*s) + 8 * (size_t)n);
	s->time_ns = t;
	s->pid = s->tid = (uint32_t)pid;
	s->flags = UWPROF_SAMPLE_PYTHON;
	s->period = 1000000;
	s->nr_user = (uint16_t)n;
	s->ips[0] = 0x401000;
	for (i = 0; i < nr_fr; i++) {
		s->ips[1 + 2 * i] = tag_of(&fr[i], fr[i].lasti);
		s->ips[2 + 2 * i] = fr[i].addr;
	}
	return s;
}

/* The folded line CPython's own account of the frames gives. */
static void want_folded(char *out, size_t len, int native)
{
	size_t o = (size_t)snprintf(out, len, "python3.11");
	const char *base;
	int i;

	for (i = nr_fr - 1; i >= 0; i--) {
		base = strrchr(fr[i].filename, '/');
		o += (size_t)snprintf(out + o, len - o, ";%s (%s:%d)",
				      fr[i].qualname, base ? base + 1 : fr[i].filename,
				      fr[i].lineno);
	}
	snprintf(out + o, len - o, "%s 1", native ? ";[unknown]" : "");
}

static void report_check(const char *uwprof, const char *path, int native)
{
	char cmd[1024], want[4096], got[4096] = "";
	FILE *p;

	snprintf(cmd, sizeof(cmd), "%s report -i %s --folded%s", uwprof, path,
		 native ? " --python-native" : "");
	p = popen(cmd, "r");
	if (p) {
		if (!fgets(got, sizeof(got), p))
			got[0] = 0;
		pclose(p);
	}
	got[strcspn(got, "\n")] = 0;
	want_folded(want, sizeof(want), native);
	ok(!strcmp(got, want), "report --folded%s: CPython's names and lines",
	   native ? " --python-native" : "");
	if (strcmp(got, want))
		printf("#   got  '%s'\n#   want '%s'\n", got, want);
}

static int distinct_codes(void)
{
	int i, k, n = 0;

	for (i = 0; i < nr_fr; i++) {
		for (k = 0; k < i && fr[k].addr != fr[i].addr; k++)
			;
		n += k == i;
	}
	return n;
}

static void record(struct recorder *r, struct rec_proc *p, pid_t pid)
{
	struct uwprof_rec_sample *s = sample_of(pid, mono_ns());
	uint64_t codes;

	rec_py_sample(r, p, s);
	ok(r->py_codes == (uint64_t)distinct_codes() && !r->py_failed &&
	   !r->py_stale, "each of %d code objects read once (%llu, %llu failed)",
	   distinct_codes(), (unsigned long long)r->py_codes,
	   (unsigned long long)r->py_failed);
	uwprof_pfw_sample(&r->w, s);
	codes = r->py_codes;
	rec_py_sample(r, p, s);
	ok(r->py_codes == codes, "the same sample again reads nothing");
	/* The innermost frame's address, as if its object were replaced. */
	s->ips[1] = tag_of(&fr[0], 0) ^ (1ULL << 32);
	rec_py_sample(r, p, s);
	ok(r->py_stale == 1 && r->py_codes == codes,
	   "another fingerprint at a known address: read again, counted as replaced");
	free(s);
}

/*
 * A copy of the interpreter at 'dst' whose Py_Version (a dynamic symbol,
 * 4 bytes of data in the file) says 'hex': 0, or -1.
 */
static int copy_with_version(const char *dst, uint32_t hex)
{
	char cmd[1024];
	size_t i, n, ph_n;
	GElf_Shdr sh;
	GElf_Phdr ph;
	GElf_Sym sym;
	Elf_Scn *scn = NULL;
	Elf_Data *d;
	Elf *e;
	int fd, ret = -1;
	uint64_t off = 0;

	snprintf(cmd, sizeof(cmd), "cp %s %s", PYTHON, dst);
	if (system(cmd) || elf_version(EV_CURRENT) == EV_NONE)
		return -1;
	fd = open(dst, O_RDWR | O_CLOEXEC);
	e = fd < 0 ? NULL : elf_begin(fd, ELF_C_READ, NULL);
	while (e && !off && (scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		n = sh.sh_size / sizeof(Elf64_Sym);
		for (i = 0; i < n && !off; i++) {
			const char *name;

			if (!gelf_getsym(d, (int)i, &sym))
				continue;
			name = elf_strptr(e, sh.sh_link, sym.st_name);
			if (!name || strcmp(name, "Py_Version"))
				continue;
			for (ph_n = 0; gelf_getphdr(e, (int)ph_n, &ph); ph_n++)
				if (ph.p_type == PT_LOAD &&
				    sym.st_value >= ph.p_vaddr &&
				    sym.st_value + 4 <= ph.p_vaddr + ph.p_filesz)
					off = ph.p_offset + sym.st_value - ph.p_vaddr;
		}
	}
	if (off && pwrite(fd, &hex, 4, (off_t)off) == 4)
		ret = 0;
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	return ret;
}

/* The interpreter of 'pid' found as the recorder finds it, into p. */
static void find(struct recorder *r, struct uwprof_py_cache *c,
		 struct rec_proc *p, pid_t pid)
{
	struct uwprof_py_proc now;
	struct uwprof_pm pm = { 0 };

	p->pid = (uint32_t)pid;
	if (uwprof_pm_read(pid, &pm)) {
		ok(0, "the mappings of %d read", (int)pid);
		return;
	}
	uwprof_py_find(c, pid, &pm, UWPROF_ARCH_X86_64, &now);
	rec_py_found(r, p, mono_ns(), &now);
	uwprof_pm_free(&pm);
}

/* A first line of the command's standard output (or error) with 'want'. */
static int line_of(const char *cmd, const char *want, char *got, size_t len)
{
	FILE *f = popen(cmd, "r");
	int found = 0;

	got[0] = 0;
	if (!f)
		return 0;
	while (!found && fgets(got, (int)len, f))
		found = !!strstr(got, want);
	pclose(f);
	got[strcspn(got, "\n")] = 0;
	return found;
}

static void interps_check(const char *uwprof, const char *path, pid_t pid,
			  pid_t old)
{
	char cmd[1024], want[512], got[1024];

	snprintf(want, sizeof(want),
		 "python: 1 process walked (3.11), 1 not: pid %d python3.10: CPython 3.10: not supported",
		 (int)old);
	snprintf(cmd, sizeof(cmd), "%s report -i %s", uwprof, path);
	ok(line_of(cmd, "# python:", got, sizeof(got)) &&
	   !strcmp(got + 2, want),
	   "report's header: the interpreter walked (pid %d) and the one not",
	   (int)pid);
	if (strcmp(got + 2, want))
		printf("#   got  '%s'\n#   want '# %s'\n", got, want);
	snprintf(cmd, sizeof(cmd), "%s script -i %s 2>&1 >/dev/null", uwprof,
		 path);
	ok(line_of(cmd, "python:", got, sizeof(got)) &&
	   !strncmp(got, "uwprof script: ", 15) && !strcmp(got + 15, want),
	   "script says the same on standard error: %s", got);
}

/*
 * The agent (quiet) says an interpreter it cannot walk once per file and
 * reason, each process still getting its record: two processes of the
 * copy, as two agent entries of one pid would be, give one stderr line.
 */
static void quiet_check(struct recorder *r, struct uwprof_py_cache *c,
			pid_t old, const char *dir)
{
	struct rec_proc a = { .ours = 1 }, b = { .ours = 1 };
	char path[512], line[512];
	int err = dup(2), fd, n = nr_interps, lines = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/quiet.err", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (err < 0 || fd < 0 || dup2(fd, 2) < 0) {
		ok(0, "stderr redirected");
		return;
	}
	r->o.quiet = 1;
	find(r, c, &a, old);
	find(r, c, &b, old);
	r->o.quiet = 0;
	fflush(stderr);
	dup2(err, 2);
	close(err);
	close(fd);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		lines += !!strstr(line, "no Python frames: CPython 3.10");
	if (f)
		fclose(f);
	ok(nr_interps == n + 2 && lines == 1,
	   "quiet (the agent): a record per process, one stderr line (%d)",
	   lines);
	free(a.py);
	free(b.py);
}

int main(int argc, char **argv)
{
	static struct recorder r;
	struct uwprof_pfw_header_in h = { .fixed = { .arch = UWPROF_ARCH_X86_64,
						     .event = UWPROF_PF_EV_CPU_CLOCK } };
	struct uwprof_py_cache cache = { 0 };
	struct rec_proc p = { .ours = 1 }, q = { .ours = 1 };
	struct uwprof_rec_sample *s;
	char path[512], copy[512], line[64], real[PATH_MAX] = "";
	int pfd[2], status;
	pid_t pid, old;
	FILE *f, *g = NULL;

	if (argc != 4) {
		fprintf(stderr, "usage: recpy-test TARGET.py SCRATCH_DIR UWPROF\n");
		return 2;
	}
	if (access(PYTHON, X_OK)) {
		printf("1..0 # SKIP %s not installed\n", PYTHON);
		return 0;
	}
	r.name = "recpy-test";
	if (pipe(pfd))
		return 1;
	pid = fork();
	if (!pid) {
		dup2(pfd[1], 1);
		close(pfd[0]);
		close(pfd[1]);
		execl(PYTHON, PYTHON, "-I", argv[1], (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	f = fdopen(pfd[0], "r");
	ok(f && !target_read(f) && nr_fr >= 6, "the target told of its frames");
	snprintf(path, sizeof(path), "%s/recpy.data", argv[2]);
	ok(!uwprof_pfw_open(&r.w, path, &h), "profile opened: %s", r.w.err);
	find(&r, &cache, &p, pid);
	ok(p.py && p.py->found && p.py->hexversion >> 16 == 0x030b &&
	   !strcmp(p.py->path, PYTHON) && nr_interps == 1,
	   "python3.11 found as the recorder finds it, one PYINTERP record");
	find(&r, &cache, &p, pid);
	ok(nr_interps == 1, "read again: no second record");
	snprintf(copy, sizeof(copy), "%s/python3.10", argv[2]);
	old = copy_with_version(copy, 0x030a0cf0) ? -1 : pyspawn_sleeper(copy, 60, &g);
	ok(old > 0 && g && fgets(line, sizeof(line), g) &&
	   !strcmp(line, "ready\n"), "a copy of it saying 3.10 runs");
	find(&r, &cache, &q, old);
	if (!realpath(copy, real))
		real[0] = 0;
	ok(q.py && !q.py->found &&
	   !strcmp(q.py->why, "CPython 3.10: not supported") &&
	   q.py->hexversion == 0x030a0cf0 && !strcmp(q.py->path, real) &&
	   nr_interps == 2, "the copy: not walked, why, one record: %s",
	   q.py ? q.py->why : "none");
	find(&r, &cache, &q, old);
	ok(nr_interps == 2, "the copy read again: no second record");
	quiet_check(&r, &cache, old, argv[2]);
	if (old > 0) {
		kill(old, SIGKILL);
		waitpid(old, &status, 0);
	}
	if (!p.py) {
		tap_done();
		return 1;
	}
	uwprof_pfw_thread(&r.w, 0, (uint32_t)pid, (uint32_t)pid, "python3.11");
	record(&r, &p, pid);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	s = sample_of(pid, mono_ns());
	s->ips[2] += 64;
	rec_py_sample(&r, &p, s);
	ok(r.py_failed == 1, "process gone: the new address not read, one failure (%llu)",
	   (unsigned long long)r.py_failed);
	rec_py_sample(&r, &p, s);
	ok(r.py_failed == 1, "... and the process given up: nothing tried again");
	/* Taken after it was seen gone: another process of that pid. */
	s->time_ns = mono_ns();
	rec_py_sample(&r, &p, s);
	ok(r.py_failed == 2, "a later sample of the pid is another process's: "
	   "tried anew (no such process: failed, %llu)",
	   (unsigned long long)r.py_failed);
	s->time_ns = mono_ns();
	rec_py_sample(&r, &p, s);
	ok(r.py_failed == 2, "... whose memory could not be opened: not tried again");
	free(s);
	ok(!uwprof_pfw_commit(&r.w), "profile written: %s", r.w.err);
	rec_py_free(&r);
	report_check(argv[3], path, 0);
	report_check(argv[3], path, 1);
	interps_check(argv[3], path, pid, old);
	free(p.py);
	free(q.py);
	uwprof_py_cache_free(&cache);
	if (f)
		fclose(f);
	if (g)
		fclose(g);
	return tap_done();
}
