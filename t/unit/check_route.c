/* SPDX-License-Identifier: ISC */
/*
 * Routing (supervisor/route.c, route_sub.c, route_notify.c, mcp_http.c):
 * requests to the upstream that serves them, by exposed name or URI, with
 * the upstream's own name spliced in and the client's id given back
 * exactly as sent; what the gateway answers itself; subscriptions held
 * once per URI at a shared upstream and updates to the subscribers only;
 * the HTTP refusals of /mcp; the legacy HTTP+SSE transport.
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
	    "{\"type\":\"object\"}}],\"prompts\":[{\"name\":\"greet\"}],"
	    "\"resources\":[{\"uri\":\"mem://r\",\"name\":\"r\"},"
	    "{\"uri\":\"mem://s\",\"name\":\"s\"}]}");
	sup_catalog("b", "{\"tools\":[{\"name\":\"echo\",\"inputSchema\":"
	    "{\"type\":\"object\"}}]}");
	sup_start(conf_two);
}

/* a lists mem://r, b a template that covers it too. */
static void
setup_moved(void)
{
	sup_catalog("a", "{\"resources\":[{\"uri\":\"mem://r\","
	    "\"name\":\"r\"},{\"uri\":\"res://v\",\"name\":\"v\"}]}");
	sup_catalog("b", "{\"resourceTemplates\":[{\"uriTemplate\":"
	    "\"mem://{x}\",\"name\":\"m\"}]}");
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

/*
 * A request whose id is one in flight in the session is refused (its
 * answers and a cancellation would be ambiguous); the first goes on, and
 * once it is answered the id may come again.
 */
START_TEST(test_duplicate_id)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_resp		*r1, *r2;
	struct sup_frame	*f;

	r1 = sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"b__echo\"}}");
	ck_assert_ptr_nonnull(f = sup_take(sup_worker("b"), MSG_REQUEST));
	r2 = sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"a__echo\"}}");
	ck_assert(r2->done);
	ck_assert_error(sup_answer(r2), -32600);
	ck_assert_ptr_nonnull(strstr(sup_body(r2), "already used"));
	ck_assert_ptr_null(sup_take(sup_worker("a"), MSG_REQUEST));
	/* Another id, or another session's 5, is fine. */
	sup_post(sup_session(NULL, NULL), "{\"jsonrpc\":\"2.0\",\"id\":5,"
	    "\"method\":\"tools/call\",\"params\":{\"name\":\"a__echo\"}}");
	ck_assert_ptr_nonnull(sup_take(sup_worker("a"), MSG_REQUEST));
	sup_reply(sup_worker("b"), f, "{\"content\":[]}");
	ck_assert(r1->done);
	ck_assert_result(sup_answer(r1));
	sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"a__echo\"}}");
	ck_assert_ptr_nonnull(sup_take(sup_worker("a"), MSG_REQUEST));
}
END_TEST

/* What the gateway answers itself. */
START_TEST(test_own_answers)
{
	struct sup_client	*cl = sup_session(NULL, NULL);

	ck_assert_result(sup_rpc(cl, "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"ping\"}"));
	ck_assert_error(sup_rpc(cl, "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"no/such\"}"), -32601);
	ck_assert_error(sup_rpc(cl, "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"completion/complete\",\"params\":{\"ref\":"
	    "{\"type\":\"ref/x\"}}}"), -32602);
	ck_assert_int_eq(sup_post(cl, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/whatever\"}")->status, 202);
	ck_assert_ptr_null(sup_take(sup_worker("a"), MSG_REQUEST));
	ck_assert_ptr_null(sup_take(sup_worker("b"), MSG_REQUEST));
}
END_TEST

/* A prompt, and completion by a prompt, go with the upstream's name. */
START_TEST(test_prompt_routed)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_frame	*f;
	json_t			*o;

	sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"prompts/get\",\"params\":{\"name\":\"a__greet\"}}");
	ck_assert_ptr_nonnull(f = sup_take(sup_worker("a"), MSG_REQUEST));
	o = sup_frame_json(f);
	ck_assert_jstr(o, "params.name", "greet");
	json_decref(o);
	sup_reply(sup_worker("a"), f, "{\"messages\":[]}");
	sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
	    "\"completion/complete\",\"params\":{\"ref\":{\"type\":"
	    "\"ref/prompt\",\"name\":\"a__greet\"},\"argument\":{\"name\":"
	    "\"x\",\"value\":\"\"}}}");
	ck_assert_ptr_nonnull(f = sup_take(sup_worker("a"), MSG_REQUEST));
	o = sup_frame_json(f);
	ck_assert_jstr(o, "params.ref.name", "greet");
	json_decref(o);
	sup_reply(sup_worker("a"), f, "{\"completion\":{\"values\":[]}}");
}
END_TEST

/* A request answered as one JSON body, cancelled while its connection
 * waits: the connection is closed, the upstream told, nothing left. */
