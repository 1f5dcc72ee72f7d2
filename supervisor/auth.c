/* SPDX-License-Identifier: ISC */
/*
 * Who is asking: the bearer tokens the gateway accepts, whom each one
 * names and what each admits to.  A token of auth_tokens, or the lock
 * file's, is an unnamed client with every right; a token of clients =
 * ( ... ) is that client, with the rights acl.c reads from its entry, and
 * /metrics if its entry says metrics = true; a token of metrics_tokens
 * admits to /metrics (and the reasons of /readyz) and nothing else.
 * Tokens are compared in constant time and never logged; a session
 * remembers which token made it (a hash, so that another token gets 404
 * for it).  With oauth = { ... }, every request needs a token, and one
 * that is none of these is tried as an access token (oauth.c).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "secret.h"
#include "supervisor.h"
#include "xmalloc.h"

/* One accepted token. */
struct credential {
	char		*secret;
	uint64_t	 id;		/* a hash of it, never 0 */
	char		*client;	/* a named client, or NULL */
	int		 rights;	/* AUTH_MCP, AUTH_METRICS */
};

static struct credential	*creds;
static size_t			 ncreds;
static int			 any_rights;	/* the rights of all, or'd */
static char			*lock_token;	/* the lock file's, or NULL */
static char			*lock_path;	/* written by us, or NULL */
static char			*lock_url;	/* what it says, or NULL */

/* Does a configuration have a lock file (and a WebSocket endpoint)? */
static int
auth_lockfile_wanted(const struct conf *c)
{
	return (c->ws_lockfile != NULL && c->ws_path[0] != '\0');
}

/* Free a table of credentials, wiping the secrets. */
static void
auth_free(struct credential *v, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		explicit_bzero(v[i].secret, strlen(v[i].secret));
		free(v[i].secret);
		free(v[i].client);
	}
	free(v);
}

/* Add a token to a table being built (room made by the caller); -1 with
 * err set if it is bad. */
static int
auth_add(struct auth_table *t, const char *raw, const char *client,
    int rights, const char *what, char *err, size_t errlen)
{
	struct credential	*v = t->v;
	char			*secret, why[512];
	size_t			 i;

	if ((secret = secret_expand(raw, why, sizeof why)) == NULL) {
		snprintf(err, errlen, "%s: %s", what, why);
		return (-1);
	}
	if (strlen(secret) < CONF_MIN_TOKEN) {
		snprintf(err, errlen, "%s: a token must have at least %d "
		    "characters", what, CONF_MIN_TOKEN);
		explicit_bzero(secret, strlen(secret));
		free(secret);
		return (-1);
	}
	for (i = 0; i < t->n; i++) {
		if (strcmp(v[i].secret, secret) == 0) {
			snprintf(err, errlen, "%s: the same token is given "
			    "twice", what);
			explicit_bzero(secret, strlen(secret));
			free(secret);
			return (-1);
		}
	}
	v[t->n].secret = secret;
	v[t->n].id = fnv1a64(secret, strlen(secret)) | 1;
	v[t->n].client = client != NULL ? xstrdup(client) : NULL;
	v[t->n].rights = rights;
	t->n++;
	return (0);
}

/* Build the table of a configuration's tokens; -1 with err set. */
static int
auth_build(const struct conf *c, struct credential **out, size_t *nout,
    char *err, size_t errlen)
{
	struct auth_table	 t;
	size_t			 i, max = c->nclients + 1;
	char			 what[96];

	for (i = 0; c->auth_tokens != NULL && c->auth_tokens[i] != NULL; i++)
		max++;
	for (i = 0; c->metrics_tokens != NULL &&
	    c->metrics_tokens[i] != NULL; i++)
		max++;
	t.v = xcalloc(max, sizeof *t.v);
	t.n = 0;
	for (i = 0; c->auth_tokens != NULL && c->auth_tokens[i] != NULL;
	    i++) {
		snprintf(what, sizeof what, "auth_tokens: entry %zu", i + 1);
		if (auth_add(&t, c->auth_tokens[i], NULL,
		    AUTH_MCP | AUTH_METRICS, what, err, errlen) != 0)
			goto bad;
	}
	for (i = 0; i < c->nclients; i++) {
		if (c->clients[i].token == NULL)
			continue;	/* named by OAuth tokens only */
		snprintf(what, sizeof what, "client %s", c->clients[i].name);
		if (auth_add(&t, c->clients[i].token, c->clients[i].name,
		    AUTH_MCP | (c->clients[i].metrics ? AUTH_METRICS : 0),
		    what, err, errlen) != 0)
			goto bad;
	}
	for (i = 0; c->metrics_tokens != NULL &&
	    c->metrics_tokens[i] != NULL; i++) {
		snprintf(what, sizeof what, "metrics_tokens: entry %zu",
		    i + 1);
		if (auth_add(&t, c->metrics_tokens[i], NULL, AUTH_METRICS,
		    what, err, errlen) != 0)
			goto bad;
	}
	/* The lock file's, unless this configuration has none. */
	if (lock_token != NULL && auth_lockfile_wanted(c) &&
	    auth_add(&t, lock_token, NULL, AUTH_MCP | AUTH_METRICS,
	    "ws_lockfile", err, errlen) != 0)
		goto bad;
	*out = t.v;
	*nout = t.n;
	return (0);
bad:
	auth_free(t.v, t.n);
	return (-1);
}

