/* SPDX-License-Identifier: ISC */
/*
 * mcp-demo-server's tools: the table of them, tools/list and tools/call,
 * building tool results, and the tools that need neither the client nor
 * --test-tools (tools_client.c and tools_test.c hold those).
 */

#define _GNU_SOURCE

#include <sys/types.h>
#include <sys/queue.h>

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>
#include <jansson.h>

#include "demo.h"

#if JSON_INTEGER_IS_LONG_LONG
#define JINT_MAX		LLONG_MAX
#define JINT_MIN		LLONG_MIN
#else
#define JINT_MAX		LONG_MAX
#define JINT_MIN		LONG_MIN
#endif

/* A tool: its schemas are parsed once at start-up. */
#define TOOL_EXTRA	0x1	/* listed only while toggled on */
#define TOOL_TEST	0x2	/* only with --test-tools */

struct tool {
	const char	*name;
	const char	*description;
	const char	*input;		/* input schema, JSON text */
	const char	*output;	/* output schema, JSON text or NULL */
	void		(*fn)(json_t *, json_t *, json_t *);
	int		 flags;		/* TOOL_* */

	json_t		*input_json;
	json_t		*output_json;
};

static int		 extra_on;	/* extra tool is listed */

static void	tool_echo(json_t *, json_t *, json_t *);
static void	tool_add(json_t *, json_t *, json_t *);
static void	tool_sleep(json_t *, json_t *, json_t *);
static void	tool_fail(json_t *, json_t *, json_t *);
static void	tool_log(json_t *, json_t *, json_t *);
static void	tool_touch(json_t *, json_t *, json_t *);
static void	tool_toggle(json_t *, json_t *, json_t *);
static void	tool_extra(json_t *, json_t *, json_t *);

#define NO_ARGS "{\"type\":\"object\",\"properties\":{},\"required\":[]}"

