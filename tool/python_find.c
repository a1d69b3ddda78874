// SPDX-License-Identifier: GPL-2.0
/*
 * Which CPython a process runs, found in the ELF files it maps, and the
 * module's descriptor of it (struct uwprof_python): the interpreter
 * (python3.X, or libpython3.X.so for embedders) names its runtime state,
 * code type and version in its dynamic symbols, and from 3.13 on
 * describes its own structures at the start of its runtime state
 * (python_debug_offsets.c); the C library describes
 * its thread structure for debuggers in its _thread_db_* symbols (what
 * libthread_db reads), so the thread-specific data the thread states hang
 * from is found in any glibc without a table of its versions. Everything
 * comes from the files, not from the process: a descriptor can be sent at
 * exec, before the interpreter ran an instruction. Files are opened as
 * the recorder opens every mapped object (procmaps.h) and read once per
 * file (the cache). They are their owner's to forge: each read is bounded
 * (PYF_MAX_DYNSYM, PYF_MAX_TRIES) and one that cannot be used gives the
 * process a reason, not silence.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf_file.h"
#include "python.h"

enum pyf_kind {
	PYF_OTHER,
	PYF_PYTHON,		/* a CPython interpreter */
	PYF_LIBC,		/* glibc, with its thread descriptions */
	PYF_UNUSABLE,		/* looked like one of those; 'why' says more */
};

struct uwprof_py_file {
	uint32_t	dev_major, dev_minor;
	uint64_t	inode;
	int64_t		mtime_ns;
	int		kind;			/* enum pyf_kind */
	struct uwprof_elf_info info;
	/* PYF_PYTHON: object vaddrs */
	uint32_t	hexversion;		/* Py_Version; 0: none */
	uint32_t	version;		/* PY_VERSION_HEX >> 16 */
	uint64_t	runtime;		/* _PyRuntime */
	uint64_t	code_type;		/* PyCode_Type */
	struct uwprof_pydo pydo;		/* 3.13 on: _Py_DebugOffsets */
	/* PYF_LIBC: struct pthread, as libthread_db is told */
	uint32_t	pt_specific;
	uint32_t	pt_tid;
	uint32_t	kd_size;
	uint32_t	kd_data;
	uint32_t	kd_per_block;
	uint32_t	thread_area;		/* arm64: thread pointer - struct pthread */
	char		why[UWPROF_PY_WHY];
};

/*
 * What the module walks, per minor version and arch: CPython's own
 * structures (Include/internal/pycore_runtime.h, pycore_pystate.h,
 * pycore_frame.h, cpython/code.h) in the default build. From 3.13 on the
 * interpreter publishes its field offsets itself (_Py_DebugOffsets, read
 * by python_debug_offsets.c, which override fr_*, ts_frame, co_type and
 * co_code here); what it does not publish is below:
 * - key: autoTSSkey._key in _PyRuntime (Py_tss_t {int _is_initialized;
 *   pthread_key_t _key;}, internal/pycore_runtime.h in 3.13,
 *   pycore_runtime_structs.h in 3.14), the same on both arches: what
 *   PyGILState_GetThisThreadState loads in Debian's trixie 3.13.5 and sid
 *   3.14.10, amd64 and arm64;
 * - entry_value: the owner of the entry frame each eval invocation pushes
 *   on its C stack: FRAME_OWNED_BY_CSTACK = 3 (3.13,
 *   internal/pycore_frame.h), FRAME_OWNED_BY_INTERPRETER = 3 (3.14,
 *   internal/pycore_interpframe_structs.h; CSTACK is 4 there);
 * - 3.14's f_executable is a _PyStackRef whose low bits are tags
 *   (internal/pycore_stackref.h): UWPROF_PY_CODE_TAGGED;
 * - co_size: PyVarObject.ob_size (Include/object.h).
 */
struct pyf_walk {
	uint32_t	version;
	uint16_t	arch;
	uint32_t	key;			/* autoTSSkey._key in _PyRuntime */
	struct uwprof_python d;
};

