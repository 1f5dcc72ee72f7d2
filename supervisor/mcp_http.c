/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "http_parse.h"
#include "log.h"
#include "secret.h"
#include "sse.h"
#include "supervisor.h"
#include "xmalloc.h"

#define MCP_PATH		"/mcp"
#define LEGACY_SSE_PATH		"/sse"
#define LEGACY_POST_PATH	"/messages"

/* Answer with a JSON-RPC error that has no id, at an HTTP status. */
void
mcp_http_error(struct http_conn *c, int status, int code, const char *msg,
    const char *extra)
{
	struct evbuffer	*buf = evbuffer_new();

	jrpc_add_error(buf, NULL, 0, code, msg, NULL);
	http_reply_buffer(c, status, "application/json", extra, buf);
	evbuffer_free(buf);
}

/* Check the protocol version header, if any. */
static int
mcp_http_check_version(struct http_request *req)
{
	const struct http_header	*h;
	char				 v[32];

	h = http_header(&req->head, "MCP-Protocol-Version");
	if (h == NULL)
		return (0);
	if (h->valuelen >= sizeof v)
		return (-1);
	memcpy(v, h->value, h->valuelen);
	v[h->valuelen] = '\0';
	return (mcp_version_supported(v) ? 0 : -1);
}

/*
 * A session serves only the credential that created it: another one is
 * told the session does not exist, as for an unknown id.
 */
static int
mcp_http_same_credential(struct http_conn *c, struct http_request *req,
    struct session *s)
{
	const char	*client;

	if (s->credential != req->credential) {
		log_warnx("http %s: session %.8s used with another credential "
		    "than the one that created it, refused", http_conn_peer(c),
		    s->id);
		return (0);
	}
	/*
	 * The same principal, maybe with a refreshed token, which may map
	 * to another client now (a group left, a token a reload gave to
	 * another client): the session is its first client's, so it is
	 * not this one's, and its client starts another; no session keeps
	 * rights its principal's token no longer gives.
	 */
	client = mcp_http_client(req);
	if ((client == NULL) != (s->client_name == NULL) ||
	    (client != NULL && strcmp(client, s->client_name) != 0)) {
		log_warnx("http %s: session %.8s is %s%s's, its token now "
		    "names %s%s: refused", http_conn_peer(c), s->id,
		    s->client_name != NULL ? "client " : "an unnamed client",
		    s->client_name != NULL ? s->client_name : "",
		    client != NULL ? "client " : "no client",
		    client != NULL ? client : "");
		return (0);
	}
	session_grant(s, req->grant);
	return (1);
}

/* Find the session named by the request; answers the error itself. */
static struct session *
mcp_http_session(struct http_conn *c, struct http_request *req)
{
	const struct http_header	*h;
	struct session			*s;

	h = http_header(&req->head, "Mcp-Session-Id");
	if (h == NULL) {
		mcp_http_error(c, 400, JRPC_INVALID_REQUEST,
		    "Bad Request: Mcp-Session-Id header is required", NULL);
		return (NULL);
	}
	/* A legacy or WebSocket session is reached only its own way. */
	if ((s = session_find(h->value, h->valuelen)) == NULL ||
	    s->only != NULL || s->modern || s->vep != req->vep ||
	    !mcp_http_same_credential(c, req, s)) {
		mcp_http_error(c, 404, JRPC_INVALID_REQUEST,
		    "Session not found", NULL);
		return (NULL);
	}
	if (mcp_http_check_version(req) != 0) {
		mcp_http_error(c, 400, JRPC_INVALID_REQUEST,
		    "Bad Request: unsupported MCP-Protocol-Version", NULL);
		return (NULL);
	}
	return (s);
}

