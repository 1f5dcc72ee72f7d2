/* SPDX-License-Identifier: ISC */
/*
 * The gateway as an OAuth protected resource (supervisor/oauth.c,
 * oauth_http.c, mcp_access.c, mcp_http.c): the 401 challenge and the
 * protected resource metadata, JWT access tokens verified against the
 * issuer's keys (set here as a KEYS frame would, idp_set_jwks, or sent by
 * the issuer's stand-in worker when the gateway asks), the attacks a token
 * can carry, sessions bound to the principal, scopes, the client mapping,
 * and introspection of opaque tokens.  Tokens are signed here with OpenSSL
 * (t/unit/jose_sign.c): the gateway only verifies.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "frame.h"
#include "jose.h"
#include "supervisor.h"
#include "xmalloc.h"

#include "jose_sign.h"
#include "sup_check.h"

#define ISS		"https://idp.example.com/realms/x"
#define RES		"https://mcp.example.com"
#define TOKEN_STATIC	"token-any-0123456789ab"

#define CONF_SERVER \
    "servers = ( { name = \"a\"; transport = \"stdio\";\n" \
    "    command = [ \"true\" ]; },\n" \
    "  { name = \"b\"; transport = \"stdio\"; command = [ \"true\" ];\n" \
    "    scopes = [ \"admin\" ]; } );\n"

#define CONF_OAUTH \
    "oauth = { resource = \"" RES "/\"; scopes = [ \"mcp\" ];\n" \
    "  scopes_supported = [ \"mcp\", \"admin\" ]; resource_name = \"GW\";\n" \
    "  issuers = ( { issuer = \"" ISS "\"; introspection = {\n" \
    "    client_id = \"gw\"; client_secret = \"${env:HOME}\"; }; } ); };\n"

static const char conf_oauth[] = SUP_BASE
    "auth_tokens = [ \"" TOKEN_STATIC "\" ];\n"
    "clients = ( { name = \"ops\"; allow = [ \"a__*\" ];\n"
    "    oauth = { subject = \"olga\"; }; },\n"
    "  { name = \"admins\"; oauth = { claims = { groups = \"admins\"; };"
    " }; } );\n"
    CONF_OAUTH CONF_SERVER;

static const char conf_plain[] = SUP_BASE
    "servers = ( { name = \"a\"; transport = \"stdio\";\n"
    "    command = [ \"true\" ]; } );\n";

static const char catalog[] = "{\"tools\":[{\"name\":\"x\",\"inputSchema\":"
    "{\"type\":\"object\"}},{\"name\":\"y\",\"inputSchema\":{\"type\":"
    "\"object\"}}]}";

static const char init_body[] = "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":"
    "\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\","
    "\"capabilities\":{},\"clientInfo\":{\"name\":\"c\",\"version\":\"1\"}}}";

static EVP_PKEY	*k1, *k2;

/* The key set of some keys, as the issuer publishes it. */
static char *
jwks_of(EVP_PKEY *a, const char *kida, EVP_PKEY *b, const char *kidb)
{
	char	*ja, *jb = NULL, *out;

	ja = jwk(a, kida, "");
	if (b != NULL)
		jb = jwk(b, kidb, "");
	xasprintf(&out, "{\"keys\":[%s%s%s]}", ja, jb != NULL ? "," : "",
	    jb != NULL ? jb : "");
	free(ja);
	free(jb);
	return (out);
}

/* Give the issuer a key set, as a KEYS frame does. */
static void
set_keys(EVP_PKEY *a, const char *kida, EVP_PKEY *b, const char *kidb)
{
	struct jose_jwks	*set;
	char			*text, why[JOSE_WHY_MAX];

	text = jwks_of(a, kida, b, kidb);
	set = jose_jwks_parse(text, strlen(text), why);
	ck_assert_msg(set != NULL, "%s", why);
	idp_set_jwks(idp_find(ISS), set);
	free(text);
}

/* The issuer's worker sends a key set (a KEYS frame). */
static void
send_keys(struct sup_worker *w, EVP_PKEY *a, const char *kida, EVP_PKEY *b,
    const char *kidb)
{
	char	*keys = jwks_of(a, kida, b, kidb);

	sup_send(w, MSG_IDP_KEYS, 0, 0, 0, "{\"jwks\":%s,\"fetched\":%lld,"
	    "\"metadata\":{\"issuer\":\"" ISS "\"}}", keys,
	    (long long)time(NULL));
	free(keys);
}

/* A token signed by key as kid, with these claims (JSON members). */
static char *
token_with(EVP_PKEY *key, const char *kid, const char *claims)
{
	char	header[256];

	snprintf(header, sizeof header, "{\"alg\":\"ES256\",\"typ\":"
	    "\"at+jwt\",\"kid\":\"%s\"}", kid);
	return (sign(key, "ES256", header, claims));
}

/* A good token's claims for a subject, scope and audience. */
static char *
claims(const char *sub, const char *scope, const char *aud, long exp_in)
{
	char	*c;

	xasprintf(&c, "{\"iss\":\"" ISS "\",\"sub\":\"%s\",\"aud\":\"%s\","
	    "\"exp\":%lld,\"iat\":%lld,\"scope\":\"%s\"}", sub, aud,
	    (long long)time(NULL) + exp_in, (long long)time(NULL) - 10, scope);
	return (c);
}

/* A token for a subject and scope, by k1. */
static char *
token(const char *sub, const char *scope)
{
	char	*c, *t;

	c = claims(sub, scope, RES "/mcp", 300);
	t = token_with(k1, "k1", c);
	free(c);
	return (t);
}

/* POST an initialize with a bearer token (or none). */
static struct sup_resp *
post_init(const char *bearer)
{
	char	headers[20000];

	headers[0] = '\0';
	if (bearer != NULL)
		snprintf(headers, sizeof headers, "Authorization: Bearer %s\r\n",
		    bearer);
	strncat(headers, "Content-Type: application/json\r\n"
	    "Accept: application/json, text/event-stream\r\n",
	    sizeof headers - strlen(headers) - 1);
	return (sup_http("POST", "/mcp", headers, init_body));
}

/*
 * Open a legacy HTTP+SSE session at sse_path with a token and initialize
 * it; its stream, and its message path into path.  hdr: the POSTs'
 * headers (size hdrlen).
 */
static struct sup_resp *
legacy_session(const char *sse_path, const char *t, char *path,
    size_t pathlen, char *hdr, size_t hdrlen)
{
	struct sup_resp	*sse;

	snprintf(hdr, hdrlen, "Authorization: Bearer %s\r\n"
	    "Accept: text/event-stream\r\n", t);
	sse = sup_http("GET", sse_path, hdr, NULL);
	ck_assert_int_eq(sse->status, 200);
	ck_assert_uint_ge(sse->nevents, 1);
	snprintf(path, pathlen, "%s", sse->events[0].data);
	snprintf(hdr, hdrlen, "Authorization: Bearer %s\r\n"
	    "Content-Type: application/json\r\n", t);
	ck_assert_int_eq(sup_http("POST", path, hdr, "{\"jsonrpc\":\"2.0\","
	    "\"id\":5,\"method\":\"initialize\",\"params\":{"
	    "\"protocolVersion\":\"2024-11-05\",\"capabilities\":{},"
	    "\"clientInfo\":{\"name\":\"old\",\"version\":\"1\"}}}")->status,
	    202);
	return (sse);
}

