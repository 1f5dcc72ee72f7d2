/* SPDX-License-Identifier: ISC */
/*
 * What the vendors' mappings share: the answer being put together (text
 * kept JSON-escaped in evbuffers, so a long answer is held once and moved
 * into the result), the checks every request gets, the model choice, and
 * error bodies read whatever their shape.
 */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>

#include "json_scan.h"
#include "llm.h"
#include "secret.h"
#include "utf8.h"
#include "xmalloc.h"

static const char *const outcome_names[] = {
	[LLM_OK] = "ok",
	[LLM_REFUSED] = "refused",
	[LLM_HTTP] = "http-error",
	[LLM_AUTH] = "auth-error",
	[LLM_RATE] = "rate-limited",
	[LLM_TIMEOUT] = "timeout",
	[LLM_NETWORK] = "network-error",
	[LLM_BAD_ANSWER] = "bad-answer",
};

const char *
llm_outcome_name(enum llm_outcome o)
{
	return (outcome_names[o]);
}

const struct llm_vendor *
llm_vendor(enum llm_provider p)
{
	switch (p) {
	case LLM_ANTHROPIC:
		return (&llm_anthropic);
	case LLM_OLLAMA:
		return (&llm_ollama);
	default:
		return (&llm_openai);
	}
}

void
llm_answer_init(struct llm_answer *a, size_t max)
{
	memset(a, 0, sizeof *a);
	a->max = max;
}

void
llm_answer_free(struct llm_answer *a)
{
	size_t	i;

	for (i = 0; i < a->nblocks; i++) {
		evbuffer_free(a->blocks[i].text);
		free(a->blocks[i].id);
		free(a->blocks[i].name);
	}
	free(a->blocks);
	free(a->model);
	free(a->stop);
	memset(a, 0, sizeof *a);
}

/* Add a block; NULL with err set if there are too many. */
static struct llm_block *
answer_add(struct llm_answer *a, int tool, int index, char *err,
    size_t errlen)
{
	struct llm_block	*b;

	if (a->nblocks >= LLM_MAX_BLOCKS) {
		snprintf(err, errlen, "the answer has more than %d content "
		    "blocks", LLM_MAX_BLOCKS);
		return (NULL);
	}
	a->blocks = xreallocarray(a->blocks, a->nblocks + 1,
	    sizeof *a->blocks);
	b = &a->blocks[a->nblocks++];
	memset(b, 0, sizeof *b);
	b->tool = tool;
	b->index = index;
	b->text = evbuffer_new();
	return (b);
}

/*
 * Find a block by vendor index.  -1: the last text block if it is the
 * last block (text after a tool use starts a new block), the last tool
 * use wherever it is (text may come between a call's deltas).
 */
static struct llm_block *
answer_find(struct llm_answer *a, int tool, int index)
{
	size_t	i;

	for (i = a->nblocks; i > 0; i--) {
		if (index >= 0 && a->blocks[i - 1].index == index)
			return (a->blocks[i - 1].tool == tool ?
			    &a->blocks[i - 1] : NULL);
		if (index < 0 && (!tool || a->blocks[i - 1].tool))
			return (a->blocks[i - 1].tool == tool ?
			    &a->blocks[i - 1] : NULL);
	}
	return (NULL);
}

/* Count bytes against the bound. */
static int
answer_bytes(struct llm_answer *a, size_t len, char *err, size_t errlen)
{
	if (len > a->max || a->bytes > a->max - len) {
		snprintf(err, errlen, "the answer is over max_response (%zu "
		    "bytes)", a->max);
		return (-1);
	}
	a->bytes += len;
	return (0);
}

int
llm_answer_text(struct llm_answer *a, int index, const char *s, size_t len,
    char *err, size_t errlen)
{
	struct llm_block	*b;

	if (answer_bytes(a, len, err, errlen) != 0)
		return (-1);
	if ((b = answer_find(a, 0, index)) == NULL &&
	    (b = answer_add(a, 0, index, err, errlen)) == NULL)
		return (-1);
	jscan_add_escaped(b->text, s, len);
	if (len > 0)
		a->pieces++;
	return (0);
}

