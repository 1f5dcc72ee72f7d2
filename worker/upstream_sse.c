/* SPDX-License-Identifier: ISC */
/*
 * Legacy HTTP+SSE upstreams (protocol 2024-11-05): a GET opens an event
 * stream whose first "endpoint" event names where to POST; every answer
 * comes back on the stream.  The stream is the session, so losing it ends
 * the connection and the supervisor reconnects with backoff.  A 401 to the
 * GET gets a token and connects again (upoauth_connect_refused); a 401 to
 * a POST gets one and POSTs again, once, as upstream_http.c does.
 */
#include "config.h"

#include <inttypes.h>
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
#include "redact.h"
#include "sse.h"
#include "traceparent.h"
#include "worker.h"
#include "xmalloc.h"

#define SSE_MAX_POSTS	1024

struct sse_tp;

/* A POST of one message. */
struct sse_post {
	struct sse_tp		*tp;
	CURL			*easy;
	struct curl_slist	*headers;
	char			*body;
	size_t			 len;
	int64_t			 id;	/* of a request, else 0 */
	int			 init;	/* the initialize request */
	long			 status;
	char			*challenge;	/* a 401's WWW-Authenticate */
	unsigned int		 token_gen;	/* the OAuth token sent, 0: none */
	int			 oauth_retried;	/* sent again with a new token */
	int			 oauth_waiting;	/* for a token */
	TAILQ_ENTRY(sse_post)	 entry;
};

struct sse_tp {
	struct conn		*conn;
	struct curlev		*cev;
	CURL			*stream;	/* the GET */
	struct curl_slist	*stream_headers;
	struct curl_slist	*extra;
	struct sse_parser	 parser;
	long			 status;
	int			 is_sse;
	char			*challenge;	/* a 401's WWW-Authenticate */
	unsigned int		 token_gen;	/* the OAuth token sent, 0: none */
	char			*endpoint;	/* absolute POST URL */
	TAILQ_HEAD(, sse_post)	 posts;
	unsigned int		 nposts;
	struct chan_waiter	 waiter;	/* the GET paused for the
						   supervisor's channel */
};

/* Get a URL's scheme, host and port as "scheme://host:port" (caller frees). */
static char *
sse_origin(CURLU *u)
{
	char	*scheme = NULL, *host = NULL, *port = NULL, *res = NULL;

	if (curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) ==
	    CURLUE_OK)
		xasprintf(&res, "%s://%s:%s", scheme, host, port);
	curl_free(scheme);
	curl_free(host);
	curl_free(port);
	return (res);
}

/*
 * Resolve the endpoint event's URL against the upstream's.  It must have
 * the upstream's origin: the POSTs carry the configured headers, which may
 * hold credentials, and an upstream may not send them elsewhere.
 */
static char *
sse_resolve(const char *ref, const char **why)
{
	CURLU	*u;
	char	*out = NULL, *res = NULL, *origin, *ours = NULL;

	*why = "not a URL";
	if ((u = curl_url()) == NULL)
		return (NULL);
	if (curl_url_set(u, CURLUPART_URL, sc->url, 0) == CURLUE_OK &&
	    (ours = sse_origin(u)) != NULL &&
	    curl_url_set(u, CURLUPART_URL, ref, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_URL, &out, 0) == CURLUE_OK) {
		origin = sse_origin(u);
		if (origin != NULL && strcasecmp(origin, ours) == 0)
			res = xstrdup(out);
		else
			*why = "not on the upstream's scheme, host and port";
		free(origin);
		curl_free(out);
	}
	free(ours);
	curl_url_cleanup(u);
	return (res);
}

