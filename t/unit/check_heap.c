/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for common/heap.c: an indexed binary max-heap whose items
 * keep their own position, so removal and key changes are O(log n).
 * Every operation is checked against a plain array searched in full.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <check.h>

#include "heap.h"

struct item {
	uint64_t	 key;
	size_t		 pos;		/* the heap's */
	int		 in;		/* the model's */
};

static uint64_t
item_key(const void *p)
{
	return (((const struct item *)p)->key);
}

/* Check the heap property and every item's recorded position. */
static void
check_shape(const struct heap *h)
{
	size_t	i;

	for (i = 0; i < h->n; i++) {
		ck_assert_uint_eq(((struct item *)h->v[i])->pos, i + 1);
		if (i > 0)
			ck_assert_uint_ge(item_key(h->v[(i - 1) / 2]),
			    item_key(h->v[i]));
	}
}

/* The largest key among the model's items, or 0 with none. */
static uint64_t
model_max(const struct item *it, size_t n, size_t *count)
{
	uint64_t	m = 0;
	size_t		i;

	*count = 0;
	for (i = 0; i < n; i++) {
		if (!it[i].in)
			continue;
		(*count)++;
		if (it[i].key > m)
			m = it[i].key;
	}
	return (m);
}

START_TEST(test_empty)
{
	struct heap	h;
	struct item	a = { 5, 0, 0 };

	heap_init(&h, item_key, offsetof(struct item, pos));
	ck_assert_ptr_null(heap_top(&h));
	ck_assert_uint_eq(heap_count(&h), 0);
	ck_assert_int_eq(heap_has(&h, &a), 0);
	heap_remove(&h, &a);		/* not in it: nothing happens */
	ck_assert_uint_eq(heap_count(&h), 0);
	heap_free(&h);
	heap_free(&h);
}
END_TEST

START_TEST(test_order)
{
	struct heap	h;
	struct item	it[5] = {
		{ 3, 0, 0 }, { 9, 0, 0 }, { 1, 0, 0 }, { 7, 0, 0 }, { 9, 0, 0 }
	};
	struct item	*top;
	uint64_t	 last = UINT64_MAX;
	size_t		 i;

	heap_init(&h, item_key, offsetof(struct item, pos));
	for (i = 0; i < 5; i++)
		heap_insert(&h, &it[i]);
	check_shape(&h);
	ck_assert_uint_eq(heap_count(&h), 5);
	/* Taking the top each time gives the keys in decreasing order. */
	while ((top = heap_top(&h)) != NULL) {
		ck_assert_uint_le(top->key, last);
		last = top->key;
		heap_remove(&h, top);
		ck_assert_int_eq(heap_has(&h, top), 0);
		check_shape(&h);
	}
	ck_assert_uint_eq(last, 1);
	heap_free(&h);
}
END_TEST

START_TEST(test_update)
{
	struct heap	h;
	struct item	it[4] = {
		{ 10, 0, 0 }, { 20, 0, 0 }, { 30, 0, 0 }, { 40, 0, 0 }
	};

	heap_init(&h, item_key, offsetof(struct item, pos));
	heap_insert(&h, &it[0]);
	heap_insert(&h, &it[1]);
	heap_insert(&h, &it[2]);
	heap_insert(&h, &it[3]);
	ck_assert_ptr_eq(heap_top(&h), &it[3]);
	/* The smallest grows past everything: it comes to the top. */
	it[0].key = 50;
	heap_update(&h, &it[0]);
	ck_assert_ptr_eq(heap_top(&h), &it[0]);
	check_shape(&h);
	/* The top shrinks below everything: the next largest takes over. */
	it[0].key = 1;
	heap_update(&h, &it[0]);
	ck_assert_ptr_eq(heap_top(&h), &it[3]);
	check_shape(&h);
	/* An unchanged key is a no-op. */
	heap_update(&h, &it[2]);
	check_shape(&h);
	/* Removing from the middle keeps the shape. */
	heap_remove(&h, &it[2]);
	check_shape(&h);
	ck_assert_uint_eq(heap_count(&h), 3);
	heap_free(&h);
}
END_TEST

/* Random inserts, removals and key changes against the model. */
START_TEST(test_random)
{
	enum { N = 2000, OPS = 200000 };
	struct heap	 h;
	struct item	*it, *top;
	uint64_t	 m;
	size_t		 i, count;
	int		 op;

	srandom(42);
	it = calloc(N, sizeof *it);
	ck_assert_ptr_nonnull(it);
	heap_init(&h, item_key, offsetof(struct item, pos));
	for (op = 0; op < OPS; op++) {
		i = (size_t)random() % N;
		switch (random() % 4) {
		case 0:
			if (!it[i].in) {
				/* Few distinct keys, so ties are common. */
				it[i].key = (uint64_t)(random() % 64);
				heap_insert(&h, &it[i]);
				it[i].in = 1;
			}
			break;
		case 1:
			heap_remove(&h, &it[i]);
			it[i].in = 0;
			break;
		default:
			if (it[i].in) {
				it[i].key = (uint64_t)(random() % 64);
				heap_update(&h, &it[i]);
			}
			break;
		}
		ck_assert_int_eq(heap_has(&h, &it[i]), it[i].in);
		if (op % 997 == 0)
			check_shape(&h);
		m = model_max(it, N, &count);
		ck_assert_uint_eq(heap_count(&h), count);
		top = heap_top(&h);
		if (count == 0)
			ck_assert_ptr_null(top);
		else
			ck_assert_uint_eq(top->key, m);
	}
	check_shape(&h);
	heap_free(&h);
	free(it);
}
END_TEST

/* A crowd goes and comes back: the array shrinks and grows again. */
START_TEST(test_shrink)
{
	enum { N = 100000 };
	struct heap	 h;
	struct item	*it;
	size_t		 i, peak;

	it = calloc(N, sizeof *it);
	ck_assert_ptr_nonnull(it);
	heap_init(&h, item_key, offsetof(struct item, pos));
	for (i = 0; i < N; i++) {
		it[i].key = i % 1000;
		heap_insert(&h, &it[i]);
	}
	peak = h.cap;
	ck_assert_uint_ge(peak, N);
	for (i = 0; i < N - 10; i++)
		heap_remove(&h, heap_top(&h));
	ck_assert_uint_eq(heap_count(&h), 10);
	ck_assert_uint_lt(h.cap, peak / 100);
	check_shape(&h);
	for (i = 0; i < N; i++) {
		if (!heap_has(&h, &it[i]))
			heap_insert(&h, &it[i]);
	}
	ck_assert_uint_eq(heap_count(&h), N);
	check_shape(&h);
	ck_assert_uint_eq(((struct item *)heap_top(&h))->key, 999);
	heap_free(&h);
	free(it);
}
END_TEST

static Suite *
heap_suite(void)
{
	Suite	*s = suite_create("heap");
	TCase	*tc;

	tc = tcase_create("basic");
	tcase_add_test(tc, test_empty);
	tcase_add_test(tc, test_order);
	tcase_add_test(tc, test_update);
	suite_add_tcase(s, tc);

	tc = tcase_create("scale");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_random);
	tcase_add_test(tc, test_shrink);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr = srunner_create(heap_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
