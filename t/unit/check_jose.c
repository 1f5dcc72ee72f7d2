/* SPDX-License-Identifier: ISC */
/*
 * Unit tests for common/jose (jwk.c, jwt.c): strict base64url; JWKs of
 * every type read, and each refusal (small RSA, private members, enc
 * keys, wrong alg, points off the curve, bounds); JWS verification for
 * every algorithm with keys and signatures made here by OpenSSL (the
 * tests sign; the library never does); the classic attacks (alg none,
 * HMAC with the public key, alg not allowed, alg and key type apart,
 * crit, typ, unknown and ambiguous kid, tampering, another key); JWT
 * claims (iss, aud, exp, nbf, iat, leeway, scopes); messages that never
 * carry the token's text.  The cross-check against a JOSE library we did
 * not write is t/interop/jose.test.mjs.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include "jose.h"
#include "jose_sign.h"

#define NOW	1800000000LL
#define ISS	"https://idp.example/realms/mcp"
#define AUD	"https://gw.example/mcp"

enum { K_RSA, K_RSA2, K_P256, K_P384, K_P521, K_ED25519, K_ED448, K_RSA1024,
	K_N };
static EVP_PKEY		*keys[K_N];
static const struct jose_policy policy = {
	ISS, AUD, JOSE_ALGS_ALL, JOSE_TYP_LAX, 30
};

/* A payload with the usual claims and extra members (",..." or ""). */
static char *
claims(const char *extra)
{
	char	*out;

	ck_assert_int_gt(asprintf(&out, "{\"iss\":\"" ISS "\",\"aud\":\"" AUD
	    "\",\"sub\":\"alice\",\"exp\":%lld,\"iat\":%lld%s}", NOW + 300,
	    NOW - 10, extra), 0);
	return (out);
}

static struct jose_jwks *
set_of(const char *json)
{
	char			 why[JOSE_WHY_MAX] = "";
	struct jose_jwks	*s = jose_jwks_parse(json, strlen(json), why);

	ck_assert_msg(s != NULL, "jwks refused: %s", why);
	return (s);
}

/* A set of one key: k with kid and extra members. */
static struct jose_jwks *
set1(EVP_PKEY *k, const char *kid, const char *extra)
{
	char			*j = jwk(k, kid, extra), *text;
	struct jose_jwks	*s;

	ck_assert_int_gt(asprintf(&text, "{\"keys\":[%s]}", j), 0);
	s = set_of(text);
	free(j);
	free(text);
	return (s);
}

/* A message is ours: no quote, backslash or control, and not empty. */
static void
why_clean(const char *why)
{
	const char	*p;

	ck_assert_int_gt(strlen(why), 0);
	for (p = why; *p != '\0'; p++)
		ck_assert_msg(*p != '"' && *p != '\\' && *p >= 0x20 && *p < 0x7f,
		    "bad byte in %s", why);
}

/* Verify token and expect r; the token on success is returned. */
static struct jose_token *
expect(const struct jose_jwks *set, const struct jose_policy *pol,
    const char *token, enum jose_result want)
{
	struct jose_token	*t = NULL;
	char			 why[JOSE_WHY_MAX] = "";
	enum jose_result	 r;

	r = jose_jwt_verify(set, pol, token, strlen(token), NOW, &t, why);
	ck_assert_msg(r == want, "got %s (%s), want %s", jose_result_name(r),
	    why, jose_result_name(want));
	if (r != JOSE_OK) {
		ck_assert_ptr_null(t);
		why_clean(why);
	} else
		ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(ERR_peek_error(), 0);
	return (t);
}

/* Sign and verify with one key and one algorithm, expecting want. */
static void
roundtrip(int key, const char *alg, const char *kid, enum jose_result want)
{
	struct jose_jwks	*s = set1(keys[key], kid, "");
	char			 hdr[128], *c = claims(""), *tok;

	if (kid != NULL)
		snprintf(hdr, sizeof hdr, "{\"alg\":\"%s\",\"kid\":\"%s\"}", alg,
		    kid);
	else
		snprintf(hdr, sizeof hdr, "{\"alg\":\"%s\"}", alg);
	tok = sign(keys[key], alg, hdr, c);
	jose_token_free(expect(s, &policy, tok, want));
	free(tok);
	free(c);
	jose_jwks_free(s);
}

START_TEST(test_b64url)
{
	static const struct { const char *in, *out; } good[] = {
		{ "", "" }, { "Zg", "f" }, { "Zm8", "fo" }, { "Zm9v", "foo" },
		{ "Zm9vYg", "foob" }, { "Zm9vYmE", "fooba" },
		{ "Zm9vYmFy", "foobar" }, { "-_8", "\xfb\xff" },
	};
	static const char *const bad[] = { "Zg==", "Zh", "Zm9", "Z", "Zm9v=",
	    " Zg", "Zg ", "Zm+v", "Zm/v", "Zm9\n", "Zm\0v" };
	unsigned char	out[16];
	size_t		i, n;

	for (i = 0; i < sizeof good / sizeof good[0]; i++) {
		ck_assert_int_eq(jose_b64url_decode(good[i].in,
		    strlen(good[i].in), out, sizeof out, &n), 0);
		ck_assert_uint_eq(n, strlen(good[i].out));
		ck_assert_mem_eq(out, good[i].out, n);
		ck_assert_uint_eq(jose_b64url_decoded_max(strlen(good[i].in)),
		    n);
	}
	/* "Zm9" has leftover bits set ("fo" is "Zm8"); "Zh" likewise. */
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
		ck_assert_msg(jose_b64url_decode(bad[i], i == 10 ? 4 :
		    strlen(bad[i]), out, sizeof out, &n) == -1, "took %s",
		    bad[i]);
	/* Never past outmax. */
	ck_assert_int_eq(jose_b64url_decode("Zm9vYmFy", 8, out, 5, &n), -1);
	ck_assert_int_eq(jose_b64url_decode("Zm9vYmFy", 8, out, 6, &n), 0);
}
END_TEST

