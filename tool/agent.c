// SPDX-License-Identifier: GPL-2.0
/*
 * 'uwprof agent': samples continuously (the whole system by default, at a
 * low rate) and serves gzipped pprof profiles of the next N seconds over
 * HTTP, for 'go tool pprof', Parca and Grafana Alloy's pyroscope.scrape.
 *
 * It runs the recorder's engine as 'uwprof record -a' does (rec_*.c:
 * process and mapping tracking, table compile and upload, ring draining,
 * stack snapshots), except that no profile file is written: records go
 * only to the profile windows that requests have open (agent_window.c).
 * libmicrohttpd's threads wait for their windows; this thread runs the
 * recorder. Processes that are gone are dropped from its state. With
 * --output-dir or --push, consecutive windows of the whole host are also
 * written and pushed (agent_output.c).
 *
 * HTTP is not served here: the socket is bound here, then handed to a
 * front end forked before sampling starts (agent_front.c), which drops
 * every privilege before it reads from the network and forwards each
 * request as a checked message (agent_ipc.c); this process answers them
 * on a thread each. The front end gets the token and nothing else of
 * this process's secrets: it is forked before --push-header-file is read.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent.h"
#include "agent_config.h"
#include "exit_status.h"
#include "recorder.h"

/* How often processes that are gone are dropped from the recorder's state. */
#define AGENT_PRUNE_NS	(10ULL * 1000000000ULL)
/*
 * The loop's longest sleep: records, signals and requests wake it anyway
 * (the ring reader's eventfd, the signalfd, the windows' eventfd); the
 * timeout only bounds how late a held-back re-read or a prune comes.
 */
#define AGENT_WAIT_MS	1000

/*
 * "FILE:LINE: " while the option being parsed came from --config's file,
 * else "": the start of every message about an option's value.
 */
static const char *opt_where = "";

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
};

