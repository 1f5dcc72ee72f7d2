/* SPDX-License-Identifier: ISC */
/*
 * A BM25F index of tools (search_index.h).  Terms are kept in a string
 * map, each with its postings (document id and the term's frequency in
 * each field); a document keeps the terms it holds, so removing a group
 * compacts only the postings of the terms its documents held.  A query
 * adds each term's weight into one accumulator per document and keeps
 * the best in a small sorted array.
 *
 * BM25F (Robertson, Zaragoza, Taylor 2004): a term's frequency in a
 * document is the sum over fields of weight * tf / (1 - b + b * len /
 * average len), then saturated as tf' / (k1 + tf') and scaled by the
 * term's inverse document frequency, log(1 + (N - df + 0.5) / (df + 0.5)).
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search_index.h"
#include "strmap.h"
#include "xmalloc.h"

#define SIDX_ALLOC	16	/* bytes counted for each allocation */
#define SIDX_K1		1.2

/* The weight and length normalisation of each field, chosen beforehand:
 * a name says most, parameters least. */
static const double field_weight[SIDX_NFIELDS] = { 3.0, 2.0, 1.0, 0.5 };
static const double field_b[SIDX_NFIELDS] = { 0.5, 0.5, 0.75, 0.75 };

struct sidx_post {
	uint32_t	 doc;
	uint16_t	 tf[SIDX_NFIELDS];
};

struct sidx_term {
	const char		*s;	/* the map's key */
	struct sidx_post	*posts;	/* owned */
	uint32_t		 n, cap;
	uint32_t		 mark;	/* last compaction that saw it */
};

struct sidx_group {
	const char	*name;		/* the map's key */
	uint32_t	*docs;		/* owned */
	size_t		 n, cap;
};

struct sidx_doc {
	char			 *key;		/* owned; NULL: a free id */
	struct sidx_group	 *group;
	struct sidx_term	**terms;	/* owned array */
	uint32_t		  nterms;
	uint16_t		  len[SIDX_NFIELDS];
};

struct sidx {
	int			 flags;
	size_t			 max_docs, max_bytes, bytes;
	struct strmap		 terms;		/* text -> sidx_term */
	struct strmap		 groups;	/* name -> sidx_group */
	struct sidx_doc		*docs;		/* by id, slots of them */
	size_t			 slots, ndocs;
	uint32_t		*free_ids;	/* a stack, slots long */
	size_t			 nfree;
	uint64_t		 sumlen[SIDX_NFIELDS];
	uint32_t		 mark;
	double			*acc;		/* query scratch, slots long */
	uint32_t		*touched;
};

static const char *const stop_words[] = {
	"an", "and", "any", "are", "as", "at", "be", "by", "can", "could",
	"do", "does", "for", "from", "how", "if", "in", "into", "is", "it",
	"its", "me", "my", "of", "on", "or", "our", "please", "should",
	"some", "that", "the", "there", "this", "to", "want", "we", "what",
	"which", "will", "with", "would", "you", "your", NULL
};

/* The base letter of a Latin-1 letter (U+00C0 to U+00FF, second byte of
 * C3 xx less 0x80), or 0. */
static const char latin1_fold[65] =
    "aaaaaaaceeeeiiii" "dnooooo\0ouuuuyts"
    "aaaaaaaceeeeiiii" "dnooooo\0ouuuuyty";

static int
is_stop(const char *t)
{
	size_t	i;

	for (i = 0; stop_words[i] != NULL; i++) {
		if (strcmp(stop_words[i], t) == 0)
			return (1);
	}
	return (0);
}

static int
is_vowel(char c)
{
	return (c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u' ||
	    c == 'y');
}

/* Does t[0..n) hold a vowel? */
static int
has_vowel(const char *t, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		if (is_vowel(t[i]))
			return (1);
	}
	return (0);
}

static int
ends(const char *t, size_t n, const char *suffix)
{
	size_t	m = strlen(suffix);

	return (n >= m && memcmp(t + n - m, suffix, m) == 0);
}