/* A 401 with the challenge, and error/description if want_error. */
static void
assert_401(struct sup_resp *r, const char *want_error, const char *why)
{
	const char	*h;

	ck_assert_int_eq(r->status, 401);
	h = sup_header(r, "WWW-Authenticate");
	ck_assert_ptr_nonnull(h);
	ck_assert_msg(strstr(h, "Bearer resource_metadata=\"" RES
	    "/.well-known/oauth-protected-resource/mcp\"") == h,
	    "challenge: %s", h);
	ck_assert_msg(strstr(h, "scope=\"mcp\"") != NULL, "challenge: %s", h);
	if (want_error != NULL) {
		ck_assert_msg(strstr(h, want_error) != NULL, "challenge %s "
		    "lacks %s", h, want_error);
		if (why != NULL)
			ck_assert_msg(strstr(h, why) != NULL, "challenge %s "
			    "lacks %s", h, why);
	} else
		ck_assert_msg(strstr(h, "error=") == NULL, "challenge: %s", h);
}

static void
setup_oauth(void)
{
	k1 = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	k2 = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	setenv("HOME", "/nonexistent", 0);
	sup_catalog("a", catalog);
	sup_catalog("b", catalog);
	sup_start(conf_oauth);
	ck_assert_ptr_nonnull(idp_find(ISS));
	ck_assert_ptr_nonnull(sup_provider(ISS));
	set_keys(k1, "k1", NULL, NULL);
}

static void
setup_plain(void)
{
	sup_start(conf_plain);
}

static void
teardown(void)
{
	sup_stop();
	EVP_PKEY_free(k1);
	EVP_PKEY_free(k2);
	k1 = k2 = NULL;
}

START_TEST(test_challenge)
{
	struct sup_resp	*r;
	const char	*h;

	assert_401(post_init(NULL), NULL, NULL);
	/* Each endpoint points to its own metadata. */
	r = sup_http("GET", "/sse", NULL, NULL);
	ck_assert_int_eq(r->status, 401);
	h = sup_header(r, "WWW-Authenticate");
	ck_assert_msg(strstr(h, "oauth-protected-resource/sse\"") != NULL,
	    "%s", h);
	r = sup_http("POST", "/messages?sessionId=x", NULL, "{}");
	ck_assert_int_eq(r->status, 401);
	r = sup_http("GET", "/ws", "Upgrade: websocket\r\nConnection: Upgrade"
	    "\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: "
	    "dGhlIHNhbXBsZSBub25jZQ==\r\n", NULL);
	ck_assert_int_eq(r->status, 401);
	h = sup_header(r, "WWW-Authenticate");
	ck_assert_msg(strstr(h, "oauth-protected-resource/ws\"") != NULL,
	    "%s", h);
	/* Not a bearer token at all: no error, as for none. */
	r = sup_http("POST", "/mcp", "Authorization: Basic dTpw\r\n"
	    "Content-Type: application/json\r\n", init_body);
	assert_401(r, NULL, NULL);
	/* A static token still is what it was. */
	ck_assert_int_eq(post_init(TOKEN_STATIC)->status, 200);
}
END_TEST

START_TEST(test_metadata)
{
	struct sup_resp	*r;
	json_t		*j;

	r = sup_http("GET", "/.well-known/oauth-protected-resource/mcp",
	    "Host: 127.0.0.1:8931\r\n", NULL);
	ck_assert_int_eq(r->status, 200);
	ck_assert_str_eq(sup_header(r, "Content-Type"), "application/json");
	j = sup_json(r);
	ck_assert_jstr(j, "resource", RES "/mcp");
	ck_assert_jstr(j, "authorization_servers.0", ISS);
	ck_assert_uint_eq(sup_jlen(j, "authorization_servers"), 1);
	ck_assert_jstr(j, "scopes_supported.1", "admin");
	ck_assert_jstr(j, "bearer_methods_supported.0", "header");
	ck_assert_jstr(j, "resource_name", "GW");
	/* Built from the configuration, never the request's Host. */
	ck_assert_ptr_null(strstr(sup_body(r), "127.0.0.1"));
	r = sup_http("GET", "/.well-known/oauth-protected-resource", NULL,
	    NULL);
	ck_assert_int_eq(r->status, 200);
	ck_assert_jstr(sup_json(r), "resource", RES);
	r = sup_http("GET", "/.well-known/oauth-protected-resource/ws", NULL,
	    NULL);
	ck_assert_jstr(sup_json(r), "resource", RES "/ws");
	r = sup_http("GET", "/.well-known/oauth-protected-resource/other",
	    NULL, NULL);
	ck_assert_int_eq(r->status, 404);
	r = sup_http("POST", "/.well-known/oauth-protected-resource", NULL,
	    "{}");
	ck_assert_int_eq(r->status, 405);
	/* The Host rules hold as for the health checks. */
	r = sup_http("GET", "/.well-known/oauth-protected-resource",
	    "Host: evil.example\r\n", NULL);
	ck_assert_int_eq(r->status, 403);
}
END_TEST

/* The status of an initialize at path with a token for audience aud. */
static int
init_for(const char *aud, const char *path)
{
	char	*c, *t, headers[4096];
	int	 status;

	c = claims("alice", "mcp", aud, 300);
	t = token_with(k1, "k1", c);
	snprintf(headers, sizeof headers, "Authorization: Bearer %s\r\n"
	    "Content-Type: application/json\r\n"
	    "Accept: application/json, text/event-stream\r\n", t);
	status = sup_http("POST", path, headers, init_body)->status;
	free(c);
	free(t);
	return (status);
}

/* A virtual endpoint is a protected resource of its own: its metadata,
 * its challenge, tokens for it as audience. */
START_TEST(test_endpoint_resource)
{
	struct sup_resp	*r;
	const char	*h;
	char		*c, *t, headers[4096];

	json_decref(sup_reload(SUP_BASE "auth_tokens = [ \"" TOKEN_STATIC
	    "\" ];\nendpoints = ( { path = \"/mcp/research\"; tools = [ "
	    "\"a__*\" ]; } );\n" CONF_OAUTH CONF_SERVER));
	r = sup_http("GET", "/.well-known/oauth-protected-resource/mcp/"
	    "research", NULL, NULL);
	ck_assert_int_eq(r->status, 200);
	ck_assert_jstr(sup_json(r), "resource", RES "/mcp/research");
	r = sup_http("GET", "/.well-known/oauth-protected-resource/mcp/"
	    "research/sse", NULL, NULL);
	ck_assert_jstr(sup_json(r), "resource", RES "/mcp/research/sse");
	r = sup_http("GET", "/.well-known/oauth-protected-resource/mcp/"
	    "other", NULL, NULL);
	ck_assert_int_eq(r->status, 404);
	r = sup_http("POST", "/mcp/research", "Content-Type: "
	    "application/json\r\n", init_body);
	ck_assert_int_eq(r->status, 401);
	h = sup_header(r, "WWW-Authenticate");
	ck_assert_msg(strstr(h, "resource_metadata=\"" RES
	    "/.well-known/oauth-protected-resource/mcp/research\"") != NULL,
	    "%s", h);
	/* A token whose audience is the endpoint. */
	c = claims("alice", "mcp", RES "/mcp/research", 300);
	t = token_with(k1, "k1", c);
	snprintf(headers, sizeof headers, "Authorization: Bearer %s\r\n"
	    "Content-Type: application/json\r\n"
	    "Accept: application/json, text/event-stream\r\n", t);
	ck_assert_int_eq(sup_http("POST", "/mcp/research", headers,
	    init_body)->status, 200);
	/* Not for /mcp: another resource (RFC 8707). */
	r = sup_http("POST", "/mcp", headers, init_body);
	ck_assert_int_eq(r->status, 401);
	h = sup_header(r, "WWW-Authenticate");
	ck_assert_msg(strstr(h, "error=\"invalid_token\"") != NULL &&
	    strstr(h, "resource_metadata=\"" RES "/.well-known/oauth-"
	    "protected-resource/mcp\"") != NULL, "%s", h);
	/* Its other transports are the same endpoint. */
	ck_assert_int_ne(sup_http("POST", "/mcp/research/messages", headers,
	    "{}")->status, 401);
	free(c);
	free(t);
	/* /mcp's token is not for the endpoint; the resource's is. */
	ck_assert_int_eq(init_for(RES "/mcp", "/mcp/research"), 401);
	ck_assert_int_eq(init_for(RES "/mcp", "/mcp"), 200);
	ck_assert_int_eq(init_for(RES, "/mcp/research"), 200);
}
END_TEST

