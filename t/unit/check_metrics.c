/* SPDX-License-Identifier: ISC */
/*
 * What a scrape of /metrics costs (supervisor/metrics.c): the sessions
 * by transport and the streams by kind are counts kept where they change,
 * which must agree with a walk of the sessions at every step; and the
 * open descriptors, where the kernel cannot give their number (before
 * Linux 6.2), come from a walk of /proc/self/fd a slice per turn of the
 * loop, never read whole by one scrape.
 */
#include "config.h"

#include <sys/stat.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "supervisor.h"

#include "sup_check.h"
#include "sup_priv.h"

#define NPIPES	1500	/* 3,000 descriptors: more than a scrape reads */

static const char ws_upgrade[] = "Upgrade: websocket\r\n"
    "Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
    "Sec-WebSocket-Protocol: mcp\r\n";

static void
setup(void)
{
	sup_catalog("a", "{\"tools\":[{\"name\":\"echo\",\"inputSchema\":"
	    "{\"type\":\"object\"}}]}");
	sup_start(SUP_BASE "servers = ( { name = \"a\"; command = "
	    "[ \"/bin/true\" ]; } );\n");
}

static void
teardown(void)
{
	metrics_fds_walk(0);
	sup_stop();
}

/* A scrape, as text (the test's to free). */
static char *
scrape(void)
{
	struct evbuffer	*b = evbuffer_new();
	size_t		 len;
	char		*text;

	metrics_write(b);
	len = evbuffer_get_length(b);
	text = malloc(len + 1);
	ck_assert_ptr_nonnull(text);
	evbuffer_remove(b, text, len);
	text[len] = '\0';
	evbuffer_free(b);
	return (text);
}

/* The value of a sample ("name{labels}"), or -1 if the scrape has none. */
static long long
sample(const char *text, const char *series)
{
	const char	*p = text;
	size_t		 n = strlen(series);

	while ((p = strstr(p, series)) != NULL) {
		if ((p == text || p[-1] == '\n') && p[n] == ' ')
			return (strtoll(p + n + 1, NULL, 10));
		p += n;
	}
	return (-1);
}

/* What a walk of every session finds: the old way of counting. */
struct truth {
	unsigned int	sessions[OBS_NTRANSPORTS];
	unsigned int	streams[STREAM_NKINDS];	/* with a connection */
};

static void
truth_one(struct session *s, void *arg)
{
	struct truth	*t = arg;
	struct stream	*st;

	t->sessions[s->transport]++;
	TAILQ_FOREACH(st, &s->streams, entry)
		if (st->conn != NULL)
			t->streams[st->kind]++;
}

/*
 * A scrape agrees with a walk and with what the test expects: sessions
 * over HTTP, legacy SSE and WebSocket, streams of a POST, a GET and a
 * legacy session.
 */
static void
expect(unsigned int http, unsigned int sse, unsigned int ws,
    unsigned int post, unsigned int get, unsigned int legacy)
{
	struct truth	 t;
	char		*text = scrape(), series[128];
	size_t		 i;
	static const struct {
		const char	*name;
		int		 kind;
	} kinds[] = {
		{ "post", STREAM_POST },
		{ "get", STREAM_GET },
		{ "legacy", STREAM_LEGACY },
	};

	memset(&t, 0, sizeof t);
	session_foreach(truth_one, &t);
	for (i = 0; i < OBS_NTRANSPORTS; i++) {
		snprintf(series, sizeof series, "mcp_supervisor_sessions"
		    "{transport=\"%s\"}", obs_transport_names[i]);
		ck_assert_int_eq(sample(text, series), t.sessions[i]);
	}
	for (i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
		snprintf(series, sizeof series, "mcp_supervisor_sse_streams"
		    "{kind=\"%s\"}", kinds[i].name);
		ck_assert_int_eq(sample(text, series), t.streams[kinds[i].kind]);
	}
	ck_assert_uint_eq(t.sessions[OBS_T_HTTP], http);
	ck_assert_uint_eq(t.sessions[OBS_T_SSE], sse);
	ck_assert_uint_eq(t.sessions[OBS_T_WS], ws);
	ck_assert_uint_eq(t.streams[STREAM_POST], post);
	ck_assert_uint_eq(t.streams[STREAM_GET], get);
	ck_assert_uint_eq(t.streams[STREAM_LEGACY], legacy);
	free(text);
}

