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
 *	recpy-test TARGET.py SCRATCH_DIR UWPROF
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pycode.h"
#include "recorder.h"
#include "tap.h"

#define PYTHON		"/usr/bin/python3.11"
#define MAX_FRAMES	32

/* The recorder's sink and process table, as far as rec_python.c uses them. */
void rec_w_pycode(struct recorder *r, const struct uwprof_pf_pycode *c)
{
	uwprof_pfw_pycode(&r->w, c);
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

int main(int argc, char **argv)
{
	static struct recorder r;
	struct uwprof_pfw_header_in h = { .fixed = { .arch = UWPROF_ARCH_X86_64,
						     .event = UWPROF_PF_EV_CPU_CLOCK } };
	struct uwprof_py_proc py = { .found = 1 };
	struct rec_proc p = { .ours = 1, .py = &py };
	struct uwprof_rec_sample *s;
	char path[512];
	int pfd[2], status;
	pid_t pid;
	FILE *f;

	if (argc != 4) {
		fprintf(stderr, "usage: recpy-test TARGET.py SCRATCH_DIR UWPROF\n");
		return 2;
	}
	if (access(PYTHON, X_OK)) {
		printf("1..0 # SKIP %s not installed\n", PYTHON);
		return 0;
	}
	uwprof_py_layout_of(0x030b, &py.layout);
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
	p.pid = (uint32_t)pid;
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
	if (f)
		fclose(f);
	return tap_done();
}
