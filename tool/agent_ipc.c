// SPDX-License-Identifier: GPL-2.0
/*
 * The messages between the agent's HTTP front end (agent_front.c, an
 * unprivileged process) and the privileged sampler (agent.c): both sides'
 * codecs, the front end's call (from libmicrohttpd's request threads) and
 * the sampler's server (a thread reading the control socket, a thread per
 * request running the agent_source).
 *
 * The sampler trusts nothing the front end sends: a compromised front end
 * may ask for profiles, metrics and the index line, with the parameters
 * the HTTP layer would have accepted, and nothing else. Every message is
 * checked field by field (agent_ipc_decode); one of the wrong size, with
 * no socket or more than one, with an unknown endpoint, numbers out of
 * range, strings not terminated or bytes where zeros belong is refused.
 * The sampler writes answers with a time limit, so a front end that stops
 * reading holds one request thread for that long, not forever.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent.h"

_Static_assert(sizeof(struct agent_ipc_msg) == 1096 &&
	       sizeof(struct agent_ipc_msg) % 8 == 0,
	       "struct agent_ipc_msg: fixed size, a multiple of 8");
_Static_assert(sizeof(struct agent_ipc_resp) == 16,
	       "struct agent_ipc_resp: fixed size");

/* Highest pid the kernel hands out (PID_MAX_LIMIT), as agent_http.c takes. */
#define IPC_MAX_PID		4194304
/* An answer that makes no progress for this long is given up. */
#define IPC_WRITE_MS		10000
/* How often a waiting front end looks whether its client is gone. */
#define IPC_POLL_MS		250
/* Refusals said on stderr, at most (all are counted). */
#define IPC_SAY_MAX		5

/* ------------------------------------------------------------ the codec */

void agent_ipc_encode(struct agent_ipc_msg *m, enum agent_ipc_ep ep,
		      const struct agent_req *q, uint32_t client_kind,
		      const uint8_t client[16])
{
	memset(m, 0, sizeof(*m));
	m->magic = AGENT_IPC_MAGIC;
	m->version = AGENT_IPC_VERSION;
	m->size = sizeof(*m);
	m->endpoint = (uint32_t)ep;
	m->client_kind = client_kind;
	if (client)
		memcpy(m->client, client, sizeof(m->client));
	if (ep != AGENT_IPC_PROFILE || !q)
		return;
	m->seconds = q->seconds;
	m->pid = q->pid;
	/* The rest of each field stays zero, as the decoder wants it. */
	memcpy(m->comm, q->comm, strnlen(q->comm, sizeof(m->comm) - 1));
	memcpy(m->cgroup, q->cgroup, strnlen(q->cgroup, sizeof(m->cgroup) - 1));
}

/* A string field: NUL-terminated, zeros after. Its length, or -1. */
static long ipc_str(const char *f, size_t size)
{
	const char *nul = memchr(f, 0, size);
	size_t i;

	if (!nul)
		return -1;
	for (i = (size_t)(nul - f); i < size; i++)
		if (f[i])
			return -1;
	return nul - f;
}

static int ipc_zero(const void *p, size_t n)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i])
			return 0;
	return 1;
}

static int ipc_bad(char *why, size_t whylen, int ret, const char *what)
{
	snprintf(why, whylen, "%s", what);
	return ret;
}

/* The fields of a PROFILE request; the others must be zero elsewhere. */
static int ipc_decode_profile(const struct agent_ipc_msg *m,
			      struct agent_req *q, char *why, size_t whylen)
{
	long comm = ipc_str(m->comm, sizeof(m->comm));
	long cg = ipc_str(m->cgroup, sizeof(m->cgroup));

	if (m->endpoint != AGENT_IPC_PROFILE) {
		if (m->seconds || m->pid || comm || cg)
			return ipc_bad(why, whylen, -EINVAL,
				       "profile fields set for another endpoint");
		return 0;
	}
	if (!m->seconds || m->seconds > AGENT_MAX_SECONDS)
		return ipc_bad(why, whylen, -EINVAL, "seconds out of range");
	if (m->pid > IPC_MAX_PID)
		return ipc_bad(why, whylen, -EINVAL, "pid out of range");
	if (comm < 0 || comm >= (long)sizeof(q->comm))
		return ipc_bad(why, whylen, -EINVAL, "comm not terminated");
	if (cg < 0 || (cg && m->cgroup[0] != '/'))
		return ipc_bad(why, whylen, -EINVAL,
			       "cgroup not terminated or not from '/'");
	q->seconds = m->seconds;
	q->pid = m->pid;
	memcpy(q->comm, m->comm, (size_t)comm + 1);
	memcpy(q->cgroup, m->cgroup, (size_t)cg + 1);
	return 0;
}

