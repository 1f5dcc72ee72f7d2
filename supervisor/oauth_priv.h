/* SPDX-License-Identifier: ISC */
/* What oauth.c and oauth_wait.c share. */
#ifndef MCPS_OAUTH_PRIV_H
#define MCPS_OAUTH_PRIV_H

/* What a token that is OAUTH_PENDING waits for. */
enum wait_kind {
	WAIT_KEYS = 1,		/* fresh keys of its issuer */
	WAIT_INTROSPECTION	/* its introspection */
};

/* oauth.c: hash a token, and a digest's first 8 bytes as a key; what the
 * last OAUTH_PENDING verdict needs; put an introspection's verdict (resp
 * NULL: it failed) into the cache. */
void	 oauth_token_digest(const char *, size_t, unsigned char[32]);
uint64_t oauth_digest_key(const unsigned char[32]);
void	 oauth_pending_need(enum wait_kind *, struct idp **);
void	 oauth_introspected(struct idp *, const unsigned char[32],
	    json_t *resp);

/* oauth_wait.c: how many wait, how many ever waited or shared an
 * introspection, and an end to every wait (no callback runs). */
size_t	 oauth_waiting(void);
uint64_t oauth_waits_total(void);
uint64_t oauth_waits_shared(void);
void	 oauth_waits_clear(void);

#endif
