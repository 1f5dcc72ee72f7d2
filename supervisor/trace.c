/* SPDX-License-Identifier: ISC */
/*
 * Traces (tracing = { ... }): a SERVER span per client request and a
 * CLIENT span per call to an upstream, continuing the W3C trace context
 * the client sent (params._meta, or the HTTP request's headers, or the
 * WebSocket upgrade's) or starting a trace when sampled, and passing the
 * call's context on in params._meta (the worker copies it into the HTTP
 * headers of http and sse upstreams).  Spans are written here as OTLP
 * JSON span objects into a batch, and batches go to mcp-otel over its
 * channel; the supervisor never talks to the collector.  What waits is
 * bounded by queue spans: beyond that a span is dropped and counted.
 * The record of a request (struct trace) lives in its struct reqobs and
 * ends with it (obs_end); with tracing off nothing is allocated.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "http_parse.h"
#include "iochan.h"
#include "log.h"
#include "prom.h"
#include "redact.h"
#include "supervisor.h"
#include "traceparent.h"
#include "xmalloc.h"

#define OTEL_FIRST_DELAY	1	/* seconds of backoff, doubling */
#define OTEL_MAX_DELAY		60
#define OTEL_HEALTHY_MS		60000
#define OTEL_START_TIMEOUT	30
#define OTEL_FRAME_MAX		4096	/* what mcp-otel sends us */
#define TRACE_FLUSH_MS		500	/* a partial batch waits this long */
#define TRACE_ID_MAX		64	/* jsonrpc.request.id kept */

const char		*otel_worker_path;

/* One request's spans; owned by its struct reqobs. */
struct trace {
	struct tracectx	 ctx;		/* the trace; our SERVER span */
	uint8_t		 parent[8];	/* the client's span, or zeros */
	uint8_t		 call[8];	/* our CLIENT span, or zeros */
	int		 sampled;	/* spans are exported */
	int64_t		 start_ns;	/* wall clock at t0 */
	int64_t		 call_us;	/* monotonic: the call began, or 0 */
	uint8_t		 method_id;	/* enum mcp_method */
	uint8_t		 transport;	/* enum obs_transport */
	char		*tracestate;	/* owned, or NULL */
	char		 method[48];
	char		 name[160];	/* tool, prompt or URI, or "" */
	char		 session[9];	/* the first 8 of its id, as logged */
	char		 reqid[TRACE_ID_MAX];
	char		 upstream[64];	/* where the call went, or "" */
};

/* A context from headers, kept by a session (trace_in, session.c). */
struct trace_in {
	struct tracectx	 ctx;
	char		*tracestate;	/* owned, or NULL */
};

static struct {
	struct proc	 proc;
	int		 inited;	/* proc is set up */
	int		 ready;		/* it said so */
	uint64_t	 seen[3];	/* its counts since it started */
} ex;

static struct evbuffer	*batch;		/* spans "{...},{...}" */
static unsigned int	 nbatch;	/* spans in it */
static uint64_t		 nsent;		/* spans handed to mcp-otel ... */
static uint64_t		 nacked;	/* ... that it has counted */
static uint64_t		 exported, failed, dropped;
static struct event	*flush_timer;

static void	otel_spawn(void *);
static json_t	*otel_config(void *);
static int	otel_frame(void *, const struct frame_hdr *,
		    struct evbuffer *);
static void	otel_lost(void *);
static void	otel_start_timeout(void *);
static void	otel_exited(void *, int, const char *, enum proc_fate);

/* The exporter (mcp-otel) as proc.c sees it. */
static const struct proc_kind otel_kind = {
	.what = "otel",
	.start = otel_spawn,
	.config = otel_config,
	.frame = otel_frame,
	.lost = otel_lost,
	.start_timeout = otel_start_timeout,
	.exited = otel_exited,
};

