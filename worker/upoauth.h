/* SPDX-License-Identifier: ISC */
/*
 * What upstream_oauth.c (tokens, refresh, waiters), upoauth_discovery.c
 * (the resource's and the server's metadata), upstream_login.c
 * (registration, the login, revocation, the record) and
 * upstream_users.c (per-user identities) share: the state of the gateway
 * as this upstream's OAuth client (one server, one registration) and the
 * identities it holds tokens for: the gateway's, or with oauth.identity
 * "per-user" one per principal.  One flow runs at a time, for upo.id;
 * the others wait their turn (queued).  Strings are owned; tokens and
 * secrets are wiped when freed.
 */
#ifndef MCPS_UPOAUTH_H
#define MCPS_UPOAUTH_H

#include <sys/queue.h>

#include <stdint.h>

#include <event2/event.h>
#include <jansson.h>

#include "http_fetch.h"
#include "oauthc.h"

struct conn;

#define UPO_TIMEOUT_MS		10000	/* one transfer */
#define UPO_LOGIN_RESPONSE_MAX	8192	/* what came back, at most */

/* What an identity waits to do once the flow is free. */
enum upo_queued {
	QUEUED_NONE = 0,
	QUEUED_FLOW,		/* get a token (a 401, a renewal) */
	QUEUED_CODE,		/* exchange what came back */
	QUEUED_REVOKE		/* revoke its tokens */
};

/* An identity at the upstream: its tokens and its login. */
struct upo_id {
	char		*name;		/* "gateway", or the principal */
	unsigned int	 refs;		/* sessions (the gateway's: 1) */
	char		*access_token;	/* wiped */
	char		*refresh_token;	/* wiped */
	char		*scope;		/* granted */
	long long	 expires_at;	/* unix; 0 if not said */
	long long	 obtained;
	unsigned int	 generation;	/* of the token; 0: none yet */
	long long	 refresh_hold;	/* unix: no refresh before, after
					   one the server did not answer */
	char		 last_error[512];	/* the last flow's, or "" */
	int		 login_needed;	/* the gateway's: the login state */
	enum upo_queued	 queued;
	char		*queued_arg;	/* the 401's challenge, the response */
	struct event	*renew_ev;

	/* The login under way (upstream_login.c). */
	int		 pending;
	char		 state[OAUTHC_B64_32];
	char		 verifier[OAUTHC_B64_32];	/* wiped */
	char		*url;		/* the authorization URL */
	char		 elicitation[OAUTHC_B64_32];	/* its id */
	uint32_t	 elicit_session;	/* asked by elicitation, or 0 */
	uint32_t	 elicit_ref;	/* that request's reference */
	struct event	*expire_ev;
	TAILQ_ENTRY(upo_id) entry;
};

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
	int		 s256;			/* PKCE's S256 listed */

	/* Who we are there (the registration, every identity's). */
	char		*client_id;
	char		*client_secret;		/* DCR's; wiped */
	enum oauthc_regway registered;		/* NONE: no registration */
	char		*reg_issuer;		/* the issuer registered at */
	unsigned int	 method;		/* DCR's OAUTHC_AUTH_* */
	long long	 secret_expires;	/* DCR's secret, unix; 0: never */
	char		*forgotten;		/* a DCR client_id the server
						   no longer takes: records
						   naming it are discarded */
	struct upo_id	*id;			/* the flow's identity */

	/* The login. */
	char		*want_scope;		/* a step-up's, for the next login */
	char		*redirect_uri;		/* CONFIG's oauth_client */
	char		*client_name;
	char		*metadata_url;		/* NULL if none */
	int		 login_asked;		/* LOGIN waits for discovery */
	int		 revoke_asked;		/* REVOKE waits for discovery */

	enum upo_step	 step;
	enum upo_grant	 grant;
};

extern struct upo	 upo;

/* upstream_oauth.c */
int	 upo_per_user(void);
struct upo_id *upo_gateway(void);
void	 upo_notify(void);
void	 upo_id_tokens_drop(struct upo_id *);
void	 upo_wipe(char *);
void	 upo_set(char **, const char *);
int	 upo_fetch(enum upo_step, const char *url, char *post,
	    const char *content_type, char *auth);
void	 upo_fail(const char *, ...) __attribute__((format(printf, 1, 2)));
void	 upo_need_login(const char *why);
/* The authorization server is known: do what is asked, or get a token. */
void	 upo_flow_next(void);
void	 upo_token_done(struct hfetch *, CURLcode);
char	*upo_scope_wanted(void);
void	 upo_tokens_drop(void);
void	 upo_id_start(struct upo_id *, long long now);
void	 upo_id_free(struct upo_id *);
uint32_t upo_id_waiting_session(const struct upo_id *, int (*may)(uint32_t));

/* upoauth_token.c */
/* Add the client's authentication to a token request: 0, or -1 with why. */
int	 upo_client_auth(char **form, char **auth, char *why, size_t);
/* Send a token request (form taken): resource, client authentication,
 * logged as what.  0, or -1 with why (the form wiped). */
int	 upo_token_request(char *form, enum upo_grant, const char *what,
	    char *why, size_t);

/* upoauth_discovery.c */
/* Free discovery's URLs. */
void	 upo_urls_free(void);
/* A metadata URL answered: the resource's or the server's. */
void	 upo_metadata_done(struct hfetch *, CURLcode);
/* Start the flow: discovery, unless the server is known and challenge
 * (the 401's WWW-Authenticate) is NULL. */
void	 upo_flow_start(const char *challenge);
void	 upo_discover(void);

/* upstream_login.c */
void	 login_config(json_t *record, json_t *client);
int	 login_record_tokens(struct upo_id *, json_t *record);
void	 login_begin(void);
void	 login_code_run(struct upo_id *, const char *response);
void	 login_pending_clear(struct upo_id *);
void	 login_reg_done(struct hfetch *, CURLcode);
void	 login_code(json_t *msg);
void	 login_exchanged(const char *scope);
void	 login_failed(const char *why);
void	 login_failed_for(struct upo_id *, const char *why);
void	 login_save(void);
void	 login_save_id(struct upo_id *);
void	 login_forget_registration(void);
void	 revoke_begin(void);
void	 revoke_done(struct hfetch *, CURLcode);

/* upstream_users.c */
struct upo_id *upo_conn_id(struct conn *);
struct upo_id *users_find(const char *name);
void	 users_sweep(void);
struct upo_id *users_queued(void);
struct upo_id *users_conn_id(struct conn *);
void	 users_login_start(struct upo_id *);
void	 users_login_url(struct upo_id *);
void	 users_login_asked(struct upo_id *, uint32_t session);
void	 users_login_over(struct upo_id *, const char *why);
void	 users_revoke(const char *name);

#endif
