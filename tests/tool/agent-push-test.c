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
};

static struct rcv rcv = { .lock = PTHREAD_MUTEX_INITIALIZER };

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
		if (rq->pp)
			MHD_post_process(rq->pp, upload, *upload_size);
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

	ok(agent_push_start(&push, &o, err, sizeof(err)) == -EINVAL &&
	   strstr(err, "http"), "ftp:// is refused: %s", err);
	o.push_url = "http://127.0.0.1:1/?x=1";
	ok(agent_push_start(&push, &o, err, sizeof(err)) == -EINVAL &&
	   strstr(err, "query"), "a URL with a query is refused: %s", err);
	o.push_url = "not a url at all";
	ok(agent_push_start(&push, &o, err, sizeof(err)) == -EINVAL,
	   "a string that is no URL is refused: %s", err);
	o.push_url = "https://user:pa55@127.0.0.1:1/";
	ok(agent_push_start(&push, &o, err, sizeof(err)) == -EINVAL &&
	   strstr(err, "--push-header-file") && !strstr(err, "pa55"),
	   "a URL with user:password@ is refused, pointing to --push-header-file: %s",
	   err);
	o.push_url = "http://user@127.0.0.1:1/";
	ok(agent_push_url_check(o.push_url, err, sizeof(err)) == -EINVAL,
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
	ret = ret ? ret : agent_push_start(&p, &o, err, sizeof(err));
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
	ok(!agent_push_start(&push, &o, err, sizeof(err)), "starts on %s", url);
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

	ok(!agent_push_start(&push, &o, err, sizeof(err)), "starts on a closed port");
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

static void check_out(void)
{
	struct agent_period_src src = { fake_queue, fake_wait, NULL, NULL };
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
	check_out();
	capture_finish(&cap);
	MHD_stop_daemon(rcv.d);
	return tap_done();
}
