/* SPDX-License-Identifier: ISC */
/*
 * The gateway's LLM providers (llm = ( ... )), budgets, the check that
 * every llm: and tool: link names something that exists, and a provider's
 * JSON form (the llm worker's CONFIG frame), copies and comparison.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libconfig.h>

#include "conf.h"
#include "conf_priv.h"
#include "frame.h"
#include "log.h"
#include "xmalloc.h"

#define CONF_MAX_LLMS		64
#define CONF_MAX_SCORES		256

/* The API base each provider's own SDK uses when given none. */
static const char *const default_urls[] = {
	[LLM_OPENAI] = "https://api.openai.com/v1",
	[LLM_ANTHROPIC] = "https://api.anthropic.com",
	[LLM_OLLAMA] = "http://127.0.0.1:11434",
};

/* Read a number from 0 to 1 (a float, or the integer 0 or 1). */
static int
get_unit(struct conf_ctx *ctx, const config_setting_t *s, double *out)
{
	double	v;

	switch (config_setting_type(s)) {
	case CONFIG_TYPE_FLOAT:
		v = config_setting_get_float(s);
		break;
	case CONFIG_TYPE_INT:
		v = config_setting_get_int(s);
		break;
	default:
		return (conf_error(ctx, s, "%s must be a number from 0 to 1",
		    config_setting_name(s)));
	}
	if (!(v >= 0 && v <= 1))
		return (conf_error(ctx, s, "%s must be a number from 0 to 1",
		    config_setting_name(s)));
	*out = v;
	return (0);
}

/* Read budget = { requests_per_minute = N; tokens_per_day = N; }. */
int
conf_get_budget(struct conf_ctx *ctx, const config_setting_t *g,
    struct budget_conf *b)
{
	config_setting_t	*s;
	const char		*key;
	long long		 ll;
	int			 i, n;

	if (!config_setting_is_group(g))
		return (conf_error(ctx, g, "budget must be a group "
		    "{ requests_per_minute = N; tokens_per_day = N; }"));
	memset(b, 0, sizeof *b);
	n = config_setting_length(g);
	for (i = 0; i < n; i++) {
		s = config_setting_get_elem(g, (unsigned int)i);
		key = config_setting_name(s);
		if (strcmp(key, "requests_per_minute") == 0) {
			if (conf_get_int(ctx, s, 0, 1000000, &ll) != 0)
				return (-1);
			b->requests_per_minute = (unsigned int)ll;
		} else if (strcmp(key, "tokens_per_day") == 0) {
			if (conf_get_int(ctx, s, 0, 1000000000000LL, &ll) != 0)
				return (-1);
			b->tokens_per_day = (unsigned long long)ll;
		} else
			return (conf_error(ctx, s, "budget: unknown setting "
			    "\"%s\" (requests_per_minute or tokens_per_day)",
			    key));
	}
	return (0);
}

/* Is a model one the provider offers (its model or one of models)? */
static int
llm_offers(const struct llm_conf *lc, const char *model)
{
	size_t	i;

	if (strcmp(lc->model, model) == 0)
		return (1);
	for (i = 0; lc->models != NULL && lc->models[i] != NULL; i++) {
		if (strcmp(lc->models[i], model) == 0)
			return (1);
	}
	return (0);
}

/* Read scores = ( { model = "..."; cost = 0.2; ... }, ... ). */
static int
get_scores(struct conf_ctx *ctx, const config_setting_t *list,
    struct llm_conf *lc)
{
	config_setting_t	*g, *s;
	struct llm_score	*sc;
	const char		*key;
	int			 i, j, n, m;

	if ((n = conf_list_length(ctx, list, "scores must be a list: "
	    "scores = ( { model = ...; cost = 0.5; }, ... );", CONF_MAX_SCORES,
	    "scores")) < 0)
		return (-1);
	lc->scores = xcalloc((size_t)n + 1, sizeof *lc->scores);
	for (i = 0; i < n; i++) {
		g = config_setting_get_elem(list, (unsigned int)i);
		sc = &lc->scores[i];
		lc->nscores++;
		sc->cost = sc->speed = sc->intelligence = 0.5;
		if (!config_setting_is_group(g))
			return (conf_error(ctx, g, "each score must be a group "
			    "{ model = ...; cost = ...; speed = ...; "
			    "intelligence = ...; }"));
		m = config_setting_length(g);
		for (j = 0; j < m; j++) {
			s = config_setting_get_elem(g, (unsigned int)j);
			key = config_setting_name(s);
			if (strcmp(key, "model") == 0) {
				if (conf_get_string(ctx, s, &sc->model, 0) != 0)
					return (-1);
			} else if (strcmp(key, "cost") == 0) {
				if (get_unit(ctx, s, &sc->cost) != 0)
					return (-1);
			} else if (strcmp(key, "speed") == 0) {
				if (get_unit(ctx, s, &sc->speed) != 0)
					return (-1);
			} else if (strcmp(key, "intelligence") == 0) {
				if (get_unit(ctx, s, &sc->intelligence) != 0)
					return (-1);
			} else
				return (conf_error(ctx, s, "scores: unknown "
				    "setting \"%s\" (model, cost, speed or "
				    "intelligence)", key));
		}
		if (sc->model == NULL)
			return (conf_error(ctx, g, "a score needs a model"));
	}
	return (0);
}

