/* SPDX-License-Identifier: ISC */
/*
 * Calls to tools that clients registered (ctools.c).  When another
 * session calls one the gateway sends tools/call to the owner under an id
 * of its own (the correlation id), maps progress both ways, passes a
 * cancellation on, and answers the caller when the owner answers, times
 * out (client_tool_timeout) or goes away.  Nothing an owner sends ever
 * reaches a session other than the caller of that call.
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

/* A call to a client's tool, waiting for its owner. */
struct ctcall {
	uint64_t		 id;		/* ours, to the owner */
	struct session		*owner;
	struct session		*caller;
	struct stream		*stream;	/* the caller's, or NULL */
	char			*caller_id;	/* raw */
	size_t			 caller_idlen;
	char			*token;		/* the caller's progress token */
	size_t			 tokenlen;
	char			*tool;		/* exposed name, for messages */
	struct event		*timer;
	struct reqobs		 obs;		/* the caller's request */
	TAILQ_ENTRY(ctcall)	 owner_entry;
	TAILQ_ENTRY(ctcall)	 caller_entry;
};

/* Free a call. */
static void
ctcall_free(struct ctcall *c)
{
	TAILQ_REMOVE(&c->owner->ctcalls_in, c, owner_entry);
	TAILQ_REMOVE(&c->caller->ctcalls_out, c, caller_entry);
	c->owner->nctcalls--;
	c->caller->nctcalls_out--;
	obs_end(&c->obs, OBS_CANCELLED, 0);
	event_free(c->timer);
	free(c->caller_id);
	free(c->token);
	free(c->tool);
	free(c);
}

/* Tell the owner a call is withdrawn. */
static void
ctcall_cancel_owner(struct ctcall *c, const char *reason)
{
	struct evbuffer	*buf = evbuffer_new();

	evbuffer_add_printf(buf, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/cancelled\",\"params\":{\"requestId\":%" PRIu64
	    ",\"reason\":", c->id);
	jscan_add_string(buf, reason, strlen(reason));
	evbuffer_add(buf, "}}", 2);
	stream_send(session_get_stream(c->owner), buf, 0);
	evbuffer_free(buf);
}