/* Without oauth, no metadata and the old challenge. */
START_TEST(test_plain)
{
	struct sup_resp	*r;

	r = sup_http("GET", "/.well-known/oauth-protected-resource/mcp",
	    NULL, NULL);
	ck_assert_int_eq(r->status, 404);
	ck_assert_int_eq(post_init("eyJhbGciOiJFUzI1NiJ9.e30.AAAA")->status,
	    200);
}
END_TEST

START_TEST(test_jwt_session)
{
	struct sup_client	*cl;
	struct session		*s;
	json_t			*a;
	char			*t = token("alice", "mcp openid");

	cl = sup_session(t, NULL);
	s = session_find(cl->sid, strlen(cl->sid));
	ck_assert_ptr_nonnull(s);
	ck_assert_ptr_nonnull(s->grant);
	ck_assert_str_eq(s->grant->subject, "alice");
	ck_assert_str_eq(s->grant->issuer, ISS);
	ck_assert_ptr_null(s->client_name);
	a = sup_rpc(cl, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"tools/list\"}");
	ck_assert_result(a);
	ck_assert_uint_eq(sup_jlen(a, "result.tools"), 4);
	free(t);
}
END_TEST

/* The WebSocket and the legacy endpoints take an access token too; a
 * waiting token holds the upgrade until the keys come. */
START_TEST(test_ws_legacy)
{
	struct sup_worker	*w = sup_provider(ISS);
	struct sup_resp		*r;
	char			 h[4096], *t = token("alice", "mcp"), *c, *t2, *keys;

	snprintf(h, sizeof h, "Authorization: Bearer %s\r\n"
	    "Upgrade: websocket\r\nConnection: Upgrade\r\n"
	    "Sec-WebSocket-Version: 13\r\n"
	    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
	    "Sec-WebSocket-Protocol: mcp\r\n", t);
	/* (The harness reads no 101: the session it makes is the sign.) */
	r = sup_http("GET", "/ws", h, NULL);
	ck_assert_uint_eq(session_count(), 1);
	sup_release(r->conn);
	sup_run();
	ck_assert_uint_eq(session_count(), 0);
	snprintf(h, sizeof h, "Authorization: Bearer %s\r\n"
	    "Accept: text/event-stream\r\n", t);
	r = sup_http("GET", "/sse", h, NULL);
	ck_assert_int_eq(r->status, 200);
	ck_assert_uint_eq(session_count(), 1);
	sup_release(r->conn);
	sup_run();
	/* A new kid: the upgrade waits for the keys. */
	c = claims("alice", "mcp", RES "/ws", 300);
	t2 = token_with(k2, "k2", c);
	snprintf(h, sizeof h, "Authorization: Bearer %s\r\n"
	    "Upgrade: websocket\r\nConnection: Upgrade\r\n"
	    "Sec-WebSocket-Version: 13\r\n"
	    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
	    "Sec-WebSocket-Protocol: mcp\r\n", t2);
	r = sup_http("GET", "/ws", h, NULL);
	ck_assert_uint_eq(session_count(), 0);
	keys = jwks_of(k1, "k1", k2, "k2");
	sup_send(w, MSG_IDP_KEYS, 0, 0, 0, "{\"jwks\":%s,\"fetched\":%lld,"
	    "\"metadata\":{\"issuer\":\"" ISS "\"}}", keys,
	    (long long)time(NULL));
	ck_assert_uint_eq(session_count(), 1);
	sup_release(r->conn);
	free(keys);
	free(t2);
	free(c);
	free(t);
}
END_TEST

/* Each attack: 401 invalid_token with its reason. */
START_TEST(test_attacks)
{
	char		*c, *t, hdr[512], *p, *big, *sig, *h64;
	unsigned char	 mac[64];
	unsigned int	 maclen;
	long long	 now = (long long)time(NULL);
	EVP_PKEY	*rogue = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");

	/* Expired, beyond the leeway. */
	c = claims("alice", "mcp", RES "/mcp", -120);
	t = token_with(k1, "k1", c);
	assert_401(post_init(t), "error=\"invalid_token\"", "expired");
	free(c);
	free(t);
	/* Not valid yet. */
	xasprintf(&c, "{\"iss\":\"" ISS "\",\"sub\":\"a\",\"aud\":\"" RES
	    "/mcp\",\"exp\":%lld,\"nbf\":%lld}", now + 900, now + 600);
	t = token_with(k1, "k1", c);
	assert_401(post_init(t), "error=\"invalid_token\"", "not valid for");
	free(c);
	free(t);
	/* Another audience: never passed on. */
	c = claims("alice", "mcp", "https://other.example/mcp", 300);
	t = token_with(k1, "k1", c);
	assert_401(post_init(t), "error=\"invalid_token\"", "aud");
	free(c);
	free(t);
	/* An issuer we do not know. */
	xasprintf(&c, "{\"iss\":\"https://evil.example\",\"sub\":\"a\","
	    "\"aud\":\"" RES "/mcp\",\"exp\":%lld}", now + 300);
	t = token_with(k1, "k1", c);
	assert_401(post_init(t), "error=\"invalid_token\"", "issuer");
	free(c);
	free(t);
	/* Signed by another key under our kid. */
	c = claims("alice", "mcp", RES "/mcp", 300);
	t = token_with(rogue, "k1", c);
	assert_401(post_init(t), "error=\"invalid_token\"", "signature");
	free(t);
	/* alg none, unsigned. */
	p = b64s(c);
	h64 = b64s("{\"alg\":\"none\"}");
	xasprintf(&t, "%s.%s.", h64, p);
	assert_401(post_init(t), "error=\"invalid_token\"", "none");
	free(t);
	free(h64);
	/* HS256 with the public key (its JWK) as the secret. */
	snprintf(hdr, sizeof hdr, "{\"alg\":\"HS256\",\"kid\":\"k1\"}");
	big = jwk(k1, "k1", "");
	h64 = b64s(hdr);
	xasprintf(&t, "%s.%s", h64, p);
	HMAC(EVP_sha256(), big, (int)strlen(big), (unsigned char *)t,
	    strlen(t), mac, &maclen);
	sig = b64(mac, maclen);
	free(t);
	xasprintf(&t, "%s.%s.%s", h64, p, sig);
	assert_401(post_init(t), "error=\"invalid_token\"", "shared secret");
	free(t);
	free(h64);
	free(sig);
	free(big);
	free(p);
	free(c);
	/* Malformed: not base64url JSON, characters no token has. */
	assert_401(post_init("a.b.c"), "error=\"invalid_token\"", NULL);
	assert_401(post_init("abc\"def,ghi"), "error=\"invalid_token\"",
	    "characters");
	/* Oversized: the head's bound refuses it before any parse. */
	big = xmalloc(JOSE_TOKEN_MAX + 2);
	memset(big, 'A', JOSE_TOKEN_MAX + 1);
	big[JOSE_TOKEN_MAX + 1] = '\0';
	big[10] = '.';
	big[20] = '.';
	ck_assert_int_eq(post_init(big)->status, 431);
	/* Long, but within it: a JWT that is no JSON. */
	big[12000] = '\0';
	assert_401(post_init(big), "error=\"invalid_token\"", NULL);
	free(big);
	EVP_PKEY_free(rogue);
}
END_TEST

