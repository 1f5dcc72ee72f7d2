/* SPDX-License-Identifier: ISC */
/*
 * A session's view of the catalog.  A per-session upstream runs one
 * instance per client session, told that client's capabilities, and what
 * it lists can depend on them (a server that only offers its sampling
 * tools to clients that can sample).  So a session with per-session
 * upstreams sees those upstreams as its own instances list them: each
 * instance's catalog is a part of the session's view, beside the shared
 * upstreams' catalogs.  Requests that need the catalog wait (bounded, for
 * at most the instance's init_timeout) until the session's parts are in.
 * Sessions whose parts are the same share one view, and the parts
 * themselves (a session's part is the view's once they are found equal),
 * so memory grows with the number of distinct lists, not of sessions.
 *
 * A change of the shared upstreams' catalogs makes every view stale.  A
 * session's view is brought up to date by its next request that needs
 * the catalog, or by a walk over the sessions, VIEW_REBUILD_SLICE per
 * turn of the loop, whichever comes first; either tells the session what
 * changed.  Rebuilding them all at once held the loop for 622 ms at
 * 10,000 sessions with a per-session upstream of 20 tools.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "log.h"
#include "supervisor.h"
#include "xmalloc.h"

#define VIEW_REBUILD_SLICE	32	/* sessions brought up to date a turn */

enum part_state {
	PART_WANTED = 0,	/* to ask for once the upstream is ready */
	PART_ASKED,		/* SESSION_CATALOG sent */
	PART_HAVE,		/* the instance's catalog is in */
	PART_FAILED		/* none will come: the upstream is left out */
};

/* One per-session upstream's part of a session's view. */
struct view_part {
	struct upstream		*up;
	enum part_state		 state;
	json_t			*catalog;	/* PART_HAVE */
	uint64_t		 hash;		/* PART_HAVE: of its canonical
						   text */
	char			*error;		/* PART_FAILED: why */
	int			 code;		/* and its error code, or 0 */
	char			*data;		/* and data (JSON), or NULL */
	int64_t			 failed_at;	/* monotonic ms */
	struct session		*session;	/* whose it is */
	TAILQ_ENTRY(view_part)	 entry;		/* the session's */
	TAILQ_ENTRY(view_part)	 up_entry;	/* the upstream's */
};

/* A request waiting for its session's view; its text is a copy. */
struct view_wait {
	struct stream		*stream;	/* NULL once freed */
	char			*text;
	size_t			 len;
	struct reqobs		 obs;
	TAILQ_ENTRY(view_wait)	 entry;
};

/* A view, shared by the sessions whose parts are the same. */
struct view {
	char			*key;
	unsigned int		 refs;		/* sessions */
	unsigned int		 gen;		/* generation it was built at */
	uint64_t		 serial;	/* never reused */
	size_t			 nparts;
	struct upstream		**ups;		/* per-session upstreams */
	json_t			**cats;		/* their parts, or NULL */
	struct catalog		*cat;
	/* What a session of no endpoint is told when it moves from this view
	 * to the view diff_to (a serial), or 0 for none yet. */
	uint64_t		 diff_to;
	int			 diff_bits;
};

static struct strmap	views;		/* key -> view of this generation */
static int		views_ready;
static unsigned int	generation = 1;	/* bumped when the shared parts
					   change: every view is stale */
static uint64_t		view_serial;
static struct session_walk rebuild;	/* bringing views up to date */

static void	view_rebuild_one(struct session *, void *);

/* Is an upstream served by per-session instances? */
static int
view_per_session(const struct upstream *up)
{
	return (up->sc->isolation == ISOLATION_PER_SESSION &&
	    !up->proc.removed);
}

/* The session's part for an upstream, or NULL. */
static struct view_part *
view_find_part(struct session *s, const struct upstream *up)
{
	struct view_part	*vp;

	TAILQ_FOREACH(vp, &s->parts, entry) {
		if (vp->up == up)
			return (vp);
	}
	return (NULL);
}

/* Free a view (no session holds it any more). */
static void
view_free(struct view *v)
{
	size_t	i;

	for (i = 0; i < v->nparts; i++)
		json_decref(v->cats[i]);
	free(v->ups);
	free(v->cats);
	catalog_unref(v->cat);
	free(v->key);
	free(v);
}