/* Answer the caller with an error and forget the call. */
static void
ctcall_fail(struct ctcall *c, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
ctcall_fail(struct ctcall *c, int code, const char *fmt, ...)
{
	va_list	ap;
	char	msg[512];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	obs_end(&c->obs, code == MCP_REQUEST_TIMEOUT ? OBS_TIMEOUT :
	    OBS_ERROR, code);
	route_error(c->stream, c->caller_id, c->caller_idlen, code, "%s",
	    msg);
	ctcall_free(c);
}

/* The owner did not answer in time. */
static void
ctcall_timeout_cb(evutil_socket_t fd, short events, void *arg)
{
	struct ctcall	*c = arg;

	log_warnx("session %.8s: client tool %s did not answer within %u s",
	    c->caller->id, c->tool, conf->client_tool_timeout);
	ctcall_cancel_owner(c, "timed out at the gateway");
	ctcall_fail(c, MCP_REQUEST_TIMEOUT, "client tool %s did not answer "
	    "within %u s", c->tool, conf->client_tool_timeout);
}

void
ctools_call(struct req *r, const struct catalog_entry *e, const char *exposed)
{
	static const char *const token_path[] = { "_meta", "progressToken",
	    NULL };
	struct session		*s = r->session;
	const struct jrpc	*m = r->m;
	struct session		*owner = e->owner;
	struct ctcall		*c;
	struct jspan		 args, token;
	struct evbuffer		*buf;
	struct timeval		 tv;

	if (owner->nctcalls >= conf->max_pending) {
		route_reject(r, MCP_OVERLOADED, "too many calls waiting "
		    "for client tool %s", exposed);
		return;
	}
	/* A caller's calls to client tools are bounded as its requests to
	 * upstreams are, whatever the number of owners. */
	if (s->nctcalls_out >= conf->max_pending) {
		route_reject(r, MCP_OVERLOADED, "too many calls to client "
		    "tools in flight for this session (limit %u)",
		    conf->max_pending);
		return;
	}
	if (jscan_path(m->p, m->params, token_path, &token) == 0 &&
	    token.len > JRPC_ID_MAX) {
		route_reject(r, JRPC_INVALID_REQUEST, "%s: "
		    "params._meta.progressToken is longer than %d bytes",
		    m->method_name, JRPC_ID_MAX);
		return;
	}
	c = xcalloc(1, sizeof *c);
	c->id = route_next_id();
	c->owner = owner;
	c->caller = s;
	c->stream = r->stream;
	c->caller_idlen = m->id.len;
	c->caller_id = xmalloc(m->id.len);
	memcpy(c->caller_id, m->p + m->id.off, m->id.len);
	c->tool = xstrdup(exposed);
	if (jscan_path(m->p, m->params, token_path, &token) == 0 &&
	    jrpc_id_valid(m->p, token)) {
		c->tokenlen = token.len;
		c->token = xmalloc(token.len);
		memcpy(c->token, m->p + token.off, token.len);
	}
	TAILQ_INSERT_TAIL(&owner->ctcalls_in, c, owner_entry);
	TAILQ_INSERT_TAIL(&s->ctcalls_out, c, caller_entry);
	owner->nctcalls++;
	s->nctcalls_out++;
	req_client_tool(r);
	req_take(r, &c->obs);
	c->timer = evtimer_new(base, ctcall_timeout_cb, c);
	tv.tv_sec = conf->client_tool_timeout;
	tv.tv_usec = 0;
	evtimer_add(c->timer, &tv);

	buf = evbuffer_new();
	evbuffer_add_printf(buf, "{\"jsonrpc\":\"2.0\",\"id\":%" PRIu64
	    ",\"method\":\"tools/call\",\"params\":{\"name\":", c->id);
	jscan_add_string(buf, e->name, e->namelen);
	evbuffer_add(buf, ",\"arguments\":", 13);
	if (jscan_member(m->p, m->params, "arguments", &args) == 0 &&
	    jscan_type(m->p, args) == JT_OBJECT)
		evbuffer_add(buf, m->p + args.off, args.len);
	else
		evbuffer_add(buf, "{}", 2);
	if (c->token != NULL)
		evbuffer_add_printf(buf, ",\"_meta\":{\"progressToken\":%"
		    PRIu64 "}", c->id);
	evbuffer_add(buf, "}}", 2);
	log_debug("session %.8s: %s to client session %.8s (id %" PRIu64 ")",
	    s->id, exposed, owner->id, c->id);
	stream_send(session_get_stream(owner), buf, 0);
	evbuffer_free(buf);
}

/* Find a call by our id among those sent to an owner. */
static struct ctcall *
ctcall_find(struct session *owner, const char *p, struct jspan id)
{
	struct ctcall	*c;
	int64_t		 v;

	if (jscan_int64(p, id, &v) != 0 || v <= 0)
		return (NULL);
	TAILQ_FOREACH(c, &owner->ctcalls_in, owner_entry) {
		if (c->id == (uint64_t)v)
			return (c);
	}
	return (NULL);
}

int
ctools_answer(struct session *owner, const struct jrpc *m)
{
	struct ctcall	*c;
	struct evbuffer	*buf;
	struct jspan	 rt;

	if ((c = ctcall_find(owner, m->p, m->id)) == NULL)
		return (0);
	if (m->kind == JRPC_RESULT &&
	    jscan_type(m->p, m->result) != JT_OBJECT) {
		ctcall_fail(c, JRPC_INTERNAL_ERROR, "client tool %s sent a "
		    "malformed answer (its result is not an object)",
		    c->tool);
		return (1);
	}
	obs_end(&c->obs, m->kind == JRPC_RESULT ? OBS_OK : OBS_ERROR, 0);
	if (c->stream != NULL && c->stream->modern && m->kind == JRPC_RESULT &&
	    jscan_member(m->p, m->result, "resultType", &rt) != 0) {
		/* A 2026-07-28 caller: the owner answered in its era. */
		modern_answer(c->stream, c->caller_id, c->caller_idlen,
		    m->p + m->result.off, m->result.len);
		ctcall_free(c);
		return (1);
	}
	buf = jscan_replace(m->p, m->n, m->id, c->caller_id, c->caller_idlen);
	if (c->stream != NULL)
		stream_send(c->stream, buf, 1);
	evbuffer_free(buf);
	ctcall_free(c);
	return (1);
}

int
ctools_progress(struct session *owner, const struct jrpc *m)
{
	static const char *const path[] = { "progressToken", NULL };
	struct ctcall	*c;
	struct jspan	 token;
	struct evbuffer	*buf;

	if (jscan_path(m->p, m->params, path, &token) != 0 ||
	    (c = ctcall_find(owner, m->p, token)) == NULL || c->token == NULL)
		return (0);
	buf = jscan_replace(m->p, m->n, token, c->token, c->tokenlen);
	stream_send(c->stream != NULL ? c->stream :
	    session_get_stream(c->caller), buf, 0);
	evbuffer_free(buf);
	return (1);
}

int
ctools_cancelled(struct session *caller, const struct jrpc *m,
    struct jspan rid)
{
	struct ctcall	*c;
	struct stream	*st;

	TAILQ_FOREACH(c, &caller->ctcalls_out, caller_entry) {
		if (c->caller_idlen == rid.len &&
		    memcmp(c->caller_id, m->p + rid.off, rid.len) == 0)
			break;
	}
	if (c == NULL)
		return (0);
	ctcall_cancel_owner(c, "cancelled by the caller");
	st = c->stream;
	ctcall_free(c);
	if (st != NULL)
		stream_abandon(st);
	return (1);
}

void
ctools_stream_gone(struct stream *st)
{
	struct ctcall	*c;

	TAILQ_FOREACH(c, &st->session->ctcalls_out, caller_entry) {
		if (c->stream == st)
			c->stream = NULL;
	}
}

void
ctools_calls_end(struct session *s)
{
	struct ctcall	*c;
	const char	*who = s->ctool_prefix != NULL ? s->ctool_prefix : "";

	/* Calls to its tools fail at once; its own calls are withdrawn. */
	while ((c = TAILQ_FIRST(&s->ctcalls_in)) != NULL)
		ctcall_fail(c, MCP_CONNECTION_CLOSED, "client %.*s "
		    "disconnected", (int)(strlen(who) > 2 ? strlen(who) - 2 :
		    0), who);
	while ((c = TAILQ_FIRST(&s->ctcalls_out)) != NULL) {
		ctcall_cancel_owner(c, "the caller's session ended");
		ctcall_free(c);
	}
}
