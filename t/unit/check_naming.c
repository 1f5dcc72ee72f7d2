/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for common/naming.c: exposed names are prefix+name, shortened
 * deterministically to NAME_MAX_EXPOSED bytes with a hash suffix.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "naming.h"
#include "strmap.h"

/* Is s[0..n) all lowercase hex digits? */
static int
is_hex(const char *s, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		if (!((s[i] >= '0' && s[i] <= '9') ||
		    (s[i] >= 'a' && s[i] <= 'f')))
			return (0);
	}
	return (1);
}

/* Is s valid UTF-8 (well enough to see a split sequence)? */
static int
utf8_ok(const char *s)
{
	const unsigned char	*u = (const unsigned char *)s;
	size_t			 i = 0, need, j;

	while (u[i] != '\0') {
		if (u[i] < 0x80)
			need = 0;
		else if ((u[i] & 0xe0) == 0xc0)
			need = 1;
		else if ((u[i] & 0xf0) == 0xe0)
			need = 2;
		else if ((u[i] & 0xf8) == 0xf0)
			need = 3;
		else
			return (0);
		for (j = 1; j <= need; j++) {
			if ((u[i + j] & 0xc0) != 0x80)
				return (0);
		}
		i += need + 1;
	}
	return (1);
}

/* Make a string of n copies of c. */
static char *
repeat(char c, size_t n)
{
	char	*s = malloc(n + 1);

	ck_assert_ptr_nonnull(s);
	memset(s, c, n);
	s[n] = '\0';
	return (s);
}

/* Check the shape of a shortened name. */
static void
check_shortened(const char *out, const char *full, size_t keep)
{
	ck_assert_uint_eq(strlen(out), keep + 1 + NAME_HASH_LEN);
	ck_assert_uint_le(strlen(out), NAME_MAX_EXPOSED);
	ck_assert_mem_eq(out, full, keep);
	ck_assert_int_eq(out[keep], '_');
	ck_assert(is_hex(out + keep + 1, NAME_HASH_LEN));
}

START_TEST(test_short)
{
	char	out[NAME_MAX_EXPOSED + 1];

	ck_assert_int_eq(name_expose("github__", "create_issue", out), 0);
	ck_assert_str_eq(out, "github__create_issue");
	ck_assert_int_eq(name_expose("", "search", out), 0);
	ck_assert_str_eq(out, "search");
	ck_assert_int_eq(name_expose("p.", "", out), 0);
	ck_assert_str_eq(out, "p.");
	ck_assert_int_eq(name_expose("", "", out), 0);
	ck_assert_str_eq(out, "");
	ck_assert_int_eq(name_expose("a-", "\xc3\xa9t\xc3\xa9", out), 0);
	ck_assert_str_eq(out, "a-\xc3\xa9t\xc3\xa9");
}
END_TEST

START_TEST(test_exactly_max)
{
	char	 out[NAME_MAX_EXPOSED + 1], want[NAME_MAX_EXPOSED + 1];
	char	*name = repeat('n', NAME_MAX_EXPOSED - 5);

	ck_assert_int_eq(name_expose("srv__", name, out), 0);
	snprintf(want, sizeof want, "srv__%s", name);
	ck_assert_str_eq(out, want);
	ck_assert_uint_eq(strlen(out), 64);
	free(name);

	/* All in the name, none in the prefix. */
	name = repeat('x', NAME_MAX_EXPOSED);
	ck_assert_int_eq(name_expose("", name, out), 0);
	ck_assert_str_eq(out, name);
	free(name);
}
END_TEST

