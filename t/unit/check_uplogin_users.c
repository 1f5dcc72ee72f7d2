/* SPDX-License-Identifier: ISC */
/*
 * Per-user identities at an upstream (oauth.identity = "per-user"), the
 * supervisor's half (supervisor/uplogin_users.c), with a stand-in for the
 * worker: each session's SESSION_OPEN names its principal and carries
 * that principal's record and no one else's; the redirect goes to the
 * identity whose login carries its state; mcpctl tokens lists every
 * identity (also after the daemon forgot them, from the index); revoking
 * one leaves the others; the configuration refuses what cannot work.
 */
#include "config.h"

#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "frame.h"
#include "supervisor.h"

#include "sup_check.h"

#define TOKEN_ALICE	"alice-token-0123456789abcdef"
#define TOKEN_BOB	"bob-token-0123456789abcdef01"
#define STATE_A		"sA123456789abcdefghijklmnopqrstuvwxyzABCDEF"
#define STATE_B		"sB123456789abcdefghijklmnopqrstuvwxyzABCDEF"
#define CONNECT_A	"cA123456789abcdefghijklmnopqrstuvwxyzABCDEF"
#define CONNECT_B	"cB123456789abcdefghijklmnopqrstuvwxyzABCDEF"
#define SECRET_A	"at-ALICE-SECRET"
#define SECRET_B	"at-BOB-SECRET"

static char	dir[64];
static char	conf_text[2048];

/* Where the link's page is: the redirect URI's origin. */
static const char	*origin = "http://127.0.0.1:8931";

/* The gateway, its redirect URI under extra's oauth_client (or none). */
static void
setup_with(const char *extra)
{
	sup_tmpdir(dir, sizeof dir, "upusers");
	snprintf(conf_text, sizeof conf_text, SUP_BASE
	    "%s"
	    "state_dir = \"%s\";\n"
	    "clients = (\n"
	    "  { name = \"alice\"; token = \"" TOKEN_ALICE "\"; },\n"
	    "  { name = \"bob\"; token = \"" TOKEN_BOB "\"; }\n"
	    ");\n"
	    "servers = (\n"
	    "  { name = \"users\"; transport = \"http\";\n"
	    "    url = \"https://mcp.example.com/mcp\";\n"
	    "    oauth = { client_id = \"app\"; identity = \"per-user\"; }; "
	    "}\n"
	    ");\n", extra, dir);
	sup_start(conf_text);
	sup_run();
}

static void
setup(void)
{
	origin = "http://127.0.0.1:8931";
	setup_with("");
}

/* Reached under a public https name. */
static void
setup_https(void)
{
	origin = "https://gw.example";
	setup_with("oauth_client = { redirect_uri = "
	    "\"https://gw.example/oauth/callback\"; };\n");
}

static void
teardown(void)
{
	sup_stop();
	sup_rmtree(dir);
}

/* Run an mcpctl command in-process: its reply (new). */
static json_t *
ctl(const char *cmd, const char *name, const char *identity)
{
	json_t	*req, *reply;

	req = json_pack("{s:s, s:s*, s:s*}", "command", cmd, "name", name,
	    "identity", identity);
	reply = uplogin_control(cmd, req);
	json_decref(req);
	return (reply);
}

/* The SESSION_OPEN the worker got last: its payload (new). */
static json_t *
session_open(struct sup_worker *w)
{
	struct sup_frame	*f, *last = NULL;

	sup_run();
	while ((f = sup_take(w, MSG_SESSION_OPEN)) != NULL)
		last = f;
	ck_assert_ptr_nonnull(last);
	return (sup_frame_json(last));
}

/* The worker saves a record of an identity's. */
static void
save(struct sup_worker *w, const char *identity, const char *token)
{
	sup_send(w, MSG_OAUTH_SAVE, 0, 0, 0, "{\"identity\":\"%s\","
	    "\"record\":{\"v\":1,\"resource\":\"https://mcp.example.com/mcp\","
	    "\"issuer\":\"https://as.example.com\",\"client_id\":\"app\","
	    "\"registered\":\"config\",\"access_token\":\"%s\","
	    "\"expires_at\":4102444800,\"obtained\":1700000000}}", identity,
	    token);
}

