/* SPDX-License-Identifier: ISC */
/*
 * An upstream's sampling/createMessage, answered by its chain of links,
 * tried in order until one answers:
 *
 *	client			the client whose call caused it (route_up.c)
 *	llm:NAME		a provider, through its worker (provider.c)
 *	tool:UPSTREAM/TOOL	another upstream's tool taking
 *				{messages, systemPrompt, maxTokens}
 *	decline			the specification's "User rejected" error
 *
 * A link that cannot serve (no capability, unknown origin, a provider's
 * error or timeout, a refused content type, a spent budget) passes to the
 * next, and says why at debug; at the end of the chain the upstream gets
 * an error with the last reason.  Each request is a job from its arrival
 * to its answer, and ends with one audit line: the upstream, the session,
 * the link that answered, the provider, the model, the tokens, the
 * latency and the outcome, the prompt only if the upstream's log_prompts
 * is set.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "log.h"
#include "supervisor.h"
#include "xmalloc.h"

#define SAMPLING_MAX_JOBS	4096	/* requests in the chain at once */
#define SAMPLING_MAX_JOBS_UP	1024	/* of them, one upstream's */
#define SAMPLING_GRACE		10	/* seconds beyond a provider's timeout */
#define SAMPLING_PROMPT_MAX	1000	/* bytes of prompt in an audit line */
#define SAMPLING_TRIED_MAX	600	/* bytes of reasons in an audit line */
#define SAMPLING_LINE_MAX	2000	/* an audit line, within log.c's */

/* One sampling request, from its arrival to its answer. */
struct sjob {
	uint32_t		 no;		/* the provider worker's tag */
	struct upstream		*up;
	uint32_t		 session;	/* its session, 0 if unknown */
	uint32_t		 call_tag;	/* the call it came with, or 0 */
	uint32_t		 ref;		/* the upstream worker's number */
	char			*text;		/* the request, id = ref */
	size_t			 len;
	size_t			 link;		/* the link running */
	int64_t			 started;
	struct provider		*prov;		/* an llm: link's, running */
	struct pending		*call;		/* a tool: link's, running */
	struct event		*timer;		/* an llm: link's deadline */
	uint64_t		 reserved;	/* tokens, of prov's and up's
						   budgets, while prov is set */
	uint64_t		 in;		/* tokens, as the provider said */
	uint64_t		 out;
	char			*model;		/* that really answered */
	struct evbuffer		*tried;		/* "link: why; ..." */
	int			 has_token;	/* params._meta.progressToken */
	struct jspan		 token;		/* its span in text */
	int64_t			 progress;	/* the last sent, increasing */
	int64_t			 progress_base;	/* at the link's start */
	TAILQ_ENTRY(sjob)	 entry;
};

static TAILQ_HEAD(, sjob)	 jobs = TAILQ_HEAD_INITIALIZER(jobs);
static struct u64map		 jobs_by_no;	/* no -> job */
static unsigned int		 njobs;
static uint32_t			 next_no;

static void	job_continue(struct sjob *, const char *why, int code);
static void	job_release(struct sjob *, int spent);

/* A link as written, e.g. "llm:claude". */
static void
link_text(const struct upstream *up, size_t i, char *buf, size_t len)
{
	if (i >= up->sc->nsampling) {
		snprintf(buf, len, "-");
		return;
	}
	conf_strategy_text(up->sc->sampling[i], up->sc->sampling_target[i],
	    buf, len);
}

/* A link's reason as the upstream sees it: "llm:gpt: HTTP 429 ...". */
static void
link_reason(const struct upstream *up, size_t i, const char *why, char *buf,
    size_t len)
{
	char	text[256];

	if (i < up->sc->nsampling && (up->sc->sampling[i] == STRATEGY_LLM ||
	    up->sc->sampling[i] == STRATEGY_TOOL)) {
		link_text(up, i, text, sizeof text);
		snprintf(buf, len, "%s: %s", text, why);
	} else
		snprintf(buf, len, "%s", why);
}

/* Find a request's job. */
static struct sjob *
job_find(struct upstream *up, uint32_t ref)
{
	return (u64map_get(&up->sampling_refs, ref));
}

