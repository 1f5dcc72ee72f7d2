/* SPDX-License-Identifier: ISC */
/*
 * Fuzz the JSON scanner and the JSON-RPC envelope.
 *
 * jscan_validate's verdict is compared with jansson's json_loadb(...,
 * JSON_DECODE_ANY | JSON_ALLOW_NUL) on the same bytes, and for texts both
 * accept, every value jscan navigates to is compared with jansson's tree
 * (decoded strings, integers, shapes).  A disagreement aborts, except for
 * these known differences, each checked rather than assumed:
 *
 *  - jansson refuses integers beyond long long ("too big integer", "too
 *    big negative integer"), reals
 *    beyond double ("real number overflow") and object keys holding
 *    \u0000 ("NUL byte in object key not supported"); JSON allows all
 *    three.  The text is then rewritten with every number replaced by 0
 *    and every such key by "_" and jansson must accept that.
 *  - jscan refuses nesting deeper than JSCAN_MAX_DEPTH (256), jansson
 *    only beyond 2048; the jansson tree must then really be that deep.
 *  - jansson silently skips a NUL byte straight after a number or a
 *    literal ("[0\0]", "true\0"), a jansson bug; jscan refuses those, and
 *    must accept the text once such bytes are taken out.
 *
 * Build with -DFUZZ_STRICT_JANSSON to abort on those too.
 *
 * For texts that are valid JSON-RPC, the id (and a progress token) is
 * spliced out and replaced by the gateway's integer as the gateway does;
 * the result must scan the same, and splicing the original back must give
 * the original bytes.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <jansson.h>

#include "json_scan.h"
#include "jsonrpc.h"

#define CHECK(x) do {							\
	if (!(x)) {							\
		fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__,	\
		    __LINE__, #x);					\
		abort();						\
	}								\
} while (0)

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Decode a string span into a new buffer; return its length. */
static size_t
decode(const char *p, struct jspan s, char **out)
{
	ssize_t	len;

	*out = malloc(s.len);
	CHECK(*out != NULL);
	len = jscan_string(p, s, *out, s.len);
	CHECK(len >= 0);
	return ((size_t)len);
}

/* Compare the value at span s with jansson's value v. */
static void
compare(const char *p, struct jspan s, const json_t *v, int depth)
{
	struct jiter	 it;
	struct jspan	 k, e, found;
	const json_t	*jv;
	char		*key, *str, num[64];
	size_t		 klen, n, i;
	int64_t		 iv;

	CHECK(depth <= JSCAN_MAX_DEPTH);
	switch (jscan_type(p, s)) {
	case JT_OBJECT:
		CHECK(json_is_object(v));
		CHECK(jscan_object(p, s, &it) == 0);
		CHECK(jscan_array(p, s, &it) == -1);
		n = 0;
		while (jscan_next_member(&it, &k, &e))
			n++;
		/* Fewer in jansson only if keys repeat (it keeps the last). */
		CHECK(n >= json_object_size(v));
		CHECK(jscan_object(p, s, &it) == 0);
		while (jscan_next_member(&it, &k, &e)) {
			CHECK(jscan_type(p, k) == JT_STRING);
			klen = decode(p, k, &key);
			jv = json_object_getn(v, key, klen);
			CHECK(jv != NULL);
			if (n == json_object_size(v))
				compare(p, e, jv, depth + 1);
			if (memchr(key, '\0', klen) == NULL) {
				CHECK(jscan_string_equals(p, k, key));
				CHECK(jscan_member(p, s, key, &found) == 0);
				CHECK(found.off <= e.off);
				if (n == json_object_size(v))
					CHECK(found.off == e.off &&
					    found.len == e.len);
			}
			free(key);
		}
		break;
	case JT_ARRAY:
		CHECK(json_is_array(v));
		CHECK(jscan_array(p, s, &it) == 0);
		CHECK(jscan_object(p, s, &it) == -1);
		i = 0;
		while (jscan_next_element(&it, &e)) {
			CHECK(i < json_array_size(v));
			compare(p, e, json_array_get(v, i), depth + 1);
			i++;
		}
		CHECK(i == json_array_size(v));
		break;
	case JT_STRING:
		CHECK(json_is_string(v));
		n = decode(p, s, &str);
		CHECK(n == json_string_length(v));
		CHECK(memcmp(str, json_string_value(v), n) == 0);
		if (memchr(str, '\0', n) == NULL) {
			CHECK(jscan_string_equals(p, s, str));
			CHECK(jscan_string_equals(p, s, json_string_value(v)));
		}
		free(str);
		str = jscan_strdup(p, s);
		CHECK(str != NULL);
		CHECK(memcmp(str, json_string_value(v), n + 1) == 0);
		free(str);
		break;
	case JT_NUMBER:
		CHECK(json_is_number(v));
		if (jscan_int64(p, s, &iv) == 0) {
			CHECK(json_is_integer(v));
			CHECK(json_integer_value(v) == iv);
		} else if (json_is_integer(v)) {
			/* Only an integer out of int64 range may fail. */
			CHECK(0);
		} else if (s.len < sizeof num) {
			memcpy(num, p + s.off, s.len);
			num[s.len] = '\0';
			CHECK(strtod(num, NULL) == json_real_value(v));
		}
		break;
	case JT_TRUE:
		CHECK(json_is_true(v));
		break;
	case JT_FALSE:
		CHECK(json_is_false(v));
		break;
	case JT_NULL:
		CHECK(json_is_null(v));
		break;
	default:
		CHECK(0);
	}
}

