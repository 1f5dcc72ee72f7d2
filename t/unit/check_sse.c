/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for common/sse.c: the event encoder and the WHATWG
 * event-stream parser, fed whole, byte by byte and in random pieces.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <event2/buffer.h>

#include "sse.h"

/* Events collected by the callback, flattened for easy comparison. */
#define MAX_EVENTS	64

struct got {
	int	 n;
	char	*event[MAX_EVENTS];
	char	*data[MAX_EVENTS];
	size_t	 datalen[MAX_EVENTS];
	char	*id[MAX_EVENTS];
	long	 retry[MAX_EVENTS];
};

static void
collect(const struct sse_event *ev, void *arg)
{
	struct got	*g = arg;

	ck_assert_int_lt(g->n, MAX_EVENTS);
	/* The data is NUL-terminated at datalen. */
	ck_assert_int_eq(ev->data[ev->datalen], '\0');
	g->event[g->n] = strdup(ev->event);
	g->data[g->n] = malloc(ev->datalen + 1);
	memcpy(g->data[g->n], ev->data, ev->datalen + 1);
	g->datalen[g->n] = ev->datalen;
	g->id[g->n] = strdup(ev->id);
	g->retry[g->n] = ev->retry;
	g->n++;
}

static void
got_free(struct got *g)
{
	int	i;

	for (i = 0; i < g->n; i++) {
		free(g->event[i]);
		free(g->data[i]);
		free(g->id[i]);
	}
	memset(g, 0, sizeof *g);
}

/* Parse a whole text in one call; return sse_parse's result. */
static int
parse_whole(const char *p, size_t n, size_t max, struct got *g)
{
	struct sse_parser	sp;
	int			r;

	memset(g, 0, sizeof *g);
	sse_parser_init(&sp, max);
	r = sse_parse(&sp, p, n, collect, g);
	sse_parser_free(&sp);
	return (r);
}

/* Parse in pieces of the given sizes (cycled), 0 meaning one byte. */
static int
parse_pieces(const char *p, size_t n, size_t max, const size_t *sizes,
    size_t nsizes, struct got *g)
{
	struct sse_parser	sp;
	size_t			pos = 0, len, i = 0;
	int			r = 0;

	memset(g, 0, sizeof *g);
	sse_parser_init(&sp, max);
	while (pos < n && r == 0) {
		len = sizes[i++ % nsizes];
		if (len == 0)
			len = 1;
		if (len > n - pos)
			len = n - pos;
		r = sse_parse(&sp, p + pos, len, collect, g);
		pos += len;
	}
	sse_parser_free(&sp);
	return (r);
}

/* Parse byte by byte and whole, and check both give the same events. */
static void
parse_both(const char *p, size_t n, struct got *g)
{
	static const size_t	one[] = { 1 };
	struct got		g1;
	int			i;

	ck_assert_int_eq(parse_whole(p, n, 4096, g), 0);
	ck_assert_int_eq(parse_pieces(p, n, 4096, one, 1, &g1), 0);
	ck_assert_int_eq(g1.n, g->n);
	for (i = 0; i < g->n; i++) {
		ck_assert_str_eq(g1.event[i], g->event[i]);
		ck_assert_uint_eq(g1.datalen[i], g->datalen[i]);
		ck_assert_mem_eq(g1.data[i], g->data[i], g->datalen[i]);
		ck_assert_str_eq(g1.id[i], g->id[i]);
		ck_assert_int_eq(g1.retry[i], g->retry[i]);
	}
	got_free(&g1);
}

#define PARSE(s, g)	parse_both(s, sizeof(s) - 1, g)

/* Return an evbuffer's contents as a new string. */
static char *
evb_string(struct evbuffer *eb)
{
	size_t	 len = evbuffer_get_length(eb);
	char	*s = malloc(len + 1);

	evbuffer_copyout(eb, s, len);
	s[len] = '\0';
	return (s);
}

