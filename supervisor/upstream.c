/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <sys/socket.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "iochan.h"
#include "log.h"
#include "supervisor.h"
#include "xmalloc.h"

#define STOP_GRACE		5	/* seconds before SIGKILL */
#define CHANNEL_SLACK		65536	/* frame bytes beyond max_message */
#define CHANNEL_MAX_QUEUED	(256 * 1024 * 1024)

struct upstream	**upstreams;
size_t		  nupstreams;

/* Upstreams removed from the configuration whose workers are exiting. */
static struct upstream	**retired;
static size_t		  nretired;

static const char *const state_names[] = {
	[UPSTREAM_STARTING] = "starting",
	[UPSTREAM_READY] = "ready",
	[UPSTREAM_BACKOFF] = "backoff",
	[UPSTREAM_STOPPED] = "stopped",
	[UPSTREAM_FAILED] = "failed",
	[UPSTREAM_IDLE] = "idle",
};

static void	upstream_spawn(struct upstream *);
static void	upstream_free_retired(void);
static void	upstream_lost(struct upstream *, const char *);
static void	upstream_arm(struct upstream *, unsigned int);

const char *
upstream_state_name(enum upstream_state s)
{
	return (state_names[s]);
}

/* Record the last error of an upstream. */
static void __attribute__((format(printf, 2, 3)))
upstream_error(struct upstream *up, const char *fmt, ...)
{
	va_list	ap;
	char	*msg;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		fatal("vasprintf");
	va_end(ap);
	free(up->last_error);
	up->last_error = msg;
	up->last_error_at = time(NULL);
}

/* Find an upstream by name. */
struct upstream *
upstream_find(const char *name)
{
	size_t	i;

	for (i = 0; i < nupstreams; i++) {
		if (strcmp(upstreams[i]->sc->name, name) == 0)
			return (upstreams[i]);
	}
	return (NULL);
}

/* Create an upstream from its configuration and start it unless lazy. */
static struct upstream *
upstream_new(const struct server_conf *sc)
{
	struct upstream	*up;

	up = xcalloc(1, sizeof *up);
	up->sc = conf_server_copy(sc);
	up->pid = -1;
	up->upstream_pid = -1;
	up->delay = up->sc->restart_delay;
	up->loglevel = -1;
	budget_init(&up->budget);
	TAILQ_INIT(&up->pending);
	TAILQ_INIT(&up->up_requests);
	strmap_init(&up->subs);
	if (up->sc->lazy)
		up->state = UPSTREAM_IDLE;
	else
		upstream_spawn(up);
	return (up);
}

/* Free an upstream that has no worker and nothing in flight. */
static void
upstream_free(struct upstream *up)
{
	if (up->timer != NULL)
		event_free(up->timer);
	if (up->ch != NULL)
		iochan_free(up->ch);
	json_decref(up->catalog);
	json_decref(up->info);
	strmap_free(&up->subs);
	free(up->last_error);
	conf_server_free(up->sc);
	free(up->sc);
	free(up);
}

/* Create the upstreams of the configuration and start their workers. */
void
upstream_init_all(void)
{
	size_t	i;

	nupstreams = conf->nservers;
	upstreams = xcalloc(nupstreams + 1, sizeof *upstreams);
	for (i = 0; i < nupstreams; i++)
		upstreams[i] = upstream_new(&conf->servers[i]);
}

/* Start a lazy upstream on its first use. */
void
upstream_use(struct upstream *up)
{
	if (up->state != UPSTREAM_IDLE)
		return;
	log_info("upstream %s: first use, starting", up->sc->name);
	upstream_spawn(up);
}

/* Forget an upstream's catalog (it is stopped or has failed). */
static void
upstream_drop_catalog(struct upstream *up)
{
	if (up->catalog == NULL)
		return;
	json_decref(up->catalog);
	up->catalog = NULL;
	catalog_rebuild();
}

/*
 * Ask a running worker to stop (a SHUTDOWN frame, or SIGTERM if its channel
 * is gone), and kill it if it has not exited within STOP_GRACE.
 */
