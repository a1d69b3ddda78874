// SPDX-License-Identifier: GPL-2.0
/*
 * The profile file's writer: records buffered and written to a temporary
 * file that is renamed into place once complete (atomic_file.h); the
 * first error sticks and is reported by the commit. Format in
 * profile_file.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomic_file.h"
#include "profile_file.h"
#include "vec.h"

#define PF_FLUSH_AT	(1U << 20)
#define PF_REC_MAX	(1U << 30)	/* no record of ours comes near this */

static int pfw_fail(struct uwprof_pfw *w, int error, const char *fmt, ...)
{
	va_list ap;

	if (w->error)
		return w->error;
	w->error = error;
	va_start(ap, fmt);
	vsnprintf(w->err, sizeof(w->err), fmt, ap);
	va_end(ap);
	return error;
}

static int pfw_flush(struct uwprof_pfw *w)
{
	size_t off = 0;
	ssize_t n;

	if (w->error)
		return w->error;
	while (off < w->len) {
		n = write(w->out.fd, w->buf + off, w->len - off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return pfw_fail(w, -errno, "%s: writing: %s", w->out.tmp,
					strerror(errno));
		}
		if (n == 0)
			return pfw_fail(w, -EIO, "%s: writing: no progress",
					w->out.tmp);
		off += (size_t)n;
	}
	w->written += w->len;
	w->len = 0;
	return 0;
}

/* Room for 'n' more bytes in the buffer. */
static int pfw_reserve(struct uwprof_pfw *w, size_t n)
{
	if (w->error)
		return w->error;
	if (w->len + n <= w->cap)
		return 0;
	if (w->len && pfw_flush(w))
		return w->error;
	if (n <= w->cap)
		return 0;
	if (VEC_RESERVE(w->buf, w->cap, n, 4096))
		return pfw_fail(w, -ENOMEM, "%s: out of memory", w->out.path);
	return 0;
}

static void pfw_put(struct uwprof_pfw *w, const void *p, size_t n)
{
	memcpy(w->buf + w->len, p, n);
	w->len += n;
}

static size_t pf_str_size(const char *s)
{
	return 4 + (s ? strlen(s) : 0);
}

static void pfw_put_str(struct uwprof_pfw *w, const char *s)
{
	uint32_t n = s ? (uint32_t)strlen(s) : 0;

	pfw_put(w, &n, 4);
	if (n)
		pfw_put(w, s, n);
}

static void pfw_pad(struct uwprof_pfw *w, size_t start)
{
	static const uint8_t zero[8];
	size_t used = w->len - start;

	if (used & 7)
		pfw_put(w, zero, 8 - (used & 7));
}

/*
 * Starts a record of 'payload' bytes (before padding); returns the buffer
 * offset of its header, or a negative errno, also kept in w->error.
 */
static long pfw_begin(struct uwprof_pfw *w, uint32_t type, size_t payload)
{
	struct uwprof_pf_rec r;
	size_t total = (sizeof(r) + payload + 7) & ~(size_t)7;
	long start;

	if (total > PF_REC_MAX)
		return pfw_fail(w, -E2BIG, "%s: record of %zu bytes too large",
				w->out.path, total);
	if (pfw_reserve(w, total))
		return w->error;
	start = (long)w->len;
	r.type = type;
	r.size = (uint32_t)total;
	pfw_put(w, &r, sizeof(r));
	return start;
}

static int pfw_end(struct uwprof_pfw *w, long start)
{
	pfw_pad(w, (size_t)start);
	if (w->len >= PF_FLUSH_AT)
		return pfw_flush(w);
	return 0;
}

