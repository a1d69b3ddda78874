// SPDX-License-Identifier: GPL-2.0
/*
 * 'uwprof agent': its options. The table and the usage text; the parsing
 * of --config's file and the command line (agent_config.c turns the file
 * into arguments); the checks of --output-dir, --push and the headers
 * file made before sampling starts; and, on SIGHUP, the same file read
 * again (agent_opts_reload()): the output's settings handed to the
 * running output (agent_output.c), those that need a restart named. Called
 * from uwprof_cmd_agent() at start and from the agent's loop (its
 * recorder thread) on SIGHUP.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "agent_config.h"
#include "agent_opts.h"
#include "exit_status.h"
#include "recorder.h"

/*
 * Where the messages about options go: stderr, or while a reload parses
 * the file, a buffer that becomes its one line.
 */
static FILE *opt_log;

static FILE *log_f(void)
{
	return opt_log ? opt_log : stderr;
}

/*
 * "FILE:LINE: " while the option being parsed came from --config's file,
 * else "": the start of every message about an option's value.
 */
static const char *opt_where = "";


void agent_opts_usage(FILE *f)
{
	fprintf(f,
"usage: uwprof agent [--config FILE]\n"
"                    [--socket PATH [--socket-mode MODE] [--socket-group GROUP]\n"
"                     | --listen ADDR:PORT [--allow-host NAME]...]\n"
"                    [--token-file FILE] [--user NAME] [-F HZ]\n"
"                    [-a | -p PID[,PID...]] [--cgroup PATH] [--comm NAME]\n"
"                    [--cache-dir DIR]\n"
"                    [--output-dir DIR [--keep-files N] [--keep-bytes SIZE]]\n"
"                    [--push URL [--push-name NAME] [--push-header 'NAME: VALUE']\n"
"                     [--push-header-file FILE]] [--otlp URL] [--push-timeout S]\n"
"                    [--interval S]\n"
"  Sample continuously and serve CPU profiles (gzipped pprof) over HTTP:\n"
"    GET /debug/pprof/profile?seconds=N[&pid=PID][&comm=NAME][&cgroup=PATH]\n"
"  the next N seconds (default %d, at most %d) of user call stacks, and\n"
"    GET /  an index page,  GET /metrics  the agent's own state.\n"
"  Whoever can connect reads profiles of the whole host (function names,\n"
"  paths, pids): by default only root, on a unix socket.\n"
"  --config FILE       options from FILE, one 'key = value' a line, the key\n"
"                      an option's long name ('freq = 19', 'output-dir =\n"
"                      /var/lib/uwprof/profiles'); '#' starts a comment\n"
"                      line; the command line's options come after them\n"
"  --socket PATH       the unix socket (default %s; its directory must be\n"
"                      writable by root only; removed at exit)\n"
"  --socket-mode MODE  its permissions, octal (default 0600; 0660 with\n"
"                      --socket-group)\n"
"  --socket-group GROUP  its group, a name or number: members may connect\n"
"  --listen ADDR:PORT  TCP instead, numeric address and port (e.g.\n"
"                      127.0.0.1:%d); requests must name the agent in Host:\n"
"                      localhost, 127.0.0.1, [::1], ADDR or an --allow-host\n"
"  --allow-host NAME   a further Host name accepted on TCP (repeatable)\n"
"  --token-file FILE   require 'Authorization: Bearer TOKEN', TOKEN read\n"
"                      from FILE (one line)\n"
"  --user NAME         the user the HTTP front end runs as (default nobody):\n"
"                      it parses every request, with no privilege\n"
"  -F, --freq HZ       samples per second per CPU (default %d)\n"
"  -a, --all-cpus      every process on the system (the default)\n"
"  -p, --pid PIDS      only these processes (comma separated)\n"
"  --cgroup PATH       only tasks in this cgroup v2 directory or below it\n"
"                      (/system.slice/x.service, or /sys/fs/cgroup/...)\n"
"  --comm NAME         only threads named NAME (at most 15 bytes)\n"
"  --cache-dir DIR     table cache (as 'uwprof record')\n"
"  --python-native     keep CPython's eval-loop frame before each run of\n"
"                      Python frames (as 'uwprof report')\n"
"  Every --interval seconds (default %d, 1 to %d), the whole host's profile\n"
"  of the last interval, as the endpoint gives it:\n"
"  --output-dir DIR    written to DIR/uwprof-YYYYMMDDTHHMMSSZ.pb.gz (start, UTC)\n"
"  --keep-files N      the oldest removed beyond N files (default %d)\n"
"  --keep-bytes SIZE   ... or beyond SIZE bytes, K/M/G suffixes (default 256M)\n"
"  --push URL          POSTed to URL/ingest, Pyroscope's HTTP API (a URL\n"
"                      with user:password@ is refused: use a header file)\n"
"  --push-name NAME    its application name (default uwprof{hostname=HOST})\n"
"  --push-header H     an extra request header, e.g. 'X-Scope-OrgID: 1'; it\n"
"                      shows in ps: never a secret\n"
"  --push-header-file FILE  extra headers, one 'Name: value' a line, for\n"
"                      secrets (Authorization: ...)\n"
"  --otlp URL          as OTLP (ExportProfilesServiceRequest, gzipped),\n"
"                      POSTed to URL as given, e.g.\n"
"                      http://collector:4318/v1development/profiles; no\n"
"                      --push-header is sent there\n"
"  --push-timeout S    time limit per try (default %d); 3 tries at most,\n"
"                      waiting 1 s, 2 s or a 429's/503's Retry-After (<= 60 s);\n"
"                      4 profiles queued per target at most, the oldest dropped\n"
"  Connections: %d at once, %d per client address or user; one silent for\n"
"  %d s is dropped. Stops on SIGINT or SIGTERM. SIGHUP: with --config, reads\n"
"  FILE again: output-dir, interval, keep-*, push*, otlp apply from the end of\n"
"  the interval in progress (not cut), other changed keys are named as\n"
"  needing a restart, a bad file is refused (FILE:LINE said); without\n"
"  --config it stops the agent.\n"
"  exit: as 'uwprof record' (1 error, 2 usage, 3 no module, 4 permission,\n"
"        5 no such process or cgroup, 6 --output-dir not usable,\n"
"        7 another session is sampling and the loaded module samples\n"
"        one at a time)\n",
		AGENT_DEFAULT_SECONDS, AGENT_MAX_SECONDS, AGENT_DEFAULT_SOCKET,
		AGENT_DEFAULT_PORT, AGENT_DEFAULT_FREQ, AGENT_DEFAULT_INTERVAL,
		AGENT_MAX_INTERVAL, AGENT_DEFAULT_KEEP_FILES,
		AGENT_DEFAULT_PUSH_TIMEOUT, AGENT_MAX_CONNECTIONS,
		AGENT_PER_CLIENT, AGENT_CONN_TIMEOUT);
}