/* Handle an initialize request: a new session. */
static void
mcp_http_initialize(struct http_conn *c, struct http_request *req,
    const struct jrpc *m)
{
	struct session	*s;
	json_t		*result;
	char		 err[256], *text, extra[128];
	int		 code;
	struct evbuffer	*buf;
	int64_t		 t0 = now_us();

	if ((s = session_new(http_conn_peer(c), OBS_T_HTTP)) == NULL) {
		obs_initialize(NULL, http_conn_peer(c), OBS_T_HTTP, m, t0,
		    MCP_OVERLOADED);
		http_conn_nolog(c);
		mcp_http_error(c, 503, MCP_OVERLOADED, session_refusal(),
		    "Retry-After: 5\r\n");
		return;
	}
	session_identity(s, req->credential, mcp_http_client(req));
	session_grant(s, req->grant);
	vendpoint_bind(s, req->vep);
	if ((result = route_initialize(s, m, &code, err, sizeof err)) == NULL) {
		session_free(s, "bad initialize");
		obs_initialize(NULL, http_conn_peer(c), OBS_T_HTTP, m, t0,
		    code);
		http_conn_nolog(c);
		buf = evbuffer_new();
		jrpc_add_error(buf, m->p + m->id.off, m->id.len, code, err,
		    NULL);
		http_reply_buffer(c, 400, "application/json", NULL, buf);
		evbuffer_free(buf);
		return;
	}
	log_info("session %.8s: new, %s %s, protocol %s", s->id,
	    json_string_value(json_object_get(s->client_info, "name")) ?
	    json_string_value(json_object_get(s->client_info, "name")) : "?",
	    json_string_value(json_object_get(s->client_info, "version")) ?
	    json_string_value(json_object_get(s->client_info, "version")) :
	    "?", s->version);
	text = json_dumps(result, JSON_COMPACT);
	json_decref(result);
	buf = evbuffer_new();
	jrpc_add_result(buf, m->p + m->id.off, m->id.len, text, strlen(text));
	free(text);
	snprintf(extra, sizeof extra, "Mcp-Session-Id: %s\r\n", s->sid);
	http_reply_buffer(c, 200, "application/json", extra, buf);
	evbuffer_free(buf);
	/* The connection may be on its next request: the session's peer. */
	obs_initialize(s, s->peer, OBS_T_HTTP, m, t0, 0);
}

/* Check that a body is declared as JSON. */
static int
mcp_http_check_json(struct http_conn *c, struct http_request *req)
{
	const struct http_header	*h;

	h = http_header(&req->head, "Content-Type");
	if (h == NULL || !http_value_begins(h, "application/json") ||
	    (h->valuelen > 16 && h->value[16] != ';' &&
	    h->value[16] != ' ')) {
		mcp_http_error(c, 415, JRPC_INVALID_REQUEST,
		    "Unsupported Media Type: Content-Type must be "
		    "application/json", NULL);
		return (-1);
	}
	return (0);
}

/* Scan a POSTed body; answers the error itself. */
static int
mcp_http_scan(struct http_conn *c, struct http_request *req, struct jrpc *m)
{
	struct evbuffer	*buf;
	const char	*why, *p;
	size_t		 n;
	int		 r;

	n = evbuffer_get_length(req->body);
	p = (const char *)evbuffer_pullup(req->body, -1);
	if (p == NULL)
		p = "";
	if ((r = jrpc_scan(p, n, m, &why)) == 0)
		return (0);
	log_debug("http: bad message: %s", why);
	buf = evbuffer_new();
	jrpc_add_error(buf, m->id.len != 0 ? p + m->id.off : NULL, m->id.len,
	    r, r == JRPC_PARSE_ERROR ? "Parse error" : why, NULL);
	http_reply_buffer(c, 400, "application/json", NULL, buf);
	evbuffer_free(buf);
	return (-1);
}

/*
 * Refuse a request for an upstream whose scopes the token lacks with HTTP
 * 403 and the challenge (RFC 6750, section 3.1), so that the client can
 * ask for a token with them; the body is the JSON-RPC error that the
 * other transports get.
 */
