/* SPDX-License-Identifier: ISC */
/*
 * mcp-worker: one process per upstream, started by mcp-supervisord with
 * its end of a socketpair on fd 3.  It owns the upstream transport, does
 * the upstream's initialize handshake, keeps the upstream's catalog fresh,
 * and relays messages, mapping ids so that each upstream connection sees
 * only ids the worker assigned.
 */
#ifndef MCPS_WORKER_H
#define MCPS_WORKER_H

#include <sys/queue.h>
#include <sys/types.h>
#include <stdint.h>

#include <event2/event.h>
#include <jansson.h>
#ifdef WORKER_REMOTE
#include <curl/curl.h>
#endif

#include "conf.h"
#include "frame.h"
#include "jsonrpc.h"
#include "strmap.h"
#include "u64map.h"

struct evbuffer;
struct conn;
struct upo_id;
struct mrtr;

#define ERA_MAX_SUBSCRIPTIONS	4096	/* URIs in a modern upstream's listen */
/* Bytes of an upstream's error message quoted in ours. */
#define UP_ERROR_QUOTE		300

/* worker.c */
extern struct event_base	*base;
extern struct server_conf	*sc;
int64_t		 now_ms(void);
void		 chan_send(uint16_t type, uint32_t session, uint32_t tag,
		    const char *, size_t);
void		 chan_send_buffer(uint16_t type, uint32_t session, uint32_t tag,
		    struct evbuffer *);
/* The same with frame flags (FRAME_F_ERROR on an error response). */
void		 chan_send_buffer_flags(uint16_t type, uint16_t flags,
		    uint32_t session, uint32_t tag, struct evbuffer *);
void		 chan_send_json(uint16_t type, uint32_t session, uint32_t tag,
		    json_t *);
/* The same for a frame that carries a secret (tokens): no copy of its
 * text is left unwiped. */
void		 chan_send_secret(uint16_t type, uint32_t session, uint32_t tag,
		    json_t *);	/* reference taken */

/*
 * Backpressure from the supervisor: an upstream that sends faster than the
 * supervisor reads would queue without bound here.  A transport stops
 * reading its upstream while chan_congested() and asks chan_wait() to be
 * woken; resume(arg) runs once the queue has been written down to
 * CHAN_RESUME_QUEUED.  The upstream itself is then held back by its pipe
 * or socket (or by curl's pause), and nothing is lost.
 */
#define CHAN_MAX_QUEUED		(64 * 1024 * 1024)
#define CHAN_RESUME_QUEUED	(16 * 1024 * 1024)
struct chan_waiter {
	TAILQ_ENTRY(chan_waiter)	 entry;
	void				(*resume)(void *);
	void				*arg;
	int				 waiting;
};
int		 chan_congested(void);
/* Is some reader paused?  (Silence from an upstream is then ours.) */
int		 chan_waiting(void);
/* Wake w once the queue is short again (once, however often asked). */
void		 chan_wait(struct chan_waiter *w);
/* Forget w (before freeing it). */
void		 chan_unwait(struct chan_waiter *w);
/*
 * Call fn(pid, pgrp, arg) for every child of the worker's, alive or not
 * yet reaped (the worker is a subreaper: what an upstream leaves is its).
 * -1 if /proc cannot be read.
 */
int		 worker_children(void (*fn)(pid_t, pid_t, void *), void *arg);
/* Report our state ("starting", "ready", "error", or "exiting" when the
 * worker is about to exit) to the supervisor. */
void		 worker_status(const char *state, const char *error);
const char	*worker_last_error(void);
/* The upstream went away during the era probe: say so in STATUS. */
void		 worker_probe_failed(void);
/* The shared connection failed: tell the supervisor and exit. */
void		 worker_fatal_conn(struct conn *, const char *why)
		    __attribute__((noreturn));
/* Stop the upstream and exit with code (after a grace period at most). */
void		 worker_begin_exit(int code);
/* Exit if stopping and nothing is left to wait for. */
void		 worker_exit_check(void);

/* upstream_*.c: a transport moves whole JSON-RPC messages to and from an
 * upstream. */
