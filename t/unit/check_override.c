/* SPDX-License-Identifier: ISC */
/*
 * An upstream's tool overrides (tools = ( ... ); supervisor/override.c,
 * applied by catalog.c): a tool renamed (no prefix) and called under the
 * upstream's own name; its title, description and annotations replaced;
 * a hidden tool neither listed nor callable; a name taken twice reported,
 * never shadowed; what is pinned is the upstream's own definition; a
 * reload changes the overrides without restarting the upstream.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "frame.h"
#include "pin.h"
#include "supervisor.h"

#include "sup_check.h"

#define OVERRIDES \
    "    tools = (\n" \
    "      { tool = \"echo\"; name = \"say\"; title = \"Say\";\n" \
    "        description = \"Say the text.\";\n" \
    "        annotations = { readOnlyHint = true;" \
    " destructiveHint = false; }; },\n" \
    "      { tool = \"secret\"; hidden = true; }\n" \
    "    );"

#define SERVERS(a_extra) \
    "servers = (\n" \
    "  { name = \"a\"; transport = \"stdio\"; command = [ \"true\" ];\n" \
    a_extra " },\n" \
    "  { name = \"b\"; transport = \"stdio\"; command = [ \"true\" ];" \
    " prefix = \"\"; }\n" \
    ");\n"

static const char conf_overrides[] = SUP_BASE SERVERS(OVERRIDES);
static const char conf_plain[] = SUP_BASE SERVERS("");

#define TOOL(n, more) "{\"name\":\"" n "\"," more \
    "\"inputSchema\":{\"type\":\"object\"}}"
#define CATALOG_A "{\"tools\":[" \
    TOOL("echo", "\"description\":\"Echo the text.\"," \
    "\"annotations\":{\"openWorldHint\":true},") "," \
    TOOL("secret", "") "," TOOL("other", "") "]}"

static void
setup(void)
{
	sup_catalog("a", CATALOG_A);
	sup_catalog("b", "{\"tools\":[" TOOL("say", "") "," TOOL("b1", "")
	    "]}");
	sup_start(conf_overrides);
}

static void
teardown(void)
{
	sup_stop();
}

/* The tools listed, by name (borrowed from the answer). */
static json_t *
listed(struct sup_client *cl)
{
	return (sup_jget(sup_rpc(cl, "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"tools/list\"}"), "result.tools"));
}

static const char *
names(struct sup_client *cl)
{
	static char	 buf[512];
	json_t		*v;
	size_t		 i, n = 0;

	buf[0] = '\0';
	json_array_foreach(listed(cl), i, v)
		n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s",
		    n > 0 ? " " : "", sup_jstr(v, "name"));
	return (buf);
}

static json_t *
call(struct sup_client *cl, const char *name)
{
	return (sup_rpc(cl, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"%s\"}}", name));
}

/* Renamed, retitled, redescribed, reannotated; called by its own name. */
START_TEST(test_rename)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_frame	*f;
	json_t			*t, *o;

	ck_assert_str_eq(names(cl), "say a__other b1");
	t = json_array_get(listed(cl), 0);
	ck_assert_jstr(t, "title", "Say");
	ck_assert_jstr(t, "description", "Say the text.");
	ck_assert(json_is_true(sup_jget(t, "annotations.readOnlyHint")));
	ck_assert(json_is_false(sup_jget(t, "annotations.destructiveHint")));
	ck_assert(json_is_true(sup_jget(t, "annotations.openWorldHint")));
	sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"say\"}}");
	ck_assert_ptr_nonnull(f = sup_take(sup_worker("a"), MSG_REQUEST));
	o = sup_frame_json(f);
	ck_assert_jstr(o, "params.name", "echo");
	json_decref(o);
	sup_reply(sup_worker("a"), f, "{\"content\":[]}");
	/* Its old name is gone. */
	ck_assert_error(call(cl, "a__echo"), -32602);
	ck_assert_ptr_null(sup_take(sup_worker("a"), MSG_REQUEST));
	/* mcpctl tools shows the upstream's own name. */
	o = catalog_tools_json("say");
	ck_assert_jstr(o, "0.original", "echo");
	ck_assert_jstr(o, "0.owner", "a");
	json_decref(o);
}
END_TEST