START_TEST(test_cancel_json)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_resp		*r;
	struct sup_frame	*f;

	r = sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":"
	    "\"completion/complete\",\"params\":{\"ref\":{\"type\":"
	    "\"ref/prompt\",\"name\":\"a__greet\"},\"argument\":{\"name\":"
	    "\"x\",\"value\":\"\"}}}");
	ck_assert_ptr_nonnull(f = sup_take(sup_worker("a"), MSG_REQUEST));
	ck_assert_int_eq(r->status, 0);
	ck_assert_uint_eq(http_stream_count(STREAM_JSON), 1);
	ck_assert_int_eq(sup_post(cl, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/cancelled\",\"params\":{\"requestId\":7}}")->
	    status, 202);
	ck_assert_ptr_nonnull(sup_take(sup_worker("a"), MSG_CANCEL));
	ck_assert_uint_eq(http_stream_count(STREAM_JSON), 0);
	sup_reply(sup_worker("a"), f, "{\"completion\":{\"values\":[]}}");
	ck_assert_int_eq(r->status, 0);
}
END_TEST

/* An upstream says a resource changed. */
static void
updated(struct sup_worker *w, const char *uri)
{
	sup_send(w, MSG_NOTIFY, 0, 0, 0, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/resources/updated\",\"params\":{\"uri\":"
	    "\"%s\"}}", uri);
}

/* One subscription per URI at a shared upstream; updates to subscribers. */
START_TEST(test_subscriptions)
{
	struct sup_client	*c1 = sup_session(NULL, NULL);
	struct sup_client	*c2 = sup_session(NULL, NULL);
	struct sup_client	*c3 = sup_session(NULL, NULL);
	struct sup_worker	*w = sup_worker("a");
	struct sup_resp		*g1, *g2, *g3;
	struct sup_frame	*f;
	static const char	 sub[] = "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"resources/%s\",\"params\":{\"uri\":\"mem://r\"}}";

	g1 = sup_get(c1, NULL);
	g2 = sup_get(c2, NULL);
	g3 = sup_get(c3, NULL);
	sup_post(c1, sub, "subscribe");
	ck_assert_ptr_nonnull(f = sup_take(w, MSG_REQUEST));
	ck_assert_ptr_nonnull(strstr(f->text, "resources/subscribe"));
	sup_reply(w, f, "{}");
	ck_assert_result(sup_rpc(c2, sub, "subscribe"));
	ck_assert_ptr_null(sup_take(w, MSG_REQUEST));
	updated(w, "mem://r");
	ck_assert_ptr_nonnull(sup_find(g1, "notifications/resources/updated"));
	ck_assert_ptr_nonnull(sup_find(g2, "notifications/resources/updated"));
	ck_assert_ptr_null(sup_find(g3, "notifications/resources/updated"));
	/* The last to leave unsubscribes it, by request or by ending. */
	ck_assert_result(sup_rpc(c1, sub, "unsubscribe"));
	ck_assert_ptr_null(sup_take(w, MSG_REQUEST));
	/* Updates go to those still subscribed. */
	updated(w, "mem://r");
	ck_assert_uint_eq(sup_nfound(g1, "notifications/resources/updated"),
	    1);
	ck_assert_uint_eq(sup_nfound(g2, "notifications/resources/updated"),
	    2);
	ck_assert_uint_eq(sup_nfound(g3, "notifications/resources/updated"),
	    0);
	sup_delete(c2);
	ck_assert_ptr_nonnull(f = sup_take(w, MSG_REQUEST));
	ck_assert_ptr_nonnull(strstr(f->text, "resources/unsubscribe"));
	sup_reply(w, f, "{}");
}
END_TEST

/*
 * A shared upstream that restarts is subscribed again, once per URI its
 * sessions hold, from the subscribers it kept (not a walk of every
 * session); updates and the last unsubscribe go on as before.
 */
START_TEST(test_resubscribe)
{
	struct sup_client	*c1 = sup_session(NULL, NULL);
	struct sup_client	*c2 = sup_session(NULL, NULL);
	struct sup_client	*c3 = sup_session(NULL, NULL);
	struct sup_worker	*w = sup_worker("a");
	struct sup_resp		*g1, *g2, *g3;
	struct sup_frame	*f;
	int			 r = 0, s = 0;
	static const char	 sub[] = "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"resources/%s\",\"params\":{\"uri\":\"mem://%s\"}}";
	static const char	 updated[] = "notifications/resources/updated";

	sup_post(c1, sub, "subscribe", "r");
	ck_assert_ptr_nonnull(f = sup_take(w, MSG_REQUEST));
	sup_reply(w, f, "{}");
	ck_assert_result(sup_rpc(c2, sub, "subscribe", "r"));
	sup_post(c3, sub, "subscribe", "s");
	ck_assert_ptr_nonnull(f = sup_take(w, MSG_REQUEST));
	sup_reply(w, f, "{}");
	sup_exit(w, 1 << 8);
	sup_advance(5);
	ck_assert_ptr_nonnull(w = sup_worker("a"));
	while ((f = sup_take(w, MSG_REQUEST)) != NULL) {
		ck_assert_ptr_nonnull(strstr(f->text, "resources/subscribe"));
		r += strstr(f->text, "mem://r") != NULL;
		s += strstr(f->text, "mem://s") != NULL;
		sup_reply(w, f, "{}");
	}
	ck_assert_int_eq(r, 1);
	ck_assert_int_eq(s, 1);
	g1 = sup_get(c1, NULL);
	g2 = sup_get(c2, NULL);
	g3 = sup_get(c3, NULL);
	sup_send(w, MSG_NOTIFY, 0, 0, 0, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"%s\",\"params\":{\"uri\":\"mem://r\"}}", updated);
	ck_assert_uint_eq(sup_nfound(g1, updated), 1);
	ck_assert_uint_eq(sup_nfound(g2, updated), 1);
	ck_assert_uint_eq(sup_nfound(g3, updated), 0);
	ck_assert_result(sup_rpc(c1, sub, "unsubscribe", "r"));
	ck_assert_ptr_null(sup_take(w, MSG_REQUEST));
	sup_post(c2, sub, "unsubscribe", "r");
	ck_assert_ptr_nonnull(f = sup_take(w, MSG_REQUEST));
	ck_assert_ptr_nonnull(strstr(f->text, "resources/unsubscribe"));
	sup_reply(w, f, "{}");
	sup_delete(c3);
	ck_assert_ptr_nonnull(f = sup_take(w, MSG_REQUEST));
	ck_assert_ptr_nonnull(strstr(f->text, "mem://s"));
	sup_reply(w, f, "{}");
}
END_TEST

