// SPDX-License-Identifier: GPL-2.0
/*
 * Functions whose CFI does not describe their frames: the CFI-less code at
 * an ELF's entry point, glibc's __start_context and arm64 __swapcontext,
 * Go's outermost ones, and Go's ones that switch sp to another stack (see
 * outermost.h).
 */
#include <errno.h>
#include <gelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "goframe.h"
#include "outermost.h"
#include "startctx.h"
#include "vec.h"

/*
 * Go functions no frame returns into (the ELF entry point among them: its
 * CFI has the return address where the kernel put argc), and those that
 * switch to the thread's system stack and call on there: their CFI
 * describes the stack they came from, so above them lies whatever that
 * stack last held, not their callers (Go's own tracebacks stop at them
 * too). Sampled before the switch, such a walk ends one frame early:
 * short, never wrong. ABI0 assembly names carry ".abi0".
 */
static const char *const go_outermost[] = {
	"runtime.goexit", "runtime.goexit.abi0",
	"runtime.mstart", "runtime.mstart.abi0",
	"runtime.rt0_go", "runtime.rt0_go.abi0",
	"_rt0_amd64_linux", "_rt0_arm64_linux",
	"runtime.systemstack", "runtime.systemstack.abi0",
	"runtime.mcall", "runtime.mcall.abi0",
	"runtime.morestack", "runtime.morestack.abi0",
};

/*
 * The signal handler's entry, which Go marks as a top frame (its CFI ends
 * the walk) although the kernel's signal frame lies above it. On arm64 Go
 * leaves the return to the vDSO's sigreturn trampoline, which the walk
 * knows by its code, so with rows from its frame pointer (goframe.h) a
 * walk goes on into the interrupted code. Its CFA comes from sp: it does
 * not move sp, and the Go code it calls does not say where it keeps the
 * frame pointer. On amd64 it returns through
 * Go's own restorer, whose CFI describes no signal frame: there it stays
 * a top frame.
 */
static const char *const go_signal_entry[] = {
	"runtime.sigtramp", "runtime.sigtramp.abi0",
};

/*
 * Go's asynchronous preemption on arm64: the signal handler makes the
 * interrupted function F appear to call runtime.asyncPreempt by storing
 * F's lr 16 bytes below F's sp, lowering sp by those 16 bytes and setting
 * lr to the interrupted pc. asyncPreempt's CFI takes the sp it was
 * entered with for its CFA, so a walk would return into F 16 bytes below
 * F's frame. Its rows are moved so that the CFA is F's sp (the saved
 * slots stay where they are); rows that say the return address is in lr
 * hold only at the entry, before the epilogue reloads lr with F's: any
 * other such row stops the walk. On amd64 the injected call pushes the
 * return address like any call, and the CFI is right as it is.
 */
static const char *const go_preempt[] = {
	"runtime.asyncPreempt", "runtime.asyncPreempt.abi0",
};

/* Go functions that switch sp inside a frame of their own (goframe.h). */
static const char *const go_switching[] = {
	"runtime.nanotime1", "runtime.nanotime1.abi0",
	"runtime.walltime", "runtime.walltime.abi0",
	"runtime.walltime1", "runtime.walltime1.abi0",
	"runtime.vgetrandom1", "runtime.vgetrandom1.abi0",
};

/* amd64 only: time.now is assembly there, an ordinary Go function on arm64. */
static const char *const go_switching_amd64[] = {
	"time.now", "time.now.abi0",
};

/*
 * Go's stack check on arm64: a function entered with too little stack
 * branches, before its frame exists, to a block at its end that does
 * 'mov x3, x30; bl runtime.morestack_noctxt' (or morestack, morestackc).
 * Its caller's return address is then in x3, the callee's lr being the
 * block's own; Go's CFI there still says lr, which a walk out of
 * morestack_noctxt does not know. The row of the bl says x3.
 */
static const char *const go_morestack[] = {
	"runtime.morestack", "runtime.morestack.abi0",
	"runtime.morestack_noctxt", "runtime.morestack_noctxt.abi0",
	"runtime.morestackc", "runtime.morestackc.abi0",
};

#define GO_MORESTACK_MAX	(sizeof(go_morestack) / sizeof(go_morestack[0]))
#define A64_MOV_X3_X30		0xaa1e03e3U	/* orr x3, xzr, x30 */
#define A64_BL_MASK		0xfc000000U
#define A64_BL			0x94000000U

struct go_morestack_set {
	uint64_t	addr[GO_MORESTACK_MAX];
	size_t		nr;
};

static uint32_t le32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

