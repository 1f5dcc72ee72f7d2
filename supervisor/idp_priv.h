/* SPDX-License-Identifier: ISC */
/*
 * An OAuth issuer as idp.c keeps it, for the files that report on it
 * (idp_status.c); everyone else sees struct idp through supervisor.h's
 * functions.
 */
#ifndef IDP_PRIV_H
#define IDP_PRIV_H

#include <time.h>

#include <jansson.h>

#include "supervisor.h"

enum idp_state {
	IDP_STARTING = 0,
	IDP_READY,
	IDP_BACKOFF,
	IDP_STOPPED,
	IDP_FAILED		/* its configuration was refused */
};

/* Someone waiting: for keys (cb), or for an introspection (icb). */
struct idp_waiter {
	struct idp		*idp;
	uint64_t		 id;
	uint32_t		 tag;		/* introspection, else 0 */
	struct event		*ev;		/* its deadline, or at once */
	void			(*cb)(void *);
	void			(*icb)(void *, json_t *, const char *);
	void			*arg;
	const char		*why;		/* at once: the error, static */
	TAILQ_ENTRY(idp_waiter)	 entry;
};
TAILQ_HEAD(idp_waiters, idp_waiter);

struct idp {
	struct oauth_issuer_conf *ic;		/* owned copy */
	struct proc		 proc;		/* its worker */
	enum idp_state		 state;
	struct jose_jwks	*jwks;		/* or NULL before the first */
	size_t			 nkeys;
	time_t			 fetched;	/* wall clock of the set, or 0 */
	char			*introspection_endpoint;	/* or NULL */
	char			*authorization_endpoint;	/* or NULL */
	int			 keyless;	/* no key set: opaque tokens,
						   introspected */
	int			 server;	/* -1 unknown, 0 down, 1 up */
	char			*server_error;	/* or NULL */
	time_t			 server_error_at;
	/* Refreshes asked for and introspections. */
	int			 refreshing;	/* one is with the worker */
	int64_t			 refresh_sent;	/* monotonic ms, or 0 */
	struct idp_waiters	 waiters;	/* refreshes */
	size_t			 nwaiters;
	struct idp_waiters	 asks;		/* introspections */
	size_t			 nasks;
	uint32_t		 next_tag;
	/* Counters since the daemon started (the worker's restarts too). */
	uint64_t		 jwks_fetches;	/* the worker's, as said */
	uint64_t		 key_sets;	/* sets taken */
	uint64_t		 refreshes;	/* asked of the worker */
	uint64_t		 refreshes_limited;	/* not asked: the bound */
	uint64_t		 introspections;
	uint64_t		 introspection_errors;
};

extern const char *const idp_state_names[];	/* by enum idp_state */

size_t		 idp_count(void);

#endif
