/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for common/json_scan.c and common/jsonrpc.c: strict RFC 8259
 * validation, navigation by span, JSON-RPC classification, and the id
 * mapping the gateway does by splicing bytes (the client's id out, the
 * gateway's own integer in, and the client's exact bytes back).
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <event2/buffer.h>

#include "json_scan.h"
#include "jsonrpc.h"

/* A text with its exact length, so embedded NULs count. */
#define T(s)	s, sizeof(s) - 1

/* Return the contents of an evbuffer as a new NUL-terminated string. */
static char *
evb_string(struct evbuffer *eb, size_t *lenp)
{
	size_t	 len = evbuffer_get_length(eb);
	char	*s = malloc(len + 1);

	ck_assert_ptr_nonnull(s);
	evbuffer_copyout(eb, s, len);
	s[len] = '\0';
	if (lenp != NULL)
		*lenp = len;
	return (s);
}

/* Validate a NUL-terminated text that must be valid; return its span. */
static struct jspan
valid(const char *p)
{
	struct jspan	 v;
	const char	*why = NULL;
	size_t		 where = 0;

	ck_assert_msg(jscan_validate(p, strlen(p), &v, &why, &where) == 0,
	    "%s: %s at %zu", p, why, where);
	return (v);
}

/* Is the span's text exactly want? */
static void
span_is(const char *p, struct jspan s, const char *want)
{
	ck_assert_msg(s.len == strlen(want) && memcmp(p + s.off, want,
	    s.len) == 0, "span \"%.*s\" is not \"%s\"", (int)s.len, p + s.off,
	    want);
}

static const struct {
	const char	*text;
	size_t		 len;
	int		 ok;
} validate_cases[] = {
	/* Numbers. */
	{ T("0"), 1 },
	{ T("-0"), 1 },
	{ T("123"), 1 },
	{ T("-123"), 1 },
	{ T("1e5"), 1 },
	{ T("1E5"), 1 },
	{ T("1e+5"), 1 },
	{ T("1e-5"), 1 },
	{ T("-0.0e-0"), 1 },
	{ T("1.25"), 1 },
	{ T("12345678901234567890123456789"), 1 },
	{ T("1e400"), 1 },
	{ T("01"), 0 },
	{ T("-01"), 0 },
	{ T("00"), 0 },
	{ T("1."), 0 },
	{ T("1.e5"), 0 },
	{ T(".5"), 0 },
	{ T("-"), 0 },
	{ T("+1"), 0 },
	{ T("1e"), 0 },
	{ T("1e+"), 0 },
	{ T("1e5.0"), 0 },
	{ T("0x10"), 0 },
	{ T("NaN"), 0 },
	{ T("Infinity"), 0 },
	{ T("-Infinity"), 0 },
	{ T("- 1"), 0 },
	/* Literals. */
	{ T("true"), 1 },
	{ T("false"), 1 },
	{ T("null"), 1 },
	{ T("tru"), 0 },
	{ T("nul"), 0 },
	{ T("truex"), 0 },
	{ T("True"), 0 },
	{ T("NULL"), 0 },
	/* Strings. */
	{ T("\"\""), 1 },
	{ T("\"abc\""), 1 },
	{ T("\"\\\"\\\\\\/\\b\\f\\n\\r\\t\""), 1 },
	{ T("\"\\u0000\""), 1 },
	{ T("\"\\u00e9\\u00E9\""), 1 },
	{ T("\"\\ud83d\\ude00\""), 1 },
	{ T("\"\\uD83D\\uDE00\""), 1 },
	{ T("\"\\udbff\\udfff\""), 1 },
	{ T("\"\\ud800\""), 0 },
	{ T("\"\\ud800x\""), 0 },
	{ T("\"\\ud800\\u0041\""), 0 },
	{ T("\"\\ud800\\ud800\""), 0 },
	{ T("\"\\udc00\""), 0 },
	{ T("\"\\ude00\\ud83d\""), 0 },
	{ T("\"\\u12\""), 0 },
	{ T("\"\\u12G4\""), 0 },
	{ T("\"\\x41\""), 0 },
	{ T("\"\\a\""), 0 },
	{ T("\"\\'\""), 0 },
	{ T("\"abc"), 0 },
	{ T("\"abc\\\""), 0 },
	{ T("\"\\"), 0 },
	{ T("'abc'"), 0 },
	/* UTF-8. */
	{ T("\"\xc3\xa9\""), 1 },		/* U+00E9 */
	{ T("\"\xe2\x82\xac\""), 1 },		/* U+20AC */
	{ T("\"\xf0\x9f\x98\x80\""), 1 },	/* U+1F600 */
	{ T("\"\xed\x9f\xbf\""), 1 },		/* U+D7FF */
	{ T("\"\xee\x80\x80\""), 1 },		/* U+E000 */
	{ T("\"\xef\xbf\xbf\""), 1 },		/* U+FFFF */
	{ T("\"\xf4\x8f\xbf\xbf\""), 1 },	/* U+10FFFF */
	{ T("\"\x7f\""), 1 },			/* DEL is not a control */
	{ T("\"\xc0\x80\""), 0 },		/* overlong NUL */
	{ T("\"\xc1\xbf\""), 0 },		/* overlong */
	{ T("\"\xe0\x80\xaf\""), 0 },		/* overlong '/' */
	{ T("\"\xe0\x9f\xbf\""), 0 },		/* overlong */
	{ T("\"\xf0\x80\x80\xaf\""), 0 },	/* overlong */
	{ T("\"\xf0\x8f\xbf\xbf\""), 0 },	/* overlong */
	{ T("\"\xed\xa0\x80\""), 0 },		/* UTF-16 surrogate D800 */
	{ T("\"\xed\xbf\xbf\""), 0 },		/* surrogate DFFF */
	{ T("\"\xf4\x90\x80\x80\""), 0 },	/* above U+10FFFF */
	{ T("\"\xf5\x80\x80\x80\""), 0 },
	{ T("\"\xf8\x88\x80\x80\x80\""), 0 },
	{ T("\"\xff\""), 0 },
	{ T("\"\xfe\""), 0 },
	{ T("\"\x80\""), 0 },			/* lone continuation */
	{ T("\"\xc3\""), 0 },			/* truncated */
	{ T("\"\xc3\x28\""), 0 },
	{ T("\"\xe2\x82\""), 0 },
	{ T("\"\xf0\x9f\x98\""), 0 },
	{ T("\"\xe2\x82\xac"), 0 },		/* unterminated after UTF-8 */
	{ T("\"\xc3"), 0 },
	/* Control characters. */
	{ T("\"a\tb\""), 0 },
	{ T("\"a\nb\""), 0 },
	{ T("\"\x01\""), 0 },
	{ T("\"\x1f\""), 0 },
	{ T("\"a\0b\""), 0 },
	/* Structure. */
	{ T("[]"), 1 },
	{ T("{}"), 1 },
	{ T("[ ]"), 1 },
	{ T("{ }"), 1 },
	{ T("[1,2,3]"), 1 },
	{ T("{\"a\":1,\"b\":[true,false,null],\"c\":{}}"), 1 },
	{ T("{\"a\":1,\"a\":2}"), 1 },		/* duplicates are JSON */
	{ T("[[[[]]]]"), 1 },
	{ T("[1,]"), 0 },
	{ T("[,1]"), 0 },
	{ T("[,]"), 0 },
	{ T("[1 2]"), 0 },
	{ T("[1;2]"), 0 },
	{ T("{\"a\"}"), 0 },
	{ T("{\"a\":}"), 0 },
	{ T("{\"a\" 1}"), 0 },
	{ T("{,}"), 0 },
	{ T("{\"a\":1,}"), 0 },
	{ T("{1:2}"), 0 },
	{ T("{a:1}"), 0 },
	{ T("{'a':1}"), 0 },
	{ T("[1"), 0 },
	{ T("["), 0 },
	{ T("{"), 0 },
	{ T("{\"a\":1"), 0 },
	{ T("{\"a\""), 0 },
	{ T("]"), 0 },
	{ T("}"), 0 },
	{ T("[}"), 0 },
	{ T("{]"), 0 },
	{ T("[1]]"), 0 },
	{ T("{}}"), 0 },
	/* Whitespace and trailing garbage. */
	{ T(" \t\r\n[ 1 , \"x\" ]\r\n\t "), 1 },
	{ T(" {\n\"a\"\t:\r1 }\n"), 1 },
	{ T(""), 0 },
	{ T(" "), 0 },
	{ T("\n\t"), 0 },
	{ T("1 2"), 0 },
	{ T("[] x"), 0 },
	{ T("{}{}"), 0 },
	{ T("null,"), 0 },
	{ T("1\0"), 0 },
	{ T("\0"), 0 },
	{ T("[1]\0"), 0 },
	{ T("\f1"), 0 },			/* form feed is not space */
	{ T("1\v"), 0 },
	{ T("\xc2\xa0" "1"), 0 },		/* nor is NBSP */
	{ T("\xef\xbb\xbf{}"), 0 },		/* nor a BOM */
	{ T("/* c */ 1"), 0 },
	{ T("1 // c"), 0 },
};