struct transport_ops {
	const char	*name;
	/* Start connecting or spawning; conn_transport_up() when ready. */
	int		(*start)(struct conn *);
	/* Send one message (all of msg is consumed). */
	void		(*send)(struct conn *, struct evbuffer *msg);
	/* Stop and free the transport's state (no callbacks afterwards). */
	void		(*stop)(struct conn *);
	/* The pid of a local process, or -1 (optional). */
	pid_t		(*pid)(struct conn *);
	/* The handshake is done (optional). */
	void		(*initialized)(struct conn *);
	/*
	 * Stop waiting for our request id: over Streamable HTTP, closing
	 * its response stream, which is a 2026-07-28 cancellation
	 * (optional; 0 if there was such a request).
	 */
	int		(*cancel)(struct conn *, int64_t id);
};

extern const struct transport_ops transport_stdio;
extern const struct transport_ops transport_http;
#ifdef WORKER_REMOTE
/* upstream_http.c: DELETEs of ended sessions still under way. */
unsigned int	 http_farewells(void);
#endif
extern const struct transport_ops transport_sse;
extern const struct transport_ops transport_ws;
/* upstream_stdio.c: a child of the worker exited (from the SIGCHLD
 * handler). */
void		 stdio_child_exited(pid_t, int status);
/* Kill every upstream process group still around (at exit). */
void		 stdio_kill_all(void);

/*
 * What a client declared in its initialize: its capabilities and
 * clientInfo, shared by every session that declared the same (thousands
 * of sessions of one client program hold one copy).
 */
struct client_decl {
	unsigned int	 refs;
	const char	*key;		/* the map's: both as JSON text */
	json_t		*caps;
	json_t		*client_info;
};

/* A client session as a per-session upstream needs to know it. */
struct session_info {
	uint32_t	 no;
	struct client_decl *decl;	/* a reference, or NULL */
	json_t		*caps;		/* the client's capabilities (the
					   decl's, borrowed), or NULL */
	json_t		*client_info;	/* the same */
	char		*loglevel;	/* requested level, or NULL */
	struct conn	*conn;		/* its upstream instance, or NULL */
	int		 shared;	/* holds requests of clients that
					   cannot be told apart (2026-07-28
					   clients without a token) */
	struct upo_id	*oauth_id;	/* a per-user upstream's: whose
					   tokens (a reference), or NULL */
};
/* A session's record, or NULL (worker.c). */
struct session_info *worker_session_info(uint32_t);

/* A client request waiting for its per-session instance to be ready. */
struct queued {
	uint32_t		 session;
	uint32_t		 tag;
	char			*p;
	size_t			 n;
	TAILQ_ENTRY(queued)	 entry;
};

/* conn.c: one upstream session and the requests in flight on it. */
enum conn_state {
	CONN_STARTING = 0,	/* transport not up yet */
	CONN_INITIALIZING,	/* handshake and first catalog */
	CONN_READY,
	CONN_DEAD
};

typedef void (*call_cb)(struct conn *, const struct jrpc *, void *);

/* A request the worker sent upstream, keyed by the id it assigned. */
struct call {
	int64_t		 id;
	uint32_t	 session;	/* 0 for the worker's own requests */
	uint32_t	 tag;		/* supervisor's tag, 0 for own */
	char		*client_id;	/* raw text of the client's id */
	size_t		 client_idlen;
	char		*token;		/* raw original progressToken */
	size_t		 tokenlen;
	call_cb		 cb;		/* the worker's own requests */
	void		*arg;
	void		(*arg_free)(void *);	/* arg's, if the call ends
						   without cb; or NULL */
	enum mcp_method	 method;	/* a method of the table */
	int		 client_modern;	/* the client speaks 2026-07-28 */
	int		 waiting;	/* for its client's input (mrtr.c) */
	char		*sent;		/* the request as sent, kept for
					   retries with input (mrtr.c) */
	size_t		 sentlen;
	char		*gw_caps;	/* a modern client's own capabilities,
					   when the gateway added some */
	struct mrtr	*mrtr;
	struct conn	*conn;		/* an own request with a deadline's */
	struct event	*deadline;	/* its, or NULL */
};

