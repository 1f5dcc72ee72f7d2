/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for common/conf.c: parsing with defaults and inheritance,
 * sizes, "file:line: message" errors, the normalised printout (which must
 * parse back to the same configuration) and the per-upstream JSON form.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <jansson.h>

#include "conf.h"

/* Parse text that must be valid. */
static struct conf *
parse_ok(const char *text)
{
	struct conf	*conf;
	char		 err[1024];

	err[0] = '\0';
	conf = conf_parse(text, "t.conf", err, sizeof err);
	ck_assert_msg(conf != NULL, "parse failed: %s\n%s", err, text);
	return (conf);
}

/* Parse text that must fail with exactly this error. */
static void
parse_err(const char *text, const char *want)
{
	struct conf	*conf;
	char		 err[1024];

	strcpy(err, "unset");
	conf = conf_parse(text, "t.conf", err, sizeof err);
	ck_assert_msg(conf == NULL, "accepted:\n%s", text);
	ck_assert_str_eq(err, want);
}

/* Is a string vector exactly the given strings? */
static void
strv_is(char **v, const char *const *want)
{
	size_t	i;

	ck_assert_ptr_nonnull(v);
	for (i = 0; want[i] != NULL; i++) {
		ck_assert_ptr_nonnull(v[i]);
		ck_assert_str_eq(v[i], want[i]);
	}
	ck_assert_ptr_null(v[i]);
}

START_TEST(test_defaults)
{
	struct conf		*conf;
	struct server_conf	*s;
	static const char *const cmd[] = { "mcp-demo-server", NULL };

	conf = parse_ok("servers = ( { name = \"demo\"; command = "
	    "[ \"mcp-demo-server\" ]; } );");
	ck_assert_str_eq(conf->file, "t.conf");
	ck_assert_str_eq(conf->listen, CONF_DEFAULT_LISTEN);
	ck_assert_str_eq(conf->control, CONF_DEFAULT_CONTROL);
	ck_assert_ptr_null(conf->allowed_origins);
	ck_assert_ptr_null(conf->allowed_hosts);
	ck_assert_uint_eq(conf->max_message, 32 * 1024 * 1024);
	ck_assert_uint_eq(conf->max_body, 8 * 1024 * 1024);
	ck_assert_uint_eq(conf->max_sessions, 10000);
	ck_assert_uint_eq(conf->max_pending, 256);
	ck_assert_uint_eq(conf->session_timeout, 1800);
	ck_assert_uint_eq(conf->request_timeout, 300);
	ck_assert_uint_eq(conf->server_request_timeout, 300);
	ck_assert_uint_eq(conf->nservers, 1);
	s = &conf->servers[0];
	ck_assert_str_eq(s->name, "demo");
	ck_assert_int_eq(s->transport, TRANSPORT_STDIO);
	strv_is(s->command, cmd);
	ck_assert_ptr_null(s->env);
	ck_assert_ptr_null(s->cwd);
	ck_assert_ptr_null(s->url);
	ck_assert_str_eq(s->prefix, "demo__");
	ck_assert_int_eq(s->isolation, ISOLATION_SHARED);
	ck_assert_uint_eq(s->request_timeout, 300);
	ck_assert_uint_eq(s->server_request_timeout, 300);
	ck_assert_uint_eq(s->init_timeout, 60);
	ck_assert_uint_eq(s->max_instances, 64);
	ck_assert_uint_eq(s->max_message, 32 * 1024 * 1024);
	ck_assert_int_eq(s->era, ERA_AUTO);
	ck_assert_int_eq(s->at.line, 1);
	ck_assert_ptr_null(conf->request_state_key);
	ck_assert_ptr_nonnull(conf->instance);	/* the host name's first label */
	ck_assert_uint_eq(conf->request_state_ttl, 300);
	ck_assert_uint_eq(conf->cache_ttl, 60);
	/* The calling client, else a decline: a shared upstream is told of
	 * sampling and elicitation, an instance of one client only of what
	 * that client declared. */
	ck_assert_uint_eq(s->nsampling, 2);
	ck_assert_int_eq(s->sampling[0], STRATEGY_CLIENT);
	ck_assert_int_eq(s->sampling[1], STRATEGY_DECLINE);
	ck_assert_uint_eq(s->nelicitation, 2);
	ck_assert_int_eq(s->elicitation[0], STRATEGY_CLIENT);
	ck_assert_int_eq(s->elicitation[1], STRATEGY_DECLINE);
	ck_assert(conf_strategies_always(s->sampling, s->nsampling, 1));
	ck_assert(conf_strategies_always(s->elicitation, s->nelicitation, 1));
	ck_assert(!conf_strategies_always(s->sampling, s->nsampling, 0));
	ck_assert(!conf_strategies_always(s->elicitation, s->nelicitation, 0));
	conf_free(conf);

	/* An empty file is a valid configuration with no upstreams. */
	conf = parse_ok("");
	ck_assert_uint_eq(conf->nservers, 0);
	ck_assert_str_eq(conf->listen, CONF_DEFAULT_LISTEN);
	conf_free(conf);
	conf = parse_ok("# nothing\nservers = ( );\n");
	ck_assert_uint_eq(conf->nservers, 0);
	conf_free(conf);
}
END_TEST

START_TEST(test_full)
{
	struct conf		*conf;
	struct server_conf	*s;
	static const char *const cmd[] = { "npx", "-y", "server fs", "/tmp",
				    NULL };
	static const char *const env[] = { "NODE_ENV=production",
				    "EMPTY=", "A_1=x=y", NULL };
	static const char *const origins[] = { "http://localhost:3000",
				    NULL };
	static const char *const hosts[] = { "localhost", "127.0.0.1", NULL };

	conf = parse_ok(
	    "listen = \"0.0.0.0:9000\";\n"
	    "control = \"/tmp/ctl.sock\";\n"
	    "allowed_origins = [ \"http://localhost:3000\" ];\n"
	    "allowed_hosts = ( \"localhost\", \"127.0.0.1\" );\n"
	    "max_message = \"16M\";\n"
	    "max_body = \"1k\";\n"
	    "max_sessions = 5;\n"
	    "max_pending = 7;\n"
	    "session_timeout = 60;\n"
	    "request_timeout = 30;\n"
	    "server_request_timeout = 40;\n"
	    "servers = (\n"
	    "  { name = \"fs\"; transport = \"stdio\";\n"
	    "    command = [ \"npx\", \"-y\", \"server fs\", \"/tmp\" ];\n"
	    "    env = { NODE_ENV = \"production\"; EMPTY = \"\"; "
	    "A_1 = \"x=y\"; };\n"
	    "    cwd = \"/tmp\"; isolation = \"per-session\"; },\n"
	    "  { name = \"search\"; transport = \"http\";\n"
	    "    url = \"https://example.com/mcp\"; prefix = \"\";\n"
	    "    request_timeout = 5; init_timeout = 9;\n"
	    "    server_request_timeout = 6; max_instances = 3;\n"
	    "    max_message = 65536; },\n"
	    "  { name = \"ide\"; transport = \"ws\"; url = \"ws://h:1/\";\n"
	    "    prefix = \"i.d-e_\"; max_message = \"1M\"; },\n"
	    "  { name = \"old\"; transport = \"sse\";\n"
	    "    url = \"http://h/sse\"; }\n"
	    ");\n");
	ck_assert_str_eq(conf->listen, "0.0.0.0:9000");
	ck_assert_str_eq(conf->control, "/tmp/ctl.sock");
	strv_is(conf->allowed_origins, origins);
	strv_is(conf->allowed_hosts, hosts);
	ck_assert_uint_eq(conf->max_message, 16 * 1024 * 1024);
	ck_assert_uint_eq(conf->max_body, 1024);
	ck_assert_uint_eq(conf->max_sessions, 5);
	ck_assert_uint_eq(conf->max_pending, 7);
	ck_assert_uint_eq(conf->session_timeout, 60);
	ck_assert_uint_eq(conf->request_timeout, 30);
	ck_assert_uint_eq(conf->server_request_timeout, 40);
	ck_assert_uint_eq(conf->nservers, 4);

	s = &conf->servers[0];
	ck_assert_str_eq(s->name, "fs");
	strv_is(s->command, cmd);
	strv_is(s->env, env);
	ck_assert_str_eq(s->cwd, "/tmp");
	ck_assert_int_eq(s->isolation, ISOLATION_PER_SESSION);
	ck_assert_str_eq(s->prefix, "fs__");
	/* Inherited from the globals. */
	ck_assert_uint_eq(s->request_timeout, 30);
	ck_assert_uint_eq(s->server_request_timeout, 40);
	ck_assert_uint_eq(s->max_instances, 64);
	ck_assert_uint_eq(s->max_message, 16 * 1024 * 1024);
	ck_assert_int_eq(s->at.line, 13);

	s = &conf->servers[1];
	ck_assert_int_eq(s->transport, TRANSPORT_HTTP);
	ck_assert_str_eq(s->url, "https://example.com/mcp");
	ck_assert_str_eq(s->prefix, "");
	ck_assert_uint_eq(s->request_timeout, 5);
	ck_assert_uint_eq(s->init_timeout, 9);
	ck_assert_uint_eq(s->server_request_timeout, 6);
	ck_assert_uint_eq(s->max_instances, 3);
	ck_assert_uint_eq(s->max_message, 65536);
	ck_assert_ptr_null(s->command);
	ck_assert_int_eq(s->at.line, 17);

	s = &conf->servers[2];
	ck_assert_int_eq(s->transport, TRANSPORT_WS);
	ck_assert_str_eq(s->prefix, "i.d-e_");
	ck_assert_uint_eq(s->max_message, 1024 * 1024);
	ck_assert_uint_eq(s->request_timeout, 30);

	s = &conf->servers[3];
	ck_assert_int_eq(s->transport, TRANSPORT_SSE);
	ck_assert_str_eq(s->prefix, "old__");
	conf_free(conf);
}
END_TEST

START_TEST(test_globals_after_servers)
{
	/* Server defaults come from the globals wherever they are. */
	struct conf	*conf;

	conf = parse_ok("servers = ( { name = \"a\"; command = [ \"x\" ]; } );"
	    "\n"
	    "request_timeout = 12;\nmax_message = \"8k\";\n"
	    "server_request_timeout = 13;\n");
	ck_assert_uint_eq(conf->servers[0].request_timeout, 12);
	ck_assert_uint_eq(conf->servers[0].server_request_timeout, 13);
	ck_assert_uint_eq(conf->servers[0].max_message, 8192);
	conf_free(conf);
}
END_TEST

/* Parse max_message = <value> and return it, or 0 on error. */
static size_t
size_of(const char *value, char *err, size_t errlen)
{
	char		 text[256];
	struct conf	*conf;
	size_t		 v;

	snprintf(text, sizeof text, "max_message = %s;\n", value);
	conf = conf_parse(text, "t.conf", err, errlen);
	if (conf == NULL)
		return (0);
	v = conf->max_message;
	conf_free(conf);
	return (v);
}

START_TEST(test_sizes)
{
	char	err[512];

	ck_assert_uint_eq(size_of("\"16M\"", err, sizeof err), 16777216);
	ck_assert_uint_eq(size_of("\"16m\"", err, sizeof err), 16777216);
	ck_assert_uint_eq(size_of("\"4k\"", err, sizeof err), 4096);
	ck_assert_uint_eq(size_of("\"5K\"", err, sizeof err), 5120);
	ck_assert_uint_eq(size_of("\"1G\"", err, sizeof err), 1073741824);
	ck_assert_uint_eq(size_of("\"1g\"", err, sizeof err), 1073741824);
	ck_assert_uint_eq(size_of("\"4096\"", err, sizeof err), 4096);
	ck_assert_uint_eq(size_of("4096", err, sizeof err), 4096);
	ck_assert_uint_eq(size_of("1073741824", err, sizeof err), 1073741824);
	ck_assert_uint_eq(size_of("0x1000", err, sizeof err), 4096);
	ck_assert_uint_eq(size_of("1048576L", err, sizeof err), 1048576);

	/* Bounds. */
	ck_assert_uint_eq(size_of("\"1k\"", err, sizeof err), 0);
	ck_assert_str_eq(err, "t.conf:1: max_message must be between 4096 "
	    "and 1073741824 bytes");
	ck_assert_uint_eq(size_of("4095", err, sizeof err), 0);
	ck_assert_str_eq(err, "t.conf:1: max_message must be between 4096 "
	    "and 1073741824");
	ck_assert_uint_eq(size_of("\"2G\"", err, sizeof err), 0);
	ck_assert_uint_eq(size_of("1073741825", err, sizeof err), 0);
	ck_assert_uint_eq(size_of("10000000000L", err, sizeof err), 0);
	ck_assert_uint_eq(size_of("-4096", err, sizeof err), 0);

	/* Bad sizes. */
	ck_assert_uint_eq(size_of("\"16 M\"", err, sizeof err), 0);
	ck_assert_str_eq(err, "t.conf:1: max_message: bad size \"16 M\" "
	    "(bytes, or a number with k, M or G)");
	ck_assert_uint_eq(size_of("\"M\"", err, sizeof err), 0);
	ck_assert_uint_eq(size_of("\"\"", err, sizeof err), 0);
	ck_assert_uint_eq(size_of("\"16MB\"", err, sizeof err), 0);
	ck_assert_uint_eq(size_of("\"1.5M\"", err, sizeof err), 0);
	ck_assert_uint_eq(size_of("\"-1M\"", err, sizeof err), 0);
	ck_assert_uint_eq(size_of("\"16T\"", err, sizeof err), 0);
	ck_assert_uint_eq(size_of("\"99999999999999999999999\"", err,
	    sizeof err), 0);
	ck_assert_uint_eq(size_of("16.0", err, sizeof err), 0);
	ck_assert_str_eq(err, "t.conf:1: max_message must be an integer");
	ck_assert_uint_eq(size_of("true", err, sizeof err), 0);

	/* A suffix must not wrap a huge number around into range. */
	ck_assert_uint_eq(size_of("\"17179869185G\"", err, sizeof err), 0);
	ck_assert_uint_eq(size_of("\"17592186044417M\"", err, sizeof err), 0);
	ck_assert_uint_eq(size_of("\"18014398509481985k\"", err, sizeof err),
	    0);
	ck_assert_str_eq(err, "t.conf:1: max_message must be between 4096 "
	    "and 1073741824 bytes");
}
END_TEST