static const struct pyf_walk pyf_walks[] = {
	{ 0x030b, UWPROF_ARCH_X86_64, 596, {
		.flags = UWPROF_PY_CFRAME, .ts_frame = 56, .cf_frame = 8,
		.cf_previous = 16, .fr_code = 32, .fr_previous = 48,
		.fr_instr = 56, .fr_entry = 68, .co_type = 8, .co_size = 16,
		.co_code = 184 } },
	{ 0x030b, UWPROF_ARCH_ARM64, 612, {
		.flags = UWPROF_PY_CFRAME, .ts_frame = 56, .cf_frame = 8,
		.cf_previous = 16, .fr_code = 32, .fr_previous = 48,
		.fr_instr = 56, .fr_entry = 68, .co_type = 8, .co_size = 16,
		.co_code = 184 } },
	{ 0x030d, UWPROF_ARCH_X86_64, 2164, {
		.entry_value = 3, .co_size = 16 } },
	{ 0x030d, UWPROF_ARCH_ARM64, 2164, {
		.entry_value = 3, .co_size = 16 } },
	{ 0x030e, UWPROF_ARCH_X86_64, 2340, {
		.flags = UWPROF_PY_CODE_TAGGED, .entry_value = 3,
		.co_size = 16 } },
	{ 0x030e, UWPROF_ARCH_ARM64, 2340, {
		.flags = UWPROF_PY_CODE_TAGGED, .entry_value = 3,
		.co_size = 16 } },
};

struct pyf_sym {
	const char	*name;
	uint64_t	value;
	int		found;
};

/*
 * What one object's dynamic symbols may make the reader allocate: its
 * .dynsym and the strings it names, each read whole. libpython's are a
 * few hundred KiB, glibc's less; a file that declares more (its owner can
 * make it, sparse, as large as it likes) is refused before libelf reads
 * it.
 */
#define PYF_MAX_DYNSYM	(64U << 20)
/* Files named as an interpreter or a C library read per process, at most. */
#define PYF_MAX_TRIES	8

/* Whether the section's bytes lie in the file and within PYF_MAX_DYNSYM. */
static int pyf_sec_ok(const struct uwprof_elf *e, const GElf_Shdr *sh)
{
	return sh->sh_size <= PYF_MAX_DYNSYM &&
	       sh->sh_offset <= e->image_size &&
	       sh->sh_size <= e->image_size - sh->sh_offset;
}

/*
 * The dynamic symbols named in s[] (a stripped file keeps those), from
 * the object's one .dynsym (a linker makes one; a second is not read).
 * Returns 0, or -EINVAL with 'why' saying what is wrong with it.
 */
static int pyf_syms(const struct uwprof_elf *e, struct pyf_sym *s, size_t n,
		    char *why, size_t why_size)
{
	Elf_Scn *scn = NULL, *str;
	GElf_Shdr sh, ssh;
	GElf_Sym sym;
	Elf_Data *d;
	size_t i, k, nsym;

	while ((scn = elf_nextscn(e->elf, scn))) {
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_DYNSYM)
			break;
	}
	if (!scn)
		return 0;
	str = elf_getscn(e->elf, sh.sh_link);
	if (sh.sh_entsize != sizeof(Elf64_Sym) || !pyf_sec_ok(e, &sh) ||
	    !str || !gelf_getshdr(str, &ssh) || ssh.sh_type != SHT_STRTAB ||
	    !pyf_sec_ok(e, &ssh)) {
		snprintf(why, why_size,
			 "its .dynsym (%llu bytes) or its strings: past the end or over %u MiB",
			 (unsigned long long)sh.sh_size, PYF_MAX_DYNSYM >> 20);
		return -EINVAL;
	}
	d = elf_getdata(scn, NULL);
	if (!d || !elf_getdata(str, NULL)) {
		snprintf(why, why_size, "its .dynsym cannot be read: %s",
			 elf_errmsg(-1));
		return -EINVAL;
	}
	nsym = d->d_size / sizeof(Elf64_Sym);
	for (i = 0; i < nsym; i++) {
		const char *name;

		if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
			continue;
		name = elf_strptr(e->elf, sh.sh_link, sym.st_name);
		for (k = 0; name && k < n; k++) {
			if (!s[k].found && !strcmp(name, s[k].name)) {
				s[k].value = sym.st_value;
				s[k].found = 1;
			}
		}
	}
	return 0;
}

