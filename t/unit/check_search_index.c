/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for common/search_index.c: tokens (case, camelCase, Latin-1
 * folding, stop words, stems), ranking on a small fixed catalog, a group
 * replaced whole, documents a caller may not see left out before ranking
 * and out of the scores, and the bounds in documents and bytes.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <jansson.h>

#include "search_index.h"

/* The tokens of a text, space-separated. */
static const char *
toks(const char *text, int flags)
{
	static char	buf[1024];
	char		t[64][SIDX_TOKEN_MAX + 1];
	size_t		i, n, len = 0;

	n = sidx_tokens(text, strlen(text), flags, t, 64);
	buf[0] = '\0';
	for (i = 0; i < n; i++)
		len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s",
		    i > 0 ? " " : "", t[i]);
	return (buf);
}

START_TEST(test_tokens)
{
	ck_assert_str_eq(toks("fs__read_text_file", 0), "fs read text file");
	ck_assert_str_eq(toks("browser-navigate-back", 0),
	    "browser navigate back");
	ck_assert_str_eq(toks("getHTTPServerStatus", 0),
	    "get http server status");
	ck_assert_str_eq(toks("Read THE file, of a Café!", 0),
	    "read file cafe");
	/* ß folds to one s. */
	ck_assert_str_eq(toks("ÉLAN naïve Straße", 0), "elan naive strase");
	/* One letter is no token; digits are kept with their letters. */
	ck_assert_str_eq(toks("a x base64 v2 sha256", 0), "base64 v2 sha256");
	/* Other scripts are kept whole. */
	ck_assert_str_eq(toks("ファイル read", 0), "ファイル read");
	/* A long token is cut at a whole UTF-8 sequence. */
	ck_assert_uint_eq(strlen(toks("éééééééééééééééééééééééééééééééééé", 0)),
	    32);
	ck_assert_uint_eq(strlen(toks("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaa", 0)), 32);
	ck_assert_str_eq(toks("", 0), "");
	ck_assert_str_eq(toks("--__--", 0), "");
}
END_TEST

START_TEST(test_stem)
{
	ck_assert_str_eq(toks("files file", SIDX_STEM), "file file");
	ck_assert_str_eq(toks("reading read", SIDX_STEM), "read read");
	ck_assert_str_eq(toks("created create creating", SIDX_STEM),
	    "creat creat creat");
	ck_assert_str_eq(toks("entries entry", SIDX_STEM), "entry entry");
	ck_assert_str_eq(toks("matches match", SIDX_STEM), "match match");
	ck_assert_str_eq(toks("running stopped", SIDX_STEM), "run stop");
	/* No vowel left: kept. */
	ck_assert_str_eq(toks("string thing", SIDX_STEM), "string thing");
	ck_assert_str_eq(toks("address status", SIDX_STEM), "address status");
}
END_TEST

/* A tool as JSON. */
static json_t *
tool(const char *name, const char *title, const char *desc,
    const char *param, const char *pdesc)
{
	json_t	*t;

	t = json_pack("{s:s, s:s, s:{s:s, s:{}}}", "name", name,
	    "description", desc, "inputSchema", "type", "object",
	    "properties");
	if (title != NULL)
		json_object_set_new(t, "title", json_string(title));
	if (param != NULL)
		json_object_set_new(json_object_get(json_object_get(t,
		    "inputSchema"), "properties"), param, json_pack("{s:s}",
		    "description", pdesc));
	return (t);
}

static void
add(struct sidx *x, const char *group, json_t *t)
{
	ck_assert_int_eq(sidx_add(x, group, json_string_value(
	    json_object_get(t, "name")), t), 0);
	json_decref(t);
}

/* A small catalog of two upstreams. */
static struct sidx *
small(void)
{
	struct sidx	*x = sidx_new(100, 1 << 20, 0);

	add(x, "fs", tool("fs__read_file", "Read file",
	    "Read the complete contents of a file from disk.", "path",
	    "Path of the file"));
	add(x, "fs", tool("fs__write_file", NULL,
	    "Create a new file or overwrite an existing one.", "content",
	    "Text to write"));
	add(x, "fs", tool("fs__list_directory", NULL,
	    "List the entries of a directory.", "path", "Directory"));
	add(x, "gh", tool("gh__create_issue", "Create issue",
	    "Open a new issue in a GitHub repository.", "title",
	    "Issue title"));
	add(x, "gh", tool("gh__search_code", NULL,
	    "Search for code across GitHub repositories.", "q",
	    "Search query"));
	return (x);
}

