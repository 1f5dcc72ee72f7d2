/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for common/uri.c: the normal form the ACL matches resource
 * URIs in (RFC 3986 section 6.2.2, "." segments removed), and what is
 * refused because a reader could resolve it otherwise.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "uri.h"

/* Normalise a C string; the result, or NULL with why. */
static const char *
norm(const char *in, int flags, const char **why)
{
	static char	out[1024];

	*why = NULL;
	if (uri_normalize(in, strlen(in), flags, out, sizeof out, why) != 0)
		return (NULL);
	return (out);
}

static void
same(const char *in, int flags, const char *want)
{
	const char	*why, *got = norm(in, flags, &why);

	ck_assert_msg(got != NULL, "%s refused: %s", in, why);
	ck_assert_str_eq(got, want);
	/* The normal form is its own normal form. */
	got = norm(want, flags, &why);
	ck_assert_msg(got != NULL, "%s refused again: %s", want, why);
	ck_assert_str_eq(got, want);
}

static void
refused(const char *in, int flags, const char *want)
{
	const char	*why, *got = norm(in, flags, &why);

	ck_assert_msg(got == NULL, "%s taken as %s", in, got);
	ck_assert_str_eq(why, want);
}

START_TEST(test_case_and_encoding)
{
	same("file:///pub/a.txt", 0, "file:///pub/a.txt");
	same("FILE:///pub/a.txt", 0, "file:///pub/a.txt");
	same("File:///PUB/A.txt", 0, "file:///PUB/A.txt");
	same("HTTP://User@Example.COM:8080/A%7eb?Q%7e#F%7e", 0,
	    "http://User@example.com:8080/A~b?Q~#F~");
	/* Encoded unreserved characters are decoded; the host's lowered. */
	same("http://%41B.example/%61%62c", 0, "http://ab.example/abc");
	same("http://%41@h/", 0, "http://A@h/");
	same("file:///pub/a%2Etxt", 0, "file:///pub/a.txt");
	same("file:///pub/a%2etxt", 0, "file:///pub/a.txt");
	/* Others stay encoded, in upper case. */
	same("file:///pub/a%20b%3bc", 0, "file:///pub/a%20b%3Bc");
}
END_TEST

START_TEST(test_case_and_encoding_more)
{
	same("x:/a?b=%2f&c=%5c", 0, "x:/a?b=%2F&c=%5C");
	same("file:///pub/%c3%a9", 0, "file:///pub/%C3%A9");
	same("file:///pub/\xc3\xa9", 0, "file:///pub/\xc3\xa9");
	same("file:///a%25zz", 0, "file:///a%25zz");
	/* Templates and other text a URI should not hold pass as they are. */
	same("file:///{+path}", 0, "file:///{+path}");
	same("note://{id}", 0, "note://{id}");
	same("file:///my docs/a.txt", 0, "file:///my docs/a.txt");
	same("urn:isbn:0451450523", 0, "urn:isbn:0451450523");
	same("mailto:Joe@Example.COM", 0, "mailto:Joe@Example.COM");
	same("http://h", 0, "http://h");
	same("http://h?q", 0, "http://h?q");
	same("a:", 0, "a:");
	/* A backslash after the path is no separator. */
	same("x:/a?p=a\\b", 0, "x:/a?p=a\\b");
	/* A '..' in the query is not a segment. */
	same("x:/a?p=../b", 0, "x:/a?p=../b");
}
END_TEST

START_TEST(test_dot_segments)
{
	same("file:///pub/./a", 0, "file:///pub/a");
	same("file:///pub/.", 0, "file:///pub/");
	same("file:///pub/./", 0, "file:///pub/");
	same("file:///./a", 0, "file:///a");
	same("file:///.", 0, "file:///");
	same("urn:./a", 0, "urn:a");
	same("urn:.", 0, "urn:");
	same("file:///pub/.hidden/..x/x..", 0, "file:///pub/.hidden/..x/x..");
	same("file:///pub/...", 0, "file:///pub/...");
	refused("file:///pub/../secret/key.txt", 0,
	    "a '..' segment in the path");
	refused("file:///pub/a/..", 0, "a '..' segment in the path");
	refused("file:///..", 0, "a '..' segment in the path");
	refused("file:///../etc/passwd", 0, "a '..' segment in the path");
	refused("urn:../x", 0, "a '..' segment in the path");
	refused("file:///pub/%2e%2e/secret", 0, "a '..' segment in the path");
	refused("file:///pub/%2E./secret", 0, "a '..' segment in the path");
	refused("file:///pub/.%2e/secret", 0, "a '..' segment in the path");
	refused("file:///pub/..;x/secret", 0, "a '..' segment in the path");
	refused("file:///pub/..;/secret", 0, "a '..' segment in the path");
	refused("file:///pub/%2e/secret", 0, "a '.' segment spelled with %2E");
	refused("file:///pub//secret", 0, "an empty segment (//) in the path");
	refused("file:////server/share", 0,
	    "an empty segment (//) in the path");
	refused("x:/.//a", 0, "an empty segment (//) in the path");
	refused("x:a//b", 0, "an empty segment (//) in the path");
}
END_TEST

