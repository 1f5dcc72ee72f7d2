/* SPDX-License-Identifier: ISC */
/*
 * Fuzz the SSE parser and encoder.
 *
 * The input is parsed whole and in random pieces (sizes drawn from the
 * input): both must dispatch exactly the same events and fail the same
 * way.  Then the input is used as a payload: the encoder's output must
 * parse back to one event with the same data (line breaks normalised to
 * LF, the only kind SSE has), id and type.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "sse.h"

#define CHECK(x) do {							\
	if (!(x)) {							\
		fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__,	\
		    __LINE__, #x);					\
		abort();						\
	}								\
} while (0)

#define FUZZ_SSE_MAX	1024

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Record each event into an evbuffer, unambiguously. */
static void
record(const struct sse_event *ev, void *arg)
{
	struct evbuffer	*log = arg;
	size_t		 len;

	CHECK(ev->event != NULL && ev->data != NULL && ev->id != NULL);
	CHECK(ev->data[ev->datalen] == '\0');
	CHECK(ev->datalen <= FUZZ_SSE_MAX);
	CHECK(ev->retry >= -1);
	/*
	 * ev->event is a C string, so a type holding a NUL reaches the
	 * reader cut at the NUL (possibly ""); that is all it can check.
	 */
	len = strlen(ev->event);
	evbuffer_add(log, &len, sizeof len);
	evbuffer_add(log, ev->event, len);
	evbuffer_add(log, &ev->datalen, sizeof ev->datalen);
	evbuffer_add(log, ev->data, ev->datalen);
	len = strlen(ev->id);
	evbuffer_add(log, &len, sizeof len);
	evbuffer_add(log, ev->id, len);
	evbuffer_add(log, &ev->retry, sizeof ev->retry);
}

/* Parse in pieces with sizes from seed; 0 pieces means whole. */
static int
parse(const char *p, size_t n, const uint8_t *seed, size_t nseed,
    struct evbuffer *log)
{
	struct sse_parser	sp;
	size_t			pos = 0, piece, i = 0;
	int			r = 0;

	sse_parser_init(&sp, FUZZ_SSE_MAX);
	if (nseed == 0)
		r = sse_parse(&sp, p, n, record, log);
	while (nseed != 0 && pos < n && r == 0) {
		piece = seed[i++ % nseed] % 9;
		if (piece == 0) {
			/* An empty call changes nothing. */
			CHECK(sse_parse(&sp, p + pos, 0, record, log) == 0);
			piece = 1;
		}
		if (piece > n - pos)
			piece = n - pos;
		r = sse_parse(&sp, p + pos, piece, record, log);
		pos += piece;
	}
	sse_parser_free(&sp);
	return (r);
}

/* One event back from the encoder, compared with what went in. */
struct expect {
	const char	*id;
	const char	*event;
	const char	*data;		/* normalised */
	size_t		 datalen;
	int		 n;
};

static void
expect_cb(const struct sse_event *ev, void *arg)
{
	struct expect	*x = arg;

	x->n++;
	CHECK(x->n == 1);
	CHECK(strcmp(ev->id, x->id) == 0);
	CHECK(strcmp(ev->event, x->event) == 0);
	CHECK(ev->datalen == x->datalen);
	CHECK(memcmp(ev->data, x->data, x->datalen) == 0);
	CHECK(ev->retry == -1);
}

/* Keep only bytes that may appear in an id or event line. */
static char *
field_text(const uint8_t *p, size_t n)
{
	char	*s = malloc(n + 1);
	size_t	 i, j = 0;

	CHECK(s != NULL);
	for (i = 0; i < n; i++) {
		if (p[i] != '\0' && p[i] != '\r' && p[i] != '\n')
			s[j++] = (char)p[i];
	}
	s[j] = '\0';
	return (s);
}

static void
round_trip(const uint8_t *data, size_t size)
{
	struct evbuffer		*eb = evbuffer_new(), *src;
	struct sse_parser	 sp;
	struct expect		 x;
	char			*norm, *id, *event, *wire;
	size_t			 i, j, n, split, wlen, pos, piece;
	const char		*payload;
	int			 way;

	/* The first few bytes make the id and type, the rest the data. */
	split = size > 0 ? data[0] % 8 : 0;
	if (split > size)
		split = size;
	id = field_text(data, split);
	n = size - split;
	payload = (const char *)data + split;
	event = field_text(data + split, n < 5 ? n : 5);

	/* CR LF and lone CR become LF. */
	norm = malloc(n + 1);
	CHECK(norm != NULL);
	for (i = 0, j = 0; i < n; i++) {
		if (payload[i] == '\r') {
			norm[j++] = '\n';
			if (i + 1 < n && payload[i + 1] == '\n')
				i++;
		} else
			norm[j++] = payload[i];
	}
	x.id = id;
	x.event = event[0] != '\0' ? event : "message";
	x.data = norm;
	x.datalen = j;

	for (way = 0; way < 2; way++) {
		if (way == 0)
			sse_add_event(eb, id, event, payload, n);
		else {
			src = evbuffer_new();
			evbuffer_add(src, payload, n);
			sse_add_event_buffer(eb, id, event, src);
			CHECK(evbuffer_get_length(src) == 0);
			evbuffer_free(src);
		}
		wlen = evbuffer_get_length(eb);
		wire = malloc(wlen + 1);
		CHECK(wire != NULL);
		evbuffer_remove(eb, wire, wlen);
		x.n = 0;
		sse_parser_init(&sp, 2 * size + 64);
		for (pos = 0, i = 0; pos < wlen; pos += piece) {
			piece = 1 + (size > 0 ? data[i++ % size] % 13 : 0);
			if (piece > wlen - pos)
				piece = wlen - pos;
			CHECK(sse_parse(&sp, wire + pos, piece, expect_cb,
			    &x) == 0);
		}
		CHECK(x.n == 1);
		sse_parser_free(&sp);
		free(wire);
	}
	free(norm);
	free(id);
	free(event);
	evbuffer_free(eb);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct evbuffer	*whole = evbuffer_new(), *pieces = evbuffer_new();
	size_t		 len;
	int		 r1, r2;

	r1 = parse((const char *)data, size, NULL, 0, whole);
	r2 = parse((const char *)data, size, data, size, pieces);
	CHECK(r1 == 0 || r1 == -1);
	CHECK(r1 == r2);
	len = evbuffer_get_length(whole);
	CHECK(len == evbuffer_get_length(pieces));
	CHECK(len == 0 || memcmp(evbuffer_pullup(whole, -1),
	    evbuffer_pullup(pieces, -1), len) == 0);
	evbuffer_free(whole);
	evbuffer_free(pieces);

	round_trip(data, size);
	return (0);
}
