/* SPDX-License-Identifier: ISC */
/*
 * Configuration: the libconfig file read into plain structures, checked
 * strictly (unknown keys and bad values are errors reported as
 * "file:line: message"), printed normalised for -nv, and the per-upstream
 * part converted to and from JSON for the worker's MSG_CONFIG frame.
 */
#ifndef MCPS_CONF_H
#define MCPS_CONF_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "jose.h"

#define CONF_DEFAULT_LISTEN		"127.0.0.1:8931"
#define CONF_DEFAULT_CONTROL		"/run/mcp-supervisord/control.sock"
#define CONF_MIN_TOKEN			16	/* characters in a token */
#define CONF_INSTANCE_MAX		32	/* characters in an instance name */
#define CONF_MAX_TRUSTED		64	/* trusted_proxies entries */
#define CONF_MIN_STATE_KEY		32	/* in request_state_key */
#define CONF_MAX_PASS_ENV		256	/* names in one pass_env */
/* Where pins are kept: the systemd unit's StateDirectory. */
#define CONF_DEFAULT_STATE_DIR		"/var/lib/mcp-supervisor"
#define CONF_MAX_OVERRIDES		1024	/* tools = ( ... ) entries */

enum transport {
	TRANSPORT_STDIO = 0,
	TRANSPORT_HTTP,
	TRANSPORT_SSE,
	TRANSPORT_WS
};

/*
 * How an upstream's elicitation/create or sampling/createMessage is
 * answered, tried in order.
 */
enum strategy {
	STRATEGY_CLIENT = 0,	/* the client whose call caused it */
	STRATEGY_DEFAULTS,	/* accept with the schema's defaults
				   (elicitation only) */
	STRATEGY_DECLINE,	/* decline (for sampling: "User rejected") */
	STRATEGY_LLM,		/* llm:NAME, a provider (sampling only) */
	STRATEGY_TOOL		/* tool:UPSTREAM/TOOL (sampling only) */
};
#define CONF_MAX_STRATEGIES	8
#define CONF_STRATEGY_MAX	256	/* bytes of one, "tool:" and all */

/* The LLM APIs the gateway speaks (llm = ( ... )). */
enum llm_provider {
	LLM_OPENAI = 0,		/* Chat Completions, and compatible servers */
	LLM_ANTHROPIC,		/* the Messages API */
	LLM_OLLAMA		/* /api/chat */
};

/* A budget: 0 is unlimited. */
struct budget_conf {
	unsigned int		 requests_per_minute;
	unsigned long long	 tokens_per_day;	/* in and out */
};

/* What a model is like, for modelPreferences' priorities (0 to 1). */
struct llm_score {
	char	*model;
	double	 cost;		/* 1: the most expensive */
	double	 speed;		/* 1: the fastest */
	double	 intelligence;	/* 1: the most capable */
};

/* One LLM provider; every string is owned. */
/*
 * Where a setting was written: its line (0: not written, a default) in the
 * main file (file 0) or in one it includes (file n: conf->included[n - 1]).
 * An index, not a name, so that a copy kept past its configuration holds
 * nothing that dangles.
 */
struct conf_at {
	int	line;
	int	file;
};

struct llm_conf {
	char			 *name;
	enum llm_provider	  provider;
	char			 *url;		/* API base, as its SDK takes it */
	char			 *api_key;	/* a ${env:}/${file:} reference,
						   never the key; or NULL */
	char			 *model;	/* the default model */
	char			**models;	/* NULL-terminated, or NULL */
	struct llm_score	 *scores;
	size_t			  nscores;
	struct budget_conf	  budget;
	unsigned int		  timeout;	/* seconds, one request */
	unsigned int		  connect_timeout;	/* seconds */
	int			  stream;	/* use the streaming API */
	int			  max_completion_tokens;	/* openai: the
						   field maxTokens goes to */
	size_t			  max_response;	/* bytes */
	unsigned int		  max_concurrent;	/* requests at once */
	int			  tls_verify;
	char			 *ca_file;
	struct conf_at		  at;
};

enum isolation {
	ISOLATION_SHARED = 0,
	ISOLATION_PER_SESSION
};

