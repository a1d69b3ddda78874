// SPDX-License-Identifier: GPL-2.0
/*
 * The OTLP ProfilesDictionary (see otlp_dict.h). Field numbers, from
 * opentelemetry-proto v1.11.0 (tool/proto/ holds the schema):
 *   ProfilesDictionary: 1 mapping_table, 2 location_table,
 *       3 function_table, 4 link_table, 5 string_table,
 *       6 attribute_table, 7 stack_table
 *   Mapping:  1 memory_start, 2 memory_limit, 3 file_offset,
 *             4 filename_strindex, 5 attribute_indices (packed)
 *   Location: 1 mapping_index, 2 address, 3 lines, 4 attribute_indices
 *   Line:     1 function_index, 2 line, 3 column
 *   Function: 1 name_strindex, 2 system_name_strindex,
 *             3 filename_strindex, 4 start_line
 *   Stack:    1 location_indices (packed)
 *   Link:     1 trace_id, 2 span_id
 *   KeyValueAndUnit: 1 key_strindex, 2 value (AnyValue), 3 unit_strindex
 *   AnyValue: 1 string_value, 2 bool_value, 3 int_value
 * Called from otlp.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "otlp_dict.h"
#include "report_model.h"

#define DICT_MAPPING	1
#define DICT_LOCATION	2
#define DICT_FUNCTION	3
#define DICT_LINK	4
#define DICT_STRING	5
#define DICT_ATTRIBUTE	6
#define DICT_STACK	7

/*
 * Position of 'key' in 't'; *added says whether it is new (its entry is
 * for the caller to encode). 0 and a sticky -ENOMEM on failure.
 */
static uint32_t dict_intern(struct uwprof_otlp_dict *d,
			    struct uwprof_strtab *t, const char *key,
			    int *added)
{
	size_t before = t->n;
	long id;

	*added = 0;
	if (d->err)
		return 0;
	id = uwprof_strtab_id(t, key);
	if (id < 0) {
		d->err = -ENOMEM;
		return 0;
	}
	*added = t->n != before;
	return (uint32_t)id;
}

uint32_t uwprof_otlp_dict_str(struct uwprof_otlp_dict *d, const char *s)
{
	int added;

	return dict_intern(d, &d->strs, s ? s : "", &added);
}

/* 'key' is the attribute's identity: kind, name and value. */
static uint32_t dict_attr(struct uwprof_otlp_dict *d, const char *key,
			  const char *name, unsigned int vfield,
			  const char *s, uint64_t v)
{
	uint32_t id;
	int added;

	id = dict_intern(d, &d->attrs, key, &added);
	if (!added)
		return id;
	uwprof_pb_uint(&d->tmp, 1, uwprof_otlp_dict_str(d, name));
	if (s) {
		uwprof_pb_str(&d->tmp2, vfield, s);
	} else {
		/* a zero int or false still sets the oneof */
		uwprof_pb_key(&d->tmp2, vfield, UWPROF_PB_VARINT);
		uwprof_pb_varint(&d->tmp2, v);
	}
	uwprof_pb_msg(&d->tmp, 2, &d->tmp2);
	uwprof_pb_msg(&d->attribute_pb, DICT_ATTRIBUTE, &d->tmp);
	return id;
}

uint32_t uwprof_otlp_dict_attr_str(struct uwprof_otlp_dict *d,
				   const char *key, const char *v)
{
	char *k;
	uint32_t id;

	if (asprintf(&k, "s\x01%s\x01%s", key, v) < 0) {
		d->err = -ENOMEM;
		return 0;
	}
	id = dict_attr(d, k, key, 1, v, 0);
	free(k);
	return id;
}

uint32_t uwprof_otlp_dict_attr_int(struct uwprof_otlp_dict *d,
				   const char *key, int64_t v)
{
	char *k;
	uint32_t id;

	if (asprintf(&k, "i\x01%s\x01%lld", key, (long long)v) < 0) {
		d->err = -ENOMEM;
		return 0;
	}
	id = dict_attr(d, k, key, 3, NULL, (uint64_t)v);
	free(k);
	return id;
}

uint32_t uwprof_otlp_dict_attr_bool(struct uwprof_otlp_dict *d,
				    const char *key)
{
	char *k;
	uint32_t id;

	if (asprintf(&k, "b\x01%s", key) < 0) {
		d->err = -ENOMEM;
		return 0;
	}
	id = dict_attr(d, k, key, 2, NULL, 1);
	free(k);
	return id;
}

