/* SPDX-License-Identifier: ISC */
/*
 * The authorization server over HTTP, through libcurl's multi interface
 * on the event loop (curl_event.c): discovery of its metadata (RFC 8414,
 * OpenID Connect Discovery), its JWK Set, kept fresh, introspection of
 * opaque tokens (RFC 7662), and the exchange of the login client's codes
 * (uplogin_connect.c in the supervisor says what for).
 *
 * A fetch of the keys is discovery when it is needed, then the JWK Set,
 * checked by jose_jwks_parse before it goes to the supervisor: a set the
 * gateway would refuse is never sent, and the supervisor keeps the one it
 * has.  The next fetch is due when the set's Cache-Control max-age says
 * (bounded to [5 min, 1 day]), else after the configured refresh; after
 * a failure, after a backoff that doubles from 2 s to 5 min.  The
 * supervisor may ask for a fetch now (a token named a key we do not
 * have); such fetches start at most once per IDP_ASKED_MS, and a request
 * that comes while a fetch runs waits for it.  Every fetch, and every
 * request refused by that bound, is answered with IDP_KEYS or
 * IDP_STATUS.  Nothing is redirected; every URL is https, or http on
 * loopback; TLS is verified.  Neither a token nor the client secret is
 * ever in a log line or an error.
 */
#include "config.h"

#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>
#include <event2/buffer.h>
#include <event2/event.h>

#include "curl_event.h"
#include "frame.h"
#include "http_fetch.h"
#include "http_parse.h"
#include "idp.h"
#include "idp_worker.h"
#include "jose.h"
#include "log.h"
#include "redact.h"
#include "secret.h"
#include "xmalloc.h"

#define IDP_CONNECT_TIMEOUT	5	/* seconds */
#define IDP_TIMEOUT_MS		10000	/* a whole transfer */
#define IDP_METADATA_MAX	(128 * 1024)
#define IDP_INTROSPECT_MAX	(64 * 1024)	/* an introspection answer */
#define IDP_INTROSPECT_FLIGHT	64	/* introspections at once */
#define IDP_INTROSPECT_QUEUE	1024	/* and waiting for a place (the
					   supervisor asks no more) */
#define IDP_INTROSPECT_WAIT_MS	5000	/* how long one may wait: the
					   supervisor gives up by then */
#define IDP_EXCHANGE_FLIGHT	16	/* login codes exchanged at once */
#define IDP_EXCHANGE_MAX	(64 * 1024)	/* a token response */
#define IDP_ASKED_MS		30000	/* between fetches asked for */
#define IDP_RETRY_FIRST		2	/* seconds of backoff, doubling */
#define IDP_RETRY_MAX		300

enum xfer_kind {
	X_METADATA = 0,
	X_JWKS,
	X_INTROSPECT,
	X_EXCHANGE
};

/* One HTTP transfer. */
struct xfer {
	enum xfer_kind		 kind;
	struct hfetch		 f;		/* its post: the token */
	long			 max_age;	/* Cache-Control, or -1 */
	uint32_t		 tag;		/* X_INTROSPECT, X_EXCHANGE */
	TAILQ_ENTRY(xfer)	 entry;
};

static TAILQ_HEAD(, xfer)	 xfers = TAILQ_HEAD_INITIALIZER(xfers);
static struct curlev		*cev;
static struct event		*timer;		/* the next fetch */
static unsigned int		 nintrospect;
/* Introspections waiting for a place, oldest first. */
struct iwait {
	uint32_t		 tag;
	int64_t			 since;		/* ms */
	char			*token;		/* owned: secret_free */
	TAILQ_ENTRY(iwait)	 entry;
};
static TAILQ_HEAD(, iwait)	 iwaits = TAILQ_HEAD_INITIALIZER(iwaits);
static unsigned int		 niwaits;

/* The fetch of the keys. */
static int		 fetching;	/* one is under way */
static int		 have_metadata;	/* discovery is done */
static int		 keyless;	/* it names no key set: opaque
					   tokens only */
