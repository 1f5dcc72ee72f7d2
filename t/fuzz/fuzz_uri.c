/* SPDX-License-Identifier: ISC */
/*
 * Fuzz the URI normaliser the ACL matches resource URIs with
 * (common/uri.c), with and without URI_DECODE.  What it accepts it must
 * accept again unchanged (the normal form is a fixed point), never
 * longer than the input, with the scheme in lower case and none of what
 * it refuses in the result: no control character, NUL or '\' before the
 * query, no ".." or empty segment, no %2F, %5C, %2E or %00, no
 * percent-encoding that is invalid or in lower case, no unreserved
 * character left encoded.  Whatever URI_DECODE accepts, the plain form
 * accepts too; a refusal always says why.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uri.h"

#define CHECK(x) do {							\
	if (!(x)) {							\
		fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__,	\
		    __LINE__, #x);					\
		abort();						\
	}								\
} while (0)

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return (c - '0');
	if (c >= 'A' && c <= 'F')
		return (c - 'A' + 10);
	return (-1);
}

static int
unreserved(int c)
{
	return ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
	    c == '~');
}

/* Check what the normal form promises. */
static void
check_form(const char *u, size_t len, int flags)
{
	const char	*end = u + len, *p, *path, *rest, *seg, *why = NULL;
	char		*again;
	int		 v;

	CHECK(strlen(u) == len);
	/* A fixed point. */
	again = malloc(len + 1);
	CHECK(again != NULL);
	CHECK(uri_normalize(u, len, flags, again, len + 1, &why) == 0);
	CHECK(strcmp(again, u) == 0);
	free(again);
	/* The scheme, in lower case. */
	for (p = u; *p != ':'; p++)
		CHECK(!(*p >= 'A' && *p <= 'Z'));
	path = p + 1;
	if (end - path >= 2 && path[0] == '/' && path[1] == '/')
		for (path += 2; path < end && *path != '/' && *path != '?' &&
		    *path != '#'; path++)
			;
	for (rest = path; rest < end && *rest != '?' && *rest != '#'; rest++)
		;
	for (p = u; p < end; p++) {
		CHECK((unsigned char)*p >= 0x20 && *p != 0x7f);
		if (p < rest)
			CHECK(*p != '\\');
		if (*p != '%')
			continue;
		CHECK(end - p >= 3 && hexval(p[1]) >= 0 && hexval(p[2]) >= 0);
		v = hexval(p[1]) * 16 + hexval(p[2]);
		CHECK(v != 0 && !unreserved(v));
		if (p >= path && p < rest) {
			CHECK(v != '/' && v != '\\');
			if (flags & URI_DECODE)
				CHECK(v == '%' || v == '?' || v == '#' ||
				    v < 0x20 || v == 0x7f);
		}
	}
	/* No ".." and no empty segment inside the path. */
	p = path < rest && *path == '/' ? path + 1 : path;
	for (;;) {
		seg = p;
		while (p < rest && *p != '/')
			p++;
		CHECK(!(p - seg == 2 && seg[0] == '.' && seg[1] == '.'));
		CHECK(!(p - seg == 1 && seg[0] == '.'));
		if (p == rest)
			break;
		CHECK(p > seg);
		p++;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char		*plain, *decoded;
	const char	*why, *in = (const char *)data;
	int		 r, d;

	plain = malloc(size + 1);
	decoded = malloc(size + 1);
	CHECK(plain != NULL && decoded != NULL);
	why = NULL;
	r = uri_normalize(in, size, 0, plain, size + 1, &why);
	CHECK(r == 0 || (r == -1 && why != NULL && *why != '\0'));
	why = NULL;
	d = uri_normalize(in, size, URI_DECODE, decoded, size + 1, &why);
	CHECK(d == 0 || (d == -1 && why != NULL && *why != '\0'));
	if (d == 0)
		CHECK(r == 0);
	if (r == 0) {
		CHECK(strlen(plain) <= size);
		check_form(plain, strlen(plain), 0);
	}
	if (d == 0) {
		CHECK(strlen(decoded) <= strlen(plain));
		check_form(decoded, strlen(decoded), URI_DECODE);
	}
	/* Too small an output is refused, never overrun. */
	if (size > 0)
		CHECK(uri_normalize(in, size, 0, plain, size, &why) == -1);
	free(plain);
	free(decoded);
	return (0);
}
