/* SPDX-License-Identifier: GPL-2.0 */
/*
 * 'uwprof agent': one continuous sampling session serving pprof profiles
 * over HTTP. Its parts:
 *
 *	agent.c		the session's loop, start and stop
 *	agent_opts.c	options: parsed at start, read again on SIGHUP
 *	agent_http.c	the HTTP layer (libmicrohttpd): routes, request
 *			checks, answers; the profiles come from a source
 *	agent_front.c	the process that runs the HTTP layer: forked
 *			before sampling starts, every privilege dropped
 *			before it reads a byte from the network
 *	agent_ipc.c	the messages between that front end and the
 *			privileged sampler: the request (checked as
 *			untrusted by the sampler), the answer streamed back
 *	agent_window.c	profile windows: a request's next N seconds of
 *			records written to a profile file of its own, then
 *			read back and turned into a gzipped pprof
 *	agent_metrics.c	the /metrics page: the agent's own state
 *	agent_output.c	consecutive windows of the whole host (--interval),
 *			each written to a directory and/or pushed
 *	agent_files.c	the directory: files named by time, written
 *			atomically, the oldest removed past a count or size
 *	agent_push.c	the push to a Pyroscope-compatible /ingest URL
 *			(libcurl; agent_push_none.c in a build without it)
 *
 * The HTTP layer knows nothing of the recorder, so that a host test
 * (tests/tool/agent-http-test.c) drives it with a fake source; the output
 * side takes its windows from a source too (tests/tool/agent-out-test.c).
 */
#ifndef UWPROF_TOOL_AGENT_H
#define UWPROF_TOOL_AGENT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define AGENT_DEFAULT_PORT	6061
/* Where the agent listens unless --listen asks for TCP. */
#define AGENT_DEFAULT_SOCKET	"/run/uwprof/agent.sock"
#define AGENT_DEFAULT_SOCKET_MODE 0600
#define AGENT_DEFAULT_FREQ	19
#define AGENT_DEFAULT_SECONDS	30
#define AGENT_MAX_SECONDS	300
/* Connections at once; more are closed as they come. */
#define AGENT_MAX_CONNECTIONS	16
/*
 * Of those, per client: per address on TCP, per user on the unix socket,
 * so that one client holding connections open leaves slots to others.
 */
#define AGENT_PER_CLIENT	4
/* Seconds a connection may stay silent before it is dropped (slowloris). */
#define AGENT_CONN_TIMEOUT	10
/* Bytes of a --token-file's token, at most. */
#define AGENT_MAX_TOKEN		4096
/* --interval, --keep-files, --keep-bytes, --push-timeout */
#define AGENT_DEFAULT_INTERVAL	60
#define AGENT_MAX_INTERVAL	3600
#define AGENT_DEFAULT_KEEP_FILES 1440
#define AGENT_DEFAULT_KEEP_BYTES (256ULL << 20)
#define AGENT_DEFAULT_PUSH_TIMEOUT 10

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

/* The client of a request, for profile() to see whether it went away. */
struct agent_conn {
	int		fd;
};

/*
 * 1 when the client closed its side of the connection (or it broke):
 * nobody waits for the answer any more. Never blocks.
 */
int agent_access_conn_gone(const struct agent_conn *c);

/*
 * Where profiles come from. profile() blocks for the request's window,
 * ending early when agent_access_conn_gone(conn) (conn may be NULL: never);
 * returns 200 with a malloc'd gzipped pprof in *buf, or an HTTP status
 * (500, 503) with one line in 'msg'. Called from several threads at once.
 */
struct agent_source {
	int	(*profile)(void *ctx, const struct agent_req *q,
			   const struct agent_conn *conn, uint8_t **buf,
			   size_t *len, char *msg, size_t msglen);
	/*
	 * The agent's own state as Prometheus text, malloc'd in *text;
	 * returns 0 or a negative errno. NULL: no /metrics page.
	 */
	int	(*metrics)(void *ctx, char **text);
	void	*ctx;
	const char *about;	/* a line for the index page */
	/* Or that line asked for (0 or -errno); NULL: 'about' as it is. */
	int	(*about_get)(void *ctx, char *buf, size_t len);
};

struct MHD_Daemon;

