/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for common/prom.c: the Prometheus text format's histograms,
 * labels and samples.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <event2/buffer.h>

#include "prom.h"

/* The text written to a buffer (freed on the next call). */
static const char *
text(struct evbuffer *b)
{
	static char	*s;

	free(s);
	s = calloc(1, evbuffer_get_length(b) + 1);
	evbuffer_remove(b, s, evbuffer_get_length(b));
	return (s);
}

START_TEST(test_buckets)
{
	struct prom_hist	h;
	size_t			i;

	memset(&h, 0, sizeof h);
	/* Bounds are inclusive (le), beyond the last is +Inf. */
	prom_hist_observe(&h, 0);
	prom_hist_observe(&h, 100);
	prom_hist_observe(&h, 101);
	prom_hist_observe(&h, 60000000);
	prom_hist_observe(&h, 60000001);
	prom_hist_observe(&h, UINT32_MAX);
	ck_assert_uint_eq(h.count[0], 2);
	ck_assert_uint_eq(h.count[1], 1);
	ck_assert_uint_eq(h.count[PROM_NBUCKETS - 1], 1);
	ck_assert_uint_eq(h.count[PROM_NBUCKETS], 2);
	ck_assert_uint_eq(prom_hist_total(&h), 6);
	ck_assert_uint_eq(h.sum_us, 0 + 100 + 101 + 60000000 + 60000001 +
	    (uint64_t)UINT32_MAX);
	for (i = 1; i < PROM_NBUCKETS; i++)
		ck_assert_uint_gt(prom_bucket_us[i], prom_bucket_us[i - 1]);
}
END_TEST

START_TEST(test_labels)
{
	char	buf[64], small[24];

	prom_labels(buf, sizeof buf, NULL);
	ck_assert_str_eq(buf, "");
	prom_labels(buf, sizeof buf, "upstream", "demo", "method",
	    "tools/call", NULL);
	ck_assert_str_eq(buf, "upstream=\"demo\",method=\"tools/call\"");
	/* Escapes: backslash, quote, newline. */
	prom_labels(buf, sizeof buf, "v", "a\\b\"c\nd", NULL);
	ck_assert_str_eq(buf, "v=\"a\\\\b\\\"c\\nd\"");
	/* Cut short, it stays well formed: every value closed. */
	prom_labels(small, sizeof small, "upstream",
	    "a-very-long-upstream-name", "method", "x", NULL);
	ck_assert_int_lt((int)strlen(small), (int)sizeof small);
	ck_assert_int_eq(small[strlen(small) - 1], '"');
	ck_assert_ptr_null(strstr(small, "method"));
}
END_TEST

START_TEST(test_samples)
{
	struct evbuffer	*b = evbuffer_new();

	prom_header(b, "x_total", "counter", "Things.");
	prom_sample_u64(b, "x_total", "", 42);
	prom_sample_u64(b, "x_total", "k=\"v\"", 18446744073709551615ULL);
	prom_sample_double(b, "y", "", 0.5);
	ck_assert_str_eq(text(b), "# HELP x_total Things.\n"
	    "# TYPE x_total counter\n"
	    "x_total 42\n"
	    "x_total{k=\"v\"} 18446744073709551615\n"
	    "y 0.5\n");
	evbuffer_free(b);
}
END_TEST

START_TEST(test_histogram)
{
	struct evbuffer		*b = evbuffer_new();
	struct prom_hist	 h;
	const char		*t;

	memset(&h, 0, sizeof h);
	prom_hist_observe(&h, 50);
	prom_hist_observe(&h, 300);
	prom_hist_observe(&h, 300);
	prom_hist_observe(&h, 99000000);
	prom_hist_write(b, "lat_seconds", "u=\"a\"", &h);
	t = text(b);
	/* Cumulative counts, +Inf last, then sum and count. */
	ck_assert_ptr_nonnull(strstr(t,
	    "lat_seconds_bucket{u=\"a\",le=\"0.0001\"} "
	    "1\nlat_seconds_bucket{u=\"a\",le=\"0.00025\"} 1\n"
	    "lat_seconds_bucket{u=\"a\",le=\"0.0005\"} 3\n"));
	ck_assert_ptr_nonnull(strstr(t, "lat_seconds_bucket{u=\"a\",le=\"60\"} "
	    "3\nlat_seconds_bucket{u=\"a\",le=\"+Inf\"} 4\n"
	    "lat_seconds_sum{u=\"a\"} 99.000650\n"
	    "lat_seconds_count{u=\"a\"} 4\n"));
	/* Without labels. */
	prom_hist_write(b, "l", "", &h);
	t = text(b);
	ck_assert(strncmp(t, "l_bucket{le=\"0.0001\"} 1\n", 24) == 0);
	ck_assert_ptr_nonnull(strstr(t, "\nl_sum 99.000650\nl_count 4\n"));
	evbuffer_free(b);
}
END_TEST

static Suite *
prom_suite(void)
{
	Suite	*s = suite_create("prom");
	TCase	*tc = tcase_create("format");

	tcase_add_test(tc, test_buckets);
	tcase_add_test(tc, test_labels);
	tcase_add_test(tc, test_samples);
	tcase_add_test(tc, test_histogram);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr = srunner_create(prom_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
