/* SPDX-License-Identifier: ISC */
/*
 * Fuzz the LLM providers' answers as mcp-llm reads them (llm/llm_*.c):
 * whole JSON bodies, and streams fed in pieces, server-sent events through
 * common/sse.c (OpenAI, Anthropic) or lines of JSON (Ollama), as
 * llm_http.c feeds them.  Whatever a provider sends must end in an error
 * or in a CreateMessageResult that is valid JSON, has the assistant's
 * role, a content block or an array of them, a model, and holds no more
 * than max_response bytes of answer; the error text of a body must be one
 * line, and no error text may hold the key (FUZZ_KEY), which the worker
 * masks in whatever the provider says.  The request mapping is fuzzed as
 * well, with the input as params.
 *
 * The first byte chooses: bits 0-1 the vendor (OpenAI, Anthropic, Ollama,
 * OpenAI), bits 2-3 what the rest is (0 a stream, 1 a whole body, 2 a
 * request's params, 3 an error body), bits 4-7 the size of the pieces a
 * stream is fed in.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <jansson.h>

#include "llm.h"
#include "sse.h"

#define CHECK(x) do {							\
	if (!(x)) {							\
		fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__,	\
		    __LINE__, #x);					\
		abort();						\
	}								\
} while (0)

#define FUZZ_LLM_MAX	4096	/* max_response */
#define FUZZ_KEY	"sk-fuzz"	/* the API key */

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

struct feed {
	const struct llm_vendor	*v;
	struct llm_answer	*a;
	int			 failed;
	char			 err[512];
};

/* One server-sent event, as llm_http.c hands it on. */
static void
on_event(const struct sse_event *ev, void *arg)
{
	struct feed	*f = arg;

	if (f->failed || ev->datalen == 0)
		return;
	if (f->v->event(f->a, ev->event, ev->data, ev->datalen, f->err,
	    sizeof f->err) != 0)
		f->failed = 1;
}

/* Feed lines of JSON, as llm_http.c does for Ollama. */
static void
lines(struct feed *f, const char *p, size_t n)
{
	const char	*nl;
	size_t		 len;

	while (n > 0 && !f->failed) {
		nl = memchr(p, '\n', n);
		len = nl != NULL ? (size_t)(nl - p) : n;
		if (len > FUZZ_LLM_MAX) {
			f->failed = 1;
			return;
		}
		if (len > 0 && p[len - 1] == '\r')
			len--;
		if (len > 0 && f->v->event(f->a, NULL, p, len, f->err,
		    sizeof f->err) != 0)
			f->failed = 1;
		if (nl == NULL)
			return;
		n -= (size_t)(nl - p) + 1;
		p = nl + 1;
	}
}

/*
 * Check a result: valid JSON of the right shape, and bounded by what it
 * came from (n bytes of input; escaping at most sextuples a byte).
 */
static void
check_result(struct llm_answer *a, size_t n)
{
	struct evbuffer	*out = evbuffer_new();
	json_t		*j, *c, *b;
	char		 err[256];
	size_t		 i;

	if (llm_answer_result(a, "fallback", out, err, sizeof err) != 0) {
		CHECK(err[0] != '\0');
		CHECK(strstr(err, FUZZ_KEY) == NULL);
		evbuffer_free(out);
		return;
	}
	CHECK(evbuffer_get_length(out) <= 6 * n + 4096);
	j = json_loadb((const char *)evbuffer_pullup(out, -1),
	    evbuffer_get_length(out), 0, NULL);
	CHECK(j != NULL);
	CHECK(json_is_string(json_object_get(j, "model")));
	CHECK(strcmp(json_string_value(json_object_get(j, "role")),
	    "assistant") == 0);
	c = json_object_get(j, "content");
	CHECK(json_is_object(c) || (json_is_array(c) && json_array_size(c) > 1));
	if (json_is_object(c))
		CHECK(json_is_string(json_object_get(c, "type")));
	json_array_foreach(c, i, b) {
		CHECK(json_is_string(json_object_get(b, "type")));
		if (strcmp(json_string_value(json_object_get(b, "type")),
		    "tool_use") == 0)
			CHECK(json_is_object(json_object_get(b, "input")));
	}
	json_decref(j);
	evbuffer_free(out);
}

