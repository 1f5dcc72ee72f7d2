/* SPDX-License-Identifier: ISC */
/*
 * The gateway as an OAuth 2.1 client of its upstreams: what it decides
 * without I/O (oauthc_meta.c, oauthc_pkce.c, in liboauthc.a, which
 * mcp-worker, check_oauthc and fuzz_oauthc link).  The challenge of a 401
 * (RFC 9110 section 11.6.1, RFC 6750 section 3, RFC 9728 section 5.1),
 * where protected resource metadata is looked for (RFC 9728 section 3.1)
 * and whether it is the upstream's, whether an authorization server's
 * metadata may be used (RFC 8414), the token endpoint's authentication,
 * a token response (RFC 6749 section 5), PKCE (RFC 7636) and the
 * authorization response (RFC 6749 section 4.1.2, RFC 9207).
 *
 * Every refusal says why in words with nothing of the document but a
 * cut, printable copy of a name, never a token or secret.
 */
#ifndef MCPS_OAUTHC_H
#define MCPS_OAUTHC_H

#include <stddef.h>

#include <jansson.h>

#define OAUTHC_WHY_MAX		256
#define OAUTHC_DOC_MAX		(64 * 1024)	/* a metadata document */
#define OAUTHC_CHALLENGE_MAX	8192		/* a WWW-Authenticate value */
#define OAUTHC_PARAM_MAX	2048		/* one of its values */
#define OAUTHC_TOKEN_MAX	8192		/* an access or refresh token */
#define OAUTHC_PRM_URLS		2
#define OAUTHC_B64_32		44		/* 32 bytes base64url, and NUL */
#define OAUTHC_EXPIRES_MAX	(10LL * 366 * 86400)

/* The first Bearer challenge of a WWW-Authenticate value.  Owns its strings. */
struct oauthc_challenge {
	char	*error;			/* error=, or NULL */
	char	*scope;			/* scope=, or NULL */
	char	*resource_metadata;	/* resource_metadata=, or NULL */
};

/*
 * Parse a WWW-Authenticate value (several fields joined by ", " are one
 * value): one or more challenges, each a scheme with a token68 or
 * auth-params, tokens or quoted strings.  1 if a Bearer challenge was
 * found (its parameters in *c, names and scheme compared without case);
 * 0 if none; -1 if the value is malformed, over OAUTHC_CHALLENGE_MAX, a
 * Bearer parameter we read is repeated or over OAUTHC_PARAM_MAX or holds
 * a control character.  *c is empty unless 1 is returned.
 */
int		 oauthc_challenge_parse(const char *value, size_t len,
		    struct oauthc_challenge *c);
void		 oauthc_challenge_clear(struct oauthc_challenge *);

/*
 * Where protected resource metadata is looked for when the 401 names
 * none, in the MCP specification's order: with the upstream's path (and
 * query) after the well-known segment, then at the root; one URL when the
 * path is empty or "/"; a ws:// or wss:// URL's are over http or https.
 * The URL must be fetchable (idp_url_allowed).
 * Returns how many (urls[i] new, caller frees), or -1 with why set.
 */
int		 oauthc_prm_urls(const char *url,
		    char *urls[OAUTHC_PRM_URLS], char *why, size_t);

/*
 * Is resource (a metadata document's) the upstream's URL?  Scheme and
 * host without case, an explicit default port as none, a trailing '/' of
 * the path ignored; path and query byte for byte; no fragment.
 */
int		 oauthc_resource_match(const char *resource, const char *url);

/*
 * Is resource the upstream's URL (oauthc_resource_match) or a parent of
 * it on its origin (a path prefix ending at a '/', no query): what the
 * root well-known URL's document names (RFC 9728 section 3.1)?
 */
int		 oauthc_resource_covers(const char *resource, const char *url);

/* Are two URLs of one origin (scheme, host without case, port)? */
int		 oauthc_same_origin(const char *a, const char *b);

/*
 * Check protected resource metadata (RFC 9728 sections 2 and 3.3): an
 * object whose resource covers url (oauthc_resource_covers), whose
 * authorization_servers is a non-empty array of strings: the first,
 * fetchable; or want (the configured issuer) when not NULL, which it must
 * hold.  *as points into md (or is want); *scopes is scopes_supported's
 * strings joined by ' ' (new), NULL when absent.  0, or -1 with why set.
 */
