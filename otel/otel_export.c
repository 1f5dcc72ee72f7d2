/* SPDX-License-Identifier: ISC */
/*
 * Batches of spans posted to the collector as OTLP/HTTP JSON (the
 * protocol's JSON mapping: ids as hex, enums as numbers, 64-bit integers
 * as strings), OTEL_INFLIGHT at once through libcurl's multi interface on
 * the event loop.  What waits is bounded (OTEL_QUEUE_MAX batches,
 * OTEL_BYTES_MAX bytes): beyond that a batch is dropped and counted.  A
 * failed post is counted, not retried: a collector that is down costs
 * spans, never memory.
 */
#include "config.h"

#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "curl_event.h"
#include "log.h"
#include "otel.h"
#include "xmalloc.h"

#define OTEL_CONNECT_TIMEOUT	5

struct post {
	char			*body;		/* owned */
	size_t			 len;
	uint64_t		 nspans;
	CURL			*easy;		/* or NULL: waiting */
	struct curl_slist	*headers;
	struct evbuffer		*reply;
	TAILQ_ENTRY(post)	 entry;
};
TAILQ_HEAD(post_list, post);

static struct curlev	*cev;
static struct post_list	 waiting = TAILQ_HEAD_INITIALIZER(waiting);
static struct post_list	 sending = TAILQ_HEAD_INITIALIZER(sending);
static unsigned int	 nwaiting, nsending;
static size_t		 bytes;
static uint64_t		 exported, failed, dropped;
static char		*env_head, *env_tail;	/* the envelope */
static int		 failing;	/* the last post failed */

static void	done_cb(CURL *, CURLcode, void *);

void
otel_envelope(const char *service, const char *version, char **head,
    char **tail)
{
	json_t	*o;
	char	*s, *at;

	/* The envelope with an empty array, cut where the spans go. */
	o = json_pack("{s:[{s:{s:[{s:s, s:{s:s}}]}, s:[{s:{s:s, s:s}, "
	    "s:[]}]}]}",
	    "resourceSpans",
	    "resource", "attributes", "key", "service.name", "value",
	    "stringValue", service,
	    "scopeSpans", "scope", "name", "mcp-supervisor", "version",
	    version, "spans");
	if (o == NULL || (s = json_dumps(o, JSON_COMPACT)) == NULL)
		fatalx("%s: the OTLP envelope", __func__);
	json_decref(o);
	if ((at = strstr(s, "\"spans\":[]")) == NULL)
		fatalx("%s: no spans in the envelope", __func__);
	at += strlen("\"spans\":");
	*tail = xstrdup(at + 2);
	at[0] = '\0';
	*head = s;
}

uint64_t
otel_rejected(const char *reply, size_t len)
{
	json_t		*o, *v;
	json_error_t	 e;
	uint64_t	 n = 0;
	const char	*s;

	if (len == 0 || (o = json_loadb(reply, len, 0, &e)) == NULL)
		return (0);
	v = json_object_get(json_object_get(o, "partialSuccess"),
	    "rejectedSpans");
	/* int64 may come as a string in OTLP's JSON. */
	if (json_is_integer(v) && json_integer_value(v) > 0)
		n = (uint64_t)json_integer_value(v);
	else if (json_is_string(v)) {
		s = json_string_value(v);
		if (s[0] >= '0' && s[0] <= '9' && strlen(s) <= 18)
			n = strtoull(s, NULL, 10);
	}
	json_decref(o);
	return (n);
}

static size_t
reply_cb(char *p, size_t size, size_t n, void *arg)
{
	struct post	*post = arg;
	size_t		 len = size * n;

	if (evbuffer_get_length(post->reply) + len <= OTEL_REPLY_MAX)
		evbuffer_add(post->reply, p, len);
	return (len);
}

static void
post_free(struct post *post)
{
	if (post->easy != NULL)
		curl_easy_cleanup(post->easy);
	curlev_headers_free(post->headers);
	if (post->reply != NULL)
		evbuffer_free(post->reply);
	free(post->body);
	free(post);
}

