/* SPDX-License-Identifier: ISC */
/*
 * Routing: requests to the upstream that serves them, by exposed name or
 * URI, with the upstream's own name spliced in and the client's id given
 * back exactly as sent.
 */
#include "config.h"

#include <string.h>

#include "frame.h"
#include "supervisor.h"

#include "sup_check.h"

static const char conf_two[] = SUP_BASE
    "servers = (\n"
    "  { name = \"a\"; transport = \"stdio\"; command = [ \"true\" ]; },\n"
    "  { name = \"b\"; transport = \"stdio\"; command = [ \"true\" ]; }\n"
    ");\n";

static void
setup_two(void)
{
	sup_catalog("a", "{\"tools\":[{\"name\":\"echo\",\"inputSchema\":"
	    "{\"type\":\"object\"}}],\"prompts\":[{\"name\":\"greet\"}]}");
	sup_catalog("b", "{\"tools\":[{\"name\":\"echo\",\"inputSchema\":"
	    "{\"type\":\"object\"}}]}");
	sup_start(conf_two);
}

static void
teardown(void)
{
	sup_stop();
}

START_TEST(test_list_merged)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	json_t			*a;

	a = sup_rpc(cl, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"tools/list\"}");
	ck_assert_int_eq(sup_jlen(a, "result.tools"), 2);
	ck_assert_jstr(a, "result.tools.0.name", "a__echo");
	ck_assert_jstr(a, "result.tools.1.name", "b__echo");
}
END_TEST

START_TEST(test_call_routed)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_resp		*r;
	struct sup_frame	*f;
	json_t			*o;

	r = sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":\"x\\u0041\","
	    "\"method\":\"tools/call\",\"params\":{\"name\":\"b__echo\","
	    "\"arguments\":{}}}");
	ck_assert_int_eq(r->status, 200);
	ck_assert_ptr_null(sup_take(sup_worker("a"), MSG_REQUEST));
	f = sup_take(sup_worker("b"), MSG_REQUEST);
	ck_assert_ptr_nonnull(f);
	o = sup_frame_json(f);
	ck_assert_jstr(o, "params.name", "echo");
	json_decref(o);
	ck_assert_ptr_nonnull(strstr(f->text, "\"id\":\"x\\u0041\""));
	sup_reply(sup_worker("b"), f, "{\"content\":[]}");
	ck_assert(r->done);
	ck_assert_ptr_nonnull(strstr(sup_body(r), "\"id\":\"x\\u0041\""));
	ck_assert_result(sup_answer(r));
}
END_TEST

static Suite *
route_suite(void)
{
	Suite	*s = suite_create("route");
	TCase	*tc = tcase_create("route");

	tcase_add_checked_fixture(tc, setup_two, teardown);
	tcase_add_test(tc, test_list_merged);
	tcase_add_test(tc, test_call_routed);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	return (sup_check_main(route_suite()));
}
