/* SPDX-License-Identifier: ISC */
/*
 * JSON Web Keys and Key Sets read into OpenSSL public keys (RFC 7517,
 * RFC 7518 section 6, RFC 8037), base64url, and the algorithm table.
 * The policy is in jose.h.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>

#include "b64.h"
#include "jose_priv.h"
#include "xmalloc.h"

static const struct jose_alg algs[] = {
	{ "RS256", JOSE_RS256, JOSE_KTY_RSA, "SHA256", 0, 0 },
	{ "RS384", JOSE_RS384, JOSE_KTY_RSA, "SHA384", 0, 0 },
	{ "RS512", JOSE_RS512, JOSE_KTY_RSA, "SHA512", 0, 0 },
	{ "PS256", JOSE_PS256, JOSE_KTY_RSA, "SHA256", 1, 0 },
	{ "PS384", JOSE_PS384, JOSE_KTY_RSA, "SHA384", 1, 0 },
	{ "PS512", JOSE_PS512, JOSE_KTY_RSA, "SHA512", 1, 0 },
	{ "ES256", JOSE_ES256, JOSE_KTY_EC, "SHA256", 0, 32 },
	{ "ES384", JOSE_ES384, JOSE_KTY_EC, "SHA384", 0, 48 },
	{ "ES512", JOSE_ES512, JOSE_KTY_EC, "SHA512", 0, 66 },
	{ "EdDSA", JOSE_EDDSA, JOSE_KTY_OKP, NULL, 0, 0 },
	{ "Ed25519", JOSE_ED25519, JOSE_KTY_OKP, NULL, 0, 0 },
	{ "Ed448", JOSE_ED448, JOSE_KTY_OKP, NULL, 0, 0 },
};
#define NALGS	(sizeof algs / sizeof algs[0])

#define RSA_ALGS (JOSE_RS256 | JOSE_RS384 | JOSE_RS512 | JOSE_PS256 | \
	JOSE_PS384 | JOSE_PS512)

/* The curves of EC keys: JWK name, OpenSSL group, coordinate bytes. */
static const struct {
	const char	*crv;
	const char	*group;
	size_t		 coord;
	unsigned int	 alg;
} curves[] = {
	{ "P-256", "prime256v1", 32, JOSE_ES256 },
	{ "P-384", "secp384r1", 48, JOSE_ES384 },
	{ "P-521", "secp521r1", 66, JOSE_ES512 },
};

/* Members that only a private or a symmetric key has (RFC 7518, 6.3.2, 6.4). */
static const char *const private_members[] = {
	"d", "p", "q", "dp", "dq", "qi", "oth", "k"
};

void
jose_why(char why[JOSE_WHY_MAX], const char *fmt, ...)
{
	va_list	ap;
	char	*p;

	va_start(ap, fmt);
	vsnprintf(why, JOSE_WHY_MAX, fmt, ap);
	va_end(ap);
	for (p = why; *p != '\0'; p++)
		if (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20 ||
		    (unsigned char)*p >= 0x7f)
			*p = '?';
}

const struct jose_alg *
jose_alg_get(unsigned int bit)
{
	size_t	i;

	for (i = 0; i < NALGS; i++)
		if (algs[i].bit == bit)
			return (&algs[i]);
	return (NULL);
}

unsigned int
jose_alg_from_name(const char *name)
{
	size_t	i;

	for (i = 0; i < NALGS; i++)
		if (strcmp(algs[i].name, name) == 0)
			return (algs[i].bit);
	return (0);
}

const char *
jose_alg_name(unsigned int bit)
{
	const struct jose_alg	*a = jose_alg_get(bit);

	return (a == NULL ? NULL : a->name);
}

