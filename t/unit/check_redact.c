/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for common/redact.c: URLs with their credentials replaced,
 * well-formed or not, cut to any size without showing part of a secret.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "redact.h"

/* The redacted form of u, in a large buffer. */
static const char *
r(const char *u)
{
	static char	buf[1024];

	return (url_redact(u, buf, sizeof buf));
}

START_TEST(test_userinfo)
{
	ck_assert_str_eq(r("https://user:pass@example.com/mcp"),
	    "https://***@example.com/mcp");
	ck_assert_str_eq(r("https://ghp_token@example.com"),
	    "https://***@example.com");
	ck_assert_str_eq(r("http://user:@127.0.0.1:1/x"),
	    "http://***@127.0.0.1:1/x");
	ck_assert_str_eq(r("wss://a:b@host:8443/ws?x=1"),
	    "wss://***@host:8443/ws?x=1");
	/* An unencoded '@' in the password: the last one ends it. */
	ck_assert_str_eq(r("https://user:p@ss@host/"), "https://***@host/");
	/* Percent-encoded, as it should be. */
	ck_assert_str_eq(r("https://us%40er:p%2Fss@host/"),
	    "https://***@host/");
	/* Nothing to hide. */
	ck_assert_str_eq(r("https://example.com:8443/mcp"),
	    "https://example.com:8443/mcp");
	ck_assert_str_eq(r("https://registry.example/@scope/pkg"),
	    "https://registry.example/@scope/pkg");
}
END_TEST

START_TEST(test_ipv6)
{
	ck_assert_str_eq(r("http://u:p@[::1]:8080/mcp?token=t"),
	    "http://***@[::1]:8080/mcp?token=***");
	ck_assert_str_eq(r("http://[::1]:8080/mcp"), "http://[::1]:8080/mcp");
	ck_assert_str_eq(r("http://[fe80::1%25eth0]/"),
	    "http://[fe80::1%25eth0]/");
	ck_assert_str_eq(r("http://[::1]/a@b"), "http://[::1]/a@b");
}
END_TEST

START_TEST(test_query)
{
	ck_assert_str_eq(r("https://h/mcp?api_key=abc&x=1"),
	    "https://h/mcp?api_key=***&x=1");
	ck_assert_str_eq(r("https://h/?API_KEY=a&ApiKey=b&Token=c&key=d"),
	    "https://h/?API_KEY=***&ApiKey=***&Token=***&key=***");
	ck_assert_str_eq(r("https://h/?access_token=a&secret=b&password=c"),
	    "https://h/?access_token=***&secret=***&password=***");
	ck_assert_str_eq(r("https://h/?sig=a&signature=b&auth=c&code=d"),
	    "https://h/?sig=***&signature=***&auth=***&code=***");
	ck_assert_str_eq(r("https://h/?apikey=a&api-key=b&X-Amz-Signature=c"),
	    "https://h/?apikey=***&api-key=***&X-Amz-Signature=***");
	ck_assert_str_eq(r("https://h/messages?sessionId=abc"),
	    "https://h/messages?sessionId=***");
	/* Percent-encoded names are decoded before they are compared. */
	ck_assert_str_eq(r("https://h/?api%5Fkey=abc&%61uth=x"),
	    "https://h/?api%5Fkey=***&%61uth=***");
	/* Semicolons separate too. */
	ck_assert_str_eq(r("https://h/?a=1;token=x"), "https://h/?a=1;token=***");
	/* What is not secret stays, and so does an empty value. */
	ck_assert_str_eq(r("https://h/?model=gpt&limit=3&code"),
	    "https://h/?model=gpt&limit=3&code");
	ck_assert_str_eq(r("https://h/?token="), "https://h/?token=");
	ck_assert_str_eq(r("https://h/?=x&&;=;key"), "https://h/?=x&&;=;key");
	ck_assert_str_eq(r("https://h/?"), "https://h/?");
	ck_assert_str_eq(r("https://h/?token=a=b"), "https://h/?token=***");
}
END_TEST

