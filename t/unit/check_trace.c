/* SPDX-License-Identifier: ISC */
/*
 * Traces: the W3C traceparent and tracestate read strictly
 * (common/traceparent.c), and the gateway's spans (supervisor/trace.c):
 * a client's context from params._meta or the HTTP headers continued, a
 * new trace when sampled, the call's context passed on in params._meta,
 * a SERVER span and a CLIENT span per call with the attributes of the
 * MCP semantic conventions and never the arguments, batches to mcp-otel
 * (a stand-in here), bounded, dropping and counting.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "conf.h"
#include "frame.h"
#include "jsonrpc.h"
#include "supervisor.h"
#include "traceparent.h"

#include "sup_check.h"

#define TP_CLIENT	"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
#define TRACE_CLIENT	"0af7651916cd43dd8448eb211c80319c"
#define SPAN_CLIENT	"b7ad6b7169203331"

static const char catalog_echo[] = "{\"tools\":[{\"name\":\"echo\","
    "\"inputSchema\":{\"type\":\"object\"}}]}";

/* A configuration with tracing (extra: more of its settings), or none. */
static void
start(const char *tracing)
{
	char	text[2048];

	snprintf(text, sizeof text, SUP_BASE "%s%s%s"
	    "servers = (\n"
	    "  { name = \"a\"; transport = \"stdio\"; command = [ \"true\" ]; }\n"
	    ");\n", tracing != NULL ? "tracing = { endpoint = "
	    "\"http://127.0.0.1:4318/v1/traces\"; " : "",
	    tracing != NULL ? tracing : "", tracing != NULL ? " };\n" : "");
	sup_catalog("a", catalog_echo);
	sup_start(text);
}

static void
teardown(void)
{
	sup_stop();
}

/* The request the worker got, parsed (a new reference). */
static json_t *
forwarded(struct sup_frame **fp)
{
	struct sup_frame	*f;

	ck_assert_ptr_nonnull(f = sup_take(sup_worker("a"), MSG_REQUEST));
	*fp = f;
	return (sup_frame_json(f));
}

/* The traceparent a forwarded request carries in _meta (never NULL). */
static const char *
tp_of(json_t *o)
{
	const char	*tp = sup_jstr(o, "params._meta.traceparent");

	ck_assert_msg(tp != NULL, "no _meta.traceparent in %s", sup_dump(o));
	return (tp);
}

/* The spans mcp-otel got in its next batch (a new reference). */
static json_t *
exported(void)
{
	struct sup_worker	*w = sup_provider("otel");
	struct sup_frame	*f;
	json_t			*o, *spans;

	ck_assert_ptr_nonnull(w);
	sup_advance(1);
	ck_assert_ptr_nonnull(f = sup_take(w, MSG_OTEL_SPANS));
	o = sup_frame_json(f);
	spans = json_incref(json_object_get(o, "spans"));
	json_decref(o);
	ck_assert(json_is_array(spans));
	return (spans);
}

/* A span of a kind (2 SERVER, 3 CLIENT) in a batch (borrowed). */
static json_t *
span_of(json_t *spans, int kind)
{
	size_t	 i;
	json_t	*s;

	json_array_foreach(spans, i, s) {
		if (json_integer_value(json_object_get(s, "kind")) == kind)
			return (s);
	}
	ck_abort_msg("no span of kind %d in %s", kind, sup_dump(spans));
	return (NULL);
}

/* A span's attribute's string (or intValue) value, or NULL. */
static const char *
attr(json_t *span, const char *key)
{
	size_t	 i;
	json_t	*a, *v;

	json_array_foreach(json_object_get(span, "attributes"), i, a) {
		if (strcmp(json_string_value(json_object_get(a, "key")),
		    key) != 0)
			continue;
		v = json_object_get(a, "value");
		if (json_object_get(v, "stringValue") != NULL)
			return (json_string_value(json_object_get(v,
			    "stringValue")));
		return (json_string_value(json_object_get(v, "intValue")));
	}
	return (NULL);
}

