// SPDX-License-Identifier: GPL-2.0
/*
 * The profile file: the writer (buffered, temporary file renamed into
 * place once complete) and the reader (whole file mapped, every record and
 * field bounds-checked before use). Format in profile_file.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"
#include "profile_file.h"

_Static_assert(sizeof(struct uwprof_pf_file_hdr) == 16, "file header");
_Static_assert(sizeof(struct uwprof_pf_hdr_fixed) == 40, "header record");
_Static_assert(sizeof(struct uwprof_pf_obj_fixed) == 40, "object record");
_Static_assert(sizeof(struct uwprof_pf_map) == 48, "map entry");
_Static_assert(sizeof(struct uwprof_pf_maps_fixed) == 24, "maps record");
_Static_assert(sizeof(struct uwprof_pf_sample_fixed) == 40, "sample record");
_Static_assert(sizeof(struct uwprof_pf_lost_rec) == 24, "lost record");
_Static_assert(sizeof(struct uwprof_pf_exit_rec) == 16, "exit record");
_Static_assert(sizeof(struct uwprof_pf_thread_fixed) == 16, "thread record");
_Static_assert(sizeof(struct uwprof_pf_stats) % 8 == 0, "stats record");
_Static_assert(UWPROF_PF_STOP__COUNT <= 16, "stats.stop[] holds every stop reason");

#define PF_FLUSH_AT	(1U << 20)
#define PF_REC_MAX	(1U << 30)	/* no record of ours comes near this */

/* ---------------------------------------------------------------- writer */

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
	uint8_t *nb;
	size_t cap;

	if (w->error)
		return w->error;
	if (w->len + n <= w->cap)
		return 0;
	if (w->len && pfw_flush(w))
		return w->error;
	if (n <= w->cap)
		return 0;
	cap = w->cap ? w->cap : 4096;
	while (cap < n)
		cap *= 2;
	nb = realloc(w->buf, cap);
	if (!nb)
		return pfw_fail(w, -ENOMEM, "%s: out of memory", w->out.path);
	w->buf = nb;
	w->cap = cap;
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

	start = pfw_begin(w, UWPROF_PF_SAMPLE, sizeof(f) + 8 * n);
	if (start < 0)
		return w->error;
	pfw_put(w, &f, sizeof(f));
	if (n)
		pfw_put(w, s->ips, 8 * n);
	return pfw_end(w, start);
}

int uwprof_pfw_lost(struct uwprof_pfw *w, uint64_t time_ns, uint32_t cpu,
		    uint64_t count)
{
	struct uwprof_pf_lost_rec r = {
		.time_ns = time_ns, .cpu = cpu, .count = count,
	};
	long start = pfw_begin(w, UWPROF_PF_LOST, sizeof(r));

	if (start < 0)
		return w->error;
	pfw_put(w, &r, sizeof(r));
	return pfw_end(w, start);
}

