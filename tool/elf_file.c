// SPDX-License-Identifier: GPL-2.0
/*
 * ELF owner object for the table compiler: maps the file (or copies an
 * image), checks class, byte order, machine and type, and records the few
 * things the compiler needs: the CFI sections (decompressed), the build-id,
 * the .gnu_debuglink, and the executable segments. Everything found is
 * bounds-checked by libelf against the image; nothing here trusts an offset.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/uwprof.h>

#include "elf_file.h"

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif

static int elf_fail(char *err, size_t errlen, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int elf_fail(char *err, size_t errlen, int ret, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return ret;
}

void uwprof_elf_close(struct uwprof_elf *e)
{
	if (!e)
		return;
	if (e->elf)
		elf_end(e->elf);
	if (e->image) {
		if (e->image_mapped)
			munmap(e->image, e->image_size);
		else
			free(e->image);
	}
	free(e->path);
	free(e);
}

static void elf_take_build_id(struct uwprof_elf *e, Elf_Data *d)
{
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;

	while ((off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
		    memcmp((const char *)d->d_buf + name_off, "GNU", 4))
			continue;
		if (nh.n_descsz == 0 || nh.n_descsz > UWPROF_ELF_MAX_BUILD_ID)
			continue;
		memcpy(e->build_id, (const char *)d->d_buf + desc_off,
		       nh.n_descsz);
		e->build_id_size = nh.n_descsz;
		return;
	}
}

static int elf_sec_load(struct uwprof_elf *e, Elf_Scn *scn, GElf_Shdr *sh,
			const char *name, int gnu_compressed,
			struct uwprof_elf_sec *sec, char *err, size_t errlen)
{
	Elf_Data *d;

	if (sh->sh_type == SHT_NOBITS)
		return 0;
	if (sh->sh_flags & SHF_COMPRESSED) {
		if (elf_compress(scn, 0, 0) < 0)
			return elf_fail(err, errlen, -EINVAL,
					"%s: %s at file offset 0x%llx: cannot decompress: %s",
					e->path, name,
					(unsigned long long)sh->sh_offset,
					elf_errmsg(-1));
	} else if (gnu_compressed) {
		if (elf_compress_gnu(scn, 0, 0) < 0)
			return elf_fail(err, errlen, -EINVAL,
					"%s: %s at file offset 0x%llx: cannot decompress: %s",
					e->path, name,
					(unsigned long long)sh->sh_offset,
					elf_errmsg(-1));
	}
	d = elf_getdata(scn, NULL);
	if (!d)
		return elf_fail(err, errlen, -EINVAL,
				"%s: %s at file offset 0x%llx: unreadable section data: %s",
				e->path, name, (unsigned long long)sh->sh_offset,
				elf_errmsg(-1));
	sec->data = d->d_buf;
	sec->size = d->d_buf ? d->d_size : 0;
	sec->addr = sh->sh_addr;
	sec->offset = sh->sh_offset;
	sec->name = name;
	sec->present = 1;
	return 0;
}

static int elf_is_plt(const char *name)
{
	return !strcmp(name, ".plt") || !strcmp(name, ".plt.sec") ||
	       !strcmp(name, ".plt.got") || !strcmp(name, ".iplt");
}

static int elf_scan_sections(struct uwprof_elf *e, char *err, size_t errlen)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	const char *name;
	Elf_Data *d;
	int ret;

	if (elf_getshdrstrndx(e->elf, &shstrndx))
		return elf_fail(err, errlen, -EINVAL,
				"%s: ELF section header string table: %s",
				e->path, elf_errmsg(-1));
	while ((scn = elf_nextscn(e->elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			return elf_fail(err, errlen, -EINVAL,
					"%s: ELF section %zu: bad header: %s",
					e->path, elf_ndxscn(scn), elf_errmsg(-1));
		name = elf_strptr(e->elf, shstrndx, sh.sh_name);
		if (!name)
			continue;
		ret = 0;
		if (!strcmp(name, ".eh_frame")) {
			ret = elf_sec_load(e, scn, &sh, ".eh_frame", 0,
					   &e->eh_frame, err, errlen);
		} else if (!strcmp(name, ".eh_frame_hdr")) {
			ret = elf_sec_load(e, scn, &sh, ".eh_frame_hdr", 0,
					   &e->eh_frame_hdr, err, errlen);
		} else if (!strcmp(name, ".debug_frame")) {
			ret = elf_sec_load(e, scn, &sh, ".debug_frame", 0,
					   &e->debug_frame, err, errlen);
		} else if (!strcmp(name, ".zdebug_frame")) {
			ret = elf_sec_load(e, scn, &sh, ".zdebug_frame", 1,
					   &e->debug_frame, err, errlen);
		} else if (!strcmp(name, ".go.buildinfo") ||
			   !strcmp(name, ".note.go.buildid")) {
			e->is_go = 1;
		} else if (elf_is_plt(name) && e->nr_plt < UWPROF_ELF_MAX_PLT &&
			   sh.sh_type == SHT_PROGBITS) {
			ret = elf_sec_load(e, scn, &sh, name, 0,
					   &e->plt[e->nr_plt++], err, errlen);
		} else if (!strcmp(name, ".text")) {
			e->text_addr = sh.sh_addr;
		} else if (!strcmp(name, ".got")) {
			e->got_addr = sh.sh_addr;
		} else if (sh.sh_type == SHT_NOTE && !e->build_id_size) {
			d = elf_getdata(scn, NULL);
			if (d && d->d_buf)
				elf_take_build_id(e, d);
		} else if (!strcmp(name, ".gnu_debuglink") &&
			   sh.sh_type != SHT_NOBITS) {
			d = elf_getdata(scn, NULL);
			if (d && d->d_buf && d->d_size >= 8) {
				size_t n = strnlen(d->d_buf, d->d_size);
				size_t crc_off = (n + 4) & ~(size_t)3;

				if (n && n < sizeof(e->debuglink) &&
				    crc_off + 4 <= d->d_size) {
					memcpy(e->debuglink, d->d_buf, n);
					e->debuglink[n] = 0;
					memcpy(&e->debuglink_crc,
					       (const char *)d->d_buf + crc_off, 4);
					e->has_debuglink = 1;
				}
			}
		}
		if (ret)
			return ret;
	}
	return 0;
}

/* Program headers: executable ranges, and notes/eh_frame_hdr without sections. */
static int elf_scan_phdrs(struct uwprof_elf *e, char *err, size_t errlen)
{
	size_t i, n;
	GElf_Phdr ph;
	Elf_Data *d;

	if (elf_getphdrnum(e->elf, &n))
		return elf_fail(err, errlen, -EINVAL,
				"%s: ELF program headers: %s", e->path,
				elf_errmsg(-1));
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(e->elf, i, &ph))
			return elf_fail(err, errlen, -EINVAL,
					"%s: ELF program header %zu: %s",
					e->path, i, elf_errmsg(-1));
		if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) &&
		    e->nr_exec < UWPROF_ELF_MAX_EXEC) {
			e->exec_lo[e->nr_exec] = ph.p_vaddr;
			e->exec_hi[e->nr_exec] = ph.p_vaddr + ph.p_memsz;
			e->nr_exec++;
		}
		if (ph.p_type == PT_NOTE && !e->build_id_size && ph.p_filesz) {
			d = elf_getdata_rawchunk(e->elf, ph.p_offset,
						 ph.p_filesz, ELF_T_NHDR);
			if (d)
				elf_take_build_id(e, d);
		}
		if (ph.p_type == PT_GNU_EH_FRAME && !e->eh_frame_hdr.present &&
		    ph.p_filesz && ph.p_offset <= e->image_size &&
		    ph.p_filesz <= e->image_size - ph.p_offset) {
			e->eh_frame_hdr.data = (const uint8_t *)e->image +
					       ph.p_offset;
			e->eh_frame_hdr.size = ph.p_filesz;
			e->eh_frame_hdr.addr = ph.p_vaddr;
			e->eh_frame_hdr.offset = ph.p_offset;
			e->eh_frame_hdr.name = ".eh_frame_hdr";
			e->eh_frame_hdr.present = 1;
		}
	}
	return 0;
}