/* Check that encoding an event gives exactly want. */
static void
encodes_to(const char *id, const char *event, const char *data, size_t len,
    const char *want)
{
	struct evbuffer	*eb = evbuffer_new();
	char		*s;

	sse_add_event(eb, id, event, data, len);
	s = evb_string(eb);
	ck_assert_str_eq(s, want);
	free(s);
	evbuffer_free(eb);
}

START_TEST(test_encode)
{
	encodes_to(NULL, NULL, "hello", 5, "data: hello\n\n");
	encodes_to("7", NULL, "{}", 2, "id: 7\ndata: {}\n\n");
	encodes_to("7", "message", "x", 1,
	    "id: 7\nevent: message\ndata: x\n\n");
	encodes_to(NULL, "endpoint", "/m?s=1", 6,
	    "event: endpoint\ndata: /m?s=1\n\n");
	encodes_to(NULL, NULL, "", 0, "data: \n\n");
	encodes_to(NULL, NULL, "a\nb", 3, "data: a\ndata: b\n\n");
	encodes_to(NULL, NULL, "a\r\nb", 4, "data: a\ndata: b\n\n");
	encodes_to(NULL, NULL, "a\rb", 3, "data: a\ndata: b\n\n");
	encodes_to(NULL, NULL, "a\n\nb", 4, "data: a\ndata: \ndata: b\n\n");
	encodes_to(NULL, NULL, "a\r\rb", 4, "data: a\ndata: \ndata: b\n\n");
	encodes_to(NULL, NULL, "a\n\rb", 4, "data: a\ndata: \ndata: b\n\n");
	encodes_to(NULL, NULL, "a\n", 2, "data: a\ndata: \n\n");
	encodes_to(NULL, NULL, "a\r\n", 3, "data: a\ndata: \n\n");
	encodes_to(NULL, NULL, "\n", 1, "data: \ndata: \n\n");
	encodes_to(NULL, NULL, "\r", 1, "data: \ndata: \n\n");
	encodes_to(NULL, NULL, " lead", 5, "data:  lead\n\n");
}
END_TEST

START_TEST(test_encode_nul)
{
	struct evbuffer	*eb = evbuffer_new();
	unsigned char	 raw[16];

	sse_add_event(eb, NULL, NULL, "a\0b", 3);
	ck_assert_uint_eq(evbuffer_get_length(eb), 11);
	evbuffer_copyout(eb, raw, 11);
	ck_assert_mem_eq(raw, "data: a\0b\n\n", 11);
	evbuffer_free(eb);
}
END_TEST

START_TEST(test_encode_retry)
{
	struct evbuffer	*eb = evbuffer_new();
	char		*s;

	sse_add_retry(eb, 3000);
	sse_add_retry(eb, 0);
	s = evb_string(eb);
	ck_assert_str_eq(s, "retry: 3000\n\nretry: 0\n\n");
	free(s);
	evbuffer_free(eb);
}
END_TEST

START_TEST(test_encode_buffer)
{
	struct evbuffer	*eb = evbuffer_new(), *src = evbuffer_new();
	char		*s;

	/* One line: moved whole. */
	evbuffer_add(src, "{\"jsonrpc\":", 11);
	evbuffer_add(src, "\"2.0\"}", 6);
	sse_add_event_buffer(eb, "3", NULL, src);
	ck_assert_uint_eq(evbuffer_get_length(src), 0);
	s = evb_string(eb);
	ck_assert_str_eq(s, "id: 3\ndata: {\"jsonrpc\":\"2.0\"}\n\n");
	free(s);
	evbuffer_drain(eb, evbuffer_get_length(eb));

	/* Several lines: split like sse_add_event. */
	evbuffer_add(src, "a\r\nb", 4);
	evbuffer_add(src, "\rc\n", 3);
	sse_add_event_buffer(eb, NULL, "message", src);
	ck_assert_uint_eq(evbuffer_get_length(src), 0);
	s = evb_string(eb);
	ck_assert_str_eq(s, "event: message\ndata: a\ndata: b\ndata: c\n"
	    "data: \n\n");
	free(s);
	evbuffer_drain(eb, evbuffer_get_length(eb));

	/* Empty. */
	sse_add_event_buffer(eb, NULL, NULL, src);
	s = evb_string(eb);
	ck_assert_str_eq(s, "data: \n\n");
	free(s);
	evbuffer_free(src);
	evbuffer_free(eb);
}
END_TEST