int agent_ipc_decode(const void *buf, size_t n, struct agent_ipc_req *r,
		     char *why, size_t whylen)
{
	struct agent_ipc_msg m;
	size_t clen;

	memset(r, 0, sizeof(*r));
	if (n != sizeof(m))
		return ipc_bad(why, whylen, -EMSGSIZE, "wrong message size");
	memcpy(&m, buf, sizeof(m));
	if (m.magic != AGENT_IPC_MAGIC || m.version != AGENT_IPC_VERSION ||
	    m.size != sizeof(m))
		return ipc_bad(why, whylen, -EINVAL,
			       "wrong magic, version or size field");
	if (m.endpoint < AGENT_IPC_ABOUT || m.endpoint > AGENT_IPC_PROFILE)
		return ipc_bad(why, whylen, -EINVAL, "unknown endpoint");
	if (!ipc_zero(m.reserved, sizeof(m.reserved)))
		return ipc_bad(why, whylen, -EINVAL, "reserved bytes set");
	switch (m.client_kind) {
	case AGENT_IPC_CLIENT_NONE:
		clen = 0;
		break;
	case AGENT_IPC_CLIENT_UID:
	case AGENT_IPC_CLIENT_IPV4:
		clen = 4;
		break;
	case AGENT_IPC_CLIENT_IPV6:
		clen = 16;
		break;
	default:
		return ipc_bad(why, whylen, -EINVAL, "unknown client kind");
	}
	if (!ipc_zero(m.client + clen, sizeof(m.client) - clen))
		return ipc_bad(why, whylen, -EINVAL, "client bytes past its kind");
	r->endpoint = (enum agent_ipc_ep)m.endpoint;
	r->client_kind = m.client_kind;
	memcpy(r->client, m.client, sizeof(r->client));
	return ipc_decode_profile(&m, &r->q, why, whylen);
}

/* ------------------------------------------------------ the front end */

/*
 * Reads 'n' bytes from the request's socket, looking every IPC_POLL_MS
 * whether the HTTP client is gone. 0, -ECONNABORTED (client gone),
 * -EPIPE (the sampler closed early), or -errno.
 */
static int ipc_read_all(int fd, void *buf, size_t n,
			const struct agent_conn *conn)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	size_t got = 0;
	ssize_t r;

	while (got < n) {
		if (conn && agent_access_conn_gone(conn))
			return -ECONNABORTED;
		if (poll(&p, 1, IPC_POLL_MS) < 0 && errno != EINTR)
			return -errno;
		if (!p.revents)
			continue;
		r = read(fd, (char *)buf + got, n - got);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r < 0)
			return -errno;
		if (!r)
			return -EPIPE;
		got += (size_t)r;
	}
	return 0;
}

static int ipc_send(int ctl, const struct agent_ipc_msg *m, int fd)
{
	union {
		struct cmsghdr	h;
		char		b[CMSG_SPACE(sizeof(int))];
	} c;
	struct iovec iov = { .iov_base = (void *)m, .iov_len = sizeof(*m) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = c.b, .msg_controllen = sizeof(c.b),
	};
	struct cmsghdr *cm;

	memset(&c, 0, sizeof(c));
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(ctl, &mh, MSG_NOSIGNAL) == (ssize_t)sizeof(*m) ? 0 :
	       -errno;
}

int agent_ipc_call(int ctl, const struct agent_ipc_msg *m,
		   const struct agent_conn *conn, uint8_t **buf, size_t *len,
		   char *msg, size_t msglen)
{
	struct agent_ipc_resp resp;
	uint8_t *body = NULL;
	int sv[2], ret;

	*buf = NULL;
	*len = 0;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		snprintf(msg, msglen, "socketpair: %s", strerror(errno));
		return 503;
	}
	ret = ipc_send(ctl, m, sv[1]);
	close(sv[1]);
	if (!ret)
		ret = ipc_read_all(sv[0], &resp, sizeof(resp), conn);
	if (!ret && (resp.magic != AGENT_IPC_MAGIC || resp.status < 200 ||
		     resp.status > 599 || resp.len > AGENT_IPC_MAX_BODY))
		ret = -EPROTO;
	if (!ret) {
		body = malloc(resp.len + 1);
		ret = body ? ipc_read_all(sv[0], body, resp.len, conn) : -ENOMEM;
	}
	/* Closed before the answer: the sampler cancels the window. */
	close(sv[0]);
	if (ret) {
		free(body);
		snprintf(msg, msglen, "%s",
			 ret == -ECONNABORTED ? "the client went away" :
			 "the agent's sampler did not answer");
		return ret == -ECONNABORTED ? 500 : 503;
	}
	if (resp.status == 200) {
		*buf = body;
		*len = resp.len;
		return 200;
	}
	body[resp.len] = 0;
	snprintf(msg, msglen, "%s", (char *)body);
	free(body);
	return (int)resp.status;
}

