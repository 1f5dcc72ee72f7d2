/* SPDX-License-Identifier: ISC */
/*
 * Printing what the daemon says about itself: status (the gateway and
 * every upstream at a glance), check, reload and drain.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "mcpctl.h"

void
fmt_time(char *buf, size_t len, long long t)
{
	time_t		 tt = (time_t)t;
	struct tm	 tm;

	if (t <= 0 || gmtime_r(&tt, &tm) == NULL)
		snprintf(buf, len, "-");
	else
		strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tm);
}

void
fmt_duration(char *buf, size_t len, long long s)
{
	if (s < 0)
		snprintf(buf, len, "-");
	else if (s < 60)
		snprintf(buf, len, "%llds", s);
	else if (s < 3600)
		snprintf(buf, len, "%lldm%02llds", s / 60, s % 60);
	else if (s < 86400)
		snprintf(buf, len, "%lldh%02lldm", s / 3600, s / 60 % 60);
	else
		snprintf(buf, len, "%lldd%02lldh", s / 86400, s / 3600 % 24);
}

/* An integer member, or -1 when it is absent or not an integer. */
long long
json_int_or(json_t *o, const char *key)
{
	json_t	*v = json_object_get(o, key);

	return (json_is_integer(v) ? (long long)json_integer_value(v) : -1);
}

/* A string member, or def. */
const char *
json_str_or(json_t *o, const char *key, const char *def)
{
	const char	*s = json_string_value(json_object_get(o, key));

	return (s != NULL ? s : def);
}

/* Print an error a peer may have worded (an upstream's, an issuer's), or
 * "-", and end the line: its control characters are shown, not sent to
 * the terminal. */
static void
print_text(json_t *v)
{
	char	text[2048];

	if (!json_is_string(v)) {
		printf("-\n");
		return;
	}
	clean(text, sizeof text, json_string_value(v), 1000);
	printf("%s\n", text);
}

/* Print an integer field, or "-" when it is negative or absent. */
static void
print_int(json_t *o, const char *key, int width)
{
	long long	v = json_int_or(o, key);

	if (v >= 0)
		printf("%-*lld", width, v);
	else
		printf("%-*s", width, "-");
}

/* Print the LLM providers: their state and counters (never their keys). */
static void
print_llm(json_t *list)
{
	json_t		*pv, *b;
	size_t		 i;
	const char	*name;
	char		 tokens[64], budget[64];
	int		 w = 4;

	if (json_array_size(list) == 0)
		return;
	json_array_foreach(list, i, pv) {
		name = json_string_value(json_object_get(pv, "name"));
		if (name != NULL && (int)strlen(name) > w)
			w = (int)strlen(name);
	}
	printf("\n%-*s %-9s %-9s %-6s %-6s %-6s %-6s %-5s %-5s %-17s %-13s "
	    "%s\n", w, "LLM", "PROVIDER", "STATE", "FLIGHT", "REQS", "OK",
	    "ERRS", "429", "TIME", "TOKENS IN/OUT", "TOKENS/DAY", "LAST ERROR");
	json_array_foreach(list, i, pv) {
		printf("%-*s %-9s %-9s ", w, json_str_or(pv, "name", "?"),
		    json_str_or(pv, "provider", "?"),
		    json_str_or(pv, "state", "?"));
		print_int(pv, "in_flight", 7);
		print_int(pv, "requests", 7);
		print_int(pv, "answered", 7);
		print_int(pv, "errors", 7);
		print_int(pv, "rate_limited", 6);
		print_int(pv, "timeouts", 6);
		snprintf(tokens, sizeof tokens, "%lld/%lld",
		    (long long)json_integer_value(json_object_get(pv,
		    "tokens_in")), (long long)json_integer_value(
		    json_object_get(pv, "tokens_out")));
		b = json_object_get(pv, "budget");
		if (json_integer_value(json_object_get(b, "tokens_per_day")) > 0)
			snprintf(budget, sizeof budget, "%lld/%lld",
			    (long long)json_integer_value(json_object_get(b,
			    "tokens_used")), (long long)json_integer_value(
			    json_object_get(b, "tokens_per_day")));
		else
			snprintf(budget, sizeof budget, "%lld",
			    (long long)json_integer_value(json_object_get(b,
			    "tokens_used")));
		printf("%-17s %-13s ", tokens, budget);
		print_text(json_object_get(pv, "last_error"));
	}
}