/* The key of the best hit for a query, or "". */
static const char *
best(struct sidx *x, const char *q, const uint8_t *vis)
{
	struct sidx_hit	h[1];

	if (sidx_search(x, q, strlen(q), vis, h, 1) == 0)
		return ("");
	return (sidx_key(x, h[0].doc));
}

START_TEST(test_rank)
{
	struct sidx	*x = small();
	struct sidx_hit	 h[10];
	size_t		 n, i;

	ck_assert_str_eq(best(x, "read a file", NULL), "fs__read_file");
	ck_assert_str_eq(best(x, "open a GitHub issue", NULL),
	    "gh__create_issue");
	ck_assert_str_eq(best(x, "what is in this directory", NULL),
	    "fs__list_directory");
	ck_assert_str_eq(best(x, "search code", NULL), "gh__search_code");
	/* Scores fall, and only matching tools are returned. */
	n = sidx_search(x, "file", 4, NULL, h, 10);
	ck_assert_uint_eq(n, 2);
	for (i = 1; i < n; i++)
		ck_assert(h[i - 1].score >= h[i].score);
	/* A match in the name weighs more than in the description alone. */
	ck_assert_str_eq(sidx_key(x, h[0].doc), "fs__read_file");
	/* Nothing matches: nothing returned; a limit of 0 returns 0. */
	ck_assert_uint_eq(sidx_search(x, "zebra", 5, NULL, h, 10), 0);
	ck_assert_uint_eq(sidx_search(x, "", 0, NULL, h, 10), 0);
	ck_assert_uint_eq(sidx_search(x, "file", 4, NULL, h, 0), 0);
	ck_assert_uint_eq(sidx_search(x, "file", 4, NULL, h, 1), 1);
	sidx_free(x);
}
END_TEST

START_TEST(test_incremental)
{
	struct sidx	*x = small();
	size_t		 terms = sidx_terms(x);

	ck_assert_uint_eq(sidx_count(x), 5);
	/* gh's list changed: only gh is indexed again. */
	sidx_drop_group(x, "gh");
	ck_assert_uint_eq(sidx_count(x), 3);
	ck_assert_str_eq(best(x, "open a GitHub issue", NULL), "");
	ck_assert_str_eq(best(x, "read a file", NULL), "fs__read_file");
	add(x, "gh", tool("gh__close_issue", NULL, "Close an issue.", NULL,
	    NULL));
	ck_assert_str_eq(best(x, "issue", NULL), "gh__close_issue");
	ck_assert_str_eq(sidx_group(x, 0), "fs");
	/* The same again: as many terms as before. */
	sidx_drop_group(x, "gh");
	add(x, "gh", tool("gh__create_issue", "Create issue",
	    "Open a new issue in a GitHub repository.", "title",
	    "Issue title"));
	add(x, "gh", tool("gh__search_code", NULL,
	    "Search for code across GitHub repositories.", "q",
	    "Search query"));
	ck_assert_uint_eq(sidx_terms(x), terms);
	ck_assert_str_eq(best(x, "open a GitHub issue", NULL),
	    "gh__create_issue");
	sidx_drop_group(x, "nonexistent");
	ck_assert_uint_eq(sidx_count(x), 5);
	sidx_free(x);
}
END_TEST

/* The slot of a key. */
static size_t
slot(struct sidx *x, const char *key)
{
	size_t	i;

	for (i = 0; i < sidx_slots(x); i++) {
		if (sidx_key(x, (uint32_t)i) != NULL &&
		    strcmp(sidx_key(x, (uint32_t)i), key) == 0)
			return (i);
	}
	ck_abort_msg("no %s", key);
	return (0);
}

START_TEST(test_visible)
{
	struct sidx	*x = small(), *y;
	struct sidx_hit	 h[2], hy[2];
	uint8_t		 vis[16];
	size_t		 n, i;

	/* fs__read_file is the best for "read file", but hidden. */
	memset(vis, 1, sizeof vis);
	vis[slot(x, "fs__read_file")] = 0;
	n = sidx_search(x, "read file", 9, vis, h, 1);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(sidx_key(x, h[0].doc), "fs__write_file");
	/* The scores are those of an index without it. */
	y = sidx_new(100, 1 << 20, 0);
	add(y, "fs", tool("fs__write_file", NULL,
	    "Create a new file or overwrite an existing one.", "content",
	    "Text to write"));
	add(y, "fs", tool("fs__list_directory", NULL,
	    "List the entries of a directory.", "path", "Directory"));
	add(y, "gh", tool("gh__create_issue", "Create issue",
	    "Open a new issue in a GitHub repository.", "title",
	    "Issue title"));
	add(y, "gh", tool("gh__search_code", NULL,
	    "Search for code across GitHub repositories.", "q",
	    "Search query"));
	n = sidx_search(x, "write file", 10, vis, h, 2);
	ck_assert_uint_eq(sidx_search(y, "write file", 10, NULL, hy, 2), n);
	for (i = 0; i < n; i++) {
		ck_assert_str_eq(sidx_key(x, h[i].doc), sidx_key(y,
		    hy[i].doc));
		ck_assert(h[i].score == hy[i].score);
	}
	/* Nothing visible: nothing found. */
	memset(vis, 0, sizeof vis);
	ck_assert_uint_eq(sidx_search(x, "file", 4, vis, h, 2), 0);
	sidx_free(x);
	sidx_free(y);
}
END_TEST