static void
upstream_shutdown(struct upstream *up)
{
	if (up->pid <= 0)
		return;
	if (up->ch != NULL)
		frame_add(iochan_output(up->ch), MSG_SHUTDOWN, 0, 0, "{}", 2);
	else
		kill(up->pid, SIGTERM);
	upstream_arm(up, STOP_GRACE);
}

/* mcpctl stop NAME. */
int
upstream_stop(struct upstream *up, char *err, size_t len)
{
	char	msg[256];

	if (up->state == UPSTREAM_STOPPED && !up->restart_now) {
		snprintf(err, len, "%s is already stopped", up->sc->name);
		return (-1);
	}
	log_info("upstream %s: stopping (mcpctl)", up->sc->name);
	up->restart_now = 0;
	up->state = UPSTREAM_STOPPED;
	if (up->timer != NULL)
		evtimer_del(up->timer);
	snprintf(msg, sizeof msg, "upstream %s was stopped", up->sc->name);
	route_fail_upstream(up, MCP_CONNECTION_CLOSED, msg, 0);
	upstream_shutdown(up);
	upstream_drop_catalog(up);
	return (0);
}

/* mcpctl start NAME. */
int
upstream_start(struct upstream *up, char *err, size_t len)
{
	if (up->pid > 0 && (up->state == UPSTREAM_STOPPED ||
	    up->state == UPSTREAM_BACKOFF)) {
		log_info("upstream %s: starting once its worker has exited "
		    "(mcpctl)", up->sc->name);
		up->failures = 0;
		up->delay = up->sc->restart_delay;
		up->restart_now = 1;
		up->state = UPSTREAM_STARTING;
		/* A worker that lingers is killed, as after a restart. */
		if (up->timer == NULL || evtimer_pending(up->timer, NULL) == 0)
			upstream_arm(up, STOP_GRACE);
		return (0);
	}
	if (up->pid > 0 || (up->state != UPSTREAM_STOPPED &&
	    up->state != UPSTREAM_FAILED && up->state != UPSTREAM_IDLE &&
	    up->state != UPSTREAM_BACKOFF)) {
		snprintf(err, len, "%s is %s", up->sc->name,
		    state_names[up->state]);
		return (-1);
	}
	log_info("upstream %s: starting (mcpctl)", up->sc->name);
	if (up->timer != NULL)
		evtimer_del(up->timer);
	up->failures = 0;
	up->delay = up->sc->restart_delay;
	upstream_spawn(up);
	return (0);
}

/*
 * Stop a running worker and start a new one as soon as it has exited.  The
 * catalog stays listed, and calls wait for the new worker as they do for
 * any upstream that is starting.
 */
static void
upstream_respawn(struct upstream *up)
{
	up->failures = 0;
	up->delay = up->sc->restart_delay;
	up->restart_now = 1;
	up->state = UPSTREAM_STARTING;
	if (up->timer != NULL)
		evtimer_del(up->timer);
	upstream_shutdown(up);
}

/* mcpctl restart NAME: start it if it does not run. */
int
upstream_restart(struct upstream *up, char *err, size_t len)
{
	if (up->pid <= 0 || up->state == UPSTREAM_STOPPED)
		return (upstream_start(up, err, len));
	log_info("upstream %s: restarting (mcpctl)", up->sc->name);
	upstream_respawn(up);
	return (0);
}

/* Timer: restart after backoff, or force a stop. */
static void
upstream_timer_cb(evutil_socket_t fd, short events, void *arg)
{
	struct upstream	*up = arg;

	switch (up->state) {
	case UPSTREAM_BACKOFF:
		upstream_spawn(up);
		break;
	case UPSTREAM_STARTING:
		if (up->restart_now) {
			log_warnx("upstream %s: worker %ld did not stop, "
			    "killing it", up->sc->name, (long)up->pid);
			kill(up->pid, SIGKILL);
			break;
		}
		log_warnx("upstream %s: not ready after %u s, killing it",
		    up->sc->name, up->sc->init_timeout + 5);
		upstream_error(up, "not ready after %u s",
		    up->sc->init_timeout + 5);
		if (up->pid > 0)
			kill(up->pid, SIGKILL);
		upstream_lost(up, "startup timeout");
		break;
	case UPSTREAM_STOPPED:
		if (up->pid > 0) {
			log_warnx("upstream %s: worker %ld did not stop, "
			    "killing it", up->sc->name, (long)up->pid);
			kill(up->pid, SIGKILL);
		}
		break;
	default:
		break;
	}
}

