/* SPDX-License-Identifier: ISC */
/*
 * MCP over WebSocket (RFC 6455) on the HTTP listener: GET ws_path with
 * subprotocol "mcp" upgrades the connection, and each text frame then
 * carries one JSON-RPC message.  A WebSocket session is a session like any
 * other; all its answers, notifications and requests go on its connection
 * (one stream, STREAM_WS), and it ends, as a DELETE would end it, when the
 * connection does, or when the close frame goes out.  Frames from the client are parsed by libwslay (masking,
 * fragments, control frames, the close handshake); their payload is
 * reassembled in common/ws_msg.c, which bounds a message's memory by
 * max_body, whatever its fragments, and its time by a deadline.  Frames to
 * the client are written here, one unfragmented text frame per message, so
 * a large answer goes out without a copy.  wslay is driven only from loop
 * events (ws_read, ws_drained, the timers), never from its own callbacks,
 * which only queue.  A connection an OAuth access token opened is closed
 * with 1008 when the token expires (ws_expired).
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <wslay/wslay.h>

#include "http_parse.h"
#include "log.h"
#include "supervisor.h"
#include "utf8.h"
#include "ws_accept.h"
#include "ws_msg.h"
#include "xmalloc.h"

#define WS_COPY_MAX	16384	/* smaller messages are copied */
#define WS_PING_DATA	"mcp-supervisor"
#define WS_PAUSE_QUEUED	(1024 * 1024)	/* unwritten bytes that stop
					   reading (pongs a peer
					   does not read) */

/* One WebSocket client connection; owned by its http_conn. */
struct ws_client {
	struct http_conn	*c;		/* borrowed: it owns us */
	wslay_event_context_ptr	 ctx;
	struct session		*s;		/* ended with the connection, or
						   once its close frame is out */
	struct event		*ping;
	struct ws_msg		 msg;		/* the message being received */
	struct event		*deadline;	/* for that message */
	int64_t			 last_rx;	/* monotonic ms */
	int			 closing;	/* a close frame was queued */
	int			 paused;	/* not reading: output waits */
};

static void	ws_read(struct http_conn *, void *);
static void	ws_drained(struct http_conn *, void *);
static void	ws_closed(struct http_conn *, void *);
static void	ws_expired(struct http_conn *, void *);

static const struct http_upgraded ws_upgraded = {
	ws_read, ws_drained, ws_closed, ws_expired
};

/* wslay reads what the connection has received. */
static ssize_t
ws_recv_cb(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, int flags,
    void *arg)
{
	struct ws_client	*ws = arg;
	int			 n;

	n = evbuffer_remove(http_conn_input(ws->c), buf, len);
	if (n <= 0) {
		wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
		return (-1);
	}
	return (n);
}

/* wslay writes a control frame (pong, close): queue it all. */
static ssize_t
ws_send_cb(wslay_event_context_ptr ctx, const uint8_t *data, size_t len,
    int flags, void *arg)
{
	struct ws_client	*ws = arg;

	evbuffer_add(http_conn_output(ws->c), data, len);
	return ((ssize_t)len);
}

/* Queue a close frame, once; the connection closes when it is written. */
static void
ws_close(struct ws_client *ws, uint16_t code, const char *why)
{
	if (ws->closing)
		return;
	ws->closing = 1;
	log_info("session %.8s: closing its WebSocket (%u %s)",
	    ws->s != NULL ? ws->s->id : "-", code, why);
	wslay_event_queue_close(ws->ctx, code, (const uint8_t *)why,
	    strlen(why) < 123 ? strlen(why) : 122);
}

/* Answer a message that is not a valid JSON-RPC message. */
static void
ws_reject(struct ws_client *ws, const char *p, const struct jrpc *m, int code,
    const char *why)
{
	struct evbuffer	*buf = evbuffer_new();

	jrpc_add_error(buf, m->id.len != 0 ? p + m->id.off : NULL, m->id.len,
	    code, code == JRPC_PARSE_ERROR ? "Parse error" : why, NULL);
	if (ws->s->only != NULL)
		stream_send(ws->s->only, buf, 1);
	evbuffer_free(buf);
}

