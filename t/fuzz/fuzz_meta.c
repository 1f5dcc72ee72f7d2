/* SPDX-License-Identifier: ISC */
/*
 * Fuzz the 2026-07-28 envelope (common/meta.c) and requestState tokens
 * (common/state_token.c).
 *
 * The input is header lines ("Name: value\n"), a blank line, and a body.
 * The body is scanned as JSON-RPC; a request's envelope and the headers
 * MCP-Protocol-Version, Mcp-Method and Mcp-Name are checked as the
 * gateway checks a POST, and the verdict must be consistent: a pass
 * means the version is 2026-07-28, the capabilities an object and the
 * method known, at status 200; each refusal has its code's status.
 * Every header value decoded from the Base64 sentinel is UTF-8 and
 * encodes back to what decodes the same; any valid UTF-8 encodes to a
 * header value that decodes back to it.  Dropping the envelope's members
 * from _meta leaves valid JSON without them and with the rest.  Tokens:
 * the body as a token never crashes the verifier, and a token minted
 * from input-derived fields verifies, until one byte of it changes.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <jansson.h>

#include "meta.h"
#include "state_token.h"

#define CHECK(x) do {							\
	if (!(x)) {							\
		fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__,	\
		    __LINE__, #x);					\
		abort();						\
	}								\
} while (0)

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Is p[0..n) valid UTF-8, as jansson takes it? */
static int
utf8(const char *p, size_t n)
{
	json_t	*s = json_stringn(p, n);

	json_decref(s);
	return (s != NULL);
}

/* Does a key, decoded whole however long, begin with the reserved prefix? */
static int
reserved_key(const char *p, struct jspan k)
{
	char	*buf = malloc(k.len + 1);
	ssize_t	 n;
	int	 r;

	if (buf == NULL)
		abort();
	n = jscan_string(p, k, buf, k.len + 1);
	r = n >= (ssize_t)strlen(META_PREFIX) &&
	    memcmp(buf, META_PREFIX, strlen(META_PREFIX)) == 0;
	free(buf);
	return (r);
}

/* Header values decode to UTF-8, and encode back to what decodes the same. */
static void
check_header_value(const char *v, size_t len)
{
	static char	 out[META_NAME_MAX], again[META_NAME_MAX];
	struct evbuffer	*enc;
	ssize_t		 n, m;

	n = meta_header_decode(v, len, out, sizeof out);
	if (n < 0)
		return;
	CHECK((size_t)n <= len);
	if (len >= 11 && memcmp(v, "=?base64?", 9) == 0 &&
	    memcmp(v + len - 2, "?=", 2) == 0)
		CHECK(utf8(out, (size_t)n));
	if (!utf8(out, (size_t)n))
		return;		/* a plain value is not re-encodable */
	enc = evbuffer_new();
	meta_header_encode(enc, out, (size_t)n);
	m = meta_header_decode((const char *)evbuffer_pullup(enc, -1),
	    evbuffer_get_length(enc), again, sizeof again);
	CHECK(m == n && memcmp(again, out, (size_t)n) == 0);
	evbuffer_free(enc);
}

/* Any valid UTF-8 survives encoding and decoding. */
static void
check_round_trip(const char *p, size_t n)
{
	static char	 out[META_NAME_MAX];
	struct evbuffer	*enc;
	const char	*e;
	size_t		 el, i;
	ssize_t		 m;

	if (n > 1024 || !utf8(p, n))
		return;
	enc = evbuffer_new();
	meta_header_encode(enc, p, n);
	el = evbuffer_get_length(enc);
	e = (const char *)evbuffer_pullup(enc, -1);
	/* What goes in a header is visible ASCII, space or tab. */
	for (i = 0; i < el; i++)
		CHECK((e[i] >= 0x20 && e[i] < 0x7f) || e[i] == '\t');
	m = meta_header_decode(e, el, out, sizeof out);
	CHECK(m == (ssize_t)n && memcmp(out, p, n) == 0);
	evbuffer_free(enc);
}