int
jose_algs_parse(const char *s, unsigned int *out, char why[JOSE_WHY_MAX])
{
	char		 name[16];
	size_t		 n;
	unsigned int	 bit, set = 0;

	for (;;) {
		while (*s == ' ' || *s == ',' || *s == '\t')
			s++;
		if (*s == '\0')
			break;
		n = strcspn(s, " ,\t");
		if (n >= sizeof name) {
			jose_why(why, "an algorithm name is too long");
			return (-1);
		}
		memcpy(name, s, n);
		name[n] = '\0';
		s += n;
		if ((bit = jose_alg_from_name(name)) != 0) {
			set |= bit;
			continue;
		}
		if (strcasecmp(name, "none") == 0)
			jose_why(why, "none is never allowed");
		else if (strncmp(name, "HS", 2) == 0)
			jose_why(why, "%s needs a shared secret: the issuer's keys "
			    "are public", name);
		else
			jose_why(why, "unknown algorithm %s (RS256, RS384, RS512, "
			    "PS256, PS384, PS512, ES256, ES384, ES512, EdDSA, "
			    "Ed25519, Ed448)", name);
		return (-1);
	}
	if (set == 0) {
		jose_why(why, "no algorithm");
		return (-1);
	}
	*out = set;
	return (0);
}

size_t
jose_b64url_decoded_max(size_t len)
{
	return (len / 4 * 3 + (len % 4) * 3 / 4);
}

int
jose_b64url_decode(const char *in, size_t len, unsigned char *out,
    size_t outmax, size_t *outlen)
{
	size_t		i, o = 0;
	uint32_t	acc = 0;
	int		v, bits = 0;

	/* One character left over carries 6 bits: no whole byte. */
	if (len % 4 == 1 || jose_b64url_decoded_max(len) > outmax)
		return (-1);
	for (i = 0; i < len; i++) {
		if ((v = b64url_digit((unsigned char)in[i])) < 0)
			return (-1);
		acc = (acc << 6) | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (unsigned char)(acc >> bits);
			acc &= (1U << bits) - 1;
		}
	}
	/* The bits left over must be zero: one encoding per byte string. */
	if (acc != 0)
		return (-1);
	*outlen = o;
	return (0);
}

int
jose_json_depth_ok(const unsigned char *p, size_t len, int maxdepth)
{
	size_t	i;
	int	depth = 0, instr = 0;

	for (i = 0; i < len; i++) {
		if (instr) {
			if (p[i] == '\\')
				i++;
			else if (p[i] == '"')
				instr = 0;
			continue;
		}
		switch (p[i]) {
		case '"':
			instr = 1;
			break;
		case '{':
		case '[':
			if (++depth > maxdepth)
				return (0);
			break;
		case '}':
		case ']':
			depth--;
			break;
		}
	}
	return (1);
}

/*
 * Decode a base64url member of a JWK into a new buffer of at most max
 * bytes.  Returns the buffer (caller frees) and its length, or NULL.
 */
static unsigned char *
member_bytes(json_t *k, const char *name, size_t max, size_t *len,
    char why[JOSE_WHY_MAX])
{
	json_t		*v = json_object_get(k, name);
	unsigned char	*buf;
	const char	*s;
	size_t		 slen;

	if (v == NULL) {
		jose_why(why, "no %s", name);
		return (NULL);
	}
	if (!json_is_string(v)) {
		jose_why(why, "%s is not a string", name);
		return (NULL);
	}
	s = json_string_value(v);
	slen = json_string_length(v);
	if (jose_b64url_decoded_max(slen) > max) {
		jose_why(why, "%s is too long", name);
		return (NULL);
	}
	buf = xmalloc(max > 0 ? max : 1);
	if (jose_b64url_decode(s, slen, buf, max, len) == -1 || *len == 0) {
		free(buf);
		jose_why(why, "%s is not base64url", name);
		return (NULL);
	}
	return (buf);
}

