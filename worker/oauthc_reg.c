/* SPDX-License-Identifier: ISC */
/*
 * The gateway as an OAuth client: how it registers (a configured client,
 * a Client ID Metadata Document, RFC 7591 dynamic registration), the
 * scopes it asks for, and the record it keeps of its identity.  No I/O;
 * in liboauthc.a.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "oauthc.h"
#include "secret.h"
#include "xmalloc.h"

enum oauthc_regway
oauthc_registration(const struct oauthc_as *as, const char *client_id,
    const char *metadata_url)
{
	if (client_id != NULL && client_id[0] != '\0')
		return (OAUTHC_REG_CONFIG);
	if (metadata_url != NULL && strncmp(metadata_url, "https://", 8) == 0 &&
	    as->cimd)
		return (OAUTHC_REG_CIMD);
	if (as->registration_endpoint != NULL)
		return (OAUTHC_REG_DCR);
	return (OAUTHC_REG_NONE);
}

unsigned int
oauthc_dcr_method(const struct oauthc_as *as)
{
	if (as->auth_methods == 0 || (as->auth_methods & OAUTHC_AUTH_BASIC))
		return (OAUTHC_AUTH_BASIC);
	if (as->auth_methods & OAUTHC_AUTH_POST)
		return (OAUTHC_AUTH_POST);
	return (OAUTHC_AUTH_NONE);
}

/* The name of a method bit. */
static const char *
method_name(unsigned int m)
{
	switch (m) {
	case OAUTHC_AUTH_BASIC:
		return ("client_secret_basic");
	case OAUTHC_AUTH_POST:
		return ("client_secret_post");
	default:
		return ("none");
	}
}

/* Is a redirect URI http on a loopback host? */
static int
loopback_http(const char *uri)
{
	static const char *const hosts[] = { "http://127.0.0.1:",
	    "http://127.0.0.1/", "http://localhost:", "http://localhost/",
	    "http://[::1]:", "http://[::1]/", NULL };
	size_t	i;

	for (i = 0; hosts[i] != NULL; i++)
		if (strncmp(uri, hosts[i], strlen(hosts[i])) == 0)
			return (1);
	return (0);
}

json_t *
oauthc_dcr_request(const char *client_name, const char *redirect_uri,
    unsigned int method)
{
	return (json_pack("{s:s, s:[s], s:[s, s], s:[s], s:s, s:s}",
	    "client_name", client_name,
	    "redirect_uris", redirect_uri,
	    "grant_types", "authorization_code", "refresh_token",
	    "response_types", "code",
	    "token_endpoint_auth_method", method_name(method),
	    "application_type", loopback_http(redirect_uri) ? "native" :
	    "web"));
}

/* A string member of visible ASCII, 1 to max bytes; NULL if absent or not. */
static const char *
printable(json_t *o, const char *key, size_t max, int *bad)
{
	json_t		*v = json_object_get(o, key);
	const char	*s;
	size_t		 i, n;

	if (v == NULL)
		return (NULL);
	if (!json_is_string(v)) {
		*bad = 1;
		return (NULL);
	}
	s = json_string_value(v);
	n = json_string_length(v);
	if (n == 0 || n > max || strlen(s) != n) {
		*bad = 1;
		return (NULL);
	}
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] > 0x7e) {
			*bad = 1;
			return (NULL);
		}
	return (s);
}

int
oauthc_dcr_parse(const char *body, size_t len, unsigned int asked,
    struct oauthc_reg *r, char *why, size_t whylen)
{
	json_t		*o, *m;
	const char	*id, *secret, *name;
	int		 bad = 0;

