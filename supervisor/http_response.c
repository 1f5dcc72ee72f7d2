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
static unsigned int		heartbeat_tick;

/*
 * Write an SSE comment on every event stream that has carried nothing for
 * about sse_heartbeat seconds, so that proxies and clients with idle
 * timeouts keep it open and a peer that is gone is noticed.
 */
static void
http_heartbeat_cb(evutil_socket_t fd, short events, void *arg)
{
	static const char	 beat[] = "d\r\n: keepalive\n\n\r\n";
	struct http_conn	*c;

	heartbeat_tick++;
	TAILQ_FOREACH(c, &http_conns, entry) {
		if (c->state != HC_STREAMING ||
		    heartbeat_tick - c->wrote_tick < HTTP_HEARTBEAT_TICKS)
			continue;
		evbuffer_add(iochan_output(c->ch), beat, sizeof beat - 1);
		c->wrote_tick = heartbeat_tick;
	}
	log_flush_suppressed();
}

/* Start, change or stop the heartbeat timer (sse_heartbeat). */
void
http_heartbeat_configure(void)
{
	struct timeval	tv;
	unsigned int	ms;

	if (heartbeat_ev == NULL && (heartbeat_ev = event_new(base, -1,
	    EV_PERSIST, http_heartbeat_cb, NULL)) == NULL)
		fatalx("event_new");
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

void
http_stream_end(struct http_conn *c)
{
	if (c->state != HC_STREAMING)
		fatalx("%s: not streaming", __func__);
	evbuffer_add(iochan_output(c->ch), "0\r\n\r\n", 5);
	c->state = HC_HANDLING;
	http_done(c);
}

void
http_set_stream(struct http_conn *c, struct stream *st)
{
	c->stream = st;
}
