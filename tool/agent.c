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
 * recorder. Processes that are gone are dropped from its state.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
};

static void agent_usage(FILE *f)
{
	fprintf(f,
"usage: uwprof agent [--listen ADDR:PORT | --socket PATH] [-F HZ]\n"
"                    [-a | -p PID[,PID...]] [--cgroup PATH] [--comm NAME]\n"
"                    [--cache-dir DIR]\n"
"  Sample continuously and serve CPU profiles (gzipped pprof) over HTTP:\n"
"    GET /debug/pprof/profile?seconds=N[&pid=PID][&comm=NAME][&cgroup=PATH]\n"
"  the next N seconds (default %d, at most %d) of user call stacks, and\n"
"    GET /  an index page.\n"
"  --listen ADDR:PORT  numeric address and port (default 127.0.0.1:%d)\n"
"  --socket PATH       a unix socket instead (removed at exit)\n"
"  -F, --freq HZ       samples per second per CPU (default %d)\n"
"  -a, --all-cpus      every process on the system (the default)\n"
"  -p, --pid PIDS      only these processes (comma separated)\n"
"  --cgroup PATH       only tasks in this cgroup v2 directory or below it\n"
"                      (/system.slice/x.service, or /sys/fs/cgroup/...)\n"
"  --comm NAME         only threads named NAME (at most 15 bytes)\n"
"  --cache-dir DIR     table cache (as 'uwprof record')\n"
"  No authentication: anyone who can connect gets profiles of the whole\n"
"  host (function names, paths, pids). Keep the default loopback address\n"
"  or a unix socket; put a proxy with authentication in front for remote\n"
"  access. Stops on SIGINT or SIGTERM.\n"
"  exit: as 'uwprof record' (1 error, 2 usage, 3 no module, 4 permission,\n"
"        5 no such process or cgroup, 7 another session is sampling and\n"
"        the loaded module samples one at a time)\n",
		AGENT_DEFAULT_SECONDS, AGENT_MAX_SECONDS, AGENT_DEFAULT_PORT,
		AGENT_DEFAULT_FREQ);
}

enum { OPT_LISTEN = 256, OPT_SOCKET, OPT_CGROUP, OPT_COMM, OPT_CACHE_DIR };

static const struct option agent_longopts[] = {
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
		return -1;
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
		rec_drain(r);
		wait_ms = rec_procs_refresh(r, 0, AGENT_WAIT_MS);
		wait_ms = agent_wins_tick(ws, wait_ms);
		rec_reap(r);
		now = mono_ns();
		if (now - last_prune >= AGENT_PRUNE_NS) {
			rec_procs_prune(r);
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

/* Sampling started: serves until stopped, then stops sampling. */
static int agent_serve(struct recorder *r, const struct agent_opts *a,
		       uint32_t flags)
{
	struct agent_source src = {
		.profile = agent_wins_profile, .metrics = agent_wins_metrics,
	};
	struct agent_wins ws;
	struct agent_http h;
	char err[512], about[1400];
	int ret;

	ret = agent_wins_init(&ws, r, flags, err, sizeof(err));
	if (!ret) {
		src.ctx = &ws;
		agent_about(r, about, sizeof(about));
		src.about = about;
		ret = agent_http_start(&h, a->listen, a->socket, &src, err,
				       sizeof(err));
		if (ret)
			agent_wins_fini(&ws);
	}
	if (ret) {
		fprintf(stderr, "uwprof agent: %s\n", err);
		uwprof_dev_stop(&r->dev);
		uwprof_rreader_finish(&r->rr);
		return UWPROF_EX_ERROR;
	}
	if (a->socket)
		fprintf(stderr, "uwprof agent: serving on %s\n", a->socket);
	else
		fprintf(stderr, "uwprof agent: serving on http://%s/\n", a->listen);
	agent_loop(r, &ws);
	agent_wins_stop(&ws);
	agent_http_stop(&h);
	uwprof_dev_stop(&r->dev);
	uwprof_rreader_finish(&r->rr);
	agent_wins_fini(&ws);
	fprintf(stderr, "uwprof agent: stopped (%llu samples, %llu lost)\n",
		(unsigned long long)r->samples, (unsigned long long)r->lost);
	return UWPROF_EX_OK;
}

static int agent_run(struct recorder *r, const struct agent_opts *a)
{
	struct rec_launch l = { .go_w = -1, .err_r = -1 };
	uint32_t flags;
	int code;

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
	ret = agent_run(r, &a);
	rec_free(r);
	free(r);
	return ret;
}
