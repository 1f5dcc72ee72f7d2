/* SPDX-License-Identifier: ISC */
/*
 * One bounded HTTP transfer of a small document (a metadata document, a
 * token, a registration), on a curl_event.c loop: the options every such
 * transfer has (TLS verified, never redirected, a whole-transfer
 * timeout), the body kept in memory up to a bound, and what went wrong
 * in words.  The request headers and body may hold a secret and are
 * wiped when freed.  mcp-idp's fetches and mcp-worker's OAuth client
 * share it; in libcommon_curl.a.
 */
#ifndef MCPS_HTTP_FETCH_H
#define MCPS_HTTP_FETCH_H

#include <stddef.h>

#include <curl/curl.h>
#include <jansson.h>

struct curlev;
struct evbuffer;

/* A transfer.  Owns everything it points to. */
struct hfetch {
	CURL			*easy;
	struct curl_slist	*headers;	/* wiped: may hold a secret */
	char			*post;		/* wiped */
	char			*url;
	struct evbuffer		*body;		/* the response, up to max */
	size_t			 max;
	int			 over;		/* the body passed max */
	long			 status;	/* set by hfetch_finished */
};

/*
 * Set up a GET of url (already checked as fetchable) with the options
 * every fetch has, and the headers User-Agent and Accept.
 */
void		 hfetch_init(struct hfetch *, const char *url, size_t max,
		    unsigned int connect_timeout, long timeout_ms,
		    const char *ca_file, const char *accept);
/* Make it a POST of body (taken, wiped when freed) of a content type. */
void		 hfetch_post(struct hfetch *, char *body,
		    const char *content_type);
/* Add a request header line (copied; wiped when freed). */
void		 hfetch_header(struct hfetch *, const char *line);
/* Start it on a loop. */
void		 hfetch_go(struct hfetch *, struct curlev *);
/* Read the status of a transfer curl finished. */
void		 hfetch_finished(struct hfetch *);
/* Free what it owns (it must not be on a loop any more). */
void		 hfetch_clear(struct hfetch *);
/* What went wrong with it ("what at URL: reason"), the URL redacted. */
void		 hfetch_error(const struct hfetch *, CURLcode, const char *what,
		    char *buf, size_t len);
/* The whole body as a JSON object (new); NULL if it is not one. */
json_t		*hfetch_json(const struct hfetch *);

/*
 * The header "Authorization: Basic ..." of client_secret_basic (RFC 6749
 * section 2.3.1: each part form-encoded, then Base64).  New; wipe it.
 */
char		*hfetch_basic(const char *client_id, const char *secret);
/*
 * Append name=value, form-encoded, to a body being built (*body NULL at
 * first; new; every former copy wiped).
 */
void		 hfetch_form_add(char **body, const char *name,
		    const char *value);

#endif
