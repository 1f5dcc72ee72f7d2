/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for common/secret.c: ${env:} and ${file:} references, the
 * daemon's part of their expansion (what comes from its environment),
 * and masking a secret before a text is cut.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "secret.h"

/* secret_expand, for a value that must expand. */
static char *
expand(const char *tmpl)
{
	char	 err[256], *v;

	v = secret_expand(tmpl, err, sizeof err);
	ck_assert_msg(v != NULL, "%s: %s", tmpl, err);
	return (v);
}

START_TEST(test_expand)
{
	char	*v, err[256];

	setenv("MCPS_T_A", "alpha", 1);
	unsetenv("MCPS_T_NONE");
	v = expand("x${env:MCPS_T_A}y$$z${not closed");
	ck_assert_str_eq(v, "xalphay$z${not closed");
	free(v);
	ck_assert_ptr_null(secret_expand("${env:MCPS_T_NONE}", err,
	    sizeof err));
	ck_assert_str_eq(err, "environment variable MCPS_T_NONE is not set");
	ck_assert_ptr_null(secret_expand("${what:x}", err, sizeof err));
	unsetenv("MCPS_T_A");
}
END_TEST

START_TEST(test_expand_env)
{
	static const char *const tmpls[] = {
		"Bearer ${env:MCPS_T_A}",
		"${env:MCPS_T_A}${env:MCPS_T_B}",
		"$$${env:MCPS_T_B}$$",
		"${env:MCPS_T_DOLLAR}",
		"plain $ and $${env:MCPS_T_A} and ${ unclosed",
		"${env:MCPS_T_FILE}",
		NULL
	};
	char		 path[] = "/tmp/check_secret.XXXXXX", *early[8];
	char		*tmpl, *v, *w, err[256];
	size_t		 i;
	FILE		*f;
	int		 fd;

	setenv("MCPS_T_A", "alpha", 1);
	setenv("MCPS_T_B", "be$ta", 1);
	setenv("MCPS_T_DOLLAR", "$$ and ${env:MCPS_T_A}", 1);
	setenv("MCPS_T_FILE", "${file:/etc/passwd}", 1);
	unsetenv("MCPS_T_NONE");

	/* What the daemon leaves: only references it cannot expand. */
	v = secret_expand_env("a${env:MCPS_T_A}b${env:MCPS_T_NONE}c");
	ck_assert_str_eq(v, "aalphab${env:MCPS_T_NONE}c");
	free(v);
	v = secret_expand_env("${env:MCPS_T_B} $$ ${file:/x} ${other}");
	ck_assert_str_eq(v, "be$$ta $$ ${file:/x} ${other}");
	free(v);

	/*
	 * Expanded in two steps, the second without the variables (as a
	 * worker is), each value comes out as in one step; a value that
	 * holds a reference stays text.
	 */
	for (i = 0; tmpls[i] != NULL; i++)
		early[i] = secret_expand_env(tmpls[i]);
	for (i = 0; tmpls[i] != NULL; i++) {
		v = expand(tmpls[i]);
		unsetenv("MCPS_T_A");
		unsetenv("MCPS_T_B");
		unsetenv("MCPS_T_DOLLAR");
		unsetenv("MCPS_T_FILE");
		w = expand(early[i]);
		ck_assert_str_eq(w, v);
		free(v);
		free(w);
		free(early[i]);
		setenv("MCPS_T_A", "alpha", 1);
		setenv("MCPS_T_B", "be$ta", 1);
		setenv("MCPS_T_DOLLAR", "$$ and ${env:MCPS_T_A}", 1);
		setenv("MCPS_T_FILE", "${file:/etc/passwd}", 1);
	}
	v = expand(tmpls[5]);
	ck_assert_str_eq(v, "${file:/etc/passwd}");
	free(v);

	/* A file reference is left for the worker, which reads it. */
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	fputs("from-file\n", f);
	fclose(f);
	if (asprintf(&tmpl, "${file:%s}/${env:MCPS_T_A}", path) < 0)
		ck_abort();
	v = secret_expand_env(tmpl);
	unsetenv("MCPS_T_A");
	w = secret_expand(v, err, sizeof err);
	ck_assert_ptr_nonnull(w);
	ck_assert_str_eq(w, "from-file/alpha");
	free(w);
	free(v);
	free(tmpl);
	unlink(path);
	unsetenv("MCPS_T_B");
	unsetenv("MCPS_T_DOLLAR");
	unsetenv("MCPS_T_FILE");
}
END_TEST

START_TEST(test_mask)
{
	const char	*key = "sk-0123456789";
	char		*m;
	size_t		 n;

	ck_assert_ptr_null(secret_mask("nothing here", 12, key, "[k]", &n));
	ck_assert_ptr_null(secret_mask("", 0, key, "[k]", &n));
	ck_assert_ptr_null(secret_mask("abc", 3, "", "[k]", &n));
	/* Only the first len bytes count. */
	ck_assert_ptr_null(secret_mask("sk-0123456789", 12, key, "[k]", &n));

	m = secret_mask("bad key sk-0123456789, really", 29, key, "[k]", &n);
	ck_assert_str_eq(m, "bad key [k], really");
	ck_assert_int_eq(n, strlen(m));
	free(m);
	m = secret_mask("sk-0123456789sk-0123456789", 26, key, "[api key]",
	    &n);
	ck_assert_str_eq(m, "[api key][api key]");
	free(m);
	/* A short secret gets the same, whatever the mask's length. */
	m = secret_mask("a-b-a", 5, "a", "[api key]", &n);
	ck_assert_str_eq(m, "[api key]-b-[api key]");
	ck_assert_int_eq(n, 21);
	free(m);
	/* Bytes, not strings: a NUL does not end the text. */
	m = secret_mask("x\0sk-0123456789", 15, key, "[k]", &n);
	ck_assert_int_eq(n, 5);
	ck_assert_int_eq(memcmp(m, "x\0[k]", 6), 0);
	free(m);
}
END_TEST

static Suite *
secret_suite(void)
{
	Suite	*s = suite_create("secret");
	TCase	*tc = tcase_create("basic");

	tcase_add_test(tc, test_expand);
	tcase_add_test(tc, test_expand_env);
	tcase_add_test(tc, test_mask);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr = srunner_create(secret_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