/* Read one provider's group. */
static int
parse_llm(struct conf_ctx *ctx, const config_setting_t *g,
    struct llm_conf *lc)
{
	config_setting_t	*s, *scores = NULL, *field = NULL;
	config_setting_t	*url_s = NULL;
	const char		*key;
	char			*tmp = NULL;
	long long		 ll;
	size_t			 i;
	int			 k, j, n, have_provider = 0;

	memset(lc, 0, sizeof *lc);
	lc->at = conf_where(ctx, g);
	lc->timeout = 120;
	lc->connect_timeout = 10;
	lc->stream = 1;
	lc->max_completion_tokens = -1;
	lc->max_response = 8 * 1024 * 1024;
	lc->max_concurrent = 16;
	lc->tls_verify = 1;
	if (!config_setting_is_group(g))
		return (conf_error(ctx, g, "each entry of llm must be a group "
		    "{ name = ...; provider = ...; model = ...; }"));
	n = config_setting_length(g);
	for (j = 0; j < n; j++) {
		s = config_setting_get_elem(g, (unsigned int)j);
		key = config_setting_name(s);
		if (strcmp(key, "name") == 0) {
			if (conf_get_name(ctx, s, "llm", &lc->name) != 0)
				return (-1);
		} else if (strcmp(key, "provider") == 0) {
			if (conf_get_string(ctx, s, &tmp, 0) != 0)
				return (-1);
			k = conf_lookup_name(conf_llm_provider_names, 3, tmp);
			if (k < 0) {
				conf_error(ctx, s, "unknown provider \"%s\" "
				    "(openai, anthropic or ollama)", tmp);
				free(tmp);
				return (-1);
			}
			free(tmp);
			tmp = NULL;
			lc->provider = (enum llm_provider)k;
			have_provider = 1;
		} else if (strcmp(key, "url") == 0) {
			if (conf_get_string(ctx, s, &lc->url, 0) != 0)
				return (-1);
			if (strncmp(lc->url, "http://", 7) != 0 &&
			    strncmp(lc->url, "https://", 8) != 0)
				return (conf_error(ctx, s, "llm url must start "
				    "with http:// or https://"));
			url_s = s;
		} else if (strcmp(key, "api_key") == 0) {
			if (conf_get_string(ctx, s, &lc->api_key, 0) != 0)
				return (-1);
			if (!conf_secret_reference(lc->api_key))
				return (conf_error(ctx, s, "api_key must be "
				    "\"${env:NAME}\" or \"${file:/path}\": "
				    "the key itself is never written in the "
				    "configuration"));
		} else if (strcmp(key, "model") == 0) {
			if (conf_get_string(ctx, s, &lc->model, 0) != 0)
				return (-1);
		} else if (strcmp(key, "models") == 0) {
			if (conf_get_strv(ctx, s, 1, &lc->models) != 0)
				return (-1);
			for (i = 0; lc->models[i] != NULL; i++) {
				if (lc->models[i][0] == '\0')
					return (conf_error(ctx, s, "models "
					    "must not hold an empty name"));
			}
		} else if (strcmp(key, "scores") == 0) {
			if (get_scores(ctx, s, lc) != 0)
				return (-1);
			scores = s;
		} else if (strcmp(key, "budget") == 0) {
			if (conf_get_budget(ctx, s, &lc->budget) != 0)
				return (-1);
		} else if (strcmp(key, "timeout") == 0) {
			if (conf_get_seconds(ctx, s, 1, 3600, &lc->timeout) != 0)
				return (-1);
		} else if (strcmp(key, "connect_timeout") == 0) {
			if (conf_get_seconds(ctx, s, 1, 3600,
			    &lc->connect_timeout) != 0)
				return (-1);
		} else if (strcmp(key, "stream") == 0) {
			if (conf_get_bool(ctx, s, &lc->stream) != 0)
				return (-1);
		} else if (strcmp(key, "max_tokens_field") == 0) {
			if (conf_get_string(ctx, s, &tmp, 0) != 0)
				return (-1);
			if (strcmp(tmp, "max_tokens") == 0)
				lc->max_completion_tokens = 0;
			else if (strcmp(tmp, "max_completion_tokens") == 0)
				lc->max_completion_tokens = 1;
			else {
				free(tmp);
				return (conf_error(ctx, s, "max_tokens_field "
				    "must be \"max_tokens\" or "
				    "\"max_completion_tokens\""));
			}
			free(tmp);
			tmp = NULL;
			field = s;
		} else if (strcmp(key, "max_response") == 0) {
			if (conf_get_size(ctx, s, 4096, 1ULL << 30,
			    &lc->max_response) != 0)
				return (-1);
		} else if (strcmp(key, "max_concurrent") == 0) {
			if (conf_get_int(ctx, s, 1, 4096, &ll) != 0)
				return (-1);
			lc->max_concurrent = (unsigned int)ll;
		} else if (strcmp(key, "tls_verify") == 0) {
			if (conf_get_bool(ctx, s, &lc->tls_verify) != 0)
				return (-1);
		} else if (strcmp(key, "ca_file") == 0) {
			if (conf_get_string(ctx, s, &lc->ca_file, 0) != 0)
				return (-1);
			if (lc->ca_file[0] != '/')
				return (conf_error(ctx, s, "ca_file must be an "
				    "absolute path"));
		} else
			return (conf_error(ctx, s, "unknown llm setting \"%s\"",
			    key));
	}
	if (lc->name == NULL)
		return (conf_error(ctx, g, "llm has no name"));
	if (!have_provider)
		return (conf_error(ctx, g, "llm %s: set provider (openai, "
		    "anthropic or ollama)", lc->name));
	if (lc->model == NULL)
		return (conf_error(ctx, g, "llm %s: set model, the model used "
		    "when no preference picks another", lc->name));
	if (lc->url == NULL)
		lc->url = xstrdup(default_urls[lc->provider]);
	if (field != NULL && lc->provider != LLM_OPENAI)
		return (conf_error(ctx, field, "llm %s: max_tokens_field is "
		    "for provider openai only", lc->name));
	/* OpenAI's own API wants the new field; compatible servers the old. */
	if (lc->max_completion_tokens < 0)
		lc->max_completion_tokens = lc->provider == LLM_OPENAI &&
		    url_s == NULL;
	for (i = 0; i < lc->nscores; i++) {
		if (!llm_offers(lc, lc->scores[i].model))
			return (conf_error(ctx, scores, "llm %s: scores names "
			    "\"%s\", which is neither its model nor one of "
			    "its models", lc->name, lc->scores[i].model));
	}
	return (0);
}

