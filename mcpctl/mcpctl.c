/*
 * mcpctl: control a running mcp-supervisord over its control socket.  It
 * sends one MSG_CTL_REQUEST frame and prints the MSG_CTL_REPLY.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "conf.h"
#include "frame.h"
#include "mcpctl.h"

#define MCPCTL_MAX_REPLY	(16 * 1024 * 1024)
#define MCPCTL_TIMEOUT_MS	10000

/* Print the usage; exit 0 if asked for (-h), 2 after a bad command. */
static __attribute__((noreturn)) void
usage(int asked)
{
	fprintf(asked ? stdout : stderr,
	    "usage: mcpctl [-hjV] [-s socket] command [name]\n"
	    "       mcpctl connect [-T token-file] [url]\n"
	    "  -h         print this help and exit\n"
	    "  -j         print the daemon's reply as JSON\n"
	    "  -s socket  the control socket (default $MCPCTL_SOCKET, else\n"
	    "             " CONF_DEFAULT_CONTROL ")\n"
	    "  -V         print the version and exit\n"
	    "commands:\n"
	    "  status        show every upstream and the gateway\n"
	    "  stop NAME     stop an upstream (its calls fail until start)\n"
	    "  start NAME    start a stopped or failed upstream\n"
	    "  restart NAME  restart an upstream now\n"
	    "  reload        read the configuration file again and apply it\n"
	    "  connect       relay MCP on stdin and stdout to the gateway's\n"
	    "                WebSocket endpoint (ws://127.0.0.1:8931/ws)\n");
	exit(asked ? 0 : 2);
}

/*
 * Say why the control socket may not be used: who may, going by the
 * socket's (or, if that cannot be looked at, its directory's) owner and
 * mode.
 */
static void
denied(const char *path)
{
	struct stat	 st;
	struct group	*gr;
	struct passwd	*pw;
	char		*dir, *slash, gname[64], uname[64];
	const char	*what = "socket";

	dir = strdup(path);
	if (stat(path, &st) != 0 && dir != NULL &&
	    (slash = strrchr(dir, '/')) != NULL) {
		*(slash == dir ? slash + 1 : slash) = '\0';
		if (stat(dir, &st) != 0) {
			fprintf(stderr, "mcpctl: %s: permission denied\n", path);
			free(dir);
			return;
		}
		what = "directory";
	}
	free(dir);
	if ((pw = getpwuid(st.st_uid)) != NULL)
		snprintf(uname, sizeof uname, "%s", pw->pw_name);
	else
		snprintf(uname, sizeof uname, "uid %ld", (long)st.st_uid);
	if ((gr = getgrgid(st.st_gid)) != NULL)
		snprintf(gname, sizeof gname, "%s", gr->gr_name);
	else
		snprintf(gname, sizeof gname, "gid %ld", (long)st.st_gid);
	if (st.st_mode & (S_ISDIR(st.st_mode) ? S_IXGRP : S_IWGRP))
		fprintf(stderr, "mcpctl: %s: permission denied: only %s and "
		    "members of group %s may use it (its %s is mode %04o); "
		    "run mcpctl as one of them, or give another socket with "
		    "-s\n", path, uname, gname, what,
		    (unsigned int)(st.st_mode & 07777));
	else
		fprintf(stderr, "mcpctl: %s: permission denied: only %s may "
		    "use it (its %s is mode %04o); run mcpctl as %s, or give "
		    "another socket with -s\n", path, uname, what,
		    (unsigned int)(st.st_mode & 07777), uname);
}

/* Read exactly len bytes, waiting at most the timeout overall. */
static int
read_full(int fd, void *buf, size_t len)
{
	struct pollfd	 pfd = { fd, POLLIN, 0 };
	unsigned char	*p = buf;
	ssize_t		 n;

	while (len > 0) {
		if (poll(&pfd, 1, MCPCTL_TIMEOUT_MS) <= 0) {
			errno = ETIMEDOUT;
			return (-1);
		}
		n = read(fd, p, len);
		if (n == 0) {
			errno = ECONNRESET;
			return (-1);
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return (-1);
		}
		p += n;
		len -= (size_t)n;
	}
	return (0);
}

