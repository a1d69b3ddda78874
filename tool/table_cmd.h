/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The 'uwprof table' subcommand, as the dispatcher in uwprof.c sees it.
 */
#ifndef UWPROF_TOOL_TABLE_CMD_H
#define UWPROF_TOOL_TABLE_CMD_H

/* argv[0] is "table"; returns the process exit code. */
int uwprof_cmd_table(int argc, char **argv);

#endif /* UWPROF_TOOL_TABLE_CMD_H */
