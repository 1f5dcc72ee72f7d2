/* SPDX-License-Identifier: ISC */
/*
 * OpenAI's Chat Completions (POST {url}/chat/completions), which every
 * OpenAI-compatible server speaks too: the request, a whole answer, and
 * the stream's chunks (server-sent events, "data: [DONE]" at the end).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "llm.h"
#include "xmalloc.h"


/* The input_audio format of a MIME type, or NULL. */
static const char *
audio_format(const char *mime)
{
	if (mime == NULL)
		return (NULL);
	if (strcasecmp(mime, "audio/wav") == 0 ||
	    strcasecmp(mime, "audio/x-wav") == 0 ||
	    strcasecmp(mime, "audio/wave") == 0)
		return ("wav");
	if (strcasecmp(mime, "audio/mpeg") == 0 ||
	    strcasecmp(mime, "audio/mp3") == 0)
		return ("mp3");
	return (NULL);
}

/* A user message's content part; NULL with err if OpenAI takes none. */
static json_t *
user_part(const json_t *b, char *err, size_t errlen)
{
	const char	*type = llm_block_type(b), *mime, *data, *fmt;
	json_t		*p;
	char		*url;

	mime = json_string_value(json_object_get(b, "mimeType"));
	data = json_string_value(json_object_get(b, "data"));
	if (strcmp(type, "text") == 0 &&
	    json_is_string(json_object_get(b, "text")))
		return (json_pack("{s:s, s:O}", "type", "text", "text",
		    json_object_get(b, "text")));
	if (strcmp(type, "image") == 0 && data != NULL) {
		if (!llm_image_ok(mime)) {
			snprintf(err, errlen, "an image of type %.40s (OpenAI "
			    "takes JPEG, PNG, GIF and WebP)",
			    mime != NULL ? mime : "?");
			return (NULL);
		}
		xasprintf(&url, "data:%s;base64,%s", mime, data);
		p = json_pack("{s:s, s:{s:s}}", "type", "image_url",
		    "image_url", "url", url);
		free(url);
		return (p);
	}
	if (strcmp(type, "audio") == 0 && data != NULL) {
		if ((fmt = audio_format(mime)) == NULL) {
			snprintf(err, errlen, "audio of type %.40s (OpenAI "
			    "takes WAV and MP3)", mime != NULL ? mime : "?");
			return (NULL);
		}
		return (json_pack("{s:s, s:{s:s, s:s}}", "type",
		    "input_audio", "input_audio", "data", data, "format",
		    fmt));
	}
	snprintf(err, errlen, "a user message with %.40s content", type);
	return (NULL);
}

/* Add a user message, or its tool results as tool messages. */
static int
user_message(json_t *out, const json_t *blocks, char *err, size_t errlen)
{
	json_t		*b, *parts, *p;
	size_t		 i, results = 0;
	char		*text;
	const char	*id;

	json_array_foreach(blocks, i, b) {
		if (strcmp(llm_block_type(b), "tool_result") == 0)
			results++;
	}
	if (results > 0 && results != json_array_size(blocks)) {
		snprintf(err, errlen, "a user message mixes tool results with "
		    "other content");
		return (-1);
	}
	if (results > 0) {
		json_array_foreach(blocks, i, b) {
			if ((id = json_string_value(json_object_get(b,
			    "toolUseId"))) == NULL) {
				snprintf(err, errlen, "a tool result has no "
				    "toolUseId");
				return (-1);
			}
			if ((text = llm_tool_result_text(b, err, errlen)) ==
			    NULL)
				return (-1);
			json_array_append_new(out, json_pack("{s:s, s:s, s:s}",
			    "role", "tool", "tool_call_id", id, "content",
			    text));
			free(text);
		}
		return (0);
	}
	parts = json_array();
	json_array_foreach(blocks, i, b) {
		if ((p = user_part(b, err, errlen)) == NULL) {
			json_decref(parts);
			return (-1);
		}
		json_array_append_new(parts, p);
	}
	/* A single text part is sent as a plain string. */
	if (json_array_size(parts) == 1 && strcmp(json_string_value(
	    json_object_get(json_array_get(parts, 0), "type")), "text") == 0)
		json_array_append_new(out, json_pack("{s:s, s:O}", "role",
		    "user", "content", json_object_get(json_array_get(parts,
		    0), "text")));
	else
		json_array_append_new(out, json_pack("{s:s, s:O}", "role",
		    "user", "content", parts));
	json_decref(parts);
	return (0);
}

