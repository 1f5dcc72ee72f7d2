/* SPDX-License-Identifier: ISC */
/*
 * mcp-supervisord: one process, one libevent loop.  It owns the listeners,
 * client sessions, the merged catalog, routing and id bookkeeping, and the
 * worker processes (one per upstream); it never talks to an upstream
 * directly and never blocks.
 */
#ifndef MCPS_SUPERVISOR_H
#define MCPS_SUPERVISOR_H

#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <stdint.h>
#include <time.h>

#include <event2/event.h>
#include <jansson.h>

#include "budget.h"
#include "conf.h"
#include "frame.h"
#include "prom.h"
#include "http_parse.h"
#include "json_scan.h"
#include "jsonrpc.h"
#include "strmap.h"
#include "u64map.h"

struct catalog;
struct catalog_entry;
struct credential;
struct ctcall;
struct evbuffer;
struct http_conn;
struct http_request;
struct http_service;
struct iochan;
struct listen;
struct netaddr;
struct parked;
struct pending;
struct rate_hold;
struct provider;
struct refusal;
struct req;
struct reqobs;
struct session;
struct uplogin_users;
struct stream;
struct stream_event;
struct trace;
struct trace_conf;
struct trace_in;
struct up_ask;
struct up_request;
struct upstream;
struct vendpoint;
struct vendpoint_changes;
struct view;
struct view_part;
struct view_wait;

/* Types that sections before their own hold by value. */
/* The catalog's lists (catalog.c); acl.c names them too. */
enum catalog_kind {
	CATALOG_TOOLS = 0,
	CATALOG_RESOURCES,
	CATALOG_TEMPLATES,
	CATALOG_PROMPTS,
	CATALOG_NKINDS
};

enum obs_outcome {
	OBS_OK = 0,		/* a result */
	OBS_ERROR,		/* an error from the upstream, or it failed
				   during the call */
	OBS_TIMEOUT,		/* no answer in time */
	OBS_REFUSED,		/* the gateway answered with an error; the
				   request reached no upstream */
	OBS_CANCELLED,		/* cancelled, or its session ended */
	OBS_NOUTCOMES
};

enum obs_transport {
	OBS_T_HTTP = 0,		/* Streamable HTTP */
	OBS_T_SSE,		/* legacy HTTP+SSE */
	OBS_T_WS,		/* WebSocket */
	OBS_NTRANSPORTS
};

TAILQ_HEAD(pending_list, pending);
TAILQ_HEAD(up_request_list, up_request);

/* access_log.c: one line per client request (access_log). */
/* Open (or reopen) the configured log; -1 with err set. */
int		 access_log_open(const struct conf *, char *err, size_t);
void		 access_log_close(void);
/* Are requests' details wanted: the access log is on, or the daemon's
 * log is at debug level (-v) and gets a line per request too? */
int		 access_log_enabled(void);
/* Lines queued and lines dropped since the start. */
void		 access_log_counts(uint64_t *lines, uint64_t *dropped);
/* Copy s[0..len) for a log line: printable ASCII, the rest escaped,
 * cut with "..." to fit. */
void		 access_log_clean(char *out, size_t outlen, const char *s,
		    size_t len);
void		 access_log_request(const struct reqobs *, int outcome,
		    int code, int64_t total_us, int64_t added_us);
/* An HTTP request refused before any JSON-RPC (status >= 400), with
 * what was refused ("Host \"evil\"") or NULL. */
void		 access_log_http(const char *peer, const char *method,
		    const char *path, int status, const char *refused);

/* acl.c: what a session's client may do. */
/* May the session see and use this tool or prompt name, or template? */
int		 acl_allows(const struct session *, enum catalog_kind,
		    const char *name);
/*
 * May it use this resource URI?  1 if so, 0 if not; -1 with why if its
 * client has patterns and the URI cannot be checked (common/uri.h).
 */
int		 acl_allows_uri(const struct session *, const char *uri,
		    const char **why);
/* Does the session see less than everything? */
int		 acl_filtered(const struct session *);
/* May it hear of a change to this URI of an upstream now (a reload may
 * have taken away what it subscribed to: its client's rules, or the
 * scopes its token has, oauth_may_hear)? */
int		 acl_hears_uri(const struct session *, const struct upstream *,
		    const char *uri);
int		 acl_may_register(const struct session *);

/* auth.c: the accepted tokens and whom each names. */
/* Use a configuration's tokens; -1 with err set (nothing changed). */
int		 auth_configure(const struct conf *, char *err, size_t);
/* The same in two steps, for a reload that must change all or nothing:
 * auth_prepare builds a table (owned by the caller; -1 with err set and
 * nothing to free), auth_commit takes it into use, auth_discard frees
 * one not taken. */
struct auth_table {
	struct credential	*v;
	size_t			 n;
};
int		 auth_prepare(const struct conf *, struct auth_table *,
		    char *err, size_t);
void		 auth_commit(struct auth_table *);
void		 auth_discard(struct auth_table *);
/* What a token admits to. */
#define AUTH_MCP	0x1	/* /mcp, /sse, /messages, the WebSocket */
#define AUTH_METRICS	0x2	/* /metrics, and why /readyz says what */
/* Check a configuration's tokens without taking them; *any is the rights
 * of all of them, or'd (0: there is none). */
int		 auth_validate(const struct conf *, int *any, char *err, size_t);
/* Must a request for a right (AUTH_MCP or AUTH_METRICS) carry a token? */
int		 auth_required(int right);
/* Check a presented token: 0 with its id, client name (NULL for an
 * unnamed one) and rights, -1 if none matches. */
int		 auth_check(const char *, size_t, uint64_t *id,
		    const char **client, int *rights);
/* The client name of a token by its id as configured now (a reload may
 * have changed it; NULL for an unnamed one): -1 if no token has the id. */
int		 auth_client(uint64_t id, const char **client);
/*
 * Bring the lock file (ws_lockfile) in line with a configuration in use,
 * the gateway listening at bound: at the start it is written with a fresh
 * token, accepted from then on; a reload that moves it or changes its URL
 * (ws_path) writes it again with the same token, one that removes it
 * removes the file and its token (auth_prepare's table no longer has it).
 * 0 if done; 1 with err set to a warning (no WebSocket endpoint, or the
 * file removed); -1 with err set if it cannot be written (nothing
 * changed: a file written before and its token stay).
 */
int		 auth_lockfile_apply(const struct conf *, const char *bound,
		    char *err, size_t errlen);
/* Remove the lock file at exit. */
void		 auth_lockfile_remove(void);

/* breaker.c: an upstream's circuit breaker. */
enum breaker_state {
	BREAKER_CLOSED = 0,	/* calls go through */
	BREAKER_OPEN,		/* calls fail fast until the cool-down ends */
	BREAKER_HALF_OPEN,	/* one probe call goes through */
	BREAKER_NSTATES
};
struct breaker {
	enum breaker_state	 state;
	unsigned int		 failures;	/* in a row */
	int			 probing;	/* the probe is out */
	struct event		*timer;		/* window or cool-down; owned */
	int64_t			 until;		/* ms: the cool-down's end */
	uint64_t		 opened;	/* times it opened */
	uint64_t		 refused;	/* calls failed fast */
	char			*last;		/* the last failure; owned */
};
void		 breaker_init(struct upstream *);
void		 breaker_free(struct upstream *);
/* Its policy may have changed (reload): start closed if it did. */
void		 breaker_configure(struct upstream *, const struct traffic_conf *);
/* May a call go: 0, 1 as the probe, -1 (failed fast) with why. */
int		 breaker_admit(struct upstream *, struct refusal *);
/* A sent call was answered; it failed (timeout, transport); its probe
 * ended without either. */
void		 breaker_success(struct pending *);
void		 breaker_failure(struct pending *, const char *why);
void		 breaker_probe_gone(struct upstream *);
const char	*breaker_state_name(enum breaker_state);
void		 breaker_status_json(const struct upstream *, json_t *o);

/* broadcast.c: notifications to every session, a slice per loop turn. */
/* Tell every session its lists changed (catalog bits). */
void		 broadcast_list_changed(int changed);
/* Tell every session but one (NULL: none) whose endpoint's selection of
 * clients' tools changed (vendpoint_ctools_changed) that its tools did. */
void		 broadcast_ctools_changed(const struct session *except);
/* Send a log notification (its JSON text) to every session that wants
 * its level (an index, -1 if unknown). */
void		 broadcast_log(const char *, size_t, int level);
/* A session is new (it has none of the broadcasts so far), or going. */
void		 broadcast_session_new(struct session *);
void		 broadcast_session_gone(struct session *);
/* A session leaves its view for the global catalog, and was told what
 * changed: list changes issued so far are not for it. */
void		 broadcast_view_left(struct session *);
void		 broadcast_free_all(void);

/* catalog.c: the merged tools, resources, templates and prompts. */
/* What an exposed name or URI routes to. */
struct catalog_entry {
	struct upstream	*up;		/* an upstream's, or NULL */
	struct session	*owner;		/* a client's tool: its session */
	char		*name;		/* the upstream's own name or URI */
	size_t		 namelen;	/* (a name may hold a NUL) */
	size_t		 index;		/* in its list */
};

void		 catalog_init(void);
void		 catalog_free(void);
/* Rebuild the global catalog and the views; notify sessions of changes. */
void		 catalog_rebuild(void);
/* Build a catalog from parts[i] for upstreams[i] (NULL: none); is_global:
 * the global catalog, not a view (see pin_check).  The caller owns the
 * one reference. */
struct catalog	*catalog_build(json_t *const *parts, int is_global);
struct catalog	*catalog_ref(struct catalog *);
void		 catalog_unref(struct catalog *);
/* The catalog of sessions without a view of their own. */
struct catalog	*catalog_global(void);
/* Which lists differ: bit (1 << kind) for each. */
int		 catalog_diff(const struct catalog *, const struct catalog *);
/* The same for what an endpoint lists (NULL: everything). */
int		 catalog_diff_by(const struct catalog *, const struct catalog *,
		    const struct vendpoint *);
/* Does match(kind, key, arg) hold for an item of a kind (resources:
 * templates too)? */
int		 catalog_any_match(const struct catalog *, enum catalog_kind,
		    int (*match)(enum catalog_kind, const char *key,
		    const void *), const void *arg);
#define CATALOG_CURSOR_MAX	4096	/* bytes of a cursor, decoded */
#define CATALOG_CURSOR_TEXT	(CATALOG_CURSOR_MAX / 3 * 4 + 4)	/* its
					   base64url text, at most */
/*
 * Append a list result: the page from cursor (the decoded text of the
 * request's cursor, or NULL) of what the session may see (every item for
 * NULL), with nextCursor if more follow.  -1 if the cursor is not ours.
 */
int		 catalog_page(const struct catalog *, enum catalog_kind,
		    const char *cursor, size_t cursorlen,
		    unsigned int page_size, const struct session *,
		    struct evbuffer *out);
struct catalog_entry *catalog_tool(const struct catalog *, const char *);
struct catalog_entry *catalog_prompt(const struct catalog *, const char *);
/* Tool i of the catalog's own list (not the clients'): its exposed name,
 * listed text and entry (borrowed); NULL past the end. */
const char	*catalog_tool_at(const struct catalog *, size_t i,
		    const char **text, size_t *len,
		    const struct catalog_entry **);
/* The upstream serving a resource URI (listed, or by template). */
struct upstream	*catalog_resource(const struct catalog *, const char *);
/* Of the global catalog: names taken twice, and names mapped. */
json_t		*catalog_collisions(void);
json_t		*catalog_renamed(void);
/* Its tools for mcpctl tools [NAME]; NULL if NAME is not listed. */
json_t		*catalog_tools_json(const char *name);
size_t		 catalog_count(const struct upstream *, enum catalog_kind);

/*
 * catalog_view.c: a session's own view of the catalog, where per-session
 * upstreams are listed as its own instances list them.  Sessions whose
 * instances list the same share one view.
 */
/* The catalog a session sees. */
struct catalog	*view_catalog(struct session *);
/*
 * Must the request wait for the session's view?  If so it is queued (or
 * refused when too many wait) and 1 is returned.
 */
int		 view_defer(struct req *);
/*
 * A name the session's view lacks belongs to a per-session upstream whose
 * part failed: ask for it again and defer the request (1), unless the
 * request is itself one that waited.
 */
