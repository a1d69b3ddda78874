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

#include "cfi_int.h"
#include "table.h"
#include "vec.h"

int cfi_fail(struct uwprof_cfi *c, const uint8_t *at, const char *fmt, ...)
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

/*
 * Read a pointer in encoding 'enc'. 'base_addr' is the address of the
 * first byte of the cursor's buffer, so pcrel and aligned work for both
 * sections and .eh_frame_hdr.
 */
int rd_enc(struct cur *k, const uint8_t *buf, uint64_t base_addr,
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

static long cfi_cie_find(const struct uwprof_cfi *c, uint64_t off)
{
	uint32_t idx;

	return uwprof_u64map_get(&c->cie_by_off, off, &idx) ? (long)idx : -1;
}

/*
 * The CIE's augmentation data, after its string 'aug': the FDE pointer
 * encoding, a personality pointer checked and skipped, the signal-frame
 * mark. Leaves 'ent' at the initial instructions.
 */
static int cfi_cie_aug(struct uwprof_cfi *c, struct uwprof_cfi_cie *cie,
		       const uint8_t *aug, struct cur *ent)
{
	struct cur aug_k;
	const uint8_t *p;
	uint64_t v, aug_len = 0;
	int signal = 0;

	if (aug[0] == 'z') {
		p = ent->p;
		if (rd_uleb(ent, &aug_len) ||
		    aug_len > (uint64_t)(ent->end - ent->p))
			return cfi_fail(c, p, "bad CIE augmentation length");
		aug_k.p = ent->p;
		aug_k.end = ent->p + aug_len;
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
		ent->p += aug_len;
	} else if (aug[0] && !(aug[0] == 'e' && aug[1] == 'h' && !aug[2])) {
		return cfi_fail(c, aug, "unknown CIE augmentation \"%.16s\"",
				(const char *)aug);
	}
	if (cie->fde_enc != PE_omit && (cie->fde_enc & PE_indirect))
		return cfi_fail(c, aug, "indirect FDE address encoding");
	cie->signal = signal;
	return 0;
}

/* Parse the CIE at 'off' (once) and return its index. */
static int cfi_cie_get(struct uwprof_cfi *c, uint64_t off, const uint8_t *ref,
		       uint32_t *out)
{
	struct uwprof_cfi_cie *cie;
	struct cur ent;
	const uint8_t *aug, *p;
	uint64_t id, next, v;
	int is64, ret;
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
	if (VEC_RESERVE(c->cies, c->cap_cies, c->nr_cies + 1, 16))
		return -ENOMEM;
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
	ret = cfi_cie_aug(c, cie, aug, &ent);
	if (ret)
		return ret;
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
	if (uwprof_u64map_put(&c->cie_by_off, off, (uint32_t)c->nr_cies) < 0)
		return -ENOMEM;
	*out = (uint32_t)c->nr_cies++;
	return 0;
}

struct uwprof_cfi_fde *uwprof_cfi_fde_add(struct uwprof_cfi *c)
{
	struct uwprof_cfi_fde *f;

	if (VEC_RESERVE(c->fdes, c->cap_fdes, c->nr_fdes + 1, 1024))
		return NULL;
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
		f->cfi_cie = ci;
		off = next;
	}
	return 0;
}

int uwprof_cfi_fde_signal(const struct uwprof_cfi *c,
			  const struct uwprof_cfi_fde *f)
{
	return c->cies[f->cie].signal;
}

void uwprof_cfi_free(struct uwprof_cfi *c)
{
	free(c->cies);
	free(c->fdes);
	uwprof_u64map_free(&c->cie_by_off);
	c->cies = NULL;
	c->fdes = NULL;
	c->nr_cies = 0;
	c->nr_fdes = 0;
	c->cap_cies = 0;
	c->cap_fdes = 0;
}
