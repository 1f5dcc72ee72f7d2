/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <stdlib.h>

#include "heap.h"
#include "log.h"
#include "xmalloc.h"

#define HEAP_MIN_CAP	16

/* Where an item keeps its position (index + 1; 0: not in the heap). */
static size_t *
heap_slot(const struct heap *h, const void *item)
{
	return ((size_t *)(void *)((char *)(uintptr_t)item + h->slot));
}

/* Put an item at an index and record it there. */
static void
heap_set(struct heap *h, size_t i, void *item)
{
	h->v[i] = item;
	*heap_slot(h, item) = i + 1;
}

/* Move the item at i up while it is larger than its parent. */
static void
heap_up(struct heap *h, size_t i)
{
	void		*item = h->v[i];
	uint64_t	 k = h->key(item);
	size_t		 parent;

	while (i > 0) {
		parent = (i - 1) / 2;
		if (h->key(h->v[parent]) >= k)
			break;
		heap_set(h, i, h->v[parent]);
		i = parent;
	}
	heap_set(h, i, item);
}

/* Move the item at i down while a child is larger. */
static void
heap_down(struct heap *h, size_t i)
{
	void		*item = h->v[i];
	uint64_t	 k = h->key(item), kc, kr;
	size_t		 c;

	for (;;) {
		c = 2 * i + 1;
		if (c >= h->n)
			break;
		kc = h->key(h->v[c]);
		if (c + 1 < h->n && (kr = h->key(h->v[c + 1])) > kc) {
			c++;
			kc = kr;
		}
		if (kc <= k)
			break;
		heap_set(h, i, h->v[c]);
		i = c;
	}
	heap_set(h, i, item);
}

void
heap_init(struct heap *h, heap_key_fn key, size_t slot_offset)
{
	h->v = NULL;
	h->n = h->cap = 0;
	h->key = key;
	h->slot = slot_offset;
}

void
heap_free(struct heap *h)
{
	free(h->v);
	h->v = NULL;
	h->n = h->cap = 0;
}

int
heap_has(const struct heap *h, const void *item)
{
	return (*heap_slot(h, item) != 0);
}

void
heap_insert(struct heap *h, void *item)
{
	if (heap_has(h, item))
		fatalx("%s: already in the heap", __func__);
	if (h->n == h->cap) {
		h->cap = h->cap == 0 ? HEAP_MIN_CAP : h->cap * 2;
		h->v = xreallocarray(h->v, h->cap, sizeof *h->v);
	}
	h->v[h->n++] = item;
	heap_up(h, h->n - 1);
}

void
heap_remove(struct heap *h, void *item)
{
	size_t	 i, *slot = heap_slot(h, item);
	void	*last;

	if (*slot == 0)
		return;
	i = *slot - 1;
	*slot = 0;
	last = h->v[--h->n];
	if (i != h->n) {
		/* The last item takes the place: it may go up or down. */
		h->v[i] = last;
		heap_up(h, i);
		heap_down(h, *heap_slot(h, last) - 1);
	}
	/* Give back memory after a crowd is gone. */
	if (h->cap > HEAP_MIN_CAP && h->n < h->cap / 4) {
		h->cap /= 2;
		h->v = xreallocarray(h->v, h->cap, sizeof *h->v);
	}
}

void
heap_update(struct heap *h, void *item)
{
	size_t	i = *heap_slot(h, item);

	if (i == 0)
		fatalx("%s: not in the heap", __func__);
	heap_up(h, i - 1);
	heap_down(h, *heap_slot(h, item) - 1);
}

void *
heap_top(const struct heap *h)
{
	return (h->n > 0 ? h->v[0] : NULL);
}

size_t
heap_count(const struct heap *h)
{
	return (h->n);
}
