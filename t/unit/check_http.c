/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for common/http_parse.c: request and response heads, header
 * lookup, token and Accept matching, body framing and the incremental
 * chunked decoder.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <event2/buffer.h>

#include "http_parse.h"

#define T(s)	s, sizeof(s) - 1

/* Is a header's value exactly want? */
static void
header_is(const struct http_head *h, const char *name, const char *want)
{
	const struct http_header	*f = http_header(h, name);

	ck_assert_msg(f != NULL, "no header %s", name);
	ck_assert_msg(f->valuelen == strlen(want) && memcmp(f->value, want,
	    f->valuelen) == 0, "%s is \"%.*s\", not \"%s\"", name,
	    (int)f->valuelen, f->value, want);
}

/* Parse a request head; return the result. */
static ssize_t
req(const char *p, size_t n, struct http_head *h)
{
	return (http_parse_request(p, n, 8192, h));
}

START_TEST(test_request)
{
	static const char	p[] = "POST /mcp?x=1 HTTP/1.1\r\n"
				    "Host: 127.0.0.1:8931\r\n"
				    "Content-Type:application/json\r\n"
				    "Accept: \t application/json, "
				    "text/event-stream \t\r\n"
				    "X-Empty:\r\n"
				    "mcp-session-id: abc\r\n"
				    "\r\n"
				    "{\"body\":1}";
	struct http_head	h;
	ssize_t			r;

	r = req(p, sizeof p - 1, &h);
	ck_assert_int_eq(r, (ssize_t)(sizeof p - 1 - 10));
	ck_assert_uint_eq(h.len, (size_t)r);
	ck_assert_uint_eq(h.methodlen, 4);
	ck_assert_mem_eq(h.method, "POST", 4);
	ck_assert_uint_eq(h.targetlen, 8);
	ck_assert_mem_eq(h.target, "/mcp?x=1", 8);
	ck_assert_int_eq(h.minor, 1);
	ck_assert_uint_eq(h.nheaders, 5);
	header_is(&h, "Host", "127.0.0.1:8931");
	header_is(&h, "content-type", "application/json");
	header_is(&h, "ACCEPT", "application/json, text/event-stream");
	header_is(&h, "x-empty", "");
	header_is(&h, "Mcp-Session-Id", "abc");
	ck_assert_ptr_null(http_header(&h, "Content-Length"));
	ck_assert_ptr_null(http_header(&h, "Hos"));
	ck_assert_ptr_null(http_header(&h, "Hostt"));
	ck_assert_uint_eq(h.headers[0].namelen, 4);
	ck_assert_ptr_eq(h.headers[0].name, p + 24);
}
END_TEST

START_TEST(test_request_minimal)
{
	struct http_head	h;

	ck_assert_int_eq(req(T("GET / HTTP/1.0\r\n\r\n"), &h), 18);
	ck_assert_int_eq(h.minor, 0);
	ck_assert_uint_eq(h.nheaders, 0);
	ck_assert_int_eq(req(T("DELETE * HTTP/1.1\r\n\r\n"), &h), 21);
	ck_assert_uint_eq(h.targetlen, 1);
	ck_assert_int_eq(req(T("M-SEARCH! /x HTTP/1.9\r\n\r\n"), &h), 25);
	ck_assert_int_eq(h.minor, 9);
}
END_TEST

START_TEST(test_request_incomplete)
{
	static const char	p[] = "GET /mcp HTTP/1.1\r\nHost: x\r\n\r\n";
	struct http_head	h;
	size_t			i;

	for (i = 0; i < sizeof p - 1; i++)
		ck_assert_msg(req(p, i, &h) == 0, "prefix %zu", i);
	ck_assert_int_eq(req(p, sizeof p - 1, &h), (ssize_t)(sizeof p - 1));
	/* Bare LF line ends are not a head end. */
	ck_assert_int_eq(req(T("GET / HTTP/1.1\nHost: x\n\n"), &h), 0);
}
END_TEST

