/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "b64.h"
#include "state_token.h"

#define PAYLOAD_LEN	64
#define MAC_LEN		32

_Static_assert(sizeof STOKEN_PREFIX - 1 + STOKEN_INSTANCE_MAX + 1 +
    B64URL_LEN(PAYLOAD_LEN) + 1 + B64URL_LEN(MAC_LEN) < STOKEN_MAX,
    "STOKEN_MAX holds the longest token");

int
stoken_instance_valid(const char *s)
{
	size_t	i, n = strlen(s);

	if (n == 0 || n > STOKEN_INSTANCE_MAX)
		return (0);
	for (i = 0; i < n; i++) {
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' &&
		    s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
		    s[i] == '_' || s[i] == '-'))
			return (0);
	}
	return (1);
}

/* Decode exactly n bytes from unpadded, canonical Base64url; -1 if not. */
static int
b64_decode(const char *in, size_t len, unsigned char *out, size_t n)
{
	size_t		i, o = 0;
	uint32_t	v;
	int		d, k, digits;

	if (len != B64URL_LEN(n))
		return (-1);
	for (i = 0; i < len; i += 4) {
		v = 0;
		digits = len - i < 4 ? (int)(len - i) : 4;
		for (k = 0; k < 4; k++) {
			d = k < digits ?
			    b64url_digit((unsigned char)in[i + k]) : 0;
			if (d < 0)
				return (-1);
			v = (v << 6) | (uint32_t)d;
		}
		out[o++] = (unsigned char)(v >> 16);
		if (digits > 2)
			out[o++] = (unsigned char)(v >> 8);
		if (digits > 3)
			out[o++] = (unsigned char)v;
		/* Bits below the last byte must be zero (canonical). */
		if ((digits == 2 && (v & 0xffff) != 0) ||
		    (digits == 3 && (v & 0xff) != 0))
			return (-1);
	}
	return (o == n ? 0 : -1);
}

/* Hash one length-prefixed field into a digest. */
static void
bind_field(EVP_MD_CTX *ctx, const char *p, size_t len)
{
	unsigned char	l[8];
	int		i;

	for (i = 0; i < 8; i++)
		l[i] = (unsigned char)((uint64_t)len >> (56 - 8 * i));
	EVP_DigestUpdate(ctx, l, sizeof l);
	EVP_DigestUpdate(ctx, p, len);
}

