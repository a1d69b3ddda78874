// SPDX-License-Identifier: GPL-2.0
/*
 * The agent's push (tool/agent_push.c, and through tool/agent_output.c
 * with a fake window source) on the host, against a receiver on a
 * loopback port that parses what it gets with libmicrohttpd's own form
 * parser (MHD_create_post_processor), not with code of ours: the method,
 * the path, the query Pyroscope's ingest handler reads (name, from, until,
 * spyName, sampleRate, and no 'format', which would make it take the raw
 * body), a multipart/form-data body whose "profile" file field holds the
 * exact bytes, extra headers. Then how failures go: 503 answers retried
 * with waits, a 400 not retried, a stalled server cut off by the time
 * limit, a closed port, the queue bounded while the server is away, the
 * stop pushing what is left, and each kind of failure said once.
 *
 * The OTLP push (--otlp) against the same receiver on its OTLP path, which
 * answers as a script says: 200; 200 with a partial_success (2 rejected
 * and a message); 429 and 503 with Retry-After: 1; 503 without; a
 * connection dropped unanswered. Checked: the body, gunzipped and decoded
 * by protoc against tool/proto (when protoc is there), the headers, the
 * waits (a Retry-After's at least), the counters against what the
 * receiver answered, and nothing lost beyond the queue's bound; then the
 * output with --push and --otlp at once, counted as /metrics reads it.
 *
 *   agent-push-test
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "capture.h"
#include "tap.h"

/* ------------------------------------------------------- the receiver */

/* The OTLP path's answers, in turn; past the script's end, 200. */
#define OTLP_PATH	"/v1development/profiles"

struct rcv_answer {
	int		status;
	int		retry_after;	/* seconds, or 0: no header */
	int		partial;	/* 200 with a partial_success; 2: empty */
	int		drop;		/* the connection closed unanswered */
};

struct rcv_req {
	struct MHD_PostProcessor *pp;
	char		filename[64];
	char		field[64];
	uint8_t		*data;
	size_t		len;
	int		fields;		/* form fields seen */
};

struct rcv {
	pthread_mutex_t	lock;
	struct MHD_Daemon *d;
	int		port;
	/* what to answer: fail this many first, with this status */
	int		fail_n, fail_status;
	int		stall_ms;
	/* the last request */
	int		requests;
	char		method[16], path[128], ctype[128], org[64], auth[128];
	char		name[128], from[32], until[32], spy[32], rate[16];
	int		has_format;
	char		filename[64], field[64];
	uint8_t		*data;
	size_t		len;
	int		fields;
	uint64_t	froms[16];
	int		nr_froms;
	/* the OTLP path: its script, and what it got and answered */
	const struct rcv_answer *script;
	int		nr_script, at;
	int		otlp_requests, otlp_ok, otlp_partial, otlp_rejected;
	int		otlp_stall_ms;
	char		cenc[32];
	double		times[32];
	int		nr_times;
};

static struct rcv rcv = { .lock = PTHREAD_MUTEX_INITIALIZER };

static double now_s(void);

/* An ExportProfilesServiceResponse with partial_success {2, message}. */
static const uint8_t partial_body[] = {
	0x0a, 0x13,				/* partial_success */
	0x08, 0x02,				/* rejected_profiles 2 */
	0x12, 0x0f, 'b', 'a', 'd', ' ', 's', 'a', 'm', 'p', 'l', 'e', ' ',
	't', 'y', 'p', 'e',			/* error_message */
};
#define PARTIAL_MSG	"bad sample type"
/* partial_success {}: as a fully accepted request (the spec leaves it unset). */
static const uint8_t partial_empty[] = { 0x0a, 0x00 };

/* The OTLP path's request complete: kept, and answered as scripted. */
static enum MHD_Result rcv_otlp(struct MHD_Connection *c, struct rcv_req *rq)
{
	struct rcv_answer a = { .status = 200 };
	struct MHD_Response *resp;
	enum MHD_Result ret;
	const char *h;
	char ra[16];
	int stall;

