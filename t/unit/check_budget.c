/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for common/budget.c: requests per minute as a bucket that
 * refills continuously, tokens per day over 24 hourly slots.
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
		ck_assert_int_eq(budget_check(&b, &bc, 5000, why, sizeof why),
		    0);
		budget_take(&b, &bc, 5000);
		budget_add_tokens(&b, 1000000, 5000);
	}
	ck_assert_uint_eq(budget_tokens_used(&b, 5000), 1000000000ULL);
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
		ck_assert_int_eq(budget_check(&b, &bc, t, why, sizeof why), 0);
		budget_take(&b, &bc, t);
	}
	ck_assert_int_eq(budget_check(&b, &bc, t, why, sizeof why), -1);
	ck_assert_str_eq(why, "3 requests per minute");
	ck_assert_uint_eq(budget_requests_left(&b, &bc, t), 0);
	/* A third of a minute gives one back, not more. */
	ck_assert_int_eq(budget_check(&b, &bc, t + MINUTE / 3 - 10, why,
	    sizeof why), -1);
	ck_assert_int_eq(budget_check(&b, &bc, t + MINUTE / 3, why,
	    sizeof why), 0);
	budget_take(&b, &bc, t + MINUTE / 3);
	ck_assert_int_eq(budget_check(&b, &bc, t + MINUTE / 3, why,
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
	ck_assert_int_eq(budget_check(&b, &bc, t, why, sizeof why), 0);
	budget_add_tokens(&b, 400, t + 2 * HOUR);
	ck_assert_uint_eq(budget_tokens_used(&b, t + 2 * HOUR), 1000);
	ck_assert_int_eq(budget_check(&b, &bc, t + 2 * HOUR, why, sizeof why),
	    -1);
	ck_assert_str_eq(why, "1000 tokens per day (1000 used)");
	/* The first 600 leave after 24 hours; the 400 stay. */
	ck_assert_uint_eq(budget_tokens_used(&b, t + 23 * HOUR), 1000);
	ck_assert_uint_eq(budget_tokens_used(&b, t + 24 * HOUR), 400);
	ck_assert_int_eq(budget_check(&b, &bc, t + 24 * HOUR, why, sizeof why),
	    0);
	/* After a silence of days, nothing is counted. */
	ck_assert_uint_eq(budget_tokens_used(&b, t + 90 * HOUR), 0);
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
