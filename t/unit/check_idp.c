/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for idp/idp_meta.c, what mcp-idp decides without I/O: where
 * an issuer's metadata is looked for (RFC 8414 path insertion, then
 * OpenID), which URLs may be fetched, Cache-Control's max-age and its
 * bounds, and whether a metadata document is the configured issuer's.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "idp.h"

/* The discovery URLs of an issuer, as one string "a b c"; or "-why". */
static const char *
disc(const char *issuer)
{
	static char	 out[4096];
	char		*urls[IDP_DISCOVERY_MAX], why[IDP_WHY_MAX];
	int		 i, n;

	n = idp_discovery_urls(issuer, urls, why, sizeof why);
	if (n < 0) {
		snprintf(out, sizeof out, "-%s", why);
		return (out);
	}
	out[0] = '\0';
	for (i = 0; i < n; i++) {
		snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s",
		    i > 0 ? " " : "", urls[i]);
		free(urls[i]);
	}
	return (out);
}

START_TEST(test_discovery_no_path)
{
	ck_assert_str_eq(disc("https://idp.example.com"),
	    "https://idp.example.com/.well-known/oauth-authorization-server "
	    "https://idp.example.com/.well-known/openid-configuration");
	/* A lone "/" is no path. */
	ck_assert_str_eq(disc("https://idp.example.com/"),
	    "https://idp.example.com/.well-known/oauth-authorization-server "
	    "https://idp.example.com/.well-known/openid-configuration");
	/* The port is kept; loopback may be http. */
	ck_assert_str_eq(disc("http://127.0.0.1:39411"),
	    "http://127.0.0.1:39411/.well-known/oauth-authorization-server "
	    "http://127.0.0.1:39411/.well-known/openid-configuration");
	ck_assert_str_eq(disc("http://[::1]:8080"),
	    "http://[::1]:8080/.well-known/oauth-authorization-server "
	    "http://[::1]:8080/.well-known/openid-configuration");
}
END_TEST

START_TEST(test_discovery_path)
{
	/* Keycloak: the realm is the path; RFC 8414 inserts before it. */
	ck_assert_str_eq(disc("https://kc.example.com/realms/mcp"),
	    "https://kc.example.com/.well-known/oauth-authorization-server"
	    "/realms/mcp "
	    "https://kc.example.com/.well-known/openid-configuration"
	    "/realms/mcp "
	    "https://kc.example.com/realms/mcp/.well-known/"
	    "openid-configuration");
	/* Entra ID: a trailing version segment; a trailing '/' dropped. */
	ck_assert_str_eq(disc("https://login.microsoftonline.com/t1/v2.0/"),
	    "https://login.microsoftonline.com/.well-known/"
	    "oauth-authorization-server/t1/v2.0 "
	    "https://login.microsoftonline.com/.well-known/"
	    "openid-configuration/t1/v2.0 "
	    "https://login.microsoftonline.com/t1/v2.0/.well-known/"
	    "openid-configuration");
	ck_assert_str_eq(disc("https://idp.example.com:8443/a/b"),
	    "https://idp.example.com:8443/.well-known/"
	    "oauth-authorization-server/a/b "
	    "https://idp.example.com:8443/.well-known/openid-configuration/a/b "
	    "https://idp.example.com:8443/a/b/.well-known/"
	    "openid-configuration");
}
END_TEST

START_TEST(test_discovery_refused)
{
	ck_assert_str_eq(disc("http://idp.example.com"),
	    "-http:// but not to a loopback address (https is required)");
	ck_assert_str_eq(disc("http://localhost.example.com"),
	    "-http:// but not to a loopback address (https is required)");
	ck_assert_str_eq(disc("http://127.0.0.1.example.com"),
	    "-http:// but not to a loopback address (https is required)");
	ck_assert_str_eq(disc("https://idp.example.com/x?tenant=1"),
	    "-an issuer with a query");
	ck_assert_str_eq(disc("https://idp.example.com/#f"),
	    "-a URL with a fragment");
	ck_assert_str_eq(disc("https://user:pw@idp.example.com"),
	    "-a URL with user information");
	ck_assert_str_eq(disc("ftp://idp.example.com"),
	    "-not an http(s) URL");
	ck_assert_str_eq(disc("idp.example.com"), "-not an absolute URL");
	ck_assert_str_eq(disc(""), "-not an absolute URL");
}
END_TEST

