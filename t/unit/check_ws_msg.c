/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for common/ws_msg.c: a WebSocket message reassembled from its
 * frames, its limit and its deadline; with wslay's server context in
 * no-buffering mode fed frames as a client sends them (masked), as the
 * supervisor, the worker and mcpctl connect use it.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <wslay/wslay.h>

#include "ws_msg.h"

/* What wslay reads from, and what came out. */
struct feed {
	const uint8_t	*p;
	size_t		 len;
	size_t		 off;
	struct ws_msg	 msg;
	int		 refused;	/* the close code ws_msg_start gave */
	int		 texts;		/* whole text messages */
	int		 failed;	/* the end of a refused one */
	int		 pings;
	char		 last[256];	/* the last text message */
	size_t		 most_cap;	/* the largest buffer seen */
};

static ssize_t
feed_recv(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, int flags,
    void *arg)
{
	struct feed	*f = arg;

	if (f->off == f->len) {
		wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
		return (-1);
	}
	if (len > f->len - f->off)
		len = f->len - f->off;
	memcpy(buf, f->p + f->off, len);
	f->off += len;
	return ((ssize_t)len);
}

static ssize_t
feed_send(wslay_event_context_ptr ctx, const uint8_t *data, size_t len,
    int flags, void *arg)
{
	return ((ssize_t)len);
}

static void
feed_start(wslay_event_context_ptr ctx,
    const struct wslay_event_on_frame_recv_start_arg *arg, void *user)
{
	struct feed	*f = user;
	int		 r;

	if ((r = ws_msg_start(&f->msg, arg, 0)) != 0) {
		f->refused = r;
		wslay_event_shutdown_read(ctx);
	}
}

static void
feed_chunk(wslay_event_context_ptr ctx,
    const struct wslay_event_on_frame_recv_chunk_arg *arg, void *user)
{
	struct feed	*f = user;

	ws_msg_chunk(&f->msg, arg->data, arg->data_length);
	if (f->msg.cap > f->most_cap)
		f->most_cap = f->msg.cap;
}

static void
feed_msg(wslay_event_context_ptr ctx,
    const struct wslay_event_on_msg_recv_arg *arg, void *user)
{
	struct feed	*f = user;

	if (arg->opcode == WSLAY_PING)
		f->pings++;
	if (arg->opcode != WSLAY_TEXT_FRAME)
		return;
	ck_assert_ptr_null(arg->msg);	/* wslay kept none of it */
	/* wslay reads on to the end of the frame it refused. */
	if (f->msg.failed) {
		f->failed++;
		return;
	}
	f->texts++;
	snprintf(f->last, sizeof f->last, "%.*s", (int)f->msg.len,
	    (const char *)f->msg.buf);
	ws_msg_reset(&f->msg);
}

/* Append a masked client frame (mask 0: the payload goes as it is). */
static size_t
put_frame(uint8_t *out, int fin, int opcode, const void *p, size_t len)
{
	size_t	n = 0;

	out[n++] = (uint8_t)((fin ? 0x80 : 0) | opcode);
	if (len < 126)
		out[n++] = (uint8_t)(0x80 | len);
	else {
		out[n++] = 0x80 | 126;
		out[n++] = (uint8_t)(len >> 8);
		out[n++] = (uint8_t)len;
	}
	memset(out + n, 0, 4);
	n += 4;
	memcpy(out + n, p, len);
	return (n + len);
}

/* Run frames through wslay with ws_msg limited to max. */
static void
run(struct feed *f, const uint8_t *p, size_t len, size_t max)
{
	struct wslay_event_callbacks	 cbs = {
		feed_recv, feed_send, NULL, feed_start, feed_chunk, NULL,
		feed_msg
	};
	wslay_event_context_ptr		 ctx;

	memset(f, 0, sizeof *f);
	f->p = p;
	f->len = len;
	ws_msg_init(&f->msg, max);
	ck_assert_int_eq(wslay_event_context_server_init(&ctx, &cbs, f), 0);
	wslay_event_config_set_no_buffering(ctx, 1);
	wslay_event_config_set_max_recv_msg_length(ctx, max);
	ck_assert_int_eq(wslay_event_recv(ctx), 0);
	wslay_event_context_free(ctx);
}

/* A message a byte per fragment, a ping among them, a character of two
 * bytes split between two fragments: whole, in a buffer of its size. */
START_TEST(test_one_byte_fragments)
{
	const char	*text = "{\"text\":\"ws alivé\"}";
	size_t		 len = strlen(text), i, n = 0;
	uint8_t		*buf = malloc(len * 8 + 64);
	struct feed	 f;

	n += put_frame(buf + n, 0, WSLAY_TEXT_FRAME, text, 1);
	n += put_frame(buf + n, 1, WSLAY_PING, "between", 7);
	for (i = 1; i < len; i++)
		n += put_frame(buf + n, i == len - 1, WSLAY_CONTINUATION_FRAME,
		    text + i, 1);
	run(&f, buf, n, 1024 * 1024);
	ck_assert_int_eq(f.refused, 0);
	ck_assert_int_eq(f.texts, 1);
	ck_assert_int_eq(f.pings, 1);
	ck_assert_str_eq(f.last, text);
	ck_assert_uint_le(f.most_cap, 1024);
	ck_assert(!ws_msg_pending(&f.msg));
	free(buf);
}
END_TEST

