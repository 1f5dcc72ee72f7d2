/* SPDX-License-Identifier: ISC */
/*
 * Requests from upstreams to clients (sampling, elicitation, roots, ping):
 * the strategies that answer them, the client's answers, cancellations
 * and timeouts.
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

static uint64_t		next_up_id;	/* ids of requests we send clients */

static void	route_up_timeout_cb(evutil_socket_t, short, void *);

uint64_t
route_next_id(void)
{
	return (++next_up_id);
}

/* Find a request we sent a session's client, by our id. */
struct up_request *
route_find_up_request(struct session *s, const char *p, struct jspan id)
{
	struct up_request	*ur;
	int64_t			 v;

	if (jscan_int64(p, id, &v) != 0 || v <= 0)
		return (NULL);
	TAILQ_FOREACH(ur, &s->up_requests, session_entry) {
		if (ur->id == (uint64_t)v)
			return (ur);
	}
	return (NULL);
}

/*
 * Is a call's upstream waiting on the call's own side: a request of its
 * to the call's client (that came with the call, or with none), or a
 * sampling request the gateway's chain runs for the call?  Then the
 * call's silence is not the upstream's failure.
 */
int
route_up_waiting(const struct pending *p)
{
	struct up_request	*ur;

	if (p->session != NULL) {
		TAILQ_FOREACH(ur, &p->session->up_requests, session_entry) {
			if (ur->up == p->up && (ur->call_tag == p->tag ||
			    ur->call_tag == 0))
				return (1);
		}
	}
	return (sampling_waiting(p->up, p->tag));
}

/* Free an upstream request record. */
void
route_up_request_free(struct up_request *ur)
{
	TAILQ_REMOVE(&ur->up->up_requests, ur, up_entry);
	TAILQ_REMOVE(&ur->session->up_requests, ur, session_entry);
	ur->session->nup_requests--;
	event_free(ur->timer);
	free(ur->text);
	free(ur);
}

/* Answer an upstream's request with an error (to the worker). */
void
route_up_error(struct upstream *up, uint32_t session, uint32_t ref, int code,
    const char *msg)
{
	struct evbuffer	*buf = evbuffer_new();
	char		 id[16];

	snprintf(id, sizeof id, "%u", ref);
	jrpc_add_error(buf, id, strlen(id), code, msg, NULL);
	upstream_send_buffer(up, MSG_UP_RESPONSE, session, ref, buf);
	evbuffer_free(buf);
}

/*
 * Decline a sampling request as the specification's "user rejected" error,
 * with the gateway's reason in its data.
 */
void
route_up_reject_sampling(struct upstream *up, uint32_t session, uint32_t ref,
    const char *reason)
{
	struct evbuffer	*buf = evbuffer_new(), *data = evbuffer_new();
	char		 id[16];

	snprintf(id, sizeof id, "%u", ref);
	evbuffer_add(data, "{\"reason\":", 10);
	jscan_add_string(data, reason, strlen(reason));
	evbuffer_add(data, "}", 2);	/* with its NUL: a C string */
	jrpc_add_error(buf, id, strlen(id), -1, "User rejected sampling "
	    "request", (const char *)evbuffer_pullup(data, -1));
	upstream_send_buffer(up, MSG_UP_RESPONSE, session, ref, buf);
	evbuffer_free(buf);
	evbuffer_free(data);
}

/* Answer an upstream's request with a result (to the worker). */
void
route_up_result(struct upstream *up, uint32_t session, uint32_t ref,
    const char *result)
{
	struct evbuffer	*buf = evbuffer_new();
	char		 id[16];

	snprintf(id, sizeof id, "%u", ref);
	jrpc_add_result(buf, id, strlen(id), result, strlen(result));
	upstream_send_buffer(up, MSG_UP_RESPONSE, session, ref, buf);
	evbuffer_free(buf);
}

/* Tell a client an upstream request is cancelled. */
void
route_up_cancel_client(struct up_request *ur, const char *reason)
{
	struct evbuffer	*buf = evbuffer_new();

	evbuffer_add_printf(buf, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/cancelled\",\"params\":{\"requestId\":%" PRIu64
	    ",\"reason\":", ur->id);
	jscan_add_string(buf, reason, strlen(reason));
	evbuffer_add(buf, "}}", 2);
	stream_send(ur->stream != NULL ? ur->stream :
	    session_get_stream(ur->session), buf, 0);
	evbuffer_free(buf);
}