START_TEST(test_url_allowed)
{
	char	why[IDP_WHY_MAX], *big;

	ck_assert_int_eq(idp_url_allowed("https://a.example/jwks", why,
	    sizeof why), 1);
	ck_assert_int_eq(idp_url_allowed("http://localhost:1/j", why,
	    sizeof why), 1);
	ck_assert_int_eq(idp_url_allowed("http://LOCALHOST/j", why,
	    sizeof why), 1);
	ck_assert_int_eq(idp_url_allowed("http://127.8.9.10/j", why,
	    sizeof why), 1);
	ck_assert_int_eq(idp_url_allowed("http://[::1]/j", why,
	    sizeof why), 1);
	ck_assert_int_eq(idp_url_allowed("http://128.0.0.1/j", why,
	    sizeof why), 0);
	ck_assert_int_eq(idp_url_allowed("http://[::2]/j", why,
	    sizeof why), 0);
	ck_assert_int_eq(idp_url_allowed("file:///etc/passwd", why,
	    sizeof why), 0);
	ck_assert_int_eq(idp_url_allowed("gopher://a.example/1", why,
	    sizeof why), 0);
	ck_assert_str_eq(why, "not an http(s) URL");
	big = malloc(IDP_URL_MAX + 32);
	memset(big, 'a', IDP_URL_MAX + 31);
	memcpy(big, "https://a/", 10);
	big[IDP_URL_MAX + 31] = '\0';
	ck_assert_int_eq(idp_url_allowed(big, why, sizeof why), 0);
	ck_assert_str_eq(why, "the URL is over 2048 bytes");
	free(big);
}
END_TEST

static long
age(const char *v)
{
	return (idp_max_age(v, strlen(v)));
}

START_TEST(test_max_age)
{
	ck_assert_int_eq(age("max-age=600"), 600);
	ck_assert_int_eq(age("public, max-age=3600, must-revalidate"), 3600);
	ck_assert_int_eq(age("  Max-Age=42 "), 42);
	ck_assert_int_eq(age("max-age=\"120\""), 120);
	ck_assert_int_eq(age("max-age=0"), 0);
	ck_assert_int_eq(age(",,max-age=7,"), 7);
	/* The first counts. */
	ck_assert_int_eq(age("max-age=60, max-age=9000"), 60);
	/* Past a day: a day and one, whatever the digits. */
	ck_assert_int_eq(age("max-age=86401"), 86401);
	ck_assert_int_eq(age("max-age=99999999999999999999999999"), 86401);
	/* None. */
	ck_assert_int_eq(age(""), -1);
	ck_assert_int_eq(age("public"), -1);
	ck_assert_int_eq(age("s-maxage=100"), -1);
	ck_assert_int_eq(age("xmax-age=100"), -1);
	ck_assert_int_eq(age("max-age"), -1);
	ck_assert_int_eq(age("max-age="), -1);
	ck_assert_int_eq(age("max-age=-5"), -1);
	ck_assert_int_eq(age("max-age=5s"), -1);
	ck_assert_int_eq(age("max-age=5 6"), -1);
	ck_assert_int_eq(age("max-age=\"12"), -1);
	ck_assert_int_eq(age("max-age=\"1\\2\""), -1);
	ck_assert_int_eq(age("max-age=5; x"), -1);
	ck_assert_int_eq(age("=5"), -1);
	/* Not to be kept: the configured refresh applies. */
	ck_assert_int_eq(age("no-store, max-age=600"), -1);
	ck_assert_int_eq(age("max-age=600, No-Cache"), -1);
	/* Not NUL-terminated: only len bytes are read. */
	ck_assert_int_eq(idp_max_age("max-age=123456", 11), 123);
}
END_TEST

START_TEST(test_refresh_after)
{
	ck_assert_uint_eq(idp_refresh_after(-1, 0), IDP_REFRESH_DEFAULT);
	ck_assert_uint_eq(idp_refresh_after(-1, 900), 900);
	ck_assert_uint_eq(idp_refresh_after(0, 900), IDP_MAX_AGE_MIN);
	ck_assert_uint_eq(idp_refresh_after(10, 900), 300);
	ck_assert_uint_eq(idp_refresh_after(600, 900), 600);
	ck_assert_uint_eq(idp_refresh_after(86400, 900), 86400);
	ck_assert_uint_eq(idp_refresh_after(86401, 900), 86400);
}
END_TEST

