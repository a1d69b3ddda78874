// SPDX-License-Identifier: GPL-2.0
/*
 * The walk on synthetic stacks: a hand-built table over a fake text
 * mapping, a stack written word by word into a snapshot buffer, and the
 * expected frames and stop reason of every path of unwind.c (table frames,
 * pc - 1 lookups, arm64 link register and PAC, frame-pointer fallback, no
 * table, unknown mapping, signal frames by row and by code, PLT, every stop
 * reason). Built once per arch of the core (native and UWPROF_HOST_ARM64).
 */
#include <stdlib.h>

#include "testlib.h"

#if defined(UWPROF_ENV_X86_64)
#include "unwind_x86_64.h"
#define ARM64	0
#elif defined(UWPROF_ENV_ARM64)
#include "unwind_arm64.h"
#define ARM64	1
#endif

#define NR(a)		(sizeof(a) / sizeof((a)[0]))

/* Fake address space. */
#define TEXT		0x400000ULL	/* table-covered object, bias 0 */
#define JIT		0x600000ULL	/* mapping without table */
#define JIT_CALL	0x78ULL		/* jit_code[]: two instructions */
#define TRAMPMAP	0x700000ULL	/* a sigreturn page alone (qemu-user's) */
#define STACK		0x7ffff0000000ULL
#define STACK_WORDS	24576	/* 192 KiB: room for frames past 64 KiB */
#define LIMIT		0x800000000000ULL

/* Functions of the fake object, offsets from TEXT. */
#define F_A		0x1000	/* ordinary frame */
#define F_LEAF		0x1100	/* x86: CFA=sp+8; arm64: CFA=sp, ra in lr */
#define F_FP		0x1200	/* CFA=fp+16 */
#define F_OUTER		0x1300	/* ra undefined */
#define F_UNSUP		0x1400	/* CFA expression */
#define F_GAP		0x1500	/* END row: no unwind info */
#define F_SIG		0x1600	/* signal trampoline FDE */
#define F_PLT		0x1700	/* x86_64 PLT */
#define F_FPFAR		0x1800	/* fp saved apart from ra: a read of its own */
#define F_FPVAL		0x1880	/* fp = CFA + 16 (DW_CFA_val_offset) */
#define F_FPREG		0x1900	/* fp copied to another register: unknown */
#define F_DEREF		0x1980	/* CFA = *(sp + 24) + 8 */
#define F_DEREFFP	0x19c0	/* CFA = *(fp - 8) */
#define F_REGCFA	0x19e0	/* CFA = register 3 + 16 */
#define F_AREGS		0x19f0	/* as F_A, keeping another register elsewhere */
#define F_RAREG		0x19f8	/* ra in register 5, CFA = sp (x86 __vfork) */
#define F_BIG32		0x1a00	/* 32 KiB frame, fp and ra at its bottom */
#define F_BIG64		0x1a40	/* 72 KiB frame, ra at its bottom, fp apart */
#define F_BIGFP		0x1a80	/* CFA = fp + 64 KiB + 16, record at fp */
#define F_BIGDEREF	0x1ac0	/* CFA = *(sp + 8) + 0x12340 */
#define F_RESOLV	0x1b00	/* CFA = SAVREG + 16, SAVREG saved at CFA - 16 */
#define F_SAVES		0x1b20	/* CFA = sp + 32, SAVREG saved at CFA - 16 */
#define F_SAVESFAR	0x1b40	/* as F_SAVES, slot 0x7000 below the CFA */
#define F_SAVESOTHER	0x1b60	/* as F_SAVES, another register recorded */
#define F_RECLOW	0x1b80	/* CFA = sp + 64, fp and ra paired at its bottom */
#define F_END		0x1ba0

/*
 * The register ld.so's lazy resolver bases its CFA on (rbx), and its arm64
 * counterpart (x19): the lowest callee-saved, which the table compiler
 * records when a frame saves it.
 */
#define SAVREG		(ARM64 ? 19 : 3)
#define SAVREG_OTHER	(ARM64 ? 20 : 12)

enum { R_END, R_A, R_LEAF, R_FP, R_OUTER, R_UNSUP, R_SIG, R_PLT,
       R_FPFAR, R_FPVAL, R_FPREG, R_DEREF, R_DEREFFP, R_REGCFA, R_AREGS, R_RAREG,
       R_BIG32, R_BIG64, R_BIGFP, R_BIGDEREF, R_RESOLV, R_SAVES, R_SAVESFAR,
       R_SAVESOTHER, R_RECLOW, R_NR };

/* Frame sizes past what 16-bit offsets (and a 16-bit span) can hold. */
#define BIG32_CFA	0x8010
#define BIG64_CFA	0x12020
#define BIG64_RA	(-0x12018)
#define BIG64_FP	(-0x11000)
#define BIGFP_CFA	0x10010
#define BIGDEREF_ADD	0x12340

static struct uwprof_rule rules[R_NR];

static void make_rules(void)
{
	struct uwprof_rule *r;

	r = &rules[R_A];
	r->cfa_type = UWPROF_CFA_SP;
	r->cfa_off = 16;
	r->ra_type = UWPROF_REG_AT_CFA;
	r->ra_off = -8;
	/* x86: push %rbx kept fp; arm64: stp x29, x30, [sp, #-16]! */
	r->fp_type = ARM64 ? UWPROF_REG_AT_CFA : UWPROF_REG_SAME;
	r->fp_off = ARM64 ? -16 : 0;

	r = &rules[R_LEAF];
	r->cfa_type = UWPROF_CFA_SP;
	r->cfa_off = ARM64 ? 0 : 8;
	r->ra_type = ARM64 ? UWPROF_REG_SAME : UWPROF_REG_AT_CFA;
	r->ra_off = ARM64 ? 0 : -8;
	r->fp_type = UWPROF_REG_SAME;

	r = &rules[R_FP];
	r->cfa_type = UWPROF_CFA_FP;
	r->cfa_off = 16;
	r->fp_type = UWPROF_REG_AT_CFA;
	r->fp_off = -16;
	r->ra_type = UWPROF_REG_AT_CFA;
	r->ra_off = -8;

	r = &rules[R_OUTER];
	r->cfa_type = UWPROF_CFA_SP;
	r->cfa_off = 16;
	r->ra_type = UWPROF_REG_UNDEF;
	r->fp_type = UWPROF_REG_UNDEF;

	r = &rules[R_UNSUP];
	r->cfa_type = UWPROF_CFA_UNSUPPORTED;
	r->ra_type = UWPROF_REG_UNSUPPORTED;

	r = &rules[R_SIG];
	r->cfa_type = UWPROF_CFA_UNSUPPORTED;
	r->fp_type = UWPROF_REG_UNSUPPORTED;
	r->ra_type = UWPROF_REG_UNSUPPORTED;
	r->flags = UWPROF_RULE_SIGNAL;

	r = &rules[R_FPFAR];
	r->cfa_type = UWPROF_CFA_SP;
	r->cfa_off = 32;
	r->fp_type = UWPROF_REG_AT_CFA;
	r->fp_off = -24;
	r->ra_type = UWPROF_REG_AT_CFA;
	r->ra_off = -8;
	/* arm64: a signed return address (negate_ra_state). */
	r->flags = ARM64 ? UWPROF_RULE_PAC : 0;

	r = &rules[R_FPVAL];
	*r = rules[R_FPFAR];
	r->flags = 0;
	r->cfa_off = 16;
	r->fp_type = UWPROF_REG_VAL_CFA;
	r->fp_off = 16;

	r = &rules[R_FPREG];
	*r = rules[R_FPVAL];
	r->fp_type = UWPROF_REG_IN_REG;
	r->fp_off = 3;

	r = &rules[R_DEREF];
	r->cfa_type = UWPROF_CFA_DEREF_SP;
	r->cfa_off = 24;
	r->cfa_arg = 8;
	r->ra_type = UWPROF_REG_AT_CFA;
	r->ra_off = -8;
	r->fp_type = UWPROF_REG_SAME;

	r = &rules[R_DEREFFP];
	r->cfa_type = UWPROF_CFA_DEREF_FP;
	r->cfa_off = -8;
	r->ra_type = UWPROF_REG_AT_CFA;
	r->ra_off = -8;
	r->fp_type = UWPROF_REG_AT_CFA;
	r->fp_off = -16;

	r = &rules[R_REGCFA];
	r->cfa_type = UWPROF_CFA_REG;
	r->cfa_arg = 3;
	r->cfa_off = 16;
	r->ra_type = UWPROF_REG_AT_CFA;
	r->ra_off = -8;
	r->fp_type = UWPROF_REG_SAME;

	r = &rules[R_AREGS];
	*r = rules[R_A];
	r->flags = UWPROF_RULE_REGS;

	r = &rules[R_RAREG];
	r->cfa_type = UWPROF_CFA_SP;
	r->ra_type = UWPROF_REG_IN_REG;
	r->ra_off = 5;
	r->fp_type = UWPROF_REG_SAME;

	r = &rules[R_BIG32];
	r->cfa_type = UWPROF_CFA_SP;
	r->cfa_off = BIG32_CFA;
	r->fp_type = UWPROF_REG_AT_CFA;
	r->fp_off = -BIG32_CFA;
	r->ra_type = UWPROF_REG_AT_CFA;
	r->ra_off = -BIG32_CFA + 8;

	r = &rules[R_BIG64];
	r->cfa_type = UWPROF_CFA_SP;
	r->cfa_off = BIG64_CFA;
	r->fp_type = UWPROF_REG_AT_CFA;
	r->fp_off = BIG64_FP;
	r->ra_type = UWPROF_REG_AT_CFA;
	r->ra_off = BIG64_RA;

	r = &rules[R_BIGFP];
	r->cfa_type = UWPROF_CFA_FP;
	r->cfa_off = BIGFP_CFA;
	r->fp_type = UWPROF_REG_AT_CFA;
	r->fp_off = -BIGFP_CFA;
	r->ra_type = UWPROF_REG_AT_CFA;
	r->ra_off = -BIGFP_CFA + 8;

	r = &rules[R_BIGDEREF];
	*r = rules[R_DEREF];
	r->cfa_off = 8;
	r->cfa_arg = BIGDEREF_ADD;

	r = &rules[R_RESOLV];
	r->cfa_type = UWPROF_CFA_REG;
	r->cfa_arg = SAVREG;
	r->cfa_off = 16;
	r->ra_type = UWPROF_REG_AT_CFA;
	r->ra_off = -8;
	r->fp_type = UWPROF_REG_SAME;
	r->flags = UWPROF_RULE_REGS;
	r->saved_type = UWPROF_REG_AT_CFA;
	r->saved_reg = SAVREG;
	r->saved_off = -16;

	r = &rules[R_SAVES];
	r->cfa_type = UWPROF_CFA_SP;
	r->cfa_off = 32;
	r->ra_type = UWPROF_REG_AT_CFA;
	r->ra_off = -8;
	r->fp_type = UWPROF_REG_SAME;
	r->flags = UWPROF_RULE_REGS;
	r->saved_type = UWPROF_REG_AT_CFA;
	r->saved_reg = SAVREG;
	r->saved_off = -16;

	r = &rules[R_SAVESFAR];
	*r = rules[R_SAVES];
	r->saved_off = -0x7000;

	r = &rules[R_SAVESOTHER];
	*r = rules[R_SAVES];
	r->saved_reg = SAVREG_OTHER;

	r = &rules[R_PLT];
	if (ARM64) {
		*r = rules[R_A];
	} else {
		r->cfa_type = UWPROF_CFA_PLT;
		r->cfa_off = 8;
		r->cfa_arg = 11;
		r->ra_type = UWPROF_REG_AT_CFA;
		r->ra_off = -8;
		r->fp_type = UWPROF_REG_SAME;
	}

	/* GCC's arm64 prologue: stp x29, x30, [sp, #-64]!; mov x29, sp. */
	r = &rules[R_RECLOW];
	r->cfa_type = UWPROF_CFA_SP;
	r->cfa_off = 64;
	r->fp_type = UWPROF_REG_AT_CFA;
	r->fp_off = -64;
	r->ra_type = UWPROF_REG_AT_CFA;
	r->ra_off = -56;
}