static struct tool tools[] = {
	{ "echo", "Echo the given text back unchanged.",
	  "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\","
	  "\"description\":\"Text to echo\"}},\"required\":[\"text\"]}",
	  NULL, tool_echo, 0, NULL, NULL },
	{ "add", "Add two numbers.",
	  "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"number\"},"
	  "\"b\":{\"type\":\"number\"}},\"required\":[\"a\",\"b\"]}",
	  "{\"type\":\"object\",\"properties\":{\"sum\":{\"type\":\"number\"}},"
	  "\"required\":[\"sum\"]}",
	  tool_add, 0, NULL, NULL },
	{ "sleep", "Wait for ms milliseconds without blocking other requests, "
	  "sending steps progress notifications if a progress token is given.",
	  "{\"type\":\"object\",\"properties\":{\"ms\":{\"type\":\"integer\","
	  "\"minimum\":0,\"maximum\":600000},\"steps\":{\"type\":\"integer\","
	  "\"minimum\":0,\"maximum\":1000,\"default\":0}},"
	  "\"required\":[\"ms\"]}",
	  NULL, tool_sleep, 0, NULL, NULL },
	{ "fail", "Always return a tool error.",
	  NO_ARGS, NULL, tool_fail, 0, NULL, NULL },
	{ "crash", "Exit immediately with the given code, without answering, "
	  "or with an answer whose line has no newline.",
	  "{\"type\":\"object\",\"properties\":{\"code\":{\"type\":\"integer\","
	  "\"minimum\":0,\"maximum\":255,\"default\":3},"
	  "\"answer\":{\"type\":\"string\"}},\"required\":[]}",
	  NULL, tool_crash, TOOL_TEST, NULL, NULL },
	{ "hang", "Stop answering anything for the given seconds: the whole "
	  "server blocks, as a hung server does.",
	  "{\"type\":\"object\",\"properties\":{\"seconds\":"
	  "{\"type\":\"integer\",\"minimum\":1,\"maximum\":3600,"
	  "\"default\":3600}},\"required\":[]}",
	  NULL, tool_hang, TOOL_TEST, NULL, NULL },
	{ "garbage", "Write a line of non-JSON text to stdout, then answer.",
	  NO_ARGS, NULL, tool_garbage, TOOL_TEST, NULL, NULL },
	{ "big", "Return a text of exactly the given number of bytes.",
	  "{\"type\":\"object\",\"properties\":{\"bytes\":"
	  "{\"type\":\"integer\",\"minimum\":0,\"maximum\":67108864}},"
	  "\"required\":[\"bytes\"]}",
	  NULL, tool_big, TOOL_TEST, NULL, NULL },
	{ "sample", "Ask the client's model to answer a prompt "
	  "(sampling/createMessage).",
	  "{\"type\":\"object\",\"properties\":"
	  "{\"prompt\":{\"type\":\"string\"},"
	  "\"maxTokens\":{\"type\":\"integer\",\"minimum\":1,"
	  "\"maximum\":1000000,\"default\":100}},\"required\":[\"prompt\"]}",
	  NULL, tool_sample, 0, NULL, NULL },
	{ "elicit", "Ask the user for a name and age (form elicitation).",
	  "{\"type\":\"object\",\"properties\":{\"message\":"
	  "{\"type\":\"string\",\"default\":\"Please provide your name\"}},"
	  "\"required\":[]}",
	  NULL, tool_elicit, 0, NULL, NULL },
	{ "elicit_url", "Send the user to a URL (URL elicitation).",
	  "{\"type\":\"object\",\"properties\":{\"url\":{\"type\":\"string\","
	  "\"default\":\"https://example.com/consent\"}},\"required\":[]}",
	  NULL, tool_elicit_url, 0, NULL, NULL },
	{ "roots", "List the client's roots (roots/list).",
	  NO_ARGS, NULL, tool_roots, 0, NULL, NULL },
	{ "log", "Send log message notifications.",
	  "{\"type\":\"object\",\"properties\":{\"level\":{\"type\":\"string\","
	  "\"enum\":[\"debug\",\"info\",\"notice\",\"warning\",\"error\","
	  "\"critical\",\"alert\",\"emergency\"],\"default\":\"info\"},"
	  "\"message\":{\"type\":\"string\"},\"count\":{\"type\":\"integer\","
	  "\"minimum\":0,\"maximum\":1000,\"default\":1}},"
	  "\"required\":[\"message\"]}",
	  NULL, tool_log, 0, NULL, NULL },
	{ "touch", "Increment the counter resource and notify subscribers "
	  "of the given URI.",
	  "{\"type\":\"object\",\"properties\":{\"uri\":{\"type\":\"string\","
	  "\"default\":\"demo://counter\"}},\"required\":[]}",
	  NULL, tool_touch, 0, NULL, NULL },
	{ "toggle_tool", "Add or remove the extra tool.",
	  NO_ARGS, NULL, tool_toggle, 0, NULL, NULL },
	{ "stderr", "Write the given text to standard error.",
	  "{\"type\":\"object\",\"properties\":"
	  "{\"text\":{\"type\":\"string\"}},\"required\":[\"text\"]}",
	  NULL, tool_stderr, TOOL_TEST, NULL, NULL },
	{ "ping_client", "Send a ping request to the client.",
	  NO_ARGS, NULL, tool_ping_client, 0, NULL, NULL },
	{ "extra", "An extra tool, present while toggled on.",
	  NO_ARGS, NULL, tool_extra, TOOL_EXTRA, NULL, NULL },
};
#define NTOOLS (sizeof tools / sizeof tools[0])

/* Build a tool result with one text item. Consumes text. */
json_t *
tool_content(json_t *text, int is_error)
{
	json_t	*result;

	if (text == NULL)
		text = json_string("(out of memory)");
	result = json_pack("{s:[{s:s, s:o}]}", "content", "type", "text",
	    "text", text);
	if (result != NULL && is_error)
		json_object_set_new(result, "isError", json_true());
	return (result);
}

/* Build a tool result from a format. */
static json_t * __attribute__((format(printf, 2, 0)))
tool_vtext(int is_error, const char *fmt, va_list ap)
{
	json_t	*text;
	char	*s;

	if ((s = xvasprintf(fmt, ap)) == NULL)
		return (tool_content(NULL, is_error));
	text = json_string(s);
	if (text == NULL)
		text = json_string("(invalid UTF-8)");
	free(s);
	return (tool_content(text, is_error));
}

/* Build a successful tool result with formatted text. */
json_t * __attribute__((format(printf, 1, 2)))
tool_ok(const char *fmt, ...)
{
	va_list	 ap;
	json_t	*result;

	va_start(ap, fmt);
	result = tool_vtext(0, fmt, ap);
	va_end(ap);
	return (result);
}

/* Build a tool error result with formatted text. */
json_t * __attribute__((format(printf, 1, 2)))
tool_err(const char *fmt, ...)
{
	va_list	 ap;
	json_t	*result;

	va_start(ap, fmt);
	result = tool_vtext(1, fmt, ap);
	va_end(ap);
	return (result);
}

