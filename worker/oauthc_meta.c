/* SPDX-License-Identifier: ISC */
/*
 * What an OAuth client reads from an upstream and its authorization
 * server (oauthc.h): the 401's challenge, the protected resource
 * metadata, the authorization server's metadata, a token response.  URLs
 * are read with libcurl's parser (curl_url), as mcp-idp reads them.
 */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>
#include <openssl/crypto.h>

#include "idp.h"
#include "log.h"
#include "oauthc.h"
#include "secret.h"
#include "xmalloc.h"

#define WK_PRM		"/.well-known/oauth-protected-resource"

/* Is c a tchar (RFC 9110 section 5.6.2)? */
static int
tchar(int c)
{
	return (isalnum(c) || (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) !=
	    NULL));
}

/* Is c a token68 character, '=' aside (RFC 9110 section 11.2)? */
static int
t68char(int c)
{
	return (isalnum(c) || (c != '\0' && strchr("-._~+/", c) != NULL));
}

/* Skip spaces and tabs. */
static size_t
ows(const char *p, size_t i, size_t len)
{
	while (i < len && (p[i] == ' ' || p[i] == '\t'))
		i++;
	return (i);
}

/* Skip a token; its end. */
static size_t
token_end(const char *p, size_t i, size_t len)
{
	while (i < len && tchar((unsigned char)p[i]))
		i++;
	return (i);
}

/*
 * Read a quoted string at p[*i] == '"' into out (new, unescaped), or a
 * token.  0, or -1 if malformed, over OAUTHC_PARAM_MAX or holding a
 * control character.
 */
static int
param_value(const char *p, size_t *i, size_t len, char **out)
{
	size_t	 j = *i, n = 0, e;
	char	*v;

	if (j == len)
		return (-1);
	if (p[j] != '"') {
		e = token_end(p, j, len);
		if (e == j || e - j > OAUTHC_PARAM_MAX)
			return (-1);
		*out = xstrndup(p + j, e - j);
		*i = e;
		return (0);
	}
	v = xmalloc(OAUTHC_PARAM_MAX + 1);
	for (j++; j < len && p[j] != '"'; j++) {
		if (p[j] == '\\' && ++j == len)
			break;
		if ((unsigned char)p[j] < 0x20 || p[j] == 0x7f ||
		    n == OAUTHC_PARAM_MAX) {
			free(v);
			return (-1);
		}
		v[n++] = p[j];
	}
	if (j == len) {
		free(v);
		return (-1);
	}
	v[n] = '\0';
	*out = v;
	*i = j + 1;
	return (0);
}

/* After a ',' at p[i]: does an auth-param (token BWS '=') follow? */
static int
param_follows(const char *p, size_t i, size_t len)
{
	size_t	e;

	while (i < len && (p[i] == ',' || p[i] == ' ' || p[i] == '\t'))
		i++;
	e = token_end(p, i, len);
	if (e == i)
		return (0);
	e = ows(p, e, len);
	return (e < len && p[e] == '=');
}

/* Keep a Bearer parameter we read; -1 if repeated. */
static int
keep_param(struct oauthc_challenge *c, const char *name, size_t nlen,
    char *v)
{
	char	**slot = NULL;

	if (nlen == 5 && strncasecmp(name, "error", 5) == 0)
		slot = &c->error;
	else if (nlen == 5 && strncasecmp(name, "scope", 5) == 0)
		slot = &c->scope;
	else if (nlen == 17 && strncasecmp(name, "resource_metadata", 17) == 0)
		slot = &c->resource_metadata;
	if (slot == NULL) {
		free(v);
		return (0);
	}
	if (*slot != NULL) {
		free(v);
		return (-1);
	}
	*slot = v;
	return (0);
}

/*
 * Parse one challenge's parameters from p[*i] (after its scheme): a
 * token68, or auth-params up to the next challenge.  Kept in c if
 * bearer.  0, or -1 if malformed.
 */
static int
challenge_params(const char *p, size_t *i, size_t len, int bearer,
    struct oauthc_challenge *c)
{
	size_t	 j = *i, e, name;
	char	*v;

