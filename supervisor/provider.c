/* SPDX-License-Identifier: ISC */
/*
 * LLM providers: one mcp-llm worker per entry of llm = ( ... ), started,
 * watched and restarted by proc.c as upstream workers are (exponential
 * backoff, reset after a healthy minute), so that a provider's HTTP calls
 * never run in the supervisor's loop and a worker that dies costs only the
 * requests it held, which fall through their chains.  Budgets and
 * counters live here, and survive worker restarts and reloads that keep
 * the name.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "iochan.h"
#include "log.h"
#include "redact.h"
#include "supervisor.h"
#include "xmalloc.h"

#define PROVIDER_FIRST_DELAY	1	/* seconds of backoff, doubling */
#define PROVIDER_MAX_DELAY	60
#define PROVIDER_HEALTHY_MS	60000	/* uptime that resets the backoff */
#define PROVIDER_START_TIMEOUT	30	/* seconds to be ready */

const char		*llm_worker_path;

static struct provider	**providers;
static size_t		  nproviders;

static const char *const state_names[] = {
	[PROVIDER_STARTING] = "starting",
	[PROVIDER_READY] = "ready",
	[PROVIDER_BACKOFF] = "backoff",
	[PROVIDER_STOPPED] = "stopped",
	[PROVIDER_FAILED] = "failed",
};

static void	provider_spawn(void *);
static json_t	*provider_config(void *);
static int	provider_frame(void *, const struct frame_hdr *,
		    struct evbuffer *);
static void	provider_lost(void *);
static void	provider_start_timeout(void *);
static void	provider_exited(void *, int, const char *, enum proc_fate);

/* LLM provider workers (mcp-llm) as proc.c sees them. */
static const struct proc_kind provider_kind = {
	.what = "llm",
	.start = provider_spawn,
	.config = provider_config,
	.frame = provider_frame,
	.lost = provider_lost,
	.start_timeout = provider_start_timeout,
	.exited = provider_exited,
};

struct provider *
provider_find(const char *name)
{
	size_t	i;

	for (i = 0; i < nproviders; i++) {
		if (strcmp(providers[i]->lc->name, name) == 0)
			return (providers[i]);
	}
	return (NULL);
}

/* Its worker was not ready in time: kill it, and it is restarted. */
static void
provider_start_timeout(void *arg)
{
	struct provider	*pv = arg;

	if (pv->proc.pid <= 0)
		return;
	log_warnx("llm %s: worker %ld did not start, killing it",
	    pv->lc->name, (long)pv->proc.pid);
	proc_error(&pv->proc, "its worker did not start");
	kill(pv->proc.pid, SIGKILL);
	proc_lost(&pv->proc, "killed");
}

/* A STATUS frame: ready, or the error that stops it. */
static void
provider_status(struct provider *pv, json_t *msg)
{
	const char	*state, *error;
	char		 url[256];

	if (json_unpack(msg, "{s:s}", "state", &state) != 0)
		return;
	if (json_unpack(msg, "{s:s}", "error", &error) == 0) {
		proc_error(&pv->proc, "%s", error);
		log_warnx("llm %s: %s", pv->lc->name, error);
	}
	if (strcmp(state, "ready") == 0 && pv->state == PROVIDER_STARTING) {
		pv->state = PROVIDER_READY;
		proc_ready(&pv->proc);
		log_info("llm %s: ready (%s, %s, model %s)", pv->lc->name,
		    conf_llm_provider_name(pv->lc->provider),
		    url_redact(pv->lc->url, url, sizeof url), pv->lc->model);
	}
}

/* One frame from a provider's worker; -1 if the channel is corrupt. */
static int
provider_frame(void *arg, const struct frame_hdr *hdr, struct evbuffer *in)
{
	struct provider	*pv = arg;
	json_t		*msg;
	const char	*why;

	switch (hdr->type) {
	case MSG_HELLO:
	case MSG_STATUS:
		if ((msg = frame_take_json(in, hdr, &why)) == NULL) {
			log_warnx("llm %s: %s frame: %s", pv->lc->name,
			    msg_type_name(hdr->type), why);
			return (-1);
		}
		if (hdr->type == MSG_STATUS)
			provider_status(pv, msg);
		json_decref(msg);
		return (0);
	case MSG_LLM_PROGRESS:
	case MSG_LLM_USAGE:
	case MSG_LLM_RESULT:
	case MSG_LLM_FAIL:
		sampling_llm_frame(pv, hdr, in);
		return (0);
	default:
		log_warnx("llm %s: unexpected %s frame", pv->lc->name,
		    msg_type_name(hdr->type));
		return (-1);
	}
}

/* The worker is gone or going: its requests fall through their chains. */
static void
provider_lost(void *arg)
{
	struct provider	*pv = arg;
	char		 msg[256];

	snprintf(msg, sizeof msg, "the worker of llm %s exited",
	    pv->lc->name);
	sampling_provider_down(pv, msg);
}

