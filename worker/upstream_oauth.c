/* SPDX-License-Identifier: ISC */
/*
 * The gateway as an OAuth 2.1 client of its remote upstream (issue 23),
 * the gateway-wide identity.  A 401 starts the flow: the protected
 * resource metadata (the challenge's resource_metadata, else the
 * well-known URLs, RFC 9728), whose resource must be the upstream's URL;
 * the authorization server's metadata (RFC 8414 and OpenID, the three
 * URLs of idp_discovery_urls), whose issuer must be the one named and
 * whose token endpoint must be on the issuer's host; then a token.  This
 * slice gets tokens by client credentials (a machine identity); an
 * upstream that needs a login says so ("login needed").  The token is
 * renewed before it expires and after a 401 to a request that carried it.
 *
 * Every transfer is on the worker's loop (libcurl multi), bounded
 * (OAUTHC_DOC_MAX bytes, OAUTH_TIMEOUT_MS), never redirected, https or
 * http to loopback, TLS always verified.  Neither the token nor the
 * client secret is ever logged or put in an error; they are wiped when
 * freed.  Requests waiting for a token are answered from the loop, never
 * inside the call that made them wait.
 */
#include "config.h"

#include <sys/queue.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>
#include <event2/buffer.h>
#include <event2/event.h>

#include "curl_event.h"
#include "http_fetch.h"
#include "http_parse.h"
#include "idp.h"
#include "log.h"
#include "oauthc.h"
#include "redact.h"
#include "secret.h"
#include "worker.h"
#include "xmalloc.h"

#define OAUTH_TIMEOUT_MS	10000	/* one transfer */
#define OAUTH_WAITERS_MAX	1024	/* requests waiting for a token */
#define OAUTH_RENEW_BEFORE	60	/* seconds before expiry */
#define OAUTH_RENEW_MIN		5	/* seconds, at the least */

enum oauth_step {
	STEP_IDLE = 0,
	STEP_PRM,		/* protected resource metadata */
	STEP_AS,		/* the authorization server's metadata */
	STEP_TOKEN
};

/* A request waiting for a token. */
struct waiter {
	upoauth_cb		 cb;
	void			*arg;
	TAILQ_ENTRY(waiter)	 entry;
};

static struct curlev		*cev;
static struct hfetch		*xf;		/* the transfer under way */
static enum oauth_step		 step;
static TAILQ_HEAD(, waiter)	 waiters = TAILQ_HEAD_INITIALIZER(waiters);
static unsigned int		 nwaiters;
static struct event		*notify_ev;	/* answers the waiters */
static struct event		*renew_ev;	/* the token's renewal */

/* Discovery, kept between flows. */
static char	*challenge_scope;	/* the 401's scope, or NULL */
static char	*urls[IDP_DISCOVERY_MAX > OAUTHC_PRM_URLS ?
		    IDP_DISCOVERY_MAX : OAUTHC_PRM_URLS];
static int	 nurls, iurl;
static char	*issuer;		/* the authorization server named */
static char	*prm_scopes;		/* scopes_supported, or NULL */
static char	*token_endpoint;
static unsigned int auth_methods;
static char	 flow_err[512];		/* the best reason yet */

/* The token. */
static char		*access_token;	/* wiped */
static unsigned int	 generation;	/* of the token; 0: none yet */
static char		 last_error[512];	/* the last flow's, or "" */
static int		 operator_needed;	/* it failed for want of one */
static int		 lost_for_operator;	/* the connection ended so */

static void	flow_step(void);
static void	flow_fail(const char *, ...) __attribute__((format(printf, 1, 2)));

/* Wipe and free a string. */
static void
wipe(char *s)
{
	if (s != NULL) {
		explicit_bzero(s, strlen(s));
		free(s);
	}
}

/* Start a transfer of a URL that may be fetched (checked here). */
static int
xfer_start(const char *url, char *post, char *auth)
{
	struct hfetch	*x;
	char		 why[IDP_WHY_MAX];

	if (!idp_url_allowed(url, why, sizeof why)) {
		wipe(post);
		wipe(auth);
		flow_fail("%s", why);
		return (-1);
	}
	x = xcalloc(1, sizeof *x);
	/* TLS verified whatever tls_verify says: secrets go there. */
	hfetch_init(x, url, OAUTHC_DOC_MAX, sc->connect_timeout,
	    OAUTH_TIMEOUT_MS, sc->ca_file, "application/json");
	if (auth != NULL)
		hfetch_header(x, auth);
	wipe(auth);
	if (post != NULL)
		hfetch_post(x, post, "application/x-www-form-urlencoded");
	xf = x;
	hfetch_go(x, cev);
	return (0);
}