START_TEST(test_validate_table)
{
	struct jspan	 v;
	const char	*why;
	size_t		 where;
	int		 r;
	size_t		 i = (size_t)_i;

	why = NULL;
	where = (size_t)-1;
	r = jscan_validate(validate_cases[i].text, validate_cases[i].len, &v,
	    &why, &where);
	if (validate_cases[i].ok) {
		ck_assert_msg(r == 0, "case %zu \"%s\" rejected: %s at %zu", i,
		    validate_cases[i].text, why, where);
		ck_assert_ptr_null(why);
	} else {
		ck_assert_msg(r == -1, "case %zu \"%s\" accepted", i,
		    validate_cases[i].text);
		ck_assert_ptr_nonnull(why);
		ck_assert_uint_le(where, validate_cases[i].len);
	}
}
END_TEST

/* Check the reason and offset of one failure. */
static void
fails_at(const char *p, size_t n, const char *want_why, size_t want_where)
{
	struct jspan	 v;
	const char	*why = NULL;
	size_t		 where = 12345;

	ck_assert_int_eq(jscan_validate(p, n, &v, &why, &where), -1);
	ck_assert_str_eq(why, want_why);
	ck_assert_uint_eq(where, want_where);
}

/* Unpaired surrogates become U+FFFD, in strings only, pairs kept. */
START_TEST(test_fix_surrogates)
{
	char		 t[] = "{\"a\":\"x\\ud83d\",\"b\":\"\\ud83d\\ude00\","
			    "\"c\":\"\\\\ud800\",\"\\udc00\":\"\\ud800\\u0041\"}";
	struct jspan	 v;
	const char	*why;
	size_t		 where;

	ck_assert_int_eq(jscan_validate(t, strlen(t), &v, &why, &where), -1);
	ck_assert_uint_eq(jscan_fix_surrogates(t, strlen(t)), 3);
	ck_assert_str_eq(t, "{\"a\":\"x\\ufffd\",\"b\":\"\\ud83d\\ude00\","
	    "\"c\":\"\\\\ud800\",\"\\ufffd\":\"\\ufffd\\u0041\"}");
	ck_assert_int_eq(jscan_validate(t, strlen(t), &v, &why, &where), 0);
	ck_assert_uint_eq(jscan_fix_surrogates(t, strlen(t)), 0);
}
END_TEST

START_TEST(test_validate_why)
{
	fails_at(T("[1,]"), "unexpected character", 3);
	fails_at(T("01"), "trailing data after value", 1);
	fails_at(T("1."), "invalid number", 0);
	fails_at(T("[1 2]"), "expected ',' or closing bracket", 3);
	fails_at(T("{\"a\" 1}"), "expected ':'", 5);
	fails_at(T("{1:2}"), "expected object key", 1);
	fails_at(T("\"\\ud800\""), "unpaired high surrogate", 0);
	fails_at(T("\"\\udc00\""), "unpaired low surrogate", 0);
	fails_at(T("\"\xc0\x80\""), "invalid UTF-8 in string", 0);
	fails_at(T("\"a\nb\""), "control character in string", 0);
	fails_at(T("\"\\q\""), "invalid escape in string", 0);
	fails_at(T("\"\\u00g0\""), "invalid \\u escape", 0);
	fails_at(T("\"abc"), "unterminated string", 0);
	fails_at(T("  "), "unexpected end of text", 2);
	fails_at(T("[1,"), "unexpected end of text", 3);
	fails_at(T("nulL"), "invalid literal", 0);
	fails_at(T("{}x"), "trailing data after value", 2);
}
END_TEST

START_TEST(test_validate_span)
{
	struct jspan	 v;
	const char	*why;
	size_t		 where;
	static const char p[] = " \r\n {\"a\" : [1, 2]}\t \n";

	ck_assert_int_eq(jscan_validate(p, sizeof p - 1, &v, &why, &where),
	    0);
	ck_assert_uint_eq(v.off, 4);
	ck_assert_uint_eq(v.len, 14);
	span_is(p, v, "{\"a\" : [1, 2]}");
	v = valid("7");
	ck_assert_uint_eq(v.off, 0);
	ck_assert_uint_eq(v.len, 1);
	/* Only p[0..n) is looked at. */
	ck_assert_int_eq(jscan_validate("[1]]]", 3, &v, &why, &where), 0);
	ck_assert_uint_eq(v.len, 3);
	ck_assert_int_eq(jscan_validate("123", 2, &v, &why, &where), 0);
	ck_assert_uint_eq(v.len, 2);
	/* A NULL where is allowed. */
	ck_assert_int_eq(jscan_validate("[", 1, &v, &why, NULL), -1);
}
END_TEST

/* Build n nested containers of a kind around "1". */
static char *
nested(int n, int objects, size_t *lenp)
{
	char	*p = malloc((size_t)n * 6 + 2), *q = p;
	int	 i;

	ck_assert_ptr_nonnull(p);
	for (i = 0; i < n; i++) {
		if (objects) {
			memcpy(q, "{\"a\":", 5);
			q += 5;
		} else
			*q++ = '[';
	}
	*q++ = '1';
	for (i = 0; i < n; i++)
		*q++ = objects ? '}' : ']';
	*q = '\0';
	*lenp = (size_t)(q - p);
	return (p);
}

