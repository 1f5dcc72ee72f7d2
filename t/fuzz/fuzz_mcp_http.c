/* SPDX-License-Identifier: ISC */
/*
 * Fuzz the gateway's HTTP front in-process: whole requests, heads and
 * bodies in several packets, through supervisor/http.c and mcp_http.c and
 * everything behind them (sessions, streams and their replay, routing, the
 * catalog and per-session views, requests from upstreams to clients).
 * Nothing is forked and no port is opened: the gateway runs in-process
 * (t/unit/sup_harness.h, which the unit suites of supervisor/ share),
 * client connections are socketpairs served with http_adopt(), and the
 * workers of the two upstreams are played here, at the other end of their
 * channels.
 *
 * An input is a byte of settings, then a script:
 *
 *	byte 0	bit 0: auth_tokens is set (fuzz-token-0123456789);
 *		bit 1: allowed_hosts and allowed_origins are set;
 *		bit 2: trusted_proxies holds 127.0.0.1, the clients' address
 *		(a PROXY header or X-Forwarded-For names the client), and
 *		the access log is on (to /dev/null)
 *	0x01	packet boundary: what was written is sent, the loop runs
 *	0x02 n	go on with connection n % 4 (connected on first use)
 *	0x03	the workers answer what they have been sent
 *	0x04	the client hangs up the current connection
 *	0x05	the upstreams' catalogs change (or change back)
 *	0x06 n	the byte n, whatever it is (a NUL, a command byte)
 *	others	bytes for the current connection (at first, connection 0)
 *
 * Upstream "a" is shared (tools a__echo, a__sample, a__elicit, a__poke,
 * a__fail, a__slow; resources; prompt a__greet), upstream "b" per-session
 * (b__echo, b__mine, and b__roots for clients that declare roots; a
 * client named "broken" gets no instance).  Workers answer requests only
 * at 0x03, so that a client can hang up first and resume.  A call to
 * sample, elicit, poke or roots first sends the client a request (answered
 * at the next 0x03 if the client has answered it).
 *
 * Inputs are reproducible: the k-th session of an input has the id
 * "fuzz." then %016x of k then 0123456789abcdef, and the requests the gateway sends clients
 * are renumbered 1, 2, ... in each input (its counter runs on across
 * inputs), so a client answers the first with "id":1.
 *
 * Checked besides the sanitizers: every connection carries well-formed
 * HTTP/1.1 responses and nothing after one that closes it; every frame the
 * gateway sends a worker is well formed, a REQUEST carries a JSON-RPC
 * request and an UP_RESPONSE the answer to the request it names; at the
 * end of an input, with the clients gone and the sessions freed, no
 * connection, session, pending request or subscription is left.
 */
#include "config.h"

#include <sys/queue.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <jansson.h>

#include "frame.h"
#include "http_parse.h"
#include "jsonrpc.h"
#include "log.h"
#include "proxy_parse.h"
#include "supervisor.h"

#include "sup_harness.h"

#define CHECK(x) do {							\
	if (!(x)) {							\
		fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__,	\
		    __LINE__, #x);					\
		abort();						\
	}								\
} while (0)

#define MAX_INPUT	65536	/* bytes of an input used */
#define NCLIENTS	4	/* connections open at once */
#define MAX_CONNECTS	32	/* connections per input */
#define MAX_TURNS	64	/* loop passes to settle */
#define MAX_UR		64	/* client requests renumbered at once */
#define MAX_SESSIONS	16	/* sessions a worker remembers */

#define CMD_PACKET	0x01
#define CMD_SWITCH	0x02
#define CMD_ANSWER	0x03
#define CMD_HANGUP	0x04
#define CMD_CATALOG	0x05
#define CMD_LITERAL	0x06	/* the next byte goes to the connection */

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static const char conf_common[] =
    "listen = \"127.0.0.1:8931\";\n"
    "control = \"/nonexistent/mcp-fuzz.sock\";\n"
    "instance = \"fuzz\";\n"
    "max_body = 8192;\n"
    "max_sessions = 4;\n"
    "max_pending = 3;\n"
    "page_size = 2;\n"
    "servers = (\n"
    "  { name = \"a\"; transport = \"stdio\"; command = [ \"true\" ];\n"
    "    max_message = 4096;\n"
    "    sampling = [ \"client\", \"decline\" ];\n"
    "    elicitation = [ \"client\", \"defaults\", \"decline\" ]; },\n"
    "  { name = \"b\"; transport = \"stdio\"; command = [ \"true\" ];\n"
    "    isolation = \"per-session\"; }\n"
    ");\n";
