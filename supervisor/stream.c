/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "log.h"
#include "sse.h"
#include "stream_priv.h"
#include "xmalloc.h"

/*
 * Streams: where a session's messages go, with event ids and replay.  The
 * events kept for replay and the budget are in stream_keep.c.  An event
 * is delivered once its connection's output passed it to the kernel; a
 * finished POST stream stays on its connection's passing list until its
 * response is, and is kept for a resumption if the connection is lost
 * first.
 */
#define STREAM_RETRY_MS		1000	/* the retry field we send */
#define STREAM_KEEP_MS		(300 * 1000)	/* undelivered, complete */
#define STREAM_MAX_KEPT		16	/* such streams per session */

static void	stream_trim(struct session *);

/* Do clients of this session understand priming events? */
static int
stream_primes(const struct stream *st)
{
	return (!st->modern &&
	    strcmp(st->session->version, "2025-11-25") >= 0);
}

/* Write a kept event to a connection. */
static void
stream_write_event(struct http_conn *c, struct stream_event *ev)
{
	char	id[STREAM_ID_MAX];
	size_t	idlen;

	idlen = stream_id_line(id, ev->stream->no, ev->seq);
	stream_body_write(c, id, idlen, ev->body);
	stream_event_written(ev, c);
}

/*
 * Keep what a stream's limits allow: 1024 events and 8 MiB (not dropping
 * a final response for size), and on the standalone stream only a short
 * window of delivered events, or a few before any client opened it.
 */
static void
stream_limit(struct stream *st)
{
	struct stream_event	*ev;
	size_t			 spare_max;

	while (st->nevents > 1 && (st->nevents > STREAM_MAX_EVENTS ||
	    (st->bytes > STREAM_MAX_BYTES &&
	    !TAILQ_FIRST(&st->events)->final)))
		stream_drop_oldest(st);
	if (st->kind != STREAM_GET)
		return;
	spare_max = st->opened ? STREAM_RESUME_EVENTS : STREAM_MAX_UNOPENED;
	while (st->nspare > spare_max &&
	    (ev = TAILQ_FIRST(&st->events)) != NULL && ev->spare)
		stream_drop_oldest(st);
}

/*
 * A stream loses its connection: the events its output still held never
 * reached the client, so they stay owed, and are sent again.
 */
static void
stream_lost_output(struct stream *st)
{
	if (st->conn != NULL && st->unpassed != NULL) {
		if (stream_passed(st, http_conn_passed(st->conn)) > 0)
			stream_limit(st);
		stream_unpassed_lost(st);
	}
}

/* Nothing is to be routed to a stream any more. */
static void
stream_unroute(struct stream *st)
{
	st->unrouted = 1;
	route_stream_gone(st);
	if (st->listen != NULL)
		listen_stream_gone(st);
	if (st->session->only == st)
		st->session->only = NULL;
}

/* Take a finished stream off its connection's passing list. */
static void
stream_unpass(struct stream *st)
{
	TAILQ_REMOVE(http_conn_passing(st->passing), st, pass_entry);
	st->passing = NULL;
}

/* Unlink and free a stream, leaving any connection alone. */
static void
stream_destroy(struct stream *st)
{
	if (!st->unrouted)
		stream_unroute(st);
	if (st->passing != NULL)
		stream_unpass(st);
	stream_keep_clear(st);
	TAILQ_REMOVE(&st->session->streams, st, entry);
	st->session->nstreams--;
	free(st->caps);
	json_decref(st->params);
	free(st);
}

/* Write the start of an event-stream response. */
static void
stream_start(struct stream *st, struct http_conn *c)
{
	st->conn = c;
	st->opened = 1;
	http_set_stream(c, st);
	http_stream_start(c, st->modern ? "X-Accel-Buffering: no\r\n" : NULL);
	/*
	 * A stream that lasts as long as its client stays lasts no longer
	 * than the token that opened it (the session's, just set from the
	 * request); one of a request ends with its answer.
	 */
	if (st->kind == STREAM_GET || st->kind == STREAM_LEGACY ||
	    st->kind == STREAM_LISTEN)
		http_conn_expire(c, st->session->grant);
}

/*
 * Write the priming event: an id to resume from, and the retry.  A new
 * stream's is <stream>-0, which no event has; any later one takes the
 * next seq, so ids stay unique (it is written only when no event is, so
 * resuming from it skips nothing).
 */
