#include "config.h"

#include <stdlib.h>
#include <string.h>

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

/* One merged view; rebuilt whole whenever an upstream's part changes. */
struct catalog {
	struct strmap		 tools;		/* exposed name -> entry */
	struct strmap		 prompts;	/* exposed name -> entry */
	struct strmap		 resources;	/* uri -> entry */
	struct catalog_entry	*templates;	/* name is the uriTemplate */
	size_t			 ntemplates;
	struct catalog_entry	*entries;	/* every entry, owned */
	size_t			 nentries;
	char			*lists[CATALOG_NKINDS];	/* list results */
	size_t			 listlens[CATALOG_NKINDS];
	json_t			*collisions;
};

static struct catalog	*cat;

/* Make an empty catalog. */
static struct catalog *
catalog_new(void)
{
	struct catalog	*c;
	int		 k;

	c = xcalloc(1, sizeof *c);
	strmap_init(&c->tools);
	strmap_init(&c->prompts);
	strmap_init(&c->resources);
	for (k = 0; k < CATALOG_NKINDS; k++) {
		xasprintf(&c->lists[k], "{\"%s\":[]}", kind_keys[k]);
		c->listlens[k] = strlen(c->lists[k]);
	}
	c->collisions = json_array();
	return (c);
}

/* Free a catalog. */
static void
catalog_destroy(struct catalog *c)
{
	size_t	i;
	int	k;

	if (c == NULL)
		return;
	strmap_free(&c->tools);
	strmap_free(&c->prompts);
	strmap_free(&c->resources);
	for (i = 0; i < c->nentries; i++)
		free(c->entries[i].name);
	free(c->entries);
	free(c->templates);
	for (k = 0; k < CATALOG_NKINDS; k++)
		free(c->lists[k]);
	json_decref(c->collisions);
	free(c);
}

void
catalog_init(void)
{
	cat = catalog_new();
}

