/* SPDX-License-Identifier: ISC */
/*
 * Ollama's chat API (POST {url}/api/chat): the request, and its answer,
 * whole (stream: false) or as newline-delimited JSON objects, the last
 * with "done": true and the counts.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "llm.h"
#include "xmalloc.h"

/*
 * The name of the tool use an id belongs to, in the messages before upto,
 * the nearest first (ids Ollama's answers are given repeat from turn to
 * turn).
 */
static const char *
tool_name(const json_t *messages, size_t upto, const char *id)
{
	json_t		*m, *blocks, *b;
	const char	*name = NULL, *bid;
	size_t		 i, j;

	for (i = upto; i > 0 && name == NULL; i--) {
		m = json_array_get(messages, i - 1);
		blocks = llm_blocks(json_object_get(m, "content"));
		json_array_foreach(blocks, j, b) {
			if (strcmp(llm_block_type(b), "tool_use") == 0 &&
			    (bid = json_string_value(json_object_get(b,
			    "id"))) != NULL && strcmp(bid, id) == 0)
				name = json_string_value(json_object_get(b,
				    "name"));
		}
		json_decref(blocks);
	}
	return (name);
}

/* Join text onto a message's content. */
static void
add_text(json_t *m, const char *text)
{
	const char	*old = json_string_value(json_object_get(m, "content"));
	char		*t;

	if (old == NULL || *old == '\0') {
		json_object_set_new(m, "content", json_string(text));
		return;
	}
	xasprintf(&t, "%s\n%s", old, text);
	json_object_set_new(m, "content", json_string(t));
	free(t);
}

/* Add the tool results of a user message as tool messages. */
static int
tool_results(json_t *out, const json_t *messages, size_t at,
    const json_t *blocks, char *err, size_t errlen)
{
	json_t		*b, *m;
	const char	*id, *name;
	char		*text;
	size_t		 i;

	json_array_foreach(blocks, i, b) {
		if (strcmp(llm_block_type(b), "tool_result") != 0 ||
		    (id = json_string_value(json_object_get(b,
		    "toolUseId"))) == NULL) {
			snprintf(err, errlen, "a user message mixes tool "
			    "results with other content");
			return (-1);
		}
		if ((text = llm_tool_result_text(b, err, errlen)) == NULL)
			return (-1);
		m = json_pack("{s:s, s:s}", "role", "tool", "content", text);
		free(text);
		if ((name = tool_name(messages, at, id)) != NULL)
			json_object_set_new(m, "tool_name", json_string(name));
		json_array_append_new(out, m);
	}
	return (0);
}

/* Add one message. */
static int
message(json_t *out, const json_t *messages, size_t at, char *err,
    size_t errlen)
{
	json_t		*msg = json_array_get(messages, at), *blocks, *b, *m;
	json_t		*images = json_array(), *calls = json_array();
	const char	*role, *type, *first, *mime, *data, *name;
	size_t		 i;
	int		 user, r = -1;

	role = json_string_value(json_object_get(msg, "role"));
	user = strcmp(role, "user") == 0;
	blocks = llm_blocks(json_object_get(msg, "content"));
	first = llm_block_type(json_array_get(blocks, 0));
	if (user && first != NULL && strcmp(first, "tool_result") == 0) {
		r = tool_results(out, messages, at, blocks, err, errlen);
		goto out;
	}
	m = json_pack("{s:s, s:s}", "role", role, "content", "");
	json_array_foreach(blocks, i, b) {
		type = llm_block_type(b);
		mime = json_string_value(json_object_get(b, "mimeType"));
		data = json_string_value(json_object_get(b, "data"));
		if (strcmp(type, "text") == 0 &&
		    json_is_string(json_object_get(b, "text")))
			add_text(m, json_string_value(json_object_get(b,
			    "text")));
		else if (user && strcmp(type, "image") == 0 && data != NULL &&
		    mime != NULL && strncasecmp(mime, "image/", 6) == 0)
			json_array_append_new(images, json_string(data));
		else if (!user && strcmp(type, "tool_use") == 0 &&
		    (name = json_string_value(json_object_get(b, "name"))) !=
		    NULL && json_is_object(json_object_get(b, "input")))
			json_array_append_new(calls, json_pack("{s:{s:s, s:O}}",
			    "function", "name", name, "arguments",
			    json_object_get(b, "input")));
		else {
			snprintf(err, errlen, "%s %s message with %.40s content "
			    "(Ollama takes text, images from the user and tool "
			    "calls from the assistant)", user ? "a" : "an",
			    role, type);
			json_decref(m);
			goto out;
		}
	}
	if (json_array_size(images) > 0)
		json_object_set(m, "images", images);
	if (json_array_size(calls) > 0)
		json_object_set(m, "tool_calls", calls);
	json_array_append_new(out, m);
	r = 0;
out:
	json_decref(blocks);
	json_decref(images);
	json_decref(calls);
	return (r);
}

