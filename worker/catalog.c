/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "meta.h"
#include "worker.h"
#include "xmalloc.h"

#define CATALOG_MAX_PAGES	1000
#define CATALOG_MAX_ITEMS	100000

enum {
	KIND_TOOLS = 0,
	KIND_RESOURCES,
	KIND_TEMPLATES,
	KIND_PROMPTS,
	NKINDS
};

static const char *const kind_keys[NKINDS] = {
	"tools", "resources", "resourceTemplates", "prompts"
};
static const enum mcp_method kind_methods[NKINDS] = {
	MCPM_TOOLS_LIST, MCPM_RESOURCES_LIST, MCPM_TEMPLATES_LIST,
	MCPM_PROMPTS_LIST
};
static const char *const kind_caps[NKINDS] = {
	"tools", "resources", "resources", "prompts"
};

/* One list being fetched, page by page. */
struct fetch {
	int	 kind;
	json_t	*items;
	int	 pages;
};

static void	catalog_fetch(struct conn *, int);

/*
 * The catalog's text, within max_message: the supervisor holds every frame
 * to it, and takes a longer one for a broken worker's (killed, started
 * again, for ever).  The list with the most bytes loses its last items,
 * as many as hold the bytes over, until it fits (one pass, unless the
 * items measured differ from the whole); what was left out is logged.
 * The lists are copied, not cut.
 */
static char *
catalog_text(json_t *o)
{
	json_t	*a;
	char	*text;
	size_t	 left[NKINDS] = { 0 }, n, big, over, freed, size, len;
	int	 k, most;

	for (;;) {
		if ((text = json_dumps(o, JSON_COMPACT)) == NULL)
			fatalx("catalog: json_dumps");
		if ((len = strlen(text)) <= sc->max_message)
			break;
		over = len - sc->max_message;
		big = 0;
		most = -1;
		for (k = 0; k < NKINDS; k++) {
			a = json_object_get(o, kind_keys[k]);
			if (json_array_size(a) == 0)
				continue;
			size = json_dumpb(a, NULL, 0, JSON_COMPACT);
			if (size > big) {
				big = size;
				most = k;
			}
		}
		if (most == -1)
			break;	/* empty lists: never this long */
		free(text);
		a = json_copy(json_object_get(o, kind_keys[most]));
		/* Each item with its comma. */
		for (n = json_array_size(a), freed = 0; n > 0 && freed < over;
		    n--) {
			freed += json_dumpb(json_array_get(a, n - 1), NULL, 0,
			    JSON_COMPACT) + 1;
			json_array_remove(a, n - 1);
			left[most]++;
		}
		json_object_set_new(o, kind_keys[most], a);
	}
	if (left[0] + left[1] + left[2] + left[3] > 0)
		log_warnx("the catalog is over max_message (%zu bytes): listed "
		    "without the last %zu tools, %zu resources, %zu resource "
		    "templates and %zu prompts", sc->max_message, left[0],
		    left[1], left[2], left[3]);
	return (text);
}

/*
 * Send the whole catalog.  The shared connection's is the upstream's, and
 * the first one makes the upstream ready; a per-session instance's is its
 * session's view of the upstream (sent with the session's number).
 */
void
catalog_send(struct conn *c)
{
	json_t	*o;
	char	*text;
	int	 k, first = !c->announced;

	o = json_object();
	for (k = 0; k < NKINDS; k++)
		json_object_set(o, kind_keys[k], c->lists[k] != NULL ?
		    c->lists[k] : json_array());
	c->announced = 1;
	text = catalog_text(o);
	json_decref(o);
	chan_send(MSG_CATALOG, c->session, 0, text, strlen(text));
	free(text);
	if (first && c->session == 0)
		conn_catalog_ready(c);
}

/* A list is complete (or failed and keeps its old value). */
static void
catalog_fetched(struct conn *c, struct fetch *f, json_t *items)
{
	int	k;

	if (items != NULL) {
		json_decref(c->lists[f->kind]);
		c->lists[f->kind] = items;
	} else if (c->lists[f->kind] == NULL)
		c->lists[f->kind] = json_array();
	c->fetching[f->kind] = 0;
	k = f->kind;
	free(f);
	if (c->dirty[k]) {
		c->dirty[k] = 0;
		catalog_fetch(c, k);
		return;
	}
	for (k = 0; k < NKINDS; k++) {
		if (c->fetching[k])
			return;
	}
	catalog_send(c);
}

/* A fetch whose call ended without an answer (its connection went). */
static void
fetch_free(void *arg)
{
	struct fetch	*f = arg;

	json_decref(f->items);
	free(f);
}