START_TEST(test_request_too_big)
{
	struct http_head	h;
	char			buf[300];
	size_t			i;

	/* Incomplete and already over max. */
	memset(buf, 'a', sizeof buf);
	memcpy(buf, "GET /", 5);
	ck_assert_int_eq(http_parse_request(buf, 100, 100, &h), 0);
	ck_assert_int_eq(http_parse_request(buf, 101, 100, &h), -431);
	/* Complete but longer than max. */
	ck_assert_int_eq(http_parse_request(T("GET / HTTP/1.1\r\nHost: abcdef"
	    "\r\n\r\n"), 20, &h), -431);
	/* Exactly max is fine. */
	ck_assert_int_eq(http_parse_request(T("GET / HTTP/1.1\r\nHost: x\r\n"
	    "\r\n"), 27, &h), 27);
	ck_assert_int_eq(http_parse_request(T("GET / HTTP/1.1\r\nHost: x\r\n"
	    "\r\n"), 26, &h), -431);
	/* The request line alone over max. */
	ck_assert_int_eq(http_parse_request(T("GET /long HTTP/1.1\r\n"), 10,
	    &h), -431);

	/* Too many headers. */
	{
		char	big[64 * 16 + 64];
		size_t	len = 0;

		len += (size_t)snprintf(big + len, sizeof big - len,
		    "GET / HTTP/1.1\r\n");
		for (i = 0; i < HTTP_MAX_HEADERS; i++)
			len += (size_t)snprintf(big + len, sizeof big - len,
			    "X-%zu: v\r\n", i);
		memcpy(big + len, "\r\n", 2);
		ck_assert_int_eq(req(big, len + 2, &h), (ssize_t)len + 2);
		ck_assert_uint_eq(h.nheaders, HTTP_MAX_HEADERS);
		len += (size_t)snprintf(big + len, sizeof big - len,
		    "X-last: v\r\n\r\n");
		ck_assert_int_eq(req(big, len, &h), -431);
	}
}
END_TEST

START_TEST(test_request_bad)
{
	struct http_head	h;

	ck_assert_int_eq(req(T("GET / HTTP/1.1 \r\n\r\n"), &h), -400);
	ck_assert_int_eq(req(T("GET  / HTTP/1.1\r\n\r\n"), &h), -400);
	ck_assert_int_eq(req(T("GET /  HTTP/1.1\r\n\r\n"), &h), -400);
	ck_assert_int_eq(req(T(" GET / HTTP/1.1\r\n\r\n"), &h), -400);
	ck_assert_int_eq(req(T("GET /\r\n\r\n"), &h), -400);
	ck_assert_int_eq(req(T("GET\r\n\r\n"), &h), -400);
	ck_assert_int_eq(req(T("\r\n\r\n"), &h), -400);
	ck_assert_int_eq(req(T("G(T / HTTP/1.1\r\n\r\n"), &h), -400);
	ck_assert_int_eq(req(T("GET /a\x7f HTTP/1.1\r\n\r\n"), &h), -400);
	ck_assert_int_eq(req(T("GET /\xc3\xa9 HTTP/1.1\r\n\r\n"), &h), -400);
	ck_assert_int_eq(req(T("GET /a\tb HTTP/1.1\r\n\r\n"), &h), -400);
	ck_assert_int_eq(req(T("GET / http/1.1\r\n\r\n"), &h), -400);
	ck_assert_int_eq(req(T("GET / HTTP/1.10\r\n\r\n"), &h), -400);
	ck_assert_int_eq(req(T("GET / HTTP/1\r\n\r\n"), &h), -400);
	ck_assert_int_eq(req(T("GET / FOO/1.1\r\n\r\n"), &h), -400);
	/* Header lines. */
	ck_assert_int_eq(req(T("GET / HTTP/1.1\r\nHost x\r\n\r\n"), &h), -400);
	ck_assert_int_eq(req(T("GET / HTTP/1.1\r\nHost : x\r\n\r\n"), &h),
	    -400);
	ck_assert_int_eq(req(T("GET / HTTP/1.1\r\n: x\r\n\r\n"), &h), -400);
	ck_assert_int_eq(req(T("GET / HTTP/1.1\r\nA(b: x\r\n\r\n"), &h), -400);
	ck_assert_int_eq(req(T("GET / HTTP/1.1\r\nA\xc3\xa9: x\r\n\r\n"), &h),
	    -400);
	/* Obsolete line folding. */
	ck_assert_int_eq(req(T("GET / HTTP/1.1\r\nX: a\r\n b\r\n\r\n"), &h),
	    -400);
	ck_assert_int_eq(req(T("GET / HTTP/1.1\r\nX: a\r\n\tb\r\n\r\n"), &h),
	    -400);
	ck_assert_int_eq(req(T("GET / HTTP/1.1\r\n Host: x\r\n\r\n"), &h),
	    -400);
	/* Control characters in values. */
	ck_assert_int_eq(req(T("GET / HTTP/1.1\r\nX: a\x01" "b\r\n\r\n"), &h),
	    -400);
	ck_assert_int_eq(req(T("GET / HTTP/1.1\r\nX: a\rb\r\n\r\n"), &h), -400);
	ck_assert_int_eq(req(T("GET / HTTP/1.1\r\nX: a\nb\r\n\r\n"), &h), -400);
	ck_assert_int_eq(req(T("GET / HTTP/1.1\r\nX: a\0b\r\n\r\n"), &h), -400);
	ck_assert_int_eq(req(T("GET / HTTP/1.1\r\nX: a\x7f\r\n\r\n"), &h),
	    -400);
	/* Tabs inside and bytes over 0x7f in values are fine. */
	ck_assert_int_eq(req(T("GET / HTTP/1.1\r\nX: a\tb\xc3\xa9\r\n\r\n"),
	    &h), 28);
	header_is(&h, "x", "a\tb\xc3\xa9");
}
END_TEST

