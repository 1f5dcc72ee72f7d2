/* SPDX-License-Identifier: ISC */
/*
 * The HTTP/1.1 server's connections: adopted from a listener (or a
 * socketpair), counted, handed to the next request or closed, or taken
 * over by another protocol after a 101.  Reading requests is in
 * http_request.c, responses in http_response.c, listeners and the
 * connection limit in http_listen.c.
 */
#include "config.h"

#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "heap.h"
#include "http_priv.h"
#include "iochan.h"
#include "log.h"
#include "xmalloc.h"

struct http_conn_list		http_conns = TAILQ_HEAD_INITIALIZER(http_conns);
static unsigned int		nconns;
static size_t			queued_total;	/* in every output */
static struct heap		slow;		/* those HTTP_SLOW_MIN behind,
						   by bytes queued */
static int			slow_ready;
static struct event		*reap_ev;	/* closes doomed ones */
static struct http_conn		**doomed;	/* those, to close (a vector,
						   not a walk of every one) */
static size_t			ndoomed, doomedcap;
/* Kept alive between requests, the longest idle first. */
static struct http_conn_list	http_idle = TAILQ_HEAD_INITIALIZER(http_idle);

static void	http_read_cb(struct iochan *, void *);
static void	http_drain_cb(struct iochan *, void *);
static void	http_progress_cb(struct iochan *, void *);
static void	http_event_cb(struct iochan *, int, void *);
static void	http_next_cb(evutil_socket_t, short, void *);
static void	http_count_cb(struct iochan *, size_t, size_t, void *);
static void	http_in_cb(struct evbuffer *,
		    const struct evbuffer_cb_info *, void *);

unsigned int
http_conn_count(void)
{
	return (nconns);
}

/* A connection kept alive waits for its next request. */
static void
http_idle_begin(struct http_conn *c)
{
	if (c->idle_since != 0)
		return;
	c->idle_since = now_ms();
	TAILQ_INSERT_TAIL(&http_idle, c, idle_entry);
}

/* It has something to do (bytes came, or it goes). */
static void
http_idle_end(struct http_conn *c)
{
	if (c->idle_since == 0)
		return;
	TAILQ_REMOVE(&http_idle, c, idle_entry);
	c->idle_since = 0;
}

/*
 * At the connection limit, make room by closing the connection that has
 * been kept alive between requests longest, if for HTTP_SHED_IDLE_MS at
 * least (a client may close such a one at any time, and sends its next
 * request on a new one).  0 if one was closed.
 */
static int
http_shed_idle(void)
{
	struct http_conn	*c = TAILQ_FIRST(&http_idle);

	if (c == NULL || now_ms() - c->idle_since < HTTP_SHED_IDLE_MS)
		return (-1);
	log_info("http: at the connection limit (%u): closing one of %s idle "
	    "for %lld ms, for a new one", nconns, c->conn_peer,
	    (long long)(now_ms() - c->idle_since));
	http_conn_free(c);
	return (0);
}

/* Reset per-request state. */
static void
http_reset(struct http_conn *c)
{
	free(c->headbuf);
	free(c->method);
	free(c->path);
	free(c->query);
	c->headbuf = c->method = c->path = c->query = NULL;
	if (c->req.body != NULL)
		evbuffer_free(c->req.body);
	oauth_wait_cancel(c->req.oauth_wait);
	oauth_grant_unref(c->req.grant);
	memset(&c->req, 0, sizeof c->req);
	c->framing = HTTP_BODY_NONE;
	c->remaining = 0;
	c->too_big = 0;
	http_set_stream(c, NULL);
	c->nolog = 0;
	c->expires = 0;
}

