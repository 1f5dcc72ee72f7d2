/* SPDX-License-Identifier: ISC */
/*
 * Anthropic's Messages API (POST {url}/v1/messages): the request, a whole
 * answer, and the stream's named events (message_start,
 * content_block_start, content_block_delta, message_delta, message_stop,
 * ping, error).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm.h"
#include "xmalloc.h"

/* An image block in Anthropic's form; NULL with err if it takes none. */
static json_t *
image_block(const json_t *b, char *err, size_t errlen)
{
	const char	*mime, *data;

	mime = json_string_value(json_object_get(b, "mimeType"));
	data = json_string_value(json_object_get(b, "data"));
	if (data == NULL || !llm_image_ok(mime)) {
		snprintf(err, errlen, "an image of type %.40s (Anthropic takes "
		    "JPEG, PNG, GIF and WebP)", mime != NULL ? mime : "?");
		return (NULL);
	}
	return (json_pack("{s:s, s:{s:s, s:s, s:s}}", "type", "image",
	    "source", "type", "base64", "media_type", mime, "data", data));
}

/* A tool result's content: text and image blocks. */
static json_t *
result_content(const json_t *tr, char *err, size_t errlen)
{
	json_t		*out = json_array(), *c, *b, *sc;
	const char	*type;
	char		*s;
	size_t		 i;

	json_array_foreach(json_object_get(tr, "content"), i, c) {
		type = llm_block_type(c);
		if (type != NULL && strcmp(type, "text") == 0 &&
		    json_is_string(json_object_get(c, "text")))
			b = json_pack("{s:s, s:O}", "type", "text", "text",
			    json_object_get(c, "text"));
		else if (type != NULL && strcmp(type, "image") == 0) {
			if ((b = image_block(c, err, errlen)) == NULL) {
				json_decref(out);
				return (NULL);
			}
		} else if (type != NULL && strcmp(type, "audio") == 0) {
			snprintf(err, errlen, "a tool result with audio "
			    "(Anthropic takes none)");
			json_decref(out);
			return (NULL);
		} else {
			s = json_dumps(c, JSON_COMPACT);
			b = json_pack("{s:s, s:s}", "type", "text", "text",
			    s != NULL ? s : "");
			free(s);
		}
		json_array_append_new(out, b);
	}
	sc = json_object_get(tr, "structuredContent");
	if (json_array_size(out) == 0 && sc != NULL &&
	    (s = json_dumps(sc, JSON_COMPACT)) != NULL) {
		json_array_append_new(out, json_pack("{s:s, s:s}", "type",
		    "text", "text", s));
		free(s);
	}
	return (out);
}

/* One content block of a message; NULL with err if Anthropic takes none. */
static json_t *
block(const json_t *b, int user, char *err, size_t errlen)
{
	const char	*type = llm_block_type(b), *id, *name;
	json_t		*c, *out;

	if (strcmp(type, "text") == 0 &&
	    json_is_string(json_object_get(b, "text")))
		return (json_pack("{s:s, s:O}", "type", "text", "text",
		    json_object_get(b, "text")));
	if (user && strcmp(type, "image") == 0)
		return (image_block(b, err, errlen));
	if (!user && strcmp(type, "tool_use") == 0 &&
	    (id = json_string_value(json_object_get(b, "id"))) != NULL &&
	    (name = json_string_value(json_object_get(b, "name"))) != NULL &&
	    json_is_object(json_object_get(b, "input")))
		return (json_pack("{s:s, s:s, s:s, s:O}", "type", "tool_use",
		    "id", id, "name", name, "input", json_object_get(b,
		    "input")));
	if (user && strcmp(type, "tool_result") == 0 &&
	    (id = json_string_value(json_object_get(b, "toolUseId"))) !=
	    NULL) {
		if ((c = result_content(b, err, errlen)) == NULL)
			return (NULL);
		out = json_pack("{s:s, s:s, s:o}", "type", "tool_result",
		    "tool_use_id", id, "content", c);
		if (json_is_true(json_object_get(b, "isError")))
			json_object_set_new(out, "is_error", json_true());
		return (out);
	}
	snprintf(err, errlen, "%s %s message with %.40s content",
	    user ? "a" : "an", user ? "user" : "assistant", type);
	return (NULL);
}