/*
 * Rewrite valid text with every number as 0 and every key holding a NUL
 * as "_", collecting the edits in order.
 */
static void
neutralise(const char *p, struct jspan s, struct jedit **edits, size_t *n,
    size_t *cap)
{
	struct jiter	 it;
	struct jspan	 k, e;
	char		*key;
	size_t		 klen;

	if (*n + 2 > *cap) {
		*cap = *cap * 2 + 16;
		*edits = realloc(*edits, *cap * sizeof **edits);
		CHECK(*edits != NULL);
	}
	switch (jscan_type(p, s)) {
	case JT_OBJECT:
		jscan_object(p, s, &it);
		while (jscan_next_member(&it, &k, &e)) {
			klen = decode(p, k, &key);
			if (memchr(key, '\0', klen) != NULL) {
				if (*n + 2 > *cap) {
					*cap = *cap * 2 + 16;
					*edits = realloc(*edits,
					    *cap * sizeof **edits);
					CHECK(*edits != NULL);
				}
				(*edits)[*n].at = k;
				(*edits)[*n].text = "\"_\"";
				(*edits)[*n].len = 3;
				(*n)++;
			}
			free(key);
			neutralise(p, e, edits, n, cap);
		}
		break;
	case JT_ARRAY:
		jscan_array(p, s, &it);
		while (jscan_next_element(&it, &e))
			neutralise(p, e, edits, n, cap);
		break;
	case JT_NUMBER:
		(*edits)[*n].at = s;
		(*edits)[*n].text = "0";
		(*edits)[*n].len = 1;
		(*n)++;
		break;
	default:
		break;
	}
}

/* jscan accepted and jansson refused: must be a known difference. */
static void
jansson_refused(const char *p, size_t size, struct jspan value,
    const json_error_t *jerr)
{
	struct evbuffer	*eb;
	struct jedit	*edits = NULL;
	size_t		 n = 0, cap = 0, len;
	json_error_t	 jerr2;
	json_t		*v;
	const char	*text;

#ifdef FUZZ_STRICT_JANSSON
	fprintf(stderr, "jscan accepts, jansson refuses: %s\n", jerr->text);
	abort();
#endif
	if (strstr(jerr->text, "too big integer") == NULL &&
	    strstr(jerr->text, "too big negative integer") == NULL &&
	    strstr(jerr->text, "real number overflow") == NULL &&
	    strstr(jerr->text, "NUL byte in object key") == NULL) {
		fprintf(stderr, "jscan accepts, jansson refuses: %s\n",
		    jerr->text);
		abort();
	}
	neutralise(p, value, &edits, &n, &cap);
	eb = evbuffer_new();
	jscan_splice(eb, p, size, edits, n);
	len = evbuffer_get_length(eb);
	text = (const char *)evbuffer_pullup(eb, -1);
	v = json_loadb(text, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr2);
	if (v == NULL)
		fprintf(stderr, "still refused after rewriting: %s\n",
		    jerr2.text);
	CHECK(v != NULL);
	json_decref(v);
	evbuffer_free(eb);
	free(edits);
}

/* How deep is a jansson value? */
static int
json_depth(const json_t *v)
{
	const char	*key;
	json_t		*e;
	size_t		 i;
	int		 d, max = 0;

	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, key, e) {
			if ((d = json_depth(e)) > max)
				max = d;
		}
		return (max + 1);
	}
	if (json_is_array(v)) {
		json_array_foreach(v, i, e) {
			if ((d = json_depth(e)) > max)
				max = d;
		}
		return (max + 1);
	}
	return (0);
}

/*
 * jscan refused and jansson accepted, not for depth: jansson's lexer
 * silently drops a NUL byte that directly follows a number or a literal
 * (it ungets the byte into a NUL-terminated buffer, where it reads as
 * empty).  Without such bytes jscan must accept the text (unless it is
 * also nested too deeply, which jansson's tree must then show).
 */