/* Each session is its principal's; the record goes to it alone. */
START_TEST(test_session_open)
{
	struct sup_worker	*w = sup_worker("users");
	json_t			*j;

	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(upstream_find("users")->sc->isolation,
	    ISOLATION_PER_SESSION);
	sup_session(TOKEN_ALICE, NULL);
	j = session_open(w);
	ck_assert_jstr(j, "oauth_identity", "client:alice");
	ck_assert_ptr_null(sup_jget(j, "oauth_record"));
	json_decref(j);
	save(w, "client:alice", SECRET_A);
	sup_session(TOKEN_ALICE, NULL);
	j = session_open(w);
	ck_assert_jstr(j, "oauth_identity", "client:alice");
	ck_assert_jstr(j, "oauth_record.access_token", SECRET_A);
	json_decref(j);
	sup_session(TOKEN_BOB, NULL);
	j = session_open(w);
	ck_assert_jstr(j, "oauth_identity", "client:bob");
	ck_assert_ptr_null(sup_jget(j, "oauth_record"));
	json_decref(j);
	/* A gateway record is not a user's. */
	j = json_object();
	uplogin_config(upstream_find("users"), j);
	ck_assert_ptr_null(sup_jget(j, "oauth_record"));
	json_decref(j);
}
END_TEST

/* The worker says alice's and bob's logins wait for their users. */
static void
logins_ab(struct sup_worker *w)
{
	sup_send(w, MSG_OAUTH_PROGRESS, 0, 0, 0, "{\"identity\":"
	    "\"client:alice\",\"phase\":\"url\",\"url\":\"https://as/a\","
	    "\"state\":\"" STATE_A "\",\"connect\":\"" CONNECT_A "\"}");
	sup_send(w, MSG_OAUTH_PROGRESS, 0, 0, 0, "{\"identity\":"
	    "\"client:bob\",\"phase\":\"url\",\"url\":\"https://as/b\","
	    "\"state\":\"" STATE_B "\",\"connect\":\"" CONNECT_B "\"}");
}

/* Post a login link's form with the Origin from: the response. */
static struct sup_resp *
post_proof(const char *from, const char *connect, const char *token)
{
	char	headers[256], body[256];

	snprintf(headers, sizeof headers, "Origin: %s\r\nContent-Type: "
	    "application/x-www-form-urlencoded\r\n", from);
	snprintf(body, sizeof body, "login=%s&token=%s", connect, token);
	return (sup_http("POST", "/oauth/callback?login=x", headers, body));
}

/* Prove to be a login's user at its link: the "Cookie:" header line the
 * browser then sends. */
static const char *
prove(const char *connect, const char *token, const char *where)
{
	static char	 lines[4][256];
	static int	 n;
	char		*line = lines[n++ % 4];
	struct sup_resp	*r;
	const char	*c;

	r = post_proof(origin, connect, token);
	ck_assert_int_eq(r->status, 303);
	ck_assert_str_eq(sup_header(r, "Location"), where);
	ck_assert_ptr_nonnull(c = sup_header(r, "Set-Cookie"));
	snprintf(line, sizeof lines[0], "Cookie: a=b; %.*s\r\n",
	    (int)strcspn(c, ";"), c);
	return (line);
}

/* The redirect of a login, in a browser with that cookie header. */
static int
callback(const char *query, const char *cookie)
{
	char	path[256];

	snprintf(path, sizeof path, "/oauth/callback?%s", query);
	return (sup_http("GET", path, cookie, NULL)->status);
}

