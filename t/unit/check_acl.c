/* SPDX-License-Identifier: ISC */
/*
 * Who may do what (supervisor/acl.c and where it is asked: route.c,
 * route_sub.c, catalog.c, ctools.c): a named client's allow and deny
 * patterns on tools, prompts, resources and templates; what is denied is
 * absent from its lists and unknown to its calls, and never reaches an
 * upstream; a URI that could be read otherwise than its normal form says
 * is refused; the register right; a reload changes rights at once, and
 * a client it removes has none left, in the sessions that outlive it (a
 * WebSocket, a stream opened before).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "frame.h"
#include "supervisor.h"
#include "xmalloc.h"

#include "sup_check.h"

#define TOKEN_ANY	"token-any-0123456789ab"
#define TOKEN_RO	"token-ro-0123456789abc"
#define TOKEN_FULL	"token-full-0123456789a"

#define CONF_SERVERS \
    "servers = (\n" \
    "  { name = \"a\"; transport = \"stdio\"; command = [ \"true\" ]; },\n" \
    "  { name = \"b\"; transport = \"stdio\"; command = [ \"true\" ]; }\n" \
    ");\n"

static const char conf_acl[] = SUP_BASE
    "auth_tokens = [ \"" TOKEN_ANY "\" ];\n"
    "clients = (\n"
    "  { name = \"ro\"; token = \"" TOKEN_RO "\";\n"
    "    allow = [ \"a__*\", \"file:///pub/*\" ];\n"
    "    deny = [ \"a__secret\", \"a__hidden\", \"file:///pub/secret*\",\n"
    "      \"file:///pub/my secret*\", \"file:///pub/x%20y*\" ]; },\n"
    "  { name = \"full\"; token = \"" TOKEN_FULL "\"; register = true; }\n"
    ");\n"
    CONF_SERVERS;

/*
 * The same, with "full" without its register right, and "ro" gone: its
 * token now names another client, which its sessions are not.
 */
static const char conf_reloaded[] = SUP_BASE
    "auth_tokens = [ \"" TOKEN_ANY "\" ];\n"
    "clients = (\n"
    "  { name = \"other\"; token = \"" TOKEN_RO "\"; },\n"
    "  { name = \"full\"; token = \"" TOKEN_FULL "\"; }\n"
    ");\n"
    CONF_SERVERS;

/* The same, with "ro" allowed no resource under /pub but b. */
static const char conf_narrowed[] = SUP_BASE
    "auth_tokens = [ \"" TOKEN_ANY "\" ];\n"
    "clients = (\n"
    "  { name = \"ro\"; token = \"" TOKEN_RO "\";\n"
    "    allow = [ \"a__*\", \"file:///pub/b*\" ]; },\n"
    "  { name = \"full\"; token = \"" TOKEN_FULL "\"; register = true; }\n"
    ");\n"
    CONF_SERVERS;

static const char catalog_a[] =
    "{\"tools\":["
    "{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\"}},"
    "{\"name\":\"secret\",\"inputSchema\":{\"type\":\"object\"}}],"
    "\"prompts\":[{\"name\":\"greet\"},{\"name\":\"hidden\"}],"
    "\"resources\":["
    "{\"uri\":\"file:///pub/a.txt\",\"name\":\"a\"},"
    "{\"uri\":\"file:///pub/secret.txt\",\"name\":\"s\"},"
    "{\"uri\":\"file:///priv/key.txt\",\"name\":\"k\"}],"
    "\"resourceTemplates\":["
    "{\"uriTemplate\":\"file:///{+path}\",\"name\":\"files\"}]}";

static void
setup(void)
{
	sup_catalog("a", catalog_a);
	sup_catalog("b", "{\"tools\":[{\"name\":\"echo\",\"inputSchema\":"
	    "{\"type\":\"object\"}}]}");
	sup_start(conf_acl);
}

static void
teardown(void)
{
	sup_stop();
}