struct conn {
	uint32_t			 session;	/* 0: shared */
	const struct transport_ops	*ops;
	void				*tp;		/* transport state */
	enum conn_state			 state;
	int64_t				 next_id;
	struct u64map			 calls;		/* by our id */
	struct u64map			 by_tag;	/* by supervisor tag */
	json_t				*server_caps;
	json_t				*server_info;
	char				*instructions;
	char				 version[16];
	struct event			*init_timer;
	struct event			*reap;		/* frees it when dead */
	struct event			*ping_timer;	/* liveness */
	struct event			*pong_timer;
	int				 pinging;
	int64_t				 last_rx;	/* last message, ms */
	struct session_info		*info;		/* per-session only */
	TAILQ_HEAD(, queued)		 queue;
	size_t				 nqueued;
	/* Catalog refresh (catalog.c). */
	json_t				*lists[4];
	int				 fetching[4];
	int				 dirty[4];
	int				 announced;	/* catalog sent */
	/* Its era (era.c). */
	int				 modern;	/* speaks 2026-07-28 */
	int				 probing;	/* server/discover sent */
	int64_t				 probe_id;
	struct event			*probe_timer;
	struct strmap			 subs;		/* URIs listened to */
	int64_t				 listen_id;	/* its newest listen, or 0 */
	int64_t				 listen_live;	/* the acknowledged one
							   updates come from,
							   or 0 */
	int64_t				 listen_old;	/* the one it replaced,
							   to cancel, or 0 */
	struct event			*listen_drop;	/* cancels it, from
							   the loop */
	struct event			*listen_timer;
	unsigned int			 listen_backoff;	/* ms */
	/* A connect refused with 401 (upoauth_conn.c). */
	int				 oauth_waiting;	/* for a token */
	unsigned int			 oauth_gen;	/* the token it retried with */
	const char			*oauth_what;	/* what was refused */
};

struct conn	*conn_new(uint32_t session, struct session_info *);
void		 conn_free(struct conn *);
/* Transport callbacks (conn_transport_up is era.c's). */
/*
 * One message from the upstream.  related is the id of our request whose
 * response stream carried it (Streamable HTTP), or 0 if unknown.  If
 * owner is not NULL, the text lives in it (contiguous) and it is taken:
 * a large answer is then passed on by reference, not copied.
 */
void		 conn_message(struct conn *, const char *, size_t,
		    int64_t related, struct evbuffer *owner);
void		 conn_lost(struct conn *, const char *why);
/* Send a request of the worker's own; cb gets the response.  Returns
 * its id.  conn_call_owned: arg is freed with arg_free if the call ends
 * without cb (the connection lost or freed); with a deadline (seconds,
 * 0: none), cb gets NULL once it passes without an answer. */
int64_t		 conn_call(struct conn *, enum mcp_method, json_t *params,
		    call_cb, void *);
int64_t		 conn_call_owned(struct conn *, enum mcp_method,
		    json_t *params, call_cb, void *, void (*arg_free)(void *),
		    unsigned int deadline);
/* Forget a request of ours (a late answer is dropped). */
void		 conn_forget_call(struct conn *, int64_t id);
/* Cancel a request of ours upstream and forget it. */
void		 conn_cancel_call(struct conn *, int64_t id, const char *why);
/* Answer a relayed request here, with a result (MSG_RESPONSE). */
void		 conn_answer_local(uint32_t session, uint32_t tag,
		    const struct jrpc *, const char *result);
void		 call_free(struct call *);
void		 conn_notify(struct conn *, const char *method, json_t *params);
/* Send one message (all of buf is consumed). */
void		 conn_send(struct conn *, struct evbuffer *);
/* A per-session instance's handshake is done: relay what waited. */
void		 conn_ready(struct conn *);
/* The shared connection's catalog is complete: it is ready. */
void		 conn_catalog_ready(struct conn *);
/* Relay a client request (MSG_REQUEST) and a cancellation. */
void		 conn_relay_request(struct conn *, uint32_t session,
		    uint32_t tag, const char *, size_t);
void		 conn_relay_cancel(struct conn *, uint32_t tag,
		    const char *, size_t);
/* Relay a client notification (MSG_CLIENT_NOTIFY). */
void		 conn_relay_notify(struct conn *, const char *, size_t);
/* Check at once that the upstream is alive (a liveness ping). */
void		 conn_probe(struct conn *);
/* Answer one of our requests with an error the transport met. */
void		 conn_answer_error(struct conn *, int64_t id, const char *);
/* Fail one of our requests the transport could not complete. */
void		 conn_fail_request(struct conn *, int64_t id, int code,
		    const char *);