/* Add an assistant message: its text and its tool calls. */
static int
assistant_message(json_t *out, const json_t *blocks, char *err,
    size_t errlen)
{
	json_t		*b, *calls = json_array(), *m;
	const char	*type, *id, *name, *text;
	char		*args, *joined = NULL, *t;
	size_t		 i;

	json_array_foreach(blocks, i, b) {
		type = llm_block_type(b);
		if (strcmp(type, "text") == 0 &&
		    (text = json_string_value(json_object_get(b, "text"))) !=
		    NULL) {
			if (joined == NULL)
				joined = xstrdup(text);
			else {
				xasprintf(&t, "%s\n%s", joined, text);
				free(joined);
				joined = t;
			}
		} else if (strcmp(type, "tool_use") == 0 &&
		    (id = json_string_value(json_object_get(b, "id"))) !=
		    NULL && (name = json_string_value(json_object_get(b,
		    "name"))) != NULL && json_is_object(json_object_get(b,
		    "input"))) {
			args = json_dumps(json_object_get(b, "input"),
			    JSON_COMPACT);
			json_array_append_new(calls, json_pack("{s:s, s:s, "
			    "s:{s:s, s:s}}", "id", id, "type", "function",
			    "function", "name", name, "arguments",
			    args != NULL ? args : "{}"));
			free(args);
		} else {
			snprintf(err, errlen, "an assistant message with %.40s "
			    "content (OpenAI takes text and tool calls)", type);
			free(joined);
			json_decref(calls);
			return (-1);
		}
	}
	m = json_pack("{s:s}", "role", "assistant");
	json_object_set_new(m, "content", joined != NULL ?
	    json_string(joined) : json_null());
	if (json_array_size(calls) > 0)
		json_object_set(m, "tool_calls", calls);
	json_array_append_new(out, m);
	json_decref(calls);
	free(joined);
	return (0);
}

static json_t *
openai_request(const json_t *params, const struct llm_req_opts *o,
    char *err, size_t errlen)
{
	json_t		*messages, *out, *msgs, *m, *blocks, *tools, *v;
	json_int_t	 max_tokens;
	const char	*role, *sys;
	double		 temp;
	size_t		 i;
	int		 r;

	if (llm_params(params, &messages, &max_tokens, err, errlen) != 0)
		return (NULL);
	msgs = json_array();
	sys = json_string_value(json_object_get(params, "systemPrompt"));
	if (sys != NULL && *sys != '\0')
		json_array_append_new(msgs, json_pack("{s:s, s:s}", "role",
		    "system", "content", sys));
	json_array_foreach(messages, i, m) {
		role = json_string_value(json_object_get(m, "role"));
		blocks = llm_blocks(json_object_get(m, "content"));
		if (strcmp(role, "user") == 0)
			r = user_message(msgs, blocks, err, errlen);
		else
			r = assistant_message(msgs, blocks, err, errlen);
		json_decref(blocks);
		if (r != 0) {
			json_decref(msgs);
			return (NULL);
		}
	}
	out = json_pack("{s:s, s:o}", "model", o->model, "messages", msgs);
	json_object_set_new(out, o->max_completion_tokens ?
	    "max_completion_tokens" : "max_tokens", json_integer(max_tokens));
	if (json_is_number(v = json_object_get(params, "temperature"))) {
		temp = json_number_value(v);
		json_object_set_new(out, "temperature", json_real(temp < 0 ? 0 :
		    temp > 2 ? 2 : temp));
	}
	if (json_is_array(v = json_object_get(params, "stopSequences")) &&
	    json_array_size(v) > 0)
		json_object_set(out, "stop", v);
	/* No metadata: OpenAI refuses it unless the completion is stored
	 * ("store": true), and storing prompts is not ours to decide. */
	if (json_is_array(v = json_object_get(params, "tools")) &&
	    json_array_size(v) > 0) {
		if ((tools = llm_function_tools(v, err, errlen)) == NULL) {
			json_decref(out);
			return (NULL);
		}
		json_object_set_new(out, "tools", tools);
		if (json_object_get(params, "toolChoice") != NULL)
			json_object_set_new(out, "tool_choice",
			    json_string(llm_tool_choice(params)));
	}
	if (o->stream) {
		json_object_set_new(out, "stream", json_true());
		json_object_set_new(out, "stream_options",
		    json_pack("{s:b}", "include_usage", 1));
	}
	return (out);
}

/* MCP's stopReason for a finish_reason. */
static const char *
finish_reason(const char *r)
{
	if (r == NULL)
		return (NULL);
	if (strcmp(r, "stop") == 0)
		return ("endTurn");
	if (strcmp(r, "length") == 0)
		return ("maxTokens");
	if (strcmp(r, "tool_calls") == 0 || strcmp(r, "function_call") == 0)
		return ("toolUse");
	return (r);
}

/* A streamed or whole error object inside a 200 answer. */
static int
error_object(const struct llm_answer *a, const json_t *j, char *err,
    size_t errlen)
{
	const char	*msg;
	json_t		*e = json_object_get(j, "error");
	char		 m[320];

	if (e == NULL)
		return (0);
	if ((msg = json_string_value(json_object_get(e, "message"))) == NULL)
		msg = "(no message)";
	llm_provider_text(a->secret, m, sizeof m, msg, strlen(msg), 300);
	snprintf(err, errlen, "the provider reported an error: %s", m);
	return (-1);
}

