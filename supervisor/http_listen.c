/* SPDX-License-Identifier: ISC */
/*
 * Listeners: binding the listen addresses, accepting, and the connection
 * limit derived from the descriptor limit; out of descriptors, an idle
 * connection is shed or a new one refused with a 503 and accepting paused.
 */
#include "config.h"

#include <sys/resource.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "http_priv.h"
#include "iochan.h"
#include "log.h"
#include "xmalloc.h"

struct http_listener {
	struct evconnlistener		*lev;
	const struct http_service	*svc;
	TAILQ_ENTRY(http_listener)	 entry;
};

static TAILQ_HEAD(, http_listener) listeners =
    TAILQ_HEAD_INITIALIZER(listeners);
unsigned int			http_max_conns;
static int			reserve_fd = -1;	/* for refusing */
static struct event		*pause_ev;	/* resumes accepting */
int				listen_loopback = 1;

/* Accept a connection. */
static void
http_accept_cb(struct evconnlistener *lev, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct http_listener	*l = arg;

	http_adopt(fd, sa, l->svc);
}

/* Stop or resume accepting on every listener. */
static void
http_accepting(int on)
{
	struct http_listener	*l;

	TAILQ_FOREACH(l, &listeners, entry) {
		if (on)
			evconnlistener_enable(l->lev);
		else
			evconnlistener_disable(l->lev);
	}
}

/* The pause after running out of descriptors is over. */
static void
http_pause_cb(evutil_socket_t fd, short events, void *arg)
{
	http_accepting(1);
}

/* Close the oldest connection waiting idle for its next request. */
static int
http_shed_idle(void)
{
	struct http_conn	*c;

	TAILQ_FOREACH(c, &http_conns, entry) {
		if (c->state == HC_HEAD && !c->head_started &&
		    evbuffer_get_length(iochan_input(c->ch)) == 0) {
			log_info("http %s: closing an idle connection to make "
			    "room", c->peer);
			http_conn_free(c);
			return (1);
		}
	}
	return (0);
}

/*
 * A listener could not accept.  Out of descriptors, the pending connection
 * would make the listener fire again at once, forever: close the oldest
 * idle connection to make room, else refuse the pending one with a 503
 * (by way of the reserve descriptor) and pause accepting for a moment.
 */
static void
http_accept_error_cb(struct evconnlistener *lev, void *arg)
{
	static const char	 busy[] = "HTTP/1.1 503 Service Unavailable\r\n"
	    "Content-Length: 0\r\nConnection: close\r\nRetry-After: 1\r\n\r\n";
	struct timeval		 tv = { HTTP_PAUSE_MS / 1000,
				    (HTTP_PAUSE_MS % 1000) * 1000 };
	int			 err = errno, fd;

	if (err != EMFILE && err != ENFILE && err != ENOBUFS &&
	    err != ENOMEM) {
		log_warn("http: accept");
		return;
	}
	if (http_shed_idle())
		return;
	log_warnx("http: out of file descriptors with %u connections: "
	    "refusing new ones for %d ms", http_conn_count(), HTTP_PAUSE_MS);
	if (reserve_fd >= 0) {
		close(reserve_fd);
		fd = accept4(evconnlistener_get_fd(lev), NULL, NULL,
		    SOCK_CLOEXEC);
		if (fd >= 0) {
			if (write(fd, busy, sizeof busy - 1) < 0)
				log_debug("http: write 503: %s",
				    strerror(errno));
			close(fd);
		}
		reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	}
	http_accepting(0);
	evtimer_add(pause_ev, &tv);
}

/*
 * Derive the connection limit from the descriptor limit, leaving room for
 * everything else the supervisor holds (listeners, workers' channels, the
 * control socket, logs, libevent's own).
 */
void
http_configure(void)
{
	struct rlimit	rl;
	rlim_t		fixed, lim;

	fixed = HTTP_FD_RESERVE + 2 * (rlim_t)conf->nservers;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 ||
	    rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > HTTP_MAX_CONNS)
		lim = HTTP_MAX_CONNS;
	else
		lim = rl.rlim_cur;
	if (lim > 2 * fixed)
		http_max_conns = (unsigned int)(lim - fixed);
	else
		http_max_conns = lim / 2 > 0 ? (unsigned int)(lim / 2) : 1;
	http_heartbeat_configure();
}