START_TEST(test_ints)
{
	struct conf	*conf;

	conf = parse_ok("max_sessions = 1;\nmax_pending = 100000;\n"
	    "session_timeout = 604800;\nrequest_timeout = 86400;\n");
	ck_assert_uint_eq(conf->max_sessions, 1);
	ck_assert_uint_eq(conf->max_pending, 100000);
	ck_assert_uint_eq(conf->session_timeout, 604800);
	ck_assert_uint_eq(conf->request_timeout, 86400);
	conf_free(conf);
	parse_err("max_sessions = 0;\n", "t.conf:1: max_sessions must be "
	    "between 1 and 1000000");
	parse_err("\nmax_pending = 100001;\n", "t.conf:2: max_pending must be "
	    "between 1 and 100000");
	parse_err("session_timeout = 9;\n", "t.conf:1: session_timeout must "
	    "be between 10 and 604800");
	parse_err("request_timeout = \"30\";\n", "t.conf:1: request_timeout "
	    "must be an integer");
	parse_err("server_request_timeout = 86401;\n", "t.conf:1: "
	    "server_request_timeout must be between 1 and 86400");
	parse_err("max_sessions = 4294967297L;\n", "t.conf:1: max_sessions "
	    "must be between 1 and 1000000");
}
END_TEST

START_TEST(test_errors)
{
	/* The 2026-07-28 settings. */
	parse_err("request_state_key = \"short\";\n", "t.conf:1: "
	    "request_state_key must have at least 32 characters (this one "
	    "has 5)");
	parse_err("request_state_ttl = 4;\n", "t.conf:1: request_state_ttl "
	    "must be between 5 and 86400");
	parse_err("instance = \"a.b\";\n", "t.conf:1: instance \"a.b\" must "
	    "be 1 to 32 characters of A-Z a-z 0-9 _ -");
	parse_err("servers = ( { name = \"x\"; command = [ \"x\" ];\n"
	    "era = \"2027\"; } );\n", "t.conf:2: unknown era \"2027\" (auto, "
	    "2025 or 2026)");
	parse_err("servers = ( { name = \"x\"; transport = \"sse\"; url = "
	    "\"http://x/\"; era = \"2026\"; } );\n", "t.conf:1: server x: the "
	    "sse transport is of 2024-11-05, not era \"2026\"");
	/* Top level. */
	parse_err("listen = \"x:1\";\n\nfoo = 1;\n",
	    "t.conf:3: unknown setting \"foo\"");
	parse_err("listen = 5;\n", "t.conf:1: listen must be a string");
	parse_err("listen = \"\";\n", "t.conf:1: listen must not be empty");
	parse_err("\nlisten = \"127.0.0.1:65536\";\n", "t.conf:2: listen "
	    "\"127.0.0.1:65536\": the port must be a number from 1 to 65535 "
	    "(0 picks a free one)");
	parse_err("listen = \"127.0.0.1:-1\";\n", "t.conf:1: listen "
	    "\"127.0.0.1:-1\": the port must be a number from 1 to 65535 "
	    "(0 picks a free one)");
	parse_err("listen = \"127.0.0.1:\";\n", "t.conf:1: listen "
	    "\"127.0.0.1:\": the port must be a number from 1 to 65535 "
	    "(0 picks a free one)");
	parse_err("listen = \"127.0.0.1:99999999999999999999\";\n",
	    "t.conf:1: listen \"127.0.0.1:99999999999999999999\": the port "
	    "must be a number from 1 to 65535 (0 picks a free one)");
	parse_err("listen = \"localhost\";\n", "t.conf:1: listen "
	    "\"localhost\": no port; write host:port, e.g. \"127.0.0.1:8931\"");
	parse_err("listen = \"::1:80\";\n", "t.conf:1: listen \"::1:80\": an "
	    "IPv6 address goes in brackets, e.g. \"[::1]:8931\"");
	parse_err("listen = \"[::1]\";\n", "t.conf:1: listen \"[::1]\": no "
	    "port; write [address]:port, e.g. \"[::1]:8931\"");
	parse_err("listen = \":80\";\n", "t.conf:1: listen \":80\": no host; "
	    "write \"127.0.0.1:80\" for loopback, \"0.0.0.0:80\" for every "
	    "IPv4 address");
	parse_err("servers = (\n { name = \"a\"; command = [ \"x\" ];\n"
	    "   connect_timeout = 3; }\n);\n",
	    "t.conf:3: server a: connect_timeout is only for http, sse and ws");
	parse_err("servers = (\n { name = \"a\"; command = [ \"x\" ];\n"
	    "   tls_verify = false; }\n);\n",
	    "t.conf:3: server a: tls_verify is only for http, sse and ws");
	parse_err("servers = (\n { name = \"a\"; command = [ \"x\" ];\n\n"
	    "   headers = { A = \"b\"; }; }\n);\n",
	    "t.conf:4: server a: headers is only for http, sse and ws");
	parse_err("user = \"no such user\";\n",
	    "t.conf:1: user \"no such user\" does not exist");
	parse_err("servers = (\n { name = \"a\"; command = [ \"x\" ];\n"
	    "   user = \"no such user\"; }\n);\n",
	    "t.conf:3: user \"no such user\" does not exist");
	parse_err("auth_tokens = [ \"0123456789abcdef\",\n \"$$0123456789abcd\" ];\n",
	    "t.conf:2: a token must have at least 16 characters (this one has "
	    "15)");
	parse_err("clients = ( { token = \"0123456789abcdef\";\n"
	    " name = \"nvim__2\"; } );\n", "t.conf:2: client name \"nvim__2\" "
	    "must be 1 to 32 characters of A-Z a-z 0-9 _ - ., beginning with "
	    "a letter or digit, without __");
	parse_err("clients = ( { name = \"_bob\"; token = \"0123456789abcdef\"; "
	    "} );\n", "t.conf:1: client name \"_bob\" must be 1 to 32 "
	    "characters of A-Z a-z 0-9 _ - ., beginning with a letter or "
	    "digit, without __");
	parse_err("clients = ( { name = \"c\";\n token = \"short\"; } );\n",
	    "t.conf:2: a token must have at least 16 characters (this one has "
	    "5)");
	parse_err("control = \"run/ctl\";\n",
	    "t.conf:1: control must be an absolute path");
	parse_err("allowed_hosts = \"x\";\n",
	    "t.conf:1: allowed_hosts must be an array of strings");
	parse_err("allowed_hosts = ( \"x\",\n 5 );\n",
	    "t.conf:2: allowed_hosts must contain only strings");
	parse_err("servers = { a = 1; };\n", "t.conf:1: servers must be a "
	    "list: servers = ( { ... }, { ... } );");
	parse_err("servers = ( 5 );\n", "t.conf:1: each entry of servers must "
	    "be a group { name = ...; ... }");

	/* Syntax errors come from libconfig, with its line. */
	parse_err("listen = \"x:1\";\nservers = (\n  { name = ; }\n);\n",
	    "t.conf:3: syntax error");
	parse_err("a = 1;\na = 2;\n", "t.conf:2: duplicate setting name");
	parse_err("listen = \"x:1\";\nmax_body = ;\n", "t.conf:2: syntax error");
	parse_err("listen = \"x\n", "t.conf:2: syntax error");

	/* Servers. */
	parse_err("servers = (\n { name = \"a\"; command = [ \"x\" ];\n"
	    "   colour = \"red\"; }\n);\n",
	    "t.conf:3: unknown server setting \"colour\"");
	parse_err("servers = (\n { name = \"a\";\n transport = \"tcp\"; }\n"
	    ");\n",
	    "t.conf:3: unknown transport \"tcp\" (stdio, http, sse or ws)");
	parse_err("servers = (\n { name = \"a\"; command = [ \"x\" ];\n"
	    "   isolation = \"solo\"; }\n);\n",
	    "t.conf:3: unknown isolation \"solo\" (shared or per-session)");
	parse_err("servers = (\n { name = \"a\"; command = [ \"x\" ]; },\n"
	    " { name = \"b\"; command = [ \"x\" ]; },\n\n"
	    " { name = \"a\"; command = [ \"y\" ]; }\n);\n",
	    "t.conf:5: server name \"a\" already used on line 2");
	parse_err("servers = (\n\n { name = \"a\";\n transport = \"stdio\"; }\n"
	    ");\n", "t.conf:3: server a: stdio needs a command");
	parse_err("servers = (\n { name = \"a\"; command = [ \"x\" ];\n"
	    "   url = \"http://h/\"; transport = \"stdio\"; }\n);\n",
	    "t.conf:3: server a: url is not used by stdio");
	parse_err("servers = (\n { name = \"a\"; transport = \"http\";\n"
	    "   url = \"ftp://h/\"; }\n);\n",
	    "t.conf:3: server a: url must start with http:// or https://");
	parse_err("servers = (\n { name = \"a\"; transport = \"sse\";\n"
	    "   url = \"ws://h/\"; }\n);\n",
	    "t.conf:3: server a: url must start with http:// or https://");
	parse_err("servers = (\n { name = \"a\"; transport = \"ws\";\n"
	    "   url = \"http://h/\"; }\n);\n",
	    "t.conf:3: server a: url must start with ws:// or wss://");
	parse_err("servers = (\n { name = \"a\"; transport = \"http\"; }\n);\n",
	    "t.conf:2: server a: http needs a url");
	parse_err("servers = (\n { name = \"a\"; url = \"http://h/\"; }\n);\n",
	    "t.conf:2: server a: set transport (http, sse or ws) for a url");
	parse_err("servers = (\n { name = \"a\"; transport = \"http\";\n"
	    "   url = \"http://h/\"; cwd = \"/\"; }\n);\n",
	    "t.conf:2: server a: command, env and cwd are only for stdio");
	parse_err("servers = (\n { name = \"a\"; command = [ \"x\" ];\n"
	    "   env = {\n     GOOD = \"1\";\n     BAD-NAME = \"2\"; }; }\n);\n",
	    "t.conf:5: env: BAD-NAME must be a string with a valid variable "
	    "name");
	parse_err("servers = (\n { name = \"a\"; command = [ \"x\" ];\n"
	    "   env = { N = 1; }; }\n);\n",
	    "t.conf:3: env: N must be a string with a valid variable name");
	parse_err("servers = (\n { name = \"a\"; command = [ \"x\" ];\n"
	    "   env = [ \"N=1\" ]; }\n);\n",
	    "t.conf:3: env must be a group of NAME = \"value\" settings");
	parse_err("servers = (\n { name = \"a\"; command = [ \"x\" ];\n"
	    "   cwd = \"tmp\"; }\n);\n",
	    "t.conf:3: cwd must be an absolute path");
	parse_err("servers = (\n { name = \"a\"; command = [ \"x\" ];\n"
	    "   prefix = \"a b\"; }\n);\n",
	    "t.conf:3: prefix \"a b\" must be at most 32 characters of A-Z "
	    "a-z 0-9 _ - .");
	parse_err("servers = (\n { name = \"a\"; command = [ \"x\" ];\n"
	    "   prefix = \"abcdefghijklmnopqrstuvwxyz0123456\"; }\n);\n",
	    "t.conf:3: prefix \"abcdefghijklmnopqrstuvwxyz0123456\" must be "
	    "at most 32 characters of A-Z a-z 0-9 _ - .");
	parse_err("servers = (\n { command = [ \"x\" ]; }\n);\n",
	    "t.conf:2: server has no name");
	parse_err("servers = (\n { name = \"-a\"; command = [ \"x\" ]; }\n);\n",
	    "t.conf:2: server name \"-a\" must be 1-48 characters of A-Z a-z "
	    "0-9 _ - . starting with a letter or digit");
	parse_err("servers = (\n { name = \"a/b\"; command = [ \"x\" ]; }\n"
	    ");\n",
	    "t.conf:2: server name \"a/b\" must be 1-48 characters of A-Z a-z "
	    "0-9 _ - . starting with a letter or digit");
	parse_err("servers = (\n { name = \"\"; command = [ \"x\" ]; }\n);\n",
	    "t.conf:2: name must not be empty");
	parse_err("servers = (\n { name = \"a\"; command = [ ]; }\n);\n",
	    "t.conf:2: command must not be empty");
	parse_err("servers = (\n { name = \"a\"; command = [ \"\" ]; }\n);\n",
	    "t.conf:2: command[0] must not be empty");
	parse_err("servers = (\n { name = \"a\"; command = ( \"x\",\n 1 ); }\n"
	    ");\n", "t.conf:3: command must contain only strings");
	parse_err("servers = (\n { name = \"a\"; command = [ \"x\" ];\n"
	    "   request_timeout = 0; }\n);\n",
	    "t.conf:3: request_timeout must be between 1 and 86400");
	parse_err("servers = (\n { name = \"a\"; command = [ \"x\" ];\n"
	    "   init_timeout = 3601; }\n);\n",
	    "t.conf:3: init_timeout must be between 1 and 3600");
	parse_err("servers = (\n { name = \"a\"; command = [ \"x\" ];\n"
	    "   max_instances = 0; }\n);\n",
	    "t.conf:3: max_instances must be between 1 and 10000");
	parse_err("servers = (\n { name = \"a\"; command = [ \"x\" ];\n"
	    "   server_request_timeout = \"1\"; }\n);\n",
	    "t.conf:3: server_request_timeout must be an integer");
	parse_err("servers = (\n { name = \"a\"; command = [ \"x\" ];\n"
	    "   max_message = \"1k\"; }\n);\n",
	    "t.conf:3: max_message must be between 4096 and 1073741824 bytes");

	/*
	 * Every string reaches the worker as JSON: bytes that are not UTF-8
	 * would be dropped there, so they are refused here.
	 */
	parse_err("servers = (\n { name = \"a\";\n"
	    "   command = [ \"x\", \"--dir=/home/j\xf6rg\" ]; }\n);\n",
	    "t.conf:3: command must be valid UTF-8");
	parse_err("servers = (\n { name = \"a\"; command = [ \"x\" ];\n"
	    "   cwd = \"/tmp/\xc0\x80\"; }\n);\n",
	    "t.conf:3: cwd must be valid UTF-8");
	parse_err("servers = (\n { name = \"a\"; command = [ \"x\" ];\n"
	    "   env = { A = \"ok\";\n B = \"\xed\xa0\x80\"; }; }\n);\n",
	    "t.conf:4: env: B must be valid UTF-8");
	parse_err("listen = \"\xff:1\";\n", "t.conf:1: listen must be valid "
	    "UTF-8");
	parse_err("allowed_origins = [ \"http://\xe9\" ];\n",
	    "t.conf:1: allowed_origins must be valid UTF-8");
}
END_TEST

