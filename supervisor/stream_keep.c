/* SPDX-License-Identifier: ISC */
/*
 * What streams keep for Last-Event-ID replay, and max_buffered: every
 * kept event and every connection's unread output together.
 *
 * Past max_buffered something must go, and finding it must not cost a
 * walk over every stream or connection (once it did: each trim walked
 * them all to free one stream's events, and a gateway with 100,000
 * sessions stalled for minutes per notification).  In order:
 *
 *   1. spare events, oldest first, from one list across all streams: the
 *      standalone stream's events already delivered (kept only for a
 *      short resumption window) and those of a standalone stream no
 *      client has opened yet;
 *   2. the connection furthest behind, from a heap of those at least
 *      HTTP_SLOW_MIN behind (http.c): cut, its events stay;
 *   3. the stream owed the most, from a heap by owed bytes: it drops the
 *      older half of its events (at least one), so equal streams do not
 *      take a heap operation per event.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "heap.h"
#include "log.h"
#include "stream_priv.h"
#include "xmalloc.h"

/* Bytes held for replay by every stream (their real cost). */
static size_t			 stream_held;
/* Spare events of every stream, oldest first. */
static TAILQ_HEAD(, stream_event) spares = TAILQ_HEAD_INITIALIZER(spares);
/* Streams with owed events, by owed bytes. */
static struct heap		 owed_heap;
static int			 owed_heap_ready;

size_t
stream_held_bytes(void)
{
	return (stream_held);
}

size_t
stream_event_size(const struct stream_event *ev)
{
	return (ev->body->len + STREAM_EVENT_COST);
}

static uint64_t
stream_owed_key(const void *p)
{
	return (((const struct stream *)p)->owed);
}

/* A stream's owed bytes changed: keep it in the heap, or take it out. */
static void
stream_owed_changed(struct stream *st)
{
	if (!owed_heap_ready) {
		heap_init(&owed_heap, stream_owed_key,
		    offsetof(struct stream, heap_pos));
		owed_heap_ready = 1;
	}
	if (st->owed == 0)
		heap_remove(&owed_heap, st);
	else if (heap_has(&owed_heap, st))
		heap_update(&owed_heap, st);
	else
		heap_insert(&owed_heap, st);
}

struct stream_body *
stream_body_new(struct evbuffer *out)
{
	struct stream_body	*b;
	size_t			 len = evbuffer_get_length(out);

	if (len >= STREAM_REF_MIN) {
		b = xcalloc(1, sizeof *b);
		b->buf = evbuffer_new();
		evbuffer_add_buffer(b->buf, out);
	} else {
		b = xmalloc(sizeof *b + len);
		b->buf = NULL;
		evbuffer_remove(out, b->text, len);
	}
	b->refs = 1;
	b->lent = 0;
	b->len = len;
	stream_held += len + STREAM_BODY_COST;
	return (b);
}

struct stream_body *
stream_body_ref(struct stream_body *b)
{
	b->refs++;
	return (b);
}

void
stream_body_lend(struct stream_body *b)
{
	if (b->buf == NULL || b->lent)
		return;
	b->lent = 1;
	stream_held -= b->len;
}

void
stream_body_unlend(struct stream_body *b)
{
	if (!b->lent)
		return;
	b->lent = 0;
	stream_held += b->len;
}

void
stream_body_unref(struct stream_body *b)
{
	if (--b->refs > 0)
		return;
	stream_held -= (b->lent ? 0 : b->len) + STREAM_BODY_COST;
	if (b->buf != NULL)
		evbuffer_free(b->buf);
	free(b);
}

size_t
stream_id_line(char *buf, uint32_t no, uint32_t seq)
{
	char		 digits[10];
	size_t		 n = 0, k;
	uint32_t	 v;
	int		 part;

	memcpy(buf, "id: ", 4);
	n = 4;
	for (part = 0; part < 2; part++) {
		v = part == 0 ? no : seq;
		k = 0;
		do {
			digits[k++] = (char)('0' + v % 10);
			v /= 10;
		} while (v != 0);
		while (k > 0)
			buf[n++] = digits[--k];
		buf[n++] = part == 0 ? '-' : '\n';
	}
	return (n);
}

void
stream_body_write(struct http_conn *c, const char *id, size_t idlen,
    struct stream_body *b)
{
	if (b->buf != NULL)
		http_stream_write_parts(c, id, idlen, NULL, 0, b->buf);
	else
		http_stream_write_parts(c, id, idlen, b->text, b->len, NULL);
}

/* Put an event on the spare list. */
static void
stream_spare_add(struct stream_event *ev)
{
	ev->spare = 1;
	ev->stream->nspare++;
	TAILQ_INSERT_TAIL(&spares, ev, spare_entry);
}

/* Take an event off the spare list: it is owed. */
static void
stream_spare_remove(struct stream_event *ev)
{
	struct stream	*st = ev->stream;

	TAILQ_REMOVE(&spares, ev, spare_entry);
	ev->spare = 0;
	st->nspare--;
	st->owed += stream_event_size(ev);
	stream_owed_changed(st);
}

