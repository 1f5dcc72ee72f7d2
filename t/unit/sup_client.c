/* SPDX-License-Identifier: ISC */
/*
 * The clients of the in-process supervisor (sup_harness.h): connections
 * served with http_adopt(), the responses read back from them, MCP
 * requests, and helpers to read JSON.
 */
#include "config.h"

#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/util.h>

#include "supervisor.h"
#include "xmalloc.h"

#include "sup_harness.h"
#include "sup_priv.h"

#define RESP_HEAD_MAX	65536
#define SSE_MAX		(64 * 1024 * 1024)

static void	resp_free(struct sup_resp *);

static TAILQ_HEAD(, sup_conn)	 conns = TAILQ_HEAD_INITIALIZER(conns);
static TAILQ_HEAD(, sup_client)	 clients =
    TAILQ_HEAD_INITIALIZER(clients);
/* Strings handed out (headers, dumps), freed at the end. */
static char			**pool;
static size_t			  npool, pool_cap;

/* Keep a string to free at the end; return it. */
static char *
pool_add(char *s)
{
	if (npool == pool_cap) {
		pool_cap = pool_cap * 2 + 16;
		pool = xreallocarray(pool, pool_cap, sizeof *pool);
	}
	pool[npool++] = s;
	return (s);
}

struct sup_conn *
sup_connect(void)
{
	struct sockaddr_in	 sin;
	struct sup_conn		*c;
	int			 sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0, sv) != 0)
		sup_die("socketpair: %s", strerror(errno));
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_port = htons(40000);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	c = xcalloc(1, sizeof *c);
	c->fd = sv[1];
	c->in = evbuffer_new();
	c->out = evbuffer_new();
	TAILQ_INIT(&c->resps);
	TAILQ_INSERT_TAIL(&conns, c, entry);
	http_adopt(sv[0], (struct sockaddr *)&sin, &gateway_service);
	return (c);
}

/* Open a WebSocket with a bearer token: its raw connection, past the 101. */
struct sup_conn *
sup_ws_open(const char *bearer)
{
	struct sup_conn	*c = sup_connect();
	char		 req[4096];
	const char	*p, *end;
	int		 n;

	c->raw = 1;
	n = snprintf(req, sizeof req, "GET /ws HTTP/1.1\r\n"
	    "Host: 127.0.0.1:8931\r\nAuthorization: Bearer %s\r\n"
	    "Upgrade: websocket\r\nConnection: Upgrade\r\n"
	    "Sec-WebSocket-Version: 13\r\n"
	    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
	    "Sec-WebSocket-Protocol: mcp\r\n\r\n", bearer);
	if (n < 0 || (size_t)n >= sizeof req)
		sup_die("sup_ws_open: a token of %zu bytes", strlen(bearer));
	sup_write(c, req, (size_t)n);
	evbuffer_add(c->in, "", 1);
	p = (const char *)evbuffer_pullup(c->in, -1);
	if (strncmp(p, "HTTP/1.1 101 ", 13) != 0 ||
	    (end = strstr(p, "\r\n\r\n")) == NULL)
		sup_die("sup_ws_open: not 101: %s", p);
	evbuffer_drain(c->in, (size_t)(end + 4 - p));
	/* The NUL added is taken off again: nothing else came yet. */
	if (evbuffer_get_length(c->in) != 1)
		sup_die("sup_ws_open: %zu bytes after the 101",
		    evbuffer_get_length(c->in) - 1);
	evbuffer_drain(c->in, 1);
	return (c);
}

struct sup_conn *
sup_connect_tcp(const char *addr)
{
	struct sockaddr_in	 sin;
	struct sup_conn		*c;
	const char		*colon;
	char			 host[64];
	int			 fd;

	if ((colon = strrchr(addr, ':')) == NULL ||
	    (size_t)(colon - addr) >= sizeof host)
		sup_die("not an address: %s", addr);
	memcpy(host, addr, (size_t)(colon - addr));
	host[colon - addr] = '\0';
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)atoi(colon + 1));
	if (inet_pton(AF_INET, host, &sin.sin_addr) != 1)
		sup_die("not an IPv4 address: %s", addr);
	/* Connected by the kernel: the gateway accepts it in the loop. */
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    connect(fd, (struct sockaddr *)&sin, sizeof sin) != 0)
		sup_die("connect %s: %s", addr, strerror(errno));
	evutil_make_socket_nonblocking(fd);
	c = xcalloc(1, sizeof *c);
	c->fd = fd;
	c->in = evbuffer_new();
	c->out = evbuffer_new();
	TAILQ_INIT(&c->resps);
	TAILQ_INSERT_TAIL(&conns, c, entry);
	return (c);
}

