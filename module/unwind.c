// SPDX-License-Identifier: GPL-2.0
/*
 * The user-stack walk: mapping and row lookup, one table-driven step per frame, the
 * frame-pointer fallback and signal-frame restore. Shared by the module and
 * the host tests; the environment header supplies the user-memory reader.
 *
 * Called from the perf overflow handler (NMI on x86 with hardware cycles,
 * hard IRQ otherwise): no locks, no allocation, no sleeping, every loop
 * bounded by max_depth or a binary search, every user read through
 * UWPROF_ENV_READ after a range check against the user address limit.
 */
#include "unwind.h"

#if defined(UWPROF_ENV_X86_64)
#include "unwind_x86_64.h"
#elif defined(UWPROF_ENV_ARM64)
#include "unwind_arm64.h"
#endif

/* An environment without a clock has no deadlines to keep. */
#ifndef UWPROF_ENV_NOW
#define UWPROF_ENV_NOW(env)	0ULL
#endif

/*
 * A frame-pointer frame larger than the default 8 MiB stack limit is taken
 * for a register that does not hold a frame pointer.
 */
#define UWPROF_FP_MAX_FRAME	(8ULL << 20)

/*
 * Row lookup: the page from the offset's high bits, then a binary search
 * over the page's 16-bit offsets. The page's first row is at offset 0, so
 * the search never leaves it; every index was proven in range when the
 * table was checked, and off < span keeps the page inside the table. The
 * search branches: a conditional move made each probe wait for the one
 * before, and 'make -C tests/unwind bench' without the rule cache went
 * from 17 to 23 ns per frame. A table whose palette is rules[] itself
 * skips that load.
 */
static __always_inline const struct uwprof_rule *
table_lookup(const struct uwprof_table *t, u64 vaddr)
{
	const struct uwprof_table_page *pg;
	u64 off = vaddr - t->base;
	const u16 *pc;
	u32 n, o;

	/* Below base wraps to a huge offset: one compare catches both ends. */
	if (off >= t->span)
		return NULL;
	pg = &t->page[off >> t->page_shift];
	pc = t->pc + pg->row;
	n = pg[1].row - pg->row;
	o = (u32)off & t->page_mask;
	/* The rightmost row with pc <= o is in pc[0 .. n - 1]; pc[0] = 0. */
	{
		u32 lo = 0, hi = n - 1;

		while (lo < hi) {
			u32 mid = lo + (hi - lo + 1) / 2;

			if (pc[mid] <= o)
				lo = mid;
			else
				hi = mid - 1;
		}
		pc += lo;
	}
	if (t->direct)
		return &t->rules[t->slot[pc - t->pc]];
	return &t->rules[t->palette[pg->palette + t->slot[pc - t->pc]]];
}

const struct uwprof_rule *uwprof_table_lookup(const struct uwprof_table *t,
					      u64 vaddr)
{
	return table_lookup(t, vaddr);
}

/*
 * The slot comes from the runtime address alone, two cheap operations on
 * the critical path of the walk (the next frame's address waits for the
 * row). Hot return addresses differ in their low bits; the fold brings in
 * the page bits that separate objects. The key compare checks table and
 * vaddr, so a process mapping the same object elsewhere only misses. A
 * row may sit in the slot's entry or in its partner (slot ^ 1).
 */
static __always_inline u32 rule_cache_slot(u64 at)
{
	return (u32)(at ^ (at >> UWPROF_RULE_CACHE_BITS)) &
	       ((1U << UWPROF_RULE_CACHE_BITS) - 1);
}

static __always_inline bool rule_cache_is(const struct uwprof_rule_cache_ent *e,
					  u64 at, u64 id)
{
	return e->at == at && e->maps_id == id;
}

/*
 * Kinds of cached rows (uwprof_rule_cache_ent.kind), for walk_cached(): the
 * return address saved below the CFA, fp unchanged or saved below the CFA
 * too, no signal frame. The entry's span is how far below the CFA the
 * lowest of those words starts. An SP row's CFA is at least span above sp
 * and stays aligned when sp is, so its checks are decided here, once.
 */
#define KIND_FAST	BIT(0)	/* else only the general step takes the row */
#define KIND_CFA_FP	BIT(1)	/* CFA = fp + cfa_off, else sp + cfa_off */
#define KIND_FP_SAVED	BIT(2)	/* fp saved at CFA + fp_off, else unchanged */
#define KIND_PAIR	BIT(3)	/* ... just below ra: one read for both */

static void rule_kind(struct uwprof_rule_cache_ent *e)
{
	const struct uwprof_rule *r = &e->rule;
	s64 lo = r->ra_off, hi = r->ra_off;
	u8 kind = KIND_FAST;

	e->kind = 0;
	e->regs = !!(r->flags & UWPROF_RULE_REGS);
	/*
	 * PAC only says how ra was signed: it is stripped in any case. REGS
	 * (and the saved register with it) only matters to a later CFA from
	 * another register: the loop applies the last such row when it
	 * leaves.
	 */
	if ((r->flags & ~(UWPROF_RULE_PAC | UWPROF_RULE_REGS)) ||
	    r->ra_type != UWPROF_REG_AT_CFA)
		return;
	if (r->fp_type == UWPROF_REG_AT_CFA) {
		kind |= KIND_FP_SAVED;
		if ((s64)r->fp_off + 8 == r->ra_off)
			kind |= KIND_PAIR;
		lo = r->fp_off < lo ? r->fp_off : lo;
		hi = r->fp_off > hi ? r->fp_off : hi;
	} else if (r->fp_type != UWPROF_REG_SAME) {
		return;
	}
	if (hi > -8)
		return;
	if (r->cfa_type == UWPROF_CFA_FP) {
		kind |= KIND_CFA_FP;
	} else if (r->cfa_type != UWPROF_CFA_SP || r->cfa_off < -lo ||
		   (r->cfa_off & (UWPROF_ARCH_SP_ALIGN - 1))) {
		return;
	}
	e->span = (u32)-lo;
	e->kind = kind;
}

