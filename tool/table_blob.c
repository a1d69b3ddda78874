// SPDX-License-Identifier: GPL-2.0
/*
 * Table blobs after they are built: the structural check the module also
 * makes, and the one-line-per-row text form. Called from the uwprof tool
 * and from tests, on blobs this library wrote or read back from a file.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "table.h"

/*
 * The blob layout of UWPROF_TABLE_VERSION, as the module reads it
 * (module/store.c asserts the same): a change here needs a new version.
 */
_Static_assert(sizeof(struct uwprof_table_hdr) == 72, "table header");
_Static_assert(offsetof(struct uwprof_table_hdr, nr_pages) == 56, "page count");
_Static_assert(sizeof(struct uwprof_table_page) == 8, "page");
_Static_assert(sizeof(struct uwprof_rule) == 24, "rule");
_Static_assert(offsetof(struct uwprof_rule, fp_off) == 8, "rule offsets");
_Static_assert(offsetof(struct uwprof_rule, cfa_arg) == 16, "rule argument");
_Static_assert(offsetof(struct uwprof_rule, saved_off) == 22, "saved register");

/* The blob's arrays, once its header passed. */
struct blob_view {
	const struct uwprof_table_hdr *h;
	const struct uwprof_table_page *page;
	const uint16_t *pc;
	const uint8_t *slot;
	const uint16_t *palette;
	const struct uwprof_rule *rules;
};

static void blob_view(struct blob_view *v, const void *data)
{
	const char *p = data;

	v->h = data;
	v->page = (const void *)(p + UWPROF_TABLE_PAGES_OFF(v->h));
	v->pc = (const void *)(p + UWPROF_TABLE_PC_OFF(v->h));
	v->slot = (const void *)(p + UWPROF_TABLE_SLOT_OFF(v->h));
	v->palette = (const void *)(p + UWPROF_TABLE_PALETTE_OFF(v->h));
	v->rules = (const void *)(p + UWPROF_TABLE_RULES_OFF(v->h));
}

/*
 * The saved register as module/table_check.c has it: none, or a general
 * register below the arch's count, in a row marked as keeping registers.
 */
static int blob_saved_ok(const struct uwprof_rule *r, int arm64)
{
	if (r->saved_type == UWPROF_REG_SAME)
		return !r->saved_reg && !r->saved_off;
	return r->saved_type == UWPROF_REG_AT_CFA &&
	       r->saved_reg < (arm64 ? 30 : 16) &&
	       (r->flags & UWPROF_RULE_REGS);
}

static int blob_fail(char *err, size_t errlen, const char *msg, uint64_t off)
{
	if (err && errlen)
		snprintf(err, errlen, "table blob+0x%llx: %s",
			 (unsigned long long)off, msg);
	return -EINVAL;
}

/* Zero bytes in [lo, hi): padding and the build-id's tail. */
static int blob_zero(const void *data, uint64_t lo, uint64_t hi, char *err,
		     size_t errlen, const char *what)
{
	const uint8_t *p = data;

	for (; lo < hi; lo++)
		if (p[lo])
			return blob_fail(err, errlen, what, lo);
	return 0;
}

static int blob_hdr_check(const struct uwprof_table_hdr *h, size_t size,
			  char *err, size_t errlen)
{
	if (h->magic != UWPROF_TABLE_MAGIC)
		return blob_fail(err, errlen, "bad magic", 0);
	if (h->version != UWPROF_TABLE_VERSION) {
		char msg[80];

		snprintf(msg, sizeof(msg),
			 "table format version %u, this uwprof reads version %u",
			 h->version, UWPROF_TABLE_VERSION);
		return blob_fail(err, errlen, msg, 4);
	}
	if (h->arch != UWPROF_ARCH_X86_64 && h->arch != UWPROF_ARCH_ARM64)
		return blob_fail(err, errlen, "unknown arch", 6);
	if (h->hdr_size != sizeof(*h) || h->rule_size != sizeof(struct uwprof_rule))
		return blob_fail(err, errlen, "header or rule size mismatch", 8);
	if (!h->nr_rows || h->nr_rows > UWPROF_TABLE_MAX_ROWS ||
	    !h->nr_rules || h->nr_rules > UWPROF_TABLE_MAX_RULES ||
	    !h->nr_palette || h->nr_palette > UWPROF_TABLE_MAX_PALETTE)
		return blob_fail(err, errlen, "row, rule or palette count out of range", 16);
	if (!h->nr_pages || h->nr_pages > h->nr_rows)
		return blob_fail(err, errlen, "page count out of range",
				 offsetof(struct uwprof_table_hdr, nr_pages));
	if (h->page_shift < UWPROF_TABLE_MIN_PAGE_SHIFT ||
	    h->page_shift > UWPROF_TABLE_MAX_PAGE_SHIFT || h->__reserved)
		return blob_fail(err, errlen, "page shift out of range or reserved field set",
				 offsetof(struct uwprof_table_hdr, page_shift));
	if (h->build_id_size > sizeof(h->build_id))
		return blob_fail(err, errlen, "build-id size out of range",
				 offsetof(struct uwprof_table_hdr, build_id_size));
	if (UWPROF_TABLE_SIZE(h) != size)
		return blob_fail(err, errlen, "size does not match the header", 0);
	if (blob_zero(h, offsetof(struct uwprof_table_hdr, build_id) + h->build_id_size,
		      offsetof(struct uwprof_table_hdr, build_id_size), err, errlen,
		      "bytes after the build-id") ||
	    blob_zero(h, UWPROF_TABLE_SLOT_OFF(h) + h->nr_rows,
		      UWPROF_TABLE_PALETTE_OFF(h), err, errlen, "padding") ||
	    blob_zero(h, UWPROF_TABLE_PALETTE_OFF(h) + 2ULL * h->nr_palette,
		      UWPROF_TABLE_RULES_OFF(h), err, errlen, "padding"))
		return -EINVAL;
	return 0;
}

