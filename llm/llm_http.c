/* SPDX-License-Identifier: ISC */
/*
 * The provider's HTTP API through libcurl's multi interface on the event
 * loop (curl_event.c, as the HTTP upstreams use it).  One POST per
 * sampling request; the answer is read as it comes, whole JSON, server-sent
 * events or JSON lines, into an llm_answer bounded by max_response, with
 * progress reported to the supervisor as pieces arrive.  Whatever the
 * provider sends, the request ends with one USAGE and RESULT pair or one
 * FAIL frame; the API key is sent and never logged.
 */
#include "config.h"

#include <sys/queue.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <event2/buffer.h>

#include "curl_event.h"
#include "frame.h"
#include "http_parse.h"
#include "log.h"
#include "llm_worker.h"
#include "secret.h"
#include "sse.h"
#include "utf8.h"
#include "xmalloc.h"

#define ERROR_BODY_MAX		65536	/* of an error answer, kept */
#define PROGRESS_MS		250	/* between progress frames */

enum body_kind {
	BODY_JSON = 0,
	BODY_SSE,
	BODY_NDJSON
};

/* One sampling request to the provider. */
struct llm_call {
	uint32_t		 tag;
	CURL			*easy;
	struct curl_slist	*headers;
	char			*body;
	char			*model;		/* chosen for it */
	struct llm_answer	 ans;
	struct sse_parser	 sse;
	struct evbuffer		*buf;	/* JSON or error body, NDJSON line */
	long			 status;
	enum body_kind		 kind;
	int			 progress;	/* the supervisor wants it */
	int64_t			 last_progress;
	unsigned int		 sent_pieces;
	int			 failed;	/* the answer is bad: err */
	char			 err[512];
	TAILQ_ENTRY(llm_call)	 entry;
};

static TAILQ_HEAD(, llm_call)	 calls = TAILQ_HEAD_INITIALIZER(calls);
static unsigned int		 ncalls;
static struct curlev		*cev;
static char			*api_key;	/* expanded; never logged */
static const struct llm_vendor	*vendor;

static void	llm_done_cb(CURL *, CURLcode, void *);

int
llm_http_init(char *err, size_t errlen)
{
	char	why[256];

	vendor = llm_vendor(lc->provider);
	if (lc->api_key != NULL &&
	    (api_key = secret_expand(lc->api_key, why, sizeof why)) == NULL) {
		snprintf(err, errlen, "api_key: %s", why);
		return (-1);
	}
	if (api_key != NULL && (*api_key == '\0' ||
	    strpbrk(api_key, "\r\n") != NULL)) {
		snprintf(err, errlen, "api_key: the key is empty or not one "
		    "line");
		return (-1);
	}
	cev = curlev_new(base, llm_done_cb, NULL);
	return (0);
}

static void
call_free(struct llm_call *c)
{
	TAILQ_REMOVE(&calls, c, entry);
	ncalls--;
	curl_easy_cleanup(c->easy);
	curlev_headers_free(c->headers);
	free(c->body);
	free(c->model);
	llm_answer_free(&c->ans);
	sse_parser_free(&c->sse);
	evbuffer_free(c->buf);
	free(c);
}

/*
 * Answer a request with a failure, saying whether the provider may have
 * spent tokens on it (the supervisor then keeps its budgets' reservation
 * charged).  A provider may repeat the key in what it says: every text it
 * sent has had the key masked before anything cut it short
 * (llm_provider_text); the message is masked again, whole, before it is
 * cut to its size.
 */
static void __attribute__((format(printf, 5, 6)))
call_fail(uint32_t tag, enum llm_outcome o, long status, int spent,
    const char *fmt, ...)
{
	va_list	 ap;
	char	 msg[768], *full, *masked = NULL;
	int	 n;

	va_start(ap, fmt);
	n = vasprintf(&full, fmt, ap);
	va_end(ap);
	if (n < 0)
		fatal("vasprintf");
	if (api_key != NULL)
		masked = secret_mask(full, (size_t)n, api_key, LLM_KEY_MASK,
		    NULL);
	snprintf(msg, sizeof msg, "%s", masked != NULL ? masked : full);
	/* Cut at a byte count: maybe inside a character. */
	utf8_scrub(msg, strlen(msg));
	free(masked);
	free(full);
	log_debug("request %u: %s: %s", tag, llm_outcome_name(o), msg);
	llm_send_json(MSG_LLM_FAIL, tag, json_pack("{s:s, s:s, s:I, s:b}",
	    "outcome", llm_outcome_name(o), "message", msg, "status",
	    (json_int_t)status, "spent", spent));
}

/*
 * May the provider have worked on a request that failed?  Not if it
 * answered with an error status, nor if it never had the whole request;
 * else it may have.
 */