START_TEST(test_algs)
{
	char		why[JOSE_WHY_MAX];
	unsigned int	a, i;

	ck_assert_int_eq(jose_algs_parse("RS256 ES256,EdDSA  PS512", &a, why),
	    0);
	ck_assert_uint_eq(a, JOSE_RS256 | JOSE_ES256 | JOSE_EDDSA |
	    JOSE_PS512);
	ck_assert_int_eq(jose_algs_parse("RS256 none", &a, why), -1);
	ck_assert_ptr_nonnull(strstr(why, "none"));
	ck_assert_int_eq(jose_algs_parse("HS256", &a, why), -1);
	ck_assert_ptr_nonnull(strstr(why, "shared secret"));
	ck_assert_int_eq(jose_algs_parse("RS257", &a, why), -1);
	ck_assert_int_eq(jose_algs_parse(" , ", &a, why), -1);
	ck_assert_int_eq(jose_alg_from_name("none"), 0);
	ck_assert_int_eq(jose_alg_from_name("HS256"), 0);
	ck_assert_int_eq(jose_alg_from_name("rs256"), 0);
	for (i = 1; i <= JOSE_ALGS_ALL; i <<= 1)
		ck_assert_uint_eq(jose_alg_from_name(jose_alg_name(i)), i);
	ck_assert_ptr_null(jose_alg_name(JOSE_RS256 | JOSE_RS384));
	for (i = 0; i <= JOSE_ERR_INTERNAL; i++)
		ck_assert_str_ne(jose_result_name(i), "unknown");
}
END_TEST

/* One JWK refused, with a word of the reason. */
static void
jwk_refused(const char *json, const char *word)
{
	char			 why[JOSE_WHY_MAX] = "";
	struct jose_jwks	*s = jose_jwk_parse(json, strlen(json), why);

	ck_assert_msg(s == NULL, "took %s", json);
	ck_assert_msg(strstr(why, word) != NULL, "%s: %s", word, why);
	why_clean(why);
	ck_assert_uint_eq(ERR_peek_error(), 0);
}

START_TEST(test_jwk_types)
{
	static const int	 ok[] = { K_RSA, K_P256, K_P384, K_P521,
	    K_ED25519, K_ED448 };
	char			*j, why[JOSE_WHY_MAX];
	struct jose_jwks	*s;
	size_t			 i;

	for (i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		j = jwk(keys[ok[i]], "k1", ",\"use\":\"sig\"");
		s = jose_jwk_parse(j, strlen(j), why);
		ck_assert_msg(s != NULL, "%s: %s", j, why);
		ck_assert_uint_eq(jose_jwks_count(s), 1);
		ck_assert_int_eq(jose_jwks_has_kid(s, "k1"), 1);
		ck_assert_int_eq(jose_jwks_has_kid(s, "k2"), 0);
		jose_jwks_free(s);
		free(j);
	}
	/* A key_ops with verify, and the x5c members, are fine. */
	j = jwk(keys[K_P256], NULL, ",\"key_ops\":[\"verify\",\"sign\"],"
	    "\"x5c\":[\"MIIB\"],\"ext\":true");
	s = jose_jwk_parse(j, strlen(j), why);
	ck_assert_ptr_nonnull(s);
	jose_jwks_free(s);
	free(j);
}
END_TEST

START_TEST(test_jwk_refused)
{
	char	*j, *k;

	j = jwk(keys[K_RSA1024], NULL, "");
	jwk_refused(j, "1024 bits, under 2048");
	free(j);
	/* Private members: refused, not ignored. */
	j = jwk(keys[K_RSA], NULL, ",\"d\":\"AQAB\"");
	jwk_refused(j, "private key member (d)");
	free(j);
	j = jwk(keys[K_P256], NULL, ",\"d\":\"AQAB\"");
	jwk_refused(j, "private key member (d)");
	free(j);
	j = jwk(keys[K_ED25519], NULL, ",\"d\":\"AQAB\"");
	jwk_refused(j, "private");
	free(j);
	jwk_refused("{\"kty\":\"oct\",\"k\":\"c2VjcmV0\"}", "symmetric");
	/* Keys for encryption. */
	j = jwk(keys[K_RSA], NULL, ",\"use\":\"enc\"");
	jwk_refused(j, "use is not sig");
	free(j);
	j = jwk(keys[K_RSA], NULL, ",\"key_ops\":[\"encrypt\",\"wrapKey\"]");
	jwk_refused(j, "key_ops does not name verify");
	free(j);
	j = jwk(keys[K_RSA], NULL, ",\"key_ops\":[\"verify\",\"verify\"]");
	jwk_refused(j, "twice");
	free(j);
	j = jwk(keys[K_RSA], NULL, ",\"key_ops\":\"verify\"");
	jwk_refused(j, "key_ops");
	free(j);
	j = jwk(keys[K_RSA], NULL, ",\"alg\":\"RSA-OAEP\"");
	jwk_refused(j, "not a signature algorithm");
	free(j);
	j = jwk(keys[K_RSA], NULL, ",\"alg\":\"HS256\"");
	jwk_refused(j, "not a signature algorithm");
	free(j);
	j = jwk(keys[K_RSA], NULL, ",\"alg\":\"ES256\"");
	jwk_refused(j, "alg ES256 does not fit the key");
	free(j);
	j = jwk(keys[K_P256], NULL, ",\"alg\":\"ES384\"");
	jwk_refused(j, "does not fit");
	free(j);
	j = jwk(keys[K_ED25519], NULL, ",\"alg\":\"Ed448\"");
	jwk_refused(j, "does not fit");
	free(j);
	j = jwk(keys[K_RSA], NULL, ",\"use\":1");
	jwk_refused(j, "use is not a string");
	free(j);
	j = jwk(keys[K_RSA], NULL, ",\"kid\":7");
	jwk_refused(j, "kid");
	free(j);
	/* Curves and types we do not verify with. */
	jwk_refused("{\"kty\":\"EC\",\"crv\":\"secp256k1\",\"x\":\"AA\","
	    "\"y\":\"AA\"}", "P-256, P-384, P-521");
	jwk_refused("{\"kty\":\"OKP\",\"crv\":\"X25519\",\"x\":\"AA\"}",
	    "Ed25519 and Ed448");
	jwk_refused("{\"kty\":\"AKP\",\"alg\":\"ML-DSA-44\"}", "not a "
	    "signature algorithm");
	jwk_refused("{\"kty\":\"AKP\"}", "key type other than");
	jwk_refused("{\"n\":\"AQAB\"}", "no kty");
	jwk_refused("[1]", "not a JSON object");
	jwk_refused("{\"kty\":\"RSA\",\"kty\":\"RSA\"}", "member twice");
	jwk_refused("{\"kty\":\"RSA\",\"e\":\"AQAB\"}", "no n");
	jwk_refused("{\"kty\":\"RSA\",\"n\":\"AQAB=\",\"e\":\"AQAB\"}",
	    "n is not base64url");
	/* An even exponent, and one of more than 64 bits. */
	j = jwk(keys[K_RSA], NULL, "");
	k = strstr(j, "\"e\":\"AQAB\"");
	ck_assert_ptr_nonnull(k);
	memcpy(k, "\"e\":\"AQAC\"", 10);
	jwk_refused(j, "exponent");
	free(j);
}
END_TEST

