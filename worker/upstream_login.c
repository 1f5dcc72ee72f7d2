/* SPDX-License-Identifier: ISC */
/*
 * The gateway's login at its upstream's authorization server (issue 23):
 * authorization code with PKCE (S256) for the gateway-wide identity.
 * mcpctl login sends MSG_OAUTH_LOGIN: the server is discovered afresh,
 * the gateway is its client by the configured client_id, else by its
 * Client ID Metadata Document (when configured and the server supports
 * them), else by dynamic registration (RFC 7591); the authorization URL
 * goes back (MSG_OAUTH_PROGRESS).  What came back to the redirect URI
 * (MSG_OAUTH_CODE) is checked (state in constant time, iss per RFC 9207)
 * and the code exchanged; the record is saved (MSG_OAUTH_SAVE) and the
 * worker exits WORKER_EXIT_LOGIN to be started again with it.  A pending
 * login expires after LOGIN_PENDING_MAX; a new LOGIN replaces it.
 * MSG_OAUTH_REVOKE revokes the refresh (else access) token at the
 * server (RFC 7009, best effort), drops the tokens, keeps a registration.
 *
 * The record (a registration, the tokens) arrives in CONFIG; the
 * supervisor seals it.  Neither tokens, secrets, the code nor the
 * verifier are ever logged or put in a message.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <jansson.h>

#include "frame.h"
#include "http_fetch.h"
#include "log.h"
#include "oauthc.h"
#include "redact.h"
#include "secret.h"
#include "upoauth.h"
#include "worker.h"
#include "xmalloc.h"

#define LOGIN_PENDING_MAX	600	/* seconds a login may take */

static unsigned int	 dcr_asked;		/* the method asked for */
static struct event	*exit_ev;

/* Tell the supervisor how an identity's login goes. */
static void
progress(struct upo_id *id, json_t *o)
{
	if (id != upo_gateway())
		json_object_set_new(o, "identity", json_string(id->name));
	chan_send_json(MSG_OAUTH_PROGRESS, 0, 0, o);
}

void
login_pending_clear(struct upo_id *id)
{
	id->pending = 0;
	id->elicitation[0] = '\0';
	id->elicit_session = 0;
	explicit_bzero(id->state, sizeof id->state);
	explicit_bzero(id->verifier, sizeof id->verifier);
	secret_free(id->url);
	id->url = NULL;
	if (id->expire_ev != NULL)
		evtimer_del(id->expire_ev);
}

/* An identity's login failed. */
void
login_failed_for(struct upo_id *id, const char *why)
{
	log_warnx("upstream %s: oauth: the login%s%s failed: %s", sc->name,
	    id != upo_gateway() ? " of " : "", id != upo_gateway() ?
	    id->name : "", why);
	if (id != upo_gateway()) {
		/* Its calls fail saying why (which names the upstream). */
		if (strstr(why, sc->name) != NULL)
			snprintf(id->last_error, sizeof id->last_error, "%s",
			    why);
		else
			snprintf(id->last_error, sizeof id->last_error, "the "
			    "login to upstream %s failed: %s", sc->name, why);
		users_login_over(id, why);
		upo_notify();
	}
	login_pending_clear(id);
	progress(id, json_pack("{s:s, s:s}", "phase", "failed", "error", why));
}

void
login_failed(const char *why)
{
	login_failed_for(upo.id, why);
}

static void
expire_cb(evutil_socket_t fd, short what, void *arg)
{
	struct upo_id	*id = arg;
	char		 why[128];

	snprintf(why, sizeof why, "the login to upstream %s expired",
	    sc->name);
	if (id->pending)
		login_failed_for(id, why);
}

static void
exit_cb(evutil_socket_t fd, short what, void *arg)
{
	worker_begin_exit(WORKER_EXIT_LOGIN);
}

/* The record of an identity's (the registration, its tokens), or null if
 * there is no registration. */
