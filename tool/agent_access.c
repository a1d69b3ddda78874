// SPDX-License-Identifier: GPL-2.0
/*
 * Who may ask the agent (agent_http.c calls these from libmicrohttpd's
 * threads): the endpoint's defaults, the bearer token and its file, the
 * Host header on TCP, connections per user on the unix socket, and
 * whether a request's client is still there.
 *
 * Anyone who gets an answer reads whole-host profiles, so the default is
 * a unix socket only root can connect to; TCP is asked for, and there a
 * browser is kept out by the Host check (a page whose name was rebound
 * to 127.0.0.1 still sends its own name).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"

void agent_access_opts_init(struct agent_http_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->socket_path = AGENT_DEFAULT_SOCKET;
	o->socket_mode = AGENT_DEFAULT_SOCKET_MODE;
	o->socket_gid = (gid_t)-1;
	o->timeout_s = AGENT_CONN_TIMEOUT;
	o->per_client = AGENT_PER_CLIENT;
}

int agent_access_token_read(const char *path, char **token, char *err,
			  size_t errlen)
{
	char buf[AGENT_MAX_TOKEN + 2];
	struct stat st;
	size_t len = 0, i, start;
	ssize_t n = 0;
	int fd, e;

	*token = NULL;
	err[0] = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		e = errno;
		snprintf(err, errlen, "--token-file %s: %s", path, strerror(e));
		if (fd >= 0)
			close(fd);
		return -e;
	}
	while (len < sizeof(buf) - 1 &&
	       (n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	e = n < 0 ? errno : 0;
	close(fd);
	if (e) {
		snprintf(err, errlen, "--token-file %s: %s", path, strerror(e));
		return -e;
	}
	buf[len] = 0;
	while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r' ||
		       buf[len - 1] == ' ' || buf[len - 1] == '\t'))
		buf[--len] = 0;
	for (start = 0; buf[start] == ' ' || buf[start] == '\t'; start++)
		;
	/* A header's value: visible ASCII, no spaces, so no header injection. */
	for (i = start; i < len; i++)
		if (buf[i] <= ' ' || buf[i] > '~')
			break;
	if (i < len || start == len || len - start > AGENT_MAX_TOKEN) {
		explicit_bzero(buf, sizeof(buf));
		snprintf(err, errlen,
			 "--token-file %s: not one token of 1 to %d visible ASCII characters on one line",
			 path, AGENT_MAX_TOKEN);
		return -EINVAL;
	}
	*token = strdup(buf + start);
	/* The stack is not left holding the secret. */
	explicit_bzero(buf, sizeof(buf));
	if (!*token) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (st.st_mode & (S_IROTH | S_IWOTH))
		snprintf(err, errlen,
			 "warning: --token-file %s can be read by other users (chmod 600 it)",
			 path);
	return 0;
}

/* The name of a Host header without its port, in 'out'. -1: malformed. */
static int host_name(const char *host, char *out, size_t len)
{
	const char *end;
	size_t n;

	if (host[0] == '[') {
		end = strchr(host, ']');
		if (!end || (end[1] && end[1] != ':'))
			return -1;
		end++;
	} else {
		end = strchr(host, ':');
		if (end && strchr(end + 1, ':'))
			return -1;
		if (!end)
			end = host + strlen(host);
	}
	n = (size_t)(end - host);
	if (!n || n >= len)
		return -1;
	memcpy(out, host, n);
	out[n] = 0;
	return 0;
}

/*
 * TCP: whether the Host header names this agent. A page that rebinds its
 * own name to 127.0.0.1 sends that name, which is in no list here.
 */
int agent_access_host_ok(const struct agent_http *h, const char *host)
{
	static const char *const local[] = { "localhost", "127.0.0.1", "[::1]" };
	char name[256], allowed[256];
	size_t i;

	if (!host || host_name(host, name, sizeof(name)))
		return 0;
	for (i = 0; i < sizeof(local) / sizeof(local[0]); i++)
		if (!strcasecmp(name, local[i]))
			return 1;
	if (!strcasecmp(name, h->listen_host))
		return 1;
	for (i = 0; i < h->o.nr_allow_hosts; i++)
		if (!host_name(h->o.allow_hosts[i], allowed, sizeof(allowed)) &&
		    !strcasecmp(name, allowed))
			return 1;
	return 0;
}