/* Answer every waiter from the loop. */
static void
notify_cb(evutil_socket_t fd, short what, void *arg)
{
	struct waiter	*w;
	const char	*err = access_token == NULL ? last_error : NULL;

	while ((w = TAILQ_FIRST(&waiters)) != NULL) {
		TAILQ_REMOVE(&waiters, w, entry);
		nwaiters--;
		w->cb(w->arg, err);
		free(w);
	}
}

static void
urls_free(void)
{
	while (nurls > 0)
		free(urls[--nurls]);
	iurl = 0;
}

/* The flow failed: every waiter gets why; the next 401 starts again. */
static void
flow_fail(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof last_error, fmt, ap);
	va_end(ap);
	log_warnx("upstream %s: oauth: %s", sc->name, last_error);
	step = STEP_IDLE;
	urls_free();
	event_active(notify_ev, EV_TIMEOUT, 0);
}

/* Keep the reason of a discovery URL that did not do, if it is the first. */
static void
flow_note(const char *why)
{
	log_debug("upstream %s: oauth: %s", sc->name, why);
	if (flow_err[0] == '\0')
		snprintf(flow_err, sizeof flow_err, "%s", why);
}

/* Arm the renewal of a token that expires in secs (-1: not said). */
static void
renew_arm(long long secs)
{
	struct timeval	tv = { 0, 0 };

	if (secs < 0)
		return;
	if (secs > 2 * OAUTH_RENEW_BEFORE)
		tv.tv_sec = (time_t)(secs - OAUTH_RENEW_BEFORE);
	else
		tv.tv_sec = (time_t)(secs / 2);
	if (tv.tv_sec < OAUTH_RENEW_MIN)
		tv.tv_sec = OAUTH_RENEW_MIN;
	evtimer_add(renew_ev, &tv);
	log_debug("upstream %s: oauth: token renewed in %lld s", sc->name,
	    (long long)tv.tv_sec);
}

/* The scope to ask for: configured, else the 401's, else the metadata's. */
static char *
scope_wanted(void)
{
	char	*s = NULL;
	size_t	 i, n = 0;

	if (sc->oauth != NULL && sc->oauth->scopes != NULL) {
		for (i = 0; sc->oauth->scopes[i] != NULL; i++)
			n += strlen(sc->oauth->scopes[i]) + 1;
		s = xcalloc(1, n + 1);
		for (i = 0; sc->oauth->scopes[i] != NULL; i++) {
			if (i > 0)
				strcat(s, " ");
			strcat(s, sc->oauth->scopes[i]);
		}
		return (s);
	}
	if (challenge_scope != NULL)
		return (xstrdup(challenge_scope));
	if (prm_scopes != NULL)
		return (xstrdup(prm_scopes));
	return (NULL);
}

/* Request a token by client credentials (RFC 6749 section 4.4). */
static void
token_request(void)
{
	struct oauthc_as	 as;
	char			*form = NULL, *h = NULL, *secret, *scope;
	char			 err[512];
	unsigned int		 how;

	memset(&as, 0, sizeof as);
	as.auth_methods = auth_methods;
	if ((secret = secret_expand(sc->oauth->client_secret, err,
	    sizeof err)) == NULL) {
		flow_fail("client_secret: %s", err);
		return;
	}
	if ((how = oauthc_auth_method(&as, 1)) == 0) {
		wipe(secret);
		flow_fail("the token endpoint takes neither client_secret_basic "
		    "nor client_secret_post");
		return;
	}
	hfetch_form_add(&form, "grant_type", "client_credentials");
	if ((scope = scope_wanted()) != NULL)
		hfetch_form_add(&form, "scope", scope);
	free(scope);
	hfetch_form_add(&form, "resource", sc->url);
	if (how == OAUTHC_AUTH_POST) {
		hfetch_form_add(&form, "client_id", sc->oauth->client_id);
		hfetch_form_add(&form, "client_secret", secret);
	} else
		h = hfetch_basic(sc->oauth->client_id, secret);
	wipe(secret);
	step = STEP_TOKEN;
	log_debug("upstream %s: oauth: client credentials at %s", sc->name,
	    token_endpoint);
	xfer_start(token_endpoint, form, h);
}

