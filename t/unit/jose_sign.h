/* SPDX-License-Identifier: ISC */
/* Keys and signatures for t/unit/check_jose.c (t/unit/jose_sign.c). */
#ifndef MCPS_JOSE_SIGN_H
#define MCPS_JOSE_SIGN_H

#include <stddef.h>

#include <openssl/evp.h>

/* Unpadded base64url of n bytes, and of a string (caller frees). */
char	*b64(const unsigned char *, size_t);
char	*b64s(const char *);
/* A JWK for a public key, with extra members (",\"alg\":...") or "". */
char	*jwk(EVP_PKEY *, const char *kid, const char *extra);
/* A JWS: header.payload signed with the key as alg (caller frees). */
char	*sign(EVP_PKEY *, const char *alg, const char *header,
	    const char *payload);

#endif
