/* SPDX-License-Identifier: ISC */
/*
 * Configuration reload (SIGHUP and mcpctl reload).  The access log is
 * reopened where it is first, for logrotate, whatever the file holds.
 * Then the file is read and checked in full, the auth tokens and the
 * request_state_key expanded again and the access log opened where the
 * file says; any of these failing changes nothing.  Then the limits and
 * timeouts take effect for what comes next, and the upstreams are matched
 * by name (upstream_apply).  The addresses the daemon listens on and the
 * instance name stay as they are until a restart.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "log.h"
#include "supervisor.h"
#include "xmalloc.h"

/* Seconds a token is honoured past its exp under a configuration. */
static unsigned int
reload_leeway(const struct conf *c)
{
	return (c->oauth != NULL ? c->oauth->leeway : 0);
}

/*
 * Keep a running address the new file changes; note it in warnings, logged
 * once the reload is certain (reload_log_warnings): a refused one has no
 * change to wait for.
 */
static void
reload_keep(char **next, const char *now, const char *key, json_t *warnings)
{
	char	*msg;

	if (strcmp(*next, now) != 0) {
		xasprintf(&msg, "%s changed to %s: it takes effect when the "
		    "daemon restarts (still %s)", key, *next, now);
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
		json_array_append_new(warnings, json_string(msg));
		free(msg);
	}
	free(*next);
	*next = now != NULL ? xstrdup(now) : NULL;
}

void
reload_report_name(json_t *report, const char *key, const char *name)
{
	json_t	*a;

	if ((a = json_object_get(report, key)) == NULL) {
		a = json_array();
		json_object_set_new(report, key, a);
	}
	json_array_append_new(a, json_string(name));
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
			    "llm_added", "llm_changed", "llm_removed",
			    "issuer_added", "issuer_changed", "issuer_removed" };
	const char	*labels[] = { "added", "changed", "removed",
			    "added llm", "changed llm", "removed llm",
			    "added issuer", "changed issuer", "removed issuer" };
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

/* Keep a warning of the new file's checks for mcpctl and the log. */
static void
reload_warn(const char *msg)
{
	if (reload_warnings != NULL)
		json_array_append_new(reload_warnings, json_string(msg));
}

/* Log the warnings of a reload that goes ahead. */
static void
reload_log_warnings(const json_t *warnings)
{
	const json_t	*v;
	size_t		 i;

	json_array_foreach(warnings, i, v)
		log_warnx("reload: %s", json_string_value(v));
}

/* Move, write or remove the lock file as the reloaded ws_lockfile and
 * ws_path say; a failure is a warning, the old file kept. */
static void
reload_lockfile(json_t *warnings)
{
	char	err[512];

	if (auth_lockfile_apply(conf, listen_bound, err, sizeof err) != 0) {
		log_warnx("reload: %s", err);
		json_array_append_new(warnings, json_string(err));
	}
}

/*
 * Reload failed: log it, say so to mcpctl; nothing changed.  reopen is why
 * the access log could not be reopened where it was, or empty: logged too,
 * unless it is the very error (the same file refused twice).
 */
static json_t *
reload_refused(const char *err, const char *reopen)
{
	if (reopen[0] != '\0' && strcmp(reopen, err) != 0)
		log_warnx("reload: %s", reopen);
	log_warnx("reload: %s; nothing changed", err);
	notify_ready();
	return (control_error("%s", err));
}

/*
 * Reload the configuration file; the reply for mcpctl.  All or nothing:
 * every step that can fail (the file, its checks, the tokens, the
 * request_state_key, the access log) runs before anything changes, and
 * what those steps prepared is taken into use only once all have passed.
 */
json_t *
reload(void)
{
	struct conf		*next, *old;
	struct auth_table	 tokens;
	struct state_key	 key;
	json_t			*report, *warnings;
	char			 err[1024], reopen[1024] = "";

	log_info("reloading %s", conf->file);
	notify_reloading();
	/*
	 * logrotate's kill -HUP: the access log is reopened where it is
	 * first, so that a file the reload refuses does not leave its lines
	 * going to the rotated file.
	 */
	if (access_log_open(conf, reopen, sizeof reopen) == 0)
		reopen[0] = '\0';
	if ((next = conf_load(conf->file, err, sizeof err)) == NULL)
		return (reload_refused(err, reopen));
	reload_warnings = warnings = json_array();
	/*
	 * What waits for a restart keeps its running value, the instance
	 * for requestState tokens too, first: the checks below warn of the
	 * addresses in use.
	 */
	reload_keep(&next->listen, conf->listen, "listen", warnings);
	reload_keep(&next->instance, conf->instance, "instance", warnings);
	reload_keep(&next->state_dir, conf->state_dir, "state_dir", warnings);
	reload_keep_optional(&next->metrics_listen, conf->metrics_listen,
	    "metrics_listen", warnings);
	if (control_arg != NULL) {
		free(next->control);
		next->control = xstrdup(conf->control);
	} else
		reload_keep(&next->control, conf->control, "control",
		    warnings);
	if (preflight(next, PREFLIGHT_RELOAD | listen_scope, NULL, reload_warn,
	    err, sizeof err) != 0) {
		reload_warnings = NULL;
		json_decref(warnings);
		conf_free(next);
		return (reload_refused(err, reopen));
	}
	reload_warnings = NULL;
	if (auth_prepare(next, &tokens, err, sizeof err) != 0) {
		json_decref(warnings);
		conf_free(next);
		return (reload_refused(err, reopen));
	}
	if (continuation_key(next, &key, err, sizeof err) != 0) {
		auth_discard(&tokens);
		json_decref(warnings);
		conf_free(next);
		return (reload_refused(err, reopen));
	}
	/* The access log is reopened (logrotate), perhaps elsewhere; it
	 * changes nothing when it fails. */
	if (access_log_open(next, err, sizeof err) != 0) {
		explicit_bzero(&key, sizeof key);
		auth_discard(&tokens);
		json_decref(warnings);
		conf_free(next);
		return (reload_refused(err, reopen));
	}

	/* Nothing fails from here on. */
	reload_log_warnings(warnings);
	auth_commit(&tokens);
	continuation_apply(next, &key);

	old = conf;
	conf = next;
	oauth_configure(conf);
	if (reload_leeway(old) != reload_leeway(conf))
		http_conns_expire_again();
	report = json_pack("{s:b, s:o}", "ok", 1, "warnings", warnings);
	upstream_apply(conf, report);
	provider_apply(conf, report);
	idp_apply(conf, report);
	trace_apply(old->tracing);
	reload_lockfile(warnings);
	session_configure();
	ctools_configure();
	http_configure();
	proxy_configure();
	rate_configure();
	tool_search_configure();
	conf_free(old);
	reload_summary(report);
	notify_ready();
	return (report);
}
