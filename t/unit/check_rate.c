/* SPDX-License-Identifier: ISC */
/*
 * Rate limits (supervisor/rate.c): a token bucket per principal holds a
 * greedy client to its rate while a polite one is served; a shared rule
 * on a tool glob holds everyone together; what is refused gets -32003
 * with the rule and when to retry, reaches no upstream, and is counted.
 * A rule's concurrent holds a principal (or everyone) to its calls in
 * flight, each given back once however its call ends.  The buckets'
 * clock is the test's (rate_clock).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "frame.h"
#include "supervisor.h"

#include "sup_check.h"

#define TOKEN_GREEDY	"token-greedy-0123456789"
#define TOKEN_POLITE	"token-polite-0123456789"
#define TOKEN_ANON	"token-anon-01234567890"

static const char conf_rate[] = SUP_BASE
    "auth_tokens = [ \"" TOKEN_ANON "\" ];\n"
    "clients = (\n"
    "  { name = \"greedy\"; token = \"" TOKEN_GREEDY "\"; },\n"
    "  { name = \"polite\"; token = \"" TOKEN_POLITE "\"; }\n"
    ");\n"
    "rate_limits = (\n"
    "  { name = \"per-client\"; rate = 2; burst = 3; },\n"
    "  { name = \"search\"; upstream = \"a\"; tool = \"a__search*\";\n"
    "    rate = 0.5; burst = 1; shared = true; }\n"
    ");\n"
    "servers = (\n"
    "  { name = \"a\"; transport = \"stdio\"; command = [ \"true\" ]; }\n"
    ");\n";

static const char catalog_a[] = "{\"tools\":[{\"name\":\"echo\","
    "\"inputSchema\":{\"type\":\"object\"}},{\"name\":\"search\","
    "\"inputSchema\":{\"type\":\"object\"}}]}";

static int64_t	fake_now = 1000000;

static int64_t
fake_clock(void)
{
	return (fake_now);
}

static void
setup(void)
{
	rate_clock = fake_clock;
	sup_catalog("a", catalog_a);
	sup_start(conf_rate);
}

static void
teardown(void)
{
	sup_stop();
}

/* Call a tool; answer it at the worker if it got there.  The answer. */
static json_t *
call(struct sup_client *cl, const char *tool, int id)
{
	struct sup_worker	*w = sup_worker("a");
	struct sup_resp		*r;
	struct sup_frame	*f;

	r = sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"%s\",\"arguments\":{}}}",
	    id, tool);
	if ((f = sup_take(w, MSG_REQUEST)) != NULL)
		sup_reply(w, f, "{\"content\":[]}");
	return (sup_answer(r));
}

static int
metrics_has(const char *line)
{
	struct sup_resp	*r = sup_http("GET", "/metrics", "Authorization: "
	    "Bearer " TOKEN_ANON "\r\n", NULL);

	return (r->status == 200 && strstr(sup_body(r), line) != NULL);
}

