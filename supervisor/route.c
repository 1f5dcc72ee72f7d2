/* SPDX-License-Identifier: ISC */
/*
 * Client messages to upstreams: requests routed by method (a tool or
 * prompt by name, a resource by URI, lists from the session's view),
 * the client's notifications and cancellations, initialize, and the
 * replies route*.c share.  Pending requests are in route_pending.c, the
 * workers' answers in route_answer.c.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "log.h"
#include "naming.h"
#include "redact.h"
#include "supervisor.h"
#include "xmalloc.h"

static void	route_dispatch(struct req *);

/* Write an error answer (data: JSON text, or NULL); none without a
 * stream (its client went away). */
void
route_error_send(struct stream *st, const char *id, size_t idlen, int code,
    const char *data, const char *msg)
{
	struct evbuffer	*buf;

	if (st == NULL)
		return;
	buf = evbuffer_new();
	jrpc_add_error(buf, id, idlen, code, msg, data);
	stream_send(st, buf, 1);
	evbuffer_free(buf);
}

/* Reply to a request with an error. */
void
route_error(struct stream *st, const char *id, size_t idlen, int code,
    const char *fmt, ...)
{
	va_list	ap;
	char	msg[512];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	route_error_send(st, id, idlen, code, NULL, msg);
}

/* Answer the request being routed with an error, with data (JSON text)
 * or NULL: the gateway refused it. */
static void
route_reject_v(struct req *r, int code, const char *data, const char *fmt,
    va_list ap)
{
	char	msg[512];

	req_answered(r, code == MCP_REQUEST_TIMEOUT ? OBS_TIMEOUT :
	    OBS_REFUSED, code);
	vsnprintf(msg, sizeof msg, fmt, ap);
	route_error_send(r->stream, r->m->p + r->m->id.off, r->m->id.len, code,
	    data, msg);
}

/* Answer the request being routed with an error about itself. */
void
route_reject(struct req *r, int code, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	route_reject_v(r, code, NULL, fmt, ap);
	va_end(ap);
}

/* The same, with data (JSON text). */
void
route_reject_data(struct req *r, int code, const char *data,
    const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	route_reject_v(r, code, data, fmt, ap);
	va_end(ap);
}

/*
 * Refuse a request for an upstream whose scopes the session's OAuth token
 * lacks (scopes = [ ... ] of the upstream): 1 if refused (answered).
 */
static int
route_scope_refused(struct req *r, const struct upstream *up)
{
	json_t	*data;
	char	*text;

	if ((data = oauth_upstream_refusal(r->session, up)) == NULL)
		return (0);
	text = json_dumps(data, JSON_COMPACT);
	log_info("session %.8s: %s refused: subject %s lacks scope %s of "
	    "upstream %s", r->session->id, r->m->method_name,
	    r->session->grant->subject,
	    json_string_value(json_object_get(data, "scope")), up->sc->name);
	route_reject_data(r, MCP_INSUFFICIENT_SCOPE, text, "Forbidden: "
	    "the token lacks a scope this upstream needs (%s)",
	    json_string_value(json_object_get(data, "scope")));
	free(text);
	json_decref(data);
	return (1);
}

/* Reply that no resource has a URI, naming it in data.uri as the
 * specification's example does. */
static void
route_no_resource(struct req *r, const char *u)
{
	struct evbuffer	*data = evbuffer_new();

	evbuffer_add(data, "{\"uri\":", 7);
	jscan_add_string(data, u, strlen(u));
	evbuffer_add(data, "}", 2);	/* with its NUL: a C string */
	/* 2026-07-28 says -32602, and emits -32002 no more. */
	route_reject_data(r, r->stream != NULL && r->stream->modern ?
	    JRPC_INVALID_PARAMS : MCP_RESOURCE_NOT_FOUND,
	    (const char *)evbuffer_pullup(data, -1),
	    "Resource not found: %.300s", u);
	evbuffer_free(data);
}

/* Answer the request being routed with a result given as JSON text. */
void
route_result(struct req *r, const char *result, size_t len)
{
	const struct jrpc	*m = r->m;
	struct evbuffer		*buf;

	req_answered(r, OBS_OK, 0);
	buf = evbuffer_new();
	jrpc_add_result(buf, m->p + m->id.off, m->id.len, result, len);
	stream_send(r->stream, buf, 1);
	evbuffer_free(buf);
}

