/* SPDX-License-Identifier: ISC */
/*
 * W3C Trace Context, level 1 (https://www.w3.org/TR/trace-context/):
 * traceparent is "00-" 32 hex "-" 16 hex "-" 2 hex, lowercase, neither id
 * all zero.  A later version's longer form and version ff are not read:
 * the gateway speaks level 1 and a context it cannot read is ignored, so
 * the request starts a trace of its own.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "json_scan.h"
#include "traceparent.h"

static const char hexdigits[] = "0123456789abcdef";

/* One lowercase hex digit's value, or -1. */
static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return (c - '0');
	if (c >= 'a' && c <= 'f')
		return (c - 'a' + 10);
	return (-1);
}

/* Read 2n lowercase hex digits into n bytes; -1 if one is not. */
static int
unhex(const char *s, uint8_t *out, size_t n)
{
	size_t	i;
	int	hi, lo;

	for (i = 0; i < n; i++) {
		if ((hi = hexval(s[2 * i])) < 0 ||
		    (lo = hexval(s[2 * i + 1])) < 0)
			return (-1);
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return (0);
}

/* Are n bytes all zero? */
static int
allzero(const uint8_t *p, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		if (p[i] != 0)
			return (0);
	return (1);
}

int
tp_parse(const char *s, size_t len, struct tracectx *ctx)
{
	uint8_t	version, flags;

	if (len != TP_LEN || s[2] != '-' || s[35] != '-' || s[52] != '-')
		return (-1);
	if (unhex(s, &version, 1) != 0 || version != 0 ||
	    unhex(s + 3, ctx->trace_id, 16) != 0 ||
	    unhex(s + 36, ctx->span_id, 8) != 0 ||
	    unhex(s + 53, &flags, 1) != 0)
		return (-1);
	if (allzero(ctx->trace_id, 16) || allzero(ctx->span_id, 8))
		return (-1);
	ctx->flags = flags;
	return (0);
}

void
tp_hex(const uint8_t *p, size_t n, char *out)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		out[2 * i] = hexdigits[p[i] >> 4];
		out[2 * i + 1] = hexdigits[p[i] & 0xf];
	}
	out[2 * n] = '\0';
}

void
tp_format(const struct tracectx *ctx, char *out)
{
	memcpy(out, "00-", 3);
	tp_hex(ctx->trace_id, 16, out + 3);
	out[35] = '-';
	tp_hex(ctx->span_id, 8, out + 36);
	out[52] = '-';
	tp_hex(&ctx->flags, 1, out + 53);
}

/* A key's character after the first (level 1: lcalpha, digits, _-*&#47;). */
static int
key_char(char c)
{
	return ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	    c == '_' || c == '-' || c == '*' || c == '/');
}

/*
 * One list member, without the whitespace around it: key "=" value.  A
 * key is lcalpha then up to 255 key characters, or tenant@system (tenant
 * up to 241 starting with lcalpha or a digit, system up to 14 starting
 * with lcalpha); a value is 1 to 256 printable ASCII characters but ","
 * and "=", not ending in a space.
 */
static int
ts_member(const char *s, size_t n)
{
	const char	*eq, *at;
	size_t		 klen, vlen, i;

	if ((eq = memchr(s, '=', n)) == NULL)
		return (0);
	klen = (size_t)(eq - s);
	vlen = n - klen - 1;
	if (klen == 0 || vlen == 0 || vlen > 256)
		return (0);
	at = memchr(s, '@', klen);
	if (at == NULL) {
		if (klen > 256 || !(s[0] >= 'a' && s[0] <= 'z'))
			return (0);
		for (i = 1; i < klen; i++)
			if (!key_char(s[i]))
				return (0);
	} else {
		size_t	tlen = (size_t)(at - s), slen = klen - tlen - 1;

		if (tlen == 0 || tlen > 241 || slen == 0 || slen > 14 ||
		    !((s[0] >= 'a' && s[0] <= 'z') ||
		    (s[0] >= '0' && s[0] <= '9')) ||
		    !(at[1] >= 'a' && at[1] <= 'z'))
			return (0);
		for (i = 1; i < klen; i++)
			if (i != tlen && !key_char(s[i]))
				return (0);
	}
	for (i = 0; i < vlen; i++)
		if (eq[1 + i] < 0x20 || eq[1 + i] > 0x7e || eq[1 + i] == ',' ||
		    eq[1 + i] == '=')
			return (0);
	return (eq[vlen] != ' ');
}

int
ts_valid(const char *s, size_t len)
{
	size_t	i, start, end, members = 0;

	if (len > TS_MAX)
		return (0);
	for (start = 0; start <= len; start = i + 1) {
		for (i = start; i < len && s[i] != ','; i++)
			;
		end = i;
		while (start < end && (s[start] == ' ' || s[start] == '\t'))
			start++;
		while (end > start && (s[end - 1] == ' ' ||
		    s[end - 1] == '\t'))
			end--;
		/* Empty members are allowed, and not counted. */
		if (end > start) {
			if (++members > TS_MEMBERS_MAX ||
			    !ts_member(s + start, end - start))
				return (0);
		}
	}
	return (1);
}

int
tp_from_meta(const struct jrpc *m, struct tracectx *ctx, char *ts)
{
	static const char *const tpath[] = { "_meta", "traceparent", NULL };
	static const char *const spath[] = { "_meta", "tracestate", NULL };
	struct jspan	 v;
	char		 buf[TP_LEN + 1];
	ssize_t		 n;

	ts[0] = '\0';
	if (m->params.len == 0 ||
	    jscan_path_unique(m->p, m->params, tpath, &v) != 0 ||
	    jscan_type(m->p, v) != JT_STRING ||
	    (n = jscan_string(m->p, v, buf, sizeof buf)) != TP_LEN ||
	    tp_parse(buf, (size_t)n, ctx) != 0)
		return (-1);
	if (jscan_path_unique(m->p, m->params, spath, &v) == 0 &&
	    jscan_type(m->p, v) == JT_STRING &&
	    (n = jscan_string(m->p, v, ts, TS_MAX + 1)) > 0 &&
	    strlen(ts) == (size_t)n && ts_valid(ts, (size_t)n))
		return (0);
	ts[0] = '\0';
	return (0);
}

int
tp_header_lines(const struct jrpc *m, char *tp, char *ts)
{
	struct tracectx	 ctx;
	char		 state[TS_MAX + 1], v[TP_LEN + 1];

	ts[0] = '\0';
	if (tp_from_meta(m, &ctx, state) != 0)
		return (-1);
	tp_format(&ctx, v);
	snprintf(tp, TP_HDR_MAX, "traceparent: %s", v);
	if (state[0] != '\0')
		snprintf(ts, TS_HDR_MAX, "tracestate: %s", state);
	return (0);
}
