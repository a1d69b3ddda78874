// SPDX-License-Identifier: GPL-2.0
/*
 * ELF owner object for the table compiler: reads the file through libelf
 * with pread (ELF_C_READ; never mapped, so a file cut short under us is a
 * read error, not SIGBUS) or copies an image, checks class, byte order,
 * machine and type, and records the few things the compiler needs: the
 * CFI sections (decompressed, within the limits of elf_file.h), the
 * build-id, the .gnu_debuglink, and the executable segments. Every offset
 * is checked against the size the file had when opened before libelf is
 * asked to read it; nothing here trusts an offset.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/uwprof.h>

#include "elf_file.h"
#include "file_open.h"

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
	if (e->fd >= 0)
		close(e->fd);
	free(e->image);
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

/* Whether [off, off + size) lies in the file as it was when opened. */
static int elf_in_file(const struct uwprof_elf *e, uint64_t off, uint64_t size)
{
	return off <= e->image_size && size <= e->image_size - off &&
	       size <= UWPROF_ELF_MAX_SECTION;
}

/* A section libelf may read whole: inside the file, within the limit. */
static int elf_sec_fits(const struct uwprof_elf *e, const GElf_Shdr *sh,
			const char *name, char *err, size_t errlen)
{
	if (sh->sh_type == SHT_NOBITS || elf_in_file(e, sh->sh_offset, sh->sh_size))
		return 0;
	return elf_fail(err, errlen, sh->sh_size > UWPROF_ELF_MAX_SECTION ? -EFBIG : -EINVAL,
			"%s: %s at file offset 0x%llx: %llu bytes run past the end of the file (%zu bytes) or the limit of %llu",
			e->path, name, (unsigned long long)sh->sh_offset,
			(unsigned long long)sh->sh_size, e->image_size,
			UWPROF_ELF_MAX_SECTION);
}

/*
 * The size a compressed section says it inflates to, checked against the
 * limits (elf_file.h) before libelf allocates that much: a few KiB of zlib
 * can declare, and hold, gigabytes.
 */
static int elf_inflate_ok(struct uwprof_elf *e, Elf_Scn *scn,
			  const GElf_Shdr *sh, const char *name, int gnu,
			  char *err, size_t errlen)
{
	uint64_t want = 0, max;
	Elf_Data *raw;
	GElf_Chdr ch;
	int i;

	if (gnu) {
		raw = elf_rawdata(scn, NULL);
		/* "ZLIB" and the size, big-endian; else libelf refuses it. */
		if (!raw || !raw->d_buf || raw->d_size < 12 ||
		    memcmp(raw->d_buf, "ZLIB", 4))
			return 0;
		for (i = 0; i < 8; i++)
			want = want << 8 | ((const uint8_t *)raw->d_buf)[4 + i];
	} else {
		if (!gelf_getchdr(scn, &ch))
			return 0;
		want = ch.ch_size;
	}
	max = sh->sh_size > UWPROF_ELF_MAX_INFLATED / UWPROF_ELF_INFLATE_RATIO ?
	      UWPROF_ELF_MAX_INFLATED : sh->sh_size * UWPROF_ELF_INFLATE_RATIO;
	if (want > max)
		return elf_fail(err, errlen, -EFBIG,
				"%s: %s at file offset 0x%llx: declares %llu bytes decompressed from %llu, over the limit of %llu (%dx, at most %llu)",
				e->path, name, (unsigned long long)sh->sh_offset,
				(unsigned long long)want,
				(unsigned long long)sh->sh_size,
				(unsigned long long)max, UWPROF_ELF_INFLATE_RATIO,
				UWPROF_ELF_MAX_INFLATED);
	if (want > UWPROF_ELF_MAX_INFLATED_ALL - e->inflated)
		return elf_fail(err, errlen, -EFBIG,
				"%s: %s at file offset 0x%llx: the object's compressed sections declare more than %llu bytes decompressed",
				e->path, name, (unsigned long long)sh->sh_offset,
				UWPROF_ELF_MAX_INFLATED_ALL);
	e->inflated += want;
	return 0;
}

