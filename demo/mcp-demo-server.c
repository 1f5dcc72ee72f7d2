/*
 * mcp-demo-server -- a small Model Context Protocol server on stdio.
 *
 * It speaks newline-delimited JSON-RPC 2.0 on standard input and output,
 * one message per line, and writes diagnostics to standard error only.
 * Everything runs on one libevent loop, so any number of requests (up to
 * MAX_INFLIGHT) may be in progress at once: a sleeping tool call or one
 * waiting for the client's answer never holds up the others.
 *
 * It offers a fixed set of tools, resources and prompts meant for
 * exercising MCP clients and gateways (mcp-supervisord in particular):
 * progress, cancellation, sampling, elicitation, roots, logging,
 * subscriptions, list changes, pagination; and, with --test-tools only,
 * oversized and broken output, hanging and crashing.
 */

#define _GNU_SOURCE

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <jansson.h>

#if JSON_INTEGER_IS_LONG_LONG
#define JINT_MAX		LLONG_MAX
#define JINT_MIN		LLONG_MIN
#else
#define JINT_MAX		LONG_MAX
#define JINT_MIN		LONG_MIN
#endif

#define DEMO_NAME		"mcp-demo-server"
#define DEMO_VERSION		"1.0.0"
#define LATEST_PROTOCOL		"2025-11-25"

/* Limits. Sizes are in bytes, times in milliseconds. */
#define MAX_LINE		(64UL * 1024 * 1024)	/* input line */
#define MAX_INFLIGHT		1024	/* requests in progress */
#define MAX_SUBSCRIPTIONS	4096	/* subscribed URIs */
#define MAX_BIG			(64L * 1024 * 1024)	/* big tool */
#define MAX_SLEEP_MS		600000	/* sleep tool */
#define MAX_STEPS		1000	/* sleep tool progress steps */
#define MAX_LOG_COUNT		1000	/* log tool messages a call */
#define MAX_TOKENS		1000000	/* sample tool maxTokens */
#define MAX_PAGE_SIZE		1000000	/* --page-size */
#define MAX_NAME		256	/* --name */

/* Input and output buffering. */
#define READ_CHUNK		(256 * 1024)	/* per read(2) */
#define OUT_HIGH		(16UL * 1024 * 1024)	/* pause input */
#define OUT_LOW			(1UL * 1024 * 1024) /* resume input */
#define COPY_LIMIT		4096	/* copy smaller output */
#define DRAIN_SECONDS		5	/* flush time after EOF */
#define CRASH_FLUSH_MS		1000	/* flush time before crash */

/* JSON-RPC and MCP error codes. */
#define ERR_PARSE		-32700
#define ERR_REQUEST		-32600
#define ERR_METHOD		-32601
#define ERR_PARAMS		-32602
#define ERR_INTERNAL		-32603
#define ERR_NOT_FOUND		-32002

struct req;
typedef void (*answer_cb)(struct req *, json_t *, json_t *);

/*
 * A request from the client that is still in progress: a sleep, or a
 * tool call waiting for the answer to a request of ours.  The request
 * owns everything it points to; req_free releases it all and it never
 * answers by itself.
 */
struct req {
	json_t		*id;		/* client's request id */
	json_t		*token;		/* progress token */

	struct event	*timer;		/* sleep timer or NULL */
	uint64_t	 ms;		/* sleep length */
	u_int		 steps;		/* progress steps */
	u_int		 step;		/* steps done */

	json_int_t	 out_id;	/* our request id or 0 */
	answer_cb	 cb;		/* called with the answer */
	char		*elicitation;	/* URL elicitation id */

	TAILQ_ENTRY(req) entry;
};
TAILQ_HEAD(reqs, req);

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

/* A request method. */
struct method {
	const char	*name;
	void		(*fn)(json_t *, json_t *);
};

static struct event_base *base;
static struct event	*in_ev;		/* stdin readable */
static struct event	*out_ev;	/* stdout writable */
static struct event	*drain_ev;	/* give up flushing at exit */
static struct evbuffer	*inbuf;		/* unparsed input */
static struct evbuffer	*outbuf;	/* unwritten output */
static int		 in_flags = -1;	/* original stdin flags */
static int		 out_flags = -1; /* original stdout flags */

static size_t		 scan_off;	/* input searched for newline */
static int		 discarding;	/* skipping an overlong line */
static int		 in_eof;	/* stdin is finished */
static int		 paused;	/* not reading, output too long */
static int		 closing;	/* flushing output, then exit */
static int		 out_dead;	/* stdout failed */
static int		 exit_code;

static struct reqs	 reqs = TAILQ_HEAD_INITIALIZER(reqs);
static u_int		 nreqs;
static json_int_t	 next_out_id = 1;
static unsigned long long next_elicitation = 1;

static const char	*server_name = DEMO_NAME;
static size_t		 page_size;	/* 0 is no pagination */
static json_t		*client_caps;	/* client capabilities */
static int		 min_level;	/* index into levels */
static unsigned long long counter; /* demo://counter */
static json_t		*subscriptions;	/* keys: subscribed URIs */
static int		 extra_on;	/* extra tool is listed */
static int		 test_tools;	/* --test-tools: crash, hang, ... */
static char		 argerr[256];	/* last argument error */

static const char *protocols[] = {
	"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"
};

static const char *levels[] = {
	"debug", "info", "notice", "warning", "error", "critical", "alert",
	"emergency"
};
#define NLEVELS (sizeof levels / sizeof levels[0])

static const char *names[] = { "Ada", "Alan", "Barbara", "Grace", "Linus" };
static const char *item_ids[] = { "1", "2", "3" };

static const char readme_text[] =
    "mcp-demo-server\n"
    "\n"
    "A small MCP server for trying out clients and gateways.\n"
    "It offers tools, resources and prompts; see mcp-demo-server(1).\n";

/* A 16x16 palette PNG: a box with a cross in it. */
static const char logo_png[] =
    "iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAMAAAAoLQ9TAAAACVBMVEX///8gQKDgYCCb"
    "FHboAAAAQklEQVR42nXPSQ4AIAgDwNL/P1rWSGrswWUiijAJjFihA5YQAVd8kTASU0FJ"
    "Dg2xqWMDYJd9QUv0Un1WG9PWn89JDj6wAHV555riAAAAAElFTkSuQmCC";
#define LOGO_SIZE 144

static void	tool_echo(json_t *, json_t *, json_t *);
static void	tool_add(json_t *, json_t *, json_t *);
static void	tool_sleep(json_t *, json_t *, json_t *);
static void	tool_fail(json_t *, json_t *, json_t *);
static void	tool_crash(json_t *, json_t *, json_t *);
static void	tool_hang(json_t *, json_t *, json_t *);
static void	tool_garbage(json_t *, json_t *, json_t *);
static void	tool_big(json_t *, json_t *, json_t *);
static void	tool_sample(json_t *, json_t *, json_t *);
static void	tool_elicit(json_t *, json_t *, json_t *);
static void	tool_elicit_url(json_t *, json_t *, json_t *);
static void	tool_roots(json_t *, json_t *, json_t *);
static void	tool_log(json_t *, json_t *, json_t *);
static void	tool_touch(json_t *, json_t *, json_t *);
static void	tool_toggle(json_t *, json_t *, json_t *);
static void	tool_stderr(json_t *, json_t *, json_t *);
static void	tool_ping_client(json_t *, json_t *, json_t *);
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