	if (j < len && p[j] != ' ' && p[j] != '\t' && p[j] != ',')
		return (-1);
	j = ows(p, j, len);
	/* A token68: its characters, '='s, then the end or a ','. */
	e = j;
	while (e < len && t68char((unsigned char)p[e]))
		e++;
	if (e > j) {
		while (e < len && p[e] == '=')
			e++;
		if (ows(p, e, len) == len || p[ows(p, e, len)] == ',') {
			*i = ows(p, e, len);
			return (0);
		}
	}
	for (;;) {
		if (j == len || p[j] == ',') {
			if (j == len || !param_follows(p, j, len)) {
				*i = j;
				return (0);
			}
			while (p[j] == ',' || p[j] == ' ' || p[j] == '\t')
				j++;
		}
		name = j;
		if ((e = token_end(p, j, len)) == j)
			return (-1);
		j = ows(p, e, len);
		if (j == len || p[j] != '=')
			return (-1);
		j = ows(p, j + 1, len);
		if (param_value(p, &j, len, &v) == -1)
			return (-1);
		if (!bearer)
			free(v);
		else if (keep_param(c, p + name, e - name, v) == -1)
			return (-1);
		j = ows(p, j, len);
		if (j < len && p[j] != ',')
			return (-1);
	}
}

int
oauthc_challenge_parse(const char *p, size_t len, struct oauthc_challenge *c)
{
	struct oauthc_challenge	 tmp;
	size_t			 i = 0, e;
	int			 bearer, found = 0;

	memset(c, 0, sizeof *c);
	if (len > OAUTHC_CHALLENGE_MAX)
		return (-1);
	for (;;) {
		while (i < len && (p[i] == ',' || p[i] == ' ' || p[i] == '\t'))
			i++;
		if (i == len)
			break;
		if ((e = token_end(p, i, len)) == i)
			goto bad;
		bearer = !found && e - i == 6 && strncasecmp(p + i, "Bearer",
		    6) == 0;
		i = e;
		memset(&tmp, 0, sizeof tmp);
		if (challenge_params(p, &i, len, bearer, &tmp) == -1) {
			oauthc_challenge_clear(&tmp);
			goto bad;
		}
		if (bearer) {
			*c = tmp;
			found = 1;
		}
	}
	return (found);
bad:
	oauthc_challenge_clear(c);
	return (-1);
}

void
oauthc_challenge_clear(struct oauthc_challenge *c)
{
	free(c->error);
	free(c->scope);
	free(c->resource_metadata);
	memset(c, 0, sizeof *c);
}

/* Copy text for a message: printable ASCII but '"' and '\', cut. */
static void
safe_text(const char *s, char *out, size_t len)
{
	size_t	i, n = 0;

	for (i = 0; s[i] != '\0' && n + 4 < len && i < 96; i++) {
		if (s[i] >= 0x20 && s[i] < 0x7f && s[i] != '"' && s[i] != '\\')
			out[n++] = s[i];
		else
			out[n++] = '?';
	}
	if (s[i] != '\0' && n + 4 <= len) {
		memcpy(out + n, "...", 3);
		n += 3;
	}
	out[n] = '\0';
}

/* The parts of a URL that say what it names; 0, or -1 if not a URL. */
struct url_parts {
	char	*scheme, *host, *port, *path, *query, *fragment;
};

static void
parts_free(struct url_parts *u)
{
	curl_free(u->scheme);
	curl_free(u->host);
	curl_free(u->port);
	curl_free(u->path);
	curl_free(u->query);
	curl_free(u->fragment);
	memset(u, 0, sizeof *u);
}

static int
parts_get(const char *url, struct url_parts *out)
{
	CURLU	*u;
	int	 rc = -1;

	memset(out, 0, sizeof *out);
	if (strlen(url) > IDP_URL_MAX)
		return (-1);
	if ((u = curl_url()) == NULL)
		fatalx("curl_url");
	/* A WebSocket upstream's URL too, its port as http's (RFC 6455). */
	if (curl_url_set(u, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME) ==
	    CURLUE_OK &&
	    curl_url_get(u, CURLUPART_SCHEME, &out->scheme, 0) == CURLUE_OK &&
	    (strcmp(out->scheme, "ws") != 0 || curl_url_set(u,
	    CURLUPART_SCHEME, "http", 0) == CURLUE_OK) &&
	    (strcmp(out->scheme, "wss") != 0 || curl_url_set(u,
	    CURLUPART_SCHEME, "https", 0) == CURLUE_OK) &&
	    curl_url_get(u, CURLUPART_HOST, &out->host, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_PORT, &out->port,
	    CURLU_DEFAULT_PORT) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_PATH, &out->path, 0) == CURLUE_OK) {
		curl_url_get(u, CURLUPART_QUERY, &out->query, 0);
		curl_url_get(u, CURLUPART_FRAGMENT, &out->fragment, 0);
		rc = 0;
	}
	curl_url_cleanup(u);
	if (rc == -1)
		parts_free(out);
	return (rc);
}