static const struct tb_row rows[] = {
	{ F_A, R_A }, { F_LEAF, R_LEAF }, { F_FP, R_FP }, { F_OUTER, R_OUTER },
	{ F_UNSUP, R_UNSUP }, { F_GAP, R_END }, { F_SIG, R_SIG },
	{ F_PLT, R_PLT }, { F_FPFAR, R_FPFAR }, { F_FPVAL, R_FPVAL },
	{ F_FPREG, R_FPREG }, { F_DEREF, R_DEREF }, { F_DEREFFP, R_DEREFFP },
	{ F_REGCFA, R_REGCFA }, { F_AREGS, R_AREGS }, { F_RAREG, R_RAREG },
	{ F_BIG32, R_BIG32 }, { F_BIG64, R_BIG64 }, { F_BIGFP, R_BIGFP },
	{ F_BIGDEREF, R_BIGDEREF }, { F_RESOLV, R_RESOLV }, { F_SAVES, R_SAVES },
	{ F_SAVESFAR, R_SAVESFAR }, { F_SAVESOTHER, R_SAVESOTHER },
	{ F_RECLOW, R_RECLOW }, { F_END, R_END },
};

/* One test case's world: the stack snapshot, code bytes, maps, env. */
struct world {
	u64 stack[STACK_WORDS];
	u8 code[64];			/* at TEXT + F_GAP: sigreturn by code */
	u8 tramp_page[16];		/* at TRAMPMAP */
	u8 jit_code[8];			/* at JIT + JIT_CALL */
	struct uwprof_unwind_map maps[3];
	struct uwprof_host_env env;
	struct uwprof_regs regs;
	u64 ips[64];
	struct uwprof_unwind_res res;
	u32 nr;
	/* Kept by world_init(): one rule cache across every test. */
	struct uwprof_rule_cache *cache;
	u32 cached_walks;
	u32 cache_diffs;
};

static struct tb_blob blob;
static u64 blob_loads;

static int blob_load(void)
{
	blob_loads++;
	return tb_load(&blob);
}

/* Write a word at a stack address. */
static void put(struct world *w, u64 addr, u64 val)
{
	if (addr < STACK || addr >= STACK + 8 * STACK_WORDS || (addr & 7)) {
		fprintf(stderr, "bad synthetic stack address %#llx\n",
			(unsigned long long)addr);
		exit(2);
	}
	w->stack[(addr - STACK) / 8] = val;
}

static void world_init(struct world *w)
{
	struct uwprof_rule_cache *cache = w->cache;
	u32 walks = w->cached_walks, diffs = w->cache_diffs;

	memset(w, 0, sizeof(*w));
	w->cache = cache;
	w->cached_walks = walks;
	w->cache_diffs = diffs;
	w->maps[0] = (struct uwprof_unwind_map){
		.start = TEXT, .end = TEXT + 0x10000, .bias = 0, .table = &blob.table,
	};
	w->maps[1] = (struct uwprof_unwind_map){
		.start = JIT, .end = JIT + 0x10000, .flags = UWPROF_MAP_NO_TABLE,
	};
	w->maps[2] = (struct uwprof_unwind_map){
		.start = TRAMPMAP, .end = TRAMPMAP + 0x1000, .flags = UWPROF_MAP_NO_TABLE,
	};
	w->env.nr_regions = 4;
	w->env.region[3] = (struct uwprof_host_region){
		.start = JIT + JIT_CALL, .size = sizeof(w->jit_code), .data = w->jit_code,
	};
	w->env.region[2] = (struct uwprof_host_region){
		.start = TRAMPMAP, .size = sizeof(w->tramp_page), .data = w->tramp_page,
	};
	w->env.region[0] = (struct uwprof_host_region){
		.start = STACK, .size = sizeof(w->stack), .data = (const u8 *)w->stack,
	};
	w->env.region[1] = (struct uwprof_host_region){
		.start = TEXT + F_GAP, .size = sizeof(w->code), .data = w->code,
	};
	w->env.user_limit = LIMIT;
	w->env.va_bits = 48;
}

/*
 * A name for the rule cache of each walk's mapping list: tests change maps
 * and tables between walks, and an id names one list (uwprof_unwind_req).
 */
static u64 maps_ids;

static void run(struct world *w, u32 flags, u32 depth)
{
	struct uwprof_unwind_req req = {
		.maps = w->maps, .nr_maps = NR(w->maps), .flags = flags,
		.regs = w->regs, .ips = w->ips, .max_depth = depth, .env = &w->env,
	};

	struct uwprof_unwind_res res;
	u64 ips[NR(w->ips)];
	u32 nr, pass;

	memset(w->ips, 0, sizeof(w->ips));
	w->nr = uwprof_unwind_user(&req, &w->res);

	/*
	 * The rule cache must not change a frame: the same walk through the
	 * cache shared by all tests (cold, or holding rows of older lists and
	 * tables at the same addresses), then warm.
	 */
	req.cache = w->cache;
	req.maps_id = ++maps_ids;
	req.ips = ips;
	for (pass = 0; pass < 2; pass++) {
		memset(ips, 0, sizeof(ips));
		nr = uwprof_unwind_user(&req, &res);
		w->cached_walks++;
		if (nr != w->nr || memcmp(&res, &w->res, sizeof(res)) ||
		    memcmp(ips, w->ips, sizeof(ips)))
			w->cache_diffs++;
	}
}

static const char *stop_name(u32 s)
{
	static const char *const n[] = {
		"OK", "FP_END", "DEPTH", "NO_MAP", "NO_ROW", "UNSUPPORTED",
		"READ", "BAD_SP", "BAD_PC", "NO_PROCESS", "TIME",
	};

	return s < NR(n) ? n[s] : "?";
}

/* Compare frames and stop reason, print what differs. */
static bool expect(struct tap *t, struct world *w, const u64 *ips, u32 nr, u32 stop,
		   const char *desc)
{
	bool ok = w->nr == nr && w->res.nr == nr && w->res.stop == stop;
	u32 i;

	for (i = 0; ok && i < nr; i++)
		ok = w->ips[i] == ips[i];
	if (!tap_ok(t, ok, "%s: %u frames, stop %s", desc, w->nr, stop_name(w->res.stop))) {
		tap_diag("want %u frames, stop %s", nr, stop_name(stop));
		for (i = 0; i < w->nr || i < nr; i++)
			tap_diag("  #%u got %#llx want %#llx", i,
				 (unsigned long long)(i < w->nr ? w->ips[i] : 0),
				 (unsigned long long)(i < nr ? ips[i] : 0));
	}
	return ok;
}

#define S	(STACK + 0x100)

/*
 * The chain LEAF <- A <- FP <- OUTER, leaf interrupted at TEXT + F_LEAF + 0x10.
 * x86_64 stack (S = sp): [S] ra into A; A's frame S+8..S+24 with ra at S+16
 * into FP; FP's record at fp = S+40: [S+40] saved fp, [S+48] ra into OUTER.
 * arm64: lr = ra into A; A's record at S: [S] = fp for FP, [S+8] ra into FP;
 * FP's record at S+32: [S+32] saved fp, [S+40] ra into OUTER.
 */
static void build_chain(struct world *w, u64 ra_a, u64 ra_fp, u64 ra_outer)
{
	w->regs.pc = TEXT + F_LEAF + 0x10;
	w->regs.sp = S;
	if (!ARM64) {
		put(w, S, ra_a);
		put(w, S + 16, ra_fp);
		put(w, S + 40, 0);
		put(w, S + 48, ra_outer);
		w->regs.fp = S + 40;
	} else {
		w->regs.lr = ra_a;
		w->regs.fp = 0x1234;	/* clobbered: A's rule restores it */
		put(w, S, S + 32);
		put(w, S + 8, ra_fp);
		put(w, S + 32, 0);
		put(w, S + 40, ra_outer);
	}
}

