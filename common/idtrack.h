/* SPDX-License-Identifier: ISC */
/*
 * Find the top-level "id" of a JSON-RPC message that is too large to keep,
 * while its bytes stream past: a message over max_message is dropped, and
 * the request it answers must still get an error at once.  The tracker
 * follows strings and nesting only; it does not validate (the text is
 * being thrown away), and gives up on anything unusual (an escaped key, an
 * id longer than IDTRACK_MAX).
 */
#ifndef MCPS_IDTRACK_H
#define MCPS_IDTRACK_H

#include <stddef.h>
#include <stdint.h>

#define IDTRACK_MAX	64	/* longest id text kept */

struct idtrack {
	int	 depth;		/* of nesting, 1 inside the top object */
	int	 in_string;
	int	 escape;	/* the previous byte was a backslash */
	int	 state;		/* where we are in a top-level member */
	char	 key[8];	/* the member's key, if short */
	size_t	 keylen;	/* its length, or more than fits */
	int	 key_escaped;
	char	 id[IDTRACK_MAX];	/* the id's text, once found */
	size_t	 idlen;
	int	 found;		/* id holds a complete value */
	int	 response;	/* a "result" or "error" member was seen */
	int	 failed;	/* not a message whose id can be found */
};

void	idtrack_init(struct idtrack *);
/* Feed the next bytes of the message. */
void	idtrack_feed(struct idtrack *, const char *, size_t);
/*
 * The id of a response (one with a "result" or "error" member) as an
 * integer: 0 once both are known, -1 if not (yet).
 */
int	idtrack_int64(const struct idtrack *, int64_t *);

#endif