/* Arm the upstream's timer. */
static void
upstream_arm(struct upstream *up, unsigned int seconds)
{
	struct timeval	tv = { (time_t)seconds, 0 };

	if (up->timer == NULL)
		up->timer = evtimer_new(base, upstream_timer_cb, up);
	evtimer_add(up->timer, &tv);
}

/* Tell an upstream about one session. */
static void
upstream_open_one(struct session *s, void *arg)
{
	upstream_session_open(arg, s);
}

/* Tell an upstream's worker about a client session (supervisor.h). */
void
upstream_session_open(struct upstream *up, struct session *s)
{
	json_t	*o;

	if (s->client_caps == NULL)
		return;
	o = json_pack("{s:O, s:s}", "capabilities", s->client_caps,
	    "protocolVersion", s->version);
	if (s->client_info != NULL)
		json_object_set(o, "clientInfo", s->client_info);
	if (s->loglevel >= 0)
		json_object_set_new(o, "logLevel",
		    json_string(log_level_name(s->loglevel)));
	/* Tokenless 2026-07-28 clients are one principal, any number of
	 * clients: the worker never guesses which call is whose. */
	if (s->modern && s->credential == 0 && s->client_name == NULL)
		json_object_set_new(o, "shared", json_true());
	if (up->state == UPSTREAM_READY && up->ch != NULL)
		frame_add_json(iochan_output(up->ch),
		    MSG_SESSION_OPEN, s->no, 0, o);
	json_decref(o);
}

/* Does the upstream speak 2026-07-28?  Its worker found out. */
int
upstream_modern(const struct upstream *up)
{
	const char	*era;

	return (json_unpack(up->info, "{s:s}", "era", &era) == 0 &&
	    strcmp(era, "2026") == 0);
}

/* Does the upstream declare a capability? */
int
upstream_has_capability(const struct upstream *up, const char *name)
{
	return (json_object_get(json_object_get(up->info, "capabilities"),
	    name) != NULL);
}

/* Handle a STATUS frame. */
static void
upstream_status(struct upstream *up, json_t *msg)
{
	const char	*state, *error;
	json_int_t	 pid;

	if (json_unpack(msg, "{s:s}", "state", &state) != 0) {
		log_warnx("upstream %s: STATUS without state", up->sc->name);
		return;
	}
	if (json_unpack(msg, "{s:I}", "pid", &pid) == 0)
		up->upstream_pid = (pid_t)pid;
	if (json_unpack(msg, "{s:s}", "error", &error) == 0) {
		upstream_error(up, "%s", error);
		up->reported = 1;
	}
	if (json_is_true(json_object_get(msg, "probe_failed")))
		up->era_fallback = 1;
	/* Its worker is about to exit: route nothing more to it. */
	if (strcmp(state, "exiting") == 0 && up->state == UPSTREAM_READY)
		up->state = UPSTREAM_BACKOFF;
	if (strcmp(state, "ready") == 0 && up->state == UPSTREAM_STARTING) {
		up->state = UPSTREAM_READY;
		up->ready_at = now_ms();
		up->ready_once = 1;
		if (up->timer != NULL)
			evtimer_del(up->timer);
		json_decref(up->info);
		up->info = json_incref(msg);
		log_info("upstream %s: ready (pid %ld, %lld ms)",
		    up->sc->name, (long)up->upstream_pid,
		    (long long)(up->ready_at - up->started));
		notify_status();
		session_foreach(upstream_open_one, up);
		route_upstream_ready(up);
	}
}

