/* SPDX-License-Identifier: ISC */
/*
 * The supervisor's side of the OAuth issuers' workers (supervisor/idp.c),
 * with stand-ins for mcp-idp: a key set is taken only if it parses here
 * too, and a bad one or a server down leaves the one we have; a refresh
 * reaches the worker once however many ask while it runs, and not again
 * within 30 s; waiters are answered once, never from inside the call,
 * within 5 s, and not at all once cancelled; introspections are
 * tag-matched, time out, fail when the worker dies; check says CRITICAL
 * for an issuer without keys and WARNING for one unreachable with keys.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "frame.h"
#include "jose.h"
#include "supervisor.h"

#include "sup_check.h"

#define ISS	"https://idp.example.com/realms/x"
#define ISS2	"https://other.example.com"

/* Two public keys (P-256, Ed25519), as a provider publishes them. */
#define KEY_EC	"{\"kty\":\"EC\",\"use\":\"sig\",\"kid\":\"es-1\"," \
	"\"alg\":\"ES256\",\"crv\":\"P-256\"," \
	"\"x\":\"vNI5n-Pm9pQI4iFokVMWzcdd2rGzl1ZtG6uPHlW-WkI\"," \
	"\"y\":\"Ux47o1DDJDuLKe51UHt7rnAiL0qUwbNdlgxsIZJm9Z0\"}"
#define KEY_ED	"{\"kty\":\"OKP\",\"use\":\"sig\",\"kid\":\"ed-1\"," \
	"\"alg\":\"EdDSA\",\"crv\":\"Ed25519\"," \
	"\"x\":\"bfVseMrw5WBMmR9Wvv0r4hATUyMqT-SmiM7l0tNN3xY\"}"

static const char conf_issuers[] = SUP_BASE
    "oauth = { resource = \"https://mcp.example.com\";\n"
    "  issuers = ( { issuer = \"" ISS "\";\n"
    "      introspection = { client_id = \"gw\";\n"
    "        client_secret = \"${env:SUP_IDP_SECRET}\"; }; },\n"
    "    { issuer = \"" ISS2 "\"; } ); };\n"
    "servers = ( { name = \"a\"; transport = \"stdio\";\n"
    "    command = [ \"true\" ]; } );\n";

static void
setup(void)
{
	setenv("SUP_IDP_SECRET", "s3cret-for-introspection", 1);
	sup_start(conf_issuers);
}

static void
teardown(void)
{
	sup_stop();
}

/* The worker sends a key set of these keys. */
static void
send_keys(struct sup_worker *w, const char *keys)
{
	sup_send(w, MSG_IDP_KEYS, 0, 0, 0, "{\"jwks\":{\"keys\":[%s]},"
	    "\"fetched\":1,\"metadata\":{\"issuer\":\"" ISS "\"}}", keys);
}

/* An issuer's entry of mcpctl status. */
static json_t *
issuer_status(const char *iss)
{
	static json_t	*all;
	json_t		*d;
	size_t		 i;

	json_decref(all);
	all = idp_status_json();
	json_array_foreach(all, i, d) {
		if (strcmp(json_string_value(json_object_get(d, "issuer")),
		    iss) == 0)
			return (d);
	}
	ck_abort_msg("no issuer %s", iss);
	return (NULL);
}

static unsigned int	fired[8];

static void
refreshed(void *arg)
{
	fired[(size_t)arg]++;
}

