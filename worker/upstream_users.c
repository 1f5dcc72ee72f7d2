/* SPDX-License-Identifier: ISC */
/*
 * Per-user identities at the upstream (oauth.identity = "per-user", issue
 * 23).  Each session names its principal in SESSION_OPEN (oauth_identity,
 * with that principal's stored record if any); the sessions of one
 * principal share its identity here (refcounted, at most USERS_MAX), and
 * every request of a session's instance carries that identity's token,
 * never another's.  With no token (first call, refresh refused) the
 * identity's login begins (upstream_login.c) and its client is asked to
 * open the authorization URL: a client that declared URL-mode
 * elicitation gets an elicitation/create, and the call waits until the
 * token comes (then goes on with it), the user declines, or the login
 * expires, after which notifications/elicitation/complete says so; any
 * other client's call fails with -32042 (URLElicitationRequiredError)
 * whose data names the URL, the login completes when the redirect comes
 * back, and the next call has the token.
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
#include "secret.h"
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

/* The identity a connection's requests carry the token of. */
struct upo_id *
upo_conn_id(struct conn *c)
{
	if (c == NULL || !upo_per_user())
		return (upo_gateway());
	return (users_conn_id(c));
}

unsigned int
upoauth_generation(void)
{
	return (upo_gateway()->generation);
}

unsigned int
upoauth_generation_conn(struct conn *c)
{
	struct upo_id	*id = upo_conn_id(c);

	return (id != NULL ? id->generation : 0);
}

struct curl_slist *
upoauth_header_conn(struct conn *c, struct curl_slist *h, unsigned int *gen)
{
	struct upo_id	*id = upo_conn_id(c);
	char		*line;

	*gen = 0;
	if (id == NULL || id->access_token == NULL)
		return (h);
	xasprintf(&line, "Authorization: Bearer %s", id->access_token);
	h = curl_slist_append(h, line);
	upo_wipe(line);
	*gen = id->generation;
	return (h);
}

struct curl_slist *
upoauth_header(struct curl_slist *h, unsigned int *gen)
{
	return (upoauth_header_conn(NULL, h, gen));
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
		if (id->elicit_ref != 0)
			upreq_drop_own(id->elicit_ref, NULL);
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

/* Has a session's client declared URL-mode elicitation? */
static int
users_may_elicit(uint32_t session)
{
	struct session_info	*si = worker_session_info(session);
	json_t			*e;

	return (si != NULL && si->oauth_id != NULL && !si->shared &&
	    (e = json_object_get(si->caps, "elicitation")) != NULL &&
	    json_object_get(e, "url") != NULL);
}

/* The client answered the elicitation: declined, it fails the login. */
static void
users_elicit_answer(void *arg, const struct jrpc *m)
{
	struct upo_id	*id = arg;
	struct jspan	 action;
	char		 why[256], what[16] = "";
	static const char *const path[] = { "action", NULL };

	id->elicit_ref = 0;
	if (!id->pending)
		return;
	if (m != NULL && m->kind == JRPC_RESULT &&
	    jscan_path(m->p, m->result, path, &action) == 0)
		jscan_string(m->p, action, what, sizeof what);
	if (strcmp(what, "accept") == 0) {
		log_info("upstream %s: oauth: %s accepted to log in; waiting "
		    "for the redirect", sc->name, id->name);
		return;
	}
	if (strcmp(what, "decline") == 0 || strcmp(what, "cancel") == 0)
		snprintf(why, sizeof why, "login to upstream %s declined",
		    sc->name);
	else
		snprintf(why, sizeof why, "login to upstream %s: the client "
		    "did not answer the elicitation", sc->name);
	login_failed_for(id, why);
}

/* Ask a session's client to open the login's URL. */
static void
users_elicit(struct upo_id *id, uint32_t session)
{
	char	msg[256];

	if (id->elicitation[0] == '\0')
		oauthc_random(id->elicitation);
	snprintf(msg, sizeof msg, "Log in to upstream %s to go on (open the "
	    "link in a browser)", sc->name);
	id->elicit_session = session;
	id->elicit_ref = upreq_send_own(session, "elicitation/create",
	    json_pack("{s:s, s:s, s:s, s:s}", "mode", "url", "message", msg,
	    "url", id->url, "elicitationId", id->elicitation),
	    users_elicit_answer, id);
	log_info("upstream %s: oauth: %s is asked to log in (session %u)",
	    sc->name, id->name, session);
}

void
users_login_url(struct upo_id *id)
{
	uint32_t	session;

	users_message(id, id->last_error, sizeof id->last_error);
	if (id->elicit_session == 0 &&
	    (session = upo_id_waiting_session(id, users_may_elicit)) != 0)
		users_elicit(id, session);
	upo_notify();
}

void
users_login_asked(struct upo_id *id, uint32_t session)
{
	if (!id->pending || id->url == NULL)
		return;
	users_message(id, id->last_error, sizeof id->last_error);
	if (id->elicit_session == 0 && session != 0 &&
	    users_may_elicit(session))
		users_elicit(id, session);
}

/* Done (why NULL) or failed: the asked client is told. */
void
users_login_over(struct upo_id *id, const char *why)
{
	if (id->elicit_ref != 0) {
		upreq_drop_own(id->elicit_ref, why != NULL ? why : NULL);
		id->elicit_ref = 0;
	}
	if (why == NULL && id->elicit_session != 0 &&
	    id->elicitation[0] != '\0')
		chan_send_json(MSG_NOTIFY, id->elicit_session, 0, json_pack(
		    "{s:s, s:s, s:{s:s}}", "jsonrpc", "2.0", "method",
		    "notifications/elicitation/complete", "params",
		    "elicitationId", id->elicitation));
	id->elicit_session = 0;
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
