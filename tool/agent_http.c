// SPDX-License-Identifier: GPL-2.0
/*
 * The agent's HTTP layer: libmicrohttpd parses and answers, one thread per
 * connection (a profile request waits out its window, seconds to minutes,
 * without holding up the others). Here: the listening socket (TCP or
 * unix, bound before the daemon starts, so that a bad address is an
 * error at start), who may ask (the Host header on TCP, the bearer
 * token, connections per client), which requests are valid, and the
 * answers. Who may ask is agent_access.c's.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <microhttpd.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "agent.h"

#define AGENT_PROFILE_PATH	"/debug/pprof/profile"
#define AGENT_MAX_ARGS		16
#define AGENT_METRICS_PATH	"/metrics"

/* ------------------------------------------------------------- requests */

static int parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	unsigned long v = 0;

	if (!s || !*s || strlen(s) > 10)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (unsigned long)(*s - '0');
	}
	if (v > max)
		return -1;
	*out = v;
	return 0;
}

/* One argument of a profile request; returns 0 or 400 with 'msg'. */
static int profile_arg(const struct agent_arg *a, struct agent_req *q,
		       char *msg, size_t msglen)
{
	unsigned long v;

	if (!strcmp(a->key, "seconds")) {
		if (parse_uint(a->value, AGENT_MAX_SECONDS, &v) || !v) {
			snprintf(msg, msglen,
				 "bad seconds: give a whole number from 1 to %d",
				 AGENT_MAX_SECONDS);
			return 400;
		}
		q->seconds = (unsigned int)v;
	} else if (!strcmp(a->key, "pid")) {
		if (parse_uint(a->value, 4194304, &v) || !v) {
			snprintf(msg, msglen, "bad pid: give a process id");
			return 400;
		}
		q->pid = (uint32_t)v;
	} else if (!strcmp(a->key, "comm")) {
		if (!a->value || !*a->value ||
		    strlen(a->value) >= sizeof(q->comm)) {
			snprintf(msg, msglen,
				 "bad comm: give a process name of 1 to %zu bytes",
				 sizeof(q->comm) - 1);
			return 400;
		}
		snprintf(q->comm, sizeof(q->comm), "%s", a->value);
	} else if (!strcmp(a->key, "cgroup")) {
		if (!a->value || a->value[0] != '/' ||
		    strlen(a->value) >= sizeof(q->cgroup)) {
			snprintf(msg, msglen,
				 "bad cgroup: give a cgroup v2 path such as /system.slice/NAME.service (shorter than %zu bytes)",
				 sizeof(q->cgroup));
			return 400;
		}
		snprintf(q->cgroup, sizeof(q->cgroup), "%s", a->value);
	} else {
		snprintf(msg, msglen,
			 "unknown parameter '%.64s' (known: seconds, pid, comm, cgroup)",
			 a->key);
		return 400;
	}
	return 0;
}

static int profile_args(const struct agent_arg *args, size_t n,
			struct agent_req *q, char *msg, size_t msglen)
{
	size_t i, j;
	int ret;

	memset(q, 0, sizeof(*q));
	q->seconds = AGENT_DEFAULT_SECONDS;
	for (i = 0; i < n; i++) {
		for (j = 0; j < i; j++)
			if (!strcmp(args[i].key, args[j].key)) {
				snprintf(msg, msglen, "parameter '%.64s' given twice",
					 args[i].key);
				return 400;
			}
		ret = profile_arg(&args[i], q, msg, msglen);
		if (ret)
			return ret;
	}
	return 200;
}

int agent_req_parse(const char *method, const char *path,
		    const struct agent_arg *args, size_t nr_args,
		    enum agent_route *route, struct agent_req *q,
		    char *msg, size_t msglen)
{
	int index = !strcmp(path, "/") || !strcmp(path, "/debug/pprof/");
	int metrics = !strcmp(path, AGENT_METRICS_PATH);

	if (!index && !metrics && strcmp(path, AGENT_PROFILE_PATH)) {
		snprintf(msg, msglen, "no such page: %.200s (see /)", path);
		return 404;
	}
	if (strcmp(method, "GET")) {
		snprintf(msg, msglen, "method %.32s not allowed: only GET", method);
		return 405;
	}
	if (index || metrics) {
		*route = index ? AGENT_ROUTE_INDEX : AGENT_ROUTE_METRICS;
		return 200;
	}
	*route = AGENT_ROUTE_PROFILE;
	if (nr_args > AGENT_MAX_ARGS) {
		snprintf(msg, msglen, "too many parameters");
		return 400;
	}
	return profile_args(args, nr_args, q, msg, msglen);
}

