// SPDX-License-Identifier: GPL-2.0
/*
 * CPython's frames in the user-stack walk: the check of an interpreter
 * descriptor (struct uwprof_python, uapi header) and the reading of the
 * interpreter frames one invocation of the eval function runs. Shared by
 * the module and the host tests, like unwind.c.
 *
 * Everything read here was written by the profiled process, which may be
 * in the middle of changing it or may forge it: every address is checked
 * against the user limit and read without faulting, every code object
 * must have the code type, every instruction offset must lie in its code
 * object, and the loops are bounded by the room left in ips[] and by the
 * walk's deadline. What does not hold ends the walk (UWPROF_STOP_PYTHON)
 * with the frames found so far, all of them exact.
 */
#include "unwind.h"

/* glibc's PTHREAD_KEYS_MAX: a larger key is not a key. */
#define PY_KEYS_MAX		1024
/* tp_pthread: struct pthread sits next to the thread pointer. */
#define PY_TP_REACH		65536
/* How many frames between two looks at the clock: each is 6 reads. */
#define PY_CHECK_FRAMES		32
/* hash_64()'s golden ratio, for the seen filter: the host build has no hash.h. */
#define PY_HASH_MUL		0x61c8864680b583ebULL
/* No code object is at an odd address: last_code before the first read. */
#define PY_NO_CODE		1

static u32 py_max(u32 a, u32 b)
{
	return a > b ? a : b;
}

static bool py_off_ok(u32 off, u32 align)
{
	return off < UWPROF_PY_MAX_OFF && !(off & (align - 1));
}

int uwprof_py_check(const struct uwprof_python *d, u64 limit)
{
	bool cframe = d->flags & UWPROF_PY_CFRAME;

	if (d->flags & ~(UWPROF_PY_CFRAME | UWPROF_PY_CODE_TAGGED) ||
	    d->__reserved0)
		return -EINVAL;
	if (!d->key_addr || d->key_addr >= limit - 4 || (d->key_addr & 3) ||
	    !d->code_type || d->code_type >= limit || (d->code_type & 7))
		return -EINVAL;
	if (d->tp_pthread <= -PY_TP_REACH || d->tp_pthread >= PY_TP_REACH)
		return -EINVAL;
	if (!py_off_ok(d->pt_specific, 8) || !py_off_ok(d->pt_tid, 4) ||
	    !py_off_ok(d->ts_frame, 8) || !py_off_ok(d->fr_code, 8) ||
	    !py_off_ok(d->fr_previous, 8) || !py_off_ok(d->fr_instr, 8) ||
	    !py_off_ok(d->fr_entry, 1) || !py_off_ok(d->co_type, 8) ||
	    !py_off_ok(d->co_size, 8) || !py_off_ok(d->co_code, 2) ||
	    !py_off_ok(d->co_firstlineno, 4) || !py_off_ok(d->co_qualname, 8) ||
	    !py_off_ok(d->co_filename, 8))
		return -EINVAL;
	if (d->kd_size < 8 || d->kd_size > 64 || (d->kd_size & 7) ||
	    d->kd_data > d->kd_size - 8 || (d->kd_data & 7) ||
	    !d->kd_per_block || d->kd_per_block > PY_KEYS_MAX ||
	    (d->kd_per_block & (d->kd_per_block - 1)))
		return -EINVAL;
	if (cframe)
		return py_off_ok(d->cf_frame, 8) && py_off_ok(d->cf_previous, 8) &&
		       !d->entry_value ? 0 : -EINVAL;
	return !d->cf_frame && !d->cf_previous && d->entry_value <= 0xff ?
	       0 : -EINVAL;
}

/*
 * Every read is one aligned word: the reader's word path is a single
 * load, where other sizes take the general copy (and, with hardened
 * usercopy, a walk of the kernel stack to check the destination).
 */
static int py_word(const struct uwprof_py_walk *pw, u64 addr, u64 *v)
{
	if (addr >= pw->limit || 8 > pw->limit - addr || (addr & 7))
		return -EFAULT;
	return UWPROF_ENV_READ(pw->env, v, addr, 8);
}

/* A smaller field: from the aligned word that holds it (little-endian). */
static int py_field(const struct uwprof_py_walk *pw, u64 addr, u32 bytes,
		    u32 *v)
{
	u64 w;

	if (py_word(pw, addr & ~7ULL, &w))
		return -EFAULT;
	w >>= 8 * (addr & 7);
	*v = bytes == 4 ? (u32)w : (u8)w;
	return 0;
}

