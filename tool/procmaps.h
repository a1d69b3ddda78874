/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What 'uwprof record' needs to know about a live process: its executable
 * mappings from /proc/PID/maps, its name, its parent, its size and its
 * vDSO image; only /proc is read here (the objects it maps: elf_file.h).
 * No global state.
 */
#ifndef UWPROF_TOOL_PROCMAPS_H
#define UWPROF_TOOL_PROCMAPS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
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

/*
 * The process's start time in clock ticks since boot (/proc/PID/stat's
 * field 22), which with the pid names one process; 0 when gone.
 */
uint64_t uwprof_pm_start_time(pid_t pid);

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
 * Opens the object behind 'e' for reading, as root may have to from a
 * process it does not trust: through /proc/PID/map_files/START-END (the
 * kernel resolves the very file mapped), or, when that range was split,
 * moved or replaced since maps was read, through the link of a mapping of
 * the same device and inode the process has now; else by its path with no
 * symlink in it; either way without blocking or opening anything but a regular
 * file, and only when it has the device and inode 'e' shows
 * (file_open.h). 'name' gets the path opened (for messages, and where a
 * debug link is looked for); 'st' its stat. Returns the descriptor, or a
 * negative errno with one line in 'err' naming the path (-ENOENT: gone).
 */
int uwprof_pm_object_open(pid_t pid, const struct uwprof_pm_entry *e,
			  char *name, size_t len, struct stat *st,
			  char *err, size_t errlen);

/* Reads [start, end) of the process's memory (the vDSO). Returns 0 or -errno. */
int uwprof_pm_read_mem(pid_t pid, uint64_t start, uint64_t end, void **out);

#endif /* UWPROF_TOOL_PROCMAPS_H */
