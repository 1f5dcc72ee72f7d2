/* SPDX-License-Identifier: ISC */
/*
 * Writing responses: the status line and headers, whole replies, chunked
 * event streams, and the heartbeat that keeps idle event streams open.
 */
#include "config.h"

#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "http_priv.h"
#include "iochan.h"
#include "log.h"

static struct event		*heartbeat_ev;
static unsigned int		 heartbeat_tick;
/* Event streams by phase; a stream is looked at in its phase's ticks. */
static TAILQ_HEAD(, http_conn)	 beat_lists[HTTP_HEARTBEAT_PHASES] = {
	TAILQ_HEAD_INITIALIZER(beat_lists[0]),
	TAILQ_HEAD_INITIALIZER(beat_lists[1]),
	TAILQ_HEAD_INITIALIZER(beat_lists[2]),
	TAILQ_HEAD_INITIALIZER(beat_lists[3])
};
static unsigned int		 beat_phase_next;
static unsigned int		 nstreams_by_kind[STREAM_NKINDS];
static struct http_conn		*beat_cursor;	/* the walk's next stream */
static struct event		*beat_more_ev;	/* goes on with the walk */

/* Put an event stream on the list of a phase of its own. */
static void
http_heartbeat_add(struct http_conn *c)
{
	unsigned int	phase;

	if (c->on_beat != 0)
		return;
	phase = beat_phase_next++ % HTTP_HEARTBEAT_PHASES;
	c->on_beat = phase + 1;
	TAILQ_INSERT_TAIL(&beat_lists[phase], c, beat_entry);
}

void
http_heartbeat_forget(struct http_conn *c)
{
	if (c->on_beat == 0)
		return;
	if (beat_cursor == c)
		beat_cursor = TAILQ_NEXT(c, beat_entry);
	TAILQ_REMOVE(&beat_lists[c->on_beat - 1], c, beat_entry);
	c->on_beat = 0;
}

static void	http_heartbeat_walk(void);

static void
http_heartbeat_more_cb(evutil_socket_t fd, short events, void *arg)
{
	http_heartbeat_walk();
}

/*
 * Write an SSE comment on the streams of this tick's phase that have
 * carried nothing for HTTP_HEARTBEAT_DUE ticks, so that proxies and
 * clients with idle timeouts keep them open and a peer that is gone is
 * noticed.  Phases keep streams that a broadcast wrote at the same moment
 * from all falling due at once, and no turn of the loop writes more than
 * HTTP_HEARTBEAT_WORK allows: the rest waits for the next turn, so no
 * call waits behind thousands of heartbeats.
 */
static void
http_heartbeat_walk(void)
{
	static const char	 beat[] = "d\r\n: keepalive\n\n\r\n";
	static const struct timeval now = { 0, 0 };
	struct http_conn	*c;
	unsigned int		 work = 0;

	while ((c = beat_cursor) != NULL) {
		if (work >= HTTP_HEARTBEAT_WORK) {
			if (beat_more_ev == NULL)
				beat_more_ev = evtimer_new(base,
				    http_heartbeat_more_cb, NULL);
			evtimer_add(beat_more_ev, &now);
			return;
		}
		beat_cursor = TAILQ_NEXT(c, beat_entry);
		work++;
		if (c->state != HC_STREAMING) {
			http_heartbeat_forget(c);
			continue;
		}
		if (c->doomed ||
		    heartbeat_tick - c->wrote_tick < HTTP_HEARTBEAT_DUE)
			continue;
		evbuffer_add(iochan_output(c->ch), beat, sizeof beat - 1);
		c->wrote_tick = heartbeat_tick;
		work += 32;
	}
}

static void
http_heartbeat_cb(evutil_socket_t fd, short events, void *arg)
{
	heartbeat_tick++;
	beat_cursor = TAILQ_FIRST(&beat_lists[heartbeat_tick %
	    HTTP_HEARTBEAT_PHASES]);
	http_heartbeat_walk();
	log_flush_suppressed();
}

