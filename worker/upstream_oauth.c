/* SPDX-License-Identifier: ISC */
/*
 * The gateway as an OAuth 2.1 client of its remote upstream (issue 23),
 * for the gateway-wide identity or, with oauth.identity "per-user", for
 * each principal's (upstream_users.c; one flow at a time, for upo.id,
 * the others queued).  A 401 starts the flow: discovery
 * (upoauth_discovery.c), the protected resource metadata (the
 * challenge's resource_metadata, else the well-known URLs, RFC 9728),
 * whose resource must be the upstream's URL; the authorization server's
 * metadata (RFC 8414 and OpenID, the three URLs of idp_discovery_urls),
 * whose issuer must be the one named and whose token endpoint must be on
 * the issuer's host; then a token: by client credentials (a machine
 * identity), or by the refresh token of a login (upstream_login.c).
 * Without either, the worker is in the login state: it says so and waits
 * for mcpctl login.  The token is renewed before it expires and after a
 * 401 to a request that carried it; a 403 insufficient_scope asks for the
 * union of the scopes (client credentials) or for a login with it.
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
#include "secret.h"
#include "upoauth.h"
#include "worker.h"
#include "xmalloc.h"

#define OAUTH_WAITERS_MAX	1024	/* requests waiting for a token */
#define OAUTH_RENEW_BEFORE	60	/* seconds before expiry */
#define OAUTH_RENEW_MIN		5	/* seconds, at the least */
#define OAUTH_STEPUPS_MAX	2	/* new tokens for one scope set */
#define REFRESH_HOLD_S		5	/* seconds between refreshes the
					   server did not answer */

/* A request waiting for a token. */
struct waiter {
	upoauth_cb		 cb;
	void			*arg;
	struct upo_id		*id;		/* whose token */
	uint32_t		 session;	/* its client's, or 0 */
	char			*error;		/* its own answer, or NULL */
	TAILQ_ENTRY(waiter)	 entry;
};

struct upo			 upo;
static struct upo_id		 gw = { .name = "gateway", .refs = 1 };
static struct curlev		*cev;
static struct hfetch		*xf;		/* the transfer under way */
static TAILQ_HEAD(, waiter)	 waiters = TAILQ_HEAD_INITIALIZER(waiters);
static unsigned int		 nwaiters;
static struct event		*notify_ev;	/* answers the waiters */

static unsigned int	 generations;	/* the last token's */
static int		 operator_needed;	/* it failed for want of one */
static int		 lost_for_operator;	/* the connection ended so */
static char		*stepup_scope;	/* the scope set stepped up to */
static int		 nstepups;	/* for it */

static void	renew_cb(evutil_socket_t, short, void *);

/* Are the upstream's identities its users' (oauth.identity per-user)? */
int
upo_per_user(void)
{
	return (sc->oauth != NULL && sc->oauth->identity == UPOAUTH_PER_USER);
}

/* The gateway's identity (the only one unless per-user). */
struct upo_id *
upo_gateway(void)
{
	return (&gw);
}

/* Answer the waiters that may be answered, from the loop. */
void
upo_notify(void)
{
	event_active(notify_ev, EV_TIMEOUT, 0);
}

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

/* Does an identity's flow go on (its waiters wait)? */
static int
id_busy(const struct upo_id *id)
{
	return ((upo.step != STEP_IDLE && upo.id == id) ||
	    id->queued != QUEUED_NONE || (id->pending &&
	    id->elicit_session != 0));
}

/* The next identity waiting for the flow: its turn, now it is free. */
static void
flow_next_queued(void)
{
	struct waiter	*w;
	struct upo_id	*id = NULL;
	enum upo_queued	 q;
	char		*arg;

	if (upo.step != STEP_IDLE || upo.login_asked || upo.revoke_asked)
		return;
	if (gw.queued != QUEUED_NONE)
		id = &gw;
	TAILQ_FOREACH(w, &waiters, entry) {
		if (id == NULL && w->id->queued != QUEUED_NONE)
			id = w->id;
	}
	if (id == NULL && (id = users_queued()) == NULL)
		return;
	q = id->queued;
	arg = id->queued_arg;
	id->queued = QUEUED_NONE;
	id->queued_arg = NULL;
	upo.id = id;
	switch (q) {
	case QUEUED_CODE:
		login_code_run(id, arg);
		break;
	case QUEUED_REVOKE:
		revoke_begin();
		break;
	default:
		operator_needed = 0;
		upo_flow_start(arg);
		break;
	}
	upo_wipe(arg);
}