START_TEST(test_request_version)
{
	struct http_head	h;

	ck_assert_int_eq(req(T("GET / HTTP/2.0\r\n\r\n"), &h), -505);
	ck_assert_int_eq(req(T("GET / HTTP/0.9\r\n\r\n"), &h), -505);
	ck_assert_int_eq(req(T("GET / HTTP/3.0\r\n\r\n"), &h), -505);
	ck_assert_int_eq(req(T("GET / HTTP/1.x\r\n\r\n"), &h), -505);
}
END_TEST

START_TEST(test_response)
{
	static const char	p[] = "HTTP/1.1 200 OK\r\n"
				    "Content-Type: text/event-stream\r\n"
				    "Mcp-Session-Id: s1\r\n\r\ndata";
	struct http_head	h;

	ck_assert_int_eq(http_parse_response(p, sizeof p - 1, 8192, &h),
	    (ssize_t)(sizeof p - 1 - 4));
	ck_assert_int_eq(h.status, 200);
	ck_assert_int_eq(h.minor, 1);
	ck_assert_uint_eq(h.nheaders, 2);
	header_is(&h, "content-type", "text/event-stream");
	header_is(&h, "mcp-session-id", "s1");

	ck_assert_int_eq(http_parse_response(T("HTTP/1.0 404\r\n\r\n"), 8192,
	    &h), 16);
	ck_assert_int_eq(h.status, 404);
	ck_assert_int_eq(h.minor, 0);
	ck_assert_int_eq(http_parse_response(T("HTTP/1.1 599 Odd Reason "
	    "Phrase\r\n\r\n"), 8192, &h), 34);
	ck_assert_int_eq(h.status, 599);
	ck_assert_int_eq(http_parse_response(T("HTTP/1.1 101 \r\n\r\n"), 8192,
	    &h), 17);
	ck_assert_int_eq(h.status, 101);
	ck_assert_int_eq(http_parse_response(T("HTTP/1.1 200 OK\r\n"), 8192,
	    &h), 0);
	ck_assert_int_eq(http_parse_response(T("HTTP/1.1 20"), 8192, &h), 0);

	ck_assert_int_eq(http_parse_response(T("HTTP/1.1 2000\r\n\r\n"), 8192,
	    &h), -400);
	ck_assert_int_eq(http_parse_response(T("HTTP/1.1 20\r\n\r\n"), 8192,
	    &h), -400);
	ck_assert_int_eq(http_parse_response(T("HTTP/1.1 099\r\n\r\n"), 8192,
	    &h), -400);
	ck_assert_int_eq(http_parse_response(T("HTTP/1.1 600\r\n\r\n"), 8192,
	    &h), -400);
	ck_assert_int_eq(http_parse_response(T("HTTP/1.1 2x0\r\n\r\n"), 8192,
	    &h), -400);
	ck_assert_int_eq(http_parse_response(T("HTTP/2 200\r\n\r\n"), 8192,
	    &h), -400);
	ck_assert_int_eq(http_parse_response(T("HTTP/1.1  200\r\n\r\n"), 8192,
	    &h), -400);
	ck_assert_int_eq(http_parse_response(T("HTTP/1.1 200 OK\r\nX y\r\n"
	    "\r\n"), 8192, &h), -400);
	ck_assert_int_eq(http_parse_response(T("HTTP/1.1 200 OK\r\nX: y\r\n"
	    "\r\n"), 20, &h), -431);
}
END_TEST

START_TEST(test_has_token)
{
	ck_assert(http_has_token(T("keep-alive, Upgrade"), "upgrade"));
	ck_assert(http_has_token(T("Upgrade"), "upgrade"));
	ck_assert(http_has_token(T(" ,, upgrade ,"), "upgrade"));
	ck_assert(http_has_token(T("a,\tUPGRADE\t"), "Upgrade"));
	ck_assert(!http_has_token(T("upgrades"), "upgrade"));
	/* Subprotocols are compared exactly (RFC 6455 4.1). */
	ck_assert(http_has_element(T("chat, mcp"), "mcp"));
	ck_assert(!http_has_element(T("MCP"), "mcp"));
	ck_assert(!http_has_element(T("Mcp, mcp2"), "mcp"));
	ck_assert(!http_has_token(T("upgrad"), "upgrade"));
	ck_assert(!http_has_token(T("xupgrade"), "upgrade"));
	ck_assert(!http_has_token(T(""), "upgrade"));
	ck_assert(!http_has_token(T(","), "upgrade"));
	ck_assert(!http_has_token(T("up grade"), "upgrade"));
	/* Only len bytes count. */
	ck_assert(!http_has_token("close, upgrade", 5, "upgrade"));
	ck_assert(http_has_token("close, upgrade", 5, "close"));
}
END_TEST