static void test_chain(struct tap *t, struct world *w)
{
	u64 want[] = { TEXT + F_LEAF + 0x10, TEXT + F_A + 0x20, TEXT + F_FP + 0x30,
		       TEXT + F_OUTER + 0x40 };

	world_init(w);
	build_chain(w, want[1], want[2], want[3]);
	run(w, 0, 64);
	expect(t, w, want, 4, UWPROF_STOP_OK, "table chain to an undefined ra");
	tap_ok(t, w->res.flags == 0 && w->res.fp_frames == 0 && w->res.unknown_pc == 0,
	       "table chain: no fp fallback, no unknown pc");

	run(w, 0, 4);
	expect(t, w, want, 4, UWPROF_STOP_OK, "max_depth as deep as the stack: whole, not cut");
	run(w, 0, 3);
	expect(t, w, want, 3, UWPROF_STOP_DEPTH, "max_depth one frame short stops with DEPTH");
	tap_ok(t, w->res.flags == 0 && w->res.fp_frames == 0 && w->res.unknown_pc == 0,
	       "the frame looked at past max_depth leaves no trace");
	run(w, 0, 2);
	expect(t, w, want, 2, UWPROF_STOP_DEPTH, "max_depth 2 stops with DEPTH");
	run(w, 0, 1);
	expect(t, w, want, 1, UWPROF_STOP_DEPTH, "max_depth 1 stops with DEPTH");

	/*
	 * Return address at the first byte after A: pc - 1 is A's, so A's rule
	 * must be used (LEAF's differs). Same frames, shifted address.
	 */
	world_init(w);
	want[1] = TEXT + F_LEAF;
	build_chain(w, want[1], want[2], want[3]);
	run(w, 0, 64);
	expect(t, w, want, 4, UWPROF_STOP_OK, "return address at a function end looks up pc - 1");

	/* The interrupted pc itself is looked up exactly. */
	world_init(w);
	want[1] = TEXT + F_A + 0x20;
	build_chain(w, want[1], want[2], want[3]);
	w->regs.pc = TEXT + F_LEAF;
	want[0] = TEXT + F_LEAF;
	run(w, 0, 64);
	expect(t, w, want, 4, UWPROF_STOP_OK, "first frame at a function start looks up pc");
}

/*
 * A table replaced by one with other rows at the same addresses (a new
 * id): walks through the cache, which holds the old table's rows from
 * test_chain, must follow the new rows (run() compares them with the
 * uncached walk).
 */
/*
 * A walk that stops for want of a mapping resumes from the frame it
 * stopped at (res.at, res.at_flags), as the tool does over a sample's
 * stack snapshot once the tables are there: together the two give the
 * whole walk's frames, whether it stopped at the first frame (no mapping
 * at all) or in the middle (the outer half of the object not mapped yet).
 */
static void test_resume(struct tap *t, struct world *w)
{
	u64 want[] = { TEXT + F_LEAF + 0x10, TEXT + F_A + 0x20, TEXT + F_FP + 0x30,
		       TEXT + F_OUTER + 0x40 };
	struct uwprof_unwind_res res, res2;
	struct uwprof_unwind_map part;
	u32 cut, nr, nr2, i;
	bool ok;

	for (cut = 0; cut < 2; cut++) {
		world_init(w);
		build_chain(w, want[1], want[2], want[3]);
		part = w->maps[0];
		part.end = TEXT + F_FP - 0x80;
		{
			struct uwprof_unwind_req req = {
				.maps = &part, .nr_maps = cut, .regs = w->regs,
				.ips = w->ips, .max_depth = 64, .env = &w->env,
			};

			nr = uwprof_unwind_user(&req, &res);
		}
		tap_ok(t, res.stop == UWPROF_STOP_NO_MAP && nr == (cut ? 3 : 1) &&
		       res.at.pc == w->ips[nr - 1] && res.unknown_pc == res.at.pc &&
		       !!(res.at_flags & UWPROF_SNAP_CALLER) == !!cut,
		       "resume: walk without %s stops NO_MAP after %u frames (flags %#x)",
		       cut ? "the outer half" : "mappings", nr, res.at_flags);
		{
			struct uwprof_unwind_req req = {
				.maps = w->maps, .nr_maps = NR(w->maps),
				.regs = res.at, .at_flags = res.at_flags,
				.ips = w->ips + nr - 1, .max_depth = 64,
				.env = &w->env,
			};

			nr2 = uwprof_unwind_user(&req, &res2);
		}
		ok = nr - 1 + nr2 == NR(want) && res2.stop == UWPROF_STOP_OK &&
		     !res2.fp_frames;
		for (i = 0; ok && i < NR(want); i++)
			ok = w->ips[i] == want[i];
		tap_ok(t, ok, "resume: from frame %u the chain completes (%u + %u frames, stop %s)",
		       nr - 1, nr - 1, nr2, stop_name(res2.stop));
	}
}

static void test_cache_replace(struct tap *t, struct world *w)
{
	u64 want[] = { TEXT + F_LEAF + 0x10, TEXT + F_A + 0x20 };
	u32 diffs = w->cache_diffs;
	int err;

	/* A's frame twice as big: its return address slot holds 0. */
	rules[R_A].cfa_off = 32;
	tb_free(&blob);
	tb_build(&blob, TEXT, rows, NR(rows), rules, R_NR);
	err = blob_load();
	if (!tap_ok(t, !err, "replaced table loads (%d)", err))
		exit(1);
	world_init(w);
	build_chain(w, want[1], TEXT + F_FP + 0x30, TEXT + F_OUTER + 0x40);
	run(w, 0, 64);
	expect(t, w, want, 2, UWPROF_STOP_OK, "replaced table: A's new frame size ends the chain");
	tap_ok(t, w->cache_diffs == diffs,
	       "replaced table: walks through the cache follow the new rows");

	make_rules();
	tb_free(&blob);
	tb_build(&blob, TEXT, rows, NR(rows), rules, R_NR);
	if (blob_load())
		exit(1);
}

/* A walk from F_RAREG, whose return address is in register 5, holding ra. */
static void run_ra_in_reg5(struct world *w, u64 *gpr, u64 ra)
{
	world_init(w);
	gpr[5] = ra;
	w->env.gpr = gpr;
	w->env.nr_gpr = 32;
	w->regs.pc = TEXT + F_RAREG + 2;
	w->regs.sp = S;
	run(w, 0, 64);
}