static int
call_spent(struct llm_call *c)
{
	curl_off_t	sent = 0;

	if (c->status >= 400)
		return (0);
	if (curl_easy_getinfo(c->easy, CURLINFO_SIZE_UPLOAD_T, &sent) !=
	    CURLE_OK)
		return (1);
	return (sent >= (curl_off_t)strlen(c->body));
}

/* Tell the supervisor how far the answer is, at most every PROGRESS_MS. */
static void
call_progress(struct llm_call *c)
{
	int64_t	now;

	if (!c->progress || c->ans.pieces == c->sent_pieces)
		return;
	now = now_ms();
	if (c->sent_pieces > 0 && now - c->last_progress < PROGRESS_MS)
		return;
	c->last_progress = now;
	c->sent_pieces = c->ans.pieces;
	llm_send_json(MSG_LLM_PROGRESS, c->tag, json_pack("{s:I}", "pieces",
	    (json_int_t)c->ans.pieces));
}

/* One server-sent event. */
static void
call_sse_event(const struct sse_event *ev, void *arg)
{
	struct llm_call	*c = arg;

	if (c->failed || ev->datalen == 0)
		return;
	if (vendor->event(&c->ans, ev->event, ev->data, ev->datalen, c->err,
	    sizeof c->err) != 0)
		c->failed = 1;
}

/* Feed NDJSON bytes: complete lines go to the vendor. */
static int
call_lines(struct llm_call *c, const char *p, size_t len)
{
	const char	*nl;
	char		*line;
	size_t		 n, ll;

	while (len > 0 && !c->failed) {
		nl = memchr(p, '\n', len);
		n = nl != NULL ? (size_t)(nl - p) : len;
		if (evbuffer_get_length(c->buf) + n > lc->max_response) {
			snprintf(c->err, sizeof c->err, "a line of the stream "
			    "is over max_response (%zu bytes)", lc->max_response);
			c->failed = 1;
			return (-1);
		}
		evbuffer_add(c->buf, p, n);
		if (nl == NULL)
			break;
		p += n + 1;
		len -= n + 1;
		ll = evbuffer_get_length(c->buf);
		line = (char *)evbuffer_pullup(c->buf, -1);
		if (ll > 0 && line[ll - 1] == '\r')
			ll--;
		if (ll > 0 && vendor->event(&c->ans, NULL, line, ll, c->err,
		    sizeof c->err) != 0)
			c->failed = 1;
		evbuffer_drain(c->buf, evbuffer_get_length(c->buf));
	}
	return (c->failed ? -1 : 0);
}

/* Response headers: the status and the body's type. */
static size_t
call_header_cb(char *p, size_t size, size_t n, void *arg)
{
	struct llm_call		*c = arg;
	struct http_header	 h;
	size_t			 len = size * n;

	if (len > 5 && memcmp(p, "HTTP/", 5) == 0) {
		curl_easy_getinfo(c->easy, CURLINFO_RESPONSE_CODE, &c->status);
		return (len);
	}
	if (http_header_line(p, len, &h) != 0 ||
	    !http_name_is(&h, "Content-Type"))
		return (len);
	if (http_value_begins(&h, "text/event-stream"))
		c->kind = BODY_SSE;
	else if (http_value_begins(&h, "application/x-ndjson"))
		c->kind = BODY_NDJSON;
	else if (http_value_begins(&h, "application/json"))
		c->kind = BODY_JSON;
	return (len);
}

/* Response body bytes. */
static size_t
call_write_cb(char *p, size_t size, size_t n, void *arg)
{
	struct llm_call	*c = arg;
	size_t		 len = size * n, room;

	if (c->status / 100 != 2) {
		room = ERROR_BODY_MAX - evbuffer_get_length(c->buf);
		evbuffer_add(c->buf, p, len < room ? len : room);
		return (len);
	}
	switch (c->kind) {
	case BODY_SSE:
		if (sse_parse(&c->sse, p, len, call_sse_event, c) != 0 &&
		    !c->failed) {
			snprintf(c->err, sizeof c->err, "an event is over "
			    "max_response (%zu bytes)", lc->max_response);
			c->failed = 1;
		}
		break;
	case BODY_NDJSON:
		call_lines(c, p, len);
		break;
	default:
		if (evbuffer_get_length(c->buf) + len > lc->max_response) {
			snprintf(c->err, sizeof c->err, "the answer is over "
			    "max_response (%zu bytes)", lc->max_response);
			c->failed = 1;
			break;
		}
		evbuffer_add(c->buf, p, len);
		break;
	}
	if (c->failed)
		return (0);	/* abort the transfer */
	call_progress(c);
	return (len);
}

