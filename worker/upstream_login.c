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
#define LOGIN_RESPONSE_MAX	8192	/* what came back, at most */

/* The login under way. */
static int		 pending;
static char		 state[OAUTHC_B64_32];
static char		 verifier[OAUTHC_B64_32];	/* wiped */
static unsigned int	 dcr_asked;		/* the method asked for */
static struct event	*expire_ev;
static struct event	*exit_ev;

/* Tell the supervisor how the login goes. */
static void
progress(json_t *o)
{
	chan_send_json(MSG_OAUTH_PROGRESS, 0, 0, o);
}

static void
pending_clear(void)
{
	pending = 0;
	explicit_bzero(state, sizeof state);
	explicit_bzero(verifier, sizeof verifier);
	if (expire_ev != NULL)
		evtimer_del(expire_ev);
}

void
login_failed(const char *why)
{
	log_warnx("upstream %s: oauth: the login failed: %s", sc->name, why);
	pending_clear();
	progress(json_pack("{s:s, s:s}", "phase", "failed", "error", why));
}

static void
expire_cb(evutil_socket_t fd, short what, void *arg)
{
	if (pending)
		login_failed("the login expired");
}

static void
exit_cb(evutil_socket_t fd, short what, void *arg)
{
	worker_begin_exit(WORKER_EXIT_LOGIN);
}

/* The record of what upo holds, or NULL if there is no registration. */
static json_t *
record_json(void)
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
	r.registered = upo.registered;
	r.access_token = upo.access_token;
	r.refresh_token = upo.refresh_token;
	r.expires_at = upo.expires_at;
	r.scope = upo.scope;
	r.obtained = upo.obtained;
	return (oauthc_record_json(&r));
}

void
login_save(void)
{
	chan_send_json(MSG_OAUTH_SAVE, 0, 0, json_pack("{s:o}", "record",
	    record_json()));
}

void
login_forget_registration(void)
{
	if (upo.registered != OAUTHC_REG_CONFIG) {
		upo_set(&upo.client_id, NULL);
		upo_set(&upo.client_secret, NULL);
		upo.registered = OAUTHC_REG_NONE;
		upo.method = 0;
	}
	upo_set(&upo.reg_issuer, NULL);
	upo_tokens_drop();
	login_save();
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
	upo_set(&upo.access_token, r.access_token);
	upo_set(&upo.refresh_token, r.refresh_token);
	upo_set(&upo.scope, r.scope);
	upo.expires_at = r.expires_at;
	upo.obtained = r.obtained;
	log_debug("upstream %s: oauth: a stored identity at %s%s", sc->name,
	    r.issuer, r.access_token != NULL ? ", with a token" : "");
}