/* Is a path equal to another, one trailing '/' aside? */
static int
path_equal(const char *a, const char *b)
{
	size_t	la = strlen(a), lb = strlen(b);

	if (la > 0 && a[la - 1] == '/')
		la--;
	if (lb > 0 && b[lb - 1] == '/')
		lb--;
	return (la == lb && memcmp(a, b, la) == 0);
}

int
oauthc_same_origin(const char *a, const char *b)
{
	struct url_parts	ua, ub;
	int			same = 0;

	if (parts_get(a, &ua) == -1)
		return (0);
	if (parts_get(b, &ub) == 0) {
		same = strcasecmp(ua.scheme, ub.scheme) == 0 &&
		    strcasecmp(ua.host, ub.host) == 0 &&
		    strcmp(ua.port, ub.port) == 0;
		parts_free(&ub);
	}
	parts_free(&ua);
	return (same);
}

int
oauthc_resource_match(const char *resource, const char *url)
{
	struct url_parts	ur, uu;
	int			same = 0;

	if (parts_get(resource, &ur) == -1)
		return (0);
	if (parts_get(url, &uu) == 0) {
		same = ur.fragment == NULL &&
		    strcasecmp(ur.scheme, uu.scheme) == 0 &&
		    strcasecmp(ur.host, uu.host) == 0 &&
		    strcmp(ur.port, uu.port) == 0 &&
		    path_equal(ur.path, uu.path) &&
		    (ur.query == NULL) == (uu.query == NULL) &&
		    (ur.query == NULL || strcmp(ur.query, uu.query) == 0);
		parts_free(&uu);
	}
	parts_free(&ur);
	return (same);
}

int
oauthc_resource_covers(const char *resource, const char *url)
{
	struct url_parts	ur, uu;
	size_t			la, lb;
	int			covers = 0;

	if (oauthc_resource_match(resource, url))
		return (1);
	if (parts_get(resource, &ur) == -1)
		return (0);
	if (parts_get(url, &uu) == 0) {
		la = strlen(ur.path);
		if (la > 0 && ur.path[la - 1] == '/')
			la--;
		lb = strlen(uu.path);
		covers = ur.fragment == NULL && ur.query == NULL &&
		    strcasecmp(ur.scheme, uu.scheme) == 0 &&
		    strcasecmp(ur.host, uu.host) == 0 &&
		    strcmp(ur.port, uu.port) == 0 && la < lb &&
		    memcmp(ur.path, uu.path, la) == 0 && uu.path[la] == '/';
		parts_free(&uu);
	}
	parts_free(&ur);
	return (covers);
}

