/* SPDX-License-Identifier: ISC */
/*
 * Pinned tool definitions (pin.c), where they are kept (pin_store.c) and
 * what mcpctl asks of them (pin_ctl.c).  Private to those files, the
 * catalog and the tests; the rest of the supervisor sees supervisor.h.
 */
#ifndef MCPS_PIN_H
#define MCPS_PIN_H

#include <sys/queue.h>

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <jansson.h>

#include "naming.h"
#include "strmap.h"

#define PIN_DIGEST_LEN	32			/* SHA-256 */
#define PIN_MAX		100000			/* pins kept */
#define PIN_DEF_MAX	(64 * 1024)		/* a definition kept whole */
#define PIN_STORE_MAX	(16 * 1024 * 1024)	/* definitions kept, in all */
#define PIN_FILE_MAX	(64 * 1024 * 1024)	/* pins.json read at start */
#define PIN_FILE	"pins.json"
#define PIN_REPORTED	4	/* changes remembered as logged, a pin */

/* One pinned tool of an upstream; owned by the list. */
struct pin {
	char		*upstream;	/* its name in the configuration */
	char		*tool;		/* the upstream's own name */
	size_t		 toollen;	/* (it may hold a NUL) */
	char		 exposed[NAME_MAX_EXPOSED + 1];	/* last exposed
					   as; "" if not seen this run */
	unsigned char	 digest[PIN_DIGEST_LEN];	/* pinned */
	char		*def;		/* its canonical text, or NULL if
					   larger than kept */
	time_t		 pinned_at;
	/* A different definition seen since. */
	int		 changed;
	unsigned char	 seen[PIN_DIGEST_LEN];
	char		*seen_def;	/* or NULL */
	time_t		 seen_at;
	/* The last distinct changes logged and counted (a ring, made at
	 * the first change): per-session instances may list other
	 * definitions than the shared one, and than each other, at each
	 * rebuild of their views. */
	unsigned char	(*reported)[PIN_DIGEST_LEN];
	unsigned int	 nreported;	/* ever, the ring's next slot mod */
	int		 changed_shared; /* seen in the global catalog */
	unsigned int	 merge;		/* the global merge that last saw
					   it (pins.merge) */
	unsigned char	 shared[PIN_DIGEST_LEN];	/* what it lists,
					   while changed_shared */
	int		 held;		/* held back (enforce) */
	TAILQ_ENTRY(pin) entry;
	TAILQ_ENTRY(pin) held_entry;	/* while held */
};
TAILQ_HEAD(pin_list, pin);

struct pin_state {
	struct pin_list	 list;		/* in the order first seen */
	struct pin_list	 held;		/* those held back */
	struct strmap	 map;		/* pin_key -> pin */
	size_t		 n;
	size_t		 nheld;
	size_t		 kept;		/* bytes of definitions kept */
	size_t		 added;		/* pinned since the last write */
	unsigned int	 merge;		/* the global merge under way */
};
extern struct pin_state	 pins;

/* pin.c */
struct pin	*pin_find(const char *upstream, const char *tool, size_t len);
/* Add a pin (def: owned canonical text, or NULL); the caller checks
 * that it is not there yet. */
struct pin	*pin_add(const char *upstream, const char *tool, size_t len,
		    const unsigned char *digest, char *def, time_t when);
/* A tool's definition in canonical form: the members name, title,
 * description, inputSchema, outputSchema and annotations that it has,
 * as jansson writes them with JSON_COMPACT | JSON_SORT_KEYS (owned). */
char		*pin_canonical(const json_t *tool, size_t *len);
void		 pin_digest(const char *, size_t, unsigned char *out);
/* Lower-case hex of a digest, into 2 * PIN_DIGEST_LEN + 1 bytes. */
void		 pin_hex(const unsigned char *, char *out);
/* The members that differ between two canonical texts, ", " joined. */
void		 pin_changed_fields(const char *old, const char *new,
		    char *out, size_t outlen);
/* A pin by its exposed name (a changed one first), or "upstream/tool". */
struct pin	*pin_lookup(const char *name);
/* Pin what was seen instead; -1 with err set if nothing changed or the
 * digest given (a prefix of hex, or NULL) is not what was seen. */
int		 pin_approve(struct pin *, const char *digest, char *err,
		    size_t errlen);

/* pin_store.c */
/* A pin was added: write the store soon. */
void		 pin_store_dirty(void);
/* Write it now (nothing without a store); -1 if it failed (logged). */
int		 pin_store_write(void);
/* Write what is due and close. */
void		 pin_store_close(void);
/* The file's path, or NULL (pins kept in memory only). */
const char	*pin_store_path(void);

#endif