/* Fail a relayed request back (gone: its connection or instance ended). */
void		 conn_fail(uint32_t session, uint32_t tag, int code,
		    const char *, int gone);
/* upreq.c: a request of the worker's own to a session's client. */
typedef void (*upreq_own_cb)(void *arg, const struct jrpc *answer);
uint32_t	 upreq_send_own(uint32_t session, const char *method,
		    json_t *params, upreq_own_cb, void *arg);
void		 upreq_drop_own(uint32_t ref, const char *reason);
void		 conn_answer_error_data(struct conn *, int64_t id, int code,
		    const char *msg, const char *data);
/* Fail every relayed request with an error. */
void		 conn_fail_all(struct conn *, int code, const char *);

/* upreq.c: what the upstream sends unasked. */
void		 upreq_init(void);
void		 upreq_request(struct conn *, const struct jrpc *, int64_t related);
void		 upreq_notification(struct conn *, const struct jrpc *,
		    int64_t related);
/* Forget a connection's requests to clients (tell: cancel them there). */
void		 upreq_drop(struct conn *, int tell);
uint32_t	 upreq_send(struct conn *, uint32_t session, uint32_t tag,
		    struct mrtr *, const char *key, const char *method,
		    const char *params);
void		 upreq_drop_mrtr(struct mrtr *, int tell);
/* Relay a client's answer to an upstream request (MSG_UP_RESPONSE). */
void		 upreq_relay_answer(uint32_t ref, const char *, size_t);
/* Send the upstream a notification about a request it made (MSG_UP_NOTIFY:
 * progress of a sampling request the gateway answers). */
void		 upreq_relay_up_notify(uint32_t ref, const char *, size_t);

/* era.c: the upstream's era, and requests translated between eras. */
/* The transport is up (its callback): find out the era, or begin the
 * handshake. */
void		 conn_transport_up(struct conn *);
json_t		*era_client_caps(struct conn *, json_t *client);
json_t		*era_own_params(struct conn *, enum mcp_method, json_t *);
/* Texts that edits point to, owned until the splice is done. */
#define ERA_MAX_TEXTS	4
struct era_texts {
	char	*s[ERA_MAX_TEXTS];
	int	 n;
};
void		 era_texts_free(struct era_texts *);
/* Keep the text of b (drained) until era_texts_free. */
const char	*era_texts_own(struct era_texts *, struct evbuffer *);
/* Is an object span empty ("{ }")? */
int		 era_empty_object(const char *, struct jspan);
/*
 * Edits of a relayed request for the upstream's era and the client's:
 * the envelope inserted or dropped, the capabilities the strategies
 * answer added, the gateway's answers of an earlier round merged.
 * Returns the number of edits.
 */
int		 era_request_edits(struct conn *, uint32_t session,
		    const struct jrpc *, struct call *, struct jedit *,
		    size_t max, struct era_texts *);
int		 era_response_edits(struct conn *, const struct call *,
		    const struct jrpc *, struct jedit *);
int		 era_input_required(const struct jrpc *);
/*
 * A request a modern upstream has no method for, answered here: the
 * result, or NULL with *code 0 to relay it, or NULL with *code and *err
 * to refuse it.
 */
const char	*era_local(struct conn *, const struct jrpc *, int *code,
		    const char **err);
int		 era_listen_notification(struct conn *, const struct jrpc *);
void		 era_param_headers(struct conn *, const struct jrpc *,
		    void (*add)(void *, const char *), void *);

/* mrtr.c: a modern upstream's input_required for a 2025 client. */
/* Ask the client for what the upstream needs; 0 if the call waits. */
int		 mrtr_input_required(struct conn *, struct call *,
		    const struct jrpc *);
/* A client's answer to one of its requests (ur's mrtr, key). */
void		 mrtr_answer(struct mrtr *, const char *key, const struct jrpc *);
/* A call waiting for its client goes away. */
void		 mrtr_free(struct mrtr *, int tell);
/* A modern client's retry: the gateway's answers of the round merged. */
int		 mrtr_stash_edits(struct conn *, uint32_t session,
		    const struct jrpc *, struct jedit *, size_t max,
		    struct era_texts *);

