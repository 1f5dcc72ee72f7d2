/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for common/iochan.c, on a socketpair and a real event loop:
 * a read timeout that is cleared does not fire (libevent's event_add() with
 * no timeout keeps one already armed, which cut every event stream at 30 s);
 * output of many pieces, more than the kernel takes at once, arrives whole
 * and in order, on a socket (send and recvmsg) as on a pipe (writev and
 * readv); the output callback counts what is queued and written.
 */
#include "config.h"

#include <sys/socket.h>

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <event2/buffer.h>
#include <event2/event.h>

#include "iochan.h"

static int	timeouts;
static int	reads;

static void
read_cb(struct iochan *ch, void *arg)
{
	struct evbuffer	*in = iochan_input(ch);

	reads++;
	evbuffer_drain(in, evbuffer_get_length(in));
}

static void
event_cb(struct iochan *ch, int what, void *arg)
{
	if (what & IOCHAN_TIMEOUT)
		timeouts++;
	iochan_read(ch, 0);
}

/* Run the loop for ms milliseconds. */
static void
run_for(struct event_base *base, int ms)
{
	struct timeval	tv = { ms / 1000, (ms % 1000) * 1000 };

	event_base_loopexit(base, &tv);
	event_base_dispatch(base);
}

START_TEST(test_read_timeout_fires)
{
	struct event_base	*base = event_base_new();
	struct iochan		*ch;
	int			 sv[2];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0,
	    sv), 0);
	timeouts = reads = 0;
	ch = iochan_new(base, sv[0], read_cb, NULL, event_cb, NULL);
	iochan_timeouts(ch, 1, 0);
	run_for(base, 1500);
	ck_assert_int_eq(timeouts, 1);
	iochan_free(ch);
	close(sv[1]);
	event_base_free(base);
}
END_TEST

START_TEST(test_read_timeout_cleared)
{
	struct event_base	*base = event_base_new();
	struct iochan		*ch;
	int			 sv[2];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0,
	    sv), 0);
	timeouts = reads = 0;
	ch = iochan_new(base, sv[0], read_cb, NULL, event_cb, NULL);
	iochan_timeouts(ch, 1, 0);
	run_for(base, 300);
	iochan_timeouts(ch, 0, 0);
	run_for(base, 1500);
	ck_assert_int_eq(timeouts, 0);
	/* Reading still works without a timeout. */
	ck_assert_int_eq(write(sv[1], "x", 1), 1);
	run_for(base, 100);
	ck_assert_int_eq(reads, 1);
	ck_assert_int_eq(timeouts, 0);
	iochan_free(ch);
	close(sv[1]);
	event_base_free(base);
}
END_TEST

START_TEST(test_write_and_read)
{
	struct event_base	*base = event_base_new();
	struct iochan		*ch;
	char			 buf[8];
	int			 sv[2];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0,
	    sv), 0);
	timeouts = reads = 0;
	ch = iochan_new(base, sv[0], read_cb, NULL, event_cb, NULL);
	evbuffer_add(iochan_output(ch), "hello", 5);
	run_for(base, 100);
	ck_assert_int_eq(read(sv[1], buf, sizeof buf), 5);
	ck_assert_int_eq(memcmp(buf, "hello", 5), 0);
	iochan_free(ch);
	close(sv[1]);
	event_base_free(base);
}
END_TEST

static size_t	counted_added, counted_deleted, counted_queued;

/* Count the output's changes, as http.c does for max_buffered. */
static void
count_cb(struct iochan *ch, size_t added, size_t deleted, void *arg)
{
	counted_added += added;
	counted_deleted += deleted;
	counted_queued = iochan_queued(ch);
}