/* Build a key from OSSL_PARAMs; NULL on failure. */
static EVP_PKEY *
from_params(const char *type, OSSL_PARAM_BLD *bld)
{
	OSSL_PARAM	*params = NULL;
	EVP_PKEY_CTX	*ctx = NULL;
	EVP_PKEY	*pkey = NULL;

	if ((params = OSSL_PARAM_BLD_to_param(bld)) == NULL ||
	    (ctx = EVP_PKEY_CTX_new_from_name(NULL, type, NULL)) == NULL ||
	    EVP_PKEY_fromdata_init(ctx) != 1 ||
	    EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_PUBLIC_KEY, params) != 1) {
		EVP_PKEY_free(pkey);
		pkey = NULL;
	}
	EVP_PKEY_CTX_free(ctx);
	OSSL_PARAM_free(params);
	return (pkey);
}

/* Read an RSA key's n and e. */
static int
rsa_key(json_t *k, struct jose_key *key, char why[JOSE_WHY_MAX])
{
	unsigned char	*n = NULL, *e = NULL, *np, *ep;
	size_t		 nlen, elen;
	BIGNUM		*bn = NULL, *be = NULL;
	OSSL_PARAM_BLD	*bld = NULL;
	unsigned int	 top;
	int		 bits, rc = -1;

	/* A leading zero byte is tolerated, so one more than the maximum. */
	if ((n = member_bytes(k, "n", JOSE_RSA_MAX_BITS / 8 + 1, &nlen,
	    why)) == NULL || (e = member_bytes(k, "e", 16, &elen, why)) == NULL)
		goto out;
	for (np = n; nlen > 0 && *np == 0; np++, nlen--)
		;
	for (ep = e; elen > 0 && *ep == 0; ep++, elen--)
		;
	bits = nlen == 0 ? 0 : (int)(nlen - 1) * 8;
	for (top = nlen == 0 ? 0 : np[0]; top != 0; top >>= 1)
		bits++;
	if (bits < JOSE_RSA_MIN_BITS) {
		jose_why(why, "an RSA modulus of %d bits, under %d", bits,
		    JOSE_RSA_MIN_BITS);
		goto out;
	}
	if (bits > JOSE_RSA_MAX_BITS) {
		jose_why(why, "an RSA modulus of %d bits, over %d", bits,
		    JOSE_RSA_MAX_BITS);
		goto out;
	}
	/* An odd public exponent of at least 3 and at most 64 bits. */
	if (elen == 0 || elen > 8 || (ep[elen - 1] & 1) == 0 ||
	    (elen == 1 && ep[0] < 3)) {
		jose_why(why, "an RSA public exponent that is not odd, at "
		    "least 3 and at most 64 bits");
		goto out;
	}
	if ((bn = BN_bin2bn(np, (int)nlen, NULL)) == NULL ||
	    (be = BN_bin2bn(ep, (int)elen, NULL)) == NULL ||
	    (bld = OSSL_PARAM_BLD_new()) == NULL ||
	    OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, bn) != 1 ||
	    OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, be) != 1 ||
	    (key->pkey = from_params("RSA", bld)) == NULL) {
		jose_why(why, "OpenSSL refuses the RSA key");
		goto out;
	}
	key->kty = JOSE_KTY_RSA;
	key->algs = RSA_ALGS;
	key->siglen = nlen;
	rc = 0;
out:
	OSSL_PARAM_BLD_free(bld);
	BN_free(bn);
	BN_free(be);
	free(n);
	free(e);
	return (rc);
}

