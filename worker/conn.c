#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "log.h"
#include "ringmap.h"
#include "worker.h"
#include "xmalloc.h"

#define CONN_MAX_QUEUED		64	/* requests waiting for an instance */
#define MAX_ELICITATIONS	1024	/* URL elicitations remembered */

/* Protocol versions the worker accepts from upstreams. */
static const char *const upstream_versions[] = {
	"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", NULL
};

/* A request from the upstream that a client is answering. */
struct up_req {
	uint32_t	 ref;		/* our reference, the supervisor's tag */
	struct conn	*conn;
	uint32_t	 session;
	char		*id;		/* the upstream's raw id */
	size_t		 idlen;
};

static struct u64map	up_reqs;	/* ref -> up_req */
static uint32_t		next_ref;
/*
 * URL elicitations in flight, elicitationId -> session, to route their
 * completion: the last MAX_ELICITATIONS, so that one never completed is
 * forgotten when it is the oldest.
 */
static struct ringmap		elicitations;

static void	conn_init_timeout_cb(evutil_socket_t, short, void *);
static void	conn_reap_cb(evutil_socket_t, short, void *);
static void	conn_ping_cb(evutil_socket_t, short, void *);
static void	conn_pong_timeout_cb(evutil_socket_t, short, void *);
static void	conn_send(struct conn *, struct evbuffer *);

/* Free a call. */
static void
call_free(struct call *call)
{
	free(call->client_id);
	free(call->token);
	free(call);
}

/* Create a connection and start its transport. */
struct conn *
conn_new(uint32_t session, struct session_info *info)
{
	struct conn	*c;
	struct timeval	 tv;

	/* Once per process. */
	if (elicitations.slots == NULL) {
		u64map_init(&up_reqs);
		ringmap_init(&elicitations, MAX_ELICITATIONS);
	}
	c = xcalloc(1, sizeof *c);
	c->session = session;
	c->info = info;
	c->next_id = 1;
	u64map_init(&c->calls);
	u64map_init(&c->by_tag);
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
		return (NULL);
	}
	return (c);
}

