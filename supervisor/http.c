#include "config.h"

#include <sys/resource.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "http_parse.h"
#include "iochan.h"
#include "log.h"
#include "proxy_parse.h"
#include "supervisor.h"
#include "xmalloc.h"

#define HTTP_MAX_HEAD		16384
#define HTTP_HEAD_TIMEOUT	30	/* seconds to send a whole head */
#define HTTP_IDLE_TIMEOUT	120	/* seconds idle between requests */
#define HTTP_BODY_TIMEOUT	30	/* seconds for a body, plus: */
#define HTTP_BODY_RATE		65536	/* one second per so many bytes */
#define HTTP_WRITE_TIMEOUT	60	/* seconds without write progress */
#define HTTP_MAX_UNREAD		65536	/* input held while busy */
#define HTTP_FD_RESERVE		64	/* descriptors kept for the rest */
#define HTTP_MAX_CONNS		1000000	/* even with no descriptor limit */
#define HTTP_PAUSE_MS		1000	/* accepting paused when out of fds */
#define HTTP_HEARTBEAT_TICKS	3	/* heartbeat timer ticks per interval */
#define HTTP_COPY_MAX		16384	/* smaller chunks are copied into the
					   output, larger ones moved */
#define HTTP_READ_SIZE		4096	/* first read of a request */

enum http_state {
	HC_HEAD = 0,		/* reading a request head */
	HC_PROXY,		/* from a trusted proxy: a PROXY protocol
				   header may come first */
	HC_BODY,		/* reading its body */
	HC_HANDLING,		/* the handler owes a response */
	HC_STREAMING,		/* a chunked response is under way */
	HC_CLOSING,		/* flushing, then closing */
	HC_UPGRADED		/* another protocol (WebSocket) owns it */
};

/* One client connection; owned by the connection list. */
struct http_conn {
	struct iochan		*ch;
	enum http_state		 state;
	const struct http_service *svc;
	char			*headbuf;	/* the head's bytes */
	char			*method;
	char			*path;
	char			*query;
	struct http_request	 req;
	enum http_body		 framing;
	uint64_t		 remaining;
	struct http_chunked	 chunked;
	int			 keepalive;
	int			 too_big;	/* body over max_body */
	struct stream		*stream;	/* borrowed */
	/*
	 * Deadlines, not inactivity timers: a head must be complete within
	 * HTTP_HEAD_TIMEOUT of its first byte (of the accept, for the first
	 * request), a body within HTTP_BODY_TIMEOUT plus a second per
	 * HTTP_BODY_RATE bytes, so a peer trickling bytes cannot hold a
	 * connection.  Keep-alive idleness is HTTP_IDLE_TIMEOUT.
	 */
	struct event		*deadline;
	struct event		*next_ev;	/* takes pipelined input; or NULL */
	int			 head_started;	/* bytes of a head arrived */
	int64_t			 body_start;	/* monotonic ms */
	uint64_t		 body_bytes;	/* received so far */
	unsigned int		 wrote_tick;	/* heartbeat tick of the last
						   event-stream write */
	int			 doomed;	/* to close from the loop */
	int			 nolog;		/* no access log line for the
						   response under way */
	const struct http_upgraded *up;	/* HC_UPGRADED: its owner */
	void			*up_arg;
	struct netaddr		 conn_addr;	/* the connection's peer (the
						   PROXY header's client);
						   family 0 for none */
	char			 conn_peer[64];	/* the same as text */
	char			 peer[64];	/* the request's: X-Forwarded-For
						   from a trusted proxy */
	TAILQ_ENTRY(http_conn)	 entry;
};

struct http_listener {
	struct evconnlistener		*lev;
	const struct http_service	*svc;
	TAILQ_ENTRY(http_listener)	 entry;
};

/* Oldest first: the head is the first to shed when out of descriptors. */
static TAILQ_HEAD(, http_conn)	conns = TAILQ_HEAD_INITIALIZER(conns);
static TAILQ_HEAD(, http_listener) listeners =
    TAILQ_HEAD_INITIALIZER(listeners);
