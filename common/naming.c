#include "config.h"

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
