/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The exit statuses of every uwprof command, as uwprof(1) EXIT STATUS
 * documents them. One set for all commands, so a number means one thing
 * wherever it can be returned; 3 is the exception the man page documents:
 * the device is missing for record and status, the object has no unwind
 * information for table.
 */
#ifndef UWPROF_TOOL_EXIT_STATUS_H
#define UWPROF_TOOL_EXIT_STATUS_H

#include <errno.h>

enum uwprof_exit_status {
	UWPROF_EX_OK		= 0,
	UWPROF_EX_ERROR		= 1,	/* bad or corrupt input, I/O, resources */
	UWPROF_EX_USAGE		= 2,	/* bad command line */
	UWPROF_EX_NO_MODULE	= 3,	/* record, status: /dev/uwprof missing */
	UWPROF_EX_NO_UNWIND	= 3,	/* table: the object has no unwind info */
	UWPROF_EX_PERM		= 4,	/* record, status: not allowed to profile */
	UWPROF_EX_TARGET	= 5,	/* no such process, command did not start */
	UWPROF_EX_OUTPUT	= 6,	/* record: output not writable, disk full */
	UWPROF_EX_BUSY		= 7,	/* record: another session is sampling */
};

/*
 * The status for a failure to open or use /dev/uwprof, given as a negative
 * errno: the same number from record, agent and status.
 */
static inline int uwprof_exit_for_errno(int e)
{
	if (e == -ENOENT || e == -ENXIO || e == -ENODEV)
		return UWPROF_EX_NO_MODULE;
	if (e == -EPERM || e == -EACCES)
		return UWPROF_EX_PERM;
	if (e == -EBUSY)
		return UWPROF_EX_BUSY;
	return UWPROF_EX_ERROR;
}

#endif /* UWPROF_TOOL_EXIT_STATUS_H */