/* A path of keys as text for messages ("ref.name"). */
static void
route_path_text(const char *const *path, char *buf, size_t len)
{
	size_t	n = 0;

	buf[0] = '\0';
	for (; *path != NULL && n < len; path++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", n > 0 ? "." :
		    "", *path);
}

/*
 * Read the routed string parameter of a request (a name or a URI): it
 * must appear once (a peer reading a duplicate's last value would run
 * another tool than the one checked here) and hold no NUL (the lookup
 * would see a shorter name).  Returns it decoded (caller frees), its span
 * in *at; NULL when the error was answered.
 */
static char *
route_param(struct req *r, const char *const *path, struct jspan *at)
{
	const struct jrpc	*m = r->m;
	char			 where[64], *buf;
	ssize_t			 n;
	int			 found;

	route_path_text(path, where, sizeof where);
	if ((found = jscan_path_unique(m->p, m->params, path, at)) == -2) {
		route_reject(r, JRPC_INVALID_REQUEST, "%s: params.%s appears "
		    "more than once", m->method_name, where);
		return (NULL);
	}
	if (found != 0 || jscan_type(m->p, *at) != JT_STRING) {
		route_reject(r, JRPC_INVALID_PARAMS, "%s: params.%s must be a "
		    "string", m->method_name, where);
		return (NULL);
	}
	buf = xmalloc(at->len + 1);
	n = jscan_string(m->p, *at, buf, at->len + 1);
	if (n < 0 || memchr(buf, '\0', (size_t)n) != NULL) {
		route_reject(r, JRPC_INVALID_PARAMS, "%s: params.%s must not "
		    "contain a NUL character", m->method_name, where);
		free(buf);
		return (NULL);
	}
	return (buf);
}

/*
 * A name missing from the session's view but known to the gateway, at a
 * per-session upstream whose instance for the session failed: try the
 * instance again (the request waits), or say why it failed.  1 if done.
 */
static int
route_part_failed(struct req *r, struct upstream *up)
{
	const char	*why, *data;
	int		 code;

	if (up->sc->isolation != ISOLATION_PER_SESSION)
		return (0);
	if (view_retry(r, up))
		return (1);
	if ((why = view_part_error(r->session, up)) == NULL)
		return (0);
	/* Its user must log in first: the error says where. */
	if ((data = view_part_error_data(r->session, up, &code)) != NULL) {
		route_reject_data(r, code, data, "%s", why);
		return (1);
	}
	route_reject(r, MCP_CONNECTION_CLOSED, "%s", why);
	return (1);
}

/*
 * The upstream a name no catalog lists may belong to, among those that
 * match: the one whose prefix begins it, else the one such upstream
 * without a prefix; NULL if none (or several without one).
 */
static struct upstream *
route_prefix_owner(const char *name, int (*match)(const struct upstream *))
{
	struct upstream	*up, *bare = NULL;
	size_t		 i, nbare = 0, len;

	for (i = 0; i < nupstreams; i++) {
		up = upstreams[i];
		if (!match(up))
			continue;
		if ((len = strlen(up->sc->prefix)) == 0) {
			bare = up;
			nbare++;
		} else if (strncmp(name, up->sc->prefix, len) == 0)
			return (up);
	}
	return (nbare == 1 ? bare : NULL);
}

static int
route_is_per_user(const struct upstream *up)
{
	return (up->sc->oauth != NULL &&
	    up->sc->oauth->identity == UPOAUTH_PER_USER);
}

static int
route_is_login(const struct upstream *up)
{
	return (up->state == UPSTREAM_LOGIN);
}

/*
 * A name no catalog lists may be a per-user upstream's (whose tools only
 * the session's own instance lists, once its user has logged in): its
 * part is asked for again, or refused saying why.  1 if done.
 */
static int
route_user_part(struct req *r, enum catalog_kind kind, const char *name)
{
	struct upstream	*up;

	if (!acl_allows(r->session, kind, name) ||
	    (up = route_prefix_owner(name, route_is_per_user)) == NULL)
		return (0);
	return (route_part_failed(r, up));
}