static const char conf_tokens[] =
    "auth_tokens = [ \"fuzz-token-0123456789\" ];\n";
static const char conf_allowed[] =
    "allowed_hosts = [ \"gateway.example\", \"127.0.0.1:8931\" ];\n"
    "allowed_origins = [ \"https://app.example\" ];\n";
static const char conf_proxies[] =
    "trusted_proxies = [ \"127.0.0.1\", \"10.0.0.0/8\" ];\n"
    "access_log = \"/dev/null\";\n";

/* What upstream a lists, and what it lists after a change. */
static const char catalog_a[] =
    "{\"tools\":["
    "{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\"}},"
    "{\"name\":\"sample\",\"inputSchema\":{\"type\":\"object\"}},"
    "{\"name\":\"elicit\",\"inputSchema\":{\"type\":\"object\"}},"
    "{\"name\":\"poke\",\"inputSchema\":{\"type\":\"object\"}},"
    "{\"name\":\"fail\",\"inputSchema\":{\"type\":\"object\"}},"
    "{\"name\":\"slow\",\"inputSchema\":{\"type\":\"object\"}}],"
    "\"resources\":[{\"uri\":\"file:///a.txt\",\"name\":\"a\"},"
    "{\"uri\":\"mem://fixed\",\"name\":\"fixed\"}],"
    "\"resourceTemplates\":[{\"uriTemplate\":\"mem://{key}\","
    "\"name\":\"mem\"},{\"uriTemplate\":\"file:///{+path}\","
    "\"name\":\"files\"}],"
    "\"prompts\":[{\"name\":\"greet\"}]}";
static const char catalog_a2[] =
    "{\"tools\":["
    "{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\"}},"
    "{\"name\":\"sample\",\"inputSchema\":{\"type\":\"object\"}},"
    "{\"name\":\"added\",\"inputSchema\":{\"type\":\"object\"}}],"
    "\"resources\":[{\"uri\":\"file:///a.txt\",\"name\":\"a\"}],"
    "\"resourceTemplates\":[],"
    "\"prompts\":[{\"name\":\"greet\"},{\"name\":\"b__echo\"}]}";
/* Upstream b as its catalog-listing instance lists it. */
static const char catalog_b[] =
    "{\"tools\":[{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\"}}],"
    "\"prompts\":[{\"name\":\"hello\"}]}";
static const char catalog_b2[] =
    "{\"tools\":[{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\"}},"
    "{\"name\":\"mine\",\"inputSchema\":{\"type\":\"object\"}}]}";

/* A request a worker holds until the next CMD_ANSWER; owned by it. */
struct held {
	uint32_t		 session;
	uint32_t		 tag;
	char			*text;
	size_t			 len;
	uint32_t		 ref;		/* its request to the client */
	int			 asked;		/* that request was sent */
	int			 replied;	/* and answered */
	TAILQ_ENTRY(held)	 entry;
};
TAILQ_HEAD(held_list, held);

/* A session as a worker knows it from SESSION_OPEN. */
struct wsession {
	uint32_t	no;
	int		roots;		/* declared roots */
	int		broken;		/* its instance cannot start */
};

/* One upstream's worker, as played here. */
struct worker {
	struct upstream		*up;
	struct sup_worker	*sw;		/* its channel */
	const char		*catalog;	/* its normal one */
	const char		*changed;	/* after CMD_CATALOG */
	struct held_list	 held;
	struct wsession		 sessions[MAX_SESSIONS];
	size_t			 nsessions;
};

/* A client connection and the state of checking what it receives. */
enum resp_state {
	RESP_HEAD = 0,
	RESP_LENGTH,
	RESP_CHUNKED
};

#define MAX_SHADOW	256	/* requests awaiting their answers */
#define SHADOW_HEAD_MAX	16384	/* as supervisor/http_priv.h's HTTP_MAX_HEAD */

enum req_state { REQ_PROXY, REQ_HEAD, REQ_LENGTH, REQ_CHUNKED, REQ_LOST };

struct client {
	struct sup_conn		*conn;		/* NULL: not connected */
	struct evbuffer		*out;		/* written at the next flush */
	struct evbuffer		*in;		/* received, not yet checked
						   (the connection's) */
	enum resp_state		 state;
	uint64_t		 remaining;
	struct http_chunked	 chunked;
	int			 closing;	/* the last response closes */
	int			 done;		/* and it is complete */
	/*
	 * The requests sent, parsed as the gateway parses them, so that
	 * the answer to a HEAD is known to have no body: which of the
	 * requests not yet answered are HEADs, oldest first.
	 */
	struct evbuffer		*sent;
	enum req_state		 sstate;
	uint64_t		 sremaining;
	struct http_chunked	 schunked;
	unsigned char		 heads[MAX_SHADOW];
	size_t			 nheads, head0;
	size_t			 traced;	/* of in, shown */
};

