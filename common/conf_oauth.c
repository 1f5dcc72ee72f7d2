/* SPDX-License-Identifier: ISC */
/*
 * The OAuth 2.1 resource server's configuration (oauth = { ... }): the
 * gateway's public resource URL, the authorization servers whose tokens
 * it accepts, the scopes it asks for; a client's oauth = { ... } (which
 * tokens name that client); the checks that tie them together; printing.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libconfig.h>

#include "conf.h"
#include "conf_priv.h"
#include "xmalloc.h"

#define CONF_OAUTH_MAX_CLAIMS	16

/* The signature algorithms by name, as jose.h's bits. */
static const struct {
	const char	*name;
	unsigned int	 bit;
} oauth_algs[] = {
	{ "RS256", JOSE_RS256 }, { "RS384", JOSE_RS384 },
	{ "RS512", JOSE_RS512 }, { "PS256", JOSE_PS256 },
	{ "PS384", JOSE_PS384 }, { "PS512", JOSE_PS512 },
	{ "ES256", JOSE_ES256 }, { "ES384", JOSE_ES384 },
	{ "ES512", JOSE_ES512 }, { "EdDSA", JOSE_EDDSA },
	{ "Ed25519", JOSE_ED25519 }, { "Ed448", JOSE_ED448 },
};
#define NOAUTH_ALGS	(sizeof oauth_algs / sizeof oauth_algs[0])

/* Is the host of an http(s) URL loopback (127.0.0.0/8, ::1, localhost)? */
static int
url_loopback(const char *url)
{
	const char	*h, *end;
	size_t		 len;

	if ((h = strstr(url, "://")) == NULL)
		return (0);
	h += 3;
	if (strncmp(h, "[::1]", 5) == 0)
		return (h[5] == '\0' || h[5] == ':' || h[5] == '/');
	end = h + strcspn(h, ":/?#");
	len = (size_t)(end - h);
	if (len == 9 && strncmp(h, "localhost", 9) == 0)
		return (1);
	return (len >= 9 && strncmp(h, "127.", 4) == 0 &&
	    strspn(h, "0123456789.") >= len);
}

/*
 * Check an issuer's or the resource's URL: https, or http on loopback; a
 * host; no query, fragment, user information or white space.
 */
int
conf_check_oauth_url(struct conf_ctx *ctx, const config_setting_t *s,
    const char *what, const char *url)
{
	const char	*host;

	if (strncmp(url, "https://", 8) == 0)
		host = url + 8;
	else if (strncmp(url, "http://", 7) == 0) {
		if (!url_loopback(url))
			return (conf_error(ctx, s, "%s must be an https:// "
			    "URL (http:// only on loopback)", what));
		host = url + 7;
	} else
		return (conf_error(ctx, s, "%s must be an https:// URL", what));
	if (*host == '\0' || *host == '/' || *host == ':')
		return (conf_error(ctx, s, "%s has no host", what));
	if (strpbrk(url, "?#@ \t\r\n\"\\") != NULL)
		return (conf_error(ctx, s, "%s must have no query, fragment, "
		    "user, white space, '\"' or '\\'", what));
	return (0);
}

/* Is s a scope-token (RFC 6749, section 3.3; no '"' or '\')? */
static int
valid_scope(const char *s)
{
	size_t	i;

	for (i = 0; s[i] != '\0'; i++) {
		if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] > 0x7e ||
		    s[i] == '"' || s[i] == '\\')
			return (0);
	}
	return (i > 0 && i <= 128);
}

/* Read an array of scope tokens. */
static int
get_scopes(struct conf_ctx *ctx, const config_setting_t *s, char ***out)
{
	size_t	i;

	if (conf_get_strv(ctx, s, 0, out) != 0)
		return (-1);
	for (i = 0; (*out)[i] != NULL; i++) {
		if (i >= JOSE_SCOPES_MAX)
			return (conf_error(ctx, s, "%s: more than %d scopes",
			    config_setting_name(s), JOSE_SCOPES_MAX));
		if (!valid_scope((*out)[i]))
			return (conf_error(ctx, config_setting_get_elem(s,
			    (unsigned int)i), "%s: \"%s\" is not a scope (1 to "
			    "128 printable characters, no space, '\"' or '\\')",
			    config_setting_name(s), (*out)[i]));
	}
	if (i == 0) {
		free(*out);
		*out = NULL;
	}
	return (0);
}

