/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <event2/buffer.h>

#include "prom.h"

/* 100 us to a minute: a loopback call to a short 30-minute tool call. */
const uint64_t prom_bucket_us[PROM_NBUCKETS] = {
	100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000,
	250000, 500000, 1000000, 2500000, 5000000, 10000000, 30000000,
	60000000
};

/* The same bounds in seconds, as "le" is written. */
static const char *const bucket_le[PROM_NBUCKETS] = {
	"0.0001", "0.00025", "0.0005", "0.001", "0.0025", "0.005", "0.01",
	"0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10", "30",
	"60"
};

void
prom_hist_observe(struct prom_hist *h, uint64_t us)
{
	size_t	i;

	for (i = 0; i < PROM_NBUCKETS && us > prom_bucket_us[i]; i++)
		;
	h->count[i]++;
	h->sum_us += us;
}

uint64_t
prom_hist_total(const struct prom_hist *h)
{
	uint64_t	n = 0;
	size_t		i;

	for (i = 0; i <= PROM_NBUCKETS; i++)
		n += h->count[i];
	return (n);
}

void
prom_header(struct evbuffer *b, const char *name, const char *type,
    const char *help)
{
	evbuffer_add_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help,
	    name, type);
}

void
prom_labels(char *out, size_t len, ...)
{
	va_list		 ap;
	const char	*k, *v;
	size_t		 n = 0;

	if (len < 2)
		return;
	out[0] = '\0';
	va_start(ap, len);
	while ((k = va_arg(ap, const char *)) != NULL) {
		v = va_arg(ap, const char *);
		/* Room for the name, =", at least "" and a comma. */
		if (n + strlen(k) + 5 >= len)
			break;
		n += (size_t)snprintf(out + n, len - n, "%s%s=\"",
		    n > 0 ? "," : "", k);
		for (; *v != '\0' && n + 4 < len; v++) {
			if (*v == '\\' || *v == '"') {
				out[n++] = '\\';
				out[n++] = *v;
			} else if (*v == '\n') {
				out[n++] = '\\';
				out[n++] = 'n';
			} else
				out[n++] = *v;
		}
		out[n++] = '"';
		out[n] = '\0';
	}
	va_end(ap);
}

void
prom_sample_u64(struct evbuffer *b, const char *name, const char *labels,
    uint64_t v)
{
	if (labels[0] != '\0')
		evbuffer_add_printf(b, "%s{%s} %llu\n", name, labels,
		    (unsigned long long)v);
	else
		evbuffer_add_printf(b, "%s %llu\n", name,
		    (unsigned long long)v);
}

void
prom_sample_double(struct evbuffer *b, const char *name, const char *labels,
    double v)
{
	if (labels[0] != '\0')
		evbuffer_add_printf(b, "%s{%s} %.9g\n", name, labels, v);
	else
		evbuffer_add_printf(b, "%s %.9g\n", name, v);
}

void
prom_hist_write(struct evbuffer *b, const char *name, const char *labels,
    const struct prom_hist *h)
{
	uint64_t	cum = 0;
	size_t		i;
	const char	*comma = labels[0] != '\0' ? "," : "";

	for (i = 0; i < PROM_NBUCKETS; i++) {
		cum += h->count[i];
		evbuffer_add_printf(b, "%s_bucket{%s%sle=\"%s\"} %llu\n", name,
		    labels, comma, bucket_le[i], (unsigned long long)cum);
	}
	cum += h->count[PROM_NBUCKETS];
	evbuffer_add_printf(b, "%s_bucket{%s%sle=\"+Inf\"} %llu\n", name,
	    labels, comma, (unsigned long long)cum);
	if (labels[0] != '\0') {
		evbuffer_add_printf(b, "%s_sum{%s} %.6f\n", name, labels,
		    (double)h->sum_us / 1e6);
		evbuffer_add_printf(b, "%s_count{%s} %llu\n", name, labels,
		    (unsigned long long)cum);
	} else {
		evbuffer_add_printf(b, "%s_sum %.6f\n", name,
		    (double)h->sum_us / 1e6);
		evbuffer_add_printf(b, "%s_count %llu\n", name,
		    (unsigned long long)cum);
	}
}