/*
 * Is there a strategy after the given one that could answer a request
 * its client answered with an error?  "decline" does not count: the
 * client did answer, and its error says more to the upstream than a
 * decline the user never chose.
 */
static int
route_has_next(const struct upstream *up, const struct jrpc *m, size_t i)
{
	const enum strategy	*list;
	size_t			 n;

	if (m->method_id != MCPM_SAMPLING && m->method_id != MCPM_ELICITATION)
		return (0);
	list = route_up_list(up, m->method_id, &n);
	for (i++; i < n; i++) {
		if (list[i] != STRATEGY_DECLINE)
			return (1);
	}
	return (0);
}

/* Did the client's user reject the request (error code -1)?  That is an
 * answer, not a failure: it goes to the upstream as it is. */
static int
route_user_rejected(const struct jrpc *m)
{
	struct jspan	code;
	int64_t		v;

	return (m->kind == JRPC_ERROR &&
	    jscan_member(m->p, m->error, "code", &code) == 0 &&
	    jscan_int64(m->p, code, &v) == 0 && v == -1);
}

/* The client answered a request an upstream sent it. */
void
route_client_response(struct session *s, const struct jrpc *m)
{
	struct up_request	*ur;
	struct up_ask		 a;
	struct evbuffer		*buf;
	struct jrpc		 orig;
	const char		*why;
	char			 ref[16];

	if (ctools_answer(s, m))
		return;
	if ((ur = route_find_up_request(s, m->p, m->id)) == NULL) {
		log_info("session %.8s: an answer to no request of ours (id "
		    "%.*s), dropped", s->id, (int)(m->id.len > 40 ? 40 :
		    m->id.len), m->p + m->id.off);
		return;
	}
	if (m->kind == JRPC_ERROR && !route_user_rejected(m) &&
	    jrpc_scan(ur->text, ur->len, &orig,
	    &why) == 0 && route_has_next(ur->up, &orig, ur->strategy)) {
		log_info("session %.8s: client refused %s, trying the next "
		    "strategy", s->id, ur->method);
		a.up = ur->up;
		a.session = s;
		a.stream = ur->stream != NULL ? ur->stream :
		    session_get_stream(s);
		a.session_no = s->no;
		a.tag = 0;
		a.ref = ur->ref;
		a.m = &orig;
		route_up_strategies(&a, ur->strategy + 1, "the client refused "
		    "it", 0);
		route_up_request_free(ur);
		return;
	}
	if (m->n > ur->up->sc->max_message) {
		log_warnx("session %.8s: answer to %s of %zu bytes is over "
		    "upstream %s's max_message", s->id, ur->method, m->n,
		    ur->up->sc->name);
		route_up_error(ur->up, s->no, ur->ref, JRPC_INTERNAL_ERROR,
		    "the client's answer is larger than max_message");
		metrics_up_request(ur->up, ur->method_id, MUPO_ERROR);
		sampling_end(ur->up, ur->ref, "error", "the client's answer is "
		    "larger than max_message");
		route_up_request_free(ur);
		return;
	}
	metrics_up_request(ur->up, ur->method_id, m->kind == JRPC_RESULT ?
	    MUPO_CLIENT : MUPO_CLIENT_ERROR);
	snprintf(ref, sizeof ref, "%u", ur->ref);
	buf = jscan_replace(m->p, m->n, m->id, ref, strlen(ref));
	upstream_send_buffer(ur->up, MSG_UP_RESPONSE, s->no, ur->ref, buf);
	evbuffer_free(buf);
	sampling_end(ur->up, ur->ref, m->kind == JRPC_RESULT ? "ok" :
	    route_user_rejected(m) ? "rejected" : "error", m->kind ==
	    JRPC_RESULT ? NULL : "the client answered with an error");
	route_up_request_free(ur);
}

/* An upstream cancelled a request it sent a client. */
void
route_up_cancelled(struct upstream *up, const struct jrpc *m)
{
	struct up_request	*ur;
	struct jspan		 rid, reason;
	int64_t			 ref;
	char			*why = NULL;

	if (jscan_member(m->p, m->params, "requestId", &rid) != 0 ||
	    jscan_int64(m->p, rid, &ref) != 0)
		return;
	TAILQ_FOREACH(ur, &up->up_requests, up_entry) {
		if (ur->ref == (uint32_t)ref)
			break;
	}
	/* Its chain may be at a link other than the client. */
	sampling_end(up, (uint32_t)ref, "cancelled", "cancelled by the "
	    "upstream");
	if (ur == NULL) {
		/* Perhaps one a parked call holds for its client. */
		continuation_up_cancelled(up, (uint32_t)ref);
		return;
	}
	if (jscan_member(m->p, m->params, "reason", &reason) == 0)
		why = jscan_strdup(m->p, reason);
	route_up_cancel_client(ur, why != NULL ? why :
	    "cancelled by the upstream");
	metrics_up_request(up, ur->method_id, MUPO_CANCELLED);
	free(why);
	route_up_request_free(ur);
}

