// SPDX-License-Identifier: GPL-2.0
/*
 * The table compiler proper: picks the CFI source of an object (.eh_frame,
 * its own .debug_frame, or a separate debug file), orders its FDEs, turns
 * their programs into rows, closes gaps with END rows, merges equal
 * neighbours, shares identical rules and writes the uapi blob. Also checks
 * and prints blobs. Called from the uwprof tool, tests and the fuzzer; no
 * global mutable state.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cfi.h"
#include "elf_file.h"
#include "nocfi.h"
#include "outermost.h"
#include "plt.h"
#include "table.h"
#include "table_pages.h"

/*
 * A rule as a key: the 24-byte rule, every field of it (saved register
 * included), and why the rule is unsupported (UWPROF_UNSUP_*, or
 * UWPROF_CFI_NO_REASON), so rules that differ only in that reason stay
 * apart for the counts. The blob gets the rule alone.
 */
union tb_rule {
	struct {
		struct uwprof_rule r;
		uint64_t	reason;
	};
	uint64_t	k[4];
};

_Static_assert(sizeof(struct uwprof_rule) == 3 * sizeof(uint64_t),
	       "the rule is three words of the key");
_Static_assert(sizeof(union tb_rule) == 4 * sizeof(uint64_t),
	       "the key has no padding");

/* Rows under construction: pc ascending (relative to base), rule indexes. */
struct tb {
	uint64_t	base;
	uint32_t	*pc;
	uint16_t	*idx;
	size_t		n;
	size_t		cap;
	union tb_rule	*rules;
	size_t		nr_rules;
	size_t		cap_rules;
	uint32_t	*hash;		/* rule index + 1, open addressing */
	size_t		mask;
	uint64_t	clip;		/* rows start no lower than this */
	int		too_many_rules;
	int		too_far;	/* a row beyond base + 4 GiB */
};

static int tb_fail(char *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int tb_fail(char *err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, UWPROF_ERR_LEN, fmt, ap);
	va_end(ap);
	return 0;
}

static inline uint64_t tb_rule_hash(const union tb_rule *t)
{
	uint64_t a = (t->k[0] ^ (t->k[1] * 0x9e3779b97f4a7c15ULL) ^
		      (t->k[2] * 0xc2b2ae3d27d4eb4fULL) ^
		      (t->k[3] << 56)) * 0xff51afd7ed558ccdULL;

	return a ^ (a >> 32);
}

static inline int tb_rule_eq(const union tb_rule *x, const union tb_rule *y)
{
	return x->k[0] == y->k[0] && x->k[1] == y->k[1] &&
	       x->k[2] == y->k[2] && x->k[3] == y->k[3];
}

static int tb_grow_hash(struct tb *b)
{
	size_t n = b->mask ? (b->mask + 1) * 2 : 256, i, j;
	uint32_t *h = calloc(n, sizeof(*h));

	if (!h)
		return -ENOMEM;
	for (j = 0; j < b->nr_rules; j++) {
		i = tb_rule_hash(&b->rules[j]) & (n - 1);
		while (h[i])
			i = (i + 1) & (n - 1);
		h[i] = (uint32_t)j + 1;
	}
	free(b->hash);
	b->hash = h;
	b->mask = n - 1;
	return 0;
}

/* Index of the rule, added when new; -E2BIG past UWPROF_TABLE_MAX_RULES. */
static int tb_intern(struct tb *b, const union tb_rule *t)
{
	size_t i;

	/* table_build() made the table; it grows after an insertion. */
	i = tb_rule_hash(t) & b->mask;
	while (b->hash[i]) {
		if (tb_rule_eq(&b->rules[b->hash[i] - 1], t))
			goto found;
		i = (i + 1) & b->mask;
	}
	if (b->nr_rules >= UWPROF_TABLE_MAX_RULES) {
		b->too_many_rules = 1;
		return -E2BIG;
	}
	if (b->nr_rules == b->cap_rules) {
		size_t n = b->cap_rules ? b->cap_rules * 2 : 256;
		void *q = realloc(b->rules, n * sizeof(*b->rules));

		if (!q)
			return -ENOMEM;
		b->rules = q;
		b->cap_rules = n;
	}
	b->rules[b->nr_rules++] = *t;
	b->hash[i] = (uint32_t)b->nr_rules;
	/* At most half full, so a probe always ends at an empty slot. */
	if (b->nr_rules * 2 >= b->mask && tb_grow_hash(b))
		return -ENOMEM;
	return (int)b->nr_rules - 1;
found:
	return (int)b->hash[i] - 1;
}