/* Which protocol era an upstream speaks (era = ...). */
enum era {
	ERA_AUTO = 0,		/* find out: 2026-07-28 if it answers it */
	ERA_2025,		/* initialize: 2025-11-25 and earlier */
	ERA_2026		/* 2026-07-28 only */
};

/* What is done when an upstream changes a pinned tool (pinning = ...). */
enum pinning {
	PINNING_ENFORCE = 0,	/* hold the tool back until approved */
	PINNING_WARN,		/* log and count it, list it */
	PINNING_OFF		/* record nothing */
};

/* An annotation an override sets: unset, false or true. */
#define CONF_HINT_UNSET		(-1)
enum conf_hint {
	HINT_READ_ONLY = 0,	/* readOnlyHint */
	HINT_DESTRUCTIVE,	/* destructiveHint */
	HINT_IDEMPOTENT,	/* idempotentHint */
	HINT_OPEN_WORLD,	/* openWorldHint */
	CONF_NHINTS
};

/* How one of an upstream's tools is shown (tools = ( ... )); owned. */
struct tool_override {
	char		 *tool;		/* the upstream's own name */
	char		 *name;		/* exposed as (no prefix), or NULL */
	char		 *title;	/* or NULL */
	char		 *description;	/* or NULL */
	int		  hints[CONF_NHINTS];	/* CONF_HINT_UNSET, 0, 1 */
	int		  hidden;	/* not listed, not callable */
	struct conf_at	  at;
};

/* An upstream's traffic policy (common/conf_traffic.c), read only by the
 * supervisor (limit.c, breaker.c). */
struct traffic_conf {
	unsigned int	  max_concurrent;	/* calls in flight; 0: no cap */
	unsigned int	  max_queued;		/* calls waiting for a slot */
	unsigned int	  queue_timeout;	/* seconds one may wait */
	unsigned int	  breaker_failures;	/* in a row; 0: no breaker */
	unsigned int	  breaker_window;	/* seconds the run may span */
	unsigned int	  breaker_cooldown;	/* seconds open, then a probe */
};

/* A rate limit (rate_limits = ( ... )): a token bucket per principal, or
 * one shared, for the calls it matches; every string is owned. */
#define CONF_MAX_RATE_LIMITS	256
struct rate_conf {
	char		*name;		/* labels its metrics */
	char		*client;	/* glob on the principal; NULL: any */
	char		*upstream;	/* glob on the upstream; NULL: any */
	char		*tool;		/* glob on the exposed name or URI */
	double		 rate;		/* calls per second; 0: none */
	unsigned int	 burst;		/* the bucket's size */
	unsigned int	 concurrent;	/* calls in flight; 0: any */
	int		 shared;	/* one bucket for every principal */
	struct conf_at	 at;
};

/* One upstream; every string is owned. */
/* An upstream's oauth = { ... }: the gateway as its OAuth client. */
enum upoauth_grant {
	UPOAUTH_AUTHORIZATION_CODE = 0,	/* mcpctl login */
	UPOAUTH_CLIENT_CREDENTIALS	/* a machine identity */
};
/* Whose tokens the upstream's calls carry. */
enum upoauth_identity {
	UPOAUTH_GATEWAY = 0,		/* one, the gateway's (mcpctl login) */
	UPOAUTH_PER_USER		/* each principal's own */
};
struct upoauth_conf {
	char		 *client_id;	/* pre-registered; NULL: register */
	char		 *client_secret; /* as written: may be ${file:..} */
	char		 *issuer;	/* the authorization server it must
					   be; NULL: the one the upstream
					   names */
	char		**scopes;	/* to ask for; NULL: the server's */
	enum upoauth_grant grant;
	enum upoauth_identity identity;
	struct conf_at	  at;
};

/*
 * oauth_client = { ... }: the gateway as an OAuth client of every remote
 * upstream that needs a login (conf_upoauth.c).
 */
struct oauth_client_conf {
	char		*redirect_uri;	/* NULL: http://<listen>/oauth/callback */
	char		*client_name;	/* NULL: "mcp-supervisor" */
	char		*client_metadata_url; /* https; NULL: no CIMD */
	struct conf_at	 at;
};