/* Start the posts that may start. */
static void
otel_pump(void)
{
	struct post	*post;
	size_t		 i;

	while (nsending < OTEL_INFLIGHT &&
	    (post = TAILQ_FIRST(&waiting)) != NULL) {
		TAILQ_REMOVE(&waiting, post, entry);
		nwaiting--;
		if ((post->easy = curl_easy_init()) == NULL)
			fatalx("curl_easy_init");
		curlev_common(post->easy, wc->endpoint, OTEL_CONNECT_TIMEOUT,
		    1, NULL);
		curl_easy_setopt(post->easy, CURLOPT_TIMEOUT_MS,
		    (long)wc->timeout * 1000);
		curl_easy_setopt(post->easy, CURLOPT_FOLLOWLOCATION, 0L);
		curl_easy_setopt(post->easy, CURLOPT_PRIVATE, post);
		curl_easy_setopt(post->easy, CURLOPT_WRITEFUNCTION, reply_cb);
		curl_easy_setopt(post->easy, CURLOPT_WRITEDATA, post);
		post->reply = evbuffer_new();
		for (i = 0; wc->headers != NULL && wc->headers[i] != NULL; i++)
			post->headers = curl_slist_append(post->headers,
			    wc->headers[i]);
		post->headers = curl_slist_append(post->headers,
		    "Content-Type: application/json");
		post->headers = curl_slist_append(post->headers,
		    "User-Agent: mcp-supervisor/" PACKAGE_VERSION);
		curl_easy_setopt(post->easy, CURLOPT_HTTPHEADER,
		    post->headers);
		curl_easy_setopt(post->easy, CURLOPT_POSTFIELDS, post->body);
		curl_easy_setopt(post->easy, CURLOPT_POSTFIELDSIZE_LARGE,
		    (curl_off_t)post->len);
		TAILQ_INSERT_TAIL(&sending, post, entry);
		nsending++;
		curlev_add(cev, post->easy);
	}
}

/* A post is done: count its spans. */
static void
done_cb(CURL *easy, CURLcode r, void *arg)
{
	struct post	*post = NULL;
	long		 status = 0;
	uint64_t	 rejected;

	curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&post);
	if (post == NULL)
		return;
	TAILQ_REMOVE(&sending, post, entry);
	nsending--;
	bytes -= post->len;
	if (r == CURLE_OK)
		curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
	if (r == CURLE_OK && status >= 200 && status < 300) {
		rejected = otel_rejected((const char *)evbuffer_pullup(
		    post->reply, -1), evbuffer_get_length(post->reply));
		if (rejected > post->nspans)
			rejected = post->nspans;
		exported += post->nspans - rejected;
		failed += rejected;
		if (failing)
			log_info("the collector takes spans again");
		failing = 0;
	} else {
		failed += post->nspans;
		if (!failing) {
			if (r != CURLE_OK)
				log_warnx("posting spans: %s",
				    curl_easy_strerror(r));
			else
				log_warnx("posting spans: HTTP %ld", status);
		}
		failing = 1;
	}
	post_free(post);
	otel_stats(exported, failed, dropped);
	otel_pump();
	otel_posted();
}

int
otel_export_idle(void)
{
	return (nsending == 0 && nwaiting == 0);
}

void
otel_export(const char *p, size_t len, uint64_t n)
{
	struct post	*post;
	size_t		 hl = strlen(env_head), tl = strlen(env_tail);

	if (n == 0)
		return;
	if (nwaiting >= OTEL_QUEUE_MAX || bytes + len > OTEL_BYTES_MAX) {
		dropped += n;
		otel_stats(exported, failed, dropped);
		return;
	}
	post = xcalloc(1, sizeof *post);
	post->len = hl + len + tl;
	post->body = xmalloc(post->len + 1);
	memcpy(post->body, env_head, hl);
	memcpy(post->body + hl, p, len);
	memcpy(post->body + hl + len, env_tail, tl);
	post->body[post->len] = '\0';
	post->nspans = n;
	bytes += post->len;
	TAILQ_INSERT_TAIL(&waiting, post, entry);
	nwaiting++;
	otel_pump();
}

void
otel_export_init(void)
{
	otel_envelope(wc->service_name, wc->version, &env_head, &env_tail);
	cev = curlev_new(base, done_cb, NULL);
}

void
otel_export_stop(void)
{
	struct post	*post;

	while ((post = TAILQ_FIRST(&sending)) != NULL) {
		TAILQ_REMOVE(&sending, post, entry);
		curlev_remove(cev, post->easy);
		post_free(post);
	}
	while ((post = TAILQ_FIRST(&waiting)) != NULL) {
		TAILQ_REMOVE(&waiting, post, entry);
		post_free(post);
	}
	nsending = nwaiting = 0;
	if (cev != NULL)
		curlev_free(cev);
	cev = NULL;
	free(env_head);
	free(env_tail);
	env_head = env_tail = NULL;
}