/* Call a__echo with _meta members (JSON text, or "" for none). */
static struct sup_resp *
call(struct sup_client *cl, const char *headers, const char *meta)
{
	return (sup_post_with(cl, headers, "{\"jsonrpc\":\"2.0\",\"id\":7,"
	    "\"method\":\"tools/call\",\"params\":{\"name\":\"a__echo\","
	    "\"arguments\":{\"text\":\"SECRET-ARGUMENT\"}%s%s%s}}",
	    meta[0] != '\0' ? ",\"_meta\":{" : "", meta,
	    meta[0] != '\0' ? "}" : ""));
}

START_TEST(test_parse)
{
	struct tracectx	ctx;
	char		out[TP_LEN + 1];
	static const char *const bad[] = {
		"00-0AF7651916CD43DD8448EB211C80319C-B7AD6B7169203331-01",
		"01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
		"ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
		"00-00000000000000000000000000000000-b7ad6b7169203331-01",
		"00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
		"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-0",
		"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-010",
		"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-0g",
		"00_0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
		"00-0af7651916cd43dd8448eb211c80319c_b7ad6b7169203331-01",
		"00-0af7651916cd43dd8448eb211c80319cb7ad6b7169203331--01",
		" 00-0af7651916cd43dd8448eb211c80319c-b7ad6b716920333-01",
		"",
	};
	size_t		i;

	ck_assert_int_eq(tp_parse(TP_CLIENT, strlen(TP_CLIENT), &ctx), 0);
	ck_assert_int_eq(ctx.trace_id[0], 0x0a);
	ck_assert_int_eq(ctx.trace_id[15], 0x9c);
	ck_assert_int_eq(ctx.span_id[0], 0xb7);
	ck_assert_int_eq(ctx.span_id[7], 0x31);
	ck_assert_int_eq(ctx.flags, TP_SAMPLED);
	tp_format(&ctx, out);
	ck_assert_str_eq(out, TP_CLIENT);
	/* Flags other than sampled are kept as they are. */
	ck_assert_int_eq(tp_parse("00-0af7651916cd43dd8448eb211c80319c-"
	    "b7ad6b7169203331-fe", TP_LEN, &ctx), 0);
	ck_assert_int_eq(ctx.flags, 0xfe);
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
		ck_assert_msg(tp_parse(bad[i], strlen(bad[i]), &ctx) != 0,
		    "%s was taken", bad[i]);
}
END_TEST

START_TEST(test_tracestate)
{
	char	big[TS_MAX + 2], many[40 * 6];
	size_t	i;

	ck_assert(ts_valid("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE", 39));
	ck_assert(ts_valid("rojo=1, ,congo=2 ", 17));
	ck_assert(ts_valid("fw529a3039@dt=W2lnbm9yZWQ", 25));
	ck_assert(ts_valid("", 0));
	ck_assert(!ts_valid("Rojo=1", 6));
	ck_assert(!ts_valid("rojo", 4));
	ck_assert(!ts_valid("rojo=", 5));
	ck_assert(!ts_valid("rojo=a=b", 8));
	ck_assert(!ts_valid("rojo=a\tb", 8));
	ck_assert(!ts_valid("rojo=\x01", 6));
	ck_assert(!ts_valid("@dt=1", 5));
	ck_assert(!ts_valid("a@Dt=1", 6));
	memset(big, 'a', sizeof big);
	big[0] = 'k';
	big[1] = '=';
	ck_assert(!ts_valid(big, TS_MAX + 1));
	/* 33 members are too many, 32 are not. */
	many[0] = '\0';
	for (i = 0; i < 33; i++)
		snprintf(many + strlen(many), sizeof many - strlen(many),
		    "%sk%zu=1", i > 0 ? "," : "", i);
	ck_assert(!ts_valid(many, strlen(many)));
	*strrchr(many, ',') = '\0';
	ck_assert(ts_valid(many, strlen(many)));
}
END_TEST

