/* SPDX-License-Identifier: ISC */
/*
 * Tool search (discovery = "search", globally for /mcp or per endpoint):
 * tools/list lists two tools of the gateway's own, search_tools and
 * call_tool, instead of the catalog.
 * search_tools ranks the global catalog's tools for a query with the
 * index of common/search_index.c; call_tool is routed as a tools/call of
 * the tool it names, so every rule of a direct call applies (the client's
 * patterns, pins, overrides, rate limits, scopes, the upstream's queue).
 *
 * The index follows the catalog lazily: a rebuild only marks it stale,
 * and the next search re-indexes the upstreams whose listed tools
 * changed (a hash of their listed texts), so an upstream's list_changed
 * re-indexes that upstream alone, and a gateway that never searches
 * keeps no index.  What a session may not see (outside its endpoint, or
 * refused by its client's patterns) is left out before ranking,
 * and out of the statistics the scores are computed from: it never takes
 * a place, and no score depends on it.  Which documents a client may see
 * is kept per client name and endpoint until the index or the
 * configuration changes.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "json_scan.h"
#include "jsonrpc.h"
#include "log.h"
#include "search_index.h"
#include "strmap.h"
#include "supervisor.h"
#include "xmalloc.h"

#define SEARCH_MAX_DOCS		100000	/* the catalog's own bound */
#define SEARCH_MAX_BYTES	((size_t)256 * 1024 * 1024)
#define SEARCH_LIMIT_MAX	50
#define SEARCH_LIMIT_DEFAULT	10
#define SEARCH_QUERY_MAX	1024	/* bytes of a query */
#define SEARCH_CACHE		8	/* clients' visibility kept */

/* What was indexed of an upstream. */
struct search_group {
	char		*name;		/* owned */
	uint64_t	 hash;		/* of its listed tools' texts */
	int		 seen;
};

/* Which documents a named client may see at an endpoint, for one index
 * generation. */
struct search_vis {
	char		*client;	/* owned; NULL: a free slot */
	const struct vendpoint *vep;	/* NULL: /mcp; cleared on reload */
	uint64_t	 gen;
	uint8_t		*vis;		/* owned, sidx_slots() long */
};

static struct sidx		*idx;
static struct search_group	*groups;
static size_t			 ngroups;
static uint64_t			 stale = 1, synced;
static uint64_t			 index_gen;
static struct search_vis	 cache[SEARCH_CACHE];
static size_t			 cache_next;
static enum discovery		 configured;

static const char meta_tools[] =
    "{\"tools\":[{\"name\":\"search_tools\",\"title\":\"Search tools\","
    "\"description\":\"Search the tools this gateway offers by what they "
    "do. Returns the best matches first, each with its name, title, "
    "description, input schema and relevance score; call one with "
    "call_tool.\",\"inputSchema\":{\"type\":\"object\",\"properties\":"
    "{\"query\":{\"type\":\"string\",\"description\":\"What you want to "
    "do, in words\"},\"limit\":{\"type\":\"integer\",\"minimum\":1,"
    "\"maximum\":50,\"description\":\"How many tools at most (default "
    "10)\"}},\"required\":[\"query\"]},\"annotations\":{\"readOnlyHint\":"
    "true,\"openWorldHint\":false}},{\"name\":\"call_tool\",\"title\":"
    "\"Call a tool\",\"description\":\"Call a tool that search_tools "
    "found, by its name, with its arguments.\",\"inputSchema\":{\"type\":"
    "\"object\",\"properties\":{\"name\":{\"type\":\"string\","
    "\"description\":\"The tool's name as search_tools gave it\"},"
    "\"arguments\":{\"type\":\"object\",\"description\":\"The tool's "
    "arguments, as its input schema says\"}},\"required\":[\"name\"]}}]}";

/* Forget what every client may see. */
static void
search_cache_clear(void)
{
	size_t	i;

	for (i = 0; i < SEARCH_CACHE; i++) {
		free(cache[i].client);
		free(cache[i].vis);
		cache[i].client = NULL;
		cache[i].vis = NULL;
	}
}

void
tool_search_stale(void)
{
	stale++;
}

void
tool_search_init(void)
{
	configured = conf->discovery;
}

