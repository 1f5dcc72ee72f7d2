#include "config.h"

#include <sys/prctl.h>
#include <sys/wait.h>

#include <sys/socket.h>

#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "log.h"
#include "worker.h"
#include "xmalloc.h"

#define CHAN_FD		3
#define CHAN_SLACK	65536
#define EXIT_GRACE	3	/* seconds between SIGTERM and SIGKILL */

struct event_base	*base;
struct server_conf	*sc;

static struct bufferevent	*chan;
static struct conn		*shared;	/* the shared connection */
static struct u64map		 sessions;	/* per-session connections */
static struct event		*ev_sigchld, *ev_sigterm, *ev_exit_timer;
static int			 exiting = -1;	/* exit code once stopping */

static void	worker_exit(int) __attribute__((noreturn));
static void	worker_begin_exit(int);

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
	if (chan != NULL)
		frame_add(bufferevent_get_output(chan), type, session, tag, p,
		    len);
}

void
chan_send_buffer(uint16_t type, uint32_t session, uint32_t tag,
    struct evbuffer *buf)
{
	if (chan != NULL)
		frame_add_buffer(bufferevent_get_output(chan), type, session,
		    tag, buf);
	else
		evbuffer_drain(buf, evbuffer_get_length(buf));
}

void
chan_send_json(uint16_t type, uint32_t session, uint32_t tag, json_t *o)
{
	if (chan != NULL)
		frame_add_json(bufferevent_get_output(chan), type, session,
		    tag, o);
	json_decref(o);
}

