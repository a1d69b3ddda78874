// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of the profile file (tool/profile_*.c), TAP output: a
 * written file reads back field for field; the mapping snapshot rules
 * around exec; every truncation and a set of corruptions (the interned
 * stacks' ids and numbers among them) are refused with a message naming
 * the offset, never crash; a steady profile of few stacks reads back
 * sample for sample in under 8 bytes a sample; a version 1 file (written
 * by the previous writer: tests/tool/pf-v1.data) still reads; a failed or aborted writer
 * leaves nothing under the final name; a directory that cannot be written
 * fails at open; the output-file helper under it (tool/atomic_file.c)
 * replaces a file whole, with the umask's mode, or leaves it untouched.
 *
 * Usage: pf-test DIR [V1]   (a writable scratch directory; the version 1
 *                           file, else that check is skipped)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"
#include "profile_file.h"
#include "tap.h"

static const uint8_t vdso_img[] = "\177ELF-not-really-but-bytes";

/* Writes a small profile with one of every record. */
static int write_profile(const char *path)
{
	struct uwprof_pfw w;
	struct uwprof_pfw_header_in h = {
		.fixed = {
			.arch = UWPROF_ARCH_X86_64, .event = UWPROF_PF_EV_CPU_CLOCK,
			.freq_hz = 999, .flags = UWPROF_PF_F_KERNEL,
			.max_depth = 64, .start_realtime_ns = 1700000000000000000ULL,
			.start_mono_ns = 1000, .page_size = 4096, .abi_version = 1,
		},
		.hostname = "host1", .release = "6.1.0-test", .cmdline = "demo 2",
	};
	struct uwprof_pf_obj_fixed o1 = {
		.object_id = 1, .arch = UWPROF_ARCH_X86_64, .build_id_size = 20,
		.build_id = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
			      16, 17, 18, 19, 20 },
	};
	struct uwprof_pf_obj_fixed o2 = {
		.object_id = 2, .arch = UWPROF_ARCH_X86_64,
		.flags = UWPROF_PF_OBJ_VDSO,
	};
	struct uwprof_pf_map m1[2] = {
		{ .start = 0x400000, .end = 0x401000, .offset = 0x1000,
		  .bias = 0x3ff000, .object_id = 1 },
		{ .start = 0x7fff0000, .end = 0x7fff2000, .bias = 0x7fff0000,
		  .object_id = 2 },
	};
	struct uwprof_pf_map m2[1] = {
		{ .start = 0x500000, .end = 0x501000, .bias = 0x500000,
		  .object_id = 1 },
	};
	struct {
		struct uwprof_rec_sample s;
		uint64_t ips[3];
	} s = {
		.s = { .hdr = { UWPROF_REC_SAMPLE, sizeof(s) }, .time_ns = 2000,
		       .pid = 42, .tid = 43, .cpu = 1, .flags = UWPROF_STOP_OK,
		       .nr_kernel = 1, .nr_user = 2, .period = 1001001 },
		.ips = { 0xffffffff81000010ULL, 0x400010, 0x400020 },
	};
	struct uwprof_pf_ksym ks[2] = {
		{ 0xffffffff81000000ULL, 0x100, "do_thing" },
		{ 0xffffffff81000200ULL, 0x80, "other [mod]" },
	};
	static const uint8_t lt[] = { 0x80 | (13 << 3) | 3, 4, 0xf8 };
	struct uwprof_pf_pycode pc = {
		.time_ns = 3650, .addr = 0x7f00aa000040ULL, .pid = 42,
		.fingerprint = 0x123456, .size = 0x7123456, .firstlineno = 10,
		.firsttraceable = 2, .qualname = "Widget.gr\xc3\xb6\xc3\x9f" "e",
		.filename = "/srv/app.py", .linetable = lt, .linetable_len = 3,
	};
	struct uwprof_pf_pyinterp pi = {
		.time_ns = 1500, .pid = 42, .hexversion = 0x030a0cf0,
		.kind = UWPROF_PF_INTERP_CPYTHON, .path = "/opt/py/bin/python3.10",
		.reason = "CPython older than 3.11: not supported",
	};
	struct uwprof_pf_jitsym js[3] = {
		{ 0x7f0000001000ULL, 0x40, "JS:~hot1 /x.js:1", 16, 0 },
		{ 0x7f0000002000ULL, 0x20, "JS:*hot2", 8, 0 },
		{ 0x7f0000003000ULL, 0x10, "JS:a_name_of_eight_x", 20, 0 },
	};
	struct {
		struct uwprof_rec_sample s;
		uint64_t ips[1];
	} off = {
		.s = { .hdr = { UWPROF_REC_SAMPLE, sizeof(off) }, .time_ns = 1900,
		       .pid = 42, .tid = 44, .cpu = 0,
		       .flags = UWPROF_STOP_OK | UWPROF_SAMPLE_OFF_CPU,
		       .nr_user = 1, .period = 5000000 },
		.ips = { 0x400030 },
	};
	struct uwprof_pf_stats st = { .samples = 4, .lost = 3 };

	if (uwprof_pfw_open(&w, path, &h))
		return -1;
	uwprof_pfw_object(&w, &o1, "/usr/bin/demo", NULL, 0);
	uwprof_pfw_object(&w, &o2, "[vdso]", vdso_img, sizeof(vdso_img));
	uwprof_pfw_maps(&w, 1500, 42, "demo", m1, 2);
	uwprof_pfw_thread(&w, 1600, 42, 43, "worker");
	uwprof_pfw_cgroup(&w, 1500, 42, "/system.slice/demo.service");
	uwprof_pfw_cgroup(&w, 2500, 42, "/moved");
	uwprof_pfw_sample(&w, &s.s);
	/* The same stack again (earlier, on another thread), then another. */
	s.s.time_ns = 1950;
	s.s.tid = 45;
	uwprof_pfw_sample(&w, &s.s);
	uwprof_pfw_sample(&w, &off.s);
	s.s.time_ns = 2050;
	s.s.tid = 43;
	s.s.cpu = 0xffffffff;
	s.s.period = UINT64_MAX;
	uwprof_pfw_sample(&w, &s.s);
	uwprof_pfw_lost(&w, 2100, 1, 3);
	uwprof_pfw_exit(&w, 3000, 42, 1);
	uwprof_pfw_maps(&w, 3500, 42, "demo2", m2, 1);
	uwprof_pfw_ksyms(&w, ks, 2);
	uwprof_pfw_jitsyms(&w, 3600, 42, UWPROF_PF_JIT_PERF_MAP, js, 2);
	uwprof_pfw_jitsyms(&w, 3700, 44, UWPROF_PF_JIT_DUMP, js + 2, 1);
	uwprof_pfw_pycode(&w, &pc);
	uwprof_pfw_pyinterp(&w, &pi);
	uwprof_pfw_stats(&w, &st);
	return uwprof_pfw_commit(&w);
}