/* The names of a list result's items (key "name" or "uri"), joined. */
static const char *
names(json_t *a, const char *list, const char *key)
{
	static char	 buf[1024];
	json_t		*v;
	size_t		 i, n = 0;

	buf[0] = '\0';
	json_array_foreach(sup_jget(a, list), i, v)
		n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s",
		    n > 0 ? " " : "", sup_jstr(v, key));
	return (buf);
}

/* A request's answer, for a client. */
static json_t *
ask(struct sup_client *cl, const char *method, const char *params)
{
	return (sup_rpc(cl, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%s\","
	    "\"params\":%s}", method, params));
}

/* Send a message over a WebSocket: a text frame, masked as a client's. */
static void
ws_send(struct sup_conn *c, const char *text)
{
	static const unsigned char	 mask[4] = { 0x5a, 0x0f, 0xc3, 0x81 };
	unsigned char			*f;
	size_t				 n = strlen(text), h = 0, i;

	ck_assert_uint_lt(n, 65536);
	f = xmalloc(8 + n);
	f[h++] = 0x81;
	if (n < 126)
		f[h++] = 0x80 | (unsigned char)n;
	else {
		f[h++] = 0x80 | 126;
		f[h++] = (unsigned char)(n >> 8);
		f[h++] = (unsigned char)n;
	}
	memcpy(f + h, mask, sizeof mask);
	h += sizeof mask;
	for (i = 0; i < n; i++)
		f[h + i] = (unsigned char)text[i] ^ mask[i % 4];
	sup_write(c, f, h + n);
	free(f);
}

/*
 * The next answer the gateway sent on a WebSocket (a new reference):
 * notifications and control frames are skipped; NULL if none came.
 */
static json_t *
ws_answer(struct sup_conn *c)
{
	const unsigned char	*p;
	size_t			 n, len, hdr;
	json_t			*j;

	while ((n = evbuffer_get_length(c->in)) >= 2) {
		p = evbuffer_pullup(c->in, -1);
		len = p[1] & 0x7f;
		hdr = 2;
		ck_assert_uint_ne(len, 127);
		if (len == 126) {
			ck_assert_uint_ge(n, 4);
			len = (size_t)p[2] << 8 | p[3];
			hdr = 4;
		}
		ck_assert_msg(n >= hdr + len, "a partial frame");
		j = NULL;
		if ((p[0] & 0x0f) == 0x1)
			j = json_loadb((const char *)p + hdr, len, 0, NULL);
		evbuffer_drain(c->in, hdr + len);
		if (json_object_get(j, "id") != NULL)
			return (j);
		json_decref(j);
	}
	return (NULL);
}

/* A request's answer over a WebSocket (a new reference). */
static json_t *
ws_ask(struct sup_conn *c, const char *method, const char *params)
{
	char	 msg[512];
	json_t	*a;

	snprintf(msg, sizeof msg, "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"%s\",\"params\":%s}", method, params);
	ws_send(c, msg);
	ck_assert_ptr_nonnull(a = ws_answer(c));
	return (a);
}

START_TEST(test_lists_cut)
{
	struct sup_client	*ro = sup_session(TOKEN_RO, NULL);
	struct sup_client	*any = sup_session(TOKEN_ANY, NULL);

	ck_assert_str_eq(names(ask(ro, "tools/list", "{}"), "result.tools",
	    "name"), "a__echo");
	ck_assert_str_eq(names(ask(any, "tools/list", "{}"), "result.tools",
	    "name"), "a__echo a__secret b__echo");
	ck_assert_str_eq(names(ask(ro, "prompts/list", "{}"),
	    "result.prompts", "name"), "a__greet");
	ck_assert_str_eq(names(ask(any, "prompts/list", "{}"),
	    "result.prompts", "name"), "a__greet a__hidden");
	ck_assert_str_eq(names(ask(ro, "resources/list", "{}"),
	    "result.resources", "uri"), "file:///pub/a.txt");
	ck_assert_str_eq(names(ask(any, "resources/list", "{}"),
	    "result.resources", "uri"),
	    "file:///pub/a.txt file:///pub/secret.txt file:///priv/key.txt");
	/* A template is matched as written, like a name. */
	ck_assert_str_eq(names(ask(ro, "resources/templates/list", "{}"),
	    "result.resourceTemplates", "uriTemplate"), "");
	ck_assert_str_eq(names(ask(any, "resources/templates/list", "{}"),
	    "result.resourceTemplates", "uriTemplate"), "file:///{+path}");
}
END_TEST

