/* SPDX-License-Identifier: ISC */
/*
 * mcpctl: control a running mcp-supervisord over its control socket.  It
 * sends one MSG_CTL_REQUEST frame and prints the MSG_CTL_REPLY, as text or
 * (-j) as the JSON the daemon sent.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "conf.h"
#include "mcpctl.h"
#include "xmalloc.h"

/* Print the usage; exit 0 if asked for (-h), 2 after a bad command. */
static __attribute__((noreturn)) void
usage(int asked)
{
	fprintf(asked ? stdout : stderr,
	    "usage: mcpctl [-hjV] [-s socket] command [argument]\n"
	    "       mcpctl connect [-T token-file] [--endpoint path] [url]\n"
	    "  -h         print this help and exit\n"
	    "  -j         print the daemon's reply as JSON\n"
	    "  -s socket  the control socket (default $MCPCTL_SOCKET, else\n"
	    "             " CONF_DEFAULT_CONTROL ")\n"
	    "  -V         print the version and exit\n"
	    "commands:\n"
	    "  status        the gateway and every upstream at a glance\n"
	    "  sessions [N]  client sessions, the newest N (default 1000):\n"
	    "                client, protocol, transport, age, calls in flight\n"
	    "  tools [NAME]  the tools listed, their owners and original names"
	    "\n"
	    "  tools pins [N]\n"
	    "                tool definitions pinned, and which changed: at\n"
	    "                most N (default 1000), those changed first\n"
	    "  tools diff NAME\n"
	    "                what changed in a pinned tool's definition\n"
	    "  tools approve NAME [SHA256]\n"
	    "                pin a changed definition, so it is listed again\n"
	    "  check         exit 3 if anything required is unhealthy, or no\n"
	    "                upstream is usable\n"
	    "  stop NAME     stop an upstream (its calls fail until start)\n"
	    "  start NAME    start a stopped or failed upstream\n"
	    "  restart NAME  restart an upstream now\n"
	    "  reload        read the configuration file again and apply it\n"
	    "  reopen        reopen the access log (after logrotate)\n"
	    "  refresh-keys [ISSUER]  fetch the OAuth issuers' keys now (at\n"
	    "                most once in 30 s)\n"
	    "  drain [SECS]  take no new sessions; stop when none is left or\n"
	    "                after SECS seconds (default 300)\n"
	    "  login NAME [--code RESPONSE]\n"
	    "                log the gateway in to a remote upstream (OAuth):\n"
	    "                print the URL to open, wait for the redirect or a\n"
	    "                pasted response\n"
	    "  tokens        the upstreams' OAuth tokens held (never the tokens)\n"
	    "  tokens revoke NAME [IDENTITY]\n"
	    "                revoke and forget an upstream's tokens\n"
	    "  connect       relay MCP on stdin and stdout to the gateway's\n"
	    "                WebSocket endpoint (ws://127.0.0.1:8931/ws)\n"
	    "exit status: 0 done, 1 refused or failed (or no daemon), 2 usage,"
	    "\n"
	    "             3 check or status: something required is unhealthy\n");
	exit(asked ? MCPCTL_EXIT_OK : MCPCTL_EXIT_USAGE);
}

/* Read a count; -1 if it is not one. */
long long
count_arg(const char *s)
{
	char		*end;
	long long	 v;

	if (*s < '0' || *s > '9')
		return (-1);
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0' || v > UINT_MAX)
		return (-1);
	return (v);
}