struct server_conf {
	char		 *name;
	enum transport	  transport;
	char		**command;	/* NULL-terminated argv (stdio) */
	char		**env;		/* NULL-terminated "NAME=value" */
	char		**pass_env;	/* names of the daemon's variables
					   it gets (the global's and its
					   own), or NULL */
	char		 *cwd;
	char		 *url;		/* http, sse, ws */
	char		 *prefix;	/* exposed-name prefix, "" for none */
	enum isolation	  isolation;
	enum era	  era;
	unsigned int	  request_timeout;	/* seconds, client calls */
	unsigned int	  server_request_timeout; /* seconds, its requests */
	unsigned int	  init_timeout;		/* seconds */
	unsigned int	  max_instances;	/* per-session processes */
	size_t		  max_message;		/* bytes, one message */
	/* Remote transports. */
	char		**headers;		/* NULL-terminated "Name: value" */
	int		  tls_verify;
	char		 *ca_file;
	unsigned int	  connect_timeout;	/* seconds */
	enum strategy	  elicitation[CONF_MAX_STRATEGIES];
	size_t		  nelicitation;
	enum strategy	  sampling[CONF_MAX_STRATEGIES];
	char		 *sampling_target[CONF_MAX_STRATEGIES];	/* for llm:
				   the provider, for tool: "upstream/tool" */
	size_t		  nsampling;
	struct budget_conf budget;		/* of its llm: links */
	int		  log_prompts;		/* in the audit line */
	/* Supervision. */
	int		  lazy;			/* start on first use */
	unsigned int	  ping_interval;	/* seconds idle, 0: never */
	unsigned int	  ping_timeout;		/* seconds */
	unsigned int	  restart_delay;	/* first backoff, seconds */
	unsigned int	  restart_max_delay;	/* backoff cap, seconds */
	unsigned int	  healthy_after;	/* uptime resetting backoff */
	unsigned int	  max_failures;		/* in a row, then failed */
	char		 *user;			/* run the worker as */
	unsigned long long rlimit_nofile;	/* 0: inherit */
	unsigned long long rlimit_as;		/* bytes, 0: inherit */
	int		  required;		/* readiness needs it */
	char		**scopes;		/* OAuth scopes a call to it
						   needs; NULL */
	struct upoauth_conf *oauth;		/* the gateway as its OAuth
						   client; NULL */
	struct traffic_conf traffic;		/* the supervisor's alone */
	struct conf_at	  at;			/* where it was defined */
	/*
	 * The supervisor's alone, not in the JSON form (conf_server_copy
	 * drops them, conf_server_equal ignores them: a change restarts
	 * nothing); read from the running conf by upstream name.
	 */
	enum pinning	  pinning;
	struct tool_override *overrides;
	size_t		  noverrides;
};

/*
 * Which OAuth access tokens name a client (a client's oauth = { ... }):
 * every condition given must hold.
 */
struct oauth_match {
	char		 *issuer;	/* NULL: any configured issuer */
	char		 *subject;	/* NULL: any */
	char		**scopes;	/* all granted; NULL: none needed */
	char		**claim_names;	/* NULL-terminated, or NULL */
	char		**claim_values;	/* the claim is this string, or an
					   array holding it; as many */
	struct conf_at	  at;
};

/* A named client (clients = ( ... )): its token and its rights. */
struct client_conf {
	char		 *name;
	char		 *token;	/* as written: may be ${env:..}; NULL
					   if it is named by oauth only */
	struct oauth_match *oauth;	/* NULL: by its token only */
	int		  may_register;	/* may offer tools of its own */
	int		  metrics;	/* may read /metrics */
	char		**allow;	/* NULL: everything */
	char		**deny;		/* NULL: nothing */
	struct conf_at	  at;
};

/*
 * How an endpoint (or /mcp, with the global discovery) offers its tools:
 * listed, or through search_tools and call_tool (tool_search.c).
 */
enum discovery {
	DISCOVERY_LIST = 0,	/* tools/list lists every tool */
	DISCOVERY_SEARCH	/* tools/list lists search_tools, call_tool */
};

#define CONF_MAX_ENDPOINTS	64
#define CONF_MAX_ENDPOINT_RULES	256	/* patterns per list */
#define CONF_ENDPOINT_PATH_MAX	128

