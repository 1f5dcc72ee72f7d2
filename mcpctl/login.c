/* SPDX-License-Identifier: ISC */
/*
 * mcpctl login NAME [--code RESPONSE], mcpctl tokens and mcpctl tokens
 * revoke NAME: the gateway's OAuth login to a remote upstream (the
 * daemon's side is supervisor/uplogin.c).  login prints the authorization
 * URL alone on standard output, opens nothing, and waits for the browser
 * to come back to the gateway; what the browser ended at (or the bare
 * code) may be pasted on standard input instead, or given with --code.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "mcpctl.h"

#define LOGIN_POLL_MS		200
#define LOGIN_WAIT_S		610	/* the daemon gives up at 600 */
#define LOGIN_LINE_MAX		8192

/* Ask the daemon about the login; exits 1 if it refuses. */
static json_t *
ask(const char *path, const char *cmd, const char *name, const char *response)
{
	json_t	*req, *reply;

	req = json_pack("{s:s, s:s, s:s*}", "command", cmd, "name", name,
	    "response", response);
	reply = ctl_command(path, req);
	json_decref(req);
	if (!json_is_true(json_object_get(reply, "ok"))) {
		fprintf(stderr, "mcpctl: %s\n", json_str_or(reply, "error",
		    "the daemon refused the command"));
		json_decref(reply);
		exit(MCPCTL_EXIT_FAILED);
	}
	return (reply);
}

/* Sleep ms, or less if standard input has something; 1 if it has. */
static int
wait_input(int watch, int ms)
{
	struct pollfd	pfd = { STDIN_FILENO, POLLIN, 0 };

	if (!watch) {
		poll(NULL, 0, ms);
		return (0);
	}
	return (poll(&pfd, 1, ms) > 0);
}

/*
 * Read what is there of a line into line (*len so far); 1 when a whole
 * line is in (its end and white space cut), 0 if not yet, -1 at the end
 * of input.
 */
static int
read_line(char *line, size_t *len)
{
	ssize_t	n;
	char	*nl;

	if (*len >= LOGIN_LINE_MAX - 1) {
		fprintf(stderr, "mcpctl: that line is over %d bytes\n",
		    LOGIN_LINE_MAX);
		exit(MCPCTL_EXIT_FAILED);
	}
	n = read(STDIN_FILENO, line + *len, LOGIN_LINE_MAX - 1 - *len);
	if (n < 0 && errno == EINTR)
		return (0);
	if (n <= 0)
		return (*len > 0 ? 1 : -1);
	*len += (size_t)n;
	line[*len] = '\0';
	if ((nl = strchr(line, '\n')) == NULL)
		return (0);
	*nl = '\0';
	*len = strlen(line);
	while (*len > 0 && strchr(" \t\r", line[*len - 1]) != NULL)
		line[--*len] = '\0';
	return (1);
}