static struct conf	*confs[8];
static struct worker	 workers[2];
static struct client	 clients[NCLIENTS];
static uint32_t		 next_ref;
static uint64_t		 next_client_id;
static int		 catalogs_changed;
static int		 trace;		/* $FUZZ_TRACE: show the traffic */

/* Requests of the gateway to clients, renumbered: which is which. */
static struct {
	const struct up_request	*ur;
	uint64_t		 id;
} renumbered[MAX_UR];
static size_t		 nrenumbered;

/* Read a configuration: the common part with optional extras. */
static struct conf *
make_conf(int tokens, int allowed, int proxies)
{
	struct conf	*c;
	char		 text[4096], err[512];

	snprintf(text, sizeof text, "%s%s%s%s", conf_common,
	    tokens ? conf_tokens : "", allowed ? conf_allowed : "",
	    proxies ? conf_proxies : "");
	if ((c = conf_parse(text, "fuzz.conf", err, sizeof err)) == NULL) {
		fprintf(stderr, "fuzz_mcp_http: %s\n", err);
		abort();
	}
	return (c);
}

/* Hand the gateway a frame as if it came from a worker. */
static void
worker_send(struct worker *w, uint16_t type, uint32_t session, uint32_t tag,
    const char *p, size_t len)
{
	if (trace)
		fprintf(stderr, "<-- %s %s session %u tag %u\n%.*s\n",
		    w->up->sc->name, msg_type_name(type), session, tag,
		    (int)len, p);
	sup_sendq(w->sw, type, 0, session, tag, "%.*s", (int)len, p);
}

/* Send a frame whose payload is formatted. */
static void __attribute__((format(printf, 5, 6)))
worker_sendf(struct worker *w, uint16_t type, uint32_t session, uint32_t tag,
    const char *fmt, ...)
{
	va_list	 ap;
	char	*text;
	int	 n;

	va_start(ap, fmt);
	n = vasprintf(&text, fmt, ap);
	va_end(ap);
	CHECK(n >= 0);
	worker_send(w, type, session, tag, text, (size_t)n);
	free(text);
}

/* A session the worker was told about, or NULL. */
static struct wsession *
worker_session(struct worker *w, uint32_t no)
{
	size_t	i;

	for (i = 0; i < w->nsessions; i++) {
		if (w->sessions[i].no == no)
			return (&w->sessions[i]);
	}
	return (NULL);
}

/* A client session began (SESSION_OPEN): note what its client is. */
static void
worker_session_open(struct worker *w, uint32_t no, json_t *o)
{
	struct wsession	*ws;
	const char	*name = NULL;

	if ((ws = worker_session(w, no)) == NULL) {
		if (w->nsessions == MAX_SESSIONS)
			return;
		ws = &w->sessions[w->nsessions++];
	}
	ws->no = no;
	ws->roots = json_object_get(json_object_get(o, "capabilities"),
	    "roots") != NULL;
	json_unpack(o, "{s:{s:s}}", "clientInfo", "name", &name);
	ws->broken = name != NULL && strcmp(name, "broken") == 0;
}

/* A per-session instance lists its catalog (SESSION_CATALOG). */
static void
worker_session_catalog(struct worker *w, uint32_t no)
{
	struct wsession	*ws = worker_session(w, no);
	json_t		*part;
	char		*text;

	if (ws != NULL && ws->broken)
		part = json_pack("{s:s}", "error", "the instance could not "
		    "start: fuzz");
	else
		part = json_pack("{s:[{s:s, s:{s:s}}, {s:s, s:{s:s}}], s:[]}",
		    "tools", "name", "echo", "inputSchema", "type", "object",
		    "name", "mine", "inputSchema", "type", "object",
		    "prompts");
	if (ws != NULL && ws->roots && !ws->broken)
		json_array_append_new(json_object_get(part, "tools"),
		    json_pack("{s:s, s:{s:s}}", "name", "roots",
		    "inputSchema", "type", "object"));
	text = json_dumps(part, JSON_COMPACT);
	json_decref(part);
	worker_send(w, MSG_CATALOG, no, 0, text, strlen(text));
	free(text);
}