/*
 * One interpreter frame 'f': its code object and instruction offset into
 * out[0..1] (uapi UWPROF_IP_PYTHON), the next frame out and its entry
 * byte. 0 or a stop reason + 1.
 */
static __always_inline u32 py_frame(struct uwprof_py_walk *pw, u64 f,
				    u64 *out, u64 *prev, u32 *entry)
{
	const struct uwprof_python *d = pw->d;
	u64 *fr = pw->fr, *co = pw->co, code;
	u32 line;

	if ((f & 7) || f >= pw->fr_end ||
	    UWPROF_ENV_READ_WORDS(pw->env, f, pw->fr_span, pw->fr_off, fr, 4))
		return UWPROF_STOP_PYTHON + 1;
	code = fr[0] & pw->code_mask;
	*prev = fr[1];
	*entry = (u8)(fr[3] >> pw->entry_shift);
	/*
	 * Recursion runs one code object in frame after frame: within one
	 * walk it is read once (a second read would be no more current).
	 */
	if (code != pw->last_code) {
		if ((code & 7) || code >= pw->co_end ||
		    UWPROF_ENV_READ_WORDS(pw->env, code, pw->co_span,
					  pw->co_off, co, 5) ||
		    co[0] != d->code_type || co[1] > 0xffffffffULL)
			return UWPROF_STOP_PYTHON + 1;
		pw->last_code = code;
		/* -2: a 3.11 frame before its first instruction. */
		pw->last_first = code + d->co_code - 2;
		pw->last_end = code + d->co_code + 2 * co[1];
		line = (u32)(co[2] >> 8 * (d->co_firstlineno & 7));
		pw->last_tag = UWPROF_IP_PYTHON |
			       (u64)UWPROF_PY_FINGERPRINT(co[1], line, co[3],
							  co[4]) << 32;
		if (pw->seen) {
			u64 *s = &pw->seen[(code * PY_HASH_MUL) >>
					   (64 - UWPROF_PY_SEEN_BITS)];

			if (*s != code) {
				*s = code;
				pw->fresh = true;
			}
		}
	}
	if (fr[2] < pw->last_first || fr[2] >= pw->last_end || (fr[2] & 1))
		return UWPROF_STOP_PYTHON + 1;
	/* In code units, from -1. */
	out[0] = pw->last_tag | (u32)((fr[2] - pw->last_first) / 2 - 1);
	out[1] = code;
	return 0;
}

/*
 * Whether a walk with a deadline is past it, looked at every few frames
 * read: a count down, so a frame costs one decrement.
 */
static __always_inline bool py_late(struct uwprof_py_walk *pw)
{
	if (likely(--pw->to_clock))
		return false;
	pw->to_clock = PY_CHECK_FRAMES;
	return pw->deadline && UWPROF_ENV_NOW(pw->env) >= pw->deadline;
}

/*
 * CPython 3.11: the invocation at cframe pw->cur is on the stack unless
 * it is the root cframe, which lives in the thread state and has no
 * previous one.
 */
static u32 py_cframe_mark(struct uwprof_py_walk *pw)
{
	u64 outer;

	pw->mark = 0;
	if (!pw->cur)
		return 0;
	if (py_word(pw, pw->cur + pw->d->cf_previous, &outer))
		return UWPROF_STOP_PYTHON + 1;
	if (outer)
		pw->mark = pw->cur;
	return 0;
}

/*
 * CPython 3.12 on: the next entry frame from pw->cur out, reading at
 * most 'most' frames before it.
 */
static u32 py_entry_mark(struct uwprof_py_walk *pw, u32 most)
{
	const struct uwprof_python *d = pw->d;
	u64 f = pw->cur, prev, pair[2];
	u32 n, ret, entry;

	pw->mark = 0;
	for (n = 0; f; n++) {
		if (n > most)
			return UWPROF_STOP_DEPTH + 1;
		if (py_late(pw))
			return UWPROF_STOP_TIME + 1;
		ret = py_frame(pw, f, pair, &prev, &entry);
		/* An entry frame's code slot need not hold a code object. */
		if (ret && (py_field(pw, f + d->fr_entry, 1, &entry) ||
			    entry != d->entry_value))
			return ret;
		if (entry == d->entry_value) {
			pw->mark = f;
			return 0;
		}
		f = prev;
	}
	/* The chain ends without an entry frame: nothing runs it. */
	return pw->cur ? UWPROF_STOP_PYTHON + 1 : 0;
}