static void test_stops(struct tap *t, struct world *w)
{
	u64 want[8];

	/* pc 0 and pc above the limit: nothing to report. */
	world_init(w);
	run(w, 0, 64);
	tap_ok(t, w->nr == 0 && w->res.stop == UWPROF_STOP_BAD_PC, "pc 0: 0 frames, BAD_PC");
	w->regs.pc = LIMIT;
	run(w, 0, 64);
	tap_ok(t, w->nr == 0 && w->res.stop == UWPROF_STOP_BAD_PC, "pc at the limit: BAD_PC");

	/* pc in no mapping: the pc is reported for an UNKNOWN_MAP record. */
	world_init(w);
	w->regs.pc = 0x500000;
	w->regs.sp = S;
	run(w, 0, 64);
	want[0] = 0x500000;
	expect(t, w, want, 1, UWPROF_STOP_NO_MAP, "first pc in no mapping");
	tap_ok(t, w->res.unknown_pc == 0x500000, "NO_MAP reports the pc");

	/* A return address into no mapping, after a good frame. */
	world_init(w);
	build_chain(w, 0x500123, 0, 0);
	run(w, 0, 64);
	want[0] = TEXT + F_LEAF + 0x10;
	want[1] = 0x500123;
	expect(t, w, want, 2, UWPROF_STOP_NO_MAP, "return address in no mapping");
	tap_ok(t, w->res.unknown_pc == 0x500123, "NO_MAP reports the return address");

	/* Return address above user space. */
	world_init(w);
	build_chain(w, 0xffffffff81000000ULL, 0, 0);
	if (ARM64)
		w->env.va_bits = 64;	/* no strip: the address stays kernel-like */
	run(w, 0, 64);
	expect(t, w, want, 1, UWPROF_STOP_BAD_PC, "kernel return address: BAD_PC");

	/* sp outside the snapshot: the read fails. */
	world_init(w);
	build_chain(w, TEXT + F_A + 0x20, TEXT + F_FP + 0x30, TEXT + F_OUTER);
	w->regs.pc = TEXT + F_A + 0x20;
	w->regs.sp = STACK - 0x1000;
	run(w, 0, 64);
	want[0] = w->regs.pc;
	expect(t, w, want, 1, UWPROF_STOP_READ, "unreadable stack: READ");

	/* sp above the limit at the start. */
	world_init(w);
	w->regs.pc = TEXT + F_A;
	w->regs.sp = LIMIT + 0x100;
	run(w, 0, 64);
	want[0] = TEXT + F_A;
	expect(t, w, want, 1, UWPROF_STOP_BAD_SP, "sp above the limit: BAD_SP");

	/* CFA from fp below sp. */
	world_init(w);
	w->regs.pc = TEXT + F_FP + 4;
	w->regs.sp = S + 0x100;
	w->regs.fp = S;
	run(w, 0, 64);
	want[0] = TEXT + F_FP + 4;
	expect(t, w, want, 1, UWPROF_STOP_BAD_SP, "CFA below sp: BAD_SP");

	/* A loop: the return address leads back to the same frame shape. */
	world_init(w);
	w->regs.pc = TEXT + F_A + 8;
	w->regs.sp = S;
	{
		u32 i;

		for (i = 0; i < 40; i++) {
			put(w, S + 16 * i + 8, TEXT + F_A + 8);
			put(w, S + 16 * i, S + 16 * i + 16);
		}
	}
	run(w, 0, 30);
	tap_ok(t, w->nr == 30 && w->res.stop == UWPROF_STOP_DEPTH,
	       "repeating frames end at max_depth (%u, %s)", w->nr, stop_name(w->res.stop));

	/* UNSUPPORTED CFA with and without fp fallback. */
	world_init(w);
	w->regs.pc = TEXT + F_UNSUP + 4;
	w->regs.sp = S;
	w->regs.fp = S + 32;
	put(w, S + 32, 0);
	put(w, S + 40, TEXT + F_OUTER + 4);
	run(w, UWPROF_UNWIND_NO_FP_FALLBACK, 64);
	want[0] = TEXT + F_UNSUP + 4;
	expect(t, w, want, 1, UWPROF_STOP_UNSUPPORTED, "unsupported CFA, tables only: UNSUPPORTED");
	/* fp need not be a frame pointer where the CFI says otherwise. */
	run(w, 0, 64);
	expect(t, w, want, 1, UWPROF_STOP_UNSUPPORTED,
	       "unsupported CFA: UNSUPPORTED, no fp fallback");
	tap_ok(t, !(w->res.flags & UWPROF_SAMPLE_FP_USED) && !w->res.fp_frames,
	       "unsupported CFA: FP_USED clear, no fp frame");

	/* CFA from an sp saved on the stack, by sp and by fp. */
	world_init(w);
	w->regs.pc = TEXT + F_DEREF + 4;
	w->regs.sp = S;
	put(w, S + 24, S + 0x100 - 8);
	put(w, S + 0x100 - 8, TEXT + F_OUTER + 4);
	run(w, 0, 64);
	want[0] = TEXT + F_DEREF + 4;
	want[1] = TEXT + F_OUTER + 4;
	expect(t, w, want, 2, UWPROF_STOP_OK, "CFA = *(sp + 24) + 8");
	put(w, S + 24, S - 0x100);
	run(w, 0, 64);
	expect(t, w, want, 1, UWPROF_STOP_BAD_SP, "CFA = *(sp + 24) + 8 below sp: BAD_SP");
	put(w, S + 24, LIMIT);
	run(w, 0, 64);
	expect(t, w, want, 1, UWPROF_STOP_BAD_SP, "CFA = *(sp + 24) + 8 above user space: BAD_SP");

	world_init(w);
	w->regs.pc = TEXT + F_DEREFFP + 4;
	w->regs.sp = S;
	w->regs.fp = S + 64;
	put(w, S + 56, S + 0x200);
	put(w, S + 0x200 - 16, S + 0x300);
	put(w, S + 0x200 - 8, TEXT + F_OUTER + 4);
	run(w, 0, 64);
	want[0] = TEXT + F_DEREFFP + 4;
	expect(t, w, want, 2, UWPROF_STOP_OK, "CFA = *(fp - 8)");
	w->regs.fp = STACK - 0x1000;
	run(w, 0, 64);
	expect(t, w, want, 1, UWPROF_STOP_READ, "CFA = *(fp - 8) outside the stack: READ");

	/* CFA from another register: the interrupted frame's only. */
	{
		u64 gpr[32] = { 0 };

		world_init(w);
		gpr[3] = S + 0x40;
		w->env.gpr = gpr;
		w->env.nr_gpr = 32;
		w->regs.pc = TEXT + F_REGCFA + 4;
		w->regs.sp = S;
		put(w, S + 0x48, TEXT + F_OUTER + 4);
		run(w, 0, 64);
		want[0] = TEXT + F_REGCFA + 4;
		want[1] = TEXT + F_OUTER + 4;
		expect(t, w, want, 2, UWPROF_STOP_OK,
		       "CFA = register 3 + 16 in the interrupted frame");
		w->env.gpr = NULL;
		run(w, 0, 64);
		expect(t, w, want, 1, UWPROF_STOP_UNSUPPORTED,
		       "CFA from a register not known: UNSUPPORTED");
		/*
		 * The same code as a caller: register 3 keeps its value
		 * through a callee that keeps no register elsewhere, not
		 * through one that does.
		 */
		w->env.gpr = gpr;
		w->regs.pc = TEXT + F_A + 4;
		w->regs.fp = 0;
		gpr[3] = S + 0x40;
		put(w, S + 8, TEXT + F_REGCFA + 9);
		put(w, S, 0);
		run(w, 0, 64);
		want[0] = TEXT + F_A + 4;
		want[1] = TEXT + F_REGCFA + 9;
		want[2] = TEXT + F_OUTER + 4;
		expect(t, w, want, 3, UWPROF_STOP_OK,
		       "CFA from a register in a caller, callee keeps no register: OK");
		w->regs.pc = TEXT + F_AREGS + 4;
		run(w, 0, 64);
		want[0] = TEXT + F_AREGS + 4;
		expect(t, w, want, 2, UWPROF_STOP_UNSUPPORTED,
		       "CFA from a register in a caller, callee keeps one: UNSUPPORTED");

		/* The return address in another register, sp unchanged. */
		run_ra_in_reg5(w, gpr, TEXT + F_OUTER + 4);
		want[0] = TEXT + F_RAREG + 2;
		want[1] = TEXT + F_OUTER + 4;
		expect(t, w, want, 2, UWPROF_STOP_OK,
		       "return address in register 5 of the interrupted frame");
		w->env.gpr = NULL;
		run(w, 0, 64);
		expect(t, w, want, 1, UWPROF_STOP_UNSUPPORTED,
		       "return address in a register not known: UNSUPPORTED");

		/*
		 * A register that names the frame's own code again, sp
		 * unchanged: it holds the return address once, then is not
		 * known (a walk would only repeat the frame).
		 */
		run_ra_in_reg5(w, gpr, TEXT + F_RAREG + 4);
		want[1] = TEXT + F_RAREG + 4;
		expect(t, w, want, 2, UWPROF_STOP_UNSUPPORTED,
		       "return address in a register twice at one sp: UNSUPPORTED");
	}

	/*
	 * arm64, Go's stack check: a callee entered from it (CFA = sp, ra in
	 * lr) returns into the check's block, whose caller's return address
	 * is in a register, at the same sp.
	 */
	if (ARM64) {
		u64 gpr[32] = { 0 };

		world_init(w);
		gpr[5] = TEXT + F_OUTER + 4;
		w->env.gpr = gpr;
		w->env.nr_gpr = 32;
		w->regs.pc = TEXT + F_LEAF;
		w->regs.sp = S;
		w->regs.lr = TEXT + F_RAREG + 4;
		run(w, 0, 64);
		want[0] = TEXT + F_LEAF;
		want[1] = TEXT + F_RAREG + 4;
		want[2] = TEXT + F_OUTER + 4;
		expect(t, w, want, 3, UWPROF_STOP_OK,
		       "ra in lr, then in register 5, at one sp (Go's morestack call)");
	}

	/* Undefined ra in the very first frame. */
	world_init(w);
	w->regs.pc = TEXT + F_OUTER + 4;	/* ra undefined: ends at once */
	w->regs.sp = S;
	run(w, 0, 64);
	want[0] = w->regs.pc;
	expect(t, w, want, 1, UWPROF_STOP_OK, "undefined ra in the first frame: OK");
}

/*
 * A CFA based on a register a callee saved: ld.so's lazy resolver
 * (CFA = rbx + 16, arm64 x19) interrupted in _dl_fixup, which pushed rbx.
 * S: the callee's frame, CFA S+32, SAVREG's caller value at S+16, ra at
 * S+24; the resolver's CFA is that value + 16 = S+0x70, its own saved
 * SAVREG at S+0x60 and ra into OUTER at S+0x68. The interrupted SAVREG
 * is wrong on purpose: only the saved one leads on.
 */
static void build_resolver(struct world *w, u64 *gpr, u32 callee)
{
	u64 rb = S + 0x60;

	world_init(w);
	gpr[SAVREG] = S + 0x1000;
	w->env.gpr = gpr;
	w->env.nr_gpr = 32;
	w->regs.pc = TEXT + callee + 4;
	w->regs.sp = S;
	put(w, S + 16, rb);
	put(w, S + 24, TEXT + F_RESOLV + 9);
	put(w, rb, 0x5151);
	put(w, rb + 8, TEXT + F_OUTER + 4);
}

/*
 * A deadline already past stops the walk at the first look at the clock:
 * at 8 frames of the general step, or after 64 of the cached loop; the
 * frames kept are the walk's own. One far ahead changes nothing.
 */
static void test_deadline(struct tap *t, struct world *w)
{
	const u32 steps = UWPROF_WALK_CHECK_STEPS;
	struct uwprof_unwind_req req;
	struct uwprof_unwind_res res;
	u64 ref[150], ips[150];
	u32 i, nr;

	world_init(w);
	w->regs.pc = TEXT + F_A + 8;
	w->regs.sp = S;
	for (i = 0; i < 200; i++) {
		put(w, S + 16 * i + 8, TEXT + F_A + 8);
		put(w, S + 16 * i, S + 16 * i + 16);
	}
	req = (struct uwprof_unwind_req){
		.maps = w->maps, .nr_maps = NR(w->maps), .regs = w->regs,
		.ips = ref, .max_depth = NR(ref), .env = &w->env,
	};
	nr = uwprof_unwind_user(&req, &res);
	tap_ok(t, nr == NR(ref) && res.stop == UWPROF_STOP_DEPTH,
	       "no deadline: %u frames, %s", nr, stop_name(res.stop));

	req.ips = ips;
	req.deadline = 1;
	nr = uwprof_unwind_user(&req, &res);
	tap_ok(t, nr == steps && res.stop == UWPROF_STOP_TIME &&
	       !memcmp(ips, ref, nr * sizeof(u64)),
	       "deadline past: %u frames by the general step, then TIME (%u, %s)",
	       steps, nr, stop_name(res.stop));

	req.cache = w->cache;
	req.maps_id = ++maps_ids;
	uwprof_unwind_user(&req, &res);
	nr = uwprof_unwind_user(&req, &res);
	tap_ok(t, nr == 1 + UWPROF_WALK_CHECK_CACHED && res.stop == UWPROF_STOP_TIME &&
	       !memcmp(ips, ref, nr * sizeof(u64)),
	       "deadline past, rows cached: %u frames, then TIME (%u, %s)",
	       UWPROF_WALK_CHECK_CACHED, nr, stop_name(res.stop));

	req.deadline = uwprof_host_now() + 60ULL * 1000000000ULL;
	nr = uwprof_unwind_user(&req, &res);
	tap_ok(t, nr == NR(ref) && res.stop == UWPROF_STOP_DEPTH &&
	       !memcmp(ips, ref, nr * sizeof(u64)),
	       "deadline ahead: the walk is whole (%u, %s)", nr,
	       stop_name(res.stop));
}