static json_t *
record_json(struct upo_id *id)
{
	struct oauthc_record	r;

	if (upo.registered == OAUTHC_REG_NONE || upo.client_id == NULL)
		return (json_null());
	memset(&r, 0, sizeof r);
	r.resource = sc->url;
	r.issuer = upo.reg_issuer != NULL ? upo.reg_issuer : upo.issuer;
	if (r.issuer == NULL)
		return (json_null());
	r.client_id = upo.client_id;
	r.client_secret = upo.registered == OAUTHC_REG_DCR ?
	    upo.client_secret : NULL;
	r.secret_expires = upo.registered == OAUTHC_REG_DCR ?
	    upo.secret_expires : 0;
	r.registered = upo.registered;
	r.access_token = id->access_token;
	r.refresh_token = id->refresh_token;
	r.expires_at = id->expires_at;
	r.scope = id->scope;
	r.obtained = id->obtained;
	return (oauthc_record_json(&r));
}

/* Save an identity's record (a user's: without it, nothing of theirs). */
void
login_save_id(struct upo_id *id)
{
	json_t	*o, *r = record_json(id);

	if (id != upo_gateway() && id->access_token == NULL &&
	    id->refresh_token == NULL) {
		json_decref(r);
		r = json_null();
	}
	o = json_pack("{s:o}", "record", r);
	if (id != upo_gateway())
		json_object_set_new(o, "identity", json_string(id->name));
	chan_send_secret(MSG_OAUTH_SAVE, 0, 0, o);
}

/* Save the flow's identity's record; a registration is the gateway's. */
void
login_save(void)
{
	login_save_id(upo.id);
}

void
login_forget_registration(void)
{
	if (upo.registered == OAUTHC_REG_DCR)
		upo_set(&upo.forgotten, upo.client_id);
	if (upo.registered != OAUTHC_REG_CONFIG) {
		upo_set(&upo.client_id, NULL);
		upo_set(&upo.client_secret, NULL);
		upo.registered = OAUTHC_REG_NONE;
		upo.method = 0;
		upo.secret_expires = 0;
	}
	upo_set(&upo.reg_issuer, NULL);
	upo_tokens_drop();
	login_save();
	if (upo.id != upo_gateway())
		login_save_id(upo_gateway());
}

/* Take the tokens of a record read. */
static void
login_take_tokens(struct upo_id *id, const struct oauthc_record *r)
{
	upo_set(&id->access_token, r->access_token);
	upo_set(&id->refresh_token, r->refresh_token);
	upo_set(&id->scope, r->scope);
	id->expires_at = r->expires_at;
	id->obtained = r->obtained;
}

/* A string of an object, 1 to max bytes, or NULL. */
static const char *
str(json_t *o, const char *key, size_t max)
{
	json_t	*v = json_object_get(o, key);

	if (!json_is_string(v) || json_string_length(v) == 0 ||
	    json_string_length(v) > max)
		return (NULL);
	return (json_string_value(v));
}

void
login_config(json_t *record, json_t *client)
{
	struct oauthc_record	 r;
	const char		*cid;
	char			 why[OAUTHC_WHY_MAX];

	upo_set(&upo.redirect_uri, str(client, "redirect_uri",
	    OAUTHC_PARAM_MAX));
	upo_set(&upo.client_name, str(client, "client_name",
	    OAUTHC_PARAM_MAX));
	upo_set(&upo.metadata_url, str(client, "client_metadata_url",
	    OAUTHC_PARAM_MAX));
	if (record == NULL || json_is_null(record))
		return;
	cid = sc->oauth != NULL ? sc->oauth->client_id : NULL;
	if (oauthc_record_read(record, sc->url, cid, &r, why,
	    sizeof why) == -1) {
		log_info("upstream %s: oauth: the stored record is "
		    "discarded: %s", sc->name, why);
		chan_send_json(MSG_OAUTH_SAVE, 0, 0, json_pack("{s:n}",
		    "record"));
		return;
	}
	/* Client credentials are got again, not kept. */
	if (r.client_credentials || (sc->oauth != NULL && sc->oauth->grant ==
	    UPOAUTH_CLIENT_CREDENTIALS))
		return;
	upo_set(&upo.reg_issuer, r.issuer);
	upo_set(&upo.client_id, r.client_id);
	upo_set(&upo.client_secret, r.client_secret);
	upo.registered = r.registered;
	upo.secret_expires = r.registered == OAUTHC_REG_DCR ?
	    r.secret_expires : 0;
	/* Per-user: the gateway's record is the registration alone. */
	if (upo_per_user())
		return;
	login_take_tokens(upo_gateway(), &r);
	log_debug("upstream %s: oauth: a stored identity at %s%s", sc->name,
	    r.issuer, r.access_token != NULL ? ", with a token" : "");
}

