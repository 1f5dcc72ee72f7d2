/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "idtrack.h"
#include "log.h"
#include "meta.h"
#include "worker.h"
#include "xmalloc.h"

#define CONN_MAX_QUEUED		64	/* requests waiting for an instance */
#define CONN_MAX_EDITS		32	/* of a relayed request */

static void	conn_init_timeout_cb(evutil_socket_t, short, void *);
static void	conn_reap_cb(evutil_socket_t, short, void *);
static void	conn_ping_cb(evutil_socket_t, short, void *);
static void	conn_pong_timeout_cb(evutil_socket_t, short, void *);
static void	conn_deadline_cb(evutil_socket_t, short, void *);

/* Free a call. */
void
call_free(struct call *call)
{
	if (call->deadline != NULL)
		event_free(call->deadline);
	if (call->arg_free != NULL)
		call->arg_free(call->arg);
	if (call->mrtr != NULL)
		mrtr_free(call->mrtr, 0);
	free(call->client_id);
	free(call->token);
	free(call->sent);
	free(call->gw_caps);
	free(call);
}

/* Create a connection and start its transport. */
struct conn *
conn_new(uint32_t session, struct session_info *info)
{
	struct conn	*c;
	struct timeval	 tv;

	upreq_init();
	c = xcalloc(1, sizeof *c);
	c->session = session;
	c->info = info;
	c->next_id = 1;
	u64map_init(&c->calls);
	u64map_init(&c->by_tag);
	strmap_init(&c->subs);
	TAILQ_INIT(&c->queue);
	switch (sc->transport) {
	case TRANSPORT_STDIO:
		c->ops = &transport_stdio;
		break;
#ifdef WORKER_REMOTE
	case TRANSPORT_HTTP:
		c->ops = &transport_http;
		break;
	case TRANSPORT_SSE:
		c->ops = &transport_sse;
		break;
	case TRANSPORT_WS:
		c->ops = &transport_ws;
		break;
#else
	default:
		/* mcp-worker-stdio links no network library; mcp-worker does. */
		worker_status("error", "this worker only speaks stdio");
		worker_fatal_conn(c, "this worker only speaks stdio");
#endif
	}
	c->reap = evtimer_new(base, conn_reap_cb, c);
	c->ping_timer = event_new(base, -1, EV_PERSIST, conn_ping_cb, c);
	c->pong_timer = evtimer_new(base, conn_pong_timeout_cb, c);
	c->last_rx = now_ms();
	c->init_timer = evtimer_new(base, conn_init_timeout_cb, c);
	tv.tv_sec = sc->init_timeout;
	tv.tv_usec = 0;
	evtimer_add(c->init_timer, &tv);
	if (c->ops->start(c) != 0) {
		/* The transport said why; keep its words. */
		conn_lost(c, worker_last_error()[0] != '\0' ?
		    worker_last_error() : "transport failed to start");
		/* Reaped later, it must not reach a session closed since. */
		c->info = NULL;
		return (NULL);
	}
	return (c);
}

/* Free a connection: stop its transport and forget its calls. */
void
conn_free(struct conn *c)
{
	struct queued	*q;
	size_t		 pos = 0;
	uint64_t	 key;
	void		*value;
	int		 k;

	if (c->tp != NULL)
		c->ops->stop(c);
#ifdef WORKER_REMOTE
	upoauth_connect_forget(c);
#endif
	while (u64map_next(&c->calls, &pos, &key, &value))
		call_free(value);
	u64map_free(&c->calls);
	u64map_free(&c->by_tag);
	while ((q = TAILQ_FIRST(&c->queue)) != NULL) {
		TAILQ_REMOVE(&c->queue, q, entry);
		free(q->p);
		free(q);
	}
	upreq_drop(c, 0);
	if (c->info != NULL && c->info->conn == c)
		c->info->conn = NULL;
	if (c->init_timer != NULL)
		event_free(c->init_timer);
	if (c->reap != NULL)
		event_free(c->reap);
	if (c->ping_timer != NULL)
		event_free(c->ping_timer);
	if (c->pong_timer != NULL)
		event_free(c->pong_timer);
	if (c->probe_timer != NULL)
		event_free(c->probe_timer);
	if (c->listen_timer != NULL)
		event_free(c->listen_timer);
	if (c->listen_drop != NULL)
		event_free(c->listen_drop);
	strmap_free(&c->subs);
	json_decref(c->server_caps);
	json_decref(c->server_info);
	free(c->instructions);
	for (k = 0; k < 4; k++)
		json_decref(c->lists[k]);
	free(c);
}

