/* SPDX-License-Identifier: ISC */
/*
 * Streams and their replay (supervisor/stream.c, mcp_http.c): event ids
 * "<stream>-<seq>", the priming event, resuming with Last-Event-ID after
 * the connection was lost, the standalone stream, and the bounds on what
 * is kept for a client that is not there.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "supervisor.h"

#include "sup_check.h"
#include "sup_priv.h"

static const char conf_stream[] = SUP_BASE
    "servers = (\n"
    "  { name = \"a\"; transport = \"stdio\"; command = [ \"true\" ]; }\n"
    ");\n";

/* max_buffered small enough for a test to reach. */
static const char conf_budget[] = SUP_BASE
    "max_buffered = \"1M\";\n"
    "servers = (\n"
    "  { name = \"a\"; transport = \"stdio\"; command = [ \"true\" ]; }\n"
    ");\n";

static void
setup_with(const char *text)
{
	sup_catalog("a", "{\"tools\":[{\"name\":\"echo\",\"inputSchema\":"
	    "{\"type\":\"object\"}}]}");
	sup_start(text);
}

static void
setup(void)
{
	setup_with(conf_stream);
}

static void
setup_budget(void)
{
	setup_with(conf_budget);
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
	/* What it had not had; no priming event, as events come at once. */
	ck_assert_str_eq(events(g), "1-2+1-3+1-4+");
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
	ck_assert_str_eq(events(g1), "1-1+1-2+");
	/* A second reader takes it over from where it says. */
	g2 = sup_get(cl, "1-1");
	ck_assert(g1->done);
	ck_assert_str_eq(events(g2), "1-2+");
	sup_reply(sup_worker("a"), f, "{\"content\":[]}");
	ck_assert_str_eq(events(g2), "1-2+1-3+");
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
	ck_assert_str_eq(events(g1), "0-1+0-2+");
	ck_assert_int_eq(sup_get(cl, NULL)->status, 409);
	log_all(3);
	sup_run();
	ck_assert_str_eq(events(g1), "0-1+0-2+0-3+");
	sup_hangup(g1->conn);
	log_all(4);
	sup_run();
	/* Without Last-Event-ID: what it has not sent anywhere. */
	g2 = sup_get(cl, NULL);
	ck_assert_str_eq(events(g2), "0-4+");
	sup_hangup(g2->conn);
	g3 = sup_get(cl, "0-1");
	ck_assert_str_eq(events(g3), "0-2+0-3+0-4+");
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
	ck_assert_uint_eq(g->nevents, 4);
	ck_assert_str_eq(g->events[0].id, "0-37");
	ck_assert_str_eq(g->events[3].id, "0-40");
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
	ck_assert_uint_eq(g->nevents, 1024);
	ck_assert_str_eq(g->events[0].id, "1-77");
	ck_assert_str_eq(g->events[1023].id, "1-1100");
	sup_reply(sup_worker("a"), f, "{\"content\":[]}");
	ck_assert(g->done);
}
END_TEST

/* Of 17 finished calls not delivered, the first went; the others are
 * there, each with its response. */
static void
kept_first_gone(struct sup_client *cl)
{
	struct sup_resp	*r;
	char		 id[32];
	int		 i;

	ck_assert_int_eq(sup_get(cl, "1-0")->status, 204);
	for (i = 2; i <= 17; i++) {
		snprintf(id, sizeof id, "%d-0", i);
		r = sup_get(cl, id);
		ck_assert_int_eq(r->status, 200);
		ck_assert_result(sup_answer(r));
	}
}

/* At most 16 finished calls wait for a client to come back. */
START_TEST(test_kept_bound)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_resp		*r;
	struct sup_frame	*f;
	int			 i;

	for (i = 1; i <= 17; i++) {
		r = call(cl, i);
		f = sup_take(sup_worker("a"), MSG_REQUEST);
		sup_hangup(r->conn);
		sup_reply(sup_worker("a"), f, "{\"content\":[]}");
	}
	kept_first_gone(cl);
}
END_TEST

/*
 * The same when the oldest call finishes last: its response, kept with
 * 16 others, is the one dropped (its stream was used after it was
 * freed: ASan).
 */
START_TEST(test_kept_bound_late)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_resp		*r;
	struct sup_frame	*f[18];
	int			 i;

	for (i = 1; i <= 17; i++) {
		r = call(cl, i);
		f[i] = sup_take(sup_worker("a"), MSG_REQUEST);
		sup_hangup(r->conn);
	}
	for (i = 2; i <= 17; i++)
		sup_reply(sup_worker("a"), f[i], "{\"content\":[]}");
	sup_reply(sup_worker("a"), f[1], "{\"content\":[]}");
	kept_first_gone(cl);
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

