/* SPDX-License-Identifier: ISC */
/*
 * The OAuth client's registration, scopes and record (worker/oauthc_reg.c),
 * and what oauthc_as_check and oauthc_resource_covers add for them.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <jansson.h>

#include "oauthc.h"

#define U	"https://mcp.example.com/mcp"

START_TEST(test_registration)
{
	struct oauthc_as	as;

	memset(&as, 0, sizeof as);
	ck_assert_int_eq(oauthc_registration(&as, NULL, NULL),
	    OAUTHC_REG_NONE);
	as.registration_endpoint = "https://as.example/register";
	ck_assert_int_eq(oauthc_registration(&as, NULL, NULL),
	    OAUTHC_REG_DCR);
	/* A metadata document only when the server supports them. */
	ck_assert_int_eq(oauthc_registration(&as, NULL,
	    "https://gw.example/cimd.json"), OAUTHC_REG_DCR);
	as.cimd = 1;
	ck_assert_int_eq(oauthc_registration(&as, NULL,
	    "https://gw.example/cimd.json"), OAUTHC_REG_CIMD);
	/* And only an https one. */
	ck_assert_int_eq(oauthc_registration(&as, NULL,
	    "http://gw.example/cimd.json"), OAUTHC_REG_DCR);
	/* A configured client first. */
	ck_assert_int_eq(oauthc_registration(&as, "mine",
	    "https://gw.example/cimd.json"), OAUTHC_REG_CONFIG);
	ck_assert_int_eq(oauthc_registration(&as, "", NULL), OAUTHC_REG_DCR);
}
END_TEST

START_TEST(test_dcr_method)
{
	struct oauthc_as	as;

	memset(&as, 0, sizeof as);
	ck_assert_uint_eq(oauthc_dcr_method(&as), OAUTHC_AUTH_BASIC);
	as.auth_methods = OAUTHC_AUTH_NONE;
	ck_assert_uint_eq(oauthc_dcr_method(&as), OAUTHC_AUTH_NONE);
	as.auth_methods = OAUTHC_AUTH_NONE | OAUTHC_AUTH_POST;
	ck_assert_uint_eq(oauthc_dcr_method(&as), OAUTHC_AUTH_POST);
	as.auth_methods |= OAUTHC_AUTH_BASIC;
	ck_assert_uint_eq(oauthc_dcr_method(&as), OAUTHC_AUTH_BASIC);
}
END_TEST

START_TEST(test_dcr_request)
{
	json_t	*o;
	char	*s;

	o = oauthc_dcr_request("mcp-supervisor",
	    "http://127.0.0.1:8931/oauth/callback", OAUTHC_AUTH_NONE);
	s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	ck_assert_str_eq(s, "{\"application_type\":\"native\","
	    "\"client_name\":\"mcp-supervisor\",\"grant_types\":"
	    "[\"authorization_code\",\"refresh_token\"],\"redirect_uris\":"
	    "[\"http://127.0.0.1:8931/oauth/callback\"],\"response_types\":"
	    "[\"code\"],\"token_endpoint_auth_method\":\"none\"}");
	free(s);
	json_decref(o);
	o = oauthc_dcr_request("gw", "https://gw.example/oauth/callback",
	    OAUTHC_AUTH_POST);
	ck_assert_str_eq(json_string_value(json_object_get(o,
	    "application_type")), "web");
	ck_assert_str_eq(json_string_value(json_object_get(o,
	    "token_endpoint_auth_method")), "client_secret_post");
	json_decref(o);
	o = oauthc_dcr_request("gw", "http://127.0.0.1.evil.example/cb",
	    OAUTHC_AUTH_BASIC);
	ck_assert_str_eq(json_string_value(json_object_get(o,
	    "application_type")), "web");
	ck_assert_str_eq(json_string_value(json_object_get(o,
	    "token_endpoint_auth_method")), "client_secret_basic");
	json_decref(o);
}
END_TEST

/* Parse a registration's answer: "+method id secret" or "-why". */
static char *
dcr(const char *body, unsigned int asked)
{
	static char		out[512];
	struct oauthc_reg	r;
	char			why[OAUTHC_WHY_MAX];

	if (oauthc_dcr_parse(body, strlen(body), asked, &r, why,
	    sizeof why) == -1) {
		ck_assert_ptr_null(r.client_id);
		snprintf(out, sizeof out, "-%s", why);
		return (out);
	}
	snprintf(out, sizeof out, "+%u %s %s", r.method, r.client_id,
	    r.client_secret != NULL ? r.client_secret : "(none)");
	if (r.secret_expires != 0)
		snprintf(out + strlen(out), sizeof out - strlen(out),
		    " until %lld", r.secret_expires);
	oauthc_reg_clear(&r);
	return (out);
}

