// SPDX-License-Identifier: GPL-2.0
/*
 * Finishing walks from stack snapshots with the module's own unwinder core
 * (see snapshot.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile_file.h"
#include "snapshot.h"
#include "vec.h"

int uwprof_snap_table_init(struct uwprof_snap_table *st, void *blob,
			   size_t size)
{
	int ret;

	memset(st, 0, sizeof(*st));
	ret = uwprof_table_check(blob, size);
	if (ret)
		return ret;
	uwprof_table_init(&st->t, blob);
	st->blob = blob;
	return 0;
}

void uwprof_snap_table_free(struct uwprof_snap_table *st)
{
	free(st->blob);
	memset(st, 0, sizeof(*st));
}

static size_t sample_ips_end(const struct uwprof_rec_sample *s)
{
	return sizeof(*s) + 8 * ((size_t)s->nr_kernel + s->nr_user);
}

int uwprof_snap_parse(const struct uwprof_rec_sample *s,
		      struct uwprof_snap_view *v)
{
	size_t off = sample_ips_end(s), need;
	const struct uwprof_snapshot *sn;

	if (!(s->flags & UWPROF_SAMPLE_SNAPSHOT) || !s->nr_user ||
	    off + sizeof(*sn) > s->hdr.size)
		return -EINVAL;
	sn = (const void *)((const char *)s + off);
	need = off + sizeof(*sn) + 8 * (size_t)sn->nr_gpr + sn->stack_size;
	if (sn->nr_gpr > 64 || need > s->hdr.size ||
	    sn->pc != s->ips[s->nr_kernel + s->nr_user - 1])
		return -EINVAL;
	v->sn = sn;
	v->gpr = (const uint64_t *)(sn + 1);
	v->stack = (const uint8_t *)(v->gpr + sn->nr_gpr);
	return 0;
}

static struct uwprof_rec_sample *rec_alloc(const struct uwprof_rec_sample *s,
					   uint32_t nr_user)
{
	size_t n = (size_t)s->nr_kernel + nr_user;
	struct uwprof_rec_sample *out = malloc(sizeof(*out) + 8 * n);

	if (!out)
		return NULL;
	memcpy(out, s, sizeof(*out));
	memcpy(out->ips, s->ips, 8 * ((size_t)s->nr_kernel +
				      (nr_user < s->nr_user ? nr_user : s->nr_user)));
	out->hdr.size = (uint32_t)(sizeof(*out) + 8 * n);
	out->nr_user = (uint16_t)nr_user;
	out->flags &= ~UWPROF_SAMPLE_SNAPSHOT;
	return out;
}

struct uwprof_rec_sample *uwprof_snap_strip(const struct uwprof_rec_sample *s)
{
	return rec_alloc(s, s->nr_user);
}

/* The first address above user space, as the module's TASK_SIZE. */
#ifdef UWPROF_ENV_ARM64
#define SNAP_USER_LIMIT	(1ULL << 48)
#define SNAP_VA_BITS	48
#else
#define SNAP_USER_LIMIT	((1ULL << 47) - 4096)
#define SNAP_VA_BITS	64
#endif

/*
 * The resumed walk's stop: one that needed stack beyond a copy the module
 * cut at its size says so, rather than blame the stack.
 */
static uint32_t finish_stop(const struct uwprof_unwind_res *res,
			    const struct uwprof_host_env *env,
			    const struct uwprof_snapshot *sn)
{
	if (res->stop == UWPROF_STOP_READ && env->read_errors &&
	    (sn->flags & UWPROF_SNAP_CUT) &&
	    env->fault_addr >= sn->sp + sn->stack_size)
		return UWPROF_PF_STOP_SNAPSHOT_SHORT;
	return res->stop;
}

