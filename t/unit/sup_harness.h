/* SPDX-License-Identifier: ISC */
/*
 * The supervisor in-process, for the unit suites (t/unit/check_*.c of
 * supervisor/) and the fuzz target of the HTTP front (t/fuzz/).  Nothing
 * is forked and no port is opened: the gateway's state is started from a
 * configuration's text as main() starts it; its workers are stand-ins
 * played here, at the other end of real channels (spawn_hook); its
 * clients are socketpairs served with http_adopt(), as if from
 * 127.0.0.1.  The loop runs only when asked, until nothing more happens;
 * timers fire only when asked (sup_advance), so that no test depends on
 * the speed of the machine.
 *
 * One gateway per process: Check runs each test in a process of its own
 * (CK_FORK, the default), a fixture starts it and sup_stop() ends it.
 * Everything the harness hands out is its own and freed by sup_stop().
 * A harness failure (a malformed frame or response from the gateway, a
 * configuration that does not parse, a loop that never settles) is
 * reported on stderr and aborts.
 */
#ifndef SUP_HARNESS_H
#define SUP_HARNESS_H

#include <sys/queue.h>

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "http_parse.h"
#include "sse.h"

struct conf;
struct evbuffer;

/* Report a harness failure and abort. */
void	sup_die(const char *, ...)
	    __attribute__((format(printf, 1, 2), noreturn));

/*
 * The gateway.
 */
/* Start from a configuration's text (a parsed one is taken). */
void	sup_start(const char *conf_text);
void	sup_start_conf(struct conf *);
/*
 * End every client connection, then every session, then every worker,
 * and check that nothing is left: no connection, session, parked call,
 * pending request, request to a client or subscription.
 */
void	sup_stop(void);
/* Listen on metrics_listen (on 127.0.0.1): the address bound. */
const char	*sup_listen_metrics(void);
/* Reload with another configuration's text: the reply (new reference);
 * sup_reloadq: the loop not run after. */
json_t	*sup_reload(const char *conf_text);
json_t	*sup_reloadq(const char *conf_text);
/* Run the loop until nothing more happens (dies if it never settles). */
void	sup_run(void);
/* One turn of the loop, as the daemon's (a timer due now fires once, not
 * again if it adds itself again), then the workers' and clients' I/O. */
void	sup_turn(void);
/* The same within turns passes; -1 if it did not settle. */
int	sup_settle(int turns);
/* Called after each pass of the loop (the fuzz target's workers); its
 * result says whether it did anything. */
extern int	(*sup_turn_hook)(void);
/* Fire every timer due within seconds (and half a second) from now, then
 * run: a test's timers are seconds apart. */
void	sup_advance(unsigned int seconds);
/* The "random" bytes of session ids start again (fill_random). */
void	sup_reset_random(void);
/* Let the process have at least n descriptors (dies if the hard limit
 * is lower). */
void	sup_nofile(unsigned long n);
/* A new directory /tmp/check-NAME-XXXXXX into dir (dies if it cannot be
 * made); removed with everything in it. */
void	sup_tmpdir(char *dir, size_t len, const char *name);
void	sup_rmtree(const char *dir);

/*
 * Workers: a stand-in per worker the gateway starts, for an upstream or
 * an LLM provider.  Given its CONFIG, one says HELLO, STATUS starting,
 * CATALOG and STATUS ready (a provider HELLO and STATUS ready), unless
 * the upstream is manual; it answers SESSION_CATALOG with the session
 * catalog if one is set, and exits when told SHUTDOWN.  Every frame it
 * gets is kept for the test to take.
 */
struct sup_frame {
	uint16_t		 type;
	uint16_t		 flags;
	uint32_t		 session;
	uint32_t		 tag;
	char			*text;		/* payload, NUL added */
	size_t			 len;
	TAILQ_ENTRY(sup_frame)	 entry;
};
TAILQ_HEAD(sup_frames, sup_frame);

struct sup_worker {
	char			*name;
	int			 provider;	/* an LLM provider's */
	int			 fd;		/* -1: it exited */
	pid_t			 pid;		/* no process's */
	int			 ready;		/* sent STATUS ready */
	struct evbuffer		*in;
	struct evbuffer		*out;
	struct sup_frames	 frames;	/* not taken yet, in order */
	struct sup_frames	 taken;		/* kept until the end */
	TAILQ_ENTRY(sup_worker)	 entry;
};

/*
 * What an upstream's worker lists when it starts (a catalog object:
 * tools, resources, resourceTemplates, prompts) and says in its STATUS
 * ready (members merged over the defaults: capabilities, era, ...); NULL
 * for the defaults.  Given once its worker is ready, a catalog is sent at
 * once.
 */
