/* SPDX-License-Identifier: ISC */
/*
 * libcurl's multi interface driven by a libevent loop (mcp-worker's HTTP
 * transports, mcp-llm): curl tells us which sockets to watch and when to
 * time out; we tell it when they are ready.  Never a blocking call.  In
 * libcommon_curl.a, which mcp-worker-stdio does not link.
 */
#ifndef MCPS_CURL_EVENT_H
#define MCPS_CURL_EVENT_H

#include <curl/curl.h>

struct curlev;
struct event_base;

/* Called when a transfer is done; the easy handle is removed from multi. */
typedef void (*curlev_done_cb)(CURL *, CURLcode, void *arg);

/* Create a multi handle on an event base. */
struct curlev	*curlev_new(struct event_base *, curlev_done_cb, void *arg);
/* Free it; transfers still added are removed (not cleaned up). */
void		 curlev_free(struct curlev *);
/* Start a transfer (from the loop; a refusal comes to the done callback). */
int		 curlev_add(struct curlev *, CURL *);
/* Stop a transfer early (no done callback). */
void		 curlev_remove(struct curlev *, CURL *);
/* Free a header list, each line wiped first: it may hold a token or a
 * key. */
void		 curlev_headers_free(struct curl_slist *);
CURLM		*curlev_multi(struct curlev *);
/* Set the URL and what every request has: TLS, the connect timeout. */
void		 curlev_common(CURL *, const char *url,
		    unsigned int connect_timeout, int tls_verify,
		    const char *ca_file);

#endif