struct stream_event *
stream_keep(struct stream *st, struct stream_body *b, uint32_t seq,
    int final, int spare)
{
	struct stream_event	*ev;

	ev = xmalloc(sizeof *ev);
	ev->stream = st;
	ev->body = stream_body_ref(b);
	ev->seq = seq;
	ev->final = final != 0;
	ev->spare = 0;
	ev->wire_end = 0;
	TAILQ_INSERT_TAIL(&st->events, ev, entry);
	st->nevents++;
	st->bytes += stream_event_size(ev);
	stream_held += STREAM_EVENT_COST;
	if (spare)
		stream_spare_add(ev);
	else {
		st->owed += stream_event_size(ev);
		stream_owed_changed(st);
	}
	return (ev);
}

void
stream_event_spare(struct stream_event *ev)
{
	struct stream	*st = ev->stream;

	if (ev->spare)
		return;
	st->owed -= stream_event_size(ev);
	stream_owed_changed(st);
	stream_spare_add(ev);
}

void
stream_event_written(struct stream_event *ev, struct http_conn *c)
{
	struct stream	*st = ev->stream;

	if (ev->spare)
		stream_spare_remove(ev);
	/* A connection about to close takes nothing: never passed. */
	ev->wire_end = http_conn_doomed(c) ? UINT64_MAX : http_conn_offset(c);
	if (st->unpassed == NULL)
		st->unpassed = ev;
}

int
stream_passed(struct stream *st, uint64_t passed)
{
	struct stream_event	*ev;
	int			 n = 0;

	while ((ev = st->unpassed) != NULL && ev->wire_end <= passed) {
		st->unpassed = TAILQ_NEXT(ev, entry);
		if (st->kind == STREAM_GET)
			stream_event_spare(ev);
		n++;
	}
	return (n);
}

void
stream_unpassed_lost(struct stream *st)
{
	struct stream_event	*ev;

	if (st->unpassed == NULL)
		return;
	if (st->unpassed->seq <= st->sent)
		st->sent = st->unpassed->seq - 1;
	for (ev = st->unpassed; ev != NULL; ev = TAILQ_NEXT(ev, entry))
		stream_body_unlend(ev->body);
	st->unpassed = NULL;
}

/* Drop one kept event of a stream. */
static void
stream_drop_event(struct stream_event *ev)
{
	struct stream	*st = ev->stream;

	if (st->unpassed == ev)
		st->unpassed = TAILQ_NEXT(ev, entry);
	if (ev->seq > st->dropped)
		st->dropped = ev->seq;
	TAILQ_REMOVE(&st->events, ev, entry);
	st->nevents--;
	st->bytes -= stream_event_size(ev);
	if (ev->spare) {
		TAILQ_REMOVE(&spares, ev, spare_entry);
		st->nspare--;
	} else {
		st->owed -= stream_event_size(ev);
		stream_owed_changed(st);
	}
	stream_held -= STREAM_EVENT_COST;
	stream_body_unref(ev->body);
	free(ev);
}

void
stream_drop_oldest(struct stream *st)
{
	stream_drop_event(TAILQ_FIRST(&st->events));
}

void
stream_keep_clear(struct stream *st)
{
	while (!TAILQ_EMPTY(&st->events))
		stream_drop_oldest(st);
	if (owed_heap_ready)
		heap_remove(&owed_heap, st);
}

/* Are all kept events and unread output over max_buffered? */
static int
stream_over(void)
{
	return (stream_held + http_stream_queued() > conf->max_buffered);
}

/*
 * Keep the bytes held within max_buffered, in the order above.  Run from
 * the loop, never inside a send: closing a connection may end a legacy
 * session.
 */
static void
stream_budget_cb(evutil_socket_t fd, short events, void *arg)
{
	struct stream_event	*ev;
	struct http_conn	*c;
	struct stream		*st;
	size_t			 queued, dropped = 0, target;

	while (stream_over() && (ev = TAILQ_FIRST(&spares)) != NULL) {
		stream_drop_event(ev);
		dropped++;
	}
	if (dropped > 0)
		log_info("dropped %zu delivered or unopened standalone "
		    "stream events (streams hold more than max_buffered, %zu)",
		    dropped, conf->max_buffered);
	while (stream_over()) {
		if ((c = http_slowest(&queued)) != NULL &&
		    queued >= HTTP_SLOW_MIN) {
			log_warnx("http %s: %zu bytes behind while streams hold "
			    "more than max_buffered (%zu), closing its "
			    "connection", http_conn_peer(c), queued,
			    conf->max_buffered);
			http_conn_close(c);
			continue;
		}
		if (!owed_heap_ready ||
		    (st = heap_top(&owed_heap)) == NULL)
			return;
		/* The older half, at least one: bulk, not an event per
		 * heap operation when many streams hold alike. */
		target = st->owed / 2;
		dropped = 0;
		do {
			stream_drop_oldest(st);
			dropped++;
		} while (st->nevents > 0 && st->owed > target && stream_over());
		log_warnx("session %.8s: stream %u drops its %zu oldest events "
		    "(streams hold more than max_buffered, %zu)",
		    st->session->id, st->no, dropped, conf->max_buffered);
	}
}

void
stream_budget(void)
{
	static struct event	*ev;

	if (!stream_over())
		return;
	if (ev == NULL)
		ev = event_new(base, -1, 0, stream_budget_cb, NULL);
	event_active(ev, EV_TIMEOUT, 0);
}
