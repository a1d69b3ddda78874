/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Symbols of JIT-compiled code, as runtimes publish them for perf: the
 * text file /tmp/perf-PID.map ("START SIZE name" per line, hex numbers;
 * Node.js --perf-basic-prof, the JVM's perf-map agents, Python 3.12's
 * -X perf) and perf's jitdump file jit-PID.dump (JIT_CODE_LOAD records).
 * Both files grow while the process runs, so the readers resume where the
 * last call stopped and take only whole lines or records: a partial last
 * one is read again next time. The recorder reads them; the reporting side
 * looks addresses up in a uwprof_jitsyms table. No global state.
 */
#ifndef UWPROF_TOOL_JITMAP_H
#define UWPROF_TOOL_JITMAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* Longest name kept; longer perf-map lines are skipped whole. */
#define UWPROF_JIT_NAME_MAX	1024

/*
 * Called per symbol read. 'name' is 'len' bytes, not NUL-terminated.
 * Returning non-zero stops the read (the symbol counts as consumed).
 */
typedef int (*uwprof_jit_emit_fn)(void *arg, uint64_t start, uint64_t size,
				  const char *name, size_t len);

/* Where a reader stands in one file. Zero-initialised: from the start. */
struct uwprof_jit_pos {
	uint64_t	off;		/* bytes consumed */
	uint64_t	bad;		/* malformed lines or records skipped */
	int		skipping;	/* perf map: inside an overlong line */
	int		dump_ok;	/* jitdump: header checked */
	int		dump_swap;	/* jitdump: written with the other byte order */
};

/*
 * Reads the symbols added to a perf map since 'pos', through 'fd' (open
 * for reading; the file offset is not used). A file now shorter than
 * what was read was rewritten: it is read again from the start. Stops after 'max_bytes' new
 * bytes (0: no limit) or when 'emit' says so. Returns the number of
 * symbols emitted, or a negative errno from read.
 */
long uwprof_jit_perfmap_read(int fd, struct uwprof_jit_pos *pos,
			     uint64_t max_bytes, uwprof_jit_emit_fn emit,
			     void *arg);

/*
 * The same for a jitdump file: the header is checked first (magic, either
 * byte order; -EINVAL when it is not a jitdump), then JIT_CODE_LOAD
 * records give symbols; the other record types are skipped (a
 * JIT_CODE_MOVE carries no name: moved code stays unnamed). A record size
 * that cannot be right ends the read with -EINVAL when nothing was read.
 */
long uwprof_jit_dump_read(int fd, struct uwprof_jit_pos *pos,
			  uint64_t max_bytes, uwprof_jit_emit_fn emit,
			  void *arg);

/* What a process's symbol files are checked against. */
struct uwprof_jit_owner {
	uid_t		uid;		/* the owner of /proc/PID */
	time_t		born;		/* its start, CLOCK_REALTIME s; 0: unknown */
};

/*
 * Reads them while the process lives, so that its files can still be
 * opened safely after it exited. Returns 0 or -ESRCH.
 */
int uwprof_jit_owner_read(pid_t pid, struct uwprof_jit_owner *o);

/*
 * Opens /tmp/perf-PID.map of 'pid' when it is a regular file owned by the
 * process's owner (or root), as perf requires: another user's file must
 * not name a process's code. Returns the fd, or a negative errno: -ENOENT
 * (none yet), -EPERM (not a regular file of the owner or root, or a
 * symlink), -ESTALE (last written before the process started: left by an
 * earlier process with the same pid).
 */
int uwprof_jit_perfmap_open(pid_t pid, const struct uwprof_jit_owner *o);

/* The same checks for a jitdump file found in the process's mappings. */
int uwprof_jit_dump_open(const char *path, const struct uwprof_jit_owner *o);

/* Whether a mapping's path names perf's jitdump file of 'pid'. */
int uwprof_jit_is_dump(pid_t pid, const char *path);

/* ---------------------------------------------------------------------
 * Lookup table: one per process, from symbols in the order they were
 * published. A later symbol overlapping an earlier one wins (code was
 * freed and the range reused).
 * ------------------------------------------------------------------- */

struct uwprof_jit_sym {
	uint64_t	start;
	uint64_t	size;
	const char	*name;		/* owned by the table's user */
	uint32_t	len;
	uint32_t	seq;		/* publication order */
};

struct uwprof_jitsyms {
	struct uwprof_jit_sym *v;	/* by start once sorted */
	uint64_t	*reach;		/* max end of v[0..i], once sorted */
	size_t		n;
	size_t		cap;
	int		sorted;
};

/* Returns 0 or -ENOMEM; a symbol of size 0 is ignored. */
int uwprof_jitsyms_add(struct uwprof_jitsyms *t, uint64_t start,
		       uint64_t size, const char *name, uint32_t len);

/*
 * The newest symbol covering 'addr', or NULL. Sorts on first use (and
 * then returns NULL when out of memory).
 */
const struct uwprof_jit_sym *uwprof_jitsyms_find(struct uwprof_jitsyms *t,
						 uint64_t addr);

void uwprof_jitsyms_free(struct uwprof_jitsyms *t);

#endif /* UWPROF_TOOL_JITMAP_H */
