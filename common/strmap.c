/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "strmap.h"
#include "xmalloc.h"

/* Hash bytes with FNV-1a. */
uint64_t
fnv1a64(const void *p, size_t len)
{
	const unsigned char	*u = p;
	uint64_t		 h = 0xcbf29ce484222325ULL;
	size_t			 i;

	for (i = 0; i < len; i++) {
		h ^= u[i];
		h *= 0x100000001b3ULL;
	}
	return (h);
}

void
strmap_init(struct strmap *m)
{
	memset(m, 0, sizeof *m);
}

void
strmap_free(struct strmap *m)
{
	struct strmap_entry	*e, *next;
	size_t			 i;

	for (i = 0; i < m->nbuckets; i++) {
		for (e = m->buckets[i]; e != NULL; e = next) {
			next = e->next;
			free(e->key);
			free(e);
		}
	}
	free(m->buckets);
	memset(m, 0, sizeof *m);
}

/* Double the bucket array. */
static void
strmap_grow(struct strmap *m)
{
	struct strmap_entry	**old = m->buckets, *e, *next;
	size_t			  oldn = m->nbuckets, i, j;

	m->nbuckets = oldn == 0 ? 16 : oldn * 2;
	m->buckets = xcalloc(m->nbuckets, sizeof *m->buckets);
	for (i = 0; i < oldn; i++) {
		for (e = old[i]; e != NULL; e = next) {
			next = e->next;
			j = e->hash & (m->nbuckets - 1);
			e->next = m->buckets[j];
			m->buckets[j] = e;
		}
	}
	free(old);
}

/* Find the entry for a key. */
static struct strmap_entry **
strmap_find(const struct strmap *m, const char *key, size_t len, uint64_t h)
{
	struct strmap_entry	**ep;

	if (m->nbuckets == 0)
		return (NULL);
	ep = &m->buckets[h & (m->nbuckets - 1)];
	for (; *ep != NULL; ep = &(*ep)->next) {
		if ((*ep)->hash == h && (*ep)->keylen == len &&
		    memcmp((*ep)->key, key, len) == 0)
			return (ep);
	}
	return (ep);
}

int
strmap_add(struct strmap *m, const char *key, void *value)
{
	struct strmap_entry	**ep, *e;
	size_t			  len = strlen(key);
	uint64_t		  h = fnv1a64(key, len);

	if ((ep = strmap_find(m, key, len, h)) != NULL && *ep != NULL)
		return (-1);
	if (m->count + 1 > m->nbuckets)
		strmap_grow(m);
	e = xcalloc(1, sizeof *e);
	e->key = xstrdup(key);
	e->keylen = len;
	e->value = value;
	e->hash = h;
	ep = &m->buckets[h & (m->nbuckets - 1)];
	e->next = *ep;
	*ep = e;
	m->count++;
	return (0);
}

void *
strmap_getn(const struct strmap *m, const char *key, size_t len)
{
	struct strmap_entry	**ep;

	ep = strmap_find(m, key, len, fnv1a64(key, len));
	if (ep == NULL || *ep == NULL)
		return (NULL);
	return ((*ep)->value);
}

const char *
strmap_key(const struct strmap *m, const char *key)
{
	struct strmap_entry	**ep;
	size_t			  len = strlen(key);

	ep = strmap_find(m, key, len, fnv1a64(key, len));
	if (ep == NULL || *ep == NULL)
		return (NULL);
	return ((*ep)->key);
}

void *
strmap_get(const struct strmap *m, const char *key)
{
	return (strmap_getn(m, key, strlen(key)));
}

void *
strmap_del(struct strmap *m, const char *key)
{
	struct strmap_entry	**ep, *e;
	size_t			  len = strlen(key);
	void			 *value;

	ep = strmap_find(m, key, len, fnv1a64(key, len));
	if (ep == NULL || *ep == NULL)
		return (NULL);
	e = *ep;
	*ep = e->next;
	value = e->value;
	free(e->key);
	free(e);
	m->count--;
	return (value);
}