static int elf_sec_load(struct uwprof_elf *e, Elf_Scn *scn, GElf_Shdr *sh,
			const char *name, int gnu_compressed,
			struct uwprof_elf_sec *sec, char *err, size_t errlen)
{
	Elf_Data *d;
	int ret;

	if (sh->sh_type == SHT_NOBITS)
		return 0;
	ret = elf_sec_fits(e, sh, name, err, errlen);
	if (!ret && ((sh->sh_flags & SHF_COMPRESSED) || gnu_compressed))
		ret = elf_inflate_ok(e, scn, sh, name,
				     !(sh->sh_flags & SHF_COMPRESSED), err,
				     errlen);
	if (ret)
		return ret;
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
		} else if (sh.sh_type == SHT_NOTE && !e->build_id_size &&
			   !elf_sec_fits(e, &sh, name, NULL, 0)) {
			d = elf_getdata(scn, NULL);
			if (d && d->d_buf)
				elf_take_build_id(e, d);
		} else if (!strcmp(name, ".gnu_debuglink") &&
			   sh.sh_type != SHT_NOBITS &&
			   !elf_sec_fits(e, &sh, name, NULL, 0)) {
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

/* .eh_frame_hdr through PT_GNU_EH_FRAME, for objects without sections. */
static void elf_hdr_from_phdr(struct uwprof_elf *e, const GElf_Phdr *ph)
{
	Elf_Data *d;

	if (!ph->p_filesz || !elf_in_file(e, ph->p_offset, ph->p_filesz))
		return;
	d = elf_getdata_rawchunk(e->elf, (int64_t)ph->p_offset, ph->p_filesz,
				 ELF_T_BYTE);
	if (!d || !d->d_buf)
		return;
	e->eh_frame_hdr.data = d->d_buf;
	e->eh_frame_hdr.size = ph->p_filesz;
	e->eh_frame_hdr.addr = ph->p_vaddr;
	e->eh_frame_hdr.offset = ph->p_offset;
	e->eh_frame_hdr.name = ".eh_frame_hdr";
	e->eh_frame_hdr.present = 1;
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
		if (ph.p_type == PT_NOTE && !e->build_id_size && ph.p_filesz &&
		    elf_in_file(e, ph.p_offset, ph.p_filesz)) {
			d = elf_getdata_rawchunk(e->elf, ph.p_offset,
						 ph.p_filesz, ELF_T_NHDR);
			if (d)
				elf_take_build_id(e, d);
		}
		if (ph.p_type == PT_GNU_EH_FRAME && !e->eh_frame_hdr.present)
			elf_hdr_from_phdr(e, &ph);
	}
	return 0;
}