/* A greedy client is held to its rate; a polite one is served. */
START_TEST(test_per_principal)
{
	struct sup_client	*greedy = sup_session(TOKEN_GREEDY, NULL);
	struct sup_client	*polite = sup_session(TOKEN_POLITE, NULL);
	struct sup_worker	*w = sup_worker("a");
	json_t			*a;
	int			 i;

	/* Its burst goes through, the next is refused. */
	for (i = 0; i < 3; i++)
		ck_assert_result(call(greedy, "a__echo", i));
	a = call(greedy, "a__echo", 3);
	ck_assert_error(a, -32003);
	ck_assert_jstr(a, "error.data.reason", "rate_limited");
	ck_assert_jstr(a, "error.data.limit", "per-client");
	ck_assert_jint(a, "error.data.retryAfter", 1);
	ck_assert_ptr_nonnull(strstr(sup_jstr(a, "error.message"),
	    "rate limit per-client: more than 2 calls per second (burst 3)"));
	ck_assert_uint_eq(sup_count(w, MSG_REQUEST), 3);
	/* The other principal has its own bucket. */
	for (i = 0; i < 3; i++)
		ck_assert_result(call(polite, "a__echo", 10 + i));
	/* Half a second is one more call at 2 a second, not two. */
	fake_now += 500;
	ck_assert_result(call(greedy, "a__echo", 4));
	ck_assert_error(call(greedy, "a__echo", 5), -32003);
	/* A long pause fills the bucket to its burst, no more. */
	fake_now += 60000;
	for (i = 0; i < 3; i++)
		ck_assert_result(call(greedy, "a__echo", 20 + i));
	ck_assert_error(call(greedy, "a__echo", 23), -32003);
	ck_assert(metrics_has("mcp_supervisor_rate_limited_total"
	    "{limit=\"per-client\"} 3\n"));
	ck_assert(metrics_has("mcp_supervisor_rate_limit_passed_total"
	    "{limit=\"per-client\"} 10\n"));
	ck_assert_uint_eq(sup_count(w, MSG_REQUEST), 10);
}
END_TEST

/* A shared rule on a tool glob: one bucket for everyone, other tools
 * not concerned; a call takes a token from every rule or from none. */
START_TEST(test_shared_glob)
{
	struct sup_client	*greedy = sup_session(TOKEN_GREEDY, NULL);
	struct sup_client	*polite = sup_session(TOKEN_POLITE, NULL);
	json_t			*a;

	ck_assert_result(call(greedy, "a__search", 1));
	a = call(polite, "a__search", 2);
	ck_assert_error(a, -32003);
	ck_assert_jstr(a, "error.data.limit", "search");
	ck_assert_jint(a, "error.data.retryAfter", 2);
	ck_assert_ptr_nonnull(strstr(sup_jstr(a, "error.message"),
	    "for everyone"));
	/* Refused by search, polite's per-client bucket was not spent. */
	ck_assert_result(call(polite, "a__echo", 3));
	ck_assert_result(call(polite, "a__echo", 4));
	ck_assert_result(call(polite, "a__echo", 5));
	ck_assert_error(call(polite, "a__echo", 6), -32003);
	fake_now += 2000;
	ck_assert_result(call(greedy, "a__search", 7));
}
END_TEST

/* A client without a name is counted by its token; status says all. */
START_TEST(test_principals_status)
{
	struct sup_client	*anon = sup_session(TOKEN_ANON, NULL);
	struct session		*s;
	json_t			*a;
	char			 p[256];
	int			 i;

	for (i = 0; i < 3; i++)
		ck_assert_result(call(anon, "a__echo", i));
	ck_assert_error(call(anon, "a__echo", 3), -32003);
	s = session_first();
	rate_principal(s, p, sizeof p);
	ck_assert_msg(strncmp(p, "token ", 6) == 0, "principal %s", p);
	a = rate_status_json();
	ck_assert_jstr(a, "0.name", "per-client");
	ck_assert_jint(a, "0.limited", 1);
	ck_assert_jint(a, "0.passed", 3);
	ck_assert_jint(a, "1.passed", 0);
	json_decref(a);
}
END_TEST

/* A 2026-07-28 tools/call (one JSON answer): its tokens as any, and a
 * refusal at HTTP 429 with Retry-After. */
static struct sup_resp *
modern_call(const char *token, int id)
{
	char	h[512], body[1024];

	snprintf(h, sizeof h, "Content-Type: application/json\r\n"
	    "Accept: application/json, text/event-stream\r\n"
	    "Authorization: Bearer %s\r\nMCP-Protocol-Version: 2026-07-28\r\n"
	    "Mcp-Method: tools/call\r\nMcp-Name: a__echo\r\n", token);
	snprintf(body, sizeof body, "{\"jsonrpc\":\"2.0\",\"id\":%d,"
	    "\"method\":\"tools/call\",\"params\":{\"name\":\"a__echo\","
	    "\"arguments\":{},\"_meta\":{"
	    "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
	    "\"io.modelcontextprotocol/clientCapabilities\":{}}}}", id);
	return (sup_http("POST", "/mcp", h, body));
}

