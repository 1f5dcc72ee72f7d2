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

#include <sys/prctl.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
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
#include "xmalloc.h"

#define CHAN_FD			3
#define OTEL_IN_FRAME_MAX	(64 << 20)	/* a batch, to us */

struct event_base	*base;
struct otel_wconf	*wc;

static struct iochan	*chan;
static struct event	*ev_sigterm;
static pid_t		 supervisor_pid;

static void	otel_exit(int) __attribute__((noreturn));

/* Send a frame's JSON (reference taken). */
static void
otel_send(uint16_t type, json_t *o)
{
	if (chan != NULL)
		frame_add_json(iochan_output(chan), type, 0, 0, o);
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
	if (chan != NULL)
		iochan_flush_wait(chan, 2000);
	otel_wconf_free(wc);
	exit(code);
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

/* Run as the configuration's user if we are root; no new privileges. */
static int
otel_confine(const char *user, char *err, size_t len)
{
	struct passwd	*pw;

	if (user != NULL && getuid() == 0) {
		if ((pw = getpwnam(user)) == NULL) {
			snprintf(err, len, "user %s does not exist", user);
			return (-1);
		}
		if (initgroups(pw->pw_name, pw->pw_gid) != 0 ||
		    setresgid(pw->pw_gid, pw->pw_gid, pw->pw_gid) != 0 ||
		    setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid) != 0) {
			snprintf(err, len, "cannot run as %s: %s", user,
			    strerror(errno));
			return (-1);
		}
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != supervisor_pid)
			otel_exit(WORKER_EXIT_OK);
		if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
			fatal("prctl PR_SET_DUMPABLE");
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
		snprintf(err, len, "PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
		return (-1);
	}
	return (0);
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
	if (otel_confine(json_string_value(json_object_get(msg, "user")), err,
	    sizeof err) != 0) {
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
		if (wc != NULL || (msg = frame_take_json(in, hdr, &why)) ==
		    NULL)
			return (-1);
		otel_configure(msg);
		json_decref(msg);
		return (0);
	case MSG_OTEL_SPANS:
		if (wc == NULL)
			return (-1);
		return (otel_take_spans(in, hdr));
	case MSG_SHUTDOWN:
		evbuffer_drain(in, FRAME_HDR_LEN + hdr->len);
		log_debug("asked to stop");
		otel_exit(WORKER_EXIT_OK);
	default:
		log_warnx("unexpected %s frame", msg_type_name(hdr->type));
		return (-1);
	}
}

static void
chan_read_cb(struct iochan *ch, void *arg)
{
	struct evbuffer		*in = iochan_input(ch);
	struct frame_hdr	 hdr;
	const char		*why;

	for (;;) {
		switch (frame_peek(in, OTEL_IN_FRAME_MAX, &hdr, &why)) {
		case FRAME_NEED:
			return;
		case FRAME_BAD:
			log_warnx("bad frame from supervisor: %s", why);
			otel_exit(WORKER_EXIT_FAILED);
		case FRAME_OK:
			break;
		}
		if (otel_frame(&hdr, in) != 0) {
			log_warnx("bad %s frame from supervisor",
			    msg_type_name(hdr.type));
			otel_exit(WORKER_EXIT_FAILED);
		}
	}
}

static void
chan_event_cb(struct iochan *ch, int what, void *arg)
{
	log_debug("supervisor channel closed");
	iochan_free(chan);
	chan = NULL;
	otel_exit(WORKER_EXIT_OK);
}

static void
signal_cb(evutil_socket_t sig, short events, void *arg)
{
	otel_exit(WORKER_EXIT_OK);
}

int
main(int argc, char **argv)
{
	int	ch, verbose = 0, foreground = 0;

	xmalloc_libraries();
	while ((ch = getopt(argc, argv, "dv")) != -1) {
		switch (ch) {
		case 'd':
			foreground = 1;
			break;
		case 'v':
			verbose++;
			break;
		default:
			fprintf(stderr, "usage: mcp-otel [-dv] otel\n");
			exit(WORKER_EXIT_CONFIG);
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "mcp-otel is started by mcp-supervisord\n");
		exit(WORKER_EXIT_CONFIG);
	}
	log_init("mcp-otel", foreground, verbose);
	event_set_log_callback(log_libevent);

	/* Not dumpable, before a header's secret arrives. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
		fatal("prctl PR_SET_DUMPABLE");
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if ((supervisor_pid = getppid()) == 1)
		exit(WORKER_EXIT_OK);
	signal(SIGPIPE, SIG_IGN);
	malloc_tune();

	if ((base = event_base_new()) == NULL)
		fatalx("event_base_new");
	evutil_make_socket_nonblocking(CHAN_FD);
	evutil_make_socket_closeonexec(CHAN_FD);
	if (fcntl(CHAN_FD, F_GETFD) == -1)
		fatal("no supervisor channel on fd %d", CHAN_FD);
	chan = iochan_new(base, CHAN_FD, chan_read_cb, NULL, chan_event_cb,
	    NULL);
	frame_add(iochan_output(chan), MSG_HELLO, 0, 0, "{\"version\":1}",
	    13);
	ev_sigterm = evsignal_new(base, SIGTERM, signal_cb, NULL);
	evsignal_add(ev_sigterm, NULL);
	event_base_dispatch(base);
	otel_exit(WORKER_EXIT_OK);
}
