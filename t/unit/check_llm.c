/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for the mapping between MCP sampling and the LLM vendors'
 * APIs (llm/llm_map.c, llm_openai.c, llm_anthropic.c, llm_ollama.c),
 * both ways: sampling params to each request body, each vendor's whole
 * answers and stream events to a CreateMessageResult, the model choice,
 * and error bodies.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <event2/buffer.h>
#include <jansson.h>

#include "llm.h"
#include "utf8.h"

#define WEATHER "{\"name\":\"get_weather\",\"description\":\"Weather\"," \
	"\"inputSchema\":{\"type\":\"object\",\"properties\":{\"city\":" \
	"{\"type\":\"string\"}},\"required\":[\"city\"]}}"

/* Parse JSON that must be valid. */
static json_t *
J(const char *text)
{
	json_error_t	 e;
	json_t		*j = json_loads(text, JSON_DECODE_ANY, &e);

	ck_assert_msg(j != NULL, "bad JSON in the test: %s: %s", e.text, text);
	return (j);
}

/* Map params to a vendor's request body; NULL with err if refused. */
static json_t *
request(const struct llm_vendor *v, const char *params, int stream, int mct,
    char *err, size_t errlen)
{
	struct llm_req_opts	 o = { "model-x", stream, mct };
	json_t			*p = J(params), *out;

	err[0] = '\0';
	out = v->request(p, &o, err, errlen);
	json_decref(p);
	return (out);
}

/* A request that must map. */
static json_t *
request_ok(const struct llm_vendor *v, const char *params, int stream, int mct)
{
	char	 err[512];
	json_t	*out = request(v, params, stream, mct, err, sizeof err);

	ck_assert_msg(out != NULL, "%s refused: %s", v->name, err);
	return (out);
}

/* A request that must be refused, with err containing want. */
static void
request_refused(const struct llm_vendor *v, const char *params,
    const char *want)
{
	char	 err[512];
	json_t	*out = request(v, params, 1, 0, err, sizeof err);

	ck_assert_msg(out == NULL, "%s mapped what it should refuse", v->name);
	ck_assert_msg(strstr(err, want) != NULL, "%s: \"%s\" lacks \"%s\"",
	    v->name, err, want);
}

/* Does a value at path (dotted, numbers index arrays) equal the JSON? */
static void
at_is(json_t *root, const char *path, const char *want)
{
	char	 buf[256], *p, *dot, *got;
	json_t	*v = root, *w = J(want);

	snprintf(buf, sizeof buf, "%s", path);
	for (p = buf; p != NULL && v != NULL; p = dot) {
		if ((dot = strchr(p, '.')) != NULL)
			*dot++ = '\0';
		if (json_is_array(v))
			v = json_array_get(v, (size_t)atoi(p));
		else
			v = json_object_get(v, p);
	}
	got = v != NULL ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
	ck_assert_msg(v != NULL && json_equal(v, w), "%s is %s, not %s", path,
	    got != NULL ? got : "absent", want);
	free(got);
	json_decref(w);
}

/* The CreateMessageResult of an answer, parsed. */
static json_t *
result(struct llm_answer *a)
{
	struct evbuffer	*out = evbuffer_new();
	char		 err[256];
	json_t		*j;

	ck_assert_msg(llm_answer_result(a, "fallback-model", out, err,
	    sizeof err) == 0, "result: %s", err);
	j = json_loadb((const char *)evbuffer_pullup(out, -1),
	    evbuffer_get_length(out), 0, NULL);
	ck_assert_ptr_nonnull(j);
	evbuffer_free(out);
	return (j);
}

/* Feed a vendor's stream events; each must be taken. */
static void
feed(const struct llm_vendor *v, struct llm_answer *a,
    const char *const *events)
{
	char	err[256];
	size_t	i;

	for (i = 0; events[i] != NULL; i += 2) {
		ck_assert_msg(v->event(a, events[i], events[i + 1],
		    strlen(events[i + 1]), err, sizeof err) == 0,
		    "%s event %zu: %s", v->name, i / 2, err);
	}
}

/* An event that must be refused, with err containing want (or NULL). */
static void
event_fails(const struct llm_vendor *v, struct llm_answer *a,
    const char *event, const char *data, const char *want)
{
	char	err[256];

	ck_assert_int_ne(v->event(a, event, data, strlen(data), err,
	    sizeof err), 0);
	if (want != NULL)
		ck_assert_msg(strstr(err, want) != NULL, "\"%s\" lacks \"%s\"",
		    err, want);
}

START_TEST(test_params_checked)
{
	const struct llm_vendor	*v[] = { &llm_openai, &llm_anthropic,
	    &llm_ollama };
	size_t			 i;

	for (i = 0; i < 3; i++) {
		request_refused(v[i], "{\"maxTokens\":5}", "messages");
		request_refused(v[i], "{\"messages\":[],\"maxTokens\":5}",
		    "non-empty");
		request_refused(v[i], "{\"messages\":[{\"role\":\"user\","
		    "\"content\":{\"type\":\"text\",\"text\":\"x\"}}]}",
		    "maxTokens");
		request_refused(v[i], "{\"messages\":[{\"role\":\"user\","
		    "\"content\":{\"type\":\"text\",\"text\":\"x\"}}],"
		    "\"maxTokens\":0}", "maxTokens");
		request_refused(v[i], "{\"messages\":[{\"role\":\"system\","
		    "\"content\":{\"type\":\"text\",\"text\":\"x\"}}],"
		    "\"maxTokens\":5}", "role");
		request_refused(v[i], "{\"messages\":[{\"role\":\"user\","
		    "\"content\":\"just a string\"}],\"maxTokens\":5}",
		    "content");
	}
}
END_TEST