/* _meta's context: a key twice or not a string is none. */
START_TEST(test_from_meta)
{
	static const char *const msgs[] = {
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":"
		"{\"_meta\":{\"traceparent\":\"" TP_CLIENT "\",\"tracestate\":"
		"\"rojo=1\"}}}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":"
		"{\"_meta\":{\"traceparent\":\"" TP_CLIENT "\",\"traceparent\":"
		"\"" TP_CLIENT "\"}}}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":"
		"{\"_meta\":{\"traceparent\":5}}}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":"
		"{\"_meta\":{\"traceparent\":\"" TP_CLIENT "\",\"tracestate\":"
		"\"Bad=1\"}}}",
	};
	struct jrpc	 m;
	struct tracectx	 ctx;
	const char	*why;
	char		 ts[TS_MAX + 1], tpl[TP_HDR_MAX], tsl[TS_HDR_MAX];

	ck_assert_int_eq(jrpc_scan(msgs[0], strlen(msgs[0]), &m, &why), 0);
	ck_assert_int_eq(tp_from_meta(&m, &ctx, ts), 0);
	ck_assert_str_eq(ts, "rojo=1");
	ck_assert_int_eq(tp_header_lines(&m, tpl, tsl), 0);
	ck_assert_str_eq(tpl, "traceparent: " TP_CLIENT);
	ck_assert_str_eq(tsl, "tracestate: rojo=1");
	ck_assert_int_eq(jrpc_scan(msgs[1], strlen(msgs[1]), &m, &why), 0);
	ck_assert_int_eq(tp_from_meta(&m, &ctx, ts), -1);
	ck_assert_int_eq(jrpc_scan(msgs[2], strlen(msgs[2]), &m, &why), 0);
	ck_assert_int_eq(tp_from_meta(&m, &ctx, ts), -1);
	/* A bad tracestate is dropped; the traceparent stays. */
	ck_assert_int_eq(jrpc_scan(msgs[3], strlen(msgs[3]), &m, &why), 0);
	ck_assert_int_eq(tp_from_meta(&m, &ctx, ts), 0);
	ck_assert_str_eq(ts, "");
}
END_TEST

/* tracing = { ... }: errors at their line; defaults; printed. */
START_TEST(test_conf)
{
	static const char *const bad[][2] = {
		{ "tracing = { sample = 1.0; };", "t.conf:4: tracing needs an endpoint" },
		{ "tracing = { endpoint = \"ftp://x/v1/traces\"; };",
		    "t.conf:4: tracing: endpoint must be" },
		{ "tracing = { endpoint = \"http://u:p@x/v1/traces\"; };",
		    "t.conf:4: tracing: endpoint must be" },
		{ "tracing = {\n endpoint = \"http://x/\";\n sample = 1.5; };",
		    "t.conf:6: tracing: sample must be a number from 0 to 1" },
		{ "tracing = { endpoint = \"http://x/\"; colour = 1; };",
		    "t.conf:4: tracing: unknown setting \"colour\"" },
		{ "tracing = { endpoint = \"http://x/\"; batch = 10; queue = 5; };",
		    "t.conf:4: tracing: queue (5) is smaller than batch (10)" },
		{ "tracing = { endpoint = \"http://x/\"; headers = { Host = \"h\"; }; };",
		    "t.conf:4: headers: Host is not a header name" },
	};
	struct conf	*c;
	char		 text[1024], err[512];
	size_t		 i;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		snprintf(text, sizeof text, SUP_BASE "%s\n", bad[i][0]);
		/* SUP_BASE is three lines: the group is on the fourth. */
		c = conf_parse(text, "t.conf", err, sizeof err);
		ck_assert_msg(c == NULL, "%s was taken", bad[i][0]);
		ck_assert_msg(strstr(err, bad[i][1]) != NULL, "%s: %s",
		    bad[i][0], err);
	}
	c = conf_parse(SUP_BASE "tracing = { endpoint = \"http://x/v1/traces\"; };",
	    "t.conf", err, sizeof err);
	ck_assert_msg(c != NULL, "%s", err);
	ck_assert_str_eq(c->tracing->service_name, "mcp-supervisord");
	ck_assert(c->tracing->sample == 1.0);
	ck_assert_uint_eq(c->tracing->batch, CONF_TRACE_BATCH);
	ck_assert_uint_eq(c->tracing->queue, CONF_TRACE_QUEUE);
	ck_assert_uint_eq(c->tracing->timeout, 10);
	conf_free(c);
	c = conf_parse(SUP_BASE, "t.conf", err, sizeof err);
	ck_assert_ptr_null(c->tracing);
	conf_free(c);
}
END_TEST

