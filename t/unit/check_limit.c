/* SPDX-License-Identifier: ISC */
/*
 * An upstream's traffic policy (supervisor/limit.c, breaker.c): calls
 * over max_concurrent wait in a bounded queue, in order, for at most
 * queue_timeout, and leave it when cancelled or their session ends; the
 * circuit breaker opens after breaker_failures in a row, fails calls
 * fast, lets one probe through after the cool-down and closes on its
 * answer; what /metrics, /readyz and mcpctl status say of both.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "frame.h"
#include "supervisor.h"

#include "sup_check.h"

static const char conf_limit[] = SUP_BASE
    "request_timeout = 20;\n"
    "servers = (\n"
    "  { name = \"a\"; transport = \"stdio\"; command = [ \"true\" ];\n"
    "    max_concurrent = 2; max_queued = 2; queue_timeout = 5;\n"
    "    required = true;\n"
    "    breaker_failures = 3; breaker_window = 60;\n"
    "    breaker_cooldown = 30; },\n"
    "  { name = \"d\"; transport = \"stdio\"; command = [ \"true\" ]; }\n"
    ");\n";

static const char catalog_echo[] = "{\"tools\":[{\"name\":\"echo\","
    "\"inputSchema\":{\"type\":\"object\"}}]}";

static const char catalog_echo_r[] = "{\"tools\":[{\"name\":\"echo\","
    "\"inputSchema\":{\"type\":\"object\"}}],\"resources\":[{\"uri\":"
    "\"mem://r\",\"name\":\"r\"}]}";

static void
setup(void)
{
	sup_catalog("a", catalog_echo_r);
	sup_catalog("d", catalog_echo);
	sup_start(conf_limit);
}

static void
teardown(void)
{
	sup_stop();
}

/* Call <up>__echo with an id. */
static struct sup_resp *
call(struct sup_client *cl, const char *up, int id)
{
	return (sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"%s__echo\",\"arguments\":"
	    "{}}}", id, up));
}

/* The id of a request frame. */
static long long
frame_id(const struct sup_frame *f)
{
	json_t		*o = sup_frame_json(f);
	long long	 id = sup_jint(o, "id");

	json_decref(o);
	return (id);
}

/* An upstream's status member (mcpctl status), as an integer. */
static long long
status_int(const char *up, const char *path)
{
	json_t		*o = upstream_status_json(upstream_find(up));
	long long	 v = sup_jint(o, path);

	json_decref(o);
	return (v);
}

static const char *
status_str(const char *up, const char *path)
{
	static char	 buf[64];
	json_t		*o = upstream_status_json(upstream_find(up));

	snprintf(buf, sizeof buf, "%s", sup_jstr(o, path) != NULL ?
	    sup_jstr(o, path) : "(none)");
	json_decref(o);
	return (buf);
}

/* A line of /metrics is there. */
static int
metrics_has(const char *line)
{
	struct sup_resp	*r = sup_http("GET", "/metrics", NULL, NULL);

	return (r->status == 200 && strstr(sup_body(r), line) != NULL);
}

