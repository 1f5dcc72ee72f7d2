/* SPDX-License-Identifier: ISC */
/*
 * The supervisor in-process (sup_harness.h): its start and end, the loop
 * and its timers, and the workers' stand-ins.  The clients are in
 * sup_client.c.
 */
#include "config.h"

#include <sys/resource.h>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>

#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "frame.h"
#include "jsonrpc.h"
#include "log.h"
#include "supervisor.h"
#include "xmalloc.h"

#include "sup_harness.h"
#include "sup_priv.h"

#define SETTLE_TURNS	10000	/* loop passes sup_run allows */
#define FAKE_PID	0x40000000	/* above any pid Linux gives */
/*
 * libevent tells a timer's expiry in wall-clock time converted from its
 * monotonic clock with a difference it updates now and then: a timer
 * armed for n seconds may look a little later than n seconds from now.
 */
#define ADVANCE_SLACK_US	500000
#define PROVIDER_FRAME_MAX (64 * 1024 * 1024)

/* What the stand-in of one upstream says. */
struct plan {
	char			*name;
	char			*catalog;	/* JSON text, or NULL */
	char			*status;	/* JSON text, or NULL */
	char			*session_catalog;
	int			 manual;
	TAILQ_ENTRY(plan)	 entry;
};

static TAILQ_HEAD(, plan)	 plans = TAILQ_HEAD_INITIALIZER(plans);
static TAILQ_HEAD(, sup_worker)	 workers =
    TAILQ_HEAD_INITIALIZER(workers);
static pid_t			 next_pid = FAKE_PID;
/* Exits sup_exit queued for the gateway to reap, in order. */
static struct {
	pid_t	pid;
	int	status;
}				 exits[16];
static size_t			 nexits;
static uint64_t			 random_calls;
static int			 started;

int	(*sup_turn_hook)(void);

static const char default_catalog[] =
    "{\"tools\":[],\"resources\":[],\"resourceTemplates\":[],\"prompts\":[]}";
static const char default_status[] =
    "{\"state\":\"ready\",\"protocolVersion\":\"2025-11-25\",\"era\":\"2025\","
    "\"serverInfo\":{\"name\":\"stand-in\",\"version\":\"1\"},"
    "\"capabilities\":{\"tools\":{\"listChanged\":true},"
    "\"resources\":{\"subscribe\":true,\"listChanged\":true},"
    "\"prompts\":{\"listChanged\":true},\"logging\":{},\"completions\":{}}}";

void
sup_die(const char *fmt, ...)
{
	va_list	ap;

	fprintf(stderr, "sup_harness: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	abort();
}

/*
 * What supervisord.c defines besides main(): predictable "random" bytes,
 * so that session ids are the same at every run.
 */
void
fill_random(void *buf, size_t len)
{
	static const unsigned char	 tail[8] = {
		0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef
	};
	unsigned char			*p = buf;
	size_t				 i;

	random_calls++;
	for (i = 0; i < len; i++) {
		if (i < 8)
			p[i] = (unsigned char)(random_calls >> (8 * (7 - i)));
		else
			p[i] = tail[(i - 8) % 8];
	}
}

void
sup_tmpdir(char *dir, size_t len, const char *name)
{
	snprintf(dir, len, "/tmp/check-%s-XXXXXX", name);
	if (mkdtemp(dir) == NULL)
		sup_die("mkdtemp %s: %s", dir, strerror(errno));
}

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	return (remove(path));
}

