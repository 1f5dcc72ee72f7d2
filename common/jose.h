/* SPDX-License-Identifier: ISC */
/*
 * JOSE for a resource server: JSON Web Keys and Key Sets (RFC 7517, 7518,
 * 8037) read into OpenSSL keys, JWS compact signatures verified (RFC
 * 7515) and JWT access tokens validated (RFC 7519, the RFC 9068 profile,
 * RFC 8707 audiences).  The gateway only verifies: nothing here signs.
 *
 * Pure functions: no I/O, no clock (the caller passes the time), no
 * global state.  Signatures are checked by OpenSSL 3 (EVP_DigestVerify);
 * base64url and the JSON are read here, strictly and within bounds.
 * Built into libcommon_jose.a, which links libcrypto and which
 * mcp-worker-stdio does not link.
 *
 * Policy, decided here once (doc/architecture.md, "Tokens"):
 * - Algorithms are RS256/384/512, PS256/384/512, ES256/384/512, EdDSA,
 *   Ed25519 and Ed448 (RFC 9864).  "none" and HMAC (HS*) are refused
 *   whatever the allow-list says: the issuer's keys are public.  An
 *   algorithm must be in the caller's allow-list, fit the key's type and
 *   curve, and equal the key's "alg" where the key names one.
 * - Keys: RSA of 2048 to 8192 bits; EC on P-256, P-384 and P-521 (the
 *   point checked by OpenSSL); OKP Ed25519 and Ed448.  A key whose "use"
 *   is not "sig", whose "key_ops" lacks "verify", or whose "alg" is not a
 *   signature algorithm, is not used.  A key that carries private members
 *   (d, p, q, dp, dq, qi, oth, k) is refused: a provider that publishes
 *   them has lost them, and anyone can sign.  In a set, an unusable key is
 *   skipped (RFC 7517, section 5) and counted in the set's note; a set
 *   with no usable key is refused, so the caller keeps the set it had.
 * - Key selection: a token with a "kid" is checked against the keys with
 *   exactly that kid which fit its algorithm, in the set's order, until
 *   one verifies (JOSE_ERR_KID_UNKNOWN if the set has no key by that kid,
 *   for the caller to refresh the set at its bounded rate).  A token
 *   without a kid is checked only when exactly one key of the set fits
 *   its algorithm; with several it is refused (JOSE_ERR_KID_AMBIGUOUS):
 *   a token never costs more verifications than keys share its kid, and
 *   a kid-less token exactly one.
 * - "crit" is refused: no extension is understood.  "typ" per policy.
 * - Claims: iss equal to the configured issuer, byte for byte; aud (a
 *   string or an array of strings) holding the configured audience; exp
 *   required; exp, nbf and iat with the leeway; registered claims of the
 *   wrong type refused; duplicate members refused.
 * - Messages (why) never hold text from the token or the key set, only
 *   ours and numbers, and none of '"' or '\', so that they may go into a
 *   log line and into WWW-Authenticate's error_description as they are.
 */
#ifndef MCPS_JOSE_H
#define MCPS_JOSE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#define JOSE_TOKEN_MAX		16384	/* a token's bytes, refused before */
#define JOSE_HEADER_MAX		2048	/* the decoded JOSE header */
#define JOSE_HEADER_DEPTH	4	/* its JSON nesting */
#define JOSE_PAYLOAD_DEPTH	16	/* the claims' JSON nesting */
#define JOSE_JWKS_MAX		(256 * 1024)	/* a JWK Set's text */
#define JOSE_JWKS_KEYS		64	/* entries in a JWK Set */
#define JOSE_KID_MAX		256	/* a kid's bytes */
#define JOSE_RSA_MIN_BITS	2048
#define JOSE_RSA_MAX_BITS	8192
#define JOSE_AUD_MAX		64	/* entries of an aud array */
#define JOSE_SCOPES_MAX		256	/* scopes of one token */
#define JOSE_WHY_MAX		160	/* a message, with its NUL */