START_TEST(test_openai_request)
{
	json_t	*r;

	r = request_ok(&llm_openai, "{\"messages\":[{\"role\":\"user\","
	    "\"content\":{\"type\":\"text\",\"text\":\"hi\"}}],"
	    "\"systemPrompt\":\"Be brief.\",\"maxTokens\":100,"
	    "\"temperature\":3.5,\"stopSequences\":[\"END\"],"
	    "\"metadata\":{\"user\":\"u1\",\"n\":5},\"includeContext\":"
	    "\"none\"}", 1, 0);
	at_is(r, "model", "\"model-x\"");
	at_is(r, "messages", "[{\"role\":\"system\",\"content\":\"Be brief.\"},"
	    "{\"role\":\"user\",\"content\":\"hi\"}]");
	at_is(r, "max_tokens", "100");
	ck_assert_ptr_null(json_object_get(r, "max_completion_tokens"));
	at_is(r, "temperature", "2.0");
	at_is(r, "stop", "[\"END\"]");
	/* OpenAI refuses metadata unless the completion is stored. */
	ck_assert_ptr_null(json_object_get(r, "metadata"));
	ck_assert_ptr_null(json_object_get(r, "store"));
	at_is(r, "stream", "true");
	at_is(r, "stream_options", "{\"include_usage\":true}");
	ck_assert_ptr_null(json_object_get(r, "tools"));
	json_decref(r);

	/* OpenAI's own API: max_completion_tokens; no stream. */
	r = request_ok(&llm_openai, "{\"messages\":[{\"role\":\"user\","
	    "\"content\":[{\"type\":\"text\",\"text\":\"look\"},"
	    "{\"type\":\"image\",\"data\":\"AAAA\",\"mimeType\":\"image/png\"},"
	    "{\"type\":\"audio\",\"data\":\"BBBB\",\"mimeType\":\"audio/wav\"}]}],"
	    "\"maxTokens\":7}", 0, 1);
	at_is(r, "max_completion_tokens", "7");
	ck_assert_ptr_null(json_object_get(r, "stream"));
	at_is(r, "messages.0.content", "[{\"type\":\"text\",\"text\":\"look\"},"
	    "{\"type\":\"image_url\",\"image_url\":{\"url\":"
	    "\"data:image/png;base64,AAAA\"}},{\"type\":\"input_audio\","
	    "\"input_audio\":{\"data\":\"BBBB\",\"format\":\"wav\"}}]");
	json_decref(r);
	request_refused(&llm_openai, "{\"messages\":[{\"role\":\"user\","
	    "\"content\":{\"type\":\"audio\",\"data\":\"x\",\"mimeType\":"
	    "\"audio/ogg\"}}],\"maxTokens\":5}", "audio of type audio/ogg");
	request_refused(&llm_openai, "{\"messages\":[{\"role\":\"user\","
	    "\"content\":{\"type\":\"image\",\"data\":\"x\",\"mimeType\":"
	    "\"image/tiff\"}}],\"maxTokens\":5}", "image of type image/tiff");
	request_refused(&llm_openai, "{\"messages\":[{\"role\":\"assistant\","
	    "\"content\":{\"type\":\"image\",\"data\":\"x\",\"mimeType\":"
	    "\"image/png\"}}],\"maxTokens\":5}", "assistant message with image");
}
END_TEST

START_TEST(test_openai_tools_request)
{
	json_t	*r;

	r = request_ok(&llm_openai, "{\"messages\":["
	    "{\"role\":\"user\",\"content\":{\"type\":\"text\",\"text\":\"w?\"}},"
	    "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":"
	    "\"Checking.\"},{\"type\":\"tool_use\",\"id\":\"c1\",\"name\":"
	    "\"get_weather\",\"input\":{\"city\":\"Paris\"}}]},"
	    "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\","
	    "\"toolUseId\":\"c1\",\"content\":[{\"type\":\"text\",\"text\":"
	    "\"18 C\"}]}]}],\"tools\":[" WEATHER "],\"toolChoice\":{\"mode\":"
	    "\"required\"},\"maxTokens\":50}", 1, 1);
	at_is(r, "messages.1", "{\"role\":\"assistant\",\"content\":"
	    "\"Checking.\",\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\","
	    "\"function\":{\"name\":\"get_weather\",\"arguments\":"
	    "\"{\\\"city\\\":\\\"Paris\\\"}\"}}]}");
	at_is(r, "messages.2", "{\"role\":\"tool\",\"tool_call_id\":\"c1\","
	    "\"content\":\"18 C\"}");
	at_is(r, "tools.0", "{\"type\":\"function\",\"function\":{\"name\":"
	    "\"get_weather\",\"description\":\"Weather\",\"parameters\":"
	    "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":"
	    "\"string\"}},\"required\":[\"city\"]}}}");
	at_is(r, "tool_choice", "\"required\"");
	json_decref(r);
	/* A tool use's content null without text. */
	r = request_ok(&llm_openai, "{\"messages\":[{\"role\":\"assistant\","
	    "\"content\":{\"type\":\"tool_use\",\"id\":\"c1\",\"name\":\"f\","
	    "\"input\":{}}}],\"maxTokens\":5}", 1, 1);
	at_is(r, "messages.0.content", "null");
	json_decref(r);
	request_refused(&llm_openai, "{\"messages\":[{\"role\":\"user\","
	    "\"content\":[{\"type\":\"text\",\"text\":\"x\"},{\"type\":"
	    "\"tool_result\",\"toolUseId\":\"c1\",\"content\":[]}]}],"
	    "\"maxTokens\":5}", "mixes tool results");
	request_refused(&llm_openai, "{\"messages\":[{\"role\":\"user\","
	    "\"content\":{\"type\":\"tool_result\",\"toolUseId\":\"c1\","
	    "\"content\":[{\"type\":\"image\",\"data\":\"x\",\"mimeType\":"
	    "\"image/png\"}]}}],\"maxTokens\":5}", "image content");
}
END_TEST