START_TEST(test_keys)
{
	struct sup_worker	*w = sup_provider(ISS);
	struct idp		*d = idp_find(ISS);
	json_t			*cfg;
	struct sup_frame	*f;

	ck_assert_ptr_nonnull(w);
	ck_assert_ptr_nonnull(d);
	ck_assert_ptr_eq(idp_nth(0), d);
	ck_assert_ptr_eq(idp_nth(1), idp_find(ISS2));
	ck_assert_ptr_null(idp_nth(2));
	ck_assert_ptr_null(idp_find(ISS "/"));
	ck_assert_str_eq(idp_conf(d)->issuer, ISS);
	/* The secret, expanded from our environment, only in CONFIG. */
	ck_assert_ptr_nonnull(f = sup_take(w, MSG_CONFIG));
	cfg = sup_frame_json(f);
	ck_assert_jstr(cfg, "issuer.issuer", ISS);
	ck_assert_jstr(cfg, "issuer.introspection.client_secret",
	    "s3cret-for-introspection");
	ck_assert_jstr(cfg, "issuer.introspection.auth",
	    "client_secret_basic");
	json_decref(cfg);
	cfg = idp_status_json();
	ck_assert_ptr_null(strstr(sup_dump(cfg), "s3cret"));
	json_decref(cfg);

	ck_assert_ptr_null(idp_jwks(d));
	send_keys(w, KEY_EC "," KEY_ED);
	ck_assert_ptr_nonnull(idp_jwks(d));
	ck_assert_uint_eq(jose_jwks_count(idp_jwks(d)), 2);
	ck_assert(jose_jwks_has_kid(idp_jwks(d), "ed-1"));
	ck_assert_jint(issuer_status(ISS), "keys", 2);
	ck_assert(json_is_true(json_object_get(issuer_status(ISS),
	    "reachable")));

	/* A set that does not parse here is refused: the old one stays. */
	send_keys(w, "{\"kty\":\"oct\",\"k\":\"c2VjcmV0\"}");
	ck_assert_uint_eq(jose_jwks_count(idp_jwks(d)), 2);
	ck_assert(json_is_false(json_object_get(issuer_status(ISS),
	    "reachable")));
	ck_assert_jstr(issuer_status(ISS), "last_error",
	    "the key set is refused: no usable key of 1; key 0: a symmetric "
	    "(oct) key");

	/* The server down: the keys stay, and the error is shown. */
	send_keys(w, KEY_EC);
	ck_assert_uint_eq(jose_jwks_count(idp_jwks(d)), 1);
	sup_send(w, MSG_IDP_STATUS, 0, 0, 0, "{\"ok\":false,\"error\":"
	    "\"keys at https://idp.example.com/certs: Couldn't connect to "
	    "server\",\"jwks_fetches\":7}");
	ck_assert_uint_eq(jose_jwks_count(idp_jwks(d)), 1);
	ck_assert_jint(issuer_status(ISS), "jwks_fetches", 7);
	ck_assert_jstr(issuer_status(ISS), "last_error",
	    "keys at https://idp.example.com/certs: Couldn't connect to "
	    "server");

	/* The worker dies: the keys stay too. */
	sup_kill(w);
	sup_run();
	ck_assert_uint_eq(jose_jwks_count(idp_jwks(d)), 1);
}
END_TEST

START_TEST(test_refresh_once)
{
	struct sup_worker	*w = sup_provider(ISS);
	struct idp		*d = idp_find(ISS);

	send_keys(w, KEY_EC);
	/* Three ask while one fetch runs: one REFRESH, no answer yet. */
	idp_refresh(d, refreshed, (void *)0);
	idp_refresh(d, refreshed, (void *)1);
	idp_refresh(d, refreshed, (void *)2);
	ck_assert_uint_eq(fired[0] + fired[1] + fired[2], 0);
	sup_run();
	ck_assert_uint_eq(sup_count(w, MSG_IDP_REFRESH), 1);
	ck_assert_uint_eq(fired[0] + fired[1] + fired[2], 0);
	/* The new keys answer every one of them, once. */
	send_keys(w, KEY_EC "," KEY_ED);
	ck_assert_uint_eq(fired[0], 1);
	ck_assert_uint_eq(fired[1], 1);
	ck_assert_uint_eq(fired[2], 1);
	ck_assert(jose_jwks_has_kid(idp_jwks(d), "ed-1"));
	/* Within 30 s: not asked, answered at the next turn. */
	idp_refresh(d, refreshed, (void *)3);
	ck_assert_uint_eq(fired[3], 0);
	sup_run();
	ck_assert_uint_eq(fired[3], 1);
	ck_assert_uint_eq(sup_count(w, MSG_IDP_REFRESH), 1);
	ck_assert_jint(issuer_status(ISS), "refreshes", 1);
	ck_assert_jint(issuer_status(ISS), "refreshes_limited", 1);
	/* A later answer fires nothing more. */
	send_keys(w, KEY_EC);
	sup_send(w, MSG_IDP_STATUS, 0, 0, 0, "{\"ok\":true}");
	ck_assert_uint_eq(fired[0] + fired[1] + fired[2] + fired[3], 4);
}
END_TEST