/* A (un)subscribe; each of a session's requests has an id of its own. */
static const char sub_fmt[] = "{\"jsonrpc\":\"2.0\",\"id\":%d,"
    "\"method\":\"resources/%s\",\"params\":{\"uri\":\"mem://r\"}}";
static int	sub_id;

/*
 * A subscription is let go at the upstream that holds it, though the
 * resource is another's now (a no longer lists it, b's template covers
 * it): a is told, and not subscribed again when it restarts.
 */
START_TEST(test_sub_moved)
{
	struct sup_client	*c1 = sup_session(NULL, NULL);
	struct sup_worker	*wa = sup_worker("a"), *wb = sup_worker("b");
	struct sup_frame	*f;

	sup_post(c1, sub_fmt, ++sub_id, "subscribe");
	ck_assert_ptr_nonnull(f = sup_take(wa, MSG_REQUEST));
	sup_reply(wa, f, "{}");
	sup_send(wa, MSG_CATALOG, 0, 0, 0, "{\"resources\":[]}");
	sup_post(c1, sub_fmt, ++sub_id, "unsubscribe");
	ck_assert_ptr_null(sup_take(wb, MSG_REQUEST));
	ck_assert_ptr_nonnull(f = sup_take(wa, MSG_REQUEST));
	ck_assert_ptr_nonnull(strstr(f->text, "resources/unsubscribe"));
	sup_reply(wa, f, "{}");
	sup_exit(wa, 1 << 8);
	sup_advance(5);
	ck_assert_ptr_nonnull(wa = sup_worker("a"));
	ck_assert_ptr_null(sup_take(wa, MSG_REQUEST));
}
END_TEST

/*
 * A subscription to a resource nobody lists any more is let go all the
 * same, at the upstream that holds it (not "not found").
 */
START_TEST(test_sub_vanished)
{
	struct sup_client	*c1 = sup_session(NULL, NULL);
	struct sup_worker	*wa = sup_worker("a");
	struct sup_frame	*f;
	struct sup_resp		*r;
	static const char	 sub[] = "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"resources/%s\",\"params\":{\"uri\":\"res://v\"}}";

	sup_post(c1, sub, "subscribe");
	ck_assert_ptr_nonnull(f = sup_take(wa, MSG_REQUEST));
	sup_reply(wa, f, "{}");
	sup_send(wa, MSG_CATALOG, 0, 0, 0, "{\"resources\":[]}");
	r = sup_post(c1, sub, "unsubscribe");
	ck_assert_ptr_nonnull(f = sup_take(wa, MSG_REQUEST));
	ck_assert_ptr_nonnull(strstr(f->text, "resources/unsubscribe"));
	sup_reply(wa, f, "{}");
	ck_assert_result(sup_answer(r));
	/* Not held: a URI nobody lists is unknown, as before. */
	ck_assert_error(sup_rpc(c1, sub, "unsubscribe"), -32002);
}
END_TEST

/*
 * A session that ends while its upstream restarts: the new process is
 * told nothing of a subscription it never had, and is not subscribed.
 */
START_TEST(test_sub_ends_starting)
{
	struct sup_client	*c1 = sup_session(NULL, NULL);
	struct sup_worker	*w = sup_worker("a");
	struct sup_frame	*f;

	sup_post(c1, sub_fmt, ++sub_id, "subscribe");
	ck_assert_ptr_nonnull(f = sup_take(w, MSG_REQUEST));
	sup_reply(w, f, "{}");
	w = sup_restart_manual("a");
	sup_delete(c1);
	sup_ready(w, "{\"resources\":[{\"uri\":\"mem://r\",\"name\":\"r\"}]}",
	    "{\"state\":\"ready\",\"capabilities\":{\"resources\":"
	    "{\"subscribe\":true}}}");
	ck_assert_ptr_null(sup_take(w, MSG_REQUEST));
}
END_TEST

/*
 * An unsubscribe that comes before its subscribe's answer withdraws the
 * subscribe: the session is not subscribed, and once the upstream says
 * yes it is told to let go (unless another subscribe is on its way).
 */