/* Where and to whom the agent answers (agent_access_opts_init: the defaults). */
struct agent_http_opts {
	const char	*listen;	/* "ADDR:PORT": TCP; NULL: socket_path */
	const char	*socket_path;
	mode_t		socket_mode;
	gid_t		socket_gid;	/* (gid_t)-1: the agent's group */
	/* TCP: Host names accepted besides localhost and the address */
	const char	**allow_hosts;
	size_t		nr_allow_hosts;
	const char	*token;		/* a bearer token required, or NULL */
	unsigned int	timeout_s;	/* silence before a connection is dropped */
	unsigned int	per_client;	/* connections per address or user */
};

/* The unix socket AGENT_DEFAULT_SOCKET, 0600, no TCP, no token. */
void agent_access_opts_init(struct agent_http_opts *o);

/*
 * Reads a bearer token from 'path' (one line; surrounding white space
 * dropped) into a malloc'd *token. 0, or -errno with one line in 'err'.
 * With 0, 'err' is a warning when others may read the file, else "".
 */
int agent_access_token_read(const char *path, char **token, char *err,
			  size_t errlen);

struct agent_http_peer;

struct agent_http {
	struct MHD_Daemon *d;
	int		fd;		/* the listening socket until the daemon has it */
	int		port;		/* TCP: the port bound (0 asked: chosen) */
	const char	*socket_path;	/* unix socket to remove at stop, or NULL */
	dev_t		sock_dev;	/* ... if it is still this one */
	ino_t		sock_ino;
	struct agent_http_opts o;
	char		listen_host[64];	/* TCP: ADDR of ADDR:PORT, as a Host */
	const struct agent_source *src;
	pthread_mutex_t	lock;		/* peers */
	struct agent_http_peer *peers;	/* unix: connections per user */
	/* read by tests while served: __atomic */
	uint64_t	refused_host, refused_token, refused_peer;
};

/*
 * Listens on o->listen or o->socket_path and serves from 'src' on
 * libmicrohttpd's threads. Returns 0, or a negative errno with one line
 * in 'err'. 'o' and what it points to must outlive the server.
 */
int agent_http_start(struct agent_http *h, const struct agent_http_opts *o,
		     const struct agent_source *src, char *err, size_t errlen);
/*
 * The same in two steps: the socket bound and listened on (h->fd), then,
 * maybe in another process, served. 0 or -errno with one line in 'err'.
 */
int agent_http_listen(struct agent_http *h, const struct agent_http_opts *o,
		      char *err, size_t errlen);
int agent_http_serve(struct agent_http *h, const struct agent_source *src,
		     char *err, size_t errlen);
/* Stops serving (waits for the answers in progress) and removes the socket. */
void agent_http_stop(struct agent_http *h);

/* ------------------------------------------------ agent_ipc.c */

/*
 * The front end's request to the sampler: one SOCK_SEQPACKET message of
 * exactly this size on the control socket, carrying (SCM_RIGHTS) one end
 * of a fresh AF_UNIX stream socketpair on which the sampler answers and
 * which the front end closes when its HTTP client goes away (the
 * sampler's agent_access_conn_gone() then sees it: the window is
 * cancelled). Fixed-width fields, natural alignment; every field the
 * endpoint does not use, and 'reserved', zero; strings NUL-terminated
 * with zeros after.
 */
#define AGENT_IPC_MAGIC		0x69707775U	/* "uwpi" */
#define AGENT_IPC_VERSION	1

enum agent_ipc_ep {
	AGENT_IPC_ABOUT = 1,	/* the index page's line */
	AGENT_IPC_METRICS,
	AGENT_IPC_PROFILE,
};

enum agent_ipc_client {
	AGENT_IPC_CLIENT_NONE,
	AGENT_IPC_CLIENT_UID,	/* unix socket: the peer's uid, 4 bytes */
	AGENT_IPC_CLIENT_IPV4,	/* TCP: the address, 4 bytes */
	AGENT_IPC_CLIENT_IPV6,	/* 16 bytes */
};

struct agent_ipc_msg {
	uint32_t	magic;		/* AGENT_IPC_MAGIC */
	uint16_t	version;	/* AGENT_IPC_VERSION */
	uint16_t	size;		/* sizeof(struct agent_ipc_msg) */
	uint32_t	endpoint;	/* enum agent_ipc_ep */
	uint32_t	seconds;	/* PROFILE: 1..AGENT_MAX_SECONDS */
	uint32_t	pid;		/* PROFILE: 0 (all) or up to 4194304 */
	uint32_t	client_kind;	/* enum agent_ipc_client */
	uint8_t		client[16];	/* the rest zero */
	char		comm[16];	/* PROFILE: "" or a name */
	char		cgroup[1024];	/* PROFILE: "" or a path from '/' */
	uint64_t	reserved[2];
};

