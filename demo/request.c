/* SPDX-License-Identifier: ISC */
/*
 * mcp-demo-server's requests in progress (struct req): those waiting on
 * a timer or on the client's answer to a request of ours, and sending
 * those requests to the client.
 */

#define _GNU_SOURCE

#include <sys/types.h>
#include <sys/queue.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <event2/event.h>
#include <jansson.h>

#include "demo.h"

struct reqs		 reqs = TAILQ_HEAD_INITIALIZER(reqs);
u_int			 nreqs;
static json_int_t	 next_out_id = 1;

/* Create an in-progress request. The caller must answer or free it. */
struct req *
req_new(json_t *id)
{
	struct req	*r;

	if ((r = calloc(1, sizeof *r)) == NULL)
		fatalx("out of memory");
	r->id = json_incref(id);
	TAILQ_INSERT_TAIL(&reqs, r, entry);
	nreqs++;
	return (r);
}

/* Forget an in-progress request and free it, without answering. */
void
req_free(struct req *r)
{
	TAILQ_REMOVE(&reqs, r, entry);
	nreqs--;
	if (r->timer != NULL)
		event_free(r->timer);
	json_decref(r->id);
	json_decref(r->token);
	free(r->elicitation);
	free(r);
}

/* Answer an in-progress request and free it. Consumes result. */
void
req_done(struct req *r, json_t *result)
{
	reply_result(r->id, result);
	req_free(r);
}

/* Find an in-progress request by the client's id. */
struct req *
req_find(json_t *id)
{
	struct req	*r;

	TAILQ_FOREACH(r, &reqs, entry) {
		if (json_equal(r->id, id))
			return (r);
	}
	return (NULL);
}

/* Find an in-progress request by the id of our request to the client. */
struct req *
req_find_out(json_int_t out_id)
{
	struct req	*r;

	TAILQ_FOREACH(r, &reqs, entry) {
		if (r->out_id != 0 && r->out_id == out_id)
			return (r);
	}
	return (NULL);
}

/* Send a request to the client for r. Consumes params (may be NULL). */
void
client_request(struct req *r, const char *method, json_t *params,
    answer_cb cb)
{
	json_t	*msg;

	r->out_id = next_out_id++;
	r->cb = cb;

	msg = json_pack("{s:s, s:I, s:s}", "jsonrpc", "2.0", "id",
	    r->out_id, "method", method);
	if (msg != NULL && params != NULL)
		json_object_set(msg, "params", params);
	json_decref(params);
	send_json(msg);
}

/* Get the message of an error answer from the client, with data.reason
 * if it gives one (a static buffer). */
const char *
error_message(json_t *error)
{
	static char	 buf[1024];
	const char	*s, *reason;

	s = json_cstr(json_object_get(error, "message"));
	if (s == NULL)
		s = "client returned an error";
	reason = json_cstr(json_object_get(json_object_get(error, "data"),
	    "reason"));
	if (reason == NULL)
		return (s);
	snprintf(buf, sizeof buf, "%s (%s)", s, reason);
	return (buf);
}
