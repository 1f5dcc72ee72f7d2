/* SPDX-License-Identifier: ISC */
/*
 * HTML forms as browsers post them: fields separated by '&', a name and
 * a value separated by '=', each percent-encoded with '+' for a space
 * (the URL Standard's application/x-www-form-urlencoded).  Only what the
 * gateway's own pages post is read, one field at a time.
 */
#include "config.h"

#include <string.h>

#include "form.h"
#include "hex.h"

int
form_field(const char *q, size_t len, const char *name, char *buf,
    size_t buflen)
{
	const char	*end = q + len, *amp, *v;
	size_t		 n = strlen(name), o = 0;
	int		 hi, lo;

	if (buflen == 0)
		return (0);
	for (;;) {
		if ((amp = memchr(q, '&', (size_t)(end - q))) == NULL)
			amp = end;
		if ((size_t)(amp - q) > n && memcmp(q, name, n) == 0 &&
		    q[n] == '=')
			break;
		if (amp == end)
			return (0);
		q = amp + 1;
	}
	for (v = q + n + 1; v < amp; v++) {
		if (o + 1 >= buflen)
			return (0);
		if (*v == '+')
			buf[o++] = ' ';
		else if (*v != '%')
			buf[o++] = *v;
		else if (amp - v < 3 ||
		    (hi = hex_digit((unsigned char)v[1])) < 0 ||
		    (lo = hex_digit((unsigned char)v[2])) < 0 ||
		    (hi | lo) == 0)
			return (0);
		else {
			buf[o++] = (char)(hi << 4 | lo);
			v += 2;
		}
	}
	buf[o] = '\0';
	return (memchr(buf, '\0', o) == NULL);
}
