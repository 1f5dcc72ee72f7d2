/* SPDX-License-Identifier: ISC */
/*
 * mcp-otel: the gateway's trace exporter.  Started by mcp-supervisord
 * with its end of a socketpair on fd 3; it reads the collector's
 * configuration from the CONFIG frame (headers may carry a secret, which
 * travels only there), says it is ready, and posts every batch of spans
 * the supervisor sends (OTEL_SPANS) to the collector, saying what became
 * of them (OTEL_STATS), until the channel closes or SHUTDOWN comes.  A
 * collector that is slow, down or answers garbage costs spans, never the
 * gateway's loop.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "frame.h"
#include "iochan.h"
#include "json_scan.h"
#include "log.h"
#include "otel.h"
#include "secret.h"
#include "worker_start.h"
#include "xmalloc.h"

#define OTEL_IN_FRAME_MAX	(64 << 20)	/* a batch, to us */
#define OTEL_DRAIN_S		3	/* asked to stop: posts finish within,
					   before the supervisor's 5 s */

struct event_base	*base;
struct otel_wconf	*wc;

static struct event	*ev_sigterm;
static pid_t		 supervisor_pid;	/* our parent */
static int		 stopping;		/* asked to, posts finishing */

static void	otel_exit(int) __attribute__((noreturn));
static void	otel_stop(void);
static size_t	otel_frame_max(void);
static int	otel_frame(const struct frame_hdr *, struct evbuffer *);

/* The supervisor's channel. */
static struct worker_chan	wchan = {
	.max = otel_frame_max,
	.frame = otel_frame,
	.fail = otel_exit,
	.closed = otel_exit,
};

/* Send a frame's JSON (reference taken). */
static void
otel_send(uint16_t type, json_t *o)
{
	if (wchan.chan != NULL)
		frame_add_json(iochan_output(wchan.chan), type, 0, 0, o);
	json_decref(o);
}

void
otel_stats(uint64_t exported, uint64_t failed, uint64_t dropped)
{
	otel_send(MSG_OTEL_STATS, json_pack("{s:I, s:I, s:I}", "exported",
	    (json_int_t)exported, "failed", (json_int_t)failed, "dropped",
	    (json_int_t)dropped));
}

static void
otel_state(const char *state, const char *error)
{
	json_t	*o;

	o = json_pack("{s:s, s:I}", "state", state, "pid", (json_int_t)-1);
	if (error != NULL)
		json_object_set_new(o, "error", json_string(error));
	otel_send(MSG_STATUS, o);
}

static void
otel_wconf_free(struct otel_wconf *c)
{
	size_t	i;

	if (c == NULL)
		return;
	free(c->endpoint);
	free(c->service_name);
	free(c->version);
	for (i = 0; c->headers != NULL && c->headers[i] != NULL; i++) {
		explicit_bzero(c->headers[i], strlen(c->headers[i]));
		free(c->headers[i]);
	}
	free(c->headers);
	free(c);
}

static void
otel_exit(int code)
{
	otel_export_stop();
	if (wchan.chan != NULL)
		iochan_flush_wait(wchan.chan, 2000);
	otel_wconf_free(wc);
	exit(code);
}

static void
otel_drain_cb(evutil_socket_t fd, short events, void *arg)
{
	log_warnx("stopping: posts still unfinished after %d s are dropped",
	    OTEL_DRAIN_S);
	otel_exit(WORKER_EXIT_OK);
}

/*
 * Asked to stop: the spans the supervisor sent (its last batch first) are
 * posted, within OTEL_DRAIN_S, then exit; nothing more is taken.
 */
static void
otel_stop(void)
{
	struct timeval	tv = { OTEL_DRAIN_S, 0 };

	stopping = 1;
	if (wc == NULL || otel_export_idle())
		otel_exit(WORKER_EXIT_OK);
	event_base_once(base, -1, EV_TIMEOUT, otel_drain_cb, NULL, &tv);
}

static void
otel_done_cb(evutil_socket_t fd, short events, void *arg)
{
	otel_exit(WORKER_EXIT_OK);
}

void
otel_posted(void)
{
	static const struct timeval	now = { 0, 0 };

	/* Out of curl's callback first. */
	if (stopping && otel_export_idle())
		event_base_once(base, -1, EV_TIMEOUT, otel_done_cb, NULL,
		    &now);
}

/* A string member, copied; NULL if it is absent or not one. */
static char *
get_string(json_t *o, const char *key)
{
	json_t	*v = json_object_get(o, key);

	if (!json_is_string(v) || strlen(json_string_value(v)) !=
	    json_string_length(v))
		return (NULL);
	return (xstrdup(json_string_value(v)));
}

