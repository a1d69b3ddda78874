// SPDX-License-Identifier: GPL-2.0
/*
 * CPython code objects read from a live process through /proc/PID/mem,
 * and the line of an instruction from a location table (see pycode.h).
 * The recorder calls the reader while draining samples, so each object
 * costs a handful of preads: the code object's head, each string's head
 * and characters, the location table's head and bytes. Single-threaded
 * per struct uwprof_pymem.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pycode.h"

/*
 * Addresses at or above this are no user address on x86_64 or arm64
 * (57-bit virtual addresses at most), and as file offsets of
 * /proc/PID/mem they would not fit an off_t.
 */
#define PY_ADDR_END		(1ULL << 57)
/* The heads read in one go: every layout offset is below this. */
#define PY_HEAD_MAX		256

/* PyASCIIObject.state, low byte: interned:2, kind:3, compact:1, ascii:1. */
#define PY_STATE_KIND(s)	(((s) >> 2) & 7)
#define PY_STATE_COMPACT	(1U << 5)
#define PY_STATE_ASCII		(1U << 6)

int uwprof_pymem_open(struct uwprof_pymem *m, pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	m->pid = pid;
	m->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (m->fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	return 0;
}

void uwprof_pymem_close(struct uwprof_pymem *m)
{
	if (m->fd >= 0)
		close(m->fd);
	m->fd = -1;
}

/*
 * n bytes at addr, all of them or -EFAULT; -ESRCH when the process has no
 * memory any more (it exited: the kernel then reads nothing, where an
 * unmapped address fails with EIO).
 */
static int pymem_read(struct uwprof_pymem *m, uint64_t addr, void *dst,
		      size_t n)
{
	ssize_t got;

	if (addr >= PY_ADDR_END || n > PY_ADDR_END - addr)
		return -EFAULT;
	got = pread(m->fd, dst, n, (off_t)addr);
	if (got == 0 && n)
		return -ESRCH;
	return got == (ssize_t)n ? 0 : -EFAULT;
}

static uint64_t get_u64(const uint8_t *p, uint32_t off)
{
	uint64_t v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

static int32_t get_i32(const uint8_t *p, uint32_t off)
{
	int32_t v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

/* An object pointer worth reading: not NULL, aligned, in user space. */
static int pyobj_ok(uint64_t p)
{
	return p && !(p & 7) && p < PY_ADDR_END;
}

/* Code point c as UTF-8 at out; surrogates and beyond U+10FFFF as U+FFFD. */
static size_t utf8_put(char *out, uint32_t c)
{
	if (c < 0x80) {
		out[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		out[0] = (char)(0xc0 | c >> 6);
		out[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		c = 0xfffd;
	if (c < 0x10000) {
		out[0] = (char)(0xe0 | c >> 12);
		out[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		out[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | c >> 18);
	out[1] = (char)(0x80 | ((c >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((c >> 6) & 0x3f));
	out[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

/*
 * 'len' characters of 'kind' bytes each as UTF-8 (a NUL among them ends
 * the name: CPython names never hold one). 0 or -EINVAL for a byte that
 * an ASCII string cannot hold.
 */
static int str_to_utf8(const uint8_t *data, uint64_t len, unsigned int kind,
		       int ascii, char *out)
{
	size_t o = 0;
	uint64_t i;
	uint32_t c;

	for (i = 0; i < len; i++) {
		if (kind == 1) {
			c = data[i];
		} else if (kind == 2) {
			uint16_t u;

			memcpy(&u, data + 2 * i, 2);
			c = u;
		} else {
			memcpy(&c, data + 4 * i, 4);
		}
		if (ascii && c >= 0x80)
			return -EINVAL;
		if (!c)
			break;
		o += utf8_put(out + o, c);
	}
	out[o] = 0;
	return 0;
}

/* The str object at addr as a malloc'd UTF-8 string in *out. */
static int pystr_read(struct uwprof_pymem *m, const struct uwprof_py_layout *l,
		      uint64_t addr, char **out)
{
	uint8_t head[PY_HEAD_MAX], *data = NULL;
	unsigned int state, kind;
	uint64_t len;
	char *s = NULL;
	int ascii, err;

	*out = NULL;
	if (!pyobj_ok(addr))
		return -EFAULT;
	/* State and length are in the ASCII head, the smallest a str has. */
	err = pymem_read(m, addr, head, l->str_ascii_size);
	if (err)
		return err;
	state = head[l->str_state];
	kind = PY_STATE_KIND(state);
	ascii = !!(state & PY_STATE_ASCII);
	len = get_u64(head, l->str_length);
	if (!(state & PY_STATE_COMPACT) || (kind != 1 && kind != 2 && kind != 4) ||
	    (ascii && kind != 1))
		return -EINVAL;
	if (len > UWPROF_PYCODE_NAME_MAX)
		return -ENAMETOOLONG;
	data = malloc(len * kind + 1);
	s = malloc(UWPROF_PYCODE_NAME_BYTES);
	if (!data || !s) {
		err = -ENOMEM;
		goto out_free;
	}
	err = pymem_read(m, addr + (ascii ? l->str_ascii_size :
				    l->str_compact_size), data, len * kind);
	if (!err)
		err = str_to_utf8(data, len, kind, ascii, s);
out_free:
	free(data);
	if (err)
		free(s);
	else
		*out = s;
	return err;
}

/* The bytes object at addr (co_linetable), malloc'd in c. */
static int pybytes_read(struct uwprof_pymem *m,
			const struct uwprof_py_layout *l, uint64_t addr,
			struct uwprof_pycode *c)
{
	uint8_t head[PY_HEAD_MAX];
	uint64_t len;
	int err;

	if (!pyobj_ok(addr))
		return -EFAULT;
	err = pymem_read(m, addr, head, l->bytes_size + 8);
	if (err)
		return err;
	len = get_u64(head, l->bytes_size);
	if (len > UWPROF_PYCODE_LINETABLE_MAX)
		return -E2BIG;
	c->linetable = malloc(len ? len : 1);
	if (!c->linetable)
		return -ENOMEM;
	c->linetable_len = (uint32_t)len;
	return len ? pymem_read(m, addr + l->bytes_data, c->linetable, len) : 0;
}

/* Every offset the reader uses fits the heads it reads. */
static int layout_ok(const struct uwprof_py_layout *l)
{
	return l->co_size + 8 <= PY_HEAD_MAX &&
	       l->co_firstlineno + 4 <= PY_HEAD_MAX &&
	       l->co_firsttraceable + 4 <= PY_HEAD_MAX &&
	       l->co_filename + 8 <= PY_HEAD_MAX &&
	       l->co_qualname + 8 <= PY_HEAD_MAX &&
	       l->co_linetable + 8 <= PY_HEAD_MAX &&
	       l->str_ascii_size <= PY_HEAD_MAX &&
	       l->str_state < l->str_ascii_size &&
	       l->str_length + 8 <= l->str_ascii_size &&
	       l->bytes_size + 8 <= PY_HEAD_MAX;
}

static uint32_t layout_code_head(const struct uwprof_py_layout *l)
{
	uint32_t n = l->co_size + 8;

	if (l->co_firstlineno + 4 > n)
		n = l->co_firstlineno + 4;
	if (l->co_firsttraceable + 4 > n)
		n = l->co_firsttraceable + 4;
	if (l->co_filename + 8 > n)
		n = l->co_filename + 8;
	if (l->co_qualname + 8 > n)
		n = l->co_qualname + 8;
	if (l->co_linetable + 8 > n)
		n = l->co_linetable + 8;
	return n;
}

int uwprof_pycode_read(struct uwprof_pymem *m, const struct uwprof_py_layout *l,
		       uint64_t addr, uint32_t fingerprint,
		       struct uwprof_pycode *out)
{
	uint8_t head[PY_HEAD_MAX];
	uint64_t size, rc;
	int err;

	memset(out, 0, sizeof(*out));
	if (!layout_ok(l))
		return -EINVAL;
	if (!pyobj_ok(addr))
		return -EFAULT;
	err = pymem_read(m, addr, head, layout_code_head(l));
	if (err)
		return err;
	/*
	 * Still alive: a freed object keeps its fields until its memory is
	 * reused, names included, which may already hold other strings.
	 * pymalloc links a freed block into its pool's free list through its
	 * first word (the reference count), so that word points into the
	 * block's own page; the C library's free writes over the type.
	 */
	rc = get_u64(head, 0);
	if (!rc || (rc >> 12) == (addr >> 12) ||
	    (l->code_type && get_u64(head, 8) != l->code_type))
		return -ESTALE;
	size = get_u64(head, l->co_size);
	if (UWPROF_PY_FINGERPRINT(size, (uint32_t)get_i32(head, l->co_firstlineno),
				  get_u64(head, l->co_qualname),
				  get_u64(head, l->co_filename)) !=
	    (fingerprint & 0xffffff))
		return -ESTALE;
	if (!size || size > UWPROF_PYCODE_SIZE_MAX)
		return -EINVAL;
	out->addr = addr;
	out->size = (uint32_t)size;
	out->firstlineno = get_i32(head, l->co_firstlineno);
	out->firsttraceable = get_i32(head, l->co_firsttraceable);
	if (out->firsttraceable < 0 || (uint32_t)out->firsttraceable >= size ||
	    out->firstlineno < 0) {
		err = -EINVAL;
		goto fail;
	}
	err = pystr_read(m, l, get_u64(head, l->co_qualname), &out->qualname);
	if (!err)
		err = pystr_read(m, l, get_u64(head, l->co_filename),
				 &out->filename);
	if (!err)
		err = pybytes_read(m, l, get_u64(head, l->co_linetable), out);
	if (!err)
		return 0;
fail:
	uwprof_pycode_free(out);
	return err;
}

void uwprof_pycode_free(struct uwprof_pycode *c)
{
	free(c->qualname);
	free(c->filename);
	free(c->linetable);
	memset(c, 0, sizeof(*c));
}

/* Location table entry kinds (bits 3..6 of an entry's first byte). */
#define PY_LOC_ONE_LINE0	10
#define PY_LOC_NO_COLUMNS	13
#define PY_LOC_LONG		14
#define PY_LOC_NONE		15

/* A varint at *i (6-bit groups, low first, 0x40 continues); -1: cut short. */
static int64_t lt_varint(const uint8_t *t, size_t len, size_t *i)
{
	uint64_t v = 0;
	unsigned int shift = 0;
	uint8_t b;

	do {
		if (*i >= len || shift > 30)
			return -1;
		b = t[(*i)++];
		v |= (uint64_t)(b & 0x3f) << shift;
		shift += 6;
	} while (b & 0x40);
	return (int64_t)v;
}

int uwprof_pycode_line(const uint8_t *table, size_t len, int32_t firstlineno,
		       int32_t lasti)
{
	int64_t line = firstlineno, v;
	uint64_t addr = 0;
	size_t i = 0;
	unsigned int kind;

	if (lasti < 0)
		return firstlineno >= 0 ? firstlineno : -1;
	while (i < len) {
		/* Every entry starts with bit 7 set; anything else is garbage. */
		if (!(table[i] & 0x80))
			return -1;
		kind = (table[i] >> 3) & 15;
		addr += (table[i] & 7) + 1;
		i++;
		if (kind == PY_LOC_NO_COLUMNS || kind == PY_LOC_LONG) {
			v = lt_varint(table, len, &i);
			if (v < 0)
				return -1;
			line += (v & 1) ? -(v >> 1) : (v >> 1);
		} else if (kind >= PY_LOC_ONE_LINE0 && kind < PY_LOC_NO_COLUMNS) {
			line += kind - PY_LOC_ONE_LINE0;
		}
		if (line < INT32_MIN || line > INT32_MAX)
			return -1;
		if ((uint64_t)lasti < addr)
			return kind == PY_LOC_NONE || line < 0 ? -1 : (int)line;
		/* The rest of the entry: columns, skipped. */
		while (i < len && !(table[i] & 0x80))
			i++;
	}
	return -1;
}
