/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for common/budget.c: requests per minute as a bucket that
 * refills continuously, tokens per day over 24 hourly slots, tokens
 * reserved by requests in flight and settled when they end.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "budget.h"

#define MINUTE	60000LL
#define HOUR	3600000LL

START_TEST(test_unlimited)
{
	struct budget		b;
	struct budget_conf	bc = { 0, 0 };
	char			why[128];
	int			i;

	budget_init(&b);
	for (i = 0; i < 1000; i++) {
		ck_assert_int_eq(budget_check(&b, &bc, 5000, 1000000, why,
		    sizeof why), 0);
		budget_take(&b, &bc, 5000, 1000000);
		budget_settle(&b, 1000000, 1000000, 5000);
	}
	ck_assert_uint_eq(budget_tokens_used(&b, 5000), 1000000000ULL);
	ck_assert_uint_eq(budget_tokens_reserved(&b), 0);
}
END_TEST

START_TEST(test_requests_per_minute)
{
	struct budget		b;
	struct budget_conf	bc = { 3, 0 };
	char			why[128];
	int64_t			t = 10 * HOUR;
	int			i;

	budget_init(&b);
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(budget_check(&b, &bc, t, 1, why, sizeof why), 0);
		budget_take(&b, &bc, t, 1);
	}
	ck_assert_int_eq(budget_check(&b, &bc, t, 1, why, sizeof why), -1);
	ck_assert_str_eq(why, "3 requests per minute");
	ck_assert_uint_eq(budget_requests_left(&b, &bc, t), 0);
	/* A third of a minute gives one back, not more. */
	ck_assert_int_eq(budget_check(&b, &bc, t + MINUTE / 3 - 10, 1, why,
	    sizeof why), -1);
	ck_assert_int_eq(budget_check(&b, &bc, t + MINUTE / 3, 1, why,
	    sizeof why), 0);
	budget_take(&b, &bc, t + MINUTE / 3, 1);
	ck_assert_int_eq(budget_check(&b, &bc, t + MINUTE / 3, 1, why,
	    sizeof why), -1);
	/* A long pause fills the bucket to a minute's worth only. */
	ck_assert_uint_eq(budget_requests_left(&b, &bc, t + 100 * MINUTE), 3);
}
END_TEST

START_TEST(test_tokens_per_day)
{
	struct budget		b;
	struct budget_conf	bc = { 0, 1000 };
	char			why[128];
	int64_t			t = 5 * HOUR + 123;

	budget_init(&b);
	budget_add_tokens(&b, 600, t);
	ck_assert_int_eq(budget_check(&b, &bc, t, 1, why, sizeof why), 0);
	budget_add_tokens(&b, 400, t + 2 * HOUR);
	ck_assert_uint_eq(budget_tokens_used(&b, t + 2 * HOUR), 1000);
	ck_assert_int_eq(budget_check(&b, &bc, t + 2 * HOUR, 0, why,
	    sizeof why), -1);
	ck_assert_str_eq(why, "1000 tokens per day: 1000 used or reserved, "
	    "this request reserves 0");
	/* The first 600 leave after 24 hours; the 400 stay. */
	ck_assert_uint_eq(budget_tokens_used(&b, t + 23 * HOUR), 1000);
	ck_assert_uint_eq(budget_tokens_used(&b, t + 24 * HOUR), 400);
	ck_assert_int_eq(budget_check(&b, &bc, t + 24 * HOUR, 600, why,
	    sizeof why), 0);
	ck_assert_int_eq(budget_check(&b, &bc, t + 24 * HOUR, 601, why,
	    sizeof why), -1);
	/* After a silence of days, nothing is counted. */
	ck_assert_uint_eq(budget_tokens_used(&b, t + 90 * HOUR), 0);
}
END_TEST