/*
 * A user's record (SESSION_OPEN's): its tokens, if it is of this upstream
 * and of the registration we have (or, with none, it becomes ours).  0,
 * or -1 if it is discarded.
 */
int
login_record_tokens(struct upo_id *id, json_t *record)
{
	struct oauthc_record	 r;
	char			 why[OAUTHC_WHY_MAX];

	if (oauthc_record_read(record, sc->url, sc->oauth != NULL ?
	    sc->oauth->client_id : NULL, &r, why, sizeof why) == -1 ||
	    (upo.client_id != NULL && strcmp(upo.client_id, r.client_id) != 0)) {
		log_info("upstream %s: oauth: the stored record of %s is "
		    "discarded: %s", sc->name, id->name, upo.client_id !=
		    NULL ? "another registration's" : why);
		return (-1);
	}
	if (upo.forgotten != NULL && strcmp(upo.forgotten, r.client_id) == 0) {
		log_info("upstream %s: oauth: the stored record of %s is "
		    "discarded: its client is no longer taken by the "
		    "authorization server", sc->name, id->name);
		return (-1);
	}
	if (upo.registered == OAUTHC_REG_NONE) {
		upo_set(&upo.reg_issuer, r.issuer);
		upo_set(&upo.client_id, r.client_id);
		upo_set(&upo.client_secret, r.client_secret);
		upo.registered = r.registered;
		upo.secret_expires = r.registered == OAUTHC_REG_DCR ?
		    r.secret_expires : 0;
	}
	login_take_tokens(id, &r);
	return (0);
}

/* The authorization URL of a new login, to the supervisor. */
static void
login_url(void)
{
	char	 challenge[OAUTHC_B64_32], *wanted, *u, *scope, *url;
	char	 connect[OAUTHC_B64_32];
	struct timeval tv = { LOGIN_PENDING_MAX, 0 };
	struct upo_id *id = upo.id;

	oauthc_random(id->state);
	oauthc_random(id->verifier);
	if (oauthc_pkce_challenge(id->verifier, challenge) == -1)
		fatalx("a PKCE verifier of our own is refused");
	/* What is wanted, what was granted, what a step-up asked for. */
	wanted = upo_scope_wanted();
	u = oauthc_scope_union(wanted, id->scope);
	free(wanted);
	wanted = oauthc_scope_union(u, upo.want_scope);
	free(u);
	scope = oauthc_scope_login(wanted, upo.offline);
	free(wanted);
	url = oauthc_authz_url(upo.authz_endpoint, upo.client_id,
	    upo.redirect_uri, scope, id->state, challenge, upo.resource !=
	    NULL ? upo.resource : sc->url);
	if (url == NULL) {
		free(scope);
		login_failed("the authorization_endpoint is not a URL");
		return;
	}
	id->pending = 1;
	if (id->expire_ev == NULL)
		id->expire_ev = evtimer_new(base, expire_cb, id);
	evtimer_add(id->expire_ev, &tv);
	log_info("upstream %s: oauth: a login%s%s at %s (client %s, %s%s)",
	    sc->name, id != upo_gateway() ? " of " : "", id != upo_gateway() ?
	    id->name : "", upo.issuer, upo.registered ==
	    OAUTHC_REG_CIMD ? "by its metadata document" : upo.registered ==
	    OAUTHC_REG_DCR ? "registered" : "configured", scope != NULL ?
	    "scope " : "no scope", scope != NULL ? scope : "");
	free(scope);
	free(id->url);
	if (id == upo_gateway()) {
		progress(id, json_pack("{s:s, s:s, s:s}", "phase", "url",
		    "url", url, "state", id->state));
		id->url = url;
		return;
	}
	/*
	 * A user's: the URL they are shown is the gateway's page that makes
	 * sure whoever opens it is that user, then sends them on to this
	 * one (the supervisor's; a link passed to someone else logs no one
	 * in as them).  Ask them, from the loop.
	 */
	oauthc_random(connect);
	progress(id, json_pack("{s:s, s:s, s:s, s:s}", "phase", "url", "url",
	    url, "state", id->state, "connect", connect));
	explicit_bzero(url, strlen(url));
	free(url);
	xasprintf(&id->url, "%s%clogin=%s", upo.redirect_uri,
	    strchr(upo.redirect_uri, '?') != NULL ? '&' : '?', connect);
	explicit_bzero(connect, sizeof connect);
	users_login_url(id);
}

