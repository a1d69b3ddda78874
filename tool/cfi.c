// SPDX-License-Identifier: GPL-2.0
/*
 * CIE/FDE parsing and the CFA state machine for the table compiler.
 *
 * Only three columns matter to the unwinder: the CFA, the frame pointer
 * (x86_64 rbp = 6, arm64 x29 = 29) and the return address (the CIE's
 * return-address column). Every other register's rules are decoded for
 * their length and dropped. Every read is bounds-checked against the entry
 * it belongs to; a malformed entry fails the whole section with one message
 * naming the section and the byte offset, because a table built from CFI
 * that does not parse would be a guess.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfi.h"
#include "table.h"

/* DWARF constants, spelled out so no libdw header is needed. */
enum {
	CFA_advance_loc = 0x40, CFA_offset = 0x80, CFA_restore = 0xc0,
	CFA_nop = 0x00, CFA_set_loc = 0x01, CFA_advance_loc1 = 0x02,
	CFA_advance_loc2 = 0x03, CFA_advance_loc4 = 0x04,
	CFA_offset_extended = 0x05, CFA_restore_extended = 0x06,
	CFA_undefined = 0x07, CFA_same_value = 0x08, CFA_register = 0x09,
	CFA_remember_state = 0x0a, CFA_restore_state = 0x0b,
	CFA_def_cfa = 0x0c, CFA_def_cfa_register = 0x0d,
	CFA_def_cfa_offset = 0x0e, CFA_def_cfa_expression = 0x0f,
	CFA_expression = 0x10, CFA_offset_extended_sf = 0x11,
	CFA_def_cfa_sf = 0x12, CFA_def_cfa_offset_sf = 0x13,
	CFA_val_offset = 0x14, CFA_val_offset_sf = 0x15,
	CFA_val_expression = 0x16, CFA_MIPS_advance_loc8 = 0x1d,
	CFA_GNU_window_save = 0x2d, CFA_GNU_args_size = 0x2e,
	CFA_GNU_negative_offset_extended = 0x2f,
};

enum {
	PE_absptr = 0x00, PE_uleb128 = 0x01, PE_udata2 = 0x02,
	PE_udata4 = 0x03, PE_udata8 = 0x04, PE_signed = 0x08,
	PE_sleb128 = 0x09, PE_sdata2 = 0x0a, PE_sdata4 = 0x0b,
	PE_sdata8 = 0x0c, PE_pcrel = 0x10, PE_textrel = 0x20,
	PE_datarel = 0x30, PE_funcrel = 0x40, PE_aligned = 0x50,
	PE_indirect = 0x80, PE_omit = 0xff,
};

#define REMEMBER_DEPTH	64

struct cfi_reg {
	uint8_t		type;		/* enum uwprof_reg_rule */
	int64_t		off;
};

struct cfi_state {
	uint8_t		cfa_is_expr;
	uint8_t		pac;
	uint32_t	cfa_reg;
	int64_t		cfa_off;
	const uint8_t	*expr;
	uint64_t	expr_len;
	struct cfi_reg	fp;
	struct cfi_reg	ra;
	uint64_t	others;		/* registers 0-63 but sp, fp, ra with a rule */
};

struct uwprof_cfi_cie {
	uint64_t	off;
	uint64_t	code_align;
	int64_t		data_align;
	uint64_t	ra_reg;
	uint64_t	insn;		/* initial instructions [insn, end) */
	uint64_t	end;
	uint8_t		fde_enc;
	uint8_t		addr_size;
	uint8_t		aug_z;
	uint8_t		signal;
	struct cfi_state init;
};

struct cur {
	const uint8_t	*p;
	const uint8_t	*end;
};