/* Read an EC key's curve and point, which OpenSSL checks is on it. */
static int
ec_key(json_t *k, struct jose_key *key, char why[JOSE_WHY_MAX])
{
	json_t		*crv = json_object_get(k, "crv");
	unsigned char	*x = NULL, *y = NULL, point[1 + 2 * 66];
	size_t		 i, xlen, ylen;
	OSSL_PARAM_BLD	*bld = NULL;
	EVP_PKEY_CTX	*ctx = NULL;
	int		 rc = -1;

	if (!json_is_string(crv)) {
		jose_why(why, "an EC key without a crv string");
		return (-1);
	}
	for (i = 0; i < sizeof curves / sizeof curves[0]; i++)
		if (strcmp(json_string_value(crv), curves[i].crv) == 0)
			break;
	if (i == sizeof curves / sizeof curves[0]) {
		jose_why(why, "an EC curve other than P-256, P-384, P-521");
		return (-1);
	}
	if ((x = member_bytes(k, "x", curves[i].coord, &xlen, why)) == NULL ||
	    (y = member_bytes(k, "y", curves[i].coord, &ylen, why)) == NULL)
		goto out;
	/* RFC 7518, 6.2.1.2: the full size of a coordinate. */
	if (xlen != curves[i].coord || ylen != curves[i].coord) {
		jose_why(why, "EC coordinates of %zu and %zu bytes, not %zu",
		    xlen, ylen, curves[i].coord);
		goto out;
	}
	point[0] = 0x04;	/* uncompressed */
	memcpy(point + 1, x, xlen);
	memcpy(point + 1 + xlen, y, ylen);
	if ((bld = OSSL_PARAM_BLD_new()) == NULL ||
	    OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME,
	    curves[i].group, 0) != 1 ||
	    OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY,
	    point, 1 + xlen + ylen) != 1 ||
	    (key->pkey = from_params("EC", bld)) == NULL) {
		jose_why(why, "the EC point is not on the curve");
		goto out;
	}
	/* On the curve, not at infinity, of the group's order. */
	if ((ctx = EVP_PKEY_CTX_new_from_pkey(NULL, key->pkey, NULL)) == NULL ||
	    EVP_PKEY_public_check(ctx) != 1) {
		jose_why(why, "the EC point is not a valid public key");
		goto out;
	}
	key->kty = JOSE_KTY_EC;
	key->algs = curves[i].alg;
	key->siglen = 2 * curves[i].coord;
	rc = 0;
out:
	if (rc == -1) {
		EVP_PKEY_free(key->pkey);
		key->pkey = NULL;
	}
	EVP_PKEY_CTX_free(ctx);
	OSSL_PARAM_BLD_free(bld);
	free(x);
	free(y);
	return (rc);
}

/* Read an OKP key: Ed25519 or Ed448 (RFC 8037). */
static int
okp_key(json_t *k, struct jose_key *key, char why[JOSE_WHY_MAX])
{
	json_t		*crv = json_object_get(k, "crv");
	const char	*c, *type;
	unsigned char	*x;
	size_t		 want, xlen;

	if (!json_is_string(crv)) {
		jose_why(why, "an OKP key without a crv string");
		return (-1);
	}
	c = json_string_value(crv);
	if (strcmp(c, "Ed25519") == 0) {
		type = "ED25519";
		want = 32;
		key->algs = JOSE_EDDSA | JOSE_ED25519;
		key->siglen = 64;
	} else if (strcmp(c, "Ed448") == 0) {
		type = "ED448";
		want = 57;
		key->algs = JOSE_EDDSA | JOSE_ED448;
		key->siglen = 114;
	} else {
		jose_why(why, "an OKP curve other than Ed25519 and Ed448");
		return (-1);
	}
	if ((x = member_bytes(k, "x", want, &xlen, why)) == NULL)
		return (-1);
	if (xlen != want) {
		free(x);
		jose_why(why, "an %s key of %zu bytes, not %zu", type, xlen,
		    want);
		return (-1);
	}
	key->pkey = EVP_PKEY_new_raw_public_key_ex(NULL, type, NULL, x, xlen);
	free(x);
	if (key->pkey == NULL) {
		jose_why(why, "OpenSSL refuses the %s key", type);
		return (-1);
	}
	key->kty = JOSE_KTY_OKP;
	return (0);
}

