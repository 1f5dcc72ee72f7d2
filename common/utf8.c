/* SPDX-License-Identifier: ISC */
/*
 * UTF-8 validation, for what the gateway takes in as text without a JSON
 * parser's help: WebSocket text frames, decoded header values.
 */
#include "config.h"

#include <stdint.h>

#include "utf8.h"

/* The length of the well-formed sequence at p[0..n), or 0 if none is. */
static size_t
seq_len(const unsigned char *p, size_t n)
{
	size_t		k, need;
	uint32_t	cp, min;

	if (p[0] < 0x80)
		return (1);
	if ((p[0] & 0xe0) == 0xc0) {
		need = 1;
		cp = p[0] & 0x1f;
		min = 0x80;
	} else if ((p[0] & 0xf0) == 0xe0) {
		need = 2;
		cp = p[0] & 0x0f;
		min = 0x800;
	} else if ((p[0] & 0xf8) == 0xf0) {
		need = 3;
		cp = p[0] & 0x07;
		min = 0x10000;
	} else
		return (0);
	if (n <= need)
		return (0);
	for (k = 1; k <= need; k++) {
		if ((p[k] & 0xc0) != 0x80)
			return (0);
		cp = (cp << 6) | (p[k] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return (0);
	return (need + 1);
}

int
utf8_valid(const unsigned char *p, size_t n)
{
	size_t	i = 0, k;

	while (i < n) {
		if ((k = seq_len(p + i, n - i)) == 0)
			return (0);
		i += k;
	}
	return (1);
}

void
utf8_scrub(char *s, size_t n)
{
	unsigned char	*p = (unsigned char *)s;
	size_t		 i = 0, k;

	while (i < n) {
		if ((k = seq_len(p + i, n - i)) == 0) {
			p[i++] = '?';
			continue;
		}
		i += k;
	}
}
