/* SPDX-License-Identifier: ISC */
/*
 * Streamable HTTP upstreams: every message is a POST answered with JSON or
 * an event stream; a GET stream carries what the upstream sends unasked;
 * the upstream's Mcp-Session-Id is kept and sent; a 404 for our session
 * means it is gone, and the worker starts a fresh one.  Event streams that
 * break before their response are resumed with GET and Last-Event-ID,
 * after the retry time the upstream asked for.
 */
#include "config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>
#include <event2/buffer.h>
#include <event2/event.h>

#include "curl_event.h"
#include "http_parse.h"
#include "log.h"
#include "meta.h"
#include "redact.h"
#include "sse.h"
#include "traceparent.h"
#include "worker.h"
#include "xmalloc.h"

#define HTTP_MAX_EXCHANGES	1024	/* POSTs in flight */
#define HTTP_SESSION_MAX	4096	/* bytes of an Mcp-Session-Id (a JWT
					   may be one) */
#define HTTP_RETRY_MS		1000	/* default before resuming a stream */
#define HTTP_RETRY_MAX_MS	60000	/* the most a server's retry: asks */
#define HTTP_MAX_RESUMES	5	/* per stream, in a row */
#define HTTP_GET_MAX_BACKOFF_MS	30000
#define HTTP_ERROR_BODY_MAX	65536	/* an error status's JSON body */
#define HTTP_MAX_FAREWELLS	256	/* DELETEs of ended sessions at once */
#define HTTP_FAREWELL_MS	1000L	/* the most one may take */

enum exchange_kind {
	EX_POST = 0,
	EX_RESUME,		/* GET with Last-Event-ID for a POST stream */
	EX_LISTEN		/* the standalone GET stream */
};

struct http_tp;

/* One HTTP request and its response. */
struct exchange {
	struct http_tp		*tp;
	enum exchange_kind	 kind;
	CURL			*easy;
	struct curl_slist	*headers;
	char			*body;
	size_t			 bodylen;
	int64_t			 id;		/* JSON-RPC id we POSTed, or 0 */
	long			 status;
	int			 sse;		/* the body is an event stream */
	int			 json;		/* the body is JSON */
	struct evbuffer		*resp;		/* a JSON body */
	struct sse_parser	 parser;
	char			*last_id;	/* of the event stream */
	long			 retry_ms;
	int			 answered;	/* our request got its answer */
	int			 resumes;
	int			 too_big;
	int			 init;		/* the initialize request */
	char			*challenge;	/* a 401's WWW-Authenticate */
	unsigned int		 token_gen;	/* the OAuth token sent, 0: none */
	int			 oauth_retried;	/* sent again with a new token */
	int			 oauth_waiting;	/* for a token (upstream_oauth.c) */
	struct event		*timer;		/* resumption after retry */
	struct chan_waiter	 waiter;	/* paused for the supervisor's
						   channel */
	TAILQ_ENTRY(exchange)	 entry;
};

struct http_tp {
	struct conn		*conn;
	struct curlev		*cev;
	char			*session;	/* Mcp-Session-Id */
	struct curl_slist	*extra;		/* configured headers */
	TAILQ_HEAD(, exchange)	 exchanges;
	unsigned int		 nexchanges;
	struct exchange		*listen;	/* the GET stream */
	int			 listen_refused;	/* 405 */
	unsigned int		 listen_backoff;
	struct event		*listen_timer;
	char			*listen_last;	/* its Last-Event-ID */
	int			 initialized;
};

static void	http_listen(struct http_tp *);
static void	http_exchange_free(struct exchange *);

/* Feed one message to the connection. */
static void
http_deliver(struct exchange *ex, const char *p, size_t n)
{
	struct jrpc	 m;
	const char	*why;
	int64_t		 id;

	if (ex->id != 0 && jrpc_scan(p, n, &m, &why) == 0 &&
	    (m.kind == JRPC_RESULT || m.kind == JRPC_ERROR) &&
	    jscan_int64(p, m.id, &id) == 0 && id == ex->id)
		ex->answered = 1;
	conn_message(ex->tp->conn, p, n, ex->kind == EX_LISTEN ? 0 : ex->id,
	    NULL);
}

