// SPDX-License-Identifier: GPL-2.0
/*
 * Symbolizer (see symbols.h): per-object sorted symbol arrays built from
 * ELF symbol tables, separate debug files, libdw line tables, and the
 * kernel's kallsyms text. Called from the report and script commands.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <elfutils/libdw.h>
#include <gelf.h>
#include <libiberty/demangle.h>

#include "debuginfod.h"
#include "elf_file.h"
#include "file_open.h"
#include "kallsyms.h"
#include "symbols.h"
#include "table.h"

struct sym_ent {
	uint64_t	addr;
	uint64_t	size;		/* 0: unsized */
	char		*name;		/* demangled, owned */
	int		sec;		/* index into obj->secs, -1: none */
	int		rank;		/* higher wins among equal addresses */
};

/* An executable section: unsized symbols do not reach past its end. */
struct sym_sec {
	uint64_t	lo;
	uint64_t	hi;
};

#define SYM_MAX_SECS	64

struct sym_obj {
	char		*path;
	int		failed;		/* negative errno: tried and unusable */
	uint8_t		key_id[UWPROF_ELF_MAX_BUILD_ID];	/* as asked */
	size_t		key_id_size;
	uint8_t		build_id[UWPROF_ELF_MAX_BUILD_ID];	/* as found */
	size_t		build_id_size;
	struct sym_ent	*syms;
	size_t		nr_syms;
	struct sym_sec	secs[SYM_MAX_SECS];
	int		nr_secs;
	/* libdw state for --lines: the ELF it reads must outlive it. */
	struct uwprof_elf *line_elf;
	Dwarf		*dwarf;
	char		**files;	/* interned source paths */
	size_t		nr_files;
};

struct ksym {
	uint64_t	addr;
	char		*name;
	const char	*dso;		/* interned "[kernel.kallsyms]" / "[mod]" */
};

struct uwprof_syms {
	int		lines;
	struct uwprof_dbgd *dbgd;
	struct sym_obj	*objs;
	size_t		nr_objs;
	struct ksym	*ksyms;
	size_t		nr_ksyms;
	char		**kdsos;	/* distinct module names */
	size_t		nr_kdsos;
};

struct uwprof_syms *uwprof_syms_new(int lines)
{
	struct uwprof_syms *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->lines = lines;
	s->dbgd = uwprof_dbgd_new();
	if (!s->dbgd) {
		free(s);
		return NULL;
	}
	return s;
}

static void obj_release(struct sym_obj *o)
{
	size_t i;

	for (i = 0; i < o->nr_syms; i++)
		free(o->syms[i].name);
	free(o->syms);
	for (i = 0; i < o->nr_files; i++)
		free(o->files[i]);
	free(o->files);
	if (o->dwarf)
		dwarf_end(o->dwarf);
	uwprof_elf_close(o->line_elf);
	free(o->path);
}

void uwprof_syms_free(struct uwprof_syms *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nr_objs; i++)
		obj_release(&s->objs[i]);
	free(s->objs);
	for (i = 0; i < s->nr_ksyms; i++)
		free(s->ksyms[i].name);
	free(s->ksyms);
	for (i = 0; i < s->nr_kdsos; i++)
		free(s->kdsos[i]);
	free(s->kdsos);
	uwprof_dbgd_free(s->dbgd);
	free(s);
}

char *uwprof_syms_demangle(const char *name)
{
	char *d;

	if (!name || name[0] != '_')
		return NULL;
	/*
	 * Rust first: its legacy scheme is valid Itanium mangling too, and
	 * only the Rust demangler drops the trailing hash. It declines
	 * names that are not Rust, which then go to the C++ demangler.
	 */
	if (name[1] == 'R' || name[1] == 'Z') {
		d = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_RUST);
		if (d)
			return d;
	}
	if (name[1] == 'Z')
		return cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI |
				      DMGL_GNU_V3);
	return NULL;
}

