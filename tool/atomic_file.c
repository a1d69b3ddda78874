// SPDX-License-Identifier: GPL-2.0
/*
 * Whole-or-nothing output files (see atomic_file.h). Used by the profile
 * writer, the report outputs and the table cache.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"

static void afile_release(struct uwprof_afile *a)
{
	free(a->path);
	free(a->tmp);
	a->path = NULL;
	a->tmp = NULL;
	a->fd = -1;
}

int uwprof_afile_open(struct uwprof_afile *a, const char *path, mode_t mode)
{
	char *dir_buf, *base_buf;
	mode_t mask;
	int ret;

	a->fd = -1;
	a->tmp = NULL;
	a->path = strdup(path);
	dir_buf = strdup(path);
	base_buf = strdup(path);
	if (!a->path || !dir_buf || !base_buf) {
		ret = -ENOMEM;
		goto out_free;
	}
	/* Hidden, so a directory listing taken meanwhile does not show it. */
	if (asprintf(&a->tmp, "%s/.%s.XXXXXX", dirname(dir_buf),
		     basename(base_buf)) < 0) {
		a->tmp = NULL;
		ret = -ENOMEM;
		goto out_free;
	}
	a->fd = mkostemp(a->tmp, O_CLOEXEC);
	if (a->fd < 0) {
		ret = -errno;
		goto out_free;
	}
	/* mkostemp makes it 0600 whatever the umask. */
	mask = umask(0);
	umask(mask);
	if (fchmod(a->fd, mode & ~mask)) {
		ret = -errno;
		close(a->fd);
		unlink(a->tmp);
		goto out_free;
	}
	free(dir_buf);
	free(base_buf);
	return 0;

out_free:
	free(dir_buf);
	free(base_buf);
	afile_release(a);
	return ret;
}

/* Best effort: once the rename is done, readers see the file anyway. */
static void afile_sync_dir(const char *path)
{
	char *dup = strdup(path);
	int fd;

	if (!dup)
		return;
	fd = open(dirname(dup), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(dup);
	if (fd >= 0) {
		(void)fsync(fd);
		close(fd);
	}
}

int uwprof_afile_commit(struct uwprof_afile *a)
{
	int ret = 0;

	if (fsync(a->fd))
		ret = -errno;
	if (close(a->fd) && !ret)
		ret = -errno;
	a->fd = -1;
	if (!ret && rename(a->tmp, a->path))
		ret = -errno;
	if (ret)
		unlink(a->tmp);
	else
		afile_sync_dir(a->path);
	afile_release(a);
	return ret;
}

void uwprof_afile_abort(struct uwprof_afile *a)
{
	if (a->fd >= 0)
		close(a->fd);
	if (a->tmp)
		unlink(a->tmp);
	afile_release(a);
}