/* Send a command and return the reply. */
static json_t *
command(const char *path, json_t *req)
{
	struct sockaddr_un	 sun;
	struct frame_hdr	 hdr;
	unsigned char		 raw[FRAME_HDR_LEN];
	char			*body, *payload;
	const char		*why;
	json_t			*reply;
	json_error_t		 jerr;
	int			 fd;
	size_t			 len, off;
	ssize_t			 n;

	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof sun.sun_path) {
		fprintf(stderr, "mcpctl: socket path too long\n");
		exit(1);
	}
	strcpy(sun.sun_path, path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) == -1) {
		fprintf(stderr, "mcpctl: socket: %s\n", strerror(errno));
		exit(1);
	}
	if (connect(fd, (struct sockaddr *)&sun, sizeof sun) != 0) {
		if (errno == EACCES || errno == EPERM)
			denied(path);
		else if (errno == ENOENT || errno == ECONNREFUSED)
			fprintf(stderr, "mcpctl: %s: %s (is mcp-supervisord "
			    "running? give its control socket with -s)\n",
			    path, strerror(errno));
		else
			fprintf(stderr, "mcpctl: %s: %s\n", path,
			    strerror(errno));
		exit(1);
	}
	body = json_dumps(req, JSON_COMPACT);
	len = strlen(body);
	hdr.len = (uint32_t)len;
	hdr.type = MSG_CTL_REQUEST;
	hdr.flags = 0;
	hdr.session = 0;
	hdr.tag = 0;
	frame_hdr_encode(&hdr, raw);
	payload = malloc(FRAME_HDR_LEN + len);
	if (payload == NULL) {
		perror("mcpctl");
		exit(1);
	}
	memcpy(payload, raw, FRAME_HDR_LEN);
	memcpy(payload + FRAME_HDR_LEN, body, len);
	free(body);
	for (off = 0; off < FRAME_HDR_LEN + len; off += (size_t)n) {
		n = write(fd, payload + off, FRAME_HDR_LEN + len - off);
		if (n < 0) {
			if (errno == EINTR) {
				n = 0;
				continue;
			}
			fprintf(stderr, "mcpctl: write: %s\n",
			    strerror(errno));
			exit(1);
		}
	}
	free(payload);

	if (read_full(fd, raw, sizeof raw) != 0) {
		fprintf(stderr, "mcpctl: no reply: %s\n", strerror(errno));
		exit(1);
	}
	if (frame_decode(raw, sizeof raw, MCPCTL_MAX_REPLY, &hdr,
	    &why) == FRAME_BAD || hdr.type != MSG_CTL_REPLY) {
		fprintf(stderr, "mcpctl: bad reply\n");
		exit(1);
	}
	body = malloc(hdr.len + 1);
	if (body == NULL || read_full(fd, body, hdr.len) != 0) {
		fprintf(stderr, "mcpctl: short reply\n");
		exit(1);
	}
	close(fd);
	reply = json_loadb(body, hdr.len, 0, &jerr);
	free(body);
	if (reply == NULL) {
		fprintf(stderr, "mcpctl: bad reply: %s\n", jerr.text);
		exit(1);
	}
	return (reply);
}

/* Print an integer field, or "-" when it is negative or absent. */
static void
print_int(json_t *o, const char *key, int width)
{
	json_t	*v = json_object_get(o, key);

	if (json_is_integer(v) && json_integer_value(v) >= 0)
		printf("%-*lld", width, (long long)json_integer_value(v));
	else
		printf("%-*s", width, "-");
}

