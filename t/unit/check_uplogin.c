/* SPDX-License-Identifier: ISC */
/*
 * The supervisor's half of an upstream's OAuth login (supervisor/
 * uplogin.c), with a stand-in for the worker: the state login fails calls
 * at once with the command to run and holds /readyz back only when
 * required; mcpctl login asks the worker, shows its URL, hands the
 * redirect that comes back to the callback (or a pasted one) to the
 * worker whose state it carries and refuses any other; the record the
 * worker saves is sealed under state_dir/oauth, given to the next worker
 * in its CONFIG, listed by tokens without a token, and dropped by
 * token_revoke (a DCR registration kept); the client metadata document is
 * served where client_metadata_url says.
 */
#include "config.h"

#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frame.h"
#include "supervisor.h"

#include "sup_check.h"

#define STATE_PARAM	"s0123456789abcdefghijklmnopqrstuvwxyzABCDEFG"
#define SECRET_AT	"at-SECRET-0001"
#define SECRET_RT	"rt-SECRET-0002"

static char	dir[64];
static char	conf_text[2048];

static void
setup(void)
{
	sup_tmpdir(dir, sizeof dir, "uplogin");
	snprintf(conf_text, sizeof conf_text, SUP_BASE
	    "state_dir = \"%s\";\n"
	    "oauth_client = { client_metadata_url = "
	    "\"https://gw.example.com/oauth/client.json\"; };\n"
	    "clients = ( { name = \"full\"; token = \"tok-full-0123456789\"; },\n"
	    "  { name = \"limited\"; token = \"tok-limited-0123456789\";\n"
	    "    deny = [ \"remote__*\" ]; } );\n"
	    "servers = (\n"
	    "  { name = \"remote\"; transport = \"http\";\n"
	    "    url = \"https://mcp.example.com/mcp\"; },\n"
	    "  { name = \"cc\"; transport = \"http\";\n"
	    "    url = \"https://cc.example.com/mcp\";\n"
	    "    oauth = { client_id = \"c\"; client_secret = "
	    "\"${env:HOME}\"; grant = \"client_credentials\"; }; },\n"
	    "  { name = \"local\"; transport = \"stdio\";\n"
	    "    command = [ \"/bin/true\" ]; }\n"
	    ");\n", dir);
	sup_manual("remote");
	sup_start(conf_text);
}

static void
teardown(void)
{
	sup_stop();
	sup_rmtree(dir);
}

/* Run an mcpctl command in-process: its reply (new). */
static json_t *
ctl(const char *cmd, const char *name, const char *response)
{
	json_t	*req, *reply;

	req = json_pack("{s:s, s:s*, s:s*}", "command", cmd, "name", name,
	    "response", response);
	reply = uplogin_control(cmd, req);
	json_decref(req);
	return (reply);
}

/* The remote upstream's worker says it waits for a login. */
static struct sup_worker *
login_state(void)
{
	struct sup_worker	*w = sup_worker("remote");

	ck_assert_ptr_nonnull(w);
	sup_send(w, MSG_HELLO, 0, 0, 0, "{\"version\":\"t\",\"pid\":1}");
	sup_send(w, MSG_STATUS, 0, 0, 0, "{\"state\":\"login\",\"error\":"
	    "\"login needed: run mcpctl login remote\"}");
	ck_assert_int_eq(upstream_find("remote")->state, UPSTREAM_LOGIN);
	return (w);
}