START_TEST(test_listen_user)
{
	struct conf	*conf;
	char		 host[64], err[256];
	unsigned int	 port;

	ck_assert_int_eq(conf_split_listen("127.0.0.1:8931", host, sizeof host,
	    &port, err, sizeof err), 0);
	ck_assert_str_eq(host, "127.0.0.1");
	ck_assert_uint_eq(port, 8931);
	ck_assert_int_eq(conf_split_listen("[::1]:65535", host, sizeof host,
	    &port, err, sizeof err), 0);
	ck_assert_str_eq(host, "::1");
	ck_assert_uint_eq(port, 65535);
	/* 0 picks a free port (what the tests listen on). */
	ck_assert_int_eq(conf_split_listen("localhost:0", host, sizeof host,
	    &port, err, sizeof err), 0);
	ck_assert_uint_eq(port, 0);
	ck_assert_int_eq(conf_split_listen("127.0.0.1:+80", host, sizeof host,
	    &port, err, sizeof err), -1);
	ck_assert_int_eq(conf_split_listen("127.0.0.1:8931 ", host,
	    sizeof host, &port, err, sizeof err), -1);
	ck_assert_int_eq(conf_split_listen("[::1]:80", host, 3, &port, err,
	    sizeof err), -1);
	ck_assert_str_eq(err, "listen: the host is too long");

	/* The global user is every server's unless it names its own. */
	conf = parse_ok("user = \"root\";\nlisten = \"[::1]:0\";\n"
	    "servers = ( { name = \"a\"; command = [ \"x\" ]; },\n"
	    " { name = \"b\"; command = [ \"x\" ]; user = \"nobody\"; } );\n");
	ck_assert_str_eq(conf->user, "root");
	ck_assert_int_eq(conf->listen_at.line, 2);
	ck_assert_str_eq(conf->servers[0].user, "root");
	ck_assert_str_eq(conf->servers[1].user, "nobody");
	conf_free(conf);
	conf = parse_ok("servers = ( { name = \"a\"; command = [ \"x\" ]; } );\n");
	ck_assert_ptr_null(conf->servers[0].user);
	ck_assert_int_eq(conf->listen_at.line, 0);
	conf_free(conf);
}
END_TEST

START_TEST(test_name_lengths)
{
	char		 text[256], name[64];
	struct conf	*conf;
	char		 err[512];

	memset(name, 'n', 48);
	name[48] = '\0';
	snprintf(text, sizeof text, "servers = ( { name = \"%s\"; command = "
	    "[ \"x\" ]; } );", name);
	conf = parse_ok(text);
	ck_assert_str_eq(conf->servers[0].name, name);
	conf_free(conf);
	name[48] = 'n';
	name[49] = '\0';
	snprintf(text, sizeof text, "servers = ( { name = \"%s\"; command = "
	    "[ \"x\" ]; } );", name);
	ck_assert_ptr_null(conf_parse(text, "t.conf", err, sizeof err));
}
END_TEST

START_TEST(test_load)
{
	char		 path[] = "/tmp/check_conf.XXXXXX";
	char		 err[1024], want[1100];
	struct conf	*conf;
	FILE		*f;
	int		 fd;

	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	fputs("listen = \"127.0.0.1:1\";\nservers = (\n"
	    "  { name = \"d\"; command = [ \"x\" ]; }\n);\n", f);
	fclose(f);
	conf = conf_load(path, err, sizeof err);
	ck_assert_ptr_nonnull(conf);
	ck_assert_str_eq(conf->file, path);
	ck_assert_str_eq(conf->listen, "127.0.0.1:1");
	ck_assert_int_eq(conf->servers[0].at.line, 3);
	conf_free(conf);

	f = fopen(path, "w");
	fputs("listen = \"x:1\";\n\nbogus = 1;\n", f);
	fclose(f);
	ck_assert_ptr_null(conf_load(path, err, sizeof err));
	snprintf(want, sizeof want, "%s:3: unknown setting \"bogus\"", path);
	ck_assert_str_eq(err, want);

	f = fopen(path, "w");
	fputs("listen = \"x:1\";\nservers = (\n{ name = }\n", f);
	fclose(f);
	ck_assert_ptr_null(conf_load(path, err, sizeof err));
	snprintf(want, sizeof want, "%s:3: syntax error", path);
	ck_assert_str_eq(err, want);

	unlink(path);
	ck_assert_ptr_null(conf_load(path, err, sizeof err));
	snprintf(want, sizeof want, "%s: %s", path, strerror(ENOENT));
	ck_assert_str_eq(err, want);
}
END_TEST