/* ---------------------------------------------------------- the sampler */

/* Requests in progress per client identity. */
struct agent_ipc_client_count {
	struct agent_ipc_client_count *next;
	uint32_t	kind;
	uint8_t		id[16];
	unsigned int	n;
};

struct ipc_job {
	struct agent_ipc_srv *s;
	struct agent_ipc_req r;
	struct agent_ipc_client_count *c;
	int		fd;
};

/* Writes all of 'buf', each step within IPC_WRITE_MS. 0 or -errno. */
static int ipc_write_all(int fd, const void *buf, size_t n)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	size_t done = 0;
	ssize_t w;

	while (done < n) {
		w = send(fd, (const char *)buf + done, n - done,
			 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w > 0) {
			done += (size_t)w;
			continue;
		}
		if (w < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		if (poll(&p, 1, IPC_WRITE_MS) == 0)
			return -ETIMEDOUT;
	}
	return 0;
}

static void ipc_answer(int fd, int status, const void *body, size_t len)
{
	struct agent_ipc_resp resp = {
		.magic = AGENT_IPC_MAGIC, .status = (uint32_t)status, .len = len,
	};

	if (!ipc_write_all(fd, &resp, sizeof(resp)))
		ipc_write_all(fd, body, len);
}

static void ipc_answer_text(int fd, int status, const char *msg)
{
	ipc_answer(fd, status, msg, strlen(msg));
}

/* A request's thread: the source asked, the answer written, all freed. */
static void *ipc_job_main(void *arg)
{
	struct ipc_job *j = arg;
	struct agent_ipc_srv *s = j->s;
	const struct agent_source *src = s->src;
	struct agent_conn conn = { .fd = j->fd };
	char msg[512] = "";
	uint8_t *buf = NULL;
	char *text = NULL;
	size_t len = 0;
	int st;

	switch (j->r.endpoint) {
	case AGENT_IPC_PROFILE:
		st = src->profile(src->ctx, &j->r.q, &conn, &buf, &len, msg,
				  sizeof(msg));
		if (st == 200)
			ipc_answer(j->fd, 200, buf, len);
		else
			ipc_answer_text(j->fd, st < 200 || st > 599 ? 500 : st,
					msg);
		free(buf);
		break;
	case AGENT_IPC_METRICS:
		if (src->metrics && !src->metrics(src->ctx, &text) && text)
			ipc_answer_text(j->fd, 200, text);
		else
			ipc_answer_text(j->fd, 500, "metrics are not available");
		free(text);
		break;
	case AGENT_IPC_ABOUT:
		ipc_answer_text(j->fd, 200, src->about ? src->about : "");
		break;
	}
	close(j->fd);
	__atomic_add_fetch(&s->served, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&s->lock);
	if (j->c)
		j->c->n--;
	s->busy--;
	pthread_cond_broadcast(&s->idle);
	pthread_mutex_unlock(&s->lock);
	free(j);
	return NULL;
}

/* Lock held: the client's count, created; NULL when out of memory. */
static struct agent_ipc_client_count *ipc_client(struct agent_ipc_srv *s,
						 const struct agent_ipc_req *r)
{
	struct agent_ipc_client_count *c;

	for (c = s->clients; c; c = c->next)
		if (c->kind == r->client_kind &&
		    !memcmp(c->id, r->client, sizeof(c->id)))
			return c;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->kind = r->client_kind;
	memcpy(c->id, r->client, sizeof(c->id));
	c->next = s->clients;
	s->clients = c;
	return c;
}

/* A checked request: its thread started, or answered 503 over the limits. */
static void ipc_start_job(struct agent_ipc_srv *s,
			  const struct agent_ipc_req *r, int fd)
{
	struct ipc_job *j = calloc(1, sizeof(*j));
	pthread_attr_t at;
	pthread_t t;
	int ok = 0;

	pthread_mutex_lock(&s->lock);
	if (j && s->busy < AGENT_MAX_CONNECTIONS && !s->stopping) {
		j->c = ipc_client(s, r);
		/* Metrics and the index line carry no client: the total bounds them. */
		ok = j->c && (r->client_kind == AGENT_IPC_CLIENT_NONE ||
			      j->c->n < AGENT_PER_CLIENT);
	}
	if (ok) {
		j->s = s;
		j->r = *r;
		j->fd = fd;
		pthread_attr_init(&at);
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		ok = !pthread_create(&t, &at, ipc_job_main, j);
		pthread_attr_destroy(&at);
	}
	if (ok) {
		j->c->n++;
		s->busy++;
	}
	pthread_mutex_unlock(&s->lock);
	if (ok)
		return;
	__atomic_add_fetch(&s->limited, 1, __ATOMIC_RELAXED);
	ipc_answer_text(fd, 503, "too many requests at once");
	close(fd);
	free(j);
}