/* A log message for every session, its data a string of size bytes. */
static void
log_big(int n, size_t size)
{
	char	*pad;

	pad = malloc(size + 1);
	memset(pad, 'x', size);
	pad[size] = '\0';
	sup_sendq(sup_worker("a"), MSG_NOTIFY, 0, 0, 0, "{\"jsonrpc\":\"2.0\","
	    "\"method\":\"notifications/message\",\"params\":{\"level\":"
	    "\"info\",\"data\":\"%d:%s\"}}", n, pad);
	free(pad);
}

/* The reader stops reading: the gateway's writes fill the socket, then
 * its own output.  The client's end, to give back. */
static int
stall(struct sup_conn *c)
{
	int	fd = c->fd;

	c->fd = -1;
	return (fd);
}

/*
 * The connection drops: the client reads what the socket holds (the
 * gateway not running meanwhile), then hangs up, losing what the
 * gateway's output still held.
 */
static void
drop(struct sup_conn *c, int fd)
{
	c->fd = fd;
	sup_clients_io();
	sup_hangup(c);
}

/* A stream's reader stops reading while n events of size bytes are
 * sent, and its connection drops with the gateway's output holding some. */
static void
lose(struct sup_resp *g, int n, size_t size)
{
	int	fd, i;

	fd = stall(g->conn);
	for (i = 1; i <= n; i++) {
		log_big(i, size);
		if (i % 20 == 0)
			sup_run();
	}
	sup_run();
	ck_assert_uint_gt(http_stream_queued(), 0);
	drop(g->conn, fd);
}

/* The seq of an id "<stream>-<seq>". */
static long
seq_of(const char *id)
{
	const char	*dash = strchr(id, '-');

	return (dash != NULL ? strtol(dash + 1, NULL, 10) : -1);
}

/* The id of the last event with data a client had, or of its priming. */
static const char *
last_id(struct sup_resp *r)
{
	ck_assert_uint_gt(r->nevents, 0);
	return (r->events[r->nevents - 1].id);
}

/*
 * Resume from where the client got to and check that nothing between
 * that and the newest event (want) is missing.
 */
static void
resume_complete(struct sup_client *cl, const char *from, long want)
{
	struct sup_resp	*g;
	size_t		 i;
	long		 first, last;

	g = sup_get(cl, from);
	ck_assert_int_eq(g->status, 200);
	/* The first event with data: there is no priming event before a
	 * replay, and it would not count. */
	for (i = 0; i < g->nevents && g->events[i].data[0] == '\0'; i++)
		;
	ck_assert_uint_lt(i, g->nevents);
	first = seq_of(g->events[i].id);
	last = seq_of(g->events[g->nevents - 1].id);
	ck_assert_msg(first == seq_of(from) + 1 && last == want,
	    "resumed from %s: replay is %ld..%ld, events %ld..%ld lost",
	    from, first, last, seq_of(from) + 1, first - 1);
}

/*
 * Small events on a reader that stopped reading: those its output still
 * held when it dropped are kept (stream_limit keeps "what its output
 * still holds").
 */
START_TEST(test_output_held_small)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_resp		*g;
	int			 fd, i, n = 1000;

	g = sup_get(cl, NULL);
	ck_assert_str_eq(last_id(g), "0-0");
	fd = stall(g->conn);
	for (i = 1; i <= n; i++) {
		log_big(i, 100);
		if (i % 50 == 0)
			sup_run();
	}
	sup_run();
	ck_assert_uint_gt(http_stream_queued(), 0);
	drop(g->conn, fd);
	resume_complete(cl, last_id(g), n);
}
END_TEST

/*
 * A client that reconnects without Last-Event-ID gets "what it has not
 * had" (the man page: what was sent while no stream was connected is
 * sent when one connects): what the lost connection's output still held
 * was never sent.
 */
START_TEST(test_plain_get_after_loss)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_resp		*g, *g2;
	const char		*from;
	int			 n = 300;

	g = sup_get(cl, NULL);
	lose(g, n, 2000);
	from = last_id(g);
	g2 = sup_get(cl, NULL);
	ck_assert_uint_gt(g2->nevents, 0);
	ck_assert_msg(seq_of(g2->events[0].id) == seq_of(from) + 1,
	    "client had up to %s; plain GET sends %zu events from %s",
	    from, g2->nevents, g2->events[0].id);
}
END_TEST

/*
 * The standalone stream keeps of the events written to its connection
 * only a short window, its last 16 (mcp-supervisord(8)), also after a
 * loss: events the client had, or has had since, are no longer owed
 * (owed events at the head stopped the trimming).
 */