/* Print the OAuth issuers: their keys and how the server is. */
static void
print_issuers(json_t *list)
{
	json_t		*d, *r;
	size_t		 i;
	const char	*name;
	char		 age[32];
	int		 w = 6;

	if (json_array_size(list) == 0)
		return;
	json_array_foreach(list, i, d) {
		name = json_string_value(json_object_get(d, "issuer"));
		if (name != NULL && (int)strlen(name) > w)
			w = (int)strlen(name);
	}
	printf("\n%-*s %-9s %-9s %-5s %-8s %-8s %-9s %s\n", w, "ISSUER",
	    "STATE", "SERVER", "KEYS", "AGE", "FETCHES", "INTROSPECT",
	    "LAST ERROR");
	json_array_foreach(list, i, d) {
		r = json_object_get(d, "reachable");
		printf("%-*s %-9s %-9s ", w, json_str_or(d, "issuer", "?"),
		    json_str_or(d, "state", "?"), json_is_true(r) ? "up" :
		    json_is_false(r) ? "down" : "-");
		if (json_is_true(json_object_get(d, "keyless")))
			printf("%-6s", "none");
		else
			print_int(d, "keys", 6);
		fmt_duration(age, sizeof age, json_int_or(d, "keys_age"));
		printf("%-9s", age);
		print_int(d, "jwks_fetches", 9);
		if (json_is_true(json_object_get(d, "introspection")))
			print_int(d, "introspections", 11);
		else
			printf("%-11s", "-");
		print_text(json_object_get(d, "last_error"));
	}
}

/* Print what refresh-keys asked. */
void
print_refresh(json_t *reply)
{
	json_t	*d;
	size_t	 i;

	json_array_foreach(json_object_get(reply, "issuers"), i, d)
		printf("%s: %s\n", json_str_or(d, "issuer", "?"),
		    json_is_true(json_object_get(d, "asked")) ? "keys asked for" :
		    "not asked (once in 30 s, or its worker is not ready)");
}

/* Does an upstream's traffic policy have anything to say: a cap, calls
 * shed, a breaker that is not closed or has opened? */
static int
traffic_shown(json_t *up)
{
	json_t	*l = json_object_get(up, "limit");
	json_t	*b = json_object_get(up, "breaker");

	return (json_int_or(l, "max_concurrent") > 0 ||
	    json_int_or(l, "queue_full") > 0 ||
	    json_int_or(l, "queue_timeouts") > 0 ||
	    json_int_or(b, "opened") > 0 || json_int_or(b, "refused") > 0 ||
	    strcmp(json_str_or(b, "state", "closed"), "closed") != 0);
}

/*
 * Print the traffic policy of the upstreams when one has something to
 * say, a line each ("NAME:", so that no line begins with a bare name as
 * the table's do): calls in flight of the cap, waiting, refused; the
 * circuit breaker.
 */
static void
print_traffic(json_t *ups)
{
	json_t		*up, *l, *b;
	size_t		 i;
	int		 any = 0;

	json_array_foreach(ups, i, up)
		any |= traffic_shown(up);
	if (!any)
		return;
	printf("\ntraffic (calls in flight of max_concurrent, waiting for a "
	    "slot; circuit breaker):\n");
	json_array_foreach(ups, i, up) {
		l = json_object_get(up, "limit");
		b = json_object_get(up, "breaker");
		printf("  %s: %lld", json_str_or(up, "name", "?"),
		    json_int_or(l, "in_flight"));
		if (json_int_or(l, "max_concurrent") > 0)
			printf("/%lld", json_int_or(l, "max_concurrent"));
		printf(" in flight, %lld waiting", json_int_or(l, "queued"));
		if (json_int_or(l, "waited") > 0 ||
		    json_int_or(l, "queue_full") > 0 ||
		    json_int_or(l, "queue_timeouts") > 0)
			printf(" (%lld waited, %lld refused: queue full, %lld: "
			    "queue_timeout)", json_int_or(l, "waited"),
			    json_int_or(l, "queue_full"),
			    json_int_or(l, "queue_timeouts"));
		if (json_int_or(b, "threshold") <= 0) {
			printf("; breaker off\n");
			continue;
		}
		printf("; breaker %s, %lld/%lld failures in a row, opened "
		    "%lld, %lld calls failed fast",
		    json_str_or(b, "state", "?"), json_int_or(b, "failures"),
		    json_int_or(b, "threshold"), json_int_or(b, "opened"),
		    json_int_or(b, "refused"));
		if (json_int_or(b, "retry_after") >= 0)
			printf(", retry after %lld s",
			    json_int_or(b, "retry_after"));
		if (json_object_get(b, "last_failure") != NULL &&
		    !json_is_null(json_object_get(b, "last_failure")))
			printf("; last: %s", json_str_or(b, "last_failure",
			    "?"));
		printf("\n");
	}
}