/* Answer every waiter whose identity's flow is over, from the loop. */
static void
notify_cb(evutil_socket_t fd, short what, void *arg)
{
	struct waiter	*w, *next;
	const char	*err;

	for (w = TAILQ_FIRST(&waiters); w != NULL; w = next) {
		next = TAILQ_NEXT(w, entry);
		if (id_busy(w->id))
			continue;
		TAILQ_REMOVE(&waiters, w, entry);
		nwaiters--;
		err = w->id->access_token == NULL ? w->id->last_error : NULL;
		if (err != NULL && err[0] == '\0')
			err = "no token";
		w->cb(w->arg, w->error != NULL ? w->error : err);
		free(w->error);
		free(w);
	}
	flow_next_queued();
	users_sweep();
}

/* The flow failed: every waiter gets why; the next 401 starts again. */
void
upo_fail(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(upo.id->last_error, sizeof upo.id->last_error, fmt, ap);
	va_end(ap);
	log_warnx("upstream %s: oauth: %s", sc->name, upo.id->last_error);
	upo.step = STEP_IDLE;
	upo_urls_free();
	if (upo.login_asked || (upo_per_user() && upo.id->pending)) {
		upo.login_asked = 0;
		login_failed(upo.id->last_error);
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
	upo_urls_free();
	/* A user's: that user logs in, from their client. */
	if (upo.id != &gw) {
		users_login_start(upo.id);
		return;
	}
	gw.login_needed = 1;
	snprintf(gw.last_error, sizeof gw.last_error, "upstream %s needs a "
	    "login%s%s: mcpctl login %s", sc->name, why != NULL ? " " : "",
	    why != NULL ? why : "", sc->name);
	snprintf(status, sizeof status, "login needed: run mcpctl login %s",
	    sc->name);
	log_warnx("upstream %s: oauth: %s", sc->name, status);
	worker_status("login", status);
	event_active(notify_ev, EV_TIMEOUT, 0);
}

/* Arm the renewal of an identity's token that expires in secs (-1: not
 * said). */
static void
renew_arm(struct upo_id *id, long long secs)
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
	if (id->renew_ev == NULL)
		id->renew_ev = evtimer_new(base, renew_cb, id);
	evtimer_add(id->renew_ev, &tv);
	log_debug("upstream %s: oauth: token%s%s renewed in %lld s",
	    sc->name, id != &gw ? " of " : "", id != &gw ? id->name : "",
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

/* Drop an identity's tokens (a refused refresh, a revocation). */
void
upo_id_tokens_drop(struct upo_id *id)
{
	upo_set(&id->access_token, NULL);
	upo_set(&id->refresh_token, NULL);
	free(id->scope);
	id->scope = NULL;
	id->expires_at = 0;
	if (id->renew_ev != NULL)
		evtimer_del(id->renew_ev);
}

/* Drop the flow's identity's tokens. */
void
upo_tokens_drop(void)
{
	upo_id_tokens_drop(upo.id);
}

/* Request a token by client credentials (RFC 6749 section 4.4). */
static void
token_cc(void)
{
	char	*form = NULL, *scope, err[512];

	upo.registered = OAUTHC_REG_CONFIG;
	upo_set(&upo.client_id, sc->oauth->client_id);
	hfetch_form_add(&form, "grant_type", "client_credentials");
	if ((scope = upo_scope_wanted()) != NULL)
		hfetch_form_add(&form, "scope", scope);
	free(scope);
	if (upo_token_request(form, GRANT_CC, "client credentials", err,
	    sizeof err) == -1)
		upo_fail("%s", err);
}

/* Refresh the token (RFC 6749 section 6), the resource named (RFC 8707). */
static void
token_refresh(void)
{
	char	*form = NULL, err[512];

	hfetch_form_add(&form, "grant_type", "refresh_token");
	hfetch_form_add(&form, "refresh_token", upo.id->refresh_token);
	if (upo_token_request(form, GRANT_REFRESH, "refreshing", err,
	    sizeof err) == -1)
		upo_fail("%s", err);
}

/*
 * A revocation asked for while a token request was under way: it drops
 * what that request brought (mcpctl was told the tokens are forgotten).
 */
static int
revoke_due(void)
{
	if (!upo.revoke_asked)
		return (0);
	upo.revoke_asked = 0;
	revoke_begin();
	return (1);
}

/* The token endpoint answered. */
void
upo_token_done(struct hfetch *x, CURLcode r)
{
	struct oauthc_token	t;
	char			why[OAUTHC_WHY_MAX], msg[512];
	enum upo_grant		g = upo.grant;
	int			refused, dcr_gone;
	struct upo_id		*id = upo.id;

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
		/* The grant refused (RFC 6749, section 5.2: an error of 400,
		 * or 401 for the client), not a 429, 404 or 5xx: those keep
		 * the refresh token for the next try. */
		refused = (x->status == 400 || x->status == 401) &&
		    t.error[0] != '\0';
		/* A registration of ours the server forgot, or whose secret
		 * expired: made again at the next login. */
		dcr_gone = refused && upo.registered == OAUTHC_REG_DCR &&
		    strcmp(t.error, "invalid_client") == 0;
		if (x->status / 100 == 2 || t.error[0] != '\0')
			snprintf(msg, sizeof msg, "token: %s (HTTP %ld)", why,
			    x->status);
		else
			hfetch_error(x, r, "token", msg, sizeof msg);
		oauthc_token_clear(&t);
		if (dcr_gone) {
			log_warnx("upstream %s: oauth: %s: the client registered "
			    "at the authorization server is no longer taken; it "
			    "is registered again at the next login", sc->name,
			    msg);
			login_forget_registration();
		}
		if (g == GRANT_REFRESH && refused) {
			/* Refused (invalid_grant, revoked): a login now. */
			log_warnx("upstream %s: oauth: the refresh%s%s was "
			    "refused: %s", sc->name, id != &gw ? " of " : "",
			    id != &gw ? id->name : "", msg);
			upo_tokens_drop();
			login_save();
			if (!revoke_due())
				upo_need_login(NULL);
			return;
		}
		if (g == GRANT_CODE) {
			upo.step = STEP_IDLE;
			login_failed(msg);
			(void)revoke_due();
			return;
		}
		/* Not refused (429, 5xx): not asked again at every 401. */
		if (g == GRANT_REFRESH)
			id->refresh_hold = (long long)time(NULL) +
			    REFRESH_HOLD_S;
		upo_fail("%s", msg);
		return;
	}
	upo_set(&id->access_token, t.access_token);
	/* Rotation: a new refresh token replaces the old. */
	if (t.refresh_token != NULL)
		upo_set(&id->refresh_token, t.refresh_token);
	else if (g == GRANT_CODE)
		upo_set(&id->refresh_token, NULL);
	if (t.scope != NULL)
		upo_set(&id->scope, t.scope);
	else if (g != GRANT_REFRESH) {
		free(id->scope);
		id->scope = NULL;
	}
	id->obtained = (long long)time(NULL);
	id->expires_at = t.expires_in >= 0 ? id->obtained + t.expires_in : 0;
	/* Generations never repeat across identities: a request knows its
	 * token was replaced by comparing one number. */
	id->generation = ++generations;
	id->refresh_hold = 0;
	id->last_error[0] = '\0';
	operator_needed = 0;
	upo.step = STEP_IDLE;
	upo_urls_free();
	log_info("upstream %s: oauth: a token from %s%s%s (%s, %lld s%s%s)",
	    sc->name, upo.issuer, id != &gw ? " for " : "", id != &gw ?
	    id->name : "", g == GRANT_CC ?
	    "client credentials" : g == GRANT_REFRESH ? "refreshed" : "login",
	    t.expires_in, t.scope != NULL ? ", scope " : "", t.scope != NULL ?
	    t.scope : "");
	if (id->renew_ev != NULL)
		evtimer_del(id->renew_ev);
	renew_arm(id, t.expires_in);
	oauthc_token_clear(&t);
	/* Revoked meanwhile: what came is revoked too, never stored. */
	if (upo.revoke_asked) {
		if (g == GRANT_CODE)
			login_failed("the tokens were revoked (mcpctl tokens "
			    "revoke) during the exchange");
		(void)revoke_due();
		return;
	}
	if (g == GRANT_CODE) {
		login_exchanged(id->scope);
		return;
	}
	if (g == GRANT_REFRESH)
		login_save();
	event_active(notify_ev, EV_TIMEOUT, 0);
}

/* The authorization server is known: do what is asked, or get a token. */
void
upo_flow_next(void)
{
	upo_urls_free();
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
	if (upo.id->refresh_token != NULL &&
	    upo.id->refresh_hold > (long long)time(NULL)) {
		upo_fail("the last refresh was not answered; the next in %lld "
		    "s", upo.id->refresh_hold - (long long)time(NULL));
		return;
	}
	if (upo.id->refresh_token != NULL && upo.client_id == NULL) {
		/* Issued to a registration the server forgot (another
		 * user's refresh found out): this user logs in again. */
		log_info("upstream %s: oauth: the tokens of %s were issued "
		    "to a client no longer registered: a login is needed",
		    sc->name, upo.id->name);
		upo_tokens_drop();
		login_save();
		upo_need_login(NULL);
		return;
	}
	if (upo.id->refresh_token != NULL) {
		token_refresh();
		return;
	}
	upo_need_login(NULL);
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
		upo_metadata_done(x, r);
		break;
	}
	hfetch_clear(x);
	free(x);
}

