// SPDX-License-Identifier: GPL-2.0
/*
 * What CPython 3.13 on tells out-of-process readers about its own layout:
 * _Py_DebugOffsets, the first member of _PyRuntime, initialized at build
 * time and so readable in the interpreter's file, before it runs. It is
 * a cookie, the version, the free-threaded flag, then groups of u64, each
 * opening with the size of the structure it describes and going on with
 * field offsets in it. Which groups and fields there are changes with the
 * minor version (CPython promises stability only within one), so each
 * known minor version has its own map of where the fields the walk and the
 * naming use sit; an unknown one is refused rather than guessed. Called
 * from python_find.c with the interpreter's ELF file open.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "elf_file.h"
#include "python.h"

/*
 * Where one field sits in _Py_DebugOffsets, in u64 slots from its start:
 * its group's size slot and its own, and what the offset it gives must
 * allow: 'width' bytes there, aligned to 'align'. An offset with width 0
 * is a size (unicode_object.asciiobject_size): at most its group's.
 */
struct pydo_field {
	uint8_t		group;
	uint8_t		slot;
	uint8_t		width;
	uint8_t		align;
};

struct pydo_format {
	uint32_t	minor;		/* PY_VERSION_HEX >> 16 */
	uint32_t	slots;		/* sizeof(_Py_DebugOffsets) / 8 */
	struct pydo_field f[UWPROF_PYDO_NR];
};

#define PYDO_PTR(g, s)	{ g, s, 8, 8 }

/*
 * 3.13: Include/internal/pycore_runtime.h (struct _Py_DebugOffsets):
 * header 0-2, runtime_state 3, interpreter_state 6, thread_state 19,
 * interpreter_frame 28, code_object 34, pyobject 44, type 46, tuple 50,
 * list 53, dict 56, float 59, long 61, bytes 64, unicode 67, gc 71.
 * 3.14: Include/internal/pycore_debug_offsets.h: interpreter_state grew
 * three fields, interpreter_frame two, code_object one; a set_object
 * group came before dict, gen_object, llist_node and debugger_support
 * after gc: thread_state 22, interpreter_frame 31, code_object 39,
 * pyobject 50, bytes 74, unicode 77, 95 slots in all.
 */
static const struct pydo_format pydo_formats[] = {
	{ 0x030d, 73, {
		[UWPROF_PYDO_TS_FRAME] = PYDO_PTR(19, 23),
		[UWPROF_PYDO_FR_PREVIOUS] = PYDO_PTR(28, 29),
		[UWPROF_PYDO_FR_CODE] = PYDO_PTR(28, 30),
		[UWPROF_PYDO_FR_INSTR] = PYDO_PTR(28, 31),
		[UWPROF_PYDO_FR_OWNER] = { 28, 33, 1, 1 },
		[UWPROF_PYDO_CO_FILENAME] = PYDO_PTR(34, 35),
		[UWPROF_PYDO_CO_NAME] = PYDO_PTR(34, 36),
		[UWPROF_PYDO_CO_QUALNAME] = PYDO_PTR(34, 37),
		[UWPROF_PYDO_CO_LINETABLE] = PYDO_PTR(34, 38),
		[UWPROF_PYDO_CO_FIRSTLINENO] = { 34, 39, 4, 4 },
		[UWPROF_PYDO_CO_CODE] = { 34, 43, 2, 2 },
		[UWPROF_PYDO_OB_TYPE] = PYDO_PTR(44, 45),
		[UWPROF_PYDO_BYTES_SIZE] = PYDO_PTR(64, 65),
		[UWPROF_PYDO_BYTES_DATA] = { 64, 66, 1, 1 },
		[UWPROF_PYDO_STR_STATE] = { 67, 68, 4, 4 },
		[UWPROF_PYDO_STR_LENGTH] = PYDO_PTR(67, 69),
		[UWPROF_PYDO_STR_ASCII_SIZE] = { 67, 70, 0, 8 },
	} },
	{ 0x030e, 95, {
		[UWPROF_PYDO_TS_FRAME] = PYDO_PTR(22, 26),
		[UWPROF_PYDO_FR_PREVIOUS] = PYDO_PTR(31, 32),
		[UWPROF_PYDO_FR_CODE] = PYDO_PTR(31, 33),
		[UWPROF_PYDO_FR_INSTR] = PYDO_PTR(31, 34),
		[UWPROF_PYDO_FR_OWNER] = { 31, 36, 1, 1 },
		[UWPROF_PYDO_CO_FILENAME] = PYDO_PTR(39, 40),
		[UWPROF_PYDO_CO_NAME] = PYDO_PTR(39, 41),
		[UWPROF_PYDO_CO_QUALNAME] = PYDO_PTR(39, 42),
		[UWPROF_PYDO_CO_LINETABLE] = PYDO_PTR(39, 43),
		[UWPROF_PYDO_CO_FIRSTLINENO] = { 39, 44, 4, 4 },
		[UWPROF_PYDO_CO_CODE] = { 39, 48, 2, 2 },
		[UWPROF_PYDO_OB_TYPE] = PYDO_PTR(50, 51),
		[UWPROF_PYDO_BYTES_SIZE] = PYDO_PTR(74, 75),
		[UWPROF_PYDO_BYTES_DATA] = { 74, 76, 1, 1 },
		[UWPROF_PYDO_STR_STATE] = { 77, 78, 4, 4 },
		[UWPROF_PYDO_STR_LENGTH] = PYDO_PTR(77, 79),
		[UWPROF_PYDO_STR_ASCII_SIZE] = { 77, 80, 0, 8 },
	} },
};

