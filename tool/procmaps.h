/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What 'uwprof record' needs to know about a live process: its executable
 * mappings from /proc/PID/maps, its name, its parent, its vDSO image, and,
 * for the ELF objects it maps, their GNU build-id and the load bias of a
 * mapping (from the program headers). No global state.
 */
#ifndef UWPROF_TOOL_PROCMAPS_H
#define UWPROF_TOOL_PROCMAPS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum uwprof_pm_kind {
	UWPROF_PM_FILE,		/* backed by a file */
	UWPROF_PM_VDSO,		/* [vdso] */
	UWPROF_PM_ANON,		/* anonymous or special executable memory */
};

struct uwprof_pm_entry {
	uint64_t	start, end, offset;
	uint32_t	dev_major, dev_minor;
	uint64_t	inode;
	int		kind;		/* enum uwprof_pm_kind */
	int		deleted;	/* "(deleted)": open through map_files */
	uint32_t	pf;		/* permissions as PF_R | PF_W | PF_X */
	char		*path;		/* file path, or the [name] */
};

struct uwprof_pm {
	struct uwprof_pm_entry *v;	/* executable mappings, sorted by start */
	size_t		n;
};

/*
 * Reads the executable, user-space mappings of 'pid' ([vsyscall] and other
 * kernel-half ranges left out). Returns 0, -ESRCH when the process is gone,
 * or another negative errno.
 */
int uwprof_pm_read(pid_t pid, struct uwprof_pm *pm);
void uwprof_pm_free(struct uwprof_pm *pm);

/* The process's comm, or "" when gone. */
void uwprof_pm_comm(pid_t pid, pid_t tid, char *buf, size_t len);

/* The parent of 'pid' from /proc/PID/stat, or -1. */
pid_t uwprof_pm_ppid(pid_t pid);

/*
 * The process's size in pages (first field of /proc/PID/statm), 0 when
 * gone: it changes with every mmap and munmap, and costs a fraction of a
 * read of /proc/PID/maps.
 */
uint64_t uwprof_pm_vsize(pid_t pid);

/*
 * A path through which the object behind 'e' can be opened: its own path
 * when it is a regular file with the mapping's inode, else
 * /proc/PID/map_files/START-END. Returns 0 or -ENOENT.
 */
int uwprof_pm_object_path(pid_t pid, const struct uwprof_pm_entry *e,
			  char *buf, size_t len);

/* Reads [start, end) of the process's memory (the vDSO). Returns 0 or -errno. */
int uwprof_pm_read_mem(pid_t pid, uint64_t start, uint64_t end, void **out);

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
 * permission matches the mapping's is the one the loader mapped there. Returns 0 or
 * -ENOENT when no PT_LOAD holds the offset.
 */
int uwprof_elf_bias(const struct uwprof_elf_info *info, uint64_t start,
		    uint64_t offset, uint32_t pf, uint64_t *bias);

#endif /* UWPROF_TOOL_PROCMAPS_H */