/* A tool held back (pin.c) is refused with why, if the client may see
 * its name.  1 if done. */
static int
route_held(struct req *r, const char *name)
{
	char	why[512];

	if (!acl_allows(r->session, CATALOG_TOOLS, name) ||
	    !pin_held_error(name, why, sizeof why))
		return (0);
	route_reject(r, JRPC_INVALID_PARAMS, "%s", why);
	return (1);
}

/*
 * A name the catalog does not list may be an upstream's that waits for a
 * login (and so lists nothing).  Refused saying what to run, if the
 * client may see the name.  1 if done.
 */
static int
route_login_needed(struct req *r, enum catalog_kind kind, const char *name)
{
	struct upstream	*up;
	char		 why[256];

	if (!acl_allows(r->session, kind, name) ||
	    (up = route_prefix_owner(name, route_is_login)) == NULL)
		return (0);
	upstream_unavailable(up, why, sizeof why);
	route_reject(r, MCP_CONNECTION_CLOSED, "%s", why);
	return (1);
}

/* Route a request naming a tool or prompt to its upstream. */
static void
route_named(struct req *r, enum catalog_kind kind, const char *const *path)
{
	struct session		*s = r->session;
	struct stream		*st = r->stream;
	struct catalog_entry	*e = NULL;
	struct jspan		 name;
	struct evbuffer		*lit;
	struct jedit		 edit;
	struct pending		*p;
	char			*buf, exposed[NAME_MAX_EXPOSED + 1];
	const char		*what = kind == CATALOG_TOOLS ? "tool" :
				    "prompt";

	if ((buf = route_param(r, path, &name)) == NULL)
		return;
	req_name(r, buf, strlen(buf));
	if (strlen(buf) <= NAME_MAX_EXPOSED)
		e = kind == CATALOG_TOOLS ? catalog_tool(view_catalog(s), buf) :
		    catalog_prompt(view_catalog(s), buf);
	if (e == NULL && strlen(buf) <= NAME_MAX_EXPOSED &&
	    (e = kind == CATALOG_TOOLS ? catalog_tool(catalog_global(), buf) :
	    catalog_prompt(catalog_global(), buf)) != NULL) {
		/* Its upstream's instance for this session failed? */
		if (route_part_failed(r, e->up)) {
			free(buf);
			return;
		}
		e = NULL;
	}
	/* What the client may not use is unknown to it. */
	if (e == NULL || !acl_allows(s, kind, buf)) {
		if (e == NULL && kind == CATALOG_TOOLS &&
		    route_held(r, buf)) {
			free(buf);
			return;
		}
		if (e == NULL && route_login_needed(r, kind, buf)) {
			free(buf);
			return;
		}
		if (e == NULL && route_user_part(r, kind, buf)) {
			free(buf);
			return;
		}
		/* The same error an unknown tool gets from a server. */
		route_reject(r, JRPC_INVALID_PARAMS, "unknown %s: %.200s",
		    what, buf);
		free(buf);
		return;
	}
	if (e->owner != NULL) {
		ctools_call(r, e, buf);
		free(buf);
		return;
	}
	if (route_scope_refused(r, e->up)) {
		free(buf);
		return;
	}
	if (st != NULL && st->modern && ((!r->inner &&
	    modern_check_params(r, e) != 0) ||
	    continuation_resume(r, e->up, buf))) {
		free(buf);
		return;
	}
	snprintf(exposed, sizeof exposed, "%s", buf);
	free(buf);
	r->name = exposed;
	lit = evbuffer_new();
	jscan_add_string(lit, e->name, e->namelen);
	edit.at = name;
	edit.len = evbuffer_get_length(lit);
	edit.text = (const char *)evbuffer_pullup(lit, -1);
	p = route_forward(r, e->up, &edit, 1);
	evbuffer_free(lit);
	if (p != NULL && st != NULL && st->modern && !upstream_modern(e->up))
		continuation_bind(p, r, exposed);
}

/*
 * Read a request's URI parameter and find its upstream; answers the error
 * itself.  held: a URI the session is subscribed to is its subscription's
 * upstream, whatever the catalog and the ACL say now.
 */