START_TEST(test_validate_depth)
{
	struct jspan	 v;
	const char	*why;
	size_t		 len, where;
	char		*p;
	int		 objects;

	for (objects = 0; objects <= 1; objects++) {
		p = nested(JSCAN_MAX_DEPTH, objects, &len);
		ck_assert_int_eq(jscan_validate(p, len, &v, &why, &where), 0);
		ck_assert_uint_eq(v.len, len);
		free(p);
		p = nested(JSCAN_MAX_DEPTH + 1, objects, &len);
		ck_assert_int_eq(jscan_validate(p, len, &v, &why, &where), -1);
		ck_assert_str_eq(why, "nesting too deep");
		ck_assert_uint_eq(where, objects ? (size_t)JSCAN_MAX_DEPTH * 5 :
		    (size_t)JSCAN_MAX_DEPTH);
		free(p);
		p = nested(100000, objects, &len);
		ck_assert_int_eq(jscan_validate(p, len, &v, &why, &where), -1);
		ck_assert_str_eq(why, "nesting too deep");
		free(p);
	}
	/* Depth is the current nesting, not the total of containers. */
	len = 0;
	p = malloc(4 * 1000 + 3);
	p[len++] = '[';
	for (objects = 0; objects < 1000; objects++) {
		memcpy(p + len, "[],", 3);
		len += 3;
	}
	memcpy(p + len, "[]]", 3);
	len += 3;
	ck_assert_int_eq(jscan_validate(p, len, &v, &why, &where), 0);
	free(p);
}
END_TEST

START_TEST(test_type)
{
	static const char	*texts[] = { "{}", "[]", "\"\"", "-1", "0",
				    "true", "false", "null" };
	static const enum jtype	 types[] = { JT_OBJECT, JT_ARRAY, JT_STRING,
				    JT_NUMBER, JT_NUMBER, JT_TRUE, JT_FALSE,
				    JT_NULL };
	struct jspan		 none = { 3, 0 };
	size_t			 i;

	for (i = 0; i < sizeof texts / sizeof texts[0]; i++)
		ck_assert_int_eq(jscan_type(texts[i], valid(texts[i])),
		    types[i]);
	ck_assert_int_eq(jscan_type("abc", none), JT_NONE);
}
END_TEST

START_TEST(test_iterate)
{
	static const char	 p[] = "{ \"a\" : 1 , \"b\":[1, {\"c\":2}] ,"
				    "\"d\":\"x,}\\\"]\", \"e\" :{ } }";
	static const char	*keys[] = { "\"a\"", "\"b\"", "\"d\"",
				    "\"e\"" };
	static const char	*values[] = { "1", "[1, {\"c\":2}]",
				    "\"x,}\\\"]\"", "{ }" };
	struct jspan		 obj = valid(p), k, v, e;
	struct jiter		 it, ai;
	int			 n = 0;

	ck_assert_int_eq(jscan_array(p, obj, &it), -1);
	ck_assert_int_eq(jscan_object(p, obj, &it), 0);
	while (jscan_next_member(&it, &k, &v)) {
		ck_assert_int_lt(n, 4);
		span_is(p, k, keys[n]);
		span_is(p, v, values[n]);
		n++;
	}
	ck_assert_int_eq(n, 4);
	ck_assert_int_eq(jscan_next_member(&it, &k, &v), 0);

	/* The array inside. */
	ck_assert_int_eq(jscan_member(p, obj, "b", &v), 0);
	ck_assert_int_eq(jscan_object(p, v, &ai), -1);
	ck_assert_int_eq(jscan_array(p, v, &ai), 0);
	ck_assert_int_eq(jscan_next_element(&ai, &e), 1);
	span_is(p, e, "1");
	ck_assert_int_eq(jscan_next_element(&ai, &e), 1);
	span_is(p, e, "{\"c\":2}");
	ck_assert_int_eq(jscan_next_element(&ai, &e), 0);

	/* The empty object inside. */
	ck_assert_int_eq(jscan_member(p, obj, "e", &v), 0);
	ck_assert_int_eq(jscan_object(p, v, &ai), 0);
	ck_assert_int_eq(jscan_next_member(&ai, &k, &e), 0);
}
END_TEST

START_TEST(test_iterate_array)
{
	static const char	 p[] = "[ 1,\"x\" ,[2,[3]] , {}, -0.5e3,true,"
				    "null,\"\\\\\" ]";
	static const char	*want[] = { "1", "\"x\"", "[2,[3]]", "{}",
				    "-0.5e3", "true", "null", "\"\\\\\"" };
	struct jspan		 arr = valid(p), e;
	struct jiter		 it;
	int			 n = 0;

	ck_assert_int_eq(jscan_array(p, arr, &it), 0);
	while (jscan_next_element(&it, &e)) {
		ck_assert_int_lt(n, 8);
		span_is(p, e, want[n]);
		n++;
	}
	ck_assert_int_eq(n, 8);
	ck_assert_int_eq(jscan_array("[]", valid("[]"), &it), 0);
	ck_assert_int_eq(jscan_next_element(&it, &e), 0);
	ck_assert_int_eq(jscan_array("[ ]", valid("[ ]"), &it), 0);
	ck_assert_int_eq(jscan_next_element(&it, &e), 0);
	ck_assert_int_eq(jscan_array("\"[]\"", valid("\"[]\""), &it), -1);
}
END_TEST

START_TEST(test_member_path)
{
	static const char	 p[] = "{\"params\":{\"_meta\":{"
				    "\"progressToken\":\"t\\u00e9\"},"
				    "\"name\":\"x\"},\"a\\\"b\":1,"
				    "\"\\u00e9\":2,\"\\ud83d\\ude00\":3,\"\":4,"
				    "\"list\":[{\"k\":1}]}";
	static const char *const meta_path[] = { "params", "_meta",
				    "progressToken", NULL };
	static const char *const bad_path[] = { "params", "name", "x", NULL };
	static const char *const list_path[] = { "list", "k", NULL };
	static const char *const missing[] = { "params", "nope", NULL };
	static const char *const empty[] = { NULL };
	struct jspan		 obj = valid(p), v;

	ck_assert_int_eq(jscan_path(p, obj, meta_path, &v), 0);
	span_is(p, v, "\"t\\u00e9\"");
	ck_assert(jscan_string_equals(p, v, "t\xc3\xa9"));
	ck_assert_int_eq(jscan_path(p, obj, bad_path, &v), -1);
	ck_assert_int_eq(jscan_path(p, obj, list_path, &v), -1);
	ck_assert_int_eq(jscan_path(p, obj, missing, &v), -1);
	ck_assert_int_eq(jscan_path(p, obj, empty, &v), 0);
	ck_assert_uint_eq(v.off, obj.off);
	ck_assert_uint_eq(v.len, obj.len);

	ck_assert_int_eq(jscan_member(p, obj, "a\"b", &v), 0);
	span_is(p, v, "1");
	ck_assert_int_eq(jscan_member(p, obj, "\xc3\xa9", &v), 0);
	span_is(p, v, "2");
	ck_assert_int_eq(jscan_member(p, obj, "\xf0\x9f\x98\x80", &v), 0);
	span_is(p, v, "3");
	ck_assert_int_eq(jscan_member(p, obj, "", &v), 0);
	span_is(p, v, "4");
	ck_assert_int_eq(jscan_member(p, obj, "_meta", &v), -1);
	ck_assert_int_eq(jscan_member(p, obj, "a", &v), -1);
	ck_assert_int_eq(jscan_member(p, obj, "PARAMS", &v), -1);
	ck_assert_int_eq(jscan_member(p, obj, "param", &v), -1);
	ck_assert_int_eq(jscan_member(p, obj, "paramss", &v), -1);
	/* Not an object. */
	ck_assert_int_eq(jscan_member("[1]", valid("[1]"), "a", &v), -1);
	ck_assert_int_eq(jscan_member("\"a\"", valid("\"a\""), "a", &v), -1);
	/* First of duplicates. */
	ck_assert_int_eq(jscan_member("{\"a\":1,\"a\":2}",
	    valid("{\"a\":1,\"a\":2}"), "a", &v), 0);
	ck_assert_uint_eq(v.off, 5);
}
END_TEST