/* Report our state to the supervisor. */
void
worker_status(const char *state, const char *error)
{
	json_t	*o;
	pid_t	 pid = -1;

	if (shared != NULL && shared->tp != NULL && shared->ops->pid != NULL)
		pid = shared->ops->pid(shared);
	o = json_pack("{s:s, s:I}", "state", state, "pid", (json_int_t)pid);
	if (error != NULL)
		json_object_set_new(o, "error", json_string(error));
	if (strcmp(state, "ready") == 0 && shared != NULL) {
		json_object_set_new(o, "protocolVersion",
		    json_string(shared->version));
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

/* The shared connection failed: report, answer everything, and exit. */
void
worker_fatal_conn(struct conn *c, const char *why)
{
	log_warnx("%s", why);
	worker_status("error", why);
	conn_fail_all(c, MCP_CONNECTION_CLOSED, why);
	worker_exit(WORKER_EXIT_UPSTREAM);
}

/* Find the connection serving a client session. */
static struct conn *
worker_conn(uint32_t session)
{
	return (shared);
}

/* Handle one frame from the supervisor. */
static int
worker_frame(const struct frame_hdr *hdr, struct evbuffer *in)
{
	struct conn	*c;
	const char	*why;
	char		*p;
	json_t		*msg, *server;
	char		 err[256];

	switch (hdr->type) {
	case MSG_CONFIG:
		if (sc != NULL ||
		    (msg = frame_take_json(in, hdr, &why)) == NULL)
			return (-1);
		server = json_object_get(msg, "server");
		if ((sc = conf_server_from_json(server, err,
		    sizeof err)) == NULL) {
			log_warnx("%s", err);
			json_decref(msg);
			worker_exit(WORKER_EXIT_CONFIG);
		}
		json_decref(msg);
		shared = conn_new(0);
		return (0);
	case MSG_REQUEST:
	case MSG_CANCEL:
		if (sc == NULL)
			return (-1);
		p = (char *)evbuffer_pullup(in, FRAME_HDR_LEN + hdr->len);
		c = worker_conn(hdr->session);
		if (hdr->type == MSG_REQUEST)
			conn_relay_request(c, hdr->session, hdr->tag,
			    p + FRAME_HDR_LEN, hdr->len);
		else
			conn_relay_cancel(c, hdr->tag, p + FRAME_HDR_LEN,
			    hdr->len);
		evbuffer_drain(in, FRAME_HDR_LEN + hdr->len);
		return (0);
	case MSG_SHUTDOWN:
		evbuffer_drain(in, FRAME_HDR_LEN + hdr->len);
		log_debug("asked to stop");
		worker_begin_exit(WORKER_EXIT_OK);
		return (0);
	case MSG_CLIENT_NOTIFY:
	case MSG_UP_RESPONSE:
	case MSG_SESSION_OPEN:
	case MSG_SESSION_CLOSE:
		evbuffer_drain(in, FRAME_HDR_LEN + hdr->len);
		return (0);
	default:
		log_warnx("unexpected %s frame", msg_type_name(hdr->type));
		return (-1);
	}
}

static void
chan_read_cb(struct bufferevent *bev, void *arg)
{
	struct evbuffer		*in = bufferevent_get_input(bev);
	struct frame_hdr	 hdr;
	const char		*why;
	size_t			 max;

	max = (sc != NULL ? sc->max_message : 1024 * 1024) + CHAN_SLACK;
	for (;;) {
		switch (frame_peek(in, max, &hdr, &why)) {
		case FRAME_NEED:
			return;
		case FRAME_BAD:
			log_warnx("bad frame from supervisor: %s", why);
			worker_exit(WORKER_EXIT_UPSTREAM);
		case FRAME_OK:
			break;
		}
		if (worker_frame(&hdr, in) != 0) {
			log_warnx("bad %s frame from supervisor",
			    msg_type_name(hdr.type));
			worker_exit(WORKER_EXIT_UPSTREAM);
		}
	}
}

static void
chan_event_cb(struct bufferevent *bev, short events, void *arg)
{
	log_debug("supervisor channel closed");
	bufferevent_free(chan);
	chan = NULL;
	worker_begin_exit(WORKER_EXIT_OK);
}

/* Signal every remaining child (the upstream and anything it left). */
static void
kill_children(int sig)
{
	DIR		*d;
	struct dirent	*de;
	char		 path[300], buf[512], *rp;
	FILE		*f;
	long		 ppid;
	pid_t		 me = getpid(), pid;

	if ((d = opendir("/proc")) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%s/stat", de->d_name);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		if (fgets(buf, sizeof buf, f) != NULL &&
		    (rp = strrchr(buf, ')')) != NULL &&
		    sscanf(rp + 2, "%*c %ld", &ppid) == 1 &&
		    (pid_t)ppid == me) {
			pid = (pid_t)strtol(de->d_name, NULL, 10);
			kill(pid, sig);
		}
		fclose(f);
	}
	closedir(d);
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
	struct evbuffer	*out;
	struct timeval	 tv = { 2, 0 };
	int		 fd, flags;

	if (chan == NULL)
		return;
	out = bufferevent_get_output(chan);
	fd = bufferevent_getfd(chan);
	flags = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	/* The bufferevent keeps its output's drain side frozen. */
	evbuffer_unfreeze(out, 1);
	while (evbuffer_get_length(out) > 0) {
		if (evbuffer_write(out, fd) <= 0)
			break;
	}
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
	while (u64map_next(&sessions, &pos, &key, &value))
		conn_free(value);
	kill_children(SIGKILL);
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	chan_drain();
	exit(code);
}

/* Grace period over. */
static void
exit_timer_cb(evutil_socket_t fd, short events, void *arg)
{
	worker_exit(exiting);
}

/* Stop the upstream gracefully, then exit once every child is gone. */
static void
worker_begin_exit(int code)
{
	struct timeval	tv = { EXIT_GRACE, 0 };
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
	while (u64map_next(&sessions, &pos, &key, &value))
		conn_free(value);
	u64map_free(&sessions);
	kill_children(SIGTERM);
	if (reap_children())
		worker_exit(code);
	ev_exit_timer = evtimer_new(base, exit_timer_cb, NULL);
	evtimer_add(ev_exit_timer, &tv);
}

static void
signal_cb(evutil_socket_t sig, short events, void *arg)
{
	if (sig == SIGCHLD) {
		if (reap_children() && exiting != -1)
			worker_exit(exiting);
		return;
	}
	worker_begin_exit(WORKER_EXIT_OK);
}

int
main(int argc, char **argv)
{
	int	ch, verbose = 0, foreground = 0;

	while ((ch = getopt(argc, argv, "dv")) != -1) {
		switch (ch) {
		case 'd':
			foreground = 1;
			break;
		case 'v':
			verbose++;
			break;
		default:
			fprintf(stderr, "usage: mcp-worker [-dv] name\n");
			exit(WORKER_EXIT_CONFIG);
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "mcp-worker is started by mcp-supervisord\n");
		exit(WORKER_EXIT_CONFIG);
	}
	log_init("mcp-worker", foreground, verbose);
	log_settag(argv[optind]);

	/* Die with the supervisor; adopt what our upstream leaves. */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() == 1)
		exit(WORKER_EXIT_OK);
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	signal(SIGPIPE, SIG_IGN);

	if ((base = event_base_new()) == NULL)
		fatalx("event_base_new");
	u64map_init(&sessions);
	evutil_make_socket_nonblocking(CHAN_FD);
	evutil_make_socket_closeonexec(CHAN_FD);
	chan = bufferevent_socket_new(base, CHAN_FD, BEV_OPT_CLOSE_ON_FREE);
	if (chan == NULL)
		fatalx("no supervisor channel on fd %d", CHAN_FD);
	bufferevent_setcb(chan, chan_read_cb, NULL, chan_event_cb, NULL);
	bufferevent_enable(chan, EV_READ | EV_WRITE);
	chan_send(MSG_HELLO, 0, 0, "{\"version\":1}", 13);

	ev_sigchld = evsignal_new(base, SIGCHLD, signal_cb, NULL);
	ev_sigterm = evsignal_new(base, SIGTERM, signal_cb, NULL);
	evsignal_add(ev_sigchld, NULL);
	evsignal_add(ev_sigterm, NULL);
	event_base_dispatch(base);
	worker_exit(WORKER_EXIT_OK);
}