int
mcpctl_login(const char *path, int argc, char **argv, int raw)
{
	const char	*name, *code = NULL, *phase, *start;
	json_t		*reply;
	char		 line[LOGIN_LINE_MAX], when[64], url[4096];
	size_t		 len = 0;
	time_t		 until;
	int		 watch, shown = 0, r;

	if (argc == 4 && strcmp(argv[2], "--code") == 0)
		code = argv[3];
	else if (argc != 2) {
		fprintf(stderr, "usage: mcpctl login NAME [--code RESPONSE]\n");
		return (MCPCTL_EXIT_USAGE);
	}
	name = argv[1];
	reply = ask(path, "login", name, NULL);
	json_decref(reply);
	/* Standard input is read for a pasted response unless it is
	 * given, or there is nobody to paste (a closed input). */
	watch = code == NULL && isatty(STDIN_FILENO);
	if (code == NULL && !watch) {
		struct pollfd	pfd = { STDIN_FILENO, POLLIN, 0 };

		watch = poll(&pfd, 1, 0) >= 0 && !(pfd.revents & POLLNVAL);
	}
	until = time(NULL) + LOGIN_WAIT_S;
	while (time(NULL) < until) {
		reply = ask(path, "login_status", name, NULL);
		phase = json_str_or(reply, "phase", "?");
		if (strcmp(phase, "waiting") == 0 && !shown) {
			snprintf(url, sizeof url, "%s",
			    json_str_or(reply, "url", ""));
			/* The URL alone on standard output, for scripts. */
			printf("%s\n", url);
			fflush(stdout);
			shown = 1;
			if (code != NULL) {
				json_decref(ask(path, "login_code", name,
				    code));
			} else
				fprintf(stderr, "Open the URL above in a "
				    "browser to log in to upstream %s.\n"
				    "The gateway waits for the browser at %s "
				    "(10 minutes).\nIf the browser cannot "
				    "reach it, paste here the address it "
				    "ended at (or the code).\n", name,
				    json_str_or(reply, "redirect_uri", "?"));
		} else if (strcmp(phase, "done") == 0) {
			if (raw) {
				char *t = json_dumps(reply, JSON_INDENT(2));

				printf("%s\n", t);
				free(t);
			} else {
				fmt_time(when, sizeof when,
				    json_int_or(reply, "expires_at"));
				printf("logged in to upstream %s (scope %s, "
				    "token expires %s)\n", name,
				    json_str_or(reply, "scope", "-"), when);
			}
			json_decref(reply);
			return (MCPCTL_EXIT_OK);
		} else if (strcmp(phase, "failed") == 0) {
			fprintf(stderr, "mcpctl: login to upstream %s failed: "
			    "%s\n", name, json_str_or(reply, "error", "?"));
			json_decref(reply);
			return (MCPCTL_EXIT_FAILED);
		} else if (strcmp(phase, "idle") == 0) {
			start = "the daemon forgot the login";
			fprintf(stderr, "mcpctl: %s\n", start);
			json_decref(reply);
			return (MCPCTL_EXIT_FAILED);
		}
		json_decref(reply);
		if (wait_input(watch && shown, LOGIN_POLL_MS)) {
			r = read_line(line, &len);
			if (r < 0)
				watch = 0;
			else if (r > 0 && len > 0) {
				json_decref(ask(path, "login_code", name,
				    line));
				explicit_bzero(line, sizeof line);
				len = 0;
				watch = 0;
			} else if (r > 0)
				len = 0;
		}
	}
	fprintf(stderr, "mcpctl: login to upstream %s: no answer in %d s\n",
	    name, LOGIN_WAIT_S);
	return (MCPCTL_EXIT_FAILED);
}

json_t *
tokens_request(int argc, char **argv)
{
	if (argc == 1)
		return (json_pack("{s:s}", "command", "tokens"));
	if (argc == 3 && strcmp(argv[1], "revoke") == 0)
		return (json_pack("{s:s, s:s}", "command", "token_revoke",
		    "name", argv[2]));
	/* A per-user identity's, as mcpctl tokens shows it. */
	if (argc == 4 && strcmp(argv[1], "revoke") == 0)
		return (json_pack("{s:s, s:s, s:s}", "command", "token_revoke",
		    "name", argv[2], "identity", argv[3]));
	return (NULL);
}

void
print_tokens(json_t *reply, int argc, char **argv)
{
	json_t	*t;
	size_t	 i;
	char	 exp[64], up[128], iss[256], scope[256], id[256];

	if (argc == 3 || argc == 4) {
		printf("tokens of upstream %s%s%s forgotten%s\n", argv[2],
		    argc == 4 ? " for " : "", argc == 4 ? argv[3] : "",
		    json_is_true(json_object_get(reply, "at_server")) ?
		    " and revoked at the authorization server" :
		    " (its worker is not running: not revoked at the "
		    "authorization server)");
		return;
	}
	if (json_array_size(json_object_get(reply, "tokens")) == 0) {
		printf("no upstream OAuth tokens held\n");
		return;
	}
	printf("%-16s %-8s %-8s %-23s %-7s %-5s %s\n", "UPSTREAM", "IDENTITY",
	    "TOKEN", "EXPIRES", "REFRESH", "REG", "ISSUER / SCOPE");
	json_array_foreach(json_object_get(reply, "tokens"), i, t) {
		clean(up, sizeof up, json_str_or(t, "upstream", "?"), 64);
		clean(iss, sizeof iss, json_str_or(t, "issuer", "-"), 120);
		clean(scope, sizeof scope, json_str_or(t, "scope", "-"), 120);
		clean(id, sizeof id, json_str_or(t, "identity", "?"), 120);
		fmt_time(exp, sizeof exp, json_int_or(t, "expires_at"));
		printf("%-16s %-8s %-8s %-23s %-7s %-5s %s\n", up,
		    id, json_str_or(t, "token",
		    "?"), exp, json_is_true(json_object_get(t, "refresh")) ?
		    "yes" : "no", json_str_or(t, "registered", "-"), iss);
		printf("%-16s %-8s %-8s %-23s %-7s %-5s %s\n", "", "", "", "",
		    "", "", scope);
	}
	if (!json_is_true(json_object_get(reply, "stored")))
		printf("(no state directory: tokens are held in memory only)\n");
}