static int read_all(const char *path, void **data, size_t *size)
{
	struct stat st;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st))
		return -1;
	*size = (size_t)st.st_size;
	*data = malloc(*size);
	if (!*data || read(fd, *data, *size) != (ssize_t)*size) {
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

static int write_all(const char *path, const void *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0)
		return -1;
	if (size && write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return -1;
	}
	return close(fd);
}

static int dir_entries(const char *dir)
{
	char cmd[4500];
	FILE *p;
	int n = 0;
	char line[512];

	snprintf(cmd, sizeof(cmd), "ls -A '%s'", dir);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p))
		n++;
	pclose(p);
	return n;
}

static void afile_tests(const char *dir)
{
	char path[4200], buf[16] = { 0 };
	struct uwprof_afile a;
	struct stat st;
	mode_t mask;
	int fd, n;

	snprintf(path, sizeof(path), "%s/out.txt", dir);
	mask = umask(027);
	ok(uwprof_afile_open(&a, path, 0666) == 0 && a.fd >= 0 &&
	   write(a.fd, "old\n", 4) == 4 && uwprof_afile_commit(&a) == 0,
	   "afile: written and committed");
	if (stat(path, &st))
		memset(&st, 0, sizeof(st));
	ok((st.st_mode & 0777) == 0640 && st.st_size == 4 && dir_entries(dir) == 1,
	   "afile: final name only, mode 0666 less umask 027 (%o)",
	   (unsigned int)(st.st_mode & 0777));
	umask(mask);
	ok(uwprof_afile_open(&a, path, 0644) == 0 &&
	   write(a.fd, "new!\n", 5) == 5 && dir_entries(dir) == 2,
	   "afile: a second writer has its own temporary file");
	uwprof_afile_abort(&a);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? -1 : (int)read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	ok(n == 4 && !strcmp(buf, "old\n") && dir_entries(dir) == 1,
	   "afile: abort keeps the old file whole, no temporary left");
	ok(uwprof_afile_open(&a, path, 0644) == 0 &&
	   write(a.fd, "new!\n", 5) == 5 && uwprof_afile_commit(&a) == 0,
	   "afile: a commit replaces the file");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? -1 : (int)read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = 0;
	ok(n == 5 && !strcmp(buf, "new!\n") && dir_entries(dir) == 1,
	   "afile: the new content under the final name, nothing else");
	unlink(path);
}

/* Records of 'type' in a raw profile file. */
static size_t count_recs(const uint8_t *d, size_t size, uint32_t type)
{
	size_t off = 16, n = 0;

	while (off + 8 <= size) {
		uint32_t t, sz;

		memcpy(&t, d + off, 4);
		memcpy(&sz, d + off + 4, 4);
		if (sz < 8)
			break;
		n += t == type;
		off += sz;
	}
	return n;
}

/* A hand-made file: the file header and HEADER record of a good one. */
struct craft {
	uint8_t		b[4096];
	size_t		n;
};

static void craft_start(struct craft *c, const uint8_t *good)
{
	uint32_t hsz;

	memcpy(&hsz, good + 16 + 4, 4);
	c->n = 16 + hsz;
	memcpy(c->b, good, c->n);
}

static void craft_rec(struct craft *c, uint32_t type, const void *p, size_t n)
{
	struct uwprof_pf_rec r = { type, (uint32_t)((8 + n + 7) & ~(size_t)7) };

	memcpy(c->b + c->n, &r, 8);
	if (n)
		memcpy(c->b + c->n + 8, p, n);
	memset(c->b + c->n + 8 + n, 0, r.size - 8 - n);
	c->n += r.size;
}

/* A SAMPLES record's entries, made by hand. */
struct ents {
	uint8_t		b[256];
	size_t		n;
};

static void ent_raw(struct ents *e, const void *p, size_t n)
{
	memcpy(e->b + e->n, p, n);
	e->n += n;
}