static void
stream_prime(struct stream *st, int first)
{
	struct evbuffer	*buf;
	uint32_t	 seq = 0;

	if (st->kind == STREAM_LEGACY || !stream_primes(st))
		return;
	if (!first || st->seq != 0) {
		seq = ++st->seq;
		st->sent = seq;
	}
	buf = evbuffer_new();
	evbuffer_add_printf(buf, "id: %u-%u\nretry: %u\ndata: \n\n", st->no,
	    seq, STREAM_RETRY_MS);
	http_stream_write(st->conn, buf);
	evbuffer_free(buf);
}

struct stream *
stream_new(struct session *s, enum stream_kind kind, struct http_conn *c)
{
	struct stream	*st;

	st = xcalloc(1, sizeof *st);
	st->session = s;
	st->kind = kind;
	st->status = 200;
	st->level = -1;
	st->modern = kind == STREAM_MODERN || kind == STREAM_LISTEN ||
	    s->modern;
	st->no = kind == STREAM_GET ? 0 : ++s->next_stream;
	TAILQ_INIT(&st->events);
	TAILQ_INSERT_TAIL(&s->streams, st, entry);
	s->nstreams++;
	if (kind == STREAM_LEGACY || kind == STREAM_WS)
		s->only = st;
	if (c == NULL)
		return (st);
	/* A 2026-07-28 stream says 200 only when something comes before
	 * its answer: an error alone keeps its own status (400). */
	if (kind == STREAM_JSON || kind == STREAM_WS || kind == STREAM_MODERN) {
		st->conn = c;
		http_set_stream(c, st);
	} else {
		stream_start(st, c);
		stream_prime(st, 1);
	}
	return (st);
}

/*
 * Free a stream; a connection still attached is closed, after: closing
 * it may trim the session's kept streams.
 */
void
stream_free(struct stream *st)
{
	struct http_conn	*c = st->conn;

	st->conn = NULL;
	if (c != NULL) {
		http_set_stream(c, NULL);
		if (st->kind == STREAM_WS)
			mcp_ws_forget(c);
	}
	stream_destroy(st);
	if (c != NULL)
		http_conn_close(c);
}

struct stream *
stream_find(struct session *s, uint32_t no)
{
	struct stream	*st;

	TAILQ_FOREACH(st, &s->streams, entry) {
		if (st->no == no && st->kind != STREAM_JSON && !st->modern)
			return (st);
	}
	return (NULL);
}

/* End the HTTP response of a stream's connection and let it go. */
static void
stream_end_conn(struct stream *st)
{
	struct http_conn	*c = st->conn;

	st->conn = NULL;
	http_set_stream(c, NULL);
	http_stream_end(c);
}

/*
 * A POST stream's response is written: end the HTTP response.  The stream
 * is freed once the connection's output passed the response on, and kept
 * for a resumption if the connection is lost first.  Nothing may use st
 * after this.
 */
static void
stream_finish(struct stream *st)
{
	struct http_conn	*c = st->conn;

	stream_unroute(st);
	if (st->unpassed == NULL) {
		stream_end_conn(st);
		stream_destroy(st);
		return;
	}
	st->passing = c;
	TAILQ_INSERT_TAIL(http_conn_passing(c), st, pass_entry);
	stream_end_conn(st);
}

void
stream_conn_passed(struct http_conn *c)
{
	struct stream_passing	*list = http_conn_passing(c);
	struct stream		*st;
	uint64_t		 passed = http_conn_passed(c);

	if ((st = http_conn_stream(c)) != NULL && st->unpassed != NULL &&
	    stream_passed(st, passed) > 0)
		stream_limit(st);
	while ((st = TAILQ_FIRST(list)) != NULL) {
		if (st->unpassed != NULL)
			stream_passed(st, passed);
		if (st->unpassed != NULL)
			break;
		stream_destroy(st);
	}
}

void
stream_conn_gone(struct http_conn *c)
{
	struct stream_passing	*list = http_conn_passing(c);
	struct stream		*st;

	stream_conn_passed(c);
	while ((st = TAILQ_FIRST(list)) != NULL) {
		log_debug("session %.8s: stream %u lost its connection before "
		    "its response was delivered: kept for a resumption",
		    st->session->id, st->no);
		stream_unpass(st);
		stream_unpassed_lost(st);
		stream_trim(st->session);
	}
}

