/* SPDX-License-Identifier: ISC */
/*
 * loadgen -- a load generator for MCP servers over Streamable HTTP or
 * WebSocket.
 *
 * Each session does the MCP handshake (initialize, then
 * notifications/initialized) and then one of:
 *
 *   calls    tools/call in a closed loop (the next call when the previous
 *            one is answered) or, with --rate, in an open loop at a fixed
 *            total rate (latency counted from the time the call was due,
 *            so a slow server is not excused by sending less);
 *   streams  (HTTP only) a GET that opens the session's standalone event
 *            stream, held open until loadgen is stopped (SIGTERM, SIGINT)
 *            or --hold runs out.
 *
 * The URL's scheme says how the server is reached:
 *
 *   http://  Streamable HTTP (loadgen_http.c): each session is one
 *            HTTP/1.1 keep-alive connection; initialize captures
 *            Mcp-Session-Id, notifications/initialized must be answered
 *            202, each call is a POST, and the session ends with DELETE.
 *            Answers may be application/json or text/event-stream; an
 *            event stream is parsed as it arrives (events in pieces,
 *            CR/LF/CRLF line ends, the priming event with empty data
 *            first), and the answer is the event whose JSON has the
 *            request's id.
 *   ws://    WebSocket (loadgen_ws.c): each session is one connection,
 *            upgraded with GET and subprotocol mcp (RFC 6455, version 13;
 *            Sec-WebSocket-Accept and the subprotocol are checked), then
 *            one JSON-RPC message per text frame both ways, client frames
 *            masked; pings are answered, other messages from the server
 *            skipped, and the session ends with a close handshake.
 *   --stdio  going direct (loadgen_stdio.c): the server is loadgen's
 *            child, all sessions' calls over its one pipe.
 *
 * Whatever the transport, the calls, their schedule, the checks and the
 * output are the same (this file); the histogram is in loadgen_hist.c.
 *
 * Every answer is checked: the right id and a result (or, with
 * --expect-error, an error).  Latency goes into a log-linear histogram
 * with microsecond resolution; calls answered during the warm-up are not
 * counted.
 *
 * Output: one JSON line on stdout, one human line on stderr.  The exit
 * status is 0 when every call was answered as expected, 1 otherwise, and 2
 * for a usage error.
 *
 * Build: cc -O2 -std=c11 -Wall -Wextra -o loadgen loadgen.c loadgen_http.c
 *        loadgen_ws.c loadgen_stdio.c loadgen_hist.c -levent -ljansson -lcrypto
 */
#define _GNU_SOURCE

#include <sys/types.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/util.h>
#include <jansson.h>

#include "loadgen.h"

/* ------------------------------------------------------------------ */
/* Time. */

uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t
unix_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000;
}

struct timeval
tv_of_ns(uint64_t ns)
{
	struct timeval tv;

	tv.tv_sec = (time_t)(ns / 1000000000u);
	tv.tv_usec = (suseconds_t)(ns % 1000000000u / 1000);
	return tv;
}

/* ------------------------------------------------------------------ */
/* Options and global state. */

struct options opt = {
	.mode = MODE_CALLS,
	.sessions = 1,
	.duration = 10,
	.warmup = 2,
	.timeout = 30,
	.parallel = 64,
	.tool = "demo__echo",
	.args = "{\"text\":\"hello\"}",
	.label = "",
	.protocol = "2025-11-25",
	.probes = 8,
	.nsources = 1,
	.notify = 10,
	.idle = 20,
	.gap = 100,
	.trigger = "demo__toggle_tool",
};
struct stats		 st;
struct event_base	*base;
struct session		*sessions;

const struct transport	*tr;	/* how every session is reached */
static struct hist	 hist;
static FILE		*record;	/* --record */
static char		*call_prefix;	/* request body up to the id */
static char		*call_suffix;	/* after the id */

void
error_note(const char *fmt, ...)
{
	va_list ap;

	st.errors++;
	if (st.t_measure != 0 && now_ns() >= st.t_measure)
		st.errors_counted++;
	if (st.first_error[0] != '\0')
		return;
	va_start(ap, fmt);
	vsnprintf(st.first_error, sizeof st.first_error, fmt, ap);
	va_end(ap);
	if (!opt.quiet)
		fprintf(stderr, "loadgen: %s\n", st.first_error);
}

/* ------------------------------------------------------------------ */
/* A growable byte buffer. */

