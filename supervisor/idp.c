/* SPDX-License-Identifier: ISC */
/*
 * OAuth issuers: one mcp-idp worker per entry of oauth = { issuers = (
 * ... ) }, started, watched and restarted by proc.c as the LLM providers'
 * workers are, so that no request to an authorization server runs in the
 * supervisor's loop.  The worker sends the issuer's JWK Set whenever it
 * fetched one (IDP_KEYS), which is parsed here again with
 * jose_jwks_parse and replaces the set we have; a set that does not
 * parse, a server that is down, a worker that dies, all leave the set we
 * have in place: tokens signed by known keys keep working.
 *
 * A token that names a kid we do not know asks for the keys again
 * (idp_refresh): at most one request per IDP_REFRESH_MS reaches the
 * worker, which bounds it again; whoever asks while one is under way
 * waits for its answer, at most IDP_WAIT_MS, and at most IDP_WAITERS of
 * them.  Opaque tokens are introspected by the worker (idp_introspect),
 * tag-matched, with the same bounds.  Callbacks never run from inside the
 * call that registers them: an answer that is known at once is given at
 * the next turn of the loop.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "idp_priv.h"
#include "iochan.h"
#include "jose.h"
#include "log.h"
#include "secret.h"
#include "supervisor.h"
#include "xmalloc.h"

#define IDP_FIRST_DELAY		1	/* seconds of backoff, doubling */
#define IDP_MAX_DELAY		60
#define IDP_HEALTHY_MS		60000	/* uptime that resets the backoff */
#define IDP_START_TIMEOUT	30	/* seconds to be ready */
#define IDP_FRAME_MAX		(JOSE_JWKS_MAX + 256 * 1024)
#define IDP_REFRESH_MS		30000	/* between refreshes asked for */
#define IDP_WAIT_MS		5000	/* a waiter's longest wait */
#define IDP_WAITERS		1024	/* waiting refreshes, per issuer */
#define IDP_ASKS		1024	/* introspections, per issuer */

const char		*idp_worker_path;

static struct idp	**idps;
static size_t		  nidps;
static uint64_t		  next_wait_id;

const char *const idp_state_names[] = {
	[IDP_STARTING] = "starting",
	[IDP_READY] = "ready",
	[IDP_BACKOFF] = "backoff",
	[IDP_STOPPED] = "stopped",
	[IDP_FAILED] = "failed",
};

static void	idp_spawn(void *);
static json_t	*idp_config(void *);
static int	idp_frame(void *, const struct frame_hdr *,
		    struct evbuffer *);
static void	idp_lost(void *);
static void	idp_start_timeout(void *);
static void	idp_exited(void *, int, const char *, enum proc_fate);

/* OAuth issuers' workers (mcp-idp) as proc.c sees them. */
static const struct proc_kind idp_kind = {
	.what = "issuer",
	.start = idp_spawn,
	.config = idp_config,
	.frame = idp_frame,
	.lost = idp_lost,
	.start_timeout = idp_start_timeout,
	.exited = idp_exited,
};

/* Copy an issuer's configuration (the caller frees with issuer_free). */
static struct oauth_issuer_conf *
issuer_copy(const struct oauth_issuer_conf *ic)
{
	struct oauth_issuer_conf	*c;

	c = xcalloc(1, sizeof *c);
	*c = *ic;
	c->issuer = xstrdup(ic->issuer);
	c->metadata_url = ic->metadata_url != NULL ?
	    xstrdup(ic->metadata_url) : NULL;
	c->jwks_uri = ic->jwks_uri != NULL ? xstrdup(ic->jwks_uri) : NULL;
	c->ca_file = ic->ca_file != NULL ? xstrdup(ic->ca_file) : NULL;
	c->introspection.client_id = ic->introspection.client_id != NULL ?
	    xstrdup(ic->introspection.client_id) : NULL;
	c->introspection.secret = ic->introspection.secret != NULL ?
	    xstrdup(ic->introspection.secret) : NULL;
	c->login.client_id = ic->login.client_id != NULL ?
	    xstrdup(ic->login.client_id) : NULL;
	c->login.secret = ic->login.secret != NULL ?
	    xstrdup(ic->login.secret) : NULL;
	return (c);
}