/* Read llm = ( ... ). */
int
conf_parse_llms(struct conf_ctx *ctx, const config_setting_t *list,
    struct conf *conf)
{
	config_setting_t	*s;
	char			 where[512];
	int			 i, n, j;

	if ((n = conf_list_length(ctx, list, "llm must be a list: "
	    "llm = ( { ... }, { ... } );", CONF_MAX_LLMS, "llm providers")) < 0)
		return (-1);
	conf->llms = xcalloc((size_t)n + 1, sizeof *conf->llms);
	for (i = 0; i < n; i++) {
		s = config_setting_get_elem(list, (unsigned int)i);
		conf->nllms++;
		if (parse_llm(ctx, s, &conf->llms[i]) != 0)
			return (-1);
		for (j = 0; j < i; j++) {
			if (strcmp(conf->llms[j].name, conf->llms[i].name) == 0)
				return (conf_error(ctx, s, "llm name \"%s\" "
				    "already used on %s", conf->llms[i].name,
				    conf_at_text(ctx, conf->llms[j].at,
				    conf->llms[i].at, where, sizeof where)));
		}
	}
	return (0);
}

const struct llm_conf *
conf_llm_find(const struct conf *conf, const char *name)
{
	size_t	i;

	for (i = 0; i < conf->nllms; i++) {
		if (strcmp(conf->llms[i].name, name) == 0)
			return (&conf->llms[i]);
	}
	return (NULL);
}

