/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for worker/oauthc*.c, what the gateway decides as an OAuth
 * client of its upstreams without I/O: the 401's WWW-Authenticate, where
 * protected resource metadata is looked for and whether it is the
 * upstream's, an authorization server's metadata (a token endpoint on
 * another host refused), the token endpoint's authentication, token
 * answers, PKCE (RFC 7636's own example), the authorization URL and the
 * response's state and iss (RFC 9207).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "oauthc.h"

/* Parse a challenge; its fields as "rc|error|scope|resource_metadata". */
static const char *
chal(const char *v)
{
	static char		out[4096];
	struct oauthc_challenge	c;
	int			rc;

	rc = oauthc_challenge_parse(v, strlen(v), &c);
	snprintf(out, sizeof out, "%d|%s|%s|%s", rc,
	    c.error != NULL ? c.error : "-", c.scope != NULL ? c.scope : "-",
	    c.resource_metadata != NULL ? c.resource_metadata : "-");
	oauthc_challenge_clear(&c);
	return (out);
}

START_TEST(test_challenge)
{
	/* As the TypeScript SDK's requireBearerAuth writes it. */
	ck_assert_str_eq(chal("Bearer error=\"invalid_token\", "
	    "error_description=\"Missing Authorization header\", "
	    "resource_metadata=\"http://127.0.0.1:4000/.well-known/"
	    "oauth-protected-resource/mcp\""),
	    "1|invalid_token|-|http://127.0.0.1:4000/.well-known/"
	    "oauth-protected-resource/mcp");
	/* The specification's example, over two lines joined. */
	ck_assert_str_eq(chal("Bearer resource_metadata=\"https://mcp."
	    "example.com/.well-known/oauth-protected-resource\",\t"
	    "scope=\"files:read\""),
	    "1|-|files:read|https://mcp.example.com/.well-known/"
	    "oauth-protected-resource");
	/* Names and scheme without case; tokens as values. */
	ck_assert_str_eq(chal("bEARER Scope=a ,ERROR=insufficient_scope"),
	    "1|insufficient_scope|a|-");
	/* Other challenges before and after, token68 among them. */
	ck_assert_str_eq(chal("Basic realm=\"x\", Negotiate YII+/a==, "
	    "Bearer scope=\"a b\", DPoP algs=\"ES256\""), "1|-|a b|-");
	ck_assert_str_eq(chal("Negotiate, Bearer"), "1|-|-|-");
	ck_assert_str_eq(chal("Bearer, Basic realm=x"), "1|-|-|-");
	/* Only the first Bearer counts. */
	ck_assert_str_eq(chal("Bearer scope=a, Bearer scope=b"), "1|-|a|-");
	/* Quoted pairs. */
	ck_assert_str_eq(chal("Bearer scope=\"a\\\"b\\\\c\""),
	    "1|-|a\"b\\c|-");
	/* No Bearer. */
	ck_assert_str_eq(chal("Basic realm=\"x\""), "0|-|-|-");
	ck_assert_str_eq(chal(""), "0|-|-|-");
	ck_assert_str_eq(chal("Bearerx scope=a"), "0|-|-|-");
}
END_TEST

START_TEST(test_challenge_malformed)
{
	char	*big;

	ck_assert_str_eq(chal("Bearer scope=\"a"), "-1|-|-|-");
	/* "Bearer scope=" alone is a token68; after a parameter, no value. */
	ck_assert_str_eq(chal("Bearer scope="), "1|-|-|-");
	ck_assert_str_eq(chal("Bearer error=x, scope="), "-1|-|-|-");
	ck_assert_str_eq(chal("Bearer error=x, DP="), "-1|-|-|-");
	ck_assert_str_eq(chal("Bearer scope a"), "-1|-|-|-");
	ck_assert_str_eq(chal("Bearer scope=a scope=b"), "-1|-|-|-");
	ck_assert_str_eq(chal("Bearer scope=a, scope=b"), "-1|-|-|-");
	ck_assert_str_eq(chal("Bearer scope=\"a\rb\""), "-1|-|-|-");
	ck_assert_str_eq(chal("=x"), "-1|-|-|-");
	ck_assert_str_eq(chal("Bearer\"x\""), "-1|-|-|-");
	/* A malformed challenge after a good Bearer fails it all. */
	ck_assert_str_eq(chal("Bearer scope=a, Basic realm=\"x"),
	    "-1|-|-|-");
	/* A value past OAUTHC_PARAM_MAX, and a field past the limit. */
	big = malloc(OAUTHC_CHALLENGE_MAX + 64);
	strcpy(big, "Bearer resource_metadata=\"");
	memset(big + strlen(big), 'a', OAUTHC_PARAM_MAX + 1);
	big[26 + OAUTHC_PARAM_MAX + 1] = '\0';
	strcat(big, "\"");
	ck_assert_str_eq(chal(big), "-1|-|-|-");
	memset(big, ' ', OAUTHC_CHALLENGE_MAX + 1);
	memcpy(big, "Bearer", 6);
	big[OAUTHC_CHALLENGE_MAX + 1] = '\0';
	ck_assert_str_eq(chal(big), "-1|-|-|-");
	free(big);
}
END_TEST

/* The PRM URLs of an upstream as "a b"; or "-why". */
static const char *
prm(const char *url)
{
	static char	 out[4096];
	char		*urls[OAUTHC_PRM_URLS], why[OAUTHC_WHY_MAX];
	int		 i, n;

	if ((n = oauthc_prm_urls(url, urls, why, sizeof why)) < 0) {
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

START_TEST(test_prm_urls)
{
	/* The specification's order: path inserted, then the root. */
	ck_assert_str_eq(prm("https://example.com/public/mcp"),
	    "https://example.com/.well-known/oauth-protected-resource/public/"
	    "mcp https://example.com/.well-known/oauth-protected-resource");
	ck_assert_str_eq(prm("http://127.0.0.1:8080/mcp/"),
	    "http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp "
	    "http://127.0.0.1:8080/.well-known/oauth-protected-resource");
	ck_assert_str_eq(prm("https://example.com"),
	    "https://example.com/.well-known/oauth-protected-resource");
	ck_assert_str_eq(prm("https://example.com/"),
	    "https://example.com/.well-known/oauth-protected-resource");
	/* RFC 9728 section 3.1: the query follows the path. */
	ck_assert_str_eq(prm("https://example.com/mcp?t=1"),
	    "https://example.com/.well-known/oauth-protected-resource/mcp?t=1 "
	    "https://example.com/.well-known/oauth-protected-resource");
	/* A WebSocket's, on its origin over HTTP. */
	ck_assert_str_eq(prm("wss://example.com/ws"),
	    "https://example.com/.well-known/oauth-protected-resource/ws "
	    "https://example.com/.well-known/oauth-protected-resource");
	ck_assert_str_eq(prm("ws://127.0.0.1:9/ws"),
	    "http://127.0.0.1:9/.well-known/oauth-protected-resource/ws "
	    "http://127.0.0.1:9/.well-known/oauth-protected-resource");
	ck_assert_str_eq(prm("ws://example.com/ws"),
	    "-http:// but not to a loopback address (https is required)");
	/* http off loopback is refused. */
	ck_assert_str_eq(prm("http://example.com/mcp"),
	    "-http:// but not to a loopback address (https is required)");
}
END_TEST

START_TEST(test_resource_match)
{
	const char	*u = "https://mcp.example.com/mcp";

	ck_assert(oauthc_resource_match("https://mcp.example.com/mcp", u));
	ck_assert(oauthc_resource_match("https://MCP.Example.com/mcp/", u));
	ck_assert(oauthc_resource_match("HTTPS://mcp.example.com:443/mcp", u));
	ck_assert(oauthc_resource_match("https://h", "https://h/"));
	ck_assert(!oauthc_resource_match("https://mcp.example.com/", u));
	ck_assert(!oauthc_resource_match("https://mcp.example.com/MCP", u));
	ck_assert(!oauthc_resource_match("https://mcp.example.com:8443/mcp",
	    u));
	ck_assert(!oauthc_resource_match("http://mcp.example.com/mcp", u));
	ck_assert(!oauthc_resource_match("https://evil.example.com/mcp", u));
	ck_assert(!oauthc_resource_match("https://mcp.example.com/mcp#x", u));
	ck_assert(!oauthc_resource_match("https://mcp.example.com/mcp?a", u));
	ck_assert(!oauthc_resource_match("not a url", u));
	/* A WebSocket upstream's: its scheme, its default port as http's. */
	ck_assert(oauthc_resource_match("wss://m.example:443/ws",
	    "wss://M.example/ws"));
	ck_assert(oauthc_resource_match("ws://127.0.0.1:80/ws/",
	    "ws://127.0.0.1/ws"));
	ck_assert(!oauthc_resource_match("https://m.example/ws",
	    "wss://m.example/ws"));
	ck_assert(!oauthc_resource_match("ws://m.example/ws",
	    "wss://m.example/ws"));
	ck_assert(oauthc_same_origin("https://a.example/x",
	    "https://A.example:443/y"));
	ck_assert(!oauthc_same_origin("https://a.example/x",
	    "https://a.example:444/x"));
	ck_assert(!oauthc_same_origin("https://a.example/", "http://a.example/"));
}
END_TEST

/* Check PRM text against an upstream URL (and a configured issuer, or
 * NULL): "as|scopes" or "-why". */
static const char *
prm_want(const char *text, const char *url, const char *want)
{
	static char	 out[1024];
	json_t		*md = json_loads(text, 0, NULL);
	const char	*as;
	char		*scopes, why[OAUTHC_WHY_MAX];

	ck_assert_ptr_nonnull(md);
	if (oauthc_prm_check(md, url, want, &as, &scopes, why, sizeof why) ==
	    -1)
		snprintf(out, sizeof out, "-%s", why);
	else
		snprintf(out, sizeof out, "%s|%s", as, scopes != NULL ?
		    scopes : "(none)");
	free(scopes);
	json_decref(md);
	return (out);
}

static const char *
prm_check(const char *text, const char *url)
{
	return (prm_want(text, url, NULL));
}

START_TEST(test_prm_check)
{
	const char	*u = "http://127.0.0.1:4000/mcp";

	ck_assert_str_eq(prm_check("{\"resource\":\"http://127.0.0.1:4000/"
	    "mcp\",\"authorization_servers\":[\"http://127.0.0.1:5000/\","
	    "\"https://other\"],\"scopes_supported\":[\"mcp:tools\","
	    "\"offline_access\",7]}", u),
	    "http://127.0.0.1:5000/|mcp:tools offline_access");
	ck_assert_str_eq(prm_check("{\"resource\":\"http://127.0.0.1:4000/"
	    "mcp\",\"authorization_servers\":[\"https://as.example\"]}", u),
	    "https://as.example|(none)");
	/* Another resource's metadata: refused, named. */
	ck_assert_str_eq(prm_check("{\"resource\":\"http://127.0.0.1:4000/"
	    "other\",\"authorization_servers\":[\"https://as.example\"]}", u),
	    "-the resource metadata is for http://127.0.0.1:4000/other, not "
	    "this upstream");
	ck_assert_str_eq(prm_check("{\"authorization_servers\":"
	    "[\"https://as.example\"]}", u),
	    "-the resource metadata has no resource");
	ck_assert_str_eq(prm_check("{\"resource\":\"http://127.0.0.1:4000/"
	    "mcp\",\"authorization_servers\":[]}", u),
	    "-the resource metadata names no authorization server");
	ck_assert_str_eq(prm_check("{\"resource\":\"http://127.0.0.1:4000/"
	    "mcp\",\"authorization_servers\":[\"http://as.example\"]}", u),
	    "-its authorization server: http:// but not to a loopback "
	    "address (https is required)");
	ck_assert_str_eq(prm_check("[]", u),
	    "-the resource metadata is not an object");
	/* A configured issuer: taken wherever it is listed, else refused
	 * (the client's secret goes to it alone). */
	ck_assert_str_eq(prm_want("{\"resource\":\"http://127.0.0.1:4000/"
	    "mcp\",\"authorization_servers\":[\"https://evil.example\","
	    "\"https://as.example\"]}", u, "https://as.example"),
	    "https://as.example|(none)");
	ck_assert_str_eq(prm_want("{\"resource\":\"http://127.0.0.1:4000/"
	    "mcp\",\"authorization_servers\":[\"https://evil.example\"]}", u,
	    "https://as.example"),
	    "-the resource metadata names https://evil.example, not the "
	    "configured issuer");
}
END_TEST

#define ISS	"https://as.example.com/tenant"

/* Check AS metadata text: a summary or "-why". */
static const char *
as_check(const char *text)
{
	static char		out[1024];
	json_t			*md = json_loads(text, 0, NULL);
	struct oauthc_as	as;
	char			why[OAUTHC_WHY_MAX];

	ck_assert_ptr_nonnull(md);
	if (oauthc_as_check(md, ISS, &as, why, sizeof why) == -1)
		snprintf(out, sizeof out, "-%s", why);
	else
		snprintf(out, sizeof out, "%s|%s|%s|%x|%d|%d",
		    as.token_endpoint, as.authorization_endpoint != NULL ?
		    as.authorization_endpoint : "-",
		    as.registration_endpoint != NULL ?
		    as.registration_endpoint : "-", as.auth_methods, as.s256,
		    as.iss_param);
	json_decref(md);
	return (out);
}

START_TEST(test_as_check)
{
	ck_assert_str_eq(as_check("{\"issuer\":\"" ISS "\","
	    "\"token_endpoint\":\"https://as.example.com/tenant/token\","
	    "\"authorization_endpoint\":\"https://login.example.net/auth\","
	    "\"registration_endpoint\":\"https://as.example.com/reg\","
	    "\"token_endpoint_auth_methods_supported\":[\"client_secret_post\","
	    "\"none\",\"private_key_jwt\"],"
	    "\"code_challenge_methods_supported\":[\"plain\",\"S256\"],"
	    "\"authorization_response_iss_parameter_supported\":true}"),
	    "https://as.example.com/tenant/token|https://login.example.net/"
	    "auth|https://as.example.com/reg|6|1|1");
	ck_assert_str_eq(as_check("{\"issuer\":\"" ISS "\","
	    "\"token_endpoint\":\"https://as.example.com:443/t\"}"),
	    "https://as.example.com:443/t|-|-|0|0|0");
	/* The issuer byte for byte. */
	ck_assert_str_eq(as_check("{\"issuer\":\"" ISS "/\","
	    "\"token_endpoint\":\"https://as.example.com/t\"}"),
	    "-the metadata's issuer is 'https://as.example.com/tenant/', not "
	    "the authorization server named");
	ck_assert_str_eq(as_check("{\"token_endpoint\":\"https://as.example."
	    "com/t\"}"),
	    "-the metadata's issuer is missing, not the authorization server "
	    "named");
	/* A token endpoint, registration or revocation on another host. */
	ck_assert_str_eq(as_check("{\"issuer\":\"" ISS "\","
	    "\"token_endpoint\":\"https://evil.example.org/token\"}"),
	    "-token_endpoint https://evil.example.org/token is not on the "
	    "issuer's host");
	ck_assert_str_eq(as_check("{\"issuer\":\"" ISS "\","
	    "\"token_endpoint\":\"https://as.example.com:8443/token\"}"),
	    "-token_endpoint https://as.example.com:8443/token is not on the "
	    "issuer's host");
	ck_assert_str_eq(as_check("{\"issuer\":\"" ISS "\","
	    "\"token_endpoint\":\"https://as.example.com/t\","
	    "\"registration_endpoint\":\"https://evil.example.org/r\"}"),
	    "-registration_endpoint https://evil.example.org/r is not on the "
	    "issuer's host");
	ck_assert_str_eq(as_check("{\"issuer\":\"" ISS "\","
	    "\"token_endpoint\":\"https://as.example.com/t\","
	    "\"revocation_endpoint\":\"https://evil.example.org/r\"}"),
	    "-revocation_endpoint https://evil.example.org/r is not on the "
	    "issuer's host");
	/* Fetchable URLs only. */
	ck_assert_str_eq(as_check("{\"issuer\":\"" ISS "\","
	    "\"token_endpoint\":\"https://as.example.com/t\","
	    "\"authorization_endpoint\":\"http://login.example.net/a\"}"),
	    "-authorization_endpoint: http:// but not to a loopback address "
	    "(https is required)");
	ck_assert_str_eq(as_check("{\"issuer\":\"" ISS "\","
	    "\"token_endpoint\":7}"), "-token_endpoint is not a string");
	ck_assert_str_eq(as_check("{\"issuer\":\"" ISS "\"}"),
	    "-the metadata has no token_endpoint");
}
END_TEST

START_TEST(test_auth_method)
{
	struct oauthc_as	as;

	memset(&as, 0, sizeof as);
	ck_assert_uint_eq(oauthc_auth_method(&as, 0), OAUTHC_AUTH_NONE);
	ck_assert_uint_eq(oauthc_auth_method(&as, 1), OAUTHC_AUTH_BASIC);
	as.auth_methods = OAUTHC_AUTH_POST | OAUTHC_AUTH_BASIC;
	ck_assert_uint_eq(oauthc_auth_method(&as, 1), OAUTHC_AUTH_BASIC);
	as.auth_methods = OAUTHC_AUTH_POST | OAUTHC_AUTH_NONE;
	ck_assert_uint_eq(oauthc_auth_method(&as, 1), OAUTHC_AUTH_POST);
	as.auth_methods = OAUTHC_AUTH_NONE;
	ck_assert_uint_eq(oauthc_auth_method(&as, 1), 0);
}
END_TEST

/* Parse a token answer: "access|refresh|scope|expires" or "-why|error". */
static const char *
tok(const char *body)
{
	static char		out[1024];
	struct oauthc_token	t;
	char			why[OAUTHC_WHY_MAX];

	if (oauthc_token_parse(body, strlen(body), &t, why, sizeof why) == -1)
		snprintf(out, sizeof out, "-%s|%s", why, t.error);
	else
		snprintf(out, sizeof out, "%s|%s|%s|%lld", t.access_token,
		    t.refresh_token != NULL ? t.refresh_token : "-",
		    t.scope != NULL ? t.scope : "-", t.expires_in);
	oauthc_token_clear(&t);
	return (out);
}

START_TEST(test_token)
{
	char	*big;

	ck_assert_str_eq(tok("{\"access_token\":\"a.b.c\",\"token_type\":"
	    "\"bearer\",\"expires_in\":3600,\"refresh_token\":\"r1\","
	    "\"scope\":\"mcp:tools offline_access\"}"),
	    "a.b.c|r1|mcp:tools offline_access|3600");
	ck_assert_str_eq(tok("{\"access_token\":\"x\",\"token_type\":"
	    "\"Bearer\"}"), "x|-|-|-1");
	ck_assert_str_eq(tok("{\"access_token\":\"x\",\"token_type\":"
	    "\"Bearer\",\"expires_in\":99999999999}"), "x|-|-|316224000");
	/* Errors: the code kept, printable. */
	ck_assert_str_eq(tok("{\"error\":\"invalid_grant\","
	    "\"error_description\":\"grant request is invalid\"}"),
	    "-the token endpoint answered invalid_grant|invalid_grant");
	ck_assert_str_eq(tok("{\"error\":\"a\\\"b\\nc\"}"),
	    "-the token endpoint answered a?b?c|a?b?c");
	/* Refused. */
	ck_assert_str_eq(tok("{\"access_token\":\"x\",\"token_type\":"
	    "\"DPoP\"}"), "-the token is not of type Bearer|");
	ck_assert_str_eq(tok("{\"access_token\":\"x\\r\\nX-Evil: 1\","
	    "\"token_type\":\"Bearer\"}"),
	    "-the answer has no usable access_token|");
	ck_assert_str_eq(tok("{\"access_token\":\"\",\"token_type\":"
	    "\"Bearer\"}"), "-the answer has no usable access_token|");
	ck_assert_str_eq(tok("{\"access_token\":\"a b\",\"token_type\":"
	    "\"Bearer\"}"), "-the answer has no usable access_token|");
	ck_assert_str_eq(tok("{\"access_token\":\"x\",\"token_type\":"
	    "\"Bearer\",\"scope\":\"mcp\\u001b[2Jx\"}"),
	    "-the answer's scope is not usable|");
	ck_assert_str_eq(tok("{\"access_token\":\"x\",\"token_type\":"
	    "\"Bearer\",\"refresh_token\":\"r r\"}"),
	    "-the answer's refresh_token is not usable|");
	ck_assert_str_eq(tok("{\"access_token\":\"x\",\"token_type\":"
	    "\"Bearer\",\"refresh_token\":5}"),
	    "-the answer's refresh_token is not usable|");
	ck_assert_str_eq(tok("{\"access_token\":\"x\",\"token_type\":"
	    "\"Bearer\",\"expires_in\":-1}"),
	    "-expires_in is not a non-negative integer|");
	ck_assert_str_eq(tok("{\"access_token\":\"x\",\"token_type\":"
	    "\"Bearer\",\"expires_in\":\"60\"}"),
	    "-expires_in is not a non-negative integer|");
	ck_assert_str_eq(tok("{\"access_token\":\"x\",\"access_token\":\"y\","
	    "\"token_type\":\"Bearer\"}"),
	    "-the token answer is not a JSON object|");
	ck_assert_str_eq(tok("[1]"), "-the token answer is not a JSON object|");
	big = malloc(OAUTHC_DOC_MAX + 64);
	snprintf(big, OAUTHC_DOC_MAX + 64, "{\"access_token\":\"x\","
	    "\"token_type\":\"Bearer\",\"pad\":\"");
	memset(big + strlen(big), 'p', OAUTHC_DOC_MAX);
	strcpy(big + OAUTHC_DOC_MAX, "\"}");
	ck_assert_str_eq(tok(big), "-the token answer is over 65536 bytes|");
	free(big);
}
END_TEST

START_TEST(test_pkce)
{
	char	c[OAUTHC_B64_32], v[OAUTHC_B64_32], w[OAUTHC_B64_32];
	char	long_v[130];

	/* RFC 7636 appendix B. */
	ck_assert_int_eq(oauthc_pkce_challenge(
	    "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk", c), 0);
	ck_assert_str_eq(c, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
	/* 43 to 128 unreserved characters. */
	ck_assert_int_eq(oauthc_pkce_challenge("short", c), -1);
	ck_assert_int_eq(oauthc_pkce_challenge(
	    "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjX+", c), -1);
	memset(long_v, 'a', 129);
	long_v[129] = '\0';
	ck_assert_int_eq(oauthc_pkce_challenge(long_v, c), -1);
	long_v[128] = '\0';
	ck_assert_int_eq(oauthc_pkce_challenge(long_v, c), 0);
	/* Random values: 43 characters, different each time. */
	oauthc_random(v);
	oauthc_random(w);
	ck_assert_uint_eq(strlen(v), 43);
	ck_assert_str_ne(v, w);
	ck_assert_int_eq(oauthc_pkce_challenge(v, c), 0);
}
END_TEST

START_TEST(test_b64url)
{
	char	out[16];

	oauthc_b64url((const unsigned char *)"f", 1, out);
	ck_assert_str_eq(out, "Zg");
	oauthc_b64url((const unsigned char *)"fo", 2, out);
	ck_assert_str_eq(out, "Zm8");
	oauthc_b64url((const unsigned char *)"foo", 3, out);
	ck_assert_str_eq(out, "Zm9v");
	oauthc_b64url((const unsigned char *)"\xfb\xff", 2, out);
	ck_assert_str_eq(out, "-_8");
	oauthc_b64url((const unsigned char *)"", 0, out);
	ck_assert_str_eq(out, "");
}
END_TEST

START_TEST(test_authz_url)
{
	char	*u;

	u = oauthc_authz_url("https://as.example/auth?x=1", "c 1",
	    "http://127.0.0.1:8080/oauth/callback", "mcp:tools offline_access",
	    "st", "ch", "https://mcp.example/mcp");
	ck_assert_ptr_nonnull(u);
	ck_assert_str_eq(u, "https://as.example/auth?x=1&response_type=code"
	    "&client_id=c+1&redirect_uri=http%3a%2f%2f127.0.0.1%3a8080%2foauth"
	    "%2fcallback&scope=mcp%3atools+offline_access&state=st"
	    "&code_challenge=ch&code_challenge_method=S256"
	    "&resource=https%3a%2f%2fmcp.example%2fmcp");
	free(u);
	u = oauthc_authz_url("https://as.example/auth", "c", "r", NULL, "s",
	    "c", "https://m");
	ck_assert_ptr_null(strstr(u, "scope="));
	free(u);
}
END_TEST

/* Read an authorization response: "code" or "-why". */
static const char *
authz(const char *in, int iss_required)
{
	static char	 out[512];
	char		*code, why[OAUTHC_WHY_MAX];

	if (oauthc_authz_response(in, "S1", "https://as.example", iss_required,
	    &code, why, sizeof why) == -1) {
		ck_assert_ptr_null(code);
		snprintf(out, sizeof out, "-%s", why);
	} else {
		snprintf(out, sizeof out, "%s", code);
		free(code);
	}
	return (out);
}

START_TEST(test_authz_response)
{
	ck_assert_str_eq(authz("http://127.0.0.1:1/oauth/callback?code=a%2Bb"
	    "&state=S1&iss=https%3A%2F%2Fas.example", 1), "a+b");
	ck_assert_str_eq(authz("code=xyz&state=S1", 0), "xyz");
	ck_assert_str_eq(authz("?state=S1&code=xyz#frag", 0), "xyz");
	/* A bare code: taken unless the server identifies itself. */
	ck_assert_str_eq(authz("xyz-123", 0), "xyz-123");
	ck_assert_str_eq(authz("xyz-123", 1), "-the server identifies itself "
	    "in its response (RFC 9207): give the whole redirect URL, not the "
	    "code alone");
	/* state. */
	ck_assert_str_eq(authz("code=x&state=S2", 0),
	    "-the authorization response's state is wrong (not this login's)");
	ck_assert_str_eq(authz("code=x&state=S", 0),
	    "-the authorization response's state is wrong (not this login's)");
	ck_assert_str_eq(authz("code=x", 0),
	    "-the authorization response's state is missing (not this "
	    "login's)");
	/* iss: another server's always refused, missing when required. */
	ck_assert_str_eq(authz("code=x&state=S1&iss=https%3A%2F%2Fevil", 0),
	    "-the authorization response's iss is another server's (RFC 9207: "
	    "a mix-up)");
	ck_assert_str_eq(authz("code=x&state=S1", 1),
	    "-the authorization response's iss is missing (RFC 9207: a "
	    "mix-up)");
	/* Errors, repeats, malformed. */
	ck_assert_str_eq(authz("error=access_denied&state=S1", 0),
	    "-the authorization server answered access_denied");
	ck_assert_str_eq(authz("code=x&code=y&state=S1", 0),
	    "-the authorization response has a parameter twice or a "
	    "malformed one");
	ck_assert_str_eq(authz("code=%00&state=S1", 0),
	    "-the authorization response has a parameter twice or a "
	    "malformed one");
	ck_assert_str_eq(authz("state=S1", 0),
	    "-the authorization response has no code");
	ck_assert_str_eq(authz("code=a b&state=S1", 0),
	    "-the authorization response holds a space or a control "
	    "character");
	ck_assert_str_eq(authz("", 0), "-the authorization response is empty");
}
END_TEST

static Suite *
oauthc_suite(void)
{
	Suite	*s = suite_create("oauthc");
	TCase	*tc = tcase_create("core");

	tcase_add_test(tc, test_challenge);
	tcase_add_test(tc, test_challenge_malformed);
	tcase_add_test(tc, test_prm_urls);
	tcase_add_test(tc, test_resource_match);
	tcase_add_test(tc, test_prm_check);
	tcase_add_test(tc, test_as_check);
	tcase_add_test(tc, test_auth_method);
	tcase_add_test(tc, test_token);
	tcase_add_test(tc, test_pkce);
	tcase_add_test(tc, test_b64url);
	tcase_add_test(tc, test_authz_url);
	tcase_add_test(tc, test_authz_response);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr = srunner_create(oauthc_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
