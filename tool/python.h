/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CPython in a profiled process: which interpreter a process runs
 * (python_find.c, from the ELF files it maps; python_debug_offsets.c for
 * what 3.13 on says of its own layout) and the layout of the
 * objects the tool reads to name Python frames (pycode.c). The module's
 * part, the frame walk, is described by struct uwprof_python in the uapi
 * header.
 */
#ifndef UWPROF_TOOL_PYTHON_H
#define UWPROF_TOOL_PYTHON_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include <sys/types.h>

#include <linux/uwprof.h>

#include "procmaps.h"

/*
 * Offsets (bytes) in the objects that name a frame: the code object, its
 * strings (str: compact ASCII or compact non-ASCII) and its location table
 * (bytes). The same on x86_64 and arm64 for a given minor version.
 */
struct uwprof_py_layout {
	uint32_t	version;	/* PY_VERSION_HEX >> 16: 0x030b */
	uint32_t	co_size;	/* ob_size: code units */
	uint32_t	co_firstlineno;	/* int */
	uint32_t	co_filename;	/* str * */
	uint32_t	co_name;	/* str * */
	uint32_t	co_qualname;	/* str * */
	uint32_t	co_linetable;	/* bytes * */
	uint32_t	co_firsttraceable;	/* int: code units before RESUME */
	uint32_t	co_code;	/* co_code_adaptive: first code unit */
	uint32_t	str_state;	/* PyASCIIObject.state (kind, compact, ascii) */
	uint32_t	str_length;	/* characters */
	uint32_t	str_ascii_size;	/* sizeof(PyASCIIObject): ASCII data */
	uint32_t	str_compact_size;	/* sizeof(PyCompactUnicodeObject) */
	uint32_t	bytes_size;	/* ob_size */
	uint32_t	bytes_data;	/* ob_sval */
	/*
	 * The process's PyCode_Type (python_find.c sets it per process; 0:
	 * not checked): a code object read must still have that type.
	 */
	uint64_t	code_type;
};

/*
 * What the tool found of a process's interpreter: the module's descriptor
 * and the naming layout. 'why' says, when found is 0 and the process maps
 * something that looked like CPython, why its frames are not walked
 * ("version 3.10 not supported", "free-threaded build", ...); empty when
 * the process runs no CPython. 'path' (the interpreter's file as the
 * process maps it) and 'hexversion' (its Py_Version, 0 when it has none)
 * are set whenever 'found' or 'why' is.
 */
/* A reason's bytes, with its NUL. */
#define UWPROF_PY_WHY	160

struct uwprof_py_proc {
	int		found;
	struct uwprof_python desc;
	struct uwprof_py_layout layout;
	uint32_t	hexversion;
	char		why[UWPROF_PY_WHY];
	char		path[PATH_MAX];
};

/* The files python_find.c has read, by device and inode. */
struct uwprof_py_file;
struct uwprof_py_cache {
	struct uwprof_py_file *v;
	size_t		n;
};

/*
 * The interpreter process 'pid' runs, from its executable mappings 'pm'
 * (the files opened as procmaps.h opens them, for a process of 'arch'):
 * out->found with the descriptor and layout, or out->why when something
 * CPython-like cannot be walked: a file named as an interpreter or a C
 * library that cannot be opened as procmaps.h opens files, is no ELF
 * object libelf reads, or declares a .dynsym past its end or over the
 * finder's limit says so there; one gone (its mapping or its process)
 * counts as none. Returns 0.
 */
int uwprof_py_find(struct uwprof_py_cache *c, pid_t pid,
		   const struct uwprof_pm *pm, uint16_t arch,
		   struct uwprof_py_proc *out);
void uwprof_py_cache_free(struct uwprof_py_cache *c);

/*
 * The offsets CPython 3.13 on publishes for out-of-process readers in
 * _Py_DebugOffsets (python_debug_offsets.c), each checked against the size
 * of its structure: the walk's and the naming's fields.
 */
enum uwprof_pydo_off {
	UWPROF_PYDO_TS_FRAME,		/* PyThreadState.current_frame */
	UWPROF_PYDO_FR_PREVIOUS,	/* _PyInterpreterFrame */
	UWPROF_PYDO_FR_CODE,		/* f_executable */
	UWPROF_PYDO_FR_INSTR,
	UWPROF_PYDO_FR_OWNER,		/* a byte */
	UWPROF_PYDO_CO_FILENAME,	/* PyCodeObject */
	UWPROF_PYDO_CO_NAME,
	UWPROF_PYDO_CO_QUALNAME,
	UWPROF_PYDO_CO_LINETABLE,
	UWPROF_PYDO_CO_FIRSTLINENO,
	UWPROF_PYDO_CO_CODE,		/* co_code_adaptive */
	UWPROF_PYDO_OB_TYPE,		/* PyObject */
	UWPROF_PYDO_BYTES_SIZE,		/* PyBytesObject */
	UWPROF_PYDO_BYTES_DATA,
	UWPROF_PYDO_STR_STATE,		/* PyASCIIObject */
	UWPROF_PYDO_STR_LENGTH,
	UWPROF_PYDO_STR_ASCII_SIZE,	/* sizeof(PyASCIIObject) */
	UWPROF_PYDO_NR
};

struct uwprof_pydo {
	uint64_t	hexversion;	/* PY_VERSION_HEX, as Py_Version */
	int		free_threaded;
	uint32_t	off[UWPROF_PYDO_NR];
};

struct uwprof_elf;

/*
 * _Py_DebugOffsets at 'runtime' (the vaddr of _PyRuntime) in the
 * interpreter's file 'e', whose Py_Version is 'hexversion': 0, or -errno
 * with 'why' saying what is wrong (no cookie, another version, a
 * free-threaded build, a minor version whose layout is not known, an
 * offset outside its structure).
 */
int uwprof_pydo_read(const struct uwprof_elf *e, uint64_t runtime,
		     uint64_t hexversion, struct uwprof_pydo *out,
		     char *why, size_t why_size);

/*
 * The naming layout of CPython 'version' (PY_VERSION_HEX >> 16); -ENOENT
 * for a version the tool has no layout for.
 */
int uwprof_py_layout_of(uint32_t version, struct uwprof_py_layout *out);

#endif /* UWPROF_TOOL_PYTHON_H */
