/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ProfilesDictionary of an OTLP profiles message (see otlp.h): the
 * tables every profile of the message indexes into (strings, attributes,
 * mappings, functions, locations, stacks, links), each deduplicated by
 * value and each with the zero value at index 0, as the pinned
 * opentelemetry-proto requires. Entries are added as otlp.c asks for
 * strings, attributes and stacks (a stack's locations, their functions
 * and mappings with it), so none is left unreferenced. Called from otlp.c
 * only.
 */
#ifndef UWPROF_TOOL_OTLP_DICT_H
#define UWPROF_TOOL_OTLP_DICT_H

#include <stdint.h>

#include "pb.h"
#include "strtab.h"

struct uwprof_rep;

struct uwprof_otlp_dict {
	struct uwprof_strtab strs;	/* string_table */
	/* identity keys of the other tables, position = index */
	struct uwprof_strtab attrs;
	struct uwprof_strtab funcs;
	struct uwprof_strtab locs;
	struct uwprof_strtab stacks;
	/* encoded entries, each with its ProfilesDictionary field key */
	struct uwprof_pb mapping_pb;
	struct uwprof_pb location_pb;
	struct uwprof_pb function_pb;
	struct uwprof_pb attribute_pb;
	struct uwprof_pb stack_pb;
	struct uwprof_pb tmp;	/* an entry being built */
	struct uwprof_pb tmp2;	/* a message inside it */
	const struct uwprof_rep *r;
	/* report frame -> location, report map -> mapping index; 0: not yet */
	uint32_t	*loc_of;
	uint32_t	*map_of;
	uint32_t	nr_mappings;	/* in mapping_pb, besides the zero one */
	int		err;		/* -ENOMEM, sticky */
};

/*
 * The zero entries, for the report model 'r' (which must outlive 'd').
 * Returns 0 or -ENOMEM; either way release 'd' with
 * uwprof_otlp_dict_free().
 */
int uwprof_otlp_dict_init(struct uwprof_otlp_dict *d,
			  const struct uwprof_rep *r);
void uwprof_otlp_dict_free(struct uwprof_otlp_dict *d);

/* Indexes into the tables, entries added when new; 0 after an error. */
uint32_t uwprof_otlp_dict_str(struct uwprof_otlp_dict *d, const char *s);
uint32_t uwprof_otlp_dict_attr_str(struct uwprof_otlp_dict *d,
				   const char *key, const char *v);
uint32_t uwprof_otlp_dict_attr_int(struct uwprof_otlp_dict *d,
				   const char *key, int64_t v);
uint32_t uwprof_otlp_dict_attr_bool(struct uwprof_otlp_dict *d,
				    const char *key);
/* The stack of report frames 'frames' (leaf first). */
uint32_t uwprof_otlp_dict_stack(struct uwprof_otlp_dict *d,
				const uint32_t *frames, uint32_t n);

/* Append the dictionary as message field 'field' of 'out'. */
void uwprof_otlp_dict_put(struct uwprof_otlp_dict *d, struct uwprof_pb *out,
			  unsigned int field);

#endif /* UWPROF_TOOL_OTLP_DICT_H */
