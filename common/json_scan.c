/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "hex.h"
#include "json_scan.h"
#include "log.h"
#include "xmalloc.h"

/* Skip whitespace. */
static size_t
skip_ws(const char *p, size_t pos, size_t n)
{
	while (pos < n && (p[pos] == ' ' || p[pos] == '\t' ||
	    p[pos] == '\n' || p[pos] == '\r'))
		pos++;
	return (pos);
}

/* Read four hex digits at p[pos]; -1 if malformed. */
static long
hex4(const char *p, size_t pos, size_t n)
{
	long	v = 0;
	int	i, h;

	if (n - pos < 4)
		return (-1);
	for (i = 0; i < 4; i++) {
		if ((h = hex_digit((unsigned char)p[pos + i])) < 0)
			return (-1);
		v = v * 16 + h;
	}
	return (v);
}

/* Length of a valid UTF-8 sequence at p[pos], or 0 if invalid. */
static size_t
utf8_len(const unsigned char *p, size_t pos, size_t n)
{
	unsigned char	c = p[pos];
	size_t		need, i;
	unsigned char	lo = 0x80, hi = 0xbf;

	if (c >= 0xc2 && c <= 0xdf)
		need = 1;
	else if (c >= 0xe0 && c <= 0xef) {
		need = 2;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		need = 3;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
	} else
		return (0);
	if (n - pos - 1 < need)
		return (0);
	if (p[pos + 1] < lo || p[pos + 1] > hi)
		return (0);
	for (i = 2; i <= need; i++) {
		if (p[pos + i] < 0x80 || p[pos + i] > 0xbf)
			return (0);
	}
	return (need + 1);
}

size_t
jscan_fix_surrogates(char *p, size_t n)
{
	size_t	pos = 0, fixed = 0, at;
	long	cp, lo;
	int	in = 0;

	while (pos < n) {
		if (!in) {
			in = p[pos++] == '"';
			continue;
		}
		if (p[pos] == '"') {
			in = 0;
			pos++;
			continue;
		}
		if (p[pos] != '\\' || pos + 1 >= n) {
			pos++;
			continue;
		}
		if (p[pos + 1] != 'u' || (cp = hex4(p, pos + 2, n)) < 0) {
			pos += 2;	/* another escape, or malformed */
			continue;
		}
		at = pos;
		pos += 6;
		if (cp >= 0xd800 && cp <= 0xdbff && n - pos >= 6 &&
		    p[pos] == '\\' && p[pos + 1] == 'u' &&
		    (lo = hex4(p, pos + 2, n)) >= 0xdc00 && lo <= 0xdfff) {
			pos += 6;	/* a pair */
			continue;
		}
		if (cp < 0xd800 || cp > 0xdfff)
			continue;
		memcpy(p + at, "\\ufffd", 6);
		fixed++;
	}
	return (fixed);
}

/* Scan a string starting at its opening quote; return the end or 0. */
static size_t
scan_string(const char *p, size_t pos, size_t n, const char **why)
{
	const unsigned char	*u = (const unsigned char *)p;
	long			 cp, lo;
	size_t			 l;

	pos++;
	for (;;) {
		while (pos < n && u[pos] >= 0x20 && u[pos] < 0x80 &&
		    u[pos] != '"' && u[pos] != '\\')
			pos++;
		if (pos >= n) {
			*why = "unterminated string";
			return (0);
		}
		if (u[pos] == '"')
			return (pos + 1);
		if (u[pos] < 0x20) {
			*why = "control character in string";
			return (0);
		}
		if (u[pos] >= 0x80) {
			if ((l = utf8_len(u, pos, n)) == 0) {
				*why = "invalid UTF-8 in string";
				return (0);
			}
			pos += l;
			continue;
		}
		/* Backslash. */
		if (++pos >= n) {
			*why = "unterminated string";
			return (0);
		}
		switch (p[pos]) {
		case '"': case '\\': case '/': case 'b':
		case 'f': case 'n': case 'r': case 't':
			pos++;
			break;
		case 'u':
			if ((cp = hex4(p, pos + 1, n)) < 0) {
				*why = "invalid \\u escape";
				return (0);
			}
			pos += 5;
			if (cp >= 0xdc00 && cp <= 0xdfff) {
				*why = "unpaired low surrogate";
				return (0);
			}
			if (cp >= 0xd800 && cp <= 0xdbff) {
				if (n - pos < 6 || p[pos] != '\\' ||
				    p[pos + 1] != 'u' ||
				    (lo = hex4(p, pos + 2, n)) < 0xdc00 ||
				    lo > 0xdfff) {
					*why = "unpaired high surrogate";
					return (0);
				}
				pos += 6;
			}
			break;
		default:
			*why = "invalid escape in string";
			return (0);
		}
	}
}

