/* SPDX-License-Identifier: ISC */
/*
 * loadgen.h -- what the load generator's files share: the options, the
 * counters, the histogram, a session and the transport it speaks.
 *
 *   loadgen.c         options, scheduling of the calls, answer checking,
 *                     statistics and the report
 *   loadgen_http.c    a session over Streamable HTTP (with its SSE parser)
 *   loadgen_ws.c      a session over WebSocket (subprotocol mcp)
 *   loadgen_stdio.c   going direct: the server as a child on stdio
 *   loadgen_hist.c    the latency histogram
 *   loadgen_scale.c   the scale mode: many sessions, fan-outs, a probe
 */
#ifndef LOADGEN_H
#define LOADGEN_H

#include <sys/types.h>
#include <sys/socket.h>

#include <stdint.h>

#include <event2/bufferevent.h>
#include <event2/event.h>
#include <jansson.h>

#define MAX_HEAD	(64 * 1024)	/* response head */
#define MAX_LINE	(1024 * 1024)	/* chunk size and trailer lines */
#define MAX_EVENT	(256L * 1024 * 1024) /* one SSE event's data, one
					   WebSocket message */
#define READ_MAX	(256 * 1024)	/* one read(2) */

#define ATTR_PRINTF(f, a)	__attribute__((format(printf, f, a)))

/* ------------------------------------------------------------------ */
/* Options and global state (loadgen.c). */

enum mode { MODE_CALLS, MODE_STREAMS, MODE_SCALE };

#define RSS_MAX_PIDS	8	/* --rss-pid */
#define REC_FAILED	(1ull << 63)	/* --record: the call failed */

struct options {
	const char	*url;
	char		 host[256];
	char		 hostport[300];
	char		 path[1024];
	struct sockaddr_storage addr;
	socklen_t	 addrlen;
	int		 ws;		/* the URL is ws:// */
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
	int		 modern;	/* 2026-07-28: no session, every
					   request whole (HTTP only) */
	/* Scale mode (loadgen_scale.c). */
	unsigned	 scale;		/* sessions held */
	unsigned	 scale_streams;	/* of which with a GET stream */
	unsigned	 probes;	/* the probe's sessions */
	unsigned	 nsources;	/* 127.0.0.1 .. 127.0.0.N, 0: any */
	unsigned	 notify;	/* notifications */
	double		 idle;		/* seconds before and after them */
	double		 gap;		/* ms between them */
	const char	*trigger;	/* the tool that makes one */
	int		 readers_nice;	/* niceness of the streams' reader
					   once the probe runs */
	unsigned	 readers_poll;	/* µs between the reader's polls,
					   0: it sleeps on its events */
	char		*bearer;	/* every HTTP request's bearer token
					   (--bearer-file), or NULL */
	unsigned	 triggers;	/* sessions that may call it: one is
					   used per instance (a fleet) */
	unsigned	 nrss;
	int		 rss_pid[RSS_MAX_PIDS];
	const char	*rss_name[RSS_MAX_PIDS];
	const char	*record;	/* write each answered call here */
	int		 limited;	/* a rate limit's refusal is counted,
					   not an error */
	const char	*self;		/* argv[0], for the probe's process */
};

struct stats {
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
	uint64_t	 limited;	/* refused by a rate limit (--limited),
					   in the measurement */
	uint64_t	 bytes_in;
	uint64_t	 answer_bytes;	/* the last answer's JSON text */
	uint64_t	 last_answer_unix_us;
	uint64_t	 events;	/* SSE events on GET streams */
	uint64_t	 reconnects;
	char		 first_error[512];
	int		 calling;	/* calls may be sent */
	int		 draining;	/* ending the sessions */
	uint64_t	 deleted;	/* sessions ended as a client should:
					   DELETE, or the WebSocket close */
	int		 stopping;
};

extern struct options	 opt;
extern struct stats	 st;
extern struct event_base *base;

uint64_t	now_ns(void);
struct timeval	tv_of_ns(uint64_t);
void		error_note(const char *, ...) ATTR_PRINTF(1, 2);

/* ------------------------------------------------------------------ */
/*
 * Histogram, HDR style: values in microseconds; below
 * 2^(HIST_SUB_BITS+1) every value has its own bucket, above that each power
 * of two is split in 2^HIST_SUB_BITS linear buckets, so any value is known
 * to within 1/256.
 */

