/* SPDX-License-Identifier: ISC */
/*
 * The HTTP connection limit (supervisor/http.c): at the limit, a new
 * connection takes the place of the one kept alive between requests the
 * longest, once it has been idle a second; connections with work under
 * way (a head coming, an open stream) are never closed for it, and when
 * none is idle the new one gets 503.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "supervisor.h"

#include "sup_check.h"

extern unsigned int	http_max_conns;

static void
setup(void)
{
	sup_start(SUP_BASE "servers = ( { name = \"a\"; command = "
	    "[ \"/bin/true\" ]; } );\n");
	http_max_conns = 3;
}

static void
teardown(void)
{
	sup_stop();
}

START_TEST(test_shed_idle)
{
	struct sup_conn	*c[3], *n;
	struct sup_resp	*r;
	int		 i;

	/* Three connections, each kept alive after a request. */
	for (i = 0; i < 3; i++) {
		c[i] = sup_connect();
		r = sup_request(c[i], "GET", "/healthz", NULL, NULL);
		ck_assert_int_eq(r->status, 200);
	}
	ck_assert_uint_eq(http_conn_count(), 3);
	/* Idle for less than a second: not closed; the new one refused. */
	n = sup_connect();
	r = sup_request(n, "GET", "/healthz", NULL, NULL);
	ck_assert_int_eq(r->status, 503);
	ck_assert(!c[0]->eof);
	/* Idle for a second: the longest idle goes, the new one is served. */
	usleep(1100 * 1000);
	n = sup_connect();
	r = sup_request(n, "GET", "/healthz", NULL, NULL);
	ck_assert_int_eq(r->status, 200);
	ck_assert(c[0]->eof);
	ck_assert(!c[1]->eof && !c[2]->eof);
	/* The others still serve. */
	r = sup_request(c[1], "GET", "/healthz", NULL, NULL);
	ck_assert_int_eq(r->status, 200);
}
END_TEST

START_TEST(test_busy_kept)
{
	struct sup_conn	*c[3], *n;
	struct sup_resp	*r;
	int		 i;

	/* Three connections with a head begun, none finished. */
	for (i = 0; i < 3; i++) {
		c[i] = sup_connect();
		sup_write(c[i], "GET /healthz HTTP/1.1\r\n", 23);
	}
	usleep(1100 * 1000);
	n = sup_connect();
	r = sup_request(n, "GET", "/healthz", NULL, NULL);
	ck_assert_int_eq(r->status, 503);
	for (i = 0; i < 3; i++)
		ck_assert(!c[i]->eof);
	/* One finishes its request and is idle: it may go, later. */
	sup_write(c[0], "Host: 127.0.0.1:8931\r\n\r\n", 24);
	r = sup_response(c[0], 0);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(r->status, 200);
	usleep(1100 * 1000);
	n = sup_connect();
	r = sup_request(n, "GET", "/healthz", NULL, NULL);
	ck_assert_int_eq(r->status, 200);
	ck_assert(c[0]->eof);
	ck_assert(!c[1]->eof && !c[2]->eof);
}
END_TEST

static Suite *
conns_suite(void)
{
	Suite	*s = suite_create("conns");
	TCase	*tc = tcase_create("limit");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_shed_idle);
	tcase_add_test(tc, test_busy_kept);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	return (sup_check_main(conns_suite()));
}
