/* SPDX-License-Identifier: ISC */
/*
 * The upstream's era.  A 2025-era upstream is initialized; a 2026-07-28
 * one has no handshake: every request carries the envelope (the protocol
 * version, the client's capabilities and identity in params._meta), and
 * server/discover says what it is.  With era = "auto" the worker asks
 * server/discover first: over HTTP the answer or its error tells (a
 * modern server answers, or refuses with a modern error; anything else is
 * a 2025 server), over stdio and WebSocket the probe waits at most
 * ERA_PROBE_MS, silence meaning a 2025 server.  The verdict is kept for
 * the per-session instances of the same upstream.
 *
 * Requests are translated between the eras here: a 2025 client's request
 * to a modern upstream gets the envelope (its session's capabilities,
 * identity and log level), a modern client's request to a 2025 upstream
 * loses it (and answers with resultType).  A modern upstream's change
 * notifications come from one subscriptions/listen, re-opened when the
 * set of subscribed resources changes.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "log.h"
#include "meta.h"
#include "worker.h"
#include "xmalloc.h"

#define ERA_PROBE_MS		5000	/* stdio, WebSocket: the probe's wait */
#define LISTEN_BACKOFF_MIN_MS	1000
#define LISTEN_BACKOFF_MAX_MS	30000

/* Protocol versions the worker accepts from 2025-era upstreams. */
static const char *const upstream_versions[] = {
	"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", NULL
};

/* What the first connection found: -1 not known, 0 2025, 1 2026. */
static int	era_verdict = -1;

static void	era_initialize(struct conn *);
static void	era_listen_schedule(struct conn *, long ms);
static void	era_listen_drop_cb(evutil_socket_t, short, void *);

/*
 * The client capabilities to declare to the upstream.  A shared upstream
 * serves every client at once, so it is told only what the gateway can
 * honour for any request on that session, whoever caused it: sampling and
 * elicitation when their strategy lists can always answer (they hold
 * decline, as the default does, or for sampling an llm: or tool: link),
 * never roots, which belong to one client.  A per-session instance serves
 * one client: its client's capabilities, plus what a provider or a tool
 * can answer (a decline would only list tools that client cannot use).
 * An llm: link takes tools in sampling (sampling.tools, 2025-11-25).
 */
json_t *
era_client_caps(struct conn *c, json_t *client)
{
	json_t	*caps, *sampling;

	if (client == NULL && c->info != NULL)
		client = c->info->caps;
	if (json_is_object(client))
		caps = json_deep_copy(client);
	else
		caps = json_object();
	if (conf_strategies_always(sc->sampling, sc->nsampling,
	    c->session == 0)) {
		if (!json_is_object(sampling = json_object_get(caps,
		    "sampling"))) {
			sampling = json_object();
			json_object_set_new(caps, "sampling", sampling);
		}
		if (conf_strategies_have(sc->sampling, sc->nsampling,
		    STRATEGY_LLM) && json_object_get(sampling, "tools") == NULL)
			json_object_set_new(sampling, "tools", json_object());
	}
	if (conf_strategies_always(sc->elicitation, sc->nelicitation,
	    c->session == 0))
		json_object_set_new(caps, "elicitation", json_pack("{s:{}, s:{}}",
		    "form", "url"));
	return (caps);
}

/* The gateway's own identity towards upstreams. */
static json_t *
era_client_info(void)
{
	return (json_pack("{s:s, s:s}", "name", "mcp-supervisor", "version",
	    PACKAGE_VERSION));
}

/*
 * The params of a request of the worker's own: a modern upstream's (and
 * the probe's) get the envelope, with the instance's capabilities.
 * Returns params (taken), or a new object.
 */
json_t *
era_own_params(struct conn *c, enum mcp_method method, json_t *params)
{
	json_t	*meta;

	if (!c->modern && method != MCPM_DISCOVER)
		return (params);
	if (params == NULL)
		params = json_object();
	if ((meta = json_object_get(params, "_meta")) == NULL) {
		meta = json_object();
		json_object_set_new(params, "_meta", meta);
	}
	json_object_set_new(meta, META_VERSION, json_string(MCP_VERSION_MODERN));
	json_object_set_new(meta, META_CAPS, era_client_caps(c, NULL));
	json_object_set_new(meta, META_INFO, era_client_info());
	return (params);
}