/* The answer is complete: read a whole body, check the end was seen. */
static int
call_finish(struct llm_call *c)
{
	json_t		*j;
	json_error_t	 jerr;
	size_t		 len = evbuffer_get_length(c->buf);
	const char	*body;
	char		*masked;

	if (c->kind == BODY_NDJSON && len > 0)
		call_lines(c, "\n", 1);
	if (c->kind == BODY_JSON) {
		body = (const char *)evbuffer_pullup(c->buf, -1);
		j = json_loadb(body, len, 0, &jerr);
		/* The parser's message quotes the body, cut: mask it first. */
		if (j == NULL && api_key != NULL && (masked = secret_mask(body,
		    len, api_key, LLM_KEY_MASK, &len)) != NULL) {
			json_decref(json_loadb(masked, len, 0, &jerr));
			free(masked);
		}
		evbuffer_drain(c->buf, evbuffer_get_length(c->buf));
		if (j == NULL) {
			snprintf(c->err, sizeof c->err, "the answer is not "
			    "JSON: %.200s", jerr.text);
			return (-1);
		}
		if (vendor->body(&c->ans, j, c->err, sizeof c->err) != 0) {
			json_decref(j);
			return (-1);
		}
		json_decref(j);
	}
	if (c->failed)
		return (-1);
	if (!c->ans.done) {
		snprintf(c->err, sizeof c->err, "the stream ended before the "
		    "end of the answer");
		return (-1);
	}
	return (0);
}

/* Send the answer: its usage, then the CreateMessageResult. */
static void
call_answer(struct llm_call *c)
{
	struct evbuffer	*out = evbuffer_new();
	json_t		*u;

	if (llm_answer_result(&c->ans, c->model, out, c->err,
	    sizeof c->err) != 0) {
		evbuffer_free(out);
		call_fail(c->tag, LLM_BAD_ANSWER, c->status, 1, "%s", c->err);
		return;
	}
	if (evbuffer_get_length(out) + 1024 > conf_llm_frame_max(lc)) {
		evbuffer_free(out);
		call_fail(c->tag, LLM_BAD_ANSWER, c->status, 1, "the answer "
		    "is over max_response once encoded");
		return;
	}
	u = json_pack("{s:I, s:I, s:s}", "input",
	    (json_int_t)c->ans.input_tokens, "output",
	    (json_int_t)c->ans.output_tokens, "model", c->ans.model != NULL ?
	    c->ans.model : c->model);
	json_object_set_new(u, "stopReason", c->ans.stop != NULL ?
	    json_string(c->ans.stop) : json_null());
	llm_send_json(MSG_LLM_USAGE, c->tag, u);
	llm_send_buffer(MSG_LLM_RESULT, c->tag, out);
	evbuffer_free(out);
}

/* curl finished a transfer. */
static void
llm_done_cb(CURL *easy, CURLcode r, void *arg)
{
	struct llm_call	*c;
	char		 text[512];

	curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&c);
	/* A stream whose end was seen is whole, whatever came after it (a
	 * reset, or a server that kept it open until the timeout). */
	if (r != CURLE_OK && !c->failed && c->status / 100 == 2 &&
	    c->kind != BODY_JSON && c->ans.done) {
		log_debug("request %u: %s after the end of the answer: kept",
		    c->tag, curl_easy_strerror(r));
		r = CURLE_OK;
	}
	if (r != CURLE_OK) {
		if (c->failed)
			call_fail(c->tag, LLM_BAD_ANSWER, c->status,
			    call_spent(c), "%s", c->err);
		else if (r == CURLE_OPERATION_TIMEDOUT)
			call_fail(c->tag, LLM_TIMEOUT, 0, call_spent(c),
			    "no answer within %u s", lc->timeout);
		else
			call_fail(c->tag, LLM_NETWORK, 0, call_spent(c), "%s",
			    curl_easy_strerror(r));
	} else if (c->status / 100 != 2) {
		if (c->status == 401 || c->status == 403)
			call_fail(c->tag, LLM_AUTH, c->status, 0, "HTTP %ld: "
			    "the provider refused the API key", c->status);
		else {
			llm_error_text(c->status, (const char *)
			    evbuffer_pullup(c->buf, -1),
			    evbuffer_get_length(c->buf), api_key, text,
			    sizeof text);
			call_fail(c->tag, llm_status_outcome(c->status),
			    c->status, 0, "%s", text);
		}
	} else if (call_finish(c) != 0)
		call_fail(c->tag, LLM_BAD_ANSWER, c->status, 1, "%s", c->err);
	else {
		call_progress(c);
		call_answer(c);
	}
	call_free(c);
}

