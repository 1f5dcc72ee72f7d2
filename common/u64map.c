/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "u64map.h"
#include "xmalloc.h"

/* Mix a key into a slot index (splitmix64 finaliser). */
static size_t
u64map_hash(uint64_t k, size_t cap)
{
	k ^= k >> 30;
	k *= 0xbf58476d1ce4e5b9ULL;
	k ^= k >> 27;
	k *= 0x94d049bb133111ebULL;
	k ^= k >> 31;
	return ((size_t)k & (cap - 1));
}

void
u64map_init(struct u64map *m)
{
	memset(m, 0, sizeof *m);
}

void
u64map_free(struct u64map *m)
{
	free(m->slots);
	memset(m, 0, sizeof *m);
}

/* Double the table. */
static void
u64map_grow(struct u64map *m)
{
	struct u64map_slot	*old = m->slots;
	size_t			 oldcap = m->cap, i, j;

	m->cap = oldcap == 0 ? 16 : oldcap * 2;
	m->slots = xcalloc(m->cap, sizeof *m->slots);
	for (i = 0; i < oldcap; i++) {
		if (old[i].value == NULL)
			continue;
		j = u64map_hash(old[i].key, m->cap);
		while (m->slots[j].value != NULL)
			j = (j + 1) & (m->cap - 1);
		m->slots[j] = old[i];
	}
	free(old);
}

void
u64map_put(struct u64map *m, uint64_t key, void *value)
{
	size_t	i;

	if ((m->count + 1) * 4 > m->cap * 3)
		u64map_grow(m);
	i = u64map_hash(key, m->cap);
	while (m->slots[i].value != NULL) {
		if (m->slots[i].key == key) {
			m->slots[i].value = value;
			return;
		}
		i = (i + 1) & (m->cap - 1);
	}
	m->slots[i].key = key;
	m->slots[i].value = value;
	m->count++;
}

void *
u64map_get(const struct u64map *m, uint64_t key)
{
	size_t	i;

	if (m->cap == 0)
		return (NULL);
	i = u64map_hash(key, m->cap);
	while (m->slots[i].value != NULL) {
		if (m->slots[i].key == key)
			return (m->slots[i].value);
		i = (i + 1) & (m->cap - 1);
	}
	return (NULL);
}

void *
u64map_del(struct u64map *m, uint64_t key)
{
	size_t	 i, j, home;
	void	*value;

	if (m->cap == 0)
		return (NULL);
	i = u64map_hash(key, m->cap);
	while (m->slots[i].value != NULL && m->slots[i].key != key)
		i = (i + 1) & (m->cap - 1);
	if (m->slots[i].value == NULL)
		return (NULL);
	value = m->slots[i].value;
	m->slots[i].value = NULL;
	m->count--;

	/* Shift back later entries of the probe run that can move. */
	j = i;
	for (;;) {
		j = (j + 1) & (m->cap - 1);
		if (m->slots[j].value == NULL)
			break;
		home = u64map_hash(m->slots[j].key, m->cap);
		if (((j - home) & (m->cap - 1)) >= ((j - i) & (m->cap - 1))) {
			m->slots[i] = m->slots[j];
			m->slots[j].value = NULL;
			i = j;
		}
	}
	return (value);
}

int
u64map_next(const struct u64map *m, size_t *pos, uint64_t *key, void **value)
{
	while (*pos < m->cap) {
		if (m->slots[*pos].value != NULL) {
			*key = m->slots[*pos].key;
			*value = m->slots[*pos].value;
			(*pos)++;
			return (1);
		}
		(*pos)++;
	}
	return (0);
}
