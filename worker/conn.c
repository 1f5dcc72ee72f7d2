#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "log.h"
#include "worker.h"
#include "xmalloc.h"

/* Protocol versions the worker accepts from upstreams. */
static const char *const upstream_versions[] = {
	"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", NULL
};

static void	conn_init_timeout_cb(evutil_socket_t, short, void *);

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
conn_new(uint32_t session)
{
	struct conn	*c;
	struct timeval	 tv;

	c = xcalloc(1, sizeof *c);
	c->session = session;
	c->next_id = 1;
	u64map_init(&c->calls);
	u64map_init(&c->by_tag);
	switch (sc->transport) {
	case TRANSPORT_STDIO:
		c->ops = &transport_stdio;
		break;
	default:
		worker_status("error", "transport not supported");
		worker_fatal_conn(c, "transport not supported");
	}
	c->init_timer = evtimer_new(base, conn_init_timeout_cb, c);
	tv.tv_sec = sc->init_timeout;
	tv.tv_usec = 0;
	evtimer_add(c->init_timer, &tv);
	if (c->ops->start(c) != 0)
		conn_lost(c, "transport failed to start");
	return (c);
}

/* Free a connection: stop its transport and forget its calls. */
void
conn_free(struct conn *c)
{
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
	if (c->init_timer != NULL)
		event_free(c->init_timer);
	json_decref(c->server_caps);
	json_decref(c->server_info);
	free(c->instructions);
	for (k = 0; k < 4; k++)
		json_decref(c->lists[k]);
	free(c);
}

/* The handshake took too long. */
static void
conn_init_timeout_cb(evutil_socket_t fd, short events, void *arg)
{
	struct conn	*c = arg;
	char		 why[128];

	snprintf(why, sizeof why, "not initialized within %u s",
	    sc->init_timeout);
	conn_lost(c, why);
}