START_TEST(test_spare_window_after_loss)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_resp		*g, *g2, *g3;
	int			 i, n = 300;

	g = sup_get(cl, NULL);
	lose(g, n, 2000);
	g2 = sup_get(cl, NULL);
	for (i = n + 1; i <= n + 100; i++)
		log_big(i, 100);
	sup_run();
	ck_assert_int_eq(seq_of(last_id(g2)), n + 100);
	/* Trimmed as events are sent, once the output has passed them on. */
	log_big(n + 101, 100);
	sup_run();
	sup_hangup(g2->conn);
	g3 = sup_get(cl, "0-300");
	ck_assert_msg(g3->nevents <= 16, "delivered events kept for a "
	    "resumption: %zu (the window is 16)", g3->nevents);
}
END_TEST

/*
 * A Last-Event-ID past the newest event of the stream is not one of the
 * session's ids (400 by the man page); accepted, its priming event says
 * the client is further than the stream, and the events that come next
 * have ids lower than it.
 */
START_TEST(test_future_event_id)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_resp		*g;

	g = sup_get(cl, "0-999");
	log_big(1, 10);
	sup_run();
	ck_assert_msg(g->status == 400, "Last-Event-ID 0-999 of a stream at "
	    "0-0: status %d, priming id %s, next event id %s", g->status,
	    g->nevents > 0 ? g->events[0].id : "-",
	    g->nevents > 1 ? g->events[1].id : "-");
}
END_TEST

/* Accept given in two lines is one list (RFC 9110, section 5.3): the
 * standalone stream opens (it was 406). */
START_TEST(test_accept_two_lines)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_resp		*r;
	char			 h[512];

	snprintf(h, sizeof h, "Accept: application/json\r\n"
	    "Accept: text/event-stream\r\nMcp-Session-Id: %s\r\n"
	    "MCP-Protocol-Version: %s\r\n", cl->sid, cl->version);
	r = sup_http("GET", "/mcp", h, NULL);
	ck_assert_int_eq(r->status, 200);
}
END_TEST

/*
 * Event ids are unique within a session (2025-11-25, Resumability): a
 * resumption with nothing to send again primes with a new id, and
 * resuming from before it loses nothing.
 */
START_TEST(test_priming_id_unique)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_resp		*g1, *g2, *g3;

	g1 = sup_get(cl, NULL);
	log_all(1);
	sup_run();
	ck_assert_str_eq(events(g1), "0-0 0-1+");
	sup_hangup(g1->conn);
	g2 = sup_get(cl, "0-1");
	ck_assert_str_eq(events(g2), "0-2 ");
	log_all(2);
	sup_run();
	ck_assert_str_eq(events(g2), "0-2 0-3+");
	sup_hangup(g2->conn);
	g3 = sup_get(cl, "0-1");
	ck_assert_str_eq(events(g3), "0-3+");
}
END_TEST

/* A call's response of size bytes, for the worker to send. */
static char *
big_result(size_t size)
{
	char	*big, *res;

	big = malloc(size + 1);
	memset(big, 'x', size);
	big[size] = '\0';
	if (asprintf(&res, "{\"content\":[{\"type\":\"text\",\"text\":"
	    "\"%s\"}]}", big) < 0)
		ck_abort();
	free(big);
	return (res);
}

/*
 * A call's response that the connection's output still held when the
 * connection was lost is kept: the client resumes the call's stream and
 * has it (it was freed as soon as it was written).
 */
START_TEST(test_post_final_in_output)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_resp		*r, *g;
	struct sup_frame	*f;
	char			*res;
	int			 fd;

	r = call(cl, 1);
	f = sup_take(sup_worker("a"), MSG_REQUEST);
	sup_run();
	ck_assert_str_eq(last_id(r), "1-0");
	fd = stall(r->conn);
	res = big_result(4 * 1024 * 1024);
	sup_reply(sup_worker("a"), f, res);
	free(res);
	sup_run();
	ck_assert_uint_gt(http_stream_queued(), 0);
	drop(r->conn, fd);
	ck_assert_ptr_null(sup_answer(r));
	g = sup_get(cl, "1-0");
	ck_assert_int_eq(g->status, 200);
	ck_assert_result(sup_answer(g));
	ck_assert(g->done);
	/* Delivered now: the stream is gone. */
	ck_assert_int_eq(sup_get(cl, "1-0")->status, 204);
}
END_TEST

/*
 * A response its connection passed on: the stream goes, with nothing
 * kept (a finished, delivered call).
 */
START_TEST(test_post_final_passed)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_resp		*r;

	r = call(cl, 1);
	sup_reply(sup_worker("a"), sup_take(sup_worker("a"), MSG_REQUEST),
	    "{\"content\":[]}");
	ck_assert(r->done);
	ck_assert_uint_eq(stream_held_bytes(), 0);
	ck_assert_int_eq(sup_get(cl, "1-0")->status, 204);
}
END_TEST

