/* SPDX-License-Identifier: ISC */
/*
 * mcp-demo-server's private header: its limits, the in-progress request
 * (struct req), and what its files share, by file.
 */
#ifndef MCPS_DEMO_H
#define MCPS_DEMO_H

#include <sys/types.h>
#include <sys/queue.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct event;
struct event_base;
struct evbuffer;

#define DEMO_NAME		"mcp-demo-server"
#define DEMO_VERSION		"1.0.0"
#define LATEST_PROTOCOL		"2025-11-25"

/* Limits. Sizes are in bytes, times in milliseconds. */
#define MAX_LINE		(64UL * 1024 * 1024)	/* input line */
#define MAX_INFLIGHT		1024	/* requests in progress */
#define MAX_SUBSCRIPTIONS	4096	/* subscribed URIs */
#define MAX_BIG			(64L * 1024 * 1024)	/* big tool */
#define MAX_SLEEP_MS		600000	/* sleep tool */
#define MAX_STEPS		1000	/* sleep tool progress steps */
#define MAX_LOG_COUNT		1000	/* log tool messages a call */
#define MAX_TOKENS		1000000	/* sample tool maxTokens */
#define MAX_PAGE_SIZE		1000000	/* --page-size */
#define MAX_NAME		256	/* --name */

/* Input and output buffering. */
#define READ_CHUNK		(256 * 1024)	/* per read(2) */
#define OUT_HIGH		(16UL * 1024 * 1024)	/* pause input */
#define OUT_LOW			(1UL * 1024 * 1024) /* resume input */
#define COPY_LIMIT		4096	/* copy smaller output */
#define DRAIN_SECONDS		5	/* flush time after EOF */
#define CRASH_FLUSH_MS		1000	/* flush time before crash */

/* JSON-RPC and MCP error codes. */
#define ERR_PARSE		-32700
#define ERR_REQUEST		-32600
#define ERR_METHOD		-32601
#define ERR_PARAMS		-32602
#define ERR_INTERNAL		-32603
#define ERR_NOT_FOUND		-32002

struct req;
typedef void (*answer_cb)(struct req *, json_t *, json_t *);

/*
 * A request from the client that is still in progress: a sleep, or a
 * tool call waiting for the answer to a request of ours.  The request
 * owns everything it points to; req_free releases it all and it never
 * answers by itself.
 */
struct req {
	json_t		*id;		/* client's request id */
	json_t		*token;		/* progress token */

	struct event	*timer;		/* sleep timer or NULL */
	uint64_t	 ms;		/* sleep length */
	u_int		 steps;		/* progress steps */
	u_int		 step;		/* steps done */

	json_int_t	 out_id;	/* our request id or 0 */
	answer_cb	 cb;		/* called with the answer */
	char		*elicitation;	/* URL elicitation id */

	TAILQ_ENTRY(req) entry;
};
TAILQ_HEAD(reqs, req);

/* mcp-demo-server.c: main, the options, the stdio transport. */
extern struct event_base *base;
extern struct evbuffer	*outbuf;	/* unwritten output */
extern int		 out_dead;	/* stdout failed */
extern int		 exit_code;
extern const char	*server_name;	/* --name */
extern size_t		 page_size;	/* --page-size; 0 is no pagination */
extern int		 test_tools;	/* --test-tools */
void		 output_kick(void);
void		 output_raw(const char *);
/* Queue msg without its newline; -1 if not. Consumes msg. */
int		 queue_json(json_t *);
/* Queue msg as one line. Consumes msg. */
void		 send_json(json_t *);
void		 output_flush(int ms);

/* log.c */
void		 log_warnx(const char *, ...)
		    __attribute__((format(printf, 1, 2)));
void		 log_warn(const char *, ...)
		    __attribute__((format(printf, 1, 2)));
void		 fatalx(const char *, ...)
		    __attribute__((format(printf, 1, 2), noreturn));
/* The caller frees the string. */
char		*xvasprintf(const char *, va_list)
		    __attribute__((format(printf, 1, 0)));