/* A little-endian unsigned of 'size' bytes at vaddr 'addr' of the file. */
static int pyf_value(const struct uwprof_elf *e, uint64_t addr, size_t size,
		     uint64_t *v)
{
	const uint8_t *p;
	size_t avail, i;

	if (uwprof_elf_vaddr(e, addr, size, &p, &avail) || avail < size)
		return -ENOENT;
	*v = 0;
	for (i = size; i--; )
		*v = *v << 8 | p[i];
	return 0;
}

/*
 * glibc's description of one structure field for libthread_db: bits per
 * element, element count, offset (nptl_db/structs.def).
 */
static int pyf_field(const struct uwprof_elf *e, const struct pyf_sym *s,
		     uint32_t *bits, uint32_t *count, uint32_t *off)
{
	uint64_t v[3];
	int i;

	if (!s->found)
		return -ENOENT;
	for (i = 0; i < 3; i++)
		if (pyf_value(e, s->value + 4 * i, 4, &v[i]))
			return -ENOENT;
	*bits = (uint32_t)v[0];
	*count = (uint32_t)v[1];
	*off = (uint32_t)v[2];
	return 0;
}

static void pyf_libc(const struct uwprof_elf *e, struct uwprof_py_file *f)
{
	struct pyf_sym s[] = {
		{ .name = "_thread_db_pthread_specific" },
		{ .name = "_thread_db_pthread_tid" },
		{ .name = "_thread_db_pthread_key_data_data" },
		{ .name = "_thread_db_sizeof_pthread_key_data" },
		{ .name = "_thread_db_sizeof_pthread_key_data_level2" },
		{ .name = "_thread_db_const_thread_area" },
	};
	uint32_t bits, count, data_off, tid_bits;
	uint64_t kd, l2, area;
	char why[80];

	if (pyf_syms(e, s, sizeof(s) / sizeof(s[0]), why, sizeof(why))) {
		f->kind = PYF_UNUSABLE;
		snprintf(f->why, sizeof(f->why), "its C library: %s", why);
		return;
	}
	/* specific[] is described as one field of all its pointers. */
	if (pyf_field(e, &s[0], &bits, &count, &f->pt_specific) ||
	    !bits || bits % 64 ||
	    pyf_field(e, &s[1], &tid_bits, &count, &f->pt_tid) || tid_bits != 32 ||
	    pyf_field(e, &s[2], &bits, &count, &data_off) || bits != 64 ||
	    !s[3].found || pyf_value(e, s[3].value, 4, &kd) ||
	    !s[4].found || pyf_value(e, s[4].value, 4, &l2) ||
	    !s[5].found || pyf_value(e, s[5].value, 4, &area) ||
	    !kd || l2 % kd) {
		f->kind = PYF_UNUSABLE;
		snprintf(f->why, sizeof(f->why),
			 "its C library does not describe its threads (_thread_db_*)");
		return;
	}
	f->kind = PYF_LIBC;
	f->kd_size = (uint32_t)kd;
	f->kd_data = data_off;
	f->kd_per_block = (uint32_t)(l2 / kd);
	f->thread_area = (uint32_t)area;
}

