/* SPDX-License-Identifier: ISC */
/*
 * The operator's overrides of an upstream's tools (its tools = ( ... ) in
 * the configuration): a tool exposed under another name, with another
 * title, description or annotations, or hidden.  The catalog applies them
 * when it merges (catalog_merge_named): a hidden tool is left out; a
 * renamed one is exposed under its new name (no prefix), which collides
 * like any other (the earlier upstream keeps it, the other is reported);
 * calls reach the upstream under its own name, as every exposed name
 * does.  What is pinned (pin.c) is what the upstream said, before this.
 */
#include "config.h"

#include <string.h>

#include "supervisor.h"

const struct tool_override *
override_find(const struct upstream *up, const char *tool, size_t len)
{
	const struct server_conf	*sc = pin_server_conf(up);

	if (sc == NULL || sc->noverrides == 0)
		return (NULL);
	return (conf_override_find(sc, tool, len));
}

/*
 * The tool is a shallow copy of the upstream's item: its annotations are
 * copied before they are changed, so that what the upstream said (and
 * what is pinned) stays as it was.
 */
void
override_apply(const struct tool_override *o, json_t *tool)
{
	json_t	*a = NULL;
	int	 h;

	if (o->title != NULL)
		json_object_set_new(tool, "title", json_string(o->title));
	if (o->description != NULL)
		json_object_set_new(tool, "description",
		    json_string(o->description));
	for (h = 0; h < CONF_NHINTS; h++) {
		if (o->hints[h] == CONF_HINT_UNSET)
			continue;
		if (a == NULL) {
			a = json_object_get(tool, "annotations");
			a = json_is_object(a) ? json_copy(a) : json_object();
			json_object_set_new(tool, "annotations", a);
		}
		json_object_set_new(a, conf_hint_name((enum conf_hint)h),
		    json_boolean(o->hints[h]));
	}
}