/* Several Accept lines are one list (RFC 9110, section 5.3). */
START_TEST(test_accept_lines)
{
	static const char	p[] = "GET /mcp HTTP/1.1\r\n"
				    "Host: 127.0.0.1\r\n"
				    "Accept: application/json\r\n"
				    "accept: text/event-stream;q=0.5\r\n"
				    "\r\n";
	static const char	q[] = "GET /mcp HTTP/1.1\r\n"
				    "Host: 127.0.0.1\r\n"
				    "\r\n";
	struct http_head	h;

	ck_assert_int_gt(req(p, sizeof p - 1, &h), 0);
	ck_assert(http_head_accepts(&h, "application/json"));
	ck_assert(http_head_accepts(&h, "text/event-stream"));
	ck_assert(!http_head_accepts(&h, "text/html"));
	ck_assert_int_gt(req(q, sizeof q - 1, &h), 0);
	ck_assert(!http_head_accepts(&h, "application/json"));
}
END_TEST

START_TEST(test_accepts)
{
	const char	*json = "application/json", *sse = "text/event-stream";

	ck_assert(http_accepts(T("application/json, text/event-stream"), json));
	ck_assert(http_accepts(T("application/json, text/event-stream"), sse));
	ck_assert(http_accepts(T("Application/JSON"), json));
	ck_assert(!http_accepts(T("application/json"), sse));
	ck_assert(!http_accepts(T("text/html"), sse));
	ck_assert(!http_accepts(T(""), json));
	/* Wildcards. */
	ck_assert(http_accepts(T("*/*"), json));
	ck_assert(http_accepts(T("text/html, */*;q=0.8"), sse));
	ck_assert(http_accepts(T("text/*"), sse));
	ck_assert(!http_accepts(T("text/*"), json));
	ck_assert(http_accepts(T("application/*"), json));
	ck_assert(!http_accepts(T("app/*"), json));
	ck_assert(!http_accepts(T("*/json"), json));
	/* Parameters are ignored, except q=0. */
	ck_assert(http_accepts(T("application/json;charset=utf-8"), json));
	ck_assert(http_accepts(T("application/json ; q=0.5"), json));
	ck_assert(http_accepts(T("application/json;q=1"), json));
	ck_assert(http_accepts(T("application/json;q=0.001"), json));
	ck_assert(!http_accepts(T("application/json;q=0"), json));
	ck_assert(!http_accepts(T("application/json; q=0.0"), json));
	ck_assert(!http_accepts(T("application/json;Q=0.000"), json));
	ck_assert(!http_accepts(T("application/json;level=1;q=0"), json));
	ck_assert(!http_accepts(T("*/*;q=0"), json));
	ck_assert(!http_accepts(T("text/*;q=0"), sse));
	ck_assert(http_accepts(T("text/*;q=0, text/event-stream"), sse));
	/* Not a prefix match. */
	ck_assert(!http_accepts(T("application/jsonx"), json));
	ck_assert(!http_accepts(T("application/jso"), json));
	ck_assert(!http_accepts(T("application/json-seq"), json));
}
END_TEST

/* Parse a head (request or response) that must succeed. */
static void
head(const char *p, size_t n, int is_request, struct http_head *h)
{
	ssize_t	r;

	r = is_request ? req(p, n, h) : http_parse_response(p, n, 8192, h);
	ck_assert_msg(r > 0, "%s: %zd", p, r);
}

/* Check the framing of a head. */
static void
framing(const char *p, size_t n, int is_request, int want_r,
    enum http_body want_body, uint64_t want_len)
{
	struct http_head	h;
	enum http_body		body = (enum http_body)-1;
	uint64_t		len = 12345;
	int			r;

	head(p, n, is_request, &h);
	r = http_body_framing(&h, is_request, &body, &len);
	ck_assert_msg(r == want_r, "%s: %d", p, r);
	if (r == 0) {
		ck_assert_msg(body == want_body, "%s: body %d", p, body);
		ck_assert_msg(len == want_len, "%s: length %llu", p,
		    (unsigned long long)len);
	}
}

