/* SPDX-License-Identifier: ISC */
/*
 * The merged catalog: every upstream's tools, resources, templates and
 * prompts under their exposed names, with the map back to the upstream.
 * A catalog is built whole from one part per upstream and never changed;
 * the global one is rebuilt when an upstream's part changes, and a session
 * with per-session upstreams has a view of its own (catalog_view.c) built
 * the same way from its instances' parts.  Lists are kept as one serialised text per
 * item, so a page is cut from them and a change is seen item by item.
 * Tools registered by clients are not in a catalog: they come and go with
 * sessions, so the registry (ctools.c) keeps them, and every list of
 * tools shows them after the catalog's own, and a name is looked up there
 * after the catalog, so an upstream's item always wins.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "b64.h"
#include "log.h"
#include "naming.h"
#include "supervisor.h"
#include "xmalloc.h"

/* The catalog arrays as the worker sends them, per kind. */
static const char *const kind_keys[CATALOG_NKINDS] = {
	[CATALOG_TOOLS] = "tools",
	[CATALOG_RESOURCES] = "resources",
	[CATALOG_TEMPLATES] = "resourceTemplates",
	[CATALOG_PROMPTS] = "prompts",
};

#define TEMPLATE_MAX_VARS	8
#define TEMPLATE_URI_MAX	8192	/* bytes of a URI matched against
					   templates */

/* One listed item, serialised once. */
struct catalog_item {
	const char	*key;		/* exposed name, uri or uriTemplate;
					   borrowed from its entry */
	char		*text;
	size_t		 len;
};

struct catalog_list {
	struct catalog_item	*items;
	size_t			 n;
};

/* One merged view; built whole, then only read.  Counted references. */
struct catalog {
	unsigned int		 refs;
	struct strmap		 maps[CATALOG_NKINDS];	/* key -> entry */
	struct catalog_entry	*templates;	/* name is the uriTemplate */
	size_t			 ntemplates;
	struct catalog_entry	*entries;	/* every entry, owned */
	size_t			 nentries;
	struct catalog_list	 lists[CATALOG_NKINDS];
	json_t			*collisions;
	json_t			*renamed;
};

static struct catalog	*global;

/* Make an empty catalog with room for n entries. */
static struct catalog *
catalog_new(size_t n)
{
	struct catalog	*c;
	int		 k;

	c = xcalloc(1, sizeof *c);
	c->refs = 1;
	for (k = 0; k < CATALOG_NKINDS; k++) {
		strmap_init(&c->maps[k]);
		c->lists[k].items = xcalloc(n + 1, sizeof *c->lists[k].items);
	}
	c->entries = xcalloc(n + 1, sizeof *c->entries);
	c->templates = xcalloc(n + 1, sizeof *c->templates);
	c->collisions = json_array();
	c->renamed = json_array();
	return (c);
}

struct catalog *
catalog_ref(struct catalog *c)
{
	c->refs++;
	return (c);
}

void
catalog_unref(struct catalog *c)
{
	size_t	i;
	int	k;

	if (c == NULL || --c->refs > 0)
		return;
	for (k = 0; k < CATALOG_NKINDS; k++) {
		strmap_free(&c->maps[k]);
		for (i = 0; i < c->lists[k].n; i++)
			free(c->lists[k].items[i].text);
		free(c->lists[k].items);
	}
	for (i = 0; i < c->nentries; i++)
		free(c->entries[i].name);
	free(c->entries);
	free(c->templates);
	json_decref(c->collisions);
	json_decref(c->renamed);
	free(c);
}

void
catalog_init(void)
{
	pin_init();
	tool_search_init();
	global = catalog_new(0);
}

void
catalog_free(void)
{
	catalog_unref(global);
	global = NULL;
	tool_search_free();
	pin_free();
}

struct catalog *
catalog_global(void)
{
	return (global);
}

/* Count the items an upstream lists of a kind. */
size_t
catalog_count(const struct upstream *up, enum catalog_kind kind)
{
	if (up->catalog == NULL)
		return (0);
	return (json_array_size(json_object_get(up->catalog,
	    kind_keys[kind])));
}

/* Note a collision between two upstreams. */
static void
catalog_collision(struct catalog *c, const char *kind, const char *name,
    const struct upstream *kept, const struct upstream *dropped)
{
	json_array_append_new(c->collisions, json_pack("{s:s, s:s, s:s, s:s}",
	    "kind", kind, "name", name, "kept", kept->sc->name,
	    "dropped", dropped->sc->name));
}