static void
issuer_free(struct oauth_issuer_conf *c)
{
	free(c->issuer);
	free(c->metadata_url);
	free(c->jwks_uri);
	free(c->ca_file);
	free(c->introspection.client_id);
	free(c->introspection.secret);
	free(c->login.client_id);
	free(c->login.secret);
	free(c);
}

static int
str_equal(const char *a, const char *b)
{
	return (a == b || (a != NULL && b != NULL && strcmp(a, b) == 0));
}

/* Would the worker do anything differently? */
static int
issuer_equal(const struct oauth_issuer_conf *a,
    const struct oauth_issuer_conf *b)
{
	return (str_equal(a->issuer, b->issuer) &&
	    str_equal(a->metadata_url, b->metadata_url) &&
	    str_equal(a->jwks_uri, b->jwks_uri) &&
	    str_equal(a->ca_file, b->ca_file) &&
	    a->refresh == b->refresh &&
	    str_equal(a->introspection.client_id,
	    b->introspection.client_id) &&
	    str_equal(a->introspection.secret, b->introspection.secret) &&
	    a->introspection.post == b->introspection.post &&
	    str_equal(a->login.client_id, b->login.client_id) &&
	    str_equal(a->login.secret, b->login.secret) &&
	    a->login.post == b->login.post);
}

struct idp *
idp_find(const char *issuer)
{
	size_t	i;

	for (i = 0; i < nidps; i++) {
		if (strcmp(idps[i]->ic->issuer, issuer) == 0)
			return (idps[i]);
	}
	return (NULL);
}

struct idp *
idp_nth(size_t i)
{
	return (i < nidps ? idps[i] : NULL);
}

size_t
idp_count(void)
{
	return (nidps);
}

const struct oauth_issuer_conf *
idp_conf(const struct idp *d)
{
	return (d->ic);
}

const struct jose_jwks *
idp_jwks(const struct idp *d)
{
	return (d->jwks);
}

static void
waiter_free(struct idp_waiter *w)
{
	event_free(w->ev);
	free(w);
}

/* Answer a waiter (it is off its list) and free it. */
static void
waiter_fire(struct idp_waiter *w, json_t *answer, const char *why)
{
	if (w->icb != NULL)
		w->icb(w->arg, answer, why);
	else
		w->cb(w->arg);
	waiter_free(w);
}

/* Answer every refresh waiter: the worker has answered, or is gone. */
static void
waiters_fire_all(struct idp *d)
{
	struct idp_waiters	 ready = TAILQ_HEAD_INITIALIZER(ready);
	struct idp_waiter	*w;

	/* A callback may ask again: it waits on the list made afresh. */
	TAILQ_CONCAT(&ready, &d->waiters, entry);
	d->nwaiters = 0;
	while ((w = TAILQ_FIRST(&ready)) != NULL) {
		TAILQ_REMOVE(&ready, w, entry);
		waiter_fire(w, NULL, NULL);
	}
}

/* Answer every introspection waiting with an error. */
static void
asks_fail_all(struct idp *d, const char *why)
{
	struct idp_waiter	*w;

	while ((w = TAILQ_FIRST(&d->asks)) != NULL) {
		TAILQ_REMOVE(&d->asks, w, entry);
		d->nasks--;
		d->introspection_errors++;
		waiter_fire(w, NULL, why);
	}
}

/* A waiter's time is up, or its answer was known at once. */
static void
waiter_timeout_cb(evutil_socket_t fd, short events, void *arg)
{
	struct idp_waiter	*w = arg;
	struct idp		*d = w->idp;

	if (w->icb == NULL) {
		TAILQ_REMOVE(&d->waiters, w, entry);
		d->nwaiters--;
		/* No answer in time: the worker no longer holds us up. */
		if (w->why == NULL)
			d->refreshing = 0;
		waiter_fire(w, NULL, NULL);
		return;
	}
	TAILQ_REMOVE(&d->asks, w, entry);
	d->nasks--;
	if (w->why == NULL) {
		w->why = "the issuer's worker did not answer in time";
		log_warnx("issuer %s: introspection: no answer within %d s",
		    d->ic->issuer, IDP_WAIT_MS / 1000);
	}
	d->introspection_errors++;
	waiter_fire(w, NULL, w->why);
}

/*
 * A new waiter on a list: answered within IDP_WAIT_MS, or at the next
 * turn of the loop if why is set (for keys: "now", for introspection the
 * error).
 */