/* The authorization URL of a new login, to the supervisor. */
static void
login_url(void)
{
	char	 challenge[OAUTHC_B64_32], *wanted, *u, *scope, *url;
	struct timeval tv = { LOGIN_PENDING_MAX, 0 };

	oauthc_random(state);
	oauthc_random(verifier);
	if (oauthc_pkce_challenge(verifier, challenge) == -1)
		fatalx("a PKCE verifier of our own is refused");
	/* What is wanted, what was granted, what a step-up asked for. */
	wanted = upo_scope_wanted();
	u = oauthc_scope_union(wanted, upo.scope);
	free(wanted);
	wanted = oauthc_scope_union(u, upo.want_scope);
	free(u);
	scope = oauthc_scope_login(wanted, upo.offline);
	free(wanted);
	url = oauthc_authz_url(upo.authz_endpoint, upo.client_id,
	    upo.redirect_uri, scope, state, challenge, upo.resource != NULL ?
	    upo.resource : sc->url);
	if (url == NULL) {
		free(scope);
		login_failed("the authorization_endpoint is not a URL");
		return;
	}
	pending = 1;
	evtimer_add(expire_ev, &tv);
	log_info("upstream %s: oauth: a login at %s (client %s, %s%s%s)",
	    sc->name, upo.issuer, upo.registered == OAUTHC_REG_CIMD ?
	    "by its metadata document" : upo.registered == OAUTHC_REG_DCR ?
	    "registered" : "configured", scope != NULL ? "scope " : "no scope",
	    scope != NULL ? scope : "", "");
	progress(json_pack("{s:s, s:s, s:s}", "phase", "url", "url", url,
	    "state", state));
	free(scope);
	free(url);
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
	upo.registered = OAUTHC_REG_DCR;
	upo_set(&upo.reg_issuer, upo.issuer);
	oauthc_reg_clear(&reg);
	log_info("upstream %s: oauth: registered at %s", sc->name,
	    upo.issuer);
	login_save();
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

/* The code is exchanged: save, say so, and start again with it. */
void
login_exchanged(const char *scope)
{
	json_t	*o;

	pending_clear();
	upo_set(&upo.want_scope, NULL);
	login_save();
	o = json_pack("{s:s}", "phase", "done");
	if (scope != NULL)
		json_object_set_new(o, "scope", json_string(scope));
	if (upo.expires_at > 0)
		json_object_set_new(o, "expires_at",
		    json_integer((json_int_t)upo.expires_at));
	progress(o);
	log_info("upstream %s: oauth: logged in; starting again with the "
	    "token", sc->name);
	event_active(exit_ev, EV_TIMEOUT, 0);
}

void
login_code(json_t *msg)
{
	const char	*input;
	char		*code = NULL, *form = NULL, *auth, why[512];

	if (!pending) {
		progress(json_pack("{s:s, s:s}", "phase", "failed", "error",
		    "no login is under way (run mcpctl login again)"));
		return;
	}
	if ((input = str(msg, "response", LOGIN_RESPONSE_MAX)) == NULL) {
		login_failed("the response is missing or too long");
		return;
	}
	if (upo.step != STEP_IDLE) {
		login_failed("busy with the authorization server; try again");
		return;
	}
	if (oauthc_authz_response(input, state, upo.issuer, upo.iss_param,
	    &code, why, sizeof why) == -1) {
		login_failed(why);
		return;
	}
	hfetch_form_add(&form, "grant_type", "authorization_code");
	hfetch_form_add(&form, "code", code);
	hfetch_form_add(&form, "redirect_uri", upo.redirect_uri);
	hfetch_form_add(&form, "code_verifier", verifier);
	hfetch_form_add(&form, "resource", upo.resource != NULL ?
	    upo.resource : sc->url);
	upo_wipe(code);
	explicit_bzero(verifier, sizeof verifier);
	if (upo_client_auth(&form, &auth, why, sizeof why) == -1) {
		upo_wipe(form);
		login_failed(why);
		return;
	}
	upo.grant = GRANT_CODE;
	log_debug("upstream %s: oauth: exchanging the code at %s", sc->name,
	    upo.token_endpoint);
	upo_fetch(STEP_TOKEN, upo.token_endpoint, form,
	    "application/x-www-form-urlencoded", auth);
}

/* The tokens are gone: save, and wait for a login. */
static void
revoke_finish(void)
{
	upo_tokens_drop();
	login_save();
	upo_need_login(NULL);
}

void
revoke_begin(void)
{
	const char	*tok = upo.refresh_token != NULL ? upo.refresh_token :
			    upo.access_token;
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
	hfetch_form_add(&form, "token_type_hint", upo.refresh_token != NULL ?
	    "refresh_token" : "access_token");
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
	upoauth_init();
	if (expire_ev == NULL) {
		expire_ev = evtimer_new(base, expire_cb, NULL);
		exit_ev = event_new(base, -1, 0, exit_cb, NULL);
	}
	switch (type) {
	case MSG_OAUTH_LOGIN:
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
		pending_clear();
		upo.login_asked = 1;
		upo_discover();
		break;
	case MSG_OAUTH_CODE:
		login_code(msg);
		break;
	case MSG_OAUTH_REVOKE:
		if (upo.step != STEP_IDLE) {
			log_warnx("upstream %s: oauth: busy; the revocation "
			    "waits for discovery", sc->name);
			upo.revoke_asked = 1;
			return;
		}
		if (upo.revoke_endpoint == NULL && (upo.refresh_token != NULL ||
		    upo.access_token != NULL)) {
			upo.revoke_asked = 1;
			upo_discover();
			return;
		}
		revoke_begin();
		break;
	}
}