static char		*disc[IDP_DISCOVERY_MAX];
static int		 ndisc;		/* URLs of disc[] */
static int		 idisc;		/* the one tried */
static char		 disc_err[512];	/* the best reason yet */
static char		*jwks_url;	/* configured, or the metadata's */
static char		*introspection_url;	/* the metadata's, or NULL */
static char		*authorization_url;	/* the metadata's, or NULL */
static char		*token_url;	/* the metadata's, or NULL */
static unsigned int	 nexchange;	/* code exchanges in flight */
static int64_t		 asked_at;	/* the last fetch asked for, ms */
static unsigned int	 retry;		/* the next backoff, seconds */
static uint64_t		 jwks_fetches;
/* How the server is, as last said to the supervisor. */
static int		 server_ok;
static char		 server_err[512];

static void	done_cb(CURL *, CURLcode, void *);
static void	introspect_start(uint32_t, const char *);
static void	answer_fail(uint16_t, uint32_t, const char *);
static void	fetch_start(void);
static void	jwks_get(void);

static void
xfer_free(struct xfer *x)
{
	struct iwait	*w;

	TAILQ_REMOVE(&xfers, x, entry);
	if (x->kind == X_INTROSPECT)
		nintrospect--;
	if (x->kind == X_EXCHANGE)
		nexchange--;
	hfetch_clear(&x->f);
	free(x);
	/* A place is free: the oldest waiting takes it, unless its asker
	 * has given up on it by now. */
	while (nintrospect < IDP_INTROSPECT_FLIGHT &&
	    (w = TAILQ_FIRST(&iwaits)) != NULL) {
		TAILQ_REMOVE(&iwaits, w, entry);
		niwaits--;
		if (introspection_url == NULL)
			answer_fail(MSG_IDP_INTROSPECTED, w->tag, "the "
			    "server's metadata names no "
			    "introspection_endpoint any more");
		else if (now_ms() - w->since > IDP_INTROSPECT_WAIT_MS)
			answer_fail(MSG_IDP_INTROSPECTED, w->tag, "waited "
			    "too long for a place");
		else
			introspect_start(w->tag, w->token);
		secret_free(w->token);
		free(w);
	}
}

/* Response headers: the status line resets, Cache-Control is read. */
static size_t
header_cb(char *p, size_t size, size_t n, void *arg)
{
	struct xfer		*x = arg;
	struct http_header	 h;
	size_t			 len = size * n;

	if (len > 5 && memcmp(p, "HTTP/", 5) == 0) {
		x->max_age = -1;
		return (len);
	}
	if (x->max_age < 0 && http_header_line(p, len, &h) == 0 &&
	    http_name_is(&h, "Cache-Control"))
		x->max_age = idp_max_age(h.value, h.valuelen);
	return (len);
}

/* Start a transfer of a URL already checked. */
static struct xfer *
xfer_new(enum xfer_kind kind, const char *url, size_t max)
{
	struct xfer	*x;

	x = xcalloc(1, sizeof *x);
	x->kind = kind;
	x->max_age = -1;
	hfetch_init(&x->f, url, max, IDP_CONNECT_TIMEOUT, IDP_TIMEOUT_MS,
	    wc->ca_file, kind == X_JWKS ?
	    "application/jwk-set+json, application/json" : "application/json");
	TAILQ_INSERT_TAIL(&xfers, x, entry);
	curl_easy_setopt(x->f.easy, CURLOPT_PRIVATE, x);
	curl_easy_setopt(x->f.easy, CURLOPT_HEADERFUNCTION, header_cb);
	curl_easy_setopt(x->f.easy, CURLOPT_HEADERDATA, x);
	return (x);
}

/* Tell the supervisor how the server is. */
static void
status_send(int limited)
{
	json_t	*o;

	o = json_pack("{s:b, s:I}", "ok", server_ok, "jwks_fetches",
	    (json_int_t)jwks_fetches);
	if (!server_ok)
		json_object_set_new(o, "error", json_string(server_err));
	if (limited)
		json_object_set_new(o, "limited", json_true());
	idp_send_json(MSG_IDP_STATUS, 0, o);
}