static void test_saved_reg(struct tap *t, struct world *w)
{
	u64 want[4], gpr[32] = { 0 };

	build_resolver(w, gpr, F_SAVES);
	run(w, 0, 64);
	want[0] = TEXT + F_SAVES + 4;
	want[1] = TEXT + F_RESOLV + 9;
	want[2] = TEXT + F_OUTER + 4;
	expect(t, w, want, 3, UWPROF_STOP_OK,
	       "CFA from the register the callee saved: to the root");

	/* Not through a frame that may have changed it, or without it. */
	build_resolver(w, gpr, F_SAVESFAR);
	run(w, 0, 64);
	want[0] = TEXT + F_SAVESFAR + 4;
	expect(t, w, want, 2, UWPROF_STOP_UNSUPPORTED,
	       "saved register's slot unreadable: UNSUPPORTED");
	build_resolver(w, gpr, F_SAVESOTHER);
	run(w, 0, 64);
	want[0] = TEXT + F_SAVESOTHER + 4;
	expect(t, w, want, 2, UWPROF_STOP_UNSUPPORTED,
	       "callee saved another register: UNSUPPORTED");
	build_resolver(w, gpr, F_AREGS);
	put(w, S + 8, TEXT + F_RESOLV + 9);
	run(w, 0, 64);
	want[0] = TEXT + F_AREGS + 4;
	expect(t, w, want, 2, UWPROF_STOP_UNSUPPORTED,
	       "callee keeps registers, records none: UNSUPPORTED");

	/*
	 * A frame keeping no register, between the one that saved it and
	 * the resolver, leaves the recovered value alone: A at S - 16 (its
	 * CFA is S, the callee's sp, ra at S - 8; arm64 fp at S - 16).
	 */
	build_resolver(w, gpr, F_SAVES);
	w->regs.pc = TEXT + F_A + 4;
	w->regs.sp = S - 16;
	put(w, S - 16, 0);
	put(w, S - 8, TEXT + F_SAVES + 0x11);
	run(w, 0, 64);
	want[0] = TEXT + F_A + 4;
	want[1] = TEXT + F_SAVES + 0x11;
	want[2] = TEXT + F_RESOLV + 9;
	want[3] = TEXT + F_OUTER + 4;
	expect(t, w, want, 4, UWPROF_STOP_OK,
	       "saved register kept through a frame that keeps none");
	/*
	 * ... but not through one that keeps some without saying which:
	 * SAVES (CFA S+32) <- AREGS (CFA S+48, ra at S+40) <- the resolver,
	 * whose CFA would be S+0x70 with the value SAVES saved.
	 */
	build_resolver(w, gpr, F_SAVES);
	put(w, S + 24, TEXT + F_AREGS + 5);
	put(w, S + 32, 0);
	put(w, S + 40, TEXT + F_RESOLV + 9);
	run(w, 0, 64);
	want[0] = TEXT + F_SAVES + 4;
	want[1] = TEXT + F_AREGS + 5;
	want[2] = TEXT + F_RESOLV + 9;
	expect(t, w, want, 3, UWPROF_STOP_UNSUPPORTED,
	       "saved register lost through a frame keeping others");
}

/*
 * Frames past the first, where cached rows take the walk's fast loop: one
 * of each kind it takes (CFA from sp with ra alone, with fp saved apart,
 * CFA from fp with the pair), and the frames it must hand back to the
 * general step, which then reports the same as an uncached walk (run()
 * compares them). x86_64 and arm64 share the layout from S + 8 up:
 * A (CFA S+16, ra at S+8; arm64 fp at S) <- FPFAR (CFA S+48, fp at S+24,
 * ra at S+40) <- FP (CFA fp+16, record at fp = S+64) <- A (CFA S+96, ra at
 * S+88; arm64 fp at S+80) <- OUTER.
 */
static void build_kinds(struct world *w, const u64 *want)
{
	w->regs.pc = want[0];
	w->regs.sp = S;
	w->regs.fp = 0x1234;
	put(w, S, 0x5678);
	put(w, S + 8, want[1]);
	put(w, S + 24, S + 64);
	/* arm64: FPFAR's ra is signed. */
	put(w, S + 40, want[2] | (ARM64 ? 0x2cULL << 48 : 0));
	put(w, S + 64, S + 200);
	put(w, S + 72, want[3]);
	put(w, S + 80, S + 300);
	put(w, S + 88, want[4]);
}

/*
 * The first pc is A + 0x18, not + 0x10, so A's row is not in cache slot 0:
 * the hint for the second frame then has a context of its own, not the one
 * every walk starts from, and the fast loop finds FPFAR's row by the hint.
 */
static void test_fast_kinds(struct tap *t, struct world *w)
{
	u64 want[] = { TEXT + F_A + 0x18, TEXT + F_FPFAR + 0x10, TEXT + F_FP + 0x10,
		       TEXT + F_A + 0x30, TEXT + F_OUTER + 4 };
	u32 walks = w->cached_walks;

	world_init(w);
	build_kinds(w, want);
	run(w, 0, 64);
	expect(t, w, want, 5, UWPROF_STOP_OK,
	       "cached kinds: CFA from sp with fp kept and saved apart, CFA from fp");
	run(w, 0, 3);
	expect(t, w, want, 3, UWPROF_STOP_DEPTH, "cached kinds: max_depth inside the fast frames");
	run(w, 0, 5);
	expect(t, w, want, 5, UWPROF_STOP_OK, "cached kinds: max_depth as deep as the stack");

	/*
	 * A mapping that ends before its table's last rows: rows are cached
	 * for the addresses of the list's mappings only.
	 */
	world_init(w);
	build_kinds(w, want);
	w->maps[0].end = TEXT + F_FPREG;
	run(w, 0, 64);
	run(w, 0, 64);
	expect(t, w, want, 5, UWPROF_STOP_OK, "cached kinds: a mapping shorter than its table");
	/* ... and a return address past its end, whose row another list cached: NO_MAP. */
	w->maps[0].end = TEXT + F_FPFAR;
	run(w, 0, 64);
	expect(t, w, want, 2, UWPROF_STOP_NO_MAP,
	       "cached kinds: a cached row past the end of a shorter mapping");

	/*
	 * CFA from fp only 8 above sp: FP's record would start below sp.
	 * The general step reads it anyway: fp, then ra 0 at S+48 (x86_64),
	 * or the CFA is misaligned (arm64).
	 */
	world_init(w);
	build_kinds(w, want);
	put(w, S + 24, S + 40);
	put(w, S + 48, 0);
	run(w, 0, 64);
	expect(t, w, want, 3, ARM64 ? UWPROF_STOP_BAD_SP : UWPROF_STOP_OK,
	       "cached kinds: CFA from fp with its record below sp");

	/* fp restored near the user limit: CFA from it is above. */
	world_init(w);
	build_kinds(w, want);
	put(w, S + 24, LIMIT - 8);
	run(w, 0, 64);
	expect(t, w, want, 3, UWPROF_STOP_BAD_SP, "cached kinds: CFA from fp above the limit");

	/* A return address of 0 and one above user space. */
	world_init(w);
	build_kinds(w, want);
	put(w, S + 72, 0);
	run(w, 0, 64);
	expect(t, w, want, 3, UWPROF_STOP_OK, "cached kinds: return address 0 ends the stack");
	put(w, S + 72, LIMIT + 0x1000);
	if (ARM64) {
		/* No strip: the address stays kernel-like; FPFAR's ra unsigned. */
		w->env.va_bits = 64;
		put(w, S + 40, want[2]);
	}
	run(w, 0, 64);
	expect(t, w, want, 3, UWPROF_STOP_BAD_PC, "cached kinds: kernel return address: BAD_PC");

	/* The snapshot ends inside the second A frame: READ. */
	world_init(w);
	want[1] = TEXT + F_A + 0x30;
	w->regs.pc = want[0];
	w->regs.sp = STACK + 8 * STACK_WORDS - 16;
	put(w, w->regs.sp + 8, want[1]);
	run(w, 0, 64);
	expect(t, w, want, 2, UWPROF_STOP_READ, "cached kinds: stack read past the snapshot: READ");

	tap_ok(t, w->cached_walks - walks == 22, "cached kinds: %u walks through the cache",
	       w->cached_walks - walks);
}

/* The rule cache entry of the last walk's row at TEXT + off, or NULL. */
static const struct uwprof_rule_cache_ent *cache_ent(const struct world *w,
						      u64 off)
{
	u32 i;

	for (i = 0; i < NR(w->cache->ent); i++)
		if (w->cache->ent[i].maps_id == maps_ids &&
		    w->cache->ent[i].at == TEXT + off)
			return &w->cache->ent[i];
	return NULL;
}

/*
 * Frames whose fp and ra are saved more than 32 KiB and 64 KiB below the
 * CFA (aarch64 glibc has a 33392-byte one), and a CFA from a saved sp
 * plus more than 8 or 16 bits: BIG32 <- BIG64 <- BIGFP <- OUTER, then
 * BIGDEREF <- OUTER. run() walks each without the rule cache and twice
 * through it; the cached rows must be of a kind the fast loop takes,
 * with the whole distance below the CFA it reads.
 */
static void test_big_frames(struct tap *t, struct world *w)
{
	u64 want[] = { TEXT + F_BIG32 + 0x10, TEXT + F_BIG64 + 0x10,
		       TEXT + F_BIGFP + 0x10, TEXT + F_OUTER + 4 };
	const struct uwprof_rule_cache_ent *e32, *e64, *efp;
	u64 sp1 = S + BIG32_CFA, sp2 = sp1 + BIG64_CFA;
	u64 fp2 = sp2 + 0x20;

	world_init(w);
	w->regs.pc = want[0];
	w->regs.sp = S;
	w->regs.fp = 0x1234;
	put(w, S, 0x5678);				/* BIG32's caller's fp */
	put(w, S + 8, want[1]);
	put(w, sp2 + BIG64_RA, want[2]);
	put(w, sp2 + BIG64_FP, fp2);
	put(w, fp2, 0);
	put(w, fp2 + 8, want[3]);
	run(w, 0, 64);
	expect(t, w, want, 4, UWPROF_STOP_OK,
	       "frames of 32 KiB, 72 KiB, and CFA = fp + 64 KiB + 16");
	tap_ok(t, w->res.fp_frames == 0 && !(w->res.flags & UWPROF_SAMPLE_FP_USED),
	       "big frames: every frame from its row");
	run(w, 0, 3);
	expect(t, w, want, 3, UWPROF_STOP_DEPTH, "big frames: max_depth inside them");

	e32 = cache_ent(w, F_BIG32 + 0x10);
	e64 = cache_ent(w, F_BIG64 + 0x10 - 1);
	efp = cache_ent(w, F_BIGFP + 0x10 - 1);
	tap_ok(t, e32 && e32->kind && e32->span == BIG32_CFA &&
	       e64 && e64->kind && e64->span == -BIG64_RA &&
	       efp && efp->kind && efp->span == BIGFP_CFA,
	       "big frames: cached as fast rows, spans %#x %#x %#x",
	       e32 ? e32->span : 0, e64 ? e64->span : 0, efp ? efp->span : 0);

	/*
	 * BIGFP's CFA only 0x1000 above sp, its record far below: the fast
	 * loop leaves the frame to the general step, which reads it anyway.
	 */
	put(w, sp2 + BIG64_FP, sp2 - BIGFP_CFA + 0x1000);
	put(w, sp2 - BIGFP_CFA + 0x1000, 0);
	put(w, sp2 - BIGFP_CFA + 0x1008, want[3]);
	run(w, 0, 64);
	expect(t, w, want, 4, UWPROF_STOP_OK,
	       "big frames: CFA from fp with its record below sp");

	world_init(w);
	w->regs.pc = TEXT + F_BIGDEREF + 4;
	w->regs.sp = S;
	put(w, S + 8, S + 0x100);
	put(w, S + 0x100 + BIGDEREF_ADD - 8, TEXT + F_OUTER + 4);
	run(w, 0, 64);
	want[0] = TEXT + F_BIGDEREF + 4;
	want[1] = TEXT + F_OUTER + 4;
	expect(t, w, want, 2, UWPROF_STOP_OK, "CFA = *(sp + 8) + 0x12340");
}

