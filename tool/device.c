// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/uwprof from the tool: open with actionable errors, ioctl wrappers,
 * ring mmap and the consumer side of the ring protocol (acquire 'head',
 * copy records out, release 'tail'), as specified in <linux/uwprof.h>.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "device.h"

static int dev_ioctl(struct uwprof_dev *d, unsigned long cmd, void *arg)
{
	int ret;

	do {
		ret = ioctl(d->fd, cmd, arg);
	} while (ret && errno == EINTR);
	return ret ? -errno : 0;
}

int uwprof_dev_open(struct uwprof_dev *d, char *err, size_t errlen)
{
	int ret;

	memset(d, 0, sizeof(*d));
	d->page_size = (size_t)sysconf(_SC_PAGESIZE);
	d->fd = open(UWPROF_DEV_PATH, O_RDWR | O_CLOEXEC);
	if (d->fd < 0) {
		ret = -errno;
		if (errno == ENOENT || errno == ENXIO || errno == ENODEV)
			snprintf(err, errlen,
				 "%s missing: load it with `modprobe uwprof` or install it with `make dkms-install`",
				 UWPROF_DEV_PATH);
		else if (errno == EACCES || errno == EPERM)
			snprintf(err, errlen, "%s: %s: needs root or CAP_PERFMON",
				 UWPROF_DEV_PATH, strerror(errno));
		else
			snprintf(err, errlen, "%s: %s", UWPROF_DEV_PATH,
				 strerror(errno));
		return ret;
	}
	d->ver.size = sizeof(d->ver);
	ret = dev_ioctl(d, UWPROF_IOC_VERSION, &d->ver);
	if (ret) {
		snprintf(err, errlen, "%s: VERSION: %s", UWPROF_DEV_PATH,
			 strerror(-ret));
		uwprof_dev_close(d);
		return ret;
	}
	if (d->ver.abi_version != UWPROF_ABI_VERSION ||
	    d->ver.table_version != UWPROF_TABLE_VERSION) {
		snprintf(err, errlen,
			 "%s: module ABI %u / table format %u, this uwprof speaks %u / %u: rebuild one to match the other",
			 UWPROF_DEV_PATH, d->ver.abi_version,
			 d->ver.table_version, UWPROF_ABI_VERSION,
			 UWPROF_TABLE_VERSION);
		uwprof_dev_close(d);
		return -EPROTO;
	}
	return 0;
}

void uwprof_dev_close(struct uwprof_dev *d)
{
	uwprof_dev_rings_unmap(d);
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
	free(d->buf);
	d->buf = NULL;
}

int uwprof_dev_table_add(struct uwprof_dev *d, uint64_t object_id,
			 const void *blob, size_t size)
{
	struct uwprof_table_add a = {
		.size = sizeof(a),
		.object_id = object_id,
		.data = (uintptr_t)blob,
		.data_size = size,
	};

	return dev_ioctl(d, UWPROF_IOC_TABLE_ADD, &a);
}

int uwprof_dev_maps_set(struct uwprof_dev *d, uint32_t pid, uint64_t start,
			const struct uwprof_map *maps, uint32_t nr,
			const struct uwprof_python *py)
{
	struct uwprof_maps_set a = {
		.size = sizeof(a),
		.pid = pid,
		.nr_maps = nr,
		.maps = (uintptr_t)maps,
	};

	/* Bound to the process read, where the module can: never its successor. */
	if (start && (d->ver.caps & UWPROF_CAP_MAPS_START)) {
		a.flags = UWPROF_MAPS_START_TIME;
		a.start_time = start;
	}
	if (py && (d->ver.caps & UWPROF_CAP_PYTHON)) {
		a.flags |= UWPROF_MAPS_PYTHON;
		a.python = (uintptr_t)py;
	}
	return dev_ioctl(d, UWPROF_IOC_MAPS_SET, &a);
}

