/* SPDX-License-Identifier: ISC */
/*
 * The gateway's login to a remote upstream (issue 23): the supervisor's
 * half.  The worker does the OAuth work (worker/upstream_login.c); here
 * are what mcpctl asks (login, login_status, login_code, tokens,
 * token_revoke), the redirect's way back (GET on oauth_client's
 * redirect_uri path, /oauth/callback by default) and the Client ID
 * Metadata Document, and the record the worker asks us to keep: held in
 * memory, sealed under state_dir/oauth (token_store.c) when there is a
 * state directory, and handed to every new worker in its CONFIG frame.
 *
 * The record is the worker's JSON.  We read only what mcpctl tokens
 * shows (issuer, registration, expiry, scope, whether a refresh token is
 * held); tokens and secrets never leave it but in a CONFIG frame, and are
 * wiped when it is dropped.
 */
#include "config.h"

#include <sys/stat.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>
#include <openssl/crypto.h>

#include "iochan.h"
#include "log.h"
#include "secret.h"
#include "supervisor.h"
#include "token_store.h"
#include "uplogin.h"
#include "xmalloc.h"

#define LOGIN_ANSWER_MS		30000	/* the worker's first answer */
#define LOGIN_PENDING_MS	600000	/* a login waits this long */
#define LOGIN_RESPONSE_MAX	8192	/* what came back, pasted or not */
#define LOGIN_CALLBACK_PATH	"/oauth/callback"

static const char *const phase_names[] = {
	[LOGIN_IDLE] = "idle",
	[LOGIN_STARTING] = "starting",
	[LOGIN_WAITING] = "waiting",
	[LOGIN_EXCHANGING] = "exchanging",
	[LOGIN_DONE] = "done",
	[LOGIN_FAILED] = "failed",
};

/* The store, opened on first use; NULL: records are in memory only. */
static struct token_store	*store;
static char			*store_dir;	/* what it was opened on */
static int			 store_warned;

/* Wipe every string of a record, then drop it. */
void
uplogin_record_free(json_t *r)
{
	const char	*k;
	json_t		*v;

	if (r == NULL)
		return;
	json_object_foreach(r, k, v) {
		if (json_is_string(v))
			explicit_bzero((char *)json_string_value(v),
			    json_string_length(v));
	}
	json_decref(r);
}

/* Does an upstream reach its server over the network (a login is possible)? */
static int
remote(const struct upstream *up)
{
	return (up->sc->transport != TRANSPORT_STDIO);
}

/*
 * The store under the configured state directory, or NULL; made (its
 * directory and key) only to store something.
 */