int
buf_add(struct buf *b, const char *p, size_t n)
{
	size_t cap;
	char *q;

	if (b->len + n + 1 > b->cap) {
		cap = b->cap ? b->cap : 256;
		while (cap < b->len + n + 1)
			cap *= 2;
		if ((q = realloc(b->p, cap)) == NULL)
			return -1;
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
	b->p[b->len] = '\0';
	return 0;
}

void
buf_free(struct buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

/* Answers. */

/* Check an answer to the request in flight; 1 if it was the one. */
int
check_answer(struct session *s, json_t *msg, size_t textlen)
{
	json_t *id, *result, *err;
	const char *m;

	if (!json_is_object(msg))
		return 0;
	id = json_object_get(msg, "id");
	if (json_object_get(msg, "method") != NULL)
		return 0;	/* a request or notification from the server */
	result = json_object_get(msg, "result");
	err = json_object_get(msg, "error");
	if (result == NULL && err == NULL)
		return 0;
	if (!json_is_integer(id) || json_integer_value(id) != s->want_id) {
		error_note("session %u: answer with wrong id (want %" PRId64
		    ")", s->idx, s->want_id);
		return -1;
	}
	st.answer_bytes = textlen;
	st.last_answer_unix_us = unix_us();
	if (s->phase == PH_CALL && opt.expect_error) {
		if (err == NULL && !json_is_true(json_object_get(result,
		    "isError"))) {
			error_note("session %u: a result where an error was "
			    "expected", s->idx);
			return -1;
		}
		m = json_string_value(json_object_get(err, "message"));
		if (st.first_error[0] == '\0')
			snprintf(st.first_error, sizeof st.first_error,
			    "expected error: %s", m ? m : "(isError)");
		return 1;
	}
	/* Refused by a rate limit (--limited): answered, not counted. */
	if (err != NULL && opt.limited && s->phase == PH_CALL &&
	    json_is_string(json_object_get(json_object_get(err, "data"),
	    "reason")) && strcmp(json_string_value(json_object_get(
	    json_object_get(err, "data"), "reason")), "rate_limited") == 0)
		return 2;
	if (err != NULL) {
		m = json_string_value(json_object_get(err, "message"));
		error_note("session %u: error answer: %s", s->idx,
		    m ? m : "(no message)");
		return -1;
	}
	if (!json_is_object(result)) {
		error_note("session %u: result is not an object", s->idx);
		return -1;
	}
	if (json_is_true(json_object_get(result, "isError"))) {
		error_note("session %u: tool result has isError", s->idx);
		return -1;
	}
	if (opt.modern && s->phase == PH_CALL && !json_is_string(
	    json_object_get(result, "resultType"))) {
		error_note("session %u: a 2026-07-28 result without "
		    "resultType", s->idx);
		return -1;
	}
	if (s->phase == PH_INIT) {
		m = json_string_value(json_object_get(result,
		    "protocolVersion"));
		if (m == NULL || strlen(m) >= sizeof s->proto) {
			error_note("session %u: initialize result without "
			    "protocolVersion", s->idx);
			return -1;
		}
		snprintf(s->proto, sizeof s->proto, "%s", m);
	}
	return 1;
}

/* A call was refused by a rate limit (--limited): counted apart. */
static void
call_limited(struct session *s)
{
	uint64_t t = now_ns();

	st.answered++;
	if (s->deadline != NULL)
		event_del(s->deadline);
	if (st.t_measure != 0 && t >= st.t_measure && t <= st.t_end)
		st.limited++;
}

/* The answer to a call arrived (or the call failed, ok = 0). */
void
call_answered(struct session *s, int ok)
{
	uint64_t t = now_ns(), rec[2];

	st.answered++;
	if (s->deadline != NULL)
		event_del(s->deadline);
	if (ok && st.t_measure != 0 && t >= st.t_measure && t <= st.t_end) {
		st.counted++;
		hist_add(&hist, (t - s->t_due + 500) / 1000);
	}
	if (record != NULL) {
		/* Due time and latency, ns, the top bit set for a call that
		 * failed: the scale mode's probe. */
		rec[0] = s->t_due;
		rec[1] = (t - s->t_due) | (ok ? 0 : REC_FAILED);
		fwrite(rec, sizeof rec, 1, record);
	}
}

/*
 * A JSON-RPC message from the server: a JSON body, an event, a text frame.
 * Only the answer awaited is looked at; it is checked, and a call's latency
 * recorded.
 */
void
on_message(struct session *s, const char *text, size_t len)
{
	json_error_t jerr;
	json_t *msg;
	int r;

	if (s->answered)
		return;
	msg = json_loadb(text, len, 0, &jerr);
	if (msg == NULL) {
		error_note("session %u: bad JSON from the server: %s",
		    s->idx, jerr.text);
		return;
	}
	r = check_answer(s, msg, len);
	json_decref(msg);
	if (r == 0)
		return;
	s->answered = 1;
	s->answer_ok = r > 0;
	if (s->phase == PH_CALL && r == 2)
		call_limited(s);
	else if (s->phase == PH_CALL)
		call_answered(s, r > 0);
}

/* ------------------------------------------------------------------ */
/* The session's life. */

static void	maybe_finish(void);

/* Drop the session's connection, if it has one. */
static void
session_close_conn(struct session *s)
{
	tr->close(s);
}

/* The connection is up. */
void
session_connected(struct session *s)
{
	int one = 1;

	setsockopt(bufferevent_getfd(s->bev), IPPROTO_TCP, TCP_NODELAY, &one,
	    sizeof one);
	s->connected = 1;
}

void
session_fail(struct session *s, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (s->phase == PH_DEAD || s->phase == PH_CLOSED)
		return;
	if (st.stopping) {
		session_close_conn(s);
		s->phase = PH_DEAD;
		return;
	}
	if (s->phase == PH_DELETE) {
		/* Ending the session is a courtesy: no error. */
		session_close_conn(s);
		s->phase = PH_CLOSED;
		drain_check();
		return;
	}
	error_note("session %u: %s", s->idx, msg);
	if (s->phase == PH_CALL && !s->answered)
		call_answered(s, 0);
	if (s->phase == PH_STREAM)
		st.open_streams--;
	if (s->phase < PH_READY || s->phase == PH_GET) {
		/* Its place in the setup goes to the next session. */
		st.failed++;
		s->phase = PH_DEAD;
		session_close_conn(s);
		on_ready(s);
		return;
	}
	st.failed++;
	s->phase = PH_DEAD;
	session_close_conn(s);
	if (st.draining)
		drain_check();
	else
		maybe_finish();
}

static void
deadline_cb(evutil_socket_t fd, short what, void *arg)
{
	struct session *s = arg;

	(void)fd;
	(void)what;
	session_fail(s, "no answer in %.1f s", opt.timeout);
}

static void
timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct session *s = arg;

	(void)fd;
	(void)what;
	send_call(s);
}

static int
budget_left(void)
{
	return opt.calls == 0 || st.sent < opt.calls;
}

/* Send the session's next call, now or at its open-loop slot. */
void
send_call(struct session *s)
{
	char idtxt[32], *body;
	uint64_t t;
	struct timeval tv;
	size_t n;

	if (s->phase != PH_READY || st.stopping)
		return;
	if (opt.mode == MODE_SCALE && !scale_may_call(s))
		return;
	if (st.draining) {
		tr->end(s);
		drain_check();
		return;
	}
	if (!st.calling)
		return;
	t = now_ns();
	if (t >= st.t_end || !budget_left()) {
		maybe_finish();
		return;
	}
	if (opt.rate > 0) {
		if (s->next_due > t + 20000) {
			tv = tv_of_ns(s->next_due - t);
			evtimer_add(s->timer, &tv);
			return;
		}
		s->t_due = s->next_due;
		s->next_due += s->interval;
	} else
		s->t_due = t;
	s->want_id = s->next_id++;
	if (opt.stdio != NULL)
		s->want_id = s->want_id * (int64_t)opt.sessions + s->idx;
	snprintf(idtxt, sizeof idtxt, "%" PRId64, s->want_id);
	n = strlen(call_prefix) + strlen(idtxt) + strlen(call_suffix);
	if ((body = malloc(n + 1)) == NULL) {
		session_fail(s, "out of memory");
		return;
	}
	snprintf(body, n + 1, "%s%s%s", call_prefix, idtxt, call_suffix);
	s->phase = PH_CALL;
	st.sent++;
	tr->send(s, body, n);
	free(body);
	if (opt.timeout > 0) {
		tv = tv_of_ns((uint64_t)(opt.timeout * 1e9));
		evtimer_add(s->deadline, &tv);
	}
}

/* The initialize request, with the session's next id. */
void
initialize_body(struct session *s, char *body, size_t size)
{
	s->want_id = s->next_id++;
	snprintf(body, size,
	    "{\"jsonrpc\":\"2.0\",\"id\":%" PRId64 ",\"method\":\"initialize\","
	    "\"params\":{\"protocolVersion\":\"%s\",\"capabilities\":{},"
	    "\"clientInfo\":{\"name\":\"mcp-supervisor-loadgen\","
	    "\"version\":\"1.0\"}}}", s->want_id, opt.protocol);
}

void
session_start(struct session *s)
{
	st.started++;
	if (opt.modern) {
		/* 2026-07-28 has no handshake: every request stands alone. */
		s->phase = PH_READY;
		on_ready(s);
		return;
	}
	s->phase = PH_INIT;
	tr->start(s);
}

void
stop_all(void)
{
	unsigned i;

	if (st.stopping)
		return;
	st.stopping = 1;
	for (i = 0; i < opt.sessions; i++)
		session_close_conn(&sessions[i]);
	direct_stop();
	event_base_loopexit(base, NULL);
}

static struct event *drain_ev;

/* Stop once every session is ended. */
void
drain_check(void)
{
	unsigned i;

	if (st.stopping)
		return;
	for (i = 0; i < opt.sessions; i++)
		if (sessions[i].phase == PH_CALL ||
		    sessions[i].phase == PH_DELETE)
			return;
	stop_all();
}

/*
 * The calls are over: let the calls in flight finish (uncounted), then
 * end each session with DELETE, as a client should; give up after
 * DRAIN_SECONDS.
 */
#define DRAIN_SECONDS	5

static void
begin_drain(void)
{
	struct timeval tv = { DRAIN_SECONDS, 0 };
	unsigned i;

	if (st.draining || st.stopping)
		return;
	st.draining = 1;
	st.calling = 0;
	evtimer_add(drain_ev, &tv);
	for (i = 0; i < opt.sessions; i++)
		if (sessions[i].phase == PH_READY) {
			evtimer_del(sessions[i].timer);
			tr->end(&sessions[i]);
		}
	drain_check();
}

static void
maybe_finish(void)
{
	if (st.stopping || opt.mode != MODE_CALLS || !st.calling)
		return;
	if (now_ns() < st.t_end && budget_left() &&
	    st.failed < opt.sessions)
		return;
	begin_drain();
}

static void
end_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	if (opt.mode == MODE_STREAMS)
		stop_all();
	else
		begin_drain();
}

