/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "naming.h"
#include "strmap.h"

/*
 * Build the exposed name.  A name that fits is prefix+name.  A longer one
 * keeps its first NAME_MAX_EXPOSED - NAME_HASH_LEN - 1 bytes (cut back to a
 * UTF-8 boundary), then '_' and eight hex digits of the FNV-1a hash of the
 * whole prefix+name, so distinct long names stay distinct and the result is
 * the same on every run.
 */
int
name_expose(const char *prefix, const char *name, char *out)
{
	size_t		plen = strlen(prefix), nlen = strlen(name), keep;
	uint64_t	h;
	char		full[4096];

	if (plen + nlen <= NAME_MAX_EXPOSED) {
		memcpy(out, prefix, plen);
		memcpy(out + plen, name, nlen + 1);
		return (0);
	}
	if (plen + nlen < sizeof full) {
		memcpy(full, prefix, plen);
		memcpy(full + plen, name, nlen + 1);
		h = fnv1a64(full, plen + nlen);
	} else {
		h = fnv1a64(prefix, plen) ^ fnv1a64(name, nlen);
		snprintf(full, sizeof full, "%s%s", prefix, name);
	}
	keep = NAME_MAX_EXPOSED - NAME_HASH_LEN - 1;
	while (keep > 0 && ((unsigned char)full[keep] & 0xc0) == 0x80)
		keep--;
	memcpy(out, full, keep);
	snprintf(out + keep, NAME_MAX_EXPOSED + 1 - keep, "_%08x",
	    (unsigned int)(h ^ (h >> 32)));
	return (1);
}

/* Check a prefix. */
int
name_valid_prefix(const char *s)
{
	size_t	i;

	for (i = 0; s[i] != '\0'; i++) {
		if (i >= 32)
			return (0);
		if (!((s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= '0' && s[i] <= '9') ||
		    s[i] == '_' || s[i] == '-' || s[i] == '.'))
			return (0);
	}
	return (1);
}

/* Is c allowed in a tool name? */
static int
name_char_ok(unsigned char c)
{
	return ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	    (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.');
}

int
name_valid_tool(const char *name, size_t len)
{
	size_t	i;

	if (len == 0 || len > 128)
		return (0);
	for (i = 0; i < len; i++) {
		if (!name_char_ok((unsigned char)name[i]))
			return (0);
	}
	return (1);
}

/*
 * Map a name into the tool character set: each character outside it (a
 * whole UTF-8 sequence counts as one) becomes '_', at most 64 bytes are
 * kept, then '_' and the hash of the original bytes.
 */
static void
name_map(const char *name, size_t len, char *out, size_t outlen)
{
	const unsigned char	*u = (const unsigned char *)name;
	uint64_t		 h = fnv1a64(name, len);
	size_t			 i, n = 0;

	for (i = 0; i < len && n < 64 && n + 1 < outlen; i++) {
		if (name_char_ok(u[i]))
			out[n++] = (char)u[i];
		else if ((u[i] & 0xc0) != 0x80)	/* not a continuation */
			out[n++] = '_';
	}
	snprintf(out + n, outlen - n, "_%08x", (unsigned int)(h ^ (h >> 32)));
}

int
name_expose_tool(const char *prefix, const char *name, size_t len, char *out)
{
	char	mapped[128];

	if (name_valid_tool(name, len))
		return (name_expose(prefix, name, out) ? NAME_SHORTENED : 0);
	name_map(name, len, mapped, sizeof mapped);
	return (NAME_MAPPED |
	    (name_expose(prefix, mapped, out) ? NAME_SHORTENED : 0));
}

int
name_expose_prompt(const char *prefix, const char *name, size_t len,
    char *out)
{
	char	mapped[128];
	size_t	i;
	int	bad = len == 0;

	for (i = 0; i < len && !bad; i++) {
		if ((unsigned char)name[i] < 0x20 || name[i] == 0x7f)
			bad = 1;
	}
	if (!bad)
		return (name_expose(prefix, name, out) ? NAME_SHORTENED : 0);
	name_map(name, len, mapped, sizeof mapped);
	return (NAME_MAPPED |
	    (name_expose(prefix, mapped, out) ? NAME_SHORTENED : 0));
}