/* Read algorithms = [ "RS256", ... ] into bits. */
static int
get_algorithms(struct conf_ctx *ctx, const config_setting_t *s,
    unsigned int *algs)
{
	config_setting_t	*e;
	const char		*name;
	size_t			 k;
	int			 i, n;

	if (!config_setting_is_array(s) && !config_setting_is_list(s))
		return (conf_error(ctx, s, "algorithms must be an array of "
		    "strings"));
	n = config_setting_length(s);
	if (n == 0)
		return (conf_error(ctx, s, "algorithms must not be empty"));
	*algs = 0;
	for (i = 0; i < n; i++) {
		e = config_setting_get_elem(s, (unsigned int)i);
		if ((name = config_setting_get_string(e)) == NULL)
			return (conf_error(ctx, e, "algorithms must contain "
			    "only strings"));
		if (strcmp(name, "none") == 0 || strncmp(name, "HS", 2) == 0)
			return (conf_error(ctx, e, "algorithm \"%s\" is refused: "
			    "an issuer's keys are public, so tokens must be "
			    "signed with a private key", name));
		for (k = 0; k < NOAUTH_ALGS; k++) {
			if (strcmp(oauth_algs[k].name, name) == 0)
				break;
		}
		if (k == NOAUTH_ALGS)
			return (conf_error(ctx, e, "unknown algorithm \"%s\" "
			    "(RS256, RS384, RS512, PS256, PS384, PS512, ES256, "
			    "ES384, ES512, EdDSA, Ed25519 or Ed448)", name));
		*algs |= oauth_algs[k].bit;
	}
	return (0);
}

/*
 * Read a client's group, { client_id = ...; client_secret = ...; auth =
 * ...; } (introspection or login); the secret is required unless public.
 */
static int
parse_client(struct conf_ctx *ctx, const config_setting_t *g,
    const char *what, int public, struct oauth_issuer_client *cc)
{
	config_setting_t	*s;
	const char		*key;
	char			*tmp = NULL;
	int			 i, n;

	if (!config_setting_is_group(g))
		return (conf_error(ctx, g, "%s must be a group { client_id = "
		    "...; client_secret = ...; }", what));
	n = config_setting_length(g);
	for (i = 0; i < n; i++) {
		s = config_setting_get_elem(g, (unsigned int)i);
		key = config_setting_name(s);
		if (strcmp(key, "client_id") == 0) {
			if (conf_get_string(ctx, s, &cc->client_id, 0) != 0)
				return (-1);
		} else if (strcmp(key, "client_secret") == 0) {
			if (conf_get_string(ctx, s, &cc->secret, 0) != 0)
				return (-1);
			if (!conf_secret_reference(cc->secret))
				return (conf_error(ctx, s, "client_secret must "
				    "be a ${file:/path} or ${env:NAME} "
				    "reference, not the secret itself"));
		} else if (strcmp(key, "auth") == 0) {
			if (conf_get_string(ctx, s, &tmp, 0) != 0)
				return (-1);
			if (strcmp(tmp, "client_secret_basic") == 0)
				cc->post = 0;
			else if (strcmp(tmp, "client_secret_post") == 0)
				cc->post = 1;
			else {
				free(tmp);
				return (conf_error(ctx, s, "auth must be "
				    "client_secret_basic or client_secret_post"));
			}
			free(tmp);
			tmp = NULL;
		} else
			return (conf_error(ctx, s, "%s: unknown setting \"%s\" "
			    "(client_id, client_secret or auth)", what, key));
	}
	if (cc->client_id == NULL || (!public && cc->secret == NULL))
		return (conf_error(ctx, g, public ? "%s needs a client_id" :
		    "%s needs a client_id and a client_secret", what));
	return (0);
}

/* Read one issuer's group. */
static int
parse_issuer(struct conf_ctx *ctx, const config_setting_t *g,
    struct oauth_issuer_conf *ic)
{
	config_setting_t	*s;
	const char		*key;
	char			*tmp = NULL;
	int			 i, n;

