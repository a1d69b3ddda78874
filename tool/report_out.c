// SPDX-License-Identifier: GPL-2.0
/*
 * The reports' output files, all or nothing (see report_model.h): written
 * to a temporary name in the same directory and renamed at the commit,
 * so a failed write never leaves a partial file under the final name; and
 * the check that standard output took everything. Called from the report
 * and script commands and the agent.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report_model.h"

int uwprof_rep_out_open(struct uwprof_rep_out *o, const char *path,
			mode_t mode, char *msg, size_t msglen)
{
	int fd, err;

	o->f = NULL;
	err = uwprof_afile_open(&o->file, path, mode);
	if (err == -ENOMEM) {
		snprintf(msg, msglen, "%s: out of memory", path);
		return err;
	}
	if (err) {
		snprintf(msg, msglen,
			 "%s: cannot create a temporary file next to it: %s",
			 path, strerror(-err));
		return err;
	}
	/* The stream gets its own descriptor: the commit syncs and closes ours. */
	fd = dup(o->file.fd);
	o->f = fd < 0 ? NULL : fdopen(fd, "w");
	if (!o->f) {
		err = errno;
		if (fd >= 0)
			close(fd);
		uwprof_afile_abort(&o->file);
		snprintf(msg, msglen, "%s: %s", path, strerror(err));
		return -err;
	}
	return 0;
}

int uwprof_rep_out_commit(struct uwprof_rep_out *o, char *msg, size_t msglen)
{
	char *path = strdup(o->file.path);
	int err = 0;

	if (fflush(o->f) || ferror(o->f))
		err = errno ? errno : EIO;
	if (fclose(o->f) && !err)
		err = errno ? errno : EIO;
	o->f = NULL;
	if (err)
		uwprof_afile_abort(&o->file);
	else
		err = -uwprof_afile_commit(&o->file);
	if (err)
		snprintf(msg, msglen, "%s: write failed, nothing written: %s",
			 path ? path : "output", strerror(err));
	free(path);
	return -err;
}

void uwprof_rep_out_abort(struct uwprof_rep_out *o)
{
	if (o->f)
		fclose(o->f);
	o->f = NULL;
	uwprof_afile_abort(&o->file);
}

int uwprof_rep_stdout_done(const char *what, char *msg, size_t msglen)
{
	int err = 0;

	if (fflush(stdout) || ferror(stdout))
		err = errno ? errno : EIO;
	if (err) {
		snprintf(msg, msglen, "%s: writing to standard output: %s",
			 what, strerror(err));
		return -err;
	}
	return 0;
}
