/* SPDX-License-Identifier: ISC */
/*
 * 2026-07-28 ("modern") clients on /mcp, beside the 2025 eras.  A POST is
 * modern when its body claims the per-request envelope (params._meta
 * names io.modelcontextprotocol/protocolVersion) or its
 * MCP-Protocol-Version header names a modern revision; everything else is
 * served as before.  A modern request carries everything it needs: it is
 * checked (common/meta.c), answered by the gateway (server/discover,
 * lists, subscriptions/listen) or routed like any call, and its answer
 * says resultType.  There is no session: the principal's requests are
 * counted in an internal one (session_modern).
 */
#include "config.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>

#include "log.h"
#include "meta.h"
#include "supervisor.h"
#include "xmalloc.h"

/* What the gateway answers UnsupportedProtocolVersion with. */
#define SUPPORTED_JSON	"[\"" MCP_VERSION_MODERN "\",\"2025-11-25\"," \
			"\"2025-06-18\",\"2025-03-26\"]"

int
modern_claims(struct http_request *req, const struct jrpc *m)
{
	const struct http_header	*h;

	if (meta_claim(m))
		return (1);
	h = http_header(&req->head, "MCP-Protocol-Version");
	return (h != NULL && meta_version_modern(h->value, h->valuelen));
}

/* Is an error one the specification answers with HTTP 400? */
static int
modern_status_of(int code)
{
	return (code == MCP_HEADER_MISMATCH || code == MCP_MISSING_CAPABILITY ||
	    code == MCP_UNSUPPORTED_VERSION ? 400 : 200);
}

