/* SPDX-License-Identifier: ISC */
/*
 * Discovery by the gateway as its upstream's OAuth client: the protected
 * resource metadata (the 401's resource_metadata, else the well-known
 * URLs, RFC 9728), whose resource must be the upstream's URL, then the
 * authorization server's metadata (RFC 8414 and OpenID, the three URLs
 * of idp_discovery_urls), whose issuer must be the one named and whose
 * token endpoint must be on the issuer's host.  Each URL is tried in
 * turn; the first reason one did not do is the flow's error.  Once the
 * server is known, upstream_oauth.c's upo_flow_next goes on.
 */
#include "config.h"

#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <event2/event.h>

#include "http_fetch.h"
#include "idp.h"
#include "log.h"
#include "oauthc.h"
#include "redact.h"
#include "upoauth.h"
#include "worker.h"
#include "xmalloc.h"

/* Discovery's URLs. */
static char	*urls[IDP_DISCOVERY_MAX > OAUTHC_PRM_URLS ?
		    IDP_DISCOVERY_MAX : OAUTHC_PRM_URLS];
static int	 nurls, iurl;
static char	 flow_err[512];		/* the best reason yet */

static void	flow_step(void);

/* Free discovery's URLs. */
void
upo_urls_free(void)
{
	while (nurls > 0)
		free(urls[--nurls]);
	iurl = 0;
}

/* Keep the reason of a discovery URL that did not do, if it is the first. */
static void
flow_note(const char *why)
{
	log_debug("upstream %s: oauth: %s", sc->name, why);
	if (flow_err[0] == '\0')
		snprintf(flow_err, sizeof flow_err, "%s", why);
}

/* A metadata URL answered: the resource's or the server's. */
void
upo_metadata_done(struct hfetch *x, CURLcode r)
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
		if (oauthc_prm_check(md, sc->url, sc->oauth != NULL ?
		    sc->oauth->issuer : NULL, &as_url, &scopes, why,
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
		upo_urls_free();
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
	upo.s256 = as.s256;
	json_decref(md);
	upo_flow_next();
}

/* Fetch the current discovery URL. */
static void
flow_step(void)
{
	char	url[512];

	log_debug("upstream %s: oauth: %s %s", sc->name, upo.step == STEP_PRM ?
	    "resource metadata" : "server metadata",
	    url_redact(urls[iurl], url, sizeof url));
	upo_fetch(upo.step, urls[iurl], NULL, NULL, NULL);
}

/* Begin: the resource's metadata, from the challenge or the well-known URLs. */
void
upo_flow_start(const char *challenge)
{
	struct oauthc_challenge	c;
	char			why[OAUTHC_WHY_MAX];

	upo_urls_free();
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
		upo_flow_next();
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
	upo_flow_start(NULL);
}