/* A stream, fed in pieces of the given size. */
static void
stream(const struct llm_vendor *v, const char *p, size_t n, size_t piece)
{
	struct llm_answer	a;
	struct sse_parser	sp;
	struct feed		f = { v, &a, 0, "" };
	size_t			pos, k;

	llm_answer_init(&a, FUZZ_LLM_MAX);
	a.secret = FUZZ_KEY;
	sse_parser_init(&sp, FUZZ_LLM_MAX);
	for (pos = 0; pos < n && !f.failed; pos += k) {
		k = n - pos < piece ? n - pos : piece;
		if (v->ndjson)
			lines(&f, p + pos, k);
		else if (sse_parse(&sp, p + pos, k, on_event, &f) != 0)
			f.failed = 1;
	}
	CHECK(a.bytes <= FUZZ_LLM_MAX);
	if (f.failed)
		CHECK(strstr(f.err, FUZZ_KEY) == NULL);
	if (!f.failed && a.done)
		check_result(&a, n);
	sse_parser_free(&sp);
	llm_answer_free(&a);
}

/* A whole body. */
static void
body(const struct llm_vendor *v, const char *p, size_t n)
{
	struct llm_answer	 a;
	json_t			*j;
	char			 err[512];

	if ((j = json_loadb(p, n, 0, NULL)) == NULL)
		return;
	llm_answer_init(&a, FUZZ_LLM_MAX);
	a.secret = FUZZ_KEY;
	if (v->body(&a, j, err, sizeof err) == 0) {
		CHECK(a.done);
		check_result(&a, n);
	} else
		CHECK(strstr(err, FUZZ_KEY) == NULL);
	CHECK(a.bytes <= FUZZ_LLM_MAX);
	llm_answer_free(&a);
	json_decref(j);
}

/* A request's params: an object to send, or a refusal that says why. */
static void
request(const struct llm_vendor *v, const char *p, size_t n)
{
	struct llm_req_opts	 o = { "m", 1, 1 };
	json_t			*j, *out;
	char			 err[512], *text;

	if ((j = json_loadb(p, n, 0, NULL)) == NULL)
		return;
	err[0] = '\0';
	if ((out = v->request(j, &o, err, sizeof err)) != NULL) {
		CHECK(json_is_object(out));
		CHECK(json_is_array(json_object_get(out, "messages")));
		text = json_dumps(out, JSON_COMPACT);
		CHECK(text != NULL);
		free(text);
		json_decref(out);
	} else
		CHECK(err[0] != '\0');
	json_decref(j);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct llm_vendor	*v;
	const char		*p = (const char *)data + 1;
	char			 out[256];
	size_t			 n, i;

	if (size == 0)
		return (0);
	n = size - 1;
	v = llm_vendor((data[0] & 3) == 3 ? LLM_OPENAI :
	    (enum llm_provider)(data[0] & 3));
	switch ((data[0] >> 2) & 3) {
	case 0:
		stream(v, p, n, 1 + (size_t)(data[0] >> 4) * 7);
		break;
	case 1:
		body(v, p, n);
		break;
	case 2:
		request(v, p, n);
		break;
	default:
		llm_error_text(429, p, n, FUZZ_KEY, out, sizeof out);
		CHECK(strlen(out) < sizeof out);
		CHECK(strstr(out, FUZZ_KEY) == NULL);
		for (i = 0; out[i] != '\0'; i++)
			CHECK(out[i] != '\n' && out[i] != '\r');
		break;
	}
	return (0);
}
