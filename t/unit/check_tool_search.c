/* SPDX-License-Identifier: ISC */
/*
 * Tool search (discovery = "search", supervisor/tool_search.c): tools/list
 * lists search_tools and call_tool; search_tools ranks the catalog and
 * shows a client only what its patterns allow, filtered before the limit
 * and out of the scores; call_tool reaches the upstream under the tool's
 * own name as a direct call would, and is refused what a direct call is;
 * the index follows a changed upstream list; "list" is the default.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "frame.h"
#include "supervisor.h"

#include "sup_check.h"

#define TOKEN_ANY	"token-any-0123456789ab"
#define TOKEN_RO	"token-ro-0123456789abc"

#define SERVERS \
    "servers = (\n" \
    "  { name = \"fs\"; transport = \"stdio\"; command = [ \"true\" ]; },\n" \
    "  { name = \"gh\"; transport = \"stdio\"; command = [ \"true\" ]; }\n" \
    ");\n"
#define CLIENTS \
    "auth_tokens = [ \"" TOKEN_ANY "\" ];\n" \
    "clients = (\n" \
    "  { name = \"ro\"; token = \"" TOKEN_RO "\";\n" \
    "    deny = [ \"fs__read_file\" ]; }\n" \
    ");\n"

static const char conf_search[] = SUP_BASE "discovery = \"search\";\n"
    CLIENTS SERVERS;
static const char conf_list[] = SUP_BASE CLIENTS SERVERS;
/* /mcp lists; an endpoint of fs's tools but read_file searches. */
static const char conf_endpoint[] = SUP_BASE CLIENTS SERVERS
    "endpoints = (\n"
    "  { path = \"/mcp/files\"; tools = [ \"fs__*\", \"!fs__write_file\" ];\n"
    "    discovery = \"search\"; }\n"
    ");\n";

#define TOOL(n, d, p) "{\"name\":\"" n "\",\"description\":\"" d "\"," \
    "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"" p "\":" \
    "{\"type\":\"string\"}}}}"
#define CATALOG_FS "{\"tools\":[" \
    TOOL("read_file", "Read the contents of a file.", "path") "," \
    TOOL("write_file", "Write text into a file.", "content") "," \
    TOOL("list_directory", "List a directory.", "path") "]}"
#define CATALOG_GH "{\"tools\":[" \
    TOOL("create_issue", "Open an issue in a repository.", "title") "]}"

static void
setup(void)
{
	sup_catalog("fs", CATALOG_FS);
	sup_catalog("gh", CATALOG_GH);
	sup_start(conf_search);
}

static void
teardown(void)
{
	sup_stop();
}

static json_t *
search(struct sup_client *cl, const char *query, int limit)
{
	return (sup_rpc(cl, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"search_tools\","
	    "\"arguments\":{\"query\":\"%s\",\"limit\":%d}}}", query, limit));
}

/* The names found, space-separated. */
static const char *
found(json_t *a)
{
	static char	 buf[512];
	json_t		*v;
	size_t		 i, n = 0;

	ck_assert_result(a);
	buf[0] = '\0';
	json_array_foreach(sup_jget(a, "result.structuredContent.tools"), i,
	    v)
		n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s",
		    n > 0 ? " " : "", sup_jstr(v, "name"));
	return (buf);
}

START_TEST(test_list)
{
	struct sup_client	*cl = sup_session(TOKEN_ANY, NULL);
	json_t			*a;

	a = sup_rpc(cl, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"tools/list\"}");
	ck_assert_uint_eq(sup_jlen(a, "result.tools"), 2);
	ck_assert_jstr(a, "result.tools.0.name", "search_tools");
	ck_assert_jstr(a, "result.tools.1.name", "call_tool");
	ck_assert_jstr(a, "result.tools.0.inputSchema.required.0", "query");
}
END_TEST

