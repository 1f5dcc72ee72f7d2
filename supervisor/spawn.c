/* SPDX-License-Identifier: ISC */
/*
 * Starting a worker process: a socketpair whose other end becomes the
 * child's fd 3, stdin on /dev/null, every other descriptor closed, the
 * signal mask cleared, then execve with an environment of its own.
 * Upstream workers (upstream.c) and LLM provider workers (provider.c)
 * start the same way.
 *
 * Our environment is where ${env:NAME} secrets come from, and a worker
 * runs as the same user as its upstream, which could read a worker's
 * environment in /proc before the worker has made itself non-dumpable.
 * So a worker gets only env_base (common/env.c), JOURNAL_STREAM (it logs
 * to our standard error), LD_LIBRARY_PATH (its libraries are where ours
 * are), and for a remote upstream or a provider libcurl's proxies and
 * OpenSSL's certificate paths; what it needs of the rest comes in its
 * CONFIG frame: the values an upstream's pass_env names, and headers and
 * api_key with their ${env:} references expanded.
 */
#include "config.h"

#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/util.h>

#include "env.h"
#include "log.h"
#include "secret.h"
#include "supervisor.h"

extern char **environ;

/* A test harness's stand-in for fork and exec, or NULL (supervisor.h). */
spawn_hook_fn	 spawn_hook;

static const char *const worker_env[] = {
	"JOURNAL_STREAM", "LD_LIBRARY_PATH", NULL
};

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
spawn_worker(const char *path, char *const argv[], int net, int *chfd,
    char *err, size_t errlen)
{
	int		 sv[2], devnull;
	pid_t		 pid;
	struct envv	 env;

	if (spawn_hook != NULL)
		return (spawn_hook(path, argv, net, chfd, err, errlen));
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
		snprintf(err, errlen, "socketpair: %s", strerror(errno));
		return (-1);
	}
	envv_init(&env);
	envv_pick(&env, environ, env_base);
	envv_pick(&env, environ, worker_env);
	if (net)
		envv_pick(&env, environ, env_net);
	switch (pid = fork()) {
	case -1:
		snprintf(err, errlen, "fork: %s", strerror(errno));
		envv_free(&env);
		close(sv[0]);
		close(sv[1]);
		return (-1);
	case 0:
		env_child_signals();
		if (sv[1] == FRAME_CHANNEL_FD)
			fcntl(FRAME_CHANNEL_FD, F_SETFD, 0);
		else if (dup2(sv[1], FRAME_CHANNEL_FD) == -1)
			_exit(127);
		if ((devnull = open("/dev/null", O_RDWR)) != -1) {
			dup2(devnull, 0);
			if (devnull > FRAME_CHANNEL_FD)
				close(devnull);
		}
		close_from(FRAME_CHANNEL_FD + 1);
		execve(path, argv, env.v);
		_exit(127);
	}
	envv_free(&env);
	close(sv[1]);
	evutil_make_socket_nonblocking(sv[0]);
	*chfd = sv[0];
	return (pid);
}

json_t *
spawn_passed_env(char *const *names)
{
	json_t		*o = json_object();
	const char	*v;
	size_t		 i;

	for (i = 0; names != NULL && names[i] != NULL; i++) {
		if ((v = getenv(names[i])) != NULL &&
		    json_object_set_new(o, names[i], json_string(v)) != 0)
			log_warnx("pass_env: %s is not valid UTF-8, not passed",
			    names[i]);
	}
	return (o);
}

json_t *
spawn_expand_env(char *const *values)
{
	json_t	*a = json_array(), *s;
	char	*v;
	size_t	 i;

	for (i = 0; values[i] != NULL; i++) {
		v = secret_expand_env(values[i]);
		/* Not UTF-8: the worker says which variable it lacks. */
		if ((s = json_string(v)) == NULL)
			s = json_string(values[i]);
		json_array_append_new(a, s);
		explicit_bzero(v, strlen(v));
		free(v);
	}
	return (a);
}
