/* SPDX-License-Identifier: ISC */
/*
 * Reading a request: a PROXY protocol header from a trusted proxy, the
 * head (checked before any of the body is read), the body by its length
 * or chunked, and the deadlines for each; malformed or late ones answered
 * and closed.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "http_priv.h"
#include "iochan.h"
#include "log.h"
#include "xmalloc.h"

/* Arm the connection's deadline in milliseconds from now, or clear it (0). */
void
http_deadline(struct http_conn *c, int64_t ms)
{
	struct timeval	tv;

	if (ms <= 0) {
		evtimer_del(c->deadline);
		return;
	}
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	evtimer_add(c->deadline, &tv);
}

/* Answer a malformed request and close. */
static void
http_fail(struct http_conn *c, int status, const char *msg)
{
	char	body[256];
	int	n;

	log_debug("http %s: %d %s", c->peer, status, msg);
	c->keepalive = 0;
	c->state = HC_HANDLING;
	n = snprintf(body, sizeof body, "%s\n", msg);
	http_reply(c, status, "text/plain; charset=utf-8", NULL, body,
	    (size_t)n);
}

/* Hand a complete request to the handler. */
static void
http_dispatch(struct http_conn *c)
{
	c->state = HC_HANDLING;
	http_deadline(c, 0);
	c->svc->handle(c, &c->req);
}

/* Return the name of a header that must appear once but is repeated. */
static const char *
http_duplicate(const struct http_head *h)
{
	static const char *const single[] = {
		"Host", "Content-Type", "Origin", "Mcp-Session-Id",
		"MCP-Protocol-Version", "Last-Event-ID", "Authorization",
		"Upgrade", "Sec-WebSocket-Key", "Sec-WebSocket-Version",
		"Mcp-Method", "Mcp-Name", NULL
	};
	size_t	i, j, n, len;

	for (i = 0; single[i] != NULL; i++) {
		len = strlen(single[i]);
		for (j = n = 0; j < h->nheaders; j++) {
			if (h->headers[j].namelen == len &&
			    strncasecmp(h->headers[j].name, single[i], len) == 0)
				n++;
		}
		if (n > 1)
			return (single[i]);
	}
	return (NULL);
}

static int	http_head_passed(struct http_conn *, int);

/* Parse a request head if a whole one is buffered. */
static int
http_read_head(struct http_conn *c)
{
	struct evbuffer		*in = iochan_input(c->ch);
	struct evbuffer_ptr	 end, from;
	const struct http_header *h;
	size_t			 avail = evbuffer_get_length(in), headlen;
	ssize_t			 r;
	char			*q, why[64];
	const char		*dup;
	struct netaddr		 client;
	int			 keep;

	/* From where the last look stopped: a head that trickles in is
	 * not searched again from its start at every read. */
	if (evbuffer_ptr_set(in, &from, c->head_scanned > 3 &&
	    c->head_scanned <= avail ? c->head_scanned - 3 : 0,
	    EVBUFFER_PTR_SET) != 0)
		fatalx("evbuffer_ptr_set");
	end = evbuffer_search(in, "\r\n\r\n", 4, &from);
	if (end.pos < 0) {
		if (avail > HTTP_MAX_HEAD) {
			http_fail(c, 431, "request head too large");
			return (-1);
		}
		c->head_scanned = (unsigned int)avail;
		return (0);
	}
	c->head_scanned = 0;
	headlen = (size_t)end.pos + 4;
	if (headlen > HTTP_MAX_HEAD) {
		http_fail(c, 431, "request head too large");
		return (-1);
	}
	/* One byte more, a NUL: no header value is a C string, but a slip
	 * then stops at the end of the head rather than beyond. */
	c->headbuf = xmalloc(headlen + 1);
	evbuffer_remove(in, c->headbuf, headlen);
	c->headbuf[headlen] = '\0';
	r = http_parse_request(c->headbuf, headlen, HTTP_MAX_HEAD,
	    &c->req.head);
	if (r <= 0) {
		http_fail(c, r < 0 ? (int)-r : 400, "malformed request head");
		return (-1);
	}
	/* Known from here on: the answer to a HEAD has no body. */
	c->method = xstrndup(c->req.head.method, c->req.head.methodlen);
	if ((dup = http_duplicate(&c->req.head)) != NULL) {
		snprintf(why, sizeof why, "duplicate %s header", dup);
		http_fail(c, 400, why);
		return (-1);
	}
	/* Behind a trusted proxy: the client it forwarded for. */
	if (c->conn_addr.family != 0) {
		r = proxy_request_peer(&c->conn_addr, &c->req.head, &client,
		    &dup);
		if (r < 0) {
			log_warnx("http %s: %s", c->conn_peer, dup);
			http_fail(c, 400, dup);
			return (-1);
		}
		if (r > 0)
			netaddr_format(&client, c->peer, sizeof c->peer);
	}
	c->path = xstrndup(c->req.head.target, c->req.head.targetlen);
	if ((q = strchr(c->path, '?')) != NULL) {
		*q = '\0';
		c->query = xstrdup(q + 1);
	} else
		c->query = xstrdup("");

	c->keepalive = c->req.head.minor >= 1;
	if ((h = http_header(&c->req.head, "Connection")) != NULL) {
		if (http_has_token(h->value, h->valuelen, "close"))
			c->keepalive = 0;
		else if (http_has_token(h->value, h->valuelen, "keep-alive"))
			c->keepalive = 1;
	}
	r = http_body_framing(&c->req.head, 1, &c->framing, &c->remaining);
	if (r < 0) {
		http_fail(c, (int)-r, "bad body framing");
		return (-1);
	}
	if (c->framing == HTTP_BODY_LENGTH && c->remaining > conf->max_body) {
		c->too_big = 1;
		c->framing = HTTP_BODY_NONE;
	}
	c->req.method = c->method;
	c->req.path = c->path;
	c->req.query = c->query;
	c->req.body = evbuffer_new();
	http_chunked_init(&c->chunked);

	/*
	 * The head is checked (Host, Origin, credentials) before any of the
	 * body is read: a refused peer cannot make the gateway hold a body.
	 * A refusal closes the connection when a body would follow.
	 */
	keep = c->keepalive;
	if (c->framing != HTTP_BODY_NONE || c->too_big)
		c->keepalive = 0;
	c->state = HC_HANDLING;
	if (c->svc->check != NULL && (r = c->svc->check(c, &c->req)) != 0) {
		/* Decided later (http_check_again), or refused. */
		c->check_keep = keep;
		return (r > 0 ? 0 : -1);
	}
	return (http_head_passed(c, keep));
}

