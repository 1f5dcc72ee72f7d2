/* SPDX-License-Identifier: ISC */
/*
 * Calls parked while a 2026-07-28 client supplies input.  A 2025-era
 * upstream asks for sampling, elicitation or roots in the middle of a
 * call by sending a request; a 2026-07-28 client cannot be sent one.  So
 * the gateway parks the call (its pending request stays, upstream), holds
 * the upstream's requests, and answers the client input_required with one
 * inputRequests entry per held request and a requestState token that
 * names the parked call.  The client's retry carries inputResponses: each
 * answers its held request upstream, and the call goes on, answering the
 * retry (or asking again).  Nothing is ever run twice: a token that is
 * unknown, used, expired, altered or another request's is refused, and
 * the call it named, if any, is not touched.
 *
 * Tokens (common/state_token.c) are HMAC-protected, bound to the
 * principal, the method, the name and the arguments, carry an expiry
 * (request_state_ttl) and a round: each retry consumes its round, so a
 * token is good once.  When the TTL passes without a retry, the call is
 * cancelled upstream and its held requests are refused.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "log.h"
#include "meta.h"
#include "secret.h"
#include "state_token.h"
#include "supervisor.h"
#include "xmalloc.h"

#define PARKED_MAX		4096	/* parked calls, every principal */
#define PARKED_MAX_INPUTS	16	/* requests held for one call */
#define PARKED_MAX_ROUNDS	32	/* retries of one call */

/* A request of the upstream's, held for the client. */
struct parked_input {
	char			 key[32];	/* its inputRequests key */
	uint32_t		 ref;		/* the worker's reference */
	enum mcp_method		 method;	/* one of MCPM_F_INPUT */
	char			*params;	/* JSON text, or NULL */
	size_t			 paramslen;
	TAILQ_ENTRY(parked_input) entry;
};

struct parked {
	unsigned char		 id[STOKEN_ID_LEN];
	uint64_t		 key;		/* the id's first 8 bytes */
	struct session		*session;
	struct upstream		*up;		/* NULL once it went away */
	struct pending		*pending;	/* NULL once the call ended */
	unsigned char		 binding[STOKEN_BINDING_LEN];
	unsigned int		 round;
	unsigned int		 next_key;
	TAILQ_HEAD(, parked_input) inputs;
	unsigned int		 ninputs;
	int			 waiting;	/* its client holds a token */
	struct event		*timer;		/* request_state_ttl */
	struct event		*flush;		/* ask at the end of the turn */
	struct evbuffer		*answer;	/* came while it waited */
	char			*gone;		/* why the call ended */
	TAILQ_ENTRY(parked)	 entry;
};

static TAILQ_HEAD(, parked)	 all = TAILQ_HEAD_INITIALIZER(all);
static struct u64map		 by_key;
static unsigned int		 nparked;
static unsigned char		 state_key[STATE_KEY_MAX];
static size_t			 state_keylen;
static char			 instance[STOKEN_INSTANCE_MAX + 1];

static void	parked_free(struct parked *, const char *why);

/* Unix milliseconds: tokens are judged by instances that share a key. */
static uint64_t
unix_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ((uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000);
}

void
continuation_init(void)
{
	u64map_init(&by_key);
}

int
continuation_key(const struct conf *c, struct state_key *k, char *err,
    size_t errlen)
{
	char	*v, why[256];
	size_t	 len;

	k->len = 0;
	if (c->request_state_key == NULL)
		return (0);
	if ((v = secret_expand(c->request_state_key, why,
	    sizeof why)) == NULL) {
		snprintf(err, errlen, "request_state_key: %s", why);
		return (-1);
	}
	len = strlen(v);
	if (len < CONF_MIN_STATE_KEY || len > STATE_KEY_MAX) {
		snprintf(err, errlen, "request_state_key: %zu characters (it "
		    "needs %d to %d)", len, CONF_MIN_STATE_KEY, STATE_KEY_MAX);
		explicit_bzero(v, len);
		free(v);
		return (-1);
	}
	memcpy(k->key, v, len);
	k->len = len;
	explicit_bzero(v, len);
	free(v);
	return (0);
}