/* Print the rate limits, a line each: their rate and calls in flight,
 * what they let through and refused. */
static void
print_rates(json_t *list)
{
	json_t	*rl;
	double	 rate;
	size_t	 i;

	if (json_array_size(list) == 0)
		return;
	printf("\nrate limits (calls per second, burst; calls in flight; "
	    "calls let through, refused):\n");
	json_array_foreach(list, i, rl) {
		printf("  %s:", json_str_or(rl, "name", "?"));
		rate = json_real_value(json_object_get(rl, "rate"));
		if (rate > 0)
			printf(" %g/s, burst %lld", rate,
			    json_int_or(rl, "burst"));
		if (json_object_get(rl, "concurrent") != NULL)
			printf("%s %lld of %lld in flight", rate > 0 ? "," : "",
			    json_int_or(rl, "in_flight"),
			    json_int_or(rl, "concurrent"));
		printf("%s; %lld passed, %lld refused\n",
		    json_is_true(json_object_get(rl, "shared")) ?
		    ", shared" : " per principal",
		    json_int_or(rl, "passed"), json_int_or(rl, "limited"));
	}
}

/* Print the virtual endpoints, a line each, with their sessions. */
static void
print_endpoints(json_t *list)
{
	json_t	*ep;
	size_t	 i;

	if (json_array_size(list) == 0)
		return;
	printf("\nendpoints (path, discovery, sessions):\n");
	json_array_foreach(list, i, ep)
		printf("  %s: %s, %lld session%s\n",
		    json_str_or(ep, "path", "?"),
		    json_str_or(ep, "discovery", "?"), json_int_or(ep,
		    "sessions"), json_int_or(ep, "sessions") == 1 ? "" : "s");
}

