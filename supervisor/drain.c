/* SPDX-License-Identifier: ISC */
/*
 * Draining (mcpctl drain [SECONDS]): take no new sessions (initialize,
 * GET /sse and WebSocket upgrades get 503, /readyz 404) while the
 * existing ones go on, and stop the daemon once none remains or the
 * deadline passes, whichever comes first.  Behind a balancer that checks
 * /readyz with disable-on-404 this is a rolling restart with no failed
 * call: new sessions go elsewhere, and a session's requests keep reaching
 * the instance that owns it until the client ends it.
 */
#include "config.h"

#include <stdio.h>

#include <event2/event.h>

#include "log.h"
#include "supervisor.h"

#define DRAIN_MAX_SECONDS	(7 * 86400)

static int		 draining;
static int		 stopping;	/* the daemon is told to stop */
static int64_t		 drain_deadline;	/* monotonic ms */
static struct event	*drain_timer;		/* the deadline */
static struct event	*drain_done_ev;		/* none left: exit */
static struct event	*drain_poll;	/* 2026-07-28 principals idle? */

int
drain_active(void)
{
	return (draining);
}

unsigned int
drain_remaining(void)
{
	int64_t	left;

	if (!draining)
		return (0);
	left = drain_deadline - now_ms();
	return (left > 0 ? (unsigned int)((left + 999) / 1000) : 0);
}

/* Stop the daemon, from the loop. */
static void
drain_exit_cb(evutil_socket_t fd, short events, void *arg)
{
	const char	*why = arg;

	if (stopping)
		return;
	stopping = 1;
	log_info("drain: %s", why);
	notify_status();
	if (daemon_exit != NULL)
		daemon_exit(why);
}

/* Nothing else says when a 2026-07-28 principal's last call ends. */
static void
drain_poll_cb(evutil_socket_t fd, short events, void *arg)
{
	drain_check();
}

int
drain_start(unsigned int seconds, char *err, size_t errlen)
{
	struct timeval	tv;

	if (seconds > DRAIN_MAX_SECONDS) {
		snprintf(err, errlen, "drain: at most %u seconds",
		    DRAIN_MAX_SECONDS);
		return (-1);
	}
	if (drain_timer == NULL) {
		drain_timer = evtimer_new(base, drain_exit_cb, (void *)"the "
		    "deadline passed with sessions left, stopping");
		drain_done_ev = evtimer_new(base, drain_exit_cb,
		    (void *)"no session left, stopping");
		drain_poll = event_new(base, -1, EV_PERSIST, drain_poll_cb,
		    NULL);
	}
	draining = 1;
	drain_deadline = now_ms() + (int64_t)seconds * 1000;
	tv.tv_sec = seconds;
	tv.tv_usec = 0;
	evtimer_add(drain_timer, &tv);
	tv.tv_sec = 1;
	evtimer_add(drain_poll, &tv);
	log_info("drain: no new sessions; stopping when the %u left have "
	    "ended, or in %u s", session_count_busy(), seconds);
	notify_status();
	drain_check();
	return (0);
}

void
drain_check(void)
{
	struct timeval	tv = { 0, 0 };

	if (draining && session_count_busy() == 0 && drain_done_ev != NULL &&
	    !evtimer_pending(drain_done_ev, NULL))
		evtimer_add(drain_done_ev, &tv);
}

void
drain_free(void)
{
	if (drain_timer != NULL) {
		event_free(drain_timer);
		event_free(drain_done_ev);
		event_free(drain_poll);
		drain_timer = drain_done_ev = drain_poll = NULL;
	}
}
