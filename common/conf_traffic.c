/* SPDX-License-Identifier: ISC */
/*
 * An upstream's traffic policy (supervisor/limit.c, breaker.c): its keys
 * in servers = ( ... ), its JSON form and its printed form.  Only the
 * supervisor reads it: changing it restarts nothing.
 */
#include "config.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>
#include <libconfig.h>

#include "conf.h"
#include "conf_priv.h"

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
