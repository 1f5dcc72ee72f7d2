/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for common/env.c: which of the daemon's variables a worker
 * or an upstream gets, and the vectors they are built in.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "env.h"

START_TEST(test_names)
{
	ck_assert_int_eq(env_valid_name("GITHUB_TOKEN"), 1);
	ck_assert_int_eq(env_valid_name("_x1"), 1);
	ck_assert_int_eq(env_valid_name(""), 0);
	ck_assert_int_eq(env_valid_name("1X"), 0);
	ck_assert_int_eq(env_valid_name("A-B"), 0);
	ck_assert_int_eq(env_valid_name("A=B"), 0);
	ck_assert_int_eq(env_valid_name("LC_*"), 0);
}
END_TEST

START_TEST(test_match)
{
	static const char *const names[] = { "PATH", "LC_*", NULL };

	ck_assert_int_eq(env_match("PATH=/bin", names), 1);
	ck_assert_int_eq(env_match("PATH=", names), 1);
	ck_assert_int_eq(env_match("PATHX=/bin", names), 0);
	ck_assert_int_eq(env_match("PAT=/bin", names), 0);
	ck_assert_int_eq(env_match("path=/bin", names), 0);
	ck_assert_int_eq(env_match("LC_ALL=C", names), 1);
	ck_assert_int_eq(env_match("LC_=C", names), 1);
	ck_assert_int_eq(env_match("LC=C", names), 0);
	ck_assert_int_eq(env_match("PATH", names), 0);
	ck_assert_int_eq(env_match("LC_ALL", names), 0);
	/* The base set has no secret in it, and the lists end. */
	ck_assert_int_eq(env_match("OPENAI_API_KEY=sk", env_base), 0);
	ck_assert_int_eq(env_match("JOURNAL_STREAM=8:9", env_base), 0);
	ck_assert_int_eq(env_match("LANG=C.UTF-8", env_base), 1);
	ck_assert_int_eq(env_match("https_proxy=http://p:3128", env_net), 1);
	ck_assert_int_eq(env_match("https_proxy=http://p:3128", env_base), 0);
}
END_TEST

START_TEST(test_vector)
{
	static const char *const names[] = { "PATH", "HOME", "LC_*", NULL };
	char		*from[] = { "PATH=/bin", "SECRET=x", "LC_ALL=C",
			    "HOME=/h", "NOEQUALS", "LC_TIME=C", NULL };
	char		 home[] = "HOME=/other", extra[] = "NEW=1";
	char		 many[40][16];
	struct envv	 e;
	size_t		 i;

	envv_init(&e);
	ck_assert_int_eq(e.n, 0);
	ck_assert_ptr_null(e.v[0]);
	envv_pick(&e, from, names);
	ck_assert_int_eq(e.n, 4);
	ck_assert_str_eq(e.v[0], "PATH=/bin");
	ck_assert_str_eq(e.v[1], "LC_ALL=C");
	ck_assert_str_eq(e.v[2], "HOME=/h");
	ck_assert_str_eq(e.v[3], "LC_TIME=C");
	ck_assert_ptr_null(e.v[4]);
	envv_set(&e, home);
	envv_set(&e, extra);
	ck_assert_int_eq(e.n, 5);
	ck_assert_str_eq(e.v[2], "HOME=/other");
	ck_assert_str_eq(e.v[4], "NEW=1");
	ck_assert_ptr_null(e.v[5]);
	/* It grows, and stays terminated. */
	for (i = 0; i < 40; i++) {
		snprintf(many[i], sizeof many[i], "V%zu=%zu", i, i);
		envv_set(&e, many[i]);
	}
	ck_assert_int_eq(e.n, 45);
	ck_assert_str_eq(e.v[44], "V39=39");
	ck_assert_ptr_null(e.v[45]);
	envv_free(&e);
	ck_assert_ptr_null(e.v);
}
END_TEST

static Suite *
env_suite(void)
{
	Suite	*s = suite_create("env");
	TCase	*tc = tcase_create("basic");

	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_match);
	tcase_add_test(tc, test_vector);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr = srunner_create(env_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