START_TEST(test_sub_withdrawn)
{
	struct sup_client	*c1 = sup_session(NULL, NULL);
	struct sup_client	*c2 = sup_session(NULL, NULL);
	struct sup_worker	*w = sup_worker("a");
	struct sup_frame	*f, *f2;
	struct sup_resp		*g1;

	g1 = sup_get(c1, NULL);
	sup_post(c1, sub_fmt, ++sub_id, "subscribe");
	ck_assert_ptr_nonnull(f = sup_take(w, MSG_REQUEST));
	ck_assert_result(sup_rpc(c1, sub_fmt, ++sub_id, "unsubscribe"));
	ck_assert_ptr_null(sup_take(w, MSG_REQUEST));
	sup_reply(w, f, "{}");
	ck_assert_ptr_nonnull(f = sup_take(w, MSG_REQUEST));
	ck_assert_ptr_nonnull(strstr(f->text, "resources/unsubscribe"));
	sup_reply(w, f, "{}");
	updated(w, "mem://r");
	ck_assert_ptr_null(sup_find(g1, "notifications/resources/updated"));
	/* Nor renewed at a restart. */
	sup_exit(w, 1 << 8);
	sup_advance(5);
	ck_assert_ptr_nonnull(w = sup_worker("a"));
	ck_assert_ptr_null(sup_take(w, MSG_REQUEST));

	/* Another session's subscribe on its way keeps the subscription. */
	sup_post(c1, sub_fmt, ++sub_id, "subscribe");
	ck_assert_ptr_nonnull(f = sup_take(w, MSG_REQUEST));
	sup_post(c2, sub_fmt, ++sub_id, "subscribe");
	ck_assert_ptr_nonnull(f2 = sup_take(w, MSG_REQUEST));
	ck_assert_result(sup_rpc(c1, sub_fmt, ++sub_id, "unsubscribe"));
	sup_reply(w, f, "{}");
	ck_assert_ptr_null(sup_take(w, MSG_REQUEST));
	sup_reply(w, f2, "{}");
	ck_assert_ptr_null(sup_take(w, MSG_REQUEST));
	/* c2 is the one subscriber: its leaving lets go. */
	sup_post(c2, sub_fmt, ++sub_id, "unsubscribe");
	ck_assert_ptr_nonnull(f = sup_take(w, MSG_REQUEST));
	ck_assert_ptr_nonnull(strstr(f->text, "resources/unsubscribe"));
	sup_reply(w, f, "{}");

	/* Nor one that another session holds by the time it is answered. */
	sup_post(c1, sub_fmt, ++sub_id, "subscribe");
	ck_assert_ptr_nonnull(f = sup_take(w, MSG_REQUEST));
	sup_post(c2, sub_fmt, ++sub_id, "subscribe");
	ck_assert_ptr_nonnull(f2 = sup_take(w, MSG_REQUEST));
	ck_assert_result(sup_rpc(c1, sub_fmt, ++sub_id, "unsubscribe"));
	sup_reply(w, f2, "{}");
	sup_reply(w, f, "{}");
	ck_assert_ptr_null(sup_take(w, MSG_REQUEST));
	sup_post(c2, sub_fmt, ++sub_id, "unsubscribe");
	ck_assert_ptr_nonnull(f = sup_take(w, MSG_REQUEST));
	ck_assert_ptr_nonnull(strstr(f->text, "resources/unsubscribe"));
	sup_reply(w, f, "{}");
}
END_TEST

/*
 * A session's second subscribe is still on its way when it unsubscribes
 * (it held the URI by the first): the second is withdrawn too, alone and
 * with another session holding the URI.
 */
START_TEST(test_sub_withdrawn_second)
{
	struct sup_client	*c1 = sup_session(NULL, NULL);
	struct sup_client	*c2 = sup_session(NULL, NULL);
	struct sup_worker	*w = sup_worker("a");
	struct sup_frame	*f1, *f2, *f;
	struct sup_resp		*g1;

	g1 = sup_get(c1, NULL);
	sup_post(c1, sub_fmt, ++sub_id, "subscribe");
	ck_assert_ptr_nonnull(f1 = sup_take(w, MSG_REQUEST));
	sup_post(c1, sub_fmt, ++sub_id, "subscribe");
	ck_assert_ptr_nonnull(f2 = sup_take(w, MSG_REQUEST));
	sup_reply(w, f1, "{}");
	sup_post(c1, sub_fmt, ++sub_id, "unsubscribe");
	ck_assert_ptr_nonnull(f = sup_take(w, MSG_REQUEST));
	ck_assert_ptr_nonnull(strstr(f->text, "resources/unsubscribe"));
	sup_reply(w, f, "{}");
	sup_reply(w, f2, "{}");
	/* Let go again (the first unsubscribe came before this yes). */
	ck_assert_ptr_nonnull(f = sup_take(w, MSG_REQUEST));
	ck_assert_ptr_nonnull(strstr(f->text, "resources/unsubscribe"));
	sup_reply(w, f, "{}");
	updated(w, "mem://r");
	ck_assert_ptr_null(sup_find(g1, "notifications/resources/updated"));

	/* c2 holds it; c1's second subscribe is answered by the gateway
	 * while its first is on its way. */
	sup_post(c1, sub_fmt, ++sub_id, "subscribe");
	ck_assert_ptr_nonnull(f1 = sup_take(w, MSG_REQUEST));
	sup_post(c2, sub_fmt, ++sub_id, "subscribe");
	ck_assert_ptr_nonnull(f2 = sup_take(w, MSG_REQUEST));
	sup_reply(w, f2, "{}");
	ck_assert_result(sup_rpc(c1, sub_fmt, ++sub_id, "subscribe"));
	ck_assert_result(sup_rpc(c1, sub_fmt, ++sub_id, "unsubscribe"));
	sup_reply(w, f1, "{}");
	ck_assert_ptr_null(sup_take(w, MSG_REQUEST));
	updated(w, "mem://r");
	ck_assert_ptr_null(sup_find(g1, "notifications/resources/updated"));
	sup_post(c2, sub_fmt, ++sub_id, "unsubscribe");
	ck_assert_ptr_nonnull(f = sup_take(w, MSG_REQUEST));
	ck_assert_ptr_nonnull(strstr(f->text, "resources/unsubscribe"));
	sup_reply(w, f, "{}");
}
END_TEST