/* One event of the stream. */
static void
sse_event_cb(const struct sse_event *ev, void *arg)
{
	struct sse_tp	*tp = arg;
	const char	*why;
	char		 msg[512], url[256];

	if (strcmp(ev->event, "endpoint") == 0) {
		if (tp->endpoint != NULL)
			return;
		/* Waiting for a better one would only end in init_timeout. */
		if ((tp->endpoint = sse_resolve(ev->data, &why)) == NULL) {
			snprintf(msg, sizeof msg, "endpoint event refused (%s): "
			    "%s", why, url_redact(ev->data, url, 200));
			conn_lost(tp->conn, msg);
			return;
		}
		log_debug("posting to %s", url_redact(tp->endpoint, url,
		    sizeof url));
		conn_transport_up(tp->conn);
		return;
	}
	if (strcmp(ev->event, "message") == 0 && ev->datalen > 0)
		conn_message(tp->conn, ev->data, ev->datalen, 0, NULL);
}

static size_t
sse_stream_header_cb(char *p, size_t size, size_t n, void *arg)
{
	struct sse_tp		*tp = arg;
	struct http_header	 h;
	size_t			 len = size * n;

	/* Not a C string: read within len only. */
	if (len > 5 && memcmp(p, "HTTP/", 5) == 0)
		curl_easy_getinfo(tp->stream, CURLINFO_RESPONSE_CODE,
		    &tp->status);
	else if (http_header_line(p, len, &h) != 0)
		return (len);
	else if (http_name_is(&h, "Content-Type"))
		tp->is_sse = http_value_begins(&h, "text/event-stream");
	else if (http_name_is(&h, "WWW-Authenticate") && tp->status == 401)
		upoauth_challenge_add(&tp->challenge, h.value, h.valuelen);
	return (len);
}

/* The supervisor caught up: take the stream's bytes again. */
static void
sse_stream_resume(void *arg)
{
	struct sse_tp	*tp = arg;

	curl_easy_pause(tp->stream, CURLPAUSE_CONT);
}

static size_t
sse_stream_write_cb(char *p, size_t size, size_t n, void *arg)
{
	struct sse_tp	*tp = arg;
	size_t		 len = size * n;

	if (tp->status / 100 != 2 || !tp->is_sse)
		return (0);
	if (chan_congested()) {
		/* curl keeps these bytes and gives them again on resume. */
		chan_wait(&tp->waiter);
		return (CURL_WRITEFUNC_PAUSE);
	}
	if (sse_parse(&tp->parser, p, len, sse_event_cb, tp) != 0)
		return (0);
	return (len);
}

static size_t
sse_post_header_cb(char *p, size_t size, size_t n, void *arg)
{
	struct sse_post		*post = arg;
	struct http_header	 h;

	if (size * n > 5 && memcmp(p, "HTTP/", 5) == 0)
		curl_easy_getinfo(post->easy, CURLINFO_RESPONSE_CODE,
		    &post->status);
	else if (http_header_line(p, size * n, &h) == 0 &&
	    http_name_is(&h, "WWW-Authenticate") && post->status == 401)
		upoauth_challenge_add(&post->challenge, h.value, h.valuelen);
	return (size * n);
}

static size_t
sse_discard_cb(char *p, size_t size, size_t n, void *arg)
{
	return (size * n);
}

static void
sse_post_free(struct sse_post *post)
{
	TAILQ_REMOVE(&post->tp->posts, post, entry);
	post->tp->nposts--;
	if (post->oauth_waiting)
		upoauth_forget(post);
	curl_easy_cleanup(post->easy);
	curlev_headers_free(post->headers);
	free(post->challenge);
	free(post->body);
	free(post);
}

static void	sse_post(struct sse_tp *, char *body, size_t len, int retried);

/* A POST refused with 401 has a token to go with, or none (why). */
static void
sse_oauth_done(void *arg, const char *error)
{
	struct sse_post	*post = arg;
	struct sse_tp	*tp = post->tp;
	char		*body = post->body;
	size_t		 post_len = post->len;
	int64_t		 id = post->id;
	long		 status = post->status;
	int		 init = post->init;

	post->oauth_waiting = 0;
	post->body = NULL;
	sse_post_free(post);
	if (error != NULL) {
		free(body);
		upoauth_refused(tp->conn, id, init ? "initialize" : NULL,
		    status, error);
		return;
	}
	/* The same message again, with the token. */
	sse_post(tp, body, post_len, 1);
}