/* Points off the curve, and coordinates of the wrong size. */
START_TEST(test_jwk_ec_points)
{
	char	*j, *y, *x, c;

	j = jwk(keys[K_P256], NULL, "");
	y = strstr(j, "\"y\":\"") + 5;
	c = y[10];
	y[10] = c == 'A' ? 'B' : 'A';
	jwk_refused(j, "not on the curve");
	free(j);
	/* An x of 31 bytes (42 characters). */
	jwk_refused("{\"kty\":\"EC\",\"crv\":\"P-256\",\"x\":\""
	    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\",\"y\":\""
	    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\"}", "31 and 32 bytes, "
	    "not 32");
	/* The point at infinity has no uncompressed form: all zeroes. */
	jwk_refused("{\"kty\":\"EC\",\"crv\":\"P-256\",\"x\":\""
	    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\",\"y\":\""
	    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\"}", "curve");
	/* An Ed25519 x two characters (a byte) too long. */
	j = jwk(keys[K_ED25519], NULL, "");
	x = strstr(j, "\"x\":\"") + 5;
	ck_assert_int_gt(asprintf(&y, "%.*sAA%s", (int)(x - j), j, x), 0);
	jwk_refused(y, "too long");
	free(y);
	free(j);
}
END_TEST

START_TEST(test_jwks)
{
	char			*a = jwk(keys[K_RSA], "a", ""), *b, *text, *p;
	char			 why[JOSE_WHY_MAX];
	struct jose_jwks	*s;
	size_t			 i;

	b = jwk(keys[K_P256], "b", ",\"use\":\"enc\"");
	ck_assert_int_gt(asprintf(&text, "{\"keys\":[%s,%s,{\"kty\":\"oct\","
	    "\"k\":\"AA\"}],\"extra\":1}", a, b), 0);
	s = set_of(text);
	ck_assert_uint_eq(jose_jwks_count(s), 1);
	ck_assert_int_eq(jose_jwks_has_kid(s, "a"), 1);
	ck_assert_int_eq(jose_jwks_has_kid(s, "b"), 0);
	ck_assert_str_eq(jose_jwks_note(s),
	    "2 of 3 keys skipped; key 1: use is not sig");
	jose_jwks_free(s);
	free(text);

	/* No usable key: refused, so a caller keeps the set it had. */
	ck_assert_int_gt(asprintf(&text, "{\"keys\":[%s]}", b), 0);
	ck_assert_ptr_null(jose_jwks_parse(text, strlen(text), why));
	ck_assert_str_eq(why, "no usable key of 1; key 0: use is not sig");
	free(text);
	ck_assert_ptr_null(jose_jwks_parse("{\"keys\":[]}", 11, why));
	ck_assert_ptr_null(jose_jwks_parse("{\"keys\":{}}", 11, why));
	ck_assert_ptr_null(jose_jwks_parse("{}", 2, why));
	ck_assert_ptr_null(jose_jwks_parse("{\"keys\":[", 9, why));
	ck_assert_ptr_null(jose_jwks_parse("{\"keys\":[],\"keys\":[]}", 21,
	    why));

	/* At most JOSE_JWKS_KEYS keys. */
	p = text = malloc((JOSE_JWKS_KEYS + 1) * (strlen(a) + 1) + 16);
	p += sprintf(p, "{\"keys\":[");
	for (i = 0; i < JOSE_JWKS_KEYS; i++)
		p += sprintf(p, "%s%s", i > 0 ? "," : "", a);
	sprintf(p, "]}");
	s = set_of(text);
	ck_assert_uint_eq(jose_jwks_count(s), JOSE_JWKS_KEYS);
	jose_jwks_free(s);
	sprintf(p, ",%s]}", a);
	ck_assert_ptr_null(jose_jwks_parse(text, strlen(text), why));
	ck_assert_str_eq(why, "65 keys, over 64");
	free(text);

	/* At most JOSE_JWKS_MAX bytes, whatever they hold. */
	text = malloc(JOSE_JWKS_MAX + 2);
	memset(text, ' ', JOSE_JWKS_MAX + 1);
	memcpy(text, "{\"keys\":[", 9);
	memcpy(text + 9, a, strlen(a));
	memcpy(text + JOSE_JWKS_MAX - 2, "]}", 2);
	s = jose_jwks_parse(text, JOSE_JWKS_MAX + 1, why);
	ck_assert_ptr_null(s);
	ck_assert_ptr_nonnull(strstr(why, "over"));
	s = jose_jwks_parse(text, JOSE_JWKS_MAX + 1 - 1, why);
	ck_assert_ptr_nonnull(s);
	jose_jwks_free(s);
	free(text);
	free(a);
	free(b);
}
END_TEST

START_TEST(test_every_alg)
{
	static const struct { int key; const char *alg; } v[] = {
		{ K_RSA, "RS256" }, { K_RSA, "RS384" }, { K_RSA, "RS512" },
		{ K_RSA, "PS256" }, { K_RSA, "PS384" }, { K_RSA, "PS512" },
		{ K_P256, "ES256" }, { K_P384, "ES384" }, { K_P521, "ES512" },
		{ K_ED25519, "EdDSA" }, { K_ED448, "EdDSA" },
		{ K_ED25519, "Ed25519" }, { K_ED448, "Ed448" },
	};
	size_t	i;

	for (i = 0; i < sizeof v / sizeof v[0]; i++) {
		roundtrip(v[i].key, v[i].alg, "k1", JOSE_OK);
		roundtrip(v[i].key, v[i].alg, NULL, JOSE_OK);
	}
	/* An algorithm that does not fit the key's type or curve. */
	roundtrip(K_P256, "ES384", "k1", JOSE_ERR_NO_KEY);
	roundtrip(K_ED448, "Ed25519", NULL, JOSE_ERR_NO_KEY);
}
END_TEST

