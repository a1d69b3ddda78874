// SPDX-License-Identifier: GPL-2.0
/*
 * Go functions whose CFI does not describe their frames: outermost ones,
 * and ones that switch sp to another stack (see outermost.h).
 */
#include <errno.h>
#include <gelf.h>
#include <string.h>

#include "outermost.h"

/*
 * Go functions no frame returns into, and those that switch to the
 * thread's system stack and call on there: their CFI describes the stack
 * they came from, so above them lies whatever that stack last held, not
 * their callers (Go's own tracebacks stop at them too). Sampled before the
 * switch, such a walk ends one frame early: short, never wrong. ABI0
 * assembly names carry ".abi0".
 */
static const char *const go_outermost[] = {
	"runtime.goexit", "runtime.goexit.abi0",
	"runtime.mstart", "runtime.mstart.abi0",
	"runtime.rt0_go", "runtime.rt0_go.abi0",
	"runtime.systemstack", "runtime.systemstack.abi0",
	"runtime.mcall", "runtime.mcall.abi0",
	"runtime.morestack", "runtime.morestack.abi0",
};

/*
 * Go functions that move sp to the thread's system stack for a vDSO call
 * and back, inside a frame of their own: their CFI keeps computing the
 * CFA from sp, which then points into the other stack. They keep Go's
 * frame pointer, which their rows follow instead.
 */
static const char *const go_switching[] = {
	"runtime.nanotime1", "runtime.nanotime1.abi0",
	"runtime.walltime", "runtime.walltime.abi0",
	"runtime.walltime1", "runtime.walltime1.abi0",
	"runtime.vgetrandom1", "runtime.vgetrandom1.abi0",
	"time.now", "time.now.abi0",
};

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

/* A little-endian field of 1 or 4 bytes, sign-extended. */
static int64_t imm(const uint8_t *p, int len)
{
	if (len == 1)
		return (int8_t)p[0];
	return (int32_t)(p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24);
}

/*
 * mov/lea between rbp and [rsp + d]: REX.W, 'opcode', ModRM 0x6c (d8) or
 * 0xac (d32), SIB 0x24, d. Returns the length and d, or 0.
 */
static int x86_bp_rsp(const uint8_t *p, size_t n, uint8_t opcode, int64_t *d)
{
	int len;

	if (n < 5 || p[0] != 0x48 || p[1] != opcode || p[3] != 0x24)
		return 0;
	len = p[2] == 0x6c ? 1 : p[2] == 0xac ? 4 : 0;
	if (!len || n < (size_t)4 + len)
		return 0;
	*d = imm(p + 4, len);
	return 4 + len;
}

/*
 * sub (ModRM 0xec) or add (0xc4) of an immediate to rsp: REX.W, 0x83 i8
 * or 0x81 i32. Returns the length and the immediate, or 0.
 */
static int x86_rsp_imm(const uint8_t *p, size_t n, uint8_t modrm, int64_t *v)
{
	int len;

	if (n < 4 || p[0] != 0x48 || p[2] != modrm)
		return 0;
	len = p[1] == 0x83 ? 1 : p[1] == 0x81 ? 4 : 0;
	if (!len || n < (size_t)3 + len)
		return 0;
	*v = imm(p + 3, len);
	return 3 + len;
}

#define X86_MOV_TO_MEM	0x89	/* mov %rbp,d(%rsp) */
#define X86_MOV_TO_REG	0x8b	/* mov d(%rsp),%rbp */
#define X86_LEA		0x8d	/* lea d(%rsp),%rbp */
#define X86_SUB_RSP	0xec
#define X86_ADD_RSP	0xc4
#define X86_RET		0xc3

/* Go's amd64 frame: sub $size,%rsp; mov %rbp,size-8(%rsp); lea size-8(%rsp),%rbp */
struct go_frame {
	int64_t		size;
	unsigned int	save_bp;	/* offset of the mov */
	unsigned int	set_bp;		/* offset of the lea */
	unsigned int	body;		/* first offset where rbp is the frame's */
};

static int go_prologue(const uint8_t *p, size_t n, struct go_frame *g)
{
	int64_t d1 = 0, d2 = 0;
	int l1, l2 = 0, l3 = 0;

	l1 = x86_rsp_imm(p, n, X86_SUB_RSP, &g->size);
	if (l1)
		l2 = x86_bp_rsp(p + l1, n - l1, X86_MOV_TO_MEM, &d1);
	if (l2)
		l3 = x86_bp_rsp(p + l1 + l2, n - l1 - l2, X86_LEA, &d2);
	if (!l3 || g->size < 16 || (g->size & 7) ||
	    d1 != g->size - 8 || d2 != g->size - 8)
		return -EINVAL;
	g->save_bp = (unsigned int)l1;
	g->set_bp = (unsigned int)(l1 + l2);
	g->body = (unsigned int)(l1 + l2 + l3);
	return 0;
}

