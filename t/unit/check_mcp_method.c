/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for common/mcp_method.c: the table of methods is consistent
 * (lengths, unique names, what each is counted as), lookups are exact,
 * jrpc_scan looks a message's method up, and each flag names exactly the
 * methods the code tested by name before the table existed.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "jsonrpc.h"
#include "mcp_method.h"

/* The methods that have a flag, as a NULL-terminated list of names. */
static void
check_flag(unsigned int flag, const char *const *names)
{
	size_t	i, k;
	int	listed;

	for (i = 0; i < MCPM_N; i++) {
		listed = 0;
		for (k = 0; names[k] != NULL; k++) {
			if (strcmp(names[k], mcp_methods[i].name) == 0)
				listed = 1;
		}
		ck_assert_msg(mcp_method_is((enum mcp_method)i, flag) == listed,
		    "%s: flag 0x%x is %s", mcp_methods[i].name, flag,
		    listed ? "missing" : "set");
	}
	for (k = 0; names[k] != NULL; k++)
		ck_assert_int_ne(mcp_method_lookup(names[k], strlen(names[k])),
		    MCPM_OTHER);
}

START_TEST(test_rows)
{
	size_t	i, k;

	for (i = 0; i < MCPM_N; i++) {
		ck_assert_msg(mcp_methods[i].name != NULL, "row %zu empty", i);
		ck_assert_msg(strlen(mcp_methods[i].name) == mcp_methods[i].len,
		    "%s: length %zu", mcp_methods[i].name, mcp_methods[i].len);
		ck_assert_int_eq(mcp_method_lookup(mcp_methods[i].name,
		    mcp_methods[i].len), i);
		ck_assert_str_eq(mcp_method_name((enum mcp_method)i),
		    mcp_methods[i].name);
		/* Counted as itself or as other, never as another method. */
		ck_assert(mcp_methods[i].counted == (enum mcp_method)i ||
		    mcp_methods[i].counted == MCPM_OTHER);
		for (k = 0; k < i; k++)
			ck_assert_str_ne(mcp_methods[i].name,
			    mcp_methods[k].name);
	}
}
END_TEST

START_TEST(test_lookup)
{
	static const char	 text[] = "tools/callx";

	ck_assert_int_eq(mcp_method_lookup("tools/call", 10), MCPM_TOOLS_CALL);
	ck_assert_int_eq(mcp_method_lookup(text, 10), MCPM_TOOLS_CALL);
	ck_assert_int_eq(mcp_method_lookup(text, 11), MCPM_OTHER);
	ck_assert_int_eq(mcp_method_lookup("tools/cal", 9), MCPM_OTHER);
	ck_assert_int_eq(mcp_method_lookup("Tools/call", 10), MCPM_OTHER);
	ck_assert_int_eq(mcp_method_lookup("", 0), MCPM_OTHER);
	ck_assert_int_eq(mcp_method_lookup("notifications/cancelled", 23),
	    MCPM_CANCELLED);
	ck_assert_str_eq(mcp_method_name(MCPM_OTHER), "other");
}
END_TEST

/* jrpc_scan sets the row of a message's method, other for the rest. */
START_TEST(test_scan)
{
	static const char *const msgs[] = {
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\"}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools\\/call\"}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/callx\"}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}",
	};
	static const enum mcp_method want[] = { MCPM_TOOLS_CALL,
	    MCPM_TOOLS_CALL, MCPM_PROGRESS, MCPM_OTHER, MCPM_OTHER };
	struct jrpc	 m;
	const char	*why;
	size_t		 i;

	for (i = 0; i < sizeof msgs / sizeof msgs[0]; i++) {
		ck_assert_int_eq(jrpc_scan(msgs[i], strlen(msgs[i]), &m, &why),
		    0);
		ck_assert_int_eq(m.method_id, want[i]);
	}
}
END_TEST

/* Each flag names the methods the code named one by one before. */
START_TEST(test_flags)
{
	static const char *const v2025[] = { "initialize", "ping",
	    "tools/list", "tools/call", "resources/list",
	    "resources/templates/list", "resources/read",
	    "resources/subscribe", "resources/unsubscribe", "prompts/list",
	    "prompts/get", "completion/complete", "logging/setLevel",
	    "tools/register", "tools/unregister", NULL };
	static const char *const v2026[] = { "server/discover", "tools/list",
	    "tools/call", "resources/list", "resources/templates/list",
	    "resources/read", "prompts/list", "prompts/get",
	    "completion/complete", "subscriptions/listen", NULL };
	static const char *const no_catalog[] = { "ping", "logging/setLevel",
	    "initialize", "tools/register", "tools/unregister",
	    "server/discover", NULL };
	static const char *const lists[] = { "tools/list", "prompts/list",
	    "resources/list", "resources/templates/list", NULL };
	static const char *const calls[] = { "tools/call", "resources/read",
	    "prompts/get", NULL };
	static const char *const progress[] = { "tools/call",
	    "resources/read", "prompts/get", "completion/complete", NULL };
	static const char *const input[] = { "sampling/createMessage",
	    "elicitation/create", "roots/list", NULL };

	check_flag(MCPM_F_2025, v2025);
	check_flag(MCPM_F_2026, v2026);
	check_flag(MCPM_F_NO_CATALOG, no_catalog);
	check_flag(MCPM_F_LIST, lists);
	check_flag(MCPM_F_STREAMS, calls);
	check_flag(MCPM_F_PARKS, calls);
	check_flag(MCPM_F_PROGRESS, progress);
	check_flag(MCPM_F_INPUT, input);
}
END_TEST

/* What Mcp-Name mirrors, and what requests are counted as. */
START_TEST(test_param_counted)
{
	static const char *const counted[] = { "initialize", "ping",
	    "tools/list", "tools/call", "resources/list",
	    "resources/templates/list", "resources/read",
	    "resources/subscribe", "resources/unsubscribe", "prompts/list",
	    "prompts/get", "completion/complete", "logging/setLevel",
	    "tools/register", "tools/unregister", "server/discover",
	    "subscriptions/listen", "other", NULL };
	size_t	i, k;
	int	named;

	for (i = 0; i < MCPM_N; i++) {
		named = 0;
		for (k = 0; counted[k] != NULL; k++) {
			if (strcmp(counted[k], mcp_methods[i].name) == 0)
				named = 1;
		}
		ck_assert_int_eq(mcp_methods[i].counted, named ? i :
		    MCPM_OTHER);
		if (i == MCPM_TOOLS_CALL || i == MCPM_PROMPTS_GET)
			ck_assert_str_eq(mcp_methods[i].param, "name");
		else if (i == MCPM_RESOURCES_READ)
			ck_assert_str_eq(mcp_methods[i].param, "uri");
		else
			ck_assert_ptr_null(mcp_methods[i].param);
	}
}
END_TEST

static Suite *
mcp_method_suite(void)
{
	Suite	*s = suite_create("mcp_method");
	TCase	*tc = tcase_create("core");

	tcase_add_test(tc, test_rows);
	tcase_add_test(tc, test_lookup);
	tcase_add_test(tc, test_scan);
	tcase_add_test(tc, test_flags);
	tcase_add_test(tc, test_param_counted);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr = srunner_create(mcp_method_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
