/* SPDX-License-Identifier: ISC */
/*
 * 2026-07-28 clients (supervisor/modern.c, continuation.c, modern_listen.c):
 * which POSTs claim the era, the envelope and header refusals, results
 * that say resultType and how long they keep, a 2025 upstream's requests
 * parked as input_required and continued by requestState rounds that are
 * good once, for the principal, method, name and arguments they were
 * minted for, and subscriptions/listen.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "supervisor.h"
#include "xmalloc.h"

#include "sup_check.h"

#define T1	"token-c1-0123456789abc"
#define T2	"token-c2-0123456789abc"
#define TRO	"token-ro-0123456789abc"

#define TOOL(n)	"{\"name\":\"" n "\",\"inputSchema\":{\"type\":\"object\"}}"

static const char conf_modern[] = SUP_BASE
    "request_state_ttl = 10;\n"
    "clients = (\n"
    "  { name = \"c1\"; token = \"" T1 "\"; metrics = true; },\n"
    "  { name = \"c2\"; token = \"" T2 "\"; },\n"
    "  { name = \"ro\"; token = \"" TRO "\";\n"
    "    allow = [ \"a__*\", \"mem://pub/*\" ]; }\n"
    ");\n"
    "servers = (\n"
    "  { name = \"a\"; transport = \"stdio\"; command = [ \"true\" ]; },\n"
    "  { name = \"c\"; transport = \"stdio\"; command = [ \"true\" ];\n"
    "    sampling = [ \"client\" ]; }\n"
    ");\n";

static const char sample[] = "\"method\":\"sampling/createMessage\","
    "\"params\":{\"messages\":[{\"role\":\"user\",\"content\":{\"type\":"
    "\"text\",\"text\":\"hi\"}}],\"maxTokens\":10}";

static void
setup(void)
{
	sup_catalog("a", "{\"tools\":[" TOOL("echo") "],\"resources\":["
	    "{\"uri\":\"mem://pub/x\",\"name\":\"x\"},"
	    "{\"uri\":\"mem://priv/y\",\"name\":\"y\"}]}");
	sup_catalog("c", "{\"tools\":[" TOOL("echo") "]}");
	sup_start(conf_modern);
}

static void
teardown(void)
{
	sup_stop();
}

/* POST a 2026-07-28 request at /mcp (sup_modern). */
static struct sup_resp *
modern(const char *token, const char *method, const char *name,
    const char *params, const char *caps, const char *more)
{
	return (sup_modern("/mcp", token, method, name, params, caps, more));
}

/* The metrics as c1 reads them. */
static const char *
metrics(void)
{
	struct sup_resp	*r;

	r = sup_http("GET", "/metrics", "Authorization: Bearer " T1 "\r\n",
	    NULL);
	ck_assert_int_eq(r->status, 200);
	return (sup_body(r));
}

/* A tools/call of a__echo with arguments and more params members. */
static struct sup_resp *
call(const char *token, const char *args, const char *more,
    const char *caps)
{
	char	params[4096];

	snprintf(params, sizeof params, "\"name\":\"a__echo\",\"arguments\":"
	    "%s%s", args, more != NULL ? more : "");
	return (modern(token, "tools/call", "a__echo", params, caps, NULL));
}