void
mcp_http_scope_refused(struct http_conn *c, struct http_request *req,
    struct session *s, const struct jrpc *m, json_t *refusal)
{
	struct evbuffer	*buf;
	char		 challenge[2048], *data;
	const char	*scope;

	scope = json_string_value(json_object_get(refusal, "scope"));
	log_info("session %.8s: %s refused: subject %s lacks scope %s",
	    s->id, m->method_name, s->grant->subject, scope);
	metrics_refused("token");
	oauth_insufficient();
	access_log_http(http_conn_peer(c), req->method, req->path, 403,
	    "insufficient_scope");
	http_conn_nolog(c);
	snprintf(challenge, sizeof challenge, "WWW-Authenticate: Bearer "
	    "resource_metadata=\"%s\", scope=\"%s\", "
	    "error=\"insufficient_scope\", error_description=\"the token "
	    "lacks a scope this upstream needs\"\r\n",
	    json_string_value(json_object_get(refusal, "resource_metadata")),
	    scope);
	data = json_dumps(refusal, JSON_COMPACT);
	buf = evbuffer_new();
	jrpc_add_error(buf, m->p + m->id.off, m->id.len,
	    MCP_INSUFFICIENT_SCOPE, "Forbidden: the token lacks a scope this "
	    "upstream needs", data);
	http_reply_buffer(c, 403, "application/json", challenge, buf);
	evbuffer_free(buf);
	free(data);
}

/* Handle a POST: one JSON-RPC message. */
static void
mcp_http_post(struct http_conn *c, struct http_request *req)
{
	struct session			*s;
	struct stream			*st;
	struct jrpc			 m;
	json_t				*refusal;

	if (mcp_http_check_json(c, req) != 0)
		return;
	if (!http_head_accepts(&req->head, "application/json") ||
	    !http_head_accepts(&req->head, "text/event-stream")) {
		mcp_http_error(c, 406, JRPC_INVALID_REQUEST,
		    "Not Acceptable: Accept must list application/json and "
		    "text/event-stream", NULL);
		return;
	}
	if (mcp_http_scan(c, req, &m) != 0)
		return;
	/* One listener serves both eras, told apart per POST. */
	if (modern_claims(req, &m)) {
		modern_post(c, req, &m);
		return;
	}
	if (m.kind == JRPC_REQUEST && m.method_id == MCPM_INITIALIZE) {
		mcp_http_initialize(c, req, &m);
		return;
	}
	if ((s = mcp_http_session(c, req)) == NULL)
		return;
	if (m.kind != JRPC_REQUEST) {
		route_notification(s, &m);
		http_reply(c, 202, NULL, NULL, NULL, 0);
		return;
	}
	/* An upstream's scopes the token lacks: 403, while it can be. */
	if ((refusal = oauth_post_refusal(s, &m)) != NULL) {
		mcp_http_scope_refused(c, req, s, &m, refusal);
		json_decref(refusal);
		return;
	}
	/*
	 * A request whose handling at an upstream may bring requests to the
	 * client (MCPM_F_STREAMS) is answered with an event stream that
	 * carries them and ends with the response; every other request with
	 * one JSON body.
	 */
	st = stream_new(s, mcp_method_is(m.method_id, MCPM_F_STREAMS) ?
	    STREAM_POST : STREAM_JSON, c);
	trace_http(s, &req->head);
	route_request(s, st, &m);
}

/* Read 1 to 10 decimal digits from p[*i..len) as a 32-bit number. */
static int
mcp_http_u32(const char *p, size_t len, size_t *i, uint32_t *v)
{
	uint64_t	n = 0;
	size_t		start = *i;

	while (*i < len && p[*i] >= '0' && p[*i] <= '9' && *i - start < 10)
		n = n * 10 + (uint64_t)(p[(*i)++] - '0');
	if (*i == start || n > UINT32_MAX)
		return (-1);
	*v = (uint32_t)n;
	return (0);
}

