/* SPDX-License-Identifier: ISC */
/*
 * loadgen_scale.c -- the scale mode (--scale N): a gateway holding many
 * sessions, some with a GET event stream, measured as an outsider would.
 *
 *   1. setup: --scale-streams S sessions each open their standalone
 *      stream and hold it; then N - S more are initialized and their
 *      connection closed (sessions held without a connection); then the
 *      probe's sessions and the trigger's.  Connections come from
 *      --sources addresses (127.0.0.1, .2, ...), each with its own ports.
 *   2. idle: the probe calls at --rate for --idle seconds.
 *   3. fan-outs, --notify of them: the trigger calls --trigger
 *      (demo__toggle_tool, whose upstream then sends tools/list_changed),
 *      the gateway tells every session, and loadgen times the event's
 *      arrival on every stream from the trigger's call.  The next trigger
 *      goes --gap milliseconds after the last stream had the event (or
 *      after --timeout without it).  With no stream open there is no
 *      fan-out to time, and this stage is left out.
 *   4. idle again for --idle seconds: after a broadcast, every stream's
 *      heartbeat falls due at about the same time.
 *
 * The probe runs from 2 to 4, open loop, latency from each call's due
 * time.  Each call is classed by what the gateway was doing while it was
 * in flight: a fan-out (between a trigger and its last stream's event),
 * heartbeats (one arrived on a stream within 10 ms of it), or idle; a
 * fan-out call clear of every trigger's first 20 ms (the upstream changing
 * and the worker listing again) is counted again as fanout_late.
 * VmRSS of each --rss-pid process is read before the setup, after each
 * stage, after the first tenth of the notifications and at the end.
 * The report is one JSON line on stdout.
 */
#define _GNU_SOURCE

#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>

#include "loadgen.h"

#define BUCKET_NS	10000000ull	/* classing calls: 10 ms buckets */
#define NCLASS		4		/* idle, heartbeat, fanout, fanout_late */
#define FAN_SENDING	1		/* a bucket inside a fan-out */
#define FAN_START	2		/* its first two */
#define SETTLE_NS	500000000ull	/* before RSS is read after a stage */

enum stage {
	SC_STREAMS = 1,		/* setting up the sessions with streams */
	SC_PLAIN,		/* the sessions without */
	SC_PROBE,		/* the probe's and the trigger's */
	SC_IDLE,
	SC_NOTIFY,
	SC_TAIL,		/* idle after the fan-outs */
	SC_DONE
};

enum role { R_STREAM, R_PLAIN, R_TRIGGER };

/* One notification's fan-out. */
struct notif {
	uint64_t	 t0;		/* the trigger sent */
	uint64_t	 first;		/* ns from t0 to the first stream */
	uint64_t	 last;		/* to the last */
	unsigned	 arrived;
	unsigned	 expected;	/* streams open at the trigger */
	int		 complete;
};

/* A probe call. */
struct rec {
	uint64_t	 due;
	uint64_t	 lat;		/* ns, to its answer or failure */
	int		 failed;
};

static enum stage	 stage;
static unsigned		 done_in_stage;
static uint64_t		 t_stage, t_begin;
static double		 setup_s[3];
static struct event	*stage_ev;	/* settling, idling, the gap */
static struct event	*notif_ev;	/* a notification's timeout */

static struct notif	*notifs;
static unsigned		 nsent;		/* triggers sent */
static struct hist	 h_arrival, h_last, h_first;

/* The gateway instances the sessions belong to (a fleet: the session id's
 * prefix), each with the trigger session that makes its notifications. */
#define MAX_INSTANCES	16
static struct {
	char		 name[64];
	int		 trigger;	/* its trigger's index, -1: none */
} insts[MAX_INSTANCES];
static unsigned		 ninsts;

static char		 probe_file[64];
static pid_t		 probe_pid;
static struct rec	*recs;
static size_t		 nrecs, caprecs;
static uint32_t		*beats;		/* heartbeats per bucket */
static uint8_t		*fanning;	/* buckets inside a fan-out */
static size_t		 nbuckets;
static uint64_t		 nbeats;