static int tb_reserve(struct tb *b, size_t n)
{
	void *q;

	if (n <= b->cap)
		return 0;
	q = realloc(b->pc, n * sizeof(*b->pc));
	if (!q)
		return -ENOMEM;
	b->pc = q;
	q = realloc(b->idx, n * sizeof(*b->idx));
	if (!q)
		return -ENOMEM;
	b->idx = q;
	b->cap = n;
	return 0;
}

/*
 * Add the row starting at 'addr' (rows arrive in address order). A row at
 * the same address as the last replaces it; a row with the same rule as
 * the last is not a new row.
 */
static int tb_row(void *ctx, uint64_t addr, const struct uwprof_rule *r,
		  uint8_t reason)
{
	struct tb *b = ctx;
	union tb_rule t;
	uint32_t pc;
	uint16_t idx;
	int ret;

	t.r = *r;
	t.reason = reason;
	ret = tb_intern(b, &t);
	if (ret < 0)
		return ret;
	idx = (uint16_t)ret;
	if (addr < b->clip)
		addr = b->clip;
	if (addr - b->base > UINT32_MAX) {
		b->too_far = 1;
		return -E2BIG;
	}
	pc = (uint32_t)(addr - b->base);
	if (b->n && b->pc[b->n - 1] == pc) {
		b->idx[b->n - 1] = idx;
		if (b->n > 1 && b->idx[b->n - 2] == idx)
			b->n--;
		return 0;
	}
	if (b->n && b->idx[b->n - 1] == idx)
		return 0;
	if (b->n == b->cap && tb_reserve(b, b->cap * 2))
		return -ENOMEM;
	b->pc[b->n] = pc;
	b->idx[b->n] = idx;
	b->n++;
	return 0;
}

static void tb_free(struct tb *b)
{
	free(b->pc);
	free(b->idx);
	free(b->rules);
	free(b->hash);
}