START_TEST(test_search)
{
	struct sup_client	*cl = sup_session(TOKEN_ANY, NULL);
	json_t			*a, *t;

	a = search(cl, "read a file", 10);
	ck_assert_str_eq(found(a), "fs__read_file fs__write_file");
	t = sup_jget(a, "result.structuredContent.tools.0");
	ck_assert_jstr(t, "description", "Read the contents of a file.");
	ck_assert_jstr(t, "inputSchema.properties.path.type", "string");
	ck_assert(json_real_value(sup_jget(t, "score")) > json_real_value(
	    sup_jget(a, "result.structuredContent.tools.1.score")));
	/* The text content is the same list, as JSON. */
	ck_assert_ptr_nonnull(strstr(sup_jstr(a, "result.content.0.text"),
	    "\"fs__read_file\""));
	ck_assert_str_eq(found(search(cl, "open an issue", 1)),
	    "gh__create_issue");
	ck_assert_str_eq(found(search(cl, "nothing matches zebra", 5)), "");
	/* Bad arguments get a clear error. */
	ck_assert_error(search(cl, "x", 51), -32602);
	ck_assert_error(search(cl, "x", 0), -32602);
	ck_assert_error(sup_rpc(cl, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"search_tools\","
	    "\"arguments\":{\"query\":5}}}"), -32602);
	ck_assert_error(sup_rpc(cl, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"search_tools\"}}"),
	    -32602);
}
END_TEST

/* A tool the client may not see takes no place and changes no score. */
START_TEST(test_acl_before_limit)
{
	struct sup_client	*ro = sup_session(TOKEN_RO, NULL);
	struct sup_client	*any = sup_session(TOKEN_ANY, NULL);
	json_t			*a, *b;
	double			 seen;

	/* The best match is hidden: the one place goes to the next. */
	ck_assert_str_eq(found(search(any, "read file", 1)), "fs__read_file");
	a = search(ro, "read file", 1);
	ck_assert_str_eq(found(a), "fs__write_file");
	seen = json_real_value(sup_jget(a,
	    "result.structuredContent.tools.0.score"));
	/* Its score is the one it has where the hidden tool is absent. */
	sup_catalog("fs", "{\"tools\":["
	    TOOL("write_file", "Write text into a file.", "content") ","
	    TOOL("list_directory", "List a directory.", "path") "]}");
	sup_settle(5);
	b = search(any, "read file", 1);
	ck_assert_str_eq(found(b), "fs__write_file");
	ck_assert(json_real_value(sup_jget(b,
	    "result.structuredContent.tools.0.score")) == seen);
}
END_TEST

START_TEST(test_call)
{
	struct sup_client	*cl = sup_session(TOKEN_ANY, NULL);
	struct sup_client	*ro = sup_session(TOKEN_RO, NULL);
	struct sup_frame	*f;
	json_t			*o, *a;

	sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"call_tool\",\"arguments\":{\"name\":"
	    "\"fs__write_file\",\"arguments\":{\"content\":\"hi\"}},"
	    "\"_meta\":{\"progressToken\":\"p1\"}}}");
	ck_assert_ptr_nonnull(f = sup_take(sup_worker("fs"), MSG_REQUEST));
	o = sup_frame_json(f);
	/* The upstream's own name, the arguments, the progress token. */
	ck_assert_jstr(o, "method", "tools/call");
	ck_assert_jstr(o, "params.name", "write_file");
	ck_assert_jstr(o, "params.arguments.content", "hi");
	ck_assert_jstr(o, "params._meta.progressToken", "p1");
	json_decref(o);
	sup_reply(sup_worker("fs"), f, "{\"content\":[]}");
	/* What a direct call may not reach, call_tool may not either. */
	a = sup_rpc(ro, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"call_tool\",\"arguments\":"
	    "{\"name\":\"fs__read_file\"}}}");
	ck_assert_error(a, -32602);
	ck_assert_jstr(a, "error.message", "unknown tool: fs__read_file");
	ck_assert_ptr_null(sup_take(sup_worker("fs"), MSG_REQUEST));
	ck_assert_error(sup_rpc(cl, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"call_tool\",\"arguments\":"
	    "{\"name\":\"nope\"}}}"), -32602);
	ck_assert_error(sup_rpc(cl, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"call_tool\",\"arguments\":"
	    "{\"name\":\"fs__write_file\",\"arguments\":[1]}}}"), -32602);
	/* A direct call still works. */
	sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"gh__create_issue\"}}");
	ck_assert_ptr_nonnull(f = sup_take(sup_worker("gh"), MSG_REQUEST));
	sup_reply(sup_worker("gh"), f, "{\"content\":[]}");
}
END_TEST