/* The answer to a liveness ping. */
static void
conn_pong(struct conn *c, const struct jrpc *m, void *arg)
{
	char	why[256];

	evtimer_del(c->pong_timer);
	c->pinging = 0;
	/* A transport failure answers a ping with an error: that is death. */
	if (m->kind == JRPC_ERROR && m->error.len > 0 &&
	    memmem(m->p + m->error.off, m->error.len, "-32000", 6) != NULL) {
		snprintf(why, sizeof why, "ping failed: %.*s",
		    (int)(m->error.len > 200 ? 200 : m->error.len),
		    m->p + m->error.off);
		conn_lost(c, why);
	}
}

/* An own request's deadline passed: its callback gets no answer. */
static void
conn_deadline_cb(evutil_socket_t fd, short events, void *arg)
{
	struct call	*call = arg;
	struct conn	*c = call->conn;
	call_cb		 cb = call->cb;
	void		*cbarg = call->arg;

	log_warnx("%s: no answer within %u s", mcp_method_name(call->method),
	    sc->request_timeout);
	u64map_del(&c->calls, (uint64_t)call->id);
	/* The callback owns arg from here. */
	call->arg_free = NULL;
	call_free(call);
	if (cb != NULL)
		cb(c, NULL, cbarg);
}

/* Send a liveness ping now, unless one is out. */
void
conn_probe(struct conn *c)
{
	struct timeval	tv = { (time_t)sc->ping_timeout, 0 };

	if (c->state != CONN_READY || c->pinging)
		return;
	c->pinging = 1;
	evtimer_add(c->pong_timer, &tv);
	/* 2026-07-28 has no ping: discover is as cheap. */
	conn_call(c, c->modern ? MCPM_DISCOVER : MCPM_PING, NULL, conn_pong,
	    NULL);
}

/* Ping the upstream when it has been quiet for ping_interval. */
static void
conn_ping_cb(evutil_socket_t fd, short events, void *arg)
{
	struct conn	*c = arg;

	/* Not read because the supervisor is behind: not its silence. */
	if (chan_waiting()) {
		c->last_rx = now_ms();
		return;
	}
	if (now_ms() - c->last_rx >= (int64_t)sc->ping_interval * 1000)
		conn_probe(c);
}

/* No answer to a ping: the upstream is hung. */
static void
conn_pong_timeout_cb(evutil_socket_t fd, short events, void *arg)
{
	struct conn	*c = arg;
	char		 why[128];
	struct timeval	 tv = { (time_t)sc->ping_timeout, 0 };

	/* Its answer may wait behind what we do not read yet. */
	if (chan_waiting()) {
		evtimer_add(c->pong_timer, &tv);
		return;
	}
	snprintf(why, sizeof why, "stopped answering (no answer to a ping "
	    "within %u s)", sc->ping_timeout);
	conn_lost(c, why);
}

/* Start pinging a ready connection, if configured. */
static void
conn_start_pings(struct conn *c)
{
	struct timeval	tv = { (time_t)sc->ping_interval, 0 };

	if (sc->ping_interval > 0)
		evtimer_add(c->ping_timer, &tv);
}

void
conn_catalog_ready(struct conn *c)
{
	c->state = CONN_READY;
	evtimer_del(c->init_timer);
	conn_start_pings(c);
	worker_status("ready", NULL);
}

