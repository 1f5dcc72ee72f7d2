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

/* The first field called name: its start in *field, its end in *amp. */
static int
form_find(const char *q, size_t len, const char *name, const char **field,
    const char **amp)
{
	const char	*end = q + len;
	size_t		 n = strlen(name);

	for (;;) {
		if ((*amp = memchr(q, '&', (size_t)(end - q))) == NULL)
			*amp = end;
		if ((size_t)(*amp - q) > n && memcmp(q, name, n) == 0 &&
		    q[n] == '=') {
			*field = q;
			return (1);
		}
		if (*amp == end)
			return (0);
		q = *amp + 1;
	}
}

int
form_has(const char *q, size_t len, const char *name)
{
	const char	*field, *amp;

	return (form_find(q, len, name, &field, &amp));
}

int
form_field(const char *q, size_t len, const char *name, char *buf,
    size_t buflen)
{
	const char	*amp, *v;
	size_t		 n = strlen(name), o = 0;
	int		 hi, lo;

	if (buflen == 0 || !form_find(q, len, name, &q, &amp))
		return (0);
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