/*
 * An epilogue at p: mov size-8(%rsp),%rbp; add $size,%rsp; ret. Returns
 * whether it is one, with the lengths of its first two instructions.
 */
static int go_epilogue(const uint8_t *p, size_t n, const struct go_frame *g,
		       int *l1, int *l2)
{
	int64_t d, v;

	*l1 = x86_bp_rsp(p, n, X86_MOV_TO_REG, &d);
	if (!*l1 || d != g->size - 8)
		return 0;
	*l2 = x86_rsp_imm(p + *l1, n - *l1, X86_ADD_RSP, &v);
	return *l2 && v == g->size && (size_t)(*l1 + *l2) < n &&
	       p[*l1 + *l2] == X86_RET;
}

static int go_switching_decode(const struct uwprof_elf *e, uint64_t lo,
			       uint64_t hi, struct go_frame *g,
			       const uint8_t **code)
{
	if (e->arch != UWPROF_ARCH_X86_64)
		return -EOPNOTSUPP;
	*code = code_at(e, lo, hi);
	if (!*code)
		return -ENOENT;
	return go_prologue(*code, hi - lo, g);
}

/* Rows: CFA from sp, fp saved at CFA - 16 or unchanged; or CFA = fp + 16. */
static int go_row(uwprof_cfi_row_fn fn, void *ctx, uint64_t at, int by_fp,
		  int64_t cfa_off, int fp_saved)
{
	struct uwprof_rule r;

	memset(&r, 0, sizeof(r));
	r.cfa_type = by_fp ? UWPROF_CFA_FP : UWPROF_CFA_SP;
	r.cfa_off = by_fp ? 16 : (int32_t)cfa_off;
	r.fp_type = fp_saved ? UWPROF_REG_AT_CFA : UWPROF_REG_SAME;
	r.fp_off = fp_saved ? -16 : 0;
	r.ra_type = UWPROF_REG_AT_CFA;
	r.ra_off = -8;
	return fn(ctx, at, &r, UWPROF_CFI_NO_REASON);
}

/*
 * Rows of a switching function: sp-based through its prologue and each
 * epilogue, fp-based everywhere rbp holds its frame.
 */
static int go_switching_run(const struct uwprof_cfi_fde *f,
			    const uint8_t *code, const struct go_frame *g,
			    uwprof_cfi_row_fn fn, void *ctx)
{
	size_t n = f->hi - f->lo, i;
	int64_t sz = g->size;
	int l1, l2, ret;

	ret = go_row(fn, ctx, f->lo, 0, 8, 0);
	if (!ret)
		ret = go_row(fn, ctx, f->lo + g->save_bp, 0, sz + 8, 0);
	if (!ret)
		ret = go_row(fn, ctx, f->lo + g->set_bp, 0, sz + 8, 1);
	if (!ret)
		ret = go_row(fn, ctx, f->lo + g->body, 1, 0, 1);
	for (i = g->body; !ret && i < n; i++) {
		if (!go_epilogue(code + i, n - i, g, &l1, &l2))
			continue;
		ret = go_row(fn, ctx, f->lo + i + l1, 0, sz + 8, 0);
		if (!ret)
			ret = go_row(fn, ctx, f->lo + i + l1 + l2, 0, 8, 0);
		i += l1 + l2;
		if (!ret && i + 1 < n)
			ret = go_row(fn, ctx, f->lo + i + 1, 1, 0, 1);
	}
	return ret;
}

int uwprof_outermost_mark(const struct uwprof_elf *e, struct uwprof_cfi *c)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Sym sym;
	Elf_Data *d;
	size_t i, n;
	uint32_t cie;
	int ret;

	if (!e->is_go)
		return 0;
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
			if (name && name_in(name, go_outermost,
					    sizeof(go_outermost) / sizeof(go_outermost[0])))
				cie = UWPROF_OUTERMOST_CIE;
			else if (name && name_in(name, go_switching,
						 sizeof(go_switching) / sizeof(go_switching[0])))
				cie = UWPROF_GOSWITCH_CIE;
			else
				continue;
			ret = mark_range(c, lo, hi, cie);
			if (ret)
				return ret;
		}
	}
	return 0;
}

int uwprof_outermost_run(const struct uwprof_elf *e,
			 const struct uwprof_cfi_fde *f,
			 uwprof_cfi_row_fn fn, void *ctx)
{
	const uint8_t *code;
	struct uwprof_rule r;
	struct go_frame g;

	memset(&r, 0, sizeof(r));
	if (f->cie == UWPROF_GOSWITCH_CIE) {
		if (!go_switching_decode(e, f->lo, f->hi, &g, &code))
			return go_switching_run(f, code, &g, fn, ctx);
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