static void
drain_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	stop_all();
}

static struct event *end_ev;

static void
print_streams_ready(void)
{
	json_t *o;
	char *txt;

	o = json_pack("{s:s, s:s, s:I, s:I, s:f, s:I}",
	    "label", opt.label, "event", "streams_open",
	    "sessions", (json_int_t)opt.sessions,
	    "open", (json_int_t)st.open_streams,
	    "setup_s", (double)(now_ns() - st.t_setup) / 1e9,
	    "errors", (json_int_t)st.errors);
	txt = json_dumps(o, JSON_COMPACT);
	printf("%s\n", txt);
	fflush(stdout);
	free(txt);
	json_decref(o);
}

/* A session is through its setup (or failed in it): start another. */
void
on_ready(struct session *s)
{
	unsigned i;
	struct timeval tv;
	uint64_t t;

	if (opt.mode == MODE_SCALE) {
		scale_on_ready(s);
		return;
	}
	if (s->phase == PH_READY && opt.mode == MODE_STREAMS) {
		http_send_get(s);
		return;
	}
	st.ready++;
	if (st.started < opt.sessions)
		session_start(&sessions[st.started]);
	if (st.ready < opt.sessions)
		return;
	/* Every session is set up. */
	if (st.failed == opt.sessions) {
		stop_all();
		return;
	}
	if (opt.mode == MODE_STREAMS) {
		print_streams_ready();
		if (opt.hold > 0) {
			tv = tv_of_ns((uint64_t)(opt.hold * 1e9));
			evtimer_add(end_ev, &tv);
		}
		return;
	}
	t = now_ns();
	st.t_start = t;
	st.t_measure = t + (uint64_t)(opt.warmup * 1e9);
	st.t_end = st.t_measure + (uint64_t)(opt.duration * 1e9);
	if (opt.calls > 0 && opt.duration <= 0)
		st.t_end = UINT64_MAX;
	else {
		tv = tv_of_ns(st.t_end - t);
		evtimer_add(end_ev, &tv);
	}
	st.calling = 1;
	for (i = 0; i < opt.sessions; i++) {
		s = &sessions[i];
		if (opt.rate > 0) {
			s->interval = (uint64_t)((double)opt.sessions /
			    opt.rate * 1e9);
			s->next_due = t + (uint64_t)((double)i / opt.rate *
			    1e9);
		}
		send_call(s);
	}
}