START_TEST(test_modern_429)
{
	struct sup_worker	*w = sup_worker("a");
	struct sup_resp		*r;
	struct sup_frame	*f;
	int			 i;

	for (i = 0; i < 3; i++) {
		r = modern_call(TOKEN_GREEDY, i);
		ck_assert_ptr_nonnull(f = sup_take(w, MSG_REQUEST));
		sup_reply(w, f, "{\"content\":[]}");
		ck_assert_int_eq(r->status, 200);
		ck_assert_result(sup_answer(r));
		ck_assert_ptr_null(sup_header(r, "Retry-After"));
	}
	r = modern_call(TOKEN_GREEDY, 3);
	ck_assert_int_eq(r->status, 429);
	ck_assert_str_eq(sup_header(r, "Retry-After"), "1");
	ck_assert_error(sup_answer(r), -32003);
	ck_assert_jstr(sup_answer(r), "error.data.reason", "rate_limited");
	ck_assert_ptr_null(sup_take(w, MSG_REQUEST));
	/* Another principal's goes on at 200. */
	r = modern_call(TOKEN_POLITE, 4);
	ck_assert_ptr_nonnull(f = sup_take(w, MSG_REQUEST));
	sup_reply(w, f, "{\"content\":[]}");
	ck_assert_int_eq(r->status, 200);
}
END_TEST

/* A 2025 session's refusal is a JSON-RPC error in its answer, at 200. */
START_TEST(test_session_200)
{
	struct sup_client	*greedy = sup_session(TOKEN_GREEDY, NULL);
	struct sup_resp		*r;
	int			 i;

	for (i = 0; i < 3; i++)
		ck_assert_result(call(greedy, "a__echo", i));
	r = sup_post(greedy, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"a__echo\",\"arguments\":"
	    "{}}}");
	ck_assert_int_eq(r->status, 200);
	ck_assert_error(sup_answer(r), -32003);
}
END_TEST

/* A reload takes the new rules, every bucket full. */
START_TEST(test_reload)
{
	struct sup_client	*greedy = sup_session(TOKEN_GREEDY, NULL);
	char			 text[2048];
	int			 i;

	for (i = 0; i < 3; i++)
		ck_assert_result(call(greedy, "a__echo", i));
	ck_assert_error(call(greedy, "a__echo", 3), -32003);
	snprintf(text, sizeof text, "%s", conf_rate);
	memcpy(strstr(text, "burst = 3"), "burst = 5", 9);
	json_decref(sup_reload(text));
	for (i = 0; i < 5; i++)
		ck_assert_result(call(greedy, "a__echo", 10 + i));
	ck_assert_error(call(greedy, "a__echo", 15), -32003);
}
END_TEST

/*
 * concurrent = N: calls in flight, per principal or shared.  "calls"
 * comes first so that a call refused by "two-each" is seen not to take
 * its token.
 */
static const char conf_conc[] = SUP_BASE
    "request_timeout = 20;\n"
    "auth_tokens = [ \"" TOKEN_ANON "\" ];\n"
    "clients = (\n"
    "  { name = \"greedy\"; token = \"" TOKEN_GREEDY "\"; },\n"
    "  { name = \"polite\"; token = \"" TOKEN_POLITE "\"; }\n"
    ");\n"
    "rate_limits = (\n"
    "  { name = \"calls\"; rate = 1; burst = 3; client = \"greedy\"; },\n"
    "  { name = \"two-each\"; concurrent = 2; },\n"
    "  { name = \"slow\"; tool = \"*__slow\"; concurrent = 1;\n"
    "    shared = true; }\n"
    ");\n"
    "servers = (\n"
    "  { name = \"a\"; transport = \"stdio\"; command = [ \"true\" ]; },\n"
    "  { name = \"b\"; transport = \"stdio\"; command = [ \"true\" ];\n"
    "    max_concurrent = 1; max_queued = 4; queue_timeout = 5; },\n"
    "  { name = \"c\"; transport = \"stdio\"; command = [ \"true\" ];\n"
    "    max_concurrent = 1; max_queued = 0; }\n"
    ");\n";

