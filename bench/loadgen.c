/*
 * loadgen -- a load generator for MCP servers over Streamable HTTP.
 *
 * Each session is one HTTP/1.1 keep-alive connection that does the MCP
 * handshake (initialize, capturing Mcp-Session-Id, then
 * notifications/initialized, which must be answered 202) and then one of:
 *
 *   calls    tools/call in a closed loop (the next call when the previous
 *            one is answered) or, with --rate, in an open loop at a fixed
 *            total rate (latency counted from the time the call was due,
 *            so a slow server is not excused by sending less);
 *   streams  a GET that opens the session's standalone event stream,
 *            held open until loadgen is stopped (SIGTERM, SIGINT) or
 *            --hold runs out.
 *
 * Answers may be application/json or text/event-stream; an event stream is
 * parsed as it arrives (events in pieces, CR/LF/CRLF line ends, the
 * priming event with empty data first), and the answer is the event whose
 * JSON has the request's id.  Every answer is checked: the right id and a
 * result (or, with --expect-error, an error).  Latency goes into a
 * log-linear histogram with microsecond resolution; calls answered during
 * the warm-up are not counted.
 *
 * Output: one JSON line on stdout, one human line on stderr.  The exit
 * status is 0 when every call was answered as expected, 1 otherwise, and 2
 * for a usage error.
 *
 * Build: cc -O2 -std=c11 -Wall -Wextra -o loadgen loadgen.c -levent -ljansson
 */
#define _GNU_SOURCE

#include <sys/types.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <netdb.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/util.h>
#include <jansson.h>

#define MAX_HEAD	(64 * 1024)	/* response head */
#define MAX_LINE	(1024 * 1024)	/* chunk size and trailer lines */
#define MAX_EVENT	(256L * 1024 * 1024) /* one SSE event's data */
#define READ_MAX	(256 * 1024)	/* one read(2) */

/* ------------------------------------------------------------------ */
/* Time. */

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t
unix_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000;
}

static struct timeval
tv_of_ns(uint64_t ns)
{
	struct timeval tv;

	tv.tv_sec = (time_t)(ns / 1000000000u);
	tv.tv_usec = (suseconds_t)(ns % 1000000000u / 1000);
	return tv;
}

/* ------------------------------------------------------------------ */
/*
 * Histogram, HDR style: values in microseconds; below 2^(SUB_BITS+1)
 * every value has its own bucket, above that each power of two is split
 * in 2^SUB_BITS linear buckets, so any value is known to within 1/256.
 */

#define SUB_BITS	8
#define SUB		(1u << SUB_BITS)		/* 256 */
#define LINEAR		(2u * SUB)			/* exact below 512 */
#define NBUCKETS	(LINEAR + 48u * SUB)

struct hist {
	uint64_t	 count[NBUCKETS];
	uint64_t	 n;
	uint64_t	 min, max;
	long double	 sum;
};

static unsigned
hist_index(uint64_t v)
{
	unsigned e;

	if (v < LINEAR)
		return (unsigned)v;
	e = 63u - (unsigned)__builtin_clzll(v) - SUB_BITS; /* v >> e in [SUB, 2SUB) */
	if (e > 48)
		return NBUCKETS - 1;
	return LINEAR + (e - 1) * SUB + (unsigned)((v >> e) - SUB);
}

/* The lowest value of a bucket, and its width. */
static void
hist_bucket(unsigned i, uint64_t *lo, uint64_t *width)
{
	unsigned e;

	if (i < LINEAR) {
		*lo = i;
		*width = 1;
		return;
	}
	e = (i - LINEAR) / SUB + 1;
	*lo = ((uint64_t)SUB + (i - LINEAR) % SUB) << e;
	*width = (uint64_t)1 << e;
}