/* The handshake took too long. */
static void
conn_init_timeout_cb(evutil_socket_t fd, short events, void *arg)
{
	struct conn	*c = arg;
	char		 why[128];

	snprintf(why, sizeof why, "not initialized within %u s",
	    sc->init_timeout);
	if (c->tp != NULL && c->ops->pid != NULL && c->ops->pid(c) > 0)
		log_warnx("upstream process %ld: %s", (long)c->ops->pid(c),
		    why);
	conn_lost(c, why);
}

/*
 * Fail a relayed request back to the supervisor.  Gone: the connection or
 * instance it was on ended, which its breaker does not count (an upstream
 * that exits is restarted, not broken).
 */
void
conn_fail(uint32_t session, uint32_t tag, int code, const char *msg, int gone)
{
	json_t	*o;

	o = json_pack("{s:i, s:s}", "code", code, "message", msg);
	if (gone)
		json_object_set_new(o, "gone", json_true());
	chan_send_json(MSG_FAIL, session, tag, o);
}

/* Fail the requests queued for a start that will not come. */
static void
conn_drop_queue(struct conn *c, const char *msg)
{
	struct queued	*q;

	while ((q = TAILQ_FIRST(&c->queue)) != NULL) {
		TAILQ_REMOVE(&c->queue, q, entry);
		conn_fail(q->session, q->tag, MCP_CONNECTION_CLOSED, msg, 1);
		free(q->p);
		free(q);
	}
	c->nqueued = 0;
}

/*
 * The transport failed or the upstream went away.  The shared connection
 * takes the worker with it; a per-session one fails its requests and is
 * freed (the next request of that session starts a new instance).
 */
void
conn_lost(struct conn *c, const char *why)
{
	static const struct timeval	 zero = { 0, 0 };
	char				 msg[512];
	json_t				*o;
#ifdef WORKER_REMOTE
	json_t				*data;
#endif

	if (c->state == CONN_DEAD)
		return;
	c->state = CONN_DEAD;
	snprintf(msg, sizeof msg, "upstream %s: %s", sc->name, why);
	/*
	 * Some 2025 servers end on a request before initialize: one that
	 * went away during the probe is taken for a 2025 server by the next
	 * worker (the supervisor is told), not probed again and again.
	 */
	if (c->probing && sc->era == ERA_AUTO &&
	    sc->transport != TRANSPORT_HTTP) {
		worker_probe_failed();
		snprintf(msg, sizeof msg, "upstream %s: %s (during the "
		    "server/discover probe: taken for a 2025 server from now "
		    "on)", sc->name, why);
	}
#ifdef WORKER_REMOTE
	/* No token without a user: answer so, and wait for mcpctl login. */
	if (upoauth_login_needed() != NULL)
		snprintf(msg, sizeof msg, "%s", upoauth_login_needed());
	if (c->session == 0 && upoauth_login_needed() != NULL) {
		conn_fail_all(c, MCP_CONNECTION_CLOSED, msg);
		conn_drop_queue(c, msg);
		if (c->init_timer != NULL)
			evtimer_del(c->init_timer);
		evtimer_del(c->ping_timer);
		evtimer_del(c->pong_timer);
		return;
	}
#endif
	if (c->session == 0)
		worker_fatal_conn(c, msg);
#ifdef WORKER_REMOTE
	/*
	 * Its user must log in first: the URL is for the client alone.  Its
	 * state binds whoever completes it to this user, so the log has
	 * none of it.
	 */
	data = upoauth_elicit_data(c);
	if (data != NULL)
		log_warnx("session %u: upstream %s: its user must log in "
		    "first (the client has the link)", c->session, sc->name);
	else
#endif
		log_warnx("session %u: %s", c->session, msg);
	if (!c->announced) {
		/* The session's view waits for this instance's catalog. */
		c->announced = 1;
		o = json_pack("{s:s}", "error", msg);
#ifdef WORKER_REMOTE
		if (data != NULL) {
			json_object_set_new(o, "code",
			    json_integer(MCP_URL_ELICITATION_REQUIRED));
			json_object_set_new(o, "data", data);
			data = NULL;
		}
#endif
		chan_send_json(MSG_CATALOG, c->session, 0, o);
	}
#ifdef WORKER_REMOTE
	json_decref(data);
#endif
	conn_fail_all(c, MCP_CONNECTION_CLOSED, msg);
	conn_drop_queue(c, msg);
	upreq_drop(c, 1);
	if (c->init_timer != NULL)
		evtimer_del(c->init_timer);
	evtimer_del(c->ping_timer);
	evtimer_del(c->pong_timer);
	/* Free it from the loop, not from inside its transport. */
	evtimer_add(c->reap, &zero);
}

