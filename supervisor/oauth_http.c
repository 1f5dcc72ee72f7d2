/* SPDX-License-Identifier: ISC */
/*
 * What an OAuth client sees of the gateway (RFC 9728, RFC 6750): the
 * protected resource metadata, served without a token at
 * /.well-known/oauth-protected-resource and at that path followed by the
 * resource's path and an endpoint's, and the WWW-Authenticate challenge of
 * a 401 or 403 that points to it.  Both are built from the configured
 * public resource URL, never from the request's Host, so that they are
 * right behind a proxy that terminates TLS.  And what a grant allows once
 * it is granted: an upstream's scopes, and how long a connection it
 * opened (a WebSocket, an event stream) may last.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>

#include "log.h"
#include "supervisor.h"
#include "xmalloc.h"

#define PRM_PATH	"/.well-known/oauth-protected-resource"
#define LEFT_MAX	(10LL * 366 * 86400)	/* seconds a connection is
						   timed for, at most */

/* The resource URL's origin ("https://host:port") and path ("" or "/x"). */
static void
resource_split(const char *resource, size_t *originlen, const char **path)
{
	const char	*p = strstr(resource, "://");

	p = p != NULL ? p + 3 : resource;
	p += strcspn(p, "/");
	*originlen = (size_t)(p - resource);
	*path = p;
}

/* The endpoint a request path is, or NULL. */
static const char *
endpoint_of(const char *path)
{
	enum vendpoint_transport	t;

	if (strcmp(path, "/mcp") == 0 || strcmp(path, "/sse") == 0 ||
	    strcmp(path, "/messages") == 0)
		return (path);
	if (conf->ws_path[0] != '\0' && strcmp(path, conf->ws_path) == 0)
		return (path);
	/* A virtual endpoint's paths are resources of their own. */
	if (vendpoint_route(path, &t) != NULL)
		return (path);
	return (NULL);
}

/*
 * Which endpoint a metadata path is for: 1 with *endpoint set (NULL for
 * the resource as a whole), 0 if it is no metadata path of ours.
 */
static int
metadata_endpoint(const char *path, const char **endpoint)
{
	const char	*rbase, *rest;
	size_t		 olen, blen;

	if (!oauth_enabled() || strncmp(path, PRM_PATH, strlen(PRM_PATH)) != 0)
		return (0);
	rest = path + strlen(PRM_PATH);
	resource_split(conf->oauth->resource, &olen, &rbase);
	blen = strlen(rbase);
	/* The resource's own path comes first, when it has one. */
	if (blen > 0 && strncmp(rest, rbase, blen) == 0 &&
	    (rest[blen] == '\0' || rest[blen] == '/'))
		rest += blen;
	*endpoint = NULL;
	if (*rest == '\0')
		return (1);
	return ((*endpoint = endpoint_of(rest)) != NULL);
}

int
oauth_metadata_path(const struct http_request *req)
{
	const char	*endpoint;

	return (metadata_endpoint(req->path, &endpoint));
}

/* Append a string vector to a JSON array. */
static void
strv_append(json_t *a, char *const *v)
{
	size_t	i;

	for (i = 0; v != NULL && v[i] != NULL; i++)
		json_array_append_new(a, json_string(v[i]));
}

void
oauth_metadata_serve(struct http_conn *c, struct http_request *req)
{
	const struct oauth_conf	*oc = conf->oauth;
	const char		*endpoint = NULL;
	json_t			*o, *a;
	char			*text, *resource;
	size_t			 i;

	if (strcmp(req->method, "GET") != 0 &&
	    strcmp(req->method, "HEAD") != 0) {
		http_reply(c, 405, "text/plain; charset=utf-8",
		    "Allow: GET, HEAD\r\n", "method not allowed\n", 19);
		return;
	}
	(void)metadata_endpoint(req->path, &endpoint);
	xasprintf(&resource, "%s%s", oc->resource, endpoint != NULL ?
	    endpoint : "");
	o = json_object();
	json_object_set_new(o, "resource", json_string(resource));
	free(resource);
	a = json_array();
	for (i = 0; i < oc->nissuers; i++)
		json_array_append_new(a, json_string(oc->issuers[i].issuer));
	json_object_set_new(o, "authorization_servers", a);
	a = json_array();
	strv_append(a, oc->scopes_supported != NULL ? oc->scopes_supported :
	    oc->scopes);
	if (json_array_size(a) > 0)
		json_object_set_new(o, "scopes_supported", a);
	else
		json_decref(a);
	json_object_set_new(o, "bearer_methods_supported",
	    json_pack("[s]", "header"));
	if (oc->resource_name != NULL)
		json_object_set_new(o, "resource_name",
		    json_string(oc->resource_name));
	text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	http_reply(c, 200, "application/json",
	    "Cache-Control: max-age=300\r\n", text, strlen(text));
	free(text);
}

