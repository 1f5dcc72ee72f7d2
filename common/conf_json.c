/* SPDX-License-Identifier: ISC */
/*
 * One upstream's configuration as JSON (the worker's CONFIG frame) and
 * back, deep copies by way of that form, and comparison for reload.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "conf_priv.h"
#include "log.h"
#include "xmalloc.h"

/* Convert a string vector to a JSON array. */
json_t *
conf_strv_to_json(char *const *v)
{
	json_t	*a = json_array();
	size_t	 i;

	for (i = 0; v[i] != NULL; i++)
		json_array_append_new(a, json_string(v[i]));
	return (a);
}

json_t *
conf_server_to_json(const struct server_conf *srv)
{
	json_t	*o, *a;
	size_t	 i;
	char	 text[512];

	o = json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:I}",
	    "name", srv->name,
	    "transport", conf_transport_names[srv->transport],
	    "prefix", srv->prefix,
	    "isolation", conf_isolation_names[srv->isolation],
	    "request_timeout", (json_int_t)srv->request_timeout,
	    "server_request_timeout", (json_int_t)srv->server_request_timeout,
	    "init_timeout", (json_int_t)srv->init_timeout,
	    "max_instances", (json_int_t)srv->max_instances,
	    "max_message", (json_int_t)srv->max_message);
	if (o == NULL)
		return (NULL);
	if (srv->command != NULL)
		json_object_set_new(o, "command",
		    conf_strv_to_json(srv->command));
	if (srv->env != NULL)
		json_object_set_new(o, "env", conf_strv_to_json(srv->env));
	if (srv->pass_env != NULL)
		json_object_set_new(o, "pass_env",
		    conf_strv_to_json(srv->pass_env));
	if (srv->cwd != NULL)
		json_object_set_new(o, "cwd", json_string(srv->cwd));
	if (srv->url != NULL)
		json_object_set_new(o, "url", json_string(srv->url));
	if (srv->headers != NULL)
		json_object_set_new(o, "headers",
		    conf_strv_to_json(srv->headers));
	if (srv->ca_file != NULL)
		json_object_set_new(o, "ca_file", json_string(srv->ca_file));
	if (srv->oauth != NULL)
		json_object_set_new(o, "oauth", conf_upoauth_to_json(srv->oauth));
	if (srv->user != NULL)
		json_object_set_new(o, "user", json_string(srv->user));
	json_object_set_new(o, "tls_verify", json_boolean(srv->tls_verify));
	json_object_set_new(o, "lazy", json_boolean(srv->lazy));
	json_object_set_new(o, "required", json_boolean(srv->required));
	json_object_set_new(o, "era", json_string(conf_era_names[srv->era]));
	json_object_set_new(o, "connect_timeout",
	    json_integer(srv->connect_timeout));
	json_object_set_new(o, "ping_interval",
	    json_integer(srv->ping_interval));
	json_object_set_new(o, "ping_timeout", json_integer(srv->ping_timeout));
	json_object_set_new(o, "restart_delay",
	    json_integer(srv->restart_delay));
	json_object_set_new(o, "restart_max_delay",
	    json_integer(srv->restart_max_delay));
	json_object_set_new(o, "healthy_after",
	    json_integer(srv->healthy_after));
	json_object_set_new(o, "max_failures", json_integer(srv->max_failures));
	conf_traffic_to_json(&srv->traffic, o);
	a = json_array();
	for (i = 0; i < srv->nelicitation; i++)
		json_array_append_new(a, json_string(
		    conf_strategy_names[srv->elicitation[i]]));
	json_object_set_new(o, "elicitation", a);
	a = json_array();
	for (i = 0; i < srv->nsampling; i++) {
		conf_strategy_text(srv->sampling[i], srv->sampling_target[i],
		    text, sizeof text);
		json_array_append_new(a, json_string(text));
	}
	json_object_set_new(o, "sampling", a);
	json_object_set_new(o, "budget", json_pack("{s:I, s:I}",
	    "requests_per_minute", (json_int_t)srv->budget.requests_per_minute,
	    "tokens_per_day", (json_int_t)srv->budget.tokens_per_day));
	json_object_set_new(o, "log_prompts", json_boolean(srv->log_prompts));
	json_object_set_new(o, "rlimit_nofile",
	    json_integer((json_int_t)srv->rlimit_nofile));
	json_object_set_new(o, "rlimit_as",
	    json_integer((json_int_t)srv->rlimit_as));
	return (o);
}

/* Read a JSON array of strings into a vector. */
int
conf_strv_from_json(const json_t *a, char ***out)
{
	size_t	 i;
	json_t	*e;

	if (a == NULL)
		return (0);
	if (!json_is_array(a))
		return (-1);
	*out = xcalloc(json_array_size(a) + 1, sizeof **out);
	json_array_foreach(a, i, e) {
		if (!json_is_string(e))
			return (-1);
		(*out)[i] = xstrdup(json_string_value(e));
	}
	return (0);
}