static void
hist_add(struct hist *h, uint64_t v)
{
	h->count[hist_index(v)]++;
	if (h->n == 0 || v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
	h->n++;
	h->sum += v;
}

/* The value at percentile p: the middle of its bucket, never above max. */
static uint64_t
hist_pct(const struct hist *h, double p)
{
	uint64_t rank, seen = 0, lo, width, v;
	unsigned i;

	if (h->n == 0)
		return 0;
	rank = (uint64_t)(p / 100.0 * (double)h->n + 0.999999);
	if (rank < 1)
		rank = 1;
	for (i = 0; i < NBUCKETS; i++) {
		seen += h->count[i];
		if (seen >= rank) {
			hist_bucket(i, &lo, &width);
			v = lo + (width - 1) / 2;
			if (v > h->max)
				v = h->max;
			if (v < h->min)
				v = h->min;
			return v;
		}
	}
	return h->max;
}

/* ------------------------------------------------------------------ */
/* Options and global state. */

enum mode { MODE_CALLS, MODE_STREAMS };

static struct {
	const char	*url;
	char		 host[256];
	char		 hostport[300];
	char		 path[1024];
	struct sockaddr_storage addr;
	socklen_t	 addrlen;
	enum mode	 mode;
	unsigned	 sessions;
	double		 duration;	/* seconds measured */
	double		 warmup;	/* seconds before */
	double		 rate;		/* calls/s in total, 0 closed loop */
	uint64_t	 calls;		/* stop after this many, 0 no limit */
	double		 timeout;	/* per call, seconds */
	double		 hold;		/* streams mode, 0 until signalled */
	unsigned	 parallel;	/* sessions being set up at once */
	const char	*tool;
	const char	*args;		/* JSON text */
	const char	*label;
	const char	*protocol;
	int		 expect_error;
	int		 quiet;
	const char	*stdio;		/* direct: the server's command */
} opt = {
	.mode = MODE_CALLS,
	.sessions = 1,
	.duration = 10,
	.warmup = 2,
	.timeout = 30,
	.parallel = 64,
	.tool = "demo__echo",
	.args = "{\"text\":\"hello\"}",
	.label = "",
	.protocol = "2025-11-25",
};

static struct event_base *base;
static struct hist	 hist;
static char		*call_prefix;	/* request body up to the id */
static char		*call_suffix;	/* after the id */

static struct {
	uint64_t	 t_setup;	/* setup began */
	uint64_t	 t_start;	/* calls began (after setup) */
	uint64_t	 t_measure;	/* warm-up over */
	uint64_t	 t_end;		/* measurement over */
	unsigned	 started;	/* sessions begun */
	unsigned	 ready;		/* sessions through the handshake */
	unsigned	 failed;	/* sessions that gave up */
	unsigned	 open_streams;
	unsigned	 max_streams;
	uint64_t	 sent;
	uint64_t	 answered;	/* all answers, warm-up included */
	uint64_t	 counted;	/* answers in the measurement */
	uint64_t	 errors;
	uint64_t	 errors_counted; /* errors in the measurement */
	uint64_t	 bytes_in;
	uint64_t	 answer_bytes;	/* the last answer's JSON text */
	uint64_t	 last_answer_unix_us;
	uint64_t	 events;	/* SSE events on GET streams */
	uint64_t	 reconnects;
	char		 first_error[512];
	int		 calling;	/* calls may be sent */
	int		 draining;	/* ending the sessions */
	uint64_t	 deleted;	/* sessions ended with DELETE */
	int		 stopping;
} st;

static void
error_note(const char *fmt, ...)
{
	va_list ap;

	st.errors++;
	if (st.t_measure != 0 && now_ns() >= st.t_measure)
		st.errors_counted++;
	if (st.first_error[0] != '\0')
		return;
	va_start(ap, fmt);
	vsnprintf(st.first_error, sizeof st.first_error, fmt, ap);
	va_end(ap);
	if (!opt.quiet)
		fprintf(stderr, "loadgen: %s\n", st.first_error);
}

/* ------------------------------------------------------------------ */
/* A growable byte buffer. */

struct buf {
	char		*p;
	size_t		 len, cap;
};

static int
buf_add(struct buf *b, const char *p, size_t n)
{
	size_t cap;
	char *q;

	if (b->len + n + 1 > b->cap) {
		cap = b->cap ? b->cap : 256;
		while (cap < b->len + n + 1)
			cap *= 2;
		if ((q = realloc(b->p, cap)) == NULL)
			return -1;
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
	b->p[b->len] = '\0';
	return 0;
}

static void
buf_free(struct buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

/* ------------------------------------------------------------------ */
/* Sessions. */

enum phase {
	PH_IDLE = 0,
	PH_INIT,		/* initialize sent */
	PH_NOTIFIED,		/* notifications/initialized sent */
	PH_READY,		/* handshake done, nothing in flight */
	PH_CALL,		/* a tools/call in flight */
	PH_GET,			/* the GET sent */
	PH_STREAM,		/* its event stream open */
	PH_DELETE,		/* the DELETE that ends it sent */
	PH_CLOSED,		/* ended */
	PH_DEAD
};

enum rstate {
	RS_NONE = 0,		/* no request outstanding */
	RS_HEAD,
	RS_LENGTH,		/* Content-Length body */
	RS_CHUNK_SIZE,
	RS_CHUNK_DATA,
	RS_CHUNK_CRLF,
	RS_TRAILER,
	RS_CLOSE		/* body until the connection closes */
};

struct session {
	unsigned	 idx;
	struct bufferevent *bev;
	int		 connected;
	enum phase	 phase;
	char		 sid[256];	/* Mcp-Session-Id, may be empty */
	char		 proto[32];	/* negotiated protocol version */
	int64_t		 next_id;
	int64_t		 want_id;
	uint64_t	 t_due;		/* the call's start (open loop: due) */
	uint64_t	 next_due;	/* open loop: the next call's slot */
	uint64_t	 interval;	/* open loop: ns between calls */
	struct event	*timer;		/* open-loop slot, call timeout */
	struct event	*deadline;

	/* The response being read. */
	enum rstate	 rs;
	int		 status;
	int		 sse;
	int		 conn_close;
	uint64_t	 left;		/* of the body or the chunk */
	struct evbuffer	*body;		/* a JSON body */
	int		 answered;	/* the request got its answer */
	int		 answer_ok;	/* and it was as expected */
	char		 head_sid[256];

	/* The event stream parser. */
	struct buf	 line;		/* a partial line */
	int		 skip_lf;	/* the last line ended with CR */
	struct buf	 data;		/* the event's data */
	int		 has_data;
};

static struct session	*sessions;

static void	session_start(struct session *);
static void	session_fail(struct session *, const char *, ...);
static void	send_call(struct session *);
static void	send_get(struct session *);
static void	maybe_finish(void);
static void	drain_check(void);
static void	send_delete(struct session *);
static void	on_ready(struct session *);

static void
session_close_conn(struct session *s)
{
	if (s->bev != NULL) {
		bufferevent_free(s->bev);
		s->bev = NULL;
	}
	s->connected = 0;
	s->rs = RS_NONE;
}

/*
 * Going direct: the server is a child on stdio, every session's calls go
 * over its one pipe as lines, told apart by id (id % sessions is the
 * session; 0 is initialize).
 */
static struct {
	pid_t			 pid;
	struct bufferevent	*in;	/* to its stdin */
	struct bufferevent	*out;	/* from its stdout */
	size_t			 scan;	/* of out's input, searched for \n */
	int			 ready;
} direct = { .pid = -1 };

static void	direct_line(const char *, size_t);

static void
direct_read_cb(struct bufferevent *bev, void *arg)
{
	struct evbuffer *in = bufferevent_get_input(bev);
	struct evbuffer_ptr p, from;
	size_t len;
	char *line;

	(void)arg;
	while (direct.out != NULL && (len = evbuffer_get_length(in)) > 0) {
		evbuffer_ptr_set(in, &from, direct.scan, EVBUFFER_PTR_SET);
		p = evbuffer_search(in, "\n", 1, &from);
		if (p.pos < 0) {
			direct.scan = len;
			return;
		}
		direct.scan = 0;
		line = (char *)evbuffer_pullup(in, p.pos + 1);
		direct_line(line, (size_t)p.pos);
		evbuffer_drain(in, (size_t)p.pos + 1);
	}
}

static void
direct_event_cb(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	(void)arg;
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) {
		if (!st.stopping)
			error_note("direct: the server closed its output");
		if (direct.out != NULL) {
			bufferevent_free(direct.out);
			direct.out = NULL;
		}
	}
}

static void
direct_write(const char *text)
{
	struct evbuffer *out;

	if (direct.in == NULL)
		return;
	out = bufferevent_get_output(direct.in);
	evbuffer_add(out, text, strlen(text));
	evbuffer_add(out, "\n", 1);
}

/* Start the server with its stdin and stdout on pipes. */
static int
direct_start(void)
{
	int tochild[2], fromchild[2];
	char *cmd, *argv[64], *tok, *save;
	int argc = 0;

	if ((cmd = strdup(opt.stdio)) == NULL)
		return -1;
	for (tok = strtok_r(cmd, " ", &save); tok != NULL && argc < 63;
	    tok = strtok_r(NULL, " ", &save))
		argv[argc++] = tok;
	argv[argc] = NULL;
	if (argc == 0 || pipe(tochild) != 0 || pipe(fromchild) != 0)
		return -1;
	if ((direct.pid = fork()) == -1)
		return -1;
	if (direct.pid == 0) {
		dup2(tochild[0], 0);
		dup2(fromchild[1], 1);
		close(tochild[0]);
		close(tochild[1]);
		close(fromchild[0]);
		close(fromchild[1]);
		execvp(argv[0], argv);
		_exit(127);
	}
	free(cmd);
	close(tochild[0]);
	close(fromchild[1]);
	evutil_make_socket_nonblocking(tochild[1]);
	evutil_make_socket_nonblocking(fromchild[0]);
	direct.in = bufferevent_socket_new(base, tochild[1],
	    BEV_OPT_CLOSE_ON_FREE);
	direct.out = bufferevent_socket_new(base, fromchild[0],
	    BEV_OPT_CLOSE_ON_FREE);
	if (direct.in == NULL || direct.out == NULL)
		return -1;
	bufferevent_setcb(direct.out, direct_read_cb, NULL, direct_event_cb,
	    NULL);
	bufferevent_enable(direct.out, EV_READ);
	bufferevent_enable(direct.in, EV_WRITE);
	return 0;
}

static void
direct_stop(void)
{
	int status;

	if (direct.in != NULL) {
		bufferevent_free(direct.in);	/* EOF on its stdin */
		direct.in = NULL;
	}
	if (direct.out != NULL) {
		bufferevent_free(direct.out);
		direct.out = NULL;
	}
	if (direct.pid > 0) {
		kill(direct.pid, SIGTERM);
		waitpid(direct.pid, &status, 0);
		direct.pid = -1;
	}
}

/* Write one request; the connection is made first if there is none. */
static void	connect_session(struct session *);

static void
write_request(struct session *s, const char *method, const char *body,
    size_t bodylen, const char *accept)
{
	struct evbuffer *out;

	if (st.stopping)
		return;
	if (s->bev == NULL)
		connect_session(s);
	if (s->bev == NULL)
		return;
	out = bufferevent_get_output(s->bev);
	evbuffer_add_printf(out,
	    "%s %s HTTP/1.1\r\n"
	    "Host: %s\r\n"
	    "Accept: %s\r\n",
	    method, opt.path, opt.hostport, accept);
	if (s->sid[0] != '\0')
		evbuffer_add_printf(out, "Mcp-Session-Id: %s\r\n", s->sid);
	if (s->proto[0] != '\0')
		evbuffer_add_printf(out, "MCP-Protocol-Version: %s\r\n",
		    s->proto);
	if (body != NULL)
		evbuffer_add_printf(out,
		    "Content-Type: application/json\r\n"
		    "Content-Length: %zu\r\n\r\n", bodylen);
	else
		evbuffer_add(out, "\r\n", 2);
	if (body != NULL)
		evbuffer_add(out, body, bodylen);
	s->rs = RS_HEAD;
	s->status = 0;
	s->sse = 0;
	s->conn_close = 0;
	s->answered = 0;
	s->answer_ok = 0;
	s->head_sid[0] = '\0';
	evbuffer_drain(s->body, evbuffer_get_length(s->body));
	buf_free(&s->line);
	buf_free(&s->data);
	s->has_data = 0;
	s->skip_lf = 0;
}

static void
post_json(struct session *s, const char *body)
{
	write_request(s, "POST", body, strlen(body),
	    "application/json, text/event-stream");
}

/* Check an answer to the request in flight; 1 if it was the one. */
static int
check_answer(struct session *s, json_t *msg, size_t textlen)
{
	json_t *id, *result, *err;
	const char *m;

	if (!json_is_object(msg))
		return 0;
	id = json_object_get(msg, "id");
	if (json_object_get(msg, "method") != NULL)
		return 0;	/* a request or notification from the server */
	result = json_object_get(msg, "result");
	err = json_object_get(msg, "error");
	if (result == NULL && err == NULL)
		return 0;
	if (!json_is_integer(id) || json_integer_value(id) != s->want_id) {
		error_note("session %u: answer with wrong id (want %" PRId64
		    ")", s->idx, s->want_id);
		return -1;
	}
	st.answer_bytes = textlen;
	st.last_answer_unix_us = unix_us();
	if (s->phase == PH_CALL && opt.expect_error) {
		if (err == NULL && !json_is_true(json_object_get(result,
		    "isError"))) {
			error_note("session %u: a result where an error was "
			    "expected", s->idx);
			return -1;
		}
		m = json_string_value(json_object_get(err, "message"));
		if (st.first_error[0] == '\0')
			snprintf(st.first_error, sizeof st.first_error,
			    "expected error: %s", m ? m : "(isError)");
		return 1;
	}
	if (err != NULL) {
		m = json_string_value(json_object_get(err, "message"));
		error_note("session %u: error answer: %s", s->idx,
		    m ? m : "(no message)");
		return -1;
	}
	if (!json_is_object(result)) {
		error_note("session %u: result is not an object", s->idx);
		return -1;
	}
	if (json_is_true(json_object_get(result, "isError"))) {
		error_note("session %u: tool result has isError", s->idx);
		return -1;
	}
	if (s->phase == PH_INIT) {
		m = json_string_value(json_object_get(result,
		    "protocolVersion"));
		if (m == NULL || strlen(m) >= sizeof s->proto) {
			error_note("session %u: initialize result without "
			    "protocolVersion", s->idx);
			return -1;
		}
		snprintf(s->proto, sizeof s->proto, "%s", m);
	}
	return 1;
}

/* The answer to a call arrived (or the call failed, ok = 0). */
static void
call_answered(struct session *s, int ok)
{
	uint64_t t = now_ns();

	st.answered++;
	if (s->deadline != NULL)
		event_del(s->deadline);
	if (ok && st.t_measure != 0 && t >= st.t_measure && t <= st.t_end) {
		st.counted++;
		hist_add(&hist, (t - s->t_due + 500) / 1000);
	}
}

/* A JSON-RPC message from the server, from a JSON body or an event. */
static void
on_message(struct session *s, const char *text, size_t len)
{
	json_error_t jerr;
	json_t *msg;
	int r;

	if (s->answered)
		return;
	msg = json_loadb(text, len, 0, &jerr);
	if (msg == NULL) {
		error_note("session %u: bad JSON from the server: %s",
		    s->idx, jerr.text);
		return;
	}
	r = check_answer(s, msg, len);
	json_decref(msg);
	if (r == 0)
		return;
	s->answered = 1;
	s->answer_ok = r > 0;
	if (s->phase == PH_CALL)
		call_answered(s, r > 0);
}

/* ------------------------------------------------------------------ */
/* Server-sent events. */

static void
sse_dispatch(struct session *s)
{
	if (!s->has_data)
		return;
	s->has_data = 0;
	if (s->data.len > 0 && s->data.p[s->data.len - 1] == '\n')
		s->data.len--;
	if (s->data.len == 0)
		return;		/* the priming event */
	if (s->phase == PH_STREAM)
		st.events++;
	else
		on_message(s, s->data.p, s->data.len);
	s->data.len = 0;
}

static void
sse_line(struct session *s, const char *p, size_t n)
{
	const char *v;
	size_t fl, vl;

	if (n == 0) {
		sse_dispatch(s);
		return;
	}
	if (p[0] == ':')
		return;		/* comment */
	v = memchr(p, ':', n);
	fl = v ? (size_t)(v - p) : n;
	if (v != NULL) {
		v++;
		vl = n - fl - 1;
		if (vl > 0 && *v == ' ') {
			v++;
			vl--;
		}
	} else {
		v = p + n;
		vl = 0;
	}
	if (fl == 4 && memcmp(p, "data", 4) == 0) {
		if (s->data.len + vl > MAX_EVENT) {
			session_fail(s, "event too long");
			return;
		}
		if (buf_add(&s->data, v, vl) != 0 ||
		    buf_add(&s->data, "\n", 1) != 0) {
			session_fail(s, "out of memory");
			return;
		}
		s->has_data = 1;
	}
	/* id, event, retry and unknown fields need nothing here. */
}

static void
sse_feed(struct session *s, const char *p, size_t n)
{
	const char *end = p + n, *q;
	size_t i;

	while (p < end && s->bev != NULL) {
		if (s->skip_lf) {
			s->skip_lf = 0;
			if (*p == '\n') {
				p++;
				continue;
			}
		}
		q = NULL;
		for (i = 0; i < (size_t)(end - p); i++)
			if (p[i] == '\n' || p[i] == '\r') {
				q = p + i;
				break;
			}
		if (q == NULL) {
			if (s->line.len + (size_t)(end - p) > MAX_EVENT) {
				session_fail(s, "event line too long");
				return;
			}
			if (buf_add(&s->line, p, (size_t)(end - p)) != 0)
				session_fail(s, "out of memory");
			return;
		}
		if (s->line.len > 0) {
			if (buf_add(&s->line, p, (size_t)(q - p)) != 0) {
				session_fail(s, "out of memory");
				return;
			}
			sse_line(s, s->line.p, s->line.len);
			s->line.len = 0;
		} else
			sse_line(s, p, (size_t)(q - p));
		if (*q == '\r')
			s->skip_lf = 1;
		p = q + 1;
	}
}

/* ------------------------------------------------------------------ */
/* HTTP responses. */

static void
body_bytes(struct session *s, struct evbuffer *in, size_t n)
{
	struct evbuffer_iovec v[8];
	size_t done = 0, k;
	int i, nv;

	if (!s->sse) {
		evbuffer_remove_buffer(in, s->body, n);
		return;
	}
	while (done < n && s->bev != NULL) {
		nv = evbuffer_peek(in, (ev_ssize_t)(n - done), NULL, v, 8);
		if (nv <= 0)
			break;
		if (nv > 8)
			nv = 8;
		k = 0;
		for (i = 0; i < nv && done + k < n; i++) {
			size_t len = v[i].iov_len;

			if (len > n - done - k)
				len = n - done - k;
			sse_feed(s, v[i].iov_base, len);
			if (s->bev == NULL)
				return;
			k += len;
		}
		evbuffer_drain(in, k);
		done += k;
	}
}

/* The whole response is in. */
static void
response_done(struct session *s)
{
	size_t len;
	char *p;

	s->rs = RS_NONE;
	if (!s->sse && evbuffer_get_length(s->body) > 0 &&
	    s->phase != PH_NOTIFIED && s->phase != PH_DELETE &&
	    s->status >= 200 && s->status < 300) {
		len = evbuffer_get_length(s->body);
		p = (char *)evbuffer_pullup(s->body, (ev_ssize_t)len);
		on_message(s, p, len);
		evbuffer_drain(s->body, len);
	}
	if (s->sse)
		sse_dispatch(s);	/* an event the stream ended without */
	if (s->bev == NULL)
		return;
	if (s->conn_close)
		session_close_conn(s);

	switch (s->phase) {
	case PH_INIT:
		if (s->status != 200 || !s->answer_ok) {
			session_fail(s, "initialize: status %d%s", s->status,
			    s->answered ? "" : ", no answer");
			return;
		}
		if (s->head_sid[0] != '\0')
			memcpy(s->sid, s->head_sid, sizeof s->sid);
		s->phase = PH_NOTIFIED;
		post_json(s, "{\"jsonrpc\":\"2.0\","
		    "\"method\":\"notifications/initialized\"}");
		return;
	case PH_NOTIFIED:
		if (s->status != 202) {
			session_fail(s, "notifications/initialized: status %d "
			    "(want 202)", s->status);
			return;
		}
		s->phase = PH_READY;
		on_ready(s);
		return;
	case PH_CALL:
		if (!s->answered) {
			error_note("session %u: call answered with status %d "
			    "and no result", s->idx, s->status);
			call_answered(s, 0);
		}
		s->phase = PH_READY;
		send_call(s);
		return;
	case PH_GET:
	case PH_STREAM:
		session_fail(s, "GET stream ended (status %d)", s->status);
		return;
	case PH_DELETE:
		if ((s->status >= 200 && s->status < 300) || s->status == 405)
			st.deleted++;
		session_close_conn(s);
		s->phase = PH_CLOSED;
		drain_check();
		return;
	default:
		return;
	}
}

static int
parse_head(struct session *s, char *h, size_t len)
{
	char *line, *next, *colon, *v, *end = h + len;
	int chunked = 0, have_len = 0;
	unsigned long long clen = 0;
	size_t vl;

	if (len < 12 || strncmp(h, "HTTP/1.", 7) != 0)
		return -1;
	s->status = atoi(h + 9);
	if (strncmp(h, "HTTP/1.0", 8) == 0)
		s->conn_close = 1;
	line = memchr(h, '\n', len);
	for (line = line ? line + 1 : end; line < end; line = next) {
		next = memchr(line, '\n', (size_t)(end - line));
		next = next ? next + 1 : end;
		colon = memchr(line, ':', (size_t)(next - line));
		if (colon == NULL)
			continue;
		v = colon + 1;
		while (v < next && (*v == ' ' || *v == '\t'))
			v++;
		vl = (size_t)(next - v);
		while (vl > 0 && isspace((unsigned char)v[vl - 1]))
			vl--;
#define IS(name) ((size_t)(colon - line) == sizeof(name) - 1 && \
	    strncasecmp(line, name, sizeof(name) - 1) == 0)
		if (IS("content-length")) {
			clen = strtoull(v, NULL, 10);
			have_len = 1;
		} else if (IS("transfer-encoding")) {
			if (vl >= 7 && strncasecmp(v + vl - 7, "chunked", 7)
			    == 0)
				chunked = 1;
		} else if (IS("content-type")) {
			if (vl >= 17 && strncasecmp(v, "text/event-stream",
			    17) == 0)
				s->sse = 1;
		} else if (IS("connection")) {
			if (vl == 5 && strncasecmp(v, "close", 5) == 0)
				s->conn_close = 1;
		} else if (IS("mcp-session-id")) {
			if (vl >= sizeof s->head_sid)
				return -1;
			memcpy(s->head_sid, v, vl);
			s->head_sid[vl] = '\0';
		}
#undef IS
	}
	if (s->status < 200)
		return 0;	/* 1xx: another head follows */
	if (chunked)
		s->rs = RS_CHUNK_SIZE;
	else if (have_len) {
		s->left = clen;
		s->rs = RS_LENGTH;
	} else if (s->status == 204 || s->status == 304)
		s->rs = RS_LENGTH, s->left = 0;
	else if (s->sse || s->status == 200)
		s->rs = RS_CLOSE;
	else
		s->rs = RS_LENGTH, s->left = 0;
	return 0;
}

/* The response head is in: the GET's stream is open if it is 200. */
static void
on_head(struct session *s)
{
	if (s->phase != PH_GET)
		return;
	if (s->status != 200 || !s->sse) {
		session_fail(s, "GET: status %d%s", s->status,
		    s->sse ? "" : ", not an event stream");
		return;
	}
	s->phase = PH_STREAM;
	st.open_streams++;
	if (st.open_streams > st.max_streams)
		st.max_streams = st.open_streams;
	on_ready(s);
}

static void
read_cb(struct bufferevent *bev, void *arg)
{
	struct session *s = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	struct evbuffer_ptr p;
	size_t len, n;
	char *h, *e;

	while (s->bev == bev && (len = evbuffer_get_length(in)) > 0) {
		switch (s->rs) {
		case RS_NONE:
			session_fail(s, "unexpected bytes from the server");
			return;
		case RS_HEAD:
			p = evbuffer_search(in, "\r\n\r\n", 4, NULL);
			if (p.pos < 0) {
				if (len > MAX_HEAD)
					session_fail(s, "response head too "
					    "long");
				return;
			}
			n = (size_t)p.pos + 4;
			h = (char *)evbuffer_pullup(in, (ev_ssize_t)n);
			if (parse_head(s, h, n) != 0) {
				session_fail(s, "bad response head");
				return;
			}
			evbuffer_drain(in, n);
			if (s->rs == RS_HEAD)
				break;	/* 1xx */
			on_head(s);
			if (s->bev != NULL && s->rs == RS_LENGTH &&
			    s->left == 0)
				response_done(s);
			break;
		case RS_LENGTH:
			n = len < s->left ? len : (size_t)s->left;
			body_bytes(s, in, n);
			s->left -= n;
			if (s->bev != NULL && s->left == 0)
				response_done(s);
			break;
		case RS_CLOSE:
			body_bytes(s, in, len);
			break;
		case RS_CHUNK_SIZE:
		case RS_TRAILER:
			p = evbuffer_search_eol(in, NULL, NULL,
			    EVBUFFER_EOL_CRLF);
			if (p.pos < 0) {
				if (len > MAX_LINE)
					session_fail(s, "chunk line too long");
				return;
			}
			n = (size_t)p.pos;
			h = evbuffer_readln(in, NULL, EVBUFFER_EOL_CRLF);
			if (h == NULL) {
				session_fail(s, "out of memory");
				return;
			}
			if (s->rs == RS_TRAILER) {
				free(h);
				if (n == 0)
					response_done(s);
				break;
			}
			errno = 0;
			s->left = strtoull(h, &e, 16);
			if (e == h || errno != 0) {
				free(h);
				session_fail(s, "bad chunk size");
				return;
			}
			free(h);
			s->rs = s->left == 0 ? RS_TRAILER : RS_CHUNK_DATA;
			break;
		case RS_CHUNK_DATA:
			n = len < s->left ? len : (size_t)s->left;
			body_bytes(s, in, n);
			s->left -= n;
			if (s->bev != NULL && s->left == 0)
				s->rs = RS_CHUNK_CRLF;
			break;
		case RS_CHUNK_CRLF:
			if (len < 2)
				return;
			h = (char *)evbuffer_pullup(in, 2);
			if (h[0] != '\r' || h[1] != '\n') {
				session_fail(s, "bad chunk end");
				return;
			}
			evbuffer_drain(in, 2);
			s->rs = RS_CHUNK_SIZE;
			break;
		}
	}
}

static void
event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct session *s = arg;
	int fd, one = 1;

	if (what & BEV_EVENT_CONNECTED) {
		fd = bufferevent_getfd(bev);
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		s->connected = 1;
		return;
	}
	if (what & BEV_EVENT_EOF) {
		if (s->rs == RS_CLOSE) {
			s->conn_close = 1;
			response_done(s);
			return;
		}
		if (s->rs == RS_NONE) {
			/* The server closed an idle connection. */
			session_close_conn(s);
			st.reconnects++;
			return;
		}
		session_fail(s, "connection closed by the server");
		return;
	}
	if (what & BEV_EVENT_ERROR) {
		session_fail(s, "connection: %s",
		    evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
		return;
	}
}

static void
connect_session(struct session *s)
{
	s->bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
	if (s->bev == NULL) {
		session_fail(s, "bufferevent_socket_new failed");
		return;
	}
	bufferevent_set_max_single_read(s->bev, READ_MAX);
	bufferevent_setcb(s->bev, read_cb, NULL, event_cb, s);
	bufferevent_enable(s->bev, EV_READ | EV_WRITE);
	if (bufferevent_socket_connect(s->bev, (struct sockaddr *)&opt.addr,
	    (int)opt.addrlen) != 0) {
		session_fail(s, "connect: %s", strerror(errno));
		return;
	}
}

/* ------------------------------------------------------------------ */
/* The session's life. */

static void
session_fail(struct session *s, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (s->phase == PH_DEAD || s->phase == PH_CLOSED)
		return;
	if (st.stopping) {
		session_close_conn(s);
		s->phase = PH_DEAD;
		return;
	}
	if (s->phase == PH_DELETE) {
		/* Ending the session is a courtesy: no error. */
		session_close_conn(s);
		s->phase = PH_CLOSED;
		drain_check();
		return;
	}
	error_note("session %u: %s", s->idx, msg);
	if (s->phase == PH_CALL && !s->answered)
		call_answered(s, 0);
	if (s->phase == PH_STREAM)
		st.open_streams--;
	if (s->phase < PH_READY || s->phase == PH_GET) {
		/* Its place in the setup goes to the next session. */
		st.failed++;
		s->phase = PH_DEAD;
		session_close_conn(s);
		on_ready(s);
		return;
	}
	st.failed++;
	s->phase = PH_DEAD;
	session_close_conn(s);
	if (st.draining)
		drain_check();
	else
		maybe_finish();
}

static void
deadline_cb(evutil_socket_t fd, short what, void *arg)
{
	struct session *s = arg;

	(void)fd;
	(void)what;
	session_fail(s, "no answer in %.1f s", opt.timeout);
}

static void
timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct session *s = arg;

	(void)fd;
	(void)what;
	send_call(s);
}