/* The token's claims read back. */
START_TEST(test_claims_read)
{
	struct jose_jwks	*s = set1(keys[K_P256], "k1", "");
	struct jose_token	*t;
	char			*c, *tok;

	c = claims(",\"scope\":\"mcp:read  mcp:tools\",\"client_id\":\"app\","
	    "\"azp\":\"other\",\"jti\":\"j1\",\"nbf\":1799999000,"
	    "\"groups\":[\"ops\"],\"exp2\":{\"a\":[[[1]]]}");
	tok = sign(keys[K_P256], "ES256", "{\"alg\":\"ES256\",\"kid\":\"k1\","
	    "\"typ\":\"at+jwt\"}", c);
	t = expect(s, &policy, tok, JOSE_OK);
	ck_assert_str_eq(t->iss, ISS);
	ck_assert_str_eq(t->sub, "alice");
	ck_assert_str_eq(t->client_id, "app");
	ck_assert_str_eq(t->jti, "j1");
	ck_assert_str_eq(t->kid, "k1");
	ck_assert_uint_eq(t->alg, JOSE_ES256);
	ck_assert_int_eq(t->exp, NOW + 300);
	ck_assert_int_eq(t->iat, NOW - 10);
	ck_assert_int_eq(t->nbf, 1799999000);
	ck_assert_uint_eq(t->nscopes, 2);
	ck_assert_int_eq(jose_token_has_scope(t, "mcp:read"), 1);
	ck_assert_int_eq(jose_token_has_scope(t, "mcp:tools"), 1);
	ck_assert_int_eq(jose_token_has_scope(t, "mcp"), 0);
	ck_assert(json_is_array(jose_token_claim(t, "groups")));
	ck_assert_ptr_null(jose_token_claim(t, "nope"));
	jose_token_free(t);
	free(tok);
	free(c);

	/* scp as Entra ID sends it, and as Okta does; azp for client_id. */
	c = claims(",\"scp\":\"User.Read Files.Read\",\"azp\":\"web\"");
	tok = sign(keys[K_P256], "ES256", "{\"alg\":\"ES256\"}", c);
	t = expect(s, &policy, tok, JOSE_OK);
	ck_assert_uint_eq(t->nscopes, 2);
	ck_assert_int_eq(jose_token_has_scope(t, "Files.Read"), 1);
	ck_assert_str_eq(t->client_id, "web");
	ck_assert_ptr_null(t->kid);
	jose_token_free(t);
	free(tok);
	free(c);
	c = claims(",\"scp\":[\"openid\",\"email\"],\"scope\":\"a\"");
	tok = sign(keys[K_P256], "ES256", "{\"alg\":\"ES256\"}", c);
	t = expect(s, &policy, tok, JOSE_OK);
	/* scope wins over scp. */
	ck_assert_uint_eq(t->nscopes, 1);
	ck_assert_int_eq(jose_token_has_scope(t, "a"), 1);
	jose_token_free(t);
	free(tok);
	free(c);
	c = claims(",\"scp\":[\"openid\",\"email\"]");
	tok = sign(keys[K_P256], "ES256", "{\"alg\":\"ES256\"}", c);
	t = expect(s, &policy, tok, JOSE_OK);
	ck_assert_uint_eq(t->nscopes, 2);
	ck_assert_ptr_null(t->client_id);
	jose_token_free(t);
	free(tok);
	free(c);
	jose_jwks_free(s);
}
END_TEST

/* Sign claims with the P-256 key and expect a verdict. */
static void
claims_case(const char *payload, enum jose_result want)
{
	struct jose_jwks	*s = set1(keys[K_P256], NULL, "");
	char			*tok = sign(keys[K_P256], "ES256",
	    "{\"alg\":\"ES256\"}", payload);

	jose_token_free(expect(s, &policy, tok, want));
	free(tok);
	jose_jwks_free(s);
}

