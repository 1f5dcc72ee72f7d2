/* SPDX-License-Identifier: ISC */
/*
 * The access log (access_log = path | "syslog" | "stderr"): one line per
 * client request, and one per HTTP request refused before any JSON-RPC,
 * never with arguments or results.  At debug level (-v) the daemon's log
 * gets the same line for each client request, whether or not an access
 * log is set.  Lines are gathered during a turn of the event loop and
 * written at its end, in one write(2) for a file or stderr and one
 * datagram each to syslog, whose socket is non-blocking: a syslog daemon
 * that does not keep up costs lines (counted), never a stalled loop.  A
 * file's write can block on its disk, and stderr's on whatever reads it
 * (the descriptor is the one the daemon was given, blocking, and under
 * journald a stream socket): "stderr" is for debugging and containers.
 * What waits is bounded (AL_MAX_QUEUED); beyond it lines are dropped and
 * counted.  A write that fails (a full disk) is said once and tried again
 * every AL_RETRY_S until it works, whether or not lines keep coming.
 * Reopened on SIGHUP (before the reload) and mcpctl reopen, for logrotate.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "log.h"
#include "supervisor.h"
#include "xmalloc.h"

#define AL_MAX_QUEUED	(1024 * 1024)	/* bytes waiting to be
					   written */
#define AL_RETRY_S	1		/* a failed write, again */
#define AL_SYSLOG_PATH	"/dev/log"
#define AL_SYSLOG_PRI	30		/* LOG_DAEMON | LOG_INFO */

enum al_kind {
	AL_OFF = 0,
	AL_FILE,
	AL_STDERR,
	AL_SYSLOG
};

static enum al_kind	 al_kind;
static int		 al_fd = -1;	/* file or syslog socket */
static char		*al_target;	/* path or syslog socket path */
static struct evbuffer	*al_buf;
static struct event	*al_flush_ev;
static struct event	*al_retry_ev;	/* while writes fail */
static struct event	*al_write_ev;	/* a non-blocking al_fd was full */
static int		 al_failing;	/* said, until one works */
static uint64_t		 al_lines, al_dropped;
static size_t		 al_counted;	/* lines at al_buf's head counted
					   as written when queued for a file,
					   now going to syslog */

/*
 * Are requests' details wanted?  By the access log, or by the daemon's own
 * log at debug level (-v), which gets the same line for each request.
 * Otherwise the record keeps no strings and answers' error codes are not
 * read (route.c).
 */
int
access_log_enabled(void)
{
	return (al_kind != AL_OFF || log_getverbose() > 0);
}

/* Lines written and dropped, for the metrics. */
void
access_log_counts(uint64_t *lines, uint64_t *dropped)
{
	*lines = al_lines;
	*dropped = al_dropped;
}

/* Connect a datagram socket to the syslog daemon; -1 with errno. */
static int
al_syslog_connect(const char *path)
{
	struct sockaddr_un	sun;
	int			fd;

	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof sun.sun_path) {
		errno = ENAMETOOLONG;
		return (-1);
	}
	strcpy(sun.sun_path, path);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return (-1);
	if (connect(fd, (struct sockaddr *)&sun, sizeof sun) != 0) {
		close(fd);
		return (-1);
	}
	return (fd);
}

/* Lines in what waits (each ends with a newline). */
static size_t
al_held_lines(void)
{
	struct evbuffer_ptr	p;
	size_t			n = 0;

	evbuffer_ptr_set(al_buf, &p, 0, EVBUFFER_PTR_SET);
	while ((p = evbuffer_search(al_buf, "\n", 1, &p)).pos >= 0) {
		n++;
		evbuffer_ptr_set(al_buf, &p, 1, EVBUFFER_PTR_ADD);
	}
	return (n);
}

/*
 * What a file or stderr still holds goes to the next target: a file's
 * lines were counted as they were queued, syslog's are counted as they
 * are sent, and none is counted twice or lost uncounted.
 */
static void
al_hand_over(enum al_kind to)
{
	size_t	n;

	if (al_buf == NULL || al_kind == AL_SYSLOG || al_kind == AL_OFF ||
	    evbuffer_get_length(al_buf) == 0)
		return;
	n = al_held_lines();
	if (to == AL_SYSLOG)
		al_counted = n;
	else if (to == AL_OFF) {
		al_lines -= n;
		al_dropped += n;
		evbuffer_drain(al_buf, evbuffer_get_length(al_buf));
	}
}

