/* SPDX-License-Identifier: ISC */
/*
 * loadgen_http.c -- a loadgen session over Streamable HTTP: one HTTP/1.1
 * keep-alive connection, made again if the server closes it while idle.
 * initialize is POSTed first (its Mcp-Session-Id kept for every later
 * request), then notifications/initialized, which must be answered 202;
 * each call is a POST, answered with application/json (Content-Length or
 * chunked) or text/event-stream, parsed as it arrives; the session ends
 * with DELETE.  In streams mode a GET holds the standalone event stream.
 */
#define _GNU_SOURCE

#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/util.h>
#include <jansson.h>

#include "loadgen.h"

enum rstate {
	RS_NONE = 0,		/* no request outstanding */
	RS_HEAD,
	RS_LENGTH,		/* Content-Length body */
	RS_CHUNK_SIZE,
	RS_CHUNK_DATA,
	RS_CHUNK_CRLF,
	RS_TRAILER,
	RS_CLOSE		/* body until the connection closes */
};

/* A session's HTTP side; owned by the session (http_init, http_free). */
struct http_state {
	char		 sid[256];	/* Mcp-Session-Id, may be empty */

	/* The response being read. */
	enum rstate	 rs;
	int		 status;
	int		 sse;
	int		 conn_close;
	uint64_t	 left;		/* of the body or the chunk */
	struct evbuffer	*body;		/* a JSON body */
	char		 head_sid[256];

	/* The event stream parser. */
	struct buf	 line;		/* a partial line */
	int		 skip_lf;	/* the last line ended with CR */
	struct buf	 data;		/* the event's data */
	int		 has_data;
};

static void	connect_session(struct session *);

static void
http_close(struct session *s)
{
	if (s->bev != NULL) {
		bufferevent_free(s->bev);
		s->bev = NULL;
	}
	s->connected = 0;
	s->http->rs = RS_NONE;
}

/* Write one request; the connection is made first if there is none. */
static void
write_request(struct session *s, const char *method, const char *body,
    size_t bodylen, const char *accept)
{
	struct http_state *hs = s->http;
	struct evbuffer *out;

	if (st.stopping)
		return;
	if (s->bev == NULL)
		connect_session(s);
	if (s->bev == NULL)
		return;
	out = bufferevent_get_output(s->bev);
	evbuffer_add_printf(out,
	    "%s %s HTTP/1.1\r\n"
	    "Host: %s\r\n"
	    "Accept: %s\r\n",
	    method, opt.path, opt.hostport, accept);
	if (opt.bearer != NULL)
		evbuffer_add_printf(out, "Authorization: Bearer %s\r\n",
		    opt.bearer);
	if (hs->sid[0] != '\0')
		evbuffer_add_printf(out, "Mcp-Session-Id: %s\r\n", hs->sid);
	if (s->proto[0] != '\0')
		evbuffer_add_printf(out, "MCP-Protocol-Version: %s\r\n",
		    s->proto);
	/* A 2026-07-28 call mirrors its version, method and tool. */
	if (opt.modern && body != NULL)
		evbuffer_add_printf(out, "MCP-Protocol-Version: 2026-07-28\r\n"
		    "Mcp-Method: tools/call\r\nMcp-Name: %s\r\n", opt.tool);
	if (body != NULL)
		evbuffer_add_printf(out,
		    "Content-Type: application/json\r\n"
		    "Content-Length: %zu\r\n\r\n", bodylen);
	else
		evbuffer_add(out, "\r\n", 2);
	if (body != NULL)
		evbuffer_add(out, body, bodylen);
	hs->rs = RS_HEAD;
	hs->status = 0;
	hs->sse = 0;
	hs->conn_close = 0;
	s->answered = 0;
	s->answer_ok = 0;
	hs->head_sid[0] = '\0';
	evbuffer_drain(hs->body, evbuffer_get_length(hs->body));
	buf_free(&hs->line);
	buf_free(&hs->data);
	hs->has_data = 0;
	hs->skip_lf = 0;
}