static struct idp_waiter *
waiter_add(struct idp *d, struct idp_waiters *list, const char *why)
{
	struct idp_waiter	*w;
	struct timeval		 tv = { 0, 0 };

	w = xcalloc(1, sizeof *w);
	w->idp = d;
	w->id = ++next_wait_id;
	w->why = why;
	TAILQ_INSERT_TAIL(list, w, entry);
	if (list == &d->waiters)
		d->nwaiters++;
	else
		d->nasks++;
	w->ev = evtimer_new(base, waiter_timeout_cb, w);
	if (why == NULL) {
		tv.tv_sec = IDP_WAIT_MS / 1000;
		tv.tv_usec = (IDP_WAIT_MS % 1000) * 1000;
	}
	evtimer_add(w->ev, &tv);
	return (w);
}

uint64_t
idp_refresh(struct idp *d, void (*cb)(void *), void *arg)
{
	struct idp_waiter	*w;
	int64_t			 now = now_ms();

	if (d->refreshing && d->nwaiters < IDP_WAITERS) {
		w = waiter_add(d, &d->waiters, NULL);
	} else if (d->refreshing || d->proc.ch == NULL ||
	    d->state != IDP_READY || (d->refresh_sent != 0 &&
	    now - d->refresh_sent < IDP_REFRESH_MS)) {
		/* Full, no worker, or too soon: decide with what we have. */
		d->refreshes_limited++;
		w = waiter_add(d, &d->waiters, "now");
	} else {
		d->refreshing = 1;
		d->refresh_sent = now;
		d->refreshes++;
		log_debug("issuer %s: keys asked for", d->ic->issuer);
		frame_add(iochan_output(d->proc.ch), MSG_IDP_REFRESH, 0, 0,
		    "{}", 2);
		w = waiter_add(d, &d->waiters, NULL);
	}
	w->cb = cb;
	w->arg = arg;
	return (w->id);
}

void
idp_wait_cancel(struct idp *d, uint64_t id)
{
	struct idp_waiter	*w;

	TAILQ_FOREACH(w, &d->waiters, entry) {
		if (w->id == id) {
			TAILQ_REMOVE(&d->waiters, w, entry);
			d->nwaiters--;
			waiter_free(w);
			return;
		}
	}
	TAILQ_FOREACH(w, &d->asks, entry) {
		if (w->id == id) {
			TAILQ_REMOVE(&d->asks, w, entry);
			d->nasks--;
			waiter_free(w);
			return;
		}
	}
}

/*
 * Ask the worker something answered by tag (type, o taken, its string
 * members wiped once sent): cb(arg, answer or NULL, error) within
 * IDP_WAIT_MS.
 */
static uint64_t
idp_ask(struct idp *d, uint16_t type, json_t *o,
    void (*cb)(void *, json_t *, const char *), void *arg)
{
	struct idp_waiter	*w;
	const char		*why = NULL;

	if (d->proc.ch == NULL || d->state != IDP_READY)
		why = "the issuer's worker is not running";
	else if (d->nasks >= IDP_ASKS)
		why = "too many requests to the issuer waiting";
	if (why != NULL) {
		/* Counted as an error when it fires. */
		w = waiter_add(d, &d->asks, why);
	} else {
		if (++d->next_tag == 0)
			d->next_tag = 1;
		w = waiter_add(d, &d->asks, NULL);
		w->tag = d->next_tag;
		frame_add_json_secret(iochan_output(d->proc.ch), type, 0,
		    w->tag, o);
	}
	/* Our copies of what it carries go now. */
	secret_wipe_json(o);
	json_decref(o);
	w->icb = cb;
	w->arg = arg;
	return (w->id);
}

uint64_t
idp_introspect(struct idp *d, const char *token,
    void (*cb)(void *, json_t *, const char *), void *arg)
{
	if (d->ic->introspection.client_id == NULL)
		return (0);
	d->introspections++;
	return (idp_ask(d, MSG_IDP_INTROSPECT, json_pack("{s:s}", "token",
	    token), cb, arg));
}

