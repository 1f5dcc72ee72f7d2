/* SPDX-License-Identifier: ISC */
/*
 * An upstream's cap on calls in flight (max_concurrent) and the queue of
 * calls waiting for a slot: bounded in length (max_queued) and in time
 * (queue_timeout), in the order they came.  A call holds its slot from
 * the moment it is sent until its pending request is freed (answered,
 * failed, timed out, cancelled); a slot freed is given to the oldest
 * waiter in the next turn of the loop, never from inside the code that
 * freed it.  A waiter cancelled by its client, whose session ends or
 * whose stream is gone (nobody could read its answer) leaves the queue.
 *
 * Client calls are capped (route_forward), and so are the gateway's own
 * (route_call: a sampling chain's tool: link); the gateway's small
 * requests whose answers are dropped (a subscription renewed, a log
 * level) are not.  The breaker (breaker.c) is asked first.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "log.h"
#include "supervisor.h"

static void	limit_kick_cb(evutil_socket_t, short, void *);

void
limit_init(struct upstream *up)
{
	TAILQ_INIT(&up->limit.waiting);
	up->limit.kick = event_new(base, -1, 0, limit_kick_cb, up);
	breaker_init(up);
}

void
limit_free(struct upstream *up)
{
	if (up->limit.kick != NULL)
		event_free(up->limit.kick);
	up->limit.kick = NULL;
	breaker_free(up);
}

/* Is a slot free? */
static int
limit_free_slot(const struct upstream *up)
{
	unsigned int	cap = up->sc->traffic.max_concurrent;

	return (cap == 0 || up->limit.inflight < cap);
}

/* Send waiters in the next turn if a slot is free. */
void
limit_kick(struct upstream *up)
{
	if (up->limit.nwaiting > 0 && limit_free_slot(up) &&
	    up->state == UPSTREAM_READY)
		event_active(up->limit.kick, EV_TIMEOUT, 1);
}

void
limit_configure(struct upstream *up)
{
	breaker_configure(up, &up->sc->traffic);
	limit_kick(up);
}

/* Refuse with a reason and a hint of when to try again. */
static void __attribute__((format(printf, 5, 6)))
limit_refuse(struct refusal *rf, const struct upstream *up,
    const char *reason, unsigned int retry, const char *fmt, ...)
{
	va_list	ap;

	rf->code = MCP_OVERLOADED;
	rf->retry_after = retry;
	va_start(ap, fmt);
	vsnprintf(rf->msg, sizeof rf->msg, fmt, ap);
	va_end(ap);
	snprintf(rf->data, sizeof rf->data, "{\"reason\":\"%s\","
	    "\"upstream\":\"%s\",\"maxConcurrent\":%u,\"maxQueued\":%u,"
	    "\"retryAfter\":%u}", reason, up->sc->name,
	    up->sc->traffic.max_concurrent, up->sc->traffic.max_queued, retry);
}

/* Would a call have to wait with the queue full? */
static int
limit_full(const struct upstream *up)
{
	const struct traffic_conf	*t = &up->sc->traffic;

	/* A free slot goes to the oldest waiter first (limit_start). */
	return (t->max_concurrent > 0 && (!limit_free_slot(up) ||
	    up->limit.nwaiting > 0) && up->limit.nwaiting >= t->max_queued);
}

/* Refuse a call because the queue is full. */
static void
limit_refuse_full(struct upstream *up, struct refusal *rf)
{
	up->limit.full++;
	log_warnx("upstream %s: call refused: %u in flight (max_concurrent) "
	    "and %u waiting (max_queued)", up->sc->name, up->limit.inflight,
	    up->limit.nwaiting);
	metrics_refused("limit");
	limit_refuse(rf, up, "queue_full", 1, "upstream %s is busy: %u "
	    "calls in flight (max_concurrent) and %u waiting (max_queued)",
	    up->sc->name, up->sc->traffic.max_concurrent, up->limit.nwaiting);
}

int
limit_admit(struct upstream *up, struct refusal *rf)
{
	int	b;

	if ((b = breaker_admit(up, rf)) < 0)
		return (-1);
	if (limit_full(up)) {
		/* The probe, if this was to be it, is not out after all. */
		if (b == 1)
			breaker_probe_gone(up);
		limit_refuse_full(up, rf);
		return (-1);
	}
	return (b == 1 ? LIMIT_PROBE : LIMIT_CALL);
}

/*
 * A call that waited for its upstream to start found no slot: it waits
 * for one, or fails if the queue is full.  0 if it waits.
 */
