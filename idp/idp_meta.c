/* SPDX-License-Identifier: ISC */
/*
 * mcp-idp's pure decisions (idp.h): URLs are read with libcurl's own URL
 * parser (curl_url), so that what is checked is what curl will fetch.
 */
#include "config.h"

#include <arpa/inet.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "idp.h"
#include "log.h"
#include "xmalloc.h"

#define WK_AS		"/.well-known/oauth-authorization-server"
#define WK_OIDC		"/.well-known/openid-configuration"

/* Is a host, as curl_url gives it, a loopback name or address? */
static int
host_loopback(const char *host)
{
	struct in_addr	v4;

	if (strcasecmp(host, "localhost") == 0 || strcmp(host, "[::1]") == 0)
		return (1);
	return (inet_pton(AF_INET, host, &v4) == 1 &&
	    (ntohl(v4.s_addr) >> 24) == 127);
}

/* Copy text for a message: printable ASCII but '"' and '\', cut. */
static void
safe_text(const char *s, char *out, size_t len)
{
	size_t	i, n = 0;

	for (i = 0; s[i] != '\0' && n + 4 < len && i < 128; i++) {
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

/* Parse a URL we may fetch; NULL with why set. */
static CURLU *
url_parse(const char *url, char *why, size_t len)
{
	CURLU	*u;
	char	*scheme = NULL, *host = NULL, *part = NULL;
	int	 ok = 0;

	if (strlen(url) > IDP_URL_MAX) {
		snprintf(why, len, "the URL is over %d bytes", IDP_URL_MAX);
		return (NULL);
	}
	if ((u = curl_url()) == NULL)
		fatalx("curl_url");
	if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK)
		snprintf(why, len, "not an absolute URL");
	else if (curl_url_get(u, CURLUPART_USER, &part, 0) == CURLUE_OK)
		snprintf(why, len, "a URL with user information");
	else if (curl_url_get(u, CURLUPART_FRAGMENT, &part, 0) == CURLUE_OK)
		snprintf(why, len, "a URL with a fragment");
	else if (strcmp(scheme, "https") == 0)
		ok = 1;
	else if (strcmp(scheme, "http") != 0)
		snprintf(why, len, "not an http(s) URL");
	else if (!host_loopback(host))
		snprintf(why, len, "http:// but not to a loopback address "
		    "(https is required)");
	else
		ok = 1;
	curl_free(scheme);
	curl_free(host);
	curl_free(part);
	if (!ok) {
		curl_url_cleanup(u);
		return (NULL);
	}
	return (u);
}

int
idp_url_allowed(const char *url, char *why, size_t len)
{
	CURLU	*u;

	if ((u = url_parse(url, why, len)) == NULL)
		return (0);
	curl_url_cleanup(u);
	return (1);
}

int
idp_discovery_urls(const char *issuer, char *urls[IDP_DISCOVERY_MAX],
    char *why, size_t len)
{
	CURLU	*u;
	char	*origin = NULL, *path = NULL, *query = NULL;
	size_t	 plen;
	int	 n = 0;

	if ((u = url_parse(issuer, why, len)) == NULL)
		return (-1);
	if (curl_url_get(u, CURLUPART_QUERY, &query, 0) == CURLUE_OK) {
		snprintf(why, len, "an issuer with a query");
		curl_free(query);
		curl_url_cleanup(u);
		return (-1);
	}
	/* The origin: the URL without its path (scheme, host, port). */
	if (curl_url_get(u, CURLUPART_PATH, &path, 0) != CURLUE_OK ||
	    curl_url_set(u, CURLUPART_PATH, "/", 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_URL, &origin, 0) != CURLUE_OK)
		fatalx("curl_url_get");
	curl_url_cleanup(u);
	plen = strlen(origin);
	if (plen > 0 && origin[plen - 1] == '/')
		origin[--plen] = '\0';
	plen = strlen(path);
	while (plen > 0 && path[plen - 1] == '/')
		path[--plen] = '\0';
	if (plen == 0) {
		xasprintf(&urls[n++], "%s" WK_AS, origin);
		xasprintf(&urls[n++], "%s" WK_OIDC, origin);
	} else {
		xasprintf(&urls[n++], "%s" WK_AS "%s", origin, path);
		xasprintf(&urls[n++], "%s" WK_OIDC "%s", origin, path);
		xasprintf(&urls[n++], "%s%s" WK_OIDC, origin, path);
	}
	curl_free(origin);
	curl_free(path);
	return (n);
}

/* Skip optional whitespace. */
static size_t
ows(const char *p, size_t i, size_t len)
{
	while (i < len && (p[i] == ' ' || p[i] == '\t'))
		i++;
	return (i);
}

/* Is c a tchar (RFC 9110 section 5.6.2)? */
static int
tchar(int c)
{
	return (isalnum(c) || (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) !=
	    NULL));
}