/* The handshake is done, whatever the era: fetch the catalog. */
static void
era_handshake_done(struct conn *c)
{
	if (c->ops->initialized != NULL)
		c->ops->initialized(c);
	if (c->session != 0) {
		/* Its requests flow at once; its catalog, the session's view
		 * of this upstream, follows when fetched. */
		conn_ready(c);
		catalog_fetch_all(c);
	} else
		catalog_fetch_all(c);
	if (c->modern)
		era_listen_schedule(c, 0);
}

/* The initialize answer arrived. */
static void
era_initialized(struct conn *c, const struct jrpc *m, void *arg)
{
	json_t		*result;
	json_error_t	 jerr;
	const char	*version, *instr;
	char		 why[512];
	size_t		 i;

	if (m->kind == JRPC_ERROR) {
		snprintf(why, sizeof why, "initialize failed: %.*s",
		    (int)(m->error.len > UP_ERROR_QUOTE ? UP_ERROR_QUOTE :
		    m->error.len),
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
	era_verdict = 0;
	era_handshake_done(c);
}

/* Begin the 2025 handshake. */
static void
era_initialize(struct conn *c)
{
	json_t	*params;

	params = json_pack("{s:s, s:o, s:o}", "protocolVersion", "2025-11-25",
	    "capabilities", era_client_caps(c, NULL), "clientInfo",
	    era_client_info());
	conn_call(c, MCPM_INITIALIZE, params, era_initialized, NULL);
}

/* Is a string in a JSON array of strings? */
static int
era_listed(json_t *a, const char *s)
{
	json_t	*v;
	size_t	 i;

	json_array_foreach(a, i, v) {
		if (json_is_string(v) && strcmp(json_string_value(v), s) == 0)
			return (1);
	}
	return (0);
}

/* The upstream is modern: take what its discover result says. */
static int
era_modern(struct conn *c, json_t *result, char *why, size_t len)
{
	json_t		*meta;
	const char	*instr;

	if (!era_listed(json_object_get(result, "supportedVersions"),
	    MCP_VERSION_MODERN)) {
		snprintf(why, len, "server/discover does not list %s",
		    MCP_VERSION_MODERN);
		return (-1);
	}
	c->modern = 1;
	snprintf(c->version, sizeof c->version, "%s", MCP_VERSION_MODERN);
	c->server_caps = json_incref(json_object_get(result, "capabilities"));
	if (!json_is_object(c->server_caps)) {
		json_decref(c->server_caps);
		c->server_caps = json_object();
	}
	meta = json_object_get(result, "_meta");
	c->server_info = json_incref(json_object_get(meta, META_SERVERINFO));
	if (json_unpack(result, "{s:s}", "instructions", &instr) == 0)
		c->instructions = xstrdup(instr);
	era_verdict = 1;
	log_debug("the upstream speaks %s", MCP_VERSION_MODERN);
	return (0);
}

/* Does a -32022's list of supported versions name a 2025 one we speak? */
static int
era_supports_2025(json_t *supported)
{
	json_t	*v;
	size_t	 i, k;

	json_array_foreach(supported, i, v) {
		if (!json_is_string(v))
			continue;
		for (k = 0; upstream_versions[k] != NULL; k++)
			if (strcmp(json_string_value(v),
			    upstream_versions[k]) == 0)
				return (1);
	}
	return (0);
}

/* The probe's answer arrived (or the transport's error for it). */
static void
era_discovered(struct conn *c, const struct jrpc *m, void *arg)
{
	json_t		*result, *err, *data;
	json_int_t	 code = 0;
	char		 why[512];

	c->probing = 0;
	if (c->probe_timer != NULL)
		evtimer_del(c->probe_timer);
	if (m->kind == JRPC_RESULT) {
		result = json_loadb(m->p + m->result.off, m->result.len,
		    JSON_ALLOW_NUL, NULL);
		if (era_modern(c, result, why, sizeof why) == 0) {
			json_decref(result);
			era_handshake_done(c);
			return;
		}
		json_decref(result);
		if (sc->era == ERA_2026) {
			conn_lost(c, why);
			return;
		}
		log_debug("%s: taking it for a 2025 server", why);
		era_initialize(c);
		return;
	}
	err = json_loadb(m->p + m->error.off, m->error.len, JSON_ALLOW_NUL,
	    NULL);
	json_unpack(err, "{s:I}", "code", &code);
	data = json_object_get(err, "data");
	if (code == MCP_UNSUPPORTED_VERSION && sc->era != ERA_2026 &&
	    era_supports_2025(json_object_get(data, "supported"))) {
		/* It speaks a 2025 version too: the handshake, then. */
		json_decref(err);
		log_debug("server/discover refused (-32022), but a 2025 "
		    "version is supported: initialize");
		era_initialize(c);
		return;
	}
	if (code == MCP_UNSUPPORTED_VERSION || code == MCP_HEADER_MISMATCH) {
		/* A modern server, but not one the gateway can speak to. */
		snprintf(why, sizeof why, "a 2026-era server that refused "
		    "server/discover (%lld): it supports %.200s", (long long)code,
		    json_is_array(json_object_get(data, "supported")) ?
		    "other versions than 2026-07-28" : "no version named");
		json_decref(err);
		conn_lost(c, why);
		return;
	}
	json_decref(err);
	if (sc->era == ERA_2026) {
		snprintf(why, sizeof why, "era = \"2026\", but server/discover "
		    "failed: %.*s", (int)(m->error.len > UP_ERROR_QUOTE ?
		    UP_ERROR_QUOTE : m->error.len), m->p + m->error.off);
		conn_lost(c, why);
		return;
	}
	log_debug("server/discover refused (%lld): a 2025 server",
	    (long long)code);
	era_initialize(c);
}

/* No answer to the probe in time: a 2025 server (stdio, WebSocket). */
static void
era_probe_timeout_cb(evutil_socket_t fd, short events, void *arg)
{
	struct conn	*c = arg;

	if (!c->probing)
		return;
	c->probing = 0;
	/* A late answer is to an unknown id now, and dropped. */
	conn_forget_call(c, c->probe_id);
	if (sc->era == ERA_2026) {
		conn_lost(c, "era = \"2026\", but server/discover got no answer");
		return;
	}
	log_debug("no answer to server/discover within %d ms: a 2025 server",
	    ERA_PROBE_MS);
	era_initialize(c);
}

/* The transport is up: find out the era, or begin its handshake. */
void
conn_transport_up(struct conn *c)
{
	struct timeval	tv = { ERA_PROBE_MS / 1000, 0 };

	c->state = CONN_INITIALIZING;
	/* HTTP+SSE is of 2024-11-05: nothing to find out. */
	if (sc->era == ERA_2025 || sc->transport == TRANSPORT_SSE ||
	    (sc->era == ERA_AUTO && era_verdict == 0)) {
		era_initialize(c);
		return;
	}
	c->probing = 1;
	c->probe_id = conn_call(c, MCPM_DISCOVER, NULL, era_discovered,
	    NULL);
	/* Over HTTP the probe is answered, or fails: no guessing. */
	if (sc->transport != TRANSPORT_HTTP && sc->era == ERA_AUTO &&
	    era_verdict != 1) {
		if (c->probe_timer == NULL)
			c->probe_timer = evtimer_new(base, era_probe_timeout_cb,
			    c);
		evtimer_add(c->probe_timer, &tv);
	}
}

/* Build the envelope text of a 2025 client's request to a modern one. */
static void
era_envelope(struct conn *c, uint32_t session, struct evbuffer *out)
{
	struct session_info	*si;
	json_t			*caps, *info;
	char			*text;
	int			 level;

	si = session != 0 ? worker_session_info(session) : c->info;
	caps = era_client_caps(c, si != NULL ? si->caps : NULL);
	info = si != NULL && json_is_object(si->client_info) ?
	    json_incref(si->client_info) : era_client_info();
	evbuffer_add_printf(out, "\"" META_VERSION "\":\"%s\",\"" META_CAPS
	    "\":", MCP_VERSION_MODERN);
	text = json_dumps(caps, JSON_COMPACT);
	evbuffer_add(out, text, strlen(text));
	free(text);
	evbuffer_add_printf(out, ",\"" META_INFO "\":");
	text = json_dumps(info, JSON_COMPACT);
	evbuffer_add(out, text, strlen(text));
	free(text);
	json_decref(caps);
	json_decref(info);
	/* The level the client asked for with logging/setLevel. */
	if (si != NULL && si->loglevel != NULL &&
	    (level = meta_log_level(si->loglevel, strlen(si->loglevel))) >= 0)
		evbuffer_add_printf(out, ",\"" META_LOGLEVEL "\":\"%s\"",
		    meta_log_level_name(level));
}

/* Is an object span empty ("{ }")? */
int
era_empty_object(const char *p, struct jspan obj)
{
	size_t	i;

	for (i = obj.off + 1; i < obj.off + obj.len; i++) {
		if (p[i] != ' ' && p[i] != '\t' && p[i] != '\n' &&
		    p[i] != '\r')
			return (p[i] == '}');
	}
	return (1);
}

/* Keep a text an edit points to until the request is spliced. */
const char *
era_texts_own(struct era_texts *t, struct evbuffer *b)
{
	size_t	len = evbuffer_get_length(b);
	char	*s = xmalloc(len + 1);

	evbuffer_remove(b, s, len);
	s[len] = '\0';
	if (t->n < ERA_MAX_TEXTS)
		t->s[t->n++] = s;
	else
		fatalx("%s: too many texts", __func__);
	return (s);
}

void
era_texts_free(struct era_texts *t)
{
	int	i;

	for (i = 0; i < t->n; i++)
		free(t->s[i]);
	t->n = 0;
}

/*
 * The capabilities a modern client's request lacks that the strategies
 * can always answer (conf_strategies_always): added for the
 * upstream, which may then ask for them, to be answered by the gateway
 * (mrtr.c).  An insertion into the capabilities object, or 0.  A decline
 * does not count: what a modern client did not declare, the upstream
 * must refuse with -32021, and the gateway relays that.
 */
static int
era_strategy_caps(struct conn *c, struct call *call, const struct jrpc *m,
    struct jedit *edit, struct era_texts *t)
{
	static const char *const caps_path[] = { "_meta", META_CAPS, NULL };
	struct jspan	 caps, v;
	struct evbuffer	*b;
	int		 n = 0;

	if (jscan_path(m->p, m->params, caps_path, &caps) != 0 ||
	    jscan_type(m->p, caps) != JT_OBJECT)
		return (0);
	b = evbuffer_new();
	if (conf_strategies_always(sc->sampling, sc->nsampling, 0) &&
	    jscan_member(m->p, caps, "sampling", &v) != 0) {
		evbuffer_add_printf(b, "\"sampling\":{%s}",
		    conf_strategies_have(sc->sampling, sc->nsampling,
		    STRATEGY_LLM) ? "\"tools\":{}" : "");
		n++;
	}
	if (conf_strategies_always(sc->elicitation, sc->nelicitation, 0) &&
	    jscan_member(m->p, caps, "elicitation", &v) != 0) {
		evbuffer_add_printf(b, "%s\"elicitation\":{\"form\":{},"
		    "\"url\":{}}", n > 0 ? "," : "");
		n++;
	}
	if (n == 0) {
		evbuffer_free(b);
		return (0);
	}
	if (!era_empty_object(m->p, caps))
		evbuffer_add(b, ",", 1);
	/* What the client itself declared decides who answers what. */
	call->gw_caps = xmalloc(caps.len + 1);
	memcpy(call->gw_caps, m->p + caps.off, caps.len);
	call->gw_caps[caps.len] = '\0';
	edit->at.off = caps.off + 1;
	edit->at.len = 0;
	edit->len = evbuffer_get_length(b);
	edit->text = era_texts_own(t, b);
	evbuffer_free(b);
	return (1);
}

int
era_request_edits(struct conn *c, uint32_t session, const struct jrpc *m,
    struct call *call, struct jedit *edits, size_t max, struct era_texts *t)
{
	static const char *const params_drop[] = { "inputResponses",
	    "requestState", NULL };
	static const char *const meta_drop[] = { META_PREFIX, NULL };
	struct jspan	 meta;
	struct evbuffer	*text;
	size_t		 n = 0, off;
	int		 k, has_meta;

	if (c->modern && call->client_modern) {
		/* A modern client's: what the gateway answers for it. */
		n += (size_t)era_strategy_caps(c, call, m, &edits[n], t);
		if (max - n >= 4 && (k = mrtr_stash_edits(c, session, m,
		    &edits[n], max - n, t)) > 0)
			n += (size_t)k;
		return ((int)n);
	}
	if (c->modern && !call->client_modern) {
		/* A 2025 client's request: it gets the envelope. */
		has_meta = m->params.len != 0 &&
		    jscan_type(m->p, m->params) == JT_OBJECT &&
		    jscan_member(m->p, m->params, "_meta", &meta) == 0 &&
		    jscan_type(m->p, meta) == JT_OBJECT;
		text = evbuffer_new();
		if (m->params.len == 0) {
			evbuffer_add(text, ",\"params\":{\"_meta\":{", 20);
			era_envelope(c, session, text);
			evbuffer_add(text, "}}", 2);
			off = m->msg.off + m->msg.len - 1;	/* the '}' */
		} else if (jscan_type(m->p, m->params) != JT_OBJECT) {
			evbuffer_free(text);
			return (0);
		} else if (has_meta) {
			era_envelope(c, session, text);
			if (!era_empty_object(m->p, meta))
				evbuffer_add(text, ",", 1);
			off = meta.off + 1;
		} else {
			evbuffer_add(text, "\"_meta\":{", 9);
			era_envelope(c, session, text);
			evbuffer_add(text, "}", 1);
			if (!era_empty_object(m->p, m->params))
				evbuffer_add(text, ",", 1);
			off = m->params.off + 1;
		}
		edits[n].at.off = off;
		edits[n].at.len = 0;
		edits[n].len = evbuffer_get_length(text);
		edits[n++].text = era_texts_own(t, text);
		evbuffer_free(text);
		return ((int)n);
	}
	if (!c->modern && call->client_modern && m->params.len != 0 &&
	    jscan_type(m->p, m->params) == JT_OBJECT) {
		/* A modern client's request: it loses the envelope. */
		if (jscan_member(m->p, m->params, "_meta", &meta) == 0 &&
		    (k = meta_drop_members(m->p, meta, meta_drop, edits,
		    max)) > 0)
			n += (size_t)k;
		if ((k = meta_drop_members(m->p, m->params, params_drop,
		    edits + n, max - n)) > 0)
			n += (size_t)k;
	}
	return ((int)n);
}

/*
 * Edits of an answer for its client: a 2025 upstream's result to a
 * modern client says resultType, and a resources/read one how long it is
 * fresh (not at all) and that it is the client's own.
 */
int
era_response_edits(struct conn *c, const struct call *call,
    const struct jrpc *m, struct jedit *edit)
{
	struct jspan	rt;

	if (c->modern || !call->client_modern || m->kind != JRPC_RESULT ||
	    jscan_type(m->p, m->result) != JT_OBJECT ||
	    jscan_member(m->p, m->result, "resultType", &rt) == 0)
		return (0);
	edit->at.off = m->result.off + 1;
	edit->at.len = 0;
	if (call->method == MCPM_RESOURCES_READ)
		edit->text = era_empty_object(m->p, m->result) ?
		    "\"resultType\":\"complete\",\"ttlMs\":0,\"cacheScope\":"
		    "\"private\"" : "\"resultType\":\"complete\",\"ttlMs\":0,"
		    "\"cacheScope\":\"private\",";
	else
		edit->text = era_empty_object(m->p, m->result) ?
		    "\"resultType\":\"complete\"" : "\"resultType\":\"complete\",";
	edit->len = strlen(edit->text);
	return (1);
}

/* Is a result input_required (a modern upstream asks its client)? */
int
era_input_required(const struct jrpc *m)
{
	struct jspan	rt;

	return (m->kind == JRPC_RESULT &&
	    jscan_type(m->p, m->result) == JT_OBJECT &&
	    jscan_member(m->p, m->result, "resultType", &rt) == 0 &&
	    jscan_string_equals(m->p, rt, "input_required"));
}

/*
 * Requests a modern upstream has no method for, answered here: the log
 * level rides on each request instead, subscriptions are its listen's.
 */
const char *
era_local(struct conn *c, const struct jrpc *m, int *code, const char **err)
{
	static const char *const uri_path[] = { "uri", NULL };
	struct jspan	 uri;
	char		*u;
	int		 on;

	*code = 0;
	*err = NULL;
	if (!c->modern)
		return (NULL);
	switch (m->method_id) {
	case MCPM_PING:
	case MCPM_SET_LEVEL:
		return ("{}");
	case MCPM_SUBSCRIBE:
	case MCPM_UNSUBSCRIBE:
		break;
	default:
		return (NULL);
	}
	on = m->method_id == MCPM_SUBSCRIBE;
	if (jscan_path(m->p, m->params, uri_path, &uri) != 0 ||
	    (u = jscan_strdup(m->p, uri)) == NULL) {
		*code = JRPC_INVALID_PARAMS;
		*err = "params.uri must be a string";
		return (NULL);
	}
	if (on && strmap_get(&c->subs, u) == NULL &&
	    c->subs.count >= ERA_MAX_SUBSCRIPTIONS) {
		/* Not one more in the listen: said, not answered {}. */
		log_warnx("resources/subscribe refused: the upstream's listen "
		    "holds %d URIs", ERA_MAX_SUBSCRIPTIONS);
		free(u);
		*code = MCP_OVERLOADED;
		*err = "too many resource subscriptions at this upstream";
		return (NULL);
	}
	if (on && strmap_get(&c->subs, u) == NULL) {
		strmap_add(&c->subs, u, (void *)1);
		era_listen_schedule(c, 0);
	} else if (!on && strmap_get(&c->subs, u) != NULL) {
		strmap_del(&c->subs, u);
		era_listen_schedule(c, 0);
	}
	free(u);
	return ("{}");
}

/* The listen ended (the upstream closed it, or it failed): reopen. */
static void
era_listen_done(struct conn *c, const struct jrpc *m, void *arg)
{
	int64_t	id;

	if (jscan_int64(m->p, m->id, &id) != 0)
		return;
	if (id == c->listen_live)
		c->listen_live = 0;
	/* A newer one is on its way: nothing to reopen. */
	if (id != c->listen_id)
		return;
	c->listen_id = 0;
	c->listen_backoff = c->listen_backoff == 0 ? LISTEN_BACKOFF_MIN_MS :
	    c->listen_backoff * 2;
	if (c->listen_backoff > LISTEN_BACKOFF_MAX_MS)
		c->listen_backoff = LISTEN_BACKOFF_MAX_MS;
	log_debug("subscriptions/listen ended (%s), again in %u ms",
	    m->kind == JRPC_ERROR ? "error" : "by the upstream",
	    c->listen_backoff);
	era_listen_schedule(c, c->listen_backoff);
}

/* Does the upstream offer list changes of a kind? */
static int
era_lists(struct conn *c, const char *cap)
{
	return (json_is_true(json_object_get(json_object_get(c->server_caps,
	    cap), "listChanged")));
}

/*
 * (Re)open the upstream's listen for what the gateway needs now.  The
 * listen open (live) stays until the new one is acknowledged, so no
 * update is lost in between; one never acknowledged is replaced.
 */
static void
era_listen_cb(evutil_socket_t fd, short events, void *arg)
{
	struct conn		*c = arg;
	struct strmap_entry	*e;
	json_t			*filter, *uris;
	size_t			 i;

	if (c->state == CONN_DEAD || !c->modern)
		return;
	if (c->listen_id != 0 && c->listen_id != c->listen_live)
		conn_cancel_call(c, c->listen_id, "the subscriptions changed");
	c->listen_id = 0;
	filter = json_object();
	if (era_lists(c, "tools"))
		json_object_set_new(filter, "toolsListChanged", json_true());
	if (era_lists(c, "prompts"))
		json_object_set_new(filter, "promptsListChanged", json_true());
	if (era_lists(c, "resources"))
		json_object_set_new(filter, "resourcesListChanged",
		    json_true());
	if (c->subs.count > 0) {
		uris = json_array();
		for (i = 0; i < c->subs.nbuckets; i++) {
			for (e = c->subs.buckets[i]; e != NULL; e = e->next)
				json_array_append_new(uris,
				    json_string(e->key));
		}
		json_object_set_new(filter, "resourceSubscriptions", uris);
	}
	if (json_object_size(filter) == 0) {
		json_decref(filter);
		/* Nothing to listen for. */
		if (c->listen_live != 0) {
			conn_cancel_call(c, c->listen_live, "nothing to "
			    "listen for");
			c->listen_live = 0;
		}
		return;
	}
	c->listen_id = conn_call(c, MCPM_LISTEN, json_pack("{s:o}",
	    "notifications", filter), era_listen_done, NULL);
}

static void
era_listen_schedule(struct conn *c, long ms)
{
	struct timeval	tv = { ms / 1000, (ms % 1000) * 1000 };

	if (c->listen_timer == NULL)
		c->listen_timer = evtimer_new(base, era_listen_cb, c);
	evtimer_add(c->listen_timer, &tv);
}

/* Cancel the listen a newer one replaced. */
static void
era_listen_drop_cb(evutil_socket_t fd, short events, void *arg)
{
	struct conn	*c = arg;

	if (c->listen_old != 0 && c->state != CONN_DEAD)
		conn_cancel_call(c, c->listen_old, "replaced");
	c->listen_old = 0;
}

/*
 * The upstream acknowledged a listen: the 2025 clients' subscribes were
 * answered already, so URIs it does not honour are said in the log.
 */
static void
era_listen_acked(struct conn *c, const struct jrpc *m)
{
	static const char *const path[] = { "notifications",
	    "resourceSubscriptions", NULL };
	struct strmap_entry	*e;
	struct strmap		 honoured;
	struct jspan		 subs, v;
	struct jiter		 it;
	const char		*missing = NULL;
	char			*u;
	size_t			 i, n = 0;

	strmap_init(&honoured);
	if (jscan_path(m->p, m->params, path, &subs) == 0 &&
	    jscan_array(m->p, subs, &it) == 0) {
		while (jscan_next_element(&it, &v)) {
			if ((u = jscan_strdup(m->p, v)) == NULL)
				continue;
			if (strmap_get(&honoured, u) == NULL)
				strmap_add(&honoured, u, (void *)1);
			free(u);
		}
	}
	for (i = 0; i < c->subs.nbuckets; i++) {
		for (e = c->subs.buckets[i]; e != NULL; e = e->next) {
			if (strmap_get(&honoured, e->key) != NULL)
				continue;
			if (missing == NULL)
				missing = e->key;
			n++;
		}
	}
	/* A change on its way makes the set asked for another. */
	if (n > 0 && c->listen_timer != NULL &&
	    evtimer_pending(c->listen_timer, NULL))
		log_debug("subscriptions/listen acknowledged, the URIs have "
		    "changed since");
	else if (n > 0)
		log_warnx("subscriptions/listen: the upstream sends no updates "
		    "of %zu of the %zu URIs subscribed to (%s%s)", n,
		    (size_t)c->subs.count, missing, n > 1 ? ", ..." : "");
	else
		log_debug("subscriptions/listen acknowledged");
	strmap_free(&honoured);
}

/*
 * A notification on the upstream's listen: list changes refresh the
 * catalog, a resource update goes to the supervisor without the
 * upstream's subscription id (2025 clients know none).  1 if it was one
 * (handled or dropped), 0 if it is not a listen's.
 */
int
era_listen_notification(struct conn *c, const struct jrpc *m)
{
	static const char *const sub_path[] = { "_meta", META_SUBSCRIPTION,
	    NULL };
	static const char *const meta_drop[] = { META_SUBSCRIPTION, NULL };
	struct jspan	 sub, meta;
	struct jedit	 edits[4];
	struct evbuffer	*buf;
	int64_t		 id;
	int		 k;

	if (!c->modern || jscan_path(m->p, m->params, sub_path, &sub) != 0)
		return (0);
	if (jscan_int64(m->p, sub, &id) != 0) {
		log_debug("%s for no listen, dropped", m->method_name);
		return (1);
	}
	if (m->method_id == MCPM_ACKNOWLEDGED && id == c->listen_id) {
		c->listen_backoff = 0;
		/*
		 * The new one takes over: the old one ends, from the loop
		 * (this may be a transfer's callback, and cancelling one
		 * from there is not allowed).
		 */
		if (c->listen_live != 0 && c->listen_live != id) {
			/* One at most: a listen is replaced only from the
			 * loop's timer, as is this one cancelled. */
			c->listen_old = c->listen_live;
			if (c->listen_drop == NULL)
				c->listen_drop = event_new(base, -1, 0,
				    era_listen_drop_cb, c);
			event_active(c->listen_drop, EV_TIMEOUT, 0);
		}
		c->listen_live = id;
		era_listen_acked(c, m);
		return (1);
	}
	/* Updates from the one acknowledged last (not both at once). */
	if (id != c->listen_live || m->method_id == MCPM_ACKNOWLEDGED) {
		log_debug("%s for a listen no longer open, dropped",
		    m->method_name);
		return (1);
	}
	if (m->method_id == MCPM_UPDATED) {
		jscan_member(m->p, m->params, "_meta", &meta);
		k = meta_drop_members(m->p, meta, meta_drop, edits, 4);
		buf = evbuffer_new();
		jscan_splice(buf, m->p, m->n, edits, k > 0 ? (size_t)k : 0);
		chan_send_buffer(MSG_NOTIFY, c->session, 0, buf);
		evbuffer_free(buf);
	} else
		catalog_list_changed(c, m);
	return (1);
}

/* Context of era_param_headers. */
struct era_params {
	void	(*add)(void *, const char *);
	void	*arg;
};

/*
 * One Mcp-Param-* header line, its value encoded.  libcurl drops a header
 * whose value is empty unless it is written "Name;", and an empty string
 * argument must still be mirrored (2026-07-28, MUST).
 */
static void
era_param_one(void *arg, const char *name, const char *value, size_t len)
{
	struct era_params	*ep = arg;
	struct evbuffer		*line = evbuffer_new();
	size_t			 head;

	evbuffer_add_printf(line, "Mcp-Param-%s: ", name);
	head = evbuffer_get_length(line);
	meta_header_encode(line, value, len);
	if (evbuffer_get_length(line) == head) {
		evbuffer_drain(line, head);
		evbuffer_add_printf(line, "Mcp-Param-%s;", name);
	}
	evbuffer_add(line, "", 1);
	ep->add(ep->arg, (const char *)evbuffer_pullup(line, -1));
	evbuffer_free(line);
}

/*
 * Mcp-Param-* headers a tools/call to a modern HTTP upstream must carry:
 * the arguments its tool marks x-mcp-header (common/meta.c).
 */
void
era_param_headers(struct conn *c, const struct jrpc *m,
    void (*add)(void *, const char *), void *arg)
{
	static const char *const name_path[] = { "name", NULL };
	struct era_params	 ep = { add, arg };
	json_t			*tool;
	struct jspan		 name;
	size_t			 i;

	if (m->method_id != MCPM_TOOLS_CALL ||
	    jscan_path(m->p, m->params, name_path, &name) != 0 ||
	    c->lists[0] == NULL)
		return;
	json_array_foreach(c->lists[0], i, tool) {
		if (json_is_string(json_object_get(tool, "name")) &&
		    jscan_string_equals(m->p, name, json_string_value(
		    json_object_get(tool, "name")))) {
			meta_param_each(json_object_get(tool, "inputSchema"),
			    m, era_param_one, &ep);
			return;
		}
	}
}
