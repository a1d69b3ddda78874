// SPDX-License-Identifier: GPL-2.0
/*
 * The agent's HTTP layer (tool/agent_http.c) on the host: libmicrohttpd
 * serving on a loopback port and on a unix socket, with a fake profile
 * source that answers with the request it was given (and waits, so that
 * concurrent requests are seen to be served at once). Requests are sent
 * as raw bytes over a socket; the status line, headers and body checked.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
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

static int fake_profile(void *ctx, const struct agent_req *q, uint8_t **buf,
			size_t *len, char *msg, size_t msglen)
{
	char *s;

	(void)ctx;
	if (q->pid == 999) {
		snprintf(msg, msglen, "fake failure");
		return 500;
	}
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

/* Sends "METHOD TARGET HTTP/1.0"; returns the status, the whole answer in 'out'. */
static int http(const char *method, const char *target, char *out, size_t len)
{
	char req[512];
	size_t got = 0;
	ssize_t n;
	int fd = dial(), status = -1;

	out[0] = 0;
	if (fd < 0)
		return -1;
	n = snprintf(req, sizeof(req), "%s %s HTTP/1.0\r\nHost: x\r\n\r\n",
		     method, target);
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

int main(int argc, char **argv)
{
	struct agent_http h;
	char err[256], path[256];
	struct stat sb;
	int st;

	if (argc != 2) {
		fprintf(stderr, "usage: agent-http-test SCRATCH-DIR\n");
		return 2;
	}
	check_parse();
	st = agent_http_start(&h, "127.0.0.1:0", NULL, &fake, err, sizeof(err));
	ok(st == 0 && h.port > 0, "listens on 127.0.0.1, port %d", h.port);
	tcp_port = h.port;
	check_server("tcp");
	check_concurrent();
	agent_http_stop(&h);
	ok(http("GET", "/", err, sizeof(err)) < 0, "tcp: nothing listens after stop");
	ok(agent_http_start(&h, "127.0.0.1", NULL, &fake, err, sizeof(err)) < 0 &&
	   strstr(err, "ADDR:PORT"), "an address without a port is refused");
	snprintf(path, sizeof(path), "%s/agent.sock", argv[1]);
	unlink(path);
	ok(agent_http_start(&h, NULL, path, &fake, err, sizeof(err)) == 0,
	   "listens on unix socket %s", path);
	unix_path = path;
	check_server("unix");
	agent_http_stop(&h);
	ok(stat(path, &sb) && errno == ENOENT, "unix: the socket is removed at stop");
	printf("1..%d\n", tap_tests);
	return tap_failed ? 1 : 0;
}
