/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Opening files that an untrusted user names or controls (the objects in
 * /proc/PID/maps, their separate debug files, the objects a profile names)
 * for a reader that may run as root. The user can swap such a path for a
 * FIFO, a device node or a symlink between our look and our open: a plain
 * open() would then hang on the FIFO, run a driver's open(), or read some
 * other file. No global state; called from elf_file.c and procmaps.c.
 */
#ifndef UWPROF_TOOL_FILE_OPEN_H
#define UWPROF_TOOL_FILE_OPEN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Refuse a symlink in any component (openat2 RESOLVE_NO_SYMLINKS). */
#define UWPROF_FILE_NOFOLLOW	1u
/* Compare only the inode number (see struct uwprof_file_want). */
#define UWPROF_FILE_INO_ONLY	2u

/*
 * The file a caller expects: the device and inode /proc/PID/maps shows.
 * With UWPROF_FILE_INO_ONLY the device is not compared: through
 * /proc/PID/map_files the kernel itself resolves the mapping's file, and
 * stat() reports another device than maps does on btrfs subvolumes.
 */
struct uwprof_file_want {
	uint32_t	dev_major, dev_minor;
	uint64_t	ino;
};

/*
 * Opens 'path' read-only: the path is resolved to an O_PATH descriptor
 * (which opens nothing: no FIFO wait, no driver call), that inode must be a
 * regular file (and 'want''s, when not NULL), and only then is it opened
 * for reading, through /proc/self/fd, non-blocking. Returns the descriptor,
 * or a negative errno with one line naming the path in 'err':
 *   -ELOOP	a symlink, with UWPROF_FILE_NOFOLLOW
 *   -ENOEXEC	not a regular file (FIFO, device, directory, socket)
 *   -ESTALE	a regular file, but not the inode 'want' names
 *   other	from open() or fstat()
 * 'st' (may be NULL) gets the file's stat.
 */
int uwprof_file_open(const char *path, unsigned int flags,
		     const struct uwprof_file_want *want, struct stat *st,
		     char *err, size_t errlen);

/*
 * Opens a separate debug file found for an object owned by 'owner'. Where
 * the candidate's directory is one only root can change (every directory
 * from / down root's, writable by no group or other user, as
 * /usr/lib/debug), symlinks are followed, as /usr/lib/debug/.build-id
 * needs, but the file reached must lie in such a directory too. Elsewhere
 * (the object's own directory, which its owner controls) a symlink in the
 * path is refused: the owner could point it at a file only root may read.
 * Either way the file must be the owner's or ours, or root's (in a
 * directory others control, root's only when everyone may read it: a hard
 * link). Returns the descriptor as uwprof_file_open() does, or:
 *   -ELOOP	a symlink where a user could have planted it
 *   -EPERM	another user's file, or one reached outside root's
 *		directories
 */
int uwprof_file_open_debug(const char *path, uid_t owner, struct stat *st,
			   char *err, size_t errlen);

#endif /* UWPROF_TOOL_FILE_OPEN_H */
