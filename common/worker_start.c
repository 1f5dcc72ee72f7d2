/* SPDX-License-Identifier: ISC */
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

#include <event2/event.h>

#include "frame.h"
#include "iochan.h"
#include "log.h"
#include "worker_start.h"
#include "xmalloc.h"

void
worker_options(int argc, char **argv, const char *program,
    const char *operand)
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
			fprintf(stderr, "usage: %s [-dv] %s\n", program,
			    operand);
			exit(WORKER_EXIT_CONFIG);
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "%s is started by mcp-supervisord\n", program);
		exit(WORKER_EXIT_CONFIG);
	}
	log_init(program, foreground, verbose);
	log_settag(argv[optind]);
	event_set_log_callback(log_libevent);
}

pid_t
worker_guard(void)
{
	pid_t	parent;

	/*
	 * Not dumpable, before any secret arrives (a key, headers): other
	 * processes of our user, the upstreams, must not read our memory in
	 * /proc/PID/mem.  An exec makes an upstream dumpable again.
	 */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
		fatal("prctl PR_SET_DUMPABLE");
	/* Die with the supervisor. */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if ((parent = getppid()) == 1)
		exit(WORKER_EXIT_OK);
	signal(SIGPIPE, SIG_IGN);
	malloc_tune();
	return (parent);
}

/* Handle every whole frame from the supervisor. */
static void
channel_read_cb(struct iochan *ch, void *arg)
{
	struct worker_chan	*wc = arg;
	struct evbuffer		*in = iochan_input(ch);
	struct frame_hdr	 hdr;
	const char		*why;

	for (;;) {
		switch (frame_peek(in, wc->max(), &hdr, &why)) {
		case FRAME_NEED:
			return;
		case FRAME_BAD:
			log_warnx("bad frame from supervisor: %s", why);
			wc->fail(WORKER_EXIT_FAILED);
			return;
		case FRAME_OK:
			break;
		}
		if (wc->frame(&hdr, in) != 0) {
			log_warnx("bad %s frame from supervisor",
			    msg_type_name(hdr.type));
			wc->fail(WORKER_EXIT_FAILED);
			return;
		}
	}
}

/* The supervisor's channel closed. */
static void
channel_event_cb(struct iochan *ch, int what, void *arg)
{
	struct worker_chan	*wc = arg;

	log_debug("supervisor channel closed");
	iochan_free(wc->chan);
	wc->chan = NULL;
	wc->closed(WORKER_EXIT_OK);
}

/* Some or all of the output went to the supervisor. */
static void
channel_written_cb(struct iochan *ch, void *arg)
{
	struct worker_chan	*wc = arg;

	wc->written();
}

void
worker_channel_open(struct event_base *base, struct worker_chan *wc)
{
	evutil_make_socket_nonblocking(FRAME_CHANNEL_FD);
	evutil_make_socket_closeonexec(FRAME_CHANNEL_FD);
	if (fcntl(FRAME_CHANNEL_FD, F_GETFD) == -1)
		fatal("no supervisor channel on fd %d", FRAME_CHANNEL_FD);
	wc->chan = iochan_new(base, FRAME_CHANNEL_FD, channel_read_cb,
	    wc->written != NULL ? channel_written_cb : NULL, channel_event_cb,
	    wc);
	if (wc->written != NULL)
		iochan_on_progress(wc->chan, channel_written_cb);
	frame_add(iochan_output(wc->chan), MSG_HELLO, 0, 0,
	    "{\"version\":1}", 13);
}

int
worker_become(const char *user, const struct passwd *pw, pid_t parent,
    worker_exit_fn gone, char *err, size_t len)
{
	if (initgroups(pw->pw_name, pw->pw_gid) != 0 ||
	    setresgid(pw->pw_gid, pw->pw_gid, pw->pw_gid) != 0 ||
	    setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid) != 0) {
		snprintf(err, len, "cannot run as %s: %s", user,
		    strerror(errno));
		return (-1);
	}
	log_debug("running as %s", user);
	/*
	 * A new user clears the parent-death signal, and leaves dumpable as
	 * fs.suid_dumpable says.
	 */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		gone(WORKER_EXIT_OK);
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
		fatal("prctl PR_SET_DUMPABLE");
	return (0);
}

int
worker_drop_root(const char *user, pid_t parent, worker_exit_fn gone,
    char *err, size_t len)
{
	struct passwd	*pw;

	if (user != NULL && getuid() == 0) {
		if ((pw = getpwnam(user)) == NULL) {
			snprintf(err, len, "user %s does not exist", user);
			return (-1);
		}
		if (worker_become(user, pw, parent, gone, err, len) != 0)
			return (-1);
	}
	return (worker_no_new_privs(err, len));
}

int
worker_no_new_privs(char *err, size_t len)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
		snprintf(err, len, "PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
		return (-1);
	}
	return (0);
}
