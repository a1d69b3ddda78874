// SPDX-License-Identifier: GPL-2.0
/*
 * Reading live processes for 'uwprof record': /proc/PID/maps (executable
 * mappings only), comm, parent, vDSO bytes from /proc/PID/mem, and the
 * ELF program headers and build-id note that give a mapping's load bias
 * and an object's identity. Everything read is bounds-checked: a process
 * can change or vanish under us at any moment.
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

#include "procmaps.h"

/* Addresses from here up belong to the kernel on x86_64 and arm64. */
#define PM_USER_MAX	(1ULL << 56)

static int pm_push(struct uwprof_pm *pm, size_t *cap)
{
	struct uwprof_pm_entry *nv;

	if (pm->n < *cap)
		return 0;
	*cap = *cap ? *cap * 2 : 64;
	nv = realloc(pm->v, *cap * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	pm->v = nv;
	return 0;
}

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
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &s, &e, perm,
			   &off, &maj, &min, &ino, &pos) < 7 || !pos)
			continue;
		if (strlen(perm) < 3 || perm[2] != 'x' || s >= e ||
		    e > PM_USER_MAX)
			continue;
		ret = pm_push(pm, &cap);
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

uint64_t uwprof_pm_vsize(pid_t pid)
{
	char fn[64], buf[128];
	unsigned long long v;

	snprintf(fn, sizeof(fn), "/proc/%d/statm", (int)pid);
	if (!pm_read_small(fn, buf, sizeof(buf)))
		return 0;
	return sscanf(buf, "%llu", &v) == 1 ? v : 0;
}

int uwprof_pm_object_path(pid_t pid, const struct uwprof_pm_entry *e,
			  char *buf, size_t len)
{
	struct stat st;

	if (!e->deleted && !stat(e->path, &st) && S_ISREG(st.st_mode) &&
	    st.st_ino == e->inode) {
		snprintf(buf, len, "%s", e->path);
		return 0;
	}
	snprintf(buf, len, "/proc/%d/map_files/%llx-%llx", (int)pid,
		 (unsigned long long)e->start, (unsigned long long)e->end);
	if (!access(buf, R_OK))
		return 0;
	/* Overlay and FUSE roots may report another inode: trust the path. */
	if (!e->deleted && !stat(e->path, &st) && S_ISREG(st.st_mode)) {
		snprintf(buf, len, "%s", e->path);
		return 0;
	}
	return -ENOENT;
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

/* Reads through either a file descriptor or an image in memory. */
struct elf_src {
	int		fd;
	const uint8_t	*img;
	size_t		size;
};

static int src_read(const struct elf_src *s, void *dst, size_t n, uint64_t off)
{
	if (s->img) {
		if (off > s->size || n > s->size - off)
			return -ENOEXEC;
		memcpy(dst, s->img + off, n);
		return 0;
	}
	return pread(s->fd, dst, n, (off_t)off) == (ssize_t)n ? 0 : -ENOEXEC;
}

static void elf_note_build_id(const struct elf_src *s, uint64_t off,
			      uint64_t size, struct uwprof_elf_info *info)
{
	uint8_t buf[4096];
	uint64_t pos = 0;

	if (size > sizeof(buf))
		size = sizeof(buf);
	if (src_read(s, buf, (size_t)size, off))
		return;
	while (pos + 12 <= size) {
		uint32_t nsz, dsz, type;
		uint64_t name_at, desc_at;

		memcpy(&nsz, buf + pos, 4);
		memcpy(&dsz, buf + pos + 4, 4);
		memcpy(&type, buf + pos + 8, 4);
		name_at = pos + 12;
		desc_at = name_at + ((nsz + 3ULL) & ~3ULL);
		if (desc_at > size || dsz > size - desc_at)
			return;
		if (type == NT_GNU_BUILD_ID && nsz == 4 &&
		    !memcmp(buf + name_at, "GNU", 4) && dsz) {
			info->build_id_size = dsz < sizeof(info->build_id) ?
					      dsz : sizeof(info->build_id);
			memcpy(info->build_id, buf + desc_at, info->build_id_size);
			return;
		}
		pos = desc_at + ((dsz + 3ULL) & ~3ULL);
	}
}

static int elf_info(const struct elf_src *s, struct uwprof_elf_info *info)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	int i;

	memset(info, 0, sizeof(*info));
	if (src_read(s, &eh, sizeof(eh), 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_phentsize != sizeof(ph) || eh.e_phnum > 256)
		return -ENOEXEC;
	info->machine = eh.e_machine;
	for (i = 0; i < eh.e_phnum; i++) {
		if (src_read(s, &ph, sizeof(ph), eh.e_phoff + (uint64_t)i * sizeof(ph)))
			return -ENOEXEC;
		if (ph.p_type == PT_NOTE && !info->build_id_size)
			elf_note_build_id(s, ph.p_offset, ph.p_filesz, info);
		if (ph.p_type == PT_LOAD && info->nr_load < 16) {
			info->load_vaddr[info->nr_load] = ph.p_vaddr;
			info->load_offset[info->nr_load] = ph.p_offset;
			info->load_filesz[info->nr_load] = ph.p_filesz;
			info->load_flags[info->nr_load] = ph.p_flags;
			info->nr_load++;
		}
	}
	return 0;
}

int uwprof_elf_info_file(const char *path, struct uwprof_elf_info *info)
{
	struct elf_src s = { .fd = open(path, O_RDONLY | O_CLOEXEC) };
	int ret;

	if (s.fd < 0)
		return -errno;
	ret = elf_info(&s, info);
	close(s.fd);
	return ret;
}

int uwprof_elf_info_mem(const void *image, size_t size,
			struct uwprof_elf_info *info)
{
	struct elf_src s = { .fd = -1, .img = image, .size = size };

	return elf_info(&s, info);
}

int uwprof_elf_bias(const struct uwprof_elf_info *info, uint64_t start,
		    uint64_t offset, uint32_t pf, uint64_t *bias)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	int i, found = -1;

	for (i = 0; i < info->nr_load; i++) {
		uint64_t o = info->load_offset[i];

		/* The mapping starts on the page holding the segment's start. */
		if (offset < (o & ~(page - 1)) ||
		    offset >= o + (info->load_filesz[i] ? info->load_filesz[i] : 1))
			continue;
		/* Else the first: a mapping mprotect'ed since it was made. */
		if (found < 0)
			found = i;
		if (!((info->load_flags[i] ^ pf) & PF_X)) {
			found = i;
			break;
		}
	}
	if (found < 0)
		return -ENOENT;
	*bias = start - offset -
		(info->load_vaddr[found] - info->load_offset[found]);
	return 0;
}
