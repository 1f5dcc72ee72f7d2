/* SPDX-License-Identifier: ISC */
/*
 * Requests from upstreams to clients (supervisor/route_up.c, sampling.c):
 * they reach the client whose call caused them and only one that declared
 * what they need, or the next strategy answers (defaults, decline, an
 * llm: provider, another upstream's tool:); the client's answer, error,
 * refusal or silence goes back to the upstream that asked; cancellations
 * both ways; nothing is ever guessed.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "frame.h"
#include "supervisor.h"

#include "sup_check.h"

#define TOOL(n)	"{\"name\":\"" n "\",\"inputSchema\":{\"type\":\"object\"}}"

static const char conf_sampling[] = SUP_BASE
    "max_pending = 2;\n"
    "server_request_timeout = 20;\n"
    "llm = ( { name = \"local\"; provider = \"ollama\";\n"
    "    url = \"http://127.0.0.1:11434\"; model = \"m\"; },\n"
    "  { name = \"other\"; provider = \"ollama\";\n"
    "    url = \"http://127.0.0.1:11435\"; model = \"m\"; } );\n"
    "servers = (\n"
    "  { name = \"a\"; transport = \"stdio\"; command = [ \"true\" ]; },\n"
    "  { name = \"e\"; transport = \"stdio\"; command = [ \"true\" ];\n"
    "    sampling = [ \"client\" ];\n"
    "    elicitation = [ \"client\", \"defaults\", \"decline\" ]; },\n"
    "  { name = \"l\"; transport = \"stdio\"; command = [ \"true\" ];\n"
    "    sampling = [ \"llm:local\", \"decline\" ]; },\n"
    "  { name = \"m\"; transport = \"stdio\"; command = [ \"true\" ];\n"
    "    sampling = [ \"llm:local\", \"llm:other\" ]; },\n"
    "  { name = \"t\"; transport = \"stdio\"; command = [ \"true\" ];\n"
    "    sampling = [ \"tool:a/summarise\", \"client\" ]; },\n"
    "  { name = \"u\"; transport = \"stdio\"; command = [ \"true\" ];\n"
    "    max_message = \"4k\";\n"
    "    sampling = [ \"tool:a/summarise\", \"client\" ]; },\n"
    "  { name = \"r\"; transport = \"stdio\"; command = [ \"true\" ];\n"
    "    isolation = \"per-session\"; }\n"
    ");\n";

static const char sample[] = "\"method\":\"sampling/createMessage\","
    "\"params\":{\"messages\":[{\"role\":\"user\",\"content\":{\"type\":"
    "\"text\",\"text\":\"hi\"}}],\"maxTokens\":10}";
static const char elicit[] = "\"method\":\"elicitation/create\","
    "\"params\":{\"mode\":\"form\",\"message\":\"name?\",\"requestedSchema"
    "\":{\"type\":\"object\",\"properties\":{\"name\":{\"type\":"
    "\"string\",\"default\":\"x\"}},\"required\":[\"name\"]}}";

static void
setup(void)
{
	const char	*names[] = { "a", "e", "l", "m", "t", "u" };
	size_t		 i;

	for (i = 0; i < sizeof names / sizeof names[0]; i++)
		sup_catalog(names[i], "{\"tools\":[" TOOL("echo") ","
		    TOOL("summarise") "]}");
	sup_session_catalog("r", "{\"tools\":[" TOOL("echo") "]}");
	sup_start(conf_sampling);
}

static void
teardown(void)
{
	sup_stop();
}

/* Call an upstream's echo: the response, the request the worker got. */
static struct sup_resp *
call(struct sup_client *cl, const char *up, struct sup_frame **f)
{
	static int	 id;
	struct sup_resp	*r;

	/* Each call its own id: one in flight is not used again. */
	r = sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"%s__echo\"}}", ++id, up);
	*f = sup_take(sup_worker(up), MSG_REQUEST);
	ck_assert_ptr_nonnull(*f);
	return (r);
}