void
catalog_free(void)
{
	catalog_destroy(cat);
	cat = NULL;
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

/* Add an entry to the owned list (entries were sized beforehand). */
static struct catalog_entry *
catalog_entry_add(struct catalog *c, struct upstream *up, const char *name)
{
	struct catalog_entry	*e = &c->entries[c->nentries++];

	e->up = up;
	e->name = xstrdup(name);
	return (e);
}

/* Merge the named items (tools or prompts) of every upstream. */
static void
catalog_merge_named(struct catalog *c, enum catalog_kind kind,
    struct strmap *map, json_t *out)
{
	struct upstream		*up;
	struct catalog_entry	*e, *old;
	json_t			*items, *item, *copy;
	const char		*name;
	char			 exposed[NAME_MAX_EXPOSED + 1];
	size_t			 i, j;

	for (i = 0; i < nupstreams; i++) {
		up = upstreams[i];
		if (up->catalog == NULL)
			continue;
		items = json_object_get(up->catalog, kind_keys[kind]);
		json_array_foreach(items, j, item) {
			name = json_string_value(json_object_get(item,
			    "name"));
			if (name == NULL || *name == '\0')
				continue;
			name_expose(up->sc->prefix, name, exposed);
			if ((old = strmap_get(map, exposed)) != NULL) {
				catalog_collision(c, kind_keys[kind], exposed,
				    old->up, up);
				continue;
			}
			e = catalog_entry_add(c, up, name);
			strmap_add(map, exposed, e);
			copy = json_deep_copy(item);
			json_object_set_new(copy, "name", json_string(exposed));
			json_array_append_new(out, copy);
		}
	}
}

/* Merge the resources (by uri) or templates (by uriTemplate). */
static void
catalog_merge_resources(struct catalog *c, enum catalog_kind kind, json_t *out)
{
	struct upstream		*up;
	struct catalog_entry	*e, *old;
	json_t			*items, *item;
	const char		*uri, *key;
	size_t			 i, j, t;

	key = kind == CATALOG_RESOURCES ? "uri" : "uriTemplate";
	for (i = 0; i < nupstreams; i++) {
		up = upstreams[i];
		if (up->catalog == NULL)
			continue;
		items = json_object_get(up->catalog, kind_keys[kind]);
		json_array_foreach(items, j, item) {
			uri = json_string_value(json_object_get(item, key));
			if (uri == NULL || *uri == '\0')
				continue;
			if (kind == CATALOG_RESOURCES) {
				if ((old = strmap_get(&c->resources,
				    uri)) != NULL) {
					catalog_collision(c, "resources", uri,
					    old->up, up);
					continue;
				}
				e = catalog_entry_add(c, up, uri);
				strmap_add(&c->resources, uri, e);
			} else {
				for (t = 0; t < c->ntemplates; t++) {
					if (strcmp(c->templates[t].name,
					    uri) == 0)
						break;
				}
				if (t < c->ntemplates) {
					catalog_collision(c,
					    "resourceTemplates", uri,
					    c->templates[t].up, up);
					continue;
				}
				e = catalog_entry_add(c, up, uri);
				c->templates[c->ntemplates++] = *e;
			}
			json_array_append(out, item);
		}
	}
}

/* Log collisions that were not in the previous catalog. */
static void
catalog_log_collisions(const json_t *before, const json_t *after)
{
	json_t		*c, *o;
	size_t		 i, j;
	int		 seen;

	json_array_foreach(after, i, c) {
		seen = 0;
		json_array_foreach(before, j, o) {
			if (json_equal(c, o)) {
				seen = 1;
				break;
			}
		}
		if (!seen) {
			log_warnx("catalog: %s \"%s\" of upstream %s collides "
			    "with upstream %s and is not exposed",
			    json_string_value(json_object_get(c, "kind")),
			    json_string_value(json_object_get(c, "name")),
			    json_string_value(json_object_get(c, "dropped")),
			    json_string_value(json_object_get(c, "kept")));
		}
	}
}

/* Rebuild the merged catalog from every upstream's part. */
void
catalog_rebuild(void)
{
	struct catalog	*c, *old = cat;
	json_t		*lists[CATALOG_NKINDS], *wrap;
	size_t		 total = 0, i;
	int		 k, changed[CATALOG_NKINDS];

	for (i = 0; i < nupstreams; i++) {
		for (k = 0; k < CATALOG_NKINDS; k++)
			total += catalog_count(upstreams[i], k);
	}
	c = catalog_new();
	c->entries = xcalloc(total + 1, sizeof *c->entries);
	c->templates = xcalloc(total + 1, sizeof *c->templates);
	for (k = 0; k < CATALOG_NKINDS; k++)
		lists[k] = json_array();

	catalog_merge_named(c, CATALOG_TOOLS, &c->tools, lists[CATALOG_TOOLS]);
	catalog_merge_named(c, CATALOG_PROMPTS, &c->prompts,
	    lists[CATALOG_PROMPTS]);
	catalog_merge_resources(c, CATALOG_RESOURCES,
	    lists[CATALOG_RESOURCES]);
	catalog_merge_resources(c, CATALOG_TEMPLATES,
	    lists[CATALOG_TEMPLATES]);

	for (k = 0; k < CATALOG_NKINDS; k++) {
		free(c->lists[k]);
		wrap = json_pack("{s:o}", kind_keys[k], lists[k]);
		c->lists[k] = json_dumps(wrap, JSON_COMPACT);
		json_decref(wrap);
		if (c->lists[k] == NULL)
			fatalx("json_dumps");
		c->listlens[k] = strlen(c->lists[k]);
		changed[k] = old == NULL || strcmp(old->lists[k],
		    c->lists[k]) != 0;
	}
	catalog_log_collisions(old != NULL ? old->collisions : NULL,
	    c->collisions);
	cat = c;
	catalog_destroy(old);

	if (changed[CATALOG_TOOLS])
		route_list_changed("notifications/tools/list_changed");
	if (changed[CATALOG_RESOURCES] || changed[CATALOG_TEMPLATES])
		route_list_changed("notifications/resources/list_changed");
	if (changed[CATALOG_PROMPTS])
		route_list_changed("notifications/prompts/list_changed");
}

const char *
catalog_list(enum catalog_kind kind, size_t *len)
{
	*len = cat->listlens[kind];
	return (cat->lists[kind]);
}

struct catalog_entry *
catalog_tool(const char *name)
{
	return (strmap_get(&cat->tools, name));
}

struct catalog_entry *
catalog_prompt(const char *name)
{
	return (strmap_get(&cat->prompts, name));
}

/*
 * Match a URI against an RFC 6570 template: literal text must match, and
 * each {expression} matches one or more characters, excluding '/' unless
 * the expression is {+var}, {#var} or {/var}.
 */
static int
template_match(const char *t, const char *u)
{
	const char	*end;
	int		 slash;

	while (*t != '\0') {
		if (*t != '{') {
			if (*t != *u)
				return (0);
			t++;
			u++;
			continue;
		}
		if ((end = strchr(t, '}')) == NULL)
			return (0);
		slash = t[1] == '+' || t[1] == '#' || t[1] == '/';
		t = end + 1;
		if (*u == '\0' || (!slash && *u == '/'))
			return (0);
		/* Match as little as possible, backtracking on failure. */
		for (u++; ; u++) {
			if (template_match(t, u))
				return (1);
			if (*u == '\0' || (!slash && *u == '/'))
				return (0);
		}
	}
	return (*u == '\0');
}

/* Count the expressions of a template (matching backtracks per each). */
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
catalog_resource(const char *uri)
{
	struct catalog_entry	*e;
	size_t			 i;

	if ((e = strmap_get(&cat->resources, uri)) != NULL)
		return (e->up);
	for (i = 0; i < cat->ntemplates; i++) {
		if (template_vars(cat->templates[i].name) <= TEMPLATE_MAX_VARS &&
		    template_match(cat->templates[i].name, uri))
			return (cat->templates[i].up);
	}
	return (NULL);
}

json_t *
catalog_collisions(void)
{
	return (json_incref(cat->collisions));
}