static const char *const pydo_names[UWPROF_PYDO_NR] = {
	[UWPROF_PYDO_TS_FRAME] = "thread_state.current_frame",
	[UWPROF_PYDO_FR_PREVIOUS] = "interpreter_frame.previous",
	[UWPROF_PYDO_FR_CODE] = "interpreter_frame.executable",
	[UWPROF_PYDO_FR_INSTR] = "interpreter_frame.instr_ptr",
	[UWPROF_PYDO_FR_OWNER] = "interpreter_frame.owner",
	[UWPROF_PYDO_CO_FILENAME] = "code_object.filename",
	[UWPROF_PYDO_CO_NAME] = "code_object.name",
	[UWPROF_PYDO_CO_QUALNAME] = "code_object.qualname",
	[UWPROF_PYDO_CO_LINETABLE] = "code_object.linetable",
	[UWPROF_PYDO_CO_FIRSTLINENO] = "code_object.firstlineno",
	[UWPROF_PYDO_CO_CODE] = "code_object.co_code_adaptive",
	[UWPROF_PYDO_OB_TYPE] = "pyobject.ob_type",
	[UWPROF_PYDO_BYTES_SIZE] = "bytes_object.ob_size",
	[UWPROF_PYDO_BYTES_DATA] = "bytes_object.ob_sval",
	[UWPROF_PYDO_STR_STATE] = "unicode_object.state",
	[UWPROF_PYDO_STR_LENGTH] = "unicode_object.length",
	[UWPROF_PYDO_STR_ASCII_SIZE] = "unicode_object.asciiobject_size",
};

static const struct pydo_format *pydo_format_of(uint32_t minor)
{
	size_t i;

	for (i = 0; i < sizeof(pydo_formats) / sizeof(pydo_formats[0]); i++)
		if (pydo_formats[i].minor == minor)
			return &pydo_formats[i];
	return NULL;
}

static uint64_t pydo_u64(const uint8_t *p, uint32_t slot)
{
	uint64_t v = 0;
	int i;

	for (i = 8; i--; )
		v = v << 8 | p[8 * slot + i];
	return v;
}

/* One field's offset, checked against its group's size. */
static int pydo_field(const uint8_t *p, const struct pydo_field *f,
		      uint32_t *off)
{
	uint64_t size = pydo_u64(p, f->group), v = pydo_u64(p, f->slot);

	if (!size || size > UWPROF_PY_MAX_OFF || v > size || f->width > size - v ||
	    v % f->align)
		return -EINVAL;
	*off = (uint32_t)v;
	return 0;
}

int uwprof_pydo_read(const struct uwprof_elf *e, uint64_t runtime,
		     uint64_t hexversion, struct uwprof_pydo *out,
		     char *why, size_t why_size)
{
	unsigned int major = hexversion >> 24 & 0xff;
	unsigned int minor = hexversion >> 16 & 0xff;
	const struct pydo_format *fmt = pydo_format_of(hexversion >> 16);
	const uint8_t *p;
	size_t avail;
	int i;

	memset(out, 0, sizeof(*out));
	if (uwprof_elf_vaddr(e, runtime, 24, &p, &avail) || avail < 24 ||
	    memcmp(p, "xdebugpy", 8)) {
		snprintf(why, why_size,
			 "CPython %u.%u: no _Py_DebugOffsets at _PyRuntime",
			 major, minor);
		return -ENOENT;
	}
	out->hexversion = pydo_u64(p, 1);
	if (out->hexversion != hexversion) {
		snprintf(why, why_size,
			 "CPython %u.%u: _Py_DebugOffsets says version %#llx",
			 major, minor, (unsigned long long)out->hexversion);
		return -EINVAL;
	}
	out->free_threaded = pydo_u64(p, 2) != 0;
	if (out->free_threaded) {
		snprintf(why, why_size,
			 "free-threaded CPython %u.%u: not supported", major,
			 minor);
		return -ENOTSUP;
	}
	if (!fmt) {
		snprintf(why, why_size,
			 "CPython %u.%u: not supported (_Py_DebugOffsets layout unknown)",
			 major, minor);
		return -ENOTSUP;
	}
	if (uwprof_elf_vaddr(e, runtime, 8 * fmt->slots, &p, &avail) ||
	    avail < 8 * fmt->slots) {
		snprintf(why, why_size,
			 "CPython %u.%u: _Py_DebugOffsets cut short", major,
			 minor);
		return -ENOENT;
	}
	for (i = 0; i < UWPROF_PYDO_NR; i++) {
		if (pydo_field(p, &fmt->f[i], &out->off[i])) {
			snprintf(why, why_size,
				 "CPython %u.%u: _Py_DebugOffsets %s out of range",
				 major, minor, pydo_names[i]);
			return -EINVAL;
		}
	}
	return 0;
}
