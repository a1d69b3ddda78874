/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The 'uwprof table' subcommand, as the dispatcher in uwprof.c sees it,
 * and the exit codes it uses (the dispatcher uses the same for usage).
 */
#ifndef UWPROF_TOOL_TABLE_CMD_H
#define UWPROF_TOOL_TABLE_CMD_H

#define UWPROF_EXIT_OK		0
#define UWPROF_EXIT_ERROR	1	/* bad input, I/O, resources */
#define UWPROF_EXIT_USAGE	2	/* bad command line */
#define UWPROF_EXIT_NO_UNWIND	3	/* the object has no unwind info */

/* argv[0] is "table"; returns the process exit code. */
int uwprof_cmd_table(int argc, char **argv);

#endif /* UWPROF_TOOL_TABLE_CMD_H */
