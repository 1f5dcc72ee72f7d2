/* SPDX-License-Identifier: ISC */
/*
 * Fuzz the tool search index (common/search_index.c) with what upstreams
 * and clients control: a tool's name, title, description and parameter
 * names from the input's first part, a query from the rest (split at the
 * first NUL, or in the middle).  Tokens are 2 to 32 bytes of lowercase
 * letters, digits or bytes above 0x7f, never a stop word's separator;
 * the tool is indexed in two groups; a search returns at most its limit,
 * scores positive and falling, keys of live documents; a dropped group
 * leaves only the other, and nothing once both are dropped.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "search_index.h"

#define CHECK(x) do {							\
	if (!(x)) {							\
		fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__,	\
		    __LINE__, #x);					\
		abort();						\
	}								\
} while (0)

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Check the tokens of a text. */
static void
check_tokens(const char *s, size_t n, int flags)
{
	char	t[64][SIDX_TOKEN_MAX + 1];
	size_t	i, j, k, len;

	k = sidx_tokens(s, n, flags, t, 64);
	CHECK(k <= 64);
	for (i = 0; i < k; i++) {
		len = strlen(t[i]);
		CHECK(len >= 2 && len <= SIDX_TOKEN_MAX);
		for (j = 0; j < len; j++) {
			unsigned char c = (unsigned char)t[i][j];

			CHECK((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
			    c >= 0x80);
		}
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char	*p = (const char *)data, *nul;
	struct sidx	*x;
	struct sidx_hit	 hits[8];
	json_t		*tool, *props;
	size_t		 doc_len, q_len, n, i;
	char		*doc;
	int		 flags;

	if (size < 1)
		return (0);
	flags = data[0] & 1 ? SIDX_STEM : 0;
	p++;
	size--;
	nul = memchr(p, '\0', size);
	doc_len = nul != NULL ? (size_t)(nul - p) : size / 2;
	q_len = size - doc_len - (nul != NULL);
	check_tokens(p, doc_len, flags);
	check_tokens(p + size - q_len, q_len, flags);

	/* A tool whose every field is the first part (as text jansson
	 * takes: NULs are not in it, invalid UTF-8 is refused). */
	doc = malloc(doc_len + 1);
	memcpy(doc, p, doc_len);
	doc[doc_len] = '\0';
	x = sidx_new(16, 1 << 20, flags);
	tool = json_pack("{s:s?, s:s?, s:s?}", "name", doc, "title", doc,
	    "description", doc);
	if (tool == NULL)
		tool = json_object();
	props = json_object();
	if (json_object_set_new(props, doc, json_pack("{s:s?}",
	    "description", doc)) != 0)
		json_object_set_new(props, "p", json_object());
	json_object_set_new(tool, "inputSchema", json_pack("{s:o}",
	    "properties", props));
	CHECK(sidx_add(x, "a", "a__t", tool) == 0);
	CHECK(sidx_add(x, "b", "b__t", tool) == 0);
	json_decref(tool);
	CHECK(sidx_count(x) == 2);

	n = sidx_search(x, p + size - q_len, q_len, NULL, hits, 8);
	CHECK(n <= 2);
	for (i = 0; i < n; i++) {
		CHECK(hits[i].score > 0);
		CHECK(sidx_key(x, hits[i].doc) != NULL);
		if (i > 0)
			CHECK(hits[i - 1].score >= hits[i].score);
	}
	/* Equal documents score equally. */
	if (n == 2)
		CHECK(hits[0].score == hits[1].score);
	sidx_drop_group(x, "a");
	CHECK(sidx_count(x) == 1);
	n = sidx_search(x, p + size - q_len, q_len, NULL, hits, 1);
	CHECK(n <= 1);
	if (n == 1)
		CHECK(strcmp(sidx_key(x, hits[0].doc), "b__t") == 0);
	sidx_drop_group(x, "b");
	CHECK(sidx_count(x) == 0 && sidx_terms(x) == 0);
	sidx_free(x);
	free(doc);
	return (0);
}