void	sup_catalog(const char *upstream, const char *json);
void	sup_status(const char *upstream, const char *json);
/* The catalog a per-session instance lists for SESSION_CATALOG; NULL: the
 * test answers. */
void	sup_session_catalog(const char *upstream, const char *json);
/* The test plays the worker's start itself. */
void	sup_manual(const char *upstream);
/* The upstream's worker exits and, its restart delay over, another
 * starts that the test plays (sup_manual): that one. */
struct sup_worker *sup_restart_manual(const char *upstream);
/* A worker the test plays says hello, lists a catalog (JSON text) and is
 * ready with a STATUS (JSON text). */
void	sup_ready(struct sup_worker *, const char *catalog,
	    const char *status);

/* The running stand-in of an upstream or a provider, or NULL. */
struct sup_worker *sup_worker(const char *upstream);
struct sup_worker *sup_provider(const char *llm);
/* The oldest frame of a type (0: any) not yet taken, or NULL. */
struct sup_frame *sup_take(struct sup_worker *, uint16_t type);
/* Frames of a type (0: any) received, taken or not. */
unsigned int	 sup_count(struct sup_worker *, uint16_t type);
/* Forget every frame received. */
void	sup_forget(struct sup_worker *);
/* A frame's payload as JSON (a new reference; dies if it is not). */
json_t	*sup_frame_json(const struct sup_frame *);
/* Send the gateway a frame (sup_sendq: queued, the loop not run). */
void	sup_send(struct sup_worker *, uint16_t type, uint16_t flags,
	    uint32_t session, uint32_t tag, const char *fmt, ...)
	    __attribute__((format(printf, 6, 7)));
void	sup_sendq(struct sup_worker *, uint16_t type, uint16_t flags,
	    uint32_t session, uint32_t tag, const char *fmt, ...)
	    __attribute__((format(printf, 6, 7)));
/* Answer a REQUEST with a result, or with an error (flagged). */
void	sup_reply(struct sup_worker *, const struct sup_frame *,
	    const char *result);
void	sup_reply_error(struct sup_worker *, const struct sup_frame *,
	    int code, const char *message);
/* The worker exits: its channel closes. */
void	sup_kill(struct sup_worker *);
/* The worker's process ends with a wait status: its channel closes and
 * the gateway reaps it (then restarts it, as its policy says). */
void	sup_exit(struct sup_worker *, int status);
/* Workers started (spawn_hook called); while sup_spawn_fails > 0, each
 * start fails as fork would without processes, and counts it down. */
extern unsigned int	sup_spawns;
extern unsigned int	sup_spawn_fails;

/*
 * Clients: connections from 127.0.0.1 and what comes back on them, each
 * response parsed (head, body, and the events of an event stream).
 */
struct sup_event {
	char		*id;
	char		*event;
	char		*data;
	json_t		*json;		/* data parsed, or NULL */
};

struct sup_conn;

struct sup_resp {
	struct sup_conn		*conn;
	int			 head_only;	/* answers a HEAD */
	int			 status;	/* 0: no head yet */
	int			 done;		/* body complete */
	char			*head;
	struct http_head	 h;		/* spans into head */
	enum http_body		 framing;
	uint64_t		 remaining;
	struct http_chunked	 chunked;
	struct evbuffer		*body;		/* decoded */
	char			*text;		/* body as a C string */
	int			 sse;
	struct sse_parser	 parser;
	struct sup_event	*events;
	size_t			 nevents;
	json_t			*json;		/* body parsed, or NULL */
	TAILQ_ENTRY(sup_resp)	 entry;
};
TAILQ_HEAD(sup_resps, sup_resp);

struct sup_conn {
	int			 fd;		/* -1: we hung up */
	int			 eof;		/* the gateway closed it */
	int			 raw;		/* its owner reads in */
	struct evbuffer		*in;
	struct evbuffer		*out;
	struct sup_resps	 resps;
	TAILQ_ENTRY(sup_conn)	 entry;
};

/* A new connection. */
struct sup_conn	*sup_connect(void);
/* A TCP connection to an address the gateway listens on ("ip:port"). */
struct sup_conn	*sup_connect_tcp(const char *);
/* A WebSocket opened with a bearer token: its raw connection, past the
 * 101 (dies if the gateway does not upgrade it). */