/* How the caller's fp is recovered when it is not next to ra. */
static void test_fp_rules(struct tap *t, struct world *w)
{
	u64 want[4] = { 0, TEXT + F_FP + 0x10, TEXT + F_OUTER + 4 };

	world_init(w);
	w->regs.pc = want[0] = TEXT + F_FPFAR + 4;
	w->regs.sp = S;
	put(w, S + 8, S + 64);
	put(w, S + 24, TEXT + F_FP + 0x10);
	put(w, S + 72, TEXT + F_OUTER + 4);
	run(w, 0, 64);
	expect(t, w, want, 3, UWPROF_STOP_OK, "fp saved apart from ra, then CFA from it");

	world_init(w);
	w->regs.pc = want[0] = TEXT + F_FPVAL + 4;
	w->regs.sp = S;
	put(w, S + 8, TEXT + F_FP + 0x10);
	put(w, S + 40, TEXT + F_OUTER + 4);
	run(w, 0, 64);
	expect(t, w, want, 3, UWPROF_STOP_OK, "fp as CFA + 16 (val_offset), then CFA from it");

	world_init(w);
	w->regs.pc = want[0] = TEXT + F_FPREG + 4;
	w->regs.sp = S;
	put(w, S + 8, TEXT + F_FP + 0x10);
	run(w, 0, 64);
	expect(t, w, want, 2, UWPROF_STOP_UNSUPPORTED,
	       "fp in another register: CFA from fp is UNSUPPORTED");

	/* ra readable, the separate fp slot not: READ. */
	world_init(w);
	w->regs.pc = want[0] = TEXT + F_FPFAR + 4;
	w->regs.sp = STACK - 16;
	put(w, STACK + 8, TEXT + F_FP + 0x10);
	run(w, 0, 64);
	expect(t, w, want, 1, UWPROF_STOP_READ, "unreadable fp slot: READ");
}

static void test_fp(struct tap *t, struct world *w)
{
	u64 want[8];

	/*
	 * Gap (END row) then JIT (no table) then table frames:
	 * fp records at S+16 and S+48.
	 */
	world_init(w);
	w->regs.pc = TEXT + F_GAP + 0x30;	/* past the code[] region's pattern */
	w->regs.sp = S;
	w->regs.fp = S + 16;
	put(w, S + 16, S + 48);
	put(w, S + 24, JIT + 0x100);
	put(w, S + 48, 0);
	put(w, S + 56, TEXT + F_OUTER + 8);
	run(w, 0, 64);
	want[0] = TEXT + F_GAP + 0x30;
	want[1] = JIT + 0x100;
	want[2] = TEXT + F_OUTER + 8;
	expect(t, w, want, 3, UWPROF_STOP_OK, "END row and no-table mapping walk by frame pointers");
	tap_ok(t, w->res.fp_frames == 2 && (w->res.flags & UWPROF_SAMPLE_FP_USED),
	       "two fp frames counted (%u)", w->res.fp_frames);

	/* The frame found past max_depth by fp is not kept, so not counted. */
	run(w, 0, 1);
	expect(t, w, want, 1, UWPROF_STOP_DEPTH, "fp frame past max_depth: DEPTH");
	tap_ok(t, w->res.fp_frames == 0 && !(w->res.flags & UWPROF_SAMPLE_FP_USED),
	       "fp frame past max_depth: not counted");
	run(w, 0, 3);
	expect(t, w, want, 3, UWPROF_STOP_OK, "fp frames, max_depth as deep as the stack");
	tap_ok(t, w->res.fp_frames == 2, "fp frames within max_depth counted (%u)",
	       w->res.fp_frames);

	run(w, UWPROF_UNWIND_NO_FP_FALLBACK, 64);
	expect(t, w, want, 1, UWPROF_STOP_NO_ROW, "END row, tables only: NO_ROW");
	tap_ok(t, w->res.fp_frames == 0 && !(w->res.flags & UWPROF_SAMPLE_FP_USED),
	       "tables only: no fp frame counted");

	/* fp chain ending at a zero return address. */
	world_init(w);
	w->regs.pc = JIT + 0x10;
	w->regs.sp = S;
	w->regs.fp = S + 16;
	put(w, S + 16, S + 48);
	put(w, S + 24, JIT + 0x200);
	run(w, 0, 64);
	want[0] = JIT + 0x10;
	want[1] = JIT + 0x200;
	expect(t, w, want, 2, UWPROF_STOP_FP_END, "fp chain to a zero record: FP_END");

	/* fp zero: nothing to follow. */
	world_init(w);
	w->regs.pc = JIT + 0x10;
	w->regs.sp = S;
	run(w, 0, 64);
	expect(t, w, want, 1, UWPROF_STOP_FP_END, "fp zero: FP_END");

	/* Misaligned, below sp, and too far above sp: rejected. */
	world_init(w);
	w->regs.pc = JIT + 0x10;
	w->regs.sp = S;
	w->regs.fp = S + 20;
	run(w, 0, 64);
	expect(t, w, want, 1, UWPROF_STOP_BAD_SP, "misaligned fp: BAD_SP");
	w->regs.fp = S - 16;
	run(w, 0, 64);
	expect(t, w, want, 1, UWPROF_STOP_BAD_SP, "fp below sp: BAD_SP");
	w->regs.fp = S + (64ULL << 20);
	run(w, 0, 64);
	expect(t, w, want, 1, UWPROF_STOP_BAD_SP, "fp 64 MiB above sp: BAD_SP");

	/* fp record past the readable stack, and at the very top of user space. */
	world_init(w);
	w->regs.pc = JIT + 0x10;
	w->regs.sp = S;
	w->regs.fp = STACK + 8 * STACK_WORDS;
	run(w, 0, 64);
	expect(t, w, want, 1, UWPROF_STOP_READ, "fp record not readable: READ");
	w->regs.sp = LIMIT - 0x100;
	w->regs.fp = LIMIT - 8;
	run(w, 0, 64);
	expect(t, w, want, 1, UWPROF_STOP_READ, "fp record crossing the user limit: READ");

	/* An fp record pointing to itself does not loop: sp must rise. */
	world_init(w);
	w->regs.pc = JIT + 0x10;
	w->regs.sp = S + 32;
	w->regs.fp = S + 32;
	put(w, S + 32, S);	/* next fp below the new sp */
	put(w, S + 40, JIT + 0x20);
	run(w, 0, 64);
	want[1] = JIT + 0x20;
	expect(t, w, want, 2, UWPROF_STOP_BAD_SP, "fp chain going down: BAD_SP");
}

/* The sigreturn trampoline's code, 0x10 into the gap (an END row). */
#define TRAMP_CODE	(TEXT + F_GAP + 0x10)

static void put_tramp_code(struct world *w)
{
	static const u8 x86[] = { 0x48, 0xc7, 0xc0, 0x0f, 0, 0, 0, 0x0f, 0x05 };
	static const u8 a64[] = { 0x68, 0x11, 0x80, 0xd2, 0x01, 0, 0, 0xd4 };

	if (ARM64) {
		memcpy(w->code + 0x10, a64, sizeof(a64));
		memcpy(w->tramp_page, a64, sizeof(a64));
	} else {
		memcpy(w->code + 0x10, x86, sizeof(x86));
		memcpy(w->tramp_page, x86, sizeof(x86));
	}
}

/* Fill a kernel-layout signal frame whose interrupted state is given. */
static void put_sigframe(struct world *w, u64 frame_sp, u64 pc, u64 sp, u64 fp, u64 lr)
{
	u64 base = frame_sp + UWPROF_SIG_READ_OFF;

	put(w, base + 8 * UWPROF_SIG_PC_WORD, pc);
	put(w, base + 8 * UWPROF_SIG_SP_WORD, sp);
	put(w, base + 8 * UWPROF_SIG_FP_WORD, fp);
	if (UWPROF_SIG_LR_WORD >= 0)
		put(w, base + 8 * (UWPROF_SIG_LR_WORD < 0 ? 0 : UWPROF_SIG_LR_WORD), lr);
}

enum { BY_ROW, BY_CODE, AT_MAP_START };

/*
 * arm64: a frame-pointer step does not give the caller's sp, as GCC puts
 * a frame's record at its bottom. A table-less frame [S, S + 64) with its
 * record at S, called from RECLOW, whose 64-byte frame [S + 64, S + 128)
 * has its record at its bottom too: RECLOW's CFA is its fp (S + 64) + 64,
 * not fp + 16 + 64 from the bound, where the walk would read a return
 * address out of the table-less frame's locals. A caller whose row keeps
 * no frame record cannot be placed: FP_END.
 */