int
llm_answer_tool(struct llm_answer *a, int index, const char *id,
    const char *name, char *err, size_t errlen)
{
	struct llm_block	*b;

	if (index < 0 || (b = answer_find(a, 1, index)) == NULL) {
		if ((b = answer_add(a, 1, index, err, errlen)) == NULL)
			return (-1);
		a->ntools++;
	}
	if (id != NULL && *id != '\0' && b->id == NULL)
		b->id = xstrdup(id);
	if (name != NULL && *name != '\0' && b->name == NULL)
		b->name = xstrdup(name);
	a->pieces++;
	return (0);
}

int
llm_answer_tool_next(struct llm_answer *a, const char *id)
{
	struct llm_block	*b;
	size_t			 i;
	int			 next = 0;

	if ((b = answer_find(a, 1, -1)) != NULL && (id == NULL ||
	    *id == '\0' || (b->id != NULL && strcmp(b->id, id) == 0)))
		return (b->index);
	for (i = 0; i < a->nblocks; i++) {
		if (a->blocks[i].tool && a->blocks[i].index >= next)
			next = a->blocks[i].index + 1;
	}
	return (next);
}

int
llm_answer_input(struct llm_answer *a, int index, const char *s, size_t len,
    char *err, size_t errlen)
{
	struct llm_block	*b;

	if ((b = answer_find(a, 1, index)) == NULL) {
		snprintf(err, errlen, "tool input for no tool use");
		return (-1);
	}
	if (answer_bytes(a, len, err, errlen) != 0)
		return (-1);
	evbuffer_add(b->text, s, len);
	if (len > 0)
		a->pieces++;
	return (0);
}

void
llm_answer_model(struct llm_answer *a, const char *model)
{
	if (model == NULL || *model == '\0')
		return;
	free(a->model);
	a->model = xstrdup(model);
}

void
llm_answer_stop(struct llm_answer *a, const char *stop)
{
	if (stop == NULL || *stop == '\0')
		return;
	free(a->stop);
	a->stop = xstrdup(stop);
}

/* Append one tool_use content block. */
static int
result_tool(const struct llm_answer *a, struct llm_block *b, unsigned int n,
    struct evbuffer *out, char *err, size_t errlen)
{
	json_t		*input;
	json_error_t	 jerr;
	char		*text, id[32], name[80];
	size_t		 len = evbuffer_get_length(b->text);

	if (b->name == NULL) {
		snprintf(err, errlen, "a tool use has no name");
		return (-1);
	}
	llm_provider_text(a->secret, name, sizeof name, b->name,
	    strlen(b->name), 64);
	if (len == 0)
		input = json_object();
	else if ((input = json_loadb((const char *)evbuffer_pullup(b->text,
	    -1), len, 0, &jerr)) == NULL || !json_is_object(input)) {
		json_decref(input);
		snprintf(err, errlen, "tool use %s: its input is not a JSON "
		    "object", name);
		return (-1);
	}
	text = json_dumps(input, JSON_COMPACT);
	json_decref(input);
	if (text == NULL) {
		snprintf(err, errlen, "tool use %s: its input cannot be "
		    "encoded", name);
		return (-1);
	}
	evbuffer_add_printf(out, "{\"type\":\"tool_use\",\"id\":");
	if (b->id != NULL)
		jscan_add_string(out, b->id, strlen(b->id));
	else {
		snprintf(id, sizeof id, "call_%u", n);
		jscan_add_string(out, id, strlen(id));
	}
	evbuffer_add_printf(out, ",\"name\":");
	jscan_add_string(out, b->name, strlen(b->name));
	evbuffer_add_printf(out, ",\"input\":%s}", text);
	free(text);
	return (0);
}

int
llm_answer_result(struct llm_answer *a, const char *fallback,
    struct evbuffer *out, char *err, size_t errlen)
{
	struct evbuffer	*content;
	size_t		 i, j, items = 0;
	const char	*model = a->model != NULL ? a->model : fallback;