int uwprof_elf_in_exec(const struct uwprof_elf *e, uint64_t lo, uint64_t hi)
{
	int i;

	if (!e->nr_exec)
		return 1;
	for (i = 0; i < e->nr_exec; i++)
		if (lo >= e->exec_lo[i] && hi <= e->exec_hi[i])
			return 1;
	return 0;
}

/*
 * libelf quietly drops a section header table that lies past the end of
 * the file, and maps only what segments it is asked for: a truncated
 * object would then look like a smaller, valid one. Refuse it instead.
 */
static int elf_check_extent(struct uwprof_elf *e, char *err, size_t errlen)
{
	const GElf_Ehdr *h = &e->ehdr;
	uint64_t end, n = h->e_shnum ? h->e_shnum : 1;
	size_t i, nph;
	GElf_Phdr ph;

	if (h->e_shoff) {
		end = h->e_shoff + n * h->e_shentsize;
		if (end < h->e_shoff || end > e->image_size)
			return elf_fail(err, errlen, -EINVAL,
					"%s: ELF header at offset 0: section header table at 0x%llx runs past the end of the file (%zu bytes)",
					e->path, (unsigned long long)h->e_shoff,
					e->image_size);
	}
	if (elf_getphdrnum(e->elf, &nph))
		return elf_fail(err, errlen, -EINVAL,
				"%s: ELF program headers: %s", e->path,
				elf_errmsg(-1));
	for (i = 0; i < nph; i++) {
		if (!gelf_getphdr(e->elf, i, &ph))
			return elf_fail(err, errlen, -EINVAL,
					"%s: ELF program header %zu at 0x%llx: %s",
					e->path, i,
					(unsigned long long)(h->e_phoff +
							     i * h->e_phentsize),
					elf_errmsg(-1));
		if (ph.p_type != PT_LOAD)
			continue;
		end = ph.p_offset + ph.p_filesz;
		if (end < ph.p_offset || end > e->image_size)
			return elf_fail(err, errlen, -EINVAL,
					"%s: ELF program header %zu: segment at file offset 0x%llx runs past the end of the file (%zu bytes)",
					e->path, i,
					(unsigned long long)ph.p_offset,
					e->image_size);
	}
	return 0;
}