/* Check one sampling list's links; who says where it is. */
static int
check_list(struct conf_ctx *ctx, const struct conf *conf,
    const enum strategy *list, char *const *targets, size_t n,
    struct conf_at at, const char *who)
{
	const char	*slash;
	size_t		 i, j, len;

	for (i = 0; i < n; i++) {
		if (list[i] == STRATEGY_LLM &&
		    conf_llm_find(conf, targets[i]) == NULL)
			return (conf_error_at(ctx, at, "%ssampling: no llm "
			    "provider is named \"%s\"", who, targets[i]));
		if (list[i] != STRATEGY_TOOL)
			continue;
		slash = strchr(targets[i], '/');
		len = (size_t)(slash - targets[i]);
		for (j = 0; j < conf->nservers; j++) {
			if (strlen(conf->servers[j].name) == len &&
			    strncmp(conf->servers[j].name, targets[i],
			    len) == 0)
				break;
		}
		if (j == conf->nservers)
			return (conf_error_at(ctx, at, "%ssampling: tool:%s "
			    "names no server \"%.*s\"", who, targets[i],
			    (int)len, targets[i]));
		/* The link's call is the gateway's: it has no user. */
		if (conf->servers[j].oauth != NULL &&
		    conf->servers[j].oauth->identity == UPOAUTH_PER_USER)
			return (conf_error_at(ctx, at, "%ssampling: tool:%s: "
			    "server \"%s\" connects per user (oauth.identity), "
			    "and a tool: link's call has no user", who,
			    targets[i], conf->servers[j].name));
	}
	return (0);
}

int
conf_check_links(struct conf_ctx *ctx, const struct conf *conf)
{
	const struct server_conf	*srv;
	char				 who[80];
	size_t				 i;

	if (check_list(ctx, conf, conf->sampling, conf->sampling_target,
	    conf->nsampling, conf->sampling_at, "") != 0)
		return (-1);
	for (i = 0; i < conf->nservers; i++) {
		srv = &conf->servers[i];
		snprintf(who, sizeof who, "server %s: ", srv->name);
		if (check_list(ctx, conf, srv->sampling, srv->sampling_target,
		    srv->nsampling, srv->at, who) != 0)
			return (-1);
	}
	return (0);
}

json_t *
conf_llm_to_json(const struct llm_conf *lc)
{
	json_t	*o, *a;
	size_t	 i;

	o = json_pack("{s:s, s:s, s:s, s:s, s:{s:I, s:I}, s:I, s:I, s:b, "
	    "s:b, s:I, s:I, s:b}",
	    "name", lc->name,
	    "provider", conf_llm_provider_names[lc->provider],
	    "url", lc->url,
	    "model", lc->model,
	    "budget",
	    "requests_per_minute", (json_int_t)lc->budget.requests_per_minute,
	    "tokens_per_day", (json_int_t)lc->budget.tokens_per_day,
	    "timeout", (json_int_t)lc->timeout,
	    "connect_timeout", (json_int_t)lc->connect_timeout,
	    "stream", lc->stream,
	    "max_completion_tokens", lc->max_completion_tokens,
	    "max_response", (json_int_t)lc->max_response,
	    "max_concurrent", (json_int_t)lc->max_concurrent,
	    "tls_verify", lc->tls_verify);
	if (o == NULL)
		return (NULL);
	if (lc->api_key != NULL)
		json_object_set_new(o, "api_key", json_string(lc->api_key));
	if (lc->models != NULL)
		json_object_set_new(o, "models", conf_strv_to_json(lc->models));
	if (lc->ca_file != NULL)
		json_object_set_new(o, "ca_file", json_string(lc->ca_file));
	a = json_array();
	for (i = 0; i < lc->nscores; i++)
		json_array_append_new(a, json_pack("{s:s, s:f, s:f, s:f}",
		    "model", lc->scores[i].model, "cost", lc->scores[i].cost,
		    "speed", lc->scores[i].speed,
		    "intelligence", lc->scores[i].intelligence));
	json_object_set_new(o, "scores", a);
	return (o);
}

