#include "config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "log.h"
#include "naming.h"
#include "supervisor.h"
#include "xmalloc.h"

#define MAX_QUEUED	256	/* requests waiting for an upstream to start */

static void	route_flush_queued(struct upstream *);
static void	route_dispatch(struct session *, struct stream *,
		    const struct jrpc *, const char *);

static struct u64map	pending_by_tag;
static uint32_t		next_tag;

struct pending *
route_pending_find(uint32_t tag)
{
	return (u64map_get(&pending_by_tag, tag));
}

/*
 * A stream is being freed (its client went away, or it expired): forget
 * it in the requests that would have answered on it.  A pending request's
 * answer is then dropped; a request to the client goes on the session's
 * standalone stream.
 */
void
route_stream_gone(struct stream *st)
{
	struct pending		*p;
	struct up_request	*ur;

	TAILQ_FOREACH(p, &st->session->pending, session_entry) {
		if (p->stream == st)
			p->stream = NULL;
	}
	TAILQ_FOREACH(ur, &st->session->up_requests, session_entry) {
		if (ur->stream == st)
			ur->stream = NULL;
	}
	view_stream_gone(st);
	ctools_stream_gone(st);
}

void
route_init(void)
{
	u64map_init(&pending_by_tag);
}

/* Reply to a request with an error. */
void
route_error(struct stream *st, const char *id, size_t idlen, int code,
    const char *fmt, ...)
{
	struct evbuffer	*buf;
	va_list		 ap;
	char		 msg[512];

	obs_answered(st, id, code == MCP_REQUEST_TIMEOUT ? OBS_TIMEOUT :
	    OBS_REFUSED, code);
	if (st == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	buf = evbuffer_new();
	jrpc_add_error(buf, id, idlen, code, msg, NULL);
	stream_send(st, buf, 1);
	evbuffer_free(buf);
}

/* Reply to a request with a result given as JSON text. */
void
route_result(struct stream *st, const struct jrpc *m, const char *result,
    size_t len)
{
	struct evbuffer	*buf;

	obs_answered(st, m->p + m->id.off, OBS_OK, 0);
	buf = evbuffer_new();
	jrpc_add_result(buf, m->p + m->id.off, m->id.len, result, len);
	stream_send(st, buf, 1);
	evbuffer_free(buf);
}

/* Reply to a request with an error about the request itself. */
void __attribute__((format(printf, 4, 5)))
route_reject(struct stream *st, const struct jrpc *m, int code,
    const char *fmt, ...)
{
	va_list	ap;
	char	msg[512];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	route_error(st, m->p + m->id.off, m->id.len, code, "%s", msg);
}

/* Free a pending request, unlinking it everywhere. */
void
route_pending_free(struct pending *p)
{
	if (p->parked != NULL)
		continuation_pending_gone(p, NULL);
	u64map_del(&pending_by_tag, p->tag);
	TAILQ_REMOVE(&p->up->pending, p, up_entry);
	p->up->npending--;
	if (p->session != NULL) {
		TAILQ_REMOVE(&p->session->pending, p, session_entry);
		p->session->npending--;
	}
	obs_end(&p->obs, OBS_CANCELLED, 0);
	if (p->timer != NULL)
		event_free(p->timer);
	if (p->queued != NULL) {
		evbuffer_free(p->queued);
		p->up->nqueued--;
	}
	free(p->uri);
	free(p->id);
	free(p->token);
	free(p);
}

/* Tell the worker a request is cancelled, if it was ever sent. */
void
route_pending_cancel(struct pending *p, const char *reason)
{
	if (p->queued == NULL)
		upstream_send(p->up, MSG_CANCEL, p->session != NULL ?
		    p->session->no : 0, p->tag, reason, strlen(reason));
}

/* Answer a pending request with an error and forget it. */
static void
route_pending_fail(struct pending *p, int code, const char *msg)
{
	obs_end(&p->obs, code == MCP_REQUEST_TIMEOUT ? OBS_TIMEOUT :
	    p->obs.t_fwd != 0 || p->obs.up_us != 0 ? OBS_ERROR : OBS_REFUSED,
	    code);
	/* A parked call keeps the reason for its client's retry. */
	if (p->parked != NULL && p->stream == NULL)
		continuation_pending_gone(p, msg);
	if (p->cb != NULL)
		p->cb(p, NULL, code, msg, p->cb_arg);
	else
		route_error(p->stream, p->id, p->idlen, code, "%s", msg);
	route_pending_free(p);
}

/* A request timed out: answer it and cancel it upstream. */
static void
route_timeout_cb(evutil_socket_t fd, short events, void *arg)
{
	static const char	 timed_out[] = "{\"reason\":\"request timed out "
	    "at the gateway\"}";
	struct pending		*p = arg;
	char			 msg[256];

	log_warnx("upstream %s: %s from session %.8s timed out after %u s",
	    p->up->sc->name, p->method, p->session != NULL ?
	    p->session->id : "(gateway)", p->up->sc->request_timeout);
	route_pending_cancel(p, timed_out);
	snprintf(msg, sizeof msg, "upstream %s did not answer within %u s",
	    p->up->sc->name, p->up->sc->request_timeout);
	route_pending_fail(p, MCP_REQUEST_TIMEOUT, msg);
}

/* (Re)arm a pending request's request_timeout. */
void
route_pending_arm(struct pending *p)
{
	struct timeval	tv;

	if (p->timer == NULL)
		p->timer = evtimer_new(base, route_timeout_cb, p);
	tv.tv_sec = p->up->sc->request_timeout;
	tv.tv_usec = 0;
	evtimer_add(p->timer, &tv);
}

/* Create a pending request and send its text to the upstream. */
static struct pending *
route_send(struct session *s, struct stream *st, struct upstream *up,
    const char *method, const char *id, size_t idlen, struct evbuffer *buf)
{
	struct pending	*p;
	char		 why[512];

	p = xcalloc(1, sizeof *p);
	do {
		if (++next_tag == 0)
			next_tag = 1;
	} while (u64map_get(&pending_by_tag, next_tag) != NULL);
	p->tag = next_tag;
	p->session = s;
	p->up = up;
	p->stream = st;
	p->idlen = idlen;
	p->id = xmalloc(idlen);
	memcpy(p->id, id, idlen);
	snprintf(p->method, sizeof p->method, "%s", method);
	u64map_put(&pending_by_tag, p->tag, p);
	TAILQ_INSERT_TAIL(&up->pending, p, up_entry);
	up->npending++;
	if (s != NULL) {
		TAILQ_INSERT_TAIL(&s->pending, p, session_entry);
		s->npending++;
	}
	route_pending_arm(p);
	/* The client's request (if this is one) goes on here. */
	if (st != NULL)
		obs_take(&p->obs);

	/* An upstream that is starting gets the request when it is ready. */
	if (up->state == UPSTREAM_STARTING) {
		p->queued = evbuffer_new();
		evbuffer_add_buffer(p->queued, buf);
		up->nqueued++;
		return (p);
	}
	if (upstream_send_buffer(up, MSG_REQUEST, s != NULL ? s->no : 0,
	    p->tag, buf) != 0) {
		upstream_unavailable(up, why, sizeof why);
		route_pending_fail(p, MCP_CONNECTION_CLOSED, why);
		return (NULL);
	}
	obs_sent(&p->obs);
	return (p);
}

void
route_upstream_ready(struct upstream *up)
{
	route_sub_renew(up);
	route_flush_queued(up);
	view_upstream_ready(up);
}

static void
route_flush_queued(struct upstream *up)
{
	struct pending	*p, *next;
	struct evbuffer	*buf;

	for (p = TAILQ_FIRST(&up->pending); p != NULL && up->nqueued > 0;
	    p = next) {
		next = TAILQ_NEXT(p, up_entry);
		if (p->queued == NULL)
			continue;
		buf = p->queued;
		p->queued = NULL;
		up->nqueued--;
		upstream_send_buffer(up, MSG_REQUEST, p->session != NULL ?
		    p->session->no : 0, p->tag, buf);
		evbuffer_free(buf);
		obs_sent(&p->obs);
	}
}

struct pending *
route_call(struct upstream *up, const char *method, const char *params,
    size_t len, route_call_cb cb, void *arg, char *why, size_t whylen)
{
	struct pending	*p;
	struct evbuffer	*buf;

	upstream_use(up);
	if (up->state != UPSTREAM_READY && (up->state != UPSTREAM_STARTING ||
	    up->nqueued >= MAX_QUEUED)) {
		upstream_unavailable(up, why, whylen);
		return (NULL);
	}
	if (len + 128 > up->sc->max_message) {
		snprintf(why, whylen, "the request is over upstream %s's "
		    "max_message", up->sc->name);
		return (NULL);
	}
	buf = evbuffer_new();
	evbuffer_add_printf(buf, "{\"jsonrpc\":\"2.0\",\"id\":0,"
	    "\"method\":\"%s\",\"params\":", method);
	evbuffer_add(buf, params, len);
	evbuffer_add(buf, "}", 1);
	p = route_send(NULL, NULL, up, method, "0", 1, buf);
	evbuffer_free(buf);
	if (p == NULL) {
		upstream_unavailable(up, why, whylen);
		return (NULL);
	}
	p->cb = cb;
	p->cb_arg = arg;
	return (p);
}

void
route_call_abandon(struct pending *p)
{
	static const char	 gone[] = "{\"reason\":\"no longer needed\"}";

	route_pending_cancel(p, gone);
	route_pending_free(p);
}

/* Send a request of the gateway's own; its answer is dropped. */
void
route_internal(struct upstream *up, struct session *s, const char *method,
    json_t *params)
{
	struct evbuffer	*buf;
	char		*text;

	if (up->state != UPSTREAM_READY && up->state != UPSTREAM_STARTING) {
		json_decref(params);
		return;
	}
	text = json_dumps(params, JSON_COMPACT);
	json_decref(params);
	buf = evbuffer_new();
	evbuffer_add_printf(buf, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":"
	    "\"%s\",\"params\":%s}", method, text);
	free(text);
	route_send(s, NULL, up, method, "0", 1, buf);
	evbuffer_free(buf);
}

/* Forward a client request, with edits applied to its text. */
struct pending *
route_forward(struct session *s, struct stream *st, const struct jrpc *m,
    struct upstream *up, const struct jedit *edits, size_t nedits)
{
	struct pending	*p;
	struct evbuffer	*buf;
	char		 why[512];

	static const char *const token[] = { "_meta", "progressToken",
	    NULL };
	struct jspan	 at;

	obs_upstream(up);
	if (s->npending >= conf->max_pending) {
		log_warnx("session %.8s: %s refused: %u requests in flight "
		    "(max_pending)", s->id, st != NULL && st->conn != NULL ?
		    http_conn_peer(st->conn) : "-", conf->max_pending);
		metrics_refused("limit");
		route_reject(st, m, MCP_OVERLOADED, "too many requests in "
		    "flight for this session (limit %u)", conf->max_pending);
		return (NULL);
	}
	if (jscan_path_unique(m->p, m->params, token, &at) == -2) {
		route_reject(st, m, JRPC_INVALID_REQUEST, "%s: "
		    "params._meta.progressToken appears more than once",
		    m->method_name);
		return (NULL);
	}
	if (m->n > up->sc->max_message) {
		route_reject(st, m, JRPC_INVALID_REQUEST, "request of %zu bytes "
		    "is over upstream %s's max_message (%zu)", m->n,
		    up->sc->name, up->sc->max_message);
		return (NULL);
	}
	upstream_use(up);
	if (up->state != UPSTREAM_READY && (up->state != UPSTREAM_STARTING ||
	    up->nqueued >= MAX_QUEUED)) {
		upstream_unavailable(up, why, sizeof why);
		route_reject(st, m, MCP_CONNECTION_CLOSED, "%s", why);
		return (NULL);
	}
	buf = evbuffer_new();
	jscan_splice(buf, m->p, m->n, edits, nedits);
	p = route_send(s, st, up, m->method_name, m->p + m->id.off, m->id.len,
	    buf);
	evbuffer_free(buf);
	return (p);
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
route_param(struct stream *st, const struct jrpc *m, const char *const *path,
    struct jspan *at)
{
	char	 where[64], *buf;
	ssize_t	 n;
	int	 r;

	route_path_text(path, where, sizeof where);
	if ((r = jscan_path_unique(m->p, m->params, path, at)) == -2) {
		route_reject(st, m, JRPC_INVALID_REQUEST, "%s: params.%s "
		    "appears more than once", m->method_name, where);
		return (NULL);
	}
	if (r != 0 || jscan_type(m->p, *at) != JT_STRING) {
		route_reject(st, m, JRPC_INVALID_PARAMS, "%s: params.%s must "
		    "be a string", m->method_name, where);
		return (NULL);
	}
	buf = xmalloc(at->len + 1);
	n = jscan_string(m->p, *at, buf, at->len + 1);
	if (n < 0 || memchr(buf, '\0', (size_t)n) != NULL) {
		route_reject(st, m, JRPC_INVALID_PARAMS, "%s: params.%s must "
		    "not contain a NUL character", m->method_name, where);
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
route_part_failed(struct session *s, struct stream *st, const struct jrpc *m,
    struct upstream *up)
{
	const char	*why;

	if (up->sc->isolation != ISOLATION_PER_SESSION)
		return (0);
	if (view_retry(s, up, st, m))
		return (1);
	if ((why = view_part_error(s, up)) == NULL)
		return (0);
	route_reject(st, m, MCP_CONNECTION_CLOSED, "%s", why);
	return (1);
}

/* Route a request naming a tool or prompt to its upstream. */
static void
route_named(struct session *s, struct stream *st, const struct jrpc *m,
    enum catalog_kind kind, const char *const *path)
{
	struct catalog_entry	*e = NULL;
	struct jspan		 name;
	struct evbuffer		*lit;
	struct jedit		 edit;
	struct pending		*p;
	char			*buf, exposed[NAME_MAX_EXPOSED + 1];
	const char		*what = kind == CATALOG_TOOLS ? "tool" :
				    "prompt";

	if ((buf = route_param(st, m, path, &name)) == NULL)
		return;
	obs_name(buf, strlen(buf));
	if (strlen(buf) <= NAME_MAX_EXPOSED)
		e = kind == CATALOG_TOOLS ? catalog_tool(view_catalog(s), buf) :
		    catalog_prompt(view_catalog(s), buf);
	if (e == NULL && strlen(buf) <= NAME_MAX_EXPOSED &&
	    (e = kind == CATALOG_TOOLS ? catalog_tool(catalog_global(), buf) :
	    catalog_prompt(catalog_global(), buf)) != NULL) {
		/* Its upstream's instance for this session failed? */
		if (route_part_failed(s, st, m, e->up)) {
			free(buf);
			return;
		}
		e = NULL;
	}
	/* What the client may not use is unknown to it. */
	if (e == NULL || !acl_allows(s, buf)) {
		/* The same error an unknown tool gets from a server. */
		route_reject(st, m, JRPC_INVALID_PARAMS, "unknown %s: %.200s",
		    what, buf);
		free(buf);
		return;
	}
	if (e->owner != NULL) {
		ctools_call(s, st, m, e, buf);
		free(buf);
		return;
	}
	if (st != NULL && st->modern && (modern_check_params(st, m, e) != 0 ||
	    continuation_resume(s, st, m, e->up, buf))) {
		free(buf);
		return;
	}
	snprintf(exposed, sizeof exposed, "%s", buf);
	free(buf);
	lit = evbuffer_new();
	jscan_add_string(lit, e->name, e->namelen);
	edit.at = name;
	edit.len = evbuffer_get_length(lit);
	edit.text = (const char *)evbuffer_pullup(lit, -1);
	p = route_forward(s, st, m, e->up, &edit, 1);
	evbuffer_free(lit);
	if (p != NULL && st != NULL && st->modern && !upstream_modern(e->up))
		continuation_bind(p, s, m, exposed);
}

/* Read a request's URI parameter; answers the error itself. */
char *
route_get_uri(struct session *s, struct stream *st, const struct jrpc *m,
    const char *const *path, struct upstream **up)
{
	struct jspan	 at;
	char		*u;

	if ((u = route_param(st, m, path, &at)) == NULL)
		return (NULL);
	obs_name(u, strlen(u));
	if ((*up = catalog_resource(view_catalog(s), u)) == NULL &&
	    (*up = catalog_resource(catalog_global(), u)) != NULL &&
	    route_part_failed(s, st, m, *up)) {
		free(u);
		return (NULL);
	}
	if ((*up = catalog_resource(view_catalog(s), u)) == NULL ||
	    !acl_allows(s, u)) {
		route_error(st, m->p + m->id.off, m->id.len,
		    MCP_RESOURCE_NOT_FOUND, "Resource not found: %.300s", u);
		free(u);
		return (NULL);
	}
	return (u);
}

/* Route a request naming a resource URI. */
static void
route_uri(struct session *s, struct stream *st, const struct jrpc *m,
    const char *const *path)
{
	struct upstream	*up;
	struct pending	*p;
	char		*u;

	if ((u = route_get_uri(s, st, m, path, &up)) == NULL)
		return;
	if (st != NULL && st->modern && continuation_resume(s, st, m, up, u)) {
		free(u);
		return;
	}
	p = route_forward(s, st, m, up, NULL, 0);
	if (p != NULL && st != NULL && st->modern && !upstream_modern(up) &&
	    strcmp(m->method_name, "resources/read") == 0)
		continuation_bind(p, s, m, u);
	free(u);
}

/* Route completion/complete by its reference. */
static void
route_complete(struct session *s, struct stream *st, const struct jrpc *m)
{
	static const char *const ref_type[] = { "ref", "type", NULL };
	static const char *const ref_name[] = { "ref", "name", NULL };
	static const char *const ref_uri[] = { "ref", "uri", NULL };
	struct jspan	type;
	int		r;

	if ((r = jscan_path_unique(m->p, m->params, ref_type, &type)) != 0) {
		route_reject(st, m, r == -2 ? JRPC_INVALID_REQUEST :
		    JRPC_INVALID_PARAMS, "completion/complete: params.ref.type "
		    "is %s", r == -2 ? "given more than once" : "required");
		return;
	}
	if (jscan_string_equals(m->p, type, "ref/prompt"))
		route_named(s, st, m, CATALOG_PROMPTS, ref_name);
	else if (jscan_string_equals(m->p, type, "ref/resource"))
		route_uri(s, st, m, ref_uri);
	else
		route_reject(st, m, JRPC_INVALID_PARAMS,
		    "completion/complete: unknown ref.type");
}

/* Answer a list request from the session's catalog, a page at a time. */
static void
route_list(struct session *s, struct stream *st, const struct jrpc *m,
    enum catalog_kind kind)
{
	struct evbuffer	*buf;
	struct jspan	 cursor;
	char		 text[4200];
	ssize_t		 n = -1;
	int		 r;

	r = jscan_member_unique(m->p, m->params, "cursor", &cursor);
	if (r == 0 && jscan_type(m->p, cursor) == JT_NULL)
		r = -1;
	if (r == -2 || (r == 0 && (n = jscan_string(m->p, cursor, text,
	    sizeof text)) < 0)) {
		route_reject(st, m, JRPC_INVALID_PARAMS, "invalid cursor");
		return;
	}
	buf = evbuffer_new();
	if (catalog_page(view_catalog(s), kind, r == 0 ? text : NULL,
	    r == 0 ? (size_t)n : 0, conf->page_size, s, buf) != 0)
		route_reject(st, m, JRPC_INVALID_PARAMS, "invalid cursor");
	else
		modern_result(st, m, (const char *)evbuffer_pullup(buf, -1),
		    evbuffer_get_length(buf), 1);
	evbuffer_free(buf);
}

/* Does a request need the session's catalog? */
static int
route_needs_catalog(const char *method)
{
	return (strcmp(method, "ping") != 0 &&
	    strcmp(method, "logging/setLevel") != 0 &&
	    strcmp(method, "subscriptions/listen") != 0 &&
	    strcmp(method, "initialize") != 0 &&
	    strcmp(method, "tools/register") != 0 &&
	    strcmp(method, "tools/unregister") != 0);
}

void
route_request(struct session *s, struct stream *st, const struct jrpc *m)
{
	const char	*method = m->method_name;

	session_touch(s);
	obs_begin(s, st, m);
	route_dispatch(s, st, m, method);
	obs_done();
}

/* Route a request by its method. */
static void
route_dispatch(struct session *s, struct stream *st, const struct jrpc *m,
    const char *method)
{
	static const char *const name[] = { "name", NULL };
	static const char *const uri[] = { "uri", NULL };

	if (route_needs_catalog(method) && view_defer(s, st, m))
		return;
	if (s->modern && strcmp(method, "subscriptions/listen") == 0)
		listen_open(s, st, m);
	else if (strcmp(method, "tools/call") == 0)
		route_named(s, st, m, CATALOG_TOOLS, name);
	else if (strcmp(method, "tools/register") == 0)
		ctools_register(s, st, m);
	else if (strcmp(method, "tools/unregister") == 0)
		ctools_unregister(s, st, m);
	else if (strcmp(method, "tools/list") == 0)
		route_list(s, st, m, CATALOG_TOOLS);
	else if (strcmp(method, "ping") == 0)
		route_result(st, m, "{}", 2);
	else if (strcmp(method, "resources/read") == 0)
		route_uri(s, st, m, uri);
	else if (strcmp(method, "resources/subscribe") == 0)
		route_subscription(s, st, m, 1);
	else if (strcmp(method, "resources/unsubscribe") == 0)
		route_subscription(s, st, m, 0);
	else if (strcmp(method, "resources/list") == 0)
		route_list(s, st, m, CATALOG_RESOURCES);
	else if (strcmp(method, "resources/templates/list") == 0)
		route_list(s, st, m, CATALOG_TEMPLATES);
	else if (strcmp(method, "prompts/list") == 0)
		route_list(s, st, m, CATALOG_PROMPTS);
	else if (strcmp(method, "prompts/get") == 0)
		route_named(s, st, m, CATALOG_PROMPTS, name);
	else if (strcmp(method, "completion/complete") == 0)
		route_complete(s, st, m);
	else if (strcmp(method, "logging/setLevel") == 0)
		route_set_level(s, st, m);
	else if (strcmp(method, "initialize") == 0)
		route_reject(st, m, JRPC_INVALID_REQUEST,
		    "session is already initialized");
	else
		route_reject(st, m, JRPC_METHOD_NOT_FOUND,
		    "Method not found: %s", method);
}

/* Find a session's pending request by the client's raw id. */
static struct pending *
route_find_client_id(struct session *s, const char *id, size_t len)
{
	struct pending	*p;

	TAILQ_FOREACH(p, &s->pending, session_entry) {
		if (p->idlen == len && memcmp(p->id, id, len) == 0)
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
	struct up_request	*ur;
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
		log_debug("session %.8s: cancelled %s", s->id, p->method);
		st = p->stream;
		obs_end(&p->obs, OBS_CANCELLED, 0);
		route_pending_free(p);
		if (st != NULL)
			stream_abandon(st);
		return;
	}
	if ((ur = route_find_up_request(s, m->p, rid)) != NULL) {
		metrics_up_request(ur->up, ur->method, MUPO_CANCELLED);
		route_up_error(ur->up, s->no, ur->ref, JRPC_INTERNAL_ERROR,
		    "request cancelled by the client");
		sampling_end(ur->up, ur->ref, "error",
		    "the client cancelled it");
		route_up_request_free(ur);
		return;
	}
	if (ctools_cancelled(s, m, rid))
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
	if (strcmp(m->method_name, "notifications/initialized") == 0)
		s->initialized = 1;
	else if (strcmp(m->method_name, "notifications/cancelled") == 0)
		route_cancelled(s, m);
	else if (strcmp(m->method_name, "notifications/progress") == 0) {
		if (!ctools_progress(s, m))
			log_debug("session %.8s: progress for no call of ours",
			    s->id);
	}
	else if (strcmp(m->method_name,
	    "notifications/roots/list_changed") == 0) {
		for (i = 0; i < nupstreams; i++) {
			if (m->n <= upstreams[i]->sc->max_message)
				upstream_send(upstreams[i], MSG_CLIENT_NOTIFY,
				    s->no, 0, m->p, m->n);
		}
	} else
		log_debug("session %.8s: notification %s ignored", s->id,
		    m->method_name);
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
	if (strcmp(m->method_name, "initialize") != 0 ||
	    s->client_caps != NULL) {
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

/* Take a frame's payload into a new buffer. */
struct evbuffer *
route_payload(const struct frame_hdr *hdr, struct evbuffer *in)
{
	struct evbuffer	*payload = evbuffer_new();

	evbuffer_drain(in, FRAME_HDR_LEN);
	evbuffer_remove_buffer(in, payload, hdr->len);
	return (payload);
}

/* The code of an error answer, for the access log (0 if none). */
static int
route_error_code(struct evbuffer *payload)
{
	struct jrpc	 m;
	struct jspan	 code;
	const char	*why;
	int64_t		 v;

	if (jrpc_scan((const char *)evbuffer_pullup(payload, -1),
	    evbuffer_get_length(payload), &m, &why) != 0 ||
	    m.kind != JRPC_ERROR ||
	    jscan_member(m.p, m.error, "code", &code) != 0 ||
	    jscan_int64(m.p, code, &v) != 0 || v < INT32_MIN || v > INT32_MAX)
		return (0);
	return ((int)v);
}

/* Apply a pending request's hook once its answer is known. */
static void
route_hook(struct pending *p, struct evbuffer *payload)
{
	struct jrpc	 m;
	const char	*why, *text;

	text = (const char *)evbuffer_pullup(payload, -1);
	if (jrpc_scan(text, evbuffer_get_length(payload), &m, &why) != 0 ||
	    m.kind != JRPC_RESULT || p->session == NULL)
		return;
	if (p->hook == HOOK_SUBSCRIBE)
		route_subscribed(p->session, p->up, p->uri);
}

/* Give the answer to a call of the gateway's own to its callback. */
static void
route_call_answer(struct pending *p, struct evbuffer *payload)
{
	struct jrpc	 m;
	const char	*why;

	if (jrpc_scan((const char *)evbuffer_pullup(payload, -1),
	    evbuffer_get_length(payload), &m, &why) != 0 ||
	    (m.kind != JRPC_RESULT && m.kind != JRPC_ERROR))
		p->cb(p, NULL, JRPC_INTERNAL_ERROR, "the upstream's answer is "
		    "not a JSON-RPC response", p->cb_arg);
	else
		p->cb(p, &m, 0, NULL, p->cb_arg);
}

/*
 * The answer to a call resumed by a 2026-07-28 retry goes to the retry,
 * under the retry's id (the worker restored the first request's).
 */
static void
route_rebind(struct pending *p, struct evbuffer *payload)
{
	struct evbuffer	*out;
	struct jrpc	 m;
	const char	*why;

	if (jrpc_scan((const char *)evbuffer_pullup(payload, -1),
	    evbuffer_get_length(payload), &m, &why) != 0 || m.id.len == 0)
		return;
	out = jscan_replace(m.p, m.n, m.id, p->id, p->idlen);
	evbuffer_drain(payload, evbuffer_get_length(payload));
	evbuffer_add_buffer(payload, out);
	evbuffer_free(out);
}

/* A worker's answer to a request. */
static void
route_response(struct upstream *up, const struct frame_hdr *hdr,
    struct evbuffer *in)
{
	struct pending	*p;
	struct evbuffer	*payload;

	p = u64map_get(&pending_by_tag, hdr->tag);
	if (p == NULL || p->up != up) {
		log_debug("upstream %s: answer to a request no longer "
		    "pending", up->sc->name);
		evbuffer_drain(in, FRAME_HDR_LEN + hdr->len);
		return;
	}
	payload = route_payload(hdr, in);
	if (p->hook != HOOK_NONE)
		route_hook(p, payload);
	if (p->rebound)
		route_rebind(p, payload);
	obs_returned(&p->obs);
	if (p->obs.active)
		obs_end(&p->obs, (hdr->flags & FRAME_F_ERROR) ? OBS_ERROR :
		    OBS_OK, (hdr->flags & FRAME_F_ERROR) &&
		    access_log_enabled() ? route_error_code(payload) : 0);
	if (p->parked != NULL && p->stream == NULL) {
		/* It answered while its client was asked for input. */
		continuation_answered(p, payload);
		route_pending_free(p);
		return;
	}
	if (p->cb != NULL)
		route_call_answer(p, payload);
	else if (p->stream != NULL)
		stream_send(p->stream, payload, 1);
	evbuffer_free(payload);
	route_pending_free(p);
}

/* A worker could not complete a request. */
static void
route_fail(struct upstream *up, const struct frame_hdr *hdr,
    struct evbuffer *in)
{
	struct pending	*p;
	json_t		*msg;
	const char	*why, *text = "upstream request failed";
	json_int_t	 code = JRPC_INTERNAL_ERROR;

	if ((msg = frame_take_json(in, hdr, &why)) == NULL) {
		log_warnx("upstream %s: FAIL frame: %s", up->sc->name, why);
		return;
	}
	json_unpack(msg, "{s?I, s?s}", "code", &code, "message", &text);
	p = u64map_get(&pending_by_tag, hdr->tag);
	if (p != NULL && p->up == up) {
		obs_end(&p->obs, code == MCP_REQUEST_TIMEOUT ? OBS_TIMEOUT :
		    OBS_ERROR, (int)code);
		route_pending_fail(p, (int)code, text);
	}
	json_decref(msg);
}

void
route_worker_frame(struct upstream *up, const struct frame_hdr *hdr,
    struct evbuffer *in)
{
	switch (hdr->type) {
	case MSG_RESPONSE:
		route_response(up, hdr, in);
		break;
	case MSG_FAIL:
		route_fail(up, hdr, in);
		break;
	case MSG_NOTIFY:
		route_notify(up, hdr, in);
		break;
	case MSG_UP_REQUEST:
		route_up_request(up, hdr, in);
		break;
	default:
		evbuffer_drain(in, FRAME_HDR_LEN + hdr->len);
		break;
	}
}

void
route_fail_upstream(struct upstream *up, int code, const char *message,
    int keep_queued)
{
	struct pending		*p, *next;
	struct up_request	*ur;

	for (p = TAILQ_FIRST(&up->pending); p != NULL; p = next) {
		next = TAILQ_NEXT(p, up_entry);
		if (!keep_queued || p->queued == NULL)
			route_pending_fail(p, code, message);
	}
	while ((ur = TAILQ_FIRST(&up->up_requests)) != NULL) {
		metrics_up_request(ur->up, ur->method, MUPO_CANCELLED);
		route_up_cancel_client(ur, message);
		route_up_request_free(ur);
	}
	sampling_upstream_gone(up);
	continuation_upstream_gone(up);
	view_upstream_down(up);
	/* A new upstream process holds no subscriptions or level. */
	strmap_free(&up->subs);
	strmap_init(&up->subs);
	up->loglevel = -1;
}

void
route_cancel_session(struct session *s)
{
	static const char	 ended[] = "{\"reason\":\"session ended\"}";
	struct pending		*p;

	while ((p = TAILQ_FIRST(&s->pending)) != NULL) {
		route_pending_cancel(p, ended);
		route_pending_free(p);
	}
}

void
route_session_end(struct session *s)
{
	struct up_request	*ur;

	continuation_session_end(s);
	route_cancel_session(s);
	while ((ur = TAILQ_FIRST(&s->up_requests)) != NULL) {
		metrics_up_request(ur->up, ur->method, MUPO_CANCELLED);
		route_up_error(ur->up, s->no, ur->ref, MCP_CONNECTION_CLOSED,
		    "the client session ended");
		sampling_end(ur->up, ur->ref, "error",
		    "the client session ended");
		route_up_request_free(ur);
	}
	route_sub_session_end(s);
}
