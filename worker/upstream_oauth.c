/* SPDX-License-Identifier: ISC */
/*
 * The gateway as an OAuth 2.1 client of its remote upstream (issue 23),
 * the gateway-wide identity.  A 401 starts the flow: the protected
 * resource metadata (the challenge's resource_metadata, else the
 * well-known URLs, RFC 9728), whose resource must be the upstream's URL;
 * the authorization server's metadata (RFC 8414 and OpenID, the three
 * URLs of idp_discovery_urls), whose issuer must be the one named and
 * whose token endpoint must be on the issuer's host; then a token: by
 * client credentials (a machine identity), or by the refresh token of a
 * login (upstream_login.c).  Without either, the worker is in the login
 * state: it says so and waits for mcpctl login.  The token is renewed
 * before it expires and after a 401 to a request that carried it; a 403
 * insufficient_scope asks for the union of the scopes (client
 * credentials) or for a login with it.
 *
 * Every transfer is on the worker's loop (libcurl multi), bounded
 * (OAUTHC_DOC_MAX bytes, UPO_TIMEOUT_MS), never redirected, https or
 * http to loopback, TLS always verified.  Neither a token nor a secret is
 * ever logged or put in an error; they are wiped when freed.  Requests
 * waiting for a token are answered from the loop, never inside the call
 * that made them wait.
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
#include "idp.h"
#include "log.h"
#include "oauthc.h"
#include "redact.h"
#include "secret.h"
#include "upoauth.h"
#include "worker.h"
#include "xmalloc.h"

#define OAUTH_WAITERS_MAX	1024	/* requests waiting for a token */
#define OAUTH_RENEW_BEFORE	60	/* seconds before expiry */
#define OAUTH_RENEW_MIN		5	/* seconds, at the least */
#define OAUTH_STEPUPS_MAX	2	/* new tokens for one scope set */

/* A request waiting for a token. */
struct waiter {
	upoauth_cb		 cb;
	void			*arg;
	char			*error;		/* its own answer, or NULL */
	TAILQ_ENTRY(waiter)	 entry;
};

struct upo			 upo;
static struct curlev		*cev;
static struct hfetch		*xf;		/* the transfer under way */
static TAILQ_HEAD(, waiter)	 waiters = TAILQ_HEAD_INITIALIZER(waiters);
static unsigned int		 nwaiters;
static struct event		*notify_ev;	/* answers the waiters */
static struct event		*renew_ev;	/* the token's renewal */

/* Discovery's URLs. */
static char	*urls[IDP_DISCOVERY_MAX > OAUTHC_PRM_URLS ?
		    IDP_DISCOVERY_MAX : OAUTHC_PRM_URLS];
static int	 nurls, iurl;
static char	 flow_err[512];		/* the best reason yet */

static unsigned int	 generation;	/* of the token; 0: none yet */
static char		 last_error[512];	/* the last flow's, or "" */
static int		 operator_needed;	/* it failed for want of one */
static int		 lost_for_operator;	/* the connection ended so */
static char		*stepup_scope;	/* the scope set stepped up to */
static int		 nstepups;	/* for it */

static void	flow_step(void);

void
upo_wipe(char *s)
{
	secret_free(s);
}

/* Replace a string (wiping the old). */
void
upo_set(char **p, const char *s)
{
	upo_wipe(*p);
	*p = s != NULL ? xstrdup(s) : NULL;
}

/* Start a transfer of a URL that may be fetched (checked here). */
int
upo_fetch(enum upo_step step, const char *url, char *post,
    const char *content_type, char *auth)
{
	struct hfetch	*x;
	char		 why[IDP_WHY_MAX];

	if (!idp_url_allowed(url, why, sizeof why)) {
		upo_wipe(post);
		upo_wipe(auth);
		upo_fail("%s", why);
		return (-1);
	}
	x = xcalloc(1, sizeof *x);
	/* TLS verified whatever tls_verify says: secrets go there. */
	hfetch_init(x, url, OAUTHC_DOC_MAX, sc->connect_timeout,
	    UPO_TIMEOUT_MS, sc->ca_file, "application/json");
	if (auth != NULL)
		hfetch_header(x, auth);
	upo_wipe(auth);
	if (post != NULL)
		hfetch_post(x, post, content_type);
	upo.step = step;
	xf = x;
	hfetch_go(x, cev);
	return (0);
}