/* Scan a number; return its end or 0. */
static size_t
scan_number(const char *p, size_t pos, size_t n, const char **why)
{
	size_t	start;

	if (pos < n && p[pos] == '-')
		pos++;
	if (pos >= n)
		goto bad;
	if (p[pos] == '0')
		pos++;
	else if (p[pos] >= '1' && p[pos] <= '9') {
		while (pos < n && p[pos] >= '0' && p[pos] <= '9')
			pos++;
	} else
		goto bad;
	if (pos < n && p[pos] == '.') {
		start = ++pos;
		while (pos < n && p[pos] >= '0' && p[pos] <= '9')
			pos++;
		if (pos == start)
			goto bad;
	}
	if (pos < n && (p[pos] == 'e' || p[pos] == 'E')) {
		pos++;
		if (pos < n && (p[pos] == '+' || p[pos] == '-'))
			pos++;
		start = pos;
		while (pos < n && p[pos] >= '0' && p[pos] <= '9')
			pos++;
		if (pos == start)
			goto bad;
	}
	return (pos);
bad:
	*why = "invalid number";
	return (0);
}

/* Scan a literal word; return its end or 0. */
static size_t
scan_literal(const char *p, size_t pos, size_t n, const char *word,
    const char **why)
{
	size_t	len = strlen(word);

	if (n - pos < len || memcmp(p + pos, word, len) != 0) {
		*why = "invalid literal";
		return (0);
	}
	return (pos + len);
}

/* Validate a whole text as one JSON value. */
int
jscan_validate(const char *p, size_t n, struct jspan *value, const char **why,
    size_t *where)
{
	unsigned char	stack[JSCAN_MAX_DEPTH];	/* '{' or '[' */
	int		depth = 0;
	size_t		pos, end, start;

	*why = NULL;
	pos = skip_ws(p, 0, n);
	start = pos;

value:
	if (pos >= n) {
		*why = "unexpected end of text";
		goto fail;
	}
	switch (p[pos]) {
	case '{':
	case '[':
		if (depth == JSCAN_MAX_DEPTH) {
			*why = "nesting too deep";
			goto fail;
		}
		stack[depth++] = (unsigned char)p[pos];
		pos = skip_ws(p, pos + 1, n);
		if (pos < n && p[pos] == (stack[depth - 1] == '{' ? '}' : ']')) {
			depth--;
			pos++;
			goto after;
		}
		if (stack[depth - 1] == '{')
			goto key;
		goto value;
	case '"':
		if ((end = scan_string(p, pos, n, why)) == 0)
			goto fail;
		break;
	case 't':
		if ((end = scan_literal(p, pos, n, "true", why)) == 0)
			goto fail;
		break;
	case 'f':
		if ((end = scan_literal(p, pos, n, "false", why)) == 0)
			goto fail;
		break;
	case 'n':
		if ((end = scan_literal(p, pos, n, "null", why)) == 0)
			goto fail;
		break;
	default:
		if (p[pos] != '-' && (p[pos] < '0' || p[pos] > '9')) {
			*why = "unexpected character";
			goto fail;
		}
		if ((end = scan_number(p, pos, n, why)) == 0)
			goto fail;
		break;
	}
	pos = end;

after:
	pos = skip_ws(p, pos, n);
	if (depth == 0) {
		if (pos != n) {
			*why = "trailing data after value";
			goto fail;
		}
		/* The span excludes trailing whitespace. */
		value->off = start;
		end = n;
		while (end > start && (p[end - 1] == ' ' || p[end - 1] == '\t' ||
		    p[end - 1] == '\n' || p[end - 1] == '\r'))
			end--;
		value->len = end - start;
		return (0);
	}
	if (pos >= n) {
		*why = "unexpected end of text";
		goto fail;
	}
	if (p[pos] == ',') {
		pos = skip_ws(p, pos + 1, n);
		if (stack[depth - 1] == '{')
			goto key;
		goto value;
	}
	if (p[pos] == (stack[depth - 1] == '{' ? '}' : ']')) {
		depth--;
		pos++;
		goto after;
	}
	*why = "expected ',' or closing bracket";
	goto fail;

key:
	if (pos >= n || p[pos] != '"') {
		*why = "expected object key";
		goto fail;
	}
	if ((pos = scan_string(p, pos, n, why)) == 0)
		goto fail;
	pos = skip_ws(p, pos, n);
	if (pos >= n || p[pos] != ':') {
		*why = "expected ':'";
		goto fail;
	}
	pos = skip_ws(p, pos + 1, n);
	goto value;

fail:
	if (where != NULL)
		*where = pos;
	return (-1);
}

