/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <sys/socket.h>

#include <dirent.h>
#include <pwd.h>
#include <fcntl.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "env.h"
#include "iochan.h"
#include "log.h"
#include "secret.h"
#include "strmap.h"
#include "worker.h"
#include "worker_start.h"
#include "xmalloc.h"

#define EXIT_EOF	1	/* seconds from stdin's end to SIGTERM */
#define EXIT_GRACE	4	/* seconds from stdin's end to SIGKILL */

struct event_base	*base;
struct server_conf	*sc;

static struct conn		*shared;	/* the shared connection */
static struct u64map		 sessions;	/* no -> session_info */
static struct strmap		 decls;		/* JSON text -> client_decl */
static struct event		*ev_sigchld, *ev_sigterm, *ev_exit_timer;
static int			 exiting = -1;	/* exit code once stopping */
static char			 last_error[512];
static int			 probe_failed;	/* the era probe killed it */
static pid_t			 supervisor_pid;	/* our parent */

static TAILQ_HEAD(, chan_waiter) chan_waiters =
    TAILQ_HEAD_INITIALIZER(chan_waiters);	/* not owned */

static void	worker_exit(int) __attribute__((noreturn));
static size_t	worker_frame_max(void);
static int	worker_frame(const struct frame_hdr *, struct evbuffer *);
static void	worker_chan_written(void);

