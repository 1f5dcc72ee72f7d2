/* SPDX-License-Identifier: ISC */
/*
 * An OAuth access token for another resource is refused wherever a token
 * is asked for, not only at the MCP endpoints (supervisor/oauth.c): at
 * /metrics on the main listener, which no endpoint's audience names, a JWT
 * or an introspected token whose aud holds none of this gateway's
 * audiences is invalid (401 invalid_token: RFC 8707, RFC 9068 section 4,
 * the MCP authorization specification), even one of a subject whose
 * client may read the metrics.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>

#include "frame.h"
#include "jose.h"
#include "supervisor.h"
#include "xmalloc.h"

#include "jose_sign.h"
#include "sup_check.h"

#define ISS	"https://idp.example.com/realms/x"
#define RES	"https://mcp.example.com"
#define OTHER	"https://other.example.com/mcp"

/* The scraper's tokens map to a client that may read the metrics. */
static const char conf_audience[] = SUP_BASE
    "clients = ( { name = \"prom\"; metrics = true;\n"
    "    oauth = { subject = \"scraper\"; }; } );\n"
    "oauth = { resource = \"" RES "/\";\n"
    "  issuers = ( { issuer = \"" ISS "\"; introspection = {\n"
    "    client_id = \"gw\"; client_secret = \"${env:HOME}\"; }; } ); };\n"
    "servers = ( { name = \"a\"; transport = \"stdio\";\n"
    "    command = [ \"true\" ]; } );\n";

static EVP_PKEY	*key;

static void
setup(void)
{
	struct jose_jwks	*set;
	char			*j, *text, why[JOSE_WHY_MAX];

	key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	setenv("HOME", "/nonexistent", 0);
	sup_catalog("a", "{\"tools\":[{\"name\":\"x\",\"inputSchema\":"
	    "{\"type\":\"object\"}}]}");
	sup_start(conf_audience);
	/* The issuer's keys, as a KEYS frame gives them. */
	j = jwk(key, "k1", "");
	xasprintf(&text, "{\"keys\":[%s]}", j);
	set = jose_jwks_parse(text, strlen(text), why);
	ck_assert_msg(set != NULL, "%s", why);
	idp_set_jwks(idp_find(ISS), set);
	free(text);
	free(j);
}

static void
teardown(void)
{
	sup_stop();
	EVP_PKEY_free(key);
	key = NULL;
}

/* A JWT of the scraper's for an audience (caller frees). */
static char *
token_for(const char *aud)
{
	char	*c, *t;

	xasprintf(&c, "{\"iss\":\"" ISS "\",\"sub\":\"scraper\","
	    "\"aud\":\"%s\",\"exp\":%lld,\"iat\":%lld}", aud,
	    (long long)time(NULL) + 300, (long long)time(NULL) - 10);
	t = sign(key, "ES256", "{\"alg\":\"ES256\",\"typ\":\"at+jwt\","
	    "\"kid\":\"k1\"}", c);
	free(c);
	return (t);
}

/* GET /metrics with a bearer token. */
static struct sup_resp *
get_metrics(const char *bearer)
{
	char	h[4096];

	snprintf(h, sizeof h, "Authorization: Bearer %s\r\n", bearer);
	return (sup_http("GET", "/metrics", h, NULL));
}

/* A 401 whose challenge says the token is invalid, and why. */
static void
assert_invalid(struct sup_resp *r, const char *why)
{
	const char	*h;

	ck_assert_int_eq(r->status, 401);
	ck_assert_ptr_nonnull(h = sup_header(r, "WWW-Authenticate"));
	ck_assert_msg(strstr(h, "error=\"invalid_token\"") != NULL &&
	    strstr(h, why) != NULL, "challenge: %s", h);
	ck_assert_ptr_null(strstr(sup_body(r), "mcp_supervisor_"));
}

/*
 * A JWT for another resource is invalid at /metrics, where no endpoint's
 * audience is asked for: the audience checked is one of ours, never the
 * one the token names.
 */
START_TEST(test_jwt_metrics)
{
	struct sup_resp	*r;
	char		*t;

	/* For us: its client reads the metrics. */
	t = token_for(RES "/mcp");
	r = get_metrics(t);
	ck_assert_int_eq(r->status, 200);
	ck_assert_ptr_nonnull(strstr(sup_body(r), "mcp_supervisor_"));
	free(t);
	t = token_for(OTHER);
	assert_invalid(get_metrics(t), "aud");
	free(t);
}
END_TEST

/*
 * An opaque token is introspected for /metrics as for MCP; one its
 * issuer says is for another resource is invalid there too.
 */
START_TEST(test_introspected_metrics)
{
	struct sup_worker	*w = sup_provider(ISS);
	struct sup_frame	*f;
	struct sup_resp		*r;

	sup_forget(w);
	r = get_metrics("opaque-token-ours-0123");
	ck_assert_int_eq(r->status, 0);
	ck_assert_ptr_nonnull(f = sup_take(w, MSG_IDP_INTROSPECT));
	sup_send(w, MSG_IDP_INTROSPECTED, 0, 0, f->tag, "{\"active\":true,"
	    "\"sub\":\"scraper\",\"aud\":\"" RES "/mcp\",\"exp\":%lld}",
	    (long long)time(NULL) + 300);
	ck_assert_int_eq(r->status, 200);
	r = get_metrics("opaque-token-other-0123");
	ck_assert_int_eq(r->status, 0);
	ck_assert_ptr_nonnull(f = sup_take(w, MSG_IDP_INTROSPECT));
	sup_send(w, MSG_IDP_INTROSPECTED, 0, 0, f->tag, "{\"active\":true,"
	    "\"sub\":\"scraper\",\"aud\":\"" OTHER "\",\"exp\":%lld}",
	    (long long)time(NULL) + 300);
	assert_invalid(r, "aud does not hold this resource");
	ck_assert_uint_eq(sup_count(w, MSG_IDP_INTROSPECT), 2);
}
END_TEST

static Suite *
oauth_audience_suite(void)
{
	Suite	*s = suite_create("oauth_audience");
	TCase	*tc = tcase_create("metrics");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_jwt_metrics);
	tcase_add_test(tc, test_introspected_metrics);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	return (sup_check_main(oauth_audience_suite()));
}
