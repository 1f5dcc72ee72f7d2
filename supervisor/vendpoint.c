/* SPDX-License-Identifier: ISC */
/*
 * Virtual endpoints (endpoints = ( ... ) in mcp-supervisord.conf(5)): a
 * path that serves the part of the merged catalog its patterns select,
 * on every client transport: Streamable HTTP at the path itself, legacy
 * HTTP+SSE at "<path>/sse" and "<path>/messages", WebSocket at
 * "<path>/ws" (when ws_path is set), and mcpctl connect --endpoint.
 *
 * An endpoint is not a catalog of its own: it narrows what its sessions
 * see, exactly where a client's allow and deny patterns do (acl.c), so
 * what it leaves out is absent from lists and unknown to calls, and a
 * client's rules still apply inside it.  A session is bound to the
 * endpoint that made it (a session id presented at another path is
 * unknown).  A change of the catalog tells a session of an endpoint of
 * the lists that changed in what its endpoint selects, and nothing else.
 *
 * An endpoint lives from the configuration that adds it to the one that
 * removes it: a reload keeps the endpoints it does not change and their
 * sessions, tells the sessions of a changed one that its lists changed,
 * and ends the sessions of a removed one.  Sessions point at their
 * endpoint, which points at its entry of the running configuration.
 *
 * discovery: "list" lists the selected catalog as /mcp does; "search"
 * lists tool_search.c's meta-tools, which search what it selects.
 */
#include "config.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "log.h"
#include "prom.h"
#include "supervisor.h"
#include "uri.h"
#include "xmalloc.h"

#define VEP_PATHLEN	(CONF_ENDPOINT_PATH_MAX + 16)

/* One virtual endpoint; owned by the table below. */
struct vendpoint {
	unsigned int		 id;		/* never reused in a run */
	const struct endpoint_conf *ec;		/* the running conf's entry */
	char			 path[VEP_PATHLEN];
	char			 sse[VEP_PATHLEN];
	char			 messages[VEP_PATHLEN];
	char			 ws[VEP_PATHLEN];	/* "" without ws_path */
	uint64_t		 hash;		/* of the path (principals) */
	unsigned int		 nsessions;
	TAILQ_HEAD(, session)	 sessions;	/* borrowed: bound to it */
	uint64_t		 requests;	/* requests routed, for metrics */
	int			 changed;	/* the last catalog change's */
	uint64_t		 ctools_sig;	/* of the client tools it selects */
	int			 ctools_changed;	/* at the last change */
	int			 warned;	/* patterns matching nothing */
};

/* A catalog change, per endpoint, kept by a broadcast until it is out. */
struct vendpoint_changes {
	size_t		 n;
	unsigned int	 id[CONF_MAX_ENDPOINTS];
	int		 changed[CONF_MAX_ENDPOINTS];
};

static struct vendpoint	*veps[CONF_MAX_ENDPOINTS];
static size_t		 nveps;
static unsigned int	 next_id;