void
sup_writeq(struct sup_conn *c, const void *p, size_t len)
{
	if (c->fd >= 0)
		evbuffer_add(c->out, p, len);
}

void
sup_write(struct sup_conn *c, const void *p, size_t len)
{
	sup_writeq(c, p, len);
	sup_run();
}

void
sup_hangup(struct sup_conn *c)
{
	if (c->fd < 0)
		return;
	close(c->fd);
	c->fd = -1;
	evbuffer_drain(c->out, evbuffer_get_length(c->out));
	sup_run();
}

/* Free a connection and its responses. */
static void
conn_free(struct sup_conn *c)
{
	struct sup_resp	*r;

	if (c->fd >= 0)
		close(c->fd);
	while ((r = TAILQ_FIRST(&c->resps)) != NULL) {
		TAILQ_REMOVE(&c->resps, r, entry);
		resp_free(r);
	}
	evbuffer_free(c->in);
	evbuffer_free(c->out);
	free(c);
}

void
sup_release(struct sup_conn *c)
{
	TAILQ_REMOVE(&conns, c, entry);
	conn_free(c);
}

/* A new response awaited on a connection. */
static struct sup_resp *
resp_new(struct sup_conn *c)
{
	struct sup_resp	*r;

	r = xcalloc(1, sizeof *r);
	r->conn = c;
	r->body = evbuffer_new();
	TAILQ_INSERT_TAIL(&c->resps, r, entry);
	return (r);
}

static void
resp_free(struct sup_resp *r)
{
	size_t	i;

	for (i = 0; i < r->nevents; i++) {
		free(r->events[i].id);
		free(r->events[i].event);
		free(r->events[i].data);
		json_decref(r->events[i].json);
	}
	free(r->events);
	if (r->sse)
		sse_parser_free(&r->parser);
	evbuffer_free(r->body);
	free(r->head);
	free(r->text);
	json_decref(r->json);
	free(r);
}

/* An event of an event stream. */
static void
resp_event(const struct sse_event *ev, void *arg)
{
	struct sup_resp		*r = arg;
	struct sup_event	*e;

	r->events = xreallocarray(r->events, r->nevents + 1,
	    sizeof *r->events);
	e = &r->events[r->nevents++];
	e->id = xstrdup(ev->id);
	e->event = xstrdup(ev->event);
	e->data = xstrndup(ev->data, ev->datalen);
	e->json = NULL;
}

/* Body bytes of a response. */
static void
resp_data(struct sup_resp *r, const char *p, size_t len)
{
	evbuffer_add(r->body, p, len);
	free(r->text);
	r->text = NULL;
	json_decref(r->json);
	r->json = NULL;
	if (r->sse && sse_parse(&r->parser, p, len, resp_event, r) != 0)
		sup_die("an event over %d bytes", SSE_MAX);
}

/* A response's head is in. */
static void
resp_head(struct sup_resp *r, const char *p, size_t len)
{
	const struct http_header	*h;

	r->head = xmalloc(len + 1);
	memcpy(r->head, p, len);
	r->head[len] = '\0';
	if (http_parse_response(r->head, len, RESP_HEAD_MAX, &r->h) <= 0)
		sup_die("response head does not parse again");
	if (http_body_framing(&r->h, 0, &r->framing, &r->remaining) != 0)
		sup_die("response framing is bad: %s", r->head);
	if (r->head_only || r->h.status == 204 || r->h.status == 304)
		r->framing = HTTP_BODY_NONE;
	if (r->framing == HTTP_BODY_CHUNKED)
		http_chunked_init(&r->chunked);
	if ((h = http_header(&r->h, "Content-Type")) != NULL &&
	    http_value_begins(h, "text/event-stream")) {
		r->sse = 1;
		sse_parser_init(&r->parser, SSE_MAX);
	}
	r->status = r->h.status;
	if (r->framing == HTTP_BODY_NONE ||
	    (r->framing == HTTP_BODY_LENGTH && r->remaining == 0))
		r->done = 1;
}

