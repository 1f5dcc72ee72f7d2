/* SPDX-License-Identifier: ISC */
/*
 * Metrics in the Prometheus text format, at GET /metrics on the main
 * listener or on metrics_listen, under the same Host, Origin and token
 * rules as /mcp.  Counters are plain integers in the structures they
 * describe (struct upstream, the two below), histograms fixed bucket
 * arrays (common/prom.c); what is a state rather than an event is a count
 * kept where it changes (sessions, streams, bytes queued), so that a
 * scrape walks no session, or read when scraped (memory, descriptors).
 * Label values come from bounded sets: upstream names from the
 * configuration, method names from the table of methods
 * (common/mcp_method.c; "other" for the rest), never a session id, a
 * tool name or an argument.
 */
#include "config.h"

#include <sys/resource.h>
#include <sys/stat.h>

#include <dirent.h>
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

#define M(name)		"mcp_supervisor_" name

/* Requests the gateway answers itself, and those to clients' tools. */
static struct metrics_req	 m_gateway, m_client;
static uint64_t			 m_bytes_in, m_bytes_out;

static const char *const refusal_reasons[] = {
	"host", "origin", "token", "limit", NULL
};
static uint64_t			 m_refused[4];

static const char *const up_kind_names[MUP_NKINDS] = {
	[MUP_SAMPLING] = "sampling",
	[MUP_ELICITATION] = "elicitation",
	[MUP_ROOTS] = "roots",
	[MUP_PING] = "ping",
	[MUP_OTHER] = "other",
};

static const char *const up_outcome_names[MUPO_NOUTCOMES] = {
	[MUPO_CLIENT] = "client",
	[MUPO_CLIENT_ERROR] = "client_error",
	[MUPO_DEFAULTS] = "defaults",
	[MUPO_DECLINE] = "decline",
	[MUPO_ERROR] = "error",
	[MUPO_TIMEOUT] = "timeout",
	[MUPO_CANCELLED] = "cancelled",
	[MUPO_LLM] = "llm",
	[MUPO_TOOL] = "tool",
};

/* The states, in the order of enum upstream_state. */
#define NSTATES	6

void
metrics_request(const struct reqobs *o, int outcome, uint64_t total_us,
    uint64_t added_us)
{
	struct metrics_req	*m;

	if (o->up != NULL)
		m = &o->up->m;
	else if (o->client_tool)
		m = &m_client;
	else
		m = &m_gateway;
	m->n[o->method][outcome]++;
	prom_hist_observe(&m->total, total_us);
	prom_hist_observe(&m->added, added_us);
}

void
metrics_up_request(struct upstream *up, enum mcp_method method,
    enum metrics_up_outcome outcome)
{
	enum metrics_up_kind	k;

	switch (method) {
	case MCPM_SAMPLING:
		/* Sampling's chain counts its own, as it ends (sampling.c). */
		return;
	case MCPM_ELICITATION:
		k = MUP_ELICITATION;
		break;
	case MCPM_ROOTS:
		k = MUP_ROOTS;
		break;
	case MCPM_PING:
		k = MUP_PING;
		break;
	default:
		k = MUP_OTHER;
		break;
	}
	up->mup[k][outcome]++;
}

void
metrics_sampling(struct upstream *up, const char *link, const char *outcome)
{
	enum metrics_up_outcome	o;

	if (strcmp(outcome, "ok") == 0)
		o = strncmp(link, "llm:", 4) == 0 ? MUPO_LLM :
		    strncmp(link, "tool:", 5) == 0 ? MUPO_TOOL : MUPO_CLIENT;
	else if (strcmp(outcome, "declined") == 0)
		o = MUPO_DECLINE;
	else if (strcmp(outcome, "cancelled") == 0)
		o = MUPO_CANCELLED;
	else if (strcmp(outcome, "rejected") == 0 ||
	    (strcmp(outcome, "error") == 0 && strcmp(link, "client") == 0))
		o = MUPO_CLIENT_ERROR;
	else
		o = MUPO_ERROR;
	up->mup[MUP_SAMPLING][o]++;
}