struct server_conf *
conf_server_from_json(const json_t *o, char *err, size_t errlen)
{
	struct server_conf	*srv;
	const char		*name, *transport, *prefix, *isolation;
	json_int_t		 rt, srt, it, mi, mm;
	json_t			*e;
	size_t			 i;
	int			 k;
	json_error_t		 jerr;
	int			 t, iso;
	enum strategy		 kind;
	char			*target;
	json_int_t		 rpm, tpd;

	if (json_unpack_ex((json_t *)o, &jerr, 0,
	    "{s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:I}",
	    "name", &name, "transport", &transport, "prefix", &prefix,
	    "isolation", &isolation, "request_timeout", &rt,
	    "server_request_timeout", &srt, "init_timeout", &it,
	    "max_instances", &mi, "max_message", &mm) != 0) {
		snprintf(err, errlen, "bad server configuration: %s",
		    jerr.text);
		return (NULL);
	}
	t = conf_lookup_name(conf_transport_names, 4, transport);
	iso = conf_lookup_name(conf_isolation_names, 2, isolation);
	if (t < 0 || iso < 0 || rt <= 0 || srt <= 0 || it <= 0 || mi <= 0 ||
	    mm <= 0) {
		snprintf(err, errlen, "bad server configuration values");
		return (NULL);
	}
	srv = xcalloc(1, sizeof *srv);
	srv->name = xstrdup(name);
	srv->transport = (enum transport)t;
	srv->prefix = xstrdup(prefix);
	srv->isolation = (enum isolation)iso;
	srv->request_timeout = (unsigned int)rt;
	srv->server_request_timeout = (unsigned int)srt;
	srv->init_timeout = (unsigned int)it;
	srv->max_instances = (unsigned int)mi;
	srv->max_message = (size_t)mm;
	if (conf_strv_from_json(json_object_get(o, "command"),
	    &srv->command) != 0 ||
	    conf_strv_from_json(json_object_get(o, "env"), &srv->env) != 0 ||
	    conf_strv_from_json(json_object_get(o, "pass_env"),
	    &srv->pass_env) != 0)
		goto bad;
	if (json_is_string(json_object_get(o, "cwd")))
		srv->cwd = xstrdup(json_string_value(json_object_get(o,
		    "cwd")));
	if (json_is_string(json_object_get(o, "url")))
		srv->url = xstrdup(json_string_value(json_object_get(o,
		    "url")));
	if (conf_strv_from_json(json_object_get(o, "headers"),
	    &srv->headers) != 0)
		goto bad;
	if (json_object_get(o, "oauth") != NULL &&
	    (srv->oauth = conf_upoauth_from_json(json_object_get(o,
	    "oauth"))) == NULL)
		goto bad;
	if (json_is_string(json_object_get(o, "ca_file")))
		srv->ca_file = xstrdup(json_string_value(json_object_get(o,
		    "ca_file")));
	if (json_is_string(json_object_get(o, "user")))
		srv->user = xstrdup(json_string_value(json_object_get(o,
		    "user")));
	srv->tls_verify = json_is_true(json_object_get(o, "tls_verify"));
	srv->lazy = json_is_true(json_object_get(o, "lazy"));
	srv->required = json_is_true(json_object_get(o, "required"));
	if (json_is_string(json_object_get(o, "era"))) {
		if ((k = conf_lookup_name(conf_era_names, 3,
		    json_string_value(json_object_get(o, "era")))) < 0)
			goto bad;
		srv->era = (enum era)k;
	}
	srv->connect_timeout = (unsigned int)json_integer_value(
	    json_object_get(o, "connect_timeout"));
	srv->ping_interval = (unsigned int)json_integer_value(
	    json_object_get(o, "ping_interval"));
	srv->ping_timeout = (unsigned int)json_integer_value(
	    json_object_get(o, "ping_timeout"));
	srv->restart_delay = (unsigned int)json_integer_value(
	    json_object_get(o, "restart_delay"));
	srv->restart_max_delay = (unsigned int)json_integer_value(
	    json_object_get(o, "restart_max_delay"));
	srv->healthy_after = (unsigned int)json_integer_value(
	    json_object_get(o, "healthy_after"));
	srv->max_failures = (unsigned int)json_integer_value(
	    json_object_get(o, "max_failures"));
	srv->rlimit_nofile = (unsigned long long)json_integer_value(
	    json_object_get(o, "rlimit_nofile"));
	srv->rlimit_as = (unsigned long long)json_integer_value(
	    json_object_get(o, "rlimit_as"));
	if (srv->connect_timeout == 0 || srv->ping_timeout == 0 ||
	    conf_traffic_from_json(o, &srv->traffic) != 0)
		goto bad;
	json_array_foreach(json_object_get(o, "elicitation"), i, e) {
		k = conf_lookup_name(conf_strategy_names, 3, json_string_value(e) ?
		    json_string_value(e) : "");
		if (k < 0 || srv->nelicitation == CONF_MAX_STRATEGIES)
			goto bad;
		srv->elicitation[srv->nelicitation++] = (enum strategy)k;
	}
	json_array_foreach(json_object_get(o, "sampling"), i, e) {
		if (!json_is_string(e) || srv->nsampling == CONF_MAX_STRATEGIES ||
		    conf_strategy_parse(json_string_value(e), 1, &kind,
		    &target) != 0)
			goto bad;
		srv->sampling_target[srv->nsampling] = target;
		srv->sampling[srv->nsampling++] = kind;
	}
	if (json_unpack((json_t *)o, "{s:{s:I, s:I}}", "budget",
	    "requests_per_minute", &rpm, "tokens_per_day", &tpd) == 0 &&
	    rpm >= 0 && tpd >= 0) {
		srv->budget.requests_per_minute = (unsigned int)rpm;
		srv->budget.tokens_per_day = (unsigned long long)tpd;
	}
	srv->log_prompts = json_is_true(json_object_get(o, "log_prompts"));
	if (srv->transport == TRANSPORT_STDIO ? srv->command == NULL :
	    srv->url == NULL)
		goto bad;
	return (srv);
bad:
	snprintf(err, errlen, "bad server configuration: command or url");
	conf_server_free(srv);
	free(srv);
	return (NULL);
}

