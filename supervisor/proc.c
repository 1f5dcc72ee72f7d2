/* SPDX-License-Identifier: ISC */
/*
 * The supervisor's children, in relayd's and nginx's manner: one record
 * per child process (struct proc, in its owner) and one table of
 * callbacks per kind of child (struct proc_kind).  Here is what every
 * child has: starting it (spawn.c forks and execs), its channel and the
 * loop over the frames read from it, the timers that give it time to
 * start and to stop, reaping it, reading what it left in its channel
 * before the channel is dropped, and the restart policy -- a backoff that
 * doubles to a cap and is reset by a healthy run, giving up after
 * max_failures deaths in a row, and never restarting a child that exited
 * with WORKER_EXIT_CONFIG.  What a frame means and what state the owner
 * is in stay with the kind: upstream.c (mcp-worker), provider.c (mcp-llm).
 */
#include "config.h"

#include <sys/queue.h>
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "iochan.h"
#include "log.h"
#include "supervisor.h"
#include "xmalloc.h"

#define PROC_STOP_GRACE		5	/* seconds before SIGKILL */

/* What the timer of a record is armed for. */
enum proc_timer {
	PROC_T_START = 0,	/* the child has start_timeout to be ready */
	PROC_T_STOP,		/* it was asked to stop: the grace time */
	PROC_T_BACKOFF		/* it is started again when this fires */
};

/* Every record, to find a child by its pid (proc_init to proc_free). */
static TAILQ_HEAD(, proc) procs = TAILQ_HEAD_INITIALIZER(procs);

/* A test harness's stand-in for waitpid, or NULL (supervisor.h). */
reap_hook_fn	 reap_hook;

static void	proc_drop(struct proc *, const char *);

void
proc_init(struct proc *p, const struct proc_kind *kind, void *arg)
{
	memset(p, 0, sizeof *p);
	p->kind = kind;
	p->arg = arg;
	p->pid = -1;
	TAILQ_INSERT_TAIL(&procs, p, entry);
}

void
proc_free(struct proc *p)
{
	TAILQ_REMOVE(&procs, p, entry);
	if (p->timer != NULL)
		event_free(p->timer);
	if (p->ch != NULL)
		iochan_free(p->ch);
	free(p->last_error);
	free(p->name);
}

void
proc_configure(struct proc *p, const char *name,
    const struct proc_policy *policy)
{
	free(p->name);
	p->name = xstrdup(name);
	p->policy = *policy;
}

void
proc_reset(struct proc *p)
{
	p->failures = 0;
	p->delay = p->policy.first_delay;
}

void
proc_error(struct proc *p, const char *fmt, ...)
{
	va_list	ap;
	char	*msg;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		fatal("vasprintf");
	va_end(ap);
	free(p->last_error);
	p->last_error = msg;
	p->last_error_at = time(NULL);
}

/* Timer: start the child again, or end one that is late. */
static void
proc_timer_cb(evutil_socket_t fd, short events, void *arg)
{
	struct proc	*p = arg;

	switch (p->timer_for) {
	case PROC_T_BACKOFF:
		p->kind->start(p->arg);
		break;
	case PROC_T_START:
		p->kind->start_timeout(p->arg);
		break;
	case PROC_T_STOP:
		if (p->pid > 0) {
			log_warnx("%s %s: worker %ld did not stop, killing it",
			    p->kind->what, p->name, (long)p->pid);
			kill(p->pid, SIGKILL);
		}
		break;
	}
}

/* Arm the record's timer for one purpose (the one pending is replaced). */
static void
proc_arm(struct proc *p, enum proc_timer what, unsigned int seconds)
{
	struct timeval	tv = { (time_t)seconds, 0 };

	if (p->timer == NULL)
		p->timer = evtimer_new(base, proc_timer_cb, p);
	p->timer_for = what;
	evtimer_add(p->timer, &tv);
}

static void
proc_disarm(struct proc *p)
{
	if (p->timer != NULL)
		evtimer_del(p->timer);
}

int
proc_timer_pending(const struct proc *p)
{
	return (p->timer != NULL && evtimer_pending(p->timer, NULL) != 0);
}