START_TEST(test_long)
{
	char	 out[NAME_MAX_EXPOSED + 1], full[512];
	char	*name;
	size_t	 n;

	for (n = NAME_MAX_EXPOSED - 4; n < 300; n++) {
		name = repeat('t', n);
		memset(out, 'Z', sizeof out);
		ck_assert_int_eq(name_expose("srv__", name, out), 1);
		snprintf(full, sizeof full, "srv__%s", name);
		ck_assert_uint_eq(strlen(out), NAME_MAX_EXPOSED);
		check_shortened(out, full,
		    NAME_MAX_EXPOSED - NAME_HASH_LEN - 1);
		free(name);
	}
	/* Beyond the internal buffer too. */
	name = repeat('q', 10000);
	ck_assert_int_eq(name_expose("srv__", name, out), 1);
	ck_assert_uint_eq(strlen(out), NAME_MAX_EXPOSED);
	ck_assert_mem_eq(out, "srv__qqqq", 9);
	check_shortened(out, out, NAME_MAX_EXPOSED - NAME_HASH_LEN - 1);
	free(name);
}
END_TEST

START_TEST(test_hash_value)
{
	/* The suffix is FNV-1a 64 of prefix+name folded to 32 bits. */
	char		 out[NAME_MAX_EXPOSED + 1], want[16], full[128];
	char		*name = repeat('a', 70);
	uint64_t	 h;

	ck_assert_int_eq(name_expose("p__", name, out), 1);
	snprintf(full, sizeof full, "p__%s", name);
	h = fnv1a64(full, strlen(full));
	snprintf(want, sizeof want, "_%08x", (unsigned int)(h ^ (h >> 32)));
	ck_assert_str_eq(out + NAME_MAX_EXPOSED - NAME_HASH_LEN - 1, want);
	free(name);
	/* FNV-1a 64 test vectors. */
	ck_assert(fnv1a64("", 0) == 0xcbf29ce484222325ULL);
	ck_assert(fnv1a64("a", 1) == 0xaf63dc4c8601ec8cULL);
	ck_assert(fnv1a64("foobar", 6) == 0x85944171f73967e8ULL);
}
END_TEST

START_TEST(test_deterministic)
{
	char	 a[NAME_MAX_EXPOSED + 1], b[NAME_MAX_EXPOSED + 1];
	char	*name = repeat('d', 100);

	ck_assert_int_eq(name_expose("x__", name, a), 1);
	ck_assert_int_eq(name_expose("x__", name, b), 1);
	ck_assert_str_eq(a, b);
	/* Known values, the same on every machine and run. */
	ck_assert_str_eq(a, "x__ddddddddddddddddddddddddddddddddddddddddddddd"
	    "ddddddd_ada651f5");
	ck_assert_int_eq(name_expose("", name, a), 1);
	ck_assert_int_eq(name_expose("", name, b), 1);
	ck_assert_str_eq(a, b);
	ck_assert_str_eq(a, "ddddddddddddddddddddddddddddddddddddddddddddddd"
	    "dddddddd_61e29dae");
	free(name);
}
END_TEST

START_TEST(test_distinct)
{
	char		 name[128], out[NAME_MAX_EXPOSED + 1];
	char		*seen[200];
	struct strmap	 m;
	int		 i, j;

	strmap_init(&m);
	for (i = 0; i < 200; i++) {
		/* 60 shared bytes, then a distinguishing tail. */
		memset(name, 's', 60);
		snprintf(name + 60, sizeof name - 60, "_tool_%d", i);
		ck_assert_int_eq(name_expose("up__", name, out), 1);
		ck_assert_uint_eq(strlen(out), NAME_MAX_EXPOSED);
		ck_assert_msg(strmap_add(&m, out, name) == 0,
		    "%s collides", out);
		seen[i] = strdup(out);
	}
	/* The same names with a different prefix differ too. */
	for (i = 0; i < 200; i++) {
		memset(name, 's', 60);
		snprintf(name + 60, sizeof name - 60, "_tool_%d", i);
		ck_assert_int_eq(name_expose("uq__", name, out), 1);
		ck_assert_ptr_null(strmap_get(&m, out));
	}
	/* Only the concatenation counts, not where the prefix ends. */
	ck_assert_int_eq(name_expose("ab", "cdefghijklmnopqrstuvwxyz0123456789"
	    "abcdefghijklmnopqrstuvwxyz0123456789", out), 1);
	memcpy(name, out, sizeof out);
	ck_assert_int_eq(name_expose("abc", "defghijklmnopqrstuvwxyz0123456789"
	    "abcdefghijklmnopqrstuvwxyz0123456789", out), 1);
	ck_assert_str_eq(out, name);
	for (i = 0; i < 200; i++) {
		for (j = i + 1; j < 200; j++)
			ck_assert_str_ne(seen[i], seen[j]);
	}
	for (i = 0; i < 200; i++)
		free(seen[i]);
	strmap_free(&m);
}
END_TEST