static int ent_cmp(const void *a, const void *b)
{
	const struct sym_ent *x = a, *y = b;
	size_t ux, uy, lx, ly;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* Best first among equal addresses. */
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	/* Aliases: the public name (mprotect) over __mprotect, __GI_... */
	ux = strspn(x->name, "_");
	uy = strspn(y->name, "_");
	if (ux != uy)
		return ux < uy ? -1 : 1;
	lx = strlen(x->name);
	ly = strlen(y->name);
	if (lx != ly)
		return lx > ly ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void obj_add_secs(struct sym_obj *o, Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn)) && o->nr_secs < SYM_MAX_SECS) {
		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_EXECINSTR) ||
		    !(sh.sh_flags & SHF_ALLOC) || !sh.sh_size)
			continue;
		o->secs[o->nr_secs].lo = sh.sh_addr;
		o->secs[o->nr_secs].hi = sh.sh_addr + sh.sh_size;
		o->nr_secs++;
	}
}

static int obj_sec_of(const struct sym_obj *o, uint64_t addr)
{
	int i;

	for (i = 0; i < o->nr_secs; i++)
		if (addr >= o->secs[i].lo && addr < o->secs[i].hi)
			return i;
	return -1;
}

/*
 * Append the function symbols of one table. Code symbols without a type
 * (hand-written assembly) count too; mapping symbols ($x, $d) and local
 * labels do not. Returns 0 or -ENOMEM.
 */
static int obj_read_symtab(struct sym_obj *o, Elf *elf, Elf_Scn *scn,
			   size_t *cap, int from_dynsym)
{
	GElf_Shdr sh;
	Elf_Data *d;
	GElf_Sym sym;
	size_t i, n;
	const char *name;
	struct sym_ent *e;
	int type, bind;

	if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize)
		return 0;
	d = elf_getdata(scn, NULL);
	if (!d)
		return 0;
	n = sh.sh_size / sh.sh_entsize;
	for (i = 1; i < n; i++) {
		if (!gelf_getsym(d, (int)i, &sym))
			break;
		type = GELF_ST_TYPE(sym.st_info);
		bind = GELF_ST_BIND(sym.st_info);
		if (sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE)
			continue;
		if (type != STT_FUNC && type != STT_GNU_IFUNC &&
		    type != STT_NOTYPE)
			continue;
		name = elf_strptr(elf, sh.sh_link, sym.st_name);
		if (!name || !*name || name[0] == '$' ||
		    !strncmp(name, ".L", 2))
			continue;
		if (type == STT_NOTYPE && obj_sec_of(o, sym.st_value) < 0)
			continue;
		if (o->nr_syms == *cap) {
			size_t nc = *cap ? *cap * 2 : 256;

			e = realloc(o->syms, nc * sizeof(*e));
			if (!e)
				return -ENOMEM;
			o->syms = e;
			*cap = nc;
		}
		e = &o->syms[o->nr_syms];
		e->addr = sym.st_value;
		e->size = sym.st_size;
		e->sec = obj_sec_of(o, sym.st_value);
		/*
		 * Prefer sized, typed, then (as perf does) non-weak over
		 * weak and global over local, and .symtab over .dynsym.
		 */
		e->rank = (sym.st_size ? 8 : 0) + (type != STT_NOTYPE ? 4 : 0) +
			  (bind == STB_GLOBAL ? 2 : bind == STB_WEAK ? 0 : 1) -
			  (from_dynsym ? 1 : 0);
		e->name = uwprof_syms_demangle(name);
		if (!e->name)
			e->name = strdup(name);
		if (!e->name)
			return -ENOMEM;
		o->nr_syms++;
	}
	return 0;
}

static int obj_read_syms(struct sym_obj *o, Elf *elf, int want,
			 size_t *cap)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	int ret;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != (unsigned int)want)
			continue;
		ret = obj_read_symtab(o, elf, scn, cap, want == SHT_DYNSYM);
		if (ret)
			return ret;
	}
	return 0;
}

static int has_section(Elf *elf, unsigned int type, const char *name)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t shstrndx;
	const char *n;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (type && sh.sh_type == type)
			return 1;
		if (name) {
			n = elf_strptr(elf, shstrndx, sh.sh_name);
			if (n && !strcmp(n, name) && sh.sh_type != SHT_NOBITS)
				return 1;
		}
	}
	return 0;
}

static int debug_try(const struct uwprof_elf *e, const char *cand, int fd,
		     struct uwprof_elf **out)
{
	struct uwprof_elf *d;
	char err[UWPROF_ERR_LEN];

	if (uwprof_elf_open_fd(fd, cand, &d, err, sizeof(err)))
		return -ENOENT;
	if (d->arch != e->arch ||
	    (e->build_id_size && (d->build_id_size != e->build_id_size ||
				  memcmp(d->build_id, e->build_id,
					 e->build_id_size)))) {
		uwprof_elf_close(d);
		return -ENOENT;
	}
	*out = d;
	return 0;
}

