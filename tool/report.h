/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The 'uwprof report' subcommand: the top-functions table, and the folded,
 * pprof and SVG flamegraph outputs of a profile file.
 */
#ifndef UWPROF_TOOL_REPORT_H
#define UWPROF_TOOL_REPORT_H

struct uwprof_rep;

/* argv[0] is "report"; returns the process exit code. */
int uwprof_cmd_report(int argc, char **argv);

/*
 * For the commands that read a profile: loads it into 'r' and prints its
 * notes, warnings and, on failure, its error. Returns 0, or the exit status to
 * leave with (r already freed).
 */
int uwprof_cmd_load_profile(struct uwprof_rep *r, const char *input, int flags);

#endif /* UWPROF_TOOL_REPORT_H */
