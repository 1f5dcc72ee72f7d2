/* SPDX-License-Identifier: ISC */
/*
 * Tools offered by clients.  A session (an editor over WebSocket or the
 * stdio bridge, or a Streamable HTTP client with its GET stream open) may
 * register tools of its own with tools/register; they join the catalog
 * under the client's prefix, and when another session calls one the
 * gateway sends tools/call to the owner under an id of its own (the
 * correlation id), maps progress both ways, passes a cancellation on, and
 * answers the caller when the owner answers, times out
 * (client_tool_timeout) or goes away.  Nothing an owner sends ever reaches
 * a session other than the caller of that call.
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
#include "naming.h"
#include "supervisor.h"
#include "xmalloc.h"

#define CTOOL_MAX_SIZE		65536	/* one tool's JSON */
#define CTOOL_MAX_TOTAL		10000	/* tools of every client */

/* One registered tool; owned by the registry. */
struct ctool {
	struct session		*owner;		/* borrowed */
	char			*name;		/* the owner's own */
	json_t			*tool;		/* as registered */
	TAILQ_ENTRY(ctool)	 entry;
};

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

static TAILQ_HEAD(, ctool)	 ctools = TAILQ_HEAD_INITIALIZER(ctools);
static size_t			 nctools;

/* Call fn for every registered tool, in registration order. */
void
ctools_foreach(void (*fn)(struct session *, const char *, json_t *, void *),
    void *arg)
{
	struct ctool	*t;

	TAILQ_FOREACH(t, &ctools, entry)
		fn(t->owner, t->name, t->tool, arg);
}

/* The prefix of a session's tools: its client's name, made unique. */
static const char *
ctools_prefix(struct session *s)
{
	const char	*given;
	char		 name[40], want[64];
	struct ctool	*t;
	size_t		 i, n = 0;
	int		 k, taken;

	if (s->ctool_prefix != NULL)
		return (s->ctool_prefix);
	given = s->client_name;
	if (given == NULL)
		given = json_string_value(json_object_get(s->client_info,
		    "name"));
	/* A client's own name, in the tool-name character set. */
	for (i = 0; given != NULL && given[i] != '\0' && n < 24; i++) {
		if ((given[i] >= 'a' && given[i] <= 'z') ||
		    (given[i] >= 'A' && given[i] <= 'Z') ||
		    (given[i] >= '0' && given[i] <= '9') || given[i] == '-' ||
		    given[i] == '.' || given[i] == '_')
			name[n++] = given[i];
		else if (n > 0 && name[n - 1] != '_')
			name[n++] = '_';
	}
	while (n > 0 && name[n - 1] == '_')
		n--;
	if (n == 0)
		n = (size_t)snprintf(name, sizeof name, "client");
	name[n] = '\0';
	for (k = 1; ; k++) {
		if (k == 1)
			snprintf(want, sizeof want, "%s__", name);
		else
			snprintf(want, sizeof want, "%s%d__", name, k);
		taken = 0;
		TAILQ_FOREACH(t, &ctools, entry) {
			if (t->owner != s && t->owner->ctool_prefix != NULL &&
			    strcmp(t->owner->ctool_prefix, want) == 0)
				taken = 1;
		}
		for (i = 0; i < nupstreams && !taken; i++) {
			if (strcmp(upstreams[i]->sc->prefix, want) == 0)
				taken = 1;
		}
		if (!taken)
			break;
	}
	s->ctool_prefix = xstrdup(want);
	return (s->ctool_prefix);
}

/* Find a session's tool by its own name. */
static struct ctool *
ctools_find(struct session *s, const char *name)
{
	struct ctool	*t;

	TAILQ_FOREACH(t, &ctools, entry) {
		if (t->owner == s && strcmp(t->name, name) == 0)
			return (t);
	}
	return (NULL);
}

/* Withdraw a tool. */
static void
ctools_remove(struct ctool *t)
{
	TAILQ_REMOVE(&ctools, t, entry);
	nctools--;
	t->owner->nctools--;
	free(t->name);
	json_decref(t->tool);
	free(t);
}

/* Add a refusal to a register answer. */
static void
ctools_refuse(json_t *refused, const char *name, const char *why)
{
	json_array_append_new(refused, json_pack("{s:s, s:s}", "name",
	    name != NULL ? name : "", "reason", why));
}

/*
 * Check one tool and make it an MCP Tool object: the MCP form (name,
 * title, description, inputSchema, outputSchema, annotations) or the
 * seed's (name, description, input_schema).  NULL with why set if bad.
 */