/*
 * No debug file on this machine: ask debuginfod by build-id. What
 * happened goes to 'note' once per object (the fetched file, or why none
 * came); a repeated failure for the same build-id stays silent.
 */
static void debug_fetch(struct uwprof_syms *s, const struct uwprof_elf *e,
			struct uwprof_elf **out, char *note, size_t notelen)
{
	char msg[UWPROF_ERR_LEN], *path;
	int ret, fd;

	if (!e->build_id_size)
		return;
	ret = uwprof_dbgd_find(s->dbgd, e->build_id, e->build_id_size, &path,
			       msg, sizeof(msg));
	if (ret == -EOPNOTSUPP && !msg[0])
		return;
	if (ret) {
		if (msg[0] && note)
			snprintf(note, notelen,
				 "%s: no debug file from debuginfod (%s): its local functions show as offsets",
				 e->path, msg);
		return;
	}
	/* debuginfod's cache is the caller's own: no owner rule there. */
	fd = uwprof_file_open(path, 0, NULL, NULL, NULL, 0);
	if (fd < 0 || debug_try(e, path, fd, out)) {
		if (note)
			snprintf(note, notelen,
				 "%s: the debug file from debuginfod (%s) does not match it",
				 e->path, path);
	} else if (note) {
		snprintf(note, notelen, "%s: debug file from debuginfod: %s",
			 e->path, path);
	}
	if (fd >= 0)
		close(fd);
	free(path);
}

/* Keep the best symbol per address; sort for binary search. */
static void obj_finish(struct sym_obj *o)
{
	size_t i, j;

	if (!o->nr_syms)
		return;
	qsort(o->syms, o->nr_syms, sizeof(*o->syms), ent_cmp);
	for (i = 1, j = 0; i < o->nr_syms; i++) {
		if (o->syms[i].addr == o->syms[j].addr) {
			/* An alias: the better one (sorted first) stays. */
			if (!o->syms[j].size)
				o->syms[j].size = o->syms[i].size;
			free(o->syms[i].name);
			continue;
		}
		o->syms[++j] = o->syms[i];
	}
	o->nr_syms = j + 1;
}

static int obj_load(struct uwprof_syms *s, struct sym_obj *o,
		    const void *image, size_t size, char *err, size_t errlen)
{
	struct uwprof_elf *e = NULL, *dbg = NULL;
	char msg[UWPROF_ERR_LEN];
	size_t cap = 0;
	int ret;

	if (image)
		ret = uwprof_elf_open_mem(image, size, o->path, &e, msg,
					  sizeof(msg));
	else
		ret = uwprof_elf_open(o->path, &e, msg, sizeof(msg));
	if (ret) {
		if (err)
			snprintf(err, errlen, "%s", msg);
		return ret;
	}
	memcpy(o->build_id, e->build_id, e->build_id_size);
	o->build_id_size = e->build_id_size;
	if (o->key_id_size && (o->key_id_size != e->build_id_size ||
			       memcmp(o->key_id, e->build_id, o->key_id_size))) {
		if (err)
			snprintf(err, errlen,
				 "%s: build-id differs from the recorded one (file replaced since recording)",
				 o->path);
		uwprof_elf_close(e);
		return -ESTALE;
	}
	obj_add_secs(o, e->elf);
	if (!image && (!has_section(e->elf, SHT_SYMTAB, NULL) ||
		       (s->lines && !has_section(e->elf, 0, ".debug_info"))) &&
	    uwprof_elf_find_debug(e, debug_try, &dbg))
		debug_fetch(s, e, &dbg, err, errlen);
	ret = obj_read_syms(o, e->elf, SHT_SYMTAB, &cap);
	if (!ret && dbg)
		ret = obj_read_syms(o, dbg->elf, SHT_SYMTAB, &cap);
	if (!ret)
		ret = obj_read_syms(o, e->elf, SHT_DYNSYM, &cap);
	if (ret) {
		if (err)
			snprintf(err, errlen, "%s: out of memory", o->path);
		goto close;
	}
	obj_finish(o);
	if (s->lines) {
		struct uwprof_elf **le = dbg &&
			has_section(dbg->elf, 0, ".debug_info") ? &dbg : &e;

		o->dwarf = dwarf_begin_elf((*le)->elf, DWARF_C_READ, NULL);
		if (o->dwarf) {
			o->line_elf = *le;
			*le = NULL;
		}
	}
close:
	uwprof_elf_close(dbg);
	uwprof_elf_close(e);
	return ret;
}