void
continuation_apply(const struct conf *c, struct state_key *k)
{
	unsigned char	 raw[8];
	size_t		 i;

	if (k->len > 0) {
		memcpy(state_key, k->key, k->len);
		state_keylen = k->len;
	} else if (state_keylen == 0) {
		/* Tokens then live as long as the process, as parked calls. */
		fill_random(state_key, 32);
		state_keylen = 32;
	}
	explicit_bzero(k, sizeof *k);
	if (c->instance != NULL)
		snprintf(instance, sizeof instance, "%s", c->instance);
	else if (instance[0] == '\0') {
		fill_random(raw, sizeof raw);
		for (i = 0; i < sizeof raw; i++)
			snprintf(instance + 2 * i, 3, "%02x", raw[i]);
	}
}

int
continuation_configure(const struct conf *c, char *err, size_t errlen)
{
	struct state_key	k;

	if (continuation_key(c, &k, err, errlen) != 0)
		return (-1);
	continuation_apply(c, &k);
	return (0);
}

const char *
continuation_instance(void)
{
	return (instance);
}

unsigned int
continuation_count(void)
{
	return (nparked);
}

/* The parked call a token names, or NULL. */
static struct parked *
parked_find(const unsigned char *id)
{
	struct parked	*pk;
	uint64_t	 key = 0;
	int		 i;

	for (i = 0; i < 8; i++)
		key = key << 8 | id[i];
	pk = u64map_get(&by_key, key);
	if (pk == NULL || memcmp(pk->id, id, STOKEN_ID_LEN) != 0)
		return (NULL);
	return (pk);
}

/* Refuse the held requests upstream (the call will not go on). */
static void
parked_refuse_inputs(struct parked *pk, const char *why)
{
	struct parked_input	*in;

	while ((in = TAILQ_FIRST(&pk->inputs)) != NULL) {
		TAILQ_REMOVE(&pk->inputs, in, entry);
		pk->ninputs--;
		if (pk->up != NULL) {
			route_up_error(pk->up, pk->session->no, in->ref,
			    MCP_CONNECTION_CLOSED, why);
			sampling_end(pk->up, in->ref, "error", why);
		}
		free(in->params);
		free(in);
	}
}

/* Free a parked call; a pending call still attached is left alone. */
static void
parked_free(struct parked *pk, const char *why)
{
	parked_refuse_inputs(pk, why);
	if (pk->pending != NULL)
		pk->pending->parked = NULL;
	u64map_del(&by_key, pk->key);
	TAILQ_REMOVE(&all, pk, entry);
	nparked--;
	pk->session->nparked--;
	event_free(pk->timer);
	event_free(pk->flush);
	if (pk->answer != NULL)
		evbuffer_free(pk->answer);
	free(pk->gone);
	free(pk);
}

/* End a parked call: cancel it upstream, refuse its requests, free it. */
static void
parked_cancel(struct parked *pk, const char *why)
{
	struct pending	*p = pk->pending;
	struct evbuffer	*reason;

	if (p != NULL) {
		reason = evbuffer_new();
		evbuffer_add(reason, "{\"reason\":", 10);
		jscan_add_string(reason, why, strlen(why));
		evbuffer_add(reason, "}", 2);
		route_pending_cancel(p, (const char *)evbuffer_pullup(reason,
		    -1));
		evbuffer_free(reason);
		p->parked = NULL;
		pk->pending = NULL;
		route_pending_free(p);
	}
	parked_free(pk, why);
}

/* The client did not retry in time. */
static void
parked_timeout_cb(evutil_socket_t fd, short events, void *arg)
{
	struct parked	*pk = arg;
	char		 why[128];

	snprintf(why, sizeof why, "the client did not supply the input within "
	    "request_state_ttl (%u s)", conf->request_state_ttl);
	log_info("session %.8s: parked call cancelled: %s", pk->session->id,
	    why);
	parked_cancel(pk, why);
}