/* Add a session's part of an upstream, listed there too. */
static struct view_part *
view_part_new(struct session *s, struct upstream *up)
{
	struct view_part	*vp;

	vp = xcalloc(1, sizeof *vp);
	vp->up = up;
	vp->session = s;
	TAILQ_INSERT_TAIL(&up->parts, vp, up_entry);
	TAILQ_INSERT_TAIL(&s->parts, vp, entry);
	return (vp);
}

/* Free a part (off its session's list). */
static void
view_part_free(struct view_part *vp)
{
	TAILQ_REMOVE(&vp->up->parts, vp, up_entry);
	json_decref(vp->catalog);
	free(vp->error);
	free(vp->data);
	free(vp);
}

/* Drop a session's parts of upstreams no longer per-session; 1 if any. */
static int
view_drop_shared(struct session *s)
{
	struct view_part	*vp, *next;
	int			 dropped = 0;

	for (vp = TAILQ_FIRST(&s->parts); vp != NULL; vp = next) {
		next = TAILQ_NEXT(vp, entry);
		if (view_per_session(vp->up))
			continue;
		TAILQ_REMOVE(&s->parts, vp, entry);
		view_part_free(vp);
		dropped = 1;
	}
	return (dropped);
}

/* Let go of a session's hold on a view. */
static void
view_put(struct view *v)
{
	if (v == NULL || --v->refs > 0)
		return;
	if (strmap_get(&views, v->key) == v)
		strmap_del(&views, v->key);
	view_free(v);
}

/* Build a view's catalog from its parts and the shared upstreams'. */
static void
view_build(struct view *v)
{
	json_t	**parts;
	size_t	  i, j;

	parts = xcalloc(nupstreams + 1, sizeof *parts);
	for (i = 0; i < nupstreams; i++) {
		if (!view_per_session(upstreams[i])) {
			parts[i] = upstreams[i]->catalog;
			continue;
		}
		for (j = 0; j < v->nparts; j++) {
			if (v->ups[j] == upstreams[i])
				parts[i] = v->cats[j];
		}
	}
	catalog_unref(v->cat);
	v->cat = catalog_build(parts, 0);
	free(parts);
}

/*
 * The key of a session's parts: for each per-session upstream, its name
 * and the hash of its part's canonical text.
 */
static char *
view_key(struct session *s)
{
	struct evbuffer		*buf = evbuffer_new();
	struct view_part	*vp;
	char			*key;
	size_t			 i, len;

	for (i = 0; i < nupstreams; i++) {
		if (!view_per_session(upstreams[i]))
			continue;
		vp = view_find_part(s, upstreams[i]);
		evbuffer_add_printf(buf, "%s=", upstreams[i]->sc->name);
		if (vp != NULL && vp->state == PART_HAVE)
			evbuffer_add_printf(buf, "%016" PRIx64, vp->hash);
		else
			evbuffer_add(buf, "-", 1);
		evbuffer_add(buf, ";", 1);
	}
	len = evbuffer_get_length(buf);
	key = xmalloc(len + 1);
	evbuffer_remove(buf, key, len);
	key[len] = '\0';
	evbuffer_free(buf);
	return (key);
}

/* Does a view hold exactly the session's parts? */
static int
view_matches(const struct view *v, struct session *s)
{
	struct view_part	*vp;
	size_t			 i;

	for (i = 0; i < v->nparts; i++) {
		vp = view_find_part(s, v->ups[i]);
		if (vp == NULL || vp->state != PART_HAVE) {
			if (v->cats[i] != NULL)
				return (0);
		} else if (v->cats[i] == NULL || (v->cats[i] != vp->catalog &&
		    !json_equal(v->cats[i], vp->catalog)))
			return (0);
	}
	return (1);
}

/* Let the session's parts be the view's own (they are equal). */
static void
view_share(const struct view *v, struct session *s)
{
	struct view_part	*vp;
	size_t			 i;

	for (i = 0; i < v->nparts; i++) {
		if (v->cats[i] == NULL ||
		    (vp = view_find_part(s, v->ups[i])) == NULL ||
		    vp->catalog == v->cats[i])
			continue;
		json_decref(vp->catalog);
		vp->catalog = json_incref(v->cats[i]);
	}
}

/*
 * The view of this generation under a key (borrowed), or NULL.  A stale
 * one leaves the map (its sessions still hold it) for the one built in its
 * place.
 */
static struct view *
view_lookup(const char *key)
{
	struct view	*v;

	if ((v = strmap_get(&views, key)) == NULL || v->gen == generation)
		return (v);
	strmap_del(&views, key);
	return (NULL);
}