static json_t *
anthropic_request(const json_t *params, const struct llm_req_opts *o,
    char *err, size_t errlen)
{
	json_t		*messages, *out, *msgs, *m, *blocks, *b, *content, *v;
	json_t		*tools, *t, *tool;
	json_int_t	 max_tokens;
	const char	*role, *sys, *name, *mode, *uid;
	double		 temp;
	size_t		 i, j;

	if (llm_params(params, &messages, &max_tokens, err, errlen) != 0)
		return (NULL);
	msgs = json_array();
	json_array_foreach(messages, i, m) {
		role = json_string_value(json_object_get(m, "role"));
		blocks = llm_blocks(json_object_get(m, "content"));
		content = json_array();
		json_array_foreach(blocks, j, b) {
			/* Anthropic refuses empty text blocks. */
			if (strcmp(llm_block_type(b), "text") == 0 &&
			    json_string_length(json_object_get(b, "text")) == 0 &&
			    json_array_size(blocks) > 1)
				continue;
			if ((v = block(b, strcmp(role, "user") == 0, err,
			    errlen)) == NULL) {
				json_decref(content);
				json_decref(blocks);
				json_decref(msgs);
				return (NULL);
			}
			json_array_append_new(content, v);
		}
		json_decref(blocks);
		json_array_append_new(msgs, json_pack("{s:s, s:o}", "role",
		    role, "content", content));
	}
	out = json_pack("{s:s, s:I, s:o}", "model", o->model, "max_tokens",
	    max_tokens, "messages", msgs);
	sys = json_string_value(json_object_get(params, "systemPrompt"));
	if (sys != NULL && *sys != '\0')
		json_object_set_new(out, "system", json_string(sys));
	if (json_is_number(v = json_object_get(params, "temperature"))) {
		temp = json_number_value(v);
		json_object_set_new(out, "temperature", json_real(temp < 0 ? 0 :
		    temp > 1 ? 1 : temp));
	}
	if (json_is_array(v = json_object_get(params, "stopSequences")) &&
	    json_array_size(v) > 0)
		json_object_set(out, "stop_sequences", v);
	uid = json_string_value(json_object_get(json_object_get(params,
	    "metadata"), "user_id"));
	if (uid != NULL)
		json_object_set_new(out, "metadata", json_pack("{s:s}",
		    "user_id", uid));
	if (json_is_array(v = json_object_get(params, "tools")) &&
	    json_array_size(v) > 0) {
		tools = json_array();
		json_array_foreach(v, i, t) {
			if ((name = json_string_value(json_object_get(t,
			    "name"))) == NULL) {
				snprintf(err, errlen, "a tool has no name");
				json_decref(tools);
				json_decref(out);
				return (NULL);
			}
			tool = json_pack("{s:s, s:o}", "name", name,
			    "input_schema", llm_tool_schema(t));
			if (json_is_string(json_object_get(t, "description")))
				json_object_set(tool, "description",
				    json_object_get(t, "description"));
			json_array_append_new(tools, tool);
		}
		json_object_set_new(out, "tools", tools);
		if (json_object_get(params, "toolChoice") != NULL) {
			mode = llm_tool_choice(params);
			json_object_set_new(out, "tool_choice",
			    json_pack("{s:s}", "type", strcmp(mode,
			    "required") == 0 ? "any" : mode));
		}
	}
	if (o->stream)
		json_object_set_new(out, "stream", json_true());
	return (out);
}

/* MCP's stopReason for a stop_reason. */
static const char *
stop_reason(const char *r)
{
	if (r == NULL)
		return (NULL);
	if (strcmp(r, "end_turn") == 0)
		return ("endTurn");
	if (strcmp(r, "max_tokens") == 0)
		return ("maxTokens");
	if (strcmp(r, "stop_sequence") == 0)
		return ("stopSequence");
	if (strcmp(r, "tool_use") == 0)
		return ("toolUse");
	return (r);
}

/* An error object: {"type": "error", "error": {type, message}}. */
static int
error_event(const struct llm_answer *a, const json_t *j, char *err,
    size_t errlen)
{
	json_t		*e = json_object_get(j, "error");
	const char	*type, *msg;
	char		 t[80], m[320];

	type = json_string_value(json_object_get(e, "type"));
	msg = json_string_value(json_object_get(e, "message"));
	if (type == NULL)
		type = "an error";
	if (msg == NULL)
		msg = "";
	llm_provider_text(a->secret, t, sizeof t, type, strlen(type), 60);
	llm_provider_text(a->secret, m, sizeof m, msg, strlen(msg), 300);
	snprintf(err, errlen, "the provider reported %s: %s", t, m);
	return (-1);
}

/* Add a tool use with its whole input. */
static int
tool_use(struct llm_answer *a, int index, const json_t *b, char *err,
    size_t errlen)
{
	char	*input;
	int	 r;

	if (llm_answer_tool(a, index, json_string_value(json_object_get(b,
	    "id")), json_string_value(json_object_get(b, "name")), err,
	    errlen) != 0)
		return (-1);
	if (json_object_size(json_object_get(b, "input")) == 0)
		return (0);
	if ((input = json_dumps(json_object_get(b, "input"),
	    JSON_COMPACT)) == NULL) {
		snprintf(err, errlen, "a tool use's input cannot be encoded");
		return (-1);
	}
	r = llm_answer_input(a, index, input, strlen(input), err, errlen);
	free(input);
	return (r);
}

