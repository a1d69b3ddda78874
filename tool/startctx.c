// SPDX-License-Identifier: GPL-2.0
/*
 * glibc's __start_context found in an object by makecontext's code, for
 * the table compiler's outermost rows (see startctx.h). Reads the object's
 * symbols, code and relocations only; called by outermost.c.
 */
#include <elf.h>
#include <gelf.h>
#include <stdint.h>
#include <string.h>

#include "startctx.h"

static uint32_t le32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The bytes at [lo, hi) of an executable segment of 'e', or NULL. */
static const uint8_t *code_bytes(const struct uwprof_elf *e, uint64_t lo,
				 uint64_t hi)
{
	const uint8_t *p;
	size_t avail;

	if (hi <= lo || !uwprof_elf_in_exec(e, lo, hi) ||
	    uwprof_elf_vaddr(e, lo, hi - lo, &p, &avail) || avail < hi - lo)
		return NULL;
	return p;
}

#define START_CTX_MAX		4	/* distinct operands that are FDE starts */
#define START_CTX_GAP_MAX	64	/* x86_64 padding, at most .p2align 6 */
#define A64_NOP			0xd503201fU
#define A64_BTI_C		0xd503245fU
#define A64_ADRP_MASK		0x9f000000U
#define A64_ADRP		0x90000000U
#define A64_LDR_X_MASK		0xffc00000U	/* ldr xt, [xn, #imm12 * 8] */
#define A64_LDR_X		0xf9400000U
#define A64_ADD_X_MASK		0xffc00000U	/* add xd, xn, #imm12 */
#define A64_ADD_X		0x91000000U
#define A64_ADRP_REACH		8	/* instructions after adrp for its use */

struct start_ctx {
	uint64_t	addr[START_CTX_MAX];
	size_t		nr;
	int		many;
};

/* mov %rbx,%rsp; mov (%rsp),%rdi (uc_link); test %rdi,%rdi */
static const uint8_t x86_start_ctx[] = {
	0x48, 0x89, 0xdc, 0x48, 0x8b, 0x3c, 0x24, 0x48, 0x85, 0xff,
};

static const uint8_t x86_endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };

/* Whether the code at 'a' is __start_context's. */
static int start_ctx_code(const struct uwprof_elf *e, uint64_t a)
{
	const uint8_t *p;
	uint32_t w;

	if (e->arch == UWPROF_ARCH_X86_64) {
		p = code_bytes(e, a, a + sizeof(x86_endbr64) + sizeof(x86_start_ctx));
		if (p && !memcmp(p, x86_endbr64, sizeof(x86_endbr64)))
			p += sizeof(x86_endbr64);
		else
			p = code_bytes(e, a, a + sizeof(x86_start_ctx));
		return p && !memcmp(p, x86_start_ctx, sizeof(x86_start_ctx));
	}
	/* [nop | bti c]; mov x0, x19; cbnz x0, setcontext; b exit */
	p = code_bytes(e, a, a + 16);
	if (!p)
		return 0;
	w = le32(p);
	if (w == A64_NOP || w == A64_BTI_C)
		p += 4;
	else
		p = code_bytes(e, a, a + 12);
	return p && le32(p) == 0xaa1303e0U &&
	       (le32(p + 4) & 0xff00001fU) == 0xb5000000U &&
	       (le32(p + 8) & 0xfc000000U) == 0x14000000U;
}

/* The FDE of the CFI (no marker) that starts at 'a', or NULL. */
static const struct uwprof_cfi_fde *fde_starting(const struct uwprof_cfi *c,
						 uint64_t a)
{
	size_t i;

	for (i = 0; i < c->nr_fdes; i++)
		if (c->fdes[i].lo == a && c->fdes[i].cie < c->nr_cies)
			return &c->fdes[i];
	return NULL;
}

static void start_ctx_add(const struct uwprof_elf *e, const struct uwprof_cfi *c,
			  struct start_ctx *sc, uint64_t a)
{
	size_t i;