/* Is the key for signatures, by its use and key_ops (RFC 7517, 4.2, 4.3)? */
static int
key_for_verify(json_t *k, char why[JOSE_WHY_MAX])
{
	json_t		*use = json_object_get(k, "use");
	json_t		*ops = json_object_get(k, "key_ops"), *op;
	size_t		 i, j;
	int		 verify = 0;

	if (use != NULL) {
		if (!json_is_string(use)) {
			jose_why(why, "use is not a string");
			return (-1);
		}
		if (strcmp(json_string_value(use), "sig") != 0) {
			jose_why(why, "use is not sig");
			return (-1);
		}
	}
	if (ops == NULL)
		return (0);
	if (!json_is_array(ops) || json_array_size(ops) > 16) {
		jose_why(why, "key_ops is not an array of at most 16 strings");
		return (-1);
	}
	json_array_foreach(ops, i, op) {
		if (!json_is_string(op)) {
			jose_why(why, "key_ops is not an array of strings");
			return (-1);
		}
		for (j = 0; j < i; j++)
			if (json_equal(op, json_array_get(ops, j))) {
				jose_why(why, "key_ops names an operation twice");
				return (-1);
			}
		if (strcmp(json_string_value(op), "verify") == 0)
			verify = 1;
	}
	if (!verify) {
		jose_why(why, "key_ops does not name verify");
		return (-1);
	}
	return (0);
}

/* Read one JWK object into key.  Returns 0, or -1 with why set. */
static int
key_parse(json_t *k, struct jose_key *key, char why[JOSE_WHY_MAX])
{
	json_t		*kty, *kid, *alg;
	const char	*t;
	unsigned int	 bit = 0;
	size_t		 i;

	memset(key, 0, sizeof *key);
	if (!json_is_object(k)) {
		jose_why(why, "not a JSON object");
		return (-1);
	}
	if (!json_is_string(kty = json_object_get(k, "kty"))) {
		jose_why(why, "no kty string");
		return (-1);
	}
	t = json_string_value(kty);
	if (strcmp(t, "oct") == 0) {
		jose_why(why, "a symmetric (oct) key");
		return (-1);
	}
	for (i = 0; i < sizeof private_members / sizeof private_members[0];
	    i++)
		if (json_object_get(k, private_members[i]) != NULL) {
			jose_why(why, "a private key member (%s): refused, "
			    "since anyone can sign with it", private_members[i]);
			return (-1);
		}
	if (key_for_verify(k, why) == -1)
		return (-1);
	if ((alg = json_object_get(k, "alg")) != NULL) {
		if (!json_is_string(alg)) {
			jose_why(why, "alg is not a string");
			return (-1);
		}
		if ((bit = jose_alg_from_name(json_string_value(alg))) == 0) {
			jose_why(why, "alg is not a signature algorithm we "
			    "verify");
			return (-1);
		}
	}
	if ((kid = json_object_get(k, "kid")) != NULL &&
	    (!json_is_string(kid) || json_string_length(kid) > JOSE_KID_MAX)) {
		jose_why(why, "kid is not a string of at most %d bytes",
		    JOSE_KID_MAX);
		return (-1);
	}
	if (strcmp(t, "RSA") == 0) {
		if (rsa_key(k, key, why) == -1)
			return (-1);
	} else if (strcmp(t, "EC") == 0) {
		if (ec_key(k, key, why) == -1)
			return (-1);
	} else if (strcmp(t, "OKP") == 0) {
		if (okp_key(k, key, why) == -1)
			return (-1);
	} else {
		jose_why(why, "a key type other than RSA, EC and OKP");
		return (-1);
	}
	if (bit != 0) {
		if ((key->algs & bit) == 0) {
			jose_why(why, "alg %s does not fit the key",
			    jose_alg_name(bit));
			EVP_PKEY_free(key->pkey);
			key->pkey = NULL;
			return (-1);
		}
		key->algs = bit;
	}
	if (kid != NULL)
		key->kid = xstrdup(json_string_value(kid));
	return (0);
}

