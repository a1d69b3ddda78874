/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Walks the module could not finish: a sample whose walk reached code the
 * session had no mappings for yet (a process or library not uploaded)
 * carries a copy of the user stack and registers from the frame it stopped
 * at (UWPROF_SAMPLE_SNAPSHOT). Once the tool has the tables, the same
 * unwinder core the module runs (module/unwind.c) resumes the walk there,
 * over the copy.
 */
#ifndef UWPROF_TOOL_SNAPSHOT_H
#define UWPROF_TOOL_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include "unwind.h"

/* An object's table as the core reads it: the blob is its own index. */
struct uwprof_snap_table {
	void			*blob;
	struct uwprof_table	t;
};

/*
 * Check a blob as the module does. On success the table owns 'blob'
 * (malloc'ed); on failure the caller keeps it. 0, -EINVAL or -E2BIG.
 */
int uwprof_snap_table_init(struct uwprof_snap_table *st, void *blob,
			   size_t size);
void uwprof_snap_table_free(struct uwprof_snap_table *st);

/* The parts of a sample record that carries a snapshot. */
struct uwprof_snap_view {
	const struct uwprof_snapshot	*sn;
	const uint64_t			*gpr;
	const uint8_t			*stack;
};

/*
 * Find and bounds-check the snapshot of a sample record (hdr.size covers
 * it). 0, or -EINVAL when the record has none or it does not fit.
 */
int uwprof_snap_parse(const struct uwprof_rec_sample *s,
		      struct uwprof_snap_view *v);

/*
 * Where code outside the snapshot (the instructions the core inspects at
 * a pc) is read from: 0 or -EFAULT. Optional.
 */
typedef int (*uwprof_snap_code_fn)(void *arg, void *dst, uint64_t addr,
				   size_t n);

struct uwprof_snap_req {
	const struct uwprof_unwind_map	*maps;	/* the process's, sorted */
	uint32_t			nr_maps;
	uint32_t			max_depth;	/* user frames in all */
	uint32_t			no_fp;	/* UWPROF_START_NO_FP_FALLBACK */
	uwprof_snap_code_fn		read_code;
	void				*read_code_arg;
};

/*
 * Resume the walk of 's' over its snapshot. Returns a new record (free()
 * it) with the sample's ips followed by the frames found, no snapshot, and
 * flags: the resumed walk's stop reason (UWPROF_PF_STOP_SNAPSHOT_SHORT
 * when it needed stack beyond the copy), FP_USED as either walk had it,
 * UWPROF_PF_SAMPLE_FINISHED. NULL when out of memory or the record is
 * malformed.
 */
struct uwprof_rec_sample *uwprof_snap_finish(const struct uwprof_rec_sample *s,
					     const struct uwprof_snap_req *req);

/* The record without its snapshot, as the module would have written it. */
struct uwprof_rec_sample *uwprof_snap_strip(const struct uwprof_rec_sample *s);

/*
 * Samples waiting for their process's tables, in arrival order, holding at
 * most max_bytes of records.
 */
struct uwprof_snap_queued {
	struct uwprof_rec_sample	*s;
	uint64_t			tag;	/* the taker's, 0 at first */
};

struct uwprof_snap_queue {
	struct uwprof_snap_queued	*v;
	size_t				n, cap;
	size_t				bytes, max_bytes;
};

/* Queue a copy of 's': 0, -ENOSPC (over max_bytes) or -ENOMEM. */
int uwprof_snap_queue_add(struct uwprof_snap_queue *q,
			  const struct uwprof_rec_sample *s);

/*
 * Offer every queued sample of 'pid' (of every pid when 0) to 'take', in
 * arrival order; a sample leaves the queue when 'take' returns 0 (it then
 * owns the sample), else it stays with the tag 'take' may have set.
 */
void uwprof_snap_queue_take(struct uwprof_snap_queue *q, uint32_t pid,
			    int (*take)(void *arg, struct uwprof_snap_queued *e),
			    void *arg);
void uwprof_snap_queue_free(struct uwprof_snap_queue *q);

#endif /* UWPROF_TOOL_SNAPSHOT_H */