/* Find or make the view of a session's parts (a new reference). */
static struct view *
view_get(struct session *s)
{
	struct view		*v;
	struct view_part	*vp;
	char			*key, *alt;
	size_t			 i, n = 0;

	if (!views_ready) {
		strmap_init(&views);
		session_walk_init(&rebuild, view_rebuild_one, NULL,
		    VIEW_REBUILD_SLICE);
		views_ready = 1;
	}
	key = view_key(s);
	if ((v = view_lookup(key)) != NULL && !view_matches(v, s)) {
		/* Two parts hashed alike: keep this one apart. */
		xasprintf(&alt, "%s#%u", key, s->no);
		free(key);
		key = alt;
		/* Its own, from parts it no longer has: built afresh. */
		if ((v = view_lookup(key)) != NULL && !view_matches(v, s)) {
			strmap_del(&views, key);
			v = NULL;
		}
	}
	if (v != NULL) {
		free(key);
		view_share(v, s);
		v->refs++;
		return (v);
	}
	v = xcalloc(1, sizeof *v);
	v->key = key;
	v->refs = 1;
	v->gen = generation;
	v->serial = ++view_serial;
	for (i = 0; i < nupstreams; i++)
		n += view_per_session(upstreams[i]);
	v->ups = xcalloc(n + 1, sizeof *v->ups);
	v->cats = xcalloc(n + 1, sizeof *v->cats);
	for (i = 0; i < nupstreams; i++) {
		if (!view_per_session(upstreams[i]))
			continue;
		v->ups[v->nparts] = upstreams[i];
		vp = view_find_part(s, upstreams[i]);
		if (vp != NULL && vp->state == PART_HAVE)
			v->cats[v->nparts] = json_incref(vp->catalog);
		v->nparts++;
	}
	view_build(v);
	strmap_add(&views, v->key, v);
	return (v);
}

/* Move a session to the view of its current parts; tell it what changed. */
static void
view_update(struct session *s)
{
	struct view	*old = s->view;
	int		 changed;

	/* Without per-session upstreams a session sees the global catalog. */
	s->view = TAILQ_EMPTY(&s->parts) ? NULL : view_get(s);
	if (s->view != old) {
		/* Every session of a view moves to the same next one: what
		 * changed is found once for those of no endpoint. */
		if (old != NULL && s->view != NULL && s->vep == NULL &&
		    old->diff_to == s->view->serial)
			changed = old->diff_bits;
		else
			changed = catalog_diff_by(old != NULL ? old->cat :
			    catalog_global(), view_catalog(s), s->vep);
		if (old != NULL && s->view != NULL && s->vep == NULL) {
			old->diff_to = s->view->serial;
			old->diff_bits = changed;
		}
		if (s->view == NULL)
			broadcast_view_left(s);
		if (s->listed)
			route_list_changed(s, changed);
	}
	view_put(old);
}

struct catalog *
view_catalog(struct session *s)
{
	return (s->view != NULL ? s->view->cat : catalog_global());
}

/* Does the session still wait for a part? */
static int
view_pending(struct session *s)
{
	struct view_part	*vp;

	TAILQ_FOREACH(vp, &s->parts, entry) {
		if (vp->state == PART_WANTED || vp->state == PART_ASKED)
			return (1);
	}
	return (0);
}

/* Ask an upstream's worker for the session's part. */
static void
view_ask(struct session *s, struct view_part *vp)
{
	if (vp->up->state != UPSTREAM_READY || vp->up->proc.ch == NULL)
		return;
	if (upstream_send(vp->up, MSG_SESSION_CATALOG, s->no, 0, "{}",
	    2) == 0)
		vp->state = PART_ASKED;
}

/*
 * Give up on a part: the session's view leaves its upstream out.  logged:
 * what the log says of why (a user's login message holds its URL).
 */
static void
view_fail(struct session *s, struct view_part *vp, const char *why,
    const char *logged)
{
	log_warnx("session %.8s: upstream %s is left out of its lists: %s",
	    s->id, vp->up->sc->name, logged);
	free(vp->error);
	vp->error = xstrdup(why);
	free(vp->data);
	vp->data = NULL;
	vp->code = 0;
	vp->state = PART_FAILED;
	vp->failed_at = now_ms();
	json_decref(vp->catalog);
	vp->catalog = NULL;
}

