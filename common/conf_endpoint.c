/* SPDX-License-Identifier: ISC */
/*
 * Virtual endpoints in the configuration: endpoints = ( { path = ...;
 * tools = [ ... ]; resources = [ ... ]; prompts = [ ... ]; discovery =
 * "list"; } ).  Read, checked, printed and freed here; the supervisor
 * serves them (supervisor/vendpoint.c).
 *
 * An endpoint's path serves Streamable HTTP; "<path>/sse" and
 * "<path>/messages" legacy HTTP+SSE; "<path>/ws" WebSocket when ws_path
 * is set.  No path of one endpoint may be a path of the gateway's own or
 * of another endpoint, nor lie under /.well-known.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf_priv.h"
#include "xmalloc.h"

static const char *const discovery_names[] = {
	[DISCOVERY_LIST] = "list",
	[DISCOVERY_SEARCH] = "search",
};

/* The suffixes of an endpoint's other transports' paths. */
static const char *const suffixes[] = { "", "/sse", "/messages", "/ws" };
#define NSUFFIXES	(sizeof suffixes / sizeof suffixes[0])

const char *
conf_discovery_name(enum discovery d)
{
	return (discovery_names[d]);
}

/* Is a path fit for an endpoint: "/" and segments of A-Z a-z 0-9 - _ .
 * ~, none empty, "." or ".."? */
static int
valid_path(const char *p)
{
	const char	*seg;
	size_t		 len;

	if (p[0] != '/' || strlen(p) > CONF_ENDPOINT_PATH_MAX)
		return (0);
	for (seg = p + 1;; seg += len + 1) {
		len = strspn(seg, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnop"
		    "qrstuvwxyz0123456789-_.~");
		if (len == 0 || (seg[len] != '/' && seg[len] != '\0') ||
		    strncmp(seg, ".", len) == 0 || strncmp(seg, "..", len) == 0)
			return (0);
		if (seg[len] == '\0')
			return (1);
	}
}

/* Read a list of patterns: "!" alone, or an empty pattern, is refused. */
static int
get_rules(struct conf_ctx *ctx, const config_setting_t *s, char ***out)
{
	size_t	i;

	if (conf_get_strv(ctx, s, 0, out) != 0)
		return (-1);
	for (i = 0; (*out)[i] != NULL; i++) {
		if (i >= CONF_MAX_ENDPOINT_RULES)
			return (conf_error(ctx, s, "%s: more than %d patterns",
			    config_setting_name(s), CONF_MAX_ENDPOINT_RULES));
		if ((*out)[i][0] == '\0' || strcmp((*out)[i], "!") == 0)
			return (conf_error(ctx, s, "%s: an empty pattern",
			    config_setting_name(s)));
	}
	return (0);
}

/* Read one group of endpoints. */
static int
parse_endpoint(struct conf_ctx *ctx, const config_setting_t *g,
    struct endpoint_conf *ep)
{
	config_setting_t	*s;
	const char		*key;
	char			*v = NULL;
	int			 i, n, d;

	ep->at = conf_where(ctx, g);
	if (!config_setting_is_group(g))
		return (conf_error(ctx, g, "each entry of endpoints must be a "
		    "group { path = ...; tools = [ ... ]; }"));
	n = config_setting_length(g);
	for (i = 0; i < n; i++) {
		s = config_setting_get_elem(g, (unsigned int)i);
		key = config_setting_name(s);
		if (strcmp(key, "path") == 0) {
			if (conf_get_string(ctx, s, &ep->path, 0) != 0)
				return (-1);
			if (!valid_path(ep->path))
				return (conf_error(ctx, s, "endpoint path \"%s\" "
				    "must begin with / and be at most %d "
				    "characters of segments of A-Z a-z 0-9 - _ "
				    ". ~ (none empty, . or ..)", ep->path,
				    CONF_ENDPOINT_PATH_MAX));
		} else if (strcmp(key, "tools") == 0) {
			if (get_rules(ctx, s, &ep->tools) != 0)
				return (-1);
		} else if (strcmp(key, "resources") == 0) {
			if (get_rules(ctx, s, &ep->resources) != 0)
				return (-1);
		} else if (strcmp(key, "prompts") == 0) {
			if (get_rules(ctx, s, &ep->prompts) != 0)
				return (-1);
		} else if (strcmp(key, "discovery") == 0) {
			if (conf_get_string(ctx, s, &v, 0) != 0)
				return (-1);
			d = conf_lookup_name(discovery_names, 2, v);
			if (d < 0) {
				conf_error(ctx, s, "unknown discovery \"%s\" "
				    "(list or search)", v);
				free(v);
				return (-1);
			}
			free(v);
			v = NULL;
			ep->discovery = (enum discovery)d;
		} else
			return (conf_error(ctx, s, "endpoint: unknown setting "
			    "\"%s\"", key));
	}
	if (ep->path == NULL)
		return (conf_error(ctx, g, "an endpoint needs a path"));
	return (0);
}