	memset(r, 0, sizeof *r);
	if (len > OAUTHC_DOC_MAX) {
		snprintf(why, whylen, "the registration's answer is over %d "
		    "bytes", OAUTHC_DOC_MAX);
		return (-1);
	}
	o = json_loadb(body, len, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(o)) {
		secret_wipe_tree(o);
		json_decref(o);
		snprintf(why, whylen, "the registration's answer is not a JSON "
		    "object");
		return (-1);
	}
	id = printable(o, "client_id", OAUTHC_PARAM_MAX, &bad);
	secret = printable(o, "client_secret", OAUTHC_TOKEN_MAX, &bad);
	if (bad || id == NULL) {
		secret_wipe_tree(o);
		json_decref(o);
		snprintf(why, whylen, "the registration's answer has %s",
		    bad ? "a client_id or client_secret that is not a printable "
		    "string" : "no client_id");
		return (-1);
	}
	r->method = asked;
	if ((m = json_object_get(o, "token_endpoint_auth_method")) != NULL) {
		name = json_is_string(m) ? json_string_value(m) : "";
		if (strcmp(name, "client_secret_basic") == 0)
			r->method = OAUTHC_AUTH_BASIC;
		else if (strcmp(name, "client_secret_post") == 0)
			r->method = OAUTHC_AUTH_POST;
		else if (strcmp(name, "none") == 0)
			r->method = OAUTHC_AUTH_NONE;
		else {
			secret_wipe_tree(o);
			json_decref(o);
			snprintf(why, whylen, "the registration's "
			    "token_endpoint_auth_method is not one we have");
			return (-1);
		}
	} else if (secret == NULL)
		r->method = OAUTHC_AUTH_NONE;
	if (r->method != OAUTHC_AUTH_NONE && secret == NULL) {
		secret_wipe_tree(o);
		json_decref(o);
		snprintf(why, whylen, "the registration's answer has no "
		    "client_secret for %s", method_name(r->method));
		return (-1);
	}
	r->client_id = xstrdup(id);
	if (r->method != OAUTHC_AUTH_NONE) {
		r->client_secret = xstrdup(secret);
		/* RFC 7591: when the secret expires, 0 for never; one not
		 * given, or not a time, is taken for never. */
		m = json_object_get(o, "client_secret_expires_at");
		if (json_is_integer(m) && json_integer_value(m) > 0)
			r->secret_expires = (long long)json_integer_value(m);
	}
	secret_wipe_tree(o);
	json_decref(o);
	return (0);
}

void
oauthc_reg_clear(struct oauthc_reg *r)
{
	free(r->client_id);
	secret_free(r->client_secret);
	memset(r, 0, sizeof *r);
}

int
oauthc_scope_has(const char *scope, const char *one)
{
	size_t		 n = strlen(one);
	const char	*p;

	if (scope == NULL || n == 0)
		return (0);
	for (p = scope; *p != '\0'; ) {
		p += strspn(p, " ");
		if (strncmp(p, one, n) == 0 && (p[n] == ' ' || p[n] == '\0'))
			return (1);
		p += strcspn(p, " ");
	}
	return (0);
}

/* Append the scopes of s that out lacks; -1 if out would pass max. */
static int
scope_add(char *out, size_t max, const char *s)
{
	char	 one[OAUTHC_SCOPE_MAX + 1];
	size_t	 n, have;

	if (s == NULL)
		return (0);
	while (*s != '\0') {
		s += strspn(s, " ");
		if ((n = strcspn(s, " ")) == 0)
			break;
		if (n > OAUTHC_SCOPE_MAX)
			return (-1);
		memcpy(one, s, n);
		one[n] = '\0';
		s += n;
		if (oauthc_scope_has(out, one))
			continue;
		have = strlen(out);
		if (have + (have > 0) + n > max)
			return (-1);
		if (have > 0)
			out[have++] = ' ';
		memcpy(out + have, one, n + 1);
	}
	return (0);
}

char *
oauthc_scope_union(const char *a, const char *b)
{
	char	*out = xcalloc(1, OAUTHC_SCOPE_MAX + 1);

	if (scope_add(out, OAUTHC_SCOPE_MAX, a) == -1 ||
	    scope_add(out, OAUTHC_SCOPE_MAX, b) == -1 || out[0] == '\0') {
		free(out);
		return (NULL);
	}
	return (out);
}

char *
oauthc_scope_login(const char *wanted, int offline)
{
	return (oauthc_scope_union(wanted, offline ? "offline_access" :
	    NULL));
}

/* A record's way of registering, by name; OAUTHC_REG_NONE if unknown. */
static enum oauthc_regway
regway(const char *s)
{
	if (s == NULL)
		return (OAUTHC_REG_NONE);
	if (strcmp(s, "config") == 0)
		return (OAUTHC_REG_CONFIG);
	if (strcmp(s, "cimd") == 0)
		return (OAUTHC_REG_CIMD);
	if (strcmp(s, "dcr") == 0)
		return (OAUTHC_REG_DCR);
	return (OAUTHC_REG_NONE);
}