static void ent_num(struct ents *e, uint64_t v)
{
	do {
		e->b[e->n++] = (uint8_t)((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
		v >>= 7;
	} while (v);
}

/*
 * A stack entry of user ips: own[0..k) (leaf first) before the last
 * 'shared' ips of 'parent' (an id + 1, or 0); 'base' is the ip after
 * own[], which the first stored difference is taken from.
 */
static void ent_stack(struct ents *e, uint64_t id, uint64_t nr_user,
		      uint64_t parent, uint64_t shared, const uint64_t *own,
		      size_t k, uint64_t base)
{
	size_t i;

	e->b[e->n++] = UWPROF_PF_SMP_ENTRY | UWPROF_PF_SMP_STACK;
	ent_num(e, id);
	ent_num(e, 0);
	ent_num(e, 0);
	ent_num(e, nr_user);
	ent_num(e, parent);
	ent_num(e, shared);
	for (i = k; i-- > 0;) {
		uint64_t d = own[i] - base;

		ent_num(e, (d << 1) ^ (uint64_t)-(int64_t)(d >> 63));
		base = own[i];
	}
}

/* A sample entry of stack 'id', 'dt' ns after the previous one. */
static void ent_sample(struct ents *e, uint64_t id, uint64_t dt)
{
	e->b[e->n++] = UWPROF_PF_SMP_ENTRY;
	ent_num(e, id);
	ent_num(e, dt << 1);
}

static void craft_samples(struct craft *c, uint32_t samples, uint32_t stacks,
			  const struct ents *e)
{
	uint8_t p[sizeof(e->b) + 8];
	struct uwprof_pf_samples_fixed f = {
		.nr_samples = samples, .nr_stacks = stacks,
	};

	memcpy(p, &f, sizeof(f));
	memcpy(p + sizeof(f), e->b, e->n);
	craft_rec(c, UWPROF_PF_SAMPLES, p, sizeof(f) + e->n);
}

/* Ends the crafted file, opens it: ok when refused with 'want' in the error. */
static void craft_check(struct craft *c, const char *bad, const char *want,
			const char *what)
{
	struct uwprof_pf *pf = NULL;
	char err[600] = "";
	int ret;

	craft_rec(c, UWPROF_PF_END, NULL, 0);
	write_all(bad, c->b, c->n);
	ret = uwprof_pf_open(bad, &pf, err, sizeof(err));
	ok(ret == -EINVAL && !pf && strstr(err, want), "%s refused: %s", what, err);
	uwprof_pf_close(pf);
}

/* One SAMPLES record of these entries in a file that must be refused. */
static void craft_bad(const uint8_t *good, const char *bad, uint32_t samples,
		      uint32_t stacks, const struct ents *e, const char *want,
		      const char *what)
{
	struct craft c;

	craft_start(&c, good);
	craft_samples(&c, samples, stacks, e);
	craft_check(&c, bad, want, what);
}

/* Stacks sharing their root side, in two records, read back whole. */
static void craft_good(const uint8_t *good, const char *bad)
{
	static const uint64_t s0[] = { 0x400010, 0x400100, 0x400200 };
	static const uint64_t s1[] = { 0x400020 }, s2[] = { 0x400030, 0x400110 };
	struct uwprof_pf *pf = NULL;
	struct ents e = { .n = 0 };
	char err[600] = "";
	struct craft c;

	craft_start(&c, good);
	ent_stack(&e, 9, 3, 0, 0, s0, 3, 0);
	ent_sample(&e, 9, 5);
	ent_stack(&e, 4, 3, 10, 2, s1, 1, 0x400100);
	ent_sample(&e, 4, 5);
	craft_samples(&c, 2, 2, &e);
	e.n = 0;
	ent_stack(&e, 1, 3, 5, 1, s2, 2, 0x400200);
	ent_sample(&e, 1, 20);
	ent_sample(&e, 9, 1);
	craft_samples(&c, 2, 1, &e);
	craft_rec(&c, UWPROF_PF_END, NULL, 0);
	write_all(bad, c.b, c.n);
	ok(uwprof_pf_open(bad, &pf, err, sizeof(err)) == 0 && pf->nr_samples == 4 &&
	   pf->samples[1].time_ns == 10 && pf->samples[2].time_ns == 20 &&
	   pf->samples[3].time_ns == 21 && pf->samples[1].nr_user == 3 &&
	   pf->samples[1].ips[0] == 0x400020 && pf->samples[1].ips[1] == 0x400100 &&
	   pf->samples[1].ips[2] == 0x400200 && pf->samples[2].ips[0] == 0x400030 &&
	   pf->samples[2].ips[1] == 0x400110 && pf->samples[2].ips[2] == 0x400200 &&
	   pf->samples[3].ips == pf->samples[0].ips && pf->samples[0].ips[0] == 0x400010,
	   "hand-made stacks sharing their root side read back whole (%s)", err);
	uwprof_pf_close(pf);
}

static void stack_corruptions(const uint8_t *good, const char *bad)
{
	static const uint64_t ip[] = { 0x400010 }, ip2[] = { 0x400010, 0x400020 };
	static const uint8_t big[] = { UWPROF_PF_SMP_ENTRY, 0xff, 0xff, 0xff, 0xff, 0x7f, 2 };
	static const uint8_t wide[] = { UWPROF_PF_SMP_ENTRY, 0, 0xff, 0xff, 0xff, 0xff,
					0xff, 0xff, 0xff, 0xff, 0xff, 0x02 };
	static const uint8_t tid[] = { UWPROF_PF_SMP_ENTRY | UWPROF_PF_SMP_TID, 0, 2,
				       0x80, 0x80, 0x80, 0x80, 0x10 };
	static const uint8_t bits[] = { UWPROF_PF_SMP_ENTRY | 0x10, 0, 2 };
	static const uint8_t nomark[] = { 0, 0, 2 };
	struct ents e0 = { .n = 0 }, e;

	craft_good(good, bad);
	ent_stack(&e0, 0, 1, 0, 0, ip, 1, 0);
	e = e0;
	ent_sample(&e, 1, 1);
	craft_bad(good, bad, 1, 1, &e, "sample's stack id 1 not defined",
		  "an unknown stack id");
	e.n = 0;
	ent_sample(&e, 0, 1);
	ent_stack(&e, 0, 1, 0, 0, ip, 1, 0);
	craft_bad(good, bad, 1, 1, &e, "stack id 0 not defined before its use",
		  "a stack id used before its definition");
	e = e0;
	ent_stack(&e, 0, 1, 0, 0, ip, 1, 0);
	craft_bad(good, bad, 0, 2, &e, "stack id 0 defined twice",
		  "a stack id defined twice");
	e = e0;
	ent_stack(&e, 1, 2, 6, 1, ip, 1, 0x400020);
	craft_bad(good, bad, 0, 2, &e, "parent stack id 5 not defined",
		  "an undefined parent");
	e = e0;
	ent_stack(&e, 1, 3, 1, 2, ip2, 1, 0x400020);
	craft_bad(good, bad, 0, 2, &e, "shares more frames",
		  "more shared frames than the parent has");
	e = e0;
	ent_raw(&e, big, sizeof(big));
	craft_bad(good, bad, 1, 1, &e, "overflows its field", "a 35-bit stack id");
	e = e0;
	ent_raw(&e, wide, sizeof(wide));
	craft_bad(good, bad, 1, 1, &e, "overflows 64 bits", "a time delta past 64 bits");
	e = e0;
	ent_raw(&e, tid, sizeof(tid));
	craft_bad(good, bad, 1, 1, &e, "overflows its field", "a 33-bit tid");
	e = e0;
	ent_raw(&e, bits, sizeof(bits));
	craft_bad(good, bad, 1, 1, &e, "unknown bits", "unknown entry bits");
	e = e0;
	ent_raw(&e, nomark, sizeof(nomark));
	craft_bad(good, bad, 1, 1, &e, "without its marker", "an entry without its marker bit");
	e = e0;
	ent_sample(&e, 0, 1);
	craft_bad(good, bad, 2, 1, &e, "samples record", "a count past the record's entries");
	e = e0;
	ent_sample(&e, 0, 1);
	ent_sample(&e, 0, 1);
	craft_bad(good, bad, 1, 2, &e, "more sample entries",
		  "more sample entries than counted");
	/* A stack id whose bytes go on to the record's end: no padding. */
	e = e0;
	ent_sample(&e, 0, 1);
	e.b[e.n++] = UWPROF_PF_SMP_ENTRY;
	do
		e.b[e.n++] = 0x80;
	while ((8 + e.n) % 8);
	craft_bad(good, bad, 2, 1, &e, "runs past the record",
		  "a number cut by the record's end");
}

/* Every byte of a good file flipped in turn: refused or read, never a crash. */
static void flip_bytes(const uint8_t *good, size_t size, const char *bad)
{
	uint8_t *cp = malloc(size);
	size_t i, bad_ret = 0;

	memcpy(cp, good, size);
	for (i = 16; i < size; i++) {
		struct uwprof_pf *pf = NULL;
		char err[600];
		int ret;

		cp[i] ^= 0xa5;
		write_all(bad, cp, size);
		ret = uwprof_pf_open(bad, &pf, err, sizeof(err));
		bad_ret += ret && ret != -EINVAL;
		uwprof_pf_close(pf);
		cp[i] ^= 0xa5;
	}
	ok(!bad_ret, "every byte flipped: read or refused as corrupt (%zu other)",
	   bad_ret);
	free(cp);
}

/*
 * Frame j of stack k in the steady profile: two leaf frames of its own,
 * under a root-side chain that every stack of its depth has.
 */
static uint64_t steady_ip(uint32_t k, size_t j, size_t n)
{
	return j < 2 ? 0x400000 + k * 0x100 + j * 8 : 0x500000 + (n - j) * 0x40;
}

/* A steady profile: few stacks, many samples, read back exactly. */
static void steady_roundtrip(const char *path)
{
	struct uwprof_pfw w;
	struct uwprof_pfw_header_in h = { .fixed = { .arch = 1 } };
	struct {
		struct uwprof_rec_sample s;
		uint64_t ips[24];
	} s = { .s = { .hdr = { UWPROF_REC_SAMPLE, sizeof(s) } } };
	struct uwprof_pf *pf = NULL;
	const size_t nr = 300000, nstacks = 400;
	uint64_t t[4] = { 1000000000, 1000000000, 1000000000, 1000000000 };
	size_t i, j, bad = 0;
	struct stat sb;
	char err[600];

	ok(uwprof_pfw_open(&w, path, &h) == 0, "steady: writer opens");
	for (i = 0; i < nr; i++) {
		uint32_t k = (uint32_t)((i * 2654435761u) % nstacks);

		/* Each CPU's ring drained in turn: runs of 64 from one CPU. */
		s.s.cpu = (uint32_t)(i / 64 % 4);
		t[s.s.cpu] += 1001001 + i % 7;
		s.s.time_ns = t[s.s.cpu];
		s.s.pid = 100;
		s.s.tid = 100 + (uint32_t)(i / 64 % 4);
		s.s.period = 1001001;
		s.s.flags = k % 3 ? UWPROF_STOP_OK : UWPROF_STOP_FP_END;
		s.s.nr_kernel = 0;
		s.s.nr_user = (uint16_t)(8 + k % 16);
		for (j = 0; j < s.s.nr_user; j++)
			s.ips[j] = steady_ip(k, j, s.s.nr_user);
		uwprof_pfw_sample(&w, &s.s);
	}
	ok(uwprof_pfw_commit(&w) == 0, "steady: %zu samples committed", nr);
	ok(uwprof_pf_open(path, &pf, err, sizeof(err)) == 0, "steady: read (%s)", err);
	if (!pf)
		return;
	memset(t, 0, sizeof(t));
	for (i = 0; i < nr && pf->nr_samples == nr; i++) {
		uint32_t k = (uint32_t)((i * 2654435761u) % nstacks);
		const struct uwprof_pf_sample *p = &pf->samples[i];

		t[i / 64 % 4] += 1001001 + i % 7;

		bad += p->cpu != i / 64 % 4 || p->tid != 100 + i / 64 % 4 ||
		       p->nr_user != 8 + k % 16 || p->nr_kernel ||
		       p->flags != (k % 3 ? UWPROF_STOP_OK : UWPROF_STOP_FP_END);
		for (j = 0; j < p->nr_user && p->nr_user == 8 + k % 16; j++)
			bad += p->ips[j] != steady_ip(k, j, p->nr_user);
		bad += p->time_ns != 1000000000 + t[i / 64 % 4] ||
		       p->period != 1001001 || p->pid != 100;
	}
	ok(pf->nr_samples == nr && !bad, "steady: every sample read back (%zu wrong)",
	   bad);
	stat(path, &sb);
	ok(sb.st_size < (off_t)(8 * nr),
	   "steady: under 8 bytes a sample (%.2f)", (double)sb.st_size / nr);
	uwprof_pf_close(pf);
}

/*
 * A version 1 file, written by the previous writer, still reads. The file
 * (tests/tool/pf-v1.data) is tests/report/gen of commit 896d021 run on:
 *	header cpu-clock 999 demo 2
 *	obj 1 /usr/bin/demo 0102030405060708090a0b0c0d0e0f1011121314
 *	map 42 1500 demo 0x400000 0x401000 0x1000 0x3ff000 1
 *	thread 42 43 worker
 *	ksym 0xffffffff81000000 0x100 do_thing
 *	sample 42 43 1 2000 1001001 0 1 0xffffffff81000010 0x400010 0x400020
 *	sample 42 44 0 3000 1001001 0 0 0x400010 0x400020
 *	sample 42 43 1 4000 5000000 2048 0 0x400030
 *	lost 3
 */
static void v1_read(const char *v1)
{
	struct uwprof_pf *pf = NULL;
	char err[600] = "";

	if (!v1) {
		ok(1, "version 1 file # SKIP no file given");
		return;
	}
	ok(uwprof_pf_open(v1, &pf, err, sizeof(err)) == 0, "version 1 file opens (%s)",
	   err);
	if (!pf)
		return;
	ok(pf->hdr.version == 1 && pf->nr_samples == 3 &&
	   pf->samples[0].nr_kernel == 1 && pf->samples[0].nr_user == 2 &&
	   pf->samples[0].ips[0] == 0xffffffff81000010ULL &&
	   pf->samples[0].ips[2] == 0x400020 && pf->samples[0].tid == 43 &&
	   pf->samples[0].cpu == 1 && pf->samples[0].period == 1001001 &&
	   pf->samples[1].tid == 44 && pf->samples[1].time_ns == 3000 &&
	   pf->samples[2].flags == UWPROF_SAMPLE_OFF_CPU &&
	   pf->samples[2].period == 5000000 && pf->lost == 3 &&
	   !strcmp(uwprof_pf_comm(pf, 42, 43, 2000), "worker"),
	   "version 1: samples, off-CPU sample, names and lost count read back");
	uwprof_pf_close(pf);
}

/*
 * A committed profile is the owner's only, whatever the umask: with -g it
 * holds kernel addresses (perf.data is 0600 too).
 */
/*
 * PYINTERP: each field read back in file order; the writer refuses what
 * the format does not have; a reader keeps a kind or flag it does not
 * know (a newer writer's), and refuses a reserved field that is not zero.
 */
static void pyinterp_tests(const char *dir)
{
	struct uwprof_pfw_header_in h = { .fixed = { .arch = 1 } };
	struct uwprof_pf_pyinterp pi[2] = {
		{ .time_ns = 10, .pid = 7, .hexversion = 0x030b02f0,
		  .kind = UWPROF_PF_INTERP_CPYTHON,
		  .flags = UWPROF_PF_INTERP_WALKED, .path = "/usr/bin/python3.11" },
		{ .time_ns = 20, .pid = 8, .hexversion = 0x030d05f0,
		  .kind = UWPROF_PF_INTERP_CPYTHON, .path = "/usr/bin/python3.13t",
		  .reason = "free-threaded CPython 3.13: not supported" },
	};
	struct uwprof_pf_pyinterp odd = pi[0];
	struct uwprof_pf *pf = NULL;
	struct uwprof_pfw w;
	char p[4200], err[4400];
	uint8_t *d = NULL;
	size_t size, off;
	int ret;

	snprintf(p, sizeof(p), "%s/pyinterp.data", dir);
	ok(uwprof_pfw_open(&w, p, &h) == 0, "PYINTERP: writer opens");
	ok(uwprof_pfw_pyinterp(&w, &pi[0]) == 0 &&
	   uwprof_pfw_pyinterp(&w, &pi[1]) == 0, "PYINTERP: two written");
	odd.kind = 2;
	ret = uwprof_pfw_pyinterp(&w, &odd);
	odd.kind = UWPROF_PF_INTERP_CPYTHON;
	odd.flags = 2;
	ok(ret == -EINVAL && uwprof_pfw_pyinterp(&w, &odd) == -EINVAL,
	   "PYINTERP: the writer refuses a kind or flag the format lacks");
	ok(uwprof_pfw_commit(&w) == 0, "PYINTERP: committed");
	ret = uwprof_pf_open(p, &pf, err, sizeof(err));
	ok(ret == 0 && pf->nr_pyinterps == 2 && pf->pyinterps[0].pid == 7 &&
	   pf->pyinterps[0].time_ns == 10 &&
	   pf->pyinterps[0].hexversion == 0x030b02f0 &&
	   pf->pyinterps[0].kind == UWPROF_PF_INTERP_CPYTHON &&
	   pf->pyinterps[0].flags == UWPROF_PF_INTERP_WALKED &&
	   !strcmp(pf->pyinterps[0].path, "/usr/bin/python3.11") &&
	   !strcmp(pf->pyinterps[0].reason, "") &&
	   pf->pyinterps[1].pid == 8 && pf->pyinterps[1].flags == 0 &&
	   !strcmp(pf->pyinterps[1].path, "/usr/bin/python3.13t") &&
	   !strcmp(pf->pyinterps[1].reason,
		   "free-threaded CPython 3.13: not supported") &&
	   pf->skipped_recs == 0,
	   "PYINTERP: every field read back, in file order (%s)",
	   ret ? err : "ok");
	uwprof_pf_close(pf);
	pf = NULL;
	if (read_all(p, (void **)&d, &size)) {
		ok(0, "PYINTERP: read the file back raw");
		return;
	}
	off = 16;
	while (off + 8 <= size && *(uint32_t *)(d + off) != UWPROF_PF_PYINTERP)
		off += *(uint32_t *)(d + off + 4);
	/* A newer writer's kind and flag: kept as they are. */
	d[off + 8 + offsetof(struct uwprof_pf_pyinterp_fixed, kind)] = 9;
	d[off + 8 + offsetof(struct uwprof_pf_pyinterp_fixed, flags)] = 0x81;
	write_all(p, d, size);
	ret = uwprof_pf_open(p, &pf, err, sizeof(err));
	ok(ret == 0 && pf->pyinterps[0].kind == 9 &&
	   pf->pyinterps[0].flags == 0x81 && pf->nr_pyinterps == 2,
	   "PYINTERP: an unknown kind and flag are kept (%s)", ret ? err : "ok");
	uwprof_pf_close(pf);
	pf = NULL;
	d[off + 8 + offsetof(struct uwprof_pf_pyinterp_fixed, reserved)] = 1;
	write_all(p, d, size);
	ret = uwprof_pf_open(p, &pf, err, sizeof(err));
	ok(ret == -EINVAL && strstr(err, "pyinterp record") &&
	   strstr(err, "reserved"),
	   "PYINTERP: a reserved field not zero is refused: %s", err);
	uwprof_pf_close(pf);
	free(d);
	unlink(p);
}

static void mode_tests(const char *dir)
{
	static const mode_t masks[] = { 022, 0 };
	struct uwprof_pfw_header_in h = { .fixed = { .arch = 1 } };
	struct uwprof_pfw w;
	char p[4200];
	struct stat sb;
	mode_t old;
	size_t i;

	for (i = 0; i < sizeof(masks) / sizeof(masks[0]); i++) {
		snprintf(p, sizeof(p), "%s/mode-%03o.data", dir,
			 (unsigned int)masks[i]);
		old = umask(masks[i]);
		memset(&sb, 0, sizeof(sb));
		if (!uwprof_pfw_open(&w, p, &h) && !uwprof_pfw_commit(&w))
			stat(p, &sb);
		umask(old);
		ok((sb.st_mode & 07777) == 0600,
		   "profile file mode with umask %03o is 0600 (got %04o)",
		   (unsigned int)masks[i], (unsigned int)(sb.st_mode & 07777));
		unlink(p);
	}
}

int main(int argc, char **argv)
{
	char path[4096], bad[4400], err[600], sub[4096];
	const struct uwprof_pf_maps *m;
	const struct uwprof_pf_object *o;
	const struct uwprof_pf_ksym *k;
	struct uwprof_pf *pf = NULL;
	struct uwprof_pfw w;
	struct uwprof_pfw_header_in h = { .fixed = { .arch = 1 } };
	size_t size = 0, cut, refused = 0, msgs = 0;
	void *data = NULL;
	uint8_t *cp;
	int ret;

	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: pf-test DIR [VERSION-1-FILE]\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/t.data", argv[1]);
	snprintf(bad, sizeof(bad), "%s/bad.data", argv[1]);

	ok(write_profile(path) == 0, "writer commits a profile");
	ret = uwprof_pf_open(path, &pf, err, sizeof(err));
	ok(ret == 0, "reader opens it (%s)", ret ? err : "ok");
	if (ret) {
		tap_done();
		return 1;
	}
	ok(pf->hdr.arch == UWPROF_ARCH_X86_64 && pf->hdr.freq_hz == 999 &&
	   pf->hdr.max_depth == 64 && pf->hdr.flags == UWPROF_PF_F_KERNEL &&
	   !strcmp(pf->hdr.hostname, "host1") &&
	   !strcmp(pf->hdr.release, "6.1.0-test") &&
	   !strcmp(pf->hdr.cmdline, "demo 2"), "header fields read back");
	ok(pf->nr_objects == 2 && pf->objects[0].build_id_size == 20 &&
	   pf->objects[0].build_id[19] == 20 &&
	   !strcmp(pf->objects[0].path, "/usr/bin/demo") && !pf->objects[0].image,
	   "object with build-id read back");
	o = uwprof_pf_object_find(pf, 2);
	ok(o && (o->flags & UWPROF_PF_OBJ_VDSO) && o->image_size == sizeof(vdso_img) &&
	   !memcmp(o->image, vdso_img, sizeof(vdso_img)), "vDSO image read back");
	ok(pf->hdr.version == UWPROF_PF_VERSION && pf->hdr.version == 2,
	   "the writer writes format version 2");
	ok(pf->nr_samples == 4 && pf->samples[0].pid == 42 &&
	   pf->samples[0].tid == 43 && pf->samples[0].nr_kernel == 1 &&
	   pf->samples[0].nr_user == 2 && pf->samples[0].ips[2] == 0x400020 &&
	   pf->samples[0].period == 1001001 && pf->samples[0].time_ns == 2000 &&
	   pf->samples[0].cpu == 1 && pf->samples[0].flags == UWPROF_STOP_OK,
	   "sample read back");
	ok(pf->samples[1].time_ns == 1950 && pf->samples[1].tid == 45 &&
	   pf->samples[1].ips == pf->samples[0].ips &&
	   pf->samples[1].period == 1001001,
	   "a repeated stack: an earlier time, another thread, the same ips");
	ok(pf->samples[2].flags == (UWPROF_STOP_OK | UWPROF_SAMPLE_OFF_CPU) &&
	   pf->samples[2].nr_kernel == 0 && pf->samples[2].nr_user == 1 &&
	   pf->samples[2].ips[0] == 0x400030 && pf->samples[2].tid == 44 &&
	   pf->samples[2].period == 5000000 && pf->samples[2].cpu == 0,
	   "an off-CPU sample with its own stack and weight");
	ok(pf->samples[3].time_ns == 2050 && pf->samples[3].cpu == 0xffffffff &&
	   pf->samples[3].period == UINT64_MAX && pf->samples[3].tid == 43 &&
	   pf->samples[3].ips == pf->samples[0].ips,
	   "the widest cpu and period read back");
	ok(pf->lost == 3 && pf->nr_exits == 1 && pf->exits[0].exec == 1,
	   "lost count and exec record");
	ok(pf->has_stats && pf->stats.lost == 3, "stats record");
	ok(!strcmp(uwprof_pf_comm(pf, 42, 43, 2000), "worker") &&
	   !strcmp(uwprof_pf_comm(pf, 42, 44, 2000), "demo"), "thread and process names");
	ok(!strcmp(uwprof_pf_comm(pf, 42, 42, 3200), "demo2") &&
	   !strcmp(uwprof_pf_comm(pf, 42, 42, 4000), "demo2") &&
	   !strcmp(uwprof_pf_comm(pf, 42, 42, 1000), "demo"),
	   "after an exec, the new program's name; before it, the old one");
	ok(!strcmp(uwprof_pf_comm(pf, 42, 43, 3200), "demo2"),
	   "a thread's name does not outlive the exec");
	ok(pf->nr_cgroups == 2 &&
	   !strcmp(uwprof_pf_cgroup(pf, 42, 2000), "/system.slice/demo.service") &&
	   !strcmp(uwprof_pf_cgroup(pf, 42, 1000), "/system.slice/demo.service") &&
	   !strcmp(uwprof_pf_cgroup(pf, 42, 2500), "/moved") &&
	   !uwprof_pf_cgroup(pf, 7, 2000),
	   "cgroup records: the latest at a time, else the first after");
	m = uwprof_pf_maps_for(pf, 42, 2000);
	ok(m && m->time_ns == 1500, "snapshot taken before a sample applies");
	m = uwprof_pf_maps_for(pf, 42, 1000);
	ok(m && m->time_ns == 1500, "sample before the first snapshot uses it");
	m = uwprof_pf_maps_for(pf, 42, 3200);
	ok(m && m->time_ns == 3500, "after an exec, the new image's snapshot");
	m = uwprof_pf_maps_for(pf, 42, 4000);
	ok(m && m->time_ns == 3500, "latest snapshot after it was taken");
	ok(!uwprof_pf_maps_for(pf, 7, 2000), "no snapshot for an unknown pid");
	ok(uwprof_pf_resolve(pf, 42, 2000, 0x400010, &o) && o && o->object_id == 1,
	   "resolve an ip to its object");
	ok(!uwprof_pf_resolve(pf, 42, 2000, 0x401000, &o), "end of a mapping is outside");
	k = uwprof_pf_ksym_find(pf, 0xffffffff81000010ULL);
	ok(k && !strcmp(k->name, "do_thing"), "kernel symbol lookup");
	ok(!uwprof_pf_ksym_find(pf, 0xffffffff81000150ULL), "past a kernel symbol's size");
	ok(pf->nr_jitsyms == 3 && pf->jitsyms[0].pid == 42 &&
	   pf->jitsyms[0].start == 0x7f0000001000ULL &&
	   pf->jitsyms[0].size == 0x40 && pf->jitsyms[0].len == 16 &&
	   !memcmp(pf->jitsyms[0].name, "JS:~hot1 /x.js:1", 16) &&
	   pf->jitsyms[1].len == 8 && !memcmp(pf->jitsyms[1].name, "JS:*hot2", 8) &&
	   pf->jitsyms[2].pid == 44 && pf->jitsyms[2].len == 20 &&
	   !memcmp(pf->jitsyms[2].name, "JS:a_name_of_eight_x", 20),
	   "JIT symbols: two records, in order, with their pids and names");
	ok(pf->nr_pycodes == 1 && pf->pycodes[0].pid == 42 &&
	   pf->pycodes[0].addr == 0x7f00aa000040ULL &&
	   pf->pycodes[0].fingerprint == 0x123456 &&
	   pf->pycodes[0].size == 0x7123456 && pf->pycodes[0].time_ns == 3650 &&
	   pf->pycodes[0].firstlineno == 10 && pf->pycodes[0].firsttraceable == 2 &&
	   !strcmp(pf->pycodes[0].qualname, "Widget.gr\xc3\xb6\xc3\x9f" "e") &&
	   !strcmp(pf->pycodes[0].filename, "/srv/app.py") &&
	   pf->pycodes[0].linetable_len == 3 &&
	   !memcmp(pf->pycodes[0].linetable, "\xeb\x04\xf8", 3),
	   "PYCODE: every field and the location table read back");
	ok(pf->nr_pyinterps == 1 && pf->pyinterps[0].pid == 42 &&
	   pf->pyinterps[0].hexversion == 0x030a0cf0 &&
	   !strcmp(pf->pyinterps[0].path, "/opt/py/bin/python3.10") &&
	   !strcmp(pf->pyinterps[0].reason,
		   "CPython older than 3.11: not supported"),
	   "PYINTERP read back among the other records");
	uwprof_pf_close(pf);

	/* Every truncation is refused with a message, never read past. */
	ok(read_all(path, &data, &size) == 0, "read the file back raw");
	for (cut = 0; cut < size; cut++) {
		if (write_all(bad, data, cut))
			break;
		err[0] = 0;
		ret = uwprof_pf_open(bad, &pf, err, sizeof(err));
		if (ret == -EINVAL && !pf)
			refused++;
		else
			uwprof_pf_close(pf);
		if (strstr(err, "truncated") || strstr(err, "corrupt"))
			msgs++;
	}
	ok(refused == size, "all %zu truncations refused (%zu)", size, refused);
	ok(msgs + 1 >= size, "truncations named as truncated/corrupt (%zu of %zu)",
	   msgs, size);
	ok(count_recs(data, size, UWPROF_PF_SAMPLES) == 1 &&
	   !count_recs(data, size, UWPROF_PF_SAMPLE),
	   "4 samples of 2 stacks: one SAMPLES record, no SAMPLE record");
	stack_corruptions(data, bad);
	flip_bytes(data, size, bad);

	/* Corruptions: a record size past the end, an odd size, a bad count. */
	cp = malloc(size);
	memcpy(cp, data, size);
	*(uint32_t *)(cp + 16 + 4) = 0xfffffff8;
	write_all(bad, cp, size);
	ret = uwprof_pf_open(bad, &pf, err, sizeof(err));
	ok(ret == -EINVAL && strstr(err, "offset 16"), "huge record size refused: %s", err);
	memcpy(cp, data, size);
	*(uint32_t *)(cp + 16 + 4) = 13;
	write_all(bad, cp, size);
	ok(uwprof_pf_open(bad, &pf, err, sizeof(err)) == -EINVAL,
	   "unaligned record size refused: %s", err);
	memcpy(cp, data, size);
	cp[0] = 'X';
	write_all(bad, cp, size);
	ok(uwprof_pf_open(bad, &pf, err, sizeof(err)) == -EINVAL &&
	   strstr(err, "magic"), "bad magic refused");
	{
		/* The first MAPS record's nr_maps made huge. */
		size_t off = 16;

		memcpy(cp, data, size);
		while (off + 8 <= size && *(uint32_t *)(cp + off) != UWPROF_PF_MAPS)
			off += *(uint32_t *)(cp + off + 4);
		*(uint32_t *)(cp + off + 8 + 12) = 0x10000000;
		write_all(bad, cp, size);
		ret = uwprof_pf_open(bad, &pf, err, sizeof(err));
		ok(ret == -EINVAL && strstr(err, "maps record"),
		   "maps count beyond its record refused: %s", err);
	}
	{
		/* The first JITSYMS record's count made huge, then one more. */
		size_t off = 16;

		memcpy(cp, data, size);
		while (off + 8 <= size && *(uint32_t *)(cp + off) != UWPROF_PF_JITSYMS)
			off += *(uint32_t *)(cp + off + 4);
		*(uint64_t *)(cp + off + 8 + 8) = 1ULL << 40;
		write_all(bad, cp, size);
		ret = uwprof_pf_open(bad, &pf, err, sizeof(err));
		ok(ret == -EINVAL && strstr(err, "jitsyms record"),
		   "JIT symbol count beyond its record refused: %s", err);
		*(uint64_t *)(cp + off + 8 + 8) = 3;
		write_all(bad, cp, size);
		ret = uwprof_pf_open(bad, &pf, err, sizeof(err));
		ok(ret == -EINVAL && strstr(err, "jitsyms record"),
		   "one JIT symbol more than the record holds refused: %s", err);
	}
	{
		/*
		 * The PYCODE record's table length made huge, then longer
		 * than the 7 bytes left (the table's 3 and the padding).
		 */
		size_t off = 16;

		memcpy(cp, data, size);
		while (off + 8 <= size && *(uint32_t *)(cp + off) != UWPROF_PF_PYCODE)
			off += *(uint32_t *)(cp + off + 4);
		/* fixed part, "Widget.größe" (14 bytes), "/srv/app.py" (11) */
		off += 8 + sizeof(struct uwprof_pf_pycode_fixed) + 4 + 14 + 4 + 11;
		*(uint64_t *)(cp + off) = 1ULL << 40;
		write_all(bad, cp, size);
		ret = uwprof_pf_open(bad, &pf, err, sizeof(err));
		ok(ret == -EINVAL && strstr(err, "pycode record"),
		   "PYCODE table length beyond its record refused: %s", err);
		*(uint64_t *)(cp + off) = 8;
		write_all(bad, cp, size);
		ret = uwprof_pf_open(bad, &pf, err, sizeof(err));
		ok(ret == -EINVAL && strstr(err, "pycode record"),
		   "PYCODE table one byte beyond its record refused: %s", err);
	}
	free(cp);
	free(data);
	snprintf(bad, sizeof(bad), "%s/steady.data", argv[1]);
	steady_roundtrip(bad);
	unlink(bad);
	v1_read(argc == 3 ? argv[2] : NULL);

	/* Aborted and failed writers leave nothing behind. */
	snprintf(sub, sizeof(sub), "%s/sub", argv[1]);
	mkdir(sub, 0755);
	snprintf(bad, sizeof(bad), "%s/never.data", sub);
	ok(uwprof_pfw_open(&w, bad, &h) == 0, "writer opens in a fresh directory");
	uwprof_pfw_abort(&w);
	ok(dir_entries(sub) == 0, "abort leaves the directory empty");
	snprintf(bad, sizeof(bad), "%s/missing-dir/x.data", argv[1]);
	ret = uwprof_pfw_open(&w, bad, &h);
	ok(ret == -ENOENT && strstr(w.err, "missing-dir"),
	   "missing directory fails at open: %s", w.err);
	ok(uwprof_pfw_commit(&w) == ret, "commit after a failed open fails the same");
	snprintf(bad, sizeof(bad), "/proc/self/uwprof.data");
	ret = uwprof_pfw_open(&w, bad, &h);
	ok(ret < 0, "unwritable directory fails at open: %s", w.err);
	uwprof_pfw_abort(&w);
	if (!access("/dev/full", W_OK)) {
		/* ENOSPC at commit: reproduce it with the output fd on /dev/full. */
		snprintf(bad, sizeof(bad), "%s/full.data", sub);
		ok(uwprof_pfw_open(&w, bad, &h) == 0, "writer opens for the ENOSPC case");
		close(w.out.fd);
		w.out.fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
		ret = uwprof_pfw_commit(&w);
		ok(ret == -ENOSPC && access(bad, F_OK) && dir_entries(sub) == 0,
		   "ENOSPC fails the commit, nothing left (%s)", w.err);
	} else {
		ok(1, "ENOSPC at commit # SKIP no /dev/full");
		ok(1, "ENOSPC cleanup # SKIP no /dev/full");
	}
	afile_tests(sub);
	mode_tests(sub);
	pyinterp_tests(sub);
	return tap_done();
}