/* Write a file of a test's directory. */
static void
write_file(const char *dir, const char *name, const char *text)
{
	char	path[256];
	FILE	*f;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

/*
 * An error found once everything is read names the file the setting was
 * written in, an @included one too, and the other place it points to.
 */
START_TEST(test_load_included)
{
	char		 dir[] = "/tmp/check_conf.XXXXXX";
	char		 main_conf[128], inc[128], other[128], err[1024];
	char		 want[1100], text[512];
	struct conf	*conf;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(main_conf, sizeof main_conf, "%s/main.conf", dir);
	snprintf(inc, sizeof inc, "%s/servers.conf", dir);
	snprintf(other, sizeof other, "%s/more.conf", dir);

	/* Where each was written. */
	snprintf(text, sizeof text, "listen = \"127.0.0.1:1\";\n"
	    "@include \"%s\"\n", inc);
	write_file(dir, "main.conf", text);
	snprintf(text, sizeof text, "state_dir = \"%s\";\nservers = (\n"
	    "  { name = \"a\"; command = [ \"x\" ]; },\n"
	    "  { name = \"b\"; command = [ \"x\" ]; }\n);\n", dir);
	write_file(dir, "servers.conf", text);
	conf = conf_load(main_conf, err, sizeof err);
	ck_assert_msg(conf != NULL, "%s", err);
	ck_assert_int_eq(conf->listen_at.line, 1);
	ck_assert_str_eq(conf_at_file(conf, conf->listen_at), main_conf);
	ck_assert_int_eq(conf->state_dir_at.line, 1);
	ck_assert_str_eq(conf_at_file(conf, conf->state_dir_at), inc);
	ck_assert_int_eq(conf->servers[1].at.line, 4);
	ck_assert_str_eq(conf_at_file(conf, conf->servers[1].at), inc);
	ck_assert_uint_eq(conf->nincluded, 1);
	conf_free(conf);

	/* A name used again in another file: both files named. */
	snprintf(text, sizeof text, "servers = (\n"
	    "  { name = \"a\"; command = [ \"x\" ]; },\n"
	    "  @include \"%s\"\n);\n", other);
	write_file(dir, "main.conf", text);
	write_file(dir, "more.conf",
	    "\n{ name = \"a\"; command = [ \"y\" ]; }\n");
	ck_assert_ptr_null(conf_load(main_conf, err, sizeof err));
	snprintf(want, sizeof want, "%s:2: server name \"a\" already used on "
	    "line 2 of %s", other, main_conf);
	ck_assert_str_eq(err, want);

	/* In the same file: the line alone. */
	write_file(dir, "main.conf", "servers = (\n"
	    "  { name = \"a\"; command = [ \"x\" ]; },\n"
	    "  { name = \"a\"; command = [ \"x\" ]; }\n);\n");
	ck_assert_ptr_null(conf_load(main_conf, err, sizeof err));
	snprintf(want, sizeof want, "%s:3: server name \"a\" already used on "
	    "line 2", main_conf);
	ck_assert_str_eq(err, want);

	/* A check made once all is read: the included file and its line. */
	snprintf(text, sizeof text, "listen = \"127.0.0.1:1\";\n\n"
	    "@include \"%s\"\n", other);
	write_file(dir, "main.conf", text);
	write_file(dir, "more.conf", "servers = (\n"
	    "  { name = \"a\"; command = [ \"x\" ]; },\n"
	    "  { name = \"b\"; command = [ \"x\" ];\n"
	    "    sampling = [ \"llm:nobody\" ]; }\n);\n");
	ck_assert_ptr_null(conf_load(main_conf, err, sizeof err));
	snprintf(want, sizeof want, "%s:3: server b: sampling: no llm provider "
	    "is named \"nobody\"", other);
	ck_assert_str_eq(err, want);

	unlink(main_conf);
	unlink(inc);
	unlink(other);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

START_TEST(test_err_truncated)
{
	char	err[8];

	ck_assert_ptr_null(conf_parse("foo = 1;", "t.conf", err, sizeof err));
	ck_assert_str_eq(err, "t.conf:");
}
END_TEST

/* Print a configuration into a new string. */
static char *
print_conf(const struct conf *conf)
{
	char	*buf = NULL;
	size_t	 len = 0;
	FILE	*f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	conf_print(conf, f);
	fclose(f);
	return (buf);
}

/* Are two configurations the same (apart from where they came from)? */
static void
conf_same(const struct conf *a, const struct conf *b)
{
	size_t	i, j;

	ck_assert_str_eq(a->listen, b->listen);
	ck_assert_str_eq(a->control, b->control);
	if (a->allowed_origins == NULL)
		ck_assert_ptr_null(b->allowed_origins);
	else {
		for (i = 0; a->allowed_origins[i] != NULL; i++)
			ck_assert_str_eq(a->allowed_origins[i],
			    b->allowed_origins[i]);
		ck_assert_ptr_null(b->allowed_origins[i]);
	}
	if (a->allowed_hosts == NULL)
		ck_assert_ptr_null(b->allowed_hosts);
	else {
		for (j = 0; a->allowed_hosts[j] != NULL; j++)
			ck_assert_str_eq(a->allowed_hosts[j],
			    b->allowed_hosts[j]);
		ck_assert_ptr_null(b->allowed_hosts[j]);
	}
	ck_assert_uint_eq(a->max_message, b->max_message);
	ck_assert_uint_eq(a->max_body, b->max_body);
	ck_assert_uint_eq(a->max_sessions, b->max_sessions);
	ck_assert_uint_eq(a->max_pending, b->max_pending);
	ck_assert_uint_eq(a->session_timeout, b->session_timeout);
	ck_assert_uint_eq(a->request_timeout, b->request_timeout);
	ck_assert_uint_eq(a->server_request_timeout,
	    b->server_request_timeout);
	ck_assert_uint_eq(a->request_state_ttl, b->request_state_ttl);
	ck_assert_uint_eq(a->cache_ttl, b->cache_ttl);
	ck_assert_int_eq(a->request_state_key == NULL,
	    b->request_state_key == NULL);
	if (a->request_state_key != NULL)
		ck_assert_str_eq(a->request_state_key, b->request_state_key);
	ck_assert_int_eq(a->instance == NULL, b->instance == NULL);
	if (a->instance != NULL)
		ck_assert_str_eq(a->instance, b->instance);
	if (a->pass_env == NULL)
		ck_assert_ptr_null(b->pass_env);
	else
		strv_is(b->pass_env, (const char *const *)a->pass_env);
	ck_assert_uint_eq(a->nservers, b->nservers);
	for (i = 0; i < a->nservers; i++)
		ck_assert_msg(conf_server_equal(&a->servers[i],
		    &b->servers[i]), "server %zu differs", i);
	ck_assert_uint_eq(a->nsampling, b->nsampling);
	for (i = 0; i < a->nsampling; i++) {
		ck_assert_int_eq(a->sampling[i], b->sampling[i]);
		if (a->sampling_target[i] == NULL)
			ck_assert_ptr_null(b->sampling_target[i]);
		else
			ck_assert_str_eq(a->sampling_target[i],
			    b->sampling_target[i]);
	}
	ck_assert_uint_eq(a->nllms, b->nllms);
	for (i = 0; i < a->nllms; i++) {
		json_t	*ja = conf_llm_to_json(&a->llms[i]);
		json_t	*jb = conf_llm_to_json(&b->llms[i]);
		char	*ta = json_dumps(ja, JSON_SORT_KEYS);
		char	*tb = json_dumps(jb, JSON_SORT_KEYS);

		ck_assert_msg(conf_llm_equal(&a->llms[i], &b->llms[i]),
		    "llm %zu differs: %s\n%s", i, ta, tb);
		free(ta);
		free(tb);
		json_decref(ja);
		json_decref(jb);
	}
}

#define OAUTH_FULL \
	"oauth = { resource = \"https://mcp.example.com/\";" \
	" resource_name = \"Gateway\"; audiences = [ \"api://gw\" ];" \
	" scopes_supported = [ \"mcp\", \"admin\" ]; scopes = [ \"mcp\" ];" \
	" leeway = 5; subject_claim = \"oid\"; default_client = \"guest\";" \
	" issuers = ( { issuer = \"https://a.example\"; algorithms = [ \"ES256\"," \
	" \"Ed448\" ]; typ = \"at+jwt\"; ca_file = \"/etc/ca.pem\";" \
	" refresh = 600; metadata_url = \"https://a.example/m\";" \
	" jwks_uri = \"https://a.example/k\"; introspection = { client_id =" \
	" \"gw\"; client_secret = \"${file:/etc/s}\"; auth =" \
	" \"client_secret_post\"; }; login = { client_id = \"gw-login\";" \
	" client_secret = \"${env:LOGIN_SECRET}\"; }; }," \
	" { issuer = \"http://127.0.0.1:9/x\"; login = { client_id = \"pub\";" \
	" }; } ); };\n" \
	"clients = ( { name = \"guest\"; oauth = { scopes = [ \"mcp\" ]; }; }," \
	" { name = \"ops\"; token = \"0123456789abcdef\"; allow = [ \"a/*\" ];" \
	" oauth = { issuer = \"https://a.example\"; subject = \"u1\"; claims =" \
	" { groups = \"admins\"; tier = \"x\"; }; }; } );\n" \
	"servers = ( { name = \"a\"; command = [ \"x\" ]; scopes = [ \"admin\" ];" \
	" } );"
#define OAUTH_MIN	"oauth = { resource = \"https://mcp.example.com\";" \
	    " issuers = ( { issuer = \"https://idp.example.com/realms/x\"; } );" \
	    " };\n"

static const char *const print_cases[] = {
	"",
	"servers = ( { name = \"demo\"; command = "
	"[ \"mcp-demo-server\" ]; } );",
	"listen = \"[::1]:8931\";\ncontrol = \"/run/x y/\\\"q\\\".sock\";\n"
	"allowed_origins = [ ];\nallowed_hosts = [ \"a\", \"b\\\\c\" ];\n"
	"max_message = \"1G\";\nmax_body = \"1k\";\nmax_sessions = 1;\n"
	"max_pending = 2;\nsession_timeout = 10;\nrequest_timeout = 1;\n"
	"server_request_timeout = 77;\n"
	"request_state_key = \"${file:/etc/mcp/state key}\";\n"
	"request_state_ttl = 5;\ninstance = \"gw-1_a\";\ncache_ttl = 0;\n"
	"servers = (\n"
	"  { name = \"fs\"; command = [ \"sh\", \"-c\", \"echo \\\"$X\\\"\\n"
	"\\tdone\\\\\", \"\\x01\\x1f\\x7f\\r\\f\", "
	"\"\xc3\xa9\xe2\x82\xac\" ];\n"
	"    env = { X = \"a\\\"b\"; Y = \"\"; Z = \"line\\nbreak\"; };\n"
	"    cwd = \"/tmp/a b\"; isolation = \"per-session\";\n"
	"    init_timeout = 3600; max_instances = 10000; },\n"
	"  { name = \"h\"; transport = \"http\";"
	" url = \"https://x/mcp?a=\\\"1\\\"\";"
	" prefix = \"\"; max_message = 4096; era = \"2026\"; },\n"
	"  { name = \"s\"; transport = \"sse\"; url = \"http://s/\"; "
	"prefix = \"S.-_\"; request_timeout = 86400;"
	" server_request_timeout = 2; },\n"
	"  { name = \"w\"; transport = \"ws\"; url = \"wss://w/\"; "
	"era = \"2025\"; }\n"
	");\n",
	"sampling = [ \"client\", \"llm:a\" ];\n"
	"llm = ( { name = \"a\"; provider = \"openai\"; model = \"m\";"
	" api_key = \"${env:K}\"; models = [ \"m\", \"n\" ];"
	" scores = ( { model = \"n\"; cost = 0.1; speed = 1;"
	" intelligence = 0.333; } ); budget = { requests_per_minute = 5; };"
	" stream = false; max_tokens_field = \"max_tokens\"; },\n"
	"  { name = \"b.2\"; provider = \"ollama\"; model = \"llama3.2\";"
	" url = \"http://gpu:11434/\"; timeout = 3600; max_concurrent = 1;"
	" max_response = \"64k\"; tls_verify = false; ca_file = \"/c\"; } );\n"
	"servers = ( { name = \"t\"; command = [ \"x\" ];"
	" sampling = [ \"tool:t/complete\", \"llm:b.2\", \"decline\" ];"
	" budget = { tokens_per_day = 1000000; }; log_prompts = true; },\n"
	"  { name = \"u\"; command = [ \"y\" ]; } );\n",
	"pass_env = [ \"HTTPS_PROXY\", \"NO_PROXY\" ];\n"
	"servers = ( { name = \"a\"; command = [ \"x\" ];"
	" pass_env = [ \"GITHUB_TOKEN\", \"NO_PROXY\" ]; },\n"
	"  { name = \"b\"; command = [ \"y\" ]; pass_env = [ ]; },\n"
	"  { name = \"h\"; transport = \"http\"; url = \"https://u:p@h/?k=1\"; }"
	" );\n",
	"servers = ( { name = \"a\"; command = [ \"x\" ];"
	" pass_env = [ \"_A1\" ]; } );\n",
	OAUTH_MIN,
	OAUTH_FULL,
	"state_dir = \"/var/lib/x y\";\npinning = \"warn\";\n"
	"discovery = \"search\";\n"
	"servers = ( { name = \"a\"; command = [ \"x\" ]; pinning = \"off\";"
	" tools = ( { tool = \"t \\\"1\\\"\"; name = \"t1\"; title = \"T\";"
	" description = \"line\\nbreak\"; annotations = { readOnlyHint ="
	" true; openWorldHint = false; }; },\n"
	" { tool = \"h\"; hidden = true; } ); } );\n",
};

/* state_dir, pinning and an upstream's tools overrides. */
START_TEST(test_catalog_settings)
{
	struct conf			*conf;
	const struct tool_override	*o;

	conf = parse_ok("servers = ( { name = \"a\"; command = [ \"x\" ]; "
	    "} );");
	ck_assert_str_eq(conf->state_dir, CONF_DEFAULT_STATE_DIR);
	ck_assert_int_eq(conf->state_dir_at.line, 0);
	ck_assert_int_eq(conf->pinning, PINNING_ENFORCE);
	ck_assert_int_eq(conf->servers[0].pinning, PINNING_ENFORCE);
	ck_assert_int_eq(conf->discovery, DISCOVERY_LIST);
	conf_free(conf);
	conf = parse_ok("discovery = \"search\";\n");
	ck_assert_int_eq(conf->discovery, DISCOVERY_SEARCH);
	conf_free(conf);
	/* An upstream's pinning, else the global one wherever it is. */
	conf = parse_ok("servers = ( { name = \"a\"; command = [ \"x\" ]; },"
	    " { name = \"b\"; command = [ \"x\" ]; pinning = \"enforce\";\n"
	    " tools = ( { tool = \"e\"; name = \"say\"; annotations = {"
	    " destructiveHint = true; }; }, { tool = \"s\"; hidden = true; }"
	    " ); } );\npinning = \"off\";\nstate_dir = \"/s\";\n");
	ck_assert_int_eq(conf->servers[0].pinning, PINNING_OFF);
	ck_assert_int_eq(conf->servers[1].pinning, PINNING_ENFORCE);
	ck_assert_str_eq(conf->state_dir, "/s");
	ck_assert_int_eq(conf->state_dir_at.line, 4);
	ck_assert_uint_eq(conf->servers[1].noverrides, 2);
	ck_assert_ptr_null(conf_override_find(&conf->servers[1], "x", 1));
	o = conf_override_find(&conf->servers[1], "e", 1);
	ck_assert_str_eq(o->name, "say");
	ck_assert_int_eq(o->hints[HINT_DESTRUCTIVE], 1);
	ck_assert_int_eq(o->hints[HINT_READ_ONLY], CONF_HINT_UNSET);
	ck_assert(conf_override_find(&conf->servers[1], "s", 1)->hidden);
	conf_free(conf);

	parse_err("pinning = \"strict\";\n", "t.conf:1: unknown pinning "
	    "\"strict\" (enforce, warn or off)");
	parse_err("discovery = \"find\";\n", "t.conf:1: unknown discovery "
	    "\"find\" (list or search)");
	parse_err("state_dir = \"var/lib\";\n", "t.conf:1: state_dir must be "
	    "an absolute path");
	parse_err("servers = ( { name = \"a\"; command = [ \"x\" ];\n"
	    " tools = { }; } );\n", "t.conf:2: server a: tools must be a list:"
	    " tools = ( { tool = \"...\"; ... } );");
	parse_err("servers = ( { name = \"a\"; command = [ \"x\" ];\n"
	    " tools = ( { name = \"b\"; } ); } );\n", "t.conf:2: server a: a "
	    "tools entry needs tool = \"the upstream's name\"");
	parse_err("servers = ( { name = \"a\"; command = [ \"x\" ];\n"
	    " tools = ( { tool = \"b\"; rename = \"c\"; } ); } );\n",
	    "t.conf:2: unknown tool setting \"rename\" (tool, name, title, "
	    "description, annotations or hidden)");
	parse_err("servers = ( { name = \"a\"; command = [ \"x\" ];\n"
	    " tools = ( { tool = \"b\"; name = \"a b\"; } ); } );\n",
	    "t.conf:2: tool name \"a b\" must be 1-64 characters of A-Z a-z "
	    "0-9 _ - .");
	parse_err("servers = ( { name = \"a\"; command = [ \"x\" ];\n"
	    " tools = ( { tool = \"b\"; annotations = { readOnly = true; };"
	    " } ); } );\n", "t.conf:2: unknown annotation \"readOnly\" "
	    "(readOnlyHint, destructiveHint, idempotentHint or openWorldHint)");
	parse_err("servers = ( { name = \"a\"; command = [ \"x\" ];\n"
	    " tools = ( { tool = \"b\"; },\n { tool = \"b\"; } ); } );\n",
	    "t.conf:3: server a: tool \"b\" already has an entry on line 2");
	parse_err("servers = ( { name = \"a\"; command = [ \"x\" ];\n"
	    " tools = ( { tool = \"b\"; name = \"n\"; },\n"
	    " { tool = \"c\"; name = \"n\"; } ); } );\n",
	    "t.conf:3: server a: name \"n\" is already given to tool \"b\" on "
	    "line 2");
	parse_err("servers = ( { name = \"a\"; command = [ \"x\" ];\n"
	    " tools = ( { tool = \"b\"; name = \"n\"; } ); },\n"
	    " { name = \"z\"; command = [ \"x\" ];\n"
	    " tools = ( { tool = \"c\"; name = \"n\"; } ); } );\n",
	    "t.conf:4: server z: name \"n\" is already given by server a on "
	    "line 2");
}
END_TEST

/* pass_env: the global names and an upstream's own, checked. */
START_TEST(test_pass_env)
{
	static const char *const both[] = { "HTTPS_PROXY", "NO_PROXY",
	    "GITHUB_TOKEN", NULL };
	static const char *const global[] = { "HTTPS_PROXY", "NO_PROXY",
	    NULL };
	struct conf	*c, *d;
	char		 text[16384];
	size_t		 n, i;

	c = parse_ok("servers = ( { name = \"a\"; command = [ \"x\" ]; } );");
	ck_assert_ptr_null(c->pass_env);
	ck_assert_ptr_null(c->servers[0].pass_env);
	conf_free(c);

	/* Added to the global list, each name once; none for remote ones. */
	c = parse_ok("servers = ( { name = \"a\"; command = [ \"x\" ];"
	    " pass_env = [ \"GITHUB_TOKEN\", \"NO_PROXY\" ]; },"
	    " { name = \"b\"; command = [ \"x\" ]; },"
	    " { name = \"h\"; transport = \"http\"; url = \"http://h/\"; } );\n"
	    "pass_env = [ \"HTTPS_PROXY\", \"NO_PROXY\" ];");
	strv_is(c->pass_env, global);
	strv_is(c->servers[0].pass_env, both);
	strv_is(c->servers[1].pass_env, global);
	ck_assert_ptr_null(c->servers[2].pass_env);
	/* A change of the names restarts the upstream. */
	d = parse_ok("servers = ( { name = \"a\"; command = [ \"x\" ];"
	    " pass_env = [ \"GITHUB_TOKEN\" ]; } );");
	ck_assert(!conf_server_equal(&c->servers[0], &d->servers[0]));
	conf_free(d);
	conf_free(c);

	parse_err("pass_env = [ \"A-B\" ];",
	    "t.conf:1: pass_env: \"A-B\" is not a variable name (letters, "
	    "digits and _, not beginning with a digit)");
	parse_err("pass_env = [ \"1A\" ];",
	    "t.conf:1: pass_env: \"1A\" is not a variable name (letters, "
	    "digits and _, not beginning with a digit)");
	parse_err("pass_env = [ \"\" ];",
	    "t.conf:1: pass_env: \"\" is not a variable name (letters, "
	    "digits and _, not beginning with a digit)");
	parse_err("pass_env = [ \"A\", \"B\", \"A\" ];",
	    "t.conf:1: pass_env: A is named twice");
	parse_err("pass_env = \"A\";",
	    "t.conf:1: pass_env must be an array of strings");
	parse_err("pass_env = [ 1 ];",
	    "t.conf:1: pass_env must contain only strings");
	parse_err("servers = ( { name = \"h\"; transport = \"http\";\n"
	    "  url = \"http://h/\"; pass_env = [ \"A\" ]; } );",
	    "t.conf:2: server h: pass_env is only for stdio");
	/* At most CONF_MAX_PASS_ENV names. */
	n = (size_t)snprintf(text, sizeof text, "pass_env = [ ");
	for (i = 0; i <= CONF_MAX_PASS_ENV; i++)
		n += (size_t)snprintf(text + n, sizeof text - n, "%s\"V%zu\"",
		    i > 0 ? ", " : "", i);
	snprintf(text + n, sizeof text - n, " ];");
	parse_err(text, "t.conf:1: pass_env: more than 256 names");
}
END_TEST

/* Who may read /metrics: metrics_tokens, and a client's metrics. */
START_TEST(test_metrics_rights)
{
	struct conf	*a, *b;
	char		*text;
	static const char *const toks[] = { "scrape-0123456789ab",
				    "${env:MCP_SCRAPE}", NULL };

	a = parse_ok("metrics_tokens = [ \"scrape-0123456789ab\", "
	    "\"${env:MCP_SCRAPE}\" ];\n"
	    "clients = ( { name = \"prom\"; token = \"prom-0123456789abc\";"
	    " metrics = true; },\n"
	    "  { name = \"ide\"; token = \"ide-0123456789abcd\"; } );\n");
	strv_is(a->metrics_tokens, toks);
	ck_assert_ptr_null(a->auth_tokens);
	ck_assert_uint_eq(a->nclients, 2);
	ck_assert_int_eq(a->clients[0].metrics, 1);
	/* Not unless given. */
	ck_assert_int_eq(a->clients[1].metrics, 0);
	/* -nv prints them, and what it prints reads back the same. */
	text = print_conf(a);
	ck_assert_msg(strstr(text, "metrics_tokens = [ \"scrape-0123456789ab\", "
	    "\"${env:MCP_SCRAPE}\" ];") != NULL, "%s", text);
	b = parse_ok(text);
	strv_is(b->metrics_tokens, toks);
	ck_assert_int_eq(b->clients[0].metrics, 1);
	ck_assert_int_eq(b->clients[1].metrics, 0);
	free(text);
	conf_free(a);
	conf_free(b);

	a = parse_ok("");
	ck_assert_ptr_null(a->metrics_tokens);
	conf_free(a);

	parse_err("metrics_tokens = [ \"0123456789abcdef\",\n \"short\" ];\n",
	    "t.conf:2: a token must have at least 16 characters (this one has "
	    "5)");
	parse_err("metrics_tokens = [ ];\n",
	    "t.conf:1: metrics_tokens must not be empty");
	parse_err("clients = ( { name = \"c\"; token = \"0123456789abcdef\";\n"
	    " metrics = \"yes\"; } );\n",
	    "t.conf:2: metrics must be true or false");
}
END_TEST

START_TEST(test_print_round_trip)
{
	struct conf	*a, *b, *c;
	char		*text, *text2;

	a = parse_ok(print_cases[_i]);
	text = print_conf(a);
	b = parse_ok(text);
	conf_same(a, b);
	/* Printing is a fixed point. */
	text2 = print_conf(b);
	ck_assert_str_eq(text, text2);
	c = parse_ok(text2);
	conf_same(a, c);
	free(text);
	free(text2);
	conf_free(a);
	conf_free(b);
	conf_free(c);
}
END_TEST

START_TEST(test_oauth)
{
	struct conf			*conf;
	const struct oauth_conf		*oc;
	const struct oauth_issuer_conf	*ic;
	const struct client_conf	*cl;

	conf = parse_ok("");
	ck_assert_ptr_null(conf->oauth);
	conf_free(conf);
	conf = parse_ok(OAUTH_MIN);
	oc = conf->oauth;
	ck_assert_ptr_nonnull(oc);
	ck_assert_str_eq(oc->resource, "https://mcp.example.com");
	ck_assert_uint_eq(oc->leeway, 60);
	ck_assert_str_eq(oc->subject_claim, "sub");
	ck_assert_ptr_null(oc->scopes);
	ck_assert_ptr_null(oc->default_client);
	ck_assert_uint_eq(oc->nissuers, 1);
	ic = &oc->issuers[0];
	ck_assert_str_eq(ic->issuer, "https://idp.example.com/realms/x");
	ck_assert_uint_eq(ic->algorithms, JOSE_RS256 | JOSE_PS256 |
	    JOSE_ES256 | JOSE_EDDSA | JOSE_ED25519);
	ck_assert_int_eq(ic->typ, JOSE_TYP_LAX);
	ck_assert_uint_eq(ic->refresh, 3600);
	ck_assert_ptr_null(ic->introspection.client_id);
	ck_assert_int_eq(ic->at.line, 1);
	ck_assert_ptr_eq(conf_oauth_issuer(oc,
	    "https://idp.example.com/realms/x"), ic);
	ck_assert_ptr_null(conf_oauth_issuer(oc,
	    "https://idp.example.com/realms/x/"));
	conf_free(conf);

	conf = parse_ok(OAUTH_FULL);
	oc = conf->oauth;
	ck_assert_str_eq(oc->resource, "https://mcp.example.com");
	ck_assert_str_eq(oc->resource_name, "Gateway");
	ck_assert_str_eq(oc->audiences[0], "api://gw");
	ck_assert_str_eq(oc->scopes[0], "mcp");
	ck_assert_ptr_null(oc->scopes[1]);
	ck_assert_uint_eq(oc->leeway, 5);
	ck_assert_str_eq(oc->subject_claim, "oid");
	ck_assert_str_eq(oc->default_client, "guest");
	ck_assert_uint_eq(oc->nissuers, 2);
	ic = &oc->issuers[0];
	ck_assert_uint_eq(ic->algorithms, JOSE_ES256 | JOSE_ED448);
	ck_assert_int_eq(ic->typ, JOSE_TYP_AT_JWT);
	ck_assert_uint_eq(ic->refresh, 600);
	ck_assert_str_eq(ic->introspection.client_id, "gw");
	ck_assert_str_eq(ic->introspection.secret, "${file:/etc/s}");
	ck_assert_int_eq(ic->introspection.post, 1);
	ck_assert_str_eq(ic->login.client_id, "gw-login");
	ck_assert_str_eq(ic->login.secret, "${env:LOGIN_SECRET}");
	ck_assert_int_eq(ic->login.post, 0);
	ic = &oc->issuers[1];
	ck_assert_str_eq(ic->login.client_id, "pub");
	ck_assert_ptr_null(ic->login.secret);
	ck_assert_ptr_null(ic->introspection.client_id);
	cl = conf_client_find(conf, "guest");
	ck_assert_ptr_null(cl->token);
	ck_assert_str_eq(cl->oauth->scopes[0], "mcp");
	cl = conf_client_find(conf, "ops");
	ck_assert_str_eq(cl->oauth->subject, "u1");
	ck_assert_str_eq(cl->oauth->issuer, "https://a.example");
	ck_assert_str_eq(cl->oauth->claim_names[1], "tier");
	ck_assert_str_eq(cl->oauth->claim_values[0], "admins");
	ck_assert_ptr_null(cl->oauth->claim_names[2]);
	ck_assert_str_eq(conf->servers[0].scopes[0], "admin");
	conf_free(conf);
}
END_TEST

START_TEST(test_oauth_errors)
{
	parse_err("oauth = { issuers = ( { issuer = \"https://i\"; } ); };",
	    "t.conf:1: oauth needs resource = \"https://...\", the gateway's "
	    "URL as its clients see it");
	parse_err("oauth = {\n resource = \"https://r\"; };",
	    "t.conf:1: oauth needs issuers = ( { issuer = \"https://...\"; } )");
	parse_err("oauth = { resource = \"https://r\";\n issuers = ( ); };",
	    "t.conf:2: issuers must not be empty");
	parse_err("oauth = { resource = \"http://mcp.example.com\"; issuers = ("
	    " { issuer = \"https://i\"; } ); };",
	    "t.conf:1: resource must be an https:// URL (http:// only on "
	    "loopback)");
	parse_err("oauth = { resource = \"https://r\"; issuers = (\n"
	    " { issuer = \"http://idp.example.com\"; } ); };",
	    "t.conf:2: issuer must be an https:// URL (http:// only on "
	    "loopback)");
	parse_err("oauth = { resource = \"https://r\"; issuers = ("
	    " { issuer = \"http://127.0.0.1.evil.example/\"; } ); };",
	    "t.conf:1: issuer must be an https:// URL (http:// only on "
	    "loopback)");
	parse_err("oauth = { resource = \"https://r?x=1\"; issuers = ("
	    " { issuer = \"https://i\"; } ); };",
	    "t.conf:1: resource must have no query, fragment, user, white "
	    "space, '\"' or '\\'");
	parse_err("oauth = { resource = \"https://r\"; issuers = ("
	    " { issuer = \"https://i\";\n algorithms = [ \"RS256\", \"HS256\" ];"
	    " } ); };",
	    "t.conf:2: algorithm \"HS256\" is refused: an issuer's keys are "
	    "public, so tokens must be signed with a private key");
	parse_err("oauth = { resource = \"https://r\"; issuers = ("
	    " { issuer = \"https://i\"; algorithms = [ \"none\" ]; } ); };",
	    "t.conf:1: algorithm \"none\" is refused: an issuer's keys are "
	    "public, so tokens must be signed with a private key");
	parse_err("oauth = { resource = \"https://r\"; issuers = ("
	    " { issuer = \"https://i\"; algorithms = [ \"RS1\" ]; } ); };",
	    "t.conf:1: unknown algorithm \"RS1\" (RS256, RS384, RS512, PS256, "
	    "PS384, PS512, ES256, ES384, ES512, EdDSA, Ed25519 or Ed448)");
	parse_err("oauth = { resource = \"https://r\"; issuers = ("
	    " { issuer = \"https://i\"; typ = \"jwt\"; } ); };",
	    "t.conf:1: typ must be \"any\" or \"at+jwt\"");
	parse_err("oauth = { resource = \"https://r\"; leeway = 301; issuers = ("
	    " { issuer = \"https://i\"; } ); };",
	    "t.conf:1: leeway must be between 0 and 300");
	parse_err("oauth = { resource = \"https://r\"; issuers = ("
	    " { issuer = \"https://i\"; }, { issuer = \"https://i\"; } ); };",
	    "t.conf:1: issuer \"https://i\" already given on line 1");
	parse_err("oauth = { resource = \"https://r\"; issuers = ("
	    " { issuer = \"https://i\"; introspection = { client_id = \"c\";"
	    " client_secret = \"hunter2hunter2\"; }; } ); };",
	    "t.conf:1: client_secret must be a ${file:/path} or ${env:NAME} "
	    "reference, not the secret itself");
	parse_err("oauth = { resource = \"https://r\"; issuers = ("
	    " { issuer = \"https://i\"; introspection = { client_id = \"c\";"
	    " }; } ); };",
	    "t.conf:1: introspection needs a client_id and a client_secret");
	parse_err("oauth = { resource = \"https://r\"; issuers = ("
	    " { issuer = \"https://i\"; login = { client_secret ="
	    " \"${env:X}\"; }; } ); };",
	    "t.conf:1: login needs a client_id");
	parse_err("oauth = { resource = \"https://r\"; issuers = ("
	    " { issuer = \"https://i\"; login = { client_id = \"c\";"
	    " scope = \"x\"; }; } ); };",
	    "t.conf:1: login: unknown setting \"scope\" (client_id, "
	    "client_secret or auth)");
	parse_err("oauth = { resource = \"https://r\"; scopes = [ \"a b\" ];"
	    " issuers = ( { issuer = \"https://i\"; } ); };",
	    "t.conf:1: scopes: \"a b\" is not a scope (1 to 128 printable "
	    "characters, no space, '\"' or '\\')");
	parse_err("oauth = { resource = \"https://r\"; issuers = ("
	    " { issuer = \"https://i\"; jwks = \"x\"; } ); };",
	    "t.conf:1: issuer: unknown setting \"jwks\"");
	parse_err("clients = ( { name = \"a\";\n oauth = { subject = \"s\"; }; }"
	    " );",
	    "t.conf:2: client a: oauth needs the global oauth group");
	parse_err(OAUTH_MIN "clients = ( { name = \"a\";\n oauth = { }; } );",
	    "t.conf:3: a client's oauth needs a subject, scopes or claims to "
	    "match (else every token would be that client)");
	parse_err(OAUTH_MIN "clients = ( { name = \"a\"; } );",
	    "t.conf:2: a client needs a name and a token (or oauth = { ... })");
	parse_err(OAUTH_MIN "clients = ( { name = \"a\"; oauth = {"
	    " issuer = \"https://other\"; subject = \"s\"; }; } );",
	    "t.conf:2: client a: issuer \"https://other\" is not one of "
	    "oauth's issuers");
	parse_err(OAUTH_MIN "clients = ( { name = \"a\"; oauth = {"
	    " claims = { groups = 3; }; }; } );",
	    "t.conf:2: claims: groups must be a string");
	parse_err("oauth = { resource = \"https://r\"; default_client = \"x\";"
	    " issuers = ( { issuer = \"https://i\"; } ); };",
	    "t.conf:1: oauth: default_client \"x\" is not a client");
	parse_err("servers = ( { name = \"a\"; command = [ \"x\" ];\n"
	    " scopes = [ \"s\" ]; } );",
	    "t.conf:1: server a: scopes need the global oauth group");
}
END_TEST

/* An upstream's traffic policy and rate_limits: defaults, values,
 * errors, printed and read back, JSON and back, no restart for them. */
START_TEST(test_traffic)
{
	struct conf		*a, *b;
	struct server_conf	*copy;
	char			*text;

	a = parse_ok("servers = ( { name = \"d\"; command = [ \"x\" ]; },\n"
	    "  { name = \"t\"; command = [ \"x\" ]; max_concurrent = 1;\n"
	    "    max_queued = 0; queue_timeout = 3600; breaker_failures = 0;\n"
	    "    breaker_window = 1; breaker_cooldown = 86400; } );\n"
	    "rate_limits = ( { name = \"r-1\"; rate = 0.25; },\n"
	    "  { name = \"s\"; rate = 3; burst = 7; shared = true;\n"
	    "    client = \"ci-*\"; upstream = \"t\"; tool = \"t__a\\\"*\"; },\n"
	    "  { name = \"c\"; concurrent = 2; },\n"
	    "  { name = \"rc\"; rate = 5; concurrent = 1; shared = true; } );\n");
	ck_assert_uint_eq(a->servers[0].traffic.max_concurrent, 0);
	ck_assert_uint_eq(a->servers[0].traffic.max_queued, 64);
	ck_assert_uint_eq(a->servers[0].traffic.queue_timeout, 30);
	ck_assert_uint_eq(a->servers[0].traffic.breaker_failures, 5);
	ck_assert_uint_eq(a->servers[0].traffic.breaker_window, 60);
	ck_assert_uint_eq(a->servers[0].traffic.breaker_cooldown, 30);
	ck_assert_uint_eq(a->servers[1].traffic.max_concurrent, 1);
	ck_assert_uint_eq(a->servers[1].traffic.max_queued, 0);
	ck_assert_uint_eq(a->servers[1].traffic.breaker_failures, 0);
	ck_assert_uint_eq(a->servers[1].traffic.breaker_cooldown, 86400);
	ck_assert_uint_eq(a->nrate_limits, 4);
	ck_assert_str_eq(a->rate_limits[0].name, "r-1");
	ck_assert_uint_eq(a->rate_limits[0].concurrent, 0);
	ck_assert(a->rate_limits[2].rate == 0);
	ck_assert_uint_eq(a->rate_limits[2].concurrent, 2);
	ck_assert_uint_eq(a->rate_limits[3].burst, 5);
	ck_assert_uint_eq(a->rate_limits[3].concurrent, 1);
	ck_assert(a->rate_limits[0].rate == 0.25);
	ck_assert_uint_eq(a->rate_limits[0].burst, 1);
	ck_assert(!a->rate_limits[0].shared);
	ck_assert_ptr_null(a->rate_limits[0].tool);
	ck_assert_uint_eq(a->rate_limits[1].burst, 7);
	ck_assert(a->rate_limits[1].shared);
	ck_assert_str_eq(a->rate_limits[1].tool, "t__a\"*");
	/* Printed and read back. */
	text = print_conf(a);
	b = parse_ok(text);
	ck_assert_mem_eq(&a->servers[1].traffic, &b->servers[1].traffic,
	    sizeof a->servers[1].traffic);
	ck_assert_uint_eq(b->nrate_limits, 4);
	ck_assert(b->rate_limits[0].rate == 0.25);
	ck_assert_uint_eq(b->rate_limits[0].concurrent, 0);
	ck_assert(b->rate_limits[2].rate == 0);
	ck_assert_uint_eq(b->rate_limits[2].concurrent, 2);
	ck_assert(b->rate_limits[3].rate == 5);
	ck_assert_uint_eq(b->rate_limits[3].concurrent, 1);
	ck_assert_str_eq(b->rate_limits[1].client, "ci-*");
	ck_assert_str_eq(b->rate_limits[1].tool, "t__a\"*");
	free(text);
	/* As the worker's CONFIG and the supervisor's copy carry it. */
	copy = conf_server_copy(&a->servers[1]);
	ck_assert_mem_eq(&copy->traffic, &a->servers[1].traffic,
	    sizeof copy->traffic);
	/* A change of policy restarts nothing. */
	copy->traffic.max_concurrent = 9;
	ck_assert(conf_server_equal(copy, &a->servers[1]));
	conf_server_free(copy);
	free(copy);
	conf_free(a);
	conf_free(b);

	parse_err("servers = ( { name = \"t\"; command = [ \"x\" ];\n"
	    "  queue_timeout = 0; } );\n", "t.conf:2: queue_timeout must be "
	    "between 1 and 3600");
	parse_err("servers = ( { name = \"t\"; command = [ \"x\" ];\n"
	    "  max_concurrent = -1; } );\n", "t.conf:2: max_concurrent must "
	    "be between 0 and 100000");
	parse_err("rate_limits = ( { name = \"a\"; } );\n",
	    "t.conf:1: rate limit a has neither a rate nor concurrent");
	parse_err("rate_limits = ( { name = \"a\"; burst = 2; concurrent = 1; "
	    "} );\n", "t.conf:1: rate limit a has a burst but no rate");
	parse_err("rate_limits = ( { name = \"a\"; concurrent = 0; } );\n",
	    "t.conf:1: concurrent must be between 1 and 1000000");
	parse_err("rate_limits = ( { rate = 1; } );\n",
	    "t.conf:1: rate limit has no name");
	parse_err("rate_limits = ( { name = \"a b\"; rate = 1; } );\n",
	    "t.conf:1: rate limit name \"a b\" must be 1-48 characters of "
	    "A-Z a-z 0-9 _ - . starting with a letter or digit");
	parse_err("rate_limits = ( { name = \"a\"; rate = 0; } );\n",
	    "t.conf:1: rate must be a number of requests per second from "
	    "0.001 to 1000000");
	parse_err("rate_limits = ( { name = \"a\"; rate = 1; },\n"
	    "  { name = \"a\"; rate = 2; } );\n",
	    "t.conf:2: rate limit name \"a\" already used on line 1");
	parse_err("rate_limits = ( { name = \"a\"; rate = 1; per = 2; } );\n",
	    "t.conf:1: unknown rate limit setting \"per\"");
	parse_err("rate_limits = { name = \"a\"; };\n",
	    "t.conf:1: rate_limits must be a list: rate_limits = ( { ... }, "
	    "{ ... } );");
}
END_TEST

START_TEST(test_llm)
{
	struct conf		*conf;
	const struct llm_conf	*lc;
	struct server_conf	*srv;

	conf = parse_ok("llm = ( { name = \"gpt\"; provider = \"openai\";"
	    " model = \"gpt-4.1-mini\"; api_key = \"${env:OPENAI_API_KEY}\"; },"
	    " { name = \"local\"; provider = \"openai\"; model = \"q\";"
	    " url = \"http://127.0.0.1:8000/v1\"; },"
	    " { name = \"claude\"; provider = \"anthropic\"; model = \"c\";"
	    " api_key = \"${file:/etc/k}\"; },"
	    " { name = \"o\"; provider = \"ollama\"; model = \"llama3.2\"; } );"
	    "sampling = [ \"client\", \"llm:gpt\" ];"
	    "servers = ( { name = \"a\"; command = [ \"x\" ]; },"
	    " { name = \"b\"; command = [ \"y\" ]; sampling = [ \"llm:o\","
	    " \"tool:a/complete\", \"decline\" ]; } );");
	ck_assert_uint_eq(conf->nllms, 4);
	lc = conf_llm_find(conf, "gpt");
	ck_assert_str_eq(lc->url, "https://api.openai.com/v1");
	ck_assert_str_eq(lc->api_key, "${env:OPENAI_API_KEY}");
	ck_assert_uint_eq(lc->timeout, 120);
	ck_assert_uint_eq(lc->connect_timeout, 10);
	ck_assert_int_eq(lc->stream, 1);
	ck_assert_int_eq(lc->max_completion_tokens, 1);
	ck_assert_uint_eq(lc->max_response, 8 * 1024 * 1024);
	ck_assert_uint_eq(lc->max_concurrent, 16);
	ck_assert_int_eq(lc->tls_verify, 1);
	ck_assert_uint_eq(lc->budget.requests_per_minute, 0);
	/* A compatible server gets max_tokens unless told otherwise. */
	ck_assert_int_eq(conf_llm_find(conf, "local")->max_completion_tokens,
	    0);
	ck_assert_str_eq(conf_llm_find(conf, "claude")->url,
	    "https://api.anthropic.com");
	ck_assert_str_eq(conf_llm_find(conf, "o")->url,
	    "http://127.0.0.1:11434");
	ck_assert_ptr_null(conf_llm_find(conf, "nope"));
	/* The global chain is inherited; a server's own replaces it. */
	srv = &conf->servers[0];
	ck_assert_uint_eq(srv->nsampling, 2);
	ck_assert_int_eq(srv->sampling[1], STRATEGY_LLM);
	ck_assert_str_eq(srv->sampling_target[1], "gpt");
	ck_assert_ptr_null(srv->sampling_target[0]);
	srv = &conf->servers[1];
	ck_assert_uint_eq(srv->nsampling, 3);
	ck_assert_int_eq(srv->sampling[1], STRATEGY_TOOL);
	ck_assert_str_eq(srv->sampling_target[1], "a/complete");
	ck_assert_int_eq(srv->log_prompts, 0);
	ck_assert(conf_strategies_always(srv->sampling, srv->nsampling, 0));
	ck_assert(conf_strategies_always(conf->servers[0].sampling, 2, 0));
	conf_free(conf);
}
END_TEST

START_TEST(test_llm_errors)
{
	parse_err("llm = ( { name = \"a\"; provider = \"openai\"; model = \"m\";"
	    " api_key = \"sk-1234\"; } );",
	    "t.conf:1: api_key must be \"${env:NAME}\" or \"${file:/path}\": the "
	    "key itself is never written in the configuration");
	parse_err("llm = ( { name = \"a\"; provider = \"openai\"; model = \"m\";"
	    " api_key = \"Bearer ${env:X}\"; } );",
	    "t.conf:1: api_key must be \"${env:NAME}\" or \"${file:/path}\": the "
	    "key itself is never written in the configuration");
	parse_err("llm = ( { name = \"a\"; provider = \"gemini\"; model = \"m\";"
	    " } );", "t.conf:1: unknown provider \"gemini\" (openai, anthropic or "
	    "ollama)");
	parse_err("llm = ( { name = \"a\"; provider = \"openai\"; } );",
	    "t.conf:1: llm a: set model, the model used when no preference "
	    "picks another");
	parse_err("llm = ( { name = \"a\"; model = \"m\"; } );",
	    "t.conf:1: llm a: set provider (openai, anthropic or ollama)");
	parse_err("llm = ( { name = \"a\"; provider = \"openai\"; model = \"m\";"
	    " url = \"ftp://x\"; } );",
	    "t.conf:1: llm url must start with http:// or https://");
	parse_err("llm = ( { name = \"a\"; provider = \"ollama\"; model = \"m\";"
	    " max_tokens_field = \"max_tokens\"; } );",
	    "t.conf:1: llm a: max_tokens_field is for provider openai only");
	parse_err("llm = ( { name = \"a\"; provider = \"openai\"; model = \"m\";"
	    " scores = ( { model = \"x\"; cost = 0.5; } ); } );",
	    "t.conf:1: llm a: scores names \"x\", which is neither its model nor "
	    "one of its models");
	parse_err("llm = ( { name = \"a\"; provider = \"openai\"; model = \"m\";"
	    " scores = ( { model = \"m\"; cost = 1.5; } ); } );",
	    "t.conf:1: cost must be a number from 0 to 1");
	parse_err("llm = ( { name = \"a\"; provider = \"openai\"; model = \"m\";"
	    " budget = { requests = 1; }; } );",
	    "t.conf:1: budget: unknown setting \"requests\" "
	    "(requests_per_minute or tokens_per_day)");
	parse_err("llm = ( { name = \"a\"; provider = \"openai\"; model = \"m\";"
	    " }, { name = \"a\"; provider = \"ollama\"; model = \"m\"; } );",
	    "t.conf:1: llm name \"a\" already used on line 1");
	parse_err("llm = ( { name = \"a\"; provider = \"openai\"; model = \"m\";"
	    " colour = 1; } );", "t.conf:1: unknown llm setting \"colour\"");
	parse_err("sampling = [ \"llm:nope\" ];",
	    "t.conf:1: sampling: no llm provider is named \"nope\"");
	parse_err("servers = ( { name = \"s\"; command = [ \"x\" ];\n"
	    " sampling = [ \"tool:other/t\" ]; } );",
	    "t.conf:1: server s: sampling: tool:other/t names no server "
	    "\"other\"");
	parse_err("clients = ({ name = \"a\"; token = \"0123456789abcdef0\"; });\n"
	    "servers = ( { name = \"s\"; command = [ \"x\" ];\n"
	    " sampling = [ \"tool:u/t\" ]; },\n"
	    " { name = \"u\"; transport = \"http\"; url = "
	    "\"https://x.example/mcp\"; oauth = { identity = \"per-user\"; };"
	    " } );",
	    "t.conf:2: server s: sampling: tool:u/t: server \"u\" connects "
	    "per user (oauth.identity), and a tool: link's call has no user");
	parse_err("sampling = [ \"tool:x\" ];",
	    "t.conf:1: sampling: unknown strategy \"tool:x\" (client, llm:NAME, "
	    "tool:UPSTREAM/TOOL or decline)");
	{
		char	text[400], want[128];

		snprintf(text, sizeof text, "sampling = [ \"tool:u/%0300d\" ];",
		    0);
		snprintf(want, sizeof want, "t.conf:1: sampling: a strategy is "
		    "at most 256 bytes");
		parse_err(text, want);
	}
	parse_err("sampling = [ \"defaults\" ];",
	    "t.conf:1: sampling: unknown strategy \"defaults\" (client, "
	    "llm:NAME, tool:UPSTREAM/TOOL or decline)");
	parse_err("elicitation = [ \"llm:a\" ];",
	    "t.conf:1: elicitation: unknown strategy \"llm:a\" (client, "
	    "defaults or decline)");
	parse_err("llm = ( { name = \"a\"; provider = \"openai\"; model = \"m\";"
	    " } ); sampling = [ \"llm:a\", \"llm:a\" ];",
	    "t.conf:1: sampling: llm:a is listed twice");
	parse_err("servers = ( { name = \"s\"; command = [ \"x\" ];"
	    " log_prompts = 1; } );", "t.conf:1: log_prompts must be true or "
	    "false");
}
END_TEST

START_TEST(test_llm_json)
{
	struct conf	*conf;
	struct llm_conf	*copy;
	json_t		*j;
	char		 err[256];

	conf = parse_ok("llm = ( { name = \"a\"; provider = \"anthropic\";"
	    " model = \"m\"; models = [ \"n\" ]; api_key = \"${env:K}\";"
	    " scores = ( { model = \"n\"; cost = 0.25; speed = 0.5;"
	    " intelligence = 1; } ); budget = { requests_per_minute = 60;"
	    " tokens_per_day = 100000; }; timeout = 5; stream = false; } );");
	copy = conf_llm_copy(&conf->llms[0]);
	ck_assert(conf_llm_equal(copy, &conf->llms[0]));
	ck_assert_str_eq(copy->api_key, "${env:K}");
	ck_assert_uint_eq(copy->nscores, 1);
	ck_assert(copy->scores[0].cost == 0.25);
	ck_assert_uint_eq(copy->budget.tokens_per_day, 100000);
	copy->timeout = 6;
	ck_assert(!conf_llm_equal(copy, &conf->llms[0]));
	conf_llm_free(copy);
	free(copy);
	j = json_pack("{s:s}", "name", "a");
	ck_assert_ptr_null(conf_llm_from_json(j, err, sizeof err));
	json_decref(j);
	conf_free(conf);
}
END_TEST

START_TEST(test_print_long_name)
{
	/*
	 * A 48-character name has a 50-character default prefix, longer
	 * than a prefix may be set to: the printout must still parse.
	 */
	struct conf	*a, *b;
	char		*text;
	static const char name[] = "abcdefghijklmnopqrstuvwxyz0123456789"
			    "ABCDEFGHIJKL";

	a = parse_ok("servers = ( { name = \"abcdefghijklmnopqrstuvwxyz"
	    "0123456789ABCDEFGHIJKL\"; command = [ \"x\" ]; } );");
	ck_assert_uint_eq(strlen(a->servers[0].prefix), 50);
	ck_assert_mem_eq(a->servers[0].prefix, name, 48);
	text = print_conf(a);
	b = parse_ok(text);
	conf_same(a, b);
	free(text);
	conf_free(a);
	conf_free(b);
}
END_TEST

/*
 * Check that text holds each of the lines, whole and in this order; other
 * lines (settings added later) may come between them.
 */
static void
lines_in_order(const char *text, const char *const *lines)
{
	const char	*at = text, *found;
	size_t		 i, len;

	for (i = 0; lines[i] != NULL; i++) {
		len = strlen(lines[i]);
		for (found = at; (found = strstr(found, lines[i])) != NULL;
		    found++) {
			if ((found == text || found[-1] == '\n') &&
			    found[len] == '\n')
				break;
		}
		ck_assert_msg(found != NULL, "line \"%s\" missing or out of "
		    "order in:\n%s", lines[i], text);
		at = found + len;
	}
}

START_TEST(test_print_text)
{
	static const char *const want[] = {
		"listen = \"127.0.0.1:8931\";",
		"control = \"/run/mcp-supervisord/control.sock\";",
		"max_message = 33554432;",
		"max_body = 8388608;",
		"max_sessions = 10000;",
		"max_pending = 256;",
		"session_timeout = 1800;",
		"request_timeout = 300;",
		"server_request_timeout = 300;",
		"servers = (",
		"  {",
		"    name = \"d\";",
		"    transport = \"stdio\";",
		"    command = [ \"a\\\"b\", \"\\\\\\n\\t\\x01\" ];",
		"    env = { K = \"v\"; };",
		"    prefix = \"d__\";",
		"    isolation = \"shared\";",
		"    request_timeout = 300;",
		"    server_request_timeout = 300;",
		"    init_timeout = 60;",
		"    max_instances = 64;",
		"  }",
		");",
		NULL
	};
	struct conf	*conf;
	char		*text;

	conf = parse_ok("servers = ( { name = \"d\"; command = [ \"a\\\"b\","
	    " \"\\\\\\n\\t\\x01\" ]; env = { K = \"v\"; }; } );");
	ck_assert_str_eq(conf->servers[0].command[1], "\\\n\t\x01");
	text = print_conf(conf);
	lines_in_order(text, want);
	/* The last server setting, then the end of the list. */
	ck_assert_ptr_nonnull(strstr(text, "    max_message = 33554432;\n"
	    "  }\n);\n"));
	ck_assert_int_eq(text[strlen(text) - 1], '\n');
	free(text);
	conf_free(conf);

	/* No servers. */
	conf = parse_ok("");
	text = print_conf(conf);
	ck_assert_ptr_nonnull(strstr(text, "\nservers = ( );\n"));
	free(text);
	conf_free(conf);

	/* A fraction as briefly as reads back the same, and exactly. */
	conf = parse_ok("tracing = { endpoint = \"http://127.0.0.1:1/\"; "
	    "sample = 0.1234567; };");
	text = print_conf(conf);
	ck_assert_ptr_nonnull(strstr(text, "  sample = 0.1234567;\n"));
	free(text);
	conf_free(conf);
}
END_TEST

START_TEST(test_server_equal)
{
	struct conf	*a, *b;

	a = parse_ok("servers = ( { name = \"a\"; command = [ \"x\", \"y\" ]; "
	    "},"
	    " { name = \"b\"; command = [ \"x\" ]; env = { A = \"1\"; }; } );");
	b = parse_ok("servers = ( { name = \"a\"; command = [ \"x\" ]; },"
	    " { name = \"b\"; command = [ \"x\" ]; env = { A = \"2\"; }; } );");
	ck_assert(conf_server_equal(&a->servers[0], &a->servers[0]));
	ck_assert(!conf_server_equal(&a->servers[0], &b->servers[0]));
	ck_assert(!conf_server_equal(&b->servers[0], &a->servers[0]));
	ck_assert(!conf_server_equal(&a->servers[1], &b->servers[1]));
	ck_assert(!conf_server_equal(&a->servers[0], &a->servers[1]));
	conf_free(a);
	conf_free(b);
	a = parse_ok("servers = ( { name = \"a\"; command = [ \"x\" ]; } );");
	b = parse_ok("servers = ( { name = \"a\"; command = [ \"x\" ]; "
	    "max_instances = 2; } );");
	ck_assert(!conf_server_equal(&a->servers[0], &b->servers[0]));
	conf_free(b);
	b = parse_ok("servers = ( { name = \"a\"; command = [ \"x\" ]; "
	    "server_request_timeout = 2; } );");
	ck_assert(!conf_server_equal(&a->servers[0], &b->servers[0]));
	conf_free(b);
	b = parse_ok("servers = ( { name = \"a\"; command = [ \"x\" ]; "
	    "prefix = \"a__\"; request_timeout = 300; } );");
	ck_assert(conf_server_equal(&a->servers[0], &b->servers[0]));
	conf_free(b);
	conf_free(a);
}
END_TEST

START_TEST(test_json_round_trip)
{
	struct conf		*conf;
	struct server_conf	*back;
	json_t			*j;
	char			 err[256];
	size_t			 i;

	conf = parse_ok(print_cases[2]);
	for (i = 0; i < conf->nservers; i++) {
		j = conf_server_to_json(&conf->servers[i]);
		ck_assert_ptr_nonnull(j);
		back = conf_server_from_json(j, err, sizeof err);
		ck_assert_msg(back != NULL, "%s", err);
		ck_assert(conf_server_equal(&conf->servers[i], back));
		conf_server_free(back);
		free(back);
		json_decref(j);
		back = conf_server_copy(&conf->servers[i]);
		ck_assert(conf_server_equal(&conf->servers[i], back));
		ck_assert_ptr_ne(back->name, conf->servers[i].name);
		ck_assert_int_eq(back->at.line, conf->servers[i].at.line);
		conf_server_free(back);
		free(back);
	}
	/* The JSON form of the first server. */
	j = conf_server_to_json(&conf->servers[0]);
	ck_assert_str_eq(json_string_value(json_object_get(j, "name")), "fs");
	ck_assert_str_eq(json_string_value(json_object_get(j, "transport")),
	    "stdio");
	ck_assert_str_eq(json_string_value(json_object_get(j, "isolation")),
	    "per-session");
	ck_assert_str_eq(json_string_value(json_object_get(j, "prefix")),
	    "fs__");
	ck_assert_str_eq(json_string_value(json_object_get(j, "cwd")),
	    "/tmp/a b");
	ck_assert_int_eq(json_integer_value(json_object_get(j,
	    "init_timeout")), 3600);
	ck_assert_int_eq(json_integer_value(json_object_get(j,
	    "request_timeout")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(j,
	    "server_request_timeout")), 77);
	ck_assert_int_eq(json_integer_value(json_object_get(j,
	    "max_instances")), 10000);
	ck_assert_int_eq(json_integer_value(json_object_get(j,
	    "max_message")), 1073741824);
	ck_assert_uint_eq(json_array_size(json_object_get(j, "command")), 5);
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(j,
	    "env"), 0)), "X=a\"b");
	ck_assert_ptr_null(json_object_get(j, "url"));
	ck_assert_ptr_null(json_object_get(j, "pass_env"));
	json_decref(j);
	conf_free(conf);

	/* pass_env goes there and back (the worker's copy is compared). */
	conf = parse_ok(print_cases[4]);
	j = conf_server_to_json(&conf->servers[0]);
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(j,
	    "pass_env"), 2)), "GITHUB_TOKEN");
	back = conf_server_from_json(j, err, sizeof err);
	ck_assert_msg(back != NULL, "%s", err);
	ck_assert(conf_server_equal(&conf->servers[0], back));
	ck_assert(!conf_server_equal(&conf->servers[1], back));
	conf_server_free(back);
	free(back);
	json_decref(j);
	conf_free(conf);
}
END_TEST