void
tool_search_configure(void)
{
	search_cache_clear();
	/* Clients list other tools now. */
	if (configured != conf->discovery) {
		configured = conf->discovery;
		route_list_changed(NULL, 1 << CATALOG_TOOLS);
	}
}

void
tool_search_free(void)
{
	size_t	i;

	search_cache_clear();
	for (i = 0; i < ngroups; i++)
		free(groups[i].name);
	free(groups);
	groups = NULL;
	ngroups = 0;
	sidx_free(idx);
	idx = NULL;
	synced = 0;
}

/* The state of an upstream's group, made if new. */
static struct search_group *
search_group(const char *name)
{
	size_t	i;

	for (i = 0; i < ngroups; i++) {
		if (strcmp(groups[i].name, name) == 0)
			return (&groups[i]);
	}
	groups = xreallocarray(groups, ngroups + 1, sizeof *groups);
	groups[ngroups].name = xstrdup(name);
	groups[ngroups].hash = 0;
	groups[ngroups].seen = 0;
	return (&groups[ngroups++]);
}

/* Index an upstream's run of the list, from item first to end. */
static void
search_index_run(const struct catalog *c, const char *upname, size_t first,
    size_t end)
{
	struct search_group		*g = search_group(upname);
	const struct catalog_entry	*e;
	const char			*key, *text;
	json_t				*tool;
	uint64_t			 h = 14695981039346656037ULL;
	size_t				 i, len, refused = 0;

	for (i = first; i < end; i++) {
		catalog_tool_at(c, i, &text, &len, &e);
		h = (h ^ fnv1a64(text, len)) * 1099511628211ULL;
	}
	g->seen = 1;
	if (h == g->hash)
		return;
	sidx_drop_group(idx, upname);
	for (i = first; i < end; i++) {
		key = catalog_tool_at(c, i, &text, &len, &e);
		/* As listed: a NUL in a string is kept (sidx reads lengths). */
		if ((tool = json_loadb(text, len, JSON_ALLOW_NUL, NULL)) ==
		    NULL)
			continue;
		if (sidx_add(idx, upname, key, tool) != 0)
			refused++;
		json_decref(tool);
	}
	if (refused > 0)
		log_warnx("tool search: %zu tools of upstream %s not indexed: "
		    "more than %d tools or %zu bytes", refused, upname,
		    SEARCH_MAX_DOCS, SEARCH_MAX_BYTES);
	g->hash = h;
	index_gen++;
}

/* Bring the index up to the global catalog. */
static void
search_sync(void)
{
	const struct catalog		*c = catalog_global();
	const struct catalog_entry	*e;
	const struct upstream		*up = NULL;
	const char			*text;
	size_t				 i, first = 0, len, w;

	if (idx != NULL && synced == stale)
		return;
	if (idx == NULL)
		idx = sidx_new(SEARCH_MAX_DOCS, SEARCH_MAX_BYTES, 0);
	for (i = 0; i < ngroups; i++)
		groups[i].seen = 0;
	/* An upstream's tools are one run of the list. */
	for (i = 0; catalog_tool_at(c, i, &text, &len, &e) != NULL; i++) {
		if (e->up == up)
			continue;
		if (up != NULL)
			search_index_run(c, up->sc->name, first, i);
		up = e->up;
		first = i;
	}
	if (up != NULL)
		search_index_run(c, up->sc->name, first, i);
	for (i = w = 0; i < ngroups; i++) {
		if (groups[i].seen) {
			groups[w++] = groups[i];
			continue;
		}
		sidx_drop_group(idx, groups[i].name);
		free(groups[i].name);
		index_gen++;
	}
	ngroups = w;
	synced = stale;
}

/* Which documents a session may see (its endpoint's selection and its
 * client's patterns): NULL for all. */
static const uint8_t *
search_visible(const struct session *s)
{
	const char	*client;
	struct search_vis *v;
	size_t		 i, n;

	if (!acl_filtered(s))
		return (NULL);
	client = s->client_name != NULL ? s->client_name : "";
	for (i = 0; i < SEARCH_CACHE; i++) {
		if (cache[i].client != NULL && cache[i].gen == index_gen &&
		    cache[i].vep == s->vep &&
		    strcmp(cache[i].client, client) == 0)
			return (cache[i].vis);
	}
	v = &cache[cache_next++ % SEARCH_CACHE];
	free(v->client);
	free(v->vis);
	n = sidx_slots(idx);
	v->client = xstrdup(client);
	v->vep = s->vep;
	v->gen = index_gen;
	v->vis = xcalloc(n + 1, 1);
	for (i = 0; i < n; i++)
		v->vis[i] = sidx_key(idx, (uint32_t)i) != NULL &&
		    acl_allows(s, CATALOG_TOOLS, sidx_key(idx, (uint32_t)i));
	return (v->vis);
}