int
conf_parse_endpoints(struct conf_ctx *ctx, const config_setting_t *list,
    struct conf *conf)
{
	config_setting_t	*s;
	int			 i, n;

	if (!config_setting_is_list(list))
		return (conf_error(ctx, list, "endpoints must be a list: "
		    "endpoints = ( { ... }, { ... } );"));
	n = config_setting_length(list);
	if (n > CONF_MAX_ENDPOINTS)
		return (conf_error(ctx, list, "more than %d endpoints",
		    CONF_MAX_ENDPOINTS));
	conf_endpoints_free(conf);
	conf->endpoints = xcalloc((size_t)n + 1, sizeof *conf->endpoints);
	for (i = 0; i < n; i++) {
		s = config_setting_get_elem(list, (unsigned int)i);
		conf->nendpoints++;
		if (parse_endpoint(ctx, s, &conf->endpoints[i]) != 0)
			return (-1);
	}
	return (0);
}

/*
 * Is p[0..n) a path the gateway serves whatever the configuration says
 * (its MCP, health and metrics paths, /.well-known and under)?  Its name,
 * or NULL.
 */
const char *
conf_own_path(const char *p, size_t n)
{
	static const char *const own[] = { "/mcp", "/sse", "/messages",
	    "/metrics", "/healthz", "/readyz" };
	size_t	i;

	for (i = 0; i < sizeof own / sizeof own[0]; i++) {
		if (strlen(own[i]) == n && strncmp(p, own[i], n) == 0)
			return (own[i]);
	}
	if ((n == 12 || (n > 12 && p[12] == '/')) &&
	    strncmp(p, "/.well-known", 12) == 0)
		return ("/.well-known");
	return (NULL);
}

/* Is p one of the gateway's own paths, ws_path aside? */
static const char *
reserved_but_ws(const struct conf *conf, const char *p)
{
	const struct oauth_client_conf	*oc;
	const char			*u, *what;

	if ((what = conf_own_path(p, strlen(p))) != NULL)
		return (what);
	/* Upstream logins' (uplogin.c): the redirect's, the CIMD's. */
	oc = conf->oauth_client;
	u = oc != NULL && oc->redirect_uri != NULL ?
	    conf_url_path(oc->redirect_uri) : "/oauth/callback";
	if (strncmp(p, u, strcspn(u, "?#")) == 0 && p[strcspn(u, "?#")] ==
	    '\0')
		return (oc != NULL && oc->redirect_uri != NULL ? "redirect_uri" :
		    "default redirect_uri /oauth/callback");
	if (oc != NULL && oc->client_metadata_url != NULL) {
		u = conf_url_path(oc->client_metadata_url);
		if (strncmp(p, u, strcspn(u, "?#")) == 0 &&
		    p[strcspn(u, "?#")] == '\0')
			return ("client_metadata_url");
	}
	return (NULL);
}

/* Is p (or anything under it, for a prefix) one of the gateway's own? */
static const char *
reserved(const struct conf *conf, const char *p)
{
	if (conf->ws_path[0] != '\0' && strcmp(p, conf->ws_path) == 0)
		return ("ws_path");
	return (reserved_but_ws(conf, p));
}

/*
 * ws_path is not a path the gateway serves for something else: the
 * other would answer, and the WebSocket endpoint never.
 */
