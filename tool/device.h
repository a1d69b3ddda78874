/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tool's side of /dev/uwprof: opening it (with the messages a user
 * needs when it is missing or refused), one wrapper per ioctl, and the
 * ring reader that follows the head/tail protocol of <linux/uwprof.h>.
 * Used by 'uwprof record' and 'uwprof status'. No global state.
 */
#ifndef UWPROF_TOOL_DEVICE_H
#define UWPROF_TOOL_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include <linux/uwprof.h>

#define UWPROF_DEV_PATH	"/dev/uwprof"

struct uwprof_dev {
	int		fd;
	struct uwprof_version ver;
	struct uwprof_ring_info ri;
	uint8_t		*rings;		/* mmap of every ring, or NULL */
	size_t		page_size;
	uint64_t	*buf;		/* one record copied out of a ring */
	size_t		buf_size;	/* bytes */
};

/*
 * Opens the device and reads its version. Returns 0, or a negative errno
 * with one line in 'err': -ENOENT module not loaded, -EACCES/-EPERM not
 * allowed, -EPROTO an ABI this tool does not speak.
 */
int uwprof_dev_open(struct uwprof_dev *d, char *err, size_t errlen);
void uwprof_dev_close(struct uwprof_dev *d);

/* Each returns 0 or the ioctl's negative errno. */
int uwprof_dev_table_add(struct uwprof_dev *d, uint64_t object_id,
			 const void *blob, size_t size);
/*
 * 'start': the process's start time (uwprof_pm_start_time()), binding the
 * list to that process where the module offers it; 0: to the pid alone.
 * 'py': the process's interpreter, or NULL; left out where the module
 * does not walk Python (no UWPROF_CAP_PYTHON).
 */
int uwprof_dev_maps_set(struct uwprof_dev *d, uint32_t pid, uint64_t start,
			const struct uwprof_map *maps, uint32_t nr,
			const struct uwprof_python *py);
int uwprof_dev_object_del(struct uwprof_dev *d, uint64_t object_id);
int uwprof_dev_process_del(struct uwprof_dev *d, uint32_t pid);
/* START with 'a' as the caller filled it; its size is set here. */
int uwprof_dev_start(struct uwprof_dev *d, struct uwprof_start *a);
int uwprof_dev_stop(struct uwprof_dev *d);
int uwprof_dev_stats(struct uwprof_dev *d, struct uwprof_stats *st);

/* After START: maps the rings (RING_INFO, mmap). */
int uwprof_dev_rings_map(struct uwprof_dev *d);
void uwprof_dev_rings_unmap(struct uwprof_dev *d);

/* Waits up to 'ms' for a ring to have data; 1 readable, 0 timeout, -errno. */
int uwprof_dev_wait(struct uwprof_dev *d, int ms);

/*
 * Called for each record, copied out of the ring (so contiguous and
 * 8-byte aligned) after its size was checked against its type. A non-zero
 * return stops the drain and is passed back.
 */
typedef int (*uwprof_dev_rec_fn)(const struct uwprof_rec_hdr *rec,
				 uint32_t ring, void *priv);

/*
 * Consumes every record published in every ring, then releases the space.
 * Returns 0, the callback's non-zero value, or -EPROTO when a ring holds a
 * malformed record (that ring's remaining data is skipped).
 */
int uwprof_dev_drain(struct uwprof_dev *d, uwprof_dev_rec_fn fn, void *priv);

/* Bytes published but not yet consumed in all rings. */
uint64_t uwprof_dev_pending(const struct uwprof_dev *d);

#endif /* UWPROF_TOOL_DEVICE_H */
