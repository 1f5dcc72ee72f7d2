/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <string.h>

#include <openssl/evp.h>
#include <openssl/sha.h>

#include "ws_accept.h"

/* RFC 6455, section 1.3. */
#define WS_GUID		"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
#define WS_GUID_LEN	(sizeof WS_GUID - 1)

_Static_assert(WS_ACCEPT_LEN == 4 * ((SHA_DIGEST_LENGTH + 2) / 3),
    "WS_ACCEPT_LEN is the base64 length of a SHA-1 digest");

int
ws_accept(const char *key, size_t keylen, char *out)
{
	unsigned char	buf[WS_KEY_MAX + WS_GUID_LEN];
	unsigned char	digest[SHA_DIGEST_LENGTH];

	out[0] = '\0';
	if (keylen > WS_KEY_MAX)
		return (-1);
	memcpy(buf, key, keylen);
	memcpy(buf + keylen, WS_GUID, WS_GUID_LEN);
	if (SHA1(buf, keylen + WS_GUID_LEN, digest) == NULL)
		return (-1);
	EVP_EncodeBlock((unsigned char *)out, digest, sizeof digest);
	return (0);
}