/* One page arrived. */
static void
catalog_page_cb(struct conn *c, const struct jrpc *m, void *arg)
{
	struct fetch	*f = arg;
	json_t		*result, *items, *item, *params;
	const char	*cursor;
	char		 why[256];
	size_t		 i;

	if (m == NULL || m->kind != JRPC_RESULT) {
		log_warnx("%s failed: %.*s",
		    mcp_method_name(kind_methods[f->kind]), m != NULL ?
		    (int)(m->error.len > 200 ? 200 : m->error.len) : 7,
		    m != NULL ? m->p + m->error.off : "timeout");
		json_decref(f->items);
		catalog_fetched(c, f, NULL);
		return;
	}
	result = json_loadb(m->p + m->result.off, m->result.len,
	    JSON_ALLOW_NUL, NULL);
	items = json_object_get(result, kind_keys[f->kind]);
	if (!json_is_array(items)) {
		log_warnx("%s: result has no %s array",
		    mcp_method_name(kind_methods[f->kind]), kind_keys[f->kind]);
		json_decref(result);
		json_decref(f->items);
		catalog_fetched(c, f, NULL);
		return;
	}
	json_array_foreach(items, i, item) {
		if (json_array_size(f->items) >= CATALOG_MAX_ITEMS)
			break;
		if (!json_is_object(item))
			continue;
		/* Over HTTP, a 2026-07-28 tool whose x-mcp-header marks
		 * break the rules is left out, as a client must. */
		if (f->kind == 0 && c->modern && sc->transport ==
		    TRANSPORT_HTTP && !meta_tool_headers_valid(item, why,
		    sizeof why)) {
			log_warnx("tool %.64s left out: %s",
			    json_is_string(json_object_get(item, "name")) ?
			    json_string_value(json_object_get(item, "name")) :
			    "(no name)", why);
			continue;
		}
		json_array_append(f->items, item);
	}
	f->pages++;
	if (json_unpack(result, "{s:s}", "nextCursor", &cursor) == 0 &&
	    *cursor != '\0') {
		if (f->pages >= CATALOG_MAX_PAGES ||
		    json_array_size(f->items) >= CATALOG_MAX_ITEMS) {
			log_warnx("%s: more than %d pages or %d items, the "
			    "rest is not listed",
			    mcp_method_name(kind_methods[f->kind]),
			    CATALOG_MAX_PAGES, CATALOG_MAX_ITEMS);
		} else {
			params = json_pack("{s:s}", "cursor", cursor);
			json_decref(result);
			conn_call_owned(c, kind_methods[f->kind], params,
			    catalog_page_cb, f, fetch_free,
			    sc->request_timeout);
			return;
		}
	}
	json_decref(result);
	catalog_fetched(c, f, f->items);
}

/* Fetch one list from its first page. */
static void
catalog_fetch(struct conn *c, int kind)
{
	struct fetch	*f;

	if (c->fetching[kind]) {
		c->dirty[kind] = 1;
		return;
	}
	c->fetching[kind] = 1;
	f = xcalloc(1, sizeof *f);
	f->kind = kind;
	f->items = json_array();
	/* Unanswered, the list would never be fetched again. */
	conn_call_owned(c, kind_methods[kind], NULL, catalog_page_cb, f,
	    fetch_free, sc->request_timeout);
}

/* Fetch every list the upstream's capabilities offer. */
void
catalog_fetch_all(struct conn *c)
{
	int	k, any = 0;

	for (k = 0; k < NKINDS; k++) {
		if (json_object_get(c->server_caps, kind_caps[k]) != NULL) {
			c->fetching[k] = 0;
			any = 1;
		} else
			c->lists[k] = json_array();
	}
	for (k = 0; k < NKINDS; k++) {
		if (c->lists[k] == NULL)
			catalog_fetch(c, k);
	}
	if (!any)
		catalog_send(c);
}

/* Refresh after a list_changed notification. */
void
catalog_list_changed(struct conn *c, const struct jrpc *m)
{
	switch (m->method_id) {
	case MCPM_TOOLS_CHANGED:
		catalog_fetch(c, KIND_TOOLS);
		break;
	case MCPM_RESOURCES_CHANGED:
		catalog_fetch(c, KIND_RESOURCES);
		catalog_fetch(c, KIND_TEMPLATES);
		break;
	case MCPM_PROMPTS_CHANGED:
		catalog_fetch(c, KIND_PROMPTS);
		break;
	default:
		log_debug("%s ignored", m->method_name);
		break;
	}
}