/* Check and act on one frame the gateway sent a worker. */
static void
worker_frame(struct worker *w, const struct sup_frame *hdr)
{
	const char	*p = hdr->text, *why;
	size_t		 n = hdr->len;
	struct held	*h;
	struct jrpc	 m;
	json_t		*o;
	int64_t		 id;

	if (trace)
		fprintf(stderr, "--> %s %s session %u tag %u\n%.*s\n",
		    w->up->sc->name, msg_type_name(hdr->type), hdr->session,
		    hdr->tag, (int)n, p);
	switch (hdr->type) {
	case MSG_REQUEST:
		CHECK(jrpc_scan(p, n, &m, &why) == 0);
		CHECK(m.kind == JRPC_REQUEST);
		CHECK(n <= w->up->sc->max_message);
		h = calloc(1, sizeof *h);
		CHECK(h != NULL && (h->text = malloc(n)) != NULL);
		memcpy(h->text, p, n);
		h->len = n;
		h->session = hdr->session;
		h->tag = hdr->tag;
		TAILQ_INSERT_TAIL(&w->held, h, entry);
		break;
	case MSG_UP_RESPONSE:
		CHECK(jrpc_scan(p, n, &m, &why) == 0);
		CHECK(m.kind == JRPC_RESULT || m.kind == JRPC_ERROR);
		CHECK(jscan_int64(p, m.id, &id) == 0 && id == hdr->tag);
		TAILQ_FOREACH(h, &w->held, entry) {
			if (h->asked && h->ref == hdr->tag)
				h->replied = 1;
		}
		break;
	case MSG_CLIENT_NOTIFY:
		CHECK(jrpc_scan(p, n, &m, &why) == 0);
		CHECK(m.kind == JRPC_NOTIFICATION);
		break;
	case MSG_CONFIG:
		break;		/* answered by the harness */
	case MSG_CANCEL:
	case MSG_SESSION_OPEN:
	case MSG_SESSION_CLOSE:
	case MSG_SESSION_CATALOG:
		CHECK((o = json_loadb(p, n, 0, NULL)) != NULL);
		CHECK(json_is_object(o));
		CHECK(hdr->type == MSG_CANCEL || hdr->session != 0);
		if (hdr->type == MSG_SESSION_OPEN)
			worker_session_open(w, hdr->session, o);
		else if (hdr->type == MSG_SESSION_CATALOG) {
			CHECK(w->up->sc->isolation == ISOLATION_PER_SESSION);
			worker_session_catalog(w, hdr->session);
		}
		json_decref(o);
		break;
	default:
		fprintf(stderr, "fuzz_mcp_http: unexpected %s frame\n",
		    msg_type_name(hdr->type));
		abort();
	}
}

/* Handle what the gateway sent a worker; 1 if anything came. */
static int
worker_read(struct worker *w)
{
	struct sup_frame	*f;
	int			 got = 0;

	while ((f = sup_take(w->sw, 0)) != NULL) {
		worker_frame(w, f);
		got = 1;
	}
	return (got);
}

/* The upstream's request to the client that a tool call makes, if any. */
static const char *
tool_request(const char *tool)
{
	if (strcmp(tool, "sample") == 0)
		return ("\"method\":\"sampling/createMessage\",\"params\":"
		    "{\"messages\":[{\"role\":\"user\",\"content\":{\"type\":"
		    "\"text\",\"text\":\"hi\"}}],\"maxTokens\":10}");
	if (strcmp(tool, "elicit") == 0)
		return ("\"method\":\"elicitation/create\",\"params\":"
		    "{\"mode\":\"form\",\"message\":\"name?\",\"requestedSchema"
		    "\":{\"type\":\"object\",\"properties\":{\"name\":{\"type\":"
		    "\"string\",\"default\":\"x\"}},\"required\":[\"name\"]}}");
	if (strcmp(tool, "poke") == 0)
		return ("\"method\":\"ping\"");
	if (strcmp(tool, "roots") == 0)
		return ("\"method\":\"roots/list\"");
	return (NULL);
}

/*
 * Answer a held request, as far as it can be: 1 when it is answered, 0 if
 * it waits (for its client, or for ever).  At the end of an input (last),
 * everything is answered.
 */
