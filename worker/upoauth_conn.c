/* SPDX-License-Identifier: ISC */
/*
 * What the remote transports (http, sse, ws) share as the upstream's
 * OAuth client: the 401's WWW-Authenticate gathered, a connect refused
 * with 401 (sse's GET, ws's upgrade) made again once per new token, and a
 * request or handshake that no token will pass.  The flow itself is
 * upstream_oauth.c's; a transport only says what was refused.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "redact.h"
#include "worker.h"
#include "xmalloc.h"

/* Add a WWW-Authenticate field: several fields are one list (RFC 9110). */
void
upoauth_challenge_add(char **challenge, const char *value, size_t len)
{
	char	*v;

	if ((*challenge == NULL ? 0 : strlen(*challenge) + 2) + len >
	    UPOAUTH_CHALLENGE_MAX)
		return;
	xasprintf(&v, "%s%s%.*s", *challenge != NULL ? *challenge : "",
	    *challenge != NULL ? ", " : "", (int)len, value);
	free(*challenge);
	*challenge = v;
}

/*
 * No token for a request: an answer saying why, or for the handshake's
 * (what: "initialize", "GET", "the WebSocket upgrade") the connection
 * lost, which is the login state when a login is needed, and no restart
 * when the operator must act.  id 0: nothing to answer.
 */
void
upoauth_refused(struct conn *c, int64_t id, const char *what, long status,
    const char *error)
{
	char	why[768], url[256], *text;
	json_t	*data;

	if (what != NULL) {
		url_redact(sc->url, url, sizeof url);
		snprintf(why, sizeof why, "%s: HTTP %ld from %s: %s", what,
		    status, url, error);
		upoauth_losing();
		conn_lost(c, why);
		return;
	}
	if (id == 0)
		return;
	/* Its user must log in first (per-user): the error says where. */
	if ((data = upoauth_elicit_data(c)) != NULL) {
		text = json_dumps(data, JSON_COMPACT);
		json_decref(data);
		conn_answer_error_data(c, id, MCP_URL_ELICITATION_REQUIRED,
		    error, text);
		free(text);
		return;
	}
	snprintf(why, sizeof why, "upstream %s answered HTTP %ld: %s",
	    sc->name, status, error);
	conn_answer_error(c, id, why);
}

/* The token for a refused connect came, or did not (why). */
static void
connect_done(void *arg, const char *error)
{
	struct conn	*c = arg;
	char		 why[512];

	c->oauth_waiting = 0;
	if (c->state == CONN_DEAD)
		return;		/* lost meanwhile (the login state) */
	if (error != NULL) {
		upoauth_refused(c, 0, c->oauth_what, 401, error);
		return;
	}
	/* Connect again, with the token (from the loop: not inside it). */
	c->oauth_gen = upoauth_generation();
	log_debug("upstream %s: connecting again with a token", sc->name);
	c->ops->stop(c);
	if (c->ops->start(c) != 0) {
		snprintf(why, sizeof why, "%s", worker_last_error()[0] !=
		    '\0' ? worker_last_error() : "transport failed to start");
		conn_lost(c, why);
	}
}

/*
 * A connect that carried token gen (0: none) was refused with 401: 0 if a
 * token is being got (the transport is stopped and started again when it
 * comes), -1 if not (that token was the one a connect was made again
 * with: once per token, never a loop).
 */
int
upoauth_connect_refused(struct conn *c, const char *what,
    const char *challenge, unsigned int gen)
{
	if (c->oauth_waiting ||
	    (c->oauth_gen != 0 && (gen == 0 || gen == c->oauth_gen)))
		return (-1);
	if (upoauth_unauthorized(challenge, gen, connect_done, c) == -1)
		return (-1);
	c->oauth_waiting = 1;
	c->oauth_what = what;
	return (0);
}

/* The transport stops: a connect waiting for a token waits no more. */
void
upoauth_connect_forget(struct conn *c)
{
	if (!c->oauth_waiting)
		return;
	c->oauth_waiting = 0;
	upoauth_forget(c);
}
