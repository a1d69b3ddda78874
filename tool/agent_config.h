/* SPDX-License-Identifier: GPL-2.0 */
/*
 * 'uwprof agent --config FILE': the file's 'key = value' settings as
 * '--key=value' arguments ahead of the command line's (agent_config.c).
 */
#ifndef UWPROF_TOOL_AGENT_CONFIG_H
#define UWPROF_TOOL_AGENT_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct option;

struct agent_config {
	const char	*path;		/* --config's FILE; NULL: none given */
	int		argc0;		/* the command line, as given */
	char		**argv0;
	int		argc;		/* the arguments to parse: the file's, */
	char		**argv;		/* then the command line's */
	int		nr_file;	/* argv[1..nr_file] are the file's */
	char		**file_args;	/* malloc'd '--key=value' */
	unsigned int	*lines;		/* the line of each */
	char		**own_argv;	/* argv when built here, else NULL */
	char		*text;		/* the file */
};

/*
 * Finds --config in argv (parsed with shortopts and opts, which must hold
 * a "config" option) and reads the file. Without --config, c->argc and
 * c->argv are argc and argv. 0, or -errno with err said (FILE:LINE: for
 * a line that is not a setting, or names no option that takes a value).
 */
int agent_config_load(struct agent_config *c, const char *shortopts,
		      const struct option *opts, int argc, char **argv,
		      char *err, size_t errlen);
/* "FILE:LINE: " when c->argv[argi] came from the file, else "". */
const char *agent_config_where(const struct agent_config *c, int argi,
			       char *buf, size_t len);
void agent_config_free(struct agent_config *c);
/* 1 when the files of 'a' and 'b' set 'key' to the same values in order. */
int agent_config_same(const struct agent_config *a,
		      const struct agent_config *b, const char *key);

/*
 * Option values as the file and the command line spell them: a SIZE in
 * bytes or with a K, M or G suffix (powers of 1024); a GROUP by name or
 * number. 0, or -1 when the value is not one.
 */
int agent_config_size(const char *s, uint64_t *out);
int agent_config_group(const char *v, gid_t *gid);

#endif