/* The supervisor's channel. */
static struct worker_chan	wchan = {
	.max = worker_frame_max,
	.frame = worker_frame,
	.fail = worker_exit,
	.closed = worker_begin_exit,
	.written = worker_chan_written,
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
chan_send(uint16_t type, uint32_t session, uint32_t tag, const char *p,
    size_t len)
{
	if (wchan.chan != NULL)
		frame_add(iochan_output(wchan.chan), type, session, tag, p,
		    len);
}

void
chan_send_buffer(uint16_t type, uint32_t session, uint32_t tag,
    struct evbuffer *buf)
{
	chan_send_buffer_flags(type, 0, session, tag, buf);
}

void
chan_send_buffer_flags(uint16_t type, uint16_t flags, uint32_t session,
    uint32_t tag, struct evbuffer *buf)
{
	if (wchan.chan != NULL)
		frame_add_buffer_flags(iochan_output(wchan.chan), type, flags,
		    session, tag, buf);
	else
		evbuffer_drain(buf, evbuffer_get_length(buf));
}

void
chan_send_json(uint16_t type, uint32_t session, uint32_t tag, json_t *o)
{
	if (wchan.chan != NULL)
		frame_add_json(iochan_output(wchan.chan), type, session,
		    tag, o);
	json_decref(o);
}

void
chan_send_secret(uint16_t type, uint32_t session, uint32_t tag, json_t *o)
{
	if (wchan.chan != NULL)
		frame_add_json_secret(iochan_output(wchan.chan), type, session,
		    tag, o);
	json_decref(o);
}

int
chan_congested(void)
{
	return (wchan.chan != NULL &&
	    iochan_queued(wchan.chan) > CHAN_MAX_QUEUED);
}

int
chan_waiting(void)
{
	return (!TAILQ_EMPTY(&chan_waiters));
}

void
chan_wait(struct chan_waiter *w)
{
	if (w->waiting)
		return;
	if (TAILQ_EMPTY(&chan_waiters))
		log_info("upstream %s: the supervisor is %zu bytes behind: "
		    "reading the upstream paused", sc->name,
		    iochan_queued(wchan.chan));
	w->waiting = 1;
	TAILQ_INSERT_TAIL(&chan_waiters, w, entry);
}

void
chan_unwait(struct chan_waiter *w)
{
	if (!w->waiting)
		return;
	w->waiting = 0;
	TAILQ_REMOVE(&chan_waiters, w, entry);
}

/* Wake the readers that waited once the queue is short again. */
static void
worker_chan_written(void)
{
	struct chan_waiter	*w;

	if (TAILQ_EMPTY(&chan_waiters) ||
	    iochan_queued(wchan.chan) > CHAN_RESUME_QUEUED)
		return;
	log_info("upstream %s: the supervisor caught up: reading the "
	    "upstream again", sc->name);
	/* A reader woken may fill the queue and wait again: it goes to
	 * the tail, behind the others. */
	while ((w = TAILQ_FIRST(&chan_waiters)) != NULL &&
	    !chan_congested()) {
		TAILQ_REMOVE(&chan_waiters, w, entry);
		w->waiting = 0;
		w->resume(w->arg);
	}
}

/* Report our state to the supervisor. */
void
worker_status(const char *state, const char *error)
{
	json_t	*o;
	pid_t	 pid = -1;
#ifdef WORKER_REMOTE
	char	 why[256];
#endif

	if (shared != NULL && shared->tp != NULL && shared->ops->pid != NULL)
		pid = shared->ops->pid(shared);
#ifdef WORKER_REMOTE
	/* Up, but no call can pass without a login: say that. */
	if (strcmp(state, "ready") == 0 && upoauth_login_needed() != NULL) {
		state = "login";
		snprintf(why, sizeof why, "login needed: run mcpctl login %s",
		    sc->name);
		error = why;
	}
#endif
	o = json_pack("{s:s, s:I}", "state", state, "pid", (json_int_t)pid);
	if (error != NULL) {
		snprintf(last_error, sizeof last_error, "%s", error);
		json_object_set_new(o, "error", json_string(error));
	}
	if (probe_failed)
		json_object_set_new(o, "probe_failed", json_true());
	if (strcmp(state, "ready") == 0 && shared != NULL) {
		json_object_set_new(o, "protocolVersion",
		    json_string(shared->version));
		json_object_set_new(o, "era", json_string(shared->modern ?
		    "2026" : "2025"));
		if (shared->server_info != NULL)
			json_object_set(o, "serverInfo", shared->server_info);
		if (shared->server_caps != NULL)
			json_object_set(o, "capabilities",
			    shared->server_caps);
		if (shared->instructions != NULL)
			json_object_set_new(o, "instructions",
			    json_string(shared->instructions));
	}
	chan_send_json(MSG_STATUS, 0, 0, o);
}

void
worker_probe_failed(void)
{
	probe_failed = 1;
}

/* The last error reported, or "". */
const char *
worker_last_error(void)
{
	return (last_error);
}

/* The shared connection failed: report, answer everything, and exit. */
void
worker_fatal_conn(struct conn *c, const char *why)
{
	/* The supervisor logs it, with what it does next. */
	worker_status("exiting", why);
	conn_fail_all(c, MCP_CONNECTION_CLOSED, why);
#ifdef WORKER_REMOTE
	/* A login or a fixed secret is needed: starting again cannot help. */
	if (upoauth_operator_needed())
		worker_exit(WORKER_EXIT_CONFIG);
#endif
	worker_exit(WORKER_EXIT_FAILED);
}

/* Give the upstream NAME=value unless its env sets NAME. */
static void
worker_env_default(const char *name, const char *value)
{
	size_t	n, len = strlen(name);

	for (n = 0; sc->env != NULL && sc->env[n] != NULL; n++) {
		if (strncmp(sc->env[n], name, len) == 0 &&
		    sc->env[n][len] == '=')
			return;
	}
	sc->env = xreallocarray(sc->env, n + 2, sizeof *sc->env);
	xasprintf(&sc->env[n], "%s=%s", name, value);
	sc->env[n + 1] = NULL;
}

/*
 * Confine the worker (and so its upstream) before anything starts: no new
 * privileges through exec, resource limits, and the configured user,
 * whose HOME, USER and LOGNAME the upstream gets.
 */
static int
worker_confine(char *err, size_t len)
{
	struct passwd	*pw;
	struct rlimit	 rl;

	if (sc->rlimit_nofile != 0) {
		rl.rlim_cur = rl.rlim_max = (rlim_t)sc->rlimit_nofile;
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
			snprintf(err, len, "rlimit_nofile %llu: %s",
			    sc->rlimit_nofile, strerror(errno));
			return (-1);
		}
	}
	if (sc->rlimit_as != 0) {
		rl.rlim_cur = rl.rlim_max = (rlim_t)sc->rlimit_as;
		if (setrlimit(RLIMIT_AS, &rl) != 0) {
			snprintf(err, len, "rlimit_as %llu: %s", sc->rlimit_as,
			    strerror(errno));
			return (-1);
		}
	}
	if (sc->user != NULL) {
		if ((pw = getpwnam(sc->user)) == NULL) {
			snprintf(err, len, "user %s does not exist", sc->user);
			return (-1);
		}
		if (getuid() != pw->pw_uid) {
			if (worker_become(sc->user, pw, supervisor_pid, exit,
			    err, len) != 0)
				return (-1);
			worker_env_default("HOME", pw->pw_dir);
			worker_env_default("USER", pw->pw_name);
			worker_env_default("LOGNAME", pw->pw_name);
		}
	}
	return (worker_no_new_privs(err, len));
}