/* Check a metadata document given as JSON text; 0 or -1, why. */
static int
meta(const char *text, const char *issuer, const char **jwks,
    const char **intro, char *why)
{
	json_t	*md;
	int	 r;

	md = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
	ck_assert_ptr_nonnull(md);
	r = idp_metadata_check(md, issuer, jwks, intro, why, IDP_WHY_MAX);
	/* What was found points into md: copy it out before it goes. */
	if (r == 0) {
		static char	j[256], i[256];

		snprintf(j, sizeof j, "%s", *jwks != NULL ? *jwks : "(null)");
		snprintf(i, sizeof i, "%s", *intro != NULL ? *intro : "(null)");
		*jwks = j;
		*intro = i;
	}
	json_decref(md);
	return (r);
}

START_TEST(test_metadata)
{
	const char	*j, *i;
	char		 why[IDP_WHY_MAX];

	ck_assert_int_eq(meta("{\"issuer\": \"https://kc/realms/x\", "
	    "\"jwks_uri\": \"https://kc/realms/x/certs\", "
	    "\"introspection_endpoint\": \"https://kc/realms/x/intro\"}",
	    "https://kc/realms/x", &j, &i, why), 0);
	ck_assert_str_eq(j, "https://kc/realms/x/certs");
	ck_assert_str_eq(i, "https://kc/realms/x/intro");
	/* Neither is required here (the configuration may give jwks_uri). */
	ck_assert_int_eq(meta("{\"issuer\": \"https://a\"}", "https://a", &j,
	    &i, why), 0);
	ck_assert_str_eq(j, "(null)");
	ck_assert_str_eq(i, "(null)");
}
END_TEST

START_TEST(test_metadata_refused)
{
	const char	*j, *i;
	char		 why[IDP_WHY_MAX];

	/* The issuer byte for byte: no trailing '/', no case folding. */
	ck_assert_int_eq(meta("{\"issuer\": \"https://a/\"}", "https://a", &j,
	    &i, why), -1);
	ck_assert_str_eq(why, "the metadata names issuer https://a/, not the "
	    "configured one");
	ck_assert_int_eq(meta("{\"issuer\": \"https://A\"}", "https://a", &j,
	    &i, why), -1);
	/* What it names is shown without quotes, backslashes, controls. */
	ck_assert_int_eq(meta("{\"issuer\": \"x\\\"\\\\\\n\"}", "https://a",
	    &j, &i, why), -1);
	ck_assert_str_eq(why, "the metadata names issuer x???, not the "
	    "configured one");
	/* A NUL cannot hide the rest. */
	ck_assert_int_eq(meta("{\"issuer\": \"https://a\\u0000x\"}",
	    "https://a", &j, &i, why), -1);
	ck_assert_int_eq(meta("{\"issuer\": 5}", "https://a", &j, &i, why),
	    -1);
	ck_assert_str_eq(why, "the metadata has no issuer");
	ck_assert_int_eq(meta("[1]", "https://a", &j, &i, why), -1);
	ck_assert_str_eq(why, "the metadata is not a JSON object");
	ck_assert_int_eq(meta("{\"issuer\": \"https://a\", \"jwks_uri\": "
	    "\"http://evil.example/keys\"}", "https://a", &j, &i, why), -1);
	ck_assert_str_eq(why, "the metadata's jwks_uri: http:// but not to a "
	    "loopback address (https is required)");
	ck_assert_int_eq(meta("{\"issuer\": \"https://a\", "
	    "\"introspection_endpoint\": [\"https://a/i\"]}", "https://a", &j,
	    &i, why), -1);
	ck_assert_str_eq(why, "the metadata's introspection_endpoint is not a "
	    "string");
}
END_TEST

static Suite *
idp_suite(void)
{
	Suite	*s = suite_create("idp");
	TCase	*tc = tcase_create("meta");

	tcase_add_test(tc, test_discovery_no_path);
	tcase_add_test(tc, test_discovery_path);
	tcase_add_test(tc, test_discovery_refused);
	tcase_add_test(tc, test_url_allowed);
	tcase_add_test(tc, test_max_age);
	tcase_add_test(tc, test_refresh_after);
	tcase_add_test(tc, test_metadata);
	tcase_add_test(tc, test_metadata_refused);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr = srunner_create(idp_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