	memset(ic, 0, sizeof *ic);
	ic->at = conf_where(ctx, g);
	ic->algorithms = CONF_OAUTH_ALGS_DEFAULT;
	ic->typ = JOSE_TYP_LAX;
	ic->refresh = 3600;
	if (!config_setting_is_group(g))
		return (conf_error(ctx, g, "each issuer must be a group "
		    "{ issuer = \"https://...\"; }"));
	n = config_setting_length(g);
	for (i = 0; i < n; i++) {
		s = config_setting_get_elem(g, (unsigned int)i);
		key = config_setting_name(s);
		if (strcmp(key, "issuer") == 0) {
			if (conf_get_string(ctx, s, &ic->issuer, 0) != 0 ||
			    conf_check_oauth_url(ctx, s, "issuer", ic->issuer) != 0)
				return (-1);
		} else if (strcmp(key, "metadata_url") == 0) {
			if (conf_get_string(ctx, s, &ic->metadata_url, 0) != 0 ||
			    conf_check_oauth_url(ctx, s, "metadata_url",
			    ic->metadata_url) != 0)
				return (-1);
		} else if (strcmp(key, "jwks_uri") == 0) {
			if (conf_get_string(ctx, s, &ic->jwks_uri, 0) != 0 ||
			    conf_check_oauth_url(ctx, s, "jwks_uri",
			    ic->jwks_uri) != 0)
				return (-1);
		} else if (strcmp(key, "algorithms") == 0) {
			if (get_algorithms(ctx, s, &ic->algorithms) != 0)
				return (-1);
		} else if (strcmp(key, "typ") == 0) {
			if (conf_get_string(ctx, s, &tmp, 0) != 0)
				return (-1);
			if (strcmp(tmp, "any") == 0)
				ic->typ = JOSE_TYP_LAX;
			else if (strcmp(tmp, "at+jwt") == 0)
				ic->typ = JOSE_TYP_AT_JWT;
			else {
				free(tmp);
				return (conf_error(ctx, s, "typ must be \"any\" "
				    "or \"at+jwt\""));
			}
			free(tmp);
			tmp = NULL;
		} else if (strcmp(key, "ca_file") == 0) {
			if (conf_get_string(ctx, s, &ic->ca_file, 0) != 0)
				return (-1);
			if (ic->ca_file[0] != '/')
				return (conf_error(ctx, s, "ca_file must be an "
				    "absolute path"));
		} else if (strcmp(key, "refresh") == 0) {
			if (conf_get_seconds(ctx, s, 300, 86400,
			    &ic->refresh) != 0)
				return (-1);
		} else if (strcmp(key, "introspection") == 0) {
			if (parse_client(ctx, s, "introspection", 0,
			    &ic->introspection) != 0)
				return (-1);
		} else if (strcmp(key, "login") == 0) {
			if (parse_client(ctx, s, "login", 1, &ic->login) != 0)
				return (-1);
		} else
			return (conf_error(ctx, s, "issuer: unknown setting "
			    "\"%s\"", key));
	}
	if (ic->issuer == NULL)
		return (conf_error(ctx, g, "an issuer group needs issuer = "
		    "\"https://...\""));
	return (0);
}

/* Read issuers = ( { ... }, ... ). */
static int
parse_issuers(struct conf_ctx *ctx, const config_setting_t *list,
    struct oauth_conf *oc)
{
	config_setting_t	*g;
	char			 where[512];
	int			 i, j, n;

	if ((n = conf_list_length(ctx, list, "issuers must be a list: "
	    "issuers = ( { issuer = \"https://...\"; } );",
	    CONF_OAUTH_MAX_ISSUERS, "issuers")) < 0)
		return (-1);
	if (n == 0)
		return (conf_error(ctx, list, "issuers must not be empty"));
	oc->issuers = xcalloc((size_t)n, sizeof *oc->issuers);
	for (i = 0; i < n; i++) {
		g = config_setting_get_elem(list, (unsigned int)i);
		oc->nissuers++;
		if (parse_issuer(ctx, g, &oc->issuers[i]) != 0)
			return (-1);
		for (j = 0; j < i; j++) {
			if (strcmp(oc->issuers[j].issuer,
			    oc->issuers[i].issuer) == 0)
				return (conf_error(ctx, g, "issuer \"%s\" "
				    "already given on %s", oc->issuers[i].issuer,
				    conf_at_text(ctx, oc->issuers[j].at,
				    oc->issuers[i].at, where, sizeof where)));
		}
	}
	return (0);
}

int
conf_parse_oauth(struct conf_ctx *ctx, const config_setting_t *g,
    struct conf *conf)
{
	struct oauth_conf	*oc;
	config_setting_t	*s;
	const char		*key;
	size_t			 len;
	int			 i, n;