/* Free a dead per-session connection; its session's next request starts
 * a new instance. */
static void
conn_reap_cb(evutil_socket_t fd, short events, void *arg)
{
	struct conn	*c = arg;

	if (c->info != NULL && c->info->conn == c)
		c->info->conn = NULL;
	conn_free(c);
}

/* Send a message built in a buffer. */
void
conn_send(struct conn *c, struct evbuffer *buf)
{
	if (c->tp == NULL || c->state == CONN_DEAD) {
		evbuffer_drain(buf, evbuffer_get_length(buf));
		return;
	}
	c->ops->send(c, buf);
}

/* Send a message given as JSON. */
static void
conn_send_json(struct conn *c, json_t *msg)
{
	struct evbuffer	*buf = evbuffer_new();
	char		*s;

	if ((s = json_dumps(msg, JSON_COMPACT)) == NULL)
		fatalx("json_dumps");
	evbuffer_add(buf, s, strlen(s));
	free(s);
	conn_send(c, buf);
	evbuffer_free(buf);
}

int64_t
conn_call(struct conn *c, enum mcp_method method, json_t *params, call_cb cb,
    void *arg)
{
	return (conn_call_owned(c, method, params, cb, arg, NULL, 0));
}

int64_t
conn_call_owned(struct conn *c, enum mcp_method method, json_t *params,
    call_cb cb, void *arg, void (*arg_free)(void *), unsigned int deadline)
{
	struct call	*call;
	struct timeval	 tv;
	json_t		*msg;
	int64_t		 id;

	call = xcalloc(1, sizeof *call);
	call->id = id = c->next_id++;
	call->cb = cb;
	call->arg = arg;
	call->arg_free = arg_free;
	call->method = method;
	u64map_put(&c->calls, (uint64_t)call->id, call);
	if (deadline > 0) {
		call->conn = c;
		call->deadline = evtimer_new(base, conn_deadline_cb, call);
		tv.tv_sec = deadline;
		tv.tv_usec = 0;
		evtimer_add(call->deadline, &tv);
	}
	msg = json_pack("{s:s, s:I, s:s}", "jsonrpc", "2.0", "id",
	    (json_int_t)call->id, "method", mcp_method_name(method));
	params = era_own_params(c, method, params);
	if (params != NULL)
		json_object_set_new(msg, "params", params);
	conn_send_json(c, msg);
	json_decref(msg);
	return (id);
}

void
conn_forget_call(struct conn *c, int64_t id)
{
	struct call	*call;

	if ((call = u64map_del(&c->calls, (uint64_t)id)) == NULL)
		return;
	if (call->tag != 0)
		u64map_del(&c->by_tag, call->tag);
	call_free(call);
}

void
conn_cancel_call(struct conn *c, int64_t id, const char *why)
{
	/* Over Streamable HTTP, a modern upstream is told by the stream. */
	if (c->modern && c->ops->cancel != NULL && c->ops->cancel(c, id) == 0) {
		conn_forget_call(c, id);
		return;
	}
	conn_notify(c, "notifications/cancelled", json_pack("{s:I, s:s}",
	    "requestId", (json_int_t)id, "reason", why));
	/* Told, a 2025 server sends no answer: its stream would stay open,
	 * a connection each, so it is closed too. */
	if (c->ops->cancel != NULL)
		c->ops->cancel(c, id);
	conn_forget_call(c, id);
}