int		 view_retry(struct req *, struct upstream *);
/* Why a session's part for an upstream failed, or NULL. */
const char	*view_part_error(struct session *, struct upstream *);
/* Its error's data (JSON text) and code, or NULL if it has none. */
const char	*view_part_error_data(struct session *, struct upstream *,
		    int *code);
/* A per-session instance's catalog (CATALOG with a session number). */
void		 view_part(struct upstream *, uint32_t session, json_t *);
/* An upstream became ready: ask for the parts sessions wait for. */
void		 view_upstream_ready(struct upstream *);
/* An upstream cannot deliver parts now (it died or stopped). */
void		 view_upstream_down(struct upstream *);
/* Make every view stale (the shared parts or the upstreams changed) and
 * begin bringing them up to date, a slice of sessions per loop turn. */
void		 view_rebuild_all(void);
/* An upstream is about to be freed: bring every view up to date now, so
 * that none still names it. */
void		 view_upstream_gone(struct upstream *);
/* A session's view, brought up to date first if stale (for a reader that
 * does not wait for the view through view_defer). */
struct catalog	*view_catalog_fresh(struct session *);
/* The client cancelled a request (its JSON-RPC id, as sent) that waits
 * for the view: drop it unanswered; 0 if none waits. */
int		 view_cancel(struct session *, const char *id, size_t idlen);
/* A session ends: release its view and waiting requests. */
void		 view_session_end(struct session *);
/* A stream is being freed: waiting requests forget it. */
void		 view_stream_gone(struct stream *);

/* continuation.c: calls parked while a 2026-07-28 client supplies input
 * (a legacy upstream's sampling, elicitation or roots request). */
void		 continuation_init(void);
/* The key and instance name the gateway mints requestState with. */
int		 continuation_configure(const struct conf *, char *, size_t);
/* The same in two steps, for a reload that must change all or nothing:
 * continuation_key reads request_state_key into k (-1 with err set);
 * continuation_apply takes k into use, wipes it, and takes the
 * instance name.  A k not applied is wiped by the caller. */
#define STATE_KEY_MAX		256
struct state_key {
	unsigned char	 key[STATE_KEY_MAX];
	size_t		 len;		/* 0: none configured */
};
int		 continuation_key(const struct conf *, struct state_key *,
		    char *, size_t);
void		 continuation_apply(const struct conf *, struct state_key *);
const char	*continuation_instance(void);
/* An upstream's request for a modern client: park its call and ask the
 * client by input_required (0), or -1 with why and code if it cannot. */
int		 continuation_park(const struct up_ask *, char *why, size_t,
		    int *code);
/* Record what a modern call's retry will have to repeat. */
void		 continuation_bind(struct pending *, const struct req *,
		    const char *name);
/* A modern client's retry of a call to a legacy upstream: 1 if it
 * carries requestState or inputResponses (then handled). */
int		 continuation_resume(struct req *, struct upstream *,
		    const char *name);
/* A parked call was answered while it waited (payload taken). */
void		 continuation_answered(struct pending *, struct evbuffer *);
/* A parked call's pending request went away (failed, or answered). */
void		 continuation_pending_gone(struct pending *, const char *why);
/* The client needs a capability it did not declare: -32021, the
 * upstream's request refused, the call cancelled. */
void		 continuation_missing(const struct up_ask *, const char *why);
/* An upstream withdrew a request held in a parked call. */
int		 continuation_up_cancelled(struct upstream *, uint32_t ref);
void		 continuation_session_end(struct session *);
void		 continuation_upstream_gone(struct upstream *);
unsigned int	 continuation_count(void);

/* control.c: the control socket for mcpctl. */
/* Entries a list of mcpctl's (sessions, pins) has unless it says (about
 * 250 bytes and 5 us each), and at most: a list of 100,000 would hold the
 * loop and be larger than mcpctl takes. */
#define CONTROL_LIST_DEFAULT	1000
#define CONTROL_LIST_MAX	10000
#define CONTROL_LIST_MAX_TEXT	"10000"
int		 control_listen(const char *path);
void		 control_close(void);
json_t		*control_error(const char *, ...)
		    __attribute__((format(printf, 1, 2)));

/* ctools.c: tools offered by clients (tools/register), the registry. */
/* tools/register and tools/unregister. */
void		 ctools_register(struct req *);
void		 ctools_unregister(struct req *);
/* A registered tool; owned by ctools.c, borrowed by catalog.c. */
struct ctool {
	struct catalog_entry	 e;	/* owner, own name, list position */
	const char		*key;	/* exposed name (the registry's) */
	char			*text;	/* the Tool object as listed */
	size_t			 len;
	size_t			 cost;	/* bytes held, overhead counted */
};
/* The registered tools in order: ctools_at(i) for i < ctools_count()
 * (NULL past the end); one by its exposed name, or NULL. */
size_t		 ctools_count(void);
struct ctool	*ctools_at(size_t);
struct ctool	*ctools_get(const char *exposed);
/* A new configuration: withdraw the tools it no longer allows. */
void		 ctools_configure(void);
/* A session ends: its calls fail, its tools are withdrawn. */
void		 ctools_session_end(struct session *);

/* ctools_call.c: calls to tools offered by clients. */
/* Call a client's tool (e->owner) for a session. */
void		 ctools_call(struct req *, const struct catalog_entry *,
		    const char *exposed);
/* An owner's answer, progress or a caller's cancellation: 1 if it was
 * about a call to a client tool (handled). */
int		 ctools_answer(struct session *owner, const struct jrpc *);
int		 ctools_progress(struct session *owner, const struct jrpc *);
int		 ctools_cancelled(struct session *caller, const struct jrpc *,
		    struct jspan request_id);
void		 ctools_stream_gone(struct stream *);
/* A session ends: calls to and from it end too. */
void		 ctools_calls_end(struct session *);

/* drain.c: mcpctl drain. */
int		 drain_active(void);
/* Seconds to the deadline (0 when not draining). */
unsigned int	 drain_remaining(void);
/* Begin (or change the deadline); -1 with err set. */
int		 drain_start(unsigned int seconds, char *err, size_t);
/* A session ended: stop once none is left. */
void		 drain_check(void);
void		 drain_free(void);

/* endpoints.c: what each listener serves. */
extern const struct http_service gateway_service;
/* Listen on metrics_listen if it is set; -1 on failure. */
int		 metrics_listen_start(char *bound, size_t boundlen);

/* globals.c: process-wide state. */
/* Protocol versions the gateway speaks with clients, newest first. */
#define MCP_VERSION_LATEST	"2025-11-25"
extern const char *const mcp_versions[];
int		 mcp_version_supported(const char *);
extern struct event_base	*base;
extern struct conf		*conf;
extern const char		*worker_path;
extern char			*stdio_worker_path;
extern char			 listen_bound[128];	/* actual address */
extern char			 metrics_bound[128];	/* metrics_listen's */
extern const char		*control_arg;		/* -s, or NULL */
extern int			 listen_scope;		/* PREFLIGHT_WIDE,
							   PREFLIGHT_MWIDE */
extern time_t			 daemon_started;	/* wall clock */
/* Begin an orderly exit (set by main; NULL in test harnesses). */
extern void			(*daemon_exit)(const char *why);
int64_t		 now_ms(void);		/* monotonic milliseconds */

/* health.c: /healthz and /readyz. */
/* 200 ready, 503 not ready, 404 draining; why (if given) says why not. */
int		 health_ready(char *why, size_t len);
int		 health_path(const struct http_request *);
void		 health_serve(struct http_conn *, struct http_request *);

/* http.c: the HTTP/1.1 server's connections. */
struct http_request {
	const char	*method;
	const char	*path;		/* without query */
	const char	*query;		/* after '?', or "" */
	struct http_head head;
	struct evbuffer	*body;
	uint64_t	 credential;	/* the bearer token that authorised
					   it (a hash), 0 without auth */
	struct oauth_grant *grant;	/* an OAuth token's (a reference), or
					   NULL */
	uint64_t	 oauth_wait;	/* its token waits (oauth_wait), or 0 */
	int		 oauth_retry;	/* it waited once */
	struct vendpoint *vep;		/* the endpoint its path names, or
					   NULL (/mcp); mcp_http.c sets it */
	const struct http_header *cors;	/* its Origin, allowed: answered
					   with CORS headers; or NULL */
};

/*
 * What a listener serves.  check sees every request once its head is in,
 * before any of its body is read: it returns 0 to go on, or answers it
 * (a refusal; the connection then closes, the body unread) and returns
 * -1, or returns 1 to decide later: it then calls http_check_again, which
 * calls it again.  handle gets the whole request.
 */
struct http_service {
	int	(*check)(struct http_conn *, struct http_request *);
	void	(*handle)(struct http_conn *, struct http_request *);
};
/* A check that returned 1 can decide now: check the request again
 * (http_request.c). */
void		 http_check_again(struct http_conn *);
/* Serve a connected socket (taken), as if accepted from sa. */
void		 http_adopt(int fd, const struct sockaddr *sa,
		    const struct http_service *);
/*
 * A connection taken over by another protocol after a 101 (WebSocket).
 * read: new input; drained: everything queued was written (optional);
 * closed: the connection is going away, for whatever reason; expired:
 * the time given to http_conn_expire has come (optional).
 */
struct http_upgraded {
	void	(*read)(struct http_conn *, void *);
	void	(*drained)(struct http_conn *, void *);
	void	(*closed)(struct http_conn *, void *);
	void	(*expired)(struct http_conn *, void *);
};
/*
 * Answer 101 with headers ("Name: v\r\n" lines) and hand over.  Input
 * already buffered is the new protocol's: the caller reads it.
 */
void		 http_upgrade(struct http_conn *, const char *headers,
		    const struct http_upgraded *, void *);
/* The argument given to http_upgrade, or NULL. */
void		*http_upgraded_arg(struct http_conn *);
/* Stop or resume reading an upgraded connection (backpressure). */
void		 http_conn_reading(struct http_conn *, int on);
struct evbuffer	*http_conn_input(struct http_conn *);
struct evbuffer	*http_conn_output(struct http_conn *);
/* Stop reading, write what is queued, then close. */
void		 http_conn_finish(struct http_conn *);
/*
 * A streaming or upgraded connection lasts no longer than the token that
 * opened it (g; NULL or no exp: no end): at its exp plus leeway its
 * stream's stream_token_expired, or its owner's expired, runs.  The
 * connection's own deadline timer holds it.
 */
void		 http_conn_expire(struct http_conn *, const struct oauth_grant *);
/* The leeway changed (a reload): move every such end to the new one. */
void		 http_conns_expire_again(void);
unsigned int	 http_conn_count(void);
size_t		 http_conn_queued(struct http_conn *);
/*
 * Bytes ever queued to a connection's output, and of those the bytes its
 * output has passed to the kernel: offsets an event's end is compared to.
 */
uint64_t	 http_conn_offset(struct http_conn *);
uint64_t	 http_conn_passed(struct http_conn *);
/* The stream that owns the response under way, or NULL. */
struct stream	*http_conn_stream(struct http_conn *);
/*
 * Ask the CPU for the lines a write to the connection reads, ahead of it:
 * depth 0 the connection, 1 its channel, 2 the channel's output; each
 * depth reads what the one before fetched (broadcast.c).
 */
void		 http_conn_prefetch(struct http_conn *, int depth);
/* Finished POST streams waiting for the connection's output to pass
 * their response (stream.c's; the connection only holds the list). */
struct stream_passing *http_conn_passing(struct http_conn *);
/*
 * Bytes in every connection's output, and the one with the most (among
 * those at least HTTP_SLOW_MIN behind: a heap, not a walk), or NULL.
 */
#define HTTP_SLOW_MIN	65536
size_t		 http_stream_queued(void);
struct http_conn *http_slowest(size_t *queued);
/* The peer's address, for logs (the client's, behind a trusted proxy). */
const char	*http_conn_peer(struct http_conn *);
/* The request a connection is on. */
struct http_request *http_conn_request(struct http_conn *);
/* The response to the request under way needs no access log line (it
 * was logged already, or it is a health check). */
void		 http_conn_nolog(struct http_conn *);
/* Drop a connection at once (its stream is detached). */
void		 http_conn_close(struct http_conn *);
/* The same from the event loop, when the caller is not done with its
 * session (closing a legacy stream ends the session). */