static int elf_setup(struct uwprof_elf *e, char *err, size_t errlen)
{
	int ret;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return elf_fail(err, errlen, -EINVAL, "%s: libelf: %s",
				e->path, elf_errmsg(-1));
	e->elf = elf_memory(e->image, e->image_size);
	if (!e->elf)
		return elf_fail(err, errlen, -EINVAL, "%s: ELF: %s", e->path,
				elf_errmsg(-1));
	if (elf_kind(e->elf) != ELF_K_ELF)
		return elf_fail(err, errlen, -ENOEXEC,
				"%s: not an ELF object", e->path);
	if (!gelf_getehdr(e->elf, &e->ehdr))
		return elf_fail(err, errlen, -EINVAL,
				"%s: ELF header at offset 0: %s", e->path,
				elf_errmsg(-1));
	if (e->ehdr.e_ident[EI_CLASS] != ELFCLASS64 ||
	    e->ehdr.e_ident[EI_DATA] != ELFDATA2LSB)
		return elf_fail(err, errlen, -ENOEXEC,
				"%s: ELF header at offset 0: not a 64-bit little-endian object",
				e->path);
	if (e->ehdr.e_machine == EM_X86_64)
		e->arch = UWPROF_ARCH_X86_64;
	else if (e->ehdr.e_machine == EM_AARCH64)
		e->arch = UWPROF_ARCH_ARM64;
	else
		return elf_fail(err, errlen, -ENOEXEC,
				"%s: ELF header at offset 0: machine %u is neither x86_64 nor aarch64",
				e->path, e->ehdr.e_machine);
	if (e->ehdr.e_type != ET_EXEC && e->ehdr.e_type != ET_DYN)
		return elf_fail(err, errlen, -ENOEXEC,
				"%s: ELF header at offset 0: type %u is not an executable or shared object",
				e->path, e->ehdr.e_type);
	ret = elf_check_extent(e, err, errlen);
	if (ret)
		return ret;
	ret = elf_scan_sections(e, err, errlen);
	if (ret)
		return ret;
	return elf_scan_phdrs(e, err, errlen);
}

