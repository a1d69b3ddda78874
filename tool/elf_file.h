/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every ELF fact the tool reads. One owner object per ELF image, over
 * libelf: opening a file or an image in memory, checking that it is an
 * object the table compiler handles, finding its sections (decompressed
 * when needed), build-id, debug link and executable segments; called from
 * the table compiler. And, from the program headers alone, what 'uwprof
 * record' needs of the objects a process maps: identity, load bias and
 * program interpreter. No global mutable state.
 */
#ifndef UWPROF_TOOL_ELF_FILE_H
#define UWPROF_TOOL_ELF_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <gelf.h>

#define UWPROF_ELF_MAX_BUILD_ID	64
#define UWPROF_ELF_MAX_EXEC	16
#define UWPROF_ELF_MAX_PLT	4

/*
 * What one object may make the reader allocate. The file is read with
 * pread (libelf's ELF_C_READ), never mapped: a file cut short while it is
 * read fails the read instead of raising SIGBUS. A section read whole
 * (CFI, PLT, notes, code for rows without CFI) is at most MAX_SECTION
 * bytes; a compressed one (SHF_COMPRESSED or .zdebug_) may declare at most
 * INFLATE_RATIO times its stored size and MAX_INFLATED bytes, and the
 * object's together at most MAX_INFLATED_ALL. The largest CFI seen
 * (libLLVM's .eh_frame, a few MiB; .debug_frame compresses 3-6x) is far
 * below; a decompression bomb is refused before libelf allocates for it.
 */
#define UWPROF_ELF_MAX_SECTION		(1ULL << 30)
#define UWPROF_ELF_INFLATE_RATIO	64
#define UWPROF_ELF_MAX_INFLATED		(256ULL << 20)
#define UWPROF_ELF_MAX_INFLATED_ALL	(512ULL << 20)

struct uwprof_elf_sec {
	const uint8_t	*data;
	size_t		size;
	uint64_t	addr;		/* sh_addr, or the address it was found at */
	uint64_t	offset;		/* sh_offset, for messages */
	const char	*name;
	int		present;
};

struct uwprof_elf {
	char		*path;		/* for messages */
	void		*image;		/* an in-memory image's private copy */
	size_t		image_size;	/* its size, or the file's when opened */
	int		fd;		/* the file libelf reads, or -1 */
	uid_t		owner;		/* the file's owner; an image: ours */
	uint64_t	inflated;	/* bytes decompressed so far */
	Elf		*elf;
	GElf_Ehdr	ehdr;
	uint16_t	arch;		/* enum uwprof_arch */
	uint8_t		build_id[UWPROF_ELF_MAX_BUILD_ID];
	size_t		build_id_size;
	char		debuglink[256];
	uint32_t	debuglink_crc;
	int		has_debuglink;
	/* executable PT_LOAD ranges [lo, hi) */
	uint64_t	exec_lo[UWPROF_ELF_MAX_EXEC];
	uint64_t	exec_hi[UWPROF_ELF_MAX_EXEC];
	int		nr_exec;
	uint64_t	text_addr;	/* .text, base for DW_EH_PE_textrel */
	uint64_t	got_addr;	/* .got, base for DW_EH_PE_datarel */
	struct uwprof_elf_sec eh_frame;
	struct uwprof_elf_sec eh_frame_hdr;
	struct uwprof_elf_sec debug_frame;
	/* .plt, .plt.sec, .plt.got, .iplt: stubs CFI may leave out */
	struct uwprof_elf_sec plt[UWPROF_ELF_MAX_PLT];
	int		nr_plt;
	int		is_go;		/* built by the Go toolchain */
};

/*
 * Open and check an object. Returns 0 or a negative errno with one line in
 * 'err' (see table.h for the codes; -EFBIG: a section over the limits
 * above; -EIO: the file shrank while it was read). uwprof_elf_open() opens
 * 'path' through uwprof_file_open() (never a FIFO or a device);
 * uwprof_elf_open_fd() reads a descriptor the caller opened and checked
 * (it keeps a duplicate), 'name' naming it in messages.
 */
int uwprof_elf_open(const char *path, struct uwprof_elf **out,
		    char *err, size_t errlen);
int uwprof_elf_open_fd(int fd, const char *name, struct uwprof_elf **out,
		       char *err, size_t errlen);
int uwprof_elf_open_mem(const void *image, size_t size, const char *name,
			struct uwprof_elf **out, char *err, size_t errlen);
void uwprof_elf_close(struct uwprof_elf *e);