/* The head passed its check: the body may come. */
static int
http_head_passed(struct http_conn *c, int keep)
{
	const struct http_header *h;

	c->state = HC_HEAD;
	c->keepalive = keep;
	if (c->framing != HTTP_BODY_NONE) {
		h = http_header(&c->req.head, "Expect");
		if (h != NULL && http_value_is(h, "100-continue"))
			evbuffer_add(iochan_output(c->ch),
			    "HTTP/1.1 100 Continue\r\n\r\n", 25);
	}
	return (1);
}

/*
 * Copy body bytes, not move the input's chunks: a read of a few bytes
 * into an empty input sits in a chunk of kilobytes, and a body that
 * trickles in would keep one chunk per read, far past max_body.
 */
static void
http_body_copy(struct evbuffer *body, struct evbuffer *in, size_t take)
{
	struct evbuffer_iovec	v;
	int			n;

	if (take == 0)
		return;
	if (evbuffer_reserve_space(body, (ev_ssize_t)take, &v, 1) != 1)
		fatalx("evbuffer_reserve_space");
	if ((n = evbuffer_remove(in, v.iov_base, take)) < 0)
		fatalx("evbuffer_remove");
	v.iov_len = (size_t)n;
	evbuffer_commit_space(body, &v, 1);
}

/* Read body bytes; 1 when the body is complete. */
static int
http_read_body(struct http_conn *c)
{
	struct evbuffer	*in = iochan_input(c->ch);
	size_t		 avail, take;
	ssize_t		 r;
	unsigned char	*p;
	int		 done;

	switch (c->framing) {
	case HTTP_BODY_NONE:
		return (1);
	case HTTP_BODY_LENGTH:
		avail = evbuffer_get_length(in);
		take = avail < c->remaining ? avail : (size_t)c->remaining;
		/* What completes the body is moved: reads appended to what
		 * was buffered share its chunks.  A part is copied. */
		if (take == c->remaining)
			evbuffer_remove_buffer(in, c->req.body, take);
		else
			http_body_copy(c->req.body, in, take);
		c->remaining -= take;
		c->body_bytes += take;
		return (c->remaining == 0);
	case HTTP_BODY_CHUNKED:
		avail = evbuffer_get_length(in);
		if (avail == 0)
			return (0);
		p = evbuffer_pullup(in, (ev_ssize_t)avail);
		r = http_chunked_decode(&c->chunked, (const char *)p, avail,
		    c->req.body, conf->max_body, &done);
		if (r == -2) {
			c->too_big = 1;
			evbuffer_drain(c->req.body,
			    evbuffer_get_length(c->req.body));
			return (1);
		}
		if (r < 0) {
			http_fail(c, 400, "malformed chunked body");
			return (-1);
		}
		evbuffer_drain(in, (size_t)r);
		c->body_bytes += (uint64_t)r;
		return (done);
	default:
		return (1);
	}
}

/*
 * A connection from a trusted proxy: take a PROXY protocol header if one
 * begins it (the client's address then names the connection), else go on
 * with the request.  A malformed header closes the connection.  0 to go
 * on, -1 if it is closed or more input is needed.
 */