/* A hidden tool is neither listed nor callable. */
START_TEST(test_hidden)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	json_t			*a;

	ck_assert_ptr_null(strstr(names(cl), "secret"));
	a = call(cl, "a__secret");
	ck_assert_error(a, -32602);
	ck_assert_jstr(a, "error.message", "unknown tool: a__secret");
	ck_assert_ptr_null(sup_take(sup_worker("a"), MSG_REQUEST));
}
END_TEST

/* A name taken twice: the earlier upstream keeps it, and it is said. */
START_TEST(test_collision)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_frame	*f;
	json_t			*c;

	c = catalog_collisions();
	ck_assert_int_eq(json_array_size(c), 1);
	ck_assert_jstr(c, "0.name", "say");
	ck_assert_jstr(c, "0.kept", "a");
	ck_assert_jstr(c, "0.dropped", "b");
	json_decref(c);
	call(cl, "say");
	ck_assert_ptr_null(sup_take(sup_worker("b"), MSG_REQUEST));
	ck_assert_ptr_nonnull(f = sup_take(sup_worker("a"), MSG_REQUEST));
	sup_reply(sup_worker("a"), f, "{\"content\":[]}");
}
END_TEST

/* What is pinned is what the upstream said, not the override. */
START_TEST(test_pin_original)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct pin		*p;
	json_t			*a;

	ck_assert_ptr_nonnull(p = pin_find("a", "echo", 4));
	ck_assert_str_eq(p->exposed, "say");
	ck_assert_ptr_nonnull(strstr(p->def, "\"Echo the text.\""));
	ck_assert_ptr_null(strstr(p->def, "readOnlyHint"));
	/* Listed again as it was: no change, whatever the override did. */
	sup_catalog("a", CATALOG_A);
	ck_assert_str_eq(names(cl), "say a__other b1");
	ck_assert(!p->changed);
	/* A hidden tool is not pinned. */
	ck_assert_ptr_null(pin_find("a", "secret", 6));
	/*
	 * The upstream's change holds the renamed tool back (b's "say",
	 * which it kept out, is gone first: a held tool leaves its name
	 * free, as a tool no longer listed does).
	 */
	sup_catalog("b", "{\"tools\":[" TOOL("b1", "") "]}");
	sup_catalog("a", "{\"tools\":["
	    TOOL("echo", "\"description\":\"Echo it all.\",") "]}");
	ck_assert_str_eq(names(cl), "b1");
	a = call(cl, "say");
	ck_assert_msg(sup_jstr(a, "error.message") != NULL, "%s", sup_dump(a));
	ck_assert_ptr_nonnull(strstr(sup_jstr(a, "error.message"),
	    "tool say is held back"));
}
END_TEST

/* A reload changes the overrides at once, without a restart. */
START_TEST(test_reload)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_resp		*st;
	json_t			*r;

	st = sup_get(cl, NULL);
	r = sup_reload(conf_plain);
	ck_assert_int_eq(sup_jlen(r, "changed"), 0);
	json_decref(r);
	ck_assert_ptr_nonnull(sup_find(st,
	    "notifications/tools/list_changed"));
	ck_assert_str_eq(names(cl), "a__echo a__secret a__other say b1");
	ck_assert_str_eq(sup_jstr(json_array_get(listed(cl), 0),
	    "description"), "Echo the text.");
	ck_assert_ptr_null(sup_jget(json_array_get(listed(cl), 0),
	    "annotations.readOnlyHint"));
}
END_TEST

static Suite *
override_suite(void)
{
	Suite	*s = suite_create("override");
	TCase	*tc;

	tc = tcase_create("override");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_rename);
	tcase_add_test(tc, test_hidden);
	tcase_add_test(tc, test_collision);
	tcase_add_test(tc, test_pin_original);
	tcase_add_test(tc, test_reload);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	return (sup_check_main(override_suite()));
}