static void on_connection(void *cls, struct MHD_Connection *c,
			  void **socket_ctx,
			  enum MHD_ConnectionNotificationCode toe)
{
	agent_access_notify(cls, c, socket_ctx,
			    toe == MHD_CONNECTION_NOTIFY_CLOSED);
}

/*
 * libmicrohttpd's own messages, each said once: a client that opens
 * connection after connection over the limit would otherwise write a
 * line to the journal for every one.
 */
static void on_log(void *cls, const char *fmt, va_list ap)
{
	static const char *said[32];
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	char line[512];
	size_t i;

	(void)cls;
	pthread_mutex_lock(&lock);
	for (i = 0; i < 32 && said[i] && said[i] != fmt; i++)
		;
	if (i < 32 && said[i] == fmt) {
		pthread_mutex_unlock(&lock);
		return;
	}
	if (i < 32)
		said[i] = fmt;
	pthread_mutex_unlock(&lock);
	vsnprintf(line, sizeof(line), fmt, ap);
	line[strcspn(line, "\n")] = 0;
	fprintf(stderr, "uwprof agent: http: %s (said once)\n", line);
}

/* -------------------------------------------------------------- answers */

static enum MHD_Result answer(struct MHD_Connection *c, unsigned int status,
			      const char *type, void *body, size_t len,
			      int owned)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	resp = MHD_create_response_from_buffer(len, body, owned ?
					       MHD_RESPMEM_MUST_FREE :
					       MHD_RESPMEM_MUST_COPY);
	if (!resp) {
		if (owned)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET");
	if (status == MHD_HTTP_UNAUTHORIZED)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
					"Bearer realm=\"uwprof\"");
	if (status == 200 && !strcmp(type, "application/octet-stream"))
		MHD_add_response_header(resp, "Content-Disposition",
					"attachment; filename=\"profile\"");
	ret = MHD_queue_response(c, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result answer_text(struct MHD_Connection *c,
				   unsigned int status, const char *msg)
{
	char line[640];
	int n = snprintf(line, sizeof(line), "%s\n", msg);

	return answer(c, status, "text/plain; charset=utf-8", line,
		      (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1, 0);
}

static enum MHD_Result answer_index(struct MHD_Connection *c,
				    const struct agent_source *src)
{
	char page[2048], about[1024] = "";
	int n;

	if (src->about_get)
		src->about_get(src->ctx, about, sizeof(about));
	else if (src->about)
		snprintf(about, sizeof(about), "%s", src->about);

	n = snprintf(page, sizeof(page),
"<!DOCTYPE html>\n<html><head><title>uwprof agent</title></head><body>\n"
"<h1>uwprof agent</h1>\n<p>%s</p>\n"
"<p><a href=\"" AGENT_PROFILE_PATH "?seconds=%d\">" AGENT_PROFILE_PATH
"?seconds=%d</a>: a CPU profile (gzipped pprof, profile.proto) of the\n"
"next N seconds (default %d, at most %d), user call stacks of the whole host.</p>\n"
"<p>Filters: <code>pid=PID</code> (one process), <code>comm=NAME</code>\n"
"(processes of that name), <code>cgroup=PATH</code> (processes in that cgroup\n"
"v2 path or below it, such as <code>/system.slice/nginx.service</code>).\n"
"Samples carry the labels pid, thread, cgroup and, where the cgroup names\n"
"one, container_id.</p>\n"
"<p>Read one with <code>go tool pprof -top http://HOST:PORT" AGENT_PROFILE_PATH
"?seconds=10</code>.</p>\n"
"<p><a href=\"" AGENT_METRICS_PATH "\">" AGENT_METRICS_PATH "</a>: the agent's own\n"
"state for Prometheus (memory, CPU, processes, objects, samples).</p>\n"
"</body></html>\n",
		     about, AGENT_DEFAULT_SECONDS,
		     AGENT_DEFAULT_SECONDS, AGENT_DEFAULT_SECONDS,
		     AGENT_MAX_SECONDS);
	return answer(c, 200, "text/html; charset=utf-8", page,
		      (size_t)n < sizeof(page) ? (size_t)n : sizeof(page) - 1, 0);
}

/* Prometheus' text exposition format (version 0.0.4). */
static enum MHD_Result answer_metrics(struct MHD_Connection *c,
				      const struct agent_source *src)
{
	char *text = NULL;

	if (!src->metrics || src->metrics(src->ctx, &text) || !text)
		return answer_text(c, 500, "metrics are not available");
	return answer(c, 200, "text/plain; version=0.0.4; charset=utf-8", text,
		      strlen(text), 1);
}

struct arg_list {
	struct agent_arg v[AGENT_MAX_ARGS + 1];
	size_t		n;
};

static enum MHD_Result collect_arg(void *cls, enum MHD_ValueKind kind,
				   const char *key, const char *value)
{
	struct arg_list *l = cls;

	(void)kind;
	if (l->n < AGENT_MAX_ARGS + 1) {
		l->v[l->n].key = key;
		l->v[l->n].value = value;
	}
	l->n++;
	return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
				  const char *url, const char *method,
				  const char *version, const char *upload,
				  size_t *upload_size, void **con_cls)
{
	static int first_call_seen;
	struct agent_http *h = cls;
	const struct agent_source *src = h->src;
	const union MHD_ConnectionInfo *ci;
	struct agent_conn conn = { .fd = -1 };
	struct arg_list args = { .n = 0 };
	enum agent_route route;
	struct agent_req q;
	char msg[512];
	uint8_t *buf = NULL;
	size_t len = 0;
	int status;

	(void)version;
	(void)upload;
	/* The first call only announces the request (its headers read). */
	if (!*con_cls) {
		*con_cls = &first_call_seen;
		return MHD_YES;
	}
	*upload_size = 0;
	if (h->o.listen &&
	    !agent_access_host_ok(h, MHD_lookup_connection_value(c, MHD_HEADER_KIND,
							 MHD_HTTP_HEADER_HOST))) {
		__atomic_add_fetch(&h->refused_host, 1, __ATOMIC_RELAXED);
		return answer_text(c, MHD_HTTP_MISDIRECTED_REQUEST,
				   "this Host is not the agent's: use localhost or the address it listens on, or start it with --allow-host NAME");
	}
	if (!agent_access_token_ok(h, c)) {
		__atomic_add_fetch(&h->refused_token, 1, __ATOMIC_RELAXED);
		return answer_text(c, MHD_HTTP_UNAUTHORIZED,
				   "a bearer token is required (Authorization: Bearer TOKEN)");
	}
	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, collect_arg, &args);
	status = agent_req_parse(method, url, args.v,
				 args.n > AGENT_MAX_ARGS ? AGENT_MAX_ARGS + 1 : args.n,
				 &route, &q, msg, sizeof(msg));
	if (status != 200)
		return answer_text(c, (unsigned int)status, msg);
	if (route == AGENT_ROUTE_INDEX)
		return answer_index(c, src);
	if (route == AGENT_ROUTE_METRICS)
		return answer_metrics(c, src);
	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (ci)
		conn.fd = ci->connect_fd;
	status = src->profile(src->ctx, &q, &conn, &buf, &len, msg, sizeof(msg));
	if (status != 200)
		return answer_text(c, (unsigned int)status, msg);
	return answer(c, 200, "application/octet-stream", buf, len, 1);
}

/* ------------------------------------------------------------ listening */

/*
 * The directory of the socket: created 0755 when missing; it must be
 * root's or ours and writable by nobody else, or another user could
 * swap the socket for theirs between our steps.
 */
static int unix_dir_check(const char *path, char *err, size_t errlen)
{
	char buf[sizeof(((struct sockaddr_un *)0)->sun_path)], *dir;
	struct stat st;

	snprintf(buf, sizeof(buf), "%s", path);
	dir = dirname(buf);
	if (mkdir(dir, 0755) && errno != EEXIST) {
		int e = errno;

		snprintf(err, errlen, "%s: %s", dir, strerror(e));
		return -e;
	}
	if (stat(dir, &st)) {
		int e = errno;

		snprintf(err, errlen, "%s: %s", dir, strerror(e));
		return -e;
	}
	if (!S_ISDIR(st.st_mode) || (st.st_uid && st.st_uid != geteuid()) ||
	    (st.st_mode & (S_IWGRP | S_IWOTH))) {
		snprintf(err, errlen,
			 "%s: the socket's directory must be root's and writable by no one else (mode %04o, owner %u); use one like /run/uwprof",
			 dir, (unsigned int)(st.st_mode & 07777),
			 (unsigned int)st.st_uid);
		return -EPERM;
	}
	return 0;
}

/*
 * What is at 'path' before binding: nothing, or a socket nobody listens
 * on (an agent that died), removed. Anything else is left alone.
 */
static int unix_stale_remove(const struct sockaddr_un *sa, char *err,
			     size_t errlen)
{
	struct stat st;
	int fd, e;

	if (lstat(sa->sun_path, &st))
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen, "%s: exists and is not a socket",
			 sa->sun_path);
		return -EEXIST;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	e = connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) ? errno : 0;
	close(fd);
	if (!e) {
		snprintf(err, errlen, "%s: another agent serves on it",
			 sa->sun_path);
		return -EADDRINUSE;
	}
	if (e != ECONNREFUSED) {
		snprintf(err, errlen, "%s: %s", sa->sun_path, strerror(e));
		return -e;
	}
	return unlink(sa->sun_path) && errno != ENOENT ? -errno : 0;
}