/* Handle one frame from a worker; -1 if the channel is corrupt. */
static int
upstream_frame(struct upstream *up, const struct frame_hdr *hdr,
    struct evbuffer *in)
{
	json_t		*msg;
	const char	*why;

	switch (hdr->type) {
	case MSG_HELLO:
	case MSG_STATUS:
	case MSG_CATALOG:
		if ((msg = frame_take_json(in, hdr, &why)) == NULL) {
			log_warnx("upstream %s: %s frame: %s", up->sc->name,
			    msg_type_name(hdr->type), why);
			return (-1);
		}
		if (hdr->type == MSG_STATUS)
			upstream_status(up, msg);
		else if (hdr->type == MSG_CATALOG && hdr->session != 0)
			view_part(up, hdr->session, msg);
		else if (hdr->type == MSG_CATALOG) {
			json_decref(up->catalog);
			up->catalog = json_incref(msg);
			catalog_rebuild();
		}
		json_decref(msg);
		return (0);
	case MSG_RESPONSE:
	case MSG_FAIL:
	case MSG_NOTIFY:
	case MSG_UP_REQUEST:
		route_worker_frame(up, hdr, in);
		return (0);
	default:
		log_warnx("upstream %s: unexpected %s frame", up->sc->name,
		    msg_type_name(hdr->type));
		return (-1);
	}
}

/* Handle every whole frame buffered from a worker; -1 if corrupt. */
static int
upstream_process(struct upstream *up)
{
	struct evbuffer		*in = iochan_input(up->ch);
	struct frame_hdr	 hdr;
	const char		*why;
	enum frame_result	 r;

	for (;;) {
		r = frame_peek(in, up->sc->max_message + CHANNEL_SLACK, &hdr,
		    &why);
		if (r == FRAME_NEED)
			return (0);
		if (r == FRAME_BAD) {
			log_warnx("upstream %s: bad frame from worker: %s",
			    up->sc->name, why);
			return (-1);
		}
		/* A removed upstream's last words concern no one. */
		if (up->removed) {
			evbuffer_drain(in, FRAME_HDR_LEN + hdr.len);
			continue;
		}
		if (upstream_frame(up, &hdr, in) != 0)
			return (-1);
		if (up->ch == NULL)
			return (0);
	}
}

/* Read frames from a worker. */
static void
upstream_read_cb(struct iochan *ch, void *arg)
{
	struct upstream	*up = arg;

	if (upstream_process(up) == 0)
		return;
	upstream_error(up, "protocol error on worker channel");
	if (up->pid > 0)
		kill(up->pid, SIGKILL);
	upstream_lost(up, "protocol error");
}

/* Read what a dead worker left in the channel, so its last words count. */
static void
upstream_drain(struct upstream *up)
{
	struct evbuffer	*in;
	int		 fd;

	if (up->ch == NULL)
		return;
	in = iochan_input(up->ch);
	fd = iochan_fd(up->ch);
	while (evbuffer_get_length(in) <= up->sc->max_message +
	    CHANNEL_SLACK && evbuffer_read(in, fd, 65536) > 0)
		;
	upstream_process(up);
}

/* The channel closed or failed. */
static void
upstream_event_cb(struct iochan *ch, int what, void *arg)
{
	struct upstream	*up = arg;

	upstream_lost(up, "worker channel closed");
}

/*
 * The worker is gone or going: drop the channel and answer everything in
 * flight.  The restart happens when the process is reaped.
 */
static void
upstream_lost(struct upstream *up, const char *why)
{
	char	msg[256];

	if (up->ch == NULL)
		return;
	iochan_free(up->ch);
	up->ch = NULL;
	log_debug("upstream %s: %s", up->sc->name, why);
	snprintf(msg, sizeof msg, "upstream %s exited during the call",
	    up->sc->name);
	/* After an mcpctl restart, calls waiting for the new worker stay. */
	route_fail_upstream(up, MCP_CONNECTION_CLOSED, msg, up->restart_now);
	if (up->pid > 0)
		kill(up->pid, SIGKILL);
}