/* Parse what came on a connection into its responses. */
static void
conn_parse(struct sup_conn *c)
{
	struct sup_resp	*r;
	struct evbuffer	*dec;
	struct http_head h;
	const char	*p;
	size_t		 n, take;
	ssize_t		 rr;
	int		 done;

	while ((n = evbuffer_get_length(c->in)) > 0) {
		TAILQ_FOREACH(r, &c->resps, entry) {
			if (!r->done)
				break;
		}
		if (r == NULL)
			r = resp_new(c);
		p = (const char *)evbuffer_pullup(c->in, -1);
		if (r->status == 0) {
			if ((rr = http_parse_response(p, n, RESP_HEAD_MAX,
			    &h)) == 0) {
				if (n >= RESP_HEAD_MAX)
					sup_die("response head too long");
				return;
			}
			if (rr < 0)
				sup_die("malformed response: %.*s", (int)(n >
				    200 ? 200 : n), p);
			if (h.status >= 100 && h.status < 200) {
				evbuffer_drain(c->in, (size_t)rr);
				continue;
			}
			resp_head(r, p, (size_t)rr);
			evbuffer_drain(c->in, (size_t)rr);
			continue;
		}
		switch (r->framing) {
		case HTTP_BODY_LENGTH:
			take = n < r->remaining ? n : (size_t)r->remaining;
			resp_data(r, p, take);
			evbuffer_drain(c->in, take);
			if ((r->remaining -= take) == 0)
				r->done = 1;
			break;
		case HTTP_BODY_CHUNKED:
			dec = evbuffer_new();
			rr = http_chunked_decode(&r->chunked, p, n, dec,
			    SIZE_MAX, &done);
			if (rr < 0)
				sup_die("malformed chunked body");
			evbuffer_drain(c->in, (size_t)rr);
			if (evbuffer_get_length(dec) > 0)
				resp_data(r, (const char *)evbuffer_pullup(dec,
				    -1), evbuffer_get_length(dec));
			evbuffer_free(dec);
			if (done)
				r->done = 1;
			else if (rr == 0)
				return;
			break;
		case HTTP_BODY_EOF:
			resp_data(r, p, n);
			evbuffer_drain(c->in, n);
			break;
		default:
			sup_die("bytes after a response without a body: %.*s",
			    (int)(n > 200 ? 200 : n), p);
		}
	}
}

/* Write and read a connection; 1 if anything moved. */
static int
conn_io(struct sup_conn *c)
{
	struct sup_resp	*r;
	int		 n, busy = 0;

	if (c->fd < 0)
		return (0);
	while (evbuffer_get_length(c->out) > 0 &&
	    (n = evbuffer_write(c->out, c->fd)) > 0)
		busy = 1;
	while ((n = sup_read(c->fd, c->in)) > 0)
		busy = 1;
	if (n == 0 && !c->eof) {
		c->eof = 1;
		busy = 1;
	}
	if (c->raw)
		return (busy);
	conn_parse(c);
	if (c->eof) {
		TAILQ_FOREACH(r, &c->resps, entry) {
			if (r->status != 0 && r->framing == HTTP_BODY_EOF)
				r->done = 1;
		}
	}
	return (busy);
}

int
sup_clients_io(void)
{
	struct sup_conn	*c;
	int		 busy = 0;

	TAILQ_FOREACH(c, &conns, entry)
		busy |= conn_io(c);
	return (busy);
}

void
sup_clients_end(void)
{
	struct sup_conn		*c;
	struct sup_client	*cl;
	size_t			 i;

	while ((c = TAILQ_FIRST(&conns)) != NULL) {
		TAILQ_REMOVE(&conns, c, entry);
		conn_free(c);
	}
	while ((cl = TAILQ_FIRST(&clients)) != NULL) {
		TAILQ_REMOVE(&clients, cl, entry);
		free(cl->token);
		free(cl->headers);
		free(cl);
	}
	for (i = 0; i < npool; i++)
		free(pool[i]);
	free(pool);
	pool = NULL;
	npool = pool_cap = 0;
}

/* Do header lines hold one of a name? */
static int
has_header(const char *headers, const char *name)
{
	size_t		 len = strlen(name);
	const char	*p = headers;

	while (p != NULL && *p != '\0') {
		if (strncasecmp(p, name, len) == 0 && p[len] == ':')
			return (1);
		if ((p = strstr(p, "\r\n")) != NULL)
			p += 2;
	}
	return (0);
}