/* Legacy HTTP+SSE: the context of each POST /messages, for its message. */
START_TEST(test_legacy_header)
{
	struct sup_resp		*r;
	struct sup_frame	*f;
	const char		*q;
	json_t			*o;
	char			 path[256];
	static const char	 h[] = "Content-Type: application/json\r\n";

	start("sample = 0.0;");
	r = sup_http("GET", "/sse", "Accept: text/event-stream\r\n", NULL);
	ck_assert_ptr_nonnull(q = strstr(r->events[0].data, "/messages?"));
	snprintf(path, sizeof path, "%s", q);
	sup_http("POST", path, h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"initialize\",\"params\":{\"protocolVersion\":\"2024-11-05\","
	    "\"capabilities\":{},\"clientInfo\":{\"name\":\"old\","
	    "\"version\":\"1\"}}}");
	sup_http("POST", path, h, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/initialized\"}");
	ck_assert_int_eq(sup_http("POST", path, "Content-Type: application/json"
	    "\r\ntraceparent: " TP_CLIENT "\r\n", "{\"jsonrpc\":\"2.0\","
	    "\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":"
	    "\"a__echo\"}}")->status, 202);
	o = forwarded(&f);
	ck_assert(strncmp(tp_of(o),
	    "00-" TRACE_CLIENT "-", 36) == 0);
	sup_reply(sup_worker("a"), f, "{\"content\":[]}");
	json_decref(o);
	/* The next POST has none: its message is not traced (sample 0). */
	sup_http("POST", path, h, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"a__echo\"}}");
	o = forwarded(&f);
	ck_assert(strstr(f->text, "traceparent") == NULL);
	sup_reply(sup_worker("a"), f, "{\"content\":[]}");
	json_decref(o);
	sup_hangup(r->conn);
}
END_TEST

/* -nv prints tracing as it reads it back. */
START_TEST(test_conf_print)
{
	struct conf	*c, *d;
	char		*buf = NULL, err[512];
	size_t		 len = 0;
	FILE		*f;

	c = conf_parse(SUP_BASE "tracing = { endpoint = \"https://x/v1/traces\"; "
	    "sample = 0.25; service_name = \"gw\"; batch = 10; queue = 20; "
	    "timeout = 3; headers = { X-Key = \"${file:/k}\"; }; };",
	    "t.conf", err, sizeof err);
	ck_assert_msg(c != NULL, "%s", err);
	ck_assert_ptr_nonnull(f = open_memstream(&buf, &len));
	conf_print(c, f);
	fclose(f);
	d = conf_parse(buf, "printed", err, sizeof err);
	ck_assert_msg(d != NULL, "%s: %s", err, buf);
	ck_assert(conf_trace_equal(c->tracing, d->tracing));
	ck_assert_str_eq(d->tracing->headers[0], "X-Key: ${file:/k}");
	conf_free(c);
	conf_free(d);
	free(buf);
}
END_TEST

/* Off by default: nothing is started and the message passes as it is. */
START_TEST(test_off_by_default)
{
	struct sup_client	*cl;
	struct sup_frame	*f;
	json_t			*o;

	start(NULL);
	ck_assert_ptr_null(sup_provider("otel"));
	cl = sup_session(NULL, NULL);
	call(cl, NULL, "\"traceparent\":\"" TP_CLIENT "\"");
	o = forwarded(&f);
	ck_assert_jstr(o, "params._meta.traceparent", TP_CLIENT);
	ck_assert(strstr(f->text, "\"_meta\":{\"traceparent\":\"" TP_CLIENT
	    "\"}") != NULL);
	json_decref(o);
}
END_TEST