/* The worker of a call asks its client something (request id ref). */
static void
ask(const char *up, struct sup_frame *f, int ref, const char *what)
{
	sup_send(sup_worker(up), MSG_UP_REQUEST, 0, f != NULL ? f->session : 0,
	    f != NULL ? f->tag : 0, "{\"jsonrpc\":\"2.0\",\"id\":%d,%s}", ref,
	    what);
}

/* The answer the worker got to its request ref (new reference). */
static json_t *
answer(const char *up, int ref)
{
	struct sup_frame	*f;

	f = sup_take(sup_worker(up), MSG_UP_RESPONSE);
	ck_assert_msg(f != NULL, "upstream %s got no answer", up);
	ck_assert_uint_eq(f->tag, (unsigned int)ref);
	return (sup_frame_json(f));
}

/* Finish a call. */
static void
finish(const char *up, struct sup_frame *f)
{
	sup_reply(sup_worker(up), f, "{\"content\":[]}");
}

START_TEST(test_to_client)
{
	struct sup_client	*cl = sup_session(NULL, "{\"sampling\":{}}");
	struct sup_client	*other = sup_session(NULL, "{\"sampling\":{}}");
	struct sup_resp		*r, *g;
	struct sup_frame	*f;
	json_t			*q, *a;

	g = sup_get(other, NULL);
	r = call(cl, "a", &f);
	ask("a", f, 7, sample);
	ck_assert_ptr_nonnull(q = sup_find(r, "sampling/createMessage"));
	ck_assert_ptr_null(sup_find(g, "sampling/createMessage"));
	ck_assert_ptr_null(sup_take(sup_worker("a"), MSG_UP_RESPONSE));
	/* Answered under the id the gateway gave it. */
	ck_assert_int_eq(sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":%lld,"
	    "\"result\":{\"role\":\"assistant\",\"content\":{\"type\":"
	    "\"text\",\"text\":\"hello\"},\"model\":\"x\"}}",
	    sup_jint(q, "id"))->status, 202);
	a = answer("a", 7);
	ck_assert_jint(a, "id", 7);
	ck_assert_jstr(a, "result.content.text", "hello");
	json_decref(a);
	finish("a", f);
}
END_TEST

/* Another session cannot answer it, nor cancel it. */
START_TEST(test_other_session)
{
	struct sup_client	*cl = sup_session(NULL, "{\"sampling\":{}}");
	struct sup_client	*other = sup_session(NULL, "{\"sampling\":{}}");
	struct sup_resp		*r;
	struct sup_frame	*f;
	json_t			*q, *a;
	long long		 id;

	r = call(cl, "a", &f);
	ask("a", f, 7, sample);
	q = sup_find(r, "sampling/createMessage");
	id = sup_jint(q, "id");
	sup_post(other, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":"
	    "{\"role\":\"assistant\",\"content\":{\"type\":\"text\","
	    "\"text\":\"forged\"},\"model\":\"x\"}}", id);
	sup_post(other, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/cancelled\",\"params\":{\"requestId\":%lld}}",
	    id);
	ck_assert_ptr_null(sup_take(sup_worker("a"), MSG_UP_RESPONSE));
	sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":"
	    "{\"role\":\"assistant\",\"content\":{\"type\":\"text\","
	    "\"text\":\"mine\"},\"model\":\"x\"}}", id);
	a = answer("a", 7);
	ck_assert_jstr(a, "result.content.text", "mine");
	json_decref(a);
	finish("a", f);
}
END_TEST

