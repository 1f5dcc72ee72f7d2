/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <sys/prctl.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "env.h"
#include "idtrack.h"
#include "iochan.h"
#include "log.h"
#include "redact.h"
#include "secret.h"
#include "worker.h"
#include "xmalloc.h"

#define STDERR_MAX_LINE		4096
#define STDERR_SECRET_MIN	6	/* shorter values are not masked */
#define STDIN_MAX_QUEUED	(64 * 1024 * 1024)
#define EXIT_DRAIN_MS		1000	/* read stdout after exit */
#define STOP_EOF_MS		1000	/* stdin closed to SIGTERM */
#define STOP_GRACE_MS		3000	/* SIGTERM to SIGKILL */
#define LONG_LINE		(256 * 1024)	/* gathered in a buffer of its own */

extern char **environ;

/* A stdio upstream: a child process in its own process group. */
struct stdio_tp {
	struct conn		*conn;
	pid_t			 pid;
	int			 exited;
	int			 status;
	int			 out_eof;
	struct iochan		*in;		/* child's stdin */
	struct iochan		*out;		/* child's stdout */
	struct iochan		*err;		/* child's stderr */
	int			 discarding;	/* skipping an over-long line */
	size_t			 discarded;
	struct idtrack		 track;		/* its id, to fail its call */
	int			 failed_call;	/* that call was failed */
	size_t			 searched;	/* bytes known to hold no LF */
	char			*line;		/* a long line so far, or NULL */
	size_t			 line_len;
	size_t			 line_cap;
	struct event		*grace;
	struct chan_waiter	 waiter;	/* stdout paused for the
						   supervisor's channel */
};

static struct u64map	children;	/* pid -> stdio_tp */
static struct u64map	dying;		/* pgid -> marker, until killed */

