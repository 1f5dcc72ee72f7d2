/* SPDX-License-Identifier: ISC */
/*
 * Requests in flight (supervisor/route_pending.c, route_answer.c,
 * route.c): the client's id given back exactly, answers and progress to
 * the stream of the call they belong to, timeouts, cancellation, the
 * max_pending bound, requests waiting for a starting upstream, and what
 * the end of a session or of a worker does to them.
 */
#include "config.h"


#include <stdio.h>
#include <string.h>

#include "frame.h"
#include "supervisor.h"

#include "sup_check.h"

static const char conf_pending[] = SUP_BASE
    "max_pending = 3;\n"
    "request_timeout = 20;\n"
    "servers = (\n"
    "  { name = \"a\"; transport = \"stdio\"; command = [ \"true\" ];\n"
    "    max_message = 4096; },\n"
    "  { name = \"q\"; transport = \"stdio\"; command = [ \"true\" ]; }\n"
    ");\n";

static const char catalog_echo[] = "{\"tools\":[{\"name\":\"echo\","
    "\"inputSchema\":{\"type\":\"object\"}}]}";

static void
setup(void)
{
	sup_catalog("a", catalog_echo);
	sup_manual("q");
	sup_start(conf_pending);
}

static void
teardown(void)
{
	sup_stop();
}

/* Call a__echo with an id (JSON text) and more params members. */
static struct sup_resp *
call(struct sup_client *cl, const char *id, const char *more)
{
	return (sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"a__echo\",\"arguments\":"
	    "{}%s}}", id, more != NULL ? more : ""));
}

/* Ids of every JSON type come back as they were written. */
START_TEST(test_ids_back)
{
	static const char *const ids[] = {
		"7.50", "-0", "1e2", "123456789012345678901234567890",
		"\"a\\\"b\"", "\"\\u00e9\"", "\"\"", "0",
	};
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_worker	*w = sup_worker("a");
	struct sup_resp		*r;
	struct sup_frame	*f;
	char			 want[256];
	size_t			 i;

	for (i = 0; i < sizeof ids / sizeof ids[0]; i++) {
		r = call(cl, ids[i], NULL);
		ck_assert_ptr_nonnull(f = sup_take(w, MSG_REQUEST));
		snprintf(want, sizeof want, "\"id\":%s,", ids[i]);
		ck_assert_msg(strstr(f->text, want) != NULL, "%s", f->text);
		sup_reply(w, f, "{\"content\":[]}");
		ck_assert(r->done);
		snprintf(want, sizeof want, "\"id\":%s,\"result\"", ids[i]);
		ck_assert_msg(strstr(sup_body(r), want) != NULL, "%s: %s",
		    ids[i], sup_body(r));
	}
}
END_TEST

/* Two sessions, the same id: each answer goes to its own caller. */
START_TEST(test_answers_routed)
{
	struct sup_client	*c1 = sup_session(NULL, NULL);
	struct sup_client	*c2 = sup_session(NULL, NULL);
	struct sup_worker	*w = sup_worker("a");
	struct sup_resp		*r1, *r2;
	struct sup_frame	*f1, *f2;

	r1 = call(c1, "1", NULL);
	r2 = call(c2, "1", NULL);
	f1 = sup_take(w, MSG_REQUEST);
	f2 = sup_take(w, MSG_REQUEST);
	ck_assert_ptr_nonnull(f1);
	ck_assert_ptr_nonnull(f2);
	ck_assert_uint_ne(f1->tag, f2->tag);
	ck_assert_uint_ne(f1->session, f2->session);
	sup_reply(w, f2, "{\"content\":[],\"who\":2}");
	ck_assert(!r1->done);
	ck_assert_jint(sup_answer(r2), "result.who", 2);
	sup_reply(w, f1, "{\"content\":[],\"who\":1}");
	ck_assert_jint(sup_answer(r1), "result.who", 1);
}
END_TEST

