/* SPDX-License-Identifier: ISC */
/*
 * loadgen_ws.c -- a loadgen session over WebSocket (RFC 6455): one
 * connection, upgraded by a GET that offers subprotocol mcp; the answer
 * must be 101 with the subprotocol mcp, Sec-WebSocket-Accept the SHA-1 of
 * our key and the GUID (compared exactly), and no extension.  Then each
 * text frame carries one JSON-RPC message both ways: initialize,
 * notifications/initialized (nothing answers a notification), the calls.
 *
 * Frames to the server are masked, each with its own key from a pool
 * filled by getrandom(2) (RFC 6455 10.3 asks for keys nobody can predict);
 * frames from it must not be.  Messages may come in fragments; pings are
 * answered with pongs; messages that are not the answer awaited
 * (notifications, requests) are skipped.  The session ends with a close
 * handshake (1000): the close frame the server sends back counts the
 * session as ended, and the connection closes when the server closes it.
 * A connection lost is a session lost: nothing reconnects.
 */
#define _GNU_SOURCE

#include <sys/types.h>
#include <sys/random.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/util.h>
#include <openssl/evp.h>
#include <openssl/sha.h>

#include "loadgen.h"

#define WS_GUID		"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
#define WS_KEY_LEN	24	/* base64 of 16 bytes */
#define WS_ACCEPT_LEN	28	/* base64 of a SHA-1 digest */
#define WS_CONTROL_MAX	125	/* a control frame's payload */
#define WS_HEAD_MAX	14	/* 2 + 8 bytes of length + 4 of mask */
#define WS_CLOSE_NORMAL	1000

enum {
	WS_OP_CONT = 0x0,
	WS_OP_TEXT = 0x1,
	WS_OP_BINARY = 0x2,
	WS_OP_CLOSE = 0x8,
	WS_OP_PING = 0x9,
	WS_OP_PONG = 0xa
};

/* A session's WebSocket side; owned by the session (ws_init, ws_free). */
struct ws_state {
	char		 key[WS_KEY_LEN + 1];	/* Sec-WebSocket-Key sent */
	char		 accept[WS_ACCEPT_LEN + 1]; /* the answer it calls for */
	int		 upgraded;	/* the 101 is in: frames follow */
	int		 close_sent;
	struct buf	 msg;		/* a fragmented message so far */
	int		 in_msg;	/* and one is under way */
};

/* Random bytes for keys and masks, fetched from the kernel in bulk. */
static unsigned char	 pool[4096];
static size_t		 pool_left;

static int
ws_random(unsigned char *p, size_t n)
{
	ssize_t r;

	if (n > sizeof pool)
		return -1;
	if (pool_left < n) {
		do
			r = getrandom(pool, sizeof pool, 0);
		while (r == -1 && errno == EINTR);
		if (r != (ssize_t)sizeof pool)
			return -1;
		pool_left = sizeof pool;
	}
	memcpy(p, pool + sizeof pool - pool_left, n);
	pool_left -= n;
	return 0;
}

/* A fresh Sec-WebSocket-Key, and the Sec-WebSocket-Accept it calls for. */
static int
ws_new_key(struct ws_state *ws)
{
	unsigned char raw[16], digest[SHA_DIGEST_LENGTH];
	char buf[WS_KEY_LEN + sizeof WS_GUID];

	if (ws_random(raw, sizeof raw) != 0)
		return -1;
	EVP_EncodeBlock((unsigned char *)ws->key, raw, sizeof raw);
	memcpy(buf, ws->key, WS_KEY_LEN);
	memcpy(buf + WS_KEY_LEN, WS_GUID, sizeof WS_GUID - 1);
	if (SHA1((unsigned char *)buf, WS_KEY_LEN + sizeof WS_GUID - 1,
	    digest) == NULL)
		return -1;
	EVP_EncodeBlock((unsigned char *)ws->accept, digest, sizeof digest);
	return 0;
}

static void
ws_close_conn(struct session *s)
{
	if (s->bev != NULL) {
		bufferevent_free(s->bev);
		s->bev = NULL;
	}
	s->connected = 0;
	s->ws->upgraded = 0;
	s->ws->close_sent = 0;
	s->ws->in_msg = 0;
	buf_free(&s->ws->msg);
}