/* Strip plural and -ing/-ed endings and a final e, lightly, in place:
 * "files" and "file", "reading" and "read", "created" and "create" meet. */
static size_t
stem(char *t, size_t n)
{
	if (n > 4 && ends(t, n, "ies") && !ends(t, n, "eies") &&
	    !ends(t, n, "aies")) {
		n -= 2;
		t[n - 1] = 'y';
	} else if (n > 4 && (ends(t, n, "sses") || ends(t, n, "xes") ||
	    ends(t, n, "ches") || ends(t, n, "shes") || ends(t, n, "zes")))
		n -= 2;
	else if (n > 3 && t[n - 1] == 's' && !ends(t, n, "ss") &&
	    !ends(t, n, "us") && !ends(t, n, "is"))
		n--;
	if (n > 5 && ends(t, n, "ing") && has_vowel(t, n - 3))
		n -= 3;
	else if (n > 4 && ends(t, n, "ed") && has_vowel(t, n - 2))
		n -= 2;
	else if (n > 4 && t[n - 1] == 'e')
		n--;
	/* "running", "stopped": one of a doubled consonant goes. */
	if (n > 3 && t[n - 1] == t[n - 2] && !is_vowel(t[n - 1]) &&
	    t[n - 1] != 'l' && t[n - 1] != 's' && t[n - 1] != 'z')
		n--;
	t[n] = '\0';
	return (n);
}

/* The class of a byte: 0 a separator, 'l' lower, 'u' upper, 'd' digit,
 * 'x' other (part of a UTF-8 sequence). */
static int
byte_class(unsigned char c)
{
	if (c >= 'a' && c <= 'z')
		return ('l');
	if (c >= 'A' && c <= 'Z')
		return ('u');
	if (c >= '0' && c <= '9')
		return ('d');
	if (c >= 0x80)
		return ('x');
	return (0);
}

size_t
sidx_tokens(const char *s, size_t len, int flags,
    char out[][SIDX_TOKEN_MAX + 1], size_t max)
{
	const unsigned char	*u = (const unsigned char *)s;
	char			 tok[SIDX_TOKEN_MAX + 1];
	size_t			 i = 0, n, count = 0;
	int			 c, prev, next;
	char			 f;

	while (i < len && count < max) {
		while (i < len && byte_class(u[i]) == 0)
			i++;
		n = 0;
		prev = 0;
		while (i < len && (c = byte_class(u[i])) != 0) {
			/* camelCase: a lower then an upper, or the last of
			 * upper letters before a lower ("HTTPServer"). */
			if (n > 0 && c == 'u' && (prev == 'l' || (prev == 'u' &&
			    i + 1 < len && byte_class(u[i + 1]) == 'l')))
				break;
			f = (char)u[i];
			if (c == 'u')
				f = (char)(f - 'A' + 'a');
			next = 1;
			/* A Latin-1 letter in UTF-8 folds to ASCII. */
			if (u[i] == 0xc3 && i + 1 < len && u[i + 1] >= 0x80 &&
			    u[i + 1] < 0xc0 && latin1_fold[u[i + 1] - 0x80] !=
			    '\0') {
				f = latin1_fold[u[i + 1] - 0x80];
				next = 2;
				/* U+00C0 to U+00DF are capitals. */
				c = u[i + 1] < 0xa0 ? 'u' : 'l';
			}
			if (n < SIDX_TOKEN_MAX)
				tok[n++] = f;
			prev = c;
			i += (size_t)next;
		}
		/* Cut: the last UTF-8 sequence may be partial. */
		if (n == SIDX_TOKEN_MAX && (tok[n - 1] & 0x80)) {
			while (n > 0 && (tok[n - 1] & 0xc0) == 0x80)
				n--;
			if (n > 0 && (tok[n - 1] & 0x80))
				n--;
		}
		tok[n] = '\0';
		if (n < 2 || is_stop(tok))
			continue;
		if (flags & SIDX_STEM)
			n = stem(tok, n);
		memcpy(out[count++], tok, n + 1);
	}
	return (count);
}

