/* SPDX-License-Identifier: ISC */
/*
 * Fuzz common/jose (jwk.c, jwt.c).  The first byte picks what the rest
 * is (bits 0-1):
 *
 *   0  a JWK Set, and the same text as one JWK: what is taken holds 1 to
 *      JOSE_JWKS_KEYS keys and a clean note; what is refused says why.
 *   1  a token, verified against a set of an RSA, a P-256 and an Ed25519
 *      key: a verdict in range and a clean message; jose_jws_verify
 *      agrees with jose_jwt_verify up to the claims.
 *   2  a JOSE header and claims (split at the first NUL; without one, the
 *      whole is the claims under {"alg":"EdDSA","kid":"fz"}), signed here
 *      with the set's Ed25519 key, so that the claims are read: a token
 *      taken has the configured issuer and audience, an exp not past,
 *      scopes that are RFC 6749 scope-tokens, and jose_claims_check
 *      agrees; bit 2 asks for typ at+jwt.
 *   3  base64url: what decodes encodes back to the same text; the
 *      encoding of any bytes decodes back to them.
 *
 * Messages never hold '"', '\' or a control character.  The harness
 * signs (OpenSSL); common/jose only verifies.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "b64.h"
#include "jose.h"

#define CHECK(x) do {							\
	if (!(x)) {							\
		fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__,	\
		    __LINE__, #x);					\
		abort();						\
	}								\
} while (0)

#define NOW	1800000000LL
#define ISS	"https://idp.fuzz"
#define AUD	"https://gw.fuzz/mcp"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* The set's keys: an RSA key made by OpenSSL, RFC 7515's P-256 key. */
static const char rsa_jwk[] = "{\"kty\":\"RSA\",\"kid\":\"rsa\",\"e\":\"AQAB\","
    "\"n\":\""
    "mMLjO5N0v64awDLYUwRQrT4m35dD1gpNNyv75hBSQdRKZ2gHyjOzAUWJkt0rvXTEKMs2"
    "pV-3ftBn1WR6svqB7vZKtdTNZXCiIRbp-drrt-rcxPOuJtXU7fmAJ9L3jRq_th99ns5a"
    "qn50qdGPuXLnd3in8rfPvh7ktEKg2vYXRQ1YzW6gi-chBlWlh9gvP2FYpo359lJFivJB"
    "dduYEaxunWA3HcEBf5wxQtG-RHZbUC8HwkdR5abK81Ff9ApHSS93WvrzhA3Ir8nXp08U"
    "GaUAEsvxuunuKe9HUmCD7waNiqT6u0YvI49ZJRCYpxmC-9uE153HNGJ6Ue3yYsZaq7gO"
    "zQ\"}";
static const char p256_jwk[] = "{\"kty\":\"EC\",\"kid\":\"p256\",\"crv\":"
    "\"P-256\",\"x\":\"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU\","
    "\"y\":\"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0\"}";
/* The Ed25519 key the harness signs with: RFC 8032's first test key. */
static const unsigned char ed_seed[32] = {
	0x9d, 0x61, 0xb1, 0x9d, 0xef, 0xfd, 0x5a, 0x60, 0xba, 0x84, 0x4a, 0xf4,
	0x92, 0xec, 0x2c, 0xc4, 0x44, 0x49, 0xc5, 0x69, 0x7b, 0x32, 0x69, 0x19,
	0x70, 0x3b, 0xac, 0x03, 0x1c, 0xae, 0x7f, 0x60
};
static const char ed_jwk[] = "{\"kty\":\"OKP\",\"kid\":\"fz\",\"crv\":"
    "\"Ed25519\",\"x\":\"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo\"}";

static struct jose_jwks	*set;
static EVP_PKEY		*ed;
static const struct jose_policy policy = {
	ISS, AUD, JOSE_ALGS_ALL, JOSE_TYP_LAX, 30
};

static void
init(void)
{
	char	text[2048], why[JOSE_WHY_MAX];

	if (set != NULL)
		return;
	snprintf(text, sizeof text, "{\"keys\":[%s,%s,%s]}", rsa_jwk, p256_jwk,
	    ed_jwk);
	set = jose_jwks_parse(text, strlen(text), why);
	if (set == NULL)
		fprintf(stderr, "fuzz_jose: %s\n", why);
	CHECK(set != NULL && jose_jwks_count(set) == 3);
	ed = EVP_PKEY_new_raw_private_key_ex(NULL, "ED25519", NULL, ed_seed,
	    sizeof ed_seed);
	CHECK(ed != NULL);
}

static void
why_clean(const char *why)
{
	const char	*p;

	CHECK(*why != '\0');
	CHECK(strlen(why) < JOSE_WHY_MAX);
	for (p = why; *p != '\0'; p++)
		CHECK(*p != '"' && *p != '\\' && (unsigned char)*p >= 0x20 &&
		    (unsigned char)*p < 0x7f);
}

static void
fuzz_jwks(const char *p, size_t n)
{
	struct jose_jwks	*s;
	char			 why[JOSE_WHY_MAX];

	if ((s = jose_jwks_parse(p, n, why)) == NULL)
		why_clean(why);
	else {
		CHECK(jose_jwks_count(s) >= 1 &&
		    jose_jwks_count(s) <= JOSE_JWKS_KEYS);
		if (*jose_jwks_note(s) != '\0')
			why_clean(jose_jwks_note(s));
		jose_jwks_free(s);
	}
	if ((s = jose_jwk_parse(p, n, why)) == NULL)
		why_clean(why);
	else {
		CHECK(jose_jwks_count(s) == 1);
		jose_jwks_free(s);
	}
}

