/* SPDX-License-Identifier: ISC */
/*
 * HTTP/1.1 message heads (requests and responses), body framing, and an
 * incremental chunked-body decoder.  Pure functions over borrowed bytes so
 * they can be fuzzed; the header spans point into the caller's buffer.
 */
#ifndef MCPS_HTTP_PARSE_H
#define MCPS_HTTP_PARSE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct evbuffer;

#define HTTP_MAX_HEADERS	64

struct http_header {
	const char	*name;
	size_t		 namelen;
	const char	*value;		/* without surrounding whitespace */
	size_t		 valuelen;
};

struct http_head {
	/* Requests. */
	const char		*method;
	size_t			 methodlen;
	const char		*target;
	size_t			 targetlen;
	/* Responses. */
	int			 status;
	/* Both. */
	int			 minor;		/* HTTP/1.minor */
	struct http_header	 headers[HTTP_MAX_HEADERS];
	size_t			 nheaders;
	size_t			 len;		/* bytes of the head */
};

enum http_body {
	HTTP_BODY_NONE = 0,
	HTTP_BODY_LENGTH,		/* Content-Length */
	HTTP_BODY_CHUNKED,		/* Transfer-Encoding: chunked */
	HTTP_BODY_EOF			/* until close (responses only) */
};

/*
 * Parse a request head at the start of p[0..n).  Returns the head's length
 * (up to and including the blank line) when complete, 0 if more bytes are
 * needed, or a negative HTTP status for a bad head: -400, -431 (head over
 * max bytes or too many headers), -501 (unknown transfer coding), -505.
 */
ssize_t	http_parse_request(const char *p, size_t n, size_t max,
	    struct http_head *);
/* The same for a response head (status line instead of request line). */
ssize_t	http_parse_response(const char *p, size_t n, size_t max,
	    struct http_head *);

/* Find a header by case-insensitive name; NULL if absent. */
const struct http_header *http_header(const struct http_head *,
	    const char *name);
/* Does a comma-separated header value contain token (case-insensitive)? */
int	http_has_token(const char *value, size_t len, const char *token);
/* The same, compared exactly, for values that are case-sensitive (a
 * WebSocket subprotocol, RFC 6455 section 4.1). */
int	http_has_element(const char *value, size_t len, const char *element);
/*
 * Does an Accept value accept a media type?  Wildcards count; a q=0
 * parameter excludes.
 */
int	http_accepts(const char *value, size_t len, const char *type);
/* Does a head's Accept accept it?  Several Accept lines are one list
 * (RFC 9110, section 5.3); none accepts nothing. */
int	http_head_accepts(const struct http_head *, const char *type);

/*
 * Header values are (pointer, length) spans into the head's buffer, not C
 * strings: never give one to a function that reads to a NUL (strstr,
 * strchr, strlen, strcmp, atoi...).  These compare them within bounds.
 */
/*
 * Split one header line as a callback gets it ("Name: value\r\n", not a C
 * string) into name and trimmed value; -1 if it has no colon.
 */
int	http_header_line(const char *p, size_t len, struct http_header *);
/* Is the header's name this one, ignoring case? */
int	http_name_is(const struct http_header *, const char *name);
/* Is the value exactly s, ignoring case? */
int	http_value_is(const struct http_header *, const char *s);
/* Does the value begin with prefix, ignoring case? */
int	http_value_begins(const struct http_header *, const char *prefix);

/*
 * The authority of a Host header or an origin, parsed strictly (RFC 3986
 * and RFC 9110): a host that is a name or IPv4 address of A-Z a-z 0-9 -
 * . _ ~, or an IPv6 literal in brackets of hex digits, ':' and '.'; then
 * optionally ':' and a port of 1 to 5 digits up to 65535.  host points
 * into the parsed text (brackets included); port is -1 when absent.
 */
struct http_authority {
	const char	*host;
	size_t		 hostlen;
	int		 port;
};
/* Parse a Host value; -1 if malformed. */
int	http_parse_host(const char *, size_t, struct http_authority *);
/*
 * Parse an Origin value (RFC 6454): scheme "://" host [":" port] and
 * nothing else, or "null" (returns 1).  The scheme is stored lowercase
 * in scheme (of size at least 16).  -1 if malformed.
 */
int	http_parse_origin(const char *, size_t, char *scheme,
	    struct http_authority *);

/*
 * Work out how a body is framed.  For requests, no Content-Length and no
 * Transfer-Encoding means no body.  Returns 0 or a negative HTTP status
 * (-400 for a bad or conflicting length, -501 for an unknown coding).
 */
int	http_body_framing(const struct http_head *, int is_request,
	    enum http_body *, uint64_t *length);

/* An incremental chunked-body decoder. */
struct http_chunked {
	int		state;
	uint64_t	remaining;	/* of the current chunk */
	size_t		linelen;	/* of the current size or trailer line */
	size_t		total;		/* decoded so far */
};

void	http_chunked_init(struct http_chunked *);
/*
 * Decode from in[0..n), appending data to out (may be NULL to only
 * measure).  Returns the bytes consumed; sets *done when the final chunk
 * and trailers are read.  Returns -1 on a malformed body, -2 if the decoded
 * body would exceed max.
 */
ssize_t	http_chunked_decode(struct http_chunked *, const char *in, size_t n,
	    struct evbuffer *out, size_t max, int *done);

/* The reason phrase for a status code. */
const char *http_reason(int status);

#endif
