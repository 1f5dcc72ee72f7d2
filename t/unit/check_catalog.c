/* SPDX-License-Identifier: ISC */
/*
 * The catalog and sessions' views of it (supervisor/catalog.c, catalog_view.c):
 * every upstream's lists merged under exposed names, collisions reported
 * and never shadowed, names that are not valid mapped and back, pages and
 * their cursors, templates, list_changed, and a per-session upstream's
 * instance listing for its own session only.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "frame.h"
#include "supervisor.h"
#include "xmalloc.h"

#include "sup_check.h"
#include "sup_priv.h"

static const char conf_merge[] = SUP_BASE
    "page_size = 2;\n"
    "servers = (\n"
    "  { name = \"a\"; transport = \"stdio\"; command = [ \"true\" ];\n"
    "    prefix = \"\"; },\n"
    "  { name = \"b\"; transport = \"stdio\"; command = [ \"true\" ];\n"
    "    prefix = \"\"; },\n"
    "  { name = \"c\"; transport = \"stdio\"; command = [ \"true\" ]; }\n"
    ");\n";

static const char conf_view[] = SUP_BASE
    "servers = (\n"
    "  { name = \"a\"; transport = \"stdio\"; command = [ \"true\" ]; },\n"
    "  { name = \"p\"; transport = \"stdio\"; command = [ \"true\" ];\n"
    "    isolation = \"per-session\"; init_timeout = 10; }\n"
    ");\n";
/* Two per-session upstreams, and then the second alone. */
static const char conf_pq[] = SUP_BASE
    "servers = (\n"
    "  { name = \"a\"; transport = \"stdio\"; command = [ \"true\" ]; },\n"
    "  { name = \"p\"; transport = \"stdio\"; command = [ \"true\" ];\n"
    "    isolation = \"per-session\"; init_timeout = 10; },\n"
    "  { name = \"q\"; transport = \"stdio\"; command = [ \"true\" ];\n"
    "    isolation = \"per-session\"; init_timeout = 10; }\n"
    ");\n";
static const char conf_q[] = SUP_BASE
    "servers = (\n"
    "  { name = \"a\"; transport = \"stdio\"; command = [ \"true\" ]; },\n"
    "  { name = \"q\"; transport = \"stdio\"; command = [ \"true\" ];\n"
    "    isolation = \"per-session\"; init_timeout = 10; }\n"
    ");\n";
/* The same without the per-session upstream. */
static const char conf_view_a[] = SUP_BASE
    "servers = (\n"
    "  { name = \"a\"; transport = \"stdio\"; command = [ \"true\" ]; }\n"
    ");\n";

#define TOOL(n)	"{\"name\":\"" n "\",\"inputSchema\":{\"type\":\"object\"}}"
#define NVIEWS		300	/* sessions with views */
#define VIEW_SLICE	32	/* brought up to date in one turn
				   (VIEW_REBUILD_SLICE) */

static const char tools_changed[] = "notifications/tools/list_changed";

static void
setup_merge(void)
{
	sup_catalog("a", "{\"tools\":[" TOOL("echo") "," TOOL("one") "],"
	    "\"resources\":[{\"uri\":\"mem://x\",\"name\":\"x\"}],"
	    "\"resourceTemplates\":[{\"uriTemplate\":\"mem://{key}\","
	    "\"name\":\"m\"}]}");
	sup_catalog("b", "{\"tools\":[" TOOL("echo") "," TOOL("two") "],"
	    "\"resources\":[{\"uri\":\"mem://x\",\"name\":\"x\"}],"
	    "\"resourceTemplates\":[{\"uriTemplate\":\"file:///{+path}\","
	    "\"name\":\"f\"}],\"prompts\":[{\"name\":\"hello\"}]}");
	sup_catalog("c", "{\"tools\":[" TOOL("my tool!") "]}");
	sup_start(conf_merge);
}

static void
setup_view(void)
{
	sup_catalog("a", "{\"tools\":[" TOOL("echo") "]}");
	sup_catalog("p", "{\"tools\":[" TOOL("listed") "]}");
	sup_start(conf_view);
}

static void
setup_pq(void)
{
	sup_catalog("a", "{\"tools\":[" TOOL("echo") "]}");
	sup_catalog("p", "{\"tools\":[" TOOL("listed") "]}");
	sup_catalog("q", "{\"tools\":[" TOOL("listed") "]}");
	sup_start(conf_pq);
}

static void
teardown(void)
{
	sup_stop();
}

static json_t *
ask(struct sup_client *cl, const char *method, const char *params)
{
	return (sup_rpc(cl, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%s\","
	    "\"params\":%s}", method, params));
}

/* Every item of a list, following its cursors, names joined. */
static const char *
all(struct sup_client *cl, const char *method, const char *list,
    const char *key)
{
	static char	 buf[2048];
	char		 params[1024];
	json_t		*a, *v;
	size_t		 i, n = 0;

	buf[0] = '\0';
	snprintf(params, sizeof params, "{}");
	for (;;) {
		a = ask(cl, method, params);
		ck_assert_msg(sup_jget(a, "result") != NULL, "%s",
		    sup_dump(a));
		json_array_foreach(sup_jget(a, list), i, v)
			n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s",
			    n > 0 ? " " : "", sup_jstr(v, key));
		if (sup_jstr(a, "result.nextCursor") == NULL)
			return (buf);
		snprintf(params, sizeof params, "{\"cursor\":\"%s\"}",
		    sup_jstr(a, "result.nextCursor"));
	}
}