/*
 * Binds under a umask that leaves the socket the owner's only, sets its
 * group and mode, and only then listens: until listen() a connect() is
 * refused, so no one gets in under looser permissions meanwhile.
 */
static int listen_unix(struct agent_http *h, const char *path, char *err,
		       size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	mode_t old;
	int fd, e;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "%s: socket path too long", path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, path);
	e = unix_dir_check(path, err, errlen);
	if (!e)
		e = unix_stale_remove(&sa, err, errlen);
	if (e) {
		if (!err[0])
			snprintf(err, errlen, "%s: %s", path, strerror(-e));
		return e;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto fail;
	old = umask(0177);
	e = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (e)
		goto fail;
	if (lstat(path, &st))
		goto fail_unlink;
	h->sock_dev = st.st_dev;
	h->sock_ino = st.st_ino;
	if ((h->o.socket_gid != (gid_t)-1 &&
	     lchown(path, (uid_t)-1, h->o.socket_gid)) ||
	    chmod(path, h->o.socket_mode) || listen(fd, 64))
		goto fail_unlink;
	return fd;
fail_unlink:
	e = errno;
	unlink(path);
	errno = e;
fail:
	e = errno;
	snprintf(err, errlen, "%s: %s", path, strerror(e));
	if (fd >= 0)
		close(fd);
	return -e;
}

