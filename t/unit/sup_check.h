/* SPDX-License-Identifier: ISC */
/*
 * What the supervisor's Check suites share: the start of a configuration,
 * assertions on JSON, and the main() that runs a suite.
 */
#ifndef SUP_CHECK_H
#define SUP_CHECK_H

#include <stdlib.h>

#include <check.h>

#include "sup_harness.h"

/* The start of every configuration: the rest is the test's. */
#define SUP_BASE \
	"listen = \"127.0.0.1:8931\";\n" \
	"control = \"/nonexistent/sup.sock\";\n" \
	"instance = \"t\";\n"

/* A JSON value's member at a path is a string, an integer. */
#define ck_assert_jstr(j, path, want) do {				\
	json_t *ck_j_ = (j);						\
	const char *ck_s_ = sup_jstr(ck_j_, (path));			\
	ck_assert_msg(ck_s_ != NULL && strcmp(ck_s_, (want)) == 0,	\
	    "%s is not \"%s\" in %s", (path), (want), sup_dump(ck_j_));	\
} while (0)
#define ck_assert_jint(j, path, want) do {				\
	json_t *ck_j_ = (j);						\
	ck_assert_msg(json_is_integer(sup_jget(ck_j_, (path))) &&	\
	    sup_jint(ck_j_, (path)) == (want),				\
	    "%s is not %lld in %s", (path), (long long)(want),		\
	    sup_dump(ck_j_));						\
} while (0)
/* An answer is an error with a code, or a result. */
#define ck_assert_error(j, code)	ck_assert_jint((j), "error.code", (code))
#define ck_assert_result(j) do {					\
	json_t *ck_r_ = (j);						\
	ck_assert_msg(sup_jget(ck_r_, "result") != NULL,		\
	    "not a result: %s", sup_dump(ck_r_));			\
} while (0)

/* Run one suite's test case, each test in a process of its own. */
static inline int
sup_check_main(Suite *s)
{
	SRunner	*sr = srunner_create(s);
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}

#endif