/* Verify a token both ways and check what is promised. */
static void
verify(const char *tok, size_t n, const struct jose_policy *pol)
{
	struct jose_token	*t = NULL, t2;
	enum jose_result	 r, rj;
	json_t			*h, *claims;
	unsigned char		*pl;
	size_t			 plen, i, k;
	char			 why[JOSE_WHY_MAX], why2[JOSE_WHY_MAX];

	r = jose_jwt_verify(set, pol, tok, n, NOW, &t, why);
	CHECK(r >= JOSE_OK && r <= JOSE_ERR_INTERNAL);
	CHECK(strcmp(jose_result_name(r), "unknown") != 0);
	rj = jose_jws_verify(set, pol->algs, pol->typ, tok, n, &h, &pl, &plen,
	    why2);
	if (r != JOSE_OK) {
		CHECK(t == NULL);
		why_clean(why);
	}
	if (rj != JOSE_OK) {
		why_clean(why2);
		CHECK(h == NULL && pl == NULL);
		/* Up to the claims, the same verdict. */
		CHECK(r == rj);
		return;
	}
	CHECK(json_is_object(h) && pl != NULL && pl[plen] == '\0');
	/* The claims checked alone agree with the whole verification. */
	claims = json_loadb((const char *)pl, plen, JSON_REJECT_DUPLICATES,
	    NULL);
	if (claims != NULL && r != JOSE_ERR_MALFORMED) {
		memset(&t2, 0, sizeof t2);
		t2.claims = claims;
		CHECK(jose_claims_check(claims, pol, NOW, &t2, why2) == r);
		for (k = 0; k < t2.nscopes; k++)
			free(t2.scopes[k]);
		free(t2.scopes);
	}
	json_decref(claims);
	json_decref(h);
	free(pl);
	if (r != JOSE_OK)
		return;
	CHECK(t != NULL && json_is_object(t->claims));
	CHECK(strcmp(t->iss, ISS) == 0);
	CHECK(NOW < t->exp + pol->leeway);
	CHECK(t->nbf == 0 || NOW + pol->leeway >= t->nbf);
	CHECK(t->nscopes <= JOSE_SCOPES_MAX);
	CHECK(jose_alg_name(t->alg) != NULL && (t->alg & pol->algs));
	for (i = 0; i < t->nscopes; i++) {
		CHECK(*t->scopes[i] != '\0');
		for (k = 0; t->scopes[i][k] != '\0'; k++)
			CHECK(t->scopes[i][k] > 0x20 && t->scopes[i][k] < 0x7f &&
			    t->scopes[i][k] != '"' && t->scopes[i][k] != '\\');
		CHECK(jose_token_has_scope(t, t->scopes[i]));
	}
	jose_token_free(t);
}

/* Sign header.claims with the Ed25519 key and verify. */
static void
fuzz_signed(const char *p, size_t n, int strict)
{
	static const char	 defhdr[] = "{\"alg\":\"EdDSA\",\"kid\":\"fz\"}";
	struct jose_policy	 pol = policy;
	const char		*hdr = defhdr, *nul, *cl = p;
	size_t			 hlen = sizeof defhdr - 1, clen = n, o, siglen;
	unsigned char		 sig[64];
	char			*tok;
	EVP_MD_CTX		*ctx;

	if ((nul = memchr(p, '\0', n)) != NULL) {
		hdr = p;
		hlen = (size_t)(nul - p);
		cl = nul + 1;
		clen = n - hlen - 1;
	}
	if (hlen > JOSE_HEADER_MAX + 16 || clen > JOSE_TOKEN_MAX)
		return;
	tok = malloc((hlen + clen) * 4 / 3 + 8 + 90);
	CHECK(tok != NULL);
	o = b64url_encode((const unsigned char *)hdr, hlen, tok);
	tok[o++] = '.';
	o += b64url_encode((const unsigned char *)cl, clen, tok + o);
	ctx = EVP_MD_CTX_new();
	siglen = sizeof sig;
	CHECK(ctx != NULL);
	CHECK(EVP_DigestSignInit_ex(ctx, NULL, NULL, NULL, NULL, ed, NULL) == 1);
	CHECK(EVP_DigestSign(ctx, sig, &siglen, (unsigned char *)tok, o) == 1);
	EVP_MD_CTX_free(ctx);
	tok[o++] = '.';
	o += b64url_encode(sig, siglen, tok + o);
	if (strict)
		pol.typ = JOSE_TYP_AT_JWT;
	verify(tok, o, &pol);
	free(tok);
}

static void
fuzz_b64(const char *p, size_t n)
{
	unsigned char	*out = malloc(n + 1);
	char		*again = malloc(n * 2 + 8);
	size_t		 len;

	CHECK(out != NULL && again != NULL);
	if (jose_b64url_decode(p, n, out, n, &len) == 0) {
		CHECK(len == jose_b64url_decoded_max(n));
		CHECK(b64url_encode(out, len, again) == n);
		CHECK(memcmp(again, p, n) == 0);
	}
	/* Any bytes encode to text that decodes back to them. */
	len = b64url_encode((const unsigned char *)p, n, again);
	CHECK(jose_b64url_decode(again, len, out, n, &len) == 0);
	CHECK(len == n && memcmp(out, p, n) == 0);
	free(out);
	free(again);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char	*p = (const char *)data + 1;
	size_t		 n;

	if (size == 0)
		return (0);
	init();
	n = size - 1;
	switch (data[0] & 3) {
	case 0:
		fuzz_jwks(p, n);
		break;
	case 1:
		verify(p, n, &policy);
		break;
	case 2:
		fuzz_signed(p, n, data[0] & 4);
		break;
	case 3:
		fuzz_b64(p, n);
		break;
	}
	return (0);
}