/* Requests reserve tokens when they start and settle when they end. */
START_TEST(test_reservations)
{
	struct budget		b;
	struct budget_conf	bc = { 0, 2500 };
	char			why[128];
	int64_t			t = 7 * HOUR;
	int			i, admitted = 0;

	budget_init(&b);
	/* Eight requests of 1030 each, none settled: two fit. */
	for (i = 0; i < 8; i++) {
		if (budget_check(&b, &bc, t, 1030, why, sizeof why) != 0)
			continue;
		budget_take(&b, &bc, t, 1030);
		admitted++;
	}
	ck_assert_int_eq(admitted, 2);
	ck_assert_uint_eq(budget_tokens_reserved(&b), 2060);
	ck_assert_uint_eq(budget_tokens_used(&b, t), 0);
	ck_assert_str_eq(why, "2500 tokens per day: 2060 used or reserved, "
	    "this request reserves 1030");
	/* One is cancelled and stays charged: reserved becomes used. */
	budget_settle(&b, 1030, 1030, t + 10);
	ck_assert_uint_eq(budget_tokens_reserved(&b), 1030);
	ck_assert_uint_eq(budget_tokens_used(&b, t + 10), 1030);
	/* The other completes having used 40: the room comes back. */
	budget_settle(&b, 1030, 40, t + 20);
	ck_assert_uint_eq(budget_tokens_reserved(&b), 0);
	ck_assert_uint_eq(budget_tokens_used(&b, t + 20), 1070);
	ck_assert_int_eq(budget_check(&b, &bc, t + 20, 1430, why, sizeof why),
	    0);
	ck_assert_int_eq(budget_check(&b, &bc, t + 20, 1431, why, sizeof why),
	    -1);
	/* One the provider never worked on is charged nothing. */
	budget_take(&b, &bc, t + 30, 1000);
	budget_settle(&b, 1000, 0, t + 30);
	ck_assert_uint_eq(budget_tokens_used(&b, t + 30), 1070);
	ck_assert_uint_eq(budget_tokens_reserved(&b), 0);
	/* A request larger than the whole budget never starts. */
	budget_init(&b);
	ck_assert_int_eq(budget_check(&b, &bc, t, 2501, why, sizeof why), -1);
	ck_assert_int_eq(budget_check(&b, &bc, t, 2500, why, sizeof why), 0);
	/* The reservation does not expire with the hour; what is charged
	 * leaves after 24 hours. */
	budget_take(&b, &bc, t, 2000);
	ck_assert_int_eq(budget_check(&b, &bc, t + 30 * HOUR, 501, why,
	    sizeof why), -1);
	budget_settle(&b, 2000, 2000, t + 30 * HOUR);
	ck_assert_uint_eq(budget_tokens_used(&b, t + 53 * HOUR), 2000);
	ck_assert_uint_eq(budget_tokens_used(&b, t + 54 * HOUR), 0);
}
END_TEST

/* Absurd figures saturate instead of wrapping. */
START_TEST(test_saturation)
{
	struct budget		b;
	struct budget_conf	bc = { 0, 1000000000000ULL };
	char			why[160];
	int64_t			t = HOUR;
	int			i;

	budget_init(&b);
	ck_assert_int_eq(budget_check(&b, &bc, t, UINT64_MAX, why, sizeof why),
	    -1);
	ck_assert_str_eq(why, "1000000000000 tokens per day: 0 used or "
	    "reserved, this request reserves 10000000000000");
	for (i = 0; i < 4096; i++)
		budget_take(&b, &bc, t, UINT64_MAX);
	ck_assert_uint_eq(budget_tokens_reserved(&b),
	    4096 * BUDGET_TOKENS_MAX);
	ck_assert_int_eq(budget_check(&b, &bc, t, 1, why, sizeof why), -1);
	for (i = 0; i < 4096; i++)
		budget_settle(&b, UINT64_MAX, UINT64_MAX, t);
	ck_assert_uint_eq(budget_tokens_reserved(&b), 0);
	ck_assert_uint_eq(budget_tokens_used(&b, t), 4096 * BUDGET_TOKENS_MAX);
	/* Settling more than was reserved leaves nothing reserved. */
	budget_take(&b, &bc, t, 5);
	budget_settle(&b, 10, 0, t);
	ck_assert_uint_eq(budget_tokens_reserved(&b), 0);
}
END_TEST

static Suite *
budget_suite(void)
{
	Suite	*s = suite_create("budget");
	TCase	*tc = tcase_create("basic");

	tcase_add_test(tc, test_unlimited);
	tcase_add_test(tc, test_requests_per_minute);
	tcase_add_test(tc, test_tokens_per_day);
	tcase_add_test(tc, test_reservations);
	tcase_add_test(tc, test_saturation);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr = srunner_create(budget_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
