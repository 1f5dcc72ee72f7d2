/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "log.h"
#include "supervisor.h"
#include "utf8.h"
#include "xmalloc.h"

#define CONTROL_MAX_FRAME	65536
/*
 * mcpctl sends one command and waits: a few at once is plenty, and the
 * descriptors they hold come out of http.c's reserve.  Clients that sit
 * on them do not keep mcpctl out: when all are taken, a new connection
 * closes the one that has done nothing for longest, once that is
 * CONTROL_GRACE_MS (mcpctl is done in a few milliseconds).
 */
#define CONTROL_MAX_CLIENTS	16
#define CONTROL_GRACE_MS	1000
/* A connection that does nothing for this long is closed: no request
 * completed, no reply read.  Bytes of a request do not count. */
#define CONTROL_IDLE_MS		30000
/* Replies unread past this: stop reading requests until they are. */
#define CONTROL_OUT_HIGH	(64 * 1024)
/* The largest reply mcpctl takes (MCPCTL_MAX_REPLY in mcpctl/ctl.c);
 * replies past this many bytes are copied, larger ones referenced. */
#define CONTROL_MAX_REPLY	(16 * 1024 * 1024)
#define CONTROL_COPY_MAX	4096
#define CONTROL_PAUSE_MS	250	/* out of descriptors: stop accepting */
#define CONTROL_DRAIN_DEFAULT	300	/* seconds of mcpctl drain */

/* One connection to the control socket. */
struct control_conn {
	TAILQ_ENTRY(control_conn)	 entry;
	struct bufferevent		*bev;		/* owned */
	struct evbuffer_cb_entry	*out_cb;	/* on bev's output */
	struct event			*idle_ev;	/* owned */
	int64_t				 active;	/* ms: last activity */
	int				 paused;	/* replies unread */
	int				 eof;		/* the client is done
							   sending */
};

static TAILQ_HEAD(, control_conn)	control_conns =
    TAILQ_HEAD_INITIALIZER(control_conns);
static struct evconnlistener	*control_lev;
static char			*control_path;
static unsigned int		 control_clients;
static struct event		*control_pause_ev;

/*
 * An error reply to a command.  What it quotes of a request or a file
 * may be cut inside a character: the cut is made '?', so that the reply
 * is still UTF-8, which jansson insists on.
 */