enum {
	OPT_LISTEN = 256, OPT_SOCKET, OPT_SOCKET_MODE, OPT_SOCKET_GROUP,
	OPT_ALLOW_HOST, OPT_TOKEN_FILE, OPT_CGROUP, OPT_COMM, OPT_CACHE_DIR,
	OPT_OUTPUT_DIR, OPT_INTERVAL, OPT_KEEP_FILES, OPT_KEEP_BYTES,
	OPT_PUSH, OPT_PUSH_NAME, OPT_PUSH_HEADER, OPT_PUSH_HEADER_FILE,
	OPT_PUSH_TIMEOUT, OPT_OTLP, OPT_USER, OPT_CONFIG, OPT_PYTHON_NATIVE,
};

static const struct option agent_longopts[] = {
	{ "config", required_argument, NULL, OPT_CONFIG },
	{ "output-dir", required_argument, NULL, OPT_OUTPUT_DIR },
	{ "interval", required_argument, NULL, OPT_INTERVAL },
	{ "keep-files", required_argument, NULL, OPT_KEEP_FILES },
	{ "keep-bytes", required_argument, NULL, OPT_KEEP_BYTES },
	{ "push", required_argument, NULL, OPT_PUSH },
	{ "push-name", required_argument, NULL, OPT_PUSH_NAME },
	{ "push-header", required_argument, NULL, OPT_PUSH_HEADER },
	{ "push-header-file", required_argument, NULL, OPT_PUSH_HEADER_FILE },
	{ "push-timeout", required_argument, NULL, OPT_PUSH_TIMEOUT },
	{ "otlp", required_argument, NULL, OPT_OTLP },
	{ "listen", required_argument, NULL, OPT_LISTEN },
	{ "socket", required_argument, NULL, OPT_SOCKET },
	{ "socket-mode", required_argument, NULL, OPT_SOCKET_MODE },
	{ "socket-group", required_argument, NULL, OPT_SOCKET_GROUP },
	{ "allow-host", required_argument, NULL, OPT_ALLOW_HOST },
	{ "token-file", required_argument, NULL, OPT_TOKEN_FILE },
	{ "user", required_argument, NULL, OPT_USER },
	{ "cgroup", required_argument, NULL, OPT_CGROUP },
	{ "comm", required_argument, NULL, OPT_COMM },
	{ "cache-dir", required_argument, NULL, OPT_CACHE_DIR },
	{ "python-native", no_argument, NULL, OPT_PYTHON_NATIVE },
	{ "freq", required_argument, NULL, 'F' },
	{ "all-cpus", no_argument, NULL, 'a' },
	{ "pid", required_argument, NULL, 'p' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

#define OUT_NEEDS_DIR	1	/* --keep-* */
#define OUT_NEEDS_PUSH	2	/* --push-* */
#define OUT_NEEDS_ANY	4	/* --interval */
#define OUT_NEEDS_NET	8	/* --push-timeout */

/* One option of --output-dir and --push; 0, or -1 with the message printed. */
static int agent_out_opt(struct agent_opts *a, int c, const char *v)
{
	struct agent_out_opts *o = &a->out;
	uint32_t n;

	size_t i;

	a->out_given |= c == OPT_KEEP_FILES || c == OPT_KEEP_BYTES ? OUT_NEEDS_DIR :
			c == OPT_INTERVAL ? OUT_NEEDS_ANY :
			c == OPT_PUSH_TIMEOUT ? OUT_NEEDS_NET :
			c != OPT_OUTPUT_DIR && c != OPT_PUSH && c != OPT_OTLP ?
			OUT_NEEDS_PUSH : 0;
	switch (c) {
	case OPT_OUTPUT_DIR:
		o->dir = v;
		return 0;
	case OPT_INTERVAL:
		if (rec_parse_u32(v, 1, AGENT_MAX_INTERVAL, &o->interval_s))
			break;
		return 0;
	case OPT_KEEP_FILES:
		if (rec_parse_u32(v, 1, 1000000000, &n))
			break;
		o->keep_files = n;
		return 0;
	case OPT_KEEP_BYTES:
		if (agent_config_size(v, &o->keep_bytes))
			break;
		return 0;
	case OPT_PUSH:
		o->push_url = v;
		if (agent_push_available())
			return 0;
		fprintf(log_f(),
			"uwprof agent: %s--push: this uwprof was built without libcurl (install libcurl4-openssl-dev and rebuild)\n",
			opt_where);
		return -1;
	case OPT_OTLP:
		o->otlp_url = v;
		if (agent_push_available())
			return 0;
		fprintf(log_f(),
			"uwprof agent: %s--otlp: this uwprof was built without libcurl (install libcurl4-openssl-dev and rebuild)\n",
			opt_where);
		return -1;
	case OPT_PUSH_NAME:
		o->push_name = v;
		return 0;
	case OPT_PUSH_HEADER: {
		const char **nv;

		if (!strchr(v, ':') || a->nr_argv_headers >= AGENT_MAX_PUSH_HEADERS)
			break;
		nv = realloc(a->headers, (a->nr_argv_headers + 1) * sizeof(*nv));
		if (!nv) {
			fprintf(log_f(), "uwprof agent: out of memory\n");
			return -1;
		}
		a->headers = nv;
		a->headers[a->nr_argv_headers++] = v;
		return 0;
	}
	case OPT_PUSH_HEADER_FILE:
		a->header_file = v;
		return 0;
	case OPT_PUSH_TIMEOUT:
		if (rec_parse_u32(v, 1, 600, &o->push_timeout_s))
			break;
		return 0;
	}
	for (i = 0; agent_longopts[i].val != c; i++)
		;
	fprintf(log_f(), "uwprof agent: %sbad value '%s' for --%s\n", opt_where,
		v, agent_longopts[i].name);
	return -1;
}

/* Who may connect: returns 0, or -1 with the message printed. */
static int agent_access_opt(struct agent_opts *a, int c, const char *v)
{
	struct agent_http_opts *h = &a->http;
	unsigned long m;
	char *end;

	switch (c) {
	case OPT_SOCKET_MODE:
		errno = 0;
		m = strtoul(v, &end, 8);
		if (errno || !*v || *end || m > 0777)
			break;
		h->socket_mode = (mode_t)m;
		a->socket_opts_given |= 1;
		return 0;
	case OPT_SOCKET_GROUP:
		if (agent_config_group(v, &h->socket_gid))
			break;
		a->socket_opts_given |= 2;
		return 0;
	case OPT_ALLOW_HOST:
		if (!*v || strpbrk(v, " /\t") || h->nr_allow_hosts >= 16)
			break;
		a->allow_hosts[h->nr_allow_hosts++] = v;
		h->allow_hosts = a->allow_hosts;
		return 0;
	case OPT_TOKEN_FILE:
		a->token_file = v;
		return 0;
	case OPT_USER:
		a->user = v;
		return 0;
	}
	fprintf(log_f(), "uwprof agent: %sbad value '%s' for --%s\n", opt_where,
		v, c == OPT_SOCKET_MODE ? "socket-mode" :
		c == OPT_SOCKET_GROUP ? "socket-group" : "allow-host");
	return -1;
}

/* One option; returns 0, or -1 with the message printed. */
static int agent_opt(struct rec_opts *o, struct agent_opts *a, int c,
		     const char *v)
{
	switch (c) {
	case 'F':
		if (!rec_parse_u32(v, 1, UWPROF_MAX_FREQ, &o->freq))
			return 0;
		fprintf(log_f(), "uwprof agent: %sbad value '%s' for -F\n",
			opt_where, v);
		return -1;
	case 'a':
		if (o->mode == MODE_PIDS)
			break;
		o->mode = MODE_ALL;
		return 0;
	case 'p':
		if (o->mode == MODE_ALL)
			break;
		o->mode = MODE_PIDS;
		if (!rec_parse_pids(o, v))
			return 0;
		fprintf(log_f(), "uwprof agent: %sbad value '%s' for -p\n",
			opt_where, v);
		return -1;
	case OPT_LISTEN:
		a->http.listen = v;
		return 0;
	case OPT_SOCKET:
		a->http.socket_path = v;
		a->socket_given = 1;
		return 0;
	case OPT_SOCKET_MODE:
	case OPT_SOCKET_GROUP:
	case OPT_ALLOW_HOST:
	case OPT_TOKEN_FILE:
	case OPT_USER:
		return agent_access_opt(a, c, v);
	case OPT_CGROUP:
	case OPT_COMM:
		if (!rec_parse_filter(o, c == OPT_CGROUP, v))
			return 0;
		fprintf(log_f(), "uwprof agent: %sbad value '%s' for --%s\n",
			opt_where, v, c == OPT_CGROUP ? "cgroup" : "comm");
		return -1;
	case OPT_CACHE_DIR:
		o->cache_dir = v;
		return 0;
	case OPT_PYTHON_NATIVE:
		o->python_native = 1;
		return 0;
	case OPT_CONFIG:	/* read before: agent_config.c */
		return 0;
	default:
		return c >= OPT_OUTPUT_DIR ? agent_out_opt(a, c, v) : -1;
	}
	fprintf(log_f(), "uwprof agent: %s-a and -p exclude each other\n",
		opt_where);
	return -1;
}

/* The endpoint's options together: 0, or -1 with the message printed. */
static int agent_access_check(struct agent_opts *a)
{
	struct agent_http_opts *h = &a->http;

	if (h->listen && (a->socket_given || a->socket_opts_given)) {
		fprintf(log_f(),
			"uwprof agent: --listen (TCP) and --socket* (the unix socket) exclude each other\n");
		return -1;
	}
	if (!h->listen && h->nr_allow_hosts) {
		fprintf(log_f(),
			"uwprof agent: --allow-host is for --listen (on the unix socket no Host is checked)\n");
		return -1;
	}
	if (h->listen)
		h->socket_path = NULL;
	/* A group given is a group meant to connect. */
	if (a->socket_opts_given == 2)
		h->socket_mode = 0660;
	return 0;
}

/* Returns -1 on a usage error (message printed), 1 for --help, 0 ok. */
int agent_opts_parse(struct rec_opts *o, struct agent_opts *a,
		     const struct agent_config *cfg)
{
	char **argv = cfg->argv, where[600];
	int c, argc = cfg->argc;

	memset(o, 0, sizeof(*o));
	a->cfg = cfg;
	agent_access_opts_init(&a->http);
	a->out.interval_s = AGENT_DEFAULT_INTERVAL;
	a->out.keep_files = AGENT_DEFAULT_KEEP_FILES;
	a->out.keep_bytes = AGENT_DEFAULT_KEEP_BYTES;
	a->out.push_timeout_s = AGENT_DEFAULT_PUSH_TIMEOUT;
	o->freq = AGENT_DEFAULT_FREQ;
	o->depth = REC_DEFAULT_DEPTH;
	o->snapshot_size = REC_DEFAULT_SNAPSHOT;
	o->quiet = 1;
	optind = 1;
	opterr = 1;
	while ((c = getopt_long(argc, argv, "F:ap:h", agent_longopts,
				NULL)) != -1) {
		if (c == 'h')
			return 1;
		/* Each option of the file is one argument, '--key=value'. */
		opt_where = agent_config_where(cfg, optind - 1, where,
					       sizeof(where));
		if (c == '?' || agent_opt(o, a, c, optarg))
			return -1;
	}
	opt_where = "";
	if (optind < argc) {
		fprintf(log_f(), "uwprof agent: unexpected argument '%s'\n",
			argv[optind]);
		return -1;
	}
	if (((a->out_given & OUT_NEEDS_DIR) && !a->out.dir) ||
	    ((a->out_given & OUT_NEEDS_PUSH) && !a->out.push_url) ||
	    ((a->out_given & OUT_NEEDS_NET) && !a->out.push_url &&
	     !a->out.otlp_url) ||
	    ((a->out_given & OUT_NEEDS_ANY) && !a->out.dir && !a->out.push_url &&
	     !a->out.otlp_url)) {
		fprintf(log_f(),
			"uwprof agent: --keep-* need --output-dir, --push-* need --push (--push-timeout: --push or --otlp), --interval one of them\n");
		return -1;
	}
	if (!o->mode)
		o->mode = MODE_ALL;
	return agent_access_check(a);
}

/* The push's headers, read after the fork: 0, or the exit status, said. */
int agent_opts_headers_read(struct agent_opts *a)
{
	char err[512] = "";
	int ret;

	a->out.push_headers = a->headers;
	a->out.nr_push_headers = a->nr_argv_headers;
	if (a->header_file) {
		ret = agent_out_headers_read(a->header_file, &a->out.push_headers,
					     &a->out.nr_push_headers, err,
					     sizeof(err));
		a->headers = a->out.push_headers;
		if (ret) {
			fprintf(log_f(), "uwprof agent: %s\n", err);
			return ret == -EINVAL ? UWPROF_EX_USAGE : UWPROF_EX_ERROR;
		}
	}
	return 0;
}

void agent_opts_free(struct agent_opts *a)
{
	size_t i;

	for (i = a->nr_argv_headers; i < a->out.nr_push_headers; i++) {
		explicit_bzero((char *)a->headers[i], strlen(a->headers[i]));
		free((char *)a->headers[i]);
	}
	free(a->headers);
	a->headers = NULL;
}

/*
 * --output-dir and --push checked before sampling starts (which compiles
 * the tables of every process first): 0, or the exit status, said.
 */
int agent_opts_out_check(const struct agent_out_opts *o)
{
	char err[512];

	if ((o->push_url && agent_push_url_check(o->push_url,
						 AGENT_PUSH_PYROSCOPE, err,
						 sizeof(err))) ||
	    (o->otlp_url && agent_push_url_check(o->otlp_url, AGENT_PUSH_OTLP,
						 err, sizeof(err)))) {
		fprintf(log_f(), "uwprof agent: %s\n(see 'uwprof agent --help')\n",
			err);
		return UWPROF_EX_USAGE;
	}
	/* Not agent_files_init(): on a reload its directory is being written. */
	if (o->dir && agent_files_check(o->dir, err, sizeof(err))) {
		fprintf(log_f(), "uwprof agent: --output-dir %s\n", err);
		return UWPROF_EX_OUTPUT;
	}
	return 0;
}

int agent_opts_load(struct agent_config *cfg, int argc, char **argv,
		    char *err, size_t errlen)
{
	return agent_config_load(cfg, "F:ap:h", agent_longopts, argc, argv,
				 err, errlen);
}

/*
 * The keys a reload applies: the output's, which its thread takes between
 * two intervals. The others need a restart: the sampling's (rate, pids,
 * cgroup, comm) are START's, fixed for the session's life in the module;
 * the endpoint's belong to the front end, which has dropped the privilege
 * to bind or read them again; the cache directory is opened at start.
 */
static const char *const live_keys[] = {
	"output-dir", "interval", "keep-files", "keep-bytes", "push",
	"push-name", "push-header", "push-header-file", "push-timeout", "otlp",
};

static int live_key(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(live_keys) / sizeof(live_keys[0]); i++)
		if (!strcmp(live_keys[i], name))
			return 1;
	return 0;
}

/* One line naming the keys 'now' changes that need a restart, if any. */
static void reload_restart_keys(const struct agent_config *run,
				const struct agent_config *now, int out_onoff)
{
	const struct option *o;
	char names[512] = "";
	size_t n = 0;

	for (o = agent_longopts; o->name; o++) {
		if (o->has_arg != required_argument || o->val == OPT_CONFIG ||
		    live_key(o->name) || agent_config_same(run, now, o->name) ||
		    n + strlen(o->name) + 3 >= sizeof(names))
			continue;
		n += (size_t)snprintf(names + n, sizeof(names) - n, "%s%s",
				      n ? ", " : "", o->name);
	}
	if (out_onoff && n + 40 < sizeof(names))
		n += (size_t)snprintf(names + n, sizeof(names) - n,
				      "%soutput-dir/push/otlp (on or off)",
				      n ? ", " : "");
	if (n)
		fprintf(stderr,
			"uwprof agent: reload of %s: changed, but only a restart applies them (systemctl restart uwprof-agent): %s; they keep their running values\n",
			now->path, names);
}

/* A refused reload's messages ('msg', lines) said as one line. */
static void reload_refused(const char *path, char *msg)
{
	const char *pfx = "uwprof agent: ";
	char *line, *next;
	int first = 1;

	fprintf(stderr, "uwprof agent: reload of %s refused, the running configuration stays: ",
		path);
	for (line = msg; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		if (!strncmp(line, pfx, strlen(pfx)))
			line += strlen(pfx);
		if (*line)
			fprintf(stderr, "%s%s", first ? "" : "; ", line);
		first = 0;
	}
	fputc('\n', stderr);
}

void agent_opts_reload(const struct agent_config *run, struct agent_out *out,
		       uint32_t freq)
{
	struct agent_opts a = { .token_file = NULL };
	struct agent_config cfg;
	struct rec_opts o;
	char err[800], *msg = NULL;
	size_t len = 0;
	int ret, has_out;

	if (agent_opts_load(&cfg, run->argc0, run->argv0, err, sizeof(err))) {
		reload_refused(run->path, err);
		return;
	}
	/* Its messages, FILE:LINE: first, become one line. */
	opt_log = open_memstream(&msg, &len);
	ret = agent_opts_parse(&o, &a, &cfg);
	has_out = a.out.dir || a.out.push_url || a.out.otlp_url;
	if (!ret && out && has_out)
		ret = agent_opts_headers_read(&a);
	if (!ret && out && has_out)
		ret = agent_opts_out_check(&a.out);
	if (opt_log)
		fclose(opt_log);
	opt_log = NULL;
	if (ret) {
		reload_refused(cfg.path, msg ? msg : "");
		goto out_free;
	}
	reload_restart_keys(run, &cfg, !out != !has_out);
	a.out.freq = freq;
	if (out && has_out && agent_out_reload(out, &a.out)) {
		reload_refused(cfg.path, "out of memory");
		goto out_free;
	}
	fprintf(stderr, "uwprof agent: reloaded %s%s\n", cfg.path,
		out && has_out ?
		" (the output's settings apply from the end of the interval in progress)" :
		"");
out_free:
	free(msg);
	free(o.pids);
	agent_opts_free(&a);
	agent_config_free(&cfg);
}