/* Add an entry and its listed item (entries were sized beforehand). */
static struct catalog_entry *
catalog_add(struct catalog *c, enum catalog_kind kind, const char *key,
    struct upstream *up, const char *name, size_t namelen, json_t *item)
{
	struct catalog_entry	*e = &c->entries[c->nentries++];
	struct catalog_list	*l = &c->lists[kind];
	struct catalog_item	*it = &l->items[l->n];

	e->up = up;
	e->name = xmalloc(namelen + 1);
	memcpy(e->name, name, namelen);
	e->name[namelen] = '\0';
	e->namelen = namelen;
	e->index = l->n;
	if ((it->text = json_dumps(item, JSON_COMPACT | JSON_ENCODE_ANY)) ==
	    NULL)
		fatalx("json_dumps");
	it->len = strlen(it->text);
	strmap_add(&c->maps[kind], key, e);
	/* The map owns a copy of the key; the item borrows the map's. */
	it->key = strmap_key(&c->maps[kind], key);
	l->n++;
	if (kind == CATALOG_TEMPLATES)
		c->templates[c->ntemplates++] = *e;
	return (e);
}

/* Merge the named items (tools or prompts) of every upstream. */
static void
catalog_merge_named(struct catalog *c, enum catalog_kind kind,
    json_t *const *parts, int is_global)
{
	struct upstream		*up;
	struct catalog_entry	*old;
	const struct tool_override *o;
	json_t			*items, *item, *copy, *name;
	const char		*s;
	char			 exposed[NAME_MAX_EXPOSED + 1];
	size_t			 i, j, len;
	int			 how;

	for (i = 0; i < nupstreams; i++) {
		up = upstreams[i];
		if (parts[i] == NULL)
			continue;
		items = json_object_get(parts[i], kind_keys[kind]);
		json_array_foreach(items, j, item) {
			name = json_object_get(item, "name");
			if (!json_is_string(name))
				continue;
			s = json_string_value(name);
			len = json_string_length(name);
			how = kind == CATALOG_TOOLS ?
			    name_expose_tool(up->sc->prefix, s, len, exposed) :
			    name_expose_prompt(up->sc->prefix, s, len, exposed);
			/* The operator's override: hidden, or renamed. */
			o = kind == CATALOG_TOOLS ? override_find(up, s, len) :
			    NULL;
			if (o != NULL && o->hidden)
				continue;
			if (o != NULL && o->name != NULL) {
				snprintf(exposed, sizeof exposed, "%s", o->name);
				how = 0;
			}
			/* A changed definition may be held back. */
			if (kind == CATALOG_TOOLS &&
			    !pin_check(up, item, exposed, is_global))
				continue;
			if ((old = strmap_get(&c->maps[kind], exposed)) !=
			    NULL) {
				catalog_collision(c, kind_keys[kind], exposed,
				    old->up, up);
				continue;
			}
			if (how & NAME_MAPPED)
				json_array_append_new(c->renamed, json_pack(
				    "{s:s, s:s, s:s%, s:s}", "kind",
				    kind_keys[kind], "upstream", up->sc->name,
				    "name", s, len, "exposed", exposed));
			copy = json_copy(item);
			json_object_set_new(copy, "name", json_string(exposed));
			if (o != NULL)
				override_apply(o, copy);
			catalog_add(c, kind, exposed, up, s, len, copy);
			json_decref(copy);
		}
	}
}

/* Merge the resources (by uri) or templates (by uriTemplate). */
static void
catalog_merge_resources(struct catalog *c, enum catalog_kind kind,
    json_t *const *parts)
{
	struct upstream		*up;
	struct catalog_entry	*old;
	json_t			*items, *item, *uri;
	const char		*s, *key;
	size_t			 i, j;

	key = kind == CATALOG_RESOURCES ? "uri" : "uriTemplate";
	for (i = 0; i < nupstreams; i++) {
		up = upstreams[i];
		if (parts[i] == NULL)
			continue;
		items = json_object_get(parts[i], kind_keys[kind]);
		json_array_foreach(items, j, item) {
			uri = json_object_get(item, key);
			if (!json_is_string(uri))
				continue;
			s = json_string_value(uri);
			/* A URI must be usable as a key: no NUL in it. */
			if (*s == '\0' || strlen(s) != json_string_length(uri))
				continue;
			if ((old = strmap_get(&c->maps[kind], s)) != NULL) {
				catalog_collision(c, kind_keys[kind], s,
				    old->up, up);
				continue;
			}
			catalog_add(c, kind, s, up, s, strlen(s), item);
		}
	}
}

