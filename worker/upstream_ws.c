/* SPDX-License-Identifier: ISC */
/*
 * WebSocket upstreams (ws:// and wss://): one JSON-RPC message per text
 * frame, subprotocol "mcp".  The connection is a bufferevent (with TLS for
 * wss://, the host name verified), the HTTP upgrade is parsed with our own
 * HTTP parser, and wslay does the framing (a message is reassembled in
 * common/ws_msg.c, within max_message and a deadline, so a message sent a
 * byte per fragment costs no more than its size).  A ping every ping_interval
 * seconds keeps the connection honest: no frame at all for two intervals
 * and the connection is declared lost.  Any loss ends the connection and
 * the supervisor reconnects with backoff.  An upgrade refused with 401
 * gets a token and connects again (upoauth_connect_refused).
 */
#include "config.h"

#include <sys/random.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/dns.h>
#include <event2/event.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <wslay/wslay.h>

#include "curl_event.h"
#include "http_parse.h"
#include "log.h"
#include "redact.h"
#include "worker.h"
#include "ws_accept.h"
#include "ws_msg.h"
#include "xmalloc.h"

#define WS_MAX_HEAD	16384
#define WS_MAX_QUEUED	(64 * 1024 * 1024)	/* for the peer, in all */

struct ws_tp {
	struct conn		*conn;
	struct bufferevent	*bev;
	struct evdns_base	*dns;
	SSL_CTX			*ssl_ctx;
	wslay_event_context_ptr	 ws;
	char			*host;
	char			*path;		/* with the query */
	int			 port;
	int			 tls;
	char			 key[32];	/* Sec-WebSocket-Key */
	unsigned int		 token_gen;	/* the OAuth token sent, 0: none */
	int			 upgraded;
	struct event		*ping;
	struct ws_msg		 msg;		/* the message being received */
	struct event		*deadline;	/* for that message */
	int64_t			 last_rx;
	int			 lost;
	int			 pumping;	/* inside wslay_event_recv/send */
	int			 pump_again;	/* asked for while pumping */
	struct chan_waiter	 waiter;	/* reading paused for the
						   supervisor's channel */
	int64_t			 paused_at;	/* ms, since waiting */
};

/* The connection is gone; say why once. */
static void
ws_lost(struct ws_tp *tp, const char *why)
{
	if (tp->lost)
		return;
	tp->lost = 1;
	conn_lost(tp->conn, why);
}

/* wslay: take bytes from the input buffer. */
static ssize_t
ws_recv_cb(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, int flags,
    void *arg)
{
	struct ws_tp	*tp = arg;
	struct evbuffer	*in = bufferevent_get_input(tp->bev);
	int		 n;

	if (chan_congested()) {
		/* The peer is held back by TCP meanwhile. */
		if (!tp->waiter.waiting)
			tp->paused_at = now_ms();
		bufferevent_disable(tp->bev, EV_READ);
		chan_wait(&tp->waiter);
	}
	if (evbuffer_get_length(in) == 0 || tp->waiter.waiting) {
		wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
		return (-1);
	}
	n = evbuffer_remove(in, buf, len);
	if (n > 0)
		tp->last_rx = now_ms();
	return (n);
}

/* wslay: queue bytes on the output buffer. */
static ssize_t
ws_send_cb(wslay_event_context_ptr ctx, const uint8_t *data, size_t len,
    int flags, void *arg)
{
	struct ws_tp	*tp = arg;
	struct evbuffer	*out = bufferevent_get_output(tp->bev);

	if (evbuffer_get_length(out) > WS_MAX_QUEUED) {
		wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
		return (-1);
	}
	evbuffer_add(out, data, len);
	return ((ssize_t)len);
}

/* wslay: masking keys. */
static int
ws_genmask_cb(wslay_event_context_ptr ctx, uint8_t *buf, size_t len,
    void *arg)
{
	if (getrandom(buf, len, 0) != (ssize_t)len)
		return (-1);
	return (0);
}

/* Give up on the connection, telling the peer why with a close code. */
static void
ws_refuse(struct ws_tp *tp, uint16_t code, const char *why)
{
	wslay_event_queue_close(tp->ws, code, NULL, 0);
	wslay_event_shutdown_read(tp->ws);
	ws_lost(tp, why);
}

