// SPDX-License-Identifier: GPL-2.0
/*
 * OTLP writer (see otlp.h). The samples are sorted by process, sample
 * type, stack and attribute set; each run of equal ones becomes one
 * Sample with a value and a timestamp per report sample, as the spec asks
 * of samples of the same identity. Field numbers (opentelemetry-proto
 * v1.11.0; the dictionary's in otlp_dict.c):
 *   ExportProfilesServiceRequest: 1 resource_profiles, 2 dictionary
 *   ResourceProfiles: 1 resource, 2 scope_profiles
 *   Resource: 1 attributes (KeyValue: 1 key, 2 value)
 *   ScopeProfiles: 1 scope (InstrumentationScope: 1 name, 2 version),
 *                  2 profiles
 *   Profile: 1 sample_type, 2 samples, 3 time_unix_nano (fixed64),
 *            4 duration_nano, 5 period_type, 6 period
 *   ValueType: 1 type_strindex, 2 unit_strindex
 *   Sample: 1 stack_index, 2 attribute_indices, 4 values,
 *           5 timestamps_unix_nano (packed fixed64)
 * Called from the report command.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"
#include "otlp.h"
#include "otlp_dict.h"
#include "profile_file.h"
#include "report_model.h"

#ifndef UWPROF_VERSION
#define UWPROF_VERSION	"unknown"
#endif

/* Attributes a sample may carry: thread id and name, stop, fp, cgroup, id */
#define OTLP_MAX_ATTRS	6

struct otlp_rec {
	uint32_t	pid;
	uint32_t	off;		/* 1: off-CPU */
	uint32_t	stack;		/* stack_table index */
	uint32_t	set;		/* position in 'sets' */
	size_t		idx;		/* report sample: time order */
};

struct otlp_ctx {
	const struct uwprof_rep *r;
	struct uwprof_otlp_dict d;
	/* attribute_indices lists ("%x," each), position = set id */
	struct uwprof_strtab sets;
	struct otlp_rec	*recs;
	struct uwprof_pb out;	/* the request */
	struct uwprof_pb rp;	/* a ResourceProfiles */
	struct uwprof_pb sp;	/* its ScopeProfiles */
	struct uwprof_pb prof;	/* a Profile */
	struct uwprof_pb msg;	/* a Sample, Resource, scope, ... */
	struct uwprof_pb a;	/* a message or packed field inside */
	struct uwprof_pb b;	/* one level further */
	uint64_t	end_ns;		/* wall-clock end */
	int		err;
};

