/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for common/idtrack.c: the id of a response that is too large
 * to keep, found while its bytes stream past.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "idtrack.h"

/* Feed a text in pieces of the given size; return the id or -1. */
static int64_t
track(const char *text, size_t piece)
{
	struct idtrack	t;
	size_t		n = strlen(text), i;
	int64_t		id;

	idtrack_init(&t);
	for (i = 0; i < n; i += piece)
		idtrack_feed(&t, text + i, n - i < piece ? n - i : piece);
	return (idtrack_int64(&t, &id) == 0 ? id : -1);
}

START_TEST(test_id_first)
{
	const char	*m = "{\"jsonrpc\":\"2.0\",\"id\":42,\"result\":"
	    "{\"content\":[{\"type\":\"text\",\"text\":\"xxxx\"}]}}";
	size_t		 piece;

	for (piece = 1; piece <= strlen(m); piece++)
		ck_assert_int_eq(track(m, piece), 42);
}
END_TEST

START_TEST(test_id_last)
{
	/* The TypeScript SDK writes { result, jsonrpc, id }. */
	ck_assert_int_eq(track("{\"result\":{\"a\":\"}\\\"{\",\"id\":7,"
	    "\"b\":[1,{\"id\":9}]},\"jsonrpc\":\"2.0\",\"id\":13}", 3), 13);
	ck_assert_int_eq(track(" \n{ \"error\" : {\"code\":-1} , \"id\" : 5 }",
	    1), 5);
}
END_TEST

START_TEST(test_not_a_response)
{
	/* A request from the upstream has an id too: never ours. */
	ck_assert_int_eq(track("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":"
	    "\"sampling/createMessage\",\"params\":{}}", 4), -1);
	/* String ids are not the worker's; nested ids do not count. */
	ck_assert_int_eq(track("{\"id\":\"3\",\"result\":{}}", 2), -1);
	ck_assert_int_eq(track("{\"result\":{\"id\":3}}", 2), -1);
	/* An escaped key is not trusted, nor a second id. */
	ck_assert_int_eq(track("{\"\\u0069d\":3,\"result\":{}}", 2), -1);
	ck_assert_int_eq(track("{\"id\":3,\"id\":4,\"result\":{}}", 2), -1);
	ck_assert_int_eq(track("[1,2]", 1), -1);
	ck_assert_int_eq(track("{\"id\":null,\"error\":{}}", 1), -1);
}
END_TEST

START_TEST(test_long_id)
{
	char	m[256];

	snprintf(m, sizeof m, "{\"id\":%s,\"result\":1}",
	    "12345678901234567890123456789012345678901234567890123456789012345"
	    "67890");
	ck_assert_int_eq(track(m, 5), -1);
}
END_TEST

static Suite *
idtrack_suite(void)
{
	Suite	*s = suite_create("idtrack");
	TCase	*tc = tcase_create("basic");

	tcase_add_test(tc, test_id_first);
	tcase_add_test(tc, test_id_last);
	tcase_add_test(tc, test_not_a_response);
	tcase_add_test(tc, test_long_id);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr = srunner_create(idtrack_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
