/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The 'uwprof script' subcommand: every sample as text in perf-script's
 * layout, for tools that read 'perf script' output.
 */
#ifndef UWPROF_TOOL_SCRIPT_H
#define UWPROF_TOOL_SCRIPT_H

/* argv[0] is "script"; returns the process exit code. */
int uwprof_cmd_script(int argc, char **argv);

#endif /* UWPROF_TOOL_SCRIPT_H */
