/* SPDX-License-Identifier: ISC */
/*
 * mcp-demo-server's JSON-RPC messages: checking and dispatching what the
 * client sends, and building responses, errors, notifications and pages
 * of list results.
 */

#define _GNU_SOURCE

#include <sys/types.h>
#include <sys/queue.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "demo.h"

/* A request method. */
struct method {
	const char	*name;
	void		(*fn)(json_t *, json_t *);
};

/* Return the string value if v is a string without NUL bytes. */
const char *
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
int
valid_id(json_t *id)
{
	return (json_is_string(id) || json_is_integer(id));
}

/* Send a successful response. Consumes result. */
void
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
void __attribute__((format(printf, 4, 5)))
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
void
notify(const char *method, json_t *params)
{
	json_t	*msg;

	msg = json_pack("{s:s, s:s}", "jsonrpc", "2.0", "method", method);
	if (msg != NULL && params != NULL)
		json_object_set(msg, "params", params);
	json_decref(params);
	send_json(msg);
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
void
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
void
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