#define RSS_POINTS	6
static const char *const rss_point[RSS_POINTS] = {
	"before", "streams", "all", "idle", "early", "end"
};
static long		 rss[RSS_MAX_PIDS][RSS_POINTS];
static double		 cpu[RSS_MAX_PIDS][RSS_POINTS];	/* seconds */
static uint64_t		 t_point[RSS_POINTS];

static void	scale_stage_cb(evutil_socket_t, short, void *);

static enum role
role_of(const struct session *s)
{
	if (s->idx < opt.scale_streams)
		return R_STREAM;
	if (s->idx < opt.scale)
		return R_PLAIN;
	return R_TRIGGER;
}

/* VmRSS of a process in KiB, -1 if unknown. */
static long
rss_kib(int pid)
{
	char path[64], line[256];
	FILE *f;
	long v = -1;

	snprintf(path, sizeof path, "/proc/%d/status", pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof line, f) != NULL)
		if (strncmp(line, "VmRSS:", 6) == 0) {
			v = strtol(line + 6, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* CPU time (user and system) of a process in seconds, -1 if unknown. */
static double
cpu_s(int pid)
{
	char path[64], buf[1024], *p;
	unsigned long long ut, stime;
	FILE *f;
	size_t n;

	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* After the command's closing parenthesis: fields 3 on. */
	if ((p = strrchr(buf, ')')) == NULL ||
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu "
	    "%llu", &ut, &stime) != 2)
		return -1;
	return (double)(ut + stime) / (double)sysconf(_SC_CLK_TCK);
}

static void
rss_read(int point)
{
	unsigned i;

	if (!opt.quiet) {
		fprintf(stderr, "loadgen: %s\n", rss_point[point]);
		fflush(stderr);
	}
	t_point[point] = now_ns();
	for (i = 0; i < opt.nrss; i++) {
		rss[i][point] = rss_kib(opt.rss_pid[i]);
		cpu[i][point] = cpu_s(opt.rss_pid[i]);
	}
}

/* Make sure the buckets reach t. */
static size_t
bucket_of(uint64_t t)
{
	size_t b, n;

	b = t > t_begin ? (size_t)((t - t_begin) / BUCKET_NS) : 0;
	if (b >= nbuckets) {
		n = nbuckets ? nbuckets : 4096;
		while (n <= b)
			n *= 2;
		beats = realloc(beats, n * sizeof *beats);
		fanning = realloc(fanning, n);
		if (beats == NULL || fanning == NULL) {
			fprintf(stderr, "loadgen: out of memory\n");
			exit(1);
		}
		memset(beats + nbuckets, 0, (n - nbuckets) * sizeof *beats);
		memset(fanning + nbuckets, 0, n - nbuckets);
		nbuckets = n;
	}
	return b;
}

static void
stage_after(uint64_t ns)
{
	struct timeval tv = tv_of_ns(ns);

	evtimer_add(stage_ev, &tv);
}

/* Start up to --parallel sessions, up to index to. */
static void
start_range(unsigned to)
{
	unsigned n = 0;

	while (st.started < to && n < opt.parallel) {
		session_start(&sessions[st.started]);
		n++;
	}
}

/* The end of the current stage's sessions. */
static unsigned
stage_end(void)
{
	return stage == SC_STREAMS ? opt.scale_streams :
	    stage == SC_PLAIN ? opt.scale : opt.sessions;
}

void
scale_start(void)
{
	if ((stage_ev = evtimer_new(base, scale_stage_cb, NULL)) == NULL ||
	    (notif_ev = evtimer_new(base, scale_stage_cb, &notif_ev)) == NULL ||
	    (notifs = calloc(opt.notify + 1, sizeof *notifs)) == NULL) {
		fprintf(stderr, "loadgen: out of memory\n");
		exit(1);
	}
	rss_read(0);
	stage = SC_STREAMS;
	t_stage = now_ns();
	done_in_stage = 0;
	if (opt.scale_streams == 0) {
		stage_after(0);
		return;
	}
	start_range(opt.scale_streams);
}

/*
 * Lower the readers of the streams (this process) to --readers-nice, so
 * that they yield the CPU to the probe and to the gateway's processes, as
 * clients on other machines would.  With autogroups (Linux's default:
 * sched_autogroup_enabled) a niceness ranks a process only within its
 * session's group, and the gateway (a session of its own under
 * bench/scale) is another group: so the group's niceness is lowered too,
 * when this process leads its session (bench/scale runs it so; the probe
 * then takes a session of its own), not a shell's whole session.
 */
static void
readers_lower(void)
{
	char	n[16];
	int	fd, len;

	if (opt.readers_nice == 0)
		return;
	if (setpriority(PRIO_PROCESS, 0, opt.readers_nice) != 0)
		fprintf(stderr, "loadgen: setpriority: %s\n", strerror(errno));
	if (getsid(0) != getpid())
		return;
	if ((fd = open("/proc/self/autogroup", O_WRONLY)) == -1)
		return;		/* no autogroups */
	len = snprintf(n, sizeof n, "%d", opt.readers_nice);
	if (write(fd, n, (size_t)len) != len)
		fprintf(stderr, "loadgen: /proc/self/autogroup: %s\n",
		    strerror(errno));
	close(fd);
}

/*
 * The probe: a loadgen process of its own, so that reading thousands of
 * streams here does not delay its answers, calling at --rate over
 * --probes sessions and recording every answer in a file.
 */
static void
probe_begin(void)
{
	char rate[32], conc[32], timeout[32];
	char *argv[32];
	int fd, i = 0;

	t_begin = now_ns();
	bucket_of(t_begin);
	snprintf(probe_file, sizeof probe_file, "/tmp/loadgen-probe.XXXXXX");
	if ((fd = mkstemp(probe_file)) == -1) {
		fprintf(stderr, "loadgen: mkstemp: %s\n", strerror(errno));
		exit(1);
	}
	close(fd);
	snprintf(rate, sizeof rate, "%g", opt.rate);
	snprintf(conc, sizeof conc, "%u", opt.probes);
	snprintf(timeout, sizeof timeout, "%g", opt.timeout);
	argv[i++] = (char *)opt.self;
	argv[i++] = "-q";
	argv[i++] = "-l";
	argv[i++] = "probe";
	argv[i++] = "-r";
	argv[i++] = rate;
	argv[i++] = "-c";
	argv[i++] = conc;
	argv[i++] = "-w";
	argv[i++] = "0";
	argv[i++] = "-d";
	argv[i++] = "100000";
	argv[i++] = "-T";
	argv[i++] = timeout;
	argv[i++] = "-t";
	argv[i++] = (char *)opt.tool;
	argv[i++] = "-a";
	argv[i++] = (char *)opt.args;
	argv[i++] = "--record";
	argv[i++] = probe_file;
	argv[i++] = (char *)opt.url;
	argv[i] = NULL;
	if ((probe_pid = fork()) == -1) {
		fprintf(stderr, "loadgen: fork: %s\n", strerror(errno));
		exit(1);
	}
	if (probe_pid == 0) {
		/* A session, so an autogroup, of its own (readers_lower);
		 * it ends with loadgen all the same. */
		if (opt.readers_nice != 0 && getsid(0) == getppid()) {
			setsid();
			prctl(PR_SET_PDEATHSIG, SIGTERM);
			if (getppid() == 1)
				_exit(1);
		}
		if ((fd = open("/dev/null", O_WRONLY)) != -1)
			dup2(fd, STDOUT_FILENO);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	readers_lower();
}

/*
 * Run the loop: sleep until a connection is readable, or with
 * --readers-poll look at them every so many microseconds.  A process
 * asleep on its connections is woken by each write to one of them, and
 * on one machine the writer pays for the wakeup (an interrupt to the
 * other CPU, a few microseconds in a virtual machine); a client on
 * another machine costs the gateway no such thing.
 */
void
scale_loop(struct event_base *b)
{
	struct timespec	ts;

	if (opt.readers_poll == 0) {
		event_base_dispatch(b);
		return;
	}
	ts.tv_sec = opt.readers_poll / 1000000;
	ts.tv_nsec = (long)(opt.readers_poll % 1000000) * 1000;
	while (!event_base_got_exit(b) && !event_base_got_break(b)) {
		if (event_base_loop(b, EVLOOP_NONBLOCK) != 0)
			break;
		nanosleep(&ts, NULL);
	}
}

/* Stop the probe and take its records. */
static void
probe_end(void)
{
	uint64_t r[2];
	FILE *f;
	int status;

	if (probe_pid <= 0)
		return;
	kill(probe_pid, SIGTERM);
	waitpid(probe_pid, &status, 0);
	probe_pid = 0;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		error_note("the probe exited with status %d", status);
	if ((f = fopen(probe_file, "r")) == NULL) {
		error_note("the probe's records: %s", strerror(errno));
		return;
	}
	while (fread(r, sizeof r, 1, f) == 1) {
		if (r[0] < t_begin)
			continue;
		if (nrecs == caprecs) {
			caprecs = caprecs ? caprecs * 2 : 65536;
			if ((recs = realloc(recs, caprecs * sizeof *recs)) ==
			    NULL) {
				fprintf(stderr, "loadgen: out of memory\n");
				exit(1);
			}
		}
		recs[nrecs].due = r[0];
		recs[nrecs].lat = r[1] & ~REC_FAILED;
		recs[nrecs].failed = (r[1] & REC_FAILED) != 0;
		nrecs++;
	}
	fclose(f);
	unlink(probe_file);
}

/* The instance of a session: its id's prefix, up to the first '.'. */
static int
instance_of(const struct session *s, int add)
{
	const char *sid = http_session_id(s), *dot;
	size_t len;
	unsigned i;

	dot = strchr(sid, '.');
	len = dot != NULL ? (size_t)(dot - sid) : 0;
	if (len >= sizeof insts[0].name)
		len = sizeof insts[0].name - 1;
	for (i = 0; i < ninsts; i++)
		if (strlen(insts[i].name) == len &&
		    memcmp(insts[i].name, sid, len) == 0)
			return (int)i;
	if (!add || ninsts == MAX_INSTANCES)
		return -1;
	memcpy(insts[ninsts].name, sid, len);
	insts[ninsts].name[len] = '\0';
	insts[ninsts].trigger = -1;
	return (int)ninsts++;
}

/* Give each instance one of the trigger sessions that belongs to it. */
static void
triggers_assign(void)
{
	unsigned i;
	int k;

	for (i = 0; i < opt.triggers; i++) {
		struct session *s = &sessions[opt.scale + i];

		if (s->phase != PH_READY || (k = instance_of(s, 1)) < 0)
			continue;
		if (insts[k].trigger < 0)
			insts[k].trigger = (int)(opt.scale + i);
	}
	for (i = 0; i < ninsts; i++)
		if (insts[i].trigger < 0)
			error_note("instance \"%s\" has streams and no trigger "
			    "session (more --triggers?)", insts[i].name);
}

/*
 * Send the next notification: on every instance at once, a call that
 * makes its upstream's list change.
 */
static void
trigger(void)
{
	struct notif *n = &notifs[nsent];
	struct session *s;
	char body[512];
	struct timeval tv = tv_of_ns((uint64_t)(opt.timeout * 1e9));
	unsigned i;

	n->t0 = now_ns();
	n->expected = st.open_streams;
	nsent++;
	evtimer_add(notif_ev, &tv);
	for (i = 0; i < ninsts; i++) {
		if (insts[i].trigger < 0)
			continue;
		s = &sessions[insts[i].trigger];
		if (s->phase != PH_READY) {
			error_note("the trigger of instance \"%s\" is not "
			    "ready (phase %d)", insts[i].name, (int)s->phase);
			continue;
		}
		s->want_id = s->next_id++;
		snprintf(body, sizeof body, "{\"jsonrpc\":\"2.0\",\"id\":%"
		    PRId64 ",\"method\":\"tools/call\",\"params\":{\"name\":"
		    "\"%s\",\"arguments\":{}}}", s->want_id, opt.trigger);
		s->t_due = n->t0;
		s->phase = PH_CALL;
		tr->send(s, body, strlen(body));
	}
}

/* A notification reached every stream (or timed out): on to the next. */
static void
notif_done(struct notif *n)
{
	size_t b, e;

	if (n->complete)
		return;
	n->complete = 1;
	evtimer_del(notif_ev);
	if (n->arrived > 0) {
		hist_add(&h_last, n->last / 1000);
		hist_add(&h_first, n->first / 1000);
	}
	if (n->arrived < n->expected)
		error_note("notification %u reached %u of %u streams",
		    (unsigned)(n - notifs) + 1, n->arrived, n->expected);
	e = bucket_of(n->t0 + (n->arrived >= n->expected ? n->last :
	    (uint64_t)(opt.timeout * 1e9)));
	/* The trigger's bucket and the next: the upstream changing its
	 * tools and the worker listing them again, before the broadcast. */
	for (b = bucket_of(n->t0); b <= e; b++)
		if (fanning[b] != FAN_START)
			fanning[b] = b <= bucket_of(n->t0) + 1 ? FAN_START :
			    FAN_SENDING;
	if (nsent == (opt.notify + 9) / 10)
		rss_read(4);
	if (nsent < opt.notify) {
		stage_after((uint64_t)(opt.gap * 1e6));
		return;
	}
	stage = SC_TAIL;
	stage_after((uint64_t)(opt.idle * 1e9));
}

static void
scale_stage_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	if (arg == &notif_ev) {
		/* A notification timed out. */
		if (nsent > 0)
			notif_done(&notifs[nsent - 1]);
		return;
	}
	switch (stage) {
	case SC_STREAMS:
		/* Settled after the streams: on to the plain sessions. */
		rss_read(1);
		stage = SC_PLAIN;
		t_stage = now_ns();
		done_in_stage = 0;
		if (opt.scale > opt.scale_streams)
			start_range(stage_end());
		else
			stage_after(0);
		break;
	case SC_PLAIN:
		rss_read(2);
		stage = SC_PROBE;
		t_stage = now_ns();
		done_in_stage = 0;
		start_range(stage_end());
		break;
	case SC_PROBE:
		break;
	case SC_IDLE:
		rss_read(3);
		/* No stream: no fan-out to time (each would wait out
		 * --timeout), only the sessions held and the probe. */
		if (opt.notify > 0 && st.open_streams > 0) {
			stage = SC_NOTIFY;
			trigger();
		} else {
			stage = SC_TAIL;
			stage_after((uint64_t)(opt.idle * 1e9));
		}
		break;
	case SC_NOTIFY:
		trigger();
		break;
	case SC_TAIL:
		rss_read(5);
		stage = SC_DONE;
		probe_end();
		stop_all();
		break;
	case SC_DONE:
		break;
	}
}

/* A stage's setup is through (ready, open, or failed). */
static void
stage_progress(unsigned total)
{
	if (++done_in_stage < total) {
		/* One through, the next begins: --parallel at a time. */
		if (st.started < stage_end())
			session_start(&sessions[st.started]);
		return;
	}
	setup_s[stage - SC_STREAMS] = (double)(now_ns() - t_stage) / 1e9;
	if (stage == SC_PROBE) {
		triggers_assign();
		stage = SC_IDLE;
		probe_begin();
		stage_after((uint64_t)(opt.idle * 1e9));
		return;
	}
	stage_after(SETTLE_NS);
}

void
scale_on_ready(struct session *s)
{
	switch (role_of(s)) {
	case R_STREAM:
		if (s->phase == PH_READY) {
			http_send_get(s);
			return;
		}
		if (s->phase == PH_STREAM)
			instance_of(s, 1);
		stage_progress(opt.scale_streams);
		return;
	case R_PLAIN:
		if (s->phase == PH_READY) {
			/* Held without a connection. */
			tr->close(s);
			s->phase = PH_CLOSED;
		}
		stage_progress(opt.scale - opt.scale_streams);
		return;
	default:
		stage_progress(opt.triggers);
		return;
	}
}

int
scale_may_call(const struct session *s)
{
	(void)s;
	return 0;	/* the trigger calls by itself */
}

void
scale_stream_event(struct session *s, const char *data, size_t len)
{
	struct notif *n;
	uint64_t t, lat;
	unsigned k;

	if (memmem(data, len, "list_changed", 12) == NULL)
		return;
	k = s->nlc++;
	if (k >= nsent)
		return;		/* not one of ours */
	n = &notifs[k];
	t = now_ns();
	lat = t - n->t0;
	hist_add(&h_arrival, lat / 1000);
	if (n->arrived == 0)
		n->first = lat;
	if (lat > n->last)
		n->last = lat;
	n->arrived++;
	if (n->arrived >= n->expected || n->arrived >= st.open_streams)
		notif_done(n);
}

void
scale_heartbeat(struct session *s)
{
	size_t b;

	(void)s;
	if (t_begin == 0)
		return;
	/* The index first: bucket_of may move the array. */
	b = bucket_of(now_ns());
	beats[b]++;
	nbeats++;
}

/*
 * The class of a probe call: 0 idle, 1 heartbeats, 2 fan-out; a fan-out
 * call clear of any fan-out's first 20 ms is also 3 (*late).
 */
static int
rec_class(const struct rec *r, int *late)
{
	size_t lo = bucket_of(r->due), hi = bucket_of(r->due + r->lat), b;
	int beat = 0, fan = 0;

	*late = 1;
	for (b = lo; b <= hi; b++) {
		if (fanning[b] != 0)
			fan = 1;
		if (fanning[b] == FAN_START)
			*late = 0;
	}
	if (fan)
		return 2;
	*late = 0;
	for (b = lo > 0 ? lo - 1 : 0; b <= hi + 1 && b < nbuckets; b++)
		if (beats[b])
			beat = 1;
	return beat;
}

/* The median of the last-stream times of notifications [from, to). */
static double
median_last(unsigned from, unsigned to)
{
	uint64_t *v, x;
	unsigned n = 0, i, j;
	double m;

	if (to <= from || (v = calloc(to - from, sizeof *v)) == NULL)
		return 0;
	for (i = from; i < to; i++)
		if (notifs[i].complete && notifs[i].arrived > 0)
			v[n++] = notifs[i].last / 1000;
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && v[j - 1] > v[j]; j--) {
			x = v[j];
			v[j] = v[j - 1];
			v[j - 1] = x;
		}
	m = n == 0 ? 0 : n % 2 ? (double)v[n / 2] :
	    ((double)v[n / 2 - 1] + (double)v[n / 2]) / 2;
	free(v);
	return m;
}

