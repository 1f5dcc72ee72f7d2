/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for common/log.c: a line logged is one line, whatever a peer
 * put in it (a token's subject, an upstream's stderr).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "log.h"

/* Log at warn with stderr in a file: what was written. */
static char *
logged(const char *what)
{
	FILE	*f = tmpfile();
	char	*buf;
	long	 n;
	int	 saved = dup(STDERR_FILENO);

	ck_assert_ptr_nonnull(f);
	ck_assert_int_ge(saved, 0);
	fflush(stderr);
	ck_assert_int_ge(dup2(fileno(f), STDERR_FILENO), 0);
	log_warnx("subject %s refused", what);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	n = ftell(f);
	ck_assert_int_gt(n, 0);
	buf = calloc(1, (size_t)n + 1);
	rewind(f);
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return (buf);
}

START_TEST(test_one_line)
{
	char	*out;

	log_init("check", 1, 0);
	out = logged("alice\n12:00:00.000 mcp-supervisord info: forged\r\x1b[2J\x7f");
	ck_assert_ptr_nonnull(strstr(out, "subject alice?12:00:00.000 "
	    "mcp-supervisord info: forged??[2J? refused\n"));
	/* One newline, the line's own. */
	ck_assert_ptr_eq(strchr(out, '\n'), out + strlen(out) - 1);
	free(out);
	out = logged("tab\there");
	ck_assert_ptr_nonnull(strstr(out, "subject tab\there refused\n"));
	free(out);
}
END_TEST

static Suite *
log_suite(void)
{
	Suite	*s = suite_create("log");
	TCase	*tc = tcase_create("log");

	tcase_add_test(tc, test_one_line);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr = srunner_create(log_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