/* A page never names an item the client may not see, nor ends early. */
START_TEST(test_pages_cut)
{
	struct sup_client	*ro;
	json_t			*a;
	char			 cursor[512];
	int			 pages = 0;

	json_decref(sup_reload(SUP_BASE "page_size = 1;\n"
	    "auth_tokens = [ \"" TOKEN_ANY "\" ];\n"
	    "clients = (\n"
	    "  { name = \"ro\"; token = \"" TOKEN_RO "\";\n"
	    "    allow = [ \"*\" ]; deny = [ \"a__secret\", \"a__echo\" ]; }\n"
	    ");\n" CONF_SERVERS));
	ro = sup_session(TOKEN_RO, NULL);
	a = ask(ro, "tools/list", "{}");
	ck_assert_str_eq(names(a, "result.tools", "name"), "b__echo");
	ck_assert_ptr_null(sup_jget(a, "result.nextCursor"));
	/* Every tool, a page at a time, for a client that sees all. */
	ro = sup_session(TOKEN_ANY, NULL);
	a = ask(ro, "tools/list", "{}");
	for (;;) {
		pages++;
		ck_assert_int_eq(sup_jlen(a, "result.tools"), 1);
		if (sup_jstr(a, "result.nextCursor") == NULL)
			break;
		snprintf(cursor, sizeof cursor, "{\"cursor\":\"%s\"}",
		    sup_jstr(a, "result.nextCursor"));
		a = ask(ro, "tools/list", cursor);
	}
	ck_assert_int_eq(pages, 3);
}
END_TEST

START_TEST(test_calls_unknown)
{
	struct sup_client	*ro = sup_session(TOKEN_RO, NULL);
	struct sup_worker	*wa = sup_worker("a"), *wb = sup_worker("b");
	json_t			*a;

	a = ask(ro, "tools/call", "{\"name\":\"a__secret\",\"arguments\":{}}");
	ck_assert_error(a, -32602);
	ck_assert_jstr(a, "error.message", "unknown tool: a__secret");
	a = ask(ro, "tools/call", "{\"name\":\"b__echo\",\"arguments\":{}}");
	ck_assert_jstr(a, "error.message", "unknown tool: b__echo");
	a = ask(ro, "prompts/get", "{\"name\":\"a__hidden\"}");
	ck_assert_jstr(a, "error.message", "unknown prompt: a__hidden");
	a = ask(ro, "completion/complete", "{\"ref\":{\"type\":\"ref/prompt\","
	    "\"name\":\"a__hidden\"},\"argument\":{\"name\":\"x\","
	    "\"value\":\"\"}}");
	ck_assert_jstr(a, "error.message", "unknown prompt: a__hidden");
	ck_assert_ptr_null(sup_take(wa, MSG_REQUEST));
	ck_assert_ptr_null(sup_take(wb, MSG_REQUEST));
	/* What is allowed goes through. */
	sup_post(ro, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"a__echo\",\"arguments\":{}}}");
	ck_assert_ptr_nonnull(sup_take(wa, MSG_REQUEST));
	sup_post(ro, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"prompts/get\","
	    "\"params\":{\"name\":\"a__greet\"}}");
	ck_assert_ptr_nonnull(sup_take(wa, MSG_REQUEST));
}
END_TEST

