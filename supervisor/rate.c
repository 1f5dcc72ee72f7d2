/* SPDX-License-Identifier: ISC */
/*
 * Rate limits (rate_limits = ( ... )): token buckets, a bucket per
 * principal or one shared by all, for the calls each rule matches by the
 * principal's client name, the upstream and the exposed tool, prompt or
 * URI.  A call takes a token from every bucket of every rule it matches,
 * or from none: one bucket that is empty refuses it (-32003, the rule
 * and the seconds until a token in data) before it reaches the upstream's
 * breaker and queue.  A bucket refills at rate tokens a second up to
 * burst; a full bucket is the same as none, so buckets are made when
 * first used and forgotten once full again, the least recently used
 * first when RATE_MAX_BUCKETS are held.
 *
 *
 * A rule with concurrent = N also counts the calls it matches that are in
 * flight, per principal or shared, from admission until their pending
 * request is freed however it ends; the N+1st is refused at once.  A
 * counter exists only while a call holds it, keyed by the rule's name
 * (so a reload keeps the counts of a rule it keeps), so there are never
 * more than the calls pending and none is evicted.
 *
 * The principal a session's calls are counted as is rate_principal's:
 * its OAuth subject (issuer and subject), else its named client, else its
 * token, else the address that made it.
 */
#include "config.h"

#include <sys/queue.h>

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "log.h"
#include "supervisor.h"
#include "xmalloc.h"

#define RATE_MAX_BUCKETS	65536	/* per-principal buckets held */

/* One bucket; full: tokens == burst. */
struct bucket {
	double			 tokens;
	int64_t			 at;		/* ms: tokens counted then */
	char			*key;		/* the map's, or NULL: shared */
	TAILQ_ENTRY(bucket)	 lru;
};
TAILQ_HEAD(bucket_list, bucket);

/* Calls in flight of a rule for a principal (a shared rule's too: it
 * sums them); exists while inflight > 0. */
struct conc {
	char			*key;		/* the map's: "rule/principal" */
	char			*rule;		/* owned: the rule's name */
	size_t			 ix;		/* its rule now, or SIZE_MAX */
	unsigned int		 inflight;
	TAILQ_ENTRY(conc)	 entry;
};
TAILQ_HEAD(conc_list, conc);

/* The counters a call holds (owned by its pending). */
struct rate_hold {
	size_t			 n;
	struct conc		*c[];
};

/* A rule of the configuration in use, and its counters. */
struct rate_rule {
	struct rate_conf	 rc;		/* borrowed from conf */
	struct bucket		 shared;	/* if rc.shared */
	uint64_t		 limited;	/* calls refused */
	uint64_t		 conc_limited;	/* of them, over concurrent */
	uint64_t		 passed;	/* calls let through */
	unsigned int		 inflight;	/* calls in flight it counts */
};

static struct rate_rule		*rules;
static size_t			 nrules;
static struct strmap		 buckets;	/* "rule/principal" */
static struct bucket_list	 lru = TAILQ_HEAD_INITIALIZER(lru);
static size_t			 nbuckets;
static struct strmap		 concs;		/* "rule/principal" */
static struct conc_list		 conclist = TAILQ_HEAD_INITIALIZER(conclist);
int64_t				(*rate_clock)(void) = now_ms;

/* Forget every per-principal bucket. */
static void
rate_forget_all(void)
{
	struct bucket	*b;

	while ((b = TAILQ_FIRST(&lru)) != NULL) {
		TAILQ_REMOVE(&lru, b, lru);
		free(b);
	}
	strmap_free(&buckets);
	strmap_init(&buckets);
	nbuckets = 0;
}

/* Take the configuration's rules (start, reload): every bucket full. */
void
rate_configure(void)
{
	const struct conf	*c = conf;
	struct conc		*k;
	size_t			 i;

	rate_forget_all();
	free(rules);
	rules = NULL;
	nrules = c->nrate_limits;
	if (nrules > 0)
		rules = xcalloc(nrules, sizeof *rules);
	for (i = 0; i < nrules; i++) {
		rules[i].rc = c->rate_limits[i];
		rules[i].shared.tokens = rules[i].rc.burst;
		rules[i].shared.at = rate_clock();
	}
	/* Calls in flight count on in the rule of the same name. */
	TAILQ_FOREACH(k, &conclist, entry) {
		k->ix = SIZE_MAX;
		for (i = 0; i < nrules; i++)
			if (strcmp(rules[i].rc.name, k->rule) == 0) {
				k->ix = i;
				rules[i].inflight += k->inflight;
				break;
			}
	}
}