int
limit_wait_started(struct pending *p)
{
	struct refusal	rf;

	if (limit_full(p->up)) {
		limit_refuse_full(p->up, &rf);
		route_pending_fail_data(p, rf.code, rf.data, rf.msg);
		return (-1);
	}
	limit_wait(p);
	return (0);
}

int
limit_start(struct pending *p)
{
	struct upstream	*up = p->up;

	if (p->slot)
		return (1);
	if (!limit_free_slot(up) || up->limit.nwaiting > 0)
		return (0);
	p->slot = 1;
	up->limit.inflight++;
	return (1);
}

void
limit_wait(struct pending *p)
{
	struct upstream	*up = p->up;
	struct timeval	 tv;

	p->waiting = 1;
	TAILQ_INSERT_TAIL(&up->limit.waiting, p, wait_entry);
	up->limit.nwaiting++;
	up->limit.waited++;
	/* Its timer is the queue's until it is sent (route_timeout_cb). */
	if (p->timer == NULL)
		route_pending_arm(p);
	tv.tv_sec = up->sc->traffic.queue_timeout;
	tv.tv_usec = 0;
	evtimer_add(p->timer, &tv);
	log_debug("upstream %s: %s waits for a slot (%u in flight, %u "
	    "waiting)", up->sc->name, mcp_method_name(p->method),
	    up->limit.inflight, up->limit.nwaiting);
}

/* Take a waiter out of the queue. */
static void
limit_unqueue(struct pending *p)
{
	TAILQ_REMOVE(&p->up->limit.waiting, p, wait_entry);
	p->up->limit.nwaiting--;
	p->waiting = 0;
}

void
limit_expired(struct pending *p)
{
	struct upstream	*up = p->up;
	struct refusal	 rf;

	up->limit.expired++;
	log_warnx("upstream %s: %s from session %.8s waited %u s for a slot "
	    "(queue_timeout)", up->sc->name, mcp_method_name(p->method),
	    p->session != NULL ? p->session->id : "(gateway)",
	    up->sc->traffic.queue_timeout);
	limit_refuse(&rf, up, "queue_timeout", 1, "upstream %s is busy: no "
	    "slot came free within %u s (%u calls in flight, "
	    "max_concurrent)", up->sc->name, up->sc->traffic.queue_timeout,
	    up->limit.inflight);
	p->waiting = LIMIT_FAILING;
	route_pending_fail_data(p, rf.code, rf.data, rf.msg);
}

void
limit_pending_gone(struct pending *p)
{
	struct upstream	*up = p->up;

	if (p->waiting) {
		/* Not failed by the queue: cancelled, or its client gone. */
		if (p->waiting != LIMIT_FAILING)
			up->limit.abandoned++;
		limit_unqueue(p);
	}
	if (p->slot) {
		p->slot = 0;
		up->limit.inflight--;
		limit_kick(up);
	}
	if (p->limit == LIMIT_PROBE)
		breaker_probe_gone(up);
	p->limit = LIMIT_EXEMPT;
}

/* Slots came free: send the oldest waiters. */
static void
limit_kick_cb(evutil_socket_t fd, short events, void *arg)
{
	struct upstream	*up = arg;
	struct pending	*p;

	(void)fd;
	(void)events;
	while (up->state == UPSTREAM_READY && limit_free_slot(up) &&
	    (p = TAILQ_FIRST(&up->limit.waiting)) != NULL) {
		limit_unqueue(p);
		p->slot = 1;
		up->limit.inflight++;
		/* From now on its timer is request_timeout's. */
		route_pending_arm(p);
		route_pending_send(p);
	}
}

void
limit_stream_gone(struct stream *st)
{
	struct pending	*p, *next;

	for (p = TAILQ_FIRST(&st->session->pending); p != NULL; p = next) {
		next = TAILQ_NEXT(p, session_entry);
		/* One being failed is answered on it right now. */
		if (p->stream != st || p->waiting != 1 || p->parked != NULL)
			continue;
		log_debug("session %.8s: %s leaves upstream %s's queue: its "
		    "stream is gone", st->session->id,
		    mcp_method_name(p->method), p->up->sc->name);
		p->stream = NULL;
		route_pending_free(p);
	}
}

void
limit_fail_waiting(struct upstream *up, const struct refusal *rf)
{
	struct pending	*p;

	while ((p = TAILQ_FIRST(&up->limit.waiting)) != NULL) {
		p->waiting = LIMIT_FAILING;
		route_pending_fail_data(p, rf->code, rf->data, rf->msg);
	}
}