/*
 * The resource leaves the catalog while its subscribe is on its way: the
 * unsubscribe is not "not found" but withdraws the subscribe.
 */
START_TEST(test_sub_withdrawn_vanished)
{
	struct sup_client	*c1 = sup_session(NULL, NULL);
	struct sup_worker	*wa = sup_worker("a");
	struct sup_frame	*f;
	struct sup_resp		*g1;
	static const char	 sub[] = "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"resources/%s\",\"params\":{\"uri\":\"res://v\"}}";

	g1 = sup_get(c1, NULL);
	sup_post(c1, sub, "subscribe");
	ck_assert_ptr_nonnull(f = sup_take(wa, MSG_REQUEST));
	sup_send(wa, MSG_CATALOG, 0, 0, 0, "{\"resources\":[]}");
	ck_assert_result(sup_rpc(c1, sub, "unsubscribe"));
	sup_reply(wa, f, "{}");
	ck_assert_ptr_nonnull(f = sup_take(wa, MSG_REQUEST));
	ck_assert_ptr_nonnull(strstr(f->text, "resources/unsubscribe"));
	sup_reply(wa, f, "{}");
	updated(wa, "res://v");
	ck_assert_ptr_null(sup_find(g1, "notifications/resources/updated"));
}
END_TEST

/*
 * A reload removes the upstream that holds a subscription: its
 * subscribers' records go with it (by its sets, not a walk), so that a
 * new subscribe goes to the resource's upstream now, not answered as
 * held by the upstream that was freed.
 */
START_TEST(test_sub_removed)
{
	static const char	 conf_b[] = SUP_BASE
	    "servers = (\n"
	    "  { name = \"b\"; transport = \"stdio\"; command = "
	    "[ \"true\" ]; }\n);\n";
	struct sup_client	*c1 = sup_session(NULL, NULL);
	struct sup_client	*c2 = sup_session(NULL, NULL);
	struct sup_worker	*wa = sup_worker("a"), *wb = sup_worker("b");
	struct sup_frame	*f;

	sup_post(c1, sub_fmt, ++sub_id, "subscribe");
	ck_assert_ptr_nonnull(f = sup_take(wa, MSG_REQUEST));
	sup_reply(wa, f, "{}");
	ck_assert_result(sup_rpc(c2, sub_fmt, ++sub_id, "subscribe"));
	sup_exit(wa, 1 << 8);
	json_decref(sup_reloadq(conf_b));
	ck_assert_ptr_null(upstream_find("a"));
	sup_run();
	sup_post(c1, sub_fmt, ++sub_id, "subscribe");
	ck_assert_ptr_nonnull(f = sup_take(wb, MSG_REQUEST));
	ck_assert_ptr_nonnull(strstr(f->text, "resources/subscribe"));
	sup_reply(wb, f, "{}");
	/* c2 holds nothing now: its unsubscribe asks nobody. */
	ck_assert_result(sup_rpc(c2, sub_fmt, ++sub_id, "unsubscribe"));
	ck_assert_ptr_null(sup_take(wb, MSG_REQUEST));
	sup_post(c1, sub_fmt, ++sub_id, "unsubscribe");
	ck_assert_ptr_nonnull(f = sup_take(wb, MSG_REQUEST));
	ck_assert_ptr_nonnull(strstr(f->text, "resources/unsubscribe"));
	sup_reply(wb, f, "{}");
}
END_TEST

static void
set_level(struct sup_client *cl, const char *level)
{
	ck_assert_result(sup_rpc(cl, "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"logging/setLevel\",\"params\":{\"level\":"
	    "\"%s\"}}", level));
}

/* Each upstream is told a level, once. */
static void
expect_level(struct sup_worker **w, const char *level)
{
	struct sup_frame	*f;
	char			 want[64];
	int			 i;

	snprintf(want, sizeof want, "\"level\":\"%s\"", level);
	for (i = 0; i < 2; i++) {
		ck_assert_ptr_nonnull(f = sup_take(w[i], MSG_REQUEST));
		ck_assert_msg(strstr(f->text, want) != NULL, "%s", f->text);
		sup_reply(w[i], f, "{}");
		ck_assert_ptr_null(sup_take(w[i], MSG_REQUEST));
	}
}

