/* SPDX-License-Identifier: ISC */
/*
 * An upstream's traffic policy (supervisor/limit.c, breaker.c): its keys
 * in servers = ( ... ), its JSON form and its printed form.  Only the
 * supervisor reads it: changing it restarts nothing.
 */
#include "config.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <libconfig.h>

#include "conf.h"
#include "conf_priv.h"
#include "xmalloc.h"

/* The defaults (mcp-supervisord.conf(5) argues them). */
void
conf_traffic_defaults(struct traffic_conf *t)
{
	memset(t, 0, sizeof *t);
	t->max_concurrent = 0;
	t->max_queued = 64;
	t->queue_timeout = 30;
	t->breaker_failures = 5;
	t->breaker_window = 60;
	t->breaker_cooldown = 30;
}

/* One setting of a server's group: 1 if it is ours (read, or -1 if
 * bad), 0 if not. */
int
conf_traffic_key(struct conf_ctx *ctx, const config_setting_t *s,
    const char *key, struct traffic_conf *t)
{
	static const struct {
		const char	*key;
		size_t		 off;
		long long	 min, max;
	} keys[] = {
		{ "max_concurrent", offsetof(struct traffic_conf,
		    max_concurrent), 0, 100000 },
		{ "max_queued", offsetof(struct traffic_conf, max_queued),
		    0, 100000 },
		{ "queue_timeout", offsetof(struct traffic_conf,
		    queue_timeout), 1, 3600 },
		{ "breaker_failures", offsetof(struct traffic_conf,
		    breaker_failures), 0, 10000 },
		{ "breaker_window", offsetof(struct traffic_conf,
		    breaker_window), 1, 86400 },
		{ "breaker_cooldown", offsetof(struct traffic_conf,
		    breaker_cooldown), 1, 86400 },
	};
	size_t	i;

	for (i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		if (strcmp(key, keys[i].key) != 0)
			continue;
		if (conf_get_seconds(ctx, s, keys[i].min, keys[i].max,
		    (unsigned int *)(void *)((char *)t + keys[i].off)) != 0)
			return (-1);
		return (1);
	}
	return (0);
}

void
conf_traffic_to_json(const struct traffic_conf *t, json_t *o)
{
	json_object_set_new(o, "traffic", json_pack("{s:I, s:I, s:I, s:I, "
	    "s:I, s:I}",
	    "max_concurrent", (json_int_t)t->max_concurrent,
	    "max_queued", (json_int_t)t->max_queued,
	    "queue_timeout", (json_int_t)t->queue_timeout,
	    "breaker_failures", (json_int_t)t->breaker_failures,
	    "breaker_window", (json_int_t)t->breaker_window,
	    "breaker_cooldown", (json_int_t)t->breaker_cooldown));
}

/* Read it back; the defaults where it is absent (a worker's CONFIG). */
int
conf_traffic_from_json(const json_t *o, struct traffic_conf *t)
{
	json_int_t	mc, mq, qt, bf, bw, bc;

	conf_traffic_defaults(t);
	if ((o = json_object_get(o, "traffic")) == NULL)
		return (0);
	if (json_unpack((json_t *)o, "{s:I, s:I, s:I, s:I, s:I, s:I}",
	    "max_concurrent", &mc, "max_queued", &mq, "queue_timeout", &qt,
	    "breaker_failures", &bf, "breaker_window", &bw,
	    "breaker_cooldown", &bc) != 0 || mc < 0 || mq < 0 || qt <= 0 ||
	    bf < 0 || bw <= 0 || bc <= 0 || mc > 100000 || mq > 100000 ||
	    qt > 3600 || bf > 10000 || bw > 86400 || bc > 86400)
		return (-1);
	t->max_concurrent = (unsigned int)mc;
	t->max_queued = (unsigned int)mq;
	t->queue_timeout = (unsigned int)qt;
	t->breaker_failures = (unsigned int)bf;
	t->breaker_window = (unsigned int)bw;
	t->breaker_cooldown = (unsigned int)bc;
	return (0);
}

void
conf_traffic_print(FILE *f, const struct traffic_conf *t)
{
	fprintf(f, "    max_concurrent = %u;\n    max_queued = %u;\n"
	    "    queue_timeout = %u;\n", t->max_concurrent, t->max_queued,
	    t->queue_timeout);
	fprintf(f, "    breaker_failures = %u;\n    breaker_window = %u;\n"
	    "    breaker_cooldown = %u;\n", t->breaker_failures,
	    t->breaker_window, t->breaker_cooldown);
}

/* Read requests per second: a number from 0.001 to 1000000. */
static int
get_rate(struct conf_ctx *ctx, const config_setting_t *s, double *out)
{
	double	v;

	switch (config_setting_type(s)) {
	case CONFIG_TYPE_FLOAT:
		v = config_setting_get_float(s);
		break;
	case CONFIG_TYPE_INT:
		v = config_setting_get_int(s);
		break;
	case CONFIG_TYPE_INT64:
		v = (double)config_setting_get_int64(s);
		break;
	default:
		v = -1;
		break;
	}
	if (!(v >= 0.001 && v <= 1000000))
		return (conf_error(ctx, s, "rate must be a number of requests "
		    "per second from 0.001 to 1000000"));
	*out = v;
	return (0);
}

/* Read one rule of rate_limits. */
static int
parse_rate(struct conf_ctx *ctx, const config_setting_t *g,
    struct rate_conf *rc)
{
	const config_setting_t	*s;
	const char		*key;
	long long		 ll;
	int			 i, n, have_rate = 0, have_burst = 0;
	int			 have_conc = 0;

