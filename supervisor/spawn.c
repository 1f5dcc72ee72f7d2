/* SPDX-License-Identifier: ISC */
/*
 * Starting a worker process: a socketpair whose other end becomes the
 * child's fd 3, stdin on /dev/null, every other descriptor closed, the
 * signal mask cleared, then execv.  Upstream workers (upstream.c) and LLM
 * provider workers (provider.c) start the same way.
 */
#include "config.h"

#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <event2/util.h>

#include "log.h"
#include "supervisor.h"

/* Close every descriptor from lowfd up in a new child. */
static void
close_from(int lowfd)
{
#ifdef HAVE_CLOSE_RANGE
	if (close_range((unsigned int)lowfd, ~0U, 0) == 0)
		return;
#endif
	for (int fd = lowfd; fd < 65536; fd++)
		close(fd);
}

pid_t
spawn_worker(const char *path, char *const argv[], int *chfd, char *err,
    size_t errlen)
{
	int		 sv[2], devnull;
	pid_t		 pid;
	sigset_t	 all;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
		snprintf(err, errlen, "socketpair: %s", strerror(errno));
		return (-1);
	}
	switch (pid = fork()) {
	case -1:
		snprintf(err, errlen, "fork: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		return (-1);
	case 0:
		sigemptyset(&all);
		sigprocmask(SIG_SETMASK, &all, NULL);
		signal(SIGPIPE, SIG_DFL);
		if (sv[1] == 3)
			fcntl(3, F_SETFD, 0);
		else if (dup2(sv[1], 3) == -1)
			_exit(127);
		if ((devnull = open("/dev/null", O_RDWR)) != -1) {
			dup2(devnull, 0);
			if (devnull > 3)
				close(devnull);
		}
		close_from(4);
		execv(path, argv);
		_exit(127);
	}
	close(sv[1]);
	evutil_make_socket_nonblocking(sv[0]);
	*chfd = sv[0];
	return (pid);
}