static unsigned int		nconns;
static unsigned int		max_conns;
static int			reserve_fd = -1;	/* for refusing */
static struct event		*pause_ev;	/* resumes accepting */
static struct event		*heartbeat_ev;
static unsigned int		heartbeat_tick;
static size_t			queued_total;	/* in every output */
static struct event		*reap_ev;	/* closes doomed ones */
int				listen_loopback = 1;

static void	http_read_cb(struct iochan *, void *);
static void	http_drain_cb(struct iochan *, void *);
static void	http_event_cb(struct iochan *, int, void *);
static void	http_conn_free(struct http_conn *);
static void	http_next(struct http_conn *);
static void	http_next_cb(evutil_socket_t, short, void *);
static void	http_deadline_cb(evutil_socket_t, short, void *);
static void	http_heartbeat_configure(void);
static void	http_fail(struct http_conn *, int, const char *);
static void	http_count_cb(struct evbuffer *,
		    const struct evbuffer_cb_info *, void *);
static void	http_in_cb(struct evbuffer *,
		    const struct evbuffer_cb_info *, void *);

unsigned int
http_conn_count(void)
{
	return (nconns);
}

/* Arm the connection's deadline in seconds from now, or clear it (0). */
static void
http_deadline(struct http_conn *c, int64_t ms)
{
	struct timeval	tv;

	if (ms <= 0) {
		evtimer_del(c->deadline);
		return;
	}
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	evtimer_add(c->deadline, &tv);
}

/* Reset per-request state. */
static void
http_reset(struct http_conn *c)
{
	free(c->headbuf);
	free(c->method);
	free(c->path);
	free(c->query);
	c->headbuf = c->method = c->path = c->query = NULL;
	if (c->req.body != NULL)
		evbuffer_free(c->req.body);
	memset(&c->req, 0, sizeof c->req);
	c->framing = HTTP_BODY_NONE;
	c->remaining = 0;
	c->too_big = 0;
	c->stream = NULL;
	c->nolog = 0;
}

