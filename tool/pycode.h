/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CPython code objects read out of a live process (the recorder, while
 * the process runs: code objects are freed and their memory reused), and
 * the line of an instruction from a code object's location table (the
 * reports, long after). The layout of the objects is python.h's. Nothing
 * read from the process is trusted: every pointer, size and byte may be
 * garbage, and any of it gives an error, never a crash.
 */
#ifndef UWPROF_TOOL_PYCODE_H
#define UWPROF_TOOL_PYCODE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "python.h"

/* A name longer than this many characters is taken for garbage. */
#define UWPROF_PYCODE_NAME_MAX		1024
/* UTF-8 bytes such a name may take, with its NUL. */
#define UWPROF_PYCODE_NAME_BYTES	(4 * UWPROF_PYCODE_NAME_MAX + 1)
/* A location table larger than this is taken for garbage. */
#define UWPROF_PYCODE_LINETABLE_MAX	(1U << 20)
/* Code objects larger than this many code units are taken for garbage. */
#define UWPROF_PYCODE_SIZE_MAX		(1U << 28)

/* A code object's memory: /proc/PID/mem, open while the process lives. */
struct uwprof_pymem {
	int		fd;		/* -1: closed */
	pid_t		pid;
};

/* What names a Python frame: all of it the reports need. */
struct uwprof_pycode {
	uint64_t	addr;		/* the code object in the process */
	uint32_t	size;		/* ob_size: code units */
	int32_t		firstlineno;
	int32_t		firsttraceable;	/* code units before RESUME */
	char		*qualname;	/* UTF-8, NUL-terminated, malloc'd */
	char		*filename;	/* likewise */
	uint8_t		*linetable;	/* co_linetable's bytes, malloc'd */
	uint32_t	linetable_len;
};

/* 0, or a negative errno (-ESRCH: no such process, -EACCES). */
int uwprof_pymem_open(struct uwprof_pymem *m, pid_t pid);
void uwprof_pymem_close(struct uwprof_pymem *m);

/*
 * The code object at 'addr' with 'fingerprint' (UWPROF_IP_PY_FP, the
 * uapi's UWPROF_PY_FINGERPRINT of its size, first line, qualified name and
 * file name), read with layout 'l'. Returns 0
 * with *out filled (free with uwprof_pycode_free()), or a negative errno:
 * -ESTALE when the object does not match the fingerprint (its
 * memory now holds another object: the frame stays unknown), -ESRCH
 * when the process exited, -EFAULT when some memory cannot be read (a
 * pointer is garbage, or the object was unmapped), -EINVAL when a field makes no sense, -ENAMETOOLONG for a name
 * beyond UWPROF_PYCODE_NAME_MAX characters, -E2BIG for a location table
 * beyond UWPROF_PYCODE_LINETABLE_MAX, -ENOMEM.
 */
int uwprof_pycode_read(struct uwprof_pymem *m, const struct uwprof_py_layout *l,
		       uint64_t addr, uint32_t fingerprint,
		       struct uwprof_pycode *out);
void uwprof_pycode_free(struct uwprof_pycode *c);

/*
 * The line of code unit 'lasti' (the offset a sample records: -1 before
 * the first instruction gives firstlineno) from a location table, as
 * CPython's PyCode_Addr2Line computes it (3.11 to 3.14 share the
 * format); -1 when the instruction has no line (CPython's None) or the
 * table does not reach it (or firstlineno is negative: garbage).
 */
int uwprof_pycode_line(const uint8_t *table, size_t len, int32_t firstlineno,
		       int32_t lasti);

#endif /* UWPROF_TOOL_PYCODE_H */
