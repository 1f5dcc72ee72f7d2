/* SPDX-License-Identifier: ISC */
/*
 * Frames from workers about requests: the answers to pending requests
 * (to the client's stream, a call of the gateway's own, a parked call or
 * a retry) and failures; notifications and upstream requests are handed
 * on to route_notify.c and route_up.c.
 */
#include "config.h"

#include <stdlib.h>

#include <event2/buffer.h>

#include "log.h"
#include "supervisor.h"

/* Take a frame's payload into a new buffer. */
struct evbuffer *
route_payload(const struct frame_hdr *hdr, struct evbuffer *in)
{
	struct evbuffer	*payload = evbuffer_new();

	evbuffer_drain(in, FRAME_HDR_LEN);
	evbuffer_remove_buffer(in, payload, hdr->len);
	return (payload);
}

/* The code of an error answer, for the access log (0 if none). */
static int
route_error_code(struct evbuffer *payload)
{
	struct jrpc	 m;
	struct jspan	 code;
	const char	*why;
	int64_t		 v;

	if (jrpc_scan((const char *)evbuffer_pullup(payload, -1),
	    evbuffer_get_length(payload), &m, &why) != 0 ||
	    m.kind != JRPC_ERROR ||
	    jscan_member(m.p, m.error, "code", &code) != 0 ||
	    jscan_int64(m.p, code, &v) != 0 || v < INT32_MIN || v > INT32_MAX)
		return (0);
	return ((int)v);
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
	else if (p->hook == HOOK_WITHDRAWN)
		route_sub_undo(p);
}

/* Give the answer to a call of the gateway's own to its callback. */
static void
route_call_answer(struct pending *p, struct evbuffer *payload)
{
	struct jrpc	 m;
	const char	*why;

	if (jrpc_scan((const char *)evbuffer_pullup(payload, -1),
	    evbuffer_get_length(payload), &m, &why) != 0 ||
	    (m.kind != JRPC_RESULT && m.kind != JRPC_ERROR))
		p->cb(p, NULL, JRPC_INTERNAL_ERROR, "the upstream's answer is "
		    "not a JSON-RPC response", p->cb_arg);
	else
		p->cb(p, &m, 0, NULL, p->cb_arg);
}

/*
 * The answer to a call resumed by a 2026-07-28 retry goes to the retry,
 * under the retry's id (the worker restored the first request's).
 */
static void
route_rebind(struct pending *p, struct evbuffer *payload)
{
	struct evbuffer	*out;
	struct jrpc	 m;
	const char	*why;

	if (jrpc_scan((const char *)evbuffer_pullup(payload, -1),
	    evbuffer_get_length(payload), &m, &why) != 0 || m.id.len == 0)
		return;
	out = jscan_replace(m.p, m.n, m.id, p->id, p->idlen);
	evbuffer_drain(payload, evbuffer_get_length(payload));
	evbuffer_add_buffer(payload, out);
	evbuffer_free(out);
}

/* A worker's answer to a request. */
static void
route_response(struct upstream *up, const struct frame_hdr *hdr,
    struct evbuffer *in)
{
	struct pending	*p;
	struct evbuffer	*payload;
	struct session	*s;

	p = route_pending_find(hdr->tag);
	if (p == NULL || p->up != up) {
		log_debug("upstream %s: answer to a request no longer "
		    "pending", up->sc->name);
		evbuffer_drain(in, FRAME_HDR_LEN + hdr->len);
		return;
	}
	/* The gateway's setLevel: the level may have changed since. */
	if (p->relevel) {
		s = p->session;
		evbuffer_drain(in, FRAME_HDR_LEN + hdr->len);
		breaker_success(p);
		route_pending_free(p);
		route_level_ended(up, s, 1, 1);
		return;
	}
	payload = route_payload(hdr, in);
	breaker_success(p);
	if (p->hook != HOOK_NONE)
		route_hook(p, payload);
	if (p->rebound)
		route_rebind(p, payload);
	obs_returned(&p->obs);
	if (p->obs.active)
		obs_end(&p->obs, (hdr->flags & FRAME_F_ERROR) ? OBS_ERROR :
		    OBS_OK, (hdr->flags & FRAME_F_ERROR) &&
		    (access_log_enabled() || p->obs.trace != NULL) ?
		    route_error_code(payload) : 0);
	if (p->parked != NULL && p->stream == NULL) {
		/* It answered while its client was asked for input. */
		continuation_answered(p, payload);
		route_pending_free(p);
		return;
	}
	if (p->stream != NULL && p->stream->modern &&
	    (hdr->flags & FRAME_F_ERROR))
		modern_upstream_error(p->stream, payload);
	if (p->cb != NULL)
		route_call_answer(p, payload);
	else if (p->stream != NULL)
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
	int		 gone = 0, level, relevel;
	struct session	*s;

	if ((msg = frame_take_json(in, hdr, &why)) == NULL) {
		log_warnx("upstream %s: FAIL frame: %s", up->sc->name, why);
		return;
	}
	json_unpack(msg, "{s?I, s?s, s?b}", "code", &code, "message", &text,
	    "gone", &gone);
	p = route_pending_find(hdr->tag);
	if (p != NULL && p->up == up) {
		/* Its upstream's connection failed while it was up (not a
		 * session's instance that ended: that one restarts). */
		if ((code == MCP_CONNECTION_CLOSED ||
		    code == MCP_REQUEST_TIMEOUT) && !gone &&
		    up->state == UPSTREAM_READY)
			breaker_failure(p, text);
		obs_end(&p->obs, code == MCP_REQUEST_TIMEOUT ? OBS_TIMEOUT :
		    OBS_ERROR, (int)code);
		level = p->own && p->method == MCPM_SET_LEVEL;
		relevel = p->relevel;
		s = p->session;
		route_pending_fail(p, (int)code, text);
		if (level)
			route_level_ended(up, s, relevel, 0);
	}
	json_decref(msg);
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
