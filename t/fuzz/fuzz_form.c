/* SPDX-License-Identifier: ISC */
/*
 * Fuzz the form reader the login link's page posts to (common/form.c).
 *
 * The input is a form body; the first byte chooses the buffer's size.
 * A field found is NUL-free and shorter than the buffer, and equals what
 * a plain decoder of that field makes of it; encoding the value again
 * (as a browser does) and reading it back gives the same value; a field
 * refused is absent, too long, badly encoded or holds a NUL, as the
 * plain decoder says; form_has finds what the plain decoder finds.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "form.h"

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
	if (c >= 'a' && c <= 'f')
		return (c - 'a' + 10);
	if (c >= 'A' && c <= 'F')
		return (c - 'A' + 10);
	return (-1);
}

/* The plain reading: the first field called name, decoded into out (of
 * room len + 1); its length, -1 if absent, -2 if badly encoded. */
static long
plain(const char *q, size_t len, const char *name, char *out)
{
	size_t	i = 0, j, n = strlen(name), o = 0;

	while (i <= len) {
		for (j = i; j < len && q[j] != '&'; j++)
			;
		if (j - i > n && memcmp(q + i, name, n) == 0 &&
		    q[i + n] == '=') {
			for (i += n + 1; i < j; i++) {
				if (q[i] == '+')
					out[o++] = ' ';
				else if (q[i] != '%')
					out[o++] = q[i];
				else if (j - i < 3 || hexval(q[i + 1]) < 0 ||
				    hexval(q[i + 2]) < 0)
					return (-2);
				else {
					out[o++] = (char)(hexval(q[i + 1]) << 4 |
					    hexval(q[i + 2]));
					i += 2;
				}
			}
			return ((long)o);
		}
		i = j + 1;
	}
	return (-1);
}

/* Encode as a browser does: unreserved kept, space '+', the rest %XX. */
static size_t
encode(const char *v, size_t n, char *out)
{
	static const char	hex[] = "0123456789ABCDEF";
	size_t			i, o = 0;
	unsigned char		c;

	for (i = 0; i < n; i++) {
		c = (unsigned char)v[i];
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '.' ||
		    c == '_' || c == '*')
			out[o++] = (char)c;
		else if (c == ' ')
			out[o++] = '+';
		else {
			out[o++] = '%';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
	}
	return (o);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = { "login", "token", "a", "" };
	const char	*q;
	char		*buf, *ref, *enc, *again;
	size_t		 len, buflen, i, n;
	long		 want;
	int		 got;

	if (size < 1)
		return (0);
	buflen = data[0] % 64;
	q = (const char *)data + 1;
	len = size - 1;
	buf = malloc(buflen + 1);
	ref = malloc(len + 1);
	enc = malloc(len * 3 + 16);
	again = malloc(len + 1);
	for (i = 0; i < sizeof names / sizeof names[0]; i++) {
		memset(buf, 0x55, buflen + 1);
		got = form_field(q, len, names[i], buf, buflen);
		want = plain(q, len, names[i], ref);
		CHECK(form_has(q, len, names[i]) == (want != -1));
		if (!got) {
			/* Absent, badly encoded, too long, or a NUL in it
			 * (%00 is refused even where the plain reader takes
			 * it). */
			CHECK(want < 0 || (size_t)want + 1 > buflen ||
			    memchr(ref, '\0', (size_t)want) != NULL ||
			    memmem(q, len, "%00", 3) != NULL);
			continue;
		}
		CHECK(want >= 0);
		n = strlen(buf);
		CHECK(n == (size_t)want && n < buflen);
		CHECK(memcmp(buf, ref, n) == 0);
		/* A browser's encoding of it reads back the same. */
		memcpy(enc, "x=1&f=", 6);
		n = encode(buf, n, enc + 6) + 6;
		CHECK(form_field(enc, n, "f", again, len + 1) == 1);
		CHECK(strcmp(again, buf) == 0);
	}
	free(buf);
	free(ref);
	free(enc);
	free(again);
	return (0);
}