/* A frame begins: is its message still within max_body, and text? */
static void
ws_frame_start(wslay_event_context_ptr ctx,
    const struct wslay_event_on_frame_recv_start_arg *arg, void *user)
{
	struct ws_client	*ws = user;
	char			 why[96];

	if (arg->opcode == WSLAY_BINARY_FRAME) {
		/* Refused now, not once max_body of it is held. */
		ws_close(ws, WSLAY_CODE_UNSUPPORTED_DATA, "binary frames are "
		    "not MCP: send JSON-RPC in text frames");
		wslay_event_shutdown_read(ctx);
		return;
	}
	if (ws_msg_start(&ws->msg, arg, now_ms()) == 0)
		return;
	snprintf(why, sizeof why, "a message over max_body (%zu bytes)",
	    conf->max_body);
	ws_close(ws, WSLAY_CODE_MESSAGE_TOO_BIG, why);
	wslay_event_shutdown_read(ctx);
}

/* Payload of a frame: onto its message. */
static void
ws_frame_chunk(wslay_event_context_ptr ctx,
    const struct wslay_event_on_frame_recv_chunk_arg *arg, void *user)
{
	struct ws_client	*ws = user;

	ws_msg_chunk(&ws->msg, arg->data, arg->data_length);
}

/* A whole text message from the client. */
static void
ws_text(struct ws_client *ws, const uint8_t *msg, size_t len)
{
	struct jrpc		 m;
	const char		*why, *p = (const char *)msg;
	int			 r;

	if (ws->closing || ws->s == NULL || ws->msg.failed)
		return;
	if (!utf8_valid(msg, len)) {
		ws_close(ws, WSLAY_CODE_INVALID_FRAME_PAYLOAD_DATA, "a text "
		    "frame must be UTF-8");
		return;
	}
	memset(&m, 0, sizeof m);
	if ((r = jrpc_scan(p, len, &m, &why)) != 0) {
		log_debug("session %.8s: bad message: %s", ws->s->id, why);
		ws_reject(ws, p, &m, r, why);
		return;
	}
	route_message(ws->s, ws->s->only, &m);
}

/* A whole message from the client (its payload is in ws->msg). */
static void
ws_message(wslay_event_context_ptr ctx,
    const struct wslay_event_on_msg_recv_arg *arg, void *user)
{
	struct ws_client	*ws = user;

	switch (arg->opcode) {
	case WSLAY_TEXT_FRAME:
		ws_text(ws, ws->msg.buf, ws->msg.len);
		break;
	case WSLAY_BINARY_FRAME:
		ws_close(ws, WSLAY_CODE_UNSUPPORTED_DATA, "binary frames are "
		    "not MCP: send JSON-RPC in text frames");
		break;
	case WSLAY_CONNECTION_CLOSE:
		/* wslay answers it; the connection closes once that is out. */
		ws->closing = 1;
		return;
	default:
		return;	/* ping (answered by wslay) or pong */
	}
	ws_msg_reset(&ws->msg);
}

/*
 * Write what wslay has queued; once a close frame went out, the session
 * ends, and the connection closes when its output is written.  The
 * session ends now, not with the connection: one left without it meanwhile
 * could be freed by a sweep, a reload or a shutdown, and then again.
 */
static void
ws_flush(struct ws_client *ws)
{
	struct session	*s = ws->s;

	if (wslay_event_send(ws->ctx) != 0 ||
	    (wslay_event_get_close_sent(ws->ctx) &&
	    wslay_event_get_queued_msg_count(ws->ctx) == 0)) {
		/* No more frames: the stream lets go of the connection. */
		ws->s = NULL;
		if (s != NULL && s->only != NULL && s->only->conn == ws->c)
			s->only->conn = NULL;
		http_set_stream(ws->c, NULL);
		if (s != NULL)
			session_free(s, "WebSocket closed");
		http_conn_finish(ws->c);
	}
}