static void pyf_python(const struct uwprof_elf *e, struct uwprof_py_file *f)
{
	struct pyf_sym s[] = {
		{ .name = "_PyRuntime" }, { .name = "PyCode_Type" },
		{ .name = "Py_Version" },
		{ .name = "_PyEval_EvalFrameDefault" },
	};
	uint64_t hex;

	if (pyf_syms(e, s, sizeof(s) / sizeof(s[0]), f->why, sizeof(f->why))) {
		f->kind = PYF_UNUSABLE;
		return;
	}
	if (!s[0].found || !s[3].found)
		return;		/* a program named python, not CPython */
	f->kind = PYF_UNUSABLE;
	/* Py_Version is there from 3.11 on. */
	if (!s[2].found) {
		snprintf(f->why, sizeof(f->why),
			 "CPython older than 3.11: not supported");
		return;
	}
	if (pyf_value(e, s[2].value, 4, &hex)) {
		snprintf(f->why, sizeof(f->why),
			 "its Py_Version (at 0x%llx) is not in the file",
			 (unsigned long long)s[2].value);
		return;
	}
	f->hexversion = (uint32_t)hex;
	f->version = (uint32_t)(hex >> 16);
	if (!s[1].found) {
		snprintf(f->why, sizeof(f->why),
			 "CPython %u.%u without PyCode_Type",
			 f->version >> 8, f->version & 0xff);
		return;
	}
	/*
	 * The interpreter's own account of its layout, or why it cannot be
	 * walked (a free-threaded build, a minor version without a known
	 * _Py_DebugOffsets).
	 */
	if (f->version >= 0x030d &&
	    uwprof_pydo_read(e, s[0].value, hex, &f->pydo, f->why,
			     sizeof(f->why)))
		return;
	f->kind = PYF_PYTHON;
	f->runtime = s[0].value;
	f->code_type = s[1].value;
}

static int pyf_name_is(const char *path, const char *const *pats, size_t n)
{
	const char *base = strrchr(path, '/');
	size_t i;

	base = base ? base + 1 : path;
	for (i = 0; i < n; i++)
		if (!fnmatch(pats[i], base, 0))
			return 1;
	return 0;
}

static const char *const pyf_python_names[] = {
	"python3*", "libpython3*.so*",
};
static const char *const pyf_libc_names[] = {
	"libc.so.6", "libc-2.*.so",
};
static const char *const pyf_ldso_names[] = {
	"ld-linux*.so*",
};

/* Why file_open.h refused a file, without its path (the record has it). */
static const char *pyf_open_why(int err)
{
	switch (err) {
	case -ELOOP:
		return "a symlink, refused";
	case -ENOEXEC:
		return "not a regular file (a FIFO, a device...), refused";
	case -ESTALE:
		return "not the file mapped (replaced), refused";
	default:
		return strerror(-err);
	}
}

/* An error line of elf_file.c without the path it starts with. */
static const char *pyf_err_tail(const char *err, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(err, name, n) && !strncmp(err + n, ": ", 2) ?
	       err + n + 2 : err;
}

/*
 * The cached reading of the file behind 'e', read now if it is not; NULL
 * when it is gone. One that cannot be opened, or is not an ELF object
 * libelf reads within elf_file.h's limits, is PYF_UNUSABLE with a reason.
 */
static struct uwprof_py_file *pyf_file(struct uwprof_py_cache *c, pid_t pid,
				       const struct uwprof_pm_entry *e,
				       int want_libc)
{
	char name[PATH_MAX + 64], err[PATH_MAX + 256];
	struct uwprof_py_file *f, *v;
	struct uwprof_elf *elf;
	struct stat st;
	size_t i;
	int fd, ret;

	for (i = 0; i < c->n; i++) {
		f = &c->v[i];
		if (f->dev_major == e->dev_major && f->dev_minor == e->dev_minor &&
		    f->inode == e->inode)
			goto check;
	}
	v = realloc(c->v, (c->n + 1) * sizeof(*v));
	if (!v)
		return NULL;
	c->v = v;
	f = &c->v[c->n];
	memset(f, 0, sizeof(*f));
	f->dev_major = e->dev_major;
	f->dev_minor = e->dev_minor;
	f->inode = e->inode;
	f->mtime_ns = -1;
	c->n++;
check:
	fd = uwprof_pm_object_open(pid, e, name, sizeof(name), &st, err,
				   sizeof(err));
	/* Gone (the process, or its mapping) says nothing; the rest does. */
	if ((fd == -ENOENT && !e->deleted) || fd == -ESRCH)
		return NULL;
	if (fd < 0) {
		f->kind = PYF_UNUSABLE;
		f->mtime_ns = -1;
		snprintf(f->why, sizeof(f->why), "%sits file cannot be read: %s",
			 want_libc ? "its C library: " : "", pyf_open_why(fd));
		return f;
	}
	/* A file replaced in place (same inode) is read again. */
	if (f->mtime_ns == (int64_t)st.st_mtim.tv_sec * 1000000000 +
			   st.st_mtim.tv_nsec) {
		close(fd);
		return f;
	}
	f->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 +
		      st.st_mtim.tv_nsec;
	f->kind = PYF_OTHER;
	f->why[0] = 0;
	f->hexversion = f->version = 0;
	ret = uwprof_elf_info_fd(fd, &f->info);
	if (!ret)
		ret = uwprof_elf_open_fd(fd, name, &elf, err, sizeof(err));
	else
		snprintf(err, sizeof(err), "%s: no ELF program headers", name);
	if (ret) {
		/* A file named as these are, that is not an ELF object read. */
		f->kind = PYF_UNUSABLE;
		snprintf(f->why, sizeof(f->why), "%s%.140s",
			 want_libc ? "its C library: " : "",
			 pyf_err_tail(err, name));
		close(fd);
		return f;
	}
	if (want_libc)
		pyf_libc(elf, f);
	else
		pyf_python(elf, f);
	uwprof_elf_close(elf);
	close(fd);
	return f;
}