static json_t *
ctools_tool(json_t *in, const char **why)
{
	json_t		*tool, *schema, *v;
	const char	*name;
	char		*text;
	size_t		 len;

	if (!json_is_object(in)) {
		*why = "a tool must be an object";
		return (NULL);
	}
	name = json_string_value(json_object_get(in, "name"));
	len = json_string_length(json_object_get(in, "name"));
	if (name == NULL || len == 0 || len > 128 || strlen(name) != len) {
		*why = "name must be a string of 1 to 128 characters";
		return (NULL);
	}
	schema = json_object_get(in, "inputSchema");
	if (schema == NULL)
		schema = json_object_get(in, "input_schema");
	if (!json_is_object(schema) || !json_is_string(json_object_get(schema,
	    "type")) || strcmp(json_string_value(json_object_get(schema,
	    "type")), "object") != 0) {
		*why = "inputSchema must be a JSON Schema object of type "
		    "\"object\"";
		return (NULL);
	}
	tool = json_pack("{s:s, s:O}", "name", name, "inputSchema", schema);
	if ((v = json_object_get(in, "description")) != NULL) {
		if (!json_is_string(v)) {
			json_decref(tool);
			*why = "description must be a string";
			return (NULL);
		}
		json_object_set(tool, "description", v);
	}
	if (json_is_string(v = json_object_get(in, "title")))
		json_object_set(tool, "title", v);
	if (json_is_object(v = json_object_get(in, "outputSchema")))
		json_object_set(tool, "outputSchema", v);
	if (json_is_object(v = json_object_get(in, "annotations")))
		json_object_set(tool, "annotations", v);
	text = json_dumps(tool, JSON_COMPACT);
	len = text != NULL ? strlen(text) : SIZE_MAX;
	free(text);
	if (len > CTOOL_MAX_SIZE) {
		json_decref(tool);
		*why = "the tool is larger than 64 KiB";
		return (NULL);
	}
	return (tool);
}

/* Answer a request with a JSON result. */
static void
ctools_result(struct stream *st, const struct jrpc *m, json_t *result)
{
	char	*text = json_dumps(result, JSON_COMPACT);

	route_result(st, m, text, strlen(text));
	free(text);
	json_decref(result);
}

void
ctools_register(struct session *s, struct stream *st, const struct jrpc *m)
{
	json_t		*params, *list, *item, *tool, *done, *refused;
	const char	*why = "", *name, *prefix;
	struct ctool	*t;
	char		 exposed[NAME_MAX_EXPOSED + 1];
	size_t		 i;
	int		 changed = 0;

	if (!acl_may_register(s)) {
		route_reject(st, m, JRPC_INVALID_REQUEST, "tools/register: "
		    "client %s may not register tools", s->client_name);
		return;
	}
	params = json_loadb(m->p + m->params.off, m->params.len, 0, NULL);
	if (!json_is_object(params)) {
		json_decref(params);
		route_reject(st, m, JRPC_INVALID_PARAMS, "tools/register: "
		    "params must be { \"tools\": [ Tool, ... ] }");
		return;
	}
	/* { tools: [...] }, or the seed's single tool. */
	if ((list = json_object_get(params, "tools")) != NULL)
		json_incref(list);
	else
		list = json_pack("[O]", params);
	if (!json_is_array(list)) {
		json_decref(list);
		json_decref(params);
		route_reject(st, m, JRPC_INVALID_PARAMS, "tools/register: "
		    "tools must be an array");
		return;
	}
	prefix = ctools_prefix(s);
	done = json_array();
	refused = json_array();
	json_array_foreach(list, i, item) {
		name = json_string_value(json_object_get(item, "name"));
		if ((tool = ctools_tool(item, &why)) == NULL) {
			ctools_refuse(refused, name, why);
			continue;
		}
		name = json_string_value(json_object_get(tool, "name"));
		if ((t = ctools_find(s, name)) != NULL) {
			/* Registered again: replaced. */
			json_decref(t->tool);
			t->tool = tool;
		} else if (s->nctools >= conf->client_tools_max ||
		    nctools >= CTOOL_MAX_TOTAL) {
			json_decref(tool);
			ctools_refuse(refused, name, "too many tools "
			    "registered");
			continue;
		} else {
			t = xcalloc(1, sizeof *t);
			t->owner = s;
			t->name = xstrdup(name);
			t->tool = tool;
			TAILQ_INSERT_TAIL(&ctools, t, entry);
			nctools++;
			s->nctools++;
		}
		changed = 1;
		name_expose_tool(prefix, t->name, strlen(t->name), exposed);
		json_array_append_new(done, json_string(exposed));
	}
	json_decref(list);
	json_decref(params);
	if (changed) {
		log_info("session %.8s: registered %zu tools as %s*", s->id,
		    json_array_size(done), prefix);
		catalog_rebuild();
	}
	/* A name another upstream's item holds already is not exposed. */
	json_array_foreach(done, i, item) {
		if (catalog_tool(catalog_global(), json_string_value(item)) ==
		    NULL || catalog_tool(catalog_global(),
		    json_string_value(item))->owner != s) {
			ctools_refuse(refused, json_string_value(item), "the "
			    "name is taken by an upstream");
			json_array_remove(done, i--);
		}
	}
	ctools_result(st, m, json_pack("{s:o, s:o}", "registered", done,
	    "refused", refused));
}

