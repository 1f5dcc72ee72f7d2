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

#include <jansson.h>

/* Expand a value (caller frees), or NULL with err set. */
char	*secret_expand(const char *, char *err, size_t errlen);

/*
 * Expand only the ${env:NAME} references whose variables are set, with
 * every $ of their values doubled, and leave the rest as written: what
 * secret_expand makes of the result anywhere is what it makes of the
 * value here.  So the daemon expands what comes from its environment
 * before it starts a worker, whose environment holds none of it, and
 * the worker the rest (files, once it runs as its user).  Caller frees.
 */
char	*secret_expand_env(const char *);

/*
 * The text p[0..len) with every occurrence of secret replaced by mask
 * (a new NUL-terminated string, caller frees, its length in *outlen), or
 * NULL if the secret (not empty) does not occur.  Mask before cutting a
 * text short: a cut secret is no longer found.
 */
char	*secret_mask(const char *p, size_t len, const char *secret,
	    const char *mask, size_t *outlen);

/* Wipe and free a string that held a secret (NULL is fine). */
void	 secret_free(char *);
/* Wipe the strings an object holds (a token response, a request that
 * carries a code), before it is freed; not NULL-safe for non-objects. */
void	 secret_wipe_json(json_t *);
/* Wipe every string in a value, at any depth, that only it holds (a
 * value also held elsewhere, refcount above 1, is left as it is): a
 * frame that carried secrets, before it is freed. */
void	 secret_wipe_tree(json_t *);

#endif
