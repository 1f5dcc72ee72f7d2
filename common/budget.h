/* SPDX-License-Identifier: ISC */
/*
 * Budgets of gateway-served sampling: requests per minute as a bucket
 * that holds a minute's worth and refills continuously, and tokens per
 * day over the last 24 hours in hourly slots.  Pure: the caller gives the
 * time (monotonic milliseconds).
 */
#ifndef MCPS_BUDGET_H
#define MCPS_BUDGET_H

#include <stddef.h>
#include <stdint.h>

#include "conf.h"

#define BUDGET_HOURS	24

struct budget {
	double		 bucket;	/* requests that may start now */
	int64_t		 refilled;	/* when the bucket was last filled */
	uint64_t	 tokens[BUDGET_HOURS];	/* per hour, a ring */
	int64_t		 hour;		/* the hour of the newest slot */
	int		 started;
};

void		 budget_init(struct budget *);
/*
 * May a request start now?  0 if both limits allow it, else -1 with the
 * reason in why.  Nothing is counted.
 */
int		 budget_check(struct budget *, const struct budget_conf *,
		    int64_t now, char *why, size_t len);
/* Count a request that starts now. */
void		 budget_take(struct budget *, const struct budget_conf *,
		    int64_t now);
/* Count the tokens a request used. */
void		 budget_add_tokens(struct budget *, uint64_t, int64_t now);
/* Tokens used in the last 24 hours. */
uint64_t	 budget_tokens_used(struct budget *, int64_t now);
/* Requests that could start now (the limit if there is none). */
unsigned int	 budget_requests_left(struct budget *,
		    const struct budget_conf *, int64_t now);

#endif