void
sup_rmtree(const char *dir)
{
	nftw(dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

void
sup_reset_random(void)
{
	random_calls = 0;
}

/*
 * Read what a socket holds into a buffer: as read(2).  The buffer grows
 * only by what came (evbuffer_read would make room for 64 KiB at every
 * pass of the loop, and these sockets are empty at most passes).
 */
int
sup_read(int fd, struct evbuffer *in)
{
	char	buf[16384];
	ssize_t	n;

	if ((n = read(fd, buf, sizeof buf)) > 0)
		evbuffer_add(in, buf, (size_t)n);
	return (n > 0 ? 1 : (int)n);
}

/* The plan of an upstream, made on first use. */
static struct plan *
plan_get(const char *name)
{
	struct plan	*p;

	TAILQ_FOREACH(p, &plans, entry) {
		if (strcmp(p->name, name) == 0)
			return (p);
	}
	p = xcalloc(1, sizeof *p);
	p->name = xstrdup(name);
	TAILQ_INSERT_TAIL(&plans, p, entry);
	return (p);
}

/* Replace a string of a plan. */
static void
plan_set(char **field, const char *json)
{
	json_t	*o;

	/* A worker passes on the NULs an upstream's JSON holds. */
	if (json != NULL && ((o = json_loads(json, JSON_ALLOW_NUL,
	    NULL)) == NULL ||
	    !json_is_object(o)))
		sup_die("not a JSON object: %s", json);
	if (json != NULL)
		json_decref(o);
	free(*field);
	*field = json != NULL ? xstrdup(json) : NULL;
}

/* Write what is queued for the gateway; 1 if anything was written. */
static int
worker_flush(struct sup_worker *w)
{
	int	n, any = 0;

	while (w->fd >= 0 && evbuffer_get_length(w->out) > 0) {
		if ((n = evbuffer_write(w->out, w->fd)) <= 0)
			break;
		any = 1;
	}
	return (any);
}

/* Queue a frame for the gateway. */
static void
worker_queue(struct sup_worker *w, uint16_t type, uint16_t flags,
    uint32_t session, uint32_t tag, const char *p, size_t len)
{
	struct evbuffer	*buf;

	if (w->fd < 0)
		return;
	buf = evbuffer_new();
	evbuffer_add(buf, p, len);
	frame_add_buffer_flags(w->out, type, flags, session, tag, buf);
	evbuffer_free(buf);
}

/* Send what an upstream's worker sends when it starts. */
static void
worker_start(struct sup_worker *w)
{
	struct plan	*p = plan_get(w->name);
	json_t		*status, *extra;
	char		*text;

	worker_queue(w, MSG_HELLO, 0, 0, 0, "{\"version\":1}", 13);
	if (w->provider) {
		worker_queue(w, MSG_STATUS, 0, 0, 0, "{\"state\":\"ready\"}",
		    17);
		w->ready = 1;
		return;
	}
	worker_queue(w, MSG_STATUS, 0, 0, 0, "{\"state\":\"starting\"}", 20);
	text = p->catalog != NULL ? p->catalog : (char *)default_catalog;
	worker_queue(w, MSG_CATALOG, 0, 0, 0, text, strlen(text));
	status = json_loads(default_status, 0, NULL);
	if (p->status != NULL) {
		extra = json_loads(p->status, 0, NULL);
		json_object_update(status, extra);
		json_decref(extra);
	}
	text = json_dumps(status, JSON_COMPACT);
	worker_queue(w, MSG_STATUS, 0, 0, 0, text, strlen(text));
	free(text);
	json_decref(status);
	w->ready = 1;
}

/* The bound on a frame to a worker, as the gateway's. */
static size_t
worker_frame_max(const struct sup_worker *w)
{
	struct upstream	*up;

	if (w->provider || (up = upstream_find(w->name)) == NULL)
		return (PROVIDER_FRAME_MAX);
	return (up->sc->max_message + 65536);
}

/* Keep a frame the gateway sent, and act on what a worker acts on. */
static void
worker_frame(struct sup_worker *w, const struct frame_hdr *hdr)
{
	struct sup_frame	*f;
	struct plan		*p = plan_get(w->name);

	f = xcalloc(1, sizeof *f);
	f->type = hdr->type;
	f->flags = hdr->flags;
	f->session = hdr->session;
	f->tag = hdr->tag;
	f->len = hdr->len;
	f->text = xmalloc(f->len + 1);
	evbuffer_drain(w->in, FRAME_HDR_LEN);
	evbuffer_remove(w->in, f->text, f->len);
	f->text[f->len] = '\0';
	TAILQ_INSERT_TAIL(&w->frames, f, entry);

	switch (f->type) {
	case MSG_CONFIG:
		if (!p->manual || w->provider)
			worker_start(w);
		break;
	case MSG_SESSION_CATALOG:
		if (p->session_catalog != NULL && !w->provider)
			worker_queue(w, MSG_CATALOG, 0, f->session, 0,
			    p->session_catalog, strlen(p->session_catalog));
		break;
	case MSG_SHUTDOWN:
		sup_kill(w);
		break;
	}
}

/* Read what the gateway sent a worker; 1 if anything came. */
static int
worker_read(struct sup_worker *w)
{
	struct frame_hdr	 hdr;
	const char		*why;
	int			 n, got = 0;

	if (w->fd < 0)
		return (0);
	while ((n = sup_read(w->fd, w->in)) > 0)
		got = 1;
	while (w->fd >= 0) {
		switch (frame_peek(w->in, worker_frame_max(w), &hdr, &why)) {
		case FRAME_NEED:
			goto out;
		case FRAME_BAD:
			sup_die("bad frame to worker %s: %s", w->name, why);
		case FRAME_OK:
			worker_frame(w, &hdr);
			break;
		}
	}
out:
	/* The gateway let go of the channel: the worker exits. */
	if (n == 0 && w->fd >= 0) {
		close(w->fd);
		w->fd = -1;
		got = 1;
	}
	return (got);
}

unsigned int	sup_spawns;
unsigned int	sup_spawn_fails;

/* The harness's stand-in for fork and exec (spawn_hook). */
static pid_t
sup_spawn(const char *path, char *const argv[], int net, int *chfd,
    char *err, size_t errlen)
{
	struct sup_worker	*w;
	size_t			 n;
	int			 sv[2];

	sup_spawns++;
	if (sup_spawn_fails > 0) {
		sup_spawn_fails--;
		snprintf(err, errlen, "fork: %s", strerror(EAGAIN));
		return (-1);
	}

	for (n = 0; argv[n] != NULL; n++)
		;
	if (n < 2)
		sup_die("a worker without a name");
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0,
	    sv) != 0)
		sup_die("socketpair: %s", strerror(errno));
	w = xcalloc(1, sizeof *w);
	w->name = xstrdup(argv[n - 1]);
	/* An issuer's worker says what a provider's says when it starts. */
	w->provider = (llm_worker_path != NULL &&
	    strcmp(path, llm_worker_path) == 0) || (idp_worker_path != NULL &&
	    strcmp(path, idp_worker_path) == 0) || (otel_worker_path != NULL &&
	    strcmp(path, otel_worker_path) == 0);
	w->fd = sv[1];
	w->in = evbuffer_new();
	w->out = evbuffer_new();
	TAILQ_INIT(&w->frames);
	TAILQ_INIT(&w->taken);
	TAILQ_INSERT_TAIL(&workers, w, entry);
	*chfd = sv[0];
	/* No process has it: signalling it does nothing. */
	w->pid = next_pid++;
	return (w->pid);
}