/* Arm the timer of the next fetch. */
static void
timer_arm(unsigned int seconds)
{
	struct timeval	tv = { (time_t)seconds, 0 };

	evtimer_add(timer, &tv);
}

/* The fetch failed: say why, keep what we had, try again later. */
static void
fetch_failed(const char *why)
{
	unsigned int	cap = idp_refresh_after(-1, wc->refresh);

	fetching = 0;
	/* The jwks_uri may have moved: discover again next time. */
	have_metadata = 0;
	if (!server_ok && strcmp(server_err, why) == 0)
		log_debug("%s", why);
	else
		log_warnx("%s", why);
	server_ok = 0;
	snprintf(server_err, sizeof server_err, "%s", why);
	status_send(0);
	timer_arm(retry);
	log_debug("next try in %u s", retry);
	retry = retry * 2 > IDP_RETRY_MAX ? IDP_RETRY_MAX : retry * 2;
	if (retry > cap)
		retry = cap;
}

/* Try the next discovery URL. */
static void
metadata_get(void)
{
	struct xfer	*x;
	char		 url[512];

	x = xfer_new(X_METADATA, disc[idisc], IDP_METADATA_MAX);
	log_debug("metadata: %s", url_redact(disc[idisc], url, sizeof url));
	hfetch_go(&x->f, cev);
}

/* Where the login client's codes are got and exchanged, if it has one
 * (an endpoint that may not be fetched is left out, and said). */
static void
login_endpoints(json_t *md)
{
	const char	*authz, *token;
	char		 why[IDP_WHY_MAX];

	if (wc->login_id == NULL)
		return;
	free(authorization_url);
	free(token_url);
	authorization_url = token_url = NULL;
	if (idp_metadata_endpoint(md, "authorization_endpoint", &authz, why,
	    sizeof why) != 0 || idp_metadata_endpoint(md, "token_endpoint",
	    &token, why, sizeof why) != 0) {
		log_warnx("login: %s", why);
		return;
	}
	if (authz == NULL || token == NULL) {
		log_warnx("login: the metadata names no %s",
		    authz == NULL ? "authorization_endpoint" :
		    "token_endpoint");
		return;
	}
	authorization_url = xstrdup(authz);
	token_url = xstrdup(token);
}

/* What the supervisor keeps of the metadata. */
static json_t *
metadata_kept(void)
{
	json_t	*md;
	char	 url[512];

	md = json_pack("{s:s}", "issuer", wc->issuer);
	if (jwks_url != NULL)
		json_object_set_new(md, "jwks_uri", json_string(url_redact(
		    jwks_url, url, sizeof url)));
	json_object_set_new(md, "introspection_endpoint", introspection_url !=
	    NULL ? json_string(introspection_url) : json_null());
	json_object_set_new(md, "authorization_endpoint", authorization_url !=
	    NULL ? json_string(authorization_url) : json_null());
	return (md);
}

/*
 * The metadata names no key set, and tokens are introspected: the issuer
 * has opaque tokens only.  Its metadata is read again at each refresh
 * (a key set may appear).
 */
static void
keyless_done(const char *from)
{
	char	url[512];

	if (!server_ok || !keyless)
		log_info("metadata at %s names no jwks_uri: opaque tokens "
		    "only, introspected", url_redact(from, url, sizeof url));
	keyless = 1;
	free(jwks_url);		/* the metadata's, which named none */
	jwks_url = NULL;
	idp_send_json(MSG_IDP_KEYS, 0, json_pack("{s:n, s:I, s:o, s:I, s:b}",
	    "jwks", "fetched", (json_int_t)time(NULL), "metadata",
	    metadata_kept(), "keys", (json_int_t)0, "keyless", 1));
	fetching = 0;
	server_ok = 1;
	server_err[0] = '\0';
	retry = IDP_RETRY_FIRST;
	status_send(0);
	timer_arm(idp_refresh_after(-1, wc->refresh));
}