/* Is an address a loopback one (127.0.0.0/8 or ::1)? */
static int
http_is_loopback(const struct sockaddr *sa)
{
	const struct sockaddr_in	*s4 = (const void *)sa;
	const struct sockaddr_in6	*s6 = (const void *)sa;

	if (sa->sa_family == AF_INET)
		return ((ntohl(s4->sin_addr.s_addr) >> 24) == 127);
	if (sa->sa_family == AF_INET6)
		return (IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr));
	return (0);
}

/* Listen on "host:port"; writes the bound address (for port 0). */
int
http_listen(const char *addr, const struct http_service *svc, char *bound,
    size_t boundlen)
{
	struct addrinfo		 hints, *res, *ai;
	struct http_listener	*l;
	struct sockaddr_storage	 ss;
	socklen_t		 sslen = sizeof ss;
	char			 host[256], port[16], h[INET6_ADDRSTRLEN];
	char			 why[256];
	unsigned int		 portno;
	int			 error, n = 0;

	if (conf_split_listen(addr, host, sizeof host, &portno, why,
	    sizeof why) != 0) {
		log_warnx("%s", why);
		return (-1);
	}
	snprintf(port, sizeof port, "%u", portno);
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	if ((error = getaddrinfo(host, port, &hints, &res)) != 0) {
		log_warnx("listen %s: %s", addr, gai_strerror(error));
		return (-1);
	}
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		l = xcalloc(1, sizeof *l);
		l->svc = svc;
		/* The largest backlog: the kernel caps it at
		 * net.core.somaxconn (many clients reconnect at once after
		 * a restart). */
		l->lev = evconnlistener_new_bind(base, http_accept_cb, l,
		    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE |
		    LEV_OPT_CLOSE_ON_EXEC, HTTP_BACKLOG, ai->ai_addr,
		    (int)ai->ai_addrlen);
		if (l->lev == NULL) {
			log_warn("listen %s", addr);
			free(l);
			continue;
		}
		evconnlistener_set_error_cb(l->lev, http_accept_error_cb);
		TAILQ_INSERT_TAIL(&listeners, l, entry);
		if (!http_is_loopback(ai->ai_addr))
			listen_loopback = 0;
		if (n++ == 0) {
			getsockname(evconnlistener_get_fd(l->lev),
			    (struct sockaddr *)&ss, &sslen);
			if (ss.ss_family == AF_INET6) {
				struct sockaddr_in6 *s6 = (void *)&ss;

				inet_ntop(AF_INET6, &s6->sin6_addr, h,
				    sizeof h);
				snprintf(bound, boundlen, "[%s]:%u", h,
				    ntohs(s6->sin6_port));
			} else {
				struct sockaddr_in *s4 = (void *)&ss;

				inet_ntop(AF_INET, &s4->sin_addr, h, sizeof h);
				snprintf(bound, boundlen, "%s:%u", h,
				    ntohs(s4->sin_port));
			}
		}
		/* Port 0 must mean one port for all addresses: stop here. */
		if (strcmp(port, "0") == 0)
			break;
	}
	freeaddrinfo(res);
	if (n == 0)
		return (-1);
	if (reserve_fd < 0 &&
	    (reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0)
		log_warn("open /dev/null (the reserve descriptor)");
	if (pause_ev == NULL)
		pause_ev = evtimer_new(base, http_pause_cb, NULL);
	http_configure();
	return (0);
}

void
http_close_listeners(void)
{
	struct http_listener	*l;

	while ((l = TAILQ_FIRST(&listeners)) != NULL) {
		TAILQ_REMOVE(&listeners, l, entry);
		evconnlistener_free(l->lev);
		free(l);
	}
	if (pause_ev != NULL) {
		event_free(pause_ev);
		pause_ev = NULL;
	}
	http_heartbeat_free();
	if (reserve_fd >= 0) {
		close(reserve_fd);
		reserve_fd = -1;
	}
}