static char *
route_uri_param(struct req *r, const char *const *path, struct upstream **up,
    int held)
{
	struct session		*s = r->session;
	const struct jrpc	*m = r->m;
	struct jspan		 at;
	const char		*why;
	char			*u, where[64], shown[512];
	int			 allowed;

	if ((u = route_param(r, path, &at)) == NULL)
		return (NULL);
	/* Recorded (access log, span) as a URL is shown: a presigned one's
	 * signature, a ?token=, are not. */
	url_redact(u, shown, sizeof shown);
	req_name(r, shown, strlen(shown));
	/* A URI the client's patterns cannot be checked against. */
	if ((allowed = acl_allows_uri(s, u, &why)) < 0) {
		route_path_text(path, where, sizeof where);
		log_info("session %.8s: %s: params.%s refused: %s", s->id,
		    m->method_name, where, why);
		route_reject(r, JRPC_INVALID_PARAMS, "%s: params.%s cannot be "
		    "checked against the client's patterns: %s",
		    m->method_name, where, why);
		free(u);
		return (NULL);
	}
	/* Held, or on its way: a subscribe in flight can be withdrawn. */
	if (held && ((*up = strmap_get(&s->subs, u)) != NULL ||
	    (*up = route_sub_inflight(s, u)) != NULL))
		return (u);
	if ((*up = catalog_resource(view_catalog(s), u)) == NULL &&
	    (*up = catalog_resource(catalog_global(), u)) != NULL &&
	    route_part_failed(r, *up)) {
		free(u);
		return (NULL);
	}
	if ((*up = catalog_resource(view_catalog(s), u)) == NULL || !allowed) {
		route_no_resource(r, u);
		free(u);
		return (NULL);
	}
	if (route_scope_refused(r, *up)) {
		free(u);
		return (NULL);
	}
	return (u);
}

char *
route_get_uri(struct req *r, const char *const *path, struct upstream **up)
{
	return (route_uri_param(r, path, up, 0));
}

char *
route_held_uri(struct req *r, const char *const *path, struct upstream **up)
{
	return (route_uri_param(r, path, up, 1));
}

void
route_tool_call(struct req *r, const struct jrpc *m)
{
	static const char *const name[] = { "name", NULL };
	const struct jrpc	*outer = r->m;

	r->m = m;
	r->inner = 1;
	route_named(r, CATALOG_TOOLS, name);
	r->inner = 0;
	r->m = outer;
}

/* Route a request naming a resource URI. */
static void
route_uri(struct req *r, const char *const *path)
{
	struct stream	*st = r->stream;
	struct upstream	*up;
	struct pending	*p;
	char		*u;

	if ((u = route_get_uri(r, path, &up)) == NULL)
		return;
	if (st != NULL && st->modern && continuation_resume(r, up, u)) {
		free(u);
		return;
	}
	r->name = u;
	p = route_forward(r, up, NULL, 0);
	if (p != NULL && st != NULL && st->modern && !upstream_modern(up) &&
	    mcp_method_is(r->m->method_id, MCPM_F_PARKS))
		continuation_bind(p, r, u);
	free(u);
}

/* Route completion/complete by its reference. */
static void
route_complete(struct req *r)
{
	static const char *const ref_type[] = { "ref", "type", NULL };
	static const char *const ref_name[] = { "ref", "name", NULL };
	static const char *const ref_uri[] = { "ref", "uri", NULL };
	const struct jrpc	*m = r->m;
	struct jspan		 type;
	int			 found;

	if ((found = jscan_path_unique(m->p, m->params, ref_type,
	    &type)) != 0) {
		route_reject(r, found == -2 ? JRPC_INVALID_REQUEST :
		    JRPC_INVALID_PARAMS, "completion/complete: params.ref.type "
		    "is %s", found == -2 ? "given more than once" : "required");
		return;
	}
	if (jscan_string_equals(m->p, type, "ref/prompt"))
		route_named(r, CATALOG_PROMPTS, ref_name);
	else if (jscan_string_equals(m->p, type, "ref/resource"))
		route_uri(r, ref_uri);
	else
		route_reject(r, JRPC_INVALID_PARAMS,
		    "completion/complete: unknown ref.type");
}