/* Append one held request as an inputRequests entry. */
static void
parked_add_input(struct evbuffer *out, const struct parked_input *in)
{
	jscan_add_string(out, in->key, strlen(in->key));
	evbuffer_add_printf(out, ":{\"method\":\"%s\"",
	    mcp_method_name(in->method));
	if (in->params != NULL) {
		evbuffer_add(out, ",\"params\":", 10);
		evbuffer_add(out, in->params, in->paramslen);
	}
	evbuffer_add(out, "}", 1);
}

/*
 * Answer a request of the client with input_required: the held requests
 * and a fresh token for this round.  The client holds the token from now
 * on, until it retries or request_state_ttl passes.
 */
static void
parked_ask(struct parked *pk, struct stream *st, const char *id, size_t idlen)
{
	struct parked_input	*in;
	struct stoken		 t;
	struct evbuffer		*result, *buf;
	struct timeval		 tv = { (time_t)conf->request_state_ttl, 0 };
	char			 token[STOKEN_MAX];

	memset(&t, 0, sizeof t);
	t.kind = STOKEN_KIND_PARKED;
	t.round = pk->round;
	t.expires = unix_ms() + (uint64_t)conf->request_state_ttl * 1000;
	memcpy(t.id, pk->id, STOKEN_ID_LEN);
	memcpy(t.binding, pk->binding, STOKEN_BINDING_LEN);
	snprintf(t.instance, sizeof t.instance, "%s", instance);
	stoken_mint(&t, state_key, state_keylen, token);

	result = evbuffer_new();
	evbuffer_add_printf(result, "{\"resultType\":\"input_required\","
	    "\"inputRequests\":{");
	TAILQ_FOREACH(in, &pk->inputs, entry) {
		if (in != TAILQ_FIRST(&pk->inputs))
			evbuffer_add(result, ",", 1);
		parked_add_input(result, in);
	}
	evbuffer_add_printf(result, "},\"requestState\":\"%s\"}", token);
	buf = evbuffer_new();
	jrpc_add_result(buf, id, idlen, (const char *)evbuffer_pullup(result,
	    -1), evbuffer_get_length(result));
	evbuffer_free(result);
	log_debug("session %.8s: parked call asks its client for %u input%s "
	    "(round %u)", pk->session->id, pk->ninputs, pk->ninputs == 1 ?
	    "" : "s", pk->round);
	pk->waiting = 1;
	evtimer_add(pk->timer, &tv);
	stream_send(st, buf, 1);
	evbuffer_free(buf);
}

/* Ask the client for what was held during this turn of the loop. */
static void
parked_flush_cb(evutil_socket_t fd, short events, void *arg)
{
	struct parked	*pk = arg;
	struct pending	*p = pk->pending;
	struct stream	*st;

	if (p == NULL || (st = p->stream) == NULL || pk->ninputs == 0)
		return;
	p->stream = NULL;
	if (p->timer != NULL)
		evtimer_del(p->timer);
	parked_ask(pk, st, p->id, p->idlen);
}

/* Does a capabilities text declare what a request needs? */
static int
caps_can(const char *caps, const char *p, size_t n, char *why, size_t len)
{
	struct jrpc	 m;
	json_t		*o;
	const char	*w;
	int		 ok;

	if (jrpc_scan(p, n, &m, &w) != 0)
		return (0);
	o = json_loads(caps != NULL ? caps : "{}", 0, NULL);
	ok = route_caps_can(o, &m, why, len, NULL);
	json_decref(o);
	return (ok);
}

/* The same for a held request (its params rebuilt into a message). */
static int
input_can(const char *caps, const struct parked_input *in, char *why,
    size_t len)
{
	struct evbuffer	*msg = evbuffer_new();
	int		 ok;

	evbuffer_add_printf(msg, "{\"jsonrpc\":\"2.0\",\"id\":%u,\"method\":"
	    "\"%s\"", in->ref, mcp_method_name(in->method));
	if (in->params != NULL) {
		evbuffer_add(msg, ",\"params\":", 10);
		evbuffer_add(msg, in->params, in->paramslen);
	}
	evbuffer_add(msg, "}", 1);
	ok = caps_can(caps, (const char *)evbuffer_pullup(msg, -1),
	    evbuffer_get_length(msg), why, len);
	evbuffer_free(msg);
	return (ok);
}

