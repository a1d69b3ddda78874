/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Output files that appear whole or not at all: written under a temporary
 * name in the final directory, then synced and renamed over the final
 * name, and the directory synced. Every file the tool writes for later
 * use (profiles, report outputs, table-cache entries) goes through here.
 * Functions return 0 or a negative errno and print nothing: each caller
 * words its own message.
 */
#ifndef UWPROF_TOOL_ATOMIC_FILE_H
#define UWPROF_TOOL_ATOMIC_FILE_H

#include <sys/types.h>

struct uwprof_afile {
	char	*path;		/* final name */
	char	*tmp;		/* temporary name: ".NAME.XXXXXX" beside it */
	int	fd;		/* open on tmp for writing, close-on-exec */
};

/*
 * Creates the temporary file, with 'mode' less the umask as open(2) would
 * give it. On failure nothing is left behind and a->fd is -1.
 */
int uwprof_afile_open(struct uwprof_afile *a, const char *path, mode_t mode);

/*
 * fsync, close, rename onto the final name, fsync the directory. On
 * failure the temporary file is removed and a file already under the
 * final name is untouched. Releases 'a' either way.
 */
int uwprof_afile_commit(struct uwprof_afile *a);

/* Removes the temporary file and releases 'a'; the final name is untouched. */
void uwprof_afile_abort(struct uwprof_afile *a);

#endif /* UWPROF_TOOL_ATOMIC_FILE_H */