/*
 * An entry's context for the next-row hints (struct uwprof_rule_cache):
 * its number times 8, mixed into the lower half of next[]'s indexes, to
 * which the next entry's number times 8 is added. Kept in the entry, so
 * the next frame's hint costs no multiply, and an add, not a mix, stands
 * between one frame's entry and the next one's.
 */
static __always_inline u16 next_mix(u32 e8)
{
	return (u16)((e8 * 0x9e3779b1U) >> (32 - UWPROF_RULE_CACHE_NEXT_BITS + 1));
}

/*
 * The row for runtime address at (object vaddr at - bias) of table t, a
 * table of req's mapping list, through the cache.
 */
static __always_inline const struct uwprof_rule *
rule_find(const struct uwprof_unwind_req *req, const struct uwprof_table *t,
	  u64 at, u64 bias)
{
	struct uwprof_rule_cache *c = req->cache;
	struct uwprof_rule_cache_ent *e, *p;
	const struct uwprof_rule *r;
	u32 s;

	if (!c || !req->maps_id)
		return table_lookup(t, at - bias);
	s = rule_cache_slot(at);
	e = &c->ent[s];
	p = &c->ent[s ^ 1];
	if (rule_cache_is(e, at, req->maps_id))
		return &e->rule;
	if (rule_cache_is(p, at, req->maps_id))
		return &p->rule;
	r = table_lookup(t, at - bias);
	if (r) {
		/* The older of the two makes room. */
		if (p->filled < e->filled)
			e = p;
		e->at = at;
		e->maps_id = req->maps_id;
		e->rule = *r;
		e->ctx = next_mix((u32)(e - c->ent) * 8);
		e->filled = ++c->fills;
		rule_kind(e);
	}
	return r;
}

/* The registers of the frame being stepped, and what is known of them. */
struct walk {
	u64 pc;
	u64 sp;
	u64 fp;
	u64 lr;
	u64 limit;		/* first address above user space */
	void *env;
	/* The last two mappings hit: stacks alternate between few objects. */
	const struct uwprof_unwind_map *map[2];
	const struct uwprof_unwind_req *req;
	bool fp_ok;		/* fp holds the frame's real value */
	bool lr_ok;		/* lr holds the return address (arm64) */
	bool exact;		/* pc was interrupted, not a return address */
	/*
	 * The general registers other than sp, fp and lr still hold the
	 * interrupted frame's values: no frame stepped through kept one
	 * elsewhere (UWPROF_RULE_REGS), so a caller's CFA may be based on one.
	 */
	bool gpr_ok;
	/*
	 * sp is the frame's own, not the bound a frame-pointer step leaves
	 * where the record does not give it (UWPROF_ARCH_FP_GIVES_SP).
	 */
	bool sp_ok;
	/*
	 * One register recovered from the stack (the saved_reg of the last
	 * frame stepped through that had UWPROF_RULE_REGS), or WALK_NO_REG:
	 * its value in this frame is the word at sav_at, read only when a
	 * rule asks for it (the stack does not change during the walk, and
	 * most frames save the register no rule ever names). The interrupted
	 * frame's value of it never applies once it is named.
	 */
	u32 sav_reg;
	u64 sav_at;
	/*
	 * The stack address of the next Python invocation's mark (see
	 * struct uwprof_py_walk), mirrored for walk_cached(); 0: none.
	 */
	u64 py_mark;
	struct uwprof_py_walk *pw;
	/* walk_cached() met a Python chain it could not read: the reason + 1. */
	u32 py_stop;
};

#define WALK_NO_REG	(~0U)

/* Step outcome: 0 = moved to the caller, else UWPROF_STOP_* + 1. */
#define STEP_STOP(reason)	((reason) + 1)

static bool range_ok(const struct walk *w, u64 addr, u64 len)
{
	return addr < w->limit && len <= w->limit - addr;
}

static __always_inline int read_words(struct walk *w, u64 addr, u64 *dst, u32 n)
{
	if (unlikely(!range_ok(w, addr, 8ULL * n)))
		return -EFAULT;
	if (unlikely(UWPROF_ENV_READ(w->env, dst, addr, 8UL * n)))
		return -EFAULT;
	return 0;
}

const struct uwprof_unwind_map *
uwprof_maps_find(const struct uwprof_unwind_map *maps, u32 nr_maps, u64 pc)
{
	u32 lo = 0, hi = nr_maps;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if (pc < maps[mid].start)
			hi = mid;
		else if (pc >= maps[mid].end)
			lo = mid + 1;
		else
			return &maps[mid];
	}
	return NULL;
}

/*
 * A frame the walk followed without its CFI (frame pointers, a signal
 * frame, an arm64 leaf): what it did with the general registers is not
 * known.
 */
static void regs_lost(struct walk *w)
{
	w->gpr_ok = false;
	w->sav_reg = WALK_NO_REG;
}

/*
 * The caller's general registers after a step through row r with CFA cfa.
 * A frame without UWPROF_RULE_REGS kept them all. Otherwise the
 * interrupted values no longer apply, and only the register the row
 * records (none: nothing is known) is had, from its slot.
 */