static void
signal_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	stop_all();
}

/* ------------------------------------------------------------------ */
/* Set-up and report. */

static int
parse_url(const char *url)
{
	const char *p = url, *slash, *colon;
	struct addrinfo hints, *res;
	char port[16];
	size_t hl;
	int e;

	if (strncmp(p, "http://", 7) == 0)
		p += 7;
	else if (strncmp(p, "ws://", 5) == 0) {
		opt.ws = 1;
		p += 5;
	} else
		return -1;
	slash = strchr(p, '/');
	if (slash == NULL)
		slash = p + strlen(p);
	snprintf(opt.path, sizeof opt.path, "%s", *slash ? slash : "/");
	if ((size_t)(slash - p) >= sizeof opt.hostport)
		return -1;
	memcpy(opt.hostport, p, (size_t)(slash - p));
	opt.hostport[slash - p] = '\0';
	if (opt.hostport[0] == '[') {
		colon = strchr(opt.hostport, ']');
		if (colon == NULL)
			return -1;
		hl = (size_t)(colon - opt.hostport - 1);
		memcpy(opt.host, opt.hostport + 1, hl);
		opt.host[hl] = '\0';
		colon = colon[1] == ':' ? colon + 1 : NULL;
	} else {
		colon = strrchr(opt.hostport, ':');
		hl = colon ? (size_t)(colon - opt.hostport) :
		    strlen(opt.hostport);
		memcpy(opt.host, opt.hostport, hl);
		opt.host[hl] = '\0';
	}
	snprintf(port, sizeof port, "%s", colon ? colon + 1 : "80");
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if ((e = getaddrinfo(opt.host, port, &hints, &res)) != 0) {
		fprintf(stderr, "loadgen: %s: %s\n", opt.host,
		    gai_strerror(e));
		return -1;
	}
	memcpy(&opt.addr, res->ai_addr, res->ai_addrlen);
	opt.addrlen = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

static void
report(void)
{
	double secs, cps;
	json_t *o;
	char *txt;
	uint64_t ok;

	if (opt.mode == MODE_SCALE) {
		scale_report();
		return;
	}
	if (opt.mode == MODE_STREAMS) {
		o = json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:s?}",
		    "label", opt.label, "mode", "streams",
		    "sessions", (json_int_t)opt.sessions,
		    "max_open", (json_int_t)st.max_streams,
		    "open_at_end", (json_int_t)st.open_streams,
		    "events", (json_int_t)st.events,
		    "errors", (json_int_t)st.errors,
		    "first_error", st.first_error[0] ? st.first_error : NULL);
		txt = json_dumps(o, JSON_COMPACT);
		printf("%s\n", txt);
		free(txt);
		json_decref(o);
		if (!opt.quiet)
			fprintf(stderr, "%s%sstreams: %u sessions, %u open at "
			    "most, %" PRIu64 " errors\n", opt.label,
			    opt.label[0] ? " " : "", opt.sessions,
			    st.max_streams, st.errors);
		return;
	}
	if (opt.calls > 0 && opt.duration <= 0)
		secs = st.t_start ? (double)(now_ns() - st.t_measure) / 1e9 :
		    0;
	else
		secs = opt.duration;
	ok = st.counted;
	cps = secs > 0 ? (double)ok / secs : 0;
	o = json_pack("{s:s, s:s, s:s, s:I, s:f, s:f, s:f, s:I, s:I, s:I,"
	    " s:I, s:f, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:I, s:I, s:I,"
	    " s:I, s:s?}",
	    "label", opt.label, "mode", opt.rate > 0 ? "open" : "closed",
	    "tool", opt.tool,
	    "concurrency", (json_int_t)opt.sessions,
	    "rate", opt.rate, "warmup_s", opt.warmup, "duration_s", secs,
	    "sent", (json_int_t)st.sent,
	    "answered", (json_int_t)st.answered,
	    "calls", (json_int_t)ok,
	    "errors", (json_int_t)st.errors,
	    "calls_per_s", cps,
	    "p50_us", (json_int_t)hist_pct(&hist, 50),
	    "p90_us", (json_int_t)hist_pct(&hist, 90),
	    "p99_us", (json_int_t)hist_pct(&hist, 99),
	    "p999_us", (json_int_t)hist_pct(&hist, 99.9),
	    "max_us", (json_int_t)hist.max,
	    "min_us", (json_int_t)hist.min,
	    "mean_us", hist.n ? (double)(hist.sum / hist.n) : 0.0,
	    "answer_bytes", (json_int_t)st.answer_bytes,
	    "last_answer_unix_us", (json_int_t)st.last_answer_unix_us,
	    "reconnects", (json_int_t)st.reconnects,
	    "deleted", (json_int_t)st.deleted,
	    "first_error", st.first_error[0] ? st.first_error : NULL);
	if (opt.limited) {
		json_object_set_new(o, "limited", json_integer(
		    (json_int_t)st.limited));
		json_object_set_new(o, "limited_per_s", json_real(secs > 0 ?
		    (double)st.limited / secs : 0));
	}
	txt = json_dumps(o, JSON_COMPACT);
	printf("%s\n", txt);
	free(txt);
	json_decref(o);
	if (!opt.quiet)
		fprintf(stderr, "%s%sc=%u%s: %.0f calls/s, p50 %" PRIu64
		    " us, p90 %" PRIu64 " us, p99 %" PRIu64 " us, max %"
		    PRIu64 " us, %" PRIu64 " calls, %" PRIu64 " errors\n",
		    opt.label, opt.label[0] ? " " : "", opt.sessions,
		    opt.rate > 0 ? " (open loop)" : "", cps,
		    hist_pct(&hist, 50), hist_pct(&hist, 90),
		    hist_pct(&hist, 99), hist.max, ok, st.errors);
}

