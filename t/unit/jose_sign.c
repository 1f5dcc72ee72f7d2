/* SPDX-License-Identifier: ISC */
/*
 * What t/unit/check_jose.c signs and builds its keys with: OpenSSL, in
 * the test only (common/jose never signs).  Failures are Check
 * assertions.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>

#include "jose_sign.h"

/* Unpadded base64url of n bytes (caller frees). */
char *
b64(const unsigned char *p, size_t n)
{
	static const char	 a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789-_";
	char			*out = malloc(n * 4 / 3 + 4), *o = out;
	size_t			 i;
	unsigned long		 v;

	for (i = 0; i < n; i += 3) {
		v = (unsigned long)p[i] << 16;
		if (i + 1 < n)
			v |= (unsigned long)p[i + 1] << 8;
		if (i + 2 < n)
			v |= p[i + 2];
		*o++ = a[(v >> 18) & 63];
		*o++ = a[(v >> 12) & 63];
		if (i + 1 < n)
			*o++ = a[(v >> 6) & 63];
		if (i + 2 < n)
			*o++ = a[v & 63];
	}
	*o = '\0';
	return (out);
}

char *
b64s(const char *s)
{
	return (b64((const unsigned char *)s, strlen(s)));
}

static char *
b64bn(const BIGNUM *bn, int pad)
{
	unsigned char	buf[1100];
	int		n = pad > 0 ? BN_bn2binpad(bn, buf, pad) : BN_bn2bin(bn, buf);

	ck_assert_int_gt(n, 0);
	return (b64(buf, (size_t)n));
}

/* A JWK for a public key, with extra members (",\"alg\":...") or "". */
char *
jwk(EVP_PKEY *k, const char *kid, const char *extra)
{
	char		*out = NULL, *a = NULL, *b = NULL, kidm[300] = "";
	char		 group[64];
	BIGNUM		*x = NULL, *y = NULL;
	unsigned char	 raw[64];
	size_t		 rawlen = sizeof raw;
	int		 coord;

	if (kid != NULL)
		snprintf(kidm, sizeof kidm, ",\"kid\":\"%s\"", kid);
	if (EVP_PKEY_is_a(k, "RSA")) {
		ck_assert(EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_RSA_N, &x));
		ck_assert(EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_RSA_E, &y));
		a = b64bn(x, 0);
		b = b64bn(y, 0);
		ck_assert_int_gt(asprintf(&out, "{\"kty\":\"RSA\",\"n\":\"%s\","
		    "\"e\":\"%s\"%s%s}", a, b, kidm, extra), 0);
	} else if (EVP_PKEY_is_a(k, "EC")) {
		ck_assert(EVP_PKEY_get_utf8_string_param(k,
		    OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof group, NULL));
		ck_assert(EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_EC_PUB_X,
		    &x));
		ck_assert(EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_EC_PUB_Y,
		    &y));
		coord = strcmp(group, "prime256v1") == 0 ? 32 :
		    strcmp(group, "secp384r1") == 0 ? 48 : 66;
		a = b64bn(x, coord);
		b = b64bn(y, coord);
		ck_assert_int_gt(asprintf(&out, "{\"kty\":\"EC\",\"crv\":\"%s\","
		    "\"x\":\"%s\",\"y\":\"%s\"%s%s}", coord == 32 ? "P-256" :
		    coord == 48 ? "P-384" : "P-521", a, b, kidm, extra), 0);
	} else {
		ck_assert(EVP_PKEY_get_raw_public_key(k, raw, &rawlen));
		a = b64(raw, rawlen);
		ck_assert_int_gt(asprintf(&out, "{\"kty\":\"OKP\",\"crv\":\"%s\","
		    "\"x\":\"%s\"%s%s}", EVP_PKEY_is_a(k, "ED25519") ?
		    "Ed25519" : "Ed448", a, kidm, extra), 0);
	}
	BN_free(x);
	BN_free(y);
	free(a);
	free(b);
	return (out);
}

/* Sign header.payload with k as alg (the tests' own signer). */
char *
sign(EVP_PKEY *k, const char *alg, const char *header, const char *payload)
{
	EVP_MD_CTX	*ctx;
	EVP_PKEY_CTX	*pctx = NULL;
	ECDSA_SIG	*es;
	const unsigned char *dp;
	unsigned char	 sig[1100], raw[132];
	size_t		 siglen = sizeof sig;
	const char	*md = NULL;
	char		*h = b64s(header), *p = b64s(payload), *input, *s, *out;
	int		 coord = 0;

	ck_assert_int_gt(asprintf(&input, "%s.%s", h, p), 0);
	if (strlen(alg) == 5 && alg[0] != 'E')
		md = alg[4] == '6' ? "SHA256" : alg[4] == '4' ? "SHA384" :
		    "SHA512";
	if (strcmp(alg, "ES256") == 0)
		md = "SHA256", coord = 32;
	else if (strcmp(alg, "ES384") == 0)
		md = "SHA384", coord = 48;
	else if (strcmp(alg, "ES512") == 0)
		md = "SHA512", coord = 66;
	ctx = EVP_MD_CTX_new();
	ck_assert(EVP_DigestSignInit_ex(ctx, &pctx, md, NULL, NULL, k, NULL));
	if (alg[0] == 'P') {
		ck_assert(EVP_PKEY_CTX_set_rsa_padding(pctx,
		    RSA_PKCS1_PSS_PADDING));
		ck_assert(EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx,
		    RSA_PSS_SALTLEN_DIGEST));
	}
	ck_assert(EVP_DigestSign(ctx, sig, &siglen,
	    (unsigned char *)input, strlen(input)));
	EVP_MD_CTX_free(ctx);
	if (coord > 0) {
		dp = sig;
		es = d2i_ECDSA_SIG(NULL, &dp, (long)siglen);
		ck_assert_ptr_nonnull(es);
		BN_bn2binpad(ECDSA_SIG_get0_r(es), raw, coord);
		BN_bn2binpad(ECDSA_SIG_get0_s(es), raw + coord, coord);
		ECDSA_SIG_free(es);
		s = b64(raw, 2 * (size_t)coord);
	} else
		s = b64(sig, siglen);
	ck_assert_int_gt(asprintf(&out, "%s.%s", input, s), 0);
	free(h);
	free(p);
	free(s);
	free(input);
	return (out);
}