/* The harness's stand-in for waitpid (reap_hook): an exit sup_exit
 * queued, or 0. */
static pid_t
sup_reap(int *status)
{
	pid_t	pid;

	if (nexits == 0)
		return (0);
	pid = exits[0].pid;
	*status = exits[0].status;
	memmove(exits, exits + 1, --nexits * sizeof exits[0]);
	return (pid);
}

void
sup_exit(struct sup_worker *w, int status)
{
	if (nexits == sizeof exits / sizeof exits[0])
		sup_die("too many exits at once");
	exits[nexits].pid = w->pid;
	exits[nexits].status = status;
	nexits++;
	sup_kill(w);
	sup_run();
	proc_reap();
	sup_run();
}

/* The running stand-in of a kind and name. */
static struct sup_worker *
worker_find(const char *name, int provider)
{
	struct sup_worker	*w, *found = NULL;

	TAILQ_FOREACH(w, &workers, entry) {
		if (w->fd >= 0 && w->provider == provider &&
		    strcmp(w->name, name) == 0)
			found = w;
	}
	return (found);
}

struct sup_worker *
sup_worker(const char *upstream)
{
	return (worker_find(upstream, 0));
}

struct sup_worker *
sup_provider(const char *llm)
{
	return (worker_find(llm, 1));
}

void
sup_catalog(const char *upstream, const char *json)
{
	struct plan		*p = plan_get(upstream);
	struct sup_worker	*w;

	plan_set(&p->catalog, json);
	if (started && (w = sup_worker(upstream)) != NULL && w->ready) {
		worker_queue(w, MSG_CATALOG, 0, 0, 0, json != NULL ? json :
		    default_catalog, strlen(json != NULL ? json :
		    default_catalog));
		sup_run();
	}
}

void
sup_status(const char *upstream, const char *json)
{
	plan_set(&plan_get(upstream)->status, json);
}

void
sup_session_catalog(const char *upstream, const char *json)
{
	plan_set(&plan_get(upstream)->session_catalog, json);
}