START_TEST(test_line_endings)
{
	struct got	g;
	int		i;

	PARSE("data: a\n\ndata: b\r\rdata: c\r\n\r\n", &g);
	ck_assert_int_eq(g.n, 3);
	ck_assert_str_eq(g.data[0], "a");
	ck_assert_str_eq(g.data[1], "b");
	ck_assert_str_eq(g.data[2], "c");
	for (i = 0; i < 3; i++) {
		ck_assert_str_eq(g.event[i], "message");
		ck_assert_str_eq(g.id[i], "");
		ck_assert_int_eq(g.retry[i], -1);
	}
	got_free(&g);

	/* Mixed within one event. */
	PARSE("data: 1\rdata: 2\r\ndata: 3\n\r\n", &g);
	ck_assert_int_eq(g.n, 1);
	ck_assert_str_eq(g.data[0], "1\n2\n3");
	ck_assert_uint_eq(g.datalen[0], 5);
	got_free(&g);

	/* LF CR is two line ends, so an event ends. */
	PARSE("data: x\n\rdata: y\n\n", &g);
	ck_assert_int_eq(g.n, 2);
	ck_assert_str_eq(g.data[0], "x");
	ck_assert_str_eq(g.data[1], "y");
	got_free(&g);
}
END_TEST

START_TEST(test_crlf_split)
{
	struct sse_parser	sp;
	struct got		g;

	/* CR at the end of a chunk, LF at the start of the next. */
	memset(&g, 0, sizeof g);
	sse_parser_init(&sp, 1024);
	ck_assert_int_eq(sse_parse(&sp, "data: a\r", 8, collect, &g), 0);
	ck_assert_int_eq(g.n, 0);
	ck_assert_int_eq(sse_parse(&sp, "\n\r", 2, collect, &g), 0);
	ck_assert_int_eq(g.n, 1);
	ck_assert_str_eq(g.data[0], "a");
	ck_assert_int_eq(sse_parse(&sp, "\ndata: b\r", 9, collect, &g), 0);
	ck_assert_int_eq(g.n, 1);
	ck_assert_int_eq(sse_parse(&sp, "\r", 1, collect, &g), 0);
	ck_assert_int_eq(g.n, 2);
	ck_assert_str_eq(g.data[1], "b");
	/* A CR then an empty chunk then LF. */
	ck_assert_int_eq(sse_parse(&sp, "data: c\r", 8, collect, &g), 0);
	ck_assert_int_eq(sse_parse(&sp, "", 0, collect, &g), 0);
	ck_assert_int_eq(sse_parse(&sp, "\n", 1, collect, &g), 0);
	ck_assert_int_eq(g.n, 2);
	ck_assert_int_eq(sse_parse(&sp, "\n", 1, collect, &g), 0);
	ck_assert_int_eq(g.n, 3);
	ck_assert_str_eq(g.data[2], "c");
	sse_parser_free(&sp);
	got_free(&g);
}
END_TEST

