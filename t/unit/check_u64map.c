/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for common/u64map.c: open addressing with linear probing and
 * backward-shift deletion.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "u64map.h"

/* A distinct non-NULL value for each key. */
#define VAL(k)	((void *)(uintptr_t)((k) * 2 + 1))

START_TEST(test_empty)
{
	struct u64map	m;
	size_t		pos = 0;
	uint64_t	k;
	void		*v;

	u64map_init(&m);
	ck_assert_uint_eq(m.count, 0);
	ck_assert_uint_eq(m.cap, 0);
	ck_assert_ptr_null(u64map_get(&m, 0));
	ck_assert_ptr_null(u64map_get(&m, 1));
	ck_assert_ptr_null(u64map_del(&m, 1));
	ck_assert_int_eq(u64map_next(&m, &pos, &k, &v), 0);
	u64map_free(&m);
	u64map_free(&m);
}
END_TEST

START_TEST(test_put_get_del)
{
	struct u64map	m;
	int		a, b, c;

	u64map_init(&m);
	u64map_put(&m, 1, &a);
	u64map_put(&m, 2, &b);
	u64map_put(&m, UINT64_MAX, &c);
	ck_assert_uint_eq(m.count, 3);
	ck_assert_ptr_eq(u64map_get(&m, 1), &a);
	ck_assert_ptr_eq(u64map_get(&m, 2), &b);
	ck_assert_ptr_eq(u64map_get(&m, UINT64_MAX), &c);
	ck_assert_ptr_null(u64map_get(&m, 3));
	ck_assert_ptr_eq(u64map_del(&m, 2), &b);
	ck_assert_uint_eq(m.count, 2);
	ck_assert_ptr_null(u64map_get(&m, 2));
	ck_assert_ptr_null(u64map_del(&m, 2));
	ck_assert_uint_eq(m.count, 2);
	ck_assert_ptr_eq(u64map_get(&m, 1), &a);
	ck_assert_ptr_eq(u64map_get(&m, UINT64_MAX), &c);
	u64map_free(&m);
	ck_assert_uint_eq(m.count, 0);
	ck_assert_ptr_null(m.slots);
}
END_TEST

START_TEST(test_replace)
{
	struct u64map	m;
	int		a, b;

	u64map_init(&m);
	u64map_put(&m, 42, &a);
	u64map_put(&m, 42, &b);
	ck_assert_uint_eq(m.count, 1);
	ck_assert_ptr_eq(u64map_get(&m, 42), &b);
	ck_assert_ptr_eq(u64map_del(&m, 42), &b);
	ck_assert_uint_eq(m.count, 0);
	ck_assert_ptr_null(u64map_get(&m, 42));
	u64map_free(&m);
}
END_TEST

START_TEST(test_key_zero)
{
	struct u64map	m;
	int		a, b;

	u64map_init(&m);
	ck_assert_ptr_null(u64map_get(&m, 0));
	u64map_put(&m, 0, &a);
	ck_assert_ptr_eq(u64map_get(&m, 0), &a);
	ck_assert_uint_eq(m.count, 1);
	u64map_put(&m, 16, &b);
	ck_assert_ptr_eq(u64map_get(&m, 0), &a);
	ck_assert_ptr_eq(u64map_get(&m, 16), &b);
	ck_assert_ptr_eq(u64map_del(&m, 0), &a);
	ck_assert_ptr_null(u64map_get(&m, 0));
	ck_assert_ptr_eq(u64map_get(&m, 16), &b);
	u64map_free(&m);
}
END_TEST