void		 http_conn_close_later(struct http_conn *);
int		 http_conn_doomed(struct http_conn *);

/* http_listen.c: listeners and the connection limit. */
int		 http_listen(const char *addr, const struct http_service *,
		    char *bound, size_t boundlen);
void		 http_close_listeners(void);
/* Apply the configuration: connection limit, heartbeat (start, reload). */
void		 http_configure(void);
extern int	 listen_loopback;	/* every listener is on loopback */

/* http_response.c: responses and chunked event streams. */
/* Complete response with an optional body; extra is "Name: v\r\n" lines. */
void		 http_reply(struct http_conn *, int status, const char *ctype,
		    const char *extra, const char *body, size_t len);
void		 http_reply_buffer(struct http_conn *, int status,
		    const char *ctype, const char *extra, struct evbuffer *);
/* Start a chunked event-stream response. */
void		 http_stream_start(struct http_conn *, const char *extra);
/* Write one chunk (all of data is consumed). */
void		 http_stream_write(struct http_conn *, struct evbuffer *);
/*
 * Write one chunk made of a prefix and data: bytes (copied), or an
 * evbuffer (added by reference, so it stays the caller's).
 */
void		 http_stream_write_parts(struct http_conn *,
		    const char *prefix, size_t plen, const char *data,
		    size_t len, struct evbuffer *ref);
void		 http_stream_end(struct http_conn *);
/* Attach the stream that owns this connection's response (NULL: none). */
void		 http_set_stream(struct http_conn *, struct stream *);
/* Connections that a stream of a kind (enum stream_kind) owns: counted
 * as they are attached and let go, so that a scrape need not walk the
 * sessions. */
unsigned int	 http_stream_count(int kind);

/*
 * idp.c: one worker (mcp-idp) per OAuth issuer (oauth = { issuers }),
 * supervised and restarted like the LLM providers' workers; the issuer's
 * keys, refreshed on request at a bounded rate, and introspection.
 */
struct idp;					/* one per issuer */
extern const char	*idp_worker_path;
void		 idp_init_all(void);
/* Apply a configuration's issuers (reload; or start, report NULL). */
void		 idp_apply(const struct conf *, json_t *report);
void		 idp_stop_all(void);
struct idp	*idp_find(const char *issuer);	/* exact; NULL */
struct idp	*idp_nth(size_t);	/* in the conf's order; NULL past it */
const struct oauth_issuer_conf *idp_conf(const struct idp *);
/* The issuer's current key set, or NULL before the first; owned by
 * idp.c, valid until the next return to the event loop. */
const struct jose_jwks *idp_jwks(const struct idp *);
/*
 * A token named a kid we do not know: ask for fresh keys (rate-bounded:
 * at most one fetch per 30 s per issuer).  cb(arg) runs once, never from
 * inside this call: when new keys arrived, the fetch failed, no fetch is
 * allowed yet, or after 5 s; idp_wait_cancel() before arg dies.  Returns
 * a handle.
 */
uint64_t	 idp_refresh(struct idp *, void (*cb)(void *), void *arg);
void		 idp_wait_cancel(struct idp *, uint64_t);
/*
 * RFC 7662 introspection of an opaque token; cb(arg, response or NULL,
 * error) runs once, never from inside this call, within 5 s (response
 * and error borrowed for the call).  0 if the issuer has no
 * introspection.
 */
uint64_t	 idp_introspect(struct idp *, const char *token,
		    void (*cb)(void *, json_t *, const char *), void *arg);
/*
 * Exchange an authorization code of the issuer's login client (oauth
 * issuers' login) for its token response, the same way; 0 if the issuer
 * has no login client.  The resource asked for is ours.
 */
uint64_t	 idp_exchange(struct idp *, const char *code,
		    const char *verifier, const char *redirect_uri,
		    void (*cb)(void *, json_t *, const char *), void *arg);
/* Its metadata's authorization_endpoint, or NULL (not known yet). */
const char	*idp_authorization_endpoint(const struct idp *);
/* Does its metadata name no key set (opaque tokens only)? */
int		 idp_keyless(const struct idp *);
/* Replace the key set (what a MSG_IDP_KEYS does; the Check harness
 * calls it). */
void		 idp_set_jwks(struct idp *, struct jose_jwks *);	/* takes it */
/* mcpctl refresh-keys [issuer]: idp_refresh of one or every issuer. */
json_t		*idp_control_refresh(const char *issuer);
json_t		*idp_status_json(void);		/* mcpctl status */
/* mcpctl check: an issuer without keys is a problem, one unreachable
 * with keys a warning. */
void		 idp_health(json_t *problems, json_t *warnings);

/*
 * limit.c: an upstream's cap on calls in flight (max_concurrent) and the
 * bounded queue of calls waiting for a slot (max_queued, queue_timeout).
 */
struct uplimit {
	unsigned int		 inflight;	/* calls holding a slot */
	unsigned int		 nwaiting;	/* calls waiting for one */
	TAILQ_HEAD(, pending)	 waiting;	/* oldest first */
	struct event		*kick;		/* sends waiters; owned */
	uint64_t		 waited;	/* calls that had to wait */
	uint64_t		 full;		/* refused: the queue was full */
	uint64_t		 expired;	/* failed: queue_timeout */
	uint64_t		 abandoned;	/* cancelled or gone waiting */
};
/* Why a call is refused before it reaches its upstream (limit.c,
 * breaker.c, rate.c). */
struct refusal {
	int		 code;
	char		 msg[384];
	char		 data[256];	/* a JSON object's text */
	unsigned int	 retry_after;	/* seconds, as in data */
};
/* How a pending request is held to its upstream's policy. */
#define LIMIT_EXEMPT	0	/* the gateway's own: neither capped nor
				   counted by the breaker's probe */
#define LIMIT_CALL	1	/* a call under the cap */
#define LIMIT_PROBE	2	/* the same, and the breaker's probe */
/* p->waiting of a waiter being failed, which is not counted as
 * abandoned (1: waiting). */
#define LIMIT_FAILING	2
void		 limit_init(struct upstream *);
void		 limit_free(struct upstream *);
/* Its policy may have changed (reload): send what may go now. */
void		 limit_configure(struct upstream *);
/* Send waiters (in the next turn) if slots are free. */
void		 limit_kick(struct upstream *);
/* May a call go to the upstream (breaker, queue)?  LIMIT_CALL or
 * LIMIT_PROBE, or -1 with why. */
int		 limit_admit(struct upstream *, struct refusal *);
/* A call (p->limit set) is about to be sent: 1 if it may go now (it
 * holds a slot), 0 if it must wait (its text in p->queued). */
int		 limit_start(struct pending *);
void		 limit_wait(struct pending *);
/* The same for a call that waited for its upstream to start; it fails
 * (-1) if the queue is full. */
int		 limit_wait_started(struct pending *);
/* Its time in the queue is over (its timer). */
void		 limit_expired(struct pending *);
/* It is being freed. */
void		 limit_pending_gone(struct pending *);
/* A stream is being freed: calls waiting to answer on it go. */
void		 limit_stream_gone(struct stream *);
/* Fail every call waiting for a slot. */
void		 limit_fail_waiting(struct upstream *, const struct refusal *);
/* Its state for mcpctl status (members added to o). */
void		 limit_status_json(const struct upstream *, json_t *o);
/* Its metrics and the breaker's, for every upstream. */
void		 limit_metrics(struct evbuffer *);

/* mcp_access.c: who may reach the MCP endpoint (Host, Origin, token). */
/*
 * Check a request's Host and Origin (loopback: whether the listener is on
 * loopback only) and, unless right is 0, that its bearer token has that
 * right (AUTH_MCP, AUTH_METRICS; see auth_required); 0 to go on, -1 when
 * refused (answered, logged with the peer and what was refused).
 */
int		 mcp_http_check_access(struct http_conn *, struct http_request *,
		    int loopback, int right);
/* The same for Host only (a form of the gateway's own page, whose
 * Origin the caller checked). */
int		 mcp_http_check_host_access(struct http_conn *,
		    struct http_request *, int loopback);
/* Does a request carry what a right needs?  Silent: nothing is logged. */
int		 mcp_http_may(struct http_request *, int right);
/* The named client a request is (its grant's or its token's), or NULL. */
const char	*mcp_http_client(const struct http_request *);

/* mcp_http.c: the Streamable HTTP endpoint. */
extern const struct http_service mcp_http_service;
/* Answer with a JSON-RPC error that has no id, at an HTTP status (extra:
 * header lines, or NULL). */
void		 mcp_http_error(struct http_conn *, int status, int code,
		    const char *msg, const char *extra);
/* Refuse a POSTed request with 403 insufficient_scope (oauth_post_refusal's
 * answer), logged and counted. */
void		 mcp_http_scope_refused(struct http_conn *, struct http_request *,
		    struct session *, const struct jrpc *, json_t *refusal);

/* mcp_ws.c: MCP over WebSocket on the same listener. */
int		 mcp_ws_path(const struct http_request *);
/* Upgrade a request for ws_path, or refuse it. */
void		 mcp_ws_upgrade(struct http_conn *, struct http_request *);
/* Send one message as a text frame (all of msg is consumed). */
void		 mcp_ws_send(struct http_conn *, struct evbuffer *msg);
/* Its session is ending first: the connection must not end it again. */
void		 mcp_ws_forget(struct http_conn *);

/* metrics.c: counters and histograms, and GET /metrics. */
struct metrics_req {
	/* By the method counted as (mcp_method.h), and outcome. */
	uint64_t		 n[MCPM_N][OBS_NOUTCOMES];
	struct prom_hist	 total;		/* request read to answer out */
	struct prom_hist	 added;		/* less the time at the worker */
};

/* Kinds of requests from upstreams to clients, and how they ended. */
enum metrics_up_kind {
	MUP_SAMPLING = 0,
	MUP_ELICITATION,
	MUP_ROOTS,
	MUP_PING,
	MUP_OTHER,
	MUP_NKINDS
};
enum metrics_up_outcome {
	MUPO_CLIENT = 0,	/* the client's result, passed on */
	MUPO_CLIENT_ERROR,	/* the client's error, passed on */
	MUPO_DEFAULTS,		/* the schema's defaults */
	MUPO_DECLINE,		/* declined by the gateway */
	MUPO_ERROR,		/* nobody could answer: an error */
	MUPO_TIMEOUT,		/* the client did not answer in time */
	MUPO_CANCELLED,		/* cancelled, or the session ended */
	MUPO_LLM,		/* sampling: an llm: link's answer */
	MUPO_TOOL,		/* sampling: a tool: link's answer */
	MUPO_NOUTCOMES
};

/* Count a request's end. */
void		 metrics_request(const struct reqobs *, int outcome,
		    uint64_t total_us, uint64_t added_us);
/* Count a request from an upstream by how it ended (not sampling's). */
void		 metrics_up_request(struct upstream *, enum mcp_method,
		    enum metrics_up_outcome);
/* Count a sampling request by the link that ended its chain and the
 * outcome its audit line gives. */
void		 metrics_sampling(struct upstream *, const char *link,
		    const char *outcome);
/* Bytes to and from clients. */
void		 metrics_bytes(uint64_t in, uint64_t out);
/* Security refusals by reason ("host", "origin", "token", "limit"). */
void		 metrics_refused(const char *reason);
/* Write the whole exposition. */
void		 metrics_write(struct evbuffer *);
/* Count descriptors by reading /proc/self/fd even where the kernel
 * gives their number (the tests of kernels before 6.2). */
void		 metrics_fds_walk(int on);
/* Let go of a walk of descriptors under way (at exit). */
void		 metrics_free(void);
/* Is a request for /metrics?  Answer it. */
int		 metrics_path(const struct http_request *);
void		 metrics_serve(struct http_conn *, struct http_request *);

/* modern.c: 2026-07-28 requests on /mcp beside the 2025 eras. */
/* Does a POST claim the modern era (envelope, or a modern header)? */
int		 modern_claims(struct http_request *, const struct jrpc *);
/* Serve a POST that claims it (answered, whatever happens). */
void		 modern_post(struct http_conn *, struct http_request *,
		    const struct jrpc *);
/*
 * Check a modern tools/call's Mcp-Param-* headers against the arguments
 * its tool marks x-mcp-header; -1 if refused (answered -32020).
 */