void
ctools_unregister(struct session *s, struct stream *st, const struct jrpc *m)
{
	json_t		*params, *names, *name, *done;
	struct ctool	*t;
	const char	*n, *p;
	size_t		 i, plen;

	params = json_loadb(m->p + m->params.off, m->params.len, 0, NULL);
	names = json_object_get(params, "names");
	if (!json_is_array(names)) {
		json_decref(params);
		route_reject(st, m, JRPC_INVALID_PARAMS, "tools/unregister: "
		    "params must be { \"names\": [ ... ] }");
		return;
	}
	done = json_array();
	p = s->ctool_prefix != NULL ? s->ctool_prefix : "";
	plen = strlen(p);
	json_array_foreach(names, i, name) {
		if ((n = json_string_value(name)) == NULL)
			continue;
		/* Its own name, or the name others see. */
		if ((t = ctools_find(s, n)) == NULL && plen > 0 &&
		    strncmp(n, p, plen) == 0)
			t = ctools_find(s, n + plen);
		if (t == NULL)
			continue;
		json_array_append_new(done, json_string(n));
		ctools_remove(t);
	}
	json_decref(params);
	if (json_array_size(done) > 0)
		catalog_rebuild();
	ctools_result(st, m, json_pack("{s:o}", "unregistered", done));
}

/* Free a call. */
static void
ctcall_free(struct ctcall *c)
{
	TAILQ_REMOVE(&c->owner->ctcalls_in, c, owner_entry);
	TAILQ_REMOVE(&c->caller->ctcalls_out, c, caller_entry);
	c->owner->nctcalls--;
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
ctools_call(struct session *s, struct stream *st, const struct jrpc *m,
    const struct catalog_entry *e, const char *exposed)
{
	static const char *const token_path[] = { "_meta", "progressToken",
	    NULL };
	struct session	*owner = e->owner;
	struct ctcall	*c;
	struct jspan	 args, token;
	struct evbuffer	*buf;
	struct timeval	 tv;

	if (owner->nctcalls >= conf->max_pending) {
		route_reject(st, m, MCP_OVERLOADED, "too many calls waiting "
		    "for client tool %s", exposed);
		return;
	}
	c = xcalloc(1, sizeof *c);
	c->id = route_next_id();
	c->owner = owner;
	c->caller = s;
	c->stream = st;
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
	obs_client_tool();
	obs_take(&c->obs);
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
ctools_session_end(struct session *s)
{
	struct ctcall	*c;
	struct ctool	*t, *next;
	const char	*who = s->ctool_prefix != NULL ? s->ctool_prefix : "";
	int		 had = 0;

	/* Calls to its tools fail at once; its own calls are withdrawn. */
	while ((c = TAILQ_FIRST(&s->ctcalls_in)) != NULL)
		ctcall_fail(c, MCP_CONNECTION_CLOSED, "client %.*s "
		    "disconnected", (int)(strlen(who) > 2 ? strlen(who) - 2 :
		    0), who);
	while ((c = TAILQ_FIRST(&s->ctcalls_out)) != NULL) {
		ctcall_cancel_owner(c, "the caller's session ended");
		ctcall_free(c);
	}
	for (t = TAILQ_FIRST(&ctools); t != NULL; t = next) {
		next = TAILQ_NEXT(t, entry);
		if (t->owner == s) {
			ctools_remove(t);
			had = 1;
		}
	}
	free(s->ctool_prefix);
	s->ctool_prefix = NULL;
	if (had) {
		log_info("session %.8s: its tools are withdrawn", s->id);
		catalog_rebuild();
	}
}
