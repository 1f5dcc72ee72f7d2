/* SPDX-License-Identifier: ISC */
/*
 * The JSON-RPC 2.0 envelope: classify a message and locate its id, method,
 * params, result and error by span (see json_scan.h), strictly.  Plus the
 * builders for responses and errors the gateway writes itself.
 */
#ifndef MCPS_JSONRPC_H
#define MCPS_JSONRPC_H

#include <stddef.h>

#include "json_scan.h"
#include "mcp_method.h"

struct evbuffer;

/* JSON-RPC error codes. */
#define JRPC_PARSE_ERROR	-32700
#define JRPC_INVALID_REQUEST	-32600
#define JRPC_METHOD_NOT_FOUND	-32601
#define JRPC_INVALID_PARAMS	-32602
#define JRPC_INTERNAL_ERROR	-32603
/* MCP and gateway error codes (documented in mcp-supervisord(8)). */
#define MCP_CONNECTION_CLOSED	-32000	/* upstream unavailable or gone */
#define MCP_REQUEST_TIMEOUT	-32001	/* no answer within the timeout */
#define MCP_RESOURCE_NOT_FOUND	-32002	/* no upstream has that resource */
#define MCP_OVERLOADED		-32003	/* a gateway limit was reached */
/* 2026-07-28: the range -32020 to -32099 is the specification's. */
#define MCP_HEADER_MISMATCH	-32020	/* headers disagree with the body */
#define MCP_MISSING_CAPABILITY	-32021	/* the client did not declare it */
#define MCP_UNSUPPORTED_VERSION	-32022	/* data: supported, requested */
#define MCP_INSUFFICIENT_SCOPE	-32023	/* OAuth: data: error, scope */
#define MCP_URL_ELICITATION_REQUIRED -32042 /* 2025-11-25: data: elicitations */

#define JRPC_METHOD_MAX		128
/* The longest id or progress token kept, as JSON text: each request in
 * flight keeps a copy of both, so a peer must not choose their size. */
#define JRPC_ID_MAX		1024

enum jrpc_kind {
	JRPC_REQUEST = 1,
	JRPC_NOTIFICATION,
	JRPC_RESULT,
	JRPC_ERROR
};

/* A scanned message; spans index the borrowed text p. */
struct jrpc {
	const char	*p;
	size_t		 n;
	enum jrpc_kind	 kind;
	struct jspan	 msg;		/* the whole object */
	struct jspan	 id;		/* absent for notifications */
	struct jspan	 method;
	struct jspan	 params;
	struct jspan	 result;
	struct jspan	 error;
	char		 method_name[JRPC_METHOD_MAX];
	enum mcp_method	 method_id;	/* method_name's row; MCPM_OTHER */
};

/*
 * Scan and classify a message.  Returns 0, or JRPC_PARSE_ERROR if the text
 * is not JSON, or JRPC_INVALID_REQUEST if it is JSON but not a valid
 * JSON-RPC 2.0 message; *why says why.  On JRPC_INVALID_REQUEST the id span
 * is set if a usable id was found, so the error can carry it.
 */
int	jrpc_scan(const char *p, size_t n, struct jrpc *, const char **why);

/* Is this span a valid request id (a string or a number)? */
int	jrpc_id_valid(const char *p, struct jspan);

/*
 * Append an error response.  id/idlen are the raw id text (NULL or 0 for a
 * null id); data is raw JSON text or NULL.
 */
void	jrpc_add_error(struct evbuffer *, const char *id, size_t idlen,
	    int code, const char *message, const char *data);
/* Append a result response; result is raw JSON text. */
void	jrpc_add_result(struct evbuffer *, const char *id, size_t idlen,
	    const char *result, size_t resultlen);

#endif
