// SPDX-License-Identifier: GPL-2.0
/* Rows that end the walk at outermost frames the CFI leaves open. */
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

static int is_outermost(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(go_outermost) / sizeof(go_outermost[0]); i++)
		if (!strcmp(name, go_outermost[i]))
			return 1;
	return 0;
}

static int mark_range(struct uwprof_cfi *c, uint64_t lo, uint64_t hi)
{
	struct uwprof_cfi_fde *f;
	int found = 0;
	size_t i;

	for (i = 0; i < c->nr_fdes; i++) {
		f = &c->fdes[i];
		if (f->lo <= lo && lo < f->hi) {
			f->cie = UWPROF_OUTERMOST_CIE;
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
	f->cie = UWPROF_OUTERMOST_CIE;
	return 0;
}

int uwprof_outermost_mark(const struct uwprof_elf *e, struct uwprof_cfi *c)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Sym sym;
	Elf_Data *d;
	size_t i, n;
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

			if (!gelf_getsym(d, (int)i, &sym) ||
			    GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_value)
				continue;
			name = elf_strptr(e->elf, sh.sh_link, sym.st_name);
			if (!name || !is_outermost(name))
				continue;
			ret = mark_range(c, sym.st_value,
					 sym.st_value + sym.st_size);
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
	struct uwprof_rule r;

	memset(&r, 0, sizeof(r));
	r.cfa_type = UWPROF_CFA_SP;
	r.cfa_off = e->arch == UWPROF_ARCH_X86_64 ? 8 : 0;
	r.fp_type = UWPROF_REG_SAME;
	r.ra_type = UWPROF_REG_UNDEF;
	return fn(ctx, f->lo, &r, UWPROF_CFI_NO_REASON);
}