int uwprof_pfw_exit(struct uwprof_pfw *w, uint64_t time_ns, uint32_t pid,
		    uint32_t exec)
{
	struct uwprof_pf_exit_rec r = {
		.time_ns = time_ns, .pid = pid, .exec = exec,
	};
	long start = pfw_begin(w, UWPROF_PF_EXIT, sizeof(r));

	if (start < 0)
		return w->error;
	pfw_put(w, &r, sizeof(r));
	return pfw_end(w, start);
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

int uwprof_pfw_stats(struct uwprof_pfw *w, const struct uwprof_pf_stats *st)
{
	long start = pfw_begin(w, UWPROF_PF_STATS, sizeof(*st));

	if (start < 0)
		return w->error;
	pfw_put(w, st, sizeof(*st));
	return pfw_end(w, start);
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

/* ---------------------------------------------------------------- reader */

/*
 * A bounded cursor over one record's payload. The first failure sticks:
 * -EINVAL when a read runs past the record, -ENOMEM when a copy fails;
 * later reads return zeros and NULL, so a parser checks once at the end.
 */
struct pf_cur {
	const uint8_t	*p;
	size_t		left;
	int		err;
};

static int cur_get(struct pf_cur *c, void *dst, size_t n)
{
	if (c->err || n > c->left) {
		if (!c->err)
			c->err = -EINVAL;
		memset(dst, 0, n);
		return c->err;
	}
	memcpy(dst, c->p, n);
	c->p += n;
	c->left -= n;
	return 0;
}

static const uint8_t *cur_take(struct pf_cur *c, size_t n)
{
	const uint8_t *p = c->p;

	if (c->err || n > c->left) {
		if (!c->err)
			c->err = -EINVAL;
		return NULL;
	}
	c->p += n;
	c->left -= n;
	return p;
}

/* Strings are copied with a NUL so callers can use them as C strings. */
struct pf_strs {
	char		**v;
	size_t		n, cap;
};

static const char *cur_str(struct pf_cur *c, struct pf_strs *keep)
{
	const uint8_t *p;
	uint32_t n;
	char *s;

	if (cur_get(c, &n, 4))
		return NULL;
	p = cur_take(c, n);
	if (!p)
		return NULL;
	if (keep->n == keep->cap) {
		size_t cap = keep->cap ? keep->cap * 2 : 64;
		char **nv = realloc(keep->v, cap * sizeof(*nv));

		if (!nv) {
			c->err = -ENOMEM;
			return NULL;
		}
		keep->v = nv;
		keep->cap = cap;
	}
	s = malloc((size_t)n + 1);
	if (!s) {
		c->err = -ENOMEM;
		return NULL;
	}
	memcpy(s, p, n);
	s[n] = 0;
	keep->v[keep->n++] = s;
	return s;
}

/* The reader's private state beyond struct uwprof_pf. */
struct pf_priv {
	struct uwprof_pf pub;
	struct pf_strs strs;
	size_t cap_objects, cap_maps, cap_samples, cap_exits, cap_threads;
};

static int pf_grow(void **arr, size_t *cap, size_t n, size_t elem)
{
	void *na;
	size_t nc;

	if (n < *cap)
		return 0;
	nc = *cap ? *cap * 2 : 64;
	na = realloc(*arr, nc * elem);
	if (!na)
		return -ENOMEM;
	*arr = na;
	*cap = nc;
	return 0;
}

#define PF_PUSH(pp, arr, nr, capf) \
	pf_grow((void **)&(pp)->pub.arr, &(pp)->capf, (pp)->pub.nr, \
		sizeof(*(pp)->pub.arr))

static const char *const pf_type_name[] = {
	[UWPROF_PF_HEADER] = "header", [UWPROF_PF_OBJECT] = "object",
	[UWPROF_PF_MAPS] = "maps", [UWPROF_PF_SAMPLE] = "sample",
	[UWPROF_PF_LOST] = "lost", [UWPROF_PF_EXIT] = "exit",
	[UWPROF_PF_THREAD] = "thread", [UWPROF_PF_KSYMS] = "ksyms",
	[UWPROF_PF_STATS] = "stats", [UWPROF_PF_END] = "end",
};

#define PF_NR_TYPES	(sizeof(pf_type_name) / sizeof(pf_type_name[0]))

static int pf_header(struct pf_priv *pp, struct pf_cur *c)
{
	struct uwprof_pf_header *h = &pp->pub.hdr;
	struct uwprof_pf_hdr_fixed f;

	cur_get(c, &f, sizeof(f));
	h->arch = f.arch;
	h->event = f.event;
	h->freq_hz = f.freq_hz;
	h->flags = f.flags;
	h->max_depth = f.max_depth;
	h->start_realtime_ns = f.start_realtime_ns;
	h->start_mono_ns = f.start_mono_ns;
	h->page_size = f.page_size;
	h->abi_version = f.abi_version;
	h->hostname = cur_str(c, &pp->strs);
	h->release = cur_str(c, &pp->strs);
	h->cmdline = cur_str(c, &pp->strs);
	if (c->err)
		return c->err;
	if (f.arch != UWPROF_ARCH_X86_64 && f.arch != UWPROF_ARCH_ARM64)
		return -EINVAL;
	return 0;
}

static int pf_object(struct pf_priv *pp, struct pf_cur *c)
{
	struct uwprof_pf_object *o;
	struct uwprof_pf_obj_fixed f;
	uint64_t isz;

	if (PF_PUSH(pp, objects, nr_objects, cap_objects))
		return -ENOMEM;
	o = &pp->pub.objects[pp->pub.nr_objects];
	cur_get(c, &f, sizeof(f));
	o->object_id = f.object_id;
	o->arch = f.arch;
	o->flags = f.flags;
	o->build_id_size = f.build_id_size;
	memcpy(o->build_id, f.build_id, sizeof(o->build_id));
	o->path = cur_str(c, &pp->strs);
	cur_get(c, &isz, 8);
	if (c->err)
		return c->err;
	if (isz > c->left || f.build_id_size > UWPROF_PF_BUILD_ID_MAX ||
	    !f.object_id)
		return -EINVAL;
	o->image = isz ? cur_take(c, (size_t)isz) : NULL;
	o->image_size = isz;
	pp->pub.nr_objects++;
	return 0;
}

static int pf_maps(struct pf_priv *pp, struct pf_cur *c)
{
	struct uwprof_pf_maps_fixed f;
	struct uwprof_pf_maps *m;
	const struct uwprof_pf_map *v;
	uint32_t i;

	if (PF_PUSH(pp, maps, nr_maps, cap_maps))
		return -ENOMEM;
	m = &pp->pub.maps[pp->pub.nr_maps];
	cur_get(c, &f, sizeof(f));
	if (c->err)
		return c->err;
	if (f.nr_maps > c->left / sizeof(*v))
		return -EINVAL;
	/* The fixed part keeps the array 8-byte aligned inside the mapping. */
	v = (const void *)cur_take(c, (size_t)f.nr_maps * sizeof(*v));
	m->time_ns = f.time_ns;
	m->pid = f.pid;
	m->nr_maps = f.nr_maps;
	m->maps = v;
	m->comm = cur_str(c, &pp->strs);
	if (c->err)
		return c->err;
	for (i = 0; i < f.nr_maps; i++) {
		if (v[i].start >= v[i].end)
			return -EINVAL;
		if (i && v[i].start < v[i - 1].end)
			return -EINVAL;
	}
	pp->pub.nr_maps++;
	return 0;
}

static int pf_sample(struct pf_priv *pp, struct pf_cur *c)
{
	struct uwprof_pf_sample_fixed f;
	struct uwprof_pf_sample *s;
	size_t n;

	if (PF_PUSH(pp, samples, nr_samples, cap_samples))
		return -ENOMEM;
	s = &pp->pub.samples[pp->pub.nr_samples];
	cur_get(c, &f, sizeof(f));
	if (c->err)
		return c->err;
	n = (size_t)f.nr_kernel + f.nr_user;
	if (n > c->left / 8)
		return -EINVAL;
	s->time_ns = f.time_ns;
	s->pid = f.pid;
	s->tid = f.tid;
	s->cpu = f.cpu;
	s->flags = f.flags;
	s->period = f.period;
	s->nr_kernel = f.nr_kernel;
	s->nr_user = f.nr_user;
	s->ips = (const void *)cur_take(c, 8 * n);
	pp->pub.nr_samples++;
	return 0;
}

static int pf_thread(struct pf_priv *pp, struct pf_cur *c)
{
	struct uwprof_pf_thread_fixed f;
	struct uwprof_pf_thread *t;

	if (PF_PUSH(pp, threads, nr_threads, cap_threads))
		return -ENOMEM;
	t = &pp->pub.threads[pp->pub.nr_threads];
	cur_get(c, &f, sizeof(f));
	t->time_ns = f.time_ns;
	t->pid = f.pid;
	t->tid = f.tid;
	t->comm = cur_str(c, &pp->strs);
	if (c->err)
		return c->err;
	pp->pub.nr_threads++;
	return 0;
}

static int pf_ksyms(struct pf_priv *pp, struct pf_cur *c)
{
	struct uwprof_pf *pf = &pp->pub;
	uint64_t n, i;
	size_t old = pf->nr_ksyms;
	struct uwprof_pf_ksym *k;

	cur_get(c, &n, 8);
	/* Each entry takes at least 24 bytes. */
	if (c->err)
		return c->err;
	if (n > c->left / 24)
		return -EINVAL;
	k = realloc(pf->ksyms, (old + n + 1) * sizeof(*k));
	if (!k)
		return -ENOMEM;
	pf->ksyms = k;
	for (i = 0; i < n; i++) {
		const uint8_t *at = c->p;
		struct uwprof_pf_ksym *e = &k[old + i];
		size_t used;

		cur_get(c, &e->addr, 8);
		cur_get(c, &e->size, 8);
		e->name = cur_str(c, &pp->strs);
		if (c->err)
			return c->err;
		used = (size_t)(c->p - at);
		if (used & 7)
			cur_take(c, 8 - (used & 7));
		if (c->err)
			return c->err;
	}
	pf->nr_ksyms = old + n;
	return 0;
}

static int pf_one(struct pf_priv *pp, uint32_t type, struct pf_cur *c)
{
	struct uwprof_pf *pf = &pp->pub;

	switch (type) {
	case UWPROF_PF_OBJECT:
		return pf_object(pp, c);
	case UWPROF_PF_MAPS:
		return pf_maps(pp, c);
	case UWPROF_PF_SAMPLE:
		return pf_sample(pp, c);
	case UWPROF_PF_LOST: {
		struct uwprof_pf_lost_rec r;

		if (cur_get(c, &r, sizeof(r)))
			return c->err;
		pf->lost += r.count;
		pf->nr_lost_recs++;
		return 0;
	}
	case UWPROF_PF_EXIT: {
		struct uwprof_pf_exit_rec r;

		if (cur_get(c, &r, sizeof(r)))
			return c->err;
		if (r.exec > 1)
			return -EINVAL;
		if (PF_PUSH(pp, exits, nr_exits, cap_exits))
			return -ENOMEM;
		pf->exits[pf->nr_exits++] = r;
		return 0;
	}
	case UWPROF_PF_THREAD:
		return pf_thread(pp, c);
	case UWPROF_PF_KSYMS:
		return pf_ksyms(pp, c);
	case UWPROF_PF_STATS:
		if (cur_get(c, &pf->stats, sizeof(pf->stats)))
			return c->err;
		pf->has_stats = 1;
		return 0;
	case UWPROF_PF_HEADER:
		return -EINVAL;	/* only one, and first */
	default:
		pf->skipped_recs++;
		return 0;
	}
}

static int pf_maps_cmp(const void *a, const void *b)
{
	const struct uwprof_pf_maps *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	/* Same pid and time: keep file order (later replaces earlier). */
	return x->maps < y->maps ? -1 : x->maps > y->maps;
}

static int pf_ksym_cmp(const void *a, const void *b)
{
	const struct uwprof_pf_ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int pf_parse(struct pf_priv *pp, char *err, size_t errlen)
{
	struct uwprof_pf *pf = &pp->pub;
	struct uwprof_pf_file_hdr fh;
	size_t off;
	int first = 1, ended = 0;

	if (pf->size < sizeof(fh)) {
		snprintf(err, errlen, "%s: truncated: %zu bytes, no file header",
			 pf->path, pf->size);
		return -EINVAL;
	}
	memcpy(&fh, pf->data, sizeof(fh));
	if (memcmp(fh.magic, UWPROF_PF_MAGIC, sizeof(fh.magic))) {
		snprintf(err, errlen, "%s: not a uwprof profile (bad magic)",
			 pf->path);
		return -EINVAL;
	}
	if (fh.version != UWPROF_PF_VERSION) {
		snprintf(err, errlen,
			 "%s: profile format version %u, this uwprof reads %u",
			 pf->path, fh.version, UWPROF_PF_VERSION);
		return -EINVAL;
	}
	if (fh.hdr_size < sizeof(fh) || (fh.hdr_size & 7) ||
	    fh.hdr_size > pf->size) {
		snprintf(err, errlen, "%s: bad file header size %u", pf->path,
			 fh.hdr_size);
		return -EINVAL;
	}
	pf->hdr.version = fh.version;
	for (off = fh.hdr_size; off < pf->size;) {
		struct uwprof_pf_rec r;
		struct pf_cur c;
		const char *tn;
		int ret;

		if (pf->size - off < sizeof(r)) {
			snprintf(err, errlen,
				 "%s: truncated: %zu stray bytes at offset %zu",
				 pf->path, pf->size - off, off);
			return -EINVAL;
		}
		memcpy(&r, pf->data + off, sizeof(r));
		tn = r.type < PF_NR_TYPES &&
		     pf_type_name[r.type] ? pf_type_name[r.type] : "unknown";
		if (r.size < sizeof(r) || (r.size & 7)) {
			snprintf(err, errlen,
				 "%s: corrupt: %s record (type %u) at offset %zu has size %u",
				 pf->path, tn, r.type, off, r.size);
			return -EINVAL;
		}
		if (r.size > pf->size - off) {
			snprintf(err, errlen,
				 "%s: truncated: %s record at offset %zu needs %u bytes, %zu left",
				 pf->path, tn, off, r.size, pf->size - off);
			return -EINVAL;
		}
		if (ended) {
			snprintf(err, errlen,
				 "%s: corrupt: %s record at offset %zu after the end record",
				 pf->path, tn, off);
			return -EINVAL;
		}
		if (r.type == UWPROF_PF_END && !first) {
			ended = 1;
			off += r.size;
			continue;
		}
		c.p = pf->data + off + sizeof(r);
		c.left = r.size - sizeof(r);
		c.err = 0;
		if (first && r.type != UWPROF_PF_HEADER) {
			snprintf(err, errlen,
				 "%s: corrupt: first record at offset %zu is %s, not header",
				 pf->path, off, tn);
			return -EINVAL;
		}
		ret = first ? pf_header(pp, &c) : pf_one(pp, r.type, &c);
		if (ret == -ENOMEM) {
			snprintf(err, errlen, "%s: out of memory", pf->path);
			return -ENOMEM;
		}
		if (ret) {
			snprintf(err, errlen,
				 "%s: corrupt: %s record at offset %zu (size %u) is malformed",
				 pf->path, tn, off, r.size);
			return -EINVAL;
		}
		first = 0;
		off += r.size;
	}
	if (first) {
		snprintf(err, errlen, "%s: truncated: no header record", pf->path);
		return -EINVAL;
	}
	if (!ended) {
		snprintf(err, errlen,
			 "%s: truncated: ends at offset %zu without an end record",
			 pf->path, pf->size);
		return -EINVAL;
	}
	if (pf->nr_maps)
		qsort(pf->maps, pf->nr_maps, sizeof(*pf->maps), pf_maps_cmp);
	if (pf->nr_ksyms)
		qsort(pf->ksyms, pf->nr_ksyms, sizeof(*pf->ksyms), pf_ksym_cmp);
	return 0;
}

int uwprof_pf_open(const char *path, struct uwprof_pf **out, char *err,
		   size_t errlen)
{
	struct pf_priv *pp;
	struct stat st;
	void *m;
	int fd, ret;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return ret;
	}
	if (fstat(fd, &st)) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		return ret;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		close(fd);
		return -EINVAL;
	}
	pp = calloc(1, sizeof(*pp));
	if (pp)
		pp->pub.path = strdup(path);
	if (!pp || !pp->pub.path) {
		free(pp);
		close(fd);
		snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	pp->pub.size = (size_t)st.st_size;
	if (pp->pub.size) {
		m = mmap(NULL, pp->pub.size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m == MAP_FAILED) {
			ret = -errno;
			snprintf(err, errlen, "%s: mmap: %s", path, strerror(errno));
			close(fd);
			pp->pub.size = 0;
			uwprof_pf_close(&pp->pub);
			return ret;
		}
		pp->pub.data = m;
	}
	close(fd);
	ret = pf_parse(pp, err, errlen);
	if (ret) {
		uwprof_pf_close(&pp->pub);
		return ret;
	}
	*out = &pp->pub;
	return 0;
}

void uwprof_pf_close(struct uwprof_pf *pf)
{
	struct pf_priv *pp = (struct pf_priv *)pf;
	size_t i;

	if (!pf)
		return;
	if (pf->data)
		munmap((void *)pf->data, pf->size);
	for (i = 0; i < pp->strs.n; i++)
		free(pp->strs.v[i]);
	free(pp->strs.v);
	free(pf->objects);
	free(pf->maps);
	free(pf->samples);
	free(pf->exits);
	free(pf->threads);
	free(pf->ksyms);
	free(pf->path);
	free(pp);
}

const struct uwprof_pf_object *uwprof_pf_object_find(const struct uwprof_pf *pf,
						     uint64_t object_id)
{
	size_t i;

	for (i = 0; i < pf->nr_objects; i++)
		if (pf->objects[i].object_id == object_id)
			return &pf->objects[i];
	return NULL;
}

/* Whether 'pid' exec'd in (lo, hi]. */
static int pf_exec_between(const struct uwprof_pf *pf, uint32_t pid,
			   uint64_t lo, uint64_t hi)
{
	size_t i;

	for (i = 0; i < pf->nr_exits; i++) {
		const struct uwprof_pf_exit_rec *e = &pf->exits[i];

		if (e->pid == pid && e->exec && e->time_ns > lo &&
		    e->time_ns <= hi)
			return 1;
	}
	return 0;
}

const struct uwprof_pf_maps *uwprof_pf_maps_for(const struct uwprof_pf *pf,
						uint32_t pid, uint64_t time_ns)
{
	size_t lo = 0, hi = pf->nr_maps, first;
	const struct uwprof_pf_maps *m;

	/* First snapshot of 'pid'. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pf->maps[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	first = lo;
	if (first == pf->nr_maps || pf->maps[first].pid != pid)
		return NULL;
	/* Last snapshot of 'pid' taken at or before time_ns. */
	hi = first;
	while (hi + 1 < pf->nr_maps && pf->maps[hi + 1].pid == pid &&
	       pf->maps[hi + 1].time_ns <= time_ns)
		hi++;
	m = &pf->maps[hi];
	if (m->time_ns <= time_ns) {
		if (!pf_exec_between(pf, pid, m->time_ns, time_ns))
			return m;
		/* Exec'd since: the next snapshot, if it is the new image's. */
		if (hi + 1 < pf->nr_maps && pf->maps[hi + 1].pid == pid)
			return &pf->maps[hi + 1];
		return NULL;
	}
	/* Only later snapshots: the first, unless an exec separates them. */
	if (pf_exec_between(pf, pid, time_ns, m->time_ns - 1))
		return NULL;
	return m;
}

const struct uwprof_pf_map *uwprof_pf_map_find(const struct uwprof_pf_maps *m,
					       uint64_t ip)
{
	size_t lo = 0, hi;

	if (!m)
		return NULL;
	hi = m->nr_maps;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ip < m->maps[mid].start)
			hi = mid;
		else if (ip >= m->maps[mid].end)
			lo = mid + 1;
		else
			return &m->maps[mid];
	}
	return NULL;
}

