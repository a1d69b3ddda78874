// SPDX-License-Identifier: GPL-2.0
/*
 * The layouts of the CPython objects that name a frame, per minor version,
 * as the interpreter's own headers define them (Include/cpython/code.h,
 * Include/cpython/unicodeobject.h, Include/cpython/bytesobject.h) for the
 * default (not free-threaded) build; x86_64 and arm64 agree. A patch
 * release never moves these fields.
 */
#include <errno.h>

#include "python.h"

static const struct uwprof_py_layout py_layouts[] = {
	{
		.version = 0x030b,
		.co_size = 16,
		.co_firstlineno = 72,
		.co_filename = 112,
		.co_name = 120,
		.co_qualname = 128,
		.co_linetable = 136,
		.co_firsttraceable = 168,
		.co_code = 184,
		.str_state = 32,
		.str_length = 16,
		.str_ascii_size = 48,
		.str_compact_size = 72,
		.bytes_size = 16,
		.bytes_data = 32,
	},
	{
		.version = 0x030d,
		.co_size = 16,
		.co_firstlineno = 68,
		.co_filename = 112,
		.co_name = 120,
		.co_qualname = 128,
		.co_linetable = 136,
		.co_firsttraceable = 184,
		.co_code = 200,
		.str_state = 32,
		.str_length = 16,
		.str_ascii_size = 40,
		.str_compact_size = 56,
		.bytes_size = 16,
		.bytes_data = 32,
	},
	{
		.version = 0x030e,
		.co_size = 16,
		.co_firstlineno = 68,
		.co_filename = 112,
		.co_name = 120,
		.co_qualname = 128,
		.co_linetable = 136,
		.co_firsttraceable = 192,
		.co_code = 208,
		.str_state = 32,
		.str_length = 16,
		.str_ascii_size = 40,
		.str_compact_size = 56,
		.bytes_size = 16,
		.bytes_data = 32,
	},
};

int uwprof_py_layout_of(uint32_t version, struct uwprof_py_layout *out)
{
	size_t i;

	for (i = 0; i < sizeof(py_layouts) / sizeof(py_layouts[0]); i++) {
		if (py_layouts[i].version == version) {
			*out = py_layouts[i];
			return 0;
		}
	}
	return -ENOENT;
}