/*
 * The bl of Go's stack-check block in the code at [lo, hi) (the last
 * 'mov x3, x30; bl': Go puts the block at the function's end), or 0. With
 * 'ms', only a bl to one of its functions; without, the block's bl was
 * checked so already.
 */
static uint64_t go_morestack_bl(const struct go_morestack_set *ms,
				const uint8_t *code, uint64_t lo, uint64_t hi)
{
	uint64_t off, pc, target, found = 0;
	uint32_t bl;
	size_t k;

	for (off = 0; code && lo + off + 8 <= hi; off += 4) {
		bl = le32(code + off + 4);
		if (le32(code + off) != A64_MOV_X3_X30 ||
		    (bl & A64_BL_MASK) != A64_BL)
			continue;
		pc = lo + off + 4;
		if (!ms) {
			found = pc;
			continue;
		}
		/* imm26, in words, sign-extended */
		target = pc + (uint64_t)((int64_t)((uint64_t)bl << 38) >> 36);
		for (k = 0; k < ms->nr; k++)
			if (ms->addr[k] == target)
				found = pc;
	}
	return found;
}

static int name_in(const char *name, const char *const *list, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(name, list[i]))
			return 1;
	return 0;
}

static int mark_range(struct uwprof_cfi *c, uint64_t lo, uint64_t hi,
		      uint32_t cie)
{
	struct uwprof_cfi_fde *f;
	int found = 0;
	size_t i;

	for (i = 0; i < c->nr_fdes; i++) {
		f = &c->fdes[i];
		if (f->lo <= lo && lo < f->hi) {
			f->cie = cie;
			found = 1;
		}
	}
	if (found || hi <= lo)
		return 0;
	f = uwprof_cfi_fde_add(c);
	if (!f)
		return -ENOMEM;
	f->lo = lo;
	f->hi = hi;
	f->cie = cie;
	return 0;
}

/*
 * The bytes of code at [lo, hi) in an executable section of 'e', or NULL.
 */
static const uint8_t *code_at(const struct uwprof_elf *e, uint64_t lo,
			      uint64_t hi)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	Elf_Data *d;

	while ((scn = elf_nextscn(e->elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || lo < sh.sh_addr ||
		    hi > sh.sh_addr + sh.sh_size || lo >= hi)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size != sh.sh_size)
			return NULL;
		return (const uint8_t *)d->d_buf + (lo - sh.sh_addr);
	}
	return NULL;
}

/* Marks the FDEs whose code holds Go's stack-check block. */
static void go_morestack_mark(const struct uwprof_elf *e,
			      struct uwprof_cfi *c,
			      const struct go_morestack_set *ms)
{
	const uint8_t *code;
	size_t i;

	for (i = 0; ms->nr && i < c->nr_fdes; i++) {
		struct uwprof_cfi_fde *f = &c->fdes[i];

		if (f->cie >= c->nr_cies)
			continue;
		code = code_at(e, f->lo, f->hi);
		if (go_morestack_bl(ms, code, f->lo, f->hi))
			f->cie = UWPROF_GOMORESTACK_CIE;
	}
}

/*
 * The code at the ELF entry point runs on the stack the kernel built: no
 * frame lies above it. Glibc's dynamic loader writes its entry (_start,
 * then _dl_start_user, which calls the libraries' constructors) in
 * assembly without CFI, so walks from the loader's start-up ended there in
 * the frame-pointer fallback, reported incomplete. The block from the
 * entry to the next FDE is taken as the entry's own code when it is short
 * and no other symbol starts inside it; otherwise (a binary without CFI,
 * where the next FDE may lie far beyond other functions) nothing is
 * marked.
 */
#define ENTRY_BLOCK_MAX	512

static const char *const entry_block_names[] = {
	"_start", "_dl_start_user",
};

struct entry_block_range {
	uint64_t lo, hi;
};

static int entry_block_foreign_one(void *arg, const GElf_Sym *sym,
				   const char *name)
{
	const struct entry_block_range *r = arg;

	if (sym->st_value <= r->lo || sym->st_value >= r->hi ||
	    GELF_ST_TYPE(sym->st_info) == STT_SECTION ||
	    GELF_ST_TYPE(sym->st_info) == STT_FILE)
		return 0;
	return !name || !name_in(name, entry_block_names, 2);
}

static int entry_block_foreign_sym(const struct uwprof_elf *e, uint64_t lo,
				   uint64_t hi)
{
	struct entry_block_range r = { lo, hi };

	return uwprof_elf_each_sym(e, entry_block_foreign_one, &r);
}

