/* SPDX-License-Identifier: ISC */
/*
 * JWS compact signatures verified with OpenSSL (RFC 7515, RFC 7518
 * section 3, RFC 8037) and JWT access tokens' claims checked (RFC 7519,
 * RFC 9068, RFC 8707).  The policy is in jose.h.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>

#include "jose_priv.h"
#include "xmalloc.h"

/* The latest NumericDate taken: 9999-12-31T23:59:59Z. */
#define DATE_MAX	253402300799LL
#define LEEWAY_MAX	86400
/* The longest signature: RSA at JOSE_RSA_MAX_BITS. */
#define SIG_MAX		(JOSE_RSA_MAX_BITS / 8)

static const char *const result_names[] = {
	"ok", "too_long", "malformed", "encrypted", "alg_none", "alg_hmac",
	"alg_unknown", "alg_denied", "crit", "typ", "kid_unknown",
	"kid_ambiguous", "no_key", "signature", "claims", "issuer",
	"audience", "expired", "not_yet_valid", "issued_in_future", "internal"
};

const char *
jose_result_name(enum jose_result r)
{
	if ((size_t)r >= sizeof result_names / sizeof result_names[0])
		return ("unknown");
	return (result_names[r]);
}

/* Turn JOSE's r||s into the DER ECDSA-Sig-Value OpenSSL verifies. */
static unsigned char *
ecdsa_der(const unsigned char *sig, size_t coord, int *derlen)
{
	ECDSA_SIG	*es;
	BIGNUM		*r, *s;
	unsigned char	*der = NULL;

	r = BN_bin2bn(sig, (int)coord, NULL);
	s = BN_bin2bn(sig + coord, (int)coord, NULL);
	if (r == NULL || s == NULL || (es = ECDSA_SIG_new()) == NULL) {
		BN_free(r);
		BN_free(s);
		return (NULL);
	}
	ECDSA_SIG_set0(es, r, s);
	if ((*derlen = i2d_ECDSA_SIG(es, &der)) <= 0)
		der = NULL;
	ECDSA_SIG_free(es);
	return (der);
}

/* Verify one signature with one key: 1 if good, 0 if not, -1 on error. */
static int
verify_one(const struct jose_key *k, const struct jose_alg *a,
    const unsigned char *msg, size_t msglen, const unsigned char *sig,
    size_t siglen)
{
	EVP_MD_CTX	*ctx;
	EVP_PKEY_CTX	*pctx = NULL;
	unsigned char	*der = NULL;
	int		 derlen = 0, rc = -1;

	if ((ctx = EVP_MD_CTX_new()) == NULL)
		return (-1);
	if (a->kty == JOSE_KTY_EC) {
		if ((der = ecdsa_der(sig, a->coord, &derlen)) == NULL)
			goto out;
		sig = der;
		siglen = (size_t)derlen;
	}
	if (EVP_DigestVerifyInit_ex(ctx, &pctx, a->md, NULL, NULL, k->pkey,
	    NULL) != 1)
		goto out;
	if (a->pss && (EVP_PKEY_CTX_set_rsa_padding(pctx,
	    RSA_PKCS1_PSS_PADDING) != 1 ||
	    EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, RSA_PSS_SALTLEN_DIGEST) != 1 ||
	    EVP_PKEY_CTX_set_rsa_mgf1_md_name(pctx, a->md, NULL) != 1))
		goto out;
	rc = EVP_DigestVerify(ctx, sig, siglen, msg, msglen) == 1 ? 1 : 0;
out:
	EVP_MD_CTX_free(ctx);
	OPENSSL_free(der);
	/* A failed verification leaves errors queued for the thread. */
	ERR_clear_error();
	return (rc);
}

/* Check the header's typ against the policy. */
static int
typ_ok(json_t *typ, enum jose_typ want)
{
	const char	*t;

	if (typ == NULL)
		return (want == JOSE_TYP_LAX);
	if (!json_is_string(typ))
		return (0);
	t = json_string_value(typ);
	/* Media types compare without case; the prefix may be left off. */
	if (strncasecmp(t, "application/", 12) == 0)
		t += 12;
	if (strcasecmp(t, "at+jwt") == 0)
		return (1);
	return (want == JOSE_TYP_LAX && strcasecmp(t, "jwt") == 0);
}

/* Decode one part into a new NUL-terminated buffer of at most max bytes. */
static unsigned char *
part(const char *p, size_t len, size_t max, size_t *outlen)
{
	unsigned char	*buf;

	if (jose_b64url_decoded_max(len) > max)
		return (NULL);
	buf = xmalloc(jose_b64url_decoded_max(len) + 1);
	if (jose_b64url_decode(p, len, buf, jose_b64url_decoded_max(len),
	    outlen) == -1) {
		free(buf);
		return (NULL);
	}
	buf[*outlen] = '\0';
	return (buf);
}

