/* SPDX-License-Identifier: ISC */
/*
 * What an upstream sends unasked: requests for a client (sampling,
 * elicitation, roots), which must reach the client whose call caused them
 * (upreq_origin), and notifications (progress, logs, resource updates,
 * cancellations, list changes).  Requests get a reference of the worker's
 * own towards the supervisor; the client's answer comes back by it.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "log.h"
#include "ringmap.h"
#include "worker.h"
#include "xmalloc.h"

#define MAX_ELICITATIONS	1024	/* URL elicitations remembered */

/* A request from the upstream that a client is answering. */
struct up_req {
	uint32_t	 ref;		/* our reference, the supervisor's tag */
	struct conn	*conn;
	uint32_t	 session;
	uint32_t	 tag;		/* the call it is for, or 0 */
	char		*id;		/* the upstream's raw id */
	size_t		 idlen;
	struct mrtr	*mrtr;		/* or one of a modern upstream's
					   input requests (mrtr.c) */
	char		*key;		/* its inputRequests key */
	upreq_own_cb	 own;		/* or the worker's own: its answer
					   (NULL if none comes) goes here */
	void		*own_arg;
};

static struct u64map	up_reqs;	/* ref -> up_req */
static uint32_t		next_ref;
/*
 * URL elicitations in flight, elicitationId -> session, to route their
 * completion: the last MAX_ELICITATIONS, so that one never completed is
 * forgotten when it is the oldest.
 */
static struct ringmap		elicitations;

/*
 * Forget the upstream requests of a connection (c) or of a call waiting
 * for its client (mrtr); with a reason, tell their clients they are
 * cancelled.
 */
static void
upreq_forget(const struct conn *c, const struct mrtr *mrtr,
    const char *reason)
{
	struct up_req	*ur;
	size_t		 pos = 0;
	uint64_t	 key;
	void		*value;
	json_t		*n;

	while (u64map_next(&up_reqs, &pos, &key, &value)) {
		ur = value;
		if ((c != NULL && ur->conn != c) ||
		    (mrtr != NULL && ur->mrtr != mrtr) ||
		    (c == NULL && mrtr == NULL))
			continue;
		if (reason != NULL) {
			n = json_pack("{s:s, s:s, s:{s:I, s:s}}", "jsonrpc",
			    "2.0", "method", "notifications/cancelled",
			    "params", "requestId", (json_int_t)ur->ref,
			    "reason", reason);
			chan_send_json(MSG_NOTIFY, ur->session, 0, n);
		}
		u64map_del(&up_reqs, key);
		free(ur->id);
		free(ur->key);
		free(ur);
		pos = 0;	/* the map changed */
	}
}

/* Forget the upstream requests of a connection, telling the clients. */
void
upreq_drop(struct conn *c, int tell)
{
	upreq_forget(c, NULL, tell ? "the upstream went away" : NULL);
}

/* A request to a session's client, under a reference of its own (new). */
static struct up_req *
up_req_new(uint32_t session)
{
	struct up_req	*ur = xcalloc(1, sizeof *ur);

	do {
		if (++next_ref == 0)
			next_ref = 1;
	} while (u64map_get(&up_reqs, next_ref) != NULL);
	ur->ref = next_ref;
	ur->session = session;
	u64map_put(&up_reqs, ur->ref, ur);
	return (ur);
}

/*
 * Send a request to the client of a call, for a modern upstream's input
 * request: it is answered by reference like any upstream request, and
 * the answer goes to the mrtr.  Returns the reference.
 */
uint32_t
upreq_send(struct conn *c, uint32_t session, uint32_t tag, struct mrtr *mrtr,
    const char *key, const char *method, const char *params)
{
	struct up_req	*ur = up_req_new(session);
	struct evbuffer	*buf;

	ur->conn = c;
	ur->tag = tag;
	ur->mrtr = mrtr;
	ur->key = xstrdup(key);
	buf = evbuffer_new();
	evbuffer_add_printf(buf, "{\"jsonrpc\":\"2.0\",\"id\":%u,\"method\":"
	    "\"%s\"", ur->ref, method);
	if (params != NULL)
		evbuffer_add_printf(buf, ",\"params\":%s", params);
	evbuffer_add(buf, "}", 1);
	chan_send_buffer(MSG_UP_REQUEST, session, tag, buf);
	evbuffer_free(buf);
	return (ur->ref);
}

/*
 * Send a request of the worker's own to a session's client (params taken):
 * the answer, or NULL when none will come, goes to cb.  Returns the
 * reference.
 */
uint32_t
upreq_send_own(uint32_t session, const char *method, json_t *params,
    upreq_own_cb cb, void *arg)
{
	struct up_req	*ur = up_req_new(session);
	json_t		*o;

	ur->own = cb;
	ur->own_arg = arg;
	o = json_pack("{s:s, s:I, s:s, s:o}", "jsonrpc", "2.0", "id",
	    (json_int_t)ur->ref, "method", method, "params", params);
	chan_send_json(MSG_UP_REQUEST, session, 0, o);
	return (ur->ref);
}