START_TEST(test_dcr_parse)
{
	char	*big;
	size_t	 n = OAUTHC_DOC_MAX + 1;

	ck_assert_str_eq(dcr("{\"client_id\":\"c1\",\"client_secret\":\"s\","
	    "\"token_endpoint_auth_method\":\"client_secret_post\"}",
	    OAUTHC_AUTH_BASIC), "+2 c1 s");
	ck_assert_str_eq(dcr("{\"client_id\":\"c1\",\"client_secret\":\"s\"}",
	    OAUTHC_AUTH_BASIC), "+1 c1 s");
	/* When the secret expires (RFC 7591): 0 or not a time, never. */
	ck_assert_str_eq(dcr("{\"client_id\":\"c1\",\"client_secret\":\"s\","
	    "\"client_secret_expires_at\":1900000000}", OAUTHC_AUTH_BASIC),
	    "+1 c1 s until 1900000000");
	ck_assert_str_eq(dcr("{\"client_id\":\"c1\",\"client_secret\":\"s\","
	    "\"client_secret_expires_at\":0}", OAUTHC_AUTH_BASIC), "+1 c1 s");
	ck_assert_str_eq(dcr("{\"client_id\":\"c1\",\"client_secret\":\"s\","
	    "\"client_secret_expires_at\":\"soon\"}", OAUTHC_AUTH_BASIC),
	    "+1 c1 s");
	/* A public client has no secret to expire. */
	ck_assert_str_eq(dcr("{\"client_id\":\"c1\","
	    "\"client_secret_expires_at\":1900000000}", OAUTHC_AUTH_NONE),
	    "+4 c1 (none)");
	/* No secret, no method said: a public client. */
	ck_assert_str_eq(dcr("{\"client_id\":\"c1\"}", OAUTHC_AUTH_BASIC),
	    "+4 c1 (none)");
	/* none: a secret given is not kept. */
	ck_assert_str_eq(dcr("{\"client_id\":\"c1\",\"client_secret\":\"s\","
	    "\"token_endpoint_auth_method\":\"none\"}", OAUTHC_AUTH_BASIC),
	    "+4 c1 (none)");
	ck_assert_str_eq(dcr("{\"client_id\":\"c1\","
	    "\"token_endpoint_auth_method\":\"client_secret_basic\"}",
	    OAUTHC_AUTH_NONE), "-the registration's answer has no "
	    "client_secret for client_secret_basic");
	ck_assert_str_eq(dcr("{\"client_id\":\"c1\","
	    "\"token_endpoint_auth_method\":\"private_key_jwt\"}",
	    OAUTHC_AUTH_NONE), "-the registration's "
	    "token_endpoint_auth_method is not one we have");
	ck_assert_str_eq(dcr("{\"client_secret\":\"s\"}", OAUTHC_AUTH_NONE),
	    "-the registration's answer has no client_id");
	ck_assert_str_eq(dcr("{\"client_id\":\"c 1\"}", OAUTHC_AUTH_NONE),
	    "-the registration's answer has a client_id or client_secret "
	    "that is not a printable string");
	ck_assert_str_eq(dcr("{\"client_id\":7}", OAUTHC_AUTH_NONE),
	    "-the registration's answer has a client_id or client_secret "
	    "that is not a printable string");
	ck_assert_str_eq(dcr("{\"client_id\":\"a\",\"client_id\":\"b\"}",
	    OAUTHC_AUTH_NONE), "-the registration's answer is not a JSON "
	    "object");
	ck_assert_str_eq(dcr("[]", OAUTHC_AUTH_NONE), "-the registration's "
	    "answer is not a JSON object");
	big = malloc(n + 1);
	memset(big, ' ', n);
	big[n] = '\0';
	big[0] = '{';
	big[n - 1] = '}';
	ck_assert_str_eq(dcr(big, OAUTHC_AUTH_NONE), "-the registration's "
	    "answer is over 65536 bytes");
	free(big);
}
END_TEST