/* Print the status reply: the gateway, then a table of upstreams. */
void
print_status(json_t *reply)
{
	json_t		*ups, *up, *cols, *c;
	size_t		 i;
	const char	*err, *name;
	char		*quoted, up_s[32], when[32], text[1024];
	struct tm	 tm;
	time_t		 t;
	int		 w = 4;
	long long	 nsessions, inflight, ready;

	nsessions = json_int_or(reply, "sessions");
	inflight = json_int_or(reply, "calls_in_flight");
	fmt_duration(up_s, sizeof up_s, json_int_or(reply, "uptime"));
	printf("mcp-supervisord %s, instance %s, pid %lld, up %s, %s\n"
	    "listening on %s, %lld session%s, %lld call%s in flight",
	    json_str_or(reply, "version", "?"),
	    json_str_or(reply, "instance", "?"),
	    json_int_or(reply, "pid"), up_s,
	    json_str_or(reply, "state", "running"),
	    json_str_or(reply, "listen", "?"),
	    nsessions, nsessions == 1 ? "" : "s",
	    inflight < 0 ? 0 : inflight, inflight == 1 ? "" : "s");
	if (json_int_or(reply, "parked") > 0)
		printf(", %lld parked for 2026-07-28 clients' input",
		    json_int_or(reply, "parked"));
	if (json_object_get(reply, "metrics_listen") != NULL)
		printf(", metrics on %s", json_str_or(reply, "metrics_listen",
		    "?"));
	printf("\n");
	ready = json_int_or(reply, "ready");
	if (json_object_get(reply, "drain_remaining") != NULL)
		printf("draining: no new sessions; stops when none is left or "
		    "in %llds\n", json_int_or(reply, "drain_remaining"));
	else if (ready == 200)
		printf("ready\n");
	else if (ready > 0)
		printf("not ready: %s\n", json_str_or(reply, "ready_reason",
		    "?"));
	/* Readiness is said above; a required upstream in backoff is not. */
	json_array_foreach(json_object_get(reply, "problems"), i, c) {
		name = json_string_value(c);
		if (name != NULL && strncmp(name, "not ready: ", 11) != 0)
			printf("unhealthy: %s\n", name);
	}
	printf("\n");
	ups = json_object_get(reply, "upstreams");
	json_array_foreach(ups, i, up) {
		name = json_string_value(json_object_get(up, "name"));
		if (name != NULL && (int)strlen(name) > w)
			w = (int)strlen(name);
	}
	/* ERA last but one: scripts read the columns before it by number. */
	printf("%-*s %-9s %-9s %-8s %-8s %-6s %-6s %-9s %-7s %-7s %-6s %-4s "
	    "%s\n", w, "NAME", "TRANSPORT", "STATE", "PID", "UPSTREAM",
	    "RESTS", "TOOLS", "RESOURCES", "PROMPTS", "UPTIME", "CALLS", "ERA",
	    "LAST ERROR");
	json_array_foreach(ups, i, up) {
		printf("%-*s %-9s %-9s ", w, json_str_or(up, "name", "?"),
		    json_str_or(up, "transport", "?"),
		    json_str_or(up, "state", "?"));
		print_int(up, "pid", 9);
		print_int(up, "upstream_pid", 9);
		print_int(up, "restarts", 7);
		print_int(up, "tools", 7);
		print_int(up, "resources", 10);
		print_int(up, "prompts", 8);
		fmt_duration(up_s, sizeof up_s, json_int_or(up, "uptime"));
		printf("%-8s", up_s);
		print_int(up, "pending", 7);
		printf("%-4s ", json_str_or(up, "era", "-"));
		err = json_string_value(json_object_get(up, "last_error"));
		if (err != NULL && (t = (time_t)json_int_or(up,
		    "last_error_at")) > 0 && localtime_r(&t, &tm) != NULL) {
			strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
			printf("[%s] ", when);
		}
		print_text(json_object_get(up, "last_error"));
	}
	json_array_foreach(ups, i, up) {
		if (json_is_string(json_object_get(up, "login_needed")))
			printf("upstream %s needs a login: run %s\n",
			    json_str_or(up, "name", "?"),
			    json_str_or(up, "login_needed", "?"));
	}
	print_traffic(ups);
	print_rates(json_object_get(reply, "rate_limits"));
	print_endpoints(json_object_get(reply, "endpoints"));
	print_llm(json_object_get(reply, "llm"));
	print_issuers(json_object_get(reply, "issuers"));
	cols = json_object_get(reply, "collisions");
	if (json_array_size(cols) > 0) {
		printf("\ncollisions (the later upstream's item is not "
		    "exposed):\n");
		json_array_foreach(cols, i, c) {
			clean(text, sizeof text, json_str_or(c, "name", "?"),
			    200);
			printf("  %s %s: kept from %s, dropped from %s\n",
			    json_str_or(c, "kind", "?"), text,
			    json_str_or(c, "kept", "?"),
			    json_str_or(c, "dropped", "?"));
		}
	}
	cols = json_object_get(reply, "renamed");
	if (json_array_size(cols) > 0) {
		printf("\nrenamed (not a valid name; exposed under another):"
		    "\n");
		json_array_foreach(cols, i, c) {
			/* The name as a JSON string: it may hold anything. */
			quoted = json_dumps(json_object_get(c, "name"),
			    JSON_ENCODE_ANY | JSON_ENSURE_ASCII);
			printf("  %s of %s: %s as %s\n",
			    json_str_or(c, "kind", "?"),
			    json_str_or(c, "upstream", "?"),
			    quoted != NULL ? quoted : "?",
			    json_str_or(c, "exposed", "?"));
			free(quoted);
		}
	}
}

/* Print the check reply; 1 if everything required is healthy. */
int
print_check(json_t *reply)
{
	json_t	*v;
	size_t	 i;
	int	 healthy = json_is_true(json_object_get(reply, "healthy"));

	json_array_foreach(json_object_get(reply, "problems"), i, v)
		printf("CRITICAL: %s\n", json_string_value(v));
	json_array_foreach(json_object_get(reply, "warnings"), i, v)
		printf("WARNING: %s\n", json_string_value(v));
	if (healthy)
		printf("OK: everything required is healthy%s\n",
		    strcmp(json_str_or(reply, "state", ""), "draining") == 0 ?
		    " (draining)" : "");
	return (healthy);
}

/* Print what a reload did, and what waits for a restart. */
void
print_reload(json_t *reply)
{
	json_t	*v;
	size_t	 i;

	json_array_foreach(json_object_get(reply, "warnings"), i, v)
		fprintf(stderr, "mcpctl: warning: %s\n", json_string_value(v));
	printf("reloaded: %s\n", json_str_or(reply, "summary", "?"));
}

void
print_drain(json_t *reply)
{
	long long	n = json_int_or(reply, "sessions");

	printf("draining: no new sessions; %lld session%s left, stopping when "
	    "none is or in %llds\n", n, n == 1 ? "" : "s",
	    json_int_or(reply, "seconds"));
}
