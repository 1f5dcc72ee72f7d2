/* SPDX-License-Identifier: ISC */
/*
 * mcp-llm, the process: its channel to the supervisor (llm_worker.c) and
 * its HTTP calls to the provider (llm_http.c).  The mapping it uses is in
 * llm.h.
 */
#ifndef MCPS_LLM_WORKER_H
#define MCPS_LLM_WORKER_H

#include <stdint.h>

#include <event2/event.h>
#include <jansson.h>

#include "conf.h"
#include "frame.h"
#include "llm.h"

struct evbuffer;

/* llm_worker.c */
extern struct event_base	*base;
extern struct llm_conf		*lc;		/* the provider */
int64_t		 now_ms(void);
void		 llm_send(uint16_t type, uint32_t tag, const char *, size_t);
void		 llm_send_buffer(uint16_t type, uint32_t tag,
		    struct evbuffer *);
void		 llm_send_json(uint16_t type, uint32_t tag, json_t *);
				/* reference taken */

/* llm_http.c */
/* Expand the key and set up curl; -1 with err set. */
int		 llm_http_init(char *err, size_t errlen);
/* Start a sampling request (params taken); its answer is sent later. */
void		 llm_http_start(uint32_t tag, json_t *params, int progress);
/* Refuse a request that cannot be read, with why. */
void		 llm_http_refuse(uint32_t tag, const char *why);
/* Forget a request (no answer). */
void		 llm_http_cancel(uint32_t tag);
/* Drop every request and free what curl holds. */
void		 llm_http_stop(void);

#endif