/* A discovery URL answered, or failed. */
static void
metadata_done(struct xfer *x, CURLcode r)
{
	json_t		*md;
	const char	*jwks, *intro;
	char		 why[IDP_WHY_MAX], msg[512], url[512];
	int		 transport = r != CURLE_OK && !x->f.over;

	md = r == CURLE_OK && !x->f.over && x->f.status == 200 ? hfetch_json(&x->f) :
	    NULL;
	if (md == NULL) {
		hfetch_error(&x->f, r, "metadata", msg, sizeof msg);
		if (r == CURLE_OK && !x->f.over && x->f.status == 200)
			snprintf(msg, sizeof msg, "metadata at %.200s: not a "
			    "JSON object", url_redact(x->f.url, url, sizeof url));
		/* The first error unless a better one: an issuer mismatch. */
		if (disc_err[0] == '\0')
			snprintf(disc_err, sizeof disc_err, "%s", msg);
	} else if (idp_metadata_check(md, wc->issuer, &jwks, &intro, why,
	    sizeof why) != 0) {
		snprintf(disc_err, sizeof disc_err, "metadata at %.200s: %s",
		    url_redact(x->f.url, url, sizeof url), why);
		json_decref(md);
		md = NULL;
	} else if (wc->jwks_uri == NULL && jwks == NULL &&
	    (wc->client_id == NULL || intro == NULL)) {
		snprintf(disc_err, sizeof disc_err, "metadata at %.200s: no "
		    "jwks_uri%s", url_redact(x->f.url, url, sizeof url),
		    wc->client_id != NULL ? ", and no introspection_endpoint" :
		    "");
		json_decref(md);
		md = NULL;
	}
	if (md != NULL) {
		free(introspection_url);
		introspection_url = intro != NULL ? xstrdup(intro) : NULL;
		login_endpoints(md);
		if (wc->jwks_uri == NULL && jwks == NULL) {
			json_decref(md);
			keyless_done(x->f.url);
			return;
		}
		if (wc->jwks_uri == NULL) {
			free(jwks_url);
			jwks_url = xstrdup(jwks);
		}
		json_decref(md);
		have_metadata = 1;
		log_debug("metadata found at %s", url_redact(x->f.url, url,
		    sizeof url));
		jwks_get();
		return;
	}
	/* The host does not answer: the other URLs are on it too. */
	if (!transport && ++idisc < ndisc) {
		metadata_get();
		return;
	}
	if (wc->jwks_uri != NULL) {
		/* The keys are configured: introspection is what is lost. */
		log_warnx("%s (introspection needs the metadata)", disc_err);
		jwks_get();
		return;
	}
	fetch_failed(disc_err);
}

/* Fetch the JWK Set. */
static void
jwks_get(void)
{
	struct xfer	*x;
	char		 url[512];

	jwks_fetches++;
	x = xfer_new(X_JWKS, jwks_url, JOSE_JWKS_MAX);
	log_debug("keys: %s", url_redact(jwks_url, url, sizeof url));
	hfetch_go(&x->f, cev);
}

