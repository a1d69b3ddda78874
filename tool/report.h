/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The 'uwprof report' subcommand: the top-functions table, and the folded,
 * pprof and SVG flamegraph outputs of a profile file.
 */
#ifndef UWPROF_TOOL_REPORT_H
#define UWPROF_TOOL_REPORT_H

/* argv[0] is "report"; returns the process exit code. */
int uwprof_cmd_report(int argc, char **argv);

#endif /* UWPROF_TOOL_REPORT_H */