START_TEST(test_body_framing)
{
	framing(T("POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\n"), 1, 0,
	    HTTP_BODY_LENGTH, 10);
	framing(T("POST / HTTP/1.1\r\ncontent-length:0\r\n\r\n"), 1, 0,
	    HTTP_BODY_NONE, 0);
	framing(T("POST / HTTP/1.1\r\nContent-Length: 007\r\n\r\n"), 1, 0,
	    HTTP_BODY_LENGTH, 7);
	framing(T("POST / HTTP/1.1\r\nContent-Length: 9999999999999999999\r\n"
	    "\r\n"), 1, 0, HTTP_BODY_LENGTH, 9999999999999999999ULL);
	framing(T("POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5"
	    "\r\n\r\n"), 1, 0, HTTP_BODY_LENGTH, 5);
	framing(T("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"), 1,
	    0, HTTP_BODY_CHUNKED, 0);
	framing(T("POST / HTTP/1.1\r\ntransfer-encoding: Chunked\r\n\r\n"), 1,
	    0, HTTP_BODY_CHUNKED, 0);
	framing(T("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), 1, 0, HTTP_BODY_NONE,
	    0);

	/* Smuggling guards and bad lengths. */
	framing(T("POST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: "
	    "chunked\r\n\r\n"), 1, -400, 0, 0);
	framing(T("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
	    "Content-Length: 5\r\n\r\n"), 1, -400, 0, 0);
	framing(T("POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6"
	    "\r\n\r\n"), 1, -400, 0, 0);
	framing(T("POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 05"
	    "\r\n\r\n"), 1, -400, 0, 0);
	framing(T("POST / HTTP/1.1\r\nContent-Length: 5, 5\r\n\r\n"), 1, -400,
	    0, 0);
	framing(T("POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n"), 1, -400, 0,
	    0);
	framing(T("POST / HTTP/1.1\r\nContent-Length: +1\r\n\r\n"), 1, -400, 0,
	    0);
	framing(T("POST / HTTP/1.1\r\nContent-Length: 0x10\r\n\r\n"), 1, -400,
	    0, 0);
	framing(T("POST / HTTP/1.1\r\nContent-Length: 1 0\r\n\r\n"), 1, -400, 0,
	    0);
	framing(T("POST / HTTP/1.1\r\nContent-Length:\r\n\r\n"), 1, -400, 0, 0);
	framing(T("POST / HTTP/1.1\r\nContent-Length: 18446744073709551616\r\n"
	    "\r\n"), 1, -400, 0, 0);
	framing(T("POST / HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n"
	    "\r\n"), 1, -400, 0, 0);

	/* Unknown codings. */
	framing(T("POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n"), 1,
	    -501, 0, 0);
	framing(T("POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n"
	    "\r\n"), 1, -501, 0, 0);
	framing(T("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n"), 1, -501, 0, 0);
	framing(T("POST / HTTP/1.1\r\nTransfer-Encoding: chunkedx\r\n\r\n"), 1,
	    -501, 0, 0);

	/* Responses. */
	framing(T("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n"), 0, 0,
	    HTTP_BODY_LENGTH, 3);
	framing(T("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"), 0,
	    0, HTTP_BODY_CHUNKED, 0);
	framing(T("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"),
	    0, 0, HTTP_BODY_EOF, 0);
	framing(T("HTTP/1.1 204 No Content\r\n\r\n"), 0, 0, HTTP_BODY_NONE, 0);
	framing(T("HTTP/1.1 304 Not Modified\r\n\r\n"), 0, 0, HTTP_BODY_NONE,
	    0);
	framing(T("HTTP/1.1 101 Switching Protocols\r\n\r\n"), 0, 0,
	    HTTP_BODY_NONE, 0);
	framing(T("HTTP/1.1 202 Accepted\r\n\r\n"), 0, 0, HTTP_BODY_EOF, 0);
	framing(T("HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n"), 0, 0,
	    HTTP_BODY_NONE, 0);
	framing(T("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2"
	    "\r\n\r\n"), 0, -400, 0, 0);
}
END_TEST

/* Decode a whole chunked body in one call. */
static ssize_t
chunked_whole(const char *p, size_t n, size_t max, struct evbuffer *out,
    int *done)
{
	struct http_chunked	c;

	http_chunked_init(&c);
	return (http_chunked_decode(&c, p, n, out, max, done));
}

/* Decode byte by byte; return the total consumed or a negative error. */
static ssize_t
chunked_bytes(const char *p, size_t n, size_t max, struct evbuffer *out,
    int *done)
{
	struct http_chunked	c;
	size_t			i;
	ssize_t			r, total = 0;

	http_chunked_init(&c);
	*done = 0;
	for (i = 0; i < n && !*done; i++) {
		r = http_chunked_decode(&c, p + i, 1, out, max, done);
		if (r < 0)
			return (r);
		ck_assert_int_eq(r, 1);
		total += r;
	}
	return (total);
}

/* Decode a good body both ways and check the result. */
static void
chunked_good(const char *p, size_t n, const char *want, size_t consumed)
{
	struct evbuffer	*out = evbuffer_new();
	char		*s;
	size_t		 len;
	int		 done, way;
	ssize_t		 r;

	for (way = 0; way < 2; way++) {
		done = -1;
		r = way == 0 ? chunked_whole(p, n, 1 << 20, out, &done) :
		    chunked_bytes(p, n, 1 << 20, out, &done);
		ck_assert_msg(r == (ssize_t)consumed, "%s: way %d: %zd", p,
		    way, r);
		ck_assert_int_eq(done, 1);
		len = evbuffer_get_length(out);
		s = malloc(len + 1);
		evbuffer_remove(out, s, len);
		s[len] = '\0';
		ck_assert_uint_eq(len, strlen(want));
		ck_assert_str_eq(s, want);
		free(s);
	}
	evbuffer_free(out);
}

/* Decode a bad body both ways; check the error. */
static void
chunked_bad(const char *p, size_t n, size_t max, ssize_t want)
{
	int	done;

	ck_assert_msg(chunked_whole(p, n, max, NULL, &done) == want,
	    "%s whole", p);
	ck_assert_msg(chunked_bytes(p, n, max, NULL, &done) == want,
	    "%s bytes", p);
}

START_TEST(test_chunked)
{
	chunked_good(T("5\r\nhello\r\n0\r\n\r\n"), "hello", 15);
	chunked_good(T("5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"), "hello world",
	    26);
	chunked_good(T("0\r\n\r\n"), "", 5);
	chunked_good(T("A\r\n0123456789\r\na\r\nabcdefghij\r\n0\r\n\r\n"),
	    "0123456789abcdefghij", 35);
	chunked_good(T("00005\r\nhello\r\n000\r\n\r\n"), "hello", 21);
	/* Extensions. */
	chunked_good(T("5;name=value\r\nhello\r\n0;last\r\n\r\n"), "hello", 31);
	chunked_good(T("5 ; a=\"b c\"\t\r\nhello\r\n0\r\n\r\n"), "hello", 26);
	/* Trailers. */
	chunked_good(T("5\r\nhello\r\n0\r\nX-Trailer: 1\r\nY: 2\r\n\r\n"),
	    "hello", 35);
	/* Data may hold CR and LF. */
	chunked_good(T("4\r\n\r\n\r\n\r\n0\r\n\r\n"), "\r\n\r\n", 14);
	/* What follows the body is not consumed. */
	chunked_good(T("1\r\nx\r\n0\r\n\r\nGET / HTTP/1.1\r\n"), "x", 11);
}
END_TEST

START_TEST(test_chunked_bad)
{
	chunked_bad(T("g\r\nx\r\n0\r\n\r\n"), 100, -1);
	chunked_bad(T("\r\nx\r\n0\r\n\r\n"), 100, -1);
	chunked_bad(T(";x\r\n"), 100, -1);
	chunked_bad(T("-1\r\n"), 100, -1);
	chunked_bad(T("0x5\r\nhello\r\n"), 100, -1);
	chunked_bad(T("5\nhello\r\n0\r\n\r\n"), 100, -1);
	chunked_bad(T("5\rhello\r\n"), 100, -1);
	chunked_bad(T("5\r\nhelloX\r\n0\r\n\r\n"), 100, -1);
	chunked_bad(T("5\r\nhello\rX0\r\n\r\n"), 100, -1);
	chunked_bad(T("5\r\nhello\n0\r\n\r\n"), 100, -1);
	chunked_bad(T("5\r\nhello\r\n0\r\nX\n"), 100, -1);
	chunked_bad(T("5\r\nhello\r\n0\r\nX: 1\rY"), 100, -1);
	chunked_bad(T("5\r\nhello\r\n0\r\n\rX"), 100, -1);
	chunked_bad(T("5;a\nb\r\nhello\r\n"), 100, -1);
	chunked_bad(T("5;a\x01\r\nhello\r\n"), 100, -1);
	/* A size that overflows 64 bits. */
	chunked_bad(T("10000000000000000\r\n"), (size_t)-1, -1);
	chunked_bad(T("fffffffffffffffff\r\n"), (size_t)-1, -1);
	/* Over max: at the size line, before any of the data. */
	chunked_bad(T("b\r\nhello world\r\n0\r\n\r\n"), 10, -2);
	chunked_bad(T("5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"), 10, -2);
	chunked_bad(T("ffffffffffffffff\r\n"), (size_t)-2, -2);
}
END_TEST

START_TEST(test_chunked_limits)
{
	struct evbuffer	*out = evbuffer_new();
	int		 done;
	char		 ext[5000];

	/* Exactly max is fine. */
	ck_assert_int_eq(chunked_whole(T("5\r\nhello\r\n5\r\nworld\r\n0\r\n"
	    "\r\n"), 10, out, &done), 25);
	ck_assert_int_eq(done, 1);
	ck_assert_uint_eq(evbuffer_get_length(out), 10);
	evbuffer_free(out);

	/* An extension over the line bound. */
	memset(ext, 'e', sizeof ext);
	memcpy(ext, "5;", 2);
	ck_assert_int_eq(chunked_whole(ext, sizeof ext, 100, NULL, &done), -1);
	/* A size line of leading zeros over the line bound. */
	memset(ext, '0', sizeof ext);
	ck_assert_int_eq(chunked_whole(ext, sizeof ext, 100, NULL, &done), -1);
	ck_assert_int_eq(chunked_bytes(ext, sizeof ext, 100, NULL, &done), -1);
	/* Many zeros within the bound are still a size. */
	memset(ext, '0', 4000);
	memcpy(ext + 4000, "5\r\nhello\r\n0\r\n\r\n", 15);
	ck_assert_int_eq(chunked_whole(ext, 4015, 100, NULL, &done), 4015);
	ck_assert_int_eq(done, 1);
	/* A trailer over the line bound. */
	memset(ext, 't', sizeof ext);
	memcpy(ext, "0\r\n", 3);
	ck_assert_int_eq(chunked_whole(ext, sizeof ext, 100, NULL, &done), -1);
}
END_TEST

START_TEST(test_chunked_incremental)
{
	/* Consumed counts add up over uneven pieces; done only at the end. */
	static const char	p[] = "3\r\nabc\r\n10\r\n0123456789abcdef\r\n"
				    "0\r\nT: v\r\n\r\n";
	static const size_t	sizes[] = { 2, 5, 1, 7, 3, 11, 4 };
	struct http_chunked	c;
	struct evbuffer		*out = evbuffer_new();
	size_t			pos = 0, len, i = 0;
	ssize_t			r;
	int			done = 0;
	char			buf[32];

	http_chunked_init(&c);
	while (pos < sizeof p - 1) {
		ck_assert_int_eq(done, 0);
		len = sizes[i++ % 7];
		if (len > sizeof p - 1 - pos)
			len = sizeof p - 1 - pos;
		r = http_chunked_decode(&c, p + pos, len, out, 100, &done);
		ck_assert_int_eq(r, (ssize_t)len);
		pos += len;
	}
	ck_assert_int_eq(done, 1);
	ck_assert_uint_eq(c.total, 19);
	ck_assert_uint_eq(evbuffer_get_length(out), 19);
	evbuffer_remove(out, buf, 19);
	ck_assert_mem_eq(buf, "abc0123456789abcdef", 19);
	/* After done, nothing more is consumed. */
	ck_assert_int_eq(http_chunked_decode(&c, "5\r\n", 3, out, 100, &done),
	    0);
	ck_assert_int_eq(done, 1);
	evbuffer_free(out);
}
END_TEST

START_TEST(test_reason)
{
	ck_assert_str_eq(http_reason(200), "OK");
	ck_assert_str_eq(http_reason(404), "Not Found");
	ck_assert_str_eq(http_reason(431), "Request Header Fields Too Large");
	ck_assert_str_eq(http_reason(505), "HTTP Version Not Supported");
	ck_assert_str_eq(http_reason(299), "Unknown");
}
END_TEST

/*
 * Parse a host from a buffer holding exactly its bytes (no NUL after them,
 * so a read past the end shows under ASan); the host as text, or NULL.
 */
static const char *
host_of(const char *s, int *port)
{
	static char		 out[128];
	struct http_authority	 a;
	size_t			 len = strlen(s);
	char			*copy = malloc(len + 1);
	int			 r;

	ck_assert_ptr_nonnull(copy);
	memcpy(copy, s, len);
	r = http_parse_host(copy, len, &a);
	if (r == 0) {
		snprintf(out, sizeof out, "%.*s", (int)a.hostlen, a.host);
		*port = a.port;
	}
	free(copy);
	return (r == 0 ? out : NULL);
}

START_TEST(test_host)
{
	int	port = 0;

	ck_assert_str_eq(host_of("localhost", &port), "localhost");
	ck_assert_int_eq(port, -1);
	ck_assert_str_eq(host_of("127.0.0.1:8931", &port), "127.0.0.1");
	ck_assert_int_eq(port, 8931);
	ck_assert_str_eq(host_of("[::1]:1", &port), "[::1]");
	ck_assert_int_eq(port, 1);
	ck_assert_str_eq(host_of("[::1]", &port), "[::1]");
	ck_assert_str_eq(host_of("Example.COM:65535", &port), "Example.COM");
	ck_assert_int_eq(port, 65535);
	/* What a lax parser let through. */
	ck_assert_ptr_null(host_of("localhost:80@evil.com", &port));
	ck_assert_ptr_null(host_of("127.0.0.1:abc", &port));
	ck_assert_ptr_null(host_of("127.0.0.1:99999", &port));
	ck_assert_ptr_null(host_of("127.0.0.1:080000", &port));
	ck_assert_ptr_null(host_of("localhost:", &port));
	ck_assert_ptr_null(host_of(":80", &port));
	ck_assert_ptr_null(host_of("[::1", &port));
	ck_assert_ptr_null(host_of("[]", &port));
	ck_assert_ptr_null(host_of("[::1]x", &port));
	ck_assert_ptr_null(host_of("[::1]:", &port));
	ck_assert_ptr_null(host_of("[g::1]", &port));
	ck_assert_ptr_null(host_of("a b", &port));
	ck_assert_ptr_null(host_of("user@localhost", &port));
	ck_assert_ptr_null(host_of("localhost/x", &port));
	ck_assert_ptr_null(host_of("", &port));
}
END_TEST

/* Parse an origin from a buffer of exactly its bytes; "scheme|host|port". */
static const char *
origin_of(const char *s)
{
	static char		 out[160];
	struct http_authority	 a;
	size_t			 len = strlen(s);
	char			*copy = malloc(len + 1), scheme[16];
	int			 r;

	ck_assert_ptr_nonnull(copy);
	memcpy(copy, s, len);
	r = http_parse_origin(copy, len, scheme, &a);
	if (r == 0)
		snprintf(out, sizeof out, "%s|%.*s|%d", scheme,
		    (int)a.hostlen, a.host, a.port);
	else if (r == 1)
		snprintf(out, sizeof out, "null");
	free(copy);
	return (r >= 0 ? out : NULL);
}

START_TEST(test_origin)
{
	ck_assert_str_eq(origin_of("http://localhost:3000"),
	    "http|localhost|3000");
	ck_assert_str_eq(origin_of("HTTPS://127.0.0.1"), "https|127.0.0.1|-1");
	ck_assert_str_eq(origin_of("http://[::1]:8080"), "http|[::1]|8080");
	ck_assert_str_eq(origin_of("vscode-webview://abc123"),
	    "vscode-webview|abc123|-1");
	ck_assert_str_eq(origin_of("null"), "null");
	/* An origin has no path, query, fragment or user. */
	ck_assert_ptr_null(origin_of("http://localhost:80/path"));
	ck_assert_ptr_null(origin_of("http://localhost/"));
	ck_assert_ptr_null(origin_of("http://localhost?x"));
	ck_assert_ptr_null(origin_of("http://localhost#x"));
	ck_assert_ptr_null(origin_of("http://user@localhost"));
	ck_assert_ptr_null(origin_of("http://localhost:80@evil.com"));
	/* The over-read of old: short values with no "://". */
	ck_assert_ptr_null(origin_of("abcd"));
	ck_assert_ptr_null(origin_of("a"));
	ck_assert_ptr_null(origin_of("http:/"));
	ck_assert_ptr_null(origin_of("://"));
	ck_assert_ptr_null(origin_of("://localhost"));
	ck_assert_ptr_null(origin_of("1http://localhost"));
	ck_assert_ptr_null(origin_of("http://"));
	ck_assert_ptr_null(origin_of(""));
}
END_TEST

START_TEST(test_value_bounded)
{
	struct http_header	h;
	char			v[5] = { 'B', 'e', 'a', 'r', 'e' };

	/* Not NUL-terminated: only length-bounded reads are allowed. */
	h.value = v;
	h.valuelen = sizeof v;
	ck_assert(!http_value_begins(&h, "Bearer "));
	ck_assert(http_value_begins(&h, "bear"));
	ck_assert(!http_value_is(&h, "Bear"));
	ck_assert(http_value_is(&h, "BEARE"));
}
END_TEST

static Suite *
http_suite(void)
{
	Suite	*s = suite_create("http");
	TCase	*tc;

	tc = tcase_create("head");
	tcase_add_test(tc, test_request);
	tcase_add_test(tc, test_request_minimal);
	tcase_add_test(tc, test_request_incomplete);
	tcase_add_test(tc, test_request_too_big);
	tcase_add_test(tc, test_request_bad);
	tcase_add_test(tc, test_request_version);
	tcase_add_test(tc, test_response);
	suite_add_tcase(s, tc);

	tc = tcase_create("headers");
	tcase_add_test(tc, test_has_token);
	tcase_add_test(tc, test_accepts);
	tcase_add_test(tc, test_accept_lines);
	tcase_add_test(tc, test_body_framing);
	tcase_add_test(tc, test_reason);
	tcase_add_test(tc, test_host);
	tcase_add_test(tc, test_origin);
	tcase_add_test(tc, test_value_bounded);
	suite_add_tcase(s, tc);

	tc = tcase_create("chunked");
	tcase_add_test(tc, test_chunked);
	tcase_add_test(tc, test_chunked_bad);
	tcase_add_test(tc, test_chunked_limits);
	tcase_add_test(tc, test_chunked_incremental);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr = srunner_create(http_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
