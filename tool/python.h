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

#include <linux/uwprof.h>

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

/*
 * The naming layout of CPython 'version' (PY_VERSION_HEX >> 16); -ENOENT
 * for a version the tool has no layout for.
 */
int uwprof_py_layout_of(uint32_t version, struct uwprof_py_layout *out);

#endif /* UWPROF_TOOL_PYTHON_H */
