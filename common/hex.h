/* SPDX-License-Identifier: ISC */
/* Hexadecimal digits, as percent-encoding and JSON's \u escapes write them. */
#ifndef MCPS_HEX_H
#define MCPS_HEX_H

/* The value of a hex digit (either case), or -1. */
int	hex_digit(unsigned char);

#endif