static int pf_maps_hold(const struct uwprof_pf_maps *m, const uint64_t *ips,
			size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!uwprof_pf_map_find(m, ips[i]))
			return 0;
	return 1;
}

const struct uwprof_pf_maps *uwprof_pf_maps_for_ips(const struct uwprof_pf *pf,
						    uint32_t pid,
						    uint64_t time_ns,
						    const uint64_t *ips, size_t n)
{
	const struct uwprof_pf_maps *m = uwprof_pf_maps_for(pf, pid, time_ns);
	const struct uwprof_pf_maps *end = pf->maps + pf->nr_maps, *later;

	if (!m || pf_maps_hold(m, ips, n))
		return m;
	for (later = m + 1; later < end && later->pid == pid; later++) {
		if (later->time_ns <= time_ns)
			continue;
		if (pf_exec_between(pf, pid, time_ns, later->time_ns - 1))
			break;
		if (pf_maps_hold(later, ips, n))
			return later;
	}
	return m;
}

const struct uwprof_pf_map *uwprof_pf_resolve(const struct uwprof_pf *pf,
					      uint32_t pid, uint64_t time_ns,
					      uint64_t ip,
					      const struct uwprof_pf_object **obj)
{
	const struct uwprof_pf_map *map;

	map = uwprof_pf_map_find(uwprof_pf_maps_for_ips(pf, pid, time_ns, &ip, 1),
				 ip);
	if (obj)
		*obj = map && map->object_id ?
		       uwprof_pf_object_find(pf, map->object_id) : NULL;
	return map;
}

