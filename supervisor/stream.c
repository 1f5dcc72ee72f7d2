#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

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
#define STREAM_MAX_BYTES	(4 * 1024 * 1024)
#define STREAM_RETRY_MS		1000	/* the retry field we send */
#define STREAM_KEEP_MS		(300 * 1000)	/* undelivered, complete */
#define STREAM_MAX_KEPT		16	/* such streams per session */
#define STREAM_MAX_UNOPENED	32	/* events kept before a first GET */

/* One formatted event ("id: ..\nevent: message\ndata: ..\n\n"). */
struct stream_event {
	uint32_t		 seq;
	int			 final;
	struct evbuffer		*buf;
	TAILQ_ENTRY(stream_event) entry;
};

/* Do clients of this session understand priming events? */
static int
stream_primes(const struct stream *st)
{
	return (strcmp(st->session->version, "2025-11-25") >= 0);
}

/* Drop the oldest kept event. */
static void
stream_drop_oldest(struct stream *st)
{
	struct stream_event	*ev = TAILQ_FIRST(&st->events);

	TAILQ_REMOVE(&st->events, ev, entry);
	st->nevents--;
	st->bytes -= evbuffer_get_length(ev->buf);
	evbuffer_free(ev->buf);
	free(ev);
}

/* Unlink and free a stream, leaving any connection alone. */
static void
stream_destroy(struct stream *st)
{
	route_stream_gone(st);
	while (!TAILQ_EMPTY(&st->events))
		stream_drop_oldest(st);
	TAILQ_REMOVE(&st->session->streams, st, entry);
	st->session->nstreams--;
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
	http_stream_start(c, NULL);
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
	st->no = kind == STREAM_GET ? 0 : ++s->next_stream;
	TAILQ_INIT(&st->events);
	TAILQ_INSERT_TAIL(&s->streams, st, entry);
	s->nstreams++;
	if (c == NULL)
		return (st);
	if (kind == STREAM_JSON) {
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
		http_conn_close(c);
	}
	stream_destroy(st);
}

struct stream *
stream_find(struct session *s, uint32_t no)
{
	struct stream	*st;

	TAILQ_FOREACH(st, &s->streams, entry) {
		if (st->no == no && st->kind != STREAM_JSON)
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
	if (st->kind == STREAM_LEGACY)
		session_free(st->session, "legacy SSE stream closed");
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
	case STREAM_POST:
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
	size_t	queued;

	if (st->conn == NULL)
		return;
	queued = http_conn_queued(st->conn);
	if (queued <= last || queued - last <= STREAM_MAX_BYTES)
		return;
	log_warnx("session %.8s: stream %u reader is %zu bytes behind, "
	    "closing its connection", st->session->id, st->no, queued);
	http_conn_close(st->conn);
}

/* Send on a JSON stream: only the final response has a place. */
static void
stream_send_json(struct stream *st, struct evbuffer *msg, int final)
{
	struct http_conn	*c = st->conn;

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
	stream_destroy(st);
	if (c != NULL)
		http_reply_buffer(c, 200, "application/json", NULL, msg);
	else
		evbuffer_drain(msg, evbuffer_get_length(msg));
}

void
stream_send(struct stream *st, struct evbuffer *msg, int final)
{
	struct stream_event	*ev;
	struct evbuffer		*out;
	char			 id[32];
	size_t			 len;
	int			 keep;

	if (st->kind == STREAM_JSON) {
		stream_send_json(st, msg, final);
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
		ev->buf = evbuffer_new();
		evbuffer_add_buffer(ev->buf, out);
		TAILQ_INSERT_TAIL(&st->events, ev, entry);
		st->nevents++;
		st->bytes += len;
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
		if (st->conn != NULL)
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
}

void
stream_resume(struct stream *st, struct http_conn *c, uint32_t after,
    int have_last)
{
	struct stream_event	*ev;
	struct evbuffer		*out;
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
		out = evbuffer_new();
		evbuffer_add_buffer_reference(out, ev->buf);
		http_stream_write(c, out);
		evbuffer_free(out);
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
