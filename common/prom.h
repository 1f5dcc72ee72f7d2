/* SPDX-License-Identifier: ISC */
/*
 * The Prometheus text exposition format (version 0.0.4): fixed-bucket
 * latency histograms cheap enough to feed on every request, and writers
 * for HELP/TYPE lines and samples with escaped label values.
 */
#ifndef MCPS_PROM_H
#define MCPS_PROM_H

#include <stddef.h>
#include <stdint.h>

struct evbuffer;

/* Upper bounds of the latency buckets, in microseconds (+Inf beyond). */
#define PROM_NBUCKETS	18
extern const uint64_t	 prom_bucket_us[PROM_NBUCKETS];

/* A histogram: counts per bucket (not cumulative), their sum. */
struct prom_hist {
	uint64_t	count[PROM_NBUCKETS + 1];	/* last: +Inf */
	uint64_t	sum_us;
};

/* Count one observation of us microseconds. */
void	prom_hist_observe(struct prom_hist *, uint64_t us);
/* Observations counted in all. */
uint64_t prom_hist_total(const struct prom_hist *);

/* "# HELP name help\n# TYPE name type\n". */
void	prom_header(struct evbuffer *, const char *name, const char *type,
	    const char *help);
/*
 * Labels as they go between braces: pairs of name and value, ending with
 * NULL; values are escaped (\\, \" and \n).  Writes "" for no pairs;
 * truncated, still well formed (closing quote included), if out is too
 * short.
 */
void	prom_labels(char *out, size_t len, ...)
	    __attribute__((sentinel));
/* "name{labels} value\n" (no braces when labels is ""). */
void	prom_sample_u64(struct evbuffer *, const char *name,
	    const char *labels, uint64_t);
void	prom_sample_double(struct evbuffer *, const char *name,
	    const char *labels, double);
/* A whole histogram: name_bucket{labels,le=...}, name_sum, name_count. */
void	prom_hist_write(struct evbuffer *, const char *name,
	    const char *labels, const struct prom_hist *);

#endif