START_TEST(test_string)
{
	static const char	 p[] = "[\"plain\",\"a\\u0000b\",\"\\\"\\\\\\/"
				    "\\b\\f\\n\\r\\t\",\"\\u00e9\\u20ac\\ud83d"
				    "\\ude00\",\"\",\"\xc3\xa9\",5]";
	struct jspan		 arr = valid(p), e[7];
	struct jiter		 it;
	char			 buf[64], *s;
	int			 n = 0;

	ck_assert_int_eq(jscan_array(p, arr, &it), 0);
	while (n < 7 && jscan_next_element(&it, &e[n]))
		n++;
	ck_assert_int_eq(n, 7);

	ck_assert_int_eq(jscan_string(p, e[0], buf, sizeof buf), 5);
	ck_assert_str_eq(buf, "plain");
	/* Exactly fits, and one too small. */
	ck_assert_int_eq(jscan_string(p, e[0], buf, 6), 5);
	ck_assert_int_eq(jscan_string(p, e[0], buf, 5), -1);
	ck_assert_int_eq(jscan_string(p, e[0], buf, 0), -1);

	ck_assert_int_eq(jscan_string(p, e[1], buf, sizeof buf), 3);
	ck_assert_mem_eq(buf, "a\0b", 4);

	ck_assert_int_eq(jscan_string(p, e[2], buf, sizeof buf), 8);
	ck_assert_str_eq(buf, "\"\\/\b\f\n\r\t");

	ck_assert_int_eq(jscan_string(p, e[3], buf, sizeof buf), 9);
	ck_assert_str_eq(buf, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
	/* A multi-byte character that does not fit. */
	ck_assert_int_eq(jscan_string(p, e[3], buf, 9), -1);

	ck_assert_int_eq(jscan_string(p, e[4], buf, sizeof buf), 0);
	ck_assert_str_eq(buf, "");
	ck_assert_int_eq(jscan_string(p, e[5], buf, sizeof buf), 2);
	ck_assert_str_eq(buf, "\xc3\xa9");
	ck_assert_int_eq(jscan_string(p, e[6], buf, sizeof buf), -1);

	s = jscan_strdup(p, e[2]);
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s, "\"\\/\b\f\n\r\t");
	free(s);
	s = jscan_strdup(p, e[4]);
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s, "");
	free(s);
	ck_assert_ptr_null(jscan_strdup(p, e[6]));
	ck_assert_ptr_null(jscan_strdup(p, arr));
}
END_TEST

START_TEST(test_string_equals)
{
	static const char	 p[] = "[\"abc\",\"\\u0041b\",\"\",\"a\\nb\","
				    "\"\\ud83d\\ude00\",\"a\\u0000\",1,null]";
	struct jspan		 arr = valid(p), e[8];
	struct jiter		 it;
	int			 n = 0;

	ck_assert_int_eq(jscan_array(p, arr, &it), 0);
	while (n < 8 && jscan_next_element(&it, &e[n]))
		n++;
	ck_assert_int_eq(n, 8);
	ck_assert_int_eq(jscan_string_equals(p, e[0], "abc"), 1);
	ck_assert_int_eq(jscan_string_equals(p, e[0], "ab"), 0);
	ck_assert_int_eq(jscan_string_equals(p, e[0], "abcd"), 0);
	ck_assert_int_eq(jscan_string_equals(p, e[0], "abd"), 0);
	ck_assert_int_eq(jscan_string_equals(p, e[0], ""), 0);
	ck_assert_int_eq(jscan_string_equals(p, e[1], "Ab"), 1);
	ck_assert_int_eq(jscan_string_equals(p, e[1], "ab"), 0);
	ck_assert_int_eq(jscan_string_equals(p, e[1], "A"), 0);
	ck_assert_int_eq(jscan_string_equals(p, e[1], "Abc"), 0);
	ck_assert_int_eq(jscan_string_equals(p, e[1], "\\u0041b"), 0);
	ck_assert_int_eq(jscan_string_equals(p, e[2], ""), 1);
	ck_assert_int_eq(jscan_string_equals(p, e[2], "a"), 0);
	ck_assert_int_eq(jscan_string_equals(p, e[3], "a\nb"), 1);
	ck_assert_int_eq(jscan_string_equals(p, e[3], "a\\nb"), 0);
	ck_assert_int_eq(jscan_string_equals(p, e[4],
	    "\xf0\x9f\x98\x80"), 1);
	ck_assert_int_eq(jscan_string_equals(p, e[4], "\xf0\x9f\x98"), 0);
	/* A C string cannot hold the NUL. */
	ck_assert_int_eq(jscan_string_equals(p, e[5], "a"), 0);
	ck_assert_int_eq(jscan_string_equals(p, e[6], "1"), 0);
	ck_assert_int_eq(jscan_string_equals(p, e[7], "null"), 0);
}
END_TEST

/* Read a number text with jscan_int64. */
static int
int64_of(const char *p, int64_t *out)
{
	return (jscan_int64(p, valid(p), out));
}

START_TEST(test_int64)
{
	int64_t		v;
	struct jspan	none = { 0, 0 };

	v = 99;
	ck_assert_int_eq(int64_of("0", &v), 0);
	ck_assert_int_eq(v, 0);
	v = 99;
	ck_assert_int_eq(int64_of("-0", &v), 0);
	ck_assert_int_eq(v, 0);
	ck_assert_int_eq(int64_of("42", &v), 0);
	ck_assert_int_eq(v, 42);
	ck_assert_int_eq(int64_of("-42", &v), 0);
	ck_assert_int_eq(v, -42);
	ck_assert_int_eq(int64_of("9223372036854775807", &v), 0);
	ck_assert(v == INT64_MAX);
	ck_assert_int_eq(int64_of("-9223372036854775808", &v), 0);
	ck_assert(v == INT64_MIN);
	ck_assert_int_eq(int64_of("-9223372036854775807", &v), 0);
	ck_assert(v == -INT64_MAX);
	v = 7;
	ck_assert_int_eq(int64_of("9223372036854775808", &v), -1);
	ck_assert_int_eq(int64_of("-9223372036854775809", &v), -1);
	ck_assert_int_eq(int64_of("9223372036854775810", &v), -1);
	ck_assert_int_eq(int64_of("18446744073709551615", &v), -1);
	ck_assert_int_eq(int64_of("18446744073709551616", &v), -1);
	ck_assert_int_eq(int64_of("12345678901234567890", &v), -1);
	ck_assert_int_eq(int64_of("92233720368547758070", &v), -1);
	ck_assert_int_eq(int64_of("1.5", &v), -1);
	ck_assert_int_eq(int64_of("1.0", &v), -1);
	ck_assert_int_eq(int64_of("-0.0", &v), -1);
	ck_assert_int_eq(int64_of("1e3", &v), -1);
	ck_assert_int_eq(int64_of("1E3", &v), -1);
	ck_assert_int_eq(int64_of("\"5\"", &v), -1);
	ck_assert_int_eq(int64_of("true", &v), -1);
	ck_assert_int_eq(int64_of("null", &v), -1);
	ck_assert_int_eq(int64_of("[1]", &v), -1);
	ck_assert_int_eq(v, 7);		/* untouched on failure */
	ck_assert_int_eq(jscan_int64("5", none, &v), -1);
	/* Within a bigger text. */
	ck_assert_int_eq(jscan_member("{\"c\":-32601}",
	    valid("{\"c\":-32601}"), "c", &none), 0);
	ck_assert_int_eq(jscan_int64("{\"c\":-32601}", none, &v), 0);
	ck_assert_int_eq(v, -32601);
}
END_TEST