struct sup_resp *
sup_request(struct sup_conn *c, const char *method, const char *path,
    const char *headers, const char *body)
{
	struct sup_resp	*r = sup_requestq(c, method, path, headers, body);

	sup_run();
	return (r);
}

struct sup_resp *
sup_requestq(struct sup_conn *c, const char *method, const char *path,
    const char *headers, const char *body)
{
	struct evbuffer	*buf = evbuffer_new();
	struct sup_resp	*r;

	if (headers == NULL)
		headers = "";
	evbuffer_add_printf(buf, "%s %s HTTP/1.1\r\n", method, path);
	if (!has_header(headers, "Host"))
		evbuffer_add_printf(buf, "Host: 127.0.0.1:8931\r\n");
	evbuffer_add_printf(buf, "%s", headers);
	if (body != NULL)
		evbuffer_add_printf(buf, "Content-Length: %zu\r\n",
		    strlen(body));
	evbuffer_add_printf(buf, "\r\n%s", body != NULL ? body : "");
	r = resp_new(c);
	r->head_only = strcmp(method, "HEAD") == 0;
	sup_writeq(c, evbuffer_pullup(buf, -1), evbuffer_get_length(buf));
	evbuffer_free(buf);
	return (r);
}

struct sup_resp *
sup_http(const char *method, const char *path, const char *headers,
    const char *body)
{
	return (sup_request(sup_connect(), method, path, headers, body));
}

struct sup_resp *
sup_response(struct sup_conn *c, size_t i)
{
	struct sup_resp	*r;

	TAILQ_FOREACH(r, &c->resps, entry) {
		if (i-- == 0)
			return (r);
	}
	return (NULL);
}

const char *
sup_header(struct sup_resp *r, const char *name)
{
	const struct http_header	*h;

	if (r->status == 0 || (h = http_header(&r->h, name)) == NULL)
		return (NULL);
	return (pool_add(xstrndup(h->value, h->valuelen)));
}

const char *
sup_body(struct sup_resp *r)
{
	size_t	len = evbuffer_get_length(r->body);

	if (r->text == NULL) {
		r->text = xmalloc(len + 1);
		evbuffer_copyout(r->body, r->text, len);
		r->text[len] = '\0';
	}
	return (r->text);
}

json_t *
sup_json(struct sup_resp *r)
{
	if (r->json == NULL && r->done && evbuffer_get_length(r->body) > 0)
		r->json = json_loads(sup_body(r), JSON_ALLOW_NUL, NULL);
	return (r->json);
}

json_t *
sup_event(struct sup_resp *r, size_t i)
{
	if (i >= r->nevents)
		return (NULL);
	if (r->events[i].json == NULL)
		r->events[i].json = json_loads(r->events[i].data,
		    JSON_ALLOW_NUL, NULL);
	return (r->events[i].json);
}

json_t *
sup_answer(struct sup_resp *r)
{
	json_t	*o;
	size_t	 i;

	if (!r->sse)
		return (sup_json(r));
	for (i = 0; i < r->nevents; i++) {
		o = sup_event(r, i);
		if (json_object_get(o, "method") == NULL &&
		    (json_object_get(o, "result") != NULL ||
		    json_object_get(o, "error") != NULL))
			return (o);
	}
	return (NULL);
}

/* The i-th event of a stream if it has a method, or NULL. */
static json_t *
event_with(struct sup_resp *r, size_t i, const char *method)
{
	json_t	*o = sup_event(r, i);

	if (json_is_string(json_object_get(o, "method")) &&
	    strcmp(json_string_value(json_object_get(o, "method")),
	    method) == 0)
		return (o);
	return (NULL);
}

json_t *
sup_find(struct sup_resp *r, const char *method)
{
	json_t	*o;
	size_t	 i;

	for (i = 0; i < r->nevents; i++) {
		if ((o = event_with(r, i, method)) != NULL)
			return (o);
	}
	return (NULL);
}

size_t
sup_nfound(struct sup_resp *r, const char *method)
{
	size_t	 i, n = 0;

	for (i = 0; i < r->nevents; i++)
		n += event_with(r, i, method) != NULL;
	return (n);
}