/* Send an answer that came while its call was parked, to the retry. */
static void
parked_deliver(struct req *retry, struct evbuffer *answer)
{
	struct evbuffer	*out;
	struct jrpc	 m;
	const char	*why;

	if (jrpc_scan((const char *)evbuffer_pullup(answer, -1),
	    evbuffer_get_length(answer), &m, &why) != 0 || m.id.len == 0) {
		route_reject(retry, JRPC_INTERNAL_ERROR, "the upstream's "
		    "answer was not readable");
		return;
	}
	out = jscan_replace(m.p, m.n, m.id, retry->m->p + retry->m->id.off,
	    retry->m->id.len);
	/* An error as a 2026-07-28 client has it, as any answer's is. */
	if (m.kind == JRPC_ERROR)
		modern_upstream_error(retry->stream, out);
	stream_send(retry->stream, out, 1);
	evbuffer_free(out);
}

/* Copy a request's params._meta.progressToken (raw); -1 if none. */
static int
progress_token(const struct jrpc *m, struct evbuffer *out)
{
	static const char *const path[] = { "_meta", "progressToken", NULL };
	struct jspan	token;

	if (jscan_path(m->p, m->params, path, &token) != 0 ||
	    !jrpc_id_valid(m->p, token))
		return (-1);
	evbuffer_add(out, m->p + token.off, token.len);
	return (0);
}

/* Bind a modern call to what a retry must repeat. */
static void
bind_request(const struct session *s, const struct jrpc *m, const char *name,
    unsigned char *out)
{
	struct jspan	args;
	char		principal[128];

	session_principal(s, principal, sizeof principal);
	if (jscan_member(m->p, m->params, "arguments", &args) != 0)
		memset(&args, 0, sizeof args);
	stoken_binding(principal, m->method_name, name, strlen(name),
	    m->p + args.off, args.len, out);
}

void
continuation_bind(struct pending *p, const struct req *r, const char *name)
{
	bind_request(r->session, r->m, name, p->binding);
}

/* Is inputResponses an object whose members are all objects? */
static int
responses_valid(const char *p, struct jspan responses)
{
	struct jiter	it;
	struct jspan	key, v;
	int		r;

	if (jscan_object(p, responses, &it) != 0)
		return (0);
	while ((r = jscan_next_member(&it, &key, &v)) == 1) {
		if (jscan_type(p, v) != JT_OBJECT)
			return (0);
	}
	return (r == 0);
}

