/* SPDX-License-Identifier: ISC */
/*
 * Fuzz the HTTP/1.1 parsers: request and response heads (with the
 * promises about what a parsed head looks like, and that every shorter
 * prefix is merely incomplete), body framing, header helpers, and the
 * chunked decoder fed whole and in random pieces, which must agree.
 *
 * The first input byte chooses the head bound; the rest is the message.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "http_parse.h"

#define CHECK(x) do {							\
	if (!(x)) {							\
		fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__,	\
		    __LINE__, #x);					\
		abort();						\
	}								\
} while (0)

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Is c an RFC 9110 token character? */
static int
tchar(unsigned char c)
{
	return ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') ||
	    (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL));
}

/* Check what a successfully parsed head promises. */
static void
check_head(const char *p, size_t n, size_t max, ssize_t r,
    const struct http_head *h, int is_request)
{
	const struct http_header	*f;
	size_t				 i, j;
	enum http_body			 body;
	uint64_t			 length;
	int				 fr;

	CHECK((size_t)r <= n && (size_t)r <= max);
	CHECK(h->len == (size_t)r);
	CHECK(r >= 4 && memcmp(p + r - 4, "\r\n\r\n", 4) == 0);
	CHECK(h->minor >= 0 && h->minor <= 9);
	CHECK(h->nheaders <= HTTP_MAX_HEADERS);
	if (is_request) {
		CHECK(h->method == p && h->methodlen > 0);
		for (i = 0; i < h->methodlen; i++)
			CHECK(tchar((unsigned char)h->method[i]));
		CHECK(h->target > p && h->target + h->targetlen <= p + r);
		CHECK(h->targetlen > 0);
		for (i = 0; i < h->targetlen; i++)
			CHECK((unsigned char)h->target[i] > 0x20 &&
			    (unsigned char)h->target[i] < 0x7f);
	} else
		CHECK(h->status >= 100 && h->status <= 599);
	for (i = 0; i < h->nheaders; i++) {
		f = &h->headers[i];
		CHECK(f->name > p && f->name + f->namelen <= p + r);
		CHECK(f->value >= f->name + f->namelen + 1);
		CHECK(f->value + f->valuelen <= p + r);
		CHECK(f->namelen > 0);
		CHECK(f->name[f->namelen] == ':');
		for (j = 0; j < f->namelen; j++)
			CHECK(tchar((unsigned char)f->name[j]));
		for (j = 0; j < f->valuelen; j++)
			CHECK(((unsigned char)f->value[j] >= 0x20 ||
			    f->value[j] == '\t') &&
			    (unsigned char)f->value[j] != 0x7f);
		if (f->valuelen > 0) {
			CHECK(f->value[0] != ' ' && f->value[0] != '\t');
			CHECK(f->value[f->valuelen - 1] != ' ' &&
			    f->value[f->valuelen - 1] != '\t');
		}
		/* Lookup finds this name (or an earlier one like it). */
		{
			char	name[256];

			if (f->namelen < sizeof name) {
				memcpy(name, f->name, f->namelen);
				name[f->namelen] = '\0';
				CHECK(http_header(h, name) != NULL);
				CHECK(http_header(h, name) <= f);
			}
		}
		/* Exercise the value helpers. */
		(void)http_has_token(f->value, f->valuelen, "chunked");
		(void)http_has_token(f->value, f->valuelen, "upgrade");
		(void)http_accepts(f->value, f->valuelen, "application/json");
		(void)http_accepts(f->value, f->valuelen, "text/event-stream");
	}
	fr = http_body_framing(h, is_request, &body, &length);
	CHECK(fr == 0 || fr == -400 || fr == -501);
	if (fr == 0) {
		CHECK(body >= HTTP_BODY_NONE && body <= HTTP_BODY_EOF);
		if (body == HTTP_BODY_LENGTH)
			CHECK(length > 0 && http_header(h,
			    "content-length") != NULL);
		if (body == HTTP_BODY_CHUNKED)
			CHECK(http_header(h, "transfer-encoding") != NULL &&
			    http_header(h, "content-length") == NULL);
		if (body == HTTP_BODY_EOF)
			CHECK(!is_request);
		if (body != HTTP_BODY_LENGTH)
			CHECK(length == 0);
	}
}

