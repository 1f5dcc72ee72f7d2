/* SPDX-License-Identifier: ISC */
/*
 * Tools offered by clients.  A session (an editor over WebSocket or the
 * stdio bridge, or a Streamable HTTP client with its GET stream open) may
 * register tools of its own with tools/register; they are listed after
 * the catalog's tools under the client's prefix, and calls to them are
 * ctools_call.c's.  This file keeps the registry: the tools, their
 * names, and what they may cost.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "log.h"
#include "naming.h"
#include "supervisor.h"
#include "xmalloc.h"

#define CTOOL_MAX_SIZE		65536		/* one tool as listed */
#define CTOOL_MAX_RAW		(4 * CTOOL_MAX_SIZE)	/* one as sent */
#define CTOOL_MAX_TOTAL		10000		/* tools of every client */
#define CTOOL_MAX_SESSION_BYTES	(8 << 20)	/* one session's, held */
#define CTOOL_MAX_BYTES		(64 << 20)	/* every session's, held */
#define CTOOL_MALLOC_OVERHEAD	16		/* per allocation */

/*
 * The registry: every registered tool in registration order (a dense
 * array, so a list page is cut by position), by exposed name, and the
 * prefixes sessions hold.  Registering and withdrawing touch only the
 * tools concerned: the catalogs do not hold client tools (catalog.c
 * lists them after its own tools and looks them up after its own).
 */
static struct ctool	**ctlist;	/* NULL where one was dropped */
static size_t		  nctlist, ctlist_size;
static size_t		  nctools;	/* live in ctlist */
static size_t		  ctbytes;	/* held, overhead counted */
static struct strmap	  ctmap;	/* exposed name -> ctool */
static struct strmap	  prefixes;	/* prefix -> session */

size_t
ctools_count(void)
{
	return (nctlist);
}

struct ctool *
ctools_at(size_t i)
{
	return (i < nctlist ? ctlist[i] : NULL);
}

struct ctool *
ctools_get(const char *exposed)
{
	return (strmap_get(&ctmap, exposed));
}

/* Is a prefix held by another session, or an upstream's? */
static int
ctools_prefix_taken(struct session *s, const char *want)
{
	struct session	*other;
	size_t		 i;

	if ((other = strmap_get(&prefixes, want)) != NULL && other != s)
		return (1);
	for (i = 0; i < nupstreams; i++) {
		if (strcmp(upstreams[i]->sc->prefix, want) == 0)
			return (1);
	}
	return (0);
}

/*
 * The prefix of a session's tools.  A named client's is its configured
 * name; an unnamed client's is '_' and its clientInfo.name in the
 * tool-name character set.  No configured client's name begins with '_'
 * (mcp-supervisord.conf(5)), so an unnamed client never holds a prefix
 * in a configured client's namespace, connected or not, before or after
 * a reload.  A name taken by another session or an upstream gets a
 * number inside its own namespace: "nvim__2__" (never "nvim2__", which
 * may be another client's).  Kept until the session ends.
 */
static const char *
ctools_prefix(struct session *s)
{
	const char	*given;
	char		 stem[40], want[64];
	size_t		 i, n = 0;
	unsigned int	 k;

	if (s->ctool_prefix != NULL)
		return (s->ctool_prefix);
	if (s->client_name != NULL)
		snprintf(stem, sizeof stem, "%s", s->client_name);
	else {
		given = json_string_value(json_object_get(s->client_info,
		    "name"));
		stem[n++] = '_';
		for (i = 0; given != NULL && given[i] != '\0' && n < 25;
		    i++) {
			if ((given[i] >= 'a' && given[i] <= 'z') ||
			    (given[i] >= 'A' && given[i] <= 'Z') ||
			    (given[i] >= '0' && given[i] <= '9') ||
			    given[i] == '-' || given[i] == '.' ||
			    given[i] == '_')
				stem[n++] = given[i];
			else if (stem[n - 1] != '_')
				stem[n++] = '_';
		}
		while (n > 1 && stem[n - 1] == '_')
			n--;
		if (n == 1)
			n = (size_t)snprintf(stem, sizeof stem, "_client");
		stem[n] = '\0';
	}
	/* Terminates: at most one number per other session is taken. */
	for (k = 1; ; k++) {
		if (k == 1)
			snprintf(want, sizeof want, "%s__", stem);
		else
			snprintf(want, sizeof want, "%s__%u__", stem, k);
		if (!ctools_prefix_taken(s, want))
			break;
	}
	s->ctool_prefix = xstrdup(want);
	strmap_add(&prefixes, want, s);
	return (s->ctool_prefix);
}