/* The redirect goes to the identity whose login carries its state. */
START_TEST(test_callback)
{
	struct sup_worker	*w = sup_worker("users");
	const char		*ca, *cb;
	json_t			*j;

	logins_ab(w);
	/* Not the gateway's login: mcpctl login has none. */
	j = ctl("login_status", "users", NULL);
	ck_assert_jstr(j, "phase", "idle");
	json_decref(j);
	ca = prove(CONNECT_A, TOKEN_ALICE, "https://as/a");
	cb = prove(CONNECT_B, TOKEN_BOB, "https://as/b");
	/* Not in the browser that proved it: refused, and the login is
	 * dropped (its code must not work pasted back either). */
	ck_assert_int_eq(callback("code=cb&state=" STATE_B, ca), 403);
	sup_run();
	/* The worker fails it (no code), and the next call asks again. */
	j = sup_frame_json(sup_take(w, MSG_OAUTH_CODE));
	ck_assert_jstr(j, "identity", "client:bob");
	ck_assert_ptr_null(sup_jget(j, "response"));
	ck_assert_ptr_nonnull(strstr(sup_jstr(j, "failed"), "another browser"));
	json_decref(j);
	ck_assert_int_eq(callback("code=cb&state=" STATE_B, cb), 400);
	ck_assert_int_eq(callback("code=ca&state=" STATE_A, NULL), 403);
	ck_assert_int_eq(callback("code=ca&state=" STATE_A, ca), 400);
	sup_run();
	json_decref(sup_frame_json(sup_take(w, MSG_OAUTH_CODE)));
	logins_ab(w);
	ca = prove(CONNECT_A, TOKEN_ALICE, "https://as/a");
	cb = prove(CONNECT_B, TOKEN_BOB, "https://as/b");
	ck_assert_int_eq(callback("code=cb&state=" STATE_B, cb), 200);
	sup_run();
	j = sup_frame_json(sup_take(w, MSG_OAUTH_CODE));
	ck_assert_jstr(j, "identity", "client:bob");
	ck_assert_jstr(j, "response", "code=cb&state=" STATE_B);
	json_decref(j);
	ck_assert_ptr_null(sup_take(w, MSG_OAUTH_CODE));
	/* Once only. */
	ck_assert_int_eq(callback("code=cb&state=" STATE_B, cb), 400);
	ck_assert_int_eq(callback("code=ca&state=" STATE_A, ca), 200);
	sup_run();
	j = sup_frame_json(sup_take(w, MSG_OAUTH_CODE));
	ck_assert_jstr(j, "identity", "client:alice");
	json_decref(j);
	/* A failed login forgets its state and its link. */
	sup_send(w, MSG_OAUTH_PROGRESS, 0, 0, 0, "{\"identity\":"
	    "\"client:bob\",\"phase\":\"url\",\"url\":\"https://as/b\","
	    "\"state\":\"" STATE_B "\",\"connect\":\"" CONNECT_B "\"}");
	cb = prove(CONNECT_B, TOKEN_BOB, "https://as/b");
	sup_send(w, MSG_OAUTH_PROGRESS, 0, 0, 0, "{\"identity\":"
	    "\"client:bob\",\"phase\":\"failed\",\"error\":\"declined\"}");
	ck_assert_int_eq(callback("code=cb&state=" STATE_B, cb), 400);
	ck_assert_int_eq(sup_http("GET", "/oauth/callback?login=" CONNECT_B,
	    NULL, NULL)->status, 404);
	/* The first of two logins comes back: the other still waits (its
	 * identity compared with the answered one's copy, not with what was
	 * freed: ASan). */
	logins_ab(w);
	ca = prove(CONNECT_A, TOKEN_ALICE, "https://as/a");
	cb = prove(CONNECT_B, TOKEN_BOB, "https://as/b");
	ck_assert_int_eq(callback("code=ca&state=" STATE_A, ca), 200);
	ck_assert_int_eq(callback("code=cb&state=" STATE_B, cb), 200);
	sup_run();
	j = sup_frame_json(sup_take(w, MSG_OAUTH_CODE));
	ck_assert_jstr(j, "identity", "client:alice");
	json_decref(j);
	j = sup_frame_json(sup_take(w, MSG_OAUTH_CODE));
	ck_assert_jstr(j, "identity", "client:bob");
	json_decref(j);
}
END_TEST

/* The oldest of too many logins under way is dropped. */
START_TEST(test_logins_bounded)
{
	struct sup_worker	*w = sup_worker("users");
	struct sup_resp		*r;
	int			 i;

	for (i = 0; i < 65; i++)
		sup_send(w, MSG_OAUTH_PROGRESS, 0, 0, 0, "{\"identity\":"
		    "\"client:u%d\",\"phase\":\"url\",\"url\":\"https://as\","
		    "\"state\":\"state-%d-0123456789abcdef\",\"connect\":"
		    "\"connect-%d\"}", i, i, i);
	r = sup_http("GET", "/oauth/callback?code=c&state=state-0-0123456789"
	    "abcdef", NULL, NULL);
	ck_assert_int_eq(r->status, 400);
	r = sup_http("GET", "/oauth/callback?login=connect-0", NULL, NULL);
	ck_assert_int_eq(r->status, 404);
	r = sup_http("GET", "/oauth/callback?login=connect-64", NULL, NULL);
	ck_assert_int_eq(r->status, 200);
	ck_assert_ptr_nonnull(strstr(sup_body(r), "client:u64"));
	/* The page escapes what it shows. */
	ck_assert_ptr_nonnull(strstr(sup_body(r), "<form method=\"post\""));
	r = sup_http("GET", "/oauth/callback?code=c&state=state-64-012345678"
	    "9abcdef", NULL, NULL);
	ck_assert_int_eq(r->status, 403);
}
END_TEST