int		 oauthc_prm_check(json_t *md, const char *url, const char *want,
		    const char **as, char **scopes, char *why, size_t);

/* Token endpoint authentication methods (bits). */
#define OAUTHC_AUTH_BASIC	0x1	/* client_secret_basic */
#define OAUTHC_AUTH_POST	0x2	/* client_secret_post */
#define OAUTHC_AUTH_NONE	0x4	/* none: a public client */

/* An authorization server's metadata, checked.  Strings point into md. */
struct oauthc_as {
	const char	*issuer;
	const char	*authorization_endpoint;	/* NULL if absent */
	const char	*token_endpoint;
	const char	*registration_endpoint;		/* NULL if absent */
	const char	*revocation_endpoint;		/* NULL if absent */
	unsigned int	 auth_methods;	/* advertised; 0 if not said */
	int		 s256;		/* S256 in code_challenge_methods */
	int		 iss_param;	/* authorization_response_iss_parameter_supported */
	int		 cimd;		/* client_id_metadata_document_supported */
	int		 offline;	/* offline_access in scopes_supported */
};

/*
 * Check an authorization server's metadata (RFC 8414 section 3.3): issuer
 * is the expected one byte for byte; token_endpoint is present; every
 * endpoint is a fetchable string; token, registration and revocation
 * endpoints are on the issuer's origin (a document must not send the
 * client's secret or a code to another host).  0, or -1 with why set.
 */
int		 oauthc_as_check(json_t *md, const char *issuer,
		    struct oauthc_as *as, char *why, size_t);

/*
 * How to authenticate at the token endpoint: none without a secret;
 * with one, client_secret_basic if advertised or nothing is (RFC 8414's
 * default), else client_secret_post if advertised.  A bit, or 0 if the
 * server takes nothing we have.
 */
unsigned int	 oauthc_auth_method(const struct oauthc_as *, int has_secret);

/* A token endpoint's answer.  Owns its strings (wiped when cleared). */
struct oauthc_token {
	char		*access_token;
	char		*refresh_token;	/* NULL if none */
	char		*scope;		/* NULL if none */
	long long	 expires_in;	/* seconds; -1 if not said */
	char		 error[64];	/* an error answer's code, printable */
};

/*
 * Read a token endpoint's answer (RFC 6749 sections 5.1 and 5.2): at
 * most OAUTHC_DOC_MAX bytes of a JSON object; token_type Bearer (any
 * case); tokens of visible ASCII within OAUTHC_TOKEN_MAX (so they can go
 * into a header as they are); expires_in a non-negative integer.  0; or
 * -1 with why set, and t->error set if the server answered an error.
 */
int		 oauthc_token_parse(const char *body, size_t len,
		    struct oauthc_token *t, char *why, size_t);
void		 oauthc_token_clear(struct oauthc_token *);

/* Fill out with 32 random bytes base64url-encoded (a state, a verifier). */
void		 oauthc_random(char out[OAUTHC_B64_32]);

/*
 * The S256 challenge of a PKCE verifier (RFC 7636 section 4.2): 43 to
 * 128 unreserved characters.  0, or -1 if the verifier is not one.
 */
int		 oauthc_pkce_challenge(const char *verifier,
		    char challenge[OAUTHC_B64_32]);

/* Encode len bytes base64url without padding into out (4 * ceil(len/3) + 1). */
void		 oauthc_b64url(const unsigned char *in, size_t len, char *out);

/*
 * The authorization request's URL: endpoint with response_type=code,
 * client_id, redirect_uri, scope (if any), state, code_challenge,
 * code_challenge_method=S256 and resource (RFC 8707) appended, encoded.
 * New, or NULL if endpoint is not a URL.
 */
char		*oauthc_authz_url(const char *endpoint, const char *client_id,
		    const char *redirect_uri, const char *scope,
		    const char *state, const char *challenge,
		    const char *resource);

/*
 * Read an authorization response: a redirect URL or its query string
 * (code, state, iss, or error), or a bare code.  The state must equal
 * state (compared in constant time); iss (RFC 9207 section 2.4), when
 * present, must equal issuer, and must be present when iss_required.  A
 * bare code carries neither and is taken only when !iss_required.
 * *code is new; 0, or -1 with why set.
 */