/* The mapping_table index of report map 'i', its entry added when new. */
static uint32_t dict_mapping(struct uwprof_otlp_dict *d, int i)
{
	const struct uwprof_rep_map *m = &d->r->maps[i];
	char hex[2 * sizeof(m->build_id) + 1];
	uint32_t k, a = 0;

	if (d->map_of[i] || d->err)
		return d->map_of[i];
	/* The attribute first: its entry is built in tmp too. */
	if (m->build_id_size) {
		for (k = 0; k < m->build_id_size; k++)
			snprintf(hex + 2 * k, 3, "%02x", m->build_id[k]);
		a = uwprof_otlp_dict_attr_str(d,
			"process.executable.build_id.gnu", hex);
	}
	uwprof_pb_uint(&d->tmp, 1, m->start);
	uwprof_pb_uint(&d->tmp, 2, m->end);
	uwprof_pb_uint(&d->tmp, 3, m->offset);
	uwprof_pb_uint(&d->tmp, 4, uwprof_otlp_dict_str(d,
			m->path ? m->path : "[anon]"));
	if (a) {
		/* attribute_indices, packed: one varint */
		uwprof_pb_varint(&d->tmp2, a);
		uwprof_pb_bytes(&d->tmp, 5, d->tmp2.p, d->tmp2.len);
		d->tmp2.len = 0;
	}
	uwprof_pb_msg(&d->mapping_pb, DICT_MAPPING, &d->tmp);
	d->map_of[i] = ++d->nr_mappings;	/* after the zero entry */
	return d->map_of[i];
}

/*
 * profile.frame.type: "jit" is not a well-known value, so a custom one;
 * "cpython" is the semantic conventions' own for Python frames.
 */
static const char *frame_type(const struct uwprof_rep_frame *f)
{
	if (f->kernel)
		return "kernel";
	if (f->python)
		return "cpython";
	if (f->dso && !strcmp(f->dso, "[jit]"))
		return "jit";
	return "native";
}

static uint32_t dict_function(struct uwprof_otlp_dict *d,
			      const struct uwprof_rep_frame *f,
			      const char *file)
{
	uint32_t id;
	char *key;
	int added;

	/* A Python frame's function: its code object's name and first line. */
	const char *name = f->python && f->sym ? f->sym : f->label;

	if (asprintf(&key, "%s%s\x01%s\x01%u", f->python ? "p\x01" : "", name,
		     file, f->start_line) < 0) {
		d->err = -ENOMEM;
		return 0;
	}
	id = dict_intern(d, &d->funcs, key, &added);
	free(key);
	if (added) {
		uwprof_pb_uint(&d->tmp, 1, uwprof_otlp_dict_str(d, name));
		uwprof_pb_uint(&d->tmp, 3, uwprof_otlp_dict_str(d, file));
		if (f->start_line)
			uwprof_pb_uint(&d->tmp, 4, f->start_line);
		uwprof_pb_msg(&d->function_pb, DICT_FUNCTION, &d->tmp);
	}
	return id;
}

/*
 * The location of report frame 'fi', deduplicated by value; its mapping
 * and function added when new.
 */
static uint32_t dict_location(struct uwprof_otlp_dict *d, uint32_t fi)
{
	const struct uwprof_rep_frame *f = &d->r->frames[fi];
	const char *file = (d->r->lines || f->python) && f->file ? f->file : "";
	unsigned int line = d->r->lines || f->python ? f->line : 0;
	uint32_t fn, type, id, map;
	char *key;
	int added;

	if (d->loc_of[fi] || d->err)
		return d->loc_of[fi];
	map = f->map >= 0 ? dict_mapping(d, f->map) : 0;
	fn = dict_function(d, f, file);
	type = uwprof_otlp_dict_attr_str(d, "profile.frame.type",
					 frame_type(f));
	if (asprintf(&key, "%u\x01%llx\x01%u\x01%u\x01%u", map,
		     (unsigned long long)f->ip, fn, line, type) < 0) {
		d->err = -ENOMEM;
		return 0;
	}
	id = dict_intern(d, &d->locs, key, &added);
	free(key);
	d->loc_of[fi] = id;
	if (!added)
		return id;
	uwprof_pb_uint(&d->tmp, 1, map);
	uwprof_pb_uint(&d->tmp, 2, f->ip);
	uwprof_pb_uint(&d->tmp2, 1, fn);
	uwprof_pb_uint(&d->tmp2, 2, line);
	uwprof_pb_msg(&d->tmp, 3, &d->tmp2);
	uwprof_pb_varint(&d->tmp2, type);	/* attribute_indices, packed */
	uwprof_pb_bytes(&d->tmp, 4, d->tmp2.p, d->tmp2.len);
	d->tmp2.len = 0;
	uwprof_pb_msg(&d->location_pb, DICT_LOCATION, &d->tmp);
	return id;
}

