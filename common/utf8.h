/* SPDX-License-Identifier: ISC */
/*
 * UTF-8 as RFC 3629 defines it: no overlong forms, no surrogates, nothing
 * past U+10FFFF.
 */
#ifndef UTF8_H
#define UTF8_H

#include <stddef.h>

/* Is p[0..n) well-formed UTF-8? */
int	utf8_valid(const unsigned char *p, size_t n);
/* Make s[0..n) well-formed in place: each byte that begins no well-formed
 * sequence (a Latin-1 byte, a sequence cut short) becomes '?'. */
void	utf8_scrub(char *s, size_t n);

#endif