/* The exposed name of c's tool "my tool!". */
static const char *
mapped_name(struct sup_client *cl)
{
	const char	*names = all(cl, "tools/list", "result.tools", "name");
	const char	*p = strstr(names, "c__my_tool_");

	ck_assert_ptr_nonnull(p);
	return (p);
}

START_TEST(test_merged)
{
	struct sup_client	*cl = sup_session(NULL, NULL);

	ck_assert_str_eq(all(cl, "tools/list", "result.tools", "name"),
	    "echo one two c__my_tool__d6004191");
	ck_assert_str_eq(all(cl, "resources/list", "result.resources",
	    "uri"), "mem://x");
	ck_assert_str_eq(all(cl, "resources/templates/list",
	    "result.resourceTemplates", "uriTemplate"),
	    "mem://{key} file:///{+path}");
	ck_assert_str_eq(all(cl, "prompts/list", "result.prompts", "name"),
	    "hello");
}
END_TEST

/* A name two upstreams list goes to the first; the other is reported. */
START_TEST(test_collisions)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_resp		*r;
	struct sup_frame	*fa, *fb;
	json_t			*c;

	c = catalog_collisions();
	ck_assert_int_eq(json_array_size(c), 2);
	ck_assert_jstr(c, "0.name", "echo");
	ck_assert_jstr(c, "0.kept", "a");
	ck_assert_jstr(c, "0.dropped", "b");
	ck_assert_jstr(c, "1.name", "mem://x");
	json_decref(c);
	sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"echo\"}}");
	ck_assert_ptr_nonnull(fa = sup_take(sup_worker("a"), MSG_REQUEST));
	ck_assert_ptr_null(sup_take(sup_worker("b"), MSG_REQUEST));
	sup_reply(sup_worker("a"), fa, "{\"content\":[]}");
	/* Once a no longer lists it, b's is exposed, and sessions told. */
	r = sup_get(cl, NULL);
	sup_catalog("a", "{\"tools\":[" TOOL("one") "],"
	    "\"resources\":[{\"uri\":\"mem://x\",\"name\":\"x\"}],"
	    "\"resourceTemplates\":[{\"uriTemplate\":\"mem://{key}\","
	    "\"name\":\"m\"}]}");
	ck_assert_ptr_nonnull(sup_find(r,
	    "notifications/tools/list_changed"));
	ck_assert_ptr_null(sup_find(r,
	    "notifications/resources/list_changed"));
	ck_assert_str_eq(all(cl, "tools/list", "result.tools", "name"),
	    "one echo two c__my_tool__d6004191");
	sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"echo\"}}");
	ck_assert_ptr_nonnull(fb = sup_take(sup_worker("b"), MSG_REQUEST));
	sup_reply(sup_worker("b"), fb, "{\"content\":[]}");
	c = catalog_collisions();
	ck_assert_int_eq(json_array_size(c), 1);
	json_decref(c);
}
END_TEST

/* A name that is not valid is exposed mapped, and called by its own. */
START_TEST(test_mapped)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_frame	*f;
	json_t			*o;
	char			 name[128];

	snprintf(name, sizeof name, "%s", mapped_name(cl));
	sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"%s\"}}", name);
	ck_assert_ptr_nonnull(f = sup_take(sup_worker("c"), MSG_REQUEST));
	o = sup_frame_json(f);
	ck_assert_jstr(o, "params.name", "my tool!");
	json_decref(o);
	sup_reply(sup_worker("c"), f, "{\"content\":[]}");
	o = catalog_renamed();
	ck_assert_jstr(o, "0.name", "my tool!");
	ck_assert_jstr(o, "0.exposed", name);
	json_decref(o);
}
END_TEST

START_TEST(test_pages)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	json_t			*a;
	char			 params[512];

	a = ask(cl, "tools/list", "{}");
	ck_assert_int_eq(sup_jlen(a, "result.tools"), 2);
	ck_assert_ptr_nonnull(sup_jstr(a, "result.nextCursor"));
	/* A cursor survives a change: it goes on after the item it names. */
	snprintf(params, sizeof params, "{\"cursor\":\"%s\"}",
	    sup_jstr(a, "result.nextCursor"));
	sup_catalog("a", "{\"tools\":[" TOOL("new") "," TOOL("echo") ","
	    TOOL("one") "]}");
	a = ask(cl, "tools/list", params);
	ck_assert_jstr(a, "result.tools.0.name", "two");
	/* And whatever a client makes of one is refused, not followed. */
	ck_assert_error(ask(cl, "tools/list", "{\"cursor\":\"bm9wZQ\"}"),
	    -32602);
	ck_assert_error(ask(cl, "tools/list", "{\"cursor\":\"%%%\"}"),
	    -32602);
	ck_assert_error(ask(cl, "tools/list", "{\"cursor\":7}"), -32602);
	ck_assert_error(ask(cl, "tools/list", "{\"cursor\":\"a\","
	    "\"cursor\":\"b\"}"), -32602);
	ck_assert_result(ask(cl, "tools/list", "{\"cursor\":null}"));
}
END_TEST

/*
 * A page that ends on a resource with a long URI: its cursor (the URI in
 * it) is one the gateway takes back; one too long for a cursor is left
 * out of it, and the next page still follows.
 */