int
oauthc_prm_urls(const char *url, char *urls[OAUTHC_PRM_URLS], char *why,
    size_t len)
{
	CURLU	*u;
	char	*origin = NULL, *path = NULL, *query = NULL, *scheme = NULL;
	char	*http = NULL;
	size_t	 plen;
	int	 n = 0, ok;

	if ((u = curl_url()) == NULL)
		fatalx("curl_url");
	/* A WebSocket's metadata is on its origin over HTTP (RFC 6455). */
	if (curl_url_set(u, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME) ==
	    CURLUE_OK && curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) ==
	    CURLUE_OK && (strcmp(scheme, "ws") == 0 ||
	    strcmp(scheme, "wss") == 0))
		curl_url_set(u, CURLUPART_SCHEME, scheme[2] == 's' ? "https" :
		    "http", 0);
	curl_free(scheme);
	curl_url_get(u, CURLUPART_URL, &http, 0);
	ok = idp_url_allowed(http != NULL ? http : url, why, len);
	curl_free(http);
	if (!ok) {
		curl_url_cleanup(u);
		return (-1);
	}
	if (curl_url_get(u, CURLUPART_PATH, &path, 0) != CURLUE_OK)
		fatalx("curl_url_get");
	curl_url_get(u, CURLUPART_QUERY, &query, 0);
	if (curl_url_set(u, CURLUPART_PATH, "/", 0) != CURLUE_OK ||
	    curl_url_set(u, CURLUPART_QUERY, NULL, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_URL, &origin, 0) != CURLUE_OK)
		fatalx("curl_url_get");
	curl_url_cleanup(u);
	plen = strlen(origin);
	if (plen > 0 && origin[plen - 1] == '/')
		origin[--plen] = '\0';
	plen = strlen(path);
	while (plen > 0 && path[plen - 1] == '/')
		path[--plen] = '\0';
	if (plen > 0)
		xasprintf(&urls[n++], "%s" WK_PRM "%s%s%s", origin, path,
		    query != NULL ? "?" : "", query != NULL ? query : "");
	xasprintf(&urls[n++], "%s" WK_PRM, origin);
	curl_free(origin);
	curl_free(path);
	curl_free(query);
	return (n);
}

int
oauthc_prm_check(json_t *md, const char *url, const char *want,
    const char **as, char **scopes, char *why, size_t len)
{
	json_t		*res, *list, *v;
	const char	*s;
	char		 seen[128], w[IDP_WHY_MAX];
	size_t		 i, n;

	*as = NULL;
	*scopes = NULL;
	if (!json_is_object(md)) {
		snprintf(why, len, "the resource metadata is not an object");
		return (-1);
	}
	if (!json_is_string(res = json_object_get(md, "resource"))) {
		snprintf(why, len, "the resource metadata has no resource");
		return (-1);
	}
	if (!oauthc_resource_covers(json_string_value(res), url)) {
		safe_text(json_string_value(res), seen, sizeof seen);
		snprintf(why, len, "the resource metadata is for %s, not this "
		    "upstream", seen);
		return (-1);
	}
	list = json_object_get(md, "authorization_servers");
	if (!json_is_array(list) || json_array_size(list) == 0 ||
	    (want == NULL && !json_is_string(json_array_get(list, 0)))) {
		snprintf(why, len, "the resource metadata names no "
		    "authorization server");
		return (-1);
	}
	s = json_is_string(json_array_get(list, 0)) ?
	    json_string_value(json_array_get(list, 0)) : "?";
	if (want != NULL) {
		/* Only the configured server gets the client's secret. */
		for (i = 0; i < json_array_size(list); i++) {
			v = json_array_get(list, i);
			if (json_is_string(v) && strcmp(json_string_value(v),
			    want) == 0)
				break;
		}
		if (i == json_array_size(list)) {
			safe_text(s, seen, sizeof seen);
			snprintf(why, len, "the resource metadata names %s%s, "
			    "not the configured issuer", seen,
			    json_array_size(list) > 1 ? " and others" : "");
			return (-1);
		}
		s = want;
	}
	if (!idp_url_allowed(s, w, sizeof w)) {
		snprintf(why, len, "its authorization server: %s", w);
		return (-1);
	}
	*as = s;
	list = json_object_get(md, "scopes_supported");
	if (!json_is_array(list))
		return (0);
	n = 0;
	json_array_foreach(list, i, v) {
		if (!json_is_string(v))
			continue;
		n += json_string_length(v) + 1;
	}
	if (n == 0)
		return (0);
	*scopes = xcalloc(1, n);
	json_array_foreach(list, i, v) {
		if (!json_is_string(v) || json_string_length(v) == 0 ||
		    strpbrk(json_string_value(v), " \"\\") != NULL)
			continue;
		if ((*scopes)[0] != '\0')
			strcat(*scopes, " ");
		strcat(*scopes, json_string_value(v));
	}
	return (0);
}

