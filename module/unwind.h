/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The unwinder core's interface: table validation, the in-memory table and
 * mapping types, row lookup and the user-stack walk.
 *
 * The same sources (table_check.c, unwind.c) are compiled twice: into the
 * module, where unwind_env_kernel.h supplies the types and a user-memory
 * reader built on copy_from_user_nofault(), and into the host tests, where
 * tool/unwind_env_host.h supplies a reader over a stopped process
 * (process_vm_readv) or a stack snapshot. The core itself allocates nothing,
 * takes no locks and never dereferences a user address.
 *
 * Calling contexts:
 *   uwprof_table_check(), uwprof_table_init(): process context (the
 *     TABLE_ADD ioctl), before the table is published. Linear in the blob.
 *   uwprof_unwind_user(), uwprof_table_lookup(), uwprof_maps_find(): any
 *     context including NMI and hard IRQ. The caller keeps the mappings and
 *     the tables they point to alive (RCU read side in the module).
 */
#ifndef _UWPROF_UNWIND_H
#define _UWPROF_UNWIND_H

#ifdef __KERNEL__
#include "unwind_env_kernel.h"
#else
#include "unwind_env_host.h"
#endif

#include <linux/uwprof.h>

/*
 * A validated table: every pointer points into the caller's blob, which
 * must stay alive and unchanged as long as the table is used. The blob
 * itself is the lookup structure (see the uapi header): the page of a
 * vaddr is its offset from base shifted right, and a binary search over
 * that page's 16-bit offsets finds the row. uwprof_table_check() proved
 * every index a lookup follows in range, and span bounds the pages.
 */
struct uwprof_table {
	const struct uwprof_table_hdr *hdr;
	const struct uwprof_table_page *page;	/* nr_pages + 1 */
	const u16 *pc;				/* nr_rows offsets in their pages */
	const u8 *slot;				/* nr_rows palette slots */
	const u16 *palette;			/* nr_palette indexes into rules */
	const struct uwprof_rule *rules;
	u64 base;			/* object vaddr of page 0's first byte */
	u64 span;			/* vaddrs covered: base .. base + span */
	u32 page_shift;
	u32 page_mask;			/* (1 << page_shift) - 1 */
	u32 nr_rows;
	u32 nr_rules;
	u32 nr_pages;
	bool direct;			/* one palette for all pages, 0 .. nr_rules - 1 */
};

/*
 * Check a table blob (uapi layout) completely: header fields, arch equal to
 * the running one, sizes, counts, reserved bytes and padding zero, every
 * rule's types and offsets, palette entries naming rules, pages each
 * starting a row later than the one before with a first row at offset 0,
 * offsets strictly increasing and inside their page, every row's palette
 * slot inside the palettes, last row END, and that 'size' is exactly the
 * blob size the header implies. The blob must be 8-byte aligned.
 *
 * Return: 0, -EINVAL (malformed) or -E2BIG (nr_rows, nr_rules or
 * nr_palette above the UWPROF_TABLE_MAX_* limits).
 */
int uwprof_table_check(const void *blob, u64 size);

/* Fill 't' for a blob that passed uwprof_table_check(). Cannot fail. */
void uwprof_table_init(struct uwprof_table *t, const void *blob);

/*
 * The rule for object vaddr 'vaddr', or NULL when the table does not cover
 * it (before base or at/after the last row). END rows are returned as
 * such; the caller decides what a gap means.
 */
const struct uwprof_rule *uwprof_table_lookup(const struct uwprof_table *t,
					      u64 vaddr);

/*
 * One executable mapping of a process, as the module keeps it. Arrays of
 * these are sorted by start and non-overlapping (the MAPS_SET ioctl checks
 * that); the core only reads them.
 */
struct uwprof_unwind_map {
	u64 start;			/* runtime [start, end) */
	u64 end;
	u64 bias;			/* object vaddr = pc - bias */
	const struct uwprof_table *table; /* NULL: no table, use fp */
	u32 flags;			/* UWPROF_MAP_* */
	u32 __pad;
};