/* Over max_concurrent, calls wait in order; over max_queued, refused. */
START_TEST(test_cap_and_queue)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_worker	*w = sup_worker("a");
	struct sup_resp		*r[5];
	struct sup_frame	*f1, *f2, *f;
	json_t			*a;
	int			 i;

	for (i = 0; i < 5; i++)
		r[i] = call(cl, "a", i + 1);
	/* Two sent, two waiting, the fifth refused. */
	ck_assert_uint_eq(sup_count(w, MSG_REQUEST), 2);
	ck_assert(!r[2]->done && !r[3]->done);
	a = sup_answer(r[4]);
	ck_assert_error(a, -32003);
	ck_assert_jstr(a, "error.data.reason", "queue_full");
	ck_assert_jstr(a, "error.data.upstream", "a");
	ck_assert_jint(a, "error.data.maxConcurrent", 2);
	ck_assert_jint(a, "error.data.retryAfter", 1);
	ck_assert_int_eq(status_int("a", "limit.in_flight"), 2);
	ck_assert_int_eq(status_int("a", "limit.queued"), 2);
	ck_assert_int_eq(status_int("a", "limit.queue_full"), 1);
	ck_assert(metrics_has("mcp_supervisor_upstream_calls_queued"
	    "{upstream=\"a\"} 2\n"));
	ck_assert(metrics_has("mcp_supervisor_upstream_calls_shed_total"
	    "{upstream=\"a\",reason=\"queue_full\"} 1\n"));
	/* An upstream without a cap takes what comes. */
	for (i = 0; i < 5; i++)
		call(cl, "d", 10 + i);
	ck_assert_uint_eq(sup_count(sup_worker("d"), MSG_REQUEST), 5);
	/* A slot freed goes to the oldest waiter. */
	f1 = sup_take(w, MSG_REQUEST);
	f2 = sup_take(w, MSG_REQUEST);
	ck_assert_int_eq(frame_id(f1), 1);
	ck_assert_int_eq(frame_id(f2), 2);
	sup_reply(w, f2, "{\"content\":[]}");
	ck_assert_result(sup_answer(r[1]));
	ck_assert_ptr_nonnull(f = sup_take(w, MSG_REQUEST));
	ck_assert_int_eq(frame_id(f), 3);
	ck_assert_ptr_null(sup_take(w, MSG_REQUEST));
	sup_reply(w, f, "{\"content\":[]}");
	ck_assert_result(sup_answer(r[2]));
	ck_assert_ptr_nonnull(f = sup_take(w, MSG_REQUEST));
	ck_assert_int_eq(frame_id(f), 4);
	sup_reply(w, f, "{\"content\":[]}");
	sup_reply(w, f1, "{\"content\":[]}");
	ck_assert_result(sup_answer(r[0]));
	ck_assert_result(sup_answer(r[3]));
	ck_assert_int_eq(status_int("a", "limit.in_flight"), 0);
	ck_assert_int_eq(status_int("a", "limit.queued"), 0);
	ck_assert_int_eq(status_int("a", "limit.waited"), 2);
	while ((f = sup_take(sup_worker("d"), MSG_REQUEST)) != NULL)
		sup_reply(sup_worker("d"), f, "{\"content\":[]}");
}
END_TEST

/* A call waits at most queue_timeout, and never reaches the upstream. */
START_TEST(test_queue_timeout)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_worker	*w = sup_worker("a");
	struct sup_resp		*r1, *r2, *r3;
	json_t			*a;

	r1 = call(cl, "a", 1);
	r2 = call(cl, "a", 2);
	r3 = call(cl, "a", 3);
	sup_advance(5);
	ck_assert(!r1->done && !r2->done);
	a = sup_answer(r3);
	ck_assert_error(a, -32003);
	ck_assert_jstr(a, "error.data.reason", "queue_timeout");
	ck_assert_ptr_nonnull(strstr(sup_jstr(a, "error.message"),
	    "no slot came free within 5 s"));
	ck_assert_int_eq(status_int("a", "limit.queue_timeouts"), 1);
	ck_assert_int_eq(status_int("a", "limit.queued"), 0);
	ck_assert_int_eq(status_int("a", "limit.abandoned"), 0);
	/* A slot freed later sends nothing more. */
	sup_reply(w, sup_take(w, MSG_REQUEST), "{\"content\":[]}");
	sup_reply(w, sup_take(w, MSG_REQUEST), "{\"content\":[]}");
	ck_assert_uint_eq(sup_count(w, MSG_REQUEST), 2);
	ck_assert_uint_eq(sup_count(w, MSG_CANCEL), 0);
	/* Sent, a call has request_timeout from then, not queue_timeout. */
	r1 = call(cl, "a", 4);
	sup_advance(5);
	ck_assert(!r1->done);
	sup_reply(w, sup_take(w, MSG_REQUEST), "{\"content\":[]}");
	ck_assert_result(sup_answer(r1));
}
END_TEST

/* A waiter cancelled by its client frees its place in the queue. */
START_TEST(test_queue_cancel)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_worker	*w = sup_worker("a");
	struct sup_resp		*r[5], *n;
	struct sup_frame	*f;
	int			 i;

	for (i = 0; i < 4; i++)
		r[i] = call(cl, "a", i + 1);
	n = sup_post(cl, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/cancelled\",\"params\":{\"requestId\":3}}");
	ck_assert_int_eq(n->status, 202);
	ck_assert(r[2]->done);
	ck_assert_ptr_null(sup_answer(r[2]));
	ck_assert_int_eq(status_int("a", "limit.queued"), 1);
	ck_assert_int_eq(status_int("a", "limit.abandoned"), 1);
	/* Its place is free: another call waits rather than being refused. */
	r[4] = call(cl, "a", 5);
	ck_assert(!r[4]->done);
	/* The worker never heard of the cancelled one. */
	ck_assert_uint_eq(sup_count(w, MSG_CANCEL), 0);
	sup_reply(w, sup_take(w, MSG_REQUEST), "{\"content\":[]}");
	ck_assert_ptr_nonnull(f = sup_take(w, MSG_REQUEST));
	ck_assert_int_eq(frame_id(f), 2);
	ck_assert_ptr_nonnull(f = sup_take(w, MSG_REQUEST));
	ck_assert_int_eq(frame_id(f), 4);
	sup_reply(w, f, "{\"content\":[]}");
	ck_assert_ptr_nonnull(f = sup_take(w, MSG_REQUEST));
	ck_assert_int_eq(frame_id(f), 5);
	sup_reply(w, f, "{\"content\":[]}");
	ck_assert_result(sup_answer(r[4]));
	ck_assert_uint_eq(sup_count(w, MSG_REQUEST), 4);
}
END_TEST

