/* SPDX-License-Identifier: ISC */
/*
 * Streams and their replay (supervisor/stream.c, mcp_http.c): event ids
 * "<stream>-<seq>", the priming event, resuming with Last-Event-ID after
 * the connection was lost, the standalone stream, and the bounds on what
 * is kept for a client that is not there.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "frame.h"
#include "supervisor.h"

#include "sup_check.h"

static const char conf_stream[] = SUP_BASE
    "servers = (\n"
    "  { name = \"a\"; transport = \"stdio\"; command = [ \"true\" ]; }\n"
    ");\n";

static void
setup(void)
{
	sup_catalog("a", "{\"tools\":[{\"name\":\"echo\",\"inputSchema\":"
	    "{\"type\":\"object\"}}]}");
	sup_start(conf_stream);
}

static void
teardown(void)
{
	sup_stop();
}

static struct sup_resp *
call(struct sup_client *cl, int id)
{
	return (sup_post(cl, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"a__echo\",\"_meta\":"
	    "{\"progressToken\":%d}}}", id, id));
}

/* The worker reports progress n on a call. */
static void
progress(struct sup_frame *f, int n)
{
	sup_sendq(sup_worker("a"), MSG_NOTIFY, 0, f->session, f->tag,
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\","
	    "\"params\":{\"progressToken\":1,\"progress\":%d}}", n);
}

/* A log message for every session. */
static void
log_all(int n)
{
	sup_sendq(sup_worker("a"), MSG_NOTIFY, 0, 0, 0, "{\"jsonrpc\":\"2.0\","
	    "\"method\":\"notifications/message\",\"params\":{\"level\":"
	    "\"info\",\"data\":%d}}", n);
}

/* The events of a response with a JSON message, as "id=data;" text. */
static const char *
events(struct sup_resp *r)
{
	static char	buf[8192];
	size_t		i, n = 0;

	buf[0] = '\0';
	for (i = 0; i < r->nevents && n < sizeof buf - 64; i++)
		n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s",
		    r->events[i].id, r->events[i].data[0] == '\0' ? " " :
		    "+");
	return (buf);
}

START_TEST(test_event_ids)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_resp		*r1, *r2;
	struct sup_frame	*f;

	r1 = call(cl, 1);
	f = sup_take(sup_worker("a"), MSG_REQUEST);
	progress(f, 1);
	progress(f, 2);
	sup_reply(sup_worker("a"), f, "{\"content\":[]}");
	/* The priming event first: the point reached, retry in it. */
	ck_assert_str_eq(events(r1), "1-0 1-1+1-2+1-3+");
	ck_assert_ptr_nonnull(strstr(sup_body(r1), "retry: 1000"));
	ck_assert(r1->done);
	r2 = call(cl, 2);
	sup_reply(sup_worker("a"), sup_take(sup_worker("a"), MSG_REQUEST),
	    "{\"content\":[]}");
	ck_assert_str_eq(events(r2), "2-0 2-1+");
}
END_TEST

/* Clients of before 2025-11-25 get no priming event. */
START_TEST(test_no_priming_before)
{
	struct sup_client	*cl = sup_client(NULL);
	struct sup_resp		*r;

	sup_initialize(cl, "{\"protocolVersion\":\"2025-06-18\","
	    "\"capabilities\":{},\"clientInfo\":{\"name\":\"c\","
	    "\"version\":\"1\"}}");
	ck_assert_str_eq(cl->version, "2025-06-18");
	r = call(cl, 1);
	sup_reply(sup_worker("a"), sup_take(sup_worker("a"), MSG_REQUEST),
	    "{\"content\":[]}");
	ck_assert_str_eq(events(r), "1-1+");
}
END_TEST

/* The connection is lost in the middle of a call: resume from the id. */
START_TEST(test_resume)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_resp		*r, *g;
	struct sup_frame	*f;

	r = call(cl, 1);
	f = sup_take(sup_worker("a"), MSG_REQUEST);
	progress(f, 1);
	sup_run();
	ck_assert_str_eq(events(r), "1-0 1-1+");
	sup_hangup(r->conn);
	progress(f, 2);
	progress(f, 3);
	sup_reply(sup_worker("a"), f, "{\"content\":[]}");
	ck_assert_ptr_null(sup_take(sup_worker("a"), MSG_CANCEL));
	g = sup_get(cl, "1-1");
	ck_assert_int_eq(g->status, 200);
	ck_assert_str_eq(events(g), "1-1 1-2+1-3+1-4+");
	ck_assert(g->done);
	ck_assert_result(sup_answer(g));
	/* Finished and delivered: nothing more will come. */
	ck_assert_int_eq(sup_get(cl, "1-4")->status, 204);
	ck_assert_int_eq(sup_get(cl, "1-0")->status, 204);
}
END_TEST

/* Resuming again from an earlier point, or taking a stream over. */
START_TEST(test_resume_again)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_resp		*r, *g1, *g2;
	struct sup_frame	*f;

	r = call(cl, 1);
	f = sup_take(sup_worker("a"), MSG_REQUEST);
	sup_hangup(r->conn);
	progress(f, 1);
	progress(f, 2);
	sup_run();
	g1 = sup_get(cl, "1-0");
	ck_assert_str_eq(events(g1), "1-0 1-1+1-2+");
	/* A second reader takes it over from where it says. */
	g2 = sup_get(cl, "1-1");
	ck_assert(g1->done);
	ck_assert_str_eq(events(g2), "1-1 1-2+");
	sup_reply(sup_worker("a"), f, "{\"content\":[]}");
	ck_assert_str_eq(events(g2), "1-1 1-2+1-3+");
	ck_assert(g2->done);
}
END_TEST

