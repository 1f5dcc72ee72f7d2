/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "log.h"
#include "supervisor.h"
#include "xmalloc.h"

static TAILQ_HEAD(session_list, session) sessions =
    TAILQ_HEAD_INITIALIZER(sessions);
static struct u64map		 by_key;	/* id's first 64 bits */
static struct u64map		 by_no;
static unsigned int		 nsessions;
static unsigned int		 nby_transport[OBS_NTRANSPORTS];

#define NLOG_LEVELS	8
static const char *const log_levels[NLOG_LEVELS + 1] = {
	"debug", "info", "notice", "warning", "error", "critical", "alert",
	"emergency", NULL
};
/* Sessions that asked for each level: the most verbose without a walk. */
static unsigned int		 nby_loglevel[NLOG_LEVELS];
static uint32_t			 next_no;
static uint64_t			 next_order;
static struct event		*sweep_timer;
static struct session_walk	 sweep;
static TAILQ_HEAD(, session_walk) walks = TAILQ_HEAD_INITIALIZER(walks);

#define SESSION_SWEEP_SLICE	1024	/* sessions looked at per loop turn */
static struct strmap		 modern_by_principal;	/* -> session */
static TAILQ_HEAD(, session)	 moderns = TAILQ_HEAD_INITIALIZER(moderns);
static unsigned int		 nmoderns;

void
session_walk_init(struct session_walk *w,
    void (*fn)(struct session *, void *), void *arg, unsigned int slice)
{
	memset(w, 0, sizeof *w);
	w->fn = fn;
	w->arg = arg;
	w->slice = slice;
}

static void	session_walk_slice(struct session_walk *);

static void
session_walk_cb(evutil_socket_t fd, short events, void *arg)
{
	session_walk_slice(arg);
}

/* Visit a slice of the sessions; on the next turn, the next. */
static void
session_walk_slice(struct session_walk *w)
{
	static const struct timeval	 now = { 0, 0 };
	struct session			*s;
	unsigned int			 n = 0;

	while ((s = w->next) != NULL && s->order < w->end &&
	    n++ < w->slice) {
		/* First: fn may end the session. */
		w->next = TAILQ_NEXT(s, entry);
		w->fn(s, w->arg);
		if (!w->busy)
			return;
	}
	if (w->next == NULL || w->next->order >= w->end) {
		if (!w->wraps) {
			session_walk_stop(w);
			return;
		}
		w->wraps = 0;
		w->next = TAILQ_FIRST(&sessions);
		w->end = w->wrap_end;
	}
	/* A timer, not event_active: the loop polls between slices. */
	if (w->ev == NULL)
		w->ev = evtimer_new(base, session_walk_cb, w);
	evtimer_add(w->ev, &now);
}

void
session_walk_begin(struct session_walk *w)
{
	if (w->busy && w->next != NULL && w->next->order < w->end) {
		/* From here to the last, then from the first to here. */
		w->wraps = 1;
		w->wrap_end = w->next->order;
		w->end = next_order + 1;
		return;		/* its next slice is due */
	}
	if (!w->busy)
		TAILQ_INSERT_TAIL(&walks, w, entry);
	w->busy = 1;
	w->wraps = 0;
	w->next = TAILQ_FIRST(&sessions);
	w->end = next_order + 1;
	session_walk_slice(w);
}

void
session_walk_stop(struct session_walk *w)
{
	if (!w->busy)
		return;
	TAILQ_REMOVE(&walks, w, entry);
	w->busy = 0;
	w->wraps = 0;
	w->next = NULL;
	if (w->ev != NULL) {
		event_free(w->ev);
		w->ev = NULL;
	}
}

void
session_walk_finish(struct session_walk *w)
{
	struct session	*s;

	for (;;) {
		while (w->busy && (s = w->next) != NULL && s->order < w->end) {
			/* First: fn may end the session. */
			w->next = TAILQ_NEXT(s, entry);
			w->fn(s, w->arg);
		}
		if (!w->busy || !w->wraps)
			break;
		w->wraps = 0;
		w->next = TAILQ_FIRST(&sessions);
		w->end = w->wrap_end;
	}
	session_walk_stop(w);
}

int
session_walk_ahead(const struct session_walk *w, const struct session *s)
{
	if (!w->busy)
		return (0);
	return ((w->next != NULL && s->order >= w->next->order &&
	    s->order < w->end) || (w->wraps && s->order < w->wrap_end));
}