/* Parse a Last-Event-ID of ours: "<stream>-<seq>", digits only. */
static int
mcp_http_event_id(const struct http_header *h, uint32_t *no, uint32_t *seq)
{
	size_t	i = 0;

	if (mcp_http_u32(h->value, h->valuelen, &i, no) != 0 ||
	    i >= h->valuelen || h->value[i++] != '-' ||
	    mcp_http_u32(h->value, h->valuelen, &i, seq) != 0 ||
	    i != h->valuelen)
		return (-1);
	return (0);
}

/* Find a query parameter's value: exactly name=value between '&'s. */
static const char *
mcp_http_query(const char *query, const char *name, size_t *len)
{
	size_t		 nl = strlen(name);
	const char	*p = query, *end;

	while (*p != '\0') {
		end = p + strcspn(p, "&");
		if ((size_t)(end - p) > nl && strncmp(p, name, nl) == 0 &&
		    p[nl] == '=') {
			*len = (size_t)(end - p) - nl - 1;
			return (p + nl + 1);
		}
		p = *end == '&' ? end + 1 : end;
	}
	return (NULL);
}

/* Handle a GET: the standalone stream, or the resumption of a stream. */
static void
mcp_http_get(struct http_conn *c, struct http_request *req)
{
	const struct http_header	*h;
	struct session			*s;
	struct stream			*st;
	uint32_t			 no, seq;

	if (modern_refuse_method(c, req))
		return;
	if (!http_head_accepts(&req->head, "text/event-stream")) {
		mcp_http_error(c, 406, JRPC_INVALID_REQUEST,
		    "Not Acceptable: Accept must list text/event-stream", NULL);
		return;
	}
	if ((s = mcp_http_session(c, req)) == NULL)
		return;
	session_touch(s);
	if ((h = http_header(&req->head, "Last-Event-ID")) == NULL) {
		st = stream_find(s, 0);
		if (st != NULL && st->conn != NULL) {
			mcp_http_error(c, 409, JRPC_INVALID_REQUEST,
			    "Conflict: the session already has a standalone "
			    "stream", NULL);
			return;
		}
		stream_resume(session_get_stream(s), c, 0, 0);
		return;
	}
	if (mcp_http_event_id(h, &no, &seq) != 0 || no > s->next_stream) {
		mcp_http_error(c, 400, JRPC_INVALID_REQUEST,
		    "Bad Request: Last-Event-ID is not one of this session's "
		    "event ids", NULL);
		return;
	}
	st = no == 0 ? session_get_stream(s) : stream_find(s, no);
	if (st != NULL && seq > st->seq) {
		mcp_http_error(c, 400, JRPC_INVALID_REQUEST,
		    "Bad Request: Last-Event-ID is past its stream's last "
		    "event", NULL);
		return;
	}
	if (no == 0) {
		stream_resume(st, c, seq, 1);
		return;
	}
	if (st == NULL || (st->done && seq >= st->seq)) {
		/* Finished and delivered: nothing more will come. */
		if (st != NULL)
			stream_free(st);
		http_reply(c, 204, NULL, NULL, NULL, 0);
		return;
	}
	stream_resume(st, c, seq, 1);
}

/* Legacy HTTP+SSE (2024-11-05): GET /sse opens a session and its stream. */
static void
mcp_http_legacy_sse(struct http_conn *c, struct http_request *req)
{
	struct session	*s;
	struct evbuffer	*buf;
	char		 data[512];

	if ((s = session_new(http_conn_peer(c), OBS_T_SSE)) == NULL) {
		mcp_http_error(c, 503, MCP_OVERLOADED, session_refusal(),
		    "Retry-After: 5\r\n");
		return;
	}
	session_identity(s, req->credential, mcp_http_client(req));
	session_grant(s, req->grant);
	vendpoint_bind(s, req->vep);
	snprintf(s->version, sizeof s->version, "2024-11-05");
	s->legacy = 1;
	stream_new(s, STREAM_LEGACY, c);
	snprintf(data, sizeof data, "%s?sessionId=%s",
	    vendpoint_messages_path(req->vep), s->sid);
	buf = evbuffer_new();
	sse_add_event(buf, NULL, "endpoint", data, strlen(data));
	http_stream_write(c, buf);
	evbuffer_free(buf);
	log_info("session %.8s: new legacy SSE session", s->id);
}