uint64_t
idp_exchange(struct idp *d, const char *code, const char *verifier,
    const char *redirect_uri, void (*cb)(void *, json_t *, const char *),
    void *arg)
{
	json_t	*o;

	if (d->ic->login.client_id == NULL)
		return (0);
	o = json_pack("{s:s, s:s, s:s}", "code", code, "code_verifier",
	    verifier, "redirect_uri", redirect_uri);
	if (conf->oauth != NULL)
		json_object_set_new(o, "resource",
		    json_string(conf->oauth->resource));
	return (idp_ask(d, MSG_IDP_EXCHANGE, o, cb, arg));
}

const char *
idp_authorization_endpoint(const struct idp *d)
{
	return (d->authorization_endpoint);
}

int
idp_keyless(const struct idp *d)
{
	return (d->keyless);
}

void
idp_set_jwks(struct idp *d, struct jose_jwks *set)
{
	jose_jwks_free(d->jwks);
	d->jwks = set;
	d->nkeys = jose_jwks_count(set);
	d->fetched = time(NULL);
	d->key_sets++;
}

/* Record how the server is (never a secret: the worker says none). */
static void
idp_server(struct idp *d, int ok, const char *error)
{
	if (ok) {
		if (d->server == 0)
			log_info("issuer %s: reachable again", d->ic->issuer);
		d->server = 1;
		return;
	}
	if (d->server != 0 || d->server_error == NULL ||
	    strcmp(d->server_error, error) != 0)
		log_warnx("issuer %s: %s%s", d->ic->issuer, error,
		    d->jwks != NULL ? " (the keys we have are kept)" : "");
	d->server = 0;
	free(d->server_error);
	d->server_error = xstrdup(error);
	d->server_error_at = time(NULL);
}

/* Keep what the metadata says we use. */
static void
idp_metadata(struct idp *d, json_t *md)
{
	const char	*v;

	v = json_string_value(json_object_get(md, "introspection_endpoint"));
	free(d->introspection_endpoint);
	d->introspection_endpoint = v != NULL ? xstrdup(v) : NULL;
	v = json_string_value(json_object_get(md, "authorization_endpoint"));
	free(d->authorization_endpoint);
	d->authorization_endpoint = v != NULL ? xstrdup(v) : NULL;
}

/* An IDP_KEYS frame: the worker's new set, parsed again here. */
static void
idp_keys(struct idp *d, json_t *msg)
{
	struct jose_jwks	*set;
	json_t			*md;
	char			*text, why[JOSE_WHY_MAX], err[256];

	md = json_object_get(msg, "metadata");
	if (json_is_true(json_object_get(msg, "keyless"))) {
		/* Opaque tokens only: what keys we had go (none sign). */
		if (!d->keyless)
			log_info("issuer %s: no key set, tokens are "
			    "introspected", d->ic->issuer);
		d->keyless = 1;
		jose_jwks_free(d->jwks);
		d->jwks = NULL;
		d->nkeys = 0;
		idp_metadata(d, md);
		idp_server(d, 1, NULL);
		return;
	}
	if ((text = json_dumps(json_object_get(msg, "jwks"),
	    JSON_COMPACT)) == NULL) {
		idp_server(d, 0, "the worker sent no key set");
		return;
	}
	set = jose_jwks_parse(text, strlen(text), why);
	free(text);
	if (set == NULL) {
		snprintf(err, sizeof err, "the key set is refused: %s", why);
		idp_server(d, 0, err);
		return;
	}
	if (d->jwks == NULL)
		log_info("issuer %s: %zu keys", d->ic->issuer,
		    jose_jwks_count(set));
	else
		log_debug("issuer %s: %zu keys", d->ic->issuer,
		    jose_jwks_count(set));
	idp_set_jwks(d, set);
	d->keyless = 0;
	idp_metadata(d, md);
	idp_server(d, 1, NULL);
}

/* An IDP_STATUS frame: how the server is. */
static void
idp_status(struct idp *d, json_t *msg)
{
	json_t		*v;
	const char	*error;

	if ((v = json_object_get(msg, "jwks_fetches")) != NULL &&
	    json_is_integer(v) && json_integer_value(v) >= 0)
		d->jwks_fetches = (uint64_t)json_integer_value(v);
	error = json_string_value(json_object_get(msg, "error"));
	if (json_is_true(json_object_get(msg, "ok")))
		idp_server(d, 1, NULL);
	else
		idp_server(d, 0, error != NULL ? error : "unreachable");
}

/* An IDP_INTROSPECTED or IDP_EXCHANGED frame: the answer of the waiter
 * of that tag. */