START_TEST(test_anthropic_request)
{
	json_t	*r;

	r = request_ok(&llm_anthropic, "{\"messages\":["
	    "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"w?\"},"
	    "{\"type\":\"image\",\"data\":\"AAAA\",\"mimeType\":\"image/jpeg\"}]},"
	    "{\"role\":\"assistant\",\"content\":{\"type\":\"tool_use\",\"id\":"
	    "\"t1\",\"name\":\"get_weather\",\"input\":{\"city\":\"Paris\"}}},"
	    "{\"role\":\"user\",\"content\":{\"type\":\"tool_result\","
	    "\"toolUseId\":\"t1\",\"isError\":true,\"content\":[{\"type\":"
	    "\"text\",\"text\":\"no network\"}]}}],\"systemPrompt\":\"S\","
	    "\"maxTokens\":64,\"temperature\":1.5,\"stopSequences\":[\"X\"],"
	    "\"metadata\":{\"user_id\":\"u9\",\"other\":\"dropped\"},"
	    "\"tools\":[" WEATHER "],\"toolChoice\":{\"mode\":\"required\"}}",
	    1, 0);
	at_is(r, "system", "\"S\"");
	at_is(r, "max_tokens", "64");
	at_is(r, "temperature", "1.0");
	at_is(r, "stop_sequences", "[\"X\"]");
	at_is(r, "metadata", "{\"user_id\":\"u9\"}");
	at_is(r, "stream", "true");
	at_is(r, "messages.0.content.1", "{\"type\":\"image\",\"source\":"
	    "{\"type\":\"base64\",\"media_type\":\"image/jpeg\",\"data\":"
	    "\"AAAA\"}}");
	at_is(r, "messages.1", "{\"role\":\"assistant\",\"content\":[{\"type\":"
	    "\"tool_use\",\"id\":\"t1\",\"name\":\"get_weather\",\"input\":"
	    "{\"city\":\"Paris\"}}]}");
	at_is(r, "messages.2.content.0", "{\"type\":\"tool_result\","
	    "\"tool_use_id\":\"t1\",\"content\":[{\"type\":\"text\",\"text\":"
	    "\"no network\"}],\"is_error\":true}");
	at_is(r, "tools.0", "{\"name\":\"get_weather\",\"description\":"
	    "\"Weather\",\"input_schema\":{\"type\":\"object\",\"properties\":"
	    "{\"city\":{\"type\":\"string\"}},\"required\":[\"city\"]}}");
	at_is(r, "tool_choice", "{\"type\":\"any\"}");
	json_decref(r);
	r = request_ok(&llm_anthropic, "{\"messages\":[{\"role\":\"user\","
	    "\"content\":{\"type\":\"text\",\"text\":\"hi\"}}],\"maxTokens\":5}",
	    0, 0);
	ck_assert_ptr_null(json_object_get(r, "system"));
	ck_assert_ptr_null(json_object_get(r, "stream"));
	ck_assert_ptr_null(json_object_get(r, "metadata"));
	json_decref(r);
	/* An empty text block beside others is left out. */
	r = request_ok(&llm_anthropic, "{\"messages\":[{\"role\":\"user\","
	    "\"content\":[{\"type\":\"text\",\"text\":\"\"},{\"type\":"
	    "\"text\",\"text\":\"x\"}]}],\"maxTokens\":5}", 1, 0);
	at_is(r, "messages.0.content", "[{\"type\":\"text\",\"text\":\"x\"}]");
	json_decref(r);
	request_refused(&llm_anthropic, "{\"messages\":[{\"role\":\"user\","
	    "\"content\":{\"type\":\"audio\",\"data\":\"x\",\"mimeType\":"
	    "\"audio/wav\"}}],\"maxTokens\":5}", "user message with audio");
	request_refused(&llm_anthropic, "{\"messages\":[{\"role\":\"user\","
	    "\"content\":{\"type\":\"image\",\"data\":\"x\",\"mimeType\":"
	    "\"image/bmp\"}}],\"maxTokens\":5}", "image of type image/bmp");
}
END_TEST

