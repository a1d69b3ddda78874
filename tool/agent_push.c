// SPDX-License-Identifier: GPL-2.0
/*
 * 'uwprof agent --push URL': each window's gzipped pprof POSTed to
 * URL/ingest the way Pyroscope's own clients (pyroscope-go's upstream)
 * send one: the query names the application, the window's start and end
 * (Unix seconds), the spy and the sampling rate; the body is a
 * multipart/form-data form whose file field "profile" holds the pprof.
 * Pyroscope's ingest handler reads that form when the Content-Type says
 * multipart and no 'format' parameter is given (format=pprof would make it
 * take the raw body as the profile instead); Grafana Alloy's
 * pyroscope.receive_http forwards the same request.
 *
 * 'uwprof agent --otlp URL' (AGENT_PUSH_OTLP): the same window's profile
 * as an OTLP ExportProfilesServiceRequest (otlp.c), gzipped, POSTed to URL
 * exactly as given (OTLP/HTTP: Content-Type: application/x-protobuf,
 * Content-Encoding: gzip). A 2xx answer's body is read as an
 * ExportProfilesServiceResponse: a partial_success is counted (answers
 * and rejected profiles) and its error_message said once.
 *
 * One thread per push target, with libcurl, so the recorder's thread
 * never waits on the network. Each try has a time limit; a failed one (no
 * answer, a 5xx, 408 or 429) is tried again after a wait that doubles, or
 * after the Retry-After (seconds or a date, at most
 * AGENT_PUSH_RETRY_AFTER_MAX s) a 429 or 503 gives, at most
 * AGENT_PUSH_TRIES times; other 4xx answers are not retried. The queue
 * holds at most AGENT_PUSH_QUEUE profiles: while the server is away the
 * oldest are dropped, counted, and the memory stays bounded.
 */
#define _GNU_SOURCE
#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "pb.h"

#define PUSH_SPY	"uwprof"
/* Kinds said once: curl codes as they are, HTTP statuses from here. */
#define PUSH_KIND_HTTP	100
#define PUSH_KIND_DROP	1000

struct push_item {
	struct push_item *next;
	uint8_t		*buf;
	size_t		len;
	uint64_t	from_s, until_s;
};

/*
 * The answer's first bytes: for the message of a failed push, and an OTLP
 * response (a partial_success's message is short, and cut here if not).
 */
struct push_answer {
	char	text[4096];
	size_t	len;
};

int agent_push_available(void)
{
	return 1;
}

static size_t answer_keep(char *data, size_t size, size_t n, void *priv)
{
	struct push_answer *a = priv;
	size_t room = sizeof(a->text) - 1 - a->len, take = size * n;

	if (take > room)
		take = room;
	memcpy(a->text + a->len, data, take);
	a->len += take;
	a->text[a->len] = 0;
	return size * n;
}

/*
 * --push: URL + "/ingest", the path the URL's own, extended. --otlp: the
 * URL as given, checked the same way.
 */
static int push_url(const char *base, int form, char **out, char *err,
		    size_t errlen)
{
	const char *opt = form == AGENT_PUSH_OTLP ? "--otlp" : "--push";
	CURLU *u = curl_url();
	char *path = NULL, *full = NULL, *scheme = NULL, *np = NULL, *extra;
	CURLUcode rc;
	size_t n;
	int ret = -EINVAL;

	if (!u)
		return -ENOMEM;
	rc = curl_url_set(u, CURLUPART_URL, base, 0);
	if (!rc)
		rc = curl_url_get(u, CURLUPART_SCHEME, &scheme, 0);
	if (rc || (strcmp(scheme, "http") && strcmp(scheme, "https"))) {
		snprintf(err, errlen, "%s %s: not an http:// or https:// URL%s%s",
			 opt, base, rc ? ": " : "", rc ? curl_url_strerror(rc) : "");
		goto out;
	}
	/*
	 * Every local user reads the agent's command line (ps): a user or
	 * password in the URL would be handed to all of them.
	 */
	if (!curl_url_get(u, CURLUPART_USER, &extra, 0) ||
	    !curl_url_get(u, CURLUPART_PASSWORD, &extra, 0)) {
		curl_free(extra);
		snprintf(err, errlen,
			 "%s: the URL holds credentials (user:password@), which every local user can read in ps; give the URL without them%s",
			 opt, form == AGENT_PUSH_OTLP ? "" :
			 " and put 'Authorization: Basic BASE64(user:password)' in a --push-header-file");
		goto out;
	}
	if (form == AGENT_PUSH_OTLP) {
		*out = strdup(base);
		ret = *out ? 0 : -ENOMEM;
		goto out;
	}
	if (!curl_url_get(u, CURLUPART_QUERY, &extra, 0) ||
	    !curl_url_get(u, CURLUPART_FRAGMENT, &extra, 0)) {
		curl_free(extra);
		snprintf(err, errlen,
			 "--push %s: give the server's base URL, without a query or fragment",
			 base);
		goto out;
	}
	if (curl_url_get(u, CURLUPART_PATH, &path, 0))
		goto out;
	n = strlen(path);
	while (n && path[n - 1] == '/')
		n--;
	if (asprintf(&np, "%.*s/ingest", (int)n, path) < 0) {
		np = NULL;
		ret = -ENOMEM;
		goto out;
	}
	if (curl_url_set(u, CURLUPART_PATH, np, 0) ||
	    curl_url_get(u, CURLUPART_URL, &full, 0))
		goto out;
	*out = strdup(full);
	ret = *out ? 0 : -ENOMEM;
out:
	free(np);
	curl_free(path);
	curl_free(full);
	curl_free(scheme);
	curl_url_cleanup(u);
	return ret;
}