/* Forget a request of the worker's own; with a reason, tell its client. */
void
upreq_drop_own(uint32_t ref, const char *reason)
{
	struct up_req	*ur;

	if ((ur = u64map_del(&up_reqs, ref)) == NULL)
		return;
	if (reason != NULL)
		chan_send_json(MSG_NOTIFY, ur->session, 0, json_pack("{s:s, "
		    "s:s, s:{s:I, s:s}}", "jsonrpc", "2.0", "method",
		    "notifications/cancelled", "params", "requestId",
		    (json_int_t)ur->ref, "reason", reason));
	free(ur);
}

/* A call waiting for its client goes away: forget its requests. */
void
upreq_drop_mrtr(struct mrtr *mrtr, int tell)
{
	upreq_forget(NULL, mrtr, tell ? "the call was cancelled" : NULL);
}

/* Answer a request from the upstream ourselves. */
static void
upreq_answer(struct conn *c, const struct jrpc *m, int code, const char *msg)
{
	struct evbuffer	*buf = evbuffer_new();

	if (code == 0)
		jrpc_add_result(buf, m->p + m->id.off, m->id.len, msg,
		    strlen(msg));
	else
		jrpc_add_error(buf, m->p + m->id.off, m->id.len, code, msg,
		    NULL);
	conn_send(c, buf);
	evbuffer_free(buf);
}

/*
 * Work out which client caused a message from the upstream: the request
 * whose response stream carried it, else the connection's own session,
 * else the one session with calls in flight.  Returns 0 with *session
 * (and *tag, the most recent such call, or 0) set; -1 if there is no
 * caller or more than one session could be.
 */
/* Has a call a request of the upstream's waiting for its client? */
static int
upreq_call_asking(const struct conn *c, uint32_t tag)
{
	const struct up_req	*ur;
	size_t			 pos = 0;
	uint64_t		 key;
	void			*value;

	while (u64map_next(&up_reqs, &pos, &key, &value)) {
		ur = value;
		if (ur->conn == c && ur->tag == tag && ur->mrtr == NULL)
			return (1);
	}
	return (0);
}

/*
 * The call a request with no related id is for: the session's most recent
 * (best).  A 2025 session's calls share its client, so the guess only
 * picks a stream.  A 2026-07-28 principal's call is parked for the input
 * it gives, so the worker does not guess between clients: with one call
 * in flight, that one; for a principal with a token, the one call not
 * already waiting for an answer (its tool, not one that asked and waits,
 * is the one asking); else, and always for tokenless clients, who may be
 * many, refuse (0).
 */
static uint32_t
upreq_origin_call(struct conn *c, const struct call *best)
{
	const struct session_info	*si;
	const struct call		*call, *idle = NULL;
	size_t				 pos = 0;
	uint64_t			 key;
	void				*value;
	unsigned int			 inflight = 0, nidle = 0;

	if (best == NULL)
		return (0);
	if (!best->client_modern)
		return (best->tag);
	while (u64map_next(&c->calls, &pos, &key, &value)) {
		call = value;
		if (call->tag == 0 || call->session != best->session)
			continue;
		inflight++;
		if (!upreq_call_asking(c, call->tag)) {
			idle = call;
			nidle++;
		}
	}
	if (inflight <= 1)
		return (best->tag);
	si = worker_session_info(best->session);
	if (si == NULL || si->shared || nidle != 1)
		return (0);
	return (idle->tag);
}

/*
 * The session and call a request or notification of the upstream comes
 * from: its related call, else the only origin with calls in flight
 * (nsessions: 0 none, 1 one, 2 more; the gateway's own calls, session 0,
 * count as one), else -1: the gateway never guesses.
 */
static int
upreq_origin(struct conn *c, int64_t related, uint32_t *session,
    uint32_t *tag, int *nsessions)
{
	struct call	*call, *best = NULL;
	size_t		 pos = 0;
	uint64_t	 key;
	void		*value;
	uint32_t	 first = 0;

	*session = 0;
	*tag = 0;
	*nsessions = 0;
	if (related != 0 &&
	    (call = u64map_get(&c->calls, (uint64_t)related)) != NULL &&
	    call->tag != 0) {
		*session = call->session;
		*tag = call->tag;
		*nsessions = 1;
		return (0);
	}
	while (u64map_next(&c->calls, &pos, &key, &value)) {
		call = value;
		if (call->tag == 0)
			continue;
		/* The gateway's own calls (session 0) are an origin too. */
		if (*nsessions == 0) {
			first = call->session;
			*nsessions = 1;
		} else if (call->session != first)
			*nsessions = 2;
		if (best == NULL || call->id > best->id)
			best = call;
	}
	if (c->session != 0) {
		*session = c->session;
		*tag = upreq_origin_call(c, best);
		*nsessions = 1;
		return (0);
	}
	if (*nsessions != 1)
		return (-1);
	*session = best->session;
	*tag = upreq_origin_call(c, best);
	return (0);
}