struct uwprof_rec_sample *uwprof_snap_finish(const struct uwprof_rec_sample *s,
					     const struct uwprof_snap_req *req)
{
	struct uwprof_unwind_res res = { 0 };
	struct uwprof_rec_sample *out;
	struct uwprof_snap_view v;
	struct uwprof_host_env env = {
		.user_limit = SNAP_USER_LIMIT,
		.va_bits = SNAP_VA_BITS,
	};
	struct uwprof_unwind_req u = { 0 };
	uint32_t kept, room, nr;

	if (uwprof_snap_parse(s, &v))
		return NULL;
	kept = s->nr_user - 1;	/* the snapshot's pc is the walk's first ip */
	if (kept >= req->max_depth)
		return uwprof_snap_strip(s);
	room = req->max_depth - kept;
	out = rec_alloc(s, kept + room);
	if (!out)
		return NULL;

	env.nr_regions = 1;
	env.region[0].start = v.sn->sp;
	env.region[0].size = v.sn->stack_size;
	env.region[0].data = v.stack;
	env.read_more = req->read_code;
	env.read_more_arg = req->read_code_arg;
	if (!(v.sn->flags & UWPROF_SNAP_NO_GPR)) {
		env.gpr = (const u64 *)v.gpr;
		env.nr_gpr = v.sn->nr_gpr;
	}
	u.maps = req->maps;
	u.nr_maps = req->nr_maps;
	u.flags = req->no_fp ? UWPROF_UNWIND_NO_FP_FALLBACK : 0;
	u.regs.pc = v.sn->pc;
	u.regs.sp = v.sn->sp;
	u.regs.fp = v.sn->fp;
	u.regs.lr = v.sn->lr;
	u.at_flags = v.sn->flags & (UWPROF_SNAP_CALLER | UWPROF_SNAP_NO_FP |
				    UWPROF_SNAP_NO_LR | UWPROF_SNAP_NO_GPR |
				    UWPROF_SNAP_SP_LOW);
	u.ips = (u64 *)(out->ips + s->nr_kernel + kept);
	u.max_depth = room;
	u.env = &env;
	nr = uwprof_unwind_user(&u, &res);
	if (!nr) {
		/* A pc the core refuses: keep the module's frames as they were. */
		free(out);
		return uwprof_snap_strip(s);
	}
	out->nr_user = (uint16_t)(kept + nr);
	out->hdr.size = (uint32_t)(sizeof(*out) +
				   8 * ((size_t)s->nr_kernel + out->nr_user));
	out->flags = (s->flags & ~(UWPROF_SAMPLE_STOP_MASK | UWPROF_SAMPLE_SNAPSHOT)) |
		     (res.flags & UWPROF_SAMPLE_FP_USED) |
		     finish_stop(&res, &env, v.sn) | UWPROF_PF_SAMPLE_FINISHED;
	return out;
}

int uwprof_snap_queue_add(struct uwprof_snap_queue *q,
			  const struct uwprof_rec_sample *s)
{
	struct uwprof_rec_sample *c;

	if (q->bytes + s->hdr.size > q->max_bytes)
		return -ENOSPC;
	if (VEC_RESERVE(q->v, q->cap, q->n + 1, 64))
		return -ENOMEM;
	c = malloc(s->hdr.size);
	if (!c)
		return -ENOMEM;
	memcpy(c, s, s->hdr.size);
	q->v[q->n].s = c;
	q->v[q->n++].tag = 0;
	q->bytes += s->hdr.size;
	return 0;
}

void uwprof_snap_queue_take(struct uwprof_snap_queue *q, uint32_t pid,
			    int (*take)(void *arg, struct uwprof_snap_queued *e),
			    void *arg)
{
	size_t i, k = 0;

	for (i = 0; i < q->n; i++) {
		struct uwprof_snap_queued e = q->v[i];
		uint32_t size = e.s->hdr.size;

		if ((!pid || e.s->pid == pid) && !take(arg, &e))
			q->bytes -= size;
		else
			q->v[k++] = e;
	}
	q->n = k;
}

void uwprof_snap_queue_free(struct uwprof_snap_queue *q)
{
	size_t i;

	for (i = 0; i < q->n; i++)
		free(q->v[i].s);
	free(q->v);
	memset(q, 0, sizeof(*q));
}