START_TEST(test_ollama_request)
{
	json_t	*r;

	r = request_ok(&llm_ollama, "{\"messages\":["
	    "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"a\"},"
	    "{\"type\":\"text\",\"text\":\"b\"},{\"type\":\"image\",\"data\":"
	    "\"AAAA\",\"mimeType\":\"image/png\"}]},"
	    "{\"role\":\"assistant\",\"content\":{\"type\":\"tool_use\",\"id\":"
	    "\"c7\",\"name\":\"get_weather\",\"input\":{\"city\":\"Paris\"}}},"
	    "{\"role\":\"user\",\"content\":{\"type\":\"tool_result\","
	    "\"toolUseId\":\"c7\",\"content\":[{\"type\":\"text\",\"text\":"
	    "\"18 C\"}]}}],\"systemPrompt\":\"S\",\"maxTokens\":33,"
	    "\"temperature\":0.4,\"stopSequences\":[\"Z\"],\"tools\":[" WEATHER
	    "]}", 1, 0);
	at_is(r, "stream", "true");
	at_is(r, "options", "{\"num_predict\":33,\"temperature\":0.4,"
	    "\"stop\":[\"Z\"]}");
	at_is(r, "messages.0", "{\"role\":\"system\",\"content\":\"S\"}");
	at_is(r, "messages.1", "{\"role\":\"user\",\"content\":\"a\\nb\","
	    "\"images\":[\"AAAA\"]}");
	at_is(r, "messages.2", "{\"role\":\"assistant\",\"content\":\"\","
	    "\"tool_calls\":[{\"function\":{\"name\":\"get_weather\","
	    "\"arguments\":{\"city\":\"Paris\"}}}]}");
	at_is(r, "messages.3", "{\"role\":\"tool\",\"content\":\"18 C\","
	    "\"tool_name\":\"get_weather\"}");
	at_is(r, "tools.0.function.name", "\"get_weather\"");
	json_decref(r);
	r = request_ok(&llm_ollama, "{\"messages\":[{\"role\":\"user\","
	    "\"content\":{\"type\":\"text\",\"text\":\"a\"}}],\"maxTokens\":5,"
	    "\"tools\":[" WEATHER "],\"toolChoice\":{\"mode\":\"none\"}}", 0, 0);
	at_is(r, "stream", "false");
	ck_assert_ptr_null(json_object_get(r, "tools"));
	json_decref(r);
	request_refused(&llm_ollama, "{\"messages\":[{\"role\":\"user\","
	    "\"content\":{\"type\":\"text\",\"text\":\"a\"}}],\"maxTokens\":5,"
	    "\"tools\":[" WEATHER "],\"toolChoice\":{\"mode\":\"required\"}}",
	    "toolChoice required");
	/* Ids repeat from turn to turn: a result names the nearest use. */
	r = request_ok(&llm_ollama, "{\"messages\":["
	    "{\"role\":\"assistant\",\"content\":{\"type\":\"tool_use\",\"id\":"
	    "\"call_1\",\"name\":\"first\",\"input\":{}}},"
	    "{\"role\":\"user\",\"content\":{\"type\":\"tool_result\","
	    "\"toolUseId\":\"call_1\",\"content\":[]}},"
	    "{\"role\":\"assistant\",\"content\":{\"type\":\"tool_use\",\"id\":"
	    "\"call_1\",\"name\":\"second\",\"input\":{}}},"
	    "{\"role\":\"user\",\"content\":{\"type\":\"tool_result\","
	    "\"toolUseId\":\"call_1\",\"content\":[]}}],\"maxTokens\":5}", 1, 0);
	at_is(r, "messages.1.tool_name", "\"first\"");
	at_is(r, "messages.3.tool_name", "\"second\"");
	json_decref(r);
	request_refused(&llm_ollama, "{\"messages\":[{\"role\":\"user\","
	    "\"content\":{\"type\":\"audio\",\"data\":\"x\",\"mimeType\":"
	    "\"audio/wav\"}}],\"maxTokens\":5}", "with audio content");
}
END_TEST