static int cfi_fail(struct uwprof_cfi *c, const uint8_t *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int cfi_fail(struct uwprof_cfi *c, const uint8_t *at, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	if (c->err && c->errlen) {
		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		snprintf(c->err, c->errlen, "%s: %s+0x%llx: %s", c->path,
			 c->sec_name, (unsigned long long)(at - c->data), msg);
	}
	return -EINVAL;
}

static inline uint64_t le_get(const uint8_t *p, int n)
{
	uint64_t v = 0;
	int i;

	for (i = n - 1; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static inline int rd_fixed(struct cur *k, int n, uint64_t *v)
{
	if (k->end - k->p < n)
		return -1;
	*v = le_get(k->p, n);
	k->p += n;
	return 0;
}

static inline int rd_u8(struct cur *k, uint8_t *v)
{
	if (k->p >= k->end)
		return -1;
	*v = *k->p++;
	return 0;
}

static inline int rd_uleb(struct cur *k, uint64_t *v)
{
	uint64_t r = 0;
	unsigned int shift = 0;
	uint8_t b;

	do {
		if (k->p >= k->end)
			return -1;
		b = *k->p++;
		if (shift < 64)
			r |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	*v = r;
	return 0;
}

static inline int rd_sleb(struct cur *k, int64_t *v)
{
	uint64_t r = 0;
	unsigned int shift = 0;
	uint8_t b;

	do {
		if (k->p >= k->end)
			return -1;
		b = *k->p++;
		if (shift < 64)
			r |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		r |= ~(uint64_t)0 << shift;
	*v = (int64_t)r;
	return 0;
}

/*
 * Read a pointer in encoding 'enc'. 'base_addr' is the address of the
 * first byte of the cursor's buffer, so pcrel and aligned work for both
 * sections and .eh_frame_hdr.
 */
static int rd_enc(struct cur *k, const uint8_t *buf, uint64_t base_addr,
		  uint8_t enc, int addr_size, uint64_t text, uint64_t data,
		  uint64_t *val)
{
	uint64_t here = base_addr + (uint64_t)(k->p - buf);
	uint64_t v, base = 0;
	int64_t s;

	if (enc == PE_omit)
		return -1;
	switch (enc & 0x70) {
	case PE_absptr:
		break;
	case PE_pcrel:
		base = here;
		break;
	case PE_textrel:
		base = text;
		break;
	case PE_datarel:
		base = data;
		break;
	case PE_aligned: {
		uint64_t pad = (-here) & (uint64_t)(addr_size - 1);

		if ((uint64_t)(k->end - k->p) < pad)
			return -1;
		k->p += pad;
		break;
	}
	default:
		return -1;
	}
	switch (enc & 0x0f) {
	case PE_absptr:
	case PE_signed:
		if (rd_fixed(k, addr_size, &v))
			return -1;
		if ((enc & 0x0f) == PE_signed && addr_size == 4)
			v = (uint64_t)(int64_t)(int32_t)v;
		break;
	case PE_uleb128:
		if (rd_uleb(k, &v))
			return -1;
		break;
	case PE_udata2:
		if (rd_fixed(k, 2, &v))
			return -1;
		break;
	case PE_udata4:
		if (rd_fixed(k, 4, &v))
			return -1;
		break;
	case PE_udata8:
	case PE_sdata8:
		if (rd_fixed(k, 8, &v))
			return -1;
		break;
	case PE_sleb128:
		if (rd_sleb(k, &s))
			return -1;
		v = (uint64_t)s;
		break;
	case PE_sdata2:
		if (rd_fixed(k, 2, &v))
			return -1;
		v = (uint64_t)(int64_t)(int16_t)v;
		break;
	case PE_sdata4:
		if (rd_fixed(k, 4, &v))
			return -1;
		v = (uint64_t)(int64_t)(int32_t)v;
		break;
	default:
		return -1;
	}
	*val = base + v;
	return 0;
}

int uwprof_cfi_read_hdr_ptr(const uint8_t *p, size_t avail, uint8_t enc,
			    uint64_t addr, uint64_t *val, size_t *used)
{
	struct cur k = { p, p + avail };

	if (enc & PE_indirect)
		return -EINVAL;
	if (rd_enc(&k, p, addr, enc, 8, 0, addr, val))
		return -EINVAL;
	*used = (size_t)(k.p - p);
	return 0;
}

static int fp_reg(const struct uwprof_cfi *c)
{
	return c->arch == UWPROF_ARCH_X86_64 ? 6 : 29;
}

/*
 * General registers a CFA may be based on, by DWARF number: x86_64 rax-r15,
 * arm64 x0-x29 (x30 holds return addresses, sp is 31).
 */
static uint32_t gpr_count(const struct uwprof_cfi *c)
{
	return c->arch == UWPROF_ARCH_ARM64 ? 30 : 16;
}

static int sp_reg(const struct uwprof_cfi *c)
{
	return c->arch == UWPROF_ARCH_X86_64 ? 7 : 31;
}

/* Entry header: length and id. Returns the id field's cursor position. */
static int cfi_entry(struct uwprof_cfi *c, uint64_t off, struct cur *ent,
		     uint64_t *id, int *is64, uint64_t *next)
{
	struct cur k = { c->data + off, c->data + c->size };
	uint64_t len;

	if (rd_fixed(&k, 4, &len))
		return cfi_fail(c, c->data + off, "truncated entry length");
	*is64 = 0;
	if (len == 0xffffffffULL) {
		if (rd_fixed(&k, 8, &len))
			return cfi_fail(c, c->data + off,
					"truncated 64-bit entry length");
		*is64 = 1;
	}
	if (len > (uint64_t)(k.end - k.p))
		return cfi_fail(c, c->data + off,
				"entry length 0x%llx runs past the section end",
				(unsigned long long)len);
	ent->p = k.p;
	ent->end = k.p + len;
	*next = (uint64_t)(ent->end - c->data);
	if (len == 0) {
		*id = 0;
		return 0;
	}
	if (rd_fixed(ent, *is64 ? 8 : 4, id))
		return cfi_fail(c, k.p, "entry too short for its CIE id");
	return 0;
}

static int cfi_exec(struct uwprof_cfi *c, const struct uwprof_cfi_cie *cie,
		    uint64_t insn, uint64_t end, struct cfi_state *s,
		    const struct uwprof_cfi_fde *f, int signal,
		    uwprof_cfi_row_fn fn, void *ctx);

static int cfi_cie_hash_add(struct uwprof_cfi *c, uint64_t off, uint32_t idx)
{
	size_t i;

	if (c->nr_cies * 2 >= c->hash_mask) {
		size_t n = c->hash_mask ? (c->hash_mask + 1) * 2 : 64;
		uint32_t *h = calloc(n, sizeof(*h));
		size_t j;

		if (!h)
			return -ENOMEM;
		for (j = 0; j < c->nr_cies; j++) {
			i = (c->cies[j].off * 0x9e3779b97f4a7c15ULL >> 20) & (n - 1);
			while (h[i])
				i = (i + 1) & (n - 1);
			h[i] = (uint32_t)j + 1;
		}
		free(c->cie_hash);
		c->cie_hash = h;
		c->hash_mask = n - 1;
		if (idx < c->nr_cies)
			return 0;
	}
	i = (off * 0x9e3779b97f4a7c15ULL >> 20) & c->hash_mask;
	while (c->cie_hash[i])
		i = (i + 1) & c->hash_mask;
	c->cie_hash[i] = idx + 1;
	return 0;
}

static long cfi_cie_find(const struct uwprof_cfi *c, uint64_t off)
{
	size_t i;

	if (!c->cie_hash)
		return -1;
	i = (off * 0x9e3779b97f4a7c15ULL >> 20) & c->hash_mask;
	while (c->cie_hash[i]) {
		if (c->cies[c->cie_hash[i] - 1].off == off)
			return c->cie_hash[i] - 1;
		i = (i + 1) & c->hash_mask;
	}
	return -1;
}

/* Parse the CIE at 'off' (once) and return its index. */
static int cfi_cie_get(struct uwprof_cfi *c, uint64_t off, const uint8_t *ref,
		       uint32_t *out)
{
	struct uwprof_cfi_cie *cie;
	struct cur ent, aug_k;
	const uint8_t *aug, *p;
	uint64_t id, next, v, aug_len = 0;
	int is64, ret, signal = 0;
	long found;
	uint8_t ver, b;

	found = cfi_cie_find(c, off);
	if (found >= 0) {
		*out = (uint32_t)found;
		return 0;
	}
	if (off >= c->size)
		return cfi_fail(c, ref, "CIE pointer 0x%llx outside the section",
				(unsigned long long)off);
	ret = cfi_entry(c, off, &ent, &id, &is64, &next);
	if (ret)
		return ret;
	if (ent.p == ent.end ||
	    (c->is_eh ? id != 0 : id != (is64 ? ~0ULL : 0xffffffffULL)))
		return cfi_fail(c, ref, "CIE pointer 0x%llx does not point at a CIE",
				(unsigned long long)off);
	if (c->nr_cies == c->cap_cies) {
		size_t n = c->cap_cies ? c->cap_cies * 2 : 16;
		void *q = realloc(c->cies, n * sizeof(*c->cies));

		if (!q)
			return -ENOMEM;
		c->cies = q;
		c->cap_cies = n;
	}
	cie = &c->cies[c->nr_cies];
	memset(cie, 0, sizeof(*cie));
	cie->off = off;
	cie->addr_size = 8;
	cie->fde_enc = PE_absptr;
	p = ent.p;
	if (rd_u8(&ent, &ver))
		return cfi_fail(c, p, "truncated CIE");
	if (ver != 1 && ver != 3 && ver != 4)
		return cfi_fail(c, p, "CIE version %u not supported", ver);
	aug = ent.p;
	while (ent.p < ent.end && *ent.p)
		ent.p++;
	if (ent.p >= ent.end)
		return cfi_fail(c, aug, "unterminated CIE augmentation string");
	ent.p++;
	if (aug[0] == 'e' && aug[1] == 'h') {
		if (rd_fixed(&ent, 8, &v))
			return cfi_fail(c, ent.p, "truncated CIE");
	}
	if (ver == 4) {
		uint8_t asz, ssz;

		p = ent.p;
		if (rd_u8(&ent, &asz) || rd_u8(&ent, &ssz))
			return cfi_fail(c, p, "truncated CIE");
		if ((asz != 4 && asz != 8) || ssz != 0)
			return cfi_fail(c, p,
					"CIE address size %u / segment size %u not supported",
					asz, ssz);
		cie->addr_size = asz;
	}
	p = ent.p;
	if (rd_uleb(&ent, &cie->code_align) || rd_sleb(&ent, &cie->data_align))
		return cfi_fail(c, p, "truncated CIE alignment factors");
	p = ent.p;
	if (ver == 1) {
		if (rd_u8(&ent, &b))
			return cfi_fail(c, p, "truncated CIE");
		cie->ra_reg = b;
	} else if (rd_uleb(&ent, &cie->ra_reg)) {
		return cfi_fail(c, p, "truncated CIE");
	}
	if (aug[0] == 'z') {
		p = ent.p;
		if (rd_uleb(&ent, &aug_len) ||
		    aug_len > (uint64_t)(ent.end - ent.p))
			return cfi_fail(c, p, "bad CIE augmentation length");
		aug_k.p = ent.p;
		aug_k.end = ent.p + aug_len;
		cie->aug_z = 1;
		for (p = aug + 1; *p; p++) {
			const uint8_t *at = aug_k.p;
			uint8_t enc;

			if (*p == 'R' || *p == 'L') {
				if (rd_u8(&aug_k, &enc))
					return cfi_fail(c, at, "truncated CIE augmentation data");
				if (*p == 'R')
					cie->fde_enc = enc;
			} else if (*p == 'P') {
				if (rd_u8(&aug_k, &enc) ||
				    rd_enc(&aug_k, c->data, c->addr, enc & 0x7f,
					   cie->addr_size, c->text_addr,
					   c->data_addr, &v))
					return cfi_fail(c, at,
							"bad CIE personality pointer");
			} else if (*p == 'S') {
				signal = 1;
			} else if (*p != 'B' && *p != 'G') {
				/* 'z' lets a reader skip what it does not know. */
				break;
			}
		}
		ent.p += aug_len;
	} else if (aug[0] && !(aug[0] == 'e' && aug[1] == 'h' && !aug[2])) {
		return cfi_fail(c, aug, "unknown CIE augmentation \"%.16s\"",
				(const char *)aug);
	}
	if (cie->fde_enc != PE_omit && (cie->fde_enc & PE_indirect))
		return cfi_fail(c, aug, "indirect FDE address encoding");
	cie->signal = signal;
	cie->insn = (uint64_t)(ent.p - c->data);
	cie->end = (uint64_t)(ent.end - c->data);

	/* Initial state, before the initial instructions. */
	cie->init.cfa_reg = sp_reg(c);
	cie->init.fp.type = UWPROF_REG_SAME;
	cie->init.ra.type = UWPROF_REG_SAME;
	ret = cfi_exec(c, cie, cie->insn, cie->end, &cie->init, NULL, 0,
		       NULL, NULL);
	if (ret)
		return ret;
	ret = cfi_cie_hash_add(c, off, (uint32_t)c->nr_cies);
	if (ret)
		return ret;
	*out = (uint32_t)c->nr_cies++;
	return 0;
}

struct uwprof_cfi_fde *uwprof_cfi_fde_add(struct uwprof_cfi *c)
{
	struct uwprof_cfi_fde *f;

	if (c->nr_fdes == c->cap_fdes) {
		size_t n = c->cap_fdes ? c->cap_fdes * 2 : 1024;

		f = realloc(c->fdes, n * sizeof(*f));
		if (!f)
			return NULL;
		c->fdes = f;
		c->cap_fdes = n;
	}
	f = &c->fdes[c->nr_fdes++];
	memset(f, 0, sizeof(*f));
	return f;
}

int uwprof_cfi_parse(struct uwprof_cfi *c)
{
	uint64_t off = 0, next, id, lo, range;
	const struct uwprof_cfi_cie *cie;
	struct uwprof_cfi_fde *f;
	struct cur ent;
	uint32_t ci;
	int is64, ret;

	while (off < c->size) {
		const uint8_t *idp;

		ret = cfi_entry(c, off, &ent, &id, &is64, &next);
		if (ret)
			return ret;
		if (ent.p == ent.end) {
			if (c->stop_at_zero)
				break;
			off = next;
			continue;
		}
		idp = ent.p - (is64 ? 8 : 4);
		if (c->is_eh ? id == 0 : id == (is64 ? ~0ULL : 0xffffffffULL)) {
			ret = cfi_cie_get(c, off, idp, &ci);
			if (ret)
				return ret;
			off = next;
			continue;
		}
		if (c->is_eh) {
			uint64_t idoff = (uint64_t)(idp - c->data);

			if (id > idoff)
				return cfi_fail(c, idp,
						"CIE pointer 0x%llx reaches before the section",
						(unsigned long long)id);
			id = idoff - id;
		}
		ret = cfi_cie_get(c, id, idp, &ci);
		if (ret)
			return ret;
		cie = &c->cies[ci];
		{
			const uint8_t *at = ent.p;

			if (rd_enc(&ent, c->data, c->addr, cie->fde_enc,
				   cie->addr_size, c->text_addr, c->data_addr,
				   &lo) ||
			    rd_enc(&ent, c->data, c->addr,
				   cie->fde_enc & 0x0f, cie->addr_size,
				   0, 0, &range))
				return cfi_fail(c, at, "bad FDE address range");
			if (cie->aug_z) {
				uint64_t alen;

				at = ent.p;
				if (rd_uleb(&ent, &alen) ||
				    alen > (uint64_t)(ent.end - ent.p))
					return cfi_fail(c, at,
							"bad FDE augmentation length");
				ent.p += alen;
			}
		}
		if (cie->addr_size == 4) {
			lo &= 0xffffffffULL;
			range &= 0xffffffffULL;
		}
		if (range == 0) {
			off = next;
			continue;
		}
		if (lo + range < lo)
			return cfi_fail(c, idp, "FDE range wraps around");
		f = uwprof_cfi_fde_add(c);
		if (!f)
			return -ENOMEM;
		f->lo = lo;
		f->hi = lo + range;
		f->off = off;
		f->insn = (uint64_t)(ent.p - c->data);
		f->end = (uint64_t)(ent.end - c->data);
		f->cie = ci;
		f->__pad = 0;
		off = next;
	}
	return 0;
}

int uwprof_cfi_fde_signal(const struct uwprof_cfi *c,
			  const struct uwprof_cfi_fde *f)
{
	return c->cies[f->cie].signal;
}

/*
 * The x86_64 lazy-PLT CFA expression binutils emits:
 *   breg7 (rsp) N; breg16 (rip) 0; lit15; and; litT | const1u T; ge;
 *   lit3; shl; plus
 * i.e. CFA = rsp + N + ((rip & 15) >= T ? 8 : 0).
 */
static int cfi_match_plt(const uint8_t *e, uint64_t len, int64_t *n,
			 uint8_t *t)
{
	struct cur k = { e, e + len };
	int64_t off, z;
	uint8_t b;

	if (rd_u8(&k, &b) || b != 0x77 || rd_sleb(&k, &off))
		return 0;
	if (rd_u8(&k, &b) || b != 0x80 || rd_sleb(&k, &z) || z != 0)
		return 0;
	if (rd_u8(&k, &b) || b != 0x3f || rd_u8(&k, &b) || b != 0x1a)
		return 0;
	if (rd_u8(&k, &b))
		return 0;
	if (b >= 0x30 && b <= 0x3f) {
		*t = b - 0x30;
	} else if (b == 0x08) {
		if (rd_u8(&k, &b) || b > 15)
			return 0;
		*t = b;
	} else {
		return 0;
	}
	if (k.end - k.p != 4 || memcmp(k.p, "\x2a\x33\x24\x22", 4))
		return 0;
	if (off < 0 || off > INT32_MAX)
		return 0;
	*n = off;
	return 1;
}

/*
 * A saved sp on the stack: breg<reg> N; deref; and optionally
 * plus_uconst K, i.e. CFA = *(reg + N) + K. Returns the register or -1;
 * N and K as the expression has them, whether or not a rule holds them.
 */
static int cfi_match_deref(const uint8_t *e, uint64_t len, int64_t *n,
			   uint64_t *k)
{
	struct cur c = { e, e + len };
	uint64_t add = 0;
	uint8_t op;
	int reg;

	if (rd_u8(&c, &op) || op < 0x70 || op > 0x8f || rd_sleb(&c, n))
		return -1;
	reg = op - 0x70;
	if (rd_u8(&c, &op) || op != 0x06)
		return -1;
	if (c.p < c.end && (rd_u8(&c, &op) || op != 0x23 ||
			    rd_uleb(&c, &add)))
		return -1;
	if (c.p != c.end)
		return -1;
	*k = add;
	return reg;
}

static void cfi_reg_rule(const struct cfi_reg *r, uint8_t *type, int32_t *off,
			 uint8_t *reason, uint8_t expr_reason)
{
	*type = r->type;
	*off = 0;
	switch (r->type) {
	case UWPROF_REG_AT_CFA:
	case UWPROF_REG_VAL_CFA:
	case UWPROF_REG_IN_REG:
		if (r->off < INT32_MIN || r->off > INT32_MAX ||
		    (r->type == UWPROF_REG_IN_REG && r->off < 0)) {
			*type = UWPROF_REG_UNSUPPORTED;
			if (*reason == UWPROF_CFI_NO_REASON)
				*reason = UWPROF_UNSUP_RANGE;
		} else {
			*off = (int32_t)r->off;
		}
		break;
	case UWPROF_REG_UNSUPPORTED:
		if (*reason == UWPROF_CFI_NO_REASON)
			*reason = expr_reason;
		break;
	default:
		break;
	}
}

static void cfi_to_rule(const struct uwprof_cfi *c, const struct cfi_state *s,
			int signal, struct uwprof_rule *r, uint8_t *reason)
{
	int64_t n;
	uint64_t k;
	uint8_t t;
	int reg;

	memset(r, 0, sizeof(*r));
	*reason = UWPROF_CFI_NO_REASON;
	if (s->cfa_is_expr) {
		if (c->arch == UWPROF_ARCH_X86_64 &&
		    cfi_match_plt(s->expr, s->expr_len, &n, &t)) {
			r->cfa_type = UWPROF_CFA_PLT;
			r->cfa_off = (int32_t)n;
			r->cfa_arg = t;
		} else if ((reg = cfi_match_deref(s->expr, s->expr_len, &n,
						  &k)) >= 0 &&
			   (reg == sp_reg(c) || reg == fp_reg(c))) {
			if (n < INT32_MIN || n > INT32_MAX || k > UINT32_MAX) {
				r->cfa_type = UWPROF_CFA_UNSUPPORTED;
				*reason = UWPROF_UNSUP_RANGE;
			} else {
				r->cfa_type = reg == sp_reg(c) ?
					      UWPROF_CFA_DEREF_SP :
					      UWPROF_CFA_DEREF_FP;
				r->cfa_off = (int32_t)n;
				r->cfa_arg = (uint32_t)k;
			}
		} else {
			r->cfa_type = UWPROF_CFA_UNSUPPORTED;
			*reason = UWPROF_UNSUP_CFA_EXPR;
		}
	} else if (s->cfa_off < INT32_MIN || s->cfa_off > INT32_MAX) {
		r->cfa_type = UWPROF_CFA_UNSUPPORTED;
		*reason = UWPROF_UNSUP_RANGE;
	} else if (s->cfa_reg != (uint32_t)sp_reg(c) &&
		   s->cfa_reg != (uint32_t)fp_reg(c)) {
		/* Known in the interrupted frame only: the module's walk. */
		if (s->cfa_reg < gpr_count(c)) {
			r->cfa_type = UWPROF_CFA_REG;
			r->cfa_arg = s->cfa_reg;
			r->cfa_off = (int32_t)s->cfa_off;
		} else {
			r->cfa_type = UWPROF_CFA_UNSUPPORTED;
			*reason = UWPROF_UNSUP_CFA_REG;
		}
	} else {
		r->cfa_type = s->cfa_reg == (uint32_t)sp_reg(c) ?
			      UWPROF_CFA_SP : UWPROF_CFA_FP;
		r->cfa_off = (int32_t)s->cfa_off;
	}
	cfi_reg_rule(&s->fp, &r->fp_type, &r->fp_off, reason,
		     UWPROF_UNSUP_FP_EXPR);
	cfi_reg_rule(&s->ra, &r->ra_type, &r->ra_off, reason,
		     UWPROF_UNSUP_RA_EXPR);
	if (signal) {
		r->flags |= UWPROF_RULE_SIGNAL;
		/* The kernel restores registers from its own signal frame. */
		*reason = UWPROF_CFI_NO_REASON;
	}
	if (s->pac)
		r->flags |= UWPROF_RULE_PAC;
	if (s->others & ((1ULL << gpr_count(c)) - 1))
		r->flags |= UWPROF_RULE_REGS;
}

static int cfi_emit(struct uwprof_cfi *c, const struct cfi_state *s,
		    int signal, uint64_t loc, uwprof_cfi_row_fn fn, void *ctx)
{
	struct uwprof_rule r;
	uint8_t reason;

	(void)c;
	cfi_to_rule(c, s, signal, &r, &reason);
	return fn(ctx, loc, &r, reason);
}

/*
 * Which tracked column a DWARF register is: fp, ra, or NULL. Any other
 * register but sp is marked in s->others as having a rule, which the
 * caller clears again for DW_CFA_same_value and restores.
 */
static inline struct cfi_reg *cfi_col(const struct uwprof_cfi *c,
				      const struct uwprof_cfi_cie *cie,
				      struct cfi_state *s, uint64_t reg)
{
	if (reg == cie->ra_reg)
		return &s->ra;
	if (reg == (uint64_t)fp_reg(c))
		return &s->fp;
	if (reg < 64 && reg != (uint64_t)sp_reg(c))
		s->others |= 1ULL << reg;
	return NULL;
}

static int cfi_exec(struct uwprof_cfi *c, const struct uwprof_cfi_cie *cie,
		    uint64_t insn, uint64_t end, struct cfi_state *s,
		    const struct uwprof_cfi_fde *f, int signal,
		    uwprof_cfi_row_fn fn, void *ctx)
{
	struct cfi_state stack[REMEMBER_DEPTH];
	struct cur k = { c->data + insn, c->data + end };
	unsigned int depth = 0;
	uint64_t loc = f ? f->lo : 0, reg, u, delta;
	int64_t sv;
	struct cfi_reg *col;
	const uint8_t *at;
	uint8_t op;
	int ret;

	while (k.p < k.end) {
		at = k.p;
		op = *k.p++;
		delta = 0;
		switch (op & 0xc0) {
		case CFA_advance_loc:
			delta = (uint64_t)(op & 0x3f) * cie->code_align;
			goto advance;
		case CFA_offset:
			if (rd_uleb(&k, &u))
				goto truncated;
			col = cfi_col(c, cie, s, op & 0x3f);
			if (col) {
				col->type = UWPROF_REG_AT_CFA;
				col->off = (int64_t)(u * (uint64_t)cie->data_align);
			}
			continue;
		case CFA_restore:
			reg = op & 0x3f;
			goto restore;
		}
		switch (op) {
		case CFA_nop:
			continue;
		case CFA_set_loc: {
			uint64_t nl;

			if (rd_enc(&k, c->data, c->addr, cie->fde_enc,
				   cie->addr_size, c->text_addr, c->data_addr,
				   &nl))
				goto truncated;
			if (!f)
				continue;
			if (nl < loc)
				return cfi_fail(c, at,
						"DW_CFA_set_loc moves backwards");
			delta = nl - loc;
			goto advance;
		}
		case CFA_advance_loc1:
			if (rd_fixed(&k, 1, &u))
				goto truncated;
			delta = u * cie->code_align;
			goto advance;
		case CFA_advance_loc2:
			if (rd_fixed(&k, 2, &u))
				goto truncated;
			delta = u * cie->code_align;
			goto advance;
		case CFA_advance_loc4:
			if (rd_fixed(&k, 4, &u))
				goto truncated;
			delta = u * cie->code_align;
			goto advance;
		case CFA_MIPS_advance_loc8:
			if (rd_fixed(&k, 8, &u))
				goto truncated;
			delta = u * cie->code_align;
			goto advance;
		case CFA_offset_extended:
		case CFA_val_offset:
			if (rd_uleb(&k, &reg) || rd_uleb(&k, &u))
				goto truncated;
			col = cfi_col(c, cie, s, reg);
			if (col) {
				col->type = op == CFA_val_offset ?
					    UWPROF_REG_VAL_CFA : UWPROF_REG_AT_CFA;
				col->off = (int64_t)(u * (uint64_t)cie->data_align);
			}
			continue;
		case CFA_offset_extended_sf:
		case CFA_val_offset_sf:
			if (rd_uleb(&k, &reg) || rd_sleb(&k, &sv))
				goto truncated;
			col = cfi_col(c, cie, s, reg);
			if (col) {
				col->type = op == CFA_val_offset_sf ?
					    UWPROF_REG_VAL_CFA : UWPROF_REG_AT_CFA;
				col->off = (int64_t)((uint64_t)sv *
						     (uint64_t)cie->data_align);
			}
			continue;
		case CFA_GNU_negative_offset_extended:
			if (rd_uleb(&k, &reg) || rd_uleb(&k, &u))
				goto truncated;
			col = cfi_col(c, cie, s, reg);
			if (col) {
				col->type = UWPROF_REG_AT_CFA;
				col->off = (int64_t)(0 - u *
						     (uint64_t)cie->data_align);
			}
			continue;
		case CFA_restore_extended:
			if (rd_uleb(&k, &reg))
				goto truncated;
			goto restore;
		case CFA_undefined:
		case CFA_same_value:
			if (rd_uleb(&k, &reg))
				goto truncated;
			col = cfi_col(c, cie, s, reg);
			if (col) {
				col->type = op == CFA_undefined ?
					    UWPROF_REG_UNDEF : UWPROF_REG_SAME;
				col->off = 0;
			} else if (op == CFA_same_value && reg < 64) {
				s->others &= ~(1ULL << reg);
			}
			continue;
		case CFA_register:
			if (rd_uleb(&k, &reg) || rd_uleb(&k, &u))
				goto truncated;
			col = cfi_col(c, cie, s, reg);
			if (col) {
				col->type = UWPROF_REG_IN_REG;
				col->off = u > INT32_MAX ? -1 : (int64_t)u;
			}
			continue;
		case CFA_remember_state:
			if (depth == REMEMBER_DEPTH)
				return cfi_fail(c, at,
						"DW_CFA_remember_state nested deeper than %d",
						REMEMBER_DEPTH);
			stack[depth++] = *s;
			continue;
		case CFA_restore_state:
			if (!depth)
				return cfi_fail(c, at,
						"DW_CFA_restore_state without remember_state");
			/* The location is not part of the remembered state. */
			*s = stack[--depth];
			continue;
		case CFA_def_cfa:
			if (rd_uleb(&k, &reg) || rd_uleb(&k, &u))
				goto truncated;
			s->cfa_is_expr = 0;
			s->cfa_reg = reg > UINT32_MAX ? UINT32_MAX : (uint32_t)reg;
			s->cfa_off = (int64_t)u;
			continue;
		case CFA_def_cfa_sf:
			if (rd_uleb(&k, &reg) || rd_sleb(&k, &sv))
				goto truncated;
			s->cfa_is_expr = 0;
			s->cfa_reg = reg > UINT32_MAX ? UINT32_MAX : (uint32_t)reg;
			s->cfa_off = (int64_t)((uint64_t)sv *
					       (uint64_t)cie->data_align);
			continue;
		case CFA_def_cfa_register:
			if (rd_uleb(&k, &reg))
				goto truncated;
			s->cfa_is_expr = 0;
			s->cfa_reg = reg > UINT32_MAX ? UINT32_MAX : (uint32_t)reg;
			continue;
		case CFA_def_cfa_offset:
			if (rd_uleb(&k, &u))
				goto truncated;
			s->cfa_off = (int64_t)u;
			continue;
		case CFA_def_cfa_offset_sf:
			if (rd_sleb(&k, &sv))
				goto truncated;
			s->cfa_off = (int64_t)((uint64_t)sv *
					       (uint64_t)cie->data_align);
			continue;
		case CFA_def_cfa_expression:
			if (rd_uleb(&k, &u) || u > (uint64_t)(k.end - k.p))
				goto truncated;
			s->cfa_is_expr = 1;
			s->expr = k.p;
			s->expr_len = u;
			k.p += u;
			continue;
		case CFA_expression:
		case CFA_val_expression:
			if (rd_uleb(&k, &reg) || rd_uleb(&k, &u) ||
			    u > (uint64_t)(k.end - k.p))
				goto truncated;
			k.p += u;
			col = cfi_col(c, cie, s, reg);
			if (col) {
				col->type = UWPROF_REG_UNSUPPORTED;
				col->off = 0;
			}
			continue;
		case CFA_GNU_args_size:
			if (rd_uleb(&k, &u))
				goto truncated;
			continue;
		case CFA_GNU_window_save:
			if (c->arch != UWPROF_ARCH_ARM64)
				return cfi_fail(c, at,
						"DW_CFA_GNU_window_save on x86_64");
			/* AArch64: DW_CFA_AARCH64_negate_ra_state. */
			s->pac ^= 1;
			continue;
		default:
			return cfi_fail(c, at, "unknown DW_CFA opcode 0x%02x", op);
		}
restore:
		col = cfi_col(c, cie, s, reg);
		if (col && !f) {
			/* In the CIE itself: back to the implicit start. */
			col->type = UWPROF_REG_SAME;
			col->off = 0;
		} else if (col) {
			*col = col == &s->fp ? cie->init.fp : cie->init.ra;
		} else if (reg < 64) {
			s->others &= ~(1ULL << reg);
			if (f)
				s->others |= cie->init.others & (1ULL << reg);
		}
		continue;
advance:
		if (!f || !delta)
			continue;
		if (loc + delta < loc || loc + delta > f->hi) {
			/* Rows past the FDE's end describe no code. */
			if (loc < f->hi) {
				ret = cfi_emit(c, s, signal, loc, fn, ctx);
				if (ret)
					return ret;
			}
			loc = f->hi;
			continue;
		}
		ret = cfi_emit(c, s, signal, loc, fn, ctx);
		if (ret)
			return ret;
		loc += delta;
	}
	if (f && loc < f->hi)
		return cfi_emit(c, s, signal, loc, fn, ctx);
	return 0;

truncated:
	return cfi_fail(c, at, "truncated DW_CFA operand (opcode 0x%02x)", op);
}

int uwprof_cfi_run(struct uwprof_cfi *c, const struct uwprof_cfi_fde *f,
		   uwprof_cfi_row_fn fn, void *ctx)
{
	const struct uwprof_cfi_cie *cie = &c->cies[f->cie];
	struct cfi_state s = cie->init;

	return cfi_exec(c, cie, f->insn, f->end, &s, f, cie->signal, fn, ctx);
}

void uwprof_cfi_free(struct uwprof_cfi *c)
{
	free(c->cies);
	free(c->fdes);
	free(c->cie_hash);
	c->cies = NULL;
	c->fdes = NULL;
	c->cie_hash = NULL;
	c->nr_cies = 0;
	c->nr_fdes = 0;
	c->cap_cies = 0;
	c->cap_fdes = 0;
}