void
stoken_binding(const char *principal, const char *method, const char *name,
    size_t namelen, const char *args, size_t argslen,
    unsigned char out[STOKEN_BINDING_LEN])
{
	EVP_MD_CTX	*ctx;
	unsigned int	 len = STOKEN_BINDING_LEN;

	if ((ctx = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
		memset(out, 0, STOKEN_BINDING_LEN);
		EVP_MD_CTX_free(ctx);
		return;
	}
	bind_field(ctx, principal, strlen(principal));
	bind_field(ctx, method, strlen(method));
	bind_field(ctx, name, namelen);
	bind_field(ctx, args, argslen);
	EVP_DigestFinal_ex(ctx, out, &len);
	EVP_MD_CTX_free(ctx);
}

/* The MAC of a token's first part. */
static void
stoken_mac(const unsigned char *key, size_t keylen, const char *p,
    size_t len, unsigned char mac[MAC_LEN])
{
	unsigned int	maclen = MAC_LEN;

	if (HMAC(EVP_sha256(), key, (int)keylen, (const unsigned char *)p, len,
	    mac, &maclen) == NULL)
		memset(mac, 0, MAC_LEN);
}

void
stoken_mint(const struct stoken *t, const unsigned char *key, size_t keylen,
    char *out)
{
	unsigned char	payload[PAYLOAD_LEN], mac[MAC_LEN];
	size_t		n, il;
	int		i;

	memset(payload, 0, sizeof payload);
	payload[0] = (unsigned char)t->kind;
	payload[2] = (unsigned char)(t->round >> 8);
	payload[3] = (unsigned char)t->round;
	for (i = 0; i < 8; i++)
		payload[8 + i] = (unsigned char)(t->expires >> (56 - 8 * i));
	memcpy(payload + 16, t->id, STOKEN_ID_LEN);
	memcpy(payload + 32, t->binding, STOKEN_BINDING_LEN);

	n = sizeof STOKEN_PREFIX - 1;
	memcpy(out, STOKEN_PREFIX, n);
	il = strnlen(t->instance, STOKEN_INSTANCE_MAX);
	memcpy(out + n, t->instance, il);
	n += il;
	out[n++] = '.';
	n += b64url_encode(payload, sizeof payload, out + n);
	stoken_mac(key, keylen, out, n, mac);
	out[n++] = '.';
	n += b64url_encode(mac, sizeof mac, out + n);
	out[n] = '\0';
}

enum stoken_result
stoken_verify(const char *p, size_t len, const unsigned char *key,
    size_t keylen, uint64_t now, struct stoken *t)
{
	unsigned char	 payload[PAYLOAD_LEN], mac[MAC_LEN], want[MAC_LEN];
	size_t		 pl = sizeof STOKEN_PREFIX - 1, i, dot1, dot2;
	int		 k;

	memset(t, 0, sizeof *t);
	if (len < pl || memcmp(p, STOKEN_PREFIX, pl) != 0)
		return (STOKEN_NOT_OURS);
	for (dot1 = pl; dot1 < len && p[dot1] != '.'; dot1++)
		;
	for (dot2 = dot1 + 1; dot2 < len && p[dot2] != '.'; dot2++)
		;
	if (dot1 == pl || dot1 - pl > STOKEN_INSTANCE_MAX || dot2 >= len)
		return (STOKEN_MALFORMED);
	for (i = pl; i < dot1; i++) {
		if (b64url_digit((unsigned char)p[i]) < 0)
			return (STOKEN_MALFORMED);
	}
	if (b64_decode(p + dot1 + 1, dot2 - dot1 - 1, payload,
	    sizeof payload) != 0 ||
	    b64_decode(p + dot2 + 1, len - dot2 - 1, mac, sizeof mac) != 0)
		return (STOKEN_MALFORMED);
	stoken_mac(key, keylen, p, dot2, want);
	if (CRYPTO_memcmp(mac, want, MAC_LEN) != 0)
		return (STOKEN_BAD_MAC);
	t->kind = payload[0];
	t->round = (unsigned int)payload[2] << 8 | payload[3];
	for (k = 0; k < 8; k++)
		t->expires = t->expires << 8 | payload[8 + k];
	memcpy(t->id, payload + 16, STOKEN_ID_LEN);
	memcpy(t->binding, payload + 32, STOKEN_BINDING_LEN);
	memcpy(t->instance, p + pl, dot1 - pl);
	t->instance[dot1 - pl] = '\0';
	if (payload[1] != 0 || payload[4] != 0 || payload[5] != 0 ||
	    payload[6] != 0 || payload[7] != 0)
		return (STOKEN_MALFORMED);
	if (now >= t->expires)
		return (STOKEN_EXPIRED);
	return (STOKEN_OK);
}

int
stoken_binding_equal(const unsigned char *a, const unsigned char *b)
{
	return (CRYPTO_memcmp(a, b, STOKEN_BINDING_LEN) == 0);
}

const char *
stoken_result_name(enum stoken_result r)
{
	switch (r) {
	case STOKEN_OK:
		return ("valid");
	case STOKEN_NOT_OURS:
		return ("not minted by this gateway");
	case STOKEN_MALFORMED:
		return ("malformed");
	case STOKEN_BAD_MAC:
		return ("failed verification (altered, or minted under another "
		    "key)");
	case STOKEN_EXPIRED:
		return ("expired");
	}
	return ("?");
}