int		 modern_check_params(struct req *, const struct catalog_entry *);
/* Refuse a GET or DELETE that names a modern version and no session. */
int		 modern_refuse_method(struct http_conn *, struct http_request *);
/* Answer with an error at an HTTP status (400 for the spec's codes). */
void		 modern_error(struct stream *, const char *id, size_t idlen,
		    int code, const char *data, const char *fmt, ...)
		    __attribute__((format(printf, 6, 7)));
/* Answer with a result for the request's era: resultType for
 * 2026-07-28, with ttlMs and cacheScope when cache is set. */
void		 modern_result(struct req *, const char *result, size_t len,
		    int cache);
/* Answer server/discover: the gateway's versions, capabilities and
 * identity. */
void		 modern_discover(struct req *);
/*
 * An upstream's error answer to a 2026-07-28 request, made that era's:
 * -32002 (resource not found) becomes -32602, and -32020, -32021 and
 * -32022 set the answer's HTTP status to 400.
 */
void		 modern_upstream_error(struct stream *, struct evbuffer *);
/* Answer a 2026-07-28 request (id) with a result object that has no
 * resultType yet: "complete" is added. */
void		 modern_answer(struct stream *, const char *id, size_t idlen,
		    const char *result, size_t len);
/* A 2026-07-28 request's stream went away: cancel what answers on it. */
void		 modern_stream_gone(struct stream *);

/* modern_listen.c: 2026-07-28 subscriptions/listen streams. */
void		 listen_open(struct req *);
/* Lists changed (bit 1 << kind): tell a modern session's listens. */
void		 listen_list_changed(struct session *, int changed);
/* A resource changed at an upstream: tell the listens that want it. */
void		 listen_resource_updated(struct session *, struct upstream *,
		    const char *uri);
/* A listen's stream is being freed. */
void		 listen_stream_gone(struct stream *);
/* A reload removed an upstream: end the session's listens holding a URI
 * there (its subscriptions there forgotten first). */
void		 listen_upstream_gone(struct session *, struct upstream *);
/* Shutting down: end every listen gracefully. */
void		 listen_close_all(void);

/* notify.c: the service manager's readiness protocol ($NOTIFY_SOCKET). */
void		 notify_init(void);
void		 notify_ready(void);
void		 notify_reloading(void);
void		 notify_stopping(const char *why);
/* Say how the upstreams are (STATUS=), when that changes. */
void		 notify_status(void);

/*
 * oauth.c: bearer tokens of the configured issuers (oauth = { ... }).  A
 * grant is what a valid token says: whose it is, what it may do.
 * Reference counted: the verdict cache holds one, each request and session
 * that uses it another.
 */
struct oauth_grant {
	unsigned int	 refs;
	uint64_t	 id;		/* the principal's hash: a session's
					   credential, never 0 */
	char		*issuer;
	char		*subject;
	char		**scopes;	/* NULL-terminated */
	char		*client;	/* the named client it maps to, or NULL */
	int		 rights;	/* AUTH_MCP, AUTH_METRICS */
	int64_t		 exp;		/* Unix seconds */
	json_t		*aud;		/* a reference to the token's aud, or
					   NULL */
};
enum oauth_status {
	OAUTH_GRANTED = 0,
	OAUTH_REFUSED,		/* 401 invalid_token */
	OAUTH_INSUFFICIENT,	/* 403 insufficient_scope: a valid token
				   without the scopes every request needs */
	OAUTH_PENDING		/* ask again once oauth_wait's cb has run */
};
/* The verdict on a token: a grant (a reference, OAUTH_GRANTED and
 * OAUTH_INSUFFICIENT), or why not (safe to log and to send). */
struct oauth_verdict {
	enum oauth_status	 status;
	struct oauth_grant	*grant;
	const char		*reason;	/* metrics label */
	char			 why[JOSE_WHY_MAX];
};
/* Use a configuration's oauth group (NULL: none); the cache is emptied. */
void		 oauth_configure(const struct conf *);
void		 oauth_shutdown(void);
/* Is OAuth configured? */
int		 oauth_enabled(void);
/*
 * Decide on a bearer token that is none of the static ones.  retry: the
 * caller waited once already, do not wait again.  OAUTH_PENDING: call
 * oauth_wait, then oauth_check again with retry set.
 */
void		 oauth_check(const char *token, size_t len, int retry,
		    struct oauth_verdict *);
/* Wait for what the last OAUTH_PENDING verdict on this token needs; cb(arg)
 * runs once, from the loop.  A handle for oauth_wait_cancel. */
uint64_t	 oauth_wait(const char *token, size_t len, void (*cb)(void *),
		    void *arg);
void		 oauth_wait_cancel(uint64_t);
struct oauth_grant *oauth_grant_ref(struct oauth_grant *);
void		 oauth_grant_unref(struct oauth_grant *);
/* Does the grant hold every scope of a list (NULL: none needed)?  The
 * first missing one in *missing. */
int		 oauth_grant_has(const struct oauth_grant *, char *const *scopes,
		    const char **missing);
/* Refuse a verdict's grant whose token is not for the endpoint a request
 * path is of: its aud must hold the resource, an extra audience, or one of
 * that endpoint's paths (RFC 8707); a path of no endpoint takes any of
 * ours. */
void		 oauth_check_path(struct oauth_verdict *, const char *path);
/* The challenge's parameters: resource_metadata and scope (a space-separated
 * list of what every request needs; "" for none). */
void		 oauth_challenge(const char *path, char *buf, size_t len,
		    const char *error, const char *why, char *const *scope);
/* Is path a protected resource metadata document?  Serve it. */
int		 oauth_metadata_path(const struct http_request *);
void		 oauth_metadata_serve(struct http_conn *, struct http_request *);
/* Does the session's token still have the scopes of every request and
 * of the upstream, for an update the upstream sends (1 without OAuth)? */
int		 oauth_may_hear(const struct session *, const struct upstream *);
/*
 * May a session use an upstream: NULL, or its challenge's data for the
 * JSON-RPC error (new; {"error":"insufficient_scope","scope":...,
 * "resource_metadata":...}) when its OAuth token lacks the upstream's
 * scopes.  Static tokens are not held to them.
 */
json_t		*oauth_upstream_refusal(const struct session *,
		    const struct upstream *);
/* The same for a POSTed request, before it is routed, so that it can be
 * refused with HTTP 403 (insufficient_scope) while no answer has begun:
 * tools/call, prompts/get, resources/read and subscribe of an upstream
 * the client may use.  NULL: go on. */
json_t		*oauth_post_refusal(struct session *, const struct jrpc *);
/* A request without a bearer token, or without an upstream's scopes, was
 * refused: count it. */
void		 oauth_no_token(void);
void		 oauth_insufficient(void);
/*
 * Milliseconds until a token whose exp is given (Unix seconds) expires,
 * exp plus leeway, at least 1; 0 if it never does (exp 0: a static
 * token, or none said).  A long connection it opened lasts no longer;
 * oauth_expired counts one closed.
 */
int64_t		 oauth_exp_left_ms(int64_t exp);
void		 oauth_expired(void);
/* Counters, for metrics.c: refusals by reason, the cache. */
void		 oauth_metrics(struct evbuffer *);
/* For mcpctl status. */
json_t		*oauth_status_json(void);

/*
 * observe.c: what is measured (metrics.c) and logged (access_log.c) of
 * each client request: a record that its struct req (below) holds while
 * it is routed, and that moves into what holds the request when it goes
 * on beyond that (to an upstream, a client's tool, or waiting for the
 * session's view), to be ended there.
 */
/* What the access log needs of a request, copied only when it is on or
 * the daemon logs at debug level (access_log_enabled). */
struct reqlog {
	char		 peer[48];
	char		 method[48];
	char		 name[160];	/* tool, prompt or URI; "" */
};

/* One request's record; all zero is "none". */
struct reqobs {
	int		 active;
	uint8_t		 method;	/* enum mcp_method it is counted as */
	uint8_t		 transport;	/* enum obs_transport */
	uint8_t		 client_tool;	/* to a client's tool */
	uint32_t	 session;	/* its number */
	int64_t		 t0;		/* us, monotonic: request read */
	int64_t		 t_fwd;		/* us: handed to the worker, or 0 */
	int64_t		 up_us;		/* us at the worker and upstream */
	struct upstream	*up;		/* where it went, or NULL */
	struct reqlog	*log;		/* owned, or NULL */
	struct trace	*trace;		/* owned, or NULL: not traced */
};

extern const char *const obs_outcome_names[OBS_NOUTCOMES];
extern const char *const obs_transport_names[OBS_NTRANSPORTS];
int64_t		 now_us(void);		/* monotonic microseconds */
/* A session's transport. */
enum obs_transport obs_session_transport(const struct session *);

/*
 * A client request being routed: made by route_request (or
 * route_resume) on its stack, for the time the request is routed, and
 * passed to every function on the path.  The message and its stream are
 * borrowed from the caller.  An answer given through it (route_result,
 * route_reject) ends its record; a request that goes on beyond routing
 * moves its record out (req_take) into what holds it (a pending request,
 * a call to a client's tool, a wait for the view), which ends it; what
 * is neither is ended as answered when routing returns.
 */
struct req {
	struct session		*session;
	struct stream		*stream;	/* where its answer goes */
	const struct jrpc	*m;		/* the request (method_id) */
	const char		*name;		/* the tool, prompt or URI it
						   routes by (borrowed), or
						   NULL: for rate limits */
	struct reqobs		 obs;		/* its record, until taken;
						   all zero: not observed */
	int			 inner;		/* call_tool's tools/call: the
						   client's Mcp-Param headers
						   were call_tool's */
};

/* Begin a request read now, or one that waited with its record (taken,
 * if it has one). */
void		 req_begin(struct req *, struct session *, struct stream *,
		    const struct jrpc *, struct reqobs *waited);
/* Routing is over: a record still held ends as answered. */
void		 req_finish(struct req *);
/* It is answered: its record ends (nothing if it was taken). */
void		 req_answered(struct req *, int outcome, int code);
/* What its record says: the tool, prompt or URI it names; the upstream
 * it goes to; a client's tool. */
void		 req_name(struct req *, const char *, size_t);
void		 req_upstream(struct req *, struct upstream *);
void		 req_client_tool(struct req *);
/* It goes on: its record moves to o. */
void		 req_take(struct req *, struct reqobs *o);

/* A record that went on: handed to the worker; the worker's answer is
 * in. */
void		 obs_sent(struct reqobs *);
void		 obs_returned(struct reqobs *);
/* End a record (nothing if it is not active). */
void		 obs_end(struct reqobs *, int outcome, int code);
/* An initialize read at t0, answered now (code 0: a result). */
void		 obs_initialize(struct session *, const char *peer,
		    enum obs_transport, const struct jrpc *, int64_t t0,
		    int code);

/* override.c: an upstream's tools = ( ... ), applied by the merge. */
/* The override of an upstream's tool (its own name), or NULL. */
const struct tool_override *override_find(const struct upstream *,
		    const char *tool, size_t len);
/* Set the title, description and annotations an override gives. */
void		 override_apply(const struct tool_override *, json_t *tool);

/*
 * pin.c: pinned tool definitions (pin.h has the rest).  The catalog asks
 * of each upstream tool whether it may be listed.
 */
void		 pin_init(void);
/* Write what is due, free every pin. */
void		 pin_free(void);
/* The global catalog is about to be merged again: nothing is held. */
void		 pin_merge_begin(void);
/* The running configuration of an upstream (NULL if not in conf), and
 * its pinning. */
const struct server_conf *pin_server_conf(const struct upstream *);
enum pinning	 pin_mode(const struct upstream *);
/* May an upstream's tool (its own definition) be listed as exposed?  It
 * is pinned the first time; 0 if it changed and is held back.  global:
 * the global catalog's merge, whose listing of the pinned definition
 * settles a change (a view's does not). */
int		 pin_check(struct upstream *, const json_t *tool,
		    const char *exposed, int global);
/* Is a tool held back?  1 with the error for a call in buf. */
int		 pin_held_error(const char *exposed, char *buf, size_t len);
void		 pin_metrics_write(struct evbuffer *);

/* pin_ctl.c: what mcpctl asks of the pins. */
/* A warning for mcpctl status and check while tools are held back. */
void		 pin_health(json_t *warnings);
/* mcpctl tools pins, diff and approve ("pins", "pin_diff",
 * "pin_approve"): the reply. */