/* A client that did not declare sampling never sees the request. */
START_TEST(test_no_capability)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_client	*tools = sup_session(NULL, "{\"sampling\":{}}");
	struct sup_resp		*r;
	struct sup_frame	*f;
	json_t			*a;

	r = call(cl, "a", &f);
	ask("a", f, 7, sample);
	ck_assert_ptr_null(sup_find(r, "sampling/createMessage"));
	a = answer("a", 7);
	ck_assert_jint(a, "error.code", -1);
	ck_assert_jstr(a, "error.message", "User rejected sampling request");
	ck_assert_jstr(a, "error.data.reason",
	    "the client does not support sampling");
	json_decref(a);
	finish("a", f);
	/* Nor one with tools when it did not declare sampling.tools. */
	r = call(tools, "a", &f);
	ask("a", f, 8, "\"method\":\"sampling/createMessage\",\"params\":"
	    "{\"messages\":[],\"maxTokens\":5,\"tools\":[]}");
	ck_assert_ptr_null(sup_find(r, "sampling/createMessage"));
	a = answer("a", 8);
	ck_assert_jstr(a, "error.data.reason",
	    "the client does not support tool use in sampling");
	json_decref(a);
	finish("a", f);
	/* Without decline, the upstream gets an error saying why. */
	r = call(cl, "e", &f);
	ask("e", f, 9, sample);
	a = answer("e", 9);
	ck_assert_jint(a, "error.code", -32601);
	json_decref(a);
	finish("e", f);
	/* With the capability but not what the request asks of it: its
	 * params are what is wrong (as the 2025-11-25 spec has it for an
	 * elicitation mode). */
	r = call(tools, "e", &f);
	ask("e", f, 10, "\"method\":\"sampling/createMessage\",\"params\":"
	    "{\"messages\":[],\"maxTokens\":5,\"tools\":[]}");
	a = answer("e", 10);
	ck_assert_jint(a, "error.code", -32602);
	ck_assert_jstr(a, "error.message",
	    "the client does not support tool use in sampling");
	json_decref(a);
	finish("e", f);
}
END_TEST

/* No call in flight names the client: nobody is asked. */
START_TEST(test_unknown_origin)
{
	struct sup_client	*cl = sup_session(NULL, "{\"sampling\":{},"
	    "\"elicitation\":{}}");
	struct sup_resp		*g;
	json_t			*a;

	g = sup_get(cl, NULL);
	ask("a", NULL, 3, sample);
	a = answer("a", 3);
	ck_assert_jint(a, "error.code", -1);
	ck_assert_ptr_nonnull(strstr(sup_jstr(a, "error.data.reason"),
	    "cannot tell which client"));
	json_decref(a);
	ask("e", NULL, 4, sample);
	a = answer("e", 4);
	ck_assert_jint(a, "error.code", -32603);
	json_decref(a);
	ck_assert_uint_eq(g->nevents, 1);
}
END_TEST

/* Roots belong to one client: a shared upstream is refused them. */
START_TEST(test_roots)
{
	struct sup_client	*cl = sup_session(NULL, "{\"roots\":{}}");
	struct sup_client	*other = sup_session(NULL, NULL);
	struct sup_resp		*r;
	struct sup_frame	*f;
	json_t			*q, *a;

	r = call(cl, "a", &f);
	ask("a", f, 5, "\"method\":\"roots/list\"");
	ck_assert_ptr_null(sup_find(r, "roots/list"));
	a = answer("a", 5);
	ck_assert_jint(a, "error.code", -32601);
	json_decref(a);
	finish("a", f);
	/* A per-session instance asks its own client, if it has roots. */
	r = call(other, "r", &f);
	ask("r", f, 7, "\"method\":\"roots/list\"");
	ck_assert_ptr_null(sup_find(r, "roots/list"));
	a = answer("r", 7);
	ck_assert_jint(a, "error.code", -32601);
	json_decref(a);
	finish("r", f);
	r = call(cl, "r", &f);
	ask("r", f, 6, "\"method\":\"roots/list\"");
	ck_assert_ptr_nonnull(q = sup_find(r, "roots/list"));
	sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":"
	    "{\"roots\":[]}}", sup_jint(q, "id"));
	a = answer("r", 6);
	ck_assert_int_eq(json_array_size(sup_jget(a, "result.roots")), 0);
	json_decref(a);
	finish("r", f);
}
END_TEST

/*
 * A client's notifications/cancelled names a request of its own (the
 * same direction), never one the gateway sent it: one with the id of the
 * gateway's request (as a late one for a finished call of its may have)
 * leaves that request waiting, and the client's answer reaches the
 * upstream.
 */