/* A 2026-07-28 call_tool of fs's tool t, its arguments args. */
static struct sup_resp *
modern_call(const char *args, const char *more)
{
	char	params[4096];

	snprintf(params, sizeof params, "\"name\":\"call_tool\",\"arguments\":"
	    "{\"name\":\"fs__tagged\",\"arguments\":%s}%s", args,
	    more != NULL ? more : "");
	return (sup_modern("/mcp", TOKEN_ANY, "tools/call", "call_tool",
	    params, "{\"elicitation\":{}}", NULL));
}

/*
 * A modern client's call_tool is the tools/call it names, multiple round
 * trips included: its retry's requestState and inputResponses reach the
 * call they continue (they were dropped: the tool ran again and asked
 * again, for ever).  The client's Mcp-Param headers are call_tool's,
 * which has no x-mcp-header: the named tool's are not asked of it.
 */
START_TEST(test_call_modern)
{
	struct sup_resp		*r;
	struct sup_frame	*f, *u;
	const char		*key;
	char			 more[2048];
	json_t			*a, *v;

	sup_catalog("fs", "{\"tools\":[{\"name\":\"tagged\","
	    "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"region\":"
	    "{\"type\":\"string\",\"x-mcp-header\":\"Region\"}}}}]}");
	r = modern_call("{\"region\":\"eu\"}", NULL);
	ck_assert_ptr_nonnull(f = sup_take(sup_worker("fs"), MSG_REQUEST));
	sup_send(sup_worker("fs"), MSG_UP_REQUEST, 0, f->session, f->tag,
	    "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"elicitation/create\","
	    "\"params\":{\"message\":\"Sure?\",\"requestedSchema\":{\"type\":"
	    "\"object\",\"properties\":{}}}}");
	a = sup_json(r);
	ck_assert_jstr(a, "result.resultType", "input_required");
	ck_assert_int_eq(json_object_size(sup_jget(a, "result.inputRequests")),
	    1);
	json_object_foreach(sup_jget(a, "result.inputRequests"), key, v)
		snprintf(more, sizeof more, ",\"requestState\":\"%s\","
		    "\"inputResponses\":{\"%s\":{\"action\":\"accept\","
		    "\"content\":{}}}", sup_jstr(a, "result.requestState"), key);
	r = modern_call("{\"region\":\"eu\"}", more);
	ck_assert_ptr_nonnull(u = sup_take(sup_worker("fs"), MSG_UP_RESPONSE));
	ck_assert_uint_eq(u->tag, 9);
	ck_assert_ptr_nonnull(strstr(u->text, "\"action\":\"accept\""));
	ck_assert_ptr_null(sup_take(sup_worker("fs"), MSG_REQUEST));
	sup_reply(sup_worker("fs"), f, "{\"content\":[{\"type\":\"text\","
	    "\"text\":\"done\"}]}");
	ck_assert_jstr(sup_json(r), "result.content.0.text", "done");
}
END_TEST

