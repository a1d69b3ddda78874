// SPDX-License-Identifier: GPL-2.0
/*
 * What 'uwprof record' needs of the objects a process maps, from the
 * program headers alone (elf_file.h): identity (machine, build-id), load
 * bias and program interpreter. Read with pread() from a descriptor the
 * caller opened (file_open.h) or from an image in memory, without libelf
 * and without mapping the file: a file cut short reads short, nothing more.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "elf_file.h"
#include "file_open.h"

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif

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

/*
 * Checks the ELF header of 's' and hands each program header to 'fn' until
 * it returns non-zero (its answer) or they run out (0).
 */
static int raw_phdrs(const struct elf_src *s, uint16_t *machine,
		     int (*fn)(const struct elf_src *s, const Elf64_Phdr *ph,
			       void *arg),
		     void *arg)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	int i, ret;

	if (src_read(s, &eh, sizeof(eh), 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_phentsize != sizeof(ph) || eh.e_phnum > 256)
		return -ENOEXEC;
	if (machine)
		*machine = eh.e_machine;
	for (i = 0; i < eh.e_phnum; i++) {
		if (src_read(s, &ph, sizeof(ph), eh.e_phoff + (uint64_t)i * sizeof(ph)))
			return -ENOEXEC;
		ret = fn(s, &ph, arg);
		if (ret)
			return ret;
	}
	return 0;
}

static int info_phdr(const struct elf_src *s, const Elf64_Phdr *ph, void *arg)
{
	struct uwprof_elf_info *info = arg;

	if (ph->p_type == PT_NOTE && !info->build_id_size)
		elf_note_build_id(s, ph->p_offset, ph->p_filesz, info);
	if (ph->p_type == PT_LOAD && info->nr_load < 16) {
		info->load_vaddr[info->nr_load] = ph->p_vaddr;
		info->load_offset[info->nr_load] = ph->p_offset;
		info->load_filesz[info->nr_load] = ph->p_filesz;
		info->load_flags[info->nr_load] = ph->p_flags;
		info->nr_load++;
	}
	return 0;
}

static int elf_info(const struct elf_src *s, struct uwprof_elf_info *info)
{
	memset(info, 0, sizeof(*info));
	return raw_phdrs(s, &info->machine, info_phdr, info);
}

int uwprof_elf_info_fd(int fd, struct uwprof_elf_info *info)
{
	struct elf_src s = { .fd = fd };

	return elf_info(&s, info);
}

int uwprof_elf_info_file(const char *path, struct uwprof_elf_info *info)
{
	struct elf_src s = { .fd = uwprof_file_open(path, 0, NULL, NULL, NULL, 0) };
	int ret;

	if (s.fd < 0)
		return s.fd;
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

struct interp_buf {
	char		*out;
	size_t		len;
};

static int interp_phdr(const struct elf_src *s, const Elf64_Phdr *ph,
		       void *arg)
{
	struct interp_buf *b = arg;

	if (ph->p_type != PT_INTERP)
		return 0;
	if (!ph->p_filesz || ph->p_filesz >= b->len ||
	    src_read(s, b->out, (size_t)ph->p_filesz, ph->p_offset))
		return -ENOEXEC;
	b->out[ph->p_filesz] = 0;
	return 1;
}

int uwprof_elf_interp(const char *path, char *out, size_t len)
{
	struct elf_src s = { .fd = uwprof_file_open(path, 0, NULL, NULL, NULL, 0) };
	struct interp_buf b = { .out = out, .len = len };
	int ret;

	if (s.fd < 0)
		return s.fd;
	ret = raw_phdrs(&s, NULL, interp_phdr, &b);
	close(s.fd);
	return ret == 1 ? 0 : ret ? ret : -ENOENT;
}