START_TEST(test_claims_refused)
{
	char	 p[512];

#define C(fmt, ...) (snprintf(p, sizeof p, fmt, __VA_ARGS__), p)
	/* Issuer: exact, byte for byte. */
	claims_case(C("{\"iss\":\"%s/\",\"aud\":\"%s\",\"exp\":%lld}", ISS,
	    AUD, NOW + 60), JOSE_ERR_ISSUER);
	claims_case(C("{\"iss\":\"HTTPS://idp.example/realms/mcp\",\"aud\":"
	    "\"%s\",\"exp\":%lld}", AUD, NOW + 60), JOSE_ERR_ISSUER);
	claims_case(C("{\"aud\":\"%s\",\"exp\":%lld}", AUD, NOW + 60),
	    JOSE_ERR_CLAIMS);
	claims_case(C("{\"iss\":[\"%s\"],\"aud\":\"%s\",\"exp\":%lld}", ISS,
	    AUD, NOW + 60), JOSE_ERR_CLAIMS);
	/* Audience (RFC 8707): the resource, in a string or an array. */
	claims_case(C("{\"iss\":\"%s\",\"aud\":[\"x\",\"%s\"],\"exp\":%lld}",
	    ISS, AUD, NOW + 60), JOSE_OK);
	claims_case(C("{\"iss\":\"%s\",\"aud\":\"%s/\",\"exp\":%lld}", ISS,
	    AUD, NOW + 60), JOSE_ERR_AUDIENCE);
	claims_case(C("{\"iss\":\"%s\",\"aud\":[\"x\",\"y\"],\"exp\":%lld}",
	    ISS, NOW + 60), JOSE_ERR_AUDIENCE);
	claims_case(C("{\"iss\":\"%s\",\"aud\":[],\"exp\":%lld}", ISS,
	    NOW + 60), JOSE_ERR_CLAIMS);
	claims_case(C("{\"iss\":\"%s\",\"aud\":[\"%s\",1],\"exp\":%lld}", ISS,
	    AUD, NOW + 60), JOSE_ERR_CLAIMS);
	claims_case(C("{\"iss\":\"%s\",\"exp\":%lld}", ISS, NOW + 60),
	    JOSE_ERR_CLAIMS);
	/* exp required; leeway 30 s each way. */
	claims_case(C("{\"iss\":\"%s\",\"aud\":\"%s\"}", ISS, AUD),
	    JOSE_ERR_CLAIMS);
	claims_case(C("{\"iss\":\"%s\",\"aud\":\"%s\",\"exp\":\"%lld\"}", ISS,
	    AUD, NOW + 60), JOSE_ERR_CLAIMS);
	claims_case(C("{\"iss\":\"%s\",\"aud\":\"%s\",\"exp\":-1}", ISS, AUD),
	    JOSE_ERR_CLAIMS);
	claims_case(C("{\"iss\":\"%s\",\"aud\":\"%s\",\"exp\":1e300}", ISS,
	    AUD), JOSE_ERR_CLAIMS);
	claims_case(C("{\"iss\":\"%s\",\"aud\":\"%s\",\"exp\":%lld}", ISS, AUD,
	    NOW - 30), JOSE_ERR_EXPIRED);
	claims_case(C("{\"iss\":\"%s\",\"aud\":\"%s\",\"exp\":%lld}", ISS, AUD,
	    NOW - 29), JOSE_OK);
	claims_case(C("{\"iss\":\"%s\",\"aud\":\"%s\",\"exp\":%lld.5}", ISS,
	    AUD, NOW - 29), JOSE_OK);
	claims_case(C("{\"iss\":\"%s\",\"aud\":\"%s\",\"exp\":%lld,"
	    "\"nbf\":%lld}", ISS, AUD, NOW + 600, NOW + 31), JOSE_ERR_NOT_YET);
	claims_case(C("{\"iss\":\"%s\",\"aud\":\"%s\",\"exp\":%lld,"
	    "\"nbf\":%lld}", ISS, AUD, NOW + 600, NOW + 30), JOSE_OK);
	claims_case(C("{\"iss\":\"%s\",\"aud\":\"%s\",\"exp\":%lld,"
	    "\"iat\":%lld}", ISS, AUD, NOW + 600, NOW + 31), JOSE_ERR_IAT);
	claims_case(C("{\"iss\":\"%s\",\"aud\":\"%s\",\"exp\":%lld,"
	    "\"iat\":true}", ISS, AUD, NOW + 600), JOSE_ERR_CLAIMS);
	/* Mistyped claims we read. */
	claims_case(C("{\"iss\":\"%s\",\"aud\":\"%s\",\"exp\":%lld,"
	    "\"sub\":5}", ISS, AUD, NOW + 60), JOSE_ERR_CLAIMS);
	claims_case(C("{\"iss\":\"%s\",\"aud\":\"%s\",\"exp\":%lld,"
	    "\"client_id\":null}", ISS, AUD, NOW + 60), JOSE_ERR_CLAIMS);
	claims_case(C("{\"iss\":\"%s\",\"aud\":\"%s\",\"exp\":%lld,"
	    "\"scope\":{}}", ISS, AUD, NOW + 60), JOSE_ERR_CLAIMS);
	claims_case(C("{\"iss\":\"%s\",\"aud\":\"%s\",\"exp\":%lld,"
	    "\"scope\":\"a\\\"b\"}", ISS, AUD, NOW + 60), JOSE_ERR_CLAIMS);
	claims_case(C("{\"iss\":\"%s\",\"aud\":\"%s\",\"exp\":%lld,"
	    "\"scp\":[\"a\",2]}", ISS, AUD, NOW + 60), JOSE_ERR_CLAIMS);
	/* Each member once; an object; not too deep. */
	claims_case(C("{\"iss\":\"%s\",\"aud\":\"%s\",\"exp\":%lld,"
	    "\"sub\":\"a\",\"sub\":\"b\"}", ISS, AUD, NOW + 60),
	    JOSE_ERR_MALFORMED);
	claims_case("[1]", JOSE_ERR_MALFORMED);
	claims_case("\"x\"", JOSE_ERR_MALFORMED);
	claims_case(C("{\"iss\":\"%s\",\"aud\":\"%s\",\"exp\":%lld,"
	    "\"x\":[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]}", ISS, AUD, NOW + 60),
	    JOSE_OK);
	claims_case(C("{\"iss\":\"%s\",\"aud\":\"%s\",\"exp\":%lld,"
	    "\"x\":[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]}", ISS, AUD, NOW + 60),
	    JOSE_ERR_MALFORMED);
#undef C
}
END_TEST

START_TEST(test_scopes_bound)
{
	char	*p, *c;
	int	 i;

	p = c = malloc(JOSE_SCOPES_MAX * 3 + 200);
	p += sprintf(p, "{\"iss\":\"%s\",\"aud\":\"%s\",\"exp\":%lld,"
	    "\"scope\":\"", ISS, AUD, NOW + 60);
	for (i = 0; i < JOSE_SCOPES_MAX; i++)
		p += sprintf(p, "%c%c ", 'a' + i % 26, 'a' + i / 26);
	sprintf(p, "\"}");
	claims_case(c, JOSE_OK);
	sprintf(p, "zz\"}");
	claims_case(c, JOSE_ERR_CLAIMS);
	free(c);
}
END_TEST

/* alg none, in every spelling an attacker tries. */
START_TEST(test_alg_none)
{
	struct jose_jwks	*s = set1(keys[K_RSA], "k1", "");
	char			*c = claims(""), *h, *p, tok[1024];
	const char		*algs[] = { "none", "None", "NONE", "nOnE" };
	size_t			 i;

	p = b64s(c);
	for (i = 0; i < 4; i++) {
		char	hdr[64];

		snprintf(hdr, sizeof hdr, "{\"alg\":\"%s\",\"kid\":\"k1\"}",
		    algs[i]);
		h = b64s(hdr);
		snprintf(tok, sizeof tok, "%s.%s.", h, p);
		free(h);
		jose_token_free(expect(s, &policy, tok, i == 0 ?
		    JOSE_ERR_ALG_NONE : JOSE_ERR_ALG_UNKNOWN));
	}
	free(p);
	free(c);
	jose_jwks_free(s);
}
END_TEST

/*
 * HMAC with the RSA public key as the secret: the classic confusion where
 * a verifier hands the key's bytes to HMAC.  Refused by name, with or
 * without HS256 in any list.
 */