static void
usage(void)
{
	fprintf(stderr,
"usage: loadgen [options] http://HOST:PORT/PATH   (Streamable HTTP)\n"
"       loadgen [options] ws://HOST:PORT/PATH     (WebSocket, subprotocol mcp)\n"
"       loadgen [options] --stdio COMMAND         (going direct, no HTTP)\n"
"  -c, --concurrency N  sessions, one connection each (1)\n"
"  -d, --duration S     seconds measured (10); 0 with --calls: until done\n"
"  -w, --warmup S       seconds before measuring (2)\n"
"  -r, --rate R         open loop: R calls/s in total (0: closed loop)\n"
"  -n, --calls N        stop after N calls\n"
"  -t, --tool NAME      tool to call (demo__echo)\n"
"  -a, --args JSON      its arguments ({\"text\":\"hello\"})\n"
"  -T, --timeout S      seconds a call may take (30)\n"
"  -l, --label TEXT     name of the system, copied to the output\n"
"  -P, --protocol V     protocol version to ask for (2025-11-25)\n"
"  -M, --modern         2026-07-28: no session, every request whole (HTTP)\n"
"  -s, --streams        hold a GET event stream open per session (HTTP)\n"
"  -H, --hold S         with --streams, stop after S seconds\n"
"                       (default: at SIGTERM or SIGINT)\n"
"  -p, --parallel N     sessions set up at once (64)\n"
"  -E, --expect-error   the calls must be answered with an error\n"
"  -q, --quiet          no human line\n"
"  -x, --stdio COMMAND  run COMMAND and call it over stdio, one pipe for\n"
"                       all sessions (words split on spaces)\n"
"scale mode (HTTP; see loadgen_scale.c):\n"
"  -S, --scale N        hold N sessions, then time fan-outs and a probe\n"
"  --scale-streams S    of which S hold a GET stream (0)\n"
"  --sources K          connect from 127.0.0.1 .. 127.0.0.K (1)\n"
"  --notify K           notifications to time (10)\n"
"  --idle S             seconds of probe before and after them (20)\n"
"  --gap MS             between a fan-out's end and the next (100)\n"
"  --trigger TOOL       the tool that makes one (demo__toggle_tool)\n"
"  --triggers T         sessions that may call it (1); one is used per\n"
"                       gateway instance (a fleet: the session id's prefix)\n"
"  --probes P           the probe's sessions (8), calling at --rate\n"
"                       (1000 calls/s by default here), from a loadgen\n"
"                       process of its own\n"
"  --record FILE        (calls mode) write each call's due time and\n"
"                       latency (until its answer or failure), in ns, as\n"
"                       two native 64-bit words; the top bit of the\n"
"                       latency is set for a failed call\n"
"  --rss-pid NAME=PID   read VmRSS of PID at each stage (up to 8)\n"
"  --bearer-file FILE   send the token in FILE as a bearer token (HTTP)\n"
"  --readers-nice N     once the probe runs, lower this process (the\n"
"                       streams' reader) to niceness N (0), and its\n"
"                       autogroup when it leads its session (the probe\n"
"                       then takes a session of its own)\n"
"  --readers-poll US    the streams' reader polls its connections every\n"
"                       US microseconds instead of sleeping until one is\n"
"                       readable: the gateway's writes then do not pay\n"
"                       to wake it, as writes to other machines do not\n"
"                       (0: it sleeps)\n"
"  --limited            a call refused by a rate limit (error data.reason\n"
"                       \"rate_limited\") is counted as limited, not as\n"
"                       an error (2025 sessions: a 2026-07-28 refusal is\n"
"                       HTTP 429)\n");
	exit(2);
}