/* Find a session's record (per-session isolation). */
static struct session_info *
worker_session(uint32_t no, int create)
{
	struct session_info	*si;

	if ((si = u64map_get(&sessions, no)) != NULL || !create)
		return (si);
	si = xcalloc(1, sizeof *si);
	si->no = no;
	u64map_put(&sessions, no, si);
	return (si);
}

struct session_info *
worker_session_info(uint32_t no)
{
	return (u64map_get(&sessions, no));
}

/*
 * The declaration with these capabilities and clientInfo (either may be
 * NULL), shared: a new reference.
 */
static struct client_decl *
worker_decl_get(json_t *caps, json_t *info)
{
	struct client_decl	*d;
	json_t			*both;
	char			*key;

	both = json_pack("{s:O?, s:O?}", "c", caps, "i", info);
	key = both != NULL ? json_dumps(both, JSON_COMPACT | JSON_SORT_KEYS) :
	    NULL;
	json_decref(both);
	if (key == NULL)
		fatalx("%s: json_dumps", __func__);
	if ((d = strmap_get(&decls, key)) != NULL) {
		free(key);
		d->refs++;
		return (d);
	}
	d = xcalloc(1, sizeof *d);
	d->refs = 1;
	d->caps = json_incref(caps);
	d->client_info = json_incref(info);
	if (strmap_add(&decls, key, d) != 0)
		fatalx("%s: strmap_add", __func__);
	d->key = strmap_key(&decls, key);
	free(key);
	return (d);
}

/* Let go of a declaration. */
static void
worker_decl_put(struct client_decl *d)
{
	if (d == NULL || --d->refs > 0)
		return;
	strmap_del(&decls, d->key);
	json_decref(d->caps);
	json_decref(d->client_info);
	free(d);
}

/* Forget a session and stop its instance. */
static void
worker_session_close(uint32_t no)
{
	struct session_info	*si;

	if ((si = u64map_del(&sessions, no)) == NULL)
		return;
	if (si->conn != NULL) {
		log_debug("session %u: stopping its instance", no);
		conn_free(si->conn);
	}
#ifdef WORKER_REMOTE
	upoauth_session_close(si->oauth_id);
#endif
	worker_decl_put(si->decl);
	free(si->loglevel);
	free(si);
}

/* Count the running per-session instances. */
static unsigned int
worker_instances(void)
{
	size_t			 pos = 0;
	uint64_t		 key;
	void			*value;
	unsigned int		 n = 0;

	while (u64map_next(&sessions, &pos, &key, &value)) {
		if (((struct session_info *)value)->conn != NULL)
			n++;
	}
	return (n);
}

/* Answer a request without an upstream (MSG_RESPONSE with a result). */
static void
worker_answer(uint32_t session, uint32_t tag, const char *p, size_t n,
    const char *result)
{
	struct jrpc	 m;
	const char	*why;
	struct evbuffer	*buf;

	if (jrpc_scan(p, n, &m, &why) != 0)
		return;
	buf = evbuffer_new();
	jrpc_add_result(buf, p + m.id.off, m.id.len, result, strlen(result));
	chan_send_buffer(MSG_RESPONSE, session, tag, buf);
	evbuffer_free(buf);
}

static int	worker_instance_start(struct session_info *, char *, size_t,
		    int *);

/*
 * Find the connection for a client request.  Per-session isolation starts
 * the session's own instance on first use (a logging/setLevel before that
 * is remembered and answered here).  Returns NULL if answered or failed.
 */
static struct conn *
worker_conn_for(uint32_t session, uint32_t tag, const char *p, size_t n)
{
	struct session_info	*si;
	struct jrpc		 m;
	struct jspan		 level;
	const char		*why;
	char			 msg[768];
	int			 code;

	if (sc->isolation == ISOLATION_SHARED || session == 0) {
		/* A per-user upstream has no connection of its own. */
		if (shared == NULL && session == 0) {
			snprintf(msg, sizeof msg, "upstream %s connects per "
			    "user: a request of the gateway's own has no user",
			    sc->name);
			conn_fail(session, tag, JRPC_INVALID_REQUEST, msg, 1);
		}
		return (shared);
	}
	si = worker_session(session, 1);
	if (si->conn != NULL)
		return (si->conn);
	if (jrpc_scan(p, n, &m, &why) == 0 && m.method_id == MCPM_SET_LEVEL) {
		if (jscan_member(p, m.params, "level", &level) == 0) {
			free(si->loglevel);
			si->loglevel = jscan_strdup(p, level);
		}
		worker_answer(session, tag, p, n, "{}");
		return (NULL);
	}
	if (worker_instance_start(si, msg, sizeof msg, &code) != 0)
		conn_fail(session, tag, code, msg, 1);
	return (si->conn);
}

