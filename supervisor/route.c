#include "config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "log.h"
#include "supervisor.h"
#include "xmalloc.h"

#define MAX_QUEUED	256	/* requests waiting for an upstream to start */

static void	route_forward_level(struct upstream *, struct session *);
static uintptr_t route_subcount(struct upstream *, const char *);
static void	route_subcount_add(struct upstream *, const char *, int);
static void	route_internal(struct upstream *, struct session *,
		    const char *, json_t *);
static void	route_up_strategies(struct upstream *, struct session *,
		    struct stream *, uint32_t, const struct jrpc *, uint32_t,
		    size_t, const char *, int);

static struct u64map	pending_by_tag;
static uint32_t		next_tag;
static uint64_t		next_up_id;	/* ids of requests we send clients */

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
static void
route_result(struct stream *st, const struct jrpc *m, const char *result,
    size_t len)
{
	struct evbuffer	*buf;

	buf = evbuffer_new();
	jrpc_add_result(buf, m->p + m->id.off, m->id.len, result, len);
	stream_send(st, buf, 1);
	evbuffer_free(buf);
}

/* Reply to a request with an error about the request itself. */
static void __attribute__((format(printf, 4, 5)))
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

/* Send a notification (method and params as JSON text) on a stream. */
static void
route_notify_stream(struct stream *st, const char *method,
    const char *params)
{
	struct evbuffer	*buf = evbuffer_new();

	evbuffer_add_printf(buf, "{\"jsonrpc\":\"2.0\",\"method\":\"%s\"",
	    method);
	if (params != NULL)
		evbuffer_add_printf(buf, ",\"params\":%s", params);
	evbuffer_add(buf, "}", 1);
	stream_send(st, buf, 0);
	evbuffer_free(buf);
}

/* Free a pending request, unlinking it everywhere. */
void
route_pending_free(struct pending *p)
{
	u64map_del(&pending_by_tag, p->tag);
	TAILQ_REMOVE(&p->up->pending, p, up_entry);
	p->up->npending--;
	if (p->session != NULL) {
		TAILQ_REMOVE(&p->session->pending, p, session_entry);
		p->session->npending--;
	}
	if (p->timer != NULL)
		event_free(p->timer);
	if (p->queued != NULL) {
		evbuffer_free(p->queued);
		p->up->nqueued--;
	}
	free(p->uri);
	free(p->id);
	free(p);
}

/* Tell the worker a request is cancelled, if it was ever sent. */
static void
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

/* Create a pending request and send its text to the upstream. */
static struct pending *
route_send(struct session *s, struct stream *st, struct upstream *up,
    const char *method, const char *id, size_t idlen, struct evbuffer *buf)
{
	struct pending	*p;
	struct timeval	 tv;
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
	p->timer = evtimer_new(base, route_timeout_cb, p);
	tv.tv_sec = up->sc->request_timeout;
	tv.tv_usec = 0;
	evtimer_add(p->timer, &tv);

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
	return (p);
}

/* Renew one session's subscriptions at a restarted upstream. */
static void
route_resubscribe_one(struct session *s, void *arg)
{
	struct upstream		*up = arg;
	struct strmap_entry	*e;
	size_t			 i;
	int			 shared;

	shared = up->sc->isolation == ISOLATION_SHARED;
	for (i = 0; i < s->subs.nbuckets; i++) {
		for (e = s->subs.buckets[i]; e != NULL; e = e->next) {
			if (e->value != up)
				continue;
			if (shared && route_subcount(up, e->key) > 0) {
				route_subcount_add(up, e->key, 1);
				continue;
			}
			if (shared)
				route_subcount_add(up, e->key, 1);
			route_internal(up, shared ? NULL : s,
			    "resources/subscribe", json_pack("{s:s}", "uri",
			    e->key));
		}
	}
}

/* Forward the level of one session to a per-session upstream. */
static void
route_level_one(struct session *s, void *arg)
{
	if (s->loglevel >= 0)
		route_forward_level(arg, s);
}

static void	route_flush_queued(struct upstream *);

void
route_upstream_ready(struct upstream *up)
{
	strmap_free(&up->subs);
	strmap_init(&up->subs);
	up->loglevel = -1;
	if (up->sc->isolation == ISOLATION_SHARED)
		route_forward_level(up, NULL);
	else
		session_foreach(route_level_one, up);
	session_foreach(route_resubscribe_one, up);
	route_flush_queued(up);
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
	}
}