/* Fork and exec a worker. */
static void
upstream_spawn(struct upstream *up)
{
	int		 fd;
	pid_t		 pid;
	char		*argv[8], err[256];
	int		 argc = 0;
	json_t		*cfg, *server;

	argv[argc++] = (char *)"mcp-worker";
	if (log_getforeground())
		argv[argc++] = (char *)"-d";
	if (log_getverbose() > 0)
		argv[argc++] = (char *)"-v";
	if (log_getverbose() > 1)
		argv[argc++] = (char *)"-v";
	argv[argc++] = up->sc->name;
	argv[argc] = NULL;

	if ((pid = spawn_worker(up->sc->transport == TRANSPORT_STDIO ?
	    stdio_worker_path : worker_path, argv,
	    up->sc->transport != TRANSPORT_STDIO, &fd, err,
	    sizeof err)) == -1) {
		log_warnx("upstream %s: %s", up->sc->name, err);
		upstream_error(up, "%s", err);
		goto retry;
	}
	up->pid = pid;
	up->upstream_pid = -1;
	up->reported = 0;
	up->state = UPSTREAM_STARTING;
	up->started = now_ms();
	up->ready_at = 0;
	up->ch = iochan_new(base, fd, upstream_read_cb, NULL,
	    upstream_event_cb, up);

	server = conf_server_to_json(up->sc);
	/* It went away during the era probe before: no probe this time. */
	if (up->era_fallback && up->sc->era == ERA_AUTO)
		json_object_set_new(server, "era", json_string("2025"));
	/* What it needs of our environment, which it does not get. */
	if (up->sc->headers != NULL)
		json_object_set_new(server, "headers",
		    spawn_expand_env(up->sc->headers));
	cfg = json_pack("{s:o, s:i, s:o}", "server", server, "verbose",
	    log_getverbose(), "environ", spawn_passed_env(up->sc->pass_env));
	frame_add_json(iochan_output(up->ch), MSG_CONFIG, 0, 0, cfg);
	json_decref(cfg);
	upstream_arm(up, up->sc->init_timeout + 5);
	log_debug("upstream %s: worker %ld started", up->sc->name, (long)pid);
	return;

retry:
	up->state = UPSTREAM_BACKOFF;
	up->backoff = up->delay;
	upstream_arm(up, up->delay);
}

