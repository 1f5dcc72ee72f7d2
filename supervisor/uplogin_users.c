/* SPDX-License-Identifier: ISC */
/*
 * Per-user identities at an upstream (oauth.identity = "per-user", issue
 * 23): each principal's calls carry that principal's own tokens.  The
 * worker logs each one in when a call needs it; here are the principal
 * (uplogin_principal), the records the worker saves for each identity
 * (held in memory once read, sealed under state_dir/oauth by identity),
 * an index of the identities of each upstream (a record of its own,
 * "users", so that a restarted daemon can list them), the logins under
 * way (the callback finds them by state; at most USERS_LOGINS_MAX per
 * upstream, the oldest dropped), and mcpctl tokens and revoke of them.
 * The client registration stays the gateway record's (uplogin.c): one
 * for every identity.
 */
#include "config.h"

#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "log.h"
#include "supervisor.h"
#include "uplogin.h"
#include "xmalloc.h"

#define USERS_INDEX		"users"	/* the index's identity */
#define USERS_INDEX_MAX		10000	/* identities listed per upstream */
#define USERS_LOGINS_MAX	64	/* logins under way per upstream */
#define USERS_ID_MAX		200	/* a principal's text, at most */

struct uplogin_users {
	json_t			*records;	/* identity -> record, or null:
						   none stored (read once) */
	json_t			*index;		/* identities with a record */
	TAILQ_HEAD(, user_login) logins;
	unsigned int		 nlogins;
};

int
users_per_user(const struct upstream *up)
{
	return (up->sc->oauth != NULL &&
	    up->sc->oauth->identity == UPOAUTH_PER_USER);
}

/* Is it a principal's text (not the gateway's, nor the index's)? */
static int
users_identity_valid(const char *id)
{
	size_t	n = strlen(id);

	return (n > 0 && n <= TS_NAME_MAX && strchr(id, ':') != NULL);
}

void
uplogin_principal(const struct session *s, char *buf, size_t len)
{
	users_principal(s->grant, s->client_name, s->credential, buf, len);
}

void
users_principal(const struct oauth_grant *g, const char *client,
    uint64_t credential, char *buf, size_t len)
{
	unsigned char	md[32];
	unsigned int	mdlen = 0;
	char		full[2048];
	size_t		i;
	int		n;

	buf[0] = '\0';
	if (g != NULL && g->issuer != NULL && g->subject != NULL) {
		n = snprintf(full, sizeof full, "oauth:%s@%s", g->subject,
		    g->issuer);
		if (n >= 0 && (size_t)n < len && n <= USERS_ID_MAX) {
			snprintf(buf, len, "%s", full);
			return;
		}
		/* Too long to be a name: its digest, the same each time. */
		if (!EVP_Digest(full, strlen(full), md, &mdlen, EVP_sha256(),
		    NULL) || len < 7 + 2 * 16 + 1)
			return;
		snprintf(buf, len, "oauth:#");
		for (i = 0; i < 16; i++)
			snprintf(buf + 7 + 2 * i, 3, "%02x", md[i]);
	} else if (client != NULL)
		snprintf(buf, len, "client:%s", client);
	else if (credential != 0)
		snprintf(buf, len, "token:%016llx",
		    (unsigned long long)credential);
}

/* The upstream's identities, the index read from the store once. */
static struct uplogin_users *
users_get(struct upstream *up)
{
	struct uplogin_users	*u;
	struct token_store	*ts;
	unsigned char		*data;
	size_t			 len;
	json_t			*j, *a;
	char			 err[512];

	if ((u = up->login.users) != NULL)
		return (u);
	u = up->login.users = xcalloc(1, sizeof *u);
	u->records = json_object();
	u->index = json_array();
	TAILQ_INIT(&u->logins);
	if ((ts = uplogin_store(0)) == NULL)
		return (u);
	data = token_store_get(ts, up->sc->name, USERS_INDEX, &len, err,
	    sizeof err);
	if (data == NULL) {
		if (err[0] != '\0')
			log_warnx("upstream %s: the index of per-user tokens "
			    "is not used: %s", up->sc->name, err);
		return (u);
	}
	j = json_loadb((const char *)data, len, 0, NULL);
	free(data);
	if (json_is_array(a = json_object_get(j, "identities"))) {
		json_decref(u->index);
		u->index = json_incref(a);
	}
	json_decref(j);
	return (u);
}