/* The same subject keeps its session; another one, or a static token,
 * gets 404 for it. */
START_TEST(test_binding)
{
	struct sup_client	*alice, *bob, *alice2;
	struct sup_resp		*r;
	char			*ta = token("alice", "mcp"), *tb;
	char			*c, *ta2;

	alice = sup_session(ta, NULL);
	tb = token("bob", "mcp");
	bob = sup_client(tb);
	memcpy(bob->sid, alice->sid, sizeof bob->sid);
	r = sup_post(bob, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"tools/list\"}");
	ck_assert_int_eq(r->status, 404);
	bob = sup_client(TOKEN_STATIC);
	memcpy(bob->sid, alice->sid, sizeof bob->sid);
	r = sup_post(bob, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"tools/list\"}");
	ck_assert_int_eq(r->status, 404);
	/* A new token of alice's (another exp, another key) keeps it. */
	set_keys(k1, "k1", k2, "k2");
	c = claims("alice", "mcp", RES "/mcp", 600);
	ta2 = token_with(k2, "k2", c);
	alice2 = sup_client(ta2);
	memcpy(alice2->sid, alice->sid, sizeof alice2->sid);
	ck_assert_result(sup_rpc(alice2, "{\"jsonrpc\":\"2.0\",\"id\":2,"
	    "\"method\":\"tools/list\"}"));
	free(c);
	free(ta);
	free(ta2);
	free(tb);
}
END_TEST

/* A token without the scope every request needs: 403 with the scope. */
START_TEST(test_insufficient_scope)
{
	struct sup_resp	*r;
	const char	*h;
	char		*t = token("alice", "openid");

	r = post_init(t);
	ck_assert_int_eq(r->status, 403);
	h = sup_header(r, "WWW-Authenticate");
	ck_assert_ptr_nonnull(h);
	ck_assert_msg(strstr(h, "error=\"insufficient_scope\"") != NULL, "%s",
	    h);
	ck_assert_msg(strstr(h, "scope=\"mcp\"") != NULL, "%s", h);
	free(t);
}
END_TEST

/*
 * A 2026-07-28 subscriptions/listen honours a resource only at an
 * upstream whose scopes the token has: b's is left out of the
 * acknowledgment and b is not subscribed.
 */
START_TEST(test_listen_scopes)
{
	struct sup_resp		*r;
	struct sup_frame	*f;
	char			*t = token("alice", "mcp");

	sup_send(sup_worker("a"), MSG_CATALOG, 0, 0, 0, "{\"resources\":["
	    "{\"uri\":\"mem://a\",\"name\":\"a\"}]}");
	sup_send(sup_worker("b"), MSG_CATALOG, 0, 0, 0, "{\"resources\":["
	    "{\"uri\":\"mem://b\",\"name\":\"b\"}]}");
	r = sup_modern("/mcp", t, "subscriptions/listen", NULL,
	    "\"notifications\":{\"resourceSubscriptions\":[\"mem://a\","
	    "\"mem://b\"]}", NULL, NULL);
	ck_assert_int_eq(r->status, 200);
	ck_assert_str_eq(sup_ack_uris(r), "mem://a");
	ck_assert_ptr_null(sup_take(sup_worker("b"), MSG_REQUEST));
	ck_assert_ptr_nonnull(f = sup_take(sup_worker("a"), MSG_REQUEST));
	sup_reply(sup_worker("a"), f, "{}");
	sup_hangup(r->conn);
	ck_assert_ptr_nonnull(f = sup_take(sup_worker("a"), MSG_REQUEST));
	sup_reply(sup_worker("a"), f, "{}");
	free(t);
}
END_TEST

/* An upstream's scopes: a JSON-RPC error naming them, else forwarded. */
START_TEST(test_upstream_scopes)
{
	struct sup_client	*cl;
	struct sup_resp		*r, *sse;
	json_t			*a;
	const char		*h;
	char			*t, hdr[2048], path[300];

	/* Over Streamable HTTP: 403 with the challenge, nothing forwarded;
	 * the scope is what a new token needs, every request's and b's. */
	t = token("alice", "mcp");
	cl = sup_session(t, NULL);
	r = sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"b__x\",\"arguments\":{}}}");
	ck_assert_int_eq(r->status, 403);
	h = sup_header(r, "WWW-Authenticate");
	ck_assert_ptr_nonnull(h);
	ck_assert_msg(strstr(h, "error=\"insufficient_scope\"") != NULL &&
	    strstr(h, "scope=\"mcp admin\"") != NULL &&
	    strstr(h, "resource_metadata=\"" RES
	    "/.well-known/oauth-protected-resource/mcp\"") != NULL, "%s", h);
	a = sup_json(r);
	ck_assert_error(a, MCP_INSUFFICIENT_SCOPE);
	ck_assert_jint(a, "id", 1);
	ck_assert_jstr(a, "error.data.error", "insufficient_scope");
	ck_assert_jstr(a, "error.data.scope", "mcp admin");
	ck_assert_ptr_null(sup_take(sup_worker("b"), MSG_REQUEST));
	/* A tool b does not have is unknown, as ever: no 403. */
	r = sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"b__nope\",\"arguments\":"
	    "{}}}");
	ck_assert_int_eq(r->status, 200);
	/* A name with a NUL in it is not b__x cut short: routing refuses it
	 * as a bad name, not for a scope, and nothing is forwarded. */
	r = sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"b__x\\u0000y\","
	    "\"arguments\":{}}}");
	ck_assert_int_eq(r->status, 200);
	ck_assert_error(sup_answer(r), -32602);
	ck_assert_ptr_null(sup_take(sup_worker("b"), MSG_REQUEST));
	/* Over legacy HTTP+SSE, the answer is on the stream: the JSON-RPC
	 * error alone. */
	sse = legacy_session("/sse", t, path, sizeof path, hdr, sizeof hdr);
	r = sup_http("POST", path, hdr, "{\"jsonrpc\":\"2.0\",\"id\":6,"
	    "\"method\":\"tools/call\",\"params\":{\"name\":\"b__x\","
	    "\"arguments\":{}}}");
	ck_assert_int_eq(r->status, 202);
	a = sup_event(sse, sse->nevents - 1);
	ck_assert_error(a, MCP_INSUFFICIENT_SCOPE);
	ck_assert_jstr(a, "error.data.scope", "mcp admin");
	ck_assert_ptr_null(sup_take(sup_worker("b"), MSG_REQUEST));
	/* Upstream a needs none. */
	sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"a__x\",\"arguments\":{}}}");
	ck_assert_ptr_nonnull(sup_take(sup_worker("a"), MSG_REQUEST));
	free(t);
	/* With the scope, and with a static token, it is forwarded. */
	t = token("bob", "mcp admin");
	cl = sup_session(t, NULL);
	sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"b__x\",\"arguments\":{}}}");
	ck_assert_ptr_nonnull(sup_take(sup_worker("b"), MSG_REQUEST));
	cl = sup_session(TOKEN_STATIC, NULL);
	sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"b__x\",\"arguments\":{}}}");
	ck_assert_ptr_nonnull(sup_take(sup_worker("b"), MSG_REQUEST));
	free(t);
}
END_TEST