/*
 * Answer our request ourselves if it got no answer: code 0 when the
 * upstream answered but its answer cannot be passed on (an error as if
 * the upstream's, which its breaker takes for an answer), else a failure
 * with that code (-32000 counts as the upstream's).
 */
static void
http_fail_request(struct exchange *ex, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
http_fail_request(struct exchange *ex, int code, const char *fmt, ...)
{
	va_list	ap;
	char	msg[512];

	if (ex->id == 0 || ex->answered)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	ex->answered = 1;
	if (code == 0)
		conn_answer_error(ex->tp->conn, ex->id, msg);
	else
		conn_fail_request(ex->tp->conn, ex->id, code, msg);
}

/* One event of an event stream. */
static void
http_sse_event(const struct sse_event *ev, void *arg)
{
	struct exchange	*ex = arg;

	if (ev->id[0] != '\0') {
		free(ex->last_id);
		ex->last_id = xstrdup(ev->id);
		/* Progress: resumptions are counted in a row. */
		ex->resumes = 0;
	}
	if (ev->retry >= 0)
		ex->retry_ms = ev->retry > HTTP_RETRY_MAX_MS ?
		    HTTP_RETRY_MAX_MS : ev->retry;
	if (ev->datalen == 0 || strcmp(ev->event, "message") != 0)
		return;		/* priming events, keep-alives, others */
	http_deliver(ex, ev->data, ev->datalen);
}

/* A session id as the specification has it (visible ASCII), bounded. */
static int
http_session_id_ok(const char *p, size_t n)
{
	size_t	i;

	if (n == 0 || n > HTTP_SESSION_MAX)
		return (0);
	for (i = 0; i < n; i++) {
		if (p[i] < 0x21 || p[i] > 0x7e)
			return (0);
	}
	return (1);
}

/* Response headers: the status, the body's type, the session id. */
static size_t
http_header_cb(char *p, size_t size, size_t n, void *arg)
{
	struct exchange		*ex = arg;
	struct http_tp		*tp = ex->tp;
	struct http_header	 h;
	size_t			 len = size * n;

	/* Not a C string: read within len only. */
	if (len > 5 && memcmp(p, "HTTP/", 5) == 0) {
		curl_easy_getinfo(ex->easy, CURLINFO_RESPONSE_CODE,
		    &ex->status);
		ex->sse = ex->json = 0;
		return (len);
	}
	if (http_header_line(p, len, &h) != 0)
		return (len);
	if (http_name_is(&h, "Content-Type")) {
		if (http_value_begins(&h, "text/event-stream"))
			ex->sse = 1;
		else if (http_value_begins(&h, "application/json"))
			ex->json = 1;
	} else if (http_name_is(&h, "WWW-Authenticate") &&
	    (ex->status == 401 || ex->status == 403))
		upoauth_challenge_add(&ex->challenge, h.value, h.valuelen);
	else if (http_name_is(&h, "Mcp-Session-Id") &&
	    ex->kind == EX_POST && tp->session == NULL) {
		if (http_session_id_ok(h.value, h.valuelen))
			tp->session = xstrndup(h.value, h.valuelen);
		else
			log_warnx("upstream %s: its Mcp-Session-Id (%zu bytes) "
			    "is not 1 to %d visible ASCII characters: not "
			    "kept", sc->name, h.valuelen, HTTP_SESSION_MAX);
	}
	return (len);
}

/* The supervisor caught up: take the response's bytes again. */
static void
http_resume_reading(void *arg)
{
	struct exchange	*ex = arg;

	curl_easy_pause(ex->easy, CURLPAUSE_CONT);
}

/* Response body bytes. */
static size_t
http_write_cb(char *p, size_t size, size_t n, void *arg)
{
	struct exchange	*ex = arg;
	size_t		 len = size * n;

	if (ex->status / 100 != 2) {
		/*
		 * An error page; only its status matters, unless it is a
		 * JSON-RPC error (a 2026-07-28 server answers -32020, -32021
		 * and -32022 with 400): kept, bounded, to be delivered.
		 */
		if (ex->json && evbuffer_get_length(ex->resp) + len <=
		    HTTP_ERROR_BODY_MAX)
			evbuffer_add(ex->resp, p, len);
		return (len);
	}
	if (chan_congested()) {
		/* curl keeps these bytes and gives them again on resume. */
		chan_wait(&ex->waiter);
		return (CURL_WRITEFUNC_PAUSE);
	}
	if (ex->sse) {
		if (sse_parse(&ex->parser, p, len, http_sse_event, ex) != 0) {
			ex->too_big = 1;
			return (0);	/* abort the transfer */
		}
		return (len);
	}
	if (evbuffer_get_length(ex->resp) + len > sc->max_message) {
		ex->too_big = 1;
		return (0);
	}
	evbuffer_add(ex->resp, p, len);
	return (len);
}

/* Build the request headers every exchange carries. */
static struct curl_slist *
http_headers(struct http_tp *tp, const char *accept)
{
	struct curl_slist	*h = NULL, *e;
	char			*line;
	unsigned int		 gen;

	for (e = tp->extra; e != NULL; e = e->next)
		h = curl_slist_append(h, e->data);
	h = upoauth_header_conn(tp->conn, h, &gen);
	xasprintf(&line, "Accept: %s", accept);
	h = curl_slist_append(h, line);
	free(line);
	if (tp->session != NULL) {
		xasprintf(&line, "Mcp-Session-Id: %s", tp->session);
		h = curl_slist_append(h, line);
		free(line);
	}
	/* Every request after initialize's answer, initialized included. */
	if (tp->conn->version[0] != '\0' && !tp->conn->modern) {
		xasprintf(&line, "MCP-Protocol-Version: %s",
		    tp->conn->version);
		h = curl_slist_append(h, line);
		free(line);
	}
	return (h);
}

/* Make an exchange with an easy handle set up for our upstream. */
static struct exchange *
http_exchange_new(struct http_tp *tp, enum exchange_kind kind)
{
	struct exchange	*ex;
	CURL		*easy;

	ex = xcalloc(1, sizeof *ex);
	ex->tp = tp;
	ex->kind = kind;
	ex->retry_ms = -1;
	ex->waiter.resume = http_resume_reading;
	ex->waiter.arg = ex;
	ex->resp = evbuffer_new();
	sse_parser_init(&ex->parser, sc->max_message);
	if ((easy = curl_easy_init()) == NULL)
		fatalx("curl_easy_init");
	ex->easy = easy;
	curlev_setopts(easy, sc->url);
	curl_easy_setopt(easy, CURLOPT_PRIVATE, ex);
	curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, http_header_cb);
	curl_easy_setopt(easy, CURLOPT_HEADERDATA, ex);
	curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, http_write_cb);
	curl_easy_setopt(easy, CURLOPT_WRITEDATA, ex);
	TAILQ_INSERT_TAIL(&tp->exchanges, ex, entry);
	tp->nexchanges++;
	return (ex);
}