int uwprof_syms_object(struct uwprof_syms *s, const char *path,
		       const void *image, size_t size,
		       const uint8_t *build_id, size_t build_id_size,
		       char *err, size_t errlen)
{
	struct sym_obj *o;
	size_t i;
	int ret;

	if (err && errlen)
		err[0] = 0;
	if (build_id_size > UWPROF_ELF_MAX_BUILD_ID)
		build_id_size = UWPROF_ELF_MAX_BUILD_ID;
	for (i = 0; i < s->nr_objs; i++) {
		o = &s->objs[i];
		if (strcmp(o->path, path) || o->key_id_size != build_id_size ||
		    memcmp(o->key_id, build_id, build_id_size))
			continue;
		/* Reported when first tried: an empty message now. */
		return o->failed ? o->failed : (int)i;
	}
	o = realloc(s->objs, (s->nr_objs + 1) * sizeof(*o));
	if (!o)
		return -ENOMEM;
	s->objs = o;
	o = &s->objs[s->nr_objs];
	memset(o, 0, sizeof(*o));
	o->path = strdup(path);
	if (!o->path)
		return -ENOMEM;
	if (build_id_size)
		memcpy(o->key_id, build_id, build_id_size);
	o->key_id_size = build_id_size;
	s->nr_objs++;
	ret = obj_load(s, o, image, size, err, errlen);
	if (ret) {
		o->failed = ret;
		return ret;
	}
	return (int)(s->nr_objs - 1);
}

const uint8_t *uwprof_syms_build_id(struct uwprof_syms *s, int obj,
				    size_t *size)
{
	if (obj < 0 || (size_t)obj >= s->nr_objs) {
		*size = 0;
		return NULL;
	}
	*size = s->objs[obj].build_id_size;
	return s->objs[obj].build_id;
}

/* Rightmost entry with addr <= a, or -1. */
static long sym_search(const struct sym_ent *v, size_t n, uint64_t a)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].addr <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (long)lo - 1;
}

/* Nested symbols are rare and shallow: look back this far for a cover. */
#define SYM_COVER_LOOKBACK	16

static const struct sym_ent *obj_find(const struct sym_obj *o, uint64_t a)
{
	long i = sym_search(o->syms, o->nr_syms, a), k;
	const struct sym_ent *e;

	if (i < 0)
		return NULL;
	for (k = i; k >= 0 && k > i - SYM_COVER_LOOKBACK; k--) {
		e = &o->syms[k];
		if (e->size && a - e->addr < e->size)
			return e;
	}
	/*
	 * No sized symbol covers it: the nearest preceding unsized one,
	 * provided no section boundary lies between them.
	 */
	e = &o->syms[i];
	if (!e->size && e->sec >= 0 && e->sec == obj_sec_of(o, a))
		return e;
	return NULL;
}

static const char *obj_intern_file(struct sym_obj *o, const char *f)
{
	char **v;
	size_t i;

	for (i = 0; i < o->nr_files; i++)
		if (!strcmp(o->files[i], f))
			return o->files[i];
	v = realloc(o->files, (o->nr_files + 1) * sizeof(*v));
	if (!v)
		return NULL;
	o->files = v;
	v[o->nr_files] = strdup(f);
	if (!v[o->nr_files])
		return NULL;
	return v[o->nr_files++];
}

static void obj_line(struct sym_obj *o, uint64_t a, struct uwprof_sym_res *r)
{
	Dwarf_Die cu, *cup = NULL;
	Dwarf_Off off = 0, next;
	size_t hsize;
	Dwarf_Line *l;
	const char *f;
	int line;

	if (dwarf_addrdie(o->dwarf, a, &cu))
		cup = &cu;
	/* Without (or outside) .debug_aranges: ask each unit. */
	while (!cup && !dwarf_nextcu(o->dwarf, off, &next, &hsize, NULL,
				     NULL, NULL)) {
		if (dwarf_offdie(o->dwarf, off + hsize, &cu) &&
		    dwarf_haspc(&cu, a) > 0)
			cup = &cu;
		off = next;
	}
	if (!cup)
		return;
	l = dwarf_getsrc_die(cup, a);
	if (!l || dwarf_lineno(l, &line) || line <= 0)
		return;
	f = dwarf_linesrc(l, NULL, NULL);
	if (!f)
		return;
	r->file = obj_intern_file(o, f);
	r->line = r->file ? (unsigned int)line : 0;
}