/* Wall clock nanoseconds. */
static int64_t
wall_ns(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ((int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec);
}

/* n random bytes from a pool refilled 512 at a time: one getrandom(2)
 * per 21 traced calls rather than three per call. */
static void
random_bytes(void *out, size_t n)
{
	static uint8_t	pool[512];
	static size_t	left;

	if (n > left) {
		fill_random(pool, sizeof pool);
		left = sizeof pool;
	}
	memcpy(out, pool + sizeof pool - left, n);
	left -= n;
}

/* n random bytes, not all zero (an all-zero id is invalid). */
static void
random_id(uint8_t *p, size_t n)
{
	size_t	i;

	do {
		random_bytes(p, n);
		for (i = 0; i < n && p[i] == 0; i++)
			;
	} while (i == n);
}

/* Is a new trace sampled, at ratio? */
static int
trace_sample(double ratio)
{
	uint64_t	r;

	if (ratio >= 1.0)
		return (1);
	if (ratio <= 0.0)
		return (0);
	random_bytes(&r, sizeof r);
	return ((double)(r >> 11) < ratio * 9007199254740992.0);
}

/* Read a traceparent (and tracestate) from an HTTP head; 0 or -1. */
static int
trace_from_head(const struct http_head *head, struct tracectx *ctx,
    const char **ts, size_t *tslen)
{
	const struct http_header	*h;

	*ts = NULL;
	*tslen = 0;
	if ((h = http_header(head, "traceparent")) == NULL ||
	    tp_parse(h->value, h->valuelen, ctx) != 0)
		return (-1);
	if ((h = http_header(head, "tracestate")) != NULL &&
	    ts_valid(h->value, h->valuelen)) {
		*ts = h->value;
		*tslen = h->valuelen;
	}
	return (0);
}

void
trace_http(struct session *s, const struct http_head *head)
{
	struct tracectx	 ctx;
	const char	*ts;
	size_t		 tslen;

	if (conf->tracing == NULL && s->trace_in == NULL)
		return;
	trace_session_end(s);
	if (conf->tracing == NULL || trace_from_head(head, &ctx, &ts,
	    &tslen) != 0)
		return;
	s->trace_in = xcalloc(1, sizeof *s->trace_in);
	s->trace_in->ctx = ctx;
	if (ts != NULL && tslen > 0)
		s->trace_in->tracestate = xstrndup(ts, tslen);
}

void
trace_session_end(struct session *s)
{
	if (s->trace_in == NULL)
		return;
	free(s->trace_in->tracestate);
	free(s->trace_in);
	s->trace_in = NULL;
}

void
trace_begin(struct reqobs *o, struct session *s, const struct jrpc *m)
{
	struct trace	*t;
	struct tracectx	 in;
	char		 ts[TS_MAX + 1], id[512];
	const char	*tsp = NULL;
	ssize_t		 n;
	int		 remote = 0;

	if (conf->tracing == NULL)
		return;
	if (tp_from_meta(m, &in, ts) == 0) {
		remote = 1;
		tsp = ts[0] != '\0' ? ts : NULL;
	} else if (s->trace_in != NULL) {
		remote = 1;
		in = s->trace_in->ctx;
		tsp = s->trace_in->tracestate;
	}
	/* Parent-based: a sampled parent is sampled, an unsampled not. */
	if (!remote && !trace_sample(conf->tracing->sample))
		return;
	t = xcalloc(1, sizeof *t);
	if (remote) {
		memcpy(t->ctx.trace_id, in.trace_id, sizeof t->ctx.trace_id);
		memcpy(t->parent, in.span_id, sizeof t->parent);
		/* Only the sampled flag is ours to pass on: the other
		 * bits are reserved (W3C Trace Context, version 00). */
		t->ctx.flags = in.flags & TP_SAMPLED;
		t->sampled = (in.flags & TP_SAMPLED) != 0;
		if (tsp != NULL)
			t->tracestate = xstrdup(tsp);
	} else {
		random_id(t->ctx.trace_id, sizeof t->ctx.trace_id);
		t->ctx.flags = TP_SAMPLED;
		t->sampled = 1;
	}
	random_id(t->ctx.span_id, sizeof t->ctx.span_id);
	t->start_ns = wall_ns();
	t->method_id = (uint8_t)m->method_id;
	t->transport = s->transport;
	access_log_clean(t->method, sizeof t->method, m->method_name,
	    strlen(m->method_name));
	snprintf(t->session, sizeof t->session, "%.8s", s->id);
	/* The id's value: a string's text, not its JSON. */
	if (m->id.len > 0 && jscan_type(m->p, m->id) == JT_STRING &&
	    (n = jscan_string(m->p, m->id, id, sizeof id)) >= 0)
		access_log_clean(t->reqid, sizeof t->reqid, id, (size_t)n);
	else if (m->id.len > 0)
		access_log_clean(t->reqid, sizeof t->reqid, m->p + m->id.off,
		    m->id.len);
	o->trace = t;
}

void
trace_name(struct trace *t, const char *name, size_t len)
{
	access_log_clean(t->name, sizeof t->name, name, len);
}

/*
 * The text that carries the call's context in params._meta: an edit of
 * m that replaces _meta.traceparent's value, or inserts it (with the
 * tracestate) into _meta, or _meta into params, or params into the
 * message.  0 with *e set (its text in out), or -1: it cannot be
 * carried (a key twice, params or _meta not an object).
 */
static int
trace_edit(const struct jrpc *m, const struct trace *t, struct evbuffer *out,
    struct jedit *e)
{
	static const char *const tpk[] = { "_meta", "traceparent", NULL };
	static const char *const tsk[] = { "_meta", "tracestate", NULL };
	struct tracectx	 call;
	struct jspan	 at, key, val;
	struct jiter	 it;
	char		 tp[TP_LEN + 1];
	int		 r, nonempty, ts, into_meta;

	call = t->ctx;
	memcpy(call.span_id, t->call, sizeof call.span_id);
	tp_format(&call, tp);
	if (m->params.len == 0) {
		/* No params: add them before the message's last brace. */
		e->at.off = m->msg.off + m->msg.len - 1;
		e->at.len = 0;
		evbuffer_add_printf(out, ",\"params\":{\"_meta\":{"
		    "\"traceparent\":\"%s\"", tp);
		if (t->tracestate != NULL) {
			evbuffer_add_printf(out, ",\"tracestate\":");
			jscan_add_string(out, t->tracestate,
			    strlen(t->tracestate));
		}
		evbuffer_add_printf(out, "}}");
		return (0);
	}
	if (jscan_type(m->p, m->params) != JT_OBJECT)
		return (-1);
	if ((r = jscan_path_unique(m->p, m->params, tpk, &at)) == 0) {
		/* Ours replaces the client's (it is our call's parent). */
		e->at = at;
		evbuffer_add_printf(out, "\"%s\"", tp);
		return (0);
	}
	if (r == -2 || (r = jscan_member_unique(m->p, m->params, "_meta",
	    &at)) == -2)
		return (-1);
	into_meta = r == 0;
	if (!into_meta)
		at = m->params;
	if (jscan_object(m->p, at, &it) != 0)
		return (-1);
	nonempty = jscan_next_member(&it, &key, &val);
	if (into_meta) {
		/* A tracestate the client put in _meta stays. */
		if ((r = jscan_path_unique(m->p, m->params, tsk, &val)) == -2)
			return (-1);
		ts = r != 0;
	} else {
		evbuffer_add_printf(out, "\"_meta\":{");
		ts = 1;
	}
	e->at.off = at.off + 1;
	e->at.len = 0;
	evbuffer_add_printf(out, "\"traceparent\":\"%s\"", tp);
	if (ts && t->tracestate != NULL) {
		evbuffer_add_printf(out, ",\"tracestate\":");
		jscan_add_string(out, t->tracestate, strlen(t->tracestate));
	}
	evbuffer_add_printf(out, "%s%s", into_meta ? "" : "}",
	    nonempty ? "," : "");
	return (0);
}

void
trace_splice(struct evbuffer *buf, struct req *r, struct upstream *up,
    const struct jedit *edits, size_t nedits)
{
	struct trace	*t = r->obs.trace;
	struct evbuffer	*text;
	struct jedit	*all, mine;
	size_t		 i, j;

	if (t == NULL) {
		jscan_splice(buf, r->m->p, r->m->n, edits, nedits);
		return;
	}
	/* A call's span: a new one if the request is sent again. */
	random_id(t->call, sizeof t->call);
	t->call_us = now_us();
	snprintf(t->upstream, sizeof t->upstream, "%s", up->sc->name);
	text = evbuffer_new();
	if (trace_edit(r->m, t, text, &mine) != 0) {
		evbuffer_free(text);
		jscan_splice(buf, r->m->p, r->m->n, edits, nedits);
		return;
	}
	mine.len = evbuffer_get_length(text);
	mine.text = (const char *)evbuffer_pullup(text, -1);
	all = xcalloc(nedits + 1, sizeof *all);
	for (i = j = 0; i < nedits; i++) {
		if (j == i && mine.at.off <= edits[i].at.off)
			all[j++] = mine;
		all[j++] = edits[i];
	}
	if (j == nedits)
		all[j++] = mine;
	jscan_splice(buf, r->m->p, r->m->n, all, j);
	free(all);
	evbuffer_free(text);
}

/* Add an attribute with a string value to a span's list. */
static void
attr_str(struct evbuffer *b, int *first, const char *key, const char *v)
{
	static const char	head[] = ",{\"key\":\"";
	static const char	mid[] = "\",\"value\":{\"stringValue\":";

	/* Keys are ours: plain text.  No printf: a span has a dozen. */
	if (*first)
		evbuffer_add(b, head + 1, sizeof head - 2);
	else
		evbuffer_add(b, head, sizeof head - 1);
	evbuffer_add(b, key, strlen(key));
	evbuffer_add(b, mid, sizeof mid - 1);
	jscan_add_string(b, v, strlen(v));
	evbuffer_add(b, "}}", 2);
	*first = 0;
}

/* The same with an integer (OTLP's JSON writes int64 as a string). */
static void
attr_int(struct evbuffer *b, int *first, const char *key, long long v)
{
	evbuffer_add_printf(b, "%s{\"key\":\"%s\",\"value\":{\"intValue\":"
	    "\"%lld\"}}", *first ? "" : ",", key, v);
	*first = 0;
}

/* The attributes both spans have: the method, and what it names. */
static void
attr_common(struct evbuffer *b, int *first, const struct trace *t)
{
	attr_str(b, first, "mcp.method.name", t->method);
	if (t->name[0] == '\0')
		return;
	switch (t->method_id) {
	case MCPM_TOOLS_CALL:
		attr_str(b, first, "gen_ai.tool.name", t->name);
		attr_str(b, first, "gen_ai.operation.name", "execute_tool");
		break;
	case MCPM_PROMPTS_GET:
		attr_str(b, first, "gen_ai.prompt.name", t->name);
		break;
	default:
		attr_str(b, first, "mcp.resource.uri", t->name);
		break;
	}
}

/* Append one span to the batch. */
static void
span_write(const struct trace *t, int client, int64_t start, int64_t end,
    int outcome, int code)
{
	const uint8_t	*id = client ? t->call : t->ctx.span_id;
	const uint8_t	*parent = client ? t->ctx.span_id : t->parent;
	struct evbuffer	*b = batch;
	char		 hex[33], ecode[16];
	int		 first = 1, i, root = 1;

	for (i = 0; i < 8; i++)
		if (parent[i] != 0)
			root = 0;
	tp_hex(t->ctx.trace_id, 16, hex);
	evbuffer_add_printf(b, "%s{\"traceId\":\"%s\"", nbatch > 0 ? "," : "",
	    hex);
	tp_hex(id, 8, hex);
	evbuffer_add_printf(b, ",\"spanId\":\"%s\"", hex);
	if (!root) {
		tp_hex(parent, 8, hex);
		evbuffer_add_printf(b, ",\"parentSpanId\":\"%s\"", hex);
	}
	if (t->tracestate != NULL) {
		evbuffer_add_printf(b, ",\"traceState\":");
		jscan_add_string(b, t->tracestate, strlen(t->tracestate));
	}
	evbuffer_add_printf(b, ",\"name\":");
	if (t->name[0] != '\0' && (t->method_id == MCPM_TOOLS_CALL ||
	    t->method_id == MCPM_PROMPTS_GET)) {
		evbuffer_add(b, "\"", 1);
		jscan_add_escaped(b, t->method, strlen(t->method));
		evbuffer_add(b, " ", 1);
		jscan_add_escaped(b, t->name, strlen(t->name));
		evbuffer_add(b, "\"", 1);
	} else
		jscan_add_string(b, t->method, strlen(t->method));
	evbuffer_add_printf(b, ",\"kind\":%d,\"startTimeUnixNano\":\"%lld\","
	    "\"endTimeUnixNano\":\"%lld\",\"attributes\":[", client ? 3 : 2,
	    (long long)start, (long long)end);
	attr_common(b, &first, t);
	if (!client) {
		attr_str(b, &first, "mcp.session.id", t->session);
		if (t->reqid[0] != '\0')
			attr_str(b, &first, "jsonrpc.request.id", t->reqid);
		attr_str(b, &first, "network.transport", "tcp");
		attr_str(b, &first, "mcp_supervisor.transport",
		    obs_transport_names[t->transport]);
		attr_str(b, &first, "mcp_supervisor.outcome",
		    obs_outcome_names[outcome]);
	}
	if (t->upstream[0] != '\0')
		attr_str(b, &first, "mcp_supervisor.upstream", t->upstream);
	if (outcome != OBS_OK) {
		if (code != 0) {
			snprintf(ecode, sizeof ecode, "%d", code);
			attr_str(b, &first, "error.type", ecode);
			attr_int(b, &first, "rpc.jsonrpc.error_code", code);
		} else
			attr_str(b, &first, "error.type",
			    obs_outcome_names[outcome]);
	}
	evbuffer_add_printf(b, "],\"status\":{\"code\":%d}}",
	    outcome == OBS_OK ? 0 : 2);
	nbatch++;
}

/* Spans waiting: in the batch, and at mcp-otel not yet counted. */
static uint64_t
trace_waiting(void)
{
	return (nbatch + (nsent - nacked));
}

/* Hand the batch to mcp-otel, if it can take it. */
static void
trace_flush(void)
{
	if (nbatch == 0 || !ex.ready || ex.proc.ch == NULL)
		return;
	evbuffer_add(batch, "]}", 2);
	evbuffer_prepend(batch, "{\"spans\":[", 10);
	frame_add_buffer(iochan_output(ex.proc.ch), MSG_OTEL_SPANS, 0, 0,
	    batch);
	nsent += nbatch;
	nbatch = 0;
	evbuffer_drain(batch, evbuffer_get_length(batch));
}

static void
trace_flush_cb(evutil_socket_t fd, short events, void *arg)
{
	trace_flush();
}

void
trace_end(struct reqobs *o, int outcome, int code)
{
	struct trace	*t = o->trace;
	struct timeval	 tv;
	int64_t		 now = now_us(), end;
	int		 n;

	o->trace = NULL;
	if (t->sampled && conf->tracing != NULL) {
		n = t->call_us != 0 ? 2 : 1;
		if (nbatch >= conf->tracing->batch)
			trace_flush();
		if (nbatch >= conf->tracing->batch ||
		    trace_waiting() + (uint64_t)n > conf->tracing->queue) {
			dropped += (uint64_t)n;
		} else {
			if (batch == NULL)
				batch = evbuffer_new();
			end = t->start_ns + (now - o->t0) * 1000;
			span_write(t, 0, t->start_ns, end, outcome, code);
			if (t->call_us != 0)
				span_write(t, 1, t->start_ns + (t->call_us -
				    o->t0) * 1000, end, outcome, code);
			if (nbatch >= conf->tracing->batch)
				trace_flush();
			else if (flush_timer != NULL &&
			    !evtimer_pending(flush_timer, NULL)) {
				tv.tv_sec = 0;
				tv.tv_usec = TRACE_FLUSH_MS * 1000;
				evtimer_add(flush_timer, &tv);
			}
		}
	}
	free(t->tracestate);
	free(t);
}

const char *
trace_batch_text(size_t *len)
{
	*len = batch != NULL ? evbuffer_get_length(batch) : 0;
	return (*len > 0 ? (const char *)evbuffer_pullup(batch, -1) : "");
}

void
trace_batch_clear(void)
{
	if (batch != NULL)
		evbuffer_drain(batch, evbuffer_get_length(batch));
	nbatch = 0;
}

/* The exporter was not ready in time: kill it, and it is restarted. */
static void
otel_start_timeout(void *arg)
{
	if (ex.proc.pid <= 0)
		return;
	log_warnx("otel: exporter %ld did not start, killing it",
	    (long)ex.proc.pid);
	proc_error(&ex.proc, "the exporter did not start");
	kill(ex.proc.pid, SIGKILL);
	proc_lost(&ex.proc, "killed");
}

/* Its counts: what it exported, failed to, and dropped, so far. */
static void
otel_stats(json_t *msg)
{
	static const char *const keys[3] = { "exported", "failed",
	    "dropped" };
	uint64_t	*to[3] = { &exported, &failed, &dropped };
	json_t		*v;
	uint64_t	 n;
	int		 i;

	for (i = 0; i < 3; i++) {
		v = json_object_get(msg, keys[i]);
		if (!json_is_integer(v) || json_integer_value(v) < 0)
			continue;
		n = (uint64_t)json_integer_value(v);
		if (n < ex.seen[i] || n - ex.seen[i] > nsent - nacked)
			continue;
		*to[i] += n - ex.seen[i];
		nacked += n - ex.seen[i];
		ex.seen[i] = n;
	}
}

static int
otel_frame(void *arg, const struct frame_hdr *hdr, struct evbuffer *in)
{
	json_t		*msg;
	const char	*why, *state, *error;

	if (hdr->type != MSG_HELLO && hdr->type != MSG_STATUS &&
	    hdr->type != MSG_OTEL_STATS) {
		log_warnx("otel: unexpected %s frame",
		    msg_type_name(hdr->type));
		return (-1);
	}
	if ((msg = frame_take_json(in, hdr, &why)) == NULL) {
		log_warnx("otel: %s frame: %s", msg_type_name(hdr->type), why);
		return (-1);
	}
	if (hdr->type == MSG_OTEL_STATS)
		otel_stats(msg);
	else if (hdr->type == MSG_STATUS &&
	    json_unpack(msg, "{s:s}", "state", &state) == 0) {
		if (json_unpack(msg, "{s:s}", "error", &error) == 0) {
			proc_error(&ex.proc, "%s", error);
			log_warnx("otel: %s", error);
		}
		if (strcmp(state, "ready") == 0 && !ex.ready) {
			ex.ready = 1;
			proc_ready(&ex.proc);
			log_info("otel: exporter ready");
			trace_flush();
		}
	}
	json_decref(msg);
	return (0);
}

/* The exporter is gone: what it held is lost, and counted. */
static void
otel_lost(void *arg)
{
	dropped += nsent - nacked;
	nacked = nsent;
	ex.ready = 0;
	memset(ex.seen, 0, sizeof ex.seen);
}

static void
otel_exited(void *arg, int status, const char *how, enum proc_fate fate)
{
	ex.ready = 0;
	switch (fate) {
	case PROC_REMOVED:
	case PROC_RESPAWNED:
	case PROC_STOPPED:
		break;
	case PROC_REFUSED:
	case PROC_GAVE_UP:
		log_warnx("otel: exporter %s: configuration refused, not "
		    "restarting (%s)", how, ex.proc.last_error != NULL ?
		    ex.proc.last_error : "");
		break;
	case PROC_BACKOFF:
		proc_error(&ex.proc, "exporter %s", how);
		log_warnx("otel: exporter %s; restarting in %u s", how,
		    ex.proc.backoff);
		break;
	}
}

static void
otel_spawn(void *arg)
{
	char	*argv[6];
	int	 argc = 0;

	argv[argc++] = (char *)"mcp-otel";
	if (log_getforeground())
		argv[argc++] = (char *)"-d";
	if (log_getverbose() > 0)
		argv[argc++] = (char *)"-v";
	argv[argc++] = (char *)"otel";
	argv[argc] = NULL;
	ex.ready = 0;
	memset(ex.seen, 0, sizeof ex.seen);
	proc_spawn(&ex.proc, otel_worker_path, argv, 1);
}

/* The exporter's CONFIG: where, with what headers (secrets unexpanded:
 * ${file:} is read there; ${env:} here, as its environment has none). */
static json_t *
otel_config(void *arg)
{
	const struct trace_conf	*tc = conf->tracing;
	json_t			*cfg, *h;

	if (tc == NULL)
		return (json_object());
	h = tc->headers != NULL ? spawn_expand_env(tc->headers) :
	    json_array();
	cfg = json_pack("{s:s, s:s, s:o, s:i, s:i}", "endpoint",
	    tc->endpoint, "service_name", tc->service_name, "headers", h,
	    "timeout", (int)tc->timeout, "queue", (int)tc->queue);
	json_object_set_new(cfg, "version", json_string(PACKAGE_VERSION));
	if (conf->user != NULL)
		json_object_set_new(cfg, "user", json_string(conf->user));
	return (cfg);
}

/* Start the exporter for the running configuration. */
static void
otel_start(void)
{
	struct proc_policy	pp;

	if (!ex.inited) {
		proc_init(&ex.proc, &otel_kind, &ex);
		ex.inited = 1;
	}
	memset(&pp, 0, sizeof pp);
	pp.first_delay = OTEL_FIRST_DELAY;
	pp.max_delay = OTEL_MAX_DELAY;
	pp.healthy_ms = OTEL_HEALTHY_MS;
	pp.start_timeout = OTEL_START_TIMEOUT;
	pp.frame_max = OTEL_FRAME_MAX;
	proc_configure(&ex.proc, "otel", &pp);
	proc_reset(&ex.proc);
	if (ex.proc.pid > 0) {
		/* What the batch holds goes to the old one, which posts it
		 * as it stops; later spans wait for the new one (the old
		 * one drops what comes once it is stopping). */
		trace_flush();
		ex.ready = 0;
		proc_restart(&ex.proc);
	} else
		otel_spawn(&ex);
}

void
trace_init(void)
{
	if (flush_timer == NULL)
		flush_timer = evtimer_new(base, trace_flush_cb, NULL);
	if (conf->tracing != NULL && otel_worker_path != NULL)
		otel_start();
}

void
trace_apply(const struct trace_conf *old)
{
	char	shown[512];
	size_t	i;
	int	files = 0;

	if (conf->tracing != NULL && conf->tracing->headers != NULL)
		for (i = 0; conf->tracing->headers[i] != NULL; i++)
			files |= strstr(conf->tracing->headers[i],
			    "${file:") != NULL;
	/* The exporter reads ${file:} when it starts: a rotated key is read
	 * again by starting it again. */
	if (conf_trace_equal(old, conf->tracing) && !files)
		return;
	if (conf->tracing == NULL) {
		log_info("otel: tracing is off");
		trace_stop();
		dropped += nbatch;
		trace_batch_clear();
		return;
	}
	log_info("otel: tracing to %s, sampling %g", url_redact(
	    conf->tracing->endpoint, shown, sizeof shown),
	    conf->tracing->sample);
	if (otel_worker_path != NULL)
		otel_start();
}

void
trace_stop(void)
{
	/* What the batch holds goes before the exporter is told to stop
	 * (the sessions' ends have just added theirs). */
	trace_flush();
	if (ex.inited)
		proc_stop(&ex.proc);
	ex.ready = 0;
}

void
trace_metrics(struct evbuffer *b)
{
	if (conf->tracing == NULL && exported + failed + dropped == 0)
		return;
	prom_header(b, "mcp_supervisor_trace_spans_total", "counter",
	    "Spans exported to the collector, refused by it or not "
	    "delivered, and dropped (the queue full, or the exporter gone).");
	prom_sample_u64(b, "mcp_supervisor_trace_spans_total",
	    "outcome=\"exported\"", exported);
	prom_sample_u64(b, "mcp_supervisor_trace_spans_total",
	    "outcome=\"failed\"", failed);
	prom_sample_u64(b, "mcp_supervisor_trace_spans_total",
	    "outcome=\"dropped\"", dropped);
	prom_header(b, "mcp_supervisor_trace_spans_queued", "gauge",
	    "Spans waiting for the exporter or at it.");
	prom_sample_u64(b, "mcp_supervisor_trace_spans_queued", "",
	    trace_waiting());
	prom_header(b, "mcp_supervisor_trace_exporter_up", "gauge",
	    "Whether the exporter (mcp-otel) is running and ready.");
	prom_sample_u64(b, "mcp_supervisor_trace_exporter_up", "",
	    ex.ready ? 1 : 0);
}