/* An endpoint of the metadata: absent, or a fetchable string (and on the issuer's origin if same). */
static int
endpoint(json_t *md, const char *key, const char *issuer, int same,
    const char **out, char *why, size_t len)
{
	json_t	*v = json_object_get(md, key);
	char	 w[IDP_WHY_MAX], seen[128];

	*out = NULL;
	if (v == NULL)
		return (0);
	if (!json_is_string(v)) {
		snprintf(why, len, "%s is not a string", key);
		return (-1);
	}
	if (!idp_url_allowed(json_string_value(v), w, sizeof w)) {
		snprintf(why, len, "%s: %s", key, w);
		return (-1);
	}
	if (same && !oauthc_same_origin(json_string_value(v), issuer)) {
		safe_text(json_string_value(v), seen, sizeof seen);
		snprintf(why, len, "%s %s is not on the issuer's host", key,
		    seen);
		return (-1);
	}
	*out = json_string_value(v);
	return (0);
}

/* Does a metadata array hold a string? */
static int
array_has(json_t *md, const char *key, const char *s)
{
	json_t	*a = json_object_get(md, key), *v;
	size_t	 i;

	json_array_foreach(a, i, v) {
		if (json_is_string(v) && strcmp(json_string_value(v), s) == 0)
			return (1);
	}
	return (0);
}

int
oauthc_as_check(json_t *md, const char *issuer, struct oauthc_as *as,
    char *why, size_t len)
{
	json_t	*iss, *v;
	char	 seen[128];

	memset(as, 0, sizeof *as);
	if (!json_is_object(md)) {
		snprintf(why, len, "the metadata is not an object");
		return (-1);
	}
	iss = json_object_get(md, "issuer");
	if (!json_is_string(iss) || strcmp(json_string_value(iss), issuer)
	    != 0) {
		if (json_is_string(iss))
			safe_text(json_string_value(iss), seen, sizeof seen);
		snprintf(why, len, "the metadata's issuer is %s%s%s, not the "
		    "authorization server named", json_is_string(iss) ? "\'" :
		    "", json_is_string(iss) ? seen : "missing",
		    json_is_string(iss) ? "\'" : "");
		return (-1);
	}
	as->issuer = json_string_value(iss);
	if (endpoint(md, "token_endpoint", issuer, 1, &as->token_endpoint,
	    why, len) == -1 ||
	    endpoint(md, "registration_endpoint", issuer, 1,
	    &as->registration_endpoint, why, len) == -1 ||
	    endpoint(md, "revocation_endpoint", issuer, 1,
	    &as->revocation_endpoint, why, len) == -1 ||
	    endpoint(md, "authorization_endpoint", issuer, 0,
	    &as->authorization_endpoint, why, len) == -1)
		return (-1);
	if (as->token_endpoint == NULL) {
		snprintf(why, len, "the metadata has no token_endpoint");
		return (-1);
	}
	if (json_is_array(json_object_get(md,
	    "token_endpoint_auth_methods_supported"))) {
		if (array_has(md, "token_endpoint_auth_methods_supported",
		    "client_secret_basic"))
			as->auth_methods |= OAUTHC_AUTH_BASIC;
		if (array_has(md, "token_endpoint_auth_methods_supported",
		    "client_secret_post"))
			as->auth_methods |= OAUTHC_AUTH_POST;
		if (array_has(md, "token_endpoint_auth_methods_supported",
		    "none"))
			as->auth_methods |= OAUTHC_AUTH_NONE;
	}
	as->s256 = array_has(md, "code_challenge_methods_supported", "S256");
	v = json_object_get(md, "authorization_response_iss_parameter_supported");
	as->iss_param = json_is_true(v);
	as->cimd = json_is_true(json_object_get(md,
	    "client_id_metadata_document_supported"));
	as->offline = array_has(md, "scopes_supported", "offline_access");
	return (0);
}

unsigned int
oauthc_auth_method(const struct oauthc_as *as, int has_secret)
{
	if (!has_secret)
		return (OAUTHC_AUTH_NONE);
	if (as->auth_methods == 0 || (as->auth_methods & OAUTHC_AUTH_BASIC))
		return (OAUTHC_AUTH_BASIC);
	if (as->auth_methods & OAUTHC_AUTH_POST)
		return (OAUTHC_AUTH_POST);
	return (0);
}