int
auth_prepare(const struct conf *c, struct auth_table *t, char *err,
    size_t errlen)
{
	t->v = NULL;
	t->n = 0;
	return (auth_build(c, &t->v, &t->n, err, errlen));
}

void
auth_commit(struct auth_table *t)
{
	size_t	i;

	auth_free(creds, ncreds);
	creds = t->v;
	ncreds = t->n;
	t->v = NULL;
	t->n = 0;
	any_rights = 0;
	for (i = 0; i < ncreds; i++)
		any_rights |= creds[i].rights;
}

void
auth_discard(struct auth_table *t)
{
	if (t->v != NULL)
		auth_free(t->v, t->n);
	t->v = NULL;
	t->n = 0;
}

int
auth_configure(const struct conf *c, char *err, size_t errlen)
{
	struct auth_table	t;

	if (auth_prepare(c, &t, err, errlen) != 0)
		return (-1);
	auth_commit(&t);
	return (0);
}

int
auth_validate(const struct conf *c, int *any, char *err, size_t errlen)
{
	struct credential	*v;
	size_t			 n, i;

	if (auth_build(c, &v, &n, err, errlen) != 0)
		return (-1);
	*any = 0;
	for (i = 0; i < n; i++)
		*any |= v[i].rights;
	auth_free(v, n);
	return (0);
}

/*
 * MCP needs a token once one admits to it.  The metrics need one as soon
 * as any token is configured, whatever it admits to: they are never more
 * open than MCP, and clients = ( ... ) with no metrics right among them
 * closes them rather than opening them.
 */
int
auth_required(int right)
{
	/* With OAuth every request is someone's. */
	if (oauth_enabled())
		return (1);
	if (right == AUTH_MCP)
		return ((any_rights & AUTH_MCP) != 0);
	return (ncreds > 0);
}

/*
 * Compare a presented token with one of ours in time that depends only on
 * the presented token's length, never on ours or where they differ.
 */
static uint64_t
auth_equal(const char *a, size_t alen, const char *b)
{
	size_t		blen = strlen(b), i, j = 0;
	unsigned char	diff = alen != blen;

	/* j wraps at blen without a division or a branch: an OAuth access
	 * token is a thousand bytes, compared with every static token. */
	for (i = 0; i < alen; i++) {
		diff |= (unsigned char)(a[i] ^ b[j]);
		j++;
		j &= 0 - (size_t)(j < blen);
	}
	return (diff == 0);
}

int
auth_check(const char *token, size_t len, uint64_t *id, const char **client,
    int *rights)
{
	uint64_t	found = 0, eq;
	size_t		i;

	*client = NULL;
	*rights = 0;
	for (i = 0; i < ncreds; i++) {
		eq = auth_equal(token, len, creds[i].secret);
		found |= (0 - eq) & creds[i].id;
		if (eq) {
			*client = creds[i].client;
			*rights = creds[i].rights;
		}
	}
	*id = found;
	return (found != 0 ? 0 : -1);
}

int
auth_client(uint64_t id, const char **client)
{
	size_t	i;

	*client = NULL;
	for (i = 0; i < ncreds; i++) {
		if (creds[i].id == id) {
			*client = creds[i].client;
			return (0);
		}
	}
	return (-1);
}

/* Write the lock file at path with token, whole, mode 0600; -1 with err
 * set on failure.  The token is in no buffer left unwiped. */
