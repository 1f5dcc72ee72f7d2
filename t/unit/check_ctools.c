/* SPDX-License-Identifier: ISC */
/*
 * Tools offered by clients (supervisor/ctools.c, ctools_call.c):
 * registered under a prefix of the client's own, listed to every session
 * after the upstreams' tools, called on their owner's stream under the
 * gateway's id, and answered, timed out, cancelled or failed for the
 * caller alone.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "frame.h"
#include "supervisor.h"

#include "sup_check.h"

#define TNVIM	"token-nvim-0123456789a"
#define TANY	"token-any-0123456789ab"

#define TOOL(n)	"{\"name\":\"" n "\",\"inputSchema\":{\"type\":\"object\"}}"

static const char conf_ctools[] = SUP_BASE
    "client_tool_timeout = 10;\n"
    "auth_tokens = [ \"" TANY "\" ];\n"
    "clients = ( { name = \"nvim\"; token = \"" TNVIM "\";"
    " register = true; } );\n"
    "servers = (\n"
    "  { name = \"a\"; transport = \"stdio\"; command = [ \"true\" ]; },\n"
    "  { name = \"z\"; transport = \"stdio\"; command = [ \"true\" ];\n"
    "    prefix = \"\"; },\n"
    "  { name = \"u\"; transport = \"stdio\"; command = [ \"true\" ];\n"
    "    prefix = \"_check__ev\"; },\n"
    "  { name = \"v\"; transport = \"stdio\"; command = [ \"true\" ];\n"
    "    prefix = \"nvim__\"; }\n"
    ");\n";

static void
setup(void)
{
	sup_catalog("a", "{\"tools\":[" TOOL("echo") "]}");
	sup_catalog("z", "{\"tools\":[" TOOL("_check__taken") "]}");
	sup_start(conf_ctools);
}

static void
teardown(void)
{
	sup_stop();
}

static json_t *
reg(struct sup_client *cl, const char *tools)
{
	return (sup_rpc(cl, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"tools/register\",\"params\":{\"tools\":[%s]}}", tools));
}

/* The names a client lists, joined. */
static const char *
names(struct sup_client *cl)
{
	static char	 buf[1024];
	json_t		*a, *v;
	size_t		 i, n = 0;

	a = sup_rpc(cl, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":"
	    "\"tools/list\"}");
	buf[0] = '\0';
	json_array_foreach(sup_jget(a, "result.tools"), i, v)
		n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s",
		    n > 0 ? " " : "", sup_jstr(v, "name"));
	return (buf);
}

/* A call by a caller to a client tool; the request its owner got. */
static struct sup_resp *
call(struct sup_client *caller, const char *tool, const char *id,
    struct sup_resp *owner_stream, json_t **req)
{
	struct sup_resp	*r;

	r = sup_post(caller, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"%s\",\"arguments\":"
	    "{\"path\":\"/x\"},\"_meta\":{\"progressToken\":\"pt\"}}}", id,
	    tool);
	*req = sup_find(owner_stream, "tools/call");
	return (r);
}

START_TEST(test_register_and_call)
{
	struct sup_client	*owner = sup_session(TANY, NULL);
	struct sup_client	*caller = sup_session(TANY, NULL);
	struct sup_resp		*g, *r;
	json_t			*a, *q, *p;

	a = reg(owner, TOOL("open"));
	ck_assert_jstr(a, "result.registered.0", "_check__open");
	ck_assert_int_eq(sup_jlen(a, "result.refused"), 0);
	ck_assert_str_eq(names(caller), "a__echo _check__taken _check__open");
	g = sup_get(owner, NULL);
	r = call(caller, "_check__open", "\"c1\"", g, &q);
	ck_assert_ptr_nonnull(q);
	ck_assert_jstr(q, "params.name", "open");
	ck_assert_jstr(q, "params.arguments.path", "/x");
	/* Its progress, under the caller's token, to the caller only. */
	sup_post(owner, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/progress\",\"params\":{\"progressToken\":%lld,"
	    "\"progress\":1}}", sup_jint(q, "params._meta.progressToken"));
	ck_assert_ptr_nonnull(p = sup_find(r, "notifications/progress"));
	ck_assert_jstr(p, "params.progressToken", "pt");
	sup_post(owner, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":"
	    "{\"content\":[{\"type\":\"text\",\"text\":\"opened\"}]}}",
	    sup_jint(q, "id"));
	ck_assert(r->done);
	ck_assert_jstr(sup_answer(r), "id", "c1");
	ck_assert_jstr(sup_answer(r), "result.content.0.text", "opened");
	ck_assert_ptr_null(sup_take(sup_worker("a"), MSG_REQUEST));
}
END_TEST