/*
 * A login's link proves its user (MCP's "Phishing"): another principal's
 * token, a token the gateway does not know, a form posted from another
 * origin or none are refused; five wrong proofs drop the login.
 */
START_TEST(test_link_proof)
{
	struct sup_worker	*w = sup_worker("users");
	struct sup_resp		*r;
	json_t			*j;
	int			 i;

	logins_ab(w);
	r = post_proof("http://127.0.0.1:8931", CONNECT_A, TOKEN_BOB);
	ck_assert_int_eq(r->status, 403);
	ck_assert_ptr_nonnull(strstr(sup_body(r), "for client:alice"));
	ck_assert_ptr_null(sup_header(r, "Set-Cookie"));
	r = post_proof("http://evil.example", CONNECT_A, TOKEN_ALICE);
	ck_assert_int_eq(r->status, 403);
	r = post_proof("http://127.0.0.1:8932", CONNECT_A, TOKEN_ALICE);
	ck_assert_int_eq(r->status, 403);
	r = sup_http("POST", "/oauth/callback", "Content-Type: application/"
	    "x-www-form-urlencoded\r\n", "login=" CONNECT_A "&token="
	    TOKEN_ALICE);
	ck_assert_int_eq(r->status, 403);
	/* Our own Origin does not excuse a Host of another. */
	r = sup_http("POST", "/oauth/callback", "Host: evil.example\r\n"
	    "Origin: http://127.0.0.1:8931\r\nContent-Type: application/"
	    "x-www-form-urlencoded\r\n", "login=" CONNECT_A "&token="
	    TOKEN_ALICE);
	ck_assert_int_eq(r->status, 403);
	ck_assert_ptr_null(sup_header(r, "Set-Cookie"));
	r = post_proof("http://127.0.0.1:8931", CONNECT_A, "nobody%2Bknows");
	ck_assert_int_eq(r->status, 403);
	r = post_proof("http://127.0.0.1:8931", CONNECT_A, "bad%zz");
	ck_assert_int_eq(r->status, 403);
	/* Five wrong ones: dropped. */
	for (i = 0; i < 2; i++) {
		ck_assert_int_eq(sup_http("GET", "/oauth/callback?login="
		    CONNECT_A, NULL, NULL)->status, 200);
		r = post_proof("http://127.0.0.1:8931", CONNECT_A, TOKEN_BOB);
		ck_assert_int_eq(r->status, 403);
	}
	ck_assert_int_eq(sup_http("GET", "/oauth/callback?login=" CONNECT_A,
	    NULL, NULL)->status, 404);
	r = post_proof("http://127.0.0.1:8931", CONNECT_A, TOKEN_ALICE);
	ck_assert_int_eq(r->status, 404);
	sup_run();
	j = sup_frame_json(sup_take(w, MSG_OAUTH_CODE));
	ck_assert_jstr(j, "identity", "client:alice");
	ck_assert_ptr_nonnull(sup_jget(j, "failed"));
	json_decref(j);
	/* Bob's still waits for him. */
	for (i = 0; i < 2; i++)
		prove(CONNECT_B, TOKEN_BOB, "https://as/b");
}
END_TEST

/*
 * Over https the cookie is a __Host- one (Secure, Path=/, no Domain), so
 * that no other host can plant it in the user's browser; the form is
 * taken from the https origin, and the redirect back with the cookie.
 */
START_TEST(test_https_cookie)
{
	struct sup_worker	*w = sup_worker("users");
	struct sup_resp		*r;
	const char		*c, *ca;
	json_t			*j;

	logins_ab(w);
	r = post_proof("http://127.0.0.1:8931", CONNECT_A, TOKEN_ALICE);
	ck_assert_int_eq(r->status, 403);
	r = post_proof(origin, CONNECT_A, TOKEN_ALICE);
	ck_assert_int_eq(r->status, 303);
	ck_assert_ptr_nonnull(c = sup_header(r, "Set-Cookie"));
	ck_assert_int_eq(strncmp(c, "__Host-mcps_login_", 18), 0);
	ck_assert_ptr_nonnull(strstr(c, "; Path=/; "));
	ck_assert_ptr_nonnull(strstr(c, "; Secure"));
	ck_assert_ptr_null(strstr(c, "Domain"));
	ca = prove(CONNECT_A, TOKEN_ALICE, "https://as/a");
	ck_assert_int_eq(callback("code=ca&state=" STATE_A, ca), 200);
	sup_run();
	j = sup_frame_json(sup_take(w, MSG_OAUTH_CODE));
	ck_assert_jstr(j, "identity", "client:alice");
	json_decref(j);
}
END_TEST

