// SPDX-License-Identifier: GPL-2.0
/*
 * The agent's HTTP layer (tool/agent_http.c) on the host: libmicrohttpd
 * serving on a loopback port and on a unix socket, with a fake profile
 * source that answers with the request it was given (and waits, so that
 * concurrent requests are seen to be served at once). Requests are sent
 * as raw bytes over a socket; the status line, headers and body checked.
 * Then who may ask: the default is a unix socket of the mode asked for
 * and no TCP port; on TCP a foreign Host is refused; a token file makes
 * requests without the token 401; silent half requests are dropped after
 * the time limit and cannot take every slot; a profile request whose
 * client goes away ends early. Traffic stays on loopback and unix
 * sockets; every wait is bounded.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "tap.h"

static int fake_delay_ms;
/* pid=777: wait out 'seconds' as a window does, unless the client goes. */
static int fake_cancelled, fake_waiting;

static double now_s(void);

static int fake_window(const struct agent_req *q, const struct agent_conn *conn,
		       char *msg, size_t msglen)
{
	double end = now_s() + q->seconds;

	__atomic_store_n(&fake_waiting, 1, __ATOMIC_SEQ_CST);
	while (now_s() < end) {
		if (agent_access_conn_gone(conn)) {
			__atomic_add_fetch(&fake_cancelled, 1, __ATOMIC_SEQ_CST);
			snprintf(msg, msglen, "gone");
			return 500;
		}
		usleep(20000);
	}
	snprintf(msg, msglen, "window done");
	return 500;
}

static int fake_profile(void *ctx, const struct agent_req *q,
			const struct agent_conn *conn, uint8_t **buf,
			size_t *len, char *msg, size_t msglen)
{
	char *s;

	(void)ctx;
	if (q->pid == 999) {
		snprintf(msg, msglen, "fake failure");
		return 500;
	}
	if (q->pid == 777)
		return fake_window(q, conn, msg, msglen);
	if (fake_delay_ms)
		usleep((useconds_t)fake_delay_ms * 1000);
	if (asprintf(&s, "seconds=%u pid=%u comm=%s%s%s", q->seconds, q->pid,
		     q->comm, q->cgroup[0] ? " cgroup=" : "", q->cgroup) < 0)
		return 500;
	*buf = (uint8_t *)s;
	*len = strlen(s);
	return 200;
}

static int fake_metrics(void *ctx, char **text)
{
	(void)ctx;
	*text = strdup("# TYPE fake_metric gauge\nfake_metric 1\n");
	return *text ? 0 : -ENOMEM;
}

static const struct agent_source fake = {
	.profile = fake_profile, .metrics = fake_metrics, .about = "fake source",
};

static int tcp_port;
static const char *unix_path;

static int dial(void)
{
	int fd;

	if (unix_path) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };

		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", unix_path);
		fd = socket(AF_UNIX, SOCK_STREAM, 0);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
			close(fd);
			return -1;
		}
		return fd;
	}
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons((uint16_t)tcp_port) };

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The Host header sent ("": none) and an Authorization header, or NULL. */
static const char *req_host = "127.0.0.1";
static const char *req_auth;