static void
post_json(struct session *s, const char *body)
{
	write_request(s, "POST", body, strlen(body),
	    "application/json, text/event-stream");
}

/* ------------------------------------------------------------------ */
/* Server-sent events. */

static void
sse_dispatch(struct session *s)
{
	struct http_state *hs = s->http;

	if (!hs->has_data)
		return;
	hs->has_data = 0;
	if (hs->data.len > 0 && hs->data.p[hs->data.len - 1] == '\n')
		hs->data.len--;
	if (hs->data.len == 0)
		return;		/* the priming event */
	if (s->phase == PH_STREAM) {
		st.events++;
		if (opt.mode == MODE_SCALE)
			scale_stream_event(s, hs->data.p, hs->data.len);
	} else
		on_message(s, hs->data.p, hs->data.len);
	hs->data.len = 0;
}

static void
sse_line(struct session *s, const char *p, size_t n)
{
	struct http_state *hs = s->http;
	const char *v;
	size_t fl, vl;

	if (n == 0) {
		sse_dispatch(s);
		return;
	}
	if (p[0] == ':') {
		/* A comment: the gateway's heartbeat, on a stream. */
		if (opt.mode == MODE_SCALE && s->phase == PH_STREAM)
			scale_heartbeat(s);
		return;
	}
	v = memchr(p, ':', n);
	fl = v ? (size_t)(v - p) : n;
	if (v != NULL) {
		v++;
		vl = n - fl - 1;
		if (vl > 0 && *v == ' ') {
			v++;
			vl--;
		}
	} else {
		v = p + n;
		vl = 0;
	}
	if (fl == 4 && memcmp(p, "data", 4) == 0) {
		if (hs->data.len + vl > MAX_EVENT) {
			session_fail(s, "event too long");
			return;
		}
		if (buf_add(&hs->data, v, vl) != 0 ||
		    buf_add(&hs->data, "\n", 1) != 0) {
			session_fail(s, "out of memory");
			return;
		}
		hs->has_data = 1;
	}
	/* id, event, retry and unknown fields need nothing here. */
}

static void
sse_feed(struct session *s, const char *p, size_t n)
{
	struct http_state *hs = s->http;
	const char *end = p + n, *q;
	size_t i;

	while (p < end && s->bev != NULL) {
		if (hs->skip_lf) {
			hs->skip_lf = 0;
			if (*p == '\n') {
				p++;
				continue;
			}
		}
		q = NULL;
		for (i = 0; i < (size_t)(end - p); i++)
			if (p[i] == '\n' || p[i] == '\r') {
				q = p + i;
				break;
			}
		if (q == NULL) {
			if (hs->line.len + (size_t)(end - p) > MAX_EVENT) {
				session_fail(s, "event line too long");
				return;
			}
			if (buf_add(&hs->line, p, (size_t)(end - p)) != 0)
				session_fail(s, "out of memory");
			return;
		}
		if (hs->line.len > 0) {
			if (buf_add(&hs->line, p, (size_t)(q - p)) != 0) {
				session_fail(s, "out of memory");
				return;
			}
			sse_line(s, hs->line.p, hs->line.len);
			hs->line.len = 0;
		} else
			sse_line(s, p, (size_t)(q - p));
		if (*q == '\r')
			hs->skip_lf = 1;
		p = q + 1;
	}
}

/* ------------------------------------------------------------------ */
/* HTTP responses. */

static void
body_bytes(struct session *s, struct evbuffer *in, size_t n)
{
	struct http_state *hs = s->http;
	struct evbuffer_iovec v[8];
	size_t done = 0, k;
	int i, nv;

	if (!hs->sse) {
		evbuffer_remove_buffer(in, hs->body, n);
		return;
	}
	while (done < n && s->bev != NULL) {
		nv = evbuffer_peek(in, (ev_ssize_t)(n - done), NULL, v, 8);
		if (nv <= 0)
			break;
		if (nv > 8)
			nv = 8;
		k = 0;
		for (i = 0; i < nv && done + k < n; i++) {
			size_t len = v[i].iov_len;

			if (len > n - done - k)
				len = n - done - k;
			sse_feed(s, v[i].iov_base, len);
			if (s->bev == NULL)
				return;
			k += len;
		}
		evbuffer_drain(in, k);
		done += k;
	}
}