	if (!config_setting_is_group(g))
		return (conf_error(ctx, g, "oauth must be a group { resource = "
		    "\"https://...\"; issuers = ( ... ); }"));
	oc = conf->oauth = xcalloc(1, sizeof *oc);
	oc->at = conf_where(ctx, g);
	oc->leeway = 60;
	oc->subject_claim = xstrdup("sub");
	n = config_setting_length(g);
	for (i = 0; i < n; i++) {
		s = config_setting_get_elem(g, (unsigned int)i);
		key = config_setting_name(s);
		if (strcmp(key, "resource") == 0) {
			if (conf_get_string(ctx, s, &oc->resource, 0) != 0 ||
			    conf_check_oauth_url(ctx, s, "resource",
			    oc->resource) != 0)
				return (-1);
			len = strlen(oc->resource);
			while (len > 0 && oc->resource[len - 1] == '/')
				oc->resource[--len] = '\0';
			if (strlen(oc->resource) > 1024)
				return (conf_error(ctx, s, "resource is longer "
				    "than 1024 characters"));
		} else if (strcmp(key, "resource_name") == 0) {
			if (conf_get_string(ctx, s, &oc->resource_name, 0) != 0)
				return (-1);
		} else if (strcmp(key, "audiences") == 0) {
			if (conf_get_strv(ctx, s, 0, &oc->audiences) != 0)
				return (-1);
		} else if (strcmp(key, "scopes_supported") == 0) {
			if (get_scopes(ctx, s, &oc->scopes_supported) != 0)
				return (-1);
		} else if (strcmp(key, "scopes") == 0) {
			if (get_scopes(ctx, s, &oc->scopes) != 0)
				return (-1);
		} else if (strcmp(key, "leeway") == 0) {
			if (conf_get_seconds(ctx, s, 0, CONF_OAUTH_MAX_LEEWAY,
			    &oc->leeway) != 0)
				return (-1);
		} else if (strcmp(key, "subject_claim") == 0) {
			free(oc->subject_claim);
			oc->subject_claim = NULL;
			if (conf_get_string(ctx, s, &oc->subject_claim, 0) != 0)
				return (-1);
		} else if (strcmp(key, "default_client") == 0) {
			if (conf_get_string(ctx, s, &oc->default_client, 0) != 0)
				return (-1);
		} else if (strcmp(key, "issuers") == 0) {
			if (parse_issuers(ctx, s, oc) != 0)
				return (-1);
		} else
			return (conf_error(ctx, s, "oauth: unknown setting "
			    "\"%s\"", key));
	}
	if (oc->resource == NULL)
		return (conf_error(ctx, g, "oauth needs resource = \"https://"
		    "...\", the gateway's URL as its clients see it"));
	if (oc->nissuers == 0)
		return (conf_error(ctx, g, "oauth needs issuers = ( { issuer = "
		    "\"https://...\"; } )"));
	return (0);
}

/* Read claims = { name = "value"; ... }. */
static int
parse_claims(struct conf_ctx *ctx, const config_setting_t *g,
    struct oauth_match *m)
{
	config_setting_t	*s;
	const char		*v;
	int			 i, n;

	if (!config_setting_is_group(g))
		return (conf_error(ctx, g, "claims must be a group "
		    "{ name = \"value\"; ... }"));
	n = config_setting_length(g);
	if (n > CONF_OAUTH_MAX_CLAIMS)
		return (conf_error(ctx, g, "more than %d claims",
		    CONF_OAUTH_MAX_CLAIMS));
	m->claim_names = xcalloc((size_t)n + 1, sizeof *m->claim_names);
	m->claim_values = xcalloc((size_t)n + 1, sizeof *m->claim_values);
	for (i = 0; i < n; i++) {
		s = config_setting_get_elem(g, (unsigned int)i);
		if ((v = config_setting_get_string(s)) == NULL ||
		    !conf_valid_utf8(v))
			return (conf_error(ctx, s, "claims: %s must be a string",
			    config_setting_name(s)));
		m->claim_names[i] = xstrdup(config_setting_name(s));
		m->claim_values[i] = xstrdup(v);
	}
	return (0);
}

int
conf_parse_client_oauth(struct conf_ctx *ctx, const config_setting_t *g,
    struct oauth_match **out)
{
	struct oauth_match	*m;
	config_setting_t	*s;
	const char		*key;
	int			 i, n;