static void agent_usage(FILE *f)
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
"                     [--push-header-file FILE] [--push-timeout S]] [--interval S]\n"
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
"  --push-timeout S    time limit per try (default %d); 3 tries at most\n"
"  Connections: %d at once, %d per client address or user; one silent for\n"
"  %d s is dropped. Stops on SIGINT or SIGTERM.\n"
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
	OPT_PUSH_TIMEOUT, OPT_USER, OPT_CONFIG,
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
	{ "freq", required_argument, NULL, 'F' },
	{ "all-cpus", no_argument, NULL, 'a' },
	{ "pid", required_argument, NULL, 'p' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

#define OUT_NEEDS_DIR	1	/* --keep-* */
#define OUT_NEEDS_PUSH	2	/* --push-* */
#define OUT_NEEDS_ANY	4	/* --interval */

/* One option of --output-dir and --push; 0, or -1 with the message printed. */
static int agent_out_opt(struct agent_opts *a, int c, const char *v)
{
	struct agent_out_opts *o = &a->out;
	uint32_t n;

	size_t i;

	a->out_given |= c == OPT_KEEP_FILES || c == OPT_KEEP_BYTES ? OUT_NEEDS_DIR :
			c == OPT_INTERVAL ? OUT_NEEDS_ANY :
			c != OPT_OUTPUT_DIR && c != OPT_PUSH ? OUT_NEEDS_PUSH : 0;
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
		fprintf(stderr,
			"uwprof agent: %s--push: this uwprof was built without libcurl (install libcurl4-openssl-dev and rebuild)\n",
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
			fprintf(stderr, "uwprof agent: out of memory\n");
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
	fprintf(stderr, "uwprof agent: %sbad value '%s' for --%s\n", opt_where,
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
	fprintf(stderr, "uwprof agent: %sbad value '%s' for --%s\n", opt_where,
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
		fprintf(stderr, "uwprof agent: %sbad value '%s' for -F\n",
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
		fprintf(stderr, "uwprof agent: %sbad value '%s' for -p\n",
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
		fprintf(stderr, "uwprof agent: %sbad value '%s' for --%s\n",
			opt_where, v, c == OPT_CGROUP ? "cgroup" : "comm");
		return -1;
	case OPT_CACHE_DIR:
		o->cache_dir = v;
		return 0;
	case OPT_CONFIG:	/* read before: agent_config.c */
		return 0;
	default:
		return c >= OPT_OUTPUT_DIR ? agent_out_opt(a, c, v) : -1;
	}
	fprintf(stderr, "uwprof agent: %s-a and -p exclude each other\n",
		opt_where);
	return -1;
}

/* The endpoint's options together: 0, or -1 with the message printed. */
static int agent_access_check(struct agent_opts *a)
{
	struct agent_http_opts *h = &a->http;

	if (h->listen && (a->socket_given || a->socket_opts_given)) {
		fprintf(stderr,
			"uwprof agent: --listen (TCP) and --socket* (the unix socket) exclude each other\n");
		return -1;
	}
	if (!h->listen && h->nr_allow_hosts) {
		fprintf(stderr,
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
static int agent_parse(struct rec_opts *o, struct agent_opts *a,
		       const struct agent_config *cfg)
{
	char **argv = cfg->argv, where[600];
	int c, argc = cfg->argc;

	memset(o, 0, sizeof(*o));
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
		fprintf(stderr, "uwprof agent: unexpected argument '%s'\n",
			argv[optind]);
		return -1;
	}
	if (((a->out_given & OUT_NEEDS_DIR) && !a->out.dir) ||
	    ((a->out_given & OUT_NEEDS_PUSH) && !a->out.push_url) ||
	    ((a->out_given & OUT_NEEDS_ANY) && !a->out.dir && !a->out.push_url)) {
		fprintf(stderr,
			"uwprof agent: --keep-* need --output-dir, --push-* need --push, --interval one of them\n");
		return -1;
	}
	if (!o->mode)
		o->mode = MODE_ALL;
	return agent_access_check(a);
}

/*
 * Until SIGINT or SIGTERM, or the front end's end (r->child: it died, or
 * closed the control socket). Returns 1 for the latter.
 */
static int agent_loop(struct recorder *r, struct agent_wins *ws,
		      struct agent_ipc_srv *ipc)
{
	uint64_t last_prune = mono_ns();
	int wait_ms = AGENT_WAIT_MS;

	/* As record: get the CPU soon after a ring or a new process wakes us. */
	setpriority(PRIO_PROCESS, 0, r->nice0 - 10 < -20 ? -20 : r->nice0 - 10);
	while (!r->stop) {
		uint64_t now;

		if (r->child_done || agent_ipc_ended(ipc))
			return 1;
		rec_wait_events(r, wait_ms, ws->wake_fd);
		agent_wins_tick(ws, 0, 1);
		rec_drain(r);
		wait_ms = rec_procs_refresh(r, 0, AGENT_WAIT_MS);
		wait_ms = agent_wins_tick(ws, wait_ms, 0);
		rec_reap(r);
		now = mono_ns();
		if (now - last_prune >= AGENT_PRUNE_NS) {
			rec_procs_prune(r);
			/* What the processes and objects gone held, back to the system. */
			malloc_trim(0);
			last_prune = now;
		}
	}
	return 0;
}

static void agent_about(const struct recorder *r, char *buf, size_t len)
{
	snprintf(buf, len,
		 "Sampling %s%s%s%s%s at %u Hz per CPU (%s); process %d.",
		 r->o.mode == MODE_PIDS ? "the processes given" :
		 "every process", r->o.cgroup ? " in cgroup " : "",
		 r->o.cgroup ? r->cgroup_path : "",
		 r->o.comm ? " named " : "", r->o.comm ? r->o.comm : "",
		 r->o.freq,
		 r->o.event == UWPROF_PF_EV_CYCLES ? "cycles" : "cpu-clock",
		 (int)r->self);
}

/* The exit status for a failed start of the output (--output-dir, --push). */
static int agent_out_status(const struct agent_out *out, int ret)
{
	if (out->files_failed)
		return UWPROF_EX_OUTPUT;
	return ret == -EINVAL ? UWPROF_EX_USAGE : UWPROF_EX_ERROR;
}

/* Ends what agent_serve() started, sampling included; the windows last. */
static void agent_end(struct recorder *r, struct agent_wins *ws,
		      struct agent_ipc_srv *ipc, struct agent_out *out)
{
	/* The consecutive window in progress ends here, and is written out. */
	agent_wins_stop(ws);
	/* The front end sees its control socket end, and exits. */
	if (ipc)
		agent_ipc_stop(ipc);
	uwprof_dev_stop(&r->dev);
	uwprof_rreader_finish(&r->rr);
	if (ws->out)
		agent_out_stop(out);
	agent_wins_fini(ws);
}

/* Sampling started: serves until stopped, then stops sampling. */
static int agent_serve(struct recorder *r, const struct agent_opts *a,
		       uint32_t flags, struct agent_front *front)
{
	struct agent_source src = {
		.profile = agent_wins_profile, .metrics = agent_wins_metrics,
	};
	struct agent_out_opts oo = a->out;
	struct agent_period_src psrc;
	struct agent_wins ws;
	struct agent_ipc_srv ipc;
	struct agent_out out;
	char err[512] = "", about[1400];
	int ret, code = UWPROF_EX_ERROR;

	ret = agent_wins_init(&ws, r, flags, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "uwprof agent: %s\n", err);
		uwprof_dev_stop(&r->dev);
		uwprof_rreader_finish(&r->rr);
		return code;
	}
	if (a->out.dir || a->out.push_url) {
		agent_wins_period_src(&ws, &psrc);
		/* The rate sampled at: the kernel's limit may have lowered -F. */
		oo.freq = r->o.freq;
		ret = agent_out_start(&out, &oo, &psrc, err, sizeof(err));
		if (ret)
			code = agent_out_status(&out, ret);
		else
			ws.out = &out;
	}
	if (!ret) {
		src.ctx = &ws;
		agent_about(r, about, sizeof(about));
		src.about = about;
		ret = agent_ipc_serve(&ipc, front->ctl, &src, err, sizeof(err));
	}
	if (ret) {
		fprintf(stderr, "uwprof agent: %s\n", err);
		agent_end(r, &ws, NULL, &out);
		return code;
	}
	if (!a->http.listen)
		fprintf(stderr, "uwprof agent: serving on %s (mode %04o)\n",
			a->http.socket_path, (unsigned int)a->http.socket_mode);
	else
		fprintf(stderr, "uwprof agent: serving on http://%s/%s\n",
			a->http.listen, a->token_file ? "" :
			" (no --token-file: anyone who can connect reads the host's profiles)");
	ret = agent_loop(r, &ws, &ipc);
	if (ret)
		fprintf(stderr,
			"uwprof agent: the HTTP front end (process %d) is gone; stopping (restart the agent)\n",
			(int)front->pid);
	agent_end(r, &ws, &ipc, &out);
	fprintf(stderr, "uwprof agent: stopped (%llu samples, %llu lost)\n",
		(unsigned long long)r->samples, (unsigned long long)r->lost);
	return ret ? UWPROF_EX_ERROR : UWPROF_EX_OK;
}

static int agent_run(struct recorder *r, const struct agent_opts *a,
		     struct agent_front *front)
{
	struct rec_launch l = { .go_w = -1, .err_r = -1 };
	uint32_t flags;
	int code;

	/*
	 * The agent keeps about 2 MiB; requests, intervals and the recorder
	 * build and free a few MiB more, each on its own thread. With an
	 * arena per thread glibc spreads the freed memory over several
	 * heaps that the next build, on another thread, does not reuse, and
	 * the agent's RSS creeps up build after build; one arena reuses it
	 * (the threads rarely allocate at once). Where the kernel backs
	 * anonymous memory with transparent huge pages by default (Debian's
	 * does), the heap would also hold whole 2 MiB pages that
	 * malloc_trim() cannot give back.
	 */
	mallopt(M_ARENA_MAX, 1);
	prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
	code = rec_setup(r, &flags);
	if (!code)
		code = rec_targets_ready(r, &l);
	if (!code)
		code = rec_sampling_start(r, flags);
	if (code) {
		rec_targets_abort(r, &l);
		return code;
	}
	return agent_serve(r, a, flags, front);
}

/* The token, read before the front end is forked: 0, or the exit status, said. */
static int agent_token_read(struct agent_opts *a, char **token)
{
	char err[512] = "";
	int ret;

	*token = NULL;
	if (!a->token_file)
		return 0;
	ret = agent_access_token_read(a->token_file, token, err, sizeof(err));
	if (err[0])
		fprintf(stderr, "uwprof agent: %s\n", err);
	if (ret)
		return ret == -EINVAL ? UWPROF_EX_USAGE : UWPROF_EX_ERROR;
	a->http.token = *token;
	return 0;
}

/*
 * The socket bound (as root: its mode, group and directory checked) and
 * the front end forked to serve it. The token is the front end's only:
 * wiped here once it has its copy. 0, or the exit status, said.
 */
static int agent_front_up(struct agent_opts *a, struct agent_http *h,
			  struct agent_front *f, char *token)
{
	char err[512] = "";
	int ret;

	if (agent_front_user(f, a->user, err, sizeof(err))) {
		fprintf(stderr, "uwprof agent: %s\n", err);
		return UWPROF_EX_USAGE;
	}
	if (!f->switch_user)
		fprintf(stderr,
			"uwprof agent: not root: the HTTP front end keeps uid %u, without capabilities\n",
			(unsigned int)f->uid);
	ret = agent_http_listen(h, &a->http, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "uwprof agent: %s\n", err);
		return ret == -EINVAL ? UWPROF_EX_USAGE : UWPROF_EX_ERROR;
	}
	ret = agent_front_start(f, h, err, sizeof(err));
	if (token)
		explicit_bzero(token, strlen(token));
	if (ret) {
		fprintf(stderr, "uwprof agent: %s\n", err);
		agent_http_stop(h);
		return UWPROF_EX_ERROR;
	}
	return 0;
}

/* The front end stopped (f->ctl closed first) and the socket removed. */
static void agent_front_down(struct recorder *r, struct agent_http *h,
			     struct agent_front *f)
{
	char how[128];

	if (f->ctl >= 0)
		close(f->ctl);
	f->ctl = -1;
	if (f->pid > 0 && agent_front_reap(f, 2000, how, sizeof(how)))
		fprintf(stderr, "uwprof agent: the HTTP front end %s\n", how);
	else if (r->child_done && (!WIFEXITED(r->child_status) ||
				   WEXITSTATUS(r->child_status)))
		fprintf(stderr, "uwprof agent: the HTTP front end %s with status 0x%x\n",
			"ended", (unsigned int)r->child_status);
	agent_http_stop(h);
}

/* The push's headers, read after the fork: 0, or the exit status, said. */
static int agent_headers_read(struct agent_opts *a)
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
			fprintf(stderr, "uwprof agent: %s\n", err);
			return ret == -EINVAL ? UWPROF_EX_USAGE : UWPROF_EX_ERROR;
		}
	}
	return 0;
}

/* The headers of the file (after argv's), and the token, wiped and freed. */
static void agent_files_free(struct agent_opts *a, char *token)
{
	size_t i;

	for (i = a->nr_argv_headers; i < a->out.nr_push_headers; i++) {
		explicit_bzero((char *)a->headers[i], strlen(a->headers[i]));
		free((char *)a->headers[i]);
	}
	free(a->headers);
	if (token) {
		explicit_bzero(token, strlen(token));
		free(token);
	}
}

/*
 * --output-dir and --push checked before sampling starts (which compiles
 * the tables of every process first): 0, or the exit status, said.
 */
static int agent_out_check(const struct agent_out_opts *o)
{
	struct agent_files f;
	char err[512];

	if (o->push_url && agent_push_url_check(o->push_url, err, sizeof(err))) {
		fprintf(stderr, "uwprof agent: %s\n(see 'uwprof agent --help')\n",
			err);
		return UWPROF_EX_USAGE;
	}
	if (o->dir) {
		if (agent_files_init(&f, o->dir, o->keep_files, o->keep_bytes,
				     err, sizeof(err))) {
			fprintf(stderr, "uwprof agent: --output-dir %s\n", err);
			return UWPROF_EX_OUTPUT;
		}
		agent_files_fini(&f);
	}
	return 0;
}

int uwprof_cmd_agent(int argc, char **argv)
{
	struct recorder *r = calloc(1, sizeof(*r));
	struct agent_opts a = { .token_file = NULL };
	struct agent_config cfg;
	struct agent_front front = { .ctl = -1 };
	struct agent_http h;
	char *token = NULL, err[800];
	int ret, up = 0;

	if (!r) {
		fprintf(stderr, "uwprof agent: out of memory\n");
		return UWPROF_EX_ERROR;
	}
	r->sigfd = -1;
	r->dev.fd = -1;
	r->cgroup_fd = -1;
	r->name = "uwprof agent";
	r->no_file = 1;
	r->self = getpid();
	errno = 0;
	r->nice0 = getpriority(PRIO_PROCESS, 0);
	if (errno)
		r->nice0 = 0;
	/* The file's settings first; what the options point at lives in cfg. */
	if (agent_config_load(&cfg, "F:ap:h", agent_longopts, argc, argv, err,
			      sizeof(err))) {
		fprintf(stderr, "uwprof agent: %s\n", err);
		free(r);
		return UWPROF_EX_USAGE;
	}
	ret = agent_parse(&r->o, &a, &cfg);
	if (ret) {
		if (ret > 0)
			agent_usage(stdout);
		else
			fprintf(stderr, "(see 'uwprof agent --help')\n");
		free(r->o.pids);
		free(r);
		free(a.headers);
		agent_config_free(&cfg);
		return ret > 0 ? UWPROF_EX_OK : UWPROF_EX_USAGE;
	}
	ret = agent_token_read(&a, &token);
	if (!ret)
		ret = agent_front_up(&a, &h, &front, token);
	up = !ret;
	/* rec_reap() keeps its status if it ends while the agent runs. */
	r->child = front.pid;
	if (!ret)
		ret = agent_headers_read(&a);
	if (!ret)
		ret = agent_out_check(&a.out);
	if (!ret)
		ret = agent_run(r, &a, &front);
	if (up)
		agent_front_down(r, &h, &front);
	agent_files_free(&a, token);
	rec_free(r);
	free(r);
	agent_config_free(&cfg);
	return ret;
}
