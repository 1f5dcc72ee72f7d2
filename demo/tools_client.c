/* SPDX-License-Identifier: ISC */
/*
 * mcp-demo-server's tools that ask the client something and answer when
 * it answers: sample, elicit, elicit_url, roots and ping_client.
 */

#define _GNU_SOURCE

#include <sys/types.h>
#include <sys/queue.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "demo.h"

static unsigned long long next_elicitation = 1;

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
void
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
void
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
void
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
void
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
void
tool_ping_client(json_t *id, json_t *params, json_t *args)
{
	struct req	*r;

	(void)params;
	(void)args;
	r = req_new(id);
	client_request(r, "ping", NULL, ping_done);
}