/* Find a job by its number. */
static struct sjob *
job_by_no(uint32_t no)
{
	return (u64map_get(&jobs_by_no, no));
}

static const char *const progress_token[] = { "_meta", "progressToken",
    NULL };

/* Make a job for a new request. */
static struct sjob *
job_new(struct upstream *up, uint32_t session, uint32_t call_tag,
    const struct jrpc *m, uint32_t ref)
{
	struct sjob	*j;

	j = xcalloc(1, sizeof *j);
	do {
		if (++next_no == 0)
			next_no = 1;
	} while (job_by_no(next_no) != NULL);
	j->no = next_no;
	j->up = up;
	j->session = session;
	j->call_tag = call_tag;
	j->ref = ref;
	j->len = m->n;
	j->text = xmalloc(m->n);
	memcpy(j->text, m->p, m->n);
	/* Found once: progress comes several times a second. */
	j->has_token = jscan_path(m->p, m->params, progress_token,
	    &j->token) == 0;
	j->started = now_ms();
	j->tried = evbuffer_new();
	TAILQ_INSERT_TAIL(&jobs, j, entry);
	u64map_put(&jobs_by_no, j->no, j);
	u64map_put(&up->sampling_refs, ref, j);
	njobs++;
	up->sampling_jobs++;
	return (j);
}

/* Free a job, stopping the link it runs (no answer is sent). */
static void
job_free(struct sjob *j)
{
	if (j->prov != NULL) {
		provider_cancel(j->prov, j->no);
		job_release(j, 1);
	}
	if (j->call != NULL)
		route_call_abandon(j->call);
	if (j->timer != NULL)
		event_free(j->timer);
	TAILQ_REMOVE(&jobs, j, entry);
	u64map_del(&jobs_by_no, j->no);
	if (u64map_get(&j->up->sampling_refs, j->ref) == j)
		u64map_del(&j->up->sampling_refs, j->ref);
	njobs--;
	j->up->sampling_jobs--;
	evbuffer_free(j->tried);
	free(j->model);
	free(j->text);
	free(j);
}

/* Note why a link could not serve, for the log and the audit line. */
static void
job_tried(struct sjob *j, size_t link, const char *why)
{
	char	text[256];

	link_text(j->up, link, text, sizeof text);
	log_debug("upstream %s: sampling %u: link %s cannot serve: %s",
	    j->up->sc->name, j->ref, text, why);
	if (evbuffer_get_length(j->tried) > SAMPLING_TRIED_MAX)
		return;
	evbuffer_add_printf(j->tried, "%s%s: %s",
	    evbuffer_get_length(j->tried) > 0 ? "; " : "", text, why);
}

/* The prompt as text for the audit line: system, then each message. */
static void
audit_prompt(struct sjob *j, struct evbuffer *out)
{
	struct jrpc	 m;
	const char	*why, *role, *text;
	json_t		*params, *msg, *c, *blocks;
	struct evbuffer	*p = evbuffer_new();
	size_t		 i, k, len;

	if (jrpc_scan(j->text, j->len, &m, &why) == 0 &&
	    (params = json_loadb(m.p + m.params.off, m.params.len, 0,
	    NULL)) != NULL) {
		if ((text = json_string_value(json_object_get(params,
		    "systemPrompt"))) != NULL)
			evbuffer_add_printf(p, "[system] %s", text);
		json_array_foreach(json_object_get(params, "messages"), i,
		    msg) {
			role = json_string_value(json_object_get(msg, "role"));
			c = json_object_get(msg, "content");
			blocks = json_is_array(c) ? json_incref(c) :
			    json_pack("[O]", c);
			json_array_foreach(blocks, k, c) {
				if ((text = json_string_value(json_object_get(c,
				    "text"))) != NULL)
					evbuffer_add_printf(p, "%s[%s] %s",
					    evbuffer_get_length(p) > 0 ? " " :
					    "", role != NULL ? role : "?",
					    text);
			}
			json_decref(blocks);
		}
		json_decref(params);
	}
	len = evbuffer_get_length(p);
	if (len > SAMPLING_PROMPT_MAX) {
		jscan_add_string(out, (const char *)evbuffer_pullup(p,
		    SAMPLING_PROMPT_MAX), SAMPLING_PROMPT_MAX);
		evbuffer_add_printf(out, "(+%zu bytes)", len -
		    SAMPLING_PROMPT_MAX);
	} else
		jscan_add_string(out, (const char *)evbuffer_pullup(p, -1),
		    len);
	evbuffer_free(p);
}