/* Parse JSON text of at most JOSE_JWKS_MAX bytes; NULL with why. */
static json_t *
load(const char *text, size_t len, char why[JOSE_WHY_MAX])
{
	json_error_t	 err;
	json_t		*j;

	if (len > JOSE_JWKS_MAX) {
		jose_why(why, "%zu bytes, over %d", len, JOSE_JWKS_MAX);
		return (NULL);
	}
	if ((j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err)) == NULL) {
		jose_why(why, "not JSON (byte %d), or a member twice",
		    err.position);
		return (NULL);
	}
	if (!json_is_object(j)) {
		json_decref(j);
		jose_why(why, "not a JSON object");
		return (NULL);
	}
	return (j);
}

struct jose_jwks *
jose_jwks_parse(const char *text, size_t len, char why[JOSE_WHY_MAX])
{
	struct jose_jwks	*set;
	json_t			*j, *keys, *k;
	char			 kwhy[JOSE_WHY_MAX], first[JOSE_WHY_MAX];
	size_t			 i, skipped = 0, firstat = 0;

	if ((j = load(text, len, why)) == NULL)
		return (NULL);
	keys = json_object_get(j, "keys");
	if (!json_is_array(keys)) {
		json_decref(j);
		jose_why(why, "no keys array");
		return (NULL);
	}
	if (json_array_size(keys) > JOSE_JWKS_KEYS) {
		jose_why(why, "%zu keys, over %d", json_array_size(keys),
		    JOSE_JWKS_KEYS);
		json_decref(j);
		return (NULL);
	}
	set = xcalloc(1, sizeof *set);
	set->keys = xcalloc(json_array_size(keys) + 1, sizeof *set->keys);
	first[0] = '\0';
	json_array_foreach(keys, i, k) {
		if (key_parse(k, &set->keys[set->nkeys], kwhy) == 0) {
			set->nkeys++;
			continue;
		}
		if (skipped++ == 0) {
			firstat = i;
			memcpy(first, kwhy, sizeof first);
		}
	}
	json_decref(j);
	ERR_clear_error();
	if (set->nkeys == 0) {
		if (skipped == 0)
			jose_why(why, "no key");
		else
			jose_why(why, "no usable key of %zu; key %zu: %s",
			    skipped, firstat, first);
		jose_jwks_free(set);
		return (NULL);
	}
	if (skipped > 0)
		jose_why(set->note, "%zu of %zu keys skipped; key %zu: %s",
		    skipped, skipped + set->nkeys, firstat, first);
	return (set);
}

struct jose_jwks *
jose_jwk_parse(const char *text, size_t len, char why[JOSE_WHY_MAX])
{
	struct jose_jwks	*set;
	json_t			*j;
	int			 rc;

	if ((j = load(text, len, why)) == NULL)
		return (NULL);
	set = xcalloc(1, sizeof *set);
	set->keys = xcalloc(1, sizeof *set->keys);
	rc = key_parse(j, &set->keys[0], why);
	json_decref(j);
	ERR_clear_error();
	if (rc == -1) {
		jose_jwks_free(set);
		return (NULL);
	}
	set->nkeys = 1;
	return (set);
}

void
jose_jwks_free(struct jose_jwks *set)
{
	size_t	i;

	if (set == NULL)
		return;
	for (i = 0; i < set->nkeys; i++) {
		EVP_PKEY_free(set->keys[i].pkey);
		free(set->keys[i].kid);
	}
	free(set->keys);
	free(set);
}

size_t
jose_jwks_count(const struct jose_jwks *set)
{
	return (set->nkeys);
}

int
jose_jwks_has_kid(const struct jose_jwks *set, const char *kid)
{
	size_t	i;

	for (i = 0; i < set->nkeys; i++)
		if (set->keys[i].kid != NULL &&
		    strcmp(set->keys[i].kid, kid) == 0)
			return (1);
	return (0);
}

const char *
jose_jwks_note(const struct jose_jwks *set)
{
	return (set->note);
}