struct sidx *
sidx_new(size_t max_docs, size_t max_bytes, int flags)
{
	struct sidx	*x;

	x = xcalloc(1, sizeof *x);
	x->flags = flags;
	x->max_docs = max_docs;
	x->max_bytes = max_bytes;
	x->bytes = sizeof *x + SIDX_ALLOC;
	strmap_init(&x->terms);
	strmap_init(&x->groups);
	return (x);
}

/* Free a term no posting refers to. */
static void
term_free(struct sidx *x, struct sidx_term *t)
{
	x->bytes -= sizeof *t + 2 * SIDX_ALLOC + strlen(t->s) + 1 +
	    sizeof(struct strmap_entry) + SIDX_ALLOC +
	    (size_t)t->cap * sizeof *t->posts + (t->cap ? SIDX_ALLOC : 0);
	strmap_del(&x->terms, t->s);
	free(t->posts);
	free(t);
}

void
sidx_free(struct sidx *x)
{
	struct strmap_entry	*e;
	size_t			 i;

	if (x == NULL)
		return;
	for (i = 0; i < x->slots; i++) {
		free(x->docs[i].key);
		free(x->docs[i].terms);
	}
	for (i = 0; i < x->terms.nbuckets; i++) {
		for (e = x->terms.buckets[i]; e != NULL; e = e->next) {
			free(((struct sidx_term *)e->value)->posts);
			free(e->value);
		}
	}
	for (i = 0; i < x->groups.nbuckets; i++) {
		for (e = x->groups.buckets[i]; e != NULL; e = e->next) {
			free(((struct sidx_group *)e->value)->docs);
			free(e->value);
		}
	}
	strmap_free(&x->terms);
	strmap_free(&x->groups);
	free(x->docs);
	free(x->free_ids);
	free(x->acc);
	free(x->touched);
	free(x);
}

/* A document's terms being gathered, with frequencies per field. */
struct doc_terms {
	char		 t[SIDX_DOC_TERMS][SIDX_TOKEN_MAX + 1];
	uint16_t	 tf[SIDX_DOC_TERMS][SIDX_NFIELDS];
	size_t		 n;
	uint16_t	 len[SIDX_NFIELDS];
};

/* Count the tokens of a text into a field. */
static void
gather(struct doc_terms *d, int flags, enum sidx_field f, const char *s,
    size_t len)
{
	char	tok[64][SIDX_TOKEN_MAX + 1];
	size_t	i, j, n, off, chunk;

	if (len > SIDX_FIELD_TEXT)
		len = SIDX_FIELD_TEXT;
	/* In chunks cut at a separator, so no token is split. */
	for (off = 0; off < len; off += chunk) {
		chunk = len - off;
		if (chunk > 256) {
			chunk = 256;
			while (chunk > 1 && byte_class((unsigned char)
			    s[off + chunk - 1]) != 0)
				chunk--;
			if (chunk == 1)
				chunk = 256;
		}
		n = sidx_tokens(s + off, chunk, flags, tok, 64);
		for (i = 0; i < n; i++) {
			for (j = 0; j < d->n; j++) {
				if (strcmp(d->t[j], tok[i]) == 0)
					break;
			}
			if (j == d->n) {
				if (d->n == SIDX_DOC_TERMS)
					continue;
				memcpy(d->t[j], tok[i], sizeof tok[i]);
				memset(d->tf[j], 0, sizeof d->tf[j]);
				d->n++;
			}
			if (d->tf[j][f] < UINT16_MAX)
				d->tf[j][f]++;
			if (d->len[f] < UINT16_MAX)
				d->len[f]++;
		}
	}
}

