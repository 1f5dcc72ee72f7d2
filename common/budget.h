/* SPDX-License-Identifier: ISC */
/*
 * Budgets of gateway-served sampling: requests per minute as a bucket
 * that holds a minute's worth and refills continuously, and tokens per
 * day over the last 24 hours in hourly slots.  A request reserves tokens
 * when it starts (what it may cost at most, as far as the caller can
 * tell) and settles when it ends, to what it cost; tokens used and
 * tokens reserved together stay within the limit.  Pure: the caller gives
 * the time (monotonic milliseconds).
 */
#ifndef MCPS_BUDGET_H
#define MCPS_BUDGET_H

#include <stddef.h>
#include <stdint.h>

#include "conf.h"

#define BUDGET_HOURS	24
/* The most one request may reserve or be charged (a day's limit is at
 * most 10^12), so that sums of thousands of them cannot overflow. */
#define BUDGET_TOKENS_MAX	10000000000000ULL

struct budget {
	double		 bucket;	/* requests that may start now */
	int64_t		 refilled;	/* when the bucket was last filled */
	uint64_t	 tokens[BUDGET_HOURS];	/* per hour, a ring */
	int64_t		 hour;		/* the hour of the newest slot */
	uint64_t	 reserved;	/* by requests in flight */
	int		 started;
};

void		 budget_init(struct budget *);
/*
 * May a request that reserves tokens start now?  0 if both limits allow
 * it (the tokens used and reserved, with these, within tokens_per_day),
 * else -1 with the reason in why.  Nothing is counted.
 */
int		 budget_check(struct budget *, const struct budget_conf *,
		    int64_t now, uint64_t tokens, char *why, size_t len);
/* Count a request that starts now, and reserve its tokens. */
void		 budget_take(struct budget *, const struct budget_conf *,
		    int64_t now, uint64_t tokens);
/* A request that reserved tokens ended having cost used: charge that. */
void		 budget_settle(struct budget *, uint64_t reserved,
		    uint64_t used, int64_t now);
/* Count tokens used now. */
void		 budget_add_tokens(struct budget *, uint64_t, int64_t now);
/* Tokens used in the last 24 hours. */
uint64_t	 budget_tokens_used(struct budget *, int64_t now);
/* Tokens reserved by requests in flight. */
uint64_t	 budget_tokens_reserved(const struct budget *);
/* Requests that could start now (the limit if there is none). */
unsigned int	 budget_requests_left(struct budget *,
		    const struct budget_conf *, int64_t now);

#endif