static int pyf_bias(const struct uwprof_py_file *f,
		    const struct uwprof_pm_entry *e, uint64_t *bias)
{
	return uwprof_elf_bias(&f->info, e->start, e->offset, e->pf, bias);
}

static const struct pyf_walk *pyf_walk_of(uint32_t version, uint16_t arch)
{
	size_t i;

	for (i = 0; i < sizeof(pyf_walks) / sizeof(pyf_walks[0]); i++)
		if (pyf_walks[i].version == version && pyf_walks[i].arch == arch)
			return &pyf_walks[i];
	return NULL;
}

/* What _Py_DebugOffsets says, over the tables' descriptor and layout. */
static void pyf_debug_offsets(const struct uwprof_pydo *o,
			      struct uwprof_python *d,
			      struct uwprof_py_layout *l)
{
	d->ts_frame = o->off[UWPROF_PYDO_TS_FRAME];
	d->fr_code = o->off[UWPROF_PYDO_FR_CODE];
	d->fr_previous = o->off[UWPROF_PYDO_FR_PREVIOUS];
	d->fr_instr = o->off[UWPROF_PYDO_FR_INSTR];
	d->fr_entry = o->off[UWPROF_PYDO_FR_OWNER];
	d->co_type = o->off[UWPROF_PYDO_OB_TYPE];
	d->co_code = o->off[UWPROF_PYDO_CO_CODE];
	l->co_filename = o->off[UWPROF_PYDO_CO_FILENAME];
	l->co_name = o->off[UWPROF_PYDO_CO_NAME];
	l->co_qualname = o->off[UWPROF_PYDO_CO_QUALNAME];
	l->co_linetable = o->off[UWPROF_PYDO_CO_LINETABLE];
	l->co_firstlineno = o->off[UWPROF_PYDO_CO_FIRSTLINENO];
	l->co_code = o->off[UWPROF_PYDO_CO_CODE];
	l->str_state = o->off[UWPROF_PYDO_STR_STATE];
	l->str_length = o->off[UWPROF_PYDO_STR_LENGTH];
	l->str_ascii_size = o->off[UWPROF_PYDO_STR_ASCII_SIZE];
	l->bytes_size = o->off[UWPROF_PYDO_BYTES_SIZE];
	l->bytes_data = o->off[UWPROF_PYDO_BYTES_DATA];
}

/* The descriptor from the interpreter's and the C library's readings. */
static void pyf_describe(const struct uwprof_py_file *py, uint64_t py_bias,
			 const struct uwprof_py_file *libc, uint16_t arch,
			 struct uwprof_py_proc *out)
{
	const struct pyf_walk *w = pyf_walk_of(py->version, arch);
	struct uwprof_python *d = &out->desc;