/* Expire a session idle too long, with nothing in flight or connected. */
static void
session_sweep_one(struct session *s, void *arg)
{
	struct stream	*st;
	int64_t		 t = now_ms();

	stream_expire(s, t);
	if (s->last_active > t - (int64_t)conf->session_timeout * 1000 ||
	    s->npending != 0 || s->nparked != 0 || s->nlistens != 0)
		return;
	TAILQ_FOREACH(st, &s->streams, entry) {
		if (st->conn != NULL)
			return;
	}
	session_free(s, "idle timeout");
}

/*
 * Begin a sweep for idle sessions, unless one is still going: a walk of
 * SESSION_SWEEP_SLICE sessions per turn of the loop, since with 100,000
 * sessions one walk over them all would hold the loop for tens of
 * milliseconds.
 */
static void
session_sweep_cb(evutil_socket_t fd, short events, void *arg)
{
	if (!sweep.busy)
		session_walk_begin(&sweep);
}

void
session_init(void)
{
	u64map_init(&by_key);
	u64map_init(&by_no);
	strmap_init(&modern_by_principal);
	sweep_timer = event_new(base, -1, EV_PERSIST, session_sweep_cb, NULL);
	session_walk_init(&sweep, session_sweep_one, NULL, SESSION_SWEEP_SLICE);
	session_configure();
}

/* Sweep for idle sessions a few times per session_timeout. */
void
session_configure(void)
{
	struct timeval	tv;
	unsigned int	period;

	period = conf->session_timeout / 4;
	if (period > 30)
		period = 30;
	if (period < 1)
		period = 1;
	tv.tv_sec = period;
	tv.tv_usec = 0;
	evtimer_add(sweep_timer, &tv);	/* Sessions are bound to endpoints: keep them in step. */
	vendpoint_configure();
}

/* Decode hex digits into a 64-bit key; -1 if not hex. */
static int
hex_key(const char *p, size_t len, uint64_t *key)
{
	size_t	i;
	int	v;

	*key = 0;
	for (i = 0; i < len; i++) {
		if (p[i] >= '0' && p[i] <= '9')
			v = p[i] - '0';
		else if (p[i] >= 'a' && p[i] <= 'f')
			v = p[i] - 'a' + 10;
		else
			return (-1);
		*key = (*key << 4) | (uint64_t)v;
	}
	return (0);
}

static const char	*refusal;

const char *
session_refusal(void)
{
	return (refusal != NULL ? refusal : "no session");
}

/* Create a session for a peer; NULL if refused (the limit, or draining). */
struct session *
session_new(const char *peer, uint8_t transport)
{
	struct session	*s;
	unsigned char	 raw[16];
	size_t		 i;

	if (drain_active()) {
		refusal = "this instance is draining and takes no new "
		    "sessions; try again (another instance)";
		return (NULL);
	}
	if (nsessions >= conf->max_sessions) {
		log_warnx("session limit (%u) reached, refusing a session "
		    "for %s", conf->max_sessions, peer);
		metrics_refused("limit");
		refusal = "too many sessions, try again later";
		return (NULL);
	}
	s = xcalloc(1, sizeof *s);
	do {
		fill_random(raw, sizeof raw);
		for (i = 0; i < sizeof raw; i++)
			snprintf(s->id + 2 * i, 3, "%02x", raw[i]);
		hex_key(s->id, 16, &s->key);
	} while (u64map_get(&by_key, s->key) != NULL);
	/* The instance first, so a balancer routes by it (instance names
	 * hold no '.'): the id stays 128 random bits behind it. */
	snprintf(s->sid, sizeof s->sid, "%s.%s", conf->instance, s->id);
	do {
		if (++next_no == 0)
			next_no = 1;
	} while (u64map_get(&by_no, next_no) != NULL);
	s->no = next_no;
	s->order = ++next_order;
	s->loglevel = -1;
	s->transport = transport;
	s->last_active = s->created = now_ms();
	snprintf(s->peer, sizeof s->peer, "%s", peer);
	TAILQ_INIT(&s->pending);
	TAILQ_INIT(&s->up_requests);
	TAILQ_INIT(&s->streams);
	TAILQ_INIT(&s->parts);
	TAILQ_INIT(&s->waiting);
	TAILQ_INIT(&s->ctcalls_in);
	TAILQ_INIT(&s->ctcalls_out);
	strmap_init(&s->subs);
	strmap_init(&s->listen_subs);
	u64map_put(&by_key, s->key, s);
	u64map_put(&by_no, s->no, s);
	TAILQ_INSERT_TAIL(&sessions, s, entry);
	nsessions++;
	nby_transport[transport]++;
	broadcast_session_new(s);
	/* A session is the first use of lazy upstreams. */
	for (i = 0; i < nupstreams; i++)
		upstream_use(upstreams[i]);
	return (s);
}