json_t *
control_error(const char *fmt, ...)
{
	va_list	ap;
	char	msg[1024];
	int	n;

	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (n < 0)
		msg[n = 0] = '\0';
	utf8_scrub(msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
	return (json_pack("{s:b, s:s}", "ok", 0, "error", msg));
}

/* Free a reply's text once written. */
static void
control_free_text(const void *data, size_t len, void *arg)
{
	free((void *)data);
}

/*
 * Queue the reply to a control command (taken).  A small one is copied
 * into the output's packed chains; a large one is referenced as jansson
 * made it, never copied into a chain rounded up to a power of two; one
 * larger than mcpctl takes is an error instead.
 */
static void
control_reply(struct control_conn *cc, json_t *reply)
{
	struct evbuffer		*out = bufferevent_get_output(cc->bev);
	struct frame_hdr	 hdr;
	unsigned char		 raw[FRAME_HDR_LEN];
	char			*text;
	size_t			 len;

	/* A reply that could not be made (text not UTF-8) is an error,
	 * never the daemon's end. */
	if (reply == NULL) {
		log_warnx("control: a reply could not be made");
		reply = json_pack("{s:b, s:s}", "ok", 0, "error", "internal "
		    "error: the reply could not be made (see the log)");
	}
	if ((text = json_dumps(reply, JSON_COMPACT)) == NULL)
		fatalx("json_dumps");
	json_decref(reply);
	if ((len = strlen(text)) > CONTROL_MAX_REPLY) {
		log_warnx("control: a reply of %zu bytes is over the %d that "
		    "mcpctl takes", len, CONTROL_MAX_REPLY);
		free(text);
		reply = json_pack("{s:b, s:s}", "ok", 0, "error",
		    "the reply is too large");
		if ((text = json_dumps(reply, JSON_COMPACT)) == NULL)
			fatalx("json_dumps");
		json_decref(reply);
		len = strlen(text);
	}
	if (len <= CONTROL_COPY_MAX) {
		frame_add(out, MSG_CTL_REPLY, 0, 0, text, len);
		free(text);
		return;
	}
	memset(&hdr, 0, sizeof hdr);
	hdr.len = (uint32_t)len;
	hdr.type = MSG_CTL_REPLY;
	frame_hdr_encode(&hdr, raw);
	if (evbuffer_add(out, raw, sizeof raw) != 0 ||
	    evbuffer_add_reference(out, text, len, control_free_text,
	    NULL) != 0)
		fatalx("evbuffer_add");
}

/* Calls in flight over every upstream. */
static unsigned int
control_in_flight(void)
{
	unsigned int	n = 0;
	size_t		i;

	for (i = 0; i < nupstreams; i++)
		n += upstreams[i]->npending;
	return (n);
}

/*
 * Is anything required unhealthy?  The gateway not ready (503: a required
 * upstream failed or stopped, no upstream usable, or one still coming up),
 * or a required upstream not ready; those are problems, and an upstream
 * that is not required and not ready is a warning.  Draining is not a
 * failure.  mcpctl check and status exit 3 on a problem.
 */
static int
control_health(json_t *problems, json_t *warnings)
{
	struct upstream	*up;
	char		 why[256], *msg;
	size_t		 i;

	if (health_ready(why, sizeof why) == 503) {
		xasprintf(&msg, "not ready: %s", why);
		json_array_append_new(problems, json_string(msg));
		free(msg);
	}
	for (i = 0; i < nupstreams; i++) {
		up = upstreams[i];
		if (up->state == UPSTREAM_READY ||
		    (up->state == UPSTREAM_IDLE && up->sc->lazy))
			continue;
		xasprintf(&msg, "upstream %s is %s%s%s", up->sc->name,
		    upstream_state_name(up->state),
		    up->proc.last_error != NULL ? ": " : "",
		    up->proc.last_error != NULL ? up->proc.last_error : "");
		json_array_append_new(up->sc->required ? problems : warnings,
		    json_string(msg));
		free(msg);
	}
	idp_health(problems, warnings);
	pin_health(warnings);
	return (json_array_size(problems) == 0);
}

/* Build the status reply. */
static json_t *
control_status(void)
{
	json_t	*ups, *o, *problems, *warnings;
	size_t	 i;
	char	 why[256];
	int	 ready;

	ups = json_array();
	for (i = 0; i < nupstreams; i++)
		json_array_append_new(ups, upstream_status_json(upstreams[i]));
	ready = health_ready(why, sizeof why);
	o = json_pack("{s:b, s:s, s:I, s:s, s:s, s:I, s:I, s:I, s:o, s:o, "
	    "s:o, s:o}",
	    "ok", 1, "version", PACKAGE_VERSION,
	    "pid", (json_int_t)getpid(), "instance", conf->instance,
	    "listen", listen_bound,
	    "sessions", (json_int_t)session_count(),
	    "connections", (json_int_t)http_conn_count(),
	    "calls_in_flight", (json_int_t)control_in_flight(),
	    "upstreams", ups, "llm", provider_status_json(),
	    "collisions", catalog_collisions(),
	    "renamed", catalog_renamed());
	json_object_set_new(o, "parked", json_integer(continuation_count()));
	json_object_set_new(o, "issuers", idp_status_json());
	json_object_set_new(o, "rate_limits", rate_status_json());
	json_object_set_new(o, "endpoints", vendpoint_status_json());
	if (metrics_bound[0] != '\0')
		json_object_set_new(o, "metrics_listen",
		    json_string(metrics_bound));
	json_object_set_new(o, "started", json_integer(daemon_started));
	json_object_set_new(o, "uptime", json_integer(time(NULL) -
	    daemon_started));
	json_object_set_new(o, "state", json_string(drain_active() ?
	    "draining" : "running"));
	if (drain_active())
		json_object_set_new(o, "drain_remaining",
		    json_integer(drain_remaining()));
	json_object_set_new(o, "ready", json_integer(ready));
	if (ready != 200)
		json_object_set_new(o, "ready_reason", json_string(why));
	/* What check says, so that status exits as it does. */
	problems = json_array();
	warnings = json_array();
	json_object_set_new(o, "healthy", json_boolean(control_health(problems,
	    warnings)));
	json_object_set_new(o, "problems", problems);
	json_decref(warnings);
	return (o);
}

/* One session for mcpctl sessions. */
static void
control_session_one(struct session *s, void *arg)
{
	json_t		*a = arg, *o;
	const char	*name, *version;
	char		 id[64];
	int64_t		 now = now_ms();

	name = json_string_value(json_object_get(s->client_info, "name"));
	version = json_string_value(json_object_get(s->client_info,
	    "version"));
	snprintf(id, sizeof id, "%s.%.8s", conf->instance, s->id);
	o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:I}",
	    "id", id, "client", name != NULL ? name : "",
	    "client_version", version != NULL ? version : "",
	    "protocol", s->client_caps != NULL ? s->version : "",
	    "transport", obs_transport_names[s->transport],
	    "peer", s->peer,
	    "age", (json_int_t)((now - s->created) / 1000),
	    "idle", (json_int_t)((now - s->last_active) / 1000),
	    "in_flight", (json_int_t)(s->npending + s->nup_requests));
	if (s->client_name != NULL)
		json_object_set_new(o, "named_client",
		    json_string(s->client_name));
	if (s->grant != NULL)
		json_object_set_new(o, "subject",
		    json_string(s->grant->subject));
	json_object_set_new(o, "endpoint", json_string(vendpoint_path(s->vep)));
	json_array_append_new(a, o);
}