static int
http_proxy_header(struct http_conn *c)
{
	struct evbuffer		*in = iochan_input(c->ch);
	struct proxy_info	 pi;
	const unsigned char	*p;
	const char		*why = "";
	size_t			 avail = evbuffer_get_length(in);
	ssize_t			 n;

	p = evbuffer_pullup(in, (ev_ssize_t)(avail < PROXY_V2_MAX ? avail :
	    PROXY_V2_MAX));
	switch (proxy_detect(p, avail)) {
	case -1:
		return (-1);
	case 0:
		c->state = HC_HEAD;
		return (0);
	}
	n = proxy_parse(p, avail < PROXY_V2_MAX ? avail : PROXY_V2_MAX, &pi,
	    &why);
	if (n == 0 && avail < PROXY_V2_MAX)
		return (-1);
	if (n <= 0) {
		log_warnx("http %s: a bad PROXY protocol header from a trusted "
		    "proxy: %s; closing", c->conn_peer, why[0] != '\0' ? why :
		    "too long");
		http_conn_free(c);
		return (-1);
	}
	evbuffer_drain(in, (size_t)n);
	if (pi.has_addr) {
		c->conn_addr = pi.src;
		netaddr_format(&c->conn_addr, c->conn_peer,
		    sizeof c->conn_peer);
		memcpy(c->peer, c->conn_peer, sizeof c->peer);
	}
	c->state = HC_HEAD;
	return (0);
}

/* Start reading a body. */
static void
http_body_begin(struct http_conn *c)
{
	c->state = HC_BODY;
	c->body_start = now_ms();
	c->body_bytes = 0;
	http_deadline(c, HTTP_BODY_TIMEOUT * 1000);
}

void
http_check_again(struct http_conn *c)
{
	int	r;

	if (c->state != HC_HANDLING)
		fatalx("%s: no request waits", __func__);
	if ((r = c->svc->check(c, &c->req)) != 0)
		return;		/* refused (answered), or later still */
	if (http_head_passed(c, c->check_keep) != 1)
		return;
	http_body_begin(c);
	/* While it waited, reading stopped past HTTP_MAX_UNREAD. */
	iochan_read(c->ch, 1);
	http_next(c);
}

/* Process buffered input as far as it goes. */
void
http_next(struct http_conn *c)
{
	if (c->state == HC_PROXY && http_proxy_header(c) != 0)
		return;
	static const char	 too_large[] = "{\"jsonrpc\":\"2.0\",\"id\":null,"
	    "\"error\":{\"code\":-32600,\"message\":\"request body too "
	    "large\"}}";
	int			 r;

	if (c->state == HC_HEAD) {
		if (!c->head_started &&
		    evbuffer_get_length(iochan_input(c->ch)) > 0) {
			c->head_started = 1;
			http_deadline(c, HTTP_HEAD_TIMEOUT * 1000);
		}
		if ((r = http_read_head(c)) <= 0)
			return;
		http_body_begin(c);
	}
	if (c->state == HC_BODY) {
		if ((r = http_read_body(c)) <= 0)
			return;
		if (c->too_big) {
			c->state = HC_HANDLING;
			c->keepalive = 0;
			http_reply(c, 413, "application/json", NULL,
			    too_large, strlen(too_large));
			return;
		}
		http_dispatch(c);
	}
}

/* A deadline passed: close an idle connection, answer 408, or end what
 * an expired credential opened. */
void
http_deadline_cb(evutil_socket_t fd, short events, void *arg)
{
	struct http_conn	*c = arg;
	int64_t			 allowed, elapsed;

	switch (c->state) {
	case HC_PROXY:
	case HC_HEAD:
		if (!c->head_started ||
		    evbuffer_get_length(iochan_input(c->ch)) == 0) {
			log_debug("http %s: idle, closing", c->peer);
			http_conn_free(c);
			return;
		}
		log_info("http %s: request head not complete within %d s",
		    c->peer, HTTP_HEAD_TIMEOUT);
		http_fail(c, 408, "request head not complete in time");
		return;
	case HC_BODY:
		allowed = (int64_t)HTTP_BODY_TIMEOUT * 1000 +
		    (int64_t)(c->body_bytes * 1000 / HTTP_BODY_RATE);
		elapsed = now_ms() - c->body_start;
		if (elapsed < allowed) {
			http_deadline(c, allowed - elapsed);
			return;
		}
		log_info("http %s: request body too slow (%llu bytes in %lld "
		    "s)", c->peer, (unsigned long long)c->body_bytes,
		    (long long)(elapsed / 1000));
		http_fail(c, 408, "request body not complete in time");
		return;
	case HC_STREAMING:
		/* The credential of its stream expired (http_conn_expire). */
		if (c->stream != NULL)
			stream_token_expired(c->stream);
		return;
	case HC_UPGRADED:
		if (c->up->expired != NULL)
			c->up->expired(c, c->up_arg);
		return;
	case HC_LINGER:
		http_conn_free(c);
		return;
	default:
		return;
	}
}