START_TEST(test_openai_answers)
{
	static const char *const text_stream[] = {
	    "message", "{\"model\":\"gpt-x-1\",\"choices\":[{\"index\":0,"
	    "\"delta\":{\"role\":\"assistant\",\"content\":\"\"},"
	    "\"finish_reason\":null}]}",
	    "message", "{\"model\":\"gpt-x-1\",\"choices\":[{\"index\":0,"
	    "\"delta\":{\"content\":\"Hello \\\"you\\\"\\n\"}}]}",
	    "message", "{\"model\":\"gpt-x-1\",\"choices\":[{\"index\":0,"
	    "\"delta\":{\"content\":\"caf\\u00e9\"},\"finish_reason\":"
	    "\"length\"}]}",
	    "message", "{\"model\":\"gpt-x-1\",\"choices\":[],\"usage\":"
	    "{\"prompt_tokens\":11,\"completion_tokens\":4}}",
	    "message", "[DONE]", NULL };
	static const char *const tool_stream[] = {
	    "message", "{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,"
	    "\"id\":\"call_a\",\"type\":\"function\",\"function\":{\"name\":"
	    "\"get_weather\",\"arguments\":\"\"}}]}}]}",
	    "message", "{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,"
	    "\"function\":{\"arguments\":\"{\\\"ci\"}}]}}]}",
	    "message", "{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,"
	    "\"function\":{\"arguments\":\"ty\\\":\\\"Paris\\\"}\"}}]}}]}",
	    "message", "{\"choices\":[{\"delta\":{},\"finish_reason\":"
	    "\"tool_calls\"}]}",
	    "message", "[DONE]", NULL };
	static const char *const noindex_stream[] = {
	    "message", "{\"choices\":[{\"delta\":{\"tool_calls\":[{"
	    "\"id\":\"call_a\",\"type\":\"function\",\"function\":{\"name\":"
	    "\"get_weather\",\"arguments\":\"{\\\"ci\"}}]}}]}",
	    "message", "{\"choices\":[{\"delta\":{\"tool_calls\":[{"
	    "\"function\":{\"arguments\":\"ty\\\":\\\"Paris\\\"}\"}}]}}]}",
	    "message", "{\"choices\":[{\"delta\":{\"tool_calls\":[{"
	    "\"id\":\"call_b\",\"type\":\"function\",\"function\":{\"name\":"
	    "\"count\",\"arguments\":\"{\\\"n\\\"\"}}]}}]}",
	    "message", "{\"choices\":[{\"delta\":{\"tool_calls\":[{"
	    "\"id\":\"call_b\",\"function\":{\"arguments\":\":2}\"}}]}}]}",
	    "message", "{\"choices\":[{\"delta\":{},\"finish_reason\":"
	    "\"tool_calls\"}]}",
	    "message", "[DONE]", NULL };
	/* Text between a call's deltas, and its name in a later one. */
	static const char *const between_stream[] = {
	    "message", "{\"choices\":[{\"delta\":{\"tool_calls\":[{"
	    "\"id\":\"call_a\",\"type\":\"function\",\"function\":{"
	    "\"arguments\":\"{\\\"ci\"}}]}}]}",
	    "message", "{\"choices\":[{\"delta\":{\"content\":\"Looking.\"}}]}",
	    "message", "{\"choices\":[{\"delta\":{\"tool_calls\":[{"
	    "\"function\":{\"name\":\"get_weather\",\"arguments\":"
	    "\"ty\\\":\\\"Paris\\\"}\"}}]}}]}",
	    "message", "{\"choices\":[{\"delta\":{},\"finish_reason\":"
	    "\"tool_calls\"}]}",
	    "message", "[DONE]", NULL };
	struct llm_answer	 a;
	json_t			*r, *body;
	char			 err[256];

	llm_answer_init(&a, 1 << 20);
	feed(&llm_openai, &a, text_stream);
	ck_assert_int_eq(a.done, 1);
	ck_assert_uint_eq(a.input_tokens, 11);
	ck_assert_uint_eq(a.output_tokens, 4);
	r = result(&a);
	at_is(r, "role", "\"assistant\"");
	at_is(r, "content", "{\"type\":\"text\",\"text\":"
	    "\"Hello \\\"you\\\"\\ncaf\\u00e9\"}");
	at_is(r, "model", "\"gpt-x-1\"");
	at_is(r, "stopReason", "\"maxTokens\"");
	json_decref(r);
	/* After [DONE], nothing more. */
	event_fails(&llm_openai, &a, "message", "{}", "after [DONE]");
	llm_answer_free(&a);

	llm_answer_init(&a, 1 << 20);
	feed(&llm_openai, &a, tool_stream);
	r = result(&a);
	at_is(r, "content", "{\"type\":\"tool_use\",\"id\":\"call_a\","
	    "\"name\":\"get_weather\",\"input\":{\"city\":\"Paris\"}}");
	at_is(r, "model", "\"fallback-model\"");
	at_is(r, "stopReason", "\"toolUse\"");
	json_decref(r);
	llm_answer_free(&a);

	/* Two calls streamed without an index (some compatible servers):
	 * told apart by their ids, not run together. */
	llm_answer_init(&a, 1 << 20);
	feed(&llm_openai, &a, noindex_stream);
	r = result(&a);
	at_is(r, "content", "[{\"type\":\"tool_use\",\"id\":\"call_a\","
	    "\"name\":\"get_weather\",\"input\":{\"city\":\"Paris\"}},"
	    "{\"type\":\"tool_use\",\"id\":\"call_b\",\"name\":\"count\","
	    "\"input\":{\"n\":2}}]");
	json_decref(r);
	llm_answer_free(&a);
	llm_answer_init(&a, 1 << 20);
	feed(&llm_openai, &a, between_stream);
	r = result(&a);
	at_is(r, "content", "[{\"type\":\"tool_use\",\"id\":\"call_a\","
	    "\"name\":\"get_weather\",\"input\":{\"city\":\"Paris\"}},"
	    "{\"type\":\"text\",\"text\":\"Looking.\"}]");
	json_decref(r);
	llm_answer_free(&a);

	/* A whole answer with text and two tool calls. */
	body = J("{\"model\":\"gpt-y\",\"choices\":[{\"message\":{\"role\":"
	    "\"assistant\",\"content\":\"Two calls.\",\"tool_calls\":["
	    "{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"f\","
	    "\"arguments\":\"{}\"}},{\"id\":\"c2\",\"type\":\"function\","
	    "\"function\":{\"name\":\"g\",\"arguments\":\"{\\\"a\\\":1}\"}}]},"
	    "\"finish_reason\":\"tool_calls\"}],\"usage\":{\"prompt_tokens\":3,"
	    "\"completion_tokens\":2}}");
	llm_answer_init(&a, 1 << 20);
	ck_assert_int_eq(llm_openai.body(&a, body, err, sizeof err), 0);
	r = result(&a);
	at_is(r, "content", "[{\"type\":\"text\",\"text\":\"Two calls.\"},"
	    "{\"type\":\"tool_use\",\"id\":\"c1\",\"name\":\"f\",\"input\":{}},"
	    "{\"type\":\"tool_use\",\"id\":\"c2\",\"name\":\"g\",\"input\":"
	    "{\"a\":1}}]");
	json_decref(r);
	json_decref(body);
	llm_answer_free(&a);

	/* Errors inside a 200, garbage, and arguments that are not JSON. */
	llm_answer_init(&a, 1 << 20);
	event_fails(&llm_openai, &a, "message", "{\"error\":{\"message\":"
	    "\"boom\"}}", "boom");
	event_fails(&llm_openai, &a, "message", "nope", "not a JSON object");
	llm_answer_free(&a);
	llm_answer_init(&a, 1 << 20);
	body = J("{\"choices\":[{\"message\":{\"tool_calls\":[{\"id\":\"c\","
	    "\"function\":{\"name\":\"f\",\"arguments\":\"{oops\"}}]}}]}");
	ck_assert_int_eq(llm_openai.body(&a, body, err, sizeof err), 0);
	json_decref(body);
	{
		struct evbuffer	*out = evbuffer_new();

		ck_assert_int_ne(llm_answer_result(&a, "m", out, err,
		    sizeof err), 0);
		ck_assert_ptr_nonnull(strstr(err, "not a JSON object"));
		evbuffer_free(out);
	}
	llm_answer_free(&a);
	body = J("{\"choices\":[]}");
	llm_answer_init(&a, 1 << 20);
	ck_assert_int_ne(llm_openai.body(&a, body, err, sizeof err), 0);
	json_decref(body);
	llm_answer_free(&a);
}
END_TEST