/* Write the index of identities. */
static void
users_index_store(struct upstream *up)
{
	struct token_store	*ts;
	json_t			*j;
	char			*text, err[512];

	if ((ts = uplogin_store(1)) == NULL)
		return;
	j = json_pack("{s:i, s:O}", "v", 1, "identities",
	    up->login.users->index);
	if ((text = json_dumps(j, JSON_COMPACT)) == NULL)
		fatalx("json_dumps");
	json_decref(j);
	if (token_store_put(ts, up->sc->name, USERS_INDEX, text, strlen(text),
	    err, sizeof err) != 0)
		log_warnx("upstream %s: the index of per-user tokens is not "
		    "stored: %s", up->sc->name, err);
	free(text);
}

/* Is an identity in the index?  Its position, or -1. */
static long
users_indexed(struct uplogin_users *u, const char *id)
{
	size_t	 i;
	json_t	*v;

	json_array_foreach(u->index, i, v) {
		if (json_is_string(v) && strcmp(json_string_value(v), id) == 0)
			return ((long)i);
	}
	return (-1);
}

/* An identity's record (borrowed), read from the store once; or NULL. */
static json_t *
users_record(struct upstream *up, const char *id)
{
	struct uplogin_users	*u = users_get(up);
	struct token_store	*ts;
	unsigned char		*data;
	size_t			 len;
	json_t			*r;
	char			 err[512];

	if ((r = json_object_get(u->records, id)) != NULL)
		return (json_is_object(r) ? r : NULL);
	r = NULL;
	if (users_indexed(u, id) >= 0 && (ts = uplogin_store(0)) != NULL) {
		data = token_store_get(ts, up->sc->name, id, &len, err,
		    sizeof err);
		if (data != NULL) {
			r = json_loadb((const char *)data, len,
			    JSON_REJECT_DUPLICATES, NULL);
			explicit_bzero(data, len);
			free(data);
		} else if (err[0] != '\0')
			log_warnx("upstream %s: stored OAuth tokens of %s not "
			    "used: %s", up->sc->name, id, err);
		if (r != NULL && !json_is_object(r)) {
			uplogin_record_free(r);
			r = NULL;
		}
	}
	/* "None" is remembered for a bounded number of principals. */
	if (r != NULL || json_object_size(u->records) < USERS_INDEX_MAX)
		json_object_set_new(u->records, id, r != NULL ? r :
		    json_null());
	return (r);
}

/* Keep an identity's record (taken; NULL: none), in memory and stored. */
static void
users_put(struct upstream *up, const char *id, json_t *r)
{
	struct uplogin_users	*u = users_get(up);
	struct token_store	*ts;
	json_t			*old;
	char			*text, err[512];
	long			 at;

	if ((old = json_object_get(u->records, id)) != NULL &&
	    json_is_object(old)) {
		json_incref(old);
		json_object_del(u->records, id);
		uplogin_record_free(old);
	}
	json_object_set_new(u->records, id, r != NULL ? r : json_null());
	at = users_indexed(u, id);
	if (r == NULL && at >= 0) {
		json_array_remove(u->index, (size_t)at);
		users_index_store(up);
	} else if (r != NULL && at < 0) {
		if (json_array_size(u->index) >= USERS_INDEX_MAX)
			log_warnx("upstream %s: over %d identities: %s is not "
			    "listed by mcpctl tokens", up->sc->name,
			    USERS_INDEX_MAX, id);
		else {
			json_array_append_new(u->index, json_string(id));
			users_index_store(up);
		}
	}
	if ((ts = uplogin_store(r != NULL)) == NULL)
		return;
	if (r == NULL) {
		if (token_store_delete(ts, up->sc->name, id, err,
		    sizeof err) != 0)
			log_warnx("upstream %s: %s", up->sc->name, err);
		return;
	}
	if ((text = json_dumps(r, JSON_COMPACT)) == NULL)
		fatalx("json_dumps");
	if (token_store_put(ts, up->sc->name, id, text, strlen(text), err,
	    sizeof err) != 0)
		log_warnx("upstream %s: OAuth tokens of %s not stored (kept "
		    "in memory): %s", up->sc->name, id, err);
	explicit_bzero(text, strlen(text));
	free(text);
}