json_t		*pin_control(const char *cmd, json_t *req);

/* pin_store.c: where pins are kept (state_dir/pins.json). */
/* Keep pins in dir (state_dir; configured: set in the file, so it must
 * be there); -1 with err set if it or its pins.json cannot be used. */
int		 pin_open(const char *dir, int configured, char *err,
		    size_t errlen);

/* preflight.c: what startup checks beyond the file's syntax. */
#define PREFLIGHT_RELOAD	0x1	/* the listen addresses are kept */
#define PREFLIGHT_WIDE		0x2	/* listen reaches beyond loopback */
#define PREFLIGHT_MWIDE		0x4	/* metrics_listen does */
/*
 * Check a configuration; warnings go to warn; -1 with err set.  At the
 * start the listen addresses are resolved and scope (if not NULL) set to
 * their PREFLIGHT_WIDE and PREFLIGHT_MWIDE; a reload keeps them, so its
 * flags give those of the start (listen_scope), and nothing is resolved.
 */
int		 preflight(const struct conf *, int flags, int *scope,
		    void (*warn)(const char *), char *err, size_t errlen);

/*
 * proc.c: the supervisor's children (mcp-worker, mcp-llm).  A record per
 * child, in its owner, and a table of callbacks per kind of child: proc.c
 * starts, watches, stops, reaps and restarts it, the kind (upstream.c,
 * provider.c) says what its frames mean and keeps its own states.
 */
/* How a kind of child is restarted and bounded (proc_configure). */
struct proc_policy {
	unsigned int	 first_delay;	/* seconds of backoff, doubling */
	unsigned int	 max_delay;	/* up to this */
	int64_t		 healthy_ms;	/* ready this long: backoff reset */
	unsigned int	 max_failures;	/* deaths in a row; 0: no limit */
	unsigned int	 start_timeout;	/* seconds it has to be ready */
	size_t		 frame_max;	/* the largest frame it may send */
};

/* What became of a child that exited, as its kind hears it. */
enum proc_fate {
	PROC_REMOVED = 0,	/* after proc_remove: the owner frees itself */
	PROC_RESPAWNED,		/* restart_now: started again right after */
	PROC_STOPPED,		/* it was asked to stop (proc_stop) */
	PROC_REFUSED,		/* WORKER_EXIT_CONFIG: not started again */
	PROC_GAVE_UP,		/* max_failures deaths in a row */
	PROC_BACKOFF		/* started again after backoff seconds */
};

/* A kind of child; each callback gets the record's owner (arg). */
struct proc_kind {
	const char	*what;		/* its log lines' first word */
	/* Start a child: proc_spawn with its program and argv. */
	void		 (*start)(void *);
	/* Its CONFIG frame's payload (a new reference), sent first. */
	json_t		*(*config)(void *);
	/* One whole frame from the child; -1 if the channel is corrupt. */
	int		 (*frame)(void *, const struct frame_hdr *,
			    struct evbuffer *);
	/* The channel is gone: fail what the child held. */
	void		 (*lost)(void *);
	/* It was not ready within start_timeout. */
	void		 (*start_timeout)(void *);
	/* It exited (how: "exited with status 3", "killed by signal 9"). */
	void		 (*exited)(void *, int status, const char *how,
			    enum proc_fate);
};

/* One child process; owned by the structure it is in. */
struct proc {
	const struct proc_kind	*kind;
	void			*arg;		/* its owner */
	char			*name;		/* owned copy */
	struct proc_policy	 policy;
	pid_t			 pid;		/* or -1 */
	struct iochan		*ch;		/* its channel, or NULL */
	struct event		*timer;		/* start, stop or backoff */
	int			 timer_for;	/* which (proc.c) */
	int			 stopping;	/* asked to stop */
	int			 restart_now;	/* start again once it exits */
	int			 removed;	/* its owner is going away */
	unsigned int		 delay;		/* next backoff, seconds */
	unsigned int		 backoff;	/* the one under way */
	unsigned int		 failures;	/* deaths in a row */
	unsigned int		 restarts;
	int64_t			 started;	/* monotonic ms of spawn */
	int64_t			 ready_at;	/* monotonic ms of ready; 0 */
	char			*last_error;	/* or NULL */
	time_t			 last_error_at;	/* wall clock, or 0 */
	TAILQ_ENTRY(proc)	 entry;
};

/* Set a record up (no child yet); proc_free releases what it holds. */
void		 proc_init(struct proc *, const struct proc_kind *, void *);
void		 proc_free(struct proc *);
/* Its name (copied) and policy, at first and after a reload. */
void		 proc_configure(struct proc *, const char *name,
		    const struct proc_policy *);
/* Start the count afresh: no failures, the first delay next. */
void		 proc_reset(struct proc *);
/* Record the last error, shown by mcpctl status. */
void		 proc_error(struct proc *, const char *, ...)
		    __attribute__((format(printf, 2, 3)));
/*
 * Fork and exec a child (spawn_worker), send its CONFIG frame and give it
 * start_timeout to be ready.  -1 if it could not be started: logged,
 * recorded, and started again after the delay.
 */
int		 proc_spawn(struct proc *, const char *path,
		    char *const argv[], int net);
/* The child is ready: no start timeout, its healthy time counts. */
void		 proc_ready(struct proc *);
/* Ask the child to stop (SHUTDOWN, or SIGTERM without a channel);
 * SIGKILL after a grace time.  Without a child, no restart is due. */
void		 proc_stop(struct proc *);
/* Stop the child and start a new one once it has exited (count reset). */
void		 proc_restart(struct proc *);
/* The same for a child already stopping or exiting. */
void		 proc_restart_after(struct proc *);
/* The owner is going: when the child exits, PROC_REMOVED (no restart). */
void		 proc_remove(struct proc *);
/* Kill the child and drop its channel unread (it is corrupt or stuck). */
void		 proc_kill(struct proc *, const char *why);
/* The child is gone or going: read what it left, drop the channel, kill
 * it if it still runs. */
void		 proc_lost(struct proc *, const char *why);
/* Is its timer armed (a start, a stop or a restart is due)? */
int		 proc_timer_pending(const struct proc *);
/* Reap every exited child (SIGCHLD). */
void		 proc_reap(void);
/* Has every child exited? */
int		 proc_all_exited(void);

/*
 * provider.c: one worker (mcp-llm) per LLM provider, supervised and
 * restarted like upstream workers, with its budget and counters.
 */
enum provider_state {
	PROVIDER_STARTING = 0,
	PROVIDER_READY,
	PROVIDER_BACKOFF,
	PROVIDER_STOPPED,
	PROVIDER_FAILED		/* its configuration was refused */
};

struct provider {
	struct llm_conf		*lc;		/* owned copy */
	struct proc		 proc;		/* its worker */
	enum provider_state	 state;
	struct budget		 budget;
	unsigned int		 inflight;
	/* Counters since the daemon started. */
	uint64_t		 requests;	/* sent to its worker */
	uint64_t		 answered;
	uint64_t		 errors;	/* of any outcome but ok */
	uint64_t		 refused;	/* budget or busy: not sent */
	uint64_t		 rate_limited;	/* 429 */
	uint64_t		 timeouts;
	uint64_t		 tokens_in;
	uint64_t		 tokens_out;
};

extern const char	*llm_worker_path;
void		 provider_init_all(void);
/* Apply a new configuration's providers (reload). */
void		 provider_apply(const struct conf *, json_t *report);
void		 provider_stop_all(void);
struct provider	*provider_find(const char *);
/* Send a request; -1 with why if the provider cannot take it now. */
int		 provider_request(struct provider *, uint32_t tag,
		    struct evbuffer *payload, char *why, size_t);
void		 provider_cancel(struct provider *, uint32_t tag);
json_t		*provider_status_json(void);

/* proxy.c: trusted_proxies, the PROXY protocol and X-Forwarded-For. */
/* Take the configuration's trusted_proxies (start, reload). */
void		 proxy_configure(void);
int		 proxy_trusted(const struct netaddr *);
/*
 * The client a request is from: 1 with *client set when conn (the
 * connection's peer) is a trusted proxy and the request has
 * X-Forwarded-For, 0 when the peer is conn, -1 (why set) if that header is
 * malformed.
 */
int		 proxy_request_peer(const struct netaddr *conn,
		    const struct http_head *, struct netaddr *client,
		    const char **why);

/*
 * rate.c: rate limits, token buckets per principal or shared.  The clock
 * is now_ms; a test harness may set another.
 */
extern int64_t	 (*rate_clock)(void);
/* Take the configuration's rules (start, reload): every bucket full. */
void		 rate_configure(void);
void		 rate_free(void);
/* The principal a session's calls are counted as ("subject HEX",
 * "client NAME", "token HEX", "peer ADDRESS"). */
void		 rate_principal(const struct session *, char *, size_t);
/* May a session's call to an upstream, naming a tool, prompt or URI
 * (or NULL), go?  0 (a token taken from each bucket it matches, and
 * *hold set to the calls in flight it counts in, or NULL), or -1 with
 * why (nothing taken). */
int		 rate_admit(const struct session *, const struct upstream *,
		    const char *name, struct refusal *, struct rate_hold **hold);
/* A call that held calls in flight ended: free them (and hold). */
void		 rate_release(struct rate_hold *);
/* A request a rate limit refused: a 2026-07-28 one whose answer has not
 * begun is answered at HTTP 429 with Retry-After. */
void		 rate_refused(struct req *, const struct refusal *);
void		 rate_metrics(struct evbuffer *);
json_t		*rate_status_json(void);

/* reload.c: read the configuration again and apply it; the reply. */
json_t		*reload(void);
/* Append a name to the report's array key (made if missing). */
void		 reload_report_name(json_t *report, const char *key,
		    const char *name);

/* route.c: client messages to upstreams, and the answers route*.c share. */
/* Handle a client request; the reply goes to stream. */
void		 route_request(struct session *, struct stream *,
		    const struct jrpc *);
/* The same for a request that waited for its session's view, keeping
 * the record it waited with (taken). */
void		 route_resume(struct session *, struct stream *,
		    const struct jrpc *, struct reqobs *);
/* One message of a legacy or WebSocket session (initialize included). */
void		 route_message(struct session *, struct stream *,
		    const struct jrpc *);
/* Handle a client notification or response. */
void		 route_notification(struct session *, const struct jrpc *);
/* The largest initialize params taken (capabilities and clientInfo). */
#define INITIALIZE_PARAMS_MAX	65536
/* Build an initialize result for a new session; NULL + error if bad. */
json_t		*route_initialize(struct session *, const struct jrpc *,
		    int *code, char *err, size_t errlen);
/* Reply to a request with an error, with data (JSON text) or NULL; none
 * without a stream. */
void		 route_error_send(struct stream *, const char *id, size_t idlen,
		    int code, const char *data, const char *msg);
/* Reply to a request with an error (consumes nothing). */
void		 route_error(struct stream *, const char *id, size_t idlen,
		    int code, const char *fmt, ...)
		    __attribute__((format(printf, 5, 6)));
/* A session's request in flight by the client's raw id, or NULL. */
struct pending	*route_find_client_id(struct session *, const char *id,
		    size_t len);
/* Answer a request being routed (its record ends). */
void		 route_result(struct req *, const char *result, size_t len);
void		 route_reject(struct req *, int code, const char *fmt, ...)
		    __attribute__((format(printf, 3, 4)));