/* Progress goes on the stream of the call it is about, not elsewhere. */
START_TEST(test_progress_routed)
{
	struct sup_client	*c1 = sup_session(NULL, NULL);
	struct sup_client	*c2 = sup_session(NULL, NULL);
	struct sup_worker	*w = sup_worker("a");
	struct sup_resp		*r1, *r2;
	struct sup_frame	*f1;
	json_t			*o;

	r1 = call(c1, "1", ",\"_meta\":{\"progressToken\":\"p\"}");
	r2 = call(c2, "1", ",\"_meta\":{\"progressToken\":\"p\"}");
	f1 = sup_take(w, MSG_REQUEST);
	sup_send(w, MSG_NOTIFY, 0, f1->session, f1->tag, "{\"jsonrpc\":"
	    "\"2.0\",\"method\":\"notifications/progress\",\"params\":"
	    "{\"progressToken\":\"p\",\"progress\":1}}");
	ck_assert_ptr_nonnull(o = sup_find(r1, "notifications/progress"));
	ck_assert_jstr(o, "params.progressToken", "p");
	ck_assert_ptr_null(sup_find(r2, "notifications/progress"));
	sup_reply(w, f1, "{\"content\":[]}");
	ck_assert(r1->done);
	ck_assert(!r2->done);
	sup_reply(w, sup_take(w, MSG_REQUEST), "{\"content\":[]}");
	ck_assert(r2->done);
}
END_TEST

/*
 * Progress of a call no longer in flight (cancelled, timed out) names no
 * active request: it reaches neither the call's stream nor the session's.
 */
START_TEST(test_progress_after_end)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_worker	*w = sup_worker("a");
	struct sup_resp		*g, *r;
	struct sup_frame	*f;
	int			 i;

	g = sup_get(cl, NULL);
	for (i = 0; i < 2; i++) {
		r = call(cl, i == 0 ? "1" : "2",
		    ",\"_meta\":{\"progressToken\":\"p\"}");
		f = sup_take(w, MSG_REQUEST);
		if (i == 0)
			sup_post(cl, "{\"jsonrpc\":\"2.0\",\"method\":"
			    "\"notifications/cancelled\",\"params\":"
			    "{\"requestId\":1}}");
		else {
			sup_advance(30);
			ck_assert_error(sup_answer(r), -32001);
		}
		ck_assert_ptr_nonnull(sup_take(w, MSG_CANCEL));
		sup_send(w, MSG_NOTIFY, 0, f->session, f->tag, "{\"jsonrpc\":"
		    "\"2.0\",\"method\":\"notifications/progress\","
		    "\"params\":{\"progressToken\":\"p\",\"progress\":1}}");
		ck_assert_ptr_null(sup_find(r, "notifications/progress"));
		ck_assert_ptr_null(sup_find(g, "notifications/progress"));
	}
}
END_TEST

/* No answer within request_timeout: -32001, and the worker is told. */
START_TEST(test_timeout)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_worker	*w = sup_worker("a");
	struct sup_resp		*r;
	struct sup_frame	*f, *c;

	r = call(cl, "1", NULL);
	f = sup_take(w, MSG_REQUEST);
	sup_advance(10);
	ck_assert(!r->done);
	ck_assert_ptr_null(sup_take(w, MSG_CANCEL));
	sup_advance(20);
	ck_assert(r->done);
	ck_assert_error(sup_answer(r), -32001);
	ck_assert_ptr_nonnull(c = sup_take(w, MSG_CANCEL));
	ck_assert_uint_eq(c->tag, f->tag);
	ck_assert_ptr_nonnull(strstr(c->text, "timed out"));
	/* A late answer is dropped. */
	sup_reply(w, f, "{\"content\":[]}");
	ck_assert_uint_eq(r->nevents, 2);
}
END_TEST