/* from_json must refuse this JSON value. */
static void
from_json_bad(json_t *j, const char *what)
{
	struct server_conf	*s;
	char			 err[256];

	err[0] = '\0';
	s = conf_server_from_json(j, err, sizeof err);
	ck_assert_msg(s == NULL, "accepted %s", what);
	ck_assert_msg(strncmp(err, "bad server configuration", 24) == 0,
	    "%s: %s", what, err);
	json_decref(j);
}

/* A copy of o with member key set to v (or removed if v is NULL). */
static json_t *
with(const json_t *o, const char *key, json_t *v)
{
	json_t	*c = json_deep_copy(o);

	if (v == NULL)
		ck_assert_int_eq(json_object_del(c, key), 0);
	else
		json_object_set_new(c, key, v);
	return (c);
}

START_TEST(test_json_bad)
{
	static const char *const required[] = { "name", "transport",
	    "prefix", "isolation", "request_timeout",
	    "server_request_timeout", "init_timeout", "max_instances",
	    "max_message", "command", NULL };
	static const char *const positive[] = { "request_timeout",
	    "server_request_timeout", "init_timeout", "max_instances",
	    "max_message", NULL };
	struct conf		*conf;
	struct server_conf	*s;
	json_t			*good, *j;
	char			 err[256];
	size_t			 i;

	conf = parse_ok("servers = ( { name = \"a\"; command = [ \"x\" ]; "
	    "prefix = \"p\"; init_timeout = 2; } );");
	good = conf_server_to_json(&conf->servers[0]);
	ck_assert_ptr_nonnull(good);
	s = conf_server_from_json(good, err, sizeof err);
	ck_assert_msg(s != NULL, "%s", err);
	ck_assert_str_eq(s->name, "a");
	ck_assert_str_eq(s->prefix, "p");
	ck_assert_uint_eq(s->init_timeout, 2);
	ck_assert_ptr_null(s->env);
	ck_assert(conf_server_equal(s, &conf->servers[0]));
	conf_server_free(s);
	free(s);

	from_json_bad(json_array(), "[]");
	from_json_bad(json_object(), "{}");
	for (i = 0; required[i] != NULL; i++)
		from_json_bad(with(good, required[i], NULL), required[i]);
	for (i = 0; positive[i] != NULL; i++) {
		from_json_bad(with(good, positive[i], json_integer(0)),
		    positive[i]);
		from_json_bad(with(good, positive[i], json_integer(-2)),
		    positive[i]);
		from_json_bad(with(good, positive[i], json_string("4k")),
		    positive[i]);
	}
	from_json_bad(with(good, "name", json_integer(1)), "name 1");
	from_json_bad(with(good, "transport", json_string("tcp")), "tcp");
	from_json_bad(with(good, "isolation", json_string("solo")), "solo");
	from_json_bad(with(good, "command", json_string("x")), "command x");
	j = json_pack("[s,i]", "x", 1);
	from_json_bad(with(good, "command", j), "command [x,1]");
	j = json_pack("{s:s}", "A", "1");
	from_json_bad(with(good, "env", j), "env object");
	j = json_pack("[n]");
	from_json_bad(with(good, "env", j), "env [null]");
	/* A remote transport needs a url string. */
	j = with(good, "transport", json_string("http"));
	from_json_bad(j, "http without url");
	j = with(good, "transport", json_string("ws"));
	json_object_set_new(j, "url", json_integer(5));
	from_json_bad(j, "ws url 5");

	json_decref(good);
	conf_free(conf);
}
END_TEST