/* The listed members a result shows of a tool, and its score. */
static json_t *
search_result_tool(const char *text, size_t len, double score)
{
	static const char *const members[] = { "name", "title",
	    "description", "inputSchema", "outputSchema", "annotations",
	    NULL };
	json_t		*item, *o, *v;
	size_t		 i;

	if ((item = json_loadb(text, len, JSON_ALLOW_NUL, NULL)) == NULL)
		return (NULL);
	o = json_object();
	for (i = 0; members[i] != NULL; i++) {
		if ((v = json_object_get(item, members[i])) != NULL)
			json_object_set(o, members[i], v);
	}
	/* Four decimals: enough to order, and stable in tests. */
	json_object_set_new(o, "score", json_real((double)(long long)(score *
	    10000 + 0.5) / 10000));
	json_decref(item);
	return (o);
}

/* Answer search_tools. */
static void
search_tools(struct req *r, struct jspan args)
{
	static const char *const q_path[] = { "query", NULL };
	static const char *const l_path[] = { "limit", NULL };
	const struct catalog		*c = catalog_global();
	const struct catalog_entry	*e;
	const struct jrpc		*m = r->m;
	struct sidx_hit			 hits[SEARCH_LIMIT_MAX];
	struct jspan			 at;
	const char			*text;
	json_t				*tools, *o, *result;
	char				 q[SEARCH_QUERY_MAX + 1], *out;
	ssize_t				 qlen;
	int64_t				 limit = SEARCH_LIMIT_DEFAULT;
	size_t				 n, i, len;

	if (jscan_path_unique(m->p, args, q_path, &at) != 0 ||
	    (qlen = jscan_string(m->p, at, q, sizeof q)) < 0) {
		route_reject(r, JRPC_INVALID_PARAMS, "search_tools: "
		    "arguments.query must be a string of at most %d bytes",
		    SEARCH_QUERY_MAX);
		return;
	}
	if (jscan_path_unique(m->p, args, l_path, &at) == 0 &&
	    jscan_type(m->p, at) != JT_NULL && (jscan_int64(m->p, at,
	    &limit) != 0 || limit < 1 || limit > SEARCH_LIMIT_MAX)) {
		route_reject(r, JRPC_INVALID_PARAMS, "search_tools: "
		    "arguments.limit must be an integer from 1 to %d",
		    SEARCH_LIMIT_MAX);
		return;
	}
	req_name(r, "search_tools", 12);
	search_sync();
	n = sidx_search(idx, q, (size_t)qlen, search_visible(r->session),
	    hits, (size_t)limit);
	tools = json_array();
	for (i = 0; i < n; i++) {
		/* Filtered already; checked again, as a call would be. */
		if ((e = catalog_tool(c, sidx_key(idx, hits[i].doc))) ==
		    NULL || e->up == NULL ||
		    !acl_allows(r->session, CATALOG_TOOLS, sidx_key(idx,
		    hits[i].doc)))
			continue;
		catalog_tool_at(c, e->index, &text, &len, &e);
		if ((o = search_result_tool(text, len, hits[i].score)) != NULL)
			json_array_append_new(tools, o);
	}
	o = json_pack("{s:o}", "tools", tools);
	out = json_dumps(o, JSON_COMPACT);
	result = json_pack("{s:[{s:s, s:s}], s:o}", "content", "type", "text",
	    "text", out, "structuredContent", o);
	free(out);
	out = json_dumps(result, JSON_COMPACT);
	json_decref(result);
	modern_result(r, out, strlen(out), 0);
	free(out);
}