/* An identity's token's renewal is due: a new one by the same grant. */
static void
renew_cb(evutil_socket_t fd, short what, void *arg)
{
	struct upo_id	*id = arg;

	if (upo.step != STEP_IDLE) {
		if (id->queued == QUEUED_NONE)
			id->queued = QUEUED_FLOW;
		return;
	}
	log_debug("upstream %s: oauth: renewing the token%s%s", sc->name,
	    id != &gw ? " of " : "", id != &gw ? id->name : "");
	upo.id = id;
	upo_flow_start(NULL);
}

void
upoauth_init(void)
{
	long long	now = (long long)time(NULL);

	if (cev != NULL)
		return;
	cev = curlev_new(base, done_cb, NULL);
	notify_ev = event_new(base, -1, 0, notify_cb, NULL);
	upo.id = &gw;
	upo_id_start(&gw, now);
}

/* An identity's tokens are in (from a record): renew them in time. */
void
upo_id_start(struct upo_id *id, long long now)
{
	if (id->access_token == NULL)
		return;
	id->generation = ++generations;
	if (id->expires_at > 0 && id->refresh_token != NULL)
		renew_arm(id, id->expires_at > now ? id->expires_at - now : 0);
}

/* Forget an identity's state (its last session closed). */
void
upo_id_free(struct upo_id *id)
{
	struct waiter	*w, *next;

	for (w = TAILQ_FIRST(&waiters); w != NULL; w = next) {
		next = TAILQ_NEXT(w, entry);
		if (w->id == id) {
			TAILQ_REMOVE(&waiters, w, entry);
			nwaiters--;
			free(w->error);
			free(w);
		}
	}
	if (upo.id == id)
		upo.id = &gw;	/* its flow's answer goes nowhere */
	upo_id_tokens_drop(id);
	if (id->renew_ev != NULL)
		event_free(id->renew_ev);
	upo_wipe(id->queued_arg);
}