START_TEST(test_bom)
{
	struct got		g;
	struct sse_parser	sp;
	size_t			i;
	static const char	s[] = "\xef\xbb\xbf" "data: a\n\n";

	PARSE("\xef\xbb\xbf" "data: a\n\n", &g);
	ck_assert_int_eq(g.n, 1);
	ck_assert_str_eq(g.data[0], "a");
	got_free(&g);

	/* A BOM later is not skipped: the field name is then unknown. */
	PARSE("data: a\n\n\xef\xbb\xbf" "data: b\n\ndata: c\n\n", &g);
	ck_assert_int_eq(g.n, 2);
	ck_assert_str_eq(g.data[0], "a");
	ck_assert_str_eq(g.data[1], "c");
	got_free(&g);

	/* Only one BOM is skipped. */
	PARSE("\xef\xbb\xbf\xef\xbb\xbf" "data: a\n\ndata: b\n\n", &g);
	ck_assert_int_eq(g.n, 1);
	ck_assert_str_eq(g.data[0], "b");
	got_free(&g);

	/* A BOM split over chunks is still the BOM. */
	for (i = 1; i < 3; i++) {
		memset(&g, 0, sizeof g);
		sse_parser_init(&sp, 1024);
		ck_assert_int_eq(sse_parse(&sp, s, i, collect, &g), 0);
		ck_assert_int_eq(sse_parse(&sp, s + i, sizeof s - 1 - i,
		    collect, &g), 0);
		ck_assert_int_eq(g.n, 1);
		ck_assert_str_eq(g.data[0], "a");
		sse_parser_free(&sp);
		got_free(&g);
	}

	/* Something that starts like a BOM but is not one is kept. */
	PARSE("\xef\xbb" "data: a\n\ndata: b\n\n", &g);
	ck_assert_int_eq(g.n, 1);
	ck_assert_str_eq(g.data[0], "b");
	got_free(&g);
	PARSE("\xef" "data: a\n\ndata: b\n\n", &g);
	ck_assert_int_eq(g.n, 1);
	ck_assert_str_eq(g.data[0], "b");
	got_free(&g);
	PARSE("\xef\n" "data: a\n\n", &g);
	ck_assert_int_eq(g.n, 1);
	ck_assert_str_eq(g.data[0], "a");
	got_free(&g);
}
END_TEST

START_TEST(test_fields)
{
	struct got	g;

	/* Comments, unknown fields, a field with no colon. */
	PARSE(": keepalive\n:\nfoo: bar\ndata\n\n", &g);
	ck_assert_int_eq(g.n, 1);
	ck_assert_uint_eq(g.datalen[0], 0);
	ck_assert_str_eq(g.data[0], "");
	got_free(&g);

	/* Only one space after the colon is removed. */
	PARSE("data:x\n\ndata: x\n\ndata:  x\n\ndata:x:y\n\n", &g);
	ck_assert_int_eq(g.n, 4);
	ck_assert_str_eq(g.data[0], "x");
	ck_assert_str_eq(g.data[1], "x");
	ck_assert_str_eq(g.data[2], " x");
	ck_assert_str_eq(g.data[3], "x:y");
	got_free(&g);

	/* Field names are case-sensitive and exact. */
	PARSE("Data: x\ndata : y\ndatax: z\n\ndata: w\n\n", &g);
	ck_assert_int_eq(g.n, 1);
	ck_assert_str_eq(g.data[0], "w");
	got_free(&g);

	/* Multiple data lines joined with LF; a trailing empty one kept. */
	PARSE("data: a\ndata: b\ndata:\ndata: c\n\ndata: d\ndata:\n\n", &g);
	ck_assert_int_eq(g.n, 2);
	ck_assert_str_eq(g.data[0], "a\nb\n\nc");
	ck_assert_str_eq(g.data[1], "d\n");
	got_free(&g);

	/* Tab after the colon is not removed. */
	PARSE("data:\tx\n\n", &g);
	ck_assert_int_eq(g.n, 1);
	ck_assert_str_eq(g.data[0], "\tx");
	got_free(&g);
}
END_TEST

