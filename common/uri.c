/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <string.h>

#include "hex.h"
#include "uri.h"

static const char	hexdigits[] = "0123456789ABCDEF";

static int
alpha(int c)
{
	return ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'));
}

static int
unreserved(int c)
{
	return (alpha(c) || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
	    c == '_' || c == '~');
}

static char
lower(char c)
{
	return (c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c);
}

/* The byte a percent-encoding at p stands for, or -1 if it is invalid. */
static int
pct(const char *p, const char *end)
{
	int	hi, lo;

	if (end - p < 3 || (hi = hex_digit((unsigned char)p[1])) < 0 ||
	    (lo = hex_digit((unsigned char)p[2])) < 0)
		return (-1);
	return (hi * 16 + lo);
}

/* Write a byte percent-encoded, in upper case. */
static char *
put_pct(char *o, int c)
{
	*o++ = '%';
	*o++ = hexdigits[c >> 4];
	*o++ = hexdigits[c & 15];
	return (o);
}

/*
 * The authority: userinfo as it is, the host (and port) in lower case,
 * unreserved characters decoded.
 */
static int
norm_authority(const char *p, const char *end, char **op, const char **why)
{
	const char	*host = p, *r;
	char		*o = *op, c;
	int		 v;

	for (r = p; r < end; r++) {
		if (*r == '@')
			host = r + 1;
	}
	while (p < end) {
		if (*p == '\\') {
			*why = "a '\\' in the authority";
			return (-1);
		}
		if (*p != '%') {
			*o++ = p >= host ? lower(*p) : *p;
			p++;
			continue;
		}
		if ((v = pct(p, end)) < 0) {
			*why = "an invalid percent-encoding";
			return (-1);
		}
		if (v == 0) {
			*why = "an encoded NUL (%00)";
			return (-1);
		}
		if (unreserved(v)) {
			c = (char)v;
			*o++ = p >= host ? lower(c) : c;
		} else
			o = put_pct(o, v);
		p += 3;
	}
	*op = o;
	return (0);
}

/* Does a decoded byte stay encoded in the path? */
static int
path_keeps(int v, int flags)
{
	if (unreserved(v))
		return (0);
	if (!(flags & URI_DECODE))
		return (1);
	return (v == '%' || v == '?' || v == '#' || v < 0x20 || v == 0x7f);
}

/*
 * One segment of the path, to the next '/' or the end: percent-encodings
 * normalised.  Sets *encdot if a '.' was spelled %2E.
 */
static int
norm_segment(const char **pp, const char *end, int flags, char **op,
    int *encdot, const char **why)
{
	const char	*p = *pp;
	char		*o = *op;
	int		 v;

	*encdot = 0;
	while (p < end && *p != '/') {
		if (*p == '\\') {
			*why = "a '\\' in the path";
			return (-1);
		}
		if (*p != '%') {
			*o++ = *p++;
			continue;
		}
		switch ((v = pct(p, end))) {
		case -1:
			*why = "an invalid percent-encoding";
			return (-1);
		case 0:
			*why = "an encoded NUL (%00)";
			return (-1);
		case '/':
			*why = "an encoded '/' (%2F) in the path";
			return (-1);
		case '\\':
			*why = "an encoded '\\' (%5C) in the path";
			return (-1);
		case '%':
			/* What follows may become two hex digits. */
			if (end - p >= 4 && (p[3] == '%' ||
			    hex_digit((unsigned char)p[3]) >= 0)) {
				*why = "a double percent-encoding (%25 before "
				    "a hex digit or '%') in the path";
				return (-1);
			}
			break;
		case '.':
			*encdot = 1;
			break;
		}
		if (path_keeps(v, flags))
			o = put_pct(o, v);
		else
			*o++ = (char)v;
		p += 3;
	}
	*pp = p;
	*op = o;
	return (0);
}

/*
 * The path: each segment normalised, "." segments removed (RFC 3986
 * section 5.2.4), and what a resolver could read otherwise refused.
 */
static int
norm_path(const char *p, const char *end, int flags, char **op,
    const char **why)
{
	char	*o = *op, *seg;
	size_t	 n;
	int	 encdot, last;

	if (p < end && *p == '/')
		*o++ = *p++;
	for (;;) {
		seg = o;
		if (norm_segment(&p, end, flags, &o, &encdot, why) != 0)
			return (-1);
		last = p == end;
		n = (size_t)(o - seg);
		if (n >= 2 && seg[0] == '.' && seg[1] == '.' &&
		    (n == 2 || seg[2] == ';')) {
			*why = "a '..' segment in the path";
			return (-1);
		}
		if (n == 1 && seg[0] == '.') {
			if (encdot) {
				*why = "a '.' segment spelled with %2E";
				return (-1);
			}
			/* Removed, with the '/' after it. */
			o = seg;
			if (last)
				break;
			p++;
			continue;
		}
		if (n == 0 && !last) {
			*why = "an empty segment (//) in the path";
			return (-1);
		}
		if (last)
			break;
		*o++ = *p++;
	}
	*op = o;
	return (0);
}

/* The query and the fragment: percent-encodings normalised. */
static int
norm_rest(const char *p, const char *end, char **op, const char **why)
{
	char	*o = *op;
	int	 v;

	while (p < end) {
		if (*p != '%') {
			*o++ = *p++;
			continue;
		}
		if ((v = pct(p, end)) < 0) {
			*why = "an invalid percent-encoding";
			return (-1);
		}
		if (v == 0) {
			*why = "an encoded NUL (%00)";
			return (-1);
		}
		if (unreserved(v))
			*o++ = (char)v;
		else
			o = put_pct(o, v);
		p += 3;
	}
	*op = o;
	return (0);
}

int
uri_normalize(const char *in, size_t len, int flags, char *out, size_t size,
    const char **why)
{
	const char	*p = in, *end = in + len, *q;
	char		*o = out;
	size_t		 i;
	unsigned char	 c;

	if (size < len + 1) {
		*why = "the URI is too long";
		return (-1);
	}
	for (i = 0; i < len; i++) {
		c = (unsigned char)in[i];
		if (c < 0x20 || c == 0x7f) {
			*why = "a control character";
			return (-1);
		}
	}
	/* The scheme, in lower case. */
	if (p == end || !alpha((unsigned char)*p)) {
		*why = "no scheme";
		return (-1);
	}
	while (p < end && (alpha((unsigned char)*p) ||
	    (*p >= '0' && *p <= '9') || *p == '+' || *p == '-' || *p == '.'))
		*o++ = lower(*p++);
	if (p == end || *p != ':') {
		*why = "no scheme";
		return (-1);
	}
	*o++ = *p++;
	if (end - p >= 2 && p[0] == '/' && p[1] == '/') {
		*o++ = *p++;
		*o++ = *p++;
		for (q = p; q < end && *q != '/' && *q != '?' && *q != '#'; q++)
			;
		if (norm_authority(p, q, &o, why) != 0)
			return (-1);
		p = q;
	}
	for (q = p; q < end && *q != '?' && *q != '#'; q++)
		;
	if (norm_path(p, q, flags, &o, why) != 0 ||
	    norm_rest(q, end, &o, why) != 0)
		return (-1);
	*o = '\0';
	return (0);
}