/* The verdict on a request agrees with itself. */
static void
check_request(const struct meta_headers *h, const struct jrpc *m)
{
	static const char *const drop[] = { META_PREFIX, NULL };
	struct meta_envelope	 env;
	struct jedit		 edits[64];
	struct jspan		 v, k, e;
	struct jiter		 it;
	struct evbuffer		*out;
	const char		*why2, *text;
	char			 why[512];
	size_t			 where, before = 0, after = 0, kept = 0, len;
	int			 code, status, n;

	code = meta_check(h, m, &env, &status, why, sizeof why);
	switch (code) {
	case 0:
		CHECK(status == 200);
		CHECK(strcmp(env.version_text, MCP_VERSION_MODERN) == 0);
		CHECK(jscan_type(m->p, env.caps) == JT_OBJECT);
		CHECK(mcp_method_is(m->method_id, MCPM_F_2026));
		CHECK(meta_claim(m));
		CHECK(h->version != NULL && h->method != NULL);
		break;
	case JRPC_METHOD_NOT_FOUND:
		CHECK(status == 404);
		CHECK(!mcp_method_is(m->method_id, MCPM_F_2026));
		CHECK(m->method_id == mcp_method_lookup(m->method_name,
		    strlen(m->method_name)));
		break;
	case JRPC_INVALID_PARAMS:
	case MCP_HEADER_MISMATCH:
	case MCP_UNSUPPORTED_VERSION:
		CHECK(status == 400);
		CHECK(why[0] != '\0');
		break;
	default:
		CHECK(0);
	}
	if (code == JRPC_INVALID_PARAMS || env.meta.len == 0)
		return;
	/* Dropping the envelope leaves valid JSON, and the rest. */
	n = meta_drop_members(m->p, env.meta, drop, edits, 64);
	if (n < 0)
		return;
	CHECK(jscan_object(m->p, env.meta, &it) == 0);
	while (jscan_next_member(&it, &k, &e)) {
		before++;
		if (!reserved_key(m->p, k))
			kept++;
	}
	out = evbuffer_new();
	jscan_splice(out, m->p, m->n, edits, (size_t)n);
	len = evbuffer_get_length(out);
	text = (const char *)evbuffer_pullup(out, -1);
	CHECK(jscan_validate(text, len, &v, &why2, &where) == 0);
	if (jscan_path(text, v, (const char *const[]){ "params", "_meta",
	    NULL }, &v) == 0 && jscan_object(text, v, &it) == 0) {
		while (jscan_next_member(&it, &k, &e)) {
			after++;
			CHECK(!reserved_key(text, k));
		}
		CHECK(after == kept);
	}
	(void)before;
	evbuffer_free(out);
}

/* Tokens: never a crash; a minted one verifies until a byte changes. */
static void
check_token(const char *p, size_t n)
{
	static const unsigned char	 key[] = "fuzz-key-0123456789abcdef0123456";
	struct stoken			 t, u;
	char				 tok[STOKEN_MAX];
	size_t				 i, len;
	enum stoken_result		 r;

	r = stoken_verify(p, n, key, sizeof key - 1, 1, &u);
	CHECK(r == STOKEN_NOT_OURS || r == STOKEN_MALFORMED ||
	    r == STOKEN_BAD_MAC);
	memset(&t, 0, sizeof t);
	t.kind = STOKEN_KIND_PARKED;
	t.round = n & 0xffff;
	t.expires = 1000 + n;
	for (i = 0; i < STOKEN_ID_LEN; i++)
		t.id[i] = i < n ? (unsigned char)p[i] : 0;
	stoken_binding("fuzz", "tools/call", p, n > 64 ? 64 : n, p, n, t.binding);
	snprintf(t.instance, sizeof t.instance, "i%zu", n % 1000);
	stoken_mint(&t, key, sizeof key - 1, tok);
	len = strlen(tok);
	CHECK(stoken_verify(tok, len, key, sizeof key - 1, 999, &u) ==
	    STOKEN_OK);
	CHECK(memcmp(u.id, t.id, STOKEN_ID_LEN) == 0 && u.round == t.round);
	CHECK(stoken_verify(tok, len, key, sizeof key - 1, 1000 + n, &u) ==
	    STOKEN_EXPIRED);
	if (n > 0) {
		i = (unsigned char)p[0] % len;
		tok[i] = tok[i] == 'Q' ? 'R' : 'Q';
		CHECK(stoken_verify(tok, len, key, sizeof key - 1, 999, &u) !=
		    STOKEN_OK);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char		*p = (const char *)data, *line, *colon, *nl;
	const char		*body = p, *why;
	struct meta_headers	 h;
	struct jrpc		 m;
	size_t			 n = size, vl;
	const char		*v;

	memset(&h, 0, sizeof h);
	/* Header lines up to a blank line, if there is one. */
	for (line = p; line < p + size; line = nl + 1) {
		if ((nl = memchr(line, '\n', (size_t)(p + size - line))) ==
		    NULL)
			break;
		if (nl == line) {
			body = nl + 1;
			n = (size_t)(p + size - body);
			break;
		}
		if ((colon = memchr(line, ':', (size_t)(nl - line))) == NULL)
			continue;
		v = colon + 1;
		while (v < nl && (*v == ' ' || *v == '\t'))
			v++;
		vl = (size_t)(nl - v);
		check_header_value(v, vl);
		if ((size_t)(colon - line) == 20 &&
		    strncasecmp(line, "MCP-Protocol-Version", 20) == 0) {
			h.version = v;
			h.versionlen = vl;
		} else if ((size_t)(colon - line) == 10 &&
		    strncasecmp(line, "Mcp-Method", 10) == 0) {
			h.method = v;
			h.methodlen = vl;
		} else if ((size_t)(colon - line) == 8 &&
		    strncasecmp(line, "Mcp-Name", 8) == 0) {
			h.name = v;
			h.namelen = vl;
		}
	}
	check_round_trip(body, n);
	if (jrpc_scan(body, n, &m, &why) == 0 && m.kind == JRPC_REQUEST)
		check_request(&h, &m);
	if (n < 4096)
		check_token(body, n);
	return (0);
}