static void regs_step(struct walk *w, const struct uwprof_rule *r, u64 cfa)
{
	if (!(r->flags & UWPROF_RULE_REGS))
		return;
	w->gpr_ok = false;
	w->sav_reg = r->saved_type == UWPROF_REG_AT_CFA ? r->saved_reg :
							 WALK_NO_REG;
	w->sav_at = cfa + (s64)r->saved_off;
}

/*
 * This frame's value of general register regno, if it is known. The
 * recovered register's slot is read with the bounded, non-faulting reads
 * of the return address; a failed read leaves it unknown, not an error.
 */
static bool gpr_value(struct walk *w, u32 regno, u64 *val)
{
	if (regno == w->sav_reg)
		return !read_words(w, w->sav_at, val, 1);
	return w->gpr_ok && UWPROF_ENV_GPR(w->env, regno, val);
}

static u64 strip_ra(struct walk *w, u64 ra)
{
	return UWPROF_ARCH_HAS_PAC ? UWPROF_ENV_STRIP_PAC(w->env, ra) : ra;
}

/*
 * Common exit of every step that found the caller's pc and sp. sp may stay
 * equal only when the return address came from the link register, which
 * happens at most once in a row (lr is unknown after that). A CFA is an
 * ABI-aligned sp; a frame-pointer frame is only held to 8 bytes.
 */
static u32 step_to(struct walk *w, u64 pc, u64 sp, bool fp_frame,
		   bool same_sp_ok)
{
	u64 align = fp_frame ? 8 : UWPROF_ARCH_SP_ALIGN;

	if (unlikely(sp < w->sp || (sp == w->sp && !same_sp_ok) ||
		     sp >= w->limit || (sp & (align - 1))))
		return STEP_STOP(UWPROF_STOP_BAD_SP);
	if (unlikely(!pc))
		return STEP_STOP(fp_frame ? UWPROF_STOP_FP_END : UWPROF_STOP_OK);
	if (unlikely(pc >= w->limit))
		return STEP_STOP(UWPROF_STOP_BAD_PC);
	w->pc = pc;
	w->sp = sp;
	w->sp_ok = true;
	w->lr_ok = false;
	w->exact = false;
	return 0;
}

/*
 * Frame-pointer step for code without a usable row: the record {caller's
 * fp, return address} sits at fp on both arches, and the caller's sp is
 * just above it (x86_64), or somewhere above it (arm64: sp_ok false).
 */
static u32 step_fp(struct walk *w)
{
	u64 rec[2], fp = w->fp;
	u32 ret;

	if (!w->fp_ok || !fp)
		return STEP_STOP(UWPROF_STOP_FP_END);
	if (fp < w->sp || fp - w->sp > UWPROF_FP_MAX_FRAME ||
	    (fp & (UWPROF_ARCH_FP_ALIGN - 1)))
		return STEP_STOP(UWPROF_STOP_BAD_SP);
	if (read_words(w, fp, rec, 2))
		return STEP_STOP(UWPROF_STOP_READ);
	w->fp = rec[0];
	w->fp_ok = true;
	regs_lost(w);
	ret = step_to(w, strip_ra(w, rec[1]), fp + 16, true, false);
	w->sp_ok = UWPROF_ARCH_FP_GIVES_SP;
	return ret;
}

/*
 * Whether fp is still the trampoline's, not a value rt_sigreturn has
 * already restored (it restores sp and pc too, one after the other). On
 * x86_64 the handler gave back the interrupted fp, which the frame holds;
 * on arm64 fp is the record {fp, lr} the kernel pushed beside the frame.
 */
static bool sigframe_untouched(struct walk *w, const u64 *r)
{
	u64 rec[2];

	if (!w->fp_ok)
		return false;
	if (UWPROF_SIG_LR_WORD < 0)
		return w->fp == r[UWPROF_SIG_FP_WORD];
	return !read_words(w, w->fp, rec, 2) && rec[0] == r[UWPROF_SIG_FP_WORD] &&
	       rec[1] == r[UWPROF_SIG_LR_WORD < 0 ? 0 : UWPROF_SIG_LR_WORD];
}

/*
 * Restore the interrupted registers from the kernel's rt_sigframe, which
 * sits at sp in the sigreturn trampoline's frame. The interrupted sp may be
 * on another stack (sigaltstack), so it is not required to be above ours.
 * in_flight: pc is inside the trampoline, not at its start, so rt_sigreturn
 * may be running and restoring the very registers the walk started from.
 */
static u32 step_signal(struct walk *w, bool in_flight)
{
	u64 r[UWPROF_SIG_WORDS];
	u64 pc, sp;

	/* The frame is at sp: a bound will not do. */
	if (unlikely(!w->sp_ok))
		return STEP_STOP(UWPROF_STOP_FP_END);
	if (read_words(w, w->sp + UWPROF_SIG_READ_OFF, r, UWPROF_SIG_WORDS))
		return STEP_STOP(UWPROF_STOP_READ);
	pc = r[UWPROF_SIG_PC_WORD];
	sp = r[UWPROF_SIG_SP_WORD];
	if (!sp || sp >= w->limit)
		return STEP_STOP(UWPROF_STOP_BAD_SP);
	if (!pc || pc >= w->limit)
		return STEP_STOP(UWPROF_STOP_BAD_PC);
	if (in_flight && !sigframe_untouched(w, r))
		return STEP_STOP(UWPROF_STOP_BAD_SP);
	w->pc = pc;
	w->sp = sp;
	w->sp_ok = true;
	w->fp = r[UWPROF_SIG_FP_WORD];
	w->fp_ok = true;
	regs_lost(w);
	if (UWPROF_SIG_LR_WORD >= 0) {
		w->lr = r[UWPROF_SIG_LR_WORD < 0 ? 0 : UWPROF_SIG_LR_WORD];
		w->lr_ok = true;
	}
	w->exact = true;
	return 0;
}