/* Handle every whole frame buffered from the child; -1 if corrupt. */
static int
proc_process(struct proc *p)
{
	struct evbuffer		*in = iochan_input(p->ch);
	struct frame_hdr	 hdr;
	const char		*why;
	enum frame_result	 r;

	for (;;) {
		r = frame_peek(in, p->policy.frame_max, &hdr, &why);
		if (r == FRAME_NEED)
			return (0);
		if (r == FRAME_BAD) {
			log_warnx("%s %s: bad frame from worker: %s",
			    p->kind->what, p->name, why);
			return (-1);
		}
		/* A removed owner's last words concern no one. */
		if (p->removed) {
			evbuffer_drain(in, FRAME_HDR_LEN + hdr.len);
			continue;
		}
		if (p->kind->frame(p->arg, &hdr, in) != 0)
			return (-1);
		if (p->ch == NULL)
			return (0);
	}
}

/* Read frames from the child. */
static void
proc_read_cb(struct iochan *ch, void *arg)
{
	struct proc	*p = arg;

	if (proc_process(p) == 0)
		return;
	proc_error(p, "protocol error on worker channel");
	proc_kill(p, "protocol error");
}

/* The channel closed or failed. */
static void
proc_event_cb(struct iochan *ch, int what, void *arg)
{
	proc_lost(arg, "worker channel closed");
}

int
proc_spawn(struct proc *p, const char *path, char *const argv[], int net)
{
	char	err[256];
	int	fd;
	pid_t	pid;
	json_t	*cfg;

	p->stopping = 0;
	if ((pid = spawn_worker(path, argv, net, &fd, err, sizeof err)) ==
	    -1) {
		log_warnx("%s %s: %s; trying again in %u s", p->kind->what,
		    p->name, err, p->delay);
		proc_error(p, "%s", err);
		/* Out of processes or descriptors: try again, backing off as
		 * after a crash, not every first_delay for as long as it
		 * lasts. */
		p->backoff = p->delay;
		proc_arm(p, PROC_T_BACKOFF, p->delay);
		p->delay = p->delay * 2 > p->policy.max_delay ?
		    p->policy.max_delay : p->delay * 2;
		return (-1);
	}
	p->pid = pid;
	p->started = now_ms();
	p->ready_at = 0;
	p->ch = iochan_new(base, fd, proc_read_cb, NULL, proc_event_cb, p);
	cfg = p->kind->config(p->arg);
	/* It holds secrets of our environment (spawn_expand_env). */
	frame_add_json_secret(iochan_output(p->ch), MSG_CONFIG, 0, 0, cfg);
	json_decref(cfg);
	proc_arm(p, PROC_T_START, p->policy.start_timeout);
	log_debug("%s %s: worker %ld started", p->kind->what, p->name,
	    (long)pid);
	return (0);
}

void
proc_ready(struct proc *p)
{
	p->ready_at = now_ms();
	proc_disarm(p);
}

void
proc_stop(struct proc *p)
{
	p->stopping = 1;
	if (p->pid <= 0) {
		/* Nothing runs: no restart is due either. */
		proc_disarm(p);
		return;
	}
	if (p->ch != NULL)
		frame_add(iochan_output(p->ch), MSG_SHUTDOWN, 0, 0, "{}", 2);
	else
		kill(p->pid, SIGTERM);
	proc_arm(p, PROC_T_STOP, PROC_STOP_GRACE);
}

void
proc_restart(struct proc *p)
{
	proc_reset(p);
	p->restart_now = 1;
	proc_disarm(p);
	proc_stop(p);
}

void
proc_restart_after(struct proc *p)
{
	proc_reset(p);
	p->restart_now = 1;
	/* A child that lingers is killed, as after proc_restart. */
	if (!proc_timer_pending(p) || p->timer_for != PROC_T_STOP)
		proc_arm(p, PROC_T_STOP, PROC_STOP_GRACE);
}

void
proc_remove(struct proc *p)
{
	p->removed = 1;
	p->restart_now = 0;
	proc_disarm(p);
}

