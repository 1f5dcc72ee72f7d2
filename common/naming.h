/*
 * Exposed names of upstream tools and prompts: the upstream's prefix
 * followed by the upstream's name, shortened deterministically when longer
 * than NAME_MAX_EXPOSED.  The catalog keeps the map from exposed name back
 * to (upstream, original name), which makes the shortening reversible.
 */
#ifndef MCPS_NAMING_H
#define MCPS_NAMING_H

#include <stddef.h>

#define NAME_MAX_EXPOSED	64
#define NAME_HASH_LEN		8	/* hex digits of the hash suffix */

/*
 * Write the exposed name for prefix+name into out (at least
 * NAME_MAX_EXPOSED + 1 bytes).  Returns 1 if it was shortened, else 0.
 */
int	name_expose(const char *prefix, const char *name, char *out);

/* Is s a valid prefix: only A-Z a-z 0-9 _ - . and at most 32 bytes. */
int	name_valid_prefix(const char *s);

#endif