static void test_fp_sp_bound(struct tap *t, struct world *w)
{
	u64 want[4];

	if (!ARM64)
		return;
	world_init(w);
	w->regs.pc = JIT + 0x10;
	w->regs.sp = S;
	w->regs.fp = S;
	put(w, S, S + 64);
	put(w, S + 8, TEXT + F_RECLOW + 0x10);
	/* The JIT frame's locals: what a walk from the bound would take. */
	put(w, S + 16, S + 256);
	put(w, S + 24, TEXT + F_A + 0x20);
	put(w, S + 64, 0);
	put(w, S + 72, TEXT + F_OUTER + 8);
	run(w, 0, 64);
	want[0] = JIT + 0x10;
	want[1] = TEXT + F_RECLOW + 0x10;
	want[2] = TEXT + F_OUTER + 8;
	expect(t, w, want, 3, UWPROF_STOP_OK,
	       "arm64: after a frame-pointer step, an sp-based caller placed by its frame record");

	/* The same caller keeping fp apart from ra: no record to place it. */
	put(w, S + 8, TEXT + F_FPFAR + 0x10);
	run(w, 0, 64);
	want[1] = TEXT + F_FPFAR + 0x10;
	expect(t, w, want, 2, UWPROF_STOP_FP_END,
	       "arm64: after a frame-pointer step, an sp-based caller without a record: FP_END");
}

static void test_signal(struct tap *t, struct world *w, int how_found)
{
	bool by_code = how_found != BY_ROW;
	u64 tramp = how_found == BY_ROW ? TEXT + F_SIG + 4 :
		    how_found == BY_CODE ? TRAMP_CODE : TRAMPMAP;
	u64 s2 = S + 0x800;	/* interrupted sp */
	u64 want[8];
	const char *how = how_found == BY_ROW ? "by row" :
			  how_found == BY_CODE ? "by code" : "at map start";

	/*
	 * Handler in A (x86: ra at S+8 -> trampoline; arm64: ra in lr), the
	 * trampoline's frame at S+16, the interrupted frame a LEAF at exactly
	 * F_LEAF (pc - 1 would hit A's rule), interrupted lr/ra into FP.
	 */
	world_init(w);
	if (by_code)
		put_tramp_code(w);
	w->regs.pc = TEXT + F_A + 0x10;
	w->regs.sp = S;
	if (!ARM64) {
		put(w, S + 8, tramp);
		put_sigframe(w, S + 16, TEXT + F_LEAF, s2, s2 + 32, 0);
		put(w, s2, TEXT + F_FP + 0x10);		/* LEAF's ra */
		/* FP frame: record at fp = s2 + 32 */
		put(w, s2 + 32, 0);
		put(w, s2 + 40, TEXT + F_OUTER + 4);
	} else {
		put(w, S, 0);
		put(w, S + 8, tramp);
		put_sigframe(w, S + 16, TEXT + F_LEAF, s2, s2 + 32, TEXT + F_FP + 0x10);
		put(w, s2 + 32, 0);
		put(w, s2 + 40, TEXT + F_OUTER + 4);
	}
	run(w, 0, 64);
	want[0] = TEXT + F_A + 0x10;
	want[1] = tramp;
	want[2] = TEXT + F_LEAF;
	want[3] = TEXT + F_FP + 0x10;
	want[4] = TEXT + F_OUTER + 4;
	if (!expect(t, w, want, 5, UWPROF_STOP_OK, how_found == BY_ROW ?
		    "signal frame found by its row, restored from rt_sigframe" :
		    how_found == BY_CODE ?
		    "signal frame found by its code, restored from rt_sigframe" :
		    "signal frame at the first byte of its mapping, found by its code"))
		return;
	tap_ok(t, w->res.fp_frames == 0, "signal frame %s: no fp fallback", how);

	/* The interrupted sp may be below the handler's (sigaltstack). */
	world_init(w);
	if (by_code)
		put_tramp_code(w);
	w->regs.pc = TEXT + F_A + 0x10;
	w->regs.sp = S + 0x1000;
	s2 = S;
	put(w, S + 0x1008, tramp);
	put_sigframe(w, S + 0x1010, TEXT + F_OUTER + 4, s2, 0, 0);
	run(w, 0, 64);
	want[2] = TEXT + F_OUTER + 4;
	expect(t, w, want, 3, UWPROF_STOP_OK, "signal frame onto a lower stack");

	/* Restored sp zero. */
	world_init(w);
	if (by_code)
		put_tramp_code(w);
	w->regs.pc = TEXT + F_A + 0x10;
	w->regs.sp = S;
	put(w, S + 8, tramp);
	put_sigframe(w, S + 16, TEXT + F_OUTER + 4, 0, 0, 0);
	run(w, 0, 64);
	expect(t, w, want, 2, UWPROF_STOP_BAD_SP, "signal frame with sp zero: BAD_SP");

	/* The signal frame itself past the readable stack. */
	world_init(w);
	if (by_code)
		put_tramp_code(w);
	w->regs.pc = TEXT + F_A + 0x10;
	w->regs.sp = STACK + 8 * STACK_WORDS - 32;
	put(w, w->regs.sp + 8, tramp);
	run(w, 0, 64);
	expect(t, w, want, 2, UWPROF_STOP_READ, "signal frame not readable: READ");

	/* Restored pc outside user space. */
	world_init(w);
	if (by_code)
		put_tramp_code(w);
	w->regs.pc = TEXT + F_A + 0x10;
	w->regs.sp = S;
	put(w, S + 8, tramp);
	put_sigframe(w, S + 16, LIMIT + 4, S + 0x800, 0, 0);
	run(w, 0, 64);
	expect(t, w, want, 2, UWPROF_STOP_BAD_PC, "signal frame with a kernel pc: BAD_PC");
}

/*
 * A PLT stub at TEXT + F_GAP (the code[] region) whose GOT slot, at
 * TEXT + F_GAP + 0x20, holds 'dest'.
 */
static void put_plt_stub(struct world *w, u64 dest)
{
	if (!ARM64) {
		static const u8 jmp[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0xf2, 0xff, 0x25,
					  0x15, 0x00, 0x00, 0x00 };

		memcpy(w->code, jmp, sizeof(jmp));	/* slot: 11 + 0x15 */
	} else {
		u32 insn[2] = { 0x90000010,		/* adrp x16, . */
				0xf9400211 | ((0x520 / 8) << 10) }; /* ldr x17, [x16, #0x520] */

		memcpy(w->code, insn, sizeof(insn));
	}
	memcpy(w->code + 0x20, &dest, 8);
}

/* A direct call to 'target' whose return address is JIT + 0x80. */
static void put_call(struct world *w, u64 target)
{
	u64 at = JIT + 0x80 - UWPROF_ARCH_CALL_LEN;

	if (!ARM64) {
		s32 rel = (s32)(target - (JIT + 0x80));

		w->jit_code[3] = 0xe8;
		memcpy(w->jit_code + 4, &rel, 4);
	} else {
		u32 bl = 0x94000000 | (u32)(((target - at) >> 2) & 0x03ffffff);

		memcpy(w->jit_code + 4, &bl, 4);
	}
}

/*
 * Table-less code interrupted in a leaf whose return address is the
 * word at sp (x86_64) or lr (arm64), pointing into the same table-less
 * mapping: taken when the call before it enters pc's code, directly or
 * through a PLT stub's GOT slot; else fp is followed (skipping the
 * caller, as it must when the return address cannot be trusted).
 */
/*
 * Interrupted inside the trampoline by its code: at each instruction, and
 * past the system call while rt_sigreturn runs. sp is the frame, fp the
 * trampoline's (x86_64: the interrupted fp; arm64: the kernel's record).
 * Once rt_sigreturn has restored fp (and maybe sp), the frame at sp is no
 * longer the one fp belongs to: the walk stops rather than read it.
 */
static void test_signal_in_flight(struct tap *t, struct world *w)
{
	static const u64 x86_pcs[] = { 0, 7, 9 }, a64_pcs[] = { 0, 4, 8 };
	const u64 *pcs = ARM64 ? a64_pcs : x86_pcs;
	u64 s2 = S + 0x800, rec = S + 0x400, want[4];
	unsigned int i;

	for (i = 0; i < 4; i++) {
		bool restored = i == 3;
		u64 off = pcs[restored ? 2 : i];

		world_init(w);
		put_tramp_code(w);
		w->regs.pc = TRAMP_CODE + off;
		w->regs.sp = S;
		put_sigframe(w, S, TEXT + F_LEAF, s2, s2 + 32, TEXT + F_FP + 0x10);
		put(w, s2, TEXT + F_FP + 0x10);		/* x86: LEAF's ra */
		put(w, s2 + 32, 0);
		put(w, s2 + 40, TEXT + F_OUTER + 4);
		if (ARM64) {
			put(w, rec, s2 + 32);
			put(w, rec + 8, TEXT + F_FP + 0x10);
			w->regs.fp = restored ? s2 + 32 : rec;
		} else {
			w->regs.fp = restored ? s2 + 64 : s2 + 32;
		}
		run(w, 0, 64);
		want[0] = TRAMP_CODE + off;
		want[1] = TEXT + F_LEAF;
		want[2] = TEXT + F_FP + 0x10;
		want[3] = TEXT + F_OUTER + 4;
		if (restored)
			expect(t, w, want, 1, UWPROF_STOP_BAD_SP,
			       "in rt_sigreturn, fp already restored: BAD_SP");
		else if (expect(t, w, want, 4, UWPROF_STOP_OK,
				i == 0 ? "interrupted at the trampoline's start" :
				i == 1 ? "interrupted at the trampoline's system call" :
				"interrupted in rt_sigreturn, before it restored anything"))
			tap_ok(t, w->res.fp_frames == 0,
			       "trampoline + %llu: no fp fallback", (unsigned long long)off);
	}
}