START_TEST(test_cancel_same_direction)
{
	struct sup_client	*cl = sup_session(NULL, "{\"sampling\":{}}");
	struct sup_resp		*r;
	struct sup_frame	*f;
	json_t			*q, *a;

	/* Its call's id is not the gateway's request's. */
	r = sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":99,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"a__echo\"}}");
	ck_assert_ptr_nonnull(f = sup_take(sup_worker("a"), MSG_REQUEST));
	ask("a", f, 7, sample);
	ck_assert_ptr_nonnull(q = sup_find(r, "sampling/createMessage"));
	ck_assert_int_ne(sup_jint(q, "id"), 99);
	ck_assert_int_eq(sup_post(cl, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/cancelled\",\"params\":{\"requestId\":%lld}}",
	    sup_jint(q, "id"))->status, 202);
	ck_assert_ptr_null(sup_take(sup_worker("a"), MSG_UP_RESPONSE));
	sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":"
	    "{\"role\":\"assistant\",\"content\":{\"type\":\"text\","
	    "\"text\":\"hello\"},\"model\":\"x\"}}", sup_jint(q, "id"));
	a = answer("a", 7);
	ck_assert_jstr(a, "result.content.text", "hello");
	json_decref(a);
	finish("a", f);
}
END_TEST

/* A client's error goes on to the next strategy, its refusal does not. */
START_TEST(test_client_error)
{
	struct sup_client	*cl = sup_session(NULL, "{\"sampling\":{},"
	    "\"elicitation\":{}}");
	struct sup_resp		*r;
	struct sup_frame	*f;
	json_t			*q, *a;

	r = call(cl, "e", &f);
	ask("e", f, 1, elicit);
	q = sup_find(r, "elicitation/create");
	sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"error\":{\"code\":"
	    "-32603,\"message\":\"no\"}}", sup_jint(q, "id"));
	a = answer("e", 1);
	ck_assert_jstr(a, "result.action", "accept");
	ck_assert_jstr(a, "result.content.name", "x");
	json_decref(a);
	finish("e", f);
	/* A user's "no" is an answer: no other strategy overrides it. */
	r = call(cl, "e", &f);
	ask("e", f, 2, elicit);
	q = sup_find(r, "elicitation/create");
	sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"error\":{\"code\":"
	    "-1,\"message\":\"User rejected\"}}", sup_jint(q, "id"));
	a = answer("e", 2);
	ck_assert_jint(a, "error.code", -1);
	ck_assert_jstr(a, "error.message", "User rejected");
	json_decref(a);
	finish("e", f);
}
END_TEST

/* Elicitation without a client: the schema's defaults, or decline. */
START_TEST(test_elicit_defaults)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_frame	*f;
	json_t			*a;

	call(cl, "e", &f);
	ask("e", f, 1, elicit);
	a = answer("e", 1);
	ck_assert_jstr(a, "result.action", "accept");
	ck_assert_jstr(a, "result.content.name", "x");
	json_decref(a);
	ask("e", f, 2, "\"method\":\"elicitation/create\",\"params\":"
	    "{\"message\":\"?\",\"requestedSchema\":{\"type\":\"object\","
	    "\"properties\":{\"n\":{\"type\":\"string\"}},\"required\":"
	    "[\"n\"]}}");
	a = answer("e", 2);
	ck_assert_jstr(a, "result.action", "decline");
	json_decref(a);
	finish("e", f);
}
END_TEST

/* A client that does not answer: cancelled, and the next one answers. */
START_TEST(test_client_timeout)
{
	struct sup_client	*cl = sup_session(NULL, "{\"sampling\":{}}");
	struct sup_resp		*r;
	struct sup_frame	*f;
	json_t			*q, *c, *a;

	r = call(cl, "a", &f);
	ask("a", f, 4, sample);
	q = sup_find(r, "sampling/createMessage");
	sup_advance(20);
	ck_assert_ptr_nonnull(c = sup_find(r, "notifications/cancelled"));
	ck_assert_int_eq(sup_jint(c, "params.requestId"), sup_jint(q, "id"));
	a = answer("a", 4);
	ck_assert_jint(a, "error.code", -1);
	ck_assert_ptr_nonnull(strstr(sup_jstr(a, "error.data.reason"),
	    "did not answer"));
	json_decref(a);
	finish("a", f);
}
END_TEST

