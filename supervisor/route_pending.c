/* SPDX-License-Identifier: ISC */
/*
 * Pending requests: created and sent (or queued while their upstream
 * starts), timed out, failed, cancelled and freed; the gateway's own
 * calls; and what a stream, a session or an upstream going away does to
 * them.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "log.h"
#include "supervisor.h"
#include "xmalloc.h"

#define MAX_QUEUED	256	/* requests waiting for an upstream to start */

static void	route_flush_queued(struct upstream *);

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

	limit_stream_gone(st);
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

/* Free a pending request, unlinking it everywhere. */
void
route_pending_free(struct pending *p)
{
	if (p->parked != NULL)
		continuation_pending_gone(p, NULL);
	if (p->up->level_call == p)
		p->up->level_call = NULL;
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
		if (!p->waiting)
			p->up->nqueued--;
	}
	if (p->limit != LIMIT_EXEMPT)
		limit_pending_gone(p);
	/* Its rate limits' calls in flight, once (rate.c). */
	if (p->rate_hold != NULL) {
		rate_release(p->rate_hold);
		p->rate_hold = NULL;
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
void
route_pending_fail(struct pending *p, int code, const char *msg)
{
	route_pending_fail_data(p, code, NULL, msg);
}

/* The same with data (JSON text, or NULL). */
void
route_pending_fail_data(struct pending *p, int code, const char *data,
    const char *msg)
{
	if (p->waiting)
		p->waiting = LIMIT_FAILING;	/* answered, not abandoned */
	obs_end(&p->obs, code == MCP_REQUEST_TIMEOUT ? OBS_TIMEOUT :
	    p->obs.t_fwd != 0 || p->obs.up_us != 0 ? OBS_ERROR : OBS_REFUSED,
	    code);
	/* A parked call keeps the reason for its client's retry. */
	if (p->parked != NULL && p->stream == NULL)
		continuation_pending_gone(p, msg);
	if (p->cb != NULL)
		p->cb(p, NULL, code, msg, p->cb_arg);
	else
		route_error_send(p->stream, p->id, p->idlen, code, data, msg);
	route_pending_free(p);
}

/* A request timed out: answer it and cancel it upstream. */
static void
route_timeout_cb(evutil_socket_t fd, short events, void *arg)
{
	static const char	 timed_out[] = "{\"reason\":\"request timed out "
	    "at the gateway\"}";
	struct pending		*p = arg;
	struct upstream		*up = p->up;
	struct session		*s = p->session;
	char			 msg[256];
	int			 level, relevel;

	/* Waiting for a slot, its timer is the queue's. */
	if (p->waiting) {
		limit_expired(p);
		return;
	}
	log_warnx("upstream %s: %s from session %.8s timed out after %u s",
	    p->up->sc->name, mcp_method_name(p->method), p->session != NULL ?
	    p->session->id : "(gateway)", p->up->sc->request_timeout);
	route_pending_cancel(p, timed_out);
	snprintf(msg, sizeof msg, "upstream %s did not answer within %u s",
	    p->up->sc->name, p->up->sc->request_timeout);
	if (p->queued == NULL && p->up->state == UPSTREAM_READY &&
	    !route_up_waiting(p))
		breaker_failure(p, msg);
	level = p->own && p->method == MCPM_SET_LEVEL;
	relevel = p->relevel;
	route_pending_fail(p, MCP_REQUEST_TIMEOUT, msg);
	if (level)
		route_level_ended(up, s, relevel, 0);
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

/*
 * Create a pending request and send its text to the upstream: a client's
 * request (r, whose record goes on in it), or one of the gateway's own (r
 * NULL: id 0, no stream).  The pending takes hold (rate.c), or NULL.
 */
static struct pending *
route_send(struct session *s, struct req *r, struct upstream *up,
    enum mcp_method method, struct evbuffer *buf, int limit,
    struct rate_hold *hold)
{
	struct pending	*p;
	const char	*id = r != NULL ? r->m->p + r->m->id.off : "0";
	size_t		 idlen = r != NULL ? r->m->id.len : 1;
	char		 why[512];

	p = xcalloc(1, sizeof *p);
	p->rate_hold = hold;
	do {
		if (++next_tag == 0)
			next_tag = 1;
	} while (u64map_get(&pending_by_tag, next_tag) != NULL);
	p->tag = next_tag;
	p->session = s;
	p->up = up;
	p->stream = r != NULL ? r->stream : NULL;
	p->idlen = idlen;
	p->id = xmalloc(idlen);
	memcpy(p->id, id, idlen);
	p->own = r == NULL;
	p->method = method;
	u64map_put(&pending_by_tag, p->tag, p);
	TAILQ_INSERT_TAIL(&up->pending, p, up_entry);
	up->npending++;
	if (s != NULL) {
		TAILQ_INSERT_TAIL(&s->pending, p, session_entry);
		s->npending++;
	}
	route_pending_arm(p);
	/* The client's request (if this is one) goes on here. */
	if (r != NULL)
		req_take(r, &p->obs);

	/* An upstream that is starting gets the request when it is ready. */
	p->limit = limit;
	if (up->state == UPSTREAM_STARTING) {
		p->queued = evbuffer_new();
		evbuffer_add_buffer(p->queued, buf);
		up->nqueued++;
		return (p);
	}
	/* One over max_concurrent waits for a slot. */
	if (limit != LIMIT_EXEMPT && !limit_start(p)) {
		p->queued = evbuffer_new();
		evbuffer_add_buffer(p->queued, buf);
		limit_wait(p);
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

/* Send a request that waited (its text in p->queued). */
void
route_pending_send(struct pending *p)
{
	struct evbuffer	*buf = p->queued;

	p->queued = NULL;
	upstream_send_buffer(p->up, MSG_REQUEST, p->session != NULL ?
	    p->session->no : 0, p->tag, buf);
	evbuffer_free(buf);
	obs_sent(&p->obs);
}

static void
route_flush_queued(struct upstream *up)
{
	struct pending	*p, *next;

	for (p = TAILQ_FIRST(&up->pending); p != NULL && up->nqueued > 0;
	    p = next) {
		next = TAILQ_NEXT(p, up_entry);
		if (p->queued == NULL || p->waiting)
			continue;
		if (p->limit == LIMIT_EXEMPT || limit_start(p)) {
			up->nqueued--;
			route_pending_send(p);
		} else if (limit_wait_started(p) == 0)
			up->nqueued--;	/* a refused one's is freed with it */
	}
	limit_kick(up);
}

struct pending *
route_call(struct upstream *up, enum mcp_method method,
    struct evbuffer *params, route_call_cb cb, void *arg, char *why,
    size_t whylen)
{
	struct pending	*p;
	struct evbuffer	*buf;
	struct refusal	 rf;
	int		 limit;

	upstream_use(up);
	if (up->state != UPSTREAM_READY && (up->state != UPSTREAM_STARTING ||
	    up->nqueued >= MAX_QUEUED)) {
		upstream_unavailable(up, why, whylen);
		return (NULL);
	}
	if (evbuffer_get_length(params) + 128 > up->sc->max_message) {
		snprintf(why, whylen, "the request is over upstream %s's "
		    "max_message", up->sc->name);
		return (NULL);
	}
	if ((limit = limit_admit(up, &rf)) < 0) {
		snprintf(why, whylen, "%s", rf.msg);
		return (NULL);
	}
	buf = evbuffer_new();
	evbuffer_add_printf(buf, "{\"jsonrpc\":\"2.0\",\"id\":0,"
	    "\"method\":\"%s\",\"params\":", mcp_method_name(method));
	evbuffer_add_buffer(buf, params);
	evbuffer_add(buf, "}", 1);
	p = route_send(NULL, NULL, up, method, buf, limit, NULL);
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

/* Add the text of a request of the gateway's own (params taken). */
static void
route_internal_add(struct evbuffer *buf, enum mcp_method method,
    json_t *params)
{
	char	*text;

	text = json_dumps(params, JSON_COMPACT);
	json_decref(params);
	evbuffer_add_printf(buf, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":"
	    "\"%s\",\"params\":%s}", mcp_method_name(method), text);
	free(text);
}

/* Send a request of the gateway's own; its answer is dropped. */
struct pending *
route_internal(struct upstream *up, struct session *s, enum mcp_method method,
    json_t *params)
{
	struct evbuffer	*buf;
	struct pending	*p;

	if (up->state != UPSTREAM_READY && up->state != UPSTREAM_STARTING) {
		json_decref(params);
		return (NULL);
	}
	buf = evbuffer_new();
	route_internal_add(buf, method, params);
	p = route_send(s, NULL, up, method, buf, LIMIT_EXEMPT, NULL);
	evbuffer_free(buf);
	return (p);
}

int
route_internal_retext(struct pending *p, json_t *params)
{
	if (p->queued == NULL || p->waiting) {
		json_decref(params);
		return (-1);
	}
	evbuffer_drain(p->queued, evbuffer_get_length(p->queued));
	route_internal_add(p->queued, p->method, params);
	return (0);
}

/* Forward a client request, with edits applied to its text. */
struct pending *
route_forward(struct req *r, struct upstream *up, const struct jedit *edits,
    size_t nedits)
{
	static const char *const token[] = { "_meta", "progressToken",
	    NULL };
	struct session		*s = r->session;
	struct stream		*st = r->stream;
	const struct jrpc	*m = r->m;
	struct pending		*p;
	struct evbuffer		*buf;
	struct jspan		 at;
	struct refusal		 rf;
	struct rate_hold	*hold;
	char			 why[512];
	int			 limit;

	req_upstream(r, up);
	if (s->npending >= conf->max_pending) {
		log_warnx("session %.8s (peer %s): %s refused: %u requests "
		    "in flight (max_pending)", s->id, st != NULL &&
		    st->conn != NULL ? http_conn_peer(st->conn) : "-",
		    m->method_name, conf->max_pending);
		metrics_refused("limit");
		route_reject(r, MCP_OVERLOADED, "too many requests in "
		    "flight for this session (limit %u)", conf->max_pending);
		return (NULL);
	}
	/*
	 * Its id is another's in flight (MCP: the requestor never uses an
	 * id twice in a session): the answers and a cancellation could not
	 * be told apart.  Not for 2026-07-28 requests, each whole, whose
	 * principal's clients number theirs each on their own.
	 */
	if (!s->modern && m->id.len > 0 && route_find_client_id(s,
	    m->p + m->id.off, m->id.len) != NULL) {
		log_warnx("session %.8s: %s refused: its id %.*s is a request's "
		    "in flight", s->id, m->method_name, (int)(m->id.len > 40 ?
		    40 : m->id.len), m->p + m->id.off);
		route_reject(r, JRPC_INVALID_REQUEST, "request id %.*s is "
		    "already used by a request in flight in this session",
		    (int)(m->id.len > 40 ? 40 : m->id.len), m->p + m->id.off);
		return (NULL);
	}
	switch (jscan_path_unique(m->p, m->params, token, &at)) {
	case -2:
		route_reject(r, JRPC_INVALID_REQUEST, "%s: "
		    "params._meta.progressToken appears more than once",
		    m->method_name);
		return (NULL);
	case 0:
		if (at.len <= JRPC_ID_MAX)
			break;
		route_reject(r, JRPC_INVALID_REQUEST, "%s: "
		    "params._meta.progressToken is longer than %d bytes",
		    m->method_name, JRPC_ID_MAX);
		return (NULL);
	}
	if (m->n > up->sc->max_message) {
		route_reject(r, JRPC_INVALID_REQUEST, "request of %zu bytes "
		    "is over upstream %s's max_message (%zu)", m->n,
		    up->sc->name, up->sc->max_message);
		return (NULL);
	}
	upstream_use(up);
	if (up->state != UPSTREAM_READY && (up->state != UPSTREAM_STARTING ||
	    up->nqueued >= MAX_QUEUED)) {
		upstream_unavailable(up, why, sizeof why);
		route_reject(r, MCP_CONNECTION_CLOSED, "%s", why);
		return (NULL);
	}
	/* Its rate limits, breaker and queue (rate.c, breaker.c,
	 * limit.c). */
	if (rate_admit(s, up, r->name, &rf, &hold) != 0) {
		rate_refused(r, &rf);
		route_reject_data(r, rf.code, rf.data, "%s", rf.msg);
		return (NULL);
	}
	if ((limit = limit_admit(up, &rf)) < 0) {
		if (hold != NULL)
			rate_release(hold);
		route_reject_data(r, rf.code, rf.data, "%s", rf.msg);
		return (NULL);
	}
	buf = evbuffer_new();
	trace_splice(buf, r, up, edits, nedits);
	p = route_send(s, r, up, m->method_id, buf, limit, hold);
	evbuffer_free(buf);
	return (p);
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
		metrics_up_request(ur->up, ur->method_id, MUPO_CANCELLED);
		route_up_cancel_client(ur, message);
		route_up_request_free(ur);
	}
	sampling_upstream_gone(up);
	continuation_upstream_gone(up);
	view_upstream_down(up);
	/* A new upstream process holds no subscriptions or level; the
	 * sessions' subscriptions are kept, and renewed when it is ready. */
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
		metrics_up_request(ur->up, ur->method_id, MUPO_CANCELLED);
		route_up_error(ur->up, s->no, ur->ref, MCP_CONNECTION_CLOSED,
		    "the client session ended");
		sampling_end(ur->up, ur->ref, "error",
		    "the client session ended");
		route_up_request_free(ur);
	}
	sampling_session_end(s->no);
	route_sub_session_end(s);
}