/* A transfer ended. */
static void
sse_done_cb(CURL *easy, CURLcode r, void *arg)
{
	struct sse_tp	*tp = arg;
	struct sse_post	*post;
	char		 why[512], url[256];

	if (easy == tp->stream) {
		/* Refused: a token, then the GET again. */
		if (tp->status == 401 && upoauth_connect_refused(tp->conn,
		    "GET", tp->challenge, tp->token_gen) == 0)
			return;
		url_redact(sc->url, url, sizeof url);
		if (tp->status == 401 && upoauth_last_error() != NULL)
			snprintf(why, sizeof why, "GET %s: HTTP 401: %s", url,
			    upoauth_last_error());
		/* An error page is not read (the transfer is aborted). */
		else if (tp->status != 0 && (tp->status / 100 != 2 ||
		    !tp->is_sse))
			snprintf(why, sizeof why, "GET %s: HTTP %ld%s",
			    url, tp->status, tp->is_sse ? "" :
			    ", not an event stream");
		else if (r != CURLE_OK)
			snprintf(why, sizeof why, "the SSE stream %s: %s",
			    url, curl_easy_strerror(r));
		else
			snprintf(why, sizeof why, "the SSE stream closed");
		conn_lost(tp->conn, why);
		return;
	}
	curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&post);
	if (r == CURLE_OK && post->status == 401 && !post->oauth_retried &&
	    upoauth_unauthorized(post->challenge, post->token_gen,
	    sse_oauth_done, post) == 0) {
		post->oauth_waiting = 1;
		return;
	}
	if (post->id != 0 && (r != CURLE_OK || post->status / 100 != 2)) {
		if (r != CURLE_OK)
			snprintf(why, sizeof why, "upstream %s: POST: %s",
			    sc->name, curl_easy_strerror(r));
		else
			snprintf(why, sizeof why, "upstream %s answered HTTP "
			    "%ld", sc->name, post->status);
		/* A 4xx is the upstream's answer; the rest, its failure. */
		if (r == CURLE_OK && post->status / 100 == 4)
			conn_answer_error(tp->conn, post->id, why);
		else
			conn_fail_request(tp->conn, post->id,
			    MCP_CONNECTION_CLOSED, why);
	}
	sse_post_free(post);
}

static int
sse_tp_start(struct conn *c)
{
	struct sse_tp	*tp;

	tp = xcalloc(1, sizeof *tp);
	tp->waiter.resume = sse_stream_resume;
	tp->waiter.arg = tp;
	tp->conn = c;
	TAILQ_INIT(&tp->posts);
	if (worker_headers(&tp->extra) != 0) {
		free(tp);
		return (-1);
	}
	sse_parser_init(&tp->parser, sc->max_message);
	tp->cev = curlev_new(base, sse_done_cb, tp);
	if ((tp->stream = curl_easy_init()) == NULL)
		fatalx("curl_easy_init");
	curlev_setopts(tp->stream, sc->url);
	upoauth_init();
	tp->stream_headers = worker_headers_dup(tp->extra);
	tp->stream_headers = upoauth_header(tp->stream_headers,
	    &tp->token_gen);
	tp->stream_headers = curl_slist_append(tp->stream_headers,
	    "Accept: text/event-stream");
	curl_easy_setopt(tp->stream, CURLOPT_HTTPHEADER, tp->stream_headers);
	curl_easy_setopt(tp->stream, CURLOPT_HEADERFUNCTION,
	    sse_stream_header_cb);
	curl_easy_setopt(tp->stream, CURLOPT_HEADERDATA, tp);
	curl_easy_setopt(tp->stream, CURLOPT_WRITEFUNCTION, sse_stream_write_cb);
	curl_easy_setopt(tp->stream, CURLOPT_WRITEDATA, tp);
	c->tp = tp;
	worker_status("starting", NULL);
	if (curlev_add(tp->cev, tp->stream) != 0)
		return (-1);
	return (0);
}