/* Answer a list request from the session's catalog, a page at a time. */
static void
route_list(struct req *r, enum catalog_kind kind)
{
	const struct jrpc	*m = r->m;
	struct evbuffer		*buf;
	struct jspan		 cursor;
	char			 text[CATALOG_CURSOR_TEXT + 1];
	ssize_t			 n = -1;
	int			 found;

	found = jscan_member_unique(m->p, m->params, "cursor", &cursor);
	if (found == 0 && jscan_type(m->p, cursor) == JT_NULL)
		found = -1;
	if (found == -2 || (found == 0 && (n = jscan_string(m->p, cursor,
	    text, sizeof text)) < 0)) {
		route_reject(r, JRPC_INVALID_PARAMS, "invalid cursor");
		return;
	}
	buf = evbuffer_new();
	if (catalog_page(view_catalog(r->session), kind, found == 0 ? text :
	    NULL, found == 0 ? (size_t)n : 0, conf->page_size, r->session,
	    buf) != 0)
		route_reject(r, JRPC_INVALID_PARAMS, "invalid cursor");
	else
		modern_result(r, (const char *)evbuffer_pullup(buf, -1),
		    evbuffer_get_length(buf), 1);
	evbuffer_free(buf);
}

/* Route a request from its reading (or its wait) to its answer. */
static void
route_run(struct session *s, struct stream *st, const struct jrpc *m,
    struct reqobs *waited)
{
	struct req	r;

	session_touch(s);
	req_begin(&r, s, st, m, waited);
	route_dispatch(&r);
	req_finish(&r);
}

void
route_request(struct session *s, struct stream *st, const struct jrpc *m)
{
	if (s->vep != NULL)
		vendpoint_request(s->vep);
	route_run(s, st, m, NULL);
}

void
route_resume(struct session *s, struct stream *st, const struct jrpc *m,
    struct reqobs *waited)
{
	route_run(s, st, m, waited);
}

/* Route a request by its method. */
static void
route_dispatch(struct req *r)
{
	static const char *const name[] = { "name", NULL };
	static const char *const uri[] = { "uri", NULL };
	enum mcp_method		 method = r->m->method_id;

	/* What the client's era does not have is unknown to it. */
	if (!mcp_method_is(method, r->session->modern ? MCPM_F_2026 :
	    MCPM_F_2025))
		method = MCPM_OTHER;
	/* An unknown method is answered at once, not after the view. */
	if (method != MCPM_OTHER && !mcp_method_is(method,
	    MCPM_F_NO_CATALOG) && view_defer(r))
		return;
	switch (method) {
	case MCPM_TOOLS_CALL:
		if (!tool_search_call(r))
			route_named(r, CATALOG_TOOLS, name);
		break;
	case MCPM_TOOLS_REGISTER:
		ctools_register(r);
		break;
	case MCPM_TOOLS_UNREGISTER:
		ctools_unregister(r);
		break;
	case MCPM_TOOLS_LIST:
		if (!tool_search_list(r))
			route_list(r, CATALOG_TOOLS);
		break;
	case MCPM_DISCOVER:
		modern_discover(r);
		break;
	case MCPM_PING:
		route_result(r, "{}", 2);
		break;
	case MCPM_RESOURCES_READ:
		route_uri(r, uri);
		break;
	case MCPM_SUBSCRIBE:
		route_subscription(r, 1);
		break;
	case MCPM_UNSUBSCRIBE:
		route_subscription(r, 0);
		break;
	case MCPM_RESOURCES_LIST:
		route_list(r, CATALOG_RESOURCES);
		break;
	case MCPM_TEMPLATES_LIST:
		route_list(r, CATALOG_TEMPLATES);
		break;
	case MCPM_PROMPTS_LIST:
		route_list(r, CATALOG_PROMPTS);
		break;
	case MCPM_PROMPTS_GET:
		route_named(r, CATALOG_PROMPTS, name);
		break;
	case MCPM_COMPLETE:
		route_complete(r);
		break;
	case MCPM_SET_LEVEL:
		route_set_level(r);
		break;
	case MCPM_LISTEN:
		listen_open(r);
		break;
	case MCPM_INITIALIZE:
		route_reject(r, JRPC_INVALID_REQUEST,
		    "session is already initialized");
		break;
	default:
		/* server/discover is answered before routing (modern.c). */
		route_reject(r, JRPC_METHOD_NOT_FOUND, "Method not found: %s",
		    r->m->method_name);
		break;
	}
}