/* Whether the trampoline's code starts at 'start'. */
static bool sigreturn_code_at(struct walk *w, u64 start)
{
	u8 code[UWPROF_SIGRETURN_LEN];

	if (!range_ok(w, start, sizeof(code)) ||
	    UWPROF_ENV_READ(w->env, code, start, sizeof(code)))
		return false;
	return uwprof_arch_is_sigreturn(code);
}

/*
 * Where pc is in the sigreturn trampoline, by its code: 0 at its start (a
 * handler returns there), a later offset of UWPROF_SIGRETURN_PCS for an
 * interrupted pc (a sample at its system call, or in rt_sigreturn itself),
 * -1 outside it.
 */
static int at_sigreturn(struct walk *w)
{
	static const u8 pcs[] = UWPROF_SIGRETURN_PCS;
	unsigned int i, n = w->exact ? sizeof(pcs) : 1;

	for (i = 0; i < n; i++)
		if (w->pc >= pcs[i] && sigreturn_code_at(w, w->pc - pcs[i]))
			return pcs[i];
	return -1;
}

/* Whether 'target' is the start of the code holding pc, at most that far. */
static bool enters_pc(const struct walk *w, u64 target)
{
	return target <= w->pc && w->pc - target <= UWPROF_LEAF_MAX_SIZE;
}

/*
 * Whether the call just before the return address 'ret' enters the code
 * holding pc: a direct call to it made from outside [target, pc], or a
 * call to a PLT stub whose GOT slot holds it. A stale return address, left
 * by a call the function itself made or by an earlier call of its caller,
 * points after a call to some other function, or into the function.
 */
static bool ret_calls_pc(struct walk *w, u64 ret)
{
	u64 call = ret - UWPROF_ARCH_CALL_LEN, target, slot;
	u8 code[UWPROF_PLT_STUB_READ];

	if (!range_ok(w, call, UWPROF_ARCH_CALL_LEN) ||
	    UWPROF_ENV_READ(w->env, code, call, UWPROF_ARCH_CALL_LEN) ||
	    !uwprof_arch_call_target(code, call, &target))
		return false;
	if (enters_pc(w, target))
		return call < target || call > w->pc;
	if (!range_ok(w, target, sizeof(code)) ||
	    UWPROF_ENV_READ(w->env, code, target, sizeof(code)) ||
	    !uwprof_arch_plt_slot(code, target, &slot) ||
	    read_words(w, slot, &target, 1))
		return false;
	return enters_pc(w, strip_ra(w, target));
}

/*
 * arm64 code without a row (the vDSO, whose linker script drops .eh_frame;
 * code without CFI) is often a leaf that never pushes a frame record: in
 * the first frame its return address is still in lr and its caller's sp
 * is sp. fp then belongs to some outer frame, so following it would skip
 * the caller. A record the function did push holds that same lr; lr into
 * another object, or after a direct call to pc's code, is a return
 * address the function has not saved yet.
 */
static bool leaf_in_lr(struct walk *w)
{
	const struct uwprof_unwind_map *m = w->map[0];
	u64 rec[2];

	if (UWPROF_ARCH_LR_REGNO < 0 || !w->lr_ok || !w->exact || !w->lr ||
	    w->lr >= w->limit ||
	    !uwprof_maps_find(w->req->maps, w->req->nr_maps, w->lr - 1))
		return false;
	if (w->fp_ok && w->fp >= w->sp && w->fp - w->sp <= UWPROF_FP_MAX_FRAME &&
	    !(w->fp & (UWPROF_ARCH_FP_ALIGN - 1)) && !read_words(w, w->fp, rec, 2) &&
	    strip_ra(w, rec[1]) == strip_ra(w, w->lr))
		return false;
	return !m || w->lr < m->start || w->lr >= m->end ||
	       ret_calls_pc(w, w->lr);
}

/*
 * x86_64 code without a row (assembly without CFI, such as GMP's) is often
 * a leaf that pushes nothing: in the first frame its return address is at
 * sp, while rbp holds its caller's data or an outer frame's record, so
 * following it would stop or skip the caller. The word at sp is taken as
 * the return address when the call before it enters pc's code; a leaf
 * that did push something holds data there, which does not pass.
 */
static bool leaf_at_sp(struct walk *w, u64 *ra)
{
	if (UWPROF_ARCH_LR_REGNO >= 0 || !w->exact || read_words(w, w->sp, ra, 1))
		return false;
	return *ra && *ra < w->limit &&
	       uwprof_maps_find(w->req->maps, w->req->nr_maps, *ra - 1) &&
	       ret_calls_pc(w, *ra);
}

/* No row to follow: signal trampoline by its code, else frame pointers. */
static u32 step_no_row(struct walk *w, u32 flags, u32 reason, u32 *fp_used)
{
	u64 ra;
	int sig;

	sig = at_sigreturn(w);
	if (sig >= 0)
		return step_signal(w, sig > 0);
	if (flags & UWPROF_UNWIND_NO_FP_FALLBACK)
		return STEP_STOP(reason);
	*fp_used = 1;
	if (leaf_in_lr(w)) {
		regs_lost(w);
		return step_to(w, strip_ra(w, w->lr), w->sp, false, true);
	}
	if (leaf_at_sp(w, &ra)) {
		regs_lost(w);
		return step_to(w, ra, w->sp + 8, false, false);
	}
	return step_fp(w);
}