/* Read the JOSE header; its alg is checked against algs. */
static enum jose_result
header_parse(const char *p, size_t len, unsigned int algs, enum jose_typ typ,
    json_t **out, unsigned int *bit, char why[JOSE_WHY_MAX])
{
	unsigned char	*buf;
	size_t		 n;
	json_t		*h, *alg, *kid;
	const char	*name;

	if ((buf = part(p, len, JOSE_HEADER_MAX, &n)) == NULL) {
		jose_why(why, "the header is not base64url of at most %d bytes",
		    JOSE_HEADER_MAX);
		return (JOSE_ERR_MALFORMED);
	}
	if (!jose_json_depth_ok(buf, n, JOSE_HEADER_DEPTH)) {
		free(buf);
		jose_why(why, "the header nests deeper than %d",
		    JOSE_HEADER_DEPTH);
		return (JOSE_ERR_MALFORMED);
	}
	h = json_loadb((const char *)buf, n, JSON_REJECT_DUPLICATES, NULL);
	free(buf);
	if (!json_is_object(h)) {
		json_decref(h);
		jose_why(why, "the header is not a JSON object with each member "
		    "once");
		return (JOSE_ERR_MALFORMED);
	}
	*out = h;
	if (!json_is_string(alg = json_object_get(h, "alg"))) {
		jose_why(why, "the header has no alg string");
		return (JOSE_ERR_MALFORMED);
	}
	name = json_string_value(alg);
	if (strcmp(name, "none") == 0) {
		jose_why(why, "alg none: an unsigned token");
		return (JOSE_ERR_ALG_NONE);
	}
	if (strcmp(name, "HS256") == 0 || strcmp(name, "HS384") == 0 ||
	    strcmp(name, "HS512") == 0) {
		jose_why(why, "alg %s needs a shared secret: the issuer's keys "
		    "are public", name);
		return (JOSE_ERR_ALG_HMAC);
	}
	if ((*bit = jose_alg_from_name(name)) == 0) {
		jose_why(why, "an algorithm we do not verify");
		return (JOSE_ERR_ALG_UNKNOWN);
	}
	if ((*bit & algs) == 0) {
		jose_why(why, "alg %s is not allowed", jose_alg_name(*bit));
		return (JOSE_ERR_ALG_DENIED);
	}
	if (json_object_get(h, "crit") != NULL) {
		jose_why(why, "a critical header extension (crit), which we do "
		    "not understand");
		return (JOSE_ERR_CRIT);
	}
	if (!typ_ok(json_object_get(h, "typ"), typ)) {
		jose_why(why, typ == JOSE_TYP_AT_JWT ? "typ is not at+jwt" :
		    "typ is none of JWT and at+jwt");
		return (JOSE_ERR_TYP);
	}
	if ((kid = json_object_get(h, "kid")) != NULL &&
	    (!json_is_string(kid) || json_string_length(kid) > JOSE_KID_MAX)) {
		jose_why(why, "kid is not a string of at most %d bytes",
		    JOSE_KID_MAX);
		return (JOSE_ERR_MALFORMED);
	}
	return (JOSE_OK);
}

/*
 * Verify the signature with the keys the header designates (jose.h,
 * "Key selection").
 */