static int rec_cmp(const void *pa, const void *pb)
{
	const struct otlp_rec *x = pa, *y = pb;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	if (x->set != y->set)
		return x->set < y->set ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static uint64_t wall_ns(const struct uwprof_rep *r, uint64_t mono_ns)
{
	const struct uwprof_pf_header *h = &r->pf->hdr;

	return h->start_realtime_ns + (mono_ns - h->start_mono_ns);
}

/* The attribute set of report sample 's', as a position in c->sets. */
static uint32_t sample_set(struct otlp_ctx *c,
			   const struct uwprof_rep_sample *s)
{
	struct uwprof_otlp_dict *d = &c->d;
	char id[UWPROF_CONTAINER_ID_LEN], key[OTLP_MAX_ATTRS * 9 + 1];
	uint32_t v[OTLP_MAX_ATTRS];
	size_t n = 0, i, k = 0;
	long pos;

	v[n++] = uwprof_otlp_dict_attr_int(d, "thread.id", s->tid);
	v[n++] = uwprof_otlp_dict_attr_str(d, "thread.name", s->comm);
	v[n++] = uwprof_otlp_dict_attr_str(d, "uwprof.stop",
		uwprof_pf_stop_name(s->flags & UWPROF_SAMPLE_STOP_MASK));
	if (s->flags & UWPROF_SAMPLE_FP_USED)
		v[n++] = uwprof_otlp_dict_attr_bool(d, "uwprof.fp_fallback");
	if (s->cgroup) {
		v[n++] = uwprof_otlp_dict_attr_str(d, "uwprof.cgroup",
						   s->cgroup);
		if (uwprof_container_id(s->cgroup, id))
			v[n++] = uwprof_otlp_dict_attr_str(d, "container.id",
							   id);
	}
	for (i = 0; i < n; i++)
		k += (size_t)snprintf(key + k, sizeof(key) - k, "%x,", v[i]);
	pos = uwprof_strtab_id(&c->sets, key);
	if (pos < 0) {
		c->err = -ENOMEM;
		return 0;
	}
	return (uint32_t)pos;
}

/* A packed repeated int32 field of the indexes in a set key. */
static void put_set(struct uwprof_pb *b, unsigned int field, const char *key)
{
	struct uwprof_pb p = { 0 };
	char *end;

	while (*key) {
		uwprof_pb_varint(&p, strtoul(key, &end, 16));
		key = end + 1;
	}
	uwprof_pb_bytes(b, field, p.p, p.len);
	if (p.err && !b->err)
		b->err = p.err;
	uwprof_pb_free(&p);
}

static void value_type(struct otlp_ctx *c, unsigned int field,
		       const char *type, const char *unit)
{
	uwprof_pb_uint(&c->a, 1, uwprof_otlp_dict_str(&c->d, type));
	uwprof_pb_uint(&c->a, 2, uwprof_otlp_dict_str(&c->d, unit));
	uwprof_pb_msg(&c->prof, field, &c->a);
}

/* One Sample of the run recs[from, to) (same stack and attributes). */
static void put_sample(struct otlp_ctx *c, size_t from, size_t to)
{
	const struct otlp_rec *e = &c->recs[from];
	const struct uwprof_rep_sample *s;
	size_t i;

	uwprof_pb_uint(&c->msg, 1, e->stack);
	put_set(&c->msg, 2, c->sets.v[e->set]);
	for (i = from; i < to; i++)
		uwprof_pb_varint(&c->a,
				 c->r->samples[c->recs[i].idx].weight_ns);
	uwprof_pb_bytes(&c->msg, 4, c->a.p, c->a.len);
	c->a.len = 0;
	for (i = from; i < to; i++) {
		s = &c->r->samples[c->recs[i].idx];
		uwprof_pb_raw64(&c->a, wall_ns(c->r, s->time_ns));
	}
	uwprof_pb_bytes(&c->msg, 5, c->a.p, c->a.len);
	c->a.len = 0;
	uwprof_pb_msg(&c->prof, 2, &c->msg);
}

/* The Profile of recs[from, to): one process, one sample type. */
static void put_profile(struct otlp_ctx *c, size_t from, size_t to)
{
	const struct uwprof_pf_header *h = &c->r->pf->hdr;
	const struct otlp_rec *x, *y;
	size_t i, run = from;

	if (c->recs[from].off) {
		value_type(c, 1, "off_cpu", "nanoseconds");
	} else {
		value_type(c, 1, "cpu", "nanoseconds");
	}
	for (i = from + 1; i <= to; i++) {
		x = &c->recs[run];
		y = &c->recs[i];
		if (i < to && x->stack == y->stack && x->set == y->set)
			continue;
		put_sample(c, run, i);
		run = i;
	}
	uwprof_pb_fixed64(&c->prof, 3, h->start_realtime_ns);
	uwprof_pb_uint(&c->prof, 4, c->end_ns - h->start_realtime_ns);
	if (!c->recs[from].off && h->freq_hz) {
		value_type(c, 5, "cpu", "nanoseconds");
		uwprof_pb_uint(&c->prof, 6, 1000000000ULL / h->freq_hz);
	}
	uwprof_pb_msg(&c->sp, 2, &c->prof);
}

/*
 * The executable of process 'pid': the object of the lowest mapping of
 * its first mapping snapshot (the first line of /proc/PID/maps, the
 * executable's in every layout Linux gives), or NULL.
 */
static const char *proc_exe(const struct uwprof_rep *r, uint32_t pid)
{
	const struct uwprof_pf *pf = r->pf;
	const struct uwprof_pf_object *o;
	size_t i;
	uint32_t k;

	for (i = 0; i < pf->nr_maps && pf->maps[i].pid <= pid; i++) {
		if (pf->maps[i].pid != pid)
			continue;
		for (k = 0; k < pf->maps[i].nr_maps; k++) {
			if (!pf->maps[i].maps[k].object_id)
				continue;
			o = uwprof_pf_object_find(pf,
					pf->maps[i].maps[k].object_id);
			if (o && !(o->flags & UWPROF_PF_OBJ_VDSO))
				return o->path;
		}
		return NULL;
	}
	return NULL;
}

/* A Resource attribute (KeyValue), with a string or an int value. */
static void res_attr(struct otlp_ctx *c, const char *key, const char *s,
		     int64_t v)
{
	uwprof_pb_str(&c->a, 1, key);
	if (s) {
		uwprof_pb_str(&c->b, 1, s);
	} else {
		uwprof_pb_key(&c->b, 3, UWPROF_PB_VARINT);
		uwprof_pb_varint(&c->b, (uint64_t)v);
	}
	uwprof_pb_msg(&c->a, 2, &c->b);
	uwprof_pb_msg(&c->msg, 1, &c->a);
}

/* The ResourceProfiles of recs[from, to), all of one process. */
static void put_resource(struct otlp_ctx *c, size_t from, size_t to)
{
	const struct uwprof_rep *r = c->r;
	uint32_t pid = c->recs[from].pid;
	const char *exe = proc_exe(r, pid), *name;
	size_t i, run = from;

	if (r->pf->hdr.hostname && *r->pf->hdr.hostname)
		res_attr(c, "host.name", r->pf->hdr.hostname, 0);
	res_attr(c, "process.pid", NULL, pid);
	name = exe ? uwprof_rep_basename(exe) :
	       uwprof_pf_comm(r->pf, pid, pid, 0);
	if (name)
		res_attr(c, "process.executable.name", name, 0);
	if (exe)
		res_attr(c, "process.executable.path", exe, 0);
	uwprof_pb_msg(&c->rp, 1, &c->msg);
	uwprof_pb_str(&c->msg, 1, "uwprof");
	uwprof_pb_str(&c->msg, 2, UWPROF_VERSION);
	uwprof_pb_msg(&c->sp, 1, &c->msg);
	for (i = from + 1; i <= to; i++) {
		if (i < to && c->recs[i].off == c->recs[run].off)
			continue;
		put_profile(c, run, i);
		run = i;
	}
	uwprof_pb_msg(&c->rp, 2, &c->sp);
	uwprof_pb_msg(&c->out, 1, &c->rp);
}

/* Every sample's stack and attribute set; the records sorted. */
static void index_samples(struct otlp_ctx *c)
{
	const struct uwprof_rep *r = c->r;
	const struct uwprof_rep_sample *s;
	uint64_t end = r->pf->hdr.start_mono_ns;
	size_t i;

	if (r->pf->has_stats && r->pf->stats.end_mono_ns > end)
		end = r->pf->stats.end_mono_ns;
	c->recs = calloc(r->nr_samples + 1, sizeof(*c->recs));
	if (!c->recs) {
		c->err = -ENOMEM;
		return;
	}
	for (i = 0; i < r->nr_samples && !c->err && !c->d.err; i++) {
		s = &r->samples[i];
		c->recs[i].pid = s->pid;
		c->recs[i].off = uwprof_rep_off_cpu(s);
		c->recs[i].stack = uwprof_otlp_dict_stack(&c->d, s->frames,
						s->nr_kernel + s->nr_user);
		c->recs[i].set = sample_set(c, s);
		c->recs[i].idx = i;
		if (s->time_ns >= end)
			end = s->time_ns + 1;
	}
	c->end_ns = wall_ns(r, end);
	qsort(c->recs, r->nr_samples, sizeof(*c->recs), rec_cmp);
}

int uwprof_otlp_encode(const struct uwprof_rep *r, uint8_t **buf,
		       size_t *len)
{
	struct otlp_ctx c = { .r = r };
	struct uwprof_pb *bufs[] = { &c.out, &c.rp, &c.sp, &c.prof, &c.msg,
				     &c.a, &c.b };
	size_t i, run = 0;
	int ret;

	*buf = NULL;
	*len = 0;
	ret = uwprof_otlp_dict_init(&c.d, r);
	if (!ret)
		index_samples(&c);
	for (i = 1; !ret && !c.err && i <= r->nr_samples; i++) {
		if (i < r->nr_samples && c.recs[i].pid == c.recs[run].pid)
			continue;
		put_resource(&c, run, i);
		run = i;
	}
	/* The dictionary last: only now are its tables complete. */
	uwprof_otlp_dict_put(&c.d, &c.out, 2);
	if (!ret)
		ret = c.err ? c.err : c.d.err ? c.d.err :
		      uwprof_pb_error(bufs, sizeof(bufs) / sizeof(bufs[0]));
	if (!ret) {
		*buf = c.out.p;
		*len = c.out.len;
		c.out.p = NULL;
	}
	for (i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
		uwprof_pb_free(bufs[i]);
	uwprof_strtab_free(&c.sets);
	uwprof_otlp_dict_free(&c.d);
	free(c.recs);
	return ret;
}

int uwprof_otlp_write(const struct uwprof_rep *r, FILE *f)
{
	uint8_t *buf;
	size_t len;
	int ret;

	ret = uwprof_otlp_encode(r, &buf, &len);
	if (ret)
		return ret;
	ret = uwprof_pb_gzip(f, buf, len);
	free(buf);
	return ret;
}