START_TEST(test_anthropic_answers)
{
	static const char *const stream[] = {
	    "message_start", "{\"type\":\"message_start\",\"message\":{\"model\":"
	    "\"claude-z-1\",\"content\":[],\"usage\":{\"input_tokens\":25,"
	    "\"output_tokens\":1}}}",
	    "content_block_start", "{\"index\":0,\"content_block\":{\"type\":"
	    "\"thinking\",\"thinking\":\"\"}}",
	    "content_block_delta", "{\"index\":0,\"delta\":{\"type\":"
	    "\"thinking_delta\",\"thinking\":\"hmm\"}}",
	    "content_block_start", "{\"index\":1,\"content_block\":{\"type\":"
	    "\"text\",\"text\":\"\"}}",
	    "ping", "{\"type\":\"ping\"}",
	    "content_block_delta", "{\"index\":1,\"delta\":{\"type\":"
	    "\"text_delta\",\"text\":\"Let me \"}}",
	    "content_block_delta", "{\"index\":1,\"delta\":{\"type\":"
	    "\"text_delta\",\"text\":\"check.\"}}",
	    "content_block_stop", "{\"index\":1}",
	    "content_block_start", "{\"index\":2,\"content_block\":{\"type\":"
	    "\"tool_use\",\"id\":\"toolu_1\",\"name\":\"get_weather\","
	    "\"input\":{}}}",
	    "content_block_delta", "{\"index\":2,\"delta\":{\"type\":"
	    "\"input_json_delta\",\"partial_json\":\"{\\\"city\\\": \"}}",
	    "content_block_delta", "{\"index\":2,\"delta\":{\"type\":"
	    "\"input_json_delta\",\"partial_json\":\"\\\"Paris\\\"}\"}}",
	    "content_block_stop", "{\"index\":2}",
	    "some_future_event", "{\"whatever\":1}",
	    "message_delta", "{\"delta\":{\"stop_reason\":\"tool_use\"},"
	    "\"usage\":{\"output_tokens\":30}}",
	    "message_stop", "{\"type\":\"message_stop\"}", NULL };
	struct llm_answer	 a;
	json_t			*r, *body;
	char			 err[256];

	llm_answer_init(&a, 1 << 20);
	feed(&llm_anthropic, &a, stream);
	ck_assert_int_eq(a.done, 1);
	ck_assert_uint_eq(a.input_tokens, 25);
	ck_assert_uint_eq(a.output_tokens, 30);
	r = result(&a);
	at_is(r, "content", "[{\"type\":\"text\",\"text\":\"Let me check.\"},"
	    "{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"get_weather\","
	    "\"input\":{\"city\":\"Paris\"}}]");
	at_is(r, "model", "\"claude-z-1\"");
	at_is(r, "stopReason", "\"toolUse\"");
	json_decref(r);
	llm_answer_free(&a);

	body = J("{\"type\":\"message\",\"model\":\"claude-q\",\"content\":["
	    "{\"type\":\"text\",\"text\":\"A\"},{\"type\":\"text\",\"text\":"
	    "\"B\"}],\"stop_reason\":\"stop_sequence\",\"usage\":"
	    "{\"input_tokens\":1,\"output_tokens\":2}}");
	llm_answer_init(&a, 1 << 20);
	ck_assert_int_eq(llm_anthropic.body(&a, body, err, sizeof err), 0);
	r = result(&a);
	at_is(r, "content", "{\"type\":\"text\",\"text\":\"AB\"}");
	at_is(r, "stopReason", "\"stopSequence\"");
	json_decref(r);
	json_decref(body);
	llm_answer_free(&a);

	llm_answer_init(&a, 1 << 20);
	event_fails(&llm_anthropic, &a, "error", "{\"type\":\"error\","
	    "\"error\":{\"type\":\"overloaded_error\",\"message\":"
	    "\"Overloaded\"}}", "overloaded_error");
	event_fails(&llm_anthropic, &a, "content_block_delta", "{\"delta\":"
	    "{\"type\":\"text_delta\",\"text\":\"x\"}}", "index");
	llm_answer_free(&a);
	body = J("{\"type\":\"error\",\"error\":{\"type\":\"api_error\","
	    "\"message\":\"Internal\"}}");
	llm_answer_init(&a, 1 << 20);
	ck_assert_int_ne(llm_anthropic.body(&a, body, err, sizeof err), 0);
	json_decref(body);
	llm_answer_free(&a);
}
END_TEST

