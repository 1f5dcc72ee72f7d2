/* SPDX-License-Identifier: ISC */
/*
 * Virtual endpoints (supervisor/vendpoint.c, common/conf_endpoint.c): what
 * each path's patterns select, and "!"; calls to what an endpoint leaves
 * out refused as unknown; a client's rules inside an endpoint; sessions
 * bound to their endpoint on every transport; list_changed only to the
 * endpoints whose lists changed; a reload that keeps, changes and removes
 * endpoints; the configuration's errors.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "frame.h"
#include "supervisor.h"

#include "sup_check.h"

#define TOKEN_ANY	"token-any-0123456789ab"
#define TOKEN_RO	"token-ro-0123456789abc"

#define CONF_SERVERS \
    "servers = (\n" \
    "  { name = \"a\"; transport = \"stdio\"; command = [ \"true\" ]; },\n" \
    "  { name = \"b\"; transport = \"stdio\"; command = [ \"true\" ]; }\n" \
    ");\n"

#define CONF_CLIENTS \
    "auth_tokens = [ \"" TOKEN_ANY "\" ];\n" \
    "clients = (\n" \
    "  { name = \"ro\"; token = \"" TOKEN_RO "\";\n" \
    "    allow = [ \"a__*\", \"file:///pub/*\" ];\n" \
    "    deny = [ \"a__secret\" ]; }\n" \
    ");\n"

#define EP_RESEARCH \
    "  { path = \"/mcp/research\";\n" \
    "    tools = [ \"*__echo\", \"a__s*\", \"!a__secret\" ];\n" \
    "    resources = [ \"file:///pub/*\", \"!file:///pub/secret*\",\n" \
    "      \"!file:///pub/my secret*\" ]; }"
#define EP_A	"  { path = \"/e/a\"; tools = [ \"a__*\" ]; }"
#define EP_B	"  { path = \"/e/b\"; tools = [ \"b__*\" ]; prompts = [ \"*\" ]; }"
#define EP_NOTB	"  { path = \"/e/notb\"; tools = [ \"!b__*\" ];\n" \
    "    discovery = \"list\"; }"

static const char conf_ep[] = SUP_BASE CONF_CLIENTS
    "endpoints = (\n" EP_RESEARCH ",\n" EP_A ",\n" EP_B ",\n" EP_NOTB "\n);\n"
    CONF_SERVERS;

static const char catalog_a[] =
    "{\"tools\":["
    "{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\"}},"
    "{\"name\":\"search\",\"inputSchema\":{\"type\":\"object\"}},"
    "{\"name\":\"secret\",\"inputSchema\":{\"type\":\"object\"}}],"
    "\"prompts\":[{\"name\":\"greet\"}],"
    "\"resources\":["
    "{\"uri\":\"file:///pub/a.txt\",\"name\":\"a\"},"
    "{\"uri\":\"file:///pub/secret.txt\",\"name\":\"s\"},"
    "{\"uri\":\"file:///pub/my%20secret.txt\",\"name\":\"m\"},"
    "{\"uri\":\"file:///priv/key.txt\",\"name\":\"k\"}]}";

static const char catalog_b[] =
    "{\"tools\":[{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\"}},"
    "{\"name\":\"write\",\"inputSchema\":{\"type\":\"object\"}}]}";

static void
setup(void)
{
	sup_catalog("a", catalog_a);
	sup_catalog("b", catalog_b);
	sup_start(conf_ep);
}

static void
teardown(void)
{
	sup_stop();
}

/* A client with a session at a path. */
static struct sup_client *
session_at(const char *token, const char *path)
{
	struct sup_client	*cl = sup_client(token);
	struct sup_resp		*r;

	cl->path = path;
	r = sup_initialize(cl, NULL);
	ck_assert_msg(r->status == 200, "%s: %d %s", path, r->status,
	    sup_body(r));
	ck_assert_int_eq(sup_post(cl, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/initialized\"}")->status, 202);
	return (cl);
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

/* How many events of a stream are a method's. */
static size_t
count(struct sup_resp *r, const char *method)
{
	size_t	i, n = 0;

	for (i = 0; i < r->nevents; i++) {
		if (sup_event(r, i) != NULL && sup_jstr(sup_event(r, i),
		    "method") != NULL && strcmp(sup_jstr(sup_event(r, i),
		    "method"), method) == 0)
			n++;
	}
	return (n);
}

static const char *
tools(struct sup_client *cl)
{
	return (names(ask(cl, "tools/list", "{}"), "result.tools", "name"));
}

START_TEST(test_select)
{
	struct sup_client	*all = session_at(TOKEN_ANY, NULL);
	struct sup_client	*re = session_at(TOKEN_ANY, "/mcp/research");
	struct sup_client	*notb = session_at(TOKEN_ANY, "/e/notb");
	struct sup_client	*b = session_at(TOKEN_ANY, "/e/b");

	ck_assert_str_eq(tools(all),
	    "a__echo a__search a__secret b__echo b__write");
	/* Globs, and "!" excluding whatever the order. */
	ck_assert_str_eq(tools(re), "a__echo a__search b__echo");
	/* Only "!": everything else. */
	ck_assert_str_eq(tools(notb), "a__echo a__search a__secret");
	ck_assert_str_eq(tools(b), "b__echo b__write");
	/* A kind left out: nothing of it. */
	ck_assert_str_eq(names(ask(re, "prompts/list", "{}"),
	    "result.prompts", "name"), "");
	ck_assert_str_eq(names(ask(b, "prompts/list", "{}"),
	    "result.prompts", "name"), "a__greet");
	ck_assert_str_eq(names(ask(re, "resources/list", "{}"),
	    "result.resources", "uri"), "file:///pub/a.txt");
	ck_assert_str_eq(names(ask(b, "resources/list", "{}"),
	    "result.resources", "uri"), "");
}
END_TEST

/* What an endpoint leaves out is unknown, as an unknown tool is. */
START_TEST(test_calls_unknown)
{
	struct sup_client	*re = session_at(TOKEN_ANY, "/mcp/research");
	struct sup_worker	*wa = sup_worker("a"), *wb = sup_worker("b");
	json_t			*a;

	a = ask(re, "tools/call", "{\"name\":\"a__secret\",\"arguments\":{}}");
	ck_assert_error(a, -32602);
	ck_assert_jstr(a, "error.message", "unknown tool: a__secret");
	a = ask(re, "tools/call", "{\"name\":\"b__write\",\"arguments\":{}}");
	ck_assert_jstr(a, "error.message", "unknown tool: b__write");
	a = ask(re, "prompts/get", "{\"name\":\"a__greet\"}");
	ck_assert_jstr(a, "error.message", "unknown prompt: a__greet");
	a = ask(re, "completion/complete", "{\"ref\":{\"type\":\"ref/prompt\","
	    "\"name\":\"a__greet\"},\"argument\":{\"name\":\"x\","
	    "\"value\":\"\"}}");
	ck_assert_jstr(a, "error.message", "unknown prompt: a__greet");
	a = ask(re, "resources/read", "{\"uri\":\"file:///pub/secret.txt\"}");
	ck_assert_error(a, -32002);
	a = ask(re, "resources/read", "{\"uri\":\"file:///pub/%73ecret.txt\"}");
	ck_assert_error(a, -32002);
	/* An exclusion sees the URI decoded, as a file server reads it. */
	a = ask(re, "resources/read",
	    "{\"uri\":\"file:///pub/my%20secret.txt\"}");
	ck_assert_error(a, -32002);
	a = ask(re, "resources/read", "{\"uri\":\"file:///priv/key.txt\"}");
	ck_assert_error(a, -32002);
	a = ask(re, "resources/subscribe", "{\"uri\":\"file:///priv/key.txt\"}");
	ck_assert_error(a, -32002);
	ck_assert_ptr_null(sup_take(wa, MSG_REQUEST));
	ck_assert_ptr_null(sup_take(wb, MSG_REQUEST));
	/* What it selects goes through. */
	sup_post(re, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"b__echo\",\"arguments\":{}}}");
	ck_assert_ptr_nonnull(sup_take(wb, MSG_REQUEST));
	sup_post(re, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":"
	    "\"resources/read\",\"params\":{\"uri\":\"file:///pub/a.txt\"}}");
	ck_assert_ptr_nonnull(sup_take(wa, MSG_REQUEST));
}
END_TEST

/* A client's rules apply inside an endpoint: it narrows, never widens. */
START_TEST(test_acl_inside)
{
	struct sup_client	*ro = session_at(TOKEN_RO, "/mcp/research");
	struct sup_client	*nb = session_at(TOKEN_RO, "/e/notb");
	json_t			*a;

	/* research gives a__echo a__search b__echo; ro allows a__*. */
	ck_assert_str_eq(tools(ro), "a__echo a__search");
	/* notb gives a__secret too; ro's deny still holds. */
	ck_assert_str_eq(tools(nb), "a__echo a__search");
	a = ask(ro, "tools/call", "{\"name\":\"b__echo\",\"arguments\":{}}");
	ck_assert_jstr(a, "error.message", "unknown tool: b__echo");
	a = ask(nb, "tools/call", "{\"name\":\"a__secret\",\"arguments\":{}}");
	ck_assert_jstr(a, "error.message", "unknown tool: a__secret");
	ck_assert_ptr_null(sup_take(sup_worker("b"), MSG_REQUEST));
	ck_assert_ptr_null(sup_take(sup_worker("a"), MSG_REQUEST));
}
END_TEST

/* A session id is known only at the endpoint that made it. */
START_TEST(test_bound)
{
	struct sup_client	*re = session_at(TOKEN_ANY, "/mcp/research");
	struct sup_client	*m = session_at(TOKEN_ANY, NULL);
	struct sup_resp		*r;
	const char		*data, *q;
	char			 path[256];

	re->path = "/mcp";
	ck_assert_int_eq(sup_post(re, "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"ping\"}")->status, 404);
	ck_assert_int_eq(sup_get(re, NULL)->status, 404);
	ck_assert_int_eq(sup_delete(re)->status, 404);
	re->path = "/e/a";
	ck_assert_int_eq(sup_post(re, "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"ping\"}")->status, 404);
	re->path = "/mcp/research";
	ck_assert_int_eq(sup_post(re, "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"ping\"}")->status, 200);
	m->path = "/mcp/research";
	ck_assert_int_eq(sup_post(m, "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"ping\"}")->status, 404);
	/* Legacy SSE: its messages path is the endpoint's, and only it. */
	r = sup_http("GET", "/mcp/research/sse", "Authorization: Bearer "
	    TOKEN_ANY "\r\nAccept: text/event-stream\r\n", NULL);
	ck_assert_int_eq(r->status, 200);
	ck_assert_uint_ge(r->nevents, 1);
	data = r->events[0].data;
	ck_assert_msg(strncmp(data, "/mcp/research/messages?sessionId=",
	    33) == 0, "%s", data);
	ck_assert_ptr_nonnull(q = strstr(data, "/messages?sessionId="));
	snprintf(path, sizeof path, "%s", q);
	ck_assert_int_eq(sup_http("POST", path, "Authorization: Bearer "
	    TOKEN_ANY "\r\nContent-Type: application/json\r\n",
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}")->status, 404);
	ck_assert_int_eq(sup_http("POST", data, "Authorization: Bearer "
	    TOKEN_ANY "\r\nContent-Type: application/json\r\n",
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
	    "\"params\":{\"protocolVersion\":\"2024-11-05\",\"capabilities\":"
	    "{},\"clientInfo\":{\"name\":\"old\",\"version\":\"1\"}}}")->status,
	    202);
	ck_assert_int_eq(sup_http("POST", data, "Authorization: Bearer "
	    TOKEN_ANY "\r\nContent-Type: application/json\r\n",
	    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}")->status,
	    202);
	ck_assert_str_eq(names(sup_event(r, r->nevents - 1), "result.tools",
	    "name"), "a__echo a__search b__echo");
	/* Tokens, Host and Origin as on /mcp, at every path of it. */
	ck_assert_int_eq(sup_http("POST", "/mcp/research", "Content-Type: "
	    "application/json\r\n", "{}")->status, 401);
	ck_assert_int_eq(sup_http("GET", "/mcp/research/sse", "Accept: "
	    "text/event-stream\r\n", NULL)->status, 401);
	ck_assert_int_eq(sup_http("GET", "/mcp/research/ws", NULL,
	    NULL)->status, 401);
	ck_assert_int_eq(sup_http("POST", "/mcp/research", "Authorization: "
	    "Bearer " TOKEN_ANY "\r\nHost: evil.example\r\n", "{}")->status,
	    403);
	ck_assert_int_eq(sup_http("POST", "/mcp/research", "Authorization: "
	    "Bearer " TOKEN_ANY "\r\nOrigin: http://evil.example\r\n",
	    "{}")->status, 403);
	/* A path under an endpoint that is none of its transports. */
	ck_assert_int_eq(sup_http("POST", "/mcp/research/x", NULL,
	    "{}")->status, 404);
}
END_TEST

/* The 2026-07-28 requests of an endpoint: its catalog, its principal. */
START_TEST(test_modern)
{
	struct sup_resp	*r;
	char		 h[512];
	const char	*body = "{\"jsonrpc\":\"2.0\",\"id\":\"r1\",\"method\":"
	    "\"tools/list\",\"params\":{\"_meta\":{"
	    "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
	    "\"io.modelcontextprotocol/clientCapabilities\":{}}}}";
	const char	*call = "{\"jsonrpc\":\"2.0\",\"id\":\"r2\",\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"b__echo\",\"arguments\":{},"
	    "\"_meta\":{"
	    "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
	    "\"io.modelcontextprotocol/clientCapabilities\":{}}}}";

	snprintf(h, sizeof h, "Content-Type: application/json\r\n"
	    "Accept: application/json, text/event-stream\r\n"
	    "Authorization: Bearer %s\r\nMCP-Protocol-Version: 2026-07-28\r\n"
	    "Mcp-Method: tools/list\r\n", TOKEN_ANY);
	r = sup_http("POST", "/e/a", h, body);
	ck_assert_int_eq(r->status, 200);
	ck_assert_str_eq(names(sup_answer(r), "result.tools", "name"),
	    "a__echo a__search a__secret");
	r = sup_http("POST", "/mcp", h, body);
	ck_assert_str_eq(names(sup_answer(r), "result.tools", "name"),
	    "a__echo a__search a__secret b__echo b__write");
	snprintf(h, sizeof h, "Content-Type: application/json\r\n"
	    "Accept: application/json, text/event-stream\r\n"
	    "Authorization: Bearer %s\r\nMCP-Protocol-Version: 2026-07-28\r\n"
	    "Mcp-Method: tools/call\r\nMcp-Name: b__echo\r\n", TOKEN_ANY);
	r = sup_http("POST", "/e/a", h, call);
	ck_assert_jstr(sup_answer(r), "error.message", "unknown tool: b__echo");
	ck_assert_ptr_null(sup_take(sup_worker("b"), MSG_REQUEST));
}
END_TEST

/* POST a 2026-07-28 request at a path (sup_modern). */
static struct sup_resp *
modern_at(const char *path, const char *method, const char *name,
    const char *params)
{
	return (sup_modern(path, TOKEN_ANY, method, name, params, NULL,
	    NULL));
}

/* server/discover and subscriptions/listen at an endpoint: its URIs, its
 * list changes. */
START_TEST(test_modern_listen)
{
	struct sup_resp	*r, *la;

	r = modern_at("/mcp/research", "server/discover", NULL, "");
	ck_assert_int_eq(r->status, 200);
	ck_assert_ptr_nonnull(sup_jget(sup_answer(r), "result.capabilities"));
	r = modern_at("/mcp/research", "subscriptions/listen", NULL,
	    "\"notifications\":{\"resourceSubscriptions\":["
	    "\"file:///pub/a.txt\",\"file:///pub/secret.txt\","
	    "\"file:///priv/key.txt\"]}");
	ck_assert_int_eq(r->status, 200);
	ck_assert_str_eq(sup_ack_uris(r), "file:///pub/a.txt");
	/* The upstream is subscribed for it alone, and then unsubscribed. */
	sup_reply(sup_worker("a"), sup_take(sup_worker("a"), MSG_REQUEST),
	    "{}");
	ck_assert_ptr_null(sup_take(sup_worker("a"), MSG_REQUEST));
	sup_hangup(r->conn);
	sup_reply(sup_worker("a"), sup_take(sup_worker("a"), MSG_REQUEST),
	    "{}");
	/* A listen for list changes hears of its endpoint's only. */
	la = modern_at("/e/a", "subscriptions/listen", NULL,
	    "\"notifications\":{\"toolsListChanged\":true}");
	ck_assert_int_eq(la->status, 200);
	sup_catalog("b", "{\"tools\":[{\"name\":\"echo\",\"inputSchema\":"
	    "{\"type\":\"object\"}}]}");
	sup_settle(0);
	ck_assert_ptr_null(sup_find(la, "notifications/tools/list_changed"));
	sup_catalog("a", "{\"tools\":[{\"name\":\"echo\",\"inputSchema\":"
	    "{\"type\":\"object\"}}]}");
	sup_settle(0);
	ck_assert_ptr_nonnull(sup_find(la, "notifications/tools/list_changed"));
}
END_TEST

/* A change of the catalog is told to the endpoints whose lists it
 * changes, and only of those lists. */
START_TEST(test_list_changed)
{
	struct sup_client	*m = session_at(TOKEN_ANY, NULL);
	struct sup_client	*ea = session_at(TOKEN_ANY, "/e/a");
	struct sup_client	*eb = session_at(TOKEN_ANY, "/e/b");
	struct sup_resp		*rm, *ra, *rb;

	ck_assert_str_eq(tools(ea), "a__echo a__search a__secret");
	rm = sup_get(m, NULL);
	ra = sup_get(ea, NULL);
	rb = sup_get(eb, NULL);
	ck_assert_int_eq(ra->status, 200);
	sup_catalog("b", "{\"tools\":[{\"name\":\"echo\",\"inputSchema\":"
	    "{\"type\":\"object\"}}]}");
	sup_settle(0);
	ck_assert_ptr_nonnull(sup_find(rm,
	    "notifications/tools/list_changed"));
	ck_assert_ptr_nonnull(sup_find(rb,
	    "notifications/tools/list_changed"));
	ck_assert_ptr_null(sup_find(ra, "notifications/tools/list_changed"));
	/* A prompt: /mcp and /e/b (prompts = [ "*" ]), not /e/a. */
	sup_catalog("a", "{\"tools\":["
	    "{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\"}},"
	    "{\"name\":\"search\",\"inputSchema\":{\"type\":\"object\"}},"
	    "{\"name\":\"secret\",\"inputSchema\":{\"type\":\"object\"}}],"
	    "\"prompts\":[{\"name\":\"bye\"}]}");
	sup_settle(0);
	ck_assert_ptr_nonnull(sup_find(rm,
	    "notifications/prompts/list_changed"));
	ck_assert_ptr_nonnull(sup_find(rb,
	    "notifications/prompts/list_changed"));
	ck_assert_ptr_null(sup_find(ra,
	    "notifications/prompts/list_changed"));
	ck_assert_ptr_null(sup_find(ra, "notifications/tools/list_changed"));
	/* /e/b's tools did not change this time: once only. */
	ck_assert_uint_eq(count(rb, "notifications/tools/list_changed"), 1);
	/* And a change of a's tools reaches /e/a. */
	sup_catalog("a", "{\"tools\":["
	    "{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\"}}],"
	    "\"prompts\":[{\"name\":\"bye\"}]}");
	sup_settle(0);
	ck_assert_ptr_nonnull(sup_find(ra, "notifications/tools/list_changed"));
	ck_assert_uint_eq(count(rb, "notifications/tools/list_changed"), 1);
	ck_assert_uint_eq(count(ra, "notifications/prompts/list_changed"), 0);
}
END_TEST

/* A client's registered tools: an endpoint lists those it selects and is
 * told of them only when what it selects changed. */
START_TEST(test_client_tools)
{
	struct sup_client	*owner = session_at(TOKEN_ANY, NULL);
	struct sup_client	*ea = session_at(TOKEN_ANY, "/e/a");
	struct sup_client	*nb = session_at(TOKEN_ANY, "/e/notb");
	struct sup_resp		*ra, *rn;
	json_t			*a;

	ra = sup_get(ea, NULL);
	rn = sup_get(nb, NULL);
	a = sup_rpc(owner, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"tools/register\",\"params\":{\"tools\":[{\"name\":\"open\","
	    "\"inputSchema\":{\"type\":\"object\"}}]}}");
	ck_assert_jstr(a, "result.registered.0", "_check__open");
	ck_assert_uint_eq(count(rn, "notifications/tools/list_changed"), 1);
	ck_assert_uint_eq(count(ra, "notifications/tools/list_changed"), 0);
	ck_assert_str_eq(tools(nb), "a__echo a__search a__secret _check__open");
	ck_assert_str_eq(tools(ea), "a__echo a__search a__secret");
	/* Its end withdraws it: the same. */
	ck_assert_int_eq(sup_delete(owner)->status, 200);
	ck_assert_uint_eq(count(rn, "notifications/tools/list_changed"), 2);
	ck_assert_uint_eq(count(ra, "notifications/tools/list_changed"), 0);
}
END_TEST

/* A reload keeps the endpoints it does not change, with their sessions;
 * a changed one's sessions are told; a removed one's end. */
START_TEST(test_reload)
{
	struct sup_client	*ea = session_at(TOKEN_ANY, "/e/a");
	struct sup_client	*eb = session_at(TOKEN_ANY, "/e/b");
	struct sup_client	*re = session_at(TOKEN_ANY, "/mcp/research");
	struct sup_client	*m = session_at(TOKEN_ANY, NULL);
	struct sup_resp		*ra, *rb, *rm, *rr;
	json_t			*j;
	unsigned int		 n;

	rr = sup_get(re, NULL);
	ra = sup_get(ea, NULL);
	rb = sup_get(eb, NULL);
	rm = sup_get(m, NULL);
	/* Another session of /e/b, whose stream's client went away. */
	sup_hangup(sup_get(session_at(TOKEN_ANY, "/e/b"), NULL)->conn);
	n = session_count();
	j = sup_reload(SUP_BASE CONF_CLIENTS "endpoints = (\n" EP_A ",\n"
	    "  { path = \"/e/b\"; tools = [ \"b__w*\" ]; }\n);\n"
	    CONF_SERVERS);
	ck_assert_msg(json_is_true(json_object_get(j, "ok")), "%s",
	    sup_dump(j));
	json_decref(j);
	sup_settle(0);
	/* Unchanged: the same session, told nothing. */
	ck_assert_int_eq(sup_post(ea, "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"ping\"}")->status, 200);
	ck_assert_ptr_null(sup_find(ra, "notifications/tools/list_changed"));
	ck_assert(!ra->done);
	/* Changed: kept, told, and its new selection at once. */
	ck_assert_uint_eq(count(rb, "notifications/tools/list_changed"), 1);
	ck_assert_str_eq(tools(eb), "b__write");
	ck_assert_str_eq(names(ask(eb, "prompts/list", "{}"),
	    "result.prompts", "name"), "");
	/* Removed: its sessions ended, its path unknown. */
	ck_assert_uint_eq(session_count(), n - 1);
	ck_assert(rr->done || rr->conn->eof);
	ck_assert_int_eq(sup_post(re, "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"ping\"}")->status, 404);
	/* /mcp's: nothing changed for it. */
	ck_assert_ptr_null(sup_find(rm, "notifications/tools/list_changed"));
	ck_assert_int_eq(sup_post(m, "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"ping\"}")->status, 200);
	/* An endpoint added by the reload serves at once. */
	j = sup_reload(SUP_BASE CONF_CLIENTS "endpoints = (\n" EP_A ",\n"
	    EP_NOTB "\n);\n" CONF_SERVERS);
	json_decref(j);
	ck_assert_str_eq(tools(session_at(TOKEN_ANY, "/e/notb")),
	    "a__echo a__search a__secret");
	ck_assert_int_eq(sup_post(eb, "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"ping\"}")->status, 404);
}
END_TEST

/* The status names each endpoint and its sessions. */
START_TEST(test_status)
{
	json_t	*a;

	session_at(TOKEN_ANY, "/e/a");
	session_at(TOKEN_ANY, "/e/a");
	a = vendpoint_status_json();
	ck_assert_int_eq(json_array_size(a), 4);
	ck_assert_jstr(a, "1.path", "/e/a");
	ck_assert_jint(a, "1.sessions", 2);
	ck_assert_jstr(a, "1.discovery", "list");
	ck_assert_jint(a, "0.sessions", 0);
	json_decref(a);
}
END_TEST

/* The configuration refuses what would collide, at its line. */
START_TEST(test_conf_errors)
{
	static const struct {
		const char	*text;
		const char	*error;
	} bad[] = {
		{ "endpoints = ( { path = \"/mcp\"; } );",
		    "sup.conf:1: endpoint /mcp: /mcp collides with the "
		    "gateway's /mcp" },
		{ "\nendpoints = ( { path = \"/x\"; },\n { path = \"/x/sse\"; "
		    "} );", "sup.conf:3: endpoint /x/sse: /x/sse collides with "
		    "endpoint /x on line 2" },
		{ "endpoints = ( { path = \"/x\"; }, { path = \"/x\"; } );",
		    "collides with endpoint /x on line 1" },
		{ "endpoints = ( { path = \"/.well-known/x\"; } );",
		    "collides with the gateway's /.well-known" },
		{ "endpoints = ( { path = \"/x\"; } );\nws_path = \"/x/ws\";",
		    "endpoint /x: /x/ws collides with the gateway's ws_path" },
		{ "endpoints = ( { path = \"/metrics\"; } );", "/metrics" },
		{ "endpoints = ( { path = \"/healthz\"; } );", "/healthz" },
		{ "endpoints = ( { path = \"/oauth/callback\"; } );",
		    "collides with the gateway's default redirect_uri "
		    "/oauth/callback" },
		{ "oauth_client = { redirect_uri = \"http://127.0.0.1:8931/"
		    "back\"; client_metadata_url = \"https://gw.example/"
		    "client.json\"; };\nendpoints = ( { path = \"/back\"; } );",
		    "collides with the gateway's redirect_uri" },
		{ "oauth_client = { client_metadata_url = \"https://gw.example/"
		    "client.json\"; };\nendpoints = ( { path = \"/client.json\";"
		    " } );", "collides with the gateway's client_metadata_url" },
		{ "endpoints = ( { path = \"/x/../y\"; } );",
		    "must begin with /" },
		{ "endpoints = ( { path = \"/x/\"; } );", "must begin with /" },
		{ "endpoints = ( { path = \"/x\"; discovery = \"find\"; } );",
		    "unknown discovery \"find\" (list or search)" },
		{ "endpoints = ( { path = \"/x\"; tools = [ \"!\" ]; } );",
		    "tools: an empty pattern" },
		{ "endpoints = ( { tools = [ \"*\" ]; } );",
		    "an endpoint needs a path" },
		{ "endpoints = ( { path = \"/x\"; tool = [ \"*\" ]; } );",
		    "unknown setting \"tool\"" },
	};
	struct conf	*c;
	char		 err[512];
	size_t		 i;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		c = conf_parse(bad[i].text, "sup.conf", err, sizeof err);
		ck_assert_msg(c == NULL, "%s: accepted", bad[i].text);
		ck_assert_msg(strstr(err, bad[i].error) != NULL,
		    "%s: \"%s\", not \"%s\"", bad[i].text, err, bad[i].error);
	}
	/* No ws_path: <path>/ws is free. */
	c = conf_parse("ws_path = \"\";\nendpoints = ( { path = \"/x\"; },"
	    " { path = \"/x/ws\"; } );", "sup.conf", err, sizeof err);
	ck_assert_msg(c != NULL, "%s", err);
	ck_assert_int_eq(c->nendpoints, 2);
	ck_assert_int_eq(c->endpoints[0].discovery, DISCOVERY_LIST);
	ck_assert_ptr_null(c->endpoints[0].tools);
	conf_free(c);
}
END_TEST

static Suite *
vendpoint_suite(void)
{
	Suite	*s = suite_create("vendpoint");
	TCase	*tc = tcase_create("vendpoint");
	TCase	*tcc = tcase_create("conf");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_select);
	tcase_add_test(tc, test_calls_unknown);
	tcase_add_test(tc, test_acl_inside);
	tcase_add_test(tc, test_bound);
	tcase_add_test(tc, test_modern);
	tcase_add_test(tc, test_modern_listen);
	tcase_add_test(tc, test_list_changed);
	tcase_add_test(tc, test_client_tools);
	tcase_add_test(tc, test_reload);
	tcase_add_test(tc, test_status);
	suite_add_tcase(s, tc);
	tcase_add_test(tcc, test_conf_errors);
	suite_add_tcase(s, tcc);
	return (s);
}

int
main(void)
{
	return (sup_check_main(vendpoint_suite()));
}