static void
http_exchange_free(struct exchange *ex)
{
	struct http_tp	*tp = ex->tp;

	TAILQ_REMOVE(&tp->exchanges, ex, entry);
	tp->nexchanges--;
	chan_unwait(&ex->waiter);
	if (tp->listen == ex)
		tp->listen = NULL;
	if (ex->oauth_waiting)
		upoauth_forget(ex);
	free(ex->challenge);
	if (ex->timer != NULL)
		event_free(ex->timer);
	curl_easy_cleanup(ex->easy);
	curlev_headers_free(ex->headers);
	sse_parser_free(&ex->parser);
	evbuffer_free(ex->resp);
	free(ex->last_id);
	free(ex->body);
	free(ex);
}

/* Start an exchange; -1 if curl refused it. */
static int
http_start(struct exchange *ex)
{
	curl_easy_setopt(ex->easy, CURLOPT_HTTPHEADER, ex->headers);
	if (curlev_add(ex->tp->cev, ex->easy) != 0) {
		http_fail_request(ex, JRPC_INTERNAL_ERROR,
		    "cannot start an HTTP request");
		http_exchange_free(ex);
		return (-1);
	}
	return (0);
}

/* Resume a broken POST stream: GET with its Last-Event-ID. */
static void
http_resume_cb(evutil_socket_t fd, short what, void *arg)
{
	struct exchange		*old = arg, *ex;
	struct http_tp		*tp = old->tp;
	char			*line;

	ex = http_exchange_new(tp, EX_RESUME);
	ex->id = old->id;
	ex->resumes = old->resumes + 1;
	/* The stream's reconnection time holds until it says another. */
	ex->retry_ms = old->retry_ms;
	ex->last_id = old->last_id;
	old->last_id = NULL;
	http_exchange_free(old);
	ex->headers = http_headers(tp, "text/event-stream");
	xasprintf(&line, "Last-Event-ID: %s", ex->last_id);
	ex->headers = curl_slist_append(ex->headers, line);
	free(line);
	curl_easy_setopt(ex->easy, CURLOPT_HTTPGET, 1L);
	log_debug("resuming the stream of request %" PRId64 " after event %s",
	    ex->id, ex->last_id);
	http_start(ex);
}