/* Copy one upstream's configuration, by way of its JSON form. */
struct server_conf *
conf_server_copy(const struct server_conf *srv)
{
	struct server_conf	*copy;
	json_t			*j;
	char			 err[256];

	if ((j = conf_server_to_json(srv)) == NULL)
		fatalx("conf_server_copy: %s", srv->name);
	if ((copy = conf_server_from_json(j, err, sizeof err)) == NULL)
		fatalx("conf_server_copy: %s: %s", srv->name, err);
	json_decref(j);
	copy->at = srv->at;
	return (copy);
}

/* Compare two optional strings. */
static int
str_equal(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return (a == b);
	return (strcmp(a, b) == 0);
}

/* Compare two sampling lists' targets. */
static int
targets_equal(char *const *a, char *const *b, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		if (!str_equal(a[i], b[i]))
			return (0);
	}
	return (1);
}

/*
 * Everything but required, which only the supervisor's readiness reads:
 * changing it restarts nothing.
 */
int
conf_server_equal(const struct server_conf *a, const struct server_conf *b)
{
	return (str_equal(a->name, b->name) &&
	    a->transport == b->transport &&
	    conf_strv_equal(a->command, b->command) &&
	    conf_strv_equal(a->env, b->env) &&
	    conf_strv_equal(a->pass_env, b->pass_env) &&
	    str_equal(a->cwd, b->cwd) &&
	    str_equal(a->url, b->url) &&
	    str_equal(a->prefix, b->prefix) &&
	    a->isolation == b->isolation &&
	    a->era == b->era &&
	    a->request_timeout == b->request_timeout &&
	    a->server_request_timeout == b->server_request_timeout &&
	    a->init_timeout == b->init_timeout &&
	    a->max_instances == b->max_instances &&
	    conf_strv_equal(a->headers, b->headers) &&
	    conf_upoauth_equal(a->oauth, b->oauth) &&
	    a->tls_verify == b->tls_verify &&
	    str_equal(a->ca_file, b->ca_file) &&
	    a->connect_timeout == b->connect_timeout &&
	    a->lazy == b->lazy &&
	    a->ping_interval == b->ping_interval &&
	    a->ping_timeout == b->ping_timeout &&
	    a->restart_delay == b->restart_delay &&
	    a->restart_max_delay == b->restart_max_delay &&
	    a->healthy_after == b->healthy_after &&
	    a->max_failures == b->max_failures &&
	    a->nelicitation == b->nelicitation &&
	    memcmp(a->elicitation, b->elicitation,
	    a->nelicitation * sizeof a->elicitation[0]) == 0 &&
	    a->nsampling == b->nsampling &&
	    memcmp(a->sampling, b->sampling,
	    a->nsampling * sizeof a->sampling[0]) == 0 &&
	    targets_equal(a->sampling_target, b->sampling_target,
	    a->nsampling) &&
	    a->budget.requests_per_minute == b->budget.requests_per_minute &&
	    a->budget.tokens_per_day == b->budget.tokens_per_day &&
	    a->log_prompts == b->log_prompts &&
	    str_equal(a->user, b->user) &&
	    a->rlimit_nofile == b->rlimit_nofile &&
	    a->rlimit_as == b->rlimit_as &&
	    a->max_message == b->max_message);
}
