/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Keeps the rings drained while the recorder is busy: compiling a large
 * object's table takes seconds, and samples of code whose table is not
 * uploaded yet carry kilobytes of stack each, so a ring read only between
 * compiles overflows. The recorder reads the rings itself whenever it is
 * free; while it is not, a thread copies the records out as the rings
 * fill, into memory bounded by max_bytes, and the recorder takes those
 * first, so each ring's order is kept. Past the bound the thread stops
 * reading and the module counts what the rings cannot hold as lost,
 * exactly as it would without the thread.
 */
#ifndef UWPROF_TOOL_RING_READER_H
#define UWPROF_TOOL_RING_READER_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "device.h"

struct uwprof_rr_chunk;

struct uwprof_rreader {
	struct uwprof_dev	*dev;	/* NULL: not started */
	pthread_t		thread;
	pthread_mutex_t		lock;	/* covers the lists, bytes, bad */
	/* Held by whoever reads the rings (and the device's buffer). */
	pthread_mutex_t		drain_lock;
	struct uwprof_rr_chunk	*head, *tail;
	struct uwprof_rr_chunk	*spare;	/* emptied chunks, for reuse */
	unsigned int		nr_spare;
	size_t			bytes, max_bytes;
	/* Read after uwprof_rreader_finish(): */
	uint64_t		bad;	/* drains that met a malformed record */
	uint64_t		dropped; /* records not copied: out of memory */
	int			efd;	/* eventfd: readable when records wait */
	int			stop;	/* atomic: last drain, then exit */
	int			running;
};

/*
 * Starts the thread on a device whose rings are mapped; from now on only
 * the thread drains them. 0 or -errno.
 */
int uwprof_rreader_start(struct uwprof_rreader *rr, struct uwprof_dev *d,
			 size_t max_bytes);

/* A descriptor that polls readable while records wait to be taken. */
int uwprof_rreader_fd(const struct uwprof_rreader *rr);

/*
 * Hands every record the thread copied, then every record still in the
 * rings, to 'fn', in order; the thread waits meanwhile.
 */
void uwprof_rreader_take(struct uwprof_rreader *rr, uwprof_dev_rec_fn fn,
			 void *priv);

/* After STOP: the thread's last drain, then it exits; take the rest after. */
void uwprof_rreader_finish(struct uwprof_rreader *rr);
void uwprof_rreader_free(struct uwprof_rreader *rr);

#endif /* UWPROF_TOOL_RING_READER_H */