static int
budget_left(void)
{
	return opt.calls == 0 || st.sent < opt.calls;
}

/* Send the session's next call, now or at its open-loop slot. */
static void
send_call(struct session *s)
{
	char idtxt[32], *body;
	uint64_t t;
	struct timeval tv;
	size_t n;

	if (s->phase != PH_READY || st.stopping)
		return;
	if (st.draining) {
		send_delete(s);
		drain_check();
		return;
	}
	if (!st.calling)
		return;
	t = now_ns();
	if (t >= st.t_end || !budget_left()) {
		maybe_finish();
		return;
	}
	if (opt.rate > 0) {
		if (s->next_due > t + 20000) {
			tv = tv_of_ns(s->next_due - t);
			evtimer_add(s->timer, &tv);
			return;
		}
		s->t_due = s->next_due;
		s->next_due += s->interval;
	} else
		s->t_due = t;
	s->want_id = s->next_id++;
	if (opt.stdio != NULL)
		s->want_id = s->want_id * (int64_t)opt.sessions + s->idx;
	snprintf(idtxt, sizeof idtxt, "%" PRId64, s->want_id);
	n = strlen(call_prefix) + strlen(idtxt) + strlen(call_suffix);
	if ((body = malloc(n + 1)) == NULL) {
		session_fail(s, "out of memory");
		return;
	}
	snprintf(body, n + 1, "%s%s%s", call_prefix, idtxt, call_suffix);
	s->phase = PH_CALL;
	st.sent++;
	if (opt.stdio != NULL)
		direct_write(body);
	else
		post_json(s, body);
	free(body);
	if (opt.timeout > 0) {
		tv = tv_of_ns((uint64_t)(opt.timeout * 1e9));
		evtimer_add(s->deadline, &tv);
	}
}