/* Get a message's params.elicitationId (caller frees), or NULL. */
static char *
upreq_elicitation_id(const struct jrpc *m)
{
	static const char *const path[] = { "elicitationId", NULL };
	struct jspan	 eid;

	if (jscan_path(m->p, m->params, path, &eid) != 0)
		return (NULL);
	return (jscan_strdup(m->p, eid));
}

/* Remember which session a URL elicitation went to. */
static void
upreq_note_elicitation(const struct jrpc *m, uint32_t session)
{
	char	*id, *old;

	if ((id = upreq_elicitation_id(m)) == NULL)
		return;
	if ((old = ringmap_put(&elicitations, id, session)) != NULL) {
		log_debug("URL elicitation %.64s forgotten: %d newer ones "
		    "are in flight", old, MAX_ELICITATIONS);
		free(old);
	}
	free(id);
}

/* A request from the upstream: ours to answer, or its caller's. */
void
upreq_request(struct conn *c, const struct jrpc *m, int64_t related)
{
	struct up_req	*ur;
	struct evbuffer	*buf;
	uint32_t	 session, tag;
	int		 n;
	char		 ref[16], why[256];

	if (m->method_id == MCPM_PING) {
		upreq_answer(c, m, 0, "{}");
		return;
	}
	if (upreq_origin(c, related, &session, &tag, &n) != 0) {
		/* The supervisor applies the upstream's strategies, if any. */
		if (n == 0)
			snprintf(why, sizeof why, "no client call is in flight");
		else
			snprintf(why, sizeof why, "calls of more than one "
			    "client session, or of the gateway's own, are in "
			    "flight and it cannot tell which one this is for");
		log_info("%s has no origin: %s", m->method_name, why);
		session = tag = 0;
	}
	ur = xcalloc(1, sizeof *ur);
	do {
		if (++next_ref == 0)
			next_ref = 1;
	} while (u64map_get(&up_reqs, next_ref) != NULL);
	ur->ref = next_ref;
	ur->conn = c;
	ur->session = session;
	ur->tag = tag;
	ur->idlen = m->id.len;
	ur->id = xmalloc(m->id.len);
	memcpy(ur->id, m->p + m->id.off, m->id.len);
	u64map_put(&up_reqs, ur->ref, ur);
	if (m->method_id == MCPM_ELICITATION)
		upreq_note_elicitation(m, session);

	snprintf(ref, sizeof ref, "%u", ur->ref);
	buf = jscan_replace(m->p, m->n, m->id, ref, strlen(ref));
	chan_send_buffer(MSG_UP_REQUEST, session, tag, buf);
	evbuffer_free(buf);
}

void
upreq_relay_answer(uint32_t ref, const char *p, size_t n)
{
	struct up_req	*ur;
	struct jrpc	 m;
	struct evbuffer	*buf;
	const char	*why;

	if ((ur = u64map_del(&up_reqs, ref)) == NULL) {
		log_debug("answer to an upstream request no longer waiting");
		return;
	}
	if (ur->own != NULL) {
		if (jrpc_scan(p, n, &m, &why) == 0 &&
		    (m.kind == JRPC_RESULT || m.kind == JRPC_ERROR))
			ur->own(ur->own_arg, &m);
		else {
			log_warnx("bad answer from the supervisor: %s", why);
			ur->own(ur->own_arg, NULL);
		}
		free(ur);
		return;
	}
	if (ur->mrtr != NULL) {
		if (jrpc_scan(p, n, &m, &why) == 0 &&
		    (m.kind == JRPC_RESULT || m.kind == JRPC_ERROR))
			mrtr_answer(ur->mrtr, ur->key, &m);
		else
			log_warnx("bad answer from the supervisor: %s", why);
		free(ur->key);
		free(ur);
		return;
	}
	if (jrpc_scan(p, n, &m, &why) == 0 &&
	    (m.kind == JRPC_RESULT || m.kind == JRPC_ERROR)) {
		buf = jscan_replace(p, n, m.id, ur->id, ur->idlen);
		conn_send(ur->conn, buf);
		evbuffer_free(buf);
	} else
		log_warnx("bad answer from the supervisor: %s", why);
	free(ur->id);
	free(ur);
}