/* wslay: a frame begins; is its message still within max_message? */
static void
ws_frame_start_cb(wslay_event_context_ptr ctx,
    const struct wslay_event_on_frame_recv_start_arg *f, void *arg)
{
	struct ws_tp	*tp = arg;
	char		 why[160];

	if (tp->lost || ws_msg_start(&tp->msg, f, now_ms()) == 0)
		return;
	snprintf(why, sizeof why, "a WebSocket message over max_message (%zu "
	    "bytes)", tp->msg.max);
	ws_refuse(tp, WSLAY_CODE_MESSAGE_TOO_BIG, why);
}

/* wslay: payload of a frame, onto its message. */
static void
ws_frame_chunk_cb(wslay_event_context_ptr ctx,
    const struct wslay_event_on_frame_recv_chunk_arg *c, void *arg)
{
	struct ws_tp	*tp = arg;

	ws_msg_chunk(&tp->msg, c->data, c->data_length);
}

/* wslay: a whole message arrived (its payload is in tp->msg). */
static void
ws_msg_cb(wslay_event_context_ptr ctx,
    const struct wslay_event_on_msg_recv_arg *m, void *arg)
{
	struct ws_tp	*tp = arg;
	char		 why[160];

	switch (m->opcode) {
	case WSLAY_TEXT_FRAME:
		if (!tp->lost && !tp->msg.failed)
			conn_message(tp->conn, (const char *)tp->msg.buf,
			    tp->msg.len, 0, NULL);
		ws_msg_reset(&tp->msg);
		break;
	case WSLAY_BINARY_FRAME:
		log_warnx("binary WebSocket message of %zu bytes dropped "
		    "(MCP uses text frames)", tp->msg.len);
		ws_msg_reset(&tp->msg);
		break;
	case WSLAY_CONNECTION_CLOSE:
		snprintf(why, sizeof why, "the WebSocket was closed (%u)",
		    (unsigned int)m->status_code);
		ws_lost(tp, why);
		break;
	default:
		break;	/* ping (answered by wslay) and pong */
	}
}

/* Arm the deadline of a message begun and not yet whole. */
static void
ws_deadline_arm(struct ws_tp *tp)
{
	struct timeval	tv;
	int64_t		left;

	if (tp->lost || evtimer_pending(tp->deadline, NULL) ||
	    (left = ws_msg_left(&tp->msg, now_ms())) < 0)
		return;
	tv.tv_sec = left / 1000;
	tv.tv_usec = (left % 1000) * 1000;
	evtimer_add(tp->deadline, &tv);
}

/* A message was not whole in time: close with 1008. */
static void
ws_deadline_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ws_tp	*tp = arg;
	int64_t		 now = now_ms(), left;
	char		 why[160];
	struct timeval	 later = { 1, 0 };

	if (tp->lost || (left = ws_msg_left(&tp->msg, now)) < 0)
		return;
	if (tp->waiter.waiting) {
		/* Not read because we paused: not the peer's delay. */
		evtimer_add(tp->deadline, &later);
		return;
	}
	if (left > 0) {
		ws_deadline_arm(tp);
		return;
	}
	snprintf(why, sizeof why, "a WebSocket message was not whole after "
	    "%lld s (%zu bytes in %lu frames)", (long long)((now -
	    tp->msg.started) / 1000), tp->msg.len, tp->msg.frames);
	ws_refuse(tp, WSLAY_CODE_POLICY_VIOLATION, why);
	/* The close frame goes out if it can; the connection is lost. */
	wslay_event_send(tp->ws);
}

/*
 * Drive wslay after I/O; detect the end of the connection.  wslay must not
 * be re-entered from its callbacks: a message handled in ws_msg_cb may be
 * answered at once (ws_tp_send), and a TLS bufferevent may call ws_read_cb
 * or ws_write_cb from inside ws_send_cb.  wslay_event_recv() called again
 * there consumes the frames after the message it is delivering, and the
 * outer call then resets the message being reassembled under the inner
 * one (wslay_queue_tail asserts, the worker aborts).  So a pump asked for
 * while pumping only queues (wslay_event_queue_msg is allowed from its
 * callbacks) and asks for one more turn, taken here once wslay returned.
 */