	pthread_mutex_lock(&rcv.lock);
	rcv.otlp_requests++;
	h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Encoding");
	snprintf(rcv.cenc, sizeof(rcv.cenc), "%s", h ? h : "");
	if (rcv.nr_times < 32)
		rcv.times[rcv.nr_times++] = now_s();
	if (rcv.at < rcv.nr_script)
		a = rcv.script[rcv.at++];
	if (a.status == 200 && !a.drop) {
		rcv.otlp_ok++;
		rcv.otlp_partial += a.partial == 1;
		rcv.otlp_rejected += a.partial == 1 ? 2 : 0;
	}
	stall = rcv.otlp_stall_ms;
	pthread_mutex_unlock(&rcv.lock);
	if (stall)
		usleep((useconds_t)stall * 1000);
	if (a.drop)
		return MHD_NO;
	if (a.partial == 2)
		resp = MHD_create_response_from_buffer(sizeof(partial_empty),
						       (void *)partial_empty,
						       MHD_RESPMEM_PERSISTENT);
	else if (a.partial)
		resp = MHD_create_response_from_buffer(sizeof(partial_body),
						       (void *)partial_body,
						       MHD_RESPMEM_PERSISTENT);
	else
		resp = MHD_create_response_from_buffer(0, (void *)"",
						       MHD_RESPMEM_PERSISTENT);
	MHD_add_response_header(resp, "Content-Type", "application/x-protobuf");
	/* A new connection each time: libcurl retries none on its own. */
	MHD_add_response_header(resp, "Connection", "close");
	if (a.retry_after) {
		snprintf(ra, sizeof(ra), "%d", a.retry_after);
		MHD_add_response_header(resp, "Retry-After", ra);
	}
	(void)rq;
	ret = MHD_queue_response(c, (unsigned int)a.status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result rcv_field(void *cls, enum MHD_ValueKind kind,
				 const char *key, const char *filename,
				 const char *ctype, const char *enc,
				 const char *data, uint64_t off, size_t size)
{
	struct rcv_req *rq = cls;

	(void)kind;
	(void)ctype;
	(void)enc;
	if (!off) {
		rq->fields++;
		snprintf(rq->field, sizeof(rq->field), "%s", key);
		snprintf(rq->filename, sizeof(rq->filename), "%s",
			 filename ? filename : "");
	}
	if (size) {
		uint8_t *n = realloc(rq->data, rq->len + size);

		if (!n)
			return MHD_NO;
		memcpy(n + rq->len, data, size);
		rq->data = n;
		rq->len += size;
	}
	return MHD_YES;
}

static void copy_arg(struct MHD_Connection *c, const char *key, char *out,
		     size_t len)
{
	const char *v = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, key);

	snprintf(out, len, "%s", v ? v : "");
}

/* The request complete: kept, and answered as the test set. */
static enum MHD_Result rcv_done(struct MHD_Connection *c, const char *url,
				const char *method, struct rcv_req *rq)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;
	const char *h;
	int status = 200, stall;

	pthread_mutex_lock(&rcv.lock);
	rcv.requests++;
	snprintf(rcv.method, sizeof(rcv.method), "%s", method);
	snprintf(rcv.path, sizeof(rcv.path), "%s", url);
	h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
	snprintf(rcv.ctype, sizeof(rcv.ctype), "%s", h ? h : "");
	h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Scope-OrgID");
	snprintf(rcv.org, sizeof(rcv.org), "%s", h ? h : "");
	h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
	snprintf(rcv.auth, sizeof(rcv.auth), "%s", h ? h : "");
	copy_arg(c, "name", rcv.name, sizeof(rcv.name));
	copy_arg(c, "from", rcv.from, sizeof(rcv.from));
	copy_arg(c, "until", rcv.until, sizeof(rcv.until));
	copy_arg(c, "spyName", rcv.spy, sizeof(rcv.spy));
	copy_arg(c, "sampleRate", rcv.rate, sizeof(rcv.rate));
	rcv.has_format = !!MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
						       "format");
	snprintf(rcv.filename, sizeof(rcv.filename), "%s", rq->filename);
	snprintf(rcv.field, sizeof(rcv.field), "%s", rq->field);
	free(rcv.data);
	rcv.data = rq->data;
	rcv.len = rq->len;
	rcv.fields = rq->fields;
	rq->data = NULL;
	if (!strcmp(url, OTLP_PATH)) {
		pthread_mutex_unlock(&rcv.lock);
		return rcv_otlp(c, rq);
	}
	if (rcv.nr_froms < 16)
		rcv.froms[rcv.nr_froms++] = strtoull(rcv.from, NULL, 10);
	if (rcv.fail_n) {
		rcv.fail_n--;
		status = rcv.fail_status;
	}
	stall = rcv.stall_ms;
	pthread_mutex_unlock(&rcv.lock);
	if (stall)
		usleep((useconds_t)stall * 1000);
	resp = MHD_create_response_from_buffer(3, (void *)"ok\n",
					       MHD_RESPMEM_PERSISTENT);
	ret = MHD_queue_response(c, (unsigned int)status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result rcv_handler(void *cls, struct MHD_Connection *c,
				   const char *url, const char *method,
				   const char *version, const char *upload,
				   size_t *upload_size, void **con_cls)
{
	struct rcv_req *rq = *con_cls;

	(void)cls;
	(void)version;
	if (!rq) {
		rq = calloc(1, sizeof(*rq));
		if (!rq)
			return MHD_NO;
		/* NULL unless the body is a form: then nothing is parsed. */
		rq->pp = MHD_create_post_processor(c, 65536, rcv_field, rq);
		*con_cls = rq;
		return MHD_YES;
	}
	if (*upload_size) {
		uint8_t *n;

		if (rq->pp) {
			MHD_post_process(rq->pp, upload, *upload_size);
		} else if ((n = realloc(rq->data, rq->len + *upload_size))) {
			/* Not a form: the body as it is. */
			memcpy(n + rq->len, upload, *upload_size);
			rq->data = n;
			rq->len += *upload_size;
		}
		*upload_size = 0;
		return MHD_YES;
	}
	return rcv_done(c, url, method, rq);
}

static void rcv_free(void *cls, struct MHD_Connection *c, void **con_cls,
		     enum MHD_RequestTerminationCode toe)
{
	struct rcv_req *rq = *con_cls;

	(void)cls;
	(void)c;
	(void)toe;
	if (!rq)
		return;
	if (rq->pp)
		MHD_destroy_post_processor(rq->pp);
	free(rq->data);
	free(rq);
	*con_cls = NULL;
}

static void rcv_start(void)
{
	/* Loopback only: nothing of the test is reachable from elsewhere. */
	struct sockaddr_in sa = { .sin_family = AF_INET };
	const union MHD_DaemonInfo *info;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	rcv.d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION |
				 MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL,
				 rcv_handler, NULL,
				 MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
				 MHD_OPTION_NOTIFY_COMPLETED, rcv_free, NULL,
				 MHD_OPTION_END);
	info = rcv.d ? MHD_get_daemon_info(rcv.d, MHD_DAEMON_INFO_BIND_PORT) : NULL;
	rcv.port = info ? info->port : 0;
}