void
http_adopt(int fd, const struct sockaddr *sa, const struct http_service *svc)
{
	struct http_conn	*c;
	static const char	 busy[] = "HTTP/1.1 503 Service Unavailable\r\n"
	    "Content-Length: 0\r\nConnection: close\r\nRetry-After: 1\r\n\r\n";
	int			 one = 1;
	unsigned int		 user_timeout = HTTP_WRITE_TIMEOUT * 1000;

	if (nconns >= http_max_conns && http_shed_idle() != 0) {
		char	peer[NETADDR_TEXT_MAX];
		struct netaddr	a;

		if (netaddr_from_sockaddr(sa, &a) == 0)
			netaddr_format(&a, peer, sizeof peer);
		else
			snprintf(peer, sizeof peer, "local");
		log_warnx("http: %u connections (the limit), refusing more "
		    "(%s)", nconns, peer);
		metrics_refused("limit");
		access_log_http(peer, "-", "-", 503, "the connection limit");
		if (write(fd, busy, sizeof busy - 1) < 0)
			log_debug("http: write 503: %s", strerror(errno));
		close(fd);
		return;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	/* A peer gone without a word (no FIN, no reset) is given up a
	 * minute after a write it did not acknowledge (an event stream's
	 * heartbeat), not after TCP's retries, a quarter of an hour. */
	setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout,
	    sizeof user_timeout);
	c = xcalloc(1, sizeof *c);
	c->svc = svc;
	c->deadline = evtimer_new(base, http_deadline_cb, c);
	if (netaddr_from_sockaddr(sa, &c->conn_addr) == 0)
		netaddr_format(&c->conn_addr, c->conn_peer,
		    sizeof c->conn_peer);
	else
		snprintf(c->conn_peer, sizeof c->conn_peer, "local");
	memcpy(c->peer, c->conn_peer, sizeof c->peer);
	/* A trusted proxy may say who its client is, first thing. */
	if (c->conn_addr.family != 0 && proxy_trusted(&c->conn_addr))
		c->state = HC_PROXY;
	evutil_make_socket_nonblocking(fd);
	c->ch = iochan_new(base, fd, http_read_cb, http_drain_cb,
	    http_event_cb, c);
	iochan_on_progress(c->ch, http_progress_cb);
	iochan_on_output(c->ch, http_count_cb);
	TAILQ_INIT(&c->passing);
	evbuffer_add_cb(iochan_input(c->ch), http_in_cb, NULL);
	iochan_read_size(c->ch, HTTP_READ_SIZE);
	iochan_timeouts(c->ch, 0, HTTP_WRITE_TIMEOUT);
	c->head_started = 1;	/* the first head is due from the accept */
	http_deadline(c, HTTP_HEAD_TIMEOUT * 1000);
	TAILQ_INSERT_TAIL(&http_conns, c, entry);
	nconns++;
}

static uint64_t
http_queued_key(const void *p)
{
	return (iochan_queued(((const struct http_conn *)p)->ch));
}

/*
 * Count what every connection's output holds (for max_buffered), and keep
 * those far behind in a heap, so finding the furthest is no walk.
 */
static void
http_count_cb(struct iochan *ch, size_t added, size_t deleted, void *arg)
{
	struct http_conn	*c = arg;

	c->out_total += added;
	queued_total += added;
	queued_total -= deleted;
	metrics_bytes(0, deleted);
	if (!slow_ready) {
		heap_init(&slow, http_queued_key,
		    offsetof(struct http_conn, slow_pos));
		slow_ready = 1;
	}
	if (iochan_queued(ch) < HTTP_SLOW_MIN)
		heap_remove(&slow, c);
	else if (c->slow_pos != 0)
		heap_update(&slow, c);
	else
		heap_insert(&slow, c);
}

/* Count what comes from clients. */
static void
http_in_cb(struct evbuffer *buf, const struct evbuffer_cb_info *info,
    void *arg)
{
	if (info->n_added > 0)
		metrics_bytes(info->n_added, 0);
}

size_t
http_stream_queued(void)
{
	return (queued_total);
}

struct http_conn *
http_slowest(size_t *queued)
{
	struct http_conn	*c;

	*queued = 0;
	if (!slow_ready || (c = heap_top(&slow)) == NULL)
		return (NULL);
	*queued = iochan_queued(c->ch);
	return (c);
}

/*
 * A closing connection's output is all written.  After a response, the
 * client may still be sending its request (a body refused before it was
 * read): closing with input unread would send it a reset, which may
 * reach it before it reads the response.  So writing is shut down first,
 * and what it sends is read and dropped until it closes too, for a while.
 */
static void
http_closed_out(struct http_conn *c)
{
	if (!c->linger || shutdown(iochan_fd(c->ch), SHUT_WR) != 0) {
		http_conn_free(c);
		return;
	}
	c->state = HC_LINGER;
	c->body_bytes = 0;
	evbuffer_drain(iochan_input(c->ch),
	    evbuffer_get_length(iochan_input(c->ch)));
	http_deadline(c, HTTP_LINGER_MS);
	iochan_read(c->ch, 1);
}

