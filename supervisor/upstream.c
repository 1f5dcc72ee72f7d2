/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <sys/wait.h>

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

/* Sessions a ready worker is told of per turn of the loop (about 1.6 µs
 * each: 0.2 ms a turn, where 100,000 at once held the loop 164 ms). */
#define UPSTREAM_OPEN_SLICE	128

#define CHANNEL_MAX_QUEUED	(256 * 1024 * 1024)

struct upstream	**upstreams;
size_t		  nupstreams;

static const char *const state_names[] = {
	[UPSTREAM_STARTING] = "starting",
	[UPSTREAM_READY] = "ready",
	[UPSTREAM_BACKOFF] = "backoff",
	[UPSTREAM_STOPPED] = "stopped",
	[UPSTREAM_FAILED] = "failed",
	[UPSTREAM_IDLE] = "idle",
	[UPSTREAM_LOGIN] = "login",
};

static void	upstream_spawn(void *);
static json_t	*upstream_config(void *);
static int	upstream_frame(void *, const struct frame_hdr *,
		    struct evbuffer *);
static void	upstream_lost(void *);
static void	upstream_start_timeout(void *);
static void	upstream_exited(void *, int, const char *, enum proc_fate);

/* Upstream workers (mcp-worker, mcp-worker-stdio) as proc.c sees them. */
static const struct proc_kind upstream_kind = {
	.what = "upstream",
	.start = upstream_spawn,
	.config = upstream_config,
	.frame = upstream_frame,
	.lost = upstream_lost,
	.start_timeout = upstream_start_timeout,
	.exited = upstream_exited,
};