int uwprof_otlp_dict_init(struct uwprof_otlp_dict *d,
			  const struct uwprof_rep *r)
{
	struct uwprof_strtab *zero[] = { &d->attrs, &d->funcs, &d->locs,
					 &d->stacks };
	size_t i;
	int added;

	memset(d, 0, sizeof(*d));
	/* Index 0 of every table: the zero value, present. */
	uwprof_otlp_dict_str(d, "");
	for (i = 0; i < sizeof(zero) / sizeof(zero[0]); i++)
		dict_intern(d, zero[i], "", &added);
	uwprof_pb_msg(&d->mapping_pb, DICT_MAPPING, &d->tmp);
	uwprof_pb_msg(&d->location_pb, DICT_LOCATION, &d->tmp);
	uwprof_pb_msg(&d->function_pb, DICT_FUNCTION, &d->tmp);
	uwprof_pb_msg(&d->attribute_pb, DICT_ATTRIBUTE, &d->tmp);
	uwprof_pb_msg(&d->stack_pb, DICT_STACK, &d->tmp);
	d->r = r;
	d->loc_of = calloc(r->nr_frames + 1, sizeof(*d->loc_of));
	d->map_of = calloc(r->nr_maps + 1, sizeof(*d->map_of));
	if (!d->loc_of || !d->map_of)
		d->err = -ENOMEM;
	return d->err;
}

uint32_t uwprof_otlp_dict_stack(struct uwprof_otlp_dict *d,
				const uint32_t *frames, uint32_t n)
{
	char *key = NULL;
	size_t len = 0;
	uint32_t j, id;
	FILE *f;
	int added;

	if (d->err)
		return 0;
	for (j = 0; j < n; j++)
		dict_location(d, frames[j]);
	f = open_memstream(&key, &len);
	if (!f) {
		d->err = -ENOMEM;
		return 0;
	}
	for (j = 0; j < n; j++)
		fprintf(f, "%x,", d->loc_of[frames[j]]);
	if (fclose(f)) {
		free(key);
		d->err = -ENOMEM;
		return 0;
	}
	id = dict_intern(d, &d->stacks, key, &added);
	free(key);
	if (!added)
		return id;
	for (j = 0; j < n; j++)
		uwprof_pb_varint(&d->tmp2, d->loc_of[frames[j]]);
	if (n)
		uwprof_pb_bytes(&d->tmp, 1, d->tmp2.p, d->tmp2.len);
	d->tmp2.len = 0;
	uwprof_pb_msg(&d->stack_pb, DICT_STACK, &d->tmp);
	return id;
}

void uwprof_otlp_dict_put(struct uwprof_otlp_dict *d, struct uwprof_pb *out,
			  unsigned int field)
{
	static const uint8_t zero_ids[16];
	struct uwprof_pb *parts[] = { &d->mapping_pb, &d->location_pb,
				      &d->function_pb, &d->attribute_pb,
				      &d->stack_pb, &d->tmp, &d->tmp2 };
	struct uwprof_pb *b = &d->tmp;
	size_t i;

	d->tmp.len = d->tmp2.len = 0;
	uwprof_pb_raw(b, d->mapping_pb.p, d->mapping_pb.len);
	uwprof_pb_raw(b, d->location_pb.p, d->location_pb.len);
	uwprof_pb_raw(b, d->function_pb.p, d->function_pb.len);
	/* link_table[0]: the all-zero ids of their full lengths */
	uwprof_pb_bytes(&d->tmp2, 1, zero_ids, 16);
	uwprof_pb_bytes(&d->tmp2, 2, zero_ids, 8);
	uwprof_pb_msg(b, DICT_LINK, &d->tmp2);
	for (i = 0; i < d->strs.n; i++)
		uwprof_pb_str(b, DICT_STRING, d->strs.v[i]);
	uwprof_pb_raw(b, d->attribute_pb.p, d->attribute_pb.len);
	uwprof_pb_raw(b, d->stack_pb.p, d->stack_pb.len);
	if (!d->err)
		d->err = uwprof_pb_error(parts,
					 sizeof(parts) / sizeof(parts[0]));
	uwprof_pb_msg(out, field, b);
	if (d->err && !out->err)
		out->err = d->err;
}

void uwprof_otlp_dict_free(struct uwprof_otlp_dict *d)
{
	uwprof_strtab_free(&d->strs);
	uwprof_strtab_free(&d->attrs);
	uwprof_strtab_free(&d->funcs);
	uwprof_strtab_free(&d->locs);
	uwprof_strtab_free(&d->stacks);
	uwprof_pb_free(&d->mapping_pb);
	uwprof_pb_free(&d->location_pb);
	uwprof_pb_free(&d->function_pb);
	uwprof_pb_free(&d->attribute_pb);
	uwprof_pb_free(&d->stack_pb);
	uwprof_pb_free(&d->tmp);
	uwprof_pb_free(&d->tmp2);
	free(d->loc_of);
	free(d->map_of);
}
