/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <string.h>

#include <event2/buffer.h>

#include "jsonrpc.h"

/* Is this span a valid request id? */
int
jrpc_id_valid(const char *p, struct jspan id)
{
	enum jtype	t = jscan_type(p, id);

	return (t == JT_STRING || t == JT_NUMBER);
}

/* Record a known member; fail on a duplicate. */
static int
jrpc_take(struct jspan *slot, struct jspan value, const char **why)
{
	if (slot->len != 0) {
		*why = "duplicate member in message";
		return (-1);
	}
	*slot = value;
	return (0);
}

/* Check the shape of an error object. */
static int
jrpc_check_error(const char *p, struct jspan error, const char **why)
{
	struct jspan	code, message;
	int64_t		v;

	if (jscan_type(p, error) != JT_OBJECT ||
	    jscan_member(p, error, "code", &code) != 0 ||
	    jscan_int64(p, code, &v) != 0 ||
	    jscan_member(p, error, "message", &message) != 0 ||
	    jscan_type(p, message) != JT_STRING) {
		*why = "error must be an object with integer code and string "
		    "message";
		return (-1);
	}
	return (0);
}

/* Scan and classify a message. */
int
jrpc_scan(const char *p, size_t n, struct jrpc *m, const char **why)
{
	struct jiter	it;
	struct jspan	key, value, version;
	size_t		where;
	ssize_t		len;

	memset(m, 0, sizeof *m);
	memset(&version, 0, sizeof version);
	m->p = p;
	m->n = n;
	if (jscan_validate(p, n, &m->msg, why, &where) != 0)
		return (JRPC_PARSE_ERROR);
	if (jscan_type(p, m->msg) == JT_ARRAY) {
		*why = "batches are not supported";
		return (JRPC_INVALID_REQUEST);
	}
	if (jscan_object(p, m->msg, &it) != 0) {
		*why = "message is not a JSON object";
		return (JRPC_INVALID_REQUEST);
	}
	while (jscan_next_member(&it, &key, &value)) {
		if (jscan_string_equals(p, key, "jsonrpc")) {
			if (jrpc_take(&version, value, why) != 0)
				goto invalid;
		} else if (jscan_string_equals(p, key, "id")) {
			if (jrpc_take(&m->id, value, why) != 0)
				goto invalid;
		} else if (jscan_string_equals(p, key, "method")) {
			if (jrpc_take(&m->method, value, why) != 0)
				goto invalid;
		} else if (jscan_string_equals(p, key, "params")) {
			if (jrpc_take(&m->params, value, why) != 0)
				goto invalid;
		} else if (jscan_string_equals(p, key, "result")) {
			if (jrpc_take(&m->result, value, why) != 0)
				goto invalid;
		} else if (jscan_string_equals(p, key, "error")) {
			if (jrpc_take(&m->error, value, why) != 0)
				goto invalid;
		}
	}
	if (m->id.len != 0 && !jrpc_id_valid(p, m->id) &&
	    !(jscan_type(p, m->id) == JT_NULL && m->error.len != 0)) {
		*why = "id must be a string or a number";
		m->id.len = 0;
		goto invalid;
	}
	if (m->id.len > JRPC_ID_MAX) {
		*why = "id is longer than 1024 bytes";
		m->id.len = 0;
		goto invalid;
	}
	if (!jscan_string_equals(p, version, "2.0")) {
		*why = "jsonrpc must be \"2.0\"";
		goto invalid;
	}

	if (m->method.len != 0) {
		if (jscan_type(p, m->method) != JT_STRING) {
			*why = "method must be a string";
			goto invalid;
		}
		len = jscan_string(p, m->method, m->method_name,
		    sizeof m->method_name);
		if (len <= 0 || memchr(m->method_name, '\0', len) != NULL) {
			*why = "method name is empty or too long";
			goto invalid;
		}
		m->method_id = mcp_method_lookup(m->method_name, (size_t)len);
		if (m->result.len != 0 || m->error.len != 0) {
			*why = "a request cannot carry result or error";
			goto invalid;
		}
		if (m->params.len != 0 &&
		    jscan_type(p, m->params) != JT_OBJECT) {
			*why = "params must be an object";
			goto invalid;
		}
		m->kind = m->id.len != 0 ? JRPC_REQUEST : JRPC_NOTIFICATION;
		return (0);
	}
	if (m->result.len != 0 && m->error.len != 0) {
		*why = "a response cannot carry both result and error";
		goto invalid;
	}
	if (m->id.len == 0) {
		*why = m->result.len != 0 || m->error.len != 0 ?
		    "response without id" : "message has no method";
		goto invalid;
	}
	if (m->result.len != 0) {
		m->kind = JRPC_RESULT;
		return (0);
	}
	if (m->error.len != 0) {
		if (jrpc_check_error(p, m->error, why) != 0)
			goto invalid;
		m->kind = JRPC_ERROR;
		return (0);
	}
	*why = "message has no method, result or error";

invalid:
	/* Only a usable id goes into the error; bail-outs skip the check. */
	if (m->id.len != 0 && !jrpc_id_valid(p, m->id))
		m->id.len = 0;
	return (JRPC_INVALID_REQUEST);
}

/* Append an error response. */
void
jrpc_add_error(struct evbuffer *out, const char *id, size_t idlen, int code,
    const char *message, const char *data)
{
	evbuffer_add(out, "{\"jsonrpc\":\"2.0\",\"id\":", 22);
	if (id != NULL && idlen != 0)
		evbuffer_add(out, id, idlen);
	else
		evbuffer_add(out, "null", 4);
	evbuffer_add_printf(out, ",\"error\":{\"code\":%d,\"message\":", code);
	jscan_add_string(out, message, strlen(message));
	if (data != NULL) {
		evbuffer_add(out, ",\"data\":", 8);
		evbuffer_add(out, data, strlen(data));
	}
	evbuffer_add(out, "}}", 2);
}

/* Append a result response. */
void
jrpc_add_result(struct evbuffer *out, const char *id, size_t idlen,
    const char *result, size_t resultlen)
{
	evbuffer_add(out, "{\"jsonrpc\":\"2.0\",\"id\":", 22);
	evbuffer_add(out, id, idlen);
	evbuffer_add(out, ",\"result\":", 10);
	evbuffer_add(out, result, resultlen);
	evbuffer_add(out, "}", 1);
}
