/* SPDX-License-Identifier: ISC */
/*
 * What uplogin.c (the gateway identity's login, the callback, mcpctl)
 * and uplogin_users.c (per-user identities) share.
 */
#ifndef MCPS_UPLOGIN_H
#define MCPS_UPLOGIN_H

#include <sys/queue.h>

#include <stdint.h>

#include <jansson.h>

#include "token_store.h"

#define LOGIN_IDENTITY		"gateway"	/* the gateway-wide one */
#define LOGIN_SECRET_LEN	44	/* a random id: 32 bytes, base64url */

enum connect_check {
	CHECK_NONE = 0,
	CHECK_PENDING,		/* the code is exchanged, the token checked */
	CHECK_PROVED,
	CHECK_REFUSED,		/* another user logged in at the issuer */
	CHECK_FAILED		/* the issuer or its answer failed */
};

/*
 * A per-user identity's login under way; owned by its upstream's list
 * (uplogin_users.c).  The user is shown the gateway's link (connect); the
 * browser that proves to be that user there (uplogin_connect.c) gets a
 * cookie and is sent to url; the redirect back is taken only with it.
 */
struct user_login {
	char			*identity;
	char			*state;		/* of the authorization */
	char			*url;		/* the authorization URL */
	char			 connect[LOGIN_SECRET_LEN];	/* the link's */
	char			 cookie[LOGIN_SECRET_LEN];	/* "" until a
							   browser proved it */
	unsigned int		 refused;	/* wrong proofs given */
	int			 proved;	/* the browser with the cookie
						   is the user's */
	/* An OAuth principal's proof: a login at its issuer. */
	enum connect_check	 check;
	char			 vstate[LOGIN_SECRET_LEN];	/* its state,
							   "" until sent */
	char			 verifier[LOGIN_SECRET_LEN];	/* PKCE */
	char			 why[320];	/* CHECK_REFUSED, _FAILED */
	char			*issuer;	/* asked (idp_find), or NULL */
	uint64_t		 ask;		/* its idp_exchange, or 0 */
	uint64_t		 wait;		/* oauth_wait, or 0 */
	char			*token;		/* being verified, or NULL */
	TAILQ_ENTRY(user_login)	 entry;
};

struct upstream;
struct http_conn;
struct http_request;
struct oauth_grant;

/* uplogin.c */
struct token_store *uplogin_store(int make);
void		 uplogin_record_free(json_t *);
int		 uplogin_send(struct upstream *, uint16_t type, json_t *);
json_t		*uplogin_token_entry(struct upstream *, const char *identity,
		    json_t *record);

/* uplogin_users.c */
int		 users_per_user(const struct upstream *);
/* A frame of a per-user identity (SAVE or PROGRESS): 1 if it was one. */
int		 users_frame(struct upstream *, uint16_t type, json_t *msg);
/* The per-user login that waits for this state, or for the browser that
 * opens this link (connect), its upstream in *up; or NULL. */
struct user_login *users_login_by_state(const char *state,
		    struct upstream **up);
struct user_login *users_login_by_connect(const char *connect,
		    struct upstream **up);
struct user_login *users_login_by_vstate(const char *vstate,
		    struct upstream **up);
/* A principal's text (uplogin_principal) from its credentials. */
void		 users_principal(const struct oauth_grant *,
		    const char *client, uint64_t credential, char *, size_t);

/* uplogin.c, for uplogin_connect.c */
void		 uplogin_redirect_uri(char *, size_t);
const char	*uplogin_callback_path(char *, size_t);

/* uplogin_connect.c: the link a user is shown, and its proof. */
/* A request for the link (?login=, or its form posted): 1 if answered. */
int		 connect_serve(struct http_conn *, struct http_request *);
/* Does the redirect come back to the browser that proved the user? */
int		 connect_same_browser(const struct http_request *,
		    const struct user_login *);
/* Is it a POST to the redirect URI from the gateway's own page (the
 * link's form: its Origin is the redirect URI's)? */
int		 connect_form_post(const struct http_request *);
/* A login is freed: cancel what it waits for, wipe its token. */
void		 connect_forget(struct user_login *);
/* The login of an identity is answered: forget it. */
void		 users_login_done(struct upstream *, const char *identity);
/* Drop it, and have its worker fail it (why goes to the waiting call):
 * the next call starts another. */
void		 users_login_abort(struct upstream *, const char *identity,
		    const char *why);
void		 users_tokens(struct upstream *, json_t *list);
json_t		*users_revoke(struct upstream *, const char *identity);
void		 users_free(struct upstream *);

#endif
