/* SPDX-License-Identifier: ISC */
/*
 * An indexed binary max-heap of borrowed pointers: the item with the
 * largest key is at the top, and an item can be removed or have its key
 * changed in O(log n) because it keeps its own position (a size_t inside
 * the item, at an offset given to heap_init; 0 means "not in the heap").
 * Used to find the connection furthest behind and the stream holding the
 * most, without walking them all.
 */
#ifndef MCPS_HEAP_H
#define MCPS_HEAP_H

#include <stddef.h>
#include <stdint.h>

/* The key of an item: larger keys come first. */
typedef uint64_t (*heap_key_fn)(const void *);

struct heap {
	void		**v;		/* v[0] is the top */
	size_t		  n;
	size_t		  cap;
	heap_key_fn	  key;
	size_t		  slot;		/* offset of the item's position */
};

void	 heap_init(struct heap *, heap_key_fn, size_t slot_offset);
/* Free the array (not the items, whose positions are left stale). */
void	 heap_free(struct heap *);
/* Is the item in the heap? */
int	 heap_has(const struct heap *, const void *);
/* Insert an item that is not in the heap. */
void	 heap_insert(struct heap *, void *);
/* Remove an item if it is in the heap. */
void	 heap_remove(struct heap *, void *);
/* The item's key changed: restore the order (it must be in the heap). */
void	 heap_update(struct heap *, void *);
/* The item with the largest key, or NULL. */
void	*heap_top(const struct heap *);
size_t	 heap_count(const struct heap *);

#endif
