/* SPDX-License-Identifier: ISC */
/*
 * Requests whose token waits for its issuer (oauth_wait): for fresh keys
 * (a kid not yet known), or for the token's introspection.
 *
 * The requests that present one token while it is introspected share one
 * introspection, a flight: a busy client whose verdict ran out asks the
 * issuer once, not once per request in flight.  A flight ends when the
 * answer comes (each of its waiters is called back; the verdict is in the
 * cache by then), or when its last waiter goes (the introspection is
 * cancelled).  A waiter's callback always runs from the loop, never from
 * inside oauth_wait.
 */
#include "config.h"

#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "log.h"
#include "supervisor.h"
#include "oauth_priv.h"
#include "xmalloc.h"

#define OAUTH_WAIT_MAX		6	/* seconds, beyond idp.c's own bound */

struct oauth_flight;

/* One request waiting; owned by the waiter map. */
struct oauth_waiter {
	uint64_t		 handle;
	enum wait_kind		 kind;
	struct idp		*idp;
	uint64_t		 idp_handle;	/* keys: idp_refresh's */
	struct oauth_flight	*flight;	/* introspection, until it
						   answers or the wait ends */
	int			 answered;	/* nothing more to cancel */
	void			(*cb)(void *);
	void			*arg;
	struct event		*ev;		/* runs cb from the loop */
	TAILQ_ENTRY(oauth_waiter) entry;	/* its flight's */
};
TAILQ_HEAD(oauth_waiters, oauth_waiter);

/* One introspection and the waiters that share it; owned by the flight
 * map when mapped, else by its waiters. */
struct oauth_flight {
	unsigned char		 digest[32];	/* SHA-256 of the token */
	struct idp		*idp;
	uint64_t		 idp_handle;	/* idp_introspect's */
	int			 mapped;	/* in flights */
	struct oauth_waiters	 waiters;
};

static struct u64map	waiters;	/* handle -> waiter */
static struct u64map	flights;	/* digest's first 8 bytes -> flight */
static uint64_t		next_handle = 1;
static uint64_t		m_waits, m_shared;

/* A waiter is done: run its callback from the loop. */
static void
waiter_done(struct oauth_waiter *w)
{
	w->answered = 1;
	w->flight = NULL;
	event_active(w->ev, EV_TIMEOUT, 1);
}

/* Free a flight, no longer waited on or answered. */
static void
flight_free(struct oauth_flight *f)
{
	if (f->mapped)
		u64map_del(&flights, oauth_digest_key(f->digest));
	free(f);
}

/* A waiter leaves its flight; the last one cancels the introspection. */
static void
flight_leave(struct oauth_waiter *w)
{
	struct oauth_flight	*f = w->flight;

	if (f == NULL)
		return;
	w->flight = NULL;
	TAILQ_REMOVE(&f->waiters, w, entry);
	if (!TAILQ_EMPTY(&f->waiters))
		return;
	idp_wait_cancel(f->idp, f->idp_handle);
	flight_free(f);
}

/* Stop waiting for idp.c (unless answered) and free a waiter. */
static void
waiter_free(struct oauth_waiter *w)
{
	if (!w->answered) {
		if (w->kind == WAIT_INTROSPECTION)
			flight_leave(w);
		else
			idp_wait_cancel(w->idp, w->idp_handle);
	}
	u64map_del(&waiters, w->handle);
	event_free(w->ev);
	free(w);
}

/* The wait is over (answered, or too long): call back. */
static void
waiter_fire(evutil_socket_t fd, short events, void *arg)
{
	struct oauth_waiter	*w = arg;
	void			(*cb)(void *) = w->cb;
	void			*cbarg = w->arg;

	(void)fd;
	(void)events;
	if (!w->answered)
		log_warnx("oauth: no answer from the issuer's worker within "
		    "%d s", OAUTH_WAIT_MAX);
	waiter_free(w);
	cb(cbarg);
}

