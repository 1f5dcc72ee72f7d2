/* SPDX-License-Identifier: ISC */
/*
 * mcp-llm: one process per LLM provider (llm = ( ... )), started by
 * mcp-supervisord with its end of a socketpair on fd 3, as upstream
 * workers are.  It answers the supervisor's sampling requests by calling
 * the provider's HTTP API through libcurl's multi interface on the
 * libevent loop, streaming when it can.
 *
 * The mapping between MCP's sampling/createMessage and each vendor's API
 * (llm_map.c, llm_openai.c, llm_anthropic.c, llm_ollama.c) is pure: JSON
 * and bytes in, JSON and bytes out, no I/O, so that Check tests and a
 * fuzz target can drive it directly.
 */
#ifndef MCPS_LLM_H
#define MCPS_LLM_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "conf.h"

struct evbuffer;

/* How a request to a provider went wrong (for the chain and the log). */
enum llm_outcome {
	LLM_OK = 0,
	LLM_REFUSED,		/* it holds what the provider cannot take */
	LLM_HTTP,		/* an error status (400, 404, 500, ...) */
	LLM_AUTH,		/* 401 or 403: the key */
	LLM_RATE,		/* 429 */
	LLM_TIMEOUT,
	LLM_NETWORK,		/* not reached, or the connection broke */
	LLM_BAD_ANSWER		/* garbage, an error event, or too large */
};
const char	*llm_outcome_name(enum llm_outcome);

/* What a vendor request needs besides the sampling params. */
struct llm_req_opts {
	const char	*model;			/* the model chosen */
	int		 stream;
	int		 max_completion_tokens;	/* openai: the field */
};

/* One block of an answer: text, or a tool use. */
struct llm_block {
	int		 tool;		/* 0: text, 1: tool_use */
	int		 index;		/* the vendor's index, -1 if none */
	struct evbuffer	*text;		/* text: JSON-escaped, unquoted;
					   tool_use: the input's JSON text */
	char		*id;		/* tool_use */
	char		*name;
};

#define LLM_MAX_BLOCKS	128

/*
 * An answer put together from a whole body or from a stream's events,
 * bounded by max bytes of text and tool input.
 */
struct llm_answer {
	struct llm_block	*blocks;
	size_t			 nblocks;
	char			*model;		/* as the provider said */
	char			*stop;		/* MCP stopReason, or NULL */
	uint64_t		 input_tokens;
	uint64_t		 output_tokens;
	size_t			 bytes;
	size_t			 max;
	unsigned int		 pieces;	/* deltas so far (progress) */
	unsigned int		 ntools;	/* tool uses (ids for Ollama) */
	int			 done;		/* the end was seen */
	const char		*secret;	/* the API key, masked in the
						   provider's messages; borrowed,
						   or NULL */
};

void		 llm_answer_init(struct llm_answer *, size_t max);
void		 llm_answer_free(struct llm_answer *);
/* Append text to a block (by vendor index; -1: the last text block). */
int		 llm_answer_text(struct llm_answer *, int index, const char *,
		    size_t, char *err, size_t errlen);
/* Start a tool use; append to its input (by index; -1: the last one). */
int		 llm_answer_tool(struct llm_answer *, int index, const char *id,
		    const char *name, char *err, size_t errlen);
int		 llm_answer_input(struct llm_answer *, int index, const char *,
		    size_t, char *err, size_t errlen);
/* The index of the tool use a delta without one goes on with: the last
 * one's, unless id names another or there is none, then a new index. */
int		 llm_answer_tool_next(struct llm_answer *, const char *id);
void		 llm_answer_model(struct llm_answer *, const char *);
void		 llm_answer_stop(struct llm_answer *, const char *);
/*
 * The CreateMessageResult (appended to out, the answer's text moved, not
 * copied); fallback is the model to name if the provider named none.  -1
 * with err set if a tool use's input is not a JSON object.
 */
int		 llm_answer_result(struct llm_answer *, const char *fallback,
		    struct evbuffer *out, char *err, size_t errlen);

/* Shared checks and helpers of the request mappings. */
/* The sampling params' messages and maxTokens, checked. */
int		 llm_params(const json_t *params, json_t **messages,
		    json_int_t *max_tokens, char *err, size_t errlen);
/* A message's content as an array of blocks (a new reference). */
json_t		*llm_blocks(const json_t *content);
const char	*llm_block_type(const json_t *);
/* An image type every provider takes (JPEG, PNG, GIF, WebP)? */
int		 llm_image_ok(const char *mime);
/*
 * A tool result's content as text: its text blocks joined, other blocks
 * as their JSON, structuredContent if there is nothing else.  NULL with
 * err set for an image or audio block (providers take tool results as
 * text here).
 */
char		*llm_tool_result_text(const json_t *block, char *err,
		    size_t errlen);
/* A tool's inputSchema, or an empty object schema. */
json_t		*llm_tool_schema(const json_t *tool);
/*
 * MCP's tools as OpenAI's function tools, which Ollama takes too; NULL
 * with err set if one has no name.
 */
json_t		*llm_function_tools(const json_t *tools, char *err,
		    size_t errlen);
/* Take the token counts in o's members in and out (either may be absent). */
void		 llm_answer_usage(struct llm_answer *, const json_t *o,
		    const char *in, const char *out);
/* The toolChoice mode: "auto", "none" or "required" (default auto). */
const char	*llm_tool_choice(const json_t *params);

/*
 * The model for a request: the first hint (in order) that is a substring
 * of a model the provider offers, among those the best by the
 * priorities; without a matching hint the best by the priorities, if
 * any is given; else the provider's model.
 */
const char	*llm_choose_model(const struct llm_conf *, const json_t *params);

/* What stands for the key where a provider repeats it. */
#define LLM_KEY_MASK	"[api key]"
/*
 * Text a provider sent, as one printable line of at most max of its
 * bytes (and "..." if there were more), with every occurrence of the
 * secret (if not NULL) replaced by LLM_KEY_MASK first: a key cut short
 * would no longer be found.
 */
void		 llm_provider_text(const char *secret, char *out,
		    size_t outlen, const char *s, size_t len, size_t max);
/*
 * A provider's error body and status as one line: the vendor's message
 * and type, whatever its shape (OpenAI, Anthropic, Ollama), the secret
 * masked.
 */
void		 llm_error_text(long status, const char *body, size_t len,
		    const char *secret, char *out, size_t outlen);
/* The outcome an HTTP status means. */
enum llm_outcome llm_status_outcome(long status);

/* One vendor's API. */
struct llm_vendor {
	const char	*name;
	const char	*path;		/* after the url */
	int		 ndjson;	/* streams lines of JSON, not SSE */
	/* The request body, or NULL with err (the request is refused). */
	json_t		*(*request)(const json_t *params,
			    const struct llm_req_opts *, char *, size_t);
	/* A whole JSON answer. */
	int		 (*body)(struct llm_answer *, const json_t *, char *,
			    size_t);
	/* One stream event (event is NULL for an NDJSON line). */
	int		 (*event)(struct llm_answer *, const char *event,
			    const char *data, size_t, char *, size_t);
};

extern const struct llm_vendor llm_openai;
extern const struct llm_vendor llm_anthropic;
extern const struct llm_vendor llm_ollama;
const struct llm_vendor *llm_vendor(enum llm_provider);

#endif