const char *
upstream_state_name(enum upstream_state s)
{
	return (state_names[s]);
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

/* Give the worker's record the upstream's name and restart policy. */
static void
upstream_policy(struct upstream *up)
{
	struct proc_policy	pp;

	memset(&pp, 0, sizeof pp);
	pp.first_delay = up->sc->restart_delay;
	pp.max_delay = up->sc->restart_max_delay;
	pp.healthy_ms = (int64_t)up->sc->healthy_after * 1000;
	pp.max_failures = up->sc->max_failures;
	pp.start_timeout = up->sc->init_timeout + INIT_GRACE;
	pp.frame_max = up->sc->max_message + FRAME_SLACK;
	proc_configure(&up->proc, up->sc->name, &pp);
}

/* Tell an upstream about one session (its walk after it is ready),
 * unless it was told already. */
static void
upstream_open_one(struct session *s, void *arg)
{
	struct upstream	*up = arg;

	if (u64map_del(&up->opened_ahead, s->no) == NULL)
		upstream_session_open(up, s);
}

/* Begin telling a worker that is ready of every session. */
static void
upstream_open_all(struct upstream *up)
{
	u64map_free(&up->opened_ahead);
	u64map_init(&up->opened_ahead);
	session_walk_begin(&up->opens);
}

/*
 * A frame for a session that the walk after a start has yet to tell the
 * worker of: tell it now, first, once.  (A number left by a session that
 * ended is no other's the walk visits: those were all open together.)
 */
static void
upstream_open_ahead(struct upstream *up, uint16_t type, uint32_t session)
{
	struct session	*s;

	if (!up->opens.busy || session == 0 || type == MSG_SESSION_OPEN ||
	    type == MSG_SESSION_CLOSE)
		return;
	if ((s = session_by_no(session)) == NULL ||
	    !session_walk_ahead(&up->opens, s) ||
	    u64map_get(&up->opened_ahead, s->no) != NULL)
		return;
	upstream_session_open(up, s);
	u64map_put(&up->opened_ahead, s->no, s);
}

/* Create an upstream from its configuration and start it unless lazy. */
static struct upstream *
upstream_new(const struct server_conf *sc)
{
	struct upstream	*up;

	up = xcalloc(1, sizeof *up);
	up->sc = conf_server_copy(sc);
	/* No session can have subscribed at a new upstream yet. */
	up->subs_whole = 1;
	TAILQ_INIT(&up->parts);
	proc_init(&up->proc, &upstream_kind, up);
	session_walk_init(&up->opens, upstream_open_one, up,
	    UPSTREAM_OPEN_SLICE);
	u64map_init(&up->opened_ahead);
	upstream_policy(up);
	proc_reset(&up->proc);
	up->upstream_pid = -1;
	up->loglevel = -1;
	budget_init(&up->budget);
	TAILQ_INIT(&up->pending);
	TAILQ_INIT(&up->up_requests);
	strmap_init(&up->subs);
	limit_init(up);
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
	view_upstream_gone(up);
	session_walk_stop(&up->opens);
	u64map_free(&up->opened_ahead);
	u64map_free(&up->sampling_refs);	/* sampling_upstream_gone
						   emptied it */
	proc_free(&up->proc);
	limit_free(up);
	uplogin_free(up);
	json_decref(up->catalog);
	json_decref(up->info);
	route_subs_clear(up);
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

/* mcpctl stop NAME. */
int
upstream_stop(struct upstream *up, char *err, size_t len)
{
	char	msg[256];

	if (up->state == UPSTREAM_STOPPED && !up->proc.restart_now) {
		snprintf(err, len, "%s is already stopped", up->sc->name);
		return (-1);
	}
	log_info("upstream %s: stopping (mcpctl)", up->sc->name);
	up->proc.restart_now = 0;
	up->state = UPSTREAM_STOPPED;
	snprintf(msg, sizeof msg, "upstream %s was stopped", up->sc->name);
	route_fail_upstream(up, MCP_CONNECTION_CLOSED, msg, 0);
	proc_stop(&up->proc);
	upstream_drop_catalog(up);
	return (0);
}

/* mcpctl start NAME. */
int
upstream_start(struct upstream *up, char *err, size_t len)
{
	if (up->proc.pid > 0 && (up->state == UPSTREAM_STOPPED ||
	    up->state == UPSTREAM_BACKOFF)) {
		log_info("upstream %s: starting once its worker has exited "
		    "(mcpctl)", up->sc->name);
		proc_restart_after(&up->proc);
		up->state = UPSTREAM_STARTING;
		return (0);
	}
	if (up->proc.pid > 0 || (up->state != UPSTREAM_STOPPED &&
	    up->state != UPSTREAM_FAILED && up->state != UPSTREAM_IDLE &&
	    up->state != UPSTREAM_BACKOFF)) {
		snprintf(err, len, "%s is %s", up->sc->name,
		    state_names[up->state]);
		return (-1);
	}
	log_info("upstream %s: starting (mcpctl)", up->sc->name);
	proc_reset(&up->proc);
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
	up->state = UPSTREAM_STARTING;
	proc_restart(&up->proc);
}

/* mcpctl restart NAME: start it if it does not run. */
int
upstream_restart(struct upstream *up, char *err, size_t len)
{
	if (up->proc.pid <= 0 || up->state == UPSTREAM_STOPPED)
		return (upstream_start(up, err, len));
	log_info("upstream %s: restarting (mcpctl)", up->sc->name);
	upstream_respawn(up);
	return (0);
}

/* Its worker was not ready in time: kill it, and it is restarted. */
static void
upstream_start_timeout(void *arg)
{
	struct upstream	*up = arg;

	log_warnx("upstream %s: not ready after %u s, killing it",
	    up->sc->name, up->proc.policy.start_timeout);
	proc_error(&up->proc, "not ready after %u s",
	    up->proc.policy.start_timeout);
	proc_kill(&up->proc, "startup timeout");
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
	uplogin_session_open(up, s, o);
	/* A per-user upstream's record (tokens) is in it. */
	if (up->state == UPSTREAM_READY && up->proc.ch != NULL &&
	    json_object_get(o, "oauth_record") != NULL)
		frame_add_json_secret(iochan_output(up->proc.ch),
		    MSG_SESSION_OPEN, s->no, 0, o);
	else if (up->state == UPSTREAM_READY && up->proc.ch != NULL)
		frame_add_json(iochan_output(up->proc.ch),
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

int
upstream_can_subscribe(const struct upstream *up)
{
	json_t	*r;

	r = json_object_get(json_object_get(up->info, "capabilities"),
	    "resources");
	return (json_is_true(json_object_get(r, "subscribe")));
}

/*
 * The worker waits for a login: the start timer stops, calls waiting for
 * the upstream fail with what to do, and its catalog goes.
 */
static void
upstream_login_needed(struct upstream *up)
{
	char	msg[256];

	up->state = UPSTREAM_LOGIN;
	proc_ready(&up->proc);
	snprintf(msg, sizeof msg, "upstream %s needs a login: mcpctl login %s",
	    up->sc->name, up->sc->name);
	log_warnx("%s", msg);
	route_fail_upstream(up, MCP_CONNECTION_CLOSED, msg, 0);
	upstream_drop_catalog(up);
	notify_status();
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
		proc_error(&up->proc, "%s", error);
		up->reported = 1;
	}
	if (json_is_true(json_object_get(msg, "probe_failed")))
		up->era_fallback = 1;
	/* Its worker is about to exit: route nothing more to it. */
	if (strcmp(state, "exiting") == 0 && up->state == UPSTREAM_READY)
		up->state = UPSTREAM_BACKOFF;
	/* It can get no token without a user: it waits for mcpctl login. */
	if (strcmp(state, "login") == 0 && up->state != UPSTREAM_LOGIN)
		upstream_login_needed(up);
	if (strcmp(state, "ready") == 0 && up->state == UPSTREAM_STARTING) {
		up->state = UPSTREAM_READY;
		proc_ready(&up->proc);
		up->ready_once = 1;
		json_decref(up->info);
		up->info = json_incref(msg);
		log_info("upstream %s: ready (pid %ld, %lld ms)",
		    up->sc->name, (long)up->upstream_pid,
		    (long long)(up->proc.ready_at - up->proc.started));
		notify_status();
		/* A slice at a time; a frame for a session not yet told
		 * tells it first (upstream_open_ahead). */
		upstream_open_all(up);
		route_upstream_ready(up);
	}
}

/* Handle one frame from a worker; -1 if the channel is corrupt. */
static int
upstream_frame(void *arg, const struct frame_hdr *hdr, struct evbuffer *in)
{
	struct upstream	*up = arg;
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
		else if (hdr->type == MSG_CATALOG && up->catalog != NULL &&
		    json_equal(up->catalog, msg))
			log_debug("upstream %s: its lists again, unchanged",
			    up->sc->name);
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
	case MSG_OAUTH_SAVE:
	case MSG_OAUTH_PROGRESS:
		return (uplogin_frame(up, hdr, in));
	default:
		log_warnx("upstream %s: unexpected %s frame", up->sc->name,
		    msg_type_name(hdr->type));
		return (-1);
	}
}

/*
 * The worker is gone or going: answer everything in flight.  After an
 * mcpctl restart, calls waiting for the new worker stay.
 */
static void
upstream_lost(void *arg)
{
	struct upstream	*up = arg;
	char		 msg[256];

	snprintf(msg, sizeof msg, "upstream %s exited during the call",
	    up->sc->name);
	route_fail_upstream(up, MCP_CONNECTION_CLOSED, msg,
	    up->proc.restart_now);
}

/* Fork and exec a worker. */
static void
upstream_spawn(void *arg)
{
	struct upstream	*up = arg;
	char		*argv[8];
	int		 argc = 0;

	argv[argc++] = (char *)"mcp-worker";
	if (log_getforeground())
		argv[argc++] = (char *)"-d";
	if (log_getverbose() > 0)
		argv[argc++] = (char *)"-v";
	if (log_getverbose() > 1)
		argv[argc++] = (char *)"-v";
	argv[argc++] = up->sc->name;
	argv[argc] = NULL;

	if (proc_spawn(&up->proc, up->sc->transport == TRANSPORT_STDIO ?
	    stdio_worker_path : worker_path, argv,
	    up->sc->transport != TRANSPORT_STDIO) == -1) {
		up->state = UPSTREAM_BACKOFF;
		return;
	}
	up->upstream_pid = -1;
	up->reported = 0;
	up->state = UPSTREAM_STARTING;
}

/* The CONFIG frame of a new worker. */
static json_t *
upstream_config(void *arg)
{
	struct upstream	*up = arg;
	json_t		*server, *cfg;

	server = conf_server_to_json(up->sc);
	/* It went away during the era probe before: no probe this time. */
	if (up->era_fallback && up->sc->era == ERA_AUTO)
		json_object_set_new(server, "era", json_string("2025"));
	/* What it needs of our environment, which it does not get. */
	if (up->sc->headers != NULL)
		json_object_set_new(server, "headers",
		    spawn_expand_env(up->sc->headers));
	if (up->sc->oauth != NULL && up->sc->oauth->client_secret != NULL) {
		char	*sv[2] = { up->sc->oauth->client_secret, NULL };
		json_t	*a = spawn_expand_env(sv);

		json_object_set(json_object_get(server, "oauth"),
		    "client_secret", json_array_get(a, 0));
		json_decref(a);
	}
	cfg = json_pack("{s:o, s:i, s:o}", "server", server, "verbose",
	    log_getverbose(), "environ", spawn_passed_env(up->sc->pass_env));
	uplogin_config(up, cfg);
	return (cfg);
}

/* Its worker died: the last error is what it reported, else how it ended. */
static void
upstream_died(struct upstream *up, const char *how)
{
	if (!up->reported)
		proc_error(&up->proc, "worker %s", how);
}

/* Mark an upstream failed: it is not restarted until mcpctl says so. */
static void
upstream_failed(struct upstream *up)
{
	up->state = UPSTREAM_FAILED;
	up->gave_up++;
	upstream_drop_catalog(up);
}

/* The worker of an upstream exited: what proc.c decided, said and done. */
static void
upstream_exited(void *arg, int status, const char *how, enum proc_fate fate)
{
	struct upstream	*up = arg;
	struct proc	*p = &up->proc;

	/* A worker killed outright leaves its upstream group behind. */
	if (WIFSIGNALED(status) && up->upstream_pid > 0)
		kill(-up->upstream_pid, SIGKILL);
	up->upstream_pid = -1;
	switch (fate) {
	case PROC_REMOVED:
		upstream_free(up);
		break;
	case PROC_RESPAWNED:
		break;
	case PROC_STOPPED:
		log_info("upstream %s: stopped", up->sc->name);
		break;
	case PROC_REFUSED:
		upstream_died(up, how);
		log_warnx("upstream %s: worker %s: configuration refused, not "
		    "restarting (%s)", up->sc->name, how,
		    p->last_error != NULL ? p->last_error : "");
		upstream_failed(up);
		break;
	case PROC_GAVE_UP:
		upstream_died(up, how);
		log_warnx("upstream %s: failed %u times in a row, giving up "
		    "(mcpctl restart %s retries it): %s", up->sc->name,
		    p->failures, up->sc->name, p->last_error != NULL ?
		    p->last_error : how);
		upstream_failed(up);
		break;
	case PROC_BACKOFF:
		upstream_died(up, how);
		up->state = UPSTREAM_BACKOFF;
		log_warnx("upstream %s: worker %s; restarting in %u s (%s)",
		    up->sc->name, how, p->backoff, p->last_error != NULL ?
		    p->last_error : "no error reported");
		break;
	}
	notify_status();
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
		proc_stop(&up->proc);
	}
}

/*
 * Take an upstream out of service for good: its calls fail, its
 * subscriptions are forgotten and its worker is asked to stop.  It is
 * freed once the worker has exited (PROC_REMOVED), or by upstream_apply
 * if it has none.
 */
static void
upstream_remove(struct upstream *up)
{
	char	msg[256];

	log_info("upstream %s: removed from the configuration%s",
	    up->sc->name, up->proc.pid > 0 ? ", stopping it" : "");
	proc_remove(&up->proc);
	up->state = UPSTREAM_STOPPED;
	snprintf(msg, sizeof msg, "upstream %s was removed from the "
	    "configuration", up->sc->name);
	route_fail_upstream(up, MCP_CONNECTION_CLOSED, msg, 0);
	route_forget_upstream(up);
	/* Its worker, exiting, has nobody to send updates to. */
	route_subs_clear(up);
	json_decref(up->catalog);
	up->catalog = NULL;
	proc_stop(&up->proc);
}

/*
 * Give an upstream a changed configuration.  A running worker is restarted
 * to take it (its calls in flight fail, those waiting for it are sent to
 * the new one); an upstream stopped by the operator stays stopped.
 */
static void
upstream_reconfigure(struct upstream *up, const struct server_conf *sc)
{
	/* Subscribers are kept by URI only while it is shared. */
	if (sc->isolation != up->sc->isolation)
		up->subs_whole = 0;
	conf_server_free(up->sc);
	free(up->sc);
	up->sc = conf_server_copy(sc);
	upstream_policy(up);
	proc_reset(&up->proc);
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
		    up->sc->name, up->proc.pid > 0 ? "restarting" : "starting");
		if (up->proc.pid > 0)
			upstream_respawn(up);
		else
			upstream_spawn(up);
		break;
	}
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
	struct upstream	**next, **old, *up;
	size_t		  i, j, nold;

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
			reload_report_name(report, "added",
			    nc->servers[i].name);
		} else {
			next[i] = up;
			/* Only readiness reads required, only the
			 * supervisor its traffic: no restart for them. */
			up->sc->required = nc->servers[i].required;
			up->sc->traffic = nc->servers[i].traffic;
			if (!conf_server_equal(up->sc, &nc->servers[i])) {
				upstream_reconfigure(up, &nc->servers[i]);
				reload_report_name(report, "changed",
				    up->sc->name);
			}
			limit_configure(up);
		}
	}
	for (i = 0; i < nupstreams; i++) {
		for (j = 0; j < nc->nservers && next[j] != upstreams[i]; j++)
			;
		if (j == nc->nservers) {
			reload_report_name(report, "removed",
			    upstreams[i]->sc->name);
			upstream_remove(upstreams[i]);
		}
	}
	old = upstreams;
	nold = nupstreams;
	upstreams = next;
	nupstreams = nc->nservers;
	catalog_rebuild();
	/* Those removed without a worker go now, the others as it exits. */
	for (i = 0; i < nold; i++) {
		if (old[i]->proc.removed && old[i]->proc.pid <= 0)
			upstream_free(old[i]);
	}
	free(old);
}

