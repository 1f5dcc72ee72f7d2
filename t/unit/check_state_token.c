/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for common/state_token.c: requestState tokens minted and
 * verified; every altered byte, another key, expiry and a foreign token
 * are refused; instances sharing a key verify each other's tokens; the
 * binding separates its fields.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "state_token.h"

static const unsigned char	key[] = "0123456789abcdef0123456789abcdef";
static const unsigned char	other[] = "0123456789abcdef0123456789abcdeF";
#define NOW	1800000000000ULL

static void
sample(struct stoken *t, const char *instance)
{
	int	i;

	memset(t, 0, sizeof *t);
	t->kind = STOKEN_KIND_PARKED;
	t->round = 258;
	t->expires = NOW + 60000;
	for (i = 0; i < STOKEN_ID_LEN; i++)
		t->id[i] = (unsigned char)(i * 17);
	stoken_binding("0000000000000000/", "tools/call", "ev__echo", 8,
	    "{\"a\":1}", 7, t->binding);
	strcpy(t->instance, instance);
}

START_TEST(test_round_trip)
{
	struct stoken	t, u;
	char		tok[STOKEN_MAX];

	sample(&t, "gw-1");
	stoken_mint(&t, key, sizeof key - 1, tok);
	ck_assert_int_eq(strncmp(tok, "mcpsg1.gw-1.", 12), 0);
	ck_assert_int_lt(strlen(tok), STOKEN_MAX);
	ck_assert_int_eq(stoken_verify(tok, strlen(tok), key, sizeof key - 1,
	    NOW, &u), STOKEN_OK);
	ck_assert_int_eq(u.kind, STOKEN_KIND_PARKED);
	ck_assert_uint_eq(u.round, 258);
	ck_assert_uint_eq(u.expires, NOW + 60000);
	ck_assert_mem_eq(u.id, t.id, STOKEN_ID_LEN);
	ck_assert_int_eq(stoken_binding_equal(u.binding, t.binding), 1);
	ck_assert_str_eq(u.instance, "gw-1");
}
END_TEST

/* Any byte changed, anywhere, and the token is refused. */
START_TEST(test_every_byte)
{
	struct stoken		t, u;
	char			tok[STOKEN_MAX], bad[STOKEN_MAX];
	static const char	repl[] = "Aa0-_.x";
	size_t			i, len, k;
	enum stoken_result	r;

	sample(&t, "gw-1");
	stoken_mint(&t, key, sizeof key - 1, tok);
	len = strlen(tok);
	for (i = 0; i < len; i++) {
		for (k = 0; k < sizeof repl - 1; k++) {
			if (tok[i] == repl[k])
				continue;
			memcpy(bad, tok, len + 1);
			bad[i] = repl[k];
			r = stoken_verify(bad, len, key, sizeof key - 1, NOW, &u);
			ck_assert_msg(r == STOKEN_BAD_MAC ||
			    r == STOKEN_MALFORMED || r == STOKEN_NOT_OURS,
			    "byte %zu set to %c verified", i, repl[k]);
		}
	}
	/* Shorter and longer. */
	for (i = 0; i < len; i++)
		ck_assert_int_ne(stoken_verify(tok, i, key, sizeof key - 1, NOW,
		    &u), STOKEN_OK);
	memcpy(bad, tok, len);
	bad[len] = 'A';
	ck_assert_int_ne(stoken_verify(bad, len + 1, key, sizeof key - 1,
	    NOW, &u), STOKEN_OK);
}
END_TEST

START_TEST(test_keys_and_fleet)
{
	struct stoken	t, u;
	char		tok[STOKEN_MAX];

	sample(&t, "a");
	stoken_mint(&t, key, sizeof key - 1, tok);
	ck_assert_int_eq(stoken_verify(tok, strlen(tok), other,
	    sizeof other - 1, NOW, &u), STOKEN_BAD_MAC);
	/* Another instance with the same key verifies it, and learns whose
	 * the parked call is. */
	ck_assert_int_eq(stoken_verify(tok, strlen(tok), key, sizeof key - 1,
	    NOW, &u), STOKEN_OK);
	ck_assert_str_eq(u.instance, "a");
	/* The instance is covered by the MAC too. */
	tok[7] = 'b';
	ck_assert_int_eq(stoken_verify(tok, strlen(tok), key, sizeof key - 1,
	    NOW, &u), STOKEN_BAD_MAC);
}
END_TEST

START_TEST(test_expiry_and_foreign)
{
	struct stoken	t, u;
	char		tok[STOKEN_MAX];

	sample(&t, "gw");
	stoken_mint(&t, key, sizeof key - 1, tok);
	ck_assert_int_eq(stoken_verify(tok, strlen(tok), key, sizeof key - 1,
	    NOW + 59999, &u), STOKEN_OK);
	ck_assert_int_eq(stoken_verify(tok, strlen(tok), key, sizeof key - 1,
	    NOW + 60000, &u), STOKEN_EXPIRED);
	ck_assert_int_eq(stoken_verify("eyJzdGF0ZSI6MX0", 15, key,
	    sizeof key - 1, NOW, &u), STOKEN_NOT_OURS);
	ck_assert_int_eq(stoken_verify("mcpsg1.", 7, key, sizeof key - 1, NOW,
	    &u), STOKEN_MALFORMED);
	ck_assert_int_eq(stoken_verify("mcpsg1.a.b.c", 12, key, sizeof key - 1,
	    NOW, &u), STOKEN_MALFORMED);
}
END_TEST

START_TEST(test_binding)
{
	unsigned char	a[STOKEN_BINDING_LEN], b[STOKEN_BINDING_LEN];

	stoken_binding("p", "tools/call", "ab", 2, "c", 1, a);
	stoken_binding("p", "tools/call", "a", 1, "bc", 2, b);
	ck_assert_int_eq(stoken_binding_equal(a, b), 0);
	stoken_binding("q", "tools/call", "ab", 2, "c", 1, b);
	ck_assert_int_eq(stoken_binding_equal(a, b), 0);
	stoken_binding("p", "prompts/get", "ab", 2, "c", 1, b);
	ck_assert_int_eq(stoken_binding_equal(a, b), 0);
	stoken_binding("p", "tools/call", "ab", 2, "c", 1, b);
	ck_assert_int_eq(stoken_binding_equal(a, b), 1);
	ck_assert_int_eq(stoken_instance_valid("gw_1-A"), 1);
	ck_assert_int_eq(stoken_instance_valid(""), 0);
	ck_assert_int_eq(stoken_instance_valid("a.b"), 0);
	ck_assert_int_eq(stoken_instance_valid(
	    "0123456789012345678901234567890123"), 0);
}
END_TEST

static Suite *
token_suite(void)
{
	Suite	*s = suite_create("state_token");
	TCase	*tc = tcase_create("token");

	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_every_byte);
	tcase_add_test(tc, test_keys_and_fleet);
	tcase_add_test(tc, test_expiry_and_foreign);
	tcase_add_test(tc, test_binding);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr = srunner_create(token_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