/* A client cancels its call: the worker is told, the stream ends. */
START_TEST(test_cancel_by_client)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_worker	*w = sup_worker("a");
	struct sup_resp		*r, *n;
	struct sup_frame	*f, *c;

	r = call(cl, "\"x\"", NULL);
	f = sup_take(w, MSG_REQUEST);
	n = sup_post(cl, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/cancelled\",\"params\":{\"requestId\":\"x\","
	    "\"reason\":\"changed my mind\"}}");
	ck_assert_int_eq(n->status, 202);
	ck_assert_ptr_nonnull(c = sup_take(w, MSG_CANCEL));
	ck_assert_uint_eq(c->tag, f->tag);
	ck_assert_ptr_nonnull(strstr(c->text, "changed my mind"));
	ck_assert(r->done);
	ck_assert_ptr_null(sup_answer(r));
	sup_reply(w, f, "{\"content\":[]}");
	ck_assert_ptr_null(sup_answer(r));
}
END_TEST

/* Cancelling what is not one's own request does nothing. */
START_TEST(test_cancel_not_own)
{
	struct sup_client	*c1 = sup_session(NULL, NULL);
	struct sup_client	*c2 = sup_session(NULL, NULL);
	struct sup_worker	*w = sup_worker("a");
	struct sup_resp		*r;

	r = call(c1, "5", NULL);
	ck_assert_int_eq(sup_post(c2, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/cancelled\",\"params\":{\"requestId\":5}}")->status,
	    202);
	ck_assert_int_eq(sup_post(c1, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/cancelled\",\"params\":{\"requestId\":\"5\"}}")->
	    status, 202);
	ck_assert_ptr_null(sup_take(w, MSG_CANCEL));
	sup_reply(w, sup_take(w, MSG_REQUEST), "{\"content\":[]}");
	ck_assert_result(sup_answer(r));
}
END_TEST

/* At most max_pending requests of a session in flight. */
START_TEST(test_max_pending)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_client	*other = sup_session(NULL, NULL);
	struct sup_worker	*w = sup_worker("a");
	struct sup_resp		*r;

	call(cl, "1", NULL);
	call(cl, "2", NULL);
	call(cl, "3", NULL);
	r = call(cl, "4", NULL);
	ck_assert_error(sup_answer(r), -32003);
	ck_assert_uint_eq(sup_count(w, MSG_REQUEST), 3);
	/* Another session has its own. */
	call(other, "1", NULL);
	ck_assert_uint_eq(sup_count(w, MSG_REQUEST), 4);
	sup_reply(w, sup_take(w, MSG_REQUEST), "{\"content\":[]}");
	r = call(cl, "5", NULL);
	ck_assert_uint_eq(sup_count(w, MSG_REQUEST), 5);
	ck_assert(!r->done);
	while (sup_count(w, MSG_REQUEST) > 0 && !r->done) {
		struct sup_frame *f = sup_take(w, MSG_REQUEST);

		if (f == NULL)
			break;
		sup_reply(w, f, "{\"content\":[]}");
	}
	ck_assert_result(sup_answer(r));
}
END_TEST

/* A session ends: its calls are cancelled upstream, workers told. */
START_TEST(test_session_end)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_worker	*w = sup_worker("a");
	struct sup_frame	*f1, *f2, *c;

	call(cl, "1", NULL);
	call(cl, "2", NULL);
	f1 = sup_take(w, MSG_REQUEST);
	f2 = sup_take(w, MSG_REQUEST);
	ck_assert_int_eq(sup_delete(cl)->status, 200);
	ck_assert_ptr_nonnull(c = sup_take(w, MSG_CANCEL));
	ck_assert_uint_eq(c->tag, f1->tag);
	ck_assert_ptr_nonnull(strstr(c->text, "session ended"));
	ck_assert_ptr_nonnull(c = sup_take(w, MSG_CANCEL));
	ck_assert_uint_eq(c->tag, f2->tag);
	ck_assert_ptr_nonnull(c = sup_take(w, MSG_SESSION_CLOSE));
	ck_assert_uint_eq(c->session, f1->session);
	/* Its id is gone. */
	ck_assert_int_eq(sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":3,"
	    "\"method\":\"ping\"}")->status, 404);
	sup_reply(w, f1, "{\"content\":[]}");
}
END_TEST