struct catalog *
catalog_build(json_t *const *parts, int is_global)
{
	struct catalog	*c;
	size_t		 total = 0, i;
	int		 k;

	for (i = 0; i < nupstreams; i++) {
		for (k = 0; parts[i] != NULL && k < CATALOG_NKINDS; k++)
			total += json_array_size(json_object_get(parts[i],
			    kind_keys[k]));
	}
	c = catalog_new(total);
	catalog_merge_named(c, CATALOG_TOOLS, parts, is_global);
	catalog_merge_named(c, CATALOG_PROMPTS, parts, is_global);
	catalog_merge_resources(c, CATALOG_RESOURCES, parts);
	catalog_merge_resources(c, CATALOG_TEMPLATES, parts);
	return (c);
}

/* The next item at or after i that an endpoint lists (all: NULL). */
static size_t
diff_next(const struct catalog_list *l, enum catalog_kind kind, size_t i,
    const struct vendpoint *v)
{
	while (v != NULL && i < l->n && !vendpoint_lists(v, kind,
	    l->items[i].key))
		i++;
	return (i);
}

int
catalog_diff_by(const struct catalog *a, const struct catalog *b,
    const struct vendpoint *v)
{
	const struct catalog_list	*la, *lb;
	size_t				 i, j;
	int				 k, changed = 0;

	for (k = 0; k < CATALOG_NKINDS; k++) {
		la = &a->lists[k];
		lb = &b->lists[k];
		if (v == NULL && la->n != lb->n) {
			changed |= 1 << k;
			continue;
		}
		/* The items listed, in order, one by one. */
		for (i = j = 0;; i++, j++) {
			i = diff_next(la, k, i, v);
			j = diff_next(lb, k, j, v);
			if (i == la->n || j == lb->n) {
				if (i != la->n || j != lb->n)
					changed |= 1 << k;
				break;
			}
			if (la->items[i].len != lb->items[j].len ||
			    memcmp(la->items[i].text, lb->items[j].text,
			    la->items[i].len) != 0) {
				changed |= 1 << k;
				break;
			}
		}
	}
	return (changed);
}

int
catalog_diff(const struct catalog *a, const struct catalog *b)
{
	return (catalog_diff_by(a, b, NULL));
}

int
catalog_any_match(const struct catalog *c, enum catalog_kind kind,
    int (*match)(enum catalog_kind, const char *key, const void *),
    const void *arg)
{
	const struct catalog_list	*l;
	size_t				 i;
	int				 k;

	for (k = kind; k == (int)kind || (kind == CATALOG_RESOURCES &&
	    k == CATALOG_TEMPLATES); k++) {
		l = &c->lists[k];
		for (i = 0; i < l->n; i++) {
			if (match((enum catalog_kind)k, l->items[i].key, arg))
				return (1);
		}
	}
	return (0);
}

/* Log the entries of a report that were not in the previous one. */
static void
catalog_log_new(const json_t *before, const json_t *after, int renames)
{
	json_t		*c, *o;
	size_t		 i, j, next = 0;
	int		 seen;

	json_array_foreach(after, i, c) {
		/* Both are in merge order: the next one is most likely the
		 * one after the last found, and a walk only for what moved. */
		if (next < json_array_size(before) &&
		    json_equal(c, json_array_get(before, next))) {
			next++;
			continue;
		}
		seen = 0;
		json_array_foreach(before, j, o) {
			if (json_equal(c, o)) {
				seen = 1;
				next = j + 1;
				break;
			}
		}
		if (seen)
			continue;
		if (renames)
			log_warnx("catalog: %s of upstream %s named \"%.100s\" "
			    "is not a valid name: exposed as %s",
			    json_string_value(json_object_get(c, "kind")),
			    json_string_value(json_object_get(c, "upstream")),
			    json_string_value(json_object_get(c, "name")),
			    json_string_value(json_object_get(c, "exposed")));
		else
			log_warnx("catalog: %s \"%s\" of upstream %s collides "
			    "with upstream %s and is not exposed",
			    json_string_value(json_object_get(c, "kind")),
			    json_string_value(json_object_get(c, "name")),
			    json_string_value(json_object_get(c, "dropped")),
			    json_string_value(json_object_get(c, "kept")));
	}
}