struct sup_conn	*sup_ws_open(const char *bearer);
/* Write bytes (sup_writeq: queued, the loop not run). */
void	sup_write(struct sup_conn *, const void *, size_t);
void	sup_writeq(struct sup_conn *, const void *, size_t);
/* The client hangs up. */
void	sup_hangup(struct sup_conn *);
/* Hang up and forget a connection and its responses (the loop not run). */
void	sup_release(struct sup_conn *);
/*
 * Send a request (headers are "Name: value\r\n" lines; Host is
 * 127.0.0.1:8931 unless they give one; a body gets its Content-Length) and
 * run: its response, whose head may not be in yet (status 0).
 */
struct sup_resp	*sup_request(struct sup_conn *, const char *method,
	    const char *path, const char *headers, const char *body);
/* The same, queued: the loop not run. */
struct sup_resp	*sup_requestq(struct sup_conn *, const char *method,
	    const char *path, const char *headers, const char *body);
/* The same on a new connection. */
struct sup_resp	*sup_http(const char *method, const char *path,
	    const char *headers, const char *body);
/* The i-th response on a connection (0 first), its head in or not; NULL
 * if none came or was asked for. */
struct sup_resp	*sup_response(struct sup_conn *, size_t i);
/* A header of a response (NUL-terminated copy, the harness's), or NULL. */
const char	*sup_header(struct sup_resp *, const char *name);
/* The body so far as a C string. */
const char	*sup_body(struct sup_resp *);
/* The body parsed as JSON (borrowed), or NULL. */
json_t		*sup_json(struct sup_resp *);
/* The data of the i-th event parsed (borrowed), or NULL. */
json_t		*sup_event(struct sup_resp *, size_t);

/*
 * MCP: a client's identity and session, and JSON-RPC messages POSTed to
 * /mcp on new connections.
 */
struct sup_client {
	char			*token;		/* bearer, or NULL */
	char			*headers;	/* more header lines, or NULL */
	char			 sid[256];	/* Mcp-Session-Id, or "" */
	char			 version[32];	/* MCP-Protocol-Version, or "" */
	const char		*path;		/* its endpoint; NULL: /mcp */
	TAILQ_ENTRY(sup_client)	 entry;
};

/* A client with a token (or NULL), not yet initialized. */
struct sup_client *sup_client(const char *token);
/* Initialize it (params as JSON text; NULL: 2025-11-25, capabilities
 * caps or {}, clientInfo "check"): the response. */
struct sup_resp	*sup_initialize(struct sup_client *, const char *params);
/* A client with a session: initialized and initialized-notified, with
 * capabilities caps (JSON text, or NULL for {}); dies if refused. */
struct sup_client *sup_session(const char *token, const char *caps);
/*
 * POST a 2026-07-28 request (id "r1") at a path with a bearer token: its
 * method, Mcp-Name (or NULL), params members before _meta (JSON text, ""
 * for none), its capabilities (NULL for {}) and extra header lines (or
 * NULL).
 */
struct sup_resp	*sup_modern(const char *path, const char *token,
		    const char *method, const char *name, const char *params,
		    const char *caps, const char *more);
/* POST one message (formatted) with the client's headers. */
struct sup_resp	*sup_post(struct sup_client *, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* The same, queued: the loop not run. */
struct sup_resp	*sup_postq(struct sup_client *, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* The same with extra header lines. */
struct sup_resp	*sup_post_with(struct sup_client *, const char *headers,
	    const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* GET the session's stream (Last-Event-ID if given). */
struct sup_resp	*sup_get(struct sup_client *, const char *last_event_id);
/* DELETE the session. */
struct sup_resp	*sup_delete(struct sup_client *);
/* The JSON-RPC response in a response: its JSON body, or the event that
 * has a result or an error (borrowed); NULL if none yet. */
json_t		*sup_answer(struct sup_resp *);
/* POST a request and give its answer (borrowed), or NULL. */
json_t		*sup_rpc(struct sup_client *, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* The first event of a stream with a method (borrowed), or NULL. */
json_t		*sup_find(struct sup_resp *, const char *method);
/* How many of a stream's events have a method. */
size_t		 sup_nfound(struct sup_resp *, const char *method);
/* The URIs a subscriptions/listen's acknowledgment honours, separated by
 * spaces ("" none; a static buffer), or NULL without an acknowledgment. */
const char	*sup_ack_uris(struct sup_resp *);

/* A member by a dotted path ("result.tools.0.name"), or NULL. */
json_t		*sup_jget(json_t *, const char *path);
/* Its string, integer, or the number of items of an array there. */
const char	*sup_jstr(json_t *, const char *path);
long long	 sup_jint(json_t *, const char *path);
size_t		 sup_jlen(json_t *, const char *path);
/* Compact JSON text of a value, for messages (the harness's). */
const char	*sup_dump(json_t *);

#endif