/* A POST stream (or its resumption) ended without our answer. */
static void
http_stream_broken(struct exchange *ex, const char *why)
{
	struct timeval		 tv;
	long			 ms;

	/* Its answer came: nothing is left to resume. */
	if (ex->answered || ex->id == 0) {
		http_exchange_free(ex);
		return;
	}
	if (ex->last_id == NULL || ex->resumes >= HTTP_MAX_RESUMES ||
	    ex->tp->conn->state == CONN_DEAD) {
		http_fail_request(ex, MCP_CONNECTION_CLOSED, "upstream %s: the "
		    "response stream %s", sc->name, why);
		http_exchange_free(ex);
		return;
	}
	ms = ex->retry_ms >= 0 ? ex->retry_ms : HTTP_RETRY_MS;
	ex->timer = evtimer_new(base, http_resume_cb, ex);
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	evtimer_add(ex->timer, &tv);
}

/* Reopen the GET stream later. */
static void
http_listen_cb(evutil_socket_t fd, short what, void *arg)
{
	http_listen(arg);
}

/* The GET stream ended: reconnect after its retry time, with backoff. */
static void
http_listen_ended(struct http_tp *tp, struct exchange *ex)
{
	struct timeval	tv;
	long		ms;
	char		*last = ex->last_id;

	ex->last_id = NULL;
	ms = ex->retry_ms >= 0 ? ex->retry_ms : HTTP_RETRY_MS;
	if (ex->status / 100 != 2 || !ex->sse) {
		tp->listen_backoff = tp->listen_backoff == 0 ? 1000 :
		    tp->listen_backoff * 2;
		if (tp->listen_backoff > HTTP_GET_MAX_BACKOFF_MS)
			tp->listen_backoff = HTTP_GET_MAX_BACKOFF_MS;
		ms = tp->listen_backoff;
	} else
		tp->listen_backoff = 0;
	http_exchange_free(ex);
	if (tp->conn->state == CONN_DEAD) {
		free(last);
		return;
	}
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	if (tp->listen_timer == NULL)
		tp->listen_timer = evtimer_new(base, http_listen_cb, tp);
	evtimer_add(tp->listen_timer, &tv);
	if (last != NULL) {
		free(tp->listen_last);
		tp->listen_last = last;
	}
}

/* Open the GET stream for what the upstream sends unasked. */
static void
http_listen(struct http_tp *tp)
{
	struct exchange	*ex;
	char		*line;

	if (tp->listen_refused || tp->listen != NULL ||
	    tp->conn->state == CONN_DEAD)
		return;
	ex = http_exchange_new(tp, EX_LISTEN);
	ex->headers = http_headers(tp, "text/event-stream");
	if (tp->listen_last != NULL) {
		xasprintf(&line, "Last-Event-ID: %s", tp->listen_last);
		ex->headers = curl_slist_append(ex->headers, line);
		free(line);
	}
	curl_easy_setopt(ex->easy, CURLOPT_HTTPGET, 1L);
	tp->listen = ex;
	http_start(ex);
}