/*
 * The separate debug file of 'e': by build-id under the debug directory
 * ($UWPROF_DEBUG_DIR, else /usr/lib/debug), then by .gnu_debuglink next to
 * the object, in its .debug/, and under the debug directory. Each
 * candidate is opened with uwprof_file_open_debug() for e->owner (no
 * symlink where a user could have planted one, only root's or the owner's
 * files); 'accept' is asked about each one opened ('fd', closed after), in
 * that order; the first it returns 0 for is the answer. Returns 0 or
 * -ENOENT.
 */
int uwprof_elf_find_debug(const struct uwprof_elf *e,
			  int (*accept)(const struct uwprof_elf *e,
					const char *cand, int fd,
					struct uwprof_elf **out),
			  struct uwprof_elf **out);

/*
 * 'n' bytes of the file (or image) at offset 'off'. Returns 0, or -EIO when
 * they are not all there (the file shrank since it was opened).
 */
int uwprof_elf_pread(const struct uwprof_elf *e, void *buf, size_t n,
		     uint64_t off);

/*
 * The 128-bit hash of the whole image (and its size), for objects without
 * a build-id. Returns 0 or -EIO (see uwprof_elf_pread()).
 */
int uwprof_elf_hash(const struct uwprof_elf *e, uint8_t out[20]);

/*
 * A 128-bit hash of what the table compiler reads of 'e' besides code:
 * the CFI and PLT sections' bytes (decompressed) with their names,
 * addresses and sizes, .eh_frame_hdr, the executable ranges, the .text and
 * .got bases, the architecture. Two objects with one build-id and
 * different CFI hash differently (the table cache's key).
 */
void uwprof_elf_cfi_hash(const struct uwprof_elf *e, uint8_t out[16]);

/* Whether [lo, hi) lies in one executable segment (always, without phdrs). */
int uwprof_elf_in_exec(const struct uwprof_elf *e, uint64_t lo, uint64_t hi);

/*
 * Calls fn for every defined symbol of .symtab and .dynsym (name NULL when
 * its string cannot be read) until fn returns non-zero, and returns that;
 * 0 after the last.
 */
int uwprof_elf_each_sym(const struct uwprof_elf *e,
			int (*fn)(void *arg, const GElf_Sym *sym,
				  const char *name),
			void *arg);

/*
 * Bytes of the file at virtual address 'addr' (through PT_LOAD): 'want' of
 * them, or with 'want' 0 the rest of the segment; *avail says how many
 * there are. Read once and kept until uwprof_elf_close(). Returns 0 or
 * -ENOENT.
 */
int uwprof_elf_vaddr(const struct uwprof_elf *e, uint64_t addr, size_t want,
		     const uint8_t **p, size_t *avail);

/* What the program headers of one ELF object say. */
struct uwprof_elf_info {
	uint16_t	machine;	/* e_machine */
	uint8_t		build_id[20];
	uint32_t	build_id_size;
	int		nr_load;
	uint64_t	load_vaddr[16];
	uint64_t	load_offset[16];
	uint64_t	load_filesz[16];
	uint32_t	load_flags[16];	/* p_flags: PF_R, PF_W, PF_X */
};

/*
 * From a file (opened with uwprof_file_open()), a descriptor or an
 * in-memory image (elf_info.c). Returns 0, -ENOEXEC or -errno.
 */
int uwprof_elf_info_file(const char *path, struct uwprof_elf_info *info);
int uwprof_elf_info_fd(int fd, struct uwprof_elf_info *info);
int uwprof_elf_info_mem(const void *image, size_t size,
			struct uwprof_elf_info *info);

/*
 * The bias of a mapping at 'start' from file offset 'offset' with the
 * permissions 'pf' (PF_R, PF_W, PF_X of the mapping): object vaddr =
 * pc - bias. Linkers may start one segment in the file page where the
 * previous one ends (LLD, gold, -z noseparate-code), so the offset alone
 * can name two PT_LOADs with different biases: the one whose execute
 * permission matches the mapping's is the one the loader mapped there.
 * Returns 0 or -ENOENT when no PT_LOAD holds the offset.
 */
int uwprof_elf_bias(const struct uwprof_elf_info *info, uint64_t start,
		    uint64_t offset, uint32_t pf, uint64_t *bias);

/*
 * The program interpreter (PT_INTERP) of the executable at 'path', as a
 * string in 'out'. Returns 0, -ENOENT when it has none, -ENOEXEC or -errno.
 */
int uwprof_elf_interp(const char *path, char *out, size_t len);

#endif /* UWPROF_TOOL_ELF_FILE_H */