/* Does a client's capabilities object declare what a request needs? */
int
route_caps_can(json_t *caps, const struct jrpc *m, char *why, size_t len,
    int *code)
{
	static const char *const mode_path[] = { "mode", NULL };
	json_t		*c;
	struct jspan	 mode;
	int		 dummy;

	/* Not the capability: the method; not what it declares: params. */
	if (code == NULL)
		code = &dummy;
	*code = JRPC_METHOD_NOT_FOUND;

	switch (m->method_id) {
	case MCPM_SAMPLING:
		c = json_object_get(caps, "sampling");
		if (c == NULL) {
			snprintf(why, len, "the client does not support "
			    "sampling");
			return (0);
		}
		if ((jscan_member(m->p, m->params, "tools", &mode) == 0 ||
		    jscan_member(m->p, m->params, "toolChoice", &mode) == 0) &&
		    json_object_get(c, "tools") == NULL) {
			snprintf(why, len, "the client does not support tool "
			    "use in sampling");
			*code = JRPC_INVALID_PARAMS;
			return (0);
		}
		return (1);
	case MCPM_ELICITATION:
		c = json_object_get(caps, "elicitation");
		if (c == NULL) {
			snprintf(why, len, "the client does not support "
			    "elicitation");
			return (0);
		}
		if (jscan_path(m->p, m->params, mode_path, &mode) == 0 &&
		    jscan_string_equals(m->p, mode, "url")) {
			if (json_object_get(c, "url") == NULL) {
				snprintf(why, len, "the client does not "
				    "support URL-mode elicitation");
				*code = JRPC_INVALID_PARAMS;
				return (0);
			}
		} else if (json_object_size(c) > 0 &&
		    json_object_get(c, "form") == NULL) {
			snprintf(why, len, "the client does not support "
			    "form-mode elicitation");
			*code = JRPC_INVALID_PARAMS;
			return (0);
		}
		return (1);
	case MCPM_ROOTS:
		if (json_object_get(caps, "roots") == NULL) {
			snprintf(why, len, "the client does not support "
			    "roots");
			return (0);
		}
		return (1);
	default:
		return (1);
	}
}

/*
 * The defaults strategy: accept a form elicitation with the default of
 * every property that has one.  NULL if a required property has none (or
 * it is not a form).
 */
static char *
route_elicit_defaults(const struct jrpc *m)
{
	json_t		*params, *schema, *props, *prop, *req, *content, *v;
	const char	*key, *mode;
	char		*text = NULL;
	size_t		 i;

	params = json_loadb(m->p + m->params.off, m->params.len, 0, NULL);
	if (json_unpack(params, "{s:s}", "mode", &mode) == 0 &&
	    strcmp(mode, "form") != 0)
		goto out;
	schema = json_object_get(params, "requestedSchema");
	props = json_object_get(schema, "properties");
	if (!json_is_object(props))
		goto out;
	content = json_object();
	json_object_foreach(props, key, prop) {
		if ((v = json_object_get(prop, "default")) != NULL)
			json_object_set(content, key, v);
	}
	json_array_foreach(json_object_get(schema, "required"), i, req) {
		if (!json_is_string(req) || json_object_get(content,
		    json_string_value(req)) == NULL) {
			json_decref(content);
			goto out;
		}
	}
	v = json_pack("{s:s, s:o}", "action", "accept", "content", content);
	text = json_dumps(v, JSON_COMPACT);
	json_decref(v);
out:
	json_decref(params);
	return (text);
}

/*
 * Is it a roots/list from a shared 2025 upstream, which is never told of
 * roots (they belong to one client)?  Say why.  A 2026-07-28 upstream
 * asks per call, so roots stay the call's.
 */