/* The upstream withdraws its request: the client is told. */
START_TEST(test_upstream_cancels)
{
	struct sup_client	*cl = sup_session(NULL, "{\"sampling\":{}}");
	struct sup_resp		*r;
	struct sup_frame	*f;
	json_t			*q, *c;

	r = call(cl, "a", &f);
	ask("a", f, 4, sample);
	q = sup_find(r, "sampling/createMessage");
	sup_send(sup_worker("a"), MSG_NOTIFY, 0, f->session, f->tag,
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
	    "\"params\":{\"requestId\":4,\"reason\":\"not needed\"}}");
	ck_assert_ptr_nonnull(c = sup_find(r, "notifications/cancelled"));
	ck_assert_int_eq(sup_jint(c, "params.requestId"), sup_jint(q, "id"));
	ck_assert_jstr(c, "params.reason", "not needed");
	/* Its answer, if it comes, goes nowhere. */
	sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{}}",
	    sup_jint(q, "id"));
	ck_assert_ptr_null(sup_take(sup_worker("a"), MSG_UP_RESPONSE));
	finish("a", f);
}
END_TEST

/* A session ends with requests to it waiting: they fail at once. */
START_TEST(test_session_end)
{
	struct sup_client	*cl = sup_session(NULL, "{\"sampling\":{}}");
	struct sup_frame	*f;
	json_t			*a;

	call(cl, "a", &f);
	ask("a", f, 4, sample);
	sup_delete(cl);
	a = answer("a", 4);
	ck_assert_jint(a, "error.code", -32000);
	json_decref(a);
}
END_TEST

/* At most max_pending requests wait for one client. */
START_TEST(test_max_pending)
{
	struct sup_client	*cl = sup_session(NULL, "{\"sampling\":{}}");
	struct sup_resp		*r;
	struct sup_frame	*f;
	json_t			*a;

	r = call(cl, "a", &f);
	ask("a", f, 1, sample);
	ask("a", f, 2, sample);
	ask("a", f, 3, sample);
	a = answer("a", 3);
	ck_assert_jstr(a, "error.data.reason",
	    "too many requests waiting for the client");
	json_decref(a);
	ck_assert_uint_eq(r->nevents, 3);
	sup_delete(cl);
	json_decref(answer("a", 1));
	json_decref(answer("a", 2));
}
END_TEST

/* llm:NAME: the provider's worker answers. */
START_TEST(test_llm)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_worker	*pv = sup_provider("local");
	struct sup_frame	*f, *q;
	json_t			*o, *a;

	call(cl, "l", &f);
	ask("l", f, 1, sample);
	ck_assert_ptr_nonnull(q = sup_take(pv, MSG_LLM_REQUEST));
	o = sup_frame_json(q);
	ck_assert_jint(o, "params.maxTokens", 10);
	json_decref(o);
	sup_sendq(pv, MSG_LLM_USAGE, 0, 0, q->tag, "{\"input\":3,"
	    "\"output\":2,\"model\":\"m-1\"}");
	sup_send(pv, MSG_LLM_RESULT, 0, 0, q->tag, "{\"role\":\"assistant\","
	    "\"content\":{\"type\":\"text\",\"text\":\"from llm\"},"
	    "\"model\":\"m-1\"}");
	a = answer("l", 1);
	ck_assert_jstr(a, "result.content.text", "from llm");
	json_decref(a);
	/* It fails: the next link (decline) says why. */
	ask("l", f, 2, sample);
	q = sup_take(pv, MSG_LLM_REQUEST);
	sup_send(pv, MSG_LLM_FAIL, 0, 0, q->tag, "{\"outcome\":\"error\","
	    "\"message\":\"HTTP 500\",\"spent\":false}");
	a = answer("l", 2);
	ck_assert_jint(a, "error.code", -1);
	ck_assert_jstr(a, "error.data.reason", "llm:local: HTTP 500 (error)");
	json_decref(a);
	/* What it cannot take is refused before it is sent. */
	ask("l", f, 3, "\"method\":\"sampling/createMessage\",\"params\":"
	    "{\"messages\":[]}");
	ck_assert_ptr_null(sup_take(pv, MSG_LLM_REQUEST));
	a = answer("l", 3);
	ck_assert_jstr(a, "error.data.reason",
	    "llm:local: maxTokens must be a positive integer");
	json_decref(a);
	/* Its worker exits in the middle: the next link answers. */
	ask("l", f, 4, sample);
	ck_assert_ptr_nonnull(sup_take(pv, MSG_LLM_REQUEST));
	sup_kill(pv);
	sup_run();
	a = answer("l", 4);
	ck_assert_jint(a, "error.code", -1);
	json_decref(a);
	finish("l", f);
}
END_TEST

