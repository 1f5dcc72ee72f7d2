/* SPDX-License-Identifier: ISC */
/*
 * What mcp-idp decides without I/O (idp_meta.c, in libidp.a, which
 * mcp-idp, check_idp and fuzz_idp link): which URLs an issuer's metadata
 * is looked for at, which URLs may be fetched at all, how long a fetched
 * key set is kept, and whether a metadata document is the issuer's.
 */
#ifndef MCPS_IDP_H
#define MCPS_IDP_H

#include <stddef.h>

#include <jansson.h>

#define IDP_DISCOVERY_MAX	3	/* URLs tried for an issuer's metadata */
#define IDP_URL_MAX		2048	/* a URL's bytes */
#define IDP_MAX_AGE_MIN		300	/* seconds: Cache-Control is bounded */
#define IDP_MAX_AGE_MAX		86400
#define IDP_REFRESH_DEFAULT	3600	/* without max-age or configuration */
#define IDP_WHY_MAX		256

/*
 * May this URL be fetched: https, or http to a loopback host (localhost,
 * 127.0.0.0/8, [::1]); no user information, no fragment, at most
 * IDP_URL_MAX bytes?  1 if so; 0 with why set.
 */
int		 idp_url_allowed(const char *url, char *why, size_t);

/*
 * The URLs an issuer's metadata is looked for at, in the order tried
 * (RFC 8414 section 3.1, then OpenID Connect Discovery 1.0 section 4, as
 * the MCP authorization specification orders them):
 *   no path:   <origin>/.well-known/oauth-authorization-server
 *              <origin>/.well-known/openid-configuration
 *   path /p:   <origin>/.well-known/oauth-authorization-server/p
 *              <origin>/.well-known/openid-configuration/p
 *              <origin>/p/.well-known/openid-configuration
 * A trailing '/' of the path is dropped first.  The issuer must be
 * allowed (idp_url_allowed) and have no query.  Returns how many (each
 * urls[i] new, caller frees), or -1 with why set.
 */
int		 idp_discovery_urls(const char *issuer,
		    char *urls[IDP_DISCOVERY_MAX], char *why, size_t);

/*
 * The max-age of a Cache-Control value (RFC 9111 section 5.2): the
 * delta-seconds of its first max-age directive, bare or quoted; -1 if it
 * has none, or no-store or no-cache, or the value is malformed.  Values
 * past a day read as a day plus one.
 */
long		 idp_max_age(const char *value, size_t len);

/*
 * Seconds until the next refresh of a key set: max_age (from
 * idp_max_age) bounded to [IDP_MAX_AGE_MIN, IDP_MAX_AGE_MAX], else the
 * configured refresh, else IDP_REFRESH_DEFAULT.
 */
unsigned int	 idp_refresh_after(long max_age, unsigned int configured);

/*
 * Check an authorization server's metadata (RFC 8414 section 3.3): an
 * object whose issuer is the configured one byte for byte, whose
 * jwks_uri and introspection_endpoint, when present, are strings that
 * may be fetched.  *jwks_uri and *introspection point into md (NULL when
 * absent).  0, or -1 with why set (no text of the document in it).
 */
int		 idp_metadata_check(json_t *md, const char *issuer,
		    const char **jwks_uri, const char **introspection,
		    char *why, size_t);
/* Another endpoint of the metadata (key), a URL that may be fetched or
 * absent (*out NULL); -1 with why set. */
int		 idp_metadata_endpoint(json_t *md, const char *key,
		    const char **out, char *why, size_t);

#endif