START_TEST(test_ollama_answers)
{
	static const char *const stream[] = {
	    NULL, "{\"model\":\"llama3.2\",\"message\":{\"role\":\"assistant\","
	    "\"content\":\"Sure\"},\"done\":false}",
	    NULL, "{\"model\":\"llama3.2\",\"message\":{\"role\":\"assistant\","
	    "\"content\":\"\",\"tool_calls\":[{\"function\":{\"name\":\"a\","
	    "\"arguments\":{\"x\":1}}},{\"function\":{\"name\":\"b\","
	    "\"arguments\":{}}}]},\"done\":false}",
	    NULL, "{\"model\":\"llama3.2\",\"message\":{\"role\":\"assistant\","
	    "\"content\":\"\"},\"done\":true,\"done_reason\":\"stop\","
	    "\"prompt_eval_count\":9,\"eval_count\":3}",
	    NULL, NULL };
	struct llm_answer	 a;
	json_t			*r, *body, *c;
	char			 err[256];
	size_t			 i;

	llm_answer_init(&a, 1 << 20);
	for (i = 0; stream[i + 1] != NULL; i += 2)
		ck_assert_int_eq(llm_ollama.event(&a, NULL, stream[i + 1],
		    strlen(stream[i + 1]), err, sizeof err), 0);
	ck_assert_uint_eq(a.input_tokens, 9);
	ck_assert_uint_eq(a.output_tokens, 3);
	r = result(&a);
	at_is(r, "stopReason", "\"toolUse\"");
	at_is(r, "content.0", "{\"type\":\"text\",\"text\":\"Sure\"}");
	at_is(r, "content.1.name", "\"a\"");
	at_is(r, "content.1.input", "{\"x\":1}");
	at_is(r, "content.2.name", "\"b\"");
	/* Ollama names no ids: each gets its own. */
	c = json_object_get(r, "content");
	ck_assert_str_ne(json_string_value(json_object_get(json_array_get(c, 1),
	    "id")), json_string_value(json_object_get(json_array_get(c, 2),
	    "id")));
	json_decref(r);
	llm_answer_free(&a);

	body = J("{\"model\":\"qwen3:8b\",\"message\":{\"role\":\"assistant\","
	    "\"content\":\"cut\"},\"done\":true,\"done_reason\":\"length\"}");
	llm_answer_init(&a, 1 << 20);
	ck_assert_int_eq(llm_ollama.body(&a, body, err, sizeof err), 0);
	r = result(&a);
	at_is(r, "stopReason", "\"maxTokens\"");
	at_is(r, "model", "\"qwen3:8b\"");
	json_decref(r);
	json_decref(body);
	llm_answer_free(&a);

	llm_answer_init(&a, 1 << 20);
	event_fails(&llm_ollama, &a, NULL, "{\"error\":\"boom\"}", "boom");
	llm_answer_free(&a);
	body = J("{\"model\":\"m\",\"message\":{\"content\":\"x\"},"
	    "\"done\":false}");
	llm_answer_init(&a, 1 << 20);
	ck_assert_int_ne(llm_ollama.body(&a, body, err, sizeof err), 0);
	json_decref(body);
	llm_answer_free(&a);
}
END_TEST

START_TEST(test_answer_bounded)
{
	struct llm_answer	 a;
	char			 err[256], big[100];
	json_t			*r;
	int			 i;

	memset(big, 'x', sizeof big);
	llm_answer_init(&a, 250);
	ck_assert_int_eq(llm_answer_text(&a, -1, big, 100, err, sizeof err), 0);
	ck_assert_int_eq(llm_answer_text(&a, -1, big, 100, err, sizeof err), 0);
	ck_assert_int_ne(llm_answer_text(&a, -1, big, 100, err, sizeof err), 0);
	ck_assert_ptr_nonnull(strstr(err, "max_response"));
	llm_answer_free(&a);
	/* Blocks are bounded too. */
	llm_answer_init(&a, 1 << 20);
	for (i = 0; i < LLM_MAX_BLOCKS; i++)
		ck_assert_int_eq(llm_answer_tool(&a, i, "id", "n", err,
		    sizeof err), 0);
	ck_assert_int_ne(llm_answer_tool(&a, i, "id", "n", err, sizeof err),
	    0);
	llm_answer_free(&a);
	/* Nothing said: an empty text. */
	llm_answer_init(&a, 10);
	r = result(&a);
	at_is(r, "content", "{\"type\":\"text\",\"text\":\"\"}");
	ck_assert_ptr_null(json_object_get(r, "stopReason"));
	json_decref(r);
	llm_answer_free(&a);
}
END_TEST