static int
worker_answer(struct worker *w, struct held *h, int last)
{
	static const char *const name_path[] = { "name", NULL };
	static const char *const token_path[] = { "_meta", "progressToken",
	    NULL };
	static const char *const uri_path[] = { "uri", NULL };
	struct evbuffer	*buf;
	struct jrpc	 m;
	struct jspan	 at;
	const char	*why, *ask, *result = "{}";
	char		 tool[64] = "", uri[256] = "";

	CHECK(jrpc_scan(h->text, h->len, &m, &why) == 0);
	if (jscan_path(m.p, m.params, name_path, &at) == 0)
		(void)jscan_string(m.p, at, tool, sizeof tool);
	if (jscan_path(m.p, m.params, uri_path, &at) == 0)
		(void)jscan_string(m.p, at, uri, sizeof uri);

	if (strcmp(m.method_name, "tools/call") == 0) {
		if (strcmp(tool, "slow") == 0 && !last)
			return (0);
		if (strcmp(tool, "fail") == 0) {
			worker_sendf(w, MSG_FAIL, h->session, h->tag,
			    "{\"code\":-32603,\"message\":\"fuzz: the tool "
			    "failed\"}");
			return (1);
		}
		if ((ask = tool_request(tool)) != NULL && !last) {
			if (!h->asked) {
				h->ref = ++next_ref;
				h->asked = 1;
				worker_sendf(w, MSG_UP_REQUEST, h->session,
				    h->tag, "{\"jsonrpc\":\"2.0\",\"id\":%u,%s}",
				    h->ref, ask);
				return (0);
			}
			if (!h->replied)
				return (0);
		}
		if (jscan_path(m.p, m.params, token_path, &at) == 0)
			worker_sendf(w, MSG_NOTIFY, h->session, h->tag,
			    "{\"jsonrpc\":\"2.0\",\"method\":"
			    "\"notifications/progress\",\"params\":"
			    "{\"progressToken\":%.*s,\"progress\":1}}",
			    (int)at.len, m.p + at.off);
		worker_sendf(w, MSG_NOTIFY, h->session, h->tag,
		    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\","
		    "\"params\":{\"level\":\"info\",\"data\":\"calling\"}}");
		result = "{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}]}";
	} else if (strcmp(m.method_name, "resources/read") == 0)
		result = "{\"contents\":[{\"uri\":\"x\",\"text\":\"x\"}]}";
	else if (strcmp(m.method_name, "prompts/get") == 0)
		result = "{\"messages\":[]}";
	else if (strcmp(m.method_name, "completion/complete") == 0)
		result = "{\"completion\":{\"values\":[\"v\"]}}";

	buf = evbuffer_new();
	jrpc_add_result(buf, m.p + m.id.off, m.id.len, result,
	    strlen(result));
	worker_send(w, MSG_RESPONSE, h->session, h->tag,
	    (const char *)evbuffer_pullup(buf, -1), evbuffer_get_length(buf));
	evbuffer_free(buf);
	/* A subscribed resource changes at once, for every subscriber. */
	if (strcmp(m.method_name, "resources/subscribe") == 0 && !last) {
		buf = evbuffer_new();
		evbuffer_add_printf(buf, "{\"jsonrpc\":\"2.0\",\"method\":"
		    "\"notifications/resources/updated\",\"params\":"
		    "{\"uri\":");
		jscan_add_string(buf, uri, strlen(uri));
		evbuffer_add(buf, "}}", 2);
		worker_send(w, MSG_NOTIFY, 0, 0,
		    (const char *)evbuffer_pullup(buf, -1),
		    evbuffer_get_length(buf));
		evbuffer_free(buf);
	}
	return (1);
}

/* Answer what a worker holds, then say something to every session. */
static void
worker_answer_all(struct worker *w, int last)
{
	struct held	*h, *next;

	for (h = TAILQ_FIRST(&w->held); h != NULL; h = next) {
		next = TAILQ_NEXT(h, entry);
		if (!worker_answer(w, h, last))
			continue;
		TAILQ_REMOVE(&w->held, h, entry);
		free(h->text);
		free(h);
	}
	if (!last)
		worker_sendf(w, MSG_NOTIFY, 0, 0, "{\"jsonrpc\":\"2.0\","
		    "\"method\":\"notifications/message\",\"params\":"
		    "{\"level\":\"warning\",\"data\":\"to all\"}}");
}

/* Forget an input's requests and sessions. */
static void
worker_reset(struct worker *w)
{
	struct held	*h;

	while ((h = TAILQ_FIRST(&w->held)) != NULL) {
		TAILQ_REMOVE(&w->held, h, entry);
		free(h->text);
		free(h);
	}
	w->nsessions = 0;
	sup_forget(w->sw);
}

/* Give a request of the gateway to a client its number in the input. */
static void
renumber_one(struct session *s, void *arg)
{
	struct up_request	*ur;
	size_t			 i;

	TAILQ_FOREACH(ur, &s->up_requests, session_entry) {
		for (i = 0; i < nrenumbered; i++) {
			if (renumbered[i].ur == ur &&
			    renumbered[i].id == ur->id)
				break;
		}
		if (i < nrenumbered || nrenumbered == MAX_UR)
			continue;
		ur->id = ++next_client_id;
		renumbered[nrenumbered].ur = ur;
		renumbered[nrenumbered++].id = ur->id;
	}
}