/* Start, change or stop the heartbeat timer (sse_heartbeat). */
void
http_heartbeat_configure(void)
{
	struct timeval	tv;
	unsigned int	ms;

	if (heartbeat_ev == NULL)
		heartbeat_ev = event_new(base, -1, EV_PERSIST,
		    http_heartbeat_cb, NULL);
	if (conf->sse_heartbeat == 0) {
		evtimer_del(heartbeat_ev);
		return;
	}
	ms = conf->sse_heartbeat * 1000 / HTTP_HEARTBEAT_TICKS;
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	evtimer_add(heartbeat_ev, &tv);
}

/* Stop the heartbeat timer and free it (the listeners are closing). */
void
http_heartbeat_free(void)
{
	if (heartbeat_ev != NULL) {
		event_free(heartbeat_ev);
		heartbeat_ev = NULL;
	}
	if (beat_more_ev != NULL) {
		event_free(beat_more_ev);
		beat_more_ev = NULL;
	}
	beat_cursor = NULL;
}

/* Write a status line and common headers. */
static void
http_head_out(struct http_conn *c, int status, const char *ctype,
    const char *extra)
{
	struct evbuffer	*out = iochan_output(c->ch);

	/* A request refused at the HTTP level: one access log line. */
	if (status >= 400 && !c->nolog)
		access_log_http(c->peer, c->method != NULL ? c->method : "-",
		    c->path != NULL ? c->path : "-", status, NULL);
	evbuffer_add_printf(out, "HTTP/1.1 %d %s\r\n", status,
	    http_reason(status));
	if (ctype != NULL)
		evbuffer_add_printf(out, "Content-Type: %s\r\n", ctype);
	if (extra != NULL)
		evbuffer_add(out, extra, strlen(extra));
	/* A browser's page reads it, and the headers a client needs. */
	if (c->req.cors != NULL)
		evbuffer_add_printf(out, "Access-Control-Allow-Origin: %.*s\r\n"
		    "Access-Control-Expose-Headers: Mcp-Session-Id, "
		    "MCP-Protocol-Version, WWW-Authenticate\r\n"
		    "Vary: Origin\r\n", (int)c->req.cors->valuelen,
		    c->req.cors->value);
	if (!c->keepalive)
		evbuffer_add(out, "Connection: close\r\n", 19);
}

/* Is the request being answered a HEAD? */
static int
http_is_head(const struct http_conn *c)
{
	return (c->method != NULL && strcmp(c->method, "HEAD") == 0);
}

void
http_reply(struct http_conn *c, int status, const char *ctype,
    const char *extra, const char *body, size_t len)
{
	struct evbuffer	*out = iochan_output(c->ch);

	if (c->state != HC_HANDLING)
		fatalx("%s: no request to answer", __func__);
	http_head_out(c, status, ctype, extra);
	evbuffer_add_printf(out, "Content-Length: %zu\r\n\r\n", len);
	/* The answer to HEAD has the headers of the body, not the body. */
	if (len != 0 && !http_is_head(c))
		evbuffer_add(out, body, len);
	http_done(c);
}

void
http_reply_buffer(struct http_conn *c, int status, const char *ctype,
    const char *extra, struct evbuffer *body)
{
	struct evbuffer	*out = iochan_output(c->ch);

	if (c->state != HC_HANDLING)
		fatalx("%s: no request to answer", __func__);
	http_head_out(c, status, ctype, extra);
	evbuffer_add_printf(out, "Content-Length: %zu\r\n\r\n",
	    evbuffer_get_length(body));
	if (http_is_head(c))
		evbuffer_drain(body, evbuffer_get_length(body));
	else
		evbuffer_add_buffer(out, body);
	http_done(c);
}

void
http_stream_start(struct http_conn *c, const char *extra)
{
	struct evbuffer	*out = iochan_output(c->ch);

	if (c->state != HC_HANDLING)
		fatalx("%s: no request to answer", __func__);
	http_head_out(c, 200, "text/event-stream", extra);
	evbuffer_add_printf(out, "Cache-Control: no-cache\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n");
	c->state = HC_STREAMING;
	c->wrote_tick = heartbeat_tick;
	http_heartbeat_add(c);
}