/* The client's _meta context: SERVER span its child, CLIENT span ours,
 * the upstream's parent the CLIENT span; attributes, never arguments. */
START_TEST(test_meta_continued)
{
	struct sup_client	*cl;
	struct sup_frame	*f;
	struct sup_resp		*r;
	json_t			*o, *spans, *srv, *cli;
	const char		*tp;
	char			 text[8192];

	start("sample = 0.0;");
	cl = sup_session(NULL, NULL);
	r = call(cl, NULL, "\"traceparent\":\"" TP_CLIENT "\",\"tracestate\":"
	    "\"rojo=1\",\"progressToken\":3");
	o = forwarded(&f);
	tp = tp_of(o);
	ck_assert_ptr_nonnull(tp);
	ck_assert_int_eq(strlen(tp), TP_LEN);
	ck_assert(strncmp(tp, "00-" TRACE_CLIENT "-", 36) == 0);
	ck_assert(strcmp(tp + 36, SPAN_CLIENT "-01") != 0);
	ck_assert_str_eq(tp + 52, "-01");
	ck_assert_jstr(o, "params._meta.tracestate", "rojo=1");
	ck_assert_jint(o, "params._meta.progressToken", 3);
	ck_assert_jstr(o, "params.arguments.text", "SECRET-ARGUMENT");
	sup_reply(sup_worker("a"), f, "{\"content\":[]}");
	ck_assert_result(sup_answer(r));

	spans = exported();
	ck_assert_int_eq(json_array_size(spans), 2);
	srv = span_of(spans, 2);
	cli = span_of(spans, 3);
	ck_assert_jstr(srv, "traceId", TRACE_CLIENT);
	ck_assert_jstr(cli, "traceId", TRACE_CLIENT);
	ck_assert_jstr(srv, "parentSpanId", SPAN_CLIENT);
	ck_assert_str_eq(sup_jstr(cli, "parentSpanId"),
	    sup_jstr(srv, "spanId"));
	/* The upstream's parent is our CLIENT span. */
	ck_assert(strncmp(tp + 36, sup_jstr(cli, "spanId"), 16) == 0);
	ck_assert_jstr(srv, "traceState", "rojo=1");
	ck_assert_jstr(srv, "name", "tools/call a__echo");
	ck_assert_jint(srv, "status.code", 0);
	ck_assert_str_eq(attr(srv, "mcp.method.name"), "tools/call");
	ck_assert_str_eq(attr(srv, "gen_ai.tool.name"), "a__echo");
	ck_assert_str_eq(attr(srv, "gen_ai.operation.name"), "execute_tool");
	ck_assert_str_eq(attr(srv, "jsonrpc.request.id"), "7");
	ck_assert_str_eq(attr(srv, "mcp_supervisor.upstream"), "a");
	ck_assert_int_eq(strlen(attr(srv, "mcp.session.id")), 8);
	ck_assert_str_eq(attr(cli, "mcp_supervisor.upstream"), "a");
	ck_assert_ptr_null(attr(srv, "error.type"));
	ck_assert(strtoll(sup_jstr(srv, "endTimeUnixNano"), NULL, 10) >=
	    strtoll(sup_jstr(cli, "endTimeUnixNano"), NULL, 10));
	ck_assert(strtoll(sup_jstr(cli, "startTimeUnixNano"), NULL, 10) >=
	    strtoll(sup_jstr(srv, "startTimeUnixNano"), NULL, 10));
	snprintf(text, sizeof text, "%s", sup_dump(spans));
	ck_assert(strstr(text, "SECRET-ARGUMENT") == NULL);
	json_decref(spans);
	json_decref(o);
}
END_TEST