/* Schedule a restart after the worker of an upstream exited. */
static void
upstream_exited(struct upstream *up, int status)
{
	char	how[64];

	if (WIFEXITED(status))
		snprintf(how, sizeof how, "exited with status %d",
		    WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(how, sizeof how, "killed by signal %d",
		    WTERMSIG(status));
	else
		snprintf(how, sizeof how, "ended");

	/* A worker killed outright leaves its upstream group behind. */
	if (WIFSIGNALED(status) && up->upstream_pid > 0)
		kill(-up->upstream_pid, SIGKILL);
	upstream_drain(up);
	upstream_lost(up, how);
	up->pid = -1;
	up->upstream_pid = -1;

	if (up->removed) {
		log_info("upstream %s: worker %s; removed", up->sc->name, how);
		upstream_free_retired();
		return;
	}
	if (up->restart_now) {
		up->restart_now = 0;
		if (up->timer != NULL)
			evtimer_del(up->timer);
		upstream_spawn(up);
		return;
	}
	if (up->state == UPSTREAM_STOPPED) {
		if (up->timer != NULL)
			evtimer_del(up->timer);
		log_info("upstream %s: stopped", up->sc->name);
		return;
	}
	if (!up->reported)
		upstream_error(up, "worker %s", how);
	/* A run that stayed healthy long enough starts the count afresh. */
	if (up->ready_at > 0 && now_ms() - up->ready_at >=
	    (int64_t)up->sc->healthy_after * 1000) {
		up->delay = up->sc->restart_delay;
		up->failures = 0;
	}
	up->failures++;
	if (WIFEXITED(status) && WEXITSTATUS(status) == WORKER_EXIT_CONFIG) {
		log_warnx("upstream %s: worker %s: configuration refused, not "
		    "restarting (%s)", up->sc->name, how,
		    up->last_error != NULL ? up->last_error : "");
		up->state = UPSTREAM_FAILED;
		up->gave_up++;
		upstream_drop_catalog(up);
		return;
	}
	if (up->sc->max_failures > 0 && up->failures >= up->sc->max_failures) {
		log_warnx("upstream %s: failed %u times in a row, giving up "
		    "(mcpctl restart %s retries it): %s", up->sc->name,
		    up->failures, up->sc->name, up->last_error != NULL ?
		    up->last_error : how);
		up->state = UPSTREAM_FAILED;
		up->gave_up++;
		upstream_drop_catalog(up);
		return;
	}
	up->restarts++;
	up->state = UPSTREAM_BACKOFF;
	log_warnx("upstream %s: worker %s; restarting in %u s (%s)",
	    up->sc->name, how, up->delay,
	    up->last_error != NULL ? up->last_error : "no error reported");
	up->backoff = up->delay;
	upstream_arm(up, up->delay);
	up->delay = up->delay * 2 > up->sc->restart_max_delay ?
	    up->sc->restart_max_delay : up->delay * 2;
}

/* Find the upstream, listed or removed, whose worker has a pid. */
static struct upstream *
upstream_by_pid(pid_t pid)
{
	size_t	i;

	for (i = 0; i < nupstreams; i++) {
		if (upstreams[i]->pid == pid)
			return (upstreams[i]);
	}
	for (i = 0; i < nretired; i++) {
		if (retired[i]->pid == pid)
			return (retired[i]);
	}
	return (NULL);
}

/* Reap every exited child. */
void
upstream_reap(void)
{
	struct upstream	*up;
	pid_t		 pid;
	int		 status;

	for (;;) {
		pid = waitpid(-1, &status, WNOHANG);
		if (pid == 0)
			return;
		if (pid == -1) {
			if (errno == EINTR)
				continue;
			return;
		}
		if ((up = upstream_by_pid(pid)) != NULL) {
			upstream_exited(up, status);
			notify_status();
		} else if (!provider_reaped(pid, status))
			log_debug("reaped orphan %ld", (long)pid);
	}
}

/* Ask every worker to stop. */
void
upstream_stop_all(void)
{
	struct upstream	*up;
	size_t		 i;

	for (i = 0; i < nupstreams; i++) {
		up = upstreams[i];
		up->state = UPSTREAM_STOPPED;
		upstream_shutdown(up);
	}
}

/* Is every worker gone? */
int
upstream_all_stopped(void)
{
	size_t	i;

	for (i = 0; i < nupstreams; i++) {
		if (upstreams[i]->pid > 0)
			return (0);
	}
	return (nretired == 0);
}

/* Free the removed upstreams whose workers are gone. */
static void
upstream_free_retired(void)
{
	size_t	i, n = 0;

	for (i = 0; i < nretired; i++) {
		if (retired[i]->pid > 0)
			retired[n++] = retired[i];
		else
			upstream_free(retired[i]);
	}
	nretired = n;
}

/*
 * Take an upstream out of service for good: its calls fail, its
 * subscriptions are forgotten and its worker is asked to stop.  It is
 * freed once the worker has exited (upstream_free_retired).
 */
static void
upstream_remove(struct upstream *up)
{
	char	msg[256];

	log_info("upstream %s: removed from the configuration%s",
	    up->sc->name, up->pid > 0 ? ", stopping it" : "");
	up->removed = 1;
	up->restart_now = 0;
	up->state = UPSTREAM_STOPPED;
	if (up->timer != NULL)
		evtimer_del(up->timer);
	snprintf(msg, sizeof msg, "upstream %s was removed from the "
	    "configuration", up->sc->name);
	route_fail_upstream(up, MCP_CONNECTION_CLOSED, msg, 0);
	route_forget_upstream(up);
	json_decref(up->catalog);
	up->catalog = NULL;
	upstream_shutdown(up);
	retired = xreallocarray(retired, nretired + 1, sizeof *retired);
	retired[nretired++] = up;
}

/*
 * Give an upstream a changed configuration.  A running worker is restarted
 * to take it (its calls in flight fail, those waiting for it are sent to
 * the new one); an upstream stopped by the operator stays stopped.
 */
static void
upstream_reconfigure(struct upstream *up, const struct server_conf *sc)
{
	conf_server_free(up->sc);
	free(up->sc);
	up->sc = conf_server_copy(sc);
	up->failures = 0;
	up->delay = up->sc->restart_delay;
	switch (up->state) {
	case UPSTREAM_STOPPED:
		log_info("upstream %s: configuration changed; stopped, it "
		    "takes it when started", up->sc->name);
		break;
	case UPSTREAM_IDLE:
		log_info("upstream %s: configuration changed", up->sc->name);
		if (!up->sc->lazy)
			upstream_spawn(up);
		break;
	default:
		log_info("upstream %s: configuration changed, %s",
		    up->sc->name, up->pid > 0 ? "restarting" : "starting");
		if (up->pid > 0)
			upstream_respawn(up);
		else {
			if (up->timer != NULL)
				evtimer_del(up->timer);
			upstream_spawn(up);
		}
		break;
	}
}

/* Append a name to one of the report's arrays. */
static void
report_name(json_t *report, const char *key, const char *name)
{
	json_array_append_new(json_object_get(report, key), json_string(name));
}

/*
 * Apply the upstreams of a new configuration, matched by name: one that
 * is the same carries on untouched, a changed one is reconfigured, a new
 * one is started and one no longer listed is removed.  The names go to
 * report's "added", "changed" and "removed" arrays; the catalog follows the
 * new order.
 */
void
upstream_apply(const struct conf *nc, json_t *report)
{
	struct upstream	**next, *up;
	size_t		  i, j;

	json_object_set_new(report, "added", json_array());
	json_object_set_new(report, "changed", json_array());
	json_object_set_new(report, "removed", json_array());
	next = xcalloc(nc->nservers + 1, sizeof *next);
	for (i = 0; i < nc->nservers; i++) {
		if ((up = upstream_find(nc->servers[i].name)) == NULL) {
			log_info("upstream %s: added", nc->servers[i].name);
			next[i] = upstream_new(&nc->servers[i]);
			/* Lazy waits for a session; there may be some. */
			if (session_count() > 0)
				upstream_use(next[i]);
			report_name(report, "added", nc->servers[i].name);
		} else {
			next[i] = up;
			/* Only readiness reads required: no restart for it. */
			up->sc->required = nc->servers[i].required;
			if (!conf_server_equal(up->sc, &nc->servers[i])) {
				upstream_reconfigure(up, &nc->servers[i]);
				report_name(report, "changed", up->sc->name);
			}
		}
	}
	for (i = 0; i < nupstreams; i++) {
		for (j = 0; j < nc->nservers && next[j] != upstreams[i]; j++)
			;
		if (j == nc->nservers) {
			report_name(report, "removed", upstreams[i]->sc->name);
			upstream_remove(upstreams[i]);
		}
	}
	free(upstreams);
	upstreams = next;
	nupstreams = nc->nservers;
	catalog_rebuild();
	upstream_free_retired();
}

/* Queue a frame for a ready upstream. */
static int
upstream_ready_output(struct upstream *up, struct evbuffer **out)
{
	if (up->state != UPSTREAM_READY || up->ch == NULL)
		return (-1);
	*out = iochan_output(up->ch);
	if (evbuffer_get_length(*out) > CHANNEL_MAX_QUEUED) {
		log_warnx("upstream %s: worker is not reading (%zu bytes "
		    "queued), killing it", up->sc->name,
		    evbuffer_get_length(*out));
		upstream_error(up, "worker stopped reading");
		kill(up->pid, SIGKILL);
		upstream_lost(up, "stuck");
		return (-1);
	}
	return (0);
}

int
upstream_send(struct upstream *up, uint16_t type, uint32_t session,
    uint32_t tag, const char *p, size_t len)
{
	struct evbuffer	*out;

	if (upstream_ready_output(up, &out) != 0)
		return (-1);
	frame_add(out, type, session, tag, p, len);
	return (0);
}

int
upstream_send_buffer(struct upstream *up, uint16_t type, uint32_t session,
    uint32_t tag, struct evbuffer *payload)
{
	struct evbuffer	*out;

	if (upstream_ready_output(up, &out) != 0)
		return (-1);
	frame_add_buffer(out, type, session, tag, payload);
	return (0);
}

/* Describe why an upstream cannot take requests. */
void
upstream_unavailable(const struct upstream *up, char *buf, size_t len)
{
	struct timeval	tv;
	const char	*err = up->last_error != NULL ? up->last_error :
			    "no error reported";

	switch (up->state) {
	case UPSTREAM_STARTING:
		snprintf(buf, len, "upstream %s is starting", up->sc->name);
		break;
	case UPSTREAM_BACKOFF:
		if (up->timer != NULL &&
		    evtimer_pending(up->timer, &tv) != 0) {
			snprintf(buf, len, "upstream %s is restarting (last "
			    "error: %s)", up->sc->name, err);
		} else
			snprintf(buf, len, "upstream %s is restarting",
			    up->sc->name);
		break;
	case UPSTREAM_STOPPED:
		snprintf(buf, len, "upstream %s is stopped", up->sc->name);
		break;
	case UPSTREAM_FAILED:
		snprintf(buf, len, "upstream %s has failed (last error: %s)",
		    up->sc->name, err);
		break;
	case UPSTREAM_IDLE:
		snprintf(buf, len, "upstream %s is not started",
		    up->sc->name);
		break;
	default:
		snprintf(buf, len, "upstream %s is not available",
		    up->sc->name);
		break;
	}
}

/* Describe an upstream for mcpctl status. */
json_t *
upstream_status_json(const struct upstream *up)
{
	json_t	*o;

	o = json_pack("{s:s, s:s, s:s, s:I, s:I, s:i, s:I, s:I, s:I, s:I}",
	    "name", up->sc->name,
	    "transport", conf_transport_name(up->sc->transport),
	    "state", state_names[up->state],
	    "pid", (json_int_t)up->pid,
	    "upstream_pid", (json_int_t)up->upstream_pid,
	    "restarts", (int)up->restarts,
	    "tools", (json_int_t)catalog_count(up, CATALOG_TOOLS),
	    "resources", (json_int_t)catalog_count(up, CATALOG_RESOURCES),
	    "prompts", (json_int_t)catalog_count(up, CATALOG_PROMPTS),
	    "pending", (json_int_t)up->npending);
	json_object_set_new(o, "failures", json_integer(up->failures));
	/* Known once its worker found out (era.c). */
	json_object_set_new(o, "era", up->info == NULL ? json_null() :
	    json_string(upstream_modern(up) ? "2026" : "2025"));
	json_object_set_new(o, "last_error", up->last_error != NULL ?
	    json_string(up->last_error) : json_null());
	json_object_set_new(o, "last_error_at", up->last_error != NULL ?
	    json_integer((json_int_t)up->last_error_at) : json_null());
	json_object_set_new(o, "required", json_boolean(up->sc->required));
	json_object_set_new(o, "lazy", json_boolean(up->sc->lazy));
	json_object_set_new(o, "ready_once", json_boolean(up->ready_once));
	json_object_set_new(o, "crashloop_failures",
	    json_integer(up->gave_up));
	if (up->state == UPSTREAM_BACKOFF)
		json_object_set_new(o, "backoff", json_integer(up->backoff));
	if (up->state == UPSTREAM_READY)
		json_object_set_new(o, "uptime",
		    json_integer((now_ms() - up->ready_at) / 1000));
	return (o);
}
