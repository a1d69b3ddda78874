// SPDX-License-Identifier: GPL-2.0
/*
 * Reading live processes for 'uwprof record': /proc/PID/maps (executable
 * mappings only), comm, parent, size and vDSO bytes from /proc/PID/mem.
 * What the objects themselves say is elf_file.c's business. Everything
 * read is bounds-checked: a process can change or vanish under us at any
 * moment.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "file_open.h"
#include "procmaps.h"
#include "vec.h"

/* Addresses from here up belong to the kernel on x86_64 and arm64. */
#define PM_USER_MAX	(1ULL << 56)

int uwprof_pm_read(pid_t pid, struct uwprof_pm *pm)
{
	char fn[64], *line = NULL;
	size_t lcap = 0, cap = 0;
	ssize_t ll;
	FILE *f;
	int ret = 0;

	pm->v = NULL;
	pm->n = 0;
	snprintf(fn, sizeof(fn), "/proc/%d/maps", (int)pid);
	f = fopen(fn, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((ll = getline(&line, &lcap, f)) > 0) {
		unsigned long long s, e, off, ino;
		unsigned int maj, min;
		char perm[8];
		int pos = 0;
		struct uwprof_pm_entry *en;
		char *name;

		if (line[ll - 1] == '\n')
			line[--ll] = 0;
		/*
		 * Most lines are data, stack and read-only segments: skip them
		 * on the permissions' 'x' (after "start-end ") unparsed.
		 */
		name = strchr(line, ' ');
		if (!name || strnlen(name + 1, 3) < 3 || name[3] != 'x')
			continue;
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &s, &e, perm,
			   &off, &maj, &min, &ino, &pos) < 7 || !pos)
			continue;
		if (strlen(perm) < 3 || perm[2] != 'x' || s >= e ||
		    e > PM_USER_MAX)
			continue;
		ret = VEC_RESERVE(pm->v, cap, pm->n + 1, 64);
		if (ret)
			break;
		en = &pm->v[pm->n];
		memset(en, 0, sizeof(*en));
		en->start = s;
		en->end = e;
		en->offset = off;
		en->dev_major = maj;
		en->dev_minor = min;
		en->inode = ino;
		en->pf = (perm[0] == 'r' ? PF_R : 0) |
			 (perm[1] == 'w' ? PF_W : 0) | PF_X;
		name = line + pos;
		if (name[0] == '/') {
			size_t nl = strlen(name);
			static const char del[] = " (deleted)";

			en->kind = UWPROF_PM_FILE;
			if (nl > sizeof(del) - 1 &&
			    !strcmp(name + nl - (sizeof(del) - 1), del)) {
				en->deleted = 1;
				name[nl - (sizeof(del) - 1)] = 0;
			}
		} else if (!strcmp(name, "[vdso]")) {
			en->kind = UWPROF_PM_VDSO;
		} else {
			en->kind = UWPROF_PM_ANON;
		}
		en->path = strdup(name);
		if (!en->path) {
			ret = -ENOMEM;
			break;
		}
		pm->n++;
	}
	if (!ret && ferror(f))
		ret = -EIO;
	free(line);
	fclose(f);
	if (ret)
		uwprof_pm_free(pm);
	/* An empty list for a live process means it is a zombie or kernel thread. */
	return ret;
}

void uwprof_pm_free(struct uwprof_pm *pm)
{
	size_t i;

	for (i = 0; i < pm->n; i++)
		free(pm->v[i].path);
	free(pm->v);
	pm->v = NULL;
	pm->n = 0;
}

/*
 * Reads a small /proc file whole into buf (NUL-terminated, a trailing
 * newline dropped); its length, or 0 when it cannot be read.
 */
static size_t pm_read_small(const char *fn, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	buf[0] = 0;
	fd = open(fn, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0) {
		buf[0] = 0;
		return 0;
	}
	buf[n] = 0;
	if (buf[n - 1] == '\n')
		buf[--n] = 0;
	return (size_t)n;
}