/* Gather a string member of an object into a field. */
static void
gather_member(struct doc_terms *d, int flags, enum sidx_field f,
    const json_t *o, const char *member)
{
	const json_t	*v = json_object_get(o, member);

	if (json_is_string(v))
		gather(d, flags, f, json_string_value(v),
		    json_string_length(v));
}

/* Grow the per-id arrays to hold one more id. */
static void
grow_slots(struct sidx *x)
{
	size_t	cap = x->slots + 1;

	x->docs = xreallocarray(x->docs, cap, sizeof *x->docs);
	memset(&x->docs[x->slots], 0, sizeof *x->docs);
	x->free_ids = xreallocarray(x->free_ids, cap, sizeof *x->free_ids);
	x->acc = xreallocarray(x->acc, cap, sizeof *x->acc);
	x->acc[x->slots] = 0;
	x->touched = xreallocarray(x->touched, cap, sizeof *x->touched);
	x->bytes += sizeof *x->docs + sizeof *x->free_ids + sizeof *x->acc +
	    sizeof *x->touched;
	x->free_ids[x->nfree++] = (uint32_t)x->slots;
	x->slots = cap;
}

/* Add a posting of doc to a term, made if new. */
static struct sidx_term *
post(struct sidx *x, const char *s, uint32_t doc, const uint16_t *tf)
{
	struct sidx_term	*t;
	size_t			 cap;

	if ((t = strmap_get(&x->terms, s)) == NULL) {
		t = xcalloc(1, sizeof *t);
		strmap_add(&x->terms, s, t);
		t->s = strmap_key(&x->terms, s);
		x->bytes += sizeof *t + 2 * SIDX_ALLOC + strlen(s) + 1 +
		    sizeof(struct strmap_entry) + SIDX_ALLOC;
	}
	if (t->n == t->cap) {
		cap = t->cap == 0 ? 2 : t->cap * 2;
		t->posts = xreallocarray(t->posts, cap, sizeof *t->posts);
		x->bytes += (cap - t->cap) * sizeof *t->posts +
		    (t->cap == 0 ? SIDX_ALLOC : 0);
		t->cap = (uint32_t)cap;
	}
	t->posts[t->n].doc = doc;
	memcpy(t->posts[t->n].tf, tf, sizeof t->posts[t->n].tf);
	t->n++;
	return (t);
}

/* Remove the documents of a group whose ids are listed, then the group
 * if it is left empty. */
static void
drop_docs(struct sidx *x, struct sidx_group *g, size_t from)
{
	struct sidx_doc		*d;
	struct sidx_term	*t, **empty = NULL;
	size_t			 i, j, k, w, nempty = 0, cap = 0;
	int			 f;

	x->mark++;
	for (i = from; i < g->n; i++) {
		d = &x->docs[g->docs[i]];
		/* Its postings go below, with every posting of a dead id. */
		d->group = NULL;
	}
	for (i = from; i < g->n; i++) {
		d = &x->docs[g->docs[i]];
		for (j = 0; j < d->nterms; j++) {
			t = d->terms[j];
			if (t->mark == x->mark)
				continue;
			t->mark = x->mark;
			for (k = w = 0; k < t->n; k++) {
				if (x->docs[t->posts[k].doc].group != NULL)
					t->posts[w++] = t->posts[k];
			}
			t->n = (uint32_t)w;
			/* Freed once no document refers to it. */
			if (t->n == 0) {
				if (nempty == cap) {
					cap = cap == 0 ? 64 : cap * 2;
					empty = xreallocarray(empty, cap,
					    sizeof *empty);
				}
				empty[nempty++] = t;
			}
		}
	}
	for (i = from; i < g->n; i++) {
		d = &x->docs[g->docs[i]];
		for (f = 0; f < SIDX_NFIELDS; f++)
			x->sumlen[f] -= d->len[f];
		x->bytes -= strlen(d->key) + 1 + SIDX_ALLOC +
		    d->nterms * sizeof *d->terms + SIDX_ALLOC;
		free(d->key);
		free(d->terms);
		memset(d, 0, sizeof *d);
		x->free_ids[x->nfree++] = g->docs[i];
		x->ndocs--;
	}
	for (i = 0; i < nempty; i++)
		term_free(x, empty[i]);
	free(empty);
	g->n = from;
	if (g->n == 0) {
		x->bytes -= sizeof *g + 2 * SIDX_ALLOC + strlen(g->name) + 1 +
		    sizeof(struct strmap_entry) + SIDX_ALLOC +
		    g->cap * sizeof *g->docs;
		strmap_del(&x->groups, g->name);
		free(g->docs);
		free(g);
	}
}