/* Value of a register rule for the caller; false if it cannot be had. */
static bool reg_value(struct walk *w, u8 type, s32 off, u64 cfa, u64 self,
		      bool self_ok, u64 *val)
{
	switch (type) {
	case UWPROF_REG_SAME:
		*val = self;
		return self_ok;
	case UWPROF_REG_AT_CFA:
		return !read_words(w, cfa + (s64)off, val, 1);
	case UWPROF_REG_VAL_CFA:
		*val = cfa + (s64)off;
		return true;
	case UWPROF_REG_IN_REG:
		return gpr_value(w, (u32)off, val);
	default:
		return false;
	}
}

/* CFA = *(sp or fp + cfa_off) + cfa_arg: an sp the function saved. */
static u32 cfa_deref(struct walk *w, const struct uwprof_rule *r, u64 *cfa)
{
	u64 at;

	if (r->cfa_type == UWPROF_CFA_DEREF_FP && !w->fp_ok)
		return STEP_STOP(UWPROF_STOP_UNSUPPORTED);
	at = (r->cfa_type == UWPROF_CFA_DEREF_SP ? w->sp : w->fp) +
	     (u64)r->cfa_off;
	if (read_words(w, at, cfa, 1))
		return STEP_STOP(UWPROF_STOP_READ);
	*cfa += r->cfa_arg;
	return 0;
}

/*
 * The CFA of an sp-based row that saves fp, when sp is only a bound
 * (after an arm64 frame-pointer step). A frame that keeps its caller's fp
 * and return address as a pair at CFA + fp_off, a frame record, points fp
 * at it once its prologue is done, and a caller is past its prologue: its
 * CFA is fp - fp_off, exactly. One that saves fp apart from the return
 * address has used fp for something else: the frame-pointer walk ends.
 */
static u32 cfa_from_record(const struct walk *w, const struct uwprof_rule *r,
			   u64 *cfa)
{
	if (r->cfa_type != UWPROF_CFA_SP || r->fp_type != UWPROF_REG_AT_CFA ||
	    r->ra_type != UWPROF_REG_AT_CFA || r->ra_off != r->fp_off + 8 ||
	    r->fp_off >= 0 || !w->fp_ok)
		return STEP_STOP(UWPROF_STOP_FP_END);
	*cfa = w->fp - (u64)(s64)r->fp_off;
	if (*cfa & (UWPROF_ARCH_SP_ALIGN - 1))
		return STEP_STOP(UWPROF_STOP_BAD_SP);
	return 0;
}

static u32 step_row(struct walk *w, const struct uwprof_rule *r)
{
	bool ok, from_lr = false, from_reg = false;
	u64 cfa, ra, fp;
	u32 ret;

	if (r->flags & UWPROF_RULE_SIGNAL)
		return step_signal(w, false);

	/*
	 * sp only a bound: a frame that leaves fp alone (built without frame
	 * pointers) is placed from it, right for the records at the top of
	 * their frame that frame-pointer code without tables mostly has; one
	 * that saves fp, by its record. The outermost needs no CFA.
	 */
	if (unlikely(!w->sp_ok) && r->fp_type != UWPROF_REG_SAME &&
	    r->ra_type != UWPROF_REG_UNDEF && r->cfa_type != UWPROF_CFA_FP &&
	    r->cfa_type != UWPROF_CFA_DEREF_FP && r->cfa_type != UWPROF_CFA_REG) {
		ret = cfa_from_record(w, r, &cfa);
		if (ret)
			return ret;
		goto have_cfa;
	}
	switch (r->cfa_type) {
	case UWPROF_CFA_SP:
		cfa = w->sp + (u64)r->cfa_off;
		break;
	case UWPROF_CFA_FP:
		if (!w->fp_ok)
			return STEP_STOP(UWPROF_STOP_UNSUPPORTED);
		cfa = w->fp + (u64)r->cfa_off;
		break;
	case UWPROF_CFA_PLT:
		cfa = w->sp + (u64)r->cfa_off + ((w->pc & 15) >= r->cfa_arg ? 8 : 0);
		break;
	case UWPROF_CFA_DEREF_SP:
	case UWPROF_CFA_DEREF_FP:
		ret = cfa_deref(w, r, &cfa);
		if (ret)
			return ret;
		break;
	case UWPROF_CFA_REG:
		if (!gpr_value(w, r->cfa_arg, &cfa))
			return STEP_STOP(UWPROF_STOP_UNSUPPORTED);
		cfa += (u64)r->cfa_off;
		break;
	default:
		/*
		 * The CFI says how this frame was built, in terms the row cannot
		 * hold: fp need not be a frame pointer here (OpenSSL keeps data
		 * in rbp), so following it could skip frames unseen.
		 */
		return STEP_STOP(UWPROF_STOP_UNSUPPORTED);
	}
have_cfa:
	if (unlikely(cfa < w->sp || cfa >= w->limit))
		return STEP_STOP(UWPROF_STOP_BAD_SP);

	switch (r->ra_type) {
	case UWPROF_REG_UNDEF:
		return STEP_STOP(UWPROF_STOP_OK);
	case UWPROF_REG_IN_REG:
		/*
		 * Another general register holds it (x86_64 __vfork pops it
		 * into rdi across the system call; Go's arm64 stack check
		 * keeps it in x3 while it calls morestack): its value is known
		 * while the interrupted frame's registers still apply, or if
		 * it is the register recovered from the stack.
		 */
		if (r->ra_off != UWPROF_ARCH_LR_REGNO) {
			if (!gpr_value(w, (u32)r->ra_off, &ra))
				return STEP_STOP(UWPROF_STOP_UNSUPPORTED);
			from_lr = true;
			from_reg = true;
			break;
		}
		fallthrough;
	case UWPROF_REG_SAME:
		/*
		 * The return address is still in the link register: known only
		 * where lr was observed (first frame, after a signal frame).
		 */
		if (UWPROF_ARCH_LR_REGNO < 0 || !w->lr_ok)
			return STEP_STOP(UWPROF_STOP_UNSUPPORTED);
		ra = w->lr;
		from_lr = true;
		break;
	case UWPROF_REG_AT_CFA:
		/* fp saved just below ra (push rbp, stp x29, x30): one read. */
		if (r->fp_type == UWPROF_REG_AT_CFA &&
		    (s64)r->fp_off + 8 == r->ra_off) {
			u64 pair[2];

			if (read_words(w, cfa + (s64)r->fp_off, pair, 2))
				return STEP_STOP(UWPROF_STOP_READ);
			w->fp = pair[0];
			w->fp_ok = true;
			regs_step(w, r, cfa);
			return step_to(w, strip_ra(w, pair[1]), cfa, false, false);
		}
		if (read_words(w, cfa + (s64)r->ra_off, &ra, 1))
			return STEP_STOP(UWPROF_STOP_READ);
		break;
	case UWPROF_REG_VAL_CFA:
		ra = cfa + (s64)r->ra_off;
		break;
	default:
		return STEP_STOP(UWPROF_STOP_UNSUPPORTED);
	}

	ok = reg_value(w, r->fp_type, r->fp_off, cfa, w->fp, w->fp_ok, &fp);
	if (!ok && r->fp_type == UWPROF_REG_AT_CFA)
		return STEP_STOP(UWPROF_STOP_READ);
	w->fp = ok ? fp : 0;
	w->fp_ok = ok;
	regs_step(w, r, cfa);
	/*
	 * The register served once; the caller's own value of it is not
	 * known, and a second frame taking its return address from it at the
	 * same sp would only repeat this one.
	 */
	if (from_reg)
		regs_lost(w);
	return step_to(w, strip_ra(w, ra), cfa, false, from_lr);
}