/*
 * Whether e_entry is where a process starts: an executable's (ET_EXEC, or
 * a PIE naming its interpreter), or a shared object's when it was set on
 * purpose (the dynamic loader's). A library linked without an entry symbol
 * gets the start of .text, an ordinary function (crtstuff's first).
 */
static int entry_block_runs(const struct uwprof_elf *e)
{
	GElf_Phdr ph;
	size_t i, n;

	if (e->ehdr.e_type == ET_EXEC)
		return 1;
	if (e->ehdr.e_type != ET_DYN || elf_getphdrnum(e->elf, &n))
		return 0;
	for (i = 0; i < n; i++)
		if (gelf_getphdr(e->elf, (int)i, &ph) && ph.p_type == PT_INTERP)
			return 1;
	return e->ehdr.e_entry != e->text_addr;
}

static int entry_block_mark(const struct uwprof_elf *e, struct uwprof_cfi *c)
{
	uint64_t entry = e->ehdr.e_entry, next = UINT64_MAX;
	size_t i;

	if (!entry || !code_at(e, entry, entry + 1) || !entry_block_runs(e))
		return 0;
	for (i = 0; i < c->nr_fdes; i++) {
		const struct uwprof_cfi_fde *f = &c->fdes[i];

		if (f->lo <= entry && entry < f->hi)
			return 0;
		if (f->lo > entry && f->lo < next)
			next = f->lo;
	}
	if (next == UINT64_MAX || next - entry > ENTRY_BLOCK_MAX ||
	    !code_at(e, entry, next) || entry_block_foreign_sym(e, entry, next))
		return 0;
	return mark_range(c, entry, next, UWPROF_OUTERMOST_CIE);
}

/*
 * glibc's __start_context (startctx.h): the padding a walk looks up for its
 * return address, and its own FDE; arm64 __swapcontext's FDE.
 */
static int start_ctx_mark(const struct uwprof_elf *e, struct uwprof_cfi *c)
{
	struct uwprof_swapctx swap;
	uint64_t pad, start;
	int ret = 0;

	if (uwprof_startctx_find(e, c, &pad, &start)) {
		ret = mark_range(c, pad, start, UWPROF_OUTERMOST_CIE);
		if (!ret)
			ret = mark_range(c, start, start + 1,
					 UWPROF_OUTERMOST_CIE);
	}
	if (!ret && uwprof_startctx_swap_find(e, c, &swap))
		ret = mark_range(c, swap.lo, swap.lo + 1, UWPROF_SWAPCTX_CIE);
	return ret;
}

