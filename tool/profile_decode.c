// SPDX-License-Identifier: GPL-2.0
/*
 * The profile reader's record decoding: one record's payload, already
 * framed by the reader (profile_file.c), turned into the entries of
 * struct uwprof_pf, every field bounds-checked before use.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile_decode.h"
#include "vec.h"

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
	if (VEC_RESERVE(keep->v, keep->cap, keep->n + 1, 64)) {
		c->err = -ENOMEM;
		return NULL;
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

#define PF_ROOM_FOR_ONE(pp, arr, nr, capf) \
	VEC_RESERVE((pp)->pub.arr, (pp)->capf, (pp)->pub.nr + 1, 64)

static const char *const pf_type_name[] = {
	[UWPROF_PF_HEADER] = "header", [UWPROF_PF_OBJECT] = "object",
	[UWPROF_PF_MAPS] = "maps", [UWPROF_PF_SAMPLE] = "sample",
	[UWPROF_PF_LOST] = "lost", [UWPROF_PF_EXIT] = "exit",
	[UWPROF_PF_THREAD] = "thread", [UWPROF_PF_KSYMS] = "ksyms",
	[UWPROF_PF_JITSYMS] = "jitsyms", [UWPROF_PF_CGROUP] = "cgroup",
	[UWPROF_PF_STATS] = "stats", [UWPROF_PF_END] = "end",
	[UWPROF_PF_OFF_CPU] = "off-cpu", [UWPROF_PF_SAMPLES] = "samples",
	[UWPROF_PF_PYCODE] = "pycode", [UWPROF_PF_PYINTERP] = "pyinterp",
};

#define PF_NR_TYPES	(sizeof(pf_type_name) / sizeof(pf_type_name[0]))

const char *pf_decode_type_name(uint32_t type)
{
	return type < PF_NR_TYPES &&
	       pf_type_name[type] ? pf_type_name[type] : "unknown";
}

int pf_decode_header(struct pf_priv *pp, struct pf_cur *c)
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

	if (PF_ROOM_FOR_ONE(pp, objects, nr_objects, cap_objects))
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

	if (PF_ROOM_FOR_ONE(pp, maps, nr_maps, cap_maps))
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

/* A SAMPLE or OFF_CPU record: 'off' says which, and the flag must agree. */
static int pf_sample(struct pf_priv *pp, struct pf_cur *c, int off)
{
	struct uwprof_pf_sample_fixed f;
	struct uwprof_pf_sample *s;
	size_t n;

	if (PF_ROOM_FOR_ONE(pp, samples, nr_samples, cap_samples))
		return -ENOMEM;
	s = &pp->pub.samples[pp->pub.nr_samples];
	cur_get(c, &f, sizeof(f));
	if (c->err)
		return c->err;
	n = (size_t)f.nr_kernel + f.nr_user;
	if (n > c->left / 8 || !(f.flags & UWPROF_SAMPLE_OFF_CPU) != !off)
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

/* An unsigned LEB128 number of at most 'bits' bits. */
static uint64_t cur_uleb(struct pf_cur *c, unsigned int bits)
{
	unsigned int shift = 0;
	uint64_t v = 0;
	uint8_t b;

	do {
		if (c->err)
			return 0;
		if (!c->left) {
			c->err = -EINVAL;
			c->why = "a number runs past the record";
			return 0;
		}
		b = *c->p++;
		c->left--;
		/* The tenth byte holds bit 63 only, and ends the number. */
		if (shift == 63 && (b & 0xfe)) {
			c->err = -EINVAL;
			c->why = "a number overflows 64 bits";
			return 0;
		}
		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (bits < 64 && v >> bits) {
		c->err = -EINVAL;
		c->why = "a number overflows its field";
		return 0;
	}
	return v;
}

static uint64_t pf_unzigzag(uint64_t z)
{
	return (z >> 1) ^ (uint64_t)-(int64_t)(z & 1);
}

#define PF_IPS_BLOCK	(64U << 10)	/* ips */

/*
 * Room for n ips that stay where they are. The stacks' ips are the one
 * thing a version 2 file expands into (a stack shares its root side with
 * an earlier one): past PF_IPS_MAX_BYTES plus 64 times the file's size
 * the file is refused rather than the memory taken.
 */
#define PF_IPS_MAX_BYTES	(1ULL << 30)

static uint64_t *pf_ips_alloc(struct pf_priv *pp, size_t n, struct pf_cur *c)
{
	size_t size = n > PF_IPS_BLOCK ? n : PF_IPS_BLOCK;
	uint64_t *b;

	if ((pp->ips_total + n) * 8 > PF_IPS_MAX_BYTES + 64 * (uint64_t)pp->pub.size) {
		c->why = "its stacks expand past the reader's memory limit";
		return NULL;
	}
	pp->ips_total += n;
	if (n <= pp->ips_free) {
		b = pp->ips_blocks[pp->nr_ips_blocks - 1] + PF_IPS_BLOCK - pp->ips_free;
		pp->ips_free -= n;
		return b;
	}
	if (VEC_RESERVE(pp->ips_blocks, pp->cap_ips_blocks, pp->nr_ips_blocks + 1,
			16))
		return NULL;
	b = malloc(size * 8);
	if (!b)
		return NULL;
	/* A block of its own for a long stack keeps the last one's room. */
	if (size > PF_IPS_BLOCK && pp->nr_ips_blocks) {
		pp->ips_blocks[pp->nr_ips_blocks] = pp->ips_blocks[pp->nr_ips_blocks - 1];
		pp->ips_blocks[pp->nr_ips_blocks - 1] = b;
	} else {
		pp->ips_blocks[pp->nr_ips_blocks] = b;
		pp->ips_free = size - n;
	}
	pp->nr_ips_blocks++;
	return b;
}

/* The stack with this id, or NULL with the reason in pp->why. */
static const struct pf_stack *pf_stack_find(struct pf_priv *pp, uint64_t id,
					    const char *what)
{
	uint32_t idx;

	if (uwprof_u64map_get(&pp->stack_ids, id, &idx))
		return &pp->stacks[idx];
	snprintf(pp->why, sizeof(pp->why),
		 "%s stack id %llu not defined before its use", what,
		 (unsigned long long)id);
	return NULL;
}

/* Fields of a stack entry after its first byte. */
struct pf_stack_head {
	uint64_t	id, flags, nr_kernel, nr_user, parent, shared;
};

/* A stack entry: its ips made whole from its own and its parent's. */
static int pf_stack_entry(struct pf_priv *pp, struct pf_cur *c)
{
	const struct pf_stack *par = NULL;
	struct pf_stack_head h;
	struct pf_stack *st;
	uint64_t *ips, prev;
	size_t n, i;
	int ret;

	h.id = cur_uleb(c, 32);
	h.flags = cur_uleb(c, 32);
	h.nr_kernel = cur_uleb(c, 16);
	h.nr_user = cur_uleb(c, 16);
	h.parent = cur_uleb(c, 33);
	h.shared = cur_uleb(c, 32);
	if (c->err)
		return c->err;
	n = (size_t)(h.nr_kernel + h.nr_user);
	/* Before 'par' points into the array. */
	if (VEC_RESERVE(pp->stacks, pp->cap_stacks, pp->nr_stacks + 1, 256))
		return -ENOMEM;
	if (h.parent && !(par = pf_stack_find(pp, h.parent - 1, "parent")))
		return -EINVAL;
	if (h.shared > n || (h.shared &&
	    (!par || h.shared > (size_t)par->nr_kernel + par->nr_user))) {
		c->why = "a stack shares more frames than it or its parent has";
		return -EINVAL;
	}
	/* Each own ip takes at least a byte. */
	if (n - h.shared > c->left) {
		c->why = "a stack's ips run past the record";
		return -EINVAL;
	}
	ips = pf_ips_alloc(pp, n ? n : 1, c);
	if (!ips)
		return c->why ? -EINVAL : -ENOMEM;
	prev = h.shared ? par->ips[par->nr_kernel + par->nr_user - h.shared] : 0;
	for (i = n - h.shared; i-- > 0;) {
		ips[i] = prev + pf_unzigzag(cur_uleb(c, 64));
		prev = ips[i];
	}
	if (c->err)
		return c->err;
	if (h.shared)
		memcpy(ips + n - h.shared, par->ips + par->nr_kernel +
		       par->nr_user - h.shared, 8 * h.shared);
	ret = uwprof_u64map_put(&pp->stack_ids, h.id, (uint32_t)pp->nr_stacks);
	if (ret < 0)
		return ret;
	if (!ret) {
		snprintf(pp->why, sizeof(pp->why), "stack id %llu defined twice",
			 (unsigned long long)h.id);
		return -EINVAL;
	}
	st = &pp->stacks[pp->nr_stacks++];
	st->ips = ips;
	st->flags = (uint32_t)h.flags;
	st->nr_kernel = (uint16_t)h.nr_kernel;
	st->nr_user = (uint16_t)h.nr_user;
	return 0;
}

/* The values a SAMPLES entry leaves out: the previous entry's. */
struct pf_smp_prev {
	uint64_t	time_ns, period;
	uint32_t	tid, pid, cpu;
};

/* A sample entry after its first byte 'h'. */
static int pf_sample_entry(struct pf_priv *pp, struct pf_cur *c, uint8_t h,
			   struct pf_smp_prev *prev)
{
	struct uwprof_pf_sample *s = &pp->pub.samples[pp->pub.nr_samples];
	const struct pf_stack *st;
	uint64_t id, z;

	id = cur_uleb(c, 32);
	z = cur_uleb(c, 64);
	if (c->err)
		return c->err;
	st = pf_stack_find(pp, id, "sample's");
	if (!st)
		return -EINVAL;
	prev->time_ns += pf_unzigzag(z);
	if (h & UWPROF_PF_SMP_TID)
		prev->tid = (uint32_t)cur_uleb(c, 32);
	if (h & UWPROF_PF_SMP_PID)
		prev->pid = (uint32_t)cur_uleb(c, 32);
	if (h & UWPROF_PF_SMP_CPU)
		prev->cpu = (uint32_t)cur_uleb(c, 32);
	if (h & UWPROF_PF_SMP_PERIOD)
		prev->period = cur_uleb(c, 64);
	if (c->err)
		return c->err;
	s->time_ns = prev->time_ns;
	s->pid = prev->pid;
	s->tid = prev->tid;
	s->cpu = prev->cpu;
	s->flags = st->flags;
	s->period = prev->period;
	s->nr_kernel = st->nr_kernel;
	s->nr_user = st->nr_user;
	s->ips = st->ips;
	pp->pub.nr_samples++;
	return 0;
}

/* What is wrong with an entry's first byte, or NULL. */
static const char *pf_entry_bad(uint8_t h, int samples_done, int stacks_done)
{
	const uint8_t stack = UWPROF_PF_SMP_ENTRY | UWPROF_PF_SMP_STACK;

	if (!(h & UWPROF_PF_SMP_ENTRY))
		return "an entry without its marker bit";
	if ((h & UWPROF_PF_SMP_STACK) && h != stack)
		return "a stack entry with sample field bits";
	if (h & 0x30)
		return "an entry with unknown bits";
	if (h == stack && stacks_done)
		return "more stack entries than the record says";
	if (h != stack && samples_done)
		return "more sample entries than the record says";
	return NULL;
}

/* The SAMPLES entries: exactly the counts the record gives of each kind. */
static int pf_samples_entries(struct pf_priv *pp, struct pf_cur *c,
			      const struct uwprof_pf_samples_fixed *f)
{
	struct pf_smp_prev prev = { 0 };
	uint32_t samples = 0, stacks = 0;
	int ret;
	uint8_t h;

	while (samples < f->nr_samples || stacks < f->nr_stacks) {
		if (cur_get(c, &h, 1))
			return c->err;
		c->why = pf_entry_bad(h, samples == f->nr_samples,
				      stacks == f->nr_stacks);
		if (c->why)
			return -EINVAL;
		if (h & UWPROF_PF_SMP_STACK) {
			ret = pf_stack_entry(pp, c);
			stacks++;
		} else {
			ret = pf_sample_entry(pp, c, h, &prev);
			samples++;
		}
		if (ret)
			return ret;
	}
	return 0;
}

static int pf_samples(struct pf_priv *pp, struct pf_cur *c)
{
	struct uwprof_pf *pf = &pp->pub;
	struct uwprof_pf_samples_fixed f;
	int ret;

	if (cur_get(c, &f, sizeof(f)))
		return c->err;
	/* A sample entry takes at least three bytes, a stack entry seven. */
	if (f.nr_samples > c->left / 3 || f.nr_stacks > c->left / 7)
		return -EINVAL;
	if (VEC_RESERVE(pf->samples, pp->cap_samples,
			pf->nr_samples + f.nr_samples, 64))
		return -ENOMEM;
	ret = pf_samples_entries(pp, c, &f);
	if (ret)
		return ret;
	if (c->left >= 8) {
		c->why = "bytes after the last entry";
		return -EINVAL;
	}
	for (; c->left; c->left--)
		if (*c->p++) {
			c->why = "padding is not zero";
			return -EINVAL;
		}
	return 0;
}

static int pf_thread(struct pf_priv *pp, struct pf_cur *c)
{
	struct uwprof_pf_thread_fixed f;
	struct uwprof_pf_thread *t;

	if (PF_ROOM_FOR_ONE(pp, threads, nr_threads, cap_threads))
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

static int pf_cgroup(struct pf_priv *pp, struct pf_cur *c)
{
	struct uwprof_pf_cgroup_fixed f;
	struct uwprof_pf_cgroup *g;

	if (PF_ROOM_FOR_ONE(pp, cgroups, nr_cgroups, cap_cgroups))
		return -ENOMEM;
	g = &pp->pub.cgroups[pp->pub.nr_cgroups];
	if (cur_get(c, &f, sizeof(f)))
		return c->err;
	if (f.reserved) {
		c->why = "reserved field is not zero";
		return -EINVAL;
	}
	g->time_ns = f.time_ns;
	g->pid = f.pid;
	g->path = cur_str(c, &pp->strs);
	if (c->err)
		return c->err;
	pp->pub.nr_cgroups++;
	return 0;
}

/*
 * Kinds and flags this reader does not know are kept as they are: a
 * newer writer's interpreter is still listed, by its number.
 */
static int pf_pyinterp(struct pf_priv *pp, struct pf_cur *c)
{
	struct uwprof_pf_pyinterp_fixed f;
	struct uwprof_pf_pyinterp *p;

	if (PF_ROOM_FOR_ONE(pp, pyinterps, nr_pyinterps, cap_pyinterps))
		return -ENOMEM;
	p = &pp->pub.pyinterps[pp->pub.nr_pyinterps];
	if (cur_get(c, &f, sizeof(f)))
		return c->err;
	if (f.reserved) {
		c->why = "reserved field is not zero";
		return -EINVAL;
	}
	p->time_ns = f.time_ns;
	p->pid = f.pid;
	p->hexversion = f.hexversion;
	p->kind = f.kind;
	p->flags = f.flags;
	p->path = cur_str(c, &pp->strs);
	p->reason = cur_str(c, &pp->strs);
	if (c->err)
		return c->err;
	pp->pub.nr_pyinterps++;
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

/* Names stay in the mapping: there may be millions of them. */
static int pf_jitsyms(struct pf_priv *pp, struct pf_cur *c)
{
	struct uwprof_pf *pf = &pp->pub;
	struct uwprof_pf_jit_fixed f;
	struct uwprof_pf_jitsym *v;
	size_t old = pf->nr_jitsyms;
	uint64_t i;

	if (cur_get(c, &f, sizeof(f)))
		return c->err;
	/* Each entry takes at least 24 bytes. */
	if (f.count > c->left / 24)
		return -EINVAL;
	v = realloc(pf->jitsyms, (old + f.count + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	pf->jitsyms = v;
	for (i = 0; i < f.count; i++) {
		const uint8_t *at = c->p;
		struct uwprof_pf_jitsym *e = &v[old + i];
		size_t used;

		cur_get(c, &e->start, 8);
		cur_get(c, &e->size, 8);
		cur_get(c, &e->len, 4);
		e->name = (const char *)cur_take(c, e->len);
		e->pid = f.pid;
		used = (size_t)(c->p - at);
		if (!c->err && (used & 7))
			cur_take(c, 8 - (used & 7));
		if (c->err)
			return c->err;
	}
	pf->nr_jitsyms = old + f.count;
	return 0;
}

/* The location table stays in the mapping; the names are copies. */
static int pf_pycode(struct pf_priv *pp, struct pf_cur *c)
{
	struct uwprof_pf_pycode_fixed f;
	struct uwprof_pf_pycode *e;
	uint64_t n;

	if (PF_ROOM_FOR_ONE(pp, pycodes, nr_pycodes, cap_pycodes))
		return -ENOMEM;
	e = &pp->pub.pycodes[pp->pub.nr_pycodes];
	if (cur_get(c, &f, sizeof(f)))
		return c->err;
	if (f.reserved) {
		c->why = "reserved field is not zero";
		return -EINVAL;
	}
	e->qualname = cur_str(c, &pp->strs);
	e->filename = cur_str(c, &pp->strs);
	cur_get(c, &n, 8);
	if (c->err)
		return c->err;
	if (n > UWPROF_PF_PYCODE_TABLE_MAX || n > c->left ||
	    f.fingerprint > 0xffffff) {
		c->why = "location table or fingerprint out of range";
		return -EINVAL;
	}
	e->linetable = cur_take(c, (size_t)n);
	if (c->err)
		return c->err;
	e->linetable_len = (uint32_t)n;
	e->time_ns = f.time_ns;
	e->addr = f.addr;
	e->pid = f.pid;
	e->fingerprint = f.fingerprint;
	e->size = f.size;
	e->firstlineno = f.firstlineno;
	e->firsttraceable = f.firsttraceable;
	pp->pub.nr_pycodes++;
	return 0;
}

int pf_decode_one(struct pf_priv *pp, uint32_t type, struct pf_cur *c)
{
	struct uwprof_pf *pf = &pp->pub;

	switch (type) {
	case UWPROF_PF_OBJECT:
		return pf_object(pp, c);
	case UWPROF_PF_MAPS:
		return pf_maps(pp, c);
	case UWPROF_PF_SAMPLE:
		return pf_sample(pp, c, 0);
	case UWPROF_PF_OFF_CPU:
		return pf_sample(pp, c, 1);
	case UWPROF_PF_SAMPLES:
		if (pf->hdr.version < 2)
			break;
		return pf_samples(pp, c);
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
		if (PF_ROOM_FOR_ONE(pp, exits, nr_exits, cap_exits))
			return -ENOMEM;
		pf->exits[pf->nr_exits++] = r;
		return 0;
	}
	case UWPROF_PF_THREAD:
		return pf_thread(pp, c);
	case UWPROF_PF_KSYMS:
		return pf_ksyms(pp, c);
	case UWPROF_PF_JITSYMS:
		return pf_jitsyms(pp, c);
	case UWPROF_PF_CGROUP:
		return pf_cgroup(pp, c);
	case UWPROF_PF_PYCODE:
		return pf_pycode(pp, c);
	case UWPROF_PF_PYINTERP:
		return pf_pyinterp(pp, c);
	case UWPROF_PF_STATS:
		if (cur_get(c, &pf->stats, sizeof(pf->stats)))
			return c->err;
		pf->has_stats = 1;
		return 0;
	case UWPROF_PF_HEADER:
		return -EINVAL;	/* only one, and first */
	default:
		break;
	}
	/* A type this version of the format does not have: skipped. */
	pf->skipped_recs++;
	return 0;
}