static enum jose_result
signature_check(const struct jose_jwks *set, json_t *h, unsigned int bit,
    const char *token, size_t signedlen, const char *sigp, size_t siglen,
    char why[JOSE_WHY_MAX])
{
	const struct jose_alg	*a = jose_alg_get(bit);
	const struct jose_key	*k, *only = NULL;
	json_t			*kidv = json_object_get(h, "kid");
	const char		*kid = json_string_value(kidv);
	unsigned char		 sig[SIG_MAX];
	size_t			 i, n, bykid = 0, fit = 0, tried = 0;
	int			 r;

	if (jose_b64url_decode(sigp, siglen, sig, sizeof sig, &n) == -1) {
		jose_why(why, "the signature is not base64url of at most %d "
		    "bytes", SIG_MAX);
		return (JOSE_ERR_MALFORMED);
	}
	for (i = 0; i < set->nkeys; i++) {
		k = &set->keys[i];
		if (kid != NULL) {
			if (k->kid == NULL || strcmp(k->kid, kid) != 0)
				continue;
			bykid++;
		}
		if ((k->algs & bit) == 0)
			continue;
		fit++;
		if (kid == NULL) {
			only = k;
			continue;
		}
		if (n != k->siglen)
			continue;
		tried++;
		if ((r = verify_one(k, a, (const unsigned char *)token,
		    signedlen, sig, n)) == 1)
			return (JOSE_OK);
		if (r == -1) {
			jose_why(why, "OpenSSL could not verify");
			return (JOSE_ERR_INTERNAL);
		}
	}
	if (kid != NULL && bykid == 0) {
		jose_why(why, "no key by the token's kid");
		return (JOSE_ERR_KID_UNKNOWN);
	}
	if (fit == 0) {
		jose_why(why, kid != NULL ? "the key by the token's kid is not "
		    "for %s" : "no key for %s", a->name);
		return (JOSE_ERR_NO_KEY);
	}
	if (kid == NULL) {
		if (fit > 1) {
			jose_why(why, "no kid, and %zu keys for %s", fit,
			    a->name);
			return (JOSE_ERR_KID_AMBIGUOUS);
		}
		if (n == only->siglen) {
			tried++;
			if ((r = verify_one(only, a,
			    (const unsigned char *)token, signedlen, sig,
			    n)) == 1)
				return (JOSE_OK);
			if (r == -1) {
				jose_why(why, "OpenSSL could not verify");
				return (JOSE_ERR_INTERNAL);
			}
		}
	}
	if (tried == 0)
		jose_why(why, "a signature of %zu bytes, not what %s with the "
		    "key makes", n, a->name);
	else
		jose_why(why, "the %s signature does not verify", a->name);
	return (JOSE_ERR_SIGNATURE);
}

enum jose_result
jose_jws_verify(const struct jose_jwks *set, unsigned int algs,
    enum jose_typ typ, const char *token, size_t len, json_t **header,
    unsigned char **payload, size_t *payloadlen, char why[JOSE_WHY_MAX])
{
	const char		*d1, *d2;
	json_t			*h = NULL;
	unsigned char		*pl;
	size_t			 i, dots = 0;
	unsigned int		 bit = 0;
	enum jose_result	 r;

	*header = NULL;
	*payload = NULL;
	*payloadlen = 0;
	if (len > JOSE_TOKEN_MAX) {
		jose_why(why, "a token of %zu bytes, over %d", len,
		    JOSE_TOKEN_MAX);
		return (JOSE_ERR_SIZE);
	}
	for (i = 0; i < len; i++)
		if (token[i] == '.')
			dots++;
	if (dots == 4) {
		jose_why(why, "an encrypted token (JWE), not a signed one");
		return (JOSE_ERR_JWE);
	}
	if (dots != 2) {
		jose_why(why, "not three dot-separated parts");
		return (JOSE_ERR_MALFORMED);
	}
	d1 = memchr(token, '.', len);
	d2 = memchr(d1 + 1, '.', len - (size_t)(d1 + 1 - token));
	if ((r = header_parse(token, (size_t)(d1 - token), algs, typ, &h,
	    &bit, why)) != JOSE_OK)
		goto fail;
	if ((r = signature_check(set, h, bit, token, (size_t)(d2 - token),
	    d2 + 1, len - (size_t)(d2 + 1 - token), why)) != JOSE_OK)
		goto fail;
	/* Only a signed payload is read. */
	if ((pl = part(d1 + 1, (size_t)(d2 - d1 - 1), JOSE_TOKEN_MAX,
	    payloadlen)) == NULL) {
		jose_why(why, "the payload is not base64url");
		r = JOSE_ERR_MALFORMED;
		goto fail;
	}
	*header = h;
	*payload = pl;
	return (JOSE_OK);
fail:
	json_decref(h);
	return (r);
}

int
jose_numeric_date(json_t *claims, const char *name, int64_t *out)
{
	json_t	*v = json_object_get(claims, name);
	double	 d;

	if (v == NULL)
		return (0);
	if (json_is_integer(v)) {
		if (json_integer_value(v) < 0 ||
		    json_integer_value(v) > DATE_MAX)
			return (-1);
		*out = (int64_t)json_integer_value(v);
		return (1);
	}
	if (json_is_real(v)) {
		d = json_real_value(v);
		if (!isfinite(d) || d < 0 || d > (double)DATE_MAX)
			return (-1);
		*out = (int64_t)d;	/* d >= 0: the floor */
		return (1);
	}
	return (-1);
}

/* A string claim: 1 if present, 0 if absent, -1 if not a string. */
static int
string_get(json_t *claims, const char *name, const char **out)
{
	json_t	*v = json_object_get(claims, name);

	*out = NULL;
	if (v == NULL)
		return (0);
	if (!json_is_string(v))
		return (-1);
	*out = json_string_value(v);
	return (1);
}

