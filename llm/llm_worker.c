/* SPDX-License-Identifier: ISC */
/*
 * mcp-llm: one provider's worker.  Started by mcp-supervisord with its end
 * of a socketpair on fd 3; it reads the provider's configuration from the
 * CONFIG frame, says it is ready, and answers LLM_REQUEST frames until the
 * channel closes or SHUTDOWN comes.  A provider that hangs, floods or
 * answers garbage costs its requests, or this process, never the gateway.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "frame.h"
#include "iochan.h"
#include "log.h"
#include "llm_worker.h"
#include "redact.h"
#include "secret.h"
#include "worker_start.h"
#include "xmalloc.h"


struct event_base	*base;
struct llm_conf		*lc;

static struct event	*ev_sigterm;
static pid_t		 supervisor_pid;	/* our parent */

static void	llm_exit(int) __attribute__((noreturn));
static size_t	llm_frame_max(void);
static int	llm_frame(const struct frame_hdr *, struct evbuffer *);

/* The supervisor's channel. */
static struct worker_chan	wchan = {
	.max = llm_frame_max,
	.frame = llm_frame,
	.fail = llm_exit,
	.closed = llm_exit,
};

/* Return monotonic milliseconds. */
int64_t
now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

void
llm_send(uint16_t type, uint32_t tag, const char *p, size_t len)
{
	if (wchan.chan != NULL)
		frame_add(iochan_output(wchan.chan), type, 0, tag, p, len);
}

void
llm_send_buffer(uint16_t type, uint32_t tag, struct evbuffer *buf)
{
	if (wchan.chan != NULL)
		frame_add_buffer(iochan_output(wchan.chan), type, 0, tag, buf);
	else
		evbuffer_drain(buf, evbuffer_get_length(buf));
}

void
llm_send_json(uint16_t type, uint32_t tag, json_t *o)
{
	if (wchan.chan != NULL)
		frame_add_json(iochan_output(wchan.chan), type, 0, tag, o);
	json_decref(o);
}

/* Report a state to the supervisor. */
static void
llm_status(const char *state, const char *error)
{
	json_t	*o;

	o = json_pack("{s:s, s:I}", "state", state, "pid", (json_int_t)-1);
	if (error != NULL)
		json_object_set_new(o, "error", json_string(error));
	llm_send_json(MSG_STATUS, 0, o);
}

/* Exit, with what is queued for the supervisor written out first. */
static void
llm_exit(int code)
{
	llm_http_stop();
	if (wchan.chan != NULL)
		iochan_flush_wait(wchan.chan, 2000);
	exit(code);
}

/* The configuration: check it, read the key, confine, say we are ready. */
static void
llm_configure(json_t *msg)
{
	char	err[512];

	if ((lc = conf_llm_from_json(json_object_get(msg, "llm"), err,
	    sizeof err)) == NULL) {
		log_warnx("%s", err);
		llm_status("error", err);
		llm_exit(WORKER_EXIT_CONFIG);
	}
	if (llm_http_init(err, sizeof err) != 0 ||
	    worker_drop_root(json_string_value(json_object_get(msg, "user")),
	    supervisor_pid, llm_exit, err, sizeof err) != 0) {
		llm_status("error", err);
		llm_exit(WORKER_EXIT_CONFIG);
	}
	llm_status("ready", NULL);
	log_debug("provider %s (%s) at %s, model %s", lc->name,
	    conf_llm_provider_name(lc->provider), url_redact(lc->url, err,
	    sizeof err), lc->model);
}

/*
 * Read a request's frame.  The supervisor checked its text as JSON, not
 * as jansson reads it: a duplicate key or a number past jansson's range
 * refuses the request (NULL, why in err), and the worker goes on.
 */
static json_t *
llm_take_request(struct evbuffer *in, const struct frame_hdr *hdr, char *err,
    size_t errlen)
{
	json_error_t	 error;
	json_t		*msg;
	unsigned char	*p;

	p = evbuffer_pullup(in, FRAME_HDR_LEN + (ev_ssize_t)hdr->len);
	msg = json_loadb((char *)p + FRAME_HDR_LEN, hdr->len,
	    JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &error);
	evbuffer_drain(in, FRAME_HDR_LEN + hdr->len);
	if (msg == NULL)
		snprintf(err, errlen, "the request cannot be read: %s",
		    error.text);
	else if (!json_is_object(msg)) {
		snprintf(err, errlen, "the request is not an object");
		json_decref(msg);
		msg = NULL;
	}
	return (msg);
}

/* Handle one frame from the supervisor; -1 if it is bad. */
static int
llm_frame(const struct frame_hdr *hdr, struct evbuffer *in)
{
	json_t		*msg, *params;
	const char	*why;
	char		 err[256];

	switch (hdr->type) {
	case MSG_CONFIG:
		if (lc != NULL || (msg = frame_take_json_secret(in, hdr,
		    &why)) == NULL)
			return (-1);
		llm_configure(msg);
		/* The key was copied. */
		secret_wipe_tree(msg);
		json_decref(msg);
		return (0);
	case MSG_LLM_REQUEST:
		if (lc == NULL)
			return (-1);
		if ((msg = llm_take_request(in, hdr, err, sizeof err)) ==
		    NULL) {
			llm_http_refuse(hdr->tag, err);
			return (0);
		}
		params = json_incref(json_object_get(msg, "params"));
		llm_http_start(hdr->tag, params, json_is_true(
		    json_object_get(msg, "progress")));
		json_decref(msg);
		return (0);
	case MSG_LLM_CANCEL:
		evbuffer_drain(in, FRAME_HDR_LEN + hdr->len);
		llm_http_cancel(hdr->tag);
		return (0);
	case MSG_SHUTDOWN:
		evbuffer_drain(in, FRAME_HDR_LEN + hdr->len);
		log_debug("asked to stop");
		llm_exit(WORKER_EXIT_OK);
	default:
		log_warnx("unexpected %s frame", msg_type_name(hdr->type));
		return (-1);
	}
}

/* The largest frame the supervisor may send now. */
static size_t
llm_frame_max(void)
{
	return (lc != NULL ? conf_llm_frame_max(lc) : CONF_LLM_MAX_REQUEST);
}

static void
signal_cb(evutil_socket_t sig, short events, void *arg)
{
	llm_exit(WORKER_EXIT_OK);
}

int
main(int argc, char **argv)
{
	worker_options(argc, argv, "mcp-llm", "name");
	/* Not dumpable before the key arrives. */
	supervisor_pid = worker_guard();

	if ((base = event_base_new()) == NULL)
		fatalx("event_base_new");
	worker_channel_open(base, &wchan);
	ev_sigterm = evsignal_new(base, SIGTERM, signal_cb, NULL);
	evsignal_add(ev_sigterm, NULL);
	event_base_dispatch(base);
	llm_exit(WORKER_EXIT_OK);
}