/* Start a session's own instance; -1 with why and a code if it cannot. */
static int
worker_instance_start(struct session_info *si, char *msg, size_t len,
    int *code)
{
	if (worker_instances() >= sc->max_instances) {
		snprintf(msg, len, "upstream %s: all %u per-session "
		    "instances are in use", sc->name, sc->max_instances);
		log_warnx("%s", msg);
		*code = MCP_OVERLOADED;
		return (-1);
	}
	log_debug("session %u: starting its instance", si->no);
	if ((si->conn = conn_new(si->no, si)) == NULL) {
		snprintf(msg, len, "upstream %s: its instance for this "
		    "session did not start%s%s", sc->name,
		    worker_last_error()[0] != '\0' ? ": " : "",
		    worker_last_error());
		*code = MCP_CONNECTION_CLOSED;
		return (-1);
	}
	return (0);
}

/*
 * The supervisor wants a session's view of this per-session upstream:
 * start the session's instance if it has none (its catalog follows once
 * fetched), or send the catalog the instance already has.
 */
static void
worker_session_catalog(uint32_t session)
{
	struct session_info	*si;
	char			 msg[768];
	int			 code;

	if (sc->isolation != ISOLATION_PER_SESSION)
		return;
	si = worker_session(session, 1);
	if (si->conn != NULL) {
		if (si->conn->announced && si->conn->state != CONN_DEAD)
			catalog_send(si->conn);
		return;
	}
	if (worker_instance_start(si, msg, sizeof msg, &code) != 0)
		chan_send_json(MSG_CATALOG, session, 0, json_pack("{s:s}",
		    "error", msg));
}

/* The connection a client notification is for. */
static struct conn *
worker_conn_of(uint32_t session)
{
	struct session_info	*si;

	/* The gateway's own requests (session 0) go on the shared one. */
	if (sc->isolation == ISOLATION_SHARED || session == 0)
		return (shared);
	si = worker_session(session, 0);
	return (si != NULL ? si->conn : NULL);
}

/* Record what a per-session instance needs to know of its client. */
static void
worker_session_open(uint32_t session, json_t *msg)
{
	struct session_info	*si;
	const char		*level;

	si = worker_session(session, 1);
	worker_decl_put(si->decl);
	si->decl = worker_decl_get(json_object_get(msg, "capabilities"),
	    json_object_get(msg, "clientInfo"));
	si->caps = si->decl->caps;
	si->client_info = si->decl->client_info;
	si->shared = json_is_true(json_object_get(msg, "shared"));
	if (json_unpack(msg, "{s:s}", "logLevel", &level) == 0) {
		free(si->loglevel);
		si->loglevel = xstrdup(level);
	}
#ifdef WORKER_REMOTE
	/* A per-user upstream's: whose tokens its calls carry. */
	if (si->oauth_id == NULL)
		si->oauth_id = upoauth_session(msg, session);
#endif
}