int
continuation_park(const struct up_ask *a, char *why, size_t len, int *code)
{
	struct upstream		*up = a->up;
	struct session		*s = a->session;
	const struct jrpc	*m = a->m;
	struct pending		*p;
	struct parked		*pk;
	struct parked_input	*in;
	const char		*kind;
	int			 i;

	p = a->tag != 0 ? route_pending_find(a->tag) : NULL;
	if (p == NULL || p->up != up || p->session != s) {
		snprintf(why, len, "the gateway cannot tell which request of "
		    "the client this is for");
		*code = JRPC_INTERNAL_ERROR;
		return (-1);
	}
	/* What a 2026-07-28 client answers in inputResponses. */
	if (!mcp_method_is(m->method_id, MCPM_F_INPUT)) {
		snprintf(why, len, "a 2026-07-28 client answers no %s",
		    m->method_name);
		*code = JRPC_METHOD_NOT_FOUND;
		return (-1);
	}
	if (!mcp_method_is(p->method, MCPM_F_PARKS)) {
		snprintf(why, len, "a 2026-07-28 client supplies input only to "
		    "tools/call, prompts/get and resources/read, not %s",
		    mcp_method_name(p->method));
		*code = JRPC_INTERNAL_ERROR;
		return (-1);
	}
	/* The request's own capabilities; a parked call's, at its retry. */
	if (p->stream != NULL && !caps_can(p->stream->caps, m->p, m->n, why,
	    len)) {
		*code = MCP_MISSING_CAPABILITY;
		return (-1);
	}
	if ((pk = p->parked) == NULL) {
		if (nparked >= PARKED_MAX) {
			snprintf(why, len, "too many calls wait for their "
			    "clients' input (%d)", PARKED_MAX);
			*code = MCP_OVERLOADED;
			return (-1);
		}
		/* One client's share: calls answered while it was asked
		 * are no longer pending, and would escape max_pending. */
		if (s->nparked >= conf->max_pending) {
			snprintf(why, len, "too many calls of this client wait "
			    "for its input (max_pending %u)", conf->max_pending);
			*code = MCP_OVERLOADED;
			return (-1);
		}
		pk = xcalloc(1, sizeof *pk);
		do {
			fill_random(pk->id, sizeof pk->id);
			for (i = 0, pk->key = 0; i < 8; i++)
				pk->key = pk->key << 8 | pk->id[i];
		} while (u64map_get(&by_key, pk->key) != NULL);
		pk->session = s;
		pk->up = up;
		pk->pending = p;
		memcpy(pk->binding, p->binding, sizeof pk->binding);
		TAILQ_INIT(&pk->inputs);
		pk->timer = evtimer_new(base, parked_timeout_cb, pk);
		pk->flush = evtimer_new(base, parked_flush_cb, pk);
		u64map_put(&by_key, pk->key, pk);
		TAILQ_INSERT_TAIL(&all, pk, entry);
		nparked++;
		s->nparked++;
		p->parked = pk;
	}
	if (pk->ninputs >= PARKED_MAX_INPUTS) {
		snprintf(why, len, "more than %d requests wait for the client "
		    "in one call", PARKED_MAX_INPUTS);
		*code = MCP_OVERLOADED;
		return (-1);
	}
	in = xcalloc(1, sizeof *in);
	kind = m->method_id == MCPM_SAMPLING ? "sampling" :
	    m->method_id == MCPM_ROOTS ? "roots" : "elicitation";
	snprintf(in->key, sizeof in->key, "%s-%u", kind, ++pk->next_key);
	in->ref = a->ref;
	in->method = m->method_id;
	if (m->params.len != 0) {
		in->paramslen = m->params.len;
		in->params = xmalloc(in->paramslen);
		memcpy(in->params, m->p + m->params.off, in->paramslen);
	}
	TAILQ_INSERT_TAIL(&pk->inputs, in, entry);
	pk->ninputs++;
	log_debug("upstream %s: %s held for session %.8s as %s", up->sc->name,
	    m->method_name, s->id, in->key);
	/* Requests that come together are asked together. */
	if (p->stream != NULL)
		event_active(pk->flush, EV_TIMEOUT, 0);
	return (0);
}

/* The capabilities a held request needs, as JSON (data of -32021). */
static void
required_caps(struct evbuffer *out, enum mcp_method method, const char *params,
    size_t len)
{
	const char	*p = params != NULL ? params : "";
	struct jspan	 obj = { 0, params != NULL ? len : 0 }, at;

	/* What the params say at their top level, not anywhere in them
	 * (a form's schema may have a property named url). */
	if (method == MCPM_SAMPLING)
		evbuffer_add_printf(out, "{\"sampling\":%s}",
		    jscan_member(p, obj, "tools", &at) == 0 ?
		    "{\"tools\":{}}" : "{}");
	else if (method == MCPM_ROOTS)
		evbuffer_add_printf(out, "{\"roots\":{}}");
	else
		evbuffer_add_printf(out, "{\"elicitation\":{\"%s\":{}}}",
		    jscan_member(p, obj, "mode", &at) == 0 &&
		    jscan_string_equals(p, at, "url") ? "url" : "form");
}

/* Answer a request of the client -32021 for a held request. */
static void
missing_error(struct stream *st, const char *id, size_t idlen,
    enum mcp_method method, const char *params, size_t paramslen,
    const char *why)
{
	struct evbuffer	*data = evbuffer_new();

	evbuffer_add(data, "{\"requiredCapabilities\":", 24);
	required_caps(data, method, params, paramslen);
	evbuffer_add(data, "}", 2);	/* and a NUL */
	modern_error(st, id, idlen, MCP_MISSING_CAPABILITY,
	    (const char *)evbuffer_pullup(data, -1), "Missing required client "
	    "capability: %s", why);
	evbuffer_free(data);
}

