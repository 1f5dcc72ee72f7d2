/* SPDX-License-Identifier: ISC */
/* HTML forms as browsers post them (application/x-www-form-urlencoded). */
#ifndef MCPS_FORM_H
#define MCPS_FORM_H

#include <stddef.h>

/*
 * The value of the first field called name (compared as written, not
 * decoded) in the len bytes at q, decoded ('+' is a space, %XX a byte)
 * into buf, NUL-terminated.  1 if found; 0 if absent, longer than
 * buflen - 1, badly encoded or holding a NUL.
 */
int	form_field(const char *q, size_t len, const char *name, char *buf,
	    size_t buflen);
/* Is there a field called name, whatever its value? */
int	form_has(const char *q, size_t len, const char *name);

#endif