static int
roots_refused(const struct upstream *up, const struct jrpc *m, char *why,
    size_t len, int *code)
{
	if (m->method_id != MCPM_ROOTS ||
	    up->sc->isolation != ISOLATION_SHARED || upstream_modern(up))
		return (0);
	snprintf(why, len, "roots are not offered to a shared upstream "
	    "(they belong to one client); make it per-session");
	*code = JRPC_METHOD_NOT_FOUND;
	return (1);
}

/* Forward an upstream request to its client; 0 if sent. */
int
route_up_client(const struct up_ask *a, size_t strategy, char *why,
    size_t len, int *code)
{
	struct upstream		*up = a->up;
	struct session		*s = a->session;
	struct stream		*st = a->stream;
	const struct jrpc	*m = a->m;
	struct up_request	*ur;
	struct evbuffer		*buf;
	struct timeval		 tv;
	char			 idtext[32];

	if ((s == NULL || st == NULL) &&
	    up->sc->isolation == ISOLATION_PER_SESSION) {
		snprintf(why, len, "this is the upstream's catalog-listing "
		    "instance, which serves no client (each client session "
		    "has an instance of its own)");
		*code = JRPC_METHOD_NOT_FOUND;
		return (-1);
	}
	if (s == NULL || st == NULL) {
		snprintf(why, len, "the gateway cannot tell which client this "
		    "request is for (a shared upstream asked while no client, "
		    "or more than one, had a call in flight)");
		*code = JRPC_INTERNAL_ERROR;
		return (-1);
	}
	if (roots_refused(up, m, why, len, code))
		return (-1);
	if (!route_caps_can(s->client_caps, m, why, len, code))
		return (-1);
	if (s->nup_requests >= conf->max_pending) {
		snprintf(why, len, "too many requests waiting for the client");
		*code = MCP_OVERLOADED;
		return (-1);
	}
	ur = xcalloc(1, sizeof *ur);
	ur->id = route_next_id();
	ur->ref = a->ref;
	ur->call_tag = a->tag;
	ur->session = s;
	ur->up = up;
	ur->stream = st;
	ur->strategy = strategy;
	ur->len = m->n;
	ur->text = xmalloc(m->n);
	memcpy(ur->text, m->p, m->n);
	snprintf(ur->method, sizeof ur->method, "%s", m->method_name);
	ur->method_id = m->method_id;
	TAILQ_INSERT_TAIL(&up->up_requests, ur, up_entry);
	TAILQ_INSERT_TAIL(&s->up_requests, ur, session_entry);
	s->nup_requests++;
	ur->timer = evtimer_new(base, route_up_timeout_cb, ur);
	tv.tv_sec = up->sc->server_request_timeout;
	tv.tv_usec = 0;
	evtimer_add(ur->timer, &tv);

	snprintf(idtext, sizeof idtext, "%" PRIu64, ur->id);
	buf = jscan_replace(m->p, m->n, m->id, idtext, strlen(idtext));
	log_debug("upstream %s: %s to session %.8s", up->sc->name,
	    m->method_name, s->id);
	stream_send(st, buf, 0);
	evbuffer_free(buf);
	return (0);
}

/* The strategy list for a request from an upstream. */
const enum strategy *
route_up_list(const struct upstream *up, enum mcp_method method, size_t *n)
{
	static const enum strategy	 client_only[] = { STRATEGY_CLIENT };

	switch (method) {
	case MCPM_ELICITATION:
		*n = up->sc->nelicitation;
		return (up->sc->elicitation);
	case MCPM_SAMPLING:
		*n = up->sc->nsampling;
		return (up->sc->sampling);
	default:
		*n = 1;
		return (client_only);
	}
}

/*
 * Answer a request from an upstream by its strategies, in order, from the
 * given one: forward it to the client that caused it, accept it with the
 * schema's defaults, or decline it.  Each strategy that cannot answer
 * passes to the next; when none can, the upstream gets an error.
 * Sampling has a chain of its own (sampling.c).
 */