/* Echo the text argument back. */
static void
tool_echo(json_t *id, json_t *params, json_t *args)
{
	json_t	*text;

	(void)params;
	if (arg_value(args, "text", 0, &text) != 0) {
		bad_args(id);
		return;
	}
	reply_result(id, tool_content(json_copy(text), 0));
}

/* Add two numbers, as an integer if both are and it fits. */
static void
tool_add(json_t *id, json_t *params, json_t *args)
{
	json_t		*a, *b, *sum, *result;
	json_int_t	 x, y;
	double		 d;
	char		 buf[64];
	int		 prec;

	(void)params;
	if (arg_value(args, "a", 1, &a) != 0 ||
	    arg_value(args, "b", 1, &b) != 0) {
		bad_args(id);
		return;
	}

	if (json_is_integer(a) && json_is_integer(b)) {
		x = json_integer_value(a);
		y = json_integer_value(b);
		if ((y > 0 && x > JINT_MAX - y) ||
		    (y < 0 && x < JINT_MIN - y))
			goto real;
		sum = json_integer(x + y);
		snprintf(buf, sizeof buf, "%" JSON_INTEGER_FORMAT, x + y);
		goto done;
	}

real:
	d = json_number_value(a) + json_number_value(b);
	if (!isfinite(d)) {
		reply_result(id, tool_err("the sum is too large"));
		return;
	}
	/* Use the shortest form that reads back as the same number. */
	for (prec = 15; prec < 17; prec++) {
		snprintf(buf, sizeof buf, "%.*g", prec, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	if (prec == 17)
		snprintf(buf, sizeof buf, "%.17g", d);
	sum = json_real(d);

done:
	result = tool_ok("%s", buf);
	if (result != NULL && sum != NULL)
		json_object_set_new(result, "structuredContent",
		    json_pack("{s:o}", "sum", sum));
	else
		json_decref(sum);
	reply_result(id, result);
}

/* Schedule the next tick of a sleep. */
static void
sleep_schedule(struct req *r)
{
	struct timeval	tv;
	uint64_t	delay;

	if (r->steps == 0)
		delay = r->ms;
	else {
		/* Even intervals, without drift from rounding. */
		delay = r->ms * (r->step + 1) / r->steps -
		    r->ms * r->step / r->steps;
	}
	tv.tv_sec = (time_t)(delay / 1000);
	tv.tv_usec = (suseconds_t)((delay % 1000) * 1000);
	evtimer_add(r->timer, &tv);
}

/* Send progress for a sleep, or finish it. */
static void
sleep_tick(evutil_socket_t fd, short events, void *arg)
{
	struct req	*r = arg;
	char		 message[64];

	(void)fd;
	(void)events;

	if (r->steps != 0) {
		r->step++;
		snprintf(message, sizeof message, "step %u of %u", r->step,
		    r->steps);
		notify("notifications/progress", json_pack(
		    "{s:O, s:i, s:i, s:s}", "progressToken", r->token,
		    "progress", (int)r->step, "total", (int)r->steps,
		    "message", message));
		if (r->step < r->steps) {
			sleep_schedule(r);
			return;
		}
	}
	req_done(r, tool_ok("slept %llu ms", (unsigned long long)r->ms));
}

/* Sleep on a timer, with progress notifications if asked for. */
static void
tool_sleep(json_t *id, json_t *params, json_t *args)
{
	struct req	*r;
	json_int_t	 ms, steps;
	json_t		*token;

	if (arg_int(args, "ms", 1, 0, 0, MAX_SLEEP_MS, &ms) != 0 ||
	    arg_int(args, "steps", 0, 0, 0, MAX_STEPS, &steps) != 0) {
		bad_args(id);
		return;
	}
	token = json_object_get(json_object_get(params, "_meta"),
	    "progressToken");
	if (token != NULL && !json_is_string(token) && !json_is_number(token)) {
		log_warnx("ignoring progress token that is not a string or "
		    "number");
		token = NULL;
	}

	r = req_new(id);
	if ((r->timer = evtimer_new(base, sleep_tick, r)) == NULL)
		fatalx("out of memory");
	r->ms = (uint64_t)ms;
	if (token != NULL) {
		r->token = json_incref(token);
		r->steps = (u_int)steps;
	}
	sleep_schedule(r);
}

/* Return a tool error, always. */
static void
tool_fail(json_t *id, json_t *params, json_t *args)
{
	(void)params;
	(void)args;
	reply_result(id, tool_err("this tool always fails"));
}

/* Send log message notifications. */
static void
tool_log(json_t *id, json_t *params, json_t *args)
{
	const char	*name;
	json_t		*message;
	json_int_t	 count, i;
	int		 level;

	(void)params;
	if (arg_str(args, "level", "info", &name) != 0 ||
	    arg_value(args, "message", 0, &message) != 0 ||
	    arg_int(args, "count", 0, 1, 0, MAX_LOG_COUNT, &count) != 0) {
		bad_args(id);
		return;
	}
	if ((level = level_find(name)) == -1) {
		snprintf(argerr, sizeof argerr, "unknown log level '%s'",
		    name);
		bad_args(id);
		return;
	}
	for (i = 0; i < count; i++)
		notify_log(level, message);
	reply_result(id, tool_ok("logged"));
}

/* Bump the counter and tell subscribers of the URI. */
static void
tool_touch(json_t *id, json_t *params, json_t *args)
{
	const char	*uri;

	(void)params;
	if (arg_str(args, "uri", "demo://counter", &uri) != 0) {
		bad_args(id);
		return;
	}
	counter++;
	if (json_object_get(subscriptions, uri) != NULL) {
		notify("notifications/resources/updated",
		    json_pack("{s:s}", "uri", uri));
	}
	reply_result(id, tool_ok("touched"));
}

/* Add or remove the extra tool. */
static void
tool_toggle(json_t *id, json_t *params, json_t *args)
{
	(void)params;
	(void)args;
	extra_on = !extra_on;
	notify("notifications/tools/list_changed", NULL);
	reply_result(id, tool_ok("extra tool %s", extra_on ? "on" : "off"));
}

/* Answer a call of the extra tool. */
static void
tool_extra(json_t *id, json_t *params, json_t *args)
{
	(void)params;
	(void)args;
	reply_result(id, tool_ok("extra"));
}

/* Is a tool offered now? */
static int
tool_offered(const struct tool *tool)
{
	if ((tool->flags & TOOL_TEST) && !test_tools)
		return (0);
	if ((tool->flags & TOOL_EXTRA) && !extra_on)
		return (0);
	return (1);
}

/* Handle tools/list. */
void
method_tools_list(json_t *id, json_t *params)
{
	json_t		*items, *t;
	struct tool	*tool;
	u_int		 i;

	items = json_array();
	for (i = 0; items != NULL && i < NTOOLS; i++) {
		tool = &tools[i];
		if (!tool_offered(tool))
			continue;
		t = json_pack("{s:s, s:s, s:O}", "name", tool->name,
		    "description", tool->description, "inputSchema",
		    tool->input_json);
		if (t != NULL && tool->output_json != NULL)
			json_object_set(t, "outputSchema", tool->output_json);
		json_array_append_new(items, t);
	}
	reply_page(id, params, "tools", items);
}

/* Handle tools/call. */
void
method_tools_call(json_t *id, json_t *params)
{
	struct tool	*tool;
	const char	*name;
	json_t		*args, *empty = NULL;
	u_int		 i;

	if ((name = json_cstr(json_object_get(params, "name"))) == NULL) {
		reply_error(id, ERR_PARAMS, NULL,
		    "Invalid params: name must be a string");
		return;
	}
	args = json_object_get(params, "arguments");
	if (args != NULL && !json_is_object(args)) {
		reply_error(id, ERR_PARAMS, NULL,
		    "Invalid params: arguments must be an object");
		return;
	}
	for (i = 0; i < NTOOLS; i++) {
		tool = &tools[i];
		if (strcmp(tool->name, name) != 0)
			continue;
		if (!tool_offered(tool))
			break;
		if (args == NULL)
			args = empty = json_object();
		tool->fn(id, params, args);
		json_decref(empty);
		return;
	}
	reply_error(id, ERR_PARAMS, NULL, "Unknown tool: %s", name);
}

/* Parse the tool schemas. */
void
tools_init(void)
{
	json_error_t	error;
	u_int		i;

	for (i = 0; i < NTOOLS; i++) {
		tools[i].input_json = json_loads(tools[i].input, 0, &error);
		if (tools[i].input_json == NULL)
			fatalx("%s schema: %s", tools[i].name, error.text);
		if (tools[i].output == NULL)
			continue;
		tools[i].output_json = json_loads(tools[i].output, 0, &error);
		if (tools[i].output_json == NULL)
			fatalx("%s output schema: %s", tools[i].name,
			    error.text);
	}
}

/* Free the tool schemas. */
void
tools_free(void)
{
	u_int	i;

	for (i = 0; i < NTOOLS; i++) {
		json_decref(tools[i].input_json);
		json_decref(tools[i].output_json);
	}
}
