/* SPDX-License-Identifier: ISC */
/*
 * One bounded HTTP transfer of a small document: see http_fetch.h.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <event2/buffer.h>
#include <openssl/evp.h>

#include "curl_event.h"
#include "http_fetch.h"
#include "log.h"
#include "redact.h"
#include "secret.h"
#include "xmalloc.h"

/* Response body bytes, bounded. */
static size_t
write_cb(char *p, size_t size, size_t n, void *arg)
{
	struct hfetch	*x = arg;
	size_t		 len = size * n;

	if (evbuffer_get_length(x->body) + len > x->max) {
		x->over = 1;
		return (0);	/* abort the transfer */
	}
	evbuffer_add(x->body, p, len);
	return (len);
}

void
hfetch_init(struct hfetch *x, const char *url, size_t max,
    unsigned int connect_timeout, long timeout_ms, const char *ca_file,
    const char *accept)
{
	char	*line;

	memset(x, 0, sizeof *x);
	x->url = xstrdup(url);
	x->max = max;
	x->body = evbuffer_new();
	if ((x->easy = curl_easy_init()) == NULL)
		fatalx("curl_easy_init");
	/* TLS verified whatever an upstream's tls_verify says. */
	curlev_common(x->easy, url, connect_timeout, 1, ca_file);
	curl_easy_setopt(x->easy, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(x->easy, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(x->easy, CURLOPT_WRITEFUNCTION, write_cb);
	curl_easy_setopt(x->easy, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(x->easy, CURLOPT_ACCEPT_ENCODING, "");
	x->headers = curl_slist_append(NULL, "User-Agent: mcp-supervisor/"
	    PACKAGE_VERSION);
	xasprintf(&line, "Accept: %s", accept);
	x->headers = curl_slist_append(x->headers, line);
	free(line);
}

void
hfetch_post(struct hfetch *x, char *body, const char *content_type)
{
	char	*line;

	secret_free(x->post);
	x->post = body;
	xasprintf(&line, "Content-Type: %s", content_type);
	x->headers = curl_slist_append(x->headers, line);
	free(line);
	x->headers = curl_slist_append(x->headers, "Expect:");
	curl_easy_setopt(x->easy, CURLOPT_POSTFIELDS, x->post);
	curl_easy_setopt(x->easy, CURLOPT_POSTFIELDSIZE_LARGE,
	    (curl_off_t)strlen(x->post));
}

void
hfetch_header(struct hfetch *x, const char *line)
{
	x->headers = curl_slist_append(x->headers, line);
}

void
hfetch_go(struct hfetch *x, struct curlev *cev)
{
	curl_easy_setopt(x->easy, CURLOPT_HTTPHEADER, x->headers);
	curlev_add(cev, x->easy);
}

void
hfetch_finished(struct hfetch *x)
{
	curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &x->status);
}

void
hfetch_clear(struct hfetch *x)
{
	size_t			 n;

	if (x->easy != NULL)
		curl_easy_cleanup(x->easy);
	curlev_headers_free(x->headers);
	secret_free(x->post);
	free(x->url);
	/* A token endpoint's or a registration's answer: its tokens and
	 * secrets go with it. */
	if (x->body != NULL) {
		if ((n = evbuffer_get_length(x->body)) > 0)
			explicit_bzero(evbuffer_pullup(x->body, -1), n);
		evbuffer_free(x->body);
	}
	memset(x, 0, sizeof *x);
}

void
hfetch_error(const struct hfetch *x, CURLcode r, const char *what, char *buf,
    size_t len)
{
	char	url[512];

	url_redact(x->url, url, sizeof url);
	if (x->over)
		snprintf(buf, len, "%s at %.200s: over %zu bytes", what, url,
		    x->max);
	else if (r != CURLE_OK)
		snprintf(buf, len, "%s at %.200s: %s", what, url,
		    curl_easy_strerror(r));
	else
		snprintf(buf, len, "%s at %.200s: HTTP %ld", what, url,
		    x->status);
}

json_t *
hfetch_json(const struct hfetch *x)
{
	json_t	*o;

	o = json_loadb((const char *)evbuffer_pullup(x->body, -1),
	    evbuffer_get_length(x->body), JSON_REJECT_DUPLICATES, NULL);
	if (o != NULL && !json_is_object(o)) {
		json_decref(o);
		o = NULL;
	}
	return (o);
}

char *
hfetch_basic(const char *client_id, const char *secret)
{
	char		*id, *sec, *pair, *line;
	unsigned char	*b64;
	size_t		 len;

	if ((id = curl_easy_escape(NULL, client_id, 0)) == NULL ||
	    (sec = curl_easy_escape(NULL, secret, 0)) == NULL)
		fatalx("curl_easy_escape");
	xasprintf(&pair, "%s:%s", id, sec);
	explicit_bzero(sec, strlen(sec));
	curl_free(id);
	curl_free(sec);
	len = strlen(pair);
	b64 = xmalloc(4 * ((len + 2) / 3) + 1);
	EVP_EncodeBlock(b64, (unsigned char *)pair, (int)len);
	xasprintf(&line, "Authorization: Basic %s", b64);
	explicit_bzero(b64, strlen((char *)b64));
	free(b64);
	secret_free(pair);
	return (line);
}

void
hfetch_form_add(char **body, const char *name, const char *value)
{
	char	*e, *b;

	if ((e = curl_easy_escape(NULL, value, 0)) == NULL)
		fatalx("curl_easy_escape");
	xasprintf(&b, "%s%s%s=%s", *body != NULL ? *body : "", *body != NULL ?
	    "&" : "", name, e);
	explicit_bzero(e, strlen(e));
	curl_free(e);
	secret_free(*body);
	*body = b;
}