/* The mapping containing 'pc', or NULL. Binary search, no allocation. */
const struct uwprof_unwind_map *
uwprof_maps_find(const struct uwprof_unwind_map *maps, u32 nr_maps, u64 pc);

/*
 * Arch-neutral user registers at the sample point. x86_64: pc = rip,
 * sp = rsp, fp = rbp, lr unused. arm64: pc, sp, fp = x29, lr = x30.
 */
struct uwprof_regs {
	u64 pc;
	u64 sp;
	u64 fp;
	u64 lr;
};

/*
 * Rows already found, keyed by (mapping list id, runtime address). A
 * profiler samples the same hot return addresses over and over; a hit
 * costs one load and compare instead of the mapping search, the page
 * lookup and the rule's dependent loads. Two entries a slot: with one,
 * two hot addresses of a stack could share a slot, depending on where
 * ASLR put the objects, and push each other out on every walk. A list id
 * names one immutable mapping list, tables included
 * (uwprof_unwind_req.maps_id), so an entry can only ever match the very
 * list and row it was filled from: nothing needs invalidating when tables
 * or lists come and go. Zeroed memory is an empty cache. Used by one walk
 * at a time (the module keeps one per CPU, inside the ring guard).
 */
#define UWPROF_RULE_CACHE_BITS	8
#define UWPROF_RULE_CACHE_NEXT_BITS	12

struct uwprof_rule_cache_ent {
	u64 at;		/* the address looked up: pc, or return address - 1 */
	u64 maps_id;	/* 0: empty */
	/*
	 * The rule decoded once, when the entry is filled, for the walk's
	 * fast loop (unwind.c); 0 for rows only the general step takes.
	 */
	u8 kind;
	u8 regs;	/* the rule has UWPROF_RULE_REGS: 0 or 1 */
	u16 ctx;	/* this entry's context for next[] */
	u32 span;	/* bytes below the CFA the fast loop reads */
	struct uwprof_rule rule;
	u64 cfa;	/* the fast loop's last CFA from this row */
	u64 filled;	/* the cache's fill count when it was filled */
};

struct uwprof_rule_cache {
	struct uwprof_rule_cache_ent ent[1U << UWPROF_RULE_CACHE_BITS];
	/*
	 * Which entry held the next frame's row last time after the same two
	 * rows, as the entry's number times 8, indexed by the older row's
	 * context (its entry's ctx) plus the newer one's entry number times
	 * 8: hot stacks repeat, so the next row is loaded before the return
	 * address that keys it is read. Two rows of context, not one, because
	 * a function called from several sites has several callers, and the
	 * row below it often tells which. A hint only; the key is always
	 * compared.
	 */
	u16 next[1U << UWPROF_RULE_CACHE_NEXT_BITS];
	u64 fills;	/* entries filled so far: which of two is older */
};

/* One cache line per entry, so entry * 8 scales by 8 again to an address. */
static_assert(sizeof(struct uwprof_rule_cache_ent) == 64,
	      "a rule cache entry is one 64-byte line");
static_assert(UWPROF_RULE_CACHE_NEXT_BITS >= UWPROF_RULE_CACHE_BITS + 4,
	      "next[] indexes add an entry number times 8 to a context below half their range");

/*
 * How far into a function without a frame record pc may be for a direct
 * call to that function's start to prove lr its return address: leaf code
 * is short, and a longer reach would accept calls to unrelated functions.
 */
#define UWPROF_LEAF_MAX_SIZE	4096

/*
 * How often a walk with a deadline reads the clock: frames of the cached
 * loop cost 2 to 4 ns on current hardware and a clock read about 20, so
 * one read after every 64 such frames costs them under half a ns, while a
 * general step (mapping and row searches, reads of code) costs 20 to 200
 * ns, so one read every 8 of those bounds the overshoot to a few
 * microseconds.
 */
#define UWPROF_WALK_CHECK_CACHED	64
#define UWPROF_WALK_CHECK_STEPS		8

