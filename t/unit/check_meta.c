/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for common/meta.c: the 2026-07-28 request envelope, the
 * standard request headers checked against the body in the order the
 * specification gives, the Base64 sentinel of header values (the
 * specification's own examples), and removing members from an object.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <event2/buffer.h>

#include "meta.h"

#define ENV(extra) "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":" \
	"\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}" extra "}"

static struct jrpc	m;
static char		text[4096];

/* Scan a message held in a static buffer. */
static const struct jrpc *
scan(const char *s)
{
	const char	*why;

	snprintf(text, sizeof text, "%s", s);
	ck_assert_int_eq(jrpc_scan(text, strlen(text), &m, &why), 0);
	return (&m);
}

/* Headers from C strings (NULL: absent). */
static struct meta_headers
headers(const char *version, const char *method, const char *name)
{
	struct meta_headers	h;

	memset(&h, 0, sizeof h);
	h.version = version;
	h.versionlen = version != NULL ? strlen(version) : 0;
	h.method = method;
	h.methodlen = method != NULL ? strlen(method) : 0;
	h.name = name;
	h.namelen = name != NULL ? strlen(name) : 0;
	return (h);
}

/* Run meta_check; return the code, with the status in *status. */
static int
check(const char *msg, const char *version, const char *method,
    const char *name, int *status)
{
	struct meta_headers	h = headers(version, method, name);
	struct meta_envelope	env;
	char			why[512];

	return (meta_check(&h, scan(msg), &env, status, why, sizeof why));
}

START_TEST(test_claim)
{
	ck_assert_int_eq(meta_claim(scan("{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"tools/list\",\"params\":{" ENV("") "}}")), 1);
	/* A claim is the key, whatever its value. */
	ck_assert_int_eq(meta_claim(scan("{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"x\",\"params\":{\"_meta\":{\"io.modelcontextprotocol"
	    "/protocolVersion\":7}}}")), 1);
	ck_assert_int_eq(meta_claim(scan("{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"tools/list\",\"params\":{\"_meta\":{"
	    "\"progressToken\":1}}}")), 0);
	ck_assert_int_eq(meta_claim(scan("{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"ping\"}")), 0);
}
END_TEST

START_TEST(test_parse)
{
	struct meta_envelope	env;
	char			why[256];

	ck_assert_int_eq(meta_parse(scan("{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"tools/list\",\"params\":{" ENV(",\"io."
	    "modelcontextprotocol/logLevel\":\"warning\",\"progressToken\":"
	    "\"t\",\"io.modelcontextprotocol/clientInfo\":{\"name\":\"c\","
	    "\"version\":\"1\"}") "}}"), &env, why, sizeof why), 0);
	ck_assert_str_eq(env.version_text, "2026-07-28");
	ck_assert_int_eq(env.level, 3);
	ck_assert_int_eq(env.progress.len, 3);
	ck_assert_int_ne(env.info.len, 0);
	ck_assert_int_eq(env.caps.len, 2);

	/* Each problem is named. */
	ck_assert_int_eq(meta_parse(scan("{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"tools/list\"}"), &env, why, sizeof why), -1);
	ck_assert_ptr_nonnull(strstr(why, "_meta: missing"));
	ck_assert_int_eq(meta_parse(scan("{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"tools/list\",\"params\":{\"_meta\":{\"io."
	    "modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}}"), &env,
	    why, sizeof why), -1);
	ck_assert_ptr_nonnull(strstr(why, "clientCapabilities: missing"));
	ck_assert_int_eq(meta_parse(scan("{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"tools/list\",\"params\":{\"_meta\":{\"io."
	    "modelcontextprotocol/protocolVersion\":20260728,\"io."
	    "modelcontextprotocol/clientCapabilities\":{}}}}"), &env, why,
	    sizeof why), -1);
	ck_assert_ptr_nonnull(strstr(why, "must be a string"));
	ck_assert_int_eq(meta_parse(scan("{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"tools/list\",\"params\":{\"_meta\":{\"io."
	    "modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io."
	    "modelcontextprotocol/clientCapabilities\":[]}}}"), &env, why,
	    sizeof why), -1);
	ck_assert_ptr_nonnull(strstr(why, "must be an object"));
	ck_assert_int_eq(meta_parse(scan("{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"tools/list\",\"params\":{" ENV(",\"io."
	    "modelcontextprotocol/logLevel\":\"loud\"") "}}"), &env, why,
	    sizeof why), -1);
	ck_assert_ptr_nonnull(strstr(why, "logLevel"));
	ck_assert_int_eq(meta_parse(scan("{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"tools/list\",\"params\":{" ENV(",\"io."
	    "modelcontextprotocol/clientInfo\":{\"name\":\"c\"}") "}}"), &env,
	    why, sizeof why), -1);
	ck_assert_ptr_nonnull(strstr(why, "clientInfo"));
	/* A key given twice is refused, not read one way or the other. */
	ck_assert_int_eq(meta_parse(scan("{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"tools/list\",\"params\":{" ENV(",\"io."
	    "modelcontextprotocol/protocolVersion\":\"2025-11-25\"") "}}"),
	    &env, why, sizeof why), -1);
	ck_assert_ptr_nonnull(strstr(why, "more than once"));
	ck_assert_int_eq(meta_parse(scan("{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"tools/list\",\"params\":{" ENV(",\"progressToken\":"
	    "{}") "}}"), &env, why, sizeof why), -1);
}
END_TEST

#define CALL(name) "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\"," \
	"\"params\":{\"name\":" name ",\"arguments\":{}," ENV("") "}}"

START_TEST(test_check_order)
{
	int	status;

	/* Everything right. */
	ck_assert_int_eq(check(CALL("\"echo\""), "2026-07-28", "tools/call",
	    "echo", &status), 0);
	ck_assert_int_eq(status, 200);
	/* The envelope first: -32602 at 400, whatever the headers say. */
	ck_assert_int_eq(check("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"echo\"}}", NULL, NULL, NULL,
	    &status), JRPC_INVALID_PARAMS);
	ck_assert_int_eq(status, 400);
	/* A header that disagrees with the body. */
	ck_assert_int_eq(check(CALL("\"echo\""), "2026-07-29", "tools/call",
	    "echo", &status), MCP_HEADER_MISMATCH);
	ck_assert_int_eq(status, 400);
	ck_assert_int_eq(check(CALL("\"echo\""), "2026-07-28", "tools/list",
	    "echo", &status), MCP_HEADER_MISMATCH);
	/* Then the version. */
	ck_assert_int_eq(check("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"tools/list\",\"params\":{\"_meta\":{\"io.modelcontextprotocol/"
	    "protocolVersion\":\"2027-01-01\",\"io.modelcontextprotocol/"
	    "clientCapabilities\":{}}}}", "2027-01-01", "tools/list", NULL,
	    &status), MCP_UNSUPPORTED_VERSION);
	ck_assert_int_eq(status, 400);
	/* Then the required headers. */
	ck_assert_int_eq(check(CALL("\"echo\""), NULL, "tools/call", "echo",
	    &status), MCP_HEADER_MISMATCH);
	ck_assert_int_eq(check(CALL("\"echo\""), "2026-07-28", NULL, "echo",
	    &status), MCP_HEADER_MISMATCH);
	ck_assert_int_eq(check(CALL("\"echo\""), "2026-07-28", "tools/call",
	    NULL, &status), MCP_HEADER_MISMATCH);
	ck_assert_int_eq(check(CALL("\"echo\""), "2026-07-28", "tools/call",
	    "ech0", &status), MCP_HEADER_MISMATCH);
	/* Mcp-Name is not required where the method has no name. */
	ck_assert_int_eq(check("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"tools/list\",\"params\":{" ENV("") "}}", "2026-07-28",
	    "tools/list", NULL, &status), 0);
	/* Last the method: 404. */
	ck_assert_int_eq(check("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"ping\",\"params\":{" ENV("") "}}", "2026-07-28", "ping", NULL,
	    &status), JRPC_METHOD_NOT_FOUND);
	ck_assert_int_eq(status, 404);
	ck_assert_int_eq(check("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"initialize\",\"params\":{" ENV("") "}}", "2026-07-28",
	    "initialize", NULL, &status), JRPC_METHOD_NOT_FOUND);
}
END_TEST

START_TEST(test_check_name)
{
	int	status;

	/* A name that is not plain ASCII comes Base64-encoded. */
	ck_assert_int_eq(check(CALL("\"h\\u00e9llo\""), "2026-07-28",
	    "tools/call", "=?base64?aMOpbGxv?=", &status), 0);
	ck_assert_int_eq(check(CALL("\"h\\u00e9llo\""), "2026-07-28",
	    "tools/call", "=?base64?aMOpbGxx?=", &status),
	    MCP_HEADER_MISMATCH);
	ck_assert_int_eq(check(CALL("\"h\\u00e9llo\""), "2026-07-28",
	    "tools/call", "=?base64?aMOp*Gxv?=", &status),
	    MCP_HEADER_MISMATCH);
	/* resources/read mirrors the URI. */
	ck_assert_int_eq(check("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"resources/read\",\"params\":{\"uri\":\"demo://a\"," ENV("")
	    "}}", "2026-07-28", "resources/read", "demo://a", &status), 0);
	ck_assert_int_eq(check("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"resources/read\",\"params\":{\"uri\":\"demo://a\"," ENV("")
	    "}}", "2026-07-28", "resources/read", "demo://b", &status),
	    MCP_HEADER_MISMATCH);
}
END_TEST

/* Decode a header value into a C string; NULL if invalid. */
static const char *
decode(const char *v)
{
	static char	out[256];
	ssize_t		n;

	if ((n = meta_header_decode(v, strlen(v), out, sizeof out - 1)) < 0)
		return (NULL);
	out[n] = '\0';
	return (out);
}

/* Encode a value as a header value. */
static const char *
encode(const char *v)
{
	static char	 out[256];
	struct evbuffer	*b = evbuffer_new();
	size_t		 n;

	meta_header_encode(b, v, strlen(v));
	n = evbuffer_remove(b, out, sizeof out - 1);
	out[n] = '\0';
	evbuffer_free(b);
	return (out);
}

/* The specification's table of encodings (streamable-http, Value Encoding). */
START_TEST(test_sentinel)
{
	ck_assert_str_eq(encode("us-west1"), "us-west1");
	ck_assert_str_eq(encode("Hello, \xe4\xb8\x96\xe7\x95\x8c"),
	    "=?base64?SGVsbG8sIOS4lueVjA==?=");
	ck_assert_str_eq(encode(" padded "), "=?base64?IHBhZGRlZCA=?=");
	ck_assert_str_eq(encode("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
	ck_assert_str_eq(encode("=?base64?literal?="),
	    "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=");
	ck_assert_str_eq(decode("=?base64?SGVsbG8sIOS4lueVjA==?="),
	    "Hello, \xe4\xb8\x96\xe7\x95\x8c");
	ck_assert_str_eq(decode("=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
	    "=?base64?literal?=");
	ck_assert_str_eq(decode("us-west1"), "us-west1");
	ck_assert_str_eq(decode("=?base64?" "?="), "");
	/* Not canonical, not Base64, not UTF-8. */
	ck_assert_ptr_null(decode("=?base64?QR==?="));
	ck_assert_ptr_null(decode("=?base64?QQ=?="));
	ck_assert_ptr_null(decode("=?base64?Q===?="));
	ck_assert_ptr_null(decode("=?base64?QQ=A?="));
	ck_assert_ptr_null(decode("=?base64?/w==?="));
	ck_assert_ptr_null(decode("=?base64?7aCA?="));	/* a surrogate */
}
END_TEST

/* Apply meta_drop_members to an object and return the text. */
static const char *
drop(const char *obj)
{
	static char	 out[512];
	struct evbuffer	*b = evbuffer_new();
	struct jedit	 edits[8];
	struct jspan	 v;
	const char	*why;
	size_t		 where, n;
	int		 k;

	snprintf(text, sizeof text, "%s", obj);
	ck_assert_int_eq(jscan_validate(text, strlen(text), &v, &why, &where),
	    0);
	static const char *const prefixes[] = { "io.x/", "zz", NULL };

	k = meta_drop_members(text, v, prefixes, edits, 8);
	ck_assert_int_ge(k, 0);
	jscan_splice(b, text, strlen(text), edits, (size_t)k);
	n = evbuffer_remove(b, out, sizeof out - 1);
	out[n] = '\0';
	evbuffer_free(b);
	ck_assert_int_eq(jscan_validate(out, n, &v, &why, &where), 0);
	return (out);
}

START_TEST(test_drop_members)
{
	ck_assert_str_eq(drop("{}"), "{}");
	ck_assert_str_eq(drop("{\"a\":1}"), "{\"a\":1}");
	ck_assert_str_eq(drop("{\"io.x/a\":1}"), "{}");
	ck_assert_str_eq(drop("{\"io.x/a\":1,\"b\":2}"), "{\"b\":2}");
	ck_assert_str_eq(drop("{\"b\":2,\"io.x/a\":1}"), "{\"b\":2}");
	ck_assert_str_eq(drop("{ \"b\" : 2 , \"io.x/a\" : [1,{}] , \"c\":3 ,"
	    "\"io.x/d\":\"}\"}"), "{ \"b\" : 2 , \"c\":3}");
	ck_assert_str_eq(drop("{\"io.x/a\":1,\"io.x/b\":{\"io.x/c\":1},"
	    "\"c\":{\"io.x/d\":1}}"), "{\"c\":{\"io.x/d\":1}}");
	/* Several prefixes, dropped in one pass. */
	ck_assert_str_eq(drop("{\"zz\":1,\"io.x/a\":2,\"b\":3,\"zzz\":4}"),
	    "{\"b\":3}");
	/* An escaped key is read decoded. */
	ck_assert_str_eq(drop("{\"io.x\\/a\":1,\"b\":2}"), "{\"b\":2}");
}
END_TEST

/* Collect what meta_param_each hands over, as "Name=value;" text. */
static void
collect(void *arg, const char *name, const char *value, size_t len)
{
	char	*out = arg;
	size_t	 n = strlen(out);

	snprintf(out + n, 512 - n, "%s=%.*s;", name, (int)len, value);
}

/* The same, as "Name:length;". */
static void
collect_len(void *arg, const char *name, const char *value, size_t len)
{
	char	*out = arg;
	size_t	 n = strlen(out);

	snprintf(out + n, 512 - n, "%s:%zu;", name, len);
}

START_TEST(test_params)
{
	json_t	*schema;
	char	 out[512] = "";

	schema = json_loads("{\"type\":\"object\",\"properties\":{"
	    "\"region\":{\"type\":\"string\",\"x-mcp-header\":\"Region\"},"
	    "\"n\":{\"type\":\"integer\",\"x-mcp-header\":\"N\"},"
	    "\"ok\":{\"type\":\"boolean\",\"x-mcp-header\":\"Ok\"},"
	    "\"gone\":{\"type\":\"string\",\"x-mcp-header\":\"Gone\"},"
	    "\"nil\":{\"x-mcp-header\":\"Nil\"},"
	    "\"bad\":{\"x-mcp-header\":\"a b\"},"
	    "\"deep\":{\"type\":\"object\",\"properties\":{\"z\":"
	    "{\"x-mcp-header\":\"Zone\"}}}}}", 0, NULL);
	ck_assert_ptr_nonnull(schema);
	ck_assert_int_eq(meta_param_each(schema, scan("{\"jsonrpc\":\"2.0\","
	    "\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"t\","
	    "\"arguments\":{\"region\":\"eu\\u00e9\",\"n\":42.0,\"ok\":false,"
	    "\"nil\":null,\"bad\":\"x\",\"deep\":{\"z\":\"b\"}}}}"), collect,
	    out), 4);
	ck_assert_ptr_nonnull(strstr(out, "Region=eu\xc3\xa9;"));
	ck_assert_ptr_nonnull(strstr(out, "N=42.0;"));
	ck_assert_ptr_nonnull(strstr(out, "Ok=false;"));
	ck_assert_ptr_nonnull(strstr(out, "Zone=b;"));
	ck_assert_ptr_null(strstr(out, "Gone"));
	ck_assert_ptr_null(strstr(out, "Nil"));
	/* A U+0000 is part of the value, not its end: "a" would match a
	 * header "a" while the upstream got "a\0x". */
	out[0] = '\0';
	ck_assert_int_eq(meta_param_each(schema, scan("{\"jsonrpc\":\"2.0\","
	    "\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"t\","
	    "\"arguments\":{\"region\":\"a\\u0000x\"}}}"), collect_len, out),
	    1);
	ck_assert_str_eq(out, "Region:3;");
	json_decref(schema);
	/* Numbers agree numerically, strings exactly. */
	ck_assert_int_eq(meta_param_equal("42", 2, "42.0", 4), 1);
	ck_assert_int_eq(meta_param_equal("42", 2, "4.2e1", 5), 1);
	ck_assert_int_eq(meta_param_equal("42", 2, "43", 2), 0);
	ck_assert_int_eq(meta_param_equal("eu", 2, "EU", 2), 0);
	ck_assert_int_eq(meta_param_equal("", 0, "0", 1), 0);
}
END_TEST

START_TEST(test_versions)
{
	ck_assert_int_eq(meta_version_modern("2026-07-28", 10), 1);
	ck_assert_int_eq(meta_version_modern("2027-01-01", 10), 1);
	ck_assert_int_eq(meta_version_modern("2025-11-25", 10), 0);
	ck_assert_int_eq(meta_version_modern("2026-07-2x", 10), 0);
	ck_assert_int_eq(meta_version_modern("2026-07-28 ", 11), 0);
	ck_assert_int_eq(meta_log_level("emergency", 9), 7);
	ck_assert_int_eq(meta_log_level("Debug", 5), -1);
}
END_TEST

/* Tools whose x-mcp-header marks break the rules are refused, with why. */
static int
tool_ok(const char *schema, char *why)
{
	char		 text2[2048];
	json_t		*tool;
	int		 r;

	snprintf(text2, sizeof text2, "{\"name\":\"t\",\"inputSchema\":%s}",
	    schema);
	tool = json_loads(text2, JSON_ALLOW_NUL, NULL);
	ck_assert_ptr_nonnull(tool);
	why[0] = '\0';
	r = meta_tool_headers_valid(tool, why, 256);
	json_decref(tool);
	return (r);
}

START_TEST(test_tool_headers)
{
	char	why[256];

	ck_assert_int_eq(tool_ok("{\"type\":\"object\"}", why), 1);
	ck_assert_int_eq(tool_ok("{\"type\":\"object\",\"properties\":{"
	    "\"region\":{\"type\":\"string\",\"x-mcp-header\":\"X.Region\"},"
	    "\"n\":{\"type\":\"integer\",\"x-mcp-header\":\"N!#$%&'*+^`|~\"},"
	    "\"o\":{\"type\":\"object\",\"properties\":{\"b\":{\"type\":"
	    "\"boolean\",\"x-mcp-header\":\"Deep\"}}}}}", why), 1);
	/* Not a token, empty, or not a string. */
	ck_assert_int_eq(tool_ok("{\"properties\":{\"a\":{\"type\":\"string\","
	    "\"x-mcp-header\":\"Bad Name\"}}}", why), 0);
	ck_assert_ptr_nonnull(strstr(why, "token"));
	ck_assert_int_eq(tool_ok("{\"properties\":{\"a\":{\"type\":\"string\","
	    "\"x-mcp-header\":\"\"}}}", why), 0);
	ck_assert_int_eq(tool_ok("{\"properties\":{\"a\":{\"type\":\"string\","
	    "\"x-mcp-header\":\"A\\r\\nB\"}}}", why), 0);
	ck_assert_int_eq(tool_ok("{\"properties\":{\"a\":{\"type\":\"string\","
	    "\"x-mcp-header\":7}}}", why), 0);
	/* An escaped NUL does not cut a name or a type short. */
	ck_assert_int_eq(tool_ok("{\"properties\":{\"a\":{\"type\":\"string\","
	    "\"x-mcp-header\":\"Region\\u0000X\"}}}", why), 0);
	ck_assert_int_eq(tool_ok("{\"properties\":{\"a\":{\"type\":"
	    "\"string\\u0000x\",\"x-mcp-header\":\"A\"}}}", why), 0);
	/* Twice, case aside. */
	ck_assert_int_eq(tool_ok("{\"properties\":{\"a\":{\"type\":\"string\","
	    "\"x-mcp-header\":\"Region\"},\"b\":{\"type\":\"string\","
	    "\"x-mcp-header\":\"REGION\"}}}", why), 0);
	ck_assert_ptr_nonnull(strstr(why, "twice"));
	/* Types: number, object, none. */
	ck_assert_int_eq(tool_ok("{\"properties\":{\"a\":{\"type\":\"number\","
	    "\"x-mcp-header\":\"A\"}}}", why), 0);
	ck_assert_int_eq(tool_ok("{\"properties\":{\"a\":{"
	    "\"x-mcp-header\":\"A\"}}}", why), 0);
	/* Not statically reachable: items, anyOf, $defs, the root itself. */
	ck_assert_int_eq(tool_ok("{\"properties\":{\"a\":{\"type\":\"array\","
	    "\"items\":{\"type\":\"string\",\"x-mcp-header\":\"A\"}}}}",
	    why), 0);
	ck_assert_ptr_nonnull(strstr(why, "reached"));
	ck_assert_int_eq(tool_ok("{\"properties\":{\"a\":{\"anyOf\":[{\"type\":"
	    "\"string\",\"x-mcp-header\":\"A\"}]}}}", why), 0);
	ck_assert_int_eq(tool_ok("{\"$defs\":{\"x\":{\"type\":\"string\","
	    "\"x-mcp-header\":\"A\"}}}", why), 0);
	ck_assert_int_eq(tool_ok("{\"type\":\"string\",\"x-mcp-header\":\"A\"}",
	    why), 0);
}
END_TEST

static Suite *
meta_suite(void)
{
	Suite	*s = suite_create("meta");
	TCase	*tc = tcase_create("envelope");

	tcase_add_test(tc, test_claim);
	tcase_add_test(tc, test_parse);
	tcase_add_test(tc, test_check_order);
	tcase_add_test(tc, test_check_name);
	tcase_add_test(tc, test_sentinel);
	tcase_add_test(tc, test_drop_members);
	tcase_add_test(tc, test_params);
	tcase_add_test(tc, test_versions);
	tcase_add_test(tc, test_tool_headers);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr = srunner_create(meta_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