/* 100 000 fragments of a byte cost 100 000 bytes, not 90 times that. */
START_TEST(test_many_fragments_cost_their_size)
{
	size_t		 count = 100000, i, n = 0;
	uint8_t		*buf = malloc(count * 7 + 64);
	struct feed	 f;

	n += put_frame(buf + n, 0, WSLAY_TEXT_FRAME, "x", 1);
	for (i = 1; i < count; i++)
		n += put_frame(buf + n, 0, WSLAY_CONTINUATION_FRAME, "x", 1);
	run(&f, buf, n, 1024 * 1024);
	ck_assert_int_eq(f.refused, 0);
	ck_assert_int_eq(f.texts, 0);
	ck_assert(ws_msg_pending(&f.msg));
	ck_assert_uint_eq(f.msg.len, count);
	ck_assert_uint_eq(f.msg.frames, count);
	ck_assert_uint_le(f.msg.cap, 2 * count);
	ws_msg_reset(&f.msg);
	free(buf);
}
END_TEST

/* Fragments adding up past the limit: refused at the one that passes it,
 * with 1009; the buffer never grew past the limit.  Exactly the limit is
 * taken. */
START_TEST(test_limit)
{
	uint8_t		 buf[4096], part[600];
	size_t		 n = 0;
	struct feed	 f;

	memset(part, 'a', sizeof part);
	n += put_frame(buf + n, 0, WSLAY_TEXT_FRAME, part, 500);
	n += put_frame(buf + n, 0, WSLAY_CONTINUATION_FRAME, part, 500);
	n += put_frame(buf + n, 1, WSLAY_CONTINUATION_FRAME, part, 25);
	run(&f, buf, n, 1024);
	ck_assert_int_eq(f.refused, WSLAY_CODE_MESSAGE_TOO_BIG);
	ck_assert_int_eq(f.texts, 0);
	ck_assert_int_eq(f.failed, 1);
	ck_assert_uint_eq(f.msg.len, 1000);
	ck_assert_uint_le(f.msg.cap, 1024);
	ws_msg_reset(&f.msg);

	n = 0;
	n += put_frame(buf + n, 0, WSLAY_TEXT_FRAME, part, 500);
	n += put_frame(buf + n, 0, WSLAY_CONTINUATION_FRAME, part, 500);
	n += put_frame(buf + n, 1, WSLAY_CONTINUATION_FRAME, part, 24);
	run(&f, buf, n, 1024);
	ck_assert_int_eq(f.refused, 0);
	ck_assert_int_eq(f.texts, 1);
}
END_TEST

/* Two messages in a row: the second starts afresh. */
START_TEST(test_two_messages)
{
	uint8_t		 buf[256];
	size_t		 n = 0;
	struct feed	 f;

	n += put_frame(buf + n, 0, WSLAY_TEXT_FRAME, "ab", 2);
	n += put_frame(buf + n, 1, WSLAY_CONTINUATION_FRAME, "c", 1);
	n += put_frame(buf + n, 1, WSLAY_TEXT_FRAME, "de", 2);
	run(&f, buf, n, 1024);
	ck_assert_int_eq(f.texts, 2);
	ck_assert_str_eq(f.last, "de");
}
END_TEST

/* The deadline: WS_MSG_TIMEOUT s from the first frame, plus a second per
 * WS_MSG_RATE bytes received; none without a message. */
START_TEST(test_deadline)
{
	struct wslay_event_on_frame_recv_start_arg	 first = {
		0, 0, WSLAY_TEXT_FRAME, 0
	}, more = { 0, 0, WSLAY_CONTINUATION_FRAME, 0 };
	struct ws_msg					 m;
	uint8_t						*data;

	ws_msg_init(&m, 1024 * 1024);
	ck_assert_int_eq(ws_msg_left(&m, 5000), -1);
	first.payload_length = 1;
	ck_assert_int_eq(ws_msg_start(&m, &first, 1000), 0);
	ws_msg_chunk(&m, (const uint8_t *)"x", 1);
	ck_assert_int_eq(ws_msg_left(&m, 1000), WS_MSG_TIMEOUT * 1000);
	ck_assert_int_eq(ws_msg_left(&m, 1000 + WS_MSG_TIMEOUT * 1000 - 1), 1);
	ck_assert_int_eq(ws_msg_left(&m, 1000 + WS_MSG_TIMEOUT * 1000), 0);
	/* Later fragments do not move its start; bytes give more time. */
	data = calloc(1, WS_MSG_RATE);
	more.payload_length = WS_MSG_RATE - 1;
	ck_assert_int_eq(ws_msg_start(&m, &more, 20000), 0);
	ws_msg_chunk(&m, data, WS_MSG_RATE - 1);
	ck_assert_uint_eq(m.len, WS_MSG_RATE);
	ck_assert_int_eq(ws_msg_left(&m, 1000 + WS_MSG_TIMEOUT * 1000), 1000);
	ck_assert_int_eq(ws_msg_left(&m, 2000 + WS_MSG_TIMEOUT * 1000), 0);
	ws_msg_reset(&m);
	ck_assert_int_eq(ws_msg_left(&m, 99999), -1);
	ck_assert_uint_eq(m.max, 1024 * 1024);
	free(data);
}
END_TEST

static Suite *
ws_msg_suite(void)
{
	Suite	*s = suite_create("ws_msg");
	TCase	*tc = tcase_create("core");

	tcase_add_test(tc, test_one_byte_fragments);
	tcase_add_test(tc, test_many_fragments_cost_their_size);
	tcase_add_test(tc, test_limit);
	tcase_add_test(tc, test_two_messages);
	tcase_add_test(tc, test_deadline);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr = srunner_create(ws_msg_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
