/* SPDX-License-Identifier: ISC */
/*
 * The MCP methods the gateway knows, one row each: what every part of it
 * asks of a method (whether a client may send it, how it is answered,
 * what it is counted as).  A message's method is looked up once, when it
 * is scanned (jrpc_scan sets method_id); code then tests flags or
 * switches on the enum, never compares names.  A method not in the table
 * is MCPM_OTHER.  Adding one: a row in the enum and in mcp_method.c, and
 * its handler (doc/architecture.md, "Adding a method").
 */
#ifndef MCPS_MCP_METHOD_H
#define MCPS_MCP_METHOD_H

#include <stddef.h>

/* In the order /metrics lists requests by method (but "other", the
 * zero of a message scanned, last). */
enum mcp_method {
	MCPM_OTHER = 0,			/* not in the table */
	/* Requests of clients, counted by name. */
	MCPM_INITIALIZE,
	MCPM_PING,			/* also a server's, to its client */
	MCPM_TOOLS_LIST,
	MCPM_TOOLS_CALL,
	MCPM_RESOURCES_LIST,
	MCPM_TEMPLATES_LIST,
	MCPM_RESOURCES_READ,
	MCPM_SUBSCRIBE,
	MCPM_UNSUBSCRIBE,
	MCPM_PROMPTS_LIST,
	MCPM_PROMPTS_GET,
	MCPM_COMPLETE,
	MCPM_SET_LEVEL,
	MCPM_TOOLS_REGISTER,
	MCPM_TOOLS_UNREGISTER,
	/* Requests of 2026-07-28 clients, counted as "other". */
	MCPM_DISCOVER,
	MCPM_LISTEN,
	/* Requests of servers to clients. */
	MCPM_SAMPLING,
	MCPM_ELICITATION,
	MCPM_ROOTS,
	/* Notifications. */
	MCPM_INITIALIZED,
	MCPM_CANCELLED,
	MCPM_PROGRESS,
	MCPM_MESSAGE,
	MCPM_ROOTS_CHANGED,
	MCPM_TOOLS_CHANGED,
	MCPM_RESOURCES_CHANGED,
	MCPM_PROMPTS_CHANGED,
	MCPM_UPDATED,
	MCPM_ELICITATION_COMPLETE,
	MCPM_ACKNOWLEDGED,
	MCPM_N
};

/* What a method is (the flags of its row). */
#define MCPM_F_2025		0x001	/* a 2025 client may send it */
#define MCPM_F_2026		0x002	/* a 2026-07-28 client may send it
					   (the rest is -32601, 404) */
#define MCPM_F_NO_CATALOG	0x004	/* routed without waiting for the
					   session's view of the catalog */
#define MCPM_F_LIST		0x008	/* lists the catalog: asks again for
					   a session's parts that failed */
#define MCPM_F_STREAMS		0x010	/* a 2025 POST of it is answered on
					   an event stream: an upstream may
					   ask the client while it runs */
#define MCPM_F_PROGRESS		0x020	/* a 2026-07-28 one that asks for
					   progress or logs is answered on
					   an event stream */
#define MCPM_F_PARKS		0x040	/* a call whose upstream may need its
					   client's input: input_required
					   for a 2026-07-28 client, rounds
					   with a 2026-07-28 upstream */
#define MCPM_F_INPUT		0x080	/* a server's request that a
					   2026-07-28 client answers in
					   inputResponses */

struct mcp_method_info {
	const char	*name;
	size_t		 len;		/* strlen(name) */
	unsigned int	 flags;
	enum mcp_method	 counted;	/* a client's request of it is
					   counted as: itself, or other */
	const char	*param;		/* the parameter Mcp-Name mirrors
					   ("name", "uri"), or NULL */
};

extern const struct mcp_method_info mcp_methods[MCPM_N];

/* The method named name[0..len), or MCPM_OTHER. */
enum mcp_method	 mcp_method_lookup(const char *name, size_t len);
/* Does a method have any of the flags? */
int		 mcp_method_is(enum mcp_method, unsigned int flags);
const char	*mcp_method_name(enum mcp_method);

#endif
