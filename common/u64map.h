/* SPDX-License-Identifier: ISC */
/*
 * A hash map from 64-bit keys to borrowed pointers: open addressing, linear
 * probing, backward-shift deletion.  Used for sessions, pending requests
 * and in-flight upstream requests.  Values are never owned by the map.
 */
#ifndef MCPS_U64MAP_H
#define MCPS_U64MAP_H

#include <stddef.h>
#include <stdint.h>

struct u64map_slot {
	uint64_t	 key;
	void		*value;		/* NULL marks an empty slot */
};

struct u64map {
	struct u64map_slot	*slots;
	size_t			 cap;	/* a power of two, or 0 */
	size_t			 count;
};

void	 u64map_init(struct u64map *);
/* Free the table (not the values). */
void	 u64map_free(struct u64map *);
/* Insert or replace; value must not be NULL. */
void	 u64map_put(struct u64map *, uint64_t, void *);
void	*u64map_get(const struct u64map *, uint64_t);
/* Remove and return the value, or NULL. */
void	*u64map_del(struct u64map *, uint64_t);
/*
 * Iterate: start with *pos = 0; returns 1 and sets key/value while entries
 * remain.  The map must not change during iteration.
 */
int	 u64map_next(const struct u64map *, size_t *pos, uint64_t *,
	    void **);

#endif