static json_t *
hist_json(const struct hist *h)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:I}",
	    "n", (json_int_t)h->n,
	    "p50_us", (json_int_t)hist_pct(h, 50),
	    "p99_us", (json_int_t)hist_pct(h, 99),
	    "p999_us", (json_int_t)hist_pct(h, 99.9),
	    "max_us", (json_int_t)h->max);
}

void
scale_report(void)
{
	static const char *const cls[NCLASS] = { "idle", "heartbeat",
	    "fanout", "fanout_late" };
	struct hist *probe;
	json_t *o, *r, *c, *tm, *p, *f, *one;
	unsigned i, j, tenth, complete = 0, failed[NCLASS] = { 0 };
	char *txt;
	int k, late;

	probe = calloc(NCLASS, sizeof *probe);
	if (probe == NULL)
		return;
	/* A failed call counts with the time it took to fail. */
	for (i = 0; i < nrecs; i++) {
		k = rec_class(&recs[i], &late);
		hist_add(&probe[k], recs[i].lat / 1000);
		failed[k] += recs[i].failed;
		if (late) {
			hist_add(&probe[3], recs[i].lat / 1000);
			failed[3] += recs[i].failed;
		}
	}
	for (i = 0; i < nsent; i++)
		complete += notifs[i].complete &&
		    notifs[i].arrived >= notifs[i].expected;
	r = json_object();
	c = json_object();
	for (i = 0; i < opt.nrss; i++) {
		json_t *one = json_object(), *two = json_object();

		for (j = 0; j < RSS_POINTS; j++) {
			json_object_set_new(one, rss_point[j],
			    json_integer(rss[i][j]));
			json_object_set_new(two, rss_point[j],
			    json_real(cpu[i][j]));
		}
		json_object_set_new(r, opt.rss_name[i], one);
		json_object_set_new(c, opt.rss_name[i], two);
	}
	tm = json_object();
	for (j = 0; j < RSS_POINTS; j++)
		json_object_set_new(tm, rss_point[j], json_real(t_point[j] ?
		    (double)(t_point[j] - t_point[0]) / 1e9 : 0.0));
	p = json_object();
	for (i = 0; i < NCLASS; i++) {
		one = hist_json(&probe[i]);
		json_object_set_new(one, "failed", json_integer(failed[i]));
		json_object_set_new(p, cls[i], one);
	}
	tenth = nsent >= 10 ? nsent / 10 : nsent;
	f = json_pack("{s:I, s:I, s:o, s:o, s:o, s:f, s:f}",
	    "sent", (json_int_t)nsent, "complete", (json_int_t)complete,
	    "last", hist_json(&h_last), "first", hist_json(&h_first),
	    "every_stream", hist_json(&h_arrival),
	    "first_tenth_last_p50_us", median_last(0, tenth),
	    "last_tenth_last_p50_us", median_last(nsent - tenth, nsent));
	o = json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:f, s:f, s:f,"
	    " s:f, s:I, s:o, s:o, s:o, s:f, s:o, s:o, s:I, s:I, s:s?}",
	    "label", opt.label, "mode", "scale",
	    "instances", (json_int_t)ninsts,
	    "sessions", (json_int_t)opt.scale,
	    "streams", (json_int_t)opt.scale_streams,
	    "streams_open", (json_int_t)st.open_streams,
	    "sources", (json_int_t)opt.nsources,
	    "setup_streams_s", setup_s[0], "setup_plain_s", setup_s[1],
	    "setup_rate", setup_s[0] + setup_s[1] > 0 ?
	    (double)opt.scale / (setup_s[0] + setup_s[1]) : 0.0,
	    "probe_rate", opt.rate,
	    "heartbeats", (json_int_t)nbeats,
	    "rss_kib", r, "cpu_s", c, "fanout", f, "idle_s", opt.idle,
	    "at_s", tm, "probe", p,
	    "probe_calls", (json_int_t)nrecs,
	    "errors", (json_int_t)st.errors,
	    "first_error", st.first_error[0] ? st.first_error : NULL);
	txt = json_dumps(o, JSON_COMPACT);
	printf("%s\n", txt);
	free(txt);
	if (!opt.quiet)
		fprintf(stderr, "%s%sscale: %u sessions, %u streams, setup "
		    "%.1f+%.1f s; fan-out to the last stream p50 %" PRIu64
		    " us p99 %" PRIu64 " us max %" PRIu64 " us (%u of %u "
		    "complete); probe p99 idle %" PRIu64 " us, heartbeats %"
		    PRIu64 " us, fan-outs %" PRIu64 " us; %" PRIu64
		    " errors\n", opt.label, opt.label[0] ? " " : "",
		    opt.scale, opt.scale_streams, setup_s[0], setup_s[1],
		    hist_pct(&h_last, 50), hist_pct(&h_last, 99), h_last.max,
		    complete, nsent, hist_pct(&probe[0], 99),
		    hist_pct(&probe[1], 99), hist_pct(&probe[2], 99),
		    st.errors);
	json_decref(o);
	free(probe);
}
