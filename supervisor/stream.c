#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "log.h"
#include "sse.h"
#include "supervisor.h"
#include "xmalloc.h"

/* Create a stream of a session, answering on a connection. */
struct stream *
stream_new(struct session *s, enum stream_kind kind, struct http_conn *c)
{
	struct stream	*st;

	st = xcalloc(1, sizeof *st);
	st->session = s;
	st->no = ++s->next_stream;
	st->kind = kind;
	st->conn = c;
	if (c != NULL)
		http_set_stream(c, st);
	TAILQ_INSERT_TAIL(&s->streams, st, entry);
	s->nstreams++;
	return (st);
}

/* Free a stream, closing its connection if a response is still owed. */
void
stream_free(struct stream *st)
{
	struct http_conn	*c = st->conn;

	TAILQ_REMOVE(&st->session->streams, st, entry);
	st->session->nstreams--;
	st->conn = NULL;
	if (c != NULL) {
		http_set_stream(c, NULL);
		http_conn_close(c);
	}
	free(st);
}

/* The connection went away; a JSON stream has nowhere left to answer. */
void
stream_detach(struct stream *st)
{
	st->conn = NULL;
	if (st->kind == STREAM_JSON || st->done) {
		TAILQ_REMOVE(&st->session->streams, st, entry);
		st->session->nstreams--;
		free(st);
	}
}

/* Send one message on a stream. */
void
stream_send(struct stream *st, struct evbuffer *msg, int final)
{
	struct http_conn	*c = st->conn;
	struct evbuffer		*ev;
	char			 id[32];

	if (st->kind == STREAM_JSON) {
		if (!final) {
			log_debug("session %.8s: no stream for a message, "
			    "dropped", st->session->id);
			evbuffer_drain(msg, evbuffer_get_length(msg));
			return;
		}
		if (c == NULL) {
			log_debug("session %.8s: client gone, response "
			    "dropped", st->session->id);
			evbuffer_drain(msg, evbuffer_get_length(msg));
			TAILQ_REMOVE(&st->session->streams, st, entry);
			st->session->nstreams--;
			free(st);
			return;
		}
		st->conn = NULL;
		http_set_stream(c, NULL);
		TAILQ_REMOVE(&st->session->streams, st, entry);
		st->session->nstreams--;
		free(st);
		http_reply_buffer(c, 200, "application/json", NULL, msg);
		return;
	}

	if (c == NULL) {
		evbuffer_drain(msg, evbuffer_get_length(msg));
		return;
	}
	ev = evbuffer_new();
	snprintf(id, sizeof id, "%u", st->no);
	sse_add_event_buffer(ev, NULL, "message", msg);
	http_stream_write(c, ev);
	evbuffer_free(ev);
	if (final) {
		st->done = 1;
		st->conn = NULL;
		http_set_stream(c, NULL);
		http_stream_end(c);
		TAILQ_REMOVE(&st->session->streams, st, entry);
		st->session->nstreams--;
		free(st);
	}
}