/* The connection went away; a JSON or finished stream has no more use. */
void
stream_detach(struct stream *st)
{
	stream_lost_output(st);
	st->conn = NULL;
	if (st->modern) {
		/* Closing a 2026-07-28 response is a cancellation. */
		modern_stream_gone(st);
		stream_destroy(st);
	} else if (st->kind == STREAM_LEGACY)
		session_free(st->session, "legacy SSE stream closed");
	else if (st->kind == STREAM_WS)
		session_free(st->session, "WebSocket closed");
	else if (st->kind == STREAM_JSON)
		stream_destroy(st);
	else if (st->done && st->sent == st->seq)
		stream_destroy(st);
}

/* Keep at most STREAM_MAX_KEPT complete, undelivered streams. */
static void
stream_trim(struct session *s)
{
	struct stream	*st, *next;
	unsigned int	 n = 0;

	TAILQ_FOREACH(st, &s->streams, entry) {
		if (st->done && st->conn == NULL && st->passing == NULL)
			n++;
	}
	for (st = TAILQ_FIRST(&s->streams); st != NULL && n > STREAM_MAX_KEPT;
	    st = next) {
		next = TAILQ_NEXT(st, entry);
		if (!st->done || st->conn != NULL || st->passing != NULL)
			continue;
		log_warnx("session %.8s: dropping undelivered stream %u (more "
		    "than %d waiting to be resumed)", s->id, st->no,
		    STREAM_MAX_KEPT);
		stream_destroy(st);
		n--;
	}
}

/* The request of a stream was cancelled: end its response, if any. */
void
stream_abandon(struct stream *st)
{
	struct http_conn	*c = st->conn;

	switch (st->kind) {
	case STREAM_JSON:
		/* Let go of the connection first: it counts the stream. */
		st->conn = NULL;
		if (c != NULL)
			http_set_stream(c, NULL);
		stream_destroy(st);
		if (c != NULL)
			http_conn_close(c);
		break;
	case STREAM_MODERN:
		if (c != NULL && !st->opened) {
			/* No head yet: end it as a JSON response is. */
			st->conn = NULL;
			http_set_stream(c, NULL);
			http_conn_close(c);
		} else if (c != NULL)
			stream_end_conn(st);
		stream_destroy(st);
		break;
	case STREAM_POST:
	case STREAM_LISTEN:
		if (c != NULL)
			stream_end_conn(st);
		stream_destroy(st);
		break;
	default:
		break;	/* GET and legacy streams carry more than one call */
	}
}

/* Cut off a reader that does not keep up; its events stay for replay. */
static void
stream_check_reader(struct stream *st, size_t last)
{
	struct http_conn	*c;
	size_t			 queued;

	if (st->conn == NULL || http_conn_doomed(st->conn))
		return;
	queued = http_conn_queued(st->conn);
	if (queued <= last || queued - last <= STREAM_CUT_BYTES)
		return;
	log_warnx("session %.8s: stream %u reader is %zu bytes behind, "
	    "closing its connection", st->session->id, st->no, queued);
	/*
	 * Closed from the loop, not now: a caller may go on sending to this
	 * session, and closing a legacy stream ends it.  Any other stream
	 * lets go of the connection at once and keeps its events.
	 */
	c = st->conn;
	if (st->modern) {
		/* Nothing to replay: the request is given up. */
		st->conn = NULL;
		http_set_stream(c, NULL);
		http_conn_close_later(c);
		modern_stream_gone(st);
		stream_destroy(st);
		return;
	}
	if (st->kind != STREAM_LEGACY && st->kind != STREAM_WS) {
		stream_lost_output(st);
		st->conn = NULL;
		http_set_stream(c, NULL);
	}
	http_conn_close_later(c);
}

/* Send on a JSON stream: only the final response has a place. */
static void
stream_send_json(struct stream *st, struct evbuffer *msg, int final)
{
	struct http_conn	*c = st->conn;
	char			 extra[48] = "";
	int			 status;

	if (!final) {
		log_debug("session %.8s: message during a JSON response "
		    "dropped", st->session->id);
		evbuffer_drain(msg, evbuffer_get_length(msg));
		return;
	}
	st->conn = NULL;
	if (c == NULL)
		log_debug("session %.8s: client gone, response dropped",
		    st->session->id);
	else
		http_set_stream(c, NULL);
	status = st->status;
	if (st->retry_after > 0)
		snprintf(extra, sizeof extra, "Retry-After: %u\r\n",
		    st->retry_after);
	stream_destroy(st);
	if (c != NULL)
		http_reply_buffer(c, status, "application/json",
		    extra[0] != '\0' ? extra : NULL, msg);
	else
		evbuffer_drain(msg, evbuffer_get_length(msg));
}

