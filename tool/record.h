/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The 'uwprof record' and 'uwprof status' subcommands, as the dispatcher
 * in uwprof.c sees them.
 */
#ifndef UWPROF_TOOL_RECORD_H
#define UWPROF_TOOL_RECORD_H

#include "exit_status.h"

/* The spelling status.c still uses for enum uwprof_exit_status. */
#define UWPROF_REC_EXIT_OK		UWPROF_EX_OK
#define UWPROF_REC_EXIT_ERROR		UWPROF_EX_ERROR
#define UWPROF_REC_EXIT_USAGE		UWPROF_EX_USAGE
#define UWPROF_REC_EXIT_NO_MODULE	UWPROF_EX_NO_MODULE
#define UWPROF_REC_EXIT_PERM		UWPROF_EX_PERM

/* argv[0] is "record"; returns the process exit code. */
int uwprof_cmd_record(int argc, char **argv);

/* argv[0] is "status"; returns 0 when the module answers, else as record. */
int uwprof_cmd_status(int argc, char **argv);

#endif /* UWPROF_TOOL_RECORD_H */