/* The HTTP request's headers, when _meta has none; _meta made. */
START_TEST(test_header_context)
{
	struct sup_client	*cl;
	struct sup_frame	*f;
	struct sup_resp		*r;
	json_t			*o, *spans;

	start("sample = 0.0;");
	cl = sup_session(NULL, NULL);
	r = call(cl, "traceparent: " TP_CLIENT "\r\ntracestate: congo=t61\r\n",
	    "");
	o = forwarded(&f);
	ck_assert(strncmp(tp_of(o),
	    "00-" TRACE_CLIENT "-", 36) == 0);
	ck_assert_jstr(o, "params._meta.tracestate", "congo=t61");
	ck_assert_jstr(o, "params.name", "echo");
	sup_reply_error(sup_worker("a"), f, -32602, "bad arguments");
	ck_assert_error(sup_answer(r), -32602);
	spans = exported();
	ck_assert_jstr(span_of(spans, 2), "parentSpanId", SPAN_CLIENT);
	ck_assert_jint(span_of(spans, 2), "status.code", 2);
	ck_assert_str_eq(attr(span_of(spans, 2), "error.type"), "-32602");
	ck_assert_str_eq(attr(span_of(spans, 2), "rpc.jsonrpc.error_code"),
	    "-32602");
	ck_assert_str_eq(attr(span_of(spans, 2), "mcp_supervisor.outcome"),
	    "error");
	json_decref(spans);
	json_decref(o);
}
END_TEST

/* A bad header is ignored, never an error: sampled, a new trace. */
START_TEST(test_bad_header_new_trace)
{
	struct sup_client	*cl;
	struct sup_frame	*f;
	struct sup_resp		*r;
	json_t			*o, *spans, *srv;
	const char		*tp;

	start("sample = 1.0;");
	cl = sup_session(NULL, NULL);
	r = call(cl, "traceparent: 00-0AF7651916CD43DD8448EB211C80319C-"
	    "B7AD6B7169203331-01\r\n", "\"other\":1");
	o = forwarded(&f);
	tp = tp_of(o);
	ck_assert_ptr_nonnull(tp);
	ck_assert(strstr(tp, TRACE_CLIENT) == NULL);
	ck_assert_jint(o, "params._meta.other", 1);
	sup_reply(sup_worker("a"), f, "{\"content\":[]}");
	ck_assert_result(sup_answer(r));
	spans = exported();
	srv = span_of(spans, 2);
	ck_assert_ptr_null(json_object_get(srv, "parentSpanId"));
	ck_assert(strncmp(tp + 3, sup_jstr(srv, "traceId"), 32) == 0);
	json_decref(spans);
	json_decref(o);
}
END_TEST

/*
 * What a span records is fit to export: a string request id's text (not
 * its JSON, quotes and all), a resource URI redacted as a URL is shown
 * (a presigned URL's signature, a ?token= went to the collector), and of
 * the parent's trace flags only the sampled one (the rest are reserved).
 */
START_TEST(test_span_fields)
{
	struct sup_client	*cl;
	struct sup_frame	*f;
	json_t			*o, *spans;

	start("sample = 0.0;");
	sup_catalog("a", "{\"tools\":[{\"name\":\"echo\",\"inputSchema\":"
	    "{\"type\":\"object\"}}],\"resources\":[{\"uri\":"
	    "\"https://b.example/o?X-Amz-Signature=SECRET-SIG&v=1\","
	    "\"name\":\"o\"}]}");
	cl = sup_session(NULL, NULL);
	sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":\"req-\\u00e9\","
	    "\"method\":\"resources/read\",\"params\":{\"uri\":"
	    "\"https://b.example/o?X-Amz-Signature=SECRET-SIG&v=1\","
	    "\"_meta\":{\"traceparent\":\"00-" TRACE_CLIENT "-" SPAN_CLIENT
	    "-ff\"}}}");
	o = forwarded(&f);
	ck_assert_str_eq(tp_of(o) + 52, "-01");
	sup_reply(sup_worker("a"), f, "{\"contents\":[]}");
	json_decref(o);
	spans = exported();
	ck_assert_str_eq(attr(span_of(spans, 2), "jsonrpc.request.id"),
	    "req-\\xc3\\xa9");
	ck_assert_ptr_nonnull(attr(span_of(spans, 2), "mcp.resource.uri"));
	ck_assert_ptr_null(strstr(sup_dump(spans), "SECRET-SIG"));
	ck_assert_ptr_nonnull(strstr(attr(span_of(spans, 2),
	    "mcp.resource.uri"), "X-Amz-Signature=***"));
	json_decref(spans);
}
END_TEST