/* Write the request's audit line. */
static void
audit(struct sjob *j, const char *link, const char *provider,
    const char *outcome, const char *why)
{
	struct evbuffer	*b = evbuffer_new();
	struct session	*s;
	char		*line;

	metrics_sampling(j->up, link, outcome);
	s = j->session != 0 ? session_by_no(j->session) : NULL;
	evbuffer_add_printf(b, "sampling upstream=%s session=%.8s link=%s "
	    "provider=%s model=", j->up->sc->name, s != NULL ? s->id : "-",
	    link, provider != NULL ? provider : "-");
	jscan_add_string(b, j->model != NULL ? j->model : "-",
	    j->model != NULL ? strlen(j->model) : 1);
	evbuffer_add_printf(b, " tokens_in=%" PRIu64 " tokens_out=%" PRIu64
	    " latency_ms=%lld outcome=%s", j->in, j->out,
	    (long long)(now_ms() - j->started), outcome);
	if (why != NULL && *why != '\0') {
		evbuffer_add_printf(b, " reason=");
		jscan_add_string(b, why, strlen(why) > 300 ? 300 : strlen(why));
	}
	if (evbuffer_get_length(j->tried) > 0) {
		evbuffer_add_printf(b, " tried=");
		jscan_add_string(b, (const char *)evbuffer_pullup(j->tried, -1),
		    evbuffer_get_length(j->tried));
	}
	if (j->up->sc->log_prompts) {
		evbuffer_add_printf(b, " prompt=");
		audit_prompt(j, b);
	}
	/* Escaping can make it long: cut, and say so. */
	if (evbuffer_get_length(b) > SAMPLING_LINE_MAX) {
		line = (char *)evbuffer_pullup(b, SAMPLING_LINE_MAX);
		log_audit("%.*s (cut)", SAMPLING_LINE_MAX - 10, line);
	} else {
		evbuffer_add(b, "", 1);
		log_audit("%s", (const char *)evbuffer_pullup(b, -1));
	}
	evbuffer_free(b);
}

/*
 * Answer the upstream with a result (text), end the job; one larger than
 * the upstream's max_message (its worker would refuse the frame and stop)
 * passes to the next link instead.
 */
static void
job_answer(struct sjob *j, struct evbuffer *result, const char *link,
    const char *provider)
{
	struct evbuffer	*buf;

	if (evbuffer_get_length(result) > j->up->sc->max_message) {
		job_continue(j, "the answer is larger than the upstream's "
		    "max_message", JRPC_INTERNAL_ERROR);
		return;
	}
	buf = evbuffer_new();
	evbuffer_add_printf(buf, "{\"jsonrpc\":\"2.0\",\"id\":%u,\"result\":",
	    j->ref);
	evbuffer_add_buffer(buf, result);
	evbuffer_add(buf, "}", 1);
	upstream_send_buffer(j->up, MSG_UP_RESPONSE, j->session, j->ref, buf);
	evbuffer_free(buf);
	audit(j, link, provider, "ok", NULL);
	job_free(j);
}

/* Does the request carry something at params path? */
static int
request_has(struct sjob *j, const char *const *path, struct jspan *at)
{
	struct jrpc	 m;
	const char	*why;

	return (jrpc_scan(j->text, j->len, &m, &why) == 0 &&
	    jscan_path(m.p, m.params, path, at) == 0);
}

/* An llm: link's deadline passed. */
static void
llm_timeout_cb(evutil_socket_t fd, short events, void *arg)
{
	struct sjob	*j = arg;
	struct provider	*pv = j->prov;
	char		 why[256];

	snprintf(why, sizeof why, "no answer from its worker within %u s",
	    pv->lc->timeout + SAMPLING_GRACE);
	log_warnx("upstream %s: sampling: llm %s: %s", j->up->sc->name,
	    pv->lc->name, why);
	provider_cancel(pv, j->no);
	job_release(j, 1);
	pv->errors++;
	pv->timeouts++;
	job_continue(j, why, MCP_REQUEST_TIMEOUT);
}