static int
anthropic_body(struct llm_answer *a, const json_t *j, char *err,
    size_t errlen)
{
	json_t		*b, *t;
	const char	*type;
	size_t		 i;

	type = json_string_value(json_object_get(j, "type"));
	if (type != NULL && strcmp(type, "error") == 0)
		return (error_event(a, j, err, errlen));
	if (!json_is_array(json_object_get(j, "content"))) {
		snprintf(err, errlen, "the answer has no content array");
		return (-1);
	}
	llm_answer_model(a, json_string_value(json_object_get(j, "model")));
	json_array_foreach(json_object_get(j, "content"), i, b) {
		type = llm_block_type(b);
		if (type == NULL || i >= LLM_MAX_BLOCKS)
			continue;
		if (strcmp(type, "text") == 0 &&
		    json_is_string(t = json_object_get(b, "text"))) {
			if (llm_answer_text(a, (int)i, json_string_value(t),
			    json_string_length(t), err, errlen) != 0)
				return (-1);
		} else if (strcmp(type, "tool_use") == 0) {
			if (tool_use(a, (int)i, b, err, errlen) != 0)
				return (-1);
		}
	}
	llm_answer_stop(a, stop_reason(json_string_value(json_object_get(j,
	    "stop_reason"))));
	llm_answer_usage(a, json_object_get(j, "usage"), "input_tokens",
	    "output_tokens");
	a->done = 1;
	return (0);
}

/* content_block_start and content_block_delta. */
static int
block_event(struct llm_answer *a, const json_t *j, int start, char *err,
    size_t errlen)
{
	json_t		*b, *v;
	const char	*type;
	json_int_t	 index;

	v = json_object_get(j, "index");
	if (!json_is_integer(v) || (index = json_integer_value(v)) < 0 ||
	    index >= LLM_MAX_BLOCKS) {
		snprintf(err, errlen, "a content block event without a valid "
		    "index");
		return (-1);
	}
	b = json_object_get(j, start ? "content_block" : "delta");
	type = llm_block_type(b);
	if (type == NULL) {
		snprintf(err, errlen, "a content block event without a type");
		return (-1);
	}
	/* Thinking, signatures and citations are not part of the answer. */
	if (strcmp(type, "text") == 0 || strcmp(type, "text_delta") == 0) {
		if (!json_is_string(v = json_object_get(b, "text")))
			return (0);
		return (llm_answer_text(a, (int)index, json_string_value(v),
		    json_string_length(v), err, errlen));
	}
	if (start && strcmp(type, "tool_use") == 0)
		return (tool_use(a, (int)index, b, err, errlen));
	if (!start && strcmp(type, "input_json_delta") == 0 &&
	    json_is_string(v = json_object_get(b, "partial_json")))
		return (llm_answer_input(a, (int)index, json_string_value(v),
		    json_string_length(v), err, errlen));
	return (0);
}

static int
anthropic_event(struct llm_answer *a, const char *event, const char *data,
    size_t len, char *err, size_t errlen)
{
	json_t		*j, *v;
	json_error_t	 jerr;
	char		 name[64];
	int		 r = 0;

	if (strcmp(event, "ping") == 0)
		return (0);
	if ((j = json_loadb(data, len, 0, &jerr)) == NULL ||
	    !json_is_object(j)) {
		llm_provider_text(a->secret, name, sizeof name, event,
		    strlen(event), 40);
		snprintf(err, errlen, "a %s event is not a JSON object", name);
		json_decref(j);
		return (-1);
	}
	if (a->done) {
		snprintf(err, errlen, "an event after message_stop");
		r = -1;
	} else if (strcmp(event, "error") == 0)
		r = error_event(a, j, err, errlen);
	else if (strcmp(event, "message_start") == 0) {
		v = json_object_get(j, "message");
		llm_answer_model(a, json_string_value(json_object_get(v,
		    "model")));
		llm_answer_usage(a, json_object_get(v, "usage"), "input_tokens",
		    "output_tokens");
	} else if (strcmp(event, "content_block_start") == 0)
		r = block_event(a, j, 1, err, errlen);
	else if (strcmp(event, "content_block_delta") == 0)
		r = block_event(a, j, 0, err, errlen);
	else if (strcmp(event, "message_delta") == 0) {
		llm_answer_stop(a, stop_reason(json_string_value(
		    json_object_get(json_object_get(j, "delta"),
		    "stop_reason"))));
		/* Its usage counts are cumulative. */
		llm_answer_usage(a, json_object_get(j, "usage"), "input_tokens",
		    "output_tokens");
	} else if (strcmp(event, "message_stop") == 0)
		a->done = 1;
	json_decref(j);
	return (r);
}

const struct llm_vendor llm_anthropic = {
	.name = "anthropic",
	.path = "/v1/messages",
	.ndjson = 0,
	.request = anthropic_request,
	.body = anthropic_body,
	.event = anthropic_event,
};