/* Return the type of a value span. */
enum jtype
jscan_type(const char *p, struct jspan s)
{
	if (s.len == 0)
		return (JT_NONE);
	switch (p[s.off]) {
	case '{':
		return (JT_OBJECT);
	case '[':
		return (JT_ARRAY);
	case '"':
		return (JT_STRING);
	case 't':
		return (JT_TRUE);
	case 'f':
		return (JT_FALSE);
	case 'n':
		return (JT_NULL);
	default:
		return (JT_NUMBER);
	}
}

/* Skip one value in validated text; return its end. */
static size_t
skip_value(const char *p, size_t pos, size_t n)
{
	int	depth = 0;

	do {
		switch (p[pos]) {
		case '{':
		case '[':
			depth++;
			pos++;
			break;
		case '}':
		case ']':
			depth--;
			pos++;
			break;
		case '"':
			pos++;
			while (pos < n && p[pos] != '"') {
				if (p[pos] == '\\')
					pos++;
				pos++;
			}
			pos++;
			break;
		case ',':
		case ':':
		case ' ':
		case '\t':
		case '\n':
		case '\r':
			pos++;
			break;
		default:
			while (pos < n && p[pos] != ',' && p[pos] != '}' &&
			    p[pos] != ']' && p[pos] != ' ' && p[pos] != '\t' &&
			    p[pos] != '\n' && p[pos] != '\r')
				pos++;
			break;
		}
	} while (depth > 0 && pos < n);
	return (pos);
}

/* Start iterating a container. */
static int
jscan_container(const char *p, struct jspan s, char open, struct jiter *it)
{
	if (s.len < 2 || p[s.off] != open)
		return (-1);
	it->p = p;
	it->pos = s.off + 1;
	it->end = s.off + s.len - 1;
	it->first = 1;
	return (0);
}

int
jscan_object(const char *p, struct jspan s, struct jiter *it)
{
	return (jscan_container(p, s, '{', it));
}

int
jscan_array(const char *p, struct jspan s, struct jiter *it)
{
	return (jscan_container(p, s, '[', it));
}

/* Advance past whitespace and a separating comma. */
static int
jscan_advance(struct jiter *it)
{
	it->pos = skip_ws(it->p, it->pos, it->end);
	if (!it->first) {
		if (it->pos >= it->end || it->p[it->pos] != ',')
			return (0);
		it->pos = skip_ws(it->p, it->pos + 1, it->end);
	}
	it->first = 0;
	return (it->pos < it->end);
}

/* Return the next element of an array. */
int
jscan_next_element(struct jiter *it, struct jspan *value)
{
	size_t	end;

	if (!jscan_advance(it))
		return (0);
	end = skip_value(it->p, it->pos, it->end);
	value->off = it->pos;
	value->len = end - it->pos;
	it->pos = end;
	return (1);
}

/* Return the next member of an object. */
int
jscan_next_member(struct jiter *it, struct jspan *key, struct jspan *value)
{
	size_t	end;

	if (!jscan_advance(it))
		return (0);
	end = skip_value(it->p, it->pos, it->end);
	key->off = it->pos;
	key->len = end - it->pos;
	it->pos = skip_ws(it->p, end, it->end);
	it->pos = skip_ws(it->p, it->pos + 1, it->end);	/* the ':' */
	end = skip_value(it->p, it->pos, it->end);
	value->off = it->pos;
	value->len = end - it->pos;
	it->pos = end;
	return (1);
}

/* Decode one escape at p[pos] (after the backslash); return code point. */
static long
decode_escape(const char *p, size_t *pos)
{
	long	cp, lo;

	switch (p[*pos]) {
	case 'b':
		(*pos)++;
		return ('\b');
	case 'f':
		(*pos)++;
		return ('\f');
	case 'n':
		(*pos)++;
		return ('\n');
	case 'r':
		(*pos)++;
		return ('\r');
	case 't':
		(*pos)++;
		return ('\t');
	case 'u':
		cp = hex4(p, *pos + 1, *pos + 5);
		*pos += 5;
		if (cp >= 0xd800 && cp <= 0xdbff) {
			lo = hex4(p, *pos + 2, *pos + 6);
			*pos += 6;
			cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
		}
		return (cp);
	default:
		return ((unsigned char)p[(*pos)++]);
	}
}

/* Encode a code point as UTF-8; return the length. */
static size_t
utf8_encode(long cp, char *out)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return (1);
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3f));
		return (2);
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return (3);
	}
	out[0] = (char)(0xf0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return (4);
}