/*
 * The newest sessions, at most limit (default CONTROL_LIST_DEFAULT),
 * in order of creation, and how many there are: a list of 100,000 would
 * hold the loop for half a second and be larger than mcpctl takes.
 */
static json_t *
control_sessions(json_t *req)
{
	json_int_t	 limit = CONTROL_LIST_DEFAULT, n;
	struct session	*s, *first = NULL;
	json_t		*a;

	if (json_unpack(req, "{s?I}", "limit", &limit) != 0 || limit < 1 ||
	    limit > CONTROL_LIST_MAX)
		return (control_error("sessions: the number to list is from "
		    "1 to " CONTROL_LIST_MAX_TEXT));
	for (s = session_last(), n = 0; s != NULL && n < limit;
	    s = session_prev(s), n++)
		first = s;
	a = json_array();
	for (s = first; s != NULL; s = session_next(s))
		control_session_one(s, a);
	return (json_pack("{s:b, s:o, s:I}", "ok", 1, "sessions", a,
	    "total", (json_int_t)session_count()));
}

static json_t *
control_tools(json_t *req)
{
	const char	*name = NULL;
	json_t		*tools;

	json_unpack(req, "{s?s}", "name", &name);
	if ((tools = catalog_tools_json(name)) == NULL)
		return (control_error("no tool is listed as %.300s", name));
	return (json_pack("{s:b, s:o, s:o, s:o}", "ok", 1, "tools", tools,
	    "collisions", catalog_collisions(), "renamed",
	    catalog_renamed()));
}

/* Build the check reply. */
static json_t *
control_check(void)
{
	json_t	*problems = json_array(), *warnings = json_array();
	int	 healthy;

	healthy = control_health(problems, warnings);
	return (json_pack("{s:b, s:b, s:s, s:o, s:o}", "ok", 1, "healthy",
	    healthy, "state", drain_active() ? "draining" : "running",
	    "problems", problems, "warnings", warnings));
}