void
modern_error(struct stream *st, const char *id, size_t idlen, int code,
    const char *data, const char *fmt, ...)
{
	struct evbuffer	*buf;
	va_list		 ap;
	char		 msg[512];

	if (st == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	/* An event stream that has begun has already said 200. */
	if (st->kind == STREAM_JSON || (st->kind == STREAM_MODERN &&
	    !st->opened))
		st->status = modern_status_of(code);
	buf = evbuffer_new();
	jrpc_add_error(buf, id, idlen, code, msg, data);
	stream_send(st, buf, 1);
	evbuffer_free(buf);
}

/* Refuse a request before it has a stream, at an HTTP status. */
static void
modern_refuse(struct http_conn *c, int status, const struct jrpc *m, int code,
    const char *data, const char *msg)
{
	struct evbuffer	*buf = evbuffer_new();

	log_info("http %s: 2026-07-28 %s refused (%d): %s", http_conn_peer(c),
	    m->method_name[0] != '\0' ? m->method_name : "message", code, msg);
	jrpc_add_error(buf, m->id.len != 0 ? m->p + m->id.off : NULL,
	    m->id.len, code, msg, data);
	http_reply_buffer(c, status, "application/json", NULL, buf);
	evbuffer_free(buf);
}

/* Copy a header's value span into a meta_headers slot. */
static void
modern_header(struct http_request *req, const char *name, const char **v,
    size_t *len)
{
	const struct http_header	*h = http_header(&req->head, name);

	*v = h != NULL ? h->value : NULL;
	*len = h != NULL ? h->valuelen : 0;
}

/* Keep a request's Mcp-Param-* headers for its tool's check. */
static void
modern_keep_params(struct http_request *req, struct stream *st)
{
	const struct http_header	*h;
	char				 name[80];
	size_t				 i, k;

	for (i = 0; i < req->head.nheaders; i++) {
		h = &req->head.headers[i];
		if (h->namelen <= 10 || h->namelen - 10 >= sizeof name ||
		    strncasecmp(h->name, "Mcp-Param-", 10) != 0)
			continue;
		for (k = 10; k < h->namelen; k++)
			name[k - 10] = (char)tolower((unsigned char)h->name[k]);
		name[h->namelen - 10] = '\0';
		if (st->params == NULL)
			st->params = json_object();
		/* Given twice: neither can be trusted to match. */
		if (json_object_get(st->params, name) != NULL)
			json_object_set_new(st->params, name, json_null());
		else
			json_object_set_new(st->params, name,
			    json_stringn_nocheck(h->value, h->valuelen));
	}
}

/* Context of modern_check_params: the first problem found. */
struct modern_params {
	json_t	*given;
	char	 why[256];
};

static void
modern_param_one(void *arg, const char *name, const char *value, size_t len)
{
	static char		 dec[META_NAME_MAX];
	struct modern_params	*mp = arg;
	json_t			*h;
	char			 lower[80];
	ssize_t			 n;
	size_t			 i;

	if (mp->why[0] != '\0')
		return;
	for (i = 0; name[i] != '\0' && i + 1 < sizeof lower; i++)
		lower[i] = (char)tolower((unsigned char)name[i]);
	lower[i] = '\0';
	h = mp->given != NULL ? json_object_get(mp->given, lower) : NULL;
	if (h == NULL || !json_is_string(h)) {
		snprintf(mp->why, sizeof mp->why, "the tool mirrors argument "
		    "%s in the Mcp-Param-%s header, which is %s", name, name,
		    h == NULL ? "absent" : "given more than once");
		return;
	}
	if ((n = meta_header_decode(json_string_value(h), json_string_length(h),
	    dec, sizeof dec)) < 0) {
		snprintf(mp->why, sizeof mp->why, "the Mcp-Param-%s header "
		    "carries an invalid Base64 value", name);
		return;
	}
	if (!meta_param_equal(dec, (size_t)n, value, len))
		snprintf(mp->why, sizeof mp->why, "the Mcp-Param-%s header does "
		    "not match the argument", name);
}

int
modern_check_params(struct req *r, const struct catalog_entry *e)
{
	struct stream		*st = r->stream;
	const struct jrpc	*m = r->m;
	struct modern_params	 mp;
	json_t			*tools, *tool, *v;
	size_t			 i;

	if (e->up == NULL || m->method_id != MCPM_TOOLS_CALL ||
	    !json_is_array(tools = json_object_get(e->up->catalog, "tools")))
		return (0);
	tool = json_array_get(tools, e->index);
	if (!json_is_string(v = json_object_get(tool, "name")) ||
	    json_string_length(v) != e->namelen ||
	    memcmp(json_string_value(v), e->name, e->namelen) != 0) {
		tool = NULL;
		json_array_foreach(tools, i, v) {
			if (json_is_string(json_object_get(v, "name")) &&
			    json_string_length(json_object_get(v, "name")) ==
			    e->namelen && memcmp(json_string_value(
			    json_object_get(v, "name")), e->name,
			    e->namelen) == 0) {
				tool = v;
				break;
			}
		}
	}
	if (tool == NULL)
		return (0);
	memset(&mp, 0, sizeof mp);
	mp.given = st->params;
	meta_param_each(json_object_get(tool, "inputSchema"), m,
	    modern_param_one, &mp);
	if (mp.why[0] == '\0')
		return (0);
	log_info("session %.8s: tools/call refused (-32020): %s",
	    st->session->id, mp.why);
	req_answered(r, OBS_REFUSED, MCP_HEADER_MISMATCH);
	modern_error(st, m->p + m->id.off, m->id.len, MCP_HEADER_MISMATCH, NULL,
	    "Header mismatch: %s", mp.why);
	return (-1);
}

/* server/discover: the versions, capabilities and identity of the gateway. */
void
modern_discover(struct req *r)
{
	struct evbuffer	*buf = evbuffer_new();

	evbuffer_add_printf(buf, "{\"supportedVersions\":%s,\"capabilities\":"
	    "{\"tools\":{\"listChanged\":true},\"resources\":{\"subscribe\":"
	    "true,\"listChanged\":true},\"prompts\":{\"listChanged\":true},"
	    "\"completions\":{},\"logging\":{}},\"_meta\":{\"" META_SERVERINFO
	    "\":{\"name\":\"mcp-supervisor\",\"title\":\"MCP Supervisor\","
	    "\"version\":\"%s\"}}}", SUPPORTED_JSON, PACKAGE_VERSION);
	modern_result(r, (const char *)evbuffer_pullup(buf, -1),
	    evbuffer_get_length(buf), 1);
	evbuffer_free(buf);
}

/* Do a request's answer and what comes before it need an event stream? */
static int
modern_streams(const struct jrpc *m, const struct meta_envelope *env)
{
	if (env->progress.len == 0 && env->level < 0)
		return (0);	/* nothing may come before the answer */
	return (mcp_method_is(m->method_id, MCPM_F_PROGRESS));
}

void
modern_post(struct http_conn *c, struct http_request *req,
    const struct jrpc *m)
{
	struct meta_headers	 h;
	struct meta_envelope	 env;
	struct session		*s;
	struct stream		*st;
	struct evbuffer		*data;
	enum stream_kind	 kind;
	json_t			*refusal;
	char			 why[512];
	int			 code, status;

	if (m->kind == JRPC_RESULT || m->kind == JRPC_ERROR) {
		modern_refuse(c, 400, m, JRPC_INVALID_REQUEST, NULL, "Bad "
		    "Request: a 2026-07-28 client sends no responses");
		return;
	}
	if (m->kind == JRPC_NOTIFICATION) {
		/*
		 * Over HTTP a 2026-07-28 client cancels by closing its
		 * request's stream; by id, a cancellation could not be told
		 * from another client's of the same principal.
		 */
		log_debug("http %s: 2026-07-28 notification %s ignored",
		    http_conn_peer(c), m->method_name);
		http_reply(c, 202, NULL, NULL, NULL, 0);
		return;
	}
	memset(&h, 0, sizeof h);
	modern_header(req, "MCP-Protocol-Version", &h.version, &h.versionlen);
	modern_header(req, "Mcp-Method", &h.method, &h.methodlen);
	modern_header(req, "Mcp-Name", &h.name, &h.namelen);
	if ((code = meta_check(&h, m, &env, &status, why, sizeof why)) != 0) {
		data = NULL;
		if (code == MCP_UNSUPPORTED_VERSION) {
			data = evbuffer_new();
			evbuffer_add_printf(data, "{\"supported\":%s,"
			    "\"requested\":", SUPPORTED_JSON);
			evbuffer_add(data, m->p + env.version.off,
			    env.version.len);
			evbuffer_add(data, "}", 2);	/* and a NUL */
		}
		modern_refuse(c, status, m, code, data != NULL ?
		    (const char *)evbuffer_pullup(data, -1) : NULL, why);
		if (data != NULL)
			evbuffer_free(data);
		return;
	}
	if ((s = session_modern(req->credential, mcp_http_client(req), req->vep,
	    http_conn_peer(c))) == NULL) {
		modern_refuse(c, 503, m, MCP_OVERLOADED, NULL,
		    session_refusal());
		return;
	}
	session_grant(s, req->grant);
	/* An upstream's scopes the token lacks: 403, so it can step up. */
	if ((refusal = oauth_post_refusal(s, m)) != NULL) {
		mcp_http_scope_refused(c, req, s, m, refusal);
		json_decref(refusal);
		return;
	}
	session_touch(s);
	if (m->method_id == MCPM_LISTEN)
		kind = STREAM_LISTEN;
	else if (modern_streams(m, &env))
		kind = STREAM_MODERN;
	else
		kind = STREAM_JSON;
	st = stream_new(s, kind, c);
	st->modern = 1;
	st->level = env.level;
	st->caps = xmalloc(env.caps.len + 1);
	memcpy(st->caps, m->p + env.caps.off, env.caps.len);
	st->caps[env.caps.len] = '\0';
	modern_keep_params(req, st);
	trace_http(s, &req->head);
	route_request(s, st, m);
}

int
modern_refuse_method(struct http_conn *c, struct http_request *req)
{
	const struct http_header	*h;
	struct evbuffer			*buf;

	if (http_header(&req->head, "Mcp-Session-Id") != NULL ||
	    (h = http_header(&req->head, "MCP-Protocol-Version")) == NULL ||
	    !meta_version_modern(h->value, h->valuelen))
		return (0);
	/* 2026-07-28 has no sessions to stream from or end. */
	buf = evbuffer_new();
	jrpc_add_error(buf, NULL, 0, MCP_CONNECTION_CLOSED, "Method not "
	    "allowed: 2026-07-28 requests are POSTs", NULL);
	http_reply_buffer(c, 405, "application/json", "Allow: POST\r\n", buf);
	evbuffer_free(buf);
	return (1);
}

/*
 * May a list differ from one principal to another?  With an ACL, or with
 * a per-session upstream, whose instance lists what it offers that
 * principal's capabilities.
 */
static int
modern_private(const struct session *s)
{
	size_t	i;

	if (acl_filtered(s))
		return (1);
	for (i = 0; i < nupstreams; i++)
		if (upstreams[i]->sc->isolation == ISOLATION_PER_SESSION)
			return (1);
	return (0);
}

/*
 * Reply with a result in the request's era: a 2026-07-28 result says
 * "resultType": "complete", and a cacheable one (lists, discover) how
 * long it is fresh (cache_ttl) and whether shared caches may keep it
 * (private when a list may differ between principals: modern_private).
 */
/*
 * Write a result object with "resultType": "complete" and extra members
 * (text that begins with a comma, or "") put first; -1 (nothing written)
 * if it is not an object.
 */
static int
modern_complete(struct evbuffer *out, const char *result, size_t len,
    const char *extra)
{
	size_t	i = 0;

	while (i < len && result[i] != '{')
		i++;
	if (i == len)
		return (-1);
	evbuffer_add_printf(out, "{\"resultType\":\"complete\"%s", extra);
	for (i++; i < len && (result[i] == ' ' || result[i] == '\n' ||
	    result[i] == '\t' || result[i] == '\r'); i++)
		;
	if (i < len && result[i] != '}')
		evbuffer_add(out, ",", 1);
	evbuffer_add(out, result + i, len - i);
	return (0);
}

void
modern_upstream_error(struct stream *st, struct evbuffer *payload)
{
	struct jrpc	 m;
	struct jspan	 code;
	struct evbuffer	*out;
	const char	*why;
	int64_t		 v;

	if (jrpc_scan((const char *)evbuffer_pullup(payload, -1),
	    evbuffer_get_length(payload), &m, &why) != 0 ||
	    m.kind != JRPC_ERROR ||
	    jscan_member(m.p, m.error, "code", &code) != 0 ||
	    jscan_int64(m.p, code, &v) != 0)
		return;
	if (v == MCP_RESOURCE_NOT_FOUND) {
		out = jscan_replace(m.p, m.n, code, "-32602", 6);
		evbuffer_drain(payload, evbuffer_get_length(payload));
		evbuffer_add_buffer(payload, out);
		evbuffer_free(out);
		return;
	}
	if (st->kind == STREAM_JSON || (st->kind == STREAM_MODERN &&
	    !st->opened))
		st->status = modern_status_of((int)v);
}

void
modern_result(struct req *r, const char *result, size_t len, int cache)
{
	struct stream	*st = r->stream;
	struct evbuffer	*buf;
	char		 extra[96] = "";

	if (st == NULL || !st->modern) {
		route_result(r, result, len);
		return;
	}
	if (cache)
		snprintf(extra, sizeof extra, ",\"ttlMs\":%llu,\"cacheScope\":"
		    "\"%s\"", (unsigned long long)conf->cache_ttl * 1000,
		    r->m->method_id != MCPM_DISCOVER &&
		    modern_private(st->session) ? "private" : "public");
	buf = evbuffer_new();
	if (modern_complete(buf, result, len, extra) != 0)
		route_result(r, result, len);
	else
		route_result(r, (const char *)evbuffer_pullup(buf, -1),
		    evbuffer_get_length(buf));
	evbuffer_free(buf);
}

void
modern_answer(struct stream *st, const char *id, size_t idlen,
    const char *result, size_t len)
{
	struct evbuffer	*buf, *text;

	text = evbuffer_new();
	if (modern_complete(text, result, len, "") != 0)
		evbuffer_add(text, result, len);
	buf = evbuffer_new();
	jrpc_add_result(buf, id, idlen, (const char *)evbuffer_pullup(text,
	    -1), evbuffer_get_length(text));
	stream_send(st, buf, 1);
	evbuffer_free(buf);
	evbuffer_free(text);
}

/*
 * The stream of a 2026-07-28 request went away: its client closed it,
 * which is that era's cancellation.  What would have answered on it is
 * cancelled upstream and forgotten.
 */
void
modern_stream_gone(struct stream *st)
{
	static const char	 reason[] = "{\"reason\":\"the client closed "
	    "the request's stream\"}";
	struct pending		*p, *next;

	for (p = TAILQ_FIRST(&st->session->pending); p != NULL; p = next) {
		next = TAILQ_NEXT(p, session_entry);
		if (p->stream != st)
			continue;
		log_debug("session %.8s: %s cancelled: its client closed the "
		    "stream", st->session->id, mcp_method_name(p->method));
		route_pending_cancel(p, reason);
		p->stream = NULL;
		route_pending_free(p);
	}
}