int uwprof_elf_open(const char *path, struct uwprof_elf **out,
		    char *err, size_t errlen)
{
	struct uwprof_elf *e;
	struct stat stb;
	int fd, ret;

	*out = NULL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return elf_fail(err, errlen, -ENOMEM, "%s: out of memory", path);
	e->path = strdup(path);
	if (!e->path) {
		free(e);
		return elf_fail(err, errlen, -ENOMEM, "%s: out of memory", path);
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		elf_fail(err, errlen, ret, "%s: %s", path, strerror(errno));
		goto close_elf;
	}
	if (fstat(fd, &stb)) {
		ret = -errno;
		elf_fail(err, errlen, ret, "%s: %s", path, strerror(errno));
		goto close_fd;
	}
	if (!S_ISREG(stb.st_mode)) {
		ret = elf_fail(err, errlen, -ENOEXEC, "%s: not a regular file",
			       path);
		goto close_fd;
	}
	if (stb.st_size < (off_t)sizeof(Elf64_Ehdr)) {
		ret = elf_fail(err, errlen, -ENOEXEC,
			       "%s: ELF header at offset 0: file too short (%lld bytes)",
			       path, (long long)stb.st_size);
		goto close_fd;
	}
	e->image_size = stb.st_size;
	/* Private and writable: libelf may write into the image it is given. */
	e->image = mmap(NULL, e->image_size, PROT_READ | PROT_WRITE,
			MAP_PRIVATE, fd, 0);
	if (e->image == MAP_FAILED) {
		e->image = NULL;
		ret = -errno;
		elf_fail(err, errlen, ret, "%s: mmap: %s", path,
			 strerror(errno));
		goto close_fd;
	}
	e->image_mapped = 1;
	close(fd);
	ret = elf_setup(e, err, errlen);
	if (ret)
		goto close_elf;
	*out = e;
	return 0;

close_fd:
	close(fd);
close_elf:
	uwprof_elf_close(e);
	return ret;
}

int uwprof_elf_open_mem(const void *image, size_t size, const char *name,
			struct uwprof_elf **out, char *err, size_t errlen)
{
	struct uwprof_elf *e;
	int ret;

	*out = NULL;
	if (size < sizeof(Elf64_Ehdr))
		return elf_fail(err, errlen, -ENOEXEC,
				"%s: ELF header at offset 0: image too short (%zu bytes)",
				name, size);
	e = calloc(1, sizeof(*e));
	if (!e)
		return elf_fail(err, errlen, -ENOMEM, "%s: out of memory", name);
	e->path = strdup(name);
	/* A private copy, 8-byte aligned, so libelf can use it in place. */
	e->image = malloc(size);
	if (!e->path || !e->image) {
		uwprof_elf_close(e);
		return elf_fail(err, errlen, -ENOMEM, "%s: out of memory", name);
	}
	memcpy(e->image, image, size);
	e->image_size = size;
	ret = elf_setup(e, err, errlen);
	if (ret) {
		uwprof_elf_close(e);
		return ret;
	}
	*out = e;
	return 0;
}

