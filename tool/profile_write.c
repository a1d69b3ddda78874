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
#include "u64map.h"
#include "vec.h"

#define PF_FLUSH_AT	(1U << 20)
#define PF_REC_MAX	(1U << 30)	/* no record of ours comes near this */
/* A SAMPLES record closes at this many entries or bytes of them. */
#define PF_BATCH_MAX	4096
#define PF_BATCH_BYTES	(64U << 10)
/*
 * The stack table starts over past these (ids keep growing, so a stack
 * seen again is written again under a new id): the writer's memory stays
 * bounded on a profile whose stacks do not repeat.
 */
#define PF_STACKS_MAX	(1U << 20)
#define PF_STACK_IPS_MAX (16U << 20)

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
 * Starts a record of 'payload' bytes (before padding) after the samples
 * batched so far (pfw_begin) or, for the batch itself, without writing
 * them first (pfw_begin_raw); returns the buffer offset of its header, or
 * a negative errno, also kept in w->error.
 */
static long pfw_begin_raw(struct uwprof_pfw *w, uint32_t type, size_t payload)
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

/* The batched entries as one SAMPLES record; the next batch starts afresh. */
static int pfw_batch_out(struct uwprof_pfw *w)
{
	struct uwprof_pf_samples_fixed f = {
		.nr_samples = w->sb_count, .nr_stacks = w->sb_stacks,
	};
	long start;

	if (!w->sb_count && !w->sb_stacks)
		return w->error;
	start = pfw_begin_raw(w, UWPROF_PF_SAMPLES, sizeof(f) + w->sb_len);
	if (start >= 0) {
		pfw_put(w, &f, sizeof(f));
		pfw_put(w, w->sb, w->sb_len);
		pfw_end(w, start);
	}
	w->sb_len = 0;
	w->sb_count = w->sb_stacks = 0;
	w->sb_tid = w->sb_pid = w->sb_cpu = 0;
	w->sb_time = w->sb_period = 0;
	return w->error;
}

/* Every record keeps its place after the samples before it. */
static long pfw_begin(struct uwprof_pfw *w, uint32_t type, size_t payload)
{
	if (pfw_batch_out(w))
		return w->error;
	return pfw_begin_raw(w, type, payload);
}