/* Send a request of the gateway's own; its answer is dropped. */
static void
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
static struct pending *
route_forward(struct session *s, struct stream *st, const struct jrpc *m,
    struct upstream *up, const struct jedit *edits, size_t nedits)
{
	struct pending	*p;
	struct evbuffer	*buf;
	char		 why[512];

	if (s->npending >= conf->max_pending) {
		route_reject(st, m, MCP_OVERLOADED, "too many requests in "
		    "flight for this session (limit %u)", conf->max_pending);
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

/* Route a request naming a tool or prompt to its upstream. */
static void
route_named(struct session *s, struct stream *st, const struct jrpc *m,
    enum catalog_kind kind, const char *const *path)
{
	struct catalog_entry	*e;
	struct jspan		 name;
	struct evbuffer		*lit;
	struct jedit		 edit;
	char			 buf[512];
	const char		*what = kind == CATALOG_TOOLS ? "tool" :
				    "prompt";

	if (jscan_path(m->p, m->params, path, &name) != 0 ||
	    jscan_type(m->p, name) != JT_STRING) {
		route_reject(st, m, JRPC_INVALID_PARAMS, "%s: params.%s must "
		    "be a string", m->method_name, path[0]);
		return;
	}
	if (jscan_string(m->p, name, buf, sizeof buf) < 0) {
		route_reject(st, m, JRPC_INVALID_PARAMS, "unknown %s (name "
		    "too long)", what);
		return;
	}
	e = kind == CATALOG_TOOLS ? catalog_tool(buf) : catalog_prompt(buf);
	if (e == NULL) {
		route_reject(st, m, JRPC_INVALID_PARAMS, "unknown %s: %.200s",
		    what, buf);
		return;
	}
	lit = evbuffer_new();
	jscan_add_string(lit, e->name, strlen(e->name));
	edit.at = name;
	edit.len = evbuffer_get_length(lit);
	edit.text = (const char *)evbuffer_pullup(lit, -1);
	route_forward(s, st, m, e->up, &edit, 1);
	evbuffer_free(lit);
}

/* Read a request's URI parameter; answers the error itself. */
static char *
route_get_uri(struct stream *st, const struct jrpc *m,
    const char *const *path, struct upstream **up)
{
	struct jspan	 uri;
	char		*u;

	if (jscan_path(m->p, m->params, path, &uri) != 0 ||
	    jscan_type(m->p, uri) != JT_STRING) {
		route_reject(st, m, JRPC_INVALID_PARAMS, "%s: params.%s must "
		    "be a string", m->method_name, path[0]);
		return (NULL);
	}
	u = jscan_strdup(m->p, uri);
	if ((*up = catalog_resource(u)) == NULL) {
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
	char		*u;

	if ((u = route_get_uri(st, m, path, &up)) == NULL)
		return;
	free(u);
	route_forward(s, st, m, up, NULL, 0);
}

/* The subscriber count of a URI at a shared upstream. */
static uintptr_t
route_subcount(struct upstream *up, const char *uri)
{
	return ((uintptr_t)strmap_get(&up->subs, uri));
}

/* Change the subscriber count of a URI at a shared upstream. */
static void
route_subcount_add(struct upstream *up, const char *uri, int delta)
{
	uintptr_t	n = route_subcount(up, uri);

	strmap_del(&up->subs, uri);
	n = (uintptr_t)((intptr_t)n + delta);
	if (n > 0)
		strmap_add(&up->subs, uri, (void *)n);
}

/* Record a session's subscription. */
static void
route_subscribed(struct session *s, struct upstream *up, const char *uri)
{
	if (strmap_get(&s->subs, uri) != NULL)
		return;
	strmap_add(&s->subs, uri, up);
	if (up->sc->isolation == ISOLATION_SHARED)
		route_subcount_add(up, uri, 1);
}

/*
 * resources/subscribe and unsubscribe.  A shared upstream holds one
 * subscription per URI for all sessions: the first subscriber subscribes
 * it and the last one to leave unsubscribes it.
 */
static void
route_subscription(struct session *s, struct stream *st, const struct jrpc *m,
    int subscribe)
{
	static const char *const path[] = { "uri", NULL };
	struct upstream	*up, *had;
	struct pending	*p;
	char		*u;
	int		 shared;

	if ((u = route_get_uri(st, m, path, &up)) == NULL)
		return;
	shared = up->sc->isolation == ISOLATION_SHARED;
	had = strmap_get(&s->subs, u);
	if (subscribe) {
		if (had != NULL || (shared && route_subcount(up, u) > 0)) {
			route_subscribed(s, up, u);
			route_result(st, m, "{}", 2);
			free(u);
			return;
		}
	} else {
		if (had == NULL) {
			route_result(st, m, "{}", 2);
			free(u);
			return;
		}
		strmap_del(&s->subs, u);
		if (shared) {
			route_subcount_add(up, u, -1);
			if (route_subcount(up, u) > 0) {
				route_result(st, m, "{}", 2);
				free(u);
				return;
			}
		}
	}
	if ((p = route_forward(s, st, m, up, NULL, 0)) != NULL) {
		p->hook = subscribe ? HOOK_SUBSCRIBE : HOOK_UNSUBSCRIBE;
		p->uri = u;
	} else
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

	if (jscan_path(m->p, m->params, ref_type, &type) != 0) {
		route_reject(st, m, JRPC_INVALID_PARAMS,
		    "completion/complete: params.ref.type is required");
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

/* Answer a list request from the merged catalog. */
static void
route_list(struct stream *st, const struct jrpc *m, enum catalog_kind kind)
{
	struct jspan	 cursor;
	const char	*text;
	size_t		 len;

	/* The merged list is one page, so no cursor of ours exists. */
	if (jscan_member(m->p, m->params, "cursor", &cursor) == 0 &&
	    jscan_type(m->p, cursor) != JT_NULL) {
		route_reject(st, m, JRPC_INVALID_PARAMS, "invalid cursor");
		return;
	}
	text = catalog_list(kind, &len);
	route_result(st, m, text, len);
}

/* Forward the most verbose level any session asked for to an upstream. */
static void
route_forward_level(struct upstream *up, struct session *s)
{
	int	level;

	if (!upstream_has_capability(up, "logging"))
		return;
	if (up->sc->isolation == ISOLATION_PER_SESSION) {
		route_internal(up, s, "logging/setLevel", json_pack("{s:s}",
		    "level", log_level_name(s->loglevel)));
		return;
	}
	level = session_min_loglevel();
	if (level < 0 || level == up->loglevel)
		return;
	up->loglevel = level;
	route_internal(up, NULL, "logging/setLevel", json_pack("{s:s}",
	    "level", log_level_name(level)));
}

/* logging/setLevel: filter for this session, and tell the upstreams. */
static void
route_set_level(struct session *s, struct stream *st, const struct jrpc *m)
{
	struct jspan	level;
	char		name[32];
	int		i;
	size_t		n;

	if (jscan_member(m->p, m->params, "level", &level) != 0 ||
	    jscan_string(m->p, level, name, sizeof name) < 0 ||
	    (i = log_level_index(name)) < 0) {
		route_reject(st, m, JRPC_INVALID_PARAMS, "logging/setLevel: "
		    "level must be one of debug, info, notice, warning, "
		    "error, critical, alert, emergency");
		return;
	}
	s->loglevel = i;
	route_result(st, m, "{}", 2);
	for (n = 0; n < nupstreams; n++)
		route_forward_level(upstreams[n], s);
}

void
route_request(struct session *s, struct stream *st, const struct jrpc *m)
{
	static const char *const name[] = { "name", NULL };
	static const char *const uri[] = { "uri", NULL };
	const char	*method = m->method_name;

	session_touch(s);
	if (strcmp(method, "tools/call") == 0)
		route_named(s, st, m, CATALOG_TOOLS, name);
	else if (strcmp(method, "tools/list") == 0)
		route_list(st, m, CATALOG_TOOLS);
	else if (strcmp(method, "ping") == 0)
		route_result(st, m, "{}", 2);
	else if (strcmp(method, "resources/read") == 0)
		route_uri(s, st, m, uri);
	else if (strcmp(method, "resources/subscribe") == 0)
		route_subscription(s, st, m, 1);
	else if (strcmp(method, "resources/unsubscribe") == 0)
		route_subscription(s, st, m, 0);
	else if (strcmp(method, "resources/list") == 0)
		route_list(st, m, CATALOG_RESOURCES);
	else if (strcmp(method, "resources/templates/list") == 0)
		route_list(st, m, CATALOG_TEMPLATES);
	else if (strcmp(method, "prompts/list") == 0)
		route_list(st, m, CATALOG_PROMPTS);
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

/* Find a request we sent a session's client, by our id. */
static struct up_request *
route_find_up_request(struct session *s, const char *p, struct jspan id)
{
	struct up_request	*ur;
	int64_t			 v;

	if (jscan_int64(p, id, &v) != 0 || v <= 0)
		return (NULL);
	TAILQ_FOREACH(ur, &s->up_requests, session_entry) {
		if (ur->id == (uint64_t)v)
			return (ur);
	}
	return (NULL);
}

/* Free an upstream request record. */
static void
route_up_request_free(struct up_request *ur)
{
	TAILQ_REMOVE(&ur->up->up_requests, ur, up_entry);
	TAILQ_REMOVE(&ur->session->up_requests, ur, session_entry);
	ur->session->nup_requests--;
	event_free(ur->timer);
	free(ur->text);
	free(ur);
}

/* Answer an upstream's request with an error (to the worker). */
static void
route_up_error(struct upstream *up, uint32_t session, uint32_t ref, int code,
    const char *msg)
{
	struct evbuffer	*buf = evbuffer_new();
	char		 id[16];

	snprintf(id, sizeof id, "%u", ref);
	jrpc_add_error(buf, id, strlen(id), code, msg, NULL);
	upstream_send_buffer(up, MSG_UP_RESPONSE, session, ref, buf);
	evbuffer_free(buf);
}

/* Answer an upstream's request with a result (to the worker). */
static void
route_up_result(struct upstream *up, uint32_t session, uint32_t ref,
    const char *result)
{
	struct evbuffer	*buf = evbuffer_new();
	char		 id[16];

	snprintf(id, sizeof id, "%u", ref);
	jrpc_add_result(buf, id, strlen(id), result, strlen(result));
	upstream_send_buffer(up, MSG_UP_RESPONSE, session, ref, buf);
	evbuffer_free(buf);
}

/* Tell a client an upstream request is cancelled. */
static void
route_up_cancel_client(struct up_request *ur, const char *reason)
{
	struct evbuffer	*buf = evbuffer_new();

	evbuffer_add_printf(buf, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/cancelled\",\"params\":{\"requestId\":%" PRIu64
	    ",\"reason\":", ur->id);
	jscan_add_string(buf, reason, strlen(reason));
	evbuffer_add(buf, "}}", 2);
	stream_send(ur->stream, buf, 0);
	evbuffer_free(buf);
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
		route_pending_free(p);
		if (st != NULL)
			stream_abandon(st);
		return;
	}
	if ((ur = route_find_up_request(s, m->p, rid)) != NULL) {
		route_up_error(ur->up, s->no, ur->ref, JRPC_INTERNAL_ERROR,
		    "request cancelled by the client");
		route_up_request_free(ur);
		return;
	}
	log_debug("session %.8s: cancel of an unknown request", s->id);
}

/* Is there a strategy after the given one for this request? */
static int
route_has_next(const struct upstream *up, const struct jrpc *m, size_t i)
{
	return (strcmp(m->method_name, "elicitation/create") == 0 &&
	    i + 1 < up->sc->nelicitation);
}

/* The client answered a request an upstream sent it. */
static void
route_client_response(struct session *s, const struct jrpc *m)
{
	struct up_request	*ur;
	struct evbuffer		*buf;
	struct jrpc		 orig;
	const char		*why;
	char			 ref[16];

	if ((ur = route_find_up_request(s, m->p, m->id)) == NULL) {
		log_debug("session %.8s: response to no request of ours",
		    s->id);
		return;
	}
	if (m->kind == JRPC_ERROR && jrpc_scan(ur->text, ur->len, &orig,
	    &why) == 0 && route_has_next(ur->up, &orig, ur->strategy)) {
		log_info("session %.8s: client refused %s, trying the next "
		    "strategy", s->id, ur->method);
		route_up_strategies(ur->up, s, ur->stream, s->no, &orig,
		    ur->ref, ur->strategy + 1, "the client refused it", 0);
		route_up_request_free(ur);
		return;
	}
	if (m->n > ur->up->sc->max_message) {
		log_warnx("session %.8s: answer to %s of %zu bytes is over "
		    "upstream %s's max_message", s->id, ur->method, m->n,
		    ur->up->sc->name);
		route_up_error(ur->up, s->no, ur->ref, JRPC_INTERNAL_ERROR,
		    "the client's answer is larger than max_message");
		route_up_request_free(ur);
		return;
	}
	snprintf(ref, sizeof ref, "%u", ur->ref);
	buf = jscan_replace(m->p, m->n, m->id, ref, strlen(ref));
	upstream_send_buffer(ur->up, MSG_UP_RESPONSE, s->no, ur->ref, buf);
	evbuffer_free(buf);
	route_up_request_free(ur);
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
	    "s:{}}, s:{s:s, s:s, s:s}}",
	    "protocolVersion", s->version,
	    "capabilities",
	    "tools", "listChanged", 1,
	    "resources", "subscribe", 1, "listChanged", 1,
	    "prompts", "listChanged", 1,
	    "logging", "completions",
	    "serverInfo", "name", "mcp-supervisor", "title", "MCP Supervisor",
	    "version", PACKAGE_VERSION));
}

/* Take a frame's payload into a new buffer. */
static struct evbuffer *
route_payload(const struct frame_hdr *hdr, struct evbuffer *in)
{
	struct evbuffer	*payload = evbuffer_new();

	evbuffer_drain(in, FRAME_HDR_LEN);
	evbuffer_remove_buffer(in, payload, hdr->len);
	return (payload);
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
	if (p->stream != NULL)
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
	if (p != NULL && p->up == up)
		route_pending_fail(p, (int)code, text);
	json_decref(msg);
}

/* Can an event stream carry messages besides the response? */
static int
route_streams(const struct stream *st)
{
	return (st != NULL && st->kind != STREAM_JSON);
}

/* Where a message related to a request (or a session) should go. */
static struct stream *
route_target(struct upstream *up, const struct frame_hdr *hdr,
    struct session **sp)
{
	struct pending	*p;
	struct session	*s;

	*sp = NULL;
	if (hdr->tag != 0 && (p = u64map_get(&pending_by_tag,
	    hdr->tag)) != NULL && p->up == up && p->session != NULL) {
		*sp = p->session;
		if (route_streams(p->stream))
			return (p->stream);
		return (session_get_stream(p->session));
	}
	if (hdr->session != 0 && (s = session_by_no(hdr->session)) != NULL) {
		*sp = s;
		return (session_get_stream(s));
	}
	return (NULL);
}

/* Does a session want a log message of this level? */
static int
route_wants_log(const struct session *s, const struct jrpc *m)
{
	struct jspan	level;
	char		name[32];
	int		i;

	if (s->loglevel < 0)
		return (1);
	if (jscan_member(m->p, m->params, "level", &level) != 0 ||
	    jscan_string(m->p, level, name, sizeof name) < 0 ||
	    (i = log_level_index(name)) < 0)
		return (1);
	return (i >= s->loglevel);
}

/* Arguments for broadcasting a notification to sessions. */
struct route_bcast {
	struct upstream		*up;
	const struct jrpc	*m;
	const char		*uri;	/* resources/updated only */
};

/* Send a notification to one session if it wants it. */
static void
route_bcast_one(struct session *s, void *arg)
{
	struct route_bcast	*b = arg;
	struct evbuffer		*buf;

	if (!s->initialized)
		return;
	if (b->uri != NULL && strmap_get(&s->subs, b->uri) != b->up)
		return;
	if (b->uri == NULL && !route_wants_log(s, b->m))
		return;
	buf = evbuffer_new();
	evbuffer_add(buf, b->m->p, b->m->n);
	stream_send(session_get_stream(s), buf, 0);
	evbuffer_free(buf);
}

/* An upstream cancelled a request it sent a client. */
static void
route_up_cancelled(struct upstream *up, const struct jrpc *m)
{
	struct up_request	*ur;
	struct jspan		 rid, reason;
	int64_t			 ref;
	char			*why = NULL;

	if (jscan_member(m->p, m->params, "requestId", &rid) != 0 ||
	    jscan_int64(m->p, rid, &ref) != 0)
		return;
	TAILQ_FOREACH(ur, &up->up_requests, up_entry) {
		if (ur->ref == (uint32_t)ref)
			break;
	}
	if (ur == NULL)
		return;
	if (jscan_member(m->p, m->params, "reason", &reason) == 0)
		why = jscan_strdup(m->p, reason);
	route_up_cancel_client(ur, why != NULL ? why :
	    "cancelled by the upstream");
	free(why);
	route_up_request_free(ur);
}

/* A notification from an upstream. */
static void
route_notify(struct upstream *up, const struct frame_hdr *hdr,
    struct evbuffer *in)
{
	struct evbuffer		*payload;
	struct session		*s;
	struct stream		*st;
	struct route_bcast	 b;
	struct jrpc		 m;
	struct jspan		 uri;
	const char		*why;
	char			*u = NULL;

	payload = route_payload(hdr, in);
	if (jrpc_scan((const char *)evbuffer_pullup(payload, -1),
	    evbuffer_get_length(payload), &m, &why) != 0 ||
	    m.kind != JRPC_NOTIFICATION) {
		log_warnx("upstream %s: bad notification from worker",
		    up->sc->name);
		evbuffer_free(payload);
		return;
	}
	if (strcmp(m.method_name, "notifications/cancelled") == 0) {
		route_up_cancelled(up, &m);
		evbuffer_free(payload);
		return;
	}
	if (strcmp(m.method_name, "notifications/resources/updated") == 0 &&
	    jscan_member(m.p, m.params, "uri", &uri) == 0)
		u = jscan_strdup(m.p, uri);

	st = route_target(up, hdr, &s);
	if (st != NULL) {
		if ((u != NULL && strmap_get(&s->subs, u) != up) ||
		    (strcmp(m.method_name, "notifications/message") == 0 &&
		    !route_wants_log(s, &m)))
			log_debug("session %.8s: %s not wanted", s->id,
			    m.method_name);
		else
			stream_send(st, payload, 0);
	} else if (strcmp(m.method_name, "notifications/message") == 0 ||
	    u != NULL) {
		/* Not tied to a session: every session, as each wants. */
		b.up = up;
		b.m = &m;
		b.uri = u;
		session_foreach(route_bcast_one, &b);
	} else
		log_debug("upstream %s: %s for no session dropped",
		    up->sc->name, m.method_name);
	free(u);
	evbuffer_free(payload);
}

/* Does a session's client declare what a request needs? */
static int
route_client_can(struct session *s, const struct jrpc *m, char *why,
    size_t len)
{
	static const char *const mode_path[] = { "mode", NULL };
	json_t		*caps = s->client_caps, *c;
	struct jspan	 mode;
	const char	*method = m->method_name;

	if (strcmp(method, "sampling/createMessage") == 0) {
		c = json_object_get(caps, "sampling");
		if (c == NULL) {
			snprintf(why, len, "the client does not support "
			    "sampling");
			return (0);
		}
		if ((jscan_member(m->p, m->params, "tools", &mode) == 0 ||
		    jscan_member(m->p, m->params, "toolChoice", &mode) == 0) &&
		    json_object_get(c, "tools") == NULL) {
			snprintf(why, len, "the client does not support tool "
			    "use in sampling");
			return (0);
		}
		return (1);
	}
	if (strcmp(method, "elicitation/create") == 0) {
		c = json_object_get(caps, "elicitation");
		if (c == NULL) {
			snprintf(why, len, "the client does not support "
			    "elicitation");
			return (0);
		}
		if (jscan_path(m->p, m->params, mode_path, &mode) == 0 &&
		    jscan_string_equals(m->p, mode, "url")) {
			if (json_object_get(c, "url") == NULL) {
				snprintf(why, len, "the client does not "
				    "support URL-mode elicitation");
				return (0);
			}
		} else if (json_object_size(c) > 0 &&
		    json_object_get(c, "form") == NULL) {
			snprintf(why, len, "the client does not support "
			    "form-mode elicitation");
			return (0);
		}
		return (1);
	}
	if (strcmp(method, "roots/list") == 0 &&
	    json_object_get(caps, "roots") == NULL) {
		snprintf(why, len, "the client does not support roots");
		return (0);
	}
	return (1);
}

/*
 * The defaults strategy: accept a form elicitation with the default of
 * every property that has one.  NULL if a required property has none (or
 * it is not a form).
 */
static char *
route_elicit_defaults(const struct jrpc *m)
{
	json_t		*params, *schema, *props, *prop, *req, *content, *v;
	const char	*key, *mode;
	char		*text = NULL;
	size_t		 i;

	params = json_loadb(m->p + m->params.off, m->params.len, 0, NULL);
	if (json_unpack(params, "{s:s}", "mode", &mode) == 0 &&
	    strcmp(mode, "form") != 0)
		goto out;
	schema = json_object_get(params, "requestedSchema");
	props = json_object_get(schema, "properties");
	if (!json_is_object(props))
		goto out;
	content = json_object();
	json_object_foreach(props, key, prop) {
		if ((v = json_object_get(prop, "default")) != NULL)
			json_object_set(content, key, v);
	}
	json_array_foreach(json_object_get(schema, "required"), i, req) {
		if (!json_is_string(req) || json_object_get(content,
		    json_string_value(req)) == NULL) {
			json_decref(content);
			goto out;
		}
	}
	v = json_pack("{s:s, s:o}", "action", "accept", "content", content);
	text = json_dumps(v, JSON_COMPACT);
	json_decref(v);
out:
	json_decref(params);
	return (text);
}

/* An upstream request timed out waiting for the client. */
static void	route_up_timeout_cb(evutil_socket_t, short, void *);

/* Forward an upstream request to its client; 0 if sent. */
static int
route_up_to_client(struct upstream *up, struct session *s, struct stream *st,
    const struct jrpc *m, uint32_t ref, size_t strategy, char *why,
    size_t len, int *code)
{
	struct up_request	*ur;
	struct evbuffer		*buf;
	struct timeval		 tv;
	char			 idtext[32];

	if (s == NULL || st == NULL) {
		snprintf(why, len, "the gateway cannot tell which client this "
		    "request is for (a shared upstream asked while no client, "
		    "or more than one, had a call in flight)");
		*code = JRPC_INTERNAL_ERROR;
		return (-1);
	}
	if (!route_client_can(s, m, why, len)) {
		*code = JRPC_METHOD_NOT_FOUND;
		return (-1);
	}
	if (s->nup_requests >= conf->max_pending) {
		snprintf(why, len, "too many requests waiting for the client");
		*code = MCP_OVERLOADED;
		return (-1);
	}
	ur = xcalloc(1, sizeof *ur);
	ur->id = ++next_up_id;
	ur->ref = ref;
	ur->session = s;
	ur->up = up;
	ur->stream = st;
	ur->strategy = strategy;
	ur->len = m->n;
	ur->text = xmalloc(m->n);
	memcpy(ur->text, m->p, m->n);
	snprintf(ur->method, sizeof ur->method, "%s", m->method_name);
	TAILQ_INSERT_TAIL(&up->up_requests, ur, up_entry);
	TAILQ_INSERT_TAIL(&s->up_requests, ur, session_entry);
	s->nup_requests++;
	ur->timer = evtimer_new(base, route_up_timeout_cb, ur);
	tv.tv_sec = up->sc->server_request_timeout;
	tv.tv_usec = 0;
	evtimer_add(ur->timer, &tv);

	snprintf(idtext, sizeof idtext, "%" PRIu64, ur->id);
	buf = jscan_replace(m->p, m->n, m->id, idtext, strlen(idtext));
	log_debug("upstream %s: %s to session %.8s", up->sc->name,
	    m->method_name, s->id);
	stream_send(st, buf, 0);
	evbuffer_free(buf);
	return (0);
}

/*
 * Answer a request from an upstream by its strategies, in order, from the
 * given one: forward it to the client that caused it, accept it with the
 * schema's defaults, or decline it.  Each strategy that cannot answer
 * passes to the next; when none can, the upstream gets an error.
 */
static void
route_up_strategies(struct upstream *up, struct session *s, struct stream *st,
    uint32_t session_no, const struct jrpc *m, uint32_t ref, size_t from,
    const char *already, int already_code)
{
	static const enum strategy	 client_only[] = { STRATEGY_CLIENT };
	const enum strategy		*list = client_only;
	size_t				 n = 1, i;
	char				 why[256], *text;
	int				 code = already_code != 0 ? already_code :
					    JRPC_METHOD_NOT_FOUND;

	snprintf(why, sizeof why, "%s", already != NULL ? already :
	    "no strategy can answer it");
	if (strcmp(m->method_name, "elicitation/create") == 0) {
		list = up->sc->elicitation;
		n = up->sc->nelicitation;
	}
	for (i = from; i < n; i++) {
		switch (list[i]) {
		case STRATEGY_CLIENT:
			if (route_up_to_client(up, s, st, m, ref, i, why,
			    sizeof why, &code) == 0)
				return;
			break;
		case STRATEGY_DEFAULTS:
			if ((text = route_elicit_defaults(m)) == NULL) {
				snprintf(why, sizeof why, "a required field "
				    "has no default");
				break;
			}
			log_info("upstream %s: %s answered with the schema's "
			    "defaults", up->sc->name, m->method_name);
			route_up_result(up, session_no, ref, text);
			free(text);
			return;
		case STRATEGY_DECLINE:
			log_info("upstream %s: %s declined by the gateway",
			    up->sc->name, m->method_name);
			route_up_result(up, session_no, ref,
			    "{\"action\":\"decline\"}");
			return;
		}
	}
	log_info("upstream %s: %s%s%s refused: %s", up->sc->name,
	    m->method_name, s != NULL ? " for session " : "",
	    s != NULL ? s->id : "", why);
	route_up_error(up, session_no, ref, code, why);
}

/* An upstream request timed out waiting for the client. */
static void
route_up_timeout_cb(evutil_socket_t fd, short events, void *arg)
{
	struct up_request	*ur = arg;
	struct jrpc		 m;
	const char		*why;
	char			 msg[256];

	snprintf(msg, sizeof msg, "the client did not answer %s within %u s",
	    ur->method, ur->up->sc->server_request_timeout);
	log_warnx("upstream %s: session %.8s: %s", ur->up->sc->name,
	    ur->session->id, msg);
	route_up_cancel_client(ur, "timed out at the gateway");
	if (jrpc_scan(ur->text, ur->len, &m, &why) == 0)
		route_up_strategies(ur->up, ur->session, ur->stream,
		    ur->session->no, &m, ur->ref, ur->strategy + 1, msg,
		    MCP_REQUEST_TIMEOUT);
	else
		route_up_error(ur->up, ur->session->no, ur->ref,
		    MCP_REQUEST_TIMEOUT, msg);
	route_up_request_free(ur);
}

/* A request from an upstream, for the client that caused it. */
static void
route_up_request(struct upstream *up, const struct frame_hdr *hdr,
    struct evbuffer *in)
{
	struct evbuffer		*payload;
	struct session		*s;
	struct stream		*st;
	struct jrpc		 m;
	const char		*why;
	int64_t			 ref;

	payload = route_payload(hdr, in);
	if (jrpc_scan((const char *)evbuffer_pullup(payload, -1),
	    evbuffer_get_length(payload), &m, &why) != 0 ||
	    m.kind != JRPC_REQUEST || jscan_int64(m.p, m.id, &ref) != 0 ||
	    ref <= 0 || ref > UINT32_MAX) {
		log_warnx("upstream %s: bad request from worker",
		    up->sc->name);
		evbuffer_free(payload);
		return;
	}
	st = route_target(up, hdr, &s);
	route_up_strategies(up, s, st, hdr->session, &m, (uint32_t)ref, 0,
	    NULL, 0);
	evbuffer_free(payload);
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
		route_up_cancel_client(ur, message);
		route_up_request_free(ur);
	}
	/* A new upstream process holds no subscriptions or level. */
	strmap_free(&up->subs);
	strmap_init(&up->subs);
	up->loglevel = -1;
}

/* Drop one session's subscriptions at an upstream. */
static void
route_forget_one(struct session *s, void *arg)
{
	struct strmap_entry	*e, *next;
	size_t			 i;

	for (i = 0; i < s->subs.nbuckets; i++) {
		for (e = s->subs.buckets[i]; e != NULL; e = next) {
			next = e->next;
			if (e->value == arg)
				strmap_del(&s->subs, e->key);
		}
	}
}

void
route_forget_upstream(struct upstream *up)
{
	session_foreach(route_forget_one, up);
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

/* Drop one subscription of an ending session. */
static void
route_drop_sub(struct session *s, const char *uri, struct upstream *up)
{
	if (up->sc->isolation != ISOLATION_SHARED)
		return;
	route_subcount_add(up, uri, -1);
	if (route_subcount(up, uri) == 0)
		route_internal(up, NULL, "resources/unsubscribe",
		    json_pack("{s:s}", "uri", uri));
}

void
route_session_end(struct session *s)
{
	struct up_request	*ur;
	struct strmap_entry	*e;
	size_t			 i;

	route_cancel_session(s);
	while ((ur = TAILQ_FIRST(&s->up_requests)) != NULL) {
		route_up_error(ur->up, s->no, ur->ref, MCP_CONNECTION_CLOSED,
		    "the client session ended");
		route_up_request_free(ur);
	}
	for (i = 0; i < s->subs.nbuckets; i++) {
		for (e = s->subs.buckets[i]; e != NULL; e = e->next)
			route_drop_sub(s, e->key, e->value);
	}
	/* Shared upstreams may now be quieter. */
	if (s->loglevel >= 0) {
		s->loglevel = -1;
		for (i = 0; i < nupstreams; i++) {
			if (upstreams[i]->sc->isolation == ISOLATION_SHARED)
				route_forward_level(upstreams[i], NULL);
		}
	}
}

/* Queue a list_changed notification for one session. */
static void
route_list_changed_one(struct session *s, void *arg)
{
	if (s->initialized)
		route_notify_stream(session_get_stream(s), arg, NULL);
}

void
route_list_changed(const char *method)
{
	log_debug("catalog: %s", method);
	session_foreach(route_list_changed_one, (void *)method);
}