/* Only its owner answers a call; nobody else's answer counts. */
START_TEST(test_answer_owner_only)
{
	struct sup_client	*owner = sup_session(TANY, NULL);
	struct sup_client	*caller = sup_session(TANY, NULL);
	struct sup_client	*third = sup_session(TANY, NULL);
	struct sup_resp		*g, *r;
	json_t			*q;

	reg(owner, TOOL("open"));
	g = sup_get(owner, NULL);
	r = call(caller, "_check__open", "1", g, &q);
	sup_post(third, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":"
	    "{\"content\":[{\"type\":\"text\",\"text\":\"forged\"}]}}",
	    sup_jint(q, "id"));
	sup_post(third, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/progress\",\"params\":{\"progressToken\":%lld,"
	    "\"progress\":1}}", sup_jint(q, "id"));
	ck_assert(!r->done);
	ck_assert_ptr_null(sup_find(r, "notifications/progress"));
	sup_post(caller, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":"
	    "{\"content\":[]}}", sup_jint(q, "id"));
	ck_assert(!r->done);
	sup_post(owner, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":"
	    "{\"content\":[{\"type\":\"text\",\"text\":\"real\"}]}}",
	    sup_jint(q, "id"));
	ck_assert_jstr(sup_answer(r), "result.content.0.text", "real");
}
END_TEST

START_TEST(test_timeout)
{
	struct sup_client	*owner = sup_session(TANY, NULL);
	struct sup_client	*caller = sup_session(TANY, NULL);
	struct sup_resp		*g, *r;
	json_t			*q, *c;

	reg(owner, TOOL("open"));
	g = sup_get(owner, NULL);
	r = call(caller, "_check__open", "1", g, &q);
	sup_advance(10);
	ck_assert_error(sup_answer(r), -32001);
	ck_assert_ptr_nonnull(c = sup_find(g, "notifications/cancelled"));
	ck_assert_int_eq(sup_jint(c, "params.requestId"), sup_jint(q, "id"));
}
END_TEST

START_TEST(test_cancel_by_caller)
{
	struct sup_client	*owner = sup_session(TANY, NULL);
	struct sup_client	*caller = sup_session(TANY, NULL);
	struct sup_resp		*g, *r;
	json_t			*q, *c;

	reg(owner, TOOL("open"));
	g = sup_get(owner, NULL);
	r = call(caller, "_check__open", "\"x\"", g, &q);
	sup_post(caller, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/cancelled\",\"params\":{\"requestId\":\"x\"}}");
	ck_assert(r->done);
	ck_assert_ptr_null(sup_answer(r));
	ck_assert_ptr_nonnull(c = sup_find(g, "notifications/cancelled"));
	ck_assert_int_eq(sup_jint(c, "params.requestId"), sup_jint(q, "id"));
}
END_TEST

/* The owner goes: its calls fail, its tools are withdrawn. */
START_TEST(test_owner_leaves)
{
	struct sup_client	*owner = sup_session(TANY, NULL);
	struct sup_client	*caller = sup_session(TANY, NULL);
	struct sup_resp		*g, *r, *cg;
	json_t			*q;

	reg(owner, TOOL("open"));
	g = sup_get(owner, NULL);
	cg = sup_get(caller, NULL);
	r = call(caller, "_check__open", "1", g, &q);
	sup_delete(owner);
	ck_assert_error(sup_answer(r), -32000);
	ck_assert_ptr_nonnull(strstr(sup_jstr(sup_answer(r), "error.message"),
	    "disconnected"));
	ck_assert_ptr_nonnull(sup_find(cg, "notifications/tools/list_changed"));
	ck_assert_str_eq(names(caller), "a__echo _check__taken");
	ck_assert_error(sup_rpc(caller, "{\"jsonrpc\":\"2.0\",\"id\":2,"
	    "\"method\":\"tools/call\",\"params\":{\"name\":\"_check__open\"}}"),
	    -32602);
}
END_TEST