/* The whole response is in. */
static void
response_done(struct session *s)
{
	struct http_state *hs = s->http;
	size_t len;
	char *p;

	hs->rs = RS_NONE;
	if (!hs->sse && evbuffer_get_length(hs->body) > 0 &&
	    s->phase != PH_NOTIFIED && s->phase != PH_DELETE &&
	    hs->status >= 200 && hs->status < 300) {
		len = evbuffer_get_length(hs->body);
		p = (char *)evbuffer_pullup(hs->body, (ev_ssize_t)len);
		on_message(s, p, len);
		evbuffer_drain(hs->body, len);
	}
	if (hs->sse)
		sse_dispatch(s);	/* an event the stream ended without */
	if (s->bev == NULL)
		return;
	if (hs->conn_close)
		http_close(s);

	switch (s->phase) {
	case PH_INIT:
		if (hs->status != 200 || !s->answer_ok) {
			session_fail(s, "initialize: status %d%s", hs->status,
			    s->answered ? "" : ", no answer");
			return;
		}
		if (hs->head_sid[0] != '\0')
			memcpy(hs->sid, hs->head_sid, sizeof hs->sid);
		s->phase = PH_NOTIFIED;
		post_json(s, "{\"jsonrpc\":\"2.0\","
		    "\"method\":\"notifications/initialized\"}");
		return;
	case PH_NOTIFIED:
		if (hs->status != 202) {
			session_fail(s, "notifications/initialized: status %d "
			    "(want 202)", hs->status);
			return;
		}
		s->phase = PH_READY;
		on_ready(s);
		return;
	case PH_CALL:
		if (!s->answered) {
			error_note("session %u: call answered with status %d "
			    "and no result", s->idx, hs->status);
			call_answered(s, 0);
		}
		s->phase = PH_READY;
		send_call(s);
		return;
	case PH_GET:
	case PH_STREAM:
		session_fail(s, "GET stream ended (status %d)", hs->status);
		return;
	case PH_DELETE:
		if ((hs->status >= 200 && hs->status < 300) ||
		    hs->status == 405)
			st.deleted++;
		http_close(s);
		s->phase = PH_CLOSED;
		drain_check();
		return;
	default:
		return;
	}
}

static int
parse_head(struct session *s, char *h, size_t len)
{
	struct http_state *hs = s->http;
	char *line, *next, *colon, *v, *end = h + len;
	int chunked = 0, have_len = 0;
	unsigned long long clen = 0;
	size_t vl;

	if (len < 12 || strncmp(h, "HTTP/1.", 7) != 0)
		return -1;
	hs->status = atoi(h + 9);
	if (strncmp(h, "HTTP/1.0", 8) == 0)
		hs->conn_close = 1;
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
		while (vl > 0 && isspace((unsigned char)v[vl - 1]))
			vl--;
#define IS(name) ((size_t)(colon - line) == sizeof(name) - 1 && \
	    strncasecmp(line, name, sizeof(name) - 1) == 0)
		if (IS("content-length")) {
			clen = strtoull(v, NULL, 10);
			have_len = 1;
		} else if (IS("transfer-encoding")) {
			if (vl >= 7 && strncasecmp(v + vl - 7, "chunked", 7)
			    == 0)
				chunked = 1;
		} else if (IS("content-type")) {
			if (vl >= 17 && strncasecmp(v, "text/event-stream",
			    17) == 0)
				hs->sse = 1;
		} else if (IS("connection")) {
			if (vl == 5 && strncasecmp(v, "close", 5) == 0)
				hs->conn_close = 1;
		} else if (IS("mcp-session-id")) {
			if (vl >= sizeof hs->head_sid)
				return -1;
			memcpy(hs->head_sid, v, vl);
			hs->head_sid[vl] = '\0';
		}