/* A non-negative integer member; 0 if absent, -1 if not one. */
static long long
number(json_t *o, const char *key)
{
	json_t	*v = json_object_get(o, key);

	if (v == NULL)
		return (0);
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return (-1);
	return ((long long)json_integer_value(v));
}

int
oauthc_record_read(json_t *rec, const char *resource,
    const char *config_client_id, struct oauthc_record *r, char *why,
    size_t len)
{
	json_t		*v;
	const char	*s;
	int		 bad = 0;

	memset(r, 0, sizeof *r);
	if (!json_is_object(rec) || !json_is_integer(v = json_object_get(rec,
	    "v")) || json_integer_value(v) != 1) {
		snprintf(why, len, "not a record of version 1");
		return (-1);
	}
	if (!json_is_string(v = json_object_get(rec, "resource")) ||
	    strcmp(json_string_value(v), resource) != 0) {
		snprintf(why, len, "the record is for another resource");
		return (-1);
	}
	r->resource = json_string_value(v);
	r->issuer = printable(rec, "issuer", OAUTHC_PARAM_MAX, &bad);
	r->client_id = printable(rec, "client_id", OAUTHC_PARAM_MAX, &bad);
	r->client_secret = printable(rec, "client_secret", OAUTHC_TOKEN_MAX,
	    &bad);
	r->access_token = printable(rec, "access_token", OAUTHC_TOKEN_MAX,
	    &bad);
	r->refresh_token = printable(rec, "refresh_token", OAUTHC_TOKEN_MAX,
	    &bad);
	v = json_object_get(rec, "scope");
	if (v != NULL && (!json_is_string(v) || json_string_length(v) >
	    OAUTHC_SCOPE_MAX))
		bad = 1;
	r->scope = json_string_value(v);
	v = json_object_get(rec, "registered");
	r->registered = regway(json_string_value(v));
	r->expires_at = number(rec, "expires_at");
	r->obtained = number(rec, "obtained");
	r->secret_expires = number(rec, "client_secret_expires_at");
	s = json_string_value(json_object_get(rec, "grant"));
	r->client_credentials = s != NULL && strcmp(s, "client_credentials")
	    == 0;
	if (bad || r->issuer == NULL || r->client_id == NULL ||
	    r->registered == OAUTHC_REG_NONE || r->expires_at < 0 ||
	    r->obtained < 0 || r->secret_expires < 0) {
		snprintf(why, len, "the record is malformed");
		return (-1);
	}
	if (r->registered == OAUTHC_REG_CONFIG && (config_client_id == NULL ||
	    strcmp(config_client_id, r->client_id) != 0)) {
		snprintf(why, len, "the record's client_id is not the one "
		    "configured");
		return (-1);
	}
	if (r->registered != OAUTHC_REG_CONFIG && config_client_id != NULL) {
		snprintf(why, len, "a client_id is configured now");
		return (-1);
	}
	return (0);
}

json_t *
oauthc_record_json(const struct oauthc_record *r)
{
	static const char *const ways[] = { "none", "config", "cimd", "dcr" };
	json_t	*o;

	o = json_pack("{s:i, s:s, s:s, s:s, s:s, s:I, s:s}", "v", 1,
	    "resource", r->resource, "issuer", r->issuer,
	    "client_id", r->client_id, "registered", ways[r->registered],
	    "obtained", (json_int_t)r->obtained, "grant",
	    r->client_credentials ? "client_credentials" :
	    "authorization_code");
	if (r->client_secret != NULL)
		json_object_set_new(o, "client_secret",
		    json_string(r->client_secret));
	if (r->client_secret != NULL && r->secret_expires > 0)
		json_object_set_new(o, "client_secret_expires_at",
		    json_integer((json_int_t)r->secret_expires));
	if (r->access_token != NULL)
		json_object_set_new(o, "access_token",
		    json_string(r->access_token));
	if (r->refresh_token != NULL)
		json_object_set_new(o, "refresh_token",
		    json_string(r->refresh_token));
	if (r->expires_at > 0)
		json_object_set_new(o, "expires_at",
		    json_integer((json_int_t)r->expires_at));
	if (r->scope != NULL)
		json_object_set_new(o, "scope", json_string(r->scope));
	return (o);
}