/*
 * The thread's state, through the C library's thread-specific data. The
 * thread pointer must be the sampled thread's: the structure it points to
 * carries the thread's id, so an interrupt in a context switch between
 * two threads of one process never pairs one's stack with the other's
 * frames. A thread without a state runs no Python.
 */
u32 uwprof_py_start(struct uwprof_py_walk *pw)
{
	const struct uwprof_python *d = pw->d;
	u64 pt = UWPROF_ENV_TP(pw->env) + (s64)d->tp_pthread;
	u64 l1, ts;
	u32 key, tid;

	pw->cur = 0;
	pw->mark = 0;
	pw->to_clock = PY_CHECK_FRAMES;
	pw->last_code = PY_NO_CODE;
	pw->last_end = 0;
	pw->code_mask = d->flags & UWPROF_PY_CODE_TAGGED ?
			~((1ULL << UWPROF_PY_CODE_TAG_BITS) - 1) : ~0ULL;
	pw->entry_shift = 8 * (d->fr_entry & 7);
	pw->fr_off[0] = d->fr_code;
	pw->fr_off[1] = d->fr_previous;
	pw->fr_off[2] = d->fr_instr;
	pw->fr_off[3] = d->fr_entry & ~7U;
	pw->fr_span = py_max(py_max(d->fr_code, d->fr_previous),
			     py_max(d->fr_instr, d->fr_entry & ~7U)) + 8;
	pw->co_off[0] = d->co_type;
	pw->co_off[1] = d->co_size;
	pw->co_off[2] = d->co_firstlineno & ~7U;
	pw->co_off[3] = d->co_qualname;
	pw->co_off[4] = d->co_filename;
	pw->co_span = py_max(py_max(py_max(d->co_type, d->co_size),
				    py_max(d->co_firstlineno & ~7U,
					   d->co_qualname)),
			     d->co_filename) + 8;
	/* The first addresses whose words do not all lie below the limit. */
	pw->fr_end = pw->limit >= pw->fr_span ? pw->limit - pw->fr_span + 1 : 0;
	pw->co_end = pw->limit >= pw->co_span ? pw->limit - pw->co_span + 1 : 0;
	if (py_field(pw, d->key_addr, 4, &key) || key >= PY_KEYS_MAX ||
	    py_field(pw, pt + d->pt_tid, 4, &tid) ||
	    tid != UWPROF_ENV_TID(pw->env) ||
	    py_word(pw, pt + d->pt_specific + 8ULL * (key / d->kd_per_block),
		    &l1) || !l1 ||
	    py_word(pw, l1 + (u64)d->kd_size * (key % d->kd_per_block) +
		    d->kd_data, &ts))
		return UWPROF_STOP_PYTHON + 1;
	if (!ts)
		return 0;
	if (py_word(pw, ts + d->ts_frame, &pw->cur))
		return UWPROF_STOP_PYTHON + 1;
	if (d->flags & UWPROF_PY_CFRAME)
		return py_cframe_mark(pw);
	return py_entry_mark(pw, UWPROF_MAX_DEPTH);
}

u32 uwprof_py_frames(struct uwprof_py_walk *pw, u64 *ips, u32 *nr, u32 room)
{
	const struct uwprof_python *d = pw->d;
	bool cframe = d->flags & UWPROF_PY_CFRAME;
	u64 f = pw->cur, prev;
	u32 n = *nr, ret, entry = 0;

	/* 3.11: the cframe names its innermost frame and the next cframe. */
	if (cframe && (py_word(pw, pw->mark + d->cf_frame, &f) ||
		       py_word(pw, pw->mark + d->cf_previous, &pw->cur)))
		return UWPROF_STOP_PYTHON + 1;
	for (;;) {
		if (!cframe && f == pw->mark)
			break;
		if (!f)
			return UWPROF_STOP_PYTHON + 1;
		if (n + 2 > room) {
			ret = UWPROF_STOP_DEPTH + 1;
			goto out;
		}
		if (py_late(pw)) {
			ret = UWPROF_STOP_TIME + 1;
			goto out;
		}
		ret = py_frame(pw, f, ips + n, &prev, &entry);
		if (ret)
			goto out;
		n += 2;
		f = prev;
		/* 3.11: the invocation's outermost frame says it is. */
		if (cframe && entry)
			break;
	}
	*nr = n;
	if (cframe)
		return py_cframe_mark(pw);
	if (py_word(pw, pw->mark + d->fr_previous, &pw->cur))
		return UWPROF_STOP_PYTHON + 1;
	return py_entry_mark(pw, room > n ? (room - n) / 2 : 0);
out:
	*nr = n;
	return ret;
}