/*
 * The tokens a request reserves of the budgets while a provider has it:
 * its maxTokens, which bounds the answer, and an estimate of its prompt,
 * a token per 4 bytes of its params (images and audio included, which
 * vendors charge less).  -1 with why if maxTokens is not a positive
 * integer given once (the worker would read another, or refuse it).
 */
static int
llm_reservation(const struct jrpc *m, uint64_t *tokens, char *why,
    size_t len)
{
	struct jspan	at;
	int64_t		max;
	int		r;

	if ((r = jscan_member_unique(m->p, m->params, "maxTokens", &at)) ==
	    -2) {
		snprintf(why, len, "maxTokens is given more than once");
		return (-1);
	}
	if (r != 0 || jscan_type(m->p, at) != JT_NUMBER ||
	    jscan_int64(m->p, at, &max) != 0 || max < 1) {
		snprintf(why, len, "maxTokens must be a positive integer");
		return (-1);
	}
	*tokens = (uint64_t)max + (m->params.len + 3) / 4;
	return (0);
}

/*
 * A job's llm: link let go of its provider: settle the budgets to the
 * tokens the provider reported, else to the whole reservation if the
 * provider may have worked on the request (spent), else to nothing.
 */
static void
job_release(struct sjob *j, int spent)
{
	struct provider	*pv = j->prov;
	uint64_t	 used;
	int64_t		 now = now_ms();

	if (j->in > 0 || j->out > 0)
		used = j->in + j->out;
	else
		used = spent ? j->reserved : 0;
	budget_settle(&pv->budget, j->reserved, used, now);
	budget_settle(&j->up->budget, j->reserved, used, now);
	if (j->in == 0 && j->out == 0 && spent)
		log_debug("upstream %s: sampling %u: llm %s: charged the "
		    "%" PRIu64 " tokens reserved", j->up->sc->name, j->ref,
		    pv->lc->name, used);
	pv->inflight--;
	j->prov = NULL;
	j->reserved = 0;
}

/* Start an llm: link; -1 with why if it cannot serve now. */
static int
link_llm(struct sjob *j, const struct jrpc *m, const char *name, char *why,
    size_t len, int *code)
{
	static const char *const token[] = { "_meta", "progressToken", NULL };
	struct provider	*pv;
	struct evbuffer	*payload;
	struct jspan	 at;
	struct timeval	 tv;
	int64_t		 now = now_ms();
	uint64_t	 tokens;
	char		 b[200];

	*code = JRPC_INTERNAL_ERROR;
	if ((pv = provider_find(name)) == NULL) {
		snprintf(why, len, "no llm provider is named %s", name);
		return (-1);
	}
	if (m->params.len + 64 > CONF_LLM_MAX_REQUEST) {
		snprintf(why, len, "the request is over the %d bytes a "
		    "provider takes", CONF_LLM_MAX_REQUEST);
		return (-1);
	}
	if (llm_reservation(m, &tokens, why, len) != 0) {
		pv->refused++;
		*code = JRPC_INVALID_PARAMS;
		return (-1);
	}
	if (budget_check(&pv->budget, &pv->lc->budget, now, tokens, b,
	    sizeof b) != 0) {
		pv->refused++;
		snprintf(why, len, "the budget of llm %s is spent (%s)", name, b);
		*code = MCP_OVERLOADED;
		return (-1);
	}
	if (budget_check(&j->up->budget, &j->up->sc->budget, now, tokens, b,
	    sizeof b) != 0) {
		pv->refused++;
		snprintf(why, len, "the sampling budget of upstream %s is spent "
		    "(%s)", j->up->sc->name, b);
		*code = MCP_OVERLOADED;
		return (-1);
	}
	payload = evbuffer_new();
	evbuffer_add_printf(payload, "{\"progress\":%s,\"params\":",
	    request_has(j, token, &at) ? "true" : "false");
	evbuffer_add(payload, m->p + m->params.off, m->params.len);
	evbuffer_add(payload, "}", 1);
	if (provider_request(pv, j->no, payload, why, len) != 0) {
		pv->refused++;
		evbuffer_free(payload);
		return (-1);
	}
	evbuffer_free(payload);
	budget_take(&pv->budget, &pv->lc->budget, now, tokens);
	budget_take(&j->up->budget, &j->up->sc->budget, now, tokens);
	j->prov = pv;
	j->reserved = tokens;
	j->in = j->out = 0;
	j->progress_base = j->progress;
	if (j->timer == NULL)
		j->timer = evtimer_new(base, llm_timeout_cb, j);
	tv.tv_sec = pv->lc->timeout + SAMPLING_GRACE;
	tv.tv_usec = 0;
	evtimer_add(j->timer, &tv);
	log_debug("upstream %s: sampling %u: to llm %s", j->up->sc->name,
	    j->ref, name);
	return (0);
}