/* Answer the requests that waited for the view, in order. */
static void
view_flush(struct session *s)
{
	TAILQ_HEAD(, view_wait)	 list;
	struct view_wait	*w;
	struct jrpc		 m;
	const char		*why;
	uint32_t		 no = s->no;

	if (s->view_timer != NULL)
		evtimer_del(s->view_timer);
	TAILQ_INIT(&list);
	TAILQ_CONCAT(&list, &s->waiting, entry);
	s->nwaiting = 0;
	/* What waited is answered now: it asks for no part again. */
	s->view_flushing = 1;
	while ((w = TAILQ_FIRST(&list)) != NULL) {
		TAILQ_REMOVE(&list, w, entry);
		/* A request may end the session (never today; be safe). */
		if (w->stream != NULL && session_by_no(no) == s &&
		    jrpc_scan(w->text, w->len, &m, &why) == 0)
			route_resume(s, w->stream, &m, &w->obs);
		obs_end(&w->obs, OBS_CANCELLED, 0);
		free(w->text);
		free(w);
	}
	if (session_by_no(no) == s)
		s->view_flushing = 0;
}

/* The parts took too long: go on without the ones missing. */
static void
view_timeout_cb(evutil_socket_t fd, short events, void *arg)
{
	struct session		*s = arg;
	struct view_part	*vp;
	char			 why[128];

	TAILQ_FOREACH(vp, &s->parts, entry) {
		if (vp->state != PART_WANTED && vp->state != PART_ASKED)
			continue;
		snprintf(why, sizeof why, "its instance did not list its "
		    "catalog within %u s",
		    vp->up->sc->init_timeout + INIT_GRACE);
		view_fail(s, vp, why, why);
	}
	view_update(s);
	view_flush(s);
}

/*
 * Make sure every per-session upstream has a part; 1 if one is pending.
 * A list asks again for the parts that failed.
 */
static int
view_parts(struct session *s, int retry)
{
	struct view_part	*vp;
	struct upstream		*up;
	size_t			 i;
	int			 pending = 0;

	for (i = 0; i < nupstreams; i++) {
		up = upstreams[i];
		if (!view_per_session(up))
			continue;
		if ((vp = view_find_part(s, up)) == NULL)
			vp = view_part_new(s, up);
		/* A failed part is asked again by a list, or once its
		 * upstream restarted. */
		if (vp->state == PART_FAILED && up->state == UPSTREAM_READY &&
		    !s->view_flushing &&
		    (retry || up->proc.ready_at > vp->failed_at))
			vp->state = PART_WANTED;
		if (vp->state == PART_WANTED) {
			upstream_use(up);
			if (up->state == UPSTREAM_READY)
				view_ask(s, vp);
			else if (up->state != UPSTREAM_STARTING)
				view_fail(s, vp, "it is not running",
				    "it is not running");
		}
		if (vp->state == PART_WANTED || vp->state == PART_ASKED)
			pending = 1;
	}
	return (pending);
}

/* Has one of the session's parts failed? */
static int
view_any_failed(struct session *s)
{
	struct view_part	*vp;

	TAILQ_FOREACH(vp, &s->parts, entry) {
		if (vp->state == PART_FAILED)
			return (1);
	}
	return (0);
}

int
view_retry(struct req *r, struct upstream *up)
{
	struct session		*s = r->session;
	struct view_part	*vp;

	if ((vp = view_find_part(s, up)) == NULL ||
	    vp->state != PART_FAILED || s->view_flushing ||
	    up->state != UPSTREAM_READY)
		return (0);
	vp->state = PART_WANTED;
	s->view_gen = 0;
	return (view_defer(r));
}

const char *
view_part_error(struct session *s, struct upstream *up)
{
	struct view_part	*vp;

	if ((vp = view_find_part(s, up)) == NULL || vp->state != PART_FAILED)
		return (NULL);
	return (vp->error);
}

const char *
view_part_error_data(struct session *s, struct upstream *up, int *code)
{
	struct view_part	*vp;

	if ((vp = view_find_part(s, up)) == NULL || vp->state != PART_FAILED ||
	    vp->data == NULL)
		return (NULL);
	*code = vp->code;
	return (vp->data);
}