void
conn_answer_local(uint32_t session, uint32_t tag, const struct jrpc *m,
    const char *result)
{
	struct evbuffer	*buf = evbuffer_new();

	jrpc_add_result(buf, m->p + m->id.off, m->id.len, result,
	    strlen(result));
	chan_send_buffer(MSG_RESPONSE, session, tag, buf);
	evbuffer_free(buf);
}

void
conn_notify(struct conn *c, const char *method, json_t *params)
{
	json_t	*msg;

	msg = json_pack("{s:s, s:s}", "jsonrpc", "2.0", "method", method);
	if (params != NULL)
		json_object_set_new(msg, "params", params);
	conn_send_json(c, msg);
	json_decref(msg);
}

/* A per-session instance is ready: relay what waited for it. */
void
conn_ready(struct conn *c)
{
	struct queued	*q;

	c->state = CONN_READY;
	evtimer_del(c->init_timer);
	conn_start_pings(c);
	if (c->info != NULL && c->info->loglevel != NULL &&
	    json_object_get(c->server_caps, "logging") != NULL)
		conn_call_owned(c, MCPM_SET_LEVEL, json_pack("{s:s}",
		    "level", c->info->loglevel), NULL, NULL, NULL,
		    sc->request_timeout);
	while ((q = TAILQ_FIRST(&c->queue)) != NULL) {
		TAILQ_REMOVE(&c->queue, q, entry);
		c->nqueued--;
		conn_relay_request(c, q->session, q->tag, q->p, q->n);
		free(q->p);
		free(q);
	}
}

/* A response to one of our requests (owner: see conn_message). */
static void
conn_response(struct conn *c, const struct jrpc *m, struct evbuffer *owner)
{
	struct call	*call;
	struct evbuffer	*buf;
	struct jedit	 edits[2], tmp;
	size_t		 nedits = 1;
	int64_t		 id;

	if (jscan_int64(m->p, m->id, &id) != 0 ||
	    (call = u64map_get(&c->calls, (uint64_t)id)) == NULL ||
	    call->waiting) {
		log_debug("response to an unknown request id %.*s",
		    (int)(m->id.len > 40 ? 40 : m->id.len), m->p + m->id.off);
		if (owner != NULL)
			evbuffer_free(owner);
		return;
	}
	if (call->tag == 0) {
		u64map_del(&c->calls, (uint64_t)id);
		/* The callback owns arg from here. */
		call->arg_free = NULL;
		if (call->cb != NULL)
			call->cb(c, m, call->arg);
		call_free(call);
		if (owner != NULL)
			evbuffer_free(owner);
		return;
	}
	/* A modern upstream asks for input the gateway supplies (all of a
	 * 2025 client's, what a modern client did not declare): it waits. */
	if (call->sent != NULL && era_input_required(m) &&
	    mrtr_input_required(c, call, m) == 0) {
		if (owner != NULL)
			evbuffer_free(owner);
		return;
	}
	u64map_del(&c->calls, (uint64_t)id);
	u64map_del(&c->by_tag, call->tag);
	edits[0].at = m->id;
	edits[0].text = call->client_id;
	edits[0].len = call->client_idlen;
	/* A 2025 upstream's result says resultType to a modern client
	 * (the id may come after the result: the SDK writes it last). */
	if (era_response_edits(c, call, m, &edits[1]) == 1) {
		nedits = 2;
		if (edits[1].at.off < edits[0].at.off) {
			tmp = edits[0];
			edits[0] = edits[1];
			edits[1] = tmp;
		}
	}
	buf = evbuffer_new();
	if (owner != NULL)
		jscan_splice_owned(buf, owner, m->p, m->n, edits, nedits);
	else
		jscan_splice(buf, m->p, m->n, edits, nedits);
	chan_send_buffer_flags(MSG_RESPONSE, m->kind == JRPC_ERROR ?
	    FRAME_F_ERROR : 0, call->session, call->tag, buf);
	evbuffer_free(buf);
	call_free(call);
}

