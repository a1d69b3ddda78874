// SPDX-License-Identifier: GPL-2.0
/*
 * Tables of real objects through the core's validation: every object named
 * on the command line (the Makefile passes the host's libraries and
 * programs) is compiled by libuwtable and must pass uwprof_table_check(),
 * or the module would refuse what the tool uploads. Each table's index is
 * then built and every row start looked up.
 *
 * With --ldso, the x86_64 dynamic loader's lazy resolver first: its rows
 * base the CFA on rbx, so they must record the rbx it pushed, and its
 * callee (_dl_fixup, found by the resolver's call) must record the rbx it
 * saves; a walk over a stack built from those very rows, sampled in the
 * callee, must reach the resolver's caller.
 *
 * usage: test_realtables [--ldso LD_SO] OBJECT...
 */
#define _DEFAULT_SOURCE
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "table.h"
#include "testlib.h"

/* Keeps the run short: the largest libraries take seconds to compile. */
#define MAX_OBJECT_SIZE	(16 << 20)

#define RBX		3
#define LDSO_STACK	0x7ff000000000ULL

/* An object's bytes at [vaddr, vaddr + n) from its loaded segments. */
static int elf_read(const char *path, u64 vaddr, u8 *buf, size_t n)
{
	int fd = open(path, O_RDONLY), ret = -1;
	Elf *e;
	size_t i, nph;

	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (e && !elf_getphdrnum(e, &nph)) {
		for (i = 0; i < nph && ret; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD ||
			    vaddr < ph.p_vaddr || vaddr + n > ph.p_vaddr + ph.p_filesz)
				continue;
			if (pread(fd, buf, n, (off_t)(ph.p_offset + vaddr - ph.p_vaddr)) ==
			    (ssize_t)n)
				ret = 0;
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return ret;
}

static const struct uwprof_rule *row_rule(const struct uwprof_table *tab, u32 r)
{
	return tb_row_rule(tab, r);
}

/* The row whose range holds vaddr, or nr_rows. */
static u32 row_at(const struct uwprof_table *tab, u64 vaddr)
{
	u32 r;

	for (r = 0; r + 1 < tab->nr_rows; r++)
		if (tb_row_addr(tab, r) <= vaddr && vaddr < tb_row_addr(tab, r + 1))
			return r;
	return tab->nr_rows;
}

/*
 * A function's rows start after an END row; the first of them recording
 * rbx, or nr_rows.
 */
static u32 saves_rbx(const struct uwprof_table *tab, u64 fn)
{
	u32 r = row_at(tab, fn);

	if (r == tab->nr_rows || tb_row_addr(tab, r) != fn || !r ||
	    row_rule(tab, r - 1)->cfa_type != UWPROF_CFA_END)
		return tab->nr_rows;
	for (; r + 1 < tab->nr_rows && row_rule(tab, r)->cfa_type != UWPROF_CFA_END; r++)
		if (row_rule(tab, r)->saved_type == UWPROF_REG_AT_CFA &&
		    row_rule(tab, r)->saved_reg == RBX &&
		    row_rule(tab, r)->cfa_type == UWPROF_CFA_SP)
			return r;
	return tab->nr_rows;
}

/*
 * Walk fixup (sampled at its row 'fr') <- the resolver (returned to at
 * 'ret', its row CFA = rbx + off) <- 0, over a stack written from the rows:
 * the core must read rbx where fixup saved it.
 */
static void walk_resolver(struct tap *t, const struct uwprof_table *tab, u32 fr,
			  u64 ret)
{
	const struct uwprof_rule *f = row_rule(tab, fr);
	const struct uwprof_rule *res = row_rule(tab, row_at(tab, ret - 1));
	static u64 stack[1024];
	struct uwprof_unwind_map map = {
		.start = tab->base, .end = tab->base + tab->span, .table = tab,
	};
	struct uwprof_host_env env = { .nr_regions = 1, .user_limit = 1ULL << 47,
				       .va_bits = 48 };
	u64 ips[8], gpr[16] = { 0 }, sp = LDSO_STACK + 64, cfa, rbx;
	struct uwprof_unwind_req req = {
		.maps = &map, .nr_maps = 1, .ips = ips, .max_depth = 8, .env = &env,
	};
	struct uwprof_unwind_res out;

	memset(stack, 0, sizeof(stack));
	env.region[0] = (struct uwprof_host_region){
		.start = LDSO_STACK, .size = sizeof(stack), .data = (const u8 *)stack,
	};
	cfa = sp + (u64)f->cfa_off;
	rbx = cfa + 512;
	/* Interrupted rbx: wrong on purpose, the saved one must be used. */
	gpr[RBX] = rbx + 64;
	env.gpr = gpr;
	env.nr_gpr = 16;
	stack[(cfa + f->ra_off - LDSO_STACK) / 8] = ret;
	stack[(cfa + f->saved_off - LDSO_STACK) / 8] = rbx;
	/* The resolver's ra at rbx + off - 8 stays 0: its caller ends it. */
	req.regs.pc = tb_row_addr(tab, fr);
	req.regs.sp = sp;
	uwprof_unwind_user(&req, &out);
	tap_ok(t, res->cfa_type == UWPROF_CFA_REG && out.nr == 2 &&
	       out.stop == UWPROF_STOP_OK && ips[1] == ret,
	       "ld.so: walk from the callee's row at %#llx through the resolver's at %#llx: %u frames, stop %u",
	       (unsigned long long)req.regs.pc, (unsigned long long)ret, out.nr,
	       out.stop);
}

/*
 * The direct calls (e8 rel32) the resolver whose rows start at r0 makes
 * where its CFA is rbx-based, to a function that records rbx.
 */
static void check_callee(struct tap *t, const char *path,
			 const struct uwprof_table *tab, u32 r0)
{
	u32 r1 = r0, i, found = 0;
	u64 lo = tb_row_addr(tab, r0), hi;
	u8 *code;

	while (r1 + 1 < tab->nr_rows && row_rule(tab, r1)->cfa_type != UWPROF_CFA_END)
		r1++;
	hi = tb_row_addr(tab, r1);
	code = malloc(hi - lo);
	if (!code || elf_read(path, lo, code, hi - lo)) {
		tap_ok(t, false, "ld.so: resolver code at %#llx readable",
		       (unsigned long long)lo);
		free(code);
		return;
	}
	for (i = 0; i + 5 <= hi - lo; i++) {
		s32 rel;
		u64 to;
		u32 fr;

		if (code[i] != 0xe8)
			continue;
		memcpy(&rel, code + i + 1, 4);
		to = lo + i + 5 + (u64)(s64)rel;
		fr = saves_rbx(tab, to);
		if (fr == tab->nr_rows ||
		    row_rule(tab, row_at(tab, lo + i))->cfa_type != UWPROF_CFA_REG)
			continue;
		found++;
		walk_resolver(t, tab, fr, lo + i + 5);
	}
	tap_ok(t, found > 0, "ld.so: the resolver at %#llx calls %u function(s) recording rbx",
	       (unsigned long long)lo, found);
	free(code);
}

/* The lazy resolvers: CFA = rbx + n, with the rbx they pushed recorded. */
static void check_ldso(struct tap *t, const char *path)
{
	struct uwprof_table tab;
	struct uwprof_blob b;
	u32 r, fn, last_fn = ~0U, reg_rows = 0, recorded = 0;
	int err = uwprof_table_compile(path, &b, NULL);

	if (!tap_ok(t, err == 0 && !uwprof_table_check(b.data, b.size),
		    "ld.so: %s compiles and passes the check (%d)", path, err))
		return;
	uwprof_table_init(&tab, b.data);
	for (r = 0; r + 1 < tab.nr_rows; r++) {
		const struct uwprof_rule *ru = row_rule(&tab, r);

		if (ru->cfa_type != UWPROF_CFA_REG || ru->cfa_arg != RBX)
			continue;
		reg_rows++;
		if (ru->saved_type != UWPROF_REG_AT_CFA || ru->saved_reg != RBX)
			continue;
		recorded++;
		/* Each resolver once, from its first row. */
		for (fn = r; fn && row_rule(&tab, fn - 1)->cfa_type != UWPROF_CFA_END; fn--)
			;
		if (fn != last_fn)
			check_callee(t, path, &tab, fn);
		last_fn = fn;
	}
	tap_ok(t, reg_rows > 0 && recorded == reg_rows,
	       "ld.so: %u rows with CFA = rbx + n, %u of them record the saved rbx",
	       reg_rows, recorded);
	uwprof_blob_free(&b);
}

int main(int argc, char **argv)
{
	struct tap t = { 0 };
	u64 rows = 0, objs = 0;
	int i = 1;

	if (argc > 2 && !strcmp(argv[1], "--ldso")) {
		check_ldso(&t, argv[2]);
		i = 3;
	}
	for (; i < argc; i++) {
		struct uwprof_table tab;
		struct uwprof_blob b;
		struct stat st;
		u32 r, p, bad = 0;
		int err;

		if (stat(argv[i], &st) || !S_ISREG(st.st_mode) || st.st_size > MAX_OBJECT_SIZE)
			continue;
		err = uwprof_table_compile(argv[i], &b, NULL);
		if (err == -ENODATA || err == -ENOEXEC)
			continue;	/* nothing to check: no CFI, or not an object */
		if (err) {
			tap_skip(&t, b.err, "%s", argv[i]);
			continue;
		}
		err = uwprof_table_check(b.data, b.size);
		if (!tap_ok(&t, err == 0, "%s: %zu bytes pass uwprof_table_check (%d)",
			    argv[i], b.size, err)) {
			uwprof_blob_free(&b);
			continue;
		}
		uwprof_table_init(&tab, b.data);
		/* Each row's first and last byte must find that row's rule. */
		for (p = 0; p < tab.nr_pages; p++) {
			for (r = tab.page[p].row; r < tab.page[p + 1].row; r++) {
				u64 a = tab.base + ((u64)p << tab.page_shift) + tab.pc[r];
				const struct uwprof_rule *want =
					&tab.rules[tab.palette[tab.page[p].palette + tab.slot[r]]];

				if (r + 1 == tab.nr_rows)
					break;
				if (uwprof_table_lookup(&tab, a) != want ||
				    uwprof_table_lookup(&tab, tb_row_addr(&tab, r + 1) - 1) != want)
					bad++;
			}
		}
		tap_ok(&t, bad == 0, "%s: %u rows in %u pages, each found by its first and last address (%u not)",
		       argv[i], tab.nr_rows, tab.nr_pages, bad);
		rows += tab.nr_rows;
		objs++;
		uwprof_blob_free(&b);
	}
	tap_diag("%llu objects, %llu rows checked", (unsigned long long)objs,
		 (unsigned long long)rows);
	return tap_done(&t);
}
