// SPDX-License-Identifier: GPL-2.0
/*
 * Writes a synthetic uwprof profile through the tool's own profile writer
 * (profile_file.h), from a line-based spec, so the reporting commands can
 * be tested without the kernel module:
 *
 *	header <event cpu-clock|cycles> <freq_hz> <cmdline...>
 *	obj <id> <path> <build-id hex | -> [<image file for the vDSO>]
 *	map <pid> <time_ns> <comm> <start> <end> <offset> <bias> <obj id>
 *	thread <pid> <tid> <comm>
 *	cgroup <pid> <path>   (the process's cgroup v2 path)
 *	ksym <addr> <size> <name> [<[module]>]
 *	jit <pid> <start> <size> <name> [<start> <size> <name>]...
 *	pycode <pid> <time_ns> <addr> <fingerprint> <size> <firstlineno>
 *	       <firsttraceable> <qualname> <filename> <linetable hex | ->
 *	sample <pid> <tid> <cpu> <time_ns> <period> <flags> <nr_kernel> <ip>...
 *	lost <count>
 *	throttled <count>	(the module's skipped_throttle, in STATS)
 *	kthrottled <count>	(the module's kernel_throttles, in STATS)
 *
 * Numbers are C literals (0x... allowed). One 'map' line is one mapping;
 * consecutive lines with the same pid and time form one snapshot. One
 * 'jit' line is one JITSYMS record (names without spaces).
 *
 *	gen SPEC OUT		write the profile
 *	gen --vdso OUT		dump this process's vDSO image to OUT
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/utsname.h>

#include "profile_file.h"

#define MAX_TOK		300
#define MAX_MAPS	64

struct gen {
	struct uwprof_pfw	w;
	struct uwprof_pf_map	maps[MAX_MAPS];
	uint32_t		nr_maps;
	uint32_t		map_pid;
	uint64_t		map_time;
	char			map_comm[64];
	struct uwprof_pf_ksym	ksyms[256];
	char			*knames[256];
	uint32_t		nr_ksyms;
	uint64_t		samples;
	uint64_t		lost;
	uint64_t		throttled;
	uint64_t		kthrottled;
};

static int die(const char *what)
{
	fprintf(stderr, "gen: %s\n", what);
	return 1;
}

static int dump_vdso(const char *out)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	char line[512];
	unsigned long lo, hi;
	FILE *m, *f;
	int ret = 1;

	if (!base)
		return die("no vDSO in this process");
	m = fopen("/proc/self/maps", "r");
	if (!m)
		return die("cannot read /proc/self/maps");
	while (fgets(line, sizeof(line), m)) {
		if (sscanf(line, "%lx-%lx", &lo, &hi) != 2 || lo != base)
			continue;
		f = fopen(out, "w");
		if (f && fwrite((void *)lo, 1, hi - lo, f) == hi - lo &&
		    !fclose(f))
			ret = 0;
		break;
	}
	fclose(m);
	return ret ? die("cannot dump the vDSO") : 0;
}

static int hex_id(const char *s, uint8_t *out, uint32_t *n)
{
	*n = 0;
	if (!strcmp(s, "-"))
		return 0;
	while (s[0] && s[1] && *n < UWPROF_PF_BUILD_ID_MAX) {
		if (sscanf(s, "%2hhx", &out[*n]) != 1)
			return -1;
		(*n)++;
		s += 2;
	}
	return 0;
}

static void *slurp(const char *path, size_t *size)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	n = fseek(f, 0, SEEK_END) ? -1 : ftell(f);
	if (n > 0 && !fseek(f, 0, SEEK_SET)) {
		buf = malloc((size_t)n);
		if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		*size = (size_t)n;
	}
	fclose(f);
	return buf;
}

static int flush_maps(struct gen *g)
{
	int ret = 0;

	if (g->nr_maps)
		ret = uwprof_pfw_maps(&g->w, g->map_time, g->map_pid,
				      g->map_comm, g->maps, g->nr_maps);
	g->nr_maps = 0;
	return ret;
}

static int do_line(struct gen *g, char **t, int n)
{
	uint64_t v[MAX_TOK];
	int i;

	for (i = 1; i < n && i < MAX_TOK; i++)
		v[i] = strtoull(t[i], NULL, 0);
	if (strcmp(t[0], "map") && flush_maps(g))
		return -1;
	if (!strcmp(t[0], "obj") && n >= 4) {
		struct uwprof_pf_obj_fixed o = { .object_id = v[1],
						 .arch = UWPROF_ARCH_X86_64 };
		void *img = NULL;
		size_t size = 0;
		int ret;

		if (hex_id(t[3], o.build_id, &o.build_id_size))
			return -1;
		if (n >= 5) {
			img = slurp(t[4], &size);
			if (!img)
				return -1;
			o.flags |= UWPROF_PF_OBJ_VDSO;
		}
		ret = uwprof_pfw_object(&g->w, &o, t[2], img, size);
		free(img);
		return ret;
	}
	if (!strcmp(t[0], "map") && n == 9) {
		if (g->nr_maps && (g->map_pid != v[1] || g->map_time != v[2]) &&
		    flush_maps(g))
			return -1;
		if (g->nr_maps == MAX_MAPS)
			return -1;
		g->map_pid = (uint32_t)v[1];
		g->map_time = v[2];
		snprintf(g->map_comm, sizeof(g->map_comm), "%s", t[3]);
		g->maps[g->nr_maps++] = (struct uwprof_pf_map){
			.start = v[4], .end = v[5], .offset = v[6],
			.bias = v[7], .object_id = v[8] };
		return 0;
	}
	if (!strcmp(t[0], "thread") && n == 4)
		return uwprof_pfw_thread(&g->w, 0, (uint32_t)v[1],
					 (uint32_t)v[2], t[3]);
	if (!strcmp(t[0], "cgroup") && n == 3)
		return uwprof_pfw_cgroup(&g->w, 0, (uint32_t)v[1], t[2]);
	if (!strcmp(t[0], "ksym") && n >= 4 && g->nr_ksyms < 256) {
		char *name;

		if (n >= 5) {
			if (asprintf(&name, "%s %s", t[3], t[4]) < 0)
				return -1;
		} else {
			name = strdup(t[3]);
		}
		g->knames[g->nr_ksyms] = name;
		g->ksyms[g->nr_ksyms++] = (struct uwprof_pf_ksym){
			.addr = v[1], .size = v[2], .name = name };
		return 0;
	}
	if (!strcmp(t[0], "jit") && n >= 5 && (n - 2) % 3 == 0 &&
	    (n - 2) / 3 <= 32) {
		struct uwprof_pf_jitsym js[32];
		int k, nr = (n - 2) / 3;

		for (k = 0; k < nr; k++)
			js[k] = (struct uwprof_pf_jitsym){
				.pid = (uint32_t)v[1], .start = v[2 + 3 * k],
				.size = v[3 + 3 * k], .name = t[4 + 3 * k],
				.len = (uint32_t)strlen(t[4 + 3 * k]) };
		return uwprof_pfw_jitsyms(&g->w, 0, (uint32_t)v[1],
					  UWPROF_PF_JIT_PERF_MAP, js,
					  (uint64_t)nr);
	}
	if (!strcmp(t[0], "pycode") && n == 11) {
		struct uwprof_pf_pycode c = {
			.pid = (uint32_t)v[1], .time_ns = v[2], .addr = v[3],
			.fingerprint = (uint32_t)v[4], .size = (uint32_t)v[5],
			.firstlineno = (int32_t)v[6],
			.firsttraceable = (int32_t)v[7], .qualname = t[8],
			.filename = t[9],
		};
		uint8_t table[4096];
		size_t k, len = strcmp(t[10], "-") ? strlen(t[10]) / 2 : 0;
		unsigned int b;

		if (len > sizeof(table))
			return -1;
		for (k = 0; k < len; k++) {
			if (sscanf(t[10] + 2 * k, "%2x", &b) != 1)
				return -1;
			table[k] = (uint8_t)b;
		}
		c.linetable = table;
		c.linetable_len = (uint32_t)len;
		return uwprof_pfw_pycode(&g->w, &c);
	}
	if (!strcmp(t[0], "sample") && n >= 8) {
		uint32_t nr = (uint32_t)(n - 8);
		struct uwprof_rec_sample *s = calloc(1, sizeof(*s) + 8 * nr);
		int ret;

		if (!s)
			return -1;
		s->hdr.type = UWPROF_REC_SAMPLE;
		s->hdr.size = (uint32_t)(sizeof(*s) + 8 * nr);
		s->pid = (uint32_t)v[1];
		s->tid = (uint32_t)v[2];
		s->cpu = (uint32_t)v[3];
		s->time_ns = v[4];
		s->period = v[5];
		s->flags = (uint32_t)v[6];
		s->nr_kernel = (uint16_t)v[7];
		s->nr_user = (uint16_t)(nr - v[7]);
		for (i = 0; i < (int)nr; i++)
			s->ips[i] = v[8 + i];
		ret = uwprof_pfw_sample(&g->w, s);
		free(s);
		g->samples++;
		return ret;
	}
	if (!strcmp(t[0], "throttled") && n == 2) {
		g->throttled += v[1];
		return 0;
	}
	if (!strcmp(t[0], "kthrottled") && n == 2) {
		g->kthrottled += v[1];
		return 0;
	}
	if (!strcmp(t[0], "lost") && n == 2) {
		g->lost += v[1];
		return uwprof_pfw_lost(&g->w, 0, 0, v[1]);
	}
	return -1;
}

int main(int argc, char **argv)
{
	struct uwprof_pfw_header_in h = { 0 };
	struct utsname u;
	struct uwprof_pf_stats st = { 0 };
	char line[8192], *t[MAX_TOK], *sp;
	struct gen g = { 0 };
	int n, lineno = 0, ret = 0;
	uint32_t i;
	FILE *f;

	if (argc == 3 && !strcmp(argv[1], "--vdso"))
		return dump_vdso(argv[2]);
	if (argc != 3)
		return die("usage: gen SPEC OUT | gen --vdso OUT");
	f = fopen(argv[1], "r");
	if (!f)
		return die("cannot open the spec");
	/* The header line comes first: the writer wants it at open. */
	if (!fgets(line, sizeof(line), f) ||
	    strncmp(line, "header ", 7))
		return die("spec must start with a header line");
	line[strcspn(line, "\n")] = 0;
	t[0] = strtok_r(line + 7, " ", &sp);
	t[1] = strtok_r(NULL, " ", &sp);
	h.fixed.arch = UWPROF_ARCH_X86_64;
	h.fixed.event = t[0] && !strcmp(t[0], "cycles") ? UWPROF_PF_EV_CYCLES :
			UWPROF_PF_EV_CPU_CLOCK;
	h.fixed.freq_hz = t[1] ? (uint32_t)strtoul(t[1], NULL, 0) : 1000;
	h.fixed.max_depth = 127;
	h.fixed.page_size = 4096;
	h.fixed.abi_version = UWPROF_ABI_VERSION;
	h.fixed.start_realtime_ns = 1700000000000000000ULL;
	h.cmdline = sp ? sp : "";
	/* recorded here: this host's kallsyms may describe its kernel ips */
	if (uname(&u))
		return die("uname failed");
	h.hostname = u.nodename;
	h.release = u.release;
	if (uwprof_pfw_open(&g.w, argv[2], &h)) {
		fprintf(stderr, "gen: %s\n", g.w.err);
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		line[strcspn(line, "\n")] = 0;
		n = 0;
		for (t[n] = strtok_r(line, " ", &sp); t[n] && n < MAX_TOK - 1;
		     t[++n] = strtok_r(NULL, " ", &sp))
			;
		if (!n || t[0][0] == '#')
			continue;
		if (do_line(&g, t, n)) {
			fprintf(stderr, "gen: spec line %d: bad or failed (%s)\n",
				lineno + 1, g.w.error ? g.w.err : "syntax");
			ret = 1;
			break;
		}
	}
	fclose(f);
	if (!ret && flush_maps(&g))
		ret = 1;
	if (!ret && g.nr_ksyms && uwprof_pfw_ksyms(&g.w, g.ksyms, g.nr_ksyms))
		ret = 1;
	st.samples = g.samples;
	st.lost = g.lost;
	st.skipped_throttle = g.throttled;
	st.kernel_throttles = g.kthrottled;
	if (!ret && uwprof_pfw_stats(&g.w, &st))
		ret = 1;
	for (i = 0; i < g.nr_ksyms; i++)
		free(g.knames[i]);
	if (ret) {
		uwprof_pfw_abort(&g.w);
		return 1;
	}
	if (uwprof_pfw_commit(&g.w)) {
		fprintf(stderr, "gen: %s\n", g.w.err);
		return 1;
	}
	return 0;
}