/*
 * A provider's progress reaches an upstream that gave a token, always
 * increasing: a link that fails mid-answer and the next that starts over
 * go on counting from where the first stopped.
 */
START_TEST(test_llm_progress)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_worker	*pv = sup_provider("local");
	struct sup_worker	*pv2 = sup_provider("other");
	struct sup_frame	*f, *q, *n;
	json_t			*o;

	call(cl, "m", &f);
	ask("m", f, 1, "\"method\":\"sampling/createMessage\",\"params\":{"
	    "\"_meta\":{\"progressToken\":\"pt\"},\"messages\":[{\"role\":"
	    "\"user\",\"content\":{\"type\":\"text\",\"text\":\"hi\"}}],"
	    "\"maxTokens\":10}");
	ck_assert_ptr_nonnull(q = sup_take(pv, MSG_LLM_REQUEST));
	sup_send(pv, MSG_LLM_PROGRESS, 0, 0, q->tag, "{\"pieces\":3}");
	ck_assert_ptr_nonnull(n = sup_take(sup_worker("m"), MSG_UP_NOTIFY));
	o = sup_frame_json(n);
	ck_assert_jstr(o, "params.progressToken", "pt");
	ck_assert_jint(o, "params.progress", 3);
	json_decref(o);
	sup_send(pv, MSG_LLM_FAIL, 0, 0, q->tag, "{\"outcome\":\"network\","
	    "\"message\":\"reset\",\"spent\":true}");
	ck_assert_ptr_nonnull(q = sup_take(pv2, MSG_LLM_REQUEST));
	sup_send(pv2, MSG_LLM_PROGRESS, 0, 0, q->tag, "{\"pieces\":1}");
	ck_assert_ptr_nonnull(n = sup_take(sup_worker("m"), MSG_UP_NOTIFY));
	o = sup_frame_json(n);
	ck_assert_jint(o, "params.progress", 4);
	json_decref(o);
	sup_send(pv2, MSG_LLM_PROGRESS, 0, 0, q->tag, "{\"pieces\":1}");
	ck_assert_ptr_null(sup_take(sup_worker("m"), MSG_UP_NOTIFY));
	sup_send(pv2, MSG_LLM_RESULT, 0, 0, q->tag, "{\"role\":\"assistant\","
	    "\"content\":{\"type\":\"text\",\"text\":\"ok\"},"
	    "\"model\":\"m-1\"}");
	o = answer("m", 1);
	ck_assert_jstr(o, "result.content.text", "ok");
	json_decref(o);
	finish("m", f);
}
END_TEST

/* The session whose call caused a provider's request ends: the request
 * is cancelled at the provider, its upstream answered. */