/* Queue a frame for a ready upstream. */
static int
upstream_ready_output(struct upstream *up, struct evbuffer **out)
{
	if (up->state != UPSTREAM_READY || up->proc.ch == NULL)
		return (-1);
	*out = iochan_output(up->proc.ch);
	if (evbuffer_get_length(*out) > CHANNEL_MAX_QUEUED) {
		log_warnx("upstream %s: worker is not reading (%zu bytes "
		    "queued), killing it", up->sc->name,
		    evbuffer_get_length(*out));
		proc_error(&up->proc, "worker stopped reading");
		proc_kill(&up->proc, "stuck");
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
	upstream_open_ahead(up, type, session);
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
	upstream_open_ahead(up, type, session);
	frame_add_buffer(out, type, session, tag, payload);
	return (0);
}

/* Describe why an upstream cannot take requests. */
void
upstream_unavailable(const struct upstream *up, char *buf, size_t len)
{
	const char	*err = up->proc.last_error != NULL ?
			    up->proc.last_error : "no error reported";

	switch (up->state) {
	case UPSTREAM_STARTING:
		snprintf(buf, len, "upstream %s is starting", up->sc->name);
		break;
	case UPSTREAM_BACKOFF:
		if (proc_timer_pending(&up->proc)) {
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
	case UPSTREAM_LOGIN:
		snprintf(buf, len, "upstream %s needs a login: mcpctl login %s",
		    up->sc->name, up->sc->name);
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
	    "pid", (json_int_t)up->proc.pid,
	    "upstream_pid", (json_int_t)up->upstream_pid,
	    "restarts", (int)up->proc.restarts,
	    "tools", (json_int_t)catalog_count(up, CATALOG_TOOLS),
	    "resources", (json_int_t)catalog_count(up, CATALOG_RESOURCES),
	    "prompts", (json_int_t)catalog_count(up, CATALOG_PROMPTS),
	    "pending", (json_int_t)up->npending);
	json_object_set_new(o, "failures", json_integer(up->proc.failures));
	/* Known once its worker found out (era.c). */
	json_object_set_new(o, "era", up->info == NULL ? json_null() :
	    json_string(upstream_modern(up) ? "2026" : "2025"));
	json_object_set_new(o, "last_error", up->proc.last_error != NULL ?
	    json_string(up->proc.last_error) : json_null());
	json_object_set_new(o, "last_error_at", up->proc.last_error != NULL ?
	    json_integer((json_int_t)up->proc.last_error_at) : json_null());
	json_object_set_new(o, "required", json_boolean(up->sc->required));
	json_object_set_new(o, "lazy", json_boolean(up->sc->lazy));
	json_object_set_new(o, "ready_once", json_boolean(up->ready_once));
	json_object_set_new(o, "crashloop_failures",
	    json_integer(up->gave_up));
	if (up->state == UPSTREAM_BACKOFF)
		json_object_set_new(o, "backoff",
		    json_integer(up->proc.backoff));
	if (up->state == UPSTREAM_READY)
		json_object_set_new(o, "uptime",
		    json_integer((now_ms() - up->proc.ready_at) / 1000));
	limit_status_json(up, o);
	uplogin_status_json(up, o);
	return (o);
}