/*
 * The frame a walk stopped at for want of a mapping, to resume it later.
 * A recovered register cannot be handed on (the snapshot's gpr[] are the
 * interrupted ones), so a walk that holds one reports the general
 * registers unknown.
 */
static void stopped_at(const struct walk *w, struct uwprof_unwind_res *res)
{
	res->unknown_pc = w->pc;
	res->at.pc = w->pc;
	res->at.sp = w->sp;
	res->at.fp = w->fp;
	res->at.lr = w->lr;
	res->at_flags = (w->exact ? 0 : UWPROF_SNAP_CALLER) |
			(w->fp_ok ? 0 : UWPROF_SNAP_NO_FP) |
			(w->lr_ok ? 0 : UWPROF_SNAP_NO_LR) |
			(w->gpr_ok && w->sav_reg == WALK_NO_REG ?
			 0 : UWPROF_SNAP_NO_GPR) |
			(w->sp_ok ? 0 : UWPROF_SNAP_SP_LOW);
}

static u32 step(struct walk *w, const struct uwprof_unwind_req *req,
		struct uwprof_unwind_res *res)
{
	const struct uwprof_unwind_map *m = w->map[0];
	const struct uwprof_rule *r = NULL;
	u32 fp_used = 0, ret;
	u64 at;

	/* A return address points after the call: look up the call itself. */
	at = w->exact ? w->pc : w->pc - 1;
	if (!m || at < m->start || at >= m->end) {
		m = w->map[1];
		if (!m || at < m->start || at >= m->end) {
			m = uwprof_maps_find(req->maps, req->nr_maps, at);
			if (unlikely(!m)) {
				/*
				 * A sigreturn trampoline without a byte before
				 * it in its mapping (qemu-user's) is returned
				 * to at its first byte.
				 */
				if (!w->exact && at_sigreturn(w) == 0)
					return step_signal(w, false);
				stopped_at(w, res);
				return STEP_STOP(UWPROF_STOP_NO_MAP);
			}
		}
		w->map[1] = w->map[0];
		w->map[0] = m;
	}
	if (m->table && !(m->flags & UWPROF_MAP_NO_TABLE))
		r = rule_find(req, m->table, at, m->bias);

	if (likely(r && r->cfa_type != UWPROF_CFA_END))
		ret = step_row(w, r);
	else
		ret = step_no_row(w, req->flags, UWPROF_STOP_NO_ROW, &fp_used);

	if (fp_used && !ret) {
		res->fp_frames++;
		res->flags |= UWPROF_SAMPLE_FP_USED;
	}
	return ret;
}

/*
 * The frames stacks are mostly made of, in a loop of their own with the
 * registers in locals: a row in the rule cache of a fast kind (see
 * rule_kind()), the return address saved below the CFA, fp unchanged or
 * saved there too. The row is looked for first where the previous frame's
 * entry says the next one was last time, so the next frame's address waits
 * only for that entry and the stack read. A cached row is only ever filled
 * for an address of a mapping of the walk's list (rule_find()), so its key
 * proves the mapping: no range check. Any other frame, and any check that
 * fails, leaves the loop with the walk still at that frame, untouched, and
 * step() does it the general way (and reports why it stops, if it does).
 * At most 'most' frames are added, so that the caller can look at the
 * clock in between. Returns the new frame count.
 */