/* Tell the upstream how far an answer is, if it gave a progress token. */
static void
llm_progress(struct sjob *j, json_t *msg)
{
	struct evbuffer	*buf;
	json_int_t	 pieces;

	/* Counted on from the links before: progress only increases. */
	if (!j->has_token || json_unpack(msg, "{s:I}", "pieces", &pieces) !=
	    0 || pieces <= 0 || pieces > INT32_MAX ||
	    j->progress_base + pieces <= j->progress)
		return;
	j->progress = j->progress_base + pieces;
	buf = evbuffer_new();
	evbuffer_add_printf(buf, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/progress\",\"params\":{\"progressToken\":");
	evbuffer_add(buf, j->text + j->token.off, j->token.len);
	evbuffer_add_printf(buf, ",\"progress\":%lld,\"message\":\"llm %s: "
	    "%lld pieces received\"}}", (long long)j->progress,
	    j->prov->lc->name, (long long)pieces);
	upstream_send_buffer(j->up, MSG_UP_NOTIFY, j->session, j->ref, buf);
	evbuffer_free(buf);
}

void
sampling_llm_frame(struct provider *pv, const struct frame_hdr *hdr,
    struct evbuffer *in)
{
	struct sjob	*j = job_by_no(hdr->tag);
	struct evbuffer	*payload;
	json_t		*msg;
	const char	*why, *outcome = "", *text = "";
	json_int_t	 in_tokens = 0, out_tokens = 0;
	char		 link[256], reason[768];
	int		 code = JRPC_INTERNAL_ERROR, spent = 1;

	if (j == NULL || j->prov != pv) {
		log_debug("llm %s: %s for a request no longer waiting",
		    pv->lc->name, msg_type_name(hdr->type));
		evbuffer_drain(in, FRAME_HDR_LEN + hdr->len);
		return;
	}
	if (hdr->type == MSG_LLM_RESULT) {
		payload = route_payload(hdr, in);
		evtimer_del(j->timer);
		job_release(j, 1);
		pv->answered++;
		pv->tokens_in += j->in;
		pv->tokens_out += j->out;
		link_text(j->up, j->link, link, sizeof link);
		job_answer(j, payload, link,
		    conf_llm_provider_name(pv->lc->provider));
		evbuffer_free(payload);
		return;
	}
	if ((msg = frame_take_json(in, hdr, &why)) == NULL) {
		log_warnx("llm %s: %s frame: %s", pv->lc->name,
		    msg_type_name(hdr->type), why);
		return;
	}
	switch (hdr->type) {
	case MSG_LLM_PROGRESS:
		llm_progress(j, msg);
		break;
	case MSG_LLM_USAGE:
		json_unpack(msg, "{s?I, s?I, s?s}", "input", &in_tokens,
		    "output", &out_tokens, "model", &text);
		j->in = in_tokens > 0 ? (uint64_t)in_tokens : 0;
		j->out = out_tokens > 0 ? (uint64_t)out_tokens : 0;
		free(j->model);
		j->model = text[0] != '\0' ? xstrdup(text) : NULL;
		break;
	case MSG_LLM_FAIL:
		json_unpack(msg, "{s?s, s?s, s?b}", "outcome", &outcome,
		    "message", &text, "spent", &spent);
		evtimer_del(j->timer);
		job_release(j, spent);
		pv->errors++;
		if (strcmp(outcome, "rate-limited") == 0)
			pv->rate_limited++;
		else if (strcmp(outcome, "timeout") == 0) {
			pv->timeouts++;
			code = MCP_REQUEST_TIMEOUT;
		}
		snprintf(reason, sizeof reason, "%s (%s)", text, outcome);
		json_decref(msg);
		job_continue(j, reason, code);
		return;
	}
	json_decref(msg);
}