	if (!w || uwprof_py_layout_of(py->version, &out->layout)) {
		snprintf(out->why, sizeof(out->why),
			 "CPython %u.%u: not supported", py->version >> 8,
			 py->version & 0xff);
		return;
	}
	*d = w->d;
	if (py->version >= 0x030d)
		pyf_debug_offsets(&py->pydo, d, &out->layout);
	d->size = sizeof(*d);
	d->version = py->version;
	d->key_addr = py->runtime + py_bias + w->key;
	d->code_type = py->code_type + py_bias;
	out->layout.code_type = d->code_type;
	d->co_firstlineno = out->layout.co_firstlineno;
	d->co_qualname = out->layout.co_qualname;
	d->co_filename = out->layout.co_filename;
	/*
	 * x86_64 glibc: the thread pointer is struct pthread; arm64: it
	 * follows it, and libthread_db is told its size as the distance.
	 */
	d->tp_pthread = arch == UWPROF_ARCH_ARM64 ?
			-(int32_t)libc->thread_area : 0;
	d->pt_specific = libc->pt_specific;
	d->pt_tid = libc->pt_tid;
	d->kd_size = libc->kd_size;
	d->kd_data = libc->kd_data;
	d->kd_per_block = libc->kd_per_block;
	out->found = 1;
}

int uwprof_py_find(struct uwprof_py_cache *c, pid_t pid,
		   const struct uwprof_pm *pm, uint16_t arch,
		   struct uwprof_py_proc *out)
{
	/* Copies: a later file may move the cache. */
	struct uwprof_py_file py = { 0 }, libc = { 0 };
	int have_py = 0, have_libc = 0;
	char bad_py[UWPROF_PY_WHY] = "", bad_libc[UWPROF_PY_WHY] = "";
	const char *py_path = NULL, *bad_path = NULL;
	uint32_t bad_hex = 0;
	const struct uwprof_py_file *f;
	uint64_t py_bias = 0;
	int loading = 0, tries = 0;
	size_t i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < pm->n; i++) {
		const struct uwprof_pm_entry *e = &pm->v[i];
		int is_libc;

		if (e->kind != UWPROF_PM_FILE)
			continue;
		loading |= pyf_name_is(e->path, pyf_ldso_names, 1);
		is_libc = pyf_name_is(e->path, pyf_libc_names, 2);
		if (!is_libc && !pyf_name_is(e->path, pyf_python_names, 2))
			continue;
		if ((is_libc && have_libc) || (!is_libc && have_py))
			continue;
		/*
		 * A process maps one or two such files (the interpreter,
		 * libpython, the C library); one that maps many makes the
		 * reader open no more than a few.
		 */
		if (++tries > PYF_MAX_TRIES)
			break;
		f = pyf_file(c, pid, e, is_libc);
		if (!f)
			continue;
		if (f->kind == PYF_LIBC) {
			libc = *f;
			have_libc = 1;
		} else if (f->kind == PYF_PYTHON && !pyf_bias(f, e, &py_bias)) {
			py = *f;
			have_py = 1;
			py_path = e->path;
		} else if (f->kind == PYF_PYTHON) {
			snprintf(bad_py, sizeof(bad_py),
				 "its mapping does not match its file's program headers");
			bad_path = e->path;
			bad_hex = f->hexversion;
		} else if (f->kind == PYF_UNUSABLE) {
			snprintf(is_libc ? bad_libc : bad_py, sizeof(bad_py),
				 "%s", f->why);
			if (!is_libc) {
				bad_path = e->path;
				bad_hex = f->hexversion;
			}
		}
	}
	/* A C library that cannot be used matters only under CPython. */
	if (!have_py) {
		snprintf(out->why, sizeof(out->why), "%s", bad_py);
		if (bad_path) {
			snprintf(out->path, sizeof(out->path), "%s", bad_path);
			out->hexversion = bad_hex;
		}
		return 0;
	}
	snprintf(out->path, sizeof(out->path), "%s", py_path);
	out->hexversion = py.hexversion;
	/*
	 * Just exec'd, the dynamic loader has not mapped the C library yet:
	 * the next reading tells.
	 */
	if (!have_libc) {
		if (bad_libc[0] || !loading)
			snprintf(out->why, sizeof(out->why), "%s", bad_libc[0] ?
				 bad_libc :
				 "no glibc mapped: its threads cannot be found");
		return 0;
	}
	pyf_describe(&py, py_bias, &libc, arch, out);
	return 0;
}

void uwprof_py_cache_free(struct uwprof_py_cache *c)
{
	free(c->v);
	c->v = NULL;
	c->n = 0;
}