/* Close what is open now. */
static void
al_close_fd(void)
{
	if (al_write_ev != NULL) {
		event_free(al_write_ev);
		al_write_ev = NULL;
	}
	if (al_fd >= 0 && al_kind != AL_STDERR)
		close(al_fd);
	al_fd = -1;
}

static void	al_flush(void);

int
access_log_open(const struct conf *c, char *err, size_t errlen)
{
	const char	*env;
	enum al_kind	 kind;
	char		*target = NULL;
	int		 fd = -1;

	if (c->access_log == NULL)
		kind = AL_OFF;
	else if (strcmp(c->access_log, "stderr") == 0) {
		kind = AL_STDERR;
		fd = STDERR_FILENO;
	} else if (strcmp(c->access_log, "syslog") == 0) {
		kind = AL_SYSLOG;
		/* Tests point it at a socket of their own. */
		env = getenv("MCP_SUPERVISOR_SYSLOG");
		target = xstrdup(env != NULL && *env != '\0' ? env :
		    AL_SYSLOG_PATH);
		if ((fd = al_syslog_connect(target)) < 0) {
			snprintf(err, errlen, "access_log syslog: %s: %s",
			    target, strerror(errno));
			free(target);
			return (-1);
		}
	} else {
		kind = AL_FILE;
		target = xstrdup(c->access_log);
		fd = open(target, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC |
		    O_NOCTTY, 0640);
		if (fd < 0) {
			snprintf(err, errlen, "access_log %s: %s", target,
			    strerror(errno));
			free(target);
			return (-1);
		}
	}
	/* What the old one still holds goes to it first. */
	al_flush();
	al_hand_over(kind);
	al_close_fd();
	free(al_target);
	al_kind = kind;
	al_fd = fd;
	al_target = target;
	if (al_buf == NULL)
		al_buf = evbuffer_new();
	/* What the old one could not take (failing, or full) goes to the
	 * new one now. */
	al_failing = 0;
	al_flush();
	if (kind != AL_OFF)
		log_debug("access log: %s", c->access_log);
	return (0);
}

void
access_log_close(void)
{
	al_flush();
	al_close_fd();
	al_kind = AL_OFF;
	free(al_target);
	al_target = NULL;
	if (al_flush_ev != NULL) {
		event_free(al_flush_ev);
		al_flush_ev = NULL;
	}
	if (al_retry_ev != NULL) {
		event_free(al_retry_ev);
		al_retry_ev = NULL;
	}
	al_failing = 0;
	al_counted = 0;
	if (al_buf != NULL) {
		evbuffer_free(al_buf);
		al_buf = NULL;
	}
}

/* Send the lines gathered to syslog, one datagram each. */
static void
al_flush_syslog(void)
{
	struct evbuffer_ptr	 eol;
	size_t			 len;
	char			*line;
	int			 counted;

	while (evbuffer_get_length(al_buf) > 0) {
		if ((counted = al_counted > 0))
			al_counted--;
		eol = evbuffer_search(al_buf, "\n", 1, NULL);
		len = eol.pos < 0 ? evbuffer_get_length(al_buf) :
		    (size_t)eol.pos;
		line = (char *)evbuffer_pullup(al_buf, (ev_ssize_t)len);
		if (al_fd < 0 && al_target != NULL)
			al_fd = al_syslog_connect(al_target);
		if (al_fd < 0 || send(al_fd, line, len, MSG_DONTWAIT |
		    MSG_NOSIGNAL) < 0) {
			/* A restarted syslog daemon: connect again next
			 * time; a full one: the line is lost. */
			if (al_fd >= 0 && errno != EAGAIN && errno != ENOBUFS) {
				close(al_fd);
				al_fd = -1;
			}
			al_dropped++;
			if (counted)
				al_lines--;
		} else if (!counted)
			al_lines++;
		evbuffer_drain(al_buf, len + (eol.pos < 0 ? 0 : 1));
	}
}

static void	al_retry_cb(evutil_socket_t, short, void *);