START_TEST(test_llm_session_end)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_worker	*pv = sup_provider("local");
	struct sup_frame	*f, *q, *c;
	json_t			*a;

	call(cl, "l", &f);
	ask("l", f, 1, sample);
	ck_assert_ptr_nonnull(q = sup_take(pv, MSG_LLM_REQUEST));
	sup_delete(cl);
	ck_assert_ptr_nonnull(c = sup_take(pv, MSG_LLM_CANCEL));
	ck_assert_uint_eq(c->tag, q->tag);
	a = answer("l", 1);
	ck_assert_jint(a, "error.code", MCP_CONNECTION_CLOSED);
	ck_assert_jstr(a, "error.message", "the client session ended");
	json_decref(a);
	/* Its late answer goes nowhere. */
	sup_send(pv, MSG_LLM_RESULT, 0, 0, q->tag, "{\"role\":\"assistant\","
	    "\"content\":{\"type\":\"text\",\"text\":\"late\"},"
	    "\"model\":\"m-1\"}");
	ck_assert_ptr_null(sup_take(sup_worker("l"), MSG_UP_RESPONSE));
}
END_TEST

/* tool:UPSTREAM/TOOL: another upstream's tool answers. */
START_TEST(test_tool_link)
{
	struct sup_client	*cl = sup_session(NULL, "{\"sampling\":{}}");
	struct sup_resp		*r;
	struct sup_frame	*f, *q;
	json_t			*o, *a;

	r = call(cl, "t", &f);
	ask("t", f, 1, sample);
	ck_assert_ptr_nonnull(q = sup_take(sup_worker("a"), MSG_REQUEST));
	o = sup_frame_json(q);
	ck_assert_jstr(o, "params.name", "summarise");
	ck_assert_jint(o, "params.arguments.maxTokens", 10);
	ck_assert_jstr(o, "params.arguments.messages.0.content.text", "hi");
	json_decref(o);
	sup_reply(sup_worker("a"), q, "{\"content\":[{\"type\":\"text\","
	    "\"text\":\"summary\"}]}");
	a = answer("t", 1);
	ck_assert_jstr(a, "result.role", "assistant");
	ck_assert_jstr(a, "result.content.text", "summary");
	json_decref(a);
	ck_assert_ptr_null(sup_find(r, "sampling/createMessage"));
	/* A tool that fails: the next link, the client, is asked. */
	ask("t", f, 2, sample);
	q = sup_take(sup_worker("a"), MSG_REQUEST);
	sup_reply(sup_worker("a"), q, "{\"isError\":true,\"content\":"
	    "[{\"type\":\"text\",\"text\":\"broken\"}]}");
	ck_assert_ptr_nonnull(sup_find(r, "sampling/createMessage"));
	sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":"
	    "{\"role\":\"assistant\",\"content\":{\"type\":\"text\","
	    "\"text\":\"by hand\"},\"model\":\"x\"}}",
	    sup_jint(sup_find(r, "sampling/createMessage"), "id"));
	a = answer("t", 2);
	ck_assert_jstr(a, "result.content.text", "by hand");
	json_decref(a);
	finish("t", f);
}
END_TEST

/*
 * One upstream holds at most 1,024 requests in sampling chains: the next
 * is refused with -32003, and another upstream's still runs.
 */
START_TEST(test_chain_cap)
{
	static struct sup_frame	*held[1024];
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_frame	*f, *g, *q;
	json_t			*a;
	int			 i;

	call(cl, "t", &f);
	for (i = 1; i <= 1024; i++) {
		ask("t", f, i, sample);
		ck_assert_ptr_nonnull(held[i - 1] = sup_take(sup_worker("a"),
		    MSG_REQUEST));
	}
	ask("t", f, 1025, sample);
	ck_assert_ptr_null(sup_take(sup_worker("a"), MSG_REQUEST));
	a = answer("t", 1025);
	ck_assert_jint(a, "error.code", -32003);
	ck_assert_jstr(a, "error.message",
	    "too many sampling requests in flight at the gateway");
	json_decref(a);
	call(cl, "u", &g);
	ask("u", g, 1, sample);
	ck_assert_ptr_nonnull(q = sup_take(sup_worker("a"), MSG_REQUEST));
	sup_reply(sup_worker("a"), q, "{\"content\":[{\"type\":\"text\","
	    "\"text\":\"u\"}]}");
	json_decref(answer("u", 1));
	for (i = 0; i < 1024; i++)
		sup_reply(sup_worker("a"), held[i], "{\"content\":[{\"type\":"
		    "\"text\",\"text\":\"t\"}]}");
	finish("t", f);
	finish("u", g);
}
END_TEST

