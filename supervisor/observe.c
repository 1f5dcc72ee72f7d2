/* SPDX-License-Identifier: ISC */
/*
 * One record per client request, from the moment it is read to the moment
 * its answer goes out, feeding the metrics (metrics.c) and the access log
 * (access_log.c).  A request is "current" while it is being routed
 * (route_request); an answer written then for the same stream and the very
 * id bytes of the request ends it.  A request that goes on beyond that has
 * its record moved (obs_take) into the pending request, the client tool
 * call or the wait for the session's view that holds it, and is ended
 * there.  The cost on the path of a call is a few reads of the monotonic
 * clock and some counters; the strings of the access log are copied only
 * when it is on, or when the daemon logs at debug level (-v), which logs
 * the same line.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "supervisor.h"
#include "xmalloc.h"

const char *const obs_outcome_names[OBS_NOUTCOMES] = {
	[OBS_OK] = "ok",
	[OBS_ERROR] = "error",
	[OBS_TIMEOUT] = "timeout",
	[OBS_REFUSED] = "refused",
	[OBS_CANCELLED] = "cancelled",
};

const char *const obs_transport_names[OBS_NTRANSPORTS] = {
	[OBS_T_HTTP] = "http",
	[OBS_T_SSE] = "sse",
	[OBS_T_WS] = "ws",
};

/* The request being routed, if any. */
static struct reqobs		 cur;
static int			 cur_resumed;	/* its record waited */
static const struct stream	*cur_stream;
static const char		*cur_id;	/* its id's bytes, in the
						   message being routed */

/*
 * Routing one request may route another (a failing worker flushes the
 * requests that waited for a session's view): the outer one is set aside
 * meanwhile, a few deep at most.
 */
#define OBS_NEST	4
static struct {
	struct reqobs		 rec;
	const struct stream	*stream;
	const char		*id;
} nest[OBS_NEST];
static int			 depth;
static int			 overflow;	/* levels beyond OBS_NEST */

/* Is a request being routed (whether or not its record went on)? */
static int
obs_routing(void)
{
	return (cur.active || cur_id != NULL);
}

/* Set the current request aside (or end it, too deep). */
static void
obs_push(void)
{
	if (depth == OBS_NEST) {
		obs_end(&cur, OBS_OK, 0);
		overflow++;
		return;
	}
	nest[depth].rec = cur;
	nest[depth].stream = cur_stream;
	nest[depth].id = cur_id;
	depth++;
	memset(&cur, 0, sizeof cur);
}

int64_t
now_us(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000);
}

enum obs_transport
obs_session_transport(const struct session *s)
{
	return ((enum obs_transport)s->transport);
}

/* Start the access log's part of a record. */
static void
obs_log_start(struct reqobs *o, const char *peer, const char *method)
{
	if (!access_log_enabled())
		return;
	o->log = xcalloc(1, sizeof *o->log);
	snprintf(o->log->peer, sizeof o->log->peer, "%s", peer != NULL ?
	    peer : "-");
	access_log_clean(o->log->method, sizeof o->log->method, method,
	    strlen(method));
}

void
obs_begin(struct session *s, struct stream *st, const struct jrpc *m)
{
	if (cur_resumed)
		cur_resumed = 0;
	else {
		if (obs_routing())
			obs_push();
		memset(&cur, 0, sizeof cur);
	}
	cur_stream = st;
	cur_id = m->p + m->id.off;
	if (cur.active)
		return;
	cur.active = 1;
	cur.t0 = now_us();
	cur.method = (uint8_t)mcp_methods[m->method_id].counted;
	cur.transport = s->transport;
	cur.session = s->no;
	obs_log_start(&cur, st != NULL && st->conn != NULL ?
	    http_conn_peer(st->conn) : NULL, m->method_name);
}

void
obs_done(void)
{
	/* Answered some other way than through route_result/route_error. */
	if (cur.active)
		obs_end(&cur, OBS_OK, 0);
	cur_stream = NULL;
	cur_id = NULL;
	if (overflow > 0)
		overflow--;
	else if (depth > 0) {
		depth--;
		cur = nest[depth].rec;
		cur_stream = nest[depth].stream;
		cur_id = nest[depth].id;
	}
}

void
obs_name(const char *name, size_t len)
{
	if (cur.active && cur.log != NULL)
		access_log_clean(cur.log->name, sizeof cur.log->name, name,
		    len);
}

void
obs_upstream(struct upstream *up)
{
	if (cur.active)
		cur.up = up;
}

void
obs_client_tool(void)
{
	if (cur.active)
		cur.client_tool = 1;
}

void
obs_answered(const struct stream *st, const char *id, int outcome, int code)
{
	if (cur.active && st == cur_stream && id == cur_id)
		obs_end(&cur, outcome, code);
}

void
obs_take(struct reqobs *o)
{
	if (!cur.active) {
		memset(o, 0, sizeof *o);
		return;
	}
	*o = cur;
	memset(&cur, 0, sizeof cur);
}

void
obs_resume(struct reqobs *o)
{
	if (!o->active)
		return;
	if (obs_routing())
		obs_push();
	cur = *o;
	memset(o, 0, sizeof *o);
	cur_resumed = 1;
}

void
obs_sent(struct reqobs *o)
{
	if (o->active)
		o->t_fwd = now_us();
}

void
obs_returned(struct reqobs *o)
{
	if (o->active && o->t_fwd != 0) {
		o->up_us += now_us() - o->t_fwd;
		o->t_fwd = 0;
	}
}

void
obs_end(struct reqobs *o, int outcome, int code)
{
	int64_t		total, added;

	if (!o->active)
		return;
	obs_returned(o);
	total = now_us() - o->t0;
	if (total < 0)
		total = 0;
	added = total - o->up_us;
	if (added < 0)
		added = 0;
	metrics_request(o, outcome, (uint64_t)total, (uint64_t)added);
	if (o->log != NULL) {
		access_log_request(o, outcome, code, total, added);
		free(o->log);
	}
	memset(o, 0, sizeof *o);
}

void
obs_initialize(struct session *s, const char *peer, enum obs_transport t,
    const struct jrpc *m, int64_t t0, int code)
{
	struct reqobs	o;

	memset(&o, 0, sizeof o);
	o.active = 1;
	o.t0 = t0;
	o.method = MCPM_INITIALIZE;
	o.transport = (uint8_t)t;
	o.session = s != NULL ? s->no : 0;
	obs_log_start(&o, peer, m->method_name);
	obs_end(&o, code == 0 ? OBS_OK : OBS_REFUSED, code);
}