/* Parse a head and every shorter prefix of it. */
static ssize_t
check_parse(const char *p, size_t n, size_t max, int is_request)
{
	struct http_head	*h, *h2;
	ssize_t			 r, r2;
	size_t			 k, step;

	h = malloc(sizeof *h);
	h2 = malloc(sizeof *h2);
	CHECK(h != NULL && h2 != NULL);
	r = is_request ? http_parse_request(p, n, max, h) :
	    http_parse_response(p, n, max, h);
	CHECK(r >= 0 || r == -400 || r == -431 || r == -501 || r == -505);
	if (r == 0)
		CHECK(n <= max);
	if (r > 0) {
		check_head(p, n, max, r, h, is_request);
		/* The head alone parses the same. */
		r2 = is_request ? http_parse_request(p, (size_t)r, max, h2) :
		    http_parse_response(p, (size_t)r, max, h2);
		CHECK(r2 == r);
		CHECK(h2->nheaders == h->nheaders);
		/* Anything shorter is incomplete, not an error. */
		step = (size_t)r > 256 ? (size_t)r / 128 : 1;
		for (k = 0; k < (size_t)r; k += step) {
			r2 = is_request ? http_parse_request(p, k, max, h2) :
			    http_parse_response(p, k, max, h2);
			CHECK(r2 == 0);
		}
	}
	free(h);
	free(h2);
	return (r);
}

/* Decode a chunked body whole and in pieces; both must agree. */
static void
check_chunked(const char *p, size_t n, size_t max, const uint8_t *seed,
    size_t nseed)
{
	struct http_chunked	 c1, c2;
	struct evbuffer		*o1 = evbuffer_new(), *o2 = evbuffer_new();
	ssize_t			 r1, r2 = 0, r;
	size_t			 pos = 0, piece, i = 0, total = 0;
	int			 d1 = 0, d2 = 0, d3 = 0;

	http_chunked_init(&c1);
	r1 = http_chunked_decode(&c1, p, n, o1, max, &d1);
	CHECK(r1 >= -2);
	if (r1 >= 0) {
		CHECK((size_t)r1 <= n);
		CHECK(evbuffer_get_length(o1) == c1.total);
		CHECK(c1.total <= max);
		if (!d1)
			CHECK((size_t)r1 == n);
	}

	http_chunked_init(&c2);
	while (pos < n && !d2) {
		piece = nseed == 0 ? 1 : 1 + seed[i++ % nseed] % 17;
		if (piece > n - pos)
			piece = n - pos;
		r = http_chunked_decode(&c2, p + pos, piece, o2, max, &d2);
		if (r < 0) {
			r2 = r;
			break;
		}
		CHECK((size_t)r <= piece);
		if (!d2)
			CHECK((size_t)r == piece);
		total += (size_t)r;
		pos += piece;
		r2 = (ssize_t)total;
	}
	CHECK(r1 == r2);
	CHECK(d1 == d2);
	if (r1 >= 0) {
		CHECK(evbuffer_get_length(o1) == evbuffer_get_length(o2));
		CHECK(evbuffer_get_length(o1) == 0 ||
		    memcmp(evbuffer_pullup(o1, -1),
		    evbuffer_pullup(o2, -1), evbuffer_get_length(o1)) == 0);
	}

	/* Without an output buffer: the same result. */
	http_chunked_init(&c1);
	r = http_chunked_decode(&c1, p, n, NULL, max, &d3);
	CHECK(r == r1 && d3 == d1);
	evbuffer_free(o1);
	evbuffer_free(o2);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char	*p;
	size_t		 n, max;
	ssize_t		 r;

	if (size < 1)
		return (0);
	max = 16 + (size_t)data[0] * 8;
	p = (const char *)data + 1;
	n = size - 1;

	r = check_parse(p, n, max, 1);
	check_parse(p, n, max, 0);
	/* The body after a request head, or the whole input as a body. */
	if (r > 0)
		check_chunked(p + r, n - (size_t)r, max, data, size);
	check_chunked(p, n, max, data, size);
	return (0);
}