void
http_stream_write(struct http_conn *c, struct evbuffer *data)
{
	struct evbuffer	*out = iochan_output(c->ch);
	size_t		 len = evbuffer_get_length(data);

	if (c->state != HC_STREAMING)
		fatalx("%s: not streaming", __func__);
	if (len == 0 || c->doomed) {
		/* A connection about to close takes no more. */
		evbuffer_drain(data, len);
		return;
	}
	c->wrote_tick = heartbeat_tick;
	evbuffer_add_printf(out, "%zx\r\n", len);
	/* A small chunk is copied, so many of them share the output's
	 * chains; a large one is moved (or referenced), never copied. */
	if (len < HTTP_COPY_MAX) {
		evbuffer_add(out, evbuffer_pullup(data, -1), len);
		evbuffer_drain(data, len);
	} else
		evbuffer_add_buffer(out, data);
	evbuffer_add(out, "\r\n", 2);
}

/* Format a chunk's size line ("<hex>\r\n") into buf; its length. */
static size_t
http_chunk_line(char *buf, size_t len)
{
	static const char	 hex[] = "0123456789abcdef";
	char			 digits[2 * sizeof len];
	size_t			 n = 0, k = 0;

	do {
		digits[k++] = hex[len & 0xf];
		len >>= 4;
	} while (len != 0);
	while (k > 0)
		buf[n++] = digits[--k];
	buf[n++] = '\r';
	buf[n++] = '\n';
	return (n);
}

void
http_stream_write_parts(struct http_conn *c, const char *prefix, size_t plen,
    const char *data, size_t len, struct evbuffer *ref)
{
	static char	 chunk[HTTP_COPY_MAX + 64];
	struct evbuffer	*out = iochan_output(c->ch);
	size_t		 total, n;

	if (c->state != HC_STREAMING)
		fatalx("%s: not streaming", __func__);
	if (ref != NULL) {
		len = evbuffer_get_length(ref);
		/* A small one is copied, as http_stream_write does. */
		if (len < HTTP_COPY_MAX) {
			data = (const char *)evbuffer_pullup(ref, -1);
			ref = NULL;
		}
	}
	if (plen > 64 - 2 * sizeof total - 2)
		fatalx("%s: prefix too long", __func__);
	total = plen + len;
	if (total == 0 || c->doomed)
		return;
	c->wrote_tick = heartbeat_tick;
	n = http_chunk_line(chunk, total);
	if (plen > 0)
		memcpy(chunk + n, prefix, plen);
	if (ref == NULL && n + total + 2 <= sizeof chunk) {
		/* One addition: the whole chunk in one piece. */
		if (len > 0)
			memcpy(chunk + n + plen, data, len);
		memcpy(chunk + n + total, "\r\n", 2);
		evbuffer_add(out, chunk, n + total + 2);
		return;
	}
	evbuffer_add(out, chunk, n + plen);
	if (ref != NULL)
		evbuffer_add_buffer_reference(out, ref);
	else
		evbuffer_add(out, data, len);
	evbuffer_add(out, "\r\n", 2);
}

void
http_stream_end(struct http_conn *c)
{
	if (c->state != HC_STREAMING)
		fatalx("%s: not streaming", __func__);
	evbuffer_add(iochan_output(c->ch), "0\r\n\r\n", 5);
	http_heartbeat_forget(c);
	c->state = HC_HANDLING;
	http_done(c);
}

void
http_set_stream(struct http_conn *c, struct stream *st)
{
	if (c->stream != NULL)
		nstreams_by_kind[c->stream->kind]--;
	c->stream = st;
	if (st != NULL)
		nstreams_by_kind[st->kind]++;
}

unsigned int
http_stream_count(int kind)
{
	return (nstreams_by_kind[kind]);
}