/* Log a message to stderr. */
static void __attribute__((format(printf, 1, 2)))
log_warnx(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	fprintf(stderr, "%s: ", DEMO_NAME);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	fflush(stderr);
}

/* Log a message and the current errno to stderr. */
static void __attribute__((format(printf, 1, 2)))
log_warn(const char *fmt, ...)
{
	va_list	ap;
	int	saved = errno;

	va_start(ap, fmt);
	fprintf(stderr, "%s: ", DEMO_NAME);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, ": %s\n", strerror(saved));
	va_end(ap);
	fflush(stderr);
}

/* Log a message and exit. */
static void __attribute__((format(printf, 1, 2), noreturn))
fatalx(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	fprintf(stderr, "%s: ", DEMO_NAME);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

/* Format into a new string. The caller frees it. */
static char * __attribute__((format(printf, 1, 0)))
xvasprintf(const char *fmt, va_list ap)
{
	va_list	 ap2;
	char	*s;
	int	 n;

	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0 || (s = malloc((size_t)n + 1)) == NULL)
		return (NULL);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	return (s);
}

/* Return the string value if v is a string without NUL bytes. */
static const char *
json_cstr(json_t *v)
{
	const char	*s;

	if (!json_is_string(v))
		return (NULL);
	s = json_string_value(v);
	if (strlen(s) != json_string_length(v))
		return (NULL);
	return (s);
}

/* Is this a valid request id (string or integer)? */
static int
valid_id(json_t *id)
{
	return (json_is_string(id) || json_is_integer(id));
}

/* Start writing output when stdout is writable. */
static void
output_kick(void)
{
	if (out_dead)
		return;
	if (!event_pending(out_ev, EV_WRITE, NULL))
		event_add(out_ev, NULL);
}

/* Free a string handed to an evbuffer by reference. */
static void
output_free(const void *data, size_t len, void *arg)
{
	(void)len;
	(void)arg;
	free((void *)(uintptr_t)data);
}

/* Queue one line of raw text for stdout. */
static void
output_raw(const char *s)
{
	if (out_dead)
		return;
	evbuffer_add(outbuf, s, strlen(s));
	evbuffer_add(outbuf, "\n", 1);
	output_kick();
}

/* Queue a JSON message for stdout, without its newline; -1 if not. */
static int
queue_json(json_t *msg)
{
	char	*s;
	size_t	 len;

	if (msg == NULL) {
		log_warnx("out of memory building a message");
		return (-1);
	}
	s = json_dumps(msg, JSON_COMPACT);
	json_decref(msg);
	if (s == NULL) {
		log_warnx("cannot encode a message");
		return (-1);
	}
	if (out_dead) {
		free(s);
		return (-1);
	}

	/* Large messages are handed over rather than copied. */
	len = strlen(s);
	if (len < COPY_LIMIT) {
		evbuffer_add(outbuf, s, len);
		free(s);
	} else if (evbuffer_add_reference(outbuf, s, len, output_free,
	    NULL) != 0) {
		log_warnx("cannot queue a message of %zu bytes", len);
		free(s);
		return (-1);
	}
	return (0);
}

/* Queue a JSON message as one line for stdout. Consumes msg. */
static void
send_json(json_t *msg)
{
	if (queue_json(msg) != 0)
		return;
	evbuffer_add(outbuf, "\n", 1);
	output_kick();
}

/* Send a successful response. Consumes result. */
static void
reply_result(json_t *id, json_t *result)
{
	if (result == NULL) {
		log_warnx("out of memory building a result");
		result = json_object();
	}
	send_json(json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id,
	    "result", result));
}

/* Send an error response. Consumes data, which may be NULL. */
static void __attribute__((format(printf, 4, 5)))
reply_error(json_t *id, int code, json_t *data, const char *fmt, ...)
{
	va_list	 ap;
	json_t	*error;
	char	*msg;

	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);

	error = json_pack("{s:i, s:s}", "code", code, "message",
	    msg != NULL ? msg : "error");
	free(msg);
	if (error != NULL && data != NULL)
		json_object_set(error, "data", data);
	json_decref(data);
	if (error == NULL) {
		log_warnx("out of memory building an error");
		return;
	}
	send_json(json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id",
	    id != NULL ? id : json_null(), "error", error));
}

/* Send a notification. Consumes params, which may be NULL. */
static void
notify(const char *method, json_t *params)
{
	json_t	*msg;

	msg = json_pack("{s:s, s:s}", "jsonrpc", "2.0", "method", method);
	if (msg != NULL && params != NULL)
		json_object_set(msg, "params", params);
	json_decref(params);
	send_json(msg);
}

/* Send a log message notification if the level is high enough. */
static void
notify_log(int level, json_t *data)
{
	if (level < min_level)
		return;
	notify("notifications/message", json_pack("{s:s, s:s, s:O}",
	    "level", levels[level], "logger", "demo", "data", data));
}

/* Build a tool result with one text item. Consumes text. */
static json_t *
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
static json_t * __attribute__((format(printf, 1, 2)))
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
static json_t * __attribute__((format(printf, 1, 2)))
tool_err(const char *fmt, ...)
{
	va_list	 ap;
	json_t	*result;

	va_start(ap, fmt);
	result = tool_vtext(1, fmt, ap);
	va_end(ap);
	return (result);
}

/*
 * Answer a tool call whose arguments are wrong. Since 2025-11-25 such
 * input validation errors are tool execution errors, not protocol errors,
 * so that the model can correct itself.
 */
static void
bad_args(json_t *id)
{
	reply_result(id, tool_err("Invalid arguments: %s", argerr));
}

/* Get a string argument without NUL bytes; NULL dflt means required. */
static int
arg_str(json_t *args, const char *key, const char *dflt, const char **out)
{
	json_t	*v;

	if ((v = json_object_get(args, key)) == NULL) {
		if (dflt == NULL) {
			snprintf(argerr, sizeof argerr,
			    "missing required argument '%s'", key);
			return (-1);
		}
		*out = dflt;
		return (0);
	}
	if ((*out = json_cstr(v)) == NULL) {
		snprintf(argerr, sizeof argerr,
		    "argument '%s' must be a string", key);
		return (-1);
	}
	return (0);
}

/*
 * Get a required argument that must be a string (number 0) or a number
 * (number 1); a string may hold any text at all.
 */
static int
arg_value(json_t *args, const char *key, int number, json_t **out)
{
	json_t	*v;

	if ((v = json_object_get(args, key)) == NULL) {
		snprintf(argerr, sizeof argerr,
		    "missing required argument '%s'", key);
		return (-1);
	}
	if (number ? !json_is_number(v) : !json_is_string(v)) {
		snprintf(argerr, sizeof argerr, "argument '%s' must be %s",
		    key, number ? "a number" : "a string");
		return (-1);
	}
	*out = v;
	return (0);
}

