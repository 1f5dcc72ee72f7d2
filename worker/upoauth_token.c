/* SPDX-License-Identifier: ISC */
/*
 * A token request of the worker's OAuth client (upstream_oauth.c for
 * client credentials and refresh, upstream_login.c for a code): the
 * client's authentication at the token endpoint, as registered and as the
 * server advertises (client_secret_basic, client_secret_post, or none:
 * the client_id alone), the resource named (RFC 8707), and the request
 * sent.  The secret is expanded when needed and wiped at once.
 */
#include "config.h"

#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <event2/buffer.h>
#include <event2/event.h>

#include "http_fetch.h"
#include "log.h"
#include "oauthc.h"
#include "secret.h"
#include "upoauth.h"
#include "worker.h"
#include "xmalloc.h"

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
	if (upo.client_id == NULL) {
		snprintf(why, len, "no client registered at the "
		    "authorization server: a login is needed");
		return (-1);
	}
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

/*
 * Send a token request (its form taken): the resource named (RFC 8707),
 * the client authenticated, what it is logged as.  0, or -1 with why (the
 * form wiped).
 */
int
upo_token_request(char *form, enum upo_grant grant, const char *what,
    char *why, size_t len)
{
	char	*auth;

	hfetch_form_add(&form, "resource", upo.resource != NULL ?
	    upo.resource : sc->url);
	if (upo_client_auth(&form, &auth, why, len) == -1) {
		upo_wipe(form);
		return (-1);
	}
	upo.grant = grant;
	log_debug("upstream %s: oauth: %s at %s", sc->name, what,
	    upo.token_endpoint);
	upo_fetch(STEP_TOKEN, upo.token_endpoint, form,
	    "application/x-www-form-urlencoded", auth);
	return (0);
}