/* Scan a NUL-terminated message. */
static int
scan(const char *p, struct jrpc *m, const char **why)
{
	*why = NULL;
	return (jrpc_scan(p, strlen(p), m, why));
}

START_TEST(test_scan_kinds)
{
	struct jrpc	 m;
	const char	*why, *p;

	p = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"x\"}}";
	ck_assert_int_eq(scan(p, &m, &why), 0);
	ck_assert_int_eq(m.kind, JRPC_REQUEST);
	ck_assert_str_eq(m.method_name, "tools/call");
	span_is(p, m.id, "1");
	span_is(p, m.method, "\"tools/call\"");
	span_is(p, m.params, "{\"name\":\"x\"}");
	ck_assert_uint_eq(m.result.len, 0);
	ck_assert_uint_eq(m.error.len, 0);
	ck_assert_ptr_eq(m.p, p);
	ck_assert_uint_eq(m.n, strlen(p));
	ck_assert_uint_eq(m.msg.off, 0);
	ck_assert_uint_eq(m.msg.len, strlen(p));

	p = " {\"method\":\"notifications/initialized\",\"jsonrpc\":\"2.0\"}\n";
	ck_assert_int_eq(scan(p, &m, &why), 0);
	ck_assert_int_eq(m.kind, JRPC_NOTIFICATION);
	ck_assert_str_eq(m.method_name, "notifications/initialized");
	ck_assert_uint_eq(m.id.len, 0);
	ck_assert_uint_eq(m.params.len, 0);
	ck_assert_uint_eq(m.msg.off, 1);

	p = "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"result\":{\"tools\":[]}}";
	ck_assert_int_eq(scan(p, &m, &why), 0);
	ck_assert_int_eq(m.kind, JRPC_RESULT);
	span_is(p, m.id, "\"a\"");
	span_is(p, m.result, "{\"tools\":[]}");
	ck_assert_str_eq(m.method_name, "");

	/* Any JSON value is a result. */
	p = "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":null}";
	ck_assert_int_eq(scan(p, &m, &why), 0);
	ck_assert_int_eq(m.kind, JRPC_RESULT);
	span_is(p, m.result, "null");

	p = "{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32601,"
	    "\"message\":\"nope\",\"data\":[1]}}";
	ck_assert_int_eq(scan(p, &m, &why), 0);
	ck_assert_int_eq(m.kind, JRPC_ERROR);
	span_is(p, m.id, "3");

	/* An error about an unreadable request has a null id. */
	p = "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,"
	    "\"message\":\"Parse error\"}}";
	ck_assert_int_eq(scan(p, &m, &why), 0);
	ck_assert_int_eq(m.kind, JRPC_ERROR);
	span_is(p, m.id, "null");

	/* Unknown members are allowed. */
	p = "{\"jsonrpc\":\"2.0\",\"x\":{\"id\":[]},\"method\":\"ping\",\"id\":"
	    "-1.5e3}";
	ck_assert_int_eq(scan(p, &m, &why), 0);
	ck_assert_int_eq(m.kind, JRPC_REQUEST);
	span_is(p, m.id, "-1.5e3");

	/* Escaped member names are decoded. */
	p = "{\"jsonr\\u0070c\":\"2\\u002e0\",\"\\u0069d\":5,"
	    "\"m\\u0065thod\":\"a\\/b\",\"p\\u0061rams\":{}}";
	ck_assert_int_eq(scan(p, &m, &why), 0);
	ck_assert_int_eq(m.kind, JRPC_REQUEST);
	ck_assert_str_eq(m.method_name, "a/b");
	span_is(p, m.id, "5");
	span_is(p, m.params, "{}");
}
END_TEST