static void
send_get(struct session *s)
{
	s->phase = PH_GET;
	write_request(s, "GET", NULL, 0, "text/event-stream");
}

static void
session_start(struct session *s)
{
	char body[512];

	st.started++;
	s->phase = PH_INIT;
	s->want_id = s->next_id++;
	snprintf(body, sizeof body,
	    "{\"jsonrpc\":\"2.0\",\"id\":%" PRId64 ",\"method\":\"initialize\","
	    "\"params\":{\"protocolVersion\":\"%s\",\"capabilities\":{},"
	    "\"clientInfo\":{\"name\":\"mcp-supervisor-loadgen\","
	    "\"version\":\"1.0\"}}}", s->want_id, opt.protocol);
	post_json(s, body);
}

static void
stop_all(void)
{
	unsigned i;

	if (st.stopping)
		return;
	st.stopping = 1;
	for (i = 0; i < opt.sessions; i++)
		session_close_conn(&sessions[i]);
	direct_stop();
	event_base_loopexit(base, NULL);
}

static struct event *drain_ev;

/* Stop once every session is ended. */
static void
drain_check(void)
{
	unsigned i;

	if (st.stopping)
		return;
	for (i = 0; i < opt.sessions; i++)
		if (sessions[i].phase == PH_CALL ||
		    sessions[i].phase == PH_DELETE)
			return;
	stop_all();
}