START_TEST(test_scopes)
{
	char	*s, *big;
	size_t	 n = OAUTHC_SCOPE_MAX;

	ck_assert(oauthc_scope_has("a b  c", "b"));
	ck_assert(oauthc_scope_has("a b c", "c"));
	ck_assert(!oauthc_scope_has("ab c", "a"));
	ck_assert(!oauthc_scope_has(NULL, "a"));
	ck_assert(!oauthc_scope_has("a", ""));
	s = oauthc_scope_union("mcp:basic", "mcp:write mcp:basic");
	ck_assert_str_eq(s, "mcp:basic mcp:write");
	free(s);
	s = oauthc_scope_union(NULL, " x  x y ");
	ck_assert_str_eq(s, "x y");
	free(s);
	ck_assert_ptr_null(oauthc_scope_union(NULL, NULL));
	ck_assert_ptr_null(oauthc_scope_union(" ", ""));
	big = malloc(n + 1);
	memset(big, 'a', n);
	big[n] = '\0';
	s = oauthc_scope_union(big, big);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(strlen(s), n);
	free(s);
	ck_assert_ptr_null(oauthc_scope_union(big, "b"));
	free(big);
	s = oauthc_scope_login("mcp:basic", 1);
	ck_assert_str_eq(s, "mcp:basic offline_access");
	free(s);
	s = oauthc_scope_login("offline_access mcp:basic", 1);
	ck_assert_str_eq(s, "offline_access mcp:basic");
	free(s);
	s = oauthc_scope_login("mcp:basic", 0);
	ck_assert_str_eq(s, "mcp:basic");
	free(s);
	s = oauthc_scope_login(NULL, 1);
	ck_assert_str_eq(s, "offline_access");
	free(s);
	ck_assert_ptr_null(oauthc_scope_login(NULL, 0));
}
END_TEST

/* Read a record given as JSON text: "+" or "-why". */
static char *
rec(const char *text, const char *client_id)
{
	static char		out[512];
	struct oauthc_record	r;
	json_t			*o = json_loads(text, 0, NULL);
	char			why[OAUTHC_WHY_MAX];

	ck_assert_ptr_nonnull(o);
	if (oauthc_record_read(o, U, client_id, &r, why, sizeof why) == -1)
		snprintf(out, sizeof out, "-%s", why);
	else
		snprintf(out, sizeof out, "+");
	json_decref(o);
	return (out);
}

START_TEST(test_record)
{
	struct oauthc_record	r, r2;
	json_t			*o, *back;
	char			why[OAUTHC_WHY_MAX];

	ck_assert_str_eq(rec("{\"v\":1,\"resource\":\"" U "\",\"issuer\":"
	    "\"https://as\",\"client_id\":\"c\",\"registered\":\"dcr\"}",
	    NULL), "+");
	ck_assert_str_eq(rec("{\"v\":2,\"resource\":\"" U "\",\"issuer\":"
	    "\"https://as\",\"client_id\":\"c\",\"registered\":\"dcr\"}",
	    NULL), "-not a record of version 1");
	ck_assert_str_eq(rec("{\"v\":1,\"resource\":\"" U "/\",\"issuer\":"
	    "\"https://as\",\"client_id\":\"c\",\"registered\":\"dcr\"}",
	    NULL), "-the record is for another resource");
	ck_assert_str_eq(rec("{\"v\":1,\"resource\":\"" U "\",\"issuer\":"
	    "\"https://as\",\"client_id\":\"c\",\"registered\":\"config\"}",
	    "other"), "-the record's client_id is not the one configured");
	ck_assert_str_eq(rec("{\"v\":1,\"resource\":\"" U "\",\"issuer\":"
	    "\"https://as\",\"client_id\":\"c\",\"registered\":\"config\"}",
	    "c"), "+");
	ck_assert_str_eq(rec("{\"v\":1,\"resource\":\"" U "\",\"issuer\":"
	    "\"https://as\",\"client_id\":\"c\",\"registered\":\"dcr\"}",
	    "c"), "-a client_id is configured now");
	ck_assert_str_eq(rec("{\"v\":1,\"resource\":\"" U "\",\"issuer\":"
	    "\"https://as\",\"client_id\":\"c\",\"registered\":\"other\"}",
	    NULL), "-the record is malformed");
	ck_assert_str_eq(rec("{\"v\":1,\"resource\":\"" U "\",\"issuer\":"
	    "\"https://as\",\"client_id\":\"c\",\"registered\":\"dcr\","
	    "\"access_token\":\"a\\nb\"}", NULL), "-the record is malformed");
	ck_assert_str_eq(rec("{\"v\":1,\"resource\":\"" U "\",\"issuer\":"
	    "\"https://as\",\"client_id\":\"c\",\"registered\":\"dcr\","
	    "\"expires_at\":-1}", NULL), "-the record is malformed");
	ck_assert_str_eq(rec("{\"v\":1,\"resource\":\"" U "\","
	    "\"client_id\":\"c\",\"registered\":\"dcr\"}", NULL),
	    "-the record is malformed");

	/* What is written is read back the same. */
	memset(&r, 0, sizeof r);
	r.resource = U;
	r.issuer = "https://as.example";
	r.client_id = "c1";
	r.client_secret = "s1";
	r.registered = OAUTHC_REG_DCR;
	r.access_token = "at";
	r.refresh_token = "rt";
	r.expires_at = 1800000000;
	r.scope = "mcp:basic offline_access";
	r.obtained = 1700000000;
	r.secret_expires = 1900000000;
	o = oauthc_record_json(&r);
	back = json_deep_copy(o);
	ck_assert_int_eq(oauthc_record_read(back, U, NULL, &r2, why,
	    sizeof why), 0);
	ck_assert_str_eq(r2.issuer, r.issuer);
	ck_assert_str_eq(r2.client_id, r.client_id);
	ck_assert_str_eq(r2.client_secret, r.client_secret);
	ck_assert_int_eq(r2.registered, OAUTHC_REG_DCR);
	ck_assert_str_eq(r2.access_token, "at");
	ck_assert_str_eq(r2.refresh_token, "rt");
	ck_assert_int_eq(r2.expires_at, 1800000000);
	ck_assert_str_eq(r2.scope, r.scope);
	ck_assert_int_eq(r2.obtained, 1700000000);
	ck_assert_int_eq(r2.secret_expires, 1900000000);
	ck_assert(!r2.client_credentials);
	ck_assert_str_eq(json_string_value(json_object_get(o, "grant")),
	    "authorization_code");
	json_decref(back);
	json_decref(o);
	/* Without tokens: none written. */
	r.access_token = r.refresh_token = r.scope = NULL;
	r.expires_at = 0;
	o = oauthc_record_json(&r);
	ck_assert_ptr_null(json_object_get(o, "access_token"));
	ck_assert_ptr_null(json_object_get(o, "refresh_token"));
	ck_assert_ptr_null(json_object_get(o, "expires_at"));
	json_decref(o);
}
END_TEST