/*
 * A message that is not valid JSON-RPC: dropped, and if it answers one of
 * our calls, that call fails now, not at request_timeout.
 */
static void
conn_invalid(struct conn *c, const char *p, size_t n, const char *why)
{
	struct idtrack	 t;
	int64_t		 id;
	char		 msg[256];

	idtrack_init(&t);
	idtrack_feed(&t, p, n);
	if (idtrack_int64(&t, &id) != 0 || u64map_get(&c->calls,
	    (uint64_t)id) == NULL) {
		log_warnx("upstream sent an invalid message (%s), dropped",
		    why);
		return;
	}
	log_warnx("upstream sent an invalid answer (%s): its call fails", why);
	snprintf(msg, sizeof msg, "upstream %s sent an answer that is not "
	    "valid JSON-RPC: %s", sc->name, why);
	conn_answer_error(c, id, msg);
}

/*
 * A message with unpaired surrogates, repaired (each U+FFFD) and handled
 * as if it had come so; -1 if there was none to repair.
 */
static int
conn_repair(struct conn *c, const char *p, size_t n, int64_t related)
{
	struct evbuffer	*copy = evbuffer_new();
	char		*q;
	size_t		 fixed;

	evbuffer_add(copy, p, n);
	q = (char *)evbuffer_pullup(copy, -1);
	if ((fixed = jscan_fix_surrogates(q, n)) == 0) {
		evbuffer_free(copy);
		return (-1);
	}
	log_warnx("upstream sent %zu unpaired surrogate%s (a string cut "
	    "inside a pair): each passed on as U+FFFD", fixed, fixed == 1 ?
	    "" : "s");
	conn_message(c, q, n, related, copy);
	return (0);
}

/* One message from the upstream. */
void
conn_message(struct conn *c, const char *p, size_t n, int64_t related,
    struct evbuffer *owner)
{
	struct jrpc	 m;
	const char	*why;

	c->last_rx = now_ms();
	if (jrpc_scan(p, n, &m, &why) != 0) {
		/* Half a surrogate pair (a string cut by JSON.stringify's
		 * writer): U+FFFD in its place, as a decoder would. */
		if (strstr(why, "surrogate") != NULL && conn_repair(c, p, n,
		    related) == 0) {
			if (owner != NULL)
				evbuffer_free(owner);
			return;
		}
		conn_invalid(c, p, n, why);
		if (owner != NULL)
			evbuffer_free(owner);
		return;
	}
	switch (m.kind) {
	case JRPC_RESULT:
	case JRPC_ERROR:
		conn_response(c, &m, owner);
		return;
	case JRPC_REQUEST:
		upreq_request(c, &m, related);
		break;
	case JRPC_NOTIFICATION:
		upreq_notification(c, &m, related);
		break;
	}
	if (owner != NULL)
		evbuffer_free(owner);
}

/*
 * The transport could not get an answer to our request id: answer it with
 * an error, as if the upstream had (the client's id is restored as usual).
 */
void
conn_answer_error(struct conn *c, int64_t id, const char *msg)
{
	conn_answer_error_data(c, id, MCP_CONNECTION_CLOSED, msg, NULL);
}

/*
 * The transport could not complete our request id though the upstream is
 * up (an error status, a broken stream): fail it back, which the
 * upstream's breaker counts for -32000.  The worker's own request is
 * answered with the error instead, for its callback.
 */
void
conn_fail_request(struct conn *c, int64_t id, int code, const char *msg)
{
	struct call	*call;

	if ((call = u64map_get(&c->calls, (uint64_t)id)) == NULL ||
	    call->waiting)
		return;
	if (call->tag == 0) {
		conn_answer_error_data(c, id, code, msg, NULL);
		return;
	}
	log_warnx("request %" PRId64 ": %s", id, msg);
	u64map_del(&c->calls, (uint64_t)id);
	u64map_del(&c->by_tag, call->tag);
	conn_fail(call->session, call->tag, code, msg, 0);
	call_free(call);
}