/* A changed list is searched at once; the other upstream is kept. */
START_TEST(test_follows)
{
	struct sup_client	*cl = sup_session(TOKEN_ANY, NULL);
	json_t			*a;

	ck_assert_str_eq(found(search(cl, "pull request", 5)), "");
	sup_catalog("gh", "{\"tools\":["
	    TOOL("create_issue", "Open an issue in a repository.", "title") ","
	    TOOL("merge_pull_request", "Merge a pull request.", "number")
	    "]}");
	sup_settle(5);
	ck_assert_str_eq(found(search(cl, "merge the pull request", 5)),
	    "gh__merge_pull_request");
	ck_assert_str_eq(found(search(cl, "list directory", 1)),
	    "fs__list_directory");
	/* A tool whose listing holds a NUL (JSON allows \u0000) is found
	 * and shown as listed, the NUL kept. */
	sup_catalog("gh", "{\"tools\":["
	    TOOL("close_issue", "Close an issue.\\u0000 Done.", "number")
	    "]}");
	sup_settle(5);
	a = search(cl, "close the issue", 5);
	ck_assert_str_eq(found(a), "gh__close_issue");
	ck_assert_uint_eq(json_string_length(sup_jget(a,
	    "result.structuredContent.tools.0.description")), 22);
	/* An upstream gone: its tools go. */
	sup_catalog("gh", "{\"tools\":[]}");
	sup_settle(5);
	ck_assert_str_eq(found(search(cl, "merge the pull request", 5)), "");
}
END_TEST

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
	return (cl);
}

/* An endpoint searches what it selects, with the client's rules too. */
START_TEST(test_endpoint)
{
	struct sup_client	*top, *any, *ro;
	struct sup_frame	*f;
	json_t			*a;

	json_decref(sup_reload(conf_endpoint));
	top = session_at(TOKEN_ANY, NULL);
	any = session_at(TOKEN_ANY, "/mcp/files");
	ro = session_at(TOKEN_RO, "/mcp/files");
	/* /mcp lists its tools; the endpoint its meta-tools. */
	a = sup_rpc(top, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"tools/list\"}");
	ck_assert_uint_eq(sup_jlen(a, "result.tools"), 4);
	a = sup_rpc(any, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"tools/list\"}");
	ck_assert_uint_eq(sup_jlen(a, "result.tools"), 2);
	ck_assert_jstr(a, "result.tools.0.name", "search_tools");
	/* What the endpoint leaves out is never found nor called. */
	ck_assert_str_eq(found(search(any, "write text into a file", 5)),
	    "fs__read_file");
	ck_assert_str_eq(found(search(any, "open an issue", 5)), "");
	ck_assert_error(sup_rpc(any, "{\"jsonrpc\":\"2.0\",\"id\":5,"
	    "\"method\":\"tools/call\",\"params\":{\"name\":\"call_tool\","
	    "\"arguments\":{\"name\":\"gh__create_issue\"}}}"), -32602);
	ck_assert_ptr_null(sup_take(sup_worker("gh"), MSG_REQUEST));
	/* The client's own deny holds inside it. */
	ck_assert_str_eq(found(search(ro, "read file directory", 5)),
	    "fs__list_directory");
	sup_post(any, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"call_tool\","
	    "\"arguments\":{\"name\":\"fs__list_directory\"}}}");
	ck_assert_ptr_nonnull(f = sup_take(sup_worker("fs"), MSG_REQUEST));
	sup_reply(sup_worker("fs"), f, "{\"content\":[]}");
	/* /mcp has no meta-tools. */
	ck_assert_error(search(top, "read", 5), -32602);
}
END_TEST

/* The default lists the catalog; a reload switches and says so. */
START_TEST(test_default)
{
	struct sup_client	*cl = sup_session(TOKEN_ANY, NULL);
	struct sup_resp		*st;
	json_t			*a;

	st = sup_get(cl, NULL);
	json_decref(sup_reload(conf_list));
	ck_assert_ptr_nonnull(sup_find(st,
	    "notifications/tools/list_changed"));
	a = sup_rpc(cl, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"tools/list\"}");
	ck_assert_uint_eq(sup_jlen(a, "result.tools"), 4);
	ck_assert_error(search(cl, "read", 5), -32602);
}
END_TEST

static Suite *
tool_search_suite(void)
{
	Suite	*s = suite_create("tool_search");
	TCase	*tc;

	tc = tcase_create("tool_search");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_list);
	tcase_add_test(tc, test_search);
	tcase_add_test(tc, test_acl_before_limit);
	tcase_add_test(tc, test_call);
	tcase_add_test(tc, test_call_modern);
	tcase_add_test(tc, test_follows);
	tcase_add_test(tc, test_default);
	tcase_add_test(tc, test_endpoint);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	return (sup_check_main(tool_search_suite()));
}
