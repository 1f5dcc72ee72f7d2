/* SPDX-License-Identifier: ISC */
/*
 * mcpctl tools pins, mcpctl tools diff NAME, mcpctl tools approve NAME
 * [SHA256], and mcpctl tools -- NAME (a tool named like one of those).
 * What an upstream wrote is printed as JSON with only ASCII in it, so
 * that no description can send the terminal an escape sequence.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "mcpctl.h"

/* The members of a definition, in the order shown. */
static const char *const fields[] = {
	"name", "title", "description", "inputSchema", "outputSchema",
	"annotations", NULL
};

json_t *
pins_request(int argc, char **argv)
{
	const char	*sub = argv[1];
	long long	 n;

	if (argc == 2 && (strcmp(sub, "diff") == 0 ||
	    strcmp(sub, "approve") == 0 || strcmp(sub, "--") == 0)) {
		fprintf(stderr, "mcpctl: tools %s: which tool?\n", sub);
		exit(MCPCTL_EXIT_USAGE);
	}
	if (argc == 2 && strcmp(sub, "pins") == 0)
		return (json_pack("{s:s}", "command", "pins"));
	if (argc == 3 && strcmp(sub, "pins") == 0) {
		/* The daemon says which counts it takes. */
		if ((n = count_arg(argv[2])) < 0) {
			fprintf(stderr, "mcpctl: tools pins: \"%s\" is not a "
			    "number of pins\n", argv[2]);
			exit(MCPCTL_EXIT_USAGE);
		}
		return (json_pack("{s:s, s:I}", "command", "pins", "limit",
		    (json_int_t)n));
	}
	if (argc == 3 && strcmp(sub, "diff") == 0)
		return (json_pack("{s:s, s:s}", "command", "pin_diff", "name",
		    argv[2]));
	if ((argc == 3 || argc == 4) && strcmp(sub, "approve") == 0)
		return (json_pack("{s:s, s:s, s:s*}", "command",
		    "pin_approve", "name", argv[2], "sha256",
		    argc == 4 ? argv[3] : NULL));
	if (argc == 3 && strcmp(sub, "--") == 0)
		return (json_pack("{s:s, s:s}", "command", "tools", "name",
		    argv[2]));
	return (NULL);
}

/* Print a value with each line prefixed; "(none)" if absent. */
static void
print_value(const char *prefix, json_t *v)
{
	char	*text, *line, *next;

	if (v == NULL) {
		printf("%s(none)\n", prefix);
		return;
	}
	if ((text = json_dumps(v, JSON_INDENT(2) | JSON_SORT_KEYS |
	    JSON_ENSURE_ASCII | JSON_ENCODE_ANY)) == NULL)
		return;
	for (line = text; line != NULL; line = next) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		printf("%s%s\n", prefix, line);
	}
	free(text);
}

static void
print_pins(json_t *reply)
{
	json_t		*a, *p;
	size_t		 i;
	char		 when[40], what[160], tool[128];
	long long	 total;
	int		 w = 4;

	a = json_object_get(reply, "pins");
	json_array_foreach(a, i, p) {
		if ((int)strlen(json_str_or(p, "name", "")) > w)
			w = (int)strlen(json_str_or(p, "name", ""));
	}
	printf("%-*s %-8s %-16s %-23s %s\n", w, "NAME", "STATE", "SHA256",
	    "PINNED", "UPSTREAM/TOOL");
	json_array_foreach(a, i, p) {
		fmt_time(when, sizeof when, json_int_or(p, "pinned_at"));
		clean(tool, sizeof tool, json_str_or(p, "tool", "?"), 100);
		snprintf(what, sizeof what, "%s/%s", json_str_or(p, "upstream",
		    "?"), tool);
		printf("%-*s %-8s %-16.16s %-23s %s\n", w,
		    *json_str_or(p, "name", "") != '\0' ? json_str_or(p,
		    "name", "") : "-", json_str_or(p, "state", "?"),
		    json_str_or(p, "sha256", "?"), when, what);
	}
	/* A daemon before the list had a limit sends all, and no total. */
	if ((total = json_int_or(reply, "total")) == 0)
		total = (long long)json_array_size(a);
	printf("%lld pin%s", total, total == 1 ? "" : "s");
	if ((long long)json_array_size(a) < total)
		printf(" (%zu listed: those changed, then the newest)",
		    json_array_size(a));
	printf(", %lld held back; kept in %s\n", json_int_or(reply, "held"),
	    json_is_string(json_object_get(reply, "store")) ?
	    json_str_or(reply, "store", "") : "memory only (no state_dir)");
}

static void
print_diff(json_t *reply)
{
	json_t		*old, *new;
	char		 when[40], tool[128];
	int		 i;

	clean(tool, sizeof tool, json_str_or(reply, "tool", "?"), 100);
	printf("tool %s (upstream %s, tool %s): %s\n",
	    json_str_or(reply, "name", "?"), json_str_or(reply, "upstream",
	    "?"), tool, json_str_or(reply, "state", "?"));
	fmt_time(when, sizeof when, json_int_or(reply, "pinned_at"));
	printf("pinned %s, sha256 %s\n", when, json_str_or(reply, "sha256",
	    "?"));
	if (json_object_get(reply, "seen_sha256") == NULL) {
		printf("no change since it was pinned\n");
		return;
	}
	fmt_time(when, sizeof when, json_int_or(reply, "seen_at"));
	printf("seen   %s, sha256 %s\nchanged: %s\n", when, json_str_or(reply,
	    "seen_sha256", "?"), json_str_or(reply, "fields", "?"));
	old = json_object_get(reply, "pinned");
	new = json_object_get(reply, "seen");
	if (!json_is_object(old) || !json_is_object(new)) {
		printf("(a definition larger than the daemon keeps: no "
		    "diff)\n");
		return;
	}
	printf("--- pinned\n+++ seen\n");
	for (i = 0; fields[i] != NULL; i++) {
		if (json_equal(json_object_get(old, fields[i]),
		    json_object_get(new, fields[i])) ||
		    (json_object_get(old, fields[i]) == NULL &&
		    json_object_get(new, fields[i]) == NULL))
			continue;
		printf("%s:\n", fields[i]);
		print_value("- ", json_object_get(old, fields[i]));
		print_value("+ ", json_object_get(new, fields[i]));
	}
}

int
pins_print(json_t *reply, int argc, char **argv)
{
	if (argc < 2)
		return (0);
	if ((argc == 2 || argc == 3) && strcmp(argv[1], "pins") == 0)
		print_pins(reply);
	else if (strcmp(argv[1], "diff") == 0)
		print_diff(reply);
	else if (strcmp(argv[1], "approve") == 0)
		printf("tool %s approved: pinned as sha256 %s\n",
		    json_str_or(json_object_get(reply, "pin"), "name", "?"),
		    json_str_or(json_object_get(reply, "pin"), "sha256", "?"));
	else if (strcmp(argv[1], "--") == 0)
		print_tools(reply, argv[2]);
	else
		return (0);
	return (1);
}