/* Drop the channel unread and tell the owner; the child is gone or going. */
static void
proc_drop(struct proc *p, const char *why)
{
	if (p->ch == NULL)
		return;
	iochan_free(p->ch);
	p->ch = NULL;
	log_debug("%s %s: %s", p->kind->what, p->name, why);
	p->kind->lost(p->arg);
	if (p->pid > 0)
		kill(p->pid, SIGKILL);
}

void
proc_kill(struct proc *p, const char *why)
{
	if (p->pid > 0)
		kill(p->pid, SIGKILL);
	proc_drop(p, why);
}

void
proc_lost(struct proc *p, const char *why)
{
	struct evbuffer	*in;
	int		 fd;

	if (p->ch == NULL)
		return;
	/* Its last words first: the precise error, a result it sent. */
	in = iochan_input(p->ch);
	fd = iochan_fd(p->ch);
	while (evbuffer_get_length(in) <= p->policy.frame_max &&
	    evbuffer_read(in, fd, 65536) > 0)
		;
	proc_process(p);
	proc_drop(p, why);
}

/* Say how a child ended, as log lines and errors do. */
static void
proc_exit_text(int status, char *buf, size_t len)
{
	if (WIFEXITED(status))
		snprintf(buf, len, "exited with status %d",
		    WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "killed by signal %d", WTERMSIG(status));
	else
		snprintf(buf, len, "ended");
}

/*
 * A child exited: drop its channel (its last words read) and decide what
 * comes next.  Its owner hears the decision; it may be freed then.
 */
static void
proc_exited(struct proc *p, int status)
{
	char		how[64];
	enum proc_fate	fate;

	proc_exit_text(status, how, sizeof how);
	p->pid = -1;
	proc_lost(p, how);
	proc_disarm(p);
	if (p->removed) {
		log_info("%s %s: worker %s; removed", p->kind->what, p->name,
		    how);
		p->kind->exited(p->arg, status, how, PROC_REMOVED);
		return;
	}
	if (p->restart_now) {
		p->restart_now = 0;
		p->kind->exited(p->arg, status, how, PROC_RESPAWNED);
		p->kind->start(p->arg);
		return;
	}
	if (p->stopping) {
		p->kind->exited(p->arg, status, how, PROC_STOPPED);
		return;
	}
	/* A login stored new tokens: the next run uses them (uplogin.c). */
	if (WIFEXITED(status) && WEXITSTATUS(status) == WORKER_EXIT_LOGIN) {
		log_info("%s %s: logged in; starting its worker again",
		    p->kind->what, p->name);
		p->kind->exited(p->arg, status, how, PROC_RESPAWNED);
		p->kind->start(p->arg);
		return;
	}
	/* A run that stayed healthy long enough starts the count afresh. */
	if (p->ready_at > 0 && now_ms() - p->ready_at >= p->policy.healthy_ms)
		proc_reset(p);
	p->failures++;
	if (WIFEXITED(status) && WEXITSTATUS(status) == WORKER_EXIT_CONFIG)
		fate = PROC_REFUSED;
	else if (p->policy.max_failures > 0 &&
	    p->failures >= p->policy.max_failures)
		fate = PROC_GAVE_UP;
	else {
		fate = PROC_BACKOFF;
		p->restarts++;
		p->backoff = p->delay;
		proc_arm(p, PROC_T_BACKOFF, p->delay);
		p->delay = p->delay * 2 > p->policy.max_delay ?
		    p->policy.max_delay : p->delay * 2;
	}
	p->kind->exited(p->arg, status, how, fate);
}

void
proc_reap(void)
{
	struct proc	*p;
	pid_t		 pid;
	int		 status;

	for (;;) {
		pid = reap_hook != NULL ? reap_hook(&status) :
		    waitpid(-1, &status, WNOHANG);
		if (pid == 0)
			return;
		if (pid == -1) {
			if (errno == EINTR)
				continue;
			return;
		}
		TAILQ_FOREACH(p, &procs, entry) {
			if (p->pid == pid)
				break;
		}
		if (p != NULL)
			proc_exited(p, status);
		else
			log_debug("reaped orphan %ld", (long)pid);
	}
}

int
proc_all_exited(void)
{
	struct proc	*p;

	TAILQ_FOREACH(p, &procs, entry) {
		if (p->pid > 0)
			return (0);
	}
	return (1);
}