/*
 * A reload that makes an upstream ask for a scope stops its resource
 * updates to the sessions whose token lacks it, subscribed before; a
 * token with the scope still hears them.
 */
START_TEST(test_reload_scopes_updates)
{
	struct sup_client	*al, *bo;
	struct sup_resp		*gal, *gbo, *r;
	struct sup_frame	*f;
	char			*ta = token("alice", "mcp");
	char			*tb = token("bob", "mcp admin");
	static const char	 sub[] = "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"resources/subscribe\",\"params\":{\"uri\":"
	    "\"mem://a\"}}";
	static const char	 upd[] = "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/resources/updated\",\"params\":{\"uri\":"
	    "\"mem://a\"}}";
	json_t			*a;

	sup_send(sup_worker("a"), MSG_CATALOG, 0, 0, 0, "{\"resources\":["
	    "{\"uri\":\"mem://a\",\"name\":\"a\"}]}");
	al = sup_session(ta, NULL);
	bo = sup_session(tb, NULL);
	gal = sup_get(al, NULL);
	gbo = sup_get(bo, NULL);
	sup_post(al, "%s", sub);
	ck_assert_ptr_nonnull(f = sup_take(sup_worker("a"), MSG_REQUEST));
	sup_reply(sup_worker("a"), f, "{}");
	ck_assert_result(sup_answer(sup_post(bo, "%s", sub)));
	sup_send(sup_worker("a"), MSG_NOTIFY, 0, 0, 0, "%s", upd);
	ck_assert_ptr_nonnull(sup_find(gal, "notifications/resources/updated"));
	ck_assert_ptr_nonnull(sup_find(gbo, "notifications/resources/updated"));
	a = sup_reload(SUP_BASE "auth_tokens = [ \"" TOKEN_STATIC "\" ];\n"
	    CONF_OAUTH "servers = ( { name = \"a\"; transport = \"stdio\";\n"
	    "    command = [ \"true\" ]; scopes = [ \"admin\" ]; } );\n");
	ck_assert_msg(json_is_true(json_object_get(a, "ok")), "%s",
	    sup_dump(a));
	json_decref(a);
	/* Fresh streams, to see only what comes now. */
	sup_hangup(gal->conn);
	sup_hangup(gbo->conn);
	gal = sup_get(al, NULL);
	gbo = sup_get(bo, NULL);
	sup_send(sup_worker("a"), MSG_NOTIFY, 0, 0, 0, "%s", upd);
	ck_assert_ptr_null(sup_find(gal, "notifications/resources/updated"));
	ck_assert_ptr_nonnull(sup_find(gbo, "notifications/resources/updated"));
	/* Letting go is still allowed; the last one is forwarded. */
	ck_assert_result(sup_answer(sup_post(al, "{\"jsonrpc\":\"2.0\","
	    "\"id\":2,\"method\":\"resources/unsubscribe\",\"params\":"
	    "{\"uri\":\"mem://a\"}}")));
	r = sup_post(bo, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
	    "\"resources/unsubscribe\",\"params\":{\"uri\":\"mem://a\"}}");
	ck_assert_ptr_nonnull(f = sup_take(sup_worker("a"), MSG_REQUEST));
	sup_reply(sup_worker("a"), f, "{}");
	ck_assert_result(sup_answer(r));
	free(ta);
	free(tb);
}
END_TEST

/*
 * A step-up at a virtual endpoint names that endpoint's metadata (whose
 * resource the client's token is for), and the scopes of ours the token
 * has besides what the call needs, so that the new one loses nothing.
 */
START_TEST(test_step_up_endpoint)
{
	struct sup_client	*cl;
	struct sup_resp		*r, *sse;
	const char		*h;
	json_t			*a;
	char			*c, *t, hdr[4096], path[256];

	json_decref(sup_reload(SUP_BASE "auth_tokens = [ \"" TOKEN_STATIC
	    "\" ];\nendpoints = ( { path = \"/mcp/research\"; tools = [ "
	    "\"a__*\", \"b__*\" ]; } );\n"
	    "oauth = { resource = \"" RES "/\"; scopes = [ \"mcp\" ];\n"
	    "  scopes_supported = [ \"mcp\", \"admin\", \"files\" ];\n"
	    "  issuers = ( { issuer = \"" ISS "\"; introspection = {\n"
	    "    client_id = \"gw\"; client_secret = \"${env:HOME}\"; }; } );"
	    " };\n" CONF_SERVER));
	c = claims("alice", "files mcp openid", RES "/mcp/research", 300);
	t = token_with(k1, "k1", c);
	cl = sup_client(t);
	cl->path = "/mcp/research";
	ck_assert_int_eq(sup_initialize(cl, NULL)->status, 200);
	r = sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"b__x\",\"arguments\":{}}}");
	ck_assert_int_eq(r->status, 403);
	h = sup_header(r, "WWW-Authenticate");
	ck_assert_msg(h != NULL && strstr(h, "resource_metadata=\"" RES
	    "/.well-known/oauth-protected-resource/mcp/research\"") != NULL &&
	    strstr(h, "scope=\"mcp admin files\"") != NULL, "%s", h);
	ck_assert_jstr(sup_json(r), "error.data.scope", "mcp admin files");
	/* By the endpoint's legacy transport: that path's metadata. */
	sse = legacy_session("/mcp/research/sse", t, path, sizeof path, hdr,
	    sizeof hdr);
	ck_assert_int_eq(sup_http("POST", path, hdr, "{\"jsonrpc\":\"2.0\","
	    "\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":"
	    "\"b__x\",\"arguments\":{}}}")->status, 202);
	a = sup_event(sse, sse->nevents - 1);
	ck_assert_error(a, MCP_INSUFFICIENT_SCOPE);
	ck_assert_jstr(a, "error.data.resource_metadata", RES "/.well-known/"
	    "oauth-protected-resource/mcp/research/sse");
	free(c);
	free(t);
}
END_TEST