int
view_cancel(struct session *s, const char *id, size_t idlen)
{
	struct view_wait	*w;
	struct stream		*st;
	struct jrpc		 m;
	const char		*why;

	TAILQ_FOREACH(w, &s->waiting, entry) {
		if (jrpc_scan(w->text, w->len, &m, &why) == 0 &&
		    m.id.len == idlen && memcmp(m.p + m.id.off, id, idlen) == 0)
			break;
	}
	if (w == NULL)
		return (0);
	TAILQ_REMOVE(&s->waiting, w, entry);
	s->nwaiting--;
	log_debug("session %.8s: cancelled %s while it waited for the "
	    "session's upstream instances", s->id, m.method_name);
	obs_end(&w->obs, OBS_CANCELLED, 0);
	st = w->stream;
	free(w->text);
	free(w);
	if (st != NULL)
		stream_abandon(st);
	return (1);
}

int
view_defer(struct req *r)
{
	struct session		*s = r->session;
	const struct jrpc	*m = r->m;
	struct view_wait	*w;
	struct timeval		 tv = { 0, 0 };
	size_t			 i;
	unsigned int		 wait;
	int			 list = mcp_method_is(m->method_id,
				    MCPM_F_LIST);

	if (s->view_gen == generation && TAILQ_EMPTY(&s->waiting) &&
	    (!list || !view_any_failed(s)))
		return (0);
	view_drop_shared(s);
	if (!view_parts(s, list)) {
		/* A view of parts all dropped goes too. */
		if (!TAILQ_EMPTY(&s->parts) || s->view != NULL)
			view_update(s);
		s->view_gen = generation;
		s->listed = 1;
		return (0);
	}
	if (s->nwaiting >= conf->max_pending) {
		route_reject(r, MCP_OVERLOADED, "too many requests waiting "
		    "for this session's upstream instances to list their "
		    "catalogs (limit %u)", conf->max_pending);
		return (1);
	}
	w = xcalloc(1, sizeof *w);
	w->stream = r->stream;
	w->len = m->n;
	w->text = xmalloc(m->n);
	memcpy(w->text, m->p, m->n);
	req_take(r, &w->obs);
	TAILQ_INSERT_TAIL(&s->waiting, w, entry);
	s->nwaiting++;
	if (s->view_timer == NULL)
		s->view_timer = evtimer_new(base, view_timeout_cb, s);
	if (!evtimer_pending(s->view_timer, NULL)) {
		for (i = 0; i < nupstreams; i++) {
			wait = upstreams[i]->sc->init_timeout + INIT_GRACE;
			if (view_per_session(upstreams[i]) &&
			    wait > (unsigned int)tv.tv_sec)
				tv.tv_sec = wait;
		}
		evtimer_add(s->view_timer, &tv);
	}
	return (1);
}

/* The hash of a part's canonical text. */
static uint64_t
view_hash(const json_t *catalog)
{
	char		*text;
	uint64_t	 h;

	if ((text = json_dumps(catalog, JSON_COMPACT | JSON_SORT_KEYS)) ==
	    NULL)
		return (0);
	h = fnv1a64(text, strlen(text));
	free(text);
	return (h);
}

void
view_part(struct upstream *up, uint32_t session, json_t *msg)
{
	struct session		*s;
	struct view_part	*vp;
	const char		*error;
	int			 login;

	if ((s = session_by_no(session)) == NULL || !view_per_session(up))
		return;
	if ((vp = view_find_part(s, up)) == NULL)
		vp = view_part_new(s, up);
	if (json_unpack(msg, "{s:s}", "error", &error) == 0) {
		if (vp->state == PART_HAVE)
			return;	/* keep what its last instance listed */
		/* A user must log in first (-32042): the client is told,
		 * the log is not (the URL's state is the user's). */
		login = json_is_integer(json_object_get(msg, "code")) &&
		    json_is_object(json_object_get(msg, "data"));
		view_fail(s, vp, error, login ? "its user must log in first "
		    "(the client has the link)" : error);
		if (login) {
			vp->code = (int)json_integer_value(json_object_get(msg,
			    "code"));
			vp->data = json_dumps(json_object_get(msg, "data"),
			    JSON_COMPACT);
		}
	} else {
		json_decref(vp->catalog);
		vp->catalog = json_incref(msg);
		vp->hash = view_hash(msg);
		vp->state = PART_HAVE;
	}
	if (view_pending(s))
		return;
	view_update(s);
	if (!TAILQ_EMPTY(&s->waiting))
		view_flush(s);
}