/* The sampler's answer on the request's socket, then 'len' bytes of body. */
struct agent_ipc_resp {
	uint32_t	magic;		/* AGENT_IPC_MAGIC */
	uint32_t	status;		/* an HTTP status, 200..599 */
	uint64_t	len;		/* 200: the body; else a message */
};

/* A body larger than this is refused by the front end. */
#define AGENT_IPC_MAX_BODY	(1ULL << 30)

/* A request as the sampler takes it, checked. */
struct agent_ipc_req {
	enum agent_ipc_ep endpoint;
	struct agent_req q;
	uint32_t	client_kind;
	uint8_t		client[16];
};

/* Front end: the message for a request. */
void agent_ipc_encode(struct agent_ipc_msg *m, enum agent_ipc_ep ep,
		      const struct agent_req *q, uint32_t client_kind,
		      const uint8_t client[16]);
/*
 * Sampler: 'n' bytes received checked as untrusted. 0 with *r, or -EINVAL
 * (-EMSGSIZE for a wrong length) with the reason in 'why'.
 */
int agent_ipc_decode(const void *buf, size_t n, struct agent_ipc_req *r,
		     char *why, size_t whylen);
/*
 * Front end, on a request's thread: sends 'm' on 'ctl' and waits for the
 * answer; closing the request's socket when agent_access_conn_gone(conn).
 * Returns the status with a malloc'd *buf (200), or with 'msg' (others).
 */
int agent_ipc_call(int ctl, const struct agent_ipc_msg *m,
		   const struct agent_conn *conn, uint8_t **buf, size_t *len,
		   char *msg, size_t msglen);

/* The sampler's side: a thread reading 'ctl', a thread per request. */
struct agent_ipc_client_count;

struct agent_ipc_srv {
	int		ctl;
	const struct agent_source *src;
	pthread_t	thread;
	int		running;
	pthread_mutex_t	lock;		/* busy, clients, stopping */
	pthread_cond_t	idle;		/* a request done */
	unsigned int	busy;		/* requests being answered */
	struct agent_ipc_client_count *clients;
	int		stopping;
	/* read while served: __atomic */
	int		ended;		/* the front end closed its end */
	uint64_t	served, refused, limited;
};

/*
 * Serves the requests on 'ctl' from 'src', each on its own thread, at
 * most AGENT_MAX_CONNECTIONS at once and AGENT_PER_CLIENT per client.
 * Every message is checked; a bad one is refused (answered 400 when it
 * carried a socket, counted, said a few times). Never blocks on the front
 * end: answers are written with a time limit. 0 or -errno with 'err'.
 */
int agent_ipc_serve(struct agent_ipc_srv *s, int ctl,
		    const struct agent_source *src, char *err, size_t errlen);
/* 1 once the front end closed the control socket (it exited or died). */
int agent_ipc_ended(struct agent_ipc_srv *s);
/* Shuts 'ctl' down (the front end sees it and exits), waits for the answers. */
void agent_ipc_stop(struct agent_ipc_srv *s);

/* ------------------------------------------------ agent_front.c */

/* The unprivileged user of the front end, and how it is run. */
struct agent_front {
	pid_t		pid;		/* the front end, or 0 */
	int		ctl;		/* the sampler's end of the control socket */
	uid_t		uid;
	gid_t		gid;
	int		switch_user;	/* 0: not root, the uid stays */
};

/*
 * The front end's user: 'name' (a name or a number, NULL: "nobody"). Not
 * root: the user stays as it is ('name' must be NULL). 0, or -1 with one
 * line in 'err'.
 */
int agent_front_user(struct agent_front *f, const char *name, char *err,
		     size_t errlen);
/*
 * Forks the front end, which drops every privilege (supplementary
 * groups, gid, uid, every capability including the bounding set, no new
 * privileges, not dumpable, no core, agent_front_seccomp()) and only
 * then serves 'h' (bound by
 * agent_http_listen()) with requests forwarded over the control socket.
 * Call it while the process has one thread; the parent keeps f->ctl and
 * closes h's socket. 0, or -errno with one line in 'err'.
 */
int agent_front_start(struct agent_front *f, struct agent_http *h, char *err,
		      size_t errlen);
/*
 * The front end's seccomp filter, installed in the calling thread (after
 * no_new_privs, or with CAP_SYS_ADMIN): EPERM for executing, tracing,
 * opening files, new sockets other than socketpairs, namespaces, mounts,
 * modules, BPF, perf, keys, io_uring and changes to files; another
 * architecture's calls kill. 0, or -1 said. Exposed for its test.
 */