START_TEST(test_refresh_failed_timeout_cancel)
{
	struct sup_worker	*w = sup_provider(ISS), *w2 = sup_provider(ISS2);
	uint64_t		 h;

	/* The fetch failed: STATUS answers the waiters. */
	idp_refresh(idp_find(ISS), refreshed, (void *)0);
	sup_run();
	sup_send(w, MSG_IDP_STATUS, 0, 0, 0, "{\"ok\":false,\"error\":"
	    "\"keys: HTTP 503\"}");
	ck_assert_uint_eq(fired[0], 1);
	/* A worker that does not answer: 5 s, then the waiter goes on. */
	idp_refresh(idp_find(ISS2), refreshed, (void *)1);
	h = idp_refresh(idp_find(ISS2), refreshed, (void *)2);
	idp_wait_cancel(idp_find(ISS2), h);
	sup_advance(4);
	ck_assert_uint_eq(fired[1], 0);
	sup_advance(5);
	ck_assert_uint_eq(fired[1], 1);
	ck_assert_uint_eq(fired[2], 0);
	ck_assert_uint_eq(sup_count(w2, MSG_IDP_REFRESH), 1);
}
END_TEST

START_TEST(test_refresh_bounded)
{
	struct sup_worker	*w = sup_provider(ISS);
	struct idp		*d = idp_find(ISS);
	unsigned int		 i;

	for (i = 0; i < 1024; i++)
		idp_refresh(d, refreshed, (void *)0);
	/* The 1025th is not kept waiting: answered at the next turn. */
	idp_refresh(d, refreshed, (void *)1);
	sup_run();
	ck_assert_uint_eq(fired[0], 0);
	ck_assert_uint_eq(fired[1], 1);
	ck_assert_uint_eq(sup_count(w, MSG_IDP_REFRESH), 1);
	/* The worker dies: every waiter is answered. */
	sup_kill(w);
	sup_run();
	ck_assert_uint_eq(fired[0], 1024);
}
END_TEST

static json_t		*answer;
static const char	*answer_error;	/* NULL, or error_text */
static char		 error_text[256];
static unsigned int	 answers;

/* Both are borrowed for the call: kept as copies. */
static void
introspected(void *arg, json_t *a, const char *error)
{
	answers++;
	json_decref(answer);
	answer = a != NULL ? json_deep_copy(a) : NULL;
	answer_error = NULL;
	if (error != NULL) {
		snprintf(error_text, sizeof error_text, "%s", error);
		answer_error = error_text;
	}
}

START_TEST(test_introspect)
{
	struct sup_worker	*w = sup_provider(ISS);
	struct sup_frame	*f, *g;
	json_t			*o;
	uint64_t		 h;

	/* No introspection configured. */
	ck_assert_uint_eq(idp_introspect(idp_find(ISS2), "tok", introspected,
	    NULL), 0);
	ck_assert_uint_ne(idp_introspect(idp_find(ISS), "opaque-token-1",
	    introspected, NULL), 0);
	ck_assert_uint_ne(idp_introspect(idp_find(ISS), "opaque-token-2",
	    introspected, NULL), 0);
	sup_run();
	ck_assert_ptr_nonnull(f = sup_take(w, MSG_IDP_INTROSPECT));
	ck_assert_ptr_nonnull(g = sup_take(w, MSG_IDP_INTROSPECT));
	ck_assert_uint_ne(f->tag, g->tag);
	o = sup_frame_json(f);
	ck_assert_jstr(o, "token", "opaque-token-1");
	json_decref(o);
	/* Answered out of order, each to its own; a stray tag ignored. */
	sup_send(w, MSG_IDP_INTROSPECTED, 0, 0, g->tag + 100,
	    "{\"active\":true}");
	ck_assert_uint_eq(answers, 0);
	sup_send(w, MSG_IDP_INTROSPECTED, 0, 0, g->tag,
	    "{\"error\":\"introspection: HTTP 401\"}");
	ck_assert_uint_eq(answers, 1);
	ck_assert_ptr_null(answer);
	ck_assert_str_eq(answer_error, "introspection: HTTP 401");
	sup_send(w, MSG_IDP_INTROSPECTED, 0, 0, f->tag,
	    "{\"active\":true,\"sub\":\"alice\"}");
	ck_assert_uint_eq(answers, 2);
	ck_assert_ptr_null(answer_error);
	ck_assert_jstr(answer, "sub", "alice");

	/* No answer: 5 s.  Cancelled: never. */
	idp_introspect(idp_find(ISS), "t3", introspected, NULL);
	h = idp_introspect(idp_find(ISS), "t4", introspected, NULL);
	idp_wait_cancel(idp_find(ISS), h);
	sup_advance(6);
	ck_assert_uint_eq(answers, 3);
	ck_assert_str_eq(answer_error,
	    "the issuer's worker did not answer in time");

	/* The worker dies: what waits fails; then no worker, at once. */
	idp_introspect(idp_find(ISS), "t5", introspected, NULL);
	sup_run();
	sup_kill(w);
	sup_run();
	ck_assert_uint_eq(answers, 4);
	ck_assert_str_eq(answer_error, "the issuer's worker exited");
	idp_introspect(idp_find(ISS), "t6", introspected, NULL);
	ck_assert_uint_eq(answers, 4);
	sup_run();
	ck_assert_uint_eq(answers, 5);
	ck_assert_str_eq(answer_error, "the issuer's worker is not running");
	json_decref(answer);
	answer = NULL;
}
END_TEST