/* "ADDR:PORT" or "[ADDR6]:PORT" split in place; NULL: malformed. */
static char *split_port(char *s)
{
	char *colon = strrchr(s, ':');

	if (!colon || colon == s || !colon[1])
		return NULL;
	*colon = 0;
	if (s[0] == '[') {
		size_t n = strlen(s);

		if (n < 3 || s[n - 1] != ']')
			return NULL;
		s[n - 1] = 0;
		memmove(s, s + 1, n - 1);
	}
	return colon + 1;
}

static int listen_tcp(const char *listen_at, char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV };
	struct addrinfo *ai = NULL;
	char host[256], *port;
	int fd, one = 1, e;

	snprintf(host, sizeof(host), "%s", listen_at);
	port = split_port(host);
	if (!port || getaddrinfo(host, port, &hints, &ai)) {
		snprintf(err, errlen,
			 "%s: not ADDR:PORT (a numeric address, e.g. 127.0.0.1:%d)",
			 listen_at, AGENT_DEFAULT_PORT);
		return -EINVAL;
	}
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 64)) {
		e = errno;
		snprintf(err, errlen, "%s: %s", listen_at, strerror(e));
		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		return -e;
	}
	freeaddrinfo(ai);
	return fd;
}

static int bound_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len))
		return 0;
	if (ss.ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *)&ss)->sin_port);
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return 0;
}