/* Arm the deadline of a message begun and not yet whole. */
static void
ws_deadline_arm(struct ws_client *ws)
{
	struct timeval	tv;
	int64_t		left;

	if (ws->closing || evtimer_pending(ws->deadline, NULL) ||
	    (left = ws_msg_left(&ws->msg, now_ms())) < 0)
		return;
	tv.tv_sec = left / 1000;
	tv.tv_usec = (left % 1000) * 1000;
	evtimer_add(ws->deadline, &tv);
}

/* A message was not whole in time: close with 1008. */
static void
ws_deadline_cb(evutil_socket_t fd, short events, void *arg)
{
	struct ws_client	*ws = arg;
	int64_t			 now = now_ms(), left;
	char			 why[112];

	if (ws->closing || (left = ws_msg_left(&ws->msg, now)) < 0)
		return;
	if (left > 0) {
		/* Another message, or this one grew: more time. */
		ws_deadline_arm(ws);
		return;
	}
	snprintf(why, sizeof why, "a message not whole after %lld s (%zu "
	    "bytes in %lu frames)", (long long)((now - ws->msg.started) /
	    1000), ws->msg.len, ws->msg.frames);
	ws_close(ws, WSLAY_CODE_POLICY_VIOLATION, why);
	wslay_event_shutdown_read(ws->ctx);
	ws_flush(ws);
}

/* New bytes from the client. */
static void
ws_read(struct http_conn *c, void *arg)
{
	struct ws_client	*ws = arg;

	ws->last_rx = now_ms();
	if (wslay_event_recv(ws->ctx) != 0) {
		/* A protocol error: wslay queued a close frame (1002, or
		 * one with no code for an oversized control frame). */
		log_info("session %.8s: WebSocket protocol error from %s",
		    ws->s != NULL ? ws->s->id : "-", http_conn_peer(c));
		ws->closing = 1;
	}
	ws_deadline_arm(ws);
	ws_flush(ws);
	/*
	 * Every ping read is a pong to write: a peer that sends pings and
	 * reads nothing would grow the output without bound.  Stop reading
	 * until it has taken what is queued; its sends then block in TCP.
	 */
	if (!ws->paused && http_conn_queued(c) > WS_PAUSE_QUEUED) {
		ws->paused = 1;
		http_conn_reading(c, 0);
	}
}

static void
ws_drained(struct http_conn *c, void *arg)
{
	struct ws_client	*ws = arg;

	if (ws->paused) {
		ws->paused = 0;
		http_conn_reading(c, 1);
	}
	if (wslay_event_want_write(ws->ctx))
		ws_flush(ws);
}

/* Ping a quiet client; one silent for two intervals is gone. */
static void
ws_ping_cb(evutil_socket_t fd, short events, void *arg)
{
	struct ws_client	*ws = arg;
	struct wslay_event_msg	 ping;
	int64_t			 quiet = now_ms() - ws->last_rx;

	if (quiet >= 2 * (int64_t)conf->ws_ping_interval * 1000) {
		log_info("session %.8s: no frame from its WebSocket client in "
		    "%lld s, closing", ws->s != NULL ? ws->s->id : "-",
		    (long long)(quiet / 1000));
		http_conn_close_later(ws->c);
		return;
	}
	ping.opcode = WSLAY_PING;
	ping.msg = (const uint8_t *)WS_PING_DATA;
	ping.msg_length = sizeof WS_PING_DATA - 1;
	if (wslay_event_queue_msg(ws->ctx, &ping) == 0)
		ws_flush(ws);
}

/*
 * The token of the upgrade expired (http_conn_expire): close with 1008,
 * and read no more; the client connects again with a fresh one.
 */