/* Legacy HTTP+SSE: POST /messages?sessionId=... carries one message. */
static void
mcp_http_legacy_post(struct http_conn *c, struct http_request *req)
{
	struct session	*s = NULL;
	struct stream	*st;
	struct jrpc	 m;
	const char	*id;
	size_t		 idlen;

	if ((id = mcp_http_query(req->query, "sessionId", &idlen)) != NULL)
		s = session_find(id, idlen);
	if (s != NULL && (s->vep != req->vep ||
	    !mcp_http_same_credential(c, req, s)))
		s = NULL;
	if (s == NULL || (st = s->only) == NULL || st->kind != STREAM_LEGACY) {
		mcp_http_error(c, 404, JRPC_INVALID_REQUEST,
		    "Session not found", NULL);
		return;
	}
	if (mcp_http_check_json(c, req) != 0 || mcp_http_scan(c, req, &m) != 0)
		return;
	/* The message lives in the request's body: use it before replying. */
	trace_http(s, &req->head);
	route_message(s, st, &m);
	http_reply(c, 202, "text/plain; charset=utf-8", NULL, "Accepted", 8);
}

/* Handle a DELETE: end the session. */
static void
mcp_http_delete(struct http_conn *c, struct http_request *req)
{
	struct session	*s;

	if (modern_refuse_method(c, req))
		return;
	if ((s = mcp_http_session(c, req)) == NULL)
		return;
	session_free(s, "deleted by client");
	http_reply(c, 200, NULL, NULL, NULL, 0);
}

/* Where an MCP request goes: by its path, and which endpoint's. */
enum mcp_where {
	MW_NONE,
	MW_STREAMABLE,
	MW_SSE,
	MW_MESSAGES,
	MW_WS
};

/* Decide where a request goes; sets req->vep (NULL for /mcp's). */
static enum mcp_where
mcp_http_where(struct http_request *req)
{
	enum vendpoint_transport	t;

	req->vep = NULL;
	if (strcmp(req->path, MCP_PATH) == 0)
		return (MW_STREAMABLE);
	if (strcmp(req->path, LEGACY_SSE_PATH) == 0)
		return (MW_SSE);
	if (strcmp(req->path, LEGACY_POST_PATH) == 0)
		return (MW_MESSAGES);
	if (mcp_ws_path(req))
		return (MW_WS);
	if ((req->vep = vendpoint_route(req->path, &t)) == NULL)
		return (MW_NONE);
	switch (t) {
	case VEP_SSE:
		return (MW_SSE);
	case VEP_MESSAGES:
		return (MW_MESSAGES);
	case VEP_WS:
		return (MW_WS);
	default:
		return (MW_STREAMABLE);
	}
}

/* Is a header's value a list of field names (tokens, commas, spaces)? */
static int
mcp_http_names(const char *p, size_t len)
{
	static const char	tchar[] = "!#$%&'*+-.^_`|~";
	size_t			i;

	for (i = 0; i < len; i++) {
		if (!isalnum((unsigned char)p[i]) && p[i] != ',' &&
		    p[i] != ' ' && memchr(tchar, p[i], sizeof tchar - 1) == NULL)
			return (0);
	}
	return (1);
}

/*
 * A browser asks (CORS preflight) whether its page may send a request
 * with a method and headers; the Origin was allowed.  Any header it names
 * may come: what the request carries is checked when it does.
 */