static const char catalog_slow[] = "{\"tools\":[{\"name\":\"echo\","
    "\"inputSchema\":{\"type\":\"object\"}},{\"name\":\"slow\","
    "\"inputSchema\":{\"type\":\"object\"}}]}";

static void
setup_conc(void)
{
	rate_clock = fake_clock;
	sup_catalog("a", catalog_slow);
	sup_catalog("b", catalog_slow);
	sup_catalog("c", catalog_slow);
	sup_start(conf_conc);
}

/* Post a call and leave it unanswered: its response (not done). */
static struct sup_resp *
hold(struct sup_client *cl, const char *tool, int id)
{
	return (sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"%s\",\"arguments\":{}}}",
	    id, tool));
}

/* A rule's member in mcpctl status. */
static long long
rule_int(size_t i, const char *member)
{
	json_t		*a = rate_status_json();
	char		 path[64];
	long long	 v;

	snprintf(path, sizeof path, "%zu.%s", i, member);
	v = sup_jint(a, path);
	json_decref(a);
	return (v);
}

/* A refusal for calls in flight, by rule. */
static void
assert_conc_refused(json_t *a, const char *rule)
{
	ck_assert_error(a, -32003);
	ck_assert_jstr(a, "error.data.reason", "concurrency_limited");
	ck_assert_jstr(a, "error.data.limit", rule);
	ck_assert_jint(a, "error.data.retryAfter", 1);
}

/* Two held calls fill a principal's rule; the third is refused and
 * takes no token; an answer gives a slot back; another principal is
 * counted apart. */
START_TEST(test_conc_per_principal)
{
	struct sup_client	*greedy = sup_session(TOKEN_GREEDY, NULL);
	struct sup_client	*polite = sup_session(TOKEN_POLITE, NULL);
	struct sup_worker	*w = sup_worker("a");
	struct sup_resp		*r[4];
	struct sup_frame	*f1, *f2;
	json_t			*a;

	r[0] = hold(greedy, "a__echo", 1);
	r[1] = hold(greedy, "a__echo", 2);
	ck_assert_ptr_nonnull(f1 = sup_take(w, MSG_REQUEST));
	ck_assert_ptr_nonnull(f2 = sup_take(w, MSG_REQUEST));
	ck_assert(!r[0]->done && !r[1]->done);
	a = sup_answer(hold(greedy, "a__echo", 3));
	assert_conc_refused(a, "two-each");
	ck_assert_ptr_nonnull(strstr(sup_jstr(a, "error.message"),
	    "rate limit two-each: more than 2 calls in flight"));
	ck_assert_uint_eq(sup_count(w, MSG_REQUEST), 2);
	/* Another principal has its own count. */
	r[2] = hold(polite, "a__echo", 4);
	r[3] = hold(polite, "a__echo", 5);
	ck_assert_uint_eq(sup_count(w, MSG_REQUEST), 4);
	ck_assert_ptr_nonnull(sup_take(w, MSG_REQUEST));
	ck_assert_ptr_nonnull(sup_take(w, MSG_REQUEST));
	assert_conc_refused(sup_answer(hold(polite, "a__echo", 6)),
	    "two-each");
	ck_assert_int_eq(rule_int(1, "in_flight"), 4);
	ck_assert_int_eq(rule_int(1, "concurrent"), 2);
	ck_assert_int_eq(rule_int(1, "concurrency_limited"), 2);
	ck_assert(metrics_has("mcp_supervisor_rate_limit_in_flight"
	    "{limit=\"two-each\"} 4\n"));
	ck_assert(metrics_has("mcp_supervisor_rate_limited_total"
	    "{limit=\"two-each\"} 2\n"));
	/* An answer gives greedy's slot back; the refused call took none
	 * of its three tokens of "calls". */
	sup_reply(w, f1, "{\"content\":[]}");
	ck_assert_result(sup_answer(r[0]));
	ck_assert_int_eq(rule_int(1, "in_flight"), 3);
	ck_assert_result(call(greedy, "a__echo", 7));
	ck_assert_int_eq(rule_int(0, "passed"), 3);
	ck_assert_int_eq(rule_int(0, "limited"), 0);
	/* An error answer gives one back too. */
	sup_reply_error(w, f2, -32000, "no");
	ck_assert_error(sup_answer(r[1]), -32000);
	ck_assert_int_eq(rule_int(1, "in_flight"), 2);
}
END_TEST