static void
ws_expired(struct http_conn *c, void *arg)
{
	struct ws_client	*ws = arg;

	if (ws->closing)
		return;
	log_info("session %.8s: the token of subject %s expired",
	    ws->s != NULL ? ws->s->id : "-", ws->s != NULL &&
	    ws->s->grant != NULL ? ws->s->grant->subject : "-");
	oauth_expired();
	ws_close(ws, WSLAY_CODE_POLICY_VIOLATION, "token expired");
	wslay_event_shutdown_read(ws->ctx);
	ws_flush(ws);
}

/* The connection is going away: so is the session. */
static void
ws_closed(struct http_conn *c, void *arg)
{
	struct ws_client	*ws = arg;
	struct session		*s = ws->s;

	ws->s = NULL;
	/* The session ends with it, as after a DELETE. */
	http_set_stream(c, NULL);
	if (s != NULL) {
		if (s->only != NULL && s->only->conn == c)
			s->only->conn = NULL;
		session_free(s, "WebSocket closed");
	}
	if (ws->ping != NULL)
		event_free(ws->ping);
	event_free(ws->deadline);
	ws_msg_reset(&ws->msg);
	wslay_event_context_free(ws->ctx);
	free(ws);
}

void
mcp_ws_send(struct http_conn *c, struct evbuffer *msg)
{
	struct evbuffer	*out = http_conn_output(c);
	size_t		 len = evbuffer_get_length(msg);
	unsigned char	 hdr[10];
	size_t		 n, i;

	hdr[0] = 0x80 | WSLAY_TEXT_FRAME;	/* FIN, text */
	if (len < 126) {
		hdr[1] = (unsigned char)len;
		n = 2;
	} else if (len < 65536) {
		hdr[1] = 126;
		hdr[2] = (unsigned char)(len >> 8);
		hdr[3] = (unsigned char)len;
		n = 4;
	} else {
		hdr[1] = 127;
		for (i = 0; i < 8; i++)
			hdr[2 + i] = (unsigned char)((uint64_t)len >>
			    (56 - 8 * i));
		n = 10;
	}
	evbuffer_add(out, hdr, n);
	if (len < WS_COPY_MAX) {
		evbuffer_add(out, evbuffer_pullup(msg, -1), len);
		evbuffer_drain(msg, len);
	} else
		evbuffer_add_buffer(out, msg);
}

/* Is this request for the WebSocket endpoint? */
int
mcp_ws_path(const struct http_request *req)
{
	return (conf->ws_path[0] != '\0' &&
	    strcmp(req->path, conf->ws_path) == 0);
}

/* Does a Sec-WebSocket-Key hold base64 of 16 bytes? */
static int
ws_key_valid(const struct http_header *h)
{
	size_t	i;
	char	c;

	if (h == NULL || h->valuelen != 24 || h->value[22] != '=' ||
	    h->value[23] != '=')
		return (0);
	for (i = 0; i < 22; i++) {
		c = h->value[i];
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		    (c >= '0' && c <= '9') || c == '+' || c == '/'))
			return (0);
	}
	return (1);
}

/* Refuse an upgrade with a plain-text reason. */
static void
ws_refuse(struct http_conn *c, int status, const char *extra, const char *why)
{
	char	body[256];
	int	n;

	log_debug("http %s: WebSocket upgrade refused: %d %s",
	    http_conn_peer(c), status, why);
	n = snprintf(body, sizeof body, "%s\n", why);
	http_reply(c, status, "text/plain; charset=utf-8", extra, body,
	    (size_t)n);
}