void
sampling_provider_down(struct provider *pv, const char *why)
{
	struct sjob	*j, *next;

	for (j = TAILQ_FIRST(&jobs); j != NULL; j = next) {
		next = TAILQ_NEXT(j, entry);
		if (j->prov != pv)
			continue;
		evtimer_del(j->timer);
		job_release(j, 1);
		pv->errors++;
		job_continue(j, why, MCP_CONNECTION_CLOSED);
	}
}

/* The text of a tool's result, its blocks joined; NULL if it has none. */
static char *
tool_text(const json_t *result)
{
	struct evbuffer	*b = evbuffer_new();
	json_t		*c;
	const char	*t;
	size_t		 i, len;
	char		*s = NULL;

	json_array_foreach(json_object_get(result, "content"), i, c) {
		if ((t = json_string_value(json_object_get(c, "text"))) ==
		    NULL)
			continue;
		if (evbuffer_get_length(b) > 0)
			evbuffer_add(b, "\n", 1);
		evbuffer_add(b, t, json_string_length(json_object_get(c,
		    "text")));
	}
	if ((len = evbuffer_get_length(b)) > 0) {
		s = xmalloc(len + 1);
		evbuffer_remove(b, s, len);
		s[len] = '\0';
	}
	evbuffer_free(b);
	return (s);
}

/* A tool: link's call was answered. */
static void
tool_done(struct pending *p, const struct jrpc *a, int code,
    const char *error, void *arg)
{
	struct sjob	*j = arg;
	json_t		*res, *sc, *out;
	const char	*model, *stop;
	char		 link[256], why[768], *text, *dump;
	struct evbuffer	*b;

	j->call = NULL;
	link_text(j->up, j->link, link, sizeof link);
	if (a == NULL) {
		job_continue(j, error, code);
		return;
	}
	if (a->kind != JRPC_RESULT || (res = json_loadb(a->p + a->result.off,
	    a->result.len, 0, NULL)) == NULL) {
		job_continue(j, "the tool call failed with an error",
		    JRPC_INTERNAL_ERROR);
		return;
	}
	text = tool_text(res);
	if (json_is_true(json_object_get(res, "isError")) || text == NULL) {
		snprintf(why, sizeof why, "%.300s", text != NULL ? text :
		    "the tool returned no text");
		free(text);
		json_decref(res);
		job_continue(j, why, JRPC_INTERNAL_ERROR);
		return;
	}
	sc = json_object_get(res, "structuredContent");
	model = json_string_value(json_object_get(sc, "model"));
	stop = json_string_value(json_object_get(sc, "stopReason"));
	free(j->model);
	j->model = xstrdup(model != NULL ? model : link);
	out = json_pack("{s:s, s:{s:s, s:s}, s:s, s:s}", "role", "assistant",
	    "content", "type", "text", "text", text, "model", j->model,
	    "stopReason", stop != NULL ? stop : "endTurn");
	free(text);
	json_decref(res);
	dump = out != NULL ? json_dumps(out, JSON_COMPACT) : NULL;
	json_decref(out);
	if (dump == NULL) {
		job_continue(j, "its answer cannot be encoded",
		    JRPC_INTERNAL_ERROR);
		return;
	}
	b = evbuffer_new();
	evbuffer_add(b, dump, strlen(dump));
	free(dump);
	job_answer(j, b, link, NULL);
	evbuffer_free(b);
}