/* Get an integer argument in [min, max]. */
static int
arg_int(json_t *args, const char *key, int required, json_int_t dflt,
    json_int_t min, json_int_t max, json_int_t *out)
{
	json_t		*v;
	json_int_t	 n;
	double		 d;

	if ((v = json_object_get(args, key)) == NULL) {
		if (required) {
			snprintf(argerr, sizeof argerr,
			    "missing required argument '%s'", key);
			return (-1);
		}
		*out = dflt;
		return (0);
	}
	if (json_is_integer(v))
		n = json_integer_value(v);
	else if (json_is_real(v)) {
		/* JSON Schema counts 3.0 as an integer. */
		d = json_real_value(v);
		if (d < (double)min || d > (double)max)
			goto range;
		n = (json_int_t)d;
		if ((double)n != d)
			goto type;
	} else
		goto type;
	if (n < min || n > max)
		goto range;
	*out = n;
	return (0);

type:
	snprintf(argerr, sizeof argerr, "argument '%s' must be an integer",
	    key);
	return (-1);
range:
	snprintf(argerr, sizeof argerr,
	    "argument '%s' must be between %" JSON_INTEGER_FORMAT " and %"
	    JSON_INTEGER_FORMAT, key, min, max);
	return (-1);
}

/* Find a level by name. */
static int
level_find(const char *name)
{
	u_int	i;

	if (name == NULL)
		return (-1);
	for (i = 0; i < NLEVELS; i++) {
		if (strcmp(levels[i], name) == 0)
			return ((int)i);
	}
	return (-1);
}

/* Get a capability the client declared, or NULL. */
static json_t *
client_cap(const char *name)
{
	json_t	*cap;

	if (client_caps == NULL)
		return (NULL);
	cap = json_object_get(client_caps, name);
	return (json_is_object(cap) ? cap : NULL);
}

/* Does the client support form mode elicitation? */
static int
client_form(void)
{
	json_t	*cap;

	if ((cap = client_cap("elicitation")) == NULL)
		return (0);
	/* An empty object means form only, for compatibility. */
	if (json_object_get(cap, "form") == NULL &&
	    json_object_get(cap, "url") == NULL)
		return (1);
	return (json_is_object(json_object_get(cap, "form")));
}

/* Does the client support URL mode elicitation? */
static int
client_url(void)
{
	json_t	*cap;

	if ((cap = client_cap("elicitation")) == NULL)
		return (0);
	return (json_is_object(json_object_get(cap, "url")));
}

/* Create an in-progress request. The caller must answer or free it. */
static struct req *
req_new(json_t *id)
{
	struct req	*r;

	if ((r = calloc(1, sizeof *r)) == NULL)
		fatalx("out of memory");
	r->id = json_incref(id);
	TAILQ_INSERT_TAIL(&reqs, r, entry);
	nreqs++;
	return (r);
}

/* Forget an in-progress request and free it, without answering. */
static void
req_free(struct req *r)
{
	TAILQ_REMOVE(&reqs, r, entry);
	nreqs--;
	if (r->timer != NULL)
		event_free(r->timer);
	json_decref(r->id);
	json_decref(r->token);
	free(r->elicitation);
	free(r);
}

/* Answer an in-progress request and free it. Consumes result. */
static void
req_done(struct req *r, json_t *result)
{
	reply_result(r->id, result);
	req_free(r);
}

/* Find an in-progress request by the client's id. */
static struct req *
req_find(json_t *id)
{
	struct req	*r;

	TAILQ_FOREACH(r, &reqs, entry) {
		if (json_equal(r->id, id))
			return (r);
	}
	return (NULL);
}

/* Find an in-progress request by the id of our request to the client. */
static struct req *
req_find_out(json_int_t out_id)
{
	struct req	*r;

	TAILQ_FOREACH(r, &reqs, entry) {
		if (r->out_id != 0 && r->out_id == out_id)
			return (r);
	}
	return (NULL);
}

/* Send a request to the client for r. Consumes params (may be NULL). */
static void
client_request(struct req *r, const char *method, json_t *params,
    answer_cb cb)
{
	json_t	*msg;

	r->out_id = next_out_id++;
	r->cb = cb;

	msg = json_pack("{s:s, s:I, s:s}", "jsonrpc", "2.0", "id",
	    r->out_id, "method", method);
	if (msg != NULL && params != NULL)
		json_object_set(msg, "params", params);
	json_decref(params);
	send_json(msg);
}

/* Get the message of an error answer from the client. */
static const char *
error_message(json_t *error)
{
	const char	*s;

	s = json_cstr(json_object_get(error, "message"));
	return (s != NULL ? s : "client returned an error");
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

/* Write what is queued for stdout, waiting at most ms milliseconds. */
static void
output_flush(int ms)
{
	struct pollfd	pfd;
	struct timespec	start, now;
	long		left;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!out_dead && evbuffer_get_length(outbuf) != 0) {
		if (evbuffer_write(outbuf, STDOUT_FILENO) != -1)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return;
		clock_gettime(CLOCK_MONOTONIC, &now);
		left = ms - ((now.tv_sec - start.tv_sec) * 1000 +
		    (now.tv_nsec - start.tv_nsec) / 1000000);
		if (left <= 0)
			return;
		pfd.fd = STDOUT_FILENO;
		pfd.events = POLLOUT;
		poll(&pfd, 1, (int)left);
	}
}

/*
 * Exit at once with the given code, without answering, or with an answer
 * whose line has no newline: the last words of a server that exits.
 */
static void
tool_crash(json_t *id, json_t *params, json_t *args)
{
	json_int_t	 code;
	json_t		*answer = NULL;

	(void)params;
	if (arg_int(args, "code", 0, 3, 0, 255, &code) != 0 ||
	    (json_object_get(args, "answer") != NULL &&
	    arg_value(args, "answer", 0, &answer) != 0)) {
		bad_args(id);
		return;
	}
	if (answer != NULL)
		queue_json(json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0",
		    "id", id, "result", tool_content(json_copy(answer), 0)));
	/* Earlier answers are still sent, so what the client sees is clear. */
	output_flush(CRASH_FLUSH_MS);
	fprintf(stderr, "crashing\n");
	fflush(stderr);
	_exit((int)code);
}

/* Block the whole process, answering nothing, like a hung server. */
static void
tool_hang(json_t *id, json_t *params, json_t *args)
{
	json_int_t	seconds;
	struct timespec	ts;

	(void)params;
	if (arg_int(args, "seconds", 0, 3600, 1, 3600, &seconds) != 0) {
		bad_args(id);
		return;
	}
	fprintf(stderr, "hanging for %lld s\n", (long long)seconds);
	fflush(stderr);
	ts.tv_sec = (time_t)seconds;
	ts.tv_nsec = 0;
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
	reply_result(id, tool_ok("woke up"));
}

/* Write a line that is not JSON to stdout, then answer. */
static void
tool_garbage(json_t *id, json_t *params, json_t *args)
{
	(void)params;
	(void)args;
	output_raw("this is not json {");
	reply_result(id, tool_ok("garbage sent"));
}

/*
 * Answer with a text of exactly the given number of bytes. The line is
 * built directly in the output buffer: 64 MiB of 'x' need no escaping and
 * are not worth three copies through jansson.
 */
