/* SPDX-License-Identifier: ISC */
/*
 * Values that name secrets instead of holding them: ${env:NAME} is an
 * environment variable of the daemon, ${file:PATH} the first line of a
 * file (read when the value is used, so a rotated secret is picked up on
 * restart); $$ is a dollar sign.  Expanded values are never logged.
 */
#ifndef MCPS_SECRET_H
#define MCPS_SECRET_H

#include <stddef.h>

/* Expand a value (caller frees), or NULL with err set. */
char	*secret_expand(const char *, char *err, size_t errlen);

#endif
