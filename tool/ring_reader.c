// SPDX-License-Identifier: GPL-2.0
/*
 * The ring-draining thread (see ring_reader.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "ring_reader.h"

/*
 * How often the thread looks at the rings when no wakeup comes: the module
 * wakes it at once for the records the recorder must act on (EXIT, the
 * UNKNOWN_MAP of an uploaded process) and when a ring is a quarter full,
 * so this only bounds how stale samples get on a quiet machine. Each
 * wakeup costs the CPU a switch away from the profiled program.
 */
#define RR_POLL_MS	1000

/*
 * Copied records are packed into chunks, one allocation for many records:
 * at the rates a ring fills, a malloc and a free per record cost the
 * recorder more than the record's own handling.
 */
#define RR_CHUNK_BYTES	(64U << 10)

/*
 * Emptied chunks kept for the next drain: freed, they would go back to
 * the system and each new one would cost its pages' faults again.
 */
#define RR_SPARE_MAX	4

struct uwprof_rr_chunk {
	struct uwprof_rr_chunk	*next;
	size_t			used, cap;
	uint64_t		data[];	/* entries, each 8-byte aligned */
};

/* A record in a chunk: its ring, then the record itself. */
struct rr_entry {
	uint32_t	ring;
	uint32_t	__pad;
	uint64_t	rec[];
};

/* One drain's records, appended to the shared list in one go. */
struct rr_batch {
	struct uwprof_rreader	*rr;
	struct uwprof_rr_chunk	*head, *tail;
	size_t			bytes;
	uint64_t		dropped;
};

static size_t rr_entry_size(uint32_t rec_size)
{
	return sizeof(struct rr_entry) + (((size_t)rec_size + 7) & ~(size_t)7);
}

static struct uwprof_rr_chunk *rr_room(struct rr_batch *b, size_t need)
{
	struct uwprof_rreader *rr = b->rr;
	struct uwprof_rr_chunk *c = b->tail;
	size_t cap;

	if (c && c->cap - c->used >= need)
		return c;
	c = NULL;
	cap = need > RR_CHUNK_BYTES ? need : RR_CHUNK_BYTES;
	if (cap == RR_CHUNK_BYTES) {
		pthread_mutex_lock(&rr->lock);
		c = rr->spare;
		if (c) {
			rr->spare = c->next;
			rr->nr_spare--;
		}
		pthread_mutex_unlock(&rr->lock);
	}
	if (!c)
		c = malloc(sizeof(*c) + cap);
	if (!c)
		return NULL;
	c->next = NULL;
	c->used = 0;
	c->cap = cap;
	if (b->tail)
		b->tail->next = c;
	else
		b->head = c;
	b->tail = c;
	return c;
}

static int rr_copy(const struct uwprof_rec_hdr *h, uint32_t ring, void *priv)
{
	struct rr_batch *b = priv;
	size_t need = rr_entry_size(h->size);
	struct uwprof_rr_chunk *c = rr_room(b, need);
	struct rr_entry *e;

	if (!c) {
		b->dropped++;
		return 0;
	}
	e = (struct rr_entry *)((uint8_t *)c->data + c->used);
	e->ring = ring;
	e->__pad = 0;
	memcpy(e->rec, h, h->size);
	c->used += need;
	b->bytes += h->size;
	return 0;
}

/* Keeps an emptied chunk for reuse, or frees it. */
static void rr_release(struct uwprof_rreader *rr, struct uwprof_rr_chunk *c)
{
	pthread_mutex_lock(&rr->lock);
	if (c->cap == RR_CHUNK_BYTES && rr->nr_spare < RR_SPARE_MAX) {
		c->next = rr->spare;
		rr->spare = c;
		rr->nr_spare++;
		c = NULL;
	}
	pthread_mutex_unlock(&rr->lock);
	free(c);
}

/* Hands a chunk list's records to fn, in order, and releases the chunks. */
static void rr_hand(struct uwprof_rreader *rr, struct uwprof_rr_chunk *c,
		    uwprof_dev_rec_fn fn, void *priv)
{
	struct uwprof_rr_chunk *next;
	size_t off;

	for (; c; c = next) {
		next = c->next;
		for (off = 0; off < c->used;) {
			const struct rr_entry *e =
				(const void *)((const uint8_t *)c->data + off);
			const struct uwprof_rec_hdr *h = (const void *)e->rec;

			fn(h, e->ring, priv);
			off += rr_entry_size(h->size);
		}
		rr_release(rr, c);
	}
}