int agent_front_seccomp(void);
/*
 * The front end ended (f->ctl closed): waited for up to 'wait_ms', then
 * killed. Writes how it ended in 'how' and returns 1 when it had died
 * on its own (not of our SIGKILL), else 0.
 */
int agent_front_reap(struct agent_front *f, int wait_ms, char *how,
		     size_t howlen);

/* ------------------------------------------------ agent_access.c */

struct MHD_Connection;

/* TCP: 1 when 'host' (a Host header, or NULL) names this agent. */
int agent_access_host_ok(const struct agent_http *h, const char *host);
/* 1 when no token is required or the request carries it. */
int agent_access_token_ok(const struct agent_http *h, struct MHD_Connection *c);
/*
 * A connection started or 'closed' (libmicrohttpd's notice, 'cls': the
 * agent_http; *socket_ctx: the connection's own pointer).
 */
void agent_access_notify(void *cls, struct MHD_Connection *c, void **socket_ctx,
			 int closed);
/* After the server stopped: what the notices kept, freed. */
void agent_access_fini(struct agent_http *h);

/* ------------------------------------------------ agent_window.c */

struct recorder;
struct agent_win;

/* The recorder's counters for /metrics, copied by its thread. */
struct agent_state {
	uint64_t	processes, objects, objects_dropped;
	uint64_t	samples, lost, windows;
	uint64_t	cancelled;	/* requests whose client went away */
	/* tracked processes running CPython: frames walked, or not */
	uint64_t	py_walked, py_not;
};

struct agent_out;

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
	struct agent_out *out;		/* --output-dir / --push, or NULL */
};

int agent_wins_init(struct agent_wins *ws, struct recorder *r,
		    uint32_t start_flags, char *err, size_t errlen);
/*
 * The recorder's thread: opens the windows due (their files start with
 * every object and live process's mappings known) and, unless
 * 'open_only', closes those whose time is up. Called before each drain
 * with 'open_only' (records held back while the loop was busy go to
 * windows due meanwhile) and after it. Returns the milliseconds until the
 * next one opens or ends, at most 'max_ms'.
 */
int agent_wins_tick(struct agent_wins *ws, int max_ms, int open_only);
/*
 * Stopping: requests still waiting are answered 503; the consecutive
 * window in progress ends now and is still written out.
 */
void agent_wins_stop(struct agent_wins *ws);
/* After the HTTP server stopped: the directory removed. */
void agent_wins_fini(struct agent_wins *ws);
/*
 * The agent_source.profile of the real agent ('ctx': the agent_wins). A
 * client gone cancels its window: the file is removed and its samples
 * are not written any more.
 */
int agent_wins_profile(void *ctx, const struct agent_req *q,
		       const struct agent_conn *conn, uint8_t **buf,
		       size_t *len, char *msg, size_t msglen);

/* agent_metrics.c: the agent_source.metrics of the real agent. */
int agent_wins_metrics(void *ctx, char **text);

/* ------------------------------------------------ agent_output.c */

/* Where consecutive windows come from: the recorder's, or a test's fake. */
struct agent_period_src {
	/*
	 * Asks for the window [start_ns, end_ns) of CLOCK_MONOTONIC; *h is
	 * what wait() takes. Returns 0, -ESHUTDOWN once stopping, or -errno.
	 */
	int	(*queue)(void *ctx, uint64_t start_ns, uint64_t end_ns, void **h);
	/*
	 * Waits for it: 200 with a malloc'd gzipped pprof in *buf and the
	 * span it covers in span[] (a later start when it opened late, an
	 * earlier end when the agent stops), or an HTTP status with 'msg'.
	 */
	int	(*wait)(void *ctx, void *h, uint8_t **buf, size_t *len,
			uint64_t span[2], char *msg, size_t msglen);
	void	*ctx;
	/*
	 * Moves the end of a window asked for and not yet ended to 'end_ns'
	 * (after its start): a reload's new --interval, from the next
	 * window. NULL: the windows keep their span as asked.
	 */
	void	(*retime)(void *ctx, void *h, uint64_t end_ns);
	/*
	 * As wait(), and when 'otlp' is not NULL the same profile also as a
	 * malloc'd gzipped OTLP ExportProfilesServiceRequest in *otlp,
	 * *otlp_len (*otlp NULL when it could not be encoded). NULL: the
	 * source has no OTLP; wait() is called instead.
	 */
	int	(*wait_otlp)(void *ctx, void *h, uint8_t **buf, size_t *len,
			     uint8_t **otlp, size_t *otlp_len, uint64_t span[2],
			     char *msg, size_t msglen);
};