struct token_store *
uplogin_store(int make)
{
	struct stat	 st;
	char		 err[512], *dir;

	if (store != NULL && store_dir != NULL &&
	    strcmp(store_dir, conf->state_dir) == 0)
		return (store);
	if (store != NULL)
		uplogin_store_close();
	if (stat(conf->state_dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		if (make && !store_warned)
			log_warnx("state_dir %s is not there: upstream OAuth "
			    "tokens are kept in memory only, and lost when the "
			    "daemon stops", conf->state_dir);
		store_warned |= make;
		return (NULL);
	}
	xasprintf(&dir, "%s/oauth", conf->state_dir);
	if (!make && stat(dir, &st) != 0) {
		free(dir);
		return (NULL);
	}
	if ((store = token_store_open(dir, base, err, sizeof err)) == NULL) {
		if (!store_warned)
			log_warnx("upstream OAuth tokens are kept in memory "
			    "only: %s", err);
		store_warned = 1;
		free(dir);
		return (NULL);
	}
	free(dir);
	store_dir = xstrdup(conf->state_dir);
	return (store);
}

void
uplogin_store_close(void)
{
	token_store_close(store);
	store = NULL;
	free(store_dir);
	store_dir = NULL;
	store_warned = 0;
}

/* The record of an upstream: loaded from the store once. */
static json_t *
record_get(struct upstream *up)
{
	struct token_store	*ts;
	unsigned char		*data;
	size_t			 len;
	char			 err[512];

	if (up->login.loaded)
		return (up->login.record);
	up->login.loaded = 1;
	if ((ts = uplogin_store(0)) == NULL)
		return (NULL);
	data = token_store_get(ts, up->sc->name, LOGIN_IDENTITY, &len, err,
	    sizeof err);
	if (data == NULL) {
		if (err[0] != '\0')
			log_warnx("upstream %s: stored OAuth tokens not used: "
			    "%s", up->sc->name, err);
		return (NULL);
	}
	up->login.record = json_loadb((const char *)data, len,
	    JSON_REJECT_DUPLICATES, NULL);
	explicit_bzero(data, len);
	free(data);
	if (!json_is_object(up->login.record)) {
		log_warnx("upstream %s: stored OAuth tokens not used: not a "
		    "JSON object", up->sc->name);
		json_decref(up->login.record);
		up->login.record = NULL;
	}
	return (up->login.record);
}

/* Keep a record (taken; NULL: none), in memory and in the store. */
static void
record_put(struct upstream *up, json_t *r)
{
	struct token_store	*ts;
	char			*text, err[512];

	uplogin_record_free(up->login.record);
	up->login.record = r;
	up->login.loaded = 1;
	if ((ts = uplogin_store(r != NULL)) == NULL)
		return;
	if (r == NULL) {
		if (token_store_delete(ts, up->sc->name, LOGIN_IDENTITY, err,
		    sizeof err) != 0)
			log_warnx("upstream %s: %s", up->sc->name, err);
		return;
	}
	if ((text = json_dumps(r, JSON_COMPACT)) == NULL)
		fatalx("json_dumps");
	if (token_store_put(ts, up->sc->name, LOGIN_IDENTITY, text,
	    strlen(text), err, sizeof err) != 0)
		log_warnx("upstream %s: OAuth tokens not stored (kept in "
		    "memory): %s", up->sc->name, err);
	explicit_bzero(text, strlen(text));
	free(text);
}

/* Where the authorization server sends the browser back. */
void
uplogin_redirect_uri(char *buf, size_t len)
{
	const char	*bound = listen_bound;

	if (conf->oauth_client != NULL &&
	    conf->oauth_client->redirect_uri != NULL) {
		snprintf(buf, len, "%s", conf->oauth_client->redirect_uri);
		return;
	}
	/* A wildcard listener is reached on loopback from this host. */
	if (strncmp(bound, "0.0.0.0:", 8) == 0)
		snprintf(buf, len, "http://127.0.0.1:%s" LOGIN_CALLBACK_PATH,
		    bound + 8);
	else if (strncmp(bound, "[::]:", 5) == 0)
		snprintf(buf, len, "http://[::1]:%s" LOGIN_CALLBACK_PATH,
		    bound + 5);
	else
		snprintf(buf, len, "http://%s" LOGIN_CALLBACK_PATH, bound);
}

/* The path part of a URL we made or checked ("/" if none). */
static const char *
url_path(const char *url, char *buf, size_t len)
{
	const char	*p = strstr(url, "://"), *slash;
	size_t		 n;

	if (p == NULL || (slash = strchr(p + 3, '/')) == NULL)
		return ("/");
	n = strcspn(slash, "?#");
	snprintf(buf, len, "%.*s", (int)n, slash);
	return (buf);
}

void
uplogin_config(struct upstream *up, json_t *cfg)
{
	json_t	*client, *r;
	char	 uri[512];

	if (!remote(up))
		return;
	uplogin_redirect_uri(uri, sizeof uri);
	client = json_pack("{s:s, s:s}", "redirect_uri", uri, "client_name",
	    conf->oauth_client != NULL &&
	    conf->oauth_client->client_name != NULL ?
	    conf->oauth_client->client_name : "mcp-supervisor");
	if (conf->oauth_client != NULL &&
	    conf->oauth_client->client_metadata_url != NULL)
		json_object_set_new(client, "client_metadata_url",
		    json_string(conf->oauth_client->client_metadata_url));
	json_object_set_new(cfg, "oauth_client", client);
	if ((r = record_get(up)) != NULL)
		json_object_set(cfg, "oauth_record", r);
}

/* Set the login's phase; error may be NULL. */
static void
phase_set(struct upstream *up, enum uplogin_phase phase, const char *error)
{
	up->login.phase = phase;
	up->login.changed = now_ms();
	snprintf(up->login.error, sizeof up->login.error, "%s",
	    error != NULL ? error : "");
	if (phase != LOGIN_WAITING && phase != LOGIN_EXCHANGING) {
		/* The URL holds the state: either completes the login. */
		secret_free(up->login.url);
		up->login.url = NULL;
		secret_free(up->login.state);
		up->login.state = NULL;
	}
}

/* The worker saved its record. */
static void
frame_save(struct upstream *up, json_t *msg)
{
	json_t	*r = json_object_get(msg, "record");

	if (json_is_null(r)) {
		record_put(up, NULL);
		log_info("upstream %s: oauth: stored tokens forgotten",
		    up->sc->name);
		return;
	}
	if (!json_is_object(r)) {
		log_warnx("upstream %s: OAUTH_SAVE without a record",
		    up->sc->name);
		return;
	}
	record_put(up, json_incref(r));
	/* msg still holds it: its strings are wiped with up's copy later. */
	log_info("upstream %s: oauth: %s stored", up->sc->name,
	    json_object_get(r, "access_token") != NULL ? "tokens" :
	    "the client registration");
}

/* The worker says how the login goes. */
static void
frame_progress(struct upstream *up, json_t *msg)
{
	const char	*phase = NULL, *url = NULL, *state = NULL,
			*error = NULL, *scope = NULL;
	json_int_t	 expires = 0;

	if (json_unpack(msg, "{s:s, s?s, s?s, s?s, s?s, s?I}", "phase",
	    &phase, "url", &url, "state", &state, "error", &error, "scope",
	    &scope, "expires_at", &expires) != 0) {
		log_warnx("upstream %s: a malformed OAUTH_PROGRESS",
		    up->sc->name);
		return;
	}
	if (strcmp(phase, "url") == 0 && url != NULL && state != NULL) {
		phase_set(up, LOGIN_WAITING, NULL);
		up->login.url = xstrdup(url);
		up->login.state = xstrdup(state);
		log_info("upstream %s: login: waiting for the authorization "
		    "to come back", up->sc->name);
	} else if (strcmp(phase, "done") == 0) {
		phase_set(up, LOGIN_DONE, NULL);
		free(up->login.scope);
		up->login.scope = scope != NULL ? xstrdup(scope) : NULL;
		up->login.expires_at = expires;
		log_info("upstream %s: login: done%s%s", up->sc->name,
		    scope != NULL ? ", scope " : "", scope != NULL ? scope : "");
	} else if (strcmp(phase, "failed") == 0) {
		phase_set(up, LOGIN_FAILED, error != NULL ? error :
		    "no reason given");
		log_warnx("upstream %s: login failed: %s", up->sc->name,
		    up->login.error);
	} else
		log_warnx("upstream %s: OAUTH_PROGRESS of an unknown phase",
		    up->sc->name);
}

int
uplogin_frame(struct upstream *up, const struct frame_hdr *hdr,
    struct evbuffer *in)
{
	json_t		*msg;
	const char	*why;

	/* Records (tokens) and login URLs (states) come in these. */
	if ((msg = frame_take_json_secret(in, hdr, &why)) == NULL) {
		log_warnx("upstream %s: %s frame: %s", up->sc->name,
		    msg_type_name(hdr->type), why);
		return (-1);
	}
	if (users_frame(up, hdr->type, msg))
		;	/* a per-user identity's (uplogin_users.c) */
	else if (hdr->type == MSG_OAUTH_SAVE)
		frame_save(up, msg);
	else
		frame_progress(up, msg);
	secret_wipe_tree(msg);
	json_decref(msg);
	return (0);
}

/* Send a login frame to a running worker; -1 if there is none. */
int
uplogin_send(struct upstream *up, uint16_t type, json_t *payload)
{
	if (up->proc.ch == NULL || up->proc.pid <= 0 ||
	    (up->state != UPSTREAM_STARTING && up->state != UPSTREAM_READY &&
	    up->state != UPSTREAM_LOGIN)) {
		json_decref(payload);
		return (-1);
	}
	/* A login's frames carry codes, states and tokens. */
	frame_add_json_secret(iochan_output(up->proc.ch), type, 0, 0, payload);
	json_decref(payload);
	return (0);
}

/* Why a login under way has failed by now, or NULL if it has not. */
static const char *
phase_lapsed(const struct upstream *up)
{
	int64_t	age = now_ms() - up->login.changed;

	switch (up->login.phase) {
	case LOGIN_STARTING:
	case LOGIN_WAITING:
	case LOGIN_EXCHANGING:
		if (up->proc.pid <= 0)
			return ("the upstream's worker exited");
		if (up->login.phase == LOGIN_STARTING &&
		    age > LOGIN_ANSWER_MS)
			return ("the upstream's worker did not answer");
		if (age > LOGIN_PENDING_MS)
			return ("the login expired (10 minutes)");
		return (NULL);
	default:
		return (NULL);
	}
}

/* A login that has waited too long, or whose worker went, has failed. */
static void
phase_expire(struct upstream *up)
{
	const char	*why;

	if ((why = phase_lapsed(up)) != NULL)
		phase_set(up, LOGIN_FAILED, why);
}

/* The upstream a login command names, or NULL with *err the reply. */
static struct upstream *
login_upstream(json_t *req, json_t **err)
{
	const char	*name;
	struct upstream	*up;

	*err = NULL;
	if (json_unpack(req, "{s:s}", "name", &name) != 0) {
		*err = control_error("which upstream?");
		return (NULL);
	}
	if ((up = upstream_find(name)) == NULL) {
		*err = control_error("no upstream named %s", name);
		return (NULL);
	}
	if (!remote(up)) {
		*err = control_error("upstream %s is a stdio upstream: it has no "
		    "OAuth login", name);
		return (NULL);
	}
	return (up);
}

static json_t *
login_start(struct upstream *up)
{
	char	uri[512];

	if (up->sc->oauth != NULL &&
	    up->sc->oauth->grant == UPOAUTH_CLIENT_CREDENTIALS)
		return (control_error("upstream %s gets its tokens by client "
		    "credentials: it needs no login", up->sc->name));
	if (users_per_user(up))
		return (control_error("upstream %s has per-user identities: "
		    "each user logs in from their own client when a call "
		    "needs it", up->sc->name));
	if (uplogin_send(up, MSG_OAUTH_LOGIN, json_object()) != 0)
		return (control_error("upstream %s is %s: mcpctl start %s first",
		    up->sc->name, upstream_state_name(up->state),
		    up->sc->name));
	phase_set(up, LOGIN_STARTING, NULL);
	uplogin_redirect_uri(uri, sizeof uri);
	log_info("upstream %s: login started (mcpctl)", up->sc->name);
	return (json_pack("{s:b, s:s}", "ok", 1, "redirect_uri", uri));
}

static json_t *
login_status(struct upstream *up)
{
	json_t	*o;
	char	 uri[512];

	phase_expire(up);
	uplogin_redirect_uri(uri, sizeof uri);
	o = json_pack("{s:b, s:s, s:s, s:s}", "ok", 1, "phase",
	    phase_names[up->login.phase], "redirect_uri", uri, "state",
	    upstream_state_name(up->state));
	if (up->login.url != NULL)
		json_object_set_new(o, "url", json_string(up->login.url));
	if (up->login.error[0] != '\0')
		json_object_set_new(o, "error", json_string(up->login.error));
	if (up->login.phase == LOGIN_DONE) {
		if (up->login.scope != NULL)
			json_object_set_new(o, "scope",
			    json_string(up->login.scope));
		if (up->login.expires_at > 0)
			json_object_set_new(o, "expires_at",
			    json_integer(up->login.expires_at));
	}
	return (o);
}

/* Hand what came back to the worker waiting for it. */
static int
login_deliver(struct upstream *up, const char *response)
{
	if (uplogin_send(up, MSG_OAUTH_CODE, json_pack("{s:s}", "response",
	    response)) != 0)
		return (-1);
	phase_set(up, LOGIN_EXCHANGING, NULL);
	return (0);
}

static json_t *
login_code(struct upstream *up, json_t *req)
{
	const char	*response;

	phase_expire(up);
	if (json_unpack(req, "{s:s}", "response", &response) != 0 ||
	    *response == '\0')
		return (control_error("login_code: no response given"));
	if (strlen(response) > LOGIN_RESPONSE_MAX)
		return (control_error("login_code: over %d bytes",
		    LOGIN_RESPONSE_MAX));
	if (up->login.phase != LOGIN_WAITING)
		return (control_error("no login of upstream %s waits for a code "
		    "(mcpctl login %s starts one)", up->sc->name,
		    up->sc->name));
	if (login_deliver(up, response) != 0)
		return (control_error("upstream %s is %s", up->sc->name,
		    upstream_state_name(up->state)));
	return (json_pack("{s:b}", "ok", 1));
}

/* What mcpctl tokens shows of one record: never a token. */
json_t *
uplogin_token_entry(struct upstream *up, const char *identity, json_t *r)
{
	json_t		*o, *v;
	json_int_t	 exp;
	static const char *const shown[] = {
		"issuer", "registered", "scope", "grant"
	};
	size_t		 i;

	o = json_pack("{s:s, s:s}", "upstream", up->sc->name, "identity",
	    identity);
	for (i = 0; i < sizeof shown / sizeof shown[0]; i++) {
		if (json_is_string(v = json_object_get(r, shown[i])))
			json_object_set_new(o, shown[i],
			    json_string(json_string_value(v)));
	}
	if (json_is_integer(v = json_object_get(r, "expires_at")))
		json_object_set_new(o, "expires_at", json_integer(
		    json_integer_value(v)));
	if (json_is_integer(v = json_object_get(r, "obtained")))
		json_object_set_new(o, "obtained", json_integer(
		    json_integer_value(v)));
	json_object_set_new(o, "refresh", json_boolean(
	    json_object_get(r, "refresh_token") != NULL));
	exp = json_integer_value(json_object_get(r, "expires_at"));
	if (json_object_get(r, "access_token") == NULL)
		v = json_string("none");
	else if (exp > 0 && exp <= (json_int_t)time(NULL))
		v = json_string("expired");
	else
		v = json_string("valid");
	json_object_set_new(o, "token", v);
	json_object_set_new(o, "upstream_state",
	    json_string(upstream_state_name(up->state)));
	return (o);
}

static json_t *
tokens_list(void)
{
	struct stat	 st;
	json_t		*a = json_array(), *r;
	size_t		 i;

	for (i = 0; i < nupstreams; i++) {
		if (!remote(upstreams[i]))
			continue;
		if ((r = record_get(upstreams[i])) != NULL)
			json_array_append_new(a, uplogin_token_entry(
			    upstreams[i], LOGIN_IDENTITY, r));
		if (users_per_user(upstreams[i]))
			users_tokens(upstreams[i], a);
	}
	return (json_pack("{s:b, s:o, s:b}", "ok", 1, "tokens", a, "stored",
	    stat(conf->state_dir, &st) == 0 && S_ISDIR(st.st_mode)));
}

/* Drop the tokens of a record, keeping a client registration. */
static json_t *
record_without_tokens(json_t *r)
{
	json_t	*c = json_deep_copy(r);
	static const char *const drop[] = {
		"access_token", "refresh_token", "expires_at", "scope",
		"obtained"
	};
	size_t	 i;

	for (i = 0; i < sizeof drop / sizeof drop[0]; i++)
		json_object_del(c, drop[i]);
	return (c);
}

static json_t *
token_revoke(struct upstream *up, json_t *req)
{
	json_t		*r;
	const char	*reg, *id = NULL;
	int		 told;

	if (json_unpack(req, "{s:s}", "identity", &id) == 0 &&
	    strcmp(id, LOGIN_IDENTITY) == 0)
		id = NULL;
	if (users_per_user(up))
		return (users_revoke(up, id));
	if (id != NULL)
		return (control_error("upstream %s has only the gateway's "
		    "identity", up->sc->name));

	if ((r = record_get(up)) == NULL)
		return (control_error("upstream %s has no stored tokens",
		    up->sc->name));
	/* Gone from here at once; the worker revokes what it holds.  A
	 * client registration of ours (DCR) is kept for the next login. */
	reg = json_string_value(json_object_get(r, "registered"));
	record_put(up, reg != NULL && strcmp(reg, "dcr") == 0 ?
	    record_without_tokens(r) : NULL);
	told = uplogin_send(up, MSG_OAUTH_REVOKE, json_object()) == 0;
	log_info("upstream %s: oauth: tokens revoked (mcpctl)%s", up->sc->name,
	    told ? "" : "; its worker is not running, so not at the server");
	return (json_pack("{s:b, s:b}", "ok", 1, "at_server", told));
}

json_t *
uplogin_control(const char *cmd, json_t *req)
{
	struct upstream	*up;
	json_t		*err;

	if (strcmp(cmd, "tokens") == 0)
		return (tokens_list());
	if ((up = login_upstream(req, &err)) == NULL)
		return (err);
	if (strcmp(cmd, "login") == 0)
		return (login_start(up));
	if (strcmp(cmd, "login_status") == 0)
		return (login_status(up));
	if (strcmp(cmd, "login_code") == 0)
		return (login_code(up, req));
	return (token_revoke(up, req));
}

int
uplogin_command(const char *cmd)
{
	return (strcmp(cmd, "login") == 0 || strcmp(cmd, "login_status") == 0 ||
	    strcmp(cmd, "login_code") == 0 || strcmp(cmd, "tokens") == 0 ||
	    strcmp(cmd, "token_revoke") == 0);
}

/* The path the redirect comes back to. */
const char *
uplogin_callback_path(char *buf, size_t len)
{
	char	uri[512];

	uplogin_redirect_uri(uri, sizeof uri);
	return (url_path(uri, buf, len));
}

/* The path the Client ID Metadata Document is served at, or NULL. */
static const char *
cimd_path(char *buf, size_t len)
{
	if (conf->oauth_client == NULL ||
	    conf->oauth_client->client_metadata_url == NULL)
		return (NULL);
	return (url_path(conf->oauth_client->client_metadata_url, buf, len));
}

int
uplogin_path(const struct http_request *req)
{
	char		 buf[512];
	const char	*p;

	if (strcmp(req->path, uplogin_callback_path(buf, sizeof buf)) == 0)
		return (1);
	return ((p = cimd_path(buf, sizeof buf)) != NULL &&
	    strcmp(req->path, p) == 0);
}

/* Answer the browser with a short page. */
static void
page(struct http_conn *c, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
page(struct http_conn *c, int status, const char *fmt, ...)
{
	va_list	ap;
	char	msg[1024];
	int	n;

	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof msg)
		n = sizeof msg - 1;
	http_reply(c, status, "text/plain; charset=utf-8", NULL, msg,
	    (size_t)n);
}

/* A query parameter's raw value (not decoded) into buf; 0 if absent. */
static int
query_param(const char *q, const char *name, char *buf, size_t len)
{
	size_t	 n = strlen(name), v;

	while (*q != '\0') {
		if (strncmp(q, name, n) == 0 && q[n] == '=') {
			v = strcspn(q + n + 1, "&");
			if (v >= len)
				return (0);
			memcpy(buf, q + n + 1, v);
			buf[v] = '\0';
			return (1);
		}
		q += strcspn(q, "&");
		if (*q == '&')
			q++;
	}
	return (0);
}

/* Keep what may be shown of a value: printable ASCII, cut. */
static void
printable(char *s)
{
	for (; *s != '\0'; s++) {
		if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
			*s = '?';
	}
}

/*
 * The redirect of a per-user identity's login: to its worker, once, if it
 * came back to the browser that proved to be that user (else whoever was
 * sent the authorization URL would log in as the one who asked).
 */
static void
serve_user(struct http_conn *c, struct http_request *req, struct upstream *up,
    struct user_login *l)
{
	char	*id, error[128];

	if (!connect_same_browser(req, l)) {
		/* Dropped: its code must not work in the right browser
		 * later either (pasted back to whoever sent the link). */
		log_warnx("upstream %s: login of %s: the authorization came "
		    "back to a browser that did not open the login's link as "
		    "that user: refused, and the login dropped (the next call "
		    "asks again)", up->sc->name, l->identity);
		users_login_abort(up, l->identity, "the login's "
		    "authorization came back to another browser; call again "
		    "for a new link");
		page(c, 403, "mcp-supervisor: this authorization was not "
		    "started in this browser by the user it is for, and is "
		    "refused. Open only a login link your own MCP client "
		    "shows you.\n");
		return;
	}
	id = xstrdup(l->identity);
	users_login_done(up, id);	/* answered: once only (l is freed) */
	if (uplogin_send(up, MSG_OAUTH_CODE, json_pack("{s:s, s:s}",
	    "response", req->query, "identity", id)) != 0) {
		page(c, 503, "mcp-supervisor: upstream %s is %s; call its "
		    "tool again to log in again\n", up->sc->name,
		    upstream_state_name(up->state));
		free(id);
		return;
	}
	if (query_param(req->query, "error", error, sizeof error)) {
		printable(error);
		log_info("upstream %s: login of %s: the authorization server "
		    "answered %s", up->sc->name, id, error);
		page(c, 200, "mcp-supervisor: the authorization server "
		    "refused the login to upstream %s (%s).\n", up->sc->name,
		    error);
		free(id);
		return;
	}
	log_info("upstream %s: login of %s: the authorization came back",
	    up->sc->name, id);
	page(c, 200, "mcp-supervisor: the authorization for upstream %s "
	    "arrived, and the gateway is exchanging it for a token. You may "
	    "close this window and go back to your client.\n", up->sc->name);
	free(id);
}

/*
 * The redirect came back: find the login whose state it carries (each
 * compared in full: the state is what proves the response is ours) and
 * give the worker the whole query.  The worker checks it again.
 */
static void
serve_callback(struct http_conn *c, struct http_request *req)
{
	struct upstream		*up = NULL;
	struct user_login	*l;
	char			 state[512], error[128];
	size_t			 i;

	if (connect_serve(c, req))
		return;
	if (strcmp(req->method, "GET") != 0) {
		page(c, 405, "the OAuth callback takes GET\n");
		return;
	}
	if (strlen(req->query) > LOGIN_RESPONSE_MAX ||
	    !query_param(req->query, "state", state, sizeof state)) {
		log_warnx("oauth callback: no state, or too long");
		page(c, 400, "mcp-supervisor: this is not an authorization "
		    "response (no state)\n");
		return;
	}
	for (i = 0; i < nupstreams; i++) {
		phase_expire(upstreams[i]);
		if (upstreams[i]->login.phase == LOGIN_WAITING &&
		    upstreams[i]->login.state != NULL &&
		    strlen(upstreams[i]->login.state) == strlen(state) &&
		    CRYPTO_memcmp(upstreams[i]->login.state, state,
		    strlen(state)) == 0) {
			up = upstreams[i];
			break;
		}
	}
	if (up == NULL && (l = users_login_by_state(state, &up)) != NULL) {
		serve_user(c, req, up, l);
		return;
	}
	if (up == NULL) {
		log_warnx("oauth callback: no login waits for its state");
		page(c, 400, "mcp-supervisor: no login waits for this "
		    "authorization response: it expired, was answered "
		    "already, or another one was started (mcpctl login "
		    "UPSTREAM starts again)\n");
		return;
	}
	if (login_deliver(up, req->query) != 0) {
		page(c, 503, "mcp-supervisor: upstream %s is %s; mcpctl "
		    "login %s starts again\n", up->sc->name,
		    upstream_state_name(up->state), up->sc->name);
		return;
	}
	if (query_param(req->query, "error", error, sizeof error)) {
		printable(error);
		log_info("upstream %s: login: the authorization server "
		    "answered %s", up->sc->name, error);
		page(c, 200, "mcp-supervisor: the authorization server "
		    "refused the login to upstream %s (%s). mcpctl login %s "
		    "starts again.\n", up->sc->name, error, up->sc->name);
		return;
	}
	log_info("upstream %s: login: the authorization came back",
	    up->sc->name);
	page(c, 200, "mcp-supervisor: the authorization for upstream %s "
	    "arrived, and the gateway is exchanging it for a token. You may "
	    "close this window; mcpctl login shows the outcome.\n",
	    up->sc->name);
}

/* The Client ID Metadata Document the client_metadata_url names. */
static void
serve_cimd(struct http_conn *c)
{
	json_t	*doc;
	char	*text, uri[512];

	uplogin_redirect_uri(uri, sizeof uri);
	doc = json_pack("{s:s, s:s, s:[s], s:[s, s], s:[s], s:s}",
	    "client_id", conf->oauth_client->client_metadata_url,
	    "client_name", conf->oauth_client->client_name != NULL ?
	    conf->oauth_client->client_name : "mcp-supervisor",
	    "redirect_uris", uri,
	    "grant_types", "authorization_code", "refresh_token",
	    "response_types", "code",
	    "token_endpoint_auth_method", "none");
	if ((text = json_dumps(doc, JSON_COMPACT)) == NULL)
		fatalx("json_dumps");
	json_decref(doc);
	http_reply(c, 200, "application/json", NULL, text, strlen(text));
	free(text);
}

void
uplogin_serve(struct http_conn *c, struct http_request *req)
{
	char	buf[512];

	if (strcmp(req->path, uplogin_callback_path(buf, sizeof buf)) == 0)
		serve_callback(c, req);
	else if (strcmp(req->method, "GET") != 0)
		page(c, 405, "the client metadata document takes GET\n");
	else
		serve_cimd(c);
}

void
uplogin_status_json(const struct upstream *up, json_t *o)
{
	char	cmd[256];

	if (up->state == UPSTREAM_LOGIN) {
		snprintf(cmd, sizeof cmd, "mcpctl login %s", up->sc->name);
		json_object_set_new(o, "login_needed", json_string(cmd));
	}
	if (up->login.phase != LOGIN_IDLE)
		json_object_set_new(o, "login", json_string(phase_lapsed(up) !=
		    NULL ? "failed" : phase_names[up->login.phase]));
}

void
uplogin_free(struct upstream *up)
{
	uplogin_record_free(up->login.record);
	up->login.record = NULL;
	secret_free(up->login.url);
	secret_free(up->login.state);
	free(up->login.scope);
	users_free(up);
}