	if (!fde_starting(c, a) || !start_ctx_code(e, a))
		return;
	for (i = 0; i < sc->nr; i++)
		if (sc->addr[i] == a)
			return;
	if (sc->nr == START_CTX_MAX)
		sc->many = 1;
	else
		sc->addr[sc->nr++] = a;
}

/* The 8-byte word a relative relocation puts at 'slot', or 0. */
static uint64_t a64_relative(const struct uwprof_elf *e, uint64_t slot)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Rela r;
	Elf_Data *d;
	size_t i, n;

	while ((scn = elf_nextscn(e->elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA ||
		    !(sh.sh_flags & SHF_ALLOC) || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (i = 0; i < n; i++)
			if (gelf_getrela(d, (int)i, &r) && r.r_offset == slot &&
			    GELF_R_TYPE(r.r_info) == R_AARCH64_RELATIVE)
				return (uint64_t)r.r_addend;
	}
	return 0;
}

/* Addresses makecontext's code at [lo, hi) computes into a register. */
static void start_ctx_operands(const struct uwprof_elf *e,
			       const struct uwprof_cfi *c, struct start_ctx *sc,
			       uint64_t lo, uint64_t hi)
{
	const uint8_t *code = code_bytes(e, lo, hi);
	uint64_t off, k, page;
	uint32_t w, u, rd;
	int32_t disp;

	if (!code)
		return;
	if (e->arch == UWPROF_ARCH_X86_64) {
		/* lea disp32(%rip), %r64: REX.W 8d, mod 00, rm 101 */
		for (off = 0; off + 7 <= hi - lo; off++) {
			if ((code[off] & 0xfb) != 0x48 || code[off + 1] != 0x8d ||
			    (code[off + 2] & 0xc7) != 0x05)
				continue;
			disp = (int32_t)le32(code + off + 3);
			start_ctx_add(e, c, sc, lo + off + 7 + (int64_t)disp);
		}
		return;
	}
	for (off = 0; off + 4 <= hi - lo; off += 4) {
		w = le32(code + off);
		if ((w & A64_ADRP_MASK) != A64_ADRP)
			continue;
		rd = w & 31;
		/* immhi:immlo, in pages, sign-extended */
		page = ((lo + off) & ~0xfffULL) +
		       (uint64_t)((int64_t)((uint64_t)(((w >> 5) & 0x7ffff) << 2 |
							((w >> 29) & 3)) << 43) >> 31);
		for (k = off + 4; k < off + 4 * (A64_ADRP_REACH + 1) &&
		     k + 4 <= hi - lo; k += 4) {
			u = le32(code + k);
			if (((u >> 5) & 31) != rd)
				continue;
			if ((u & A64_ADD_X_MASK) == A64_ADD_X) {
				start_ctx_add(e, c, sc, page + ((u >> 10) & 0xfff));
				break;
			}
			if ((u & A64_LDR_X_MASK) == A64_LDR_X) {
				start_ctx_add(e, c, sc, a64_relative(e,
					page + ((u >> 10) & 0xfff) * 8));
				break;
			}
		}
	}
}

/* Length of the x86_64 nop (or int3) at p[0, n), or 0. */
static size_t x86_nop_len(const uint8_t *p, size_t n)
{
	size_t i = 0, len;

	if (n && p[0] == 0xcc)
		return 1;
	while (i < n && i < 14 && (p[i] == 0x66 || p[i] == 0x2e))
		i++;
	if (i < n && p[i] == 0x90)
		return i + 1;
	if (i + 3 > n || p[i] != 0x0f || p[i + 1] != 0x1f)
		return 0;
	/* nopl with modrm 00, 40 + disp8, 44 + sib + disp8, 80, 84 (disp32) */
	switch (p[i + 2]) {
	case 0x00:
		len = 3;
		break;
	case 0x40:
		len = 4;
		break;
	case 0x44:
		len = 5;
		break;
	case 0x80:
		len = 7;
		break;
	case 0x84:
		len = 8;
		break;
	default:
		return 0;
	}
	return i + len <= n ? i + len : 0;
}

/*
 * Where the code before 'a' ends: the highest end of the FDEs and sized
 * symbols that start below 'a'. Returns -1 when one of them reaches past
 * it.
 */
struct code_end {
	uint64_t a, end;
};

static int code_end_sym(void *arg, const GElf_Sym *sym, const char *name)
{
	struct code_end *ce = arg;
	uint64_t hi;

	(void)name;
	if (!sym->st_size || sym->st_value >= ce->a)
		return 0;
	hi = sym->st_value + sym->st_size;
	if (hi > ce->a)
		return -1;
	if (hi > ce->end)
		ce->end = hi;
	return 0;
}

static int code_end_before(const struct uwprof_elf *e,
			   const struct uwprof_cfi *c, uint64_t a,
			   uint64_t *end)
{
	struct code_end ce = { a, 0 };
	size_t i;

	for (i = 0; i < c->nr_fdes; i++) {
		if (c->fdes[i].lo >= a)
			continue;
		if (c->fdes[i].hi > a)
			return -1;
		if (c->fdes[i].hi > ce.end)
			ce.end = c->fdes[i].hi;
	}
	if (uwprof_elf_each_sym(e, code_end_sym, &ce))
		return -1;
	*end = ce.end;
	return 0;
}

/*
 * The byte (x86_64) or word (arm64) before 'a' a walk looks up for a
 * return address of 'a', when it is padding after the code before it:
 * its start, or 0.
 */
static uint64_t start_ctx_pad(const struct uwprof_elf *e,
			      const struct uwprof_cfi *c, uint64_t a)
{
	const uint8_t *p;
	uint64_t end, at;
	size_t len;

	if (a < 4 || code_end_before(e, c, a, &end))
		return 0;
	if (e->arch == UWPROF_ARCH_ARM64) {
		p = code_bytes(e, a - 4, a);
		return p && end <= a - 4 &&
		       (le32(p) == A64_NOP || le32(p) == 0) ? a - 4 : 0;
	}
	if (end >= a || a - end > START_CTX_GAP_MAX)
		return 0;
	p = code_bytes(e, end, a);
	for (at = end; p && at < a; at += len) {
		len = x86_nop_len(p + (at - end), a - at);
		if (!len)
			return 0;
	}
	return p ? a - 1 : 0;
}

/* makecontext's symbols: each names the code whose operands are read. */
struct start_ctx_scan {
	const struct uwprof_elf *e;
	const struct uwprof_cfi *c;
	struct start_ctx sc;
};

static int start_ctx_sym(void *arg, const GElf_Sym *sym, const char *name)
{
	struct start_ctx_scan *k = arg;

	if (GELF_ST_TYPE(sym->st_info) == STT_FUNC && sym->st_size && name &&
	    (!strcmp(name, "makecontext") || !strcmp(name, "__makecontext")))
		start_ctx_operands(k->e, k->c, &k->sc, sym->st_value,
				   sym->st_value + sym->st_size);
	return 0;
}

int uwprof_startctx_find(const struct uwprof_elf *e,
			 const struct uwprof_cfi *c, uint64_t *pad,
			 uint64_t *start)
{
	struct start_ctx_scan k = { .e = e, .c = c, .sc = { .nr = 0 } };

	if (e->arch != UWPROF_ARCH_X86_64 && e->arch != UWPROF_ARCH_ARM64)
		return 0;
	uwprof_elf_each_sym(e, start_ctx_sym, &k);
	if (k.sc.nr != 1 || k.sc.many)
		return 0;
	*start = k.sc.addr[0];
	*pad = start_ctx_pad(e, c, *start);
	return *pad != 0;
}

/*
 * arm64 __swapcontext: 'stp xzr, x30, [x0, #n]' saves the caller's return
 * address in the ucontext being saved, then 'adr x30, 2f' makes lr the
 * address at which that context resumes ('2: [nop]; mov x30, x1; ret',
 * x1 being the saved x30 once setcontext restored it). From the adr to
 * label 2, lr is not a return address and the caller's is only in memory
 * at an address no rule can say (x0 is reused for the system call); its
 * CFI says lr all along, which made the label look like its caller.
 */
#define A64_STP_XZR_X30_X0_MASK	0xffc07fffU	/* stp xzr, x30, [x0, #imm7 * 8] */
#define A64_STP_XZR_X30_X0	0xa900781fU
#define A64_ADR_X30_MASK	0x9f00001fU	/* adr x30, label */
#define A64_ADR_X30		0x1000001eU
#define A64_MOV_X30_X1		0xaa0103feU
#define A64_RET			0xd65f03c0U

static int a64_landing(uint32_t w)
{
	return w == A64_NOP || w == A64_BTI_C;
}

int uwprof_startctx_swap_code(const struct uwprof_elf *e, uint64_t lo,
			      uint64_t hi, struct uwprof_swapctx *s)
{
	const uint8_t *p = code_bytes(e, lo, hi);
	uint64_t at = lo, label;
	int64_t imm;
	uint32_t w;

	if (!p || hi - lo < 12)
		return 0;
	if (a64_landing(le32(p)))
		at += 4;
	if ((le32(p + (at - lo)) & A64_STP_XZR_X30_X0_MASK) != A64_STP_XZR_X30_X0)
		return 0;
	at += 4;
	w = le32(p + (at - lo));
	if ((w & A64_ADR_X30_MASK) != A64_ADR_X30)
		return 0;
	/* immhi:immlo, in bytes, sign-extended */
	imm = (int64_t)((uint64_t)(((w >> 5) & 0x7ffff) << 2 | ((w >> 29) & 3))
			<< 43) >> 43;
	label = at + (uint64_t)imm;
	if (label <= at || label > hi - 8 || (label & 3))
		return 0;
	if (a64_landing(le32(p + (label - lo))))
		label += 4;
	if (label > hi - 8 || le32(p + (label - lo)) != A64_MOV_X30_X1 ||
	    le32(p + (label - lo) + 4) != A64_RET)
		return 0;
	s->lo = lo;
	s->hi = hi;
	s->lost = at + 4;
	s->in_x1 = label;
	return 1;
}

struct swap_ctx_scan {
	const struct uwprof_elf *e;
	const struct uwprof_cfi *c;
	struct uwprof_swapctx *s;
	int found;
};

/* 1 (stop: none) when two functions claim the name; aliases name one. */
static int swap_ctx_sym(void *arg, const GElf_Sym *sym, const char *name)
{
	struct swap_ctx_scan *k = arg;
	const struct uwprof_cfi_fde *f;
	struct uwprof_swapctx t;

	if (GELF_ST_TYPE(sym->st_info) != STT_FUNC || !sym->st_size || !name ||
	    (strcmp(name, "swapcontext") && strcmp(name, "__swapcontext")))
		return 0;
	f = fde_starting(k->c, sym->st_value);
	if (!f || f->hi < sym->st_value + sym->st_size ||
	    !uwprof_startctx_swap_code(k->e, sym->st_value, f->hi, &t))
		return 0;
	if (k->found && (t.lo != k->s->lo || t.lost != k->s->lost))
		return 1;
	*k->s = t;
	k->found = 1;
	return 0;
}

int uwprof_startctx_swap_find(const struct uwprof_elf *e,
			      const struct uwprof_cfi *c,
			      struct uwprof_swapctx *s)
{
	struct swap_ctx_scan k = { .e = e, .c = c, .s = s, .found = 0 };

	if (e->arch != UWPROF_ARCH_ARM64)
		return 0;
	if (uwprof_elf_each_sym(e, swap_ctx_sym, &k))
		return 0;
	return k.found;
}