/* Decode a string span into buf. */
ssize_t
jscan_string(const char *p, struct jspan s, char *buf, size_t size)
{
	size_t	pos, end, out = 0, l;
	char	enc[4];

	if (s.len < 2 || p[s.off] != '"' || size == 0)
		return (-1);
	pos = s.off + 1;
	end = s.off + s.len - 1;
	while (pos < end) {
		if (p[pos] != '\\') {
			if (out + 1 >= size)
				return (-1);
			buf[out++] = p[pos++];
			continue;
		}
		pos++;
		l = utf8_encode(decode_escape(p, &pos), enc);
		if (out + l >= size)
			return (-1);
		memcpy(buf + out, enc, l);
		out += l;
	}
	buf[out] = '\0';
	return ((ssize_t)out);
}

/* Decode a string span into a new allocation. */
char *
jscan_strdup(const char *p, struct jspan s)
{
	char	*buf;

	if (s.len < 2 || p[s.off] != '"')
		return (NULL);
	buf = xmalloc(s.len);	/* decoded text is never longer */
	if (jscan_string(p, s, buf, s.len) < 0) {
		free(buf);
		return (NULL);
	}
	return (buf);
}

/* Compare a string span's decoded text with a C string. */
int
jscan_string_equals(const char *p, struct jspan s, const char *want)
{
	size_t	wlen = strlen(want), pos, end, i = 0, l;
	char	enc[4];

	if (s.len < 2 || p[s.off] != '"')
		return (0);
	pos = s.off + 1;
	end = s.off + s.len - 1;
	/* Fast path: no escapes. */
	if (end - pos == wlen && memchr(p + pos, '\\', wlen) == NULL)
		return (memcmp(p + pos, want, wlen) == 0);
	while (pos < end) {
		if (p[pos] != '\\') {
			if (i >= wlen || p[pos] != want[i])
				return (0);
			pos++;
			i++;
			continue;
		}
		pos++;
		l = utf8_encode(decode_escape(p, &pos), enc);
		if (i + l > wlen || memcmp(want + i, enc, l) != 0)
			return (0);
		i += l;
	}
	return (i == wlen);
}

/* Find a member of an object by key. */
int
jscan_member(const char *p, struct jspan obj, const char *key,
    struct jspan *value)
{
	struct jiter	it;
	struct jspan	k, v;

	if (jscan_object(p, obj, &it) != 0)
		return (-1);
	while (jscan_next_member(&it, &k, &v)) {
		if (jscan_string_equals(p, k, key)) {
			*value = v;
			return (0);
		}
	}
	return (-1);
}

/* Find a member, and make sure there is only one with that key. */
int
jscan_member_unique(const char *p, struct jspan obj, const char *key,
    struct jspan *value)
{
	struct jiter	it;
	struct jspan	k, v;
	int		found = 0;

	if (jscan_object(p, obj, &it) != 0)
		return (-1);
	while (jscan_next_member(&it, &k, &v)) {
		if (jscan_string_equals(p, k, key)) {
			if (found)
				return (-2);
			*value = v;
			found = 1;
		}
	}
	return (found ? 0 : -1);
}

/* Find a member by a path of keys, each of which must be unique. */
int
jscan_path_unique(const char *p, struct jspan obj, const char *const *keys,
    struct jspan *value)
{
	struct jspan	cur = obj;
	int		r;

	for (; *keys != NULL; keys++) {
		if ((r = jscan_member_unique(p, cur, *keys, &cur)) != 0)
			return (r);
	}
	*value = cur;
	return (0);
}

/* Find a member by a NULL-terminated path of keys. */
int
jscan_path(const char *p, struct jspan obj, const char *const *keys,
    struct jspan *value)
{
	struct jspan	cur = obj;

	for (; *keys != NULL; keys++) {
		if (jscan_member(p, cur, *keys, &cur) != 0)
			return (-1);
	}
	*value = cur;
	return (0);
}

/* Read an integer from a number span. */
int
jscan_int64(const char *p, struct jspan s, int64_t *out)
{
	size_t		pos = s.off, end = s.off + s.len;
	int		neg = 0;
	uint64_t	v = 0, limit;

	if (s.len == 0)
		return (-1);
	if (p[pos] == '-') {
		neg = 1;
		pos++;
	}
	if (pos == end)
		return (-1);
	limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; pos < end; pos++) {
		if (p[pos] < '0' || p[pos] > '9')
			return (-1);
		if (v > (limit - (uint64_t)(p[pos] - '0')) / 10)
			return (-1);
		v = v * 10 + (uint64_t)(p[pos] - '0');
	}
	if (neg)
		*out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
	else
		*out = (int64_t)v;
	return (0);
}

