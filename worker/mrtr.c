/* SPDX-License-Identifier: ISC */
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
 *
 * A modern client answers its input itself, except what it did not
 * declare and the gateway's strategies can always answer (the worker
 * declared that for it, era.c): those input requests go the same way to
 * the supervisor, whose strategies answer them.  If nothing is left for
 * the client the call is sent again at once; else the client gets
 * input_required with only its own requests, and the gateway's answers
 * wait in a stash, by session and requestState, to be merged into its
 * retry.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "log.h"
#include "meta.h"
#include "worker.h"
#include "xmalloc.h"

#define MRTR_MAX_ROUNDS		8	/* per call, as the SDK's own shim */
#define MRTR_MAX_INPUTS		16	/* per round */
#define MRTR_STATE_ONLY_MS	250	/* before a round with no requests */
#define STASH_MAX		1024	/* gateway answers waiting for retries */
#define STASH_MS		(600 * 1000)
#define STASH_PREFIX		"mcpsw."	/* a requestState of ours */
#define STASH_STATE_MAX		8192	/* longest upstream requestState
					   kept by (8 MiB in all at most) */

struct mrtr {
	struct conn	*conn;
	struct call	*call;
	unsigned int	 round;
	unsigned int	 waiting;	/* answers outstanding */
	json_t		*responses;	/* this round's, by key */
	json_t		*state;		/* requestState, or NULL */
	json_t		*client;	/* a modern client's: the result it
					   gets, its own requests only */
	struct event	*pace;
};

/* The gateway's answers for a modern client's next retry. */
struct stash {
	char			*key;		/* "session/requestState" */
	struct stash		*same;		/* the next with that key */
	int			 minted;	/* ours: dropped before the
						   upstream sees the retry */
	json_t			*responses;
	int64_t			 expires;
	TAILQ_ENTRY(stash)	 entry;
};

static TAILQ_HEAD(, stash)	 stashes = TAILQ_HEAD_INITIALIZER(stashes);
static struct strmap		 stash_by_key;
static unsigned int		 nstashes;

static void	mrtr_retry(struct mrtr *);
static void	stash_free(struct stash *);