static u32 py_step(struct walk *w, u64 lo, u64 hi, u32 nr,
		   struct uwprof_unwind_res *res);

static u32 walk_cached(struct walk *w, const struct uwprof_unwind_req *req,
		       struct uwprof_unwind_res *res, u32 nr, u32 most)
{
	struct uwprof_rule_cache *c = req->cache;
	u8 *ents = (u8 *)c->ent;
	const u64 id = req->maps_id;
	u64 at = w->exact ? w->pc : w->pc - 1, sp = w->sp, fp = w->fp;
	u64 last = w->limit - 1;
	u64 *ips = req->ips + nr;
	u64 *end = ips + (most < req->max_depth - nr ? most : req->max_depth - nr);
	void *env = w->env;
	struct uwprof_rule_cache_ent *n, *regs[2] = { NULL, NULL };
	u64 mark = w->py_mark;
	bool fp_ok = w->fp_ok;
	u32 e8, g = 0, h = 0;

	/* SP rows keep an aligned sp aligned (rule_kind()). */
	if (!id || !w->sp_ok || (sp & (UWPROF_ARCH_SP_ALIGN - 1)))
		return nr;
	/* The first entry is found by its slot: next[h] is not its hint. */
	e8 = rule_cache_slot(at) * 8;

	while (ips < end) {
		u64 cfa, ra;

		/*
		 * The predicted entry first: a hit is a branch, not a load.
		 * next[] is only ever written here, as an entry number * 8.
		 */
		n = (struct uwprof_rule_cache_ent *)(ents + 8 * (size_t)e8);
		if (unlikely(!rule_cache_is(n, at, id))) {
			e8 = rule_cache_slot(at) * 8;
			n = (struct uwprof_rule_cache_ent *)(ents + 8 * (size_t)e8);
			if (!rule_cache_is(n, at, id)) {
				e8 ^= 8;
				n = (struct uwprof_rule_cache_ent *)(ents + 8 * (size_t)e8);
				if (!rule_cache_is(n, at, id))
					break;
			}
			c->next[h] = (u16)e8;
		}
		/*
		 * Every word read lies in [CFA - span, CFA), above sp: below
		 * the limit once the CFA is.
		 */
		if (likely(n->kind == KIND_FAST)) {
			/* CFA = sp + cfa_off, ra saved, fp unchanged. */
			cfa = sp + (u64)n->rule.cfa_off;
			if (cfa > last ||
			    UWPROF_ENV_READ(env, &ra, cfa + (s64)n->rule.ra_off, 8))
				break;
			ra = strip_ra(w, ra);
			/* 0 ends the stack, else a user address: step() decides. */
			if (ra - 1 >= last)
				break;
		} else {
			u8 kind = n->kind;
			u64 fpv = fp, rec[2];

			if (!(kind & KIND_FAST))
				break;
			if (kind & KIND_CFA_FP) {
				cfa = fp + (u64)n->rule.cfa_off;
				if (!fp_ok || cfa <= sp || cfa - sp < n->span ||
				    (cfa & (UWPROF_ARCH_SP_ALIGN - 1)))
					break;
			} else {
				cfa = sp + (u64)n->rule.cfa_off;
			}
			if (cfa > last)
				break;
			if (kind & KIND_PAIR) {
				if (UWPROF_ENV_READ(env, rec, cfa + (s64)n->rule.fp_off, 16))
					break;
				fpv = rec[0];
				ra = rec[1];
			} else if (UWPROF_ENV_READ(env, &ra, cfa + (s64)n->rule.ra_off, 8) ||
				   ((kind & KIND_FP_SAVED) &&
				    UWPROF_ENV_READ(env, &fpv, cfa + (s64)n->rule.fp_off, 8))) {
				break;
			}
			ra = strip_ra(w, ra);
			if (ra - 1 >= last)
				break;
			if (kind & KIND_FP_SAVED) {
				fp = fpv;
				fp_ok = true;
			}
		}
		/*
		 * The interpreter's invocation this frame runs: its Python
		 * frames go between this frame's pc and its caller's.
		 */
		if (unlikely(mark - sp < cfa - sp)) {
			u32 ret = py_step(w, sp, cfa, ips - req->ips, res);

			ips = req->ips + res->nr;
			if (unlikely(ret)) {
				w->py_stop = ret;
				return res->nr;
			}
			mark = w->py_mark;
		}
		at = ra - 1;
		/*
		 * Only the last frame that kept registers decides them: its
		 * entry, and its CFA, which no later frame of the same entry
		 * leaves otherwise.
		 */
		n->cfa = cfa;
		regs[n->regs] = n;
		sp = cfa;
		*ips++ = ra;
		/* g + e8 stays inside next[]: both are below half of it. */
		h = g + e8;
		g = n->ctx;
		e8 = c->next[h];
	}
	if (ips != req->ips + nr) {
		w->pc = at + 1;
		w->sp = sp;
		w->fp = fp;
		w->fp_ok = fp_ok;
		w->lr_ok = false;
		w->exact = false;
		if (regs[1])
			regs_step(w, &regs[1]->rule, regs[1]->cfa);
	}
	return ips - req->ips;
}

/*
 * After a step through the native frame [lo, hi): the Python frames of
 * each invocation whose mark it holds (one, but for a forged chain), kept
 * in ips[] with room for the caller's pc; a mark it stepped past without
 * holding it is a chain that does not fit the stack. 0 with the frame
 * count in res->nr, or a stop reason + 1.
 */