/* The ADDR of ADDR:PORT as a Host header names it: [v6] bracketed. */
static void listen_host_set(struct agent_http *h, const char *listen_at)
{
	char host[256];

	snprintf(host, sizeof(host), "%s", listen_at);
	if (!split_port(host))
		host[0] = 0;
	snprintf(h->listen_host, sizeof(h->listen_host),
		 strchr(host, ':') ? "[%s]" : "%s", host);
}

int agent_http_listen(struct agent_http *h, const struct agent_http_opts *o,
		      char *err, size_t errlen)
{
	memset(h, 0, sizeof(*h));
	err[0] = 0;
	h->o = *o;
	pthread_mutex_init(&h->lock, NULL);
	if (!o->listen && !o->socket_path) {
		snprintf(err, errlen, "neither a socket nor an address to listen on");
		pthread_mutex_destroy(&h->lock);
		return -EINVAL;
	}
	h->fd = o->listen ? listen_tcp(o->listen, err, errlen) :
			    listen_unix(h, o->socket_path, err, errlen);
	if (h->fd < 0) {
		int e = h->fd;

		pthread_mutex_destroy(&h->lock);
		return e;
	}
	if (o->listen) {
		h->port = bound_port(h->fd);
		listen_host_set(h, o->listen);
	} else {
		h->socket_path = o->socket_path;
	}
	return 0;
}

int agent_http_serve(struct agent_http *h, const struct agent_source *src,
		     char *err, size_t errlen)
{
	const struct agent_http_opts *o = &h->o;

	h->src = src;
	/*
	 * The time limit counts a connection's silence, not our handler's
	 * time: a profile window of minutes is not cut, a client that sends
	 * half a request and waits is.
	 */
	h->d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION |
				MHD_USE_INTERNAL_POLLING_THREAD |
				MHD_USE_ERROR_LOG,
				0, NULL, NULL, on_request, h,
				MHD_OPTION_EXTERNAL_LOGGER, on_log, NULL,
				MHD_OPTION_LISTEN_SOCKET, h->fd,
				MHD_OPTION_CONNECTION_LIMIT,
				(unsigned int)AGENT_MAX_CONNECTIONS,
				MHD_OPTION_PER_IP_CONNECTION_LIMIT,
				o->listen ? o->per_client : 0,
				MHD_OPTION_CONNECTION_TIMEOUT, o->timeout_s,
				MHD_OPTION_NOTIFY_CONNECTION, on_connection, h,
				MHD_OPTION_END);
	if (!h->d) {
		snprintf(err, errlen, "starting the HTTP server failed");
		agent_http_stop(h);
		return -EIO;
	}
	h->fd = -1;	/* the daemon's now: it closes it when stopped */
	return 0;
}

int agent_http_start(struct agent_http *h, const struct agent_http_opts *o,
		     const struct agent_source *src, char *err, size_t errlen)
{
	int ret = agent_http_listen(h, o, err, errlen);

	return ret ? ret : agent_http_serve(h, src, err, errlen);
}

void agent_http_stop(struct agent_http *h)
{
	struct stat st;

	if (h->d)
		MHD_stop_daemon(h->d);
	h->d = NULL;
	if (h->fd >= 0)
		close(h->fd);
	h->fd = -1;
	/* Ours only: another agent may have taken the path since. */
	if (h->socket_path && !lstat(h->socket_path, &st) &&
	    st.st_dev == h->sock_dev && st.st_ino == h->sock_ino)
		unlink(h->socket_path);
	h->socket_path = NULL;
	agent_access_fini(h);
	pthread_mutex_destroy(&h->lock);
}
