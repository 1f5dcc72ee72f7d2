/* SPDX-License-Identifier: ISC */
/*
 * mcp-otel, the gateway's trace exporter: its channel to the supervisor
 * (otel_worker.c) and its posts to the OTLP/HTTP collector
 * (otel_export.c).
 */
#ifndef MCPS_OTEL_H
#define MCPS_OTEL_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>
#include <jansson.h>

#define OTEL_INFLIGHT	2		/* posts at once */
#define OTEL_QUEUE_MAX	64		/* batches waiting */
#define OTEL_BYTES_MAX	(32 << 20)	/* bytes waiting, all batches */
#define OTEL_REPLY_MAX	65536		/* a collector's reply read */

/* The collector, as the CONFIG frame gives it; strings owned. */
struct otel_wconf {
	char		 *endpoint;
	char		 *service_name;
	char		 *version;
	char		**headers;	/* "Name: value", secrets expanded */
	unsigned int	  timeout;	/* seconds per post */
};

/* otel_worker.c */
extern struct event_base	*base;
extern struct otel_wconf	*wc;
/* Tell the supervisor what became of the spans so far. */
void		 otel_stats(uint64_t exported, uint64_t failed,
		    uint64_t dropped);

/* otel_export.c */
void		 otel_export_init(void);
/* A batch of n spans, p[0..len) the text of their JSON array, to post. */
void		 otel_export(const char *p, size_t len, uint64_t n);
/* Stop every post; what waits is dropped. */
void		 otel_export_stop(void);
/* Is nothing posted nor waiting? */
int		 otel_export_idle(void);

/* otel_worker.c: a post ended (while stopping, the last one exits). */
void		 otel_posted(void);
/* The OTLP/HTTP JSON envelope of a service's spans: what goes before
 * and after their array (caller frees both). */
void		 otel_envelope(const char *service, const char *version,
		    char **head, char **tail);
/* How many spans a collector's reply says it rejected, or 0. */
uint64_t	 otel_rejected(const char *reply, size_t len);

#endif
