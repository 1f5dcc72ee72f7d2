/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for common/ringmap.c: a string map of bounded size that
 * forgets its oldest entry first.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "ringmap.h"

/* The key for number i. */
static const char *
key(unsigned int i)
{
	static char	buf[32];

	snprintf(buf, sizeof buf, "elicitation-%u", i);
	return (buf);
}

START_TEST(test_put_take)
{
	struct ringmap	m;
	uint32_t	v = 0;

	ringmap_init(&m, 4);
	ck_assert_int_eq(ringmap_take(&m, "a", &v), -1);
	ck_assert_ptr_null(ringmap_put(&m, "a", 1));
	ck_assert_ptr_null(ringmap_put(&m, "b", 2));
	ck_assert_uint_eq(ringmap_count(&m), 2);
	ck_assert_int_eq(ringmap_take(&m, "b", &v), 0);
	ck_assert_uint_eq(v, 2);
	ck_assert_int_eq(ringmap_take(&m, "b", &v), -1);
	ck_assert_int_eq(ringmap_take(&m, "a", &v), 0);
	ck_assert_uint_eq(v, 1);
	ck_assert_uint_eq(ringmap_count(&m), 0);
	ringmap_free(&m);
}
END_TEST

START_TEST(test_put_again_keeps_place)
{
	struct ringmap	m;
	uint32_t	v = 0;
	char		*old;

	ringmap_init(&m, 2);
	ck_assert_ptr_null(ringmap_put(&m, "a", 1));
	ck_assert_ptr_null(ringmap_put(&m, "b", 2));
	/* a takes its new value but stays the oldest. */
	ck_assert_ptr_null(ringmap_put(&m, "a", 3));
	ck_assert_uint_eq(ringmap_count(&m), 2);
	old = ringmap_put(&m, "c", 4);
	ck_assert_str_eq(old, "a");
	free(old);
	ck_assert_int_eq(ringmap_take(&m, "a", &v), -1);
	ck_assert_int_eq(ringmap_take(&m, "b", &v), 0);
	ck_assert_uint_eq(v, 2);
	ck_assert_int_eq(ringmap_take(&m, "c", &v), 0);
	ck_assert_uint_eq(v, 4);
	ringmap_free(&m);
}
END_TEST

/* The gateway's size: one past 1024 forgets exactly the first. */
START_TEST(test_oldest_forgotten_first)
{
	struct ringmap	m;
	uint32_t	v = 0;
	unsigned int	i;
	char		*old;

	ringmap_init(&m, 1024);
	for (i = 0; i < 1024; i++)
		ck_assert_ptr_null(ringmap_put(&m, key(i), i));
	ck_assert_uint_eq(ringmap_count(&m), 1024);
	for (i = 1024; i < 1024 + 10; i++) {
		old = ringmap_put(&m, key(i), i);
		ck_assert_ptr_nonnull(old);
		ck_assert_str_eq(old, key(i - 1024));
		free(old);
	}
	ck_assert_uint_eq(ringmap_count(&m), 1024);
	for (i = 0; i < 10; i++)
		ck_assert_int_eq(ringmap_take(&m, key(i), &v), -1);
	for (i = 10; i < 1024 + 10; i++) {
		ck_assert_int_eq(ringmap_take(&m, key(i), &v), 0);
		ck_assert_uint_eq(v, i);
	}
	ck_assert_uint_eq(ringmap_count(&m), 0);
	ringmap_free(&m);
}
END_TEST

/* A slot freed by take is reused in turn, and forgets nothing. */
START_TEST(test_taken_slot_reused)
{
	struct ringmap	m;
	uint32_t	v = 0;
	char		*old;

	ringmap_init(&m, 3);
	ck_assert_ptr_null(ringmap_put(&m, "a", 1));
	ck_assert_ptr_null(ringmap_put(&m, "b", 2));
	ck_assert_ptr_null(ringmap_put(&m, "c", 3));
	ck_assert_int_eq(ringmap_take(&m, "a", &v), 0);
	/* d goes where a was: nothing to forget. */
	ck_assert_ptr_null(ringmap_put(&m, "d", 4));
	/* e goes where b is: b is forgotten, c and d stay. */
	old = ringmap_put(&m, "e", 5);
	ck_assert_str_eq(old, "b");
	free(old);
	ck_assert_int_eq(ringmap_take(&m, "c", &v), 0);
	ck_assert_int_eq(ringmap_take(&m, "d", &v), 0);
	ck_assert_int_eq(ringmap_take(&m, "e", &v), 0);
	ck_assert_uint_eq(v, 5);
	ringmap_free(&m);
}
END_TEST

/* Freed with keys still in it (the sanitizer pass finds any leak). */
START_TEST(test_free_full)
{
	struct ringmap	m;
	unsigned int	i;

	ringmap_init(&m, 1);
	for (i = 0; i < 5; i++)
		free(ringmap_put(&m, key(i), i));
	ck_assert_uint_eq(ringmap_count(&m), 1);
	ringmap_free(&m);
	ck_assert_ptr_null(m.slots);
}
END_TEST

static Suite *
ringmap_suite(void)
{
	Suite	*s = suite_create("ringmap");
	TCase	*tc = tcase_create("basic");

	tcase_add_test(tc, test_put_take);
	tcase_add_test(tc, test_put_again_keeps_place);
	tcase_add_test(tc, test_oldest_forgotten_first);
	tcase_add_test(tc, test_taken_slot_reused);
	tcase_add_test(tc, test_free_full);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr = srunner_create(ringmap_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