/*
 * Log messages of size bytes, a turn of the loop after each, until the
 * standalone stream's stalled reader is cut (at most max): the last one's
 * number.
 */
static int
log_until_cut(int max, size_t size)
{
	int	i;

	for (i = 1; i <= max; i++) {
		log_big(i, size);
		sup_run();
		if (http_stream_count(STREAM_GET) == 0)
			return (i);
	}
	ck_abort_msg("the reader was not cut after %d messages", max);
	return (0);
}

/*
 * A reader more than 4 MiB behind is cut, and what it had not had stays
 * kept (mcp-supervisord(8)), also as a few more events come before it
 * resumes.
 */
START_TEST(test_reader_cut_keeps)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_resp		*g;
	int			 fd, i, cut;

	g = sup_get(cl, NULL);
	fd = stall(g->conn);
	cut = log_until_cut(500, 60000);
	for (i = cut + 1; i <= cut + 5; i++)
		log_big(i, 60000);
	sup_run();
	drop(g->conn, fd);
	resume_complete(cl, last_id(g), cut + 5);
}
END_TEST

/*
 * Past max_buffered, what a connected reader's output still holds is not
 * spare: the reader furthest behind is cut, and its events stay for a
 * resumption (mcp-supervisord.conf(5)).
 */
START_TEST(test_budget_cut_keeps)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_resp		*g;
	int			 fd, cut;

	g = sup_get(cl, NULL);
	fd = stall(g->conn);
	cut = log_until_cut(1000, 8000);
	drop(g->conn, fd);
	resume_complete(cl, last_id(g), cut);
}
END_TEST

/*
 * A large response in its connection's output is counted once against
 * max_buffered, not also as kept for a resumption: a reader that is
 * merely slower than the gateway is not cut.
 */
START_TEST(test_budget_large_response)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_resp		*r;
	struct sup_frame	*f;
	char			*res;
	int			 fd, i;

	r = call(cl, 1);
	f = sup_take(sup_worker("a"), MSG_REQUEST);
	sup_run();
	fd = stall(r->conn);
	res = big_result(700 * 1024);
	sup_reply(sup_worker("a"), f, res);
	free(res);
	sup_run();
	ck_assert_uint_gt(http_stream_queued(), 64 * 1024);
	r->conn->fd = fd;
	for (i = 0; i < 100 && !r->done; i++)
		sup_run();
	ck_assert(r->done);
	ck_assert_result(sup_answer(r));
}
END_TEST

/*
 * A finished call whose response max_buffered dropped while no
 * connection had it: a resumption ends at once, with a warning, instead
 * of waiting for a response that will not come.
 */
START_TEST(test_resume_response_dropped)
{
	struct sup_client	*cl = sup_session(NULL, NULL);
	struct sup_resp		*r, *g;
	struct sup_frame	*f;
	char			*res;

	r = call(cl, 1);
	f = sup_take(sup_worker("a"), MSG_REQUEST);
	sup_hangup(r->conn);
	res = big_result(1200 * 1024);
	sup_reply(sup_worker("a"), f, res);
	free(res);
	sup_run();
	ck_assert_uint_lt(stream_held_bytes(), 1024 * 1024);
	g = sup_get(cl, "1-0");
	ck_assert_int_eq(g->status, 200);
	ck_assert(g->done);
	ck_assert_ptr_null(sup_answer(g));
}
END_TEST

static Suite *
stream_suite(void)
{
	Suite	*s = suite_create("stream");
	TCase	*tc = tcase_create("stream");
	TCase	*tb = tcase_create("budget");

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
	tcase_add_test(tc, test_kept_bound_late);
	tcase_add_test(tc, test_log_levels);
	tcase_add_test(tc, test_output_held_small);
	tcase_add_test(tc, test_plain_get_after_loss);
	tcase_add_test(tc, test_spare_window_after_loss);
	tcase_add_test(tc, test_future_event_id);
	tcase_add_test(tc, test_accept_two_lines);
	tcase_add_test(tc, test_priming_id_unique);
	tcase_add_test(tc, test_post_final_in_output);
	tcase_add_test(tc, test_post_final_passed);
	tcase_add_test(tc, test_reader_cut_keeps);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(tb, setup_budget, teardown);
	tcase_add_test(tb, test_budget_cut_keeps);
	tcase_add_test(tb, test_budget_large_response);
	tcase_add_test(tb, test_resume_response_dropped);
	suite_add_tcase(s, tb);
	return (s);
}

int
main(void)
{
	return (sup_check_main(stream_suite()));
}
