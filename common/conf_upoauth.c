/* SPDX-License-Identifier: ISC */
/*
 * An upstream's oauth = { ... }: the gateway as an OAuth client of a
 * remote upstream (issue 23): its pre-registered client, the secret by
 * reference, the scopes to ask for, the grant.  Read, printed, sent to
 * the worker as JSON, compared, freed.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <libconfig.h>

#include "conf.h"
#include "conf_priv.h"
#include "xmalloc.h"

const char *const conf_upoauth_grant_names[] = {
	"authorization_code", "client_credentials"
};

static const char *const identity_names[] = {
	"gateway", "per-user"
};

int
conf_parse_upoauth(struct conf_ctx *ctx, const config_setting_t *g,
    struct upoauth_conf **out)
{
	struct upoauth_conf	*o;
	config_setting_t	*s;
	const char		*key;
	char			*grant;
	int			 i, n, k;

	if (!config_setting_is_group(g))
		return (conf_error(ctx, g, "an upstream's oauth must be a group "
		    "{ client_id = ...; client_secret = ...; issuer = ...; "
		    "scopes = [ ... ]; grant = ...; identity = ...; }"));
	o = *out = xcalloc(1, sizeof *o);
	o->at = conf_where(ctx, g);
	n = config_setting_length(g);
	for (i = 0; i < n; i++) {
		s = config_setting_get_elem(g, (unsigned int)i);
		key = config_setting_name(s);
		if (strcmp(key, "client_id") == 0) {
			if (conf_get_string(ctx, s, &o->client_id, 0) != 0)
				return (-1);
		} else if (strcmp(key, "client_secret") == 0) {
			if (conf_get_string(ctx, s, &o->client_secret, 0) != 0)
				return (-1);
			if (!conf_secret_reference(o->client_secret))
				return (conf_error(ctx, s, "client_secret must "
				    "be a ${file:/path} or ${env:NAME} "
				    "reference, not the secret itself"));
		} else if (strcmp(key, "issuer") == 0) {
			if (conf_get_string(ctx, s, &o->issuer, 0) != 0 ||
			    conf_check_oauth_url(ctx, s, "oauth: issuer",
			    o->issuer) != 0)
				return (-1);
		} else if (strcmp(key, "scopes") == 0) {
			if (conf_get_server_scopes(ctx, s, &o->scopes) != 0)
				return (-1);
		} else if (strcmp(key, "grant") == 0) {
			grant = NULL;
			if (conf_get_string(ctx, s, &grant, 0) != 0)
				return (-1);
			k = conf_lookup_name(conf_upoauth_grant_names, 2, grant);
			free(grant);
			if (k < 0)
				return (conf_error(ctx, s, "oauth: grant must be "
				    "\"authorization_code\" or "
				    "\"client_credentials\""));
			o->grant = (enum upoauth_grant)k;
		} else if (strcmp(key, "identity") == 0) {
			grant = NULL;
			if (conf_get_string(ctx, s, &grant, 0) != 0)
				return (-1);
			k = conf_lookup_name(identity_names, 2, grant);
			free(grant);
			if (k < 0)
				return (conf_error(ctx, s, "oauth: identity must "
				    "be \"gateway\" or \"per-user\""));
			o->identity = (enum upoauth_identity)k;
		} else
			return (conf_error(ctx, s, "upstream oauth: unknown "
			    "setting \"%s\" (client_id, client_secret, issuer, "
			    "scopes, grant or identity)", key));
	}
	if (o->client_secret != NULL && o->client_id == NULL)
		return (conf_error(ctx, g, "oauth: a client_secret needs its "
		    "client_id"));
	if (o->grant == UPOAUTH_CLIENT_CREDENTIALS && o->client_secret == NULL)
		return (conf_error(ctx, g, "oauth: client_credentials needs "
		    "client_id and client_secret"));
	if (o->grant == UPOAUTH_CLIENT_CREDENTIALS &&
	    o->identity == UPOAUTH_PER_USER)
		return (conf_error(ctx, g, "oauth: identity \"per-user\" is "
		    "for logins, not client_credentials"));
	return (0);
}

/*
 * A per-user upstream needs clients the gateway can tell apart: static
 * tokens, named clients or OAuth.
 */
int
conf_check_upoauth(struct conf_ctx *ctx, const struct conf *conf)
{
	size_t	i;

	for (i = 0; i < conf->nservers; i++) {
		if (conf->servers[i].oauth == NULL ||
		    conf->servers[i].oauth->identity != UPOAUTH_PER_USER)
			continue;
		if (conf->auth_tokens == NULL && conf->nclients == 0 &&
		    conf->oauth == NULL)
			return (conf_error_at(ctx,
			    conf->servers[i].oauth->at, "server %s: "
			    "oauth.identity per-user needs authenticated "
			    "clients (auth_tokens, clients or oauth)",
			    conf->servers[i].name));
	}
	return (0);
}