static void test_leaf_calls(struct tap *t, struct world *w)
{
	static const struct { int plt; u64 target; bool leaf; const char *what; } c[] = {
		{ 0, JIT + 0x40, true, "a call to pc" },
		{ 0, JIT + 0x20, true, "a call to the start of pc's code" },
		{ 0, JIT + 0x100, false, "a call above pc" },
		{ 0, JIT + 0x40 - UWPROF_LEAF_MAX_SIZE - 4, false, "a call too far below pc" },
		{ 1, JIT + 0x20, true, "a call through a PLT stub to pc's code" },
		{ 1, JIT + 0x100, false, "a call through a PLT stub elsewhere" },
		{ 2, JIT + 0x20, false, "a call to code that is no PLT stub" },
	};
	const char *arch = ARM64 ? "arm64 lr" : "x86_64 word at sp";
	char desc[160];
	u64 want[3];
	unsigned int i;

	for (i = 0; i < NR(c); i++) {
		world_init(w);
		if (!ARM64) {
			w->regs.sp = S;
			put(w, S, JIT + 0x80);
			w->regs.fp = S + 32;
			put(w, S + 32, 0);
			put(w, S + 40, TEXT + F_OUTER + 4);
		} else {
			build_chain(w, JIT + 0x80, TEXT + F_FP + 0x30, TEXT + F_OUTER + 4);
			w->regs.fp = S + 32;
		}
		w->regs.pc = JIT + 0x40;
		put_call(w, c[i].plt ? TEXT + F_GAP : c[i].target);
		if (c[i].plt == 1)
			put_plt_stub(w, c[i].target);
		run(w, 0, 64);
		want[0] = JIT + 0x40;
		want[1] = c[i].leaf ? JIT + 0x80 : TEXT + F_OUTER + 4;
		want[2] = TEXT + F_OUTER + 4;
		snprintf(desc, sizeof(desc), "%s in the same table-less mapping after %s: %s",
			 arch, c[i].what, c[i].leaf ? "return address" : "fp");
		expect(t, w, want, c[i].leaf ? 3 : 2, UWPROF_STOP_OK, desc);
	}
	if (ARM64)
		return;
	/* A leaf that pushed a register holds data at sp: fp as before. */
	world_init(w);
	w->regs.pc = JIT + 0x40;
	w->regs.sp = S - 8;
	put(w, S - 8, 0x4141);
	put(w, S, JIT + 0x80);
	w->regs.fp = S + 32;
	put(w, S + 32, 0);
	put(w, S + 40, TEXT + F_OUTER + 4);
	put_call(w, JIT + 0x40);
	run(w, 0, 64);
	want[0] = JIT + 0x40;
	want[1] = TEXT + F_OUTER + 4;
	expect(t, w, want, 2, UWPROF_STOP_OK, "x86_64 data at sp: fp");
	/* Past the first frame the word at sp is not a leaf's. */
	w->regs.pc = TEXT + F_A + 0x20;
	w->regs.sp = S - 16;
	put(w, S - 8, JIT + 0x40);
	put(w, S - 16, 0);
	run(w, 0, 64);
	want[0] = TEXT + F_A + 0x20;
	want[1] = JIT + 0x40;
	want[2] = TEXT + F_OUTER + 4;
	expect(t, w, want, 3, UWPROF_STOP_OK, "x86_64 table-less caller: fp, not the word at sp");
}

static void test_arch(struct tap *t, struct world *w)
{
	u64 want[8];

	if (!ARM64) {
		/* PLT: (pc & 15) >= 11 adds 8 to the CFA. */
		world_init(w);
		w->regs.pc = TEXT + F_PLT + 0x10 + 4;
		w->regs.sp = S;
		put(w, S, TEXT + F_OUTER + 4);
		run(w, 0, 64);
		want[0] = w->regs.pc;
		want[1] = TEXT + F_OUTER + 4;
		expect(t, w, want, 2, UWPROF_STOP_OK, "PLT entry before the push: CFA sp+8");
		world_init(w);
		w->regs.pc = TEXT + F_PLT + 0x10 + 11;
		w->regs.sp = S;
		put(w, S, 0x4141);
		put(w, S + 8, TEXT + F_OUTER + 4);
		run(w, 0, 64);
		want[0] = w->regs.pc;
		expect(t, w, want, 2, UWPROF_STOP_OK, "PLT entry after the push: CFA sp+16");

		/* x86 has no link register: ra SAME cannot be followed. */
		tap_ok(t, UWPROF_ARCH_LR_REGNO < 0, "x86_64 has no link register");
		return;
	}

	/* PAC bits on lr and on a saved ra are stripped to va_bits. */
	world_init(w);
	build_chain(w, (0x5aULL << 48) | (TEXT + F_A + 0x20),
		    (0x7fULL << 49) | (TEXT + F_FP + 0x30), TEXT + F_OUTER + 4);
	run(w, 0, 64);
	want[0] = TEXT + F_LEAF + 0x10;
	want[1] = TEXT + F_A + 0x20;
	want[2] = TEXT + F_FP + 0x30;
	want[3] = TEXT + F_OUTER + 4;
	expect(t, w, want, 4, UWPROF_STOP_OK, "arm64 PAC bits stripped from lr and saved ra");

	/* ra in lr is only known in the first frame. */
	world_init(w);
	w->regs.pc = TEXT + F_A + 0x10;
	w->regs.sp = S;
	put(w, S, 0);
	put(w, S + 8, TEXT + F_LEAF + 8);	/* a "leaf" that made a call */
	run(w, 0, 64);
	want[0] = TEXT + F_A + 0x10;
	want[1] = TEXT + F_LEAF + 8;
	expect(t, w, want, 2, UWPROF_STOP_UNSUPPORTED, "arm64 ra in lr past the first frame: UNSUPPORTED");

	/*
	 * Code without a table entered from another object (the arm64 vDSO):
	 * a leaf that pushed no record returns through lr with sp unchanged;
	 * fp's record belongs to an outer frame and must not be followed.
	 */
	world_init(w);
	build_chain(w, TEXT + F_A + 0x20, TEXT + F_FP + 0x30, TEXT + F_OUTER + 4);
	w->regs.pc = JIT + 0x40;
	w->regs.fp = S + 32;
	run(w, 0, 64);
	{
		u64 chain[] = { JIT + 0x40, TEXT + F_A + 0x20, TEXT + F_FP + 0x30,
				TEXT + F_OUTER + 4 };

		expect(t, w, chain, 4, UWPROF_STOP_OK,
		       "arm64 table-less leaf called from another object returns through lr");
		/*
		 * The same function after pushing its record {fp, lr}; A's fp
		 * is its own record's address, S.
		 */
		w->regs.sp = S - 16;
		w->regs.fp = S - 16;
		put(w, S - 16, S);
		put(w, S - 8, TEXT + F_A + 0x20);
		run(w, 0, 64);
		expect(t, w, chain, 4, UWPROF_STOP_OK,
		       "arm64 table-less function whose record holds lr: followed by fp");
	}
	/* lr inside the same table-less mapping: frame pointers as before. */
	world_init(w);
	build_chain(w, JIT + 0x80, TEXT + F_FP + 0x30, TEXT + F_OUTER + 4);
	w->regs.pc = JIT + 0x40;
	w->regs.fp = S + 32;
	run(w, 0, 64);
	want[0] = JIT + 0x40;
	want[1] = TEXT + F_OUTER + 4;
	expect(t, w, want, 2, UWPROF_STOP_OK, "arm64 lr within the same table-less mapping: fp");

	/* A bl to pc's code just before lr: test_leaf_calls(). */
	{
		/* A call from inside [target, pc]: the function's own, stale. */
		world_init(w);
		build_chain(w, JIT + 0x80, TEXT + F_FP + 0x30, TEXT + F_OUTER + 4);
		{
			u64 at = JIT + JIT_CALL + 4;
			u32 bl = 0x94000000 | (u32)(((JIT + 0x20 - at) >> 2) & 0x03ffffff);

			memcpy(w->jit_code + 4, &bl, 4);
		}
		w->regs.pc = JIT + 0x90;
		w->regs.fp = S + 32;
		run(w, 0, 64);
		want[0] = JIT + 0x90;
		want[1] = TEXT + F_OUTER + 4;
		expect(t, w, want, 2, UWPROF_STOP_OK,
		       "arm64 lr after a call made between its target and pc: stale, fp");
	}

	/* x30 via DW_CFA_register is the same as in lr. */
	rules[R_LEAF].ra_type = UWPROF_REG_IN_REG;
	rules[R_LEAF].ra_off = 30;
	tb_free(&blob);
	tb_build(&blob, TEXT, rows, NR(rows), rules, R_NR);
	blob_load();
	world_init(w);
	build_chain(w, TEXT + F_A + 0x20, TEXT + F_FP + 0x30, TEXT + F_OUTER + 4);
	run(w, 0, 64);
	{
		u64 chain[] = { TEXT + F_LEAF + 0x10, TEXT + F_A + 0x20, TEXT + F_FP + 0x30,
				TEXT + F_OUTER + 4 };

		expect(t, w, chain, 4, UWPROF_STOP_OK, "arm64 ra in register 30 is lr");
	}
	rules[R_LEAF].ra_off = 29;
	tb_free(&blob);
	tb_build(&blob, TEXT, rows, NR(rows), rules, R_NR);
	blob_load();
	world_init(w);
	build_chain(w, TEXT + F_A + 0x20, TEXT + F_FP + 0x30, TEXT + F_OUTER + 4);
	run(w, 0, 64);
	want[0] = TEXT + F_LEAF + 0x10;
	expect(t, w, want, 1, UWPROF_STOP_UNSUPPORTED, "arm64 ra in register 29: UNSUPPORTED");
}

int main(void)
{
	struct world *w = calloc(1, sizeof(*w));
	struct tap t = { 0 };
	int err;

	if (!w || !(w->cache = calloc(1, sizeof(*w->cache))))
		return 2;

	make_rules();
	tb_build(&blob, TEXT, rows, NR(rows), rules, R_NR);
	err = blob_load();
	tap_diag("synthetic stacks, arch %s", ARM64 ? "arm64" : "x86_64");
	if (!tap_ok(&t, err == 0, "synthetic table loads (%d)", err))
		return tap_done(&t);
	test_chain(&t, w);
	test_cache_replace(&t, w);
	test_resume(&t, w);
	test_stops(&t, w);
	test_deadline(&t, w);
	test_saved_reg(&t, w);
	test_fast_kinds(&t, w);
	test_fp_rules(&t, w);
	test_big_frames(&t, w);
	test_fp(&t, w);
	test_fp_sp_bound(&t, w);
	test_signal(&t, w, BY_ROW);
	test_signal(&t, w, BY_CODE);
	test_signal(&t, w, AT_MAP_START);
	test_signal_in_flight(&t, w);
	test_arch(&t, w);
	test_leaf_calls(&t, w);
	tap_ok(&t, w->cached_walks && !w->cache_diffs,
	       "rule cache: %u of %u cached walks differ from uncached ones, over %llu tables",
	       w->cache_diffs, w->cached_walks, (unsigned long long)blob_loads);
	tb_free(&blob);
	free(w->cache);
	free(w);
	return tap_done(&t);
}
