// SPDX-License-Identifier: GPL-2.0
/*
 * pprof writer (see pprof.h): the profile.proto messages built from the
 * report model with the protobuf encoder of pb.c, gzip-compressed.
 * Called from the report command and the agent.
 *
 * profile.proto field numbers used here:
 *   Profile:   1 sample_type, 2 sample, 3 mapping, 4 location, 5 function,
 *              6 string_table, 9 time_nanos, 10 duration_nanos,
 *              11 period_type, 12 period
 *   ValueType: 1 type, 2 unit (string table indexes)
 *   Sample:    1 location_id (packed, leaf first), 2 value (packed), 3 label
 *   Label:     1 key, 2 str, 3 num
 *   Mapping:   1 id, 2 memory_start, 3 memory_limit, 4 file_offset,
 *              5 filename, 6 build_id, 7 has_functions, 8 has_filenames,
 *              9 has_line_numbers
 *   Location:  1 id, 2 mapping_id, 3 address, 4 line
 *   Line:      1 function_id, 2 line
 *   Function:  1 id, 2 name, 3 system_name, 4 filename, 5 start_line
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "cgroup.h"
#include "pb.h"
#include "pprof.h"
#include "profile_file.h"
#include "report_model.h"
#include "strtab.h"

struct pprof_ctx {
	const struct uwprof_rep *r;
	struct uwprof_strtab	strs;
	/* "name\x01file" keys, id = pos + 1 */
	struct uwprof_strtab	funcs;
	struct uwprof_pb	out;
	struct uwprof_pb	sub;
	struct uwprof_pb	sub2;
	int		err;
};

static uint64_t str_of(struct pprof_ctx *c, const char *s)
{
	long id = uwprof_strtab_id(&c->strs, s ? s : "");

	if (id < 0) {
		c->err = -ENOMEM;
		return 0;
	}
	return (uint64_t)id;
}

static void value_type(struct pprof_ctx *c, unsigned int field,
		       const char *type, const char *unit)
{
	uwprof_pb_uint(&c->sub, 1, str_of(c, type));
	uwprof_pb_uint(&c->sub, 2, str_of(c, unit));
	uwprof_pb_msg(&c->out, field, &c->sub);
}

static void put_mappings(struct pprof_ctx *c)
{
	const struct uwprof_rep_map *m;
	char hex[2 * 20 + 1];
	uint32_t k;
	size_t i;

	for (i = 0; i < c->r->nr_maps; i++) {
		m = &c->r->maps[i];
		for (k = 0; k < m->build_id_size; k++)
			snprintf(hex + 2 * k, 3, "%02x", m->build_id[k]);
		hex[2 * m->build_id_size] = 0;
		uwprof_pb_uint(&c->sub, 1, i + 1);
		uwprof_pb_uint(&c->sub, 2, m->start);
		uwprof_pb_uint(&c->sub, 3, m->end);
		uwprof_pb_uint(&c->sub, 4, m->offset);
		uwprof_pb_uint(&c->sub, 5,
			       str_of(c, m->path ? m->path : "[anon]"));
		uwprof_pb_uint(&c->sub, 6, str_of(c, hex));
		uwprof_pb_uint(&c->sub, 7, 1);
		uwprof_pb_uint(&c->sub, 8, c->r->lines);
		uwprof_pb_uint(&c->sub, 9, c->r->lines);
		uwprof_pb_msg(&c->out, 3, &c->sub);
	}
}

/*
 * A Python frame's function is its code object, whatever --lines says:
 * qualified name, file and first line, as pprof's Python profilers give.
 */
static const char *func_name(const struct uwprof_rep_frame *f)
{
	return f->python && f->sym ? f->sym : f->label;
}

static int with_line(const struct pprof_ctx *c, const struct uwprof_rep_frame *f)
{
	return c->r->lines || f->python;
}

/* Function id for a frame; emits the Function message when new. */
static uint64_t func_of(struct pprof_ctx *c, const struct uwprof_rep_frame *f)
{
	const char *file = with_line(c, f) && f->file ? f->file : "";
	const char *name = func_name(f);
	char *key;
	long id;
	size_t before = c->funcs.n;

	if (asprintf(&key, "%s%s\x01%s\x01%u",
		     f->kernel ? "k\x01" : f->python ? "p\x01" : "", name,
		     file, f->start_line) < 0) {
		c->err = -ENOMEM;
		return 0;
	}
	id = uwprof_strtab_id(&c->funcs, key);
	free(key);
	if (id < 0) {
		c->err = -ENOMEM;
		return 0;
	}
	if (c->funcs.n != before) {
		uwprof_pb_uint(&c->sub2, 1, (uint64_t)id + 1);
		uwprof_pb_uint(&c->sub2, 2, str_of(c, name));
		uwprof_pb_uint(&c->sub2, 3, str_of(c, name));
		uwprof_pb_uint(&c->sub2, 4, str_of(c, file));
		if (f->start_line)
			uwprof_pb_uint(&c->sub2, 5, f->start_line);
		uwprof_pb_msg(&c->out, 5, &c->sub2);
	}
	return (uint64_t)id + 1;
}

static void put_locations(struct pprof_ctx *c)
{
	const struct uwprof_rep_frame *f;
	uint64_t fid;
	size_t i;

	for (i = 0; i < c->r->nr_frames; i++) {
		f = &c->r->frames[i];
		/* Function messages go out before the location using them. */
		fid = func_of(c, f);
		uwprof_pb_uint(&c->sub, 1, i + 1);
		uwprof_pb_uint(&c->sub, 2,
			       f->map >= 0 ? (uint64_t)f->map + 1 : 0);
		uwprof_pb_uint(&c->sub, 3, f->ip);
		uwprof_pb_uint(&c->sub2, 1, fid);
		if (with_line(c, f))
			uwprof_pb_uint(&c->sub2, 2, f->line);
		uwprof_pb_msg(&c->sub, 4, &c->sub2);
		uwprof_pb_msg(&c->out, 4, &c->sub);
	}
}

