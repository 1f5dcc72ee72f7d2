/* SPDX-License-Identifier: ISC */
/* Printing mcpctl sessions and mcpctl tools [NAME]. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "mcpctl.h"

/*
 * A string from a peer (a client's name, a tool's original name) made
 * printable: control characters and the like shown as \xNN, cut at max.
 */
void
clean(char *out, size_t len, const char *s, size_t max)
{
	size_t	i, n = 0;

	for (i = 0; s[i] != '\0' && i < max && n + 5 < len; i++) {
		if ((unsigned char)s[i] >= 0x20 && s[i] != 0x7f)
			out[n++] = s[i];
		else
			n += (size_t)snprintf(out + n, len - n, "\\x%02x",
			    (unsigned char)s[i]);
	}
	out[n] = '\0';
}

void
print_sessions(json_t *reply)
{
	json_t		*a, *s;
	size_t		 i;
	char		 age[32], idle[32], client[128], version[64];
	char		 subject[256];
	int		 subjects = 0, endpoints = 0;
	long long	 total;

	a = json_object_get(reply, "sessions");
	/* The OAuth subject's column only when a session has one, the
	 * endpoint's when a session is not at /mcp. */
	json_array_foreach(a, i, s) {
		if (json_object_get(s, "subject") != NULL)
			subjects = 1;
		if (strcmp(json_str_or(s, "endpoint", "/mcp"), "/mcp") != 0)
			endpoints = 1;
	}
	printf("%-22s %-24s %-12s %-10s %-9s %-16s %-7s %-7s %s%s%s\n",
	    "SESSION", "CLIENT", "VERSION", "PROTOCOL", "TRANSPORT", "PEER",
	    "AGE", "IDLE", subjects || endpoints ? "CALLS " : "CALLS",
	    subjects ? (endpoints ? "SUBJECT " : "SUBJECT") : "",
	    endpoints ? "ENDPOINT" : "");
	json_array_foreach(a, i, s) {
		fmt_duration(age, sizeof age, json_int_or(s, "age"));
		fmt_duration(idle, sizeof idle, json_int_or(s, "idle"));
		clean(client, sizeof client, json_str_or(s, "client", ""), 24);
		clean(version, sizeof version, json_str_or(s,
		    "client_version", ""), 12);
		clean(subject, sizeof subject, json_str_or(s, "subject", ""),
		    64);
		printf("%-22s %-24s %-12s %-10s %-9s %-16s %-7s %-7s "
		    "%lld%s%s%s%s\n",
		    json_str_or(s, "id", "?"), client[0] != '\0' ? client : "-",
		    version[0] != '\0' ? version : "-",
		    json_str_or(s, "protocol", "-")[0] != '\0' ?
		    json_str_or(s, "protocol", "-") : "-",
		    json_str_or(s, "transport", "?"),
		    json_str_or(s, "peer", "-"), age, idle,
		    json_int_or(s, "in_flight"), subjects ? " " : "",
		    subjects ? (subject[0] != '\0' ? subject : "-") : "",
		    endpoints ? " " : "",
		    endpoints ? json_str_or(s, "endpoint", "/mcp") : "");
	}
	total = json_int_or(reply, "total");
	if (total > (long long)json_array_size(a))
		printf("the newest %zu of %lld sessions (mcpctl sessions N "
		    "lists more)\n", json_array_size(a), total);
	else
		printf("%zu session%s\n", json_array_size(a),
		    json_array_size(a) == 1 ? "" : "s");
}

void
print_tools(json_t *reply, const char *only)
{
	json_t		*a, *t, *cols, *c, *tool;
	size_t		 i;
	char		 orig[256], *text;
	int		 w = 4;

	a = json_object_get(reply, "tools");
	if (only != NULL) {
		t = json_array_get(a, 0);
		clean(orig, sizeof orig, json_str_or(t, "original", ""), 200);
		printf("name:     %s\nowner:    %s\noriginal: %s\n",
		    json_str_or(t, "name", "?"), json_str_or(t, "owner", "?"),
		    orig);
		if ((tool = json_object_get(t, "tool")) != NULL &&
		    (text = json_dumps(tool, JSON_INDENT(2) |
		    JSON_ENSURE_ASCII)) != NULL) {
			printf("listed as:\n%s\n", text);
			free(text);
		}
		return;
	}
	json_array_foreach(a, i, t) {
		if ((int)strlen(json_str_or(t, "name", "")) > w)
			w = (int)strlen(json_str_or(t, "name", ""));
	}
	printf("%-*s %-24s %s\n", w, "NAME", "OWNER", "ORIGINAL NAME");
	json_array_foreach(a, i, t) {
		clean(orig, sizeof orig, json_str_or(t, "original", ""), 200);
		printf("%-*s %-24s %s\n", w, json_str_or(t, "name", "?"),
		    json_str_or(t, "owner", "?"), orig);
	}
	printf("%zu tool%s\n", json_array_size(a),
	    json_array_size(a) == 1 ? "" : "s");
	cols = json_object_get(reply, "collisions");
	if (json_array_size(cols) > 0) {
		printf("\ncollisions (the later one is not exposed):\n");
		json_array_foreach(cols, i, c) {
			printf("  %s %s: kept from %s, dropped from %s\n",
			    json_str_or(c, "kind", "?"),
			    json_str_or(c, "name", "?"),
			    json_str_or(c, "kept", "?"),
			    json_str_or(c, "dropped", "?"));
		}
	}
}
