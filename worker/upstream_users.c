/* SPDX-License-Identifier: ISC */
/*
 * Per-user identities at the upstream (oauth.identity = "per-user", issue
 * 23).  Each session names its principal in SESSION_OPEN (oauth_identity,
 * with that principal's stored record if any); the sessions of one
 * principal share its identity here (refcounted, at most USERS_MAX), and
 * every request of a session's instance carries that identity's token,
 * never another's.  With no token (first call, refresh refused) the
 * identity's login begins (upstream_login.c); its client is asked to
 * open the authorization URL: the call fails with -32042
 * (URLElicitationRequiredError) whose data names the URL, and the login
 * completes when the redirect comes back; the next call has the token.
 */
#include "config.h"

#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>
#include <event2/event.h>
#include <jansson.h>

#include "frame.h"
#include "log.h"
#include "oauthc.h"
#include "upoauth.h"
#include "worker.h"
#include "xmalloc.h"

#define USERS_MAX	10000	/* identities held at once */
#define USERS_NAME_MAX	256	/* a principal's text */

static TAILQ_HEAD(, upo_id)	users = TAILQ_HEAD_INITIALIZER(users);
static unsigned int		nusers;

int
upoauth_per_user_ready(void)
{
	if (!upo_per_user())
		return (0);
	upoauth_init();
	chan_send_json(MSG_CATALOG, 0, 0, json_pack("{s:[], s:[], s:[], "
	    "s:[]}", "tools", "resources", "resourceTemplates", "prompts"));
	log_info("upstream %s: per-user identities: each session's instance "
	    "connects with its user's token", sc->name);
	worker_status("ready", NULL);
	return (1);
}

struct upo_id *
users_find(const char *name)
{
	struct upo_id	*id;

	TAILQ_FOREACH(id, &users, entry) {
		if (strcmp(id->name, name) == 0)
			return (id);
	}
	return (NULL);
}

struct upo_id *
upoauth_session(json_t *msg, uint32_t session)
{
	struct upo_id	*id;
	const char	*name;
	json_t		*record;

	if (!upo_per_user() || json_unpack(msg, "{s:s}", "oauth_identity",
	    &name) != 0)
		return (NULL);
	if (strlen(name) == 0 || strlen(name) > USERS_NAME_MAX ||
	    strcmp(name, upo_gateway()->name) == 0) {
		log_warnx("session %u: an identity not to be used", session);
		return (NULL);
	}
	upoauth_init();
	if ((id = users_find(name)) != NULL) {
		id->refs++;
		return (id);
	}
	if (nusers >= USERS_MAX) {
		log_warnx("upstream %s: over %d identities: session %u's "
		    "calls are refused", sc->name, USERS_MAX, session);
		return (NULL);
	}
	id = xcalloc(1, sizeof *id);
	id->name = xstrdup(name);
	id->refs = 1;
	TAILQ_INSERT_TAIL(&users, id, entry);
	nusers++;
	record = json_object_get(msg, "oauth_record");
	if (json_is_object(record) && login_record_tokens(id, record) == 0)
		upo_id_start(id, (long long)time(NULL));
	log_debug("upstream %s: session %u is %s's%s", sc->name, session,
	    id->name, id->access_token != NULL ? ", with a token" : "");
	return (id);
}

void
upoauth_session_close(struct upo_id *id)
{
	if (id != NULL && id->refs > 0)
		id->refs--;
	users_sweep();
}

/* Free the identities no session holds and no flow uses. */
void
users_sweep(void)
{
	struct upo_id	*id, *next;

	for (id = TAILQ_FIRST(&users); id != NULL; id = next) {
		next = TAILQ_NEXT(id, entry);
		if (id->refs > 0 || (upo.id == id && upo.step != STEP_IDLE))
			continue;
		TAILQ_REMOVE(&users, id, entry);
		nusers--;
		login_pending_clear(id);
		if (id->expire_ev != NULL)
			event_free(id->expire_ev);
		upo_id_free(id);
		free(id->name);
		free(id);
	}
}

/* An identity with something to do once the flow is free, or NULL. */
struct upo_id *
users_queued(void)
{
	struct upo_id	*id;

	TAILQ_FOREACH(id, &users, entry) {
		if (id->queued != QUEUED_NONE)
			return (id);
	}
	return (NULL);
}

struct upo_id *
users_conn_id(struct conn *c)
{
	return (c->info != NULL ? c->info->oauth_id : NULL);
}

/* No token for a user (the flow's identity): log them in. */
void
users_login_start(struct upo_id *id)
{
	/* A login under way: its URL again. */
	if (id->pending && id->url != NULL) {
		users_login_url(id);
		return;
	}
	log_info("upstream %s: oauth: %s needs a login", sc->name, id->name);
	login_begin();
	upo_notify();
}

/* The message of the error a call gets while its user must log in. */
static void
users_message(struct upo_id *id, char *buf, size_t len)
{
	snprintf(buf, len, "upstream %s needs you to log in: open %s", sc->name,
	    id->url != NULL ? id->url : "(no URL)");
}

void
users_login_url(struct upo_id *id)
{
	users_message(id, id->last_error, sizeof id->last_error);
	upo_notify();
}

void
users_login_asked(struct upo_id *id, uint32_t session)
{
	if (id->pending && id->url != NULL)
		users_message(id, id->last_error, sizeof id->last_error);
}

void
users_login_over(struct upo_id *id, const char *why)
{
	if (why == NULL)
		log_debug("upstream %s: oauth: the login of %s is over",
		    sc->name, id->name);
}

json_t *
upoauth_elicit_data(struct conn *c)
{
	struct upo_id	*id;
	char		 msg[256];

	if (c == NULL || !upo_per_user() || (id = users_conn_id(c)) == NULL ||
	    !id->pending || id->url == NULL || id->access_token != NULL)
		return (NULL);
	if (id->elicitation[0] == '\0')
		oauthc_random(id->elicitation);
	snprintf(msg, sizeof msg, "Log in to upstream %s", sc->name);
	return (json_pack("{s:[{s:s, s:s, s:s, s:s}]}", "elicitations",
	    "mode", "url", "elicitationId", id->elicitation, "url", id->url,
	    "message", msg));
}

void
users_revoke(const char *name)
{
	struct upo_id	*id;

	if ((id = users_find(name)) == NULL) {
		log_info("upstream %s: oauth: %s has no session here: its "
		    "tokens are forgotten, not revoked at the server",
		    sc->name, name);
		return;
	}
	if (upo.step != STEP_IDLE) {
		id->queued = QUEUED_REVOKE;
		return;
	}
	upo.id = id;
	if (upo.revoke_endpoint == NULL && (id->refresh_token != NULL ||
	    id->access_token != NULL)) {
		upo.revoke_asked = 1;
		upo_discover();
		return;
	}
	revoke_begin();
}