/*
 * A virtual endpoint (endpoints = ( ... ), common/conf_endpoint.c): a
 * path that serves the part of the catalog its patterns select.  A list
 * of patterns selects what matches one of its plain patterns and none
 * of its "!" ones; a list of "!" patterns only starts from everything;
 * NULL (the key left out) selects nothing of that kind.
 */
struct endpoint_conf {
	char		 *path;		/* "/mcp/research" */
	char		**tools;	/* NULL: none */
	char		**resources;	/* URIs and URI templates; NULL: none */
	char		**prompts;	/* NULL: none */
	enum discovery	  discovery;	/* default DISCOVERY_LIST */
	struct conf_at	  at;
};

#define CONF_OAUTH_MAX_ISSUERS	16
#define CONF_OAUTH_MAX_LEEWAY	300	/* seconds */
#define CONF_OAUTH_ALGS_DEFAULT	(JOSE_RS256 | JOSE_PS256 | JOSE_ES256 | \
				    JOSE_EDDSA | JOSE_ED25519)

/* An authorization server whose access tokens the gateway accepts. */
/* A client of the gateway's at an issuer. */
struct oauth_issuer_client {
	char		*client_id;
	/* As written: a ${file:} or ${env:} reference, never the secret
	 * itself (secret_expand it where it is sent); NULL if none (a
	 * public client, where one may be). */
	char		*secret;
	int		 post;		/* client_secret_post, else
					   client_secret_basic */
};

struct oauth_issuer_conf {
	char		*issuer;	/* exact, as its metadata says */
	struct conf_at	 at;
	char		*metadata_url;	/* NULL: discovered from issuer */
	char		*jwks_uri;	/* NULL: from the metadata */
	unsigned int	 algorithms;	/* JOSE_* bits; default
					   CONF_OAUTH_ALGS_DEFAULT */
	enum jose_typ	 typ;		/* "any" (JOSE_TYP_LAX, default) or
					   "at+jwt" */
	char		*ca_file;	/* NULL: the system's */
	unsigned int	 refresh;	/* JWKS refresh, seconds; default 3600 */
	/* Introspection of opaque tokens; client_id NULL: none. */
	struct oauth_issuer_client introspection;
	/* The gateway's client for making sure who opens a per-user
	 * login's link (uplogin_connect.c); client_id NULL: none. */
	struct oauth_issuer_client login;
};

/* OAuth 2.1 resource server (oauth = { ... }). */
struct oauth_conf {
	char		 *resource;	/* public URL, no trailing '/';
					   required */
	char		 *resource_name;	/* NULL */
	char		**audiences;	/* extra accepted aud values; NULL */
	char		**scopes_supported;	/* NULL */
	char		**scopes;	/* needed by every request; NULL */
	unsigned int	  leeway;	/* seconds, default 60, max 300 */
	char		 *subject_claim;	/* default "sub" */
	char		 *default_client;	/* a token matching no client's
					   oauth gets this client's rights;
					   NULL: an unnamed client's */
	struct oauth_issuer_conf *issuers;
	size_t		  nissuers;	/* at least 1 */
	struct conf_at	  at;
};