static const struct {
	const char	*text;
	int		 code;
	const char	*why;
	const char	*id;		/* expected id span, or NULL */
} invalid_cases[] = {
	{ "{\"id\":1,\"method\":\"x\"}", JRPC_INVALID_REQUEST,
	    "jsonrpc must be \"2.0\"", "1" },
	{ "{\"jsonrpc\":\"1.0\",\"id\":\"q\",\"method\":\"x\"}",
	    JRPC_INVALID_REQUEST, "jsonrpc must be \"2.0\"", "\"q\"" },
	{ "{\"jsonrpc\":2.0,\"id\":1,\"method\":\"x\"}", JRPC_INVALID_REQUEST,
	    "jsonrpc must be \"2.0\"", "1" },
	{ "{\"jsonrpc\":\"2.0 \",\"method\":\"x\"}", JRPC_INVALID_REQUEST,
	    "jsonrpc must be \"2.0\"", NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"x\"}",
	    JRPC_INVALID_REQUEST, "id must be a string or a number", NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"x\"}",
	    JRPC_INVALID_REQUEST, "id must be a string or a number", NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":[1],\"method\":\"x\"}",
	    JRPC_INVALID_REQUEST, "id must be a string or a number", NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"x\"}",
	    JRPC_INVALID_REQUEST, "id must be a string or a number", NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":null,\"result\":{}}",
	    JRPC_INVALID_REQUEST, "id must be a string or a number", NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":5}",
	    JRPC_INVALID_REQUEST, "method must be a string", "1" },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":null}",
	    JRPC_INVALID_REQUEST, "method must be a string", "1" },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\"}",
	    JRPC_INVALID_REQUEST, "method name is empty or too long", "1" },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\\u0000b\"}",
	    JRPC_INVALID_REQUEST, "method name is empty or too long", "1" },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":[1]}",
	    JRPC_INVALID_REQUEST, "params must be an object", "1" },
	{ "{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":null}",
	    JRPC_INVALID_REQUEST, "params must be an object", NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"result\":1}",
	    JRPC_INVALID_REQUEST, "a request cannot carry result or error",
	    "1" },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"error\":{}}",
	    JRPC_INVALID_REQUEST, "a request cannot carry result or error",
	    "1" },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":1,\"error\":{\"code\":1,"
	    "\"message\":\"m\"}}", JRPC_INVALID_REQUEST,
	    "a response cannot carry both result and error", "1" },
	{ "{\"jsonrpc\":\"2.0\",\"result\":1}", JRPC_INVALID_REQUEST,
	    "response without id", NULL },
	{ "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":1,\"message\":\"m\"}}",
	    JRPC_INVALID_REQUEST, "response without id", NULL },
	{ "{\"jsonrpc\":\"2.0\"}", JRPC_INVALID_REQUEST,
	    "message has no method", NULL },
	{ "{}", JRPC_INVALID_REQUEST, "jsonrpc must be \"2.0\"", NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1}", JRPC_INVALID_REQUEST,
	    "message has no method, result or error", "1" },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":\"1\","
	    "\"message\":\"m\"}}", JRPC_INVALID_REQUEST,
	    "error must be an object with integer code and string message",
	    "1" },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":1.5,"
	    "\"message\":\"m\"}}", JRPC_INVALID_REQUEST,
	    "error must be an object with integer code and string message",
	    "1" },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":1}}",
	    JRPC_INVALID_REQUEST,
	    "error must be an object with integer code and string message",
	    "1" },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":1,"
	    "\"message\":null}}", JRPC_INVALID_REQUEST,
	    "error must be an object with integer code and string message",
	    "1" },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":\"boom\"}",
	    JRPC_INVALID_REQUEST,
	    "error must be an object with integer code and string message",
	    "1" },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"id\":2,\"method\":\"x\"}",
	    JRPC_INVALID_REQUEST, "duplicate member in message", "1" },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"\\u0069d\":2,\"method\":\"x\"}",
	    JRPC_INVALID_REQUEST, "duplicate member in message", "1" },
	{ "{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"method\":\"y\"}",
	    JRPC_INVALID_REQUEST, "duplicate member in message", NULL },
	{ "{\"jsonrpc\":\"2.0\",\"jsonrpc\":\"2.0\",\"method\":\"x\"}",
	    JRPC_INVALID_REQUEST, "duplicate member in message", NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":1,\"result\":2}",
	    JRPC_INVALID_REQUEST, "duplicate member in message", "1" },
	/* A bad id found before a duplicate is not kept for the error. */
	{ "{\"jsonrpc\":\"2.0\",\"id\":{\"a\":1},\"method\":\"x\","
	    "\"method\":\"y\"}", JRPC_INVALID_REQUEST,
	    "duplicate member in message", NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":[1],\"id\":2,\"method\":\"x\"}",
	    JRPC_INVALID_REQUEST, "duplicate member in message", NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{},\"error\":{}}",
	    JRPC_INVALID_REQUEST, "duplicate member in message", NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":true,\"result\":1,\"result\":2}",
	    JRPC_INVALID_REQUEST, "duplicate member in message", NULL },
	{ "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"}]",
	    JRPC_INVALID_REQUEST, "batches are not supported", NULL },
	{ "[]", JRPC_INVALID_REQUEST, "batches are not supported", NULL },
	{ "5", JRPC_INVALID_REQUEST, "message is not a JSON object", NULL },
	{ "\"x\"", JRPC_INVALID_REQUEST, "message is not a JSON object",
	    NULL },
	{ "null", JRPC_INVALID_REQUEST, "message is not a JSON object",
	    NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"", JRPC_PARSE_ERROR,
	    "unexpected end of text", NULL },
	{ "", JRPC_PARSE_ERROR, "unexpected end of text", NULL },
	{ "{\"jsonrpc\":\"2.0\",\"method\":\"x\"} {}", JRPC_PARSE_ERROR,
	    "trailing data after value", NULL },
	{ "{\"jsonrpc\":\"2.0\",\"method\":\"\xc0\xae\"}", JRPC_PARSE_ERROR,
	    "invalid UTF-8 in string", NULL },
};

START_TEST(test_scan_invalid)
{
	struct jrpc	 m;
	const char	*why;
	size_t		 i = (size_t)_i;
	const char	*p = invalid_cases[i].text;

	ck_assert_msg(scan(p, &m, &why) == invalid_cases[i].code,
	    "case %zu %s: code %d", i, p, jrpc_scan(p, strlen(p), &m, &why));
	ck_assert_msg(why != NULL && strcmp(why, invalid_cases[i].why) == 0,
	    "case %zu %s: why \"%s\"", i, p, why);
	if (invalid_cases[i].code == JRPC_INVALID_REQUEST &&
	    invalid_cases[i].id != NULL)
		span_is(p, m.id, invalid_cases[i].id);
	else if (invalid_cases[i].code == JRPC_INVALID_REQUEST)
		ck_assert_uint_eq(m.id.len, 0);
}
END_TEST

START_TEST(test_scan_method_length)
{
	char		 p[512], name[JRPC_METHOD_MAX + 2];
	struct jrpc	 m;
	const char	*why;

	/* The longest name that fits. */
	memset(name, 'm', JRPC_METHOD_MAX - 1);
	name[JRPC_METHOD_MAX - 1] = '\0';
	snprintf(p, sizeof p, "{\"jsonrpc\":\"2.0\",\"method\":\"%s\"}",
	    name);
	ck_assert_int_eq(scan(p, &m, &why), 0);
	ck_assert_str_eq(m.method_name, name);
	/* One more. */
	memset(name, 'm', JRPC_METHOD_MAX);
	name[JRPC_METHOD_MAX] = '\0';
	snprintf(p, sizeof p, "{\"jsonrpc\":\"2.0\",\"method\":\"%s\"}",
	    name);
	ck_assert_int_eq(scan(p, &m, &why), JRPC_INVALID_REQUEST);
	ck_assert_str_eq(why, "method name is empty or too long");
}
END_TEST

START_TEST(test_id_valid)
{
	static const char	*yes[] = { "1", "-1.5", "\"\"", "\"x\"",
				    "12345678901234567890" };
	static const char	*no[] = { "null", "true", "false", "{}", "[]" };
	struct jspan		 none = { 0, 0 };
	size_t			 i;

	for (i = 0; i < sizeof yes / sizeof yes[0]; i++)
		ck_assert(jrpc_id_valid(yes[i], valid(yes[i])));
	for (i = 0; i < sizeof no / sizeof no[0]; i++)
		ck_assert(!jrpc_id_valid(no[i], valid(no[i])));
	ck_assert(!jrpc_id_valid("1", none));
}
END_TEST

/* Replace a message's id with new text; return the new message. */
static char *
replace_id(const char *p, const char *id, size_t idlen, enum jrpc_kind kind)
{
	struct evbuffer	*eb;
	struct jrpc	 m;
	const char	*why;
	char		*s;

	ck_assert_msg(scan(p, &m, &why) == 0, "%s: %s", p, why);
	ck_assert_int_eq(m.kind, kind);
	ck_assert_uint_ne(m.id.len, 0);
	eb = jscan_replace(p, strlen(p), m.id, id, idlen);
	s = evb_string(eb, NULL);
	evbuffer_free(eb);
	return (s);
}

static const char *const client_ids[] = {
	"\"abc\"",
	"7.50",
	"12345678901234567890",
	"-3",
	"-0",
	"0",
	"\"\"",
	"\"a\\\"b\\\\c\\u00e9\\n\\ud83d\\ude00\xc3\xa9\"",
	"-1.5e-7",
	"1E+400",
	"\"17\"",
};