START_TEST(test_cursor_long_key)
{
	struct sup_client	*cl;
	json_t			*a;
	char			*u1, *u2, *cat, *params;
	const char		*next;

	u1 = xmalloc(3501);
	memset(u1, 'x', 3500);
	memcpy(u1, "mem://1", 7);
	u1[3500] = '\0';
	u2 = xmalloc(5001);
	memset(u2, 'y', 5000);
	memcpy(u2, "mem://2", 7);
	u2[5000] = '\0';
	/* After a's mem://x: pages [mem://x, u1], [mem://3, u2], [mem://4]. */
	xasprintf(&cat, "{\"resources\":["
	    "{\"uri\":\"%s\",\"name\":\"r1\"},{\"uri\":\"mem://3\","
	    "\"name\":\"r3\"},{\"uri\":\"%s\",\"name\":\"r2\"},"
	    "{\"uri\":\"mem://4\",\"name\":\"r4\"}]}", u1, u2);
	sup_catalog("c", cat);
	cl = sup_session(NULL, NULL);
	a = ask(cl, "resources/list", "{}");
	ck_assert_ptr_nonnull(next = sup_jstr(a, "result.nextCursor"));
	xasprintf(&params, "{\"cursor\":\"%s\"}", next);
	a = ask(cl, "resources/list", params);
	ck_assert_ptr_nonnull(sup_jstr(a, "result.nextCursor"));
	free(params);
	xasprintf(&params, "{\"cursor\":\"%s\"}", sup_jstr(a,
	    "result.nextCursor"));
	a = ask(cl, "resources/list", params);
	ck_assert_str_eq(sup_jstr(a, "result.resources.0.uri"), "mem://4");
	free(params);
	free(cat);
	free(u1);
	free(u2);
}
END_TEST

/* An upstream that lists the same again (as after its list_changed with
 * nothing changed): nothing is rebuilt. */
START_TEST(test_same_lists_again)
{
	const struct catalog	*c = catalog_global();

	sup_catalog("c", "{\"tools\":[" TOOL("my tool!") "]}");
	sup_run();
	ck_assert_ptr_eq(catalog_global(), c);
	sup_catalog("c", "{\"tools\":[" TOOL("my tool!") "," TOOL("x") "]}");
	sup_run();
	ck_assert_ptr_ne(catalog_global(), c);
}
END_TEST

/* A resource is routed by its URI, listed or matching a template. */
START_TEST(test_templates)
{
	struct sup_client	*cl = sup_session(NULL, NULL);

	sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"resources/read\",\"params\":{\"uri\":\"mem://k\"}}");
	ck_assert_ptr_nonnull(sup_take(sup_worker("a"), MSG_REQUEST));
	sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
	    "\"resources/read\",\"params\":{\"uri\":\"file:///x/y.txt\"}}");
	ck_assert_ptr_nonnull(sup_take(sup_worker("b"), MSG_REQUEST));
	ck_assert_error(ask(cl, "resources/read", "{\"uri\":\"mem://a/b\"}"),
	    -32002);
	ck_assert_error(ask(cl, "resources/read", "{\"uri\":\"http://x\"}"),
	    -32002);
	ck_assert_jstr(ask(cl, "resources/read", "{\"uri\":\"http://x\"}"),
	    "error.data.uri", "http://x");
}
END_TEST

/*
 * Templates whose expressions may each take the same characters: every
 * way of matching is followed at once, not searched one after another
 * (db:// and 8,000 dots took minutes of the loop); longer URIs match no
 * template.
 */
START_TEST(test_templates_linear)
{
	struct sup_client	*cl;
	struct sup_resp		*r;
	char			*uri, *body;
	size_t			 n = 8000;

	sup_catalog("a", "{\"resourceTemplates\":["
	    "{\"uriTemplate\":\"db://{s}.{t}.{u}.{v}/{w}\",\"name\":\"d\"},"
	    "{\"uriTemplate\":\"q://{+a}{+b}{+c}{+d}x\",\"name\":\"q\"}]}");
	cl = sup_session(NULL, NULL);
	uri = xmalloc(n + 16);
	memcpy(uri, "db://", 5);
	memset(uri + 5, '.', n);
	memcpy(uri + 5 + n, "!", 2);
	xasprintf(&body, "{\"uri\":\"%s\"}", uri);
	ck_assert_error(ask(cl, "resources/read", body), -32002);
	free(body);
	memcpy(uri, "q://", 4);
	memset(uri + 4, 'x', n);
	memcpy(uri + 4 + n, "y", 2);
	xasprintf(&body, "{\"uri\":\"%s\"}", uri);
	ck_assert_error(ask(cl, "resources/read", body), -32002);
	free(body);
	free(uri);
	/* What matches still does. */
	r = sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"resources/read\",\"params\":{\"uri\":\"db://a.b.c.d/e\"}}");
	ck_assert_ptr_nonnull(sup_take(sup_worker("a"), MSG_REQUEST));
	(void)r;
	r = sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
	    "\"resources/read\",\"params\":{\"uri\":\"q://a/b/c/dx\"}}");
	ck_assert_ptr_nonnull(sup_take(sup_worker("a"), MSG_REQUEST));
	ck_assert_error(ask(cl, "resources/read",
	    "{\"uri\":\"db://a.b.c/e\"}"), -32002);
	ck_assert_error(ask(cl, "resources/read",
	    "{\"uri\":\"db://a.b.c.d/e/f\"}"), -32002);
}
END_TEST

/*
 * A call cancelled while it waits for the session's instances to list is
 * dropped: nothing is forwarded once they have, and no answer is sent.
 */