int
conf_check_paths(struct conf_ctx *ctx, const struct conf *conf)
{
	const char	*what;

	if (conf->ws_path[0] == '\0' ||
	    (what = reserved_but_ws(conf, conf->ws_path)) == NULL)
		return (0);
	/* The default ws_path: the login URL is what was written. */
	if (conf->ws_path_at.line == 0 && conf->oauth_client != NULL)
		return (conf_error_at(ctx, conf->oauth_client->at, "%s: "
		    "the gateway serves %s already (ws_path)", what,
		    conf->ws_path));
	return (conf_error_at(ctx, conf->ws_path_at, "ws_path %s: the "
	    "gateway serves it already (%s)", conf->ws_path, what));
}

int
conf_check_endpoints(struct conf_ctx *ctx, const struct conf *conf)
{
	const struct endpoint_conf	*a, *b;
	const char			*what;
	char				 pa[CONF_ENDPOINT_PATH_MAX + 16];
	char				 pb[CONF_ENDPOINT_PATH_MAX + 16];
	char				 where[512];
	size_t				 i, j, x, y, nx;

	nx = conf->ws_path[0] != '\0' ? NSUFFIXES : NSUFFIXES - 1;
	for (i = 0; i < conf->nendpoints; i++) {
		a = &conf->endpoints[i];
		for (x = 0; x < nx; x++) {
			snprintf(pa, sizeof pa, "%s%s", a->path, suffixes[x]);
			if ((what = reserved(conf, pa)) != NULL)
				return (conf_error_at(ctx, a->at, "endpoint "
				    "%s: %s collides with the gateway's %s",
				    a->path, pa, what));
		}
		for (j = 0; j < i; j++) {
			b = &conf->endpoints[j];
			for (x = 0; x < nx; x++) {
				snprintf(pa, sizeof pa, "%s%s", a->path,
				    suffixes[x]);
				for (y = 0; y < nx; y++) {
					snprintf(pb, sizeof pb, "%s%s",
					    b->path, suffixes[y]);
					if (strcmp(pa, pb) == 0)
						return (conf_error_at(ctx,
						    a->at, "endpoint %s: %s "
						    "collides with endpoint %s "
						    "on %s", a->path, pa,
						    b->path, conf_at_text(ctx,
						    b->at, a->at, where,
						    sizeof where)));
				}
			}
		}
	}
	return (0);
}

void
conf_endpoints_free(struct conf *conf)
{
	size_t	i;

	for (i = 0; i < conf->nendpoints; i++) {
		free(conf->endpoints[i].path);
		conf_strv_free(conf->endpoints[i].tools);
		conf_strv_free(conf->endpoints[i].resources);
		conf_strv_free(conf->endpoints[i].prompts);
	}
	free(conf->endpoints);
	conf->endpoints = NULL;
	conf->nendpoints = 0;
}

int
conf_endpoint_diff(const struct endpoint_conf *a,
    const struct endpoint_conf *b)
{
	int	changed = 0;

	/* Another discovery lists other tools. */
	if (!conf_strv_equal(a->tools, b->tools) ||
	    a->discovery != b->discovery)
		changed |= CONF_EP_TOOLS;
	if (!conf_strv_equal(a->resources, b->resources))
		changed |= CONF_EP_RESOURCES;
	if (!conf_strv_equal(a->prompts, b->prompts))
		changed |= CONF_EP_PROMPTS;
	return (changed);
}

void
conf_print_endpoints(const struct conf *conf, FILE *f)
{
	static const char *const keys[] = { "tools", "resources", "prompts" };
	const struct endpoint_conf	*ep;
	char *const			*lists[3];
	size_t				 i, k;

	if (conf->nendpoints == 0)
		return;
	fprintf(f, "endpoints = (");
	for (i = 0; i < conf->nendpoints; i++) {
		ep = &conf->endpoints[i];
		fprintf(f, "%s\n  { path = ", i > 0 ? "," : "");
		conf_print_string(f, ep->path);
		fprintf(f, "; discovery = \"%s\";",
		    conf_discovery_name(ep->discovery));
		lists[0] = ep->tools;
		lists[1] = ep->resources;
		lists[2] = ep->prompts;
		for (k = 0; k < 3; k++) {
			if (lists[k] == NULL)
				continue;
			fprintf(f, "\n    %s = ", keys[k]);
			conf_print_strv(f, lists[k]);
			fprintf(f, ";");
		}
		fprintf(f, " }");
	}
	fprintf(f, "\n);\n");
}
