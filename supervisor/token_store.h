/* SPDX-License-Identifier: ISC */
/*
 * OAuth tokens the gateway holds as a client of its upstreams (issue 23),
 * encrypted at rest under state_dir/oauth (token_store.c).  One file per
 * (upstream, identity), named by a digest of both: AES-256-GCM with a
 * random 96-bit nonce per write and the two names as additional data, so
 * that a file copied to another upstream's name does not open.  The key
 * is state_dir/oauth/key: 32 random bytes, created 0600 (O_EXCL), refused
 * if anyone but its owner may read it.  Writes are atomic (a temporary
 * file, fsync, rename, fsync of the directory) and made by a thread of the
 * store's, in order, so that the loop never waits for a disk; a read sees
 * what waits to be written.  What is stored is opaque here (the caller's
 * JSON); it is never logged.
 */
#ifndef MCPS_TOKEN_STORE_H
#define MCPS_TOKEN_STORE_H

#include <stddef.h>

#define TS_KEY_LEN	32
#define TS_NONCE_LEN	12
#define TS_TAG_LEN	16
#define TS_MAGIC	"MTK1"		/* a file's first 4 bytes */
#define TS_MAGIC_LEN	4
#define TS_MAX		(64 * 1024)	/* a record's plaintext */
#define TS_NAME_MAX	256		/* an upstream's or identity's name */

struct event_base;
struct token_store;

/*
 * Open the store in dir (made 0700 if missing; its key made if missing).
 * NULL with err set if the directory or key cannot be used.  A failed
 * write is logged on base's loop when it fails (base NULL: at the next
 * flush or close).
 */
struct token_store *token_store_open(const char *dir, struct event_base *,
		    char *err, size_t);
/* Close it: what waits is written first; the key is wiped. */
void		 token_store_close(struct token_store *);
/* Wait until what waits is written: the failures not logged yet,
 * logged, and how many. */
int		 token_store_flush(struct token_store *);
/* Hold the writer (for tests), or let it go on; a flush lets it go. */
void		 token_store_pause(struct token_store *, int on);

/*
 * Store a record (atomically, replacing any): sealed now, written soon
 * (a failure then is logged); 0, or -1 with err set.
 */
int		 token_store_put(struct token_store *, const char *upstream,
		    const char *identity, const void *data, size_t len,
		    char *err, size_t);
/*
 * A record, new (caller wipes and frees), its length in *len; NULL with
 * err empty if there is none, NULL with err set if it cannot be read or
 * does not decrypt (changed, truncated, another key or name).
 */
unsigned char	*token_store_get(struct token_store *, const char *upstream,
		    const char *identity, size_t *len, char *err, size_t);
/* Remove a record, soon; 0 (also if there was none), or -1 with err set. */
int		 token_store_delete(struct token_store *, const char *upstream,
		    const char *identity, char *err, size_t);

/*
 * The pure part: seal len bytes under key with aad into out (new,
 * TS_MAGIC_LEN + TS_NONCE_LEN + len + TS_TAG_LEN bytes); open it back
 * (new, wiped by the caller) or -1 if anything was changed.
 */
int		 token_seal(const unsigned char key[TS_KEY_LEN],
		    const void *aad, size_t aadlen, const void *data,
		    size_t len, unsigned char **out, size_t *outlen);
int		 token_unseal(const unsigned char key[TS_KEY_LEN],
		    const void *aad, size_t aadlen, const unsigned char *in,
		    size_t inlen, unsigned char **out, size_t *outlen);

#endif