void
continuation_missing(const struct up_ask *a, const char *why)
{
	const struct jrpc	*m = a->m;
	struct pending		*p;
	struct session		*s;
	struct parked		*pk;

	p = a->tag != 0 ? route_pending_find(a->tag) : NULL;
	if (p == NULL || p->up != a->up) {
		route_up_error(a->up, 0, a->ref, JRPC_METHOD_NOT_FOUND, why);
		return;
	}
	s = p->session;
	route_up_error(a->up, s != NULL ? s->no : 0, a->ref,
	    JRPC_METHOD_NOT_FOUND, why);
	log_info("session %.8s: %s needs %s, which the client did not "
	    "declare: -32021, the call is cancelled", s != NULL ? s->id : "?",
	    mcp_method_name(p->method), m->method_name);
	obs_end(&p->obs, OBS_REFUSED, MCP_MISSING_CAPABILITY);
	if (p->stream != NULL)
		missing_error(p->stream, p->id, p->idlen, m->method_id,
		    m->p + m->params.off, m->params.len, why);
	if ((pk = p->parked) != NULL)
		parked_cancel(pk, why);
	else {
		route_pending_cancel(p, "{\"reason\":\"the client lacks a "
		    "capability the call needs\"}");
		route_pending_free(p);
	}
}

void
continuation_answered(struct pending *p, struct evbuffer *payload)
{
	struct parked	*pk = p->parked;

	p->parked = NULL;
	pk->pending = NULL;
	if (pk->answer == NULL)
		pk->answer = evbuffer_new();
	evbuffer_add_buffer(pk->answer, payload);
	evbuffer_free(payload);
}

void
continuation_pending_gone(struct pending *p, const char *why)
{
	struct parked	*pk = p->parked;

	p->parked = NULL;
	pk->pending = NULL;
	if (!pk->waiting) {
		/* The call was answered (or failed) on its own stream. */
		parked_free(pk, "the call ended");
		return;
	}
	if (pk->answer == NULL && pk->gone == NULL)
		pk->gone = xstrdup(why != NULL ? why : "the upstream ended it");
	/* The held requests are moot now. */
	parked_refuse_inputs(pk, "the call ended");
}

int
continuation_up_cancelled(struct upstream *up, uint32_t ref)
{
	struct parked		*pk;
	struct parked_input	*in;

	TAILQ_FOREACH(pk, &all, entry) {
		if (pk->up != up)
			continue;
		TAILQ_FOREACH(in, &pk->inputs, entry) {
			if (in->ref != ref)
				continue;
			TAILQ_REMOVE(&pk->inputs, in, entry);
			pk->ninputs--;
			free(in->params);
			free(in);
			return (1);
		}
	}
	return (0);
}

void
continuation_session_end(struct session *s)
{
	struct parked	*pk, *next;

	/* Most sessions (every 2025 one) park nothing: no walk of all. */
	for (pk = TAILQ_FIRST(&all); pk != NULL && s->nparked > 0; pk = next) {
		next = TAILQ_NEXT(pk, entry);
		if (pk->session == s)
			parked_cancel(pk, "the client's session ended");
	}
}

void
continuation_upstream_gone(struct upstream *up)
{
	struct parked		*pk, *next;
	struct parked_input	*in;

	for (pk = TAILQ_FIRST(&all); pk != NULL; pk = next) {
		next = TAILQ_NEXT(pk, entry);
		if (pk->up != up)
			continue;
		/* Its worker is gone, and the references with it. */
		while ((in = TAILQ_FIRST(&pk->inputs)) != NULL) {
			TAILQ_REMOVE(&pk->inputs, in, entry);
			pk->ninputs--;
			free(in->params);
			free(in);
		}
		pk->up = NULL;
		if (pk->pending == NULL && !pk->waiting)
			parked_free(pk, "the upstream went away");
		else if (pk->gone == NULL && pk->answer == NULL)
			pk->gone = xstrdup("the upstream went away");
	}
}

/*
 * Answer the held requests the retry's inputResponses answer; -1 (the
 * retry answered) if one is not a result object.
 */