START_TEST(test_bad_event_id)
{
	static const char *const bad[] = {
		"abc", "1", "1-", "-1", "1-2-3", "01x-1", "4294967296-0",
		"1-4294967296", "9-0",
	};
	struct sup_client	*cl = sup_session(NULL, NULL);
	size_t			 i;

	call(cl, 1);
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
		ck_assert_msg(sup_get(cl, bad[i])->status == 400, "%s",
		    bad[i]);
	sup_reply(sup_worker("a"), sup_take(sup_worker("a"), MSG_REQUEST),
	    "{\"content\":[]}");
}
END_TEST

/* The standalone stream: one reader at a time, what came before kept. */
START_TEST(test_standalone)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_resp		*g1, *g2, *g3;

	log_all(1);
	log_all(2);
	sup_run();
	g1 = sup_get(cl, NULL);
	ck_assert_int_eq(g1->status, 200);
	ck_assert_str_eq(events(g1), "0-0 0-1+0-2+");
	ck_assert_int_eq(sup_get(cl, NULL)->status, 409);
	log_all(3);
	sup_run();
	ck_assert_str_eq(events(g1), "0-0 0-1+0-2+0-3+");
	sup_hangup(g1->conn);
	log_all(4);
	sup_run();
	/* Without Last-Event-ID: what it has not sent anywhere. */
	g2 = sup_get(cl, NULL);
	ck_assert_str_eq(events(g2), "0-3 0-4+");
	sup_hangup(g2->conn);
	g3 = sup_get(cl, "0-1");
	ck_assert_str_eq(events(g3), "0-1 0-2+0-3+0-4+");
	ck_assert(!g3->done);
}
END_TEST

/* A standalone stream no client opened keeps only a few events. */
START_TEST(test_unopened_bound)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_resp		*g;
	int			 i;

	for (i = 1; i <= 40; i++)
		log_all(i);
	sup_run();
	g = sup_get(cl, "0-0");
	ck_assert_uint_eq(g->nevents, 1 + 4);
	ck_assert_str_eq(g->events[1].id, "0-37");
	ck_assert_str_eq(g->events[4].id, "0-40");
}
END_TEST

/* A call's stream keeps at most 1024 events for a client not there. */
START_TEST(test_replay_bound)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_resp		*r, *g;
	struct sup_frame	*f;
	int			 i;

	r = call(cl, 1);
	f = sup_take(sup_worker("a"), MSG_REQUEST);
	sup_hangup(r->conn);
	for (i = 1; i <= 1100; i++)
		progress(f, i);
	sup_run();
	g = sup_get(cl, "1-0");
	ck_assert_uint_eq(g->nevents, 1 + 1024);
	ck_assert_str_eq(g->events[1].id, "1-77");
	ck_assert_str_eq(g->events[1024].id, "1-1100");
	sup_reply(sup_worker("a"), f, "{\"content\":[]}");
	ck_assert(g->done);
}
END_TEST

/* At most 16 finished calls wait for a client to come back. */
START_TEST(test_kept_bound)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_resp		*r;
	struct sup_frame	*f;
	char			 id[32];
	int			 i;

	for (i = 1; i <= 17; i++) {
		r = call(cl, i);
		f = sup_take(sup_worker("a"), MSG_REQUEST);
		sup_hangup(r->conn);
		sup_reply(sup_worker("a"), f, "{\"content\":[]}");
	}
	/* The oldest went; the others are there. */
	ck_assert_int_eq(sup_get(cl, "1-0")->status, 204);
	for (i = 2; i <= 17; i++) {
		snprintf(id, sizeof id, "%d-0", i);
		r = sup_get(cl, id);
		ck_assert_int_eq(r->status, 200);
		ck_assert_result(sup_answer(r));
	}
}
END_TEST

/* Each session gets the log messages at or above its own level. */
START_TEST(test_log_levels)
{
	struct sup_client	*c1 = sup_session(NULL, NULL);
	struct sup_client	*c2 = sup_session(NULL, NULL);
	struct sup_resp		*g1, *g2;
	struct sup_frame	*f;

	g1 = sup_get(c1, NULL);
	g2 = sup_get(c2, NULL);

	sup_post(c1, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"logging/setLevel\",\"params\":{\"level\":\"error\"}}");
	/* The upstream is set to the most verbose level asked for. */
	ck_assert_ptr_nonnull(f = sup_take(sup_worker("a"), MSG_REQUEST));
	ck_assert_ptr_nonnull(strstr(f->text, "\"level\":\"error\""));
	sup_reply(sup_worker("a"), f, "{}");
	log_all(1);
	sup_run();
	ck_assert_str_eq(events(g1), "0-0 ");
	ck_assert_str_eq(events(g2), "0-0 0-1+");
}
END_TEST

static Suite *
stream_suite(void)
{
	Suite	*s = suite_create("stream");
	TCase	*tc = tcase_create("stream");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_event_ids);
	tcase_add_test(tc, test_no_priming_before);
	tcase_add_test(tc, test_resume);
	tcase_add_test(tc, test_resume_again);
	tcase_add_test(tc, test_bad_event_id);
	tcase_add_test(tc, test_standalone);
	tcase_add_test(tc, test_unopened_bound);
	tcase_add_test(tc, test_replay_bound);
	tcase_add_test(tc, test_kept_bound);
	tcase_add_test(tc, test_log_levels);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	return (sup_check_main(stream_suite()));
}