/* A read that gives up after 5 s: no check waits forever. */
static void rcv_timeout(int fd)
{
	struct timeval tv = { .tv_sec = 5 };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

/* Sends "METHOD TARGET HTTP/1.0"; returns the status, the whole answer in 'out'. */
static int http(const char *method, const char *target, char *out, size_t len)
{
	char req[768], host[128] = "", auth[300] = "";
	size_t got = 0;
	ssize_t n;
	int fd = dial(), status = -1;

	out[0] = 0;
	if (fd < 0)
		return -1;
	rcv_timeout(fd);
	if (req_host[0])
		snprintf(host, sizeof(host), "Host: %s\r\n", req_host);
	if (req_auth)
		snprintf(auth, sizeof(auth), "Authorization: %s\r\n", req_auth);
	n = snprintf(req, sizeof(req), "%s %s HTTP/1.0\r\n%s%s\r\n",
		     method, target, host, auth);
	if (write(fd, req, (size_t)n) != n) {
		close(fd);
		return -1;
	}
	while (got + 1 < len && (n = read(fd, out + got, len - 1 - got)) > 0)
		got += (size_t)n;
	out[got] = 0;
	close(fd);
	sscanf(out, "HTTP/1.%*d %d", &status);
	return status;
}

static const char *body(const char *answer)
{
	const char *b = strstr(answer, "\r\n\r\n");

	return b ? b + 4 : "";
}

static void check_parse(void)
{
	struct agent_arg a[3];
	enum agent_route route;
	struct agent_req q;
	char msg[256];

	ok(agent_req_parse("GET", "/debug/pprof/profile", NULL, 0, &route, &q,
			   msg, sizeof(msg)) == 200 && route == AGENT_ROUTE_PROFILE &&
	   q.seconds == AGENT_DEFAULT_SECONDS && !q.pid && !q.comm[0],
	   "parse: profile without arguments takes the defaults");
	a[0] = (struct agent_arg){ "seconds", "5" };
	a[1] = (struct agent_arg){ "pid", "42" };
	a[2] = (struct agent_arg){ "comm", "benchwork" };
	ok(agent_req_parse("GET", "/debug/pprof/profile", a, 3, &route, &q,
			   msg, sizeof(msg)) == 200 && q.seconds == 5 &&
	   q.pid == 42 && !strcmp(q.comm, "benchwork"),
	   "parse: seconds, pid and comm taken");
	a[0].value = "0";
	ok(agent_req_parse("GET", "/debug/pprof/profile", a, 1, &route, &q,
			   msg, sizeof(msg)) == 400, "parse: seconds=0 is 400");
	a[0].value = "301";
	ok(agent_req_parse("GET", "/debug/pprof/profile", a, 1, &route, &q,
			   msg, sizeof(msg)) == 400, "parse: seconds above the cap is 400");
	a[0].value = NULL;
	ok(agent_req_parse("GET", "/debug/pprof/profile", a, 1, &route, &q,
			   msg, sizeof(msg)) == 400, "parse: seconds without a value is 400");
	a[0] = (struct agent_arg){ "comm", "a-name-longer-than-15" };
	ok(agent_req_parse("GET", "/debug/pprof/profile", a, 1, &route, &q,
			   msg, sizeof(msg)) == 400, "parse: comm longer than 15 bytes is 400");
	a[1] = (struct agent_arg){ "comm", "x" };
	a[0].value = "y";
	ok(agent_req_parse("GET", "/debug/pprof/profile", a, 2, &route, &q,
			   msg, sizeof(msg)) == 400 && strstr(msg, "twice"),
	   "parse: a parameter given twice is 400");
	ok(agent_req_parse("POST", "/", NULL, 0, &route, &q, msg,
			   sizeof(msg)) == 405, "parse: POST is 405");
	ok(agent_req_parse("GET", "/debug/pprof/heap", NULL, 0, &route, &q, msg,
			   sizeof(msg)) == 404, "parse: an unknown path is 404");
}

static void check_server(const char *what)
{
	char out[8192];
	int st;

	st = http("GET", "/", out, sizeof(out));
	ok(st == 200 && strstr(out, "text/html") &&
	   strstr(body(out), "/debug/pprof/profile") &&
	   strstr(body(out), "fake source"), "%s: GET / is the index page", what);
	st = http("GET", "/debug/pprof/profile?seconds=7&pid=12&comm=sh", out,
		  sizeof(out));
	ok(st == 200 && !strcmp(body(out), "seconds=7 pid=12 comm=sh") &&
	   strstr(out, "application/octet-stream"),
	   "%s: a profile request reaches the source with its arguments", what);
	st = http("GET", "/debug/pprof/profile?seconds=abc", out, sizeof(out));
	ok(st == 400 && strstr(body(out), "bad seconds"),
	   "%s: seconds=abc is 400 with a message", what);
	st = http("GET", "/debug/pprof/profile?seconds=2&cgroup=/system.slice/a.service",
		  out, sizeof(out));
	ok(st == 200 && !strcmp(body(out),
				"seconds=2 pid=0 comm= cgroup=/system.slice/a.service"),
	   "%s: cgroup= reaches the source", what);
	st = http("GET", "/debug/pprof/profile?cgroup=system.slice", out,
		  sizeof(out));
	ok(st == 400 && strstr(body(out), "bad cgroup"),
	   "%s: a cgroup not starting with / is 400", what);
	st = http("GET", "/metrics", out, sizeof(out));
	ok(st == 200 && strstr(out, "version=0.0.4") &&
	   !strcmp(body(out), "# TYPE fake_metric gauge\nfake_metric 1\n"),
	   "%s: /metrics is the source's text in Prometheus' format", what);
	st = http("POST", "/metrics", out, sizeof(out));
	ok(st == 405, "%s: POST /metrics is 405 (got %d)", what, st);
	st = http("GET", "/debug/pprof/profile?sekonds=3", out, sizeof(out));
	ok(st == 400 && strstr(body(out), "unknown parameter"),
	   "%s: an unknown parameter is 400", what);
	st = http("GET", "/nope", out, sizeof(out));
	ok(st == 404, "%s: unknown path is 404 (got %d)", what, st);
	st = http("DELETE", "/debug/pprof/profile", out, sizeof(out));
	ok(st == 405 && strstr(out, "Allow: GET"),
	   "%s: DELETE is 405 with Allow: GET (got %d)", what, st);
	st = http("GET", "/debug/pprof/profile?pid=999", out, sizeof(out));
	ok(st == 500 && strstr(body(out), "fake failure"),
	   "%s: the source's failure is passed on", what);
}

static void *one_request(void *arg)
{
	char out[1024];

	*(int *)arg = http("GET", "/debug/pprof/profile?seconds=1", out,
			   sizeof(out));
	return NULL;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Four requests that each take 1 s of the source's time, at once. */
static void check_concurrent(void)
{
	pthread_t t[4];
	int st[4], i, all = 1;
	double t0 = now_s(), el;

	fake_delay_ms = 1000;
	for (i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, one_request, &st[i]);
	for (i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		all &= st[i] == 200;
	}
	el = now_s() - t0;
	fake_delay_ms = 0;
	ok(all && el < 3.0,
	   "4 concurrent 1-second requests all answered in %.2f s (< 3)", el);
}

/* Host, on TCP: the agent's names pass, any other is 421. */
static void check_host(const char *scratch)
{
	static const char *const allow[] = { "profiler.internal" };
	struct agent_http_opts o;
	struct agent_http h;
	char out[4096], err[256], host[64];
	int st;

	(void)scratch;
	agent_access_opts_init(&o);
	o.listen = "127.0.0.1:0";
	o.per_client = 0;
	o.allow_hosts = (const char **)allow;
	o.nr_allow_hosts = 1;
	st = agent_http_start(&h, &o, &fake, err, sizeof(err));
	ok(st == 0, "host: listens on 127.0.0.1 (%s)", st ? err : "ok");
	if (st)
		return;
	tcp_port = h.port;
	req_host = "evil.example";
	st = http("GET", "/metrics", out, sizeof(out));
	ok(st == 421 && !strstr(out, "fake_metric"),
	   "host: Host: evil.example is refused with 421, nothing served (got %d)",
	   st);
	snprintf(host, sizeof(host), "evil.example:%d", h.port);
	req_host = host;
	st = http("GET", "/debug/pprof/profile?seconds=1", out, sizeof(out));
	ok(st == 421, "host: a rebound name with the agent's port is 421 (got %d)", st);
	req_host = "127.0.0.1.evil.example";
	st = http("GET", "/", out, sizeof(out));
	ok(st == 421, "host: a name starting with 127.0.0.1 is 421 (got %d)", st);
	req_host = "";
	st = http("GET", "/", out, sizeof(out));
	ok(st == 421, "host: no Host header is 421 on TCP (got %d)", st);
	snprintf(host, sizeof(host), "localhost:%d", h.port);
	req_host = host;
	st = http("GET", "/metrics", out, sizeof(out));
	ok(st == 200, "host: localhost:PORT is served (got %d)", st);
	req_host = "[::1]";
	st = http("GET", "/", out, sizeof(out));
	ok(st == 200, "host: [::1] is served (got %d)", st);
	req_host = "PROFILER.internal";
	st = http("GET", "/", out, sizeof(out));
	ok(st == 200, "host: an --allow-host name is served, any case (got %d)", st);
	req_host = "127.0.0.1";
	ok(__atomic_load_n(&h.refused_host, __ATOMIC_RELAXED) == 4,
	   "host: 4 refusals counted");
	agent_http_stop(&h);
}

/* --token-file: 401 without the token or with another, 200 with it. */
static void check_token(const char *scratch)
{
	struct agent_http_opts o;
	struct agent_http h;
	char out[4096], err[512], path[512], *tok = NULL;
	FILE *f;
	int st;

	snprintf(path, sizeof(path), "%s/token", scratch);
	f = fopen(path, "w");
	if (f) {
		fputs("two words\n", f);
		fclose(f);
	}
	ok(agent_access_token_read(path, &tok, err, sizeof(err)) == -EINVAL && !tok,
	   "token: a file of two words is refused: %s", err);
	f = fopen(path, "w");
	if (f) {
		fputs("  s3cret-Token.42\n", f);
		fclose(f);
	}
	chmod(path, 0644);
	st = agent_access_token_read(path, &tok, err, sizeof(err));
	ok(st == 0 && tok && !strcmp(tok, "s3cret-Token.42") &&
	   strstr(err, "warning"),
	   "token: read from the file, a warning as others may read it");
	if (st)
		return;
	agent_access_opts_init(&o);
	o.listen = "127.0.0.1:0";
	o.per_client = 0;
	o.token = tok;
	st = agent_http_start(&h, &o, &fake, err, sizeof(err));
	ok(st == 0, "token: listens (%s)", st ? err : "ok");
	if (st) {
		free(tok);
		return;
	}
	tcp_port = h.port;
	req_auth = NULL;
	st = http("GET", "/metrics", out, sizeof(out));
	ok(st == 401 && strstr(out, "WWW-Authenticate: Bearer") &&
	   !strstr(out, "fake_metric"),
	   "token: no token is 401 with WWW-Authenticate, nothing served (got %d)",
	   st);
	req_auth = "Bearer s3cret-Token.43";
	st = http("GET", "/debug/pprof/profile?seconds=1", out, sizeof(out));
	ok(st == 401, "token: a wrong token of the same length is 401 (got %d)", st);
	req_auth = "Bearer s3cret-Token.42x";
	st = http("GET", "/", out, sizeof(out));
	ok(st == 401, "token: the token with a byte more is 401 (got %d)", st);
	req_auth = "Basic s3cret-Token.42";
	st = http("GET", "/", out, sizeof(out));
	ok(st == 401, "token: the token as Basic is 401 (got %d)", st);
	req_auth = "Bearer s3cret-Token.42";
	st = http("GET", "/debug/pprof/profile?seconds=3", out, sizeof(out));
	ok(st == 200 && !strcmp(body(out), "seconds=3 pid=0 comm="),
	   "token: with the token, 200 (got %d)", st);
	req_auth = NULL;
	agent_http_stop(&h);
	free(tok);
}

/* The inodes of this process's listening TCP sockets (v4 and v6). */
static int tcp_listeners(void)
{
	static const char *const tabs[] = { "/proc/net/tcp", "/proc/net/tcp6" };
	unsigned long inodes[256], ino;
	char link[300], target[64], line[512];
	size_t n = 0, t, i;
	struct dirent *e;
	unsigned int state;
	int found = 0;
	DIR *d = opendir("/proc/self/fd");
	FILE *f;

	while (d && (e = readdir(d)) && n < 256) {
		ssize_t l;

		snprintf(link, sizeof(link), "/proc/self/fd/%s", e->d_name);
		l = readlink(link, target, sizeof(target) - 1);
		if (l <= 0)
			continue;
		target[l] = 0;
		if (sscanf(target, "socket:[%lu]", &ino) == 1)
			inodes[n++] = ino;
	}
	if (d)
		closedir(d);
	for (t = 0; t < 2; t++) {
		f = fopen(tabs[t], "r");
		while (f && fgets(line, sizeof(line), f))
			if (sscanf(line, " %*s %*s %*s %x %*s %*s %*s %*s %*s %lu",
				   &state, &ino) == 2 && state == 0x0A)
				for (i = 0; i < n; i++)
					found += inodes[i] == ino;
		if (f)
			fclose(f);
	}
	return found;
}

/*
 * The defaults: a unix socket of the mode asked for, no TCP port; what
 * may be at the socket's path, and the directory it is in.
 */
static void check_default(const char *scratch)
{
	struct agent_http_opts o;
	struct agent_http h, tcp;
	char out[4096], err[512], path[256], dir[200];
	struct stat sb;
	int st, fd;

	agent_access_opts_init(&o);
	ok(!o.listen && o.socket_path && !strcmp(o.socket_path, AGENT_DEFAULT_SOCKET) &&
	   o.socket_mode == 0600 && o.timeout_s > 0 && o.per_client > 0,
	   "default: the unix socket %s, 0600, no TCP address", o.socket_path);
	snprintf(dir, sizeof(dir), "%s/run", scratch);
	snprintf(path, sizeof(path), "%s/agent.sock", dir);
	o.socket_path = path;
	st = agent_http_start(&h, &o, &fake, err, sizeof(err));
	ok(st == 0, "default: serves on %s (%s)", path, st ? err : "ok");
	if (st)
		return;
	memset(&sb, 0, sizeof(sb));
	stat(path, &sb);
	ok(S_ISSOCK(sb.st_mode) && (sb.st_mode & 07777) == 0600,
	   "default: the socket's mode is 0600 (got %04o)",
	   (unsigned int)(sb.st_mode & 07777));
	ok(h.port == 0 && tcp_listeners() == 0,
	   "default: no TCP port is listening (%d found)", tcp_listeners());
	unix_path = path;
	st = http("GET", "/metrics", out, sizeof(out));
	ok(st == 200, "default: served on the socket without a Host check (got %d)", st);
	agent_http_stop(&h);
	unix_path = NULL;
	/* The probe sees a listener when there is one. */
	o.listen = "127.0.0.1:0";
	st = agent_http_start(&tcp, &o, &fake, err, sizeof(err));
	ok(st == 0 && tcp_listeners() == 1,
	   "default: --listen opens exactly one TCP listener (%d found)",
	   tcp_listeners());
	if (!st)
		agent_http_stop(&tcp);

	o.listen = NULL;
	o.socket_mode = 0660;
	o.socket_gid = getgid();
	st = agent_http_start(&h, &o, &fake, err, sizeof(err));
	memset(&sb, 0, sizeof(sb));
	stat(path, &sb);
	ok(st == 0 && (sb.st_mode & 07777) == 0660 && sb.st_gid == getgid(),
	   "socket: --socket-mode 0660 --socket-group give 0660 and the group (got %04o)",
	   (unsigned int)(sb.st_mode & 07777));
	if (!st)
		ok(agent_http_start(&tcp, &o, &fake, err, sizeof(err)) == -EADDRINUSE,
		   "socket: a second agent on a live socket is refused: %s", err);
	if (!st)
		agent_http_stop(&h);
	o.socket_mode = 0600;
	o.socket_gid = (gid_t)-1;

	/* A socket left by an agent that died is replaced... */
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	{
		struct sockaddr_un sa = { .sun_family = AF_UNIX };

		if (strlen(path) < sizeof(sa.sun_path))
			memcpy(sa.sun_path, path, strlen(path) + 1);
		if (fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)))
			perror("bind");
	}
	if (fd >= 0)
		close(fd);
	st = agent_http_start(&h, &o, &fake, err, sizeof(err));
	ok(st == 0, "socket: a stale socket is replaced (%s)", st ? err : "ok");
	if (!st)
		agent_http_stop(&h);
	/* ... anything else is not. */
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	if (fd >= 0)
		close(fd);
	st = agent_http_start(&h, &o, &fake, err, sizeof(err));
	ok(st == -EEXIST && !stat(path, &sb) && S_ISREG(sb.st_mode),
	   "socket: a regular file at the path is refused and left: %s", err);
	if (!st)
		agent_http_stop(&h);
	unlink(path);
	chmod(dir, 0777);
	st = agent_http_start(&h, &o, &fake, err, sizeof(err));
	ok(st == -EPERM, "socket: a directory others may write is refused: %s", err);
	if (!st)
		agent_http_stop(&h);
	chmod(dir, 0755);
}