static void
idp_answered(struct idp *d, uint32_t tag, json_t *msg)
{
	struct idp_waiter	*w;
	const char		*error;

	TAILQ_FOREACH(w, &d->asks, entry) {
		if (w->tag == tag && w->tag != 0)
			break;
	}
	if (w == NULL)
		return;		/* cancelled, or timed out */
	TAILQ_REMOVE(&d->asks, w, entry);
	d->nasks--;
	if ((error = json_string_value(json_object_get(msg, "error"))) !=
	    NULL) {
		d->introspection_errors++;
		waiter_fire(w, NULL, error);
	} else
		waiter_fire(w, msg, NULL);
}

/* A STATUS frame: the worker is ready, or its configuration is refused. */
static void
idp_worker_status(struct idp *d, json_t *msg)
{
	const char	*state, *error;

	if (json_unpack(msg, "{s:s}", "state", &state) != 0)
		return;
	if (json_unpack(msg, "{s:s}", "error", &error) == 0) {
		proc_error(&d->proc, "%s", error);
		log_warnx("issuer %s: %s", d->ic->issuer, error);
	}
	if (strcmp(state, "ready") == 0 && d->state == IDP_STARTING) {
		d->state = IDP_READY;
		proc_ready(&d->proc);
		log_debug("issuer %s: worker ready", d->ic->issuer);
	}
}

/* One frame from an issuer's worker; -1 if the channel is corrupt. */
static int
idp_frame(void *arg, const struct frame_hdr *hdr, struct evbuffer *in)
{
	struct idp	*d = arg;
	json_t		*msg;
	const char	*why;

	switch (hdr->type) {
	case MSG_HELLO:
	case MSG_STATUS:
	case MSG_IDP_KEYS:
	case MSG_IDP_STATUS:
	case MSG_IDP_INTROSPECTED:
	case MSG_IDP_EXCHANGED:
		break;
	default:
		log_warnx("issuer %s: unexpected %s frame", d->ic->issuer,
		    msg_type_name(hdr->type));
		return (-1);
	}
	/* Introspection's and exchange's answers carry tokens. */
	if (hdr->type == MSG_IDP_INTROSPECTED ||
	    hdr->type == MSG_IDP_EXCHANGED)
		msg = frame_take_json_secret(in, hdr, &why);
	else
		msg = frame_take_json(in, hdr, &why);
	if (msg == NULL) {
		log_warnx("issuer %s: %s frame: %s", d->ic->issuer,
		    msg_type_name(hdr->type), why);
		return (-1);
	}
	switch (hdr->type) {
	case MSG_STATUS:
		idp_worker_status(d, msg);
		break;
	case MSG_IDP_KEYS:
		idp_keys(d, msg);
		break;
	case MSG_IDP_STATUS:
		idp_status(d, msg);
		break;
	case MSG_IDP_INTROSPECTED:
	case MSG_IDP_EXCHANGED:
		idp_answered(d, hdr->tag, msg);
		break;
	}
	/*
	 * A refresh asked for is answered by the next KEYS or STATUS, and so
	 * is whoever still waits after the one asked for timed out.
	 */
	if ((hdr->type == MSG_IDP_KEYS || hdr->type == MSG_IDP_STATUS) &&
	    (d->refreshing || d->nwaiters > 0)) {
		d->refreshing = 0;
		waiters_fire_all(d);
	}
	if (hdr->type == MSG_IDP_INTROSPECTED || hdr->type == MSG_IDP_EXCHANGED)
		secret_wipe_tree(msg);
	json_decref(msg);
	return (0);
}

/* The worker is gone or going: nobody waits for it. */
static void
idp_lost(void *arg)
{
	struct idp	*d = arg;

	d->refreshing = 0;
	waiters_fire_all(d);
	asks_fail_all(d, "the issuer's worker exited");
}

/* Its worker was not ready in time: kill it, and it is restarted. */
static void
idp_start_timeout(void *arg)
{
	struct idp	*d = arg;

	if (d->proc.pid <= 0)
		return;
	log_warnx("issuer %s: worker %ld did not start, killing it",
	    d->ic->issuer, (long)d->proc.pid);
	proc_error(&d->proc, "its worker did not start");
	kill(d->proc.pid, SIGKILL);
	proc_lost(&d->proc, "killed");
}