static void
ws_pump(struct ws_tp *tp)
{
	if (tp->pumping) {
		tp->pump_again = 1;
		return;
	}
	tp->pumping = 1;
	do {
		tp->pump_again = 0;
		if (tp->lost)
			break;
		if (wslay_event_recv(tp->ws) != 0 ||
		    wslay_event_send(tp->ws) != 0) {
			ws_lost(tp, "WebSocket protocol error");
			break;
		}
	} while (tp->pump_again);
	tp->pumping = 0;
	if (!tp->lost && !wslay_event_want_read(tp->ws) &&
	    !wslay_event_want_write(tp->ws))
		ws_lost(tp, "the WebSocket was closed");
	ws_deadline_arm(tp);
}

/* Check a header value, trimmed, against an expected one. */
static int
ws_header_is(const struct http_head *h, const char *name, const char *want,
    int token)
{
	const struct http_header	*f = http_header(h, name);

	if (f == NULL)
		return (0);
	if (token)
		return (http_has_token(f->value, f->valuelen, want));
	return (f->valuelen == strlen(want) &&
	    strncasecmp(f->value, want, f->valuelen) == 0);
}

/* Is the server's Sec-WebSocket-Accept the one for our key, exactly? */
static int
ws_accept_ok(const struct ws_tp *tp, const struct http_head *h)
{
	const struct http_header	*f;
	char				 want[WS_ACCEPT_LEN + 1];

	if ((f = http_header(h, "Sec-WebSocket-Accept")) == NULL ||
	    ws_accept(tp->key, strlen(tp->key), want) != 0)
		return (0);
	return (f->valuelen == WS_ACCEPT_LEN &&
	    memcmp(f->value, want, WS_ACCEPT_LEN) == 0);
}

/*
 * The upgrade was refused with 401: 0 if a token is being got (this
 * connection is done with; the transport starts again with the token).
 */
static int
ws_unauthorized(struct ws_tp *tp, const struct http_head *h)
{
	char	*challenge = NULL;
	size_t	 i;
	int	 r;

	for (i = 0; i < h->nheaders; i++)
		if (http_name_is(&h->headers[i], "WWW-Authenticate"))
			upoauth_challenge_add(&challenge, h->headers[i].value,
			    h->headers[i].valuelen);
	r = upoauth_connect_refused(tp->conn, "the WebSocket upgrade",
	    challenge, tp->token_gen);
	free(challenge);
	if (r == 0) {
		bufferevent_disable(tp->bev, EV_READ | EV_WRITE);
		bufferevent_setcb(tp->bev, NULL, NULL, NULL, NULL);
	}
	return (r);
}

/* Read the upgrade response; then hand the connection to wslay. */
static void
ws_read_upgrade(struct ws_tp *tp)
{
	struct evbuffer			*in = bufferevent_get_input(tp->bev);
	struct evbuffer_ptr		 end;
	struct http_head		 h;
	const struct http_header	*f;
	char				*head, why[256];
	size_t				 len;
	ssize_t				 r;

	end = evbuffer_search(in, "\r\n\r\n", 4, NULL);
	if (end.pos < 0) {
		if (evbuffer_get_length(in) > WS_MAX_HEAD)
			ws_lost(tp, "the WebSocket upgrade response is too "
			    "large");
		return;
	}
	len = (size_t)end.pos + 4;
	head = xmalloc(len);
	evbuffer_remove(in, head, len);
	r = http_parse_response(head, len, WS_MAX_HEAD, &h);
	if (r > 0 && h.status == 401 && ws_unauthorized(tp, &h) == 0) {
		free(head);
		return;
	}
	if (r <= 0)
		snprintf(why, sizeof why, "malformed WebSocket upgrade "
		    "response");
	else if (h.status == 401 && upoauth_last_error() != NULL)
		snprintf(why, sizeof why, "the WebSocket upgrade was refused "
		    "(HTTP 401): %s", upoauth_last_error());
	else if (h.status != 101)
		snprintf(why, sizeof why, "the WebSocket upgrade was refused "
		    "(HTTP %d)", h.status);
	else if (!ws_header_is(&h, "Upgrade", "websocket", 1) ||
	    !ws_header_is(&h, "Connection", "upgrade", 1))
		snprintf(why, sizeof why, "not a WebSocket upgrade");
	else if (!ws_accept_ok(tp, &h))
		snprintf(why, sizeof why, "bad Sec-WebSocket-Accept");
	else if (!ws_header_is(&h, "Sec-WebSocket-Protocol", "mcp", 0)) {
		f = http_header(&h, "Sec-WebSocket-Protocol");
		snprintf(why, sizeof why, "the server did not accept the "
		    "\"mcp\" subprotocol%s%.*s", f != NULL ? ", it chose " :
		    "", f != NULL ? (int)f->valuelen : 0,
		    f != NULL ? f->value : "");
	} else
		why[0] = '\0';
	free(head);
	if (why[0] != '\0') {
		ws_lost(tp, why);
		return;
	}
	tp->upgraded = 1;
	tp->last_rx = now_ms();
	log_debug("WebSocket connected to %s", url_redact(sc->url, why,
	    sizeof why));
	conn_transport_up(tp->conn);
	ws_pump(tp);
}