/* The whole configuration; every string is owned. */
struct conf {
	char			 *file;
	char			**included;	/* files it @includes, in order
						   of their first setting */
	size_t			  nincluded;
	char			 *listen;
	struct conf_at		  listen_at;		/* line 0: the default */
	char			 *user;		/* upstreams run as; NULL */
	char			**pass_env;	/* every stdio upstream's */
	char			 *control;
	char			 *instance;	/* tags every session id */
	char			 *metrics_listen;	/* NULL: on listen */
	struct conf_at		  metrics_listen_at;
	char			 *access_log;	/* path, "syslog", "stderr",
						   or NULL for none */
	char			**trusted_proxies;	/* addresses or CIDR
							   blocks; NULL */
	char			**allowed_origins;	/* NULL: loopback only */
	char			**allowed_hosts;	/* NULL: see conf.c */
	char			**auth_tokens;		/* NULL: no auth */
	char			**metrics_tokens;	/* /metrics only; NULL */
	size_t			  max_message;
	size_t			  max_body;
	unsigned int		  max_sessions;
	unsigned int		  max_pending;		/* per session */
	unsigned int		  session_timeout;	/* seconds idle */
	unsigned int		  request_timeout;	/* default, seconds */
	unsigned int		  server_request_timeout; /* default */
	unsigned int		  sse_heartbeat;	/* seconds, 0: none */
	unsigned int		  page_size;		/* list items per page */
	size_t			  max_buffered;	/* held for all streams */
	char			 *ws_path;		/* "" for none */
	struct conf_at		  ws_path_at;		/* line 0: the default */
	unsigned int		  ws_ping_interval;	/* seconds, 0: none */
	char			 *ws_lockfile;		/* or NULL */
	char			 *state_dir;		/* pins are kept here */
	struct conf_at		  state_dir_at;		/* line 0: the default */
	enum pinning		  pinning;
	enum discovery		  discovery;		/* of /mcp */
	/* 2026-07-28 clients. */
	char			 *request_state_key;	/* as written, or NULL */
	unsigned int		  request_state_ttl;	/* seconds */
	unsigned int		  cache_ttl;		/* seconds, lists */
	unsigned int		  client_tool_timeout;	/* seconds */
	unsigned int		  client_tools_max;	/* per client */
	struct client_conf	 *clients;
	size_t			  nclients;
	struct endpoint_conf	 *endpoints;	/* conf_endpoint.c */
	size_t			  nendpoints;
	/* The servers' default strategies. */
	enum strategy		  elicitation[CONF_MAX_STRATEGIES];
	size_t			  nelicitation;
	enum strategy		  sampling[CONF_MAX_STRATEGIES];
	char			 *sampling_target[CONF_MAX_STRATEGIES];
	size_t			  nsampling;
	struct conf_at		  sampling_at;		/* line 0: the default */
	struct llm_conf		 *llms;
	size_t			  nllms;
	struct rate_conf	 *rate_limits;	/* common/conf_traffic.c */
	size_t			  nrate_limits;
	struct server_conf	 *servers;
	size_t			  nservers;
	struct oauth_conf	 *oauth;	/* NULL: no OAuth */
	struct trace_conf	 *tracing;	/* NULL: off; conf_trace.c */
	struct oauth_client_conf *oauth_client;	/* NULL: the defaults */
};

/*
 * Split a listen address, "host:port" or "[v6]:port", into its host and
 * its port (0-65535; 0 picks a free port); -1 with err set if it is not
 * one.
 */
int		 conf_split_listen(const char *addr, char *host, size_t hostlen,
		    unsigned int *port, char *err, size_t errlen);

/*
 * Is s a valid instance name: 1 to CONF_INSTANCE_MAX of A-Z a-z 0-9 _ -?
 * It begins every session id, before a '.', so a balancer can route by it.
 */
int		 conf_valid_instance(const char *);
/* The default instance name: the host name's first label, made valid. */
void		 conf_default_instance(char *buf, size_t len);

/* Read a file; on error returns NULL and writes "file:line: msg" to err. */
struct conf	*conf_load(const char *file, char *err, size_t errlen);
/* Parse from a string (for tests and fuzzing); name is used in errors. */
struct conf	*conf_parse(const char *text, const char *name, char *err,
		    size_t errlen);
void		 conf_free(struct conf *);
/* The file a setting was written in (conf_at's file, resolved). */
const char	*conf_at_file(const struct conf *, struct conf_at);
/* Print normalised, in the file's own syntax. */
void		 conf_print(const struct conf *, FILE *);

const char	*conf_transport_name(enum transport);
const char	*conf_strategy_name(enum strategy);
const char	*conf_isolation_name(enum isolation);
const char	*conf_llm_provider_name(enum llm_provider);
const char	*conf_era_name(enum era);
const char	*conf_pinning_name(enum pinning);
const char	*conf_hint_name(enum conf_hint);	/* "readOnlyHint" */
/* Virtual endpoints (conf_endpoint.c). */
const char	*conf_discovery_name(enum discovery);	/* "list" */
void		 conf_endpoints_free(struct conf *);
/* Which lists' patterns differ between two endpoints: CONF_EP_* bits. */
#define CONF_EP_TOOLS		0x01
#define CONF_EP_RESOURCES	0x02
#define CONF_EP_PROMPTS		0x04
int		 conf_endpoint_diff(const struct endpoint_conf *,
		    const struct endpoint_conf *);
/* The override of an upstream's tool (name of len bytes), or NULL. */
const struct tool_override *conf_override_find(const struct server_conf *,
		    const char *tool, size_t len);