static json_t *
control_drain(json_t *req)
{
	json_int_t	 seconds = CONTROL_DRAIN_DEFAULT;
	char		 err[256];

	if (json_unpack(req, "{s?I}", "seconds", &seconds) != 0 ||
	    seconds < 0 || seconds > UINT32_MAX)
		return (control_error("drain: seconds must be a number"));
	if (drain_start((unsigned int)seconds, err, sizeof err) != 0)
		return (control_error("%s", err));
	return (json_pack("{s:b, s:I, s:I}", "ok", 1, "sessions",
	    (json_int_t)session_count_busy(), "seconds", seconds));
}

static json_t *
control_reopen(void)
{
	char	err[512];

	if (access_log_open(conf, err, sizeof err) != 0) {
		log_warnx("mcpctl reopen: %s", err);
		return (control_error("%s", err));
	}
	log_info("access log reopened (mcpctl)");
	return (json_pack("{s:b}", "ok", 1));
}

/* Run one command. */
static json_t *
control_command(json_t *req)
{
	const char	*cmd, *name;
	struct upstream	*up;
	char		 err[256];
	int		 r;

	if (json_unpack(req, "{s:s}", "command", &cmd) != 0)
		return (control_error("request has no command"));
	if (strcmp(cmd, "status") == 0)
		return (control_status());
	if (strcmp(cmd, "sessions") == 0)
		return (control_sessions(req));
	if (strcmp(cmd, "tools") == 0)
		return (control_tools(req));
	if (strcmp(cmd, "pins") == 0 || strcmp(cmd, "pin_diff") == 0 ||
	    strcmp(cmd, "pin_approve") == 0)
		return (pin_control(cmd, req));
	if (uplogin_command(cmd))
		return (uplogin_control(cmd, req));
	if (strcmp(cmd, "check") == 0)
		return (control_check());
	if (strcmp(cmd, "drain") == 0)
		return (control_drain(req));
	if (strcmp(cmd, "reopen") == 0)
		return (control_reopen());
	if (strcmp(cmd, "reload") == 0)
		return (reload());
	if (strcmp(cmd, "refresh-keys") == 0) {
		name = NULL;
		json_unpack(req, "{s?s}", "name", &name);
		return (idp_control_refresh(name));
	}
	if (strcmp(cmd, "stop") == 0 || strcmp(cmd, "start") == 0 ||
	    strcmp(cmd, "restart") == 0) {
		if (json_unpack(req, "{s:s}", "name", &name) != 0)
			return (control_error("which upstream?"));
		if ((up = upstream_find(name)) == NULL)
			return (control_error("no upstream named %.300s", name));
		if (strcmp(cmd, "stop") == 0)
			r = upstream_stop(up, err, sizeof err);
		else if (strcmp(cmd, "start") == 0)
			r = upstream_start(up, err, sizeof err);
		else
			r = upstream_restart(up, err, sizeof err);
		if (r != 0)
			return (control_error("%s", err));
		return (json_pack("{s:b}", "ok", 1));
	}
	return (control_error("unknown command: %.100s", cmd));
}

/* Close a control connection. */
static void
control_close_client(struct control_conn *cc)
{
	TAILQ_REMOVE(&control_conns, cc, entry);
	evbuffer_remove_cb_entry(bufferevent_get_output(cc->bev), cc->out_cb);
	bufferevent_free(cc->bev);
	event_free(cc->idle_ev);
	free(cc);
	control_clients--;
}

/* Something happened on a connection: it has CONTROL_IDLE_MS again. */
static void
control_touch(struct control_conn *cc)
{
	struct timeval	tv = { CONTROL_IDLE_MS / 1000,
			    (CONTROL_IDLE_MS % 1000) * 1000 };

	cc->active = now_ms();
	evtimer_add(cc->idle_ev, &tv);
}

static void
control_idle_cb(evutil_socket_t fd, short events, void *arg)
{
	struct control_conn	*cc = arg;

	log_info("control: closing a connection that did nothing for %d s "
	    "(%s)", CONTROL_IDLE_MS / 1000,
	    evbuffer_get_length(bufferevent_get_output(cc->bev)) > 0 ?
	    "its replies unread" : "no request");
	control_close_client(cc);
}

