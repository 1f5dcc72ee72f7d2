/* SPDX-License-Identifier: ISC */
/*
 * Notifications from upstreams (progress, logs, resource updates,
 * cancellations) to the sessions they belong to; list_changed and logs
 * for every session go through broadcast.c.
 */
#include "config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "log.h"
#include "meta.h"
#include "supervisor.h"
#include "xmalloc.h"

/* Arguments for sending a resource update to its subscribers. */
struct route_bcast {
	struct upstream		*up;
	const struct jrpc	*m;
	const char		*uri;
};

/* Send a notification (method and params as JSON text) on a stream. */
void
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

/* Can an event stream carry messages besides the response? */
static int
route_streams(const struct stream *st)
{
	return (st != NULL && st->kind != STREAM_JSON);
}

/* Where a message related to a request (or a session) should go. */
struct stream *
route_target(struct upstream *up, const struct frame_hdr *hdr,
    struct session **sp)
{
	struct pending	*p;
	struct session	*s;

	*sp = NULL;
	if (hdr->tag != 0 && (p = route_pending_find(hdr->tag)) != NULL &&
	    p->up == up && p->session != NULL) {
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

/* A log message's level: its index, or -1 if it has none we know. */
static int
route_log_level(const struct jrpc *m)
{
	struct jspan	level;
	char		name[32];

	if (jscan_member(m->p, m->params, "level", &level) != 0 ||
	    jscan_string(m->p, level, name, sizeof name) < 0)
		return (-1);
	return (log_level_index(name));
}

/* Does a session want a log message of this level? */
static int
route_wants_log(const struct session *s, const struct jrpc *m)
{
	int	i;

	if (s->loglevel < 0 || (i = route_log_level(m)) < 0)
		return (1);
	return (i >= s->loglevel);
}

/* Send a resource update to one session if it subscribed. */
static void
route_bcast_one(struct session *s, void *arg)
{
	struct route_bcast	*b = arg;
	struct evbuffer		*buf;

	if (s->modern && b->uri != NULL)
		listen_resource_updated(s, b->up, b->uri);
	if (!s->initialized || strmap_get(&s->subs, b->uri) != b->up ||
	    !acl_hears_uri(s, b->up, b->uri))
		return;
	buf = evbuffer_new();
	evbuffer_add(buf, b->m->p, b->m->n);
	stream_send(session_get_stream(s), buf, 0);
	evbuffer_free(buf);
}

/* Send a resource update to a principal's listens that want it, unless
 * it subscribed there (then it had it with the subscribers). */
static void
route_listens_one(struct session *s, void *arg)
{
	struct route_bcast	*b = arg;

	if (strmap_get(&s->subs, b->uri) != b->up)
		listen_resource_updated(s, b->up, b->uri);
}

/*
 * A notification for a 2026-07-28 session: progress and logs go on their
 * request's own stream (logs only at or above the level the request
 * asked for, none if it asked for none), resource updates to the listens
 * that want them; nothing goes anywhere else.
 */
static void
route_notify_modern(struct upstream *up, const struct frame_hdr *hdr,
    struct session *s, struct stream *st, const struct jrpc *m,
    struct evbuffer *payload, const char *uri)
{
	static const char *const token_path[] = { "progressToken", NULL };
	struct pending	*p;
	struct jspan	 level, token;
	struct evbuffer	*out;
	char		 name[32];
	ssize_t		 n;

	if (uri != NULL) {
		listen_resource_updated(s, up, uri);
		return;
	}
	if (st == NULL)
		return;
	if (m->method_id == MCPM_MESSAGE) {
		if (st->level < 0 || jscan_member(m->p, m->params, "level",
		    &level) != 0 || (n = jscan_string(m->p, level, name,
		    sizeof name)) < 0 || meta_log_level(name, (size_t)n) <
		    st->level)
			return;
	} else if (m->method_id != MCPM_PROGRESS)
		return;
	/* A call resumed by a retry reports under the retry's token. */
	if (hdr->tag != 0 && (p = route_pending_find(hdr->tag)) != NULL &&
	    p->rebound && p->token != NULL &&
	    jscan_path(m->p, m->params, token_path, &token) == 0) {
		out = jscan_replace(m->p, m->n, token, p->token, p->tokenlen);
		stream_send(st, out, 0);
		evbuffer_free(out);
		return;
	}
	stream_send(st, payload, 0);
}

/* A notification from an upstream. */
void
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
	if (m.method_id == MCPM_CANCELLED) {
		route_up_cancelled(up, &m);
		evbuffer_free(payload);
		return;
	}
	/* Progress of a request no longer in flight (cancelled, timed
	 * out, answered) names no active request: the spec drops it. */
	if (m.method_id == MCPM_PROGRESS && hdr->tag != 0 &&
	    route_pending_find(hdr->tag) == NULL) {
		log_debug("upstream %s: progress of a request no longer in "
		    "flight dropped", up->sc->name);
		evbuffer_free(payload);
		return;
	}
	if (m.method_id == MCPM_UPDATED &&
	    jscan_member(m.p, m.params, "uri", &uri) == 0)
		u = jscan_strdup(m.p, uri);

	st = route_target(up, hdr, &s);
	if (s != NULL && s->modern) {
		route_notify_modern(up, hdr, s, st, &m, payload, u);
		free(u);
		evbuffer_free(payload);
		return;
	}
	if (st != NULL) {
		if ((u != NULL && (strmap_get(&s->subs, u) != up ||
		    !acl_hears_uri(s, up, u))) ||
		    (m.method_id == MCPM_MESSAGE &&
		    !route_wants_log(s, &m)))
			log_debug("session %.8s: %s not wanted", s->id,
			    m.method_name);
		else
			stream_send(st, payload, 0);
	} else if (u != NULL) {
		/* Not tied to a session: every subscriber. */
		b.up = up;
		b.m = &m;
		b.uri = u;
		if (up->sc->isolation == ISOLATION_SHARED) {
			/* Its subscribers, not a walk of every session; and
			 * the principals' listens (few) as before. */
			route_subscribers_each(up, u, route_bcast_one, &b);
			session_modern_foreach(route_listens_one, &b);
		} else
			session_foreach(route_bcast_one, &b);
	} else if (m.method_id == MCPM_MESSAGE)
		/* Every session, as each wants, a slice at a time. */
		broadcast_log(m.p, m.n, route_log_level(&m));
	else
		log_debug("upstream %s: %s for no session dropped",
		    up->sc->name, m.method_name);
	free(u);
	evbuffer_free(payload);
}

/* Send a session a list_changed for each list that changed. */
static void
route_list_changed_send(struct session *s, int changed)
{
	if (s->modern) {
		listen_list_changed(s, changed);
		return;
	}
	if (!s->initialized)
		return;
	if (changed & (1 << CATALOG_TOOLS))
		route_notify_stream(session_get_stream(s),
		    "notifications/tools/list_changed", NULL);
	if (changed & ((1 << CATALOG_RESOURCES) | (1 << CATALOG_TEMPLATES)))
		route_notify_stream(session_get_stream(s),
		    "notifications/resources/list_changed", NULL);
	if (changed & (1 << CATALOG_PROMPTS))
		route_notify_stream(session_get_stream(s),
		    "notifications/prompts/list_changed", NULL);
}

void
route_list_changed(struct session *s, int changed)
{
	if (changed == 0)
		return;
	if (s != NULL)
		route_list_changed_send(s, changed);
	else
		broadcast_list_changed(changed);
}