/* End a session: cancel its requests, close its streams, tell workers. */
void
session_free(struct session *s, const char *why)
{
	struct stream		*st;
	struct session_walk	*w;
	size_t			 i;
	char			 principal[128];

	log_debug("session %.8s: closed (%s)", s->id, why);
	ctools_session_end(s);
	route_session_end(s);
	view_session_end(s);
	while ((st = TAILQ_FIRST(&s->streams)) != NULL)
		stream_free(st);
	for (i = 0; i < nupstreams; i++)
		upstream_send(upstreams[i], MSG_SESSION_CLOSE, s->no, 0, "{}",
		    2);
	u64map_del(&by_key, s->key);
	u64map_del(&by_no, s->no);
	if (s->modern) {
		session_principal(s, principal, sizeof principal);
		strmap_del(&modern_by_principal, principal);
		TAILQ_REMOVE(&moderns, s, modern_entry);
		nmoderns--;
	}
	vendpoint_unbind(s);
	broadcast_session_gone(s);
	TAILQ_FOREACH(w, &walks, entry)
		if (w->next == s)
			w->next = TAILQ_NEXT(s, entry);
	TAILQ_REMOVE(&sessions, s, entry);
	nsessions--;
	nby_transport[s->transport]--;
	session_set_loglevel(s, -1);
	drain_check();
	strmap_free(&s->subs);
	strmap_free(&s->listen_subs);
	free(s->client_name);
	oauth_grant_unref(s->grant);
	json_decref(s->client_caps);
	json_decref(s->client_info);
	trace_session_end(s);
	free(s);
}

void
session_free_all(void)
{
	struct session		*s;
	struct session_walk	*w;

	while ((s = TAILQ_FIRST(&sessions)) != NULL)
		session_free(s, "shutdown");
	broadcast_free_all();
	vendpoint_free_all();
	if (sweep_timer != NULL) {
		event_free(sweep_timer);
		sweep_timer = NULL;
	}
	while ((w = TAILQ_FIRST(&walks)) != NULL)
		session_walk_stop(w);
	u64map_free(&by_key);
	u64map_free(&by_no);
	strmap_free(&modern_by_principal);
}

/* Compare in time independent of where the strings differ. */
static int
equal_ct(const char *a, const char *b, size_t len)
{
	unsigned char	diff = 0;
	size_t		i;

	for (i = 0; i < len; i++)
		diff |= (unsigned char)(a[i] ^ b[i]);
	return (diff == 0);
}

/*
 * Find a session by the id clients see: "<instance>.<32 hex digits>".  The
 * hex part finds it; the whole id must then match, compared in constant
 * time (a session made before a reload that changed instance keeps its
 * id).
 */
struct session *
session_find(const char *id, size_t len)
{
	struct session	*s;
	uint64_t	 key;
	const char	*hex;

	if (len < 34 || len >= sizeof s->sid)
		return (NULL);
	hex = id + len - 32;
	if (hex[-1] != '.' || hex_key(hex, 16, &key) != 0)
		return (NULL);
	if ((s = u64map_get(&by_key, key)) == NULL)
		return (NULL);
	if (strlen(s->sid) != len || !equal_ct(s->sid, id, len))
		return (NULL);
	return (s);
}

void
session_principal(const struct session *s, char *buf, size_t len)
{
	snprintf(buf, len, "%016llx/%s", (unsigned long long)s->credential,
	    s->client_name != NULL ? s->client_name : "");
	/* Each endpoint's requests are a principal of their own. */
	if (s->vep != NULL)
		snprintf(buf + strlen(buf), len - strlen(buf), "@%016llx",
		    (unsigned long long)vendpoint_hash(s->vep));
}

/*
 * 2026-07-28 requests carry no session: each is whole.  The gateway still
 * needs somewhere to count a principal's requests in flight (max_pending),
 * to hold its parked calls and listens, and to key its per-session
 * upstream instances, so all of one principal's modern requests belong to
 * one internal session, never named to the client.  It declares every
 * capability to per-session instances (a request that lacks one is
 * answered -32021 when it is needed), is never sent broadcasts (its
 * listens are), and expires like any idle session.
 */