/* Register by RFC 7591. */
static void
login_register(void)
{
	struct oauthc_as	 as;
	json_t			*req;
	char			*body;

	memset(&as, 0, sizeof as);
	as.auth_methods = upo.auth_methods;
	dcr_asked = oauthc_dcr_method(&as);
	req = oauthc_dcr_request(upo.client_name != NULL ? upo.client_name :
	    "mcp-supervisor", upo.redirect_uri, dcr_asked);
	if ((body = json_dumps(req, JSON_COMPACT)) == NULL)
		fatalx("json_dumps");
	json_decref(req);
	log_debug("upstream %s: oauth: registering at %s", sc->name,
	    upo.reg_endpoint);
	upo_fetch(STEP_REG, upo.reg_endpoint, body, "application/json", NULL);
}

void
login_reg_done(struct hfetch *x, CURLcode r)
{
	struct oauthc_reg	reg;
	char			why[OAUTHC_WHY_MAX], msg[512];

	upo.step = STEP_IDLE;
	if (r != CURLE_OK || x->over || x->status / 100 != 2) {
		hfetch_error(x, r, "registration", msg, sizeof msg);
		login_failed(msg);
		return;
	}
	if (oauthc_dcr_parse((const char *)evbuffer_pullup(x->body, -1),
	    evbuffer_get_length(x->body), dcr_asked, &reg, why,
	    sizeof why) == -1) {
		login_failed(why);
		return;
	}
	upo_set(&upo.client_id, reg.client_id);
	upo_set(&upo.client_secret, reg.client_secret);
	upo.method = reg.method;
	upo.secret_expires = reg.secret_expires;
	upo.registered = OAUTHC_REG_DCR;
	upo_set(&upo.reg_issuer, upo.issuer);
	oauthc_reg_clear(&reg);
	log_info("upstream %s: oauth: registered at %s", sc->name,
	    upo.issuer);
	login_save_id(upo_gateway());
	login_url();
}

void
login_begin(void)
{
	struct oauthc_as	as;

	if (upo.redirect_uri == NULL) {
		login_failed("no redirect URI (the supervisor sent no "
		    "oauth_client)");
		return;
	}
	if (upo.authz_endpoint == NULL) {
		login_failed("the authorization server has no "
		    "authorization_endpoint");
		return;
	}
	/* The MCP authorization specification: without it, refuse. */
	if (!upo.s256) {
		login_failed("the authorization server does not list S256 "
		    "in code_challenge_methods_supported: no login without "
		    "PKCE");
		return;
	}
	/* A registration whose secret has expired is made again. */
	if (upo.registered == OAUTHC_REG_DCR && upo.secret_expires > 0 &&
	    (long long)time(NULL) >= upo.secret_expires) {
		log_info("upstream %s: oauth: the registered client's secret "
		    "has expired: registering again", sc->name);
		login_forget_registration();
	}
	if (upo.registered != OAUTHC_REG_NONE) {
		login_url();
		return;
	}
	memset(&as, 0, sizeof as);
	as.registration_endpoint = upo.reg_endpoint;
	as.cimd = upo.cimd;
	switch (oauthc_registration(&as, sc->oauth != NULL ?
	    sc->oauth->client_id : NULL, upo.metadata_url)) {
	case OAUTHC_REG_CONFIG:
		upo_set(&upo.client_id, sc->oauth->client_id);
		upo.registered = OAUTHC_REG_CONFIG;
		upo_set(&upo.reg_issuer, upo.issuer);
		login_url();
		break;
	case OAUTHC_REG_CIMD:
		upo_set(&upo.client_id, upo.metadata_url);
		upo.registered = OAUTHC_REG_CIMD;
		upo_set(&upo.reg_issuer, upo.issuer);
		login_url();
		break;
	case OAUTHC_REG_DCR:
		login_register();
		break;
	default:
		login_failed("the server offers no way to register: set "
		    "oauth.client_id");
		break;
	}
}

