// SPDX-License-Identifier: GPL-2.0
/*
 * The symbolized sample model (see report_model.h): reads a profile file,
 * resolves each distinct (mapping snapshot, address) once through the
 * symbolizer, and keeps every sample as frame indexes, Python frames
 * (report_python.c) among them. Called from the report and script
 * commands and the agent.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "jitmap.h"
#include "kallsyms.h"
#include "profile_file.h"
#include "report_model.h"
#include "symbols.h"
#include "vec.h"

/* Open addressing over three 64-bit words; values are indexes. */
struct rep_slot {
	uint64_t	k[3];
	uint32_t	val;
	uint32_t	used;
};

struct uwprof_rep_hash {
	struct rep_slot	*slots;
	size_t		cap;		/* power of two */
	size_t		nr;
};

static uint64_t hash_mix(const uint64_t k[3])
{
	uint64_t h = 0x9e3779b97f4a7c15ULL;
	int i;

	for (i = 0; i < 3; i++) {
		h ^= k[i] + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
		h *= 0xff51afd7ed558ccdULL;
		h ^= h >> 33;
	}
	return h;
}

static struct rep_slot *hash_slot(struct uwprof_rep_hash *h,
				  const uint64_t k[3])
{
	size_t i = hash_mix(k) & (h->cap - 1);

	while (h->slots[i].used && memcmp(h->slots[i].k, k, sizeof(h->slots[i].k)))
		i = (i + 1) & (h->cap - 1);
	return &h->slots[i];
}

static int hash_grow(struct uwprof_rep_hash *h)
{
	struct uwprof_rep_hash n = { .cap = h->cap ? h->cap * 2 : 1024 };
	size_t i;

	n.slots = calloc(n.cap, sizeof(*n.slots));
	if (!n.slots)
		return -ENOMEM;
	for (i = 0; i < h->cap; i++)
		if (h->slots[i].used)
			*hash_slot(&n, h->slots[i].k) = h->slots[i];
	n.nr = h->nr;
	free(h->slots);
	*h = n;
	return 0;
}

/* The value for k, or -1 after reserving its slot for hash_set(). */
static long hash_get(struct uwprof_rep_hash *h, const uint64_t k[3],
		     struct rep_slot **slot)
{
	struct rep_slot *s;

	if ((h->nr + 1) * 2 > h->cap && hash_grow(h))
		return -2;
	s = hash_slot(h, k);
	*slot = s;
	return s->used ? (long)s->val : -1;
}

static void hash_set(struct uwprof_rep_hash *h, struct rep_slot *s,
		     const uint64_t k[3], uint32_t val)
{
	memcpy(s->k, k, sizeof(s->k));
	s->val = val;
	s->used = 1;
	h->nr++;
}

static void hash_free(struct uwprof_rep_hash *h)
{
	if (h) {
		free(h->slots);
		free(h);
	}
}

const char *uwprof_rep_basename(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path;
}

/* Take ownership of a malloc'd string (NULL stays NULL: out of memory). */
static char *pool_take(struct uwprof_rep *r, char *s)
{
	if (!s)
		return NULL;
	if (VEC_RESERVE(r->pool, r->cap_pool, r->nr_pool + 1, 64)) {
		free(s);
		return NULL;
	}
	r->pool[r->nr_pool++] = s;
	return s;
}