void
http_adopt(int fd, const struct sockaddr *sa, const struct http_service *svc)
{
	struct http_conn	*c;
	static const char	 busy[] = "HTTP/1.1 503 Service Unavailable\r\n"
	    "Content-Length: 0\r\nConnection: close\r\nRetry-After: 1\r\n\r\n";
	int			 one = 1;

	if (nconns >= max_conns) {
		char	peer[NETADDR_TEXT_MAX];
		struct netaddr	a;

		if (netaddr_from_sockaddr(sa, &a) == 0)
			netaddr_format(&a, peer, sizeof peer);
		else
			snprintf(peer, sizeof peer, "local");
		log_warnx("http: %u connections (the limit), refusing more "
		    "(%s)", nconns, peer);
		metrics_refused("limit");
		access_log_http(peer, "-", "-", 503, "the connection limit");
		if (write(fd, busy, sizeof busy - 1) < 0)
			log_debug("http: write 503: %s", strerror(errno));
		close(fd);
		return;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	c = xcalloc(1, sizeof *c);
	c->svc = svc;
	c->deadline = evtimer_new(base, http_deadline_cb, c);
	if (c->deadline == NULL)
		fatalx("evtimer_new");
	if (netaddr_from_sockaddr(sa, &c->conn_addr) == 0)
		netaddr_format(&c->conn_addr, c->conn_peer,
		    sizeof c->conn_peer);
	else
		snprintf(c->conn_peer, sizeof c->conn_peer, "local");
	memcpy(c->peer, c->conn_peer, sizeof c->peer);
	/* A trusted proxy may say who its client is, first thing. */
	if (c->conn_addr.family != 0 && proxy_trusted(&c->conn_addr))
		c->state = HC_PROXY;
	evutil_make_socket_nonblocking(fd);
	c->ch = iochan_new(base, fd, http_read_cb, http_drain_cb,
	    http_event_cb, c);
	evbuffer_add_cb(iochan_output(c->ch), http_count_cb, NULL);
	evbuffer_add_cb(iochan_input(c->ch), http_in_cb, NULL);
	iochan_read_size(c->ch, HTTP_READ_SIZE);
	iochan_timeouts(c->ch, 0, HTTP_WRITE_TIMEOUT);
	c->head_started = 1;	/* the first head is due from the accept */
	http_deadline(c, HTTP_HEAD_TIMEOUT * 1000);
	TAILQ_INSERT_TAIL(&conns, c, entry);
	nconns++;
}

/* Accept a connection. */
static void
http_accept_cb(struct evconnlistener *lev, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct http_listener	*l = arg;

	http_adopt(fd, sa, l->svc);
}

/* Count what every connection's output holds (for max_buffered). */
static void
http_count_cb(struct evbuffer *buf, const struct evbuffer_cb_info *info,
    void *arg)
{
	queued_total += info->n_added;
	queued_total -= info->n_deleted;
	metrics_bytes(0, info->n_deleted);
}

/* Count what comes from clients. */
static void
http_in_cb(struct evbuffer *buf, const struct evbuffer_cb_info *info,
    void *arg)
{
	if (info->n_added > 0)
		metrics_bytes(info->n_added, 0);
}

size_t
http_stream_queued(void)
{
	return (queued_total);
}

struct http_conn *
http_slowest(size_t *queued)
{
	struct http_conn	*c, *best = NULL;
	size_t			 n;

	*queued = 0;
	TAILQ_FOREACH(c, &conns, entry) {
		if ((n = iochan_queued(c->ch)) > *queued) {
			*queued = n;
			best = c;
		}
	}
	return (best);
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

	TAILQ_FOREACH(c, &conns, entry) {
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
	    "refusing new ones for %d ms", nconns, HTTP_PAUSE_MS);
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
		max_conns = (unsigned int)(lim - fixed);
	else
		max_conns = lim / 2 > 0 ? (unsigned int)(lim / 2) : 1;
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
		l->lev = evconnlistener_new_bind(base, http_accept_cb, l,
		    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE |
		    LEV_OPT_CLOSE_ON_EXEC, 1024, ai->ai_addr,
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
	if (pause_ev == NULL &&
	    (pause_ev = evtimer_new(base, http_pause_cb, NULL)) == NULL)
		fatalx("evtimer_new");
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
	if (heartbeat_ev != NULL) {
		event_free(heartbeat_ev);
		heartbeat_ev = NULL;
	}
	if (reserve_fd >= 0) {
		close(reserve_fd);
		reserve_fd = -1;
	}
}

/*
 * Write an SSE comment on every event stream that has carried nothing for
 * about sse_heartbeat seconds, so that proxies and clients with idle
 * timeouts keep it open and a peer that is gone is noticed.
 */
static void
http_heartbeat_cb(evutil_socket_t fd, short events, void *arg)
{
	static const char	 beat[] = "d\r\n: keepalive\n\n\r\n";
	struct http_conn	*c;

	heartbeat_tick++;
	TAILQ_FOREACH(c, &conns, entry) {
		if (c->state != HC_STREAMING ||
		    heartbeat_tick - c->wrote_tick < HTTP_HEARTBEAT_TICKS)
			continue;
		evbuffer_add(iochan_output(c->ch), beat, sizeof beat - 1);
		c->wrote_tick = heartbeat_tick;
	}
	log_flush_suppressed();
}

/* Start, change or stop the heartbeat timer (sse_heartbeat). */
static void
http_heartbeat_configure(void)
{
	struct timeval	tv;
	unsigned int	ms;

	if (heartbeat_ev == NULL && (heartbeat_ev = event_new(base, -1,
	    EV_PERSIST, http_heartbeat_cb, NULL)) == NULL)
		fatalx("event_new");
	if (conf->sse_heartbeat == 0) {
		evtimer_del(heartbeat_ev);
		return;
	}
	ms = conf->sse_heartbeat * 1000 / HTTP_HEARTBEAT_TICKS;
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	evtimer_add(heartbeat_ev, &tv);
}

/* Write a status line and common headers. */
static void
http_head_out(struct http_conn *c, int status, const char *ctype,
    const char *extra)
{
	struct evbuffer	*out = iochan_output(c->ch);

	/* A request refused at the HTTP level: one access log line. */
	if (status >= 400 && !c->nolog)
		access_log_http(c->peer, c->method != NULL ? c->method : "-",
		    c->path != NULL ? c->path : "-", status, NULL);
	evbuffer_add_printf(out, "HTTP/1.1 %d %s\r\n", status,
	    http_reason(status));
	if (ctype != NULL)
		evbuffer_add_printf(out, "Content-Type: %s\r\n", ctype);
	if (extra != NULL)
		evbuffer_add(out, extra, strlen(extra));
	if (!c->keepalive)
		evbuffer_add(out, "Connection: close\r\n", 19);
}

/* Is the request being answered a HEAD? */
static int
http_is_head(const struct http_conn *c)
{
	return (c->method != NULL && strcmp(c->method, "HEAD") == 0);
}

/* The response is complete: next request, or close. */
static void
http_done(struct http_conn *c)
{
	if (c->stream != NULL) {
		c->stream->conn = NULL;
		c->stream = NULL;
	}
	if (!c->keepalive || c->too_big) {
		c->state = HC_CLOSING;
		iochan_read(c->ch, 0);
		if (evbuffer_get_length(iochan_output(c->ch)) == 0)
			http_conn_free(c);
		return;
	}
	http_reset(c);
	memcpy(c->peer, c->conn_peer, sizeof c->peer);
	c->state = HC_HEAD;
	c->head_started = 0;
	http_deadline(c, HTTP_IDLE_TIMEOUT * 1000);
	iochan_read(c->ch, 1);
	/*
	 * Pipelined input may already hold the next request.  It is taken on
	 * the next turn of the loop, never from here: whoever ended this
	 * response (a stream being sent to, a session ending) is still
	 * running, and the next request may free what it holds.
	 */
	if (evbuffer_get_length(iochan_input(c->ch)) != 0) {
		if (c->next_ev == NULL && (c->next_ev = event_new(base, -1, 0,
		    http_next_cb, c)) == NULL)
			fatalx("event_new");
		event_active(c->next_ev, EV_TIMEOUT, 0);
	}
}

void
http_reply(struct http_conn *c, int status, const char *ctype,
    const char *extra, const char *body, size_t len)
{
	struct evbuffer	*out = iochan_output(c->ch);

	if (c->state != HC_HANDLING)
		fatalx("%s: no request to answer", __func__);
	http_head_out(c, status, ctype, extra);
	evbuffer_add_printf(out, "Content-Length: %zu\r\n\r\n", len);
	/* The answer to HEAD has the headers of the body, not the body. */
	if (len != 0 && !http_is_head(c))
		evbuffer_add(out, body, len);
	http_done(c);
}

void
http_reply_buffer(struct http_conn *c, int status, const char *ctype,
    const char *extra, struct evbuffer *body)
{
	struct evbuffer	*out = iochan_output(c->ch);

	if (c->state != HC_HANDLING)
		fatalx("%s: no request to answer", __func__);
	http_head_out(c, status, ctype, extra);
	evbuffer_add_printf(out, "Content-Length: %zu\r\n\r\n",
	    evbuffer_get_length(body));
	if (http_is_head(c))
		evbuffer_drain(body, evbuffer_get_length(body));
	else
		evbuffer_add_buffer(out, body);
	http_done(c);
}

void
http_stream_start(struct http_conn *c, const char *extra)
{
	struct evbuffer	*out = iochan_output(c->ch);

	if (c->state != HC_HANDLING)
		fatalx("%s: no request to answer", __func__);
	http_head_out(c, 200, "text/event-stream", extra);
	evbuffer_add_printf(out, "Cache-Control: no-cache\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n");
	c->state = HC_STREAMING;
	c->wrote_tick = heartbeat_tick;
}

void
http_stream_write(struct http_conn *c, struct evbuffer *data)
{
	struct evbuffer	*out = iochan_output(c->ch);
	size_t		 len = evbuffer_get_length(data);

	if (c->state != HC_STREAMING)
		fatalx("%s: not streaming", __func__);
	if (len == 0 || c->doomed) {
		/* A connection about to close takes no more. */
		evbuffer_drain(data, len);
		return;
	}
	c->wrote_tick = heartbeat_tick;
	evbuffer_add_printf(out, "%zx\r\n", len);
	/* A small chunk is copied, so many of them share the output's
	 * chains; a large one is moved (or referenced), never copied. */
	if (len < HTTP_COPY_MAX) {
		evbuffer_add(out, evbuffer_pullup(data, -1), len);
		evbuffer_drain(data, len);
	} else
		evbuffer_add_buffer(out, data);
	evbuffer_add(out, "\r\n", 2);
}

void
http_stream_end(struct http_conn *c)
{
	if (c->state != HC_STREAMING)
		fatalx("%s: not streaming", __func__);
	evbuffer_add(iochan_output(c->ch), "0\r\n\r\n", 5);
	c->state = HC_HANDLING;
	http_done(c);
}

void
http_set_stream(struct http_conn *c, struct stream *st)
{
	c->stream = st;
}

/* Bytes waiting to be written to a connection. */
size_t
http_conn_queued(struct http_conn *c)
{
	return (iochan_queued(c->ch));
}

const char *
http_conn_peer(struct http_conn *c)
{
	return (c->peer);
}

void
http_conn_nolog(struct http_conn *c)
{
	c->nolog = 1;
}

/* Drop a connection at once. */
void
http_conn_close(struct http_conn *c)
{
	http_conn_free(c);
}

/* Close the connections marked doomed. */
static void
http_reap_cb(evutil_socket_t fd, short events, void *arg)
{
	struct http_conn	*c, *next;

	for (c = TAILQ_FIRST(&conns); c != NULL; c = next) {
		next = TAILQ_NEXT(c, entry);
		if (c->doomed)
			http_conn_free(c);
	}
}

int
http_conn_doomed(struct http_conn *c)
{
	return (c->doomed);
}

void
http_conn_close_later(struct http_conn *c)
{
	if (reap_ev == NULL && (reap_ev = event_new(base, -1, 0,
	    http_reap_cb, NULL)) == NULL)
		fatalx("event_new");
	c->doomed = 1;
	iochan_read(c->ch, 0);
	event_active(reap_ev, EV_TIMEOUT, 0);
}

static void
http_conn_free(struct http_conn *c)
{
	/* The protocol that took the connection over lets go first. */
	if (c->up != NULL) {
		c->up->closed(c, c->up_arg);
		c->up = NULL;
	}
	if (c->stream != NULL) {
		stream_detach(c->stream);
		c->stream = NULL;
	}
	http_reset(c);
	queued_total -= iochan_queued(c->ch);
	iochan_free(c->ch);
	event_free(c->deadline);
	if (c->next_ev != NULL)
		event_free(c->next_ev);
	TAILQ_REMOVE(&conns, c, entry);
	nconns--;
	free(c);
}

/* Answer a malformed request and close. */
static void
http_fail(struct http_conn *c, int status, const char *msg)
{
	char	body[256];
	int	n;

	log_debug("http %s: %d %s", c->peer, status, msg);
	c->keepalive = 0;
	c->state = HC_HANDLING;
	n = snprintf(body, sizeof body, "%s\n", msg);
	http_reply(c, status, "text/plain; charset=utf-8", NULL, body,
	    (size_t)n);
}

/* Hand a complete request to the handler. */
static void
http_dispatch(struct http_conn *c)
{
	c->state = HC_HANDLING;
	http_deadline(c, 0);
	c->svc->handle(c, &c->req);
}

/* Return the name of a header that must appear once but is repeated. */
static const char *
http_duplicate(const struct http_head *h)
{
	static const char *const single[] = {
		"Host", "Content-Type", "Origin", "Mcp-Session-Id",
		"MCP-Protocol-Version", "Last-Event-ID", "Authorization",
		"Upgrade", "Sec-WebSocket-Key", "Sec-WebSocket-Version", NULL
	};
	size_t	i, j, n, len;

	for (i = 0; single[i] != NULL; i++) {
		len = strlen(single[i]);
		for (j = n = 0; j < h->nheaders; j++) {
			if (h->headers[j].namelen == len &&
			    strncasecmp(h->headers[j].name, single[i], len) == 0)
				n++;
		}
		if (n > 1)
			return (single[i]);
	}
	return (NULL);
}

/* Parse a request head if a whole one is buffered. */
static int
http_read_head(struct http_conn *c)
{
	struct evbuffer		*in = iochan_input(c->ch);
	struct evbuffer_ptr	 end;
	const struct http_header *h;
	size_t			 avail = evbuffer_get_length(in), headlen;
	ssize_t			 r;
	char			*q, why[64];
	const char		*dup;
	struct netaddr		 client;
	int			 keep;

	end = evbuffer_search(in, "\r\n\r\n", 4, NULL);
	if (end.pos < 0) {
		if (avail > HTTP_MAX_HEAD) {
			http_fail(c, 431, "request head too large");
			return (-1);
		}
		return (0);
	}
	headlen = (size_t)end.pos + 4;
	if (headlen > HTTP_MAX_HEAD) {
		http_fail(c, 431, "request head too large");
		return (-1);
	}
	/* One byte more, a NUL: no header value is a C string, but a slip
	 * then stops at the end of the head rather than beyond. */
	c->headbuf = xmalloc(headlen + 1);
	evbuffer_remove(in, c->headbuf, headlen);
	c->headbuf[headlen] = '\0';
	r = http_parse_request(c->headbuf, headlen, HTTP_MAX_HEAD,
	    &c->req.head);
	if (r <= 0) {
		http_fail(c, r < 0 ? (int)-r : 400, "malformed request head");
		return (-1);
	}
	/* Known from here on: the answer to a HEAD has no body. */
	c->method = xstrndup(c->req.head.method, c->req.head.methodlen);
	if ((dup = http_duplicate(&c->req.head)) != NULL) {
		snprintf(why, sizeof why, "duplicate %s header", dup);
		http_fail(c, 400, why);
		return (-1);
	}
	/* Behind a trusted proxy: the client it forwarded for. */
	if (c->conn_addr.family != 0) {
		r = proxy_request_peer(&c->conn_addr, &c->req.head, &client,
		    &dup);
		if (r < 0) {
			log_warnx("http %s: %s", c->conn_peer, dup);
			http_fail(c, 400, dup);
			return (-1);
		}
		if (r > 0)
			netaddr_format(&client, c->peer, sizeof c->peer);
	}
	c->path = xstrndup(c->req.head.target, c->req.head.targetlen);
	if ((q = strchr(c->path, '?')) != NULL) {
		*q = '\0';
		c->query = xstrdup(q + 1);
	} else
		c->query = xstrdup("");

	c->keepalive = c->req.head.minor >= 1;
	if ((h = http_header(&c->req.head, "Connection")) != NULL) {
		if (http_has_token(h->value, h->valuelen, "close"))
			c->keepalive = 0;
		else if (http_has_token(h->value, h->valuelen, "keep-alive"))
			c->keepalive = 1;
	}
	r = http_body_framing(&c->req.head, 1, &c->framing, &c->remaining);
	if (r < 0) {
		http_fail(c, (int)-r, "bad body framing");
		return (-1);
	}
	if (c->framing == HTTP_BODY_LENGTH && c->remaining > conf->max_body) {
		c->too_big = 1;
		c->framing = HTTP_BODY_NONE;
	}
	c->req.method = c->method;
	c->req.path = c->path;
	c->req.query = c->query;
	c->req.body = evbuffer_new();
	http_chunked_init(&c->chunked);

	/*
	 * The head is checked (Host, Origin, credentials) before any of the
	 * body is read: a refused peer cannot make the gateway hold a body.
	 * A refusal closes the connection when a body would follow.
	 */
	keep = c->keepalive;
	if (c->framing != HTTP_BODY_NONE || c->too_big)
		c->keepalive = 0;
	c->state = HC_HANDLING;
	if (c->svc->check != NULL && c->svc->check(c, &c->req) != 0)
		return (-1);
	c->state = HC_HEAD;
	c->keepalive = keep;
	if (c->framing != HTTP_BODY_NONE) {
		h = http_header(&c->req.head, "Expect");
		if (h != NULL && http_value_is(h, "100-continue"))
			evbuffer_add(iochan_output(c->ch),
			    "HTTP/1.1 100 Continue\r\n\r\n", 25);
	}
	return (1);
}

/* Read body bytes; 1 when the body is complete. */
static int
http_read_body(struct http_conn *c)
{
	struct evbuffer	*in = iochan_input(c->ch);
	size_t		 avail, take;
	ssize_t		 r;
	unsigned char	*p;
	int		 done;

	switch (c->framing) {
	case HTTP_BODY_NONE:
		return (1);
	case HTTP_BODY_LENGTH:
		avail = evbuffer_get_length(in);
		take = avail < c->remaining ? avail : (size_t)c->remaining;
		evbuffer_remove_buffer(in, c->req.body, take);
		c->remaining -= take;
		c->body_bytes += take;
		return (c->remaining == 0);
	case HTTP_BODY_CHUNKED:
		avail = evbuffer_get_length(in);
		if (avail == 0)
			return (0);
		p = evbuffer_pullup(in, (ev_ssize_t)avail);
		r = http_chunked_decode(&c->chunked, (const char *)p, avail,
		    c->req.body, conf->max_body, &done);
		if (r == -2) {
			c->too_big = 1;
			evbuffer_drain(c->req.body,
			    evbuffer_get_length(c->req.body));
			return (1);
		}
		if (r < 0) {
			http_fail(c, 400, "malformed chunked body");
			return (-1);
		}
		evbuffer_drain(in, (size_t)r);
		c->body_bytes += (uint64_t)r;
		return (done);
	default:
		return (1);
	}
}

/*
 * A connection from a trusted proxy: take a PROXY protocol header if one
 * begins it (the client's address then names the connection), else go on
 * with the request.  A malformed header closes the connection.  0 to go
 * on, -1 if it is closed or more input is needed.
 */
static int
http_proxy_header(struct http_conn *c)
{
	struct evbuffer		*in = iochan_input(c->ch);
	struct proxy_info	 pi;
	const unsigned char	*p;
	const char		*why = "";
	size_t			 avail = evbuffer_get_length(in);
	ssize_t			 n;

	p = evbuffer_pullup(in, (ev_ssize_t)(avail < PROXY_V2_MAX ? avail :
	    PROXY_V2_MAX));
	switch (proxy_detect(p, avail)) {
	case -1:
		return (-1);
	case 0:
		c->state = HC_HEAD;
		return (0);
	}
	n = proxy_parse(p, avail < PROXY_V2_MAX ? avail : PROXY_V2_MAX, &pi,
	    &why);
	if (n == 0 && avail < PROXY_V2_MAX)
		return (-1);
	if (n <= 0) {
		log_warnx("http %s: a bad PROXY protocol header from a trusted "
		    "proxy: %s; closing", c->conn_peer, why[0] != '\0' ? why :
		    "too long");
		http_conn_free(c);
		return (-1);
	}
	evbuffer_drain(in, (size_t)n);
	if (pi.has_addr) {
		c->conn_addr = pi.src;
		netaddr_format(&c->conn_addr, c->conn_peer,
		    sizeof c->conn_peer);
		memcpy(c->peer, c->conn_peer, sizeof c->peer);
	}
	c->state = HC_HEAD;
	return (0);
}

/* Process buffered input as far as it goes. */
static void
http_next(struct http_conn *c)
{
	if (c->state == HC_PROXY && http_proxy_header(c) != 0)
		return;
	static const char	 too_large[] = "{\"jsonrpc\":\"2.0\",\"id\":null,"
	    "\"error\":{\"code\":-32600,\"message\":\"request body too "
	    "large\"}}";
	int			 r;

	if (c->state == HC_HEAD) {
		if (!c->head_started &&
		    evbuffer_get_length(iochan_input(c->ch)) > 0) {
			c->head_started = 1;
			http_deadline(c, HTTP_HEAD_TIMEOUT * 1000);
		}
		if ((r = http_read_head(c)) <= 0)
			return;
		c->state = HC_BODY;
		c->body_start = now_ms();
		c->body_bytes = 0;
		http_deadline(c, HTTP_BODY_TIMEOUT * 1000);
	}
	if (c->state == HC_BODY) {
		if ((r = http_read_body(c)) <= 0)
			return;
		if (c->too_big) {
			c->state = HC_HANDLING;
			c->keepalive = 0;
			http_reply(c, 413, "application/json", NULL,
			    too_large, strlen(too_large));
			return;
		}
		http_dispatch(c);
	}
}

/* Take pipelined input held when the last response ended. */
static void
http_next_cb(evutil_socket_t fd, short events, void *arg)
{
	struct http_conn	*c = arg;

	if (c->state == HC_HEAD)
		http_next(c);
}

static void
http_read_cb(struct iochan *ch, void *arg)
{
	struct http_conn	*c = arg;
	struct evbuffer		*in = iochan_input(ch);

	switch (c->state) {
	case HC_PROXY:
	case HC_HEAD:
	case HC_BODY:
		http_next(c);
		break;
	case HC_HANDLING:
	case HC_STREAMING:
		/* Hold pipelined input, but not without bound. */
		if (evbuffer_get_length(in) > HTTP_MAX_UNREAD)
			iochan_read(ch, 0);
		break;
	case HC_CLOSING:
		evbuffer_drain(in, evbuffer_get_length(in));
		break;
	case HC_UPGRADED:
		c->up->read(c, c->up_arg);
		break;
	}
}

static void
http_drain_cb(struct iochan *ch, void *arg)
{
	struct http_conn	*c = arg;

	if (c->state == HC_CLOSING)
		http_conn_free(c);
	else if (c->state == HC_UPGRADED && c->up->drained != NULL)
		c->up->drained(c, c->up_arg);
}

void
http_upgrade(struct http_conn *c, const char *headers,
    const struct http_upgraded *up, void *arg)
{
	if (c->state != HC_HANDLING)
		fatalx("%s: no request to answer", __func__);
	evbuffer_add_printf(iochan_output(c->ch), "HTTP/1.1 101 Switching "
	    "Protocols\r\n%s\r\n", headers);
	http_reset(c);
	c->state = HC_UPGRADED;
	c->up = up;
	c->up_arg = arg;
	http_deadline(c, 0);
	iochan_read(c->ch, 1);
}

void *
http_upgraded_arg(struct http_conn *c)
{
	return (c->state == HC_UPGRADED ? c->up_arg : NULL);
}

void
http_conn_reading(struct http_conn *c, int on)
{
	if (c->state == HC_UPGRADED && !c->doomed)
		iochan_read(c->ch, on);
}

struct evbuffer *
http_conn_input(struct http_conn *c)
{
	return (iochan_input(c->ch));
}

struct evbuffer *
http_conn_output(struct http_conn *c)
{
	return (iochan_output(c->ch));
}

void
http_conn_finish(struct http_conn *c)
{
	c->state = HC_CLOSING;
	iochan_read(c->ch, 0);
	if (iochan_queued(c->ch) == 0)
		http_conn_close_later(c);
}

static void
http_event_cb(struct iochan *ch, int what, void *arg)
{
	struct http_conn	*c = arg;

	if (what & IOCHAN_TIMEOUT)
		log_debug("http %s: no write progress in %d s, closing",
		    c->peer, HTTP_WRITE_TIMEOUT);
	else if (what & IOCHAN_ERROR)
		log_debug("http %s: %s", c->peer, strerror(errno));
	http_conn_free(c);
}

/* A deadline passed: close an idle connection, or answer 408. */
static void
http_deadline_cb(evutil_socket_t fd, short events, void *arg)
{
	struct http_conn	*c = arg;
	int64_t			 allowed, elapsed;

	switch (c->state) {
	case HC_PROXY:
	case HC_HEAD:
		if (!c->head_started ||
		    evbuffer_get_length(iochan_input(c->ch)) == 0) {
			log_debug("http %s: idle, closing", c->peer);
			http_conn_free(c);
			return;
		}
		log_info("http %s: request head not complete within %d s",
		    c->peer, HTTP_HEAD_TIMEOUT);
		http_fail(c, 408, "request head not complete in time");
		return;
	case HC_BODY:
		allowed = (int64_t)HTTP_BODY_TIMEOUT * 1000 +
		    (int64_t)(c->body_bytes * 1000 / HTTP_BODY_RATE);
		elapsed = now_ms() - c->body_start;
		if (elapsed < allowed) {
			http_deadline(c, allowed - elapsed);
			return;
		}
		log_info("http %s: request body too slow (%llu bytes in %lld "
		    "s)", c->peer, (unsigned long long)c->body_bytes,
		    (long long)(elapsed / 1000));
		http_fail(c, 408, "request body not complete in time");
		return;
	default:
		return;
	}
}