/* The token endpoint answered. */
static void
token_done(struct hfetch *x, CURLcode r)
{
	struct oauthc_token	t;
	char			why[OAUTHC_WHY_MAX], msg[512];

	if (r != CURLE_OK || x->over) {
		hfetch_error(x, r, "token", msg, sizeof msg);
		flow_fail("%s", msg);
		return;
	}
	if (oauthc_token_parse((const char *)evbuffer_pullup(x->body, -1),
	    evbuffer_get_length(x->body), &t, why, sizeof why) == -1) {
		/* The server does not take our client: the operator's to fix. */
		operator_needed = strcmp(t.error, "invalid_client") == 0 ||
		    strcmp(t.error, "unauthorized_client") == 0;
		if (x->status / 100 == 2 || t.error[0] != '\0')
			flow_fail("token: %s (HTTP %ld)", why, x->status);
		else {
			hfetch_error(x, r, "token", msg, sizeof msg);
			flow_fail("%s", msg);
		}
		oauthc_token_clear(&t);
		return;
	}
	wipe(access_token);
	access_token = t.access_token;
	t.access_token = NULL;
	generation++;
	last_error[0] = '\0';
	operator_needed = 0;
	step = STEP_IDLE;
	urls_free();
	log_info("upstream %s: oauth: a token from %s (client credentials, "
	    "%lld s%s%s)", sc->name, issuer, t.expires_in, t.scope != NULL ?
	    ", scope " : "", t.scope != NULL ? t.scope : "");
	renew_arm(t.expires_in);
	oauthc_token_clear(&t);
	event_active(notify_ev, EV_TIMEOUT, 0);
}

/* The authorization server is known: get a token as configured. */
static void
token_get(void)
{
	if (sc->oauth == NULL || sc->oauth->grant !=
	    UPOAUTH_CLIENT_CREDENTIALS || sc->oauth->client_secret == NULL) {
		operator_needed = 1;
		flow_fail("login needed: this upstream needs a user's "
		    "authorization (mcpctl login %s, not yet supported)",
		    sc->name);
		return;
	}
	token_request();
}

/* A metadata URL answered: the resource's or the server's. */
static void
metadata_done(struct hfetch *x, CURLcode r)
{
	json_t		*md;
	const char	*as_url;
	char		*scopes, why[OAUTHC_WHY_MAX], msg[512], url[512];
	struct oauthc_as as;

	url_redact(x->url, url, sizeof url);
	md = r == CURLE_OK && !x->over && x->status == 200 ? hfetch_json(x) :
	    NULL;
	if (md == NULL) {
		hfetch_error(x, r, step == STEP_PRM ? "resource metadata" :
		    "server metadata", msg, sizeof msg);
		if (r == CURLE_OK && !x->over && x->status == 200)
			snprintf(msg, sizeof msg, "metadata at %.200s: not a "
			    "JSON object", url);
		flow_note(msg);
		if (++iurl < nurls) {
			flow_step();
			return;
		}
		flow_fail("%s", flow_err);
		return;
	}
	if (step == STEP_PRM) {
		if (oauthc_prm_check(md, sc->url, &as_url, &scopes, why,
		    sizeof why) == -1) {
			/* Not the upstream's: refused, not tried elsewhere. */
			json_decref(md);
			flow_fail("resource metadata at %.200s refused: %s",
			    url, why);
			return;
		}
		free(issuer);
		issuer = xstrdup(as_url);
		free(prm_scopes);
		prm_scopes = scopes;
		json_decref(md);
		urls_free();
		flow_err[0] = '\0';
		if ((nurls = idp_discovery_urls(issuer, urls, why,
		    sizeof why)) < 0) {
			nurls = 0;
			flow_fail("authorization server: %s", why);
			return;
		}
		step = STEP_AS;
		flow_step();
		return;
	}
	if (oauthc_as_check(md, issuer, &as, why, sizeof why) == -1) {
		snprintf(msg, sizeof msg, "server metadata at %.200s refused: "
		    "%s", url, why);
		json_decref(md);
		/* A refusal is worth more than a 404 elsewhere. */
		flow_err[0] = '\0';
		flow_note(msg);
		if (++iurl < nurls) {
			flow_step();
			return;
		}
		flow_fail("%s", flow_err);
		return;
	}
	free(token_endpoint);
	token_endpoint = xstrdup(as.token_endpoint);
	auth_methods = as.auth_methods;
	json_decref(md);
	urls_free();
	token_get();
}