/* Describe how a process ended. */
static void
describe_status(int status, char *buf, size_t len)
{
	if (WIFEXITED(status))
		snprintf(buf, len, "exited with status %d",
		    WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "killed by signal %d (%s)",
		    WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		snprintf(buf, len, "ended");
}

/* The upstream is gone: report it once. */
static void
stdio_gone(struct stdio_tp *tp, const char *why)
{
	struct conn	*c = tp->conn;
	char		 how[128];

	if (why == NULL) {
		describe_status(tp->status, how, sizeof how);
		why = how;
	}
	if (tp->grace != NULL)
		evtimer_del(tp->grace);
	conn_lost(c, why);
}

static void	stdio_arm(struct stdio_tp *, int);

/* Grace timer: after exit, or after stdout closed. */
static void
stdio_grace_cb(evutil_socket_t fd, short events, void *arg)
{
	struct stdio_tp	*tp = arg;

	if (tp->exited && tp->waiter.waiting) {
		/* Its last messages wait for the supervisor, not for it. */
		stdio_arm(tp, EXIT_DRAIN_MS);
		return;
	}
	if (tp->exited) {
		stdio_gone(tp, NULL);
		return;
	}
	kill(-tp->pid, SIGKILL);
	stdio_gone(tp, "closed its stdout");
}

/* Arm the grace timer. */
static void
stdio_arm(struct stdio_tp *tp, int ms)
{
	struct timeval	tv = { ms / 1000, (ms % 1000) * 1000 };

	if (tp->grace == NULL)
		tp->grace = evtimer_new(base, stdio_grace_cb, tp);
	evtimer_add(tp->grace, &tv);
}

/* Note a child in the group asked about. */
static void
pgroup_member(pid_t pid, pid_t pgrp, void *arg)
{
	pid_t	*pgid = arg;

	if (pgrp == *pgid)
		*pgid = 0;
}

/*
 * Is a child of ours, alive or not yet reaped, still in group pgid?  Then
 * the number cannot have gone to another group meanwhile, and signalling
 * it reaches only what the upstream left.  (Its leader reaped and the
 * group empty, the number is free for any new group on the machine.)
 * Without /proc we cannot tell, and signal it: what the upstream left
 * running matters more than the slight chance of its number's reuse.
 */
static int
group_ours(pid_t pgid)
{
	static int	warned;

	if (worker_children(pgroup_member, &pgid) == -1) {
		if (!warned++)
			log_warn("opendir /proc: a stopped upstream's process "
			    "group is signalled without knowing it is still "
			    "its own");
		return (1);
	}
	return (pgid == 0);
}

/* Kill what is left of a stopped upstream's group after its grace. */
static void
stdio_kill_cb(evutil_socket_t fd, short events, void *arg)
{
	pid_t	pid = (pid_t)(intptr_t)arg;

	if (u64map_del(&dying, (uint64_t)pid) != NULL && group_ours(pid))
		kill(-pid, SIGKILL);
}

/* A stopped upstream's group had its stdin's end: SIGTERM what is left. */
static void
stdio_term_cb(evutil_socket_t fd, short events, void *arg)
{
	struct timeval	tv = { STOP_GRACE_MS / 1000, 0 };
	pid_t		pid = (pid_t)(intptr_t)arg;

	if (u64map_get(&dying, (uint64_t)pid) == NULL)
		return;
	if (!group_ours(pid)) {
		u64map_del(&dying, (uint64_t)pid);
		return;
	}
	kill(-pid, SIGTERM);
	event_base_once(base, -1, EV_TIMEOUT, stdio_kill_cb, arg, &tv);
}

/* Kill the groups of every upstream we stopped (at worker exit). */
void
stdio_kill_all(void)
{
	size_t		 pos = 0;
	uint64_t	 key;
	void		*value;

	while (u64map_next(&dying, &pos, &key, &value))
		if (group_ours((pid_t)key))
			kill(-(pid_t)key, SIGKILL);
	pos = 0;
	while (u64map_next(&children, &pos, &key, &value))
		kill(-(pid_t)key, SIGKILL);
}

void
stdio_child_exited(pid_t pid, int status)
{
	struct stdio_tp	*tp;
	char		 how[128];

	/* A stopped one's group stays in dying: what it started may be
	 * left, and is signalled all the same. */
	if ((tp = u64map_get(&children, (uint64_t)pid)) == NULL) {
		log_debug("reaped process %ld", (long)pid);
		return;
	}
	u64map_del(&children, (uint64_t)pid);
	tp->exited = 1;
	tp->status = status;
	describe_status(status, how, sizeof how);
	log_info("upstream process %ld %s", (long)pid, how);
	if (tp->out_eof)
		stdio_gone(tp, NULL);
	else
		stdio_arm(tp, EXIT_DRAIN_MS);
}

/* Free a long line passed on by reference. */
static void
line_free_cb(const void *data, size_t len, void *arg)
{
	free((void *)data);
}

/*
 * Move n bytes of input to the end of the long line.  The line grows by
 * doubling with realloc, which moves a buffer of a megabyte or more by
 * remapping it, so its bytes are never held twice.
 */
static void
line_append(struct stdio_tp *tp, struct evbuffer *in, size_t n)
{
	size_t	cap = tp->line_cap;

	if (tp->line_len + n > cap) {
		if (cap == 0)
			cap = 2 * LONG_LINE;
		while (cap < tp->line_len + n)
			cap *= 2;
		tp->line = xreallocarray(tp->line, cap, 1);
		tp->line_cap = cap;
	}
	if (evbuffer_remove(in, tp->line + tp->line_len, n) != (ev_ssize_t)n)
		fatalx("evbuffer_remove");
	tp->line_len += n;
}

/* Forget a long line. */
static void
line_reset(struct stdio_tp *tp)
{
	free(tp->line);
	tp->line = NULL;
	tp->line_len = tp->line_cap = 0;
}

/* Feed the first n bytes of input to the dropped line's id tracker. */
static void
stdio_track(struct stdio_tp *tp, struct evbuffer *in, size_t n)
{
	struct evbuffer_iovec	 v[16];
	struct evbuffer_ptr	 at;
	int			 nv, i;
	size_t			 done = 0, take;

	evbuffer_ptr_set(in, &at, 0, EVBUFFER_PTR_SET);
	while (done < n && !tp->track.found && !tp->track.failed) {
		nv = evbuffer_peek(in, (ev_ssize_t)(n - done), &at, v, 16);
		if (nv <= 0)
			break;
		for (i = 0; i < nv && i < 16 && done < n; i++) {
			take = v[i].iov_len < n - done ? v[i].iov_len :
			    n - done;
			idtrack_feed(&tp->track, v[i].iov_base, take);
			done += take;
		}
		evbuffer_ptr_set(in, &at, done, EVBUFFER_PTR_SET);
	}
}

/*
 * A line went over max_message: drop it, and as soon as its id is known,
 * answer the call it answers with an error (not after request_timeout).
 */
static void
stdio_discard_begin(struct stdio_tp *tp)
{
	tp->discarding = 1;
	tp->discarded = tp->line_len;
	tp->failed_call = 0;
	idtrack_init(&tp->track);
	if (tp->line != NULL)
		idtrack_feed(&tp->track, tp->line, tp->line_len);
	line_reset(tp);
}

/* Drop n bytes of the over-long line, failing its call once known. */
static void
stdio_discard(struct stdio_tp *tp, struct evbuffer *in, size_t n)
{
	int64_t	id;
	char	msg[256];

	stdio_track(tp, in, n);
	tp->discarded += n;
	evbuffer_drain(in, n);
	if (!tp->failed_call && idtrack_int64(&tp->track, &id) == 0) {
		tp->failed_call = 1;
		snprintf(msg, sizeof msg, "upstream %s: its answer is over "
		    "max_message (%zu bytes)", sc->name, sc->max_message);
		conn_answer_error(tp->conn, id, msg);
	}
}

/* The over-long line ended. */
static void
stdio_discard_end(struct stdio_tp *tp)
{
	tp->discarding = 0;
	log_warnx("dropped a line of %zu bytes from the upstream (max_message "
	    "is %zu)%s", tp->discarded, sc->max_message, tp->failed_call ?
	    ", its call was answered with an error" : "");
}

/*
 * Split the upstream's stdout into lines; each is one message.  Most lines
 * are short and are handed over from the input buffer.  A line that grows
 * past LONG_LINE without its end is gathered in one buffer of its own and
 * passed on by reference, so a large answer is never copied together from
 * the chunks it arrived in.
 */
static void
stdio_out_cb(struct iochan *ch, void *arg)
{
	struct stdio_tp		*tp = arg;
	struct evbuffer		*in = iochan_input(ch);
	struct evbuffer_ptr	 nl, from;
	struct evbuffer		*owner;
	size_t			 len, have, max = sc->max_message;
	char			*p;

	while (tp->conn->state != CONN_DEAD) {
		len = evbuffer_get_length(in);
		if (len == 0)
			return;
		/* Search only what arrived since the last search: a long
		 * line comes in many reads. */
		evbuffer_ptr_set(in, &from, tp->searched, EVBUFFER_PTR_SET);
		nl = evbuffer_search(in, "\n", 1, &from);
		tp->searched = nl.pos < 0 ? len : 0;
		if (tp->discarding) {
			if (nl.pos < 0) {
				tp->searched = 0;
				stdio_discard(tp, in, len);
				return;
			}
			stdio_discard(tp, in, (size_t)nl.pos);
			evbuffer_drain(in, 1);
			stdio_discard_end(tp);
			continue;
		}
		have = tp->line_len;
		if (nl.pos < 0) {
			if (have + len > max) {
				stdio_discard_begin(tp);
				tp->searched = 0;
				stdio_discard(tp, in, len);
			} else if (tp->line != NULL || len >= LONG_LINE) {
				line_append(tp, in, len);
				tp->searched = 0;
			}
			return;
		}
		if (have + (size_t)nl.pos > max) {
			stdio_discard_begin(tp);
			stdio_discard(tp, in, (size_t)nl.pos);
			evbuffer_drain(in, 1);
			stdio_discard_end(tp);
			continue;
		}
		if (tp->line != NULL) {
			line_append(tp, in, (size_t)nl.pos);
			evbuffer_drain(in, 1);
			p = tp->line;
			len = tp->line_len;
			owner = evbuffer_new();
			evbuffer_add_reference(owner, p, len, line_free_cb,
			    NULL);
			tp->line = NULL;
			tp->line_len = tp->line_cap = 0;
		} else if (evbuffer_peek(in, (ev_ssize_t)nl.pos + 1, NULL,
		    NULL, 0) > 1) {
			/* A line in several chunks: move them out and pass
			 * them on, so the answer is not copied again. */
			len = (size_t)nl.pos;
			owner = evbuffer_new();
			evbuffer_remove_buffer(in, owner, (size_t)nl.pos + 1);
			p = (char *)evbuffer_pullup(owner, -1);
		} else {
			len = (size_t)nl.pos;
			owner = NULL;
			p = (char *)evbuffer_pullup(in, nl.pos + 1);
		}
		if (len > 0 && p[len - 1] == '\r')
			len--;
		while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t'))
			len--;
		if (len > 0)
			conn_message(tp->conn, p, len, 0, owner);
		else if (owner != NULL)
			evbuffer_free(owner);
		if (owner == NULL)
			evbuffer_drain(in, (size_t)nl.pos + 1);
		if (chan_congested()) {
			/* The rest waits in the pipe; the upstream blocks. */
			iochan_read(ch, 0);
			chan_wait(&tp->waiter);
			return;
		}
	}
}

/* The supervisor caught up: take what is left, then read again. */
static void
stdio_resume(void *arg)
{
	struct stdio_tp	*tp = arg;

	stdio_out_cb(tp->out, tp);
	if (!tp->waiter.waiting && !tp->out_eof &&
	    tp->conn->state != CONN_DEAD) {
		iochan_read(tp->out, 1);
		/* Exited: what is left in the pipe gets its full time. */
		if (tp->exited)
			stdio_arm(tp, EXIT_DRAIN_MS);
	}
}

/*
 * Mask in line[0..*len) the values of the upstream's environment whose
 * names look secret (API_TOKEN, OPENAI_API_KEY): a program that prints
 * its settings to stderr would have them in the daemon's log.
 */
static void
stdio_err_mask(char *line, size_t *len)
{
	const char	*eq;
	char		*masked;
	size_t		 i, n;

	for (i = 0; sc->env != NULL && sc->env[i] != NULL; i++) {
		if ((eq = strchr(sc->env[i], '=')) == NULL ||
		    strlen(eq + 1) < STDERR_SECRET_MIN ||
		    !redact_secret_name(sc->env[i], (size_t)(eq - sc->env[i])))
			continue;
		if ((masked = secret_mask(line, *len, eq + 1, "***", &n)) ==
		    NULL)
			continue;
		memcpy(line, masked, n < *len ? n : *len);
		*len = n < *len ? n : *len;
		secret_free(masked);
	}
}

/* Log the upstream's stderr, a line at a time, tagged. */
static void
stdio_err_cb(struct iochan *ch, void *arg)
{
	struct evbuffer		*in = iochan_input(ch);
	struct evbuffer_ptr	 nl;
	char			 line[STDERR_MAX_LINE + 1];
	size_t			 len, i;

	for (;;) {
		nl = evbuffer_search(in, "\n", 1, NULL);
		if (nl.pos < 0 &&
		    evbuffer_get_length(in) < STDERR_MAX_LINE)
			return;
		len = nl.pos < 0 || nl.pos > STDERR_MAX_LINE ?
		    STDERR_MAX_LINE : (size_t)nl.pos;
		evbuffer_remove(in, line, len);
		if (nl.pos >= 0 && (size_t)nl.pos == len)
			evbuffer_drain(in, 1);
		if (len > 0 && line[len - 1] == '\r')
			len--;
		stdio_err_mask(line, &len);
		for (i = 0; i < len; i++) {
			if ((unsigned char)line[i] < 0x20 && line[i] != '\t')
				line[i] = '?';
		}
		line[len] = '\0';
		log_info("stderr: %s", line);
	}
}

/* Stdout or stderr closed or failed. */
static void
stdio_event_cb(struct iochan *ch, int what, void *arg)
{
	struct stdio_tp	*tp = arg;
	struct evbuffer	*in;

	if (ch == tp->err) {
		in = iochan_input(ch);
		if (evbuffer_get_length(in) > 0) {
			evbuffer_add(in, "\n", 1);
			stdio_err_cb(ch, tp);
		}
		iochan_read(ch, 0);
		return;
	}
	if (ch == tp->in) {
		/* What it will not read is dropped; its exit says the rest. */
		log_debug("upstream stdin closed");
		evbuffer_drain(iochan_output(ch), iochan_queued(ch));
		return;
	}
	if (tp->out_eof)
		return;
	tp->out_eof = 1;
	/* A last message without its newline still counts. */
	in = iochan_input(ch);
	if (evbuffer_get_length(in) > 0 || tp->line != NULL) {
		log_debug("upstream stdout ended without a newline");
		evbuffer_add(in, "\n", 1);
		stdio_out_cb(ch, tp);
	}
	iochan_read(ch, 0);
	if (tp->exited)
		stdio_gone(tp, NULL);
	else
		stdio_arm(tp, EXIT_DRAIN_MS * 2);
}

/*
 * Find a command in PATH (from the upstream's env, else ours), then in
 * the directory this package installs its programs in (so that
 * "mcp-demo-server" is found after an install under any prefix).
 */
static char *
stdio_resolve(const char *cmd, char **envp)
{
	const char	*path = NULL, *p, *end;
	char		*full;
	size_t		 i;

	if (strchr(cmd, '/') != NULL) {
		/* A relative path is relative to cwd, where it will run. */
		if (cmd[0] != '/' && sc->cwd != NULL)
			xasprintf(&full, "%s/%s", sc->cwd, cmd);
		else
			full = xstrdup(cmd);
		if (access(full, X_OK) == 0)
			return (full);
		free(full);
		return (NULL);
	}
	for (i = 0; envp[i] != NULL; i++) {
		if (strncmp(envp[i], "PATH=", 5) == 0)
			path = envp[i] + 5;
	}
	if (path == NULL)
		path = "/usr/local/bin:/usr/bin:/bin";
	/* Only absolute PATH entries: a relative one would mean the
	 * daemon's directory here and cwd when it runs. */
	for (p = path; ; p = end + 1) {
		end = strchr(p, ':');
		if (end == NULL)
			end = p + strlen(p);
		if (*p == '/') {
			xasprintf(&full, "%.*s/%s", (int)(end - p), p, cmd);
			if (access(full, X_OK) == 0)
				return (full);
			free(full);
		}
		if (*end == '\0')
			break;
	}
	xasprintf(&full, "%s/%s", BINDIR, cmd);
	if (access(full, X_OK) == 0)
		return (full);
	free(full);
	return (NULL);
}

/*
 * The upstream's environment: the base set of ours (env_base, what says
 * where things are and the locale), then its env, which by now also
 * holds its user's HOME, USER and LOGNAME and the variables its pass_env
 * names (worker.c); nothing else of the daemon's.  The vector is the
 * caller's, the strings are not.
 */
static char **
stdio_envp(void)
{
	struct envv	env;
	size_t		i;

	envv_init(&env);
	envv_pick(&env, environ, env_base);
	for (i = 0; sc->env != NULL && sc->env[i] != NULL; i++)
		envv_set(&env, sc->env[i]);
	return (env.v);
}

/* In the child: close every descriptor above 2 except keep. */
static void
close_except(int keep)
{
	int	fd;

#ifdef HAVE_CLOSE_RANGE
	if (close_range(3, (unsigned int)keep - 1, 0) == 0 &&
	    close_range((unsigned int)keep + 1, ~0U, 0) == 0)
		return;
#endif
	for (fd = 3; fd < 65536; fd++) {
		if (fd != keep)
			close(fd);
	}
}

/* In the child: report errno to the parent and exit. */
static void __attribute__((noreturn))
child_fail(int fd, int err)
{
	ssize_t	n;

	n = write(fd, &err, sizeof err);
	(void)n;
	_exit(127);
}

/* Wrap one end of a pipe; a write end does not read. */
static struct iochan *
stdio_chan(int fd, int reading, iochan_read_cb read_cb, struct stdio_tp *tp)
{
	struct iochan	*ch;

	evutil_make_socket_nonblocking(fd);
	ch = iochan_new(base, fd, read_cb, NULL, stdio_event_cb, tp);
	if (!reading)
		iochan_read(ch, 0);
	return (ch);
}

/* Spawn the upstream. */
static int
stdio_start(struct conn *c)
{
	struct stdio_tp	*tp;
	char		**envp, *path, why[512];
	int		  pin[2], pout[2], perr[2], pexec[2], err;
	pid_t		  pid, parent = getpid();
	ssize_t		  n;

	if (children.cap == 0) {
		u64map_init(&children);
		u64map_init(&dying);
	}
	envp = stdio_envp();
	if ((path = stdio_resolve(sc->command[0], envp)) == NULL) {
		snprintf(why, sizeof why, "command not found: %s%s%s%s",
		    sc->command[0], strchr(sc->command[0], '/') != NULL ? "" :
		    " (not in PATH, nor in ", strchr(sc->command[0], '/') !=
		    NULL ? "" : BINDIR, strchr(sc->command[0], '/') != NULL ?
		    "" : ")");
		worker_status("error", why);
		free(envp);
		return (-1);
	}
	if (pipe2(pin, O_CLOEXEC) != 0 || pipe2(pout, O_CLOEXEC) != 0 ||
	    pipe2(perr, O_CLOEXEC) != 0 || pipe2(pexec, O_CLOEXEC) != 0)
		fatal("pipe2");

	switch (pid = fork()) {
	case -1:
		fatal("fork");
	case 0:
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		env_child_signals();
		if (dup2(pin[0], 0) == -1 || dup2(pout[1], 1) == -1 ||
		    dup2(perr[1], 2) == -1)
			child_fail(pexec[1], errno);
		close_except(pexec[1]);
		if (sc->cwd != NULL && chdir(sc->cwd) != 0)
			child_fail(pexec[1], errno);
		execve(path, sc->command, envp);
		child_fail(pexec[1], errno);
	}
	setpgid(pid, pid);
	close(pin[0]);
	close(pout[1]);
	close(perr[1]);
	close(pexec[1]);
	free(envp);
	do {
		n = read(pexec[0], &err, sizeof err);
	} while (n == -1 && errno == EINTR);
	close(pexec[0]);
	if (n == (ssize_t)sizeof err) {
		waitpid(pid, NULL, 0);
		close(pin[1]);
		close(pout[0]);
		close(perr[0]);
		snprintf(why, sizeof why, "cannot start %s: %s%s%s", path,
		    strerror(err), sc->cwd != NULL ? " (cwd " : "",
		    sc->cwd != NULL ? sc->cwd : "");
		if (sc->cwd != NULL)
			strncat(why, ")", sizeof why - strlen(why) - 1);
		worker_status("error", why);
		free(path);
		return (-1);
	}
	log_info("started %s (pid %ld)", path, (long)pid);
	free(path);

	tp = xcalloc(1, sizeof *tp);
	tp->conn = c;
	tp->pid = pid;
	tp->waiter.resume = stdio_resume;
	tp->waiter.arg = tp;
	tp->in = stdio_chan(pin[1], 0, NULL, tp);
	tp->out = stdio_chan(pout[0], 1, stdio_out_cb, tp);
	tp->err = stdio_chan(perr[0], 1, stdio_err_cb, tp);
	c->tp = tp;
	u64map_put(&children, (uint64_t)pid, tp);
	worker_status("starting", NULL);
	conn_transport_up(c);
	return (0);
}

/* Write one message and a newline; line breaks inside become spaces. */
static void
stdio_send(struct conn *c, struct evbuffer *msg)
{
	struct stdio_tp		*tp = c->tp;
	struct evbuffer		*out = iochan_output(tp->in);
	struct evbuffer_ptr	 nl, cr;
	unsigned char		*p;
	size_t			 len = evbuffer_get_length(msg), i;

	/* JSON allows line breaks only as whitespace, so this is safe. */
	nl = evbuffer_search(msg, "\n", 1, NULL);
	cr = evbuffer_search(msg, "\r", 1, NULL);
	if (nl.pos >= 0 || cr.pos >= 0) {
		p = evbuffer_pullup(msg, -1);
		for (i = 0; i < len; i++) {
			if (p[i] == '\n' || p[i] == '\r')
				p[i] = ' ';
		}
	}
	evbuffer_add_buffer(out, msg);
	evbuffer_add(out, "\n", 1);
	/* Room for one message of the largest kind besides. */
	if (evbuffer_get_length(out) > STDIN_MAX_QUEUED + sc->max_message) {
		kill(-tp->pid, SIGKILL);
		stdio_gone(tp, "is not reading its stdin");
	}
}

/*
 * Stop the upstream as the stdio transport has it: close its stdin (most
 * servers exit then), SIGTERM its group a second later and SIGKILL it 3 s
 * after that.  The group, not the leader alone, and also when the leader
 * has exited already: what it started goes with it.
 */
static void
stdio_stop(struct conn *c)
{
	struct stdio_tp	*tp = c->tp;
	struct timeval	 tv = { STOP_EOF_MS / 1000, (STOP_EOF_MS % 1000) *
			    1000 };

	c->tp = NULL;
	chan_unwait(&tp->waiter);
	if (!tp->exited)
		u64map_del(&children, (uint64_t)tp->pid);
	if (u64map_get(&dying, (uint64_t)tp->pid) == NULL) {
		u64map_put(&dying, (uint64_t)tp->pid, (void *)1);
		event_base_once(base, -1, EV_TIMEOUT, stdio_term_cb,
		    (void *)(intptr_t)tp->pid, &tv);
	}
	iochan_free(tp->in);
	iochan_free(tp->out);
	iochan_free(tp->err);
	if (tp->grace != NULL)
		event_free(tp->grace);
	free(tp->line);
	free(tp);
}

static pid_t
stdio_pid(struct conn *c)
{
	struct stdio_tp	*tp = c->tp;

	return (tp != NULL ? tp->pid : -1);
}

const struct transport_ops transport_stdio = {
	.name = "stdio",
	.start = stdio_start,
	.send = stdio_send,
	.stop = stdio_stop,
	.pid = stdio_pid,
};