/* Is aud (a string or an array of strings) naming the audience? */
static enum jose_result
audience_check(json_t *aud, const char *want, char why[JOSE_WHY_MAX])
{
	json_t	*v;
	size_t	 i;
	int	 found = 0;

	if (aud == NULL) {
		jose_why(why, "no aud claim");
		return (JOSE_ERR_CLAIMS);
	}
	if (json_is_string(aud)) {
		found = strcmp(json_string_value(aud), want) == 0;
	} else if (json_is_array(aud) && json_array_size(aud) > 0 &&
	    json_array_size(aud) <= JOSE_AUD_MAX) {
		json_array_foreach(aud, i, v) {
			if (!json_is_string(v)) {
				jose_why(why, "aud holds a member that is not "
				    "a string");
				return (JOSE_ERR_CLAIMS);
			}
			if (strcmp(json_string_value(v), want) == 0)
				found = 1;
		}
	} else {
		jose_why(why, "aud is not a string or an array of 1 to %d "
		    "strings", JOSE_AUD_MAX);
		return (JOSE_ERR_CLAIMS);
	}
	if (!found) {
		jose_why(why, "aud does not name this resource");
		return (JOSE_ERR_AUDIENCE);
	}
	return (JOSE_OK);
}

/* Is c a character of RFC 6749's scope-token (NQCHAR)? */
static int
nqchar(unsigned char c)
{
	return (c == 0x21 || (c >= 0x23 && c <= 0x5b) ||
	    (c >= 0x5d && c <= 0x7e));
}

/* Add the space-separated scopes of s to t. */
static int
scopes_add(struct jose_token *t, const char *s, char why[JOSE_WHY_MAX])
{
	size_t	n;

	for (;;) {
		while (*s == ' ')
			s++;
		if (*s == '\0')
			return (0);
		for (n = 0; s[n] != '\0' && s[n] != ' '; n++)
			if (!nqchar((unsigned char)s[n])) {
				jose_why(why, "a scope holds a character RFC "
				    "6749 does not allow");
				return (-1);
			}
		if (t->nscopes == JOSE_SCOPES_MAX) {
			jose_why(why, "more than %d scopes", JOSE_SCOPES_MAX);
			return (-1);
		}
		if (t->scopes == NULL)
			t->scopes = xcalloc(JOSE_SCOPES_MAX, sizeof *t->scopes);
		t->scopes[t->nscopes++] = xstrndup(s, n);
		s += n;
	}
}

/* Read scope, else scp: a space-separated string or an array of them. */
static int
scopes_get(json_t *claims, struct jose_token *t, char why[JOSE_WHY_MAX])
{
	json_t		*v, *e;
	const char	*name = "scope";
	size_t		 i;

	if ((v = json_object_get(claims, name)) == NULL) {
		name = "scp";
		if ((v = json_object_get(claims, name)) == NULL)
			return (0);
	}
	if (json_is_string(v))
		return (scopes_add(t, json_string_value(v), why));
	if (!json_is_array(v)) {
		jose_why(why, "%s is not a string or an array of strings",
		    name);
		return (-1);
	}
	json_array_foreach(v, i, e) {
		if (!json_is_string(e)) {
			jose_why(why, "%s is not a string or an array of "
			    "strings", name);
			return (-1);
		}
		if (scopes_add(t, json_string_value(e), why) == -1)
			return (-1);
	}
	return (0);
}

static void
scopes_free(struct jose_token *t)
{
	size_t	i;

	for (i = 0; i < t->nscopes; i++)
		free(t->scopes[i]);
	free(t->scopes);
	t->scopes = NULL;
	t->nscopes = 0;
}

enum jose_result
jose_claims_check(json_t *claims, const struct jose_policy *pol, int64_t now,
    struct jose_token *t, char why[JOSE_WHY_MAX])
{
	static const char *const strings[] = { "sub", "client_id", "azp",
	    "jti" };
	const char		*s[4];
	int64_t			 leeway = pol->leeway;
	enum jose_result	 r;
	size_t			 i;
	int			 has;

