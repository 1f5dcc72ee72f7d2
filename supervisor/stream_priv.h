/* SPDX-License-Identifier: ISC */
/*
 * What the stream files share: the events a stream keeps for Last-Event-ID
 * replay, their bodies (shared between the streams a broadcast reaches),
 * and the accounting for max_buffered.  stream.c holds the streams,
 * stream_keep.c the events and the budget, broadcast.c the fan-out;
 * private to them.
 */
#ifndef MCPS_STREAM_PRIV_H
#define MCPS_STREAM_PRIV_H

#include <sys/queue.h>
#include <stddef.h>
#include <stdint.h>

#include "supervisor.h"

#define STREAM_MAX_EVENTS	1024	/* kept per stream */
#define STREAM_MAX_BYTES	(8 * 1024 * 1024)	/* and their size */
#define STREAM_CUT_BYTES	(4 * 1024 * 1024)	/* a reader this far
					   behind is cut: what it had not
					   had stays within the above */
#define STREAM_REF_MIN		16384	/* bodies this large are kept in an
					   evbuffer and sent by reference,
					   smaller ones copied */
#define STREAM_EVENT_COST	64	/* an event's own bookkeeping */
#define STREAM_BODY_COST	48	/* a body's */
#define STREAM_MAX_UNOPENED	4	/* events kept before a first GET */
#define STREAM_RESUME_EVENTS	16	/* delivered events the standalone
					   stream keeps for a resumption */
#define STREAM_ID_MAX		32	/* "id: <stream>-<seq>\n" */

/*
 * An event's body, "event: message\ndata: ...\n\n": what follows its id.
 * A broadcast formats it once and every stream it reaches refers to it.
 * A small one is plain bytes, copied into connections (an evbuffer of its
 * own would cost a 1 KiB chain, and a reference to it would keep that
 * alive in the output of a reader that stopped reading); a large one is
 * an evbuffer sent by reference, never copied.  Freed with its last
 * reference.
 */
struct stream_body {
	unsigned int		 refs;
	int			 lent;		/* an output holds it by
						   reference and counts it */
	size_t			 len;
	struct evbuffer		*buf;		/* large, or NULL */
	char			 text[];	/* small */
};

/*
 * One kept event.  The standalone stream's delivered events, and the
 * events of one no client has opened yet, are spare: on one list across
 * all streams, oldest first, the first to go when max_buffered is
 * reached.  Every other kept event is owed to a client that may resume,
 * and counts in its stream's owed bytes (the heap's key).
 *
 * Delivered means that the connection's output passed it to the kernel:
 * until then (wire_end past http_conn_passed) it is owed, as it is lost
 * with the connection.  A stream's events still in its connection's
 * output are the newest, from its unpassed event on.
 */
struct stream_event {
	struct stream		*stream;
	struct stream_body	*body;		/* a reference */
	uint32_t		 seq;
	uint8_t			 final;
	uint8_t			 spare;
	uint64_t		 wire_end;	/* its end in the output of the
						   connection it was last
						   written to (offset) */
	TAILQ_ENTRY(stream_event) entry;	/* the stream's, by seq */
	TAILQ_ENTRY(stream_event) spare_entry;
};

/* stream_keep.c */
/* A body from formatted event bytes (all of out is taken). */
struct stream_body	*stream_body_new(struct evbuffer *out);
struct stream_body	*stream_body_ref(struct stream_body *);
void			 stream_body_unref(struct stream_body *);
/*
 * A large body a connection's output refers to is counted there, not
 * twice (a call's response, the only event its stream sends there); given
 * back when the connection is lost.
 */
void			 stream_body_lend(struct stream_body *);
void			 stream_body_unlend(struct stream_body *);
/* Write an event to a connection: its id line, then its body. */
void			 stream_body_write(struct http_conn *,
			    const char *id, size_t idlen,
			    struct stream_body *);
/* Format an event's id line into buf (STREAM_ID_MAX); its length. */
size_t			 stream_id_line(char *, uint32_t no, uint32_t seq);
/* Keep an event on a stream (a new reference to body). */
struct stream_event	*stream_keep(struct stream *, struct stream_body *,
			    uint32_t seq, int final, int spare);
/* Drop a stream's oldest kept event. */
void			 stream_drop_oldest(struct stream *);
/* The bytes an event stands for in its stream's limits. */
size_t			 stream_event_size(const struct stream_event *);
/* An event was written to a connection: owed until its output passes
 * it on. */
void			 stream_event_written(struct stream_event *,
			    struct http_conn *);
/* The stream's connection passed this much of its output on: events up
 * to there are delivered (spare, on the standalone stream).  How many. */
int			 stream_passed(struct stream *, uint64_t passed);
/* The connection is lost: what its output held was never delivered, and
 * the stream's sent goes back to before it. */
void			 stream_unpassed_lost(struct stream *);
/* An owed event was delivered: it becomes spare. */
void			 stream_event_spare(struct stream_event *);
/* Drop every event a stream keeps, and take it out of the heap. */
void			 stream_keep_clear(struct stream *);

/* stream.c */
/* Send without catching up on broadcasts first (broadcast.c does). */
void			 stream_send_direct(struct stream *,
			    struct evbuffer *msg, int final);
/* Send a body prepared once (a standalone or legacy stream only). */
void			 stream_send_body(struct stream *,
			    struct stream_body *);

/* broadcast.c */
/* Bring a session up to date with the broadcasts it has not had. */
void			 broadcast_catch_up(struct session *);
/* Does the session have broadcasts to catch up on? */
int			 broadcast_behind(const struct session *);

#endif