/* Start a tool: link; -1 with why if it cannot serve now. */
static int
link_tool(struct sjob *j, const struct jrpc *m, const char *target,
    char *why, size_t len, int *code)
{
	static const char *const tools[] = { "tools", NULL };
	struct upstream	*tup;
	struct evbuffer	*params;
	struct jspan	 at;
	const char	*slash = strchr(target, '/');
	char		 upname[64];

	*code = JRPC_INTERNAL_ERROR;
	if (request_has(j, tools, &at) && jscan_type(j->text, at) == JT_ARRAY &&
	    at.len > 2) {
		snprintf(why, len, "a tool: link does not take tools");
		return (-1);
	}
	snprintf(upname, sizeof upname, "%.*s", (int)(slash - target), target);
	if ((tup = upstream_find(upname)) == NULL) {
		snprintf(why, len, "no upstream is named %s", upname);
		return (-1);
	}
	params = evbuffer_new();
	evbuffer_add_printf(params, "{\"name\":");
	jscan_add_string(params, slash + 1, strlen(slash + 1));
	evbuffer_add_printf(params, ",\"arguments\":{\"messages\":");
	if (jscan_member(m->p, m->params, "messages", &at) == 0)
		evbuffer_add(params, m->p + at.off, at.len);
	else
		evbuffer_add(params, "[]", 2);
	if (jscan_member(m->p, m->params, "maxTokens", &at) == 0) {
		evbuffer_add_printf(params, ",\"maxTokens\":");
		evbuffer_add(params, m->p + at.off, at.len);
	}
	if (jscan_member(m->p, m->params, "systemPrompt", &at) == 0) {
		evbuffer_add_printf(params, ",\"systemPrompt\":");
		evbuffer_add(params, m->p + at.off, at.len);
	}
	evbuffer_add(params, "}}", 2);
	j->call = route_call(tup, MCPM_TOOLS_CALL, params, tool_done, j, why,
	    len);
	evbuffer_free(params);
	if (j->call == NULL)
		return (-1);
	log_debug("upstream %s: sampling %u: to tool %s", j->up->sc->name,
	    j->ref, target);
	return (0);
}

void
sampling_chain(const struct up_ask *a, size_t from, const char *already,
    int already_code)
{
	struct upstream		*up = a->up;
	struct session		*s = a->session;
	const struct jrpc	*m = a->m;
	struct sjob		*j;
	char			 why[768], reason[1024], link[256];
	int			 code = already_code != 0 ? already_code :
				    JRPC_METHOD_NOT_FOUND;
	size_t			 i, last = from > 0 ? from - 1 : 0;

	snprintf(why, sizeof why, "%s", already != NULL ? already : "");
	if ((j = job_find(up, a->ref)) == NULL) {
		/* One upstream cannot take every place. */
		if (njobs >= SAMPLING_MAX_JOBS ||
		    up->sampling_jobs >= SAMPLING_MAX_JOBS_UP) {
			log_warnx("upstream %s: sampling refused: %u requests "
			    "are in chains, %u of them its", up->sc->name,
			    njobs, up->sampling_jobs);
			route_up_error(up, a->session_no, a->ref,
			    MCP_OVERLOADED, "too many sampling requests in "
			    "flight at the gateway");
			return;
		}
		j = job_new(up, a->session_no, a->tag, m, a->ref);
	}
	if (from > 0 && why[0] != '\0')
		job_tried(j, from - 1, why);
	for (i = from; i < up->sc->nsampling; i++) {
		j->link = i;
		switch (up->sc->sampling[i]) {
		case STRATEGY_CLIENT:
			/* A 2026-07-28 client is asked by input_required. */
			if (s != NULL && s->modern) {
				if (continuation_park(a, why, sizeof why,
				    &code) == 0)
					return;
				break;
			}
			if (route_up_client(a, i, why, sizeof why, &code) == 0)
				return;
			break;
		case STRATEGY_LLM:
			if (link_llm(j, m, up->sc->sampling_target[i], why,
			    sizeof why, &code) == 0)
				return;
			break;
		case STRATEGY_TOOL:
			if (link_tool(j, m, up->sc->sampling_target[i], why,
			    sizeof why, &code) == 0)
				return;
			break;
		case STRATEGY_DECLINE:
			if (why[0] != '\0')
				link_reason(up, last, why, reason,
				    sizeof reason);
			else
				snprintf(reason, sizeof reason, "declined by "
				    "the gateway");
			log_info("upstream %s: sampling/createMessage declined "
			    "by the gateway: %s", up->sc->name, reason);
			route_up_reject_sampling(up, a->session_no, a->ref,
			    reason);
			audit(j, "decline", NULL, "declined", reason);
			job_free(j);
			return;
		default:
			snprintf(why, sizeof why, "not a sampling strategy");
			break;
		}
		job_tried(j, i, why);
		last = i;
	}
	if (why[0] == '\0')
		snprintf(reason, sizeof reason, "no strategy can answer it");
	else
		link_reason(up, last, why, reason, sizeof reason);
	link_text(up, up->sc->nsampling, link, sizeof link);
	log_info("upstream %s: sampling/createMessage%s%s refused: %s",
	    up->sc->name, s != NULL ? " for session " : "",
	    s != NULL ? s->id : "", reason);
	audit(j, link, NULL, "error", reason);
	/* A 2026-07-28 client that lacks the capability gets -32021. */
	if (s != NULL && s->modern && code == MCP_MISSING_CAPABILITY)
		continuation_missing(a, reason);
	else
		route_up_error(up, a->session_no, a->ref, code, reason);
	job_free(j);	/* m may be its text */
}