/* Write what was gathered. */
static void
al_flush(void)
{
	struct timeval	tv = { AL_RETRY_S, 0 };

	int	n, err = 0;

	if (al_buf == NULL || evbuffer_get_length(al_buf) == 0)
		return;
	if (al_kind == AL_SYSLOG) {
		al_flush_syslog();
		return;
	}
	while (al_fd >= 0 && evbuffer_get_length(al_buf) > 0) {
		n = evbuffer_write(al_buf, al_fd);
		if (n > 0)
			continue;
		err = n < 0 ? errno : EIO;
		if (err == EINTR)
			continue;
		break;
	}
	/*
	 * The descriptor is blocking: a write waits for a slow disk, and on
	 * stderr for a pipe or journald's stream socket to drain, with the
	 * loop stalled meanwhile.  What fails (a disk that is full) waits,
	 * within AL_MAX_QUEUED, and is tried again in AL_RETRY_S.  A stderr
	 * made non-blocking by whoever shares it is full, not failing: the
	 * rest goes once it is writable.
	 */
	if (evbuffer_get_length(al_buf) > 0 && err == EAGAIN) {
		if (al_write_ev == NULL)
			al_write_ev = event_new(base, al_fd, EV_WRITE,
			    al_retry_cb, NULL);
		if (!event_pending(al_write_ev, EV_WRITE, NULL))
			event_add(al_write_ev, NULL);
		return;
	}
	if (evbuffer_get_length(al_buf) > 0 && err != 0) {
		if (!al_failing) {
			errno = err;
			log_warn("access log %s: lines are held (up to %d "
			    "bytes, then dropped) and written again every "
			    "%d s", al_target != NULL ? al_target : "stderr",
			    AL_MAX_QUEUED, AL_RETRY_S);
		}
		al_failing = 1;
		if (al_retry_ev == NULL)
			al_retry_ev = evtimer_new(base, al_retry_cb, NULL);
		if (!evtimer_pending(al_retry_ev, NULL))
			evtimer_add(al_retry_ev, &tv);
		return;
	}
	if (al_failing && evbuffer_get_length(al_buf) == 0) {
		log_info("access log %s: written again (%llu lines dropped "
		    "in all)", al_target != NULL ? al_target : "stderr",
		    (unsigned long long)al_dropped);
		al_failing = 0;
	}
}

static void
al_flush_cb(evutil_socket_t fd, short events, void *arg)
{
	al_flush();
}

static void
al_retry_cb(evutil_socket_t fd, short events, void *arg)
{
	al_flush();
}

/* Queue a finished line (with its newline) for the end of this turn. */
static void
al_queue(const char *line, size_t len)
{
	if (al_buf == NULL)
		return;
	if (evbuffer_get_length(al_buf) + len > AL_MAX_QUEUED) {
		al_dropped++;
		return;
	}
	evbuffer_add(al_buf, line, len);
	/* A file's lines are written, now or once it can be; syslog's are
	 * counted as they are sent. */
	if (al_kind != AL_SYSLOG)
		al_lines++;
	/* While writes fail, the retry timer writes; while the descriptor
	 * is full, its writability. */
	if (al_failing || (al_write_ev != NULL &&
	    event_pending(al_write_ev, EV_WRITE, NULL)))
		return;
	if (al_flush_ev == NULL)
		al_flush_ev = event_new(base, -1, 0, al_flush_cb, NULL);
	if (!event_pending(al_flush_ev, EV_TIMEOUT, NULL))
		event_active(al_flush_ev, EV_TIMEOUT, 0);
}

void
access_log_clean(char *out, size_t outlen, const char *s, size_t len)
{
	size_t	i, n = 0;

	if (outlen == 0)
		return;
	for (i = 0; i < len; i++) {
		if (n + 8 >= outlen) {
			/* Room is left for "..." and the NUL. */
			memcpy(out + n, "...", 3);
			n += 3;
			break;
		}
		if (s[i] >= 0x20 && s[i] < 0x7f && s[i] != '"' && s[i] != '\\')
			out[n++] = s[i];
		else
			n += (size_t)snprintf(out + n, outlen - n, "\\x%02x",
			    (unsigned char)s[i]);
	}
	out[n] = '\0';
}

/*
 * The beginning of a line: a UTC time with milliseconds for a file or
 * stderr, a syslog header otherwise (the daemon adds the host).
 */