static void
ws_read_cb(struct bufferevent *bev, void *arg)
{
	struct ws_tp	*tp = arg;

	if (!tp->upgraded)
		ws_read_upgrade(tp);
	else
		ws_pump(tp);
}

static void
ws_write_cb(struct bufferevent *bev, void *arg)
{
	struct ws_tp	*tp = arg;

	if (tp->upgraded)
		ws_pump(tp);
}

/* Send the upgrade request. */
static void
ws_send_upgrade(struct ws_tp *tp)
{
	struct evbuffer		*out = bufferevent_get_output(tp->bev);
	struct curl_slist	*extra, *e;
	unsigned char		 raw[16];

	if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw)
		fatal("getrandom");
	EVP_EncodeBlock((unsigned char *)tp->key, raw, sizeof raw);
	/* An IPv6 literal is bracketed in the Host header. */
	evbuffer_add_printf(out, strchr(tp->host, ':') != NULL ?
	    "GET %s HTTP/1.1\r\nHost: [%s]" : "GET %s HTTP/1.1\r\nHost: %s",
	    tp->path, tp->host);
	if ((!tp->tls && tp->port != 80) || (tp->tls && tp->port != 443))
		evbuffer_add_printf(out, ":%d", tp->port);
	evbuffer_add_printf(out, "\r\nUpgrade: websocket\r\n"
	    "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
	    "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: mcp\r\n",
	    tp->key);
	if (worker_headers(&extra) != 0) {
		ws_lost(tp, worker_last_error());
		return;
	}
	extra = upoauth_header(extra, &tp->token_gen);
	for (e = extra; e != NULL; e = e->next)
		evbuffer_add_printf(out, "%s\r\n", e->data);
	curlev_headers_free(extra);
	evbuffer_add(out, "\r\n", 2);
}

static void
ws_event_cb(struct bufferevent *bev, short events, void *arg)
{
	struct ws_tp	*tp = arg;
	char		 why[512], url[256];
	unsigned long	 e;

	if (events & BEV_EVENT_CONNECTED) {
		ws_send_upgrade(tp);
		return;
	}
	if (events & BEV_EVENT_ERROR) {
		url_redact(sc->url, url, sizeof url);
		e = tp->tls ? bufferevent_get_openssl_error(bev) : 0;
		if (e != 0)
			snprintf(why, sizeof why, "%s: TLS: %s", url,
			    ERR_reason_error_string(e));
		else if (bufferevent_socket_get_dns_error(bev) != 0)
			snprintf(why, sizeof why, "%s: %s", url,
			    evutil_gai_strerror(
			    bufferevent_socket_get_dns_error(bev)));
		else
			snprintf(why, sizeof why, "%s: %s", url,
			    strerror(EVUTIL_SOCKET_ERROR()));
		ws_lost(tp, why);
	} else if (events & BEV_EVENT_TIMEOUT) {
		/* libevent stops writing after a write timeout: the end. */
		url_redact(sc->url, url, sizeof url);
		snprintf(why, sizeof why, "%s: %s within %u s (connect_timeout)",
		    url, tp->upgraded ? "no write progress" :
		    "no connection", sc->connect_timeout);
		ws_lost(tp, why);
	} else if (events & BEV_EVENT_EOF) {
		/* Frames still buffered are read before the end counts. */
		if (tp->upgraded)
			ws_pump(tp);
		ws_lost(tp, "the WebSocket connection closed");
	}
}

/* The supervisor caught up: read the peer again. */
static void
ws_resume(void *arg)
{
	struct ws_tp	*tp = arg;
	int64_t		 now = now_ms();

	/* A message begun before the pause is not late by the pause. */
	if (ws_msg_pending(&tp->msg))
		tp->msg.started += now - tp->paused_at;
	tp->last_rx = now;
	bufferevent_enable(tp->bev, EV_READ);
	ws_pump(tp);
}