	if (!config_setting_is_group(g))
		return (conf_error(ctx, g, "a client's oauth must be a group "
		    "{ subject = ...; scopes = [ ... ]; claims = { ... }; }"));
	m = *out = xcalloc(1, sizeof *m);
	m->at = conf_where(ctx, g);
	n = config_setting_length(g);
	for (i = 0; i < n; i++) {
		s = config_setting_get_elem(g, (unsigned int)i);
		key = config_setting_name(s);
		if (strcmp(key, "issuer") == 0) {
			if (conf_get_string(ctx, s, &m->issuer, 0) != 0)
				return (-1);
		} else if (strcmp(key, "subject") == 0) {
			if (conf_get_string(ctx, s, &m->subject, 0) != 0)
				return (-1);
		} else if (strcmp(key, "scopes") == 0) {
			if (get_scopes(ctx, s, &m->scopes) != 0)
				return (-1);
		} else if (strcmp(key, "claims") == 0) {
			if (parse_claims(ctx, s, m) != 0)
				return (-1);
		} else
			return (conf_error(ctx, s, "client oauth: unknown "
			    "setting \"%s\" (issuer, subject, scopes or "
			    "claims)", key));
	}
	if (m->subject == NULL && m->scopes == NULL &&
	    (m->claim_names == NULL || m->claim_names[0] == NULL))
		return (conf_error(ctx, g, "a client's oauth needs a subject, "
		    "scopes or claims to match (else every token would be "
		    "that client)"));
	return (0);
}

int
conf_get_server_scopes(struct conf_ctx *ctx, const config_setting_t *s,
    char ***out)
{
	return (get_scopes(ctx, s, out));
}

int
conf_check_oauth(struct conf_ctx *ctx, const struct conf *conf)
{
	const struct oauth_conf	*oc = conf->oauth;
	size_t			 i;

	for (i = 0; i < conf->nclients; i++) {
		if (conf->clients[i].oauth == NULL)
			continue;
		if (oc == NULL)
			return (conf_error_at(ctx, conf->clients[i].oauth->at,
			    "client %s: oauth needs the global oauth group",
			    conf->clients[i].name));
		if (conf->clients[i].oauth->issuer != NULL &&
		    conf_oauth_issuer(oc, conf->clients[i].oauth->issuer) ==
		    NULL)
			return (conf_error_at(ctx, conf->clients[i].oauth->at,
			    "client %s: issuer \"%s\" is not one of oauth's "
			    "issuers", conf->clients[i].name,
			    conf->clients[i].oauth->issuer));
	}
	for (i = 0; i < conf->nservers; i++) {
		if (conf->servers[i].scopes != NULL && oc == NULL)
			return (conf_error_at(ctx, conf->servers[i].at,
			    "server %s: scopes need the global oauth group",
			    conf->servers[i].name));
	}
	if (oc != NULL && oc->default_client != NULL &&
	    conf_client_find(conf, oc->default_client) == NULL)
		return (conf_error_at(ctx, oc->at, "oauth: default_client "
		    "\"%s\" is not a client", oc->default_client));
	return (0);
}

const struct oauth_issuer_conf *
conf_oauth_issuer(const struct oauth_conf *oc, const char *issuer)
{
	size_t	i;

	if (oc == NULL)
		return (NULL);
	for (i = 0; i < oc->nissuers; i++) {
		if (strcmp(oc->issuers[i].issuer, issuer) == 0)
			return (&oc->issuers[i]);
	}
	return (NULL);
}

const struct client_conf *
conf_client_find(const struct conf *conf, const char *name)
{
	size_t	i;

	for (i = 0; i < conf->nclients; i++) {
		if (strcmp(conf->clients[i].name, name) == 0)
			return (&conf->clients[i]);
	}
	return (NULL);
}

void
conf_oauth_match_free(struct oauth_match *m)
{
	if (m == NULL)
		return;
	free(m->issuer);
	free(m->subject);
	conf_strv_free(m->scopes);
	conf_strv_free(m->claim_names);
	conf_strv_free(m->claim_values);
	free(m);
}

void
conf_oauth_free(struct oauth_conf *oc)
{
	struct oauth_issuer_conf	*ic;
	size_t				 i;

	if (oc == NULL)
		return;
	for (i = 0; i < oc->nissuers; i++) {
		ic = &oc->issuers[i];
		free(ic->issuer);
		free(ic->metadata_url);
		free(ic->jwks_uri);
		free(ic->ca_file);
		free(ic->introspection.client_id);
		free(ic->introspection.secret);
		free(ic->login.client_id);
		free(ic->login.secret);
	}
	free(oc->issuers);
	free(oc->resource);
	free(oc->resource_name);
	conf_strv_free(oc->audiences);
	conf_strv_free(oc->scopes_supported);
	conf_strv_free(oc->scopes);
	free(oc->subject_claim);
	free(oc->default_client);
	free(oc);
}