void
uplogin_session_open(struct upstream *up, struct session *s, json_t *o)
{
	char	 id[TS_NAME_MAX + 1];
	json_t	*r;

	if (!users_per_user(up))
		return;
	uplogin_principal(s, id, sizeof id);
	if (!users_identity_valid(id))
		return;		/* the worker refuses its calls */
	json_object_set_new(o, "oauth_identity", json_string(id));
	if ((r = users_record(up, id)) != NULL)
		json_object_set(o, "oauth_record", r);
}

static void
login_free(struct uplogin_users *u, struct user_login *l)
{
	TAILQ_REMOVE(&u->logins, l, entry);
	u->nlogins--;
	connect_forget(l);
	free(l->identity);
	explicit_bzero(l->state, strlen(l->state));
	free(l->state);
	explicit_bzero(l->url, strlen(l->url));
	free(l->url);
	explicit_bzero(l, sizeof *l);
	free(l);
}

void
users_login_done(struct upstream *up, const char *id)
{
	struct uplogin_users	*u = users_get(up);
	struct user_login	*l, *next;

	for (l = TAILQ_FIRST(&u->logins); l != NULL; l = next) {
		next = TAILQ_NEXT(l, entry);
		if (strcmp(l->identity, id) == 0)
			login_free(u, l);
	}
}

void
users_login_abort(struct upstream *up, const char *id, const char *why)
{
	struct uplogin_users	*u = users_get(up);
	struct user_login	*l;
	char			*copy = xstrdup(id);	/* id may be the
							   login's own */
	json_t			*o;

	o = json_pack("{s:s, s:s}", "identity", copy, "failed", why);
	/* That login only: the worker may have begun another meanwhile. */
	TAILQ_FOREACH(l, &u->logins, entry) {
		if (strcmp(l->identity, copy) == 0)
			json_object_set_new(o, "state", json_string(l->state));
	}
	users_login_done(up, copy);
	if (uplogin_send(up, MSG_OAUTH_CODE, o) != 0)
		log_debug("upstream %s: login of %s dropped, its worker not "
		    "told (not running)", up->sc->name, copy);
	free(copy);
}

/* A login of an identity waits for its user: remember it. */
static void
users_login_add(struct upstream *up, const char *id, const char *state,
    const char *url, const char *connect)
{
	struct uplogin_users	*u = users_get(up);
	struct user_login	*l;

	users_login_done(up, id);	/* a new one replaces it */
	if (u->nlogins >= USERS_LOGINS_MAX) {
		l = TAILQ_FIRST(&u->logins);
		log_warnx("upstream %s: over %d logins under way: the oldest, "
		    "of %s, is dropped", up->sc->name, USERS_LOGINS_MAX,
		    l->identity);
		login_free(u, l);
	}
	l = xcalloc(1, sizeof *l);
	l->identity = xstrdup(id);
	l->state = xstrdup(state);
	l->url = xstrdup(url);
	snprintf(l->connect, sizeof l->connect, "%s", connect);
	TAILQ_INSERT_TAIL(&u->logins, l, entry);
	u->nlogins++;
}

/* A random id of the worker's (state, link): base64url, bounded (it
 * goes into a cookie's name and a URL). */
static int
users_id_ok(const char *id)
{
	size_t	n = strlen(id);

	return (n >= 8 && n < LOGIN_SECRET_LEN && strspn(id, "ABCDEFGHIJKLMN"
	    "OPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") == n);
}

/* An authorization URL we may send a browser to in a Location header:
 * http(s), no control character or space (nothing to split the head). */
static int
users_url_ok(const char *url)
{
	const unsigned char	*p;

	if (strncmp(url, "https://", 8) != 0 && strncmp(url, "http://", 7) != 0)
		return (0);
	for (p = (const unsigned char *)url; *p != '\0'; p++) {
		if (*p <= 0x20 || *p == 0x7f)
			return (0);
	}
	return (1);
}

/* The login whose state (0), link (1) or proof's state (2) is this. */
static struct user_login *
users_login_find(const char *secret, int which, struct upstream **up)
{
	struct user_login	*l;
	const char		*v;
	size_t			 i, n = strlen(secret);

	for (i = 0; i < nupstreams; i++) {
		if (upstreams[i]->login.users == NULL)
			continue;
		TAILQ_FOREACH(l, &upstreams[i]->login.users->logins, entry) {
			v = which == 0 ? l->state : which == 1 ?
			    l->connect : l->vstate;
			if (n > 0 && strlen(v) == n &&
			    CRYPTO_memcmp(v, secret, n) == 0) {
				*up = upstreams[i];
				return (l);
			}
		}
	}
	return (NULL);
}