/* Send the upstream a notification about a request it made. */
void
upreq_relay_up_notify(uint32_t ref, const char *p, size_t n)
{
	struct up_req	*ur;
	struct evbuffer	*buf;

	if ((ur = u64map_get(&up_reqs, ref)) == NULL) {
		log_debug("notification about an upstream request no longer "
		    "waiting");
		return;
	}
	/* An input request of a 2026-07-28 upstream has no channel back;
	 * one of the worker's own has no upstream. */
	if (ur->mrtr != NULL || ur->own != NULL)
		return;
	buf = evbuffer_new();
	evbuffer_add(buf, p, n);
	conn_send(ur->conn, buf);
	evbuffer_free(buf);
}

/* A progress notification: back to the request's client, token restored. */
static void
upreq_progress(struct conn *c, const struct jrpc *m)
{
	static const char *const path[] = { "progressToken", NULL };
	struct jspan	 token;
	struct call	*call;
	struct evbuffer	*buf;
	int64_t		 id;

	if (jscan_path(m->p, m->params, path, &token) != 0 ||
	    jscan_int64(m->p, token, &id) != 0 ||
	    (call = u64map_get(&c->calls, (uint64_t)id)) == NULL ||
	    call->token == NULL) {
		log_debug("progress for no known request");
		return;
	}
	buf = jscan_replace(m->p, m->n, token, call->token, call->tokenlen);
	chan_send_buffer(MSG_NOTIFY, call->session, call->tag, buf);
	evbuffer_free(buf);
}

/* The upstream cancelled a request it sent a client. */
static void
upreq_cancelled(struct conn *c, const struct jrpc *m)
{
	struct up_req	*ur;
	struct jspan	 rid, reason;
	struct evbuffer	*buf;
	size_t		 pos = 0;
	uint64_t	 key;
	void		*value;

	if (jscan_member(m->p, m->params, "requestId", &rid) != 0)
		return;
	while (u64map_next(&up_reqs, &pos, &key, &value)) {
		ur = value;
		if (ur->conn == c && ur->idlen == rid.len &&
		    memcmp(ur->id, m->p + rid.off, rid.len) == 0)
			break;
		ur = NULL;
	}
	if (ur == NULL) {
		log_debug("upstream cancelled a request it has not sent");
		return;
	}
	buf = evbuffer_new();
	evbuffer_add_printf(buf, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/cancelled\",\"params\":{\"requestId\":%u",
	    ur->ref);
	if (jscan_member(m->p, m->params, "reason", &reason) == 0 &&
	    jscan_type(m->p, reason) == JT_STRING) {
		evbuffer_add(buf, ",\"reason\":", 10);
		evbuffer_add(buf, m->p + reason.off, reason.len);
	}
	evbuffer_add(buf, "}}", 2);
	chan_send_buffer(MSG_NOTIFY, ur->session, 0, buf);
	evbuffer_free(buf);
	u64map_del(&up_reqs, ur->ref);
	free(ur->id);
	free(ur);
}

/* Relay a notification as it is, to a session (0: any) and request. */
static void
upreq_forward(const struct jrpc *m, uint32_t session, uint32_t tag)
{
	chan_send(MSG_NOTIFY, session, tag, m->p, m->n);
}

/* A notification from the upstream. */
void
upreq_notification(struct conn *c, const struct jrpc *m, int64_t related)
{
	const char	*method = m->method_name;
	uint32_t	 session, tag;
	char		*id;
	int		 n, found;

	/* A modern upstream's change notifications come by its listen. */
	if (era_listen_notification(c, m))
		return;
	switch (m->method_id) {
	case MCPM_PROGRESS:
		upreq_progress(c, m);
		return;
	case MCPM_MESSAGE:
		/* A log line goes to its caller, or to every session. */
		if (upreq_origin(c, related, &session, &tag, &n) != 0)
			session = tag = 0;
		upreq_forward(m, session, tag);
		return;
	case MCPM_UPDATED:
		upreq_forward(m, c->session, 0);
		return;
	case MCPM_CANCELLED:
		upreq_cancelled(c, m);
		return;
	case MCPM_ELICITATION_COMPLETE:
		if ((id = upreq_elicitation_id(m)) == NULL)
			return;
		found = ringmap_take(&elicitations, id, &session);
		free(id);
		if (found != 0) {
			log_debug("elicitation completed for no known session");
			return;
		}
		upreq_forward(m, session, 0);
		return;
	default:
		break;
	}
	/* Any list_changed; catalog.c refreshes the lists it keeps. */
	if (strncmp(method, "notifications/", 14) == 0 &&
	    strlen(method) > 26 &&
	    strcmp(method + strlen(method) - 13, "/list_changed") == 0)
		catalog_list_changed(c, m);
	else
		log_debug("notification %s not relayed", method);
}

/* Once per process. */
void
upreq_init(void)
{
	if (elicitations.slots != NULL)
		return;
	u64map_init(&up_reqs);
	ringmap_init(&elicitations, MAX_ELICITATIONS);
}