START_TEST(test_names)
{
	ck_assert_str_eq(conf_transport_name(TRANSPORT_STDIO), "stdio");
	ck_assert_str_eq(conf_transport_name(TRANSPORT_HTTP), "http");
	ck_assert_str_eq(conf_transport_name(TRANSPORT_SSE), "sse");
	ck_assert_str_eq(conf_transport_name(TRANSPORT_WS), "ws");
	ck_assert_str_eq(conf_isolation_name(ISOLATION_SHARED), "shared");
	ck_assert_str_eq(conf_isolation_name(ISOLATION_PER_SESSION),
	    "per-session");
}
END_TEST

/* An upstream's oauth: read, printed, carried to the worker, compared. */
START_TEST(test_upstream_oauth)
{
	struct conf		*a, *b;
	struct server_conf	*copy;
	char			*text;

	a = parse_ok("servers = ( { name = \"r\"; transport = \"http\";"
	    " url = \"https://mcp.example/mcp\"; oauth = {"
	    " client_id = \"gw\"; client_secret = \"${file:/run/s}\";"
	    " issuer = \"https://login.example/t\";"
	    " scopes = [ \"mcp:tools\", \"offline_access\" ];"
	    " grant = \"client_credentials\"; }; },"
	    " { name = \"l\"; transport = \"http\";"
	    " url = \"https://mcp.example/l\"; oauth = { }; },"
	    " { name = \"s\"; transport = \"sse\";"
	    " url = \"https://mcp.example/sse\"; oauth = {"
	    " client_id = \"gw\"; }; },"
	    " { name = \"w\"; transport = \"ws\";"
	    " url = \"wss://mcp.example/ws\"; oauth = { }; } );");
	ck_assert_ptr_nonnull(a->servers[0].oauth);
	/* sse and ws upstreams are OAuth clients as http ones are. */
	ck_assert_str_eq(a->servers[2].oauth->client_id, "gw");
	ck_assert_int_eq(a->servers[3].oauth->grant,
	    UPOAUTH_AUTHORIZATION_CODE);
	ck_assert_str_eq(a->servers[0].oauth->client_id, "gw");
	ck_assert_str_eq(a->servers[0].oauth->client_secret, "${file:/run/s}");
	ck_assert_str_eq(a->servers[0].oauth->issuer, "https://login.example/t");
	ck_assert_ptr_null(a->servers[1].oauth->issuer);
	ck_assert_str_eq(a->servers[0].oauth->scopes[1], "offline_access");
	ck_assert_int_eq(a->servers[0].oauth->grant,
	    UPOAUTH_CLIENT_CREDENTIALS);
	ck_assert_int_eq(a->servers[1].oauth->grant,
	    UPOAUTH_AUTHORIZATION_CODE);
	ck_assert_ptr_null(a->servers[1].oauth->client_id);
	text = print_conf(a);
	b = parse_ok(text);
	free(text);
	ck_assert(conf_server_equal(&a->servers[0], &b->servers[0]));
	ck_assert(conf_server_equal(&a->servers[1], &b->servers[1]));
	ck_assert(conf_server_equal(&a->servers[2], &b->servers[2]));
	ck_assert(conf_server_equal(&a->servers[3], &b->servers[3]));
	copy = conf_server_copy(&a->servers[0]);
	ck_assert(conf_server_equal(copy, &a->servers[0]));
	/* Another secret restarts the worker. */
	free(copy->oauth->client_secret);
	copy->oauth->client_secret = strdup("${file:/run/t}");
	ck_assert(!conf_server_equal(copy, &a->servers[0]));
	conf_server_free(copy);
	free(copy);
	/* So does another issuer; the copy (the worker's) keeps it. */
	copy = conf_server_copy(&a->servers[0]);
	ck_assert_str_eq(copy->oauth->issuer, "https://login.example/t");
	free(copy->oauth->issuer);
	copy->oauth->issuer = strdup("https://login.example/u");
	ck_assert(!conf_server_equal(copy, &a->servers[0]));
	conf_server_free(copy);
	free(copy);
	ck_assert(!conf_server_equal(&a->servers[0], &a->servers[1]));
	conf_free(a);
	conf_free(b);

	parse_err("servers = ( { name = \"r\"; transport = \"http\";"
	    " url = \"https://m/\";\n oauth = { grant = \"client_credentials\";"
	    " client_id = \"x\"; }; } );",
	    "t.conf:2: oauth: client_credentials needs client_id and "
	    "client_secret");
	parse_err("servers = ( { name = \"r\"; transport = \"http\";"
	    " url = \"https://m/\";\n oauth = { client_secret = \"${env:S}\"; }; } );",
	    "t.conf:2: oauth: a client_secret needs its client_id");
	parse_err("servers = ( { name = \"r\"; transport = \"http\";"
	    " url = \"https://m/\"; oauth = { client_id = \"x\";\n"
	    " client_secret = \"hunter2\"; }; } );",
	    "t.conf:2: client_secret must be a ${file:/path} or ${env:NAME} "
	    "reference, not the secret itself");
	parse_err("servers = ( { name = \"r\"; transport = \"http\";"
	    " url = \"https://m/\";\n oauth = { grant = \"implicit\"; }; } );",
	    "t.conf:2: oauth: grant must be \"authorization_code\" or "
	    "\"client_credentials\"");
	parse_err("servers = ( { name = \"r\"; transport = \"http\";"
	    " url = \"https://m/\";\n oauth = { token = \"x\"; }; } );",
	    "t.conf:2: upstream oauth: unknown setting \"token\" (client_id, "
	    "client_secret, issuer, scopes, grant or identity)");
	parse_err("servers = ( { name = \"r\"; transport = \"http\";"
	    " url = \"https://m/\";\n oauth = { issuer = \"as.example\"; }; } );",
	    "t.conf:2: oauth: issuer must be an https:// URL");
	parse_err("servers = ( { name = \"r\"; command = [ \"x\" ];\n"
	    " oauth = { }; } );",
	    "t.conf:2: server r: oauth is only for http, sse and ws");
}
END_TEST

