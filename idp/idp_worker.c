/* SPDX-License-Identifier: ISC */
/*
 * mcp-idp: one authorization server's worker.  Started by mcp-supervisord
 * with its end of a socketpair on fd 3; it reads the issuer's
 * configuration from the CONFIG frame (the introspection secret travels
 * only there, never in argv or the environment), says it is ready, and
 * from then on keeps the supervisor supplied with the issuer's keys
 * (IDP_KEYS), says how the server is (IDP_STATUS), and introspects
 * tokens (IDP_INTROSPECT) until the channel closes or SHUTDOWN comes.  A
 * server that hangs, floods or answers garbage costs this process, never
 * the gateway's loop.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "frame.h"
#include "idp.h"
#include "idp_worker.h"
#include "iochan.h"
#include "jose.h"
#include "log.h"
#include "secret.h"
#include "worker_start.h"
#include "xmalloc.h"

#define IDP_IN_FRAME_MAX	(JOSE_TOKEN_MAX + 65536)	/* to us */

struct event_base	*base;
struct idp_wconf	*wc;

static struct event	*ev_sigterm;
static pid_t		 supervisor_pid;	/* our parent */

static void	idp_exit(int) __attribute__((noreturn));
static size_t	idp_frame_max(void);
static int	idp_frame(const struct frame_hdr *, struct evbuffer *);

/* The supervisor's channel. */
static struct worker_chan	wchan = {
	.max = idp_frame_max,
	.frame = idp_frame,
	.fail = idp_exit,
	.closed = idp_exit,
};

int64_t
now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

void
idp_send_json(uint16_t type, uint32_t tag, json_t *o)
{
	if (wchan.chan != NULL)
		frame_add_json(iochan_output(wchan.chan), type, 0, tag, o);
	json_decref(o);
}

void
idp_send_secret(uint16_t type, uint32_t tag, json_t *o)
{
	if (wchan.chan != NULL)
		frame_add_json_secret(iochan_output(wchan.chan), type, 0, tag,
		    o);
	json_decref(o);
}

/* Report the worker's state (not the server's: that is IDP_STATUS). */
static void
idp_state(const char *state, const char *error)
{
	json_t	*o;

	o = json_pack("{s:s, s:I}", "state", state, "pid", (json_int_t)-1);
	if (error != NULL)
		json_object_set_new(o, "error", json_string(error));
	idp_send_json(MSG_STATUS, 0, o);
}

static void
idp_wconf_free(struct idp_wconf *c)
{
	if (c == NULL)
		return;
	free(c->issuer);
	free(c->metadata_url);
	free(c->jwks_uri);
	free(c->ca_file);
	free(c->client_id);
	secret_free(c->client_secret);
	free(c->login_id);
	secret_free(c->login_secret);
	free(c);
}

/* Exit, with what is queued for the supervisor written out first. */
static void
idp_exit(int code)
{
	idp_fetch_stop();
	if (wchan.chan != NULL)
		iochan_flush_wait(wchan.chan, 2000);
	idp_wconf_free(wc);
	exit(code);
}

/* An optional string member, copied; -1 if it is there and not one. */
static int
opt_string(json_t *o, const char *key, char **out)
{
	json_t	*v = json_object_get(o, key);

	*out = NULL;
	if (v == NULL || json_is_null(v))
		return (0);
	if (!json_is_string(v) || strlen(json_string_value(v)) !=
	    json_string_length(v))
		return (-1);
	*out = xstrdup(json_string_value(v));
	return (0);
}

/*
 * Read a client of ours ({client_id, client_secret, auth}: introspection,
 * or login, which may be public: auth "none", no secret); -1 with err.
 */