/* Fresh keys came, or will not yet. */
static void
waiter_keys(void *arg)
{
	waiter_done(arg);
}

/* A flight's answer: its verdict goes into the cache, its waiters on. */
static void
flight_introspected(void *arg, json_t *resp, const char *error)
{
	struct oauth_flight	*f = arg;
	struct oauth_waiter	*w;

	if (resp == NULL)
		log_warnx("oauth: introspection failed: %s",
		    error != NULL ? error : "no answer");
	oauth_introspected(f->idp, f->digest, resp);
	while ((w = TAILQ_FIRST(&f->waiters)) != NULL) {
		TAILQ_REMOVE(&f->waiters, w, entry);
		waiter_done(w);
	}
	flight_free(f);
}

/* The flight a waiter for a token's introspection joins, new or not. */
static struct oauth_flight *
flight_join(struct oauth_waiter *w, const char *token, size_t len,
    const unsigned char digest[32])
{
	struct oauth_flight	*f;
	uint64_t		 key = oauth_digest_key(digest);
	char			*copy;

	f = u64map_get(&flights, key);
	if (f != NULL && f->idp == w->idp &&
	    memcmp(f->digest, digest, sizeof f->digest) == 0) {
		m_shared++;
		TAILQ_INSERT_TAIL(&f->waiters, w, entry);
		return (f);
	}
	f = xcalloc(1, sizeof *f);
	memcpy(f->digest, digest, sizeof f->digest);
	f->idp = w->idp;
	TAILQ_INIT(&f->waiters);
	TAILQ_INSERT_TAIL(&f->waiters, w, entry);
	/* Another token with the same key (2^-64) is not shared. */
	if (u64map_get(&flights, key) == NULL) {
		u64map_put(&flights, key, f);
		f->mapped = 1;
	}
	/* len bytes: a header value holds no NUL (http_parse.c). */
	copy = xstrndup(token, len);
	f->idp_handle = idp_introspect(f->idp, copy, flight_introspected, f);
	explicit_bzero(copy, len);
	free(copy);
	if (f->idp_handle == 0) {
		/* No introspection at this issuer: decide without. */
		TAILQ_REMOVE(&f->waiters, w, entry);
		flight_free(f);
		return (NULL);
	}
	return (f);
}

uint64_t
oauth_wait(const char *token, size_t len, void (*cb)(void *), void *arg)
{
	struct oauth_waiter	*w;
	struct timeval		 tv = { OAUTH_WAIT_MAX, 0 };
	unsigned char		 digest[32];

	w = xcalloc(1, sizeof *w);
	w->handle = next_handle++;
	oauth_pending_need(&w->kind, &w->idp);
	w->cb = cb;
	w->arg = arg;
	w->ev = evtimer_new(base, waiter_fire, w);
	evtimer_add(w->ev, &tv);
	u64map_put(&waiters, w->handle, w);
	m_waits++;
	if (w->kind == WAIT_INTROSPECTION) {
		oauth_token_digest(token, len, digest);
		if ((w->flight = flight_join(w, token, len, digest)) == NULL)
			waiter_done(w);
	} else
		w->idp_handle = idp_refresh(w->idp, waiter_keys, w);
	return (w->handle);
}

void
oauth_wait_cancel(uint64_t handle)
{
	struct oauth_waiter	*w;

	if (handle == 0 || (w = u64map_get(&waiters, handle)) == NULL)
		return;
	waiter_free(w);
}

size_t
oauth_waiting(void)
{
	return (waiters.count);
}

uint64_t
oauth_waits_total(void)
{
	return (m_waits);
}

uint64_t
oauth_waits_shared(void)
{
	return (m_shared);
}

void
oauth_waits_clear(void)
{
	size_t		 pos = 0;
	uint64_t	 k;
	void		*v;

	while (u64map_next(&waiters, &pos, &k, &v)) {
		waiter_free(v);
		pos = 0;
	}
	u64map_free(&waiters);
	u64map_free(&flights);
}