/* Log levels: each session's, and the most verbose to the upstream. */
START_TEST(test_set_level)
{
	struct sup_client	*c1 = sup_session(NULL, NULL), *c2;
	struct sup_worker	*w[2] = { sup_worker("a"), sup_worker("b") };
	struct sup_frame	*f;
	int			 i;

	ck_assert_result(sup_rpc(c1, "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"logging/setLevel\",\"params\":{\"level\":"
	    "\"warning\"}}"));
	for (i = 0; i < 2; i++) {
		ck_assert_ptr_nonnull(f = sup_take(w[i], MSG_REQUEST));
		ck_assert_ptr_nonnull(strstr(f->text, "\"warning\""));
		sup_reply(w[i], f, "{}");
	}
	ck_assert_error(sup_rpc(c1, "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"logging/setLevel\",\"params\":{\"level\":"
	    "\"loud\"}}"), -32602);
	/* A second session: the most verbose of the two goes up. */
	c2 = sup_session(NULL, NULL);
	set_level(c2, "debug");
	expect_level(w, "debug");
	set_level(c2, "error");
	expect_level(w, "warning");
	/* The same again: nothing new to say. */
	set_level(c2, "error");
	for (i = 0; i < 2; i++)
		ck_assert_ptr_null(sup_take(w[i], MSG_REQUEST));
	/* Its session ends: the upstreams may be quieter again. */
	sup_delete(c1);
	expect_level(w, "error");
	sup_delete(c2);
	for (i = 0; i < 2; i++) {
		while ((f = sup_take(w[i], MSG_REQUEST)) != NULL)
			sup_reply(w[i], f, "{}");
	}
}
END_TEST

/*
 * A client that changes its level again and again while an upstream has
 * not answered: one setLevel at a time goes up, then the latest level.
 */
START_TEST(test_set_level_merged)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_worker	*w[2] = { sup_worker("a"), sup_worker("b") };
	struct sup_frame	*f[2];
	const char		*levels[] = { "debug", "info", "critical",
				    "debug", "error" };
	size_t			 i, k;

	set_level(cl, "warning");
	for (i = 0; i < 2; i++)
		ck_assert_ptr_nonnull(f[i] = sup_take(w[i], MSG_REQUEST));
	for (k = 0; k < 5; k++)
		set_level(cl, levels[k]);
	for (i = 0; i < 2; i++) {
		ck_assert_ptr_null(sup_take(w[i], MSG_REQUEST));
		sup_reply(w[i], f[i], "{}");
	}
	expect_level(w, "error");
	ck_assert_uint_eq(sup_count(w[0], MSG_REQUEST), 2);
}
END_TEST

/* A setLevel that fails or times out after levels changed: the latest
 * follows it all the same, and a failed one is not taken as held. */
START_TEST(test_set_level_failed)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_worker	*w[2] = { sup_worker("a"), sup_worker("b") };
	struct sup_frame	*f[2];
	size_t			 i;

	set_level(cl, "warning");
	for (i = 0; i < 2; i++)
		ck_assert_ptr_nonnull(f[i] = sup_take(w[i], MSG_REQUEST));
	set_level(cl, "debug");
	/* a's fails (its connection), b's times out. */
	sup_send(w[0], MSG_FAIL, 0, f[0]->session, f[0]->tag, "{\"code\":"
	    "-32000,\"message\":\"upstream a answered HTTP 503\"}");
	sup_advance(300);
	expect_level(w, "debug");
	/* Failed alone, nothing follows; the same level again is sent. */
	set_level(cl, "info");
	ck_assert_ptr_nonnull(f[0] = sup_take(w[0], MSG_REQUEST));
	sup_send(w[0], MSG_FAIL, 0, f[0]->session, f[0]->tag, "{\"code\":"
	    "-32000,\"message\":\"upstream a answered HTTP 503\"}");
	ck_assert_ptr_null(sup_take(w[0], MSG_REQUEST));
	ck_assert_ptr_nonnull(f[1] = sup_take(w[1], MSG_REQUEST));
	sup_reply(w[1], f[1], "{}");
	set_level(cl, "info");
	ck_assert_ptr_nonnull(f[0] = sup_take(w[0], MSG_REQUEST));
	ck_assert_ptr_nonnull(strstr(f[0]->text, "\"info\""));
	sup_reply(w[0], f[0], "{}");
	ck_assert_ptr_null(sup_take(w[1], MSG_REQUEST));
}
END_TEST

/* Levels set while an upstream starts: it gets one, the latest. */
START_TEST(test_set_level_starting)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_worker	*w = sup_restart_manual("a");
	struct sup_frame	*f;

	set_level(cl, "debug");
	set_level(cl, "critical");
	set_level(cl, "error");
	sup_ready(w, "{\"tools\":[]}", "{\"state\":\"ready\","
	    "\"capabilities\":{\"logging\":{}}}");
	ck_assert_ptr_nonnull(f = sup_take(w, MSG_REQUEST));
	ck_assert_msg(strstr(f->text, "\"error\"") != NULL, "%s", f->text);
	sup_reply(w, f, "{}");
	ck_assert_ptr_null(sup_take(w, MSG_REQUEST));
	while ((f = sup_take(sup_worker("b"), MSG_REQUEST)) != NULL)
		sup_reply(sup_worker("b"), f, "{}");
}
END_TEST