json_t *
conf_upoauth_to_json(const struct upoauth_conf *o)
{
	json_t	*j;

	j = json_pack("{s:s, s:s}", "grant", conf_upoauth_grant_names[o->grant],
	    "identity", identity_names[o->identity]);
	if (o->client_id != NULL)
		json_object_set_new(j, "client_id", json_string(o->client_id));
	if (o->client_secret != NULL)
		json_object_set_new(j, "client_secret",
		    json_string(o->client_secret));
	if (o->issuer != NULL)
		json_object_set_new(j, "issuer", json_string(o->issuer));
	if (o->scopes != NULL) {
		json_t	*a = json_array();
		size_t	 i;

		for (i = 0; o->scopes[i] != NULL; i++)
			json_array_append_new(a, json_string(o->scopes[i]));
		json_object_set_new(j, "scopes", a);
	}
	return (j);
}

struct upoauth_conf *
conf_upoauth_from_json(const json_t *j)
{
	struct upoauth_conf	*o;
	json_t			*v;
	size_t			 i, n;
	int			 k;

	if (!json_is_object(j))
		return (NULL);
	v = json_object_get(j, "grant");
	if ((k = conf_lookup_name(conf_upoauth_grant_names, 2,
	    json_is_string(v) ? json_string_value(v) : "")) < 0)
		return (NULL);
	o = xcalloc(1, sizeof *o);
	o->grant = (enum upoauth_grant)k;
	v = json_object_get(j, "identity");
	if (json_is_string(v) && (k = conf_lookup_name(identity_names, 2,
	    json_string_value(v))) > 0)
		o->identity = (enum upoauth_identity)k;
	if (json_is_string(v = json_object_get(j, "client_id")))
		o->client_id = xstrdup(json_string_value(v));
	if (json_is_string(v = json_object_get(j, "client_secret")))
		o->client_secret = xstrdup(json_string_value(v));
	if (json_is_string(v = json_object_get(j, "issuer")))
		o->issuer = xstrdup(json_string_value(v));
	if (json_is_array(v = json_object_get(j, "scopes"))) {
		n = json_array_size(v);
		o->scopes = xcalloc(n + 1, sizeof *o->scopes);
		for (i = 0; i < n; i++) {
			if (!json_is_string(json_array_get(v, i))) {
				conf_upoauth_free(o);
				return (NULL);
			}
			o->scopes[i] = xstrdup(json_string_value(
			    json_array_get(v, i)));
		}
	}
	return (o);
}

static int
str_eq(const char *a, const char *b)
{
	return (a == NULL ? b == NULL : b != NULL && strcmp(a, b) == 0);
}

int
conf_upoauth_equal(const struct upoauth_conf *a, const struct upoauth_conf *b)
{
	if (a == NULL || b == NULL)
		return (a == b);
	return (a->grant == b->grant && a->identity == b->identity &&
	    str_eq(a->client_id, b->client_id) &&
	    str_eq(a->client_secret, b->client_secret) &&
	    str_eq(a->issuer, b->issuer) &&
	    conf_strv_equal(a->scopes, b->scopes));
}

void
conf_upoauth_print(FILE *f, const struct upoauth_conf *o)
{
	if (o == NULL)
		return;
	fprintf(f, "    oauth = {\n      grant = \"%s\";\n",
	    conf_upoauth_grant_names[o->grant]);
	if (o->identity != UPOAUTH_GATEWAY)
		fprintf(f, "      identity = \"%s\";\n",
		    identity_names[o->identity]);
	if (o->client_id != NULL) {
		fprintf(f, "      client_id = ");
		conf_print_string(f, o->client_id);
		fprintf(f, ";\n");
	}
	if (o->client_secret != NULL) {
		/* As written: a reference, or the secret itself (-nv shows config). */
		fprintf(f, "      client_secret = ");
		conf_print_string(f, o->client_secret);
		fprintf(f, ";\n");
	}
	if (o->issuer != NULL) {
		fprintf(f, "      issuer = ");
		conf_print_string(f, o->issuer);
		fprintf(f, ";\n");
	}
	if (o->scopes != NULL) {
		fprintf(f, "      scopes = ");
		conf_print_strv(f, o->scopes);
		fprintf(f, ";\n");
	}
	fprintf(f, "    };\n");
}

void
conf_upoauth_free(struct upoauth_conf *o)
{
	if (o == NULL)
		return;
	free(o->client_id);
	if (o->client_secret != NULL) {
		explicit_bzero(o->client_secret, strlen(o->client_secret));
		free(o->client_secret);
	}
	free(o->issuer);
	conf_strv_free(o->scopes);
	free(o);
}

