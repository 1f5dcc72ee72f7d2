/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "log.h"
#include "sse.h"
#include "supervisor.h"
#include "xmalloc.h"

/*
 * Events kept per stream for Last-Event-ID replay.  The final response of
 * a POST stream is only kept when no connection took it; a stream whose
 * events are all delivered is freed at once.
 */
#define STREAM_MAX_EVENTS	1024
#define STREAM_MAX_BYTES	(4 * 1024 * 1024)	/* real memory */
#define STREAM_REF_MIN		16384	/* events this large are sent by
					   reference, smaller ones copied */
#define STREAM_EVENT_COST	64	/* an event's own bookkeeping */
#define STREAM_SHED_MIN		65536	/* a reader this far behind may be
					   cut to keep the global budget */
#define STREAM_RETRY_MS		1000	/* the retry field we send */
#define STREAM_KEEP_MS		(300 * 1000)	/* undelivered, complete */
#define STREAM_MAX_KEPT		16	/* such streams per session */
#define STREAM_MAX_UNOPENED	32	/* events kept before a first GET */

/*
 * One formatted event ("id: ..\nevent: message\ndata: ..\n\n").  A small
 * one is kept as plain bytes and copied to connections: an evbuffer of its
 * own would cost a 1 KiB chain, and a reference to it would keep that
 * alive in the output of a reader that stopped reading.  A large one is
 * kept in an evbuffer and sent by reference, never copied.
 */
struct stream_event {
	uint32_t		 seq;
	int			 final;
	struct evbuffer		*buf;		/* large, or NULL */
	char			*text;		/* small */
	size_t			 len;
	size_t			 cost;		/* counted in memory */
	TAILQ_ENTRY(stream_event) entry;
};

/* Bytes held for replay by every stream (their real cost). */
static size_t	stream_held;

size_t
stream_held_bytes(void)
{
	return (stream_held);
}

/* Do clients of this session understand priming events? */
static int
stream_primes(const struct stream *st)
{
	return (!st->modern &&
	    strcmp(st->session->version, "2025-11-25") >= 0);
}

/* Drop the oldest kept event. */
static void
stream_drop_oldest(struct stream *st)
{
	struct stream_event	*ev = TAILQ_FIRST(&st->events);

	TAILQ_REMOVE(&st->events, ev, entry);
	st->nevents--;
	st->bytes -= ev->cost;
	stream_held -= ev->cost;
	if (ev->buf != NULL)
		evbuffer_free(ev->buf);
	free(ev->text);
	free(ev);
}

/* Write a kept event to a connection: by reference if large. */
static void
stream_write_event(struct http_conn *c, struct stream_event *ev)
{
	struct evbuffer	*out = evbuffer_new();

	if (ev->buf != NULL)
		evbuffer_add_buffer_reference(out, ev->buf);
	else
		evbuffer_add(out, ev->text, ev->len);
	http_stream_write(c, out);
	evbuffer_free(out);
}

/* Unlink and free a stream, leaving any connection alone. */
static void
stream_destroy(struct stream *st)
{
	route_stream_gone(st);
	if (st->listen != NULL)
		listen_stream_gone(st);
	if (st->session->only == st)
		st->session->only = NULL;
	while (!TAILQ_EMPTY(&st->events))
		stream_drop_oldest(st);
	TAILQ_REMOVE(&st->session->streams, st, entry);
	st->session->nstreams--;
	free(st->caps);
	json_decref(st->params);
	free(st);
}

/*
 * Write the start of an event-stream response and the priming event,
 * whose id is the point the client has reached (seq), so that resuming
 * from it again loses nothing.
 */
static void
stream_start(struct stream *st, struct http_conn *c, uint32_t seq)
{
	struct evbuffer	*buf;

	st->conn = c;
	st->opened = 1;
	http_set_stream(c, st);
	http_stream_start(c, st->modern ? "X-Accel-Buffering: no\r\n" : NULL);
	if (st->kind == STREAM_LEGACY || !stream_primes(st))
		return;
	buf = evbuffer_new();
	evbuffer_add_printf(buf, "id: %u-%u\nretry: %u\ndata: \n\n", st->no,
	    seq, STREAM_RETRY_MS);
	http_stream_write(c, buf);
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
	} else
		stream_start(st, c, 0);
	return (st);
}