static void
jansson_dropped_nul(const char *p, size_t size, const char *why,
    size_t where, const json_t *j)
{
	char		*q;
	size_t		 i, n = 0, where2;
	struct jspan	 v;
	const char	*why2;
	int		 dropped = 0;

	q = malloc(size + 1);
	CHECK(q != NULL);
	for (i = 0; i < size; i++) {
		if (p[i] == '\0' && i > 0 && ((p[i - 1] >= '0' &&
		    p[i - 1] <= '9') || (p[i - 1] >= 'a' && p[i - 1] <= 'z') ||
		    (p[i - 1] >= 'A' && p[i - 1] <= 'Z'))) {
			dropped = 1;
			continue;
		}
		q[n++] = p[i];
	}
	if (!dropped || (jscan_validate(q, n, &v, &why2, &where2) != 0 &&
	    (strcmp(why2, "nesting too deep") != 0 ||
	    json_depth(j) <= JSCAN_MAX_DEPTH))) {
		fprintf(stderr, "jscan refuses (%s at %zu), jansson accepts\n",
		    why, where);
		abort();
	}
	free(q);
}

/* Check the JSON-RPC envelope and the id mapping round trip. */
static void
check_rpc(const char *p, size_t size, int valid)
{
	static const char *const token_path[] = { "params", "_meta",
	    "progressToken", NULL };
	struct jrpc	 m, m2;
	const char	*why = NULL, *why2;
	struct evbuffer	*up, *back;
	struct jedit	 edits[2], restore[2];
	struct jspan	 tok;
	size_t		 n, upn, i;
	const char	*uptext;
	char		 gw[32];
	int		 code, code2, id_first;
	int64_t		 iv;

	code = jrpc_scan(p, size, &m, &why);
	CHECK(why != NULL || code == 0);
	if (!valid) {
		CHECK(code == JRPC_PARSE_ERROR);
		return;
	}
	CHECK(code == 0 || code == JRPC_INVALID_REQUEST);
	if (code == JRPC_INVALID_REQUEST) {
		/* An id kept for the error is usable. */
		if (m.id.len != 0)
			CHECK(jrpc_id_valid(p, m.id));
		return;
	}
	switch (m.kind) {
	case JRPC_REQUEST:
		CHECK(jrpc_id_valid(p, m.id));
		/* FALLTHROUGH */
	case JRPC_NOTIFICATION:
		CHECK(jscan_type(p, m.method) == JT_STRING);
		CHECK(m.method_name[0] != '\0');
		CHECK(strlen(m.method_name) < JRPC_METHOD_MAX);
		CHECK(jscan_string_equals(p, m.method, m.method_name));
		CHECK(m.params.len == 0 ||
		    jscan_type(p, m.params) == JT_OBJECT);
		CHECK(m.result.len == 0 && m.error.len == 0);
		if (m.kind == JRPC_NOTIFICATION)
			CHECK(m.id.len == 0);
		break;
	case JRPC_RESULT:
		CHECK(jrpc_id_valid(p, m.id));
		CHECK(m.result.len != 0 && m.error.len == 0);
		CHECK(m.method.len == 0);
		break;
	case JRPC_ERROR:
		CHECK(jrpc_id_valid(p, m.id) ||
		    jscan_type(p, m.id) == JT_NULL);
		CHECK(m.error.len != 0 && m.result.len == 0);
		break;
	default:
		CHECK(0);
	}
	if (m.id.len == 0)
		return;

	/*
	 * Towards the upstream: the gateway's id, and its own progress token
	 * too.  Edits go in text order, and the token may come first.
	 */
	snprintf(gw, sizeof gw, "%u", (unsigned int)(size * 7919u));
	n = 0;
	edits[n].at = m.id;
	edits[n].text = gw;
	edits[n].len = strlen(gw);
	restore[n].text = p + m.id.off;
	restore[n].len = m.id.len;
	n++;
	id_first = 1;
	if (m.kind == JRPC_REQUEST &&
	    jscan_path(p, m.msg, token_path, &tok) == 0 &&
	    jrpc_id_valid(p, tok)) {
		edits[n].at = tok;
		edits[n].text = "4242";
		edits[n].len = 4;
		restore[n].text = p + tok.off;
		restore[n].len = tok.len;
		n++;
		if (tok.off < m.id.off) {
			struct jedit	t;

			t = edits[0];
			edits[0] = edits[1];
			edits[1] = t;
			t = restore[0];
			restore[0] = restore[1];
			restore[1] = t;
			id_first = 0;
		}
	}
	up = evbuffer_new();
	jscan_splice(up, p, size, edits, n);
	upn = evbuffer_get_length(up);
	uptext = (const char *)evbuffer_pullup(up, -1);
	if (uptext == NULL)
		uptext = "";
	code2 = jrpc_scan(uptext, upn, &m2, &why2);
	CHECK(code2 == 0);
	CHECK(m2.kind == m.kind);
	CHECK(strcmp(m2.method_name, m.method_name) == 0);
	CHECK(jscan_int64(uptext, m2.id, &iv) == 0);
	CHECK(iv == (int64_t)(unsigned int)(size * 7919u));
	CHECK(m2.result.len == m.result.len && m2.error.len == m.error.len);
	if (n == 2) {
		CHECK(jscan_path(uptext, m2.msg, token_path, &tok) == 0);
		CHECK(jscan_int64(uptext, tok, &iv) == 0 && iv == 4242);
	}

	/* And back: the client's exact bytes. */
	for (i = 0; i < n; i++)
		restore[i].at = (i == 0) == id_first ? m2.id : tok;
	back = evbuffer_new();
	jscan_splice(back, uptext, upn, restore, n);
	CHECK(evbuffer_get_length(back) == size);
	CHECK(size == 0 || memcmp(evbuffer_pullup(back, -1), p, size) == 0);
	evbuffer_free(back);
	evbuffer_free(up);

	/* An error about this message validates and keeps the id. */
	back = evbuffer_new();
	jrpc_add_error(back, p + m.id.off, m.id.len, JRPC_INTERNAL_ERROR,
	    m.method_name, NULL);
	n = evbuffer_get_length(back);
	uptext = (const char *)evbuffer_pullup(back, -1);
	CHECK(jrpc_scan(uptext, n, &m2, &why2) == 0);
	CHECK(m2.kind == JRPC_ERROR);
	CHECK(m2.id.len == m.id.len &&
	    memcmp(uptext + m2.id.off, p + m.id.off, m.id.len) == 0);
	evbuffer_free(back);
}

