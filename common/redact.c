/* SPDX-License-Identifier: ISC */
/* URLs fit to show: credentials replaced by "***" (redact.h). */
#include "config.h"

#include <string.h>

#include "hex.h"
#include "redact.h"

/* Bounded output: once full, "..." ends it. */
struct out {
	char	*buf;
	size_t	 len;
	size_t	 n;
	int	 full;
};

/*
 * Parts of a parameter's name (lower case, without - _ . and spaces) that
 * make it secret, and whole names that do.  Showing a harmless value as
 * "***" costs little; showing a key costs a key.
 */
static const char *const secret_parts[] = {
	"key", "token", "secret", "pass", "pwd", "auth", "sig", "credential",
	"session", "jwt", "cookie", "verifier", "assertion", NULL
};
/* OAuth's: an authorization's code and state, a PKCE verifier's
 * "code_verifier" by its part, an OpenID nonce. */
static const char *const secret_names[] = { "code", "otp", "state",
	"nonce", NULL };

/* Append n bytes, or what fits of them. */
static void
out_put(struct out *o, const char *p, size_t n)
{
	size_t	room;

	if (o->full)
		return;
	room = o->len - 1 - o->n;
	if (n > room) {
		memcpy(o->buf + o->n, p, room);
		o->n += room;
		o->full = 1;
		if (o->len > 4)
			memcpy(o->buf + o->len - 4, "...", 3);
		return;
	}
	memcpy(o->buf + o->n, p, n);
	o->n += n;
}

int
redact_secret_name(const char *name, size_t len)
{
	char	norm[128];
	size_t	i, n = 0;
	int	c, hi, lo;

	for (i = 0; i < len; i++) {
		c = (unsigned char)name[i];
		if (c == '%' && i + 2 < len &&
		    (hi = hex_digit((unsigned char)name[i + 1])) >= 0 &&
		    (lo = hex_digit((unsigned char)name[i + 2])) >= 0) {
			c = hi * 16 + lo;
			i += 2;
		}
		if (c == '\0' || c == '-' || c == '_' || c == '.' || c == ' ' ||
		    c == '+')
			continue;
		/* A name this long is no name: take it for a secret. */
		if (n == sizeof norm - 1)
			return (1);
		norm[n++] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
	}
	norm[n] = '\0';
	for (i = 0; secret_names[i] != NULL; i++) {
		if (strcmp(norm, secret_names[i]) == 0)
			return (1);
	}
	for (i = 0; secret_parts[i] != NULL; i++) {
		if (strstr(norm, secret_parts[i]) != NULL)
			return (1);
	}
	return (0);
}

/* The length of a scheme and its colon at the start of u, or 0. */
static size_t
scheme_len(const char *u)
{
	size_t	i;

	if (!((u[0] >= 'a' && u[0] <= 'z') || (u[0] >= 'A' && u[0] <= 'Z')))
		return (0);
	for (i = 1; (u[i] >= 'a' && u[i] <= 'z') || (u[i] >= 'A' &&
	    u[i] <= 'Z') || (u[i] >= '0' && u[i] <= '9') || u[i] == '+' ||
	    u[i] == '-' || u[i] == '.'; i++)
		;
	return (u[i] == ':' ? i + 1 : 0);
}

/* Is [p, end) a host with at most a numeric port? */
static int
host_port(const char *p, const char *end)
{
	const char	*c = NULL, *s;

	if (p < end && *p == '[') {
		if ((c = memchr(p, ']', (size_t)(end - p))) == NULL)
			return (0);
		if (++c == end)
			return (1);
		if (*c != ':')
			return (0);
	} else {
		for (s = p; s < end; s++) {
			if (*s == ':')
				c = s;
		}
		if (c == NULL)
			return (1);
	}
	for (c++; c < end; c++) {
		if (*c < '0' || *c > '9')
			return (0);
	}
	return (1);
}

/* The parameters of a query or a fragment, separated by & or ;. */
static void
put_params(struct out *o, const char *p, size_t len)
{
	size_t	i = 0, j, eq;

	while (i <= len) {
		for (j = i; j < len && p[j] != '&' && p[j] != ';'; j++)
			;
		for (eq = i; eq < j && p[eq] != '='; eq++)
			;
		if (eq + 1 < j && redact_secret_name(p + i, eq - i)) {
			out_put(o, p + i, eq + 1 - i);
			out_put(o, REDACT_MASK, sizeof REDACT_MASK - 1);
		} else
			out_put(o, p + i, j - i);
		if (j < len)
			out_put(o, p + j, 1);
		i = j + 1;
	}
}

const char *
url_redact(const char *url, char *buf, size_t len)
{
	struct out	 o = { buf, len, 0, 0 };
	const char	*p = url, *end, *at = NULL, *c;
	size_t		 s;
	int		 authority = 0;

	if (len == 0)
		return (buf);
	s = scheme_len(p);
	if (p[s] == '/' && p[s + 1] == '/') {
		out_put(&o, p, s + 2);
		p += s + 2;
		authority = 1;
	}
	/* User information: up to the last '@' before the path. */
	end = p + strcspn(p, "/?#");
	for (c = p; c < end; c++) {
		if (*c == '@')
			at = c;
	}
	/* No host and port: a password with '/', '?' or '#' in it. */
	if (at == NULL && authority && !host_port(p, end))
		at = strrchr(end, '@');
	if (at != NULL) {
		out_put(&o, REDACT_MASK "@", sizeof REDACT_MASK);
		p = at + 1;
	}
	/* Host, port and path as they are. */
	s = strcspn(p, "?#");
	out_put(&o, p, s);
	p += s;
	if (*p == '?') {
		s = strcspn(p + 1, "#");
		out_put(&o, "?", 1);
		put_params(&o, p + 1, s);
		p += 1 + s;
	}
	if (*p == '#') {
		out_put(&o, "#", 1);
		put_params(&o, p + 1, strlen(p + 1));
	}
	buf[o.n] = '\0';
	return (buf);
}