/* Parent-based: an unsampled parent is not sampled but passed on;
 * without a parent, sample = 0 is not traced and the text unchanged. */
START_TEST(test_not_sampled)
{
	struct sup_client	*cl;
	struct sup_frame	*f;
	json_t			*o;

	start("sample = 0.0;");
	cl = sup_session(NULL, NULL);
	call(cl, NULL, "\"traceparent\":\"00-" TRACE_CLIENT "-" SPAN_CLIENT
	    "-00\"");
	o = forwarded(&f);
	ck_assert(strncmp(tp_of(o),
	    "00-" TRACE_CLIENT "-", 36) == 0);
	ck_assert_str_eq(tp_of(o) + 52,
	    "-00");
	sup_reply(sup_worker("a"), f, "{\"content\":[]}");
	json_decref(o);
	call(cl, NULL, "");
	o = forwarded(&f);
	ck_assert(strstr(f->text, "_meta") == NULL);
	sup_reply(sup_worker("a"), f, "{\"content\":[]}");
	sup_advance(1);
	ck_assert_int_eq(sup_count(sup_provider("otel"), MSG_OTEL_SPANS), 0);
	json_decref(o);
}
END_TEST

/* An empty _meta and empty params get the context too. */
START_TEST(test_insert_forms)
{
	struct sup_client	*cl;
	struct sup_frame	*f;
	json_t			*o;

	start("sample = 1.0;");
	cl = sup_session(NULL, NULL);
	sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
	    "\"params\":{\"_meta\":{},\"name\":\"a__echo\"}}");
	o = forwarded(&f);
	ck_assert_int_eq(strlen(tp_of(o)),
	    TP_LEN);
	ck_assert_jstr(o, "params.name", "echo");
	sup_reply(sup_worker("a"), f, "{\"content\":[]}");
	json_decref(o);
	sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"a__echo\",\"_meta\":{\"traceparent\":"
	    "\"garbage\"}}}");
	o = forwarded(&f);
	ck_assert_int_eq(strlen(tp_of(o)),
	    TP_LEN);
	sup_reply(sup_worker("a"), f, "{\"content\":[]}");
	json_decref(o);
}
END_TEST

/* Bounded: spans beyond queue are dropped and counted; the exporter's
 * counts free the queue. */