/* The counters held by calls still pending stay theirs. */
void
rate_free(void)
{
	struct conc	*k;

	rate_forget_all();
	free(rules);
	rules = NULL;
	nrules = 0;
	TAILQ_FOREACH(k, &conclist, entry)
		k->ix = SIZE_MAX;
}

void
rate_principal(const struct session *s, char *buf, size_t len)
{
	if (s->grant != NULL)
		/* Many subjects may map to one client: each is its own. */
		snprintf(buf, len, "subject %016llx",
		    (unsigned long long)s->grant->id);
	else if (s->client_name != NULL)
		snprintf(buf, len, "client %s", s->client_name);
	else if (s->credential != 0)
		snprintf(buf, len, "token %016llx",
		    (unsigned long long)s->credential);
	else
		snprintf(buf, len, "peer %s", s->peer);
}

/* Tokens in a bucket now. */
static double
rate_level(const struct rate_rule *rr, const struct bucket *b, int64_t now)
{
	double	t = b->tokens + (double)(now - b->at) * rr->rc.rate / 1000;

	return (t > rr->rc.burst ? rr->rc.burst : t);
}

/* Whole seconds until a bucket at level has a token, at least 1. */
static unsigned int
rate_wait(const struct rate_rule *rr, double level)
{
	double		w = (1 - level) / rr->rc.rate;
	unsigned int	s;

	if (w > 86400)
		return (86400);
	s = (unsigned int)w;
	if ((double)s < w)
		s++;
	return (s < 1 ? 1 : s);
}

/* Does a rule apply to a call? */
static int
rate_matches(const struct rate_rule *rr, const struct session *s,
    const struct upstream *up, const char *name)
{
	if (rr->rc.client != NULL && fnmatch(rr->rc.client,
	    s->client_name != NULL ? s->client_name : "", 0) != 0)
		return (0);
	if (rr->rc.upstream != NULL && fnmatch(rr->rc.upstream, up->sc->name,
	    0) != 0)
		return (0);
	if (rr->rc.tool != NULL && (name == NULL || fnmatch(rr->rc.tool, name,
	    0) != 0))
		return (0);
	return (1);
}

/* Drop full buckets from the least recently used end, and the oldest
 * if none is full and the table is at its bound. */
static void
rate_trim(int64_t now)
{
	struct bucket	*b;
	size_t		 i;

	while ((b = TAILQ_FIRST(&lru)) != NULL) {
		i = (size_t)strtoul(b->key, NULL, 10);
		if (nbuckets < RATE_MAX_BUCKETS && i < nrules &&
		    rate_level(&rules[i], b, now) < rules[i].rc.burst)
			break;
		TAILQ_REMOVE(&lru, b, lru);
		strmap_del(&buckets, b->key);
		free(b);
		nbuckets--;
	}
}

/* The bucket of a per-principal rule for a principal (made full). */
static struct bucket *
rate_bucket(size_t i, const char *principal, int64_t now)
{
	struct bucket	*b;
	char		 key[384];

	snprintf(key, sizeof key, "%zu/%s", i, principal);
	if ((b = strmap_get(&buckets, key)) != NULL) {
		TAILQ_REMOVE(&lru, b, lru);
		TAILQ_INSERT_TAIL(&lru, b, lru);
		return (b);
	}
	rate_trim(now);
	b = xcalloc(1, sizeof *b);
	b->tokens = rules[i].rc.burst;
	b->at = now;
	strmap_add(&buckets, key, b);
	b->key = (char *)strmap_key(&buckets, key);
	TAILQ_INSERT_TAIL(&lru, b, lru);
	nbuckets++;
	return (b);
}

/*
 * The key of a rule's calls in flight for a principal.  A shared rule
 * counts per principal too, so that a reload flipping "shared" finds
 * every call in flight where it looks.
 */
static void
rate_conc_key(const struct rate_rule *rr, const char *principal, char *buf,
    size_t len)
{
	snprintf(buf, len, "%s/%s", rr->rc.name, principal);
}

