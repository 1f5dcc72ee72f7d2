/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <stdint.h>

#include "b64.h"

static const char b64url[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

size_t
b64url_encode(const unsigned char *in, size_t n, char *out)
{
	size_t		i, o = 0;
	uint32_t	v;

	for (i = 0; i < n; i += 3) {
		v = (uint32_t)in[i] << 16;
		if (i + 1 < n)
			v |= (uint32_t)in[i + 1] << 8;
		if (i + 2 < n)
			v |= in[i + 2];
		out[o++] = b64url[(v >> 18) & 63];
		out[o++] = b64url[(v >> 12) & 63];
		if (i + 1 < n)
			out[o++] = b64url[(v >> 6) & 63];
		if (i + 2 < n)
			out[o++] = b64url[v & 63];
	}
	out[o] = '\0';
	return (o);
}

/* The value of a digit both alphabets share (A-Z a-z 0-9), or -1. */
static int
alnum_digit(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return (c - 'A');
	if (c >= 'a' && c <= 'z')
		return (c - 'a' + 26);
	if (c >= '0' && c <= '9')
		return (c - '0' + 52);
	return (-1);
}

int
b64url_digit(unsigned char c)
{
	if (c == '-')
		return (62);
	if (c == '_')
		return (63);
	return (alnum_digit(c));
}

int
b64_digit(unsigned char c)
{
	if (c == '+')
		return (62);
	if (c == '/')
		return (63);
	return (alnum_digit(c));
}