START_TEST(test_claims)
{
	struct sup_resp	*r;
	static const char env[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"tools/list\",\"params\":{\"_meta\":{"
	    "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
	    "\"io.modelcontextprotocol/clientCapabilities\":{}}}}";

	/* The envelope claims it: then the headers are required. */
	r = sup_http("POST", "/mcp", "Authorization: Bearer " T1 "\r\n"
	    "Content-Type: application/json\r\n"
	    "Accept: application/json, text/event-stream\r\n", env);
	ck_assert_int_eq(r->status, 400);
	ck_assert_error(sup_json(r), -32020);
	/* The header claims it: then the envelope is required. */
	r = sup_http("POST", "/mcp", "Authorization: Bearer " T1 "\r\n"
	    "Content-Type: application/json\r\n"
	    "Accept: application/json, text/event-stream\r\n"
	    "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\n",
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
	ck_assert_int_eq(r->status, 400);
	ck_assert_error(sup_json(r), -32602);
	/* Neither: a 2025 request, which needs its session. */
	r = sup_http("POST", "/mcp", "Authorization: Bearer " T1 "\r\n"
	    "Content-Type: application/json\r\n"
	    "Accept: application/json, text/event-stream\r\n"
	    "MCP-Protocol-Version: 2025-11-25\r\n",
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
	ck_assert_int_eq(r->status, 400);
	ck_assert_ptr_nonnull(strstr(sup_body(r), "Mcp-Session-Id"));
	/* Nor has it sessions to GET or DELETE. */
	ck_assert_int_eq(sup_http("GET", "/mcp", "Authorization: Bearer " T1
	    "\r\nAccept: text/event-stream\r\n"
	    "MCP-Protocol-Version: 2026-07-28\r\n", NULL)->status, 405);
}
END_TEST

START_TEST(test_refusals)
{
	struct sup_resp	*r;

	r = modern(T1, "tools/list", NULL, "", "[]", NULL);
	ck_assert_int_eq(r->status, 400);
	ck_assert_error(sup_json(r), -32602);
	r = modern(T1, "tools/call", NULL, "", NULL, "Mcp-Method: x\r\n");
	ck_assert_int_eq(r->status, 400);
	r = sup_http("POST", "/mcp", "Authorization: Bearer " T1 "\r\n"
	    "Content-Type: application/json\r\n"
	    "Accept: application/json, text/event-stream\r\n"
	    "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\n",
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\","
	    "\"params\":{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"
	    "\"2025-11-25\",\"io.modelcontextprotocol/clientCapabilities\":{}"
	    "}}}");
	ck_assert_int_eq(r->status, 400);
	ck_assert_error(sup_json(r), -32020);
	r = modern(T1, "tools/call", "a__other", "\"name\":\"a__echo\"", NULL,
	    NULL);
	ck_assert_int_eq(r->status, 400);
	ck_assert_error(sup_json(r), -32020);
	r = modern(T1, "tools/call", NULL, "\"name\":\"a__echo\"", NULL,
	    NULL);
	ck_assert_error(sup_json(r), -32020);
	/* An envelope given twice is no envelope. */
	r = call(T1, "{}", ",\"_meta\":{}", NULL);
	ck_assert_error(sup_json(r), -32602);
	r = modern(T1, "no/such", NULL, "", NULL, NULL);
	ck_assert_int_eq(r->status, 404);
	ck_assert_error(sup_json(r), -32601);
	r = modern(T1, "tools/list", NULL, "", "{}",
	    "X-Nothing: 1\r\n");
	ck_assert_int_eq(r->status, 200);
	ck_assert_ptr_null(sup_take(sup_worker("a"), MSG_REQUEST));
}
END_TEST

START_TEST(test_unsupported_version)
{
	struct sup_resp	*r;

	r = sup_http("POST", "/mcp", "Authorization: Bearer " T1 "\r\n"
	    "Content-Type: application/json\r\n"
	    "Accept: application/json, text/event-stream\r\n"
	    "MCP-Protocol-Version: 2027-01-01\r\nMcp-Method: tools/list\r\n",
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\","
	    "\"params\":{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"
	    "\"2027-01-01\",\"io.modelcontextprotocol/clientCapabilities\":{}"
	    "}}}");
	ck_assert_int_eq(r->status, 400);
	ck_assert_error(sup_json(r), -32022);
	ck_assert_jstr(sup_json(r), "error.data.requested", "2027-01-01");
	ck_assert_jstr(sup_json(r), "error.data.supported.0", "2026-07-28");
}
END_TEST

/* Lists say how long they keep, and for whom. */
START_TEST(test_lists)
{
	json_t	*a;

	a = sup_json(modern(T1, "tools/list", NULL, "", NULL, NULL));
	ck_assert_jstr(a, "result.resultType", "complete");
	ck_assert_jstr(a, "result.tools.0.name", "a__echo");
	ck_assert_jstr(a, "result.cacheScope", "public");
	ck_assert_jint(a, "result.ttlMs", 60000);
	/* A client whose lists are its own: private. */
	a = sup_json(modern(TRO, "resources/list", NULL, "", NULL, NULL));
	ck_assert_jstr(a, "result.cacheScope", "private");
	ck_assert_int_eq(sup_jlen(a, "result.resources"), 1);
	a = sup_json(modern(T1, "server/discover", NULL, "", NULL, NULL));
	ck_assert_jstr(a, "result.supportedVersions.0", "2026-07-28");
	ck_assert_jstr(a, "result.cacheScope", "public");
}
END_TEST

/* A call to a 2025 upstream, answered. */
START_TEST(test_call)
{
	struct sup_resp		*r;
	struct sup_frame	*f;

	r = call(T1, "{}", NULL, NULL);
	ck_assert_ptr_nonnull(f = sup_take(sup_worker("a"), MSG_REQUEST));
	sup_reply(sup_worker("a"), f, "{\"content\":[]}");
	ck_assert_int_eq(r->status, 200);
	ck_assert_jstr(sup_json(r), "id", "r1");
	ck_assert_result(sup_json(r));
}
END_TEST

/* Each principal's requests are its own (the workers are told apart). */
START_TEST(test_principals)
{
	struct sup_frame	*f1, *f2, *f3;

	call(T1, "{}", NULL, NULL);
	call(T2, "{}", NULL, NULL);
	call(T1, "{}", NULL, NULL);
	f1 = sup_take(sup_worker("a"), MSG_REQUEST);
	f2 = sup_take(sup_worker("a"), MSG_REQUEST);
	f3 = sup_take(sup_worker("a"), MSG_REQUEST);
	ck_assert_uint_ne(f1->session, f2->session);
	ck_assert_uint_eq(f1->session, f3->session);
	sup_reply(sup_worker("a"), f1, "{\"content\":[]}");
	sup_reply(sup_worker("a"), f2, "{\"content\":[]}");
	sup_reply(sup_worker("a"), f3, "{\"content\":[]}");
}
END_TEST

/* The internal session of a principal is no 2025 session. */
static void
modern_sid(struct session *s, void *arg)
{
	if (s->modern)
		snprintf(arg, 256, "%s", s->sid);
}

START_TEST(test_internal_session)
{
	struct sup_client	*cl = sup_client(T1);
	struct sup_frame	*f;

	call(T1, "{}", NULL, NULL);
	f = sup_take(sup_worker("a"), MSG_REQUEST);
	session_foreach(modern_sid, cl->sid);
	ck_assert_str_ne(cl->sid, "");
	ck_assert_int_eq(sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"ping\"}")->status, 404);
	ck_assert_int_eq(sup_get(cl, NULL)->status, 404);
	ck_assert_int_eq(sup_delete(cl)->status, 404);
	sup_reply(sup_worker("a"), f, "{\"content\":[]}");
}
END_TEST

/*
 * What a drain waits for: every client's session, and a principal's only
 * while a request of it is in flight; counted as sessions come and go.
 */
START_TEST(test_busy)
{
	struct sup_client	*cl[2];
	struct sup_frame	*f1, *f2;

	ck_assert_uint_eq(session_count_busy(), 0);
	cl[0] = sup_session(T1, NULL);
	cl[1] = sup_session(T2, NULL);
	ck_assert_uint_eq(session_count_busy(), 2);
	call(T1, "{}", NULL, NULL);
	call(T2, "{}", NULL, NULL);
	f1 = sup_take(sup_worker("a"), MSG_REQUEST);
	f2 = sup_take(sup_worker("a"), MSG_REQUEST);
	ck_assert_uint_eq(session_count(), 4);
	ck_assert_uint_eq(session_count_busy(), 4);
	sup_reply(sup_worker("a"), f1, "{\"content\":[]}");
	ck_assert_uint_eq(session_count_busy(), 3);
	ck_assert_int_eq(sup_delete(cl[0])->status, 200);
	ck_assert_uint_eq(session_count_busy(), 2);
	sup_reply(sup_worker("a"), f2, "{\"content\":[]}");
	ck_assert_uint_eq(session_count_busy(), 1);
	/* A principal's session ends (the gateway's stop): counted off. */
	session_free_all();
	sup_run();
	ck_assert_uint_eq(session_count(), 0);
	ck_assert_uint_eq(session_count_busy(), 0);
	cl[0] = sup_session(T1, NULL);
	call(T2, "{}", NULL, NULL);
	f1 = sup_take(sup_worker("a"), MSG_REQUEST);
	ck_assert_uint_eq(session_count_busy(), 2);
	sup_reply(sup_worker("a"), f1, "{\"content\":[]}");
	ck_assert_uint_eq(session_count_busy(), 1);
}
END_TEST

/*
 * A shared 2025 upstream is never told of roots: its roots/list during a
 * 2026-07-28 client's call is refused -32601, as for a 2025 client, not
 * put to the client by input_required.
 */
START_TEST(test_roots_shared)
{
	struct sup_resp		*r;
	struct sup_frame	*f, *u;

	r = call(T1, "{}", NULL, "{\"roots\":{}}");
	f = sup_take(sup_worker("a"), MSG_REQUEST);
	sup_send(sup_worker("a"), MSG_UP_REQUEST, 0, f->session, f->tag,
	    "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"roots/list\"}");
	ck_assert_ptr_nonnull(u = sup_take(sup_worker("a"), MSG_UP_RESPONSE));
	ck_assert_uint_eq(u->tag, 9);
	ck_assert_ptr_nonnull(strstr(u->text, "\"code\":-32601"));
	ck_assert(!r->done);
	sup_reply(sup_worker("a"), f, "{\"content\":[]}");
	ck_assert_result(sup_json(r));
}
END_TEST

/* The upstream asks the client: input_required, then the retry. */
START_TEST(test_input_required)
{
	struct sup_resp		*r, *again;
	struct sup_frame	*f, *u;
	char			 more[2048];
	json_t			*a;

	r = call(T1, "{\"x\":1}", NULL, "{\"sampling\":{}}");
	f = sup_take(sup_worker("a"), MSG_REQUEST);
	sup_send(sup_worker("a"), MSG_UP_REQUEST, 0, f->session, f->tag,
	    "{\"jsonrpc\":\"2.0\",\"id\":9,%s}", sample);
	a = sup_json(r);
	ck_assert_jstr(a, "result.resultType", "input_required");
	ck_assert_jstr(a, "result.inputRequests.sampling-1.method",
	    "sampling/createMessage");
	ck_assert_jint(a, "result.inputRequests.sampling-1.params.maxTokens",
	    10);
	ck_assert_ptr_nonnull(sup_jstr(a, "result.requestState"));
	/* The retry answers it, and gets the call's answer. */
	snprintf(more, sizeof more, ",\"requestState\":\"%s\","
	    "\"inputResponses\":{\"sampling-1\":{\"role\":\"assistant\","
	    "\"content\":{\"type\":\"text\",\"text\":\"ok\"},\"model\":\"m\"}}",
	    sup_jstr(a, "result.requestState"));
	r = call(T1, "{\"x\":1}", more, "{\"sampling\":{}}");
	ck_assert_ptr_nonnull(u = sup_take(sup_worker("a"), MSG_UP_RESPONSE));
	ck_assert_uint_eq(u->tag, 9);
	ck_assert_ptr_nonnull(strstr(u->text, "\"text\":\"ok\""));
	ck_assert_ptr_null(sup_take(sup_worker("a"), MSG_REQUEST));
	ck_assert(!r->done);
	/* Its token was good once, even while the call goes on. */
	again = call(T1, "{\"x\":1}", more, "{\"sampling\":{}}");
	ck_assert_error(sup_json(again), -32602);
	ck_assert_ptr_nonnull(strstr(sup_jstr(sup_json(again),
	    "error.message"), "already used"));
	ck_assert_ptr_null(sup_take(sup_worker("a"), MSG_UP_RESPONSE));
	sup_reply(sup_worker("a"), f, "{\"content\":[{\"type\":\"text\","
	    "\"text\":\"done\"}]}");
	ck_assert_jstr(sup_json(r), "result.content.0.text", "done");
	ck_assert_jstr(sup_json(r), "id", "r1");
	/* Its token was good once. */
	r = call(T1, "{\"x\":1}", more, "{\"sampling\":{}}");
	ck_assert_error(sup_json(r), -32602);
	ck_assert_ptr_nonnull(strstr(sup_jstr(sup_json(r), "error.message"),
	    "already used"));
}
END_TEST

/*
 * A client's parked calls count against its max_pending, those the
 * upstream answered while the client was asked too (they are no longer
 * pending, and one client could hold every place the gateway has).
 */
START_TEST(test_parked_quota)
{
	static const char	 conf_two[] = SUP_BASE
	    "request_state_ttl = 10;\nmax_pending = 2;\n"
	    "clients = ( { name = \"c1\"; token = \"" T1 "\"; } );\n"
	    "servers = ( { name = \"a\"; transport = \"stdio\";\n"
	    "    command = [ \"true\" ]; } );\n";
	struct sup_frame	*f, *u;
	struct sup_resp		*r;
	int			 i;

	json_decref(sup_reload(conf_two));
	for (i = 0; i < 3; i++) {
		r = call(T1, "{\"x\":1}", NULL, "{\"sampling\":{}}");
		ck_assert_ptr_nonnull(f = sup_take(sup_worker("a"),
		    MSG_REQUEST));
		sup_send(sup_worker("a"), MSG_UP_REQUEST, 0, f->session,
		    f->tag, "{\"jsonrpc\":\"2.0\",\"id\":9,%s}", sample);
		if (i == 2)
			break;
		ck_assert_jstr(sup_json(r), "result.resultType",
		    "input_required");
		/* Answered while its client is asked: no longer pending. */
		sup_reply(sup_worker("a"), f, "{\"content\":[]}");
	}
	/* The third is refused its place: the upstream is told. */
	ck_assert_ptr_nonnull(u = sup_take(sup_worker("a"), MSG_UP_RESPONSE));
	ck_assert_ptr_nonnull(strstr(u->text, "max_pending 2"));
	sup_reply(sup_worker("a"), f, "{\"content\":[]}");
	ck_assert_ptr_nonnull(sup_json(r));
}
END_TEST

/*
 * An error answer that came while its call was parked reaches the retry
 * as any answer's error does for a 2026-07-28 client: -32002 (resource
 * not found) is -32602 there (it went through as it was).
 */
START_TEST(test_parked_error)
{
	struct sup_resp		*r;
	struct sup_frame	*f;
	char			 more[2048];
	json_t			*a;

	r = call(T1, "{\"x\":1}", NULL, "{\"sampling\":{}}");
	f = sup_take(sup_worker("a"), MSG_REQUEST);
	sup_send(sup_worker("a"), MSG_UP_REQUEST, 0, f->session, f->tag,
	    "{\"jsonrpc\":\"2.0\",\"id\":9,%s}", sample);
	a = sup_json(r);
	ck_assert_jstr(a, "result.resultType", "input_required");
	snprintf(more, sizeof more, ",\"requestState\":\"%s\","
	    "\"inputResponses\":{\"sampling-1\":{\"role\":\"assistant\","
	    "\"content\":{\"type\":\"text\",\"text\":\"ok\"},\"model\":\"m\"}}",
	    sup_jstr(a, "result.requestState"));
	sup_reply_error(sup_worker("a"), f, -32002, "no such resource");
	r = call(T1, "{\"x\":1}", more, "{\"sampling\":{}}");
	ck_assert_error(sup_json(r), -32602);
	ck_assert_jstr(sup_json(r), "id", "r1");
}
END_TEST

/* A token serves its principal, method, name and arguments only. */
START_TEST(test_request_state_bound)
{
	struct sup_resp		*r;
	struct sup_frame	*f;
	char			 more[2048], bad[2048], token[1024];
	json_t			*a;
	size_t			 n;

	r = call(T1, "{\"x\":1}", NULL, "{\"sampling\":{}}");
	f = sup_take(sup_worker("a"), MSG_REQUEST);
	sup_send(sup_worker("a"), MSG_UP_REQUEST, 0, f->session, f->tag,
	    "{\"jsonrpc\":\"2.0\",\"id\":9,%s}", sample);
	a = sup_json(r);
	snprintf(token, sizeof token, "%s", sup_jstr(a,
	    "result.requestState"));
	snprintf(more, sizeof more, ",\"requestState\":\"%s\","
	    "\"inputResponses\":{\"sampling-1\":{\"role\":\"assistant\","
	    "\"content\":{\"type\":\"text\",\"text\":\"ok\"},\"model\":\"m\"}}",
	    token);
	/* Another principal. */
	r = call(T2, "{\"x\":1}", more, "{\"sampling\":{}}");
	ck_assert_error(sup_json(r), -32602);
	ck_assert_ptr_nonnull(strstr(sup_jstr(sup_json(r), "error.message"),
	    "does not belong"));
	/* Other arguments. */
	r = call(T1, "{\"x\":2}", more, "{\"sampling\":{}}");
	ck_assert_ptr_nonnull(strstr(sup_jstr(sup_json(r), "error.message"),
	    "does not belong"));
	/* A byte changed. */
	snprintf(bad, sizeof bad, "%s", more);
	n = strlen(",\"requestState\":\"") + strlen(token) - 3;
	bad[n] = bad[n] == 'A' ? 'B' : 'A';
	r = call(T1, "{\"x\":1}", bad, "{\"sampling\":{}}");
	ck_assert_error(sup_json(r), -32602);
	ck_assert_ptr_nonnull(strstr(sup_jstr(sup_json(r), "error.message"),
	    "failed verification"));
	ck_assert_ptr_null(sup_take(sup_worker("a"), MSG_UP_RESPONSE));
	/* Its own still works. */
	r = call(T1, "{\"x\":1}", more, "{\"sampling\":{}}");
	ck_assert_ptr_nonnull(sup_take(sup_worker("a"), MSG_UP_RESPONSE));
	sup_reply(sup_worker("a"), f, "{\"content\":[]}");
	ck_assert_result(sup_json(r));
}
END_TEST

/*
 * A client that cannot answer: the next strategy does (decline, by
 * default), or without one -32021 and the call is cancelled.
 */
START_TEST(test_missing_capability)
{
	struct sup_resp		*r;
	struct sup_frame	*f, *c, *u;

	r = call(T1, "{}", NULL, "{}");
	f = sup_take(sup_worker("a"), MSG_REQUEST);
	sup_send(sup_worker("a"), MSG_UP_REQUEST, 0, f->session, f->tag,
	    "{\"jsonrpc\":\"2.0\",\"id\":9,%s}", sample);
	ck_assert_ptr_nonnull(u = sup_take(sup_worker("a"), MSG_UP_RESPONSE));
	ck_assert_ptr_nonnull(strstr(u->text, "\"code\":-1"));
	ck_assert(!r->done);
	sup_reply(sup_worker("a"), f, "{\"content\":[]}");
	ck_assert_result(sup_json(r));

	r = modern(T1, "tools/call", "c__echo", "\"name\":\"c__echo\","
	    "\"arguments\":{}", "{}", NULL);
	f = sup_take(sup_worker("c"), MSG_REQUEST);
	sup_send(sup_worker("c"), MSG_UP_REQUEST, 0, f->session, f->tag,
	    "{\"jsonrpc\":\"2.0\",\"id\":9,%s}", sample);
	ck_assert_int_eq(r->status, 400);
	ck_assert_error(sup_json(r), -32021);
	ck_assert_ptr_nonnull(sup_jget(sup_json(r),
	    "error.data.requiredCapabilities.sampling"));
	ck_assert_ptr_nonnull(u = sup_take(sup_worker("c"), MSG_UP_RESPONSE));
	ck_assert_uint_eq(u->tag, 9);
	ck_assert_ptr_nonnull(c = sup_take(sup_worker("c"), MSG_CANCEL));
	ck_assert_uint_eq(c->tag, f->tag);
	/* Counted as refused, with its code, not as answered. */
	ck_assert_ptr_nonnull(strstr(metrics(), "mcp_supervisor_requests_total"
	    "{upstream=\"c\",method=\"tools/call\",outcome=\"refused\"} 1"));
}
END_TEST

/*
 * -32021 names what the request's params ask for at their top level: a
 * sampling request's tools, not a member named so deeper in them.
 */
START_TEST(test_missing_what)
{
	static const char *const params[] = {
	    "\"metadata\":{\"tools\":1},",
	    "\"tools\":[{\"name\":\"t\",\"inputSchema\":{\"type\":"
	    "\"object\"}}],"
	};
	struct sup_resp		*r;
	struct sup_frame	*f, *u;
	size_t			 i;

	for (i = 0; i < 2; i++) {
		r = modern(T1, "tools/call", "c__echo", "\"name\":\"c__echo\","
		    "\"arguments\":{}", "{}", NULL);
		f = sup_take(sup_worker("c"), MSG_REQUEST);
		sup_send(sup_worker("c"), MSG_UP_REQUEST, 0, f->session,
		    f->tag, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":"
		    "\"sampling/createMessage\",\"params\":{%s\"messages\":"
		    "[{\"role\":\"user\",\"content\":{\"type\":\"text\","
		    "\"text\":\"hi\"}}],\"maxTokens\":10}}", params[i]);
		ck_assert_error(sup_json(r), -32021);
		ck_assert_ptr_nonnull(sup_jget(sup_json(r),
		    "error.data.requiredCapabilities.sampling"));
		if (i == 0)
			ck_assert_ptr_null(sup_jget(sup_json(r),
			    "error.data.requiredCapabilities.sampling.tools"));
		else
			ck_assert_ptr_nonnull(sup_jget(sup_json(r),
			    "error.data.requiredCapabilities.sampling.tools"));
		ck_assert_ptr_nonnull(u = sup_take(sup_worker("c"),
		    MSG_UP_RESPONSE));
		ck_assert_ptr_nonnull(sup_take(sup_worker("c"), MSG_CANCEL));
	}
}
END_TEST

/* server/discover is answered by the gateway, and counted. */
START_TEST(test_discover_counted)
{
	struct sup_resp	*r;

	r = modern(T1, "server/discover", NULL, "", "{}", NULL);
	ck_assert_int_eq(r->status, 200);
	ck_assert_ptr_nonnull(sup_jget(sup_json(r), "result.supportedVersions"));
	ck_assert_ptr_nonnull(strstr(metrics(), "mcp_supervisor_requests_total"
	    "{upstream=\"(gateway)\",method=\"server/discover\","
	    "outcome=\"ok\"} 1"));
}
END_TEST

/* A client that never retries: the call is cancelled at the TTL. */
START_TEST(test_parked_ttl)
{
	struct sup_resp		*r;
	struct sup_frame	*f, *u, *c;
	char			 more[2048];

	r = call(T1, "{}", NULL, "{\"sampling\":{}}");
	f = sup_take(sup_worker("a"), MSG_REQUEST);
	sup_send(sup_worker("a"), MSG_UP_REQUEST, 0, f->session, f->tag,
	    "{\"jsonrpc\":\"2.0\",\"id\":9,%s}", sample);
	snprintf(more, sizeof more, ",\"requestState\":\"%s\"",
	    sup_jstr(sup_json(r), "result.requestState"));
	ck_assert_uint_eq(continuation_count(), 1);
	sup_advance(10);
	ck_assert_uint_eq(continuation_count(), 0);
	ck_assert_ptr_nonnull(c = sup_take(sup_worker("a"), MSG_CANCEL));
	ck_assert_uint_eq(c->tag, f->tag);
	ck_assert_ptr_nonnull(u = sup_take(sup_worker("a"), MSG_UP_RESPONSE));
	ck_assert_ptr_nonnull(strstr(u->text, "\"error\""));
	r = call(T1, "{}", more, "{\"sampling\":{}}");
	ck_assert_error(sup_json(r), -32602);
}
END_TEST

/* Closing a request's stream cancels it. */
START_TEST(test_close_cancels)
{
	struct sup_resp		*r;
	struct sup_frame	*f, *c;

	r = modern(T1, "tools/call", "a__echo", "\"name\":\"a__echo\","
	    "\"arguments\":{}", "{}", NULL);
	ck_assert_ptr_nonnull(f = sup_take(sup_worker("a"), MSG_REQUEST));
	sup_hangup(r->conn);
	ck_assert_ptr_nonnull(c = sup_take(sup_worker("a"), MSG_CANCEL));
	ck_assert_uint_eq(c->tag, f->tag);
}
END_TEST

/* Upstream a says a resource changed. */
static void
updated_a(const char *uri)
{
	sup_send(sup_worker("a"), MSG_NOTIFY, 0, 0, 0, "{\"jsonrpc\":\"2.0\","
	    "\"method\":\"notifications/resources/updated\",\"params\":"
	    "{\"uri\":\"%s\"}}", uri);
}

/* subscriptions/listen honours only what the client may read. */
START_TEST(test_listen)
{
	struct sup_resp	*r;

	r = modern(TRO, "subscriptions/listen", NULL, "\"notifications\":{"
	    "\"toolsListChanged\":true,\"resourceSubscriptions\":["
	    "\"mem://pub/x\",\"mem://priv/y\",\"mem://pub/../priv/y\","
	    "\"mem://none\"]}", NULL, NULL);
	ck_assert_int_eq(r->status, 200);
	ck_assert_str_eq(sup_ack_uris(r), "mem://pub/x");
	/* The upstream is subscribed for it, and its updates come. */
	sup_reply(sup_worker("a"), sup_take(sup_worker("a"), MSG_REQUEST),
	    "{}");
	updated_a("mem://priv/y");
	ck_assert_ptr_null(sup_find(r, "notifications/resources/updated"));
	updated_a("mem://pub/x");
	ck_assert_ptr_nonnull(sup_find(r, "notifications/resources/updated"));
	sup_hangup(r->conn);
	/* Unsubscribed once no listen wants it. */
	sup_reply(sup_worker("a"), sup_take(sup_worker("a"), MSG_REQUEST),
	    "{}");
}
END_TEST

/*
 * A listen whose reader stopped reading is cut off as it is sent to (a
 * modern stream ends at once, and its listen): the walk over the
 * session's listens goes on without it (it read the freed listen on: a
 * heap use after free under ASan), and the session's other listen hears
 * the rest.
 */
/* The listens of the modern session (there is one, ro's). */
static void
modern_listens(struct session *s, void *arg)
{
	if (s->modern)
		*(unsigned int *)arg = s->nlistens;
}

static unsigned int
nlistens(void)
{
	unsigned int	n = 0;

	session_foreach(modern_listens, &n);
	return (n);
}

START_TEST(test_listen_reader_cut)
{
	struct sup_frame *f;
	struct sup_resp	*r, *r2;
	char		*uri, *json, *params;
	int		 fd, i;
	size_t		 n;

	/* An 8000-byte URI: each update of it is as large. */
	uri = malloc(8001);
	memcpy(uri, "mem://pub/", 10);
	memset(uri + 10, 'x', 7990);
	uri[8000] = '\0';
	xasprintf(&json, "{\"tools\":[" TOOL("echo") "],\"resources\":["
	    "{\"uri\":\"%s\",\"name\":\"big\"}]}", uri);
	sup_catalog("a", json);
	free(json);
	xasprintf(&params, "\"notifications\":{\"toolsListChanged\":true,"
	    "\"resourceSubscriptions\":[\"%s\"]}", uri);
	r = modern(TRO, "subscriptions/listen", NULL, params, NULL, NULL);
	ck_assert_int_eq(r->status, 200);
	sup_reply(sup_worker("a"), sup_take(sup_worker("a"), MSG_REQUEST),
	    "{}");
	/* The principal's second listen, on the same URI. */
	r2 = modern(TRO, "subscriptions/listen", NULL, params, NULL, NULL);
	free(params);
	ck_assert_int_eq(r2->status, 200);
	ck_assert_uint_eq(nlistens(), 2);
	fd = r->conn->fd;
	r->conn->fd = -1;
	for (i = 0; i < 1200 && nlistens() == 2; i++)
		updated_a(uri);
	ck_assert_uint_eq(nlistens(), 1);
	r->conn->fd = fd;
	sup_hangup(r->conn);
	/* The other listen still hears. */
	n = sup_nfound(r2, "notifications/tools/list_changed");
	sup_catalog("a", "{\"tools\":[" TOOL("echo") "," TOOL("more") "]}");
	ck_assert_uint_eq(sup_nfound(r2, "notifications/tools/list_changed"),
	    n + 1);
	sup_hangup(r2->conn);
	/* The unsubscribe, once no listen wants the URI. */
	while ((f = sup_take(sup_worker("a"), MSG_REQUEST)) != NULL)
		sup_reply(sup_worker("a"), f, "{}");
	free(uri);
}
END_TEST

/* ro, allowed to read no resource any more. */
static const char conf_ro_narrowed[] = SUP_BASE
    "request_state_ttl = 10;\n"
    "clients = (\n"
    "  { name = \"c1\"; token = \"" T1 "\"; metrics = true; },\n"
    "  { name = \"c2\"; token = \"" T2 "\"; },\n"
    "  { name = \"ro\"; token = \"" TRO "\";\n"
    "    allow = [ \"a__*\" ]; }\n"
    ");\n"
    "servers = (\n"
    "  { name = \"a\"; transport = \"stdio\"; command = [ \"true\" ]; },\n"
    "  { name = \"c\"; transport = \"stdio\"; command = [ \"true\" ];\n"
    "    sampling = [ \"client\" ]; }\n"
    ");\n";

/* A filter that is not what the schema says is refused, as a flag that
 * is not a boolean is: an ignored one would acknowledge nothing. */
START_TEST(test_listen_bad_filter)
{
	static const char *const bad[] = {
		"\"notifications\":{\"resourceSubscriptions\":\"mem://pub/x\"}",
		"\"notifications\":{\"resourceSubscriptions\":{}}",
		("\"notifications\":{\"resourceSubscriptions\":[],"
		    "\"resourceSubscriptions\":[\"mem://pub/x\"]}"),
		"\"notifications\":{\"toolsListChanged\":1}",
	};
	struct sup_resp	*r;
	size_t		 i;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		r = modern(TRO, "subscriptions/listen", NULL, bad[i], NULL,
		    NULL);
		ck_assert_error(sup_answer(r), -32602);
	}
	ck_assert_ptr_null(sup_take(sup_worker("a"), MSG_REQUEST));
}
END_TEST

/* A reload that takes a URI from a client stops its open listen's
 * updates of it. */
START_TEST(test_listen_reload_denies)
{
	struct sup_resp	*r;
	json_t		*a;

	r = modern(TRO, "subscriptions/listen", NULL, "\"notifications\":{"
	    "\"resourceSubscriptions\":[\"mem://pub/x\"]}", NULL, NULL);
	ck_assert_str_eq(sup_ack_uris(r), "mem://pub/x");
	sup_reply(sup_worker("a"), sup_take(sup_worker("a"), MSG_REQUEST),
	    "{}");
	a = sup_reload(conf_ro_narrowed);
	ck_assert_msg(json_is_true(json_object_get(a, "ok")), "%s",
	    sup_dump(a));
	json_decref(a);
	updated_a("mem://pub/x");
	ck_assert_ptr_null(sup_find(r, "notifications/resources/updated"));
	sup_hangup(r->conn);
	sup_reply(sup_worker("a"), sup_take(sup_worker("a"), MSG_REQUEST),
	    "{}");
}
END_TEST

/*
 * A listen hears and lets go where its session's subscription is held:
 * the resource moved (a no longer lists it, c's template covers it)
 * while two listens held it; the second hears a's updates, and the last
 * to close unsubscribes a.
 */
START_TEST(test_listen_moved)
{
	struct sup_resp		*l1, *l2;
	struct sup_frame	*f;
	static const char	 want[] = "\"notifications\":{"
	    "\"resourceSubscriptions\":[\"mem://pub/x\"]}";

	l1 = modern(T1, "subscriptions/listen", NULL, want, NULL, NULL);
	ck_assert_int_eq(l1->status, 200);
	ck_assert_ptr_nonnull(f = sup_take(sup_worker("a"), MSG_REQUEST));
	ck_assert_ptr_nonnull(strstr(f->text, "resources/subscribe"));
	sup_reply(sup_worker("a"), f, "{}");
	sup_send(sup_worker("a"), MSG_CATALOG, 0, 0, 0, "{\"tools\":["
	    TOOL("echo") "]}");
	sup_send(sup_worker("c"), MSG_CATALOG, 0, 0, 0, "{\"tools\":["
	    TOOL("echo") "],\"resourceTemplates\":[{\"uriTemplate\":"
	    "\"mem://pub/{x}\",\"name\":\"m\"}]}");
	l2 = modern(T1, "subscriptions/listen", NULL, want, NULL, NULL);
	ck_assert_int_eq(l2->status, 200);
	ck_assert_ptr_null(sup_take(sup_worker("c"), MSG_REQUEST));
	sup_hangup(l1->conn);
	ck_assert_ptr_null(sup_take(sup_worker("a"), MSG_REQUEST));
	/* l2 hears the holder's updates. */
	updated_a("mem://pub/x");
	ck_assert_ptr_nonnull(sup_find(l2, "notifications/resources/updated"));
	sup_hangup(l2->conn);
	ck_assert_ptr_nonnull(f = sup_take(sup_worker("a"), MSG_REQUEST));
	ck_assert_ptr_nonnull(strstr(f->text, "resources/unsubscribe"));
	sup_reply(sup_worker("a"), f, "{}");
	ck_assert_ptr_null(sup_take(sup_worker("c"), MSG_REQUEST));
}
END_TEST


static const char upd_m[] = "notifications/resources/updated";
static const char want_x[] = "\"notifications\":{"
    "\"resourceSubscriptions\":[\"mem://pub/x\"]}";

/* Answer every request a worker has, noting the kind of each in log. */
static void
drain_requests(struct sup_worker *w, char *log, size_t len)
{
	struct sup_frame	*f;

	while (w != NULL && (f = sup_take(w, MSG_REQUEST)) != NULL) {
		if (log != NULL)
			strncat(log, strstr(f->text, "unsubscribe") ?
			    "unsub " : strstr(f->text, "subscribe") ?
			    "sub " : "other ", len - strlen(log) - 1);
		sup_reply(w, f, "{}");
	}
}

/*
 * An upstream that does not declare resources.subscribe sends no
 * updates: the acknowledgment leaves its URIs out, and it is not asked.
 */
START_TEST(test_listen_no_subscribe)
{
	struct sup_resp	*r;

	sup_catalog("a", "{\"resources\":[{\"uri\":\"mem://pub/x\","
	    "\"name\":\"x\"}]}");
	sup_status("a", "{\"capabilities\":{\"resources\":{\"listChanged\":"
	    "true}}}");
	sup_start(conf_modern);
	r = modern(T1, "subscriptions/listen", NULL, want_x, NULL, NULL);
	ck_assert_str_eq(sup_ack_uris(r), "");
	ck_assert_ptr_null(sup_take(sup_worker("a"), MSG_REQUEST));
	sup_hangup(r->conn);
}
END_TEST

static const char conf_ep_view[] = SUP_BASE
    "clients = ( { name = \"c1\"; token = \"" T1 "\"; } );\n"
    "endpoints = ( { path = \"/e/a\"; tools = [ \"*\" ];\n"
    "    resources = [ \"*\" ]; } );\n"
    "servers = (\n"
    "  { name = \"a\"; transport = \"stdio\"; command = [ \"true\" ]; },\n"
    "  { name = \"p\"; transport = \"stdio\"; command = [ \"true\" ];\n"
    "    isolation = \"per-session\"; init_timeout = 10; }\n"
    ");\n";
static const char conf_noep_view[] = SUP_BASE
    "clients = ( { name = \"c1\"; token = \"" T1 "\"; } );\n"
    "servers = (\n"
    "  { name = \"a\"; transport = \"stdio\"; command = [ \"true\" ]; },\n"
    "  { name = \"p\"; transport = \"stdio\"; command = [ \"true\" ];\n"
    "    isolation = \"per-session\"; init_timeout = 10; }\n"
    ");\n";
static const char want_p[] = "\"notifications\":{"
    "\"resourceSubscriptions\":[\"mem://p/r\"]}";

/* Start with a shared upstream a and a per-session p, whose instances
 * list the resource mem://p/r. */
static void
start_view(const char *text)
{
	sup_catalog("a", "{\"tools\":[" TOOL("echo") "]}");
	sup_session_catalog("p", "{\"resources\":[{\"uri\":\"mem://p/r\","
	    "\"name\":\"r\"}]}");
	sup_start(text);
}

/*
 * A principal's first request is a listen for a resource of its
 * per-session instance: it waits for the session's view, as a list
 * does, and honours it.
 */
START_TEST(test_listen_first_view)
{
	struct sup_resp	*l;

	start_view(conf_noep_view);
	l = modern(T1, "subscriptions/listen", NULL, want_p, NULL, NULL);
	ck_assert_str_eq(sup_ack_uris(l), "mem://p/r");
	drain_requests(sup_worker("p"), NULL, 0);
	sup_hangup(l->conn);
	drain_requests(sup_worker("p"), NULL, 0);
}
END_TEST

/* A reload removes the per-session upstream of a listen's URI: the
 * listen ends (its session's records found by a walk). */
START_TEST(test_listen_instance_removed)
{
	static const char	 conf_a[] = SUP_BASE
	    "clients = ( { name = \"c1\"; token = \"" T1 "\"; } );\n"
	    "servers = ( { name = \"a\"; transport = \"stdio\"; "
	    "command = [ \"true\" ]; } );\n";
	struct sup_resp		*l;

	start_view(conf_noep_view);
	l = modern(T1, "subscriptions/listen", NULL, want_p, NULL, NULL);
	ck_assert_str_eq(sup_ack_uris(l), "mem://p/r");
	drain_requests(sup_worker("p"), NULL, 0);
	json_decref(sup_reload(conf_a));
	sup_run();
	ck_assert(l->done);
	ck_assert_jstr(sup_answer(l), "result.resultType", "complete");
}
END_TEST

/*
 * The session of a listen holding a subscription at its per-session
 * instance ends (a reload removes its endpoint): nothing is sent for it
 * after its requests were cancelled (an unsubscribe was, left pending for
 * the freed session: heap use after free under ASan at its answer).
 */
START_TEST(test_listen_session_end)
{
	struct sup_resp		*l;
	struct sup_frame	*f;
	struct sup_worker	*wp;

	start_view(conf_ep_view);
	wp = sup_worker("p");
	l = sup_modern("/e/a", T1, "subscriptions/listen", NULL, want_p,
	    NULL, NULL);
	ck_assert_str_eq(sup_ack_uris(l), "mem://p/r");
	ck_assert_ptr_nonnull(f = sup_take(wp, MSG_REQUEST));
	ck_assert_ptr_nonnull(strstr(f->text, "resources/subscribe"));
	sup_reply(wp, f, "{}");
	json_decref(sup_reload(conf_noep_view));
	sup_run();
	ck_assert_uint_eq(session_count(), 0);
	ck_assert_uint_eq(upstream_find("p")->npending, 0);
	ck_assert_ptr_null(sup_take(wp, MSG_REQUEST));
}
END_TEST

static const char conf_no_a[] = SUP_BASE
    "clients = (\n"
    "  { name = \"c1\"; token = \"" T1 "\"; metrics = true; }\n"
    ");\n"
    "servers = (\n"
    "  { name = \"c\"; transport = \"stdio\"; command = [ \"true\" ];\n"
    "    sampling = [ \"client\" ]; }\n"
    ");\n";

/*
 * A reload removes the upstream of a listen's URI: the listen ends with
 * its result (its client listens again), instead of staying open,
 * acknowledged and deaf; nothing is let go at the removed upstream.
 */
START_TEST(test_listen_upstream_removed)
{
	struct sup_resp	*l;
	char		 log[256] = "";

	setup();
	l = modern(T1, "subscriptions/listen", NULL, want_x, NULL, NULL);
	ck_assert_ptr_nonnull(sup_ack_uris(l));
	drain_requests(sup_worker("a"), log, sizeof log);
	ck_assert_str_eq(log, "sub ");
	ck_assert(!l->done);
	json_decref(sup_reload(conf_no_a));
	sup_run();
	ck_assert_ptr_null(upstream_find("a"));
	ck_assert(l->done);
	ck_assert_jstr(sup_answer(l), "result.resultType", "complete");
	ck_assert_uint_eq(sup_nfound(l, upd_m), 0);
}
END_TEST

/*
 * The upstream restarts while a listen is open: subscribed again, its
 * update heard, and let go once when the listen closes.
 */
START_TEST(test_listen_restart)
{
	struct sup_resp	*l;
	char		 log[256] = "";

	setup();
	l = modern(T1, "subscriptions/listen", NULL, want_x, NULL, NULL);
	drain_requests(sup_worker("a"), log, sizeof log);
	sup_exit(sup_worker("a"), 1 << 8);
	sup_advance(5);
	drain_requests(sup_worker("a"), log, sizeof log);
	sup_send(sup_worker("a"), MSG_NOTIFY, 0, 0, 0, "{\"jsonrpc\":\"2.0\","
	    "\"method\":\"%s\",\"params\":{\"uri\":\"mem://pub/x\"}}", upd_m);
	ck_assert_uint_eq(sup_nfound(l, upd_m), 1);
	sup_hangup(l->conn);
	drain_requests(sup_worker("a"), log, sizeof log);
	ck_assert_str_eq(log, "sub sub unsub ");
}
END_TEST

static Suite *
modern_suite(void)
{
	Suite	*s = suite_create("modern");
	TCase	*tc = tcase_create("modern");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_claims);
	tcase_add_test(tc, test_refusals);
	tcase_add_test(tc, test_unsupported_version);
	tcase_add_test(tc, test_lists);
	tcase_add_test(tc, test_call);
	tcase_add_test(tc, test_principals);
	tcase_add_test(tc, test_internal_session);
	tcase_add_test(tc, test_busy);
	tcase_add_test(tc, test_input_required);
	tcase_add_test(tc, test_parked_quota);
	tcase_add_test(tc, test_parked_error);
	tcase_add_test(tc, test_request_state_bound);
	tcase_add_test(tc, test_missing_capability);
	tcase_add_test(tc, test_missing_what);
	tcase_add_test(tc, test_roots_shared);
	tcase_add_test(tc, test_discover_counted);
	tcase_add_test(tc, test_parked_ttl);
	tcase_add_test(tc, test_close_cancels);
	tcase_add_test(tc, test_listen);
	tcase_add_test(tc, test_listen_moved);
	tcase_add_test(tc, test_listen_reload_denies);
	tcase_add_test(tc, test_listen_bad_filter);
	tcase_add_test(tc, test_listen_reader_cut);
	suite_add_tcase(s, tc);
	tc = tcase_create("listens");
	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, test_listen_no_subscribe);
	tcase_add_test(tc, test_listen_first_view);
	tcase_add_test(tc, test_listen_session_end);
	tcase_add_test(tc, test_listen_instance_removed);
	tcase_add_test(tc, test_listen_upstream_removed);
	tcase_add_test(tc, test_listen_restart);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	return (sup_check_main(modern_suite()));
}