START_TEST(test_view_wait_cancelled)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_worker	*w = sup_worker("p");
	struct sup_resp		*r, *other;
	struct sup_frame	*f;

	r = sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"a__echo\"}}");
	other = sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"a__echo\"}}");
	ck_assert(!r->done && !other->done);
	ck_assert_int_eq(sup_post(cl, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/cancelled\",\"params\":{\"requestId\":7}}")->
	    status, 202);
	ck_assert_ptr_nonnull(f = sup_take(w, MSG_SESSION_CATALOG));
	sup_send(w, MSG_CATALOG, 0, f->session, 0, "{\"tools\":[]}");
	/* Only the other call goes on. */
	ck_assert_ptr_nonnull(f = sup_take(sup_worker("a"), MSG_REQUEST));
	ck_assert_ptr_null(sup_take(sup_worker("a"), MSG_REQUEST));
	ck_assert_ptr_null(sup_answer(r));
	sup_reply(sup_worker("a"), f, "{\"content\":[]}");
	ck_assert_result(sup_answer(other));
	ck_assert_jint(sup_answer(other), "id", 8);
}
END_TEST

/*
 * A client's cancellation of its request id 0 reaches that request, not
 * the gateway's own request of the session (its setLevel at the
 * session's instance, id 0 too).
 */
START_TEST(test_cancel_id0_own)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_worker	*w = sup_worker("p");
	struct sup_resp		*r;
	struct sup_frame	*f, *lv, *c;

	r = sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"tools/list\"}");
	ck_assert_ptr_nonnull(f = sup_take(w, MSG_SESSION_CATALOG));
	sup_send(w, MSG_CATALOG, 0, f->session, 0, "{\"tools\":[]}");
	ck_assert(r->done);
	ck_assert_result(sup_answer(sup_post(cl, "{\"jsonrpc\":\"2.0\","
	    "\"id\":2,\"method\":\"logging/setLevel\",\"params\":"
	    "{\"level\":\"debug\"}}")));
	ck_assert_ptr_nonnull(lv = sup_take(w, MSG_REQUEST));
	ck_assert_ptr_nonnull(strstr(lv->text, "logging/setLevel"));
	/* The shared upstream has it too: answered. */
	ck_assert_ptr_nonnull(f = sup_take(sup_worker("a"), MSG_REQUEST));
	ck_assert_ptr_nonnull(strstr(f->text, "logging/setLevel"));
	sup_reply(sup_worker("a"), f, "{}");
	r = sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"a__echo\"}}");
	ck_assert_ptr_nonnull(f = sup_take(sup_worker("a"), MSG_REQUEST));
	sup_post(cl, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/cancelled\",\"params\":{\"requestId\":0}}");
	ck_assert_ptr_nonnull(c = sup_take(sup_worker("a"), MSG_CANCEL));
	ck_assert_uint_eq(c->tag, f->tag);
	ck_assert_ptr_null(sup_take(w, MSG_CANCEL));
	sup_reply(w, lv, "{}");
}
END_TEST

/* A session's levels at its instance: one setLevel at a time, then the
 * latest; the client's quota is not filled with them. */
START_TEST(test_level_per_session)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_worker	*w = sup_worker("p");
	struct sup_resp		*r;
	struct sup_frame	*f, *lv;
	int			 i;

	r = sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"tools/list\"}");
	ck_assert_ptr_nonnull(f = sup_take(w, MSG_SESSION_CATALOG));
	sup_send(w, MSG_CATALOG, 0, f->session, 0, "{\"tools\":[]}");
	ck_assert(r->done);
	for (i = 0; i < 300; i++)
		ck_assert_result(sup_answer(sup_post(cl, "{\"jsonrpc\":"
		    "\"2.0\",\"id\":%d,\"method\":\"logging/setLevel\","
		    "\"params\":{\"level\":\"%s\"}}", 10 + i,
		    i % 2 == 0 ? "debug" : "notice")));
	ck_assert_ptr_nonnull(lv = sup_take(w, MSG_REQUEST));
	ck_assert_ptr_nonnull(strstr(lv->text, "\"debug\""));
	ck_assert_ptr_null(sup_take(w, MSG_REQUEST));
	sup_reply(w, lv, "{}");
	ck_assert_ptr_nonnull(lv = sup_take(w, MSG_REQUEST));
	ck_assert_ptr_nonnull(strstr(lv->text, "\"notice\""));
	sup_reply(w, lv, "{}");
	ck_assert_ptr_null(sup_take(w, MSG_REQUEST));
	while ((f = sup_take(sup_worker("a"), MSG_REQUEST)) != NULL)
		sup_reply(sup_worker("a"), f, "{}");
}
END_TEST

/* A client's roots changed: its per-session instance is told, not the
 * shared upstream. */
START_TEST(test_roots_changed)
{
	struct sup_client	*cl = sup_session(NULL, "{\"roots\":{}}");
	struct sup_frame	*f;

	ck_assert_int_eq(sup_post(cl, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/roots/list_changed\"}")->status, 202);
	ck_assert_ptr_nonnull(f = sup_take(sup_worker("p"), MSG_CLIENT_NOTIFY));
	ck_assert_ptr_nonnull(strstr(f->text, "roots/list_changed"));
	ck_assert_uint_ne(f->session, 0);
	ck_assert_ptr_null(sup_take(sup_worker("a"), MSG_CLIENT_NOTIFY));
}
END_TEST

