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