START_TEST(test_hmac_confusion)
{
	struct jose_jwks	*s = set1(keys[K_RSA], "k1", "");
	char			*j = jwk(keys[K_RSA], "k1", ""), *h, *p, *m, *sg;
	char			*c = claims(""), *tok;
	unsigned char		 mac[64];
	size_t			 maclen;

	h = b64s("{\"alg\":\"HS256\",\"kid\":\"k1\"}");
	p = b64s(c);
	ck_assert_int_gt(asprintf(&m, "%s.%s", h, p), 0);
	ck_assert_ptr_nonnull(EVP_Q_mac(NULL, "HMAC", NULL, "SHA256", NULL,
	    j, strlen(j), (unsigned char *)m, strlen(m), mac, sizeof mac,
	    &maclen));
	sg = b64(mac, maclen);
	ck_assert_int_gt(asprintf(&tok, "%s.%s", m, sg), 0);
	jose_token_free(expect(s, &policy, tok, JOSE_ERR_ALG_HMAC));
	free(tok);
	free(sg);
	free(m);
	free(h);
	free(p);
	free(c);
	free(j);
	jose_jwks_free(s);
}
END_TEST

START_TEST(test_header_policy)
{
	struct jose_jwks	*s = set1(keys[K_RSA], "k1", "");
	struct jose_policy	 pol = policy;
	char			*c = claims(""), *tok;

	/* Not in the allow-list. */
	pol.algs = JOSE_ES256 | JOSE_PS256;
	tok = sign(keys[K_RSA], "RS256", "{\"alg\":\"RS256\"}", c);
	jose_token_free(expect(s, &pol, tok, JOSE_ERR_ALG_DENIED));
	pol.algs = JOSE_RS256;
	jose_token_free(expect(s, &pol, tok, JOSE_OK));
	free(tok);
	/* crit: nothing is understood. */
	tok = sign(keys[K_RSA], "RS256", "{\"alg\":\"RS256\",\"crit\":[\"exp\"],"
	    "\"exp\":1}", c);
	jose_token_free(expect(s, &policy, tok, JOSE_ERR_CRIT));
	free(tok);
	tok = sign(keys[K_RSA], "RS256", "{\"alg\":\"RS256\",\"crit\":[\"b64\"],"
	    "\"b64\":false}", c);
	jose_token_free(expect(s, &policy, tok, JOSE_ERR_CRIT));
	free(tok);
	/* typ: lax takes none, JWT and at+jwt; strict at+jwt alone. */
	pol = policy;
	pol.typ = JOSE_TYP_AT_JWT;
	tok = sign(keys[K_RSA], "RS256", "{\"alg\":\"RS256\"}", c);
	jose_token_free(expect(s, &policy, tok, JOSE_OK));
	jose_token_free(expect(s, &pol, tok, JOSE_ERR_TYP));
	free(tok);
	tok = sign(keys[K_RSA], "RS256", "{\"alg\":\"RS256\",\"typ\":\"JWT\"}",
	    c);
	jose_token_free(expect(s, &policy, tok, JOSE_OK));
	jose_token_free(expect(s, &pol, tok, JOSE_ERR_TYP));
	free(tok);
	tok = sign(keys[K_RSA], "RS256", "{\"alg\":\"RS256\",\"typ\":"
	    "\"application/AT+JWT\"}", c);
	jose_token_free(expect(s, &policy, tok, JOSE_OK));
	jose_token_free(expect(s, &pol, tok, JOSE_OK));
	free(tok);
	tok = sign(keys[K_RSA], "RS256", "{\"alg\":\"RS256\",\"typ\":"
	    "\"logout+jwt\"}", c);
	jose_token_free(expect(s, &policy, tok, JOSE_ERR_TYP));
	free(tok);
	tok = sign(keys[K_RSA], "RS256", "{\"alg\":\"RS256\",\"typ\":7}", c);
	jose_token_free(expect(s, &policy, tok, JOSE_ERR_TYP));
	free(tok);
	/* A header member twice, a header that is not an object. */
	tok = sign(keys[K_RSA], "RS256", "{\"alg\":\"RS256\",\"alg\":\"none\"}",
	    c);
	jose_token_free(expect(s, &policy, tok, JOSE_ERR_MALFORMED));
	free(tok);
	tok = sign(keys[K_RSA], "RS256", "[\"RS256\"]", c);
	jose_token_free(expect(s, &policy, tok, JOSE_ERR_MALFORMED));
	free(tok);
	tok = sign(keys[K_RSA], "RS256", "{\"alg\":\"RS256\",\"jwk\":{\"a\":"
	    "{\"b\":{\"c\":{\"d\":1}}}}}", c);
	jose_token_free(expect(s, &policy, tok, JOSE_ERR_MALFORMED));
	free(tok);
	tok = sign(keys[K_RSA], "RS256", "{\"alg\":\"RS256\",\"kid\":1}", c);
	jose_token_free(expect(s, &policy, tok, JOSE_ERR_MALFORMED));
	free(tok);
	free(c);
	jose_jwks_free(s);
}
END_TEST