/* The response is complete: next request, or close. */
void
http_done(struct http_conn *c)
{
	if (c->stream != NULL) {
		c->stream->conn = NULL;
		http_set_stream(c, NULL);
	}
	if (!c->keepalive || c->too_big) {
		c->state = HC_CLOSING;
		c->linger = 1;
		iochan_read(c->ch, 0);
		if (evbuffer_get_length(iochan_output(c->ch)) == 0)
			http_closed_out(c);
		return;
	}
	http_reset(c);
	memcpy(c->peer, c->conn_peer, sizeof c->peer);
	c->state = HC_HEAD;
	c->head_started = 0;
	c->head_scanned = 0;
	http_deadline(c, HTTP_IDLE_TIMEOUT * 1000);
	iochan_read(c->ch, 1);
	/*
	 * Pipelined input may already hold the next request.  It is taken on
	 * the next turn of the loop, never from here: whoever ended this
	 * response (a stream being sent to, a session ending) is still
	 * running, and the next request may free what it holds.
	 */
	if (evbuffer_get_length(iochan_input(c->ch)) != 0) {
		if (c->next_ev == NULL)
			c->next_ev = event_new(base, -1, 0, http_next_cb, c);
		event_active(c->next_ev, EV_TIMEOUT, 0);
	} else
		http_idle_begin(c);
}

/* Bytes waiting to be written to a connection. */
size_t
http_conn_queued(struct http_conn *c)
{
	return (iochan_queued(c->ch));
}

uint64_t
http_conn_offset(struct http_conn *c)
{
	return (c->out_total);
}

uint64_t
http_conn_passed(struct http_conn *c)
{
	return (c->out_total - iochan_queued(c->ch));
}

struct stream *
http_conn_stream(struct http_conn *c)
{
	return (c->stream);
}

void
http_conn_prefetch(struct http_conn *c, int depth)
{
	if (depth == 0) {
		/* Its first 56 bytes, on one line or two. */
		__builtin_prefetch(c);
		__builtin_prefetch((char *)c + 55);
	} else
		iochan_prefetch(c->ch, depth - 1);
}

struct stream_passing *
http_conn_passing(struct http_conn *c)
{
	return (&c->passing);
}

struct http_request *
http_conn_request(struct http_conn *c)
{
	return (&c->req);
}

const char *
http_conn_peer(struct http_conn *c)
{
	return (c->peer);
}

void
http_conn_nolog(struct http_conn *c)
{
	c->nolog = 1;
}

/* Drop a connection at once. */
void
http_conn_close(struct http_conn *c)
{
	http_conn_free(c);
}

/* Close the connections marked doomed (each leaves the vector). */
static void
http_reap_cb(evutil_socket_t fd, short events, void *arg)
{
	while (ndoomed > 0)
		http_conn_free(doomed[ndoomed - 1]);
}

int
http_conn_doomed(struct http_conn *c)
{
	return (c->doomed);
}

void
http_conn_close_later(struct http_conn *c)
{
	if (reap_ev == NULL)
		reap_ev = event_new(base, -1, 0, http_reap_cb, NULL);
	if (!c->doomed) {
		if (ndoomed == doomedcap) {
			doomedcap = doomedcap == 0 ? 16 : doomedcap * 2;
			doomed = xreallocarray(doomed, doomedcap,
			    sizeof *doomed);
		}
		doomed[ndoomed++] = c;
	}
	c->doomed = 1;
	iochan_read(c->ch, 0);
	event_active(reap_ev, EV_TIMEOUT, 0);
}

void
http_conn_free(struct http_conn *c)
{
	struct stream	*st;
	size_t		 i;

	if (c->doomed) {
		for (i = ndoomed; i-- > 0; ) {
			if (doomed[i] == c) {
				doomed[i] = doomed[--ndoomed];
				break;
			}
		}
	}
	/* The protocol that took the connection over lets go first. */
	if (c->up != NULL) {
		c->up->closed(c, c->up_arg);
		c->up = NULL;
	}
	if ((st = c->stream) != NULL) {
		/* Counted off before the stream may be freed. */
		http_set_stream(c, NULL);
		stream_detach(st);
	}
	stream_conn_gone(c);
	http_idle_end(c);
	http_reset(c);
	http_heartbeat_forget(c);
	queued_total -= iochan_queued(c->ch);
	if (slow_ready)
		heap_remove(&slow, c);
	iochan_free(c->ch);
	event_free(c->deadline);
	if (c->next_ev != NULL)
		event_free(c->next_ev);
	TAILQ_REMOVE(&http_conns, c, entry);
	nconns--;
	free(c);
}