/* Print algorithm bits as names. */
static void
print_algorithms(FILE *f, unsigned int algs)
{
	size_t	k;
	int	first = 1;

	fputs("[", f);
	for (k = 0; k < NOAUTH_ALGS; k++) {
		if ((algs & oauth_algs[k].bit) == 0)
			continue;
		fprintf(f, "%s\"%s\"", first ? " " : ", ", oauth_algs[k].name);
		first = 0;
	}
	fputs(" ]", f);
}

/* Print "key = value;" for a string that may be NULL. */
static void
print_opt(FILE *f, const char *indent, const char *key, const char *v)
{
	if (v == NULL)
		return;
	fprintf(f, "%s%s = ", indent, key);
	conf_print_string(f, v);
	fputs(";\n", f);
}

/* Print "key = [ ... ];" for a vector that may be NULL. */
static void
print_optv(FILE *f, const char *indent, const char *key, char *const *v)
{
	if (v == NULL)
		return;
	fprintf(f, "%s%s = ", indent, key);
	conf_print_strv(f, v);
	fputs(";\n", f);
}

/* Print a client's group, if there is one. */
static void
print_client(FILE *f, const char *what,
    const struct oauth_issuer_client *cc)
{
	if (cc->client_id == NULL)
		return;
	fprintf(f, "\t\t%s = {\n", what);
	print_opt(f, "\t\t\t", "client_id", cc->client_id);
	if (cc->secret != NULL) {
		/* A reference, never the secret (checked). */
		print_opt(f, "\t\t\t", "client_secret", cc->secret);
		fprintf(f, "\t\t\tauth = \"%s\";\n", cc->post ?
		    "client_secret_post" : "client_secret_basic");
	}
	fputs("\t\t};\n", f);
}

void
conf_oauth_print(FILE *f, const struct oauth_conf *oc)
{
	const struct oauth_issuer_conf	*ic;
	size_t				 i;

	if (oc == NULL)
		return;
	fputs("oauth = {\n", f);
	print_opt(f, "\t", "resource", oc->resource);
	print_opt(f, "\t", "resource_name", oc->resource_name);
	print_optv(f, "\t", "audiences", oc->audiences);
	print_optv(f, "\t", "scopes_supported", oc->scopes_supported);
	print_optv(f, "\t", "scopes", oc->scopes);
	fprintf(f, "\tleeway = %u;\n", oc->leeway);
	print_opt(f, "\t", "subject_claim", oc->subject_claim);
	print_opt(f, "\t", "default_client", oc->default_client);
	fputs("\tissuers = (", f);
	for (i = 0; i < oc->nissuers; i++) {
		ic = &oc->issuers[i];
		fputs(i > 0 ? ", {\n" : " {\n", f);
		print_opt(f, "\t\t", "issuer", ic->issuer);
		print_opt(f, "\t\t", "metadata_url", ic->metadata_url);
		print_opt(f, "\t\t", "jwks_uri", ic->jwks_uri);
		fputs("\t\talgorithms = ", f);
		print_algorithms(f, ic->algorithms);
		fprintf(f, ";\n\t\ttyp = \"%s\";\n",
		    ic->typ == JOSE_TYP_AT_JWT ? "at+jwt" : "any");
		print_opt(f, "\t\t", "ca_file", ic->ca_file);
		fprintf(f, "\t\trefresh = %u;\n", ic->refresh);
		print_client(f, "introspection", &ic->introspection);
		print_client(f, "login", &ic->login);
		fputs("\t}", f);
	}
	fputs(" );\n};\n", f);
}

void
conf_oauth_match_print(FILE *f, const char *indent,
    const struct oauth_match *m)
{
	size_t	i;

	if (m == NULL)
		return;
	fprintf(f, "%soauth = { ", indent);
	if (m->issuer != NULL) {
		fputs("issuer = ", f);
		conf_print_string(f, m->issuer);
		fputs("; ", f);
	}
	if (m->subject != NULL) {
		fputs("subject = ", f);
		conf_print_string(f, m->subject);
		fputs("; ", f);
	}
	if (m->scopes != NULL) {
		fputs("scopes = ", f);
		conf_print_strv(f, m->scopes);
		fputs("; ", f);
	}
	if (m->claim_names != NULL && m->claim_names[0] != NULL) {
		fputs("claims = { ", f);
		for (i = 0; m->claim_names[i] != NULL; i++) {
			fprintf(f, "%s = ", m->claim_names[i]);
			conf_print_string(f, m->claim_values[i]);
			fputs("; ", f);
		}
		fputs("}; ", f);
	}
	fputs("};\n", f);
}