START_TEST(test_event_type)
{
	struct got	g;

	PARSE("event: endpoint\ndata: /m\n\ndata: x\n\nevent: a\nevent: b\n"
	    "data: y\n\nevent: ignored\n\ndata: z\n\nevent:\ndata: e\n\n", &g);
	ck_assert_int_eq(g.n, 5);
	ck_assert_str_eq(g.event[0], "endpoint");
	ck_assert_str_eq(g.data[0], "/m");
	ck_assert_str_eq(g.event[1], "message");
	ck_assert_str_eq(g.event[2], "b");
	ck_assert_str_eq(g.data[2], "y");
	/* An event with no data is not dispatched and its type is reset. */
	ck_assert_str_eq(g.event[3], "message");
	ck_assert_str_eq(g.data[3], "z");
	/* An empty event type means "message". */
	ck_assert_str_eq(g.event[4], "message");
	got_free(&g);
}
END_TEST

START_TEST(test_id)
{
	struct got	g;

	/* The id persists across events until changed. */
	PARSE("id: 1\ndata: a\n\ndata: b\n\nid: 2\ndata: c\n\nid\ndata: d\n\n"
	    "id:\ndata: e\n\n", &g);
	ck_assert_int_eq(g.n, 5);
	ck_assert_str_eq(g.id[0], "1");
	ck_assert_str_eq(g.id[1], "1");
	ck_assert_str_eq(g.id[2], "2");
	ck_assert_str_eq(g.id[3], "");
	ck_assert_str_eq(g.id[4], "");
	got_free(&g);

	/* An id set by a block with no data still carries on. */
	PARSE("id: 9\n\ndata: x\n\n", &g);
	ck_assert_int_eq(g.n, 1);
	ck_assert_str_eq(g.id[0], "9");
	got_free(&g);

	/* An id with a NUL is ignored. */
	PARSE("id: 3\ndata: a\n\nid: 4\0x\ndata: b\n\n", &g);
	ck_assert_int_eq(g.n, 2);
	ck_assert_str_eq(g.id[0], "3");
	ck_assert_str_eq(g.id[1], "3");
	got_free(&g);
}
END_TEST

START_TEST(test_retry)
{
	struct got	g;

	PARSE("retry: 1500\ndata: a\n\ndata: b\n\n", &g);
	ck_assert_int_eq(g.n, 2);
	ck_assert_int_eq(g.retry[0], 1500);
	ck_assert_int_eq(g.retry[1], -1);
	got_free(&g);

	/* Digits only, else ignored. */
	PARSE("retry: 15x\ndata: a\n\nretry: -1\ndata: b\n\nretry:\ndata: c\n\n"
	    "retry:  5\ndata: d\n\nretry: 0\ndata: e\n\n", &g);
	ck_assert_int_eq(g.n, 5);
	ck_assert_int_eq(g.retry[0], -1);
	ck_assert_int_eq(g.retry[1], -1);
	ck_assert_int_eq(g.retry[2], -1);
	ck_assert_int_eq(g.retry[3], -1);
	ck_assert_int_eq(g.retry[4], 0);
	got_free(&g);

	/*
	 * A block that only sets retry (as sse_add_retry writes) is reported
	 * so the reader can learn the new time: no data, retry set.
	 */
	PARSE("retry: 2500\n\ndata: a\n\n", &g);
	ck_assert_int_eq(g.n, 2);
	ck_assert_int_eq(g.retry[0], 2500);
	ck_assert_uint_eq(g.datalen[0], 0);
	ck_assert_int_eq(g.retry[1], -1);
	ck_assert_str_eq(g.data[1], "a");
	got_free(&g);
}
END_TEST

START_TEST(test_dispatch_blank_line)
{
	struct sse_parser	sp;
	struct got		g;

	/* Nothing is dispatched until the blank line, nor at the end. */
	memset(&g, 0, sizeof g);
	sse_parser_init(&sp, 1024);
	ck_assert_int_eq(sse_parse(&sp, "data: a\ndata: b\n", 16, collect,
	    &g), 0);
	ck_assert_int_eq(g.n, 0);
	ck_assert_int_eq(sse_parse(&sp, "data: c", 7, collect, &g), 0);
	ck_assert_int_eq(g.n, 0);
	ck_assert_int_eq(sse_parse(&sp, "\n", 1, collect, &g), 0);
	ck_assert_int_eq(g.n, 0);
	ck_assert_int_eq(sse_parse(&sp, "\n", 1, collect, &g), 0);
	ck_assert_int_eq(g.n, 1);
	ck_assert_str_eq(g.data[0], "a\nb\nc");
	/* An unfinished event at the end of the stream is dropped. */
	ck_assert_int_eq(sse_parse(&sp, "data: d\n", 8, collect, &g), 0);
	sse_parser_free(&sp);
	ck_assert_int_eq(g.n, 1);
	got_free(&g);

	/* Blank lines alone dispatch nothing. */
	PARSE("\n\n\r\n\r\r", &g);
	ck_assert_int_eq(g.n, 0);
	got_free(&g);
}
END_TEST

