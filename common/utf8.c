/* SPDX-License-Identifier: ISC */
/*
 * UTF-8 validation, for what the gateway takes in as text without a JSON
 * parser's help: WebSocket text frames, decoded header values.
 */
#include "config.h"

#include <stdint.h>

#include "utf8.h"

int
utf8_valid(const unsigned char *p, size_t n)
{
	size_t		i = 0, k, need;
	uint32_t	cp, min;

	while (i < n) {
		if (p[i] < 0x80) {
			i++;
			continue;
		}
		if ((p[i] & 0xe0) == 0xc0) {
			need = 1;
			cp = p[i] & 0x1f;
			min = 0x80;
		} else if ((p[i] & 0xf0) == 0xe0) {
			need = 2;
			cp = p[i] & 0x0f;
			min = 0x800;
		} else if ((p[i] & 0xf8) == 0xf0) {
			need = 3;
			cp = p[i] & 0x07;
			min = 0x10000;
		} else
			return (0);
		if (n - i <= need)
			return (0);
		for (k = 1; k <= need; k++) {
			if ((p[i + k] & 0xc0) != 0x80)
				return (0);
			cp = (cp << 6) | (p[i + k] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return (0);
		i += need + 1;
	}
	return (1);
}