	if (pol->issuer == NULL || pol->audience == NULL) {
		jose_why(why, "no issuer or audience configured");
		return (JOSE_ERR_INTERNAL);
	}
	if (leeway < 0)
		leeway = 0;
	if (leeway > LEEWAY_MAX)
		leeway = LEEWAY_MAX;
	if (!json_is_object(claims)) {
		jose_why(why, "the payload is not a JSON object");
		return (JOSE_ERR_MALFORMED);
	}
	if ((has = string_get(claims, "iss", &t->iss)) != 1) {
		jose_why(why, has == 0 ? "no iss claim" :
		    "iss is not a string");
		return (JOSE_ERR_CLAIMS);
	}
	if (strcmp(t->iss, pol->issuer) != 0) {
		jose_why(why, "iss is not the configured issuer");
		return (JOSE_ERR_ISSUER);
	}
	if ((r = audience_check(json_object_get(claims, "aud"),
	    pol->audience, why)) != JOSE_OK)
		return (r);
	if ((has = jose_numeric_date(claims, "exp", &t->exp)) != 1) {
		jose_why(why, has == 0 ? "no exp claim" :
		    "exp is not a NumericDate");
		return (JOSE_ERR_CLAIMS);
	}
	t->nbf = t->iat = 0;
	if (jose_numeric_date(claims, "nbf", &t->nbf) == -1 ||
	    jose_numeric_date(claims, "iat", &t->iat) == -1) {
		jose_why(why, "nbf or iat is not a NumericDate");
		return (JOSE_ERR_CLAIMS);
	}
	for (i = 0; i < sizeof strings / sizeof strings[0]; i++)
		if (string_get(claims, strings[i], &s[i]) == -1) {
			jose_why(why, "%s is not a string", strings[i]);
			return (JOSE_ERR_CLAIMS);
		}
	if (now >= t->exp + leeway) {
		jose_why(why, "expired %lld s ago", (long long)(now - t->exp));
		return (JOSE_ERR_EXPIRED);
	}
	if (t->nbf != 0 && now + leeway < t->nbf) {
		jose_why(why, "not valid for another %lld s",
		    (long long)(t->nbf - now));
		return (JOSE_ERR_NOT_YET);
	}
	if (t->iat != 0 && t->iat > now + leeway) {
		jose_why(why, "issued %lld s in the future",
		    (long long)(t->iat - now));
		return (JOSE_ERR_IAT);
	}
	t->sub = s[0];
	t->client_id = s[1] != NULL ? s[1] : s[2];
	t->jti = s[3];
	t->scopes = NULL;
	t->nscopes = 0;
	if (scopes_get(claims, t, why) == -1) {
		scopes_free(t);
		return (JOSE_ERR_CLAIMS);
	}
	return (JOSE_OK);
}

enum jose_result
jose_jwt_verify(const struct jose_jwks *set, const struct jose_policy *pol,
    const char *token, size_t len, int64_t now, struct jose_token **out,
    char why[JOSE_WHY_MAX])
{
	struct jose_token	*t;
	json_t			*h, *claims;
	unsigned char		*pl;
	size_t			 plen;
	enum jose_result	 r;

	*out = NULL;
	if ((r = jose_jws_verify(set, pol->algs, pol->typ, token, len, &h,
	    &pl, &plen, why)) != JOSE_OK)
		return (r);
	if (!jose_json_depth_ok(pl, plen, JOSE_PAYLOAD_DEPTH)) {
		free(pl);
		json_decref(h);
		jose_why(why, "the claims nest deeper than %d",
		    JOSE_PAYLOAD_DEPTH);
		return (JOSE_ERR_MALFORMED);
	}
	claims = json_loadb((const char *)pl, plen, JSON_REJECT_DUPLICATES,
	    NULL);
	free(pl);
	if (claims == NULL) {
		json_decref(h);
		jose_why(why, "the claims are not JSON with each member once");
		return (JOSE_ERR_MALFORMED);
	}
	t = xcalloc(1, sizeof *t);
	t->header = h;
	t->claims = claims;
	t->alg = jose_alg_from_name(json_string_value(json_object_get(h,
	    "alg")));
	t->kid = json_string_value(json_object_get(h, "kid"));
	if ((r = jose_claims_check(claims, pol, now, t, why)) != JOSE_OK) {
		jose_token_free(t);
		return (r);
	}
	*out = t;
	return (JOSE_OK);
}

void
jose_token_free(struct jose_token *t)
{
	if (t == NULL)
		return;
	scopes_free(t);
	json_decref(t->header);
	json_decref(t->claims);
	free(t);
}

int
jose_token_has_scope(const struct jose_token *t, const char *scope)
{
	size_t	i;

	for (i = 0; i < t->nscopes; i++)
		if (strcmp(t->scopes[i], scope) == 0)
			return (1);
	return (0);
}

json_t *
jose_token_claim(const struct jose_token *t, const char *name)
{
	return (json_object_get(t->claims, name));
}