int uwprof_syms_lookup(struct uwprof_syms *s, int obj, uint64_t addr,
		       struct uwprof_sym_res *res)
{
	struct sym_obj *o;
	const struct sym_ent *e;

	memset(res, 0, sizeof(*res));
	if (obj < 0 || (size_t)obj >= s->nr_objs || s->objs[obj].failed)
		return -EINVAL;
	o = &s->objs[obj];
	e = obj_find(o, addr);
	if (e) {
		res->name = e->name;
		res->start = e->addr;
	}
	if (o->dwarf)
		obj_line(o, addr, res);
	return 0;
}

/* By address; among aliases the one to show first, as for objects. */
static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return uwprof_kallsyms_alias_cmp(x->name, strlen(x->name), y->name,
					 strlen(y->name));
}

static const char *kdso_intern(struct uwprof_syms *s, const char *mod,
			       size_t len)
{
	char **v, *n;
	size_t i;

	for (i = 0; i < s->nr_kdsos; i++)
		if (strlen(s->kdsos[i]) == len + 2 &&
		    !strncmp(s->kdsos[i] + 1, mod, len))
			return s->kdsos[i];
	v = realloc(s->kdsos, (s->nr_kdsos + 1) * sizeof(*v));
	if (!v)
		return NULL;
	s->kdsos = v;
	n = malloc(len + 3);
	if (!n)
		return NULL;
	n[0] = '[';
	memcpy(n + 1, mod, len);
	n[len + 1] = ']';
	n[len + 2] = 0;
	v[s->nr_kdsos++] = n;
	return n;
}

int uwprof_syms_kernel_load(struct uwprof_syms *s, const char *text,
			    size_t len)
{
	struct uwprof_kallsym k;
	size_t cap = 0, pos = 0;
	int nonzero = 0;
	struct ksym *v;
	const char *dso;

	while (uwprof_kallsyms_next(text, len, &pos, &k)) {
		if (k.mod)
			dso = kdso_intern(s, k.mod, k.mod_len);
		else
			dso = kdso_intern(s, "kernel.kallsyms", 15);
		if (!dso)
			return -ENOMEM;
		if (s->nr_ksyms == cap) {
			cap = cap ? cap * 2 : 4096;
			v = realloc(s->ksyms, cap * sizeof(*v));
			if (!v)
				return -ENOMEM;
			s->ksyms = v;
		}
		v = &s->ksyms[s->nr_ksyms];
		v->addr = k.addr;
		v->dso = dso;
		v->name = strndup(k.name, k.name_len);
		if (!v->name)
			return -ENOMEM;
		s->nr_ksyms++;
		nonzero |= k.addr != 0;
	}
	if (!nonzero) {
		while (s->nr_ksyms)
			free(s->ksyms[--s->nr_ksyms].name);
		return 0;
	}
	qsort(s->ksyms, s->nr_ksyms, sizeof(*s->ksyms), ksym_cmp);
	return (int)(s->nr_ksyms > INT_MAX ? INT_MAX : s->nr_ksyms);
}

/* kallsyms has no sizes: past the last symbol, this much still counts. */
#define KSYM_TAIL	0x100000ULL

int uwprof_syms_kernel_lookup(struct uwprof_syms *s, uint64_t addr,
			      struct uwprof_sym_res *res, const char **dso)
{
	size_t lo = 0, hi = s->nr_ksyms, mid;

	memset(res, 0, sizeof(*res));
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (s->ksyms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || (lo == s->nr_ksyms &&
		    addr - s->ksyms[lo - 1].addr > KSYM_TAIL))
		return -ENOENT;
	while (lo > 1 && s->ksyms[lo - 2].addr == s->ksyms[lo - 1].addr)
		lo--;	/* the first alias is the preferred one */
	res->name = s->ksyms[lo - 1].name;
	res->start = s->ksyms[lo - 1].addr;
	*dso = s->ksyms[lo - 1].dso;
	return 0;
}
