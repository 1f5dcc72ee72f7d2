/* SPDX-License-Identifier: ISC */
/*
 * A strict JSON scanner that validates text and locates values by byte
 * span, without building a tree.  It lets the gateway route and rewrite
 * messages (ids, progress tokens, names) by splicing bytes, so a large
 * result passes through without being parsed into memory.
 *
 * jscan_validate() checks a whole text against RFC 8259 (UTF-8, escapes,
 * surrogate pairs, number grammar, nesting depth).  The navigation
 * functions assume text that has been validated and do not check again.
 */
#ifndef MCPS_JSON_SCAN_H
#define MCPS_JSON_SCAN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct evbuffer;

#define JSCAN_MAX_DEPTH	256

/* A value's position in its text; an absent value has len 0. */
struct jspan {
	size_t	off;
	size_t	len;
};

enum jtype {
	JT_NONE = 0,
	JT_OBJECT,
	JT_ARRAY,
	JT_STRING,
	JT_NUMBER,
	JT_TRUE,
	JT_FALSE,
	JT_NULL
};

/* Iterator over the members of an object or the elements of an array. */
struct jiter {
	const char	*p;
	size_t		 pos;
	size_t		 end;
	int		 first;
};

/* One replacement for jscan_splice; edits are sorted, non-overlapping. */
struct jedit {
	struct jspan	 at;
	const char	*text;
	size_t		 len;
};

/*
 * Validate that p[0..n) is exactly one JSON value, with optional whitespace
 * around it.  On success returns 0 and sets *value to the value's span; on
 * failure returns -1 and sets *why (static text) and *where (byte offset).
 */
int		 jscan_validate(const char *p, size_t n, struct jspan *value,
		    const char **why, size_t *where);

/*
 * Replace in place every \uXXXX escape of an unpaired surrogate in the
 * strings of p[0..n) by \ufffd (as long): what JSON.stringify writes of a
 * string cut inside a pair, which RFC 8259 leaves undefined and UTF-8
 * cannot carry.  Returns how many were replaced.
 */
size_t		 jscan_fix_surrogates(char *p, size_t n);

enum jtype	 jscan_type(const char *p, struct jspan);

/* Start iterating an object (or array); returns -1 if it is not one. */
int		 jscan_object(const char *p, struct jspan, struct jiter *);
int		 jscan_array(const char *p, struct jspan, struct jiter *);
/* Next member: 1 with key (a string span) and value set, 0 at the end. */
int		 jscan_next_member(struct jiter *, struct jspan *key,
		    struct jspan *value);
/* Next element: 1 with value set, 0 at the end. */
int		 jscan_next_element(struct jiter *, struct jspan *value);

/* Compare a string span's decoded text with a C string. */
int		 jscan_string_equals(const char *p, struct jspan, const char *);
/* Find a member of an object by decoded key; 0 if found, -1 if not. */
int		 jscan_member(const char *p, struct jspan obj, const char *key,
		    struct jspan *value);
/* Find a member by a path of keys ("params", "_meta", NULL). */
int		 jscan_path(const char *p, struct jspan obj,
		    const char *const *keys, struct jspan *value);
/*
 * The same, where the key must appear only once in each object on the way:
 * 0 if found, -1 if absent, -2 if a key is duplicated (a peer that reads
 * the last one would see another value than the gateway).
 */
int		 jscan_member_unique(const char *p, struct jspan obj,
		    const char *key, struct jspan *value);
int		 jscan_path_unique(const char *p, struct jspan obj,
		    const char *const *keys, struct jspan *value);
/*
 * Decode a string span into buf (NUL-terminated; an embedded NUL is kept).
 * Returns the decoded length, or -1 if not a string or it does not fit.
 */
ssize_t		 jscan_string(const char *p, struct jspan, char *buf,
		    size_t size);
/* Decode a string span into a new allocation (caller frees), or NULL. */
char		*jscan_strdup(const char *p, struct jspan);
/* Read an integer number span; -1 if not an integer in int64 range. */
int		 jscan_int64(const char *p, struct jspan, int64_t *);

/* Append p[0..n) to out with the edits applied. */
void		 jscan_splice(struct evbuffer *out, const char *p, size_t n,
		    const struct jedit *edits, size_t nedits);
/* Return a new evbuffer (caller frees): p[0..n) with one span replaced. */
struct evbuffer	*jscan_replace(const char *p, size_t n, struct jspan at,
		    const char *text, size_t len);
/*
 * The same as jscan_splice, where p[0..n) lives in the evbuffer owner (taken): long
 * unchanged runs are added to out by reference instead of copied, and
 * owner is freed once out has let go of the last of them.  owner must not
 * change meanwhile.
 */
void		 jscan_splice_owned(struct evbuffer *out, struct evbuffer *owner,
		    const char *p, size_t n, const struct jedit *edits,
		    size_t nedits);
/* Append s as a JSON string literal (quoted and escaped). */
void		 jscan_add_string(struct evbuffer *out, const char *s,
		    size_t len);
/* The same without the quotes (a string built piece by piece). */
void		 jscan_add_escaped(struct evbuffer *out, const char *s,
		    size_t len);

#endif
