// SPDX-License-Identifier: GPL-2.0
/*
 * What 'uwprof record' writes to the profile file besides samples and
 * mappings: the header (opening the file), the kernel symbols the
 * sampled kernel addresses fall in, and the final statistics; and the one
 * place a write error is reported.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "kallsyms.h"
#include "recorder.h"

static uint64_t real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* ---------------------------------------------------------- output file */

int rec_out(struct recorder *r, int ret)
{
	if (ret && !r->output_failed) {
		r->output_failed = 1;
		r->stop = 1;
		fprintf(stderr, "uwprof record: %s\n", r->w.err);
	}
	return ret;
}

/* ---------------------------------------------------------- kernel syms */

struct ksym_ent {
	uint64_t	addr;
	char		*name;		/* "name" or "name [module]" */
	size_t		name_len;	/* of the name alone */
};

/* By address; among aliases the one the report shows first. */
static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym_ent *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return uwprof_kallsyms_alias_cmp(x->name, x->name_len, y->name,
					 y->name_len);
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Stores the kallsyms entries that sampled kernel ips fall in. */
void rec_ksyms_out(struct recorder *r)
{
	struct ksym_ent *v = NULL;
	struct uwprof_pf_ksym *out = NULL;
	size_t n = 0, cap = 0, nips = 0, nout = 0, i, j, first, len, pos = 0;
	struct uwprof_kallsym k;
	uint64_t *ips = NULL;
	char *text;
	int ret;

	if (!r->kips.n || uwprof_kallsyms_read(&text, &len))
		return;
	while (uwprof_kallsyms_next(text, len, &pos, &k)) {
		if (!k.addr)
			continue;
		if (VEC_RESERVE(v, cap, n + 1, 65536))
			goto out;
		v[n].addr = k.addr;
		v[n].name_len = k.name_len;
		if (k.mod)
			ret = asprintf(&v[n].name, "%.*s [%.*s]", (int)k.name_len,
				       k.name, (int)k.mod_len, k.mod);
		else
			ret = asprintf(&v[n].name, "%.*s", (int)k.name_len,
				       k.name);
		if (ret < 0)
			goto out;
		n++;
	}
	if (!n) {
		if (!r->o.quiet)
			fprintf(stderr,
				"uwprof record: /proc/kallsyms shows no addresses (kptr_restrict): no kernel symbols stored\n");
		goto out;
	}
	qsort(v, n, sizeof(*v), ksym_cmp);
	ips = malloc(r->kips.n * sizeof(*ips));
	out = calloc(r->kips.n, sizeof(*out));
	if (!ips || !out)
		goto out;
	nips = uwprof_u64map_keys(&r->kips, ips);
	qsort(ips, nips, sizeof(*ips), u64_cmp);
	for (i = 0, j = 0; i < nips; i++) {
		/* j: the last entry at or below the ip, so j + 1 starts the next */
		while (j + 1 < n && v[j + 1].addr <= ips[i])
			j++;
		if (v[j].addr > ips[i])
			continue;
		if (nout && out[nout - 1].addr == v[j].addr)
			continue;
		for (first = j; first && v[first - 1].addr == v[j].addr; first--)
			;
		out[nout].addr = v[j].addr;
		out[nout].size = j + 1 < n ? v[j + 1].addr - v[j].addr : 0;
		out[nout].name = v[first].name;
		nout++;
	}
	rec_out(r, uwprof_pfw_ksyms(&r->w, out, nout));
out:
	free(text);
	for (i = 0; i < n; i++)
		free(v[i].name);
	free(v);
	free(ips);
	free(out);
}

/* ---------------------------------------------------- header and stats */

static char *join_argv(char **argv)
{
	size_t n = 1, i;
	char *s;

	for (i = 0; argv && argv[i]; i++)
		n += strlen(argv[i]) + 1;
	s = calloc(1, n);
	if (!s)
		return NULL;
	for (i = 0; argv && argv[i]; i++) {
		if (i)
			strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}

void rec_header_fill(struct recorder *r, uint32_t start_flags,
		     struct rec_hdr *hd)
{
	struct uwprof_pfw_header_in *h = &hd->h;
	struct utsname u;

	memset(hd, 0, sizeof(*hd));
	h->fixed.arch = r->arch;
	h->fixed.event = (uint16_t)r->o.event;
	h->fixed.freq_hz = r->o.freq;
	h->fixed.flags = (r->o.kernel ? UWPROF_PF_F_KERNEL : 0) |
			 ((start_flags & UWPROF_START_SYSTEM_WIDE) &&
			  r->o.mode == MODE_ALL ? UWPROF_PF_F_SYSTEM_WIDE : 0) |
			 (r->o.no_fp ? UWPROF_PF_F_NO_FP : 0) |
			 (r->o.off_cpu ? UWPROF_PF_F_OFF_CPU : 0);
	h->fixed.max_depth = r->o.depth;
	h->fixed.page_size = (uint32_t)sysconf(_SC_PAGESIZE);
	h->fixed.abi_version = r->dev.ver.abi_version;
	h->fixed.start_mono_ns = mono_ns();
	h->fixed.start_realtime_ns = real_ns();
	gethostname(hd->host, sizeof(hd->host) - 1);
	h->hostname = hd->host;
	if (!uname(&u))
		snprintf(hd->release, sizeof(hd->release), "%s", u.release);
	h->release = hd->release;
	h->cmdline = "";
}

int rec_output_open(struct recorder *r, uint32_t start_flags)
{
	struct rec_hdr hd;
	char *cmdline;
	int ret;

	rec_header_fill(r, start_flags, &hd);
	cmdline = join_argv(r->o.cmd);
	hd.h.cmdline = cmdline ? cmdline : "";
	ret = uwprof_pfw_open(&r->w, r->o.output, &hd.h);
	free(cmdline);
	if (ret)
		fprintf(stderr, "uwprof record: %s\n", r->w.err);
	return ret;
}

void rec_stats_out(struct recorder *r, const struct uwprof_stats *st)
{
	struct uwprof_pf_stats ps;
	int i;

	memset(&ps, 0, sizeof(ps));
	ps.end_mono_ns = r->t_end;
	ps.samples = r->samples;
	ps.lost = r->lost;
	ps.filtered = r->filtered;
	ps.events = st->events;
	ps.frames = st->frames;
	ps.fp_frames = st->fp_frames;
	ps.unknown_maps = st->unknown_maps;
	ps.skipped_throttle = st->skipped_throttle;
	ps.kernel_throttles = st->kernel_throttles;
	for (i = 0; i < UWPROF_PF_STOP__COUNT; i++)
		ps.stop[i] = r->stops[i];
	ps.snapshots = st->snapshots;
	ps.snapshot_bytes = st->snapshot_bytes;
	ps.snapshots_finished = r->snap_finished;
	ps.objects = r->nr_objs;
	ps.objects_no_table = r->objects_no_table;
	ps.maps_uploads = r->maps_uploads;
	rec_out(r, uwprof_pfw_stats(&r->w, &ps));
}

