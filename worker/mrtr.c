/*
 * A 2026-07-28 upstream asks for input the 2026 way: it answers a call
 * input_required, with inputRequests (sampling, elicitation, roots) and
 * perhaps a requestState, and expects the call again with inputResponses.
 * A 2025 client cannot do that, so for it the worker plays the 2026
 * client: each input request becomes a real request to the client (an
 * MSG_UP_REQUEST for the call's own session and tag, so it reaches the
 * call's stream and the supervisor's strategies apply), and once every
 * one is answered the call is sent again, round after round, at most
 * MRTR_MAX_ROUNDS times.  Nothing outlives the client's call: its
 * cancellation ends the round.  A round that fails ends the call as the
 * 2025 idiom has it: an isError result for tools/call, an error for the
 * rest.
 */
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

#define MRTR_MAX_ROUNDS		8	/* per call, as the SDK's own shim */
#define MRTR_MAX_INPUTS		16	/* per round */
#define MRTR_STATE_ONLY_MS	250	/* before a round with no requests */

struct mrtr {
	struct conn	*conn;
	struct call	*call;
	unsigned int	 round;
	unsigned int	 waiting;	/* answers outstanding */
	json_t		*responses;	/* this round's, by key */
	json_t		*state;		/* requestState, or NULL */
	struct event	*pace;
};

static void	mrtr_retry(struct mrtr *);

int
mrtr_method(const char *method)
{
	return (strcmp(method, "tools/call") == 0 ||
	    strcmp(method, "prompts/get") == 0 ||
	    strcmp(method, "resources/read") == 0);
}

void
mrtr_free(struct mrtr *mrtr, int tell)
{
	upreq_drop_mrtr(mrtr, tell);
	if (mrtr->call != NULL && mrtr->call->mrtr == mrtr)
		mrtr->call->mrtr = NULL;
	json_decref(mrtr->responses);
	json_decref(mrtr->state);
	if (mrtr->pace != NULL)
		event_free(mrtr->pace);
	free(mrtr);
}

/*
 * End the call with a failure its client understands: an isError result
 * for tools/call (what a 2025 tool does), a JSON-RPC error for the rest.
 * The requests still out to the client are cancelled there.
 */
static void
mrtr_fail(struct mrtr *mrtr, const char *msg)
{
	struct conn	*c = mrtr->conn;
	struct call	*call = mrtr->call;
	struct evbuffer	*buf;
	json_t		*result;
	char		*s;

	log_info("%s for session %u failed: %s", call->method, call->session,
	    msg);
	if (strcmp(call->method, "tools/call") == 0) {
		result = json_pack("{s:[{s:s, s:s}], s:b}", "content", "type",
		    "text", "text", msg, "isError", 1);
		s = json_dumps(result, JSON_COMPACT);
		json_decref(result);
		buf = evbuffer_new();
		jrpc_add_result(buf, call->client_id, call->client_idlen, s,
		    strlen(s));
		free(s);
		chan_send_buffer(MSG_RESPONSE, call->session, call->tag, buf);
		evbuffer_free(buf);
	} else
		chan_send_json(MSG_FAIL, call->session, call->tag, json_pack(
		    "{s:i, s:s}", "code", JRPC_INTERNAL_ERROR, "message", msg));
	u64map_del(&c->calls, (uint64_t)call->id);
	u64map_del(&c->by_tag, call->tag);
	call->mrtr = NULL;
	mrtr_free(mrtr, 1);
	call_free(call);
}

static void
mrtr_pace_cb(evutil_socket_t fd, short events, void *arg)
{
	mrtr_retry(arg);
}