/*
 * The calls are over: let the calls in flight finish (uncounted), then
 * end each session with DELETE, as a client should; give up after
 * DRAIN_SECONDS.
 */
#define DRAIN_SECONDS	5

static void
begin_drain(void)
{
	struct timeval tv = { DRAIN_SECONDS, 0 };
	unsigned i;

	if (st.draining || st.stopping)
		return;
	st.draining = 1;
	st.calling = 0;
	evtimer_add(drain_ev, &tv);
	for (i = 0; i < opt.sessions; i++)
		if (sessions[i].phase == PH_READY) {
			evtimer_del(sessions[i].timer);
			send_delete(&sessions[i]);
		}
	drain_check();
}

static void
send_delete(struct session *s)
{
	if (s->sid[0] == '\0') {
		session_close_conn(s);
		s->phase = PH_CLOSED;
		return;
	}
	s->phase = PH_DELETE;
	write_request(s, "DELETE", NULL, 0,
	    "application/json, text/event-stream");
}

/* Begin the end when the time or the calls are used up. */
static void
maybe_finish(void)
{
	if (st.stopping || opt.mode != MODE_CALLS || !st.calling)
		return;
	if (now_ns() < st.t_end && budget_left() &&
	    st.failed < opt.sessions)
		return;
	begin_drain();
}