/* A session lets go of a URI at a shared upstream while another's
 * subscribe to it is on its way: the upstream is not told to let go. */
START_TEST(test_unsub_while_subscribing)
{
	struct sup_client	*c1 = sup_session(NULL, NULL);
	struct sup_client	*c2 = sup_session(NULL, NULL);
	struct sup_worker	*w = sup_worker("a");
	struct sup_frame	*f1, *f2;

	sup_post(c1, sub_fmt, ++sub_id, "subscribe");
	ck_assert_ptr_nonnull(f1 = sup_take(w, MSG_REQUEST));
	sup_post(c2, sub_fmt, ++sub_id, "subscribe");
	ck_assert_ptr_nonnull(f2 = sup_take(w, MSG_REQUEST));
	sup_reply(w, f1, "{}");
	ck_assert_result(sup_rpc(c1, sub_fmt, ++sub_id, "unsubscribe"));
	ck_assert_ptr_null(sup_take(w, MSG_REQUEST));
	sup_reply(w, f2, "{}");
	ck_assert_ptr_null(sup_take(w, MSG_REQUEST));
	/* c2 holds it: its unsubscribe, the last, lets go upstream. */
	ck_assert_result(sup_rpc(c2, sub_fmt, ++sub_id, "unsubscribe"));
	ck_assert_ptr_nonnull(f1 = sup_take(w, MSG_REQUEST));
	ck_assert_ptr_nonnull(strstr(f1->text, "resources/unsubscribe"));
	sup_reply(w, f1, "{}");
}
END_TEST

/* A session holds at most 1,024 subscriptions, whatever a template
 * admits: one more is refused until one is let go. */
START_TEST(test_sub_cap)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_worker	*w = sup_worker("b");
	struct sup_frame	*f;
	json_t			*a;
	int			 i;
	static const char	 sub[] = "{\"jsonrpc\":\"2.0\",\"id\":%d,"
	    "\"method\":\"resources/%s\",\"params\":{\"uri\":\"mem://%d\"}}";

	for (i = 0; i < 1024; i++) {
		sup_post(cl, sub, i + 1, "subscribe", i);
		ck_assert_ptr_nonnull(f = sup_take(w, MSG_REQUEST));
		sup_reply(w, f, "{}");
	}
	a = sup_rpc(cl, sub, 2000, "subscribe", 5000);
	ck_assert_error(a, -32003);
	ck_assert_ptr_nonnull(strstr(sup_jstr(a, "error.message"),
	    "too many subscriptions for this session (limit 1024)"));
	ck_assert_ptr_null(sup_take(w, MSG_REQUEST));
	/* One it holds is no more. */
	ck_assert_result(sup_rpc(cl, sub, 2001, "subscribe", 7));
	ck_assert_result(sup_rpc(cl, sub, 2002, "unsubscribe", 7));
	ck_assert_ptr_nonnull(f = sup_take(w, MSG_REQUEST));
	sup_reply(w, f, "{}");
	sup_post(cl, sub, 2003, "subscribe", 5000);
	ck_assert_ptr_nonnull(f = sup_take(w, MSG_REQUEST));
	sup_reply(w, f, "{}");
	/* Its end lets go of them all. */
	sup_delete(cl);
	for (i = 0; (f = sup_take(w, MSG_REQUEST)) != NULL; i++)
		sup_reply(w, f, "{}");
	ck_assert_int_eq(i, 1024);
}
END_TEST

/* A client's roots changed: shared upstreams, never offered roots, are
 * not told (a per-session one is: check_catalog). */
START_TEST(test_client_notify)
{
	struct sup_client	*cl = sup_session(NULL, "{\"roots\":{}}");

	ck_assert_int_eq(sup_post(cl, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/roots/list_changed\"}")->status, 202);
	ck_assert_ptr_null(sup_take(sup_worker("a"), MSG_CLIENT_NOTIFY));
	ck_assert_ptr_null(sup_take(sup_worker("b"), MSG_CLIENT_NOTIFY));
}
END_TEST

/* What /mcp refuses before any routing. */
START_TEST(test_http_refusals)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	char			 h[512];

	snprintf(h, sizeof h, "Mcp-Session-Id: %s\r\nAccept: "
	    "application/json, text/event-stream\r\n", cl->sid);
	ck_assert_int_eq(sup_http("POST", "/mcp", h, "{}")->status, 415);
	snprintf(h, sizeof h, "Mcp-Session-Id: %s\r\nContent-Type: "
	    "application/json\r\n", cl->sid);
	ck_assert_int_eq(sup_http("POST", "/mcp", h, "{}")->status, 406);
	snprintf(h, sizeof h, "Mcp-Session-Id: %s\r\nContent-Type: "
	    "application/json\r\nAccept: application/json, "
	    "text/event-stream\r\n", cl->sid);
	ck_assert_int_eq(sup_http("POST", "/mcp", h, "{\"jsonrpc\":")->status,
	    400);
	ck_assert_int_eq(sup_http("PUT", "/mcp", h, "{}")->status, 405);
	ck_assert_int_eq(sup_http("POST", "/other", h, "{}")->status, 404);
	snprintf(h, sizeof h, "Mcp-Session-Id: %s\r\nAccept: "
	    "application/json\r\n", cl->sid);
	ck_assert_int_eq(sup_http("GET", "/mcp", h, NULL)->status, 406);
	/* A session's id must be whole. */
	cl->sid[strlen(cl->sid) - 1] ^= 1;
	ck_assert_int_eq(sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"ping\"}")->status, 404);
	cl->sid[strlen(cl->sid) - 1] ^= 1;
	snprintf(cl->version, sizeof cl->version, "1999-01-01");
	ck_assert_int_eq(sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"ping\"}")->status, 400);
}
END_TEST

