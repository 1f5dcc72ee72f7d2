/* SPDX-License-Identifier: ISC */
/*
 * Who is asking (supervisor/auth.c, mcp_access.c, mcp_http.c, endpoints.c,
 * health.c): bearer tokens and what each admits to, sessions that serve
 * only the token that made them, the Host and Origin rules against DNS
 * rebinding, and the metrics right, on the main listener and the metrics
 * one.
 */
#include "config.h"

#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "supervisor.h"

#include "sup_check.h"

#define TOKEN_ANY	"token-any-0123456789ab"
#define TOKEN_MET	"token-met-0123456789ab"
#define TOKEN_C1	"token-c1-0123456789abc"
#define TOKEN_C2	"token-c2-0123456789abc"

#define CONF_SERVER \
    "servers = ( { name = \"a\"; transport = \"stdio\";\n" \
    "    command = [ \"true\" ]; } );\n"

static const char conf_tokens[] = SUP_BASE
    "auth_tokens = [ \"" TOKEN_ANY "\" ];\n"
    "metrics_tokens = [ \"" TOKEN_MET "\" ];\n"
    "clients = (\n"
    "  { name = \"c1\"; token = \"" TOKEN_C1 "\"; metrics = true; },\n"
    "  { name = \"c2\"; token = \"" TOKEN_C2 "\"; }\n"
    ");\n"
    CONF_SERVER;

static const char conf_metrics_listen[] = SUP_BASE
    "metrics_tokens = [ \"" TOKEN_MET "\" ];\n"
    "metrics_listen = \"127.0.0.1:0\";\n"
    "clients = (\n"
    "  { name = \"c2\"; token = \"" TOKEN_C2 "\"; }\n"
    ");\n"
    CONF_SERVER;

static const char conf_open[] = SUP_BASE CONF_SERVER;

static const char conf_allowed[] = SUP_BASE
    "allowed_hosts = [ \"gateway.example\", \"10.1.2.3:8931\" ];\n"
    "allowed_origins = [ \"https://app.example\" ];\n"
    CONF_SERVER;

static const char init_body[] = "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":"
    "\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\","
    "\"capabilities\":{},\"clientInfo\":{\"name\":\"c\",\"version\":\"1\"}}}";

static void
setup_tokens(void)
{
	sup_start(conf_tokens);
}

static void
setup_metrics_listen(void)
{
	sup_start(conf_metrics_listen);
}

static void
setup_open(void)
{
	sup_start(conf_open);
}

static void
setup_allowed(void)
{
	sup_start(conf_allowed);
}

static void
teardown(void)
{
	sup_stop();
}

/* POST an initialize with header lines: the status. */
static int
init_with(const char *headers)
{
	char	h[1024];

	snprintf(h, sizeof h, "Content-Type: application/json\r\n"
	    "Accept: application/json, text/event-stream\r\n%s", headers);
	return (sup_http("POST", "/mcp", h, init_body)->status);
}

/* GET a path with header lines. */
static struct sup_resp *
get(const char *path, const char *headers)
{
	return (sup_http("GET", path, headers, NULL));
}

START_TEST(test_token_required)
{
	struct sup_resp	*r;

	r = sup_http("POST", "/mcp", "Content-Type: application/json\r\n"
	    "Accept: application/json, text/event-stream\r\n", init_body);
	ck_assert_int_eq(r->status, 401);
	ck_assert_ptr_nonnull(sup_header(r, "WWW-Authenticate"));
	ck_assert_int_eq(init_with("Authorization: Bearer "
	    "token-any-0123456789aX\r\n"), 401);
	/* Only a bearer token, only all of it, and only it. */
	ck_assert_int_eq(init_with("Authorization: Basic  " TOKEN_ANY
	    "\r\n"), 401);
	ck_assert_int_eq(init_with("Authorization: Bearer token-any-01234"
	    "\r\n"), 401);
	ck_assert_int_eq(init_with("Authorization: Bearer " TOKEN_ANY
	    TOKEN_ANY "\r\n"), 401);
	ck_assert_int_eq(init_with("Authorization: Bearer " TOKEN_ANY "x"
	    "\r\n"), 401);
	ck_assert_int_eq(init_with("Authorization: Bearer " TOKEN_ANY "\r\n"),
	    200);
	ck_assert_int_eq(init_with("Authorization: Bearer " TOKEN_C2 "\r\n"),
	    200);
	/* The WebSocket endpoint and the legacy one are under it too. */
	ck_assert_int_eq(get("/ws", "Upgrade: websocket\r\n"
	    "Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
	    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
	    "Sec-WebSocket-Protocol: mcp\r\n")->status, 401);
	ck_assert_int_eq(get("/sse", "Accept: text/event-stream\r\n")->status,
	    401);
}
END_TEST