START_TEST(test_growth)
{
	struct u64map	m;
	uint64_t	k;
	size_t		resizes = 0, cap = 0;

	u64map_init(&m);
	for (k = 0; k < 100000; k++) {
		u64map_put(&m, k * 7919, VAL(k));
		if (m.cap != cap) {
			resizes++;
			cap = m.cap;
		}
		/* Load stays at or under three quarters. */
		ck_assert_uint_le(m.count * 4, m.cap * 3);
	}
	ck_assert_uint_eq(m.count, 100000);
	ck_assert_uint_ge(resizes, 10);
	ck_assert_uint_eq(m.cap & (m.cap - 1), 0);
	for (k = 0; k < 100000; k++)
		ck_assert_ptr_eq(u64map_get(&m, k * 7919), VAL(k));
	for (k = 0; k < 1000; k++)
		ck_assert_ptr_null(u64map_get(&m, k * 7919 + 1));
	u64map_free(&m);
}
END_TEST

START_TEST(test_delete_keeps_others)
{
	struct u64map	m;
	uint64_t	k;

	/* Sequential keys with every other one deleted. */
	u64map_init(&m);
	for (k = 1; k <= 20000; k++)
		u64map_put(&m, k, VAL(k));
	for (k = 1; k <= 20000; k += 2)
		ck_assert_ptr_eq(u64map_del(&m, k), VAL(k));
	ck_assert_uint_eq(m.count, 10000);
	for (k = 1; k <= 20000; k++) {
		if (k % 2 == 1)
			ck_assert_ptr_null(u64map_get(&m, k));
		else
			ck_assert_ptr_eq(u64map_get(&m, k), VAL(k));
	}
	/* Put them back, delete the others. */
	for (k = 1; k <= 20000; k += 2)
		u64map_put(&m, k, VAL(k));
	for (k = 2; k <= 20000; k += 2)
		ck_assert_ptr_eq(u64map_del(&m, k), VAL(k));
	for (k = 1; k <= 20000; k++) {
		if (k % 2 == 1)
			ck_assert_ptr_eq(u64map_get(&m, k), VAL(k));
		else
			ck_assert_ptr_null(u64map_get(&m, k));
	}
	u64map_free(&m);
}
END_TEST

/* The home slot of a key in a 16-slot table, found through the map. */
static size_t
home16(uint64_t key)
{
	struct u64map	m;
	size_t		i, home = SIZE_MAX;
	int		one;

	u64map_init(&m);
	u64map_put(&m, key, &one);
	ck_assert_uint_eq(m.cap, 16);
	for (i = 0; i < m.cap; i++) {
		if (m.slots[i].value != NULL)
			home = i;
	}
	u64map_free(&m);
	return (home);
}

/* Check that no probe run has a hole: every slot from home is full. */
static void
check_runs(const struct u64map *m)
{
	size_t	i, j, home;

	for (i = 0; i < m->cap; i++) {
		if (m->slots[i].value == NULL)
			continue;
		home = home16(m->slots[i].key);
		for (j = home; j != i; j = (j + 1) & (m->cap - 1))
			ck_assert_msg(m->slots[j].value != NULL,
			    "hole at %zu between home %zu and slot %zu", j,
			    home, i);
	}
}

START_TEST(test_backward_shift)
{
	/*
	 * In a 16-slot table, build a long probe run that wraps around the
	 * end (homes 14, 15, 0 and 1), then delete from it in many orders:
	 * what is left must stay reachable with no hole in any run.
	 */
	static const size_t	 homes[] = { 14, 14, 14, 14, 15, 15, 15, 0,
				    0, 0, 1, 1 };
	struct u64map		 m;
	uint64_t		 keys[12], k;
	unsigned char		 gone[12];
	size_t			 i, j, step, pos, n;
	void			*v;

	/* Find keys with the wanted homes. */
	for (i = 0; i < 12; i++) {
		for (k = 1000 * (i + 1);; k++) {
			if (home16(k) == homes[i]) {
				for (j = 0; j < i; j++) {
					if (keys[j] == k)
						break;
				}
				if (j == i)
					break;
			}
		}
		keys[i] = k;
	}
	for (step = 1; step <= 5; step++) {
		for (j = 0; j < 12; j++) {
			u64map_init(&m);
			for (i = 0; i < 12; i++)
				u64map_put(&m, keys[i], VAL(keys[i]));
			ck_assert_uint_eq(m.cap, 16);
			ck_assert_uint_eq(m.count, 12);
			check_runs(&m);
			memset(gone, 0, sizeof gone);
			for (i = j, n = 0; n < 6; i = (i + step) % 12, n++) {
				if (gone[i])
					continue;
				ck_assert_ptr_eq(u64map_del(&m, keys[i]),
				    VAL(keys[i]));
				gone[i] = 1;
				check_runs(&m);
				for (k = 0; k < 12; k++) {
					if (gone[k])
						ck_assert_ptr_null(u64map_get(
						    &m, keys[k]));
					else
						ck_assert_ptr_eq(u64map_get(
						    &m, keys[k]), VAL(keys[k]));
				}
			}
			pos = 0;
			n = 0;
			while (u64map_next(&m, &pos, &k, &v)) {
				ck_assert_ptr_eq(v, VAL(k));
				n++;
			}
			ck_assert_uint_eq(n, m.count);
			u64map_free(&m);
		}
	}
}
END_TEST

