/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>

#include "http_parse.h"

/* Is c an RFC 9110 token character? */
static int
is_tchar(unsigned char c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9'))
		return (1);
	return (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* Find CRLF in p[pos..n); return the offset of CR, or n if absent. */
static size_t
find_crlf(const char *p, size_t pos, size_t n)
{
	const char	*cr;

	while (pos + 1 < n) {
		cr = memchr(p + pos, '\r', n - pos - 1);
		if (cr == NULL)
			return (n);
		pos = (size_t)(cr - p);
		if (p[pos + 1] == '\n')
			return (pos);
		pos++;
	}
	return (n);
}

/* Parse "HTTP/1.x"; -1 if it is not. */
static int
parse_version(const char *p, size_t len, int *minor)
{
	if (len != 8 || memcmp(p, "HTTP/1.", 7) != 0)
		return (-1);
	if (p[7] < '0' || p[7] > '9')
		return (-1);
	*minor = p[7] - '0';
	return (0);
}

/* Parse the header fields after the start line. */
static ssize_t
parse_fields(const char *p, size_t n, size_t pos, size_t max,
    struct http_head *h)
{
	struct http_header	*f;
	size_t			 eol, colon, vs, ve;

	for (;;) {
		eol = find_crlf(p, pos, n);
		if (eol == n)
			return (n > max ? -431 : 0);
		if (eol + 2 > max)
			return (-431);
		if (eol == pos) {
			h->len = eol + 2;
			return ((ssize_t)h->len);
		}
		if (p[pos] == ' ' || p[pos] == '\t')
			return (-400);	/* obsolete line folding */
		if (h->nheaders == HTTP_MAX_HEADERS)
			return (-431);
		colon = pos;
		while (colon < eol && is_tchar((unsigned char)p[colon]))
			colon++;
		if (colon == pos || colon == eol || p[colon] != ':')
			return (-400);
		vs = colon + 1;
		while (vs < eol && (p[vs] == ' ' || p[vs] == '\t'))
			vs++;
		ve = eol;
		while (ve > vs && (p[ve - 1] == ' ' || p[ve - 1] == '\t'))
			ve--;
		for (size_t i = vs; i < ve; i++) {
			unsigned char	c = (unsigned char)p[i];

			if ((c < 0x20 && c != '\t') || c == 0x7f)
				return (-400);
		}
		f = &h->headers[h->nheaders++];
		f->name = p + pos;
		f->namelen = colon - pos;
		f->value = p + vs;
		f->valuelen = ve - vs;
		pos = eol + 2;
	}
}

ssize_t
http_parse_request(const char *p, size_t n, size_t max,
    struct http_head *h)
{
	size_t	eol, sp1, sp2, i;

	memset(h, 0, sizeof *h);
	eol = find_crlf(p, 0, n);
	if (eol == n)
		return (n > max ? -431 : 0);
	if (eol + 2 > max)
		return (-431);
	sp1 = 0;
	while (sp1 < eol && is_tchar((unsigned char)p[sp1]))
		sp1++;
	if (sp1 == 0 || sp1 == eol || p[sp1] != ' ')
		return (-400);
	sp2 = sp1 + 1;
	while (sp2 < eol && p[sp2] != ' ')
		sp2++;
	if (sp2 == sp1 + 1 || sp2 == eol)
		return (-400);
	for (i = sp1 + 1; i < sp2; i++) {
		if ((unsigned char)p[i] <= 0x20 || (unsigned char)p[i] >= 0x7f)
			return (-400);
	}
	h->method = p;
	h->methodlen = sp1;
	h->target = p + sp1 + 1;
	h->targetlen = sp2 - sp1 - 1;
	if (eol - sp2 - 1 != 8 || memcmp(p + sp2 + 1, "HTTP/", 5) != 0)
		return (-400);
	if (parse_version(p + sp2 + 1, 8, &h->minor) != 0)
		return (-505);
	return (parse_fields(p, n, eol + 2, max, h));
}

ssize_t
http_parse_response(const char *p, size_t n, size_t max,
    struct http_head *h)
{
	size_t	eol;

	memset(h, 0, sizeof *h);
	eol = find_crlf(p, 0, n);
	if (eol == n)
		return (n > max ? -431 : 0);
	if (eol + 2 > max)
		return (-431);
	/* "HTTP/1.1 200" then optionally " reason". */
	if (eol < 12 || parse_version(p, 8, &h->minor) != 0 || p[8] != ' ')
		return (-400);
	if (p[9] < '1' || p[9] > '5' || p[10] < '0' || p[10] > '9' ||
	    p[11] < '0' || p[11] > '9' || (eol > 12 && p[12] != ' '))
		return (-400);
	h->status = (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
	return (parse_fields(p, n, eol + 2, max, h));
}

const struct http_header *
http_header(const struct http_head *h, const char *name)
{
	size_t	i, len = strlen(name);

	for (i = 0; i < h->nheaders; i++) {
		if (h->headers[i].namelen == len &&
		    strncasecmp(h->headers[i].name, name, len) == 0)
			return (&h->headers[i]);
	}
	return (NULL);
}

/* Iterate comma-separated elements: next element span, trimmed. */
static int
next_element(const char *v, size_t len, size_t *pos, size_t *start,
    size_t *end)
{
	size_t	s, e;

	while (*pos < len && (v[*pos] == ' ' || v[*pos] == '\t' ||
	    v[*pos] == ','))
		(*pos)++;
	if (*pos >= len)
		return (0);
	s = *pos;
	while (*pos < len && v[*pos] != ',')
		(*pos)++;
	e = *pos;
	while (e > s && (v[e - 1] == ' ' || v[e - 1] == '\t'))
		e--;
	*start = s;
	*end = e;
	return (1);
}

int
http_has_token(const char *v, size_t len, const char *token)
{
	size_t	pos = 0, s, e, tlen = strlen(token);

	while (next_element(v, len, &pos, &s, &e)) {
		if (e - s == tlen && strncasecmp(v + s, token, tlen) == 0)
			return (1);
	}
	return (0);
}

int
http_has_element(const char *v, size_t len, const char *element)
{
	size_t	pos = 0, s, e, elen = strlen(element);

	while (next_element(v, len, &pos, &s, &e)) {
		if (e - s == elen && memcmp(v + s, element, elen) == 0)
			return (1);
	}
	return (0);
}

/* Is q=0 among the parameters of a media range? */
static int
zero_quality(const char *v, size_t s, size_t e)
{
	const char	*q;
	size_t		 i;

	for (i = s; i + 2 < e; i++) {
		if (v[i] != ';')
			continue;
		q = v + i + 1;
		while (q < v + e && (*q == ' ' || *q == '\t'))
			q++;
		if (v + e - q >= 2 && (q[0] == 'q' || q[0] == 'Q') &&
		    q[1] == '=') {
			q += 2;
			while (q < v + e && (*q == '0' || *q == '.'))
				q++;
			return (q == v + e || *q == ';' || *q == ' ');
		}
	}
	return (0);
}

int
http_accepts(const char *v, size_t len, const char *type)
{
	size_t		 pos = 0, s, e, me, tlen = strlen(type);
	const char	*slash = strchr(type, '/');
	size_t		 major = (size_t)(slash - type);

	while (next_element(v, len, &pos, &s, &e)) {
		me = s;
		while (me < e && v[me] != ';' && v[me] != ' ' &&
		    v[me] != '\t')
			me++;
		if (zero_quality(v, s, e))
			continue;
		if (me - s == 3 && strncmp(v + s, "*/*", 3) == 0)
			return (1);
		if (me - s == tlen && strncasecmp(v + s, type, tlen) == 0)
			return (1);
		if (me - s == major + 2 && strncasecmp(v + s, type,
		    major + 1) == 0 && v[s + major + 1] == '*')
			return (1);
	}
	return (0);
}

int
http_head_accepts(const struct http_head *h, const char *type)
{
	size_t	i;

	for (i = 0; i < h->nheaders; i++) {
		if (h->headers[i].namelen == 6 &&
		    strncasecmp(h->headers[i].name, "Accept", 6) == 0 &&
		    http_accepts(h->headers[i].value, h->headers[i].valuelen,
		    type))
			return (1);
	}
	return (0);
}

int
http_body_framing(const struct http_head *h, int is_request,
    enum http_body *body, uint64_t *length)
{
	const struct http_header	*cl = NULL, *te = NULL;
	uint64_t			 v;
	size_t				 i, j;

	*length = 0;
	for (i = 0; i < h->nheaders; i++) {
		if (h->headers[i].namelen == 14 &&
		    strncasecmp(h->headers[i].name, "Content-Length", 14) == 0) {
			/* Repeated Content-Length must agree. */
			if (cl != NULL && (cl->valuelen !=
			    h->headers[i].valuelen || memcmp(cl->value,
			    h->headers[i].value, cl->valuelen) != 0))
				return (-400);
			cl = &h->headers[i];
		} else if (h->headers[i].namelen == 17 &&
		    strncasecmp(h->headers[i].name, "Transfer-Encoding",
		    17) == 0) {
			if (te != NULL)
				return (-501);
			te = &h->headers[i];
		}
	}
	if (te != NULL) {
		if (cl != NULL)
			return (-400);	/* request smuggling guard */
		if (te->valuelen != 7 ||
		    strncasecmp(te->value, "chunked", 7) != 0)
			return (-501);
		*body = HTTP_BODY_CHUNKED;
		return (0);
	}
	if (cl != NULL) {
		if (cl->valuelen == 0 || cl->valuelen > 19)
			return (-400);
		v = 0;
		for (j = 0; j < cl->valuelen; j++) {
			if (cl->value[j] < '0' || cl->value[j] > '9')
				return (-400);
			v = v * 10 + (uint64_t)(cl->value[j] - '0');
		}
		*length = v;
		*body = v == 0 ? HTTP_BODY_NONE : HTTP_BODY_LENGTH;
		return (0);
	}
	*body = is_request ? HTTP_BODY_NONE : HTTP_BODY_EOF;
	if (!is_request && (h->status == 204 || h->status == 304 ||
	    h->status / 100 == 1))
		*body = HTTP_BODY_NONE;
	return (0);
}

enum {
	CHUNK_SIZE = 0,		/* reading hex digits */
	CHUNK_EXT,		/* skipping extensions to CRLF */
	CHUNK_SIZE_LF,		/* after the size line's CR */
	CHUNK_DATA,
	CHUNK_DATA_CR,
	CHUNK_DATA_LF,
	CHUNK_TRAILER,		/* start of a trailer line */
	CHUNK_TRAILER_LINE,	/* inside a trailer line */
	CHUNK_TRAILER_LF,
	CHUNK_END_LF,		/* the final blank line's LF */
	CHUNK_DONE
};

#define CHUNK_MAX_LINE	4096

void
http_chunked_init(struct http_chunked *c)
{
	memset(c, 0, sizeof *c);
}

ssize_t
http_chunked_decode(struct http_chunked *c, const char *in, size_t n,
    struct evbuffer *out, size_t max, int *done)
{
	size_t		pos = 0, take;
	unsigned char	ch;
	int		digit;

	*done = 0;
	while (pos < n && c->state != CHUNK_DONE) {
		ch = (unsigned char)in[pos];
		switch (c->state) {
		case CHUNK_SIZE:
			digit = -1;
			if (ch >= '0' && ch <= '9')
				digit = ch - '0';
			else if (ch >= 'a' && ch <= 'f')
				digit = ch - 'a' + 10;
			else if (ch >= 'A' && ch <= 'F')
				digit = ch - 'A' + 10;
			if (digit >= 0) {
				/* Leading zeros count against the line too. */
				if (c->remaining >> 60 != 0 ||
				    c->linelen >= CHUNK_MAX_LINE)
					return (-1);
				c->remaining = c->remaining * 16 +
				    (uint64_t)digit;
				c->linelen++;
				pos++;
				break;
			}
			if (c->linelen == 0)
				return (-1);
			if (ch == ';' || ch == ' ' || ch == '\t')
				c->state = CHUNK_EXT;
			else if (ch == '\r')
				c->state = CHUNK_SIZE_LF;
			else
				return (-1);
			pos++;
			break;
		case CHUNK_EXT:
			if (++c->linelen > CHUNK_MAX_LINE)
				return (-1);
			if (ch == '\r')
				c->state = CHUNK_SIZE_LF;
			else if (ch == '\n' || ch < 0x20) {
				if (ch != '\t')
					return (-1);
			}
			pos++;
			break;
		case CHUNK_SIZE_LF:
			if (ch != '\n')
				return (-1);
			pos++;
			c->linelen = 0;
			if (c->remaining == 0)
				c->state = CHUNK_TRAILER;
			else {
				if (c->remaining > max - c->total)
					return (-2);
				c->state = CHUNK_DATA;
			}
			break;
		case CHUNK_DATA:
			take = n - pos;
			if (take > c->remaining)
				take = (size_t)c->remaining;
			if (out != NULL)
				evbuffer_add(out, in + pos, take);
			c->total += take;
			c->remaining -= take;
			pos += take;
			if (c->remaining == 0)
				c->state = CHUNK_DATA_CR;
			break;
		case CHUNK_DATA_CR:
			if (ch != '\r')
				return (-1);
			c->state = CHUNK_DATA_LF;
			pos++;
			break;
		case CHUNK_DATA_LF:
			if (ch != '\n')
				return (-1);
			c->state = CHUNK_SIZE;
			c->linelen = 0;
			pos++;
			break;
		case CHUNK_TRAILER:
			if (ch == '\r') {
				c->state = CHUNK_END_LF;
				pos++;
				break;
			}
			c->linelen = 0;
			c->state = CHUNK_TRAILER_LINE;
			break;
		case CHUNK_TRAILER_LINE:
			if (++c->linelen > CHUNK_MAX_LINE)
				return (-1);
			if (ch == '\r')
				c->state = CHUNK_TRAILER_LF;
			else if (ch == '\n')
				return (-1);
			pos++;
			break;
		case CHUNK_TRAILER_LF:
			if (ch != '\n')
				return (-1);
			c->state = CHUNK_TRAILER;
			pos++;
			break;
		case CHUNK_END_LF:
			if (ch != '\n')
				return (-1);
			c->state = CHUNK_DONE;
			pos++;
			break;
		}
	}
	if (c->state == CHUNK_DONE)
		*done = 1;
	return ((ssize_t)pos);
}

const char *
http_reason(int status)
{
	switch (status) {
	case 200: return ("OK");
	case 202: return ("Accepted");
	case 204: return ("No Content");
	case 302: return ("Found");
	case 303: return ("See Other");
	case 400: return ("Bad Request");
	case 401: return ("Unauthorized");
	case 403: return ("Forbidden");
	case 404: return ("Not Found");
	case 405: return ("Method Not Allowed");
	case 406: return ("Not Acceptable");
	case 408: return ("Request Timeout");
	case 409: return ("Conflict");
	case 411: return ("Length Required");
	case 413: return ("Content Too Large");
	case 415: return ("Unsupported Media Type");
	case 426: return ("Upgrade Required");
	case 429: return ("Too Many Requests");
	case 431: return ("Request Header Fields Too Large");
	case 500: return ("Internal Server Error");
	case 501: return ("Not Implemented");
	case 502: return ("Bad Gateway");
	case 503: return ("Service Unavailable");
	case 504: return ("Gateway Timeout");
	case 505: return ("HTTP Version Not Supported");
	default: return ("Unknown");
	}
}

int
http_value_is(const struct http_header *h, const char *s)
{
	size_t	len = strlen(s);

	return (h->valuelen == len && strncasecmp(h->value, s, len) == 0);
}

int
http_value_begins(const struct http_header *h, const char *prefix)
{
	size_t	len = strlen(prefix);

	return (h->valuelen >= len && strncasecmp(h->value, prefix, len) == 0);
}

/* May c appear in a host name (RFC 3986 unreserved)? */
static int
host_char(char c)
{
	return ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
	    c == '~');
}

/* May c appear in an IPv6 literal? */
static int
ipv6_char(char c)
{
	return ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') ||
	    (c >= '0' && c <= '9') || c == ':' || c == '.');
}

/* Parse "host[:port]" exactly filling p[0..len); -1 if malformed. */
static int
parse_authority(const char *p, size_t len, struct http_authority *a)
{
	size_t	i = 0, digits;
	long	port;

	a->host = p;
	a->port = -1;
	if (len > 0 && p[0] == '[') {
		for (i = 1; i < len && p[i] != ']'; i++) {
			if (!ipv6_char(p[i]))
				return (-1);
		}
		if (i >= len || i < 3)	/* no ']', or "[]" / "[:]" */
			return (-1);
		i++;
	} else {
		while (i < len && host_char(p[i]))
			i++;
		if (i == 0)
			return (-1);
	}
	a->hostlen = i;
	if (i == len)
		return (0);
	if (p[i] != ':')
		return (-1);
	port = 0;
	for (i++, digits = 0; i < len; i++, digits++) {
		if (p[i] < '0' || p[i] > '9' || digits == 5)
			return (-1);
		port = port * 10 + (p[i] - '0');
	}
	if (digits == 0 || port > 65535)
		return (-1);
	a->port = (int)port;
	return (0);
}

int
http_parse_host(const char *p, size_t len, struct http_authority *a)
{
	return (parse_authority(p, len, a));
}

int
http_parse_origin(const char *p, size_t len, char *scheme,
    struct http_authority *a)
{
	size_t	i;
	char	c;

	if (len == 4 && memcmp(p, "null", 4) == 0)
		return (1);
	for (i = 0; i < len && i < 15; i++) {
		c = p[i];
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (!((c >= 'a' && c <= 'z') || (i > 0 && ((c >= '0' &&
		    c <= '9') || c == '+' || c == '-' || c == '.'))))
			break;
		scheme[i] = c;
	}
	scheme[i] = '\0';
	if (i == 0 || len - i < 3 || memcmp(p + i, "://", 3) != 0)
		return (-1);
	/* No path, query, fragment or user information: the authority
	 * alone, parsed strictly, fills the rest. */
	return (parse_authority(p + i + 3, len - i - 3, a));
}

int
http_header_line(const char *p, size_t len, struct http_header *h)
{
	size_t	i, s, e;

	for (i = 0; i < len && p[i] != ':'; i++)
		;
	if (i == 0 || i == len)
		return (-1);
	h->name = p;
	h->namelen = i;
	for (s = i + 1; s < len && (p[s] == ' ' || p[s] == '\t'); s++)
		;
	for (e = len; e > s && (p[e - 1] == ' ' || p[e - 1] == '\t' ||
	    p[e - 1] == '\r' || p[e - 1] == '\n'); e--)
		;
	h->value = p + s;
	h->valuelen = e - s;
	return (0);
}

int
http_name_is(const struct http_header *h, const char *name)
{
	size_t	len = strlen(name);

	return (h->namelen == len && strncasecmp(h->name, name, len) == 0);
}