/* Handle one frame from the supervisor. */
static int
worker_frame(const struct frame_hdr *hdr, struct evbuffer *in)
{
	struct conn	*c;
	const char	*why;
	char		*p;
	json_t		*msg, *server, *value;
	const char	*name;
	char		 err[256];

	switch (hdr->type) {
	case MSG_CONFIG:
		if (sc != NULL ||
		    (msg = frame_take_json_secret(in, hdr, &why)) == NULL)
			return (-1);
		server = json_object_get(msg, "server");
		if ((sc = conf_server_from_json(server, err,
		    sizeof err)) == NULL) {
			log_warnx("%s", err);
			json_decref(msg);
			worker_exit(WORKER_EXIT_CONFIG);
		}
		if (worker_confine(err, sizeof err) != 0) {
			log_warnx("%s", err);
			worker_status("error", err);
			json_decref(msg);
			worker_exit(WORKER_EXIT_CONFIG);
		}
		/* What pass_env names, which our own environment lacks. */
		json_object_foreach(json_object_get(msg, "environ"), name,
		    value) {
			if (env_valid_name(name) && json_is_string(value))
				worker_env_default(name,
				    json_string_value(value));
		}
#ifdef WORKER_REMOTE
		/* The gateway's identity at the upstream, if it has one. */
		login_config(json_object_get(msg, "oauth_record"),
		    json_object_get(msg, "oauth_client"));
#endif
		/* Its secrets (headers, environ, the record) were copied. */
		secret_wipe_tree(msg);
		json_decref(msg);
#ifdef WORKER_REMOTE
		/* Per-user: no connection is anyone's in particular; each
		 * session's instance connects with its user's token. */
		if (upoauth_per_user_ready())
			return (0);
#endif
		shared = conn_new(0, NULL);
		return (0);
	case MSG_SESSION_OPEN:
		/* A per-user upstream's record (tokens) comes in it. */
		if (sc == NULL || (msg = frame_take_json_secret(in, hdr,
		    &why)) == NULL)
			return (-1);
		/* Kept for any isolation: a modern upstream is told each
		 * request's client capabilities. */
		worker_session_open(hdr->session, msg);
		secret_wipe_tree(msg);
		json_decref(msg);
		return (0);
	case MSG_SESSION_CLOSE:
		evbuffer_drain(in, FRAME_HDR_LEN + hdr->len);
		worker_session_close(hdr->session);
		return (0);
	case MSG_SESSION_CATALOG:
		if (sc == NULL)
			return (-1);
		evbuffer_drain(in, FRAME_HDR_LEN + hdr->len);
		worker_session_catalog(hdr->session);
		return (0);
	case MSG_REQUEST:
	case MSG_CANCEL:
	case MSG_CLIENT_NOTIFY:
	case MSG_UP_RESPONSE:
	case MSG_UP_NOTIFY:
		if (sc == NULL)
			return (-1);
		p = (char *)evbuffer_pullup(in, FRAME_HDR_LEN + hdr->len) +
		    FRAME_HDR_LEN;
		if (hdr->type == MSG_REQUEST) {
			c = worker_conn_for(hdr->session, hdr->tag, p,
			    hdr->len);
			if (c != NULL)
				conn_relay_request(c, hdr->session, hdr->tag,
				    p, hdr->len);
		} else if (hdr->type == MSG_CANCEL)
			conn_relay_cancel(worker_conn_of(hdr->session),
			    hdr->tag, p, hdr->len);
		else if (hdr->type == MSG_CLIENT_NOTIFY)
			conn_relay_notify(worker_conn_of(hdr->session), p,
			    hdr->len);
		else if (hdr->type == MSG_UP_NOTIFY)
			upreq_relay_up_notify(hdr->tag, p, hdr->len);
		else
			upreq_relay_answer(hdr->tag, p, hdr->len);
		evbuffer_drain(in, FRAME_HDR_LEN + hdr->len);
		return (0);
#ifdef WORKER_REMOTE
	case MSG_OAUTH_LOGIN:
	case MSG_OAUTH_CODE:
	case MSG_OAUTH_REVOKE:
		if (sc == NULL || (msg = frame_take_json_secret(in, hdr,
		    &why)) == NULL)
			return (-1);
		upoauth_frame(hdr->type, msg);
		secret_wipe_tree(msg);
		json_decref(msg);
		return (0);
#endif
	case MSG_SHUTDOWN:
		evbuffer_drain(in, FRAME_HDR_LEN + hdr->len);
		log_debug("asked to stop");
		worker_begin_exit(WORKER_EXIT_OK);
		return (0);
	default:
		log_warnx("unexpected %s frame", msg_type_name(hdr->type));
		return (-1);
	}
}

/* The largest frame the supervisor may send now. */
static size_t
worker_frame_max(void)
{
	return ((sc != NULL ? sc->max_message : 1024 * 1024) + FRAME_SLACK);
}

int
worker_children(void (*fn)(pid_t, pid_t, void *), void *arg)
{
	DIR		*d;
	struct dirent	*de;
	char		 path[300], buf[1024], *rp;
	int		 fd;
	ssize_t		 n;
	long		 ppid, pgrp;
	pid_t		 me = getpid();

	if ((d = opendir("/proc")) == NULL)
		return (-1);
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%s/stat", de->d_name);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
			continue;
		n = read(fd, buf, sizeof buf - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		/* pid (comm) state ppid pgrp ...; comm may hold ')' and a
		 * newline: the last ')' of the whole line ends it. */
		if ((rp = strrchr(buf, ')')) != NULL &&
		    sscanf(rp + 1, " %*c %ld %ld", &ppid, &pgrp) == 2 &&
		    (pid_t)ppid == me)
			fn((pid_t)strtol(de->d_name, NULL, 10), (pid_t)pgrp,
			    arg);
	}
	closedir(d);
	return (0);
}