static int
parked_answer_inputs(struct parked *pk, struct req *r, struct jspan responses)
{
	const struct jrpc	*m = r->m;
	struct parked_input	*in, *next;
	struct jspan		 v;
	struct evbuffer		*buf;
	char			 ref[16];
	int			 found;

	for (in = TAILQ_FIRST(&pk->inputs); in != NULL; in = next) {
		next = TAILQ_NEXT(in, entry);
		if (responses.len == 0 || (found = jscan_member_unique(m->p,
		    responses, in->key, &v)) == -1)
			continue;	/* asked again below */
		if (found == -2 || jscan_type(m->p, v) != JT_OBJECT) {
			route_reject(r, JRPC_INVALID_PARAMS, "inputResponses."
			    "%s must be one result object", in->key);
			return (-1);
		}
		if (v.len + 64 > pk->up->sc->max_message) {
			route_reject(r, JRPC_INVALID_PARAMS, "inputResponses."
			    "%s is larger than upstream %s's max_message",
			    in->key, pk->up->sc->name);
			return (-1);
		}
		snprintf(ref, sizeof ref, "%u", in->ref);
		buf = evbuffer_new();
		jrpc_add_result(buf, ref, strlen(ref), m->p + v.off, v.len);
		upstream_send_buffer(pk->up, MSG_UP_RESPONSE, pk->session->no,
		    in->ref, buf);
		evbuffer_free(buf);
		sampling_end(pk->up, in->ref, "ok", NULL);
		TAILQ_REMOVE(&pk->inputs, in, entry);
		pk->ninputs--;
		free(in->params);
		free(in);
	}
	return (0);
}

/*
 * The instance a token names in clear, if it is well formed and not this
 * one's (its MAC did not verify under this instance's key); else NULL.
 */