/* Build the request of a command line; NULL if it is not one. */
static json_t *
request(int argc, char **argv)
{
	const char	*cmd = argv[0];
	long long	 n;
	json_t		*req;

	if (argc >= 2 && strcmp(cmd, "tools") == 0 &&
	    (req = pins_request(argc, argv)) != NULL)
		return (req);
	if (strcmp(cmd, "tokens") == 0)
		return (tokens_request(argc, argv));

	if (argc == 1 && (strcmp(cmd, "status") == 0 ||
	    strcmp(cmd, "reload") == 0 || strcmp(cmd, "sessions") == 0 ||
	    strcmp(cmd, "check") == 0 || strcmp(cmd, "reopen") == 0 ||
	    strcmp(cmd, "tools") == 0 || strcmp(cmd, "drain") == 0 ||
	    strcmp(cmd, "refresh-keys") == 0))
		return (json_pack("{s:s}", "command", cmd));
	if (argc == 2 && (strcmp(cmd, "stop") == 0 ||
	    strcmp(cmd, "start") == 0 || strcmp(cmd, "restart") == 0 ||
	    strcmp(cmd, "tools") == 0 || strcmp(cmd, "refresh-keys") == 0))
		return (json_pack("{s:s, s:s}", "command", cmd, "name",
		    argv[1]));
	if (argc == 2 && strcmp(cmd, "sessions") == 0) {
		/* The daemon says which counts it takes. */
		if ((n = count_arg(argv[1])) < 0) {
			fprintf(stderr, "mcpctl: sessions: \"%s\" is not a "
			    "number of sessions\n", argv[1]);
			exit(MCPCTL_EXIT_USAGE);
		}
		return (json_pack("{s:s, s:I}", "command", cmd, "limit",
		    (json_int_t)n));
	}
	if (argc == 2 && strcmp(cmd, "drain") == 0) {
		if ((n = count_arg(argv[1])) < 0) {
			fprintf(stderr, "mcpctl: drain: \"%s\" is not a number "
			    "of seconds\n", argv[1]);
			exit(MCPCTL_EXIT_USAGE);
		}
		return (json_pack("{s:s, s:I}", "command", cmd, "seconds",
		    (json_int_t)n));
	}
	return (NULL);
}

int
main(int argc, char **argv)
{
	const char	*path = CONF_DEFAULT_CONTROL, *env, *cmd;
	json_t		*req, *reply;
	char		*text;
	int		 ch, raw = 0, ok, status;

	xmalloc_libraries();
	/* A daemon or a host that closes on us is an error said, not a
	 * silent death. */
	signal(SIGPIPE, SIG_IGN);
	if ((env = getenv("MCPCTL_SOCKET")) != NULL && *env != '\0')
		path = env;
	/* Options before the command only: connect has its own. */
	while ((ch = getopt(argc, argv, "+hjs:V")) != -1) {
		switch (ch) {
		case 'h':
			usage(1);
		case 'V':
			printf("mcpctl %s\n", PACKAGE_VERSION);
			return (MCPCTL_EXIT_OK);
		case 'j':
			raw = 1;
			break;
		case 's':
			path = optarg;
			break;
		default:
			usage(0);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1)
		usage(0);
	cmd = argv[0];
	if (strcmp(cmd, "connect") == 0)
		return (mcpctl_connect(argc, argv));
	if (strcmp(cmd, "login") == 0)
		return (mcpctl_login(path, argc, argv, raw));
	if ((req = request(argc, argv)) == NULL)
		usage(0);

	reply = ctl_command(path, req);
	json_decref(req);
	ok = json_is_true(json_object_get(reply, "ok"));
	status = ok ? MCPCTL_EXIT_OK : MCPCTL_EXIT_FAILED;
	/* check and status: 3 when something required is unhealthy. */
	if (ok && (strcmp(cmd, "check") == 0 || strcmp(cmd, "status") == 0) &&
	    json_is_false(json_object_get(reply, "healthy")))
		status = MCPCTL_EXIT_UNHEALTHY;
	if (raw) {
		text = json_dumps(reply, JSON_INDENT(2));
		printf("%s\n", text);
		free(text);
	} else if (!ok)
		fprintf(stderr, "mcpctl: %s\n", json_str_or(reply, "error",
		    "the daemon refused the command"));
	else if (strcmp(cmd, "status") == 0)
		print_status(reply);
	else if (strcmp(cmd, "sessions") == 0)
		print_sessions(reply);
	else if (strcmp(cmd, "tools") == 0 && pins_print(reply, argc, argv))
		;
	else if (strcmp(cmd, "tools") == 0)
		print_tools(reply, argc == 2 ? argv[1] : NULL);
	else if (strcmp(cmd, "check") == 0)
		print_check(reply);
	else if (strcmp(cmd, "reload") == 0)
		print_reload(reply);
	else if (strcmp(cmd, "drain") == 0)
		print_drain(reply);
	else if (strcmp(cmd, "reopen") == 0)
		printf("access log reopened\n");
	else if (strcmp(cmd, "refresh-keys") == 0)
		print_refresh(reply);
	else if (strcmp(cmd, "tokens") == 0)
		print_tokens(reply, argc, argv);
	json_decref(reply);
	return (status);
}