START_TEST(test_resources_denied)
{
	static const char *const denied[] = {
		"file:///pub/secret.txt",	/* deny */
		"file:///priv/key.txt",		/* not allowed */
		"file:///pub/%73ecret.txt",	/* deny, decoded */
		"FILE:///pub/secret.txt",	/* deny, normal form */
		"file:///pub/./secret.txt",
		"file:///pub/x/%2e/../secret.txt",
		"file:///pub/my%20secret.txt",	/* deny, decoded only */
		"file:///pub/x%20y.txt",	/* deny, as written only */
	};
	struct sup_client	*ro = sup_session(TOKEN_RO, NULL);
	struct sup_client	*any = sup_session(TOKEN_ANY, NULL);
	struct sup_worker	*wa = sup_worker("a");
	char			 params[256];
	json_t			*a;
	size_t			 i;

	for (i = 0; i < sizeof denied / sizeof denied[0]; i++) {
		snprintf(params, sizeof params, "{\"uri\":\"%s\"}", denied[i]);
		a = ask(ro, "resources/read", params);
		ck_assert_msg(sup_jint(a, "error.code") == -32002 ||
		    sup_jint(a, "error.code") == -32602, "%s: %s", denied[i],
		    sup_dump(a));
		a = ask(ro, "resources/subscribe", params);
		ck_assert_msg(sup_jget(a, "error") != NULL, "%s: %s",
		    denied[i], sup_dump(a));
	}
	a = ask(ro, "completion/complete", "{\"ref\":{\"type\":"
	    "\"ref/resource\",\"uri\":\"file:///pub/secret.txt\"},"
	    "\"argument\":{\"name\":\"x\",\"value\":\"\"}}");
	ck_assert_error(a, -32002);
	ck_assert_ptr_null(sup_take(wa, MSG_REQUEST));
	/* The same URIs are read for a client without patterns. */
	a = ask(any, "resources/subscribe",
	    "{\"uri\":\"file:///pub/secret.txt\"}");
	ck_assert_ptr_nonnull(sup_take(wa, MSG_REQUEST));
	sup_post(ro, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
	    "\"resources/read\",\"params\":{\"uri\":\"file:///pub/a.txt\"}}");
	ck_assert_ptr_nonnull(sup_take(wa, MSG_REQUEST));
}
END_TEST

/*
 * What a reader could resolve otherwise than the normal form says is
 * refused, wherever a pattern meets a URI, for a client with patterns.
 */
START_TEST(test_uri_refused)
{
	static const char *const bad[] = {
		"file:///pub/../priv/key.txt",
		"file:///pub/%2e%2e/priv/key.txt",
		"file:///pub/a%2Fb",
		"file:///pub/a\\\\b",
		"file:///pub//a.txt",
		"file:///pub/%252e%252e/x",
		"file:///pub/a%00.txt",
	};
	static const char *const methods[] = {
		"resources/read", "resources/subscribe", "resources/unsubscribe"
	};
	struct sup_client	*ro = sup_session(TOKEN_RO, NULL);
	struct sup_client	*any = sup_session(TOKEN_ANY, NULL);
	char			 params[256];
	json_t			*a;
	size_t			 i, j;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		for (j = 0; j < sizeof methods / sizeof methods[0]; j++) {
			snprintf(params, sizeof params, "{\"uri\":\"%s\"}",
			    bad[i]);
			a = ask(ro, methods[j], params);
			ck_assert_msg(sup_jint(a, "error.code") == -32602 &&
			    strstr(sup_jstr(a, "error.message"),
			    "cannot be checked") != NULL, "%s %s: %s",
			    methods[j], bad[i], sup_dump(a));
		}
		snprintf(params, sizeof params, "{\"ref\":{\"type\":"
		    "\"ref/resource\",\"uri\":\"%s\"},\"argument\":"
		    "{\"name\":\"x\",\"value\":\"\"}}", bad[i]);
		a = ask(ro, "completion/complete", params);
		ck_assert_msg(sup_jint(a, "error.code") == -32602, "%s: %s",
		    bad[i], sup_dump(a));
	}
	ck_assert_ptr_null(sup_take(sup_worker("a"), MSG_REQUEST));
	/* A client without patterns reads what the upstream serves. */
	sup_post(any, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
	    "\"resources/read\",\"params\":{\"uri\":"
	    "\"file:///pub/../priv/key.txt\"}}");
	ck_assert_ptr_nonnull(sup_take(sup_worker("a"), MSG_REQUEST));
}
END_TEST