/* Fork and exec the issuer's worker. */
static void
idp_spawn(void *arg)
{
	struct idp	*d = arg;
	char		*argv[8];
	int		 argc = 0;

	argv[argc++] = (char *)"mcp-idp";
	if (log_getforeground())
		argv[argc++] = (char *)"-d";
	if (log_getverbose() > 0)
		argv[argc++] = (char *)"-v";
	argv[argc++] = d->ic->issuer;
	argv[argc] = NULL;
	if (proc_spawn(&d->proc, idp_worker_path, argv, 1) == -1)
		d->state = IDP_BACKOFF;
	else
		d->state = IDP_STARTING;
}

/* A client of ours at the issuer, for the worker's CONFIG; or NULL. */
static json_t *
client_json(const struct oauth_issuer_client *cc)
{
	json_t	*keys, *o;
	char	*sec[2];

	if (cc->client_id == NULL)
		return (NULL);
	if (cc->secret == NULL)
		return (json_pack("{s:s, s:s}", "client_id", cc->client_id,
		    "auth", "none"));
	/* ${env:} from our environment, which the worker's is not; the
	 * worker reads ${file:} itself. */
	sec[0] = cc->secret;
	sec[1] = NULL;
	keys = spawn_expand_env(sec);
	o = json_pack("{s:s, s:O, s:s}", "client_id", cc->client_id,
	    "client_secret", json_array_get(keys, 0), "auth", cc->post ?
	    "client_secret_post" : "client_secret_basic");
	json_decref(keys);
	return (o);
}

/* The CONFIG frame of a new worker: the secret travels only here. */
static json_t *
idp_config(void *arg)
{
	struct idp			*d = arg;
	const struct oauth_issuer_conf	*ic = d->ic;
	json_t				*o, *cfg, *in;

	o = json_pack("{s:s, s:I}", "issuer", ic->issuer, "refresh",
	    (json_int_t)ic->refresh);
	if (ic->metadata_url != NULL)
		json_object_set_new(o, "metadata_url",
		    json_string(ic->metadata_url));
	if (ic->jwks_uri != NULL)
		json_object_set_new(o, "jwks_uri", json_string(ic->jwks_uri));
	if (ic->ca_file != NULL)
		json_object_set_new(o, "ca_file", json_string(ic->ca_file));
	if ((in = client_json(&ic->introspection)) != NULL)
		json_object_set_new(o, "introspection", in);
	if ((in = client_json(&ic->login)) != NULL)
		json_object_set_new(o, "login", in);
	cfg = json_pack("{s:o}", "issuer", o);
	if (conf->user != NULL)
		json_object_set_new(cfg, "user", json_string(conf->user));
	return (cfg);
}

/* Give the worker's record the issuer's name and restart policy. */
static void
idp_policy(struct idp *d)
{
	struct proc_policy	pp;

	memset(&pp, 0, sizeof pp);
	pp.first_delay = IDP_FIRST_DELAY;
	pp.max_delay = IDP_MAX_DELAY;
	pp.healthy_ms = IDP_HEALTHY_MS;
	pp.max_failures = 0;
	pp.start_timeout = IDP_START_TIMEOUT;
	pp.frame_max = IDP_FRAME_MAX;
	proc_configure(&d->proc, d->ic->issuer, &pp);
}

/* Make an issuer from its configuration and start its worker. */
static struct idp *
idp_new(const struct oauth_issuer_conf *ic)
{
	struct idp	*d;

	d = xcalloc(1, sizeof *d);
	d->ic = issuer_copy(ic);
	d->server = -1;
	TAILQ_INIT(&d->waiters);
	TAILQ_INIT(&d->asks);
	proc_init(&d->proc, &idp_kind, d);
	idp_policy(d);
	proc_reset(&d->proc);
	idp_spawn(d);
	return (d);
}

static void
idp_free(struct idp *d)
{
	d->refreshing = 0;
	waiters_fire_all(d);
	asks_fail_all(d, "the issuer was removed from the configuration");
	proc_free(&d->proc);
	jose_jwks_free(d->jwks);
	free(d->introspection_endpoint);
	free(d->authorization_endpoint);
	free(d->server_error);
	issuer_free(d->ic);
	free(d);
}

