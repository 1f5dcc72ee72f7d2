/*
 * Configuration reload (SIGHUP and mcpctl reload): the file is read and
 * checked in full first, and a file with an error changes nothing.  Then
 * the auth tokens are expanded again (a token that cannot be changes
 * nothing either), the limits and timeouts take effect for what comes
 * next, and the upstreams are matched by name (upstream_apply).  The
 * addresses the daemon listens on stay as they are until a restart.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "log.h"
#include "supervisor.h"
#include "xmalloc.h"

/* Keep a running address the new file changes; note it in warnings. */
static void
reload_keep(char **next, const char *now, const char *key, json_t *warnings)
{
	char	*msg;

	if (strcmp(*next, now) != 0) {
		xasprintf(&msg, "%s changed to %s: it takes effect when the "
		    "daemon restarts (still %s)", key, *next, now);
		log_warnx("reload: %s", msg);
		json_array_append_new(warnings, json_string(msg));
		free(msg);
	}
	free(*next);
	*next = xstrdup(now);
}

/* The same for a setting that may be unset. */
static void
reload_keep_optional(char **next, const char *now, const char *key,
    json_t *warnings)
{
	char	*msg;

	if ((*next == NULL) != (now == NULL) ||
	    (*next != NULL && strcmp(*next, now) != 0)) {
		xasprintf(&msg, "%s changed to %s: it takes effect when the "
		    "daemon restarts (still %s)", key, *next != NULL ? *next :
		    "none", now != NULL ? now : "none");
		log_warnx("reload: %s", msg);
		json_array_append_new(warnings, json_string(msg));
		free(msg);
	}
	free(*next);
	*next = now != NULL ? xstrdup(now) : NULL;
}

/*
 * Say what a reload did to the upstreams, as "added a b; removed c" or "no
 * upstream changed", in the report's "summary" (mcpctl prints it) and the
 * log.
 */
static void
reload_summary(json_t *report)
{
	const char	*keys[] = { "added", "changed", "removed",
			    "llm_added", "llm_changed", "llm_removed" };
	const char	*labels[] = { "added", "changed", "removed",
			    "added llm", "changed llm", "removed llm" };
	struct evbuffer	*b;
	json_t		*a, *v;
	size_t		 i, j;

	b = evbuffer_new();
	for (i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		a = json_object_get(report, keys[i]);
		if (json_array_size(a) == 0)
			continue;
		evbuffer_add_printf(b, "%s%s", evbuffer_get_length(b) > 0 ?
		    "; " : "", labels[i]);
		json_array_foreach(a, j, v)
			evbuffer_add_printf(b, " %s", json_string_value(v));
	}
	if (evbuffer_get_length(b) == 0)
		evbuffer_add_printf(b, "no upstream changed");
	json_object_set_new(report, "summary", json_stringn((const char *)
	    evbuffer_pullup(b, -1), evbuffer_get_length(b)));
	log_info("reloaded %s: %s", conf->file, json_string_value(
	    json_object_get(report, "summary")));
	evbuffer_free(b);
}

static json_t	*reload_warnings;	/* of the reload under way */

/* Log a warning of the new file's check and report it to mcpctl. */
static void
reload_warn(const char *msg)
{
	log_warnx("reload: %s", msg);
	if (reload_warnings != NULL)
		json_array_append_new(reload_warnings, json_string(msg));
}

/* Reload the configuration file; the reply for mcpctl. */
json_t *
reload(void)
{
	struct conf	*next, *old;
	json_t		*report, *warnings;
	char		 err[1024], again[1024];

	log_info("reloading %s", conf->file);
	notify_reloading();
	if ((next = conf_load(conf->file, err, sizeof err)) == NULL) {
		log_warnx("reload: %s; nothing changed", err);
		notify_ready();
		return (json_pack("{s:b, s:s}", "ok", 0, "error", err));
	}
	reload_warnings = warnings = json_array();
	if (preflight(next, PREFLIGHT_RELOAD, reload_warn, err,
	    sizeof err) != 0 || auth_configure(next, err, sizeof err) != 0 ||
	    continuation_configure(next, err, sizeof err) != 0) {
		log_warnx("reload: %s; nothing changed", err);
		conf_free(next);
		json_decref(warnings);
		reload_warnings = NULL;
		notify_ready();
		return (json_pack("{s:b, s:s}", "ok", 0, "error", err));
	}
	reload_warnings = NULL;
	/* The access log is reopened (logrotate), perhaps elsewhere. */
	if (access_log_open(next, err, sizeof err) != 0) {
		log_warnx("reload: %s; nothing changed", err);
		conf_free(next);
		json_decref(warnings);
		if (auth_configure(conf, again, sizeof again) != 0)
			log_warnx("reload: %s", again);
		notify_ready();
		return (json_pack("{s:b, s:s}", "ok", 0, "error", err));
	}
	reload_keep(&next->listen, conf->listen, "listen", warnings);
	reload_keep(&next->instance, conf->instance, "instance", warnings);
	reload_keep_optional(&next->metrics_listen, conf->metrics_listen,
	    "metrics_listen", warnings);
	if (control_arg != NULL) {
		free(next->control);
		next->control = xstrdup(conf->control);
	} else
		reload_keep(&next->control, conf->control, "control",
		    warnings);

	old = conf;
	conf = next;
	report = json_pack("{s:b, s:o}", "ok", 1, "warnings", warnings);
	upstream_apply(conf, report);
	provider_apply(conf, report);
	session_configure();
	http_configure();
	proxy_configure();
	conf_free(old);
	reload_summary(report);
	notify_ready();
	return (report);
}
