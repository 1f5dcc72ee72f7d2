/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "budget.h"

#define MS_PER_HOUR	3600000LL
#define MS_PER_MINUTE	60000.0

/* Add without wrapping. */
static uint64_t
add_sat(uint64_t a, uint64_t b)
{
	return (a > UINT64_MAX - b ? UINT64_MAX : a + b);
}

/* One request's tokens, within BUDGET_TOKENS_MAX. */
static uint64_t
clamp(uint64_t n)
{
	return (n > BUDGET_TOKENS_MAX ? BUDGET_TOKENS_MAX : n);
}

void
budget_init(struct budget *b)
{
	memset(b, 0, sizeof *b);
}

/* Bring the hourly ring up to now. */
static void
budget_advance(struct budget *b, int64_t now)
{
	int64_t	hour = now / MS_PER_HOUR, h;

	if (b->hour == 0 || hour < b->hour)
		b->hour = hour;
	if (hour - b->hour >= BUDGET_HOURS)
		memset(b->tokens, 0, sizeof b->tokens);
	else {
		for (h = b->hour + 1; h <= hour; h++)
			b->tokens[h % BUDGET_HOURS] = 0;
	}
	b->hour = hour;
}

/* Refill the bucket up to now: a minute's worth at most. */
static void
budget_refill(struct budget *b, const struct budget_conf *bc, int64_t now)
{
	double	cap = (double)bc->requests_per_minute;

	if (!b->started) {
		b->started = 1;
		b->bucket = cap;
		b->refilled = now;
	}
	if (now > b->refilled) {
		b->bucket += (double)(now - b->refilled) * cap / MS_PER_MINUTE;
		b->refilled = now;
	}
	if (b->bucket > cap)
		b->bucket = cap;
}

uint64_t
budget_tokens_used(struct budget *b, int64_t now)
{
	uint64_t	sum = 0;
	size_t		i;

	budget_advance(b, now);
	for (i = 0; i < BUDGET_HOURS; i++)
		sum = add_sat(sum, b->tokens[i]);
	return (sum);
}

uint64_t
budget_tokens_reserved(const struct budget *b)
{
	return (b->reserved);
}

int
budget_check(struct budget *b, const struct budget_conf *bc, int64_t now,
    uint64_t tokens, char *why, size_t len)
{
	uint64_t	taken, limit = bc->tokens_per_day;

	budget_refill(b, bc, now);
	if (bc->requests_per_minute > 0 && b->bucket < 1.0) {
		snprintf(why, len, "%u requests per minute",
		    bc->requests_per_minute);
		return (-1);
	}
	if (limit == 0)
		return (0);
	taken = add_sat(budget_tokens_used(b, now), b->reserved);
	tokens = clamp(tokens);
	if (taken >= limit || tokens > limit - taken) {
		snprintf(why, len, "%llu tokens per day: %llu used or "
		    "reserved, this request reserves %llu",
		    (unsigned long long)limit,
		    (unsigned long long)taken, (unsigned long long)tokens);
		return (-1);
	}
	return (0);
}

void
budget_take(struct budget *b, const struct budget_conf *bc, int64_t now,
    uint64_t tokens)
{
	budget_refill(b, bc, now);
	if (bc->requests_per_minute > 0 && b->bucket >= 1.0)
		b->bucket -= 1.0;
	b->reserved = add_sat(b->reserved, clamp(tokens));
}

void
budget_settle(struct budget *b, uint64_t reserved, uint64_t used, int64_t now)
{
	reserved = clamp(reserved);
	b->reserved = b->reserved > reserved ? b->reserved - reserved : 0;
	budget_add_tokens(b, used, now);
}

void
budget_add_tokens(struct budget *b, uint64_t n, int64_t now)
{
	size_t	i;

	budget_advance(b, now);
	i = (size_t)(b->hour % BUDGET_HOURS);
	b->tokens[i] = add_sat(b->tokens[i], clamp(n));
}

unsigned int
budget_requests_left(struct budget *b, const struct budget_conf *bc,
    int64_t now)
{
	budget_refill(b, bc, now);
	if (bc->requests_per_minute == 0)
		return (0);
	return ((unsigned int)b->bucket);
}