/* Ask for one session's wanted part at a ready upstream. */
/*
 * The parts of an upstream, with the session of each: a copy, as what is
 * done for one may end another session (answering its waiting requests).
 * The upstream's own list, not a walk of every session.
 */
static size_t
view_parts_of(struct upstream *up, struct view_part ***parts,
    uint32_t **nos)
{
	struct view_part	*vp;
	size_t			 n = 0;

	TAILQ_FOREACH(vp, &up->parts, up_entry)
		n++;
	*parts = xcalloc(n + 1, sizeof **parts);
	*nos = xcalloc(n + 1, sizeof **nos);
	n = 0;
	TAILQ_FOREACH(vp, &up->parts, up_entry) {
		(*parts)[n] = vp;
		(*nos)[n++] = vp->session->no;
	}
	return (n);
}

void
view_upstream_ready(struct upstream *up)
{
	struct view_part	*vp;

	if (!view_per_session(up))
		return;
	/* Asking sends a frame and nothing else. */
	TAILQ_FOREACH(vp, &up->parts, up_entry) {
		if (vp->state == PART_WANTED)
			view_ask(vp->session, vp);
	}
}

/* Give up on one session's pending part at an upstream that is down. */
static void
view_down_one(struct session *s, struct view_part *vp)
{
	if (vp->state != PART_WANTED && vp->state != PART_ASKED)
		return;
	view_fail(s, vp, "it stopped", "it stopped");
	if (view_pending(s))
		return;
	view_update(s);
	view_flush(s);
}

void
view_upstream_down(struct upstream *up)
{
	struct view_part	**parts;
	struct session		 *s;
	uint32_t		 *nos;
	size_t			  i, n;

	if (TAILQ_EMPTY(&up->parts))
		return;
	n = view_parts_of(up, &parts, &nos);
	for (i = 0; i < n; i++) {
		/* Its session still there, and with it its part. */
		if ((s = session_by_no(nos[i])) != NULL &&
		    view_find_part(s, up) == parts[i])
			view_down_one(s, parts[i]);
	}
	free(parts);
	free(nos);
}

/* Bring one session's view up to date (the shared parts changed). */
static void
view_rebuild_one(struct session *s, void *arg)
{
	if (view_drop_shared(s) || (s->view != NULL ?
	    s->view->gen != generation : !TAILQ_EMPTY(&s->parts)))
		view_update(s);
}

void
view_rebuild_all(void)
{
	generation++;
	if (!views_ready)
		return;
	/* The stale views are freed as their last session leaves them. */
	session_walk_begin(&rebuild);
}


/*
 * A stale view, or a part, may name an upstream a reload removed: once
 * every session is brought up to date none does (views of this generation
 * were built without it, and its parts are dropped).  Reloads are rare;
 * this is a walk of every session at once only while one is under way.
 */
void
view_upstream_gone(struct upstream *up)
{
	struct view_part	*vp;

	if (views_ready && rebuild.busy)
		session_walk_finish(&rebuild);
	/* Parts come before any view, and pending ones are not stale
	 * (view_upstream_down failed those when it was removed). */
	while ((vp = TAILQ_FIRST(&up->parts)) != NULL) {
		TAILQ_REMOVE(&vp->session->parts, vp, entry);
		view_part_free(vp);
	}
}

struct catalog *
view_catalog_fresh(struct session *s)
{
	if (s->view != NULL && s->view->gen != generation)
		view_rebuild_one(s, NULL);
	return (view_catalog(s));
}

void
view_session_end(struct session *s)
{
	struct view_part	*vp;
	struct view_wait	*w;

	while ((vp = TAILQ_FIRST(&s->parts)) != NULL) {
		TAILQ_REMOVE(&s->parts, vp, entry);
		view_part_free(vp);
	}
	while ((w = TAILQ_FIRST(&s->waiting)) != NULL) {
		TAILQ_REMOVE(&s->waiting, w, entry);
		obs_end(&w->obs, OBS_CANCELLED, 0);
		free(w->text);
		free(w);
	}
	s->nwaiting = 0;
	if (s->view_timer != NULL) {
		event_free(s->view_timer);
		s->view_timer = NULL;
	}
	view_put(s->view);
	s->view = NULL;
}

void
view_stream_gone(struct stream *st)
{
	struct view_wait	*w;

	TAILQ_FOREACH(w, &st->session->waiting, entry) {
		if (w->stream == st)
			w->stream = NULL;
	}
}