/* Clients by subject or claim; the others unnamed. */
START_TEST(test_mapping)
{
	struct sup_client	*cl, *left;
	struct session		*s;
	struct sup_resp		*r;
	json_t			*a;
	char			*t, *c, p1[128], p2[128];

	t = token("olga", "mcp");
	cl = sup_session(t, NULL);
	s = session_find(cl->sid, strlen(cl->sid));
	ck_assert_str_eq(s->client_name, "ops");
	a = sup_rpc(cl, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"tools/list\"}");
	ck_assert_uint_eq(sup_jlen(a, "result.tools"), 2);
	ck_assert_jstr(a, "result.tools.0.name", "a__x");
	/* A tool its rules hide is unknown to it, not a 403 that names the
	 * scope it needs. */
	r = sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"b__x\",\"arguments\":{}}}");
	ck_assert_int_eq(r->status, 200);
	ck_assert_error(sup_answer(r), JRPC_INVALID_PARAMS);
	free(t);
	xasprintf(&c, "{\"iss\":\"" ISS "\",\"sub\":\"u9\",\"aud\":[\"x\","
	    "\"" RES "/mcp\"],\"exp\":%lld,\"scope\":\"mcp\",\"groups\":"
	    "[\"dev\",\"admins\"]}", (long long)time(NULL) + 300);
	t = token_with(k1, "k1", c);
	cl = sup_session(t, NULL);
	s = session_find(cl->sid, strlen(cl->sid));
	ck_assert_str_eq(s->client_name, "admins");
	rate_principal(s, p1, sizeof p1);
	free(t);
	free(c);
	/* u9 leaves admins: its next token names no client, and its
	 * session, an admin's, is not found for it. */
	xasprintf(&c, "{\"iss\":\"" ISS "\",\"sub\":\"u9\",\"aud\":\""
	    RES "/mcp\",\"exp\":%lld,\"scope\":\"mcp\",\"groups\":"
	    "[\"dev\"]}", (long long)time(NULL) + 300);
	t = token_with(k1, "k1", c);
	left = sup_client(t);
	memcpy(left->sid, cl->sid, sizeof left->sid);
	memcpy(left->version, cl->version, sizeof left->version);
	ck_assert_int_eq(sup_post(left, "{\"jsonrpc\":\"2.0\",\"id\":3,"
	    "\"method\":\"ping\"}")->status, 404);
	ck_assert_str_eq(s->client_name, "admins");
	free(t);
	free(c);
	/* Another subject of that client is a principal of its own for
	 * rate limits. */
	xasprintf(&c, "{\"iss\":\"" ISS "\",\"sub\":\"u10\",\"aud\":\""
	    RES "/mcp\",\"exp\":%lld,\"scope\":\"mcp\",\"groups\":"
	    "\"admins\"}", (long long)time(NULL) + 300);
	t = token_with(k1, "k1", c);
	cl = sup_session(t, NULL);
	s = session_find(cl->sid, strlen(cl->sid));
	ck_assert_str_eq(s->client_name, "admins");
	rate_principal(s, p2, sizeof p2);
	ck_assert_str_ne(p1, p2);
	ck_assert(strncmp(p1, "subject ", 8) == 0);
	free(t);
	free(c);
}
END_TEST

/*
 * A provider with one key and no kids rotates it: a token by the new key
 * waits for fresh keys, as one with an unknown kid does, rather than being
 * refused until the next scheduled fetch.
 */
START_TEST(test_kidless_rotation)
{
	struct sup_worker	*w = sup_provider(ISS);
	struct sup_resp		*r;
	char			*c, *t;

	set_keys(k1, NULL, NULL, NULL);
	sup_forget(w);
	c = claims("alice", "mcp", RES "/mcp", 300);
	t = sign(k2, "ES256", "{\"alg\":\"ES256\",\"typ\":\"at+jwt\"}", c);
	r = post_init(t);
	ck_assert_int_eq(r->status, 0);
	ck_assert_uint_eq(sup_count(w, MSG_IDP_REFRESH), 1);
	send_keys(w, k2, NULL, NULL, NULL);
	ck_assert_int_eq(r->status, 200);
	free(t);
	free(c);
}
END_TEST

/* A new kid: the request waits for the issuer's fresh keys. */
START_TEST(test_unknown_kid)
{
	struct sup_worker	*w = sup_provider(ISS);
	struct sup_resp		*r;
	char			*c, *t;

	sup_forget(w);
	c = claims("alice", "mcp", RES "/mcp", 300);
	t = token_with(k2, "k2", c);
	r = post_init(t);
	ck_assert_int_eq(r->status, 0);
	ck_assert_uint_eq(sup_count(w, MSG_IDP_REFRESH), 1);
	send_keys(w, k1, "k1", k2, "k2");
	ck_assert_int_eq(r->status, 200);
	free(t);
	free(c);
}
END_TEST

/* A flood of unknown kids: one fetch asked for, each request decided. */
START_TEST(test_kid_flood)
{
	struct sup_worker	*w = sup_provider(ISS);
	struct sup_resp		*r[40];
	char			*c, *t, kid[32];
	size_t			 i;

	sup_forget(w);
	c = claims("alice", "mcp", RES "/mcp", 300);
	for (i = 0; i < 40; i++) {
		snprintf(kid, sizeof kid, "kid-%zu", i);
		t = token_with(k2, kid, c);
		r[i] = post_init(t);
		free(t);
	}
	ck_assert_uint_eq(sup_count(w, MSG_IDP_REFRESH), 1);
	sup_send(w, MSG_IDP_STATUS, 0, 0, 0, "{\"ok\":false,\"error\":"
	    "\"down\",\"jwks_fetches\":1}");
	for (i = 0; i < 40; i++)
		assert_401(r[i], "error=\"invalid_token\"", NULL);
	/* Later ones are decided at once: no more fetches now. */
	t = token_with(k2, "kid-x", c);
	assert_401(post_init(t), "error=\"invalid_token\"", NULL);
	ck_assert_uint_eq(sup_count(w, MSG_IDP_REFRESH), 1);
	free(t);
	free(c);
}
END_TEST

/* Opaque tokens are introspected, once. */
START_TEST(test_introspection)
{
	struct sup_worker	*w = sup_provider(ISS);
	struct sup_frame	*f;
	struct sup_resp		*r;
	json_t			*j;

	sup_forget(w);
	r = post_init("opaque-token-0123456789");
	ck_assert_int_eq(r->status, 0);
	f = sup_take(w, MSG_IDP_INTROSPECT);
	ck_assert_ptr_nonnull(f);
	j = sup_frame_json(f);
	ck_assert_jstr(j, "token", "opaque-token-0123456789");
	json_decref(j);
	sup_send(w, MSG_IDP_INTROSPECTED, 0, 0, f->tag, "{\"active\":true,"
	    "\"sub\":\"carol\",\"aud\":\"" RES "/mcp\",\"scope\":\"mcp x\","
	    "\"exp\":%lld}", (long long)time(NULL) + 300);
	ck_assert_int_eq(r->status, 200);
	/* Cached: no second introspection. */
	ck_assert_int_eq(post_init("opaque-token-0123456789")->status, 200);
	ck_assert_uint_eq(sup_count(w, MSG_IDP_INTROSPECT), 1);
	/* Inactive, whatever else it says. */
	r = post_init("opaque-token-abcdefghij");
	f = sup_take(w, MSG_IDP_INTROSPECT);
	sup_send(w, MSG_IDP_INTROSPECTED, 0, 0, f->tag, "{\"active\":false,"
	    "\"sub\":\"carol\",\"aud\":\"" RES "/mcp\",\"scope\":\"mcp\"}");
	assert_401(r, "error=\"invalid_token\"", "not active");
	/* No sub: a client credentials token's subject is its client. */
	r = post_init("opaque-token-service-01");
	f = sup_take(w, MSG_IDP_INTROSPECT);
	sup_send(w, MSG_IDP_INTROSPECTED, 0, 0, f->tag, "{\"active\":true,"
	    "\"client_id\":\"svc\",\"aud\":\"" RES "/mcp\","
	    "\"scope\":\"mcp\"}");
	ck_assert_int_eq(r->status, 200);
	/* Neither sub nor client_id: refused. */
	r = post_init("opaque-token-service-02");
	f = sup_take(w, MSG_IDP_INTROSPECT);
	sup_send(w, MSG_IDP_INTROSPECTED, 0, 0, f->tag, "{\"active\":true,"
	    "\"aud\":\"" RES "/mcp\",\"scope\":\"mcp\"}");
	assert_401(r, "error=\"invalid_token\"", "no subject");
	/* Another audience. */
	r = post_init("opaque-token-klmnopqrst");
	f = sup_take(w, MSG_IDP_INTROSPECT);
	sup_send(w, MSG_IDP_INTROSPECTED, 0, 0, f->tag, "{\"active\":true,"
	    "\"sub\":\"carol\",\"aud\":\"https://other\",\"scope\":\"mcp\"}");
	assert_401(r, "error=\"invalid_token\"", NULL);
	/* An exp past year 9999 is no date (exp + leeway would overflow). */
	r = post_init("opaque-token-far-future");
	f = sup_take(w, MSG_IDP_INTROSPECT);
	sup_send(w, MSG_IDP_INTROSPECTED, 0, 0, f->tag, "{\"active\":true,"
	    "\"sub\":\"carol\",\"aud\":\"" RES "/mcp\",\"scope\":\"mcp\","
	    "\"exp\":9223372036854775807}");
	assert_401(r, "error=\"invalid_token\"", "NumericDate");
	/* Nor is an nbf that is not a number. */
	r = post_init("opaque-token-nbf-text");
	f = sup_take(w, MSG_IDP_INTROSPECT);
	sup_send(w, MSG_IDP_INTROSPECTED, 0, 0, f->tag, "{\"active\":true,"
	    "\"sub\":\"carol\",\"aud\":\"" RES "/mcp\",\"scope\":\"mcp\","
	    "\"nbf\":\"soon\"}");
	assert_401(r, "error=\"invalid_token\"", "NumericDate");
}
END_TEST

