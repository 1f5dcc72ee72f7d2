/* SPDX-License-Identifier: ISC */
/*
 * The operator's hold on the catalog, in the configuration: where pins
 * are kept (state_dir), what a changed tool definition does (pinning,
 * global and per upstream), and how an upstream's tools are shown (its
 * tools = ( ... ) overrides).  Read, printed and freed here; the
 * supervisor applies them (supervisor/pin.c, supervisor/override.c).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf_priv.h"
#include "naming.h"
#include "xmalloc.h"

static const char *const pinning_names[] = {
	[PINNING_ENFORCE] = "enforce",
	[PINNING_WARN] = "warn",
	[PINNING_OFF] = "off",
};

static const char *const hint_names[CONF_NHINTS] = {
	[HINT_READ_ONLY] = "readOnlyHint",
	[HINT_DESTRUCTIVE] = "destructiveHint",
	[HINT_IDEMPOTENT] = "idempotentHint",
	[HINT_OPEN_WORLD] = "openWorldHint",
};

#define OVERRIDE_TEXT_MAX	(64 * 1024)	/* a title or description */

const char *
conf_pinning_name(enum pinning p)
{
	return (pinning_names[p]);
}

const char *
conf_hint_name(enum conf_hint h)
{
	return (hint_names[h]);
}

/* Read a discovery mode. */
static int
get_discovery(struct conf_ctx *ctx, const config_setting_t *s,
    enum discovery *out)
{
	char	*v = NULL;
	int	 i;

	if (conf_get_string(ctx, s, &v, 0) != 0)
		return (-1);
	for (i = 0; i < 2 && strcmp(conf_discovery_name(
	    (enum discovery)i), v) != 0; i++)
		;
	if (i == 2)
		i = -1;
	if (i < 0) {
		conf_error(ctx, s, "unknown discovery \"%s\" (list or "
		    "search)", v);
		free(v);
		return (-1);
	}
	free(v);
	*out = (enum discovery)i;
	return (0);
}

/* Read a pinning mode. */
static int
get_pinning(struct conf_ctx *ctx, const config_setting_t *s,
    enum pinning *out)
{
	char	*v = NULL;
	int	 i;

	if (conf_get_string(ctx, s, &v, 0) != 0)
		return (-1);
	i = conf_lookup_name(pinning_names, 3, v);
	if (i < 0) {
		conf_error(ctx, s, "unknown pinning \"%s\" (enforce, warn or "
		    "off)", v);
		free(v);
		return (-1);
	}
	free(v);
	*out = (enum pinning)i;
	return (0);
}

int
conf_parse_catalog_key(struct conf_ctx *ctx, const config_setting_t *s,
    struct conf *conf)
{
	const char	*key = config_setting_name(s);

	if (strcmp(key, "pinning") == 0)
		return (get_pinning(ctx, s, &conf->pinning));
	if (strcmp(key, "discovery") == 0)
		return (get_discovery(ctx, s, &conf->discovery));
	/* state_dir */
	free(conf->state_dir);
	conf->state_dir = NULL;
	if (conf_get_string(ctx, s, &conf->state_dir, 0) != 0)
		return (-1);
	if (conf->state_dir[0] != '/')
		return (conf_error(ctx, s, "state_dir must be an absolute "
		    "path"));
	conf->state_dir_at = conf_where(ctx, s);
	return (0);
}

/* Read an override's annotations = { readOnlyHint = true; ... }. */
static int
get_hints(struct conf_ctx *ctx, const config_setting_t *g,
    struct tool_override *o)
{
	config_setting_t	*s;
	int			 i, n, h;

	if (!config_setting_is_group(g))
		return (conf_error(ctx, g, "annotations must be a group "
		    "{ readOnlyHint = true; ... }"));
	n = config_setting_length(g);
	for (i = 0; i < n; i++) {
		s = config_setting_get_elem(g, (unsigned int)i);
		h = conf_lookup_name(hint_names, CONF_NHINTS,
		    config_setting_name(s));
		if (h < 0)
			return (conf_error(ctx, s, "unknown annotation \"%s\" "
			    "(readOnlyHint, destructiveHint, idempotentHint or "
			    "openWorldHint)", config_setting_name(s)));
		if (conf_get_bool(ctx, s, &o->hints[h]) != 0)
			return (-1);
	}
	return (0);
}