/* Free a stream; a connection still attached is closed. */
void
stream_free(struct stream *st)
{
	struct http_conn	*c = st->conn;

	st->conn = NULL;
	if (c != NULL) {
		http_set_stream(c, NULL);
		if (st->kind == STREAM_WS)
			mcp_ws_forget(c);
		http_conn_close(c);
	}
	stream_destroy(st);
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

/* The connection went away; a JSON or finished stream has no more use. */
void
stream_detach(struct stream *st)
{
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
		if (st->done && st->conn == NULL)
			n++;
	}
	for (st = TAILQ_FIRST(&s->streams); st != NULL && n > STREAM_MAX_KEPT;
	    st = next) {
		next = TAILQ_NEXT(st, entry);
		if (!st->done || st->conn != NULL)
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
		st->conn = NULL;
		stream_destroy(st);
		if (c != NULL) {
			http_set_stream(c, NULL);
			http_conn_close(c);
		}
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
	if (queued <= last || queued - last <= STREAM_MAX_BYTES)
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
		st->conn = NULL;
		http_set_stream(c, NULL);
	}
	http_conn_close_later(c);
}

/* The stream that holds the most bytes for replay, or NULL. */
static void
stream_largest_one(struct session *s, void *arg)
{
	struct stream	**best = arg, *st;

	TAILQ_FOREACH(st, &s->streams, entry) {
		if (st->nevents > 0 && (*best == NULL ||
		    st->bytes > (*best)->bytes))
			*best = st;
	}
}

/*
 * Keep the bytes held for all streams, replay buffers and unread output
 * of connections together, within max_buffered: cut the reader furthest
 * behind first (its events stay for replay), then drop the oldest events
 * of the stream that holds the most.  Run from the loop, never inside a
 * send: closing a connection may end a legacy session.
 */
static void
stream_budget_cb(evutil_socket_t fd, short events, void *arg)
{
	struct http_conn	*c;
	struct stream		*st;
	size_t			 queued;

	while (stream_held + http_stream_queued() > conf->max_buffered) {
		if ((c = http_slowest(&queued)) != NULL &&
		    queued >= STREAM_SHED_MIN) {
			log_warnx("http %s: %zu bytes behind while streams hold "
			    "more than max_buffered (%zu), closing its "
			    "connection", http_conn_peer(c), queued,
			    conf->max_buffered);
			http_conn_close(c);
			continue;
		}
		st = NULL;
		session_foreach(stream_largest_one, &st);
		if (st == NULL)
			return;
		log_warnx("session %.8s: stream %u drops its oldest events "
		    "(streams hold more than max_buffered, %zu)",
		    st->session->id, st->no, conf->max_buffered);
		while (st->nevents > 0 && stream_held +
		    http_stream_queued() > conf->max_buffered)
			stream_drop_oldest(st);
	}
}

void
stream_budget(void)
{
	static struct event	*ev;

	if (stream_held + http_stream_queued() <= conf->max_buffered)
		return;
	if (ev == NULL && (ev = event_new(base, -1, 0, stream_budget_cb,
	    NULL)) == NULL)
		fatalx("event_new");
	event_active(ev, EV_TIMEOUT, 0);
}