const char *
sup_ack_uris(struct sup_resp *r)
{
	static char	 buf[4096];
	json_t		*ack, *uris, *v;
	size_t		 i, n = 0;

	if ((ack = sup_find(r, "notifications/subscriptions/acknowledged")) ==
	    NULL)
		return (NULL);
	buf[0] = '\0';
	uris = sup_jget(ack, "params.notifications.resourceSubscriptions");
	json_array_foreach(uris, i, v) {
		if (n < sizeof buf)
			n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s",
			    n > 0 ? " " : "", json_is_string(v) ?
			    json_string_value(v) : "(not a string)");
	}
	return (buf);
}

struct sup_client *
sup_client(const char *token)
{
	struct sup_client	*cl;

	cl = xcalloc(1, sizeof *cl);
	cl->token = token != NULL ? xstrdup(token) : NULL;
	TAILQ_INSERT_TAIL(&clients, cl, entry);
	return (cl);
}

/* The header lines of a client's requests, with more after. */
static void
client_headers(struct sup_client *cl, struct evbuffer *buf,
    const char *more)
{
	if (cl->token != NULL)
		evbuffer_add_printf(buf, "Authorization: Bearer %s\r\n",
		    cl->token);
	if (cl->sid[0] != '\0')
		evbuffer_add_printf(buf, "Mcp-Session-Id: %s\r\n", cl->sid);
	if (cl->version[0] != '\0')
		evbuffer_add_printf(buf, "MCP-Protocol-Version: %s\r\n",
		    cl->version);
	if (cl->headers != NULL)
		evbuffer_add_printf(buf, "%s", cl->headers);
	if (more != NULL)
		evbuffer_add_printf(buf, "%s", more);
	evbuffer_add(buf, "", 1);
}

/* POST a formatted message. */
static struct sup_resp *
client_vpost(struct sup_client *cl, const char *more, int run,
    const char *fmt, va_list ap)
{
	struct evbuffer	*h = evbuffer_new();
	struct sup_resp	*r;
	char		*body;

	if (vasprintf(&body, fmt, ap) < 0)
		sup_die("vasprintf");
	evbuffer_add_printf(h, "Content-Type: application/json\r\n"
	    "Accept: application/json, text/event-stream\r\n");
	client_headers(cl, h, more);
	r = sup_requestq(sup_connect(), "POST", cl->path != NULL ? cl->path :
	    "/mcp", (const char *)evbuffer_pullup(h, -1), body);
	if (run)
		sup_run();
	evbuffer_free(h);
	free(body);
	return (r);
}

struct sup_resp *
sup_modern(const char *path, const char *token, const char *method,
    const char *name, const char *params, const char *caps, const char *more)
{
	struct sup_resp	*r;
	char		*h, *body;

	xasprintf(&h, "Content-Type: application/json\r\n"
	    "Accept: application/json, text/event-stream\r\n"
	    "Authorization: Bearer %s\r\nMCP-Protocol-Version: 2026-07-28\r\n"
	    "Mcp-Method: %s\r\n%s%s%s%s", token, method, name != NULL ?
	    "Mcp-Name: " : "", name != NULL ? name : "", name != NULL ?
	    "\r\n" : "", more != NULL ? more : "");
	xasprintf(&body, "{\"jsonrpc\":\"2.0\",\"id\":\"r1\","
	    "\"method\":\"%s\",\"params\":{%s%s\"_meta\":{"
	    "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
	    "\"io.modelcontextprotocol/clientCapabilities\":%s}}}", method,
	    params, params[0] != '\0' ? "," : "", caps != NULL ? caps : "{}");
	r = sup_http("POST", path, h, body);
	free(h);
	free(body);
	return (r);
}

struct sup_resp *
sup_post(struct sup_client *cl, const char *fmt, ...)
{
	struct sup_resp	*r;
	va_list		 ap;

	va_start(ap, fmt);
	r = client_vpost(cl, NULL, 1, fmt, ap);
	va_end(ap);
	return (r);
}

struct sup_resp *
sup_postq(struct sup_client *cl, const char *fmt, ...)
{
	struct sup_resp	*r;
	va_list		 ap;

	va_start(ap, fmt);
	r = client_vpost(cl, NULL, 0, fmt, ap);
	va_end(ap);
	return (r);
}

struct sup_resp *
sup_post_with(struct sup_client *cl, const char *headers, const char *fmt,
    ...)
{
	struct sup_resp	*r;
	va_list		 ap;

	va_start(ap, fmt);
	r = client_vpost(cl, headers, 1, fmt, ap);
	va_end(ap);
	return (r);
}