void
sidx_drop_group(struct sidx *x, const char *group)
{
	struct sidx_group	*g;

	if ((g = strmap_get(&x->groups, group)) != NULL)
		drop_docs(x, g, 0);
}

int
sidx_add(struct sidx *x, const char *group, const char *key,
    const json_t *tool)
{
	struct doc_terms	*dt;
	struct sidx_group	*g;
	struct sidx_doc		*d;
	const json_t		*props, *p;
	const char		*pname;
	uint32_t		 id;
	size_t			 i;
	int			 f;

	if (x->ndocs >= x->max_docs || x->bytes >= x->max_bytes)
		return (-1);
	dt = xcalloc(1, sizeof *dt);
	gather_member(dt, x->flags, SIDX_NAME, tool, "name");
	gather_member(dt, x->flags, SIDX_TITLE, tool, "title");
	gather_member(dt, x->flags, SIDX_DESC, tool, "description");
	props = json_object_get(json_object_get(tool, "inputSchema"),
	    "properties");
	json_object_foreach((json_t *)props, pname, p) {
		gather(dt, x->flags, SIDX_PARAMS, pname, strlen(pname));
		gather_member(dt, x->flags, SIDX_PARAMS, p, "description");
	}
	if ((g = strmap_get(&x->groups, group)) == NULL) {
		g = xcalloc(1, sizeof *g);
		strmap_add(&x->groups, group, g);
		g->name = strmap_key(&x->groups, group);
		x->bytes += sizeof *g + 2 * SIDX_ALLOC + strlen(group) + 1 +
		    sizeof(struct strmap_entry) + SIDX_ALLOC;
	}
	if (g->n == g->cap) {
		/* Counted as dropping the group uncounts it: cap whole. */
		x->bytes += (g->cap == 0 ? 8 : g->cap) * sizeof *g->docs;
		g->cap = g->cap == 0 ? 8 : g->cap * 2;
		g->docs = xreallocarray(g->docs, g->cap, sizeof *g->docs);
	}
	if (x->nfree == 0)
		grow_slots(x);
	id = x->free_ids[--x->nfree];
	g->docs[g->n++] = id;
	x->ndocs++;
	d = &x->docs[id];
	d->key = xstrdup(key);
	d->group = g;
	d->terms = xcalloc(dt->n + 1, sizeof *d->terms);
	d->nterms = (uint32_t)dt->n;
	x->bytes += strlen(key) + 1 + SIDX_ALLOC + dt->n * sizeof *d->terms +
	    SIDX_ALLOC;
	for (f = 0; f < SIDX_NFIELDS; f++) {
		d->len[f] = dt->len[f];
		x->sumlen[f] += dt->len[f];
	}
	for (i = 0; i < dt->n; i++)
		d->terms[i] = post(x, dt->t[i], id, dt->tf[i]);
	free(dt);
	/* Past the bound in bytes: taken back whole. */
	if (x->bytes > x->max_bytes) {
		drop_docs(x, g, g->n - 1);
		return (-1);
	}
	return (0);
}

/* Is a hit a better than b: higher score, then the smaller key. */
static int
better(const struct sidx *x, double sa, uint32_t a, double sb, uint32_t b)
{
	if (sa != sb)
		return (sa > sb);
	return (strcmp(x->docs[a].key, x->docs[b].key) < 0);
}

