/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for common/iochan.c, on a socketpair and a real event loop:
 * a read timeout that is cleared does not fire (libevent's event_add() with
 * no timeout keeps one already armed, which cut every event stream at 30 s).
 */
#include "config.h"

#include <sys/socket.h>

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

static Suite *
iochan_suite(void)
{
	Suite	*s = suite_create("iochan");
	TCase	*tc = tcase_create("basic");

	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_read_timeout_fires);
	tcase_add_test(tc, test_read_timeout_cleared);
	tcase_add_test(tc, test_write_and_read);
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