/* A bearer token from a file (one line): never on the command line. */
static char *
read_bearer(const char *path)
{
	FILE	*f;
	char	 buf[16384];
	size_t	 n;

	if ((f = fopen(path, "r")) == NULL) {
		fprintf(stderr, "loadgen: %s: %s\n", path, strerror(errno));
		exit(2);
	}
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	if (buf[0] == '\0') {
		fprintf(stderr, "loadgen: %s: no token\n", path);
		exit(2);
	}
	return (strdup(buf));
}

static double
num_arg(const char *s, const char *name)
{
	char *e;
	double v;

	errno = 0;
	v = strtod(s, &e);
	if (e == s || *e != '\0' || errno != 0 || v < 0) {
		fprintf(stderr, "loadgen: bad %s: %s\n", name, s);
		exit(2);
	}
	return v;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "concurrency", required_argument, NULL, 'c' },
		{ "duration", required_argument, NULL, 'd' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "rate", required_argument, NULL, 'r' },
		{ "calls", required_argument, NULL, 'n' },
		{ "tool", required_argument, NULL, 't' },
		{ "args", required_argument, NULL, 'a' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "label", required_argument, NULL, 'l' },
		{ "protocol", required_argument, NULL, 'P' },
		{ "modern", no_argument, NULL, 'M' },
		{ "streams", no_argument, NULL, 's' },
		{ "hold", required_argument, NULL, 'H' },
		{ "parallel", required_argument, NULL, 'p' },
		{ "expect-error", no_argument, NULL, 'E' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "stdio", required_argument, NULL, 'x' },
		{ "scale", required_argument, NULL, 'S' },
		{ "scale-streams", required_argument, NULL, 1001 },
		{ "sources", required_argument, NULL, 1002 },
		{ "notify", required_argument, NULL, 1003 },
		{ "idle", required_argument, NULL, 1004 },
		{ "gap", required_argument, NULL, 1005 },
		{ "trigger", required_argument, NULL, 1006 },
		{ "probes", required_argument, NULL, 1007 },
		{ "rss-pid", required_argument, NULL, 1008 },
		{ "record", required_argument, NULL, 1009 },
		{ "triggers", required_argument, NULL, 1010 },
		{ "readers-nice", required_argument, NULL, 1011 },
		{ "readers-poll", required_argument, NULL, 1014 },
		{ "bearer-file", required_argument, NULL, 1012 },
		{ "limited", no_argument, NULL, 1013 },
		{ NULL, 0, NULL, 0 }
	};
	struct event *sigint, *sigterm;
	struct event_config *cfg;
	struct rlimit rl;
	json_error_t jerr;
	json_t *args;
	char *argtxt, *name;
	unsigned i, first;
	int c;

	while ((c = getopt_long(argc, argv, "c:d:w:r:n:t:a:T:l:P:sH:p:Eqx:MS:",
	    longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			opt.sessions = (unsigned)num_arg(optarg, "concurrency");
			break;
		case 'd':
			opt.duration = num_arg(optarg, "duration");
			break;
		case 'w':
			opt.warmup = num_arg(optarg, "warmup");
			break;
		case 'r':
			opt.rate = num_arg(optarg, "rate");
			break;
		case 'n':
			opt.calls = (uint64_t)num_arg(optarg, "calls");
			break;
		case 't':
			opt.tool = optarg;
			break;
		case 'a':
			opt.args = optarg;
			break;
		case 'T':
			opt.timeout = num_arg(optarg, "timeout");
			break;
		case 'l':
			opt.label = optarg;
			break;
		case 'P':
			opt.protocol = optarg;
			break;
		case 's':
			opt.mode = MODE_STREAMS;
			break;
		case 'H':
			opt.hold = num_arg(optarg, "hold");
			break;
		case 'p':
			opt.parallel = (unsigned)num_arg(optarg, "parallel");
			break;
		case 'E':
			opt.expect_error = 1;
			break;
		case 'q':
			opt.quiet = 1;
			break;
		case 'x':
			opt.stdio = optarg;
			break;
		case 'M':
			opt.modern = 1;
			break;
		case 'S':
			opt.mode = MODE_SCALE;
			opt.scale = (unsigned)num_arg(optarg, "scale");
			break;
		case 1001:
			opt.scale_streams = (unsigned)num_arg(optarg,
			    "scale-streams");
			break;
		case 1002:
			opt.nsources = (unsigned)num_arg(optarg, "sources");
			break;
		case 1003:
			opt.notify = (unsigned)num_arg(optarg, "notify");
			break;
		case 1004:
			opt.idle = num_arg(optarg, "idle");
			break;
		case 1005:
			opt.gap = num_arg(optarg, "gap");
			break;
		case 1006:
			opt.trigger = optarg;
			break;
		case 1007:
			opt.probes = (unsigned)num_arg(optarg, "probes");
			break;
		case 1008:
			if (opt.nrss == RSS_MAX_PIDS ||
			    (name = strchr(optarg, '=')) == NULL)
				usage();
			*name = '\0';
			opt.rss_name[opt.nrss] = optarg;
			opt.rss_pid[opt.nrss++] = (int)num_arg(name + 1,
			    "rss-pid");
			break;
		case 1009:
			opt.record = optarg;
			break;
		case 1010:
			opt.triggers = (unsigned)num_arg(optarg, "triggers");
			break;
		case 1011:
			opt.readers_nice = (int)num_arg(optarg, "readers-nice");
			break;
		case 1014:
			opt.readers_poll = (unsigned)num_arg(optarg,
			    "readers-poll");
			break;
		case 1012:
			opt.bearer = read_bearer(optarg);
			break;
		case 1013:
			opt.limited = 1;
			break;
		default:
			usage();
		}
	}
	if (optind != argc - (opt.stdio ? 0 : 1) || opt.sessions == 0 ||
	    opt.parallel == 0 || (opt.stdio && opt.mode == MODE_STREAMS) ||
	    (opt.modern && (opt.stdio != NULL || opt.mode == MODE_STREAMS)))
		usage();
	if (opt.mode == MODE_SCALE) {
		if (opt.ws || opt.modern || opt.stdio != NULL ||
		    opt.scale_streams > opt.scale || opt.probes == 0 ||
		    opt.nsources > 254)
			usage();
		if (opt.rate <= 0)
			opt.rate = 1000;
		/* The sessions held and the triggers; the probe is a
		 * process of its own. */
		if (opt.triggers == 0)
			opt.triggers = 1;
		opt.sessions = opt.scale + opt.triggers;
	}
	opt.self = argv[0];
	if (opt.record != NULL && (record = fopen(opt.record, "w")) == NULL) {
		fprintf(stderr, "loadgen: %s: %s\n", opt.record,
		    strerror(errno));
		return 2;
	}
	opt.url = opt.stdio ? opt.stdio : argv[optind];
	if (opt.stdio == NULL && parse_url(opt.url) != 0) {
		fprintf(stderr, "loadgen: bad URL (want http://host:port/path "
		    "or ws://host:port/path): %s\n", opt.url);
		return 2;
	}
	if (opt.ws && opt.mode == MODE_STREAMS) {
		fprintf(stderr, "loadgen: --streams is for Streamable HTTP\n");
		return 2;
	}
	tr = opt.stdio ? &stdio_transport : opt.ws ? &ws_transport :
	    &http_transport;
	if (opt.duration <= 0 && opt.calls == 0 && opt.mode == MODE_CALLS) {
		fprintf(stderr, "loadgen: a duration or --calls is needed\n");
		return 2;
	}
	if (opt.calls > 0 && opt.duration <= 0)
		opt.warmup = 0;

	/* The call's body, around its id; the arguments must be JSON. */
	args = json_loads(opt.args, JSON_DECODE_ANY, &jerr);
	if (args == NULL || !json_is_object(args)) {
		fprintf(stderr, "loadgen: --args must be a JSON object\n");
		return 2;
	}
	argtxt = json_dumps(args, JSON_COMPACT | JSON_ENCODE_ANY);
	json_decref(args);
	args = json_string(opt.tool);
	name = json_dumps(args, JSON_ENCODE_ANY);
	json_decref(args);
	if (argtxt == NULL || name == NULL)
		return 1;
	call_prefix = strdup("{\"jsonrpc\":\"2.0\",\"id\":");
	if (asprintf(&call_suffix, ",\"method\":\"tools/call\",\"params\":"
	    "{\"name\":%s,\"arguments\":%s%s}}", name, argtxt, opt.modern ?
	    ",\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"
	    "\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{},"
	    "\"io.modelcontextprotocol/clientInfo\":{\"name\":"
	    "\"mcp-supervisor-loadgen\",\"version\":\"1.0\"}}" : "") < 0 ||
	    call_prefix == NULL)
		return 1;
	free(argtxt);
	free(name);

	/* One descriptor per session, and then some. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
	    && rl.rlim_cur < (rlim_t)(opt.mode == MODE_SCALE ?
	    opt.scale_streams + opt.probes + opt.parallel : opt.sessions) + 16) {
		fprintf(stderr, "loadgen: %u sessions need more descriptors "
		    "than the limit of %llu\n", opt.mode == MODE_SCALE ?
		    opt.scale_streams : opt.sessions,
		    (unsigned long long)rl.rlim_cur);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);

	/* Timers to the microsecond (timerfd), not epoll's milliseconds. */
	if ((cfg = event_config_new()) == NULL)
		return 1;
	event_config_set_flag(cfg, EVENT_BASE_FLAG_PRECISE_TIMER);
	base = event_base_new_with_config(cfg);
	event_config_free(cfg);
	if (base == NULL)
		return 1;
	sessions = calloc(opt.sessions, sizeof *sessions);
	if (sessions == NULL)
		return 1;
	for (i = 0; i < opt.sessions; i++) {
		sessions[i].idx = i;
		sessions[i].next_id = 1;
		sessions[i].timer = evtimer_new(base, timer_cb, &sessions[i]);
		sessions[i].deadline = evtimer_new(base, deadline_cb,
		    &sessions[i]);
		if (tr->init(&sessions[i]) != 0 || sessions[i].timer == NULL ||
		    sessions[i].deadline == NULL)
			return 1;
	}
	end_ev = evtimer_new(base, end_cb, NULL);
	drain_ev = evtimer_new(base, drain_cb, NULL);
	sigint = evsignal_new(base, SIGINT, signal_cb, NULL);
	sigterm = evsignal_new(base, SIGTERM, signal_cb, NULL);
	if (end_ev == NULL || drain_ev == NULL || sigint == NULL || sigterm == NULL)
		return 1;
	evsignal_add(sigint, NULL);
	evsignal_add(sigterm, NULL);

	st.t_setup = now_ns();
	if (opt.stdio != NULL) {
		if (direct_start() != 0) {
			fprintf(stderr, "loadgen: cannot start %s\n", opt.stdio);
			return 1;
		}
	} else if (opt.mode == MODE_SCALE)
		scale_start();
	else {
		first = opt.parallel < opt.sessions ? opt.parallel :
		    opt.sessions;
		/* A 2026-07-28 session is ready at once and starts the next
		 * itself: start by index, not twice. */
		for (i = 0; i < first && st.started < opt.sessions; i++)
			session_start(&sessions[st.started]);
	}
	if (opt.mode == MODE_SCALE)
		scale_loop(base);
	else
		event_base_dispatch(base);

	report();

	for (i = 0; i < opt.sessions; i++) {
		tr->free(&sessions[i]);
		event_free(sessions[i].timer);
		event_free(sessions[i].deadline);
	}
	free(sessions);
	event_free(end_ev);
	event_free(drain_ev);
	event_free(sigint);
	event_free(sigterm);
	event_base_free(base);
	free(call_prefix);
	free(call_suffix);
	if (record != NULL)
		fclose(record);
	direct_stop();
	if (opt.mode == MODE_STREAMS)
		return st.errors == 0 && st.max_streams == opt.sessions ? 0 : 1;
	if (opt.mode == MODE_SCALE)
		return st.errors == 0 ? 0 : 1;
	if (opt.expect_error)
		return st.errors == 0 && st.answered > 0 ? 0 : 1;
	return st.errors == 0 && st.counted > 0 ? 0 : 1;
}
