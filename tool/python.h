/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CPython in a profiled process: which interpreter a process runs
 * (python_find.c, from the ELF files it maps) and the layout of the
 * objects the tool reads to name Python frames (pycode.c). The module's
 * part, the frame walk, is described by struct uwprof_python in the uapi
 * header.
 */
#ifndef UWPROF_TOOL_PYTHON_H
#define UWPROF_TOOL_PYTHON_H

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
 * the process runs no CPython.
 */
struct uwprof_py_proc {
	int		found;
	struct uwprof_python desc;
	struct uwprof_py_layout layout;
	char		why[96];
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
 * CPython-like cannot be walked. Returns 0; a file that cannot be read
 * counts as no interpreter.
 */
int uwprof_py_find(struct uwprof_py_cache *c, pid_t pid,
		   const struct uwprof_pm *pm, uint16_t arch,
		   struct uwprof_py_proc *out);
void uwprof_py_cache_free(struct uwprof_py_cache *c);

/*
 * The naming layout of CPython 'version' (PY_VERSION_HEX >> 16); -ENOENT
 * for a version the tool has no layout for.
 */
int uwprof_py_layout_of(uint32_t version, struct uwprof_py_layout *out);

#endif /* UWPROF_TOOL_PYTHON_H */
