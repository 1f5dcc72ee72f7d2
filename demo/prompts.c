/* SPDX-License-Identifier: ISC */
/*
 * mcp-demo-server's prompts, greeting and summarize, and the completion
 * of prompt arguments and resource template variables.
 */

#define _GNU_SOURCE

#include <string.h>

#include <jansson.h>

#include "demo.h"

static const char *names[] = { "Ada", "Alan", "Barbara", "Grace", "Linus" };
static const char *item_ids[] = { "1", "2", "3" };

/* Handle prompts/list. */
void
method_prompts_list(json_t *id, json_t *params)
{
	reply_page(id, params, "prompts", json_pack("["
	    "{s:s, s:s, s:s, s:[{s:s, s:s, s:b}]},"
	    "{s:s, s:s, s:s, s:[{s:s, s:s, s:b}]}]",
	    "name", "greeting", "title", "Greeting",
	    "description", "Greet someone by name",
	    "arguments", "name", "name", "description", "Who to greet",
	    "required", 1,
	    "name", "summarize", "title", "Summarize",
	    "description", "Ask for a summary",
	    "arguments", "name", "topic", "description", "What to summarize",
	    "required", 0));
}

/* Handle prompts/get. */
void
method_prompts_get(json_t *id, json_t *params)
{
	const char	*name, *key, *arg, *description;
	json_t		*args, *v, *text;

	if ((name = json_cstr(json_object_get(params, "name"))) == NULL) {
		reply_error(id, ERR_PARAMS, NULL,
		    "Invalid params: name must be a string");
		return;
	}
	args = json_object_get(params, "arguments");
	if (args != NULL && !json_is_object(args)) {
		reply_error(id, ERR_PARAMS, NULL,
		    "Invalid params: arguments must be an object");
		return;
	}
	json_object_foreach(args, key, v) {
		if (json_cstr(v) == NULL) {
			reply_error(id, ERR_PARAMS, NULL, "Invalid params: "
			    "argument '%s' must be a string", key);
			return;
		}
	}

	if (strcmp(name, "greeting") == 0) {
		arg = json_cstr(json_object_get(args, "name"));
		if (arg == NULL) {
			reply_error(id, ERR_PARAMS, NULL, "Invalid params: "
			    "missing required argument 'name'");
			return;
		}
		description = "A friendly greeting";
		text = json_pack("s++", "Hello, ", arg, "!");
	} else if (strcmp(name, "summarize") == 0) {
		arg = json_cstr(json_object_get(args, "topic"));
		description = "A request for a summary";
		if (arg != NULL)
			text = json_pack("s++", "Please summarize ", arg, ".");
		else
			text = json_string("Please summarize the conversation "
			    "so far.");
	} else {
		reply_error(id, ERR_PARAMS, NULL, "Unknown prompt: %s", name);
		return;
	}
	reply_result(id, json_pack("{s:s, s:[{s:s, s:{s:s, s:o}}]}",
	    "description", description, "messages", "role", "user",
	    "content", "type", "text", "text", text));
}

/* Handle completion/complete. */
void
method_complete(json_t *id, json_t *params)
{
	json_t		*ref, *arg, *values;
	const char	*type, *name, *value, *what, **list = NULL;
	size_t		 n = 0, i, len;

	ref = json_object_get(params, "ref");
	arg = json_object_get(params, "argument");
	type = json_cstr(json_object_get(ref, "type"));
	name = json_cstr(json_object_get(arg, "name"));
	value = json_cstr(json_object_get(arg, "value"));
	if (!json_is_object(ref) || type == NULL) {
		reply_error(id, ERR_PARAMS, NULL,
		    "Invalid params: ref must be an object with a type");
		return;
	}
	if (!json_is_object(arg) || name == NULL || value == NULL) {
		reply_error(id, ERR_PARAMS, NULL, "Invalid params: argument "
		    "must be an object with a name and a value");
		return;
	}

	if (strcmp(type, "ref/prompt") == 0) {
		what = json_cstr(json_object_get(ref, "name"));
		if (what != NULL && strcmp(what, "greeting") == 0 &&
		    strcmp(name, "name") == 0) {
			list = names;
			n = sizeof names / sizeof names[0];
		}
	} else if (strcmp(type, "ref/resource") == 0) {
		what = json_cstr(json_object_get(ref, "uri"));
		if (what != NULL && strcmp(what, "demo://item/{id}") == 0 &&
		    strcmp(name, "id") == 0) {
			list = item_ids;
			n = sizeof item_ids / sizeof item_ids[0];
		}
	}

	values = json_array();
	len = strlen(value);
	for (i = 0; values != NULL && i < n; i++) {
		if (strncmp(list[i], value, len) == 0)
			json_array_append_new(values, json_string(list[i]));
	}
	reply_result(id, json_pack("{s:{s:o, s:I, s:b}}", "completion",
	    "values", values, "total", (json_int_t)json_array_size(values),
	    "hasMore", 0));
}
