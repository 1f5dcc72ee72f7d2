/* SPDX-License-Identifier: ISC */
/*
 * subscriptions/listen (2026-07-28): a long-lived POST whose event stream
 * carries the change notifications its request opted in to, each tagged
 * with the listen's id (io.modelcontextprotocol/subscriptionId), after a
 * first notifications/subscriptions/acknowledged saying what is honoured.
 * It replaces the GET stream and resources/subscribe: the URIs it names
 * are subscribed at their upstreams as a resources/subscribe would be
 * (route_sub_acquire), for as long as the stream stays open.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "log.h"
#include "meta.h"
#include "supervisor.h"
#include "xmalloc.h"

#define LISTEN_MAX_URIS		1024	/* resourceSubscriptions honoured */
#define LISTEN_URI_MAX		8192

struct listen {
	struct stream		*stream;
	struct session		*session;
	char			*id;		/* the request's id, raw */
	size_t			 idlen;
	int			 lists;		/* 1 << catalog kind */
	struct strmap		 uris;		/* uri -> upstream */
	TAILQ_ENTRY(listen)	 entry;		/* every listen */
	LIST_ENTRY(listen)	 in_session;	/* its session's */
};

static TAILQ_HEAD(, listen)	 listens = TAILQ_HEAD_INITIALIZER(listens);
/*
 * The listen sending, NULL once it is freed: a reader that does not keep
 * up is cut off as it is sent to (stream_check_reader), which ends a
 * modern stream, and its listen, at once.
 */
static struct listen		*sending;

/*
 * Send one notification on a listen, tagged with its subscription id; -1
 * if the listen is gone since (its reader cut off), and must not be used.
 */
static int
listen_send(struct listen *l, const char *method, const char *uri,
    const char *rest)
{
	struct evbuffer	*buf = evbuffer_new();

	evbuffer_add_printf(buf, "{\"jsonrpc\":\"2.0\",\"method\":\"%s\","
	    "\"params\":{\"_meta\":{\"" META_SUBSCRIPTION "\":", method);
	evbuffer_add(buf, l->id, l->idlen);
	evbuffer_add(buf, "}", 1);
	if (uri != NULL) {
		evbuffer_add(buf, ",\"uri\":", 7);
		jscan_add_string(buf, uri, strlen(uri));
	}
	if (rest != NULL)
		evbuffer_add_printf(buf, ",%s", rest);
	evbuffer_add(buf, "}}", 2);
	sending = l;
	stream_send(l->stream, buf, 0);
	evbuffer_free(buf);
	if (sending == NULL)
		return (-1);
	sending = NULL;
	return (0);
}

/* Read a boolean member of the filter; -1 if it is not one. */
static int
listen_flag(const char *p, struct jspan filter, const char *key, int *on)
{
	struct jspan	v;
	int		r;

	*on = 0;
	if ((r = jscan_member_unique(p, filter, key, &v)) == -1)
		return (0);
	if (r == -2 || (jscan_type(p, v) != JT_TRUE &&
	    jscan_type(p, v) != JT_FALSE))
		return (-1);
	*on = jscan_type(p, v) == JT_TRUE;
	return (0);
}

/* Has the session's token the scopes of an upstream (OAuth; a static
 * token is not held to them)? */
static int
listen_scoped(struct session *s, struct upstream *up)
{
	json_t	*refusal;

	if ((refusal = oauth_upstream_refusal(s, up)) == NULL)
		return (1);
	log_info("session %.8s: subscriptions/listen: a resource of upstream "
	    "%s left out: the token lacks its scopes", s->id, up->sc->name);
	json_decref(refusal);
	return (0);
}

