/* SPDX-License-Identifier: ISC */
/*
 * What the gateway holds at upstreams for its sessions: resource
 * subscriptions (one per URI at a shared upstream, counted) and logging
 * levels.
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
#include "supervisor.h"
#include "xmalloc.h"

#define ROUTE_MAX_SUBS	1024	/* resources/subscribe a session holds */

/* The sessions subscribed to a URI at a shared upstream (by number). */
static size_t
route_subcount(struct upstream *up, const char *uri)
{
	struct u64map	*m = strmap_get(&up->subs, uri);

	return (m != NULL ? m->count : 0);
}

/* Count a session in or out of a URI's subscribers at a shared upstream;
 * 1 if that changed anything. */
static int
route_subscriber(struct upstream *up, const char *uri, struct session *s,
    int in)
{
	struct u64map	*m = strmap_get(&up->subs, uri);

	if (in) {
		if (m == NULL) {
			m = xcalloc(1, sizeof *m);
			u64map_init(m);
			strmap_add(&up->subs, uri, m);
		}
		if (u64map_get(m, s->no) != NULL)
			return (0);
		u64map_put(m, s->no, s);
		return (1);
	}
	if (m == NULL || u64map_del(m, s->no) == NULL)
		return (0);
	if (m->count == 0) {
		strmap_del(&up->subs, uri);
		u64map_free(m);
		free(m);
	}
	return (1);
}

void
route_subs_clear(struct upstream *up)
{
	struct strmap_entry	*e;
	size_t			 i;

	for (i = 0; i < up->subs.nbuckets; i++) {
		for (e = up->subs.buckets[i]; e != NULL; e = e->next) {
			u64map_free(e->value);
			free(e->value);
		}
	}
	strmap_free(&up->subs);
	strmap_init(&up->subs);
}

void
route_subscribers_each(struct upstream *up, const char *uri,
    void (*fn)(struct session *, void *), void *arg)
{
	struct u64map	*m = strmap_get(&up->subs, uri);
	struct session	*s;
	uint64_t	*nos, no;
	size_t		 n = 0, pos = 0, i;
	void		*v;

	if (m == NULL)
		return;
	/* Numbers first: what fn does may change the set. */
	nos = xcalloc(m->count, sizeof *nos);
	while (n < m->count && u64map_next(m, &pos, &no, &v))
		nos[n++] = no;
	for (i = 0; i < n; i++)
		if ((s = session_by_no((uint32_t)nos[i])) != NULL)
			fn(s, arg);
	free(nos);
}

/*
 * Tell an upstream of a subscription, if it is ready.  One that is not
 * holds none: when it is, route_sub_renew tells it what its sessions
 * hold.
 */
static void
route_sub_tell(struct upstream *up, struct session *s, enum mcp_method method,
    const char *uri)
{
	if (up->state != UPSTREAM_READY)
		return;
	route_internal(up, s, method, json_pack("{s:s}", "uri", uri));
}

/* Record a session's subscription. */
void
route_subscribed(struct session *s, struct upstream *up, const char *uri)
{
	if (strmap_get(&s->subs, uri) != NULL)
		return;
	strmap_add(&s->subs, uri, up);
	if (up->sc->isolation == ISOLATION_SHARED)
		route_subscriber(up, uri, s, 1);
}

/*
 * An unsubscribe for a URI the session is still subscribing to: its
 * subscribe is withdrawn (route_sub_undo once it is answered).  The
 * session's requests in flight are bounded.
 */
static void
route_withdraw(struct session *s, const char *uri)
{
	struct pending	*p;

	TAILQ_FOREACH(p, &s->pending, session_entry) {
		if (p->hook == HOOK_SUBSCRIBE && strcmp(p->uri, uri) == 0)
			p->hook = HOOK_WITHDRAWN;
	}
}

struct upstream *
route_sub_inflight(struct session *s, const char *uri)
{
	struct pending	*p;

	TAILQ_FOREACH(p, &s->pending, session_entry) {
		if (p->hook == HOOK_SUBSCRIBE && strcmp(p->uri, uri) == 0)
			return (p->up);
	}
	return (NULL);
}

/* Is a subscribe to a URI on its way to an upstream (for a session, or
 * for anyone with NULL), but for the one given? */
static int
route_subscribing(struct upstream *up, struct session *s, const char *uri,
    const struct pending *but)
{
	struct pending	*p;

	TAILQ_FOREACH(p, &up->pending, up_entry) {
		if (p != but && p->hook == HOOK_SUBSCRIBE &&
		    (s == NULL || p->session == s) &&
		    strcmp(p->uri, uri) == 0)
			return (1);
	}
	return (0);
}