/* A per-session upstream is listed as each session's instance lists it. */
START_TEST(test_view_per_session)
{
	struct sup_client	*c1 = sup_session(NULL, NULL);
	struct sup_client	*c2 = sup_session(NULL, NULL);
	struct sup_worker	*w = sup_worker("p");
	struct sup_resp		*l1, *l2;
	struct sup_frame	*f1, *f2, *f;

	l1 = sup_post(c1, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"tools/list\"}");
	ck_assert(!l1->done);
	ck_assert_ptr_nonnull(f1 = sup_take(w, MSG_SESSION_CATALOG));
	l2 = sup_post(c2, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"tools/list\"}");
	ck_assert_ptr_nonnull(f2 = sup_take(w, MSG_SESSION_CATALOG));
	ck_assert_uint_ne(f1->session, f2->session);
	sup_send(w, MSG_CATALOG, 0, f2->session, 0, "{\"tools\":["
	    TOOL("mine2") "]}");
	ck_assert_str_eq(all(c2, "tools/list", "result.tools", "name"),
	    "a__echo p__mine2");
	ck_assert(l2->done);
	ck_assert(!l1->done);
	sup_send(w, MSG_CATALOG, 0, f1->session, 0, "{\"tools\":["
	    TOOL("mine1") "]}");
	ck_assert(l1->done);
	ck_assert_int_eq(sup_jlen(sup_answer(l1), "result.tools"), 2);
	ck_assert_jstr(sup_answer(l1), "result.tools.1.name", "p__mine1");
	/* A session calls its own instance's tools only. */
	ck_assert_error(ask(c1, "tools/call", "{\"name\":\"p__mine2\"}"),
	    -32602);
	ck_assert_error(ask(c1, "tools/call", "{\"name\":\"p__listed\"}"),
	    -32602);
	sup_post(c1, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"p__mine1\"}}");
	ck_assert_ptr_nonnull(f = sup_take(w, MSG_REQUEST));
	ck_assert_uint_eq(f->session, f1->session);
	sup_reply(w, f, "{\"content\":[]}");
	/* Its instance's list changes: that session is told, no other. */
	l1 = sup_get(c1, NULL);
	l2 = sup_get(c2, NULL);
	sup_send(w, MSG_CATALOG, 0, f1->session, 0, "{\"tools\":["
	    TOOL("mine1") "," TOOL("more") "]}");
	ck_assert_ptr_nonnull(sup_find(l1,
	    "notifications/tools/list_changed"));
	ck_assert_ptr_null(sup_find(l2, "notifications/tools/list_changed"));
}
END_TEST

/*
 * The per-session worker dies while a session's first list waits for its
 * part: the list is answered without it (its part is counted at the
 * upstream, so the failure looks for it).
 */
START_TEST(test_view_part_down)
{
	struct sup_client	*c1 = sup_session(NULL, NULL);
	struct sup_worker	*w = sup_worker("p");
	struct sup_resp		*l;

	l = sup_post(c1, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"tools/list\"}");
	ck_assert_ptr_nonnull(sup_take(w, MSG_SESSION_CATALOG));
	ck_assert(!l->done);
	sup_exit(w, 1 << 8);
	ck_assert(l->done);
	ck_assert_jstr(sup_answer(l), "result.tools.0.name", "a__echo");
}
END_TEST

/*
 * A list asked while a per-session upstream restarts waits; once it is
 * ready the session's instance is asked (the upstream's own parts, not a
 * walk of every session), and the list answers with its part.
 */
START_TEST(test_view_part_ready)
{
	struct sup_client	*c1 = sup_session(NULL, NULL);
	struct sup_client	*c2 = sup_session(NULL, NULL);
	struct sup_worker	*w = sup_worker("p");
	struct sup_resp		*l1, *l2;
	struct sup_frame	*f;

	sup_manual("p");
	sup_exit(w, 1 << 8);
	sup_advance(5);
	ck_assert_ptr_nonnull(w = sup_worker("p"));
	l1 = sup_post(c1, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"tools/list\"}");
	l2 = sup_post(c2, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"tools/list\"}");
	ck_assert_ptr_null(sup_take(w, MSG_SESSION_CATALOG));
	ck_assert(!l1->done && !l2->done);
	sup_send(w, MSG_HELLO, 0, 0, 0, "{\"version\":1}");
	sup_send(w, MSG_STATUS, 0, 0, 0, "{\"state\":\"ready\"}");
	ck_assert_ptr_nonnull(f = sup_take(w, MSG_SESSION_CATALOG));
	sup_send(w, MSG_CATALOG, 0, f->session, 0, "{\"tools\":["
	    TOOL("mine") "]}");
	ck_assert_ptr_nonnull(f = sup_take(w, MSG_SESSION_CATALOG));
	sup_send(w, MSG_CATALOG, 0, f->session, 0, "{\"tools\":["
	    TOOL("mine") "]}");
	ck_assert(l1->done && l2->done);
	ck_assert_jstr(sup_answer(l1), "result.tools.1.name", "p__mine");
	ck_assert_jstr(sup_answer(l2), "result.tools.1.name", "p__mine");
}
END_TEST

/*
 * A session's instance: an unsubscribe before the subscribe's answer
 * withdraws it, and the instance is told to let go once it said yes.
 */