long
idp_max_age(const char *p, size_t len)
{
	size_t		 i = 0, name, namelen, v, vlen;
	long		 age = -1, d;

	for (;;) {
		i = ows(p, i, len);
		if (i < len && p[i] == ',') {
			i++;
			continue;
		}
		if (i == len)
			break;
		/* A directive: token [ "=" ( token / quoted-string ) ]. */
		name = i;
		while (i < len && tchar((unsigned char)p[i]))
			i++;
		if ((namelen = i - name) == 0)
			return (-1);
		v = vlen = 0;
		if (i < len && p[i] == '=') {
			i++;
			if (i < len && p[i] == '"') {
				v = ++i;
				while (i < len && p[i] != '"') {
					if (p[i] == '\\' || (unsigned char)
					    p[i] < 0x20)
						return (-1);
					i++;
				}
				if (i == len)
					return (-1);
				vlen = i++ - v;
			} else {
				v = i;
				while (i < len && tchar((unsigned char)p[i]))
					i++;
				if ((vlen = i - v) == 0)
					return (-1);
			}
		}
		i = ows(p, i, len);
		if (i < len && p[i] != ',')
			return (-1);
		if ((namelen == 8 && strncasecmp(p + name, "no-store", 8) ==
		    0) || (namelen == 8 && strncasecmp(p + name, "no-cache",
		    8) == 0))
			return (-1);
		if (namelen != 7 || strncasecmp(p + name, "max-age", 7) != 0 ||
		    age >= 0)
			continue;
		if (vlen == 0)
			return (-1);
		for (d = 0; vlen > 0; v++, vlen--) {
			if (!isdigit((unsigned char)p[v]))
				return (-1);
			if (d <= IDP_MAX_AGE_MAX)
				d = d * 10 + (p[v] - '0');
		}
		age = d > IDP_MAX_AGE_MAX ? IDP_MAX_AGE_MAX + 1 : d;
	}
	return (age);
}

unsigned int
idp_refresh_after(long max_age, unsigned int configured)
{
	if (max_age >= 0) {
		if (max_age < IDP_MAX_AGE_MIN)
			return (IDP_MAX_AGE_MIN);
		if (max_age > IDP_MAX_AGE_MAX)
			return (IDP_MAX_AGE_MAX);
		return ((unsigned int)max_age);
	}
	return (configured > 0 ? configured : IDP_REFRESH_DEFAULT);
}

/* A member that is a URL we may fetch, or absent; -1 with why set. */
static int
metadata_url(json_t *md, const char *key, const char **out, char *why,
    size_t len)
{
	json_t	*v = json_object_get(md, key);
	char	 e[IDP_WHY_MAX];

	*out = NULL;
	if (v == NULL)
		return (0);
	if (!json_is_string(v)) {
		snprintf(why, len, "the metadata's %s is not a string", key);
		return (-1);
	}
	if (!idp_url_allowed(json_string_value(v), e, sizeof e)) {
		snprintf(why, len, "the metadata's %s: %s", key, e);
		return (-1);
	}
	*out = json_string_value(v);
	return (0);
}

int
idp_metadata_check(json_t *md, const char *issuer, const char **jwks_uri,
    const char **introspection, char *why, size_t len)
{
	json_t	*iss;
	char	 seen[160];

	*jwks_uri = *introspection = NULL;
	if (!json_is_object(md)) {
		snprintf(why, len, "the metadata is not a JSON object");
		return (-1);
	}
	iss = json_object_get(md, "issuer");
	if (!json_is_string(iss)) {
		snprintf(why, len, "the metadata has no issuer");
		return (-1);
	}
	if (strlen(json_string_value(iss)) != json_string_length(iss) ||
	    strcmp(json_string_value(iss), issuer) != 0) {
		safe_text(json_string_value(iss), seen, sizeof seen);
		snprintf(why, len, "the metadata names issuer %s, not the "
		    "configured one", seen);
		return (-1);
	}
	if (metadata_url(md, "jwks_uri", jwks_uri, why, len) != 0 ||
	    metadata_url(md, "introspection_endpoint", introspection, why,
	    len) != 0)
		return (-1);
	return (0);
}

int
idp_metadata_endpoint(json_t *md, const char *key, const char **out,
    char *why, size_t len)
{
	return (metadata_url(md, key, out, why, len));
}