/* Answer every waiter from the loop. */
static void
notify_cb(evutil_socket_t fd, short what, void *arg)
{
	struct waiter	*w;
	const char	*err = upo.access_token == NULL ? last_error : NULL;

	while ((w = TAILQ_FIRST(&waiters)) != NULL) {
		TAILQ_REMOVE(&waiters, w, entry);
		nwaiters--;
		w->cb(w->arg, w->error != NULL ? w->error : err);
		free(w->error);
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
void
upo_fail(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof last_error, fmt, ap);
	va_end(ap);
	log_warnx("upstream %s: oauth: %s", sc->name, last_error);
	upo.step = STEP_IDLE;
	urls_free();
	if (upo.login_asked) {
		upo.login_asked = 0;
		login_failed(last_error);
	}
	event_active(notify_ev, EV_TIMEOUT, 0);
	/* A revocation drops the tokens whatever discovery found. */
	if (upo.revoke_asked) {
		upo.revoke_asked = 0;
		revoke_begin();
	}
}

/* No token without a user: the login state, until mcpctl login. */
void
upo_need_login(const char *why)
{
	char	status[256];

	upo.step = STEP_IDLE;
	urls_free();
	upo.login_needed = 1;
	snprintf(last_error, sizeof last_error, "upstream %s needs a login%s%s: "
	    "mcpctl login %s", sc->name, why != NULL ? " " : "",
	    why != NULL ? why : "", sc->name);
	snprintf(status, sizeof status, "login needed: run mcpctl login %s",
	    sc->name);
	log_warnx("upstream %s: oauth: %s", sc->name, status);
	worker_status("login", status);
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
char *
upo_scope_wanted(void)
{
	char	*s = NULL, *u;
	size_t	 i;

	if (sc->oauth != NULL && sc->oauth->scopes != NULL) {
		for (i = 0; sc->oauth->scopes[i] != NULL; i++) {
			u = oauthc_scope_union(s, sc->oauth->scopes[i]);
			free(s);
			s = u;
		}
	} else if (upo.challenge_scope != NULL)
		s = xstrdup(upo.challenge_scope);
	else if (upo.prm_scopes != NULL)
		s = xstrdup(upo.prm_scopes);
	/* A step-up's scopes are asked for as well. */
	u = oauthc_scope_union(s, stepup_scope);
	free(s);
	return (u);
}

/* Drop the tokens (a refused refresh, a revocation). */
void
upo_tokens_drop(void)
{
	upo_set(&upo.access_token, NULL);
	upo_set(&upo.refresh_token, NULL);
	free(upo.scope);
	upo.scope = NULL;
	upo.expires_at = 0;
	evtimer_del(renew_ev);
}

/*
 * Add the client's authentication to a token request's form, or an
 * Authorization header: a public client (none) says its client_id.  0,
 * or -1 with why.
 */
int
upo_client_auth(char **form, char **auth, char *why, size_t len)
{
	struct oauthc_as	 as;
	char			*secret = NULL, err[256];
	unsigned int		 how;

	*auth = NULL;
	memset(&as, 0, sizeof as);
	as.auth_methods = upo.auth_methods;
	if (upo.registered == OAUTHC_REG_CONFIG && sc->oauth != NULL &&
	    sc->oauth->client_secret != NULL) {
		if ((secret = secret_expand(sc->oauth->client_secret, err,
		    sizeof err)) == NULL) {
			snprintf(why, len, "client_secret: %s", err);
			return (-1);
		}
	} else if (upo.registered == OAUTHC_REG_DCR &&
	    upo.client_secret != NULL)
		secret = xstrdup(upo.client_secret);
	how = upo.registered == OAUTHC_REG_DCR && upo.method != 0 ?
	    upo.method : oauthc_auth_method(&as, secret != NULL);
	if (how == 0) {
		upo_wipe(secret);
		snprintf(why, len, "the token endpoint takes neither "
		    "client_secret_basic nor client_secret_post");
		return (-1);
	}
	if (how == OAUTHC_AUTH_BASIC && secret != NULL)
		*auth = hfetch_basic(upo.client_id, secret);
	else {
		hfetch_form_add(form, "client_id", upo.client_id);
		if (how == OAUTHC_AUTH_POST && secret != NULL)
			hfetch_form_add(form, "client_secret", secret);
	}
	upo_wipe(secret);
	return (0);
}

/* Request a token by client credentials (RFC 6749 section 4.4). */
static void
token_cc(void)
{
	char	*form = NULL, *auth, *scope, err[512];

	upo.registered = OAUTHC_REG_CONFIG;
	upo_set(&upo.client_id, sc->oauth->client_id);
	hfetch_form_add(&form, "grant_type", "client_credentials");
	if ((scope = upo_scope_wanted()) != NULL)
		hfetch_form_add(&form, "scope", scope);
	free(scope);
	hfetch_form_add(&form, "resource", upo.resource != NULL ?
	    upo.resource : sc->url);
	if (upo_client_auth(&form, &auth, err, sizeof err) == -1) {
		upo_wipe(form);
		upo_fail("%s", err);
		return;
	}
	upo.grant = GRANT_CC;
	log_debug("upstream %s: oauth: client credentials at %s", sc->name,
	    upo.token_endpoint);
	upo_fetch(STEP_TOKEN, upo.token_endpoint, form,
	    "application/x-www-form-urlencoded", auth);
}

/* Refresh the token (RFC 6749 section 6), the resource named (RFC 8707). */
static void
token_refresh(void)
{
	char	*form = NULL, *auth, err[512];

	hfetch_form_add(&form, "grant_type", "refresh_token");
	hfetch_form_add(&form, "refresh_token", upo.refresh_token);
	hfetch_form_add(&form, "resource", upo.resource != NULL ?
	    upo.resource : sc->url);
	if (upo_client_auth(&form, &auth, err, sizeof err) == -1) {
		upo_wipe(form);
		upo_fail("%s", err);
		return;
	}
	upo.grant = GRANT_REFRESH;
	log_debug("upstream %s: oauth: refreshing at %s", sc->name,
	    upo.token_endpoint);
	upo_fetch(STEP_TOKEN, upo.token_endpoint, form,
	    "application/x-www-form-urlencoded", auth);
}

/* The token endpoint answered. */
void
upo_token_done(struct hfetch *x, CURLcode r)
{
	struct oauthc_token	t;
	char			why[OAUTHC_WHY_MAX], msg[512];
	enum upo_grant		g = upo.grant;

	if (r != CURLE_OK || x->over) {
		hfetch_error(x, r, "token", msg, sizeof msg);
		upo_fail("%s", msg);
		return;
	}
	if (oauthc_token_parse((const char *)evbuffer_pullup(x->body, -1),
	    evbuffer_get_length(x->body), &t, why, sizeof why) == -1) {
		/* The server does not take our client: the operator's to fix. */
		operator_needed = g == GRANT_CC &&
		    (strcmp(t.error, "invalid_client") == 0 ||
		    strcmp(t.error, "unauthorized_client") == 0);
		if (x->status / 100 == 2 || t.error[0] != '\0')
			snprintf(msg, sizeof msg, "token: %s (HTTP %ld)", why,
			    x->status);
		else
			hfetch_error(x, r, "token", msg, sizeof msg);
		oauthc_token_clear(&t);
		if (g == GRANT_REFRESH && x->status / 100 == 4) {
			/* Refused (invalid_grant, revoked): a login now. */
			log_warnx("upstream %s: oauth: the refresh was refused: "
			    "%s", sc->name, msg);
			upo_tokens_drop();
			login_save();
			upo_need_login(NULL);
			return;
		}
		if (g == GRANT_CODE) {
			upo.step = STEP_IDLE;
			login_failed(msg);
			return;
		}
		upo_fail("%s", msg);
		return;
	}
	upo_set(&upo.access_token, t.access_token);
	/* Rotation: a new refresh token replaces the old. */
	if (t.refresh_token != NULL)
		upo_set(&upo.refresh_token, t.refresh_token);
	else if (g == GRANT_CODE)
		upo_set(&upo.refresh_token, NULL);
	if (t.scope != NULL)
		upo_set(&upo.scope, t.scope);
	else if (g != GRANT_REFRESH) {
		free(upo.scope);
		upo.scope = NULL;
	}
	upo.obtained = (long long)time(NULL);
	upo.expires_at = t.expires_in >= 0 ? upo.obtained + t.expires_in : 0;
	generation++;
	last_error[0] = '\0';
	operator_needed = 0;
	upo.step = STEP_IDLE;
	urls_free();
	log_info("upstream %s: oauth: a token from %s (%s, %lld s%s%s)",
	    sc->name, upo.issuer, g == GRANT_CC ? "client credentials" :
	    g == GRANT_REFRESH ? "refreshed" : "login", t.expires_in,
	    t.scope != NULL ? ", scope " : "", t.scope != NULL ? t.scope : "");
	evtimer_del(renew_ev);
	renew_arm(t.expires_in);
	oauthc_token_clear(&t);
	if (g == GRANT_CODE) {
		login_exchanged(upo.scope);
		return;
	}
	if (g == GRANT_REFRESH)
		login_save();
	event_active(notify_ev, EV_TIMEOUT, 0);
}

/* The authorization server is known: do what is asked, or get a token. */
static void
flow_next(void)
{
	urls_free();
	/* A registration is for one issuer (the server moved: not ours). */
	if (upo.registered != OAUTHC_REG_NONE && upo.reg_issuer != NULL &&
	    strcmp(upo.reg_issuer, upo.issuer) != 0) {
		log_warnx("upstream %s: oauth: the authorization server is "
		    "now another; the registration and tokens for the former "
		    "are dropped", sc->name);
		login_forget_registration();
	}
	if (upo.login_asked) {
		upo.login_asked = 0;
		upo.step = STEP_IDLE;
		login_begin();
		return;
	}
	if (upo.revoke_asked) {
		upo.revoke_asked = 0;
		upo.step = STEP_IDLE;
		revoke_begin();
		return;
	}
	if (sc->oauth != NULL && sc->oauth->grant ==
	    UPOAUTH_CLIENT_CREDENTIALS) {
		if (sc->oauth->client_secret == NULL) {
			operator_needed = 1;
			upo_fail("client credentials need a client_secret");
			return;
		}
		token_cc();
		return;
	}
	if (upo.refresh_token != NULL) {
		token_refresh();
		return;
	}
	upo_need_login(NULL);
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
		hfetch_error(x, r, upo.step == STEP_PRM ? "resource metadata" :
		    "server metadata", msg, sizeof msg);
		if (r == CURLE_OK && !x->over && x->status == 200)
			snprintf(msg, sizeof msg, "metadata at %.200s: not a "
			    "JSON object", url);
		flow_note(msg);
		if (++iurl < nurls) {
			flow_step();
			return;
		}
		upo_fail("%s", flow_err);
		return;
	}
	if (upo.step == STEP_PRM) {
		if (oauthc_prm_check(md, sc->url, &as_url, &scopes, why,
		    sizeof why) == -1) {
			/* Not the upstream's: refused, not tried elsewhere. */
			json_decref(md);
			upo_fail("resource metadata at %.200s refused: %s",
			    url, why);
			return;
		}
		upo_set(&upo.issuer, as_url);
		upo_set(&upo.resource, json_string_value(json_object_get(md,
		    "resource")));
		free(upo.prm_scopes);
		upo.prm_scopes = scopes;
		json_decref(md);
		urls_free();
		flow_err[0] = '\0';
		if ((nurls = idp_discovery_urls(upo.issuer, urls, why,
		    sizeof why)) < 0) {
			nurls = 0;
			upo_fail("authorization server: %s", why);
			return;
		}
		upo.step = STEP_AS;
		flow_step();
		return;
	}
	if (oauthc_as_check(md, upo.issuer, &as, why, sizeof why) == -1) {
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
		upo_fail("%s", flow_err);
		return;
	}
	upo_set(&upo.token_endpoint, as.token_endpoint);
	upo_set(&upo.authz_endpoint, as.authorization_endpoint);
	upo_set(&upo.reg_endpoint, as.registration_endpoint);
	upo_set(&upo.revoke_endpoint, as.revocation_endpoint);
	upo.auth_methods = as.auth_methods;
	upo.iss_param = as.iss_param;
	upo.cimd = as.cimd;
	upo.offline = as.offline;
	json_decref(md);
	flow_next();
}

/* Fetch the current discovery URL. */
static void
flow_step(void)
{
	log_debug("upstream %s: oauth: %s %s", sc->name, upo.step == STEP_PRM ?
	    "resource metadata" : "server metadata", urls[iurl]);
	upo_fetch(upo.step, urls[iurl], NULL, NULL, NULL);
}

/* Begin: the resource's metadata, from the challenge or the well-known URLs. */
static void
flow_start(const char *challenge)
{
	struct oauthc_challenge	c;
	char			why[OAUTHC_WHY_MAX];

	urls_free();
	flow_err[0] = '\0';
	memset(&c, 0, sizeof c);
	if (challenge != NULL && oauthc_challenge_parse(challenge,
	    strlen(challenge), &c) == -1)
		log_info("upstream %s: oauth: a malformed WWW-Authenticate, "
		    "ignored", sc->name);
	if (c.scope != NULL)
		upo_set(&upo.challenge_scope, c.scope);
	if (c.resource_metadata != NULL)
		upo_set(&upo.prm_url, c.resource_metadata);
	/* The renewal of a known server's token: no discovery again. */
	if (challenge == NULL && upo.token_endpoint != NULL &&
	    !upo.login_asked && !upo.revoke_asked) {
		oauthc_challenge_clear(&c);
		flow_next();
		return;
	}
	upo.step = STEP_PRM;
	oauthc_challenge_clear(&c);
	/* The 401's document, else the well-known URLs. */
	if (upo.prm_url != NULL) {
		urls[nurls++] = xstrdup(upo.prm_url);
		oauthc_challenge_clear(&c);
		flow_step();
		return;
	}
	oauthc_challenge_clear(&c);
	if ((nurls = oauthc_prm_urls(sc->url, urls, why, sizeof why)) < 0) {
		nurls = 0;
		upo_fail("%s", why);
		return;
	}
	flow_step();
}

/* Discover the server for a LOGIN or REVOKE asked (set in upo). */
void
upo_discover(void)
{
	if (upo.step != STEP_IDLE)
		return;		/* the flow under way comes to it */
	flow_start(NULL);
}

/* curl finished the flow's transfer. */
static void
done_cb(CURL *easy, CURLcode r, void *arg)
{
	struct hfetch	*x = xf;
	enum upo_step	 step = upo.step;

	xf = NULL;
	hfetch_finished(x);
	switch (step) {
	case STEP_TOKEN:
		upo_token_done(x, r);
		break;
	case STEP_REG:
		login_reg_done(x, r);
		break;
	case STEP_REVOKE:
		revoke_done(x, r);
		break;
	default:
		metadata_done(x, r);
		break;
	}
	hfetch_clear(x);
	free(x);
}

/* The token's renewal is due: a new one by the same grant. */
static void
renew_cb(evutil_socket_t fd, short what, void *arg)
{
	if (upo.step != STEP_IDLE)
		return;
	log_debug("upstream %s: oauth: renewing the token", sc->name);
	flow_start(NULL);
}

void
upoauth_init(void)
{
	long long	now = (long long)time(NULL);

	if (cev != NULL)
		return;
	cev = curlev_new(base, done_cb, NULL);
	notify_ev = event_new(base, -1, 0, notify_cb, NULL);
	renew_ev = evtimer_new(base, renew_cb, NULL);
	if (upo.access_token != NULL) {
		generation++;
		if (upo.expires_at > 0 && upo.refresh_token != NULL)
			renew_arm(upo.expires_at > now ? upo.expires_at - now :
			    0);
	}
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
	if (upo.access_token == NULL)
		return (h);
	xasprintf(&line, "Authorization: Bearer %s", upo.access_token);
	h = curl_slist_append(h, line);
	upo_wipe(line);
	*gen = generation;
	return (h);
}

/* Make a request wait for the flow. */
static int
waiter_add(upoauth_cb cb, void *arg, const char *error)
{
	struct waiter	*w;

	if (cev == NULL || nwaiters >= OAUTH_WAITERS_MAX)
		return (-1);
	w = xcalloc(1, sizeof *w);
	w->cb = cb;
	w->arg = arg;
	w->error = error != NULL ? xstrdup(error) : NULL;
	TAILQ_INSERT_TAIL(&waiters, w, entry);
	nwaiters++;
	return (0);
}

int
upoauth_unauthorized(const char *challenge, unsigned int gen, upoauth_cb cb,
    void *arg)
{
	if (waiter_add(cb, arg, NULL) == -1)
		return (-1);
	/* A newer token than the one refused: try it at once. */
	if (upo.access_token != NULL && gen != generation) {
		event_active(notify_ev, EV_TIMEOUT, 0);
		return (0);
	}
	/* In the login state: only a login helps. */
	if (upo.login_needed) {
		event_active(notify_ev, EV_TIMEOUT, 0);
		return (0);
	}
	/* The token was refused (revoked, expired early): drop it. */
	if (upo.access_token != NULL) {
		log_info("upstream %s: oauth: the upstream refused the token; "
		    "getting another", sc->name);
		upo_set(&upo.access_token, NULL);
	}
	if (upo.step == STEP_IDLE) {
		operator_needed = 0;
		flow_start(challenge);
	}
	return (0);
}

int
upoauth_forbidden(const char *challenge, unsigned int gen, upoauth_cb cb,
    void *arg)
{
	struct oauthc_challenge	 c;
	char			*want, msg[512];

	memset(&c, 0, sizeof c);
	if (challenge == NULL || oauthc_challenge_parse(challenge,
	    strlen(challenge), &c) != 1 || c.error == NULL ||
	    strcmp(c.error, "insufficient_scope") != 0 || c.scope == NULL) {
		oauthc_challenge_clear(&c);
		return (-1);
	}
	want = oauthc_scope_union(upo.scope != NULL ? upo.scope :
	    stepup_scope, c.scope);
	oauthc_challenge_clear(&c);
	if (want == NULL)
		return (-1);
	/* Granted already: a new token or login would not help. */
	if (upo.scope != NULL && strcmp(want, upo.scope) == 0) {
		free(want);
		return (-1);
	}
	if (stepup_scope == NULL || strcmp(stepup_scope, want) != 0) {
		free(stepup_scope);
		stepup_scope = xstrdup(want);
		nstepups = 0;
	}
	/* A login is the user's: the next asks for the union. */
	if (sc->oauth == NULL || sc->oauth->grant !=
	    UPOAUTH_CLIENT_CREDENTIALS) {
		upo_set(&upo.want_scope, want);
		snprintf(msg, sizeof msg, "upstream %s needs a login with "
		    "scope %.300s: mcpctl login %s", sc->name, want, sc->name);
		log_warnx("upstream %s: oauth: the upstream wants scope "
		    "%.300s", sc->name, want);
		free(want);
		if (waiter_add(cb, arg, msg) == -1)
			return (-1);
		event_active(notify_ev, EV_TIMEOUT, 0);
		return (0);
	}
	free(want);
	if (nstepups >= OAUTH_STEPUPS_MAX || upo.token_endpoint == NULL)
		return (-1);
	nstepups++;
	if (waiter_add(cb, arg, NULL) == -1)
		return (-1);
	if (gen == generation)
		upo_set(&upo.access_token, NULL);
	if (upo.access_token != NULL)
		event_active(notify_ev, EV_TIMEOUT, 0);
	else if (upo.step == STEP_IDLE)
		flow_next();
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

const char *
upoauth_login_needed(void)
{
	return (upo.login_needed ? last_error : NULL);
}