/* Reading a reply is activity. */
static void
control_out_cb(struct evbuffer *out, const struct evbuffer_cb_info *info,
    void *arg)
{
	if (info->n_deleted > 0)
		control_touch(arg);
}

/*
 * Answer the requests that have come, in order, while fewer than
 * CONTROL_OUT_HIGH bytes of replies wait to be read; past that, stop
 * reading until they are.  The connection may be closed on return.
 */
static int
control_process(struct control_conn *cc)
{
	struct evbuffer		*in = bufferevent_get_input(cc->bev);
	struct evbuffer		*out = bufferevent_get_output(cc->bev);
	struct frame_hdr	 hdr;
	const char		*why;
	json_t			*req;

	for (;;) {
		if (evbuffer_get_length(out) >= CONTROL_OUT_HIGH) {
			cc->paused = 1;
			bufferevent_disable(cc->bev, EV_READ);
			return (0);
		}
		switch (frame_peek(in, CONTROL_MAX_FRAME, &hdr, &why)) {
		case FRAME_NEED:
			return (0);
		case FRAME_BAD:
			log_warnx("control: bad frame: %s", why);
			control_close_client(cc);
			return (-1);
		case FRAME_OK:
			break;
		}
		if (hdr.type != MSG_CTL_REQUEST ||
		    (req = frame_take_json(in, &hdr, &why)) == NULL) {
			log_warnx("control: bad request");
			control_close_client(cc);
			return (-1);
		}
		control_reply(cc, control_command(req));
		json_decref(req);
		control_touch(cc);
	}
	return (0);
}

static void
control_read_cb(struct bufferevent *bev, void *arg)
{
	control_process(arg);
}

/* Close a client that is done sending once its replies are out. */
static void
control_done_if_eof(struct control_conn *cc)
{
	if (cc->eof && !cc->paused &&
	    evbuffer_get_length(bufferevent_get_output(cc->bev)) == 0)
		control_close_client(cc);
}

/* The replies have been read: read requests again. */
static void
control_write_cb(struct bufferevent *bev, void *arg)
{
	struct control_conn	*cc = arg;

	if (cc->paused) {
		cc->paused = 0;
		if (!cc->eof)
			bufferevent_enable(bev, EV_READ);
		if (control_process(cc) != 0)
			return;
	}
	control_done_if_eof(cc);
}

static void
control_event_cb(struct bufferevent *bev, short events, void *arg)
{
	struct control_conn	*cc = arg;

	if (!(events & BEV_EVENT_EOF) || (events & BEV_EVENT_ERROR)) {
		control_close_client(cc);
		return;
	}
	/* A client that shut its sending side (socat, a script) still gets
	 * the replies to what it sent. */
	cc->eof = 1;
	bufferevent_disable(bev, EV_READ);
	if (control_process(cc) == 0)
		control_done_if_eof(cc);
}

/*
 * Make room for a new connection: close the one that has done nothing
 * for longest, if that is CONTROL_GRACE_MS.  0 if one was closed.
 */
static int
control_make_room(void)
{
	struct control_conn	*cc, *oldest = NULL;
	int64_t			 now = now_ms();

	TAILQ_FOREACH(cc, &control_conns, entry) {
		if (oldest == NULL || cc->active < oldest->active)
			oldest = cc;
	}
	if (oldest == NULL || now - oldest->active < CONTROL_GRACE_MS) {
		log_warnx("control: %u connections, all busy: refusing one",
		    control_clients);
		return (-1);
	}
	log_info("control: %u connections: closing one that did nothing for "
	    "%lld ms", control_clients, (long long)(now - oldest->active));
	control_close_client(oldest);
	return (0);
}