/* The caller goes: the owner is told its call is withdrawn. */
START_TEST(test_caller_leaves)
{
	struct sup_client	*owner = sup_session(TANY, NULL);
	struct sup_client	*caller = sup_session(TANY, NULL);
	struct sup_resp		*g;
	json_t			*q, *c;

	reg(owner, TOOL("open"));
	g = sup_get(owner, NULL);
	call(caller, "_check__open", "1", g, &q);
	sup_delete(caller);
	ck_assert_ptr_nonnull(c = sup_find(g, "notifications/cancelled"));
	ck_assert_int_eq(sup_jint(c, "params.requestId"), sup_jint(q, "id"));
}
END_TEST

/* Prefixes: each client its own, never in another's or an upstream's. */
START_TEST(test_prefixes)
{
	struct sup_client	*c1 = sup_session(TANY, NULL);
	struct sup_client	*c2 = sup_session(TANY, NULL);
	struct sup_client	*nvim = sup_session(TNVIM, NULL);
	json_t			*a;

	ck_assert_jstr(reg(c1, TOOL("open")), "result.registered.0",
	    "_check__open");
	ck_assert_jstr(reg(c2, TOOL("open")), "result.registered.0",
	    "_check__2__open");
	/* A name an upstream's prefix holds is numbered too. */
	ck_assert_jstr(reg(nvim, TOOL("open")), "result.registered.0",
	    "nvim__2__open");
	/* In an upstream's names: refused. */
	a = reg(c1, TOOL("evil"));
	ck_assert_int_eq(sup_jlen(a, "result.registered"), 0);
	ck_assert_ptr_nonnull(strstr(sup_jstr(a, "result.refused.0.reason"),
	    "upstream u"));
	/* An upstream's tool of the same name wins; the client's is not
	 * listed, and calls go to the upstream. */
	a = reg(c1, TOOL("taken"));
	ck_assert_str_eq(names(c2), "a__echo _check__taken _check__open "
	    "_check__2__open nvim__2__open");
	sup_post(c2, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"_check__taken\"}}");
	sup_reply(sup_worker("z"), sup_take(sup_worker("z"), MSG_REQUEST),
	    "{\"content\":[]}");
}
END_TEST

/* A session unregisters: its tools go, others are told. */
START_TEST(test_unregister)
{
	struct sup_client	*owner = sup_session(TANY, NULL);
	struct sup_client	*other = sup_session(TANY, NULL);
	struct sup_resp		*g;
	json_t			*a;

	reg(owner, TOOL("open") "," TOOL("close"));
	g = sup_get(other, NULL);
	a = sup_rpc(owner, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
	    "\"tools/unregister\",\"params\":{\"names\":[\"open\","
	    "\"a__echo\"]}}");
	ck_assert_int_eq(sup_jlen(a, "result.unregistered"), 1);
	ck_assert_ptr_nonnull(sup_find(g, "notifications/tools/list_changed"));
	ck_assert_str_eq(names(other), "a__echo _check__taken _check__close");
	/* Another session cannot take them off. */
	a = sup_rpc(other, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
	    "\"tools/unregister\",\"params\":{\"names\":[\"_check__close\","
	    "\"close\"]}}");
	ck_assert_int_eq(sup_jlen(a, "result.unregistered"), 0);
	ck_assert_str_eq(names(other), "a__echo _check__taken _check__close");
}
END_TEST

static Suite *
ctools_suite(void)
{
	Suite	*s = suite_create("ctools");
	TCase	*tc = tcase_create("ctools");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_register_and_call);
	tcase_add_test(tc, test_answer_owner_only);
	tcase_add_test(tc, test_timeout);
	tcase_add_test(tc, test_cancel_by_caller);
	tcase_add_test(tc, test_owner_leaves);
	tcase_add_test(tc, test_caller_leaves);
	tcase_add_test(tc, test_prefixes);
	tcase_add_test(tc, test_unregister);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	return (sup_check_main(ctools_suite()));
}