/* Send one message as a POST. */
static void
sse_tp_send(struct conn *c, struct evbuffer *msg)
{
	size_t	 len = evbuffer_get_length(msg);
	char	*body;

	body = xmalloc(len + 1);
	evbuffer_remove(msg, body, len);
	body[len] = '\0';
	sse_post(c->tp, body, len, 0);
}

/* POST a message (body taken); retried: the second time, with a new token. */
static void
sse_post(struct sse_tp *tp, char *body, size_t len, int retried)
{
	struct conn	*c = tp->conn;
	struct sse_post	*post;
	struct jrpc	 m;
	const char	*why;
	char		 tpl[TP_HDR_MAX], tsl[TS_HDR_MAX];
	int		 traced = 0;

	post = xcalloc(1, sizeof *post);
	post->tp = tp;
	post->body = body;
	post->len = len;
	post->oauth_retried = retried;
	if (jrpc_scan(post->body, len, &m, &why) == 0 &&
	    m.kind == JRPC_REQUEST) {
		jscan_int64(post->body, m.id, &post->id);
		post->init = m.method_id == MCPM_INITIALIZE;
		traced = tp_header_lines(&m, tpl, tsl) == 0;
	}
	TAILQ_INSERT_TAIL(&tp->posts, post, entry);
	tp->nposts++;
	if ((post->easy = curl_easy_init()) == NULL)
		fatalx("curl_easy_init");
	if (tp->nposts > SSE_MAX_POSTS) {
		conn_fail_request(c, post->id, MCP_OVERLOADED,
		    "too many requests in flight");
		sse_post_free(post);
		return;
	}
	curlev_setopts(post->easy, tp->endpoint);
	post->headers = worker_headers_dup(tp->extra);
	post->headers = upoauth_header(post->headers, &post->token_gen);
	post->headers = curl_slist_append(post->headers,
	    "Content-Type: application/json");
	if (traced) {
		post->headers = curl_slist_append(post->headers, tpl);
		if (tsl[0] != '\0')
			post->headers = curl_slist_append(post->headers, tsl);
	}
	curl_easy_setopt(post->easy, CURLOPT_HTTPHEADER, post->headers);
	curl_easy_setopt(post->easy, CURLOPT_POSTFIELDS, post->body);
	curl_easy_setopt(post->easy, CURLOPT_POSTFIELDSIZE_LARGE,
	    (curl_off_t)len);
	curl_easy_setopt(post->easy, CURLOPT_PRIVATE, post);
	curl_easy_setopt(post->easy, CURLOPT_HEADERFUNCTION,
	    sse_post_header_cb);
	curl_easy_setopt(post->easy, CURLOPT_HEADERDATA, post);
	curl_easy_setopt(post->easy, CURLOPT_WRITEFUNCTION, sse_discard_cb);
	if (curlev_add(tp->cev, post->easy) != 0) {
		conn_fail_request(c, post->id, JRPC_INTERNAL_ERROR,
		    "cannot start an HTTP request");
		sse_post_free(post);
	}
}

static void
sse_tp_stop(struct conn *c)
{
	struct sse_tp	*tp = c->tp;
	struct sse_post	*post;

	c->tp = NULL;
	chan_unwait(&tp->waiter);
	while ((post = TAILQ_FIRST(&tp->posts)) != NULL) {
		curlev_remove(tp->cev, post->easy);
		sse_post_free(post);
	}
	curlev_remove(tp->cev, tp->stream);
	curl_easy_cleanup(tp->stream);
	curlev_free(tp->cev);
	curlev_headers_free(tp->stream_headers);
	curlev_headers_free(tp->extra);
	sse_parser_free(&tp->parser);
	free(tp->challenge);
	free(tp->endpoint);
	free(tp);
}

const struct transport_ops transport_sse = {
	.name = "sse",
	.start = sse_tp_start,
	.send = sse_tp_send,
	.stop = sse_tp_stop,
};