/*
 * Send on a 2026-07-28 event stream: events without ids, nothing kept
 * (a broken stream loses its request, which the client issues again);
 * the final response ends it.
 */
static void
stream_send_modern(struct stream *st, struct evbuffer *msg, int final)
{
	struct evbuffer	*out;
	size_t		 len;

	if (st->conn == NULL) {
		evbuffer_drain(msg, evbuffer_get_length(msg));
		if (final)
			stream_destroy(st);
		return;
	}
	if (!st->opened) {
		/* Its answer alone: one JSON body, at its own status. */
		if (final) {
			stream_send_json(st, msg, 1);
			return;
		}
		stream_start(st, st->conn);
	}
	out = evbuffer_new();
	sse_add_event_buffer(out, NULL, "message", msg);
	len = evbuffer_get_length(out);
	http_stream_write(st->conn, out);
	evbuffer_free(out);
	if (final) {
		stream_end_conn(st);
		stream_destroy(st);
		return;
	}
	stream_check_reader(st, len);
	stream_budget();
}

/*
 * Send an event with an id (GET and POST streams): kept for replay unless
 * it is a final response a connection took; on the standalone stream a
 * delivered event, or one no client opened the stream for yet, is spare.
 */
static void
stream_send_id(struct stream *st, struct stream_body *b, struct evbuffer *out,
    int final)
{
	struct stream_event	*ev;
	char			 id[STREAM_ID_MAX];
	size_t			 idlen, len;
	int			 spare;

	st->seq++;
	idlen = stream_id_line(id, st->no, st->seq);
	len = idlen + (b != NULL ? b->len : evbuffer_get_length(out));
	if (st->kind == STREAM_POST && final) {
		st->done = 1;
		st->done_at = now_ms();
	}
	if (b == NULL)
		b = stream_body_new(out);
	else
		stream_body_ref(b);
	/* Spare at once: an event of a standalone stream never opened. */
	spare = st->kind == STREAM_GET && st->conn == NULL && !st->opened;
	ev = stream_keep(st, b, st->seq, final, spare);
	stream_body_unref(b);
	if (st->conn != NULL) {
		st->sent = st->seq;
		stream_write_event(st->conn, ev);
		if (st->done) {
			/* By reference: the output counts it, not we too. */
			if (!http_conn_doomed(st->conn))
				stream_body_lend(ev->body);
			stream_budget();
			stream_finish(st);
			return;
		}
		stream_check_reader(st, len);
	}
	stream_limit(st);
	stream_budget();
	/* Last: it may free this stream, the oldest of those kept. */
	if (st->conn == NULL && st->done)
		stream_trim(st->session);
}

/* Send on a legacy (2024-11-05) stream: events without ids, nothing kept. */
static void
stream_send_legacy(struct stream *st, struct stream_body *b,
    struct evbuffer *msg)
{
	struct evbuffer	*out;
	size_t		 len;

	if (st->conn == NULL) {
		if (msg != NULL)
			evbuffer_drain(msg, evbuffer_get_length(msg));
		return;
	}
	if (b != NULL) {
		len = b->len;
		stream_body_write(st->conn, NULL, 0, b);
	} else {
		out = evbuffer_new();
		sse_add_event_buffer(out, NULL, "message", msg);
		len = evbuffer_get_length(out);
		http_stream_write(st->conn, out);
		evbuffer_free(out);
	}
	stream_check_reader(st, len);
	stream_budget();
}

/* Send on a session's own stream, without catching up on broadcasts. */
void
stream_send_direct(struct stream *st, struct evbuffer *msg, int final)
{
	struct evbuffer	*out;
	size_t		 len;

	if (st == NULL) {
		/* A modern session has no stream for what no request asked. */
		evbuffer_drain(msg, evbuffer_get_length(msg));
		return;
	}
	switch (st->kind) {
	case STREAM_JSON:
		stream_send_json(st, msg, final);
		return;
	case STREAM_WS:
		/* One text frame per message; nothing kept for replay. */
		if (st->conn == NULL) {
			evbuffer_drain(msg, evbuffer_get_length(msg));
			return;
		}
		len = evbuffer_get_length(msg);
		mcp_ws_send(st->conn, msg);
		stream_check_reader(st, len);
		stream_budget();
		return;
	case STREAM_MODERN:
	case STREAM_LISTEN:
		stream_send_modern(st, msg, final);
		return;
	case STREAM_LEGACY:
		stream_send_legacy(st, NULL, msg);
		return;
	default:
		out = evbuffer_new();
		sse_add_event_buffer(out, NULL, "message", msg);
		stream_send_id(st, NULL, out, final);
		evbuffer_free(out);
		return;
	}
}

