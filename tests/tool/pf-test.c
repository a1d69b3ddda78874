// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of the profile file (tool/profile_*.c), TAP output: a
 * written file reads back field for field; the mapping snapshot rules
 * around exec; every truncation and a set of corruptions are refused with
 * a message naming the offset, never crash; a failed or aborted writer
 * leaves nothing under the final name; a directory that cannot be written
 * fails at open; the output-file helper under it (tool/atomic_file.c)
 * replaces a file whole, with the umask's mode, or leaves it untouched.
 *
 * Usage: pf-test DIR   (a writable scratch directory)
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
	struct uwprof_pf_stats st = { .samples = 1, .lost = 3 };

	if (uwprof_pfw_open(&w, path, &h))
		return -1;
	uwprof_pfw_object(&w, &o1, "/usr/bin/demo", NULL, 0);
	uwprof_pfw_object(&w, &o2, "[vdso]", vdso_img, sizeof(vdso_img));
	uwprof_pfw_maps(&w, 1500, 42, "demo", m1, 2);
	uwprof_pfw_thread(&w, 1600, 42, 43, "worker");
	uwprof_pfw_sample(&w, &s.s);
	uwprof_pfw_lost(&w, 2100, 1, 3);
	uwprof_pfw_exit(&w, 3000, 42, 1);
	uwprof_pfw_maps(&w, 3500, 42, "demo2", m2, 1);
	uwprof_pfw_ksyms(&w, ks, 2);
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

	if (argc != 2) {
		fprintf(stderr, "usage: pf-test DIR\n");
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
	ok(pf->nr_samples == 1 && pf->samples[0].pid == 42 &&
	   pf->samples[0].tid == 43 && pf->samples[0].nr_kernel == 1 &&
	   pf->samples[0].nr_user == 2 && pf->samples[0].ips[2] == 0x400020 &&
	   pf->samples[0].period == 1001001, "sample read back");
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
	free(cp);
	free(data);

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
	return tap_done();
}