/* Connects to 127.0.0.1:port from 'from' (a loopback address). */
static int dial_from(const char *from, int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons((uint16_t)port) };
	struct sockaddr_in me = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	inet_pton(AF_INET, from, &me.sin_addr);
	if (fd >= 0 && (bind(fd, (struct sockaddr *)&me, sizeof(me)) ||
			connect(fd, (struct sockaddr *)&sa, sizeof(sa)))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* How many of 'fds' the server closed (EOF or reset), waiting until 'until'. */
static int closed_by_server(int *fds, int n, double until)
{
	int closed, i;
	char c;

	do {
		closed = 0;
		for (i = 0; i < n; i++) {
			struct pollfd p = { .fd = fds[i], .events = POLLIN };

			if (fds[i] < 0 || (poll(&p, 1, 0) == 1 &&
					   recv(fds[i], &c, 1, MSG_DONTWAIT) <= 0))
				closed++;
		}
		if (closed == n)
			break;
		usleep(50000);
	} while (now_s() < until);
	return closed;
}

#define SLOW_CLIENTS	20

/*
 * Slowloris: many connections, each with half a request and then
 * silence. Those over the per-client limit are closed at once, the rest
 * after the time limit; meanwhile another client is served.
 */
static void check_slowloris(void)
{
	static const char half[] = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n";
	struct agent_http_opts o;
	struct agent_http h;
	char out[4096], err[256];
	int fds[SLOW_CLIENTS], i, st, closed, opened = 0;
	double t0, t_ok;

	agent_access_opts_init(&o);
	o.listen = "127.0.0.1:0";
	o.timeout_s = 1;
	st = agent_http_start(&h, &o, &fake, err, sizeof(err));
	ok(st == 0, "slowloris: listens (%s)", st ? err : "ok");
	if (st)
		return;
	tcp_port = h.port;
	for (i = 0; i < SLOW_CLIENTS; i++) {
		/* Another loopback address: the honest client's keeps its share. */
		fds[i] = dial_from("127.0.0.2", h.port);
		if (fds[i] >= 0 && write(fds[i], half, sizeof(half) - 1) > 0)
			opened++;
	}
	ok(opened == SLOW_CLIENTS, "slowloris: %d silent half requests sent from 127.0.0.2",
	   opened);
	usleep(200000);
	t0 = now_s();
	st = http("GET", "/debug/pprof/profile?seconds=2", out, sizeof(out));
	t_ok = now_s() - t0;
	ok(st == 200 && t_ok < 1.0,
	   "slowloris: another client is served meanwhile (status %d in %.2f s)",
	   st, t_ok);
	closed = closed_by_server(fds, SLOW_CLIENTS, t0 - 0.2 + 0.5);
	ok(closed >= SLOW_CLIENTS - (int)o.per_client && closed < SLOW_CLIENTS,
	   "slowloris: those over %u per client closed at once, the rest held (%d closed)",
	   o.per_client, closed);
	closed = closed_by_server(fds, SLOW_CLIENTS, t0 + o.timeout_s + 3.0);
	ok(closed == SLOW_CLIENTS,
	   "slowloris: all %d dropped within the %u s limit (+3 s): %d, after %.1f s",
	   SLOW_CLIENTS, o.timeout_s, closed, now_s() - t0);
	for (i = 0; i < SLOW_CLIENTS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	agent_http_stop(&h);
}

/* On the unix socket the limit is per user (here, all are ours). */
static void check_peer_limit(const char *scratch)
{
	struct agent_http_opts o;
	struct agent_http h;
	char out[4096], err[256], path[256];
	int fds[6], i, st, closed;
	uint64_t refused;
	double t0;

	agent_access_opts_init(&o);
	snprintf(path, sizeof(path), "%s/run/peer.sock", scratch);
	o.socket_path = path;
	o.timeout_s = 1;
	st = agent_http_start(&h, &o, &fake, err, sizeof(err));
	ok(st == 0, "peer limit: serves on %s (%s)", path, st ? err : "ok");
	if (st)
		return;
	unix_path = path;
	for (i = 0; i < 6; i++)
		fds[i] = dial();
	t0 = now_s();
	closed = closed_by_server(fds, 6, t0 + 0.5);
	refused = __atomic_load_n(&h.refused_peer, __ATOMIC_RELAXED);
	ok(closed == 6 - (int)o.per_client && refused == 6 - o.per_client,
	   "peer limit: %u connections of one user held, the others closed (%d closed, %llu refused)",
	   o.per_client, closed, (unsigned long long)refused);
	closed = closed_by_server(fds, 6, t0 + o.timeout_s + 3.0);
	ok(closed == 6, "peer limit: the silent ones dropped after the time limit (%d)",
	   closed);
	for (i = 0; i < 6; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	/* libmicrohttpd's thread counts them closed a moment after it closes them. */
	t0 = now_s();
	while ((st = http("GET", "/metrics", out, sizeof(out))) != 200 &&
	       now_s() < t0 + 2.0)
		usleep(50000);
	ok(st == 200, "peer limit: the user is served again once they are gone (got %d after %.2f s)",
	   st, now_s() - t0);
	unix_path = NULL;
	agent_http_stop(&h);
}

/* A profile request whose client closes the connection ends early. */
static void check_cancel(void)
{
	static const char req[] =
		"GET /debug/pprof/profile?seconds=20&pid=777 HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
	struct agent_http_opts o;
	struct agent_http h;
	char err[256];
	int fd, st, i;
	double t0, t1;

	agent_access_opts_init(&o);
	o.listen = "127.0.0.1:0";
	st = agent_http_start(&h, &o, &fake, err, sizeof(err));
	ok(st == 0, "cancel: listens (%s)", st ? err : "ok");
	if (st)
		return;
	tcp_port = h.port;
	__atomic_store_n(&fake_cancelled, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&fake_waiting, 0, __ATOMIC_SEQ_CST);
	fd = dial();
	if (fd >= 0 && write(fd, req, sizeof(req) - 1) < 0)
		perror("write");
	for (i = 0; i < 100 && !__atomic_load_n(&fake_waiting, __ATOMIC_SEQ_CST); i++)
		usleep(20000);
	ok(fd >= 0 && __atomic_load_n(&fake_waiting, __ATOMIC_SEQ_CST),
	   "cancel: a 20-second window request is waiting");
	usleep(200000);
	ok(!__atomic_load_n(&fake_cancelled, __ATOMIC_SEQ_CST),
	   "cancel: not cancelled while the client is there");
	t0 = now_s();
	if (fd >= 0)
		close(fd);
	while (!__atomic_load_n(&fake_cancelled, __ATOMIC_SEQ_CST) &&
	       now_s() < t0 + 5.0)
		usleep(20000);
	t1 = now_s() - t0;
	ok(__atomic_load_n(&fake_cancelled, __ATOMIC_SEQ_CST) == 1 && t1 < 2.0,
	   "cancel: the client's disconnect cancels the window (after %.2f s)", t1);
	/* The stop waits for the handler: it would take the 20 s otherwise. */
	t0 = now_s();
	agent_http_stop(&h);
	ok(now_s() - t0 < 5.0, "cancel: the server stops at once (%.2f s)",
	   now_s() - t0);
}

int main(int argc, char **argv)
{
	struct agent_http_opts o;
	struct agent_http h;
	char err[256], path[256];
	struct stat sb;
	int st;

	if (argc != 2) {
		fprintf(stderr, "usage: agent-http-test SCRATCH-DIR\n");
		return 2;
	}
	check_parse();
	agent_access_opts_init(&o);
	o.listen = "127.0.0.1:0";
	/*
	 * No per-client limit where the limit is not under test: libmicrohttpd
	 * counts a closed connection until its own thread has cleaned it up,
	 * which on a loaded machine can come after the next request of a
	 * client that sends them one after the other.
	 */
	o.per_client = 0;
	st = agent_http_start(&h, &o, &fake, err, sizeof(err));
	ok(st == 0 && h.port > 0, "listens on 127.0.0.1, port %d", h.port);
	tcp_port = h.port;
	check_server("tcp");
	check_concurrent();
	agent_http_stop(&h);
	ok(http("GET", "/", err, sizeof(err)) < 0, "tcp: nothing listens after stop");
	o.listen = "127.0.0.1";
	ok(agent_http_start(&h, &o, &fake, err, sizeof(err)) < 0 &&
	   strstr(err, "ADDR:PORT"), "an address without a port is refused");
	snprintf(path, sizeof(path), "%s/agent.sock", argv[1]);
	unlink(path);
	o.listen = NULL;
	o.socket_path = path;
	ok(agent_http_start(&h, &o, &fake, err, sizeof(err)) == 0,
	   "listens on unix socket %s", path);
	unix_path = path;
	check_server("unix");
	agent_http_stop(&h);
	unix_path = NULL;
	ok(stat(path, &sb) && errno == ENOENT, "unix: the socket is removed at stop");
	check_default(argv[1]);
	check_host(argv[1]);
	check_token(argv[1]);
	check_slowloris();
	check_peer_limit(argv[1]);
	check_cancel();
	return tap_done();
}