static void
end_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	if (opt.mode == MODE_STREAMS)
		stop_all();
	else
		begin_drain();
}

static void
drain_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	stop_all();
}

static struct event *end_ev;

static void
print_streams_ready(void)
{
	json_t *o;
	char *txt;

	o = json_pack("{s:s, s:s, s:I, s:I, s:f, s:I}",
	    "label", opt.label, "event", "streams_open",
	    "sessions", (json_int_t)opt.sessions,
	    "open", (json_int_t)st.open_streams,
	    "setup_s", (double)(now_ns() - st.t_setup) / 1e9,
	    "errors", (json_int_t)st.errors);
	txt = json_dumps(o, JSON_COMPACT);
	printf("%s\n", txt);
	fflush(stdout);
	free(txt);
	json_decref(o);
}

/* A session is through its setup (or failed in it): start another. */
static void
on_ready(struct session *s)
{
	unsigned i;
	struct timeval tv;
	uint64_t t;

	if (s->phase == PH_READY && opt.mode == MODE_STREAMS) {
		send_get(s);
		return;
	}
	st.ready++;
	if (st.started < opt.sessions)
		session_start(&sessions[st.started]);
	if (st.ready < opt.sessions)
		return;
	/* Every session is set up. */
	if (st.failed == opt.sessions) {
		stop_all();
		return;
	}
	if (opt.mode == MODE_STREAMS) {
		print_streams_ready();
		if (opt.hold > 0) {
			tv = tv_of_ns((uint64_t)(opt.hold * 1e9));
			evtimer_add(end_ev, &tv);
		}
		return;
	}
	t = now_ns();
	st.t_start = t;
	st.t_measure = t + (uint64_t)(opt.warmup * 1e9);
	st.t_end = st.t_measure + (uint64_t)(opt.duration * 1e9);
	if (opt.calls > 0 && opt.duration <= 0)
		st.t_end = UINT64_MAX;
	else {
		tv = tv_of_ns(st.t_end - t);
		evtimer_add(end_ev, &tv);
	}
	st.calling = 1;
	for (i = 0; i < opt.sessions; i++) {
		s = &sessions[i];
		if (opt.rate > 0) {
			s->interval = (uint64_t)((double)opt.sessions /
			    opt.rate * 1e9);
			s->next_due = t + (uint64_t)((double)i / opt.rate *
			    1e9);
		}
		send_call(s);
	}
}

/* A line from the server on stdio. */
static void
direct_line(const char *text, size_t len)
{
	json_error_t jerr;
	json_t *msg, *id;
	struct session *s;
	json_int_t n;
	unsigned i;

	while (len > 0 && (text[len - 1] == '\r' || text[len - 1] == ' '))
		len--;
	if (len == 0)
		return;
	if ((msg = json_loadb(text, len, 0, &jerr)) == NULL) {
		error_note("direct: bad JSON from the server: %s", jerr.text);
		return;
	}
	id = json_object_get(msg, "id");
	if (json_object_get(msg, "method") != NULL || !json_is_integer(id)) {
		json_decref(msg);	/* a notification or request */
		return;
	}
	n = json_integer_value(id);
	if (!direct.ready) {
		if (n != 0 || !json_is_object(json_object_get(msg, "result"))) {
			error_note("direct: initialize failed");
			json_decref(msg);
			stop_all();
			return;
		}
		json_decref(msg);
		direct.ready = 1;
		direct_write("{\"jsonrpc\":\"2.0\","
		    "\"method\":\"notifications/initialized\"}");
		st.started = opt.sessions;
		for (i = 0; i < opt.sessions; i++) {
			sessions[i].phase = PH_READY;
			on_ready(&sessions[i]);
		}
		return;
	}
	if (n < 1 || (s = &sessions[n % opt.sessions])->phase != PH_CALL ||
	    n != s->want_id) {
		error_note("direct: answer with an unexpected id %lld",
		    (long long)n);
		json_decref(msg);
		return;
	}
	s->answered = 0;
	i = (unsigned)check_answer(s, msg, len);
	json_decref(msg);
	call_answered(s, (int)i > 0);
	s->phase = PH_READY;
	send_call(s);
}

static void
signal_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	stop_all();
}