static int
al_prefix(char *buf, size_t len)
{
	static time_t	 cached_sec = -1;
	static char	 cached[32];
	struct timespec	 ts;
	struct tm	 tm;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (al_kind == AL_SYSLOG) {
		localtime_r(&ts.tv_sec, &tm);
		strftime(cached, sizeof cached, "%b %e %H:%M:%S", &tm);
		cached_sec = -1;
		return (snprintf(buf, len, "<%d>%s mcp-supervisord[%ld]: "
		    "access: ", AL_SYSLOG_PRI, cached, (long)getpid()));
	}
	if (ts.tv_sec != cached_sec) {
		gmtime_r(&ts.tv_sec, &tm);
		strftime(cached, sizeof cached, "%Y-%m-%dT%H:%M:%S", &tm);
		cached_sec = ts.tv_sec;
	}
	return (snprintf(buf, len, "%s.%03ldZ ", cached,
	    ts.tv_nsec / 1000000L));
}

void
access_log_request(const struct reqobs *o, int outcome, int code,
    int64_t total_us, int64_t added_us)
{
	struct session	*s;
	const char	*cname = NULL;
	char		 line[1024], client[80], sess[64], codes[16];
	char		 subject[160], clean[140];
	int		 n, start;

	if (o->log == NULL)
		return;
	s = o->session != 0 ? session_by_no(o->session) : NULL;
	if (s != NULL) {
		snprintf(sess, sizeof sess, "%s.%.8s", conf->instance, s->id);
		cname = json_string_value(json_object_get(s->client_info,
		    "name"));
	} else
		snprintf(sess, sizeof sess, "-");
	access_log_clean(client, sizeof client, cname != NULL ? cname : "",
	    cname != NULL ? strlen(cname) : 0);
	if (code != 0)
		snprintf(codes, sizeof codes, "%d", code);
	else
		snprintf(codes, sizeof codes, "-");
	/* An OAuth token's subject, never the token. */
	subject[0] = '\0';
	if (s != NULL && s->grant != NULL) {
		access_log_clean(clean, sizeof clean, s->grant->subject,
		    strlen(s->grant->subject));
		snprintf(subject, sizeof subject, " subject=\"%s\"", clean);
	}
	start = al_kind != AL_OFF ? al_prefix(line, sizeof line) : 0;
	n = start + snprintf(line + start, sizeof line - (size_t)start,
	    "peer=%s session=%s "
	    "client=\"%s\" auth=%s%s transport=%s%s%s method=\"%s\" "
	    "name=\"%s\" upstream=%s outcome=%s code=%s gateway_ms=%.3f "
	    "total_ms=%.3f\n",
	    o->log->peer, sess, client, s != NULL && s->client_name != NULL ?
	    s->client_name : "-", subject, obs_transport_names[o->transport],
	    /* A virtual endpoint's path (its characters need no quoting). */
	    s != NULL && s->vep != NULL ? " endpoint=" : "",
	    s != NULL && s->vep != NULL ? vendpoint_path(s->vep) : "",
	    o->log->method, o->log->name, o->up != NULL ? o->up->sc->name :
	    o->client_tool ? "(client)" : "(gateway)",
	    obs_outcome_names[outcome], codes, (double)added_us / 1000.0,
	    (double)total_us / 1000.0);
	if (n >= (int)sizeof line) {
		n = (int)sizeof line - 1;
		line[n - 1] = '\n';
	}
	/* The daemon's log: the line without the time, which it has. */
	if (log_getverbose() > 0)
		log_debug("request: %.*s", n - start - 1, line + start);
	if (al_kind != AL_OFF)
		al_queue(line, (size_t)n);
}

void
access_log_http(const char *peer, const char *method, const char *path,
    int status, const char *refused)
{
	char	line[1024], m[24], p[160];
	int	n;

	if (al_kind == AL_OFF)
		return;
	access_log_clean(m, sizeof m, method, strlen(method));
	access_log_clean(p, sizeof p, path, strlen(path));
	n = al_prefix(line, sizeof line);
	n += snprintf(line + n, sizeof line - (size_t)n, "peer=%s http=\"%s "
	    "%s\" status=%d%s%s%s\n", peer, m, p, status,
	    refused != NULL ? " refused=\"" : "", refused != NULL ? refused :
	    "", refused != NULL ? "\"" : "");
	if (n >= (int)sizeof line) {
		n = (int)sizeof line - 1;
		line[n - 1] = '\n';
	}
	al_queue(line, (size_t)n);
}