/* A shared rule counts everyone's calls together, other tools apart. */
START_TEST(test_conc_shared)
{
	struct sup_client	*greedy = sup_session(TOKEN_GREEDY, NULL);
	struct sup_client	*polite = sup_session(TOKEN_POLITE, NULL);
	struct sup_worker	*w = sup_worker("a");
	struct sup_resp		*r;
	struct sup_frame	*f;
	json_t			*a;

	r = hold(greedy, "a__slow", 1);
	ck_assert_ptr_nonnull(f = sup_take(w, MSG_REQUEST));
	a = sup_answer(hold(polite, "a__slow", 2));
	assert_conc_refused(a, "slow");
	ck_assert_ptr_nonnull(strstr(sup_jstr(a, "error.message"),
	    "for everyone"));
	ck_assert_result(call(polite, "a__echo", 3));
	ck_assert_int_eq(rule_int(2, "in_flight"), 1);
	sup_reply(w, f, "{\"content\":[]}");
	ck_assert_result(sup_answer(r));
	ck_assert_int_eq(rule_int(2, "in_flight"), 0);
	ck_assert_result(call(polite, "a__slow", 4));
}
END_TEST

/* A slot comes back once when a call is cancelled, times out, its
 * session ends, its upstream dies, or it fails in the upstream's queue;
 * a call its upstream's queue refuses takes none. */
START_TEST(test_conc_ends)
{
	struct sup_client	*cl = sup_session(TOKEN_POLITE, NULL);
	struct sup_client	*c2;
	struct sup_worker	*w = sup_worker("a");
	struct sup_resp		*r;

	/* Cancelled by its client. */
	hold(cl, "a__echo", 1);
	hold(cl, "a__echo", 2);
	ck_assert_int_eq(rule_int(1, "in_flight"), 2);
	ck_assert_int_eq(sup_post(cl, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/cancelled\",\"params\":{\"requestId\":1}}")->
	    status, 202);
	ck_assert_int_eq(rule_int(1, "in_flight"), 1);
	/* Timed out. */
	sup_advance(20);
	ck_assert_int_eq(rule_int(1, "in_flight"), 0);
	/* Its session ended. */
	c2 = sup_session(TOKEN_POLITE, NULL);
	hold(c2, "a__echo", 3);
	hold(c2, "a__echo", 4);
	assert_conc_refused(sup_answer(hold(cl, "a__echo", 5)), "two-each");
	ck_assert_int_eq(sup_delete(c2)->status, 200);
	ck_assert_int_eq(rule_int(1, "in_flight"), 0);
	/* Waiting in b's queue counts; failing there gives it back. */
	hold(cl, "b__echo", 6);
	r = hold(cl, "b__echo", 7);
	ck_assert(!r->done);
	ck_assert_int_eq(rule_int(1, "in_flight"), 2);
	assert_conc_refused(sup_answer(hold(cl, "a__echo", 8)), "two-each");
	sup_advance(5);
	ck_assert_error(sup_answer(r), -32003);
	ck_assert_jstr(sup_answer(r), "error.data.reason", "queue_timeout");
	ck_assert_int_eq(rule_int(1, "in_flight"), 1);
	sup_advance(20);
	ck_assert_int_eq(rule_int(1, "in_flight"), 0);
	/* c has no queue: one call in flight, the next refused there. */
	hold(cl, "c__echo", 11);
	r = hold(cl, "c__echo", 12);
	ck_assert_error(sup_answer(r), -32003);
	ck_assert_jstr(sup_answer(r), "error.data.reason", "queue_full");
	ck_assert_int_eq(rule_int(1, "in_flight"), 1);
	sup_advance(20);
	ck_assert_int_eq(rule_int(1, "in_flight"), 0);
	/* Its upstream died. */
	hold(cl, "a__echo", 9);
	hold(cl, "a__echo", 10);
	ck_assert_int_eq(rule_int(1, "in_flight"), 2);
	sup_kill(w);
	sup_run();
	ck_assert_int_eq(rule_int(1, "in_flight"), 0);
	ck_assert(metrics_has("mcp_supervisor_rate_limit_in_flight"
	    "{limit=\"two-each\"} 0\n"));
}
END_TEST