/* Queue one frame, FIN set, masked. */
static void
ws_frame(struct session *s, unsigned op, const char *p, size_t len)
{
	unsigned char hdr[WS_HEAD_MAX], *q, *mask;
	struct evbuffer_iovec v;
	struct evbuffer *out;
	size_t n, i;

	if (s->bev == NULL || s->ws->close_sent)
		return;
	hdr[0] = 0x80 | op;
	if (len < 126) {
		hdr[1] = 0x80 | (unsigned char)len;
		n = 2;
	} else if (len < 65536) {
		hdr[1] = 0x80 | 126;
		hdr[2] = (unsigned char)(len >> 8);
		hdr[3] = (unsigned char)len;
		n = 4;
	} else {
		hdr[1] = 0x80 | 127;
		for (i = 0; i < 8; i++)
			hdr[2 + i] = (unsigned char)((uint64_t)len >>
			    (56 - 8 * i));
		n = 10;
	}
	mask = hdr + n;
	if (ws_random(mask, 4) != 0) {
		session_fail(s, "getrandom: %s", strerror(errno));
		return;
	}
	n += 4;
	out = bufferevent_get_output(s->bev);
	if (evbuffer_reserve_space(out, (ev_ssize_t)(n + len), &v, 1) != 1) {
		session_fail(s, "out of memory");
		return;
	}
	q = v.iov_base;
	memcpy(q, hdr, n);
	for (i = 0; i < len; i++)
		q[n + i] = (unsigned char)p[i] ^ mask[i & 3];
	v.iov_len = n + len;
	evbuffer_commit_space(out, &v, 1);
	if (op == WS_OP_CLOSE)
		s->ws->close_sent = 1;
}

/* Is tok one of the comma-separated tokens of v[0..n)? */
static int
has_token(const char *v, size_t n, const char *tok)
{
	size_t tl = strlen(tok), i = 0, b, e;

	while (i < n) {
		while (i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
			i++;
		b = i;
		while (i < n && v[i] != ',')
			i++;
		e = i;
		while (e > b && (v[e - 1] == ' ' || v[e - 1] == '\t'))
			e--;
		if (e - b == tl && strncasecmp(v + b, tok, tl) == 0)
			return 1;
	}
	return 0;
}

/*
 * The answer to the upgrade: 101, Upgrade: websocket, Connection: upgrade,
 * the right Sec-WebSocket-Accept, Sec-WebSocket-Protocol: mcp, no
 * extensions.  0 if it is all there, else the session has failed.
 */
static int
ws_check_head(struct session *s, const char *h, size_t len)
{
	const char *line, *next, *colon, *v, *end = h + len;
	int upgrade = 0, connection = 0, accept = 0, proto = 0, status;
	size_t vl;

	if (len < 12 || strncmp(h, "HTTP/1.1 ", 9) != 0) {
		session_fail(s, "upgrade: not an HTTP/1.1 answer");
		return -1;
	}
	status = atoi(h + 9);
	if (status != 101) {
		session_fail(s, "upgrade refused: status %d", status);
		return -1;
	}
	line = memchr(h, '\n', len);
	for (line = line ? line + 1 : end; line < end; line = next) {
		next = memchr(line, '\n', (size_t)(end - line));
		next = next ? next + 1 : end;
		colon = memchr(line, ':', (size_t)(next - line));
		if (colon == NULL)
			continue;
		v = colon + 1;
		while (v < next && (*v == ' ' || *v == '\t'))
			v++;
		vl = (size_t)(next - v);
		while (vl > 0 && (v[vl - 1] == '\r' || v[vl - 1] == '\n' ||
		    v[vl - 1] == ' ' || v[vl - 1] == '\t'))
			vl--;
#define IS(name) ((size_t)(colon - line) == sizeof(name) - 1 && \
	    strncasecmp(line, name, sizeof(name) - 1) == 0)
		if (IS("upgrade"))
			upgrade += vl == 9 && strncasecmp(v, "websocket", 9) == 0;
		else if (IS("connection"))
			connection += has_token(v, vl, "upgrade");
		else if (IS("sec-websocket-accept")) {
			if (vl != WS_ACCEPT_LEN || memcmp(v, s->ws->accept,
			    WS_ACCEPT_LEN) != 0 || accept++ > 0) {
				session_fail(s, "upgrade: wrong "
				    "Sec-WebSocket-Accept: %.*s (want %s)",
				    (int)(vl < 64 ? vl : 64), v,
				    s->ws->accept);
				return -1;
			}
		} else if (IS("sec-websocket-protocol")) {
			if (vl != 3 || memcmp(v, "mcp", 3) != 0 ||
			    proto++ > 0) {
				session_fail(s, "upgrade: subprotocol %.*s "
				    "(want mcp)", (int)(vl < 64 ? vl : 64), v);
				return -1;
			}
		} else if (IS("sec-websocket-extensions")) {
			session_fail(s, "upgrade: an extension none was "
			    "offered: %.*s", (int)(vl < 64 ? vl : 64), v);
			return -1;
		}
#undef IS
	}
	if (upgrade != 1 || connection != 1 || accept != 1 || proto != 1) {
		session_fail(s, "upgrade: 101 without%s%s%s%s",
		    upgrade == 1 ? "" : " Upgrade: websocket",
		    connection == 1 ? "" : " Connection: upgrade",
		    accept == 1 ? "" : " Sec-WebSocket-Accept",
		    proto == 1 ? "" : " Sec-WebSocket-Protocol: mcp");
		return -1;
	}
	return 0;
}