/* The same with a code and data (JSON text, or NULL). */
void
conn_answer_error_data(struct conn *c, int64_t id, int code, const char *msg,
    const char *data)
{
	struct evbuffer	*buf;
	char		 idtext[32];

	if (u64map_get(&c->calls, (uint64_t)id) == NULL)
		return;
	/* A login's message holds its URL, which is the user's alone. */
	if (code == MCP_URL_ELICITATION_REQUIRED)
		log_warnx("request %" PRId64 ": its user must log in first "
		    "(the client has the link)", id);
	else
		log_warnx("request %" PRId64 ": %s", id, msg);
	snprintf(idtext, sizeof idtext, "%" PRId64, id);
	buf = evbuffer_new();
	jrpc_add_error(buf, idtext, strlen(idtext), code, msg, data);
	conn_message(c, (const char *)evbuffer_pullup(buf, -1),
	    evbuffer_get_length(buf), 0, NULL);
	evbuffer_free(buf);
}

/* Order two edits by position, an insertion before a replacement. */
static int
edit_cmp(const void *a, const void *b)
{
	const struct jedit	*x = a, *y = b;

	if (x->at.off != y->at.off)
		return (x->at.off < y->at.off ? -1 : 1);
	return ((x->at.len != 0) - (y->at.len != 0));
}

void
conn_relay_request(struct conn *c, uint32_t session, uint32_t tag,
    const char *p, size_t n)
{
	static const char *const token_path[] = { "_meta", "progressToken",
	    NULL };
	struct jrpc	 m;
	struct call	*call;
	struct jedit	 edits[CONN_MAX_EDITS];
	struct jspan	 token;
	struct evbuffer	*buf;
	struct era_texts texts = { { NULL }, 0 };
	struct queued	*q;
	const char	*why, *local, *err;
	char		 idtext[32], msg[256];
	size_t		 nedits = 0;
	int		 k, client_modern, code;

	if (c != NULL && c->session != 0 && (c->state == CONN_STARTING ||
	    c->state == CONN_INITIALIZING)) {
		if (c->nqueued >= CONN_MAX_QUEUED) {
			conn_fail(session, tag, MCP_OVERLOADED, "too many "
			    "requests waiting for the upstream to start", 0);
			return;
		}
		q = xcalloc(1, sizeof *q);
		q->session = session;
		q->tag = tag;
		q->p = xmalloc(n);
		memcpy(q->p, p, n);
		q->n = n;
		TAILQ_INSERT_TAIL(&c->queue, q, entry);
		c->nqueued++;
		return;
	}
	if (c == NULL || c->state != CONN_READY) {
		snprintf(msg, sizeof msg, "upstream %s is not ready",
		    sc->name);
#ifdef WORKER_REMOTE
		if (upoauth_login_needed() != NULL)
			snprintf(msg, sizeof msg, "%s", upoauth_login_needed());
#endif
		conn_fail(session, tag, MCP_CONNECTION_CLOSED, msg, 1);
		return;
	}
	if (jrpc_scan(p, n, &m, &why) != 0 || m.kind != JRPC_REQUEST) {
		conn_fail(session, tag, JRPC_INVALID_REQUEST,
		    "invalid request", 0);
		return;
	}
	/* What a modern upstream has no method for is answered here. */
	if ((local = era_local(c, &m, &code, &err)) != NULL) {
		conn_answer_local(session, tag, &m, local);
		return;
	}
	if (err != NULL) {
		conn_fail(session, tag, code, err, 0);
		return;
	}
	client_modern = meta_claim(&m);
	call = xcalloc(1, sizeof *call);
	call->id = c->next_id++;
	call->session = session;
	call->tag = tag;
	call->client_modern = client_modern;
	call->method = m.method_id;
	call->client_idlen = m.id.len;
	call->client_id = xmalloc(m.id.len);
	memcpy(call->client_id, p + m.id.off, m.id.len);
	snprintf(idtext, sizeof idtext, "%" PRId64, call->id);

	edits[nedits].at = m.id;
	edits[nedits].text = idtext;
	edits[nedits++].len = strlen(idtext);
	if (jscan_path(p, m.params, token_path, &token) == 0 &&
	    jrpc_id_valid(p, token)) {
		call->tokenlen = token.len;
		call->token = xmalloc(token.len);
		memcpy(call->token, p + token.off, token.len);
		edits[nedits].at = token;
		edits[nedits].text = idtext;
		edits[nedits++].len = strlen(idtext);
	}
	/* The envelope, added for a modern upstream or dropped for a 2025
	 * one, as the client's era and the upstream's differ. */
	if ((k = era_request_edits(c, session, &m, call, edits + nedits,
	    CONN_MAX_EDITS - nedits, &texts)) > 0)
		nedits += (size_t)k;
	qsort(edits, nedits, sizeof edits[0], edit_cmp);
	u64map_put(&c->calls, (uint64_t)call->id, call);
	u64map_put(&c->by_tag, tag, call);
	buf = evbuffer_new();
	jscan_splice(buf, p, n, edits, nedits);
	era_texts_free(&texts);
	/* A call to a modern upstream whose input the gateway may supply
	 * (a 2025 client's, or a modern client's it added capabilities to)
	 * is sent again with it (mrtr.c): keep what was sent. */
	if (c->modern && (!client_modern || call->gw_caps != NULL) &&
	    mcp_method_is(m.method_id, MCPM_F_PARKS)) {
		call->sentlen = evbuffer_get_length(buf);
		call->sent = xmalloc(call->sentlen);
		evbuffer_copyout(buf, call->sent, call->sentlen);
	}
	conn_send(c, buf);
	evbuffer_free(buf);
}