void
metrics_bytes(uint64_t in, uint64_t out)
{
	m_bytes_in += in;
	m_bytes_out += out;
}

void
metrics_refused(const char *reason)
{
	size_t	i;

	for (i = 0; refusal_reasons[i] != NULL; i++) {
		if (strcmp(refusal_reasons[i], reason) == 0)
			m_refused[i]++;
	}
}

/*
 * Resident bytes of a process, from /proc/PID/statm (one small read);
 * -1 if it cannot be read (the process is gone).
 */
static long long
metrics_rss(pid_t pid)
{
	char		path[64], buf[128];
	long long	size, resident;
	ssize_t		n;
	int		fd;

	if (pid <= 0)
		return (-1);
	snprintf(path, sizeof path, "/proc/%ld/statm", (long)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return (-1);
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return (-1);
	buf[n] = '\0';
	if (sscanf(buf, "%lld %lld", &size, &resident) != 2)
		return (-1);
	return (resident * sysconf(_SC_PAGESIZE));
}

/* CPU seconds of this process, from /proc/self/stat. */
static double
metrics_cpu(void)
{
	char			 buf[1024], *p;
	unsigned long long	 ut, st;
	ssize_t			 n;
	int			 fd;

	if ((fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC)) < 0)
		return (0);
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return (0);
	buf[n] = '\0';
	/* After the command's closing parenthesis: fields 3 onwards. */
	if ((p = strrchr(buf, ')')) == NULL || sscanf(p + 2,
	    "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut,
	    &st) != 2)
		return (0);
	return ((double)(ut + st) / (double)sysconf(_SC_CLK_TCK));
}

/*
 * Open descriptors of this process.  Linux 6.2 and later give their
 * number as the size of /proc/self/fd: one stat.  Before, only reading
 * the directory counts them, at about a microsecond each (15 ms at
 * 20,000), which would hold the loop: a scrape reads slices until it has
 * FDS_SYNC_MAX entries (at most one slice more), and a walk that has more
 * goes on a slice of FDS_SLICE bytes of entries per turn of the loop; until it ends a scrape
 * gives the count of the last walk that did (none before the first).
 */
#define FDS_SYNC_MAX	1024
#define FDS_SLICE	4096	/* about 170 entries */

struct fdcount {
	int		 by_stat;	/* 1: the kernel's size, 0: walks */
	int		 dirfd;		/* the walk under way, or -1 */
	long long	 seen;		/* descriptors it has read */
	long long	 last;		/* the last whole walk's, or -1 */
	struct event	*more;		/* the walk's next slice */
};

static struct fdcount	 fds = { 1, -1, 0, -1, NULL };

/* Read one slice of a walk: 1 if there is more, 0 at its end or error. */
static int
fds_slice(struct fdcount *f)
{
	_Alignas(struct dirent64) char	 buf[FDS_SLICE];
	const struct dirent64		*de;
	ssize_t				 n, off;

	if ((n = getdents64(f->dirfd, buf, sizeof buf)) > 0) {
		for (off = 0; off < n; off += de->d_reclen) {
			de = (const struct dirent64 *)(buf + off);
			if (de->d_name[0] != '.')
				f->seen++;
		}
		return (1);
	}
	if (n < 0)
		log_warn("metrics: reading /proc/self/fd");
	else
		f->last = f->seen - 1;	/* less the walk's own */
	close(f->dirfd);
	f->dirfd = -1;
	return (0);
}

static void
fds_more_cb(evutil_socket_t fd, short ev, void *arg)
{
	static const struct timeval	 now = { 0, 0 };
	struct fdcount			*f = arg;

	/* A timer, not event_active: the loop polls between slices. */
	if (fds_slice(f))
		evtimer_add(f->more, &now);
}

