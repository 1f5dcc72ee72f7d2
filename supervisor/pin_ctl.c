/* SPDX-License-Identifier: ISC */
/*
 * What mcpctl asks of the pins: the list (mcpctl tools pins), what changed
 * in one (mcpctl tools diff NAME) and its approval (mcpctl tools approve
 * NAME [SHA256]).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "pin.h"
#include "supervisor.h"

/* What a pin's tool is now. */
static const char *
pin_state_name(const struct pin *p)
{
	if (!p->changed)
		return ("pinned");
	return (p->held ? "held" : "changed");
}

/* A canonical text as JSON (null if it was not kept). */
static json_t *
pin_def_json(const char *text)
{
	json_t	*v;

	if (text == NULL || (v = json_loads(text, JSON_ALLOW_NUL, NULL)) ==
	    NULL)
		return (json_null());
	return (v);
}

static json_t *
pin_entry_json(const struct pin *p)
{
	char	hex[2 * PIN_DIGEST_LEN + 1];
	json_t	*o;

	pin_hex(p->digest, hex);
	o = json_pack("{s:s, s:s, s:s%, s:s, s:I, s:s}", "name", p->exposed,
	    "upstream", p->upstream, "tool", p->tool, p->toollen, "sha256",
	    hex, "pinned_at", (json_int_t)p->pinned_at, "state",
	    pin_state_name(p));
	if (p->changed) {
		pin_hex(p->seen, hex);
		json_object_set_new(o, "seen_sha256", json_string(hex));
		json_object_set_new(o, "seen_at",
		    json_integer((json_int_t)p->seen_at));
	}
	return (o);
}

/* The pin a request names; NULL (*reply set) if none. */
static struct pin *
pin_ctl_named(json_t *req, json_t **reply)
{
	const char	*name;
	struct pin	*p;
	char		 msg[256];

	if (json_unpack(req, "{s:s}", "name", &name) != 0) {
		*reply = control_error("which tool?");
		return (NULL);
	}
	if ((p = pin_lookup(name)) == NULL) {
		snprintf(msg, sizeof msg, "no tool %.100s is pinned (mcpctl "
		    "tools pins lists them)", name);
		*reply = control_error("%s", msg);
	}
	return (p);
}

/*
 * The pins, in the order they were pinned, at most limit of them (default
 * CONTROL_LIST_DEFAULT): those whose tool changed first, then the newest
 * of the others; and how many there are in all.
 */
static json_t *
pin_ctl_list(json_t *req)
{
	json_int_t	 limit = CONTROL_LIST_DEFAULT;
	struct pin	*p;
	json_t		*a, *o;
	size_t		 nchanged = 0, room, skip;

	if (json_unpack(req, "{s?I}", "limit", &limit) != 0 || limit < 1 ||
	    limit > CONTROL_LIST_MAX)
		return (control_error("pins: the number to list is from 1 "
		    "to " CONTROL_LIST_MAX_TEXT));
	TAILQ_FOREACH(p, &pins.list, entry) {
		if (p->changed)
			nchanged++;
	}
	/* Room left for unchanged ones, and how many of those to pass. */
	room = nchanged < (size_t)limit ? (size_t)limit - nchanged : 0;
	skip = pins.n - nchanged > room ? pins.n - nchanged - room : 0;
	a = json_array();
	TAILQ_FOREACH(p, &pins.list, entry) {
		if (json_array_size(a) == (size_t)limit)
			break;
		if (!p->changed && skip > 0) {
			skip--;
			continue;
		}
		json_array_append_new(a, pin_entry_json(p));
	}
	o = json_pack("{s:b, s:o, s:I, s:I, s:I}", "ok", 1, "pins", a,
	    "total", (json_int_t)pins.n, "changed", (json_int_t)nchanged,
	    "held", (json_int_t)pins.nheld);
	json_object_set_new(o, "store", pin_store_path() != NULL ?
	    json_string(pin_store_path()) : json_null());
	return (o);
}

void
pin_health(json_t *warnings)
{
	char	msg[160];

	if (pins.nheld == 0)
		return;
	snprintf(msg, sizeof msg, "%zu tool%s held back: %s definition "
	    "changed since pinned (mcpctl tools pins)", pins.nheld,
	    pins.nheld == 1 ? "" : "s", pins.nheld == 1 ? "its" : "their");
	json_array_append_new(warnings, json_string(msg));
}

json_t *
pin_control(const char *cmd, json_t *req)
{
	struct pin	*p;
	json_t		*o, *reply = NULL;
	const char	*digest = NULL;
	char		 fields[160], err[256];

	if (strcmp(cmd, "pins") == 0)
		return (pin_ctl_list(req));
	if ((p = pin_ctl_named(req, &reply)) == NULL)
		return (reply);
	if (strcmp(cmd, "pin_approve") == 0) {
		json_unpack(req, "{s?s}", "sha256", &digest);
		if (pin_approve(p, digest, err, sizeof err) != 0)
			return (control_error("%s", err));
		return (json_pack("{s:b, s:o}", "ok", 1, "pin",
		    pin_entry_json(p)));
	}
	/* pin_diff */
	o = pin_entry_json(p);
	json_object_set_new(o, "ok", json_true());
	json_object_set_new(o, "pinned", pin_def_json(p->def));
	if (p->changed) {
		json_object_set_new(o, "seen", pin_def_json(p->seen_def));
		pin_changed_fields(p->def, p->seen_def != NULL ? p->seen_def :
		    "", fields, sizeof fields);
		json_object_set_new(o, "fields", json_string(fields));
	}
	return (o);
}
