/* SPDX-License-Identifier: GPL-2.0 */
/*
 * 'uwprof agent': its options (agent_opts.c), for agent.c.
 */
#ifndef UWPROF_TOOL_AGENT_OPTS_H
#define UWPROF_TOOL_AGENT_OPTS_H

#include <stdio.h>

#include "agent.h"

struct agent_config;
struct rec_opts;

/* The options parsed: the strings point into the agent_config's arguments. */
struct agent_opts {
	struct agent_http_opts http;
	int		socket_given, socket_opts_given;
	const char	*token_file;
	const char	*user;		/* --user: the front end's */
	const char	*allow_hosts[16];
	struct agent_out_opts out;
	int		out_given;	/* OUT_NEEDS_*: options given that need others */
	const char	*header_file;
	const char	**headers;	/* malloc'd: --push-header, then the file's */
	size_t		nr_argv_headers;
	const struct agent_config *cfg;	/* where they came from */
};

/* --config's file read (agent_config_load()): 0, or -errno with 'err'. */
int agent_opts_load(struct agent_config *cfg, int argc, char **argv,
		    char *err, size_t errlen);
void agent_opts_usage(FILE *f);
/* Returns -1 on a usage error (message printed), 1 for --help, 0 ok. */
int agent_opts_parse(struct rec_opts *o, struct agent_opts *a,
		     const struct agent_config *cfg);
/* The push's headers, read after the fork: 0, or the exit status, said. */
int agent_opts_headers_read(struct agent_opts *a);
/* The headers read from the file (after argv's): wiped and freed. */
void agent_opts_free(struct agent_opts *a);
/*
 * --output-dir and --push checked before sampling starts (which compiles
 * the tables of every process first): 0, or the exit status, said.
 */
int agent_opts_out_check(const struct agent_out_opts *o);

/*
 * SIGHUP, on the recorder's thread: --config's file read again and parsed
 * with the command line as the agent was started ('run': the
 * configuration it was started with). The output's keys go to 'out'
 * (agent_out_reload(); NULL: the agent has no output), applied from the
 * end of the interval in progress; a changed key that needs a restart is
 * named in a line, and its running value stays. A file that does not
 * parse, or whose output is not usable, changes nothing: one line says
 * why (FILE:LINE when a line is at fault). 'freq': the rate sampled at.
 */
void agent_opts_reload(const struct agent_config *run, struct agent_out *out,
		       uint32_t freq);

#endif
