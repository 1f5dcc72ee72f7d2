/* SPDX-License-Identifier: ISC */
/*
 * loadgen_hist.c -- the latency histogram, HDR style (see loadgen.h).
 */
#include <stdint.h>

#include "loadgen.h"

static unsigned
hist_index(uint64_t v)
{
	unsigned e;

	if (v < HIST_LINEAR)
		return (unsigned)v;
	/* v >> e in [HIST_SUB, 2 HIST_SUB) */
	e = 63u - (unsigned)__builtin_clzll(v) - HIST_SUB_BITS;
	if (e > 48)
		return HIST_NBUCKETS - 1;
	return HIST_LINEAR + (e - 1) * HIST_SUB +
	    (unsigned)((v >> e) - HIST_SUB);
}

/* The lowest value of a bucket, and its width. */
static void
hist_bucket(unsigned i, uint64_t *lo, uint64_t *width)
{
	unsigned e;

	if (i < HIST_LINEAR) {
		*lo = i;
		*width = 1;
		return;
	}
	e = (i - HIST_LINEAR) / HIST_SUB + 1;
	*lo = ((uint64_t)HIST_SUB + (i - HIST_LINEAR) % HIST_SUB) << e;
	*width = (uint64_t)1 << e;
}

void
hist_add(struct hist *h, uint64_t v)
{
	h->count[hist_index(v)]++;
	if (h->n == 0 || v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
	h->n++;
	h->sum += v;
}

/* The value at percentile p: the middle of its bucket, never above max. */
uint64_t
hist_pct(const struct hist *h, double p)
{
	uint64_t rank, seen = 0, lo, width, v;
	unsigned i;

	if (h->n == 0)
		return 0;
	rank = (uint64_t)(p / 100.0 * (double)h->n + 0.999999);
	if (rank < 1)
		rank = 1;
	for (i = 0; i < HIST_NBUCKETS; i++) {
		seen += h->count[i];
		if (seen >= rank) {
			hist_bucket(i, &lo, &width);
			v = lo + (width - 1) / 2;
			if (v > h->max)
				v = h->max;
			if (v < h->min)
				v = h->min;
			return v;
		}
	}
	return h->max;
}
