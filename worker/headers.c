/* SPDX-License-Identifier: ISC */
/*
 * Configured request headers for remote upstreams.  A value may name a
 * secret instead of holding it: ${env:NAME} is an environment variable of
 * the daemon, ${file:PATH} the first line of a file (read when the worker
 * starts, so a rotated token is picked up on restart); $$ is a dollar.
 * Values are never logged.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "curl_event.h"
#include "log.h"
#include "secret.h"
#include "worker.h"
#include "xmalloc.h"

/* Expand every configured header into a curl list. */
int
worker_headers(struct curl_slist **out)
{
	char	 err[512], *v;
	size_t	 i;

	*out = NULL;
	for (i = 0; sc->headers != NULL && sc->headers[i] != NULL; i++) {
		if ((v = secret_expand(sc->headers[i], err, sizeof err)) ==
		    NULL) {
			log_warnx("%s", err);
			worker_status("error", err);
			curlev_headers_free(*out);
			*out = NULL;
			return (-1);
		}
		*out = curl_slist_append(*out, v);
		secret_free(v);
	}
	return (0);
}

/* Copy a header list. */
struct curl_slist *
worker_headers_dup(const struct curl_slist *in)
{
	struct curl_slist	*out = NULL;

	for (; in != NULL; in = in->next)
		out = curl_slist_append(out, in->data);
	return (out);
}

/* Set the URL and what every request to the upstream has (TLS, timeouts). */
void
curlev_setopts(CURL *easy, const char *url)
{
	curlev_common(easy, url, sc->connect_timeout, sc->tls_verify,
	    sc->ca_file);
}
