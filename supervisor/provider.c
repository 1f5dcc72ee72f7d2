/* SPDX-License-Identifier: ISC */
/*
 * LLM providers: one mcp-llm worker per entry of llm = ( ... ), started,
 * watched and restarted as upstream workers are (exponential backoff,
 * reset after a healthy minute), so that a provider's HTTP calls never run
 * in the supervisor's loop and a worker that dies costs only the requests
 * it held, which fall through their chains.  Budgets and counters live
 * here, and survive worker restarts and reloads that keep the name.
 */
#include "config.h"

#include <sys/wait.h>

#include <errno.h>
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

#define PROVIDER_STOP_GRACE	5	/* seconds before SIGKILL */
#define PROVIDER_FIRST_DELAY	1	/* seconds of backoff, doubling */
#define PROVIDER_MAX_DELAY	60
#define PROVIDER_HEALTHY_MS	60000	/* uptime that resets the backoff */

const char		*llm_worker_path;

static struct provider	**providers;
static size_t		  nproviders;
static struct provider	**retired;	/* removed, worker still exiting */
static size_t		  nretired;

static const char *const state_names[] = {
	[PROVIDER_STARTING] = "starting",
	[PROVIDER_READY] = "ready",
	[PROVIDER_BACKOFF] = "backoff",
	[PROVIDER_STOPPED] = "stopped",
	[PROVIDER_FAILED] = "failed",
};

static void	provider_spawn(struct provider *);
static void	provider_lost(struct provider *, const char *);

/* Record a provider's last error. */
static void __attribute__((format(printf, 2, 3)))
provider_error(struct provider *pv, const char *fmt, ...)
{
	va_list	ap;
	char	*msg;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		fatal("vasprintf");
	va_end(ap);
	free(pv->last_error);
	pv->last_error = msg;
}

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

/* Timer: restart after backoff, or kill a worker that will not stop. */
static void
provider_timer_cb(evutil_socket_t fd, short events, void *arg)
{
	struct provider	*pv = arg;

	if (pv->state == PROVIDER_BACKOFF && pv->pid <= 0) {
		provider_spawn(pv);
		return;
	}
	if (pv->pid > 0) {
		log_warnx("llm %s: worker %ld did not %s, killing it",
		    pv->lc->name, (long)pv->pid, pv->state ==
		    PROVIDER_STARTING && !pv->restart_now ? "start" : "stop");
		if (pv->state == PROVIDER_STARTING && !pv->restart_now)
			provider_error(pv, "its worker did not start");
		kill(pv->pid, SIGKILL);
		provider_lost(pv, "killed");
	}
}

/* Arm the provider's timer. */
static void
provider_arm(struct provider *pv, unsigned int seconds)
{
	struct timeval	tv = { (time_t)seconds, 0 };

	if (pv->timer == NULL)
		pv->timer = evtimer_new(base, provider_timer_cb, pv);
	evtimer_add(pv->timer, &tv);
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
		provider_error(pv, "%s", error);
		log_warnx("llm %s: %s", pv->lc->name, error);
	}
	if (strcmp(state, "ready") == 0 && pv->state == PROVIDER_STARTING) {
		pv->state = PROVIDER_READY;
		pv->ready_at = now_ms();
		if (pv->timer != NULL)
			evtimer_del(pv->timer);
		log_info("llm %s: ready (%s, %s, model %s)", pv->lc->name,
		    conf_llm_provider_name(pv->lc->provider),
		    url_redact(pv->lc->url, url, sizeof url), pv->lc->model);
	}
}