/*
 * The requests a token has in flight share its introspection: one is
 * asked for, each is answered; the first one's client hanging up does not
 * cancel it for the others.  Another token has its own.
 */
START_TEST(test_introspection_shared)
{
	struct sup_worker	*w = sup_provider(ISS);
	struct sup_resp		*r[4], *other;
	struct sup_frame	*f, *fo;
	size_t			 i;

	sup_forget(w);
	for (i = 0; i < 4; i++) {
		r[i] = post_init("opaque-token-shared-0001");
		ck_assert_int_eq(r[i]->status, 0);
	}
	other = post_init("opaque-token-shared-0002");
	f = sup_take(w, MSG_IDP_INTROSPECT);
	ck_assert_ptr_nonnull(f);
	fo = sup_take(w, MSG_IDP_INTROSPECT);
	ck_assert_ptr_nonnull(fo);
	ck_assert_ptr_null(sup_take(w, MSG_IDP_INTROSPECT));
	sup_hangup(r[0]->conn);
	sup_run();
	ck_assert_ptr_null(sup_take(w, MSG_IDP_INTROSPECT));
	sup_send(w, MSG_IDP_INTROSPECTED, 0, 0, f->tag, "{\"active\":true,"
	    "\"sub\":\"carol\",\"aud\":\"" RES "/mcp\",\"scope\":\"mcp\","
	    "\"exp\":%lld}", (long long)time(NULL) + 300);
	for (i = 1; i < 4; i++)
		ck_assert_int_eq(r[i]->status, 200);
	ck_assert_int_eq(other->status, 0);
	sup_send(w, MSG_IDP_INTROSPECTED, 0, 0, fo->tag, "{\"active\":false}");
	assert_401(other, "error=\"invalid_token\"", "not active");
	/* All of one token's requests gone: its introspection is cancelled
	 * (its late answer is dropped), and the next request asks again. */
	r[0] = post_init("opaque-token-shared-0003");
	r[1] = post_init("opaque-token-shared-0003");
	f = sup_take(w, MSG_IDP_INTROSPECT);
	sup_hangup(r[0]->conn);
	sup_hangup(r[1]->conn);
	sup_run();
	sup_send(w, MSG_IDP_INTROSPECTED, 0, 0, f->tag, "{\"active\":true,"
	    "\"sub\":\"carol\",\"aud\":\"" RES "/mcp\",\"scope\":\"mcp\"}");
	r[2] = post_init("opaque-token-shared-0003");
	ck_assert_ptr_nonnull(sup_take(w, MSG_IDP_INTROSPECT));
	ck_assert_int_eq(r[2]->status, 0);
}
END_TEST

/*
 * A token decided without waiting (a silent check, as /readyz's) is not
 * remembered as refused: the next request still introspects it.
 */
START_TEST(test_nowait_not_cached)
{
	struct oauth_verdict	 v;
	const char		*tok = "opaque-token-0123456789";

	oauth_check(tok, strlen(tok), 1, &v);
	ck_assert_int_eq(v.status, OAUTH_REFUSED);
	ck_assert_str_eq(v.reason, "introspection_failed");
	oauth_check(tok, strlen(tok), 0, &v);
	ck_assert_int_eq(v.status, OAUTH_PENDING);
}
END_TEST

/* -n: the introspection secret must expand; no warning that MCP is open. */
START_TEST(test_preflight)
{
	struct conf	*c;
	char		 err[1024];

	c = conf_parse(SUP_BASE "oauth = { resource = \"https://r\";\n"
	    "  issuers = ( { issuer = \"https://i\";\n"
	    "    introspection = { client_id = \"c\";\n"
	    "      client_secret = \"${env:MCPS_CHECK_OAUTH_UNSET}\"; }; } ); };\n",
	    "p.conf", err, sizeof err);
	ck_assert_msg(c != NULL, "%s", err);
	unsetenv("MCPS_CHECK_OAUTH_UNSET");
	ck_assert_int_eq(preflight(c, PREFLIGHT_RELOAD, NULL, NULL, err,
	    sizeof err), -1);
	ck_assert_msg(strstr(err, "p.conf:5: issuer https://i: introspection "
	    "client_secret: ") == err, "%s", err);
	setenv("MCPS_CHECK_OAUTH_UNSET", "s3cret", 1);
	ck_assert_int_eq(preflight(c, PREFLIGHT_RELOAD, NULL, NULL, err,
	    sizeof err), 0);
	conf_free(c);
}
END_TEST