/* Calls in flight a rule counts for a principal now (shared: all). */
static unsigned int
rate_conc_level(const struct rate_rule *rr, const char *principal)
{
	struct conc	*k;
	char		 key[384];

	if (rr->rc.shared)
		return (rr->inflight);
	rate_conc_key(rr, principal, key, sizeof key);
	k = strmap_get(&concs, key);
	return (k != NULL ? k->inflight : 0);
}

/* Count a call in flight for rule i, making its counter. */
static struct conc *
rate_conc_take(size_t i, const char *principal)
{
	struct conc	*k;
	char		 key[384];

	rate_conc_key(&rules[i], principal, key, sizeof key);
	if ((k = strmap_get(&concs, key)) == NULL) {
		k = xcalloc(1, sizeof *k);
		k->rule = xstrdup(rules[i].rc.name);
		k->ix = i;
		strmap_add(&concs, key, k);
		k->key = (char *)strmap_key(&concs, key);
		TAILQ_INSERT_TAIL(&conclist, k, entry);
	}
	k->inflight++;
	rules[i].inflight++;
	return (k);
}

void
rate_release(struct rate_hold *h)
{
	struct conc	*k;
	size_t		 i;

	for (i = 0; i < h->n; i++) {
		k = h->c[i];
		if (k->ix < nrules)
			rules[k->ix].inflight--;
		if (--k->inflight > 0)
			continue;
		TAILQ_REMOVE(&conclist, k, entry);
		strmap_del(&concs, k->key);
		free(k->rule);
		free(k);
		if (TAILQ_EMPTY(&conclist))
			strmap_free(&concs);
	}
	free(h);
}

/* Refuse a call over rule i's concurrent. */
static void
rate_conc_refuse(size_t i, const char *principal, struct refusal *rf)
{
	struct rate_rule	*rr = &rules[i];

	rr->limited++;
	rr->conc_limited++;
	rf->code = MCP_OVERLOADED;
	snprintf(rf->msg, sizeof rf->msg, "rate limit %s: more than %u calls "
	    "in flight%s; retry after 1 s", rr->rc.name, rr->rc.concurrent,
	    rr->rc.shared ? " for everyone" : "");
	snprintf(rf->data, sizeof rf->data, "{\"reason\":"
	    "\"concurrency_limited\",\"limit\":\"%s\",\"retryAfter\":1}",
	    rr->rc.name);
	if (!rr->rc.shared)
		log_info("rate limit %s: %s held to %u calls in flight",
		    rr->rc.name, principal, rr->rc.concurrent);
	rf->retry_after = 1;
	metrics_refused("limit");
}

int
rate_admit(const struct session *s, const struct upstream *up,
    const char *name, struct refusal *rf, struct rate_hold **hold)
{
	struct bucket	*use[CONF_MAX_RATE_LIMITS];
	size_t		 which[CONF_MAX_RATE_LIMITS];
	size_t		 conc[CONF_MAX_RATE_LIMITS];
	struct rate_hold *h;
	char		 principal[256];
	double		 level;
	unsigned int	 wait;
	int64_t		 now;
	size_t		 i, n = 0, nc = 0;

	*hold = NULL;
	if (nrules == 0)
		return (0);
	now = rate_clock();
	rate_principal(s, principal, sizeof principal);
	for (i = 0; i < nrules; i++) {
		if (!rate_matches(&rules[i], s, up, name))
			continue;
		/* Its calls in flight first: a refused call takes nothing. */
		if (rules[i].rc.concurrent > 0) {
			if (rate_conc_level(&rules[i], principal) >=
			    rules[i].rc.concurrent) {
				rate_conc_refuse(i, principal, rf);
				return (-1);
			}
			conc[nc++] = i;
		}
		if (rules[i].rc.rate == 0)
			continue;
		if (rules[i].rc.shared)
			use[n] = &rules[i].shared;
		else
			use[n] = rate_bucket(i, principal, now);
		level = rate_level(&rules[i], use[n], now);
		if (level < 1) {
			rules[i].limited++;
			wait = rate_wait(&rules[i], level);
			rf->code = MCP_OVERLOADED;
			snprintf(rf->msg, sizeof rf->msg, "rate limit %s: more "
			    "than %g calls per second (burst %u)%s; retry "
			    "after %u s", rules[i].rc.name, rules[i].rc.rate,
			    rules[i].rc.burst, rules[i].rc.shared ?
			    " for everyone" : "", wait);
			snprintf(rf->data, sizeof rf->data, "{\"reason\":"
			    "\"rate_limited\",\"limit\":\"%s\",\"retryAfter\":"
			    "%u}", rules[i].rc.name, wait);
			if (!rules[i].rc.shared)
				log_info("rate limit %s: %s held to %g calls "
				    "per second", rules[i].rc.name, principal,
				    rules[i].rc.rate);
			rf->retry_after = wait;
			metrics_refused("limit");
			return (-1);
		}
		use[n]->tokens = level;
		use[n]->at = now;
		which[n++] = i;
	}
	/* Every bucket has a token and every rule room: take them. */
	for (i = 0; i < n; i++) {
		use[i]->tokens -= 1;
		rules[which[i]].passed++;
	}
	if (nc == 0)
		return (0);
	h = xmalloc(sizeof *h + nc * sizeof h->c[0]);
	h->n = nc;
	for (i = 0; i < nc; i++) {
		h->c[i] = rate_conc_take(conc[i], principal);
		if (rules[conc[i]].rc.rate == 0)
			rules[conc[i]].passed++;
	}
	*hold = h;
	return (0);
}

