/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "sse.h"
#include "xmalloc.h"

/* Append one event's id and event lines. */
static void
sse_add_head(struct evbuffer *out, const char *id, const char *event)
{
	if (id != NULL)
		evbuffer_add_printf(out, "id: %s\n", id);
	if (event != NULL)
		evbuffer_add_printf(out, "event: %s\n", event);
}

/* Append data lines for p[0..n), one per line of the payload. */
static void
sse_add_data(struct evbuffer *out, const char *p, size_t n)
{
	size_t	pos = 0, end;

	do {
		end = pos;
		while (end < n && p[end] != '\n' && p[end] != '\r')
			end++;
		evbuffer_add(out, "data: ", 6);
		evbuffer_add(out, p + pos, end - pos);
		evbuffer_add(out, "\n", 1);
		if (end < n && p[end] == '\r' && end + 1 < n &&
		    p[end + 1] == '\n')
			end++;
		pos = end + 1;
	} while (pos <= n && end < n);
}

void
sse_add_event(struct evbuffer *out, const char *id, const char *event,
    const char *data, size_t len)
{
	sse_add_head(out, id, event);
	sse_add_data(out, data, len);
	evbuffer_add(out, "\n", 1);
}

void
sse_add_event_buffer(struct evbuffer *out, const char *id, const char *event,
    struct evbuffer *src)
{
	struct evbuffer_ptr	 nl, cr;
	size_t			 len = evbuffer_get_length(src);
	unsigned char		*p;

	nl = evbuffer_search(src, "\n", 1, NULL);
	cr = evbuffer_search(src, "\r", 1, NULL);
	if (nl.pos < 0 && cr.pos < 0) {
		/* One line: move the buffer without copying. */
		sse_add_head(out, id, event);
		evbuffer_add(out, "data: ", 6);
		evbuffer_add_buffer(out, src);
		evbuffer_add(out, "\n\n", 2);
		return;
	}
	p = evbuffer_pullup(src, -1);
	sse_add_event(out, id, event, (const char *)p, len);
	evbuffer_drain(src, len);
}

void
sse_add_retry(struct evbuffer *out, unsigned int ms)
{
	evbuffer_add_printf(out, "retry: %u\n\n", ms);
}