void
stream_send(struct stream *st, struct evbuffer *msg, int final)
{
	/* What goes where broadcasts go comes after those it has not had. */
	if (st != NULL && (st->kind == STREAM_GET || st->kind ==
	    STREAM_LEGACY || st->kind == STREAM_WS) &&
	    broadcast_behind(st->session))
		broadcast_catch_up(st->session);
	stream_send_direct(st, msg, final);
}

void
stream_send_body(struct stream *st, struct stream_body *b)
{
	if (st->kind == STREAM_GET)
		stream_send_id(st, b, NULL, 0);
	else if (st->kind == STREAM_LEGACY)
		stream_send_legacy(st, b, NULL);
	else
		fatalx("%s: a stream of kind %d", __func__, st->kind);
}

void
stream_resume(struct stream *st, struct http_conn *c, uint32_t after,
    int have_last)
{
	struct stream_event	*ev;
	uint32_t		 from;
	int			 first = !st->opened, replayed = 0;

	if (st->conn != NULL) {
		log_debug("session %.8s: stream %u taken over by a new "
		    "connection", st->session->id, st->no);
		stream_end_conn(st);
	}
	if (st->passing != NULL)
		stream_unpass(st);
	/* What another connection held is for the client's id to settle. */
	stream_unpassed_lost(st);
	from = have_last ? after : st->sent;
	if (have_last && st->dropped > after)
		log_warnx("session %.8s: stream %u lost events %u to %u "
		    "(replay buffer overflowed)", st->session->id, st->no,
		    after + 1, st->dropped);
	stream_start(st, c);
	TAILQ_FOREACH(ev, &st->events, entry) {
		if (ev->seq <= from) {
			/* The client has it: no longer owed. */
			if (st->kind == STREAM_GET)
				stream_event_spare(ev);
			continue;
		}
		stream_write_event(c, ev);
		replayed = 1;
		if (ev->seq > st->sent)
			st->sent = ev->seq;
	}
	/* Finished: its response sent, or no longer kept to send. */
	ev = TAILQ_LAST(&st->events, stream_events);
	if (st->done && (ev == NULL || ev->seq <= st->sent)) {
		if (st->sent != st->seq)
			log_warnx("session %.8s: stream %u resumed without its "
			    "response (no longer kept)", st->session->id,
			    st->no);
		stream_finish(st);
		return;
	}
	if (!replayed)
		stream_prime(st, first);
	stream_limit(st);
}

void
stream_expire(struct session *s, int64_t now)
{
	struct stream	*st, *next;

	for (st = TAILQ_FIRST(&s->streams); st != NULL; st = next) {
		next = TAILQ_NEXT(st, entry);
		/* Not one whose connection is still passing its response
		 * on (the write timeout ends a connection that does not). */
		if (st->done && st->conn == NULL && st->passing == NULL &&
		    now - st->done_at > STREAM_KEEP_MS) {
			log_warnx("session %.8s: stream %u expired with %zu "
			    "undelivered events", s->id, st->no, st->nevents);
			stream_destroy(st);
		}
	}
}

void
stream_token_expired(struct stream *st)
{
	struct session	*s = st->session;

	if (st->conn == NULL)
		return;
	log_info("session %.8s: the token of subject %s expired: ending its "
	    "%s stream", s->id, s->grant != NULL ? s->grant->subject : "-",
	    st->kind == STREAM_GET ? "standalone" : st->kind ==
	    STREAM_LEGACY ? "legacy SSE" : "subscriptions/listen");
	oauth_expired();
	switch (st->kind) {
	case STREAM_GET:
		/* What its output holds may not arrive: kept for a
		 * resumption (Last-Event-ID) with a fresh token. */
		stream_lost_output(st);
		stream_end_conn(st);
		break;
	case STREAM_LEGACY:
		/* Its session is reached only through it: both end. */
		stream_end_conn(st);
		session_free(s, "token expired");
		break;
	case STREAM_LISTEN:
		/* As a closed stream: the client listens again. */
		stream_end_conn(st);
		stream_destroy(st);
		break;
	default:
		break;
	}
}