/* A session that ends takes its waiters out of the queue. */
START_TEST(test_queue_session_end)
{
	struct sup_client	*c1 = sup_session(NULL, NULL);
	struct sup_client	*c2 = sup_session(NULL, NULL);
	struct sup_worker	*w = sup_worker("a");
	struct sup_resp		*r;

	call(c1, "a", 1);
	call(c1, "a", 2);
	call(c2, "a", 3);
	call(c2, "a", 4);
	ck_assert_int_eq(status_int("a", "limit.queued"), 2);
	ck_assert_int_eq(sup_delete(c2)->status, 200);
	ck_assert_int_eq(status_int("a", "limit.queued"), 0);
	ck_assert_int_eq(status_int("a", "limit.abandoned"), 2);
	r = call(c1, "a", 5);
	ck_assert(!r->done);
	ck_assert_int_eq(status_int("a", "limit.queued"), 1);
	sup_reply(w, sup_take(w, MSG_REQUEST), "{\"content\":[]}");
	sup_reply(w, sup_take(w, MSG_REQUEST), "{\"content\":[]}");
	sup_reply(w, sup_take(w, MSG_REQUEST), "{\"content\":[]}");
	ck_assert_result(sup_answer(r));
	ck_assert_ptr_null(sup_take(w, MSG_REQUEST));
}
END_TEST

/* A waiter whose client hangs up (its answer has nowhere to go) leaves
 * the queue. */
START_TEST(test_queue_client_gone)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_worker	*w = sup_worker("a");
	struct sup_resp		*r;

	call(cl, "a", 1);
	call(cl, "a", 2);
	/* completion/complete is answered with one JSON body: no stream is
	 * kept for it to be resumed. */
	r = sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":"
	    "\"completion/complete\",\"params\":{\"ref\":{\"type\":"
	    "\"ref/resource\",\"uri\":\"mem://r\"},\"argument\":{\"name\":"
	    "\"x\",\"value\":\"\"}}}");
	ck_assert(!r->done);
	ck_assert_int_eq(status_int("a", "limit.queued"), 1);
	sup_hangup(r->conn);
	sup_run();
	ck_assert_int_eq(status_int("a", "limit.queued"), 0);
	ck_assert_int_eq(status_int("a", "limit.abandoned"), 1);
	sup_reply(w, sup_take(w, MSG_REQUEST), "{\"content\":[]}");
	sup_reply(w, sup_take(w, MSG_REQUEST), "{\"content\":[]}");
	ck_assert_ptr_null(sup_take(w, MSG_REQUEST));
	ck_assert_int_eq(status_int("a", "limit.in_flight"), 0);
}
END_TEST

/* An upstream stopped by the operator fails its waiters (not counted as
 * abandoned: they were answered). */
START_TEST(test_queue_upstream_stop)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_resp		*r;
	char			 err[256];

	call(cl, "a", 1);
	call(cl, "a", 2);
	r = call(cl, "a", 3);
	ck_assert_int_eq(upstream_stop(upstream_find("a"), err, sizeof err),
	    0);
	sup_run();
	ck_assert_error(sup_answer(r), -32000);
	ck_assert_int_eq(status_int("a", "limit.queued"), 0);
	ck_assert_int_eq(status_int("a", "limit.in_flight"), 0);
	ck_assert_int_eq(status_int("a", "limit.abandoned"), 0);
}
END_TEST

/* Calls that came while their upstream started are held to max_queued
 * once it is ready: two go, two wait, the rest are refused. */
