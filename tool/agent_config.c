// SPDX-License-Identifier: GPL-2.0
/*
 * 'uwprof agent --config FILE': the agent's options from a file, as the
 * packaged service gives them (/etc/uwprof/agent.conf).
 *
 * The file is one setting a line, 'KEY = VALUE', KEY the name of a long
 * option that takes a value (freq, cgroup, output-dir, push, socket-group,
 * ...), VALUE the rest of the line without the blanks around it (no
 * quoting: what is there is the value, '#' and spaces included). Blank
 * lines and lines whose first non-blank character is '#' are skipped. A
 * key may repeat where its option may (allow-host, push-header); otherwise
 * the last one counts, as on the command line.
 *
 * Each setting becomes '--KEY=VALUE' in an argument vector put before the
 * command line's arguments, which the agent's own parser then reads: the
 * file says nothing the command line could not, and the command line
 * overrides it. agent_config_where() names the file and line an argument
 * came from, for the parser's messages. Called from uwprof_cmd_agent()
 * before anything else happens, and again on each SIGHUP (agent_opts.c),
 * when agent_config_same() tells which keys the file changed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent_config.h"

/* A configuration file larger than this is not one. */
#define AGENT_CONFIG_MAX	(1U << 20)

static int cfg_read(const char *path, char **out, char *err, size_t errlen)
{
	struct stat st;
	size_t got = 0;
	char *b;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -errno;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    st.st_size > AGENT_CONFIG_MAX) {
		snprintf(err, errlen, "%s: not a regular file of at most %u bytes",
			 path, AGENT_CONFIG_MAX);
		close(fd);
		return -EINVAL;
	}
	b = malloc((size_t)st.st_size + 1);
	if (!b) {
		close(fd);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, b + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	b[got] = 0;
	if (strlen(b) != got) {
		snprintf(err, errlen, "%s: holds a NUL byte", path);
		free(b);
		return -EINVAL;
	}
	*out = b;
	return 0;
}

static char *cfg_trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t' || *s == '\r')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = 0;
	return s;
}

/* The option named KEY exactly, among those taking a value; NULL: none. */
static const struct option *cfg_option(const struct option *opts,
				       const char *key)
{
	for (; opts->name; opts++)
		if (!strcmp(opts->name, key))
			return opts;
	return NULL;
}