static const char *
token_instance(const char *token)
{
	const char	*p;
	size_t		 n;

	if (strncmp(token, STOKEN_PREFIX, strlen(STOKEN_PREFIX)) != 0)
		return (NULL);
	p = token + strlen(STOKEN_PREFIX);
	n = strcspn(p, ".");
	if (p[n] != '.' || n == 0 || n > STOKEN_INSTANCE_MAX ||
	    strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789_-") != n)
		return (NULL);
	if (strlen(instance) == n && strncmp(p, instance, n) == 0)
		return (NULL);
	return (p);
}

/* Refuse a retry whose token is no good; log who sent what. */
static int __attribute__((format(printf, 2, 3)))
refuse(struct req *r, const char *fmt, ...)
{
	va_list	ap;
	char	msg[256];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	log_warnx("session %.8s: %s refused: %s", r->session->id,
	    r->m->method_name, msg);
	route_reject(r, JRPC_INVALID_PARAMS, "%s", msg);
	return (1);
}

int
continuation_resume(struct req *r, struct upstream *up, const char *name)
{
	struct session		*s = r->session;
	struct stream		*st = r->stream;
	const struct jrpc	*m = r->m;
	struct jspan		 state, responses;
	struct stoken		 t;
	struct parked		*pk;
	struct parked_input	*in;
	struct pending		*p;
	struct evbuffer		*buf;
	enum stoken_result	 verdict;
	unsigned char		 binding[STOKEN_BINDING_LEN];
	char			 token[STOKEN_MAX], why[256];
	const char		*other;
	ssize_t			 n;
	int			 rs, rr;

	if (upstream_modern(up))
		return (0);	/* the upstream's own state, passed through */
	rs = jscan_member_unique(m->p, m->params, "requestState", &state);
	rr = jscan_member_unique(m->p, m->params, "inputResponses",
	    &responses);
	if (rs == -1 && rr == -1)
		return (0);
	if (rs == -2 || rr == -2)
		return (refuse(r, "%s: requestState or inputResponses "
		    "given twice", m->method_name));
	if (rr == 0 && !responses_valid(m->p, responses))
		return (refuse(r, "%s: inputResponses must be an object "
		    "of result objects", m->method_name));
	if (rs == -1) {
		/* Nothing of ours to continue: a new call, and what the
		 * client sent unasked is ignored, as it SHOULD be (the worker
		 * drops it for the upstream). */
		log_debug("session %.8s: %s: inputResponses without a "
		    "requestState, ignored", s->id, m->method_name);
		return (0);
	}
	if (rr == -1)
		memset(&responses, 0, sizeof responses);
	if (jscan_type(m->p, state) != JT_STRING || (n = jscan_string(m->p,
	    state, token, sizeof token)) < 0)
		return (refuse(r, "requestState %s", "failed "
		    "verification"));
	verdict = stoken_verify(token, (size_t)n, state_key, state_keylen,
	    unix_ms(), &t);
	if (verdict == STOKEN_EXPIRED)
		return (refuse(r, "requestState expired (%s): the call "
		    "it continued was cancelled", "request_state_ttl"));
	if (verdict == STOKEN_BAD_MAC &&
	    (other = token_instance(token)) != NULL)
		return (refuse(r, "requestState names a call parked at "
		    "gateway instance %.*s, not this one (%s): a balancer must "
		    "send a retry to the instance its token names",
		    (int)strcspn(other, "."), other, instance));
	if (verdict != STOKEN_OK)
		return (refuse(r, "requestState %s",
		    stoken_result_name(verdict)));
	if (strcmp(t.instance, instance) != 0)
		return (refuse(r, "requestState names a call parked at "
		    "gateway instance %s", t.instance));
	bind_request(s, m, name, binding);
	if (!stoken_binding_equal(binding, t.binding))
		return (refuse(r, "requestState %s", "does not belong "
		    "to this request (another principal, method, name or "
		    "arguments)"));
	if ((pk = parked_find(t.id)) == NULL || pk->session != s ||
	    !pk->waiting || t.round != pk->round)
		return (refuse(r, "requestState %s", "was already used, "
		    "or the call it continued has ended"));

	/* The token is used: its round is over. */
	pk->round++;
	pk->waiting = 0;
	evtimer_del(pk->timer);
	if (pk->answer != NULL) {
		parked_deliver(r, pk->answer);
		parked_free(pk, "answered");
		return (1);
	}
	if (pk->gone != NULL || pk->pending == NULL || pk->up == NULL) {
		route_reject(r, MCP_CONNECTION_CLOSED, "the call ended "
		    "while the gateway waited for the client's input: %s",
		    pk->gone != NULL ? pk->gone : "the upstream went away");
		parked_free(pk, "the call ended");
		return (1);
	}
	if (pk->round > PARKED_MAX_ROUNDS) {
		snprintf(why, sizeof why, "more than %d rounds of input",
		    PARKED_MAX_ROUNDS);
		route_reject(r, JRPC_INTERNAL_ERROR, "%s", why);
		parked_cancel(pk, why);
		return (1);
	}
	if (parked_answer_inputs(pk, r, responses) != 0) {
		parked_cancel(pk, "the client's inputResponses were malformed");
		return (1);
	}
	/* What is still held is asked again, of what this retry can do. */
	TAILQ_FOREACH(in, &pk->inputs, entry) {
		if (!input_can(st->caps, in, why, sizeof why)) {
			req_answered(r, OBS_REFUSED, MCP_MISSING_CAPABILITY);
			missing_error(st, m->p + m->id.off, m->id.len,
			    in->method, in->params, in->paramslen, why);
			parked_cancel(pk, why);
			return (1);
		}
	}
	if (pk->ninputs > 0) {
		parked_ask(pk, st, m->p + m->id.off, m->id.len);
		return (1);
	}
	/* Everything answered: the call goes on, answering this retry. */
	p = pk->pending;
	p->stream = st;
	free(p->id);
	p->idlen = m->id.len;
	p->id = xmalloc(p->idlen);
	memcpy(p->id, m->p + m->id.off, p->idlen);
	p->rebound = 1;
	free(p->token);
	p->token = NULL;
	buf = evbuffer_new();
	if (progress_token(m, buf) == 0) {
		p->tokenlen = evbuffer_get_length(buf);
		p->token = xmalloc(p->tokenlen);
		evbuffer_remove(buf, p->token, p->tokenlen);
	}
	evbuffer_free(buf);
	route_pending_arm(p);
	log_debug("session %.8s: parked %s resumed (round %u)", s->id,
	    mcp_method_name(p->method), pk->round);
	return (1);
}