/* The request's headers: the type, the key, the vendor's version. */
static struct curl_slist *
call_headers(void)
{
	struct curl_slist	*h = NULL;
	char			*line;

	h = curl_slist_append(h, "Content-Type: application/json");
	h = curl_slist_append(h, !lc->stream ? "Accept: application/json" :
	    vendor->ndjson ? "Accept: application/x-ndjson" :
	    "Accept: text/event-stream");
	h = curl_slist_append(h, "User-Agent: mcp-supervisor/"
	    PACKAGE_VERSION);
	h = curl_slist_append(h, "Expect:");
	if (lc->provider == LLM_ANTHROPIC)
		h = curl_slist_append(h, "anthropic-version: 2023-06-01");
	if (api_key != NULL) {
		if (lc->provider == LLM_ANTHROPIC)
			xasprintf(&line, "x-api-key: %s", api_key);
		else
			xasprintf(&line, "Authorization: Bearer %s", api_key);
		h = curl_slist_append(h, line);
		explicit_bzero(line, strlen(line));
		free(line);
	}
	return (h);
}

void
llm_http_start(uint32_t tag, json_t *params, int progress)
{
	struct llm_call		*c;
	struct llm_req_opts	 o;
	json_t			*body;
	char			 err[512], *url;
	size_t			 ulen;

	if (ncalls >= lc->max_concurrent) {
		call_fail(tag, LLM_RATE, 0, 0, "%u requests are in flight "
		    "(max_concurrent)", ncalls);
		json_decref(params);
		return;
	}
	memset(&o, 0, sizeof o);
	o.model = llm_choose_model(lc, params);
	o.stream = lc->stream;
	o.max_completion_tokens = lc->max_completion_tokens;
	if ((body = vendor->request(params, &o, err, sizeof err)) == NULL) {
		call_fail(tag, LLM_REFUSED, 0, 0, "%s", err);
		json_decref(params);
		return;
	}
	c = xcalloc(1, sizeof *c);
	c->tag = tag;
	c->model = xstrdup(o.model);
	c->progress = progress;
	c->kind = lc->stream ? (vendor->ndjson ? BODY_NDJSON : BODY_SSE) :
	    BODY_JSON;
	c->buf = evbuffer_new();
	llm_answer_init(&c->ans, lc->max_response);
	c->ans.secret = api_key;
	sse_parser_init(&c->sse, lc->max_response);
	c->body = json_dumps(body, JSON_COMPACT);
	json_decref(body);
	json_decref(params);
	TAILQ_INSERT_TAIL(&calls, c, entry);
	ncalls++;
	if (c->body == NULL || (c->easy = curl_easy_init()) == NULL) {
		call_fail(tag, LLM_REFUSED, 0, 0, "the request cannot be "
		    "encoded");
		call_free(c);
		return;
	}
	ulen = strlen(lc->url);
	while (ulen > 0 && lc->url[ulen - 1] == '/')
		ulen--;
	xasprintf(&url, "%.*s%s", (int)ulen, lc->url, vendor->path);
	curlev_common(c->easy, url, lc->connect_timeout, lc->tls_verify,
	    lc->ca_file);
	free(url);
	c->headers = call_headers();
	curl_easy_setopt(c->easy, CURLOPT_HTTPHEADER, c->headers);
	curl_easy_setopt(c->easy, CURLOPT_POSTFIELDS, c->body);
	curl_easy_setopt(c->easy, CURLOPT_POSTFIELDSIZE_LARGE,
	    (curl_off_t)strlen(c->body));
	curl_easy_setopt(c->easy, CURLOPT_TIMEOUT_MS, (long)lc->timeout * 1000);
	curl_easy_setopt(c->easy, CURLOPT_PRIVATE, c);
	curl_easy_setopt(c->easy, CURLOPT_HEADERFUNCTION, call_header_cb);
	curl_easy_setopt(c->easy, CURLOPT_HEADERDATA, c);
	curl_easy_setopt(c->easy, CURLOPT_WRITEFUNCTION, call_write_cb);
	curl_easy_setopt(c->easy, CURLOPT_WRITEDATA, c);
	log_debug("request %u: model %s, %zu bytes", tag, c->model,
	    strlen(c->body));
	curlev_add(cev, c->easy);
}

void
llm_http_refuse(uint32_t tag, const char *why)
{
	call_fail(tag, LLM_REFUSED, 0, 0, "%s", why);
}

void
llm_http_cancel(uint32_t tag)
{
	struct llm_call	*c;

	TAILQ_FOREACH(c, &calls, entry) {
		if (c->tag == tag)
			break;
	}
	if (c == NULL)
		return;
	log_debug("request %u: cancelled", tag);
	curlev_remove(cev, c->easy);
	call_free(c);
}

void
llm_http_stop(void)
{
	struct llm_call	*c;

	while ((c = TAILQ_FIRST(&calls)) != NULL) {
		if (cev != NULL)
			curlev_remove(cev, c->easy);
		call_free(c);
	}
	if (cev != NULL)
		curlev_free(cev);
	cev = NULL;
	if (api_key != NULL) {
		explicit_bzero(api_key, strlen(api_key));
		free(api_key);
		api_key = NULL;
	}
}