/* The upgrade is done: MCP's handshake begins. */
static void
ws_upgraded(struct session *s)
{
	char body[512];

	s->ws->upgraded = 1;
	s->phase = PH_INIT;
	initialize_body(s, body, sizeof body);
	s->answered = 0;
	s->answer_ok = 0;
	ws_frame(s, WS_OP_TEXT, body, strlen(body));
}

/* A whole message from the server. */
static void
ws_message(struct session *s, const char *p, size_t len)
{
	static const char initialized[] = "{\"jsonrpc\":\"2.0\","
	    "\"method\":\"notifications/initialized\"}";

	if (s->phase != PH_INIT && s->phase != PH_CALL)
		return;		/* nothing awaited: skipped */
	on_message(s, p, len);
	if (!s->answered || s->bev == NULL)
		return;
	if (s->phase == PH_INIT) {
		if (!s->answer_ok) {
			session_fail(s, "initialize: no result");
			return;
		}
		ws_frame(s, WS_OP_TEXT, initialized, sizeof initialized - 1);
		s->phase = PH_READY;
		on_ready(s);
		return;
	}
	s->phase = PH_READY;
	send_call(s);
}

/* The server's close frame. */
static void
ws_closed(struct session *s, const unsigned char *p, size_t len)
{
	unsigned code = len >= 2 ? (unsigned)p[0] << 8 | p[1] : 1005;

	if (s->phase == PH_DELETE) {
		/* Our close, answered: the server closes the connection. */
		if (code == WS_CLOSE_NORMAL)
			st.deleted++;
		return;
	}
	session_fail(s, "the server closed the WebSocket: %u %.*s", code,
	    (int)(len > 2 ? len - 2 : 0), (const char *)p + 2);
}

/* One frame from the server, whole. */
static void
ws_frame_in(struct session *s, unsigned op, int fin, const char *p,
    size_t len)
{
	struct ws_state *ws = s->ws;

	switch (op) {
	case WS_OP_PING:
		ws_frame(s, WS_OP_PONG, p, len);
		return;
	case WS_OP_PONG:
		return;
	case WS_OP_CLOSE:
		ws_closed(s, (const unsigned char *)p, len);
		return;
	case WS_OP_BINARY:
		session_fail(s, "a binary frame from the server");
		return;
	case WS_OP_TEXT:
		if (ws->in_msg) {
			session_fail(s, "a text frame inside a fragmented "
			    "message");
			return;
		}
		if (fin) {
			ws_message(s, p, len);
			return;
		}
		ws->in_msg = 1;
		break;
	case WS_OP_CONT:
		if (!ws->in_msg) {
			session_fail(s, "a continuation frame with no "
			    "message");
			return;
		}
		break;
	default:
		session_fail(s, "a frame with the unknown opcode %u", op);
		return;
	}
	if (ws->msg.len + len > MAX_EVENT) {
		session_fail(s, "message too long");
		return;
	}
	if (buf_add(&ws->msg, p, len) != 0) {
		session_fail(s, "out of memory");
		return;
	}
	if (fin) {
		ws->in_msg = 0;
		ws_message(s, ws->msg.p, ws->msg.len);
		buf_free(&ws->msg);
	}
}