/*
 * The gateway numbers its requests to clients with a counter that runs on
 * across inputs: renumber new ones in the order they appear.  A request
 * freed and another made at the same address cannot be taken for it: the
 * gateway counts every request it makes, this only those it sees, so the
 * new one's number is always above the one the old was given here.
 */
static void
renumber(void)
{
	session_foreach(renumber_one, NULL);
}

static int	shadow_answered(struct client *);

/* Check the responses received on a connection, as far as they go. */
static void
client_check(struct client *c)
{
	static struct http_head	 h;
	const struct http_header *f;
	enum http_body		 body;
	ssize_t			 r;
	size_t			 n, take;
	const char		*p;
	int			 done;

	while ((n = evbuffer_get_length(c->in)) > 0) {
		CHECK(!c->done);	/* nothing after a closing response */
		p = (const char *)evbuffer_pullup(c->in, -1);
		switch (c->state) {
		case RESP_HEAD:
			r = http_parse_response(p, n, 65536, &h);
			if (r == 0) {
				CHECK(n < 65536);
				return;
			}
			CHECK(r > 0);
			if (h.status >= 100 && h.status < 200) {
				CHECK(h.status == 100 && h.nheaders == 0);
				evbuffer_drain(c->in, (size_t)r);
				break;
			}
			CHECK(http_body_framing(&h, 0, &body,
			    &c->remaining) == 0);
			CHECK(body != HTTP_BODY_EOF);
			/* The answer to HEAD has the headers of a body. */
			if (shadow_answered(c))
				body = HTTP_BODY_NONE;
			f = http_header(&h, "Connection");
			c->closing = f != NULL &&
			    http_has_token(f->value, f->valuelen, "close");
			evbuffer_drain(c->in, (size_t)r);
			if (body == HTTP_BODY_CHUNKED) {
				http_chunked_init(&c->chunked);
				c->state = RESP_CHUNKED;
			} else if (body == HTTP_BODY_LENGTH)
				c->state = RESP_LENGTH;
			else
				c->done = c->closing;
			break;
		case RESP_LENGTH:
			take = n < c->remaining ? n : (size_t)c->remaining;
			evbuffer_drain(c->in, take);
			c->remaining -= take;
			if (c->remaining == 0) {
				c->state = RESP_HEAD;
				c->done = c->closing;
			}
			break;
		case RESP_CHUNKED:
			r = http_chunked_decode(&c->chunked, p, n, NULL,
			    SIZE_MAX, &done);
			CHECK(r >= 0);
			evbuffer_drain(c->in, (size_t)r);
			if (done) {
				c->state = RESP_HEAD;
				c->done = c->closing;
			}
			break;
		}
	}
}

/* Follow the requests a client sent, as the gateway reads them. */
static void
shadow_feed(struct client *c)
{
	static struct http_head	 h;
	struct evbuffer_ptr	 end;
	struct proxy_info	 pi;
	enum http_body		 body;
	const unsigned char	*up;
	const char		*p, *pwhy;
	size_t			 n, headlen, take;
	ssize_t			 r;
	int			 done;

	while ((n = evbuffer_get_length(c->sent)) > 0) {
		switch (c->sstate) {
		case REQ_PROXY:
			up = evbuffer_pullup(c->sent, (ev_ssize_t)(n <
			    PROXY_V2_MAX ? n : PROXY_V2_MAX));
			switch (proxy_detect(up, n)) {
			case -1:
				return;
			case 0:
				c->sstate = REQ_HEAD;
				continue;
			}
			r = proxy_parse(up, n < PROXY_V2_MAX ? n :
			    PROXY_V2_MAX, &pi, &pwhy);
			if (r == 0 && n < PROXY_V2_MAX)
				return;
			if (r <= 0) {
				c->sstate = REQ_LOST;	/* closed */
				break;
			}
			evbuffer_drain(c->sent, (size_t)r);
			c->sstate = REQ_HEAD;
			break;
		case REQ_HEAD:
			end = evbuffer_search(c->sent, "\r\n\r\n", 4, NULL);
			if (end.pos < 0) {
				if (n > SHADOW_HEAD_MAX)
					c->sstate = REQ_LOST;
				return;
			}
			headlen = (size_t)end.pos + 4;
			p = (const char *)evbuffer_pullup(c->sent, headlen);
			if (headlen > SHADOW_HEAD_MAX || http_parse_request(p,
			    headlen, SHADOW_HEAD_MAX, &h) <= 0 ||
			    c->nheads == MAX_SHADOW) {
				/* The gateway answers it and closes. */
				c->sstate = REQ_LOST;
				break;
			}
			/* Its method is known even if its framing is bad. */
			c->heads[(c->head0 + c->nheads++) % MAX_SHADOW] =
			    h.methodlen == 4 && memcmp(h.method, "HEAD", 4) == 0;
			if (http_body_framing(&h, 1, &body,
			    &c->sremaining) != 0) {
				c->sstate = REQ_LOST;
				break;
			}
			evbuffer_drain(c->sent, headlen);
			if (body == HTTP_BODY_CHUNKED) {
				http_chunked_init(&c->schunked);
				c->sstate = REQ_CHUNKED;
			} else if (body == HTTP_BODY_LENGTH && c->sremaining > 0)
				c->sstate = REQ_LENGTH;
			break;
		case REQ_LENGTH:
			take = n < c->sremaining ? n : (size_t)c->sremaining;
			evbuffer_drain(c->sent, take);
			if ((c->sremaining -= take) == 0)
				c->sstate = REQ_HEAD;
			break;
		case REQ_CHUNKED:
			p = (const char *)evbuffer_pullup(c->sent, -1);
			r = http_chunked_decode(&c->schunked, p, n, NULL,
			    SIZE_MAX, &done);
			if (r < 0) {
				c->sstate = REQ_LOST;
				break;
			}
			evbuffer_drain(c->sent, (size_t)r);
			if (done)
				c->sstate = REQ_HEAD;
			else if (r == 0)
				return;
			break;
		case REQ_LOST:
			evbuffer_drain(c->sent, n);
			return;
		}
	}
}