void
sup_manual(const char *upstream)
{
	plan_get(upstream)->manual = 1;
}

struct sup_worker *
sup_restart_manual(const char *upstream)
{
	struct sup_worker	*w;

	sup_manual(upstream);
	sup_exit(sup_worker(upstream), 1 << 8);
	sup_advance(5);
	if ((w = sup_worker(upstream)) == NULL)
		sup_die("upstream %s did not start again", upstream);
	return (w);
}

void
sup_ready(struct sup_worker *w, const char *catalog, const char *status)
{
	sup_send(w, MSG_HELLO, 0, 0, 0, "{\"version\":1}");
	sup_send(w, MSG_CATALOG, 0, 0, 0, "%s", catalog);
	sup_send(w, MSG_STATUS, 0, 0, 0, "%s", status);
}

struct sup_frame *
sup_take(struct sup_worker *w, uint16_t type)
{
	struct sup_frame	*f;

	if (w == NULL)
		return (NULL);
	TAILQ_FOREACH(f, &w->frames, entry) {
		if (type == 0 || f->type == type) {
			TAILQ_REMOVE(&w->frames, f, entry);
			TAILQ_INSERT_TAIL(&w->taken, f, entry);
			return (f);
		}
	}
	return (NULL);
}

unsigned int
sup_count(struct sup_worker *w, uint16_t type)
{
	struct sup_frame	*f;
	unsigned int		 n = 0;

	if (w == NULL)
		return (0);
	TAILQ_FOREACH(f, &w->frames, entry) {
		if (type == 0 || f->type == type)
			n++;
	}
	TAILQ_FOREACH(f, &w->taken, entry) {
		if (type == 0 || f->type == type)
			n++;
	}
	return (n);
}

void
sup_forget(struct sup_worker *w)
{
	struct sup_frame	*f;

	while ((f = TAILQ_FIRST(&w->frames)) != NULL) {
		TAILQ_REMOVE(&w->frames, f, entry);
		free(f->text);
		free(f);
	}
	while ((f = TAILQ_FIRST(&w->taken)) != NULL) {
		TAILQ_REMOVE(&w->taken, f, entry);
		free(f->text);
		free(f);
	}
}

json_t *
sup_frame_json(const struct sup_frame *f)
{
	json_t	*o;

	if ((o = json_loadb(f->text, f->len, 0, NULL)) == NULL)
		sup_die("%s frame is not JSON: %s", msg_type_name(f->type),
		    f->text);
	return (o);
}

/* Format and queue a frame. */
static void
worker_vqueue(struct sup_worker *w, uint16_t type, uint16_t flags,
    uint32_t session, uint32_t tag, const char *fmt, va_list ap)
{
	char	*text;
	int	 n;

	if ((n = vasprintf(&text, fmt, ap)) < 0)
		sup_die("vasprintf");
	worker_queue(w, type, flags, session, tag, text, (size_t)n);
	free(text);
}

void
sup_send(struct sup_worker *w, uint16_t type, uint16_t flags,
    uint32_t session, uint32_t tag, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	worker_vqueue(w, type, flags, session, tag, fmt, ap);
	va_end(ap);
	sup_run();
}

void
sup_sendq(struct sup_worker *w, uint16_t type, uint16_t flags,
    uint32_t session, uint32_t tag, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	worker_vqueue(w, type, flags, session, tag, fmt, ap);
	va_end(ap);
}

/* The id of a request a worker got, as JSON text. */
static void
frame_id(const struct sup_frame *f, const char **id, size_t *idlen)
{
	struct jrpc	 m;
	const char	*why;

	if (jrpc_scan(f->text, f->len, &m, &why) != 0 ||
	    m.kind != JRPC_REQUEST)
		sup_die("%s frame is not a request: %s",
		    msg_type_name(f->type), f->text);
	*id = f->text + m.id.off;
	*idlen = m.id.len;
}

void
sup_reply(struct sup_worker *w, const struct sup_frame *f,
    const char *result)
{
	struct evbuffer	*buf = evbuffer_new();
	const char	*id;
	size_t		 idlen;

	frame_id(f, &id, &idlen);
	jrpc_add_result(buf, id, idlen, result, strlen(result));
	if (w->fd >= 0)
		frame_add_buffer(w->out, MSG_RESPONSE, f->session, f->tag,
		    buf);
	evbuffer_free(buf);
	sup_run();
}