/* Fetch the current discovery URL. */
static void
flow_step(void)
{
	log_debug("upstream %s: oauth: %s %s", sc->name, step == STEP_PRM ?
	    "resource metadata" : "server metadata", urls[iurl]);
	xfer_start(urls[iurl], NULL, NULL);
}

/* Begin: the resource's metadata, from the challenge or the well-known URLs. */
static void
flow_start(const char *challenge)
{
	struct oauthc_challenge	c;
	char			why[OAUTHC_WHY_MAX];

	urls_free();
	flow_err[0] = '\0';
	free(challenge_scope);
	challenge_scope = NULL;
	memset(&c, 0, sizeof c);
	if (challenge != NULL && oauthc_challenge_parse(challenge,
	    strlen(challenge), &c) == -1)
		log_info("upstream %s: oauth: a malformed WWW-Authenticate, "
		    "ignored", sc->name);
	if (c.scope != NULL)
		challenge_scope = xstrdup(c.scope);
	/* A token endpoint known already: a new token only. */
	if (token_endpoint != NULL) {
		oauthc_challenge_clear(&c);
		token_get();
		return;
	}
	step = STEP_PRM;
	if (c.resource_metadata != NULL) {
		urls[nurls++] = xstrdup(c.resource_metadata);
		oauthc_challenge_clear(&c);
		flow_step();
		return;
	}
	oauthc_challenge_clear(&c);
	if ((nurls = oauthc_prm_urls(sc->url, urls, why, sizeof why)) < 0) {
		nurls = 0;
		flow_fail("%s", why);
		return;
	}
	flow_step();
}

/* curl finished the flow's transfer. */
static void
done_cb(CURL *easy, CURLcode r, void *arg)
{
	struct hfetch	*x = xf;

	xf = NULL;
	hfetch_finished(x);
	if (step == STEP_TOKEN)
		token_done(x, r);
	else
		metadata_done(x, r);
	hfetch_clear(x);
	free(x);
}

/* The token's renewal is due: a new one by the same grant. */
static void
renew_cb(evutil_socket_t fd, short what, void *arg)
{
	if (step != STEP_IDLE)
		return;
	log_debug("upstream %s: oauth: renewing the token", sc->name);
	flow_start(NULL);
}

void
upoauth_init(void)
{
	if (cev != NULL)
		return;
	cev = curlev_new(base, done_cb, NULL);
	notify_ev = event_new(base, -1, 0, notify_cb, NULL);
	renew_ev = evtimer_new(base, renew_cb, NULL);
}

unsigned int
upoauth_generation(void)
{
	return (generation);
}

struct curl_slist *
upoauth_header(struct curl_slist *h, unsigned int *gen)
{
	char	*line;

	*gen = 0;
	if (access_token == NULL)
		return (h);
	xasprintf(&line, "Authorization: Bearer %s", access_token);
	h = curl_slist_append(h, line);
	wipe(line);
	*gen = generation;
	return (h);
}

int
upoauth_unauthorized(const char *challenge, unsigned int gen, upoauth_cb cb,
    void *arg)
{
	struct waiter	*w;

	if (cev == NULL)
		return (-1);
	if (nwaiters >= OAUTH_WAITERS_MAX)
		return (-1);
	w = xcalloc(1, sizeof *w);
	w->cb = cb;
	w->arg = arg;
	TAILQ_INSERT_TAIL(&waiters, w, entry);
	nwaiters++;
	/* A newer token than the one refused: try it at once. */
	if (access_token != NULL && gen != generation) {
		event_active(notify_ev, EV_TIMEOUT, 0);
		return (0);
	}
	/* The token was refused (revoked, expired early): drop it. */
	if (access_token != NULL) {
		log_info("upstream %s: oauth: the upstream refused the token; "
		    "getting another", sc->name);
		wipe(access_token);
		access_token = NULL;
	}
	if (step == STEP_IDLE) {
		operator_needed = 0;
		flow_start(challenge);
	}
	return (0);
}

void
upoauth_forget(void *arg)
{
	struct waiter	*w, *next;

	for (w = TAILQ_FIRST(&waiters); w != NULL; w = next) {
		next = TAILQ_NEXT(w, entry);
		if (w->arg == arg) {
			TAILQ_REMOVE(&waiters, w, entry);
			nwaiters--;
			free(w);
		}
	}
}

void
upoauth_losing(void)
{
	lost_for_operator = operator_needed;
}

int
upoauth_operator_needed(void)
{
	return (lost_for_operator);
}

const char *
upoauth_last_error(void)
{
	return (last_error[0] != '\0' ? last_error : NULL);
}