/* Keys chosen by kid; without one, only when one key fits. */
START_TEST(test_kid_selection)
{
	char			*a = jwk(keys[K_RSA], "a", ""), *b, *e, *text;
	char			*c = claims(""), *tok;
	struct jose_jwks	*s;

	b = jwk(keys[K_RSA2], "b", "");
	e = jwk(keys[K_P256], "a", "");
	ck_assert_int_gt(asprintf(&text, "{\"keys\":[%s,%s,%s]}", a, b, e), 0);
	s = set_of(text);
	free(text);
	tok = sign(keys[K_RSA2], "RS256", "{\"alg\":\"RS256\",\"kid\":\"b\"}",
	    c);
	jose_token_free(expect(s, &policy, tok, JOSE_OK));
	free(tok);
	/* Signed by b, claiming a: the signature is checked with a. */
	tok = sign(keys[K_RSA2], "RS256", "{\"alg\":\"RS256\",\"kid\":\"a\"}",
	    c);
	jose_token_free(expect(s, &policy, tok, JOSE_ERR_SIGNATURE));
	free(tok);
	/* kid a with ES256 picks the EC key of the same kid. */
	tok = sign(keys[K_P256], "ES256", "{\"alg\":\"ES256\",\"kid\":\"a\"}",
	    c);
	jose_token_free(expect(s, &policy, tok, JOSE_OK));
	free(tok);
	tok = sign(keys[K_RSA2], "RS256", "{\"alg\":\"RS256\",\"kid\":\"z\"}",
	    c);
	jose_token_free(expect(s, &policy, tok, JOSE_ERR_KID_UNKNOWN));
	free(tok);
	/* No kid: two RSA keys fit RS256, one EC key fits ES256. */
	tok = sign(keys[K_RSA2], "RS256", "{\"alg\":\"RS256\"}", c);
	jose_token_free(expect(s, &policy, tok, JOSE_ERR_KID_AMBIGUOUS));
	free(tok);
	tok = sign(keys[K_P256], "ES256", "{\"alg\":\"ES256\"}", c);
	jose_token_free(expect(s, &policy, tok, JOSE_OK));
	free(tok);
	tok = sign(keys[K_P384], "ES384", "{\"alg\":\"ES384\"}", c);
	jose_token_free(expect(s, &policy, tok, JOSE_ERR_NO_KEY));
	free(tok);
	/* The key b named by kid is RSA: an EdDSA token cannot use it. */
	tok = sign(keys[K_ED25519], "EdDSA", "{\"alg\":\"EdDSA\",\"kid\":\"b\"}",
	    c);
	jose_token_free(expect(s, &policy, tok, JOSE_ERR_NO_KEY));
	free(tok);
	jose_jwks_free(s);

	/* Two keys by one kid (a rotation gone wrong): both are tried. */
	free(b);
	b = jwk(keys[K_RSA2], "a", "");
	ck_assert_int_gt(asprintf(&text, "{\"keys\":[%s,%s]}", a, b), 0);
	s = set_of(text);
	free(text);
	tok = sign(keys[K_RSA2], "RS256", "{\"alg\":\"RS256\",\"kid\":\"a\"}",
	    c);
	jose_token_free(expect(s, &policy, tok, JOSE_OK));
	free(tok);
	jose_jwks_free(s);

	/* A key's alg binds it: RS256 only, so PS256 does not verify. */
	s = set1(keys[K_RSA], "a", ",\"alg\":\"RS256\"");
	tok = sign(keys[K_RSA], "PS256", "{\"alg\":\"PS256\",\"kid\":\"a\"}", c);
	jose_token_free(expect(s, &policy, tok, JOSE_ERR_NO_KEY));
	free(tok);
	tok = sign(keys[K_RSA], "RS256", "{\"alg\":\"RS256\",\"kid\":\"a\"}", c);
	jose_token_free(expect(s, &policy, tok, JOSE_OK));
	free(tok);
	jose_jwks_free(s);
	free(a);
	free(b);
	free(e);
	free(c);
}
END_TEST

/* Tampering, other keys, and the shape of the compact form. */
START_TEST(test_tampering)
{
	struct jose_jwks	*s = set1(keys[K_P256], "k1", "");
	char			*c = claims(""), *tok, *bad, *d;
	size_t			 i, n;

	tok = sign(keys[K_P256], "ES256", "{\"alg\":\"ES256\",\"kid\":\"k1\"}",
	    c);
	jose_token_free(expect(s, &policy, tok, JOSE_OK));
	/* Every character of the header and payload changed in turn. */
	bad = strdup(tok);
	n = (size_t)(strrchr(tok, '.') - tok);
	for (i = 0; i < n; i++) {
		struct jose_token	*t = NULL;
		char			 why[JOSE_WHY_MAX];

		if (tok[i] == '.')
			continue;
		bad[i] = tok[i] == 'A' ? 'B' : 'A';
		ck_assert_int_ne(jose_jwt_verify(s, &policy, bad, strlen(bad),
		    NOW, &t, why), JOSE_OK);
		ck_assert_ptr_null(t);
		bad[i] = tok[i];
	}
	/* The signature's last character flipped, cut, padded. */
	bad[strlen(bad) - 2] = bad[strlen(bad) - 2] == 'A' ? 'B' : 'A';
	jose_token_free(expect(s, &policy, bad, JOSE_ERR_SIGNATURE));
	free(bad);
	/* Four characters fewer (three bytes) at the signature's start. */
	d = strrchr(tok, '.') + 1;
	ck_assert_int_gt(asprintf(&bad, "%.*s%s", (int)(d - tok), tok, d + 4),
	    0);
	jose_token_free(expect(s, &policy, bad, JOSE_ERR_SIGNATURE));
	free(bad);
	ck_assert_int_gt(asprintf(&bad, "%s=", tok), 0);
	jose_token_free(expect(s, &policy, bad, JOSE_ERR_MALFORMED));
	free(bad);
	/* Parts: two, four, five (a JWE), a space, a second token. */
	ck_assert_int_gt(asprintf(&bad, "%s", tok), 0);
	*strrchr(bad, '.') = '\0';
	jose_token_free(expect(s, &policy, bad, JOSE_ERR_MALFORMED));
	free(bad);
	ck_assert_int_gt(asprintf(&bad, "%s.", tok), 0);
	jose_token_free(expect(s, &policy, bad, JOSE_ERR_MALFORMED));
	free(bad);
	jose_token_free(expect(s, &policy, "a.b.c.d.e", JOSE_ERR_JWE));
	jose_token_free(expect(s, &policy, "", JOSE_ERR_MALFORMED));
	jose_token_free(expect(s, &policy, "..", JOSE_ERR_MALFORMED));
	ck_assert_int_gt(asprintf(&bad, " %s", tok), 0);
	jose_token_free(expect(s, &policy, bad, JOSE_ERR_MALFORMED));
	free(bad);
	/* A signature by another key of the same curve. */
	free(tok);
	tok = sign(keys[K_P256], "ES256", "{\"alg\":\"ES256\",\"kid\":\"k1\"}",
	    c);
	jose_jwks_free(s);
	{
		EVP_PKEY	*other = EVP_PKEY_Q_keygen(NULL, NULL, "EC",
		    "P-256");

		s = set1(other, "k1", "");
		jose_token_free(expect(s, &policy, tok, JOSE_ERR_SIGNATURE));
		EVP_PKEY_free(other);
	}
	/* A DER signature where JOSE wants r||s. */
	d = strrchr(tok, '.') + 1;
	{
		struct jose_jwks	*s2 = set1(keys[K_P256], "k1", "");
		char			*der;
		EVP_MD_CTX		*ctx = EVP_MD_CTX_new();
		unsigned char		 sig[80];
		size_t			 siglen = sizeof sig;

		ck_assert(EVP_DigestSignInit_ex(ctx, NULL, "SHA256", NULL, NULL,
		    keys[K_P256], NULL));
		ck_assert(EVP_DigestSign(ctx, sig, &siglen,
		    (unsigned char *)tok, (size_t)(d - 1 - tok)));
		EVP_MD_CTX_free(ctx);
		der = b64(sig, siglen);
		ck_assert_int_gt(asprintf(&bad, "%.*s%s", (int)(d - tok), tok,
		    der), 0);
		jose_token_free(expect(s2, &policy, bad, JOSE_ERR_SIGNATURE));
		free(bad);
		free(der);
		jose_jwks_free(s2);
	}
	free(tok);
	free(c);
	jose_jwks_free(s);
}
END_TEST

