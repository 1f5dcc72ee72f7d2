/* SPDX-License-Identifier: ISC */
/*
 * mcp-demo-server's session with its client: initialize (the protocol
 * version agreed, the capabilities the client declared), ping, and the
 * logging level the client set.
 */

#define _GNU_SOURCE

#include <sys/types.h>

#include <string.h>

#include <jansson.h>

#include "demo.h"

json_t			*client_caps;	/* client capabilities */
static int		 min_level;	/* index into levels */

static const char *protocols[] = {
	"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"
};

static const char *levels[] = {
	"debug", "info", "notice", "warning", "error", "critical", "alert",
	"emergency"
};
#define NLEVELS (sizeof levels / sizeof levels[0])

/* Send a log message notification if the level is high enough. */
void
notify_log(int level, json_t *data)
{
	if (level < min_level)
		return;
	notify("notifications/message", json_pack("{s:s, s:s, s:O}",
	    "level", levels[level], "logger", "demo", "data", data));
}

/* Find a level by name. */
int
level_find(const char *name)
{
	u_int	i;

	if (name == NULL)
		return (-1);
	for (i = 0; i < NLEVELS; i++) {
		if (strcmp(levels[i], name) == 0)
			return ((int)i);
	}
	return (-1);
}

/* Get a capability the client declared, or NULL. */
json_t *
client_cap(const char *name)
{
	json_t	*cap;

	if (client_caps == NULL)
		return (NULL);
	cap = json_object_get(client_caps, name);
	return (json_is_object(cap) ? cap : NULL);
}

/* Does the client support form mode elicitation? */
int
client_form(void)
{
	json_t	*cap;

	if ((cap = client_cap("elicitation")) == NULL)
		return (0);
	/* An empty object means form only, for compatibility. */
	if (json_object_get(cap, "form") == NULL &&
	    json_object_get(cap, "url") == NULL)
		return (1);
	return (json_is_object(json_object_get(cap, "form")));
}

/* Does the client support URL mode elicitation? */
int
client_url(void)
{
	json_t	*cap;

	if ((cap = client_cap("elicitation")) == NULL)
		return (0);
	return (json_is_object(json_object_get(cap, "url")));
}

/* Handle initialize: agree a version and remember the client. */
void
method_initialize(json_t *id, json_t *params)
{
	json_t		*caps;
	const char	*version, *answer = LATEST_PROTOCOL;
	u_int		 i;

	if ((version = json_cstr(json_object_get(params,
	    "protocolVersion"))) == NULL) {
		reply_error(id, ERR_PARAMS, NULL, "Invalid params: "
		    "protocolVersion must be a string");
		return;
	}
	caps = json_object_get(params, "capabilities");
	if (caps != NULL && !json_is_object(caps)) {
		reply_error(id, ERR_PARAMS, NULL, "Invalid params: "
		    "capabilities must be an object");
		return;
	}
	for (i = 0; i < sizeof protocols / sizeof protocols[0]; i++) {
		if (strcmp(version, protocols[i]) == 0)
			answer = protocols[i];
	}

	json_decref(client_caps);
	client_caps = caps != NULL ? json_deep_copy(caps) : json_object();

	reply_result(id, json_pack("{s:s,"
	    " s:{s:{s:b}, s:{s:b, s:b}, s:{s:b}, s:{}, s:{}},"
	    " s:{s:s, s:s}, s:s}",
	    "protocolVersion", answer,
	    "capabilities",
		"tools", "listChanged", 1,
		"resources", "subscribe", 1, "listChanged", 1,
		"prompts", "listChanged", 1,
		"logging",
		"completions",
	    "serverInfo", "name", server_name, "version", DEMO_VERSION,
	    "instructions", "A demonstration server. Call the echo tool to "
	    "check the connection; see tools/list for the other tools."));
}

/* Handle ping. */
void
method_ping(json_t *id, json_t *params)
{
	(void)params;
	reply_result(id, json_object());
}

/* Handle logging/setLevel. */
void
method_set_level(json_t *id, json_t *params)
{
	int	level;

	level = level_find(json_cstr(json_object_get(params, "level")));
	if (level == -1) {
		reply_error(id, ERR_PARAMS, NULL, "Invalid params: level must "
		    "be one of debug, info, notice, warning, error, critical, "
		    "alert, emergency");
		return;
	}
	min_level = level;
	reply_result(id, json_object());
}