int uwprof_pfw_open(struct uwprof_pfw *w, const char *path,
		    const struct uwprof_pfw_header_in *h)
{
	struct uwprof_pf_file_hdr fh = { .version = UWPROF_PF_VERSION,
					 .hdr_size = sizeof(fh) };
	long start;
	int ret;

	memset(w, 0, sizeof(*w));
	/* Readable by others like perf.data, unless the umask says not. */
	ret = uwprof_afile_open(&w->out, path, 0644);
	if (ret == -ENOMEM)
		return pfw_fail(w, ret, "%s: out of memory", path);
	if (ret)
		return pfw_fail(w, ret, "%s: cannot create a file in its directory: %s",
				path, strerror(-ret));

	memcpy(fh.magic, UWPROF_PF_MAGIC, sizeof(fh.magic));
	if (pfw_reserve(w, sizeof(fh)))
		return w->error;
	pfw_put(w, &fh, sizeof(fh));
	start = pfw_begin(w, UWPROF_PF_HEADER, sizeof(h->fixed) +
			  pf_str_size(h->hostname) + pf_str_size(h->release) +
			  pf_str_size(h->cmdline));
	if (start < 0)
		return w->error;
	pfw_put(w, &h->fixed, sizeof(h->fixed));
	pfw_put_str(w, h->hostname);
	pfw_put_str(w, h->release);
	pfw_put_str(w, h->cmdline);
	return pfw_end(w, start);
}

int uwprof_pfw_object(struct uwprof_pfw *w, const struct uwprof_pf_obj_fixed *o,
		      const char *path, const void *image, uint64_t image_size)
{
	long start;

	if (!image)
		image_size = 0;
	start = pfw_begin(w, UWPROF_PF_OBJECT, sizeof(*o) + pf_str_size(path) +
			  8 + image_size);
	if (start < 0)
		return w->error;
	pfw_put(w, o, sizeof(*o));
	pfw_put_str(w, path);
	pfw_put(w, &image_size, 8);
	if (image_size)
		pfw_put(w, image, image_size);
	return pfw_end(w, start);
}

int uwprof_pfw_maps(struct uwprof_pfw *w, uint64_t time_ns, uint32_t pid,
		    const char *comm, const struct uwprof_pf_map *maps,
		    uint32_t nr_maps)
{
	struct uwprof_pf_maps_fixed f = {
		.time_ns = time_ns, .pid = pid, .nr_maps = nr_maps,
	};
	long start;

	start = pfw_begin(w, UWPROF_PF_MAPS, sizeof(f) +
			  (size_t)nr_maps * sizeof(*maps) + pf_str_size(comm));
	if (start < 0)
		return w->error;
	pfw_put(w, &f, sizeof(f));
	if (nr_maps)
		pfw_put(w, maps, (size_t)nr_maps * sizeof(*maps));
	pfw_put_str(w, comm);
	return pfw_end(w, start);
}

int uwprof_pfw_sample(struct uwprof_pfw *w, const struct uwprof_rec_sample *s)
{
	struct uwprof_pf_sample_fixed f = {
		.time_ns = s->time_ns, .pid = s->pid, .tid = s->tid,
		.cpu = s->cpu, .flags = s->flags, .period = s->period,
		.nr_kernel = s->nr_kernel, .nr_user = s->nr_user,
	};
	size_t n = (size_t)s->nr_kernel + s->nr_user;
	long start;

	start = pfw_begin(w, s->flags & UWPROF_SAMPLE_OFF_CPU ?
			  UWPROF_PF_OFF_CPU : UWPROF_PF_SAMPLE, sizeof(f) + 8 * n);
	if (start < 0)
		return w->error;
	pfw_put(w, &f, sizeof(f));
	if (n)
		pfw_put(w, s->ips, 8 * n);
	return pfw_end(w, start);
}

/* A record that is one fixed-size struct. */
static int pfw_fixed(struct uwprof_pfw *w, uint32_t type, const void *r,
		     size_t n)
{
	long start = pfw_begin(w, type, n);

	if (start < 0)
		return w->error;
	pfw_put(w, r, n);
	return pfw_end(w, start);
}

int uwprof_pfw_lost(struct uwprof_pfw *w, uint64_t time_ns, uint32_t cpu,
		    uint64_t count)
{
	struct uwprof_pf_lost_rec r = {
		.time_ns = time_ns, .cpu = cpu, .count = count,
	};

	return pfw_fixed(w, UWPROF_PF_LOST, &r, sizeof(r));
}