void
idp_init_all(void)
{
	size_t	i;

	nidps = conf->oauth != NULL ? conf->oauth->nissuers : 0;
	idps = xcalloc(nidps + 1, sizeof *idps);
	for (i = 0; i < nidps; i++)
		idps[i] = idp_new(&conf->oauth->issuers[i]);
}

void
idp_stop_all(void)
{
	size_t	i;

	for (i = 0; i < nidps; i++) {
		idps[i]->state = IDP_STOPPED;
		proc_stop(&idps[i]->proc);
	}
}

/* An issuer's worker exited: what proc.c decided, said and done. */
static void
idp_exited(void *arg, int status, const char *how, enum proc_fate fate)
{
	struct idp	*d = arg;
	struct proc	*p = &d->proc;

	switch (fate) {
	case PROC_REMOVED:
		idp_free(d);
		break;
	case PROC_RESPAWNED:
	case PROC_STOPPED:
		break;
	case PROC_REFUSED:
		log_warnx("issuer %s: worker %s: configuration refused, not "
		    "restarting (%s)", d->ic->issuer, how,
		    p->last_error != NULL ? p->last_error : "");
		d->state = IDP_FAILED;
		break;
	case PROC_GAVE_UP:	/* never: an issuer has no max_failures */
		d->state = IDP_FAILED;
		break;
	case PROC_BACKOFF:
		proc_error(p, "worker %s", how);
		d->state = IDP_BACKOFF;
		log_warnx("issuer %s: worker %s; restarting in %u s",
		    d->ic->issuer, how, p->backoff);
		break;
	}
}

/* Name an issuer in a reload's report (none at start). */
static void
idp_report(json_t *report, const char *key, const char *issuer)
{
	if (report != NULL)
		reload_report_name(report, key, issuer);
}

void
idp_apply(const struct conf *nc, json_t *report)
{
	struct idp			**next, **old, *d;
	const struct oauth_issuer_conf	 *ic;
	size_t				  i, j, n, nold;

	n = nc->oauth != NULL ? nc->oauth->nissuers : 0;
	next = xcalloc(n + 1, sizeof *next);
	for (i = 0; i < n; i++) {
		ic = &nc->oauth->issuers[i];
		if ((d = idp_find(ic->issuer)) == NULL) {
			log_info("issuer %s: added", ic->issuer);
			next[i] = idp_new(ic);
			idp_report(report, "issuer_added", ic->issuer);
			continue;
		}
		next[i] = d;
		if (issuer_equal(d->ic, ic)) {
			/* A reload is the way to try a failed one again. */
			if (d->state == IDP_FAILED && d->proc.pid <= 0) {
				log_info("issuer %s: starting again",
				    d->ic->issuer);
				proc_reset(&d->proc);
				idp_spawn(d);
			}
			/* The verification policy may have changed. */
			d->ic->algorithms = ic->algorithms;
			d->ic->typ = ic->typ;
			d->ic->at = ic->at;
			continue;
		}
		/* The keys are the issuer's: kept until new ones come. */
		log_info("issuer %s: configuration changed, restarting",
		    d->ic->issuer);
		idp_report(report, "issuer_changed", d->ic->issuer);
		issuer_free(d->ic);
		d->ic = issuer_copy(ic);
		idp_policy(d);
		proc_reset(&d->proc);
		if (d->proc.pid > 0) {
			d->state = IDP_STARTING;
			proc_restart(&d->proc);
		} else
			idp_spawn(d);
	}
	for (i = 0; i < nidps; i++) {
		for (j = 0; j < n && next[j] != idps[i]; j++)
			;
		if (j < n)
			continue;
		d = idps[i];
		log_info("issuer %s: removed from the configuration",
		    d->ic->issuer);
		idp_report(report, "issuer_removed", d->ic->issuer);
		/* Nobody waits on it from now: asks are cancelled by finding
		 * the issuer by name, which no longer finds this one. */
		d->refreshing = 0;
		waiters_fire_all(d);
		asks_fail_all(d, "the issuer was removed from the "
		    "configuration");
		proc_remove(&d->proc);
		d->state = IDP_STOPPED;
		proc_stop(&d->proc);
	}
	old = idps;
	nold = nidps;
	idps = next;
	nidps = n;
	/* Those removed without a worker go now, the others as it exits. */
	for (i = 0; i < nold; i++) {
		if (old[i]->proc.removed && old[i]->proc.pid <= 0)
			idp_free(old[i]);
	}
	free(old);
}