/* Find a session's pending request by the client's raw id. */
struct pending *
route_find_client_id(struct session *s, const char *id, size_t len)
{
	struct pending	*p;

	TAILQ_FOREACH(p, &s->pending, session_entry) {
		if (!p->own && p->idlen == len && memcmp(p->id, id, len) == 0)
			return (p);
	}
	return (NULL);
}

/* The client cancelled one of its requests (or one of ours to it). */
static void
route_cancelled(struct session *s, const struct jrpc *m)
{
	struct jspan		 rid, reason;
	struct stream		*st;
	struct pending		*p;
	struct evbuffer		*buf;

	if (jscan_member(m->p, m->params, "requestId", &rid) != 0 ||
	    !jrpc_id_valid(m->p, rid)) {
		log_debug("session %.8s: cancel without a valid requestId",
		    s->id);
		return;
	}
	if ((p = route_find_client_id(s, m->p + rid.off, rid.len)) != NULL) {
		buf = evbuffer_new();
		evbuffer_add(buf, "{", 1);
		if (jscan_member(m->p, m->params, "reason", &reason) == 0 &&
		    jscan_type(m->p, reason) == JT_STRING) {
			evbuffer_add(buf, "\"reason\":", 9);
			evbuffer_add(buf, m->p + reason.off, reason.len);
		}
		evbuffer_add(buf, "}", 1);
		if (p->queued == NULL)
			upstream_send_buffer(p->up, MSG_CANCEL, s->no, p->tag,
			    buf);
		evbuffer_free(buf);
		log_debug("session %.8s: cancelled %s", s->id,
		    mcp_method_name(p->method));
		st = p->stream;
		obs_end(&p->obs, OBS_CANCELLED, 0);
		route_pending_free(p);
		if (st != NULL)
			stream_abandon(st);
		return;
	}
	/*
	 * Not the gateway's requests to the client: a cancellation names a
	 * request of its sender's (the 2025-11-25 spec: "in the same
	 * direction"), and a late one for the client's own finished call
	 * would otherwise hit one of ours that has its id.
	 */
	if (ctools_cancelled(s, m, rid))
		return;
	if (view_cancel(s, m->p + rid.off, rid.len))
		return;
	log_debug("session %.8s: cancel of an unknown request", s->id);
}

void
route_notification(struct session *s, const struct jrpc *m)
{
	size_t	i;

	session_touch(s);
	if (m->kind == JRPC_RESULT || m->kind == JRPC_ERROR) {
		route_client_response(s, m);
		return;
	}
	switch (m->method_id) {
	case MCPM_INITIALIZED:
		s->initialized = 1;
		break;
	case MCPM_CANCELLED:
		route_cancelled(s, m);
		break;
	case MCPM_PROGRESS:
		if (!ctools_progress(s, m))
			log_debug("session %.8s: progress for no call of ours",
			    s->id);
		break;
	case MCPM_ROOTS_CHANGED:
		/* A shared upstream is never offered roots (era.c). */
		for (i = 0; i < nupstreams; i++) {
			if (upstreams[i]->sc->isolation != ISOLATION_SHARED &&
			    m->n <= upstreams[i]->sc->max_message)
				upstream_send(upstreams[i], MSG_CLIENT_NOTIFY,
				    s->no, 0, m->p, m->n);
		}
		break;
	default:
		log_debug("session %.8s: notification %s ignored", s->id,
		    m->method_name);
		break;
	}
}

/*
 * One message of a session whose every answer goes on one stream (legacy
 * HTTP+SSE, WebSocket): its first initialize creates its state; the rest
 * is routed as any session's.
 */