static int blob_rules_check(const struct blob_view *v, char *err, size_t errlen)
{
	const struct uwprof_table_hdr *h = v->h;
	uint32_t i;

	for (i = 0; i < h->nr_rules; i++) {
		const struct uwprof_rule *r = &v->rules[i];
		uint64_t off = UWPROF_TABLE_RULES_OFF(h) + (uint64_t)i * sizeof(*r);

		if (r->cfa_type > UWPROF_CFA_REG ||
		    r->fp_type > UWPROF_REG_UNSUPPORTED ||
		    r->ra_type > UWPROF_REG_UNSUPPORTED ||
		    (r->flags & ~(UWPROF_RULE_SIGNAL | UWPROF_RULE_PAC |
				  UWPROF_RULE_REGS)))
			return blob_fail(err, errlen, "bad rule", off);
		if (!blob_saved_ok(r, h->arch == UWPROF_ARCH_ARM64))
			return blob_fail(err, errlen, "bad saved register", off);
		if (r->cfa_type == UWPROF_CFA_PLT && r->cfa_arg > 15)
			return blob_fail(err, errlen, "PLT threshold above 15", off);
		if (r->cfa_type == UWPROF_CFA_REG && r->cfa_arg > 31)
			return blob_fail(err, errlen, "CFA register above 31", off);
	}
	for (i = 0; i < h->nr_palette; i++)
		if (v->palette[i] >= h->nr_rules)
			return blob_fail(err, errlen, "palette entry out of range",
					 UWPROF_TABLE_PALETTE_OFF(h) + 2ULL * i);
	return 0;
}

/*
 * Pages in order, each starting a row at offset 0, offsets inside the
 * page, slots in the palette.
 */
static int blob_pages_check(const struct blob_view *v, char *err, size_t errlen)
{
	const struct uwprof_table_hdr *h = v->h;
	const struct uwprof_table_page *pg = v->page;
	uint32_t p, i;

	if (pg[0].row || pg[h->nr_pages].row != h->nr_rows ||
	    pg[h->nr_pages].palette != h->nr_palette)
		return blob_fail(err, errlen,
				 "pages do not start at row 0 or end at { nr_rows, nr_palette }",
				 UWPROF_TABLE_PAGES_OFF(h));
	for (p = 0; p < h->nr_pages; p++) {
		uint32_t lo = pg[p].row, hi = pg[p + 1].row;
		uint64_t at = UWPROF_TABLE_PAGES_OFF(h) + 8ULL * p;

		if (hi <= lo || hi > h->nr_rows)
			return blob_fail(err, errlen, "page without rows or beyond the last", at);
		if (pg[p].palette > h->nr_palette)
			return blob_fail(err, errlen, "page palette beyond the palettes", at);
		if (v->pc[lo])
			return blob_fail(err, errlen, "page's first row not at offset 0",
					 UWPROF_TABLE_PC_OFF(h) + 2ULL * lo);
		for (i = lo; i < hi; i++) {
			if (i > lo && v->pc[i] <= v->pc[i - 1])
				return blob_fail(err, errlen, "pc[] not strictly increasing in its page",
						 UWPROF_TABLE_PC_OFF(h) + 2ULL * i);
			if (v->pc[i] >> h->page_shift)
				return blob_fail(err, errlen, "pc[] past the end of its page",
						 UWPROF_TABLE_PC_OFF(h) + 2ULL * i);
			if (v->slot[i] >= h->nr_palette - pg[p].palette)
				return blob_fail(err, errlen, "palette slot beyond the palettes",
						 UWPROF_TABLE_SLOT_OFF(h) + i);
		}
	}
	return 0;
}

