/* SPDX-License-Identifier: ISC */
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

/* What name_expose_tool and name_expose_prompt did. */
#define NAME_SHORTENED	0x01	/* cut to NAME_MAX_EXPOSED with a hash */
#define NAME_MAPPED	0x02	/* characters replaced, a hash added */

/*
 * Is name[0..len) a tool name as the specification (2025-11-25) allows:
 * 1 to 128 bytes of A-Z a-z 0-9 _ - . ?
 */
int	name_valid_tool(const char *name, size_t len);
/*
 * The exposed name of an upstream's tool: prefix+name when the name is
 * valid, else prefix+mapped, where mapped replaces each character outside
 * the set by '_' and adds '_' and eight hex digits of the FNV-1a hash of
 * the original bytes (so "" and "a b" get distinct, stable names); then
 * shortened as name_expose does.  Returns NAME_* flags.
 */
int	name_expose_tool(const char *prefix, const char *name, size_t len,
	    char *out);
/*
 * The exposed name of a prompt: the specification sets no character set,
 * so only an empty name or one with a control character (NUL among them)
 * is mapped, as for tools.  Returns NAME_* flags.
 */
int	name_expose_prompt(const char *prefix, const char *name, size_t len,
	    char *out);

#endif
