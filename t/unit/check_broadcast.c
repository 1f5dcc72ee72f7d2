/* SPDX-License-Identifier: ISC */
/*
 * Broadcasts (supervisor/broadcast.c): a change of the merged catalog
 * goes to every session's stream a slice at a time, a few sessions per
 * turn of the loop, so that a call arriving meanwhile waits behind a few
 * writes, not thousands; in the end every stream has it once, and what
 * else a session is sent where broadcasts go comes after it.
 */
#include "config.h"

#include <string.h>

#include <event2/event.h>

#include "supervisor.h"

#include "sup_check.h"
#include "sup_priv.h"

#define NSTREAMS	48
#define SLICE_MAX	8	/* sessions sent to in one turn */

static const char tools_changed[] = "notifications/tools/list_changed";

static struct sup_client	*cl[NSTREAMS];
static struct sup_resp		*st[NSTREAMS];

static void
setup(void)
{
	size_t	i;

	sup_start(SUP_BASE "servers = ( { name = \"a\"; command = "
	    "[ \"/bin/true\" ]; } );\n");
	for (i = 0; i < NSTREAMS; i++) {
		cl[i] = sup_session(NULL, NULL);
		st[i] = sup_get(cl[i], NULL);
		ck_assert_int_eq(st[i]->status, 200);
	}
}

static void
teardown(void)
{
	sup_stop();
}

/* The method of a stream's i-th event, or NULL. */
static const char *
event_method(struct sup_resp *r, size_t i)
{
	json_t	*j;

	if ((j = sup_event(r, i)) == NULL)
		return (NULL);
	return (sup_jstr(j, "method"));
}

/* Read what came, and count the streams that were told. */
static size_t
count_told(void)
{
	size_t	i, n = 0;

	sup_clients_io();
	for (i = 0; i < NSTREAMS; i++)
		if (sup_nfound(st[i], tools_changed) > 0)
			n++;
	return (n);
}

START_TEST(test_slices)
{
	size_t	told, before;
	int	turns;

	broadcast_list_changed(1 << CATALOG_TOOLS);
	/* Nothing is written before the turn ends. */
	ck_assert_uint_eq(count_told(), 0);
	/* A turn writes the slice queued and sends the next: at most two. */
	sup_turn();
	told = count_told();
	ck_assert_uint_gt(told, 0);
	ck_assert_uint_le(told, 2 * SLICE_MAX);
	/* Each later turn, one more slice. */
	for (turns = 0; told < NSTREAMS; turns++) {
		ck_assert_int_lt(turns, NSTREAMS);
		before = told;
		sup_turn();
		told = count_told();
		ck_assert_uint_gt(told, before);
		ck_assert_uint_le(told - before, SLICE_MAX);
	}
	/* Every stream had it once. */
	sup_run();
	for (turns = 0; turns < NSTREAMS; turns++)
		ck_assert_uint_eq(sup_nfound(st[turns], tools_changed), 1);
}
END_TEST

/* Clients' tools changed: the same slices, but for the session that
 * changed them (it has its answer). */
START_TEST(test_ctools_slices)
{
	struct session	*except;
	size_t		 told, i;

	except = session_find(cl[5]->sid, strlen(cl[5]->sid));
	ck_assert_ptr_nonnull(except);
	broadcast_ctools_changed(except);
	ck_assert_uint_eq(count_told(), 0);
	sup_turn();
	told = count_told();
	ck_assert_uint_gt(told, 0);
	ck_assert_uint_le(told, 2 * SLICE_MAX);
	sup_run();
	for (i = 0; i < NSTREAMS; i++)
		ck_assert_uint_eq(sup_nfound(st[i], tools_changed),
		    i == 5 ? 0 : 1);
}
END_TEST

START_TEST(test_order)
{
	struct sup_resp	*r;
	size_t		 i, last = NSTREAMS - 1;
	int		 first_tools = -1, first_prompts = -1;

	/* A second broadcast while the first is under way. */
	broadcast_list_changed(1 << CATALOG_TOOLS);
	broadcast_list_changed(1 << CATALOG_PROMPTS);
	sup_run();
	/* The last session of the round has both, in order, each once. */
	r = st[last];
	ck_assert_uint_eq(sup_nfound(r, tools_changed), 1);
	ck_assert_uint_eq(sup_nfound(r,
	    "notifications/prompts/list_changed"), 1);
	for (i = 0; i < r->nevents; i++) {
		const char *m = event_method(r, i);

		if (m == NULL)
			continue;
		if (strcmp(m, tools_changed) == 0 && first_tools < 0)
			first_tools = (int)i;
		if (strcmp(m, "notifications/prompts/list_changed") == 0 &&
		    first_prompts < 0)
			first_prompts = (int)i;
	}
	ck_assert_int_ge(first_tools, 0);
	ck_assert_int_gt(first_prompts, first_tools);
}
END_TEST

static Suite *
broadcast_suite(void)
{
	Suite	*s = suite_create("broadcast");
	TCase	*tc = tcase_create("round");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_slices);
	tcase_add_test(tc, test_ctools_slices);
	tcase_add_test(tc, test_order);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	return (sup_check_main(broadcast_suite()));
}