START_TEST(test_register_right)
{
	struct sup_client	*ro = sup_session(TOKEN_RO, NULL);
	struct sup_client	*full = sup_session(TOKEN_FULL, NULL);
	struct sup_client	*any = sup_session(TOKEN_ANY, NULL);
	static const char	 tool[] = "{\"tools\":[{\"name\":\"open\","
	    "\"inputSchema\":{\"type\":\"object\"}}]}";
	json_t			*a;

	a = ask(ro, "tools/register", tool);
	ck_assert_error(a, -32600);
	ck_assert_ptr_nonnull(strstr(sup_jstr(a, "error.message"),
	    "may not register"));
	a = ask(full, "tools/register", tool);
	ck_assert_result(a);
	a = ask(any, "tools/register", tool);
	ck_assert_result(a);
	ck_assert_str_eq(names(ask(any, "tools/list", "{}"), "result.tools",
	    "name"), "a__echo a__secret b__echo full__open _check__open");
	/* Patterns hold for clients' tools too. */
	ck_assert_str_eq(names(ask(ro, "tools/list", "{}"), "result.tools",
	    "name"), "a__echo");
	a = ask(ro, "tools/call", "{\"name\":\"full__open\"}");
	ck_assert_jstr(a, "error.message", "unknown tool: full__open");
}
END_TEST

/* A reload takes rights away at once, from sessions already open. */
START_TEST(test_reload_rights)
{
	struct sup_client	*ro = sup_session(TOKEN_RO, NULL);
	struct sup_client	*full = sup_session(TOKEN_FULL, NULL);
	json_t			*a;

	a = ask(full, "tools/register", "{\"tools\":[{\"name\":\"open\","
	    "\"inputSchema\":{\"type\":\"object\"}}]}");
	ck_assert_result(a);
	ck_assert_str_eq(names(ask(full, "tools/list", "{}"), "result.tools",
	    "name"), "a__echo a__secret b__echo full__open");
	a = sup_reload(conf_reloaded);
	ck_assert_msg(json_is_true(json_object_get(a, "ok")), "%s",
	    sup_dump(a));
	json_decref(a);
	/* Its tools are withdrawn, and it may not register again. */
	ck_assert_str_eq(names(ask(full, "tools/list", "{}"), "result.tools",
	    "name"), "a__echo a__secret b__echo");
	a = ask(full, "tools/register", "{\"tools\":[{\"name\":\"open\","
	    "\"inputSchema\":{\"type\":\"object\"}}]}");
	ck_assert_error(a, -32600);
	/* A client removed: its sessions are not the client its token now
	 * names, and are not found for it. */
	ck_assert_int_eq(sup_post(ro, "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"tools/call\",\"params\":{\"name\":"
	    "\"a__echo\"}}")->status, 404);
	ck_assert_int_eq(sup_post(ro, "{\"jsonrpc\":\"2.0\",\"id\":2,"
	    "\"method\":\"tools/list\"}")->status, 404);
	ck_assert_ptr_null(sup_take(sup_worker("a"), MSG_REQUEST));
	/* Nor its token, once no client has it. */
	json_decref(sup_reload(conf_acl));
	json_decref(sup_reload(SUP_BASE "auth_tokens = [ \"" TOKEN_ANY
	    "\" ];\n" CONF_SERVERS));
	ck_assert_int_eq(sup_post(ro, "{\"jsonrpc\":\"2.0\",\"id\":9,"
	    "\"method\":\"ping\"}")->status, 401);
}
END_TEST

static const char	 sub_a[] = "{\"uri\":\"file:///pub/a.txt\"}";
static const char	 upd_a[] = "{\"jsonrpc\":\"2.0\",\"method\":"
    "\"notifications/resources/updated\",\"params\":{\"uri\":"
    "\"file:///pub/a.txt\"}}";

/*
 * Two sessions subscribe to file:///pub/a.txt (the first's request goes
 * to the upstream, the second shares it), each with a stream open, and
 * each hears one update.
 */