int uwprof_pfw_open(struct uwprof_pfw *w, const char *path,
		    const struct uwprof_pfw_header_in *h)
{
	struct uwprof_pf_file_hdr fh = { .version = UWPROF_PF_VERSION,
					 .hdr_size = sizeof(fh) };
	long start;
	int ret;

	memset(w, 0, sizeof(*w));
	/*
	 * Owner only, as perf writes perf.data: with kernel stacks the file
	 * holds raw kernel addresses and kallsyms, which defeat KASLR for
	 * any local reader; user stacks name every process's paths.
	 */
	ret = uwprof_afile_open(&w->out, path, 0600);
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

/* Unsigned LEB128 of 'v' at 'p'; returns its length (at most 10). */
static size_t pf_uleb(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

/* Zigzag: a negative difference costs as few bytes as a positive one. */
static uint64_t pf_zigzag(uint64_t d)
{
	return (d << 1) ^ (uint64_t)-(int64_t)(d >> 63);
}

/*
 * Each step (h ^ ip) * odd is a bijection of h, so stacks that differ in
 * one frame never share a hash; the map's own hash mixes the high bits
 * down. Two frames a round: every sample pays this, frame by frame.
 */
static uint64_t pf_stack_hash(const struct uwprof_rec_sample *s, size_t n)
{
	const uint64_t k = 0xff51afd7ed558ccdULL;
	uint64_t h = ((uint64_t)s->flags << 32 | (uint64_t)s->nr_kernel << 16 |
		      s->nr_user) * 0x9e3779b97f4a7c15ULL;
	size_t i;

	for (i = 0; i + 2 <= n; i += 2) {
		h = (h ^ s->ips[i]) * k;
		h = (h ^ s->ips[i + 1]) * k;
	}
	if (i < n)
		h = (h ^ s->ips[i]) * k;
	return h;
}

static int pfw_stack_same(const struct uwprof_pfw *w,
			  const struct uwprof_pfw_stack *st,
			  const struct uwprof_rec_sample *s, size_t n)
{
	return st->flags == s->flags && st->nr_kernel == s->nr_kernel &&
	       st->nr_user == s->nr_user &&
	       (!n || !memcmp(w->st_ips + st->ips_off, s->ips, 8 * n));
}

/* Forgets every stack (see PF_STACKS_MAX); their ids stay used. */
static void pfw_stacks_reset(struct uwprof_pfw *w)
{
	uwprof_u64map_free(&w->st_map);
	w->nr_stacks = 0;
	w->nr_st_ips = 0;
	w->has_last = 0;
}

/*
 * The batch entry defining stack 'st' (its ips already in st_ips), its
 * root side shared with the previous sample's stack where they agree.
 */
static int pfw_stack_def(struct uwprof_pfw *w, const struct uwprof_pfw_stack *st)
{
	const struct uwprof_pfw_stack *p = w->has_last ?
					   &w->stacks[w->last_stack] : NULL;
	const uint64_t *ips = w->st_ips + st->ips_off, *pips;
	size_t n = (size_t)st->nr_kernel + st->nr_user, pn, shared = 0, i, m;
	uint64_t prev;
	uint8_t *e;

	if (p) {
		pn = (size_t)p->nr_kernel + p->nr_user;
		pips = w->st_ips + p->ips_off;
		while (shared < n && shared < pn &&
		       ips[n - 1 - shared] == pips[pn - 1 - shared])
			shared++;
	}
	if (VEC_RESERVE(w->sb, w->sb_cap, w->sb_len + 1 + 6 * 10 + 10 * n, 4096))
		return pfw_fail(w, -ENOMEM, "%s: out of memory", w->out.path);
	e = w->sb + w->sb_len;
	m = 0;
	e[m++] = UWPROF_PF_SMP_ENTRY | UWPROF_PF_SMP_STACK;
	m += pf_uleb(e + m, st->id);
	m += pf_uleb(e + m, st->flags);
	m += pf_uleb(e + m, st->nr_kernel);
	m += pf_uleb(e + m, st->nr_user);
	m += pf_uleb(e + m, shared ? (uint64_t)p->id + 1 : 0);
	m += pf_uleb(e + m, shared);
	prev = shared ? ips[n - shared] : 0;
	for (i = n - shared; i-- > 0;) {
		m += pf_uleb(e + m, pf_zigzag(ips[i] - prev));
		prev = ips[i];
	}
	w->sb_len += m;
	w->sb_stacks++;
	w->nr_stack_defs++;
	return 0;
}

/* Remembers a new stack under hash key 'key' and defines it in the batch. */
static int pfw_stack_add(struct uwprof_pfw *w, const struct uwprof_rec_sample *s,
			 size_t n, uint64_t key, uint32_t *id)
{
	struct uwprof_pfw_stack *st;

	if (w->next_stack_id > UINT32_MAX)
		return pfw_fail(w, -E2BIG, "%s: more than 2^32 distinct stacks",
				w->out.path);
	if (VEC_RESERVE(w->stacks, w->cap_stacks, w->nr_stacks + 1, 256) ||
	    VEC_RESERVE(w->st_ips, w->cap_st_ips, w->nr_st_ips + n, 4096) ||
	    uwprof_u64map_put(&w->st_map, key, (uint32_t)w->nr_stacks) < 0)
		return pfw_fail(w, -ENOMEM, "%s: out of memory", w->out.path);
	st = &w->stacks[w->nr_stacks];
	st->ips_off = w->nr_st_ips;
	st->id = (uint32_t)w->next_stack_id++;
	st->flags = s->flags;
	st->nr_kernel = s->nr_kernel;
	st->nr_user = s->nr_user;
	if (n)
		memcpy(w->st_ips + w->nr_st_ips, s->ips, 8 * n);
	w->nr_st_ips += n;
	*id = st->id;
	if (pfw_stack_def(w, st))
		return w->error;
	w->last_stack = w->nr_stacks++;
	w->has_last = 1;
	return 0;
}

/* The id of the sample's stack, defined now if it is new. */
static int pfw_stack_id(struct uwprof_pfw *w, const struct uwprof_rec_sample *s,
			uint32_t *id)
{
	size_t n = (size_t)s->nr_kernel + s->nr_user;
	uint64_t key = pf_stack_hash(s, n);
	uint32_t idx;

	/* Distinct stacks with equal hashes take the next free keys. */
	for (;; key++) {
		if (!uwprof_u64map_get(&w->st_map, key, &idx))
			break;
		if (pfw_stack_same(w, &w->stacks[idx], s, n)) {
			*id = w->stacks[idx].id;
			w->last_stack = idx;
			w->has_last = 1;
			return 0;
		}
	}
	if (w->nr_stacks >= PF_STACKS_MAX ||
	    w->nr_st_ips + n > PF_STACK_IPS_MAX) {
		pfw_stacks_reset(w);
		key = pf_stack_hash(s, n);
	}
	return pfw_stack_add(w, s, n, key, id);
}

int uwprof_pfw_sample(struct uwprof_pfw *w, const struct uwprof_rec_sample *s)
{
	uint64_t dt = s->time_ns - w->sb_time;
	uint32_t id = 0;
	size_t n = 1;
	uint8_t *e;

	if (w->error || pfw_stack_id(w, s, &id))
		return w->error;
	/* The entry is written in place: a flag byte and at most 6 ulebs. */
	if (VEC_RESERVE(w->sb, w->sb_cap, w->sb_len + 1 + 6 * 10, 4096))
		return pfw_fail(w, -ENOMEM, "%s: out of memory", w->out.path);
	e = w->sb + w->sb_len;
	e[0] = UWPROF_PF_SMP_ENTRY;
	n += pf_uleb(e + n, id);
	n += pf_uleb(e + n, pf_zigzag(dt));
	if (s->tid != w->sb_tid) {
		e[0] |= UWPROF_PF_SMP_TID;
		n += pf_uleb(e + n, s->tid);
	}
	if (s->pid != w->sb_pid) {
		e[0] |= UWPROF_PF_SMP_PID;
		n += pf_uleb(e + n, s->pid);
	}
	if (s->cpu != w->sb_cpu) {
		e[0] |= UWPROF_PF_SMP_CPU;
		n += pf_uleb(e + n, s->cpu);
	}
	if (s->period != w->sb_period) {
		e[0] |= UWPROF_PF_SMP_PERIOD;
		n += pf_uleb(e + n, s->period);
	}
	w->sb_len += n;
	w->sb_count++;
	w->sb_time = s->time_ns;
	w->sb_tid = s->tid;
	w->sb_pid = s->pid;
	w->sb_cpu = s->cpu;
	w->sb_period = s->period;
	if (w->sb_count >= PF_BATCH_MAX || w->sb_len >= PF_BATCH_BYTES)
		return pfw_batch_out(w);
	return 0;
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

int uwprof_pfw_cgroup(struct uwprof_pfw *w, uint64_t time_ns, uint32_t pid,
		      const char *path)
{
	struct uwprof_pf_cgroup_fixed f = { .time_ns = time_ns, .pid = pid };
	long start = pfw_begin(w, UWPROF_PF_CGROUP, sizeof(f) + pf_str_size(path));

	if (start < 0)
		return w->error;
	pfw_put(w, &f, sizeof(f));
	pfw_put_str(w, path);
	return pfw_end(w, start);
}

int uwprof_pfw_pyinterp(struct uwprof_pfw *w,
			const struct uwprof_pf_pyinterp *p)
{
	struct uwprof_pf_pyinterp_fixed f = {
		.time_ns = p->time_ns, .pid = p->pid,
		.hexversion = p->hexversion, .kind = p->kind,
		.flags = p->flags,
	};
	const char *reason = p->reason ? p->reason : "";
	long start;

	if (p->kind != UWPROF_PF_INTERP_CPYTHON ||
	    (p->flags & ~UWPROF_PF_INTERP_WALKED) || !p->path)
		return -EINVAL;
	start = pfw_begin(w, UWPROF_PF_PYINTERP, sizeof(f) +
			  pf_str_size(p->path) + pf_str_size(reason));
	if (start < 0)
		return w->error;
	pfw_put(w, &f, sizeof(f));
	pfw_put_str(w, p->path);
	pfw_put_str(w, reason);
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

int uwprof_pfw_pycode(struct uwprof_pfw *w, const struct uwprof_pf_pycode *c)
{
	struct uwprof_pf_pycode_fixed f = {
		.time_ns = c->time_ns, .addr = c->addr, .pid = c->pid,
		.fingerprint = c->fingerprint, .size = c->size,
		.firstlineno = c->firstlineno,
		.firsttraceable = c->firsttraceable,
	};
	uint64_t n = c->linetable_len;
	long start;

	if (w->error)
		return w->error;
	if (n > UWPROF_PF_PYCODE_TABLE_MAX || c->fingerprint > 0xffffff)
		return -EINVAL;
	start = pfw_begin(w, UWPROF_PF_PYCODE, sizeof(f) +
			  pf_str_size(c->qualname) + pf_str_size(c->filename) +
			  8 + (size_t)n);
	if (start < 0)
		return w->error;
	pfw_put(w, &f, sizeof(f));
	pfw_put_str(w, c->qualname);
	pfw_put_str(w, c->filename);
	pfw_put(w, &n, 8);
	if (n)
		pfw_put(w, c->linetable, (size_t)n);
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
	free(w->sb);
	w->sb = NULL;
	free(w->stacks);
	w->stacks = NULL;
	free(w->st_ips);
	w->st_ips = NULL;
	uwprof_u64map_free(&w->st_map);
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
