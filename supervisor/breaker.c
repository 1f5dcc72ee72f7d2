/* SPDX-License-Identifier: ISC */
/*
 * An upstream's circuit breaker.  Closed, it counts the calls that failed
 * in a row: a gateway timeout, or the worker's FAIL of a call because the
 * upstream's connection failed, while the upstream is ready; any answer
 * (a result or an error the upstream chose to give) ends the run, and so
 * does breaker_window seconds passing since its first failure.  After
 * breaker_failures in a row it opens: calls fail fast (-32000, with the
 * seconds left in data.retryAfter) and those waiting for a slot fail too.
 * After breaker_cooldown seconds it is half-open: the next call is let
 * through as a probe while the others still fail fast; an answer to it
 * closes the breaker, a failure opens it again for another cool-down, and
 * a probe that ends otherwise (cancelled, its session gone, its upstream
 * restarting) lets the next call probe.
 *
 * Deaths of the upstream are not counted: its restart and backoff
 * (proc.c) already answer calls at once while it is down; nor are a
 * session's instance ending (FAIL "gone") and a call timing out while its
 * upstream waits on the call's client or sampling (route_up_waiting).
 * The breaker is about an upstream that is up and does not answer.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include <event2/event.h>

#include "log.h"
#include "supervisor.h"
#include "xmalloc.h"

static const char *const breaker_names[BREAKER_NSTATES] = {
	"closed", "open", "half-open"
};

static void	breaker_timer_cb(evutil_socket_t, short, void *);

const char *
breaker_state_name(enum breaker_state s)
{
	return ((unsigned int)s < BREAKER_NSTATES ? breaker_names[s] : "?");
}

void
breaker_init(struct upstream *up)
{
	up->breaker.timer = evtimer_new(base, breaker_timer_cb, up);
}

void
breaker_free(struct upstream *up)
{
	if (up->breaker.timer != NULL)
		event_free(up->breaker.timer);
	up->breaker.timer = NULL;
	free(up->breaker.last);
	up->breaker.last = NULL;
}

static void
breaker_arm(struct upstream *up, unsigned int seconds)
{
	struct timeval	tv;

	tv.tv_sec = seconds;
	tv.tv_usec = 0;
	evtimer_add(up->breaker.timer, &tv);
}

/*
 * The probe, if one is out, is an ordinary call from now on: the state it
 * probed is over, and its end must not free a later half-open's place.
 */
static void
breaker_unprobe(struct upstream *up)
{
	struct pending	*p;

	up->breaker.probing = 0;
	TAILQ_FOREACH(p, &up->pending, up_entry) {
		if (p->limit == LIMIT_PROBE)
			p->limit = LIMIT_CALL;
	}
}

/* Close it: calls go through, the count starts again. */
static void
breaker_close(struct upstream *up, const char *why)
{
	struct breaker	*b = &up->breaker;

	if (b->state != BREAKER_CLOSED)
		log_info("upstream %s: circuit breaker closed (%s)",
		    up->sc->name, why);
	b->state = BREAKER_CLOSED;
	b->failures = 0;
	breaker_unprobe(up);
	evtimer_del(b->timer);
}

void
breaker_configure(struct upstream *up, const struct traffic_conf *t)
{
	if (t->breaker_failures == 0)
		breaker_close(up, "breaker_failures is 0");
}

/* Seconds until the cool-down ends, at least 1. */
static unsigned int
breaker_retry_after(const struct upstream *up)
{
	int64_t	left = up->breaker.until - now_ms();

	if (up->breaker.state != BREAKER_OPEN || left < 1000)
		return (1);
	return ((unsigned int)((left + 999) / 1000));
}

/* Fail fast: why, and when to try again. */
static void
breaker_refuse(struct upstream *up, struct refusal *rf)
{
	struct breaker	*b = &up->breaker;
	unsigned int	 retry = breaker_retry_after(up);

	rf->code = MCP_CONNECTION_CLOSED;
	rf->retry_after = retry;
	if (b->state == BREAKER_OPEN)
		snprintf(rf->msg, sizeof rf->msg, "upstream %s is failing: "
		    "circuit breaker open after %u failures in a row (last: "
		    "%s); retry after %u s", up->sc->name,
		    up->sc->traffic.breaker_failures,
		    b->last != NULL ? b->last : "?", retry);
	else
		snprintf(rf->msg, sizeof rf->msg, "upstream %s is failing: "
		    "circuit breaker half-open, a probe call is under way; "
		    "retry after %u s", up->sc->name, retry);
	snprintf(rf->data, sizeof rf->data, "{\"reason\":\"circuit_open\","
	    "\"upstream\":\"%s\",\"breaker\":\"%s\",\"retryAfter\":%u}",
	    up->sc->name, breaker_state_name(b->state), retry);
}