/*
 * Check an interpreter descriptor the reader sent (limit: the first
 * address above user space): -EINVAL for any field out of range, else 0.
 * Process context.
 */
int uwprof_py_check(const struct uwprof_python *d, u64 limit);

/*
 * The interpreter chain during one walk (unwind.c owns it): 'mark' is the
 * stack address of the next eval invocation's cframe or entry frame, which
 * the native frame running that invocation holds in [sp, CFA).
 */
struct uwprof_py_walk {
	const struct uwprof_python *d;
	void *env;
	u64 limit;
	u64 deadline;		/* 0: none */
	u64 cur;		/* the invocation's cframe, or its innermost frame */
	u64 mark;		/* 0: no invocation left */
	/*
	 * The words read of a frame (code, previous, instruction pointer,
	 * the word holding the entry byte) and of a code object (type,
	 * size, the word holding the first line, qualified name, file
	 * name), and how far each reaches: set by uwprof_py_start().
	 */
	u32 fr_off[4];
	u32 fr_span;
	u32 co_off[5];
	u32 co_span;
	/* The first frame and code addresses whose span passes the limit. */
	u64 fr_end;
	u64 co_end;
	u32 to_clock;		/* frames read until the deadline is looked at */
	/* Per walk, from the descriptor: the code bits of fr_code, entry byte. */
	u64 code_mask;
	u32 entry_shift;
	/*
	 * The last code object read (PY_NO_CODE: none), where its
	 * instructions start and end, and the tag word of its frames (uapi
	 * UWPROF_IP_PYTHON with its fingerprint, no offset).
	 */
	u64 last_code;
	u64 last_first;
	u64 last_end;
	u64 last_tag;
	/* Set when a code object not in seen[] was read (see the request). */
	bool fresh;
	u64 *seen;
	/* The words last read of a frame and of a code object. */
	u64 fr[4];
	u64 co[5];
};

/*
 * Read the thread's state and find its innermost invocation. 0, or
 * UWPROF_STOP_PYTHON + 1 when the state cannot be read.
 */
u32 uwprof_py_start(struct uwprof_py_walk *pw);

/*
 * Append to ips[*nr ..] the Python frames (two entries each, uapi
 * UWPROF_IP_PYTHON) of the invocation at pw->mark, without passing
 * ips[room], and move to the next one out. 0, or a stop reason + 1:
 * UWPROF_STOP_PYTHON, _DEPTH, _TIME (*nr then counts the frames kept).
 */
u32 uwprof_py_frames(struct uwprof_py_walk *pw, u64 *ips, u32 *nr, u32 room);

/* uwprof_unwind_req.flags */
#define UWPROF_UNWIND_NO_FP_FALLBACK	BIT(0)	/* tables only */

/* What to unwind: all inputs of uwprof_unwind_user(). */
struct uwprof_unwind_req {
	const struct uwprof_unwind_map *maps;	/* sorted by start */
	u32 nr_maps;
	u32 flags;				/* UWPROF_UNWIND_* */
	struct uwprof_regs regs;		/* interrupted user state */
	u64 *ips;				/* out: max_depth entries */
	u32 max_depth;				/* >= 1 */
	/*
	 * UWPROF_SNAP_CALLER, _NO_FP, _NO_LR, _NO_GPR, _SP_LOW: regs are
	 * those of a frame an earlier walk stopped at (uwprof_unwind_res.at),
	 * and this is what was known of them; 0 for the interrupted frame.
	 */
	u32 at_flags;
	struct uwprof_rule_cache *cache;	/* NULL: look every row up */
	/*
	 * Names maps[] and every table it points to for the rule cache: an id
	 * must never name two different lists while a cache lives (the module
	 * counts them up from 1; a forked copy of a list keeps its id). 0
	 * keeps the walk out of the cache.
	 */
	u64 maps_id;
	/*
	 * The environment's reader context: NULL in the module; the host
	 * tests pass their reader (process or snapshot).
	 */
	void *env;
	/*
	 * When UWPROF_ENV_NOW(env) reaches it, the walk stops with
	 * UWPROF_STOP_TIME; 0: never. Needs an environment with a clock.
	 */
	u64 deadline;
	/*
	 * The process's interpreter, or NULL: Python frames follow the
	 * native frames of its eval function (UWPROF_SAMPLE_PYTHON). Needs
	 * an environment with the thread's pointer and id.
	 */
	const struct uwprof_python *py;
	/*
	 * NULL, or a filter of 1 << UWPROF_PY_SEEN_BITS code objects that
	 * earlier walks named: one the walk names that is not there is put
	 * there, and sets uwprof_unwind_res.py_fresh.
	 */
	u64 *py_seen;
};