START_TEST(test_counts)
{
	struct sup_client	*cl[3];
	struct sup_resp		*get[3], *call, *legacy, *ws;
	struct sup_frame	*f;
	size_t			 i;

	expect(0, 0, 0, 0, 0, 0);
	for (i = 0; i < 3; i++) {
		cl[i] = sup_session(NULL, NULL);
		get[i] = sup_get(cl[i], NULL);
		ck_assert_int_eq(get[i]->status, 200);
	}
	expect(3, 0, 0, 0, 3, 0);
	legacy = sup_http("GET", "/sse", "Accept: text/event-stream\r\n",
	    NULL);
	ck_assert_int_eq(legacy->status, 200);
	ws = sup_http("GET", "/ws", ws_upgrade, NULL);
	expect(3, 1, 1, 0, 3, 1);

	/* A call answered on an event stream: progress comes first. */
	call = sup_post(cl[0], "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"a__echo\",\"_meta\":"
	    "{\"progressToken\":7}}}");
	f = sup_take(sup_worker("a"), MSG_REQUEST);
	ck_assert_ptr_nonnull(f);
	sup_send(sup_worker("a"), MSG_NOTIFY, 0, f->session, f->tag,
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\","
	    "\"params\":{\"progressToken\":7,\"progress\":1}}");
	ck_assert_int_eq(call->status, 200);
	expect(3, 1, 1, 1, 3, 1);
	sup_reply(sup_worker("a"), f, "{\"content\":[]}");
	ck_assert_int_eq(call->done, 1);
	expect(3, 1, 1, 0, 3, 1);

	/* A stream's client goes: the session stays. */
	sup_release(get[1]->conn);
	sup_run();
	expect(3, 1, 1, 0, 2, 1);
	/* Resumed. */
	get[1] = sup_get(cl[1], NULL);
	ck_assert_int_eq(get[1]->status, 200);
	expect(3, 1, 1, 0, 3, 1);
	/* A session ends with its stream open. */
	ck_assert_int_eq(sup_delete(cl[2])->status, 200);
	expect(2, 1, 1, 0, 2, 1);
	/* The legacy and the WebSocket sessions end with their connection. */
	sup_release(legacy->conn);
	sup_release(ws->conn);
	sup_run();
	expect(2, 0, 0, 0, 2, 0);
}
END_TEST

/* Descriptors open, as the kernel or a whole read of the directory says. */
static long long
fds_now(void)
{
	struct stat	 sb;
	DIR		*d;
	struct dirent	*de;
	long long	 n = 0;

	if (stat("/proc/self/fd", &sb) == 0 && sb.st_size > 0)
		return ((long long)sb.st_size);
	ck_assert_ptr_nonnull(d = opendir("/proc/self/fd"));
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return (n - 1);
}

static long long
scrape_fds(void)
{
	char		*text = scrape();
	long long	 n = sample(text, "process_open_fds");

	free(text);
	return (n);
}

/* A few descriptors: a scrape counts them at once. */
START_TEST(test_fds_few)
{
	metrics_fds_walk(0);
	ck_assert_int_eq(scrape_fds(), fds_now());
	metrics_fds_walk(1);
	ck_assert_int_eq(scrape_fds(), fds_now());
}
END_TEST

/* Thousands: read a slice at a time, the last whole count given. */
START_TEST(test_fds_many)
{
	int		 p[NPIPES][2];
	long long	 n;
	size_t		 i;
	int		 turns;

	sup_nofile(2 * NPIPES + 256);
	for (i = 0; i < NPIPES; i++)
		ck_assert_int_eq(pipe(p[i]), 0);
	metrics_fds_walk(1);
	/* No walk has ended: no sample rather than a pause of the loop. */
	ck_assert_int_eq(scrape_fds(), -1);
	/* A turn reads a slice, not the rest. */
	sup_turn();
	ck_assert_int_eq(scrape_fds(), -1);
	for (turns = 0; turns < 100 && (n = scrape_fds()) == -1; turns++)
		sup_turn();
	ck_assert_int_gt(turns, 2);
	ck_assert_int_lt(turns, 100);
	/* That scrape began the next walk, whose descriptor is open. */
	sup_run();
	/* Read while nothing opened or closed: the count, exactly. */
	ck_assert_int_eq(n, fds_now());
	/* Half closed: a scrape still says the last whole count, and the
	 * walk it began gives the new one to the next. */
	for (i = 0; i < NPIPES / 2; i++) {
		close(p[i][0]);
		close(p[i][1]);
	}
	ck_assert_int_eq(scrape_fds(), n);
	sup_run();
	n = scrape_fds();
	sup_run();
	ck_assert_int_eq(n, fds_now());
	/* Few again: counted at once. */
	for (i = NPIPES / 2; i < NPIPES; i++) {
		close(p[i][0]);
		close(p[i][1]);
	}
	ck_assert_int_eq(scrape_fds(), fds_now());
}
END_TEST

static Suite *
metrics_suite(void)
{
	Suite	*s = suite_create("metrics");
	TCase	*tc;

	tc = tcase_create("counts");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_counts);
	suite_add_tcase(s, tc);
	tc = tcase_create("descriptors");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_fds_few);
	tcase_add_test(tc, test_fds_many);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	return (sup_check_main(metrics_suite()));
}