START_TEST(test_id_mapping)
{
	const char	*cid = client_ids[_i];
	char		 req[512], resp[512], upresp[512], *up, *back;
	char		 gw[32];
	struct jrpc	 m;
	const char	*why;
	int64_t		 v;

	/* The client's request goes upstream with the gateway's id. */
	snprintf(req, sizeof req, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"t\",\"arguments\":{"
	    "\"id\":%s}}}", cid, cid);
	snprintf(gw, sizeof gw, "%d", 4000 + _i);
	up = replace_id(req, gw, strlen(gw), JRPC_REQUEST);
	ck_assert_int_eq(scan(up, &m, &why), 0);
	ck_assert_int_eq(m.kind, JRPC_REQUEST);
	ck_assert_str_eq(m.method_name, "tools/call");
	ck_assert_int_eq(jscan_int64(up, m.id, &v), 0);
	ck_assert_int_eq(v, 4000 + _i);
	/* Only the envelope id changed. */
	snprintf(resp, sizeof resp, "{\"jsonrpc\":\"2.0\",\"id\":%s,"
	    "\"method\":\"tools/call\",\"params\":{\"name\":\"t\","
	    "\"arguments\":{\"id\":%s}}}", gw, cid);
	ck_assert_str_eq(up, resp);

	/* Back again gives the client's exact bytes. */
	back = replace_id(up, cid, strlen(cid), JRPC_REQUEST);
	ck_assert_str_eq(back, req);
	free(back);
	free(up);

	/* The upstream's response is restored to the client's id. */
	snprintf(upresp, sizeof upresp, "{\"result\":{\"content\":[]},"
	    "\"id\" : %s ,\"jsonrpc\":\"2.0\"}", gw);
	back = replace_id(upresp, cid, strlen(cid), JRPC_RESULT);
	snprintf(resp, sizeof resp, "{\"result\":{\"content\":[]},"
	    "\"id\" : %s ,\"jsonrpc\":\"2.0\"}", cid);
	ck_assert_str_eq(back, resp);
	ck_assert_int_eq(scan(back, &m, &why), 0);
	ck_assert_int_eq(m.kind, JRPC_RESULT);
	span_is(back, m.id, cid);
	free(back);

	/* And an error response. */
	snprintf(upresp, sizeof upresp, "{\"jsonrpc\":\"2.0\",\"id\":%s,"
	    "\"error\":{\"code\":-32602,\"message\":\"bad\"}}", gw);
	back = replace_id(upresp, cid, strlen(cid), JRPC_ERROR);
	snprintf(resp, sizeof resp, "{\"jsonrpc\":\"2.0\",\"id\":%s,"
	    "\"error\":{\"code\":-32602,\"message\":\"bad\"}}", cid);
	ck_assert_str_eq(back, resp);
	free(back);
}
END_TEST

START_TEST(test_splice)
{
	struct evbuffer	*eb = evbuffer_new();
	static const char p[] = "0123456789";
	struct jedit	 e[3];
	char		*s;

	/* No edits copies. */
	jscan_splice(eb, p, 10, NULL, 0);
	s = evb_string(eb, NULL);
	ck_assert_str_eq(s, "0123456789");
	free(s);
	evbuffer_drain(eb, evbuffer_get_length(eb));

	/* Replace, insert (len 0) and delete (empty text), in order. */
	e[0].at.off = 0;
	e[0].at.len = 2;
	e[0].text = "ab";
	e[0].len = 2;
	e[1].at.off = 5;
	e[1].at.len = 0;
	e[1].text = "XYZ";
	e[1].len = 3;
	e[2].at.off = 8;
	e[2].at.len = 2;
	e[2].text = "";
	e[2].len = 0;
	jscan_splice(eb, p, 10, e, 3);
	s = evb_string(eb, NULL);
	ck_assert_str_eq(s, "ab234XYZ567");
	free(s);
	evbuffer_drain(eb, evbuffer_get_length(eb));

	/* Adjacent edits and an insertion at the very end. */
	e[0].at.off = 2;
	e[0].at.len = 3;
	e[0].text = "-";
	e[0].len = 1;
	e[1].at.off = 5;
	e[1].at.len = 1;
	e[1].text = "+";
	e[1].len = 1;
	e[2].at.off = 10;
	e[2].at.len = 0;
	e[2].text = "!";
	e[2].len = 1;
	jscan_splice(eb, p, 10, e, 3);
	s = evb_string(eb, NULL);
	ck_assert_str_eq(s, "01-+6789!");
	free(s);
	evbuffer_free(eb);
}
END_TEST

START_TEST(test_splice_two_members)
{
	/* Rewrite id and progressToken in one pass, as the gateway does. */
	static const char p[] = "{\"jsonrpc\":\"2.0\",\"id\":\"c-1\","
	    "\"method\":\"tools/call\",\"params\":{\"_meta\":{"
	    "\"progressToken\":\"tok\"},\"name\":\"x\"}}";
	static const char *const path[] = { "params", "_meta",
	    "progressToken", NULL };
	struct evbuffer	*eb = evbuffer_new();
	struct jrpc	 m;
	struct jedit	 e[2];
	const char	*why;
	char		*s;

	ck_assert_int_eq(scan(p, &m, &why), 0);
	e[0].at = m.id;
	e[0].text = "12";
	e[0].len = 2;
	ck_assert_int_eq(jscan_path(p, m.msg, path, &e[1].at), 0);
	e[1].text = "99";
	e[1].len = 2;
	jscan_splice(eb, p, sizeof p - 1, e, 2);
	s = evb_string(eb, NULL);
	ck_assert_str_eq(s, "{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":"
	    "\"tools/call\",\"params\":{\"_meta\":{\"progressToken\":99},"
	    "\"name\":\"x\"}}");
	ck_assert_int_eq(scan(s, &m, &why), 0);
	free(s);
	evbuffer_free(eb);
}
END_TEST

/* Check jscan_add_string's output for an input. */
static void
add_string_is(const char *in, size_t len, const char *want)
{
	struct evbuffer	*eb = evbuffer_new();
	struct jspan	 v;
	const char	*why;
	size_t		 where, n;
	char		*s;

	jscan_add_string(eb, in, len);
	s = evb_string(eb, &n);
	ck_assert_str_eq(s, want);
	ck_assert_msg(jscan_validate(s, n, &v, &why, &where) == 0,
	    "%s: %s", s, why);
	ck_assert_int_eq(jscan_type(s, v), JT_STRING);
	free(s);
	evbuffer_free(eb);
}