/* Rebuild the global catalog from every upstream's part. */
void
catalog_rebuild(void)
{
	struct catalog	*c, *old = global;
	json_t		**parts;
	size_t		 i;
	int		 changed;

	parts = xcalloc(nupstreams + 1, sizeof *parts);
	for (i = 0; i < nupstreams; i++)
		parts[i] = upstreams[i]->catalog;
	pin_merge_begin();
	c = catalog_build(parts, 1);
	free(parts);
	catalog_log_new(old->collisions, c->collisions, 0);
	catalog_log_new(old->renamed, c->renamed, 1);
	changed = catalog_diff(old, c);
	vendpoint_catalog_changed(old, c, changed);
	global = c;
	catalog_unref(old);
	tool_search_stale();
	/* Issued first: a session that leaves its view as the views are
	 * rebuilt is told by it, and skips this (broadcast_view_left). */
	route_list_changed(NULL, changed);
	/* Views hold the shared upstreams' parts too. */
	view_rebuild_all();
}

/* Encode a cursor: base64url of "<next index>:<last key>". */
static void
cursor_add(struct evbuffer *out, size_t next, const char *key)
{
	char	raw[CATALOG_CURSOR_MAX], b64[B64URL_LEN(CATALOG_CURSOR_MAX) + 1];
	size_t	n;

	/* What cursor_decode takes back: its bound on the encoded text. */
	n = (size_t)snprintf(raw, sizeof raw, "%zu:%s", next, key);
	if (n > CATALOG_CURSOR_MAX - 4)
		n = (size_t)snprintf(raw, sizeof raw, "%zu:", next);
	evbuffer_add(out, b64, b64url_encode((const unsigned char *)raw, n,
	    b64));
}

/* Decode a cursor of ours; -1 if it is not one. */
static int
cursor_decode(const char *in, size_t len, size_t *next, char *key,
    size_t keylen)
{
	char		 raw[CATALOG_CURSOR_MAX + 4], *colon, *end;
	size_t		 i, n = 0;
	uint32_t	 v;
	int		 d, j, have;
	unsigned long	 ul;

	if (len == 0 || len % 4 == 1 || len / 4 * 3 + 3 > CATALOG_CURSOR_MAX)
		return (-1);
	for (i = 0; i < len; i += 4) {
		v = 0;
		have = 0;
		for (j = 0; j < 4; j++) {
			if (i + (size_t)j < len) {
				d = b64url_digit((unsigned char)in[i + j]);
				if (d < 0)
					return (-1);
				v |= (uint32_t)d << (18 - 6 * j);
				have++;
			}
		}
		raw[n++] = (char)(v >> 16);
		if (have > 2)
			raw[n++] = (char)(v >> 8);
		if (have > 3)
			raw[n++] = (char)v;
	}
	raw[n] = '\0';
	if (memchr(raw, '\0', n) != NULL ||
	    (colon = strchr(raw, ':')) == NULL || colon == raw)
		return (-1);
	*colon = '\0';
	ul = strtoul(raw, &end, 10);
	if (*end != '\0' || raw[0] < '0' || raw[0] > '9')
		return (-1);
	if (strlen(colon + 1) >= keylen)
		return (-1);
	*next = ul;
	strcpy(key, colon + 1);
	return (0);
}

/* May a session see an item of a list?  Resources by their URI. */
static int
page_allows(const struct session *s, enum catalog_kind kind, const char *key)
{
	const char	*why;

	if (kind == CATALOG_RESOURCES)
		return (acl_allows_uri(s, key, &why) == 1);
	return (acl_allows(s, kind, key));
}

/*
 * Item i of a list, into *item (borrowed): the catalog's, then for tools
 * the clients', where one is left out if an item of the catalog holds its
 * name.  0 if it is not listed, or the session may not see it.
 */
static int
catalog_at(const struct catalog *c, enum catalog_kind kind, size_t i,
    const struct session *s, int filtered, struct catalog_item *item)
{
	const struct catalog_list	*l = &c->lists[kind];
	struct ctool			*t;

	if (i < l->n)
		*item = l->items[i];
	else {
		if ((t = ctools_at(i - l->n)) == NULL ||
		    strmap_get(&c->maps[CATALOG_TOOLS], t->key) != NULL)
			return (0);
		item->key = t->key;
		item->text = t->text;
		item->len = t->len;
	}
	return (!filtered || page_allows(s, kind, item->key));
}