/* The output callback sees what is queued and what is written. */
START_TEST(test_output_counted)
{
	struct event_base	*base = event_base_new();
	struct iochan		*ch;
	char			 buf[16];
	int			 sv[2];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0,
	    sv), 0);
	counted_added = counted_deleted = counted_queued = 0;
	ch = iochan_new(base, sv[0], read_cb, NULL, event_cb, NULL);
	iochan_on_output(ch, count_cb);
	evbuffer_add(iochan_output(ch), "hello", 5);
	evbuffer_add(iochan_output(ch), ", you", 5);
	ck_assert_uint_eq(counted_added, 10);
	ck_assert_uint_eq(counted_deleted, 0);
	ck_assert_uint_eq(counted_queued, 10);
	/* Written at the end of the turn, and counted so. */
	run_for(base, 100);
	ck_assert_uint_eq(counted_deleted, 10);
	ck_assert_uint_eq(counted_queued, 0);
	ck_assert_int_eq(read(sv[1], buf, sizeof buf), 10);
	ck_assert_int_eq(memcmp(buf, "hello, you", 10), 0);
	iochan_free(ch);
	close(sv[1]);
	event_base_free(base);
}
END_TEST

#define PIECES		1000	/* pieces of output, each a chain */
#define PIECE_SIZE	3001	/* bytes in each: 3 MB in all */

static unsigned char	*piece_bytes;	/* every piece's, end to end */
static size_t		 got;		/* bytes the reader has */

/* Keep what arrives; stop the loop once everything has. */
static void
keep_cb(struct iochan *ch, void *arg)
{
	struct event_base	*base = arg;

	got = evbuffer_get_length(iochan_input(ch));
	if (got == (size_t)PIECES * PIECE_SIZE)
		event_base_loopbreak(base);
}

/*
 * Send PIECES pieces, each a chain of its own (by reference), from fds[0]
 * to an iochan reading fds[1]; check that all arrive in order.
 */
static void
pass_pieces(int fds[2])
{
	struct event_base	*base = event_base_new();
	struct iochan		*w, *r;
	struct evbuffer		*out;
	size_t			 i, total = (size_t)PIECES * PIECE_SIZE;

	piece_bytes = malloc(total);
	ck_assert_ptr_nonnull(piece_bytes);
	for (i = 0; i < total; i++)
		piece_bytes[i] = (unsigned char)(i * 7 + i / 251);
	got = 0;
	w = iochan_new(base, fds[0], NULL, NULL, event_cb, NULL);
	r = iochan_new(base, fds[1], keep_cb, NULL, event_cb, base);
	out = iochan_output(w);
	for (i = 0; i < PIECES; i++)
		evbuffer_add_reference(out, piece_bytes + i * PIECE_SIZE,
		    PIECE_SIZE, NULL, NULL);
	ck_assert_uint_eq(evbuffer_get_length(out), total);
	run_for(base, 10000);
	ck_assert_uint_eq(got, total);
	ck_assert_uint_eq(iochan_queued(w), 0);
	ck_assert_int_eq(memcmp(evbuffer_pullup(iochan_input(r), -1),
	    piece_bytes, total), 0);
	iochan_free(w);
	iochan_free(r);
	event_base_free(base);
	free(piece_bytes);
}

START_TEST(test_pieces_socket)
{
	int	sv[2];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0,
	    sv), 0);
	pass_pieces(sv);
}
END_TEST

START_TEST(test_pieces_pipe)
{
	int	p[2], fds[2];

	ck_assert_int_eq(pipe2(p, O_NONBLOCK), 0);
	fds[0] = p[1];
	fds[1] = p[0];
	pass_pieces(fds);
}
END_TEST

static Suite *
iochan_suite(void)
{
	Suite	*s = suite_create("iochan");
	TCase	*tc = tcase_create("basic");

	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_read_timeout_fires);
	tcase_add_test(tc, test_read_timeout_cleared);
	tcase_add_test(tc, test_write_and_read);
	tcase_add_test(tc, test_output_counted);
	tcase_add_test(tc, test_pieces_socket);
	tcase_add_test(tc, test_pieces_pipe);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr = srunner_create(iochan_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