/* In a time that depends on the token's length only, not on where they differ. */
static int token_equal(const char *got, const char *want)
{
	size_t gl = strlen(got), wl = strlen(want), i;
	unsigned char d = gl != wl;

	for (i = 0; i < wl; i++)
		d |= (unsigned char)want[i] ^ (unsigned char)(i < gl ? got[i] : 0);
	return !d;
}

int agent_access_token_ok(const struct agent_http *h, struct MHD_Connection *c)
{
	const char *a;

	if (!h->o.token)
		return 1;
	a = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
					MHD_HTTP_HEADER_AUTHORIZATION);
	if (!a || strncasecmp(a, "Bearer ", 7))
		return 0;
	for (a += 7; *a == ' '; a++)
		;
	return token_equal(a, h->o.token);
}

int agent_access_conn_gone(const struct agent_conn *c)
{
	struct pollfd p;
	char b;
	ssize_t n;

	if (!c || c->fd < 0)
		return 0;
	p.fd = c->fd;
	p.events = POLLIN | POLLRDHUP;
	p.revents = 0;
	if (poll(&p, 1, 0) <= 0)
		return 0;
	if (p.revents & (POLLERR | POLLHUP | POLLRDHUP))
		return 1;
	/*
	 * Bytes of a next request are no sign; an end of file is (a client
	 * that only shut down its side is taken as gone too: HTTP clients
	 * do not, and the answer could not be told from a closed one).
	 */
	n = recv(c->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
	return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
			  errno != EINTR);
}

/* Unix socket: connections per user, for AGENT_PER_CLIENT. */
struct agent_http_peer {
	struct agent_http_peer *next;
	uid_t		uid;
	unsigned int	n;
};

/*
 * MHD_OPTION_PER_IP_CONNECTION_LIMIT counts TCP addresses only; on the
 * unix socket the peer's user is counted here. A connection over the
 * limit is shut down at once: its thread reads the end and closes it
 * before reading a request.
 */
void agent_access_notify(void *cls, struct MHD_Connection *c, void **socket_ctx,
			 int closed)
{
	struct agent_http *h = cls;
	struct agent_http_peer *p, **pp;
	const union MHD_ConnectionInfo *ci;
	struct ucred cr;
	socklen_t crlen = sizeof(cr);

	if (h->o.listen || !h->o.per_client)
		return;
	pthread_mutex_lock(&h->lock);
	if (closed) {
		p = *socket_ctx;
		if (p)
			p->n--;
		for (pp = &h->peers; p && !p->n && *pp; pp = &(*pp)->next)
			if (*pp == p) {
				*pp = p->next;
				free(p);
				break;
			}
		*socket_ctx = NULL;
		pthread_mutex_unlock(&h->lock);
		return;
	}
	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (!ci || getsockopt(ci->connect_fd, SOL_SOCKET, SO_PEERCRED, &cr,
			      &crlen))
		goto refuse;
	for (p = h->peers; p && p->uid != cr.uid; p = p->next)
		;
	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p)
			goto refuse;
		p->uid = cr.uid;
		p->next = h->peers;
		h->peers = p;
	}
	if (p->n >= h->o.per_client)
		goto refuse;
	p->n++;
	*socket_ctx = p;
	pthread_mutex_unlock(&h->lock);
	return;
refuse:
	*socket_ctx = NULL;
	__atomic_add_fetch(&h->refused_peer, 1, __ATOMIC_RELAXED);
	if (ci)
		shutdown(ci->connect_fd, SHUT_RDWR);
	pthread_mutex_unlock(&h->lock);
}

void agent_access_fini(struct agent_http *h)
{
	struct agent_http_peer *p;

	while ((p = h->peers)) {
		h->peers = p->next;
		free(p);
	}
}