int
breaker_admit(struct upstream *up, struct refusal *rf)
{
	struct breaker	*b = &up->breaker;

	switch (b->state) {
	case BREAKER_CLOSED:
		return (0);
	case BREAKER_HALF_OPEN:
		if (!b->probing) {
			b->probing = 1;
			log_info("upstream %s: circuit breaker half-open: "
			    "a probe call goes through", up->sc->name);
			return (1);
		}
		break;
	default:
		break;
	}
	b->refused++;
	breaker_refuse(up, rf);
	return (-1);
}

/* Open it for a cool-down; calls waiting for a slot fail now. */
static void
breaker_open(struct upstream *up)
{
	struct breaker	*b = &up->breaker;
	struct refusal	 rf;

	b->state = BREAKER_OPEN;
	breaker_unprobe(up);
	b->opened++;
	b->until = now_ms() + (int64_t)up->sc->traffic.breaker_cooldown *
	    1000;
	breaker_arm(up, up->sc->traffic.breaker_cooldown);
	log_warnx("upstream %s: circuit breaker open for %u s after %u "
	    "failures in a row (last: %s)", up->sc->name,
	    up->sc->traffic.breaker_cooldown, b->failures,
	    b->last != NULL ? b->last : "?");
	breaker_refuse(up, &rf);
	b->refused += up->limit.nwaiting;
	limit_fail_waiting(up, &rf);
}

void
breaker_success(struct pending *p)
{
	struct upstream	*up = p->up;
	struct breaker	*b = &up->breaker;

	if (b->state == BREAKER_CLOSED) {
		if (b->failures > 0) {
			b->failures = 0;
			evtimer_del(b->timer);
		}
	} else if (b->state == BREAKER_HALF_OPEN)
		breaker_close(up, p->limit == LIMIT_PROBE ? "the probe call "
		    "was answered" : "a call was answered");
	if (p->limit == LIMIT_PROBE)
		p->limit = LIMIT_CALL;
}

void
breaker_failure(struct pending *p, const char *why)
{
	struct upstream	*up = p->up;
	struct breaker	*b = &up->breaker;
	int		 probe = p->limit == LIMIT_PROBE;

	if (probe)
		p->limit = LIMIT_CALL;
	if (up->sc->traffic.breaker_failures == 0)
		return;
	free(b->last);
	b->last = xstrdup(why);
	switch (b->state) {
	case BREAKER_CLOSED:
		if (b->failures++ == 0)
			breaker_arm(up, up->sc->traffic.breaker_window);
		if (b->failures >= up->sc->traffic.breaker_failures)
			breaker_open(up);
		break;
	case BREAKER_HALF_OPEN:
		if (probe)
			breaker_open(up);
		break;
	default:
		break;
	}
}

void
breaker_probe_gone(struct upstream *up)
{
	if (up->breaker.state == BREAKER_HALF_OPEN)
		up->breaker.probing = 0;
}

/* The window of a run of failures ended, or the cool-down did. */
static void
breaker_timer_cb(evutil_socket_t fd, short events, void *arg)
{
	struct upstream	*up = arg;
	struct breaker	*b = &up->breaker;

	(void)fd;
	(void)events;
	if (b->state == BREAKER_CLOSED) {
		b->failures = 0;
		return;
	}
	if (b->state == BREAKER_OPEN) {
		b->state = BREAKER_HALF_OPEN;
		b->probing = 0;
		log_info("upstream %s: circuit breaker half-open: the next call "
		    "is a probe", up->sc->name);
	}
}

void
breaker_status_json(const struct upstream *up, json_t *o)
{
	const struct breaker	*b = &up->breaker;
	json_t			*j;

	j = json_pack("{s:s, s:I, s:I, s:I, s:I}",
	    "state", breaker_state_name(b->state),
	    "failures", (json_int_t)b->failures,
	    "threshold", (json_int_t)up->sc->traffic.breaker_failures,
	    "opened", (json_int_t)b->opened,
	    "refused", (json_int_t)b->refused);
	if (b->state == BREAKER_OPEN)
		json_object_set_new(j, "retry_after",
		    json_integer(breaker_retry_after(up)));
	json_object_set_new(j, "last_failure", b->last != NULL ?
	    json_string(b->last) : json_null());
	json_object_set_new(o, "breaker", j);
}