void
sup_reply_error(struct sup_worker *w, const struct sup_frame *f, int code,
    const char *message)
{
	struct evbuffer	*buf = evbuffer_new();
	const char	*id;
	size_t		 idlen;

	frame_id(f, &id, &idlen);
	jrpc_add_error(buf, id, idlen, code, message, NULL);
	if (w->fd >= 0)
		frame_add_buffer_flags(w->out, MSG_RESPONSE, FRAME_F_ERROR,
		    f->session, f->tag, buf);
	evbuffer_free(buf);
	sup_run();
}

void
sup_kill(struct sup_worker *w)
{
	if (w->fd < 0)
		return;
	close(w->fd);
	w->fd = -1;
	evbuffer_drain(w->out, evbuffer_get_length(w->out));
}

int
sup_workers_io(void)
{
	struct sup_worker	*w;
	int			 busy = 0;

	TAILQ_FOREACH(w, &workers, entry) {
		busy |= worker_flush(w);
		busy |= worker_read(w);
		busy |= worker_flush(w);
	}
	return (busy);
}

int
sup_settle(int turns)
{
	int	turn, idle = 0, busy;

	for (turn = 0; turn < turns; turn++) {
		event_base_loop(base, EVLOOP_NONBLOCK);
		busy = sup_workers_io();
		busy |= sup_clients_io();
		if (sup_turn_hook != NULL)
			busy |= sup_turn_hook();
		if (busy || event_base_get_num_events(base,
		    EVENT_BASE_COUNT_ACTIVE) > 0)
			idle = 0;
		else if (++idle == 2)
			return (0);
	}
	return (-1);
}

void
sup_nofile(unsigned long n)
{
	struct rlimit	rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		sup_die("getrlimit: %s", strerror(errno));
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= n)
		return;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < n)
		sup_die("RLIMIT_NOFILE: %lu descriptors wanted, the hard limit "
		    "is %lu", n, (unsigned long)rl.rlim_max);
	rl.rlim_cur = n;
	if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
		sup_die("setrlimit: %s", strerror(errno));
}

void
sup_turn(void)
{
	event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
	sup_workers_io();
	sup_clients_io();
}

void
sup_run(void)
{
	if (sup_settle(SETTLE_TURNS) != 0)
		sup_die("the loop does not settle");
}

/* Timers due by a time, collected before any is fired. */
struct due {
	struct timeval	  until;
	struct event	**v;
	size_t		  n;
	size_t		  cap;
};

static int
due_one(const struct event_base *b, const struct event *ev, void *arg)
{
	struct due	*d = arg;
	struct timeval	 tv;

	if (!(event_pending(ev, EV_TIMEOUT, &tv) & EV_TIMEOUT) ||
	    timercmp(&tv, &d->until, >))
		return (0);
	if (d->n == d->cap) {
		d->cap = d->cap * 2 + 16;
		d->v = xreallocarray(d->v, d->cap, sizeof *d->v);
	}
	d->v[d->n++] = (struct event *)ev;
	return (0);
}

void
sup_advance(unsigned int seconds)
{
	struct due	d;
	struct timeval	now, ahead = { (time_t)seconds, ADVANCE_SLACK_US };
	size_t		i;

	memset(&d, 0, sizeof d);
	gettimeofday(&now, NULL);
	timeradd(&now, &ahead, &d.until);
	event_base_foreach_event(base, due_one, &d);
	for (i = 0; i < d.n; i++)
		event_active(d.v[i], EV_TIMEOUT, 1);
	free(d.v);
	sup_run();
}