START_TEST(test_view_sub_withdrawn)
{
	struct sup_client	*c1 = sup_session(NULL, NULL);
	struct sup_worker	*w = sup_worker("p");
	struct sup_resp		*l;
	struct sup_frame	*f, *fs, *fs2;
	int			 i;
	/* Each request its own id: one in flight is not used again. */
	static const char	 sub[] = "{\"jsonrpc\":\"2.0\",\"id\":%d,"
	    "\"method\":\"resources/%s\",\"params\":{\"uri\":\"mine://r\"}}";
	int			 id = 100;

	l = sup_post(c1, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"resources/list\"}");
	ck_assert_ptr_nonnull(f = sup_take(w, MSG_SESSION_CATALOG));
	sup_send(w, MSG_CATALOG, 0, f->session, 0, "{\"resources\":[{"
	    "\"uri\":\"mine://r\",\"name\":\"r\"}]}");
	ck_assert(l->done);
	sup_post(c1, sub, ++id, "subscribe");
	ck_assert_ptr_nonnull(fs = sup_take(w, MSG_REQUEST));
	ck_assert_uint_eq(fs->session, f->session);
	ck_assert_result(sup_rpc(c1, sub, ++id, "unsubscribe"));
	ck_assert_ptr_null(sup_take(w, MSG_REQUEST));
	sup_reply(w, fs, "{}");
	ck_assert_ptr_nonnull(fs = sup_take(w, MSG_REQUEST));
	ck_assert_ptr_nonnull(strstr(fs->text, "resources/unsubscribe"));
	ck_assert_uint_eq(fs->session, f->session);
	sup_reply(w, fs, "{}");
	/* Not held: a second unsubscribe asks nobody. */
	ck_assert_result(sup_rpc(c1, sub, ++id, "unsubscribe"));
	ck_assert_ptr_null(sup_take(w, MSG_REQUEST));

	/* Subscribed again meanwhile: kept, whichever yes comes first. */
	for (i = 0; i < 2; i++) {
		sup_post(c1, sub, ++id, "subscribe");
		ck_assert_ptr_nonnull(fs = sup_take(w, MSG_REQUEST));
		ck_assert_result(sup_rpc(c1, sub, ++id, "unsubscribe"));
		sup_post(c1, sub, ++id, "subscribe");
		ck_assert_ptr_nonnull(fs2 = sup_take(w, MSG_REQUEST));
		sup_reply(w, i == 0 ? fs : fs2, "{}");
		sup_reply(w, i == 0 ? fs2 : fs, "{}");
		ck_assert_ptr_null(sup_take(w, MSG_REQUEST));
		sup_post(c1, sub, ++id, "unsubscribe");
		ck_assert_ptr_nonnull(fs = sup_take(w, MSG_REQUEST));
		ck_assert_ptr_nonnull(strstr(fs->text,
		    "resources/unsubscribe"));
		sup_reply(w, fs, "{}");
	}
}
END_TEST

/* Make n sessions with views: the first's instance lists "other", the
 * rest "mine"; each with its standalone stream. */
static void
views_make(struct sup_client **cl, struct sup_resp **st, size_t n)
{
	struct sup_worker	*w = sup_worker("p");
	struct sup_resp		*l;
	struct sup_frame	*f;
	size_t			 i;

	sup_nofile(4096);
	for (i = 0; i < n; i++) {
		cl[i] = sup_session(NULL, NULL);
		l = sup_post(cl[i], "{\"jsonrpc\":\"2.0\",\"id\":1,"
		    "\"method\":\"tools/list\"}");
		ck_assert_ptr_nonnull(f = sup_take(w, MSG_SESSION_CATALOG));
		sup_send(w, MSG_CATALOG, 0, f->session, 0, "{\"tools\":[%s]}",
		    i == 0 ? TOOL("other") : TOOL("mine"));
		ck_assert(l->done);
		st[i] = sup_get(cl[i], NULL);
	}
}

/* The session of a client. */
static struct session *
session_of(struct sup_client *cl)
{
	struct session	*s = session_find(cl->sid, strlen(cl->sid));

	ck_assert_ptr_nonnull(s);
	return (s);
}

/*
 * A change of the shared catalog reaches the sessions with views a slice
 * at a time, not all in the turn it came; a session that asks before the
 * walk reaches it is brought up to date by its request; every session is
 * told once.
 */
START_TEST(test_view_rebuild_sliced)
{
	static struct sup_client	*cl[NVIEWS];
	static struct sup_resp		*st[NVIEWS];
	struct sup_resp			*l;
	size_t				 i, moved;
	int				 turns;

	views_make(cl, st, NVIEWS);
	sup_sendq(sup_worker("a"), MSG_CATALOG, 0, 0, 0, "{\"tools\":["
	    TOOL("echo") "," TOOL("new") "]}");
	/* The turn the change comes in moves one slice. */
	for (turns = moved = 0; moved == 0; turns++) {
		ck_assert_int_lt(turns, 10);
		sup_turn();
		for (i = 0; i < NVIEWS; i++)
			moved += catalog_tool(view_catalog(session_of(cl[i])),
			    "a__new") != NULL;
	}
	ck_assert_uint_le(moved, VIEW_SLICE);
	/* The last asks: its request moves it, before the walk gets to the
	 * one before it. */
	l = sup_postq(cl[NVIEWS - 1], "{\"jsonrpc\":\"2.0\",\"id\":2,"
	    "\"method\":\"tools/list\"}");
	for (turns = 0; !l->done; turns++) {
		ck_assert_int_lt(turns, 5);
		sup_turn();
	}
	ck_assert_ptr_null(catalog_tool(view_catalog(session_of(
	    cl[NVIEWS - 2])), "a__new"));
	ck_assert_uint_eq(sup_jlen(sup_answer(l), "result.tools"), 3);
	ck_assert_jstr(sup_answer(l), "result.tools.1.name", "a__new");
	sup_run();
	ck_assert_str_eq(all(cl[0], "tools/list", "result.tools", "name"),
	    "a__echo a__new p__other");
	ck_assert_str_eq(all(cl[1], "tools/list", "result.tools", "name"),
	    "a__echo a__new p__mine");
	sup_clients_io();
	for (i = 0; i < NVIEWS; i++)
		ck_assert_uint_eq(sup_nfound(st[i], tools_changed), 1);
}
END_TEST

/* Count a walk's visits. */
static void
walk_count(struct session *s, void *arg)
{
	(void)s;
	(*(unsigned int *)arg)++;
}

/*
 * A walk begun again while under way goes on from where it is, then from
 * the first session: what it will still visit (the first sessions too)
 * is ahead of it, and every session is visited.
 */
