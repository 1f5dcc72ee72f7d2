/* SPDX-License-Identifier: ISC */
/*
 * The 2026-07-28 ("modern") request envelope: a request names its
 * protocol version and its client's capabilities in params._meta under
 * io.modelcontextprotocol/ keys, and over HTTP mirrors the version, the
 * method and the routed name in headers (MCP-Protocol-Version, Mcp-Method,
 * Mcp-Name).  Pure functions over a scanned message (jsonrpc.h) and header
 * value spans, so they can be fuzzed and tested without a server.
 */
#ifndef MCPS_META_H
#define MCPS_META_H

#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

#include "jsonrpc.h"

struct evbuffer;

#define MCP_VERSION_MODERN	"2026-07-28"	/* the modern revision */

#define META_PREFIX		"io.modelcontextprotocol/"
#define META_VERSION		"io.modelcontextprotocol/protocolVersion"
#define META_CAPS		"io.modelcontextprotocol/clientCapabilities"
#define META_INFO		"io.modelcontextprotocol/clientInfo"
#define META_LOGLEVEL		"io.modelcontextprotocol/logLevel"
#define META_SUBSCRIPTION	"io.modelcontextprotocol/subscriptionId"
#define META_SERVERINFO		"io.modelcontextprotocol/serverInfo"

#define META_NAME_MAX		8192	/* a decoded Mcp-Name header */

/*
 * Does a message claim the modern envelope (params._meta holds the
 * protocol version key, whatever its value)?  1 or 0.
 */
int		 meta_claim(const struct jrpc *);

/* What a modern request's envelope says; spans index the message. */
struct meta_envelope {
	struct jspan	 meta;		/* params._meta */
	struct jspan	 version;	/* a string */
	struct jspan	 caps;		/* an object */
	struct jspan	 info;		/* an object, or absent */
	struct jspan	 progress;	/* progressToken, or absent */
	char		 version_text[32];
	int		 level;		/* logLevel's index, -1 absent */
};

/*
 * Read and check the envelope of a request: _meta an object, its
 * protocolVersion a string, clientCapabilities an object, clientInfo (if
 * any) an object with string name and version, logLevel (if any) one of
 * the eight levels, none of them given twice.  0, or -1 with why set
 * ("key: problem").
 */
int		 meta_parse(const struct jrpc *, struct meta_envelope *,
		    char *why, size_t whylen);

/* Is a version of the modern era (2026-07-28 or later)? */
int		 meta_version_modern(const char *, size_t);
/* Log levels: "debug" 0 to "emergency" 7, or -1. */
int		 meta_log_level(const char *, size_t);
const char	*meta_log_level_name(int);

/* The standard request headers as a request carries them (NULL: absent). */
struct meta_headers {
	const char	*version;
	size_t		 versionlen;
	const char	*method;
	size_t		 methodlen;
	const char	*name;
	size_t		 namelen;
};

/*
 * Check a modern HTTP request the way the specification orders the
 * checks: the envelope (-32602), the headers that disagree with the body
 * (-32020), the version (-32022: the gateway speaks 2026-07-28), the
 * required headers (-32020, Mcp-Name decoded before it is compared), and
 * the method (-32601).  Returns 0, or the JSON-RPC error code with why
 * set and *status the HTTP status to answer with (400, or 404 for an
 * unknown method).  env is filled as far as the envelope was read.
 */
int		 meta_check(const struct meta_headers *, const struct jrpc *,
		    struct meta_envelope *, int *status, char *why,
		    size_t whylen);

/*
 * Decode a header value that may carry the Base64 sentinel
 * ("=?base64?...?="): canonical Base64 of UTF-8.  A plain value is
 * copied.  Returns the length written to out (not NUL-terminated), or -1
 * if the sentinel's payload is invalid or it does not fit.
 */
ssize_t		 meta_header_decode(const char *, size_t, char *out,
		    size_t outlen);
/*
 * Append a value as a header value: as it is when it is plain visible
 * ASCII without surrounding spaces and not itself sentinel-shaped, else
 * in the Base64 sentinel.
 */
void		 meta_header_encode(struct evbuffer *, const char *, size_t);

/*
 * Are a tool's x-mcp-header marks what 2026-07-28 allows: each a token of
 * 1 to 64 characters, unique case aside, on a property of type string,
 * integer or boolean reached from the inputSchema's root by properties
 * keys alone?  If not (0), why says which; a client over HTTP leaves the
 * tool out.
 */
int		 meta_tool_headers_valid(json_t *tool, char *why, size_t len);
/*
 * The arguments a tool mirrors in Mcp-Param-{Name} headers: for each
 * property of its inputSchema (on a chain of properties, at most 8 deep)
 * marked "x-mcp-header": Name, whose value is present in the call's
 * arguments and not null, fn gets Name and the value as a header carries
 * it before encoding (a string decoded, a number as written, true or
 * false).  Other types are not mirrored.  Returns how many fn got.
 */
int		 meta_param_each(json_t *input_schema, const struct jrpc *,
		    void (*fn)(void *, const char *name, const char *value,
		    size_t len), void *);
/* Do two header values of a parameter agree (numbers numerically)? */
int		 meta_param_equal(const char *, size_t, const char *, size_t);

/*
 * Edits that remove the members of an object whose keys begin with one
 * of the prefixes (a NULL-terminated list), keeping the object valid
 * JSON; at most max edits are written, sorted.  Returns the number of
 * edits, or -1 if more than max were needed.
 */
int		 meta_drop_members(const char *p, struct jspan obj,
		    const char *const *prefixes, struct jedit *edits,
		    size_t max);

#endif