void
route_sub_undo(struct pending *p)
{
	struct upstream	*up = p->up;
	struct session	*s = p->session;

	if (up->sc->isolation != ISOLATION_SHARED) {
		if (strmap_get(&s->subs, p->uri) != up &&
		    !route_subscribing(up, s, p->uri, p))
			route_sub_tell(up, s, MCPM_UNSUBSCRIBE, p->uri);
		return;
	}
	if (route_subcount(up, p->uri) == 0 &&
	    !route_subscribing(up, NULL, p->uri, p))
		route_sub_tell(up, NULL, MCPM_UNSUBSCRIBE, p->uri);
}

/*
 * resources/subscribe and unsubscribe.  A shared upstream holds one
 * subscription per URI for all sessions: the first subscriber subscribes
 * it and the last one to leave unsubscribes it.
 */
void
route_subscription(struct req *r, int subscribe)
{
	static const char *const path[] = { "uri", NULL };
	struct session	*s = r->session;
	struct upstream	*up, *had;
	struct pending	*p;
	char		*u;
	int		 shared;

	if ((u = subscribe ? route_get_uri(r, path, &up) :
	    route_held_uri(r, path, &up)) == NULL)
		return;
	shared = up->sc->isolation == ISOLATION_SHARED;
	had = strmap_get(&s->subs, u);
	if (subscribe) {
		/* Any URI a template admits is one more to hold. */
		if (had == NULL && s->subs.count >= ROUTE_MAX_SUBS) {
			log_warnx("session %.8s: resources/subscribe refused: "
			    "%d subscriptions held", s->id, ROUTE_MAX_SUBS);
			route_reject(r, MCP_OVERLOADED, "too many subscriptions "
			    "for this session (limit %d)", ROUTE_MAX_SUBS);
			free(u);
			return;
		}
		if (had != NULL || (shared && route_subcount(up, u) > 0)) {
			route_subscribed(s, up, u);
			route_result(r, "{}", 2);
			free(u);
			return;
		}
	} else {
		/* Its subscribes still on their way are withdrawn too. */
		route_withdraw(s, u);
		if (had == NULL) {
			route_result(r, "{}", 2);
			free(u);
			return;
		}
		strmap_del(&s->subs, u);
		/* The upstream that holds it, which may no longer list it. */
		up = had;
		shared = up->sc->isolation == ISOLATION_SHARED;
		if (shared)
			route_subscriber(up, u, s, 0);
		/*
		 * The gateway lets go at the upstream itself, past the
		 * traffic policy: refused, the session would have been
		 * dropped here and left subscribed there.
		 */
		if (!shared || (route_subcount(up, u) == 0 &&
		    !route_subscribing(up, NULL, u, NULL)))
			route_sub_tell(up, shared ? NULL : s,
			    MCPM_UNSUBSCRIBE, u);
		route_result(r, "{}", 2);
		free(u);
		return;
	}
	if ((p = route_forward(r, up, NULL, 0)) != NULL) {
		p->hook = HOOK_SUBSCRIBE;
		p->uri = u;
	} else
		free(u);
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
				route_subscriber(up, e->key, s, 1);
				continue;
			}
			if (shared)
				route_subscriber(up, e->key, s, 1);
			route_internal(up, shared ? NULL : s,
			    MCPM_SUBSCRIBE, json_pack("{s:s}", "uri",
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

/*
 * The gateway's setLevel to an upstream for a session (NULL: shared) that
 * is still pending, or NULL.  A session's pendings are bounded by
 * max_pending.
 */
static struct pending *
route_level_call(struct upstream *up, struct session *s)
{
	struct pending	*p;

	if (s == NULL)
		return (up->level_call);
	TAILQ_FOREACH(p, &s->pending, session_entry) {
		if (p->own && p->up == up && p->method == MCPM_SET_LEVEL)
			return (p);
	}
	return (NULL);
}

/*
 * Send an upstream a level: at most one setLevel of the gateway's is
 * pending per upstream and session, whatever a client sends.  One
 * waiting for its upstream to start takes the new level; one sent is
 * followed by another once it ends (route_level_ended).
 */
static void
route_send_level(struct upstream *up, struct session *s, int level)
{
	struct pending	*p;

	if ((p = route_level_call(up, s)) != NULL) {
		if (route_internal_retext(p, json_pack("{s:s}", "level",
		    log_level_name(level))) != 0)
			p->relevel = 1;
		return;
	}
	p = route_internal(up, s, MCPM_SET_LEVEL, json_pack("{s:s}", "level",
	    log_level_name(level)));
	if (s == NULL)
		up->level_call = p;
}

/* Forward the most verbose level any session asked for to an upstream. */
void
route_forward_level(struct upstream *up, struct session *s)
{
	int	level;

	if (!upstream_has_capability(up, "logging"))
		return;
	if (up->sc->isolation == ISOLATION_PER_SESSION) {
		route_send_level(up, s, s->loglevel);
		return;
	}
	level = session_min_loglevel();
	if (level < 0 || level == up->loglevel)
		return;
	up->loglevel = level;
	route_send_level(up, NULL, level);
}

void
route_level_ended(struct upstream *up, struct session *s, int relevel,
    int answered)
{
	/* Failed, what a shared upstream holds is not known: the next
	 * change is sent whatever it is. */
	if (!answered && s == NULL)
		up->loglevel = -1;
	if (!relevel)
		return;
	/* A reload may have changed the isolation since it was sent. */
	if (s != NULL) {
		if (up->sc->isolation == ISOLATION_PER_SESSION &&
		    s->loglevel >= 0)
			route_forward_level(up, s);
		return;
	}
	if (up->sc->isolation == ISOLATION_SHARED) {
		up->loglevel = -1;
		route_forward_level(up, NULL);
	}
}

/* logging/setLevel: filter for this session, and tell the upstreams. */
void
route_set_level(struct req *r)
{
	struct session		*s = r->session;
	const struct jrpc	*m = r->m;
	struct jspan		 level;
	char			 name[32];
	int			 i;
	size_t			 n;

	if (jscan_member(m->p, m->params, "level", &level) != 0 ||
	    jscan_string(m->p, level, name, sizeof name) < 0 ||
	    (i = log_level_index(name)) < 0) {
		route_reject(r, JRPC_INVALID_PARAMS, "logging/setLevel: "
		    "level must be one of debug, info, notice, warning, "
		    "error, critical, alert, emergency");
		return;
	}
	session_set_loglevel(s, i);
	route_result(r, "{}", 2);
	for (n = 0; n < nupstreams; n++) {
		/* A modern upstream gets the level on each request. */
		upstream_session_open(upstreams[n], s);
		route_forward_level(upstreams[n], s);
	}
}

/* A URI's subscription at an upstream, to forget. */
struct forget {
	struct upstream	*up;
	const char	*uri;
	uint32_t	*listening;	/* sessions with listens (owned) */
	size_t		 n, size;
};

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
	if (!LIST_EMPTY(&s->listens))
		listen_upstream_gone(s, arg);
}

/* Drop one subscriber's subscription to a URI at an upstream. */
static void
route_forget_sub(struct session *s, void *arg)
{
	struct forget	*f = arg;

	if (strmap_get(&s->subs, f->uri) == f->up)
		strmap_del(&s->subs, f->uri);
	/* Its listens end once every record is gone (a session may be
	 * here once per URI: ending its listens again does nothing). */
	if (!LIST_EMPTY(&s->listens)) {
		if (f->n == f->size) {
			f->size = f->size == 0 ? 16 : f->size * 2;
			f->listening = xreallocarray(f->listening, f->size,
			    sizeof *f->listening);
		}
		f->listening[f->n++] = s->no;
	}
}

/*
 * An upstream is removed: its sessions' subscriptions end.  A shared
 * upstream's subscribers are known by URI, so this walks them, not every
 * session, unless its sets are not whole yet (it became shared by a
 * reload and has not been ready since).
 */
void
route_forget_upstream(struct upstream *up)
{
	struct session		*s;
	struct forget		 f;
	struct strmap_entry	*e;
	size_t			 i;

	if (up->sc->isolation != ISOLATION_SHARED || !up->subs_whole) {
		session_foreach(route_forget_one, up);
		return;
	}
	/* Only the sessions' records change, not the sets. */
	memset(&f, 0, sizeof f);
	f.up = up;
	for (i = 0; i < up->subs.nbuckets; i++) {
		for (e = up->subs.buckets[i]; e != NULL; e = e->next) {
			f.uri = e->key;
			route_subscribers_each(up, e->key, route_forget_sub,
			    &f);
		}
	}
	for (i = 0; i < f.n; i++) {
		if ((s = session_by_no(f.listening[i])) != NULL)
			listen_upstream_gone(s, up);
	}
	free(f.listening);
}

/* Drop one subscription of an ending session. */
static void
route_drop_sub(struct session *s, const char *uri, struct upstream *up)
{
	if (up->sc->isolation != ISOLATION_SHARED)
		return;
	if (route_subscriber(up, uri, s, 0) && route_subcount(up, uri) == 0)
		route_sub_tell(up, NULL, MCPM_UNSUBSCRIBE, uri);
}

/* Subscribe a shared upstream that is ready again to each URI it had. */
static void
route_resubscribe_uris(struct upstream *up)
{
	struct strmap_entry	*e;
	char			**uris;
	size_t			  i, n = 0;

	/* The URIs first: a send that fails may change the map. */
	uris = xcalloc(up->subs.count + 1, sizeof *uris);
	for (i = 0; i < up->subs.nbuckets; i++) {
		for (e = up->subs.buckets[i]; e != NULL; e = e->next)
			uris[n++] = xstrdup(e->key);
	}
	for (i = 0; i < n; i++) {
		route_sub_tell(up, NULL, MCPM_SUBSCRIBE, uris[i]);
		free(uris[i]);
	}
	free(uris);
}

/*
 * An upstream is ready (again): tell it the level and the subscriptions
 * its sessions hold.  A shared upstream's subscribers are kept by URI
 * across its restarts, so this costs a request per URI, not a walk of
 * every session (2 to 5 ms at 100,000); they are rebuilt from the
 * sessions' own records only when the upstream became shared.
 */
void
route_sub_renew(struct upstream *up)
{
	up->loglevel = -1;
	if (up->sc->isolation == ISOLATION_SHARED) {
		route_forward_level(up, NULL);
		if (up->subs_whole) {
			route_resubscribe_uris(up);
			return;
		}
		route_subs_clear(up);
		session_foreach(route_resubscribe_one, up);
		up->subs_whole = 1;
		return;
	}
	route_subs_clear(up);
	up->subs_whole = 0;
	session_foreach(route_level_one, up);
	session_foreach(route_resubscribe_one, up);
}

void
route_sub_session_end(struct session *s)
{
	struct strmap_entry	*e;
	size_t			 i;

	for (i = 0; i < s->subs.nbuckets; i++) {
		for (e = s->subs.buckets[i]; e != NULL; e = e->next)
			route_drop_sub(s, e->key, e->value);
	}
	/* None is held any more: its listens, closed after this, let go
	 * of nothing (a per-session instance ends with the session). */
	strmap_free(&s->subs);
	strmap_init(&s->subs);
	strmap_free(&s->listen_subs);
	strmap_init(&s->listen_subs);
	/* Shared upstreams may now be quieter. */
	if (s->loglevel >= 0) {
		session_set_loglevel(s, -1);
		for (i = 0; i < nupstreams; i++) {
			if (upstreams[i]->sc->isolation == ISOLATION_SHARED)
				route_forward_level(upstreams[i], NULL);
		}
	}
}

/*
 * A 2026-07-28 listen wants a resource's updates: the session's first
 * listen for the URI subscribes as resources/subscribe would (a shared
 * upstream once for everyone), counted per session so that the last
 * listen to let go unsubscribes.  The subscription is in the session's
 * subs, so an upstream that restarts is subscribed again.
 */
struct upstream *
route_sub_acquire(struct session *s, struct upstream *up, const char *uri)
{
	uintptr_t	 n = (uintptr_t)strmap_get(&s->listen_subs, uri);
	int		 shared = up->sc->isolation == ISOLATION_SHARED;
	struct upstream	*had;

	strmap_del(&s->listen_subs, uri);
	strmap_add(&s->listen_subs, uri, (void *)(n + 1));
	/* Held already (by another listen), unless its upstream went. */
	if ((had = strmap_get(&s->subs, uri)) != NULL)
		return (had);
	route_subscribed(s, up, uri);
	if (!shared || route_subcount(up, uri) == 1)
		route_sub_tell(up, shared ? NULL : s, MCPM_SUBSCRIBE, uri);
	return (up);
}

void
route_sub_release(struct session *s, const char *uri)
{
	uintptr_t	 n = (uintptr_t)strmap_get(&s->listen_subs, uri);
	struct upstream	*up;

	if (n == 0)
		return;
	strmap_del(&s->listen_subs, uri);
	if (n > 1) {
		strmap_add(&s->listen_subs, uri, (void *)(n - 1));
		return;
	}
	/* Let go where it is held. */
	if ((up = strmap_get(&s->subs, uri)) == NULL)
		return;
	strmap_del(&s->subs, uri);
	if (up->sc->isolation != ISOLATION_SHARED) {
		route_sub_tell(up, s, MCPM_UNSUBSCRIBE, uri);
		return;
	}
	route_drop_sub(s, uri, up);
}
