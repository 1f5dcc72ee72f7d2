/* SPDX-License-Identifier: ISC */
/*
 * mcp-demo-server's resources: the readme, the counter, the logo and the
 * item template; reading them, and subscriptions to them.
 */

#define _GNU_SOURCE

#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "demo.h"

unsigned long long	 counter;	/* demo://counter */
json_t			*subscriptions;	/* keys: subscribed URIs */

static const char readme_text[] =
    "mcp-demo-server\n"
    "\n"
    "A small MCP server for trying out clients and gateways.\n"
    "It offers tools, resources and prompts; see mcp-demo-server(1).\n";

/* A 16x16 palette PNG: a box with a cross in it. */
static const char logo_png[] =
    "iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAMAAAAoLQ9TAAAACVBMVEX///8gQKDgYCCb"
    "FHboAAAAQklEQVR42nXPSQ4AIAgDwNL/P1rWSGrswWUiijAJjFihA5YQAVd8kTASU0FJ"
    "Dg2xqWMDYJd9QUv0Un1WG9PWn89JDj6wAHV555riAAAAAElFTkSuQmCC";
#define LOGO_SIZE 144

/* Handle resources/list. */
void
method_resources_list(json_t *id, json_t *params)
{
	reply_page(id, params, "resources", json_pack("["
	    "{s:s, s:s, s:s, s:s, s:s},"
	    "{s:s, s:s, s:s, s:s, s:s},"
	    "{s:s, s:s, s:s, s:s, s:s, s:i}]",
	    "uri", "demo://readme", "name", "readme", "title", "Read me",
	    "description", "What this server is", "mimeType", "text/plain",
	    "uri", "demo://counter", "name", "counter", "title", "Counter",
	    "description", "A number the touch tool increments",
	    "mimeType", "text/plain",
	    "uri", "demo://logo", "name", "logo", "title", "Logo",
	    "description", "A small picture", "mimeType", "image/png",
	    "size", LOGO_SIZE));
}

/* Handle resources/templates/list. */
void
method_templates_list(json_t *id, json_t *params)
{
	reply_page(id, params, "resourceTemplates", json_pack(
	    "[{s:s, s:s, s:s, s:s, s:s}]", "uriTemplate", "demo://item/{id}",
	    "name", "item", "title", "Item", "description",
	    "An item by id; any id exists", "mimeType", "text/plain"));
}

/* Get the uri parameter. */
static const char *
param_uri(json_t *id, json_t *params)
{
	const char	*uri;

	if ((uri = json_cstr(json_object_get(params, "uri"))) == NULL) {
		reply_error(id, ERR_PARAMS, NULL,
		    "Invalid params: uri must be a string");
	}
	return (uri);
}

/* Handle resources/read. */
void
method_resources_read(json_t *id, json_t *params)
{
	const char	*uri, *item = "demo://item/";
	char		 buf[32];
	json_t		*text;

	if ((uri = param_uri(id, params)) == NULL)
		return;

	if (strcmp(uri, "demo://logo") == 0) {
		reply_result(id, json_pack("{s:[{s:s, s:s, s:s}]}", "contents",
		    "uri", uri, "mimeType", "image/png", "blob", logo_png));
		return;
	}
	if (strcmp(uri, "demo://readme") == 0)
		text = json_string(readme_text);
	else if (strcmp(uri, "demo://counter") == 0) {
		snprintf(buf, sizeof buf, "%llu", counter);
		text = json_string(buf);
	} else if (strncmp(uri, item, strlen(item)) == 0 &&
	    uri[strlen(item)] != '\0') {
		text = json_pack("s+", "item ", uri + strlen(item));
	} else {
		reply_error(id, ERR_NOT_FOUND, json_pack("{s:s}", "uri", uri),
		    "Resource not found");
		return;
	}
	reply_result(id, json_pack("{s:[{s:s, s:s, s:o}]}", "contents",
	    "uri", uri, "mimeType", "text/plain", "text", text));
}

/* Handle resources/subscribe. */
void
method_subscribe(json_t *id, json_t *params)
{
	const char	*uri;

	if ((uri = param_uri(id, params)) == NULL)
		return;
	if (json_object_get(subscriptions, uri) == NULL) {
		if (json_object_size(subscriptions) >= MAX_SUBSCRIPTIONS) {
			reply_error(id, ERR_INTERNAL, NULL,
			    "too many subscriptions");
			return;
		}
		json_object_set_new(subscriptions, uri, json_true());
	}
	reply_result(id, json_object());
}

/* Handle resources/unsubscribe. */
void
method_unsubscribe(json_t *id, json_t *params)
{
	const char	*uri;

	if ((uri = param_uri(id, params)) == NULL)
		return;
	json_object_del(subscriptions, uri);
	reply_result(id, json_object());
}