/* A worker that exits: its calls are answered at once. */
START_TEST(test_worker_exit)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_resp		*r;

	r = call(cl, "1", NULL);
	ck_assert(!r->done);
	sup_kill(sup_worker("a"));
	sup_run();
	ck_assert(r->done);
	ck_assert_error(sup_answer(r), -32000);
	ck_assert_ptr_nonnull(strstr(sup_jstr(sup_answer(r),
	    "error.message"), "exited during the call"));
	ck_assert_error(sup_answer(call(cl, "2", NULL)), -32000);
}
END_TEST

/* A worker that cannot answer says so, with a code. */
START_TEST(test_fail_frame)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_worker	*w = sup_worker("a");
	struct sup_resp		*r;
	struct sup_frame	*f;

	r = call(cl, "1", NULL);
	f = sup_take(w, MSG_REQUEST);
	sup_send(w, MSG_FAIL, 0, f->session, f->tag, "{\"code\":-32603,"
	    "\"message\":\"the upstream went away\"}");
	ck_assert_error(sup_answer(r), -32603);
	ck_assert_jstr(sup_answer(r), "error.message",
	    "the upstream went away");
	/* And an error answer is passed on as it is. */
	r = call(cl, "2", NULL);
	sup_reply_error(w, sup_take(w, MSG_REQUEST), -32050, "no");
	ck_assert_error(sup_answer(r), -32050);
}
END_TEST

/* A request for an upstream that is starting waits for it. */
START_TEST(test_queued_until_ready)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_worker	*w = sup_worker("q");
	struct sup_resp		*r;

	sup_send(w, MSG_HELLO, 0, 0, 0, "{\"version\":1}");
	sup_send(w, MSG_CATALOG, 0, 0, 0, "%s", catalog_echo);
	/* It may also time out while it waits. */
	r = sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"q__echo\"}}");
	sup_advance(20);
	ck_assert_error(sup_answer(r), -32001);
	ck_assert_ptr_null(sup_take(w, MSG_CANCEL));
	r = sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"q__echo\"}}");
	ck_assert_ptr_null(sup_take(w, MSG_REQUEST));
	sup_send(w, MSG_STATUS, 0, 0, 0, "{\"state\":\"ready\","
	    "\"capabilities\":{\"tools\":{}}}");
	sup_reply(w, sup_take(w, MSG_REQUEST), "{\"content\":[]}");
	ck_assert_result(sup_answer(r));
}
END_TEST

/*
 * A worker that becomes ready is told of every session a slice per turn
 * of the loop, not all at once; a request for a session it has yet to be
 * told of tells it first.
 */
#define NOPEN		300	/* more than two slices */
#define OPEN_SLICE	128

/* The frames a worker got for a session, by type, in order ("OR"). */
static void
frames_of(struct sup_worker *w, uint32_t session, char *buf, size_t len)
{
	struct sup_frame	*f;
	size_t			 n = 0;

	TAILQ_FOREACH(f, &w->frames, entry) {
		if (f->session != session || n + 2 > len)
			continue;
		if (f->type == MSG_SESSION_OPEN)
			buf[n++] = 'O';
		else if (f->type == MSG_REQUEST)
			buf[n++] = 'R';
	}
	buf[n] = '\0';
}