static void
control_accept_cb(struct evconnlistener *lev, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct control_conn	*cc;

	if (control_clients >= CONTROL_MAX_CLIENTS &&
	    control_make_room() != 0) {
		close(fd);
		return;
	}
	cc = xcalloc(1, sizeof *cc);
	cc->bev = bufferevent_socket_new(base, fd, BEV_OPT_CLOSE_ON_FREE);
	cc->idle_ev = evtimer_new(base, control_idle_cb, cc);
	cc->out_cb = evbuffer_add_cb(bufferevent_get_output(cc->bev),
	    control_out_cb, cc);
	TAILQ_INSERT_TAIL(&control_conns, cc, entry);
	control_clients++;
	control_touch(cc);
	/* At most one request's frame waits unread in our buffer. */
	bufferevent_setwatermark(cc->bev, EV_READ, 0,
	    FRAME_HDR_LEN + CONTROL_MAX_FRAME);
	bufferevent_setcb(cc->bev, control_read_cb, control_write_cb,
	    control_event_cb, cc);
	bufferevent_enable(cc->bev, EV_READ | EV_WRITE);
}

/* Accept again after a pause. */
static void
control_resume_cb(evutil_socket_t fd, short events, void *arg)
{
	if (control_lev != NULL)
		evconnlistener_enable(control_lev);
}

/*
 * accept failed.  Out of descriptors, the pending connection stays
 * pending and the listener would fire again at once: stop accepting for
 * a while instead of spinning.
 */
static void
control_accept_error_cb(struct evconnlistener *lev, void *arg)
{
	struct timeval	tv = { 0, CONTROL_PAUSE_MS * 1000 };
	int		err = errno;

	if (err != EMFILE && err != ENFILE && err != ENOBUFS &&
	    err != ENOMEM) {
		log_warn("control socket: accept");
		return;
	}
	log_warnx("control socket: out of file descriptors with %u control "
	    "clients: not accepting for %d ms", control_clients,
	    CONTROL_PAUSE_MS);
	evconnlistener_disable(lev);
	evtimer_add(control_pause_ev, &tv);
}

/* Create the parent directory of the socket if it is missing. */
static void
control_mkdir(const char *path)
{
	char	*dir, *slash;

	dir = xstrdup(path);
	if ((slash = strrchr(dir, '/')) != NULL && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0755) != 0 && errno != EEXIST)
			log_warn("mkdir %s", dir);
	}
	free(dir);
}

/* Listen on the control socket. */
int
control_listen(const char *path)
{
	struct sockaddr_un	sun;
	struct timeval		tv = { 1, 0 };
	struct stat		st;
	mode_t			old;
	int			fd;

	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof sun.sun_path) {
		log_warnx("control socket path too long: %s", path);
		return (-1);
	}
	strcpy(sun.sun_path, path);
	control_mkdir(path);

	/* What is there is replaced only if it is a socket. */
	if (lstat(path, &st) == 0 && !S_ISSOCK(st.st_mode)) {
		log_warnx("control socket %s: something else is there (not a "
		    "socket): not replaced", path);
		return (-1);
	}
	/* A socket that answers belongs to a running daemon, and so does
	 * one whose queue is full (a daemon that is stuck). */
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) != -1) {
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
		if (connect(fd, (struct sockaddr *)&sun, sizeof sun) == 0 ||
		    errno == EAGAIN) {
			close(fd);
			log_warnx("control socket %s is in use: is "
			    "mcp-supervisord already running?", path);
			return (-1);
		}
		close(fd);
	}
	if (unlink(path) != 0 && errno != ENOENT) {
		log_warn("unlink %s", path);
		return (-1);
	}
	old = umask(0117);
	control_lev = evconnlistener_new_bind(base, control_accept_cb, NULL,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 16,
	    (struct sockaddr *)&sun, sizeof sun);
	umask(old);
	if (control_lev == NULL) {
		log_warn("control socket %s", path);
		return (-1);
	}
	evconnlistener_set_error_cb(control_lev, control_accept_error_cb);
	control_pause_ev = evtimer_new(base, control_resume_cb, NULL);
	control_path = xstrdup(path);
	return (0);
}

void
control_close(void)
{
	if (control_lev == NULL)
		return;
	evconnlistener_free(control_lev);
	control_lev = NULL;
	event_free(control_pause_ev);
	control_pause_ev = NULL;
	unlink(control_path);
	free(control_path);
	control_path = NULL;
}