int uwprof_outermost_mark(const struct uwprof_elf *e, struct uwprof_cfi *c)
{
	struct go_morestack_set ms = { .nr = 0 };
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Sym sym;
	Elf_Data *d;
	size_t i, n;
	uint32_t cie;
	int ret;

	ret = entry_block_mark(e, c);
	if (!ret)
		ret = start_ctx_mark(e, c);
	if (ret || !e->is_go)
		return ret;
	while ((scn = elf_nextscn(e->elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB ||
		    !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (i = 0; i < n; i++) {
			const char *name;
			uint64_t lo, hi;

			if (!gelf_getsym(d, (int)i, &sym) ||
			    GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_value)
				continue;
			name = elf_strptr(e->elf, sh.sh_link, sym.st_name);
			lo = sym.st_value;
			hi = lo + sym.st_size;
			if (name && e->arch == UWPROF_ARCH_ARM64 &&
			    ms.nr < GO_MORESTACK_MAX &&
			    name_in(name, go_morestack, GO_MORESTACK_MAX))
				ms.addr[ms.nr++] = lo;
			if (name && name_in(name, go_outermost,
					    sizeof(go_outermost) / sizeof(go_outermost[0])))
				cie = UWPROF_OUTERMOST_CIE;
			else if (name && (name_in(name, go_switching,
						  sizeof(go_switching) / sizeof(go_switching[0])) ||
					  (e->arch == UWPROF_ARCH_X86_64 &&
					   name_in(name, go_switching_amd64, 2))))
				cie = UWPROF_GOSWITCH_CIE;
			else if (name && e->arch == UWPROF_ARCH_ARM64 &&
				 name_in(name, go_signal_entry, 2))
				cie = UWPROF_GOSIGNAL_CIE;
			else if (name && e->arch == UWPROF_ARCH_ARM64 &&
				 name_in(name, go_preempt, 2))
				cie = UWPROF_GOPREEMPT_CIE;
			else
				continue;
			ret = mark_range(c, lo, hi, cie);
			if (ret)
				return ret;
		}
	}
	go_morestack_mark(e, c, &ms);
	return 0;
}

struct preempt_shift {
	uwprof_cfi_row_fn	fn;
	void			*ctx;
};

/* Go's pushCall: F's sp is 16 bytes above the sp asyncPreempt starts with. */
#define GO_PUSHCALL_BYTES	16

static void preempt_slot(uint8_t type, int32_t *off)
{
	if (type == UWPROF_REG_AT_CFA)
		*off -= GO_PUSHCALL_BYTES;
}

static int preempt_row(void *arg, uint64_t addr, const struct uwprof_rule *r,
		       uint8_t reason)
{
	struct preempt_shift *ps = arg;
	struct uwprof_rule m = *r;

	if (m.cfa_type == UWPROF_CFA_END)
		return ps->fn(ps->ctx, addr, &m, reason);
	if (m.cfa_type == UWPROF_CFA_SP && (m.ra_type == UWPROF_REG_AT_CFA ||
	    (m.ra_type == UWPROF_REG_SAME && m.cfa_off == 0))) {
		m.cfa_off += GO_PUSHCALL_BYTES;
		preempt_slot(m.fp_type, &m.fp_off);
		preempt_slot(m.ra_type, &m.ra_off);
		if (m.saved_type == UWPROF_REG_AT_CFA &&
		    m.saved_off - GO_PUSHCALL_BYTES >= INT16_MIN) {
			m.saved_off -= GO_PUSHCALL_BYTES;
		} else {
			m.saved_type = UWPROF_REG_SAME;
			m.saved_reg = 0;
			m.saved_off = 0;
		}
		return ps->fn(ps->ctx, addr, &m, reason);
	}
	memset(&m, 0, sizeof(m));
	m.cfa_type = UWPROF_CFA_UNSUPPORTED;
	return ps->fn(ps->ctx, addr, &m, UWPROF_UNSUP_STACK_SWITCH);
}

/* An FDE's rows, gathered to be emitted again with one range replaced. */
struct row_list {
	struct go_row {
		uint64_t		addr;
		struct uwprof_rule	rule;
		uint8_t			reason;
	} *v;
	size_t	nr, cap;
};

static int row_gather(void *arg, uint64_t addr, const struct uwprof_rule *r,
		      uint8_t reason)
{
	struct row_list *l = arg;

	if (VEC_RESERVE(l->v, l->cap, l->nr + 1, 16))
		return -ENOMEM;
	l->v[l->nr].addr = addr;
	l->v[l->nr].rule = *r;
	l->v[l->nr].reason = reason;
	l->nr++;
	return 0;
}

/* Whether a row is the frame as Go's stack check leaves it. */
static int go_block_frame(const struct uwprof_rule *r)
{
	return r->cfa_type == UWPROF_CFA_SP && !r->cfa_off &&
	       r->ra_type == UWPROF_REG_SAME;
}

/*
 * The rows of an FDE marked for Go's stack-check block (its bl's target
 * was checked then): the bl's own with the return address in x3, where
 * the CFI has the frame as the check leaves it; any other row there is
 * kept as it is.
 */
static int go_morestack_run(const struct uwprof_elf *e, struct uwprof_cfi *c,
			    const struct uwprof_cfi_fde *f,
			    uwprof_cfi_row_fn fn, void *ctx)
{
	struct uwprof_cfi_fde cfi = *f;
	struct row_list l = { .v = NULL };
	struct uwprof_rule x3;
	uint64_t bl, end;
	size_t i;
	int ret;

	cfi.cie = f->cfi_cie;
	ret = uwprof_cfi_run(c, &cfi, row_gather, &l);
	bl = go_morestack_bl(NULL, code_at(e, f->lo, f->hi), f->lo, f->hi);
	for (i = 0; !ret && i < l.nr; i++) {
		const struct go_row *g = &l.v[i];

		end = i + 1 < l.nr ? l.v[i + 1].addr : f->hi;
		if (!bl || bl < g->addr || bl >= end || !go_block_frame(&g->rule)) {
			ret = fn(ctx, g->addr, &g->rule, g->reason);
			continue;
		}
		if (g->addr < bl)
			ret = fn(ctx, g->addr, &g->rule, g->reason);
		x3 = g->rule;
		x3.ra_type = UWPROF_REG_IN_REG;
		x3.ra_off = 3;
		if (!ret)
			ret = fn(ctx, bl, &x3, g->reason);
		if (!ret && bl + 4 < end)
			ret = fn(ctx, bl + 4, &g->rule, g->reason);
	}
	free(l.v);
	return ret;
}

/* The rule of a function that keeps no frame: CFA = sp, ra in lr. */
static int leaf_rule(const struct uwprof_rule *r)
{
	return r->cfa_type == UWPROF_CFA_SP && !r->cfa_off &&
	       r->fp_type == UWPROF_REG_SAME && r->ra_type == UWPROF_REG_SAME &&
	       !r->flags;
}

/*
 * arm64 __swapcontext (startctx.h), whose CFI is one row, the leaf's: it
 * holds up to the adr and again once lr is restored; in between the walk
 * stops there (the return address is only in memory), but for the
 * instruction that copies it from x1. Other CFI is emitted as it is.
 */
static int swapctx_run(const struct uwprof_elf *e, struct uwprof_cfi *c,
		       const struct uwprof_cfi_fde *f,
		       uwprof_cfi_row_fn fn, void *ctx)
{
	struct uwprof_cfi_fde cfi = *f;
	struct row_list l = { .v = NULL };
	struct uwprof_swapctx s;
	struct uwprof_rule r, lost, x1;
	size_t i;
	int ret;

	cfi.cie = f->cfi_cie;
	ret = uwprof_cfi_run(c, &cfi, row_gather, &l);
	if (!ret && (l.nr != 1 || l.v[0].addr != f->lo ||
		     !leaf_rule(&l.v[0].rule) ||
		     !uwprof_startctx_swap_code(e, f->lo, f->hi, &s))) {
		for (i = 0; !ret && i < l.nr; i++)
			ret = fn(ctx, l.v[i].addr, &l.v[i].rule, l.v[i].reason);
		free(l.v);
		return ret;
	}
	if (!ret) {
		r = l.v[0].rule;
		memset(&lost, 0, sizeof(lost));
		lost.cfa_type = UWPROF_CFA_UNSUPPORTED;
		x1 = r;
		x1.ra_type = UWPROF_REG_IN_REG;
		x1.ra_off = 1;
		ret = fn(ctx, f->lo, &r, l.v[0].reason);
		if (!ret)
			ret = fn(ctx, s.lost, &lost, UWPROF_UNSUP_RA_EXPR);
		if (!ret)
			ret = fn(ctx, s.in_x1, &x1, l.v[0].reason);
		if (!ret)
			ret = fn(ctx, s.in_x1 + 4, &r, l.v[0].reason);
	}
	free(l.v);
	return ret;
}

int uwprof_outermost_run(const struct uwprof_elf *e, struct uwprof_cfi *c,
			 const struct uwprof_cfi_fde *f,
			 uwprof_cfi_row_fn fn, void *ctx)
{
	struct preempt_shift ps = { .fn = fn, .ctx = ctx };
	struct uwprof_cfi_fde cfi;
	const uint8_t *code;
	struct uwprof_rule r;

	memset(&r, 0, sizeof(r));
	if (f->cie == UWPROF_GOMORESTACK_CIE)
		return go_morestack_run(e, c, f, fn, ctx);
	if (f->cie == UWPROF_SWAPCTX_CIE)
		return swapctx_run(e, c, f, fn, ctx);
	if (f->cie == UWPROF_GOPREEMPT_CIE) {
		if (f->insn == f->end || f->cfi_cie >= c->nr_cies) {
			r.cfa_type = UWPROF_CFA_UNSUPPORTED;
			return fn(ctx, f->lo, &r, UWPROF_UNSUP_STACK_SWITCH);
		}
		cfi = *f;
		cfi.cie = f->cfi_cie;
		return uwprof_cfi_run(c, &cfi, preempt_row, &ps);
	}
	if (f->cie == UWPROF_GOSWITCH_CIE || f->cie == UWPROF_GOSIGNAL_CIE) {
		code = code_at(e, f->lo, f->hi);
		if (code && !uwprof_goframe_check(e->arch, code, f->hi - f->lo))
			return uwprof_goframe_run(e->arch, code, f->lo, f->hi,
						  f->cie == UWPROF_GOSWITCH_CIE,
						  fn, ctx);
		/* Its CFI would lead into the other stack: stop there. */
		r.cfa_type = UWPROF_CFA_UNSUPPORTED;
		return fn(ctx, f->lo, &r, UWPROF_UNSUP_STACK_SWITCH);
	}
	r.cfa_type = UWPROF_CFA_SP;
	r.cfa_off = e->arch == UWPROF_ARCH_X86_64 ? 8 : 0;
	r.fp_type = UWPROF_REG_SAME;
	r.ra_type = UWPROF_REG_UNDEF;
	return fn(ctx, f->lo, &r, UWPROF_CFI_NO_REASON);
}