/* Read the collector's configuration; NULL with err set. */
static struct otel_wconf *
otel_wconf_read(json_t *o, char *err, size_t len)
{
	struct otel_wconf	*c;
	json_t			*h, *v;
	json_int_t		 t;
	size_t			 i, n;
	char			 why[512];

	c = xcalloc(1, sizeof *c);
	if ((c->endpoint = get_string(o, "endpoint")) == NULL ||
	    (c->service_name = get_string(o, "service_name")) == NULL ||
	    (c->version = get_string(o, "version")) == NULL) {
		snprintf(err, len, "the configuration lacks an endpoint, a "
		    "service_name or a version");
		goto bad;
	}
	t = json_integer_value(json_object_get(o, "timeout"));
	if (t < 1 || t > 300) {
		snprintf(err, len, "timeout is not 1 to 300 seconds");
		goto bad;
	}
	c->timeout = (unsigned int)t;
	h = json_object_get(o, "headers");
	n = json_array_size(h);
	c->headers = xcalloc(n + 1, sizeof *c->headers);
	for (i = 0; i < n; i++) {
		v = json_array_get(h, i);
		if (!json_is_string(v)) {
			snprintf(err, len, "headers are not strings");
			goto bad;
		}
		/* ${file:} is read here, before we give up root. */
		if ((c->headers[i] = secret_expand(json_string_value(v), why,
		    sizeof why)) == NULL) {
			snprintf(err, len, "tracing headers: %s", why);
			goto bad;
		}
		if (strpbrk(c->headers[i], "\r\n") != NULL) {
			snprintf(err, len, "tracing headers: a value is not "
			    "one line");
			goto bad;
		}
	}
	return (c);
bad:
	otel_wconf_free(c);
	return (NULL);
}

static void
otel_configure(json_t *msg)
{
	char	 err[600];

	if ((wc = otel_wconf_read(msg, err, sizeof err)) == NULL) {
		log_warnx("%s", err);
		otel_state("error", err);
		otel_exit(WORKER_EXIT_CONFIG);
	}
	if (worker_drop_root(json_string_value(json_object_get(msg, "user")),
	    supervisor_pid, otel_exit, err, sizeof err) != 0) {
		otel_state("error", err);
		otel_exit(WORKER_EXIT_CONFIG);
	}
	otel_export_init();
	otel_state("ready", NULL);
	log_debug("exporting to the configured collector");
}

/*
 * A batch from the supervisor, {"spans": [...]}: checked by the JSON
 * scanner (no tree: the batch may be megabytes) and its array's text
 * posted as it is; -1 if it is not that.
 */
static int
otel_take_spans(struct evbuffer *in, const struct frame_hdr *hdr)
{
	struct jspan	 whole, arr, v;
	struct jiter	 it;
	const char	*p, *why;
	size_t		 where;
	uint64_t	 n = 0;

	if (hdr->len == 0)
		return (-1);
	evbuffer_drain(in, FRAME_HDR_LEN);
	p = (const char *)evbuffer_pullup(in, hdr->len);
	if (jscan_validate(p, hdr->len, &whole, &why, &where) != 0 ||
	    jscan_member_unique(p, whole, "spans", &arr) != 0 ||
	    jscan_array(p, arr, &it) != 0) {
		evbuffer_drain(in, hdr->len);
		return (-1);
	}
	while (jscan_next_element(&it, &v))
		n++;
	otel_export(p + arr.off, arr.len, n);
	evbuffer_drain(in, hdr->len);
	return (0);
}

/* Handle one frame from the supervisor; -1 if it is bad. */
static int
otel_frame(const struct frame_hdr *hdr, struct evbuffer *in)
{
	json_t		*msg;
	const char	*why;

	switch (hdr->type) {
	case MSG_CONFIG:
		if (wc != NULL || (msg = frame_take_json_secret(in, hdr,
		    &why)) == NULL)
			return (-1);
		otel_configure(msg);
		/* Its headers were copied. */
		secret_wipe_tree(msg);
		json_decref(msg);
		return (0);
	case MSG_OTEL_SPANS:
		if (wc == NULL)
			return (-1);
		if (stopping) {
			evbuffer_drain(in, FRAME_HDR_LEN + hdr->len);
			return (0);
		}
		return (otel_take_spans(in, hdr));
	case MSG_SHUTDOWN:
		evbuffer_drain(in, FRAME_HDR_LEN + hdr->len);
		log_debug("asked to stop");
		otel_stop();
		return (0);
	default:
		log_warnx("unexpected %s frame", msg_type_name(hdr->type));
		return (-1);
	}
}

/* The largest frame the supervisor may send: a batch. */
static size_t
otel_frame_max(void)
{
	return (OTEL_IN_FRAME_MAX);
}

static void
signal_cb(evutil_socket_t sig, short events, void *arg)
{
	otel_exit(WORKER_EXIT_OK);
}

int
main(int argc, char **argv)
{
	worker_options(argc, argv, "mcp-otel", "otel");
	/* Not dumpable before a header's secret arrives. */
	supervisor_pid = worker_guard();

	if ((base = event_base_new()) == NULL)
		fatalx("event_base_new");
	worker_channel_open(base, &wchan);
	ev_sigterm = evsignal_new(base, SIGTERM, signal_cb, NULL);
	evsignal_add(ev_sigterm, NULL);
	event_base_dispatch(base);
	otel_exit(WORKER_EXIT_OK);
}