#define HIST_SUB_BITS	8
#define HIST_SUB	(1u << HIST_SUB_BITS)	/* 256 */
#define HIST_LINEAR	(2u * HIST_SUB)	/* exact below 512 */
#define HIST_NBUCKETS	(HIST_LINEAR + 48u * HIST_SUB)

struct hist {
	uint64_t	 count[HIST_NBUCKETS];
	uint64_t	 n;
	uint64_t	 min, max;
	long double	 sum;
};

void		hist_add(struct hist *, uint64_t);
uint64_t	hist_pct(const struct hist *, double);	/* p in percent */

/* ------------------------------------------------------------------ */
/* A growable byte buffer; b->p is NUL-terminated when not NULL. */

struct buf {
	char		*p;
	size_t		 len, cap;
};

int	buf_add(struct buf *, const char *, size_t);
void	buf_free(struct buf *);

/* ------------------------------------------------------------------ */
/* Sessions. */

enum phase {
	PH_IDLE = 0,
	PH_UPGRADE,		/* WebSocket: the upgrade request sent */
	PH_INIT,		/* initialize sent */
	PH_NOTIFIED,		/* notifications/initialized sent */
	PH_READY,		/* handshake done, nothing in flight */
	PH_CALL,		/* a tools/call in flight */
	PH_GET,			/* the GET sent */
	PH_STREAM,		/* its event stream open */
	PH_DELETE,		/* ending it: the DELETE, or the WebSocket
				   close frame, sent */
	PH_CLOSED,		/* ended */
	PH_DEAD
};

struct http_state;
struct ws_state;

struct session {
	unsigned	 idx;
	struct bufferevent *bev;	/* the connection; NULL when none */
	int		 connected;
	enum phase	 phase;
	char		 proto[32];	/* negotiated protocol version */
	int64_t		 next_id;
	int64_t		 want_id;
	uint64_t	 t_due;		/* the call's start (open loop: due) */
	uint64_t	 next_due;	/* open loop: the next call's slot */
	uint64_t	 interval;	/* open loop: ns between calls */
	struct event	*timer;		/* open-loop slot */
	struct event	*deadline;	/* call timeout */
	int		 answered;	/* the request got its answer */
	int		 answer_ok;	/* and it was as expected */
	unsigned	 nlc;		/* scale: list_changed events seen */

	/* Owned by the transport (its init and free). */
	struct http_state *http;
	struct ws_state	*ws;
};

/*
 * What a way of reaching the server does for a session.  init and free
 * bracket the session's life; start connects and sends initialize; send
 * writes one JSON-RPC message (the caller has set the phase); end ends the
 * session as a client should (DELETE, a close frame) or closes it at once
 * if there is nothing to end; close drops the connection without a word.
 */
struct transport {
	int	(*init)(struct session *);
	void	(*free)(struct session *);
	void	(*start)(struct session *);
	void	(*send)(struct session *, const char *, size_t);
	void	(*end)(struct session *);
	void	(*close)(struct session *);
};

extern const struct transport	 http_transport;	/* loadgen_http.c */
extern const struct transport	 ws_transport;		/* loadgen_ws.c */
extern const struct transport	 stdio_transport;	/* loadgen_stdio.c */

extern struct session	*sessions;

/* loadgen.c: the session's life, shared by the transports. */
void	session_fail(struct session *, const char *, ...) ATTR_PRINTF(2, 3);
void	send_call(struct session *);
void	on_ready(struct session *);
void	drain_check(void);
void	stop_all(void);
void	on_message(struct session *, const char *, size_t);
int	check_answer(struct session *, json_t *, size_t);
void	call_answered(struct session *, int);
void	initialize_body(struct session *, char *, size_t);
void	session_connected(struct session *);

void	session_start(struct session *);
extern const struct transport *tr;	/* how every session is reached */

/* loadgen_http.c */
void	http_send_get(struct session *);
/* The session's Mcp-Session-Id, "" before it has one. */
const char *http_session_id(const struct session *);

/* loadgen_scale.c */
void	scale_start(void);
void	scale_loop(struct event_base *);
void	scale_on_ready(struct session *);
int	scale_may_call(const struct session *);
void	scale_stream_event(struct session *, const char *, size_t);
void	scale_heartbeat(struct session *);
void	scale_report(void);

/* loadgen_stdio.c */
int	direct_start(void);
void	direct_stop(void);

#endif /* LOADGEN_H */