/* Signature algorithms, as bits of an allow-list. */
#define JOSE_RS256	0x0001
#define JOSE_RS384	0x0002
#define JOSE_RS512	0x0004
#define JOSE_PS256	0x0008
#define JOSE_PS384	0x0010
#define JOSE_PS512	0x0020
#define JOSE_ES256	0x0040
#define JOSE_ES384	0x0080
#define JOSE_ES512	0x0100
#define JOSE_EDDSA	0x0200	/* "EdDSA" (RFC 8037): Ed25519 or Ed448 */
#define JOSE_ED25519	0x0400	/* "Ed25519" (RFC 9864) */
#define JOSE_ED448	0x0800	/* "Ed448" (RFC 9864) */
#define JOSE_ALGS_ALL	0x0fff

/* What the JOSE header's typ must be. */
enum jose_typ {
	/* Absent, "JWT" or "at+jwt": what most providers send (Keycloak,
	 * Entra ID, Okta send "JWT"); any other type, such as an ID token's
	 * or a logout token's explicit type, is refused. */
	JOSE_TYP_LAX = 0,
	/* "at+jwt" or "application/at+jwt" (RFC 9068, section 2.1). */
	JOSE_TYP_AT_JWT
};

enum jose_result {
	JOSE_OK = 0,
	JOSE_ERR_SIZE,		/* too long, before any parse */
	JOSE_ERR_MALFORMED,	/* not three base64url parts of JSON objects */
	JOSE_ERR_JWE,		/* five parts: an encrypted token */
	JOSE_ERR_ALG_NONE,	/* alg "none" */
	JOSE_ERR_ALG_HMAC,	/* HS256/384/512: a shared secret */
	JOSE_ERR_ALG_UNKNOWN,	/* an algorithm we do not know */
	JOSE_ERR_ALG_DENIED,	/* known, not in the allow-list */
	JOSE_ERR_CRIT,		/* a critical extension */
	JOSE_ERR_TYP,		/* typ refused by the policy */
	JOSE_ERR_KID_UNKNOWN,	/* no key by that kid: refresh the set */
	JOSE_ERR_KID_AMBIGUOUS,	/* no kid, several keys fit */
	JOSE_ERR_NO_KEY,	/* no key fits the algorithm */
	JOSE_ERR_SIGNATURE,	/* the signature does not verify */
	JOSE_ERR_CLAIMS,	/* a registered claim missing or mistyped */
	JOSE_ERR_ISSUER,
	JOSE_ERR_AUDIENCE,
	JOSE_ERR_EXPIRED,
	JOSE_ERR_NOT_YET,	/* nbf in the future */
	JOSE_ERR_IAT,		/* issued in the future */
	JOSE_ERR_INTERNAL	/* OpenSSL failed */
};

/* A JWK Set, read-only once parsed.  Opaque. */
struct jose_jwks;

/* What a token's verification is held to.  Strings are borrowed. */
struct jose_policy {
	const char	*issuer;	/* exact "iss"; required */
	const char	*audience;	/* the resource URL in "aud"; required */
	unsigned int	 algs;		/* allow-list, JOSE_RS256 | ... */
	enum jose_typ	 typ;
	int64_t		 leeway;	/* seconds, for exp, nbf and iat */
};

/*
 * A verified token.  Owned by the caller (jose_token_free).  The strings
 * point into claims and header, and live as long as the token.
 */
struct jose_token {
	json_t		*header;	/* the JOSE header object */
	json_t		*claims;	/* the payload object, every claim */
	unsigned int	 alg;		/* JOSE_RS256 ... */
	const char	*kid;		/* NULL if none */
	const char	*iss;
	const char	*sub;		/* NULL if none */
	const char	*client_id;	/* client_id, else azp; NULL if none */
	const char	*jti;		/* NULL if none */
	int64_t		 exp;
	int64_t		 iat;		/* 0 if none */
	int64_t		 nbf;		/* 0 if none */
	/* "scope" (a space-separated string, or an array of strings), else
	 * "scp" (Entra ID: a string; Okta: an array), split and checked
	 * against RFC 6749's scope-token; owned. */
	char		**scopes;
	size_t		 nscopes;
};