START_TEST(test_utf8_boundary)
{
	char	 out[NAME_MAX_EXPOSED + 1], name[256], full[300];
	size_t	 lead, keep;
	int	 w;
	static const char *const chars[] = { "\xc3\xa9", "\xe2\x82\xac",
	    "\xf0\x9f\x98\x80" };

	/* Put a multi-byte character across the cut at every offset. */
	for (w = 0; w < 3; w++) {
		for (lead = 50; lead < 58; lead++) {
			memset(name, 'a', lead);
			name[lead] = '\0';
			while (strlen(name) < 120)
				strcat(name, chars[w]);
			ck_assert_int_eq(name_expose("", name, out), 1);
			snprintf(full, sizeof full, "%s", name);
			ck_assert_msg(utf8_ok(out), "split: %s", out);
			keep = strlen(out) - NAME_HASH_LEN - 1;
			ck_assert_uint_le(keep, 55);
			ck_assert_uint_ge(keep, 55 - (size_t)(w + 1));
			check_shortened(out, full, keep);
			/* The kept part ends on a character boundary. */
			ck_assert(((unsigned char)full[keep] & 0xc0) != 0x80);
		}
	}
	/* Exactly: 54 ASCII then a 2-byte char at 54..55 is cut back. */
	memset(name, 'b', 54);
	name[54] = '\0';
	strcat(name, "\xc3\xa9xxxxxxxxxxxxxx");
	ck_assert_int_eq(name_expose("", name, out), 1);
	ck_assert_uint_eq(strlen(out), 54 + 1 + NAME_HASH_LEN);
	ck_assert_int_eq(out[54], '_');
	/* 53 ASCII then the char at 53..54 is kept whole. */
	memset(name, 'b', 53);
	name[53] = '\0';
	strcat(name, "\xc3\xa9xxxxxxxxxxxxxxx");
	ck_assert_int_eq(name_expose("", name, out), 1);
	ck_assert_uint_eq(strlen(out), NAME_MAX_EXPOSED);
	ck_assert_mem_eq(out + 53, "\xc3\xa9", 2);
}
END_TEST

START_TEST(test_valid_prefix)
{
	char	*s;

	ck_assert_int_eq(name_valid_prefix(""), 1);
	ck_assert_int_eq(name_valid_prefix("github__"), 1);
	ck_assert_int_eq(name_valid_prefix("A-z.0_9"), 1);
	ck_assert_int_eq(name_valid_prefix("a b"), 0);
	ck_assert_int_eq(name_valid_prefix("a/b"), 0);
	ck_assert_int_eq(name_valid_prefix("a:b"), 0);
	ck_assert_int_eq(name_valid_prefix("a\tb"), 0);
	ck_assert_int_eq(name_valid_prefix("\xc3\xa9"), 0);
	ck_assert_int_eq(name_valid_prefix("a\"b"), 0);
	s = repeat('p', 32);
	ck_assert_int_eq(name_valid_prefix(s), 1);
	free(s);
	s = repeat('p', 33);
	ck_assert_int_eq(name_valid_prefix(s), 0);
	free(s);
}
END_TEST

static Suite *
naming_suite(void)
{
	Suite	*s = suite_create("naming");
	TCase	*tc;

	tc = tcase_create("expose");
	tcase_add_test(tc, test_short);
	tcase_add_test(tc, test_exactly_max);
	tcase_add_test(tc, test_long);
	tcase_add_test(tc, test_hash_value);
	tcase_add_test(tc, test_deterministic);
	tcase_add_test(tc, test_distinct);
	tcase_add_test(tc, test_utf8_boundary);
	suite_add_tcase(s, tc);

	tc = tcase_create("prefix");
	tcase_add_test(tc, test_valid_prefix);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr = srunner_create(naming_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