/* Send on a JSON stream: only the final response has a place. */
static void
stream_send_json(struct stream *st, struct evbuffer *msg, int final)
{
	struct http_conn	*c = st->conn;
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
	stream_destroy(st);
	if (c != NULL)
		http_reply_buffer(c, status, "application/json", NULL, msg);
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
		stream_start(st, st->conn, 0);
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

void
stream_send(struct stream *st, struct evbuffer *msg, int final)
{
	struct stream_event	*ev;
	struct evbuffer		*out;
	char			 id[32];
	size_t			 len;
	int			 keep;

	if (st == NULL) {
		/* A modern session has no stream for what no request asked. */
		evbuffer_drain(msg, evbuffer_get_length(msg));
		return;
	}
	if (st->kind == STREAM_JSON) {
		stream_send_json(st, msg, final);
		return;
	}
	if (st->kind == STREAM_WS) {
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
	}
	if (st->kind == STREAM_MODERN || st->kind == STREAM_LISTEN) {
		stream_send_modern(st, msg, final);
		return;
	}
	if (st->kind == STREAM_LEGACY) {
		if (st->conn == NULL) {
			evbuffer_drain(msg, evbuffer_get_length(msg));
			return;
		}
		out = evbuffer_new();
		sse_add_event_buffer(out, NULL, "message", msg);
		len = evbuffer_get_length(out);
		http_stream_write(st->conn, out);
		evbuffer_free(out);
		stream_check_reader(st, len);
		stream_budget();
		return;
	}

	st->seq++;
	snprintf(id, sizeof id, "%u-%u", st->no, st->seq);
	out = evbuffer_new();
	sse_add_event_buffer(out, id, "message", msg);
	len = evbuffer_get_length(out);
	if (st->kind == STREAM_POST && final) {
		st->done = 1;
		st->done_at = now_ms();
	}
	/* A final response handed to a connection needs no replay. */
	keep = st->conn == NULL || !(st->kind == STREAM_POST && final);
	if (keep) {
		ev = xcalloc(1, sizeof *ev);
		ev->seq = st->seq;
		ev->final = final;
		ev->len = len;
		ev->cost = len + STREAM_EVENT_COST;
		if (len >= STREAM_REF_MIN) {
			ev->buf = evbuffer_new();
			evbuffer_add_buffer(ev->buf, out);
		} else {
			ev->text = xmalloc(len);
			evbuffer_copyout(out, ev->text, len);
		}
		TAILQ_INSERT_TAIL(&st->events, ev, entry);
		st->nevents++;
		st->bytes += ev->cost;
		stream_held += ev->cost;
		/*
		 * A standalone stream no client has opened yet keeps only a
		 * few events: enough for a client that opens it just after
		 * initializing, not a buffer per idle session.
		 */
		while (st->nevents > 1 && (st->nevents > STREAM_MAX_EVENTS ||
		    (st->kind == STREAM_GET && !st->opened &&
		    st->nevents > STREAM_MAX_UNOPENED) ||
		    (st->bytes > STREAM_MAX_BYTES &&
		    !TAILQ_FIRST(&st->events)->final)))
			stream_drop_oldest(st);
		if (st->conn != NULL && ev->buf != NULL)
			evbuffer_add_buffer_reference(out, ev->buf);
	}
	if (st->conn != NULL) {
		st->sent = st->seq;
		http_stream_write(st->conn, out);
		if (st->done) {
			stream_end_conn(st);
			stream_destroy(st);
			evbuffer_free(out);
			return;
		}
		stream_check_reader(st, len);
	}
	evbuffer_free(out);
	if (st->done && st->conn == NULL)
		stream_trim(st->session);
	stream_budget();
}

void
stream_resume(struct stream *st, struct http_conn *c, uint32_t after,
    int have_last)
{
	struct stream_event	*ev;
	uint32_t		 from;

	if (st->conn != NULL) {
		log_debug("session %.8s: stream %u taken over by a new "
		    "connection", st->session->id, st->no);
		stream_end_conn(st);
	}
	from = have_last ? after : st->sent;
	if (have_last && !TAILQ_EMPTY(&st->events) &&
	    TAILQ_FIRST(&st->events)->seq > after + 1)
		log_warnx("session %.8s: stream %u lost events %u to %u "
		    "(replay buffer overflowed)", st->session->id, st->no,
		    after + 1, TAILQ_FIRST(&st->events)->seq - 1);
	stream_start(st, c, from);
	TAILQ_FOREACH(ev, &st->events, entry) {
		if (ev->seq <= from)
			continue;
		stream_write_event(c, ev);
		if (ev->seq > st->sent)
			st->sent = ev->seq;
	}
	if (st->done && st->sent == st->seq) {
		stream_end_conn(st);
		stream_destroy(st);
	}
}

void
stream_expire(struct session *s, int64_t now)
{
	struct stream	*st, *next;

	for (st = TAILQ_FIRST(&s->streams); st != NULL; st = next) {
		next = TAILQ_NEXT(st, entry);
		if (st->done && st->conn == NULL &&
		    now - st->done_at > STREAM_KEEP_MS) {
			log_warnx("session %.8s: stream %u expired with %zu "
			    "undelivered events", s->id, st->no, st->nevents);
			stream_destroy(st);
		}
	}
}