static int
read_client(json_t *in, const char *what, int public, char **id,
    char **secret, int *post, char *err, size_t len)
{
	const char	*auth = json_string_value(json_object_get(in, "auth"));
	char		*s, why[IDP_WHY_MAX];

	if (opt_string(in, "client_id", id) != 0 || *id == NULL ||
	    opt_string(in, "client_secret", secret) != 0) {
		snprintf(err, len, "%s needs a client_id", what);
		return (-1);
	}
	if (public && auth != NULL && strcmp(auth, "none") == 0 &&
	    *secret == NULL)
		return (0);
	if (*secret == NULL) {
		snprintf(err, len, "%s needs a client_secret", what);
		return (-1);
	}
	/* ${file:} is read here, before we give up root. */
	if ((s = secret_expand(*secret, why, sizeof why)) == NULL) {
		snprintf(err, len, "%s client_secret: %s", what, why);
		return (-1);
	}
	secret_free(*secret);
	*secret = s;
	if (*s == '\0' || strpbrk(s, "\r\n") != NULL) {
		snprintf(err, len, "%s client_secret: the secret is empty or "
		    "not one line", what);
		return (-1);
	}
	if (auth == NULL || strcmp(auth, "client_secret_basic") == 0)
		*post = 0;
	else if (strcmp(auth, "client_secret_post") == 0)
		*post = 1;
	else {
		snprintf(err, len, "%s auth is neither client_secret_basic nor "
		    "client_secret_post", what);
		return (-1);
	}
	return (0);
}

/* Read the issuer's configuration; NULL with err set. */
static struct idp_wconf *
idp_wconf_read(json_t *o, char *err, size_t len)
{
	struct idp_wconf	*c;
	json_t			*v, *in;
	char			*s, why[IDP_WHY_MAX];

	c = xcalloc(1, sizeof *c);
	if (!json_is_object(o) || opt_string(o, "issuer", &c->issuer) != 0 ||
	    c->issuer == NULL) {
		snprintf(err, len, "the configuration has no issuer");
		goto bad;
	}
	if (opt_string(o, "metadata_url", &c->metadata_url) != 0 ||
	    opt_string(o, "jwks_uri", &c->jwks_uri) != 0 ||
	    opt_string(o, "ca_file", &c->ca_file) != 0) {
		snprintf(err, len, "the configuration has a member of the "
		    "wrong type");
		goto bad;
	}
	if ((v = json_object_get(o, "refresh")) != NULL) {
		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
		    json_integer_value(v) > IDP_MAX_AGE_MAX) {
			snprintf(err, len, "refresh is not a number of "
			    "seconds up to %d", IDP_MAX_AGE_MAX);
			goto bad;
		}
		c->refresh = (unsigned int)json_integer_value(v);
	}
	if ((in = json_object_get(o, "introspection")) != NULL &&
	    !json_is_null(in) && read_client(in, "introspection", 0,
	    &c->client_id, &c->client_secret, &c->secret_post, err, len) != 0)
		goto bad;
	if ((in = json_object_get(o, "login")) != NULL &&
	    !json_is_null(in) && read_client(in, "login", 1, &c->login_id,
	    &c->login_secret, &c->login_post, err, len) != 0)
		goto bad;
	/* What is fetched must be https, or http on loopback. */
	if (!idp_url_allowed(c->issuer, why, sizeof why)) {
		snprintf(err, len, "issuer: %s", why);
		goto bad;
	}
	s = c->metadata_url != NULL ? c->metadata_url : c->jwks_uri;
	if (s != NULL && (!idp_url_allowed(s, why, sizeof why) ||
	    (c->jwks_uri != NULL && !idp_url_allowed(c->jwks_uri, why,
	    sizeof why)))) {
		snprintf(err, len, "%s: %s", c->metadata_url != NULL ?
		    "metadata_url or jwks_uri" : "jwks_uri", why);
		goto bad;
	}
	return (c);
bad:
	idp_wconf_free(c);
	return (NULL);
}