/* Make a request wait for an identity's flow. */
static int
waiter_add(struct upo_id *id, uint32_t session, upoauth_cb cb, void *arg,
    const char *error)
{
	struct waiter	*w;

	if (cev == NULL || nwaiters >= OAUTH_WAITERS_MAX)
		return (-1);
	w = xcalloc(1, sizeof *w);
	w->cb = cb;
	w->arg = arg;
	w->id = id;
	w->session = session;
	w->error = error != NULL ? xstrdup(error) : NULL;
	TAILQ_INSERT_TAIL(&waiters, w, entry);
	nwaiters++;
	return (0);
}

/* The first session waiting for an identity's token that may be asked. */
uint32_t
upo_id_waiting_session(const struct upo_id *id, int (*may)(uint32_t))
{
	struct waiter	*w;

	TAILQ_FOREACH(w, &waiters, entry) {
		if (w->id == id && w->session != 0 && may(w->session))
			return (w->session);
	}
	return (0);
}

int
upoauth_unauthorized_conn(struct conn *c, const char *challenge,
    unsigned int gen, upoauth_cb cb, void *arg)
{
	struct upo_id	*id = upo_conn_id(c);
	uint32_t	 session = c != NULL ? c->session : 0;
	char		 msg[256];

	/* A per-user upstream's call of nobody in particular. */
	if (id == NULL) {
		snprintf(msg, sizeof msg, "upstream %s has per-user "
		    "identities: its calls need an authenticated client",
		    sc->name);
		if (waiter_add(&gw, session, cb, arg, msg) == -1)
			return (-1);
		event_active(notify_ev, EV_TIMEOUT, 0);
		return (0);
	}
	if (waiter_add(id, session, cb, arg, NULL) == -1)
		return (-1);
	/* A newer token than the one refused: try it at once. */
	if (id->access_token != NULL && gen != id->generation) {
		event_active(notify_ev, EV_TIMEOUT, 0);
		return (0);
	}
	/* In the login state: only a login helps. */
	if (id->login_needed || (id->pending && id->access_token == NULL)) {
		users_login_asked(id, session);
		event_active(notify_ev, EV_TIMEOUT, 0);
		return (0);
	}
	/* The token was refused (revoked, expired early): drop it. */
	if (id->access_token != NULL) {
		log_info("upstream %s: oauth: the upstream refused the token"
		    "%s%s; getting another", sc->name, id != &gw ? " of " : "",
		    id != &gw ? id->name : "");
		upo_set(&id->access_token, NULL);
	}
	if (upo.step == STEP_IDLE && !upo.login_asked && !upo.revoke_asked) {
		operator_needed = 0;
		upo.id = id;
		upo_flow_start(challenge);
	} else if (upo.id != id || upo.step == STEP_IDLE) {
		if (id->queued == QUEUED_NONE) {
			id->queued = QUEUED_FLOW;
			upo_set(&id->queued_arg, challenge);
		}
	}
	return (0);
}

