/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The 'uwprof record' and 'uwprof status' subcommands, as the dispatcher
 * in uwprof.c sees them.
 */
#ifndef UWPROF_TOOL_RECORD_H
#define UWPROF_TOOL_RECORD_H

#include "exit_status.h"

/* argv[0] is "record"; returns the process exit code. */
int uwprof_cmd_record(int argc, char **argv);

/* argv[0] is "status"; returns 0 when the module answers, else as record. */
int uwprof_cmd_status(int argc, char **argv);

#endif /* UWPROF_TOOL_RECORD_H */