void
listen_open(struct req *r)
{
	static const char *const names[] = { "toolsListChanged",
	    "promptsListChanged", "resourcesListChanged" };
	static const int	 kinds[] = { 1 << CATALOG_TOOLS,
	    1 << CATALOG_PROMPTS, (1 << CATALOG_RESOURCES) |
	    (1 << CATALOG_TEMPLATES) };
	struct session		*s = r->session;
	struct stream		*st = r->stream;
	const struct jrpc	*m = r->m;
	struct listen		*l;
	struct jspan		 filter, subs, v;
	struct jiter		 it;
	struct upstream		*up;
	struct evbuffer		*ack;
	static char		 uri[LISTEN_URI_MAX + 1];
	const char		*why;
	ssize_t			 len;
	size_t			 i, n = 0;
	int			 on, found, first = 1;

	if (st->kind != STREAM_LISTEN) {
		route_reject(r, JRPC_INVALID_REQUEST, "subscriptions/listen "
		    "is a 2026-07-28 request");
		return;
	}
	if ((found = jscan_member_unique(m->p, m->params, "notifications",
	    &filter)) != 0 || jscan_type(m->p, filter) != JT_OBJECT) {
		req_answered(r, OBS_REFUSED, JRPC_INVALID_PARAMS);
		modern_error(st, m->p + m->id.off, m->id.len,
		    JRPC_INVALID_PARAMS, NULL, "subscriptions/listen: "
		    "params.notifications must be an object");
		return;
	}
	/* Held until the session's view is whole (its per-session
	 * instances' resources too), as a list is. */
	if (s->nlistens >= conf->max_pending) {
		req_answered(r, OBS_REFUSED, MCP_OVERLOADED);
		modern_error(st, m->p + m->id.off, m->id.len, MCP_OVERLOADED,
		    NULL, "too many subscriptions/listen streams for this "
		    "client (limit %u)", conf->max_pending);
		return;
	}
	found = jscan_member_unique(m->p, filter, "resourceSubscriptions",
	    &subs);
	if (found == -2 || (found == 0 && jscan_type(m->p, subs) !=
	    JT_ARRAY)) {
		req_answered(r, OBS_REFUSED, JRPC_INVALID_PARAMS);
		modern_error(st, m->p + m->id.off, m->id.len,
		    JRPC_INVALID_PARAMS, NULL, "subscriptions/listen: "
		    "notifications.resourceSubscriptions must be an array");
		return;
	}
	l = xcalloc(1, sizeof *l);
	strmap_init(&l->uris);
	for (i = 0; i < 3; i++) {
		if (listen_flag(m->p, filter, names[i], &on) != 0) {
			strmap_free(&l->uris);
			free(l);
			req_answered(r, OBS_REFUSED, JRPC_INVALID_PARAMS);
			modern_error(st, m->p + m->id.off, m->id.len,
			    JRPC_INVALID_PARAMS, NULL, "subscriptions/listen: "
			    "notifications.%s must be a boolean", names[i]);
			return;
		}
		if (on)
			l->lists |= kinds[i];
	}
	ack = evbuffer_new();
	evbuffer_add_printf(ack, "\"notifications\":{");
	for (i = 0; i < 3; i++) {
		if (l->lists & kinds[i]) {
			evbuffer_add_printf(ack, "%s\"%s\":true", first ? "" :
			    ",", names[i]);
			first = 0;
		}
	}
	if (found == 0 && jscan_array(m->p, subs, &it) == 0) {
		evbuffer_add_printf(ack, "%s\"resourceSubscriptions\":[",
		    first ? "" : ",");
		first = 1;
		while (jscan_next_element(&it, &v)) {
			if ((len = jscan_string(m->p, v, uri,
			    sizeof uri)) < 0 || memchr(uri, '\0',
			    (size_t)len) != NULL)
				continue;
			/* Honoured: a URI the client may read, once, at an
			 * upstream that sends updates and whose scopes its
			 * token has. */
			if (n >= LISTEN_MAX_URIS ||
			    (up = catalog_resource(view_catalog(s), uri)) ==
			    NULL || acl_allows_uri(s, uri, &why) != 1 ||
			    strmap_get(&l->uris, uri) != NULL ||
			    !upstream_can_subscribe(up) ||
			    !listen_scoped(s, up))
				continue;
			/* Updates come from where the session holds it. */
			strmap_add(&l->uris, uri, route_sub_acquire(s, up,
			    uri));
			if (!first)
				evbuffer_add(ack, ",", 1);
			jscan_add_string(ack, uri, strlen(uri));
			first = 0;
			n++;
		}
		evbuffer_add(ack, "]", 1);
	}
	evbuffer_add(ack, "}", 2);	/* and a NUL */
	l->stream = st;
	l->session = s;
	l->idlen = m->id.len;
	l->id = xmalloc(l->idlen);
	memcpy(l->id, m->p + m->id.off, l->idlen);
	st->listen = l;
	s->nlistens++;
	TAILQ_INSERT_TAIL(&listens, l, entry);
	LIST_INSERT_HEAD(&s->listens, l, in_session);
	log_debug("session %.8s: subscriptions/listen open (%zu URIs)", s->id,
	    n);
	(void)listen_send(l, "notifications/subscriptions/acknowledged", NULL,
	    (const char *)evbuffer_pullup(ack, -1));
	evbuffer_free(ack);
}