/* The JWK Set answered, or failed. */
static void
jwks_done(struct xfer *x, CURLcode r)
{
	struct jose_jwks	*set;
	json_t			*o, *md;
	const char		*text;
	size_t			 len;
	unsigned int		 next;
	char			 why[JOSE_WHY_MAX], msg[512], url[512];

	if (r != CURLE_OK || x->f.over || x->f.status != 200) {
		hfetch_error(&x->f, r, "keys", msg, sizeof msg);
		fetch_failed(msg);
		return;
	}
	len = evbuffer_get_length(x->f.body);
	text = (const char *)evbuffer_pullup(x->f.body, -1);
	if ((set = jose_jwks_parse(text, len, why)) == NULL) {
		snprintf(msg, sizeof msg, "keys at %.200s: %s",
		    url_redact(x->f.url, url, sizeof url), why);
		fetch_failed(msg);
		return;
	}
	if ((o = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL)) ==
	    NULL) {
		jose_jwks_free(set);
		snprintf(msg, sizeof msg, "keys at %.200s: not JSON",
		    url_redact(x->f.url, url, sizeof url));
		fetch_failed(msg);
		return;
	}
	if (jose_jwks_note(set)[0] != '\0')
		log_debug("keys: %s", jose_jwks_note(set));
	md = metadata_kept();
	keyless = 0;
	idp_send_json(MSG_IDP_KEYS, 0, json_pack("{s:o, s:I, s:o, s:I}",
	    "jwks", o, "fetched", (json_int_t)time(NULL), "metadata", md,
	    "keys", (json_int_t)jose_jwks_count(set)));
	next = idp_refresh_after(x->max_age, wc->refresh);
	if (!server_ok)
		log_info("keys: %zu from %s", jose_jwks_count(set),
		    url_redact(jwks_url, url, sizeof url));
	else
		log_debug("keys: %zu, next in %u s", jose_jwks_count(set),
		    next);
	jose_jwks_free(set);
	fetching = 0;
	server_ok = 1;
	server_err[0] = '\0';
	retry = IDP_RETRY_FIRST;
	status_send(0);
	timer_arm(next);
}

/* Answer a request of the supervisor's (IDP_INTROSPECTED, _EXCHANGED)
 * with an error. */
static void
answer_fail(uint16_t type, uint32_t tag, const char *why)
{
	idp_send_json(type, tag, json_pack("{s:s}", "error", why));
}

/* The introspection endpoint answered, or failed. */
static void
introspect_done(struct xfer *x, CURLcode r)
{
	json_t	*o = NULL;
	char	 msg[512];

	if (r == CURLE_OK && !x->f.over && x->f.status == 200)
		o = hfetch_json(&x->f);
	if (o == NULL) {
		if (r == CURLE_OK && !x->f.over && x->f.status == 200)
			snprintf(msg, sizeof msg, "introspection: the answer "
			    "is not a JSON object");
		else if (r == CURLE_OK && !x->f.over && (x->f.status == 401 ||
		    x->f.status == 403))
			snprintf(msg, sizeof msg, "introspection: HTTP %ld: "
			    "the server refused the client's credentials",
			    x->f.status);
		else
			hfetch_error(&x->f, r, "introspection", msg, sizeof msg);
		log_warnx("%s", msg);
		answer_fail(MSG_IDP_INTROSPECTED, x->tag, msg);
		return;
	}
	if (!json_is_boolean(json_object_get(o, "active"))) {
		json_decref(o);
		log_warnx("introspection: the answer has no active boolean");
		answer_fail(MSG_IDP_INTROSPECTED, x->tag, "introspection: "
		    "the answer has no active boolean");
		return;
	}
	idp_send_json(MSG_IDP_INTROSPECTED, x->tag, o);
}


/* The token endpoint answered a login client's code, or failed. */
static void
exchange_done(struct xfer *x, CURLcode r)
{
	json_t		*o = NULL;
	const char	*e;
	char		 msg[512], err[64];
	size_t		 i;

	if (r == CURLE_OK && !x->f.over)
		o = hfetch_json(&x->f);
	/* The answer's tokens (refresh, ID) go with its text. */
	if ((i = evbuffer_get_length(x->f.body)) > 0)
		explicit_bzero(evbuffer_pullup(x->f.body, -1), i);
	if (o != NULL && x->f.status == 200 &&
	    json_is_string(json_object_get(o, "access_token"))) {
		idp_send_secret(MSG_IDP_EXCHANGED, x->tag, json_pack("{s:O}",
		    "access_token", json_object_get(o, "access_token")));
		secret_wipe_json(o);
		json_decref(o);
		return;
	}
	if (o != NULL && (e = json_string_value(json_object_get(o,
	    "error"))) != NULL) {
		/* Its error code only: the description is the server's. */
		snprintf(err, sizeof err, "%s", e);
		for (i = 0; err[i] != '\0'; i++) {
			if (err[i] < 0x20 || err[i] >= 0x7f || err[i] == '"' ||
			    err[i] == '\\')
				err[i] = '?';
		}
		snprintf(msg, sizeof msg, "login: the token endpoint answered "
		    "HTTP %ld, %s", x->f.status, err);
	} else if (o != NULL)
		snprintf(msg, sizeof msg, "login: the token endpoint answered "
		    "HTTP %ld without an access_token", x->f.status);
	else
		hfetch_error(&x->f, r, "login", msg, sizeof msg);
	if (o != NULL)
		secret_wipe_json(o);
	json_decref(o);
	log_warnx("%s", msg);
	answer_fail(MSG_IDP_EXCHANGED, x->tag, msg);
}