	content = evbuffer_new();
	for (i = 0; i < a->nblocks; i = j) {
		if (a->blocks[i].tool) {
			if (items++ > 0)
				evbuffer_add(content, ",", 1);
			if (result_tool(a, &a->blocks[i], (unsigned int)i,
			    content, err, errlen) != 0) {
				evbuffer_free(content);
				return (-1);
			}
			j = i + 1;
			continue;
		}
		/* Adjacent text blocks are one; empty ones are left out. */
		for (j = i; j < a->nblocks && !a->blocks[j].tool; j++)
			;
		if (a->nblocks > 1 || items > 0) {
			size_t	k, len = 0;

			for (k = i; k < j; k++)
				len += evbuffer_get_length(a->blocks[k].text);
			if (len == 0)
				continue;
		}
		if (items++ > 0)
			evbuffer_add(content, ",", 1);
		evbuffer_add_printf(content, "{\"type\":\"text\",\"text\":\"");
		for (; i < j; i++)
			evbuffer_add_buffer(content, a->blocks[i].text);
		evbuffer_add(content, "\"}", 2);
	}
	if (items == 0) {
		evbuffer_add_printf(content, "{\"type\":\"text\",\"text\":\"\"}");
		items = 1;
	}
	evbuffer_add_printf(out, "{\"role\":\"assistant\",\"content\":%s",
	    items > 1 ? "[" : "");
	evbuffer_add_buffer(out, content);
	evbuffer_add_printf(out, "%s,\"model\":", items > 1 ? "]" : "");
	jscan_add_string(out, model, strlen(model));
	if (a->stop != NULL) {
		evbuffer_add_printf(out, ",\"stopReason\":");
		jscan_add_string(out, a->stop, strlen(a->stop));
	}
	evbuffer_add(out, "}", 1);
	evbuffer_free(content);
	return (0);
}

int
llm_params(const json_t *params, json_t **messages, json_int_t *max_tokens,
    char *err, size_t errlen)
{
	json_t		*m, *mt, *blocks;
	const char	*role;
	size_t		 i;

	if (!json_is_object(params)) {
		snprintf(err, errlen, "params must be an object");
		return (-1);
	}
	*messages = json_object_get(params, "messages");
	if (!json_is_array(*messages) || json_array_size(*messages) == 0) {
		snprintf(err, errlen, "messages must be a non-empty array");
		return (-1);
	}
	mt = json_object_get(params, "maxTokens");
	if (!json_is_integer(mt) || json_integer_value(mt) < 1) {
		snprintf(err, errlen, "maxTokens must be a positive integer");
		return (-1);
	}
	*max_tokens = json_integer_value(mt);
	json_array_foreach(*messages, i, m) {
		if (json_unpack(m, "{s:s}", "role", &role) != 0 ||
		    (strcmp(role, "user") != 0 &&
		    strcmp(role, "assistant") != 0)) {
			snprintf(err, errlen, "message %zu: role must be user or "
			    "assistant", i);
			return (-1);
		}
		if ((blocks = llm_blocks(json_object_get(m, "content"))) ==
		    NULL) {
			snprintf(err, errlen, "message %zu: content must be a "
			    "content block or an array of them", i);
			return (-1);
		}
		json_decref(blocks);
	}
	return (0);
}

json_t *
llm_blocks(const json_t *content)
{
	json_t	*a, *b;
	size_t	 i;

	if (json_is_object(content)) {
		if (llm_block_type(content) == NULL)
			return (NULL);
		a = json_array();
		json_array_append(a, (json_t *)content);
		return (a);
	}
	if (!json_is_array(content))
		return (NULL);
	json_array_foreach(content, i, b) {
		if (!json_is_object(b) || llm_block_type(b) == NULL)
			return (NULL);
	}
	return (json_incref((json_t *)content));
}

const char *
llm_block_type(const json_t *b)
{
	return (json_string_value(json_object_get(b, "type")));
}

int
llm_image_ok(const char *mime)
{
	static const char *const ok[] = { "image/jpeg", "image/png",
	    "image/gif", "image/webp", NULL };
	size_t	i;

	for (i = 0; mime != NULL && ok[i] != NULL; i++) {
		if (strcasecmp(mime, ok[i]) == 0)
			return (1);
	}
	return (0);
}