/* Is this curl error about reaching the upstream at all? */
static int
http_unreachable(CURLcode r)
{
	return (r == CURLE_COULDNT_RESOLVE_HOST || r == CURLE_COULDNT_CONNECT ||
	    r == CURLE_SSL_CONNECT_ERROR || r == CURLE_PEER_FAILED_VERIFICATION ||
	    r == CURLE_OPERATION_TIMEDOUT || r == CURLE_COULDNT_RESOLVE_PROXY);
}

/*
 * An error status whose body is a JSON-RPC error answering our request:
 * deliver it (a 2026-07-28 server's errors come so).  1 if done.
 */
static int
http_error_answer(struct exchange *ex)
{
	struct jrpc	 m;
	const char	*why;
	int64_t		 id;

	if (ex->id == 0 || ex->answered || !ex->json ||
	    evbuffer_get_length(ex->resp) == 0 ||
	    jrpc_scan((const char *)evbuffer_pullup(ex->resp, -1),
	    evbuffer_get_length(ex->resp), &m, &why) != 0 ||
	    m.kind != JRPC_ERROR || jscan_int64(m.p, m.id, &id) != 0 ||
	    id != ex->id)
		return (0);
	http_deliver(ex, m.p, m.n);
	http_exchange_free(ex);
	return (1);
}

static void	http_post(struct http_tp *, char *body, size_t len,
		    int retried);

/* A request refused with 401 has a token to go with, or none (why). */
static void
http_oauth_done(void *arg, const char *error)
{
	struct exchange	*ex = arg;
	struct http_tp	*tp = ex->tp;
	char		*body;
	size_t		 len;
	int64_t		 id = ex->answered ? 0 : ex->id;
	long		 status = ex->status;
	/* A session's instance without a token is over at its first
	 * refusal: the probe's, or initialize's. */
	int		 init = ex->init ||
			    (tp->conn->probing && tp->conn->session != 0);

	ex->oauth_waiting = 0;
	if (error != NULL) {
		http_exchange_free(ex);
		upoauth_refused(tp->conn, id, init ? "initialize" : NULL,
		    status, error);
		return;
	}
	/* The same request again, with the token. */
	body = ex->body;
	len = ex->bodylen;
	ex->body = NULL;
	ex->id = 0;
	http_exchange_free(ex);
	http_post(tp, body, len, 1);
}