START_TEST(test_queue_after_start)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_worker	*w = sup_restart_manual("a");
	struct sup_resp		*r[6];
	int			 i;

	for (i = 0; i < 6; i++)
		r[i] = call(cl, "a", i + 1);
	sup_ready(w, catalog_echo_r, "{\"state\":\"ready\"}");
	ck_assert_uint_eq(sup_count(w, MSG_REQUEST), 2);
	ck_assert_int_eq(status_int("a", "limit.queued"), 2);
	for (i = 0; i < 4; i++)
		ck_assert(!r[i]->done);
	for (i = 4; i < 6; i++) {
		ck_assert_error(sup_answer(r[i]), -32003);
		ck_assert_jstr(sup_answer(r[i]), "error.data.reason",
		    "queue_full");
	}
	while (sup_take(w, MSG_REQUEST) != NULL)
		;
}
END_TEST

/* A slot freed is the oldest waiter's: until it is given, a full queue
 * still refuses (the slot is not a new call's). */
START_TEST(test_queue_full_free_slot)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_worker	*w = sup_worker("a");
	struct refusal		 rf;
	char			 text[1024];
	int			 i;

	for (i = 0; i < 4; i++)
		call(cl, "a", i + 1);
	ck_assert_int_eq(status_int("a", "limit.queued"), 2);
	snprintf(text, sizeof text, "%s", conf_limit);
	memcpy(strstr(text, "max_concurrent = 2"), "max_concurrent = 3", 18);
	json_decref(sup_reloadq(text));
	/* The kick is for the next turn of the loop: not run yet. */
	ck_assert_int_eq(status_int("a", "limit.queued"), 2);
	ck_assert_int_eq(limit_admit(upstream_find("a"), &rf), -1);
	ck_assert_ptr_nonnull(strstr(rf.data, "queue_full"));
	sup_run();
	ck_assert_int_eq(status_int("a", "limit.queued"), 1);
	ck_assert_int_eq(limit_admit(upstream_find("a"), &rf), LIMIT_CALL);
	while (sup_take(w, MSG_REQUEST) != NULL)
		;
}
END_TEST

/* A reload that raises max_concurrent sends waiters, restarting nothing. */
START_TEST(test_reload_cap)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_worker	*w = sup_worker("a");
	json_t			*rep;
	char			 text[1024];

	call(cl, "a", 1);
	call(cl, "a", 2);
	call(cl, "a", 3);
	ck_assert_uint_eq(sup_count(w, MSG_REQUEST), 2);
	snprintf(text, sizeof text, "%s", conf_limit);
	memcpy(strstr(text, "max_concurrent = 2"), "max_concurrent = 3", 18);
	rep = sup_reload(text);
	ck_assert_uint_eq(sup_jlen(rep, "changed"), 0);
	json_decref(rep);
	sup_run();
	ck_assert_ptr_eq(sup_worker("a"), w);
	ck_assert_uint_eq(sup_count(w, MSG_REQUEST), 3);
	ck_assert_int_eq(status_int("a", "limit.max_concurrent"), 3);
	while (sup_take(w, MSG_REQUEST) != NULL)
		;
}
END_TEST

/* Fail the oldest request to "a" as its worker does when the upstream's
 * connection fails. */
static void
fail_call(struct sup_worker *w, int code)
{
	struct sup_frame	*f;

	ck_assert_ptr_nonnull(f = sup_take(w, MSG_REQUEST));
	sup_send(w, MSG_FAIL, 0, f->session, f->tag, "{\"code\":%d,"
	    "\"message\":\"connection reset\"}", code);
}

