// SPDX-License-Identifier: GPL-2.0
/*
 * pprof writer (see pprof.h): a minimal protobuf encoder (varints,
 * length-delimited fields, packed repeated varints) over a growable
 * buffer, the profile.proto messages built from the report model, and a
 * gzip stream through zlib. Called from the report command.
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
 *   Function:  1 id, 2 name, 3 system_name, 4 filename
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "cgroup.h"
#include "pprof.h"
#include "profile_file.h"
#include "report_model.h"
#include "vec.h"

struct pb {
	uint8_t		*p;
	size_t		len;
	size_t		cap;
	int		err;		/* -ENOMEM, sticky */
};

static void pb_reserve(struct pb *b, size_t n)
{
	if (!b->err && VEC_RESERVE(b->p, b->cap, b->len + n, 4096))
		b->err = -ENOMEM;
}

static void pb_varint(struct pb *b, uint64_t v)
{
	pb_reserve(b, 10);
	if (b->err)
		return;
	while (v >= 0x80) {
		b->p[b->len++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	b->p[b->len++] = (uint8_t)v;
}

static void pb_key(struct pb *b, unsigned int field, unsigned int wire)
{
	pb_varint(b, (uint64_t)field << 3 | wire);
}

/* A varint field; proto3 leaves zero values out. */
static void pb_uint(struct pb *b, unsigned int field, uint64_t v)
{
	if (!v)
		return;
	pb_key(b, field, 0);
	pb_varint(b, v);
}

static void pb_bytes(struct pb *b, unsigned int field, const void *p,
		     size_t n)
{
	pb_key(b, field, 2);
	pb_varint(b, n);
	pb_reserve(b, n);
	if (b->err)
		return;
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

/* Append a finished sub-message and empty it for reuse. */
static void pb_msg(struct pb *b, unsigned int field, struct pb *sub)
{
	if (sub->err)
		b->err = sub->err;
	pb_bytes(b, field, sub->p, sub->len);
	sub->len = 0;
}

/* The string table, with an index from string to position. */
struct strtab {
	char		**v;
	size_t		n;
	size_t		cap;
	uint32_t	*slot;		/* position + 1, 0: empty */
	size_t		nslot;		/* power of two */
};

static uint64_t str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 0x100000001b3ULL;
	return h;
}

static int strtab_grow(struct strtab *t)
{
	size_t n = t->nslot ? t->nslot * 2 : 1024, i, j;
	uint32_t *s = calloc(n, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (i = 0; i < t->n; i++) {
		j = str_hash(t->v[i]) & (n - 1);
		while (s[j])
			j = (j + 1) & (n - 1);
		s[j] = (uint32_t)i + 1;
	}
	free(t->slot);
	t->slot = s;
	t->nslot = n;
	return 0;
}

/* Index of 's' in the table, added when new; -ENOMEM on failure. */
static long strtab_id(struct strtab *t, const char *s)
{
	size_t j;

	if ((t->n + 1) * 2 > t->nslot && strtab_grow(t))
		return -ENOMEM;
	j = str_hash(s) & (t->nslot - 1);
	while (t->slot[j]) {
		if (!strcmp(t->v[t->slot[j] - 1], s))
			return t->slot[j] - 1;
		j = (j + 1) & (t->nslot - 1);
	}
	if (VEC_RESERVE(t->v, t->cap, t->n + 1, 1024))
		return -ENOMEM;
	t->v[t->n] = strdup(s);
	if (!t->v[t->n])
		return -ENOMEM;
	t->slot[j] = (uint32_t)t->n + 1;
	return (long)t->n++;
}

static void strtab_free(struct strtab *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->v[i]);
	free(t->v);
	free(t->slot);
}

struct pprof_ctx {
	const struct uwprof_rep *r;
	struct strtab	strs;
	struct strtab	funcs;		/* "name\x01file" keys, id = pos + 1 */
	struct pb	out;
	struct pb	sub;
	struct pb	sub2;
	int		err;
};

static uint64_t str_of(struct pprof_ctx *c, const char *s)
{
	long id = strtab_id(&c->strs, s ? s : "");

	if (id < 0) {
		c->err = -ENOMEM;
		return 0;
	}
	return (uint64_t)id;
}

static void value_type(struct pprof_ctx *c, unsigned int field,
		       const char *type, const char *unit)
{
	pb_uint(&c->sub, 1, str_of(c, type));
	pb_uint(&c->sub, 2, str_of(c, unit));
	pb_msg(&c->out, field, &c->sub);
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
		pb_uint(&c->sub, 1, i + 1);
		pb_uint(&c->sub, 2, m->start);
		pb_uint(&c->sub, 3, m->end);
		pb_uint(&c->sub, 4, m->offset);
		pb_uint(&c->sub, 5, str_of(c, m->path ? m->path : "[anon]"));
		pb_uint(&c->sub, 6, str_of(c, hex));
		pb_uint(&c->sub, 7, 1);
		pb_uint(&c->sub, 8, c->r->lines);
		pb_uint(&c->sub, 9, c->r->lines);
		pb_msg(&c->out, 3, &c->sub);
	}
}

/* Function id for a frame; emits the Function message when new. */
static uint64_t func_of(struct pprof_ctx *c, const struct uwprof_rep_frame *f)
{
	const char *file = c->r->lines && f->file ? f->file : "";
	char *key;
	long id;
	size_t before = c->funcs.n;

	if (asprintf(&key, "%s%s\x01%s", f->kernel ? "k\x01" : "", f->label,
		     file) < 0) {
		c->err = -ENOMEM;
		return 0;
	}
	id = strtab_id(&c->funcs, key);
	free(key);
	if (id < 0) {
		c->err = -ENOMEM;
		return 0;
	}
	if (c->funcs.n != before) {
		pb_uint(&c->sub2, 1, (uint64_t)id + 1);
		pb_uint(&c->sub2, 2, str_of(c, f->label));
		pb_uint(&c->sub2, 3, str_of(c, f->label));
		pb_uint(&c->sub2, 4, str_of(c, file));
		pb_msg(&c->out, 5, &c->sub2);
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
		pb_uint(&c->sub, 1, i + 1);
		pb_uint(&c->sub, 2, f->map >= 0 ? (uint64_t)f->map + 1 : 0);
		pb_uint(&c->sub, 3, f->ip);
		pb_uint(&c->sub2, 1, fid);
		if (c->r->lines)
			pb_uint(&c->sub2, 2, f->line);
		pb_msg(&c->sub, 4, &c->sub2);
		pb_msg(&c->out, 4, &c->sub);
	}
}

/*
 * The container labels: the cgroup path, and the container id when the
 * path names one (the label names Pyroscope's and Parca's agents use).
 */
static void cgroup_labels(struct pprof_ctx *c, const char *path)
{
	char id[UWPROF_CONTAINER_ID_LEN];

	pb_uint(&c->sub2, 1, str_of(c, "cgroup"));
	pb_uint(&c->sub2, 2, str_of(c, path));
	pb_msg(&c->sub, 3, &c->sub2);
	if (!uwprof_container_id(path, id))
		return;
	pb_uint(&c->sub2, 1, str_of(c, "container_id"));
	pb_uint(&c->sub2, 2, str_of(c, id));
	pb_msg(&c->sub, 3, &c->sub2);
}

static void put_samples(struct pprof_ctx *c)
{
	const struct uwprof_rep_sample *s;
	struct pb ids = { 0 };
	uint64_t ns;
	uint32_t j;
	size_t i;

	for (i = 0; i < c->r->nr_samples; i++) {
		s = &c->r->samples[i];
		ids.len = 0;
		for (j = 0; j < s->nr_kernel + s->nr_user; j++)
			pb_varint(&ids, (uint64_t)s->frames[j] + 1);
		if (ids.err)
			c->err = ids.err;
		pb_bytes(&c->sub, 1, ids.p ? ids.p : (uint8_t *)"", ids.len);
		/* cycles are no time: estimated from the rate (weight_ns) */
		ns = s->weight_ns;
		ids.len = 0;
		pb_varint(&ids, 1);
		if (uwprof_rep_by_time(c->r)) {
			pb_varint(&ids, uwprof_rep_off_cpu(s) ? 0 : ns);
			pb_varint(&ids, uwprof_rep_off_cpu(s) ? ns : 0);
		} else {
			pb_varint(&ids, ns);
		}
		pb_bytes(&c->sub, 2, ids.p, ids.len);
		pb_uint(&c->sub2, 1, str_of(c, "pid"));
		pb_key(&c->sub2, 3, 0);
		pb_varint(&c->sub2, s->pid);
		pb_msg(&c->sub, 3, &c->sub2);
		pb_uint(&c->sub2, 1, str_of(c, "thread"));
		pb_uint(&c->sub2, 2, str_of(c, s->comm));
		pb_msg(&c->sub, 3, &c->sub2);
		pb_uint(&c->sub2, 1, str_of(c, "stop"));
		pb_uint(&c->sub2, 2, str_of(c, uwprof_pf_stop_name(
			s->flags & UWPROF_SAMPLE_STOP_MASK)));
		pb_msg(&c->sub, 3, &c->sub2);
		if (s->cgroup)
			cgroup_labels(c, s->cgroup);
		if (s->flags & UWPROF_SAMPLE_FP_USED) {
			pb_uint(&c->sub2, 1, str_of(c, "fp_fallback"));
			pb_uint(&c->sub2, 2, str_of(c, "yes"));
			pb_msg(&c->sub, 3, &c->sub2);
		}
		pb_msg(&c->out, 2, &c->sub);
	}
	free(ids.p);
}

static int gzip_to(FILE *f, const uint8_t *p, size_t n)
{
	uint8_t buf[65536];
	z_stream z;
	int zr, ret = 0;
	size_t have;

	memset(&z, 0, sizeof(z));
	/* windowBits 15 + 16: a gzip header and trailer, as pprof expects */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	z.next_in = (uint8_t *)p;
	z.avail_in = (uInt)n;	/* profiles stay far below 4 GiB */
	do {
		z.next_out = buf;
		z.avail_out = sizeof(buf);
		zr = deflate(&z, Z_FINISH);
		if (zr == Z_STREAM_ERROR) {
			ret = -EIO;
			break;
		}
		have = sizeof(buf) - z.avail_out;
		if (have && fwrite(buf, 1, have, f) != have) {
			ret = -(errno ? errno : EIO);
			break;
		}
	} while (zr != Z_STREAM_END);
	deflateEnd(&z);
	return ret;
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
	pb_uint(&c.out, 9, h->start_realtime_ns);
	if (r->pf->has_stats && r->pf->stats.end_mono_ns > h->start_mono_ns)
		pb_uint(&c.out, 10, r->pf->stats.end_mono_ns - h->start_mono_ns);
	value_type(&c, 11, "cpu", "nanoseconds");
	pb_uint(&c.out, 12, h->freq_hz ? 1000000000ULL / h->freq_hz : 0);
	/* The table last: only now is it complete. */
	for (i = 0; i < c.strs.n; i++)
		pb_bytes(&c.out, 6, c.strs.v[i], strlen(c.strs.v[i]));
	ret = c.err ? c.err : c.out.err ? c.out.err : c.sub.err ? c.sub.err :
	      c.sub2.err;
	if (!ret)
		ret = gzip_to(f, c.out.p, c.out.len);
	free(c.out.p);
	free(c.sub.p);
	free(c.sub2.p);
	strtab_free(&c.strs);
	strtab_free(&c.funcs);
	return ret;
}