static void
tool_big(json_t *id, json_t *params, json_t *args)
{
	struct evbuffer_iovec	 vec[2];
	json_int_t		 bytes;
	size_t			 left, n;
	char			*ids;
	int			 i, nvec;

	(void)params;
	if (arg_int(args, "bytes", 1, 0, 0, MAX_BIG, &bytes) != 0) {
		bad_args(id);
		return;
	}
	if (out_dead)
		return;
	if ((ids = json_dumps(id, JSON_COMPACT|JSON_ENCODE_ANY)) == NULL) {
		reply_error(id, ERR_INTERNAL, NULL,
		    "Internal error: out of memory");
		return;
	}

	evbuffer_add_printf(outbuf, "{\"jsonrpc\":\"2.0\",\"id\":%s,"
	    "\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"", ids);
	free(ids);
	left = (size_t)bytes;
	while (left != 0) {
		nvec = evbuffer_reserve_space(outbuf, (ev_ssize_t)left, vec, 2);
		if (nvec <= 0)
			break;
		for (i = 0; i < nvec && left != 0; i++) {
			n = vec[i].iov_len < left ? vec[i].iov_len : left;
			memset(vec[i].iov_base, 'x', n);
			vec[i].iov_len = n;
			left -= n;
		}
		evbuffer_commit_space(outbuf, vec, i);
	}
	if (left != 0) {
		/* Cannot happen short of memory; the line is broken now. */
		log_warnx("out of memory building big answer");
		out_dead = 1;
		exit_code = 1;
		event_base_loopbreak(base);
		return;
	}
	evbuffer_add(outbuf, "\"}]}}\n", 6);
	output_kick();
}

/* Pick the text out of a sampling answer. */
static const char *
sample_text(json_t *result)
{
	json_t	*content, *item;
	size_t	 i;

	content = json_object_get(result, "content");
	if (json_is_object(content))
		return (json_string_value(json_object_get(content, "text")));
	json_array_foreach(content, i, item) {
		if (json_is_string(json_object_get(item, "text")))
			return (json_string_value(json_object_get(item,
			    "text")));
	}
	return (NULL);
}

/* Finish a sample tool call with the client's answer. */
static void
sample_done(struct req *r, json_t *result, json_t *error)
{
	const char	*text;

	if (error != NULL)
		req_done(r, tool_err("%s", error_message(error)));
	else if ((text = sample_text(result)) == NULL)
		req_done(r, tool_err("sampling result has no text content"));
	else
		req_done(r, tool_ok("sampled: %s", text));
}

/* Ask the client to sample a message for the prompt. */
static void
tool_sample(json_t *id, json_t *params, json_t *args)
{
	struct req	*r;
	json_t		*prompt;
	json_int_t	 max;

	(void)params;
	if (arg_value(args, "prompt", 0, &prompt) != 0 ||
	    arg_int(args, "maxTokens", 0, 100, 1, MAX_TOKENS, &max) != 0) {
		bad_args(id);
		return;
	}
	if (client_cap("sampling") == NULL) {
		reply_result(id, tool_err("the client does not support "
		    "sampling (no sampling capability)"));
		return;
	}
	r = req_new(id);
	client_request(r, "sampling/createMessage",
	    json_pack("{s:[{s:s, s:{s:s, s:O}}], s:I}", "messages", "role",
	    "user", "content", "type", "text", "text", prompt, "maxTokens",
	    max), sample_done);
}

/* Finish an elicit tool call with the client's answer. */
static void
elicit_done(struct req *r, json_t *result, json_t *error)
{
	const char	*action;
	json_t		*content;
	char		*s;

	if (error != NULL) {
		req_done(r, tool_err("%s", error_message(error)));
		return;
	}
	if ((action = json_cstr(json_object_get(result, "action"))) == NULL) {
		req_done(r, tool_err("elicitation result has no action"));
		return;
	}
	content = json_object_get(result, "content");
	if (content == NULL)
		s = strdup("null");
	else
		s = json_dumps(content, JSON_COMPACT|JSON_ENCODE_ANY);
	req_done(r, tool_ok("action=%s content=%s", action,
	    s != NULL ? s : "null"));
	free(s);
}

/* Ask the user for a name and age through a form. */
static void
tool_elicit(json_t *id, json_t *params, json_t *args)
{
	struct req	*r;
	const char	*message;

	(void)params;
	if (arg_str(args, "message", "Please provide your name",
	    &message) != 0) {
		bad_args(id);
		return;
	}
	if (!client_form()) {
		reply_result(id, tool_err("the client does not support form "
		    "elicitation (no elicitation capability)"));
		return;
	}
	r = req_new(id);
	client_request(r, "elicitation/create", json_pack(
	    "{s:s, s:s, s:{s:s, s:{s:{s:s, s:s, s:s}, s:{s:s, s:i, s:i}},"
	    " s:[s]}}",
	    "mode", "form",
	    "message", message,
	    "requestedSchema",
		"type", "object",
		"properties",
		    "name", "type", "string", "title", "Name", "default", "Ada",
		    "age", "type", "integer", "minimum", 0, "default", 36,
		"required", "name"), elicit_done);
}

/* Finish an elicit_url tool call with the client's answer. */
static void
elicit_url_done(struct req *r, json_t *result, json_t *error)
{
	const char	*action;

	if (error != NULL) {
		req_done(r, tool_err("%s", error_message(error)));
		return;
	}
	if ((action = json_cstr(json_object_get(result, "action"))) == NULL) {
		req_done(r, tool_err("elicitation result has no action"));
		return;
	}
	/* The demo has nothing to wait for: it is complete at once. */
	if (strcmp(action, "accept") == 0) {
		notify("notifications/elicitation/complete", json_pack(
		    "{s:s}", "elicitationId", r->elicitation));
	}
	req_done(r, tool_ok("action=%s", action));
}

/* Send the user to a URL. */
static void
tool_elicit_url(json_t *id, json_t *params, json_t *args)
{
	struct req	*r;
	const char	*url;
	char		 eid[64];

	(void)params;
	if (arg_str(args, "url", "https://example.com/consent", &url) != 0) {
		bad_args(id);
		return;
	}
	if (!client_url()) {
		reply_result(id, tool_err("the client does not support URL "
		    "elicitation (no elicitation.url capability)"));
		return;
	}
	snprintf(eid, sizeof eid, "demo-%ld-%llu", (long)getpid(),
	    next_elicitation++);
	r = req_new(id);
	if ((r->elicitation = strdup(eid)) == NULL)
		fatalx("out of memory");
	client_request(r, "elicitation/create", json_pack(
	    "{s:s, s:s, s:s, s:s}", "mode", "url", "message",
	    "Please open this URL to give your consent.", "url", url,
	    "elicitationId", eid), elicit_url_done);
}

/* Finish a roots tool call with the client's answer. */
static void
roots_done(struct req *r, json_t *result, json_t *error)
{
	json_t	*roots;
	char	*s;

	if (error != NULL) {
		req_done(r, tool_err("%s", error_message(error)));
		return;
	}
	roots = json_object_get(result, "roots");
	if (!json_is_array(roots)) {
		req_done(r, tool_err("roots/list result has no roots array"));
		return;
	}
	if ((s = json_dumps(roots, JSON_COMPACT)) == NULL) {
		req_done(r, tool_err("cannot encode roots"));
		return;
	}
	req_done(r, tool_ok("%s", s));
	free(s);
}

/* Ask the client for its roots. */
static void
tool_roots(json_t *id, json_t *params, json_t *args)
{
	struct req	*r;

	(void)params;
	(void)args;
	if (client_cap("roots") == NULL) {
		reply_result(id, tool_err("the client does not support roots "
		    "(no roots capability)"));
		return;
	}
	r = req_new(id);
	client_request(r, "roots/list", NULL, roots_done);
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

/* Write text to stderr. */
static void
tool_stderr(json_t *id, json_t *params, json_t *args)
{
	json_t	*text;

	(void)params;
	if (arg_value(args, "text", 0, &text) != 0) {
		bad_args(id);
		return;
	}
	fwrite(json_string_value(text), 1, json_string_length(text), stderr);
	fputc('\n', stderr);
	fflush(stderr);
	reply_result(id, tool_ok("written"));
}

/* Finish a ping_client tool call with the client's answer. */
static void
ping_done(struct req *r, json_t *result, json_t *error)
{
	(void)result;
	if (error != NULL)
		req_done(r, tool_err("ping failed: %s", error_message(error)));
	else
		req_done(r, tool_ok("pong"));
}

/* Ping the client. */
static void
tool_ping_client(json_t *id, json_t *params, json_t *args)
{
	struct req	*r;

	(void)params;
	(void)args;
	r = req_new(id);
	client_request(r, "ping", NULL, ping_done);
}

/* Answer a call of the extra tool. */
static void
tool_extra(json_t *id, json_t *params, json_t *args)
{
	(void)params;
	(void)args;
	reply_result(id, tool_ok("extra"));
}

/* Parse a cursor made by reply_page. */
static int
cursor_parse(const char *key, const char *cursor, size_t n, size_t *off)
{
	size_t			 klen = strlen(key);
	const char		*p;
	unsigned long long	 v = 0;

	if (strncmp(cursor, key, klen) != 0 || cursor[klen] != ':')
		return (-1);
	p = cursor + klen + 1;
	if (*p == '\0' || strlen(p) > 9)
		return (-1);
	for (; *p != '\0'; p++) {
		if (*p < '0' || *p > '9')
			return (-1);
		v = v * 10 + (unsigned long long)(*p - '0');
	}
	if (v > n)
		return (-1);
	*off = (size_t)v;
	return (0);
}

/* Answer a list request with one page of items. Consumes items. */
static void
reply_page(json_t *id, json_t *params, const char *key, json_t *items)
{
	json_t		*cursor, *page, *result;
	const char	*s;
	size_t		 n, off = 0, end, i;
	char		 next[64];

	if (items == NULL) {
		reply_error(id, ERR_INTERNAL, NULL,
		    "Internal error: out of memory");
		return;
	}
	n = json_array_size(items);
	if ((cursor = json_object_get(params, "cursor")) != NULL) {
		s = json_cstr(cursor);
		if (s == NULL || cursor_parse(key, s, n, &off) != 0) {
			json_decref(items);
			reply_error(id, ERR_PARAMS, NULL,
			    "Invalid params: invalid cursor");
			return;
		}
	}
	end = n;
	if (page_size != 0 && n - off > page_size)
		end = off + page_size;

	page = json_array();
	for (i = off; page != NULL && i < end; i++)
		json_array_append(page, json_array_get(items, i));
	json_decref(items);
	if ((result = json_pack("{s:o}", key, page)) != NULL && end < n) {
		snprintf(next, sizeof next, "%s:%zu", key, end);
		json_object_set_new(result, "nextCursor", json_string(next));
	}
	reply_result(id, result);
}

/* Handle initialize: agree a version and remember the client. */
static void
method_initialize(json_t *id, json_t *params)
{
	json_t		*caps;
	const char	*version, *answer = LATEST_PROTOCOL;
	u_int		 i;

	if ((version = json_cstr(json_object_get(params,
	    "protocolVersion"))) == NULL) {
		reply_error(id, ERR_PARAMS, NULL, "Invalid params: "
		    "protocolVersion must be a string");
		return;
	}
	caps = json_object_get(params, "capabilities");
	if (caps != NULL && !json_is_object(caps)) {
		reply_error(id, ERR_PARAMS, NULL, "Invalid params: "
		    "capabilities must be an object");
		return;
	}
	for (i = 0; i < sizeof protocols / sizeof protocols[0]; i++) {
		if (strcmp(version, protocols[i]) == 0)
			answer = protocols[i];
	}

	json_decref(client_caps);
	client_caps = caps != NULL ? json_deep_copy(caps) : json_object();

	reply_result(id, json_pack("{s:s,"
	    " s:{s:{s:b}, s:{s:b, s:b}, s:{s:b}, s:{}, s:{}},"
	    " s:{s:s, s:s}, s:s}",
	    "protocolVersion", answer,
	    "capabilities",
		"tools", "listChanged", 1,
		"resources", "subscribe", 1, "listChanged", 1,
		"prompts", "listChanged", 1,
		"logging",
		"completions",
	    "serverInfo", "name", server_name, "version", DEMO_VERSION,
	    "instructions", "A demonstration server. Call the echo tool to "
	    "check the connection; see tools/list for the other tools."));
}

/* Handle ping. */
static void
method_ping(json_t *id, json_t *params)
{
	(void)params;
	reply_result(id, json_object());
}

/* Handle logging/setLevel. */
static void
method_set_level(json_t *id, json_t *params)
{
	int	level;

	level = level_find(json_cstr(json_object_get(params, "level")));
	if (level == -1) {
		reply_error(id, ERR_PARAMS, NULL, "Invalid params: level must "
		    "be one of debug, info, notice, warning, error, critical, "
		    "alert, emergency");
		return;
	}
	min_level = level;
	reply_result(id, json_object());
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
static void
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
static void
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

/* Handle resources/list. */
static void
method_resources_list(json_t *id, json_t *params)
{
	reply_page(id, params, "resources", json_pack("["
	    "{s:s, s:s, s:s, s:s, s:s},"
	    "{s:s, s:s, s:s, s:s, s:s},"
	    "{s:s, s:s, s:s, s:s, s:s, s:i}]",
	    "uri", "demo://readme", "name", "readme", "title", "Read me",
	    "description", "What this server is", "mimeType", "text/plain",
	    "uri", "demo://counter", "name", "counter", "title", "Counter",
	    "description", "A number the touch tool increments",
	    "mimeType", "text/plain",
	    "uri", "demo://logo", "name", "logo", "title", "Logo",
	    "description", "A small picture", "mimeType", "image/png",
	    "size", LOGO_SIZE));
}

/* Handle resources/templates/list. */
static void
method_templates_list(json_t *id, json_t *params)
{
	reply_page(id, params, "resourceTemplates", json_pack(
	    "[{s:s, s:s, s:s, s:s, s:s}]", "uriTemplate", "demo://item/{id}",
	    "name", "item", "title", "Item", "description",
	    "An item by id; any id exists", "mimeType", "text/plain"));
}

/* Get the uri parameter. */
static const char *
param_uri(json_t *id, json_t *params)
{
	const char	*uri;

	if ((uri = json_cstr(json_object_get(params, "uri"))) == NULL) {
		reply_error(id, ERR_PARAMS, NULL,
		    "Invalid params: uri must be a string");
	}
	return (uri);
}

/* Handle resources/read. */
static void
method_resources_read(json_t *id, json_t *params)
{
	const char	*uri, *item = "demo://item/";
	char		 buf[32];
	json_t		*text;

	if ((uri = param_uri(id, params)) == NULL)
		return;

	if (strcmp(uri, "demo://logo") == 0) {
		reply_result(id, json_pack("{s:[{s:s, s:s, s:s}]}", "contents",
		    "uri", uri, "mimeType", "image/png", "blob", logo_png));
		return;
	}
	if (strcmp(uri, "demo://readme") == 0)
		text = json_string(readme_text);
	else if (strcmp(uri, "demo://counter") == 0) {
		snprintf(buf, sizeof buf, "%llu", counter);
		text = json_string(buf);
	} else if (strncmp(uri, item, strlen(item)) == 0 &&
	    uri[strlen(item)] != '\0') {
		text = json_pack("s+", "item ", uri + strlen(item));
	} else {
		reply_error(id, ERR_NOT_FOUND, json_pack("{s:s}", "uri", uri),
		    "Resource not found");
		return;
	}
	reply_result(id, json_pack("{s:[{s:s, s:s, s:o}]}", "contents",
	    "uri", uri, "mimeType", "text/plain", "text", text));
}

/* Handle resources/subscribe. */
static void
method_subscribe(json_t *id, json_t *params)
{
	const char	*uri;

	if ((uri = param_uri(id, params)) == NULL)
		return;
	if (json_object_get(subscriptions, uri) == NULL) {
		if (json_object_size(subscriptions) >= MAX_SUBSCRIPTIONS) {
			reply_error(id, ERR_INTERNAL, NULL,
			    "too many subscriptions");
			return;
		}
		json_object_set_new(subscriptions, uri, json_true());
	}
	reply_result(id, json_object());
}

/* Handle resources/unsubscribe. */
static void
method_unsubscribe(json_t *id, json_t *params)
{
	const char	*uri;

	if ((uri = param_uri(id, params)) == NULL)
		return;
	json_object_del(subscriptions, uri);
	reply_result(id, json_object());
}

/* Handle prompts/list. */
static void
method_prompts_list(json_t *id, json_t *params)
{
	reply_page(id, params, "prompts", json_pack("["
	    "{s:s, s:s, s:s, s:[{s:s, s:s, s:b}]},"
	    "{s:s, s:s, s:s, s:[{s:s, s:s, s:b}]}]",
	    "name", "greeting", "title", "Greeting",
	    "description", "Greet someone by name",
	    "arguments", "name", "name", "description", "Who to greet",
	    "required", 1,
	    "name", "summarize", "title", "Summarize",
	    "description", "Ask for a summary",
	    "arguments", "name", "topic", "description", "What to summarize",
	    "required", 0));
}

/* Handle prompts/get. */
static void
method_prompts_get(json_t *id, json_t *params)
{
	const char	*name, *key, *arg, *description;
	json_t		*args, *v, *text;

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
	json_object_foreach(args, key, v) {
		if (json_cstr(v) == NULL) {
			reply_error(id, ERR_PARAMS, NULL, "Invalid params: "
			    "argument '%s' must be a string", key);
			return;
		}
	}

	if (strcmp(name, "greeting") == 0) {
		arg = json_cstr(json_object_get(args, "name"));
		if (arg == NULL) {
			reply_error(id, ERR_PARAMS, NULL, "Invalid params: "
			    "missing required argument 'name'");
			return;
		}
		description = "A friendly greeting";
		text = json_pack("s++", "Hello, ", arg, "!");
	} else if (strcmp(name, "summarize") == 0) {
		arg = json_cstr(json_object_get(args, "topic"));
		description = "A request for a summary";
		if (arg != NULL)
			text = json_pack("s++", "Please summarize ", arg, ".");
		else
			text = json_string("Please summarize the conversation "
			    "so far.");
	} else {
		reply_error(id, ERR_PARAMS, NULL, "Unknown prompt: %s", name);
		return;
	}
	reply_result(id, json_pack("{s:s, s:[{s:s, s:{s:s, s:o}}]}",
	    "description", description, "messages", "role", "user",
	    "content", "type", "text", "text", text));
}

/* Handle completion/complete. */
static void
method_complete(json_t *id, json_t *params)
{
	json_t		*ref, *arg, *values;
	const char	*type, *name, *value, *what, **list = NULL;
	size_t		 n = 0, i, len;

	ref = json_object_get(params, "ref");
	arg = json_object_get(params, "argument");
	type = json_cstr(json_object_get(ref, "type"));
	name = json_cstr(json_object_get(arg, "name"));
	value = json_cstr(json_object_get(arg, "value"));
	if (!json_is_object(ref) || type == NULL) {
		reply_error(id, ERR_PARAMS, NULL,
		    "Invalid params: ref must be an object with a type");
		return;
	}
	if (!json_is_object(arg) || name == NULL || value == NULL) {
		reply_error(id, ERR_PARAMS, NULL, "Invalid params: argument "
		    "must be an object with a name and a value");
		return;
	}

	if (strcmp(type, "ref/prompt") == 0) {
		what = json_cstr(json_object_get(ref, "name"));
		if (what != NULL && strcmp(what, "greeting") == 0 &&
		    strcmp(name, "name") == 0) {
			list = names;
			n = sizeof names / sizeof names[0];
		}
	} else if (strcmp(type, "ref/resource") == 0) {
		what = json_cstr(json_object_get(ref, "uri"));
		if (what != NULL && strcmp(what, "demo://item/{id}") == 0 &&
		    strcmp(name, "id") == 0) {
			list = item_ids;
			n = sizeof item_ids / sizeof item_ids[0];
		}
	}

	values = json_array();
	len = strlen(value);
	for (i = 0; values != NULL && i < n; i++) {
		if (strncmp(list[i], value, len) == 0)
			json_array_append_new(values, json_string(list[i]));
	}
	reply_result(id, json_pack("{s:{s:o, s:I, s:b}}", "completion",
	    "values", values, "total", (json_int_t)json_array_size(values),
	    "hasMore", 0));
}

static const struct method methods[] = {
	{ "initialize", method_initialize },
	{ "ping", method_ping },
	{ "logging/setLevel", method_set_level },
	{ "tools/list", method_tools_list },
	{ "tools/call", method_tools_call },
	{ "resources/list", method_resources_list },
	{ "resources/templates/list", method_templates_list },
	{ "resources/read", method_resources_read },
	{ "resources/subscribe", method_subscribe },
	{ "resources/unsubscribe", method_unsubscribe },
	{ "prompts/list", method_prompts_list },
	{ "prompts/get", method_prompts_get },
	{ "completion/complete", method_complete },
};

/* Handle notifications/cancelled: drop the request without answering. */
static void
cancel_request(json_t *params)
{
	struct req	*r;
	json_t		*rid;
	const char	*reason;

	rid = json_object_get(params, "requestId");
	if (!valid_id(rid) || (r = req_find(rid)) == NULL)
		return;
	reason = json_cstr(json_object_get(params, "reason"));
	log_warnx("request cancelled%s%s", reason != NULL ? ": " : "",
	    reason != NULL ? reason : "");

	/* Stop waiting for the client too, and tell it so. */
	if (r->out_id != 0) {
		notify("notifications/cancelled", json_pack("{s:I, s:s}",
		    "requestId", r->out_id, "reason",
		    "the request that needed it was cancelled"));
	}
	req_free(r);
}

/* Handle a notification; unknown ones are ignored. */
static void
handle_notification(const char *method, json_t *params)
{
	if (strcmp(method, "notifications/cancelled") == 0)
		cancel_request(params);
}

/* Handle a request. */
static void
handle_request(json_t *id, const char *method, json_t *params)
{
	u_int	i;

	if (nreqs >= MAX_INFLIGHT) {
		reply_error(id, ERR_INTERNAL, NULL,
		    "too many requests in flight");
		return;
	}
	if (req_find(id) != NULL) {
		reply_error(id, ERR_REQUEST, NULL,
		    "Invalid Request: id is already in use");
		return;
	}
	for (i = 0; i < sizeof methods / sizeof methods[0]; i++) {
		if (strcmp(methods[i].name, method) == 0) {
			methods[i].fn(id, params);
			return;
		}
	}
	reply_error(id, ERR_METHOD, NULL, "Method not found: %s", method);
}

/* Handle the client's answer to one of our requests. */
static void
handle_response(json_t *msg)
{
	struct req	*r;
	json_t		*id, *result, *error, *bad = NULL;

	id = json_object_get(msg, "id");
	if (!json_is_integer(id) ||
	    (r = req_find_out(json_integer_value(id))) == NULL) {
		if (id != NULL && (json_is_integer(id) || json_is_string(id))) {
			char *s = json_dumps(id, JSON_ENCODE_ANY);

			log_warnx("ignoring response with unknown id %s",
			    s != NULL ? s : "?");
			free(s);
		} else
			log_warnx("ignoring response without a valid id");
		return;
	}
	result = json_object_get(msg, "result");
	error = json_object_get(msg, "error");
	if (error != NULL && !json_is_object(error))
		error = NULL;
	if (error == NULL && result == NULL) {
		log_warnx("malformed response to request %" JSON_INTEGER_FORMAT,
		    r->out_id);
		error = bad = json_pack("{s:i, s:s}", "code", ERR_INTERNAL,
		    "message", "malformed response from the client");
	}
	r->out_id = 0;
	r->cb(r, result, error);
	json_decref(bad);
}

/* Handle one parsed message. */
static void
handle_message(json_t *msg)
{
	json_t		*id, *method, *params, *empty = NULL;
	const char	*name, *version;

	if (!json_is_object(msg)) {
		reply_error(NULL, ERR_REQUEST, NULL, "Invalid Request: %s",
		    json_is_array(msg) ? "batches are not supported" :
		    "a message must be an object");
		return;
	}
	id = json_object_get(msg, "id");
	method = json_object_get(msg, "method");
	version = json_cstr(json_object_get(msg, "jsonrpc"));

	if (method == NULL) {
		if (json_object_get(msg, "result") != NULL ||
		    json_object_get(msg, "error") != NULL) {
			handle_response(msg);
			return;
		}
		reply_error(valid_id(id) ? id : NULL, ERR_REQUEST, NULL,
		    "Invalid Request: no method, result or error");
		return;
	}
	if (id != NULL && !valid_id(id)) {
		reply_error(NULL, ERR_REQUEST, NULL,
		    "Invalid Request: id must be a string or an integer");
		return;
	}
	if (version == NULL || strcmp(version, "2.0") != 0) {
		reply_error(id, ERR_REQUEST, NULL,
		    "Invalid Request: jsonrpc must be \"2.0\"");
		return;
	}
	if ((name = json_cstr(method)) == NULL) {
		reply_error(id, ERR_REQUEST, NULL,
		    "Invalid Request: method must be a string");
		return;
	}
	params = json_object_get(msg, "params");
	if (params != NULL && !json_is_object(params)) {
		reply_error(id, ERR_REQUEST, NULL,
		    "Invalid Request: params must be an object");
		return;
	}
	if (params == NULL && (params = empty = json_object()) == NULL) {
		log_warnx("out of memory");
		return;
	}

	if (id == NULL)
		handle_notification(name, params);
	else
		handle_request(id, name, params);
	json_decref(empty);
}

/* Parse and handle one line of input, not counting the newline. */
static void
handle_line(size_t len)
{
	const char	*line;
	json_t		*msg;
	json_error_t	 error;
	size_t		 i;

	if (len == 0)
		return;
	if ((line = (const char *)evbuffer_pullup(inbuf,
	    (ev_ssize_t)len)) == NULL) {
		log_warnx("out of memory reading a line of %zu bytes", len);
		return;
	}

	/* Blank lines are not messages; skip them quietly. */
	for (i = 0; i < len; i++) {
		if (line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
			break;
	}
	if (i == len)
		return;

	msg = json_loadb(line, len, JSON_DECODE_ANY|JSON_ALLOW_NUL, &error);
	if (msg == NULL) {
		log_warnx("parse error at line %d column %d: %s", error.line,
		    error.column, error.text);
		send_json(json_pack("{s:s, s:n, s:{s:i, s:s}}", "jsonrpc",
		    "2.0", "id", "error", "code", ERR_PARSE, "message",
		    "Parse error"));
		return;
	}
	handle_message(msg);
	json_decref(msg);
}

/* Stop reading input: wait for everything to be written, then exit. */
static void
start_close(void)
{
	struct timeval	 tv = { DRAIN_SECONDS, 0 };
	struct req	*r;

	if (closing)
		return;
	closing = 1;
	event_del(in_ev);

	/* Requests still in progress are abandoned, unanswered. */
	while ((r = TAILQ_FIRST(&reqs)) != NULL)
		req_free(r);

	if (out_dead || evbuffer_get_length(outbuf) == 0)
		event_base_loopbreak(base);
	else
		evtimer_add(drain_ev, &tv);
}

/* Handle every complete line in the input buffer. */
static void
process_input(void)
{
	struct evbuffer_ptr	p;
	size_t			len;

	while (!paused && !closing) {
		len = evbuffer_get_length(inbuf);
		if (len == 0 || scan_off >= len)
			break;

		/* Search only what has not been searched before. */
		evbuffer_ptr_set(inbuf, &p, scan_off, EVBUFFER_PTR_SET);
		p = evbuffer_search(inbuf, "\n", 1, &p);
		if (p.pos == -1) {
			scan_off = len;
			if (discarding) {
				evbuffer_drain(inbuf, len);
				scan_off = 0;
			} else if (len > MAX_LINE) {
				log_warnx("discarding input line longer than "
				    "%lu bytes", MAX_LINE);
				evbuffer_drain(inbuf, len);
				scan_off = 0;
				discarding = 1;
			}
			break;
		}
		scan_off = 0;

		len = (size_t)p.pos;
		if (discarding)
			discarding = 0;
		else if (len > MAX_LINE) {
			log_warnx("discarding input line of %zu bytes", len);
		} else
			handle_line(len);
		evbuffer_drain(inbuf, len + 1);

		/* Stop reading while the client is not reading. */
		if (evbuffer_get_length(outbuf) > OUT_HIGH) {
			paused = 1;
			event_del(in_ev);
		}
	}

	if (in_eof && !paused && !closing) {
		/* The last line may lack its newline. */
		len = evbuffer_get_length(inbuf);
		if (!discarding && len <= MAX_LINE)
			handle_line(len);
		evbuffer_drain(inbuf, len);
		start_close();
	}
}

/* Read what is available on stdin. */
static void
input_cb(evutil_socket_t fd, short events, void *arg)
{
	struct evbuffer_iovec	vec;
	ssize_t			n;

	(void)events;
	(void)arg;

	if (evbuffer_reserve_space(inbuf, READ_CHUNK, &vec, 1) != 1) {
		log_warnx("out of memory reading input");
		exit_code = 1;
		event_base_loopbreak(base);
		return;
	}
	if (vec.iov_len > READ_CHUNK)
		vec.iov_len = READ_CHUNK;
	n = read(fd, vec.iov_base, vec.iov_len);
	if (n == -1) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return;
		log_warn("read");
		n = 0;
	}
	vec.iov_len = (size_t)n;
	evbuffer_commit_space(inbuf, &vec, 1);

	if (n == 0) {
		in_eof = 1;
		event_del(in_ev);
	}
	process_input();
}

/* Write what is queued to stdout. */
static void
output_cb(evutil_socket_t fd, short events, void *arg)
{
	(void)events;
	(void)arg;

	if (evbuffer_write(outbuf, fd) == -1) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return;
		/* A closed pipe means the client has gone: not an error. */
		if (errno == EPIPE)
			log_warnx("stdout closed, exiting");
		else {
			log_warn("write");
			exit_code = 1;
		}
		out_dead = 1;
		evbuffer_drain(outbuf, evbuffer_get_length(outbuf));
		event_del(out_ev);
		closing = 1;
		event_base_loopbreak(base);
		return;
	}

	if (evbuffer_get_length(outbuf) == 0) {
		event_del(out_ev);
		if (closing)
			event_base_loopbreak(base);
	}
	if (paused && evbuffer_get_length(outbuf) < OUT_LOW) {
		paused = 0;
		if (!in_eof)
			event_add(in_ev, NULL);
		process_input();
	}
}

/* Give up flushing output after EOF. */
static void
drain_cb(evutil_socket_t fd, short events, void *arg)
{
	(void)fd;
	(void)events;
	(void)arg;
	log_warnx("client is not reading, exiting with %zu bytes unwritten",
	    evbuffer_get_length(outbuf));
	event_base_loopbreak(base);
}

/* Make a descriptor non-blocking, returning its old flags. */
static int
set_nonblock(int fd)
{
	int	flags;

	if ((flags = fcntl(fd, F_GETFL)) == -1)
		return (-1);
	if (fcntl(fd, F_SETFL, flags | O_NONBLOCK) == -1)
		return (-1);
	return (flags);
}

/* Print usage. */
static void
usage(FILE *f)
{
	fprintf(f, "usage: %s [--name name] [--page-size n] [--test-tools] "
	    "[--help] [--version]\n", DEMO_NAME);
}

/* Parse the tool schemas. */
static void
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

/* Free everything. */
static void
cleanup(void)
{
	struct req	*r;
	u_int		 i;

	while ((r = TAILQ_FIRST(&reqs)) != NULL)
		req_free(r);
	for (i = 0; i < NTOOLS; i++) {
		json_decref(tools[i].input_json);
		json_decref(tools[i].output_json);
	}
	json_decref(client_caps);
	json_decref(subscriptions);

	event_free(in_ev);
	event_free(out_ev);
	event_free(drain_ev);
	evbuffer_free(inbuf);
	evbuffer_free(outbuf);
	event_base_free(base);

	if (in_flags != -1)
		fcntl(STDIN_FILENO, F_SETFL, in_flags);
	if (out_flags != -1)
		fcntl(STDOUT_FILENO, F_SETFL, out_flags);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "name", required_argument, NULL, 'n' },
		{ "page-size", required_argument, NULL, 'p' },
		{ "test-tools", no_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct event_config	*cfg;
	char			*end;
	unsigned long		 n;
	int			 ch;

	while ((ch = getopt_long(argc, argv, "hn:p:tV", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'n':
			if (*optarg == '\0' || strlen(optarg) > MAX_NAME) {
				fprintf(stderr, "%s: bad name\n", DEMO_NAME);
				usage(stderr);
				return (2);
			}
			server_name = optarg;
			break;
		case 'p':
			errno = 0;
			n = strtoul(optarg, &end, 10);
			if (*optarg < '0' || *optarg > '9' || *end != '\0' ||
			    errno != 0 || n > MAX_PAGE_SIZE) {
				fprintf(stderr, "%s: bad page size: %s\n",
				    DEMO_NAME, optarg);
				usage(stderr);
				return (2);
			}
			page_size = n;
			break;
		case 't':
			test_tools = 1;
			break;
		case 'h':
			usage(stdout);
			return (0);
		case 'V':
			printf("%s %s\n", DEMO_NAME, DEMO_VERSION);
			return (0);
		default:
			usage(stderr);
			return (2);
		}
	}
	if (optind != argc) {
		usage(stderr);
		return (2);
	}

	signal(SIGPIPE, SIG_IGN);
	tools_init();
	if ((subscriptions = json_object()) == NULL)
		fatalx("out of memory");

	/*
	 * Only two descriptors are watched, so poll(2) costs nothing, and
	 * unlike epoll it also works when stdin or stdout is a regular file
	 * or /dev/null.
	 */
	if ((cfg = event_config_new()) == NULL)
		fatalx("event_config_new failed");
	event_config_avoid_method(cfg, "epoll");
	event_config_avoid_method(cfg, "kqueue");
	base = event_base_new_with_config(cfg);
	event_config_free(cfg);
	if (base == NULL && (base = event_base_new()) == NULL)
		fatalx("event_base_new failed");

	in_flags = set_nonblock(STDIN_FILENO);
	out_flags = set_nonblock(STDOUT_FILENO);
	if (in_flags == -1 || out_flags == -1)
		fatalx("cannot make stdin and stdout non-blocking");

	inbuf = evbuffer_new();
	outbuf = evbuffer_new();
	in_ev = event_new(base, STDIN_FILENO, EV_READ|EV_PERSIST, input_cb,
	    NULL);
	out_ev = event_new(base, STDOUT_FILENO, EV_WRITE|EV_PERSIST,
	    output_cb, NULL);
	drain_ev = evtimer_new(base, drain_cb, NULL);
	if (inbuf == NULL || outbuf == NULL || in_ev == NULL ||
	    out_ev == NULL || drain_ev == NULL)
		fatalx("out of memory");
	if (event_add(in_ev, NULL) != 0)
		fatalx("cannot watch stdin");

	event_base_dispatch(base);

	cleanup();
	return (exit_code);
}