/* Failures in a row open it; it fails fast, then a probe closes it. */
START_TEST(test_breaker_cycle)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_worker	*w = sup_worker("a");
	struct sup_resp		*r, *r2;
	json_t			*a;

	/* Two timeouts and a transport failure. */
	call(cl, "a", 1);
	call(cl, "a", 2);
	sup_advance(20);
	ck_assert_str_eq(status_str("a", "breaker.state"), "closed");
	ck_assert_int_eq(status_int("a", "breaker.failures"), 2);
	sup_forget(w);
	r = call(cl, "a", 3);
	/* A waiter when it opens fails with it. */
	call(cl, "a", 4);
	r2 = call(cl, "a", 5);
	ck_assert_int_eq(status_int("a", "limit.queued"), 1);
	fail_call(w, -32000);
	ck_assert_error(sup_answer(r), -32000);
	ck_assert_str_eq(status_str("a", "breaker.state"), "open");
	a = sup_answer(r2);
	ck_assert_error(a, -32000);
	ck_assert_jstr(a, "error.data.reason", "circuit_open");
	/* Open: calls fail fast with when to retry, the worker sees none. */
	sup_forget(w);
	a = sup_answer(call(cl, "a", 6));
	ck_assert_error(a, -32000);
	ck_assert_jstr(a, "error.data.reason", "circuit_open");
	ck_assert_jstr(a, "error.data.breaker", "open");
	ck_assert_jint(a, "error.data.retryAfter", 30);
	ck_assert_ptr_nonnull(strstr(sup_jstr(a, "error.message"),
	    "circuit breaker open after 3 failures in a row (last: "
	    "connection reset)"));
	ck_assert_uint_eq(sup_count(w, MSG_REQUEST), 0);
	/* Another upstream is not concerned. */
	call(cl, "d", 7);
	ck_assert_uint_eq(sup_count(sup_worker("d"), MSG_REQUEST), 1);
	sup_reply(sup_worker("d"), sup_take(sup_worker("d"), MSG_REQUEST),
	    "{\"content\":[]}");
	/* A required upstream's open breaker: not ready. */
	ck_assert_int_eq(sup_http("GET", "/readyz", NULL, NULL)->status, 503);
	ck_assert(metrics_has("mcp_supervisor_upstream_breaker_state"
	    "{upstream=\"a\",state=\"open\"} 1\n"));
	ck_assert(metrics_has("mcp_supervisor_upstream_breaker_opened_total"
	    "{upstream=\"a\"} 1\n"));
	ck_assert(metrics_has("mcp_supervisor_upstream_calls_shed_total"
	    "{upstream=\"a\",reason=\"circuit_open\"} 2\n"));
	/* The cool-down: half-open, ready again, one probe goes through. */
	sup_advance(30);
	ck_assert_str_eq(status_str("a", "breaker.state"), "half-open");
	ck_assert_int_eq(sup_http("GET", "/readyz", NULL, NULL)->status, 200);
	r = call(cl, "a", 8);
	ck_assert_uint_eq(sup_count(w, MSG_REQUEST), 1);
	a = sup_answer(call(cl, "a", 9));
	ck_assert_error(a, -32000);
	ck_assert_jstr(a, "error.data.breaker", "half-open");
	ck_assert_uint_eq(sup_count(w, MSG_REQUEST), 1);
	/* Its answer, even an error the upstream gives, closes it. */
	sup_reply_error(w, sup_take(w, MSG_REQUEST), -32602, "bad");
	ck_assert_error(sup_answer(r), -32602);
	ck_assert_str_eq(status_str("a", "breaker.state"), "closed");
	r = call(cl, "a", 10);
	sup_reply(w, sup_take(w, MSG_REQUEST), "{\"content\":[]}");
	ck_assert_result(sup_answer(r));
	ck_assert_int_eq(status_int("a", "breaker.opened"), 1);
}
END_TEST

/* A probe that fails opens it again; one cancelled lets another probe. */
START_TEST(test_breaker_probe)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_worker	*w = sup_worker("a");
	struct sup_resp		*r;
	int			 i;

	for (i = 0; i < 3; i++) {
		call(cl, "a", i + 1);
		fail_call(w, -32000);
	}
	ck_assert_str_eq(status_str("a", "breaker.state"), "open");
	sup_advance(30);
	/* The probe is cancelled: the next call is the probe. */
	call(cl, "a", 10);
	ck_assert_int_eq(sup_post(cl, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/cancelled\",\"params\":{\"requestId\":10}}")->
	    status, 202);
	ck_assert_str_eq(status_str("a", "breaker.state"), "half-open");
	sup_forget(w);
	r = call(cl, "a", 11);
	ck_assert(!r->done);
	ck_assert_uint_eq(sup_count(w, MSG_REQUEST), 1);
	/* It times out: open again for another cool-down. */
	sup_advance(20);
	ck_assert_error(sup_answer(r), -32001);
	ck_assert_str_eq(status_str("a", "breaker.state"), "open");
	ck_assert_int_eq(status_int("a", "breaker.opened"), 2);
	ck_assert_error(sup_answer(call(cl, "a", 12)), -32000);
	sup_advance(30);
	sup_forget(w);
	r = call(cl, "a", 13);
	sup_reply(w, sup_take(w, MSG_REQUEST), "{\"content\":[]}");
	ck_assert_result(sup_answer(r));
	ck_assert_str_eq(status_str("a", "breaker.state"), "closed");
}
END_TEST

