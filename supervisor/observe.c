/* SPDX-License-Identifier: ISC */
/*
 * One record per client request, from the moment it is read to the moment
 * its answer goes out, feeding the metrics (metrics.c) and the access log
 * (access_log.c).  While the request is routed its record is in its struct
 * req (route_request), and an answer given through that (route_result,
 * route_reject) ends it.  A request that goes on beyond that has its
 * record moved (req_take) into the pending request, the client tool call
 * or the wait for the session's view that holds it, and is ended there.
 * The cost on the path of a call is a few reads of the monotonic clock
 * and some counters; the strings of the access log are copied only when
 * it is on, or when the daemon logs at debug level (-v), which logs the
 * same line.
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
req_begin(struct req *r, struct session *s, struct stream *st,
    const struct jrpc *m, struct reqobs *waited)
{
	r->session = s;
	r->stream = st;
	r->m = m;
	r->name = NULL;
	r->inner = 0;
	if (waited != NULL && waited->active) {
		r->obs = *waited;
		memset(waited, 0, sizeof *waited);
		return;
	}
	memset(&r->obs, 0, sizeof r->obs);
	r->obs.active = 1;
	r->obs.t0 = now_us();
	r->obs.method = (uint8_t)mcp_methods[m->method_id].counted;
	r->obs.transport = s->transport;
	r->obs.session = s->no;
	obs_log_start(&r->obs, st != NULL && st->conn != NULL ?
	    http_conn_peer(st->conn) : NULL, m->method_name);
	trace_begin(&r->obs, s, m);
}

void
req_finish(struct req *r)
{
	/* Answered some other way than through route_result/route_reject. */
	obs_end(&r->obs, OBS_OK, 0);
}

void
req_answered(struct req *r, int outcome, int code)
{
	obs_end(&r->obs, outcome, code);
}

void
req_name(struct req *r, const char *name, size_t len)
{
	if (r->obs.active && r->obs.log != NULL)
		access_log_clean(r->obs.log->name, sizeof r->obs.log->name,
		    name, len);
	if (r->obs.trace != NULL)
		trace_name(r->obs.trace, name, len);
}

void
req_upstream(struct req *r, struct upstream *up)
{
	if (r->obs.active)
		r->obs.up = up;
}

void
req_client_tool(struct req *r)
{
	if (r->obs.active)
		r->obs.client_tool = 1;
}

void
req_take(struct req *r, struct reqobs *o)
{
	*o = r->obs;
	memset(&r->obs, 0, sizeof r->obs);
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
	if (o->trace != NULL)
		trace_end(o, outcome, code);
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
