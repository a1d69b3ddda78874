// SPDX-License-Identifier: GPL-2.0
/*
 * The no-CFI analysis (tool/nocfi.h) against the compiler's own CFI: every
 * FDE of an aarch64 object is followed from its start as if it had no CFI,
 * and wherever the analysis gives a row, that row must say what the CFI
 * says: the same CFA, the return address in the same place, x29 saved in
 * the same slot where both say it is saved. Functions the analysis
 * refuses, and instructions it leaves without a row, are counted, never
 * compared: a row it gives is a claim, its silence is not.
 * TAP output, one test per object. usage: nocfi-diff OBJECT...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfi.h"
#include "a64insn.h"
#include "elf_file.h"
#include "nocfi.h"

struct cfi_rows {
	uint64_t		*addr;
	struct uwprof_rule	*rule;
	size_t			n, cap;
};

struct tally {
	unsigned long	fdes, accepted, insns, agree, silent, wrong;
};

static int collect(void *ctx, uint64_t addr, const struct uwprof_rule *r,
		   uint8_t reason)
{
	struct cfi_rows *c = ctx;

	(void)reason;
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 64;
		c->addr = realloc(c->addr, c->cap * sizeof(*c->addr));
		c->rule = realloc(c->rule, c->cap * sizeof(*c->rule));
		if (!c->addr || !c->rule)
			return -1;
	}
	c->addr[c->n] = addr;
	c->rule[c->n++] = *r;
	return 0;
}

/* The CFI rule covering 'pc', or NULL. */
static const struct uwprof_rule *cfi_at(const struct cfi_rows *c, uint64_t pc)
{
	const struct uwprof_rule *r = NULL;
	size_t i;

	for (i = 0; i < c->n && c->addr[i] <= pc; i++)
		r = &c->rule[i];
	return r;
}

/* 1 agree, 0 no comparable claim, -1 the analysis contradicts the CFI. */
static int compare(const struct uwprof_nocfi_state *s,
		   const struct uwprof_rule *r)
{
	int cfa_ok;

	if (!r || (r->cfa_type != UWPROF_CFA_SP && r->cfa_type != UWPROF_CFA_FP))
		return 0;
	if (r->cfa_type == UWPROF_CFA_SP)
		cfa_ok = s->sp_ok ? s->off == r->cfa_off : -2;
	else
		cfa_ok = s->fpv_ok ? -s->fpv == r->cfa_off : -2;
	if (cfa_ok == -2)
		return 0;
	if (!cfa_ok)
		return -1;
	/*
	 * Restored from its slot, the value is in both places: GCC's CFI
	 * keeps naming the slot until the frame is freed.
	 */
	if (s->ra_loc == UWPROF_NOCFI_IN_REG && r->ra_type != UWPROF_REG_SAME &&
	    !(r->ra_type == UWPROF_REG_AT_CFA && s->ra_slot &&
	      r->ra_off == s->ra_slot))
		return -1;
	/* Saved but not yet changed, it is in both places: CFI may be late. */
	if (s->ra_loc == UWPROF_NOCFI_SAVED &&
	    !(r->ra_type == UWPROF_REG_SAME && (s->live & 1U << A64_LR)) &&
	    (r->ra_type != UWPROF_REG_AT_CFA || r->ra_off != s->ra_slot))
		return -1;
	if (s->fp_loc == UWPROF_NOCFI_SAVED &&
	    r->fp_type == UWPROF_REG_AT_CFA && r->fp_off != s->fp_slot)
		return -1;
	return 1;
}

static void one_fde(const struct uwprof_elf *e, struct uwprof_cfi *c,
		    const struct uwprof_cfi_fde *f, struct tally *t)
{
	struct cfi_rows rows = { 0 };
	struct uwprof_nocfi_state *st;
	size_t n = (size_t)(f->hi - f->lo) / 4, i, first, last;
	const uint8_t *code;
	size_t avail;
	int v;

	if ((f->lo | f->hi) & 3 || !n ||
	    uwprof_elf_vaddr(e, f->lo, f->hi - f->lo, &code, &avail) ||
	    avail < f->hi - f->lo || uwprof_cfi_run(c, f, collect, &rows))
		goto out;
	t->fdes++;
	st = calloc(n, sizeof(*st));
	if (st && !uwprof_nocfi_follow(e, code, f->lo, f->hi, f->lo, st,
				       &first, &last)) {
		t->accepted++;
		for (i = 0; i < n; i++) {
			if (!st[i].reached || st[i].ra_loc == UWPROF_NOCFI_LOST)
				continue;
			t->insns++;
			v = compare(&st[i], cfi_at(&rows, f->lo + 4 * i));
			if (v > 0) {
				t->agree++;
			} else if (!v) {
				t->silent++;
			} else if (t->wrong++ < 10) {
				printf("#   0x%llx (FDE 0x%llx): analysis cfa %s%d ra %d/%d fp %d/%d\n",
				       (unsigned long long)(f->lo + 4 * i),
				       (unsigned long long)f->lo,
				       st[i].sp_ok ? "sp+" : "fp-", st[i].sp_ok ?
				       st[i].off : st[i].fpv, st[i].ra_loc,
				       st[i].ra_slot, st[i].fp_loc, st[i].fp_slot);
			}
		}
	}
	free(st);
out:
	free(rows.addr);
	free(rows.rule);
}

static int one_object(const char *path, int num)
{
	struct tally t = { 0 };
	struct uwprof_cfi c;
	struct uwprof_elf *e;
	char err[512];
	size_t i;

	if (uwprof_elf_open(path, &e, err, sizeof(err))) {
		printf("not ok %d - %s: %s\n", num, path, err);
		return 1;
	}
	memset(&c, 0, sizeof(c));
	c.data = e->eh_frame.data;
	c.size = e->eh_frame.size;
	c.addr = e->eh_frame.addr;
	c.sec_name = ".eh_frame";
	c.path = path;
	c.is_eh = 1;
	c.arch = e->arch;
	c.text_addr = e->text_addr;
	c.data_addr = e->got_addr;
	c.err = err;
	c.errlen = sizeof(err);
	if (e->arch != UWPROF_ARCH_ARM64 || !c.data || uwprof_cfi_parse(&c)) {
		printf("ok %d - %s # SKIP not an aarch64 object with .eh_frame\n",
		       num, path);
		goto out;
	}
	for (i = 0; i < c.nr_fdes; i++)
		one_fde(e, &c, &c.fdes[i], &t);
	printf("%s %d - %s: %lu FDEs, %lu followed, %lu rows: %lu as the CFI, %lu not comparable, %lu contradict it\n",
	       t.wrong || !t.agree ? "not ok" : "ok", num, path, t.fdes,
	       t.accepted, t.insns, t.agree, t.silent, t.wrong);
out:
	uwprof_cfi_free(&c);
	uwprof_elf_close(e);
	return t.wrong || (!t.agree && c.nr_fdes);
}

int main(int argc, char **argv)
{
	int i, failed = 0;

	printf("TAP version 13\n");
	for (i = 1; i < argc; i++)
		failed |= one_object(argv[i], i);
	printf("1..%d\n", argc - 1);
	return failed;
}