void
sup_start_conf(struct conf *c)
{
	char	err[1024];

	if (started)
		sup_die("one gateway per process");
	started = 1;
	signal(SIGPIPE, SIG_IGN);
	if (getenv("SUP_VERBOSE") != NULL)
		log_init("sup", 1, atoi(getenv("SUP_VERBOSE")));
	else
		log_init("sup", 1, 0);
	json_object_seed(1);
	conf = c;
	worker_path = "/nonexistent/mcp-worker";
	stdio_worker_path = xstrdup("/nonexistent/mcp-worker-stdio");
	llm_worker_path = "/nonexistent/mcp-llm";
	idp_worker_path = "/nonexistent/mcp-idp";
	otel_worker_path = "/nonexistent/mcp-otel";
	/* Where the daemon would listen by default (redirect URIs). */
	snprintf(listen_bound, sizeof listen_bound, "127.0.0.1:8931");
	spawn_hook = sup_spawn;
	reap_hook = sup_reap;
	if ((base = event_base_new()) == NULL)
		sup_die("event_base_new");
	daemon_started = time(NULL);
	session_init();
	catalog_init();
	route_init();
	proxy_configure();
	rate_configure();
	continuation_init();
	if (auth_configure(conf, err, sizeof err) != 0 ||
	    continuation_configure(conf, err, sizeof err) != 0 ||
	    access_log_open(conf, err, sizeof err) != 0)
		sup_die("%s", err);
	oauth_configure(conf);
	http_configure();
	upstream_init_all();
	provider_init_all();
	idp_init_all();
	trace_init();
	sup_run();
}

void
sup_start(const char *text)
{
	struct conf	*c;
	char		 err[1024];

	if ((c = conf_parse(text, "sup.conf", err, sizeof err)) == NULL)
		sup_die("%s", err);
	sup_start_conf(c);
}

const char *
sup_listen_metrics(void)
{
	if (metrics_listen_start(metrics_bound, sizeof metrics_bound) != 0 ||
	    metrics_bound[0] == '\0')
		sup_die("cannot listen on metrics_listen");
	return (metrics_bound);
}

json_t *
sup_reloadq(const char *text)
{
	char	 path[] = "/tmp/sup_harness.XXXXXX";
	json_t	*r;
	int	 fd;
	size_t	 len = strlen(text);

	if ((fd = mkstemp(path)) == -1)
		sup_die("mkstemp: %s", strerror(errno));
	if (write(fd, text, len) != (ssize_t)len)
		sup_die("write %s: %s", path, strerror(errno));
	close(fd);
	free(conf->file);
	conf->file = xstrdup(path);
	r = reload();
	unlink(path);
	return (r);
}

json_t *
sup_reload(const char *text)
{
	json_t	*r = sup_reloadq(text);

	sup_run();
	return (r);
}

void
sup_stop(void)
{
	struct sup_worker	*w;
	struct plan		*p;
	size_t			 i;

	sup_clients_end();
	sup_run();
	session_free_all();
	sup_run();
	if (http_conn_count() != 0)
		sup_die("%u connections left", http_conn_count());
	if (session_count() != 0)
		sup_die("%u sessions left", session_count());
	/* The counts a scrape gives came back to nothing with them. */
	for (i = 0; i < OBS_NTRANSPORTS; i++)
		if (session_count_transport((uint8_t)i) != 0)
			sup_die("%u sessions counted on transport %zu",
			    session_count_transport((uint8_t)i), i);
	for (i = 0; i < STREAM_NKINDS; i++)
		if (http_stream_count((int)i) != 0)
			sup_die("%u streams of kind %zu counted",
			    http_stream_count((int)i), i);
	if (continuation_count() != 0)
		sup_die("%u parked calls left", continuation_count());
	for (i = 0; i < nupstreams; i++) {
		if (upstreams[i]->npending != 0)
			sup_die("upstream %s: %u requests left",
			    upstreams[i]->sc->name, upstreams[i]->npending);
		if (!TAILQ_EMPTY(&upstreams[i]->up_requests))
			sup_die("upstream %s: requests to clients left",
			    upstreams[i]->sc->name);
		if (upstreams[i]->subs.count != 0)
			sup_die("upstream %s: subscriptions left",
			    upstreams[i]->sc->name);
	}
	upstream_stop_all();
	provider_stop_all();
	idp_stop_all();
	trace_stop();
	uplogin_store_close();
	sup_run();
	while ((w = TAILQ_FIRST(&workers)) != NULL) {
		TAILQ_REMOVE(&workers, w, entry);
		sup_kill(w);
		sup_forget(w);
		evbuffer_free(w->in);
		evbuffer_free(w->out);
		free(w->name);
		free(w);
	}
	while ((p = TAILQ_FIRST(&plans)) != NULL) {
		TAILQ_REMOVE(&plans, p, entry);
		free(p->name);
		free(p->catalog);
		free(p->status);
		free(p->session_catalog);
		free(p);
	}
	http_close_listeners();
	sup_run();
	metrics_free();
	access_log_close();
}
