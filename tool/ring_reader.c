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
 * so this only bounds how stale samples get on a quiet machine.
 */
#define RR_POLL_MS	100

struct uwprof_rr_rec {
	struct uwprof_rr_rec	*next;
	uint32_t		ring;
	uint32_t		__pad;
	uint64_t		data[];	/* the record, 8-byte aligned */
};

/* One drain's records, appended to the shared list in one go. */
struct rr_batch {
	struct uwprof_rr_rec	*head, **tailp;
	size_t			bytes;
	uint64_t		dropped;
};

static int rr_copy(const struct uwprof_rec_hdr *h, uint32_t ring, void *priv)
{
	struct rr_batch *b = priv;
	struct uwprof_rr_rec *n = malloc(sizeof(*n) + h->size);

	if (!n) {
		b->dropped++;
		return 0;
	}
	n->next = NULL;
	n->ring = ring;
	memcpy(n->data, h, h->size);
	*b->tailp = n;
	b->tailp = &n->next;
	b->bytes += h->size;
	return 0;
}

static void rr_drain(struct uwprof_rreader *rr)
{
	struct rr_batch b = { .tailp = &b.head };
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
		*rr->tailp = b.head;
		rr->tailp = b.tailp;
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
	rr->tailp = &rr->head;
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
	struct uwprof_rr_rec *n, *next;
	uint64_t cnt;

	if (!rr->dev)
		return;
	if (read(rr->efd, &cnt, sizeof(cnt)) < 0)
		cnt = 0;	/* nothing signalled: the list may still hold some */
	pthread_mutex_lock(&rr->drain_lock);
	pthread_mutex_lock(&rr->lock);
	n = rr->head;
	rr->head = NULL;
	rr->tailp = &rr->head;
	rr->bytes = 0;
	pthread_mutex_unlock(&rr->lock);
	for (; n; n = next) {
		next = n->next;
		fn((const struct uwprof_rec_hdr *)n->data, n->ring, priv);
		free(n);
	}
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
	struct uwprof_rr_rec *n, *next;

	if (!rr->dev)
		return;
	uwprof_rreader_finish(rr);
	for (n = rr->head; n; n = next) {
		next = n->next;
		free(n);
	}
	rr->head = NULL;
	close(rr->efd);
	pthread_mutex_destroy(&rr->drain_lock);
	pthread_mutex_destroy(&rr->lock);
	rr->dev = NULL;
}