int
catalog_page(const struct catalog *c, enum catalog_kind kind,
    const char *cursor, size_t cursorlen, unsigned int page_size,
    const struct session *s, struct evbuffer *out)
{
	const struct catalog_list	*l = &c->lists[kind];
	struct catalog_entry		*e;
	struct catalog_item		 item;
	struct ctool			*t;
	const char			*last = "";
	char				 key[CATALOG_CURSOR_MAX];
	size_t				 start = 0, end, i, n = 0, total;
	int				 filtered = s != NULL &&
					    acl_filtered(s);

	total = l->n + (kind == CATALOG_TOOLS ? ctools_count() : 0);
	if (cursor != NULL) {
		if (cursor_decode(cursor, cursorlen, &start, key,
		    sizeof key) != 0)
			return (-1);
		/* After the last item served if it is still listed, else
		 * where the next one was: a change never fails a cursor. */
		if ((e = strmap_get(&((struct catalog *)c)->maps[kind],
		    key)) != NULL)
			start = e->index + 1;
		else if (kind == CATALOG_TOOLS && (t = ctools_get(key)) !=
		    NULL)
			start = l->n + t->e.index + 1;
		if (start > total)
			start = total;
	}
	/* page_size items the session may see, from start. */
	evbuffer_add_printf(out, "{\"%s\":[", kind_keys[kind]);
	for (i = end = start; i < total && n < page_size; i++) {
		end = i + 1;
		if (!catalog_at(c, kind, i, s, filtered, &item))
			continue;
		if (n++ > 0)
			evbuffer_add(out, ",", 1);
		evbuffer_add(out, item.text, item.len);
		last = item.key;
	}
	while (end < total && !catalog_at(c, kind, end, s, filtered, &item))
		end++;
	evbuffer_add(out, "]", 1);
	if (end < total) {
		evbuffer_add(out, ",\"nextCursor\":\"", 15);
		/* The last item served, never one the session may not see. */
		cursor_add(out, end, last);
		evbuffer_add(out, "\"", 1);
	}
	evbuffer_add(out, "}", 1);
	return (0);
}

struct catalog_entry *
catalog_tool(const struct catalog *c, const char *name)
{
	struct catalog_entry	*e;
	struct ctool		*t;

	if ((e = strmap_get(&((struct catalog *)c)->maps[CATALOG_TOOLS],
	    name)) != NULL)
		return (e);
	return ((t = ctools_get(name)) != NULL ? &t->e : NULL);
}

const char *
catalog_tool_at(const struct catalog *c, size_t i, const char **text,
    size_t *len, const struct catalog_entry **e)
{
	const struct catalog_list	*l = &c->lists[CATALOG_TOOLS];

	if (i >= l->n)
		return (NULL);
	*text = l->items[i].text;
	*len = l->items[i].len;
	*e = strmap_get(&((struct catalog *)c)->maps[CATALOG_TOOLS],
	    l->items[i].key);
	return (l->items[i].key);
}

struct catalog_entry *
catalog_prompt(const struct catalog *c, const char *name)
{
	return (strmap_get(&((struct catalog *)c)->maps[CATALOG_PROMPTS],
	    name));
}

/* One piece of a template: a literal byte, or an expression. */
struct tpl_piece {
	char	c;		/* the literal */
	int	var;		/* 0 literal, 1 an expression, 2 one that
				   takes '/' too */
};

/*
 * Match a URI against an RFC 6570 template: literal text must match, and
 * each {expression} matches one or more characters, excluding '/' unless
 * the expression is {+var}, {#var} or {/var}.  Every way of matching is
 * followed at once, a character at a time (state 2k: before piece k;
 * 2k + 1: inside expression k, having matched a character), so a URI
 * costs its length times the template's, never a backtracking search.
 */