/* jsonrpc.c */
/* The string is borrowed from v. */
const char	*json_cstr(json_t *);
int		 valid_id(json_t *);
/* Consumes result. */
void		 reply_result(json_t *id, json_t *result);
/* Consumes data, which may be NULL. */
void		 reply_error(json_t *id, int code, json_t *data,
		    const char *, ...) __attribute__((format(printf, 4, 5)));
/* Consumes params, which may be NULL. */
void		 notify(const char *method, json_t *params);
/* Consumes items. */
void		 reply_page(json_t *id, json_t *params, const char *key,
		    json_t *items);
void		 handle_message(json_t *);

/* request.c: requests in progress, each owned by reqs. */
extern struct reqs	 reqs;
extern u_int		 nreqs;
/* The caller must answer (req_done) or free (req_free) it. */
struct req	*req_new(json_t *id);
void		 req_free(struct req *);
/* Consumes result. */
void		 req_done(struct req *, json_t *result);
struct req	*req_find(json_t *id);
struct req	*req_find_out(json_int_t out_id);
/* Consumes params, which may be NULL. */
void		 client_request(struct req *, const char *method,
		    json_t *params, answer_cb);
const char	*error_message(json_t *error);

/* session.c */
extern json_t	*client_caps;	/* client capabilities, owned */
void		 notify_log(int level, json_t *data);
int		 level_find(const char *);
/* The capability is borrowed from client_caps. */
json_t		*client_cap(const char *);
int		 client_form(void);
int		 client_url(void);
void		 method_initialize(json_t *, json_t *);
void		 method_ping(json_t *, json_t *);
void		 method_set_level(json_t *, json_t *);

/* tools.c */
/* Consumes text. */
json_t		*tool_content(json_t *text, int is_error);
json_t		*tool_ok(const char *, ...)
		    __attribute__((format(printf, 1, 2)));
json_t		*tool_err(const char *, ...)
		    __attribute__((format(printf, 1, 2)));
void		 method_tools_list(json_t *, json_t *);
void		 method_tools_call(json_t *, json_t *);
void		 tools_init(void);
void		 tools_free(void);

/* tools_args.c: the arguments are borrowed from args. */
extern char	 argerr[256];	/* last argument error */
void		 bad_args(json_t *id);
int		 arg_str(json_t *args, const char *key, const char *dflt,
		    const char **out);
int		 arg_value(json_t *args, const char *key, int number,
		    json_t **out);
int		 arg_int(json_t *args, const char *key, int required,
		    json_int_t dflt, json_int_t min, json_int_t max,
		    json_int_t *out);

/* tools_client.c */
void		 tool_sample(json_t *, json_t *, json_t *);
void		 tool_elicit(json_t *, json_t *, json_t *);
void		 tool_elicit_url(json_t *, json_t *, json_t *);
void		 tool_roots(json_t *, json_t *, json_t *);
void		 tool_ping_client(json_t *, json_t *, json_t *);

/* tools_test.c */
void		 tool_crash(json_t *, json_t *, json_t *);
void		 tool_hang(json_t *, json_t *, json_t *);
void		 tool_garbage(json_t *, json_t *, json_t *);
void		 tool_big(json_t *, json_t *, json_t *);
void		 tool_stderr(json_t *, json_t *, json_t *);

/* resources.c */
extern unsigned long long counter;	/* demo://counter */
extern json_t	*subscriptions;	/* keys: subscribed URIs, owned */
void		 method_resources_list(json_t *, json_t *);
void		 method_templates_list(json_t *, json_t *);
void		 method_resources_read(json_t *, json_t *);
void		 method_subscribe(json_t *, json_t *);
void		 method_unsubscribe(json_t *, json_t *);

/* prompts.c */
void		 method_prompts_list(json_t *, json_t *);
void		 method_prompts_get(json_t *, json_t *);
void		 method_complete(json_t *, json_t *);

#endif /* MCPS_DEMO_H */