/* Append a quoted scope list: the scopes space-separated. */
static void
scopes_text(char *buf, size_t len, char *const *scopes)
{
	size_t	i, n = 0;
	int	w;

	buf[0] = '\0';
	for (i = 0; scopes != NULL && scopes[i] != NULL; i++) {
		w = snprintf(buf + n, len - n, "%s%s", i > 0 ? " " : "",
		    scopes[i]);
		if (w < 0 || (size_t)w >= len - n) {
			buf[n] = '\0';
			return;
		}
		n += (size_t)w;
	}
}

void
oauth_challenge(const char *path, char *buf, size_t len, const char *error,
    const char *why, char *const *scope)
{
	const struct oauth_conf	*oc = conf->oauth;
	const char		*endpoint, *rbase;
	char			 scopes[1024];
	size_t			 olen;
	int			 n;

	if ((endpoint = endpoint_of(path)) == NULL)
		endpoint = "/mcp";
	resource_split(oc->resource, &olen, &rbase);
	scopes_text(scopes, sizeof scopes, scope != NULL ? scope :
	    oc->scopes);
	n = snprintf(buf, len, "WWW-Authenticate: Bearer resource_metadata="
	    "\"%.*s%s%s%s\"", (int)olen, oc->resource, PRM_PATH, rbase,
	    endpoint);
	if (n > 0 && (size_t)n < len && scopes[0] != '\0')
		n += snprintf(buf + n, len - (size_t)n, ", scope=\"%s\"",
		    scopes);
	/* Scopes and why (jose.h's messages) hold no '"' or '\'. */
	if (n > 0 && (size_t)n < len && error != NULL)
		n += snprintf(buf + n, len - (size_t)n, ", error=\"%s\"", error);
	if (n > 0 && (size_t)n < len && why != NULL && why[0] != '\0')
		n += snprintf(buf + n, len - (size_t)n,
		    ", error_description=\"%s\"", why);
	if (n > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, "\r\n");
	else
		snprintf(buf, len, "WWW-Authenticate: Bearer\r\n");
}

/* Does a space-separated list hold a scope (a scope-token has no space)? */
static int
scopes_hold(const char *list, const char *scope)
{
	size_t	n = strlen(scope), len;

	while (*list != '\0') {
		len = strcspn(list, " ");
		if (len == n && strncmp(list, scope, n) == 0)
			return (1);
		list += len;
		list += strspn(list, " ");
	}
	return (0);
}

/* Append the scopes of v that buf does not hold yet, space-separated. */
static void
scopes_union(char *buf, size_t len, char *const *v)
{
	size_t	i, n;

	for (i = 0; v != NULL && v[i] != NULL; i++) {
		if (scopes_hold(buf, v[i]))
			continue;
		n = strlen(buf);
		if (n + strlen(v[i]) + 2 > len)
			return;
		snprintf(buf + n, len - n, "%s%s", n > 0 ? " " : "", v[i]);
	}
}

/* Does a NULL-terminated list hold a string? */
static int
strv_has(char *const *v, const char *str)
{
	size_t	i;

	for (i = 0; v != NULL && v[i] != NULL; i++) {
		if (strcmp(v[i], str) == 0)
			return (1);
	}
	return (0);
}

/* Is a scope one of ours: advertised, or else asked for somewhere? */
static int
scope_ours(const char *scope)
{
	size_t	i;

	if (conf->oauth->scopes_supported != NULL)
		return (strv_has(conf->oauth->scopes_supported, scope));
	if (strv_has(conf->oauth->scopes, scope))
		return (1);
	for (i = 0; i < conf->nservers; i++) {
		if (strv_has(conf->servers[i].scopes, scope))
			return (1);
	}
	return (0);
}

/* Append the scopes of ours a grant has that buf does not hold yet. */
static void
scopes_granted(char *buf, size_t len, const struct oauth_grant *g)
{
	char	*one[2] = { NULL, NULL };
	size_t	 i;

	for (i = 0; g->scopes[i] != NULL; i++) {
		if (!scope_ours(g->scopes[i]))
			continue;
		one[0] = g->scopes[i];
		scopes_union(buf, len, one);
	}
}

/* The path a session came by: an endpoint's, and a transport's suffix. */
static const char *
session_endpoint(const struct session *s, const char **suffix)
{
	int	ws = s->only != NULL && s->only->kind == STREAM_WS;

	*suffix = "";
	if (s->vep != NULL) {
		if (s->legacy)
			*suffix = "/sse";
		else if (ws)
			*suffix = "/ws";
		return (vendpoint_path(s->vep));
	}
	if (s->legacy)
		return ("/sse");
	if (ws)
		return (conf->ws_path);
	return ("/mcp");
}

/* The running configuration's entry of an upstream: a reload may change
 * it (NULL: gone). */
static const struct server_conf *
running_server(const struct upstream *up)
{
	size_t	i;

	for (i = 0; i < conf->nservers; i++) {
		if (strcmp(conf->servers[i].name, up->sc->name) == 0)
			return (&conf->servers[i]);
	}
	return (NULL);
}