START_TEST(test_walk_wraps)
{
	struct session		*s[4];
	struct session_walk	 w;
	unsigned int		 visits = 0;
	size_t			 i;

	for (i = 0; i < 4; i++)
		s[i] = session_of(sup_session(NULL, NULL));
	session_walk_init(&w, walk_count, &visits, 1);
	session_walk_begin(&w);
	ck_assert_uint_eq(visits, 1);
	ck_assert(!session_walk_ahead(&w, s[0]));
	ck_assert(session_walk_ahead(&w, s[1]));
	session_walk_begin(&w);
	ck_assert(session_walk_ahead(&w, s[0]));
	ck_assert(session_walk_ahead(&w, s[3]));
	session_walk_finish(&w);
	ck_assert_uint_eq(visits, 1 + 4);
	ck_assert(!session_walk_ahead(&w, s[0]));
}
END_TEST

/*
 * Changes that come faster than the walk that brings the views up to
 * date: the walk goes on from where it is (then from the first session
 * again), so the last sessions are reached too, not only the first ones
 * over and over.
 */
START_TEST(test_view_rebuild_churn)
{
	static struct sup_client	*cl[NVIEWS];
	static struct sup_resp		*st[NVIEWS];
	int				 turn;

	views_make(cl, st, NVIEWS);
	for (turn = 0; turn < 3 * NVIEWS / VIEW_SLICE; turn++) {
		sup_sendq(sup_worker("a"), MSG_CATALOG, 0, 0, 0, "{\"tools\":["
		    TOOL("echo") ",{\"name\":\"new%d\",\"inputSchema\":"
		    "{\"type\":\"object\"}}]}", turn);
		sup_turn();
	}
	sup_clients_io();
	ck_assert_uint_ge(sup_nfound(st[NVIEWS - 1], tools_changed), 1);
	ck_assert_uint_ge(sup_nfound(st[NVIEWS / 2], tools_changed), 1);
	sup_run();
}
END_TEST

/*
 * A reload removes the per-session upstream while its worker runs: a
 * session that asks before the walk reaches it no longer has a view (its
 * parts all went), and lists the shared catalog.
 */
START_TEST(test_view_reload_removed)
{
	static struct sup_client	*cl[NVIEWS];
	static struct sup_resp		*st[NVIEWS];

	struct sup_resp			*l;
	int				 turns;

	views_make(cl, st, NVIEWS);
	json_decref(sup_reloadq(conf_view_a));
	l = sup_postq(cl[NVIEWS - 1], "{\"jsonrpc\":\"2.0\",\"id\":2,"
	    "\"method\":\"tools/list\"}");
	for (turns = 0; !l->done; turns++) {
		ck_assert_int_lt(turns, 5);
		sup_turn();
	}
	ck_assert_ptr_nonnull(session_of(cl[NVIEWS - 2])->view);
	ck_assert_uint_eq(sup_jlen(sup_answer(l), "result.tools"), 1);
	ck_assert_jstr(sup_answer(l), "result.tools.0.name", "a__echo");
	sup_run();
	ck_assert_str_eq(all(cl[0], "tools/list", "result.tools", "name"),
	    "a__echo");
}
END_TEST

/* How many events of a stream carry a method. */
static size_t
count_method(struct sup_resp *r, const char *method)
{
	size_t	i, n = 0;

	for (i = 0; i < r->nevents; i++) {
		if (strstr(r->events[i].data, method) != NULL)
			n++;
	}
	return (n);
}

/* A reload that removes a per-session upstream tells each session its
 * tools changed once. */
START_TEST(test_view_removed_told_once)
{
	static struct sup_client	*cl[3];
	static struct sup_resp		*st[3];
	size_t				 i;

	views_make(cl, st, 3);
	json_decref(sup_reload(conf_view_a));
	sup_run();
	for (i = 0; i < 3; i++)
		ck_assert_uint_eq(count_method(st[i],
		    "notifications/tools/list_changed"), 1);
}
END_TEST

/*
 * A reload removes the per-session upstream whose worker has exited: it
 * is freed at once, so every view is brought up to date first, none
 * naming it after (under ASan, a later slice read it after the free).
 */
START_TEST(test_view_reload_freed)
{
	static struct sup_client	*cl[NVIEWS];
	static struct sup_resp		*st[NVIEWS];
	size_t				 i;

	views_make(cl, st, NVIEWS);
	sup_exit(sup_worker("p"), 1 << 8);
	json_decref(sup_reloadq(conf_view_a));
	ck_assert_ptr_null(upstream_find("p"));
	sup_run();
	for (i = 0; i < NVIEWS; i += NVIEWS / 4)
		ck_assert_str_eq(all(cl[i], "tools/list", "result.tools",
		    "name"), "a__echo");
}
END_TEST

/*
 * A session's first list waits for two parts, before any view exists;
 * a reload removes one upstream, which is freed as its worker exits: the
 * session forgets its part there, and the other's part completes its
 * view (under ASan, the part was read after the free).
 */
START_TEST(test_view_part_freed)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_worker	*wp = sup_worker("p"), *wq = sup_worker("q");
	struct sup_resp		*l;
	struct sup_frame	*fq;

	l = sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"tools/list\"}");
	ck_assert(!l->done);
	ck_assert_ptr_nonnull(sup_take(wp, MSG_SESSION_CATALOG));
	ck_assert_ptr_nonnull(fq = sup_take(wq, MSG_SESSION_CATALOG));
	json_decref(sup_reload(conf_q));
	sup_exit(wp, 0);
	ck_assert_ptr_null(upstream_find("p"));
	ck_assert(!l->done);
	sup_send(wq, MSG_CATALOG, 0, fq->session, 0, "{\"tools\":["
	    TOOL("mine") "]}");
	ck_assert(l->done);
	ck_assert_str_eq(all(cl, "tools/list", "result.tools", "name"),
	    "a__echo q__mine");
}
END_TEST