int agent_push_url_check(const char *url, int form, char *err, size_t errlen)
{
	char *full = NULL;
	int ret = push_url(url, form, &full, err, errlen);

	free(full);
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	return ret;
}

/* The item's URL: base plus name, from, until, spyName, sampleRate. */
static char *push_item_url(struct agent_push *p, const struct push_item *it)
{
	CURLU *u = curl_url();
	char arg[1200], *full = NULL, *ret = NULL;

	if (p->form == AGENT_PUSH_OTLP)
		goto out_url;
	if (!u || curl_url_set(u, CURLUPART_URL, p->url, 0))
		goto out;
	snprintf(arg, sizeof(arg), "name=%s", p->name);
	if (curl_url_set(u, CURLUPART_QUERY, arg,
			 CURLU_APPENDQUERY | CURLU_URLENCODE))
		goto out;
	snprintf(arg, sizeof(arg), "from=%llu&until=%llu&spyName=%s&sampleRate=%u",
		 (unsigned long long)it->from_s, (unsigned long long)it->until_s,
		 PUSH_SPY, p->freq);
	if (curl_url_set(u, CURLUPART_QUERY, arg, CURLU_APPENDQUERY) ||
	    curl_url_get(u, CURLUPART_URL, &full, 0))
		goto out;
	ret = strdup(full);
	goto out;
out_url:
	ret = strdup(p->url);
out:
	curl_free(full);
	curl_url_cleanup(u);
	return ret;
}

/*
 * An ExportProfilesServiceResponse (tool/proto/otlp/profiles_service.proto):
 * 1 when it has a partial_success (field 1) that rejects profiles or says
 * something, with its rejected_profiles (1, int64) and error_message (2,
 * string) in *rejected and 'msg'; 0 when it has none or is not one.
 */
static int otlp_partial(const uint8_t *p, size_t len, uint64_t *rejected,
			char *msg, size_t msglen)
{
	const uint8_t *end = p + len, *ps = NULL, *pe = NULL;
	uint64_t key, v;

	*rejected = 0;
	msg[0] = 0;
	while (p < end) {
		if (uwprof_pb_read_varint(&p, end, &key))
			return 0;
		if (key == (1 << 3 | 2)) {
			if (uwprof_pb_read_varint(&p, end, &v))
				return 0;
			/* Cut at the kept bytes: what is there still counts. */
			if (v > (uint64_t)(end - p))
				v = (uint64_t)(end - p);
			ps = p;
			pe = p + v;
			p = pe;
		} else if (uwprof_pb_skip(&p, end, (unsigned int)(key & 7))) {
			return 0;
		}
	}
	if (!ps)
		return 0;
	while (ps < pe) {
		if (uwprof_pb_read_varint(&ps, pe, &key))
			break;
		if (key == (1 << 3 | 0)) {
			if (uwprof_pb_read_varint(&ps, pe, rejected))
				break;
		} else if (key == (2 << 3 | 2)) {
			if (uwprof_pb_read_varint(&ps, pe, &v))
				break;
			if (v > (uint64_t)(pe - ps))
				v = (uint64_t)(pe - ps);
			snprintf(msg, msglen, "%.*s",
				 (int)(v < msglen ? v : msglen - 1),
				 (const char *)ps);
			ps += v;
		} else if (uwprof_pb_skip(&ps, pe, (unsigned int)(key & 7))) {
			break;
		}
	}
	/* An int64 below 0 is no count of profiles. */
	if ((int64_t)*rejected < 0)
		*rejected = 0;
	/* One line on stderr, whatever the server wrote. */
	for (ps = (const uint8_t *)msg; *ps; ps++)
		if (*ps < 0x20 || *ps == 0x7f)
			msg[ps - (const uint8_t *)msg] = ' ';
	/* An empty one is no partial answer (the spec leaves it unset then). */
	return *rejected || msg[0];
}

