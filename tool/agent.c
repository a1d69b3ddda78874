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
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "agent.h"
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

struct agent_opts {
	const char	*listen;
	const char	*socket;
	char		listen_buf[64];
	struct agent_out_opts out;
	int		out_given;	/* OUT_NEEDS_*: options given that need others */
	const char	*headers[16];
};

static void agent_usage(FILE *f)
{
	fprintf(f,
"usage: uwprof agent [--listen ADDR:PORT | --socket PATH] [-F HZ]\n"
"                    [-a | -p PID[,PID...]] [--cgroup PATH] [--comm NAME]\n"
"                    [--cache-dir DIR]\n"
"                    [--output-dir DIR [--keep-files N] [--keep-bytes SIZE]]\n"
"                    [--push URL [--push-name NAME] [--push-header 'NAME: VALUE']\n"
"                     [--push-timeout S]] [--interval S]\n"
"  Sample continuously and serve CPU profiles (gzipped pprof) over HTTP:\n"
"    GET /debug/pprof/profile?seconds=N[&pid=PID][&comm=NAME][&cgroup=PATH]\n"
"  the next N seconds (default %d, at most %d) of user call stacks, and\n"
"    GET /  an index page,  GET /metrics  the agent's own state.\n"
"  --listen ADDR:PORT  numeric address and port (default 127.0.0.1:%d)\n"
"  --socket PATH       a unix socket instead (removed at exit)\n"
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
"  --push URL          POSTed to URL/ingest, Pyroscope's HTTP API\n"
"  --push-name NAME    its application name (default uwprof{hostname=HOST})\n"
"  --push-header H     an extra request header, e.g. 'X-Scope-OrgID: 1'\n"
"  --push-timeout S    time limit per try (default %d); 3 tries at most\n"
"  No authentication: anyone who can connect gets profiles of the whole\n"
"  host (function names, paths, pids). Keep the default loopback address\n"
"  or a unix socket; put a proxy with authentication in front for remote\n"
"  access. Stops on SIGINT or SIGTERM.\n"
"  exit: as 'uwprof record' (1 error, 2 usage, 3 no module, 4 permission,\n"
"        5 no such process or cgroup, 6 --output-dir not usable,\n"
"        7 another session is sampling and the loaded module samples\n"
"        one at a time)\n",
		AGENT_DEFAULT_SECONDS, AGENT_MAX_SECONDS, AGENT_DEFAULT_PORT,
		AGENT_DEFAULT_FREQ, AGENT_DEFAULT_INTERVAL, AGENT_MAX_INTERVAL,
		AGENT_DEFAULT_KEEP_FILES, AGENT_DEFAULT_PUSH_TIMEOUT);
}

enum {
	OPT_LISTEN = 256, OPT_SOCKET, OPT_CGROUP, OPT_COMM, OPT_CACHE_DIR,
	OPT_OUTPUT_DIR, OPT_INTERVAL, OPT_KEEP_FILES, OPT_KEEP_BYTES,
	OPT_PUSH, OPT_PUSH_NAME, OPT_PUSH_HEADER, OPT_PUSH_TIMEOUT,
};

static const struct option agent_longopts[] = {
	{ "output-dir", required_argument, NULL, OPT_OUTPUT_DIR },
	{ "interval", required_argument, NULL, OPT_INTERVAL },
	{ "keep-files", required_argument, NULL, OPT_KEEP_FILES },
	{ "keep-bytes", required_argument, NULL, OPT_KEEP_BYTES },
	{ "push", required_argument, NULL, OPT_PUSH },
	{ "push-name", required_argument, NULL, OPT_PUSH_NAME },
	{ "push-header", required_argument, NULL, OPT_PUSH_HEADER },
	{ "push-timeout", required_argument, NULL, OPT_PUSH_TIMEOUT },
	{ "listen", required_argument, NULL, OPT_LISTEN },
	{ "socket", required_argument, NULL, OPT_SOCKET },
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

/* SIZE: bytes, or with a K, M or G suffix (powers of 1024). -1: bad. */
static int parse_size(const char *s, uint64_t *out)
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
		if (parse_size(v, &o->keep_bytes))
			break;
		return 0;
	case OPT_PUSH:
		o->push_url = v;
		if (agent_push_available())
			return 0;
		fprintf(stderr,
			"uwprof agent: --push: this uwprof was built without libcurl (install libcurl4-openssl-dev and rebuild)\n");
		return -1;
	case OPT_PUSH_NAME:
		o->push_name = v;
		return 0;
	case OPT_PUSH_HEADER:
		if (!strchr(v, ':') || o->nr_push_headers >= 16)
			break;
		a->headers[o->nr_push_headers++] = v;
		o->push_headers = a->headers;
		return 0;
	case OPT_PUSH_TIMEOUT:
		if (rec_parse_u32(v, 1, 600, &o->push_timeout_s))
			break;
		return 0;
	}
	for (i = 0; agent_longopts[i].val != c; i++)
		;
	fprintf(stderr, "uwprof agent: bad value '%s' for --%s\n", v,
		agent_longopts[i].name);
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
		fprintf(stderr, "uwprof agent: bad value '%s' for -F\n", v);
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
		fprintf(stderr, "uwprof agent: bad value '%s' for -p\n", v);
		return -1;
	case OPT_LISTEN:
		a->listen = v;
		return a->socket ? (fprintf(stderr,
			"uwprof agent: --listen and --socket exclude each other\n"), -1) : 0;
	case OPT_SOCKET:
		a->socket = v;
		return a->listen ? (fprintf(stderr,
			"uwprof agent: --listen and --socket exclude each other\n"), -1) : 0;
	case OPT_CGROUP:
	case OPT_COMM:
		if (!rec_parse_filter(o, c == OPT_CGROUP, v))
			return 0;
		fprintf(stderr, "uwprof agent: bad value '%s' for --%s\n", v,
			c == OPT_CGROUP ? "cgroup" : "comm");
		return -1;
	case OPT_CACHE_DIR:
		o->cache_dir = v;
		return 0;
	default:
		return c >= OPT_OUTPUT_DIR ? agent_out_opt(a, c, v) : -1;
	}
	fprintf(stderr, "uwprof agent: -a and -p exclude each other\n");
	return -1;
}