START_TEST(test_priming_event)
{
	struct got	g;

	/* The MCP priming event: an id and empty data. */
	PARSE("id: 5\ndata:\n\n", &g);
	ck_assert_int_eq(g.n, 1);
	ck_assert_uint_eq(g.datalen[0], 0);
	ck_assert_str_eq(g.data[0], "");
	ck_assert_str_eq(g.id[0], "5");
	ck_assert_str_eq(g.event[0], "message");
	got_free(&g);

	PARSE("id: 6\ndata: \n\n", &g);
	ck_assert_int_eq(g.n, 1);
	ck_assert_uint_eq(g.datalen[0], 0);
	ck_assert_str_eq(g.id[0], "6");
	got_free(&g);
}
END_TEST

START_TEST(test_bounds)
{
	struct got	g;
	char		buf[256];
	static const size_t one[] = { 1 }, seven[] = { 7 };

	/* A data line over the bound. */
	memset(buf, 'x', sizeof buf);
	memcpy(buf, "data: ", 6);
	buf[sizeof buf - 1] = '\n';
	ck_assert_int_eq(parse_whole(buf, sizeof buf, 100, &g), -1);
	ck_assert_int_eq(g.n, 0);
	got_free(&g);
	ck_assert_int_eq(parse_pieces(buf, sizeof buf, 100, one, 1, &g), -1);
	got_free(&g);
	/* A line with no end over the bound. */
	ck_assert_int_eq(parse_pieces(buf, 150, 100, seven, 1, &g), -1);
	got_free(&g);
	/* A comment line over the bound counts too. */
	buf[0] = ':';
	ck_assert_int_eq(parse_whole(buf, sizeof buf, 100, &g), -1);
	got_free(&g);

	/* Data over the bound across lines. */
	ck_assert_int_eq(parse_whole("data: 0123456789\ndata: 0123456789\n"
	    "data: 0123456789\n\n", 52, 30, &g), -1);
	ck_assert_int_eq(g.n, 0);
	got_free(&g);
	/* Just under the bound: 10 + 1 + 10 + 1 bytes with the LFs. */
	ck_assert_int_eq(parse_whole("data: 0123456789\ndata: 0123456789\n\n",
	    35, 22, &g), 0);
	ck_assert_int_eq(g.n, 1);
	ck_assert_uint_eq(g.datalen[0], 21);
	got_free(&g);
	ck_assert_int_eq(parse_whole("data: 0123456789\ndata: 0123456789\n\n",
	    35, 21, &g), -1);
	got_free(&g);

	/* Events that each fit, many of them, are fine. */
	ck_assert_int_eq(parse_whole("data: 0123456789\n\ndata: 0123456789\n\n"
	    "data: 0123456789\n\n", 54, 20, &g), 0);
	ck_assert_int_eq(g.n, 3);
	got_free(&g);
}
END_TEST

/* A deterministic random number generator for the round trips. */
static unsigned int
rnd(unsigned int *state)
{
	*state = *state * 1103515245u + 12345u;
	return ((*state >> 16) & 0x7fff);
}