/*
 * Is a token visible ASCII without a space, 1 to max bytes?  RFC 6749's
 * VSCHAR allows a space, but a bearer token (RFC 6750's b64token) cannot
 * hold one, and the stored record (oauthc_reg.c) takes none: a token
 * taken here would be lost at the next start.
 */
static int
token_ok(const char *s, size_t n)
{
	size_t	i;

	if (n == 0 || n > OAUTHC_TOKEN_MAX)
		return (0);
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] > 0x7e)
			return (0);
	return (1);
}

/* Is a scope list NQCHARs and spaces (RFC 6749 section 3.3), logged and
 * shown as it is? */
static int
scope_ok(const char *s, size_t n)
{
	size_t	i;

	if (n > OAUTHC_PARAM_MAX)
		return (0);
	for (i = 0; i < n; i++) {
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e ||
		    s[i] == '"' || s[i] == '\\')
			return (0);
	}
	return (1);
}

int
oauthc_token_parse(const char *body, size_t len, struct oauthc_token *t,
    char *why, size_t wlen)
{
	json_t		*o, *v;
	json_error_t	 err;
	int		 rc = -1;

	memset(t, 0, sizeof *t);
	t->expires_in = -1;
	if (len > OAUTHC_DOC_MAX) {
		snprintf(why, wlen, "the token answer is over %d bytes",
		    OAUTHC_DOC_MAX);
		return (-1);
	}
	if ((o = json_loadb(body, len, JSON_REJECT_DUPLICATES, &err)) ==
	    NULL || !json_is_object(o)) {
		snprintf(why, wlen, "the token answer is not a JSON object");
		json_decref(o);
		return (-1);
	}
	if ((v = json_object_get(o, "error")) != NULL) {
		if (json_is_string(v))
			safe_text(json_string_value(v), t->error,
			    sizeof t->error);
		else
			snprintf(t->error, sizeof t->error, "?");
		snprintf(why, wlen, "the token endpoint answered %s",
		    t->error);
		goto out;
	}
	v = json_object_get(o, "token_type");
	if (!json_is_string(v) || strcasecmp(json_string_value(v), "Bearer")
	    != 0) {
		snprintf(why, wlen, "the token is not of type Bearer");
		goto out;
	}
	v = json_object_get(o, "access_token");
	if (!json_is_string(v) || !token_ok(json_string_value(v),
	    json_string_length(v))) {
		snprintf(why, wlen, "the answer has no usable access_token");
		goto out;
	}
	if ((v = json_object_get(o, "refresh_token")) != NULL &&
	    (!json_is_string(v) || !token_ok(json_string_value(v),
	    json_string_length(v)))) {
		snprintf(why, wlen, "the answer's refresh_token is not usable");
		goto out;
	}
	if ((v = json_object_get(o, "expires_in")) != NULL &&
	    (!json_is_integer(v) || json_integer_value(v) < 0)) {
		snprintf(why, wlen, "expires_in is not a non-negative integer");
		goto out;
	}
	if (v != NULL)
		t->expires_in = json_integer_value(v) > OAUTHC_EXPIRES_MAX ?
		    OAUTHC_EXPIRES_MAX : json_integer_value(v);
	if ((v = json_object_get(o, "scope")) != NULL && (!json_is_string(v)
	    || !scope_ok(json_string_value(v), json_string_length(v)))) {
		snprintf(why, wlen, "the answer's scope is not usable");
		goto out;
	}
	if (v != NULL)
		t->scope = xstrdup(json_string_value(v));
	t->access_token = xstrdup(json_string_value(json_object_get(o,
	    "access_token")));
	if ((v = json_object_get(o, "refresh_token")) != NULL)
		t->refresh_token = xstrdup(json_string_value(v));
	rc = 0;
out:
	secret_wipe_tree(o);
	json_decref(o);
	return (rc);
}

/* Free a string after overwriting it. */
static void
wipe_free(char *s)
{
	if (s == NULL)
		return;
	OPENSSL_cleanse(s, strlen(s));
	free(s);
}

void
oauthc_token_clear(struct oauthc_token *t)
{
	wipe_free(t->access_token);
	wipe_free(t->refresh_token);
	free(t->scope);
	memset(t, 0, sizeof *t);
	t->expires_in = -1;
}