void
mcp_ws_upgrade(struct http_conn *c, struct http_request *req)
{
	static struct wslay_event_callbacks	 cbs = {
		ws_recv_cb, ws_send_cb, NULL, ws_frame_start, ws_frame_chunk,
		NULL, ws_message
	};
	const struct http_header	*h;
	struct ws_client		*ws;
	struct session			*s;
	struct timeval			 tv;
	char				 accept[WS_ACCEPT_LEN + 1];
	char				 headers[256];

	if (strcmp(req->method, "GET") != 0) {
		ws_refuse(c, 405, "Allow: GET\r\n", "Method Not Allowed");
		return;
	}
	h = http_header(&req->head, "Upgrade");
	if (req->head.minor < 1 || h == NULL ||
	    !http_has_token(h->value, h->valuelen, "websocket") ||
	    (h = http_header(&req->head, "Connection")) == NULL ||
	    !http_has_token(h->value, h->valuelen, "upgrade")) {
		ws_refuse(c, 426, "Upgrade: websocket\r\nConnection: "
		    "Upgrade\r\n", "Upgrade Required: this is a WebSocket "
		    "endpoint");
		return;
	}
	h = http_header(&req->head, "Sec-WebSocket-Version");
	if (h == NULL || !http_value_is(h, "13")) {
		ws_refuse(c, 426, "Sec-WebSocket-Version: 13\r\n",
		    "Upgrade Required: WebSocket version 13 only");
		return;
	}
	h = http_header(&req->head, "Sec-WebSocket-Key");
	if (!ws_key_valid(h) || ws_accept(h->value, h->valuelen,
	    accept) != 0) {
		ws_refuse(c, 400, NULL, "Bad Request: Sec-WebSocket-Key");
		return;
	}
	h = http_header(&req->head, "Sec-WebSocket-Protocol");
	if (h == NULL || !http_has_element(h->value, h->valuelen, "mcp")) {
		ws_refuse(c, 400, NULL, "Bad Request: the subprotocol \"mcp\" "
		    "is required (Sec-WebSocket-Protocol: mcp)");
		return;
	}
	if (evbuffer_get_length(req->body) != 0) {
		ws_refuse(c, 400, NULL, "Bad Request: an upgrade has no body");
		return;
	}
	if ((s = session_new(http_conn_peer(c), OBS_T_WS)) == NULL) {
		ws_refuse(c, 503, "Retry-After: 5\r\n", session_refusal());
		return;
	}
	session_identity(s, req->credential, mcp_http_client(req));
	session_grant(s, req->grant);
	vendpoint_bind(s, req->vep);
	/* The upgrade's trace context: its messages' parent. */
	trace_http(s, &req->head);
	ws = xcalloc(1, sizeof *ws);
	ws->c = c;
	ws->s = s;
	ws->last_rx = now_ms();
	if (wslay_event_context_server_init(&ws->ctx, &cbs, ws) != 0)
		fatalx("wslay_event_context_server_init");
	/* wslay checks each frame; ws_msg the message, in one buffer. */
	wslay_event_config_set_no_buffering(ws->ctx, 1);
	wslay_event_config_set_max_recv_msg_length(ws->ctx, conf->max_body);
	ws_msg_init(&ws->msg, conf->max_body);
	ws->deadline = evtimer_new(base, ws_deadline_cb, ws);
	if (conf->ws_ping_interval > 0) {
		ws->ping = event_new(base, -1, EV_PERSIST, ws_ping_cb, ws);
		tv.tv_sec = conf->ws_ping_interval;
		tv.tv_usec = 0;
		evtimer_add(ws->ping, &tv);
	}
	snprintf(headers, sizeof headers, "Upgrade: websocket\r\n"
	    "Connection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n"
	    "Sec-WebSocket-Protocol: mcp\r\n", accept);
	log_info("session %.8s: new WebSocket session from %s", s->id,
	    http_conn_peer(c));
	stream_new(s, STREAM_WS, NULL);
	/* After this, req is gone: the connection speaks WebSocket. */
	http_upgrade(c, headers, &ws_upgraded, ws);
	s->only->conn = c;
	http_set_stream(c, s->only);
	/* It lasts no longer than the token of its upgrade. */
	http_conn_expire(c, s->grant);
	/* Frames the client sent right after its request. */
	if (evbuffer_get_length(http_conn_input(c)) > 0)
		ws_read(c, ws);
}

void
mcp_ws_forget(struct http_conn *c)
{
	struct ws_client	*ws = http_upgraded_arg(c);

	if (ws != NULL)
		ws->s = NULL;
}
