/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The 'uwprof record' and 'uwprof status' subcommands, as the dispatcher
 * in uwprof.c sees them, and the exit codes 'record' documents.
 */
#ifndef UWPROF_TOOL_RECORD_H
#define UWPROF_TOOL_RECORD_H

#define UWPROF_REC_EXIT_OK		0
#define UWPROF_REC_EXIT_ERROR		1	/* other errors */
#define UWPROF_REC_EXIT_USAGE		2	/* bad command line */
#define UWPROF_REC_EXIT_NO_MODULE	3	/* /dev/uwprof missing */
#define UWPROF_REC_EXIT_PERM		4	/* not allowed to profile */
#define UWPROF_REC_EXIT_TARGET		5	/* no such process / command did not start */
#define UWPROF_REC_EXIT_OUTPUT		6	/* output not writable, disk full */
#define UWPROF_REC_EXIT_BUSY		7	/* another session is sampling */

/* argv[0] is "record"; returns the process exit code. */
int uwprof_cmd_record(int argc, char **argv);

/* argv[0] is "status"; returns 0 when the module answers, else as record. */
int uwprof_cmd_status(int argc, char **argv);

#endif /* UWPROF_TOOL_RECORD_H */