/* One frame from a provider's worker; -1 if the channel is corrupt. */
static int
provider_frame(struct provider *pv, const struct frame_hdr *hdr,
    struct evbuffer *in)
{
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

/* Handle every whole frame buffered; -1 if the channel is corrupt. */
static int
provider_process(struct provider *pv)
{
	struct evbuffer		*in = iochan_input(pv->ch);
	struct frame_hdr	 hdr;
	const char		*why;
	enum frame_result	 r;

	for (;;) {
		r = frame_peek(in, conf_llm_frame_max(pv->lc), &hdr, &why);
		if (r == FRAME_NEED)
			return (0);
		if (r == FRAME_BAD) {
			log_warnx("llm %s: bad frame from worker: %s",
			    pv->lc->name, why);
			return (-1);
		}
		if (pv->removed) {
			evbuffer_drain(in, FRAME_HDR_LEN + hdr.len);
			continue;
		}
		if (provider_frame(pv, &hdr, in) != 0)
			return (-1);
		if (pv->ch == NULL)
			return (0);
	}
}

static void
provider_read_cb(struct iochan *ch, void *arg)
{
	struct provider	*pv = arg;

	if (provider_process(pv) == 0)
		return;
	provider_error(pv, "protocol error on worker channel");
	if (pv->pid > 0)
		kill(pv->pid, SIGKILL);
	provider_lost(pv, "protocol error");
}

static void
provider_event_cb(struct iochan *ch, int what, void *arg)
{
	provider_lost(arg, "worker channel closed");
}

/* The worker is gone or going: its requests fall through their chains. */
static void
provider_lost(struct provider *pv, const char *why)
{
	char	msg[256];

	if (pv->ch == NULL)
		return;
	/* Its last words first: a result it sent before it died counts. */
	evbuffer_read(iochan_input(pv->ch), iochan_fd(pv->ch), 65536);
	provider_process(pv);
	if (pv->ch == NULL)
		return;
	iochan_free(pv->ch);
	pv->ch = NULL;
	log_debug("llm %s: %s", pv->lc->name, why);
	snprintf(msg, sizeof msg, "the worker of llm %s exited",
	    pv->lc->name);
	sampling_provider_down(pv, msg);
	if (pv->pid > 0)
		kill(pv->pid, SIGKILL);
}

/* Fork and exec the provider's worker and send its configuration. */
static void
provider_spawn(struct provider *pv)
{
	char	*argv[8], err[256], *key[2];
	int	 argc = 0, fd;
	json_t	*cfg, *llm, *keys;

	argv[argc++] = (char *)"mcp-llm";
	if (log_getforeground())
		argv[argc++] = (char *)"-d";
	if (log_getverbose() > 0)
		argv[argc++] = (char *)"-v";
	argv[argc++] = pv->lc->name;
	argv[argc] = NULL;
	if ((pv->pid = spawn_worker(llm_worker_path, argv, 1, &fd, err,
	    sizeof err)) == -1) {
		log_warnx("llm %s: %s", pv->lc->name, err);
		provider_error(pv, "%s", err);
		pv->state = PROVIDER_BACKOFF;
		provider_arm(pv, pv->delay);
		return;
	}
	pv->state = PROVIDER_STARTING;
	pv->ready_at = 0;
	pv->ch = iochan_new(base, fd, provider_read_cb, NULL,
	    provider_event_cb, pv);
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
	frame_add_json(iochan_output(pv->ch), MSG_CONFIG, 0, 0, cfg);
	json_decref(cfg);
	provider_arm(pv, 30);
	log_debug("llm %s: worker %ld started", pv->lc->name, (long)pv->pid);
}

/* Make a provider from its configuration and start its worker. */
static struct provider *
provider_new(const struct llm_conf *lc)
{
	struct provider	*pv;

	pv = xcalloc(1, sizeof *pv);
	pv->lc = conf_llm_copy(lc);
	pv->pid = -1;
	pv->delay = PROVIDER_FIRST_DELAY;
	budget_init(&pv->budget);
	provider_spawn(pv);
	return (pv);
}

static void
provider_free(struct provider *pv)
{
	if (pv->timer != NULL)
		event_free(pv->timer);
	if (pv->ch != NULL)
		iochan_free(pv->ch);
	free(pv->last_error);
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

/* Ask a worker to stop: SHUTDOWN, and SIGKILL after the grace time. */
static void
provider_shutdown(struct provider *pv)
{
	if (pv->pid <= 0)
		return;
	if (pv->ch != NULL)
		frame_add(iochan_output(pv->ch), MSG_SHUTDOWN, 0, 0, "{}", 2);
	else
		kill(pv->pid, SIGTERM);
	provider_arm(pv, PROVIDER_STOP_GRACE);
}

void
provider_stop_all(void)
{
	size_t	i;

	for (i = 0; i < nproviders; i++) {
		providers[i]->state = PROVIDER_STOPPED;
		provider_shutdown(providers[i]);
	}
}

int
provider_all_stopped(void)
{
	size_t	i;

	for (i = 0; i < nproviders; i++) {
		if (providers[i]->pid > 0)
			return (0);
	}
	return (nretired == 0);
}

/* Free the removed providers whose workers are gone. */
static void
provider_free_retired(void)
{
	size_t	i, n = 0;

	for (i = 0; i < nretired; i++) {
		if (retired[i]->pid > 0)
			retired[n++] = retired[i];
		else
			provider_free(retired[i]);
	}
	nretired = n;
}

/* A provider's worker exited: restart it after its backoff. */
static void
provider_exited(struct provider *pv, int status)
{
	char	how[64];

	if (WIFEXITED(status))
		snprintf(how, sizeof how, "exited with status %d",
		    WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(how, sizeof how, "killed by signal %d",
		    WTERMSIG(status));
	else
		snprintf(how, sizeof how, "ended");
	provider_lost(pv, how);
	pv->pid = -1;
	if (pv->timer != NULL)
		evtimer_del(pv->timer);
	if (pv->removed) {
		log_info("llm %s: worker %s; removed", pv->lc->name, how);
		provider_free_retired();
		return;
	}
	if (pv->restart_now) {
		pv->restart_now = 0;
		provider_spawn(pv);
		return;
	}
	if (pv->state == PROVIDER_STOPPED)
		return;
	if (WIFEXITED(status) && WEXITSTATUS(status) == WORKER_EXIT_CONFIG) {
		log_warnx("llm %s: worker %s: configuration refused, not "
		    "restarting (%s)", pv->lc->name, how,
		    pv->last_error != NULL ? pv->last_error : "");
		pv->state = PROVIDER_FAILED;
		return;
	}
	if (pv->ready_at > 0 && now_ms() - pv->ready_at >= PROVIDER_HEALTHY_MS)
		pv->delay = PROVIDER_FIRST_DELAY;
	provider_error(pv, "worker %s", how);
	pv->restarts++;
	pv->state = PROVIDER_BACKOFF;
	log_warnx("llm %s: worker %s; restarting in %u s", pv->lc->name, how,
	    pv->delay);
	provider_arm(pv, pv->delay);
	pv->delay = pv->delay * 2 > PROVIDER_MAX_DELAY ? PROVIDER_MAX_DELAY :
	    pv->delay * 2;
}

int
provider_reaped(pid_t pid, int status)
{
	size_t	i;

	for (i = 0; i < nproviders; i++) {
		if (providers[i]->pid == pid) {
			provider_exited(providers[i], status);
			return (1);
		}
	}
	for (i = 0; i < nretired; i++) {
		if (retired[i]->pid == pid) {
			provider_exited(retired[i], status);
			return (1);
		}
	}
	return (0);
}

/* Append a name to one of the report's arrays. */
static void
report_name(json_t *report, const char *key, const char *name)
{
	json_t	*a;

	if ((a = json_object_get(report, key)) == NULL) {
		a = json_array();
		json_object_set_new(report, key, a);
	}
	json_array_append_new(a, json_string(name));
}

void
provider_apply(const struct conf *nc, json_t *report)
{
	struct provider	**next, *pv;
	size_t		  i, j;
	char		  msg[256];

	next = xcalloc(nc->nllms + 1, sizeof *next);
	for (i = 0; i < nc->nllms; i++) {
		if ((pv = provider_find(nc->llms[i].name)) == NULL) {
			log_info("llm %s: added", nc->llms[i].name);
			next[i] = provider_new(&nc->llms[i]);
			report_name(report, "llm_added", nc->llms[i].name);
			continue;
		}
		next[i] = pv;
		if (conf_llm_equal(pv->lc, &nc->llms[i])) {
			/* A reload is the way to try a failed one again. */
			if (pv->state == PROVIDER_FAILED && pv->pid <= 0) {
				log_info("llm %s: starting again", pv->lc->name);
				pv->delay = PROVIDER_FIRST_DELAY;
				provider_spawn(pv);
			}
			continue;
		}
		log_info("llm %s: configuration changed, restarting",
		    pv->lc->name);
		report_name(report, "llm_changed", pv->lc->name);
		conf_llm_free(pv->lc);
		free(pv->lc);
		pv->lc = conf_llm_copy(&nc->llms[i]);
		pv->delay = PROVIDER_FIRST_DELAY;
		if (pv->timer != NULL)
			evtimer_del(pv->timer);
		if (pv->pid > 0) {
			pv->restart_now = 1;
			pv->state = PROVIDER_STARTING;
			snprintf(msg, sizeof msg, "llm %s is restarting with "
			    "a new configuration", pv->lc->name);
			sampling_provider_down(pv, msg);
			provider_shutdown(pv);
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
		report_name(report, "llm_removed", pv->lc->name);
		pv->removed = 1;
		pv->state = PROVIDER_STOPPED;
		snprintf(msg, sizeof msg, "llm %s was removed from the "
		    "configuration", pv->lc->name);
		sampling_provider_down(pv, msg);
		if (pv->timer != NULL)
			evtimer_del(pv->timer);
		provider_shutdown(pv);
		retired = xreallocarray(retired, nretired + 1,
		    sizeof *retired);
		retired[nretired++] = pv;
	}
	free(providers);
	providers = next;
	nproviders = nc->nllms;
	provider_free_retired();
}

int
provider_request(struct provider *pv, uint32_t tag, struct evbuffer *payload,
    char *why, size_t len)
{
	if (pv->state != PROVIDER_READY || pv->ch == NULL) {
		if (pv->last_error != NULL)
			snprintf(why, len, "llm %s is %s (last error: %s)",
			    pv->lc->name, state_names[pv->state],
			    pv->last_error);
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
	frame_add_buffer(iochan_output(pv->ch), MSG_LLM_REQUEST, 0, tag,
	    payload);
	pv->inflight++;
	pv->requests++;
	return (0);
}

void
provider_cancel(struct provider *pv, uint32_t tag)
{
	if (pv->ch != NULL)
		frame_add(iochan_output(pv->ch), MSG_LLM_CANCEL, 0, tag, "{}",
		    2);
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
	    "pid", (json_int_t)pv->pid,
	    "restarts", (int)pv->restarts,
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
	json_object_set_new(o, "last_error", pv->last_error != NULL ?
	    json_string(pv->last_error) : json_null());
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