/* headers.c: configured request headers, secrets expanded. */
struct curl_slist;
int		 worker_headers(struct curl_slist **);
struct curl_slist *worker_headers_dup(const struct curl_slist *);
#ifdef WORKER_REMOTE
/* Set a transfer's URL and the upstream's TLS and connect settings
 * (curlev_common of common/curl_event.c with sc's). */
void		 curlev_setopts(CURL *, const char *url);
#endif

#ifdef WORKER_REMOTE
/*
 * upstream_oauth.c: the gateway as the upstream's OAuth client.  A 401
 * makes the request wait (upoauth_unauthorized) for a token; its callback
 * comes from the loop, with NULL or why there is none.
 */
typedef void (*upoauth_cb)(void *arg, const char *error);
void		 upoauth_init(void);
/* Add the Authorization header if there is a token; *gen its generation (0: none). */
struct curl_slist *upoauth_header(struct curl_slist *, unsigned int *gen);
unsigned int	 upoauth_generation(void);
/* A 401 to a request that carried token gen (0: none); -1 if it cannot wait. */
int		 upoauth_unauthorized(const char *challenge, unsigned int gen,
		    upoauth_cb, void *arg);
/* A waiting request went away. */
void		 upoauth_forget(void *arg);
const char	*upoauth_last_error(void);
/*
 * The connection is being lost because no token came (upoauth_losing);
 * was that for want of an operator (a login, the client refused)?
 */
void		 upoauth_losing(void);
int		 upoauth_operator_needed(void);
/*
 * A 403 to a request that carried token gen: insufficient_scope asks for
 * a token with the union of the scopes (client credentials, at most
 * twice per scope set) or answers that a login with them is needed; -1
 * if it cannot help (the 403 stands).
 */
int		 upoauth_forbidden(const char *challenge, unsigned int gen,
		    upoauth_cb, void *arg);
/* Why, in the login state (no token without a user); NULL if not in it. */
const char	*upoauth_login_needed(void);
/*
 * Per-user identities (upstream_users.c): a session's, from SESSION_OPEN
 * (a reference, or NULL), let go when it closes; the same calls as above
 * for a connection, whose session's identity's token they use (NULL: the
 * gateway's); the -32042 data of a connection whose user must log in
 * first (new), or NULL.
 */
struct upo_id	*upoauth_session(json_t *msg, uint32_t session);
void		 upoauth_session_close(struct upo_id *);
struct curl_slist *upoauth_header_conn(struct conn *, struct curl_slist *,
		    unsigned int *gen);
unsigned int	 upoauth_generation_conn(struct conn *);
int		 upoauth_unauthorized_conn(struct conn *, const char *challenge,
		    unsigned int gen, upoauth_cb, void *arg);
int		 upoauth_forbidden_conn(struct conn *, const char *challenge,
		    unsigned int gen, upoauth_cb, void *arg);
json_t		*upoauth_elicit_data(struct conn *);
/* Per-user: ready at once, with nothing listed but by each session's
 * instance (1); 0 if the upstream's identity is the gateway's. */
int		 upoauth_per_user_ready(void);
/* upstream_login.c: CONFIG's oauth_record and oauth_client. */
void		 login_config(json_t *record, json_t *client);
/* MSG_OAUTH_LOGIN, MSG_OAUTH_CODE, MSG_OAUTH_REVOKE. */
void		 upoauth_frame(uint16_t type, json_t *msg);
/* upoauth_conn.c: what the transports share (read there). */
#define UPOAUTH_CHALLENGE_MAX	8192	/* a 401's WWW-Authenticate */
void		 upoauth_challenge_add(char **, const char *value, size_t len);
void		 upoauth_refused(struct conn *, int64_t id, const char *what,
		    long status, const char *error);
int		 upoauth_connect_refused(struct conn *, const char *what,
		    const char *challenge, unsigned int gen);
void		 upoauth_connect_forget(struct conn *);
#endif

/* catalog.c: the upstream's tools, resources, templates and prompts. */
void		 catalog_fetch_all(struct conn *);
void		 catalog_list_changed(struct conn *, const struct jrpc *);
/* Send the lists fetched so far (MSG_CATALOG, with c's session). */
void		 catalog_send(struct conn *);

#endif
