/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for common/xmalloc.c: after xmalloc_libraries(), libevent
 * and jansson allocate through xmalloc, so a failed allocation inside
 * either is fatal (exit 1), never a NULL or -1 their callers would have
 * to check.  The failure is made real by lowering RLIMIT_AS in the test's
 * own process (Check forks one per test).
 */
#include "config.h"

#include <sys/resource.h>

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <check.h>
#include <event2/buffer.h>
#include <jansson.h>

#include "xmalloc.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN	1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN	1
#endif
#endif

#define BIG	(512UL * 1024 * 1024)

/* Leave this process 64 MiB more address space than it has now. */
static void
limit_address_space(void)
{
	struct rlimit	 rl;
	unsigned long	 pages = 0;
	FILE		*f;

	f = fopen("/proc/self/statm", "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fscanf(f, "%lu", &pages), 1);
	fclose(f);
	rl.rlim_cur = rl.rlim_max = pages * (unsigned long)getpagesize() +
	    64UL * 1024 * 1024;
	ck_assert_int_eq(setrlimit(RLIMIT_AS, &rl), 0);
}

START_TEST(test_jansson)
{
	json_malloc_t	 m;
	json_free_t	 f;

	xmalloc_libraries();
	json_get_alloc_funcs(&m, &f);
	ck_assert(m == xmalloc);
	ck_assert(f == free);
}
END_TEST

/* Without xmalloc_libraries, libevent reports the failure itself... */
START_TEST(test_libevent_default)
{
	struct evbuffer	*b = evbuffer_new();

	limit_address_space();
	ck_assert_int_eq(evbuffer_expand(b, BIG), -1);
	evbuffer_free(b);
}
END_TEST

/* ...with it, the process ends in fatal(), exit 1. */
START_TEST(test_libevent_fatal)
{
	struct evbuffer	*b;

	xmalloc_libraries();
	b = evbuffer_new();
	limit_address_space();
	evbuffer_expand(b, BIG);
	/* Not reached. */
	evbuffer_free(b);
}
END_TEST

static Suite *
xmalloc_suite(void)
{
	Suite	*s = suite_create("xmalloc");
	TCase	*tc = tcase_create("core");

	tcase_add_test(tc, test_jansson);
#ifndef UNDER_ASAN
	/* ASan's allocator aborts on failure before xmalloc sees it. */
	tcase_add_test(tc, test_libevent_default);
	tcase_add_exit_test(tc, test_libevent_fatal, 1);
#endif
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr = srunner_create(xmalloc_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