/* Append text with edits applied. */
void
jscan_splice(struct evbuffer *out, const char *p, size_t n,
    const struct jedit *edits, size_t nedits)
{
	size_t	pos = 0, i;

	for (i = 0; i < nedits; i++) {
		if (edits[i].at.off < pos || edits[i].at.off > n)
			fatalx("%s: edits out of order", __func__);
		evbuffer_add(out, p + pos, edits[i].at.off - pos);
		evbuffer_add(out, edits[i].text, edits[i].len);
		pos = edits[i].at.off + edits[i].at.len;
	}
	if (pos < n)
		evbuffer_add(out, p + pos, n - pos);
}

/* Copy text with one span replaced into a new buffer. */
struct evbuffer *
jscan_replace(const char *p, size_t n, struct jspan at, const char *text,
    size_t len)
{
	struct evbuffer	*out;
	struct jedit	 edit;

	out = evbuffer_new();
	edit.at = at;
	edit.text = text;
	edit.len = len;
	jscan_splice(out, p, n, &edit, 1);
	return (out);
}

#define JSCAN_REF_MIN	65536	/* shorter runs are cheaper to copy */

/* An owner of text that out refers to, freed with its last reference. */
struct jscan_owner {
	struct evbuffer	*buf;
	int		 refs;
};

/* One reference to owned text is no longer needed. */
static void
jscan_owner_release(const void *data, size_t len, void *arg)
{
	struct jscan_owner	*o = arg;

	if (--o->refs == 0) {
		evbuffer_free(o->buf);
		free(o);
	}
}

/* Append a run of owned text, by reference if it is long. */
static void
jscan_add_run(struct evbuffer *out, struct jscan_owner *o, const char *p,
    size_t len)
{
	if (len < JSCAN_REF_MIN) {
		evbuffer_add(out, p, len);
		return;
	}
	o->refs++;
	if (evbuffer_add_reference(out, p, len, jscan_owner_release, o) != 0)
		fatalx("evbuffer_add_reference");
}

void
jscan_splice_owned(struct evbuffer *out, struct evbuffer *owner,
    const char *p, size_t n, const struct jedit *edits, size_t nedits)
{
	struct jscan_owner	*o;
	size_t			 pos = 0, i;

	o = xcalloc(1, sizeof *o);
	o->buf = owner;
	o->refs = 1;	/* ours, until the end */
	for (i = 0; i < nedits; i++) {
		if (edits[i].at.off < pos || edits[i].at.off > n)
			fatalx("%s: edits out of order", __func__);
		jscan_add_run(out, o, p + pos, edits[i].at.off - pos);
		evbuffer_add(out, edits[i].text, edits[i].len);
		pos = edits[i].at.off + edits[i].at.len;
	}
	if (pos < n)
		jscan_add_run(out, o, p + pos, n - pos);
	jscan_owner_release(NULL, 0, o);
}

/* Append a JSON string literal. */
void
jscan_add_string(struct evbuffer *out, const char *s, size_t len)
{
	evbuffer_add(out, "\"", 1);
	jscan_add_escaped(out, s, len);
	evbuffer_add(out, "\"", 1);
}

/* Append the inside of a JSON string literal. */
void
jscan_add_escaped(struct evbuffer *out, const char *s, size_t len)
{
	static const char	hex[] = "0123456789abcdef";
	size_t			i, run = 0, l;
	unsigned char		c;
	char			esc[6];

	for (i = 0; i < len; i++) {
		c = (unsigned char)s[i];
		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\')
			continue;
		if (c >= 0x80 && (l = utf8_len((const unsigned char *)s, i,
		    len)) != 0) {
			i += l - 1;
			continue;
		}
		evbuffer_add(out, s + run, i - run);
		run = i + 1;
		if (c >= 0x80) {
			/* Invalid UTF-8 becomes U+FFFD. */
			evbuffer_add(out, "\\ufffd", 6);
			continue;
		}
		switch (c) {
		case '"':
			evbuffer_add(out, "\\\"", 2);
			break;
		case '\\':
			evbuffer_add(out, "\\\\", 2);
			break;
		case '\n':
			evbuffer_add(out, "\\n", 2);
			break;
		case '\r':
			evbuffer_add(out, "\\r", 2);
			break;
		case '\t':
			evbuffer_add(out, "\\t", 2);
			break;
		default:
			memcpy(esc, "\\u00", 4);
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 0xf];
			evbuffer_add(out, esc, 6);
			break;
		}
	}
	evbuffer_add(out, s + run, len - run);
}