/* A POST or a resumption finished. */
static void
http_done_request(struct exchange *ex, CURLcode r)
{
	struct conn	*c = ex->tp->conn;
	char		 why[512], url[256];

	/* Errors end up in the log, mcpctl and clients' errors. */
	url_redact(sc->url, url, sizeof url);
	if (r != CURLE_OK) {
		if (ex->too_big)
			http_fail_request(ex, 0, "upstream %s: a message is "
			    "over max_message (%zu bytes)", sc->name,
			    sc->max_message);
		else if (http_unreachable(r) || ex->init) {
			snprintf(why, sizeof why, "%s: %s", url,
			    curl_easy_strerror(r));
			http_exchange_free(ex);
			conn_lost(c, why);
			return;
		} else if (ex->sse) {
			snprintf(why, sizeof why, "broke (%s)",
			    curl_easy_strerror(r));
			http_stream_broken(ex, why);
			return;
		} else
			http_fail_request(ex, MCP_CONNECTION_CLOSED,
			    "upstream %s: %s", sc->name,
			    curl_easy_strerror(r));
		http_exchange_free(ex);
		/* Was that the upstream going away? Find out now. */
		conn_probe(c);
		return;
	}
	if (ex->status == 404 && ex->tp->session != NULL && !ex->init) {
		http_exchange_free(ex);
		conn_lost(c, "the upstream ended our session (HTTP 404)");
		return;
	}
	if (ex->status == 401 && ex->kind == EX_POST && !ex->oauth_retried &&
	    upoauth_unauthorized_conn(c, ex->challenge, ex->token_gen,
	    http_oauth_done, ex) == 0) {
		ex->oauth_waiting = 1;
		return;
	}
	/* A step-up: a token with more scope, or a login with it. */
	if (ex->status == 403 && ex->kind == EX_POST &&
	    upoauth_forbidden_conn(c, ex->challenge, ex->token_gen,
	    http_oauth_done, ex) == 0) {
		ex->oauth_waiting = 1;
		return;
	}
	if (ex->status / 100 != 2 && http_error_answer(ex))
		return;
	if (ex->status / 100 != 2) {
		if (ex->init) {
			snprintf(why, sizeof why, "initialize: HTTP %ld from %s",
			    ex->status, url);
			http_exchange_free(ex);
			conn_lost(c, why);
			return;
		}
		/* A 5xx is the upstream failing; a 4xx its answer. */
		http_fail_request(ex, ex->status / 100 == 5 ?
		    MCP_CONNECTION_CLOSED : 0, "upstream %s answered HTTP %ld",
		    sc->name, ex->status);
		http_exchange_free(ex);
		return;
	}
	if (ex->json && evbuffer_get_length(ex->resp) > 0) {
		http_deliver(ex, (const char *)evbuffer_pullup(ex->resp, -1),
		    evbuffer_get_length(ex->resp));
		/* Another id, a batch, a request: not the answer, and no
		 * other will come for this request. */
		http_fail_request(ex, 0, "upstream %s answered a request with "
		    "JSON that is not its response", sc->name);
	} else if (ex->sse && ex->id != 0 && !ex->answered) {
		http_stream_broken(ex, "ended before the response");
		return;
	} else if (ex->id != 0 && !ex->answered && ex->kind == EX_RESUME)
		http_fail_request(ex, MCP_CONNECTION_CLOSED, "upstream %s could "
		    "not resume the stream (HTTP %ld)", sc->name, ex->status);
	else if (ex->id != 0 && !ex->answered)
		http_fail_request(ex, MCP_CONNECTION_CLOSED, "upstream %s "
		    "answered a request with HTTP %ld and no response",
		    sc->name, ex->status);
	http_exchange_free(ex);
}

/* curl finished a transfer. */
static void
http_done_cb(CURL *easy, CURLcode r, void *arg)
{
	struct http_tp	*tp = arg;
	struct exchange	*ex;

	curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&ex);
	if (ex->kind != EX_LISTEN) {
		http_done_request(ex, r);
		return;
	}
	if (ex->status == 405) {
		log_debug("the upstream offers no GET stream");
		tp->listen_refused = 1;
		http_exchange_free(ex);
		return;
	}
	if (ex->status == 404 && tp->session != NULL) {
		http_exchange_free(ex);
		conn_lost(tp->conn, "the upstream ended our session (HTTP 404)");
		return;
	}
	if (r != CURLE_OK)
		log_debug("GET stream: %s", curl_easy_strerror(r));
	http_listen_ended(tp, ex);
}

/* Start: set up curl and begin the handshake (its first POST). */
static int
http_tp_start(struct conn *c)
{
	struct http_tp	*tp;

	tp = xcalloc(1, sizeof *tp);
	tp->conn = c;
	TAILQ_INIT(&tp->exchanges);
	if (worker_headers(&tp->extra) != 0) {
		free(tp);
		return (-1);
	}
	tp->cev = curlev_new(base, http_done_cb, tp);
	upoauth_init();
	c->tp = tp;
	worker_status("starting", NULL);
	conn_transport_up(c);
	return (0);
}

/* Add one header line to an exchange. */
static void
http_add_header(void *arg, const char *line)
{
	struct exchange	*ex = arg;

	ex->headers = curl_slist_append(ex->headers, line);
}

/*
 * The headers of a 2026-07-28 request mirror its body: the version, the
 * method, the name or URI it is about (Base64 in the sentinel when it is
 * not plain ASCII), and the arguments its tool marks x-mcp-header.
 */