/* Begin a walk (unless one is under way) and read what a scrape may. */
static void
fds_walk(struct fdcount *f)
{
	static const struct timeval	 now = { 0, 0 };

	if (f->dirfd != -1)
		return;
	if ((f->dirfd = open("/proc/self/fd", O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) == -1)
		return;	/* out of descriptors: the last count stands */
	f->seen = 0;
	while (fds_slice(f)) {
		if (f->seen >= FDS_SYNC_MAX) {
			if (f->more == NULL)
				f->more = evtimer_new(base, fds_more_cb, f);
			evtimer_add(f->more, &now);
			return;
		}
	}
}

/* The count a scrape gives, or -1 (none yet). */
static long long
metrics_fds(struct fdcount *f)
{
	struct stat	sb;

	if (f->by_stat && stat("/proc/self/fd", &sb) == 0 && sb.st_size > 0)
		return ((long long)sb.st_size);
	f->by_stat = 0;
	fds_walk(f);
	return (f->last);
}

void
metrics_fds_walk(int on)
{
	fds.by_stat = !on;
}

void
metrics_free(void)
{
	if (fds.more != NULL) {
		event_free(fds.more);
		fds.more = NULL;
	}
	if (fds.dirfd != -1) {
		close(fds.dirfd);
		fds.dirfd = -1;
	}
}

/* The requests counted for one upstream (or the gateway, or clients). */
static void
metrics_write_req(struct evbuffer *b, const char *up,
    const struct metrics_req *m)
{
	char	labels[256];
	size_t	k, i, j;

	/* By the methods counted by name, in the table's order, and "other"
	 * (row 0) last. */
	for (k = 1; k <= MCPM_N; k++) {
		i = k % MCPM_N;
		if (mcp_methods[i].counted != (enum mcp_method)i)
			continue;
		for (j = 0; j < OBS_NOUTCOMES; j++) {
			if (m->n[i][j] == 0)
				continue;
			prom_labels(labels, sizeof labels, "upstream", up,
			    "method", mcp_method_name((enum mcp_method)i),
			    "outcome", obs_outcome_names[j], NULL);
			prom_sample_u64(b, M("requests_total"), labels,
			    m->n[i][j]);
		}
	}
}

static void
metrics_write_requests(struct evbuffer *b)
{
	char	labels[128];
	size_t	i;

	prom_header(b, M("requests_total"), "counter", "Client requests by "
	    "the upstream that served them ((gateway): answered by the "
	    "gateway, (client): a client's tool), method and outcome.");
	metrics_write_req(b, "(gateway)", &m_gateway);
	metrics_write_req(b, "(client)", &m_client);
	for (i = 0; i < nupstreams; i++)
		metrics_write_req(b, upstreams[i]->sc->name, &upstreams[i]->m);

	prom_header(b, M("request_duration_seconds"), "histogram", "Time "
	    "from a client request read to its answer written, by upstream.");
	prom_labels(labels, sizeof labels, "upstream", "(gateway)", NULL);
	prom_hist_write(b, M("request_duration_seconds"), labels,
	    &m_gateway.total);
	prom_labels(labels, sizeof labels, "upstream", "(client)", NULL);
	prom_hist_write(b, M("request_duration_seconds"), labels,
	    &m_client.total);
	for (i = 0; i < nupstreams; i++) {
		prom_labels(labels, sizeof labels, "upstream",
		    upstreams[i]->sc->name, NULL);
		prom_hist_write(b, M("request_duration_seconds"), labels,
		    &upstreams[i]->m.total);
	}
	prom_header(b, M("request_gateway_seconds"), "histogram", "The time "
	    "the supervisor adds to a request: its duration less the time "
	    "between handing it to the upstream's worker and the answer "
	    "coming back.");
	prom_labels(labels, sizeof labels, "upstream", "(gateway)", NULL);
	prom_hist_write(b, M("request_gateway_seconds"), labels,
	    &m_gateway.added);
	prom_labels(labels, sizeof labels, "upstream", "(client)", NULL);
	prom_hist_write(b, M("request_gateway_seconds"), labels,
	    &m_client.added);
	for (i = 0; i < nupstreams; i++) {
		prom_labels(labels, sizeof labels, "upstream",
		    upstreams[i]->sc->name, NULL);
		prom_hist_write(b, M("request_gateway_seconds"), labels,
		    &upstreams[i]->m.added);
	}
}

/* The metrics with one value per upstream. */
enum upstream_value {
	UPV_RESTARTS = 0,
	UPV_FAILURES,
	UPV_GAVE_UP,
	UPV_BACKOFF,
	UPV_IN_FLIGHT,
	UPV_TOOLS,
	UPV_N
};

static const struct {
	const char	*name, *type, *help;
} upstream_values[UPV_N] = {
	[UPV_RESTARTS] = { M("upstream_restarts_total"), "counter",
	    "Restarts of an upstream's worker after it died." },
	[UPV_FAILURES] = { M("upstream_consecutive_failures"), "gauge",
	    "Deaths in a row, reset after healthy_after seconds of uptime." },
	[UPV_GAVE_UP] = { M("upstream_crashloop_failures_total"), "counter",
	    "Times an upstream was marked failed after max_failures deaths "
	    "in a row (or a configuration its worker refused)." },
	[UPV_BACKOFF] = { M("upstream_backoff_seconds"), "gauge",
	    "The wait before the upstream's next restart while it is in "
	    "backoff, else 0." },
	[UPV_IN_FLIGHT] = { M("requests_in_flight"), "gauge",
	    "Requests sent to an upstream (or waiting for it to start) and "
	    "not yet answered." },
	[UPV_TOOLS] = { M("upstream_tools"), "gauge",
	    "Tools an upstream lists." },
};

static uint64_t
upstream_value(const struct upstream *up, enum upstream_value v)
{
	switch (v) {
	case UPV_RESTARTS:
		return (up->proc.restarts);
	case UPV_FAILURES:
		return (up->proc.failures);
	case UPV_GAVE_UP:
		return (up->gave_up);
	case UPV_BACKOFF:
		return (up->state == UPSTREAM_BACKOFF ? up->proc.backoff : 0);
	case UPV_IN_FLIGHT:
		return (up->npending);
	case UPV_TOOLS:
		return (catalog_count(up, CATALOG_TOOLS));
	default:
		return (0);
	}
}

/* One metric with a value per upstream. */
static void
metrics_per_upstream(struct evbuffer *b, enum upstream_value v)
{
	char	labels[128];
	size_t	i;

	prom_header(b, upstream_values[v].name, upstream_values[v].type,
	    upstream_values[v].help);
	for (i = 0; i < nupstreams; i++) {
		prom_labels(labels, sizeof labels, "upstream",
		    upstreams[i]->sc->name, NULL);
		prom_sample_u64(b, upstream_values[v].name, labels,
		    upstream_value(upstreams[i], v));
	}
}

static void
metrics_write_upstreams(struct evbuffer *b)
{
	struct upstream	*up;
	char		 labels[256];
	size_t		 i, j, k;
	long long	 rss;

	prom_header(b, M("upstream_state"), "gauge", "1 for the state each "
	    "upstream is in, 0 for the others.");
	for (i = 0; i < nupstreams; i++) {
		up = upstreams[i];
		for (j = 0; j < NSTATES; j++) {
			prom_labels(labels, sizeof labels, "upstream",
			    up->sc->name, "state", upstream_state_name(
			    (enum upstream_state)j), NULL);
			prom_sample_u64(b, M("upstream_state"), labels,
			    up->state == (enum upstream_state)j);
		}
	}
	metrics_per_upstream(b, UPV_RESTARTS);
	metrics_per_upstream(b, UPV_FAILURES);
	metrics_per_upstream(b, UPV_GAVE_UP);
	metrics_per_upstream(b, UPV_BACKOFF);
	metrics_per_upstream(b, UPV_IN_FLIGHT);
	metrics_per_upstream(b, UPV_TOOLS);
	limit_metrics(b);
	rate_metrics(b);

	prom_header(b, M("server_requests_total"), "counter", "Requests from "
	    "upstreams to clients (sampling, elicitation, roots, ping) by "
	    "how they were answered.");
	for (i = 0; i < nupstreams; i++) {
		up = upstreams[i];
		for (j = 0; j < MUP_NKINDS; j++) {
			for (k = 0; k < MUPO_NOUTCOMES; k++) {
				if (up->mup[j][k] == 0)
					continue;
				prom_labels(labels, sizeof labels, "upstream",
				    up->sc->name, "kind", up_kind_names[j],
				    "outcome", up_outcome_names[k], NULL);
				prom_sample_u64(b, M("server_requests_total"),
				    labels, up->mup[j][k]);
			}
		}
	}

	prom_header(b, M("worker_resident_bytes"), "gauge", "Resident memory "
	    "of each running worker, read from /proc when scraped.");
	for (i = 0; i < nupstreams; i++) {
		up = upstreams[i];
		if ((rss = metrics_rss(up->proc.pid)) < 0)
			continue;
		prom_labels(labels, sizeof labels, "upstream", up->sc->name,
		    NULL);
		prom_sample_u64(b, M("worker_resident_bytes"), labels,
		    (uint64_t)rss);
	}
	prom_header(b, M("upstream_resident_bytes"), "gauge", "Resident "
	    "memory of each running stdio upstream process (its group "
	    "leader), read from /proc when scraped.");
	for (i = 0; i < nupstreams; i++) {
		up = upstreams[i];
		if ((rss = metrics_rss(up->upstream_pid)) < 0)
			continue;
		prom_labels(labels, sizeof labels, "upstream", up->sc->name,
		    NULL);
		prom_sample_u64(b, M("upstream_resident_bytes"), labels,
		    (uint64_t)rss);
	}
}

void
metrics_write(struct evbuffer *b)
{
	struct rlimit		 rl;
	char			 labels[256];
	uint64_t		 lines, dropped;
	long long		 rss, nfds;
	size_t			 i;
	static const struct {
		const char		*name;
		enum stream_kind	 kind;
	} stream_kinds[] = {
		{ "post", STREAM_POST },
		{ "get", STREAM_GET },
		{ "legacy", STREAM_LEGACY },
	};

	/* Not "instance": Prometheus gives every target that label, and
	 * would rename ours exported_instance. */
	prom_header(b, M("build_info"), "gauge", "The version, with the "
	    "instance name that begins session ids.");
	prom_labels(labels, sizeof labels, "version", PACKAGE_VERSION,
	    "gateway_instance", conf->instance, NULL);
	prom_sample_u64(b, M("build_info"), labels, 1);
	prom_header(b, "process_start_time_seconds", "gauge", "When the "
	    "supervisor started, in seconds since the epoch.");
	prom_sample_u64(b, "process_start_time_seconds", "",
	    (uint64_t)daemon_started);
	prom_header(b, "process_cpu_seconds_total", "counter", "CPU time of "
	    "the supervisor (its workers not included).");
	prom_sample_double(b, "process_cpu_seconds_total", "", metrics_cpu());
	if ((rss = metrics_rss(getpid())) >= 0) {
		prom_header(b, "process_resident_memory_bytes", "gauge",
		    "Resident memory of the supervisor.");
		prom_sample_u64(b, "process_resident_memory_bytes", "",
		    (uint64_t)rss);
	}
	if ((nfds = metrics_fds(&fds)) >= 0) {
		prom_header(b, "process_open_fds", "gauge", "Descriptors the "
		    "supervisor has open.");
		prom_sample_u64(b, "process_open_fds", "", (uint64_t)nfds);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
		prom_header(b, "process_max_fds", "gauge", "The supervisor's "
		    "limit of open descriptors.");
		prom_sample_u64(b, "process_max_fds", "", (uint64_t)rl.rlim_cur);
	}
	prom_header(b, M("ready"), "gauge", "1 when /readyz answers 200.");
	prom_sample_u64(b, M("ready"), "", health_ready(NULL, 0) == 200);
	prom_header(b, M("draining"), "gauge", "1 while draining (mcpctl "
	    "drain).");
	prom_sample_u64(b, M("draining"), "", drain_active());

	prom_header(b, M("sessions"), "gauge", "Client sessions open, by "
	    "transport.");
	for (i = 0; i < OBS_NTRANSPORTS; i++) {
		prom_labels(labels, sizeof labels, "transport",
		    obs_transport_names[i], NULL);
		prom_sample_u64(b, M("sessions"), labels,
		    session_count_transport((uint8_t)i));
	}
	vendpoint_metrics(b);
	prom_header(b, M("connections"), "gauge", "Client connections open.");
	prom_sample_u64(b, M("connections"), "", http_conn_count());
	prom_header(b, M("sse_streams"), "gauge", "Event streams with a "
	    "client connected, by kind (post: a call's answer, get: the "
	    "standalone stream, legacy: an HTTP+SSE session's).");
	for (i = 0; i < sizeof stream_kinds / sizeof stream_kinds[0]; i++) {
		prom_labels(labels, sizeof labels, "kind",
		    stream_kinds[i].name, NULL);
		prom_sample_u64(b, M("sse_streams"), labels,
		    http_stream_count(stream_kinds[i].kind));
	}
	prom_header(b, M("replay_buffer_bytes"), "gauge", "Bytes held by "
	    "every stream for Last-Event-ID replay.");
	prom_sample_u64(b, M("replay_buffer_bytes"), "", stream_held_bytes());
	prom_header(b, M("output_queued_bytes"), "gauge", "Bytes written to "
	    "client connections and not yet taken by the kernel.");
	prom_sample_u64(b, M("output_queued_bytes"), "", http_stream_queued());
	prom_header(b, M("received_bytes_total"), "counter", "Bytes received "
	    "from clients.");
	prom_sample_u64(b, M("received_bytes_total"), "", m_bytes_in);
	prom_header(b, M("sent_bytes_total"), "counter", "Bytes sent to "
	    "clients.");
	prom_sample_u64(b, M("sent_bytes_total"), "", m_bytes_out);
	prom_header(b, M("refused_total"), "counter", "Requests refused for "
	    "security: a Host or an Origin not allowed, no valid token, or a "
	    "limit reached (sessions, connections, calls in flight).");
	for (i = 0; refusal_reasons[i] != NULL; i++) {
		prom_labels(labels, sizeof labels, "reason",
		    refusal_reasons[i], NULL);
		prom_sample_u64(b, M("refused_total"), labels, m_refused[i]);
	}
	oauth_metrics(b);
	access_log_counts(&lines, &dropped);
	prom_header(b, M("access_log_lines_total"), "counter", "Access log "
	    "lines written.");
	prom_sample_u64(b, M("access_log_lines_total"), "", lines);
	prom_header(b, M("access_log_dropped_total"), "counter", "Access log "
	    "lines lost (a syslog daemon or a disk that did not keep up).");
	prom_sample_u64(b, M("access_log_dropped_total"), "", dropped);

	metrics_write_requests(b);
	metrics_write_upstreams(b);
	pin_metrics_write(b);
	trace_metrics(b);
}

int
metrics_path(const struct http_request *req)
{
	return (strcmp(req->path, "/metrics") == 0);
}

void
metrics_serve(struct http_conn *c, struct http_request *req)
{
	struct evbuffer	*b;

	if (strcmp(req->method, "GET") != 0 &&
	    strcmp(req->method, "HEAD") != 0) {
		http_reply(c, 405, "text/plain; charset=utf-8",
		    "Allow: GET, HEAD\r\n", "Method Not Allowed\n", 19);
		return;
	}
	b = evbuffer_new();
	metrics_write(b);
	http_reply_buffer(c, 200, "text/plain; version=0.0.4; charset=utf-8",
	    NULL, b);
	evbuffer_free(b);
}