json_t *
sup_rpc(struct sup_client *cl, const char *fmt, ...)
{
	struct sup_resp	*r;
	va_list		 ap;

	va_start(ap, fmt);
	r = client_vpost(cl, NULL, 1, fmt, ap);
	va_end(ap);
	return (sup_answer(r));
}

struct sup_resp *
sup_initialize(struct sup_client *cl, const char *params)
{
	struct sup_resp	*r;
	const char	*sid, *v;

	if (params == NULL)
		params = "{\"protocolVersion\":\"2025-11-25\","
		    "\"capabilities\":{},\"clientInfo\":{\"name\":\"check\","
		    "\"version\":\"1\"}}";
	r = sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":"
	    "\"initialize\",\"params\":%s}", params);
	if (r->status == 200 && (sid = sup_header(r, "Mcp-Session-Id")) !=
	    NULL) {
		snprintf(cl->sid, sizeof cl->sid, "%s", sid);
		if ((v = sup_jstr(sup_answer(r),
		    "result.protocolVersion")) != NULL)
			snprintf(cl->version, sizeof cl->version, "%s", v);
	}
	return (r);
}

struct sup_client *
sup_session(const char *token, const char *caps)
{
	struct sup_client	*cl = sup_client(token);
	struct sup_resp		*r;
	char			*params;

	xasprintf(&params, "{\"protocolVersion\":\"2025-11-25\","
	    "\"capabilities\":%s,\"clientInfo\":{\"name\":\"check\","
	    "\"version\":\"1\"}}", caps != NULL ? caps : "{}");
	r = sup_initialize(cl, params);
	free(params);
	if (r->status != 200 || cl->sid[0] == '\0')
		sup_die("initialize: %d %s", r->status, sup_body(r));
	r = sup_post(cl, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/initialized\"}");
	if (r->status != 202)
		sup_die("notifications/initialized: %d %s", r->status,
		    sup_body(r));
	return (cl);
}

struct sup_resp *
sup_get(struct sup_client *cl, const char *last_event_id)
{
	struct evbuffer	*h = evbuffer_new();
	struct sup_resp	*r;

	evbuffer_add_printf(h, "Accept: text/event-stream\r\n");
	if (last_event_id != NULL)
		evbuffer_add_printf(h, "Last-Event-ID: %s\r\n",
		    last_event_id);
	client_headers(cl, h, NULL);
	r = sup_http("GET", cl->path != NULL ? cl->path : "/mcp",
	    (const char *)evbuffer_pullup(h, -1), NULL);
	evbuffer_free(h);
	return (r);
}

struct sup_resp *
sup_delete(struct sup_client *cl)
{
	struct evbuffer	*h = evbuffer_new();
	struct sup_resp	*r;

	client_headers(cl, h, NULL);
	r = sup_http("DELETE", cl->path != NULL ? cl->path : "/mcp",
	    (const char *)evbuffer_pullup(h, -1), NULL);
	evbuffer_free(h);
	return (r);
}

json_t *
sup_jget(json_t *j, const char *path)
{
	char		 key[256];
	const char	*p = path, *dot;
	size_t		 len;
	char		*end;
	unsigned long	 i;

	while (j != NULL && *p != '\0') {
		dot = strchr(p, '.');
		len = dot != NULL ? (size_t)(dot - p) : strlen(p);
		if (len >= sizeof key)
			return (NULL);
		memcpy(key, p, len);
		key[len] = '\0';
		if (json_is_array(j) && isdigit((unsigned char)key[0])) {
			i = strtoul(key, &end, 10);
			j = *end == '\0' ? json_array_get(j, i) : NULL;
		} else
			j = json_object_get(j, key);
		p += len;
		if (*p == '.')
			p++;
	}
	return (j);
}

const char *
sup_jstr(json_t *j, const char *path)
{
	return (json_string_value(sup_jget(j, path)));
}

long long
sup_jint(json_t *j, const char *path)
{
	return (json_integer_value(sup_jget(j, path)));
}

size_t
sup_jlen(json_t *j, const char *path)
{
	return (json_array_size(sup_jget(j, path)));
}

const char *
sup_dump(json_t *j)
{
	if (j == NULL)
		return ("(none)");
	return (pool_add(json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY)));
}
