// SPDX-License-Identifier: GPL-2.0
/*
 * JIT symbol files (see jitmap.h): incremental readers of perf maps and
 * jitdump files, the ownership checks before opening them, and the
 * per-process lookup table. Called from the recorder (readers) and the
 * report model (table); single-threaded.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "jitmap.h"

#define JIT_BUF		65536

/* pread what is there from 'off': returns bytes (0 at the end) or -errno. */
static long jit_pread(int fd, char *buf, size_t len, uint64_t off)
{
	ssize_t n;

	do {
		n = pread(fd, buf, len, (off_t)off);
	} while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : (long)n;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* A hex number with optional 0x, ending at a space. Returns chars used, 0: bad. */
static size_t parse_hex(const char *p, size_t len, uint64_t *v)
{
	size_t i = 0, digits = 0;
	int d;

	if (len >= 2 && p[0] == '0' && (p[1] | 0x20) == 'x')
		i = 2;
	*v = 0;
	for (; i < len && (d = hexval(p[i])) >= 0; i++, digits++) {
		if (*v >> 60)
			return 0;	/* more than 64 bits */
		*v = *v << 4 | (uint64_t)d;
	}
	if (!digits || i >= len || p[i] != ' ')
		return 0;
	return i + 1;
}

/* One line without its '\n': "START SIZE name". Returns 1 if emitted. */
static int perfmap_line(const char *p, size_t len, struct uwprof_jit_pos *pos,
			uwprof_jit_emit_fn emit, void *arg, int *stop)
{
	uint64_t start, size;
	size_t n;

	if (len && p[len - 1] == '\r')
		len--;
	n = parse_hex(p, len, &start);
	if (n)
		p += n, len -= n;
	if (n)
		n = parse_hex(p, len, &size);
	if (n)
		p += n, len -= n;
	if (!n || !len || len > UWPROF_JIT_NAME_MAX || !size ||
	    start + size < start) {
		pos->bad++;
		return 0;
	}
	*stop = emit(arg, start, size, p, len);
	return 1;
}

long uwprof_jit_perfmap_read(int fd, struct uwprof_jit_pos *pos,
			     uint64_t max_bytes, uwprof_jit_emit_fn emit,
			     void *arg)
{
	char *buf;
	uint64_t done = 0;
	long got, emitted = 0;
	size_t i, line;
	int stop = 0;
	struct stat st;
	char *nl;

	/* Shorter than what was read: rewritten from the start. */
	if (!fstat(fd, &st) && (uint64_t)st.st_size < pos->off) {
		pos->off = 0;
		pos->skipping = 0;
	}
	buf = malloc(JIT_BUF);
	if (!buf)
		return -ENOMEM;
	while (!stop && (!max_bytes || done < max_bytes)) {
		got = jit_pread(fd, buf, JIT_BUF, pos->off);
		if (got <= 0) {
			if (got < 0)
				emitted = got;
			break;
		}
		for (i = 0, line = 0; !stop && i < (size_t)got; i = line) {
			nl = memchr(buf + i, '\n', (size_t)got - i);
			if (!nl)
				break;
			line = (size_t)(nl - buf) + 1;
			if (pos->skipping)
				pos->skipping = 0;	/* the end of an overlong line */
			else
				emitted += perfmap_line(buf + i, line - 1 - i,
							pos, emit, arg, &stop);
		}
		if (!i && !stop) {
			/*
			 * No newline in a whole buffer: an overlong line, or
			 * a partial one at the end of the file.
			 */
			if ((size_t)got < JIT_BUF)
				break;
			if (!pos->skipping)
				pos->bad++;
			pos->skipping = 1;
			i = (size_t)got;
		}
		pos->off += i;
		done += i;
		if (!pos->skipping && (size_t)got < JIT_BUF && i == (size_t)got)
			break;	/* read to the end */
	}
	free(buf);
	return emitted;
}

/*
 * perf's jitdump format (tools/perf/util/jitdump.h): a header, then
 * records { u32 id, u32 total_size, u64 timestamp } and their payload.
 */
#define JITDUMP_MAGIC		0x4A695444U
#define JITDUMP_MAGIC_SWAP	0x4454694AU
#define JIT_CODE_LOAD		0
#define JIT_CODE_MAX		16	/* ids beyond are nonsense */
#define JIT_REC_MAX		(64U << 20)

struct jd_header {
	uint32_t	magic;
	uint32_t	version;
	uint32_t	total_size;
	uint32_t	elf_mach;
	uint32_t	pad1;
	uint32_t	pid;
	uint64_t	timestamp;
	uint64_t	flags;
};

struct jd_prefix {
	uint32_t	id;
	uint32_t	total_size;
	uint64_t	timestamp;
};

/* After the prefix: pid, tid, vma, code_addr, code_size, code_index, name. */
struct jd_load {
	uint32_t	pid;
	uint32_t	tid;
	uint64_t	vma;
	uint64_t	code_addr;
	uint64_t	code_size;
	uint64_t	code_index;
};

static uint32_t sw32(const struct uwprof_jit_pos *pos, uint32_t v)
{
	return pos->dump_swap ? __builtin_bswap32(v) : v;
}

static uint64_t sw64(const struct uwprof_jit_pos *pos, uint64_t v)
{
	return pos->dump_swap ? __builtin_bswap64(v) : v;
}

static int dump_header(int fd, struct uwprof_jit_pos *pos)
{
	struct jd_header h;
	long got = jit_pread(fd, (char *)&h, sizeof(h), 0);
	uint32_t size;

	if (got < 0)
		return (int)got;
	if ((size_t)got < sizeof(h))
		return got >= 4 && h.magic != JITDUMP_MAGIC &&
		       h.magic != JITDUMP_MAGIC_SWAP ? -EINVAL : 0;
	if (h.magic != JITDUMP_MAGIC && h.magic != JITDUMP_MAGIC_SWAP)
		return -EINVAL;
	pos->dump_swap = h.magic == JITDUMP_MAGIC_SWAP;
	size = sw32(pos, h.total_size);
	if (size < sizeof(h) || size > 4096)
		return -EINVAL;
	pos->off = size;
	pos->dump_ok = 1;
	return 0;
}

/* The record at buf (its whole 'size' bytes); returns 1 when emitted. */
static int dump_record(const char *buf, uint32_t size, uint32_t id,
		       struct uwprof_jit_pos *pos, uwprof_jit_emit_fn emit,
		       void *arg, int *stop)
{
	const char *name, *end;
	uint64_t addr, len;
	struct jd_load l;
	size_t off;

	if (id == JIT_CODE_LOAD) {
		off = sizeof(struct jd_prefix) + sizeof(l);
		if (size <= off)
			goto bad;
		memcpy(&l, buf + sizeof(struct jd_prefix), sizeof(l));
		addr = sw64(pos, l.code_addr);
		len = sw64(pos, l.code_size);
		name = buf + off;
		end = memchr(name, 0, size - off);
		if (!end || end == name || end - name > UWPROF_JIT_NAME_MAX ||
		    !len || addr + len < addr)
			goto bad;
		*stop = emit(arg, addr, len, name, (size_t)(end - name));
		return 1;
	}
	return 0;
bad:
	pos->bad++;
	return 0;
}

long uwprof_jit_dump_read(int fd, struct uwprof_jit_pos *pos,
			  uint64_t max_bytes, uwprof_jit_emit_fn emit,
			  void *arg)
{
	struct jd_prefix p;
	uint64_t done = 0;
	uint32_t id, size;
	long got, emitted = 0;
	char *buf = NULL, *nb;
	size_t cap = 0;
	int stop = 0, ret;

	if (!pos->dump_ok) {
		ret = dump_header(fd, pos);
		if (ret || !pos->dump_ok)
			return ret;
	}
	while (!stop && (!max_bytes || done < max_bytes)) {
		got = jit_pread(fd, (char *)&p, sizeof(p), pos->off);
		if (got < (long)sizeof(p)) {
			if (got < 0)
				emitted = got;
			break;
		}
		id = sw32(pos, p.id);
		size = sw32(pos, p.total_size);
		if (size < sizeof(p) || size > JIT_REC_MAX ||
		    id >= JIT_CODE_MAX) {
			/* Lost the record boundaries: nothing more is safe. */
			pos->bad++;
			emitted = emitted ? emitted : -EINVAL;
			break;
		}
		if (id == JIT_CODE_LOAD) {
			/* Only the fixed part and the name: not the code. */
			size_t want = size;

			if (want > sizeof(p) + sizeof(struct jd_load) +
				   UWPROF_JIT_NAME_MAX + 1)
				want = sizeof(p) + sizeof(struct jd_load) +
				       UWPROF_JIT_NAME_MAX + 1;
			if (want > cap) {
				nb = realloc(buf, want);
				if (!nb) {
					emitted = -ENOMEM;
					break;
				}
				buf = nb;
				cap = want;
			}
			got = jit_pread(fd, buf, want, pos->off);
			if (got < 0) {
				emitted = got;
				break;
			}
			if ((size_t)got < want)
				break;	/* still being written */
			/* The record must be complete in the file too. */
			if (jit_pread(fd, (char *)&p, 1, pos->off + size - 1) != 1)
				break;
			emitted += dump_record(buf, (uint32_t)want, id, pos,
					       emit, arg, &stop);
		} else if (jit_pread(fd, (char *)&p, 1,
				     pos->off + size - 1) != 1) {
			break;
		}
		pos->off += size;
		done += size;
	}
	free(buf);
	return emitted;
}

/* The process's start in CLOCK_REALTIME seconds, or 0 when unknown. */
static time_t proc_start_wall(pid_t pid)
{
	unsigned long long start = 0, btime = 0;
	char path[48], buf[1024], *p;
	long hz = sysconf(_SC_CLK_TCK);
	FILE *f;
	size_t n;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	/* After the comm, which may hold spaces and parentheses. */
	p = strrchr(buf, ')');
	for (i = 0; p && i < 20; i++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%llu", &start) != 1 || hz <= 0)
		return 0;
	f = fopen("/proc/stat", "re");
	if (!f)
		return 0;
	while (fgets(buf, sizeof(buf), f))
		if (sscanf(buf, "btime %llu", &btime) == 1)
			break;
	fclose(f);
	return btime ? (time_t)(btime + start / (unsigned long long)hz) : 0;
}

int uwprof_jit_owner_read(pid_t pid, struct uwprof_jit_owner *o)
{
	char proc[32];
	struct stat ps;

	snprintf(proc, sizeof(proc), "/proc/%d", (int)pid);
	if (stat(proc, &ps))
		return -ESRCH;
	o->uid = ps.st_uid;
	o->born = proc_start_wall(pid);
	return 0;
}

/*
 * Opens 'path' for the symbols of the process 'o' describes: a regular
 * file of its owner or root, not older than the process (a file left by
 * an earlier process of the same pid would name its code wrongly).
 */
static int jit_open_owned(const struct uwprof_jit_owner *o, const char *path)
{
	struct stat fs;
	int fd;

	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno == ELOOP ? -EPERM : -errno;
	if (fstat(fd, &fs) || !S_ISREG(fs.st_mode) ||
	    (fs.st_uid != o->uid && fs.st_uid != 0)) {
		close(fd);
		return -EPERM;
	}
	/* Whole seconds on both sides: allow one of rounding. */
	if (o->born && fs.st_mtime + 1 < o->born) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

int uwprof_jit_perfmap_open(pid_t pid, const struct uwprof_jit_owner *o)
{
	char path[64];

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
	return jit_open_owned(o, path);
}

int uwprof_jit_dump_open(const char *path, const struct uwprof_jit_owner *o)
{
	return jit_open_owned(o, path);
}

int uwprof_jit_is_dump(pid_t pid, const char *path)
{
	char want[48];
	const char *base = strrchr(path, '/');

	snprintf(want, sizeof(want), "jit-%d.dump", (int)pid);
	return !strcmp(base ? base + 1 : path, want);
}

int uwprof_jitsyms_add(struct uwprof_jitsyms *t, uint64_t start,
		       uint64_t size, const char *name, uint32_t len)
{
	struct uwprof_jit_sym *v;

	if (!size || start + size < start)
		return 0;
	if (t->n == t->cap) {
		size_t nc = t->cap ? t->cap * 2 : 256;

		v = realloc(t->v, nc * sizeof(*v));
		if (!v)
			return -ENOMEM;
		t->v = v;
		t->cap = nc;
	}
	t->v[t->n] = (struct uwprof_jit_sym){ .start = start, .size = size,
					      .name = name, .len = len,
					      .seq = (uint32_t)t->n };
	t->n++;
	t->sorted = 0;
	return 0;
}

static int jsym_cmp(const void *a, const void *b)
{
	const struct uwprof_jit_sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int jitsyms_sort(struct uwprof_jitsyms *t)
{
	uint64_t *r, end, m = 0;
	size_t i;

	r = realloc(t->reach, (t->n ? t->n : 1) * sizeof(*r));
	if (!r)
		return -ENOMEM;
	t->reach = r;
	qsort(t->v, t->n, sizeof(*t->v), jsym_cmp);
	for (i = 0; i < t->n; i++) {
		end = t->v[i].start + t->v[i].size;
		m = end > m ? end : m;
		r[i] = m;
	}
	t->sorted = 1;
	return 0;
}

const struct uwprof_jit_sym *uwprof_jitsyms_find(struct uwprof_jitsyms *t,
						 uint64_t addr)
{
	const struct uwprof_jit_sym *best = NULL;
	size_t lo = 0, hi = t->n, mid;

	if (!t->n || (!t->sorted && jitsyms_sort(t)))
		return NULL;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (t->v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Back over every symbol that may still reach addr. */
	while (lo > 0 && t->reach[lo - 1] > addr) {
		const struct uwprof_jit_sym *e = &t->v[--lo];

		if (addr - e->start < e->size && (!best || e->seq > best->seq))
			best = e;
	}
	return best;
}

void uwprof_jitsyms_free(struct uwprof_jitsyms *t)
{
	free(t->v);
	free(t->reach);
	memset(t, 0, sizeof(*t));
}
