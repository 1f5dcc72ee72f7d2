/* SPDX-License-Identifier: ISC */
/*
 * mcp-idp, the process: its channel to the supervisor (idp_worker.c) and
 * its HTTP calls to the authorization server (idp_fetch.c).  What it
 * decides without I/O is in idp.h.
 */
#ifndef MCPS_IDP_WORKER_H
#define MCPS_IDP_WORKER_H

#include <stdint.h>

#include <event2/event.h>
#include <jansson.h>

#include "frame.h"

/* The issuer, as the CONFIG frame gives it; strings owned. */
struct idp_wconf {
	char		*issuer;
	char		*metadata_url;	/* NULL: discovered */
	char		*jwks_uri;	/* NULL: from the metadata */
	char		*ca_file;	/* NULL: the system's CAs */
	unsigned int	 refresh;	/* seconds; 0: IDP_REFRESH_DEFAULT */
	char		*client_id;	/* NULL: no introspection */
	char		*client_secret;	/* secret: never logged */
	int		 secret_post;	/* client_secret_post, else _basic */
	/* The login client (codes exchanged); login_id NULL: none. */
	char		*login_id;
	char		*login_secret;	/* NULL: a public client */
	int		 login_post;
};

/* idp_worker.c */
extern struct event_base	*base;
extern struct idp_wconf		*wc;
int64_t		 now_ms(void);
void		 idp_send_json(uint16_t type, uint32_t tag, json_t *);
/* The same for a frame that carries a secret: no copy of its text is
 * left unwiped. */
void		 idp_send_secret(uint16_t type, uint32_t tag, json_t *);
				/* reference taken */

/* idp_fetch.c */
/* Set up curl and fetch the keys for the first time. */
void		 idp_fetch_init(void);
/* The supervisor asks for the keys again (rate-bounded here too). */
void		 idp_fetch_refresh(void);
/* Introspect a token (taken, wiped when done); answered with tag. */
void		 idp_introspect(uint32_t tag, char *token);
/* Exchange a login client's code (the members taken, wiped when done):
 * {code, code_verifier, redirect_uri, resource}; answered with tag. */
void		 idp_exchange(uint32_t tag, json_t *req);
/* Stop every transfer and timer; wipe the secret. */
void		 idp_fetch_stop(void);

#endif