int uwprof_blob_check(const void *data, size_t size, char *err, size_t errlen)
{
	const struct uwprof_table_hdr *h = data;
	struct blob_view v;
	uint64_t span;
	int ret;

	if (!data || size < sizeof(*h))
		return blob_fail(err, errlen, "shorter than its header", 0);
	ret = blob_hdr_check(h, size, err, errlen);
	if (ret)
		return ret;
	blob_view(&v, data);
	ret = blob_rules_check(&v, err, errlen);
	if (!ret)
		ret = blob_pages_check(&v, err, errlen);
	if (ret)
		return ret;
	if (v.rules[v.palette[v.page[h->nr_pages - 1].palette +
			      v.slot[h->nr_rows - 1]]].cfa_type != UWPROF_CFA_END)
		return blob_fail(err, errlen, "last row is not END",
				 UWPROF_TABLE_SLOT_OFF(h) + h->nr_rows - 1);
	span = ((uint64_t)(h->nr_pages - 1) << h->page_shift) + v.pc[h->nr_rows - 1];
	if (h->base + span < h->base)
		return blob_fail(err, errlen, "table reaches past the top of the address space",
				 offsetof(struct uwprof_table_hdr, base));
	return 0;
}

static const char *blob_reg(char *buf, size_t n, uint8_t type, int32_t off,
			    int is_ra, int arm64)
{
	switch (type) {
	case UWPROF_REG_SAME:
		return is_ra && arm64 ? "lr" : "s";
	case UWPROF_REG_UNDEF:
		return "u";
	case UWPROF_REG_AT_CFA:
		snprintf(buf, n, "c%+d", off);
		return buf;
	case UWPROF_REG_VAL_CFA:
		snprintf(buf, n, "v%+d", off);
		return buf;
	case UWPROF_REG_IN_REG:
		snprintf(buf, n, "r%d", off);
		return buf;
	default:
		return "exp";
	}
}

/* A DWARF register's name as readelf prints it. */
static const char *blob_reg_name(char *buf, size_t n, unsigned int regno,
				 int arm64)
{
	static const char *const x86[16] = {
		"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp",
		"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
	};

	if (arm64 && regno == 31)
		return "sp";
	if (!arm64 && regno < 16)
		return x86[regno];
	snprintf(buf, n, arm64 ? "x%u" : "r%u", regno);
	return buf;
}

/* One row's line; the rules as blob_reg() spells them. */
static void blob_print_row(FILE *f, unsigned long long a,
			   const struct uwprof_rule *r, int arm64)
{
	const char *sp = arm64 ? "sp" : "rsp", *fp = arm64 ? "x29" : "rbp";
	char fb[16], rb[16], cb[32], rn[8], sb[32];
	const char *fs = blob_reg(fb, sizeof(fb), r->fp_type, r->fp_off, 0, arm64);
	const char *rs = blob_reg(rb, sizeof(rb), r->ra_type, r->ra_off, 1, arm64);
	int n;

	switch (r->cfa_type) {
	case UWPROF_CFA_END:
		fprintf(f, "0x%llx end\n", a);
		return;
	case UWPROF_CFA_PLT:
		fprintf(f, "0x%llx plt cfa=%s%+d arg=%u fp=%s ra=%s\n",
			a, sp, r->cfa_off, r->cfa_arg, fs, rs);
		return;
	case UWPROF_CFA_SP:
	case UWPROF_CFA_FP:
		snprintf(cb, sizeof(cb), "%s%+d",
			 r->cfa_type == UWPROF_CFA_SP ? sp : fp, r->cfa_off);
		break;
	case UWPROF_CFA_REG:
		snprintf(cb, sizeof(cb), "%s%+d",
			 blob_reg_name(rn, sizeof(rn), r->cfa_arg, arm64),
			 r->cfa_off);
		break;
	case UWPROF_CFA_DEREF_SP:
	case UWPROF_CFA_DEREF_FP:
		n = snprintf(cb, sizeof(cb), "*(%s%+d)",
			     r->cfa_type == UWPROF_CFA_DEREF_SP ? sp : fp,
			     r->cfa_off);
		if (r->cfa_arg)
			snprintf(cb + n, sizeof(cb) - n, "+%u", r->cfa_arg);
		break;
	default:
		snprintf(cb, sizeof(cb), "exp");
		break;
	}
	sb[0] = 0;
	if (r->saved_type == UWPROF_REG_AT_CFA)
		snprintf(sb, sizeof(sb), " saved=%s:c%+d",
			 blob_reg_name(rn, sizeof(rn), r->saved_reg, arm64),
			 r->saved_off);
	fprintf(f, "0x%llx %scfa=%s fp=%s ra=%s%s%s\n", a,
		(r->flags & UWPROF_RULE_SIGNAL) ? "sig " : "", cb, fs, rs,
		(r->flags & UWPROF_RULE_PAC) ? " pac" : "", sb);
}

int uwprof_blob_print(FILE *f, const void *data, size_t size)
{
	const struct uwprof_table_hdr *h = data;
	int arm64 = h->arch == UWPROF_ARCH_ARM64;
	struct blob_view v;
	uint32_t p, i;

	(void)size;
	blob_view(&v, data);
	for (p = 0; p < h->nr_pages; p++) {
		unsigned long long start = h->base + ((uint64_t)p << h->page_shift);

		for (i = v.page[p].row; i < v.page[p + 1].row; i++)
			blob_print_row(f, start + v.pc[i],
				       &v.rules[v.palette[v.page[p].palette + v.slot[i]]],
				       arm64);
	}
	return ferror(f) ? -EIO : 0;
}