/* The one descriptor a message may carry: an AF_UNIX stream socket. */
static int ipc_fd_ok(int fd)
{
	int v;
	socklen_t l = sizeof(v);

	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v, &l) || v != AF_UNIX)
		return 0;
	l = sizeof(v);
	return !getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &l) && v == SOCK_STREAM;
}

static void ipc_refuse(struct agent_ipc_srv *s, const char *why)
{
	uint64_t n = __atomic_add_fetch(&s->refused, 1, __ATOMIC_RELAXED);

	if (n <= IPC_SAY_MAX)
		fprintf(stderr,
			"uwprof agent: refused a message from the HTTP front end: %s%s\n",
			why, n == IPC_SAY_MAX ? " (further ones only counted)" : "");
}

/*
 * One message: received with room for one byte and one descriptor more
 * than allowed, so that a longer one or a second descriptor shows.
 * Returns 0, or -1 when the control socket ended.
 */
static int ipc_receive_one(struct agent_ipc_srv *s)
{
	union {
		struct cmsghdr	h;
		char		b[CMSG_SPACE(2 * sizeof(int))];
	} c;
	uint8_t buf[sizeof(struct agent_ipc_msg) + 1];
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = c.b, .msg_controllen = sizeof(c.b),
	};
	struct agent_ipc_req r;
	struct cmsghdr *cm;
	int fds[2], nfd = 0, i, ret;
	char why[128] = "";
	ssize_t n;

	n = recvmsg(s->ctl, &mh, MSG_CMSG_CLOEXEC);
	if (n < 0 && errno == EINTR)
		return 0;
	if (n <= 0)
		return -1;
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);

		if (cm->cmsg_level != SOL_SOCKET ||
		    cm->cmsg_type != SCM_RIGHTS || cm->cmsg_len < CMSG_LEN(0))
			continue;
		for (i = 0; i < (int)k; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			if (nfd < 2)
				fds[nfd++] = fd;
			else
				close(fd);
		}
	}
	ret = agent_ipc_decode(buf, (size_t)n, &r, why, sizeof(why));
	if (!ret && (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
		ret = ipc_bad(why, sizeof(why), -EMSGSIZE, "message truncated");
	if (!ret && nfd != 1)
		ret = ipc_bad(why, sizeof(why), -EINVAL,
			      "not exactly one socket attached");
	if (!ret && !ipc_fd_ok(fds[0]))
		ret = ipc_bad(why, sizeof(why), -EINVAL,
			      "the descriptor is not a unix stream socket");
	if (!ret) {
		ipc_start_job(s, &r, fds[0]);
		return 0;
	}
	ipc_refuse(s, why);
	for (i = 0; i < nfd; i++) {
		if (nfd == 1 && ipc_fd_ok(fds[i]))
			ipc_answer_text(fds[i], 400, "malformed request message");
		close(fds[i]);
	}
	return 0;
}

static void *ipc_serve_main(void *arg)
{
	struct agent_ipc_srv *s = arg;

	while (!ipc_receive_one(s))
		;
	__atomic_store_n(&s->ended, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

int agent_ipc_serve(struct agent_ipc_srv *s, int ctl,
		    const struct agent_source *src, char *err, size_t errlen)
{
	int e;

	memset(s, 0, sizeof(*s));
	s->ctl = ctl;
	s->src = src;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->idle, NULL);
	e = pthread_create(&s->thread, NULL, ipc_serve_main, s);
	if (e) {
		snprintf(err, errlen, "the requests' thread: %s", strerror(e));
		pthread_mutex_destroy(&s->lock);
		pthread_cond_destroy(&s->idle);
		return -e;
	}
	s->running = 1;
	return 0;
}

int agent_ipc_ended(struct agent_ipc_srv *s)
{
	return __atomic_load_n(&s->ended, __ATOMIC_SEQ_CST);
}

void agent_ipc_stop(struct agent_ipc_srv *s)
{
	struct agent_ipc_client_count *c;

	if (!s->running)
		return;
	pthread_mutex_lock(&s->lock);
	s->stopping = 1;
	pthread_mutex_unlock(&s->lock);
	shutdown(s->ctl, SHUT_RDWR);
	pthread_join(s->thread, NULL);
	/* Each ends within its window's stop and IPC_WRITE_MS per write. */
	pthread_mutex_lock(&s->lock);
	while (s->busy)
		pthread_cond_wait(&s->idle, &s->lock);
	pthread_mutex_unlock(&s->lock);
	while ((c = s->clients)) {
		s->clients = c->next;
		free(c);
	}
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->idle);
	s->running = 0;
}
