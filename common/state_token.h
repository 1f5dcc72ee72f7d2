/* SPDX-License-Identifier: ISC */
/*
 * requestState tokens the gateway mints for a call it parked while a
 * 2026-07-28 client supplies input (multi round-trip requests), and
 * verifies when the client retries.  A token is
 *
 *	mcpsg1.<instance>.<payload>.<mac>
 *
 * where instance names the gateway instance that holds the parked call
 * (in clear, so that a load balancer in front of a fleet can route a
 * retry to it), payload is the Base64url of a fixed 64-byte record (kind,
 * round, expiry in Unix milliseconds, a random 128-bit id, and the
 * SHA-256 binding of the principal, method, name and arguments), and mac
 * is the Base64url of HMAC-SHA256 over everything before it under the
 * gateway's key.  Instances that share the key verify each other's
 * tokens.  Built into libcommon_ws.a: it needs libcrypto.
 */
#ifndef MCPS_STATE_TOKEN_H
#define MCPS_STATE_TOKEN_H

#include <stddef.h>
#include <stdint.h>

#define STOKEN_PREFIX		"mcpsg1."
#define STOKEN_ID_LEN		16
#define STOKEN_BINDING_LEN	32
#define STOKEN_INSTANCE_MAX	32	/* [A-Za-z0-9_-], at least 1 */
#define STOKEN_MAX		200	/* the longest token, with its NUL */
#define STOKEN_KIND_PARKED	1	/* a call parked at an instance */

struct stoken {
	int		 kind;
	unsigned int	 round;			/* 0 to 65535 */
	uint64_t	 expires;		/* Unix ms */
	unsigned char	 id[STOKEN_ID_LEN];
	unsigned char	 binding[STOKEN_BINDING_LEN];
	char		 instance[STOKEN_INSTANCE_MAX + 1];
};

enum stoken_result {
	STOKEN_OK = 0,
	STOKEN_NOT_OURS,	/* no gateway prefix */
	STOKEN_MALFORMED,	/* ours, but not well formed */
	STOKEN_BAD_MAC,		/* altered, or minted under another key */
	STOKEN_EXPIRED
};

/* Is an instance name acceptable (1 to 32 of A-Z a-z 0-9 _ -)? */
int		 stoken_instance_valid(const char *);
/*
 * The binding of a token to its request: SHA-256 over the principal, the
 * method, the routed name or URI and the arguments' raw text as sent
 * (a retry repeats its request byte for byte), each with its length.
 */
void		 stoken_binding(const char *principal, const char *method,
		    const char *name, size_t namelen, const char *args,
		    size_t argslen, unsigned char out[STOKEN_BINDING_LEN]);
/* Write a token (NUL-terminated) into out, of at least STOKEN_MAX. */
void		 stoken_mint(const struct stoken *, const unsigned char *key,
		    size_t keylen, char *out);
/*
 * Check a token: its form, its MAC (in constant time) and its expiry
 * against now (Unix ms).  On STOKEN_OK and STOKEN_EXPIRED, t is filled.
 */
enum stoken_result stoken_verify(const char *, size_t,
		    const unsigned char *key, size_t keylen, uint64_t now,
		    struct stoken *t);
/* Compare two bindings in constant time; 1 if equal. */
int		 stoken_binding_equal(const unsigned char *,
		    const unsigned char *);
const char	*stoken_result_name(enum stoken_result);

#endif
