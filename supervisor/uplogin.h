/* SPDX-License-Identifier: ISC */
/*
 * What uplogin.c (the gateway identity's login, the callback, mcpctl)
 * and uplogin_users.c (per-user identities) share.
 */
#ifndef MCPS_UPLOGIN_H
#define MCPS_UPLOGIN_H

#include <jansson.h>

#include "token_store.h"

#define LOGIN_IDENTITY		"gateway"	/* the gateway-wide one */

struct upstream;
struct http_conn;

/* uplogin.c */
struct token_store *uplogin_store(int make);
void		 uplogin_record_free(json_t *);
int		 uplogin_send(struct upstream *, uint16_t type, json_t *);
json_t		*uplogin_error(const char *, ...)
		    __attribute__((format(printf, 1, 2)));
json_t		*uplogin_token_entry(struct upstream *, const char *identity,
		    json_t *record);

/* uplogin_users.c */
int		 users_per_user(const struct upstream *);
/* A frame of a per-user identity (SAVE or PROGRESS): 1 if it was one. */
int		 users_frame(struct upstream *, uint16_t type, json_t *msg);
/* The upstream whose per-user login waits for this state, its identity
 * in *identity (the caller copies it before anything else). */
struct upstream	*users_login_by_state(const char *state,
		    const char **identity);
/* The login of an identity is answered: forget it. */
void		 users_login_done(struct upstream *, const char *identity);
void		 users_tokens(struct upstream *, json_t *list);
json_t		*users_revoke(struct upstream *, const char *identity);
void		 users_free(struct upstream *);

#endif