/* Start a login and have the worker give its URL. */
static void
login_waiting(struct sup_worker *w)
{
	json_t	*r;

	r = ctl("login", "remote", NULL);
	ck_assert_msg(json_is_true(json_object_get(r, "ok")), "%s",
	    sup_dump(r));
	json_decref(r);
	sup_run();
	ck_assert_ptr_nonnull(sup_take(w, MSG_OAUTH_LOGIN));
	r = ctl("login_status", "remote", NULL);
	ck_assert_jstr(r, "phase", "starting");
	json_decref(r);
	sup_send(w, MSG_OAUTH_PROGRESS, 0, 0, 0, "{\"phase\":\"url\",\"url\":"
	    "\"https://as.example.com/authorize?state=" STATE_PARAM "\","
	    "\"state\":\"" STATE_PARAM "\"}");
	r = ctl("login_status", "remote", NULL);
	ck_assert_jstr(r, "phase", "waiting");
	ck_assert_jstr(r, "url", "https://as.example.com/authorize?state="
	    STATE_PARAM);
	json_decref(r);
}

/* A session's call of remote__x: its answer (borrowed). */
static json_t *
call_remote(struct sup_client *cl)
{
	return (sup_rpc(cl, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"remote__x\","
	    "\"arguments\":{}}}"));
}

/* Calls fail at once saying what to run; status and readiness say it. */
START_TEST(test_login_state)
{
	struct sup_client	*cl;
	json_t			*a, *st;
	char			 why[256];

	login_state();
	cl = sup_session("tok-full-0123456789", NULL);
	a = call_remote(cl);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(strstr(sup_jstr(a, "error.message"),
	    "needs a login: mcpctl login remote"));
	/* A client that may not see it: an unknown tool, nothing more. */
	cl = sup_session("tok-limited-0123456789", NULL);
	a = call_remote(cl);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(strstr(sup_jstr(a, "error.message"),
	    "unknown tool"));
	st = upstream_status_json(upstream_find("remote"));
	ck_assert_jstr(st, "state", "login");
	ck_assert_jstr(st, "login_needed", "mcpctl login remote");
	json_decref(st);
	/* Not required: ready still (the others can serve). */
	ck_assert_int_ne(health_ready(why, sizeof why), 503);
}
END_TEST

/* The redirect reaches the worker whose state it carries, no other. */
START_TEST(test_callback)
{
	struct sup_worker	*w = login_state();
	struct sup_resp		*r;
	struct sup_frame	*f;
	json_t			*j;

	login_waiting(w);
	r = sup_http("GET", "/oauth/callback?code=c1&state=wrong", NULL, NULL);
	ck_assert_int_eq(r->status, 400);
	r = sup_http("GET", "/oauth/callback?code=c1", NULL, NULL);
	ck_assert_int_eq(r->status, 400);
	r = sup_http("POST", "/oauth/callback?code=c1&state=" STATE_PARAM,
	    NULL, "");
	ck_assert_int_eq(r->status, 405);
	ck_assert_ptr_null(sup_take(w, MSG_OAUTH_CODE));
	/* As long, one byte changed: another state. */
	r = sup_http("GET", "/oauth/callback?code=c1&state=s0123456789abcdef"
	    "ghijklmnopqrstuvwxyzABCDEH", NULL, NULL);
	ck_assert_int_eq(r->status, 400);
	r = sup_http("GET", "/oauth/callback?code=c1&state=s0123456789abcdef"
	    "ghijklmnopqrstuvwxyzABCDEFH", NULL, NULL);
	ck_assert_int_eq(r->status, 400);
	/* A state one byte short is another state. */
	r = sup_http("GET", "/oauth/callback?code=c1&state=s0123456789abcdef"
	    "ghijklmnopqrstuvwxyzABCDEF", NULL, NULL);
	ck_assert_int_eq(r->status, 400);
	r = sup_http("GET", "/oauth/callback?code=c1&state=" STATE_PARAM
	    "&iss=https%3A%2F%2Fas.example.com", NULL, NULL);
	ck_assert_int_eq(r->status, 200);
	ck_assert_ptr_nonnull(strstr(sup_body(r), "remote"));
	f = sup_take(w, MSG_OAUTH_CODE);
	ck_assert_ptr_nonnull(f);
	j = sup_frame_json(f);
	ck_assert_jstr(j, "response", "code=c1&state=" STATE_PARAM
	    "&iss=https%3A%2F%2Fas.example.com");
	json_decref(j);
	/* Answered: the same redirect again is refused. */
	r = sup_http("GET", "/oauth/callback?code=c1&state=" STATE_PARAM, NULL,
	    NULL);
	ck_assert_int_eq(r->status, 400);
	j = ctl("login_status", "remote", NULL);
	ck_assert_jstr(j, "phase", "exchanging");
	json_decref(j);
	sup_send(w, MSG_OAUTH_PROGRESS, 0, 0, 0, "{\"phase\":\"failed\","
	    "\"error\":\"token: invalid_grant\"}");
	j = ctl("login_status", "remote", NULL);
	ck_assert_jstr(j, "phase", "failed");
	ck_assert_jstr(j, "error", "token: invalid_grant");
	json_decref(j);
}
END_TEST