/* The model chosen for modelPreferences must be want. */
static void
choose_is(const struct llm_conf *lc, const char *params, const char *want)
{
	json_t	*p = J(params);

	ck_assert_str_eq(llm_choose_model(lc, p), want);
	json_decref(p);
}

START_TEST(test_choose_model)
{
	static char	*models[] = { "gpt-4.1", "gpt-4.1-mini", "o4-mini", NULL };
	struct llm_score scores[] = {
		{ "gpt-4.1", 0.8, 0.3, 0.9 },
		{ "gpt-4.1-mini", 0.2, 0.8, 0.6 },
		{ "o4-mini", 0.5, 0.4, 1.0 },
	};
	struct llm_conf	 lc;

	memset(&lc, 0, sizeof lc);
	lc.model = "gpt-4.1-mini";
	lc.models = models;
	lc.scores = scores;
	lc.nscores = 3;
	choose_is(&lc, "{}", "gpt-4.1-mini");
	/* Hints in order, as substrings, ignoring case. */
	choose_is(&lc, "{\"modelPreferences\":{\"hints\":[{\"name\":\"claude\"},"
	    "{\"name\":\"O4\"}]}}", "o4-mini");
	/* A hint matching several: the priorities choose. */
	choose_is(&lc, "{\"modelPreferences\":{\"hints\":[{\"name\":\"gpt-4.1\"}],"
	    "\"intelligencePriority\":1}}", "gpt-4.1");
	choose_is(&lc, "{\"modelPreferences\":{\"hints\":[{\"name\":\"gpt-4.1\"}],"
	    "\"costPriority\":1}}", "gpt-4.1-mini");
	/* A matching hint and no priorities: the first that matches. */
	choose_is(&lc, "{\"modelPreferences\":{\"hints\":[{\"name\":\"mini\"}]}}",
	    "gpt-4.1-mini");
	/* No hint matches: the priorities over every model. */
	choose_is(&lc, "{\"modelPreferences\":{\"hints\":[{\"name\":\"llama\"}],"
	    "\"intelligencePriority\":0.9,\"speedPriority\":0.1}}", "o4-mini");
	choose_is(&lc, "{\"modelPreferences\":{\"speedPriority\":1}}", "gpt-4.1-mini");
	/* Nothing matches and no priorities: the provider's model. */
	choose_is(&lc, "{\"modelPreferences\":{\"hints\":[{\"name\":\"llama\"}]}}",
	    "gpt-4.1-mini");
}
END_TEST

/* The one-line text of an error body. */
static void
error_is(long status, const char *body, const char *want)
{
	char	out[512];

	llm_error_text(status, body, strlen(body), NULL, out, sizeof out);
	ck_assert_str_eq(out, want);
}

START_TEST(test_error_text)
{
	char	big[400], out[512];

	error_is(429, "{\"error\":{\"message\":\"Rate limit reached\","
	    "\"type\":\"requests\",\"param\":null,\"code\":"
	    "\"rate_limit_exceeded\"}}", "HTTP 429 requests: Rate limit reached");
	error_is(500, "{\"type\":\"error\",\"error\":{\"type\":"
	    "\"api_error\",\"message\":\"Internal server error\"}}",
	    "HTTP 500 api_error: Internal server error");
	error_is(404, "{\"error\":\"model \\\"x\\\" not found\"}",
	    "HTTP 404: model \"x\" not found");
	error_is(502, "<html>\nbad gateway</html>",
	    "HTTP 502: <html> bad gateway</html>");
	/* A body in Latin-1, a message cut inside a character: text that
	 * is UTF-8 still (a JSON string; else the worker could not send
	 * it and exited). */
	error_is(502, "<p>caf\xe9</p>", "HTTP 502: <p>caf?</p>");
	memset(big, 'a', sizeof big);
	memcpy(big, "{\"error\":\"", 10);
	memcpy(big + 10 + 299, "\xc3\xa9\"}", 4);
	big[10 + 303] = '\0';
	llm_error_text(400, big, strlen(big), NULL, out, sizeof out);
	ck_assert_msg(utf8_valid((const unsigned char *)out, strlen(out)),
	    "%s", out);
	ck_assert_ptr_nonnull(strstr(out, "a?..."));
	ck_assert_int_eq(llm_status_outcome(401), LLM_AUTH);
	ck_assert_int_eq(llm_status_outcome(429), LLM_RATE);
	ck_assert_int_eq(llm_status_outcome(400), LLM_HTTP);
}
END_TEST

static Suite *
llm_suite(void)
{
	Suite	*s = suite_create("llm");
	TCase	*tc = tcase_create("mapping");

	tcase_add_test(tc, test_params_checked);
	tcase_add_test(tc, test_openai_request);
	tcase_add_test(tc, test_openai_tools_request);
	tcase_add_test(tc, test_anthropic_request);
	tcase_add_test(tc, test_ollama_request);
	tcase_add_test(tc, test_openai_answers);
	tcase_add_test(tc, test_anthropic_answers);
	tcase_add_test(tc, test_ollama_answers);
	tcase_add_test(tc, test_answer_bounded);
	tcase_add_test(tc, test_choose_model);
	tcase_add_test(tc, test_error_text);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr = srunner_create(llm_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