/*
 * The upstream whose namespace (its prefix, if not empty) holds an
 * unnamed client's exposed name, or NULL.  A named client's prefix is the
 * operator's choice; an unnamed client's is its own, so it may not land
 * in an upstream's names, which clients may be allowed by pattern.
 */
static struct upstream *
ctools_squats(const struct session *s, const char *exposed)
{
	const char	*p;
	size_t		 i;

	if (s->client_name != NULL)
		return (NULL);
	for (i = 0; i < nupstreams; i++) {
		p = upstreams[i]->sc->prefix;
		if (*p != '\0' && strncmp(exposed, p, strlen(p)) == 0)
			return (upstreams[i]);
	}
	return (NULL);
}

/* What a tool costs to hold: its text, names, entries and allocations. */
static size_t
ctools_cost(size_t textlen, size_t namelen, size_t keylen)
{
	return (sizeof(struct ctool) + sizeof(struct strmap_entry) +
	    sizeof(struct ctool *) + textlen + 1 + namelen + 1 + keylen + 1 +
	    4 * CTOOL_MALLOC_OVERHEAD);
}

/* Withdraw a tool, leaving a hole in the list (ctools_compact closes it). */
static void
ctools_drop(struct ctool *t)
{
	strmap_del(&ctmap, t->key);
	ctlist[t->e.index] = NULL;
	nctools--;
	t->e.owner->nctools--;
	t->e.owner->ctool_bytes -= t->cost;
	ctbytes -= t->cost;
	free(t->e.name);
	free(t->text);
	free(t);
}

/* Close the holes in the list, keeping the order. */
static void
ctools_compact(void)
{
	size_t	i, n = 0;

	for (i = 0; i < nctlist; i++) {
		if (ctlist[i] == NULL)
			continue;
		ctlist[i]->e.index = n;
		ctlist[n++] = ctlist[i];
	}
	nctlist = n;
}

/*
 * Tell every session but one (NULL: none) that the tools changed, a
 * slice per loop turn as a catalog change is: any client may register
 * and withdraw, and 20,000 streams told at once held the loop 200 ms.
 */
static void
ctools_changed(struct session *except)
{
	/* A virtual endpoint's sessions: if what it selects changed. */
	vendpoint_ctools_changed();
	broadcast_ctools_changed(except);
}

/* Add a refusal to a register answer: the tool's position, its name as
 * sent (when it is a string of at most 128 bytes) and why. */