START_TEST(test_queue_bounded)
{
	struct sup_client	*cl;
	struct sup_worker	*ow;
	struct sup_frame	*f;
	struct evbuffer		*b;
	json_t			*o;
	char			*text;
	int			 i;

	start("sample = 1.0; batch = 2; queue = 2;");
	cl = sup_session(NULL, NULL);
	ow = sup_provider("otel");
	for (i = 0; i < 2; i++) {
		call(cl, NULL, "");
		o = forwarded(&f);
		sup_reply(sup_worker("a"), f, "{\"content\":[]}");
		json_decref(o);
	}
	/* The first two went (a full batch); the next two had no room. */
	ck_assert_int_eq(sup_count(ow, MSG_OTEL_SPANS), 1);
	b = evbuffer_new();
	metrics_write(b);
	evbuffer_add(b, "", 1);
	text = (char *)evbuffer_pullup(b, -1);
	ck_assert(strstr(text, "mcp_supervisor_trace_spans_total{outcome="
	    "\"dropped\"} 2\n") != NULL);
	ck_assert(strstr(text, "mcp_supervisor_trace_spans_queued 2\n") !=
	    NULL);
	evbuffer_free(b);
	sup_send(ow, MSG_OTEL_STATS, 0, 0, 0, "{\"exported\":1,"
	    "\"failed\":1,\"dropped\":0}");
	b = evbuffer_new();
	metrics_write(b);
	evbuffer_add(b, "", 1);
	text = (char *)evbuffer_pullup(b, -1);
	ck_assert(strstr(text, "mcp_supervisor_trace_spans_queued 0\n") !=
	    NULL);
	ck_assert(strstr(text, "{outcome=\"exported\"} 1\n") != NULL);
	ck_assert(strstr(text, "{outcome=\"failed\"} 1\n") != NULL);
	evbuffer_free(b);
	call(cl, NULL, "");
	o = forwarded(&f);
	sup_reply(sup_worker("a"), f, "{\"content\":[]}");
	json_decref(o);
	ck_assert_int_eq(sup_count(ow, MSG_OTEL_SPANS), 2);
}
END_TEST

/* The exporter's death loses what it held, counted (proc.c restarts it). */
START_TEST(test_exporter_lost)
{
	struct sup_client	*cl;
	struct sup_frame	*f;
	struct evbuffer		*b;
	json_t			*o;

	start("sample = 1.0; batch = 2;");
	cl = sup_session(NULL, NULL);
	call(cl, NULL, "");
	o = forwarded(&f);
	sup_reply(sup_worker("a"), f, "{\"content\":[]}");
	json_decref(o);
	sup_kill(sup_provider("otel"));
	sup_run();
	b = evbuffer_new();
	metrics_write(b);
	evbuffer_add(b, "", 1);
	ck_assert(strstr((char *)evbuffer_pullup(b, -1),
	    "{outcome=\"dropped\"} 2\n") != NULL);
	evbuffer_free(b);
}
END_TEST

/* Reload: tracing turned on starts the exporter, off stops it. */
START_TEST(test_reload)
{
	json_t	*r;

	start(NULL);
	ck_assert_ptr_null(sup_provider("otel"));
	r = sup_reload(SUP_BASE "tracing = { endpoint = \"http://127.0.0.1:9/"
	    "v1/traces\"; };\nservers = ( { name = \"a\"; transport = "
	    "\"stdio\"; command = [ \"true\" ]; } );\n");
	ck_assert(json_is_true(json_object_get(r, "ok")));
	json_decref(r);
	ck_assert_ptr_nonnull(sup_provider("otel"));
	r = sup_reload(SUP_BASE "servers = ( { name = \"a\"; transport = "
	    "\"stdio\"; command = [ \"true\" ]; } );\n");
	json_decref(r);
	sup_run();
	ck_assert_ptr_null(sup_provider("otel"));
}
END_TEST

static Suite *
trace_suite(void)
{
	Suite	*s = suite_create("trace");
	TCase	*tp = tcase_create("traceparent");
	TCase	*tc = tcase_create("spans");

	tcase_add_test(tp, test_parse);
	tcase_add_test(tp, test_tracestate);
	tcase_add_test(tp, test_from_meta);
	tcase_add_test(tp, test_conf);
	tcase_add_test(tp, test_conf_print);
	suite_add_tcase(s, tp);
	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, test_off_by_default);
	tcase_add_test(tc, test_meta_continued);
	tcase_add_test(tc, test_header_context);
	tcase_add_test(tc, test_bad_header_new_trace);
	tcase_add_test(tc, test_not_sampled);
	tcase_add_test(tc, test_span_fields);
	tcase_add_test(tc, test_insert_forms);
	tcase_add_test(tc, test_legacy_header);
	tcase_add_test(tc, test_queue_bounded);
	tcase_add_test(tc, test_exporter_lost);
	tcase_add_test(tc, test_reload);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	return (sup_check_main(trace_suite()));
}