/* A worker's URL that could split the redirect's head is not taken. */
START_TEST(test_url_checked)
{
	struct sup_worker	*w = sup_worker("users");
	char			 url[3000];

	sup_send(w, MSG_OAUTH_PROGRESS, 0, 0, 0, "{\"identity\":"
	    "\"client:alice\",\"phase\":\"url\",\"url\":\"https://as/a\\r\\n"
	    "Set-Cookie: x=y\",\"state\":\"" STATE_A "\",\"connect\":\""
	    CONNECT_A "\"}");
	sup_send(w, MSG_OAUTH_PROGRESS, 0, 0, 0, "{\"identity\":"
	    "\"client:bob\",\"phase\":\"url\",\"url\":\"javascript:x\","
	    "\"state\":\"" STATE_B "\",\"connect\":\"" CONNECT_B "\"}");
	ck_assert_int_eq(sup_http("GET", "/oauth/callback?login=" CONNECT_A,
	    NULL, NULL)->status, 404);
	ck_assert_int_eq(sup_http("GET", "/oauth/callback?login=" CONNECT_B,
	    NULL, NULL)->status, 404);
	/* A long one (many scopes) is sent whole, the cookie after it. */
	memset(url, 0, sizeof url);
	memcpy(url, "https://as/a?scope=", 19);
	memset(url + 19, 's', sizeof url - 20);
	sup_send(w, MSG_OAUTH_PROGRESS, 0, 0, 0, "{\"identity\":"
	    "\"client:alice\",\"phase\":\"url\",\"url\":\"%s\",\"state\":"
	    "\"" STATE_A "\",\"connect\":\"" CONNECT_A "\"}", url);
	ck_assert_ptr_nonnull(prove(CONNECT_A, TOKEN_ALICE, url));
}
END_TEST

/* tokens lists each identity; revoking one leaves the other. */
START_TEST(test_tokens_revoke)
{
	struct sup_worker	*w = sup_worker("users");
	json_t			*j;
	char			 other[2048], *p;

	save(w, "client:alice", SECRET_A);
	save(w, "client:bob", SECRET_B);
	j = ctl("tokens", NULL, NULL);
	ck_assert_ptr_null(strstr(sup_dump(j), "SECRET"));
	ck_assert_uint_eq(sup_jlen(j, "tokens"), 2);
	ck_assert_jstr(j, "tokens.0.identity", "client:alice");
	ck_assert_jstr(j, "tokens.0.token", "valid");
	ck_assert_jstr(j, "tokens.1.identity", "client:bob");
	json_decref(j);
	/* Which one, it must be told; not mcpctl login either. */
	j = ctl("token_revoke", "users", NULL);
	ck_assert(json_is_false(json_object_get(j, "ok")));
	json_decref(j);
	j = ctl("login", "users", NULL);
	ck_assert(json_is_false(json_object_get(j, "ok")));
	ck_assert_ptr_nonnull(strstr(sup_jstr(j, "error"), "per-user"));
	json_decref(j);
	j = ctl("token_revoke", "users", "client:bob");
	ck_assert(json_is_true(json_object_get(j, "ok")));
	json_decref(j);
	sup_run();
	j = sup_frame_json(sup_take(w, MSG_OAUTH_REVOKE));
	ck_assert_jstr(j, "identity", "client:bob");
	json_decref(j);
	j = ctl("token_revoke", "users", "client:bob");
	ck_assert(json_is_false(json_object_get(j, "ok")));
	json_decref(j);
	/* Removed and configured again: read back from the store. */
	snprintf(other, sizeof other, "%s", conf_text);
	p = strstr(other, "\"users\"");
	memcpy(p, "\"usr2s\"", 7);
	json_decref(sup_reload(other));
	sup_run();
	ck_assert_ptr_null(upstream_find("users"));
	json_decref(sup_reload(conf_text));
	sup_run();
	j = ctl("tokens", NULL, NULL);
	ck_assert_uint_eq(sup_jlen(j, "tokens"), 1);
	ck_assert_jstr(j, "tokens.0.identity", "client:alice");
	ck_assert_jstr(j, "tokens.0.upstream", "users");
	json_decref(j);
	/* And alice's next session gets her record. */
	w = sup_worker("users");
	sup_session(TOKEN_ALICE, NULL);
	j = session_open(w);
	ck_assert_jstr(j, "oauth_record.access_token", SECRET_A);
	json_decref(j);
}
END_TEST