/* agent_window.c: the recorder's windows as such a source. */
void agent_wins_period_src(struct agent_wins *ws, struct agent_period_src *src);

struct agent_out_opts {
	const char	*dir;		/* --output-dir, or NULL */
	unsigned int	interval_s;
	uint64_t	keep_files;
	uint64_t	keep_bytes;
	const char	*push_url;	/* --push, or NULL */
	const char	*push_name;	/* NULL: uwprof{hostname=HOST} */
	const char	**push_headers;	/* "Name: value" */
	size_t		nr_push_headers;	/* at most AGENT_MAX_PUSH_HEADERS */
	unsigned int	push_timeout_s;	/* --push's and --otlp's */
	const char	*otlp_url;	/* --otlp, or NULL */
	uint32_t	freq;		/* the sampling rate, told to the server */
};

/* --push-header and --push-header-file lines, together. */
#define AGENT_MAX_PUSH_HEADERS	64

/*
 * Appends the headers of --push-header-file 'path' (one "Name: value" a
 * line; blank lines and lines starting with '#' skipped) to the malloc'd
 * array *hdrs of *n malloc'd strings. They stay out of argv, where every
 * local user reads them. 0, or -errno with one line in 'err'.
 */
int agent_out_headers_read(const char *path, const char ***hdrs, size_t *n,
			   char *err, size_t errlen);

/*
 * Kinds of failure (errno values, curl codes, HTTP statuses) said once in
 * the agent's life: a disk that fills up again and again, or a server that
 * comes and goes, is one line per kind, and /metrics counts every time.
 */
struct agent_once {
	uint64_t	bits[16];
	int		streak;	/* one was said since the last success */
};

/* 1 the first time 'kind' (0..1023) is seen. */
static inline int agent_once(struct agent_once *o, unsigned int kind)
{
	uint64_t bit = 1ULL << (kind % 64);
	unsigned int w = (kind / 64) % 16;

	if (o->bits[w] & bit)
		return 0;
	o->bits[w] |= bit;
	o->streak = 1;
	return 1;
}

/* A success: 1 when a failure was said since the last one (say it's over). */
static inline int agent_once_over(struct agent_once *o)
{
	int said = o->streak;

	o->streak = 0;
	return said;
}

/* The directory of --output-dir (agent_files.c). */
struct agent_files {
	char		*dir;
	uint64_t	keep_files, keep_bytes;
	struct agent_once said;
	/* read by /metrics while written: __atomic */
	uint64_t	written, removed, errors;
};

/*
 * Checks that 'dir' is a writable directory (created 0700 when missing)
 * and removes temporary files an earlier agent left in it. 0 or -errno
 * with one line in 'err'. agent_files_check(): the check alone, which a
 * reload makes while the output may be writing in the directory.
 */
int agent_files_check(const char *dir, char *err, size_t errlen);
int agent_files_init(struct agent_files *f, const char *dir,
		     uint64_t keep_files, uint64_t keep_bytes, char *err,
		     size_t errlen);
/*
 * Writes one window's profile as DIR/uwprof-YYYYMMDDTHHMMSSZ.pb.gz (its
 * start, UTC), atomically, after removing the oldest so that at most
 * keep_files files and keep_bytes bytes remain. A failure is said once
 * per kind and counted; returns 0 or -errno.
 */
int agent_files_write(struct agent_files *f, uint64_t start_real_ns,
		      const uint8_t *buf, size_t len);
void agent_files_fini(struct agent_files *f);

/* The push (agent_push.c, or agent_push_none.c without libcurl). */
struct push_item;

struct agent_push {
	pthread_t	thread;
	pthread_mutex_t	lock;		/* the queue, the counters, stopping */
	pthread_cond_t	cond;		/* an item queued, or stopping */
	struct push_item *head, **tailp;
	size_t		queued;
	int		stopping;
	int		running;
	int		form;		/* AGENT_PUSH_PYROSCOPE or _OTLP */
	void		*curl;		/* CURL *, this thread's only */
	char		*url;		/* URL/ingest, no query; --otlp's as given */
	char		*name;
	void		*headers;	/* struct curl_slist * */
	unsigned int	timeout_ms;
	unsigned int	retry_ms;	/* first wait before a retry; doubles */
	uint32_t	freq;
	uint64_t	pushed, failed, retries, dropped;
	/* OTLP: 2xx answers with a partial_success, the profiles they reject */
	uint64_t	partial, rejected;
	struct agent_once said;
	int		said_partial;	/* a partial_success's message said */
};