char *
llm_tool_result_text(const json_t *block, char *err, size_t errlen)
{
	struct evbuffer	*buf;
	json_t		*c, *sc;
	const char	*type, *text;
	char		*s, *out;
	size_t		 i, len;

	buf = evbuffer_new();
	json_array_foreach(json_object_get(block, "content"), i, c) {
		type = llm_block_type(c);
		if (evbuffer_get_length(buf) > 0)
			evbuffer_add(buf, "\n", 1);
		if (type != NULL && strcmp(type, "text") == 0 &&
		    (text = json_string_value(json_object_get(c, "text"))) !=
		    NULL) {
			evbuffer_add(buf, text, json_string_length(
			    json_object_get(c, "text")));
			continue;
		}
		if (type != NULL && (strcmp(type, "image") == 0 ||
		    strcmp(type, "audio") == 0)) {
			snprintf(err, errlen, "a tool result holds %s content, "
			    "which this provider takes only as text", type);
			evbuffer_free(buf);
			return (NULL);
		}
		if ((s = json_dumps(c, JSON_COMPACT)) != NULL) {
			evbuffer_add(buf, s, strlen(s));
			free(s);
		}
	}
	sc = json_object_get(block, "structuredContent");
	if (evbuffer_get_length(buf) == 0 && sc != NULL &&
	    (s = json_dumps(sc, JSON_COMPACT)) != NULL) {
		evbuffer_add(buf, s, strlen(s));
		free(s);
	}
	len = evbuffer_get_length(buf);
	out = xmalloc(len + 1);
	evbuffer_remove(buf, out, len);
	out[len] = '\0';
	evbuffer_free(buf);
	return (out);
}

json_t *
llm_tool_schema(const json_t *tool)
{
	json_t	*s = json_object_get(tool, "inputSchema");

	if (json_is_object(s))
		return (json_incref(s));
	return (json_pack("{s:s, s:{}}", "type", "object", "properties"));
}

json_t *
llm_function_tools(const json_t *tools, char *err, size_t errlen)
{
	json_t		*out, *t, *f;
	const char	*name;
	size_t		 i;

	out = json_array();
	json_array_foreach(tools, i, t) {
		if ((name = json_string_value(json_object_get(t, "name"))) ==
		    NULL) {
			snprintf(err, errlen, "a tool has no name");
			json_decref(out);
			return (NULL);
		}
		f = json_pack("{s:s, s:o}", "name", name, "parameters",
		    llm_tool_schema(t));
		if (json_is_string(json_object_get(t, "description")))
			json_object_set(f, "description",
			    json_object_get(t, "description"));
		json_array_append_new(out, json_pack("{s:s, s:o}", "type",
		    "function", "function", f));
	}
	return (out);
}

void
llm_answer_usage(struct llm_answer *a, const json_t *o, const char *in,
    const char *out)
{
	json_t	*v;

	if (json_is_integer(v = json_object_get(o, in)) &&
	    json_integer_value(v) >= 0)
		a->input_tokens = (uint64_t)json_integer_value(v);
	if (json_is_integer(v = json_object_get(o, out)) &&
	    json_integer_value(v) >= 0)
		a->output_tokens = (uint64_t)json_integer_value(v);
}

const char *
llm_tool_choice(const json_t *params)
{
	const char	*mode;

	mode = json_string_value(json_object_get(json_object_get(params,
	    "toolChoice"), "mode"));
	if (mode != NULL && (strcmp(mode, "none") == 0 ||
	    strcmp(mode, "required") == 0))
		return (mode);
	return ("auto");
}

/* A model's score under the priorities. */
static double
model_score(const struct llm_conf *lc, const char *model, double cp,
    double sp, double ip)
{
	double	cost = 0.5, speed = 0.5, intel = 0.5;
	size_t	i;

	for (i = 0; i < lc->nscores; i++) {
		if (strcmp(lc->scores[i].model, model) == 0) {
			cost = lc->scores[i].cost;
			speed = lc->scores[i].speed;
			intel = lc->scores[i].intelligence;
			break;
		}
	}
	return (cp * (1 - cost) + sp * speed + ip * intel);
}

/* A priority from 0 to 1, or -1 if absent. */
static double
priority(const json_t *prefs, const char *key)
{
	json_t	*v = json_object_get(prefs, key);
	double	 d;

	if (!json_is_number(v))
		return (-1);
	d = json_number_value(v);
	return (d < 0 ? 0 : d > 1 ? 1 : d);
}

/* Does the model's name hold the hint (ignoring case)? */
static int
hint_matches(const char *model, const char *hint)
{
	size_t	ml = strlen(model), hl = strlen(hint), i;

	for (i = 0; hl <= ml && i <= ml - hl; i++) {
		if (strncasecmp(model + i, hint, hl) == 0)
			return (1);
	}
	return (0);
}