static void
subscribe_two(struct sup_client *one, struct sup_client *two,
    struct sup_worker *wa, struct sup_resp **g1, struct sup_resp **g2)
{
	struct sup_resp		*r;
	struct sup_frame	*f;

	*g1 = sup_get(one, NULL);
	*g2 = sup_get(two, NULL);
	r = sup_post(one, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"resources/subscribe\",\"params\":%s}", sub_a);
	ck_assert_ptr_nonnull(f = sup_take(wa, MSG_REQUEST));
	sup_reply(wa, f, "{}");
	ck_assert_result(sup_answer(r));
	ck_assert_result(ask(two, "resources/subscribe", sub_a));
	sup_send(wa, MSG_NOTIFY, 0, 0, 0, "%s", upd_a);
	ck_assert_uint_eq(sup_nfound(*g1, "notifications/resources/updated"),
	    1);
	ck_assert_uint_eq(sup_nfound(*g2, "notifications/resources/updated"),
	    1);
}

/* Both let go: the last one's unsubscribe reaches the upstream. */
static void
unsubscribe_two(struct sup_client *one, struct sup_client *two,
    struct sup_worker *wa)
{
	struct sup_resp		*r;
	struct sup_frame	*f;

	ck_assert_result(ask(one, "resources/unsubscribe", sub_a));
	r = sup_post(two, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
	    "\"resources/unsubscribe\",\"params\":%s}", sub_a);
	ck_assert_ptr_nonnull(f = sup_take(wa, MSG_REQUEST));
	ck_assert_ptr_nonnull(strstr(f->text, "resources/unsubscribe"));
	sup_reply(wa, f, "{}");
	ck_assert_result(sup_answer(r));
}

/*
 * A reload that takes a URI from a client stops the updates of its
 * sessions' subscriptions to it; others subscribed still hear them, and
 * it may still let go.
 */
START_TEST(test_reload_updates)
{
	struct sup_client	*ro = sup_session(TOKEN_RO, NULL);
	struct sup_client	*any = sup_session(TOKEN_ANY, NULL);
	struct sup_worker	*wa = sup_worker("a");
	struct sup_resp		*gro, *gany;
	json_t			*a;

	subscribe_two(ro, any, wa, &gro, &gany);
	a = sup_reload(conf_narrowed);
	ck_assert_msg(json_is_true(json_object_get(a, "ok")), "%s",
	    sup_dump(a));
	json_decref(a);
	/* Fresh streams, to see only what comes now. */
	sup_hangup(gro->conn);
	sup_hangup(gany->conn);
	gro = sup_get(ro, NULL);
	gany = sup_get(any, NULL);
	sup_send(wa, MSG_NOTIFY, 0, 0, 0, "%s", upd_a);
	ck_assert_ptr_null(sup_find(gro, "notifications/resources/updated"));
	ck_assert_ptr_nonnull(sup_find(gany, "notifications/resources/updated"));
	/* Letting go is still allowed. */
	unsubscribe_two(ro, any, wa);
}
END_TEST

/*
 * A WebSocket session outlives its client's removal by a reload: it has
 * no rights left, sees nothing, calls and reads nothing, and may not
 * register.
 */
START_TEST(test_removed_ws)
{
	struct sup_conn	*ws = sup_ws_open(TOKEN_RO);
	json_t		*a;

	a = ws_ask(ws, "initialize", "{\"protocolVersion\":\"2025-11-25\","
	    "\"capabilities\":{},\"clientInfo\":{\"name\":\"c\","
	    "\"version\":\"1\"}}");
	ck_assert_result(a);
	json_decref(a);
	ws_send(ws, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/initialized\"}");
	a = ws_ask(ws, "tools/list", "{}");
	ck_assert_str_eq(names(a, "result.tools", "name"), "a__echo");
	json_decref(a);
	a = sup_reload(conf_reloaded);
	ck_assert_msg(json_is_true(json_object_get(a, "ok")), "%s",
	    sup_dump(a));
	json_decref(a);
	a = ws_ask(ws, "tools/list", "{}");
	ck_assert_result(a);
	ck_assert_str_eq(names(a, "result.tools", "name"), "");
	json_decref(a);
	a = ws_ask(ws, "tools/call", "{\"name\":\"a__echo\","
	    "\"arguments\":{}}");
	ck_assert_jstr(a, "error.message", "unknown tool: a__echo");
	json_decref(a);
	a = ws_ask(ws, "resources/read", "{\"uri\":\"file:///pub/a.txt\"}");
	ck_assert_error(a, -32002);
	json_decref(a);
	a = ws_ask(ws, "tools/register", "{\"tools\":[{\"name\":\"x\","
	    "\"inputSchema\":{\"type\":\"object\"}}]}");
	ck_assert_error(a, -32600);
	json_decref(a);
	ck_assert_ptr_null(sup_take(sup_worker("a"), MSG_REQUEST));
	ck_assert(!ws->eof);
}
END_TEST