void
limit_status_json(const struct upstream *up, json_t *o)
{
	const struct uplimit	*l = &up->limit;

	json_object_set_new(o, "limit", json_pack("{s:I, s:I, s:I, s:I, "
	    "s:I, s:I, s:I, s:I, s:I}",
	    "max_concurrent", (json_int_t)up->sc->traffic.max_concurrent,
	    "max_queued", (json_int_t)up->sc->traffic.max_queued,
	    "queue_timeout", (json_int_t)up->sc->traffic.queue_timeout,
	    "in_flight", (json_int_t)l->inflight,
	    "queued", (json_int_t)l->nwaiting,
	    "waited", (json_int_t)l->waited,
	    "queue_full", (json_int_t)l->full,
	    "queue_timeouts", (json_int_t)l->expired,
	    "abandoned", (json_int_t)l->abandoned));
	breaker_status_json(up, o);
}

/* One counter or gauge per upstream. */
static void
limit_metric(struct evbuffer *b, const char *name, const char *type,
    const char *help, uint64_t (*value)(const struct upstream *))
{
	char	labels[128];
	size_t	i;

	prom_header(b, name, type, help);
	for (i = 0; i < nupstreams; i++) {
		prom_labels(labels, sizeof labels, "upstream",
		    upstreams[i]->sc->name, NULL);
		prom_sample_u64(b, name, labels, value(upstreams[i]));
	}
}

static uint64_t
limit_inflight(const struct upstream *up)
{
	return (up->limit.inflight);
}

static uint64_t
limit_queued(const struct upstream *up)
{
	return (up->limit.nwaiting);
}

static uint64_t
limit_waited(const struct upstream *up)
{
	return (up->limit.waited);
}

static uint64_t
limit_abandoned(const struct upstream *up)
{
	return (up->limit.abandoned);
}

static uint64_t
limit_opened(const struct upstream *up)
{
	return (up->breaker.opened);
}

void
limit_metrics(struct evbuffer *b)
{
	static const char *const reasons[] = { "queue_full",
	    "queue_timeout", "circuit_open" };
	const struct upstream	*up;
	char			 labels[192];
	uint64_t		 v;
	size_t			 i, j;

	limit_metric(b, "mcp_supervisor_upstream_calls_in_flight", "gauge",
	    "Calls holding one of an upstream's max_concurrent slots.",
	    limit_inflight);
	limit_metric(b, "mcp_supervisor_upstream_calls_queued", "gauge",
	    "Calls waiting for a slot of an upstream (max_concurrent).",
	    limit_queued);
	limit_metric(b, "mcp_supervisor_upstream_calls_waited_total",
	    "counter", "Calls that had to wait for a slot of an upstream.",
	    limit_waited);
	limit_metric(b, "mcp_supervisor_upstream_calls_abandoned_total",
	    "counter", "Calls cancelled, or whose client went away, while "
	    "they waited for a slot.", limit_abandoned);
	prom_header(b, "mcp_supervisor_upstream_calls_shed_total", "counter",
	    "Calls the traffic policy failed before they reached an "
	    "upstream: its queue was full, the wait was over queue_timeout, "
	    "or its circuit breaker was open.");
	for (i = 0; i < nupstreams; i++) {
		up = upstreams[i];
		for (j = 0; j < 3; j++) {
			v = j == 0 ? up->limit.full : j == 1 ?
			    up->limit.expired : up->breaker.refused;
			prom_labels(labels, sizeof labels, "upstream",
			    up->sc->name, "reason", reasons[j], NULL);
			prom_sample_u64(b,
			    "mcp_supervisor_upstream_calls_shed_total",
			    labels, v);
		}
	}
	prom_header(b, "mcp_supervisor_upstream_breaker_state", "gauge",
	    "1 for the state each upstream's circuit breaker is in, 0 for "
	    "the others.");
	for (i = 0; i < nupstreams; i++) {
		up = upstreams[i];
		for (j = 0; j < BREAKER_NSTATES; j++) {
			prom_labels(labels, sizeof labels, "upstream",
			    up->sc->name, "state",
			    breaker_state_name((enum breaker_state)j), NULL);
			prom_sample_u64(b,
			    "mcp_supervisor_upstream_breaker_state", labels,
			    up->breaker.state == (enum breaker_state)j);
		}
	}
	limit_metric(b, "mcp_supervisor_upstream_breaker_opened_total",
	    "counter", "Times an upstream's circuit breaker opened.",
	    limit_opened);
}