/* [*lo, *hi): the times between the execs of 'pid' around 'time_ns'. */
static void pf_image_span(const struct uwprof_pf *pf, uint32_t pid,
			  uint64_t time_ns, uint64_t *lo, uint64_t *hi)
{
	size_t i;

	*lo = 0;
	*hi = UINT64_MAX;
	for (i = 0; i < pf->nr_exits; i++) {
		const struct uwprof_pf_exit_rec *e = &pf->exits[i];

		if (e->pid != pid || !e->exec)
			continue;
		if (e->time_ns <= time_ns && e->time_ns > *lo)
			*lo = e->time_ns;
		else if (e->time_ns > time_ns && e->time_ns < *hi)
			*hi = e->time_ns;
	}
}

/* The last name recorded for the thread in [lo, hi), other than 'not'. */
static const char *pf_comm_in(const struct uwprof_pf *pf, uint32_t pid,
			      uint32_t tid, uint64_t lo, uint64_t hi,
			      const char *not)
{
	size_t i;

	for (i = pf->nr_threads; i-- > 0;)
		if (pf->threads[i].tid == tid && pf->threads[i].pid == pid &&
		    pf->threads[i].time_ns >= lo && pf->threads[i].time_ns < hi &&
		    (!not || strcmp(pf->threads[i].comm, not)))
			return pf->threads[i].comm;
	for (i = pf->nr_maps; i-- > 0;)
		if (pf->maps[i].pid == pid && pf->maps[i].comm &&
		    pf->maps[i].comm[0] && pf->maps[i].time_ns >= lo &&
		    pf->maps[i].time_ns < hi &&
		    (!not || strcmp(pf->maps[i].comm, not)))
			return pf->maps[i].comm;
	return NULL;
}