/*
 * A stream opened before a reload removed its session's client hears no
 * more updates of what it subscribed to; a client that may still read
 * the resource does.
 */
START_TEST(test_removed_updates)
{
	struct sup_client	*ro = sup_session(TOKEN_RO, NULL);
	struct sup_client	*any = sup_session(TOKEN_ANY, NULL);
	struct sup_worker	*wa = sup_worker("a");
	struct sup_resp		*gro, *gany;
	json_t			*a;

	subscribe_two(ro, any, wa, &gro, &gany);
	a = sup_reload(conf_reloaded);
	ck_assert_msg(json_is_true(json_object_get(a, "ok")), "%s",
	    sup_dump(a));
	json_decref(a);
	sup_send(wa, MSG_NOTIFY, 0, 0, 0, "%s", upd_a);
	ck_assert(!gro->done);
	ck_assert_uint_eq(sup_nfound(gro, "notifications/resources/updated"),
	    1);
	ck_assert_uint_eq(sup_nfound(gany, "notifications/resources/updated"),
	    2);
	/* Its client back, it lets go; then the last subscriber does. */
	json_decref(sup_reload(conf_acl));
	unsubscribe_two(ro, any, wa);
}
END_TEST

/* A reload that removes a client withdraws the tools its sessions
 * registered: no one sees or calls them any more. */
START_TEST(test_removed_tools)
{
	struct sup_client	*full = sup_session(TOKEN_FULL, NULL);
	struct sup_client	*any = sup_session(TOKEN_ANY, NULL);
	json_t			*a;

	ck_assert_result(ask(full, "tools/register", "{\"tools\":[{\"name\":"
	    "\"open\",\"inputSchema\":{\"type\":\"object\"}}]}"));
	ck_assert_str_eq(names(ask(any, "tools/list", "{}"), "result.tools",
	    "name"), "a__echo a__secret b__echo full__open");
	a = sup_reload(SUP_BASE "auth_tokens = [ \"" TOKEN_ANY "\" ];\n"
	    CONF_SERVERS);
	ck_assert_msg(json_is_true(json_object_get(a, "ok")), "%s",
	    sup_dump(a));
	json_decref(a);
	ck_assert_str_eq(names(ask(any, "tools/list", "{}"), "result.tools",
	    "name"), "a__echo a__secret b__echo");
	a = ask(any, "tools/call", "{\"name\":\"full__open\"}");
	ck_assert_jstr(a, "error.message", "unknown tool: full__open");
}
END_TEST

static Suite *
acl_suite(void)
{
	Suite	*s = suite_create("acl");
	TCase	*tc = tcase_create("acl");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_lists_cut);
	tcase_add_test(tc, test_pages_cut);
	tcase_add_test(tc, test_calls_unknown);
	tcase_add_test(tc, test_resources_denied);
	tcase_add_test(tc, test_uri_refused);
	tcase_add_test(tc, test_register_right);
	tcase_add_test(tc, test_reload_rights);
	tcase_add_test(tc, test_reload_updates);
	tcase_add_test(tc, test_removed_ws);
	tcase_add_test(tc, test_removed_updates);
	tcase_add_test(tc, test_removed_tools);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	return (sup_check_main(acl_suite()));
}