static void
http_modern_headers(struct http_tp *tp, struct exchange *ex,
    const struct jrpc *m)
{
	struct evbuffer	*line = evbuffer_new();
	struct jspan	 v;
	const char	*field;
	char		*s;

	ex->headers = curl_slist_append(ex->headers, "MCP-Protocol-Version: "
	    MCP_VERSION_MODERN);
	evbuffer_add_printf(line, "Mcp-Method: %s", m->method_name);
	evbuffer_add(line, "", 1);
	ex->headers = curl_slist_append(ex->headers,
	    (const char *)evbuffer_pullup(line, -1));
	evbuffer_drain(line, evbuffer_get_length(line));
	if ((field = mcp_methods[m->method_id].param) != NULL &&
	    jscan_member(m->p, m->params, field, &v) == 0 &&
	    (s = jscan_strdup(m->p, v)) != NULL) {
		evbuffer_add_printf(line, "Mcp-Name: ");
		meta_header_encode(line, s, strlen(s));
		evbuffer_add(line, "", 1);
		ex->headers = curl_slist_append(ex->headers,
		    (const char *)evbuffer_pullup(line, -1));
		free(s);
	}
	evbuffer_free(line);
	era_param_headers(tp->conn, m, http_add_header, ex);
}

/* Send one message as a POST. */
static void
http_tp_send(struct conn *c, struct evbuffer *msg)
{
	struct http_tp	*tp = c->tp;
	size_t		 len = evbuffer_get_length(msg);
	char		*body;

	body = xmalloc(len + 1);
	evbuffer_remove(msg, body, len);
	body[len] = '\0';
	http_post(tp, body, len, 0);
}

/* POST a message (body taken); retried: the second time, with a new token. */
static void
http_post(struct http_tp *tp, char *body, size_t len, int retried)
{
	struct exchange	*ex;
	struct jrpc	 m;
	const char	*why;
	int		 scanned;
	char		 tpl[TP_HDR_MAX], tsl[TS_HDR_MAX];

	ex = http_exchange_new(tp, EX_POST);
	ex->bodylen = len;
	ex->body = body;
	ex->oauth_retried = retried;
	scanned = jrpc_scan(ex->body, len, &m, &why) == 0;
	if (scanned && m.kind == JRPC_REQUEST) {
		jscan_int64(ex->body, m.id, &ex->id);
		ex->init = m.method_id == MCPM_INITIALIZE;
	}
	if (tp->nexchanges > HTTP_MAX_EXCHANGES) {
		http_fail_request(ex, MCP_OVERLOADED, "upstream %s: too many "
		    "requests in flight (%d)", sc->name, HTTP_MAX_EXCHANGES);
		http_exchange_free(ex);
		return;
	}
	ex->headers = http_headers(tp, "application/json, text/event-stream");
	ex->token_gen = upoauth_generation_conn(tp->conn);
	ex->headers = curl_slist_append(ex->headers,
	    "Content-Type: application/json");
	if (scanned && meta_claim(&m))
		http_modern_headers(tp, ex, &m);
	if (scanned && m.kind == JRPC_REQUEST &&
	    tp_header_lines(&m, tpl, tsl) == 0) {
		ex->headers = curl_slist_append(ex->headers, tpl);
		if (tsl[0] != '\0')
			ex->headers = curl_slist_append(ex->headers, tsl);
	}
	curl_easy_setopt(ex->easy, CURLOPT_POSTFIELDS, ex->body);
	curl_easy_setopt(ex->easy, CURLOPT_POSTFIELDSIZE_LARGE,
	    (curl_off_t)len);
	http_start(ex);
}

/* The handshake is done: open the GET stream. */
static void
http_tp_initialized(struct conn *c)
{
	struct http_tp	*tp = c->tp;

	tp->initialized = 1;
	/* A 2026-07-28 upstream has no GET stream: it has listen. */
	if (!c->modern)
		http_listen(tp);
}

/*
 * Close the response stream of our request: a 2026-07-28 upstream takes
 * it as the request's cancellation.  -1 if there is no such request.
 */