/* A setting of an @included file: its error names that file. */
START_TEST(test_preflight_included)
{
	char		 dir[] = "/tmp/check_oauth.XXXXXX";
	char		 main_conf[128], inc[128], err[1024], want[256];
	struct conf	*c;
	FILE		*f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(main_conf, sizeof main_conf, "%s/main.conf", dir);
	snprintf(inc, sizeof inc, "%s/oauth.conf", dir);
	f = fopen(main_conf, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "%s@include \"%s\"\n", SUP_BASE, inc);
	fclose(f);
	f = fopen(inc, "w");
	ck_assert_ptr_nonnull(f);
	fputs("# issuers\noauth = { resource = \"https://r\";\n"
	    "  issuers = ( { issuer = \"https://i\";\n"
	    "    introspection = { client_id = \"c\";\n"
	    "      client_secret = \"${env:MCPS_CHECK_OAUTH_UNSET}\"; }; } ); };\n",
	    f);
	fclose(f);
	c = conf_load(main_conf, err, sizeof err);
	ck_assert_msg(c != NULL, "%s", err);
	unsetenv("MCPS_CHECK_OAUTH_UNSET");
	ck_assert_int_eq(preflight(c, PREFLIGHT_RELOAD, NULL, NULL, err,
	    sizeof err), -1);
	snprintf(want, sizeof want, "%s:3: issuer https://i: introspection "
	    "client_secret: ", inc);
	ck_assert_msg(strstr(err, want) == err, "%s", err);
	conf_free(c);
	unlink(inc);
	unlink(main_conf);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

static char	preflight_warned[2048];

/* Collect preflight's warnings. */
static void
preflight_collect(const char *msg)
{
	size_t	n = strlen(preflight_warned);

	snprintf(preflight_warned + n, sizeof preflight_warned - n, "%s\n",
	    msg);
}

/*
 * A reload warns of an open gateway as the start does, for the addresses
 * in use (its flags): beyond loopback without tokens, without
 * allowed_hosts; a lock file is a token.
 */
START_TEST(test_preflight_reload_warns)
{
	struct conf	*c;
	char		 err[1024];

	c = conf_parse(SUP_BASE, "p.conf", err, sizeof err);
	ck_assert_msg(c != NULL, "%s", err);
	preflight_warned[0] = '\0';
	ck_assert_int_eq(preflight(c, PREFLIGHT_RELOAD, NULL,
	    preflight_collect, err, sizeof err), 0);
	ck_assert_str_eq(preflight_warned, "");
	ck_assert_int_eq(preflight(c, PREFLIGHT_RELOAD | PREFLIGHT_WIDE, NULL,
	    preflight_collect, err, sizeof err), 0);
	ck_assert_msg(strstr(preflight_warned, "listen 127.0.0.1:8931 is "
	    "beyond loopback and there are no auth_tokens or clients") !=
	    NULL, "%s", preflight_warned);
	ck_assert_msg(strstr(preflight_warned, "no allowed_hosts") != NULL,
	    "%s", preflight_warned);
	conf_free(c);
	c = conf_parse(SUP_BASE "ws_lockfile = \"/tmp/x.lock\";\n",
	    "p.conf", err, sizeof err);
	ck_assert_msg(c != NULL, "%s", err);
	preflight_warned[0] = '\0';
	ck_assert_int_eq(preflight(c, PREFLIGHT_RELOAD | PREFLIGHT_WIDE, NULL,
	    preflight_collect, err, sizeof err), 0);
	ck_assert_msg(strstr(preflight_warned, "no auth_tokens") == NULL,
	    "%s", preflight_warned);
	conf_free(c);
}
END_TEST

/* A connection that goes while its token waits leaves nothing behind. */
START_TEST(test_wait_hangup)
{
	struct sup_worker	*w = sup_provider(ISS);
	struct sup_resp		*r;
	struct sup_frame	*f;

	r = post_init("opaque-token-0123456789");
	ck_assert_int_eq(r->status, 0);
	f = sup_take(w, MSG_IDP_INTROSPECT);
	sup_hangup(r->conn);
	sup_run();
	sup_send(w, MSG_IDP_INTROSPECTED, 0, 0, f->tag, "{\"active\":false}");
}
END_TEST

/* Refusals counted by reason, the cache; /metrics needs a token too. */
START_TEST(test_metrics)
{
	struct sup_resp		*r;
	enum jose_result	 res;
	char			*c, *t, h[2048];

	c = claims("alice", "mcp", RES "/mcp", -600);
	t = token_with(k1, "k1", c);
	assert_401(post_init(t), "error=\"invalid_token\"", "expired");
	assert_401(post_init(t), "error=\"invalid_token\"", "expired");
	assert_401(post_init(NULL), NULL, NULL);
	free(t);
	free(c);
	t = token("alice", "mcp");
	ck_assert_int_eq(post_init(t)->status, 200);
	ck_assert_int_eq(sup_http("GET", "/metrics", NULL, NULL)->status, 401);
	r = sup_http("GET", "/metrics", "Authorization: Bearer " TOKEN_STATIC
	    "\r\n", NULL);
	ck_assert_int_eq(r->status, 200);
	ck_assert_ptr_nonnull(strstr(sup_body(r),
	    "mcp_supervisor_oauth_refused_total{reason=\"expired\"} 2\n"));
	ck_assert_ptr_nonnull(strstr(sup_body(r),
	    "mcp_supervisor_oauth_refused_total{reason=\"no_token\"} 2\n"));
	ck_assert_ptr_nonnull(strstr(sup_body(r),
	    "mcp_supervisor_oauth_verified_total 1\n"));
	/* Every reason of jose.h has its label. */
	for (res = JOSE_ERR_SIZE; res <= JOSE_ERR_INTERNAL; res++) {
		snprintf(h, sizeof h, "oauth_refused_total{reason=\"%s\"}",
		    jose_result_name(res));
		ck_assert_msg(strstr(sup_body(r), h) != NULL, "no %s", h);
	}
	ck_assert_ptr_nonnull(strstr(sup_body(r),
	    "mcp_supervisor_oauth_cache_entries 2\n"));
	/* The token is in no metric, and does not admit to them. */
	ck_assert_ptr_null(strstr(sup_body(r), t));
	snprintf(h, sizeof h, "Authorization: Bearer %s\r\n", t);
	ck_assert_int_eq(sup_http("GET", "/metrics", h, NULL)->status, 403);
	free(t);
}
END_TEST

/* A verified token costs one verification, not one per request. */
START_TEST(test_cache)
{
	json_t	*st;
	char	*t = token("alice", "mcp");
	int	 i;

	for (i = 0; i < 3; i++)
		ck_assert_int_eq(post_init(t)->status, 200);
	st = oauth_status_json();
	ck_assert_jint(st, "granted", 1);
	ck_assert_jint(st, "cached", 1);
	ck_assert_jint(st, "hits", 2);
	json_decref(st);
	free(t);
}
END_TEST

static Suite *
oauth_suite(void)
{
	Suite	*s = suite_create("oauth");
	TCase	*tc;

	tc = tcase_create("oauth");
	tcase_add_checked_fixture(tc, setup_oauth, teardown);
	tcase_add_test(tc, test_challenge);
	tcase_add_test(tc, test_metadata);
	tcase_add_test(tc, test_endpoint_resource);
	tcase_add_test(tc, test_jwt_session);
	tcase_add_test(tc, test_ws_legacy);
	tcase_add_test(tc, test_attacks);
	tcase_add_test(tc, test_binding);
	tcase_add_test(tc, test_insufficient_scope);
	tcase_add_test(tc, test_mapping);
	tcase_add_test(tc, test_step_up_endpoint);
	tcase_add_test(tc, test_upstream_scopes);
	tcase_add_test(tc, test_listen_scopes);
	tcase_add_test(tc, test_reload_scopes_updates);
	tcase_add_test(tc, test_unknown_kid);
	tcase_add_test(tc, test_kidless_rotation);
	tcase_add_test(tc, test_kid_flood);
	tcase_add_test(tc, test_introspection);
	tcase_add_test(tc, test_introspection_shared);
	tcase_add_test(tc, test_wait_hangup);
	tcase_add_test(tc, test_preflight);
	tcase_add_test(tc, test_preflight_included);
	tcase_add_test(tc, test_preflight_reload_warns);
	tcase_add_test(tc, test_nowait_not_cached);
	tcase_add_test(tc, test_cache);
	tcase_add_test(tc, test_metrics);
	suite_add_tcase(s, tc);
	tc = tcase_create("plain");
	tcase_add_checked_fixture(tc, setup_plain, teardown);
	tcase_add_test(tc, test_plain);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	return (sup_check_main(oauth_suite()));
}
