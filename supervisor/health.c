/* SPDX-License-Identifier: ISC */
/*
 * Liveness and readiness, for balancers, orchestrators and mcpctl check.
 *
 *	GET /healthz	200 whenever the event loop answers.
 *	GET /readyz	200 when every non-lazy upstream has been ready
 *			once
 *			(one that gave up trying, and is not required, no
 *			longer holds readiness back); 503 when a required
 *			upstream has failed or is stopped, when no upstream
 *			is usable (there are some, and every one is failed
 *			or stopped: none is ready or can become ready), or
 *			when one is still coming up, or while the circuit
 *			breaker of a required upstream is open; 404 while
 *			draining,
 *			which HAProxy's "http-check disable-on-404" reads as
 *			"no new sessions, keep the existing ones".
 *
 * Both are under the listener's Host and Origin rules but need no token:
 * their status tells whether the gateway serves.  Why it does not (which
 * upstream is failed, stopped or still starting) is said only to a request
 * that may read the metrics, which name every upstream anyway: without
 * any token configured, any request; with tokens, one whose token has the
 * metrics right (auth.c).  Others get the status and a word.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "supervisor.h"

#define HEALTH_START_FAILURES	3	/* in a row: a not required upstream
					   no longer holds readiness */

/*
 * Is an upstream out of use until an operator acts (failed, stopped, or
 * waiting for mcpctl login)?
 */
static int
health_down(const struct upstream *up)
{
	return (up->state == UPSTREAM_FAILED ||
	    up->state == UPSTREAM_STOPPED || up->state == UPSTREAM_LOGIN);
}

/* Has some upstream been ready, and not failed or stopped since?  (Then
 * one that keeps failing to start no longer holds the gateway back.) */
static int
health_some_ready(void)
{
	size_t	i;

	for (i = 0; i < nupstreams; i++)
		if (upstreams[i]->ready_once && !health_down(upstreams[i]))
			return (1);
	return (0);
}

int
health_ready(char *why, size_t len)
{
	struct upstream	*up;
	size_t		 i, ndown = 0, nlogin = 0;

	if (why != NULL && len > 0)
		why[0] = '\0';
	if (drain_active()) {
		if (why != NULL)
			snprintf(why, len, "draining");
		return (404);
	}
	for (i = 0; i < nupstreams; i++) {
		up = upstreams[i];
		if (health_down(up))
			ndown++;
		if (up->state == UPSTREAM_LOGIN)
			nlogin++;
		if (up->sc->required && health_down(up)) {
			if (why != NULL && up->state == UPSTREAM_LOGIN)
				snprintf(why, len, "required upstream %s needs "
				    "a login (mcpctl login %s)", up->sc->name,
				    up->sc->name);
			else if (why != NULL)
				snprintf(why, len, "required upstream %s is %s",
				    up->sc->name,
				    upstream_state_name(up->state));
			return (503);
		}
		/* Half-open, it lets a probe through: ready again. */
		if (up->sc->required && up->breaker.state == BREAKER_OPEN) {
			if (why != NULL)
				snprintf(why, len, "required upstream %s is "
				    "failing: its circuit breaker is open",
				    up->sc->name);
			return (503);
		}
	}
	/*
	 * Starting, in backoff or lazy and idle, an upstream can still become
	 * ready; failed or stopped, it waits for an operator.  A gateway whose
	 * every upstream waits for one serves nothing of what it lists.
	 */
	if (nupstreams > 0 && ndown == nupstreams) {
		if (why != NULL && nupstreams == 1)
			snprintf(why, len, "no upstream is usable: %s is %s",
			    upstreams[0]->sc->name,
			    upstream_state_name(upstreams[0]->state));
		else if (why != NULL)
			snprintf(why, len, "no upstream is usable: all %zu are "
			    "failed or stopped%s", nupstreams, nlogin > 0 ?
			    ", or wait for a login" : "");
		return (503);
	}
	for (i = 0; i < nupstreams; i++) {
		up = upstreams[i];
		if (up->ready_once || (up->sc->lazy && !up->sc->required))
			continue;
		if (health_down(up))
			continue;	/* not required: it no longer counts */
		/* Not required, and failing to start again and again (with
		 * max_failures = 0 it never gives up, nor becomes failed):
		 * it no longer holds the others back. */
		if (!up->sc->required && up->proc.failures >=
		    HEALTH_START_FAILURES && health_some_ready())
			continue;
		if (up->sc->lazy && up->state == UPSTREAM_IDLE)
			continue;
		if (why != NULL)
			snprintf(why, len, "upstream %s has not been ready yet "
			    "(%s)", up->sc->name,
			    upstream_state_name(up->state));
		return (503);
	}
	return (200);
}

int
health_path(const struct http_request *req)
{
	return (strcmp(req->path, "/healthz") == 0 ||
	    strcmp(req->path, "/readyz") == 0);
}

void
health_serve(struct http_conn *c, struct http_request *req)
{
	char	body[384], why[256];
	int	status, n;

	/* Checked every second or so by balancers: not access logged. */
	http_conn_nolog(c);
	if (strcmp(req->method, "GET") != 0 &&
	    strcmp(req->method, "HEAD") != 0) {
		http_reply(c, 405, "text/plain; charset=utf-8",
		    "Allow: GET, HEAD\r\n", "Method Not Allowed\n", 19);
		return;
	}
	if (strcmp(req->path, "/healthz") == 0) {
		http_reply(c, 200, "text/plain; charset=utf-8",
		    "Cache-Control: no-store\r\n", "ok\n", 3);
		return;
	}
	status = health_ready(why, sizeof why);
	if (status == 200)
		n = snprintf(body, sizeof body, "ready\n");
	else if (status == 404)
		n = snprintf(body, sizeof body, "draining: no new sessions\n");
	else if (mcp_http_may(req, AUTH_METRICS))
		n = snprintf(body, sizeof body, "not ready: %s\n", why);
	else
		n = snprintf(body, sizeof body, "not ready\n");
	http_reply(c, status, "text/plain; charset=utf-8",
	    "Cache-Control: no-store\r\n", body, (size_t)n);
}