/* An asynchronous link could not serve: go on from the next one. */
static void
job_continue(struct sjob *j, const char *why, int code)
{
	struct frame_hdr	 hdr;
	struct up_ask		 a;
	struct jrpc		 m;
	const char		*w;

	memset(&hdr, 0, sizeof hdr);
	hdr.session = j->session;
	hdr.tag = j->call_tag;
	a.up = j->up;
	a.stream = route_target(j->up, &hdr, &a.session);
	a.session_no = j->session;
	a.tag = j->call_tag;
	a.ref = j->ref;
	a.m = &m;
	if (jrpc_scan(j->text, j->len, &m, &w) != 0) {
		route_up_error(j->up, j->session, j->ref, JRPC_INTERNAL_ERROR,
		    "the request cannot be read again");
		job_free(j);
		return;
	}
	sampling_chain(&a, j->link + 1, why, code);
}

void
sampling_end(struct upstream *up, uint32_t ref, const char *outcome,
    const char *why)
{
	struct sjob	*j;
	char		 link[256];

	if ((j = job_find(up, ref)) == NULL)
		return;
	link_text(up, j->link, link, sizeof link);
	audit(j, link, NULL, outcome, why);
	job_free(j);
}

/* Does the chain run a sampling request that came with call tag? */
int
sampling_waiting(const struct upstream *up, uint32_t tag)
{
	struct sjob	*j;

	if (tag == 0)
		return (0);
	TAILQ_FOREACH(j, &jobs, entry) {
		if (j->up == up && j->call_tag == tag)
			return (1);
	}
	return (0);
}

void
sampling_upstream_gone(struct upstream *up)
{
	struct sjob	*j, *next;
	char		 link[256];

	for (j = TAILQ_FIRST(&jobs); j != NULL; j = next) {
		next = TAILQ_NEXT(j, entry);
		if (j->up != up)
			continue;
		link_text(up, j->link, link, sizeof link);
		audit(j, link, NULL, "cancelled", "the upstream went away");
		job_free(j);
	}
}

void
sampling_session_end(uint32_t session)
{
	struct sjob	*j, *next;
	char		 link[256];

	if (session == 0)
		return;
	for (j = TAILQ_FIRST(&jobs); j != NULL; j = next) {
		next = TAILQ_NEXT(j, entry);
		/* A job at the client link ends with its up_request. */
		if (j->session != session || (j->prov == NULL &&
		    j->call == NULL))
			continue;
		link_text(j->up, j->link, link, sizeof link);
		audit(j, link, NULL, "cancelled", "the client session ended");
		route_up_error(j->up, j->session, j->ref,
		    MCP_CONNECTION_CLOSED, "the client session ended");
		job_free(j);
	}
}
