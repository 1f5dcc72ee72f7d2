/* SPDX-License-Identifier: ISC */
/*
 * Server-Sent Events: an encoder that writes events (splitting data at
 * line breaks so any payload is safe) and an incremental parser following
 * the WHATWG event-stream rules (CR, LF or CRLF line ends, BOM, comments,
 * id, event, data and retry fields), with a bound on event size.
 */
#ifndef MCPS_SSE_H
#define MCPS_SSE_H

#include <stddef.h>
#include <sys/types.h>

struct evbuffer;

/* Append one event; id and event may be NULL. */
void	sse_add_event(struct evbuffer *, const char *id, const char *event,
	    const char *data, size_t len);
/* Append one event whose data is all of src (moved; src is left empty). */
void	sse_add_event_buffer(struct evbuffer *, const char *id,
	    const char *event, struct evbuffer *src);
/* Append a retry field (milliseconds) as its own event block. */
void	sse_add_retry(struct evbuffer *, unsigned int ms);

/* A dispatched event; pointers are valid during the callback only. */
struct sse_event {
	const char	*event;		/* "message" if none was given */
	const char	*data;		/* NUL-terminated, trailing LF removed */
	size_t		 datalen;
	const char	*id;		/* the last event id, "" if none */
	long		 retry;		/* -1 unless this block set retry */
};

typedef void (*sse_cb)(const struct sse_event *, void *);

struct sse_buf {
	char	*p;
	size_t	 len;
	size_t	 cap;
};

struct sse_parser {
	struct sse_buf	line;
	struct sse_buf	data;
	struct sse_buf	event;
	struct sse_buf	id;		/* the last event id */
	int		has_data;
	int		after_cr;	/* skip a LF right after a CR */
	int		started;	/* a BOM may only come first */
	long		retry;
	size_t		max;		/* bound on one event's data */
};

void	sse_parser_init(struct sse_parser *, size_t max);
void	sse_parser_free(struct sse_parser *);
/*
 * Feed bytes, calling cb for each complete event.  Returns 0, or -1 if a
 * line or an event's data exceeded the bound (the parser is then unusable).
 */
int	sse_parse(struct sse_parser *, const char *p, size_t n, sse_cb cb,
	    void *arg);

#endif
