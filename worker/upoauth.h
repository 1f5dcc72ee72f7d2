/* SPDX-License-Identifier: ISC */
/*
 * What upstream_oauth.c (discovery, tokens, refresh, waiters) and
 * upstream_login.c (registration, the login, revocation, the record)
 * share: the one state of the gateway as this upstream's OAuth client.
 * Strings are owned; tokens and secrets are wiped when freed.
 */
#ifndef MCPS_UPOAUTH_H
#define MCPS_UPOAUTH_H

#include <jansson.h>

#include "http_fetch.h"
#include "oauthc.h"

#define UPO_TIMEOUT_MS		10000	/* one transfer */

/* The transfer under way. */
enum upo_step {
	STEP_IDLE = 0,
	STEP_PRM,		/* protected resource metadata */
	STEP_AS,		/* the authorization server's metadata */
	STEP_TOKEN,		/* the token endpoint */
	STEP_REG,		/* dynamic client registration */
	STEP_REVOKE		/* the revocation endpoint */
};

/* What a token request is for. */
enum upo_grant {
	GRANT_CC = 0,		/* client credentials */
	GRANT_REFRESH,
	GRANT_CODE		/* a login's code */
};

struct upo {
	/* The authorization server, once discovered (token_endpoint). */
	char		*issuer;
	char		*prm_scopes;		/* the resource's scopes_supported */
	char		*challenge_scope;	/* the last 401's scope */
	char		*prm_url;		/* the last 401's resource_metadata */
	char		*resource;		/* the metadata's: RFC 8707's */
	char		*token_endpoint;
	char		*authz_endpoint;
	char		*reg_endpoint;
	char		*revoke_endpoint;
	unsigned int	 auth_methods;
	int		 iss_param;
	int		 cimd;
	int		 offline;

	/* Who we are there, and the tokens (the record). */
	char		*client_id;
	char		*client_secret;		/* DCR's; wiped */
	enum oauthc_regway registered;		/* NONE: no registration */
	char		*reg_issuer;		/* the issuer registered at */
	unsigned int	 method;		/* DCR's OAUTHC_AUTH_* */
	char		*access_token;		/* wiped */
	char		*refresh_token;		/* wiped */
	char		*scope;			/* granted */
	long long	 expires_at;		/* unix; 0 if not said */
	long long	 obtained;

	/* The login. */
	char		*want_scope;		/* a step-up's, for the next login */
	char		*redirect_uri;		/* CONFIG's oauth_client */
	char		*client_name;
	char		*metadata_url;		/* NULL if none */
	int		 login_needed;		/* in the login state */
	int		 login_asked;		/* LOGIN waits for discovery */
	int		 revoke_asked;		/* REVOKE waits for discovery */

	enum upo_step	 step;
	enum upo_grant	 grant;
};

extern struct upo	 upo;

/* upstream_oauth.c */
void	 upo_wipe(char *);
void	 upo_set(char **, const char *);
int	 upo_fetch(enum upo_step, const char *url, char *post,
	    const char *content_type, char *auth);
void	 upo_fail(const char *, ...) __attribute__((format(printf, 1, 2)));
void	 upo_need_login(const char *why);
void	 upo_discover(void);
int	 upo_client_auth(char **form, char **auth, char *why, size_t);
void	 upo_token_done(struct hfetch *, CURLcode);
char	*upo_scope_wanted(void);
void	 upo_tokens_drop(void);

/* upstream_login.c */
void	 login_config(json_t *record, json_t *client);
void	 login_begin(void);
void	 login_reg_done(struct hfetch *, CURLcode);
void	 login_code(json_t *msg);
void	 login_exchanged(const char *scope);
void	 login_failed(const char *why);
void	 login_save(void);
void	 login_forget_registration(void);
void	 revoke_begin(void);
void	 revoke_done(struct hfetch *, CURLcode);

#endif