/* The code is exchanged: save, say so, and go on with it. */
void
login_exchanged(const char *scope)
{
	struct upo_id	*id = upo.id;
	json_t		*o;

	if (id != upo_gateway())
		users_login_over(id, NULL);
	login_pending_clear(id);
	upo_set(&upo.want_scope, NULL);
	login_save();
	o = json_pack("{s:s}", "phase", "done");
	if (scope != NULL)
		json_object_set_new(o, "scope", json_string(scope));
	if (id->expires_at > 0)
		json_object_set_new(o, "expires_at",
		    json_integer((json_int_t)id->expires_at));
	progress(id, o);
	/* A user's calls go on with it; the gateway's worker starts again. */
	if (id != upo_gateway()) {
		log_info("upstream %s: oauth: %s logged in", sc->name,
		    id->name);
		upo_notify();
		return;
	}
	log_info("upstream %s: oauth: logged in; starting again with the "
	    "token", sc->name);
	event_active(exit_ev, EV_TIMEOUT, 0);
}

/* What came back for an identity's login (MSG_OAUTH_CODE). */
void
login_code(json_t *msg)
{
	const char	*input, *name;
	struct upo_id	*id = upo_gateway();

	if (json_unpack(msg, "{s:s}", "identity", &name) == 0 &&
	    strcmp(name, id->name) != 0 && (id = users_find(name)) == NULL) {
		log_warnx("upstream %s: oauth: a response for %s, who has no "
		    "session here", sc->name, name);
		return;
	}
	if (!id->pending) {
		progress(id, json_pack("{s:s, s:s}", "phase", "failed", "error",
		    id == upo_gateway() ? "no login is under way (run mcpctl "
		    "login again)" : "no login is under way"));
		return;
	}
	/* The supervisor dropped it (its link was misused): a call asks
	 * for a new one. */
	if ((input = str(msg, "failed", 512)) != NULL) {
		if ((name = str(msg, "state", OAUTHC_B64_32)) == NULL ||
		    strcmp(name, id->state) == 0)
			login_failed_for(id, input);
		return;
	}
	if ((input = str(msg, "response", UPO_LOGIN_RESPONSE_MAX)) == NULL) {
		login_failed_for(id, "the response is missing or too long");
		return;
	}
	if (upo.step != STEP_IDLE) {
		/* Another identity's flow: this one's turn comes. */
		if (id == upo_gateway() || id->queued != QUEUED_NONE) {
			login_failed_for(id, "busy with the authorization "
			    "server; try again");
			return;
		}
		id->queued = QUEUED_CODE;
		upo_set(&id->queued_arg, input);
		return;
	}
	upo.id = id;
	login_code_run(id, input);
}

/* Check what came back and exchange its code (id is upo.id). */
void
login_code_run(struct upo_id *id, const char *input)
{
	char		*code = NULL, *form = NULL, why[512];

	if (!id->pending) {
		upo_notify();
		return;
	}
	if (oauthc_authz_response(input, id->state, upo.issuer,
	    upo.iss_param, &code, why, sizeof why) == -1) {
		login_failed(why);
		return;
	}
	hfetch_form_add(&form, "grant_type", "authorization_code");
	hfetch_form_add(&form, "code", code);
	hfetch_form_add(&form, "redirect_uri", upo.redirect_uri);
	hfetch_form_add(&form, "code_verifier", id->verifier);
	upo_wipe(code);
	explicit_bzero(id->verifier, sizeof id->verifier);
	if (upo_token_request(form, GRANT_CODE, "exchanging the code", why,
	    sizeof why) == -1)
		login_failed(why);
}