/* A pasted response goes the same way; only to a login that waits. */
START_TEST(test_pasted)
{
	struct sup_worker	*w = login_state();
	json_t			*j;

	j = ctl("login_code", "remote", "abc");
	ck_assert(json_is_false(json_object_get(j, "ok")));
	json_decref(j);
	login_waiting(w);
	j = ctl("login_code", "remote", "https://gw/cb?code=abc&state=x");
	ck_assert(json_is_true(json_object_get(j, "ok")));
	json_decref(j);
	sup_run();
	j = sup_frame_json(sup_take(w, MSG_OAUTH_CODE));
	ck_assert_jstr(j, "response", "https://gw/cb?code=abc&state=x");
	json_decref(j);
}
END_TEST

/* Who may log in: not stdio, not client credentials, not unknown. */
START_TEST(test_refused)
{
	json_t	*j;

	j = ctl("login", "local", NULL);
	ck_assert(json_is_false(json_object_get(j, "ok")));
	ck_assert_ptr_nonnull(strstr(sup_jstr(j, "error"), "stdio"));
	json_decref(j);
	j = ctl("login", "cc", NULL);
	ck_assert(json_is_false(json_object_get(j, "ok")));
	ck_assert_ptr_nonnull(strstr(sup_jstr(j, "error"),
	    "client credentials"));
	json_decref(j);
	j = ctl("login", "nosuch", NULL);
	ck_assert(json_is_false(json_object_get(j, "ok")));
	json_decref(j);
}
END_TEST

/* The record: sealed on disk, in the next CONFIG, listed without tokens. */
START_TEST(test_record)
{
	struct sup_worker	*w = login_state();
	struct stat		 st;
	json_t			*j, *t;
	char			 path[128];
	const char		*text;

	sup_send(w, MSG_OAUTH_SAVE, 0, 0, 0, "{\"record\":{\"v\":1,"
	    "\"resource\":\"https://mcp.example.com/mcp\",\"issuer\":"
	    "\"https://as.example.com\",\"client_id\":\"dyn-1\","
	    "\"client_secret\":\"cs-SECRET\",\"registered\":\"dcr\","
	    "\"access_token\":\"" SECRET_AT "\",\"refresh_token\":\""
	    SECRET_RT "\",\"expires_at\":4102444800,\"scope\":\"mcp:basic\","
	    "\"obtained\":1700000000}}");
	snprintf(path, sizeof path, "%s/oauth/key", dir);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 077, 0);
	j = ctl("tokens", NULL, NULL);
	text = sup_dump(j);
	ck_assert_ptr_null(strstr(text, "SECRET"));
	t = sup_jget(j, "tokens.0");
	ck_assert_jstr(t, "upstream", "remote");
	ck_assert_jstr(t, "token", "valid");
	ck_assert_jstr(t, "registered", "dcr");
	ck_assert_jstr(t, "scope", "mcp:basic");
	ck_assert(json_is_true(json_object_get(t, "refresh")));
	ck_assert(json_is_true(json_object_get(j, "stored")));
	json_decref(j);
	/* The next worker gets it in its CONFIG. */
	j = json_object();
	uplogin_config(upstream_find("remote"), j);
	ck_assert_jstr(j, "oauth_record.access_token", SECRET_AT);
	ck_assert_jstr(j, "oauth_client.client_metadata_url",
	    "https://gw.example.com/oauth/client.json");
	ck_assert_ptr_nonnull(strstr(sup_jstr(j, "oauth_client.redirect_uri"),
	    "/oauth/callback"));
	json_decref(j);
	/* Revoked: the tokens go, the registration stays; the worker told. */
	j = ctl("token_revoke", "remote", NULL);
	ck_assert(json_is_true(json_object_get(j, "ok")));
	json_decref(j);
	sup_run();
	ck_assert_ptr_nonnull(sup_take(w, MSG_OAUTH_REVOKE));
	j = ctl("tokens", NULL, NULL);
	ck_assert_jstr(j, "tokens.0.token", "none");
	ck_assert_jstr(j, "tokens.0.registered", "dcr");
	json_decref(j);
	/* Forgotten altogether. */
	sup_send(w, MSG_OAUTH_SAVE, 0, 0, 0, "{\"record\":null}");
	j = ctl("tokens", NULL, NULL);
	ck_assert_uint_eq(sup_jlen(j, "tokens"), 0);
	json_decref(j);
}
END_TEST