/* A legacy HTTP+SSE session: its one stream carries every answer. */
START_TEST(test_legacy)
{
	struct sup_client	*cl;
	struct sup_resp		*r;
	const char		*q;
	char			 path[256];
	static const char	 h[] = "Content-Type: application/json\r\n";

	r = sup_http("GET", "/sse", "Accept: text/event-stream\r\n", NULL);
	ck_assert_int_eq(r->status, 200);
	ck_assert_str_eq(r->events[0].event, "endpoint");
	ck_assert_ptr_nonnull(q = strstr(r->events[0].data, "/messages?"));
	snprintf(path, sizeof path, "%s", q);
	/* Before initialize: ping alone, as over WebSocket. */
	sup_http("POST", path, h, "{\"jsonrpc\":\"2.0\",\"id\":8,"
	    "\"method\":\"tools/list\"}");
	ck_assert_error(sup_event(r, 1), -32600);
	sup_http("POST", path, h, "{\"jsonrpc\":\"2.0\",\"id\":9,"
	    "\"method\":\"ping\"}");
	ck_assert_jint(sup_event(r, 2), "id", 9);
	ck_assert_ptr_nonnull(json_object_get(sup_event(r, 2), "result"));
	ck_assert_int_eq(sup_http("POST", path, h, "{\"jsonrpc\":\"2.0\","
	    "\"id\":1,\"method\":\"initialize\",\"params\":"
	    "{\"protocolVersion\":\"2024-11-05\",\"capabilities\":{},"
	    "\"clientInfo\":{\"name\":\"old\",\"version\":\"1\"}}}")->status,
	    202);
	ck_assert_jstr(sup_event(r, 3), "result.protocolVersion",
	    "2024-11-05");
	sup_http("POST", path, h, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/initialized\"}");
	sup_http("POST", path, h, "{\"jsonrpc\":\"2.0\",\"id\":2,"
	    "\"method\":\"tools/list\"}");
	ck_assert_jstr(sup_event(r, 4), "result.tools.0.name", "a__echo");
	sup_http("POST", path, h, "{\"jsonrpc\":\"2.0\",\"id\":3,"
	    "\"method\":\"initialize\",\"params\":{}}");
	ck_assert_error(sup_event(r, 5), -32600);
	/* Not reachable by /mcp, and it ends with its stream. */
	cl = sup_client(NULL);
	snprintf(cl->sid, sizeof cl->sid, "%s", strstr(path, "=") + 1);
	ck_assert_int_eq(sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":4,"
	    "\"method\":\"ping\"}")->status, 404);
	ck_assert_uint_eq(session_count(), 1);
	sup_hangup(r->conn);
	ck_assert_uint_eq(session_count(), 0);
	ck_assert_int_eq(sup_http("POST", path, h, "{\"jsonrpc\":\"2.0\","
	    "\"id\":3,\"method\":\"ping\"}")->status, 404);
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
	tcase_add_test(tc, test_duplicate_id);
	tcase_add_test(tc, test_own_answers);
	tcase_add_test(tc, test_prompt_routed);
	tcase_add_test(tc, test_cancel_json);
	tcase_add_test(tc, test_subscriptions);
	tcase_add_test(tc, test_resubscribe);
	tcase_add_test(tc, test_set_level);
	tcase_add_test(tc, test_set_level_merged);
	tcase_add_test(tc, test_set_level_starting);
	tcase_add_test(tc, test_set_level_failed);
	tcase_add_test(tc, test_client_notify);
	tcase_add_test(tc, test_http_refusals);
	tcase_add_test(tc, test_legacy);
	suite_add_tcase(s, tc);

	tc = tcase_create("moved");
	tcase_add_checked_fixture(tc, setup_moved, teardown);
	tcase_add_test(tc, test_sub_moved);
	tcase_add_test(tc, test_sub_vanished);
	tcase_add_test(tc, test_sub_ends_starting);
	tcase_add_test(tc, test_sub_withdrawn);
	tcase_add_test(tc, test_sub_withdrawn_second);
	tcase_add_test(tc, test_sub_withdrawn_vanished);
	tcase_add_test(tc, test_sub_removed);
	tcase_add_test(tc, test_unsub_while_subscribing);
	suite_add_tcase(s, tc);

	/* 1,024 subscriptions and their ends: seconds under ASan. */
	tc = tcase_create("cap");
	tcase_add_checked_fixture(tc, setup_moved, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_sub_cap);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	return (sup_check_main(route_suite()));
}