static void rcv_set(int fail_n, int fail_status, int stall_ms)
{
	pthread_mutex_lock(&rcv.lock);
	rcv.fail_n = fail_n;
	rcv.fail_status = fail_status;
	rcv.stall_ms = stall_ms;
	rcv.requests = 0;
	rcv.nr_froms = 0;
	pthread_mutex_unlock(&rcv.lock);
}

/* The OTLP path answers as 'script' says, its counts from 0. */
static void rcv_script(const struct rcv_answer *script, int n, int stall_ms)
{
	pthread_mutex_lock(&rcv.lock);
	rcv.script = script;
	rcv.nr_script = n;
	rcv.at = 0;
	rcv.otlp_requests = rcv.otlp_ok = 0;
	rcv.otlp_partial = rcv.otlp_rejected = 0;
	rcv.otlp_stall_ms = stall_ms;
	rcv.nr_times = 0;
	pthread_mutex_unlock(&rcv.lock);
}

static int rcv_otlp_requests(void)
{
	int n;

	pthread_mutex_lock(&rcv.lock);
	n = rcv.otlp_requests;
	pthread_mutex_unlock(&rcv.lock);
	return n;
}

static int rcv_requests(void)
{
	int n;

	pthread_mutex_lock(&rcv.lock);
	n = rcv.requests;
	pthread_mutex_unlock(&rcv.lock);
	return n;
}

/* ---------------------------------------------------------- helpers */