static void rr_free_chunks(struct uwprof_rr_chunk *c)
{
	struct uwprof_rr_chunk *next;

	for (; c; c = next) {
		next = c->next;
		free(c);
	}
}

static void rr_drain(struct uwprof_rreader *rr)
{
	struct rr_batch b = { .rr = rr };
	uint64_t one = 1;
	size_t bytes;
	int ret;

	pthread_mutex_lock(&rr->lock);
	bytes = rr->bytes;
	pthread_mutex_unlock(&rr->lock);
	if (bytes >= rr->max_bytes)
		return;
	/* The recorder is reading them itself: nothing to keep. */
	if (pthread_mutex_trylock(&rr->drain_lock))
		return;
	ret = uwprof_dev_drain(rr->dev, rr_copy, &b);
	pthread_mutex_unlock(&rr->drain_lock);
	pthread_mutex_lock(&rr->lock);
	if (ret == -EPROTO)
		rr->bad++;
	rr->dropped += b.dropped;
	if (b.head) {
		if (rr->tail)
			rr->tail->next = b.head;
		else
			rr->head = b.head;
		rr->tail = b.tail;
		rr->bytes += b.bytes;
	}
	pthread_mutex_unlock(&rr->lock);
	if (b.head && write(rr->efd, &one, sizeof(one)) < 0)
		return;	/* the counter is saturated: already readable */
}

static void *rr_main(void *arg)
{
	struct uwprof_rreader *rr = arg;

	while (!__atomic_load_n(&rr->stop, __ATOMIC_ACQUIRE)) {
		uwprof_dev_wait(rr->dev, RR_POLL_MS);
		rr_drain(rr);
	}
	return NULL;
}

int uwprof_rreader_start(struct uwprof_rreader *rr, struct uwprof_dev *d,
			 size_t max_bytes)
{
	int ret;

	memset(rr, 0, sizeof(*rr));
	rr->max_bytes = max_bytes;
	rr->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (rr->efd < 0)
		return -errno;
	ret = pthread_mutex_init(&rr->lock, NULL);
	if (ret) {
		close(rr->efd);
		return -ret;
	}
	ret = pthread_mutex_init(&rr->drain_lock, NULL);
	if (ret) {
		pthread_mutex_destroy(&rr->lock);
		close(rr->efd);
		return -ret;
	}
	rr->dev = d;
	ret = pthread_create(&rr->thread, NULL, rr_main, rr);
	if (ret) {
		rr->dev = NULL;
		pthread_mutex_destroy(&rr->drain_lock);
		pthread_mutex_destroy(&rr->lock);
		close(rr->efd);
		return -ret;
	}
	rr->running = 1;
	return 0;
}

int uwprof_rreader_fd(const struct uwprof_rreader *rr)
{
	return rr->efd;
}

void uwprof_rreader_take(struct uwprof_rreader *rr, uwprof_dev_rec_fn fn,
			 void *priv)
{
	struct uwprof_rr_chunk *c;
	uint64_t cnt;

	if (!rr->dev)
		return;
	if (read(rr->efd, &cnt, sizeof(cnt)) < 0)
		cnt = 0;	/* nothing signalled: the list may still hold some */
	pthread_mutex_lock(&rr->drain_lock);
	pthread_mutex_lock(&rr->lock);
	c = rr->head;
	rr->head = rr->tail = NULL;
	rr->bytes = 0;
	pthread_mutex_unlock(&rr->lock);
	rr_hand(rr, c, fn, priv);
	if (uwprof_dev_drain(rr->dev, fn, priv) == -EPROTO) {
		pthread_mutex_lock(&rr->lock);
		rr->bad++;
		pthread_mutex_unlock(&rr->lock);
	}
	pthread_mutex_unlock(&rr->drain_lock);
}

void uwprof_rreader_finish(struct uwprof_rreader *rr)
{
	if (!rr->running)
		return;
	__atomic_store_n(&rr->stop, 1, __ATOMIC_RELEASE);
	pthread_join(rr->thread, NULL);
	rr->running = 0;
}

void uwprof_rreader_free(struct uwprof_rreader *rr)
{
	if (!rr->dev)
		return;
	uwprof_rreader_finish(rr);
	rr_free_chunks(rr->head);
	rr_free_chunks(rr->spare);
	rr->head = rr->tail = rr->spare = NULL;
	rr->nr_spare = 0;
	close(rr->efd);
	pthread_mutex_destroy(&rr->drain_lock);
	pthread_mutex_destroy(&rr->lock);
	rr->dev = NULL;
}