/* Send a ping; give up on a peer silent for two intervals (not while we
 * do not read). */
static void
ws_ping_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ws_tp			*tp = arg;
	struct wslay_event_msg		 msg = { WSLAY_PING,
	    (const uint8_t *)"mcp", 3 };

	if (!tp->upgraded)
		return;
	if (!tp->waiter.waiting &&
	    now_ms() - tp->last_rx > 2000LL * sc->ping_interval) {
		ws_lost(tp, "the WebSocket peer stopped answering pings");
		return;
	}
	wslay_event_queue_msg(tp->ws, &msg);
	ws_pump(tp);
}

/* Split ws[s]://host[:port]/path?query. */
static int
ws_parse_url(struct ws_tp *tp)
{
	CURLU	*u;
	char	*host = NULL, *port = NULL, *path = NULL, *query = NULL;
	int	 ok = -1;

	if ((u = curl_url()) == NULL)
		return (-1);
	if (curl_url_set(u, CURLUPART_URL, sc->url,
	    CURLU_NON_SUPPORT_SCHEME) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_PATH, &path, 0) != CURLUE_OK)
		goto out;
	tp->tls = strncmp(sc->url, "wss:", 4) == 0;
	tp->port = tp->tls ? 443 : 80;
	if (curl_url_get(u, CURLUPART_PORT, &port, 0) == CURLUE_OK)
		tp->port = atoi(port);
	curl_url_get(u, CURLUPART_QUERY, &query, 0);
	tp->host = xstrdup(host);
	if (query != NULL)
		xasprintf(&tp->path, "%s?%s", path, query);
	else
		tp->path = xstrdup(path);
	/* An IPv6 literal comes back bracketed; connect wants it bare. */
	ok = 0;
out:
	curl_free(host);
	curl_free(port);
	curl_free(path);
	curl_free(query);
	curl_url_cleanup(u);
	return (ok);
}

/* Set up TLS for wss://, verifying the host name unless told not to. */
static SSL *
ws_ssl(struct ws_tp *tp)
{
	SSL	*ssl;

	if ((tp->ssl_ctx = SSL_CTX_new(TLS_client_method())) == NULL)
		return (NULL);
	SSL_CTX_set_min_proto_version(tp->ssl_ctx, TLS1_2_VERSION);
	if (sc->ca_file != NULL)
		SSL_CTX_load_verify_locations(tp->ssl_ctx, sc->ca_file, NULL);
	else
		SSL_CTX_set_default_verify_paths(tp->ssl_ctx);
	SSL_CTX_set_verify(tp->ssl_ctx, sc->tls_verify ? SSL_VERIFY_PEER :
	    SSL_VERIFY_NONE, NULL);
	if ((ssl = SSL_new(tp->ssl_ctx)) == NULL)
		return (NULL);
	SSL_set_tlsext_host_name(ssl, tp->host);
	if (sc->tls_verify)
		SSL_set1_host(ssl, tp->host);
	return (ssl);
}