/* The path of an http(s) URL ("/" when it has none). */
const char *
conf_url_path(const char *url)
{
	const char	*p = strstr(url, "://");
	const char	*slash;

	if (p == NULL || (slash = strchr(p + 3, '/')) == NULL)
		return ("/");
	return (slash);
}

/* Is a path one the gateway's listener serves for something else?
 * ws_path, known only once the file is read: conf_check_paths. */
static int
reserved_path(const char *p)
{
	return (conf_own_path(p, strcspn(p, "?#")) != NULL);
}

int
conf_parse_oauth_client(struct conf_ctx *ctx, const config_setting_t *g,
    struct conf *conf)
{
	struct oauth_client_conf *o;
	config_setting_t	*s;
	const char		*key;
	int			 i, n;

	if (!config_setting_is_group(g))
		return (conf_error(ctx, g, "oauth_client must be a group "
		    "{ redirect_uri = ...; client_name = ...; "
		    "client_metadata_url = ...; }"));
	o = conf->oauth_client = xcalloc(1, sizeof *o);
	o->at = conf_where(ctx, g);
	n = config_setting_length(g);
	for (i = 0; i < n; i++) {
		s = config_setting_get_elem(g, (unsigned int)i);
		key = config_setting_name(s);
		if (strcmp(key, "redirect_uri") == 0) {
			if (conf_get_string(ctx, s, &o->redirect_uri, 0) != 0 ||
			    conf_check_oauth_url(ctx, s, "redirect_uri",
			    o->redirect_uri) != 0)
				return (-1);
			if (strcmp(conf_url_path(o->redirect_uri), "/") == 0)
				return (conf_error(ctx, s, "redirect_uri needs "
				    "a path (the gateway serves it)"));
			if (reserved_path(conf_url_path(o->redirect_uri)))
				return (conf_error(ctx, s, "redirect_uri: the "
				    "gateway serves %s already",
				    conf_url_path(o->redirect_uri)));
		} else if (strcmp(key, "client_name") == 0) {
			if (conf_get_string(ctx, s, &o->client_name, 0) != 0)
				return (-1);
			if (strlen(o->client_name) > 128)
				return (conf_error(ctx, s, "client_name is over "
				    "128 bytes"));
		} else if (strcmp(key, "client_metadata_url") == 0) {
			if (conf_get_string(ctx, s, &o->client_metadata_url,
			    0) != 0 || conf_check_oauth_url(ctx, s,
			    "client_metadata_url", o->client_metadata_url) != 0)
				return (-1);
			/* A Client ID Metadata Document's URL: https, with
			 * a path (draft-ietf-oauth-client-id-metadata-document). */
			if (strncmp(o->client_metadata_url, "https://", 8) != 0 ||
			    strcmp(conf_url_path(o->client_metadata_url), "/") == 0)
				return (conf_error(ctx, s, "client_metadata_url "
				    "must be an https:// URL with a path"));
			if (reserved_path(conf_url_path(o->client_metadata_url)))
				return (conf_error(ctx, s, "client_metadata_url: "
				    "the gateway serves %s already",
				    conf_url_path(o->client_metadata_url)));
		} else
			return (conf_error(ctx, s, "oauth_client: unknown "
			    "setting \"%s\" (redirect_uri, client_name or "
			    "client_metadata_url)", key));
	}
	if (o->redirect_uri != NULL && o->client_metadata_url != NULL &&
	    strcmp(conf_url_path(o->redirect_uri),
	    conf_url_path(o->client_metadata_url)) == 0)
		return (conf_error(ctx, g, "oauth_client: redirect_uri and "
		    "client_metadata_url must have different paths"));
	return (0);
}

void
conf_oauth_client_print(FILE *f, const struct oauth_client_conf *o)
{
	if (o == NULL)
		return;
	fprintf(f, "oauth_client = {\n");
	if (o->redirect_uri != NULL) {
		fprintf(f, "  redirect_uri = ");
		conf_print_string(f, o->redirect_uri);
		fprintf(f, ";\n");
	}
	if (o->client_name != NULL) {
		fprintf(f, "  client_name = ");
		conf_print_string(f, o->client_name);
		fprintf(f, ";\n");
	}
	if (o->client_metadata_url != NULL) {
		fprintf(f, "  client_metadata_url = ");
		conf_print_string(f, o->client_metadata_url);
		fprintf(f, ";\n");
	}
	fprintf(f, "};\n");
}

void
conf_oauth_client_free(struct oauth_client_conf *o)
{
	if (o == NULL)
		return;
	free(o->redirect_uri);
	free(o->client_name);
	free(o->client_metadata_url);
	free(o);
}