/* Signal one child. */
static void
kill_child(pid_t pid, pid_t pgrp, void *arg)
{
	kill(pid, *(int *)arg);
}

/* Signal every remaining child (the upstream and anything it left). */
static void
kill_children(int sig)
{
	worker_children(kill_child, &sig);
}

/* Reap children; returns 1 when none remain. */
static int
reap_children(void)
{
	pid_t	pid;
	int	status;

	for (;;) {
		pid = waitpid(-1, &status, WNOHANG);
		if (pid > 0) {
			stdio_child_exited(pid, status);
			continue;
		}
		if (pid == 0)
			return (0);
		if (errno == EINTR)
			continue;
		return (errno == ECHILD);
	}
}

/* Write out what is queued for the supervisor, waiting at most 2 s. */
static void
chan_drain(void)
{
	/* Exiting: nothing is read any more, nobody is woken. */
	TAILQ_INIT(&chan_waiters);
	if (wchan.chan != NULL)
		iochan_flush_wait(wchan.chan, 2000);
}

/* Exit now, killing whatever is left. */
static void
worker_exit(int code)
{
	size_t		pos = 0;
	uint64_t	key;
	void		*value;

	if (shared != NULL)
		conn_free(shared);
	shared = NULL;
	while (u64map_next(&sessions, &pos, &key, &value)) {
		worker_session_close((uint32_t)key);
		pos = 0;	/* the map changed */
	}
	stdio_kill_all();
	kill_children(SIGKILL);
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	chan_drain();
	exit(code);
}

/* The number of farewells to upstreams (DELETEs) still under way. */
static unsigned int
farewells(void)
{
#ifdef WORKER_REMOTE
	return (http_farewells());
#else
	return (0);
#endif
}

void
worker_exit_check(void)
{
	if (exiting != -1 && reap_children() && farewells() == 0)
		worker_exit(exiting);
}

/* Grace period over. */
static void
exit_timer_cb(evutil_socket_t fd, short events, void *arg)
{
	worker_exit(exiting);
}

/* The upstreams had their stdin's end: SIGTERM whatever is left. */
static void
exit_term_cb(evutil_socket_t fd, short events, void *arg)
{
	kill_children(SIGTERM);
}

/*
 * Stop the upstream gracefully, then exit once every child is gone and
 * every session ended at its upstream (or the grace is over).
 */
void
worker_begin_exit(int code)
{
	struct timeval	tv = { EXIT_GRACE, 0 }, eof = { EXIT_EOF, 0 };
	size_t		pos = 0;
	uint64_t	key;
	void		*value;

	if (exiting != -1)
		return;
	exiting = code;
	if (shared != NULL) {
		conn_free(shared);
		shared = NULL;
	}
	while (u64map_next(&sessions, &pos, &key, &value)) {
		worker_session_close((uint32_t)key);
		pos = 0;	/* the map changed */
	}
	/* Their stdin closed first (stdio_stop), as the transport has it. */
	event_base_once(base, -1, EV_TIMEOUT, exit_term_cb, NULL, &eof);
	worker_exit_check();
	ev_exit_timer = evtimer_new(base, exit_timer_cb, NULL);
	evtimer_add(ev_exit_timer, &tv);
}

static void
signal_cb(evutil_socket_t sig, short events, void *arg)
{
	if (sig == SIGCHLD) {
		if (reap_children() && exiting != -1 && farewells() == 0)
			worker_exit(exiting);
		return;
	}
	worker_begin_exit(WORKER_EXIT_OK);
}

int
main(int argc, char **argv)
{
	worker_options(argc, argv, "mcp-worker", "name");
	/* Not dumpable before any secret (headers) arrives. */
	supervisor_pid = worker_guard();
	/* Adopt what our upstream leaves. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);

	if ((base = event_base_new()) == NULL)
		fatalx("event_base_new");
	u64map_init(&sessions);
	strmap_init(&decls);
	worker_channel_open(base, &wchan);

	ev_sigchld = evsignal_new(base, SIGCHLD, signal_cb, NULL);
	ev_sigterm = evsignal_new(base, SIGTERM, signal_cb, NULL);
	evsignal_add(ev_sigchld, NULL);
	evsignal_add(ev_sigterm, NULL);
	event_base_dispatch(base);
	worker_exit(WORKER_EXIT_OK);
}