START_TEST(test_random_ops)
{
	/* Against a plain array model, with many collisions and deletes. */
	struct u64map	 m;
	enum { N = 4096 };
	void		**model = calloc(N, sizeof *model);
	uint64_t	 x = 88172645463325252ULL, k;
	size_t		 i, count = 0;
	int		 op;

	ck_assert_ptr_nonnull(model);
	u64map_init(&m);
	for (i = 0; i < 300000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		k = x % N;
		op = (int)((x >> 32) % 3);
		if (op == 0 || op == 1) {
			if (model[k] == NULL)
				count++;
			model[k] = VAL(k + i);
			u64map_put(&m, k << 40, model[k]);
		} else {
			ck_assert_ptr_eq(u64map_del(&m, k << 40), model[k]);
			if (model[k] != NULL)
				count--;
			model[k] = NULL;
		}
		ck_assert_uint_eq(m.count, count);
		if (i % 10000 == 0) {
			for (k = 0; k < N; k++)
				ck_assert_ptr_eq(u64map_get(&m, k << 40),
				    model[k]);
		}
	}
	for (k = 0; k < N; k++)
		ck_assert_ptr_eq(u64map_get(&m, k << 40), model[k]);
	u64map_free(&m);
	free(model);
}
END_TEST

START_TEST(test_iterate)
{
	struct u64map	 m;
	enum { N = 5000 };
	unsigned char	*seen = calloc(N, 1);
	uint64_t	 k;
	size_t		 pos = 0, n = 0;
	void		*v;

	ck_assert_ptr_nonnull(seen);
	u64map_init(&m);
	for (k = 0; k < N; k++)
		u64map_put(&m, k, VAL(k));
	for (k = 0; k < N; k += 5)
		u64map_del(&m, k);
	while (u64map_next(&m, &pos, &k, &v)) {
		ck_assert_uint_lt(k, N);
		ck_assert_uint_ne(k % 5, 0);
		ck_assert_ptr_eq(v, VAL(k));
		ck_assert_int_eq(seen[k], 0);
		seen[k] = 1;
		n++;
	}
	ck_assert_uint_eq(n, N - N / 5);
	ck_assert_uint_eq(n, m.count);
	/* Finished iteration stays finished. */
	ck_assert_int_eq(u64map_next(&m, &pos, &k, &v), 0);
	u64map_free(&m);
	free(seen);
}
END_TEST

static Suite *
u64map_suite(void)
{
	Suite	*s = suite_create("u64map");
	TCase	*tc;

	tc = tcase_create("basic");
	tcase_add_test(tc, test_empty);
	tcase_add_test(tc, test_put_get_del);
	tcase_add_test(tc, test_replace);
	tcase_add_test(tc, test_key_zero);
	suite_add_tcase(s, tc);

	tc = tcase_create("scale");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_growth);
	tcase_add_test(tc, test_delete_keeps_others);
	tcase_add_test(tc, test_backward_shift);
	tcase_add_test(tc, test_random_ops);
	tcase_add_test(tc, test_iterate);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr = srunner_create(u64map_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
