/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for common/ws_accept.c: the Sec-WebSocket-Accept value of the
 * WebSocket opening handshake.  The expected values are RFC 6455's example
 * and values computed outside this project with
 *	printf '%s' "$key$GUID" | openssl sha1 -binary | base64
 * where GUID is 258EAFA5-E914-47DA-95CA-C5AB0DC85B11.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "ws_accept.h"

/* Check the accept value of a NUL-terminated key. */
static void
check_accept(const char *key, const char *want)
{
	char	out[WS_ACCEPT_LEN + 1];

	ck_assert_int_eq(ws_accept(key, strlen(key), out), 0);
	ck_assert_str_eq(out, want);
}

/* RFC 6455, sections 1.3 and 4.2.2: the sample nonce. */
START_TEST(test_rfc6455_example)
{
	check_accept("dGhlIHNhbXBsZSBub25jZQ==", "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
}
END_TEST

/* Random keys, as a client sends them (16 random bytes in base64). */
START_TEST(test_random_keys)
{
	check_accept("RjPjMONX2S43TMFOPftw7A==", "v5N7axbKhakBjAajvZuCHCyt9Is=");
	check_accept("Ya3U5Q5W0HUbJzobCUetaQ==", "KRvfZ3C7EMpMBLfSxrPE1SbF0mw=");
	check_accept("AAAAAAAAAAAAAAAAAAAAAA==", "ICX+Yqv66kxgM0FcWaLWlFLwTAI=");
}
END_TEST

/* Not the value of the GUID the worker once used by mistake. */
START_TEST(test_not_the_wrong_guid)
{
	char	out[WS_ACCEPT_LEN + 1];

	ck_assert_int_eq(ws_accept("dGhlIHNhbXBsZSBub25jZQ==", 24, out), 0);
	ck_assert_str_ne(out, "7wm9f4CXJykTkSLTRhb/0x1kNkA=");
}
END_TEST

/* The key is taken by length, as a header value comes: no NUL needed. */
START_TEST(test_key_by_length)
{
	const char	*value = "dGhlIHNhbXBsZSBub25jZQ==, and more";
	char		 out[WS_ACCEPT_LEN + 1];

	ck_assert_int_eq(ws_accept(value, 24, out), 0);
	ck_assert_str_eq(out, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
}
END_TEST

/* A key longer than WS_KEY_MAX is refused, and out is left empty. */
START_TEST(test_key_too_long)
{
	char	key[WS_KEY_MAX + 2], out[WS_ACCEPT_LEN + 1];

	memset(key, 'A', sizeof key);
	ck_assert_int_eq(ws_accept(key, WS_KEY_MAX, out), 0);
	ck_assert_uint_eq(strlen(out), WS_ACCEPT_LEN);
	ck_assert_int_eq(ws_accept(key, WS_KEY_MAX + 1, out), -1);
	ck_assert_str_eq(out, "");
}
END_TEST

static Suite *
ws_suite(void)
{
	Suite	*s = suite_create("ws");
	TCase	*tc = tcase_create("accept");

	tcase_add_test(tc, test_rfc6455_example);
	tcase_add_test(tc, test_random_keys);
	tcase_add_test(tc, test_not_the_wrong_guid);
	tcase_add_test(tc, test_key_by_length);
	tcase_add_test(tc, test_key_too_long);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr = srunner_create(ws_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