/* The outcome of one try. */
struct push_result {
	unsigned int	kind;		/* 0: 2xx; a curl code or PUSH_KIND_HTTP + status */
	int		retry;		/* whether trying again may help */
	unsigned int	after_ms;	/* a Retry-After, or 0 */
	int		partial;	/* OTLP: a 2xx with a partial_success */
	uint64_t	rejected;
	char		msg[320];
};

/* Sets the request's body: the form (Pyroscope) or the bytes (OTLP). */
static curl_mime *push_body(struct agent_push *p, const struct push_item *it)
{
	curl_mimepart *part;
	curl_mime *form;

	if (p->form == AGENT_PUSH_OTLP) {
		curl_easy_setopt(p->curl, CURLOPT_POSTFIELDSIZE_LARGE,
				 (curl_off_t)it->len);
		curl_easy_setopt(p->curl, CURLOPT_POSTFIELDS, it->buf);
		return NULL;
	}
	form = curl_mime_init(p->curl);
	part = form ? curl_mime_addpart(form) : NULL;
	if (part && !curl_mime_name(part, "profile") &&
	    !curl_mime_filename(part, "profile.pprof") &&
	    !curl_mime_type(part, "application/octet-stream") &&
	    !curl_mime_data(part, (const char *)it->buf, it->len)) {
		curl_easy_setopt(p->curl, CURLOPT_MIMEPOST, form);
		return form;
	}
	curl_mime_free(form);
	return (curl_mime *)-1;
}