/* Is the oldest request not yet answered a HEAD?  Forget it. */
static int
shadow_answered(struct client *c)
{
	int	head;

	if (c->nheads == 0)
		return (0);
	head = c->heads[c->head0];
	c->head0 = (c->head0 + 1) % MAX_SHADOW;
	c->nheads--;
	return (head);
}

/* Check what the gateway sent a client. */
static void
client_read(struct client *c)
{
	size_t	len;

	if (c->conn == NULL || (len = evbuffer_get_length(c->in)) == 0)
		return;
	if (trace && len > c->traced)
		fprintf(stderr, "<<< %d\n%.*s\n", (int)(c - clients),
		    (int)(len - c->traced),
		    (const char *)evbuffer_pullup(c->in, -1) + c->traced);
	client_check(c);
	c->traced = evbuffer_get_length(c->in);
}

/*
 * After each pass of the loop: the workers handle what they were sent,
 * the clients check what they received, and requests to clients are
 * renumbered.
 */
static int
fuzz_turn(void)
{
	size_t	i;
	int	busy = 0;

	for (i = 0; i < NCLIENTS; i++)
		client_read(&clients[i]);
	for (i = 0; i < 2; i++)
		busy |= worker_read(&workers[i]);
	renumber();
	return (busy);
}

/* Run the loop until nothing more happens (bounded). */
static void
settle(void)
{
	(void)sup_settle(MAX_TURNS);
}

/* Connect a client, as if from 127.0.0.1. */
static void
client_connect(struct client *c)
{
	c->conn = sup_connect();
	c->conn->raw = 1;
	c->in = c->conn->in;
	c->traced = 0;
	c->state = RESP_HEAD;
	c->closing = c->done = 0;
	evbuffer_drain(c->sent, evbuffer_get_length(c->sent));
	/* From a trusted proxy, a PROXY header may come first. */
	c->sstate = conf->trusted_proxies != NULL ? REQ_PROXY : REQ_HEAD;
	c->nheads = c->head0 = 0;
}

/* Send what was written to a client's connection. */
static void
client_flush(struct client *c)
{
	size_t	len = evbuffer_get_length(c->out);

	if (c->conn != NULL && len > 0) {
		if (trace)
			fprintf(stderr, ">>> %d\n%.*s\n", (int)(c - clients),
			    (int)len, (const char *)evbuffer_pullup(c->out,
			    -1));
		sup_writeq(c->conn, evbuffer_pullup(c->out, -1), len);
		evbuffer_add(c->sent, evbuffer_pullup(c->out, -1), len);
		shadow_feed(c);
	}
	evbuffer_drain(c->out, len);
}

/* Hang up a client's connection. */
static void
client_hangup(struct client *c)
{
	if (c->conn == NULL)
		return;
	client_flush(c);
	settle();
	sup_release(c->conn);
	c->conn = NULL;
	c->in = NULL;
	settle();
}