START_TEST(test_opens_sliced)
{
	static struct sup_client	*cl[NOPEN];
	struct sup_worker		*w = sup_worker("q");
	struct sup_frame		*f;
	struct sup_resp			*r, *r2;
	struct session			*s;
	char				 seen[16];
	unsigned int			 opens;
	size_t				 i;
	int				 turns;

	sup_nofile(8 * NOPEN);
	for (i = 0; i < NOPEN; i++)
		cl[i] = sup_session(NULL, NULL);
	sup_send(w, MSG_HELLO, 0, 0, 0, "{\"version\":1}");
	sup_send(w, MSG_CATALOG, 0, 0, 0, "%s", catalog_echo);
	/* The last session's call waits for the upstream to be ready. */
	r = sup_post(cl[NOPEN - 1], "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"tools/call\",\"params\":{\"name\":\"q__echo\"}}");
	ck_assert_uint_eq(sup_count(w, MSG_SESSION_OPEN), 0);
	ck_assert_uint_eq(sup_count(w, MSG_REQUEST), 0);
	sup_sendq(w, MSG_STATUS, 0, 0, 0, "{\"state\":\"ready\","
	    "\"capabilities\":{\"tools\":{}}}");
	for (turns = 0; turns < 10 && sup_count(w, MSG_SESSION_OPEN) == 0;
	    turns++)
		sup_turn();
	/* The first slice, perhaps the second: not all. */
	opens = sup_count(w, MSG_SESSION_OPEN);
	ck_assert_uint_gt(opens, 0);
	ck_assert_uint_le(opens, 2 * OPEN_SLICE + 1);
	/* The call went with them, its session told first; a second call
	 * tells it no more. */
	ck_assert_uint_eq(sup_count(w, MSG_REQUEST), 1);
	r2 = sup_post(cl[NOPEN - 1], "{\"jsonrpc\":\"2.0\",\"id\":2,"
	    "\"method\":\"tools/call\",\"params\":{\"name\":\"q__echo\"}}");
	ck_assert_uint_eq(sup_count(w, MSG_REQUEST), 2);
	s = session_find(cl[NOPEN - 1]->sid, strlen(cl[NOPEN - 1]->sid));
	frames_of(w, s->no, seen, sizeof seen);
	ck_assert_str_eq(seen, "ORR");
	/* In the end every session was told, once. */
	sup_run();
	ck_assert_uint_eq(sup_count(w, MSG_SESSION_OPEN), NOPEN);
	for (i = 0; i < NOPEN; i++) {
		s = session_find(cl[i]->sid, strlen(cl[i]->sid));
		frames_of(w, s->no, seen, sizeof seen);
		ck_assert_msg(seen[0] == 'O', "session %zu: %s", i, seen);
	}
	ck_assert_ptr_nonnull(f = sup_take(w, MSG_REQUEST));
	sup_reply(w, f, "{\"content\":[]}");
	ck_assert_result(sup_answer(r));
	ck_assert_ptr_nonnull(f = sup_take(w, MSG_REQUEST));
	sup_reply(w, f, "{\"content\":[]}");
	ck_assert_result(sup_answer(r2));
}
END_TEST

/* What the gateway will not forward. */
START_TEST(test_refused)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	char			 big[5000], *tok;

	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	ck_assert_error(sup_rpc(cl, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"a__echo\",\"arguments\":"
	    "{\"x\":\"%s\"}}}", big), -32600);
	ck_assert_error(sup_answer(call(cl, "2", ",\"_meta\":{"
	    "\"progressToken\":1,\"progressToken\":2}")), -32600);
	tok = big + sizeof big - 1100;
	ck_assert_error(sup_rpc(cl, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"a__echo\",\"_meta\":"
	    "{\"progressToken\":\"%s\"}}}", tok), -32600);
	ck_assert_error(sup_rpc(cl, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"a__echo\",\"name\":"
	    "\"a__echo\"}}"), -32600);
	ck_assert_error(sup_rpc(cl, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"a__echo\\u0000x\"}}"),
	    -32602);
	ck_assert_error(sup_rpc(cl, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":7}}"), -32602);
	ck_assert_ptr_null(sup_take(sup_worker("a"), MSG_REQUEST));
}
END_TEST

static Suite *
pending_suite(void)
{
	Suite	*s = suite_create("pending");
	TCase	*tc = tcase_create("pending");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_ids_back);
	tcase_add_test(tc, test_answers_routed);
	tcase_add_test(tc, test_progress_routed);
	tcase_add_test(tc, test_progress_after_end);
	tcase_add_test(tc, test_timeout);
	tcase_add_test(tc, test_cancel_by_client);
	tcase_add_test(tc, test_cancel_not_own);
	tcase_add_test(tc, test_max_pending);
	tcase_add_test(tc, test_session_end);
	tcase_add_test(tc, test_worker_exit);
	tcase_add_test(tc, test_fail_frame);
	tcase_add_test(tc, test_queued_until_ready);
	tcase_add_test(tc, test_opens_sliced);
	tcase_add_test(tc, test_refused);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	return (sup_check_main(pending_suite()));
}