/* Stable LSD radix sort of FDEs by start address, 8 bits a pass. */
static int table_sort_fdes(struct uwprof_cfi_fde *a, size_t n)
{
	struct uwprof_cfi_fde *tmp, *src = a, *dst, *sw;
	uint64_t diff = 0;
	size_t i, cnt[256];
	unsigned int shift;

	for (i = 1; i < n; i++)
		if (a[i].lo < a[i - 1].lo)
			break;
	if (i >= n)
		return 0;
	for (i = 1; i < n; i++)
		diff |= a[i].lo ^ a[0].lo;
	tmp = malloc(n * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	dst = tmp;
	for (shift = 0; shift < 64 && (diff >> shift); shift += 8) {
		size_t sum = 0, c;

		if (!((diff >> shift) & 0xff))
			continue;
		memset(cnt, 0, sizeof(cnt));
		for (i = 0; i < n; i++)
			cnt[(src[i].lo >> shift) & 0xff]++;
		for (i = 0; i < 256; i++) {
			c = cnt[i];
			cnt[i] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			dst[cnt[(src[i].lo >> shift) & 0xff]++] = src[i];
		sw = src;
		src = dst;
		dst = sw;
	}
	if (src != a)
		memcpy(a, src, n * sizeof(*a));
	free(tmp);
	return 0;
}

/* The statistics of the blob's rows, from their count per rule. */
static void table_count(const struct tb *b, const uint64_t *per_rule,
			const struct uwprof_table_hdr *h,
			struct uwprof_table_stats *st)
{
	size_t i;

	for (i = 0; i < b->nr_rules; i++) {
		const struct uwprof_rule *r = &b->rules[i].r;
		uint64_t reason = b->rules[i].reason;

		if (r->cfa_type == UWPROF_CFA_END)
			st->end_rows += per_rule[i];
		if (r->cfa_type == UWPROF_CFA_PLT)
			st->plt_rows += per_rule[i];
		if (r->flags & UWPROF_RULE_SIGNAL)
			st->signal_rows += per_rule[i];
		if (reason < UWPROF_UNSUP__COUNT)
			st->unsupported[reason] += per_rule[i];
	}
	st->rows = h->nr_rows;
	st->page_rows = h->nr_rows - b->n;
	st->rules = b->nr_rules;
	st->pages = h->nr_pages;
	st->page_shift = h->page_shift;
	st->palette = h->nr_palette;
}

static int table_write_blob(struct tb *b, const struct uwprof_elf *e,
			    struct uwprof_blob *out,
			    struct uwprof_table_stats *st)
{
	struct uwprof_table_hdr h;
	struct uwprof_rule *rules;
	uint64_t *per_rule;
	void *blob;
	size_t i;
	int ret;

	if (b->n > UWPROF_TABLE_MAX_ROWS) {
		tb_fail(out->err, "%s: %zu rows, more than the %u a table holds",
			e->path, b->n, UWPROF_TABLE_MAX_ROWS);
		return -E2BIG;
	}
	memset(&h, 0, sizeof(h));
	h.magic = UWPROF_TABLE_MAGIC;
	h.version = UWPROF_TABLE_VERSION;
	h.arch = e->arch;
	h.hdr_size = sizeof(h);
	h.rule_size = sizeof(struct uwprof_rule);
	h.nr_rules = (uint32_t)b->nr_rules;
	h.base = b->base;
	if (e->build_id_size) {
		h.build_id_size = e->build_id_size < sizeof(h.build_id) ?
				  (uint32_t)e->build_id_size :
				  (uint32_t)sizeof(h.build_id);
		memcpy(h.build_id, e->build_id, h.build_id_size);
	}
	per_rule = malloc(b->nr_rules * sizeof(*per_rule));
	if (!per_rule) {
		tb_fail(out->err, "%s: out of memory", e->path);
		return -ENOMEM;
	}
	ret = uwprof_table_pages(&h, b->pc, b->idx, b->n, &blob, per_rule);
	if (ret == -E2BIG)
		tb_fail(out->err,
			"%s: %zu rows and page starts, more than the %u a table holds",
			e->path, b->n, UWPROF_TABLE_MAX_ROWS);
	else if (ret)
		tb_fail(out->err, "%s: out of memory for a table of %zu rows",
			e->path, b->n);
	if (ret)
		goto free_count;
	rules = (struct uwprof_rule *)((uint8_t *)blob + UWPROF_TABLE_RULES_OFF(&h));
	for (i = 0; i < b->nr_rules; i++)
		rules[i] = b->rules[i].r;
	table_count(b, per_rule, &h, st);
	out->data = blob;
	out->size = UWPROF_TABLE_SIZE(&h);
free_count:
	free(per_rule);
	return ret;
}

/* Rows of every FDE in address order; an earlier FDE wins an overlap. */
static int table_build(struct uwprof_cfi *c, const struct uwprof_elf *ex,
		       struct tb *b, struct uwprof_table_stats *st)
{
	struct uwprof_rule end_rule;
	uint64_t last_end = 0;
	int have = 0, ret;
	size_t i;

	memset(&end_rule, 0, sizeof(end_rule));
	ret = table_sort_fdes(c->fdes, c->nr_fdes);
	if (ret)
		return ret;
	/* Rows take at least a byte of CFI each, FDE headers aside. */
	ret = tb_reserve(b, c->size / 4 + 64);
	if (!ret)
		ret = tb_grow_hash(b);
	if (ret)
		return ret;
	for (i = 0; i < c->nr_fdes; i++) {
		const struct uwprof_cfi_fde *f = &c->fdes[i];

		if (!uwprof_elf_in_exec(ex, f->lo, f->hi)) {
			st->fdes_outside++;
			continue;
		}
		st->fdes++;
		if (!have)
			b->base = f->lo;
		if (have && f->hi <= last_end) {
			st->fdes_overlapping++;
			continue;
		}
		if (have && f->lo < last_end) {
			st->fdes_overlapping++;
			b->clip = last_end;
		} else {
			if (have && f->lo > last_end) {
				ret = tb_row(b, last_end, &end_rule,
					     UWPROF_CFI_NO_REASON);
				if (ret)
					return ret;
			}
			b->clip = f->lo;
		}
		if (f->cie == UWPROF_PLT_CIE) {
			ret = uwprof_plt_run(ex, f, tb_row, b);
		} else if (f->cie == UWPROF_NOCFI_CIE) {
			st->nocfi_fdes++;
			ret = uwprof_nocfi_run(ex, f, tb_row, b);
		}
		else if (f->cie == UWPROF_OUTERMOST_CIE ||
			 f->cie == UWPROF_GOSWITCH_CIE ||
			 f->cie == UWPROF_GOSIGNAL_CIE ||
			 f->cie == UWPROF_GOPREEMPT_CIE ||
			 f->cie == UWPROF_GOMORESTACK_CIE ||
			 f->cie == UWPROF_SWAPCTX_CIE) {
			ret = uwprof_outermost_run(ex, c, f, tb_row, b);
		} else {
			ret = uwprof_plt_cfi_run(ex, c, f, tb_row, b);
		}
		if (ret)
			return ret;
		if (f->hi > last_end)
			last_end = f->hi;
		have = 1;
	}
	if (!have)
		return -ENODATA;
	b->clip = last_end;
	return tb_row(b, last_end, &end_rule, UWPROF_CFI_NO_REASON);
}

/* The CRC-32 of a whole file, read in pieces: it is not in memory. */
static int table_crc32(const struct uwprof_elf *d, uint32_t *out)
{
	uint32_t tab[256], crc = 0xffffffffU, v;
	size_t i, off, n, chunk = 1 << 20;
	uint8_t *p;
	int k;

	p = malloc(chunk);
	if (!p)
		return -ENOMEM;
	for (i = 0; i < 256; i++) {
		v = (uint32_t)i;
		for (k = 0; k < 8; k++)
			v = (v & 1) ? 0xedb88320U ^ (v >> 1) : v >> 1;
		tab[i] = v;
	}
	for (off = 0; off < d->image_size; off += n) {
		n = d->image_size - off < chunk ? d->image_size - off : chunk;
		if (uwprof_elf_pread(d, p, n, off)) {
			free(p);
			return -EIO;
		}
		for (i = 0; i < n; i++)
			crc = tab[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
	}
	free(p);
	*out = crc ^ 0xffffffffU;
	return 0;
}

static int table_try_debug(const struct uwprof_elf *e, const char *cand,
			   int fd, struct uwprof_elf **out)
{
	struct uwprof_elf *d;
	char err[UWPROF_ERR_LEN];
	uint32_t crc;

	if (uwprof_elf_open_fd(fd, cand, &d, err, sizeof(err)))
		return -ENOENT;
	if (d->arch != e->arch || !d->debug_frame.present ||
	    !d->debug_frame.size)
		goto reject;
	if (e->build_id_size) {
		if (d->build_id_size != e->build_id_size ||
		    memcmp(d->build_id, e->build_id, e->build_id_size))
			goto reject;
	} else if (!e->has_debuglink || table_crc32(d, &crc) ||
		   crc != e->debuglink_crc) {
		goto reject;
	}
	*out = d;
	return 0;
reject:
	uwprof_elf_close(d);
	return -ENOENT;
}

/* Check .eh_frame_hdr and find .eh_frame through it when sections lack. */
static int table_eh_frame(const struct uwprof_elf *e, struct uwprof_cfi *c,
			  char *err)
{
	const struct uwprof_elf_sec *h = &e->eh_frame_hdr;
	uint64_t ptr;
	size_t used, avail;
	const uint8_t *p;

	if (h->present) {
		if (h->size < 4 || h->data[0] != 1 ||
		    uwprof_cfi_read_hdr_ptr(h->data + 4, h->size - 4,
					    h->data[1], h->addr + 4, &ptr,
					    &used)) {
			tb_fail(err, "%s: .eh_frame_hdr+0x0: bad header (version or eh_frame_ptr)",
				e->path);
			return -EINVAL;
		}
		if (e->eh_frame.present && ptr != e->eh_frame.addr) {
			tb_fail(err,
				"%s: .eh_frame_hdr+0x4: eh_frame_ptr 0x%llx is not .eh_frame at 0x%llx",
				e->path, (unsigned long long)ptr,
				(unsigned long long)e->eh_frame.addr);
			return -EINVAL;
		}
	}
	if (e->eh_frame.present) {
		c->data = e->eh_frame.data;
		c->size = e->eh_frame.size;
		c->addr = e->eh_frame.addr;
		return 0;
	}
	if (!h->present || uwprof_elf_vaddr(e, ptr, 0, &p, &avail))
		return -ENODATA;
	c->data = p;
	c->size = avail;
	c->addr = ptr;
	c->stop_at_zero = 1;
	return 0;
}

static void table_use_debug_frame(struct uwprof_cfi *c,
				  const struct uwprof_elf *d,
				  struct uwprof_table_stats *st, int source)
{
	c->data = d->debug_frame.data;
	c->size = d->debug_frame.size;
	c->addr = d->debug_frame.addr;
	c->sec_name = d->debug_frame.name;
	c->path = d->path;
	c->is_eh = 0;
	c->stop_at_zero = 0;
	st->source = source;
	snprintf(st->source_path, sizeof(st->source_path), "%s", d->path);
}

/*
 * Parse the first source that has FDEs: .eh_frame, else the object's own
 * .debug_frame, else a separate debug file's. An .eh_frame holding only a
 * CIE (objects built without unwind tables keep crt's) does not count.
 */
static int table_parse_source(struct uwprof_elf *e, int search_debug,
			      struct uwprof_cfi *c, struct uwprof_elf **dbg,
			      struct uwprof_table_stats *st, char *err)
{
	int ret;

	if (e->eh_frame.present || e->eh_frame_hdr.present) {
		ret = table_eh_frame(e, c, err);
		if (ret && ret != -ENODATA)
			return ret;
		if (!ret) {
			c->is_eh = 1;
			c->sec_name = ".eh_frame";
			st->source = UWPROF_SRC_EH_FRAME;
			snprintf(st->source_path, sizeof(st->source_path),
				 "%s", e->path);
			ret = uwprof_cfi_parse(c);
			if (ret || c->nr_fdes)
				return ret;
			uwprof_cfi_free(c);
		}
	}
	if (e->debug_frame.present) {
		table_use_debug_frame(c, e, st, UWPROF_SRC_DEBUG_FRAME);
		ret = uwprof_cfi_parse(c);
		if (ret || c->nr_fdes)
			return ret;
		uwprof_cfi_free(c);
	}
	if (search_debug && !uwprof_elf_find_debug(e, table_try_debug, dbg)) {
		table_use_debug_frame(c, *dbg, st, UWPROF_SRC_DEBUG_FILE);
		ret = uwprof_cfi_parse(c);
		if (ret || c->nr_fdes)
			return ret;
		uwprof_cfi_free(c);
	}
	st->source = UWPROF_SRC_NONE;
	st->source_path[0] = 0;
	tb_fail(err,
		"%s: no unwind information (no FDE in .eh_frame, .debug_frame or a separate debug file)",
		e->path);
	return -ENODATA;
}

static int table_compile_elf(struct uwprof_elf *e, int search_debug,
			     struct uwprof_blob *out,
			     struct uwprof_table_stats *st)
{
	struct uwprof_elf *dbg = NULL;
	struct uwprof_cfi c;
	struct tb b;
	int ret;

	memset(&c, 0, sizeof(c));
	memset(&b, 0, sizeof(b));
	c.arch = e->arch;
	c.err = out->err;
	c.errlen = sizeof(out->err);
	c.text_addr = e->text_addr;
	c.data_addr = e->got_addr;
	c.path = e->path;
	ret = table_parse_source(e, search_debug, &c, &dbg, st, out->err);
	if (ret)
		goto free_cfi;
	st->cies = c.nr_cies;
	ret = uwprof_plt_add(e, &c);
	if (!ret)
		ret = uwprof_outermost_mark(e, &c);
	if (!ret)
		ret = uwprof_nocfi_add(e, &c);
	if (ret) {
		tb_fail(out->err, "%s: out of memory", e->path);
		goto free_cfi;
	}
	ret = table_build(&c, e, &b, st);
	if (ret == -ENODATA) {
		tb_fail(out->err, "%s: %s: no FDE describes executable code",
			c.path, c.sec_name);
		goto free_tb;
	}
	if (ret == -E2BIG && b.too_far) {
		tb_fail(out->err,
			"%s: %s: FDEs span more than the 4 GiB a table covers",
			c.path, c.sec_name);
		goto free_tb;
	}
	if (ret == -E2BIG && b.too_many_rules) {
		tb_fail(out->err, "%s: %s: more than %u distinct rules",
			c.path, c.sec_name, UWPROF_TABLE_MAX_RULES);
		goto free_tb;
	}
	if (ret == -ENOMEM)
		tb_fail(out->err, "%s: out of memory", e->path);
	if (ret)
		goto free_tb;
	ret = table_write_blob(&b, e, out, st);
	if (ret)
		goto free_tb;
	st->bytes = out->size;
	out->arch = e->arch;
	if (e->build_id_size) {
		out->key_size = e->build_id_size < sizeof(out->key) ?
				(uint8_t)e->build_id_size : sizeof(out->key);
		memcpy(out->key, e->build_id, out->key_size);
	} else if (uwprof_elf_hash(e, out->key)) {
		tb_fail(out->err, "%s: the file shrank while being read", e->path);
		ret = -EIO;
	} else {
		out->key_size = sizeof(out->key);
		out->key_is_hash = 1;
	}
free_tb:
	tb_free(&b);
free_cfi:
	uwprof_cfi_free(&c);
	uwprof_elf_close(dbg);
	return ret;
}

static uint64_t table_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Documented in table.h. */
int uwprof_table_compile_elf(struct uwprof_elf *e, int search_debug,
			     struct uwprof_blob *out,
			     struct uwprof_table_stats *st)
{
	struct uwprof_table_stats local;
	uint64_t t0 = table_now_ns();
	char *q;
	int ret;

	if (!st)
		st = &local;
	memset(st, 0, sizeof(*st));
	memset(out, 0, sizeof(*out));
	ret = table_compile_elf(e, search_debug, out, st);
	if (ret) {
		free(out->data);
		out->data = NULL;
		out->size = 0;
		/* One line, whatever bytes a damaged object put in it. */
		for (q = out->err; *q; q++)
			if ((unsigned char)*q < 0x20 || *q == 0x7f)
				*q = '?';
	}
	st->wall_ns = table_now_ns() - t0;
	return ret;
}

static int table_compile_common(const char *path, int fd, const void *image,
				size_t size, struct uwprof_blob *out,
				struct uwprof_table_stats *st)
{
	struct uwprof_elf *e;
	uint64_t t0 = table_now_ns();
	int ret;

	if (st)
		memset(st, 0, sizeof(*st));
	memset(out, 0, sizeof(*out));
	if (image)
		ret = uwprof_elf_open_mem(image, size, path, &e, out->err,
					  sizeof(out->err));
	else if (fd >= 0)
		ret = uwprof_elf_open_fd(fd, path, &e, out->err,
					 sizeof(out->err));
	else
		ret = uwprof_elf_open(path, &e, out->err, sizeof(out->err));
	if (ret)
		return ret;
	ret = uwprof_table_compile_elf(e, !image, out, st);
	uwprof_elf_close(e);
	if (st)
		st->wall_ns = table_now_ns() - t0;
	return ret;
}

int uwprof_table_compile(const char *path, struct uwprof_blob *out,
			 struct uwprof_table_stats *st)
{
	return table_compile_common(path, -1, NULL, 0, out, st);
}

int uwprof_table_compile_fd(int fd, const char *name, struct uwprof_blob *out,
			    struct uwprof_table_stats *st)
{
	return table_compile_common(name, fd, NULL, 0, out, st);
}

int uwprof_table_compile_mem(const void *image, size_t size, const char *name,
			     struct uwprof_blob *out,
			     struct uwprof_table_stats *st)
{
	if (!image) {
		memset(out, 0, sizeof(*out));
		snprintf(out->err, sizeof(out->err), "%s: no image", name);
		return -EINVAL;
	}
	return table_compile_common(name, -1, image, size, out, st);
}

void uwprof_blob_free(struct uwprof_blob *b)
{
	if (!b)
		return;
	free(b->data);
	b->data = NULL;
	b->size = 0;
}