/* FNV-1a, 64 bits, of a string. */
static uint64_t
vep_hash(const char *s)
{
	uint64_t	h = 0xcbf29ce484222325ULL;

	for (; *s != '\0'; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	return (h);
}

/* Make the table entry for a configured endpoint. */
static struct vendpoint *
vep_new(const struct endpoint_conf *ec)
{
	struct vendpoint	*v;

	v = xcalloc(1, sizeof *v);
	v->id = ++next_id;
	v->ec = ec;
	snprintf(v->path, sizeof v->path, "%s", ec->path);
	snprintf(v->sse, sizeof v->sse, "%s/sse", ec->path);
	snprintf(v->messages, sizeof v->messages, "%s/messages", ec->path);
	v->hash = vep_hash(ec->path);
	v->ctools_sig = 0xcbf29ce484222325ULL;	/* none selected */
	TAILQ_INIT(&v->sessions);
	return (v);
}

/* The patterns of a kind. */
static char *const *
vep_rules(const struct vendpoint *v, enum catalog_kind kind)
{
	switch (kind) {
	case CATALOG_TOOLS:
		return (v->ec->tools);
	case CATALOG_PROMPTS:
		return (v->ec->prompts);
	default:
		return (v->ec->resources);
	}
}

/*
 * Do patterns select a key: one plain pattern matches and no "!" one
 * does (the order does not matter; an exclusion always wins); with only
 * "!" patterns, everything they do not exclude.  inc and exc are the
 * forms the plain and the "!" patterns see.
 */
static int
vep_match(char *const *rules, const char *inc, const char *exc)
{
	size_t	i;
	int	plain = 0, hit = 0;

	if (rules == NULL)
		return (0);
	for (i = 0; rules[i] != NULL; i++) {
		if (rules[i][0] == '!') {
			if (fnmatch(rules[i] + 1, exc, 0) == 0)
				return (0);
			continue;
		}
		plain = 1;
		if (!hit && fnmatch(rules[i], inc, 0) == 0)
			hit = 1;
	}
	return (plain ? hit : 1);
}

int
vendpoint_selects(const struct vendpoint *v, enum catalog_kind kind,
    const char *key)
{
	return (vep_match(vep_rules(v, kind), key, key));
}

int
vendpoint_selects_uri(const struct vendpoint *v, const char *uri,
    const char **why)
{
	char	*norm, *dec;
	size_t	 len;
	int	 r;

	if (v->ec->resources == NULL)
		return (0);
	/* The URI in the forms acl.c checks: exclusions see it decoded. */
	len = strlen(uri);
	norm = xmalloc(len + 1);
	dec = xmalloc(len + 1);
	if (uri_normalize(uri, len, URI_DECODE, dec, len + 1, why) != 0 ||
	    uri_normalize(uri, len, 0, norm, len + 1, why) != 0)
		r = -1;
	else
		r = vep_match(v->ec->resources, norm, dec) &&
		    vep_match(v->ec->resources, norm, norm);
	free(norm);
	free(dec);
	return (r);
}

/* May an endpoint list an item (a listed resource by its URI)? */
enum discovery
vendpoint_discovery(const struct vendpoint *v)
{
	return (v->ec->discovery);
}

int
vendpoint_lists(const struct vendpoint *v, enum catalog_kind kind,
    const char *key)
{
	const char	*why;

	if (kind == CATALOG_RESOURCES)
		return (vendpoint_selects_uri(v, key, &why) == 1);
	return (vendpoint_selects(v, kind, key));
}

struct vendpoint *
vendpoint_route(const char *path, enum vendpoint_transport *t)
{
	struct vendpoint	*v;
	size_t			 i;

	for (i = 0; i < nveps; i++) {
		v = veps[i];
		if (strcmp(path, v->path) == 0)
			*t = VEP_STREAMABLE;
		else if (strcmp(path, v->sse) == 0)
			*t = VEP_SSE;
		else if (strcmp(path, v->messages) == 0)
			*t = VEP_MESSAGES;
		else if (v->ws[0] != '\0' && strcmp(path, v->ws) == 0)
			*t = VEP_WS;
		else
			continue;
		return (v);
	}
	return (NULL);
}

const char *
vendpoint_path(const struct vendpoint *v)
{
	return (v != NULL ? v->path : "/mcp");
}

const char *
vendpoint_messages_path(const struct vendpoint *v)
{
	return (v != NULL ? v->messages : "/messages");
}

const struct endpoint_conf *
vendpoint_conf(const struct vendpoint *v)
{
	return (v->ec);
}

uint64_t
vendpoint_hash(const struct vendpoint *v)
{
	return (v->hash);
}

void
vendpoint_bind(struct session *s, struct vendpoint *v)
{
	vendpoint_unbind(s);
	s->vep = v;
	if (v != NULL) {
		v->nsessions++;
		TAILQ_INSERT_TAIL(&v->sessions, s, vep_entry);
	}
}

void
vendpoint_unbind(struct session *s)
{
	if (s->vep != NULL) {
		s->vep->nsessions--;
		TAILQ_REMOVE(&s->vep->sessions, s, vep_entry);
	}
	s->vep = NULL;
}

/* End the sessions of an endpoint a reload removed (its own list, not a
 * walk of every session). */
static void
vep_end_sessions(struct vendpoint *v)
{
	struct session	*s;

	while ((s = TAILQ_FIRST(&v->sessions)) != NULL)
		session_free(s, "its endpoint was removed");
}

/* Tell the sessions of a changed endpoint. */
static void
vep_tell_sessions(struct vendpoint *v)
{
	struct session	*s;

	/* Telling sends, and never ends a session from here. */
	TAILQ_FOREACH(s, &v->sessions, vep_entry)
		route_list_changed(s, v->changed);
}

/* Which lists differ between two configurations of an endpoint? */
static int
vep_conf_diff(const struct endpoint_conf *a, const struct endpoint_conf *b)
{
	int	d = conf_endpoint_diff(a, b), changed = 0;

	if (d & CONF_EP_TOOLS)
		changed |= 1 << CATALOG_TOOLS;
	if (d & CONF_EP_RESOURCES)
		changed |= (1 << CATALOG_RESOURCES) | (1 << CATALOG_TEMPLATES);
	if (d & CONF_EP_PROMPTS)
		changed |= 1 << CATALOG_PROMPTS;
	return (changed);
}

void
vendpoint_configure(void)
{
	struct vendpoint	*next[CONF_MAX_ENDPOINTS], *v;
	const struct endpoint_conf *ec;
	size_t			 i, j, n = 0;
	int			 changed;

	for (i = 0; i < conf->nendpoints; i++) {
		ec = &conf->endpoints[i];
		v = NULL;
		for (j = 0; j < nveps; j++) {
			if (veps[j] != NULL &&
			    strcmp(veps[j]->path, ec->path) == 0) {
				v = veps[j];
				veps[j] = NULL;
				break;
			}
		}
		if (v == NULL) {
			v = vep_new(ec);
			log_info("endpoint %s: added", v->path);
		} else {
			changed = vep_conf_diff(v->ec, ec);
			v->ec = ec;
			v->warned = 0;
			if (changed != 0) {
				log_info("endpoint %s: changed, %u sessions "
				    "told", v->path, v->nsessions);
				v->changed = changed;
				vep_tell_sessions(v);
			}
		}
		snprintf(v->ws, sizeof v->ws, "%s%s", conf->ws_path[0] !=
		    '\0' ? ec->path : "", conf->ws_path[0] != '\0' ? "/ws" :
		    "");
		next[n++] = v;
	}
	/* What is left was removed: its sessions end with it. */
	for (j = 0; j < nveps; j++) {
		if ((v = veps[j]) == NULL)
			continue;
		log_info("endpoint %s: removed, %u sessions ended", v->path,
		    v->nsessions);
		vep_end_sessions(v);
		free(v);
	}
	memcpy(veps, next, n * sizeof *next);
	nveps = n;
}

void
vendpoint_free_all(void)
{
	size_t	i;

	for (i = 0; i < nveps; i++)
		free(veps[i]);
	nveps = 0;
}

/* Does a pattern ("!" or not) match an item's key, in the form it is
 * matched against for that kind? */
static int
vep_pattern_hits(enum catalog_kind kind, const char *key, const void *arg)
{
	const char	*pattern = arg, *why;
	char		*norm;
	size_t		 len;
	int		 hit;

	if (kind != CATALOG_RESOURCES)
		return (fnmatch(pattern[0] == '!' ? pattern + 1 : pattern, key,
		    0) == 0);
	len = strlen(key);
	norm = xmalloc(len + 1);
	hit = uri_normalize(key, len, pattern[0] == '!' ? URI_DECODE : 0,
	    norm, len + 1, &why) == 0 && fnmatch(pattern[0] == '!' ?
	    pattern + 1 : pattern, norm, 0) == 0;
	free(norm);
	return (hit);
}

/* Warn once per configuration of a pattern that selects nothing. */
static void
vep_warn_unused(struct vendpoint *v, const struct catalog *c)
{
	static const char *const names[] = { "tools", "resources",
	    "prompts" };
	static const enum catalog_kind kinds[] = { CATALOG_TOOLS,
	    CATALOG_RESOURCES, CATALOG_PROMPTS };
	char *const	*rules;
	size_t		 i, k;

	for (k = 0; k < 3; k++) {
		if ((rules = vep_rules(v, kinds[k])) == NULL)
			continue;
		for (i = 0; rules[i] != NULL; i++) {
			if (catalog_any_match(c, kinds[k], vep_pattern_hits,
			    rules[i]))
				continue;
			log_warnx("endpoint %s: %s pattern \"%s\" matches "
			    "nothing in the catalog", v->path, names[k],
			    rules[i]);
		}
	}
}

void
vendpoint_catalog_changed(const struct catalog *old, const struct catalog *c,
    int changed)
{
	struct vendpoint	*v;
	size_t			 i, u;

	for (i = 0; i < nveps; i++) {
		v = veps[i];
		v->changed = changed != 0 ? catalog_diff_by(old, c, v) &
		    changed : 0;
		if (v->warned)
			continue;
		/* Once every upstream has sent its catalog. */
		for (u = 0; u < nupstreams; u++) {
			if (upstreams[u]->catalog == NULL)
				break;
		}
		if (u < nupstreams)
			continue;
		v->warned = 1;
		vep_warn_unused(v, c);
	}
}

/* Each endpoint's bits: of the last catalog change, or of its selection
 * of clients' tools (the tools bit if it changed). */
static struct vendpoint_changes *
vep_changes(int ctools)
{
	struct vendpoint_changes	*vc;
	size_t				 i;

	if (nveps == 0)
		return (NULL);
	vc = xcalloc(1, sizeof *vc);
	for (i = 0; i < nveps; i++) {
		vc->id[i] = veps[i]->id;
		if (!ctools)
			vc->changed[i] = veps[i]->changed;
		else if (veps[i]->ctools_changed)
			vc->changed[i] = 1 << CATALOG_TOOLS;
	}
	vc->n = nveps;
	return (vc);
}

struct vendpoint_changes *
vendpoint_changes_take(void)
{
	return (vep_changes(0));
}

int
vendpoint_changes_for(const struct vendpoint_changes *vc,
    const struct session *s, int global)
{
	size_t	i;

	if (s->vep == NULL)
		return (global);
	for (i = 0; vc != NULL && i < vc->n; i++) {
		if (vc->id[i] == s->vep->id)
			return (vc->changed[i]);
	}
	/* An endpoint added since: it had nothing before. */
	return (0);
}

void
vendpoint_changes_free(struct vendpoint_changes *vc)
{
	free(vc);
}

json_t *
vendpoint_status_json(void)
{
	const struct vendpoint	*v;
	json_t			*a;
	size_t			 i;

	a = json_array();
	for (i = 0; i < nveps; i++) {
		v = veps[i];
		json_array_append_new(a, json_pack("{s:s, s:s, s:I}", "path",
		    v->path, "discovery", conf_discovery_name(v->ec->discovery),
		    "sessions", (json_int_t)v->nsessions));
	}
	return (a);
}

void
vendpoint_request(struct vendpoint *v)
{
	v->requests++;
}

/*
 * The endpoints' metrics: their paths come from the configuration only,
 * so the labels are bounded by it (64 endpoints at most).  A reload that
 * removes an endpoint removes its series; one that keeps it keeps its
 * count.
 */
void
vendpoint_metrics(struct evbuffer *b)
{
	const struct vendpoint	*v;
	char			 labels[CONF_ENDPOINT_PATH_MAX + 32];
	size_t			 i;

	if (nveps == 0)
		return;
	prom_header(b, "mcp_supervisor_endpoint_sessions", "gauge",
	    "Client sessions open at each virtual endpoint.");
	for (i = 0; i < nveps; i++) {
		v = veps[i];
		prom_labels(labels, sizeof labels, "endpoint", v->path, NULL);
		prom_sample_u64(b, "mcp_supervisor_endpoint_sessions", labels,
		    v->nsessions);
	}
	prom_header(b, "mcp_supervisor_endpoint_requests_total", "counter",
	    "Client requests routed at each virtual endpoint.");
	for (i = 0; i < nveps; i++) {
		v = veps[i];
		prom_labels(labels, sizeof labels, "endpoint", v->path, NULL);
		prom_sample_u64(b, "mcp_supervisor_endpoint_requests_total",
		    labels, v->requests);
	}
}

/* FNV-1a, 64 bits, of bytes, continuing h. */
static uint64_t
vep_hash_more(uint64_t h, const char *p, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		h ^= (unsigned char)p[i];
		h *= 0x100000001b3ULL;
	}
	return (h);
}

void
vendpoint_ctools_changed(void)
{
	struct vendpoint	*v;
	struct ctool		*t;
	uint64_t		 h;
	size_t			 i, j;

	/* The client tools each endpoint selects, in order, as a digest. */
	for (i = 0; i < nveps; i++) {
		v = veps[i];
		h = 0xcbf29ce484222325ULL;
		for (j = 0; (t = ctools_at(j)) != NULL; j++) {
			if (!vendpoint_selects(v, CATALOG_TOOLS, t->key))
				continue;
			h = vep_hash_more(h, t->text, t->len);
			h = vep_hash_more(h, "", 1);
		}
		v->ctools_changed = h != v->ctools_sig;
		v->ctools_sig = h;
	}
}

struct vendpoint_changes *
vendpoint_ctools_take(void)
{
	return (vep_changes(1));
}