static struct capture cap = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* How often the push said 'what' on stderr. */
static int said(const char *what)
{
	return capture_said(&cap, what);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct agent_out_opts popts(const char *url, unsigned int timeout_s)
{
	static const char *hdrs[] = { "X-Scope-OrgID: tenant-7" };
	struct agent_out_opts o = {
		.push_url = url, .push_name = "app{env=test}",
		.push_headers = hdrs, .nr_push_headers = 1,
		.push_timeout_s = timeout_s, .freq = 19, .interval_s = 1,
	};

	return o;
}

static uint8_t *blob(size_t n, uint8_t seed)
{
	uint8_t *b = malloc(n);
	size_t i;

	for (i = 0; b && i < n; i++)
		b[i] = (uint8_t)(seed + i * 7 + (i >> 8));
	return b;
}

/* Until 'n' requests came or 'secs' passed. */
static void await_requests(int n, double secs)
{
	double t0 = now_s();

	while (rcv_requests() < n && now_s() - t0 < secs)
		usleep(10000);
}

static struct agent_push push;

/* The Pyroscope push. */
static int push_start(struct agent_push *p, const struct agent_out_opts *o,
		      char *err, size_t errlen)
{
	return agent_push_start(p, o, AGENT_PUSH_PYROSCOPE, err, errlen);
}

static void push_counts(uint64_t *ok_n, uint64_t *failed, uint64_t *retries,
			uint64_t *dropped)
{
	pthread_mutex_lock(&push.lock);
	*ok_n = push.pushed;
	*failed = push.failed;
	*retries = push.retries;
	*dropped = push.dropped;
	pthread_mutex_unlock(&push.lock);
}

/* ------------------------------------------------------------ checks */

static void check_urls(void)
{
	struct agent_out_opts o = popts("ftp://127.0.0.1/", 1);
	char err[256];

	ok(push_start(&push, &o, err, sizeof(err)) == -EINVAL &&
	   strstr(err, "http"), "ftp:// is refused: %s", err);
	o.push_url = "http://127.0.0.1:1/?x=1";
	ok(push_start(&push, &o, err, sizeof(err)) == -EINVAL &&
	   strstr(err, "query"), "a URL with a query is refused: %s", err);
	o.push_url = "not a url at all";
	ok(push_start(&push, &o, err, sizeof(err)) == -EINVAL,
	   "a string that is no URL is refused: %s", err);
	o.push_url = "https://user:pa55@127.0.0.1:1/";
	ok(push_start(&push, &o, err, sizeof(err)) == -EINVAL &&
	   strstr(err, "--push-header-file") && !strstr(err, "pa55"),
	   "a URL with user:password@ is refused, pointing to --push-header-file: %s",
	   err);
	o.push_url = "http://user@127.0.0.1:1/";
	ok(agent_push_url_check(o.push_url, AGENT_PUSH_PYROSCOPE, err,
				 sizeof(err)) == -EINVAL,
	   "a URL with a user name is refused too");
}

/* Whether /proc/self/cmdline holds 's' anywhere (its NULs as spaces). */
static int in_cmdline(const char *s)
{
	char buf[65536];
	ssize_t n, i;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return -1;
	for (i = 0; i < n; i++)
		if (!buf[i])
			buf[i] = ' ';
	buf[n] = 0;
	return strstr(buf, s) != NULL;
}

/*
 * --push-header-file: its headers reach the server; they are nowhere in
 * the command line; a malformed line is refused with its number.
 */
static void check_header_file(void)
{
	static const char *argv_hdr[] = { "X-From-Argv: 1" };
	struct agent_out_opts o;
	struct agent_push p;
	const char **hdrs = NULL;
	char path[] = "/tmp/uwprof-push-hdr.XXXXXX", url[128], err[256];
	size_t n = 0, i;
	int fd, ret;
	FILE *f;

	fd = mkstemp(path);
	f = fd < 0 ? NULL : fdopen(fd, "w");
	if (!f) {
		ok(0, "header file: cannot create %s", path);
		return;
	}
	fputs("# tenant and credentials\n\nX-Scope-OrgID: tenant-from-file\n"
	      "Authorization: Bearer file-s3cret-91\r\n", f);
	fclose(f);
	/* As the agent does: argv's headers first, then the file's. */
	hdrs = malloc(sizeof(*hdrs));
	if (hdrs)
		hdrs[n++] = argv_hdr[0];
	ret = agent_out_headers_read(path, &hdrs, &n, err, sizeof(err));
	ok(ret == 0 && n == 3 && !strcmp(hdrs[2], "Authorization: Bearer file-s3cret-91"),
	   "header file: 2 headers read after the argv one (%s)", ret ? err : "ok");
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", rcv.port);
	o = popts(url, 5);
	o.push_headers = hdrs;
	o.nr_push_headers = n;
	rcv_set(0, 0, 0);
	ret = ret ? ret : push_start(&p, &o, err, sizeof(err));
	if (!ret) {
		agent_push_enqueue(&p, blob(100, 9), 100, 0, 0);
		await_requests(1, 10);
		agent_push_stop(&p);
	}
	pthread_mutex_lock(&rcv.lock);
	ok(!ret && !strcmp(rcv.auth, "Bearer file-s3cret-91") &&
	   !strcmp(rcv.org, "tenant-from-file"),
	   "header file: its Authorization and X-Scope-OrgID reach the server (%s, %s)",
	   rcv.auth, rcv.org);
	pthread_mutex_unlock(&rcv.lock);
	ok(in_cmdline("file-s3cret-91") == 0 && in_cmdline("tenant-from-file") == 0 &&
	   in_cmdline(program_invocation_short_name) == 1,
	   "header file: its values are not in /proc/self/cmdline (which is read)");
	for (i = 1; i < n; i++)
		free((char *)hdrs[i]);
	free(hdrs);
	hdrs = NULL;
	n = 0;
	f = fopen(path, "w");
	if (f) {
		fputs("X-Ok: 1\nno colon here\n", f);
		fclose(f);
	}
	ok(agent_out_headers_read(path, &hdrs, &n, err, sizeof(err)) == -EINVAL &&
	   strstr(err, ":2:"), "header file: a line without 'Name:' is refused: %s",
	   err);
	for (i = 0; i < n; i++)
		free((char *)hdrs[i]);
	free(hdrs);
	unlink(path);
}

static void check_one(void)
{
	struct agent_out_opts o;
	uint64_t n_ok, failed, retries, dropped;
	char url[128], err[256];
	uint8_t *b = blob(100000, 3), *copy = malloc(100000);

	memcpy(copy, b, 100000);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/pyro/", rcv.port);
	o = popts(url, 5);
	ok(!push_start(&push, &o, err, sizeof(err)), "starts on %s", url);
	ok(strstr(push.url, "/pyro/ingest") != NULL, "the URL's path is kept: %s",
	   push.url);
	rcv_set(0, 0, 0);
	/* 2024-01-01T00:00:00.5Z to 00:00:10.2Z */
	agent_push_enqueue(&push, b, 100000, 1704067200500000000ULL,
			   1704067210200000000ULL);
	await_requests(1, 10);
	pthread_mutex_lock(&rcv.lock);
	ok(!strcmp(rcv.method, "POST") && !strcmp(rcv.path, "/pyro/ingest"),
	   "POST %s", rcv.path);
	ok(!strcmp(rcv.name, "app{env=test}") && !strcmp(rcv.from, "1704067200") &&
	   !strcmp(rcv.until, "1704067211") && !strcmp(rcv.spy, "uwprof") &&
	   !strcmp(rcv.rate, "19") && !rcv.has_format,
	   "query: name=%s from=%s until=%s spyName=%s sampleRate=%s, no format",
	   rcv.name, rcv.from, rcv.until, rcv.spy, rcv.rate);
	ok(!strncmp(rcv.ctype, "multipart/form-data; boundary=", 30),
	   "Content-Type: %.40s...", rcv.ctype);
	ok(rcv.fields == 1 && !strcmp(rcv.field, "profile") &&
	   !strcmp(rcv.filename, "profile.pprof") && rcv.len == 100000 &&
	   !memcmp(rcv.data, copy, 100000),
	   "the form's one field is the file \"profile\" (profile.pprof), the %zu bytes sent",
	   rcv.len);
	ok(!strcmp(rcv.org, "tenant-7"), "--push-header reaches the server");
	pthread_mutex_unlock(&rcv.lock);
	usleep(100000);
	push_counts(&n_ok, &failed, &retries, &dropped);
	ok(n_ok == 1 && !failed && !retries, "counted: 1 pushed");
	free(copy);
}

/* 503, 503, then 200: retried with waits; then a 400, not retried. */
static void check_retries(void)
{
	uint64_t n_ok, failed, retries, dropped;
	double t0;

	pthread_mutex_lock(&push.lock);
	push.retry_ms = 200;
	pthread_mutex_unlock(&push.lock);
	rcv_set(2, 503, 0);
	t0 = now_s();
	agent_push_enqueue(&push, blob(1000, 1), 1000, 0, 0);
	await_requests(3, 10);
	usleep(100000);
	push_counts(&n_ok, &failed, &retries, &dropped);
	ok(rcv_requests() == 3 && n_ok == 2 && retries == 2 && !failed &&
	   now_s() - t0 >= 0.6,
	   "503 twice: tried 3 times, waiting 0.2 then 0.4 s (%.2f s), then pushed",
	   now_s() - t0);
	ok(said("HTTP 503") == 0, "failures that a retry mended are not said");

	rcv_set(10, 400, 0);
	agent_push_enqueue(&push, blob(1000, 2), 1000, 0, 0);
	agent_push_enqueue(&push, blob(1000, 3), 1000, 0, 0);
	await_requests(2, 10);
	usleep(300000);
	push_counts(&n_ok, &failed, &retries, &dropped);
	ok(rcv_requests() == 2 && failed == 2 && retries == 2,
	   "400: not retried (2 profiles, 2 requests, 2 failed)");
	ok(said("HTTP 400: ok") == 1, "400 said once, with the server's answer");
}

/* A server that does not answer within the time limit; the queue's bound. */
static void check_stall(void)
{
	uint64_t n_ok, failed, retries, dropped, f0, r0;
	double t0;
	int i;

	push_counts(&n_ok, &f0, &r0, &dropped);
	rcv_set(0, 0, 1500);	/* push.timeout_ms is 5000: shorten it */
	pthread_mutex_lock(&push.lock);
	push.timeout_ms = 500;
	pthread_mutex_unlock(&push.lock);
	t0 = now_s();
	for (i = 0; i < 10; i++)
		agent_push_enqueue(&push, blob(1000, (uint8_t)i), 1000, 0, 0);
	push_counts(&n_ok, &failed, &retries, &dropped);
	ok(dropped == 5 || dropped == 6,
	   "10 profiles queued at once: %llu dropped (queue of %d, one in flight)",
	   (unsigned long long)dropped, AGENT_PUSH_QUEUE);
	ok(said("the oldest are dropped") == 1, "the drop said once");
	while (now_s() - t0 < 8) {
		push_counts(&n_ok, &failed, &retries, &dropped);
		if (failed > f0)
			break;
		usleep(50000);
	}
	ok(failed == f0 + 1 && retries == r0 + 2 && now_s() - t0 < 4,
	   "a stalled server: 3 tries of 0.5 s, then failed (%.2f s)",
	   now_s() - t0);
	ok(said("Timeout was reached") == 1, "the time limit said once");
	/* Stop now: each profile left gets one try. */
	t0 = now_s();
	agent_push_stop(&push);
	ok(now_s() - t0 < 6, "stop with %d left: one try each, done in %.2f s",
	   AGENT_PUSH_QUEUE, now_s() - t0);
}

/* Nothing listens: each try fails at once, said once. */
static void check_refused(void)
{
	struct agent_out_opts o = popts("http://127.0.0.1:1", 2);
	uint64_t n_ok = 0, failed = 0, retries = 0, dropped = 0;
	char err[256];
	double t0 = now_s();

	ok(!push_start(&push, &o, err, sizeof(err)), "starts on a closed port");
	push.retry_ms = 50;
	agent_push_enqueue(&push, blob(10, 1), 10, 0, 0);
	agent_push_enqueue(&push, blob(10, 2), 10, 0, 0);
	while (now_s() - t0 < 5) {
		push_counts(&n_ok, &failed, &retries, &dropped);
		if (failed == 2)
			break;
		usleep(20000);
	}
	ok(failed == 2 && retries == 4, "refused: 2 profiles, 3 tries each, failed");
	ok(said("Couldn't connect") == 1, "the refusal said once");
	agent_push_stop(&push);
}

/* ------------------------------------------------------ the OTLP push */

/*
 * ExportProfilesServiceRequest { resource_profiles { resource {
 * attributes { key: "host.name" value { string_value: "otlp-test" } } } } },
 * gzipped (protoc --encode, then gzip).
 */
static const uint8_t otlp_req[] = {
	0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0xe3, 0x92,
	0xe1, 0x92, 0xe2, 0x92, 0xe0, 0xe2, 0xcc, 0xc8, 0x2f, 0x2e, 0xd1, 0xcb,
	0x4b, 0xcc, 0x4d, 0x15, 0xe2, 0xe6, 0xe2, 0xcc, 0x2f, 0xc9, 0x29, 0xd0,
	0x2d, 0x49, 0x2d, 0x2e, 0x01, 0x00, 0x96, 0x6f, 0x23, 0x31, 0x1e, 0x00,
	0x00, 0x00,
};

static uint8_t *otlp_copy(void)
{
	uint8_t *b = malloc(sizeof(otlp_req));

	if (b)
		memcpy(b, otlp_req, sizeof(otlp_req));
	return b;
}

static void otlp_counts(uint64_t v[6])
{
	pthread_mutex_lock(&push.lock);
	v[0] = push.pushed;
	v[1] = push.failed;
	v[2] = push.retries;
	v[3] = push.dropped;
	v[4] = push.partial;
	v[5] = push.rejected;
	pthread_mutex_unlock(&push.lock);
}

/* Until the OTLP push has settled 'n' profiles (pushed or failed). */
static void await_settled(uint64_t n, double secs)
{
	double t0 = now_s();
	uint64_t v[6];

	do {
		otlp_counts(v);
		if (v[0] + v[1] >= n)
			return;
		usleep(10000);
	} while (now_s() - t0 < secs);
}

/* The last body, gunzipped and decoded by protoc: its text in 'out'. */
static int otlp_decode(char *out, size_t outlen)
{
	const char *proto = "proto/otlp/profiles_service.proto";
	char path[] = "/tmp/agent-push-test.XXXXXX", cmd[512], *c;
	size_t n = 0;
	FILE *f;
	int fd, st;

	out[0] = 0;
	if (access(proto, R_OK) || system("protoc --version >/dev/null 2>&1"))
		return -ENOENT;
	fd = mkstemp(path);
	if (fd < 0)
		return -errno;
	pthread_mutex_lock(&rcv.lock);
	st = write(fd, rcv.data, rcv.len) == (ssize_t)rcv.len ? 0 : -EIO;
	pthread_mutex_unlock(&rcv.lock);
	close(fd);
	snprintf(cmd, sizeof(cmd),
		 "gzip -dc < %s | protoc --decode=opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest -I proto %s 2>&1",
		 path, proto);
	f = st ? NULL : popen(cmd, "r");
	if (f) {
		n = fread(out, 1, outlen - 1, f);
		out[n] = 0;
		/* One TAP line. */
		for (c = out; *c; c++)
			if (*c == '\n')
				*c = ' ';
		st = pclose(f) ? -EINVAL : 0;
	}
	unlink(path);
	return st;
}

/*
 * One profile, answered 200 with an empty partial_success: the body and
 * headers as OTLP/HTTP says.
 */
static void check_otlp_one(void)
{
	static const struct rcv_answer script[] = {
		{ .status = 200, .partial = 2 },
	};
	struct agent_out_opts o = { .otlp_url = NULL, .push_timeout_s = 5 };
	char url[128], err[256], text[2048];
	uint64_t v[6];
	int ret, same;

	o.push_url = "http://127.0.0.1:1/";
	o.otlp_url = "ftp://127.0.0.1/";
	ok(agent_push_url_check(o.otlp_url, AGENT_PUSH_OTLP, err,
				sizeof(err)) == -EINVAL && strstr(err, "--otlp"),
	   "--otlp ftp:// is refused: %s", err);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", rcv.port, OTLP_PATH);
	o.otlp_url = url;
	ok(!agent_push_start(&push, &o, AGENT_PUSH_OTLP, err, sizeof(err)) &&
	   !strcmp(push.url, url), "--otlp starts on %s, the URL as given", url);
	rcv_script(script, 1, 0);
	agent_push_enqueue(&push, otlp_copy(), sizeof(otlp_req), 0, 0);
	await_settled(1, 10);
	otlp_counts(v);
	pthread_mutex_lock(&rcv.lock);
	same = rcv.len == sizeof(otlp_req) &&
	       !memcmp(rcv.data, otlp_req, sizeof(otlp_req));
	ok(!strcmp(rcv.method, "POST") && !strcmp(rcv.path, OTLP_PATH) &&
	   rcv.otlp_requests == 1 && same,
	   "POST %s, the %zu gzipped bytes as the body", rcv.path, rcv.len);
	ok(!strcmp(rcv.ctype, "application/x-protobuf") &&
	   !strcmp(rcv.cenc, "gzip") && !rcv.org[0],
	   "Content-Type: %s, Content-Encoding: %s, no --push-header",
	   rcv.ctype, rcv.cenc);
	pthread_mutex_unlock(&rcv.lock);
	ret = otlp_decode(text, sizeof(text));
	if (ret == -ENOENT)
		ok(1, "# SKIP protoc or tool/proto not found");
	else
		ok(!ret && strstr(text, "otlp-test"),
		   "the body gunzips and decodes as ExportProfilesServiceRequest: %.80s",
		   text);
	ok(v[0] == 1 && !v[1] && !v[2] && !v[4] && !v[5],
	   "counted: 1 pushed, an empty partial_success no partial answer");
}

/*
 * A partial answer; 429 and 503 with Retry-After: 1; a dropped
 * connection; 503 three times: each counted as the receiver answered.
 */
static void check_otlp_answers(void)
{
	static const struct rcv_answer script[] = {
		{ .status = 200, .partial = 1 },	/* profile 1 */
		{ .status = 429, .retry_after = 1 },	/* profile 2 */
		{ .status = 200 },
		{ .status = 503, .retry_after = 1 },	/* profile 3 */
		{ .drop = 1 },
		{ .status = 200 },
		{ .status = 503 },			/* profile 4 */
		{ .status = 503 },
		{ .status = 503 },
	};
	uint64_t v[6];
	double t[32], waited[3];
	int i, n;

	pthread_mutex_lock(&push.lock);
	push.retry_ms = 200;
	pthread_mutex_unlock(&push.lock);
	rcv_script(script, sizeof(script) / sizeof(script[0]), 0);
	for (i = 0; i < 4; i++)
		agent_push_enqueue(&push, otlp_copy(), sizeof(otlp_req), 0, 0);
	await_settled(5, 20);
	usleep(100000);
	otlp_counts(v);
	pthread_mutex_lock(&rcv.lock);
	n = rcv.otlp_requests;
	memcpy(t, rcv.times, sizeof(t));
	ok(v[0] == 1 + 3 && v[1] == 1 && (int)(v[0] - 1) == rcv.otlp_ok &&
	   n == 9 && v[2] == 5,
	   "9 requests for 4 profiles: %llu pushed in all (the receiver took %d), %llu failed, %llu retries",
	   (unsigned long long)v[0], rcv.otlp_ok, (unsigned long long)v[1],
	   (unsigned long long)v[2]);
	ok(v[4] == 1 && v[5] == 2 && rcv.otlp_partial == 1 &&
	   rcv.otlp_rejected == 2,
	   "the partial_success counted: %llu partial answer, %llu rejected profiles",
	   (unsigned long long)v[4], (unsigned long long)v[5]);
	pthread_mutex_unlock(&rcv.lock);
	ok(said("partly accepted, 2 profiles rejected: " PARTIAL_MSG) == 1,
	   "its error_message said once");
	if (n < 9)
		return;
	waited[0] = t[2] - t[1];	/* after the 429 */
	waited[1] = t[4] - t[3];	/* after the 503 with Retry-After */
	waited[2] = t[5] - t[4];	/* after the dropped connection */
	ok(waited[0] >= 1.0 && waited[1] >= 1.0,
	   "429 and 503 with Retry-After: 1 waited %.2f s and %.2f s (the doubling wait was 0.2)",
	   waited[0], waited[1]);
	ok(waited[2] >= 0.4 && waited[2] < 1.0,
	   "the dropped connection retried after the doubled wait (%.2f s)",
	   waited[2]);
	ok(t[7] - t[6] < 1.0 && t[8] - t[7] < 1.5 && said("HTTP 503") == 1,
	   "503 without Retry-After: the doubling waits (%.2f, %.2f s), then failed, said once",
	   t[7] - t[6], t[8] - t[7]);
}

/* The server slow: what the bounded queue drops is counted, nothing more lost. */
static void check_otlp_queue(void)
{
	uint64_t v0[6], v[6];
	int i, n0;

	otlp_counts(v0);
	rcv_script(NULL, 0, 300);
	for (i = 0; i < 10; i++)
		agent_push_enqueue(&push, otlp_copy(), sizeof(otlp_req), 0, 0);
	await_settled(v0[0] + v0[1] + 10 - (v0[3] + 6), 20);
	usleep(500000);
	otlp_counts(v);
	n0 = rcv_otlp_requests();
	ok(v[3] - v0[3] >= 5 && v[3] - v0[3] <= 6 &&
	   v[0] - v0[0] + v[3] - v0[3] == 10 && (uint64_t)n0 == v[0] - v0[0],
	   "10 profiles at once to a slow server: %llu dropped (queue of %d, one in flight), %llu pushed, %d received: none lost beyond the bound",
	   (unsigned long long)(v[3] - v0[3]), AGENT_PUSH_QUEUE,
	   (unsigned long long)(v[0] - v0[0]), n0);
	agent_push_stop(&push);
	rcv_script(NULL, 0, 0);
}

/* ------------------------------------- consecutive windows, pushed */

struct fake_win {
	uint64_t	start, end;
};

static int fake_stopping;

static uint64_t mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int fake_queue(void *ctx, uint64_t start, uint64_t end, void **h)
{
	struct fake_win *w;

	(void)ctx;
	if (__atomic_load_n(&fake_stopping, __ATOMIC_ACQUIRE))
		return -ESHUTDOWN;
	w = malloc(sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->start = start;
	w->end = end;
	*h = w;
	return 0;
}

static int fake_wait(void *ctx, void *h, uint8_t **buf, size_t *len,
		     uint64_t span[2], char *msg, size_t msglen)
{
	struct fake_win *w = h;

	(void)ctx;
	while (mono() < w->end && !__atomic_load_n(&fake_stopping, __ATOMIC_ACQUIRE))
		usleep(10000);
	span[0] = w->start;
	span[1] = mono() < w->end ? mono() : w->end;
	free(w);
	if (span[1] <= span[0]) {
		snprintf(msg, msglen, "stopping");
		return 503;
	}
	*buf = blob(500, 9);
	*len = 500;
	return 200;
}

static int fake_wait_otlp(void *ctx, void *h, uint8_t **buf, size_t *len,
			  uint8_t **otlp, size_t *otlp_len, uint64_t span[2],
			  char *msg, size_t msglen)
{
	int st = fake_wait(ctx, h, buf, len, span, msg, msglen);

	*otlp = st == 200 ? otlp_copy() : NULL;
	*otlp_len = sizeof(otlp_req);
	return st;
}

/* --push and --otlp at once: each window to both, counted apart. */
static void check_out_both(void)
{
	static const struct rcv_answer script[] = {
		{ .status = 200, .partial = 1 },
		{ .status = 503, .retry_after = 1 },
	};
	struct agent_period_src src = {
		fake_queue, fake_wait, NULL, NULL, fake_wait_otlp,
	};
	struct agent_out_opts o;
	struct agent_out_counts c;
	struct agent_out out;
	char url[128], ourl[128], err[256];

	snprintf(url, sizeof(url), "http://127.0.0.1:%d", rcv.port);
	snprintf(ourl, sizeof(ourl), "http://127.0.0.1:%d%s", rcv.port,
		 OTLP_PATH);
	o = popts(url, 5);
	o.otlp_url = ourl;
	o.interval_s = 1;
	rcv_set(0, 0, 0);
	rcv_script(script, 2, 0);
	__atomic_store_n(&fake_stopping, 0, __ATOMIC_RELEASE);
	ok(!agent_out_start(&out, &o, &src, err, sizeof(err)),
	   "output with --push and --otlp starts");
	sleep(5);
	__atomic_store_n(&fake_stopping, 1, __ATOMIC_RELEASE);
	agent_out_stop(&out);
	agent_out_counts(&out, &c);
	pthread_mutex_lock(&rcv.lock);
	ok(c.windows >= 3 && c.pushed == c.windows &&
	   c.pushed == (uint64_t)rcv.nr_froms &&
	   c.otlp_pushed == c.windows &&
	   c.otlp_pushed == (uint64_t)rcv.otlp_ok &&
	   c.otlp_retries == 1 && !c.otlp_failed && !c.otlp_dropped &&
	   c.otlp_partial == 1 && c.otlp_rejected == 2,
	   "%llu windows: %llu pushed to /ingest (%d received), %llu to OTLP (%d answered 200), %llu retry, %llu partial, %llu rejected, as /metrics counts them",
	   (unsigned long long)c.windows, (unsigned long long)c.pushed,
	   rcv.nr_froms, (unsigned long long)c.otlp_pushed, rcv.otlp_ok,
	   (unsigned long long)c.otlp_retries,
	   (unsigned long long)c.otlp_partial,
	   (unsigned long long)c.otlp_rejected);
	pthread_mutex_unlock(&rcv.lock);
}

static void check_out(void)
{
	struct agent_period_src src = {
		fake_queue, fake_wait, NULL, NULL, NULL,
	};
	struct agent_out_opts o;
	struct agent_out_counts c;
	struct agent_out out;
	char url[128], err[256];
	int i, steps = 1;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d", rcv.port);
	o = popts(url, 5);
	o.interval_s = 1;
	rcv_set(0, 0, 0);
	ok(!agent_out_start(&out, &o, &src, err, sizeof(err)),
	   "output with --push only (--interval 1) starts");
	sleep(4);
	__atomic_store_n(&fake_stopping, 1, __ATOMIC_RELEASE);
	agent_out_stop(&out);
	agent_out_counts(&out, &c);
	pthread_mutex_lock(&rcv.lock);
	for (i = 1; i < rcv.nr_froms; i++)
		steps &= rcv.froms[i] - rcv.froms[i - 1] <= 2 &&
			 rcv.froms[i] > rcv.froms[i - 1] - 1;
	ok(rcv.nr_froms >= 4 && steps && c.pushed == (uint64_t)rcv.nr_froms &&
	   c.windows == c.pushed && !c.files_written,
	   "every 1 s window pushed (%d; %llu built, %llu pushed), 'from' moving on by the interval, and the last, cut short by the stop",
	   rcv.nr_froms, (unsigned long long)c.windows,
	   (unsigned long long)c.pushed);
	pthread_mutex_unlock(&rcv.lock);
}

int main(void)
{
	rcv_start();
	if (!rcv.port) {
		printf("1..0 # SKIP no loopback port for the receiver\n");
		return 0;
	}
	check_urls();
	if (capture_start(&cap)) {
		perror("capturing stderr");
		return 1;
	}
	check_header_file();
	check_one();
	check_retries();
	check_stall();
	check_refused();
	check_otlp_one();
	check_otlp_answers();
	check_otlp_queue();
	check_out();
	check_out_both();
	capture_finish(&cap);
	MHD_stop_daemon(rcv.d);
	return tap_done();
}
