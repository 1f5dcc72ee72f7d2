/* SPDX-License-Identifier: ISC */
/*
 * What the HTTP server's files share: its limits, a connection's state,
 * and the connection list.  http.c holds the connections, http_request.c
 * reads requests, http_response.c writes responses, http_listen.c accepts
 * connections; private to supervisor/http*.c.
 */
#ifndef MCPS_HTTP_PRIV_H
#define MCPS_HTTP_PRIV_H

#include <sys/queue.h>
#include <stdint.h>

#include <event2/event.h>

#include "http_parse.h"
#include "proxy_parse.h"
#include "supervisor.h"

#define HTTP_MAX_HEAD		16384
#define HTTP_HEAD_TIMEOUT	30	/* seconds to send a whole head */
#define HTTP_IDLE_TIMEOUT	120	/* seconds idle between requests */
#define HTTP_SHED_IDLE_MS	1000	/* at the connection limit, one idle
					   this long between requests is
					   closed for a new one */
#define HTTP_BODY_TIMEOUT	30	/* seconds for a body, plus: */
#define HTTP_BODY_RATE		65536	/* one second per so many bytes */
#define HTTP_WRITE_TIMEOUT	60	/* seconds without write progress */
#define HTTP_MAX_UNREAD		65536	/* input held while busy */
#define HTTP_LINGER_MS		2000	/* a closing connection's rest of
					   its request is read this long */
#define HTTP_LINGER_MAX		(16 * 1024 * 1024)	/* and this much */
#define HTTP_FD_RESERVE		64	/* descriptors kept for the rest */
#define HTTP_MAX_CONNS		1000000	/* even with no descriptor limit */
#define HTTP_PAUSE_MS		1000	/* accepting paused when out of fds */
#define HTTP_BACKLOG		65535	/* asked of listen(2); the kernel caps
					   it at net.core.somaxconn */
#define HTTP_HEARTBEAT_TICKS	16	/* heartbeat timer ticks per interval */
#define HTTP_HEARTBEAT_PHASES	4	/* a stream is looked at every so many
					   ticks, in its own phase */
#define HTTP_HEARTBEAT_DUE	14	/* ticks of silence that make a
					   heartbeat due */
#define HTTP_HEARTBEAT_WORK	256	/* per loop turn: a stream looked at
					   is 1, a heartbeat written 32 */
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
	HC_LINGER,		/* flushed, writing shut: the rest of the
				   request read and dropped, then closed */
	HC_UPGRADED		/* another protocol (WebSocket) owns it */
};

/* One client connection; owned by the connection list. */
struct http_conn {
	/* What a write to a stream reads, first: 56 bytes, a cache line
	 * or two. */
	struct iochan		*ch;
	enum http_state		 state;
	struct stream		*stream;	/* borrowed */
	uint64_t		 out_total;	/* bytes ever queued to its
						   output */
	unsigned int		 wrote_tick;	/* heartbeat tick of the last
						   event-stream write */
	size_t			 slow_pos;	/* in the heap of connections
						   HTTP_SLOW_MIN behind, or 0 */
	int			 doomed;	/* to close from the loop */
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
	int			 check_keep;	/* keepalive, while a check
						   decides later */
	struct stream_passing	 passing;	/* borrowed: finished POST
						   streams its output still
						   holds the end of */
	/*
	 * Deadlines, not inactivity timers: a head must be complete within
	 * HTTP_HEAD_TIMEOUT of its first byte (of the accept, for the first
	 * request), a body within HTTP_BODY_TIMEOUT plus a second per
	 * HTTP_BODY_RATE bytes, so a peer trickling bytes cannot hold a
	 * connection.  Keep-alive idleness is HTTP_IDLE_TIMEOUT.  While a
	 * response streams, or after an upgrade, it is the expiry of the
	 * token that opened it (http_conn_expire), if any.
	 */
	struct event		*deadline;
	int64_t			 expires;	/* the exp of the token that
						   opened its stream or
						   upgrade (Unix seconds), or
						   0 */
	struct event		*next_ev;	/* takes pipelined input; or NULL */
	int			 head_started;	/* bytes of a head arrived */
	unsigned int		 head_scanned;	/* of them, looked through for
						   its end (so far none) */
	int64_t			 body_start;	/* monotonic ms */
	uint64_t		 body_bytes;	/* received so far */
	unsigned int		 on_beat;	/* its heartbeat phase + 1, or 0
						   if on no heartbeat list */
	TAILQ_ENTRY(http_conn)	 beat_entry;	/* the list of its phase */
	int			 linger;	/* closing after a response: read
					   what the client still sends */
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
	int64_t			 idle_since;	/* ms: kept alive between
						   requests since; 0: not */
	TAILQ_ENTRY(http_conn)	 idle_entry;	/* http_idle, if idle */
};

/* Oldest first: the head is the first to shed when out of descriptors. */
TAILQ_HEAD(http_conn_list, http_conn);

/* http.c */
extern struct http_conn_list	http_conns;	/* every connection */
/* Free a connection at once (its upgraded owner and stream let go). */
void		http_conn_free(struct http_conn *);
/* The response is complete: next request, or close. */
void		http_done(struct http_conn *);

/* http_request.c */
/* Arm the connection's deadline in milliseconds from now, or clear it (0). */
void		http_deadline(struct http_conn *, int64_t ms);
/* A deadline passed: close an idle connection, answer 408, or end what
 * an expired credential opened. */
void		http_deadline_cb(evutil_socket_t, short, void *);
/* Process buffered input as far as it goes. */
void		http_next(struct http_conn *);

/* http_response.c */
/* Start, change or stop the heartbeat timer (sse_heartbeat). */
void		http_heartbeat_configure(void);
/* Stop the heartbeat timer and free it (the listeners are closing). */
void		http_heartbeat_free(void);
/* A connection no longer streams (or goes): no more heartbeats. */
void		http_heartbeat_forget(struct http_conn *);

/* http_listen.c */
extern unsigned int		http_max_conns;	/* the connection limit */

#endif
