/* SPDX-License-Identifier: ISC */
/*
 * Frames: the unit of every internal channel (supervisor <-> worker,
 * supervisor <-> mcpctl).  A frame is a fixed 16-byte header in network
 * byte order followed by a payload, which is JSON for every type:
 *
 *	u32 length	payload bytes, checked against a maximum before
 *			the payload is read
 *	u16 type	enum msg_type
 *	u16 flags	FRAME_F_* bits, each allowed on one type only;
 *			every other bit must be zero
 *	u32 session	supervisor's client session number, 0 for none
 *	u32 tag		request tag (supervisor's pending request number,
 *			or the worker's upstream-request number), 0 for none
 *
 * The session and tag let the supervisor route a result to the right
 * client stream without parsing the payload.
 */
#ifndef MCPS_FRAME_H
#define MCPS_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct evbuffer;

#define FRAME_HDR_LEN		16
#define FRAME_PROTOCOL_VERSION	1
/* A worker's descriptor of its channel to the supervisor. */
#define FRAME_CHANNEL_FD	3
/* Frame bytes allowed beyond what a frame carries (a message within
 * max_message, an LLM answer): the header and what wraps the message. */
#define FRAME_SLACK		65536

/* Every message type of every channel.  Never renumber; append only. */
enum msg_type {
	MSG_HELLO = 1,		/* worker: started {version, pid} */
	MSG_CONFIG = 2,		/* supervisor: upstream configuration */
	MSG_STATUS = 3,		/* worker: state change {state, pid, error} */
	MSG_CATALOG = 4,	/* worker: upstream catalog */
	MSG_REQUEST = 5,	/* supervisor: client request for upstream */
	MSG_RESPONSE = 6,	/* worker: response to MSG_REQUEST */
	MSG_FAIL = 7,		/* worker: MSG_REQUEST failed {code, message,
				   gone: its connection or instance ended} */
	MSG_CANCEL = 8,		/* supervisor: client cancelled a request */
	MSG_CLIENT_NOTIFY = 9,	/* supervisor: client notification */
	MSG_NOTIFY = 10,	/* worker: upstream notification */
	MSG_UP_REQUEST = 11,	/* worker: upstream-initiated request */
	MSG_UP_RESPONSE = 12,	/* supervisor: answer to MSG_UP_REQUEST */
	MSG_SESSION_OPEN = 13,	/* supervisor: client session begins */
	MSG_SESSION_CLOSE = 14,	/* supervisor: client session ended */
	MSG_SHUTDOWN = 15,	/* supervisor: stop the upstream and exit */
	MSG_SESSION_CATALOG = 16, /* supervisor: start the session's instance
				   and send its catalog (CATALOG, session) */
	MSG_UP_NOTIFY = 17,	/* supervisor: a notification for the upstream
				   that sent request tag (progress) */
	/* Between the supervisor and an LLM provider's worker (mcp-llm);
	   tag is the supervisor's number for the sampling request. */
	MSG_LLM_REQUEST = 18,	/* supervisor: {params, progress} */
	MSG_LLM_CANCEL = 19,	/* supervisor: forget it */
	MSG_LLM_PROGRESS = 20,	/* llm: {pieces} received so far */
	MSG_LLM_USAGE = 21,	/* llm: {input, output, model, stopReason},
				   just before its MSG_LLM_RESULT */
	MSG_LLM_RESULT = 22,	/* llm: the CreateMessageResult */
	MSG_LLM_FAIL = 23,	/* llm: {outcome, message, status, spent} */
	/* Between the supervisor and an issuer's worker (mcp-idp). */
	MSG_IDP_KEYS = 24,	/* idp: {jwks, fetched, metadata} */
	MSG_IDP_STATUS = 25,	/* idp: {ok, error, jwks_fetches} */
	MSG_IDP_REFRESH = 26,	/* supervisor: fetch the keys again now */
	MSG_IDP_INTROSPECT = 27, /* supervisor, tag: {token} */
	MSG_IDP_INTROSPECTED = 28, /* idp, same tag: RFC 7662 answer, or
				   {error} */
	MSG_IDP_EXCHANGE = 29,	/* supervisor, tag: {code, code_verifier,
				   redirect_uri, resource} of the login
				   client */
	/* Between the supervisor and a remote upstream's worker: the
	 * gateway's login to the upstream (issue 23, doc/architecture.md). */
	MSG_OAUTH_SAVE = 30,	/* worker: {record} to store, or null */
	MSG_OAUTH_LOGIN = 31,	/* supervisor: begin a login (mcpctl login) */
	MSG_OAUTH_PROGRESS = 32, /* worker: {phase: url|done|failed, ...} */
	MSG_OAUTH_CODE = 33,	/* supervisor: {response} that came back */
	MSG_OAUTH_REVOKE = 34,	/* supervisor: revoke and forget the tokens */
	MSG_IDP_EXCHANGED = 35,	/* idp, same tag: the token response, or
				   {error} */
	MSG_OTEL_SPANS = 40,	/* supervisor: {spans: [OTLP JSON spans]} */
	MSG_OTEL_STATS = 41,	/* otel: {exported, failed, dropped} so far */
	MSG_CTL_REQUEST = 64,	/* mcpctl: command */
	MSG_CTL_REPLY = 65,	/* supervisor: command result */
};