/* Print the status reply as a table. */
static void
print_status(json_t *reply)
{
	json_t		*ups, *up, *cols, *c;
	size_t		 i;
	const char	*err, *name;
	char		*quoted;
	int		 w = 4;
	long long	 nsessions;

	nsessions = json_integer_value(json_object_get(reply, "sessions"));
	printf("mcp-supervisord %s, pid %lld, listening on %s, %lld "
	    "session%s\n",
	    json_string_value(json_object_get(reply, "version")),
	    (long long)json_integer_value(json_object_get(reply, "pid")),
	    json_string_value(json_object_get(reply, "listen")),
	    nsessions, nsessions == 1 ? "" : "s");
	if (json_is_string(json_object_get(reply, "instance")))
		printf("instance %s, %lld call%s parked for 2026-07-28 clients' "
		    "input\n", json_string_value(json_object_get(reply,
		    "instance")), (long long)json_integer_value(
		    json_object_get(reply, "parked")),
		    json_integer_value(json_object_get(reply, "parked")) == 1 ?
		    "" : "s");
	printf("\n");
	ups = json_object_get(reply, "upstreams");
	json_array_foreach(ups, i, up) {
		name = json_string_value(json_object_get(up, "name"));
		if (name != NULL && (int)strlen(name) > w)
			w = (int)strlen(name);
	}
	/* ERA last but one: scripts read the columns before it by number. */
	printf("%-*s %-9s %-9s %-8s %-8s %-6s %-6s %-9s %-7s %-4s %s\n", w,
	    "NAME", "TRANSPORT", "STATE", "PID", "UPSTREAM", "RESTS", "TOOLS",
	    "RESOURCES", "PROMPTS", "ERA", "LAST ERROR");
	json_array_foreach(ups, i, up) {
		printf("%-*s %-9s %-9s ", w,
		    json_string_value(json_object_get(up, "name")),
		    json_string_value(json_object_get(up, "transport")),
		    json_string_value(json_object_get(up, "state")));
		print_int(up, "pid", 9);
		print_int(up, "upstream_pid", 9);
		print_int(up, "restarts", 7);
		print_int(up, "tools", 7);
		print_int(up, "resources", 10);
		print_int(up, "prompts", 8);
		printf("%-4s ", json_is_string(json_object_get(up, "era")) ?
		    json_string_value(json_object_get(up, "era")) : "-");
		err = json_string_value(json_object_get(up, "last_error"));
		printf("%s\n", err != NULL ? err : "-");
	}
	cols = json_object_get(reply, "collisions");
	if (json_array_size(cols) > 0) {
		printf("\ncollisions (the later upstream's item is not "
		    "exposed):\n");
		json_array_foreach(cols, i, c) {
			printf("  %s %s: kept from %s, dropped from %s\n",
			    json_string_value(json_object_get(c, "kind")),
			    json_string_value(json_object_get(c, "name")),
			    json_string_value(json_object_get(c, "kept")),
			    json_string_value(json_object_get(c, "dropped")));
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
			    json_string_value(json_object_get(c, "kind")),
			    json_string_value(json_object_get(c, "upstream")),
			    quoted != NULL ? quoted : "?",
			    json_string_value(json_object_get(c, "exposed")));
			free(quoted);
		}
	}
}

/* Print what a reload did, and what waits for a restart. */
static void
print_reload(json_t *reply)
{
	json_t	*v;
	size_t	 i;

	json_array_foreach(json_object_get(reply, "warnings"), i, v)
		fprintf(stderr, "mcpctl: warning: %s\n", json_string_value(v));
	printf("reloaded: %s\n",
	    json_string_value(json_object_get(reply, "summary")));
}

int
main(int argc, char **argv)
{
	const char	*path = CONF_DEFAULT_CONTROL, *env;
	json_t		*req, *reply;
	char		*text;
	int		 ch, raw = 0, ok;

	if ((env = getenv("MCPCTL_SOCKET")) != NULL && *env != '\0')
		path = env;
	/* Options before the command only: connect has its own. */
	while ((ch = getopt(argc, argv, "+hjs:V")) != -1) {
		switch (ch) {
		case 'h':
			usage(1);
		case 'V':
			printf("mcpctl %s\n", PACKAGE_VERSION);
			return (0);
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
	if (strcmp(argv[0], "connect") == 0)
		return (mcpctl_connect(argc, argv));
	if ((strcmp(argv[0], "status") == 0 ||
	    strcmp(argv[0], "reload") == 0) && argc == 1)
		req = json_pack("{s:s}", "command", argv[0]);
	else if ((strcmp(argv[0], "stop") == 0 ||
	    strcmp(argv[0], "start") == 0 ||
	    strcmp(argv[0], "restart") == 0) && argc == 2)
		req = json_pack("{s:s, s:s}", "command", argv[0], "name",
		    argv[1]);
	else
		usage(0);

	reply = command(path, req);
	json_decref(req);
	ok = json_is_true(json_object_get(reply, "ok"));
	if (raw) {
		text = json_dumps(reply, JSON_INDENT(2));
		printf("%s\n", text);
		free(text);
	} else if (!ok)
		fprintf(stderr, "mcpctl: %s\n",
		    json_string_value(json_object_get(reply, "error")));
	else if (strcmp(argv[0], "status") == 0)
		print_status(reply);
	else if (strcmp(argv[0], "reload") == 0)
		print_reload(reply);
	json_decref(reply);
	return (ok ? 0 : 1);
}