/* One try, its outcome in *r. */
static void push_try(struct agent_push *p, const struct push_item *it,
		     unsigned int timeout_ms, struct push_result *r)
{
	struct push_answer ans = { .len = 0 };
	char *url = push_item_url(p, it);
	curl_mime *form = (curl_mime *)-1;
	CURLcode rc = CURLE_OUT_OF_MEMORY;
	curl_off_t after = -1;
	long status = 0;

	memset(r, 0, sizeof(*r));
	if (url)
		form = push_body(p, it);
	if (form != (curl_mime *)-1) {
		curl_easy_setopt(p->curl, CURLOPT_URL, url);
		curl_easy_setopt(p->curl, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
		curl_easy_setopt(p->curl, CURLOPT_CONNECTTIMEOUT_MS,
				 (long)timeout_ms);
		curl_easy_setopt(p->curl, CURLOPT_WRITEFUNCTION, answer_keep);
		curl_easy_setopt(p->curl, CURLOPT_WRITEDATA, &ans);
		rc = curl_easy_perform(p->curl);
		if (form)
			curl_easy_setopt(p->curl, CURLOPT_MIMEPOST, NULL);
		else
			curl_easy_setopt(p->curl, CURLOPT_POSTFIELDS, NULL);
		curl_mime_free(form);
	}
	free(url);
	if (rc != CURLE_OK) {
		snprintf(r->msg, sizeof(r->msg), "%s", curl_easy_strerror(rc));
		r->retry = rc != CURLE_OUT_OF_MEMORY && rc != CURLE_URL_MALFORMAT;
		r->kind = rc < PUSH_KIND_HTTP ? (unsigned int)rc : PUSH_KIND_HTTP - 1;
		return;
	}
	curl_easy_getinfo(p->curl, CURLINFO_RESPONSE_CODE, &status);
	if (status >= 200 && status < 300) {
		if (p->form == AGENT_PUSH_OTLP)
			r->partial = otlp_partial((const uint8_t *)ans.text,
						  ans.len, &r->rejected, r->msg,
						  sizeof(r->msg));
		return;
	}
	if ((status == 429 || status == 503) &&
	    !curl_easy_getinfo(p->curl, CURLINFO_RETRY_AFTER, &after) &&
	    after > 0)
		r->after_ms = 1000 * (unsigned int)
			(after < AGENT_PUSH_RETRY_AFTER_MAX ?
			 after : AGENT_PUSH_RETRY_AFTER_MAX);
	ans.text[strcspn(ans.text, "\r\n")] = 0;
	snprintf(r->msg, sizeof(r->msg), "HTTP %ld%s%.199s", status,
		 ans.len ? ": " : "", ans.text);
	r->retry = status >= 500 || status == 408 || status == 429;
	if (status < 100 || status > 599)
		status = 599;
	r->kind = PUSH_KIND_HTTP + (unsigned int)status;
}

/* Lock held. Sleeps up to 'ms' unless stopping; returns 'stopping'. */
static int push_nap(struct agent_push *p, unsigned int ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	while (!p->stopping &&
	       pthread_cond_timedwait(&p->cond, &p->lock, &ts) != ETIMEDOUT)
		;
	return p->stopping;
}

/* Lock held on entry and exit; dropped while on the network. */
static void push_one(struct agent_push *p, struct push_item *it)
{
	unsigned int wait_ms = p->retry_ms, after_ms = 0;
	struct push_result r = { .kind = 0 };
	int tries;

	for (tries = 0; tries < AGENT_PUSH_TRIES; tries++) {
		unsigned int timeout_ms = p->timeout_ms;

		if (tries) {
			p->retries++;
			/* A Retry-After is the wait, when longer. */
			if (push_nap(p, after_ms > wait_ms ? after_ms : wait_ms))
				break;
			wait_ms *= 2;
		}
		pthread_mutex_unlock(&p->lock);
		push_try(p, it, timeout_ms, &r);
		pthread_mutex_lock(&p->lock);
		after_ms = r.after_ms;
		if (!r.kind || !r.retry || p->stopping)
			break;
	}
	if (!r.kind) {
		p->pushed++;
		if (r.partial) {
			p->partial++;
			p->rejected += r.rejected;
			if (!p->said_partial++)
				fprintf(stderr,
					"uwprof agent: pushing to %s: partly accepted, %llu profiles rejected: %s (said once; every partial answer is counted in /metrics)\n",
					p->url, (unsigned long long)r.rejected,
					r.msg[0] ? r.msg : "(no message)");
		}
		if (agent_once_over(&p->said))
			fprintf(stderr, "uwprof agent: pushing to %s works again\n",
				p->url);
		return;
	}
	p->failed++;
	if (agent_once(&p->said, r.kind))
		fprintf(stderr,
			"uwprof agent: pushing to %s: %s (said once; every failed push is counted in /metrics)\n",
			p->url, r.msg);
}

static void *push_main(void *arg)
{
	struct agent_push *p = arg;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		struct push_item *it = p->head;

		if (!it) {
			if (p->stopping)
				break;
			pthread_cond_wait(&p->cond, &p->lock);
			continue;
		}
		p->head = it->next;
		if (!p->head)
			p->tailp = &p->head;
		p->queued--;
		push_one(p, it);
		free(it->buf);
		free(it);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

static int push_curl_setup(struct agent_push *p, const struct agent_out_opts *o,
			   char *err, size_t errlen)
{
	struct curl_slist *h = NULL;
	size_t i;

	static const char *const otlp_headers[] = {
		"Content-Type: application/x-protobuf",
		"Content-Encoding: gzip",
	};
	const char *const *hv = o->push_headers;
	size_t nr = o->nr_push_headers;

	if (p->form == AGENT_PUSH_OTLP) {
		/* --push-header* are --push's: not sent to another server. */
		hv = otlp_headers;
		nr = sizeof(otlp_headers) / sizeof(otlp_headers[0]);
	}
	p->curl = curl_easy_init();
	if (!p->curl) {
		snprintf(err, errlen, "%s: libcurl could not start",
			 p->form == AGENT_PUSH_OTLP ? "--otlp" : "--push");
		return -ENOMEM;
	}
	for (i = 0; i < nr; i++) {
		struct curl_slist *nh = curl_slist_append(h, hv[i]);

		if (!nh) {
			curl_slist_free_all(h);
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		h = nh;
	}
	p->headers = h;
	curl_easy_setopt(p->curl, CURLOPT_HTTPHEADER, h);
	/* Threads: no signals for the time limits. */
	curl_easy_setopt(p->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(p->curl, CURLOPT_USERAGENT, "uwprof-agent");
	curl_easy_setopt(p->curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(p->curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	return 0;
}

static int push_name(struct agent_push *p, const struct agent_out_opts *o)
{
	char host[256] = "";

	if (p->form == AGENT_PUSH_OTLP)
		return 0;
	if (o->push_name) {
		p->name = strdup(o->push_name);
		return p->name ? 0 : -ENOMEM;
	}
	if (gethostname(host, sizeof(host) - 1) || !host[0])
		snprintf(host, sizeof(host), "unknown");
	host[strcspn(host, "{},= ")] = 0;
	if (asprintf(&p->name, "uwprof{hostname=%s}", host) < 0) {
		p->name = NULL;
		return -ENOMEM;
	}
	return 0;
}

static void push_free(struct agent_push *p)
{
	if (p->curl)
		curl_easy_cleanup(p->curl);
	curl_slist_free_all(p->headers);
	free(p->url);
	free(p->name);
	p->curl = NULL;
	p->headers = NULL;
	p->url = NULL;
	p->name = NULL;
}

int agent_push_start(struct agent_push *p, const struct agent_out_opts *o,
		     int form, char *err, size_t errlen)
{
	const char *opt = form == AGENT_PUSH_OTLP ? "--otlp" : "--push";
	int ret;

	memset(p, 0, sizeof(*p));
	p->form = form;
	p->tailp = &p->head;
	p->timeout_ms = o->push_timeout_s * 1000;
	p->retry_ms = 1000;
	p->freq = o->freq;
	if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
		snprintf(err, errlen, "%s: libcurl could not start", opt);
		return -ENOMEM;
	}
	ret = push_url(form == AGENT_PUSH_OTLP ? o->otlp_url : o->push_url,
		       form, &p->url, err, errlen);
	if (!ret)
		ret = push_name(p, o);
	if (!ret)
		ret = push_curl_setup(p, o, err, errlen);
	if (ret) {
		if (ret == -ENOMEM && !err[0])
			snprintf(err, errlen, "out of memory");
		push_free(p);
		curl_global_cleanup();
		return ret;
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	ret = -pthread_create(&p->thread, NULL, push_main, p);
	if (ret) {
		snprintf(err, errlen, "%s: starting its thread: %s", opt,
			 strerror(-ret));
		pthread_mutex_destroy(&p->lock);
		pthread_cond_destroy(&p->cond);
		push_free(p);
		curl_global_cleanup();
		return ret;
	}
	p->running = 1;
	return 0;
}

void agent_push_enqueue(struct agent_push *p, uint8_t *buf, size_t len,
			uint64_t from_real_ns, uint64_t until_real_ns)
{
	struct push_item *it = calloc(1, sizeof(*it));

	if (!it) {
		free(buf);
		return;
	}
	it->buf = buf;
	it->len = len;
	it->from_s = from_real_ns / 1000000000ULL;
	/* Pyroscope takes whole seconds: a window ends in its last one. */
	it->until_s = (until_real_ns + 999999999ULL) / 1000000000ULL;
	pthread_mutex_lock(&p->lock);
	if (p->queued >= AGENT_PUSH_QUEUE) {
		struct push_item *old = p->head;

		p->head = old->next;
		if (!p->head)
			p->tailp = &p->head;
		p->queued--;
		p->dropped++;
		if (agent_once(&p->said, PUSH_KIND_DROP))
			fprintf(stderr,
				"uwprof agent: pushing to %s: %d profiles wait already; the oldest are dropped (counted in /metrics)\n",
				p->url, AGENT_PUSH_QUEUE);
		free(old->buf);
		free(old);
	}
	*p->tailp = it;
	p->tailp = &it->next;
	p->queued++;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

void agent_push_stop(struct agent_push *p)
{
	if (!p->running)
		return;
	pthread_mutex_lock(&p->lock);
	p->stopping = 1;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	p->running = 0;
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->cond);
	push_free(p);
	curl_global_cleanup();
}