int uwprof_dev_object_del(struct uwprof_dev *d, uint64_t object_id)
{
	struct uwprof_object_del a = { .size = sizeof(a), .object_id = object_id };

	return dev_ioctl(d, UWPROF_IOC_OBJECT_DEL, &a);
}

int uwprof_dev_process_del(struct uwprof_dev *d, uint32_t pid)
{
	struct uwprof_process_del a = { .size = sizeof(a), .pid = pid };

	return dev_ioctl(d, UWPROF_IOC_PROCESS_DEL, &a);
}

int uwprof_dev_start(struct uwprof_dev *d, struct uwprof_start *a)
{
	/*
	 * A module older than a field of it reads a struct this size too,
	 * as long as the fields it does not know are zero.
	 */
	a->size = sizeof(*a);
	return dev_ioctl(d, UWPROF_IOC_START, a);
}

int uwprof_dev_stop(struct uwprof_dev *d)
{
	return dev_ioctl(d, UWPROF_IOC_STOP, NULL);
}

int uwprof_dev_stats(struct uwprof_dev *d, struct uwprof_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	return dev_ioctl(d, UWPROF_IOC_STATS, st);
}

int uwprof_dev_rings_map(struct uwprof_dev *d)
{
	size_t bsz;
	void *m;
	int ret;

	memset(&d->ri, 0, sizeof(d->ri));
	d->ri.size = sizeof(d->ri);
	ret = dev_ioctl(d, UWPROF_IOC_RING_INFO, &d->ri);
	if (ret)
		return ret;
	if (!d->ri.nr_rings || !d->ri.data_size ||
	    (d->ri.data_size & (d->ri.data_size - 1)) ||
	    d->ri.stride < d->ri.data_size + 2 * d->page_size ||
	    d->ri.mmap_size != d->ri.stride * d->ri.nr_rings)
		return -EPROTO;
	m = mmap(NULL, d->ri.mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 d->fd, 0);
	if (m == MAP_FAILED)
		return -errno;
	/* No record is larger than the largest sample the ABI allows. */
	bsz = sizeof(struct uwprof_rec_sample) +
	      8 * (UWPROF_MAX_DEPTH + 256) + sizeof(struct uwprof_snapshot) +
	      8 * 64 + UWPROF_MAX_SNAPSHOT;
	free(d->buf);
	d->buf = malloc(bsz);
	if (!d->buf) {
		munmap(m, d->ri.mmap_size);
		return -ENOMEM;
	}
	d->buf_size = bsz;
	d->rings = m;
	return 0;
}

void uwprof_dev_rings_unmap(struct uwprof_dev *d)
{
	if (d->rings)
		munmap(d->rings, d->ri.mmap_size);
	d->rings = NULL;
}

int uwprof_dev_wait(struct uwprof_dev *d, int ms)
{
	struct pollfd p = { .fd = d->fd, .events = POLLIN };
	int n = poll(&p, 1, ms);

	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	return n > 0;
}

static struct uwprof_ring_ctl *dev_ctl(const struct uwprof_dev *d, uint32_t i)
{
	return (struct uwprof_ring_ctl *)(d->rings + (size_t)i * d->ri.stride);
}

static struct uwprof_ring_tail *dev_tail(const struct uwprof_dev *d, uint32_t i)
{
	return (struct uwprof_ring_tail *)((uint8_t *)dev_ctl(d, i) +
					   d->page_size);
}

static void dev_copy(const uint8_t *data, uint64_t size, uint64_t pos,
		     void *dst, uint64_t len)
{
	uint64_t off = pos & (size - 1);
	uint64_t first = len < size - off ? len : size - off;

	memcpy(dst, data + off, first);
	memcpy((uint8_t *)dst + first, data, len - first);
}