void
mrtr_free(struct mrtr *mrtr, int tell)
{
	upreq_drop_mrtr(mrtr, tell);
	if (mrtr->call != NULL && mrtr->call->mrtr == mrtr)
		mrtr->call->mrtr = NULL;
	json_decref(mrtr->responses);
	json_decref(mrtr->state);
	json_decref(mrtr->client);
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

	log_info("%s for session %u failed: %s", mcp_method_name(call->method),
	    call->session, msg);
	if (call->method == MCPM_TOOLS_CALL) {
		result = json_pack("{s:[{s:s, s:s}], s:b}", "content", "type",
		    "text", "text", msg, "isError", 1);
		/* A 2026-07-28 client's result says what it is. */
		if (call->client_modern)
			json_object_set_new(result, "resultType",
			    json_string("complete"));
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
	json_t		*p;
	enum mcp_method	 which;

	*params = NULL;
	if (!json_is_object(entry) || json_unpack(entry, "{s:s}", "method",
	    method) != 0) {
		snprintf(why, len, "input request '%.64s' is not a request",
		    key);
		return (-1);
	}
	which = mcp_method_lookup(*method, strlen(*method));
	if (!mcp_method_is(which, MCPM_F_INPUT)) {
		snprintf(why, len, "input request '%.64s' is %.64s, which "
		    "2026-07-28 does not define", key, *method);
		return (-1);
	}
	p = json_object_get(entry, "params");
	if (p == NULL && which != MCPM_ROOTS) {
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
	if (which == MCPM_ELICITATION &&
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

/* Does a modern client's own capabilities text declare an input? */
static int
mrtr_client_can(const char *caps, const char *method, json_t *params)
{
	json_t		*c, *e;
	enum mcp_method	 id;
	int		 ok = 0;

	if (caps == NULL || (c = json_loads(caps, 0, NULL)) == NULL)
		return (0);
	id = mcp_method_lookup(method, strlen(method));
	if (id == MCPM_SAMPLING)
		ok = json_object_get(c, "sampling") != NULL &&
		    ((json_object_get(params, "tools") == NULL &&
		    json_object_get(params, "toolChoice") == NULL) ||
		    json_object_get(json_object_get(c, "sampling"), "tools") !=
		    NULL);
	else if (id == MCPM_ROOTS)
		ok = json_object_get(c, "roots") != NULL;
	else if ((e = json_object_get(c, "elicitation")) != NULL)
		ok = json_is_string(json_object_get(params, "url")) ?
		    json_object_get(e, "url") != NULL :
		    json_object_size(e) == 0 || json_object_get(e, "form") !=
		    NULL;
	json_decref(c);
	return (ok);
}

/*
 * The stash entry of a session's requestState, or NULL; expired ones go
 * first.  By session too: two sessions may be given the same state.
 */
static struct stash *
stash_find(uint32_t session, const char *state)
{
	struct stash	*sh;
	int64_t		 now = now_ms();
	char		*key;

	while ((sh = TAILQ_FIRST(&stashes)) != NULL && sh->expires <= now)
		stash_free(sh);
	if (stash_by_key.buckets == NULL)
		return (NULL);
	xasprintf(&key, "%" PRIu32 "/%s", session, state);
	sh = strmap_get(&stash_by_key, key);
	free(key);
	return (sh);
}

/*
 * Forget a stash entry.  Entries of one key are a chain, oldest first, of
 * which the map holds the head; every entry freed is the oldest of its
 * chain (expired, evicted or taken, all in order).
 */
static void
stash_free(struct stash *sh)
{
	struct stash	*head, **pp;

	head = strmap_del(&stash_by_key, sh->key);
	if (head == sh) {
		if (sh->same != NULL)
			strmap_add(&stash_by_key, sh->same->key, sh->same);
	} else if (head != NULL) {
		for (pp = &head->same; *pp != NULL && *pp != sh;
		    pp = &(*pp)->same)
			;
		if (*pp == sh)
			*pp = sh->same;
		strmap_add(&stash_by_key, head->key, head);
	}
	TAILQ_REMOVE(&stashes, sh, entry);
	nstashes--;
	json_decref(sh->responses);
	free(sh->key);
	free(sh);
}

/*
 * Keep the gateway's answers for the client's retry (responses taken).
 * Calls given the same state (an upstream's sealed state may be the same
 * for the same round) each keep theirs: retries take them in turn.
 */
static void
stash_put(const char *state, int minted, uint32_t session, json_t *responses)
{
	struct stash	*sh, *last;

	if (stash_by_key.buckets == NULL)
		strmap_init(&stash_by_key);
	if (nstashes >= STASH_MAX)
		stash_free(TAILQ_FIRST(&stashes));
	sh = xcalloc(1, sizeof *sh);
	xasprintf(&sh->key, "%" PRIu32 "/%s", session, state);
	sh->minted = minted;
	sh->responses = responses;
	sh->expires = now_ms() + STASH_MS;
	if ((last = stash_find(session, state)) != NULL) {
		while (last->same != NULL)
			last = last->same;
		last->same = sh;
	} else
		strmap_add(&stash_by_key, sh->key, sh);
	TAILQ_INSERT_TAIL(&stashes, sh, entry);
	nstashes++;
}

int
mrtr_stash_edits(struct conn *c, uint32_t session, const struct jrpc *m,
    struct jedit *edits, size_t max, struct era_texts *t)
{
	static const char *const drop[] = { "requestState", NULL };
	struct jspan	 state, responses;
	struct stash	*sh;
	struct evbuffer	*b;
	json_t		*merged;
	char		*s, *text;
	size_t		 n = 0;
	int		 k;

	if (m->params.len == 0 || jscan_type(m->p, m->params) != JT_OBJECT ||
	    jscan_member(m->p, m->params, "requestState", &state) != 0 ||
	    (s = jscan_strdup(m->p, state)) == NULL)
		return (0);
	sh = stash_find(session, s);
	free(s);
	if (sh == NULL)
		return (0);
	/* The client's answers, and the gateway's of the same round. */
	merged = json_object();
	if (jscan_member(m->p, m->params, "inputResponses", &responses) == 0 &&
	    jscan_type(m->p, responses) == JT_OBJECT) {
		json_decref(merged);
		merged = json_loadb(m->p + responses.off, responses.len,
		    JSON_ALLOW_NUL, NULL);
		json_object_update_missing(merged, sh->responses);
		text = json_dumps(merged, JSON_COMPACT);
		edits[n].at = responses;
	} else {
		json_object_update(merged, sh->responses);
		s = json_dumps(merged, JSON_COMPACT);
		xasprintf(&text, "\"inputResponses\":%s%s", s,
		    era_empty_object(m->p, m->params) ? "" : ",");
		free(s);
		edits[n].at.off = m->params.off + 1;
		edits[n].at.len = 0;
	}
	json_decref(merged);
	b = evbuffer_new();
	evbuffer_add(b, text, strlen(text));
	free(text);
	edits[n].len = evbuffer_get_length(b);
	edits[n++].text = era_texts_own(t, b);
	evbuffer_free(b);
	/* A requestState of the gateway's own is not the upstream's. */
	if (sh->minted && (k = meta_drop_members(m->p, m->params, drop,
	    &edits[n], max - n)) > 0)
		n += (size_t)k;
	log_debug("%s for session %u: the gateway's input of the last round "
	    "merged", m->method_name, session);
	stash_free(sh);
	return ((int)n);
}

int
mrtr_input_required(struct conn *c, struct call *call, const struct jrpc *m)
{
	struct mrtr	*mrtr = call->mrtr;
	json_t		*result, *requests, *state, *entry, *mine = NULL;
	const char	*key, *method;
	char		*params, why[256];
	struct timeval	 tv = { 0, MRTR_STATE_ONLY_MS * 1000 };
	int		 theirs = 0;

	result = json_loadb(m->p + m->result.off, m->result.len,
	    JSON_ALLOW_NUL, NULL);
	requests = json_object_get(result, "inputRequests");
	state = json_object_get(result, "requestState");
	if (call->client_modern) {
		/* The client answers what it declared; is anything left? */
		json_object_foreach(requests, key, entry) {
			if (json_is_object(entry) &&
			    json_is_string(json_object_get(entry, "method")) &&
			    mrtr_client_can(call->gw_caps, json_string_value(
			    json_object_get(entry, "method")),
			    json_object_get(entry, "params")))
				theirs++;
		}
		if ((size_t)theirs == json_object_size(requests)) {
			json_decref(result);
			return (-1);	/* all the client's: passed on */
		}
	}
	if (mrtr == NULL) {
		mrtr = xcalloc(1, sizeof *mrtr);
		mrtr->conn = c;
		mrtr->call = call;
		call->mrtr = mrtr;
	}
	if (++mrtr->round > MRTR_MAX_ROUNDS) {
		json_decref(result);
		snprintf(why, sizeof why, "%s asked for input more than %d "
		    "times", mcp_method_name(call->method), MRTR_MAX_ROUNDS);
		mrtr_fail(mrtr, why);
		return (0);
	}
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
	json_decref(mrtr->client);
	mrtr->responses = json_object();
	mrtr->state = json_is_string(state) ? json_incref(state) : NULL;
	mrtr->client = NULL;
	if (theirs > 0) {
		/* What the client gets once the gateway has answered. */
		mrtr->client = json_deep_copy(result);
		mine = json_object_get(mrtr->client, "inputRequests");
	}
	call->waiting = 1;
	json_object_foreach(requests, key, entry) {
		if (mrtr_check(key, entry, &method, &params, why,
		    sizeof why) != 0) {
			json_decref(result);
			mrtr_fail(mrtr, why);
			return (0);
		}
		if (call->client_modern && mrtr_client_can(call->gw_caps,
		    method, json_object_get(entry, "params"))) {
			free(params);
			continue;	/* the client's own */
		}
		if (mine != NULL)
			json_object_del(mine, key);
		upreq_send(c, call->session, call->tag, mrtr, key, method,
		    params);
		free(params);
		mrtr->waiting++;
	}
	json_decref(result);
	log_debug("%s for session %u: round %u asks %s for %u input%s",
	    mcp_method_name(call->method), call->session, mrtr->round,
	    call->client_modern ? "the gateway's strategies" : "the client",
	    mrtr->waiting, mrtr->waiting == 1 ? "" : "s");
	if (mrtr->waiting == 0) {
		/* Only requestState: wait a little, then go on. */
		if (mrtr->pace == NULL)
			mrtr->pace = evtimer_new(base, mrtr_pace_cb, mrtr);
		evtimer_add(mrtr->pace, &tv);
	}
	return (0);
}

/*
 * The gateway has answered its part of a round; the client answers the
 * rest: it gets input_required with its own requests, and the gateway's
 * answers wait for its retry, by the upstream's requestState (or one of
 * the gateway's, when the upstream gave none).
 */
static void
mrtr_ask_client(struct mrtr *mrtr)
{
	struct conn	*c = mrtr->conn;
	struct call	*call = mrtr->call;
	struct evbuffer	*buf;
	unsigned char	 raw[16];
	char		*text, ours[64];
	const char	*state;
	int		 i, minted = 0;

	if (mrtr->state != NULL) {
		/* The upstream's, whole: a sealed one is often long. */
		state = json_string_value(mrtr->state);
		if (strlen(state) > STASH_STATE_MAX) {
			mrtr_fail(mrtr, "the upstream's requestState is too "
			    "long to keep the gateway's answers by");
			return;
		}
	} else {
		arc4random_buf(raw, sizeof raw);
		snprintf(ours, sizeof ours, "%s", STASH_PREFIX);
		for (i = 0; i < 16; i++)
			snprintf(ours + strlen(STASH_PREFIX) + 2 * i, 3, "%02x",
			    raw[i]);
		json_object_set_new(mrtr->client, "requestState",
		    json_string(ours));
		state = ours;
		minted = 1;
	}
	stash_put(state, minted, call->session, json_incref(mrtr->responses));
	text = json_dumps(mrtr->client, JSON_COMPACT);
	buf = evbuffer_new();
	jrpc_add_result(buf, call->client_id, call->client_idlen, text,
	    strlen(text));
	free(text);
	chan_send_buffer(MSG_RESPONSE, call->session, call->tag, buf);
	evbuffer_free(buf);
	u64map_del(&c->calls, (uint64_t)call->id);
	u64map_del(&c->by_tag, call->tag);
	call->mrtr = NULL;
	mrtr_free(mrtr, 0);
	call_free(call);
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
		    "failed: %.*s", mcp_method_name(mrtr->call->method),
		    (int)(m->error.len > UP_ERROR_QUOTE ? UP_ERROR_QUOTE :
		    m->error.len),
		    m->p + m->error.off);
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
	if (mrtr->waiting > 0)
		return;
	if (mrtr->client != NULL)
		mrtr_ask_client(mrtr);
	else
		mrtr_retry(mrtr);
}

/* Order two edits by position, an insertion before a replacement. */
static int
mrtr_edit_cmp(const void *a, const void *b)
{
	const struct jedit	*x = a, *y = b;

	if (x->at.off != y->at.off)
		return (x->at.off < y->at.off ? -1 : 1);
	return ((x->at.len != 0) - (y->at.len != 0));
}

/*
 * Send the call again with this round's answers, under a new id: they
 * are its inputResponses (with a modern client's own, if its request had
 * some), and the round's requestState is its requestState (or it has
 * none).
 */
static void
mrtr_retry(struct mrtr *mrtr)
{
	static const char *const token_path[] = { "_meta", "progressToken",
	    NULL };
	static const char *const drop_state[] = { "requestState", NULL };
	struct conn	*c = mrtr->conn;
	struct call	*call = mrtr->call;
	struct jrpc	 m;
	struct jedit	 edits[8];
	struct jspan	 token, responses, state;
	struct evbuffer	*insert, *buf;
	const char	*why;
	char		 idtext[32], *s1, *s2 = NULL;
	json_t		*merged;
	size_t		 nedits = 0, i;
	int64_t		 old = call->id;
	int		 have_responses, have_state, k;

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
	have_responses = jscan_member(m.p, m.params, "inputResponses",
	    &responses) == 0 && jscan_type(m.p, responses) == JT_OBJECT;
	have_state = jscan_member(m.p, m.params, "requestState", &state) == 0;
	if (have_responses) {
		merged = json_loadb(m.p + responses.off, responses.len,
		    JSON_ALLOW_NUL, NULL);
		json_object_update(merged, mrtr->responses);
	} else
		merged = json_incref(mrtr->responses);
	s1 = json_dumps(merged, JSON_COMPACT);
	json_decref(merged);
	if (mrtr->state != NULL)
		s2 = json_dumps(mrtr->state, JSON_COMPACT | JSON_ENCODE_ANY);
	insert = evbuffer_new();
	if (!have_responses)
		evbuffer_add_printf(insert, "\"inputResponses\":%s", s1);
	if (!have_state && s2 != NULL)
		evbuffer_add_printf(insert, "%s\"requestState\":%s",
		    have_responses ? "" : ",", s2);
	if (evbuffer_get_length(insert) > 0) {
		for (i = m.params.off + 1; i < m.params.off + m.params.len &&
		    (m.p[i] == ' ' || m.p[i] == '\n' || m.p[i] == '\t' ||
		    m.p[i] == '\r'); i++)
			;
		if (m.p[i] != '}')
			evbuffer_add(insert, ",", 1);
		edits[nedits].at.off = m.params.off + 1;
		edits[nedits].at.len = 0;
		edits[nedits].text = (const char *)evbuffer_pullup(insert, -1);
		edits[nedits++].len = evbuffer_get_length(insert);
	}
	if (have_responses) {
		edits[nedits].at = responses;
		edits[nedits].text = s1;
		edits[nedits++].len = strlen(s1);
	}
	if (have_state && s2 != NULL) {
		edits[nedits].at = state;
		edits[nedits].text = s2;
		edits[nedits++].len = strlen(s2);
	} else if (have_state && (k = meta_drop_members(m.p, m.params,
	    drop_state, &edits[nedits], 2)) > 0)
		nedits += (size_t)k;
	edits[nedits].at = m.id;
	edits[nedits].text = idtext;
	edits[nedits++].len = strlen(idtext);
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
	free(s1);
	free(s2);
	u64map_del(&c->calls, (uint64_t)old);
	u64map_put(&c->calls, (uint64_t)call->id, call);
	call->waiting = 0;
	log_debug("%s for session %u: sent again with round %u's input",
	    mcp_method_name(call->method), call->session, mrtr->round);
	conn_send(c, buf);
	evbuffer_free(buf);
}