void
conn_relay_cancel(struct conn *c, uint32_t tag, const char *p, size_t n)
{
	struct call	*call;
	struct queued	*q;
	json_t		*params, *reason;

	if (c == NULL)
		return;
	TAILQ_FOREACH(q, &c->queue, entry) {
		if (q->tag == tag) {
			TAILQ_REMOVE(&c->queue, q, entry);
			c->nqueued--;
			free(q->p);
			free(q);
			return;
		}
	}
	if ((call = u64map_del(&c->by_tag, tag)) == NULL)
		return;
	u64map_del(&c->calls, (uint64_t)call->id);
	/* Over Streamable HTTP, a modern upstream is told by the stream;
	 * a call waiting for its client's input is not at the upstream. */
	if (call->waiting || (c->modern && c->ops->cancel != NULL &&
	    c->ops->cancel(c, call->id) == 0)) {
		if (call->mrtr != NULL) {
			mrtr_free(call->mrtr, 1);
			call->mrtr = NULL;
		}
		call_free(call);
		return;
	}
	params = json_pack("{s:I}", "requestId", (json_int_t)call->id);
	reason = json_loadb(p, n, 0, NULL);
	if (json_is_string(json_object_get(reason, "reason")))
		json_object_set(params, "reason",
		    json_object_get(reason, "reason"));
	json_decref(reason);
	conn_notify(c, "notifications/cancelled", params);
	/* Told, a 2025 server sends no answer: its stream would stay open,
	 * a connection each, so it is closed too. */
	if (c->ops->cancel != NULL)
		c->ops->cancel(c, call->id);
	call_free(call);
}

void
conn_relay_notify(struct conn *c, const char *p, size_t n)
{
	struct evbuffer	*buf;

	if (c == NULL || c->state != CONN_READY)
		return;
	buf = evbuffer_new();
	evbuffer_add(buf, p, n);
	conn_send(c, buf);
	evbuffer_free(buf);
}

void
conn_fail_all(struct conn *c, int code, const char *msg)
{
	size_t		 pos = 0;
	uint64_t	 key;
	void		*value;
	struct call	*call;

	while (u64map_next(&c->calls, &pos, &key, &value)) {
		call = value;
		if (call->tag != 0)
			conn_fail(call->session, call->tag, code, msg, 1);
		call_free(call);
	}
	u64map_free(&c->calls);
	u64map_free(&c->by_tag);
}