static void
mcp_http_preflight(struct http_conn *c, struct http_request *req)
{
	const struct http_header	*h;
	char				 extra[1300];
	int				 n;

	n = snprintf(extra, sizeof extra, "Access-Control-Allow-Methods: GET, "
	    "POST, DELETE\r\nAccess-Control-Max-Age: 600\r\n"
	    "Vary: Access-Control-Request-Method, "
	    "Access-Control-Request-Headers\r\n");
	h = http_header(&req->head, "Access-Control-Request-Headers");
	if (h != NULL && h->valuelen > 0 && h->valuelen <= 1024 &&
	    mcp_http_names(h->value, h->valuelen))
		snprintf(extra + n, sizeof extra - (size_t)n,
		    "Access-Control-Allow-Headers: %.*s\r\n",
		    (int)h->valuelen, h->value);
	http_reply(c, 200, NULL, extra, NULL, 0);
}

/*
 * Check a request's head before its body is read: the path, Host and
 * Origin, and the bearer token (recorded in req->credential).  -1 when
 * refused (answered); a browser's preflight is answered here too.
 */
static int
mcp_http_check(struct http_conn *c, struct http_request *req)
{
	static const char	 not_found[] = "not found: the MCP endpoint is "
	    "/mcp\n";

	/* A preflight has no credentials: only its Origin is checked. */
	if (conf->allowed_origins != NULL &&
	    strcmp(req->method, "OPTIONS") == 0 &&
	    http_header(&req->head, "Origin") != NULL &&
	    http_header(&req->head, "Access-Control-Request-Method") != NULL &&
	    (oauth_metadata_path(req) || mcp_http_where(req) != MW_NONE)) {
		if (mcp_http_check_access(c, req, listen_loopback, 0) == 0)
			mcp_http_preflight(c, req);
		return (-1);
	}
	if (oauth_metadata_path(req))
		return (mcp_http_check_access(c, req, listen_loopback, 0));
	if (mcp_http_where(req) == MW_NONE) {
		http_reply(c, 404, "text/plain; charset=utf-8", NULL,
		    not_found, strlen(not_found));
		return (-1);
	}
	return (mcp_http_check_access(c, req, listen_loopback, AUTH_MCP));
}

/* A whole request that passed mcp_http_check. */
static void
mcp_http_handle(struct http_conn *c, struct http_request *req)
{
	enum mcp_where	 w;
	const char	*client;

	if (oauth_metadata_path(req)) {
		oauth_metadata_serve(c, req);
		return;
	}
	/* A reload took its static token away while its body came. */
	if (req->grant == NULL && req->credential != 0 &&
	    auth_client(req->credential, &client) != 0) {
		log_warnx("http %s: %s %s refused: its token was removed by a "
		    "reload", http_conn_peer(c), req->method, req->path);
		mcp_http_error(c, 401, JRPC_INVALID_REQUEST, "Unauthorized: "
		    "the token is no longer accepted", "WWW-Authenticate: "
		    "Bearer realm=\"mcp-supervisor\"\r\n");
		return;
	}
	w = mcp_http_where(req);
	if (w == MW_WS)
		mcp_ws_upgrade(c, req);
	else if (w == MW_SSE && strcmp(req->method, "GET") == 0)
		mcp_http_legacy_sse(c, req);
	else if (w == MW_MESSAGES && strcmp(req->method, "POST") == 0)
		mcp_http_legacy_post(c, req);
	else if (w == MW_SSE || w == MW_MESSAGES)
		mcp_http_error(c, 405, JRPC_INVALID_REQUEST,
		    "Method Not Allowed", w == MW_SSE ? "Allow: GET\r\n" :
		    "Allow: POST\r\n");
	else if (strcmp(req->method, "POST") == 0)
		mcp_http_post(c, req);
	else if (strcmp(req->method, "GET") == 0)
		mcp_http_get(c, req);
	else if (strcmp(req->method, "DELETE") == 0)
		mcp_http_delete(c, req);
	else
		mcp_http_error(c, 405, JRPC_INVALID_REQUEST,
		    "Method Not Allowed", "Allow: GET, POST, DELETE\r\n");
}

const struct http_service mcp_http_service = {
	mcp_http_check,
	mcp_http_handle
};