/* The tokens are gone: save, and wait for a login. */
static void
revoke_finish(void)
{
	upo_tokens_drop();
	login_save();
	/* A user logs in again at their next call. */
	if (upo.id != upo_gateway()) {
		upo.step = STEP_IDLE;
		upo_notify();
		return;
	}
	upo_need_login(NULL);
}

void
revoke_begin(void)
{
	const char	*tok = upo.id->refresh_token != NULL ?
			    upo.id->refresh_token : upo.id->access_token;
	char		*form = NULL, *auth, why[512];

	if (tok == NULL || upo.revoke_endpoint == NULL || upo.client_id ==
	    NULL) {
		if (tok != NULL)
			log_info("upstream %s: oauth: the server has no "
			    "revocation_endpoint; the tokens are forgotten",
			    sc->name);
		revoke_finish();
		return;
	}
	hfetch_form_add(&form, "token", tok);
	hfetch_form_add(&form, "token_type_hint", upo.id->refresh_token !=
	    NULL ? "refresh_token" : "access_token");
	if (upo_client_auth(&form, &auth, why, sizeof why) == -1) {
		upo_wipe(form);
		log_warnx("upstream %s: oauth: not revoked: %s", sc->name, why);
		revoke_finish();
		return;
	}
	upo_fetch(STEP_REVOKE, upo.revoke_endpoint, form,
	    "application/x-www-form-urlencoded", auth);
}

void
revoke_done(struct hfetch *x, CURLcode r)
{
	char	msg[512];

	upo.step = STEP_IDLE;
	if (r == CURLE_OK && !x->over && x->status == 200)
		log_info("upstream %s: oauth: the token is revoked", sc->name);
	else {
		hfetch_error(x, r, "revocation", msg, sizeof msg);
		log_warnx("upstream %s: oauth: %s; the tokens are forgotten "
		    "all the same", sc->name, msg);
	}
	revoke_finish();
}

/* A frame of the login from the supervisor. */
void
upoauth_frame(uint16_t type, json_t *msg)
{
	struct upo_id	*id = upo_gateway();
	const char	*name;

	upoauth_init();
	if (exit_ev == NULL)
		exit_ev = event_new(base, -1, 0, exit_cb, NULL);
	switch (type) {
	case MSG_OAUTH_LOGIN:
		if (upo_per_user()) {
			login_failed_for(id, "this upstream's identities are "
			    "its users'");
			return;
		}
		if (sc->oauth != NULL && sc->oauth->grant ==
		    UPOAUTH_CLIENT_CREDENTIALS) {
			login_failed("this upstream uses client credentials, "
			    "not a login");
			return;
		}
		if (upo.step == STEP_TOKEN || upo.step == STEP_REG ||
		    upo.step == STEP_REVOKE) {
			login_failed("busy with the authorization server; "
			    "try again");
			return;
		}
		/* A new login replaces a pending one. */
		login_pending_clear(id);
		upo.id = id;
		upo.login_asked = 1;
		upo_discover();
		break;
	case MSG_OAUTH_CODE:
		login_code(msg);
		break;
	case MSG_OAUTH_REVOKE:
		if (json_unpack(msg, "{s:s}", "identity", &name) == 0 &&
		    strcmp(name, id->name) != 0) {
			users_revoke(name);
			return;
		}
		if (upo.step != STEP_IDLE) {
			log_warnx("upstream %s: oauth: busy; the revocation "
			    "waits for discovery", sc->name);
			upo.revoke_asked = 1;
			return;
		}
		if (upo.revoke_endpoint == NULL && (id->refresh_token != NULL ||
		    id->access_token != NULL)) {
			upo.revoke_asked = 1;
			upo_discover();
			return;
		}
		revoke_begin();
		break;
	}
}
