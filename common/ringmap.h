/* SPDX-License-Identifier: ISC */
/*
 * A map from strings to 32-bit values that holds at most a fixed number of
 * entries: when it is full, adding one forgets the oldest.  Used for URL
 * elicitations, whose completion may never come.
 */
#ifndef MCPS_RINGMAP_H
#define MCPS_RINGMAP_H

#include <stddef.h>
#include <stdint.h>

#include "strmap.h"

struct ringmap_slot {
	char		*key;		/* owned; NULL if the slot is free */
	uint32_t	 value;
};

struct ringmap {
	struct ringmap_slot	*slots;	/* owned; cap of them, in order added */
	size_t			 cap;
	size_t			 next;	/* the slot the next key goes to */
	struct strmap		 index;	/* key -> its slot */
};

/* cap must be at least 1. */
void	 ringmap_init(struct ringmap *, size_t cap);
/* Free the map and its keys. */
void	 ringmap_free(struct ringmap *);
/*
 * Map key to value (the key is copied).  A key already there keeps its
 * place and takes the new value.  Returns the key forgotten to make room,
 * which the caller frees, or NULL.
 */
char	*ringmap_put(struct ringmap *, const char *key, uint32_t value);
/* Remove key, setting *value; -1 if it is not there. */
int	 ringmap_take(struct ringmap *, const char *key, uint32_t *value);
/* How many keys it holds. */
size_t	 ringmap_count(const struct ringmap *);

#endif