START_TEST(test_oauth_client)
{
	struct conf	*a, *b;
	char		*text;

	a = parse_ok("oauth_client = { redirect_uri = "
	    "\"https://gw.example.com/login/back\"; client_name = \"GW\";"
	    " client_metadata_url = \"https://gw.example.com/client.json\"; };");
	ck_assert_str_eq(a->oauth_client->redirect_uri,
	    "https://gw.example.com/login/back");
	ck_assert_str_eq(a->oauth_client->client_name, "GW");
	text = print_conf(a);
	b = parse_ok(text);
	free(text);
	ck_assert_str_eq(b->oauth_client->client_metadata_url,
	    "https://gw.example.com/client.json");
	conf_free(a);
	conf_free(b);
	a = parse_ok("listen = \"127.0.0.1:8931\";");
	ck_assert_ptr_null(a->oauth_client);
	conf_free(a);

	parse_err("oauth_client = {\n redirect_uri = \"http://gw.example.com/cb\"; };",
	    "t.conf:2: redirect_uri must be an https:// URL (http:// only on "
	    "loopback)");
	parse_err("oauth_client = {\n redirect_uri = \"http://127.0.0.1:1\"; };",
	    "t.conf:2: redirect_uri needs a path (the gateway serves it)");
	parse_err("oauth_client = {\n redirect_uri = \"http://127.0.0.1:1/mcp\"; };",
	    "t.conf:2: redirect_uri: the gateway serves /mcp already");
	parse_err("oauth_client = {\n client_metadata_url = "
	    "\"http://127.0.0.1/c.json\"; };",
	    "t.conf:2: client_metadata_url must be an https:// URL with a "
	    "path");
	parse_err("oauth_client = {\n client_metadata_url = \"https://g/\"; };",
	    "t.conf:2: client_metadata_url must be an https:// URL with a "
	    "path");
	parse_err("oauth_client = { redirect_uri = \"https://g/a\";\n"
	    " client_metadata_url = \"https://g/a\"; };",
	    "t.conf:1: oauth_client: redirect_uri and client_metadata_url "
	    "must have different paths");
	parse_err("oauth_client = {\n secret = \"x\"; };",
	    "t.conf:2: oauth_client: unknown setting \"secret\" (redirect_uri, "
	    "client_name or client_metadata_url)");
	/* The WebSocket's path is another of the gateway's: where it is. */
	parse_err("oauth_client = {\n redirect_uri = \"http://127.0.0.1:1/ws\"; };",
	    "t.conf:1: redirect_uri: the gateway serves /ws already (ws_path)");
	a = parse_ok("ws_path = \"/socket\";\noauth_client = {\n redirect_uri = "
	    "\"http://127.0.0.1:1/ws\"; };");
	conf_free(a);
	parse_err("ws_path = \"/socket\";\noauth_client = {\n redirect_uri = "
	    "\"http://127.0.0.1:1/socket\"; };",
	    "t.conf:1: ws_path /socket: the gateway serves it already "
	    "(redirect_uri)");
}
END_TEST