/* Forget the upstream requests of a connection, telling the clients. */
static void
conn_drop_up_reqs(struct conn *c, int tell)
{
	struct up_req	*ur;
	size_t		 pos = 0;
	uint64_t	 key;
	void		*value;
	json_t		*n;

	while (u64map_next(&up_reqs, &pos, &key, &value)) {
		ur = value;
		if (ur->conn != c)
			continue;
		if (tell) {
			n = json_pack("{s:s, s:s, s:{s:I, s:s}}", "jsonrpc",
			    "2.0", "method", "notifications/cancelled",
			    "params", "requestId", (json_int_t)ur->ref,
			    "reason", "the upstream went away");
			chan_send_json(MSG_NOTIFY, ur->session, 0, n);
		}
		u64map_del(&up_reqs, key);
		free(ur->id);
		free(ur);
		pos = 0;	/* the map changed */
	}
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
	while (u64map_next(&c->calls, &pos, &key, &value))
		call_free(value);
	u64map_free(&c->calls);
	u64map_free(&c->by_tag);
	while ((q = TAILQ_FIRST(&c->queue)) != NULL) {
		TAILQ_REMOVE(&c->queue, q, entry);
		free(q->p);
		free(q);
	}
	conn_drop_up_reqs(c, 0);
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

/* Send a liveness ping now, unless one is out. */
void
conn_probe(struct conn *c)
{
	struct timeval	tv = { (time_t)sc->ping_timeout, 0 };

	if (c->state != CONN_READY || c->pinging)
		return;
	c->pinging = 1;
	evtimer_add(c->pong_timer, &tv);
	conn_call(c, "ping", NULL, conn_pong, NULL);
}

/* Ping the upstream when it has been quiet for ping_interval. */
static void
conn_ping_cb(evutil_socket_t fd, short events, void *arg)
{
	struct conn	*c = arg;

	if (now_ms() - c->last_rx >= (int64_t)sc->ping_interval * 1000)
		conn_probe(c);
}

/* No answer to a ping: the upstream is hung. */
static void
conn_pong_timeout_cb(evutil_socket_t fd, short events, void *arg)
{
	struct conn	*c = arg;
	char		 why[128];

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

/* Fail a relayed request back to the supervisor. */
static void
conn_fail(uint32_t session, uint32_t tag, int code, const char *msg)
{
	chan_send_json(MSG_FAIL, session, tag, json_pack("{s:i, s:s}",
	    "code", code, "message", msg));
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
	struct queued			*q;
	char				 msg[512];

	if (c->state == CONN_DEAD)
		return;
	c->state = CONN_DEAD;
	snprintf(msg, sizeof msg, "upstream %s: %s", sc->name, why);
	if (c->session == 0)
		worker_fatal_conn(c, msg);
	log_warnx("session %u: %s", c->session, msg);
	if (!c->announced) {
		/* The session's view waits for this instance's catalog. */
		c->announced = 1;
		chan_send_json(MSG_CATALOG, c->session, 0, json_pack("{s:s}",
		    "error", msg));
	}
	conn_fail_all(c, MCP_CONNECTION_CLOSED, msg);
	while ((q = TAILQ_FIRST(&c->queue)) != NULL) {
		TAILQ_REMOVE(&c->queue, q, entry);
		conn_fail(q->session, q->tag, MCP_CONNECTION_CLOSED, msg);
		free(q->p);
		free(q);
	}
	c->nqueued = 0;
	conn_drop_up_reqs(c, 1);
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
static void
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

void
conn_call(struct conn *c, const char *method, json_t *params, call_cb cb,
    void *arg)
{
	struct call	*call;
	json_t		*msg;

	call = xcalloc(1, sizeof *call);
	call->id = c->next_id++;
	call->cb = cb;
	call->arg = arg;
	u64map_put(&c->calls, (uint64_t)call->id, call);
	msg = json_pack("{s:s, s:I, s:s}", "jsonrpc", "2.0", "id",
	    (json_int_t)call->id, "method", method);
	if (params != NULL)
		json_object_set_new(msg, "params", params);
	conn_send_json(c, msg);
	json_decref(msg);
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
static void
conn_ready(struct conn *c)
{
	struct queued	*q;

	c->state = CONN_READY;
	evtimer_del(c->init_timer);
	conn_start_pings(c);
	if (c->info != NULL && c->info->loglevel != NULL &&
	    json_object_get(c->server_caps, "logging") != NULL)
		conn_call(c, "logging/setLevel", json_pack("{s:s}", "level",
		    c->info->loglevel), NULL, NULL);
	while ((q = TAILQ_FIRST(&c->queue)) != NULL) {
		TAILQ_REMOVE(&c->queue, q, entry);
		c->nqueued--;
		conn_relay_request(c, q->session, q->tag, q->p, q->n);
		free(q->p);
		free(q);
	}
}

/* The initialize answer arrived. */
static void
conn_initialized(struct conn *c, const struct jrpc *m, void *arg)
{
	json_t		*result;
	json_error_t	 jerr;
	const char	*version, *instr;
	char		 why[512];
	size_t		 i;

	if (m->kind == JRPC_ERROR) {
		snprintf(why, sizeof why, "initialize failed: %.*s",
		    (int)(m->error.len > 300 ? 300 : m->error.len),
		    m->p + m->error.off);
		conn_lost(c, why);
		return;
	}
	result = json_loadb(m->p + m->result.off, m->result.len,
	    JSON_ALLOW_NUL, &jerr);
	if (result == NULL || json_unpack(result, "{s:s}", "protocolVersion",
	    &version) != 0) {
		json_decref(result);
		conn_lost(c, "initialize result has no protocolVersion");
		return;
	}
	for (i = 0; upstream_versions[i] != NULL; i++) {
		if (strcmp(version, upstream_versions[i]) == 0)
			break;
	}
	if (upstream_versions[i] == NULL) {
		snprintf(why, sizeof why, "unsupported protocol version %.32s",
		    version);
		json_decref(result);
		conn_lost(c, why);
		return;
	}
	snprintf(c->version, sizeof c->version, "%s", version);
	c->server_caps = json_incref(json_object_get(result, "capabilities"));
	if (!json_is_object(c->server_caps)) {
		json_decref(c->server_caps);
		c->server_caps = json_object();
	}
	c->server_info = json_incref(json_object_get(result, "serverInfo"));
	if (json_unpack(result, "{s:s}", "instructions", &instr) == 0)
		c->instructions = xstrdup(instr);
	json_decref(result);
	conn_notify(c, "notifications/initialized", NULL);
	log_debug("initialized, protocol %s", c->version);
	if (c->ops->initialized != NULL)
		c->ops->initialized(c);
	if (c->session != 0) {
		/* Its requests flow at once; its catalog, the session's view
		 * of this upstream, follows when fetched. */
		conn_ready(c);
		catalog_fetch_all(c);
	} else
		catalog_fetch_all(c);
}

/*
 * The client capabilities to declare to the upstream.  A shared upstream
 * serves every client at once, so it is told only what the gateway can
 * honour for any request on that session, whoever caused it: sampling and
 * elicitation when their strategy lists can always answer (they hold
 * decline, or for sampling an llm: or tool: link), never roots, which
 * belong to one client.  A per-session instance serves one client: its
 * client's capabilities, plus what the strategies can always answer.  An
 * llm: link takes tools in sampling (sampling.tools, 2025-11-25).
 */
static json_t *
conn_client_caps(struct conn *c)
{
	json_t	*caps, *sampling;

	if (c->info != NULL && json_is_object(c->info->caps))
		caps = json_deep_copy(c->info->caps);
	else
		caps = json_object();
	if (conf_strategies_always(sc->sampling, sc->nsampling)) {
		if (!json_is_object(sampling = json_object_get(caps,
		    "sampling"))) {
			sampling = json_object();
			json_object_set_new(caps, "sampling", sampling);
		}
		if (conf_strategies_have(sc->sampling, sc->nsampling,
		    STRATEGY_LLM) && json_object_get(sampling, "tools") == NULL)
			json_object_set_new(sampling, "tools", json_object());
	}
	if (conf_strategies_always(sc->elicitation, sc->nelicitation))
		json_object_set_new(caps, "elicitation", json_pack("{s:{}, s:{}}",
		    "form", "url"));
	return (caps);
}

/* The transport is up: begin the handshake. */
void
conn_transport_up(struct conn *c)
{
	json_t	*params, *info;

	c->state = CONN_INITIALIZING;
	info = json_pack("{s:s, s:s}", "name", "mcp-supervisor", "version",
	    PACKAGE_VERSION);
	params = json_pack("{s:s, s:o, s:o}", "protocolVersion", "2025-11-25",
	    "capabilities", conn_client_caps(c), "clientInfo", info);
	conn_call(c, "initialize", params, conn_initialized, NULL);
}

/* Answer a request from the upstream ourselves. */
static void
conn_answer(struct conn *c, const struct jrpc *m, int code, const char *msg)
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

/* A response to one of our requests (owner: see conn_message). */
static void
conn_response(struct conn *c, const struct jrpc *m, struct evbuffer *owner)
{
	struct call	*call;
	struct evbuffer	*buf;
	struct jedit	 edit;
	int64_t		 id;

	if (jscan_int64(m->p, m->id, &id) != 0 ||
	    (call = u64map_del(&c->calls, (uint64_t)id)) == NULL) {
		log_debug("response to an unknown request id %.*s",
		    (int)(m->id.len > 40 ? 40 : m->id.len), m->p + m->id.off);
		if (owner != NULL)
			evbuffer_free(owner);
		return;
	}
	if (call->tag == 0) {
		if (call->cb != NULL)
			call->cb(c, m, call->arg);
		call_free(call);
		if (owner != NULL)
			evbuffer_free(owner);
		return;
	}
	u64map_del(&c->by_tag, call->tag);
	edit.at = m->id;
	edit.text = call->client_id;
	edit.len = call->client_idlen;
	buf = evbuffer_new();
	if (owner != NULL)
		jscan_splice_owned(buf, owner, m->p, m->n, &edit, 1);
	else
		jscan_splice(buf, m->p, m->n, &edit, 1);
	chan_send_buffer_flags(MSG_RESPONSE, m->kind == JRPC_ERROR ?
	    FRAME_F_ERROR : 0, call->session, call->tag, buf);
	evbuffer_free(buf);
	call_free(call);
}

/*
 * Work out which client caused a message from the upstream: the request
 * whose response stream carried it, else the connection's own session,
 * else the one session with calls in flight.  Returns 0 with *session
 * (and *tag, the most recent such call, or 0) set; -1 if there is no
 * caller or more than one session could be.
 */
static int
conn_origin(struct conn *c, int64_t related, uint32_t *session,
    uint32_t *tag, int *nsessions)
{
	struct call	*call, *best = NULL;
	size_t		 pos = 0;
	uint64_t	 key;
	void		*value;
	uint32_t	 seen = 0;

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
		if (seen != 0 && call->session != seen)
			(*nsessions)++;
		else if (seen == 0)
			*nsessions = 1;
		seen = call->session;
		if (best == NULL || call->id > best->id)
			best = call;
	}
	if (c->session != 0) {
		*session = c->session;
		*tag = best != NULL ? best->tag : 0;
		*nsessions = 1;
		return (0);
	}
	if (*nsessions != 1)
		return (-1);
	*session = best->session;
	*tag = best->tag;
	return (0);
}

/* Get a message's params.elicitationId (caller frees), or NULL. */
static char *
conn_elicitation_id(const struct jrpc *m)
{
	static const char *const path[] = { "elicitationId", NULL };
	struct jspan	 eid;

	if (jscan_path(m->p, m->params, path, &eid) != 0)
		return (NULL);
	return (jscan_strdup(m->p, eid));
}

/* Remember which session a URL elicitation went to. */
static void
conn_note_elicitation(const struct jrpc *m, uint32_t session)
{
	char	*id, *old;

	if ((id = conn_elicitation_id(m)) == NULL)
		return;
	if ((old = ringmap_put(&elicitations, id, session)) != NULL) {
		log_debug("URL elicitation %.64s forgotten: %d newer ones "
		    "are in flight", old, MAX_ELICITATIONS);
		free(old);
	}
	free(id);
}

/* A request from the upstream: ours to answer, or its caller's. */
static void
conn_request(struct conn *c, const struct jrpc *m, int64_t related)
{
	struct up_req	*ur;
	struct evbuffer	*buf;
	uint32_t	 session, tag;
	int		 n;
	char		 ref[16], why[256];

	if (strcmp(m->method_name, "ping") == 0) {
		conn_answer(c, m, 0, "{}");
		return;
	}
	if (conn_origin(c, related, &session, &tag, &n) != 0) {
		/* The supervisor applies the upstream's strategies, if any. */
		if (n == 0)
			snprintf(why, sizeof why, "no client call is in flight");
		else
			snprintf(why, sizeof why, "%d client sessions have calls "
			    "in flight and the gateway cannot tell which one "
			    "this is for", n);
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
	ur->idlen = m->id.len;
	ur->id = xmalloc(m->id.len);
	memcpy(ur->id, m->p + m->id.off, m->id.len);
	u64map_put(&up_reqs, ur->ref, ur);
	if (strcmp(m->method_name, "elicitation/create") == 0)
		conn_note_elicitation(m, session);

	snprintf(ref, sizeof ref, "%u", ur->ref);
	buf = jscan_replace(m->p, m->n, m->id, ref, strlen(ref));
	chan_send_buffer(MSG_UP_REQUEST, session, tag, buf);
	evbuffer_free(buf);
}

void
conn_relay_answer(uint32_t ref, const char *p, size_t n)
{
	struct up_req	*ur;
	struct jrpc	 m;
	struct evbuffer	*buf;
	const char	*why;

	if ((ur = u64map_del(&up_reqs, ref)) == NULL) {
		log_debug("answer to an upstream request no longer waiting");
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

void
conn_relay_up_notify(uint32_t ref, const char *p, size_t n)
{
	struct up_req	*ur;
	struct evbuffer	*buf;

	if ((ur = u64map_get(&up_reqs, ref)) == NULL) {
		log_debug("notification about an upstream request no longer "
		    "waiting");
		return;
	}
	buf = evbuffer_new();
	evbuffer_add(buf, p, n);
	conn_send(ur->conn, buf);
	evbuffer_free(buf);
}

/* A progress notification: back to the request's client, token restored. */
static void
conn_progress(struct conn *c, const struct jrpc *m)
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
conn_up_cancelled(struct conn *c, const struct jrpc *m)
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
conn_forward(const struct jrpc *m, uint32_t session, uint32_t tag)
{
	chan_send(MSG_NOTIFY, session, tag, m->p, m->n);
}

/* A notification from the upstream. */
static void
conn_notification(struct conn *c, const struct jrpc *m, int64_t related)
{
	const char	*method = m->method_name;
	uint32_t	 session, tag;
	char		*id;
	int		 n, found;

	if (strcmp(method, "notifications/progress") == 0)
		conn_progress(c, m);
	else if (strcmp(method, "notifications/message") == 0) {
		/* A log line goes to its caller, or to every session. */
		if (conn_origin(c, related, &session, &tag, &n) != 0)
			session = tag = 0;
		conn_forward(m, session, tag);
	} else if (strcmp(method, "notifications/resources/updated") == 0)
		conn_forward(m, c->session, 0);
	else if (strcmp(method, "notifications/cancelled") == 0)
		conn_up_cancelled(c, m);
	else if (strcmp(method, "notifications/elicitation/complete") == 0) {
		if ((id = conn_elicitation_id(m)) == NULL)
			return;
		found = ringmap_take(&elicitations, id, &session);
		free(id);
		if (found != 0) {
			log_debug("elicitation completed for no known session");
			return;
		}
		conn_forward(m, session, 0);
	} else if (strncmp(method, "notifications/", 14) == 0 &&
	    strlen(method) > 26 &&
	    strcmp(method + strlen(method) - 13, "/list_changed") == 0)
		catalog_list_changed(c, method);
	else
		log_debug("notification %s not relayed", method);
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
		log_warnx("upstream sent an invalid message (%s), dropped",
		    why);
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
		conn_request(c, &m, related);
		break;
	case JRPC_NOTIFICATION:
		conn_notification(c, &m, related);
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
	struct evbuffer	*buf;
	char		 idtext[32];

	if (u64map_get(&c->calls, (uint64_t)id) == NULL)
		return;
	log_warnx("request %" PRId64 ": %s", id, msg);
	snprintf(idtext, sizeof idtext, "%" PRId64, id);
	buf = evbuffer_new();
	jrpc_add_error(buf, idtext, strlen(idtext), MCP_CONNECTION_CLOSED, msg,
	    NULL);
	conn_message(c, (const char *)evbuffer_pullup(buf, -1),
	    evbuffer_get_length(buf), 0, NULL);
	evbuffer_free(buf);
}

/* Order two edits by position. */
static int
edit_cmp(const void *a, const void *b)
{
	const struct jedit	*x = a, *y = b;

	return (x->at.off < y->at.off ? -1 : x->at.off > y->at.off);
}

void
conn_relay_request(struct conn *c, uint32_t session, uint32_t tag,
    const char *p, size_t n)
{
	static const char *const token_path[] = { "_meta", "progressToken",
	    NULL };
	struct jrpc	 m;
	struct call	*call;
	struct jedit	 edits[2];
	struct jspan	 token;
	struct evbuffer	*buf;
	struct queued	*q;
	const char	*why;
	char		 idtext[32], msg[256];
	size_t		 nedits = 0;

	if (c != NULL && c->session != 0 && (c->state == CONN_STARTING ||
	    c->state == CONN_INITIALIZING)) {
		if (c->nqueued >= CONN_MAX_QUEUED) {
			conn_fail(session, tag, MCP_OVERLOADED, "too many "
			    "requests waiting for the upstream to start");
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
		conn_fail(session, tag, MCP_CONNECTION_CLOSED, msg);
		return;
	}
	if (jrpc_scan(p, n, &m, &why) != 0 || m.kind != JRPC_REQUEST) {
		conn_fail(session, tag, JRPC_INVALID_REQUEST,
		    "invalid request");
		return;
	}
	call = xcalloc(1, sizeof *call);
	call->id = c->next_id++;
	call->session = session;
	call->tag = tag;
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
		qsort(edits, nedits, sizeof edits[0], edit_cmp);
	}
	u64map_put(&c->calls, (uint64_t)call->id, call);
	u64map_put(&c->by_tag, tag, call);
	buf = evbuffer_new();
	jscan_splice(buf, p, n, edits, nedits);
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
	params = json_pack("{s:I}", "requestId", (json_int_t)call->id);
	reason = json_loadb(p, n, 0, NULL);
	if (json_is_string(json_object_get(reason, "reason")))
		json_object_set(params, "reason",
		    json_object_get(reason, "reason"));
	json_decref(reason);
	conn_notify(c, "notifications/cancelled", params);
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
			conn_fail(call->session, call->tag, code, msg);
		call_free(call);
	}
	u64map_free(&c->calls);
	u64map_free(&c->by_tag);
}