/* A 2026-07-28 call over its rule is answered at HTTP 429. */
START_TEST(test_conc_modern_429)
{
	struct sup_worker	*w = sup_worker("a");
	struct sup_resp		*r[3];
	struct sup_frame	*f;

	r[0] = modern_call(TOKEN_POLITE, 1);
	r[1] = modern_call(TOKEN_POLITE, 2);
	ck_assert_uint_eq(sup_count(w, MSG_REQUEST), 2);
	r[2] = modern_call(TOKEN_POLITE, 3);
	ck_assert_int_eq(r[2]->status, 429);
	ck_assert_str_eq(sup_header(r[2], "Retry-After"), "1");
	assert_conc_refused(sup_answer(r[2]), "two-each");
	ck_assert_uint_eq(sup_count(w, MSG_REQUEST), 2);
	ck_assert_ptr_nonnull(f = sup_take(w, MSG_REQUEST));
	sup_reply(w, f, "{\"content\":[]}");
	ck_assert_int_eq(r[0]->status, 200);
	r[2] = modern_call(TOKEN_POLITE, 4);
	ck_assert_uint_eq(sup_count(w, MSG_REQUEST), 3);
	ck_assert(!r[2]->done);
}
END_TEST

/* A reload flipping a rule's "shared" counts the calls in flight as
 * they are: the principal's own, then everyone's. */
START_TEST(test_conc_reload_shared)
{
	struct sup_client	*greedy = sup_session(TOKEN_GREEDY, NULL);
	struct sup_client	*polite = sup_session(TOKEN_POLITE, NULL);
	struct sup_worker	*w = sup_worker("a");
	struct sup_frame	*f1, *f3;
	char			 text[4096], *at;

	snprintf(text, sizeof text, "%s", conf_conc);
	at = strstr(text, "shared = true; }");
	memcpy(at, "shared = false;}", 16);
	hold(greedy, "a__slow", 1);
	ck_assert_ptr_nonnull(f1 = sup_take(w, MSG_REQUEST));
	json_decref(sup_reload(text));
	/* Per principal now: greedy's call still counts for greedy. */
	assert_conc_refused(sup_answer(hold(greedy, "a__slow", 2)), "slow");
	hold(polite, "a__slow", 3);
	ck_assert_ptr_nonnull(f3 = sup_take(w, MSG_REQUEST));
	ck_assert_int_eq(rule_int(2, "in_flight"), 2);
	sup_reply(w, f1, "{\"content\":[]}");
	/* Shared again: polite's call counts for everyone. */
	json_decref(sup_reload(conf_conc));
	assert_conc_refused(sup_answer(hold(greedy, "a__slow", 4)), "slow");
	sup_reply(w, f3, "{\"content\":[]}");
	ck_assert_int_eq(rule_int(2, "in_flight"), 0);
	ck_assert_result(call(greedy, "a__slow", 5));
}
END_TEST