/* ws_path is none of the paths the gateway serves for something else. */
START_TEST(test_ws_path_reserved)
{
	static const char *const taken[] = { "/mcp", "/sse", "/messages",
	    "/metrics", "/healthz", "/readyz", "/.well-known",
	    "/.well-known/x", "/oauth/callback" };
	char	text[128], want[256];
	size_t	i;

	for (i = 0; i < sizeof taken / sizeof taken[0]; i++) {
		snprintf(text, sizeof text, "\nws_path = \"%s\";", taken[i]);
		snprintf(want, sizeof want, "t.conf:2: ws_path %s: the gateway "
		    "serves it already (%s)", taken[i],
		    i == 7 ? "/.well-known" : i == 8 ? "default redirect_uri "
		    "/oauth/callback" : taken[i]);
		parse_err(text, want);
	}
	conf_free(parse_ok("ws_path = \"/.well-knowns\";"));
	conf_free(parse_ok("ws_path = \"\";"));
}
END_TEST

static Suite *
conf_suite(void)
{
	Suite	*s = suite_create("conf");
	TCase	*tc;

	tc = tcase_create("parse");
	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_listen_user);
	tcase_add_test(tc, test_full);
	tcase_add_test(tc, test_globals_after_servers);
	tcase_add_test(tc, test_sizes);
	tcase_add_test(tc, test_ints);
	tcase_add_test(tc, test_name_lengths);
	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_metrics_rights);
	tcase_add_test(tc, test_llm);
	tcase_add_test(tc, test_pass_env);
	tcase_add_test(tc, test_traffic);
	suite_add_tcase(s, tc);

	tc = tcase_create("errors");
	tcase_add_test(tc, test_errors);
	tcase_add_test(tc, test_load);
	tcase_add_test(tc, test_load_included);
	tcase_add_test(tc, test_err_truncated);
	tcase_add_test(tc, test_llm_errors);
	tcase_add_test(tc, test_oauth);
	tcase_add_test(tc, test_oauth_errors);
	tcase_add_test(tc, test_upstream_oauth);
	tcase_add_test(tc, test_oauth_client);
	tcase_add_test(tc, test_ws_path_reserved);
	suite_add_tcase(s, tc);

	tc = tcase_create("print");
	tcase_add_loop_test(tc, test_print_round_trip, 0,
	    sizeof print_cases / sizeof print_cases[0]);
	tcase_add_test(tc, test_print_text);
	tcase_add_test(tc, test_catalog_settings);
	tcase_add_test(tc, test_print_long_name);
	tcase_add_test(tc, test_server_equal);
	suite_add_tcase(s, tc);

	tc = tcase_create("json");
	tcase_add_test(tc, test_json_round_trip);
	tcase_add_test(tc, test_json_bad);
	tcase_add_test(tc, test_llm_json);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr = srunner_create(conf_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
