/* SPDX-License-Identifier: ISC */
/*
 * mcp-demo-server's tool arguments: getting and checking them, and the
 * answer to a call whose arguments are wrong.
 */

#define _GNU_SOURCE

#include <sys/types.h>

#include <stdio.h>

#include <jansson.h>

#include "demo.h"

char			 argerr[256];	/* last argument error */

/*
 * Answer a tool call whose arguments are wrong. Since 2025-11-25 such
 * input validation errors are tool execution errors, not protocol errors,
 * so that the model can correct itself.
 */
void
bad_args(json_t *id)
{
	reply_result(id, tool_err("Invalid arguments: %s", argerr));
}

/* Get a string argument without NUL bytes; NULL dflt means required. */
int
arg_str(json_t *args, const char *key, const char *dflt, const char **out)
{
	json_t	*v;

	if ((v = json_object_get(args, key)) == NULL) {
		if (dflt == NULL) {
			snprintf(argerr, sizeof argerr,
			    "missing required argument '%s'", key);
			return (-1);
		}
		*out = dflt;
		return (0);
	}
	if ((*out = json_cstr(v)) == NULL) {
		snprintf(argerr, sizeof argerr,
		    "argument '%s' must be a string", key);
		return (-1);
	}
	return (0);
}

/*
 * Get a required argument that must be a string (number 0) or a number
 * (number 1); a string may hold any text at all.
 */
int
arg_value(json_t *args, const char *key, int number, json_t **out)
{
	json_t	*v;

	if ((v = json_object_get(args, key)) == NULL) {
		snprintf(argerr, sizeof argerr,
		    "missing required argument '%s'", key);
		return (-1);
	}
	if (number ? !json_is_number(v) : !json_is_string(v)) {
		snprintf(argerr, sizeof argerr, "argument '%s' must be %s",
		    key, number ? "a number" : "a string");
		return (-1);
	}
	*out = v;
	return (0);
}

/* Get an integer argument in [min, max]. */
int
arg_int(json_t *args, const char *key, int required, json_int_t dflt,
    json_int_t min, json_int_t max, json_int_t *out)
{
	json_t		*v;
	json_int_t	 n;
	double		 d;

	if ((v = json_object_get(args, key)) == NULL) {
		if (required) {
			snprintf(argerr, sizeof argerr,
			    "missing required argument '%s'", key);
			return (-1);
		}
		*out = dflt;
		return (0);
	}
	if (json_is_integer(v))
		n = json_integer_value(v);
	else if (json_is_real(v)) {
		/* JSON Schema counts 3.0 as an integer. */
		d = json_real_value(v);
		if (d < (double)min || d > (double)max)
			goto range;
		n = (json_int_t)d;
		if ((double)n != d)
			goto type;
	} else
		goto type;
	if (n < min || n > max)
		goto range;
	*out = n;
	return (0);

type:
	snprintf(argerr, sizeof argerr, "argument '%s' must be an integer",
	    key);
	return (-1);
range:
	snprintf(argerr, sizeof argerr,
	    "argument '%s' must be between %" JSON_INTEGER_FORMAT " and %"
	    JSON_INTEGER_FORMAT, key, min, max);
	return (-1);
}