void
listen_list_changed(struct session *s, int changed)
{
	static const char *const methods[] = {
		[CATALOG_TOOLS] = "notifications/tools/list_changed",
		[CATALOG_RESOURCES] = "notifications/resources/list_changed",
		[CATALOG_TEMPLATES] = "notifications/resources/list_changed",
		[CATALOG_PROMPTS] = "notifications/prompts/list_changed",
	};
	struct listen	*l, *next;
	int		 k, sent;

	/* Its own listens, not every principal's: a broadcast comes here
	 * once per session. */
	for (l = LIST_FIRST(&s->listens); l != NULL; l = next) {
		next = LIST_NEXT(l, in_session);
		sent = 0;
		for (k = 0; k < CATALOG_NKINDS; k++) {
			if (!(changed & l->lists & (1 << k)))
				continue;
			/* Resources and templates are one notification. */
			if (k == CATALOG_TEMPLATES &&
			    (sent & (1 << CATALOG_RESOURCES)))
				continue;
			if (listen_send(l, methods[k], NULL, NULL) != 0)
				break;
			sent |= 1 << k;
		}
	}
}

void
listen_resource_updated(struct session *s, struct upstream *up,
    const char *uri)
{
	struct listen	*l, *next;

	for (l = LIST_FIRST(&s->listens); l != NULL; l = next) {
		next = LIST_NEXT(l, in_session);
		if (strmap_get(&l->uris, uri) == up && acl_hears_uri(s, up, uri))
			(void)listen_send(l, "notifications/resources/updated",
			    uri, NULL);
	}
}

void
listen_stream_gone(struct stream *st)
{
	struct listen		*l = st->listen;
	struct strmap_entry	*e;
	size_t			 i;

	st->listen = NULL;
	for (i = 0; i < l->uris.nbuckets; i++) {
		for (e = l->uris.buckets[i]; e != NULL; e = e->next)
			route_sub_release(l->session, e->key);
	}
	strmap_free(&l->uris);
	TAILQ_REMOVE(&listens, l, entry);
	LIST_REMOVE(l, in_session);
	l->session->nlistens--;
	log_debug("session %.8s: subscriptions/listen closed",
	    l->session->id);
	if (sending == l)
		sending = NULL;
	free(l->id);
	free(l);
}

/* End a listen with its response, which tells the client the
 * subscription ended on purpose; the final message frees the stream, and
 * the listen. */
static void
listen_end(struct listen *l)
{
	struct evbuffer	*buf, *result;

	result = evbuffer_new();
	evbuffer_add_printf(result, "{\"resultType\":\"complete\","
	    "\"_meta\":{\"" META_SUBSCRIPTION "\":");
	evbuffer_add(result, l->id, l->idlen);
	evbuffer_add(result, "}}", 2);
	buf = evbuffer_new();
	jrpc_add_result(buf, l->id, l->idlen,
	    (const char *)evbuffer_pullup(result, -1),
	    evbuffer_get_length(result));
	evbuffer_free(result);
	stream_send(l->stream, buf, 1);
	evbuffer_free(buf);
}

/*
 * A reload removed an upstream: a listen holding a URI there hears it no
 * more, so it ends, and its client listens again to what is there now.
 * Its session's subscriptions there are forgotten first: it lets go of
 * nothing there.
 */
void
listen_upstream_gone(struct session *s, struct upstream *up)
{
	struct listen		*l, *next;
	struct strmap_entry	*e;
	size_t			 i;
	int			 held;

	for (l = LIST_FIRST(&s->listens); l != NULL; l = next) {
		next = LIST_NEXT(l, in_session);
		held = 0;
		for (i = 0; i < l->uris.nbuckets && !held; i++) {
			for (e = l->uris.buckets[i]; e != NULL; e = e->next)
				if (e->value == up)
					held = 1;
		}
		if (held) {
			log_info("session %.8s: subscriptions/listen ended: "
			    "upstream %s was removed", s->id, up->sc->name);
			listen_end(l);
		}
	}
}

/* The gateway is stopping: end every listen. */
void
listen_close_all(void)
{
	struct listen	*l;

	while ((l = TAILQ_FIRST(&listens)) != NULL)
		listen_end(l);
}