/* The name the exec at 'time_ns' gave the process (recorded at that time). */
static const char *pf_exec_comm(const struct uwprof_pf *pf, uint32_t pid,
				uint64_t time_ns)
{
	size_t i;

	for (i = 0; i < pf->nr_threads; i++)
		if (pf->threads[i].pid == pid && pf->threads[i].tid == pid &&
		    pf->threads[i].time_ns == time_ns)
			return pf->threads[i].comm;
	return NULL;
}

const char *uwprof_pf_comm(const struct uwprof_pf *pf, uint32_t pid,
			   uint32_t tid, uint64_t time_ns)
{
	const char *c;
	uint64_t lo, hi;

	pf_image_span(pf, pid, time_ns, &lo, &hi);
	/*
	 * The exec renames the process a little before it is reported: a name
	 * read from /proc in between is the next image's, so within an image
	 * that exec'd, a name other than the one the exec gave wins.
	 */
	c = NULL;
	if (hi != UINT64_MAX)
		c = pf_comm_in(pf, pid, tid, lo, hi, pf_exec_comm(pf, pid, hi));
	if (!c)
		c = pf_comm_in(pf, pid, tid, lo, hi, NULL);
	/*
	 * No name was taken while that image ran (it exec'd again before the
	 * recorder read it): the last one recorded, rather than none.
	 */
	return c ? c : pf_comm_in(pf, pid, tid, 0, UINT64_MAX, NULL);
}