/* Read a title or description: bounded. */
static int
get_text(struct conf_ctx *ctx, const config_setting_t *s, char **out)
{
	if (conf_get_string(ctx, s, out, 1) != 0)
		return (-1);
	if (strlen(*out) > OVERRIDE_TEXT_MAX)
		return (conf_error(ctx, s, "%s is longer than %d bytes",
		    config_setting_name(s), OVERRIDE_TEXT_MAX));
	return (0);
}

/* Read one entry of tools = ( ... ). */
static int
get_override(struct conf_ctx *ctx, const config_setting_t *g,
    struct server_conf *srv, struct tool_override *o)
{
	config_setting_t	*s;
	const char		*key;
	int			 i, n;

	memset(o, 0, sizeof *o);
	for (i = 0; i < CONF_NHINTS; i++)
		o->hints[i] = CONF_HINT_UNSET;
	o->at = conf_where(ctx, g);
	if (!config_setting_is_group(g))
		return (conf_error(ctx, g, "server %s: each entry of tools "
		    "must be a group { tool = \"...\"; ... }", srv->name));
	n = config_setting_length(g);
	for (i = 0; i < n; i++) {
		s = config_setting_get_elem(g, (unsigned int)i);
		key = config_setting_name(s);
		if (strcmp(key, "tool") == 0) {
			if (conf_get_string(ctx, s, &o->tool, 0) != 0)
				return (-1);
		} else if (strcmp(key, "name") == 0) {
			if (conf_get_string(ctx, s, &o->name, 0) != 0)
				return (-1);
			if (strlen(o->name) > NAME_MAX_EXPOSED ||
			    !name_valid_tool(o->name, strlen(o->name)))
				return (conf_error(ctx, s, "tool name \"%s\" "
				    "must be 1-%d characters of A-Z a-z 0-9 _ "
				    "- .", o->name, NAME_MAX_EXPOSED));
		} else if (strcmp(key, "title") == 0) {
			if (get_text(ctx, s, &o->title) != 0)
				return (-1);
		} else if (strcmp(key, "description") == 0) {
			if (get_text(ctx, s, &o->description) != 0)
				return (-1);
		} else if (strcmp(key, "annotations") == 0) {
			if (get_hints(ctx, s, o) != 0)
				return (-1);
		} else if (strcmp(key, "hidden") == 0) {
			if (conf_get_bool(ctx, s, &o->hidden) != 0)
				return (-1);
		} else
			return (conf_error(ctx, s, "unknown tool setting \"%s\" "
			    "(tool, name, title, description, annotations or "
			    "hidden)", key));
	}
	if (o->tool == NULL)
		return (conf_error(ctx, g, "server %s: a tools entry needs "
		    "tool = \"the upstream's name\"", srv->name));
	return (0);
}

/* Read tools = ( ... ): one entry per tool, and no two names alike. */
static int
get_overrides(struct conf_ctx *ctx, const config_setting_t *list,
    struct server_conf *srv)
{
	struct tool_override	*o;
	char			 where[512];
	size_t			 i, j;
	int			 n;

	if (!config_setting_is_list(list))
		return (conf_error(ctx, list, "server %s: tools must be a list:"
		    " tools = ( { tool = \"...\"; ... } );", srv->name));
	n = config_setting_length(list);
	if (n > CONF_MAX_OVERRIDES)
		return (conf_error(ctx, list, "server %s: more than %d tools "
		    "entries", srv->name, CONF_MAX_OVERRIDES));
	conf_overrides_free(srv);
	srv->overrides = xcalloc((size_t)n + 1, sizeof *srv->overrides);
	for (i = 0; i < (size_t)n; i++) {
		o = &srv->overrides[i];
		srv->noverrides++;
		if (get_override(ctx, config_setting_get_elem(list,
		    (unsigned int)i), srv, o) != 0)
			return (-1);
		for (j = 0; j < i; j++) {
			if (strcmp(srv->overrides[j].tool, o->tool) == 0)
				return (conf_error_at(ctx, o->at, "server %s: "
				    "tool \"%s\" already has an entry on %s",
				    srv->name, o->tool, conf_at_text(ctx,
				    srv->overrides[j].at, o->at, where,
				    sizeof where)));
			if (o->name != NULL && srv->overrides[j].name != NULL &&
			    strcmp(srv->overrides[j].name, o->name) == 0)
				return (conf_error_at(ctx, o->at, "server %s: "
				    "name \"%s\" is already given to tool \"%s\" "
				    "on %s", srv->name, o->name,
				    srv->overrides[j].tool, conf_at_text(ctx,
				    srv->overrides[j].at, o->at, where,
				    sizeof where)));
		}
	}
	return (0);
}