void
rate_refused(struct req *r, const struct refusal *rf)
{
	struct stream	*st = r->stream;

	if (st == NULL || !st->modern || !(st->kind == STREAM_JSON ||
	    (st->kind == STREAM_MODERN && !st->opened)))
		return;
	st->status = 429;
	st->retry_after = rf->retry_after;
}

void
rate_metrics(struct evbuffer *b)
{
	char	labels[128];
	size_t	i;

	if (nrules == 0)
		return;
	prom_header(b, "mcp_supervisor_rate_limited_total", "counter",
	    "Calls a rate limit refused, by rule (over its rate or its "
	    "concurrent).");
	for (i = 0; i < nrules; i++) {
		prom_labels(labels, sizeof labels, "limit", rules[i].rc.name,
		    NULL);
		prom_sample_u64(b, "mcp_supervisor_rate_limited_total", labels,
		    rules[i].limited);
	}
	prom_header(b, "mcp_supervisor_rate_limit_passed_total", "counter",
	    "Calls a rate limit matched and let through, by rule.");
	for (i = 0; i < nrules; i++) {
		prom_labels(labels, sizeof labels, "limit", rules[i].rc.name,
		    NULL);
		prom_sample_u64(b, "mcp_supervisor_rate_limit_passed_total",
		    labels, rules[i].passed);
	}
	prom_header(b, "mcp_supervisor_rate_limit_in_flight", "gauge",
	    "Calls in flight a rule with concurrent counts, by rule.");
	for (i = 0; i < nrules; i++) {
		if (rules[i].rc.concurrent == 0)
			continue;
		prom_labels(labels, sizeof labels, "limit", rules[i].rc.name,
		    NULL);
		prom_sample_u64(b, "mcp_supervisor_rate_limit_in_flight",
		    labels, rules[i].inflight);
	}
	prom_header(b, "mcp_supervisor_rate_limit_buckets", "gauge",
	    "Buckets held for principals (a full one is forgotten).");
	prom_sample_u64(b, "mcp_supervisor_rate_limit_buckets", "", nbuckets);
}

json_t *
rate_status_json(void)
{
	json_t	*a = json_array(), *o;
	size_t	 i;

	for (i = 0; i < nrules; i++) {
		o = json_pack("{s:s, s:f, s:I, s:b, s:I, s:I}", "name",
		    rules[i].rc.name, "rate", rules[i].rc.rate,
		    "burst", (json_int_t)rules[i].rc.burst,
		    "shared", rules[i].rc.shared,
		    "limited", (json_int_t)rules[i].limited,
		    "passed", (json_int_t)rules[i].passed);
		if (rules[i].rc.concurrent > 0) {
			json_object_set_new(o, "concurrent",
			    json_integer(rules[i].rc.concurrent));
			json_object_set_new(o, "in_flight",
			    json_integer(rules[i].inflight));
			json_object_set_new(o, "concurrency_limited",
			    json_integer((json_int_t)rules[i].conc_limited));
		}
		json_array_append_new(a, o);
	}
	return (a);
}