START_TEST(test_round_trip)
{
	struct evbuffer		*eb = evbuffer_new();
	struct got		 g;
	static const char	 alphabet[] = "ab {}\":\n\n\\\xc3\xa9";
	char			 payloads[8][300], *wire, id[16];
	size_t			 lens[8], sizes[16], n, i, j;
	unsigned int		 seed = 12345u + (unsigned int)_i;
	int			 k;

	for (k = 0; k < 8; k++) {
		lens[k] = rnd(&seed) % 300;
		for (i = 0; i < lens[k]; i++)
			payloads[k][i] = alphabet[rnd(&seed) %
			    (sizeof alphabet - 1)];
		snprintf(id, sizeof id, "%d", k + 100);
		sse_add_event(eb, id, k % 2 ? "message" : NULL, payloads[k],
		    lens[k]);
	}
	/* A single-line payload through the buffer path too. */
	{
		struct evbuffer	*src = evbuffer_new();

		evbuffer_add(src, "{\"last\":true}", 13);
		sse_add_event_buffer(eb, "200", "done", src);
		evbuffer_free(src);
	}
	n = evbuffer_get_length(eb);
	wire = malloc(n);
	evbuffer_copyout(eb, wire, n);
	for (j = 0; j < 16; j++)
		sizes[j] = rnd(&seed) % 40;
	ck_assert_int_eq(parse_pieces(wire, n, 4096, sizes, 16, &g), 0);
	ck_assert_int_eq(g.n, 9);
	for (k = 0; k < 8; k++) {
		snprintf(id, sizeof id, "%d", k + 100);
		ck_assert_uint_eq(g.datalen[k], lens[k]);
		ck_assert_mem_eq(g.data[k], payloads[k], lens[k]);
		ck_assert_str_eq(g.id[k], id);
		ck_assert_str_eq(g.event[k], "message");
	}
	ck_assert_str_eq(g.data[8], "{\"last\":true}");
	ck_assert_str_eq(g.id[8], "200");
	ck_assert_str_eq(g.event[8], "done");
	got_free(&g);
	free(wire);
	evbuffer_free(eb);
}
END_TEST

START_TEST(test_round_trip_cr)
{
	/* CR and CRLF in a payload come back as LF: SSE has no other. */
	struct evbuffer	*eb = evbuffer_new();
	struct got	 g;
	char		*wire;
	size_t		 n;
	static const size_t one[] = { 1 };

	sse_add_event(eb, NULL, NULL, "a\r\nb\rc\n\rd\r", 10);
	n = evbuffer_get_length(eb);
	wire = malloc(n);
	evbuffer_copyout(eb, wire, n);
	ck_assert_int_eq(parse_pieces(wire, n, 4096, one, 1, &g), 0);
	ck_assert_int_eq(g.n, 1);
	ck_assert_str_eq(g.data[0], "a\nb\nc\n\nd\n");
	got_free(&g);
	free(wire);
	evbuffer_free(eb);
}
END_TEST

static Suite *
sse_suite(void)
{
	Suite	*s = suite_create("sse");
	TCase	*tc;

	tc = tcase_create("encode");
	tcase_add_test(tc, test_encode);
	tcase_add_test(tc, test_encode_nul);
	tcase_add_test(tc, test_encode_retry);
	tcase_add_test(tc, test_encode_buffer);
	suite_add_tcase(s, tc);

	tc = tcase_create("parse");
	tcase_add_test(tc, test_line_endings);
	tcase_add_test(tc, test_crlf_split);
	tcase_add_test(tc, test_bom);
	tcase_add_test(tc, test_fields);
	tcase_add_test(tc, test_event_type);
	tcase_add_test(tc, test_id);
	tcase_add_test(tc, test_retry);
	tcase_add_test(tc, test_dispatch_blank_line);
	tcase_add_test(tc, test_priming_event);
	tcase_add_test(tc, test_bounds);
	suite_add_tcase(s, tc);

	tc = tcase_create("round trip");
	tcase_add_loop_test(tc, test_round_trip, 0, 50);
	tcase_add_test(tc, test_round_trip_cr);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr = srunner_create(sse_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
