/* SPDX-License-Identifier: ISC */
/*
 * A chained hash map from strings (copied and owned by the map) to borrowed
 * pointers.  Used for the catalog's exposed names and resource URIs.
 */
#ifndef MCPS_STRMAP_H
#define MCPS_STRMAP_H

#include <stddef.h>
#include <stdint.h>

struct strmap_entry {
	char			*key;
	size_t			 keylen;
	void			*value;
	uint64_t		 hash;
	struct strmap_entry	*next;
};

struct strmap {
	struct strmap_entry	**buckets;
	size_t			  nbuckets;	/* a power of two, or 0 */
	size_t			  count;
};

/* FNV-1a, 64 bits: deterministic across runs and machines. */
uint64_t	 fnv1a64(const void *, size_t);

void		 strmap_init(struct strmap *);
/* Free the map and its keys, not the values. */
void		 strmap_free(struct strmap *);
/* Insert; returns -1 (and changes nothing) if the key exists. */
int		 strmap_add(struct strmap *, const char *key, void *value);
void		*strmap_get(const struct strmap *, const char *key);
/* A key of len bytes; one with a NUL in it matches nothing. */
void		*strmap_getn(const struct strmap *, const char *key, size_t);
/* The map's own copy of a key (valid while it is in the map), or NULL. */
const char	*strmap_key(const struct strmap *, const char *key);
void		*strmap_del(struct strmap *, const char *key);

#endif