static void
ctools_refuse(json_t *refused, size_t index, const char *name,
    size_t namelen, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static void
ctools_refuse(json_t *refused, size_t index, const char *name,
    size_t namelen, const char *fmt, ...)
{
	va_list	ap;
	char	why[256];
	json_t	*n;

	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	if (name == NULL || namelen > 128 ||
	    (n = json_stringn(name, namelen)) == NULL)
		n = json_string("");
	json_array_append_new(refused, json_pack("{s:I, s:o, s:s}", "index",
	    (json_int_t)index, "name", n, "reason", why));
}

/* The members of a tool the gateway reads; others are left out. */
enum ctool_field {
	CTF_NAME = 0,
	CTF_INPUT,
	CTF_INPUT_SEED,
	CTF_DESCRIPTION,
	CTF_TITLE,
	CTF_OUTPUT,
	CTF_ANNOTATIONS,
	CTF_N
};

static const char *const ctool_fields[CTF_N] = {
	[CTF_NAME] = "name",
	[CTF_INPUT] = "inputSchema",
	[CTF_INPUT_SEED] = "input_schema",
	[CTF_DESCRIPTION] = "description",
	[CTF_TITLE] = "title",
	[CTF_OUTPUT] = "outputSchema",
	[CTF_ANNOTATIONS] = "annotations",
};

/*
 * Find a tool's members in its span (of text already validated): 0, or -1
 * with why set if it is not an object or gives one of them twice.
 */
static int
ctools_fields(const char *p, struct jspan tool, struct jspan *f,
    const char **why)
{
	static char	 twice[64];
	struct jiter	 it;
	struct jspan	 k, v;
	int		 i;

	memset(f, 0, CTF_N * sizeof *f);
	if (jscan_object(p, tool, &it) != 0) {
		*why = "a tool must be an object";
		return (-1);
	}
	while (jscan_next_member(&it, &k, &v)) {
		for (i = 0; i < CTF_N; i++) {
			if (jscan_string_equals(p, k, ctool_fields[i]))
				break;
		}
		if (i == CTF_N)
			continue;
		if (f[i].len != 0) {
			snprintf(twice, sizeof twice, "%s is given more than "
			    "once", ctool_fields[i]);
			*why = twice;
			return (-1);
		}
		f[i] = v;
	}
	return (0);
}

/* Append a value (validated text) without the space between its tokens. */
static void
ctools_add_compact(struct evbuffer *out, const char *p, struct jspan v)
{
	const char	*c = p + v.off, *end = c + v.len, *run = c;
	int		 in_string = 0;

	for (; c < end; c++) {
		if (in_string) {
			if (*c == '\\')
				c++;
			else if (*c == '"')
				in_string = 0;
		} else if (*c == '"')
			in_string = 1;
		else if (*c == ' ' || *c == '\t' || *c == '\n' || *c == '\r') {
			evbuffer_add(out, run, (size_t)(c - run));
			run = c + 1;
		}
	}
	evbuffer_add(out, run, (size_t)(end - run));
}

/* A tool's names: its own (as the client gave it) and the one others see. */
struct ctool_names {
	char		 own[129];	/* NUL-terminated */
	size_t		 ownlen;
	char		 exposed[NAME_MAX_EXPOSED + 1];
};

/*
 * Check one tool, the span of a request, and write its MCP Tool object as
 * listed to out, under its exposed name: from the MCP form (name, title,
 * description, inputSchema, outputSchema, annotations) or the seed's
 * (name, description, input_schema).  Its values are copied as they came,
 * without space, never made into a tree: a schema of many small members
 * would cost many times its text, in memory and in time.  Its own name
 * and its length go to nm (also when it is refused, if it is a string of
 * at most 128 bytes), and the name others see.  -1 with why set if it is
 * bad.
 */
static int
ctools_tool(const char *p, struct jspan span, const char *prefix,
    struct ctool_names *nm, struct evbuffer *out, const char **why)
{
	struct jspan	 f[CTF_N], schema, type;
	ssize_t		 n;

	nm->ownlen = 0;
	if (ctools_fields(p, span, f, why) != 0)
		return (-1);
	if ((n = jscan_string(p, f[CTF_NAME], nm->own, sizeof nm->own)) >= 0)
		nm->ownlen = (size_t)n;
	if (n <= 0 || strlen(nm->own) != (size_t)n) {
		*why = "name must be a string of 1 to 128 characters";
		return (-1);
	}
	schema = f[CTF_INPUT].len != 0 ? f[CTF_INPUT] : f[CTF_INPUT_SEED];
	if (jscan_type(p, schema) != JT_OBJECT ||
	    jscan_member_unique(p, schema, "type", &type) != 0 ||
	    !jscan_string_equals(p, type, "object")) {
		*why = "inputSchema must be a JSON Schema object of type "
		    "\"object\"";
		return (-1);
	}
	if (f[CTF_DESCRIPTION].len != 0 &&
	    jscan_type(p, f[CTF_DESCRIPTION]) != JT_STRING) {
		*why = "description must be a string";
		return (-1);
	}
	name_expose_tool(prefix, nm->own, (size_t)n, nm->exposed);
	evbuffer_add(out, "{\"name\":", 8);
	jscan_add_string(out, nm->exposed, strlen(nm->exposed));
	evbuffer_add(out, ",\"inputSchema\":", 15);
	ctools_add_compact(out, p, schema);
	if (f[CTF_DESCRIPTION].len != 0) {
		evbuffer_add(out, ",\"description\":", 15);
		ctools_add_compact(out, p, f[CTF_DESCRIPTION]);
	}
	if (jscan_type(p, f[CTF_TITLE]) == JT_STRING) {
		evbuffer_add(out, ",\"title\":", 9);
		ctools_add_compact(out, p, f[CTF_TITLE]);
	}
	if (jscan_type(p, f[CTF_OUTPUT]) == JT_OBJECT) {
		evbuffer_add(out, ",\"outputSchema\":", 16);
		ctools_add_compact(out, p, f[CTF_OUTPUT]);
	}
	if (jscan_type(p, f[CTF_ANNOTATIONS]) == JT_OBJECT) {
		evbuffer_add(out, ",\"annotations\":", 15);
		ctools_add_compact(out, p, f[CTF_ANNOTATIONS]);
	}
	evbuffer_add(out, "}", 1);
	return (0);
}

/* Answer a request with a JSON result. */
static void
ctools_result(struct req *r, json_t *result)
{
	char	*text = json_dumps(result, JSON_COMPACT);

	route_result(r, text, strlen(text));
	free(text);
	json_decref(result);
}

/*
 * Register one tool (the text p[span]) for a session: its exposed name
 * appended to done, or its refusal to refused.  1 if the list changed.
 */
static int
ctools_register_one(struct session *s, const char *prefix, const char *p,
    struct jspan span, size_t index, json_t *done, json_t *refused)
{
	struct catalog_entry	*e;
	struct upstream		*up;
	struct ctool		*t, *old = NULL;
	struct evbuffer		*buf;
	struct jspan		 f[CTF_N];
	const char		*why = "";
	struct ctool_names	 nm;
	char			*name, *text;
	ssize_t			 n;
	size_t			 len, cost, gain;

	/* One far too large is not copied; its name is shown if it has one. */
	if (span.len > CTOOL_MAX_RAW) {
		nm.ownlen = 0;
		if (ctools_fields(p, span, f, &why) == 0 &&
		    (n = jscan_string(p, f[CTF_NAME], nm.own,
		    sizeof nm.own)) > 0)
			nm.ownlen = (size_t)n;
		ctools_refuse(refused, index, nm.own, nm.ownlen, "the tool is "
		    "larger than %d KiB", CTOOL_MAX_SIZE / 1024);
		return (0);
	}
	buf = evbuffer_new();
	if (ctools_tool(p, span, prefix, &nm, buf, &why) != 0) {
		evbuffer_free(buf);
		ctools_refuse(refused, index, nm.own, nm.ownlen, "%s", why);
		return (0);
	}
	name = xstrdup(nm.own);
	len = evbuffer_get_length(buf);
	text = xmalloc(len + 1);
	evbuffer_remove(buf, text, len);
	text[len] = '\0';
	evbuffer_free(buf);
	if (len > CTOOL_MAX_SIZE) {
		ctools_refuse(refused, index, name, strlen(name), "the tool "
		    "is larger than %d KiB", CTOOL_MAX_SIZE / 1024);
		goto refused;
	}
	if ((up = ctools_squats(s, nm.exposed)) != NULL) {
		ctools_refuse(refused, index, name, strlen(name), "%s is in "
		    "the names of upstream %s (prefix %s)", nm.exposed,
		    up->sc->name, up->sc->prefix);
		goto refused;
	}
	if ((e = catalog_tool(catalog_global(), nm.exposed)) != NULL) {
		if (e->up != NULL) {
			ctools_refuse(refused, index, name, strlen(name),
			    "%s is taken by upstream %s", nm.exposed,
			    e->up->sc->name);
			goto refused;
		}
		if (e->owner != s || strcmp(e->name, name) != 0) {
			ctools_refuse(refused, index, name, strlen(name),
			    "%s is taken by another client's tool",
			    nm.exposed);
			goto refused;
		}
		/* Registered again: replaced, in its place. */
		old = ctools_get(nm.exposed);
	}
	if (old == NULL && s->nctools >= conf->client_tools_max) {
		ctools_refuse(refused, index, name, strlen(name), "too many "
		    "tools: a session may register %u (client_tools_max)",
		    conf->client_tools_max);
		goto refused;
	}
	if (old == NULL && nctools >= CTOOL_MAX_TOTAL) {
		ctools_refuse(refused, index, name, strlen(name), "too many "
		    "tools: the gateway holds %d client tools, its limit",
		    CTOOL_MAX_TOTAL);
		goto refused;
	}
	cost = ctools_cost(len, strlen(name), strlen(nm.exposed));
	gain = old == NULL || cost > old->cost ? cost -
	    (old != NULL ? old->cost : 0) : 0;
	if (s->ctool_bytes + gain > CTOOL_MAX_SESSION_BYTES) {
		ctools_refuse(refused, index, name, strlen(name), "too large: "
		    "a session's tools may hold %d MiB",
		    CTOOL_MAX_SESSION_BYTES >> 20);
		goto refused;
	}
	if (ctbytes + gain > CTOOL_MAX_BYTES) {
		ctools_refuse(refused, index, name, strlen(name), "too large: "
		    "the tools of all clients may hold %d MiB",
		    CTOOL_MAX_BYTES >> 20);
		goto refused;
	}
	if ((t = old) != NULL) {
		s->ctool_bytes -= t->cost;
		ctbytes -= t->cost;
		free(t->text);
		free(name);
	} else {
		t = xcalloc(1, sizeof *t);
		t->e.owner = s;
		t->e.name = name;
		t->e.namelen = strlen(name);
		strmap_add(&ctmap, nm.exposed, t);
		t->key = strmap_key(&ctmap, nm.exposed);
		if (nctlist == ctlist_size) {
			ctlist_size = ctlist_size == 0 ? 64 : ctlist_size * 2;
			ctlist = xreallocarray(ctlist, ctlist_size,
			    sizeof *ctlist);
		}
		t->e.index = nctlist;
		ctlist[nctlist++] = t;
		nctools++;
		s->nctools++;
	}
	t->text = text;
	t->len = len;
	t->cost = cost;
	s->ctool_bytes += cost;
	ctbytes += cost;
	json_array_append_new(done, json_string(nm.exposed));
	return (1);

refused:
	free(text);
	free(name);
	return (0);
}

void
ctools_register(struct req *r)
{
	struct session		*s = r->session;
	const struct jrpc	*m = r->m;
	struct jiter		 it;
	struct jspan		 list, item;
	json_t			*done, *refused;
	const char		*prefix;
	size_t			 i, unread = 0;
	int			 found, changed = 0;

	if (!acl_may_register(s)) {
		route_reject(r, JRPC_INVALID_REQUEST, "tools/register: "
		    "client %s may not register tools", s->client_name);
		return;
	}
	if (jscan_type(m->p, m->params) != JT_OBJECT) {
		route_reject(r, JRPC_INVALID_PARAMS, "tools/register: "
		    "params must be { \"tools\": [ Tool, ... ] }");
		return;
	}
	/* { tools: [...] }, or the seed's single tool. */
	if ((found = jscan_member_unique(m->p, m->params, "tools",
	    &list)) == -2 || (found == 0 && jscan_array(m->p, list,
	    &it) != 0)) {
		route_reject(r, JRPC_INVALID_PARAMS, "tools/register: "
		    "tools must be an array, given once");
		return;
	}
	prefix = ctools_prefix(s);
	done = json_array();
	refused = json_array();
	if (found != 0)
		changed = ctools_register_one(s, prefix, m->p, m->params, 0,
		    done, refused);
	/* More than the gateway holds are not read (nor refused one by
	 * one, which would cost more than the request). */
	for (i = 0; found == 0 && jscan_next_element(&it, &item); i++) {
		if (i < CTOOL_MAX_TOTAL)
			changed |= ctools_register_one(s, prefix, m->p, item,
			    i, done, refused);
		else
			unread++;
	}
	if (unread > 0)
		ctools_refuse(refused, CTOOL_MAX_TOTAL, NULL, 0, "%zu tools "
		    "from this one on were not read: one request may hold "
		    "%d", unread, CTOOL_MAX_TOTAL);
	if (changed) {
		log_info("session %.8s: registered %zu tools as %s* (%u held, "
		    "%zu KiB)", s->id, json_array_size(done), prefix,
		    s->nctools, s->ctool_bytes / 1024);
		ctools_changed(NULL);
	}
	if (json_array_size(refused) > 0)
		log_info("session %.8s: refused %zu of its tools", s->id,
		    json_array_size(refused));
	ctools_result(r, json_pack("{s:o, s:o}", "registered", done,
	    "refused", refused));
}

/* One of a session's tools, by its own name or the name others see. */
static struct ctool *
ctools_find(struct session *s, const char *n, size_t len)
{
	struct ctool	*t;
	char		 exposed[NAME_MAX_EXPOSED + 1];

	if ((t = strmap_getn(&ctmap, n, len)) != NULL && t->e.owner == s)
		return (t);
	if (s->ctool_prefix == NULL)
		return (NULL);
	name_expose_tool(s->ctool_prefix, n, len, exposed);
	if ((t = ctools_get(exposed)) != NULL && t->e.owner == s &&
	    t->e.namelen == len && memcmp(t->e.name, n, len) == 0)
		return (t);
	return (NULL);
}

void
ctools_unregister(struct req *r)
{
	struct session		*s = r->session;
	const struct jrpc	*m = r->m;
	struct jiter		 it;
	struct jspan		 names, name;
	struct ctool		*t;
	json_t			*done;
	char			 n[256];
	ssize_t			 len;

	if (jscan_type(m->p, m->params) != JT_OBJECT ||
	    jscan_member_unique(m->p, m->params, "names", &names) != 0 ||
	    jscan_array(m->p, names, &it) != 0) {
		route_reject(r, JRPC_INVALID_PARAMS, "tools/unregister: "
		    "params must be { \"names\": [ ... ] }");
		return;
	}
	done = json_array();
	while (jscan_next_element(&it, &name)) {
		/* A name too long for any tool matches none. */
		if ((len = jscan_string(m->p, name, n, sizeof n)) <= 0 ||
		    (t = ctools_find(s, n, (size_t)len)) == NULL)
			continue;
		json_array_append_new(done, json_stringn(n, (size_t)len));
		ctools_drop(t);
	}
	if (json_array_size(done) > 0) {
		ctools_compact();
		ctools_changed(NULL);
	}
	ctools_result(r, json_pack("{s:o}", "unregistered", done));
}

/* Withdraw every tool the test says must go; 1 if any went. */
static int
ctools_withdraw(int (*test)(struct ctool *, void *), void *arg)
{
	size_t	i;
	int	any = 0;

	for (i = 0; i < nctlist; i++) {
		if (ctlist[i] != NULL && test(ctlist[i], arg)) {
			ctools_drop(ctlist[i]);
			any = 1;
		}
	}
	if (any)
		ctools_compact();
	return (any);
}

/* Is a tool offered where a new configuration does not allow it? */
static int
ctools_not_allowed(struct ctool *t, void *arg)
{
	struct upstream	*up;

	if (!acl_may_register(t->e.owner)) {
		log_info("session %.8s: client %s may no longer register "
		    "tools: %s withdrawn", t->e.owner->id,
		    t->e.owner->client_name != NULL ?
		    t->e.owner->client_name : "-", t->key);
		return (1);
	}
	if ((up = ctools_squats(t->e.owner, t->key)) != NULL) {
		log_info("session %.8s: %s is in the names of upstream %s: "
		    "withdrawn", t->e.owner->id, t->key, up->sc->name);
		return (1);
	}
	return (0);
}

void
ctools_configure(void)
{
	if (ctools_withdraw(ctools_not_allowed, NULL))
		ctools_changed(NULL);
}

/* Is a tool the session's? */
static int
ctools_owned(struct ctool *t, void *arg)
{
	return (t->e.owner == arg);
}

void
ctools_session_end(struct session *s)
{
	ctools_calls_end(s);
	if (s->nctools > 0 && ctools_withdraw(ctools_owned, s)) {
		log_info("session %.8s: its tools are withdrawn", s->id);
		ctools_changed(s);
	}
	if (s->ctool_prefix != NULL &&
	    strmap_get(&prefixes, s->ctool_prefix) == s)
		strmap_del(&prefixes, s->ctool_prefix);
	free(s->ctool_prefix);
	s->ctool_prefix = NULL;
}