/*
 * Decode unpadded base64url (RFC 4648, section 5; RFC 7515, section 2)
 * strictly: no padding, no whitespace, no other alphabet, no leftover
 * bits set.  Writes at most outmax bytes.  Returns 0 and sets *outlen, or
 * -1.
 */
int		 jose_b64url_decode(const char *in, size_t len,
		    unsigned char *out, size_t outmax, size_t *outlen);
/* The decoded size of len base64url characters (an upper bound). */
size_t		 jose_b64url_decoded_max(size_t len);

/* An algorithm's bit from its name; 0 if unknown (and for none, HS*). */
unsigned int	 jose_alg_from_name(const char *);
/* An algorithm's name from its bit; NULL if not exactly one known bit. */
const char	*jose_alg_name(unsigned int);
/*
 * Parse a space- or comma-separated list of algorithm names into bits.
 * Returns 0, or -1 with why set (unknown names, none and HS* refused).
 */
int		 jose_algs_parse(const char *, unsigned int *algs,
		    char why[JOSE_WHY_MAX]);

/*
 * Parse a JWK Set ({"keys": [...]}) of len bytes.  Returns a new set
 * (caller frees), or NULL with why set.  Unusable keys are skipped and
 * noted; a set of more than JOSE_JWKS_KEYS keys or JOSE_JWKS_MAX bytes,
 * or with no usable key, is refused.
 */
struct jose_jwks *jose_jwks_parse(const char *json, size_t len,
		    char why[JOSE_WHY_MAX]);
/* Parse one JWK into a set of one key, refusing it if it is unusable. */
struct jose_jwks *jose_jwk_parse(const char *json, size_t len,
		    char why[JOSE_WHY_MAX]);
void		 jose_jwks_free(struct jose_jwks *);
/* The number of usable keys. */
size_t		 jose_jwks_count(const struct jose_jwks *);
/* Does the set hold a usable key with this kid? */
int		 jose_jwks_has_kid(const struct jose_jwks *, const char *);
/* Which keys were skipped and the first reason ("" if none); borrowed. */
const char	*jose_jwks_note(const struct jose_jwks *);

/*
 * Verify a JWS compact serialisation's header and signature against the
 * set: alg in algs and fitting the key, typ per typ, no crit.  On JOSE_OK
 * *header and *payload are new (caller frees): the header object and the
 * payload's decoded bytes (NUL-terminated, *payloadlen without it).
 */
enum jose_result jose_jws_verify(const struct jose_jwks *, unsigned int algs,
		    enum jose_typ typ, const char *token, size_t len,
		    json_t **header, unsigned char **payload,
		    size_t *payloadlen, char why[JOSE_WHY_MAX]);

/*
 * Verify a JWT access token: jose_jws_verify, then the claims against the
 * policy at now (Unix seconds).  On JOSE_OK *out is a new token (caller
 * frees with jose_token_free).  Otherwise why says why, in words safe for
 * logs and for error_description.
 */
enum jose_result jose_jwt_verify(const struct jose_jwks *,
		    const struct jose_policy *, const char *token, size_t len,
		    int64_t now, struct jose_token **out,
		    char why[JOSE_WHY_MAX]);
/*
 * Read a NumericDate (RFC 7519, 2) from 0 to the end of year 9999, whole
 * seconds or not: 1 if present, 0 if absent, -1 if not one.
 */
int		 jose_numeric_date(json_t *, const char *name, int64_t *out);
/* Check the claims of a verified payload; fills t (see jose_jwt_verify). */
enum jose_result jose_claims_check(json_t *claims, const struct jose_policy *,
		    int64_t now, struct jose_token *t, char why[JOSE_WHY_MAX]);
void		 jose_token_free(struct jose_token *);
/* Does the token grant this scope? */
int		 jose_token_has_scope(const struct jose_token *, const char *);
/* A claim by name, for mapping to rules (borrowed; NULL if absent). */
json_t		*jose_token_claim(const struct jose_token *, const char *);

/* A result's short name, for metrics and logs ("expired", ...). */
const char	*jose_result_name(enum jose_result);

#endif