/* Reload "a" with one setting's text replaced by another of its length. */
static void
reload_with(const char *from, const char *to)
{
	char	 text[1024];
	json_t	*rep;

	snprintf(text, sizeof text, "%s", conf_limit);
	ck_assert_uint_eq(strlen(from), strlen(to));
	memcpy(strstr(text, from), to, strlen(to));
	rep = sup_reload(text);
	ck_assert_uint_eq(sup_jlen(rep, "changed"), 0);
	json_decref(rep);
	sup_run();
}

/* A probe still out when its breaker closed is an ordinary call after:
 * its end does not let a second probe through a later half-open. */
START_TEST(test_breaker_stale_probe)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_worker	*w = sup_worker("a");
	int			 i;

	for (i = 0; i < 3; i++) {
		call(cl, "a", i + 1);
		fail_call(w, -32000);
	}
	sup_advance(30);
	call(cl, "a", 10);		/* the probe */
	ck_assert_ptr_nonnull(sup_take(w, MSG_REQUEST));
	/* A reload closes the breaker while the probe is out. */
	reload_with("breaker_failures = 3", "breaker_failures = 0");
	ck_assert_str_eq(status_str("a", "breaker.state"), "closed");
	reload_with("breaker_cooldown = 30", "breaker_cooldown =  5");
	for (i = 0; i < 3; i++) {
		call(cl, "a", 20 + i);
		fail_call(w, -32000);
	}
	ck_assert_str_eq(status_str("a", "breaker.state"), "open");
	sup_advance(5);
	call(cl, "a", 30);		/* this half-open's probe */
	ck_assert_ptr_nonnull(sup_take(w, MSG_REQUEST));
	/* The old probe is cancelled: the probe of now is still out. */
	ck_assert_int_eq(sup_post(cl, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/cancelled\",\"params\":{\"requestId\":10}}")->
	    status, 202);
	sup_forget(w);
	ck_assert_error(sup_answer(call(cl, "a", 31)), -32000);
	ck_assert_uint_eq(sup_count(w, MSG_REQUEST), 0);
}
END_TEST

/* An unsubscribe while the breaker is open: the session lets go, and so
 * does the upstream (the gateway tells it, past the policy). */
START_TEST(test_unsubscribe_open)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_worker	*w = sup_worker("a");
	struct sup_frame	*f;
	json_t			*o;
	int			 i;
	static const char	 sub[] = "{\"jsonrpc\":\"2.0\",\"id\":%d,"
	    "\"method\":\"resources/%s\",\"params\":{\"uri\":\"mem://r\"}}";

	sup_post(cl, sub, 1, "subscribe");
	ck_assert_ptr_nonnull(f = sup_take(w, MSG_REQUEST));
	sup_reply(w, f, "{}");
	for (i = 0; i < 3; i++) {
		call(cl, "a", 10 + i);
		fail_call(w, -32000);
	}
	ck_assert_str_eq(status_str("a", "breaker.state"), "open");
	ck_assert_result(sup_answer(sup_post(cl, sub, 2, "unsubscribe")));
	ck_assert_ptr_nonnull(f = sup_take(w, MSG_REQUEST));
	o = sup_frame_json(f);
	ck_assert_jstr(o, "method", "resources/unsubscribe");
	ck_assert_jstr(o, "params.uri", "mem://r");
	json_decref(o);
	sup_reply(w, f, "{}");
}
END_TEST

/* What does not count: answers end a run, errors the upstream gives and
 * failures that are not its connection's; a run older than the window
 * starts again. */
START_TEST(test_breaker_counts)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_worker	*w = sup_worker("a");
	struct sup_frame	*f;
	int			 i;

	for (i = 0; i < 2; i++) {
		call(cl, "a", i + 1);
		fail_call(w, -32000);
	}
	call(cl, "a", 3);
	sup_reply(w, sup_take(w, MSG_REQUEST), "{\"content\":[]}");
	ck_assert_int_eq(status_int("a", "breaker.failures"), 0);
	for (i = 0; i < 4; i++) {
		call(cl, "a", 10 + i);
		f = sup_take(w, MSG_REQUEST);
		if (i % 2 == 0)
			sup_reply_error(w, f, -32603, "internal");
		else
			sup_send(w, MSG_FAIL, 0, f->session, f->tag,
			    "{\"code\":-32603,\"message\":\"no\"}");
	}
	ck_assert_int_eq(status_int("a", "breaker.failures"), 0);
	/* Two failures, then the window passes. */
	for (i = 0; i < 2; i++) {
		call(cl, "a", 20 + i);
		fail_call(w, -32000);
	}
	ck_assert_int_eq(status_int("a", "breaker.failures"), 2);
	sup_advance(60);
	ck_assert_int_eq(status_int("a", "breaker.failures"), 0);
	call(cl, "a", 30);
	fail_call(w, -32000);
	ck_assert_str_eq(status_str("a", "breaker.state"), "closed");
	ck_assert_int_eq(status_int("a", "breaker.opened"), 0);
}
END_TEST