START_TEST(test_resource_covers)
{
	ck_assert(oauthc_resource_covers(U, U));
	ck_assert(oauthc_resource_covers("https://mcp.example.com", U));
	ck_assert(oauthc_resource_covers("https://MCP.example.com/", U));
	ck_assert(oauthc_resource_covers("https://h/a", "https://h/a/b"));
	ck_assert(oauthc_resource_covers("https://h/a/", "https://h/a/b"));
	ck_assert(!oauthc_resource_covers("https://h/a", "https://h/ab"));
	ck_assert(!oauthc_resource_covers("https://h/a/b", "https://h/a"));
	ck_assert(!oauthc_resource_covers("https://h/?x", "https://h/a"));
	ck_assert(!oauthc_resource_covers("https://h/#f", "https://h/a"));
	ck_assert(!oauthc_resource_covers("https://evil.example/", U));
	ck_assert(!oauthc_resource_covers("http://mcp.example.com/", U));
	ck_assert(!oauthc_resource_covers("https://mcp.example.com:8443/",
	    U));
	ck_assert(!oauthc_resource_covers("not a url", U));
}
END_TEST

START_TEST(test_as_flags)
{
	struct oauthc_as	as;
	json_t			*md;
	char			why[OAUTHC_WHY_MAX];

	md = json_pack("{s:s, s:s, s:b, s:[s, s]}", "issuer", "https://as",
	    "token_endpoint", "https://as/token",
	    "client_id_metadata_document_supported", 1,
	    "scopes_supported", "mcp", "offline_access");
	ck_assert_int_eq(oauthc_as_check(md, "https://as", &as, why,
	    sizeof why), 0);
	ck_assert(as.cimd);
	ck_assert(as.offline);
	json_object_set_new(md, "client_id_metadata_document_supported",
	    json_string("true"));
	json_object_set_new(md, "scopes_supported", json_pack("[s]", "mcp"));
	ck_assert_int_eq(oauthc_as_check(md, "https://as", &as, why,
	    sizeof why), 0);
	ck_assert(!as.cimd);
	ck_assert(!as.offline);
	json_decref(md);
}
END_TEST

static Suite *
oauthc_reg_suite(void)
{
	Suite	*s = suite_create("oauthc_reg");
	TCase	*tc = tcase_create("core");

	tcase_add_test(tc, test_registration);
	tcase_add_test(tc, test_dcr_method);
	tcase_add_test(tc, test_dcr_request);
	tcase_add_test(tc, test_dcr_parse);
	tcase_add_test(tc, test_scopes);
	tcase_add_test(tc, test_record);
	tcase_add_test(tc, test_resource_covers);
	tcase_add_test(tc, test_as_flags);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr = srunner_create(oauthc_reg_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