/* ------------------------------------------------------------------ */
/* Set-up and report. */

static int
parse_url(const char *url)
{
	const char *p = url, *slash, *colon;
	struct addrinfo hints, *res;
	char port[16];
	size_t hl;
	int e;

	if (strncmp(p, "http://", 7) != 0)
		return -1;
	p += 7;
	slash = strchr(p, '/');
	if (slash == NULL)
		slash = p + strlen(p);
	snprintf(opt.path, sizeof opt.path, "%s", *slash ? slash : "/");
	if ((size_t)(slash - p) >= sizeof opt.hostport)
		return -1;
	memcpy(opt.hostport, p, (size_t)(slash - p));
	opt.hostport[slash - p] = '\0';
	if (opt.hostport[0] == '[') {
		colon = strchr(opt.hostport, ']');
		if (colon == NULL)
			return -1;
		hl = (size_t)(colon - opt.hostport - 1);
		memcpy(opt.host, opt.hostport + 1, hl);
		opt.host[hl] = '\0';
		colon = colon[1] == ':' ? colon + 1 : NULL;
	} else {
		colon = strrchr(opt.hostport, ':');
		hl = colon ? (size_t)(colon - opt.hostport) :
		    strlen(opt.hostport);
		memcpy(opt.host, opt.hostport, hl);
		opt.host[hl] = '\0';
	}
	snprintf(port, sizeof port, "%s", colon ? colon + 1 : "80");
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if ((e = getaddrinfo(opt.host, port, &hints, &res)) != 0) {
		fprintf(stderr, "loadgen: %s: %s\n", opt.host,
		    gai_strerror(e));
		return -1;
	}
	memcpy(&opt.addr, res->ai_addr, res->ai_addrlen);
	opt.addrlen = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

static void
report(void)
{
	double secs, cps;
	json_t *o;
	char *txt;
	uint64_t ok;

	if (opt.mode == MODE_STREAMS) {
		o = json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:s?}",
		    "label", opt.label, "mode", "streams",
		    "sessions", (json_int_t)opt.sessions,
		    "max_open", (json_int_t)st.max_streams,
		    "open_at_end", (json_int_t)st.open_streams,
		    "events", (json_int_t)st.events,
		    "errors", (json_int_t)st.errors,
		    "first_error", st.first_error[0] ? st.first_error : NULL);
		txt = json_dumps(o, JSON_COMPACT);
		printf("%s\n", txt);
		free(txt);
		json_decref(o);
		if (!opt.quiet)
			fprintf(stderr, "%s%sstreams: %u sessions, %u open at "
			    "most, %" PRIu64 " errors\n", opt.label,
			    opt.label[0] ? " " : "", opt.sessions,
			    st.max_streams, st.errors);
		return;
	}
	if (opt.calls > 0 && opt.duration <= 0)
		secs = st.t_start ? (double)(now_ns() - st.t_measure) / 1e9 :
		    0;
	else
		secs = opt.duration;
	ok = st.counted;
	cps = secs > 0 ? (double)ok / secs : 0;
	o = json_pack("{s:s, s:s, s:s, s:I, s:f, s:f, s:f, s:I, s:I, s:I,"
	    " s:I, s:f, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:I, s:I, s:I,"
	    " s:I, s:s?}",
	    "label", opt.label, "mode", opt.rate > 0 ? "open" : "closed",
	    "tool", opt.tool,
	    "concurrency", (json_int_t)opt.sessions,
	    "rate", opt.rate, "warmup_s", opt.warmup, "duration_s", secs,
	    "sent", (json_int_t)st.sent,
	    "answered", (json_int_t)st.answered,
	    "calls", (json_int_t)ok,
	    "errors", (json_int_t)st.errors,
	    "calls_per_s", cps,
	    "p50_us", (json_int_t)hist_pct(&hist, 50),
	    "p90_us", (json_int_t)hist_pct(&hist, 90),
	    "p99_us", (json_int_t)hist_pct(&hist, 99),
	    "p999_us", (json_int_t)hist_pct(&hist, 99.9),
	    "max_us", (json_int_t)hist.max,
	    "min_us", (json_int_t)hist.min,
	    "mean_us", hist.n ? (double)(hist.sum / hist.n) : 0.0,
	    "answer_bytes", (json_int_t)st.answer_bytes,
	    "last_answer_unix_us", (json_int_t)st.last_answer_unix_us,
	    "reconnects", (json_int_t)st.reconnects,
	    "deleted", (json_int_t)st.deleted,
	    "first_error", st.first_error[0] ? st.first_error : NULL);
	txt = json_dumps(o, JSON_COMPACT);
	printf("%s\n", txt);
	free(txt);
	json_decref(o);
	if (!opt.quiet)
		fprintf(stderr, "%s%sc=%u%s: %.0f calls/s, p50 %" PRIu64
		    " us, p90 %" PRIu64 " us, p99 %" PRIu64 " us, max %"
		    PRIu64 " us, %" PRIu64 " calls, %" PRIu64 " errors\n",
		    opt.label, opt.label[0] ? " " : "", opt.sessions,
		    opt.rate > 0 ? " (open loop)" : "", cps,
		    hist_pct(&hist, 50), hist_pct(&hist, 90),
		    hist_pct(&hist, 99), hist.max, ok, st.errors);
}

static void
usage(void)
{
	fprintf(stderr,
"usage: loadgen [options] URL\n"
"       loadgen [options] --stdio COMMAND   (going direct, no HTTP)\n"
"  -c, --concurrency N  sessions, one connection each (1)\n"
"  -d, --duration S     seconds measured (10); 0 with --calls: until done\n"
"  -w, --warmup S       seconds before measuring (2)\n"
"  -r, --rate R         open loop: R calls/s in total (0: closed loop)\n"
"  -n, --calls N        stop after N calls\n"
"  -t, --tool NAME      tool to call (demo__echo)\n"
"  -a, --args JSON      its arguments ({\"text\":\"hello\"})\n"
"  -T, --timeout S      seconds a call may take (30)\n"
"  -l, --label TEXT     name of the system, copied to the output\n"
"  -P, --protocol V     protocol version to ask for (2025-11-25)\n"
"  -s, --streams        hold a GET event stream open per session\n"
"  -H, --hold S         with --streams, stop after S seconds\n"
"                       (default: at SIGTERM or SIGINT)\n"
"  -p, --parallel N     sessions set up at once (64)\n"
"  -E, --expect-error   the calls must be answered with an error\n"
"  -q, --quiet          no human line\n"
"  -x, --stdio COMMAND  run COMMAND and call it over stdio, one pipe for\n"
"                       all sessions (words split on spaces)\n");
	exit(2);
}