/* The defaults: no cap, a breaker after 5 failures in a row. */
START_TEST(test_defaults)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_worker	*w = sup_worker("d");
	int			 i;

	ck_assert_int_eq(status_int("d", "limit.max_concurrent"), 0);
	ck_assert_int_eq(status_int("d", "breaker.threshold"), 5);
	for (i = 0; i < 40; i++)
		call(cl, "d", i + 1);
	ck_assert_uint_eq(sup_count(w, MSG_REQUEST), 40);
	ck_assert_int_eq(status_int("d", "limit.in_flight"), 40);
	for (i = 0; i < 4; i++)
		fail_call(w, -32000);
	ck_assert_str_eq(status_str("d", "breaker.state"), "closed");
	fail_call(w, -32000);
	ck_assert_str_eq(status_str("d", "breaker.state"), "open");
	while (sup_take(w, MSG_REQUEST) != NULL)
		;
}
END_TEST

/* An upstream that dies is restarted as before: its calls' failures
 * then are not the breaker's. */
START_TEST(test_breaker_not_deaths)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_worker	*w = sup_worker("a");
	int			 i;

	for (i = 0; i < 2; i++)
		call(cl, "a", i + 1);
	sup_send(w, MSG_STATUS, 0, 0, 0, "{\"state\":\"exiting\","
	    "\"error\":\"upstream exited\"}");
	for (i = 0; i < 2; i++)
		fail_call(w, -32000);
	ck_assert_int_eq(status_int("a", "breaker.failures"), 0);
	ck_assert_int_eq(status_int("a", "limit.in_flight"), 0);
}
END_TEST

/*
 * A worker that cannot be started (fork or socketpair failing: out of
 * processes or descriptors) is tried again backing off, 1, 2, 4, 8 s, as
 * after a crash; it was tried every restart_delay for as long as it
 * lasted, a warning each time.  Once it starts, it is as before.
 */
START_TEST(test_spawn_backoff)
{
	unsigned int	before;

	sup_spawn_fails = 1000;
	before = sup_spawns;
	sup_exit(sup_worker("d"), 1 << 8);
	/* The harness fires what is due within the seconds asked (and half
	 * a second): 1 s after the exit, then 2 s, then 4 s, not 2 s. */
	sup_advance(1);
	ck_assert_uint_eq(sup_spawns - before, 1);
	ck_assert_str_eq(status_str("d", "state"), "backoff");
	sup_advance(2);
	ck_assert_uint_eq(sup_spawns - before, 2);
	sup_advance(3);
	ck_assert_uint_eq(sup_spawns - before, 2);
	sup_advance(4);
	ck_assert_uint_eq(sup_spawns - before, 3);
	sup_spawn_fails = 0;
	sup_advance(8);
	ck_assert_uint_eq(sup_spawns - before, 4);
	ck_assert_ptr_nonnull(sup_worker("d"));
}
END_TEST

/* A session's own instance that ended (or never started) fails its
 * calls "gone": it restarts, and is not the upstream's breaker's. */
START_TEST(test_breaker_not_instances)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_worker	*w = sup_worker("a");
	struct sup_frame	*f;
	int			 i;

	for (i = 0; i < 4; i++) {
		call(cl, "a", i + 1);
		ck_assert_ptr_nonnull(f = sup_take(w, MSG_REQUEST));
		sup_send(w, MSG_FAIL, 0, f->session, f->tag, "{\"code\":"
		    "-32000,\"message\":\"upstream a: exited\",\"gone\":true}");
	}
	ck_assert_int_eq(status_int("a", "breaker.failures"), 0);
	ck_assert_str_eq(status_str("a", "breaker.state"), "closed");
	/* The same failures without "gone" are the upstream's. */
	for (i = 0; i < 2; i++) {
		call(cl, "a", 10 + i);
		fail_call(w, -32000);
	}
	ck_assert_int_eq(status_int("a", "breaker.failures"), 2);
}
END_TEST