static int
auth_lockfile_write(const char *path, const char *url, int port,
    const char *token, char *err, size_t errlen)
{
	json_t		*u;
	char		*jurl, *tmp, text[1024];
	int		 fd, n, r = -1;

	/* The URL JSON-encoded alone: jansson never sees the token. */
	u = json_string(url);
	jurl = json_dumps(u, JSON_ENCODE_ANY);
	json_decref(u);
	n = snprintf(text, sizeof text, "{\n  \"pid\": %ld,\n  \"url\": %s,\n"
	    "  \"port\": %d,\n  \"transport\": \"ws\",\n  \"authToken\": "
	    "\"%s\"\n}\n", (long)getpid(), jurl != NULL ? jurl : "null", port,
	    token);
	free(jurl);
	if (n < 0 || (size_t)n >= sizeof text) {
		explicit_bzero(text, sizeof text);
		snprintf(err, errlen, "ws_lockfile %s: the URL is too long",
		    path);
		return (-1);
	}
	xasprintf(&tmp, "%s.%ld.tmp", path, (long)getpid());
	/* Mode 0600 from the start; written whole, then renamed in place. */
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    0600);
	if (fd < 0)
		snprintf(err, errlen, "ws_lockfile %s: %s", tmp,
		    strerror(errno));
	else {
		errno = EIO;	/* a short write sets none */
		if (write(fd, text, (size_t)n) != n || fsync(fd) != 0)
			snprintf(err, errlen, "ws_lockfile %s: %s", tmp,
			    strerror(errno));
		else if (rename(tmp, path) != 0)
			snprintf(err, errlen, "ws_lockfile %s: %s", path,
			    strerror(errno));
		else
			r = 0;
		close(fd);
		if (r != 0)
			unlink(tmp);
	}
	explicit_bzero(text, sizeof text);
	free(tmp);
	return (r);
}

/* Remove the lock file we wrote, if any. */
static void
auth_lockfile_unlink(void)
{
	if (lock_path != NULL && unlink(lock_path) != 0 && errno != ENOENT)
		log_warn("ws_lockfile %s", lock_path);
	free(lock_path);
	lock_path = NULL;
	free(lock_url);
	lock_url = NULL;
}

/* Forget the lock file's token. */
static void
auth_lockfile_forget(void)
{
	if (lock_token != NULL) {
		explicit_bzero(lock_token, strlen(lock_token));
		free(lock_token);
		lock_token = NULL;
	}
}

/* Accept the lock file's token from now on: one more credential in the
 * table in use, no other token expanded again. */
static void
auth_lockfile_accept(void)
{
	struct auth_table	t;
	char			err[128];

	t.v = xreallocarray(creds, ncreds + 1, sizeof *creds);
	t.n = ncreds;
	if (auth_add(&t, lock_token, NULL, AUTH_MCP | AUTH_METRICS,
	    "ws_lockfile", err, sizeof err) != 0)
		fatalx("%s", err);	/* 64 hex digits: cannot be */
	creds = t.v;
	ncreds = t.n;
	any_rights |= AUTH_MCP | AUTH_METRICS;
}

int
auth_lockfile_apply(const struct conf *c, const char *bound, char *err,
    size_t errlen)
{
	unsigned char	 raw[32];
	char		 token[sizeof raw * 2 + 1], url[256];
	const char	*colon = strrchr(bound, ':');
	size_t		 i;
	int		 had = lock_token != NULL;

	/* The table in use has the token only if c wants a lock file. */
	if (!auth_lockfile_wanted(c) || colon == NULL) {
		if (c->ws_lockfile != NULL)
			snprintf(err, errlen, "ws_lockfile: no WebSocket "
			    "endpoint (ws_path is empty), not written%s",
			    had ? "; the file is removed and its token no "
			    "longer accepted" : "");
		else if (had)
			snprintf(err, errlen, "ws_lockfile removed: %s is "
			    "removed and its token no longer accepted",
			    lock_path);
		auth_lockfile_unlink();
		auth_lockfile_forget();
		return (c->ws_lockfile != NULL || had ? 1 : 0);
	}
	snprintf(url, sizeof url, "ws://%s%s", bound, c->ws_path);
	/* Where and what it already says: nothing to do. */
	if (had && strcmp(lock_path, c->ws_lockfile) == 0 &&
	    strcmp(lock_url, url) == 0)
		return (0);
	/* A fresh token at the start; the same one when it moves. */
	if (!had) {
		fill_random(raw, sizeof raw);
		for (i = 0; i < sizeof raw; i++)
			snprintf(token + 2 * i, 3, "%02x", raw[i]);
		explicit_bzero(raw, sizeof raw);
	} else
		snprintf(token, sizeof token, "%s", lock_token);
	if (auth_lockfile_write(c->ws_lockfile, url, atoi(colon + 1), token,
	    err, errlen) != 0) {
		explicit_bzero(token, sizeof token);
		return (-1);
	}
	if (had && strcmp(lock_path, c->ws_lockfile) != 0 &&
	    unlink(lock_path) != 0 && errno != ENOENT)
		log_warn("ws_lockfile %s, moved to %s: not removed, and its "
		    "token is still accepted", lock_path, c->ws_lockfile);
	free(lock_path);
	lock_path = xstrdup(c->ws_lockfile);
	free(lock_url);
	lock_url = xstrdup(url);
	if (!had) {
		lock_token = xstrdup(token);
		auth_lockfile_accept();
	}
	explicit_bzero(token, sizeof token);
	log_info("wrote %s for %s", lock_path, url);
	return (0);
}

void
auth_lockfile_remove(void)
{
	auth_lockfile_unlink();
	auth_lockfile_forget();
}