/* The transport failed or the upstream went away. */
void
conn_lost(struct conn *c, const char *why)
{
	char	msg[512];

	c->state = CONN_DEAD;
	snprintf(msg, sizeof msg, "upstream %s: %s", sc->name, why);
	if (c->session == 0)
		worker_fatal_conn(c, msg);
	log_warnx("%s", msg);
	conn_fail_all(c, MCP_CONNECTION_CLOSED, msg);
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

/* The initialize answer arrived. */
static void
conn_initialized(struct conn *c, const struct jrpc *m, void *arg)
{
	json_t		*result;
	json_error_t	 jerr;
	const char	*version, *instr;
	char		 why[512];
	size_t		 i;

	if (m == NULL) {
		conn_lost(c, "no answer to initialize");
		return;
	}
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
	if (c->session != 0) {
		c->state = CONN_READY;
		evtimer_del(c->init_timer);
		return;
	}
	catalog_fetch_all(c);
}

/* The transport is up: begin the handshake. */
void
conn_transport_up(struct conn *c)
{
	json_t	*params;

	c->state = CONN_INITIALIZING;
	params = json_pack("{s:s, s:{s:{s:b}, s:{}, s:{s:{}, s:{}}}, "
	    "s:{s:s, s:s}}",
	    "protocolVersion", "2025-11-25",
	    "capabilities",
	    "roots", "listChanged", 1,
	    "sampling",
	    "elicitation", "form", "url",
	    "clientInfo", "name", "mcp-supervisor", "version",
	    PACKAGE_VERSION);
	conn_call(c, "initialize", params, conn_initialized, NULL);
}

/* Answer a request from the upstream. */
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

/* A response to one of our requests. */
static void
conn_response(struct conn *c, const struct jrpc *m)
{
	struct call	*call;
	struct evbuffer	*buf;
	struct jedit	 edit;
	int64_t		 id;

	if (jscan_int64(m->p, m->id, &id) != 0 ||
	    (call = u64map_del(&c->calls, (uint64_t)id)) == NULL) {
		log_debug("response to an unknown request id %.*s",
		    (int)(m->id.len > 40 ? 40 : m->id.len), m->p + m->id.off);
		return;
	}
	if (call->cb != NULL) {
		call->cb(c, m, call->arg);
		call_free(call);
		return;
	}
	u64map_del(&c->by_tag, call->tag);
	edit.at = m->id;
	edit.text = call->client_id;
	edit.len = call->client_idlen;
	buf = evbuffer_new();
	jscan_splice(buf, m->p, m->n, &edit, 1);
	chan_send_buffer(MSG_RESPONSE, call->session, call->tag, buf);
	evbuffer_free(buf);
	call_free(call);
}

/* A progress notification: back to the request's client, token restored. */
static void
conn_progress(struct conn *c, const struct jrpc *m)
{
	static const char *const path[] = { "progressToken", NULL };
	struct jspan	 token;
	struct call	*call;
	struct evbuffer	*buf;
	struct jedit	 edit;
	int64_t		 id;

	if (jscan_path(m->p, m->params, path, &token) != 0 ||
	    jscan_int64(m->p, token, &id) != 0 ||
	    (call = u64map_get(&c->calls, (uint64_t)id)) == NULL ||
	    call->token == NULL) {
		log_debug("progress for no known request");
		return;
	}
	edit.at = token;
	edit.text = call->token;
	edit.len = call->tokenlen;
	buf = evbuffer_new();
	jscan_splice(buf, m->p, m->n, &edit, 1);
	chan_send_buffer(MSG_NOTIFY, call->session, call->tag, buf);
	evbuffer_free(buf);
}

/* A notification from the upstream. */
static void
conn_notification(struct conn *c, const struct jrpc *m)
{
	const char	*method = m->method_name;

	if (strcmp(method, "notifications/progress") == 0)
		conn_progress(c, m);
	else if (strncmp(method, "notifications/", 14) == 0 &&
	    strlen(method) > 26 &&
	    strcmp(method + strlen(method) - 13, "/list_changed") == 0)
		catalog_list_changed(c, method);
	else
		log_debug("notification %s not relayed", method);
}

/* A request from the upstream. */
static void
conn_request(struct conn *c, const struct jrpc *m)
{
	if (strcmp(m->method_name, "ping") == 0) {
		conn_answer(c, m, 0, "{}");
		return;
	}
	log_debug("upstream request %s refused", m->method_name);
	conn_answer(c, m, JRPC_METHOD_NOT_FOUND,
	    "method not supported by the gateway");
}

/* One message from the upstream. */
void
conn_message(struct conn *c, const char *p, size_t n)
{
	struct jrpc	 m;
	const char	*why;
	int		 r;

	if ((r = jrpc_scan(p, n, &m, &why)) != 0) {
		log_warnx("upstream sent an invalid message (%s), dropped",
		    why);
		return;
	}
	switch (m.kind) {
	case JRPC_RESULT:
	case JRPC_ERROR:
		conn_response(c, &m);
		break;
	case JRPC_REQUEST:
		conn_request(c, &m);
		break;
	case JRPC_NOTIFICATION:
		conn_notification(c, &m);
		break;
	}
}

/* Fail a relayed request back to the supervisor. */
static void
conn_fail(uint32_t session, uint32_t tag, int code, const char *msg)
{
	chan_send_json(MSG_FAIL, session, tag, json_pack("{s:i, s:s}",
	    "code", code, "message", msg));
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
	const char	*why;
	char		 idtext[32], msg[256];
	size_t		 nedits = 0;

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
	json_t		*params, *reason;

	if (c == NULL || (call = u64map_del(&c->by_tag, tag)) == NULL)
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
conn_fail_all(struct conn *c, int code, const char *msg)
{
	size_t		 pos = 0;
	uint64_t	 key;
	void		*value;
	struct call	*call;

	while (u64map_next(&c->calls, &pos, &key, &value)) {
		call = value;
		if (call->cb == NULL)
			conn_fail(call->session, call->tag, code, msg);
		call_free(call);
	}
	u64map_free(&c->calls);
	u64map_free(&c->by_tag);
}