struct user_login *
users_login_by_state(const char *state, struct upstream **up)
{
	return (users_login_find(state, 0, up));
}

struct user_login *
users_login_by_connect(const char *connect, struct upstream **up)
{
	return (users_login_find(connect, 1, up));
}

struct user_login *
users_login_by_vstate(const char *vstate, struct upstream **up)
{
	return (users_login_find(vstate, 2, up));
}

int
users_frame(struct upstream *up, uint16_t type, json_t *msg)
{
	const char	*id, *phase, *state, *error, *url, *connect;
	json_t		*r;

	if (json_unpack(msg, "{s:s}", "identity", &id) != 0 ||
	    strcmp(id, LOGIN_IDENTITY) == 0)
		return (0);
	if (!users_per_user(up) || !users_identity_valid(id)) {
		log_warnx("upstream %s: %s of an identity it may not have",
		    up->sc->name, msg_type_name(type));
		return (1);
	}
	if (type == MSG_OAUTH_SAVE) {
		r = json_object_get(msg, "record");
		if (json_is_object(r)) {
			users_put(up, id, json_deep_copy(r));
			log_info("upstream %s: oauth: tokens of %s stored",
			    up->sc->name, id);
		} else if (json_is_null(r)) {
			users_put(up, id, NULL);
			log_info("upstream %s: oauth: tokens of %s forgotten",
			    up->sc->name, id);
		}
		return (1);
	}
	if (json_unpack(msg, "{s:s}", "phase", &phase) != 0)
		return (1);
	if (strcmp(phase, "url") == 0 &&
	    json_unpack(msg, "{s:s, s:s, s:s}", "state", &state, "url", &url,
	    "connect", &connect) == 0 && users_id_ok(connect) &&
	    users_id_ok(state) && users_url_ok(url)) {
		users_login_add(up, id, state, url, connect);
		log_info("upstream %s: login of %s: waiting for the "
		    "authorization to come back", up->sc->name, id);
	} else if (strcmp(phase, "done") == 0) {
		users_login_done(up, id);
		log_info("upstream %s: login of %s: done", up->sc->name, id);
	} else if (strcmp(phase, "failed") == 0) {
		users_login_done(up, id);
		error = json_string_value(json_object_get(msg, "error"));
		log_warnx("upstream %s: login of %s failed: %s", up->sc->name,
		    id, error != NULL ? error : "no reason given");
	}
	return (1);
}

void
users_tokens(struct upstream *up, json_t *list)
{
	struct uplogin_users	*u = users_get(up);
	json_t			*v, *r, *ids;
	size_t			 i;

	/* A copy: reading a record may not change the index, but be sure. */
	ids = json_copy(u->index);
	json_array_foreach(ids, i, v) {
		if (json_is_string(v) && (r = users_record(up,
		    json_string_value(v))) != NULL)
			json_array_append_new(list, uplogin_token_entry(up,
			    json_string_value(v), r));
	}
	json_decref(ids);
}

json_t *
users_revoke(struct upstream *up, const char *id)
{
	int	told;

	if (id == NULL)
		return (control_error("upstream %s has per-user identities: "
		    "name one (mcpctl tokens lists them)", up->sc->name));
	if (users_record(up, id) == NULL)
		return (control_error("upstream %s has no stored tokens of %s",
		    up->sc->name, id));
	users_put(up, id, NULL);
	users_login_done(up, id);
	told = uplogin_send(up, MSG_OAUTH_REVOKE, json_pack("{s:s}",
	    "identity", id)) == 0;
	log_info("upstream %s: oauth: tokens of %s revoked (mcpctl)%s",
	    up->sc->name, id, told ? "" : "; its worker is not running, so "
	    "not at the server");
	return (json_pack("{s:b, s:b}", "ok", 1, "at_server", told));
}

void
users_free(struct upstream *up)
{
	struct uplogin_users	*u = up->login.users;
	struct user_login	*l;
	const char		*k;
	json_t			*v;

	if (u == NULL)
		return;
	while ((l = TAILQ_FIRST(&u->logins)) != NULL)
		login_free(u, l);
	json_object_foreach(u->records, k, v) {
		if (json_is_object(v))
			uplogin_record_free(json_incref(v));
	}
	json_decref(u->records);
	json_decref(u->index);
	free(u);
	up->login.users = NULL;
}
