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

#include <gelf.h>

#define UWPROF_ELF_MAX_BUILD_ID	64
#define UWPROF_ELF_MAX_EXEC	16
#define UWPROF_ELF_MAX_PLT	4

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
	void		*image;		/* mmap'd file or private copy */
	size_t		image_size;
	int		image_mapped;	/* 1: munmap, 0: free */
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
 * 'err' (see table.h for the codes).
 */
int uwprof_elf_open(const char *path, struct uwprof_elf **out,
		    char *err, size_t errlen);
int uwprof_elf_open_mem(const void *image, size_t size, const char *name,
			struct uwprof_elf **out, char *err, size_t errlen);
void uwprof_elf_close(struct uwprof_elf *e);

/*
 * The separate debug file of 'e': by build-id under the debug directory
 * ($UWPROF_DEBUG_DIR, else /usr/lib/debug), then by .gnu_debuglink next to
 * the object, in its .debug/, and under the debug directory. 'accept' is
 * asked about each candidate in that order; the first it returns 0 for is
 * the answer. Returns 0 or -ENOENT.
 */
int uwprof_elf_find_debug(const struct uwprof_elf *e,
			  int (*accept)(const struct uwprof_elf *e,
					const char *cand,
					struct uwprof_elf **out),
			  struct uwprof_elf **out);

/* The 64-bit hash of the whole image, for objects without a build-id. */
void uwprof_elf_hash(const struct uwprof_elf *e, uint8_t out[20]);

/* Whether [lo, hi) lies in one executable segment (always, without phdrs). */
int uwprof_elf_in_exec(const struct uwprof_elf *e, uint64_t lo, uint64_t hi);

/*
 * Bytes of the file image at virtual address 'addr' (through PT_LOAD), and
 * how many follow in the same segment. Returns 0 or -ENOENT.
 */
int uwprof_elf_vaddr(const struct uwprof_elf *e, uint64_t addr,
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

/* From a file or an in-memory image. Returns 0, -ENOEXEC or -errno. */
int uwprof_elf_info_file(const char *path, struct uwprof_elf_info *info);
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