START_TEST(test_refused)
{
	refused("file:///pub%2Fsecret", 0, "an encoded '/' (%2F) in the path");
	refused("file:///pub/..%2Fsecret", 0,
	    "an encoded '/' (%2F) in the path");
	refused("file:///pub/..%2fsecret", 0,
	    "an encoded '/' (%2F) in the path");
	refused("file:///pub/a%5Cb", 0, "an encoded '\\' (%5C) in the path");
	refused("file:///pub\\..\\secret", 0, "a '\\' in the path");
	refused("file:///pub/a\\b", 0, "a '\\' in the path");
	refused("http://a\\b@c/", 0, "a '\\' in the authority");
	refused("file:///pub/%252e%252e/secret", 0,
	    "a double percent-encoding (%25 before a hex digit or '%') in "
	    "the path");
	refused("file:///pub/%252F", 0,
	    "a double percent-encoding (%25 before a hex digit or '%') in "
	    "the path");
	refused("file:///pub/%25%37e", 0,
	    "a double percent-encoding (%25 before a hex digit or '%') in "
	    "the path");
	refused("file:///pub/%25a", 0,
	    "a double percent-encoding (%25 before a hex digit or '%') in "
	    "the path");
	same("file:///pub/%25x", 0, "file:///pub/%25x");
	same("file:///pub/a?%25%37e", 0, "file:///pub/a?%257e");
	refused("file:///pub/a%00", 0, "an encoded NUL (%00)");
	refused("file:///pub/a?%00", 0, "an encoded NUL (%00)");
	refused("http://h%00/", 0, "an encoded NUL (%00)");
	refused("file:///pub/a%0", 0, "an invalid percent-encoding");
	refused("file:///pub/a%", 0, "an invalid percent-encoding");
	refused("file:///pub/a%G1", 0, "an invalid percent-encoding");
	refused("x:/a?b=%zz", 0, "an invalid percent-encoding");
	refused("http://h%4/", 0, "an invalid percent-encoding");
	refused("file:///pub/a\tb", 0, "a control character");
	refused("file:///pub/a\nb", 0, "a control character");
	refused("file:///pub/a\x7f", 0, "a control character");
	refused("x:/a#\x1b[31m", 0, "a control character");
	refused("", 0, "no scheme");
	refused("/pub/a", 0, "no scheme");
	refused("pub/a", 0, "no scheme");
	refused("1abc:x", 0, "no scheme");
	refused(":x", 0, "no scheme");
	refused("ab_c:x", 0, "no scheme");
}
END_TEST

START_TEST(test_decode)
{
	/* URI_DECODE: the path as a file server reads it. */
	same("file:///pub/secret%20file%3Bx", URI_DECODE,
	    "file:///pub/secret file;x");
	same("file:///pub/%c3%a9", URI_DECODE, "file:///pub/\xc3\xa9");
	same("file:///pub/a%3Fb%23c%25x%0Ae", URI_DECODE,
	    "file:///pub/a%3Fb%23c%25x%0Ae");
	/* Only in the path. */
	same("x:/a%20b?c%20d", URI_DECODE, "x:/a b?c%20d");
	same("http://h%20x/", URI_DECODE, "http://h%20x/");
	/* A '..' that only decoding reveals. */
	same("file:///pub/..%3B/x", 0, "file:///pub/..%3B/x");
	refused("file:///pub/..%3B/x", URI_DECODE,
	    "a '..' segment in the path");
	refused("file:///pub%2Fx", URI_DECODE,
	    "an encoded '/' (%2F) in the path");
}
END_TEST

START_TEST(test_size)
{
	const char	*why = NULL, *in = "file:///a";
	char		 out[16];

	memset(out, 'x', sizeof out);
	ck_assert_int_eq(uri_normalize(in, strlen(in), 0, out, strlen(in),
	    &why), -1);
	ck_assert_str_eq(why, "the URI is too long");
	ck_assert_int_eq(out[0], 'x');
	ck_assert_int_eq(uri_normalize(in, strlen(in), 0, out,
	    strlen(in) + 1, &why), 0);
	ck_assert_str_eq(out, in);
	/* Not NUL-terminated input: only len bytes are read. */
	ck_assert_int_eq(uri_normalize("FILE:///a/../b", 9, 0, out,
	    sizeof out, &why), 0);
	ck_assert_str_eq(out, "file:///a");
}
END_TEST

static Suite *
uri_suite(void)
{
	Suite	*s = suite_create("uri");
	TCase	*tc = tcase_create("normalize");

	tcase_add_test(tc, test_case_and_encoding);
	tcase_add_test(tc, test_case_and_encoding_more);
	tcase_add_test(tc, test_dot_segments);
	tcase_add_test(tc, test_refused);
	tcase_add_test(tc, test_decode);
	tcase_add_test(tc, test_size);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr = srunner_create(uri_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
