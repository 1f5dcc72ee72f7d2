/* SPDX-License-Identifier: ISC */
/*
 * Base64 digits (RFC 4648: section 4, and the URL alphabet of section 5)
 * and unpadded Base64url encoding, for what writes or reads its own
 * encodings without libcrypto (tokens, cursors, header values).  How
 * strictly a decoder reads stays with its format.
 */
#ifndef MCPS_B64_H
#define MCPS_B64_H

#include <stddef.h>

/* The length of n bytes as unpadded Base64url. */
#define B64URL_LEN(n)	(((n) * 4 + 2) / 3)

/*
 * Encode n bytes as unpadded Base64url into out, which has room for
 * B64URL_LEN(n) + 1 (a NUL follows); returns the length written.
 */
size_t	b64url_encode(const unsigned char *in, size_t n, char *out);
/* The value of a Base64url digit, or -1. */
int	b64url_digit(unsigned char);
/* The value of a Base64 digit (+ and /), or -1. */
int	b64_digit(unsigned char);

#endif