int uwprof_pfw_exit(struct uwprof_pfw *w, uint64_t time_ns, uint32_t pid,
		    uint32_t exec)
{
	struct uwprof_pf_exit_rec r = {
		.time_ns = time_ns, .pid = pid, .exec = exec,
	};

	return pfw_fixed(w, UWPROF_PF_EXIT, &r, sizeof(r));
}

int uwprof_pfw_thread(struct uwprof_pfw *w, uint64_t time_ns, uint32_t pid,
		      uint32_t tid, const char *comm)
{
	struct uwprof_pf_thread_fixed f = {
		.time_ns = time_ns, .pid = pid, .tid = tid,
	};
	long start = pfw_begin(w, UWPROF_PF_THREAD, sizeof(f) + pf_str_size(comm));

	if (start < 0)
		return w->error;
	pfw_put(w, &f, sizeof(f));
	pfw_put_str(w, comm);
	return pfw_end(w, start);
}

int uwprof_pfw_ksyms(struct uwprof_pfw *w, const struct uwprof_pf_ksym *syms,
		     uint64_t nr)
{
	size_t payload = 8;
	uint64_t i;
	long start;

	for (i = 0; i < nr; i++)
		payload += (16 + pf_str_size(syms[i].name) + 7) & ~(size_t)7;
	start = pfw_begin(w, UWPROF_PF_KSYMS, payload);
	if (start < 0)
		return w->error;
	pfw_put(w, &nr, 8);
	for (i = 0; i < nr; i++) {
		size_t at = w->len;

		pfw_put(w, &syms[i].addr, 8);
		pfw_put(w, &syms[i].size, 8);
		pfw_put_str(w, syms[i].name);
		pfw_pad(w, at);
	}
	return pfw_end(w, start);
}

int uwprof_pfw_jitsyms(struct uwprof_pfw *w, uint64_t time_ns, uint32_t pid,
		       uint32_t source, const struct uwprof_pf_jitsym *syms,
		       uint64_t nr)
{
	struct uwprof_pf_jit_fixed f = {
		.time_ns = time_ns, .count = nr, .pid = pid, .source = source,
	};
	size_t payload = sizeof(f);
	uint64_t i;
	long start;

	for (i = 0; i < nr; i++)
		payload += (16 + 4 + (size_t)syms[i].len + 7) & ~(size_t)7;
	start = pfw_begin(w, UWPROF_PF_JITSYMS, payload);
	if (start < 0)
		return w->error;
	pfw_put(w, &f, sizeof(f));
	for (i = 0; i < nr; i++) {
		size_t at = w->len;

		pfw_put(w, &syms[i].start, 8);
		pfw_put(w, &syms[i].size, 8);
		pfw_put(w, &syms[i].len, 4);
		if (syms[i].len)
			pfw_put(w, syms[i].name, syms[i].len);
		pfw_pad(w, at);
	}
	return pfw_end(w, start);
}

int uwprof_pfw_stats(struct uwprof_pfw *w, const struct uwprof_pf_stats *st)
{
	return pfw_fixed(w, UWPROF_PF_STATS, st, sizeof(*st));
}

static void pfw_free(struct uwprof_pfw *w)
{
	free(w->buf);
	w->buf = NULL;
}

void uwprof_pfw_abort(struct uwprof_pfw *w)
{
	uwprof_afile_abort(&w->out);
	pfw_free(w);
}

int uwprof_pfw_commit(struct uwprof_pfw *w)
{
	long start;
	int ret;

	start = pfw_begin(w, UWPROF_PF_END, 0);
	if (start >= 0)
		pfw_end(w, start);
	pfw_flush(w);
	if (w->error) {
		uwprof_afile_abort(&w->out);
	} else {
		/* The final name for the message: the commit releases it. */
		char *path = strdup(w->out.path);

		ret = uwprof_afile_commit(&w->out);
		if (ret)
			pfw_fail(w, ret, "%s: %s", path ? path : "profile",
				 strerror(-ret));
		free(path);
	}
	pfw_free(w);
	return w->error;
}
