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
 * --output-dir, --push or --otlp, consecutive windows of the whole host
 * are also written and pushed (agent_output.c).
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
#include "agent_opts.h"
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
 * Until SIGINT or SIGTERM, or the front end's end (r->child: it died, or
 * closed the control socket). Returns 1 for the latter. SIGHUP with
 * --config: the file read again (agent_opts_reload()), nothing stopped.
 */
static int agent_loop(struct recorder *r, struct agent_wins *ws,
		      struct agent_ipc_srv *ipc, const struct agent_config *cfg)
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
		if (r->reload) {
			r->reload = 0;
			agent_opts_reload(cfg, ws->out, r->o.freq);
		}
		agent_wins_tick(ws, 0, 1);
		rec_drain(r);
		wait_ms = rec_procs_refresh(r, 0, AGENT_WAIT_MS);
		wait_ms = agent_wins_tick(ws, wait_ms, 0);
		rec_reap(r);
		now = mono_ns();
		if (now - last_prune >= AGENT_PRUNE_NS) {
			rec_procs_prune(r);
			rec_py_prune(r);
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
	if (a->out.dir || a->out.push_url || a->out.otlp_url) {
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
	ret = agent_loop(r, &ws, &ipc, a->cfg);
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
	if (agent_opts_load(&cfg, argc, argv, err, sizeof(err))) {
		fprintf(stderr, "uwprof agent: %s\n", err);
		free(r);
		return UWPROF_EX_USAGE;
	}
	ret = agent_opts_parse(&r->o, &a, &cfg);
	/* A hangup stops an agent without a file; with one, it re-reads it. */
	r->hup_reload = cfg.path != NULL;
	if (ret) {
		if (ret > 0)
			agent_opts_usage(stdout);
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
		ret = agent_opts_headers_read(&a);
	if (!ret)
		ret = agent_opts_out_check(&a.out);
	if (!ret)
		ret = agent_run(r, &a, &front);
	if (up)
		agent_front_down(r, &h, &front);
	agent_opts_free(&a);
	if (token) {
		explicit_bzero(token, strlen(token));
		free(token);
	}
	rec_free(r);
	free(r);
	agent_config_free(&cfg);
	return ret;
}
