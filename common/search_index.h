/* SPDX-License-Identifier: ISC */
/*
 * A local full-text index of tools, ranked by BM25F over four fields: the
 * name, the title, the description, and the parameters (inputSchema's
 * property names and their descriptions).  Documents belong to a group (an
 * upstream), and a group is replaced whole, so a change of one upstream's
 * list re-indexes that upstream alone.  No I/O and no daemon state: the
 * supervisor (tool_search.c), the unit suite and bench/search drive it.
 * Bounded in documents and in bytes, overhead counted.
 */
#ifndef MCPS_SEARCH_INDEX_H
#define MCPS_SEARCH_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#define SIDX_TOKEN_MAX		32	/* bytes of a token; longer are cut */
#define SIDX_QUERY_TERMS	32	/* distinct terms of a query used */
#define SIDX_DOC_TERMS		512	/* distinct terms of a document */
#define SIDX_FIELD_TEXT		8192	/* bytes of a field read */

/* Flags of an index. */
#define SIDX_STEM		0x1	/* light suffix stripping */

enum sidx_field {
	SIDX_NAME,
	SIDX_TITLE,
	SIDX_DESC,
	SIDX_PARAMS,
	SIDX_NFIELDS
};

struct sidx;

struct sidx_hit {
	uint32_t	 doc;
	double		 score;
};

/* Make an index of at most max_docs documents and max_bytes (counted
 * with overhead). */
struct sidx	*sidx_new(size_t max_docs, size_t max_bytes, int flags);
void		 sidx_free(struct sidx *);

/*
 * The tokens of a text, as both documents and queries are cut: at most
 * max of them into out.  Lowercase ASCII, Latin-1 letters folded to
 * their base letter, split at anything but letters and digits and at
 * camelCase, stop words and one-letter tokens dropped, stemmed if flags
 * say so.  Returns how many.
 */
size_t		 sidx_tokens(const char *, size_t, int flags,
		    char out[][SIDX_TOKEN_MAX + 1], size_t max);

/* Add a tool (an object with name, title, description, inputSchema) to
 * a group under its key (unique: the exposed name).  0, or -1 if a
 * bound refuses it (nothing added). */
int		 sidx_add(struct sidx *, const char *group, const char *key,
		    const json_t *tool);
/* Remove every document of a group. */
void		 sidx_drop_group(struct sidx *, const char *group);

/*
 * The best documents for a query, best first, at most limit into hits.
 * visible, if not NULL, has a byte per document id below sidx_slots():
 * a document whose byte is 0 is left out before ranking, and out of the
 * statistics (document count, lengths, frequencies), so it changes no
 * score.  Returns how many.
 */
size_t		 sidx_search(struct sidx *, const char *query, size_t len,
		    const uint8_t *visible, struct sidx_hit *hits,
		    size_t limit);

/* Document ids are below this; a free id has no key. */
size_t		 sidx_slots(const struct sidx *);
/* A document's key and group (borrowed), or NULL if the id is free. */
const char	*sidx_key(const struct sidx *, uint32_t);
const char	*sidx_group(const struct sidx *, uint32_t);
size_t		 sidx_count(const struct sidx *);
size_t		 sidx_terms(const struct sidx *);
/* Bytes held, with an allowance per allocation. */
size_t		 sidx_bytes(const struct sidx *);

#endif