START_TEST(test_add_string)
{
	add_string_is(T(""), "\"\"");
	add_string_is(T("plain text"), "\"plain text\"");
	add_string_is(T("a\"b\\c/d"), "\"a\\\"b\\\\c/d\"");
	add_string_is(T("\n\r\t"), "\"\\n\\r\\t\"");
	add_string_is(T("\x01\x1f\b\f\x7f"),
	    "\"\\u0001\\u001f\\u0008\\u000c\x7f\"");
	add_string_is(T("a\0b"), "\"a\\u0000b\"");
	add_string_is(T("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"),
	    "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"");
	add_string_is(T("\xff"), "\"\\ufffd\"");
	add_string_is(T("a\xfe" "b"), "\"a\\ufffdb\"");
	add_string_is(T("\xc3"), "\"\\ufffd\"");
	add_string_is(T("x\xc3"), "\"x\\ufffd\"");
	add_string_is(T("\xc0\x80"), "\"\\ufffd\\ufffd\"");
	add_string_is(T("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");
	add_string_is(T("\xf4\x90\x80\x80"),
	    "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
	add_string_is(T("\xe2\x82" "A"), "\"\\ufffd\\ufffdA\"");
	add_string_is(T("\x80\"\xc3\xa9"), "\"\\ufffd\\\"\xc3\xa9\"");
}
END_TEST

START_TEST(test_add_string_decodes)
{
	/* Every byte value that is valid UTF-8 on its own comes back. */
	struct evbuffer	*eb = evbuffer_new();
	char		 in[128], buf[1024], *s;
	struct jspan	 v;
	const char	*why;
	size_t		 i, n, where;

	for (i = 0; i < sizeof in; i++)
		in[i] = (char)i;
	jscan_add_string(eb, in, sizeof in);
	s = evb_string(eb, &n);
	ck_assert_int_eq(jscan_validate(s, n, &v, &why, &where), 0);
	ck_assert_int_eq(jscan_string(s, v, buf, sizeof buf), 128);
	ck_assert_mem_eq(buf, in, sizeof in);
	free(s);
	evbuffer_free(eb);
}
END_TEST

/* Check a builder's output. */
static void
built_is(struct evbuffer *eb, const char *want, enum jrpc_kind kind)
{
	struct jrpc	 m;
	const char	*why;
	char		*s;

	s = evb_string(eb, NULL);
	ck_assert_str_eq(s, want);
	ck_assert_msg(scan(s, &m, &why) == 0, "%s: %s", s, why);
	ck_assert_int_eq(m.kind, kind);
	free(s);
	evbuffer_drain(eb, evbuffer_get_length(eb));
}

START_TEST(test_add_error)
{
	struct evbuffer	*eb = evbuffer_new();

	jrpc_add_error(eb, "7", 1, JRPC_METHOD_NOT_FOUND, "Method not found",
	    NULL);
	built_is(eb, "{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-32601,"
	    "\"message\":\"Method not found\"}}", JRPC_ERROR);

	jrpc_add_error(eb, NULL, 0, JRPC_PARSE_ERROR, "Parse error", NULL);
	built_is(eb, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":"
	    "-32700,\"message\":\"Parse error\"}}", JRPC_ERROR);

	jrpc_add_error(eb, "\"x\"", 0, JRPC_INVALID_REQUEST, "m", NULL);
	built_is(eb, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":"
	    "-32600,\"message\":\"m\"}}", JRPC_ERROR);

	jrpc_add_error(eb, "\"a\\\"b\"", 6, MCP_REQUEST_TIMEOUT,
	    "upstream \"s\" timed out\n\x01", "{\"after\":30}");
	built_is(eb, "{\"jsonrpc\":\"2.0\",\"id\":\"a\\\"b\",\"error\":{"
	    "\"code\":-32001,\"message\":\"upstream \\\"s\\\" timed out"
	    "\\n\\u0001\",\"data\":{\"after\":30}}}", JRPC_ERROR);

	/* Only idlen bytes of the id are used. */
	jrpc_add_error(eb, "12345", 2, 0, "", "null");
	built_is(eb, "{\"jsonrpc\":\"2.0\",\"id\":12,\"error\":{\"code\":0,"
	    "\"message\":\"\",\"data\":null}}", JRPC_ERROR);

	jrpc_add_error(eb, "1", 1, MCP_OVERLOADED, "bad \xff", NULL);
	built_is(eb, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32003,"
	    "\"message\":\"bad \\ufffd\"}}", JRPC_ERROR);
	evbuffer_free(eb);
}
END_TEST

START_TEST(test_add_result)
{
	struct evbuffer	*eb = evbuffer_new();

	jrpc_add_result(eb, "\"abc\"", 5, "{}", 2);
	built_is(eb, "{\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"result\":{}}",
	    JRPC_RESULT);
	jrpc_add_result(eb, "-1.5", 4, "{\"tools\":[{\"name\":\"x\"}]}xx", 24);
	built_is(eb, "{\"jsonrpc\":\"2.0\",\"id\":-1.5,\"result\":{\"tools\":"
	    "[{\"name\":\"x\"}]}}", JRPC_RESULT);
	evbuffer_free(eb);
}
END_TEST

/*
 * jscan_splice_owned: a long answer whose id is replaced comes out equal
 * to the copying splice, with its long runs taken by reference; the owner
 * is freed when the output lets go (a leak would show under valgrind or
 * LeakSanitizer).
 */
START_TEST(test_splice_owned)
{
	struct evbuffer	*owner, *out, *want;
	struct jrpc	 m;
	struct jedit	 e;
	const char	*why, *p;
	size_t		 n, i;
	char		*text;

	n = 300000;
	text = malloc(n + 64);
	ck_assert_ptr_nonnull(text);
	n = (size_t)snprintf(text, 64, "{\"jsonrpc\":\"2.0\",\"result\":\"");
	for (i = 0; i < 300000; i++)
		text[n++] = (char)('a' + i % 26);
	n += (size_t)sprintf(text + n, "\",\"id\":17}");
	owner = evbuffer_new();
	evbuffer_add(owner, text, n);
	p = (const char *)evbuffer_pullup(owner, -1);
	ck_assert_int_eq(jrpc_scan(p, n, &m, &why), 0);
	e.at = m.id;
	e.text = "\"client-id\"";
	e.len = strlen(e.text);
	want = evbuffer_new();
	jscan_splice(want, p, n, &e, 1);
	out = evbuffer_new();
	jscan_splice_owned(out, owner, p, n, &e, 1);
	ck_assert_uint_eq(evbuffer_get_length(out), evbuffer_get_length(want));
	ck_assert_int_eq(memcmp(evbuffer_pullup(out, -1),
	    evbuffer_pullup(want, -1), evbuffer_get_length(want)), 0);
	evbuffer_free(out);	/* releases the references, then the owner */
	evbuffer_free(want);
	free(text);
}
END_TEST

static Suite *
jsonrpc_suite(void)
{
	Suite	*s = suite_create("jsonrpc");
	TCase	*tc;

	tc = tcase_create("validate");
	tcase_add_loop_test(tc, test_validate_table, 0,
	    sizeof validate_cases / sizeof validate_cases[0]);
	tcase_add_test(tc, test_validate_why);
	tcase_add_test(tc, test_fix_surrogates);
	tcase_add_test(tc, test_validate_span);
	tcase_add_test(tc, test_validate_depth);
	suite_add_tcase(s, tc);

	tc = tcase_create("navigate");
	tcase_add_test(tc, test_type);
	tcase_add_test(tc, test_iterate);
	tcase_add_test(tc, test_iterate_array);
	tcase_add_test(tc, test_member_path);
	tcase_add_test(tc, test_string);
	tcase_add_test(tc, test_string_equals);
	tcase_add_test(tc, test_int64);
	suite_add_tcase(s, tc);

	tc = tcase_create("jsonrpc");
	tcase_add_test(tc, test_scan_kinds);
	tcase_add_loop_test(tc, test_scan_invalid, 0,
	    sizeof invalid_cases / sizeof invalid_cases[0]);
	tcase_add_test(tc, test_scan_method_length);
	tcase_add_test(tc, test_id_valid);
	suite_add_tcase(s, tc);

	tc = tcase_create("id mapping");
	tcase_add_loop_test(tc, test_id_mapping, 0,
	    sizeof client_ids / sizeof client_ids[0]);
	tcase_add_test(tc, test_splice);
	tcase_add_test(tc, test_splice_two_members);
	tcase_add_test(tc, test_splice_owned);
	suite_add_tcase(s, tc);

	tc = tcase_create("build");
	tcase_add_test(tc, test_add_string);
	tcase_add_test(tc, test_add_string_decodes);
	tcase_add_test(tc, test_add_error);
	tcase_add_test(tc, test_add_result);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr = srunner_create(jsonrpc_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