/* Check one input request; its params as JSON text (caller frees). */
static int
mrtr_check(const char *key, json_t *entry, const char **method, char **params,
    char *why, size_t len)
{
	json_t	*p;

	*params = NULL;
	if (!json_is_object(entry) || json_unpack(entry, "{s:s}", "method",
	    method) != 0) {
		snprintf(why, len, "input request '%.64s' is not a request",
		    key);
		return (-1);
	}
	if (strcmp(*method, "sampling/createMessage") != 0 &&
	    strcmp(*method, "elicitation/create") != 0 &&
	    strcmp(*method, "roots/list") != 0) {
		snprintf(why, len, "input request '%.64s' is %.64s, which "
		    "2026-07-28 does not define", key, *method);
		return (-1);
	}
	p = json_object_get(entry, "params");
	if (p == NULL && strcmp(*method, "roots/list") != 0) {
		snprintf(why, len, "input request '%.64s' (%s) has no params",
		    key, *method);
		return (-1);
	}
	if (p != NULL && !json_is_object(p)) {
		snprintf(why, len, "input request '%.64s' has params that are "
		    "not an object", key);
		return (-1);
	}
	if (p == NULL)
		return (0);
	p = json_deep_copy(p);
	/* A 2025 client's URL elicitation needs an id; 2026 has none. */
	if (strcmp(*method, "elicitation/create") == 0 &&
	    json_is_string(json_object_get(p, "url")) &&
	    json_object_get(p, "elicitationId") == NULL) {
		unsigned char	raw[16];
		char		id[40];
		int		i;

		arc4random_buf(raw, sizeof raw);
		for (i = 0; i < 16; i++)
			snprintf(id + 2 * i, 3, "%02x", raw[i]);
		json_object_set_new(p, "elicitationId", json_string(id));
	}
	*params = json_dumps(p, JSON_COMPACT);
	json_decref(p);
	return (0);
}

int
mrtr_input_required(struct conn *c, struct call *call, const struct jrpc *m)
{
	struct mrtr	*mrtr = call->mrtr;
	json_t		*result, *requests, *state, *entry;
	const char	*key, *method;
	char		*params, why[256];
	struct timeval	 tv = { 0, MRTR_STATE_ONLY_MS * 1000 };

	if (mrtr == NULL) {
		mrtr = xcalloc(1, sizeof *mrtr);
		mrtr->conn = c;
		mrtr->call = call;
		call->mrtr = mrtr;
	}
	if (++mrtr->round > MRTR_MAX_ROUNDS) {
		snprintf(why, sizeof why, "%s asked for input more than %d "
		    "times", call->method, MRTR_MAX_ROUNDS);
		mrtr_fail(mrtr, why);
		return (0);
	}
	result = json_loadb(m->p + m->result.off, m->result.len,
	    JSON_ALLOW_NUL, NULL);
	requests = json_object_get(result, "inputRequests");
	state = json_object_get(result, "requestState");
	if ((!json_is_object(requests) || json_object_size(requests) == 0) &&
	    !json_is_string(state)) {
		json_decref(result);
		mrtr_fail(mrtr, "the upstream answered input_required with "
		    "neither inputRequests nor requestState");
		return (0);
	}
	if (json_object_size(requests) > MRTR_MAX_INPUTS) {
		json_decref(result);
		snprintf(why, sizeof why, "the upstream asked for more than %d "
		    "inputs at once", MRTR_MAX_INPUTS);
		mrtr_fail(mrtr, why);
		return (0);
	}
	json_decref(mrtr->responses);
	json_decref(mrtr->state);
	mrtr->responses = json_object();
	mrtr->state = json_is_string(state) ? json_incref(state) : NULL;
	call->waiting = 1;
	if (json_is_object(requests)) {
		json_object_foreach(requests, key, entry) {
			if (mrtr_check(key, entry, &method, &params, why,
			    sizeof why) != 0) {
				json_decref(result);
				mrtr_fail(mrtr, why);
				return (0);
			}
			upreq_send(c, call->session, call->tag, mrtr, key, method,
			    params);
			free(params);
			mrtr->waiting++;
		}
	}
	json_decref(result);
	log_debug("%s for session %u: round %u asks the client for %u "
	    "input%s", call->method, call->session, mrtr->round,
	    mrtr->waiting, mrtr->waiting == 1 ? "" : "s");
	if (mrtr->waiting == 0) {
		/* Only requestState: wait a little, then go on. */
		if (mrtr->pace == NULL)
			mrtr->pace = evtimer_new(base, mrtr_pace_cb, mrtr);
		evtimer_add(mrtr->pace, &tv);
	}
	return (0);
}