/* Take pipelined input held when the last response ended. */
static void
http_next_cb(evutil_socket_t fd, short events, void *arg)
{
	struct http_conn	*c = arg;

	if (c->state == HC_HEAD)
		http_next(c);
}

static void
http_read_cb(struct iochan *ch, void *arg)
{
	struct http_conn	*c = arg;
	struct evbuffer		*in = iochan_input(ch);

	http_idle_end(c);
	switch (c->state) {
	case HC_PROXY:
	case HC_HEAD:
	case HC_BODY:
		http_next(c);
		break;
	case HC_HANDLING:
	case HC_STREAMING:
		/* Hold pipelined input, but not without bound. */
		if (evbuffer_get_length(in) > HTTP_MAX_UNREAD)
			iochan_read(ch, 0);
		break;
	case HC_CLOSING:
		evbuffer_drain(in, evbuffer_get_length(in));
		break;
	case HC_LINGER:
		c->body_bytes += evbuffer_get_length(in);
		evbuffer_drain(in, evbuffer_get_length(in));
		if (c->body_bytes > HTTP_LINGER_MAX)
			http_conn_free(c);
		break;
	case HC_UPGRADED:
		c->up->read(c, c->up_arg);
		break;
	}
}

/* Some output was written: its streams learn how far. */
static void
http_progress_cb(struct iochan *ch, void *arg)
{
	stream_conn_passed(arg);
}

static void
http_drain_cb(struct iochan *ch, void *arg)
{
	struct http_conn	*c = arg;

	stream_conn_passed(c);
	if (c->state == HC_CLOSING)
		http_closed_out(c);
	else if (c->state == HC_UPGRADED && c->up->drained != NULL)
		c->up->drained(c, c->up_arg);
}

void
http_upgrade(struct http_conn *c, const char *headers,
    const struct http_upgraded *up, void *arg)
{
	if (c->state != HC_HANDLING)
		fatalx("%s: no request to answer", __func__);
	evbuffer_add_printf(iochan_output(c->ch), "HTTP/1.1 101 Switching "
	    "Protocols\r\n%s\r\n", headers);
	http_reset(c);
	c->state = HC_UPGRADED;
	c->up = up;
	c->up_arg = arg;
	http_deadline(c, 0);
	iochan_read(c->ch, 1);
}

void *
http_upgraded_arg(struct http_conn *c)
{
	return (c->state == HC_UPGRADED ? c->up_arg : NULL);
}

void
http_conn_reading(struct http_conn *c, int on)
{
	if (c->state == HC_UPGRADED && !c->doomed)
		iochan_read(c->ch, on);
}

struct evbuffer *
http_conn_input(struct http_conn *c)
{
	return (iochan_input(c->ch));
}

struct evbuffer *
http_conn_output(struct http_conn *c)
{
	return (iochan_output(c->ch));
}

void
http_conn_finish(struct http_conn *c)
{
	c->state = HC_CLOSING;
	iochan_read(c->ch, 0);
	if (iochan_queued(c->ch) == 0)
		http_conn_close_later(c);
}

void
http_conn_expire(struct http_conn *c, const struct oauth_grant *g)
{
	/* Idle in these states: no head, body or keep-alive to time. */
	if (c->state != HC_STREAMING && c->state != HC_UPGRADED)
		return;
	c->expires = g != NULL && g->exp > 0 ? g->exp : 0;
	http_deadline(c, oauth_exp_left_ms(c->expires));
}

void
http_conns_expire_again(void)
{
	struct http_conn	*c;
	size_t			 n = 0;

	TAILQ_FOREACH(c, &http_conns, entry) {
		if (c->expires == 0 || (c->state != HC_STREAMING &&
		    c->state != HC_UPGRADED))
			continue;
		http_deadline(c, oauth_exp_left_ms(c->expires));
		n++;
	}
	if (n > 0)
		log_info("oauth: the leeway changed: %zu connection%s opened "
		    "by a token end at its new expiry", n, n == 1 ? "" : "s");
}

static void
http_event_cb(struct iochan *ch, int what, void *arg)
{
	struct http_conn	*c = arg;

	if (what & IOCHAN_TIMEOUT)
		log_debug("http %s: no write progress in %d s, closing",
		    c->peer, HTTP_WRITE_TIMEOUT);
	else if (what & IOCHAN_ERROR)
		log_debug("http %s: %s", c->peer, strerror(errno));
	http_conn_free(c);
}