static u32 py_step(struct walk *w, u64 lo, u64 hi, u32 nr,
		   struct uwprof_unwind_res *res)
{
	const struct uwprof_unwind_req *req = w->req;
	struct uwprof_py_walk *pw = w->pw;
	u32 had = nr, ret = 0;

	while (pw->mark && pw->mark < hi) {
		u64 mark = pw->mark;

		if (mark < lo) {
			ret = UWPROF_STOP_PYTHON + 1;
			break;
		}
		ret = uwprof_py_frames(pw, req->ips, &nr, req->max_depth - 1);
		if (ret)
			break;
		/* Invocations nest outwards, up the stack: no loop. */
		if (pw->mark && pw->mark <= mark) {
			ret = UWPROF_STOP_PYTHON + 1;
			break;
		}
	}
	w->py_mark = pw->mark;
	if (nr != had)
		res->flags |= UWPROF_SAMPLE_PYTHON;
	res->nr = nr;
	return ret;
}

u32 uwprof_unwind_user(const struct uwprof_unwind_req *req,
		       struct uwprof_unwind_res *res)
{
	struct walk w = {
		.pc = req->regs.pc,
		.sp = req->regs.sp,
		.fp = req->regs.fp,
		.lr = UWPROF_ARCH_HAS_PAC ? UWPROF_ENV_STRIP_PAC(req->env, req->regs.lr)
					  : req->regs.lr,
		.limit = UWPROF_ENV_USER_LIMIT(req->env),
		.env = req->env,
		.req = req,
		.fp_ok = !(req->at_flags & UWPROF_SNAP_NO_FP),
		.lr_ok = UWPROF_ARCH_LR_REGNO >= 0 &&
			 !(req->at_flags & UWPROF_SNAP_NO_LR),
		.exact = !(req->at_flags & UWPROF_SNAP_CALLER),
		.gpr_ok = !(req->at_flags & UWPROF_SNAP_NO_GPR),
		.sp_ok = !(req->at_flags & UWPROF_SNAP_SP_LOW),
		.sav_reg = WALK_NO_REG,
	};
	/*
	 * The frame count at which to look at the clock next (unwind.h):
	 * compared, not counted down, so the general step pays a compare.
	 */
	u32 check = req->deadline ? UWPROF_WALK_CHECK_STEPS : ~0U;
	const u32 most = req->deadline ? UWPROF_WALK_CHECK_CACHED : ~0U;
	struct uwprof_py_walk pw = {
		.d = req->py,
		.env = req->env,
		.limit = w.limit,
		.deadline = req->deadline,
		.seen = req->py_seen,
	};
	u32 nr = 0, ret;

	w.pw = &pw;
	res->stop = UWPROF_STOP_OK;
	res->flags = 0;
	res->fp_frames = 0;
	res->unknown_pc = 0;
	res->at = (struct uwprof_regs){ 0 };
	res->at_flags = 0;
	res->py_left = 0;
	res->py_fresh = 0;

	if (unlikely(!w.pc || w.pc >= w.limit || !req->max_depth)) {
		res->stop = UWPROF_STOP_BAD_PC;
		goto out;
	}
	if (unlikely(w.sp >= w.limit)) {
		req->ips[nr++] = w.pc;
		res->stop = UWPROF_STOP_BAD_SP;
		goto out;
	}
	req->ips[nr++] = w.pc;
	if (req->py) {
		ret = uwprof_py_start(&pw);
		w.py_mark = pw.mark;
		if (ret) {
			res->stop = ret - 1;
			goto out;
		}
	}

	/*
	 * One call site for step(), so that the compiler keeps it inline in
	 * this loop: the walk's state then stays in registers.
	 */
	for (;;) {
		struct uwprof_unwind_res peek, *to = res;
		bool full;
		u64 lo;

		if (unlikely(nr >= check)) {
			if (UWPROF_ENV_NOW(req->env) >= req->deadline) {
				res->stop = UWPROF_STOP_TIME;
				break;
			}
			check = nr + UWPROF_WALK_CHECK_STEPS;
		}
		if (req->cache) {
			u32 had = nr;

			nr = walk_cached(&w, req, res, nr, most);
			if (unlikely(w.py_stop)) {
				res->stop = w.py_stop - 1;
				break;
			}
			/* Out of its share, maybe not of cached rows: the clock first. */
			if (nr - had >= most) {
				check = nr;
				continue;
			}
		}
		/*
		 * A stack of exactly max_depth frames is whole, not cut: one
		 * more step tells, on a copy of the result so that a frame not
		 * kept counts for nothing.
		 */
		full = nr >= req->max_depth;
		if (unlikely(full)) {
			peek = *res;
			to = &peek;
		}
		lo = w.sp;
		ret = step(&w, req, to);
		if (unlikely(full)) {
			if (ret)
				*res = peek;
			res->stop = ret ? ret - 1 : UWPROF_STOP_DEPTH;
			break;
		}
		if (ret) {
			res->stop = ret - 1;
			break;
		}
		if (unlikely(w.py_mark) && w.sp > lo) {
			ret = py_step(&w, lo, w.sp, nr, res);
			nr = res->nr;
			if (ret) {
				res->stop = ret - 1;
				break;
			}
		}
		req->ips[nr++] = w.pc;
	}
	/* An invocation no native frame ran: its frames had no place. */
	if (w.py_mark && res->stop == UWPROF_STOP_OK)
		res->stop = UWPROF_STOP_PYTHON;
	res->py_left = !!w.py_mark;
	res->py_fresh = pw.fresh;
out:
	res->nr = nr;
	return nr;
}