static int
ws_tp_start(struct conn *c)
{
	struct ws_tp			*tp;
	struct wslay_event_callbacks	 cbs = {
		ws_recv_cb, ws_send_cb, ws_genmask_cb, ws_frame_start_cb,
		ws_frame_chunk_cb, NULL, ws_msg_cb
	};
	struct timeval			 tv;
	SSL				*ssl;
	char				*host;

	tp = xcalloc(1, sizeof *tp);
	tp->conn = c;
	tp->waiter.resume = ws_resume;
	tp->waiter.arg = tp;
	c->tp = tp;
	upoauth_init();
	if (ws_parse_url(tp) != 0) {
		worker_status("error", "bad WebSocket url");
		return (-1);
	}
	if (tp->tls) {
		if ((ssl = ws_ssl(tp)) == NULL) {
			worker_status("error", "cannot set up TLS");
			return (-1);
		}
		tp->bev = bufferevent_openssl_socket_new(base, -1, ssl,
		    BUFFEREVENT_SSL_CONNECTING, BEV_OPT_CLOSE_ON_FREE);
	} else
		tp->bev = bufferevent_socket_new(base, -1,
		    BEV_OPT_CLOSE_ON_FREE);
	/* OpenSSL's allocations are its own. */
	if (tp->bev == NULL)
		fatalx("bufferevent");
	if (wslay_event_context_client_init(&tp->ws, &cbs, tp) != 0)
		fatalx("wslay_event_context_client_init");
	/* wslay checks each frame; ws_msg the message, in one buffer. */
	wslay_event_config_set_no_buffering(tp->ws, 1);
	wslay_event_config_set_max_recv_msg_length(tp->ws, sc->max_message);
	ws_msg_init(&tp->msg, sc->max_message);
	tp->deadline = evtimer_new(base, ws_deadline_cb, tp);
	bufferevent_setcb(tp->bev, ws_read_cb, ws_write_cb, ws_event_cb, tp);
	bufferevent_enable(tp->bev, EV_READ | EV_WRITE);
	tv.tv_sec = sc->connect_timeout;
	tv.tv_usec = 0;
	bufferevent_set_timeouts(tp->bev, NULL, &tv);
	/*
	 * Without a resolver libevent would fall back to a blocking
	 * getaddrinfo: refuse to start instead (no random numbers, or the
	 * system's resolver configuration cannot be read).
	 */
	if ((tp->dns = evdns_base_new(base,
	    EVDNS_BASE_INITIALIZE_NAMESERVERS)) == NULL) {
		worker_status("error", "cannot set up name resolution");
		return (-1);
	}
	host = tp->host;
	if (host[0] == '[') {	/* an IPv6 literal */
		host = xstrndup(host + 1, strlen(host) - 2);
		free(tp->host);
		tp->host = host;
	}
	worker_status("starting", NULL);
	if (bufferevent_socket_connect_hostname(tp->bev, tp->dns, AF_UNSPEC,
	    tp->host, tp->port) != 0) {
		worker_status("error", "cannot connect");
		return (-1);
	}
	if (sc->ping_interval > 0) {
		tp->ping = event_new(base, -1, EV_PERSIST, ws_ping_cb, tp);
		tv.tv_sec = sc->ping_interval;
		evtimer_add(tp->ping, &tv);
	}
	return (0);
}

/* Send one message as a text frame. */
static void
ws_tp_send(struct conn *c, struct evbuffer *msg)
{
	struct ws_tp		*tp = c->tp;
	struct wslay_event_msg	 m;
	size_t			 len = evbuffer_get_length(msg), queued;

	/* What wslay holds counts too: it queues past WS_MAX_QUEUED. */
	queued = wslay_event_get_queued_msg_length(tp->ws) +
	    evbuffer_get_length(bufferevent_get_output(tp->bev));
	if (tp->lost || queued + len > WS_MAX_QUEUED) {
		evbuffer_drain(msg, len);
		if (!tp->lost)
			ws_lost(tp, "the WebSocket peer is not reading: 64 MiB "
			    "are queued for it");
		return;
	}
	m.opcode = WSLAY_TEXT_FRAME;
	m.msg = evbuffer_pullup(msg, -1);
	m.msg_length = len;
	if (wslay_event_queue_msg(tp->ws, &m) != 0)
		ws_lost(tp, "cannot queue a WebSocket message");
	evbuffer_drain(msg, len);
	ws_pump(tp);
}

/*
 * Never called from inside wslay: conn_lost() frees the connection from
 * the loop, and worker_exit(), which frees it at once, does not return.
 */
static void
ws_tp_stop(struct conn *c)
{
	struct ws_tp	*tp = c->tp;

	c->tp = NULL;
	chan_unwait(&tp->waiter);
	if (tp->ping != NULL)
		event_free(tp->ping);
	if (tp->deadline != NULL)
		event_free(tp->deadline);
	ws_msg_reset(&tp->msg);
	if (tp->ws != NULL)
		wslay_event_context_free(tp->ws);
	if (tp->bev != NULL)
		bufferevent_free(tp->bev);
	if (tp->dns != NULL)
		evdns_base_free(tp->dns, 0);
	if (tp->ssl_ctx != NULL)
		SSL_CTX_free(tp->ssl_ctx);
	free(tp->host);
	free(tp->path);
	free(tp);
}

const struct transport_ops transport_ws = {
	.name = "ws",
	.start = ws_tp_start,
	.send = ws_tp_send,
	.stop = ws_tp_stop,
};