/* Set the harness up once. */
static void
setup(void)
{
	size_t	i;

	trace = getenv("FUZZ_TRACE") != NULL;
	for (i = 0; i < 8; i++)
		confs[i] = make_conf(i & 1, (i >> 1) & 1, (i >> 2) & 1);
	workers[0].catalog = catalog_a;
	workers[0].changed = catalog_a2;
	workers[1].catalog = catalog_b;
	workers[1].changed = catalog_b2;
	sup_catalog("a", catalog_a);
	sup_catalog("b", catalog_b);
	sup_start_conf(confs[0]);
	log_init("fuzz_mcp_http", 1, getenv("FUZZ_VERBOSE") != NULL ?
	    atoi(getenv("FUZZ_VERBOSE")) : 0);
	CHECK(nupstreams == 2);
	for (i = 0; i < 2; i++) {
		TAILQ_INIT(&workers[i].held);
		workers[i].up = upstreams[i];
		workers[i].sw = sup_worker(upstreams[i]->sc->name);
		CHECK(workers[i].sw != NULL && workers[i].up->state ==
		    UPSTREAM_READY);
	}
	sup_turn_hook = fuzz_turn;
}

/* Give every upstream its other catalog, or its own back. */
static void
change_catalogs(int changed)
{
	size_t	i;

	if (catalogs_changed == changed)
		return;
	catalogs_changed = changed;
	for (i = 0; i < 2; i++)
		sup_catalog(workers[i].up->sc->name, changed ?
		    workers[i].changed : workers[i].catalog);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int	 ready;
	struct client	*cur;
	char		 err[512];
	size_t		 i, connects = 0;
	uint8_t		 b;
	int		 literal;

	if (!ready) {
		setup();
		ready = 1;
	}
	if (size < 1)
		return (0);
	if (size > MAX_INPUT)
		size = MAX_INPUT;

	/* Settings. */
	conf = confs[data[0] & 7];
	CHECK(auth_configure(conf, err, sizeof err) == 0);
	proxy_configure();
	/* With bit 2, lines of the access log are made (and thrown away). */
	CHECK(access_log_open(conf, err, sizeof err) == 0);
	sup_reset_random();
	next_ref = 0;
	next_client_id = 0;
	nrenumbered = 0;
	for (i = 0; i < NCLIENTS; i++) {
		clients[i].conn = NULL;
		if (clients[i].out == NULL) {
			clients[i].out = evbuffer_new();
			clients[i].sent = evbuffer_new();
		}
	}

	/* The script. */
	cur = &clients[0];
	for (i = 1; i < size; i++) {
		b = data[i];
		/* 0x06 n: the byte n itself, a command byte or NUL too. */
		literal = b > CMD_LITERAL;
		if (b == CMD_LITERAL) {
			if (++i == size)
				break;
			b = data[i];
			literal = 1;
		}
		if (literal) {
			if (cur->conn == NULL && connects < MAX_CONNECTS) {
				connects++;
				client_connect(cur);
			}
			evbuffer_add(cur->out, &b, 1);
			continue;
		}
		client_flush(cur);
		settle();
		switch (b) {
		case CMD_SWITCH:
			if (i + 1 < size)
				cur = &clients[data[++i] % NCLIENTS];
			break;
		case CMD_ANSWER:
			worker_answer_all(&workers[0], 0);
			worker_answer_all(&workers[1], 0);
			settle();
			break;
		case CMD_HANGUP:
			client_hangup(cur);
			break;
		case CMD_CATALOG:
			change_catalogs(!catalogs_changed);
			settle();
			break;
		default:
			break;
		}
	}
	client_flush(cur);
	settle();

	/* Every client goes; then every session; then what is left. */
	for (i = 0; i < NCLIENTS; i++)
		client_hangup(&clients[i]);
	session_free_all();
	session_init();
	settle();
	worker_answer_all(&workers[0], 1);
	worker_answer_all(&workers[1], 1);
	settle();
	CHECK(http_conn_count() == 0);
	CHECK(session_count() == 0);
	CHECK(continuation_count() == 0);
	for (i = 0; i < nupstreams; i++) {
		CHECK(upstreams[i]->npending == 0);
		CHECK(TAILQ_EMPTY(&upstreams[i]->up_requests));
		CHECK(upstreams[i]->subs.count == 0);
	}

	/* As a new worker would leave it: no level set, nothing held. */
	for (i = 0; i < nupstreams; i++)
		route_fail_upstream(upstreams[i], MCP_CONNECTION_CLOSED,
		    "the fuzz input ended", 0);
	change_catalogs(0);
	worker_reset(&workers[0]);
	worker_reset(&workers[1]);
	return (0);
}