/* jscan_add_string's output is valid JSON that decodes like jansson's. */
static void
check_add_string(const char *p, size_t size)
{
	struct evbuffer	*eb = evbuffer_new();
	struct jspan	 v;
	const char	*why, *text;
	size_t		 n, where, len;
	char		*dec;
	json_t		*j, *orig;
	json_error_t	 jerr;

	jscan_add_string(eb, p, size);
	n = evbuffer_get_length(eb);
	text = (const char *)evbuffer_pullup(eb, -1);
	CHECK(jscan_validate(text, n, &v, &why, &where) == 0);
	CHECK(jscan_type(text, v) == JT_STRING && v.off == 0 && v.len == n);
	j = json_loadb(text, n, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
	CHECK(j != NULL && json_is_string(j));
	len = decode(text, v, &dec);
	CHECK(len == json_string_length(j));
	CHECK(memcmp(dec, json_string_value(j), len) == 0);
	/* Valid UTF-8 (jansson agrees it is) comes back unchanged. */
	if ((orig = json_stringn(p, size)) != NULL) {
		CHECK(len == size && memcmp(dec, p, size) == 0);
		json_decref(orig);
	}
	free(dec);
	json_decref(j);
	evbuffer_free(eb);
}

/*
 * jscan_fix_surrogates keeps the length, changes nothing in a valid text,
 * and leaves no unpaired surrogate for the validator to refuse.
 */
static void
check_fix_surrogates(const char *p, size_t size, int valid)
{
	struct jspan	 value;
	const char	*why = NULL;
	size_t		 where = 0, fixed;
	char		*q;

	if ((q = malloc(size + 1)) == NULL)
		abort();
	memcpy(q, p, size);
	fixed = jscan_fix_surrogates(q, size);
	CHECK(fixed * 6 <= size);
	if (valid)
		CHECK(fixed == 0 && memcmp(p, q, size) == 0);
	if (jscan_validate(q, size, &value, &why, &where) != 0)
		CHECK(strstr(why, "surrogate") == NULL);
	free(q);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char	*p = (const char *)data;
	struct jspan	 value;
	const char	*why = NULL;
	size_t		 where = 0;
	json_error_t	 jerr;
	json_t		*j;
	int		 r;

	r = jscan_validate(p, size, &value, &why, &where);
	j = json_loadb(p, size, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
	if (r == 0) {
		CHECK(why == NULL);
		CHECK(value.off + value.len <= size && value.len > 0);
		if (j == NULL)
			jansson_refused(p, size, value, &jerr);
		else
			compare(p, value, j, 0);
	} else {
		CHECK(why != NULL && where <= size);
		if (j != NULL) {
#ifdef FUZZ_STRICT_JANSSON
			fprintf(stderr, "jscan refuses (%s at %zu), jansson "
			    "accepts\n", why, where);
			abort();
#endif
			if (strcmp(why, "nesting too deep") == 0)
				CHECK(json_depth(j) > JSCAN_MAX_DEPTH);
			else
				jansson_dropped_nul(p, size, why, where, j);
		}
	}
	json_decref(j);
	check_rpc(p, size, r == 0);
	if (size < 4096)
		check_add_string(p, size);
	check_fix_surrogates(p, size, r == 0);
	return (0);
}