/*
 * How a worker (mcp-worker, mcp-llm) exits: the supervisor reads its
 * status (supervisor/proc.c).
 */
#define WORKER_EXIT_OK		0	/* asked to stop */
#define WORKER_EXIT_FAILED	3	/* its upstream or provider failed */
#define WORKER_EXIT_CONFIG	4	/* it refused its configuration: do
					   not start it again */
#define WORKER_EXIT_LOGIN	5	/* a login stored new tokens: start
					   it again now, not a failure */

/*
 * Flags.  On a RESPONSE, FRAME_F_ERROR says the upstream answered with a
 * JSON-RPC error, so the supervisor counts outcomes without parsing the
 * answer.
 */
#define FRAME_F_ERROR		0x0001

struct frame_hdr {
	uint32_t	len;
	uint16_t	type;
	uint16_t	flags;
	uint32_t	session;
	uint32_t	tag;
};

enum frame_result {
	FRAME_NEED = 0,		/* not a whole frame yet */
	FRAME_OK = 1,		/* a whole frame is present */
	FRAME_BAD = -1		/* the stream is corrupt */
};

/* Return the name of a message type for logs, or NULL if unknown. */
const char	*msg_type_name(uint16_t);

void	frame_hdr_encode(const struct frame_hdr *, unsigned char *);
void	frame_hdr_decode(const unsigned char *, struct frame_hdr *);

/*
 * Decode the frame at the start of buf.  On FRAME_OK, hdr is filled and the
 * whole frame (FRAME_HDR_LEN + hdr->len bytes) is present.  The header is
 * checked (length against max, known type, zero flags) as soon as its 16
 * bytes are present, before any of the payload.  *why is set on FRAME_BAD.
 */
enum frame_result frame_decode(const void *buf, size_t len, size_t max,
	    struct frame_hdr *hdr, const char **why);

/* The same on an evbuffer; the frame stays in the buffer. */
enum frame_result frame_peek(struct evbuffer *, size_t max,
	    struct frame_hdr *, const char **why);

/* Append a frame with a payload copied from data. */
void	frame_add(struct evbuffer *, uint16_t type, uint32_t session,
	    uint32_t tag, const void *data, size_t len);
/* Append a frame whose payload is all of src (moved, src is left empty). */
void	frame_add_buffer(struct evbuffer *, uint16_t type, uint32_t session,
	    uint32_t tag, struct evbuffer *src);
/* The same with flags (FRAME_F_*). */
void	frame_add_buffer_flags(struct evbuffer *, uint16_t type,
	    uint16_t flags, uint32_t session, uint32_t tag, struct evbuffer *src);
/* Append a frame whose payload is a JSON value (borrowed). */
void	frame_add_json(struct evbuffer *, uint16_t type, uint32_t session,
	    uint32_t tag, const json_t *);
/*
 * The same for a value that holds secrets (a worker's configuration): no
 * copy of its text outlives the frame's write, and the strings only this
 * value holds (not those of containers or strings shared with others) are
 * wiped; the caller then drops its reference.
 */
void	frame_add_json_secret(struct evbuffer *, uint16_t type,
	    uint32_t session, uint32_t tag, json_t *);

/*
 * Remove a whole frame (after FRAME_OK) and parse its payload as a JSON
 * object.  Returns a new reference, or NULL with *why set.
 */
json_t	*frame_take_json(struct evbuffer *, const struct frame_hdr *,
	    const char **why);
/* The same for a frame that carries a secret: its text in the buffer is
 * wiped (the caller wipes the value's strings: secret_wipe_tree). */
json_t	*frame_take_json_secret(struct evbuffer *, const struct frame_hdr *,
	    const char **);

#endif
