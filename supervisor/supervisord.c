/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <sys/resource.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "log.h"
#include "xmalloc.h"
#include "supervisor.h"

#ifndef SYSCONFDIR
#define SYSCONFDIR "/etc"
#endif

static struct event	*ev_sigterm, *ev_sigint, *ev_sigchld, *ev_sighup;
static struct event	*ev_exit_timer;
static int		 exiting;

/*
 * Fill a buffer with cryptographically random bytes.  Here rather than in
 * globals.c so that a test harness can supply a deterministic one.
 */
void
fill_random(void *buf, size_t len)
{
	unsigned char	*p = buf;
	ssize_t		 n;

	while (len > 0) {
		n = getrandom(p, len, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			fatal("getrandom");
		}
		p += n;
		len -= (size_t)n;
	}
}

/*
 * Write the lock file an editor finds the gateway by (ws_lockfile): the
 * WebSocket URL and a fresh token, which is accepted from now on.
 */
static void
lockfile_start(void)
{
	char	err[512];

	switch (auth_lockfile_apply(conf, listen_bound, err, sizeof err)) {
	case -1:
		fatalx("%s", err);
	case 1:
		log_warnx("%s", err);
		break;
	}
}

/* Print the usage; exit 0 if asked for (-h), 2 after a bad option. */
static __attribute__((noreturn)) void
usage(int asked)
{
	fprintf(asked ? stdout : stderr,
	    "usage: mcp-supervisord [-dhnVv] [-f file] [-s socket]\n"
	    "  -d         stay in the foreground, logging to stderr\n"
	    "  -f file    configuration file (default %s)\n"
	    "  -h         print this help and exit\n"
	    "  -n         check the configuration as startup would, and exit\n"
	    "  -s socket  control socket (default: the file's control)\n"
	    "  -V         print the version and exit\n"
	    "  -v         more verbose (-nv prints the configuration)\n",
	    SYSCONFDIR "/mcp-supervisord.conf");
	exit(asked ? 0 : 2);
}

/* Log a warning of the configuration check. */
static void
warn_log(const char *msg)
{
	log_warnx("%s", msg);
}

/* Print a warning of -n. */
static void
warn_print(const char *msg)
{
	fprintf(stderr, "mcp-supervisord: warning: %s\n", msg);
}

/* Finish exiting once every worker is gone. */
static void
check_exit(void)
{
	if (exiting && proc_all_exited()) {
		log_info("exiting");
		event_base_loopexit(base, NULL);
	}
}

/* Give up waiting for workers at exit. */
static void
exit_timer_cb(evutil_socket_t fd, short events, void *arg)
{
	log_warnx("workers did not exit in time");
	event_base_loopexit(base, NULL);
}

/* Begin an orderly exit. */
static void
begin_exit(const char *why)
{
	struct timeval	tv = { 10, 0 };

	if (exiting)
		return;
	exiting = 1;
	log_info("%s, shutting down", why);
	notify_stopping(why);
	http_close_listeners();
	control_close();
	listen_close_all();
	session_free_all();
	upstream_stop_all();
	provider_stop_all();
	idp_stop_all();
	trace_stop();
	ev_exit_timer = evtimer_new(base, exit_timer_cb, NULL);
	evtimer_add(ev_exit_timer, &tv);
	check_exit();
}

/* Handle a signal. */
static void
signal_cb(evutil_socket_t sig, short events, void *arg)
{
	switch (sig) {
	case SIGTERM:
		begin_exit("SIGTERM");
		break;
	case SIGINT:
		begin_exit("SIGINT");
		break;
	case SIGCHLD:
		proc_reap();
		check_exit();
		break;
	case SIGHUP:
		if (!exiting)
			json_decref(reload());
		break;
	}
}

/* The path of a worker beside the upstream worker (mcp-llm, mcp-idp). */
static const char *
beside_path(const char *worker, const char *name)
{
	const char	*slash = strrchr(worker, '/');
	char		*path;

	if (slash == NULL)
		return (name);
	xasprintf(&path, "%.*s/%s", (int)(slash - worker), worker, name);
	return (path);
}

/* Raise the open-file limit to the hard limit. */
static void
raise_nofile(void)
{
	struct rlimit	rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
			log_warn("setrlimit RLIMIT_NOFILE");
	}
}