void
mrtr_answer(struct mrtr *mrtr, const char *key, const struct jrpc *m)
{
	json_t	*result;
	char	 why[512];

	if (mrtr->waiting > 0)
		mrtr->waiting--;
	if (m->kind == JRPC_ERROR) {
		snprintf(why, sizeof why, "fulfilling the input %s asked for "
		    "failed: %.*s", mrtr->call->method, (int)(m->error.len > 300 ?
		    300 : m->error.len), m->p + m->error.off);
		mrtr_fail(mrtr, why);
		return;
	}
	result = json_loadb(m->p + m->result.off, m->result.len,
	    JSON_ALLOW_NUL, NULL);
	if (!json_is_object(result)) {
		json_decref(result);
		mrtr_fail(mrtr, "the client's answer is not an object");
		return;
	}
	json_object_set_new(mrtr->responses, key, result);
	if (mrtr->waiting == 0)
		mrtr_retry(mrtr);
}

/* Order two edits by position. */
static int
mrtr_edit_cmp(const void *a, const void *b)
{
	const struct jedit	*x = a, *y = b;

	return (x->at.off < y->at.off ? -1 : x->at.off > y->at.off);
}

/* Send the call again with this round's answers, under a new id. */
static void
mrtr_retry(struct mrtr *mrtr)
{
	static const char *const token_path[] = { "_meta", "progressToken",
	    NULL };
	struct conn	*c = mrtr->conn;
	struct call	*call = mrtr->call;
	struct jrpc	 m;
	struct jedit	 edits[3];
	struct jspan	 token;
	struct evbuffer	*insert, *buf;
	const char	*why;
	char		 idtext[32], *s;
	size_t		 nedits = 0, i;
	int64_t		 old = call->id;

	if (c->state != CONN_READY) {
		mrtr_fail(mrtr, "the upstream is not ready");
		return;
	}
	if (jrpc_scan(call->sent, call->sentlen, &m, &why) != 0 ||
	    jscan_type(m.p, m.params) != JT_OBJECT) {
		mrtr_fail(mrtr, "the call cannot be sent again");
		return;
	}
	call->id = c->next_id++;
	snprintf(idtext, sizeof idtext, "%" PRId64, call->id);
	insert = evbuffer_new();
	s = json_dumps(mrtr->responses, JSON_COMPACT);
	evbuffer_add_printf(insert, "\"inputResponses\":%s", s);
	free(s);
	if (mrtr->state != NULL) {
		s = json_dumps(mrtr->state, JSON_COMPACT | JSON_ENCODE_ANY);
		evbuffer_add_printf(insert, ",\"requestState\":%s", s);
		free(s);
	}
	for (i = m.params.off + 1; i < m.params.off + m.params.len &&
	    (m.p[i] == ' ' || m.p[i] == '\n' || m.p[i] == '\t' ||
	    m.p[i] == '\r'); i++)
		;
	if (m.p[i] != '}')
		evbuffer_add(insert, ",", 1);
	edits[nedits].at = m.id;
	edits[nedits].text = idtext;
	edits[nedits++].len = strlen(idtext);
	edits[nedits].at.off = m.params.off + 1;
	edits[nedits].at.len = 0;
	edits[nedits].text = (const char *)evbuffer_pullup(insert, -1);
	edits[nedits++].len = evbuffer_get_length(insert);
	if (jscan_path(m.p, m.params, token_path, &token) == 0 &&
	    jrpc_id_valid(m.p, token)) {
		edits[nedits].at = token;
		edits[nedits].text = idtext;
		edits[nedits++].len = strlen(idtext);
	}
	qsort(edits, nedits, sizeof edits[0], mrtr_edit_cmp);
	buf = evbuffer_new();
	jscan_splice(buf, m.p, m.n, edits, nedits);
	evbuffer_free(insert);
	u64map_del(&c->calls, (uint64_t)old);
	u64map_put(&c->calls, (uint64_t)call->id, call);
	call->waiting = 0;
	log_debug("%s for session %u: sent again with round %u's input",
	    call->method, call->session, mrtr->round);
	conn_send(c, buf);
	evbuffer_free(buf);
}