static void
ws_read_cb(struct bufferevent *bev, void *arg)
{
	struct session *s = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	struct evbuffer_ptr ptr;
	const unsigned char *h;
	unsigned op, i;
	uint64_t plen;
	size_t len, n;
	int fin;

	while (s->bev == bev && (len = evbuffer_get_length(in)) > 0) {
		if (s->phase == PH_UPGRADE) {
			ptr = evbuffer_search(in, "\r\n\r\n", 4, NULL);
			if (ptr.pos < 0) {
				if (len > MAX_HEAD)
					session_fail(s, "upgrade: answer head "
					    "too long");
				return;
			}
			n = (size_t)ptr.pos + 4;
			h = evbuffer_pullup(in, (ev_ssize_t)n);
			if (ws_check_head(s, (const char *)h, n) != 0)
				return;
			evbuffer_drain(in, n);
			ws_upgraded(s);
			continue;
		}
		if (!s->ws->upgraded) {
			session_fail(s, "unexpected bytes from the server");
			return;
		}
		if (len < 2)
			return;
		h = evbuffer_pullup(in, len < WS_HEAD_MAX ? (ev_ssize_t)len :
		    WS_HEAD_MAX);
		fin = (h[0] & 0x80) != 0;
		op = h[0] & 0x0f;
		if (h[0] & 0x70) {
			session_fail(s, "a frame with reserved bits set");
			return;
		}
		if (h[1] & 0x80) {
			session_fail(s, "a masked frame from the server");
			return;
		}
		plen = h[1] & 0x7f;
		n = plen == 126 ? 4 : plen == 127 ? 10 : 2;
		if (len < n)
			return;
		if (plen == 126)
			plen = (uint64_t)h[2] << 8 | h[3];
		else if (plen == 127)
			for (plen = 0, i = 2; i < 10; i++)
				plen = plen << 8 | h[i];
		if (plen > (uint64_t)MAX_EVENT) {
			session_fail(s, "a frame too long (%llu bytes)",
			    (unsigned long long)plen);
			return;
		}
		if ((op & 0x8) && (!fin || plen > WS_CONTROL_MAX)) {
			session_fail(s, "a fragmented or long control frame");
			return;
		}
		if (len - n < plen)
			return;		/* the rest of the frame to come */
		h = evbuffer_pullup(in, (ev_ssize_t)(n + plen));
		if (h == NULL) {
			session_fail(s, "out of memory");
			return;
		}
		ws_frame_in(s, op, fin, (const char *)h + n, (size_t)plen);
		if (s->bev != bev)
			return;		/* the connection went with it */
		evbuffer_drain(in, n + (size_t)plen);
	}
}

static void
ws_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct session *s = arg;

	(void)bev;
	if (what & BEV_EVENT_CONNECTED) {
		session_connected(s);
		return;
	}
	if (what & BEV_EVENT_EOF) {
		/* After the close handshake (PH_DELETE) this is no error. */
		session_fail(s, "connection closed by the server");
		return;
	}
	if (what & BEV_EVENT_ERROR) {
		session_fail(s, "connection: %s",
		    evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
		return;
	}
}

/* ------------------------------------------------------------------ */
/* The session's transport. */

/* Connect and ask for the upgrade. */
static void
ws_start(struct session *s)
{
	if (st.stopping)
		return;
	s->phase = PH_UPGRADE;
	if (ws_new_key(s->ws) != 0) {
		session_fail(s, "no random key for the upgrade");
		return;
	}
	s->bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
	if (s->bev == NULL) {
		session_fail(s, "bufferevent_socket_new failed");
		return;
	}
	bufferevent_set_max_single_read(s->bev, READ_MAX);
	bufferevent_setcb(s->bev, ws_read_cb, NULL, ws_event_cb, s);
	bufferevent_enable(s->bev, EV_READ | EV_WRITE);
	evbuffer_add_printf(bufferevent_get_output(s->bev),
	    "GET %s HTTP/1.1\r\n"
	    "Host: %s\r\n"
	    "Upgrade: websocket\r\n"
	    "Connection: Upgrade\r\n"
	    "Sec-WebSocket-Key: %s\r\n"
	    "Sec-WebSocket-Version: 13\r\n"
	    "Sec-WebSocket-Protocol: mcp\r\n"
	    "\r\n", opt.path, opt.hostport, s->ws->key);
	if (bufferevent_socket_connect(s->bev, (struct sockaddr *)&opt.addr,
	    (int)opt.addrlen) != 0) {
		session_fail(s, "connect: %s", strerror(errno));
		return;
	}
}

/* A request (the caller set the phase): its answer is awaited. */
static void
ws_send(struct session *s, const char *body, size_t len)
{
	if (st.stopping)
		return;
	if (s->bev == NULL || !s->ws->upgraded) {
		session_fail(s, "no connection");
		return;
	}
	s->answered = 0;
	s->answer_ok = 0;
	ws_frame(s, WS_OP_TEXT, body, len);
}

/* End the session with the close handshake. */
static void
ws_end(struct session *s)
{
	static const char normal[2] = { WS_CLOSE_NORMAL >> 8,
	    WS_CLOSE_NORMAL & 0xff };

	if (s->bev == NULL || !s->ws->upgraded) {
		ws_close_conn(s);
		s->phase = PH_CLOSED;
		return;
	}
	s->phase = PH_DELETE;
	ws_frame(s, WS_OP_CLOSE, normal, sizeof normal);
}

static int
ws_init(struct session *s)
{
	return (s->ws = calloc(1, sizeof *s->ws)) == NULL ? -1 : 0;
}

static void
ws_free(struct session *s)
{
	if (s->ws == NULL)
		return;
	ws_close_conn(s);
	free(s->ws);
	s->ws = NULL;
}

const struct transport ws_transport = {
	ws_init, ws_free, ws_start, ws_send, ws_end, ws_close_conn
};
