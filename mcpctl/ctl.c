/* SPDX-License-Identifier: ISC */
/*
 * mcpctl's side of the control socket: send one MSG_CTL_REQUEST frame and
 * read the MSG_CTL_REPLY, within MCPCTL_TIMEOUT_MS.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
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

#include "frame.h"
#include "mcpctl.h"

#define MCPCTL_MAX_REPLY	(16 * 1024 * 1024)
#define MCPCTL_TIMEOUT_MS	10000

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

/* Send a command and return the reply; exits 1 if there is none. */
json_t *
ctl_command(const char *path, json_t *req)
{
	struct sockaddr_un	 sun;
	struct frame_hdr	 hdr;
	unsigned char		 raw[FRAME_HDR_LEN];
	char			*body, *payload;
	const char		*why;
	json_t			*reply;
	json_error_t		 jerr;
	struct timeval		 tv = { MCPCTL_TIMEOUT_MS / 1000,
				    (MCPCTL_TIMEOUT_MS % 1000) * 1000 };
	int			 fd;
	size_t			 len, off;
	ssize_t			 n;

	if (req == NULL) {
		/* json_pack refused an argument. */
		fprintf(stderr, "mcpctl: an argument is not UTF-8\n");
		exit(MCPCTL_EXIT_USAGE);
	}
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
	/* A daemon whose loop is stuck does not accept: once its queue is
	 * full, connect waits, and at most this long (as write does). */
	if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) != 0) {
		fprintf(stderr, "mcpctl: SO_SNDTIMEO: %s\n", strerror(errno));
		exit(1);
	}
	if (connect(fd, (struct sockaddr *)&sun, sizeof sun) != 0) {
		if (errno == EACCES || errno == EPERM)
			denied(path);
		else if (errno == EAGAIN || errno == EINPROGRESS)
			fprintf(stderr, "mcpctl: %s: the daemon does not "
			    "accept connections within %d s (is it stuck?)\n",
			    path, MCPCTL_TIMEOUT_MS / 1000);
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

