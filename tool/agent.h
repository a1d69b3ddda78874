/* SPDX-License-Identifier: GPL-2.0 */
/*
 * 'uwprof agent': one continuous sampling session serving pprof profiles
 * over HTTP. Its parts:
 *
 *	agent.c		options, the session's loop, start and stop
 *	agent_http.c	the HTTP layer (libmicrohttpd): routes, request
 *			checks, answers; the profiles come from a source
 *	agent_window.c	profile windows: a request's next N seconds of
 *			records written to a profile file of its own, then
 *			read back and turned into a gzipped pprof
 *	agent_metrics.c	the /metrics page: the agent's own state
 *
 * The HTTP layer knows nothing of the recorder, so that a host test
 * (tests/tool/agent-http-test.c) drives it with a fake source.
 */
#ifndef UWPROF_TOOL_AGENT_H
#define UWPROF_TOOL_AGENT_H

#include <stddef.h>
#include <stdint.h>

#define AGENT_DEFAULT_PORT	6061
#define AGENT_DEFAULT_FREQ	19
#define AGENT_DEFAULT_SECONDS	30
#define AGENT_MAX_SECONDS	300
/* Requests served at once; more wait in the kernel's listen queue. */
#define AGENT_MAX_CONNECTIONS	16

/* A profile request, checked. */
struct agent_req {
	unsigned int	seconds;
	uint32_t	pid;		/* 0: every process */
	char		comm[16];	/* "": every name */
	char		cgroup[1024];	/* "": every cgroup; else it and below */
};

/* One query argument as the client sent it (value NULL: no '='). */
struct agent_arg {
	const char	*key;
	const char	*value;
};

enum agent_route {
	AGENT_ROUTE_INDEX,
	AGENT_ROUTE_PROFILE,
	AGENT_ROUTE_METRICS,
};

/*
 * Checks a request: method, path, query arguments. Returns 200 with
 * *route (and for a profile *q) set, or the HTTP status to answer (400,
 * 404, 405) with one line in 'msg'.
 */
int agent_req_parse(const char *method, const char *path,
		    const struct agent_arg *args, size_t nr_args,
		    enum agent_route *route, struct agent_req *q,
		    char *msg, size_t msglen);

/*
 * Where profiles come from. profile() blocks for the request's window;
 * returns 200 with a malloc'd gzipped pprof in *buf, or an HTTP status
 * (500, 503) with one line in 'msg'. Called from several threads at once.
 */
struct agent_source {
	int	(*profile)(void *ctx, const struct agent_req *q, uint8_t **buf,
			   size_t *len, char *msg, size_t msglen);
	/*
	 * The agent's own state as Prometheus text, malloc'd in *text;
	 * returns 0 or a negative errno. NULL: no /metrics page.
	 */
	int	(*metrics)(void *ctx, char **text);
	void	*ctx;
	const char *about;	/* a line for the index page */
};

struct MHD_Daemon;

struct agent_http {
	struct MHD_Daemon *d;
	int		fd;		/* the listening socket until the daemon has it */
	int		port;		/* TCP: the port bound (0 asked: chosen) */
	const char	*socket_path;	/* unix socket to remove at stop, or NULL */
	const struct agent_source *src;
};

/*
 * Listens on 'listen' ("ADDR:PORT", "[ADDR6]:PORT") or, when 'socket_path'
 * is set, on that unix socket, and serves from 'src' on libmicrohttpd's
 * threads. Returns 0, or a negative errno with one line in 'err'.
 */
int agent_http_start(struct agent_http *h, const char *listen,
		     const char *socket_path, const struct agent_source *src,
		     char *err, size_t errlen);
/* Stops serving (waits for the answers in progress) and removes the socket. */
void agent_http_stop(struct agent_http *h);

/* ------------------------------------------------ agent_window.c */

#include <pthread.h>

struct recorder;
struct agent_win;

/* The recorder's counters for /metrics, copied by its thread. */
struct agent_state {
	uint64_t	processes, objects, objects_dropped;
	uint64_t	samples, lost, windows;
};

struct agent_wins {
	pthread_mutex_t	lock;		/* the list and the windows' states */
	pthread_cond_t	cond;		/* a window done or failed */
	struct agent_win *list;
	int		wake_fd;	/* eventfd: a request waits to be opened */
	char		dir[64];	/* private directory of the windows' files */
	uint64_t	serial;
	int		stopping;
	pthread_mutex_t	build_lock;	/* the report model is single-threaded */
	struct recorder	*r;
	uint32_t	start_flags;
	struct agent_state state;	/* under 'lock' */
};

int agent_wins_init(struct agent_wins *ws, struct recorder *r,
		    uint32_t start_flags, char *err, size_t errlen);
/*
 * The recorder's thread, after each drain: opens the windows requested
 * (their files start with every object and live process's mappings known)
 * and closes those whose time is up. Returns the milliseconds until the
 * next one ends, at most 'max_ms'.
 */
int agent_wins_tick(struct agent_wins *ws, int max_ms);
/* Stopping: requests still waiting are answered 503. */
void agent_wins_stop(struct agent_wins *ws);
/* After the HTTP server stopped: the directory removed. */
void agent_wins_fini(struct agent_wins *ws);
/* The agent_source.profile of the real agent ('ctx': the agent_wins). */
int agent_wins_profile(void *ctx, const struct agent_req *q, uint8_t **buf,
		       size_t *len, char *msg, size_t msglen);

/* agent_metrics.c: the agent_source.metrics of the real agent. */
int agent_wins_metrics(void *ctx, char **text);

/* argv[0] is "agent"; returns the process exit code. */
int uwprof_cmd_agent(int argc, char **argv);

#endif /* UWPROF_TOOL_AGENT_H */