void
route_up_strategies(const struct up_ask *a, size_t from, const char *already,
    int already_code)
{
	struct upstream			*up = a->up;
	struct session			*s = a->session;
	const struct jrpc		*m = a->m;
	const enum strategy		*list;
	size_t				 n, i;
	char				 why[256], *text;
	int				 code = already_code != 0 ? already_code :
					    JRPC_METHOD_NOT_FOUND;

	if (m->method_id == MCPM_SAMPLING) {
		sampling_chain(a, from, already, already_code);
		return;
	}
	snprintf(why, sizeof why, "%s", already != NULL ? already : "");
	list = route_up_list(up, m->method_id, &n);
	for (i = from; i < n; i++) {
		switch (list[i]) {
		case STRATEGY_CLIENT:
			/* A 2026-07-28 client is asked by input_required. */
			if (s != NULL && s->modern) {
				if (roots_refused(up, m, why, sizeof why,
				    &code))
					break;
				if (continuation_park(a, why, sizeof why,
				    &code) == 0)
					return;
				break;
			}
			if (route_up_client(a, i, why, sizeof why, &code) == 0)
				return;
			break;
		case STRATEGY_DEFAULTS:
			if ((text = route_elicit_defaults(m)) == NULL) {
				snprintf(why, sizeof why, "a required field "
				    "has no default");
				break;
			}
			log_info("upstream %s: %s answered with the schema's "
			    "defaults", up->sc->name, m->method_name);
			metrics_up_request(up, m->method_id, MUPO_DEFAULTS);
			route_up_result(up, a->session_no, a->ref, text);
			free(text);
			return;
		case STRATEGY_DECLINE:
			log_info("upstream %s: %s declined by the gateway%s%s",
			    up->sc->name, m->method_name, why[0] != '\0' ?
			    ": " : "", why);
			metrics_up_request(up, m->method_id, MUPO_DECLINE);
			route_up_result(up, a->session_no, a->ref,
			    "{\"action\":\"decline\"}");
			return;
		default:	/* sampling's own links */
			break;
		}
	}
	if (why[0] == '\0')
		snprintf(why, sizeof why, "no strategy can answer it");
	log_info("upstream %s: %s%s%s refused: %s", up->sc->name,
	    m->method_name, s != NULL ? " for session " : "",
	    s != NULL ? s->id : "", why);
	if (s != NULL && s->modern && code == MCP_MISSING_CAPABILITY) {
		continuation_missing(a, why);
		return;
	}
	metrics_up_request(up, m->method_id, code == MCP_REQUEST_TIMEOUT ?
	    MUPO_TIMEOUT : MUPO_ERROR);
	route_up_error(up, a->session_no, a->ref, code, why);
}

/* An upstream request timed out waiting for the client. */
static void
route_up_timeout_cb(evutil_socket_t fd, short events, void *arg)
{
	struct up_request	*ur = arg;
	struct up_ask		 a;
	struct jrpc		 m;
	const char		*why;
	char			 msg[256];

	snprintf(msg, sizeof msg, "the client did not answer %s within %u s",
	    ur->method, ur->up->sc->server_request_timeout);
	log_warnx("upstream %s: session %.8s: %s", ur->up->sc->name,
	    ur->session->id, msg);
	route_up_cancel_client(ur, "timed out at the gateway");
	if (jrpc_scan(ur->text, ur->len, &m, &why) == 0) {
		a.up = ur->up;
		a.session = ur->session;
		a.stream = ur->stream != NULL ? ur->stream :
		    session_get_stream(ur->session);
		a.session_no = ur->session->no;
		a.tag = 0;
		a.ref = ur->ref;
		a.m = &m;
		route_up_strategies(&a, ur->strategy + 1, msg,
		    MCP_REQUEST_TIMEOUT);
	} else {
		metrics_up_request(ur->up, ur->method_id, MUPO_TIMEOUT);
		route_up_error(ur->up, ur->session->no, ur->ref,
		    MCP_REQUEST_TIMEOUT, msg);
	}
	route_up_request_free(ur);
}

/* A request from an upstream, for the client that caused it. */
void
route_up_request(struct upstream *up, const struct frame_hdr *hdr,
    struct evbuffer *in)
{
	struct evbuffer		*payload;
	struct up_ask		 a;
	struct jrpc		 m;
	const char		*why;
	int64_t			 ref;

	payload = route_payload(hdr, in);
	if (jrpc_scan((const char *)evbuffer_pullup(payload, -1),
	    evbuffer_get_length(payload), &m, &why) != 0 ||
	    m.kind != JRPC_REQUEST || jscan_int64(m.p, m.id, &ref) != 0 ||
	    ref <= 0 || ref > UINT32_MAX) {
		log_warnx("upstream %s: bad request from worker",
		    up->sc->name);
		evbuffer_free(payload);
		return;
	}
	a.up = up;
	a.stream = route_target(up, hdr, &a.session);
	a.session_no = hdr->session;
	a.tag = hdr->tag;
	a.ref = (uint32_t)ref;
	a.m = &m;
	route_up_strategies(&a, 0, NULL, 0);
	evbuffer_free(payload);
}