/* Route call_tool as the tools/call of the tool it names. */
static void
search_call(struct req *r, struct jspan args)
{
	static const char *const n_path[] = { "name", NULL };
	static const char *const a_path[] = { "arguments", NULL };
	static const char *const meta_path[] = { "_meta", NULL };
	/* A multi-round-trip request's, for the call it continues. */
	static const char *const mrtr[] = { "requestState", "inputResponses",
	    NULL };
	const struct jrpc	*m = r->m;
	struct jrpc		 inner;
	struct evbuffer		*buf;
	struct jspan		 name, a, meta, v;
	const char		*why;
	int			 found, i;

	if (jscan_path_unique(m->p, args, n_path, &name) != 0 ||
	    jscan_type(m->p, name) != JT_STRING) {
		route_reject(r, JRPC_INVALID_PARAMS, "call_tool: "
		    "arguments.name must be a string");
		return;
	}
	found = jscan_path_unique(m->p, args, a_path, &a);
	if (found == -2 || (found == 0 && jscan_type(m->p, a) != JT_OBJECT &&
	    jscan_type(m->p, a) != JT_NULL)) {
		route_reject(r, JRPC_INVALID_PARAMS, "call_tool: "
		    "arguments.arguments must be an object");
		return;
	}
	/* The same request, naming the tool: its id, arguments and _meta
	 * (a progress token) as the client wrote them. */
	buf = evbuffer_new();
	evbuffer_add_printf(buf, "{\"jsonrpc\":\"2.0\",\"id\":");
	evbuffer_add(buf, m->p + m->id.off, m->id.len);
	evbuffer_add_printf(buf, ",\"method\":\"tools/call\",\"params\":"
	    "{\"name\":");
	evbuffer_add(buf, m->p + name.off, name.len);
	if (found == 0 && jscan_type(m->p, a) == JT_OBJECT) {
		evbuffer_add_printf(buf, ",\"arguments\":");
		evbuffer_add(buf, m->p + a.off, a.len);
	}
	if (jscan_path_unique(m->p, m->params, meta_path, &meta) == 0) {
		evbuffer_add_printf(buf, ",\"_meta\":");
		evbuffer_add(buf, m->p + meta.off, meta.len);
	}
	for (i = 0; mrtr[i] != NULL; i++) {
		if (jscan_member_unique(m->p, m->params, mrtr[i], &v) != 0)
			continue;
		evbuffer_add_printf(buf, ",\"%s\":", mrtr[i]);
		evbuffer_add(buf, m->p + v.off, v.len);
	}
	evbuffer_add(buf, "}}", 2);
	if (jrpc_scan((const char *)evbuffer_pullup(buf, -1),
	    evbuffer_get_length(buf), &inner, &why) != 0) {
		route_reject(r, JRPC_INVALID_PARAMS, "call_tool: %s", why);
		evbuffer_free(buf);
		return;
	}
	route_tool_call(r, &inner);
	evbuffer_free(buf);
}

/* How the session's endpoint offers tools. */
static enum discovery
search_discovery(const struct session *s)
{
	return (s->vep != NULL ? vendpoint_discovery(s->vep) :
	    conf->discovery);
}

int
tool_search_call(struct req *r)
{
	static const char *const n_path[] = { "name", NULL };
	static const char *const a_path[] = { "arguments", NULL };
	const struct jrpc	*m = r->m;
	struct jspan		 name, args;
	int			 search;

	if (search_discovery(r->session) != DISCOVERY_SEARCH ||
	    jscan_path_unique(m->p, m->params, n_path, &name) != 0)
		return (0);
	if (jscan_string_equals(m->p, name, "search_tools"))
		search = 1;
	else if (jscan_string_equals(m->p, name, "call_tool"))
		search = 0;
	else
		return (0);
	if (jscan_path_unique(m->p, m->params, a_path, &args) != 0 ||
	    jscan_type(m->p, args) != JT_OBJECT) {
		route_reject(r, JRPC_INVALID_PARAMS, "%s: params.arguments "
		    "must be an object", search ? "search_tools" :
		    "call_tool");
		return (1);
	}
	if (search)
		search_tools(r, args);
	else
		search_call(r, args);
	return (1);
}

int
tool_search_list(struct req *r)
{
	if (search_discovery(r->session) != DISCOVERY_SEARCH)
		return (0);
	modern_result(r, meta_tools, sizeof meta_tools - 1, 1);
	return (1);
}