size_t
sidx_search(struct sidx *x, const char *query, size_t len,
    const uint8_t *visible, struct sidx_hit *hits, size_t limit)
{
	char			 q[SIDX_QUERY_TERMS][SIDX_TOKEN_MAX + 1];
	struct sidx_term	*t;
	const struct sidx_post	*p;
	double			 n, avg[SIDX_NFIELDS], idf, tf, norm[SIDX_NFIELDS];
	double			 sum[SIDX_NFIELDS], s;
	size_t			 nq, i, j, k, ntouched = 0, nhits = 0, df;
	uint32_t		 doc;
	int			 f;

	if (limit == 0)
		return (0);
	nq = sidx_tokens(query, len, x->flags, q, SIDX_QUERY_TERMS);
	/* The statistics of the documents the caller may see. */
	if (visible == NULL) {
		n = (double)x->ndocs;
		for (f = 0; f < SIDX_NFIELDS; f++)
			sum[f] = (double)x->sumlen[f];
	} else {
		n = 0;
		memset(sum, 0, sizeof sum);
		for (i = 0; i < x->slots; i++) {
			if (!visible[i] || x->docs[i].key == NULL)
				continue;
			n++;
			for (f = 0; f < SIDX_NFIELDS; f++)
				sum[f] += x->docs[i].len[f];
		}
	}
	if (n == 0)
		return (0);
	for (f = 0; f < SIDX_NFIELDS; f++)
		avg[f] = sum[f] > 0 ? sum[f] / n : 1;
	for (i = 0; i < nq; i++) {
		/* A term given twice counts once. */
		for (j = 0; j < i && strcmp(q[j], q[i]) != 0; j++)
			;
		if (j < i || (t = strmap_get(&x->terms, q[i])) == NULL)
			continue;
		df = 0;
		for (k = 0; k < t->n; k++)
			df += visible == NULL || visible[t->posts[k].doc];
		if (df == 0)
			continue;
		idf = log(1 + (n - (double)df + 0.5) / ((double)df + 0.5));
		for (k = 0; k < t->n; k++) {
			p = &t->posts[k];
			doc = p->doc;
			if (visible != NULL && !visible[doc])
				continue;
			tf = 0;
			for (f = 0; f < SIDX_NFIELDS; f++) {
				if (p->tf[f] == 0)
					continue;
				norm[f] = 1 - field_b[f] + field_b[f] *
				    x->docs[doc].len[f] / avg[f];
				tf += field_weight[f] * p->tf[f] / norm[f];
			}
			if (x->acc[doc] == 0)
				x->touched[ntouched++] = doc;
			x->acc[doc] += idf * tf / (SIDX_K1 + tf);
		}
	}
	/* The best limit of them, by insertion. */
	for (i = 0; i < ntouched; i++) {
		doc = x->touched[i];
		s = x->acc[doc];
		x->acc[doc] = 0;
		if (nhits == limit && !better(x, s, doc, hits[nhits - 1].score,
		    hits[nhits - 1].doc))
			continue;
		j = nhits < limit ? nhits++ : nhits - 1;
		while (j > 0 && better(x, s, doc, hits[j - 1].score,
		    hits[j - 1].doc)) {
			hits[j] = hits[j - 1];
			j--;
		}
		hits[j].doc = doc;
		hits[j].score = s;
	}
	return (nhits);
}

size_t
sidx_slots(const struct sidx *x)
{
	return (x->slots);
}

const char *
sidx_key(const struct sidx *x, uint32_t id)
{
	return (id < x->slots ? x->docs[id].key : NULL);
}

const char *
sidx_group(const struct sidx *x, uint32_t id)
{
	return (id < x->slots && x->docs[id].key != NULL ?
	    x->docs[id].group->name : NULL);
}

size_t
sidx_count(const struct sidx *x)
{
	return (x->ndocs);
}

size_t
sidx_terms(const struct sidx *x)
{
	return (x->terms.count);
}

size_t
sidx_bytes(const struct sidx *x)
{
	return (x->bytes);
}