const char *uwprof_pf_stop_name(unsigned int stop)
{
	static const char *const names[UWPROF_PF_STOP__COUNT] = {
		[UWPROF_STOP_OK] = "complete",
		[UWPROF_STOP_FP_END] = "fp-chain-end",
		[UWPROF_STOP_DEPTH] = "max-depth",
		[UWPROF_STOP_NO_MAP] = "no-mapping",
		[UWPROF_STOP_NO_ROW] = "no-table-row",
		[UWPROF_STOP_UNSUPPORTED] = "unsupported-rule",
		[UWPROF_STOP_READ] = "stack-unreadable",
		[UWPROF_STOP_BAD_SP] = "bad-sp",
		[UWPROF_STOP_BAD_PC] = "bad-pc",
		[UWPROF_STOP_NO_PROCESS] = "process-not-uploaded-yet",
		[UWPROF_PF_STOP_SNAPSHOT_SHORT] = "snapshot-too-short",
	};

	return stop < UWPROF_PF_STOP__COUNT && names[stop] ? names[stop] : "unknown";
}

const struct uwprof_pf_ksym *uwprof_pf_ksym_find(const struct uwprof_pf *pf,
						 uint64_t addr)
{
	size_t lo = 0, hi = pf->nr_ksyms;
	const struct uwprof_pf_ksym *k;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pf->ksyms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	k = &pf->ksyms[lo - 1];
	if (k->size && addr - k->addr >= k->size)
		return NULL;
	return k;
}