/* curl finished a transfer. */
static void
done_cb(CURL *easy, CURLcode r, void *arg)
{
	struct xfer	*x;

	curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&x);
	hfetch_finished(&x->f);
	switch (x->kind) {
	case X_METADATA:
		metadata_done(x, r);
		break;
	case X_JWKS:
		jwks_done(x, r);
		break;
	case X_INTROSPECT:
		introspect_done(x, r);
		break;
	case X_EXCHANGE:
		exchange_done(x, r);
		break;
	}
	xfer_free(x);
}

/* Fetch the keys: discovery first if it is needed. */
static void
fetch_start(void)
{
	if (fetching)
		return;
	fetching = 1;
	evtimer_del(timer);
	if ((have_metadata && !keyless) || (wc->jwks_uri != NULL &&
	    wc->client_id == NULL)) {
		jwks_get();
		return;
	}
	idisc = 0;
	disc_err[0] = '\0';
	metadata_get();
}

static void
timer_cb(evutil_socket_t fd, short events, void *arg)
{
	fetch_start();
}

void
idp_fetch_init(void)
{
	char	why[IDP_WHY_MAX];

	cev = curlev_new(base, done_cb, NULL);
	timer = evtimer_new(base, timer_cb, NULL);
	retry = IDP_RETRY_FIRST;
	server_ok = 1;
	if (wc->jwks_uri != NULL)
		jwks_url = xstrdup(wc->jwks_uri);
	if (wc->metadata_url != NULL) {
		disc[0] = xstrdup(wc->metadata_url);
		ndisc = 1;
	} else if ((ndisc = idp_discovery_urls(wc->issuer, disc, why,
	    sizeof why)) < 0)
		fatalx("issuer: %s", why);	/* checked with the conf */
	fetch_start();
}

void
idp_fetch_refresh(void)
{
	int64_t	now = now_ms();

	/* The fetch under way answers it. */
	if (fetching)
		return;
	if (asked_at != 0 && now - asked_at < IDP_ASKED_MS) {
		log_debug("keys asked for again within %d s: not fetched",
		    IDP_ASKED_MS / 1000);
		status_send(1);
		return;
	}
	asked_at = now;
	log_debug("keys asked for");
	fetch_start();
}

/* Post an introspection (the token is copied into its form). */
static void
introspect_start(uint32_t tag, const char *token)
{
	struct xfer	*x;
	char		*form = NULL, *line;

	x = xfer_new(X_INTROSPECT, introspection_url, IDP_INTROSPECT_MAX);
	x->tag = tag;
	nintrospect++;
	hfetch_form_add(&form, "token", token);
	hfetch_form_add(&form, "token_type_hint", "access_token");
	if (wc->secret_post) {
		hfetch_form_add(&form, "client_id", wc->client_id);
		hfetch_form_add(&form, "client_secret", wc->client_secret);
	} else {
		line = hfetch_basic(wc->client_id, wc->client_secret);
		hfetch_header(&x->f, line);
		secret_free(line);
	}
	hfetch_post(&x->f, form, "application/x-www-form-urlencoded");
	hfetch_go(&x->f, cev);
}