/* A call whose upstream waits for the call's own client (here an
 * elicitation nobody answers) is not the upstream's failure when it
 * times out; the same timeout without a question is. */
START_TEST(test_breaker_not_client)
{
	struct sup_client	*cl = sup_session(NULL, "{\"elicitation\":{}}");
	struct sup_worker	*w = sup_worker("a");
	struct sup_frame	*f;
	struct sup_resp		*r[2];
	int			 i;

	for (i = 0; i < 2; i++) {
		r[i] = call(cl, "a", i + 1);
		ck_assert_ptr_nonnull(f = sup_take(w, MSG_REQUEST));
		sup_send(w, MSG_UP_REQUEST, 0, f->session, f->tag,
		    "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":"
		    "\"elicitation/create\",\"params\":{\"mode\":\"form\","
		    "\"message\":\"name?\",\"requestedSchema\":{\"type\":"
		    "\"object\",\"properties\":{}}}}", 100 + i);
	}
	for (i = 0; i < 2; i++)
		ck_assert_ptr_nonnull(sup_find(r[i], "elicitation/create"));
	sup_advance(20);
	for (i = 0; i < 2; i++)
		ck_assert_error(sup_answer(r[i]), -32001);
	ck_assert_int_eq(status_int("a", "breaker.failures"), 0);
	ck_assert_str_eq(status_str("a", "breaker.state"), "closed");
	/* The questions end with their calls' timeouts (cancelled). */
	call(cl, "a", 10);
	sup_advance(20);
	ck_assert_int_eq(status_int("a", "breaker.failures"), 1);
	while (sup_take(w, MSG_REQUEST) != NULL)
		;
}
END_TEST

/* An optional upstream that never gives up (max_failures = 0). */
static const char conf_ready[] = SUP_BASE
    "servers = (\n"
    "  { name = \"a\"; transport = \"stdio\"; command = [ \"true\" ]; },\n"
    "  { name = \"b\"; transport = \"stdio\"; command = [ \"true\" ];\n"
    "    max_failures = 0; }\n"
    ");\n";

static void
setup_ready(void)
{
	sup_manual("b");
	sup_start(conf_ready);
}

/*
 * /readyz waits for every upstream to come up once, but an upstream that
 * is not required and fails to start again and again no longer holds the
 * others back: with max_failures = 0 it never becomes failed, and the
 * gateway was never ready.
 */
START_TEST(test_ready_despite_optional)
{
	int	i;

	ck_assert_int_eq(sup_http("GET", "/readyz", NULL, NULL)->status, 503);
	for (i = 0; i < 2; i++) {
		sup_restart_manual("b");
		ck_assert_int_eq(sup_http("GET", "/readyz", NULL, NULL)->status,
		    503);
	}
	sup_restart_manual("b");
	ck_assert_int_eq(sup_http("GET", "/readyz", NULL, NULL)->status, 200);
	ck_assert_str_eq(upstream_state_name(upstream_find("b")->state),
	    "starting");
}
END_TEST

static Suite *
limit_suite(void)
{
	Suite	*s = suite_create("limit");
	TCase	*tc = tcase_create("limit");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_cap_and_queue);
	tcase_add_test(tc, test_queue_timeout);
	tcase_add_test(tc, test_queue_cancel);
	tcase_add_test(tc, test_queue_session_end);
	tcase_add_test(tc, test_queue_client_gone);
	tcase_add_test(tc, test_queue_upstream_stop);
	tcase_add_test(tc, test_reload_cap);
	tcase_add_test(tc, test_queue_after_start);
	tcase_add_test(tc, test_queue_full_free_slot);
	tcase_add_test(tc, test_breaker_cycle);
	tcase_add_test(tc, test_breaker_probe);
	tcase_add_test(tc, test_breaker_counts);
	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_breaker_not_deaths);
	tcase_add_test(tc, test_breaker_not_instances);
	tcase_add_test(tc, test_spawn_backoff);
	tcase_add_test(tc, test_breaker_not_client);
	tcase_add_test(tc, test_breaker_stale_probe);
	tcase_add_test(tc, test_unsubscribe_open);
	suite_add_tcase(s, tc);

	tc = tcase_create("ready");
	tcase_add_checked_fixture(tc, setup_ready, teardown);
	tcase_add_test(tc, test_ready_despite_optional);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	return (sup_check_main(limit_suite()));
}