int		 oauthc_authz_response(const char *input, const char *state,
		    const char *issuer, int iss_required, char **code,
		    char *why, size_t);

/*
 * oauthc_reg.c: registration (configured client, Client ID Metadata
 * Document, RFC 7591), scopes, and the stored record.
 */
#define OAUTHC_SCOPE_MAX	4096		/* a scope string */

enum oauthc_regway {
	OAUTHC_REG_NONE = 0,	/* no way to register */
	OAUTHC_REG_CONFIG,	/* the configured client_id */
	OAUTHC_REG_CIMD,	/* client_id is the metadata document's URL */
	OAUTHC_REG_DCR		/* dynamic client registration */
};

/*
 * How to be a client of this server, in the specification's order: the
 * configured client_id; the Client ID Metadata Document when one is
 * configured (an https URL) and the server supports them; dynamic
 * registration when the server has an endpoint for it.
 */
enum oauthc_regway oauthc_registration(const struct oauthc_as *,
		    const char *client_id, const char *metadata_url);

/*
 * The token endpoint authentication to ask for in a registration: what
 * the server advertises, a secret preferred (client_secret_basic, then
 * client_secret_post, then none); client_secret_basic when it says
 * nothing (RFC 8414's default).
 */
unsigned int	 oauthc_dcr_method(const struct oauthc_as *);

/*
 * The registration request (RFC 7591 section 2): client_name,
 * redirect_uris, grant_types authorization_code and refresh_token,
 * response_types code, token_endpoint_auth_method (one bit), and
 * application_type (native for a loopback http redirect, else web).  New.
 */
json_t		*oauthc_dcr_request(const char *client_name,
		    const char *redirect_uri, unsigned int method);

/* A registration's answer.  Owns its strings (the secret wiped). */
struct oauthc_reg {
	char		*client_id;
	char		*client_secret;	/* NULL: a public client */
	unsigned int	 method;	/* OAUTHC_AUTH_* */
	long long	 secret_expires; /* unix; 0: never (or not said) */
};

/*
 * Read a registration's answer (RFC 7591 section 3.2.1): a JSON object
 * of at most OAUTHC_DOC_MAX bytes with a client_id, and a client_secret
 * if the method (the answer's token_endpoint_auth_method, else the one
 * asked for, none without a secret) needs one; strings printable and
 * bounded.  0, or -1 with why set.
 */
int		 oauthc_dcr_parse(const char *body, size_t len,
		    unsigned int asked, struct oauthc_reg *, char *why, size_t);
void		 oauthc_reg_clear(struct oauthc_reg *);

/* Is one in the space-separated scope? */
int		 oauthc_scope_has(const char *scope, const char *one);

/*
 * The union of two scopes, a's first, each once (either may be NULL).
 * New, or NULL if it is empty or over OAUTHC_SCOPE_MAX.
 */
char		*oauthc_scope_union(const char *a, const char *b);

/*
 * The scope of a login: wanted, with offline_access added when the
 * server lists it (offline) and it is not there.  New, or NULL if none.
 */
char		*oauthc_scope_login(const char *wanted, int offline);

/* The stored record of an upstream's gateway identity (strings borrowed). */
struct oauthc_record {
	const char	*resource;
	const char	*issuer;
	const char	*client_id;
	const char	*client_secret;		/* NULL if none */
	enum oauthc_regway registered;
	const char	*access_token;		/* NULL if none */
	const char	*refresh_token;		/* NULL if none */
	long long	 expires_at;		/* unix; 0 if not said */
	const char	*scope;			/* NULL if none */
	long long	 obtained;		/* unix */
	int		 client_credentials;	/* the grant, else a code */
	long long	 secret_expires;	/* DCR's secret, unix; 0: never */
};

/*
 * Read a stored record: v 1, resource the upstream's url byte for byte,
 * issuer and client_id strings, registered config (and then client_id
 * the configured one), cimd or dcr (and then no client_id configured),
 * tokens printable within OAUTHC_TOKEN_MAX.  0, or -1 with why set (the
 * record is then discarded).
 */
int		 oauthc_record_read(json_t *rec, const char *resource,
		    const char *config_client_id, struct oauthc_record *,
		    char *why, size_t);
/* The record as JSON (new). */
json_t		*oauthc_record_json(const struct oauthc_record *);

#endif