static int
http_tp_cancel(struct conn *c, int64_t id)
{
	struct http_tp	*tp = c->tp;
	struct exchange	*ex;

	if (tp == NULL)
		return (-1);
	TAILQ_FOREACH(ex, &tp->exchanges, entry) {
		if (ex->id == id && ex->kind != EX_LISTEN) {
			curlev_remove(tp->cev, ex->easy);
			http_exchange_free(ex);
			return (0);
		}
	}
	return (-1);
}

/*
 * Our DELETEs under way: a closed session's farewell to the upstream,
 * sent from the loop and bounded in number and time; the worker's exit
 * waits for them (worker_exit_check) within its grace.
 */
struct farewell {
	CURL			*easy;
	struct curl_slist	*headers;	/* owned; hold the token */
	TAILQ_ENTRY(farewell)	 entry;
};
static struct curlev		*farewell_cev;
static TAILQ_HEAD(, farewell)	 farewells =
    TAILQ_HEAD_INITIALIZER(farewells);
static unsigned int		 nfarewells;

/* Free a farewell. */
static void
farewell_free(struct farewell *f)
{
	TAILQ_REMOVE(&farewells, f, entry);
	nfarewells--;
	curl_easy_cleanup(f->easy);
	curlev_headers_free(f->headers);
	free(f);
}

/* A DELETE is done, whatever its outcome: the session is ours no more. */
static void
farewell_done_cb(CURL *easy, CURLcode rc, void *arg)
{
	struct farewell	*f = NULL;
	long		 status = 0;

	curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&f);
	curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
	if (rc != CURLE_OK)
		log_debug("upstream %s: ending a session: %s", sc->name,
		    curl_easy_strerror(rc));
	else
		log_debug("upstream %s: ended a session (HTTP %ld)", sc->name,
		    status);
	if (f != NULL)
		farewell_free(f);
	worker_exit_check();
}

/* How many DELETEs are under way. */
unsigned int
http_farewells(void)
{
	return (nfarewells);
}

/* End our session at the upstream (DELETE) without waiting for it. */
static void
http_delete_session(struct http_tp *tp)
{
	struct farewell	*f;
	CURL		*easy;

	if (tp->session == NULL)
		return;
	if (nfarewells >= HTTP_MAX_FAREWELLS) {
		log_warnx("upstream %s: %u sessions are being ended already; "
		    "leaving one to expire", sc->name, nfarewells);
		return;
	}
	if ((easy = curl_easy_init()) == NULL)
		return;
	if (farewell_cev == NULL)
		farewell_cev = curlev_new(base, farewell_done_cb, NULL);
	f = xcalloc(1, sizeof *f);
	f->easy = easy;
	f->headers = http_headers(tp, "application/json");
	TAILQ_INSERT_TAIL(&farewells, f, entry);
	nfarewells++;
	curlev_setopts(easy, sc->url);
	curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, "DELETE");
	curl_easy_setopt(easy, CURLOPT_HTTPHEADER, f->headers);
	curl_easy_setopt(easy, CURLOPT_NOBODY, 1L);
	curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, HTTP_FAREWELL_MS);
	curl_easy_setopt(easy, CURLOPT_PRIVATE, f);
	/* A refusal comes to farewell_done_cb, which frees it. */
	curlev_add(farewell_cev, easy);
}

/* Stop: drop every exchange, end the session, free everything. */
static void
http_tp_stop(struct conn *c)
{
	struct http_tp	*tp = c->tp;
	struct exchange	*ex;

	c->tp = NULL;
	while ((ex = TAILQ_FIRST(&tp->exchanges)) != NULL) {
		curlev_remove(tp->cev, ex->easy);
		http_exchange_free(ex);
	}
	if (c->state == CONN_READY)
		http_delete_session(tp);
	curlev_free(tp->cev);
	if (tp->listen_timer != NULL)
		event_free(tp->listen_timer);
	curlev_headers_free(tp->extra);
	free(tp->listen_last);
	free(tp->session);
	free(tp);
}

const struct transport_ops transport_http = {
	.name = "http",
	.start = http_tp_start,
	.send = http_tp_send,
	.stop = http_tp_stop,
	.initialized = http_tp_initialized,
	.cancel = http_tp_cancel,
};
