/* SPDX-License-Identifier: ISC */
/*
 * The service manager's readiness protocol (systemd's sd_notify): one
 * datagram of "KEY=value" lines to the socket named by $NOTIFY_SOCKET,
 * a path or, with a leading '@', an abstract name.  It is small enough
 * that linking libsystemd for it is not worth a dependency.  Without
 * $NOTIFY_SOCKET nothing is sent; a failed send is logged at debug level
 * and otherwise ignored, since the service runs the same either way.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "supervisor.h"

static int			notify_fd = -1;
static struct sockaddr_un	notify_sun;
static socklen_t		notify_len;

void
notify_init(void)
{
	const char	*path = getenv("NOTIFY_SOCKET");
	size_t		 len;

	if (path == NULL || *path == '\0')
		return;
	len = strlen(path);
	if ((path[0] != '/' && path[0] != '@') ||
	    len >= sizeof notify_sun.sun_path) {
		log_warnx("NOTIFY_SOCKET %s: not a socket path, ignored", path);
		unsetenv("NOTIFY_SOCKET");
		return;
	}
	memset(&notify_sun, 0, sizeof notify_sun);
	notify_sun.sun_family = AF_UNIX;
	memcpy(notify_sun.sun_path, path, len);
	if (path[0] == '@')
		notify_sun.sun_path[0] = '\0';
	notify_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
	notify_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    0);
	if (notify_fd == -1)
		log_warn("NOTIFY_SOCKET: socket");
	/* Workers and upstreams are not the service's main process. */
	unsetenv("NOTIFY_SOCKET");
}

/* Send one message of KEY=value lines. */
static void
notify_send(const char *fmt, ...)
{
	va_list	ap;
	char	msg[1024];
	int	n;

	if (notify_fd == -1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof msg)
		n = sizeof msg - 1;
	if (sendto(notify_fd, msg, (size_t)n, MSG_NOSIGNAL,
	    (struct sockaddr *)&notify_sun, notify_len) == -1)
		log_debug("NOTIFY_SOCKET: %s", strerror(errno));
}

/* The one-line status: where it listens and how its upstreams are. */
static void
notify_status_line(char *buf, size_t len)
{
	size_t	i, ready = 0;

	for (i = 0; i < nupstreams; i++)
		ready += upstreams[i]->state == UPSTREAM_READY;
	snprintf(buf, len, "%slistening on %s; %zu of %zu upstreams ready; "
	    "%u sessions", drain_active() ? "draining, " : "", listen_bound,
	    ready, nupstreams, session_count());
}

void
notify_ready(void)
{
	char	status[256];

	notify_status_line(status, sizeof status);
	notify_send("READY=1\nSTATUS=%s\nMAINPID=%ld", status,
	    (long)getpid());
}

void
notify_reloading(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	notify_send("RELOADING=1\nSTATUS=reloading %s\nMONOTONIC_USEC=%llu",
	    conf->file, (unsigned long long)ts.tv_sec * 1000000 +
	    (unsigned long long)ts.tv_nsec / 1000);
}

void
notify_stopping(const char *why)
{
	notify_send("STOPPING=1\nSTATUS=stopping (%s)", why);
}

void
notify_status(void)
{
	char	status[256];

	notify_status_line(status, sizeof status);
	notify_send("STATUS=%s", status);
}