void
route_message(struct session *s, struct stream *st, const struct jrpc *m)
{
	struct evbuffer	*buf;
	json_t		*result;
	char		 err[256], *text;
	int		 code;
	int64_t		 t0;
	char		 peer[64];

	if (m->kind != JRPC_REQUEST) {
		route_notification(s, m);
		return;
	}
	/* Before initialize, only ping (as /mcp has no session yet). */
	if (s->client_caps == NULL && m->method_id != MCPM_INITIALIZE &&
	    m->method_id != MCPM_PING) {
		buf = evbuffer_new();
		jrpc_add_error(buf, m->p + m->id.off, m->id.len,
		    JRPC_INVALID_REQUEST, "the session is not initialized: "
		    "send initialize first", NULL);
		stream_send(st, buf, 1);
		evbuffer_free(buf);
		return;
	}
	if (m->method_id != MCPM_INITIALIZE || s->client_caps != NULL) {
		route_request(s, st, m);
		return;
	}
	t0 = now_us();
	snprintf(peer, sizeof peer, "%s", st->conn != NULL ?
	    http_conn_peer(st->conn) : "-");
	buf = evbuffer_new();
	if ((result = route_initialize(s, m, &code, err, sizeof err)) == NULL)
		jrpc_add_error(buf, m->p + m->id.off, m->id.len, code, err,
		    NULL);
	else {
		code = 0;
		text = json_dumps(result, JSON_COMPACT);
		json_decref(result);
		jrpc_add_result(buf, m->p + m->id.off, m->id.len, text,
		    strlen(text));
		free(text);
	}
	stream_send(st, buf, 1);
	evbuffer_free(buf);
	obs_initialize(s, peer, obs_session_transport(s), m, t0, code);
}

/* Build the gateway's initialize result for a new session. */
json_t *
route_initialize(struct session *s, const struct jrpc *m, int *code,
    char *err, size_t errlen)
{
	json_t		*params, *caps, *info;
	json_error_t	 jerr;
	const char	*version;
	size_t		 i;

	/* Kept by the session and every worker: bounded, and never a tree
	 * parse of a whole body (600,000 members took seconds). */
	if (m->params.len > INITIALIZE_PARAMS_MAX) {
		*code = JRPC_INVALID_PARAMS;
		snprintf(err, errlen, "initialize: params of %zu bytes, more "
		    "than %d", m->params.len, INITIALIZE_PARAMS_MAX);
		log_warnx("session %.8s: %s", s->id, err);
		return (NULL);
	}
	params = json_loadb(m->p + m->params.off, m->params.len,
	    JSON_ALLOW_NUL, &jerr);
	if (params == NULL || json_unpack_ex(params, &jerr, 0,
	    "{s:s, s:o, s:o}", "protocolVersion", &version,
	    "capabilities", &caps, "clientInfo", &info) != 0 ||
	    !json_is_object(caps) || !json_is_object(info)) {
		*code = JRPC_INVALID_PARAMS;
		snprintf(err, errlen, "initialize: params need "
		    "protocolVersion (string), capabilities and clientInfo "
		    "(objects)");
		json_decref(params);
		return (NULL);
	}
	/* Old clients of the HTTP+SSE transport may speak 2024-11-05. */
	if (s->legacy && strcmp(version, "2024-11-05") == 0)
		snprintf(s->version, sizeof s->version, "%s", version);
	else
		snprintf(s->version, sizeof s->version, "%s",
		    mcp_version_supported(version) ? version :
		    MCP_VERSION_LATEST);
	s->client_caps = json_incref(caps);
	s->client_info = json_incref(info);
	json_decref(params);
	for (i = 0; i < nupstreams; i++)
		upstream_session_open(upstreams[i], s);
	return (json_pack("{s:s, s:{s:{s:b}, s:{s:b, s:b}, s:{s:b}, s:{}, "
	    "s:{}, s:{s:{}}}, s:{s:s, s:s, s:s}}",
	    "protocolVersion", s->version,
	    "capabilities",
	    "tools", "listChanged", 1,
	    "resources", "subscribe", 1, "listChanged", 1,
	    "prompts", "listChanged", 1,
	    "logging", "completions",
	    "experimental", "clientTools",
	    "serverInfo", "name", "mcp-supervisor", "title", "MCP Supervisor",
	    "version", PACKAGE_VERSION));
}