/*
 * The container labels: the cgroup path, and the container id when the
 * path names one (the label names Pyroscope's and Parca's agents use).
 */
static void cgroup_labels(struct pprof_ctx *c, const char *path)
{
	char id[UWPROF_CONTAINER_ID_LEN];

	uwprof_pb_uint(&c->sub2, 1, str_of(c, "cgroup"));
	uwprof_pb_uint(&c->sub2, 2, str_of(c, path));
	uwprof_pb_msg(&c->sub, 3, &c->sub2);
	if (!uwprof_container_id(path, id))
		return;
	uwprof_pb_uint(&c->sub2, 1, str_of(c, "container_id"));
	uwprof_pb_uint(&c->sub2, 2, str_of(c, id));
	uwprof_pb_msg(&c->sub, 3, &c->sub2);
}

static void put_samples(struct pprof_ctx *c)
{
	const struct uwprof_rep_sample *s;
	struct uwprof_pb ids = { 0 };
	uint64_t ns;
	uint32_t j;
	size_t i;

	for (i = 0; i < c->r->nr_samples; i++) {
		s = &c->r->samples[i];
		ids.len = 0;
		for (j = 0; j < s->nr_kernel + s->nr_user; j++)
			uwprof_pb_varint(&ids, (uint64_t)s->frames[j] + 1);
		if (ids.err)
			c->err = ids.err;
		uwprof_pb_bytes(&c->sub, 1, ids.p, ids.len);
		/* cycles are no time: estimated from the rate (weight_ns) */
		ns = s->weight_ns;
		ids.len = 0;
		uwprof_pb_varint(&ids, 1);
		if (uwprof_rep_by_time(c->r)) {
			uwprof_pb_varint(&ids, uwprof_rep_off_cpu(s) ? 0 : ns);
			uwprof_pb_varint(&ids, uwprof_rep_off_cpu(s) ? ns : 0);
		} else {
			uwprof_pb_varint(&ids, ns);
		}
		uwprof_pb_bytes(&c->sub, 2, ids.p, ids.len);
		uwprof_pb_uint(&c->sub2, 1, str_of(c, "pid"));
		uwprof_pb_key(&c->sub2, 3, 0);
		uwprof_pb_varint(&c->sub2, s->pid);
		uwprof_pb_msg(&c->sub, 3, &c->sub2);
		uwprof_pb_uint(&c->sub2, 1, str_of(c, "thread"));
		uwprof_pb_uint(&c->sub2, 2, str_of(c, s->comm));
		uwprof_pb_msg(&c->sub, 3, &c->sub2);
		uwprof_pb_uint(&c->sub2, 1, str_of(c, "stop"));
		uwprof_pb_uint(&c->sub2, 2, str_of(c, uwprof_pf_stop_name(
			s->flags & UWPROF_SAMPLE_STOP_MASK)));
		uwprof_pb_msg(&c->sub, 3, &c->sub2);
		if (s->cgroup)
			cgroup_labels(c, s->cgroup);
		if (s->flags & UWPROF_SAMPLE_FP_USED) {
			uwprof_pb_uint(&c->sub2, 1, str_of(c, "fp_fallback"));
			uwprof_pb_uint(&c->sub2, 2, str_of(c, "yes"));
			uwprof_pb_msg(&c->sub, 3, &c->sub2);
		}
		uwprof_pb_msg(&c->out, 2, &c->sub);
	}
	free(ids.p);
}

int uwprof_pprof_write(const struct uwprof_rep *r, FILE *f)
{
	const struct uwprof_pf_header *h = &r->pf->hdr;
	struct pprof_ctx c = { .r = r };
	size_t i;
	int ret;

	str_of(&c, "");		/* string_table[0] must be empty */
	value_type(&c, 1, "samples", "count");
	value_type(&c, 1, "cpu", "nanoseconds");
	if (uwprof_rep_by_time(r))
		value_type(&c, 1, "off_cpu", "nanoseconds");
	put_samples(&c);
	put_mappings(&c);
	put_locations(&c);
	uwprof_pb_uint(&c.out, 9, h->start_realtime_ns);
	if (r->pf->has_stats && r->pf->stats.end_mono_ns > h->start_mono_ns)
		uwprof_pb_uint(&c.out, 10,
			       r->pf->stats.end_mono_ns - h->start_mono_ns);
	value_type(&c, 11, "cpu", "nanoseconds");
	uwprof_pb_uint(&c.out, 12, h->freq_hz ? 1000000000ULL / h->freq_hz : 0);
	/* The table last: only now is it complete. */
	for (i = 0; i < c.strs.n; i++)
		uwprof_pb_bytes(&c.out, 6, c.strs.v[i], strlen(c.strs.v[i]));
	ret = c.err ? c.err : c.out.err ? c.out.err : c.sub.err ? c.sub.err :
	      c.sub2.err;
	if (!ret)
		ret = uwprof_pb_gzip(f, c.out.p, c.out.len);
	free(c.out.p);
	free(c.sub.p);
	free(c.sub2.p);
	uwprof_strtab_free(&c.strs);
	uwprof_strtab_free(&c.funcs);
	return ret;
}