START_TEST(test_fragment)
{
	ck_assert_str_eq(r("https://h/cb#access_token=abc&state=x"),
	    "https://h/cb#access_token=***&state=***");
	/* OAuth's other values: a PKCE verifier, a nonce, an assertion. */
	ck_assert_str_eq(r("https://h/t?code_verifier=v&nonce=n&"
	    "client_assertion=a&client_assertion_type=jwt-bearer&stateful=1"),
	    "https://h/t?code_verifier=***&nonce=***&client_assertion=***&"
	    "client_assertion_type=***&stateful=1");
	ck_assert_str_eq(r("https://h/?token=x#frag"),
	    "https://h/?token=***#frag");
	ck_assert_str_eq(r("https://h/#"), "https://h/#");
}
END_TEST

START_TEST(test_malformed)
{
	ck_assert_str_eq(r(""), "");
	ck_assert_str_eq(r("https://"), "https://");
	ck_assert_str_eq(r("not a url"), "not a url");
	ck_assert_str_eq(r("https://host:abc/p"), "https://host:abc/p");
	/* No scheme: an '@' before the path still ends user information. */
	ck_assert_str_eq(r("user:pass@host/x"), "***@host/x");
	ck_assert_str_eq(r("//user:pass@host/x"), "//***@host/x");
	/* An unencoded '/', '?' or '#' in the password. */
	ck_assert_str_eq(r("https://user:pa/ss@host/mcp"),
	    "https://***@host/mcp");
	ck_assert_str_eq(r("https://user:pa?ss@host/mcp"),
	    "https://***@host/mcp");
	ck_assert_str_eq(r("https://user:pa#ss@host/mcp"),
	    "https://***@host/mcp");
	ck_assert_str_eq(r("http://[::1/x"), "http://[::1/x");
	/* A relative reference, as an SSE endpoint event names one. */
	ck_assert_str_eq(r("/messages?session_id=abc"),
	    "/messages?session_id=***");
	ck_assert_str_eq(r("@"), "***@");
	ck_assert_str_eq(r("?token=x"), "?token=***");
}
END_TEST

START_TEST(test_names)
{
	ck_assert_int_eq(redact_secret_name("model", 5), 0);
	ck_assert_int_eq(redact_secret_name("Private-Token", 13), 1);
	ck_assert_int_eq(redact_secret_name("client_secret", 13), 1);
	ck_assert_int_eq(redact_secret_name("code", 4), 1);
	ck_assert_int_eq(redact_secret_name("postcode", 8), 0);
	ck_assert_int_eq(redact_secret_name("k%00ey", 6), 1);
	ck_assert_int_eq(redact_secret_name("%", 1), 0);
	ck_assert_int_eq(redact_secret_name("", 0), 0);
}
END_TEST

START_TEST(test_cut)
{
	const char	*u = "https://user:SECRET@h/?api_key=SECRET2&x=1";
	char		 buf[64];
	size_t		 len;

	/* Every size: never a piece of a secret, always terminated. */
	for (len = 1; len <= sizeof buf; len++) {
		memset(buf, 'Z', sizeof buf);
		url_redact(u, buf, len);
		ck_assert_ptr_nonnull(memchr(buf, '\0', len));
		ck_assert_ptr_null(strstr(buf, "SEC"));
		ck_assert_ptr_null(strstr(buf, "user"));
		if (len < sizeof buf)
			ck_assert_int_eq(buf[len], 'Z');
	}
	url_redact(u, buf, 16);
	ck_assert_str_eq(buf, "https://***@...");
	url_redact(u, buf, sizeof buf);
	ck_assert_str_eq(buf, "https://***@h/?api_key=***&x=1");
	/* Nothing written for no room at all. */
	buf[0] = 'Z';
	url_redact(u, buf, 0);
	ck_assert_int_eq(buf[0], 'Z');
	/* A long name is taken for a secret. */
	{
		char	name[300], url[400];

		memset(name, 'a', sizeof name - 1);
		name[sizeof name - 1] = '\0';
		snprintf(url, sizeof url, "http://h/?%s=v", name);
		ck_assert_int_eq(redact_secret_name(name, strlen(name)), 1);
		ck_assert_ptr_nonnull(strstr(r(url), "a=***"));
	}
}
END_TEST

static Suite *
redact_suite(void)
{
	Suite	*s = suite_create("redact");
	TCase	*tc = tcase_create("url");

	tcase_add_test(tc, test_userinfo);
	tcase_add_test(tc, test_ipv6);
	tcase_add_test(tc, test_query);
	tcase_add_test(tc, test_fragment);
	tcase_add_test(tc, test_malformed);
	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_cut);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr = srunner_create(redact_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