/* An instance that never lists: the session goes on without it. */
START_TEST(test_view_timeout)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_resp		*l, *r;

	l = sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"tools/list\"}");
	ck_assert_ptr_nonnull(sup_take(sup_worker("p"), MSG_SESSION_CATALOG));
	sup_advance(10);
	ck_assert(!l->done);
	sup_advance(15);
	ck_assert(l->done);
	ck_assert_int_eq(sup_jlen(sup_answer(l), "result.tools"), 1);
	/* A call to its tools says why, after asking once more. */
	r = sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"p__listed\"}}");
	ck_assert(!r->done);
	ck_assert_ptr_nonnull(sup_take(sup_worker("p"), MSG_SESSION_CATALOG));
	sup_advance(15);
	ck_assert_error(sup_answer(r), -32000);
	ck_assert_ptr_nonnull(strstr(sup_jstr(sup_answer(r), "error.message"),
	    "did not list its catalog"));
}
END_TEST

/* A method nobody has is answered at once, not after the view. */
START_TEST(test_unknown_method_not_held)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_resp		*l, *u;

	l = sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"tools/list\"}");
	ck_assert_ptr_nonnull(sup_take(sup_worker("p"), MSG_SESSION_CATALOG));
	ck_assert(!l->done);
	u = sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
	    "\"no/such/method\"}");
	ck_assert(u->done);
	ck_assert_error(sup_answer(u), -32601);
	/* server/discover is not a 2025 session's either. */
	u = sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":"
	    "\"server/discover\"}");
	ck_assert(u->done);
	ck_assert_error(sup_answer(u), -32601);
	ck_assert(!l->done);
	sup_advance(25);
	ck_assert(l->done);
}
END_TEST

/* An instance that cannot start: its error is the calls' answer. */
START_TEST(test_view_part_error)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_worker	*w = sup_worker("p");
	struct sup_frame	*f;
	struct sup_resp		*r;
	json_t			*a;

	r = sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"p__listed\"}}");
	ck_assert_ptr_nonnull(f = sup_take(w, MSG_SESSION_CATALOG));
	sup_send(w, MSG_CATALOG, 0, f->session, 0, "{\"error\":\"the "
	    "instance could not start: boom\"}");
	ck_assert_error(sup_answer(r), -32000);
	ck_assert_ptr_nonnull(strstr(sup_jstr(sup_answer(r),
	    "error.message"), "boom"));
	/* A list asks again; this time it comes. */
	r = sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
	    "\"tools/list\"}");
	ck_assert_ptr_nonnull(f = sup_take(w, MSG_SESSION_CATALOG));
	sup_send(w, MSG_CATALOG, 0, f->session, 0, "{\"tools\":["
	    TOOL("listed") "]}");
	ck_assert_int_eq(sup_jlen(sup_answer(r), "result.tools"), 2);
	sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"p__listed\"}}");
	ck_assert_ptr_nonnull(f = sup_take(w, MSG_REQUEST));
	sup_reply(w, f, "{\"content\":[]}");
	a = ask(cl, "ping", "{}");
	ck_assert_result(a);
}
END_TEST

static Suite *
catalog_suite(void)
{
	Suite	*s = suite_create("catalog");
	TCase	*tc;

	tc = tcase_create("merge");
	tcase_add_checked_fixture(tc, setup_merge, teardown);
	tcase_add_test(tc, test_merged);
	tcase_add_test(tc, test_collisions);
	tcase_add_test(tc, test_mapped);
	tcase_add_test(tc, test_pages);
	tcase_add_test(tc, test_templates);
	tcase_add_test(tc, test_same_lists_again);
	tcase_add_test(tc, test_cursor_long_key);
	tcase_add_test(tc, test_templates_linear);
	suite_add_tcase(s, tc);

	tc = tcase_create("view");
	/* 300 sessions with views: over 2 s under ASan on a busy machine,
	 * where 4 s has been too little. */
	tcase_set_timeout(tc, 20);
	tcase_add_checked_fixture(tc, setup_view, teardown);
	tcase_add_test(tc, test_view_per_session);
	tcase_add_test(tc, test_view_wait_cancelled);
	tcase_add_test(tc, test_cancel_id0_own);
	tcase_add_test(tc, test_level_per_session);
	tcase_add_test(tc, test_roots_changed);
	tcase_add_test(tc, test_view_timeout);
	tcase_add_test(tc, test_unknown_method_not_held);
	tcase_add_test(tc, test_view_part_error);
	tcase_add_test(tc, test_view_sub_withdrawn);
	tcase_add_test(tc, test_view_part_down);
	tcase_add_test(tc, test_view_part_ready);
	tcase_add_test(tc, test_view_rebuild_sliced);
	tcase_add_test(tc, test_view_rebuild_churn);
	tcase_add_test(tc, test_walk_wraps);
	tcase_add_test(tc, test_view_reload_removed);
	tcase_add_test(tc, test_view_removed_told_once);
	tcase_add_test(tc, test_view_reload_freed);
	suite_add_tcase(s, tc);

	tc = tcase_create("two views");
	tcase_add_checked_fixture(tc, setup_pq, teardown);
	tcase_add_test(tc, test_view_part_freed);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	return (sup_check_main(catalog_suite()));
}