static int
template_match(const char *t, const char *u)
{
	struct tpl_piece	*pc;
	unsigned char		*cur, *next, *tmp;
	const char		*end;
	size_t			 n = 0, k, i, ns;
	int			 fits, alive = 1, ok;

	if (strlen(u) > TEMPLATE_URI_MAX)
		return (0);
	pc = xcalloc(strlen(t) + 1, sizeof *pc);
	for (i = 0; t[i] != '\0'; n++) {
		if (t[i] != '{') {
			pc[n].c = t[i++];
			continue;
		}
		if ((end = strchr(t + i, '}')) == NULL) {
			free(pc);
			return (0);
		}
		pc[n].var = t[i + 1] == '+' || t[i + 1] == '#' ||
		    t[i + 1] == '/' ? 2 : 1;
		i = (size_t)(end - t) + 1;
	}
	ns = 2 * (n + 1);
	cur = xcalloc(ns, 1);
	next = xcalloc(ns, 1);
	cur[0] = 1;
	for (; *u != '\0' && alive; u++) {
		memset(next, 0, ns);
		alive = 0;
		for (k = 0; k < n; k++) {
			fits = pc[k].var == 2 || (pc[k].var == 1 && *u != '/');
			if (cur[2 * k] && (pc[k].var != 0 ? fits :
			    pc[k].c == *u))
				next[pc[k].var != 0 ? 2 * k + 1 : 2 * k + 2] =
				    1;
			if (cur[2 * k + 1] && fits)
				next[2 * k + 1] = 1;
		}
		/* An expression that has matched a character may end. */
		for (k = 0; k < n; k++) {
			if (next[2 * k + 1])
				next[2 * k + 2] = 1;
		}
		for (k = 0; k < ns && !alive; k++)
			alive = next[k];
		tmp = cur;
		cur = next;
		next = tmp;
	}
	ok = alive && cur[2 * n];
	free(cur);
	free(next);
	free(pc);
	return (ok);
}

/* Count the expressions of a template. */
static size_t
template_vars(const char *t)
{
	size_t	n = 0;

	for (; *t != '\0'; t++) {
		if (*t == '{')
			n++;
	}
	return (n);
}

struct upstream *
catalog_resource(const struct catalog *c, const char *uri)
{
	struct catalog_entry	*e;
	size_t			 i;

	if ((e = strmap_get(&((struct catalog *)c)->maps[CATALOG_RESOURCES],
	    uri)) != NULL)
		return (e->up);
	for (i = 0; i < c->ntemplates; i++) {
		if (template_vars(c->templates[i].name) <= TEMPLATE_MAX_VARS &&
		    template_match(c->templates[i].name, uri))
			return (c->templates[i].up);
	}
	return (NULL);
}

json_t *
catalog_collisions(void)
{
	struct catalog_entry	*e;
	struct ctool		*t;
	json_t			*a = NULL;
	size_t			 i;

	/* With the clients' tools an upstream's item hides. */
	for (i = 0; (t = ctools_at(i)) != NULL; i++) {
		if ((e = strmap_get(&global->maps[CATALOG_TOOLS], t->key)) ==
		    NULL)
			continue;
		if (a == NULL)
			a = json_copy(global->collisions);
		json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:s}",
		    "kind", "tools", "name", t->key, "kept", e->up->sc->name,
		    "dropped", "a client"));
	}
	return (a != NULL ? a : json_incref(global->collisions));
}

json_t *
catalog_renamed(void)
{
	return (json_incref(global->renamed));
}

/*
 * The global catalog's tools for mcpctl tools: each exposed name with its
 * owner (an upstream, or a client session) and its own name; with a name,
 * that tool alone, its whole listed object included.  NULL if a name is
 * given and not listed.
 */
json_t *
catalog_tools_json(const char *only)
{
	const struct catalog_list	*l = &global->lists[CATALOG_TOOLS];
	struct catalog_entry		*e;
	struct catalog_item		 it;
	json_t				*a, *o, *item;
	char				 owner[80];
	size_t				 i;

	a = json_array();
	for (i = 0; i < l->n + ctools_count(); i++) {
		if (!catalog_at(global, CATALOG_TOOLS, i, NULL, 0, &it))
			continue;
		if (only != NULL && strcmp(it.key, only) != 0)
			continue;
		if ((e = catalog_tool(global, it.key)) == NULL)
			continue;
		if (e->up != NULL)
			snprintf(owner, sizeof owner, "%s", e->up->sc->name);
		else
			snprintf(owner, sizeof owner, "client %s.%.8s",
			    conf->instance, e->owner->id);
		o = json_pack("{s:s, s:s, s:s%}", "name", it.key, "owner",
		    owner, "original", e->name, e->namelen);
		json_object_set_new(o, "client", json_boolean(e->up == NULL));
		if (only != NULL && (item = json_loadb(it.text, it.len, 0,
		    NULL)) != NULL)
			json_object_set_new(o, "tool", item);
		json_array_append_new(a, o);
	}
	if (only != NULL && json_array_size(a) == 0) {
		json_decref(a);
		return (NULL);
	}
	return (a);
}