	rc->at = conf_where(ctx, g);
	if (!config_setting_is_group(g))
		return (conf_error(ctx, g, "each entry of rate_limits must be a "
		    "group { name = ...; rate = ...; ... }"));
	n = config_setting_length(g);
	for (i = 0; i < n; i++) {
		s = config_setting_get_elem(g, (unsigned int)i);
		key = config_setting_name(s);
		if (strcmp(key, "name") == 0) {
			/* It labels the metrics: short and plain. */
			if (conf_get_name(ctx, s, "rate limit", &rc->name) != 0)
				return (-1);
		} else if (strcmp(key, "client") == 0) {
			if (conf_get_string(ctx, s, &rc->client, 0) != 0)
				return (-1);
		} else if (strcmp(key, "upstream") == 0) {
			if (conf_get_string(ctx, s, &rc->upstream, 0) != 0)
				return (-1);
		} else if (strcmp(key, "tool") == 0) {
			if (conf_get_string(ctx, s, &rc->tool, 0) != 0)
				return (-1);
		} else if (strcmp(key, "rate") == 0) {
			if (get_rate(ctx, s, &rc->rate) != 0)
				return (-1);
			have_rate = 1;
		} else if (strcmp(key, "burst") == 0) {
			if (conf_get_int(ctx, s, 1, 1000000, &ll) != 0)
				return (-1);
			rc->burst = (unsigned int)ll;
			have_burst = 1;
		} else if (strcmp(key, "shared") == 0) {
			if (conf_get_bool(ctx, s, &rc->shared) != 0)
				return (-1);
		} else if (strcmp(key, "concurrent") == 0) {
			if (conf_get_int(ctx, s, 1, 1000000, &ll) != 0)
				return (-1);
			rc->concurrent = (unsigned int)ll;
			have_conc = 1;
		} else
			return (conf_error(ctx, s, "unknown rate limit setting "
			    "\"%s\"", key));
	}
	if (rc->name == NULL)
		return (conf_error(ctx, g, "rate limit has no name"));
	if (!have_rate && !have_conc)
		return (conf_error(ctx, g, "rate limit %s has neither a rate "
		    "nor concurrent", rc->name));
	if (!have_rate && have_burst)
		return (conf_error(ctx, g, "rate limit %s has a burst but no "
		    "rate", rc->name));
	/* A second's worth by default, and at least one call. */
	if (have_rate && !have_burst)
		rc->burst = rc->rate < 1 ? 1 : (unsigned int)(rc->rate + 0.999);
	return (0);
}

int
conf_parse_rate_limits(struct conf_ctx *ctx, const config_setting_t *list,
    struct conf *conf)
{
	char	where[512];
	int	i, j, n;

	if ((n = conf_list_length(ctx, list, "rate_limits must be a list: "
	    "rate_limits = ( { ... }, { ... } );", CONF_MAX_RATE_LIMITS,
	    "rate limits")) < 0)
		return (-1);
	conf_rate_limits_free(conf);
	conf->rate_limits = xcalloc((size_t)n + 1, sizeof *conf->rate_limits);
	for (i = 0; i < n; i++) {
		conf->nrate_limits++;
		if (parse_rate(ctx, config_setting_get_elem(list,
		    (unsigned int)i), &conf->rate_limits[i]) != 0)
			return (-1);
		for (j = 0; j < i; j++) {
			if (strcmp(conf->rate_limits[j].name,
			    conf->rate_limits[i].name) == 0)
				return (conf_error_at(ctx,
				    conf->rate_limits[i].at, "rate limit "
				    "name \"%s\" already used on %s",
				    conf->rate_limits[i].name, conf_at_text(ctx,
				    conf->rate_limits[j].at,
				    conf->rate_limits[i].at, where,
				    sizeof where)));
		}
	}
	return (0);
}

void
conf_rate_limits_free(struct conf *conf)
{
	size_t	i;

	for (i = 0; i < conf->nrate_limits; i++) {
		free(conf->rate_limits[i].name);
		free(conf->rate_limits[i].client);
		free(conf->rate_limits[i].upstream);
		free(conf->rate_limits[i].tool);
	}
	free(conf->rate_limits);
	conf->rate_limits = NULL;
	conf->nrate_limits = 0;
}

/* Print a string as the configuration writes it. */
static void
print_quoted(FILE *f, const char *key, const char *s)
{
	if (s == NULL)
		return;
	fprintf(f, " %s = \"", key);
	for (; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\x%02x", (unsigned char)*s);
		else
			fputc(*s, f);
	}
	fprintf(f, "\";");
}

void
conf_rate_limits_print(FILE *f, const struct conf *conf)
{
	const struct rate_conf	*rc;
	size_t			 i;

	if (conf->nrate_limits == 0)
		return;
	fprintf(f, "rate_limits = (");
	for (i = 0; i < conf->nrate_limits; i++) {
		rc = &conf->rate_limits[i];
		fprintf(f, "%s\n  {", i > 0 ? "," : "");
		print_quoted(f, "name", rc->name);
		print_quoted(f, "client", rc->client);
		print_quoted(f, "upstream", rc->upstream);
		print_quoted(f, "tool", rc->tool);
		if (rc->rate > 0) {
			fprintf(f, " rate = ");
			conf_print_double(f, rc->rate);
			fprintf(f, "; burst = %u;", rc->burst);
		}
		if (rc->concurrent > 0)
			fprintf(f, " concurrent = %u;", rc->concurrent);
		fprintf(f, " shared = %s; }", rc->shared ? "true" : "false");
	}
	fprintf(f, "\n);\n");
}