struct session *
session_modern(uint64_t credential, const char *client, struct vendpoint *vep,
    const char *peer)
{
	struct session	*s;
	char		 principal[128];
	size_t		 i;

	snprintf(principal, sizeof principal, "%016llx/%s",
	    (unsigned long long)credential, client != NULL ? client : "");
	if (vep != NULL)
		snprintf(principal + strlen(principal), sizeof principal -
		    strlen(principal), "@%016llx",
		    (unsigned long long)vendpoint_hash(vep));
	if ((s = strmap_get(&modern_by_principal, principal)) != NULL)
		return (s);
	if ((s = session_new(peer, OBS_T_HTTP)) == NULL)
		return (NULL);
	session_identity(s, credential, client);
	vendpoint_bind(s, vep);
	s->modern = 1;
	snprintf(s->version, sizeof s->version, "2026-07-28");
	s->client_caps = json_pack("{s:{s:{}}, s:{s:{}, s:{}}, s:{}}",
	    "sampling", "tools", "elicitation", "form", "url", "roots");
	s->client_info = json_pack("{s:s, s:s}", "name",
	    "2026-07-28 clients", "version", "-");
	strmap_add(&modern_by_principal, principal, s);
	TAILQ_INSERT_TAIL(&moderns, s, modern_entry);
	nmoderns++;
	for (i = 0; i < nupstreams; i++)
		upstream_session_open(upstreams[i], s);
	log_info("session %.8s: holds the 2026-07-28 requests of %s%s",
	    s->id, client != NULL ? "client " : "", client != NULL ? client :
	    (credential != 0 ? "a token" : "anonymous clients"));
	return (s);
}

struct session *
session_by_no(uint32_t no)
{
	return (u64map_get(&by_no, no));
}

void
session_identity(struct session *s, uint64_t credential, const char *client)
{
	s->credential = credential;
	free(s->client_name);
	s->client_name = client != NULL ? xstrdup(client) : NULL;
}

void
session_grant(struct session *s, struct oauth_grant *g)
{
	if (g == s->grant)
		return;
	oauth_grant_unref(s->grant);
	s->grant = oauth_grant_ref(g);
}

void
session_touch(struct session *s)
{
	s->last_active = now_ms();
}

unsigned int
session_count(void)
{
	return (nsessions);
}

void
session_modern_foreach(void (*fn)(struct session *, void *), void *arg)
{
	struct session	*s, *next;

	for (s = TAILQ_FIRST(&moderns); s != NULL; s = next) {
		next = TAILQ_NEXT(s, modern_entry);
		fn(s, arg);
	}
}

unsigned int
session_count_transport(uint8_t transport)
{
	return (nby_transport[transport]);
}

unsigned int
session_count_busy(void)
{
	struct session	*s;
	unsigned int	 n = nsessions - nmoderns;

	TAILQ_FOREACH(s, &moderns, modern_entry) {
		if (s->npending > 0 || s->nparked > 0 || s->nlistens > 0 ||
		    s->nup_requests > 0)
			n++;
	}
	return (n);
}

void
session_foreach(void (*fn)(struct session *, void *), void *arg)
{
	struct session	*s, *next;

	for (s = TAILQ_FIRST(&sessions); s != NULL; s = next) {
		next = TAILQ_NEXT(s, entry);
		fn(s, arg);
	}
}

struct session *
session_first(void)
{
	return (TAILQ_FIRST(&sessions));
}

struct session *
session_next(struct session *s)
{
	return (TAILQ_NEXT(s, entry));
}

struct session *
session_last(void)
{
	return (TAILQ_LAST(&sessions, session_list));
}

struct session *
session_prev(struct session *s)
{
	return (TAILQ_PREV(s, session_list, entry));
}

/*
 * Where messages not tied to a request go: the one stream of a legacy
 * (HTTP+SSE) or WebSocket session, else the standalone stream, created on
 * demand.
 */
struct stream *
session_get_stream(struct session *s)
{
	struct stream	*st;

	if (s->only != NULL)
		return (s->only);
	/* A modern session has no standalone stream: callers check. */
	if (s->modern)
		return (NULL);
	if ((st = stream_find(s, 0)) != NULL)
		return (st);
	return (stream_new(s, STREAM_GET, NULL));
}


int
log_level_index(const char *name)
{
	int	i;

	for (i = 0; log_levels[i] != NULL; i++) {
		if (strcmp(log_levels[i], name) == 0)
			return (i);
	}
	return (-1);
}

const char *
log_level_name(int i)
{
	if (i < 0 || i >= NLOG_LEVELS)
		return (NULL);
	return (log_levels[i]);
}

void
session_set_loglevel(struct session *s, int level)
{
	if (s->loglevel >= 0)
		nby_loglevel[s->loglevel]--;
	s->loglevel = level;
	if (level >= 0)
		nby_loglevel[level]++;
}

int
session_min_loglevel(void)
{
	int	level;

	for (level = 0; level < NLOG_LEVELS; level++)
		if (nby_loglevel[level] > 0)
			return (level);
	return (-1);
}