/* Append bytes to a parser buffer, keeping a NUL after them. */
static int
sbuf_add(struct sse_buf *b, const char *p, size_t n, size_t max)
{
	size_t	cap;

	if (b->len + n > max)
		return (-1);
	if (b->len + n + 1 > b->cap) {
		cap = b->cap == 0 ? 128 : b->cap;
		while (cap < b->len + n + 1)
			cap *= 2;
		b->p = xreallocarray(b->p, 1, cap);
		b->cap = cap;
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
	b->p[b->len] = '\0';
	return (0);
}

/* Empty a parser buffer. */
static void
sbuf_clear(struct sse_buf *b)
{
	b->len = 0;
	if (b->p != NULL)
		b->p[0] = '\0';
}

void
sse_parser_init(struct sse_parser *sp, size_t max)
{
	memset(sp, 0, sizeof *sp);
	sp->max = max;
	sp->retry = -1;
}

void
sse_parser_free(struct sse_parser *sp)
{
	free(sp->line.p);
	free(sp->data.p);
	free(sp->event.p);
	free(sp->id.p);
	memset(sp, 0, sizeof *sp);
}

/* Dispatch the event being built, if any. */
static void
sse_dispatch(struct sse_parser *sp, sse_cb cb, void *arg)
{
	struct sse_event	ev;

	if (sp->has_data || sp->retry >= 0) {
		ev.event = sp->event.len != 0 ? sp->event.p : "message";
		if (sp->data.len != 0 && sp->data.p[sp->data.len - 1] == '\n')
			sp->data.p[--sp->data.len] = '\0';
		ev.data = sp->data.p != NULL ? sp->data.p : "";
		ev.datalen = sp->data.len;
		ev.id = sp->id.p != NULL ? sp->id.p : "";
		ev.retry = sp->retry;
		cb(&ev, arg);
	}
	sbuf_clear(&sp->data);
	sbuf_clear(&sp->event);
	sp->has_data = 0;
	sp->retry = -1;
}

/* Process one complete line (without its end). */
static int
sse_line(struct sse_parser *sp, sse_cb cb, void *arg)
{
	char		*line = sp->line.p != NULL ? sp->line.p : "";
	size_t		 len = sp->line.len, flen, i;
	const char	*value;
	size_t		 vlen;
	long		 retry;

	if (len == 0) {
		sse_dispatch(sp, cb, arg);
		return (0);
	}
	if (line[0] == ':')
		return (0);
	value = memchr(line, ':', len);
	if (value == NULL) {
		flen = len;
		value = line + len;
		vlen = 0;
	} else {
		flen = (size_t)(value - line);
		value++;
		if (value < line + len && *value == ' ')
			value++;
		vlen = len - (size_t)(value - line);
	}
	if (flen == 4 && memcmp(line, "data", 4) == 0) {
		if (sbuf_add(&sp->data, value, vlen, sp->max) != 0 ||
		    sbuf_add(&sp->data, "\n", 1, sp->max) != 0)
			return (-1);
		sp->has_data = 1;
	} else if (flen == 5 && memcmp(line, "event", 5) == 0) {
		sbuf_clear(&sp->event);
		if (sbuf_add(&sp->event, value, vlen, sp->max) != 0)
			return (-1);
		/* A type is a C string to the reader: a NUL must not cut
		 * "message\0x" down to "message". */
		for (i = 0; i < sp->event.len; i++) {
			if (sp->event.p[i] == '\0')
				sp->event.p[i] = '?';
		}
	} else if (flen == 2 && memcmp(line, "id", 2) == 0) {
		if (memchr(value, '\0', vlen) == NULL) {
			sbuf_clear(&sp->id);
			if (sbuf_add(&sp->id, value, vlen, 1024) != 0)
				return (-1);
		}
	} else if (flen == 5 && memcmp(line, "retry", 5) == 0) {
		retry = 0;
		for (i = 0; i < vlen; i++) {
			if (value[i] < '0' || value[i] > '9' ||
			    retry > 100000000L)
				return (0);
			retry = retry * 10 + (value[i] - '0');
		}
		if (vlen > 0)
			sp->retry = retry;
	}
	return (0);
}

int
sse_parse(struct sse_parser *sp, const char *p, size_t n, sse_cb cb,
    void *arg)
{
	static const char	bom[] = "\xef\xbb\xbf";
	size_t			pos = 0, end, k;

	/*
	 * Skip a BOM at the start of the stream, even one split over calls:
	 * started is 0 before the first byte, -k after k bytes of a BOM, and
	 * 1 once past it.  Bytes that only looked like a BOM are line text.
	 */
	while (sp->started <= 0 && pos < n) {
		k = (size_t)-sp->started;
		if (p[pos] == bom[k]) {
			pos++;
			sp->started = k + 1 == 3 ? 1 : -(int)(k + 1);
			continue;
		}
		sp->started = 1;
		if (sbuf_add(&sp->line, bom, k, sp->max) != 0)
			return (-1);
	}
	while (pos < n) {
		if (sp->after_cr) {
			sp->after_cr = 0;
			if (p[pos] == '\n') {
				pos++;
				continue;
			}
		}
		end = pos;
		while (end < n && p[end] != '\n' && p[end] != '\r')
			end++;
		if (sbuf_add(&sp->line, p + pos, end - pos, sp->max) != 0)
			return (-1);
		if (end == n)
			break;
		if (p[end] == '\r')
			sp->after_cr = 1;
		if (sse_line(sp, cb, arg) != 0)
			return (-1);
		sbuf_clear(&sp->line);
		pos = end + 1;
	}
	return (0);
}