void		 route_reject_data(struct req *, int code, const char *data,
		    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Read a request's URI parameter; answers the error itself. */
char		*route_get_uri(struct req *, const char *const *path,
		    struct upstream **);
/* The same for letting go: a URI the session is subscribed to gives the
 * upstream holding it, though it may list it no longer. */
char		*route_held_uri(struct req *, const char *const *path,
		    struct upstream **);
/* Route r as the tools/call m (call_tool: m names the tool; r's stream,
 * record and session stay). */
void		 route_tool_call(struct req *, const struct jrpc *m);

/* route_answer.c: frames from workers about requests: the answers. */
/* Frames from a worker that concern requests. */
void		 route_worker_frame(struct upstream *, const struct frame_hdr *,
		    struct evbuffer *);
/* Take a frame's payload into a new buffer (caller frees). */
struct evbuffer	*route_payload(const struct frame_hdr *, struct evbuffer *);

/* route_notify.c: notifications from upstreams to their sessions. */
/* Tell a session (NULL: every session on the global catalog) which
 * lists changed (bit 1 << kind for each). */
void		 route_list_changed(struct session *, int changed);
void		 route_notify_stream(struct stream *, const char *method,
		    const char *params);
/* Where a message related to a request (or session) should go. */
struct stream	*route_target(struct upstream *, const struct frame_hdr *,
		    struct session **);
void		 route_notify(struct upstream *, const struct frame_hdr *,
		    struct evbuffer *);

/* route_pending.c: pending requests, and the gateway's own calls. */
/*
 * The answer to a call of the gateway's own (route_call): the response
 * (a result or an error), or NULL with a gateway error (the upstream is
 * gone, the call timed out).  The pending request is freed after.
 */
typedef void	(*route_call_cb)(struct pending *, const struct jrpc *,
		    int code, const char *error, void *arg);
enum pending_hook {
	HOOK_NONE = 0,
	HOOK_SUBSCRIBE,		/* record the subscription on success */
	HOOK_WITHDRAWN		/* a subscribe its session unsubscribed
				   before the answer: undo on success */
};

struct pending {
	uint32_t		 tag;
	struct session		*session;
	struct upstream		*up;
	struct stream		*stream;	/* where the reply goes, or
						   NULL for the gateway's own */
	enum pending_hook	 hook;
	char			*uri;		/* for the hooks */
	struct evbuffer		*queued;	/* text, while it waits for
						   its upstream to start */
	char			*id;		/* raw client id text */
	size_t			 idlen;
	int			 own;		/* the gateway's (id 0): no
						   client may cancel it */
	enum mcp_method		 method;	/* a method of the table */
	struct event		*timer;
	struct reqobs		 obs;		/* the client's request */
	route_call_cb		 cb;		/* the gateway's own call */
	void			*cb_arg;
	struct parked		*parked;	/* waiting for its client's
						   input (continuation.c) */
	int			 rebound;	/* answers a retry: splice id */
	char			*token;		/* the retry's progressToken */
	size_t			 tokenlen;
	unsigned char		 binding[32];	/* of a modern call: what its
						   retry must repeat */
	uint8_t			 limit;		/* LIMIT_EXEMPT, _CALL, _PROBE */
	uint8_t			 slot;		/* holds a slot (limit.c) */
	uint8_t			 waiting;	/* waits for one */
	uint8_t			 relevel;	/* an own setLevel whose
						   session(s) changed level
						   since: send it again */
	struct rate_hold	*rate_hold;	/* owned: its calls in flight
						   (rate.c), or NULL */
	TAILQ_ENTRY(pending)	 wait_entry;
	TAILQ_ENTRY(pending)	 up_entry;
	TAILQ_ENTRY(pending)	 session_entry;
};

void		 route_init(void);
/* An upstream became ready: renew its subscriptions and log level, and
 * send the requests that waited for it. */
void		 route_upstream_ready(struct upstream *);
/* Answer every request pending on an upstream with an error. */
void		 route_fail_upstream(struct upstream *, int code,
		    const char *message, int keep_queued);
/* Forget every request of a session (cancelling them upstream). */
void		 route_cancel_session(struct session *);
void		 route_pending_free(struct pending *);
/* Tell the worker a request is cancelled (if it was sent). */
void		 route_pending_cancel(struct pending *, const char *reason);
/* (Re)arm a pending request's request_timeout. */
void		 route_pending_arm(struct pending *);

/* Forget a session's subscriptions and requests (at session end). */
void		 route_session_end(struct session *);
/* Forward a client request, with edits applied to its text; its record
 * goes on in the pending request. */
struct pending	*route_forward(struct req *, struct upstream *,
		    const struct jedit *, size_t nedits);
/*
 * Call an upstream for the gateway itself (params: JSON text, which the
 * call may drain; the caller frees it): cb gets the answer.  NULL with
 * why set if it cannot be sent.
 */
struct pending	*route_call(struct upstream *, enum mcp_method,
		    struct evbuffer *params, route_call_cb, void *arg,
		    char *why, size_t);
/* Cancel such a call: no callback. */
void		 route_call_abandon(struct pending *);
/* Send a request of the gateway's own (params taken); answer dropped.
 * The pending request, or NULL. */
struct pending	*route_internal(struct upstream *, struct session *,
		    enum mcp_method, json_t *params);
/* Its text, with other params (taken), while it waits for its upstream
 * to start; -1 if it was sent. */
int		 route_internal_retext(struct pending *, json_t *params);
/* A stream is being freed: requests forget it. */
void		 route_stream_gone(struct stream *);
/* The pending request with a tag, or NULL. */
struct pending	*route_pending_find(uint32_t tag);
/* Answer a pending request with an error and free it. */
void		 route_pending_fail(struct pending *, int code,
		    const char *msg);
/* The same with data (JSON text, or NULL). */
void		 route_pending_fail_data(struct pending *, int code,
		    const char *data, const char *msg);
/* Send a request that waited (its text in p->queued). */
void		 route_pending_send(struct pending *);

/* route_sub.c: subscriptions and log levels held at upstreams. */
/* Forget every session's subscriptions at an upstream being removed. */
void		 route_forget_upstream(struct upstream *);
void		 route_subscription(struct req *, int subscribe);
void		 route_subscribed(struct session *, struct upstream *,
		    const char *uri);
/* A withdrawn subscribe succeeded: let go at the upstream, unless held. */
void		 route_sub_undo(struct pending *);
/* The upstream a session's subscribe to a URI is on its way to, or NULL. */
struct upstream	*route_sub_inflight(struct session *, const char *uri);
void		 route_set_level(struct req *);
void		 route_forward_level(struct upstream *, struct session *);
/* The gateway's setLevel to an upstream (for a session, or NULL) ended,
 * answered or not; relevel: levels changed meanwhile, send the level of
 * now.  Not from a walk of the upstream's pendings. */
void		 route_level_ended(struct upstream *, struct session *,
		    int relevel, int answered);
/* A restarted upstream: renew subscriptions and log levels. */
void		 route_sub_renew(struct upstream *);
/* Forget a shared upstream's subscribers (it holds no subscription). */
void		 route_subs_clear(struct upstream *);
/* Call fn for each session subscribed to a URI at a shared upstream: an
 * update goes to them, not to a walk of every session. */
void		 route_subscribers_each(struct upstream *, const char *uri,
		    void (*)(struct session *, void *), void *);
/* Release an ending session's subscriptions and level. */
void		 route_sub_session_end(struct session *);
/* Hold a subscription for a 2026-07-28 listen, at the upstream that lists
 * the URI unless the session holds it already: the upstream holding it
 * (whose updates the listen hears); and let go of it. */
struct upstream	*route_sub_acquire(struct session *, struct upstream *,
		    const char *uri);
void		 route_sub_release(struct session *, const char *uri);

/* route_up.c: requests from upstreams to clients, by strategy. */
/* A request from an upstream, waiting for a client's answer. */
struct up_request {
	uint64_t		 id;		/* ours, towards the client */
	uint32_t		 ref;		/* the worker's reference */
	uint32_t		 call_tag;	/* the call it came with, or 0 */
	struct session		*session;
	struct upstream		*up;
	struct stream		*stream;	/* where it was sent */
	char			 method[JRPC_METHOD_MAX];
	enum mcp_method		 method_id;
	char			*text;		/* the request, id = ref */
	size_t			 len;
	size_t			 strategy;	/* index of "client" */
	struct event		*timer;
	TAILQ_ENTRY(up_request)	 up_entry;
	TAILQ_ENTRY(up_request)	 session_entry;
};
void		 route_up_request(struct upstream *, const struct frame_hdr *,
		    struct evbuffer *);
void		 route_client_response(struct session *, const struct jrpc *);
struct up_request *route_find_up_request(struct session *, const char *,
		    struct jspan id);
void		 route_up_request_free(struct up_request *);
void		 route_up_error(struct upstream *, uint32_t session,
		    uint32_t ref, int code, const char *msg);
void		 route_up_cancel_client(struct up_request *, const char *);
/* Does a call's upstream wait for its client or sampling chain? */
int		 route_up_waiting(const struct pending *);
/* A new id for a request the gateway sends a client. */
uint64_t	 route_next_id(void);
/*
 * A request from an upstream to a client (sampling, elicitation, roots,
 * ping), as its strategies see it; borrowed by the functions it is
 * passed to, made by whoever read or kept the request.
 */
struct up_ask {
	struct upstream		*up;
	struct session		*session;	/* that caused it, or NULL */
	struct stream		*stream;	/* where its client is asked,
						   or NULL */
	uint32_t		 session_no;	/* the worker's, for answers */
	uint32_t		 tag;		/* the call it came with, or 0 */
	uint32_t		 ref;		/* the worker's reference */
	const struct jrpc	*m;		/* the request (id = ref) */
};
/*
 * Send an upstream's request to the client that caused it (the strategy
 * at index strategy); 0 if sent, else -1 with why and an error code.
 */
int		 route_up_client(const struct up_ask *, size_t strategy,
		    char *why, size_t, int *code);
/* Answer an upstream's request with a result (JSON text). */
void		 route_up_result(struct upstream *, uint32_t session,
		    uint32_t ref, const char *result);
/* Decline a sampling request ("User rejected", the reason in data). */
void		 route_up_reject_sampling(struct upstream *, uint32_t session,
		    uint32_t ref, const char *reason);
/* Go on with an upstream request's strategies, from the given one (why
 * and code: what the one before ended with, or NULL and 0). */
void		 route_up_strategies(const struct up_ask *, size_t from,
		    const char *why, int code);
/* An upstream cancelled a request it sent a client. */
void		 route_up_cancelled(struct upstream *, const struct jrpc *);

/* A request of a strategy list: the list and its length. */
const enum strategy *route_up_list(const struct upstream *, enum mcp_method,
		    size_t *);
/* Does a client's capabilities object declare what a request needs?  If
 * not, why and the error (code may be NULL): -32601 without the
 * capability, -32602 without the mode or tool use asked for. */
int		 route_caps_can(json_t *caps, const struct jrpc *, char *why,
		    size_t, int *code);

/*
 * sampling.c: sampling/createMessage by its upstream's chain of links:
 * client, llm:NAME, tool:UPSTREAM/TOOL, decline.  One audit line each.
 */
/*
 * Run the chain from link from (a new request: 0, with the tag of the
 * call it came with; a client link that could not answer: the next).
 */
void		 sampling_chain(const struct up_ask *, size_t from,
		    const char *why, int code);
/*
 * The request was answered or ended outside the chain (the client
 * answered, the upstream cancelled it, the session ended): its audit line
 * says outcome ("ok", "rejected", "error", "cancelled") and why (or NULL).
 */
void		 sampling_end(struct upstream *, uint32_t ref,
		    const char *outcome, const char *why);
/* An upstream is gone: forget its requests. */
void		 sampling_upstream_gone(struct upstream *);
/* A session ended: stop the provider requests and tool calls its calls
 * caused, and answer their upstreams. */
void		 sampling_session_end(uint32_t session);
/* Does the chain run a sampling request of the call tag's? */
int		 sampling_waiting(const struct upstream *, uint32_t tag);
/* Frames of a provider's worker about a request (tag). */
void		 sampling_llm_frame(struct provider *,
		    const struct frame_hdr *, struct evbuffer *);
/* A provider cannot answer what it was asked: fall through. */
void		 sampling_provider_down(struct provider *, const char *why);

/* session.c: client sessions. */
struct session {
	/* What a broadcast's round reads of every session, first: 96
	 * bytes, two or three cache lines, not one a field (broadcast.c). */
	int			 initialized;
	int			 modern;	/* the 2026-07-28 requests of one
						   principal (modern.c) */
	struct stream		*only;		/* legacy or WebSocket: its one
						   stream, for everything */
	int			 loglevel;	/* -1: not set */
	struct view		*view;		/* NULL: the global catalog */
	TAILQ_HEAD(, stream)	 streams;
	uint64_t		 bcast_no;	/* the last broadcast it had */
	uint64_t		 view_left;	/* the last broadcast issued when
						   it left its view: list
						   changes up to it were in
						   what the view told it */
	struct vendpoint	*vep;		/* its endpoint, or NULL: /mcp */
	TAILQ_ENTRY(session)	 entry;
	uint64_t		 order;		/* of creation, from 1 */
	/* The rest. */
	uint32_t		 no;		/* number in frames */
	uint64_t		 key;		/* first 64 bits of id */
	char			 id[33];	/* hex, 128 random bits (logs
						   show its first 8) */
	char			 sid[CONF_INSTANCE_MAX + 34];	/* the id
						   clients see: "<instance>.<id>" */
	char			 version[16];	/* negotiated protocol */
	json_t			*client_caps;
	json_t			*client_info;
	int			 legacy;	/* HTTP+SSE (2024-11-05) */
	uint8_t			 transport;	/* enum obs_transport */
	int64_t			 created;	/* monotonic ms */
	char			 peer[48];	/* who created it */
	unsigned int		 nparked;	/* its parked calls */
	unsigned int		 nlistens;	/* its subscriptions/listen */
	struct strmap		 listen_subs;	/* uri -> listens wanting it */
	uint64_t		 credential;	/* of the request that made it */
	char			*client_name;	/* a named client's, or NULL */
	struct oauth_grant	*grant;		/* the OAuth token of its last
						   request (a reference), or
						   NULL */
	/* Tools it registered, and calls to and from client tools. */
	char			*ctool_prefix;	/* "<client>__", once chosen */
	unsigned int		 nctools;
	size_t			 ctool_bytes;	/* they hold, overhead counted */
	TAILQ_HEAD(, ctcall)	 ctcalls_in;	/* to its tools */
	TAILQ_HEAD(, ctcall)	 ctcalls_out;	/* it made */
	unsigned int		 nctcalls;	/* to its tools */
	unsigned int		 nctcalls_out;	/* it made */
	int64_t			 last_active;
	struct pending_list	 pending;
	unsigned int		 npending;
	struct up_request_list	 up_requests;	/* awaiting our client */
	unsigned int		 nup_requests;
	struct strmap		 subs;		/* uri -> upstream */
	TAILQ_HEAD(, view_part)	 parts;		/* per-session upstreams */
	TAILQ_HEAD(, view_wait)	 waiting;	/* requests for the view */
	unsigned int		 nwaiting;
	struct event		*view_timer;
	unsigned int		 view_gen;	/* parts checked at */
	int			 view_flushing;	/* answering what waited */
	int			 listed;	/* answered from its view */
	unsigned int		 nstreams;
	uint32_t		 next_stream;
	TAILQ_ENTRY(session)	 vep_entry;	/* its endpoint's sessions */
	struct trace_in		*trace_in;	/* trace context of its HTTP
						   request or WebSocket
						   upgrade (trace.c), or NULL */
	TAILQ_ENTRY(session)	 modern_entry;	/* if modern */
	LIST_HEAD(, listen)	 listens;	/* its subscriptions/listen
						   (modern_listen.c) */
};

/*
 * A walk over the sessions a slice at a time, so that 100,000 of them do
 * not hold the loop: fn is called for each session that existed when the
 * walk began, in order of creation, at most slice per turn of the loop
 * (the first slice at once); one ended meanwhile is left out, one made
 * meanwhile is not visited.  The owner embeds it; session.c lists those
 * under way.
 */
struct session_walk {
	void			(*fn)(struct session *, void *);
	void			*arg;
	unsigned int		 slice;
	int			 busy;		/* under way */
	struct session		*next;		/* to visit next */
	uint64_t		 end;		/* visits orders before it */
	int			 wraps;		/* then from the first session */
	uint64_t		 wrap_end;	/* to orders before this */
	struct event		*ev;		/* the next slice (owned) */
	TAILQ_ENTRY(session_walk) entry;	/* on the list under way */
};
void		 session_walk_init(struct session_walk *,
		    void (*)(struct session *, void *), void *arg,
		    unsigned int slice);
/* Begin a walk from the first session; one under way goes on from where
 * it is to the last, then from the first to there (a walk begun again and
 * again still reaches every session). */
void		 session_walk_begin(struct session_walk *);
void		 session_walk_stop(struct session_walk *);
/* Visit every session the walk has yet to visit, now, and stop it. */
void		 session_walk_finish(struct session_walk *);
/* Is the session one the walk has yet to visit? */
int		 session_walk_ahead(const struct session_walk *,
		    const struct session *);

void		 session_init(void);
/* Apply the configuration's session_timeout (at start and reload). */
void		 session_configure(void);
/* Create a session for a peer (its address, for the log) on a transport
 * (enum obs_transport); NULL if refused (session_refusal says why). */
struct session	*session_new(const char *peer, uint8_t transport);
/* Why session_new() refused: the text for the client's 503. */
const char	*session_refusal(void);
void		 session_free(struct session *, const char *why);
void		 session_free_all(void);
/* Find a session by the id clients see ("<instance>.<32 hex>"). */
struct session	*session_find(const char *id, size_t len);
/*
 * The session that holds the 2026-07-28 requests of a principal (a
 * credential and the client it names, at an endpoint or NULL for /mcp):
 * found or made, for a peer (the address that made it); NULL if refused
 * (session_refusal says why).
 */
struct session	*session_modern(uint64_t credential, const char *client,
		    struct vendpoint *, const char *peer);
/* The principal of a session, as text ("<credential hex>/<client>",
 * and "@<hash of its endpoint's path>" at an endpoint). */
void		 session_principal(const struct session *, char *, size_t);
struct session	*session_by_no(uint32_t);
void		 session_touch(struct session *);
/* Record the token that made a session and the client it names. */
void		 session_identity(struct session *, uint64_t credential,
		    const char *client);
/* Record the OAuth grant of its latest request (NULL: none). */
void		 session_grant(struct session *, struct oauth_grant *);
unsigned int	 session_count(void);
/* The sessions open on a transport (enum obs_transport): counted as they
 * are made and ended, so that a scrape need not walk them. */
unsigned int	 session_count_transport(uint8_t);
/*
 * The sessions a drain waits for: every client's, and a 2026-07-28
 * principal's (which no client ends) only while it has requests in
 * flight, parked calls or listens.  Only the principals' are looked at,
 * so that a drain ending 100,000 sessions does not walk them each time.
 */
unsigned int	 session_count_busy(void);
/* Call fn for every session. */
void		 session_foreach(void (*)(struct session *, void *), void *);
/* The same for the 2026-07-28 principals' sessions only. */
void		 session_modern_foreach(void (*)(struct session *, void *),
		    void *);
/* The sessions in order of creation: the first, the one after; the
 * last, the one before. */
struct session	*session_first(void);
struct session	*session_next(struct session *);
struct session	*session_last(void);
struct session	*session_prev(struct session *);
/* A session asks for a log level (an index of log_level_index; -1:
 * none), counted so that the most verbose any asked for, or -1, is found
 * without a walk. */
void		 session_set_loglevel(struct session *, int level);
int		 session_min_loglevel(void);
/* Where messages not tied to a request go: the legacy stream, or the
 * standalone stream (number 0), created on demand. */
struct stream	*session_get_stream(struct session *);
/* Log levels: index in the syslog-style list, or -1 if unknown. */
int		 log_level_index(const char *);
const char	*log_level_name(int);

/* spawn.c: fork and exec a worker. */
/*
 * Fork and exec a worker with its channel on fd 3 (*chfd is our end,
 * non-blocking) and the few variables of our environment it needs (net:
 * those of libcurl and OpenSSL too); -1 with err set.
 */
pid_t		 spawn_worker(const char *path, char *const argv[], int net,
		    int *chfd, char *err, size_t errlen);
/*
 * In-process test harnesses (t/unit/sup_harness.c) play the workers: when
 * set, spawn_worker calls this instead, which returns a pid that no
 * process has and its own end of a channel in *chfd.  NULL in the daemon.
 */
typedef pid_t	(*spawn_hook_fn)(const char *, char *const [], int, int *,
		    char *, size_t);
extern spawn_hook_fn	 spawn_hook;
/* And this instead of waitpid(-1, status, WNOHANG) in proc_reap: those
 * workers exit when the harness says.  NULL in the daemon. */
typedef pid_t	(*reap_hook_fn)(int *status);
extern reap_hook_fn	 reap_hook;
/* The named variables we have, as {"NAME": "value"} (a new reference). */
json_t		*spawn_passed_env(char *const *names);
/* Values with the ${env:NAME} references we can expand expanded (a new
 * array; see secret_expand_env). */
json_t		*spawn_expand_env(char *const *values);

/* stream.c: where a session's outgoing messages go. */
enum stream_kind {
	STREAM_JSON = 0,	/* one JSON response body */
	STREAM_POST,		/* an event stream answering a POST */
	STREAM_GET,		/* the standalone stream (number 0) */
	STREAM_LEGACY,		/* the 2024-11-05 HTTP+SSE stream */
	STREAM_WS,		/* a WebSocket session's connection */
	STREAM_MODERN,		/* an event stream answering one 2026-07-28
				   request: no event ids, no replay */
	STREAM_LISTEN,		/* a 2026-07-28 subscriptions/listen */
	STREAM_NKINDS
};
TAILQ_HEAD(stream_events, stream_event);
TAILQ_HEAD(stream_passing, stream);

struct stream {
	struct session		*session;
	uint32_t		 no;
	enum stream_kind	 kind;
	struct http_conn	*conn;		/* borrowed; NULL if detached */
	uint32_t		 seq;		/* of the last event */
	uint32_t		 sent;		/* last seq written anywhere */
	struct stream_events	 events;	/* kept for replay */
	size_t			 nevents;
	size_t			 bytes;		/* of every event kept */
	size_t			 nspare;	/* spare events (stream_priv.h) */
	size_t			 owed;		/* bytes of the others */
	struct stream_event	*unpassed;	/* the oldest event its
						   connection's output still
						   holds, or NULL */
	uint32_t		 dropped;	/* seq of the newest event
						   dropped, or 0 */
	size_t			 heap_pos;	/* in the heap of streams by owed
						   bytes; 0 if not */
	int			 done;		/* final response sent */
	int			 opened;	/* a connection ever took it */
	int64_t			 done_at;
	/* A 2026-07-28 request's. */
	int			 modern;
	int			 status;	/* of a JSON answer: 200 */
	int			 level;		/* its logLevel, -1: none */
	char			*caps;		/* its clientCapabilities */
	json_t			*params;	/* its Mcp-Param-* headers, by
						   lowercase name, or NULL */
	unsigned int		 retry_after;	/* of a JSON answer: its
						   Retry-After, or 0 */
	struct listen		*listen;	/* STREAM_LISTEN */
	int			 unrouted;	/* nothing routes to it now */
	struct http_conn	*passing;	/* borrowed: the connection
						   whose output still holds
						   its response, or NULL */
	TAILQ_ENTRY(stream)	 pass_entry;	/* that connection's list */
	TAILQ_ENTRY(stream)	 entry;
};

/* Create a stream; POST and GET streams start their HTTP response. */
struct stream	*stream_new(struct session *, enum stream_kind,
		    struct http_conn *);
void		 stream_free(struct stream *);
struct stream	*stream_find(struct session *, uint32_t no);
/*
 * Send one message (all of msg is consumed).  final marks the response
 * that ends a POST stream.
 */
void		 stream_send(struct stream *, struct evbuffer *msg, int final);
/* The connection of a stream went away. */
void		 stream_detach(struct stream *);
/* A connection's output passed more to the kernel: what its streams
 * wrote there is delivered as far as we can tell. */
void		 stream_conn_passed(struct http_conn *);
/* A connection goes: finished streams whose response it still held are
 * kept for a resumption. */
void		 stream_conn_gone(struct http_conn *);
/* The request of a stream was cancelled: no response will come. */
void		 stream_abandon(struct stream *);
/*
 * Attach a GET connection to a stream, replaying the events after seq
 * (and, for the standalone stream without Last-Event-ID, those never sent).
 */
void		 stream_resume(struct stream *, struct http_conn *,
		    uint32_t after, int have_last);
/* Free streams that are complete and past their replay time. */
void		 stream_expire(struct session *, int64_t now);
/* The token that opened a standalone, legacy or listen stream's
 * connection expired: end its response (http_conn_expire). */
void		 stream_token_expired(struct stream *);

/* stream_keep.c: what streams keep for replay, and max_buffered. */
/* Keep what streams hold within max_buffered (cut the slowest reader). */
void		 stream_budget(void);
/* Bytes every stream holds for replay. */
size_t		 stream_held_bytes(void);

/* supervisord.c: main (t/unit/sup_harness.c has its own fill_random). */
void		 fill_random(void *, size_t);

/* tool_search.c: discovery = "search": search_tools and call_tool. */
void		 tool_search_init(void);
void		 tool_search_free(void);
/* The global catalog changed: the index follows at the next search. */
void		 tool_search_stale(void);
/* A reload: what clients may see, and the discovery mode, changed. */
void		 tool_search_configure(void);
/* Answer tools/list or a call of search_tools or call_tool under
 * discovery = "search": 1 if done, 0 if the request is another's. */
int		 tool_search_list(struct req *);
int		 tool_search_call(struct req *);
/*
 * trace.c: a SERVER span per client request, a CLIENT span per call, the
 * context passed on in params._meta; batches to mcp-otel (tracing).
 */
extern const char *otel_worker_path;
/* Start the exporter if tracing is on; after a reload, what changed
 * (old: the previous tracing, or NULL); stop it at exit. */
void		 trace_init(void);
void		 trace_apply(const struct trace_conf *old);
void		 trace_stop(void);
/* The trace context of an HTTP request (its traceparent and tracestate
 * headers), kept by its session for the messages it carries. */
struct http_head;
void		 trace_http(struct session *, const struct http_head *);
void		 trace_session_end(struct session *);
/* A request's record begins: continue its context, or start a trace if
 * sampled (o->trace set), or nothing. */
void		 trace_begin(struct reqobs *, struct session *,
		    const struct jrpc *);
/* The tool, prompt or URI it names. */
void		 trace_name(struct trace *, const char *, size_t);
/* Append its text for an upstream, edits applied, with its call's
 * context in params._meta if it is traced. */
void		 trace_splice(struct evbuffer *, struct req *,
		    struct upstream *, const struct jedit *, size_t);
/* Its record ends: its spans go to the batch (o->trace freed). */
void		 trace_end(struct reqobs *, int outcome, int code);
void		 trace_metrics(struct evbuffer *);
/* For tests: the spans batched, as text ("{...},{...}"), and forget them. */
const char	*trace_batch_text(size_t *);
void		 trace_batch_clear(void);

/* upstream.c: one worker process and what the supervisor knows of it. */
/* Seconds beyond an upstream's init_timeout that the supervisor waits for
 * a worker (or a session's instance) to be ready: the worker's own timer,
 * and its error, come first. */
#define INIT_GRACE	5
/* Does an upstream speak 2026-07-28 (found out by its worker)? */
int		 upstream_modern(const struct upstream *);
enum upstream_state {
	UPSTREAM_STARTING = 0,	/* worker spawned, handshake under way */
	UPSTREAM_READY,		/* catalog known, requests flow */
	UPSTREAM_BACKOFF,	/* died; waiting to restart */
	UPSTREAM_STOPPED,	/* stopped by the operator or at exit */
	UPSTREAM_FAILED,	/* gave up restarting */
	UPSTREAM_IDLE,		/* lazy, not started yet */
	UPSTREAM_LOGIN		/* its worker waits for mcpctl login */
};

/* How mcpctl login of an upstream goes (uplogin.c). */
enum uplogin_phase {
	LOGIN_IDLE = 0,
	LOGIN_STARTING,		/* asked the worker for the URL */
	LOGIN_WAITING,		/* for the redirect, or a pasted code */
	LOGIN_EXCHANGING,	/* the worker exchanges the code */
	LOGIN_DONE,
	LOGIN_FAILED
};
struct uplogin {
	enum uplogin_phase	 phase;
	int64_t			 changed;	/* ms: the phase began */
	char			*url;		/* authorization URL, or NULL */
	char			*state;		/* its state, or NULL */
	char			 error[512];	/* of LOGIN_FAILED */
	char			*scope;		/* of LOGIN_DONE, or NULL */
	long long		 expires_at;	/* of LOGIN_DONE, or 0 */
	json_t			*record;	/* the worker's record (tokens:
						   secret, wiped), or NULL */
	int			 loaded;	/* record read from the store */
	struct uplogin_users	*users;		/* per-user identities'
						   records and logins, or
						   NULL (uplogin.c) */
};

TAILQ_HEAD(view_parts, view_part);

struct upstream {
	struct server_conf	*sc;		/* owned copy */
	struct proc		 proc;		/* its worker */
	enum upstream_state	 state;
	pid_t			 upstream_pid;	/* as reported, or -1 */
	int			 reported;	/* this run sent an error */
	json_t			*catalog;	/* last catalog, or NULL */
	json_t			*info;		/* last ready status */
	struct pending_list	 pending;
	unsigned int		 npending;
	unsigned int		 nqueued;	/* pending waiting for a start */
	struct up_request_list	 up_requests;	/* it sent, unanswered */
	struct strmap		 subs;		/* uri -> struct u64map of
						   its sessions by number
						   (shared isolation; owned) */
	int			 subs_whole;	/* subs has every session's
						   subscription at it */
	int			 loglevel;	/* forwarded level, -1 none */
	struct pending		*level_call;	/* that setLevel in flight,
						   or NULL (shared) */
	struct session_walk	 opens;		/* telling a worker that is
						   ready of every session */
	struct u64map		 opened_ahead;	/* numbers of sessions told
						   before the walk got there */
	/* Observability. */
	struct metrics_req	 m;		/* requests it served */
	uint64_t		 mup[MUP_NKINDS][MUPO_NOUTCOMES];
	unsigned int		 gave_up;	/* times marked failed */
	int			 ready_once;	/* has been ready */
	struct budget		 budget;	/* of its llm: links */
	unsigned int		 sampling_jobs;	/* its requests in sampling
						   chains (sampling.c) */
	struct u64map		 sampling_refs;	/* their numbers -> jobs */
	int			 era_fallback;	/* went away during the era
						   probe: start as "2025" */
	struct view_parts	 parts;		/* sessions' view parts of it,
						   oldest first (owned by the
						   sessions; catalog_view.c) */
	struct uplimit		 limit;		/* limit.c */
	struct breaker		 breaker;	/* breaker.c */
	struct uplogin		 login;		/* uplogin.c */
};

extern struct upstream	**upstreams;
extern size_t		  nupstreams;

void		 upstream_init_all(void);
/*
 * Apply the upstreams of a new configuration (reload); report gets arrays
 * "added", "changed" and "removed" of names.
 */
void		 upstream_apply(const struct conf *, json_t *report);
void		 upstream_stop_all(void);
struct upstream	*upstream_find(const char *);
const char	*upstream_state_name(enum upstream_state);
/* Send a frame to a ready upstream; -1 if it is not ready. */
int		 upstream_send(struct upstream *, uint16_t type,
		    uint32_t session, uint32_t tag, const char *, size_t);
int		 upstream_send_buffer(struct upstream *, uint16_t type,
		    uint32_t session, uint32_t tag, struct evbuffer *);
json_t		*upstream_status_json(const struct upstream *);
/* Start a lazy upstream on first use. */
void		 upstream_use(struct upstream *);
/* mcpctl stop, start and restart; -1 with err set if refused. */
int		 upstream_stop(struct upstream *, char *, size_t);
int		 upstream_start(struct upstream *, char *, size_t);
int		 upstream_restart(struct upstream *, char *, size_t);
/*
 * Tell an upstream's worker about a new client session: a per-session
 * one starts its instance by it, a 2026-07-28 one builds its envelope
 * (worker/era.c).
 */
void		 upstream_session_open(struct upstream *, struct session *);
/* Does the upstream declare a capability (e.g. "logging")? */
int		 upstream_has_capability(const struct upstream *, const char *);
/* Does it declare resources.subscribe (updates of a resource)? */
int		 upstream_can_subscribe(const struct upstream *);
/* Explain why an upstream cannot take a request (for error messages). */
void		 upstream_unavailable(const struct upstream *, char *, size_t);

/* uplogin.c */
/* Add oauth_client and the stored oauth_record to a worker's CONFIG. */
void		 uplogin_config(struct upstream *, json_t *cfg);
/* Add a per-user upstream's oauth_identity and oauth_record to a
 * session's SESSION_OPEN payload. */
void		 uplogin_session_open(struct upstream *, struct session *,
		    json_t *);
/* The principal a session's upstream tokens belong to ("" if none):
 * OAuth issuer and subject, else the named client, else the token's
 * hash; never a token. */
void		 uplogin_principal(const struct session *, char *, size_t);
/* An OAUTH_SAVE or OAUTH_PROGRESS frame; -1 if it is corrupt. */
int		 uplogin_frame(struct upstream *, const struct frame_hdr *,
		    struct evbuffer *);
/* Is cmd one of uplogin_control's (login, login_status, login_code,
 * tokens, token_revoke)? */
int		 uplogin_command(const char *cmd);
json_t		*uplogin_control(const char *cmd, json_t *req);
/* Is it the redirect_uri's path, or the client metadata document's? */
int		 uplogin_path(const struct http_request *);
void		 uplogin_serve(struct http_conn *, struct http_request *);
/* Add login_needed and the login's phase to mcpctl status's upstream. */
void		 uplogin_status_json(const struct upstream *, json_t *);
void		 uplogin_free(struct upstream *);
/* Close the token store, once what waits is written (at exit). */
void		 uplogin_store_close(void);

/*
 * vendpoint.c: virtual endpoints, each serving the part of the catalog
 * its patterns select (endpoints = ( ... )).
 */
enum vendpoint_transport {
	VEP_STREAMABLE,		/* <path> */
	VEP_SSE,		/* <path>/sse */
	VEP_MESSAGES,		/* <path>/messages */
	VEP_WS			/* <path>/ws */
};

/* Match the endpoints to the running configuration (start and reload):
 * keep, change (sessions told), add, remove (sessions ended). */
void		 vendpoint_configure(void);
void		 vendpoint_free_all(void);
/* The endpoint a request's path names, and by which transport; NULL. */
struct vendpoint *vendpoint_route(const char *path,
		    enum vendpoint_transport *);
/* Its path ("/mcp" for NULL), its legacy POST path, its path's hash. */
const char	*vendpoint_path(const struct vendpoint *);
const char	*vendpoint_messages_path(const struct vendpoint *);
uint64_t	 vendpoint_hash(const struct vendpoint *);
/* Its entry of the running configuration (patterns, discovery). */
const struct endpoint_conf *vendpoint_conf(const struct vendpoint *);
/* Does an endpoint select an exposed name, or a template by its text? */
int		 vendpoint_selects(const struct vendpoint *, enum catalog_kind,
		    const char *key);
/* A resource URI: 1 selected, 0 not, -1 not checkable (*why). */
int		 vendpoint_selects_uri(const struct vendpoint *, const char *,
		    const char **why);
/* How it offers its tools (discovery = ...). */
enum discovery	 vendpoint_discovery(const struct vendpoint *);
/* Does it list an item of a list (a resource by its URI)? */
int		 vendpoint_lists(const struct vendpoint *, enum catalog_kind,
		    const char *key);
/* Bind a session to its endpoint (NULL: /mcp), and undo it. */
void		 vendpoint_bind(struct session *, struct vendpoint *);
void		 vendpoint_unbind(struct session *);
/* The global catalog changed (changed: its lists' bits): each
 * endpoint's own bits, for vendpoint_changes_take. */
void		 vendpoint_catalog_changed(const struct catalog *old,
		    const struct catalog *, int changed);
/* Each endpoint's bits of the last change, for a broadcast (owned). */
struct vendpoint_changes *vendpoint_changes_take(void);
/* A session's bits of a change whose global bits are global. */
int		 vendpoint_changes_for(const struct vendpoint_changes *,
		    const struct session *, int global);
void		 vendpoint_changes_free(struct vendpoint_changes *);
/* mcpctl status: the endpoints, their sessions. */
json_t		*vendpoint_status_json(void);
/* The client tools changed: which endpoints' selection did, and that
 * as each endpoint's bits for a broadcast (owned; /mcp is always told). */
void		 vendpoint_ctools_changed(void);
struct vendpoint_changes *vendpoint_ctools_take(void);
/* Count a request routed at an endpoint; its metrics, when scraped. */
void		 vendpoint_request(struct vendpoint *);
void		 vendpoint_metrics(struct evbuffer *);

#endif