void uwprof_pm_comm(pid_t pid, pid_t tid, char *buf, size_t len)
{
	char fn[80];

	snprintf(fn, sizeof(fn), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	pm_read_small(fn, buf, len);
}

pid_t uwprof_pm_ppid(pid_t pid)
{
	char fn[64], buf[512], *p;
	int ppid;

	snprintf(fn, sizeof(fn), "/proc/%d/stat", (int)pid);
	if (!pm_read_small(fn, buf, sizeof(buf)))
		return -1;
	/* comm may hold spaces and parentheses: parse after the last ')'. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %d", &ppid) != 1)
		return -1;
	return ppid;
}

uint64_t uwprof_pm_start_time(pid_t pid)
{
	char fn[64], buf[1024], *p;
	unsigned long long t;

	snprintf(fn, sizeof(fn), "/proc/%d/stat", (int)pid);
	if (!pm_read_small(fn, buf, sizeof(buf)))
		return 0;
	/* Field 22; comm (field 2) may hold spaces and parentheses. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c" " %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u"
			 " %*u %*u %*d %*d %*d %*d %*d %*d %llu", &t) != 1)
		return 0;
	return t;
}

uint64_t uwprof_pm_vsize(pid_t pid)
{
	char fn[64], buf[128];
	unsigned long long v;

	snprintf(fn, sizeof(fn), "/proc/%d/statm", (int)pid);
	if (!pm_read_small(fn, buf, sizeof(buf)))
		return 0;
	return sscanf(buf, "%llu", &v) == 1 ? v : 0;
}

/* "PATH: " before a message about its map_files link: name what maps says. */
static void pm_err_prefix(char *err, size_t errlen, const char *path)
{
	size_t pl = strlen(path) + 2, n = strlen(err) + 1;

	if (pl >= errlen)
		return;
	if (n > errlen - pl)
		n = errlen - pl;
	memmove(err + pl, err, n);
	memcpy(err, path, pl - 2);
	err[pl - 2] = ':';
	err[pl - 1] = ' ';
	err[errlen - 1] = 0;
}

/*
 * Finds a mapping the process has now of the file 'want' names (any
 * permissions), other than [skip_start, skip_end), and puts its
 * map_files link in 'name'. Returns 0, or -ENOENT when there is none.
 */
static int pm_find_link(pid_t pid, const struct uwprof_file_want *want,
			uint64_t skip_start, uint64_t skip_end, char *name,
			size_t len)
{
	char fn[64], *line = NULL;
	size_t lcap = 0;
	int ret = -ENOENT;
	FILE *f;

	snprintf(fn, sizeof(fn), "/proc/%d/maps", (int)pid);
	f = fopen(fn, "re");
	if (!f)
		return -ENOENT;
	while (getline(&line, &lcap, f) > 0) {
		unsigned long long s, e, ino;
		unsigned int maj, min;

		if (sscanf(line, "%llx-%llx %*s %*x %x:%x %llu", &s, &e, &maj,
			   &min, &ino) != 5)
			continue;
		if (ino != want->ino || maj != want->dev_major ||
		    min != want->dev_minor || s >= e ||
		    (s == skip_start && e == skip_end))
			continue;
		snprintf(name, len, "/proc/%d/map_files/%llx-%llx", (int)pid,
			 s, e);
		ret = 0;
		break;
	}
	free(line);
	fclose(f);
	return ret;
}

/* Tries at finding the file mapped again while the process remaps it. */
#define PM_RELINK_TRIES	3

int uwprof_pm_object_open(pid_t pid, const struct uwprof_pm_entry *e,
			  char *name, size_t len, struct stat *st,
			  char *err, size_t errlen)
{
	struct uwprof_file_want want = {
		.dev_major = e->dev_major,
		.dev_minor = e->dev_minor,
		.ino = e->inode,
	};
	int fd, i;

	/*
	 * The kernel's own link to the mapped file, where we may follow it
	 * (root): the path in maps may name another file by now. stat()
	 * may report another device than maps through it (btrfs, overlayfs
	 * layers), never another inode.
	 */
	snprintf(name, len, "/proc/%d/map_files/%llx-%llx", (int)pid,
		 (unsigned long long)e->start, (unsigned long long)e->end);
	fd = uwprof_file_open(name, UWPROF_FILE_INO_ONLY, &want, st, err,
			      errlen);
	/*
	 * No link for that range any more: the mapping was split, moved or
	 * replaced since maps was read. ld.so does that to every library it
	 * loads whose first segment is executable (arm64's): it maps the
	 * whole span with that segment's protection, then mprotect()s the
	 * gap and maps the data over the rest. A mapping of the same device
	 * and inode the process has now leads to the same file; the path
	 * may not (the file there swapped, or, under overlayfs, stat()
	 * showing another device than maps).
	 */
	for (i = 0; fd == -ENOENT && e->end > e->start && i < PM_RELINK_TRIES;
	     i++) {
		if (pm_find_link(pid, &want, e->start, e->end, name, len))
			break;
		fd = uwprof_file_open(name, UWPROF_FILE_INO_ONLY, &want, st,
				      err, errlen);
	}
	if (fd == -ESTALE || fd == -ENOEXEC)
		pm_err_prefix(err, errlen, e->path);
	if (fd >= 0 || fd == -ESTALE || fd == -ENOEXEC)
		return fd;
	if (e->deleted) {
		snprintf(err, errlen, "%s (deleted): cannot open it", e->path);
		return -ENOENT;
	}
	snprintf(name, len, "%s", e->path);
	return uwprof_file_open(name, UWPROF_FILE_NOFOLLOW, &want, st, err,
				errlen);
}

int uwprof_pm_read_mem(pid_t pid, uint64_t start, uint64_t end, void **out)
{
	size_t size = (size_t)(end - start), got = 0;
	char fn[64];
	uint8_t *b;
	ssize_t n;
	int fd;

	*out = NULL;
	if (end <= start || end - start > (64U << 20))
		return -EINVAL;
	snprintf(fn, sizeof(fn), "/proc/%d/mem", (int)pid);
	fd = open(fn, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	b = malloc(size);
	if (!b) {
		close(fd);
		return -ENOMEM;
	}
	while (got < size) {
		n = pread(fd, b + got, size - got, (off_t)(start + got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int e = n < 0 ? errno : EIO;

			free(b);
			close(fd);
			return -e;
		}
		got += (size_t)n;
	}
	close(fd);
	*out = b;
	return 0;
}