#define UWPROF_PY_SEEN_BITS	8

/* How the walk ended. */
struct uwprof_unwind_res {
	u32 nr;			/* frames in ips[], leaf first */
	u32 stop;		/* enum uwprof_stop */
	u32 flags;		/* UWPROF_SAMPLE_FP_USED, _EXEC, _PYTHON */
	u32 fp_frames;		/* frames found by frame-pointer fallback */
	u64 unknown_pc;		/* stop == UWPROF_STOP_NO_MAP: the pc, else 0 */
	/*
	 * stop == UWPROF_STOP_NO_MAP: the registers of the frame at
	 * unknown_pc and what is known of them (UWPROF_SNAP_CALLER, _NO_FP,
	 * _NO_LR, _NO_GPR, _SP_LOW), so a walk can resume there later.
	 */
	struct uwprof_regs at;
	u32 at_flags;
	/*
	 * A Python invocation lies beyond where the walk stopped: a walk
	 * resumed from 'at' would leave its frames out (the reader cannot
	 * finish such a walk). 0 or 1.
	 */
	u16 py_left;
	/*
	 * A code object not in req->py_seen was named. 0 or 1. (Two halves
	 * of a word: the structure has no padding, so copies compare whole.)
	 */
	u16 py_fresh;
};

/*
 * Walk the user stack described by 'req' and store return addresses (the
 * interrupted pc first, or the resumed frame's pc) in req->ips. Returns
 * the number of frames (also in res->nr; at least 1 when regs.pc is a user
 * address, else 0 with UWPROF_STOP_BAD_PC).
 *
 * Per frame: the row for pc (pc - 1 for return addresses) gives CFA, ra
 * and fp; a signal row, or the sigreturn trampoline's code, restores pc, sp,
 * fp (and arm64 lr) from the kernel's rt_sigframe; no row (END, no table,
 * UWPROF_MAP_NO_TABLE) or an UNSUPPORTED CFA takes the frame-pointer record
 * unless UWPROF_UNWIND_NO_FP_FALLBACK (then NO_ROW / UNSUPPORTED). A pc in
 * no mapping stops with NO_MAP and is reported in res->unknown_pc.
 *
 * Every frame must move sp strictly upwards (except across a signal frame,
 * which may switch stacks, and arm64's leaf whose ra is still in lr) or the
 * walk stops with UWPROF_STOP_BAD_SP; every address is checked against the
 * user address-space limit before it is read; the loop runs at most
 * max_depth times, and once more when ips[] is full, to tell a stack of
 * exactly max_depth frames (it ends as it would have) from a longer one:
 * UWPROF_STOP_DEPTH means ips[] is full and a further frame exists.
 * With a deadline, the clock is read once the walk has UWPROF_WALK_CHECK_STEPS
 * frames, then every UWPROF_WALK_CHECK_STEPS frames of the general step and
 * after every UWPROF_WALK_CHECK_CACHED frames of the cached loop; a walk
 * past it stops with UWPROF_STOP_TIME, keeping its frames: the limit is
 * overshot by at most that much work.
 *
 * Context: any, including NMI. No locks, no allocation, no sleeping; user
 * memory is read only through the environment's non-faulting reader.
 */
u32 uwprof_unwind_user(const struct uwprof_unwind_req *req,
		       struct uwprof_unwind_res *res);

#endif /* _UWPROF_UNWIND_H */