void uwprof_elf_hash(const struct uwprof_elf *e, uint8_t out[20])
{
	const uint8_t *p = e->image;
	uint64_t h1 = 0x9e3779b97f4a7c15ULL, h2 = 0xc2b2ae3d27d4eb4fULL, w;
	uint32_t n32 = (uint32_t)e->image_size;
	size_t i, n = e->image_size;

	for (i = 0; i + 8 <= n; i += 8) {
		memcpy(&w, p + i, 8);
		h1 = (h1 ^ w) * 0x100000001b3ULL;
		h2 = (h2 + w) * 0xff51afd7ed558ccdULL;
		h2 ^= h2 >> 29;
	}
	for (; i < n; i++) {
		h1 = (h1 ^ p[i]) * 0x100000001b3ULL;
		h2 = (h2 + p[i]) * 0xff51afd7ed558ccdULL;
	}
	memcpy(out, &h1, 8);
	memcpy(out + 8, &h2, 8);
	memcpy(out + 16, &n32, 4);
}

int uwprof_elf_vaddr(const struct uwprof_elf *e, uint64_t addr,
		     const uint8_t **p, size_t *avail)
{
	size_t i, n;
	GElf_Phdr ph;

	if (elf_getphdrnum(e->elf, &n))
		return -ENOENT;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(e->elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (addr < ph.p_vaddr || addr - ph.p_vaddr >= ph.p_filesz)
			continue;
		if (ph.p_offset > e->image_size ||
		    ph.p_filesz > e->image_size - ph.p_offset)
			return -ENOENT;
		*p = (const uint8_t *)e->image + ph.p_offset +
		     (addr - ph.p_vaddr);
		*avail = ph.p_filesz - (addr - ph.p_vaddr);
		return 0;
	}
	return -ENOENT;
}

/* Documented in elf_file.h. */
int uwprof_elf_find_debug(const struct uwprof_elf *e,
			  int (*accept)(const struct uwprof_elf *e,
					const char *cand,
					struct uwprof_elf **out),
			  struct uwprof_elf **out)
{
	char cand[PATH_MAX * 2], *real, *slash;
	const char *root = getenv("UWPROF_DEBUG_DIR");
	size_t i, n;

	if (!root || !*root)
		root = "/usr/lib/debug";
	if (e->build_id_size >= 2) {
		n = snprintf(cand, sizeof(cand), "%s/.build-id/%02x/", root,
			     e->build_id[0]);
		for (i = 1; i < e->build_id_size && n + 3 < sizeof(cand); i++)
			n += snprintf(cand + n, sizeof(cand) - n, "%02x",
				      e->build_id[i]);
		snprintf(cand + n, sizeof(cand) - n, ".debug");
		if (!accept(e, cand, out))
			return 0;
	}
	if (!e->has_debuglink || strchr(e->debuglink, '/'))
		return -ENOENT;
	real = realpath(e->path, NULL);
	if (!real)
		return -ENOENT;
	slash = strrchr(real, '/');
	if (!slash) {
		free(real);
		return -ENOENT;
	}
	*slash = 0;
	for (i = 0; i < 3; i++) {
		if (i == 0) {
			/* The object itself is not its own debug file. */
			if (!strcmp(slash + 1, e->debuglink))
				continue;
			snprintf(cand, sizeof(cand), "%s/%s", real, e->debuglink);
		} else if (i == 1) {
			snprintf(cand, sizeof(cand), "%s/.debug/%s", real,
				 e->debuglink);
		} else {
			snprintf(cand, sizeof(cand), "%s%s/%s", root, real,
				 e->debuglink);
		}
		if (!accept(e, cand, out)) {
			free(real);
			return 0;
		}
	}
	free(real);
	return -ENOENT;
}

/*
 * The program headers read directly, without libelf and without mapping
 * the file: 'uwprof record' asks this of every object a process maps, and
 * of the vDSO image copied from it, before deciding whether to compile it.
 */
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
	struct elf_src s = { .fd = open(path, O_RDONLY | O_CLOEXEC) };
	struct interp_buf b = { .out = out, .len = len };
	int ret;

	if (s.fd < 0)
		return -errno;
	ret = raw_phdrs(&s, NULL, interp_phdr, &b);
	close(s.fd);
	return ret == 1 ? 0 : ret ? ret : -ENOENT;
}