int
upoauth_unauthorized(const char *challenge, unsigned int gen, upoauth_cb cb,
    void *arg)
{
	return (upoauth_unauthorized_conn(NULL, challenge, gen, cb, arg));
}

int
upoauth_forbidden(const char *challenge, unsigned int gen, upoauth_cb cb,
    void *arg)
{
	return (upoauth_forbidden_conn(NULL, challenge, gen, cb, arg));
}

int
upoauth_forbidden_conn(struct conn *c, const char *challenge,
    unsigned int gen, upoauth_cb cb, void *arg)
{
	struct upo_id	*id = upo_conn_id(c);
	uint32_t	 session = c != NULL ? c->session : 0;
	struct oauthc_challenge	 ch;
	char			*want, msg[512];

	if (id == NULL)
		return (-1);
	memset(&ch, 0, sizeof ch);
	if (challenge == NULL || oauthc_challenge_parse(challenge,
	    strlen(challenge), &ch) != 1 || ch.error == NULL ||
	    strcmp(ch.error, "insufficient_scope") != 0 || ch.scope == NULL) {
		oauthc_challenge_clear(&ch);
		return (-1);
	}
	want = oauthc_scope_union(id->scope != NULL ? id->scope :
	    stepup_scope, ch.scope);
	oauthc_challenge_clear(&ch);
	if (want == NULL)
		return (-1);
	/* Granted already: a new token or login would not help. */
	if (id->scope != NULL && strcmp(want, id->scope) == 0) {
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
		if (id != &gw)
			snprintf(msg, sizeof msg, "upstream %s needs a login "
			    "with scope %.300s: call again to log in",
			    sc->name, want);
		else
			snprintf(msg, sizeof msg, "upstream %s needs a login "
			    "with scope %.300s: mcpctl login %s", sc->name,
			    want, sc->name);
		log_warnx("upstream %s: oauth: the upstream wants scope "
		    "%.300s", sc->name, want);
		free(want);
		/* A user's next call logs in again, with it. */
		if (id != &gw)
			upo_id_tokens_drop(id);
		if (waiter_add(id, session, cb, arg, msg) == -1)
			return (-1);
		event_active(notify_ev, EV_TIMEOUT, 0);
		return (0);
	}
	free(want);
	if (nstepups >= OAUTH_STEPUPS_MAX || upo.token_endpoint == NULL)
		return (-1);
	nstepups++;
	if (waiter_add(id, session, cb, arg, NULL) == -1)
		return (-1);
	if (gen == id->generation)
		upo_set(&id->access_token, NULL);
	if (id->access_token != NULL)
		event_active(notify_ev, EV_TIMEOUT, 0);
	else if (upo.step == STEP_IDLE) {
		upo.id = id;
		upo_flow_next();
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
			free(w->error);
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
	return (gw.last_error[0] != '\0' ? gw.last_error : NULL);
}

const char *
upoauth_login_needed(void)
{
	return (gw.login_needed ? gw.last_error : NULL);
}