/* A frame of another identity than the per-user upstream may have. */
START_TEST(test_frames_refused)
{
	struct sup_worker	*w = sup_worker("users");
	json_t			*j;

	save(w, "users", SECRET_A);
	save(w, "", SECRET_A);
	j = ctl("tokens", NULL, NULL);
	ck_assert_uint_eq(sup_jlen(j, "tokens"), 0);
	json_decref(j);
}
END_TEST

/* What the configuration refuses. */
START_TEST(test_conf)
{
	static const char *const bad[] = {
		/* shared by a user's choice */
		"clients = ({ name = \"a\"; token = \"" TOKEN_ALICE "\"; });\n"
		"servers = ({ name = \"u\"; transport = \"http\"; url = "
		"\"https://x.example/mcp\"; isolation = \"shared\"; oauth = "
		"{ identity = \"per-user\"; }; });\n",
		/* nobody to tell apart */
		"servers = ({ name = \"u\"; transport = \"http\"; url = "
		"\"https://x.example/mcp\"; oauth = "
		"{ identity = \"per-user\"; }; });\n",
		/* a machine identity */
		"clients = ({ name = \"a\"; token = \"" TOKEN_ALICE "\"; });\n"
		"servers = ({ name = \"u\"; transport = \"http\"; url = "
		"\"https://x.example/mcp\"; oauth = { client_id = \"c\"; "
		"client_secret = \"${env:HOME}\"; grant = "
		"\"client_credentials\"; identity = \"per-user\"; }; });\n",
		"clients = ({ name = \"a\"; token = \"" TOKEN_ALICE "\"; });\n"
		"servers = ({ name = \"u\"; transport = \"http\"; url = "
		"\"https://x.example/mcp\"; oauth = "
		"{ identity = \"each\"; }; });\n",
		/* not over ws (so far) */
		"clients = ({ name = \"a\"; token = \"" TOKEN_ALICE "\"; });\n"
		"servers = ({ name = \"u\"; transport = \"ws\"; url = "
		"\"wss://x.example/mcp\"; oauth = "
		"{ identity = \"per-user\"; }; });\n",
	};
	static const char *const want[] = {
		"isolation \"per-session\"", "needs authenticated clients",
		"not client_credentials", "identity must be",
		"only for the http transport"
	};
	struct conf	*c;
	char		 err[512], text[2048];
	size_t		 i;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		snprintf(text, sizeof text, SUP_BASE "%s", bad[i]);
		c = conf_parse(text, "t.conf", err, sizeof err);
		ck_assert_msg(c == NULL, "accepted: %s", bad[i]);
		ck_assert_msg(strstr(err, want[i]) != NULL, "%s", err);
	}
	snprintf(text, sizeof text, SUP_BASE
	    "auth_tokens = [ \"" TOKEN_ALICE "\" ];\n"
	    "servers = ({ name = \"u\"; transport = \"http\"; url = "
	    "\"https://x.example/mcp\"; oauth = "
	    "{ identity = \"per-user\"; }; });\n");
	c = conf_parse(text, "t.conf", err, sizeof err);
	ck_assert_msg(c != NULL, "%s", err);
	ck_assert_int_eq(c->servers[0].isolation, ISOLATION_PER_SESSION);
	ck_assert_int_eq(c->servers[0].oauth->identity, UPOAUTH_PER_USER);
	conf_free(c);
}
END_TEST

static Suite *
users_suite(void)
{
	Suite	*s = suite_create("uplogin_users");
	TCase	*tc = tcase_create("per-user");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_session_open);
	tcase_add_test(tc, test_callback);
	tcase_add_test(tc, test_logins_bounded);
	tcase_add_test(tc, test_link_proof);
	tcase_add_test(tc, test_url_checked);
	tcase_add_test(tc, test_tokens_revoke);
	tcase_add_test(tc, test_frames_refused);
	tcase_add_test(tc, test_conf);
	suite_add_tcase(s, tc);

	tc = tcase_create("https");
	tcase_add_checked_fixture(tc, setup_https, teardown);
	tcase_add_test(tc, test_https_cookie);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	return (sup_check_main(users_suite()));
}