struct llm_conf *
conf_llm_from_json(const json_t *o, char *err, size_t errlen)
{
	struct llm_conf	*lc;
	const char	*name, *provider, *url, *model;
	json_int_t	 rpm, tpd, timeout, ctimeout, maxr, maxc;
	int		 stream, mct, verify, k;
	json_error_t	 jerr;
	json_t		*a, *e;
	size_t		 i;

	if (json_unpack_ex((json_t *)o, &jerr, 0, "{s:s, s:s, s:s, s:s, "
	    "s:{s:I, s:I}, s:I, s:I, s:b, s:b, s:I, s:I, s:b, s:o}",
	    "name", &name, "provider", &provider, "url", &url,
	    "model", &model, "budget", "requests_per_minute", &rpm,
	    "tokens_per_day", &tpd, "timeout", &timeout,
	    "connect_timeout", &ctimeout, "stream", &stream,
	    "max_completion_tokens", &mct, "max_response", &maxr,
	    "max_concurrent", &maxc, "tls_verify", &verify,
	    "scores", &a) != 0) {
		snprintf(err, errlen, "bad llm configuration: %s", jerr.text);
		return (NULL);
	}
	k = conf_lookup_name(conf_llm_provider_names, 3, provider);
	if (k < 0 || rpm < 0 || tpd < 0 || timeout <= 0 || ctimeout <= 0 ||
	    maxr <= 0 || maxc <= 0 || !json_is_array(a)) {
		snprintf(err, errlen, "bad llm configuration values");
		return (NULL);
	}
	lc = xcalloc(1, sizeof *lc);
	lc->name = xstrdup(name);
	lc->provider = (enum llm_provider)k;
	lc->url = xstrdup(url);
	lc->model = xstrdup(model);
	lc->budget.requests_per_minute = (unsigned int)rpm;
	lc->budget.tokens_per_day = (unsigned long long)tpd;
	lc->timeout = (unsigned int)timeout;
	lc->connect_timeout = (unsigned int)ctimeout;
	lc->stream = stream;
	lc->max_completion_tokens = mct;
	lc->max_response = (size_t)maxr;
	lc->max_concurrent = (unsigned int)maxc;
	lc->tls_verify = verify;
	if (json_is_string(json_object_get(o, "api_key")))
		lc->api_key = xstrdup(json_string_value(json_object_get(o,
		    "api_key")));
	if (json_is_string(json_object_get(o, "ca_file")))
		lc->ca_file = xstrdup(json_string_value(json_object_get(o,
		    "ca_file")));
	if (conf_strv_from_json(json_object_get(o, "models"), &lc->models) != 0)
		goto bad;
	lc->scores = xcalloc(json_array_size(a) + 1, sizeof *lc->scores);
	json_array_foreach(a, i, e) {
		if (json_unpack(e, "{s:s, s:F, s:F, s:F}", "model", &model,
		    "cost", &lc->scores[i].cost, "speed", &lc->scores[i].speed,
		    "intelligence", &lc->scores[i].intelligence) != 0)
			goto bad;
		lc->scores[i].model = xstrdup(model);
		lc->nscores++;
	}
	return (lc);
bad:
	snprintf(err, errlen, "bad llm configuration: models or scores");
	conf_llm_free(lc);
	free(lc);
	return (NULL);
}

void
conf_llm_free(struct llm_conf *lc)
{
	size_t	i;

	if (lc == NULL)
		return;
	free(lc->name);
	free(lc->url);
	free(lc->api_key);
	free(lc->model);
	free(lc->ca_file);
	conf_strv_free(lc->models);
	for (i = 0; i < lc->nscores; i++)
		free(lc->scores[i].model);
	free(lc->scores);
	memset(lc, 0, sizeof *lc);
}

struct llm_conf *
conf_llm_copy(const struct llm_conf *lc)
{
	struct llm_conf	*copy;
	json_t		*j;
	char		 err[256];

	if ((j = conf_llm_to_json(lc)) == NULL)
		fatalx("conf_llm_copy: %s", lc->name);
	if ((copy = conf_llm_from_json(j, err, sizeof err)) == NULL)
		fatalx("conf_llm_copy: %s: %s", lc->name, err);
	json_decref(j);
	copy->at = lc->at;
	return (copy);
}

int
conf_llm_equal(const struct llm_conf *a, const struct llm_conf *b)
{
	json_t	*ja, *jb;
	int	 eq;

	ja = conf_llm_to_json(a);
	jb = conf_llm_to_json(b);
	eq = json_equal(ja, jb);
	json_decref(ja);
	json_decref(jb);
	return (eq);
}

size_t
conf_llm_frame_max(const struct llm_conf *lc)
{
	size_t	answer = 6 * lc->max_response + FRAME_SLACK;

	return (answer > CONF_LLM_MAX_REQUEST + FRAME_SLACK ? answer :
	    CONF_LLM_MAX_REQUEST + FRAME_SLACK);
}