/* A reload keeps the calls in flight of a rule it keeps by name, even
 * moved or changed; a rule dropped and added again starts afresh. */
START_TEST(test_conc_reload)
{
	struct sup_client	*cl = sup_session(TOKEN_POLITE, NULL);
	struct sup_worker	*w = sup_worker("a");
	struct sup_frame	*f[3];
	char			 text[4096];
	char			*at;
	json_t			*a;

	hold(cl, "a__echo", 1);
	hold(cl, "a__echo", 2);
	ck_assert_ptr_nonnull(f[0] = sup_take(w, MSG_REQUEST));
	ck_assert_ptr_nonnull(f[1] = sup_take(w, MSG_REQUEST));
	/* "calls" dropped: two-each is rule 0 now, and allows 3. */
	snprintf(text, sizeof text, "%s", conf_conc);
	at = strstr(text, "  { name = \"calls\"");
	memmove(at, strchr(at, '\n') + 1, strlen(strchr(at, '\n') + 1) + 1);
	memcpy(strstr(text, "concurrent = 2"), "concurrent = 3", 14);
	json_decref(sup_reload(text));
	a = rate_status_json();
	ck_assert_str_eq(sup_jstr(a, "0.name"), "two-each");
	json_decref(a);
	ck_assert_int_eq(rule_int(0, "in_flight"), 2);
	hold(cl, "a__echo", 3);
	ck_assert_ptr_nonnull(f[2] = sup_take(w, MSG_REQUEST));
	assert_conc_refused(sup_answer(hold(cl, "a__echo", 4)), "two-each");
	ck_assert_int_eq(rule_int(0, "in_flight"), 3);
	sup_reply(w, f[0], "{\"content\":[]}");
	ck_assert_int_eq(rule_int(0, "in_flight"), 2);
	/* Dropped, a call it counted ends uncounted; added back while one
	 * is still in flight, it counts that one again. */
	snprintf(text, sizeof text, "%s", conf_conc);
	at = strstr(text, "rate_limits = (");
	memmove(at, strstr(at, "servers = ("), strlen(strstr(at,
	    "servers = (")) + 1);
	json_decref(sup_reload(text));
	ck_assert_int_eq(json_array_size(a = rate_status_json()), 0);
	json_decref(a);
	sup_reply(w, f[1], "{\"content\":[]}");
	json_decref(sup_reload(conf_conc));
	ck_assert_int_eq(rule_int(1, "in_flight"), 1);
	sup_reply(w, f[2], "{\"content\":[]}");
	ck_assert_int_eq(rule_int(1, "in_flight"), 0);
}
END_TEST

static Suite *
rate_suite(void)
{
	Suite	*s = suite_create("rate");
	TCase	*tc = tcase_create("rate");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_per_principal);
	tcase_add_test(tc, test_shared_glob);
	tcase_add_test(tc, test_principals_status);
	tcase_add_test(tc, test_reload);
	tcase_add_test(tc, test_modern_429);
	tcase_add_test(tc, test_session_200);
	suite_add_tcase(s, tc);
	tc = tcase_create("concurrent");
	tcase_add_checked_fixture(tc, setup_conc, teardown);
	tcase_add_test(tc, test_conc_per_principal);
	tcase_add_test(tc, test_conc_shared);
	tcase_add_test(tc, test_conc_ends);
	tcase_add_test(tc, test_conc_modern_429);
	tcase_add_test(tc, test_conc_reload);
	tcase_add_test(tc, test_conc_reload_shared);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	return (sup_check_main(rate_suite()));
}
