// SPDX-License-Identifier: GPL-2.0
/*
 * debuginfod client (see debuginfod.h): libdebuginfod through dlopen, one
 * client per symbolizer, and a list of the build-ids that failed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "debuginfod.h"

/*
 * The few entry points used, as libdebuginfod.so.1 exports them
 * (elfutils/debuginfod.h): declared here so that building needs no
 * header from libdebuginfod-dev, which the arm64 sysroot lacks.
 */
struct dbgd_client;
typedef struct dbgd_client *(*dbgd_begin_fn)(void);
typedef int (*dbgd_find_fn)(struct dbgd_client *c, const unsigned char *id,
			    int id_len, char **path);
typedef void (*dbgd_end_fn)(struct dbgd_client *c);

#define DBGD_SONAME	"libdebuginfod.so.1"
#define DBGD_ID_MAX	64

struct dbgd_miss {
	uint8_t		id[DBGD_ID_MAX];
	size_t		size;
};

struct uwprof_dbgd {
	int		state;		/* 0: not tried, 1: ready, <0: unusable */
	void		*lib;
	struct dbgd_client *client;
	dbgd_find_fn	find;
	dbgd_end_fn	end;
	struct dbgd_miss *misses;
	size_t		nr_misses;
};

struct uwprof_dbgd *uwprof_dbgd_new(void)
{
	return calloc(1, sizeof(struct uwprof_dbgd));
}

void uwprof_dbgd_free(struct uwprof_dbgd *d)
{
	if (!d)
		return;
	if (d->client)
		d->end(d->client);
	if (d->lib)
		dlclose(d->lib);
	free(d->misses);
	free(d);
}

static int dbgd_start(struct uwprof_dbgd *d, char *msg, size_t msglen)
{
	dbgd_begin_fn begin;
	const char *e;

	d->lib = dlopen(DBGD_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!d->lib) {
		e = dlerror();
		snprintf(msg, msglen,
			 "DEBUGINFOD_URLS is set but %s cannot be loaded (%s; Debian: libdebuginfod1)",
			 DBGD_SONAME, e ? e : "not found");
		return -EOPNOTSUPP;
	}
	begin = (dbgd_begin_fn)dlsym(d->lib, "debuginfod_begin");
	d->find = (dbgd_find_fn)dlsym(d->lib, "debuginfod_find_debuginfo");
	d->end = (dbgd_end_fn)dlsym(d->lib, "debuginfod_end");
	if (!begin || !d->find || !d->end) {
		snprintf(msg, msglen, "%s lacks the debuginfod_* functions",
			 DBGD_SONAME);
		return -EOPNOTSUPP;
	}
	d->client = begin();
	if (!d->client) {
		snprintf(msg, msglen, "debuginfod: cannot start a client");
		return -ENOMEM;
	}
	return 1;
}

static int dbgd_missed(const struct uwprof_dbgd *d, const uint8_t *id,
		       size_t size)
{
	size_t i;

	for (i = 0; i < d->nr_misses; i++)
		if (d->misses[i].size == size &&
		    !memcmp(d->misses[i].id, id, size))
			return 1;
	return 0;
}

static void dbgd_remember_miss(struct uwprof_dbgd *d, const uint8_t *id,
			       size_t size)
{
	struct dbgd_miss *v;

	v = realloc(d->misses, (d->nr_misses + 1) * sizeof(*v));
	if (!v)
		return;	/* then the next object with this id asks again */
	d->misses = v;
	memcpy(v[d->nr_misses].id, id, size);
	v[d->nr_misses].size = size;
	d->nr_misses++;
}

int uwprof_dbgd_find(struct uwprof_dbgd *d, const uint8_t *build_id,
		     size_t size, char **path, char *msg, size_t msglen)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	char *p = NULL;
	int fd;

	*path = NULL;
	if (msglen)
		msg[0] = 0;
	if (!urls || !*urls)
		return -EOPNOTSUPP;
	if (!size || size > DBGD_ID_MAX)
		return -ENOENT;
	if (d->state < 0 || dbgd_missed(d, build_id, size))
		return d->state < 0 ? d->state : -ENOENT;
	if (!d->state) {
		d->state = dbgd_start(d, msg, msglen);
		if (d->state < 0)
			return d->state;
	}
	fd = d->find(d->client, build_id, (int)size, &p);
	if (fd < 0) {
		free(p);
		dbgd_remember_miss(d, build_id, size);
		/* libdebuginfod says -ENOENT for "no server has it". */
		snprintf(msg, msglen, "%s", fd == -ENOENT ?
			 "not found on the servers" : strerror(-fd));
		return fd;
	}
	close(fd);
	if (!p) {
		dbgd_remember_miss(d, build_id, size);
		snprintf(msg, msglen, "no path for the fetched file");
		return -ENOENT;
	}
	*path = p;
	return 0;
}
