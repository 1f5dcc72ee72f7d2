/* SPDX-License-Identifier: ISC */
/*
 * tracing = { ... }: where the gateway's spans go (an OTLP/HTTP
 * collector), how many new traces it samples, and how much it holds.
 * Off when absent.
 */
#include "config.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libconfig.h>

#include "conf.h"
#include "conf_priv.h"
#include "xmalloc.h"

void
conf_trace_free(struct trace_conf *tc)
{
	if (tc == NULL)
		return;
	free(tc->endpoint);
	conf_strv_free(tc->headers);
	free(tc->service_name);
	free(tc);
}

/* Read the sampling ratio: a number from 0 to 1. */
static int
get_ratio(struct conf_ctx *ctx, const config_setting_t *s, double *out)
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
		v = -1;
		break;
	}
	if (!(v >= 0 && v <= 1))
		return (conf_error(ctx, s, "tracing: sample must be a number "
		    "from 0 to 1"));
	*out = v;
	return (0);
}

/* Is an endpoint a URL the exporter may post to: http or https, a host,
 * no user information (a secret goes in headers), one line? */
static int
endpoint_ok(const char *u)
{
	const char	*host, *end;

	if (strncmp(u, "http://", 7) == 0)
		host = u + 7;
	else if (strncmp(u, "https://", 8) == 0)
		host = u + 8;
	else
		return (0);
	end = host + strcspn(host, "/?#");
	if (end == host || memchr(host, '@', (size_t)(end - host)) != NULL)
		return (0);
	return (strpbrk(u, " \t\r\n") == NULL && strlen(u) <= 2048);
}

int
conf_parse_tracing(struct conf_ctx *ctx, const config_setting_t *g,
    struct conf *conf)
{
	struct trace_conf	*tc;
	config_setting_t	*s;
	const char		*key;
	long long		 ll;
	int			 i, n;

	if (!config_setting_is_group(g))
		return (conf_error(ctx, g, "tracing must be a group { endpoint "
		    "= \"http://...:4318/v1/traces\"; }"));
	conf_trace_free(conf->tracing);
	tc = conf->tracing = xcalloc(1, sizeof *tc);
	tc->at = conf_where(ctx, g);
	tc->sample = 1.0;
	tc->batch = CONF_TRACE_BATCH;
	tc->queue = CONF_TRACE_QUEUE;
	tc->timeout = 10;
	n = config_setting_length(g);
	for (i = 0; i < n; i++) {
		s = config_setting_get_elem(g, (unsigned int)i);
		key = config_setting_name(s);
		if (strcmp(key, "endpoint") == 0) {
			if (conf_get_string(ctx, s, &tc->endpoint, 0) != 0)
				return (-1);
			if (!endpoint_ok(tc->endpoint))
				return (conf_error(ctx, s, "tracing: endpoint "
				    "must be an http:// or https:// URL with a "
				    "host and no user information"));
		} else if (strcmp(key, "sample") == 0) {
			if (get_ratio(ctx, s, &tc->sample) != 0)
				return (-1);
		} else if (strcmp(key, "headers") == 0) {
			if (conf_get_headers(ctx, s, &tc->headers) != 0)
				return (-1);
		} else if (strcmp(key, "service_name") == 0) {
			if (conf_get_string(ctx, s, &tc->service_name, 0) != 0)
				return (-1);
			if (strlen(tc->service_name) > 256)
				return (conf_error(ctx, s, "tracing: "
				    "service_name is longer than 256 bytes"));
		} else if (strcmp(key, "batch") == 0) {
			if (conf_get_int(ctx, s, 1, 4096, &ll) != 0)
				return (-1);
			tc->batch = (unsigned int)ll;
		} else if (strcmp(key, "queue") == 0) {
			if (conf_get_int(ctx, s, 1, 1000000, &ll) != 0)
				return (-1);
			tc->queue = (unsigned int)ll;
		} else if (strcmp(key, "timeout") == 0) {
			if (conf_get_seconds(ctx, s, 1, 300, &tc->timeout) != 0)
				return (-1);
		} else
			return (conf_error(ctx, s, "tracing: unknown setting "
			    "\"%s\"", key));
	}
	if (tc->endpoint == NULL)
		return (conf_error(ctx, g, "tracing needs an endpoint"));
	if (tc->service_name == NULL)
		tc->service_name = xstrdup("mcp-supervisord");
	if (tc->queue < tc->batch)
		return (conf_error(ctx, g, "tracing: queue (%u) is smaller "
		    "than batch (%u)", tc->queue, tc->batch));
	return (0);
}

int
conf_trace_equal(const struct trace_conf *a, const struct trace_conf *b)
{
	if (a == NULL || b == NULL)
		return (a == b);
	return (strcmp(a->endpoint, b->endpoint) == 0 &&
	    a->sample == b->sample &&
	    conf_strv_equal(a->headers, b->headers) &&
	    strcmp(a->service_name, b->service_name) == 0 &&
	    a->batch == b->batch && a->queue == b->queue &&
	    a->timeout == b->timeout);
}

void
conf_trace_print(FILE *f, const struct trace_conf *tc)
{
	const char	*eq;
	size_t		 i;

	if (tc == NULL)
		return;
	fprintf(f, "tracing = {\n  endpoint = ");
	conf_print_string(f, tc->endpoint);
	fprintf(f, ";\n  sample = ");
	conf_print_double(f, tc->sample);
	fprintf(f, ";\n  service_name = ");
	conf_print_string(f, tc->service_name);
	fprintf(f, ";\n  batch = %u;\n  queue = %u;\n  timeout = %u;\n",
	    tc->batch, tc->queue, tc->timeout);
	if (tc->headers != NULL) {
		fprintf(f, "  headers = {");
		for (i = 0; tc->headers[i] != NULL; i++) {
			eq = strchr(tc->headers[i], ':');
			fprintf(f, " %.*s = ", (int)(eq - tc->headers[i]),
			    tc->headers[i]);
			conf_print_string(f, eq + 2);
			fprintf(f, ";");
		}
		fprintf(f, " };\n");
	}
	fprintf(f, "};\n");
}
