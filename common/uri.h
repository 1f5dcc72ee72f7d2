/* SPDX-License-Identifier: ISC */
/*
 * URIs as an access check must see them: the normal form of RFC 3986
 * section 6.2.2 (scheme and host in lower case, percent-encodings in
 * upper case, unreserved characters decoded, "." segments removed as
 * section 5.2.4 does), and a refusal wherever a reader could resolve the
 * URI otherwise than that form says: a ".." segment (lexically removed,
 * it would disagree with a file system that follows a symbolic link), a
 * "/", "\" or dot spelled with percent-encoding in the path, a "\" before
 * the query, "%25" before a hex digit or '%' in the path (decoded twice,
 * it may be another character), an empty segment inside the path, an encoded
 * NUL, control characters, invalid percent-encoding, no scheme.  Other
 * characters (spaces, a template's braces, UTF-8) are kept as they are:
 * this checks URIs, it does not validate them.  Pure.
 */
#ifndef MCPS_URI_H
#define MCPS_URI_H

#include <stddef.h>

/*
 * In the path, decode every percent-encoding that does not change the
 * URI's structure (all but %25, %3F, %23 and control characters), as a
 * file server reads it.
 */
#define URI_DECODE	0x01

/*
 * Write the normal form of in[0..len) to out (NUL-terminated; never
 * longer than the input, so len + 1 bytes suffice).  0 on success, else
 * -1 with why (static text) and out undefined.
 */
int	uri_normalize(const char *in, size_t len, int flags, char *out,
	    size_t size, const char **why);

#endif