/* Whether a record's size fits its type (unknown types are skipped). */
static int dev_rec_ok(const struct uwprof_rec_hdr *h, uint32_t ring)
{
	switch (h->type) {
	case UWPROF_REC_SAMPLE: {
		const struct uwprof_rec_sample *s = (const void *)h;
		uint64_t ips = sizeof(*s) + 8ULL * (s->nr_kernel + s->nr_user);

		/* A snapshot's own bounds are checked by its reader. */
		if (s->flags & UWPROF_SAMPLE_SNAPSHOT)
			ips += sizeof(struct uwprof_snapshot);
		return h->size >= sizeof(*s) && s->cpu == ring &&
		       ((s->flags & UWPROF_SAMPLE_SNAPSHOT) ? h->size >= ips :
							      h->size == ips);
	}
	case UWPROF_REC_LOST:
		return h->size == sizeof(struct uwprof_rec_lost);
	case UWPROF_REC_UNKNOWN_MAP:
		return h->size == sizeof(struct uwprof_rec_unknown_map);
	case UWPROF_REC_EXIT:
		return h->size == sizeof(struct uwprof_rec_exit);
	case UWPROF_REC_FORK:
		return h->size == sizeof(struct uwprof_rec_fork);
	case UWPROF_REC_COMM:
		return h->size == sizeof(struct uwprof_rec_comm);
	default:
		/* A newer module's record type: skip it. */
		return 1;
	}
}

static int dev_ring_drain(struct uwprof_dev *d, uint32_t i,
			  uwprof_dev_rec_fn fn, void *priv)
{
	struct uwprof_ring_ctl *ctl = dev_ctl(d, i);
	const uint8_t *data = (const uint8_t *)ctl + d->page_size * 2;
	uint64_t size = d->ri.data_size;
	/* Pairs with the module's smp_store_release() of 'head'. */
	uint64_t head = __atomic_load_n(&ctl->head, __ATOMIC_ACQUIRE);
	uint64_t tail = dev_tail(d, i)->tail, off;
	struct uwprof_rec_hdr h;
	const void *rec;
	int ret = 0;

	_Static_assert(sizeof(h) == 8, "a header never wraps the ring");
	while (tail < head) {
		off = tail & (size - 1);
		memcpy(&h, data + off, sizeof(h));
		if (h.size < sizeof(h) || (h.size & 7) || h.size > head - tail ||
		    h.size > d->buf_size) {
			ret = -EPROTO;
			tail = head;
			break;
		}
		/*
		 * Read in place unless it wraps: the module writes only past
		 * head, and nothing before tail is handed back to it until
		 * the callbacks are done.
		 */
		if (h.size <= size - off) {
			rec = data + off;
		} else {
			dev_copy(data, size, tail, d->buf, h.size);
			rec = d->buf;
		}
		if (!dev_rec_ok(rec, i)) {
			ret = -EPROTO;
			tail = head;
			break;
		}
		tail += h.size;
		ret = fn(rec, i, priv);
		if (ret)
			break;
	}
	/* Pairs with the module's smp_load_acquire() of 'tail'. */
	__atomic_store_n(&dev_tail(d, i)->tail, tail, __ATOMIC_RELEASE);
	return ret;
}

int uwprof_dev_drain(struct uwprof_dev *d, uwprof_dev_rec_fn fn, void *priv)
{
	int ret = 0, r;
	uint32_t i;

	if (!d->rings)
		return 0;
	for (i = 0; i < d->ri.nr_rings; i++) {
		r = dev_ring_drain(d, i, fn, priv);
		if (r && r != -EPROTO)
			return r;
		if (r)
			ret = r;
	}
	return ret;
}

uint64_t uwprof_dev_pending(const struct uwprof_dev *d)
{
	uint64_t sum = 0;
	uint32_t i;

	if (!d->rings)
		return 0;
	for (i = 0; i < d->ri.nr_rings; i++)
		sum += __atomic_load_n(&dev_ctl(d, i)->head, __ATOMIC_ACQUIRE) -
		       dev_tail(d, i)->tail;
	return sum;
}
