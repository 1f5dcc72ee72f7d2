/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <stdlib.h>

#include "ringmap.h"
#include "xmalloc.h"

void
ringmap_init(struct ringmap *m, size_t cap)
{
	m->slots = xcalloc(cap, sizeof *m->slots);
	m->cap = cap;
	m->next = 0;
	strmap_init(&m->index);
}

void
ringmap_free(struct ringmap *m)
{
	size_t	i;

	for (i = 0; i < m->cap; i++)
		free(m->slots[i].key);
	free(m->slots);
	m->slots = NULL;
	m->cap = m->next = 0;
	strmap_free(&m->index);
}

char *
ringmap_put(struct ringmap *m, const char *key, uint32_t value)
{
	struct ringmap_slot	*s;
	char			*old;

	if ((s = strmap_get(&m->index, key)) != NULL) {
		s->value = value;
		return (NULL);
	}
	s = &m->slots[m->next];
	if ((old = s->key) != NULL)
		strmap_del(&m->index, old);
	s->key = xstrdup(key);
	s->value = value;
	strmap_add(&m->index, key, s);
	m->next = (m->next + 1) % m->cap;
	return (old);
}

int
ringmap_take(struct ringmap *m, const char *key, uint32_t *value)
{
	struct ringmap_slot	*s;

	if ((s = strmap_del(&m->index, key)) == NULL)
		return (-1);
	*value = s->value;
	free(s->key);
	s->key = NULL;
	return (0);
}

size_t
ringmap_count(const struct ringmap *m)
{
	return (m->index.count);
}