/* A record sealed is read back by an upstream that did not hold it. */
START_TEST(test_record_survives)
{
	struct sup_worker	*w = login_state();
	char			 other[2048], *p;
	json_t			*j;

	sup_send(w, MSG_OAUTH_SAVE, 0, 0, 0, "{\"record\":{\"v\":1,"
	    "\"issuer\":\"https://as.example.com\",\"registered\":\"config\","
	    "\"access_token\":\"" SECRET_AT "\"}}");
	/* Removed, then configured again: a new upstream, nothing held. */
	snprintf(other, sizeof other, "%s", conf_text);
	p = strstr(other, "\"remote\"");
	memcpy(p, "\"remot2\"", 8);
	json_decref(sup_reload(other));
	sup_run();
	ck_assert_ptr_null(upstream_find("remote"));
	json_decref(sup_reload(conf_text));
	sup_run();
	ck_assert_ptr_nonnull(upstream_find("remote"));
	j = ctl("tokens", NULL, NULL);
	ck_assert_jstr(j, "tokens.0.issuer", "https://as.example.com");
	ck_assert(json_is_false(sup_jget(j, "tokens.0.refresh")));
	ck_assert_jstr(j, "tokens.0.token", "valid");
	json_decref(j);
}
END_TEST

/* The Client ID Metadata Document, where its URL says. */
START_TEST(test_cimd)
{
	struct sup_resp	*r;
	json_t		*j;

	r = sup_http("GET", "/oauth/client.json", NULL, NULL);
	ck_assert_int_eq(r->status, 200);
	j = sup_json(r);
	ck_assert_ptr_nonnull(j);
	ck_assert_jstr(j, "client_id",
	    "https://gw.example.com/oauth/client.json");
	ck_assert_jstr(j, "token_endpoint_auth_method", "none");
	ck_assert_ptr_nonnull(strstr(sup_jstr(j, "redirect_uris.0"),
	    "/oauth/callback"));
	ck_assert_jstr(j, "grant_types.1", "refresh_token");
}
END_TEST

static Suite *
uplogin_suite(void)
{
	Suite	*s = suite_create("uplogin");
	TCase	*tc = tcase_create("login");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_login_state);
	tcase_add_test(tc, test_callback);
	tcase_add_test(tc, test_pasted);
	tcase_add_test(tc, test_refused);
	tcase_add_test(tc, test_record);
	tcase_add_test(tc, test_record_survives);
	tcase_add_test(tc, test_cimd);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	return (sup_check_main(uplogin_suite()));
}