/* A breaker member of an upstream's status, as an integer. */
static long long
breaker_failures(const char *up)
{
	json_t		*o = upstream_status_json(upstream_find(up));
	long long	 v = sup_jint(o, "breaker.failures");

	json_decref(o);
	return (v);
}

/*
 * A call whose sampling the chain still runs (a tool: link that hangs)
 * times out: the asking upstream waited on the gateway, which is not its
 * failure; the tool's upstream did not answer, which is.
 */
START_TEST(test_tool_link_timeout)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_resp		*r;
	struct sup_frame	*f;

	r = call(cl, "t", &f);
	ask("t", f, 1, sample);
	ck_assert_ptr_nonnull(sup_take(sup_worker("a"), MSG_REQUEST));
	sup_advance(300);
	ck_assert_error(sup_answer(r), -32001);
	ck_assert_int_eq(breaker_failures("t"), 0);
	ck_assert_int_eq(breaker_failures("a"), 1);
	json_decref(answer("t", 1));
}
END_TEST

/*
 * A tool: link's answer larger than the asking upstream's max_message
 * (its worker would refuse the frame and stop) passes to the next link.
 */
START_TEST(test_tool_link_too_large)
{
	struct sup_client	*cl = sup_session(NULL, "{\"sampling\":{}}");
	struct sup_resp		*r;
	struct sup_frame	*f, *q;
	json_t			*a;
	char			 big[5100];

	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	memcpy(big, "{\"content\":[{\"type\":\"text\",\"text\":\"", 35);
	memcpy(big + sizeof big - 6, "\"}]}", 5);
	r = call(cl, "u", &f);
	ask("u", f, 1, sample);
	ck_assert_ptr_nonnull(q = sup_take(sup_worker("a"), MSG_REQUEST));
	sup_reply(sup_worker("a"), q, big);
	ck_assert_ptr_null(sup_take(sup_worker("u"), MSG_UP_RESPONSE));
	ck_assert_ptr_nonnull(sup_find(r, "sampling/createMessage"));
	sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":"
	    "{\"role\":\"assistant\",\"content\":{\"type\":\"text\","
	    "\"text\":\"short\"},\"model\":\"x\"}}",
	    sup_jint(sup_find(r, "sampling/createMessage"), "id"));
	a = answer("u", 1);
	ck_assert_jstr(a, "result.content.text", "short");
	json_decref(a);
	finish("u", f);
}
END_TEST

static Suite *
sampling_suite(void)
{
	Suite	*s = suite_create("sampling");
	TCase	*tc = tcase_create("sampling");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_to_client);
	tcase_add_test(tc, test_other_session);
	tcase_add_test(tc, test_no_capability);
	tcase_add_test(tc, test_unknown_origin);
	tcase_add_test(tc, test_roots);
	tcase_add_test(tc, test_client_error);
	tcase_add_test(tc, test_cancel_same_direction);
	tcase_add_test(tc, test_elicit_defaults);
	tcase_add_test(tc, test_client_timeout);
	tcase_add_test(tc, test_upstream_cancels);
	tcase_add_test(tc, test_session_end);
	tcase_add_test(tc, test_max_pending);
	tcase_add_test(tc, test_llm);
	tcase_add_test(tc, test_llm_session_end);
	tcase_add_test(tc, test_llm_progress);
	tcase_add_test(tc, test_tool_link);
	tcase_add_test(tc, test_tool_link_timeout);
	tcase_add_test(tc, test_tool_link_too_large);
	suite_add_tcase(s, tc);
	tc = tcase_create("chain_cap");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_chain_cap);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	return (sup_check_main(sampling_suite()));
}