int uwprof_elf_each_sym(const struct uwprof_elf *e,
			int (*fn)(void *arg, const GElf_Sym *sym,
				  const char *name),
			void *arg)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Sym sym;
	Elf_Data *d;
	size_t i, n;
	int ret;

	while ((scn = elf_nextscn(e->elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (i = 0; i < n; i++) {
			if (!gelf_getsym(d, (int)i, &sym) ||
			    sym.st_shndx == SHN_UNDEF)
				continue;
			ret = fn(arg, &sym,
				 elf_strptr(e->elf, sh.sh_link, sym.st_name));
			if (ret)
				return ret;
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
	e->elf = e->image ? elf_memory(e->image, e->image_size) :
			    elf_begin(e->fd, ELF_C_READ, NULL);
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

/*
 * Says that the file shrank, when it did: libelf then only reports a read
 * error, and what happened is worth one clear line.
 */
static int elf_shrank(struct uwprof_elf *e, int ret, char *err, size_t errlen)
{
	struct stat st;

	if (e->fd < 0 || fstat(e->fd, &st) ||
	    (uint64_t)st.st_size >= e->image_size)
		return ret;
	return elf_fail(err, errlen, -EIO,
			"%s: the file shrank from %zu to %lld bytes while being read",
			e->path, e->image_size, (long long)st.st_size);
}

int uwprof_elf_open_fd(int fd, const char *name, struct uwprof_elf **out,
		       char *err, size_t errlen)
{
	struct uwprof_elf *e;
	struct stat stb;
	int ret;

	*out = NULL;
	if (fstat(fd, &stb))
		return elf_fail(err, errlen, -errno, "%s: %s", name,
				strerror(errno));
	if (!S_ISREG(stb.st_mode))
		return elf_fail(err, errlen, -ENOEXEC, "%s: not a regular file",
				name);
	if (stb.st_size < (off_t)sizeof(Elf64_Ehdr))
		return elf_fail(err, errlen, -ENOEXEC,
				"%s: ELF header at offset 0: file too short (%lld bytes)",
				name, (long long)stb.st_size);
	e = calloc(1, sizeof(*e));
	if (!e)
		return elf_fail(err, errlen, -ENOMEM, "%s: out of memory", name);
	e->path = strdup(name);
	/* Ours: libelf reads through it until uwprof_elf_close(). */
	e->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (!e->path || e->fd < 0) {
		ret = elf_fail(err, errlen, e->path ? -errno : -ENOMEM,
			       "%s: %s", name, e->path ? strerror(errno) :
			       "out of memory");
		uwprof_elf_close(e);
		return ret;
	}
	e->image_size = (size_t)stb.st_size;
	e->owner = stb.st_uid;
	ret = elf_setup(e, err, errlen);
	if (ret) {
		ret = elf_shrank(e, ret, err, errlen);
		uwprof_elf_close(e);
		return ret;
	}
	*out = e;
	return 0;
}

int uwprof_elf_open(const char *path, struct uwprof_elf **out,
		    char *err, size_t errlen)
{
	int fd, ret;

	*out = NULL;
	fd = uwprof_file_open(path, 0, NULL, NULL, err, errlen);
	if (fd < 0)
		return fd;
	ret = uwprof_elf_open_fd(fd, path, out, err, errlen);
	close(fd);
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
	e->fd = -1;
	e->owner = geteuid();
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

int uwprof_elf_pread(const struct uwprof_elf *e, void *buf, size_t n,
		     uint64_t off)
{
	size_t got = 0;
	ssize_t r;

	if (off > e->image_size || n > e->image_size - off)
		return -EIO;
	if (e->image) {
		memcpy(buf, (const uint8_t *)e->image + off, n);
		return 0;
	}
	while (got < n) {
		r = pread(e->fd, (uint8_t *)buf + got, n - got,
			  (off_t)(off + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -EIO;
		got += (size_t)r;
	}
	return 0;
}

/* Two 64-bit lanes over a byte stream; all but the last call take n % 8 == 0. */
struct elf_hash {
	uint64_t	h1, h2;
};

static void elf_hash_init(struct elf_hash *h)
{
	h->h1 = 0x9e3779b97f4a7c15ULL;
	h->h2 = 0xc2b2ae3d27d4eb4fULL;
}

static void elf_hash_add(struct elf_hash *h, const void *buf, size_t n)
{
	const uint8_t *p = buf;
	uint64_t w;
	size_t i;

	for (i = 0; i + 8 <= n; i += 8) {
		memcpy(&w, p + i, 8);
		h->h1 = (h->h1 ^ w) * 0x100000001b3ULL;
		h->h2 = (h->h2 + w) * 0xff51afd7ed558ccdULL;
		h->h2 ^= h->h2 >> 29;
	}
	for (; i < n; i++) {
		h->h1 = (h->h1 ^ p[i]) * 0x100000001b3ULL;
		h->h2 = (h->h2 + p[i]) * 0xff51afd7ed558ccdULL;
	}
}

int uwprof_elf_hash(const struct uwprof_elf *e, uint8_t out[20])
{
	uint32_t n32 = (uint32_t)e->image_size;
	size_t off, n, chunk = 1 << 20;
	struct elf_hash h;
	uint8_t *buf;

	buf = malloc(chunk);
	if (!buf)
		return -ENOMEM;
	elf_hash_init(&h);
	for (off = 0; off < e->image_size; off += n) {
		n = e->image_size - off < chunk ? e->image_size - off : chunk;
		if (uwprof_elf_pread(e, buf, n, off)) {
			free(buf);
			return -EIO;
		}
		elf_hash_add(&h, buf, n);
	}
	free(buf);
	memcpy(out, &h.h1, 8);
	memcpy(out + 8, &h.h2, 8);
	memcpy(out + 16, &n32, 4);
	return 0;
}

/* A section into the CFI hash: presence, name, address, size, bytes. */
static void elf_hash_sec(struct elf_hash *h, const struct uwprof_elf_sec *s)
{
	uint64_t w[3] = { (uint64_t)s->present, s->addr, s->size };

	elf_hash_add(h, w, sizeof(w));
	if (!s->present)
		return;
	if (s->name)
		elf_hash_add(h, s->name, strlen(s->name) + 1);
	if (!s->data)
		return;
	/* Whole words only until the last call: pad to 8. */
	elf_hash_add(h, s->data, s->size & ~(size_t)7);
	w[0] = 0;
	memcpy(w, s->data + (s->size & ~(size_t)7), s->size & 7);
	elf_hash_add(h, w, 8);
}

void uwprof_elf_cfi_hash(const struct uwprof_elf *e, uint8_t out[16])
{
	uint64_t w[4] = { e->arch, e->text_addr, e->got_addr, (uint64_t)e->is_go };
	struct elf_hash h;
	int i;

	elf_hash_init(&h);
	elf_hash_add(&h, w, sizeof(w));
	elf_hash_add(&h, e->exec_lo, sizeof(e->exec_lo));
	elf_hash_add(&h, e->exec_hi, sizeof(e->exec_hi));
	elf_hash_sec(&h, &e->eh_frame);
	elf_hash_sec(&h, &e->eh_frame_hdr);
	elf_hash_sec(&h, &e->debug_frame);
	for (i = 0; i < e->nr_plt; i++)
		elf_hash_sec(&h, &e->plt[i]);
	memcpy(out, &h.h1, 8);
	memcpy(out + 8, &h.h2, 8);
}

int uwprof_elf_vaddr(const struct uwprof_elf *e, uint64_t addr, size_t want,
		     const uint8_t **p, size_t *avail)
{
	uint64_t off, left;
	size_t i, n;
	GElf_Phdr ph;
	Elf_Data *d;

	if (elf_getphdrnum(e->elf, &n))
		return -ENOENT;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(e->elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (addr < ph.p_vaddr || addr - ph.p_vaddr >= ph.p_filesz)
			continue;
		off = ph.p_offset + (addr - ph.p_vaddr);
		left = ph.p_filesz - (addr - ph.p_vaddr);
		if (want && want < left)
			left = want;
		/* libelf keeps each chunk read, by offset and size, until elf_end. */
		if (ph.p_offset > e->image_size || !elf_in_file(e, off, left))
			return -ENOENT;
		d = elf_getdata_rawchunk(e->elf, (int64_t)off, left, ELF_T_BYTE);
		if (!d || !d->d_buf)
			return -ENOENT;
		*p = d->d_buf;
		*avail = left;
		return 0;
	}
	return -ENOENT;
}

/* Documented in elf_file.h. */
/* One candidate opened as file_open.h says for debug files, and offered. */
static int elf_debug_offer(const struct uwprof_elf *e, const char *cand,
			   int (*accept)(const struct uwprof_elf *e,
					 const char *cand, int fd,
					 struct uwprof_elf **out),
			   struct uwprof_elf **out)
{
	int fd = uwprof_file_open_debug(cand, e->owner, NULL, NULL, 0);
	int ret;

	if (fd < 0)
		return fd;
	ret = accept(e, cand, fd, out);
	close(fd);
	return ret;
}

int uwprof_elf_find_debug(const struct uwprof_elf *e,
			  int (*accept)(const struct uwprof_elf *e,
					const char *cand, int fd,
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
		if (!elf_debug_offer(e, cand, accept, out))
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
		if (!elf_debug_offer(e, cand, accept, out)) {
			free(real);
			return 0;
		}
	}
	free(real);
	return -ENOENT;
}
