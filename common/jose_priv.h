/* SPDX-License-Identifier: ISC */
/* What common/jwk.c and common/jwt.c share; not for other callers. */
#ifndef MCPS_JOSE_PRIV_H
#define MCPS_JOSE_PRIV_H

#include <openssl/evp.h>

#include "jose.h"

enum jose_kty {
	JOSE_KTY_RSA = 1,
	JOSE_KTY_EC,
	JOSE_KTY_OKP
};

/* One signature algorithm. */
struct jose_alg {
	const char	*name;
	unsigned int	 bit;
	enum jose_kty	 kty;
	const char	*md;		/* digest; NULL for EdDSA */
	int		 pss;		/* RSASSA-PSS, salt as long as the digest */
	size_t		 coord;		/* ECDSA: bytes of r and of s */
};

/* A usable public key. */
struct jose_key {
	EVP_PKEY	*pkey;		/* owned */
	char		*kid;		/* owned; NULL if none */
	enum jose_kty	 kty;
	unsigned int	 algs;		/* what it may verify */
	size_t		 siglen;	/* a signature's exact length */
};

struct jose_jwks {
	struct jose_key	*keys;		/* owned, nkeys of them */
	size_t		 nkeys;
	char		 note[JOSE_WHY_MAX];
};

/* The algorithm of a bit, or NULL. */
const struct jose_alg *jose_alg_get(unsigned int);
/* Is the JSON text at most maxdepth deep (its outer value is depth 1)? */
int		 jose_json_depth_ok(const unsigned char *, size_t,
		    int maxdepth);
/* Set why from a format; the result never holds '"' or '\'. */
void		 jose_why(char why[JOSE_WHY_MAX], const char *, ...)
		    __attribute__((format(printf, 2, 3)));

#endif