int
main(int argc, char **argv)
{
	const char	*file = SYSCONFDIR "/mcp-supervisord.conf", *env;
	char		 err[1024], *path;
	int		 ch, foreground = 0, check = 0, verbose = 0;

	xmalloc_libraries();
	while ((ch = getopt(argc, argv, "df:hns:Vv")) != -1) {
		switch (ch) {
		case 'd':
			foreground = 1;
			break;
		case 'f':
			file = optarg;
			break;
		case 'h':
			usage(1);
		case 'n':
			check = 1;
			break;
		case 's':
			control_arg = optarg;
			break;
		case 'V':
			printf("mcp-supervisord %s\n", PACKAGE_VERSION);
			exit(0);
		case 'v':
			verbose++;
			break;
		default:
			usage(0);
		}
	}
	if (optind != argc)
		usage(0);

	/* Until it is a daemon, it tells its own terminal what goes wrong. */
	log_init("mcp-supervisord", 1, verbose);
	event_set_log_callback(log_libevent);
	/*
	 * Not dumpable, before any secret is read: the upstreams run as our
	 * user, and must not read our environment, tokens and keys in /proc
	 * (nor a core file).  Workers do the same for themselves.
	 */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
		fatal("prctl PR_SET_DUMPABLE");
	if ((conf = conf_load(file, err, sizeof err)) == NULL) {
		fprintf(stderr, "%s\n", err);
		exit(1);
	}
	if (control_arg != NULL) {
		if (control_arg[0] != '/') {
			fprintf(stderr, "mcp-supervisord: -s needs an absolute "
			    "path\n");
			exit(1);
		}
		free(conf->control);
		conf->control = xstrdup(control_arg);
	}
	/* A reload reads the same file after daemon() has left the cwd. */
	if ((path = realpath(file, NULL)) != NULL) {
		free(conf->file);
		conf->file = path;
	}
	if (preflight(conf, 0, &listen_scope, check ? warn_print : warn_log,
	    err, sizeof err) != 0) {
		fprintf(stderr, "%s\n", err);
		exit(1);
	}
	if (check) {
		if (verbose)
			conf_print(conf, stdout);
		else
			fprintf(stderr, "configuration OK\n");
		conf_free(conf);
		exit(0);
	}
	if ((env = getenv("MCP_SUPERVISOR_WORKER")) != NULL && *env != '\0')
		worker_path = env;
	if (access(worker_path, X_OK) != 0)
		fatal("worker %s", worker_path);
	/* The lighter worker for stdio upstreams sits next to the other. */
	xasprintf(&stdio_worker_path, "%s-stdio", worker_path);
	if (access(stdio_worker_path, X_OK) != 0) {
		log_debug("no %s, stdio upstreams use %s", stdio_worker_path,
		    worker_path);
		free(stdio_worker_path);
		stdio_worker_path = xstrdup(worker_path);
	}
	/* And the LLM providers' worker, mcp-llm. */
	llm_worker_path = beside_path(worker_path, "mcp-llm");
	if (conf->nllms > 0 && access(llm_worker_path, X_OK) != 0)
		fatal("LLM worker %s", llm_worker_path);
	/* And the OAuth issuers' worker, mcp-idp. */
	idp_worker_path = beside_path(worker_path, "mcp-idp");
	if (conf->oauth != NULL && access(idp_worker_path, X_OK) != 0)
		fatal("OAuth issuer worker %s", idp_worker_path);
	otel_worker_path = beside_path(worker_path, "mcp-otel");
	if (conf->tracing != NULL && access(otel_worker_path, X_OK) != 0)
		fatal("trace exporter %s", otel_worker_path);

	notify_init();
	signal(SIGPIPE, SIG_IGN);
	malloc_tune();
	raise_nofile();
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
		log_warn("prctl PR_SET_CHILD_SUBREAPER");

	if ((base = event_base_new()) == NULL)
		fatalx("event_base_new");
	daemon_started = time(NULL);
	daemon_exit = begin_exit;
	session_init();
	catalog_init();
	if (pin_open(conf->state_dir, conf->state_dir_at.line != 0, err,
	    sizeof err) != 0)
		fatalx("%s", err);
	route_init();
	proxy_configure();
	rate_configure();
	continuation_init();
	if (auth_configure(conf, err, sizeof err) != 0 ||
	    continuation_configure(conf, err, sizeof err) != 0)
		fatalx("%s", err);
	oauth_configure(conf);
	if (http_listen(conf->listen, &gateway_service, listen_bound,
	    sizeof listen_bound) != 0)
		exit(1);
	if (metrics_listen_start(metrics_bound, sizeof metrics_bound) != 0)
		exit(1);
	if (access_log_open(conf, err, sizeof err) != 0)
		fatalx("%s", err);
	if (control_listen(conf->control) != 0)
		exit(1);
	log_info("listening on http://%s/mcp, control socket %s (instance "
	    "%s%s%s)", listen_bound, conf->control, conf->instance,
	    metrics_bound[0] != '\0' ? ", metrics on " : "", metrics_bound);
	if (!foreground && conf->access_log != NULL &&
	    strcmp(conf->access_log, "stderr") == 0)
		log_warnx("access_log \"stderr\" without -d: a daemon's "
		    "stderr is /dev/null, the lines are lost");

	if (!foreground) {
		if (daemon(0, 0) != 0)
			fatal("daemon");
		log_init("mcp-supervisord", 0, verbose);
		if (event_reinit(base) != 0)
			fatalx("event_reinit");
	}
	if (conf->ws_lockfile != NULL)
		lockfile_start();

	ev_sigterm = evsignal_new(base, SIGTERM, signal_cb, NULL);
	ev_sigint = evsignal_new(base, SIGINT, signal_cb, NULL);
	ev_sigchld = evsignal_new(base, SIGCHLD, signal_cb, NULL);
	ev_sighup = evsignal_new(base, SIGHUP, signal_cb, NULL);
	evsignal_add(ev_sigterm, NULL);
	evsignal_add(ev_sigint, NULL);
	evsignal_add(ev_sigchld, NULL);
	evsignal_add(ev_sighup, NULL);

	upstream_init_all();
	provider_init_all();
	idp_init_all();
	trace_init();
	notify_ready();
	event_base_dispatch(base);

	proc_reap();
	access_log_close();
	drain_free();
	metrics_free();
	auth_lockfile_remove();
	oauth_shutdown();
	uplogin_store_close();
	catalog_free();
	rate_free();
	event_free(ev_sigterm);
	event_free(ev_sigint);
	event_free(ev_sigchld);
	event_free(ev_sighup);
	if (ev_exit_timer != NULL)
		event_free(ev_exit_timer);
	event_base_free(base);
	conf_free(conf);
	return (0);
}