#undef IS
	}
	if (hs->status < 200)
		return 0;	/* 1xx: another head follows */
	if (chunked)
		hs->rs = RS_CHUNK_SIZE;
	else if (have_len) {
		hs->left = clen;
		hs->rs = RS_LENGTH;
	} else if (hs->status == 204 || hs->status == 304)
		hs->rs = RS_LENGTH, hs->left = 0;
	else if (hs->sse || hs->status == 200)
		hs->rs = RS_CLOSE;
	else
		hs->rs = RS_LENGTH, hs->left = 0;
	return 0;
}

/* The response head is in: the GET's stream is open if it is 200. */
static void
on_head(struct session *s)
{
	struct http_state *hs = s->http;

	if (s->phase != PH_GET)
		return;
	if (hs->status != 200 || !hs->sse) {
		session_fail(s, "GET: status %d%s", hs->status,
		    hs->sse ? "" : ", not an event stream");
		return;
	}
	s->phase = PH_STREAM;
	st.open_streams++;
	if (st.open_streams > st.max_streams)
		st.max_streams = st.open_streams;
	on_ready(s);
}

static void
read_cb(struct bufferevent *bev, void *arg)
{
	struct session *s = arg;
	struct http_state *hs = s->http;
	struct evbuffer *in = bufferevent_get_input(bev);
	struct evbuffer_ptr p;
	size_t len, n;
	char *h, *e;

	while (s->bev == bev && (len = evbuffer_get_length(in)) > 0) {
		switch (hs->rs) {
		case RS_NONE:
			session_fail(s, "unexpected bytes from the server");
			return;
		case RS_HEAD:
			p = evbuffer_search(in, "\r\n\r\n", 4, NULL);
			if (p.pos < 0) {
				if (len > MAX_HEAD)
					session_fail(s, "response head too "
					    "long");
				return;
			}
			n = (size_t)p.pos + 4;
			h = (char *)evbuffer_pullup(in, (ev_ssize_t)n);
			if (parse_head(s, h, n) != 0) {
				session_fail(s, "bad response head");
				return;
			}
			evbuffer_drain(in, n);
			if (hs->rs == RS_HEAD)
				break;	/* 1xx */
			on_head(s);
			if (s->bev != NULL && hs->rs == RS_LENGTH &&
			    hs->left == 0)
				response_done(s);
			break;
		case RS_LENGTH:
			n = len < hs->left ? len : (size_t)hs->left;
			body_bytes(s, in, n);
			hs->left -= n;
			if (s->bev != NULL && hs->left == 0)
				response_done(s);
			break;
		case RS_CLOSE:
			body_bytes(s, in, len);
			break;
		case RS_CHUNK_SIZE:
		case RS_TRAILER:
			p = evbuffer_search_eol(in, NULL, NULL,
			    EVBUFFER_EOL_CRLF);
			if (p.pos < 0) {
				if (len > MAX_LINE)
					session_fail(s, "chunk line too long");
				return;
			}
			n = (size_t)p.pos;
			h = evbuffer_readln(in, NULL, EVBUFFER_EOL_CRLF);
			if (h == NULL) {
				session_fail(s, "out of memory");
				return;
			}
			if (hs->rs == RS_TRAILER) {
				free(h);
				if (n == 0)
					response_done(s);
				break;
			}
			errno = 0;
			hs->left = strtoull(h, &e, 16);
			if (e == h || errno != 0) {
				free(h);
				session_fail(s, "bad chunk size");
				return;
			}
			free(h);
			hs->rs = hs->left == 0 ? RS_TRAILER : RS_CHUNK_DATA;
			break;
		case RS_CHUNK_DATA:
			n = len < hs->left ? len : (size_t)hs->left;
			body_bytes(s, in, n);
			hs->left -= n;
			if (s->bev != NULL && hs->left == 0)
				hs->rs = RS_CHUNK_CRLF;
			break;
		case RS_CHUNK_CRLF:
			if (len < 2)
				return;
			h = (char *)evbuffer_pullup(in, 2);
			if (h[0] != '\r' || h[1] != '\n') {
				session_fail(s, "bad chunk end");
				return;
			}
			evbuffer_drain(in, 2);
			hs->rs = RS_CHUNK_SIZE;
			break;
		}
	}
}