/*
 * Tool calls of a message or a delta, by their index.  Some compatible
 * servers stream calls without one: a delta with an id not seen last
 * starts the next call, one without an id goes on with the last, even
 * with text between them.
 */
static int
tool_calls(struct llm_answer *a, const json_t *calls, int whole, char *err,
    size_t errlen)
{
	json_t		*c, *fn, *v;
	const char	*args, *id;
	size_t		 i;
	int		 index;

	json_array_foreach(calls, i, c) {
		v = json_object_get(c, "index");
		fn = json_object_get(c, "function");
		id = json_string_value(json_object_get(c, "id"));
		if (whole)
			index = (int)i;
		else if (json_is_integer(v))
			index = json_integer_value(v) < 0 ||
			    json_integer_value(v) >= LLM_MAX_BLOCKS ?
			    LLM_MAX_BLOCKS : (int)json_integer_value(v);
		else
			index = llm_answer_tool_next(a, id);
		if (index >= LLM_MAX_BLOCKS) {
			snprintf(err, errlen, "a tool call index out of range");
			return (-1);
		}
		if (llm_answer_tool(a, index, id, json_string_value(
		    json_object_get(fn, "name")), err, errlen) != 0)
			return (-1);
		if ((args = json_string_value(json_object_get(fn,
		    "arguments"))) != NULL && llm_answer_input(a, index, args,
		    json_string_length(json_object_get(fn, "arguments")), err,
		    errlen) != 0)
			return (-1);
	}
	return (0);
}

static int
openai_body(struct llm_answer *a, const json_t *j, char *err, size_t errlen)
{
	json_t	*choice, *msg, *v;

	if (error_object(a, j, err, errlen) != 0)
		return (-1);
	choice = json_array_get(json_object_get(j, "choices"), 0);
	msg = json_object_get(choice, "message");
	if (!json_is_object(msg)) {
		snprintf(err, errlen, "the answer has no choices[0].message");
		return (-1);
	}
	llm_answer_model(a, json_string_value(json_object_get(j, "model")));
	if ((json_is_string(v = json_object_get(msg, "content")) ||
	    json_is_string(v = json_object_get(msg, "refusal"))) &&
	    llm_answer_text(a, -1, json_string_value(v),
	    json_string_length(v), err, errlen) != 0)
		return (-1);
	if (tool_calls(a, json_object_get(msg, "tool_calls"), 1, err,
	    errlen) != 0)
		return (-1);
	llm_answer_stop(a, finish_reason(json_string_value(json_object_get(
	    choice, "finish_reason"))));
	llm_answer_usage(a, json_object_get(j, "usage"), "prompt_tokens",
	    "completion_tokens");
	a->done = 1;
	return (0);
}

static int
openai_event(struct llm_answer *a, const char *event, const char *data,
    size_t len, char *err, size_t errlen)
{
	json_t		*j, *choice, *delta, *v;
	json_error_t	 jerr;
	int		 r = -1;

	if (len == 6 && memcmp(data, "[DONE]", 6) == 0) {
		a->done = 1;
		return (0);
	}
	if (a->done) {
		snprintf(err, errlen, "a chunk after [DONE]");
		return (-1);
	}
	if ((j = json_loadb(data, len, 0, &jerr)) == NULL ||
	    !json_is_object(j)) {
		snprintf(err, errlen, "a stream chunk is not a JSON object");
		json_decref(j);
		return (-1);
	}
	if (error_object(a, j, err, errlen) != 0)
		goto out;
	llm_answer_model(a, json_string_value(json_object_get(j, "model")));
	choice = json_array_get(json_object_get(j, "choices"), 0);
	delta = json_object_get(choice, "delta");
	if ((json_is_string(v = json_object_get(delta, "content")) ||
	    json_is_string(v = json_object_get(delta, "refusal"))) &&
	    llm_answer_text(a, -1, json_string_value(v),
	    json_string_length(v), err, errlen) != 0)
		goto out;
	if (tool_calls(a, json_object_get(delta, "tool_calls"), 0, err,
	    errlen) != 0)
		goto out;
	llm_answer_stop(a, finish_reason(json_string_value(json_object_get(
	    choice, "finish_reason"))));
	if (json_is_object(v = json_object_get(j, "usage")))
		llm_answer_usage(a, v, "prompt_tokens", "completion_tokens");
	r = 0;
out:
	json_decref(j);
	return (r);
}

const struct llm_vendor llm_openai = {
	.name = "openai",
	.path = "/chat/completions",
	.ndjson = 0,
	.request = openai_request,
	.body = openai_body,
	.event = openai_event,
};