const char *
llm_choose_model(const struct llm_conf *lc, const json_t *params)
{
	const json_t	*prefs, *hint;
	const char	*cand[257], *match[257], *h, *best;
	double		 cp, sp, ip, s, bs;
	size_t		 n = 0, nm, i, j;
	int		 any;

	cand[n++] = lc->model;
	for (i = 0; lc->models != NULL && lc->models[i] != NULL && n < 256;
	    i++) {
		if (strcmp(lc->models[i], lc->model) != 0)
			cand[n++] = lc->models[i];
	}
	prefs = json_object_get(params, "modelPreferences");
	if (!json_is_object(prefs))
		return (lc->model);
	cp = priority(prefs, "costPriority");
	sp = priority(prefs, "speedPriority");
	ip = priority(prefs, "intelligencePriority");
	any = cp > 0 || sp > 0 || ip > 0;
	cp = cp < 0 ? 0 : cp;
	sp = sp < 0 ? 0 : sp;
	ip = ip < 0 ? 0 : ip;
	nm = 0;
	json_array_foreach(json_object_get(prefs, "hints"), i, hint) {
		h = json_string_value(json_object_get(hint, "name"));
		if (h == NULL || *h == '\0')
			continue;
		for (j = 0; j < n; j++) {
			if (hint_matches(cand[j], h))
				match[nm++] = cand[j];
		}
		if (nm > 0)
			break;
	}
	if (nm == 0) {
		if (!any)
			return (lc->model);
		memcpy(match, cand, n * sizeof cand[0]);
		nm = n;
	}
	best = match[0];
	bs = model_score(lc, best, cp, sp, ip);
	for (i = 1; any && i < nm; i++) {
		if ((s = model_score(lc, match[i], cp, sp, ip)) > bs) {
			bs = s;
			best = match[i];
		}
	}
	return (best);
}

/* Copy text into out as one printable line, at most max bytes of it. */
static void
one_line(char *out, size_t outlen, const char *s, size_t len, size_t max)
{
	size_t	i, o = 0;

	for (i = 0; i < len && i < max && o + 1 < outlen; i++)
		out[o++] = (s[i] == '\n' || s[i] == '\r' || s[i] == '\t') ?
		    ' ' : ((unsigned char)s[i] < 0x20 ? '?' : s[i]);
	/* Not UTF-8, or cut inside a character: never a JSON string. */
	utf8_scrub(out, o);
	if (o > 0 && i < len && o + 4 < outlen) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
}

void
llm_provider_text(const char *secret, char *out, size_t outlen,
    const char *s, size_t len, size_t max)
{
	char	*masked = NULL;

	if (secret != NULL &&
	    (masked = secret_mask(s, len, secret, LLM_KEY_MASK, &len)) != NULL)
		s = masked;
	one_line(out, outlen, s, len, max);
	free(masked);
}

void
llm_error_text(long status, const char *body, size_t len, const char *secret,
    char *out, size_t outlen)
{
	json_t		*j, *e;
	const char	*msg = NULL, *type = NULL;
	char		 m[320], t[80];

	j = len > 0 ? json_loadb(body, len, 0, NULL) : NULL;
	if ((e = json_object_get(j, "error")) != NULL) {
		if (json_is_string(e))
			msg = json_string_value(e);		/* Ollama */
		else {
			msg = json_string_value(json_object_get(e, "message"));
			type = json_string_value(json_object_get(e, "type"));
			if (type == NULL)
				type = json_string_value(json_object_get(e,
				    "code"));
		}
	}
	if (msg != NULL)
		llm_provider_text(secret, m, sizeof m, msg, strlen(msg), 300);
	else
		llm_provider_text(secret, m, sizeof m, body, len, 200);
	if (type != NULL)
		llm_provider_text(secret, t, sizeof t, type, strlen(type), 60);
	if (status > 0)
		snprintf(out, outlen, "HTTP %ld%s%s%s%s%s", status,
		    type != NULL ? " " : "", type != NULL ? t : "",
		    m[0] != '\0' ? ": " : "", m, "");
	else
		snprintf(out, outlen, "%s%s%s", type != NULL ? t : "",
		    type != NULL && m[0] != '\0' ? ": " : "", m);
	json_decref(j);
}

enum llm_outcome
llm_status_outcome(long status)
{
	if (status == 401 || status == 403)
		return (LLM_AUTH);
	if (status == 429)
		return (LLM_RATE);
	return (LLM_HTTP);
}