void
idp_introspect(uint32_t tag, char *token)
{
	struct iwait	*w;

	if (wc->client_id == NULL)
		answer_fail(MSG_IDP_INTROSPECTED, tag, "introspection is "
		    "not configured");
	else if (introspection_url == NULL)
		answer_fail(MSG_IDP_INTROSPECTED, tag, "the server's "
		    "metadata names no introspection_endpoint (or is not "
		    "known yet)");
	else if (nintrospect < IDP_INTROSPECT_FLIGHT)
		introspect_start(tag, token);
	else if (niwaits < IDP_INTROSPECT_QUEUE) {
		/* A burst of new tokens waits its turn, not refused. */
		w = xcalloc(1, sizeof *w);
		w->tag = tag;
		w->since = now_ms();
		w->token = token;
		TAILQ_INSERT_TAIL(&iwaits, w, entry);
		niwaits++;
		return;
	} else
		answer_fail(MSG_IDP_INTROSPECTED, tag, "too many "
		    "introspections in flight");
	secret_free(token);
}

void
idp_exchange(uint32_t tag, json_t *req)
{
	struct xfer	*x;
	char		*form = NULL, *line;
	json_t		*v;
	static const char *const keys[] = { "code", "code_verifier",
	    "redirect_uri", "resource" };
	size_t		 i;

	if (wc->login_id == NULL)
		answer_fail(MSG_IDP_EXCHANGED, tag, "the issuer has no "
		    "login client");
	else if (token_url == NULL)
		answer_fail(MSG_IDP_EXCHANGED, tag, "the server's metadata "
		    "names no token_endpoint (or is not known yet)");
	else if (nexchange >= IDP_EXCHANGE_FLIGHT)
		answer_fail(MSG_IDP_EXCHANGED, tag, "too many logins in "
		    "flight");
	else {
		x = xfer_new(X_EXCHANGE, token_url, IDP_EXCHANGE_MAX);
		x->tag = tag;
		nexchange++;
		hfetch_form_add(&form, "grant_type", "authorization_code");
		for (i = 0; i < sizeof keys / sizeof keys[0]; i++) {
			if (json_is_string(v = json_object_get(req, keys[i])))
				hfetch_form_add(&form, keys[i],
				    json_string_value(v));
		}
		if (wc->login_secret == NULL)
			hfetch_form_add(&form, "client_id", wc->login_id);
		else if (wc->login_post) {
			hfetch_form_add(&form, "client_id", wc->login_id);
			hfetch_form_add(&form, "client_secret",
			    wc->login_secret);
		} else {
			line = hfetch_basic(wc->login_id, wc->login_secret);
			hfetch_header(&x->f, line);
			secret_free(line);
		}
		hfetch_post(&x->f, form, "application/x-www-form-urlencoded");
		hfetch_go(&x->f, cev);
	}
	/* The code and verifier go now. */
	secret_wipe_json(req);
	json_decref(req);
}

void
idp_fetch_stop(void)
{
	struct xfer	*x;
	struct iwait	*w;
	int		 i;

	/* Those waiting go first: freeing a transfer would start one. */
	while ((w = TAILQ_FIRST(&iwaits)) != NULL) {
		TAILQ_REMOVE(&iwaits, w, entry);
		niwaits--;
		secret_free(w->token);
		free(w);
	}
	while ((x = TAILQ_FIRST(&xfers)) != NULL) {
		if (cev != NULL)
			curlev_remove(cev, x->f.easy);
		xfer_free(x);
	}
	if (cev != NULL)
		curlev_free(cev);
	cev = NULL;
	if (timer != NULL)
		event_free(timer);
	timer = NULL;
	for (i = 0; i < ndisc; i++)
		free(disc[i]);
	ndisc = 0;
	free(jwks_url);
	free(introspection_url);
	free(authorization_url);
	free(token_url);
	jwks_url = introspection_url = authorization_url = token_url = NULL;
}