/* A token of metrics_tokens admits to the metrics only. */
START_TEST(test_metrics_token_not_mcp)
{
	struct sup_resp	*r;

	ck_assert_int_eq(init_with("Authorization: Bearer " TOKEN_MET
	    "\r\n"), 403);
	r = get("/metrics", "Authorization: Bearer " TOKEN_MET "\r\n");
	ck_assert_int_eq(r->status, 200);
}
END_TEST

/* A session serves the token that made it, and no other. */
START_TEST(test_session_bound)
{
	struct sup_client	*c1 = sup_session(TOKEN_C1, NULL);
	struct sup_client	*c2 = sup_client(TOKEN_C2);
	struct sup_client	*any = sup_client(TOKEN_ANY);
	json_t			*a;

	memcpy(c2->sid, c1->sid, sizeof c2->sid);
	memcpy(c2->version, c1->version, sizeof c2->version);
	memcpy(any->sid, c1->sid, sizeof any->sid);
	ck_assert_int_eq(sup_post(c2, "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"ping\"}")->status, 404);
	ck_assert_int_eq(sup_post(any, "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"ping\"}")->status, 404);
	ck_assert_int_eq(sup_get(c2, NULL)->status, 404);
	ck_assert_int_eq(sup_get(c2, "0-0")->status, 404);
	ck_assert_int_eq(sup_delete(c2)->status, 404);
	/* Its own token still has it. */
	a = sup_rpc(c1, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");
	ck_assert_result(a);
	ck_assert_int_eq(sup_delete(c1)->status, 200);
}
END_TEST

/*
 * An initialize with a token whose body is half sent when a reload to text
 * comes, then the rest: its response.
 */
static struct sup_resp *
init_reload_mid_body(const char *token, const char *text)
{
	struct sup_conn		*c = sup_connect();
	struct sup_resp		*r;
	char			 head[512];
	size_t			 half = sizeof init_body / 2;

	snprintf(head, sizeof head, "POST /mcp HTTP/1.1\r\n"
	    "Host: 127.0.0.1:8931\r\nAuthorization: Bearer %s\r\n"
	    "Content-Type: application/json\r\n"
	    "Accept: application/json, text/event-stream\r\n"
	    "Content-Length: %zu\r\n\r\n", token, sizeof init_body - 1);
	sup_write(c, head, strlen(head));
	sup_write(c, init_body, half);
	json_decref(sup_reload(text));
	sup_write(c, init_body + half, sizeof init_body - 1 - half);
	ck_assert_ptr_nonnull(r = sup_response(c, 0));
	return (r);
}

/*
 * A reload while a request's body comes frees the table its token was
 * found in: the session it makes names the client as configured now.
 */
START_TEST(test_reload_mid_body)
{
	struct session	*s;

	ck_assert_int_eq(init_reload_mid_body(TOKEN_C1, SUP_BASE
	    "auth_tokens = [ \"" TOKEN_ANY "\" ];\n"
	    "clients = (\n"
	    "  { name = \"renamed\"; token = \"" TOKEN_C1 "\"; }\n"
	    ");\n"
	    CONF_SERVER)->status, 200);
	ck_assert_ptr_nonnull(s = session_first());
	ck_assert_str_eq(s->client_name, "renamed");
}
END_TEST

/*
 * A reload that removes a token while a request of it comes: the request
 * is refused (401), not taken for an unnamed client's, which may do all.
 */
START_TEST(test_reload_removes_mid_body)
{
	ck_assert_int_eq(init_reload_mid_body(TOKEN_C2, SUP_BASE
	    "auth_tokens = [ \"" TOKEN_ANY "\" ];\n" CONF_SERVER)->status,
	    401);
	ck_assert_uint_eq(session_count(), 0);
}
END_TEST

/*
 * A reload that gives a token to another client: its open session is not
 * that client's, and answers 404 (its client starts another, which is).
 */
START_TEST(test_reload_renames_client)
{
	struct sup_client	*c1 = sup_session(TOKEN_C1, NULL);
	struct session		*s;

	ck_assert_ptr_nonnull(s = session_first());
	ck_assert_str_eq(s->client_name, "c1");
	json_decref(sup_reload(SUP_BASE
	    "auth_tokens = [ \"" TOKEN_ANY "\" ];\n"
	    "clients = (\n"
	    "  { name = \"renamed\"; token = \"" TOKEN_C1 "\"; }\n"
	    ");\n"
	    CONF_SERVER));
	ck_assert_int_eq(sup_post(c1, "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"ping\"}")->status, 404);
	ck_assert_str_eq(s->client_name, "c1");
	c1 = sup_session(TOKEN_C1, NULL);
	ck_assert_str_eq(session_find(c1->sid, strlen(c1->sid))->client_name,
	    "renamed");
}
END_TEST

/* The same for a legacy HTTP+SSE session's POSTs. */
START_TEST(test_legacy_bound)
{
	struct sup_resp	*r;
	const char	*data, *q;
	char		 path[256], h[256];

	r = get("/sse", "Authorization: Bearer " TOKEN_C1 "\r\n"
	    "Accept: text/event-stream\r\n");
	ck_assert_int_eq(r->status, 200);
	ck_assert_uint_ge(r->nevents, 1);
	data = r->events[0].data;
	ck_assert_ptr_nonnull(q = strstr(data, "/messages?sessionId="));
	snprintf(path, sizeof path, "%s", q);
	snprintf(h, sizeof h, "Authorization: Bearer %s\r\n"
	    "Content-Type: application/json\r\n", TOKEN_C2);
	ck_assert_int_eq(sup_http("POST", path, h, init_body)->status, 404);
	snprintf(h, sizeof h, "Authorization: Bearer %s\r\n"
	    "Content-Type: application/json\r\n", TOKEN_C1);
	ck_assert_int_eq(sup_http("POST", path, h, init_body)->status, 202);
	ck_assert_result(sup_answer(r));
}
END_TEST

START_TEST(test_metrics_right)
{
	ck_assert_int_eq(get("/metrics", NULL)->status, 401);
	ck_assert_int_eq(get("/metrics", "Authorization: Bearer " TOKEN_C2
	    "\r\n")->status, 403);
	ck_assert_int_eq(get("/metrics", "Authorization: Bearer " TOKEN_C1
	    "\r\n")->status, 200);
	ck_assert_int_eq(get("/metrics", "Authorization: Bearer " TOKEN_ANY
	    "\r\n")->status, 200);
	/* The health checks need no token. */
	ck_assert_int_eq(get("/healthz", NULL)->status, 200);
	ck_assert_int_eq(get("/readyz", NULL)->status, 200);
}
END_TEST

/* The metrics listener has the same rules, and serves nothing else. */
START_TEST(test_metrics_listener)
{
	const char	*addr = sup_listen_metrics();
	char		 host[160];

	snprintf(host, sizeof host, "Host: %s\r\n", addr);
	ck_assert_int_eq(sup_request(sup_connect_tcp(addr), "GET", "/metrics",
	    host, NULL)->status, 401);
	snprintf(host, sizeof host, "Host: %s\r\nAuthorization: Bearer "
	    TOKEN_C2 "\r\n", addr);
	ck_assert_int_eq(sup_request(sup_connect_tcp(addr), "GET", "/metrics",
	    host, NULL)->status, 403);
	snprintf(host, sizeof host, "Host: %s\r\nAuthorization: Bearer "
	    TOKEN_MET "\r\n", addr);
	ck_assert_int_eq(sup_request(sup_connect_tcp(addr), "GET", "/metrics",
	    host, NULL)->status, 200);
	ck_assert_int_eq(sup_request(sup_connect_tcp(addr), "POST", "/mcp",
	    host, init_body)->status, 404);
	snprintf(host, sizeof host, "Host: evil.example\r\nAuthorization: "
	    "Bearer " TOKEN_MET "\r\n");
	ck_assert_int_eq(sup_request(sup_connect_tcp(addr), "GET", "/metrics",
	    host, NULL)->status, 403);
	snprintf(host, sizeof host, "Host: %s\r\n", addr);
	ck_assert_int_eq(sup_request(sup_connect_tcp(addr), "GET", "/healthz",
	    host, NULL)->status, 200);
	/* The main listener no longer serves the metrics. */
	ck_assert_int_eq(get("/metrics", "Authorization: Bearer " TOKEN_MET
	    "\r\n")->status, 404);
}
END_TEST

/* Why the gateway is not ready is said only to who may read metrics. */
START_TEST(test_readyz_reasons)
{
	struct sup_resp	*r;

	sup_manual("z");
	json_decref(sup_reload(SUP_BASE
	    "auth_tokens = [ \"" TOKEN_ANY "\" ];\n"
	    "metrics_tokens = [ \"" TOKEN_MET "\" ];\n"
	    "clients = (\n"
	    "  { name = \"c1\"; token = \"" TOKEN_C1 "\"; metrics = true; },\n"
	    "  { name = \"c2\"; token = \"" TOKEN_C2 "\"; }\n"
	    ");\n"
	    "servers = ( { name = \"a\"; transport = \"stdio\";\n"
	    "    command = [ \"true\" ]; },\n"
	    "  { name = \"z\"; transport = \"stdio\"; command = [ \"false\" ];"
	    " } );\n"));
	r = get("/readyz", NULL);
	ck_assert_int_eq(r->status, 503);
	ck_assert_str_eq(sup_body(r), "not ready\n");
	r = get("/readyz", "Authorization: Bearer " TOKEN_C2 "\r\n");
	ck_assert_str_eq(sup_body(r), "not ready\n");
	r = get("/readyz", "Authorization: Bearer " TOKEN_MET "\r\n");
	ck_assert_ptr_nonnull(strstr(sup_body(r), "upstream z"));
	r = get("/readyz", "Authorization: Bearer " TOKEN_C1 "\r\n");
	ck_assert_ptr_nonnull(strstr(sup_body(r), "upstream z"));
}
END_TEST

/* The control socket is its owner's and group's only. */
START_TEST(test_control_socket)
{
	char		dir[] = "/tmp/sup_control.XXXXXX", path[64];
	struct stat	sb;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/ctl.sock", dir);
	ck_assert_int_eq(control_listen(path), 0);
	ck_assert_int_eq(stat(path, &sb), 0);
	ck_assert_uint_eq(sb.st_mode & 0777, 0660);
	control_close();
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* Without any token, MCP and the metrics are open. */
START_TEST(test_open)
{
	ck_assert_int_eq(init_with(""), 200);
	ck_assert_int_eq(get("/metrics", NULL)->status, 200);
	ck_assert_int_eq(get("/readyz", NULL)->status, 200);
}
END_TEST

/* On loopback, Host must be a loopback name; an Origin one too. */
START_TEST(test_host_origin_loopback)
{
	static const char *const refused[] = {
		"Host: evil.example\r\n",
		"Host: localhost.evil.example\r\n",
		"Host: 127.0.0.2\r\n",
		"Origin: http://evil.example\r\n",
		"Origin: http://localhost.evil.example:8931\r\n",
		"Origin: null\r\n",
		"Origin: file://localhost\r\n",
		"Origin: http://localhost/x\r\n",
	};
	struct sup_conn		*c;
	static const char *const admitted[] = {
		"Host: localhost:8931\r\n",
		"Host: [::1]:8931\r\n",
		"Origin: http://localhost:3000\r\n",
		"Origin: https://127.0.0.1\r\n",
	};
	size_t	i;

	for (i = 0; i < sizeof refused / sizeof refused[0]; i++) {
		ck_assert_msg(init_with(refused[i]) == 403, "%s", refused[i]);
		ck_assert_msg(get("/healthz", refused[i])->status == 403, "%s",
		    refused[i]);
		ck_assert_msg(get("/metrics", refused[i])->status == 403, "%s",
		    refused[i]);
	}
	ck_assert_ptr_nonnull(strstr(sup_body(sup_http("POST", "/mcp",
	    "Origin: http://localhost/x\r\n", "{}")), "(malformed)"));
	ck_assert_int_eq(init_with("Host: a b\r\n"), 400);
	/* No Host at all (HTTP/1.1 requires one). */
	c = sup_connect();
	sup_write(c, "GET /healthz HTTP/1.1\r\n\r\n", 26);
	ck_assert_ptr_nonnull(sup_response(c, 0));
	ck_assert_int_eq(sup_response(c, 0)->status, 400);
	ck_assert_int_eq(init_with("Host: \r\n"), 400);
	for (i = 0; i < sizeof admitted / sizeof admitted[0]; i++)
		ck_assert_msg(init_with(admitted[i]) == 200, "%s",
		    admitted[i]);
}
END_TEST

/* Beyond loopback, without allowed_hosts, any Host is taken. */
START_TEST(test_host_beyond_loopback)
{
	listen_loopback = 0;
	ck_assert_int_eq(init_with("Host: gateway.example\r\n"), 200);
	ck_assert_int_eq(init_with("Origin: http://evil.example\r\n"), 403);
	listen_loopback = 1;
	ck_assert_int_eq(init_with("Host: gateway.example\r\n"), 403);
}
END_TEST

/* allowed_hosts and allowed_origins replace the loopback rules. */
START_TEST(test_host_origin_allowed)
{
	ck_assert_int_eq(init_with("Host: gateway.example\r\n"), 200);
	ck_assert_int_eq(init_with("Host: GATEWAY.example:443\r\n"), 200);
	ck_assert_int_eq(init_with("Host: 10.1.2.3:8931\r\n"), 200);
	ck_assert_int_eq(init_with("Host: 10.1.2.3:8932\r\n"), 403);
	ck_assert_int_eq(init_with("Host: localhost\r\n"), 403);
	ck_assert_int_eq(init_with("Host: gateway.example\r\n"
	    "Origin: https://app.example\r\n"), 200);
	ck_assert_int_eq(init_with("Host: gateway.example\r\n"
	    "Origin: http://app.example\r\n"), 403);
	ck_assert_int_eq(init_with("Host: gateway.example\r\n"
	    "Origin: http://localhost\r\n"), 403);
	ck_assert_int_eq(init_with("Host: gateway.example\r\n"
	    "Origin: https://app.example.evil\r\n"), 403);
}
END_TEST

static Suite *
auth_suite(void)
{
	Suite	*s = suite_create("auth");
	TCase	*tc;

	tc = tcase_create("tokens");
	tcase_add_checked_fixture(tc, setup_tokens, teardown);
	tcase_add_test(tc, test_token_required);
	tcase_add_test(tc, test_metrics_token_not_mcp);
	tcase_add_test(tc, test_session_bound);
	tcase_add_test(tc, test_reload_mid_body);
	tcase_add_test(tc, test_reload_renames_client);
	tcase_add_test(tc, test_reload_removes_mid_body);
	tcase_add_test(tc, test_legacy_bound);
	tcase_add_test(tc, test_metrics_right);
	tcase_add_test(tc, test_readyz_reasons);
	suite_add_tcase(s, tc);

	tc = tcase_create("metrics_listen");
	tcase_add_checked_fixture(tc, setup_metrics_listen, teardown);
	tcase_add_test(tc, test_metrics_listener);
	suite_add_tcase(s, tc);

	tc = tcase_create("open");
	tcase_add_checked_fixture(tc, setup_open, teardown);
	tcase_add_test(tc, test_open);
	tcase_add_test(tc, test_control_socket);
	tcase_add_test(tc, test_host_origin_loopback);
	tcase_add_test(tc, test_host_beyond_loopback);
	suite_add_tcase(s, tc);

	tc = tcase_create("allowed");
	tcase_add_checked_fixture(tc, setup_allowed, teardown);
	tcase_add_test(tc, test_host_origin_allowed);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	return (sup_check_main(auth_suite()));
}