/* Fork and exec the provider's worker. */
static void
provider_spawn(void *arg)
{
	struct provider	*pv = arg;
	char		*argv[8];
	int		 argc = 0;

	argv[argc++] = (char *)"mcp-llm";
	if (log_getforeground())
		argv[argc++] = (char *)"-d";
	if (log_getverbose() > 0)
		argv[argc++] = (char *)"-v";
	argv[argc++] = pv->lc->name;
	argv[argc] = NULL;
	if (proc_spawn(&pv->proc, llm_worker_path, argv, 1) == -1)
		pv->state = PROVIDER_BACKOFF;
	else
		pv->state = PROVIDER_STARTING;
}

/* The CONFIG frame of a new worker. */
static json_t *
provider_config(void *arg)
{
	struct provider	*pv = arg;
	char		*key[2];
	json_t		*cfg, *llm, *keys;

	llm = conf_llm_to_json(pv->lc);
	/* The key, if it is in our environment, which the worker's is not. */
	if (pv->lc->api_key != NULL) {
		key[0] = pv->lc->api_key;
		key[1] = NULL;
		keys = spawn_expand_env(key);
		json_object_set(llm, "api_key", json_array_get(keys, 0));
		json_decref(keys);
	}
	cfg = json_pack("{s:o}", "llm", llm);
	if (conf->user != NULL)
		json_object_set_new(cfg, "user", json_string(conf->user));
	return (cfg);
}

/* Give the worker's record the provider's name and restart policy. */
static void
provider_policy(struct provider *pv)
{
	struct proc_policy	pp;

	memset(&pp, 0, sizeof pp);
	pp.first_delay = PROVIDER_FIRST_DELAY;
	pp.max_delay = PROVIDER_MAX_DELAY;
	pp.healthy_ms = PROVIDER_HEALTHY_MS;
	pp.max_failures = 0;
	pp.start_timeout = PROVIDER_START_TIMEOUT;
	pp.frame_max = conf_llm_frame_max(pv->lc);
	proc_configure(&pv->proc, pv->lc->name, &pp);
}

/* Make a provider from its configuration and start its worker. */
static struct provider *
provider_new(const struct llm_conf *lc)
{
	struct provider	*pv;

	pv = xcalloc(1, sizeof *pv);
	pv->lc = conf_llm_copy(lc);
	proc_init(&pv->proc, &provider_kind, pv);
	provider_policy(pv);
	proc_reset(&pv->proc);
	budget_init(&pv->budget);
	provider_spawn(pv);
	return (pv);
}

static void
provider_free(struct provider *pv)
{
	proc_free(&pv->proc);
	conf_llm_free(pv->lc);
	free(pv->lc);
	free(pv);
}

void
provider_init_all(void)
{
	size_t	i;

	nproviders = conf->nllms;
	providers = xcalloc(nproviders + 1, sizeof *providers);
	for (i = 0; i < nproviders; i++)
		providers[i] = provider_new(&conf->llms[i]);
}

void
provider_stop_all(void)
{
	size_t	i;

	for (i = 0; i < nproviders; i++) {
		providers[i]->state = PROVIDER_STOPPED;
		proc_stop(&providers[i]->proc);
	}
}

/* A provider's worker exited: what proc.c decided, said and done. */
static void
provider_exited(void *arg, int status, const char *how, enum proc_fate fate)
{
	struct provider	*pv = arg;
	struct proc	*p = &pv->proc;

	switch (fate) {
	case PROC_REMOVED:
		provider_free(pv);
		break;
	case PROC_RESPAWNED:
	case PROC_STOPPED:
		break;
	case PROC_REFUSED:
		log_warnx("llm %s: worker %s: configuration refused, not "
		    "restarting (%s)", pv->lc->name, how,
		    p->last_error != NULL ? p->last_error : "");
		pv->state = PROVIDER_FAILED;
		break;
	case PROC_GAVE_UP:	/* never: a provider has no max_failures */
		pv->state = PROVIDER_FAILED;
		break;
	case PROC_BACKOFF:
		proc_error(p, "worker %s", how);
		pv->state = PROVIDER_BACKOFF;
		log_warnx("llm %s: worker %s; restarting in %u s",
		    pv->lc->name, how, p->backoff);
		break;
	}
}