static char *pool_printf(struct uwprof_rep *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static char *pool_printf(struct uwprof_rep *r, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	return n < 0 ? NULL : pool_take(r, s);
}

/* A name safe for folded stacks: ';' and line breaks removed. */
static char *folded_name(const char *name, int kernel)
{
	size_t n = strlen(name), i, j;
	char *s = malloc(n + 5);

	if (!s)
		return NULL;
	for (i = 0, j = 0; i < n; i++)
		if (name[i] != ';' && name[i] != '\n' && name[i] != '\r')
			s[j++] = name[i];
	if (!j)
		s[j++] = '?';
	if (kernel) {
		memcpy(s + j, "_[k]", 4);
		j += 4;
	}
	s[j] = 0;
	return s;
}

static int map_get(struct uwprof_rep *r, const struct uwprof_pf_map *m,
		   const struct uwprof_pf_object *obj)
{
	uint64_t k[3] = { m->start, m->end, m->object_id };
	struct uwprof_rep_map *e;
	struct rep_slot *slot;
	long idx;

	idx = hash_get(r->map_hash, k, &slot);
	if (idx >= 0)
		return (int)idx;
	if (idx == -2)
		return -ENOMEM;
	if (VEC_RESERVE(r->maps, r->cap_maps, r->nr_maps + 1, 64))
		return -ENOMEM;
	e = &r->maps[r->nr_maps];
	memset(e, 0, sizeof(*e));
	e->start = m->start;
	e->end = m->end;
	e->offset = m->offset;
	if (obj) {
		e->path = obj->path;
		if (!(obj->flags & UWPROF_PF_OBJ_HASH_KEY) &&
		    obj->build_id_size <= sizeof(e->build_id)) {
			memcpy(e->build_id, obj->build_id, obj->build_id_size);
			e->build_id_size = obj->build_id_size;
		}
	}
	hash_set(r->map_hash, slot, k, (uint32_t)r->nr_maps);
	return (int)r->nr_maps++;
}

static void frame_kernel(struct uwprof_rep *r, struct uwprof_rep_frame *f,
			 uint64_t addr)
{
	const struct uwprof_pf_ksym *ks;
	struct uwprof_sym_res res;
	const char *dso = "[kernel.kallsyms]", *sp, *br;

	f->dso = dso;
	if (r->have_ksyms == 1) {
		ks = uwprof_pf_ksym_find(r->pf, addr);
		if (!ks)
			return;
		/* "name" or "name [module]" */
		sp = strchr(ks->name, ' ');
		br = sp ? strchr(sp, '[') : NULL;
		if (sp && br) {
			f->sym = pool_take(r, strndup(ks->name,
						      (size_t)(sp - ks->name)));
			f->dso = pool_take(r, strdup(br));
			if (!f->dso)
				f->dso = dso;
		} else {
			f->sym = ks->name;
		}
		f->sym_start = ks->addr;
	} else if (r->have_ksyms == 2 &&
		   !uwprof_syms_kernel_lookup(r->syms, addr, &res, &dso)) {
		f->sym = res.name;
		f->sym_start = res.start;
		f->dso = dso;
	}
}

/*
 * Keeps one line for the command to show: a warning (with 'suffix') or a
 * note. Returns 0 or -ENOMEM.
 */
static int line_add(char ***v, size_t *nr, size_t *cap, const char *what,
		    const char *suffix)
{
	if (VEC_RESERVE(*v, *cap, *nr + 1, 8))
		return -ENOMEM;
	if (asprintf(&(*v)[*nr], "%s%s", what, suffix) < 0)
		return -ENOMEM;
	(*nr)++;
	return 0;
}

static int warn_add(struct uwprof_rep *r, const char *what)
{
	return line_add(&r->warnings, &r->nr_warnings, &r->cap_warnings, what,
			": its frames stay unresolved");
}

static int note_add(struct uwprof_rep *r, const char *what)
{
	return line_add(&r->notes, &r->nr_notes, &r->cap_notes, what, "");
}

/* A process's JIT symbols, or NULL when the profile has none for it. */
struct rep_jit {
	uint32_t		pid;
	struct uwprof_jitsyms	t;
};

static int rep_jit_cmp(const void *a, const void *b)
{
	const struct rep_jit *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static struct rep_jit *rep_jit_find(struct uwprof_rep *r, uint32_t pid)
{
	struct rep_jit key = { .pid = pid };

	if (!r->nr_jits)
		return NULL;
	return bsearch(&key, r->jits, r->nr_jits, sizeof(*r->jits),
		       rep_jit_cmp);
}

/*
 * One table per process from the profile's JITSYMS records, in file order:
 * the order the process published them, so a later symbol over reused
 * code wins. Returns 0 or -ENOMEM.
 */
static int rep_jit_load(struct uwprof_rep *r)
{
	const struct uwprof_pf_jitsym *e;
	struct rep_jit *t = NULL, *v;
	size_t i, k;

	for (i = 0; i < r->pf->nr_jitsyms; i++) {
		e = &r->pf->jitsyms[i];
		if (t && t->pid != e->pid)
			t = NULL;
		for (k = 0; !t && k < r->nr_jits; k++)
			if (r->jits[k].pid == e->pid)
				t = &r->jits[k];
		if (!t) {
			v = realloc(r->jits, (r->nr_jits + 1) * sizeof(*v));
			if (!v)
				return -ENOMEM;
			r->jits = v;
			t = &v[r->nr_jits++];
			memset(t, 0, sizeof(*t));
			t->pid = e->pid;
		}
		if (uwprof_jitsyms_add(&t->t, e->start, e->size, e->name,
				       e->len))
			return -ENOMEM;
	}
	qsort(r->jits, r->nr_jits, sizeof(*r->jits), rep_jit_cmp);
	return 0;
}

/*
 * Code in no ELF object (an anonymous mapping, or one mapped after the
 * last snapshot): the process's JIT symbols name it. Returns 0 or -ENOMEM.
 */
static int frame_jit(struct uwprof_rep *r, struct uwprof_rep_frame *f,
		     uint32_t pid, uint64_t addr_adj)
{
	struct rep_jit *t = rep_jit_find(r, pid);
	const struct uwprof_jit_sym *e;

	if (!t)
		return 0;
	e = uwprof_jitsyms_find(&t->t, addr_adj);
	if (!e)
		return 0;
	f->sym = pool_take(r, strndup(e->name, e->len));
	if (!f->sym)
		return -ENOMEM;
	f->sym_start = e->start;
	f->vaddr = f->ip;
	if (!f->dso)
		f->dso = "[jit]";
	return 0;
}

/* Returns 0 or -ENOMEM; an object that cannot be read leaves a warning. */
static int frame_user(struct uwprof_rep *r, struct uwprof_rep_frame *f,
		      const struct uwprof_pf_maps *maps, uint32_t pid,
		      uint64_t addr_adj)
{
	const struct uwprof_pf_object *obj = NULL;
	const struct uwprof_pf_map *m;
	const uint8_t *bid = NULL;
	struct uwprof_sym_res res;
	size_t bid_size = 0;
	char err[600];
	int h;

	m = maps ? uwprof_pf_map_find(maps, f->ip) : NULL;
	if (!m)
		return frame_jit(r, f, pid, addr_adj);
	f->vaddr = f->ip - m->bias;
	if (m->object_id)
		obj = uwprof_pf_object_find(r->pf, m->object_id);
	f->map = map_get(r, m, obj);
	if (!obj)
		return frame_jit(r, f, pid, addr_adj);
	f->dso = obj->path;
	if (!(obj->flags & UWPROF_PF_OBJ_HASH_KEY)) {
		bid = obj->build_id;
		bid_size = obj->build_id_size;
	}
	err[0] = 0;
	if (obj->flags & UWPROF_PF_OBJ_VDSO)
		h = uwprof_syms_object(r->syms, obj->path, obj->image,
				       obj->image_size, bid, bid_size, err,
				       sizeof(err));
	else
		h = uwprof_syms_object(r->syms, obj->path, NULL, 0, bid,
				       bid_size, err, sizeof(err));
	if (h < 0)
		return err[0] ? warn_add(r, err) : 0;
	if (err[0] && note_add(r, err))
		return -ENOMEM;
	if (uwprof_syms_lookup(r->syms, h, addr_adj - m->bias, &res))
		return 0;
	if (res.name) {
		f->sym = res.name;
		f->sym_start = res.start + m->bias;
	}
	f->file = res.file;
	f->line = res.line;
	return 0;
}

/*
 * The frame of 'ip' in the mapping snapshot 'maps' (user) or the kernel.
 * Callers' addresses are return addresses: the call is the byte before,
 * which matters when a call to a noreturn function ends a function.
 */
/*
 * The frame keyed 'k' if there is one: its index, or -ENOMEM, with *fresh
 * NULL. Else *fresh is a new zeroed frame (no mapping) at the end of
 * r->frames for the caller to fill and then to hash under 'k' at *slot.
 */
static long frame_find(struct uwprof_rep *r, const uint64_t *k,
		       struct rep_slot **slot, struct uwprof_rep_frame **fresh)
{
	long idx = hash_get(r->frame_hash, k, slot);

	*fresh = NULL;
	if (idx >= 0)
		return idx;
	if (idx == -2 ||
	    VEC_RESERVE(r->frames, r->cap_frames, r->nr_frames + 1, 1024))
		return -ENOMEM;
	*fresh = &r->frames[r->nr_frames];
	memset(*fresh, 0, sizeof(**fresh));
	(*fresh)->map = -1;
	return 0;
}

static long frame_get(struct uwprof_rep *r, const struct uwprof_pf_maps *maps,
		      uint32_t pid, uint64_t ip, int kernel, int caller)
{
	/*
	 * A user address without a mapping snapshot may still have a JIT
	 * symbol of its own process: keyed by pid then (odd, so never a
	 * snapshot's address).
	 */
	uint64_t k[3] = { kernel ? 0 : maps ? (uint64_t)(uintptr_t)maps :
			  (uint64_t)pid << 1 | 1, ip,
			  (uint64_t)(caller | kernel << 1) };
	uint64_t adj = caller && ip ? ip - 1 : ip;
	struct uwprof_rep_frame *f;
	struct rep_slot *slot;
	const char *base;
	long idx;

	idx = frame_find(r, k, &slot, &f);
	if (!f)
		return idx;
	f->ip = ip;
	f->vaddr = ip;
	f->kernel = kernel;
	if (kernel)
		frame_kernel(r, f, adj);
	else if (frame_user(r, f, maps, pid, adj))
		return -ENOMEM;
	base = uwprof_rep_basename(f->dso);
	if (f->sym) {
		f->label = strdup(f->sym);
		f->folded = folded_name(f->sym, kernel);
	} else if (f->dso) {
		if (asprintf(&f->label, "%s+0x%llx", base,
			     (unsigned long long)f->vaddr) < 0)
			f->label = NULL;
		/* "[vdso]" and "[kernel.kallsyms]" keep their brackets. */
		if (asprintf(&f->folded, base[0] == '[' ? "%s%s" : "[%s]%s",
			     base, kernel ? "_[k]" : "") < 0)
			f->folded = NULL;
	} else {
		f->label = strdup("[unknown]");
		f->folded = strdup(kernel ? "[unknown]_[k]" : "[unknown]");
	}
	if (!f->label || !f->folded) {
		free(f->label);
		free(f->folded);
		return -ENOMEM;
	}
	hash_set(r->frame_hash, slot, k, (uint32_t)r->nr_frames);
	return (long)r->nr_frames++;
}

/*
 * The frame of a Python pair ('tag', then the code object's address):
 * keyed by its PYCODE record and tag (the instruction), or when there is
 * none by its process and address. *hidden: a frame CPython itself hides
 * (not started yet: before its first traceable instruction), which gets
 * no frame.
 */
static long frame_py(struct uwprof_rep *r, const struct uwprof_pf_sample *ps,
		     uint64_t tag, uint64_t addr, int *hidden)
{
	const struct uwprof_pf_pycode *c;
	struct uwprof_rep_frame *f;
	struct rep_slot *slot;
	int32_t lasti = UWPROF_IP_PY_LASTI(tag);
	uint64_t k[3];
	long idx;

	c = uwprof_rep_py_find(r, ps->pid, addr, UWPROF_IP_PY_FP(tag),
			       ps->time_ns);
	*hidden = c && lasti < c->firsttraceable;
	if (*hidden)
		return 0;
	/* Tags have a top byte no native key's third word has. */
	k[0] = c ? (uint64_t)(uintptr_t)c : (uint64_t)ps->pid << 1 | 1;
	k[1] = addr;
	k[2] = c ? tag : UWPROF_IP_PYTHON;
	idx = frame_find(r, k, &slot, &f);
	if (!f)
		return idx;
	if (uwprof_rep_py_frame(f, c, addr, lasti)) {
		free(f->label);
		free(f->folded);
		return -ENOMEM;
	}
	hash_set(r->frame_hash, slot, k, (uint32_t)r->nr_frames);
	return (long)r->nr_frames++;
}

static int ip_python(const struct uwprof_pf_sample *ps, uint64_t ip)
{
	return (ps->flags & UWPROF_SAMPLE_PYTHON) &&
	       (ip & UWPROF_IP_TAG_MASK) == UWPROF_IP_PYTHON;
}

/*
 * A sample's frames into 'out', leaf first: its kernel ones, then its user
 * ones, where each Python pair is one frame (none when CPython hides it)
 * and, unless python_native, the native frame a run of Python pairs
 * follows (the eval function's, which ran them) is dropped. A tag without
 * its address (a stack cut between them) ends the stack. Returns the
 * number of user frames, or -ENOMEM.
 */
static long sample_frames(struct uwprof_rep *r,
			  const struct uwprof_pf_sample *ps,
			  const struct uwprof_pf_maps *maps, uint32_t *out)
{
	uint32_t j, k = 0, n = (uint32_t)ps->nr_kernel + ps->nr_user;
	int in_py = 0, hidden;
	long fi;

	for (j = 0; j < n; j++) {
		if (j >= ps->nr_kernel && ip_python(ps, ps->ips[j])) {
			if (j + 1 == n)
				break;
			if (!in_py && !r->python_native && k > ps->nr_kernel)
				k--;
			in_py = 1;
			fi = frame_py(r, ps, ps->ips[j], ps->ips[j + 1], &hidden);
			j++;
			if (fi < 0)
				return fi;
			if (!hidden)
				out[k++] = (uint32_t)fi;
			continue;
		}
		in_py = 0;
		if (j < ps->nr_kernel)
			fi = frame_get(r, NULL, 0, ps->ips[j], 1, j > 0);
		else
			fi = frame_get(r, maps, ps->pid, ps->ips[j], 0,
				       j > ps->nr_kernel);
		if (fi < 0)
			return fi;
		out[k++] = (uint32_t)fi;
	}
	return (long)k - ps->nr_kernel;
}

/*
 * The mapping snapshot of a sample's native user ips: Python pairs are
 * no code addresses, so they are left out of the question ('tmp' holds
 * the rest, room for nr_user).
 */
static const struct uwprof_pf_maps *sample_maps(struct uwprof_rep *r,
						const struct uwprof_pf_sample *ps,
						uint64_t *tmp)
{
	const uint64_t *u = ps->ips + ps->nr_kernel;
	uint32_t j, n = 0;

	if (!ps->nr_user)
		return NULL;
	if (!(ps->flags & UWPROF_SAMPLE_PYTHON))
		return uwprof_pf_maps_for_ips(r->pf, ps->pid, ps->time_ns, u,
					      ps->nr_user);
	for (j = 0; j < ps->nr_user; j++) {
		if (ip_python(ps, u[j]))
			j++;
		else
			tmp[n++] = u[j];
	}
	return uwprof_pf_maps_for_ips(r->pf, ps->pid, ps->time_ns, tmp, n);
}

/* /proc/kallsyms, when this host lets us read real addresses. */
static void load_proc_kallsyms(struct uwprof_rep *r)
{
	size_t len;
	char *buf;

	if (uwprof_kallsyms_read(&buf, &len))
		return;
	if (uwprof_syms_kernel_load(r->syms, buf, len) > 0)
		r->have_ksyms = 2;
	free(buf);
}

/*
 * This host's kallsyms can only describe a profile recorded here, under
 * the running kernel (a reboot still moves it with KASLR: not detectable).
 */
static int same_kernel(const struct uwprof_pf *pf)
{
	struct utsname u;

	return !uname(&u) && pf->hdr.release && pf->hdr.hostname &&
	       !strcmp(u.release, pf->hdr.release) &&
	       !strcmp(u.nodename, pf->hdr.hostname);
}


/* By time; samples of the same time keep their file order (chains[] order). */
static int sample_time_cmp(const void *a, const void *b)
{
	const struct uwprof_rep_sample *x = a, *y = b;

	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	return x->frames < y->frames ? -1 : x->frames > y->frames;
}

/*
 * Off-CPU samples weigh the time off CPU the module measured; on-CPU ones
 * their period, which for cycles is a count: one sampling interval then.
 */
static uint64_t sample_weight_ns(const struct uwprof_rep *r,
				 const struct uwprof_pf_sample *ps)
{
	if (ps->flags & UWPROF_SAMPLE_OFF_CPU)
		return ps->period;
	if (r->pf->hdr.event != UWPROF_PF_EV_CYCLES)
		return ps->period;
	return r->pf->hdr.freq_hz ? 1000000000ULL / r->pf->hdr.freq_hz : 0;
}

int uwprof_rep_load(struct uwprof_rep *r, const char *path, int flags,
		    char *err, size_t errlen)
{
	const struct uwprof_pf_sample *ps;
	const struct uwprof_pf_maps *maps;
	struct uwprof_rep_sample *s;
	size_t i, total = 0, used = 0, any_kernel = 0, max_user = 1;
	uint64_t *tmp = NULL;
	long nu;
	int ret;

	memset(r, 0, sizeof(*r));
	r->path = path;
	r->lines = !!(flags & UWPROF_REP_LINES);
	r->python_native = !!(flags & UWPROF_REP_PYTHON_NATIVE);
	ret = uwprof_pf_open(path, &r->pf, err, errlen);
	if (ret)
		return ret;
	r->event = r->pf->hdr.event == UWPROF_PF_EV_CYCLES ? "cycles" :
		   "cpu-clock";
	r->syms = uwprof_syms_new(r->lines);
	r->frame_hash = calloc(1, sizeof(*r->frame_hash));
	r->map_hash = calloc(1, sizeof(*r->map_hash));
	if (!r->syms || !r->frame_hash || !r->map_hash)
		goto nomem;
	for (i = 0; i <= UWPROF_PF_STOP__COUNT; i++) {
		r->marks[i] = pool_printf(r, "[incomplete: %s]",
					  uwprof_pf_stop_name((unsigned int)i));
		if (!r->marks[i])
			goto nomem;
	}
	for (i = 0; i < r->pf->nr_samples; i++) {
		total += r->pf->samples[i].nr_kernel + r->pf->samples[i].nr_user;
		any_kernel |= r->pf->samples[i].nr_kernel;
		if (r->pf->samples[i].nr_user > max_user)
			max_user = r->pf->samples[i].nr_user;
	}
	if (rep_jit_load(r) || uwprof_rep_py_load(r))
		goto nomem;
	if (r->pf->nr_ksyms)
		r->have_ksyms = 1;
	else if (any_kernel && same_kernel(r->pf))
		load_proc_kallsyms(r);
	r->samples = calloc(r->pf->nr_samples ? r->pf->nr_samples : 1,
			    sizeof(*r->samples));
	r->chains = malloc((total ? total : 1) * sizeof(*r->chains));
	tmp = malloc(max_user * sizeof(*tmp));
	if (!r->samples || !r->chains || !tmp)
		goto nomem;
	for (i = 0; i < r->pf->nr_samples; i++) {
		ps = &r->pf->samples[i];
		s = &r->samples[i];
		s->time_ns = ps->time_ns;
		s->period = ps->period;
		s->weight_ns = sample_weight_ns(r, ps);
		if (ps->flags & UWPROF_SAMPLE_OFF_CPU) {
			r->file_off_cpu++;
			r->nr_off_cpu++;
		}
		s->pid = ps->pid;
		s->tid = ps->tid;
		s->cpu = ps->cpu;
		s->flags = ps->flags;
		s->nr_kernel = ps->nr_kernel;
		s->nr_user = ps->nr_user;
		s->comm = uwprof_pf_comm(r->pf, ps->pid, ps->tid, ps->time_ns);
		if (!s->comm) {
			s->comm = pool_printf(r, ":%u", ps->tid);
			if (!s->comm)
				goto nomem;
		}
		s->cgroup = uwprof_pf_cgroup(r->pf, ps->pid, ps->time_ns);
		s->frames = r->chains + used;
		maps = sample_maps(r, ps, tmp);
		nu = sample_frames(r, ps, maps, s->frames);
		if (nu < 0)
			goto nomem;
		s->nr_user = (uint32_t)nu;
		used += s->nr_kernel + s->nr_user;
		r->total_period += s->period;
		r->total_weight_ns += s->weight_ns;
		r->nr_samples++;
	}
	/*
	 * In time order, as perf script prints: the file holds them as the
	 * rings were read, and a walk finished from a snapshot comes later.
	 */
	qsort(r->samples, r->nr_samples, sizeof(*r->samples), sample_time_cmp);
	free(tmp);
	return 0;
nomem:
	free(tmp);
	snprintf(err, errlen, "%s: out of memory", path);
	return -ENOMEM;
}

void uwprof_rep_select(struct uwprof_rep *r, enum uwprof_rep_show show)
{
	size_t i, n = 0;
	int off;

	r->total_period = 0;
	r->total_weight_ns = 0;
	r->nr_off_cpu = 0;
	for (i = 0; i < r->nr_samples; i++) {
		off = uwprof_rep_off_cpu(&r->samples[i]);
		if ((show == UWPROF_REP_ON_CPU && off) ||
		    (show == UWPROF_REP_OFF_CPU && !off))
			continue;
		r->samples[n] = r->samples[i];
		r->total_period += r->samples[n].period;
		r->total_weight_ns += r->samples[n].weight_ns;
		r->nr_off_cpu += off;
		n++;
	}
	r->nr_samples = n;
}

void uwprof_rep_free(struct uwprof_rep *r)
{
	size_t i;

	for (i = 0; i < r->nr_frames; i++) {
		free(r->frames[i].label);
		free(r->frames[i].folded);
	}
	free(r->frames);
	for (i = 0; i < r->nr_pool; i++)
		free(r->pool[i]);
	free(r->pool);
	free(r->maps);
	for (i = 0; i < r->nr_warnings; i++)
		free(r->warnings[i]);
	free(r->warnings);
	for (i = 0; i < r->nr_notes; i++)
		free(r->notes[i]);
	free(r->notes);
	for (i = 0; i < r->nr_jits; i++)
		uwprof_jitsyms_free(&r->jits[i].t);
	free(r->jits);
	free(r->pycodes);
	free(r->samples);
	free(r->chains);
	hash_free(r->frame_hash);
	hash_free(r->map_hash);
	uwprof_syms_free(r->syms);
	uwprof_pf_close(r->pf);
	memset(r, 0, sizeof(*r));
}

const char *uwprof_rep_incomplete_mark(const struct uwprof_rep *r,
				       const struct uwprof_rep_sample *s)
{
	unsigned int st = s->flags & UWPROF_SAMPLE_STOP_MASK;

	if (st == UWPROF_STOP_OK)
		return NULL;
	return r->marks[st < UWPROF_PF_STOP__COUNT ? st : UWPROF_PF_STOP__COUNT];
}