static json_t *
ollama_request(const json_t *params, const struct llm_req_opts *o,
    char *err, size_t errlen)
{
	json_t		*messages, *out, *msgs, *opts, *tools, *v;
	json_int_t	 max_tokens;
	const char	*sys, *mode;
	double		 temp;
	size_t		 i;

	if (llm_params(params, &messages, &max_tokens, err, errlen) != 0)
		return (NULL);
	mode = llm_tool_choice(params);
	if (json_array_size(json_object_get(params, "tools")) > 0 &&
	    strcmp(mode, "required") == 0) {
		snprintf(err, errlen, "toolChoice required (Ollama cannot be "
		    "told to use a tool)");
		return (NULL);
	}
	msgs = json_array();
	sys = json_string_value(json_object_get(params, "systemPrompt"));
	if (sys != NULL && *sys != '\0')
		json_array_append_new(msgs, json_pack("{s:s, s:s}", "role",
		    "system", "content", sys));
	for (i = 0; i < json_array_size(messages); i++) {
		if (message(msgs, messages, i, err, errlen) != 0) {
			json_decref(msgs);
			return (NULL);
		}
	}
	opts = json_pack("{s:I}", "num_predict", max_tokens);
	if (json_is_number(v = json_object_get(params, "temperature"))) {
		temp = json_number_value(v);
		json_object_set_new(opts, "temperature", json_real(temp < 0 ?
		    0 : temp));
	}
	if (json_is_array(v = json_object_get(params, "stopSequences")) &&
	    json_array_size(v) > 0)
		json_object_set(opts, "stop", v);
	out = json_pack("{s:s, s:o, s:b, s:o}", "model", o->model,
	    "messages", msgs, "stream", o->stream, "options", opts);
	if (json_is_array(v = json_object_get(params, "tools")) &&
	    json_array_size(v) > 0 && strcmp(mode, "none") != 0) {
		if ((tools = llm_function_tools(v, err, errlen)) == NULL) {
			json_decref(out);
			return (NULL);
		}
		json_object_set_new(out, "tools", tools);
	}
	return (out);
}

/* One object of the answer: a line of the stream, or the whole body. */
static int
chunk(struct llm_answer *a, const json_t *j, char *err, size_t errlen)
{
	json_t		*msg, *c, *v, *fn;
	const char	*reason, *e;
	char		*args, m[320];
	size_t		 i;
	int		 r;

	if ((e = json_string_value(json_object_get(j, "error"))) != NULL) {
		llm_provider_text(a->secret, m, sizeof m, e, strlen(e), 300);
		snprintf(err, errlen, "the provider reported an error: %s", m);
		return (-1);
	}
	if (a->done) {
		snprintf(err, errlen, "an object after \"done\": true");
		return (-1);
	}
	llm_answer_model(a, json_string_value(json_object_get(j, "model")));
	msg = json_object_get(j, "message");
	if (json_is_string(v = json_object_get(msg, "content")) &&
	    json_string_length(v) > 0 && llm_answer_text(a, -1,
	    json_string_value(v), json_string_length(v), err, errlen) != 0)
		return (-1);
	json_array_foreach(json_object_get(msg, "tool_calls"), i, c) {
		fn = json_object_get(c, "function");
		if (llm_answer_tool(a, -1, json_string_value(json_object_get(c,
		    "id")), json_string_value(json_object_get(fn, "name")),
		    err, errlen) != 0)
			return (-1);
		if (json_object_size(v = json_object_get(fn, "arguments")) ==
		    0)
			continue;
		if ((args = json_dumps(v, JSON_COMPACT)) == NULL) {
			snprintf(err, errlen, "tool call arguments cannot be "
			    "encoded");
			return (-1);
		}
		r = llm_answer_input(a, -1, args, strlen(args), err, errlen);
		free(args);
		if (r != 0)
			return (-1);
	}
	if (!json_is_true(json_object_get(j, "done")))
		return (0);
	a->done = 1;
	reason = json_string_value(json_object_get(j, "done_reason"));
	if (a->ntools > 0 && (reason == NULL || strcmp(reason, "stop") == 0))
		llm_answer_stop(a, "toolUse");
	else if (reason == NULL || strcmp(reason, "stop") == 0)
		llm_answer_stop(a, "endTurn");
	else if (strcmp(reason, "length") == 0)
		llm_answer_stop(a, "maxTokens");
	else
		llm_answer_stop(a, reason);
	llm_answer_usage(a, j, "prompt_eval_count", "eval_count");
	return (0);
}

static int
ollama_body(struct llm_answer *a, const json_t *j, char *err, size_t errlen)
{
	if (chunk(a, j, err, errlen) != 0)
		return (-1);
	if (!a->done) {
		snprintf(err, errlen, "the answer is not \"done\"");
		return (-1);
	}
	return (0);
}

static int
ollama_event(struct llm_answer *a, const char *event, const char *data,
    size_t len, char *err, size_t errlen)
{
	json_t		*j;
	json_error_t	 jerr;
	int		 r;

	if ((j = json_loadb(data, len, 0, &jerr)) == NULL ||
	    !json_is_object(j)) {
		snprintf(err, errlen, "a line of the stream is not a JSON "
		    "object");
		json_decref(j);
		return (-1);
	}
	r = chunk(a, j, err, errlen);
	json_decref(j);
	return (r);
}

const struct llm_vendor llm_ollama = {
	.name = "ollama",
	.path = "/api/chat",
	.ndjson = 1,
	.request = ollama_request,
	.body = ollama_body,
	.event = ollama_event,
};