/*
 * Can a strategy list serve a request without a client?  An llm: or tool:
 * link can; so can decline, if shared is set: an upstream session that
 * serves many clients is told what decline can always answer, so that its
 * one list of tools serves every client, while an instance of one client
 * is told that client's capabilities (plus what a provider or a tool can
 * answer), so that it lists only what that client can use.
 */
int		 conf_strategies_always(const enum strategy *, size_t,
		    int shared);
/* Does a strategy list hold a link of this kind? */
int		 conf_strategies_have(const enum strategy *, size_t,
		    enum strategy);
/* A strategy as written: "client", "llm:NAME" (target may be NULL). */
void		 conf_strategy_text(enum strategy, const char *target,
		    char *buf, size_t len);
/* The provider of that name, or NULL. */
const struct llm_conf *conf_llm_find(const struct conf *, const char *);

/* One provider as JSON (the llm worker's CONFIG frame), and back. */
json_t		*conf_llm_to_json(const struct llm_conf *);
struct llm_conf	*conf_llm_from_json(const json_t *, char *err, size_t errlen);
void		 conf_llm_free(struct llm_conf *);
/* A deep copy (the caller frees it with conf_llm_free and free). */
struct llm_conf	*conf_llm_copy(const struct llm_conf *);
int		 conf_llm_equal(const struct llm_conf *,
		    const struct llm_conf *);
/*
 * The largest frame between the supervisor and a provider's worker: a
 * request's params (CONF_LLM_MAX_REQUEST), or an answer of max_response
 * bytes once encoded as JSON (escaping grows text up to six times).
 */
#define CONF_LLM_MAX_REQUEST	(16 * 1024 * 1024)
size_t		 conf_llm_frame_max(const struct llm_conf *);

/* The issuer of that exact name, or NULL. */
const struct oauth_issuer_conf *conf_oauth_issuer(const struct oauth_conf *,
		    const char *issuer);
/* The client of that name, or NULL. */
const struct client_conf *conf_client_find(const struct conf *,
		    const char *);

/* Convert one upstream's configuration to JSON (a new reference). */
json_t		*conf_server_to_json(const struct server_conf *);
/* And back; NULL with err set if the JSON is not a valid configuration. */
struct server_conf *conf_server_from_json(const json_t *, char *err,
		    size_t errlen);
void		 conf_server_free(struct server_conf *);
/* A deep copy (the caller frees it with conf_server_free and free). */
struct server_conf *conf_server_copy(const struct server_conf *);
/* An upstream's traffic policy: defaults, JSON (a "traffic" member of
 * o; absent: the defaults; -1 if bad), and printed as its keys. */
void		 conf_traffic_defaults(struct traffic_conf *);
void		 conf_traffic_to_json(const struct traffic_conf *, json_t *o);
int		 conf_traffic_from_json(const json_t *o, struct traffic_conf *);
void		 conf_traffic_print(FILE *, const struct traffic_conf *);
/* tracing = { ... } (conf_trace.c): traces exported with OTLP/HTTP. */
#define CONF_TRACE_BATCH	256	/* spans per batch, the default */
#define CONF_TRACE_QUEUE	8192	/* spans waiting, the default */
struct trace_conf {
	char		 *endpoint;	/* http(s)://.../v1/traces */
	double		  sample;	/* 0 to 1: new traces sampled */
	char		**headers;	/* "Name: value", secrets unexpanded */
	char		 *service_name;
	unsigned int	  batch;	/* spans per export */
	unsigned int	  queue;	/* spans the gateway holds at most */
	unsigned int	  timeout;	/* seconds per export */
	struct conf_at	  at;
};
void		 conf_trace_free(struct trace_conf *);
int		 conf_trace_equal(const struct trace_conf *,
		    const struct trace_conf *);
void		 conf_trace_print(FILE *, const struct trace_conf *);

/* rate_limits: free them (the list emptied), print them. */
void		 conf_rate_limits_free(struct conf *);
void		 conf_rate_limits_print(FILE *, const struct conf *);
/* Are two upstream configurations the same (but for required and
 * traffic, which restart nothing)? */
int		 conf_server_equal(const struct server_conf *,
		    const struct server_conf *);

#endif