int
conf_parse_server_catalog(struct conf_ctx *ctx, const config_setting_t *s,
    struct server_conf *srv)
{
	if (strcmp(config_setting_name(s), "pinning") == 0)
		return (get_pinning(ctx, s, &srv->pinning));
	return (get_overrides(ctx, s, srv));
}

/*
 * Two upstreams' overrides may not give the same name; nor may one give
 * a name another upstream's prefix could produce without it knowing: that
 * is checked against the listed tools, when the catalog is merged.
 */
int
conf_check_overrides(struct conf_ctx *ctx, const struct conf *conf)
{
	const struct server_conf	*a, *b;
	char				 where[512];
	size_t				 i, j, k, l;

	for (i = 0; i < conf->nservers; i++) {
		a = &conf->servers[i];
		for (k = 0; k < a->noverrides; k++) {
			if (a->overrides[k].name == NULL)
				continue;
			for (j = i + 1; j < conf->nservers; j++) {
				b = &conf->servers[j];
				for (l = 0; l < b->noverrides; l++) {
					if (b->overrides[l].name == NULL ||
					    strcmp(b->overrides[l].name,
					    a->overrides[k].name) != 0)
						continue;
					return (conf_error_at(ctx,
					    b->overrides[l].at, "server %s: "
					    "name \"%s\" is already given by "
					    "server %s on %s", b->name,
					    b->overrides[l].name, a->name,
					    conf_at_text(ctx, a->overrides[k].at,
					    b->overrides[l].at, where,
					    sizeof where)));
				}
			}
		}
	}
	return (0);
}

const struct tool_override *
conf_override_find(const struct server_conf *srv, const char *tool,
    size_t len)
{
	size_t	i;

	for (i = 0; i < srv->noverrides; i++) {
		if (strlen(srv->overrides[i].tool) == len &&
		    memcmp(srv->overrides[i].tool, tool, len) == 0)
			return (&srv->overrides[i]);
	}
	return (NULL);
}

void
conf_overrides_free(struct server_conf *srv)
{
	size_t	i;

	for (i = 0; i < srv->noverrides; i++) {
		free(srv->overrides[i].tool);
		free(srv->overrides[i].name);
		free(srv->overrides[i].title);
		free(srv->overrides[i].description);
	}
	free(srv->overrides);
	srv->overrides = NULL;
	srv->noverrides = 0;
}

void
conf_print_catalog(const struct conf *conf, FILE *f)
{
	fprintf(f, "state_dir = ");
	conf_print_str(f, conf->state_dir);
	fprintf(f, ";\npinning = \"%s\";\n", pinning_names[conf->pinning]);
	fprintf(f, "discovery = \"%s\";\n",
	    conf_discovery_name(conf->discovery));
}

void
conf_print_server_catalog(const struct server_conf *srv, FILE *f)
{
	const struct tool_override	*o;
	size_t				 i;
	int				 h, n;

	fprintf(f, "    pinning = \"%s\";\n", pinning_names[srv->pinning]);
	if (srv->noverrides == 0)
		return;
	fprintf(f, "    tools = (");
	for (i = 0; i < srv->noverrides; i++) {
		o = &srv->overrides[i];
		fprintf(f, "%s\n      { tool = ", i > 0 ? "," : "");
		conf_print_str(f, o->tool);
		fprintf(f, ";");
		if (o->name != NULL) {
			fprintf(f, " name = ");
			conf_print_str(f, o->name);
			fprintf(f, ";");
		}
		if (o->title != NULL) {
			fprintf(f, " title = ");
			conf_print_str(f, o->title);
			fprintf(f, ";");
		}
		if (o->description != NULL) {
			fprintf(f, " description = ");
			conf_print_str(f, o->description);
			fprintf(f, ";");
		}
		for (h = n = 0; h < CONF_NHINTS; h++) {
			if (o->hints[h] == CONF_HINT_UNSET)
				continue;
			fprintf(f, "%s%s = %s;", n++ == 0 ?
			    " annotations = { " : " ", hint_names[h],
			    o->hints[h] ? "true" : "false");
		}
		if (n > 0)
			fprintf(f, " };");
		if (o->hidden)
			fprintf(f, " hidden = true;");
		fprintf(f, " }");
	}
	fprintf(f, "\n    );\n");
}