START_TEST(test_sizes)
{
	struct jose_jwks	*s = set1(keys[K_RSA], "k1", "");
	char			*c, *tok, *pad;

	/* A token just under the bound verifies; over it, not read. */
	pad = malloc(JOSE_TOKEN_MAX + 1);
	memset(pad, 'x', JOSE_TOKEN_MAX);
	pad[JOSE_TOKEN_MAX * 3 / 4 - 700] = '\0';
	ck_assert_int_gt(asprintf(&c, "{\"iss\":\"%s\",\"aud\":\"%s\","
	    "\"exp\":%lld,\"pad\":\"%s\"}", ISS, AUD, NOW + 60, pad), 0);
	tok = sign(keys[K_RSA], "RS256", "{\"alg\":\"RS256\"}", c);
	ck_assert_int_le(strlen(tok), JOSE_TOKEN_MAX);
	ck_assert_int_gt(strlen(tok), JOSE_TOKEN_MAX - 1200);
	jose_token_free(expect(s, &policy, tok, JOSE_OK));
	free(tok);
	free(c);
	pad[JOSE_TOKEN_MAX * 3 / 4 - 700] = 'x';
	pad[JOSE_TOKEN_MAX * 3 / 4] = '\0';
	ck_assert_int_gt(asprintf(&c, "{\"iss\":\"%s\",\"aud\":\"%s\","
	    "\"exp\":%lld,\"pad\":\"%s\"}", ISS, AUD, NOW + 60, pad), 0);
	tok = sign(keys[K_RSA], "RS256", "{\"alg\":\"RS256\"}", c);
	ck_assert_int_gt(strlen(tok), JOSE_TOKEN_MAX);
	jose_token_free(expect(s, &policy, tok, JOSE_ERR_SIZE));
	free(tok);
	free(c);
	/* A header over JOSE_HEADER_MAX. */
	memset(pad, 'x', JOSE_HEADER_MAX);
	pad[JOSE_HEADER_MAX] = '\0';
	ck_assert_int_gt(asprintf(&c, "{\"alg\":\"RS256\",\"x\":\"%s\"}", pad),
	    0);
	tok = sign(keys[K_RSA], "RS256", c, "{}");
	jose_token_free(expect(s, &policy, tok, JOSE_ERR_MALFORMED));
	free(tok);
	free(c);
	free(pad);
	jose_jwks_free(s);
}
END_TEST

/* No message carries what the token said. */
START_TEST(test_messages)
{
	struct jose_jwks	*s = set1(keys[K_RSA], "k1", "");
	const char		*mark = "M4RK";
	char			*c, *tok, hdr[128], why[JOSE_WHY_MAX];
	struct jose_token	*t;
	const char		*hdrs[] = {
		"{\"alg\":\"RS256\",\"kid\":\"M4RK\\\"\\\\\"}",
		"{\"alg\":\"M4RK\"}",
		"{\"alg\":\"RS256\",\"typ\":\"M4RK\"}",
		"{\"alg\":\"RS256\",\"kid\":\"k1\",\"typ\":\"at+jwt\"}",
	};
	size_t			 i;

	ck_assert_int_gt(asprintf(&c, "{\"iss\":\"%s\\\"M4RK\",\"aud\":\"M4RK\","
	    "\"exp\":%lld,\"scope\":\"M4RK\\\\\"}", ISS, NOW - 100), 0);
	for (i = 0; i < sizeof hdrs / sizeof hdrs[0]; i++) {
		snprintf(hdr, sizeof hdr, "%s", hdrs[i]);
		tok = sign(keys[K_RSA], "RS256", hdr, c);
		ck_assert_int_ne(jose_jwt_verify(s, &policy, tok, strlen(tok),
		    NOW, &t, why), JOSE_OK);
		ck_assert_ptr_null(strstr(why, mark));
		why_clean(why);
		free(tok);
	}
	free(c);
	jose_jwks_free(s);
}
END_TEST

static Suite *
jose_suite(void)
{
	Suite	*s = suite_create("jose");
	TCase	*tc = tcase_create("jose");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_b64url);
	tcase_add_test(tc, test_algs);
	tcase_add_test(tc, test_jwk_types);
	tcase_add_test(tc, test_jwk_refused);
	tcase_add_test(tc, test_jwk_ec_points);
	tcase_add_test(tc, test_jwks);
	tcase_add_test(tc, test_every_alg);
	tcase_add_test(tc, test_claims_read);
	tcase_add_test(tc, test_claims_refused);
	tcase_add_test(tc, test_scopes_bound);
	tcase_add_test(tc, test_alg_none);
	tcase_add_test(tc, test_hmac_confusion);
	tcase_add_test(tc, test_header_policy);
	tcase_add_test(tc, test_kid_selection);
	tcase_add_test(tc, test_tampering);
	tcase_add_test(tc, test_sizes);
	tcase_add_test(tc, test_messages);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	SRunner	*sr;
	int	 failed, i;

	/* The keys, made once: RSA generation takes a while. */
	keys[K_RSA] = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
	keys[K_RSA2] = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
	keys[K_RSA1024] = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)1024);
	keys[K_P256] = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	keys[K_P384] = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-384");
	keys[K_P521] = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-521");
	keys[K_ED25519] = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
	keys[K_ED448] = EVP_PKEY_Q_keygen(NULL, NULL, "ED448");
	for (i = 0; i < K_N; i++)
		if (keys[i] == NULL) {
			fprintf(stderr, "cannot make key %d\n", i);
			return (EXIT_FAILURE);
		}
	sr = srunner_create(jose_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	for (i = 0; i < K_N; i++)
		EVP_PKEY_free(keys[i]);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