/* What a push sends, and how. */
enum {
	/* --push: a multipart form to URL/ingest (Pyroscope) */
	AGENT_PUSH_PYROSCOPE,
	/* --otlp: the gzipped ExportProfilesServiceRequest as the body */
	AGENT_PUSH_OTLP,
};

/* Profiles waiting to be pushed, at most; a full queue drops its oldest. */
#define AGENT_PUSH_QUEUE	4
/* Tries per profile, while the agent runs (one while it stops). */
#define AGENT_PUSH_TRIES	3
/* A 429's or 503's Retry-After (seconds) is waited, up to this. */
#define AGENT_PUSH_RETRY_AFTER_MAX	60

/* 1 when this build can push (it has libcurl). */
int agent_push_available(void);
/*
 * Whether --push's ('form' AGENT_PUSH_PYROSCOPE) or --otlp's URL is one
 * to push to: 0, or -EINVAL with 'err'.
 */
int agent_push_url_check(const char *url, int form, char *err, size_t errlen);
/*
 * Checks the URL and starts the pushing thread. Does libcurl's global
 * set-up, which is safe while the agent's other threads run because none
 * of them uses libcurl or a TLS library. 0 or -errno with one line in
 * 'err'.
 */
int agent_push_start(struct agent_push *p, const struct agent_out_opts *o,
		     int form, char *err, size_t errlen);
/*
 * Takes 'buf' (malloc'd) to push as the window [from, until) (wall clock,
 * ns). Never blocks on the network.
 */
void agent_push_enqueue(struct agent_push *p, uint8_t *buf, size_t len,
			uint64_t from_real_ns, uint64_t until_real_ns);
/* Pushes what is queued (one try each), then ends the thread. */
void agent_push_stop(struct agent_push *p);

struct agent_out_counts {
	uint64_t	windows, windows_failed;
	uint64_t	files_written, files_removed, file_errors;
	uint64_t	pushed, push_failed, push_retries, push_dropped;
	uint64_t	otlp_pushed, otlp_failed, otlp_retries, otlp_dropped;
	uint64_t	otlp_partial, otlp_rejected;
};

struct agent_out {
	struct agent_out_opts o;	/* the thread's, once started */
	struct agent_out_opts *own;	/* o's strings when a reload set them */
	struct agent_period_src src;
	/*
	 * 'pending'; and while the thread swaps them for a reload's, 'files',
	 * 'push', 'has_*' and 'base' (agent_out_counts() reads them under it)
	 */
	pthread_mutex_t	lock;
	struct agent_out_opts *pending;	/* a reload's, until the thread takes it */
	struct agent_out_counts base;	/* of the directories and pushes replaced */
	struct agent_files files;
	struct agent_push push;
	struct agent_push otlp;		/* --otlp's */
	int		has_files, has_push, has_otlp;
	int		files_failed;	/* agent_out_start(): the directory is not usable */
	pthread_t	thread;
	int		running;
	uint64_t	windows, windows_failed;	/* __atomic */
	struct agent_once said;
};

/*
 * Starts the thread that asks 'src' for consecutive windows of
 * o->interval_s seconds and hands each to the directory and the push.
 * 0 or -errno with one line in 'err'.
 */
int agent_out_start(struct agent_out *out, const struct agent_out_opts *o,
		    const struct agent_period_src *src, char *err,
		    size_t errlen);
/*
 * A reload: 'o' copied (strings and headers too), for the thread to take
 * when the window in progress ends: that window's profile is written and
 * pushed as 'o' says, a changed directory or push target is switched to
 * (the old push first sends what it holds), and a new interval_s is the
 * next window's span. 0, or -ENOMEM (nothing changes).
 */
int agent_out_reload(struct agent_out *out, const struct agent_out_opts *o);
/* A copy made by agent_out_reload(), headers wiped; NULL: nothing. */
void agent_out_opts_free(struct agent_out_opts *o);
/* After the source stopped: the last window written and pushed, all ended. */
void agent_out_stop(struct agent_out *out);
void agent_out_counts(struct agent_out *out, struct agent_out_counts *c);

/* argv[0] is "agent"; returns the process exit code. */
int uwprof_cmd_agent(int argc, char **argv);

#endif /* UWPROF_TOOL_AGENT_H */