static double
num_arg(const char *s, const char *name)
{
	char *e;
	double v;

	errno = 0;
	v = strtod(s, &e);
	if (e == s || *e != '\0' || errno != 0 || v < 0) {
		fprintf(stderr, "loadgen: bad %s: %s\n", name, s);
		exit(2);
	}
	return v;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "concurrency", required_argument, NULL, 'c' },
		{ "duration", required_argument, NULL, 'd' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "rate", required_argument, NULL, 'r' },
		{ "calls", required_argument, NULL, 'n' },
		{ "tool", required_argument, NULL, 't' },
		{ "args", required_argument, NULL, 'a' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "label", required_argument, NULL, 'l' },
		{ "protocol", required_argument, NULL, 'P' },
		{ "streams", no_argument, NULL, 's' },
		{ "hold", required_argument, NULL, 'H' },
		{ "parallel", required_argument, NULL, 'p' },
		{ "expect-error", no_argument, NULL, 'E' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "stdio", required_argument, NULL, 'x' },
		{ NULL, 0, NULL, 0 }
	};
	struct event *sigint, *sigterm;
	struct event_config *cfg;
	struct rlimit rl;
	json_error_t jerr;
	json_t *args;
	char *argtxt, *name;
	unsigned i, first;
	int c;

	while ((c = getopt_long(argc, argv, "c:d:w:r:n:t:a:T:l:P:sH:p:Eqx:",
	    longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			opt.sessions = (unsigned)num_arg(optarg, "concurrency");
			break;
		case 'd':
			opt.duration = num_arg(optarg, "duration");
			break;
		case 'w':
			opt.warmup = num_arg(optarg, "warmup");
			break;
		case 'r':
			opt.rate = num_arg(optarg, "rate");
			break;
		case 'n':
			opt.calls = (uint64_t)num_arg(optarg, "calls");
			break;
		case 't':
			opt.tool = optarg;
			break;
		case 'a':
			opt.args = optarg;
			break;
		case 'T':
			opt.timeout = num_arg(optarg, "timeout");
			break;
		case 'l':
			opt.label = optarg;
			break;
		case 'P':
			opt.protocol = optarg;
			break;
		case 's':
			opt.mode = MODE_STREAMS;
			break;
		case 'H':
			opt.hold = num_arg(optarg, "hold");
			break;
		case 'p':
			opt.parallel = (unsigned)num_arg(optarg, "parallel");
			break;
		case 'E':
			opt.expect_error = 1;
			break;
		case 'q':
			opt.quiet = 1;
			break;
		case 'x':
			opt.stdio = optarg;
			break;
		default:
			usage();
		}
	}
	if (optind != argc - (opt.stdio ? 0 : 1) || opt.sessions == 0 ||
	    opt.parallel == 0 || (opt.stdio && opt.mode == MODE_STREAMS))
		usage();
	opt.url = opt.stdio ? opt.stdio : argv[optind];
	if (opt.stdio == NULL && parse_url(opt.url) != 0) {
		fprintf(stderr, "loadgen: bad URL (want http://host:port/path):"
		    " %s\n", opt.url);
		return 2;
	}
	if (opt.duration <= 0 && opt.calls == 0 && opt.mode == MODE_CALLS) {
		fprintf(stderr, "loadgen: a duration or --calls is needed\n");
		return 2;
	}
	if (opt.calls > 0 && opt.duration <= 0)
		opt.warmup = 0;

	/* The call's body, around its id; the arguments must be JSON. */
	args = json_loads(opt.args, JSON_DECODE_ANY, &jerr);
	if (args == NULL || !json_is_object(args)) {
		fprintf(stderr, "loadgen: --args must be a JSON object\n");
		return 2;
	}
	argtxt = json_dumps(args, JSON_COMPACT | JSON_ENCODE_ANY);
	json_decref(args);
	args = json_string(opt.tool);
	name = json_dumps(args, JSON_ENCODE_ANY);
	json_decref(args);
	if (argtxt == NULL || name == NULL)
		return 1;
	call_prefix = strdup("{\"jsonrpc\":\"2.0\",\"id\":");
	if (asprintf(&call_suffix, ",\"method\":\"tools/call\",\"params\":"
	    "{\"name\":%s,\"arguments\":%s}}", name, argtxt) < 0 ||
	    call_prefix == NULL)
		return 1;
	free(argtxt);
	free(name);

	/* One descriptor per session, and then some. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
	    && rl.rlim_cur < (rlim_t)opt.sessions + 16) {
		fprintf(stderr, "loadgen: %u sessions need more descriptors "
		    "than the limit of %llu\n", opt.sessions,
		    (unsigned long long)rl.rlim_cur);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);

	/* Timers to the microsecond (timerfd), not epoll's milliseconds. */
	if ((cfg = event_config_new()) == NULL)
		return 1;
	event_config_set_flag(cfg, EVENT_BASE_FLAG_PRECISE_TIMER);
	base = event_base_new_with_config(cfg);
	event_config_free(cfg);
	if (base == NULL)
		return 1;
	sessions = calloc(opt.sessions, sizeof *sessions);
	if (sessions == NULL)
		return 1;
	for (i = 0; i < opt.sessions; i++) {
		sessions[i].idx = i;
		sessions[i].next_id = 1;
		sessions[i].body = evbuffer_new();
		sessions[i].timer = evtimer_new(base, timer_cb, &sessions[i]);
		sessions[i].deadline = evtimer_new(base, deadline_cb,
		    &sessions[i]);
		if (sessions[i].body == NULL || sessions[i].timer == NULL ||
		    sessions[i].deadline == NULL)
			return 1;
	}
	end_ev = evtimer_new(base, end_cb, NULL);
	drain_ev = evtimer_new(base, drain_cb, NULL);
	sigint = evsignal_new(base, SIGINT, signal_cb, NULL);
	sigterm = evsignal_new(base, SIGTERM, signal_cb, NULL);
	if (end_ev == NULL || drain_ev == NULL || sigint == NULL || sigterm == NULL)
		return 1;
	evsignal_add(sigint, NULL);
	evsignal_add(sigterm, NULL);

	st.t_setup = now_ns();
	if (opt.stdio != NULL) {
		if (direct_start() != 0) {
			fprintf(stderr, "loadgen: cannot start %s\n", opt.stdio);
			return 1;
		}
		direct_write("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":"
		    "\"initialize\",\"params\":{\"protocolVersion\":"
		    "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":"
		    "{\"name\":\"mcp-supervisor-loadgen\",\"version\":"
		    "\"1.0\"}}}");
	} else {
		first = opt.parallel < opt.sessions ? opt.parallel :
		    opt.sessions;
		for (i = 0; i < first; i++)
			session_start(&sessions[i]);
	}
	event_base_dispatch(base);

	report();

	for (i = 0; i < opt.sessions; i++) {
		session_close_conn(&sessions[i]);
		evbuffer_free(sessions[i].body);
		event_free(sessions[i].timer);
		event_free(sessions[i].deadline);
		buf_free(&sessions[i].line);
		buf_free(&sessions[i].data);
	}
	free(sessions);
	event_free(end_ev);
	event_free(drain_ev);
	event_free(sigint);
	event_free(sigterm);
	event_base_free(base);
	free(call_prefix);
	free(call_suffix);
	direct_stop();
	if (opt.mode == MODE_STREAMS)
		return st.errors == 0 && st.max_streams == opt.sessions ? 0 : 1;
	if (opt.expect_error)
		return st.errors == 0 && st.answered > 0 ? 0 : 1;
	return st.errors == 0 && st.counted > 0 ? 0 : 1;
}