START_TEST(test_health)
{
	json_t	*problems = json_array(), *warnings = json_array();

	/* No keys yet: both are critical. */
	idp_health(problems, warnings);
	ck_assert_uint_eq(json_array_size(problems), 2);
	ck_assert_str_eq(json_string_value(json_array_get(problems, 0)),
	    "issuer " ISS " has no keys: none fetched yet");
	json_array_clear(problems);
	send_keys(sup_provider(ISS), KEY_EC);
	send_keys(sup_provider(ISS2), KEY_EC);
	idp_health(problems, warnings);
	ck_assert_uint_eq(json_array_size(problems), 0);
	ck_assert_uint_eq(json_array_size(warnings), 0);
	/* Unreachable with keys: a warning. */
	sup_send(sup_provider(ISS2), MSG_IDP_STATUS, 0, 0, 0, "{\"ok\":false,"
	    "\"error\":\"keys: HTTP 500\"}");
	idp_health(problems, warnings);
	ck_assert_uint_eq(json_array_size(problems), 0);
	ck_assert_uint_eq(json_array_size(warnings), 1);
	ck_assert_msg(strncmp(json_string_value(json_array_get(warnings, 0)),
	    "issuer " ISS2 " is unreachable (keys: HTTP 500); its 1 keys of ",
	    60) == 0, "%s", json_string_value(json_array_get(warnings, 0)));
	json_decref(problems);
	json_decref(warnings);
}
END_TEST

START_TEST(test_reload)
{
	json_t	*r;

	send_keys(sup_provider(ISS), KEY_EC "," KEY_ED);
	/* ISS2 goes, ISS stays with its keys, a third comes. */
	r = sup_reload(SUP_BASE
	    "oauth = { resource = \"https://mcp.example.com\";\n"
	    "  issuers = ( { issuer = \"" ISS "\";\n"
	    "      introspection = { client_id = \"gw\";\n"
	    "        client_secret = \"${env:SUP_IDP_SECRET}\"; }; },\n"
	    "    { issuer = \"https://third.example.com\"; } ); };\n"
	    "servers = ( { name = \"a\"; transport = \"stdio\";\n"
	    "    command = [ \"true\" ]; } );\n");
	ck_assert_jstr(r, "summary", "added issuer https://third.example.com; "
	    "removed issuer " ISS2);
	json_decref(r);
	sup_run();
	ck_assert_ptr_null(idp_find(ISS2));
	ck_assert_ptr_nonnull(idp_find("https://third.example.com"));
	ck_assert_uint_eq(jose_jwks_count(idp_jwks(idp_find(ISS))), 2);
	/* Its worker was not restarted: one CONFIG. */
	ck_assert_uint_eq(sup_count(sup_provider(ISS), MSG_CONFIG), 1);
}
END_TEST

static Suite *
issuers_suite(void)
{
	Suite	*s = suite_create("issuers");
	TCase	*tc = tcase_create("idp");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_keys);
	tcase_add_test(tc, test_refresh_once);
	tcase_add_test(tc, test_refresh_failed_timeout_cancel);
	tcase_add_test(tc, test_refresh_bounded);
	tcase_add_test(tc, test_introspect);
	tcase_add_test(tc, test_health);
	tcase_add_test(tc, test_reload);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	return (sup_check_main(issuers_suite()));
}