/* Returns -1 on a usage error (message printed), 1 for --help, 0 ok. */
static int agent_parse(struct rec_opts *o, struct agent_opts *a, int argc,
		       char **argv)
{
	int c;

	memset(o, 0, sizeof(*o));
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
		if (c == '?' || agent_opt(o, a, c, optarg))
			return -1;
	}
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
	if (!a->listen && !a->socket) {
		snprintf(a->listen_buf, sizeof(a->listen_buf), "127.0.0.1:%d",
			 AGENT_DEFAULT_PORT);
		a->listen = a->listen_buf;
	}
	return 0;
}

/* Until SIGINT or SIGTERM. */
static void agent_loop(struct recorder *r, struct agent_wins *ws)
{
	uint64_t last_prune = mono_ns();
	int wait_ms = AGENT_WAIT_MS;

	/* As record: get the CPU soon after a ring or a new process wakes us. */
	setpriority(PRIO_PROCESS, 0, r->nice0 - 10 < -20 ? -20 : r->nice0 - 10);
	while (!r->stop) {
		uint64_t now;

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
		      struct agent_http *h, struct agent_out *out)
{
	/* The consecutive window in progress ends here, and is written out. */
	agent_wins_stop(ws);
	if (h)
		agent_http_stop(h);
	uwprof_dev_stop(&r->dev);
	uwprof_rreader_finish(&r->rr);
	if (ws->out)
		agent_out_stop(out);
	agent_wins_fini(ws);
}

/* Sampling started: serves until stopped, then stops sampling. */
static int agent_serve(struct recorder *r, const struct agent_opts *a,
		       uint32_t flags)
{
	struct agent_source src = {
		.profile = agent_wins_profile, .metrics = agent_wins_metrics,
	};
	struct agent_out_opts oo = a->out;
	struct agent_period_src psrc;
	struct agent_wins ws;
	struct agent_http h;
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
		ret = agent_http_start(&h, a->listen, a->socket, &src, err,
				       sizeof(err));
	}
	if (ret) {
		fprintf(stderr, "uwprof agent: %s\n", err);
		agent_end(r, &ws, NULL, &out);
		return code;
	}
	if (a->socket)
		fprintf(stderr, "uwprof agent: serving on %s\n", a->socket);
	else
		fprintf(stderr, "uwprof agent: serving on http://%s/\n", a->listen);
	agent_loop(r, &ws);
	agent_end(r, &ws, &h, &out);
	fprintf(stderr, "uwprof agent: stopped (%llu samples, %llu lost)\n",
		(unsigned long long)r->samples, (unsigned long long)r->lost);
	return UWPROF_EX_OK;
}

static int agent_run(struct recorder *r, const struct agent_opts *a)
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
	return agent_serve(r, a, flags);
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
	struct agent_opts a = { .listen = NULL };
	int ret;

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
	ret = agent_parse(&r->o, &a, argc, argv);
	if (ret) {
		if (ret > 0)
			agent_usage(stdout);
		else
			fprintf(stderr, "(see 'uwprof agent --help')\n");
		free(r->o.pids);
		free(r);
		return ret > 0 ? UWPROF_EX_OK : UWPROF_EX_USAGE;
	}
	ret = agent_out_check(&a.out);
	if (!ret)
		ret = agent_run(r, &a);
	rec_free(r);
	free(r);
	return ret;
}
