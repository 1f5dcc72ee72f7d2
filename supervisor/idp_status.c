/* SPDX-License-Identifier: ISC */
/*
 * OAuth issuers as mcpctl sees them: status (never a secret), health,
 * and refresh-keys.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "idp_priv.h"
#include "log.h"
#include "supervisor.h"
#include "xmalloc.h"

/* One issuer for mcpctl status: never the secret. */
static json_t *
idp_json(struct idp *d)
{
	json_t	*o;
	time_t	 now = time(NULL);

	o = json_pack("{s:s, s:s, s:I, s:i, s:I, s:I, s:I, s:I, s:I, s:I, "
	    "s:b}",
	    "issuer", d->ic->issuer,
	    "state", idp_state_names[d->state],
	    "pid", (json_int_t)d->proc.pid,
	    "restarts", (int)d->proc.restarts,
	    "keys", (json_int_t)d->nkeys,
	    "jwks_fetches", (json_int_t)d->jwks_fetches,
	    "key_sets", (json_int_t)d->key_sets,
	    "refreshes", (json_int_t)d->refreshes,
	    "refreshes_limited", (json_int_t)d->refreshes_limited,
	    "introspections", (json_int_t)d->introspections,
	    "introspection", d->ic->introspection.client_id != NULL);
	json_object_set_new(o, "keyless", json_boolean(d->keyless));
	json_object_set_new(o, "login", json_boolean(
	    d->ic->login.client_id != NULL));
	json_object_set_new(o, "reachable", d->server < 0 ? json_null() :
	    json_boolean(d->server));
	json_object_set_new(o, "fetched", d->fetched > 0 ?
	    json_integer(d->fetched) : json_null());
	json_object_set_new(o, "keys_age", d->fetched > 0 ?
	    json_integer(now - d->fetched) : json_null());
	json_object_set_new(o, "introspection_errors",
	    json_integer((json_int_t)d->introspection_errors));
	if (d->server == 0 && d->server_error != NULL) {
		json_object_set_new(o, "last_error",
		    json_string(d->server_error));
		json_object_set_new(o, "last_error_at",
		    json_integer(d->server_error_at));
	} else if (d->state != IDP_READY && d->proc.last_error != NULL) {
		json_object_set_new(o, "last_error",
		    json_string(d->proc.last_error));
		json_object_set_new(o, "last_error_at",
		    json_integer(d->proc.last_error_at));
	} else
		json_object_set_new(o, "last_error", json_null());
	return (o);
}

/* mcpctl refresh-keys asks and does not wait. */
static void
idp_refresh_noop(void *arg)
{
}

json_t *
idp_control_refresh(const char *issuer)
{
	struct idp	*d;
	json_t		*a = json_array();
	uint64_t	 before;
	size_t		 i;

	if (issuer != NULL && idp_find(issuer) == NULL) {
		json_decref(a);
		return (control_error("no issuer is configured as %.300s",
		    issuer));
	}
	for (i = 0; (d = idp_nth(i)) != NULL; i++) {
		if (issuer != NULL && strcmp(d->ic->issuer, issuer) != 0)
			continue;
		before = d->refreshes;
		idp_refresh(d, idp_refresh_noop, NULL);
		log_info("issuer %s: keys asked for by mcpctl%s",
		    d->ic->issuer, d->refreshes > before ? "" :
		    " (not now: the last request was under 30 s ago, or "
		    "the worker is not ready)");
		json_array_append_new(a, json_pack("{s:s, s:b}", "issuer",
		    d->ic->issuer, "asked", d->refreshes > before));
	}
	return (json_pack("{s:b, s:o}", "ok", 1, "issuers", a));
}

json_t *
idp_status_json(void)
{
	json_t	*a = json_array();
	size_t	 i;

	for (i = 0; i < idp_count(); i++)
		json_array_append_new(a, idp_json(idp_nth(i)));
	return (a);
}

void
idp_health(json_t *problems, json_t *warnings)
{
	struct idp	*d;
	char		*msg, age[32];
	const char	*why;
	size_t		 i;

	for (i = 0; (d = idp_nth(i)) != NULL; i++) {
		why = d->server == 0 && d->server_error != NULL ?
		    d->server_error : d->state != IDP_READY ?
		    (d->proc.last_error != NULL ? d->proc.last_error :
		    idp_state_names[d->state]) : NULL;
		if (d->keyless) {
			/* Nothing verifies its tokens while it is down. */
			if (why == NULL)
				continue;
			xasprintf(&msg, "issuer %s (opaque tokens only) is "
			    "unreachable: %s", d->ic->issuer, why);
			json_array_append_new(problems, json_string(msg));
			free(msg);
		} else if (d->jwks == NULL) {
			xasprintf(&msg, "issuer %s has no keys: %s",
			    d->ic->issuer, why != NULL ? why :
			    "none fetched yet");
			json_array_append_new(problems, json_string(msg));
			free(msg);
		} else if (why != NULL) {
			snprintf(age, sizeof age, "%llds", (long long)
			    (time(NULL) - d->fetched));
			xasprintf(&msg, "issuer %s is unreachable (%s); its "
			    "%zu keys of %s ago are used", d->ic->issuer, why,
			    d->nkeys, age);
			json_array_append_new(warnings, json_string(msg));
			free(msg);
		}
	}
}