/* One line, cut in place. 0, 1 for a setting ('--KEY=VALUE' in *arg), or -1. */
static int cfg_line(struct agent_config *c, const struct option *opts,
		    char *line, unsigned int nr, char **arg, char *err,
		    size_t errlen)
{
	const struct option *o;
	char *eq, *key, *val;

	line = cfg_trim(line);
	if (!*line || *line == '#')
		return 0;
	eq = strchr(line, '=');
	if (!eq) {
		snprintf(err, errlen, "%s:%u: not 'key = value': %.80s",
			 c->path, nr, line);
		return -1;
	}
	*eq = 0;
	key = cfg_trim(line);
	val = cfg_trim(eq + 1);
	o = cfg_option(opts, key);
	if (!o || o->has_arg != required_argument ||
	    !strcmp(key, "config")) {
		snprintf(err, errlen,
			 "%s:%u: unknown key '%.80s' (the keys are the agent's options that take a value: see 'uwprof agent --help')",
			 c->path, nr, key);
		return -1;
	}
	if (!*val) {
		snprintf(err, errlen, "%s:%u: '%s' has no value", c->path, nr,
			 key);
		return -1;
	}
	if (asprintf(arg, "--%s=%s", key, val) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 1;
}

/* The FILE of '--config FILE' or '--config=FILE' in argv, or NULL. */
static const char *cfg_path(const char *shortopts, const struct option *opts,
			    int argc, char **argv)
{
	const struct option *conf = cfg_option(opts, "config");
	const char *path = NULL;
	int c;

	optind = 1;
	opterr = 0;
	while (conf && (c = getopt_long(argc, argv, shortopts, opts,
					NULL)) != -1)
		if (c == conf->val && optarg)
			path = optarg;
	optind = 1;
	opterr = 1;
	return path;
}

int agent_config_load(struct agent_config *c, const char *shortopts,
		      const struct option *opts, int argc, char **argv,
		      char *err, size_t errlen)
{
	char *line, *next, *arg;
	unsigned int nr = 0;
	size_t cap = 0;
	char **av;
	int i, ret;

	memset(c, 0, sizeof(*c));
	c->argc = c->argc0 = argc;
	c->argv = c->argv0 = argv;
	c->path = cfg_path(shortopts, opts, argc, argv);
	if (!c->path)
		return 0;
	ret = cfg_read(c->path, &c->text, err, errlen);
	if (ret)
		return ret;
	/* argv[0], the file's settings, the command line's arguments, NULL. */
	for (line = c->text; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		nr++;
		ret = cfg_line(c, opts, line, nr, &arg, err, errlen);
		if (ret < 0)
			goto fail;
		if (!ret)
			continue;
		if ((size_t)c->nr_file + 1 >= cap) {
			unsigned int *nl;

			cap = cap ? cap * 2 : 16;
			av = realloc(c->file_args, cap * sizeof(*av));
			nl = av ? realloc(c->lines, cap * sizeof(*nl)) : NULL;
			if (av)
				c->file_args = av;
			if (!nl) {
				free(arg);
				snprintf(err, errlen, "out of memory");
				goto fail;
			}
			c->lines = nl;
		}
		c->file_args[c->nr_file] = arg;
		c->lines[c->nr_file++] = nr;
	}
	av = calloc((size_t)argc + (size_t)c->nr_file + 1, sizeof(*av));
	if (!av) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	av[0] = argv[0];
	for (i = 0; i < c->nr_file; i++)
		av[1 + i] = c->file_args[i];
	for (i = 1; i < argc; i++)
		av[c->nr_file + i] = argv[i];
	c->argv = c->own_argv = av;
	c->argc = argc + c->nr_file;
	return 0;
fail:
	agent_config_free(c);
	return -EINVAL;
}

const char *agent_config_where(const struct agent_config *c, int argi,
			       char *buf, size_t len)
{
	if (!c->path || argi < 1 || argi > c->nr_file)
		return "";
	snprintf(buf, len, "%s:%u: ", c->path, c->lines[argi - 1]);
	return buf;
}

/* The next of c's file arguments setting 'key' from *i on, or NULL. */
static const char *cfg_next(const struct agent_config *c, const char *key,
			    int *i)
{
	size_t n = strlen(key);

	for (; *i < c->nr_file; (*i)++) {
		const char *a = c->file_args[*i];

		if (!strncmp(a + 2, key, n) && a[2 + n] == '=')
			return a + 3 + n;
	}
	return NULL;
}

int agent_config_same(const struct agent_config *a,
		      const struct agent_config *b, const char *key)
{
	const char *va, *vb;
	int i = 0, j = 0;

	do {
		va = cfg_next(a, key, &i);
		vb = cfg_next(b, key, &j);
		if (!va || !vb)
			return !va && !vb;
		i++;
		j++;
	} while (!strcmp(va, vb));
	return 0;
}

void agent_config_free(struct agent_config *c)
{
	int i;

	for (i = 0; i < c->nr_file; i++)
		free(c->file_args[i]);
	free(c->file_args);
	free(c->lines);
	free(c->text);
	free(c->own_argv);
	memset(c, 0, sizeof(*c));
}

/* SIZE: bytes, or with a K, M or G suffix (powers of 1024). -1: bad. */
int agent_config_size(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;
	int shift = 0;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	if (*end && !end[1])
		shift = *end == 'K' || *end == 'k' ? 10 : *end == 'M' || *end == 'm' ?
			20 : *end == 'G' || *end == 'g' ? 30 : -1;
	else if (*end)
		shift = -1;
	if (shift < 0 || !v || v > (~0ULL >> shift))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

/* A GROUP of --socket-group: a name or a number. -1: none such. */
int agent_config_group(const char *v, gid_t *gid)
{
	struct group *g = getgrnam(v);
	unsigned long n;
	char *end;

	if (g) {
		*gid = g->gr_gid;
		return 0;
	}
	if (*v < '0' || *v > '9')
		return -1;
	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || *end || n > 0x7fffffff)
		return -1;
	*gid = (gid_t)n;
	return 0;
}