void
provider_apply(const struct conf *nc, json_t *report)
{
	struct provider	**next, **old, *pv;
	size_t		  i, j, nold;
	char		  msg[256];

	next = xcalloc(nc->nllms + 1, sizeof *next);
	for (i = 0; i < nc->nllms; i++) {
		if ((pv = provider_find(nc->llms[i].name)) == NULL) {
			log_info("llm %s: added", nc->llms[i].name);
			next[i] = provider_new(&nc->llms[i]);
			reload_report_name(report, "llm_added",
			    nc->llms[i].name);
			continue;
		}
		next[i] = pv;
		if (conf_llm_equal(pv->lc, &nc->llms[i])) {
			/* A reload is the way to try a failed one again. */
			if (pv->state == PROVIDER_FAILED &&
			    pv->proc.pid <= 0) {
				log_info("llm %s: starting again",
				    pv->lc->name);
				proc_reset(&pv->proc);
				provider_spawn(pv);
			}
			continue;
		}
		log_info("llm %s: configuration changed, restarting",
		    pv->lc->name);
		reload_report_name(report, "llm_changed", pv->lc->name);
		conf_llm_free(pv->lc);
		free(pv->lc);
		pv->lc = conf_llm_copy(&nc->llms[i]);
		provider_policy(pv);
		proc_reset(&pv->proc);
		if (pv->proc.pid > 0) {
			pv->state = PROVIDER_STARTING;
			snprintf(msg, sizeof msg, "llm %s is restarting with "
			    "a new configuration", pv->lc->name);
			sampling_provider_down(pv, msg);
			proc_restart(&pv->proc);
		} else
			provider_spawn(pv);
	}
	for (i = 0; i < nproviders; i++) {
		for (j = 0; j < nc->nllms && next[j] != providers[i]; j++)
			;
		if (j < nc->nllms)
			continue;
		pv = providers[i];
		log_info("llm %s: removed from the configuration",
		    pv->lc->name);
		reload_report_name(report, "llm_removed", pv->lc->name);
		proc_remove(&pv->proc);
		pv->state = PROVIDER_STOPPED;
		snprintf(msg, sizeof msg, "llm %s was removed from the "
		    "configuration", pv->lc->name);
		sampling_provider_down(pv, msg);
		proc_stop(&pv->proc);
	}
	old = providers;
	nold = nproviders;
	providers = next;
	nproviders = nc->nllms;
	/* Those removed without a worker go now, the others as it exits. */
	for (i = 0; i < nold; i++) {
		if (old[i]->proc.removed && old[i]->proc.pid <= 0)
			provider_free(old[i]);
	}
	free(old);
}

int
provider_request(struct provider *pv, uint32_t tag, struct evbuffer *payload,
    char *why, size_t len)
{
	if (pv->state != PROVIDER_READY || pv->proc.ch == NULL) {
		if (pv->proc.last_error != NULL)
			snprintf(why, len, "llm %s is %s (last error: %s)",
			    pv->lc->name, state_names[pv->state],
			    pv->proc.last_error);
		else
			snprintf(why, len, "llm %s is %s", pv->lc->name,
			    state_names[pv->state]);
		return (-1);
	}
	if (pv->inflight >= pv->lc->max_concurrent) {
		snprintf(why, len, "llm %s has %u requests in flight "
		    "(max_concurrent)", pv->lc->name, pv->inflight);
		return (-1);
	}
	frame_add_buffer(iochan_output(pv->proc.ch), MSG_LLM_REQUEST, 0, tag,
	    payload);
	pv->inflight++;
	pv->requests++;
	return (0);
}

void
provider_cancel(struct provider *pv, uint32_t tag)
{
	if (pv->proc.ch != NULL)
		frame_add(iochan_output(pv->proc.ch), MSG_LLM_CANCEL, 0, tag,
		    "{}", 2);
}

/* One provider for mcpctl status: never its key, nor its URL's secrets. */
static json_t *
provider_json(struct provider *pv)
{
	int64_t	now = now_ms();
	json_t	*o;
	char	url[512];

	o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:i, s:I, s:I, s:I, "
	    "s:I, s:I, s:I, s:I, s:I, s:I}",
	    "name", pv->lc->name,
	    "provider", conf_llm_provider_name(pv->lc->provider),
	    "url", url_redact(pv->lc->url, url, sizeof url),
	    "model", pv->lc->model,
	    "state", state_names[pv->state],
	    "pid", (json_int_t)pv->proc.pid,
	    "restarts", (int)pv->proc.restarts,
	    "in_flight", (json_int_t)pv->inflight,
	    "requests", (json_int_t)pv->requests,
	    "answered", (json_int_t)pv->answered,
	    "errors", (json_int_t)pv->errors,
	    "refused", (json_int_t)pv->refused,
	    "rate_limited", (json_int_t)pv->rate_limited,
	    "timeouts", (json_int_t)pv->timeouts,
	    "tokens_in", (json_int_t)pv->tokens_in,
	    "tokens_out", (json_int_t)pv->tokens_out);
	json_object_set_new(o, "budget", json_pack("{s:I, s:I, s:I, s:I}",
	    "requests_per_minute",
	    (json_int_t)pv->lc->budget.requests_per_minute,
	    "tokens_per_day", (json_int_t)pv->lc->budget.tokens_per_day,
	    "tokens_used", (json_int_t)budget_tokens_used(&pv->budget, now),
	    "tokens_reserved",
	    (json_int_t)budget_tokens_reserved(&pv->budget)));
	json_object_set_new(o, "last_error", pv->proc.last_error != NULL ?
	    json_string(pv->proc.last_error) : json_null());
	return (o);
}

json_t *
provider_status_json(void)
{
	json_t	*a = json_array();
	size_t	 i;

	for (i = 0; i < nproviders; i++)
		json_array_append_new(a, provider_json(providers[i]));
	return (a);
}
