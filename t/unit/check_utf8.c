/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for common/utf8.c: well-formed UTF-8 as RFC 3629 defines it,
 * with the boundaries of each length and the forms it forbids.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "utf8.h"

/* Is the NUL-terminated s valid? */
static int
ok(const char *s)
{
	return (utf8_valid((const unsigned char *)s, strlen(s)));
}

START_TEST(test_valid)
{
	ck_assert_int_eq(ok(""), 1);
	ck_assert_int_eq(ok("plain ASCII ~"), 1);
	ck_assert_int_eq(ok("\xc2\x80"), 1);		/* U+0080 */
	ck_assert_int_eq(ok("\xdf\xbf"), 1);		/* U+07FF */
	ck_assert_int_eq(ok("\xe0\xa0\x80"), 1);	/* U+0800 */
	ck_assert_int_eq(ok("\xed\x9f\xbf"), 1);	/* U+D7FF */
	ck_assert_int_eq(ok("\xee\x80\x80"), 1);	/* U+E000 */
	ck_assert_int_eq(ok("\xef\xbf\xbf"), 1);	/* U+FFFF */
	ck_assert_int_eq(ok("\xf0\x90\x80\x80"), 1);	/* U+10000 */
	ck_assert_int_eq(ok("\xf4\x8f\xbf\xbf"), 1);	/* U+10FFFF */
	ck_assert_int_eq(ok("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), 1);
	/* A NUL is a character like any other here. */
	ck_assert_int_eq(utf8_valid((const unsigned char *)"a\0b", 3), 1);
}
END_TEST

START_TEST(test_invalid)
{
	ck_assert_int_eq(ok("\x80"), 0);		/* a lone continuation */
	ck_assert_int_eq(ok("\xc3"), 0);		/* cut short */
	ck_assert_int_eq(ok("\xe2\x82"), 0);
	ck_assert_int_eq(ok("\xf0\x9f\x98"), 0);
	ck_assert_int_eq(ok("\xc3(x"), 0);		/* not a continuation */
	ck_assert_int_eq(ok("\xc0\xaf"), 0);		/* overlong '/' */
	ck_assert_int_eq(ok("\xc1\xbf"), 0);
	ck_assert_int_eq(ok("\xe0\x9f\xbf"), 0);	/* overlong U+07FF */
	ck_assert_int_eq(ok("\xf0\x8f\xbf\xbf"), 0);	/* overlong U+FFFF */
	ck_assert_int_eq(ok("\xed\xa0\x80"), 0);	/* U+D800 */
	ck_assert_int_eq(ok("\xed\xbf\xbf"), 0);	/* U+DFFF */
	ck_assert_int_eq(ok("\xf4\x90\x80\x80"), 0);	/* U+110000 */
	ck_assert_int_eq(ok("\xf8\x88\x80\x80\x80"), 0);	/* 5 bytes */
	ck_assert_int_eq(ok("\xfe"), 0);
	ck_assert_int_eq(ok("\xff"), 0);
	ck_assert_int_eq(ok("ok then \xe2\x82"), 0);	/* cut at the end */
}
END_TEST

/* Scrub a copy of s; is it want? */
static void
scrubbed_is(const char *s, const char *want)
{
	char	buf[64];

	snprintf(buf, sizeof buf, "%s", s);
	utf8_scrub(buf, strlen(buf));
	ck_assert_str_eq(buf, want);
	ck_assert_int_eq(ok(buf), 1);
}

START_TEST(test_scrub)
{
	scrubbed_is("caf\xc3\xa9", "caf\xc3\xa9");
	scrubbed_is("caf\xe9 au lait", "caf? au lait");		/* Latin-1 */
	scrubbed_is("caf\xc3", "caf?");			/* cut short */
	scrubbed_is("\xe2\x82", "??");
	scrubbed_is("\xf0\x9f\x98\x80!", "\xf0\x9f\x98\x80!");
	scrubbed_is("\xed\xa0\x80", "???");			/* a surrogate */
	scrubbed_is("\xc0\xaf", "??");				/* overlong */
}
END_TEST

static Suite *
utf8_suite(void)
{
	Suite	*s = suite_create("utf8");
	TCase	*tc = tcase_create("basic");

	tcase_add_test(tc, test_valid);
	tcase_add_test(tc, test_invalid);
	tcase_add_test(tc, test_scrub);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr = srunner_create(utf8_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