static void
event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct session *s = arg;
	struct http_state *hs = s->http;

	(void)bev;
	if (what & BEV_EVENT_CONNECTED) {
		session_connected(s);
		return;
	}
	if (what & BEV_EVENT_EOF) {
		if (hs->rs == RS_CLOSE) {
			hs->conn_close = 1;
			response_done(s);
			return;
		}
		if (hs->rs == RS_NONE) {
			/* The server closed an idle connection. */
			http_close(s);
			st.reconnects++;
			return;
		}
		session_fail(s, "connection closed by the server");
		return;
	}
	if (what & BEV_EVENT_ERROR) {
		session_fail(s, "connection: %s",
		    evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
		return;
	}
}

/*
 * A socket bound to one of the source addresses (127.0.0.1 .. .K by the
 * session's index), so that more connections than one address has ports
 * can be made; -1 to let the system choose.
 */
static int
source_socket(struct session *s)
{
	struct sockaddr_in sin;
	int fd, one = 1;

	if (opt.nsources <= 1 || opt.addr.ss_family != AF_INET)
		return -1;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1)
		return -1;
	/* The port is chosen at connect, for the whole 4-tuple. */
	setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(0x7f000001u + s->idx % opt.nsources);
	if (bind(fd, (struct sockaddr *)&sin, sizeof sin) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static void
connect_session(struct session *s)
{
	s->bev = bufferevent_socket_new(base, source_socket(s),
	    BEV_OPT_CLOSE_ON_FREE);
	if (s->bev == NULL) {
		session_fail(s, "bufferevent_socket_new failed");
		return;
	}
	bufferevent_set_max_single_read(s->bev, READ_MAX);
	bufferevent_setcb(s->bev, read_cb, NULL, event_cb, s);
	bufferevent_enable(s->bev, EV_READ | EV_WRITE);
	if (bufferevent_socket_connect(s->bev, (struct sockaddr *)&opt.addr,
	    (int)opt.addrlen) != 0) {
		session_fail(s, "connect: %s", strerror(errno));
		return;
	}
}

/* ------------------------------------------------------------------ */
/* The session's transport. */

const char *
http_session_id(const struct session *s)
{
	return s->http->sid;
}

void
http_send_get(struct session *s)
{
	s->phase = PH_GET;
	write_request(s, "GET", NULL, 0, "text/event-stream");
}

static void
http_start(struct session *s)
{
	char body[512];

	initialize_body(s, body, sizeof body);
	post_json(s, body);
}

static void
http_send(struct session *s, const char *body, size_t len)
{
	write_request(s, "POST", body, len,
	    "application/json, text/event-stream");
}

/* End the session with DELETE, as a client should. */
static void
http_end(struct session *s)
{
	if (s->http->sid[0] == '\0') {
		http_close(s);
		s->phase = PH_CLOSED;
		return;
	}
	s->phase = PH_DELETE;
	write_request(s, "DELETE", NULL, 0,
	    "application/json, text/event-stream");
}

static int
http_init(struct session *s)
{
	if ((s->http = calloc(1, sizeof *s->http)) == NULL ||
	    (s->http->body = evbuffer_new()) == NULL)
		return -1;
	return 0;
}

static void
http_free(struct session *s)
{
	struct http_state *hs = s->http;

	if (hs == NULL)
		return;
	http_close(s);
	evbuffer_free(hs->body);
	buf_free(&hs->line);
	buf_free(&hs->data);
	free(hs);
	s->http = NULL;
}

const struct transport http_transport = {
	http_init, http_free, http_start, http_send, http_end,
	http_close
};