START_TEST(test_bounds)
{
	struct sidx	*x = sidx_new(2, 1 << 20, 0);
	size_t		 base = sidx_bytes(x), bytes;
	json_t		*t;
	char		 big[SIDX_FIELD_TEXT * 2 + 1], name[32];
	int		 i, j;

	add(x, "a", tool("a__one", NULL, "first", NULL, NULL));
	add(x, "a", tool("a__two", NULL, "second", NULL, NULL));
	t = tool("a__three", NULL, "third", NULL, NULL);
	ck_assert_int_eq(sidx_add(x, "a", "a__three", t), -1);
	json_decref(t);
	ck_assert_uint_eq(sidx_count(x), 2);
	sidx_drop_group(x, "a");
	ck_assert_uint_eq(sidx_count(x), 0);
	ck_assert_uint_eq(sidx_terms(x), 0);
	/* What remains are the id slots, kept for reuse. */
	bytes = sidx_bytes(x);
	ck_assert_uint_lt(bytes - base, 200);
	sidx_free(x);

	/* A group added and dropped again and again: its bytes come back
	 * exactly (a drift of 16 bytes a time wrapped the count around). */
	x = sidx_new(100, 1 << 20, 0);
	add(x, "a", tool("a__one", NULL, "first", NULL, NULL));
	sidx_drop_group(x, "a");
	base = sidx_bytes(x);
	for (i = 0; i < 1000; i++) {
		add(x, "a", tool("a__one", NULL, "first", NULL, NULL));
		sidx_drop_group(x, "a");
		ck_assert_uint_eq(sidx_bytes(x), base);
	}
	/* Grown past its first array, twice (the second time with the id
	 * slots the first left for reuse). */
	for (j = 0; j < 2; j++) {
		for (i = 0; i < 20; i++) {
			snprintf(name, sizeof name, "a__%d", i);
			add(x, "a", tool(name, NULL, "many", NULL, NULL));
		}
		sidx_drop_group(x, "a");
		if (j == 0)
			base = sidx_bytes(x);
	}
	ck_assert_uint_eq(sidx_bytes(x), base);
	sidx_free(x);

	/* In bytes: a document past the bound is taken back whole. */
	x = sidx_new(1000, 16 * 1024, 0);
	base = sidx_bytes(x);
	for (i = 0; i < (int)sizeof big - 1; i++)
		big[i] = i % 7 == 6 ? ' ' : (char)('a' + (i * 7919) % 26);
	big[sizeof big - 1] = '\0';
	for (i = 0; i < 100; i++) {
		snprintf(name, sizeof name, "t%d", i);
		t = tool(name, NULL, big, NULL, NULL);
		bytes = sidx_bytes(x);
		if (sidx_add(x, "g", name, t) != 0) {
			/* Refused: nothing of it is kept but its id's
			 * slot, kept for reuse. */
			ck_assert_uint_lt(sidx_bytes(x) - bytes, 100);
			json_decref(t);
			break;
		}
		json_decref(t);
		ck_assert_uint_le(sidx_bytes(x), 16 * 1024);
	}
	ck_assert_int_lt(i, 100);
	/* A document's distinct terms are bounded too. */
	ck_assert_uint_le(sidx_terms(x), SIDX_DOC_TERMS * (size_t)(i + 1));
	sidx_drop_group(x, "g");
	ck_assert_uint_eq(sidx_terms(x), 0);
	sidx_free(x);
}
END_TEST

static Suite *
search_index_suite(void)
{
	Suite	*s = suite_create("search_index");
	TCase	*tc = tcase_create("core");

	tcase_add_test(tc, test_tokens);
	tcase_add_test(tc, test_stem);
	tcase_add_test(tc, test_rank);
	tcase_add_test(tc, test_incremental);
	tcase_add_test(tc, test_visible);
	tcase_add_test(tc, test_bounds);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr = srunner_create(search_index_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? 0 : 1);
}