/* The configuration: check it, confine, say we are ready, fetch. */
static void
idp_configure(json_t *msg)
{
	json_t	*sec, *lsec;
	char	 err[512];

	/* jansson's copy of the secret is wiped before it is freed. */
	sec = json_object_get(json_object_get(json_object_get(msg, "issuer"),
	    "introspection"), "client_secret");
	lsec = json_object_get(json_object_get(json_object_get(msg, "issuer"),
	    "login"), "client_secret");
	if ((wc = idp_wconf_read(json_object_get(msg, "issuer"), err,
	    sizeof err)) == NULL) {
		log_warnx("%s", err);
		idp_state("error", err);
		idp_exit(WORKER_EXIT_CONFIG);
	}
	if (json_is_string(sec))
		explicit_bzero((char *)json_string_value(sec),
		    json_string_length(sec));
	if (json_is_string(lsec))
		explicit_bzero((char *)json_string_value(lsec),
		    json_string_length(lsec));
	if (worker_drop_root(json_string_value(json_object_get(msg, "user")),
	    supervisor_pid, idp_exit, err, sizeof err) != 0) {
		idp_state("error", err);
		idp_exit(WORKER_EXIT_CONFIG);
	}
	idp_state("ready", NULL);
	log_debug("issuer %s%s%s", wc->issuer, wc->client_id != NULL ?
	    ", introspection" : "", wc->login_id != NULL ? ", login" : "");
	idp_fetch_init();
}

/* Read an introspection request and start it; -1 if it is bad. */
static int
idp_take_introspect(struct evbuffer *in, const struct frame_hdr *hdr)
{
	json_t		*msg;
	json_t		*t;
	const char	*why;
	char		*token;

	if ((msg = frame_take_json_secret(in, hdr, &why)) == NULL)
		return (-1);
	t = json_object_get(msg, "token");
	if (!json_is_string(t) || json_string_length(t) == 0 ||
	    json_string_length(t) > JOSE_TOKEN_MAX ||
	    strlen(json_string_value(t)) != json_string_length(t)) {
		json_decref(msg);
		return (-1);
	}
	token = xstrdup(json_string_value(t));
	/* jansson keeps its copy until the object is freed: wipe it. */
	explicit_bzero((char *)json_string_value(t), json_string_length(t));
	json_decref(msg);
	idp_introspect(hdr->tag, token);
	return (0);
}

/* Handle one frame from the supervisor; -1 if it is bad. */
static int
idp_frame(const struct frame_hdr *hdr, struct evbuffer *in)
{
	json_t		*msg;
	const char	*why;

	switch (hdr->type) {
	case MSG_CONFIG:
		if (wc != NULL || (msg = frame_take_json_secret(in, hdr,
		    &why)) == NULL)
			return (-1);
		idp_configure(msg);
		/* Its copies of the secrets go with it. */
		secret_wipe_tree(msg);
		json_decref(msg);
		return (0);
	case MSG_IDP_REFRESH:
		evbuffer_drain(in, FRAME_HDR_LEN + hdr->len);
		if (wc == NULL)
			return (-1);
		idp_fetch_refresh();
		return (0);
	case MSG_IDP_INTROSPECT:
		if (wc == NULL)
			return (-1);
		return (idp_take_introspect(in, hdr));
	case MSG_IDP_EXCHANGE:
		if (wc == NULL || (msg = frame_take_json_secret(in, hdr,
		    &why)) == NULL)
			return (-1);
		idp_exchange(hdr->tag, msg);
		return (0);
	case MSG_SHUTDOWN:
		evbuffer_drain(in, FRAME_HDR_LEN + hdr->len);
		log_debug("asked to stop");
		idp_exit(WORKER_EXIT_OK);
	default:
		log_warnx("unexpected %s frame", msg_type_name(hdr->type));
		return (-1);
	}
}

/* The largest frame the supervisor may send. */
static size_t
idp_frame_max(void)
{
	return (IDP_IN_FRAME_MAX);
}

static void
signal_cb(evutil_socket_t sig, short events, void *arg)
{
	idp_exit(WORKER_EXIT_OK);
}

int
main(int argc, char **argv)
{
	worker_options(argc, argv, "mcp-idp", "issuer");
	/* Not dumpable before the secret arrives. */
	supervisor_pid = worker_guard();

	if ((base = event_base_new()) == NULL)
		fatalx("event_base_new");
	worker_channel_open(base, &wchan);
	ev_sigterm = evsignal_new(base, SIGTERM, signal_cb, NULL);
	evsignal_add(ev_sigterm, NULL);
	event_base_dispatch(base);
	idp_exit(WORKER_EXIT_OK);
}