int
oauth_may_hear(const struct session *s, const struct upstream *up)
{
	const struct server_conf	*sc;
	const char			*missing;

	if (s->grant == NULL || !oauth_enabled())
		return (1);
	if (!oauth_grant_has(s->grant, conf->oauth->scopes, &missing) ||
	    ((sc = running_server(up)) != NULL &&
	    !oauth_grant_has(s->grant, sc->scopes, &missing))) {
		log_debug("session %.8s: update from %s not sent: its token "
		    "lacks the scope %s", s->id, up->sc->name, missing);
		return (0);
	}
	return (1);
}

json_t *
oauth_upstream_refusal(const struct session *s, const struct upstream *up)
{
	const struct server_conf	*sc;
	const char			*missing, *rbase, *ep, *suffix;
	char				 scopes[1024], *url;
	size_t				 olen;
	json_t				*o;

	if (s->grant == NULL || !oauth_enabled())
		return (NULL);
	if ((sc = running_server(up)) == NULL ||
	    oauth_grant_has(s->grant, sc->scopes, &missing))
		return (NULL);
	/* What the call needs: every request's scopes and the upstream's
	 * (RFC 6750, section 3: what a new token must have), and what the
	 * token has of ours, so that the new one loses nothing. */
	scopes_text(scopes, sizeof scopes, conf->oauth->scopes);
	scopes_union(scopes, sizeof scopes, sc->scopes);
	scopes_granted(scopes, sizeof scopes, s->grant);
	/* The metadata of the endpoint the session came by: it names the
	 * resource the client's tokens are for. */
	resource_split(conf->oauth->resource, &olen, &rbase);
	ep = session_endpoint(s, &suffix);
	xasprintf(&url, "%.*s%s%s%s%s", (int)olen, conf->oauth->resource,
	    PRM_PATH, rbase, ep, suffix);
	o = json_pack("{s:s, s:s, s:s}", "error", "insufficient_scope",
	    "scope", scopes, "resource_metadata", url);
	free(url);
	return (o);
}

json_t *
oauth_post_refusal(struct session *s, const struct jrpc *m)
{
	static const char *const name_path[] = { "name", NULL };
	static const char *const uri_path[] = { "uri", NULL };
	const char *const	*path;
	struct catalog_entry	*e;
	struct upstream		*up = NULL;
	struct jspan		 at;
	const char		*why;
	char			*v;
	ssize_t			 n;

	if (s->grant == NULL || !oauth_enabled())
		return (NULL);
	switch (m->method_id) {
	case MCPM_TOOLS_CALL:
	case MCPM_PROMPTS_GET:
		path = name_path;
		break;
	case MCPM_RESOURCES_READ:
	case MCPM_SUBSCRIBE:
		path = uri_path;
		break;
	default:
		return (NULL);
	}
	/* Anything odd is left to the routing, which says what it is: a
	 * name with a NUL in it too, which v would cut short. */
	if (jscan_path_unique(m->p, m->params, path, &at) != 0 ||
	    jscan_type(m->p, at) != JT_STRING)
		return (NULL);
	v = xmalloc(at.len);	/* decoded text is never longer */
	if ((n = jscan_string(m->p, at, v, at.len)) < 0 ||
	    memchr(v, '\0', (size_t)n) != NULL) {
		free(v);
		return (NULL);
	}
	/* What the client may not use stays unknown to it: no 403. */
	if (path == uri_path) {
		if (acl_allows_uri(s, v, &why) == 1 &&
		    (up = catalog_resource(view_catalog_fresh(s), v)) == NULL)
			up = catalog_resource(catalog_global(), v);
	} else if (acl_allows(s, m->method_id == MCPM_TOOLS_CALL ?
	    CATALOG_TOOLS : CATALOG_PROMPTS, v)) {
		e = m->method_id == MCPM_TOOLS_CALL ?
		    catalog_tool(view_catalog_fresh(s), v) :
		    catalog_prompt(view_catalog_fresh(s), v);
		if (e == NULL)
			e = m->method_id == MCPM_TOOLS_CALL ?
			    catalog_tool(catalog_global(), v) :
			    catalog_prompt(catalog_global(), v);
		if (e != NULL && e->owner == NULL)
			up = e->up;
	}
	free(v);
	return (up != NULL ? oauth_upstream_refusal(s, up) : NULL);
}

int64_t
oauth_exp_left_ms(int64_t exp)
{
	struct timespec	ts;
	int64_t		left;

	/* No exp (an introspection may say none): no end. */
	if (exp <= 0)
		return (0);
	if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
		fatal("clock_gettime");
	/* As oauth_check has it: expired once now >= exp + leeway. */
	left = exp - (int64_t)ts.tv_sec;
	if (left > LEFT_MAX)
		left = LEFT_MAX;
	if (conf->oauth != NULL)
		left += (int64_t)conf->oauth->leeway;
	left = left * 1000 - ts.tv_nsec / 1000000;
	return (left > 0 ? left : 1);
}
