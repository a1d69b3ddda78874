/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Between the profile reader (profile_file.c) and its record decoding
 * (profile_decode.c); not an interface of the tool.
 */
#ifndef UWPROF_TOOL_PROFILE_DECODE_H
#define UWPROF_TOOL_PROFILE_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "profile_file.h"
#include "u64map.h"

/*
 * A bounded cursor over one record's payload. The first failure sticks:
 * -EINVAL when a read runs past the record, -ENOMEM when a copy fails;
 * later reads return zeros and NULL, so a parser checks once at the end.
 */
struct pf_cur {
	const uint8_t	*p;
	size_t		left;
	int		err;
	const char	*why;		/* what was wrong, when known */
};

/* A version 2 stack definition, as samples refer to it. */
struct pf_stack {
	const uint64_t	*ips;		/* in pf_priv.ips_blocks */
	uint32_t	flags;
	uint16_t	nr_kernel;
	uint16_t	nr_user;
};

/* Strings are copied with a NUL so callers can use them as C strings. */
struct pf_strs {
	char		**v;
	size_t		n, cap;
};

/* The reader's private state beyond struct uwprof_pf. */
struct pf_priv {
	struct uwprof_pf pub;
	struct pf_strs strs;
	size_t cap_objects, cap_maps, cap_samples, cap_exits, cap_threads;
	size_t cap_cgroups, cap_pycodes, cap_pyinterps;
	struct uwprof_u64map stack_ids;	/* stack id -> index in stacks */
	struct pf_stack *stacks;
	size_t nr_stacks, cap_stacks;
	/* The stacks' ips, in blocks that never move once allocated. */
	uint64_t **ips_blocks;
	size_t nr_ips_blocks, cap_ips_blocks;
	size_t ips_free;		/* unused ips in the last block */
	uint64_t ips_total;		/* ips held in all blocks */
	char why[128];			/* a malformed record's detail */
};

/* The name of a record type for messages ("unknown" when not ours). */
const char *pf_decode_type_name(uint32_t type);
/* The header record; 0 or -errno (-EINVAL malformed, -ENOMEM). */
int pf_decode_header(struct pf_priv *pp, struct pf_cur *c);
/* Any later record: unknown types are counted and skipped. */
int pf_decode_one(struct pf_priv *pp, uint32_t type, struct pf_cur *c);

#endif /* UWPROF_TOOL_PROFILE_DECODE_H */
