/* SPDX-License-Identifier: ISC */
/*
 * mcpctl connect: the stdio bridge.  A host that starts MCP servers as
 * commands (Claude Desktop, VS Code, Cursor) runs "mcpctl connect"; it
 * speaks MCP over standard input and output, one JSON-RPC message per
 * line, and relays every message both ways to the daemon's WebSocket
 * endpoint.  Only MCP is written on standard output; what goes wrong is
 * said on standard error, and the exit status is non-zero when the
 * gateway went away or refused us, so the host shows the server as
 * failed.  End of input ends the session cleanly, once the requests
 * passed on are answered (BRIDGE_DRAIN_MS at most).  A message from the
 * gateway is reassembled in common/ws_msg.c, within BRIDGE_MAX_LINE and a
 * deadline, so a hostile gateway cannot make the bridge hold more than
 * that, whatever its fragments.  wslay is driven only from loop events; its
 * callbacks only queue.
 */
#include "config.h"

#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <openssl/evp.h>
#include <wslay/wslay.h>

#include "http_parse.h"
#include "iochan.h"
#include "json_scan.h"
#include "strmap.h"
#include "mcpctl.h"
#include "ws_accept.h"
#include "ws_msg.h"
#include "xmalloc.h"

#define BRIDGE_DEFAULT_URL	"ws://127.0.0.1:8931/ws"
#define BRIDGE_MAX_LINE		(64 * 1024 * 1024)	/* one message in */
#define BRIDGE_MAX_HEAD		16384	/* the gateway's 101 */
#define BRIDGE_MAX_TOKEN	16384	/* a token file's line */
#define BRIDGE_HIGH_WATER	(16 * 1024 * 1024)	/* then stop reading */
#define BRIDGE_CONNECT_MS	10000
#define BRIDGE_CLOSE_MS		2000	/* for the gateway's close frame */
#define BRIDGE_DRAIN_MS		30000	/* input ended: for the answers */
#define BRIDGE_MAX_ID		256	/* bytes of an id followed */
#define BRIDGE_MAX_ASKED	4096	/* requests followed */

enum bridge_state {
	BRIDGE_HANDSHAKE = 0,	/* waiting for the 101 */
	BRIDGE_OPEN,
	BRIDGE_DRAINING,	/* input ended: waiting for the answers */
	BRIDGE_CLOSING		/* our close frame is out */
};

/* The whole bridge; one per process. */
struct bridge {
	struct event_base	*base;
	struct iochan		*in;		/* standard input */
	struct iochan		*out;		/* standard output */
	struct iochan		*sock;		/* the gateway */
	wslay_event_context_ptr	 ws;
	struct ws_msg		 msg;		/* the message being received */
	struct event		*deadline;	/* for that message */
	enum bridge_state	 state;
	char			 accept[WS_ACCEPT_LEN + 1];
	size_t			 skipping;	/* bytes of an over-long line */
	int			 in_ended;	/* standard input ended */
	struct strmap		 asked;		/* ids (raw JSON) of the host's
						   requests not answered yet */
	struct strmap		 theirs;	/* ids of the gateway's requests
						   the host has not answered */
	int			 drained;	/* all answered: close after
						   wslay's receive */
	struct event		*term;		/* SIGTERM */
	struct event		*timer;		/* connect, drain, close */
	int			 status;	/* exit status */
};

static struct bridge	br;

/* Say what happened and stop with a status. */
static void __attribute__((format(printf, 2, 3)))
bridge_stop(int status, const char *fmt, ...)
{
	va_list	ap;

	if (fmt != NULL) {
		fprintf(stderr, "mcpctl connect: ");
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
	}
	br.status = status;
	event_base_loopexit(br.base, NULL);
}

/* Monotonic milliseconds. */
static int64_t
bridge_now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

/* wslay reads from the socket's input. */
static ssize_t
bridge_recv_cb(wslay_event_context_ptr ctx, uint8_t *buf, size_t len,
    int flags, void *arg)
{
	int	n;

	n = evbuffer_remove(iochan_input(br.sock), buf, len);
	if (n <= 0) {
		wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
		return (-1);
	}
	return (n);
}

/* wslay writes to the socket's output. */
static ssize_t
bridge_send_cb(wslay_event_context_ptr ctx, const uint8_t *data, size_t len,
    int flags, void *arg)
{
	evbuffer_add(iochan_output(br.sock), data, len);
	return ((ssize_t)len);
}

/* A client masks its frames with random keys. */
static int
bridge_mask_cb(wslay_event_context_ptr ctx, uint8_t *buf, size_t len,
    void *arg)
{
	if (getrandom(buf, len, 0) != (ssize_t)len) {
		wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
		return (-1);
	}
	return (0);
}

/* A frame begins: is its message still within BRIDGE_MAX_LINE? */
static void
bridge_frame_start_cb(wslay_event_context_ptr ctx,
    const struct wslay_event_on_frame_recv_start_arg *arg, void *user)
{
	if (ws_msg_start(&br.msg, arg, bridge_now_ms()) == 0)
		return;
	wslay_event_queue_close(ctx, WSLAY_CODE_MESSAGE_TOO_BIG, NULL, 0);
	wslay_event_shutdown_read(ctx);
	bridge_stop(1, "a message from the gateway is over %d bytes",
	    BRIDGE_MAX_LINE);
}

/* Payload of a frame, onto its message. */
static void
bridge_frame_chunk_cb(wslay_event_context_ptr ctx,
    const struct wslay_event_on_frame_recv_chunk_arg *arg, void *user)
{
	ws_msg_chunk(&br.msg, arg->data, arg->data_length);
}

enum bridge_kind {
	KIND_OTHER = 0,		/* not JSON-RPC we follow */
	KIND_REQUEST,		/* a method and an id */
	KIND_ANSWER,		/* an id and no method */
	KIND_CANCEL		/* notifications/cancelled */
};

/*
 * What p[0..len) is, and the raw text of its id (a cancellation's
 * requestId) in key, as the gateway gives it back: the requests passed
 * on are followed by id to know what to wait for when input ends.  What
 * does not parse, or has an id too long to follow, is neither.
 */
static enum bridge_kind
bridge_classify(const char *p, size_t len, char *key, size_t keylen)
{
	static const char *const cancel_id[] = { "params", "requestId",
	    NULL };
	struct jspan	 v, id, method;
	const char	*why;
	size_t		 where;
	enum bridge_kind kind;

	if (jscan_validate(p, len, &v, &why, &where) != 0 ||
	    jscan_type(p, v) != JT_OBJECT)
		return (KIND_OTHER);
	if (jscan_member(p, v, "method", &method) == 0) {
		if (jscan_member(p, v, "id", &id) == 0)
			kind = KIND_REQUEST;
		else if (jscan_string_equals(p, method,
		    "notifications/cancelled") &&
		    jscan_path(p, v, cancel_id, &id) == 0)
			kind = KIND_CANCEL;
		else
			return (KIND_OTHER);
	} else if (jscan_member(p, v, "id", &id) == 0)
		kind = KIND_ANSWER;
	else
		return (KIND_OTHER);
	if ((jscan_type(p, id) != JT_STRING && jscan_type(p, id) !=
	    JT_NUMBER) || id.len >= keylen)
		return (KIND_OTHER);
	memcpy(key, p + id.off, id.len);
	key[id.len] = '\0';
	return (kind);
}

/*
 * In DRAINING, a request of the gateway's (sampling, elicitation, roots)
 * cannot reach the host, whose input has ended: answer it, so that the
 * call waiting on it ends.
 */
static void
bridge_refuse(const char *id)
{
	struct wslay_event_msg	 m;
	char			*text;
	int			 n;

	n = asprintf(&text, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"error\":"
	    "{\"code\":-32603,\"message\":\"the client has ended its "
	    "input\"}}", id);
	if (n < 0)
		bridge_stop(1, "out of memory");
	m.opcode = WSLAY_TEXT_FRAME;
	m.msg = (const uint8_t *)text;
	m.msg_length = (size_t)n;
	/* wslay copies the message as it queues it. */
	if (wslay_event_queue_msg(br.ws, &m) != 0)
		bridge_stop(1, "cannot queue a message for the gateway");
	free(text);
}

static void	bridge_close(void);

/* A whole message from the gateway: one line on standard output. */
static void
bridge_msg_cb(wslay_event_context_ptr ctx,
    const struct wslay_event_on_msg_recv_arg *arg, void *user)
{
	struct evbuffer	*out = iochan_output(br.out);
	const uint8_t	*msg = br.msg.buf;
	size_t		 len = br.msg.len, i, start;
	char		 key[BRIDGE_MAX_ID + 1];
	enum bridge_kind kind;

	if (arg->opcode == WSLAY_CONNECTION_CLOSE) {
		if (br.state == BRIDGE_CLOSING)
			bridge_stop(0, NULL);
		else
			bridge_stop(1, "the gateway closed the session (%u%s%.*s)",
			    arg->status_code, arg->msg_length > 2 ? ": " : "",
			    arg->msg_length > 2 ? (int)arg->msg_length - 2 : 0,
			    arg->msg_length > 2 ? (const char *)arg->msg + 2 :
			    "");
		return;
	}
	if (arg->opcode != WSLAY_TEXT_FRAME &&
	    arg->opcode != WSLAY_BINARY_FRAME)
		return;
	if (arg->opcode == WSLAY_BINARY_FRAME || br.msg.failed) {
		ws_msg_reset(&br.msg);
		return;
	}
	kind = bridge_classify((const char *)msg, len, key, sizeof key);
	if (br.state == BRIDGE_DRAINING && kind == KIND_REQUEST) {
		bridge_refuse(key);
		ws_msg_reset(&br.msg);
		return;
	}
	if (kind == KIND_ANSWER)
		strmap_del(&br.asked, key);
	else if (kind == KIND_REQUEST && br.theirs.count < BRIDGE_MAX_ASKED)
		strmap_add(&br.theirs, key, &br);
	/*
	 * JSON allows line breaks only as white space, never raw in a
	 * string: make them spaces, so the message is one line.
	 */
	for (i = start = 0; i < len; i++) {
		if (msg[i] != '\n' && msg[i] != '\r')
			continue;
		evbuffer_add(out, msg + start, i - start);
		evbuffer_add(out, " ", 1);
		start = i + 1;
	}
	evbuffer_add(out, msg + start, len - start);
	evbuffer_add(out, "\n", 1);
	ws_msg_reset(&br.msg);
	if (iochan_queued(br.out) > BRIDGE_HIGH_WATER)
		iochan_read(br.sock, 0);
	/* Closed once wslay's receive has returned: callbacks only queue. */
	if (br.state == BRIDGE_DRAINING && br.asked.count == 0)
		br.drained = 1;
}

/* Arm the deadline of a message begun and not yet whole. */
static void
bridge_deadline_arm(void)
{
	struct timeval	tv;
	int64_t		left;

	if (evtimer_pending(br.deadline, NULL) ||
	    (left = ws_msg_left(&br.msg, bridge_now_ms())) < 0)
		return;
	tv.tv_sec = left / 1000;
	tv.tv_usec = (left % 1000) * 1000;
	evtimer_add(br.deadline, &tv);
}

/* A message from the gateway was not whole in time. */
static void
bridge_deadline_cb(evutil_socket_t fd, short events, void *arg)
{
	int64_t	now = bridge_now_ms(), left;

	if ((left = ws_msg_left(&br.msg, now)) < 0)
		return;
	if (left > 0) {
		bridge_deadline_arm();
		return;
	}
	wslay_event_queue_close(br.ws, WSLAY_CODE_POLICY_VIOLATION, NULL, 0);
	wslay_event_shutdown_read(br.ws);
	wslay_event_send(br.ws);
	bridge_stop(1, "a message from the gateway was not whole after %lld "
	    "s (%zu bytes in %lu frames)", (long long)((now -
	    br.msg.started) / 1000), br.msg.len, br.msg.frames);
}

/*
 * Write what wslay has queued.  Past the high water mark, read neither
 * standard input nor the gateway (whose pings wslay answers by itself,
 * a pong queued for each) until the gateway has read what waits.
 */
static void
bridge_flush(void)
{
	if (wslay_event_send(br.ws) != 0)
		bridge_stop(1, "cannot send to the gateway");
	if (iochan_queued(br.sock) > BRIDGE_HIGH_WATER) {
		iochan_read(br.in, 0);
		iochan_read(br.sock, 0);
	}
}

/* Send one line from standard input as a text frame. */
static void
bridge_send_line(const char *p, size_t len)
{
	struct wslay_event_msg	m;
	char			key[BRIDGE_MAX_ID + 1];

	while (len > 0 && (p[len - 1] == '\r' || p[len - 1] == ' ' ||
	    p[len - 1] == '\t'))
		len--;
	if (len == 0)
		return;
	switch (bridge_classify(p, len, key, sizeof key)) {
	case KIND_REQUEST:
		if (br.asked.count < BRIDGE_MAX_ASKED)
			strmap_add(&br.asked, key, &br);
		break;
	case KIND_CANCEL:
		/* The gateway does not answer a cancelled request. */
		strmap_del(&br.asked, key);
		break;
	case KIND_ANSWER:
		strmap_del(&br.theirs, key);
		break;
	default:
		break;
	}
	m.opcode = WSLAY_TEXT_FRAME;
	m.msg = (const uint8_t *)p;
	m.msg_length = len;
	if (wslay_event_queue_msg(br.ws, &m) != 0)
		bridge_stop(1, "cannot queue a message for the gateway");
}

/* Lines from standard input. */
static void
bridge_in_read(struct iochan *ch, void *arg)
{
	struct evbuffer		*in = iochan_input(ch);
	struct evbuffer_ptr	 nl;
	size_t			 len;
	char			*p;

	if (br.state != BRIDGE_OPEN)
		return;		/* kept until the session is open */
	for (;;) {
		len = evbuffer_get_length(in);
		nl = evbuffer_search(in, "\n", 1, NULL);
		if (br.skipping) {
			if (nl.pos < 0) {
				br.skipping += len;
				evbuffer_drain(in, len);
				return;
			}
			evbuffer_drain(in, (size_t)nl.pos + 1);
			br.skipping = 0;
			continue;
		}
		if (nl.pos < 0) {
			if (len > BRIDGE_MAX_LINE) {
				fprintf(stderr, "mcpctl connect: a line of more "
				    "than %d bytes on standard input was "
				    "dropped\n", BRIDGE_MAX_LINE);
				br.skipping = len;
				evbuffer_drain(in, len);
			}
			break;
		}
		p = (char *)evbuffer_pullup(in, nl.pos + 1);
		bridge_send_line(p, (size_t)nl.pos);
		evbuffer_drain(in, (size_t)nl.pos + 1);
	}
	bridge_flush();
}

/* End the session with a close frame, and wait for the gateway's. */
static void
bridge_close(void)
{
	struct timeval	tv = { BRIDGE_CLOSE_MS / 1000,
			    (BRIDGE_CLOSE_MS % 1000) * 1000 };

	br.state = BRIDGE_CLOSING;
	wslay_event_queue_close(br.ws, WSLAY_CODE_NORMAL_CLOSURE, NULL, 0);
	bridge_flush();
	evtimer_del(br.timer);
	evtimer_add(br.timer, &tv);
}

/*
 * Input has ended and the session is open: pass on the last line, then
 * wait for the answers to what was asked (a host that closes its end
 * after its last request, a script's pipe) before closing.
 */
static void
bridge_input_end(void)
{
	struct timeval		 tv = { BRIDGE_DRAIN_MS / 1000,
				    (BRIDGE_DRAIN_MS % 1000) * 1000 };
	struct evbuffer		*in = iochan_input(br.in);
	struct strmap_entry	*e;
	size_t			 len = evbuffer_get_length(in), i;

	/* A last message without its newline still counts. */
	if (len > 0 && !br.skipping)
		bridge_send_line((char *)evbuffer_pullup(in, -1), len);
	evbuffer_drain(in, len);
	/* What the gateway asked the host can no longer be answered. */
	for (i = 0; i < br.theirs.nbuckets; i++) {
		for (e = br.theirs.buckets[i]; e != NULL; e = e->next)
			bridge_refuse(e->key);
	}
	strmap_free(&br.theirs);
	strmap_init(&br.theirs);
	if (br.asked.count == 0) {
		bridge_close();
		return;
	}
	br.state = BRIDGE_DRAINING;
	bridge_flush();
	evtimer_del(br.timer);
	evtimer_add(br.timer, &tv);
}

/* Standard input ended: once the session is open, end it. */
static void
bridge_in_event(struct iochan *ch, int what, void *arg)
{
	iochan_read(ch, 0);
	br.in_ended = 1;
	if (br.state == BRIDGE_OPEN)
		bridge_input_end();
	/* Before, what was read waits for the session (bridge_handshake). */
}

/* Standard output drained: read the gateway again, unless it is behind. */
static void
bridge_out_drain(struct iochan *ch, void *arg)
{
	if (iochan_queued(br.sock) <= BRIDGE_HIGH_WATER)
		iochan_read(br.sock, 1);
}

static void
bridge_out_event(struct iochan *ch, int what, void *arg)
{
	/* The host stopped reading us: nobody is left to answer. */
	bridge_stop(1, NULL);
}

/* The gateway's answer to the upgrade. */
static int
bridge_handshake(void)
{
	struct evbuffer			*in = iochan_input(br.sock);
	struct evbuffer_ptr		 end;
	struct http_head		 head;
	const struct http_header	*h;
	char				*p;
	size_t				 len;
	ssize_t				 r;

	end = evbuffer_search(in, "\r\n\r\n", 4, NULL);
	if (end.pos < 0) {
		if (evbuffer_get_length(in) > BRIDGE_MAX_HEAD) {
			bridge_stop(1, "the gateway's answer is not HTTP");
			return (-1);
		}
		return (0);
	}
	len = (size_t)end.pos + 4;
	p = (char *)evbuffer_pullup(in, (ev_ssize_t)len);
	r = http_parse_response(p, len, BRIDGE_MAX_HEAD, &head);
	if (r <= 0) {
		bridge_stop(1, "the gateway's answer is not HTTP");
		return (-1);
	}
	if (head.status != 101) {
		evbuffer_drain(in, len);
		len = evbuffer_get_length(in) > 200 ? 200 :
		    evbuffer_get_length(in);
		p = (char *)evbuffer_pullup(in, (ev_ssize_t)len);
		while (len > 0 && (p[len - 1] == '\n' || p[len - 1] == '\r'))
			len--;
		bridge_stop(1, "the gateway refused the connection: %d %s%s%.*s",
		    head.status, http_reason(head.status), len > 0 ? ": " : "",
		    (int)len, p != NULL ? p : "");
		return (-1);
	}
	if ((h = http_header(&head, "Sec-WebSocket-Accept")) == NULL ||
	    h->valuelen != WS_ACCEPT_LEN ||
	    memcmp(h->value, br.accept, WS_ACCEPT_LEN) != 0) {
		bridge_stop(1, "the gateway's handshake is wrong "
		    "(Sec-WebSocket-Accept)");
		return (-1);
	}
	if ((h = http_header(&head, "Sec-WebSocket-Protocol")) == NULL ||
	    !http_value_is(h, "mcp")) {
		bridge_stop(1, "the gateway did not accept the \"mcp\" "
		    "subprotocol");
		return (-1);
	}
	evbuffer_drain(in, len);
	br.state = BRIDGE_OPEN;
	evtimer_del(br.timer);
	/* Lines that waited for the session. */
	bridge_in_read(br.in, NULL);
	if (br.in_ended)
		bridge_input_end();
	return (1);
}

/* Bytes from the gateway. */
static void
bridge_sock_read(struct iochan *ch, void *arg)
{
	if (br.state == BRIDGE_HANDSHAKE && bridge_handshake() <= 0)
		return;
	if (wslay_event_recv(br.ws) != 0) {
		bridge_stop(1, "the gateway broke the WebSocket protocol");
		return;
	}
	bridge_deadline_arm();
	if (br.drained) {
		br.drained = 0;
		bridge_close();
		return;
	}
	bridge_flush();
}

/* The gateway read what we sent: read it and standard input again. */
static void
bridge_sock_drain(struct iochan *ch, void *arg)
{
	if (br.state == BRIDGE_OPEN)
		iochan_read(br.in, 1);
	if (iochan_queued(br.out) <= BRIDGE_HIGH_WATER)
		iochan_read(br.sock, 1);
}

/* The gateway went away. */
static void
bridge_sock_event(struct iochan *ch, int what, void *arg)
{
	if (br.state == BRIDGE_CLOSING)
		bridge_stop(0, NULL);
	else if (what & IOCHAN_EOF)
		bridge_stop(1, "the gateway closed the connection");
	else
		bridge_stop(1, "lost the gateway: %s", strerror(errno));
}

/*
 * SIGTERM, as a host sends one when its server does not exit soon enough
 * after the end of its input: end the session now (a close frame, and at
 * most BRIDGE_CLOSE_MS for the gateway's).
 */
static void
bridge_term_cb(evutil_socket_t fd, short events, void *arg)
{
	if (br.state == BRIDGE_OPEN || br.state == BRIDGE_DRAINING)
		bridge_close();
	else
		bridge_stop(0, NULL);
}

/* Connecting took too long, or the gateway never answered our close. */
static void
bridge_timer_cb(evutil_socket_t fd, short events, void *arg)
{
	if (br.state == BRIDGE_CLOSING)
		bridge_stop(0, NULL);
	else if (br.state == BRIDGE_DRAINING) {
		fprintf(stderr, "mcpctl connect: %zu request%s still "
		    "unanswered %d s after input ended: closing\n",
		    br.asked.count, br.asked.count == 1 ? "" : "s",
		    BRIDGE_DRAIN_MS / 1000);
		bridge_close();
	} else
		bridge_stop(1, "the gateway did not answer within %d s",
		    BRIDGE_CONNECT_MS / 1000);
}

/* Split ws://host[:port]/path; -1 if it is not such a URL. */
static int
bridge_url(const char *url, char *host, size_t hostlen, char *port,
    size_t portlen, const char **path)
{
	struct http_authority	 a;
	const char		*p, *slash;

	if (strncmp(url, "ws://", 5) != 0)
		return (-1);
	p = url + 5;
	slash = strchr(p, '/');
	*path = slash != NULL ? slash : "/";
	if (http_parse_host(p, slash != NULL ? (size_t)(slash - p) :
	    strlen(p), &a) != 0 || a.hostlen >= hostlen)
		return (-1);
	if (a.host[0] == '[')
		snprintf(host, hostlen, "%.*s", (int)a.hostlen - 2, a.host + 1);
	else
		snprintf(host, hostlen, "%.*s", (int)a.hostlen, a.host);
	snprintf(port, portlen, "%d", a.port < 0 ? 80 : a.port);
	return (0);
}

/* Connect to host:port, blocking (the bridge has nothing else to do). */
static int
bridge_dial(const char *host, const char *port, int *loopback)
{
	struct addrinfo	 hints, *res, *ai;
	struct timeval	 tv = { BRIDGE_CONNECT_MS / 1000, 0 };
	const struct in6_addr *a6;
	int		 fd = -1, error, one = 1;

	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if ((error = getaddrinfo(host, port, &hints, &res)) != 0) {
		fprintf(stderr, "mcpctl connect: %s: %s\n", host,
		    gai_strerror(error));
		return (-1);
	}
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
		    ai->ai_protocol);
		if (fd < 0)
			continue;
		/* A host that does not answer: BRIDGE_CONNECT_MS, not the
		 * kernel's minutes. */
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		if (errno == EINPROGRESS)
			errno = ETIMEDOUT;
		close(fd);
		fd = -1;
	}
	if (fd >= 0 && ai->ai_family == AF_INET)
		*loopback = ntohl(((const struct sockaddr_in *)ai->ai_addr)->
		    sin_addr.s_addr) >> 24 == 127;
	else if (fd >= 0 && ai->ai_family == AF_INET6) {
		a6 = &((const struct sockaddr_in6 *)ai->ai_addr)->sin6_addr;
		*loopback = IN6_IS_ADDR_LOOPBACK(a6) ||
		    (IN6_IS_ADDR_V4MAPPED(a6) && a6->s6_addr[12] == 127);
	}
	freeaddrinfo(res);
	if (fd < 0) {
		fprintf(stderr, "mcpctl connect: cannot connect to %s port %s: "
		    "%s (is mcp-supervisord running?)\n", host, port,
		    strerror(errno));
		return (-1);
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	evutil_make_socket_nonblocking(fd);
	return (fd);
}

/* Read the token from a file: its first line, trimmed. */
static char *
bridge_token_file(const char *path)
{
	FILE	*f;
	char	 line[BRIDGE_MAX_TOKEN + 2], *token;
	size_t	 len;

	if ((f = fopen(path, "r")) == NULL) {
		fprintf(stderr, "mcpctl connect: %s: %s\n", path,
		    strerror(errno));
		return (NULL);
	}
	if (fgets(line, sizeof line, f) == NULL)
		line[0] = '\0';
	fclose(f);
	len = strcspn(line, "\r\n");
	if (len > BRIDGE_MAX_TOKEN) {
		explicit_bzero(line, sizeof line);
		fprintf(stderr, "mcpctl connect: %s: its first line is over "
		    "%d bytes\n", path, BRIDGE_MAX_TOKEN);
		return (NULL);
	}
	line[len] = '\0';
	if (len == 0) {
		fprintf(stderr, "mcpctl connect: %s: no token in it\n", path);
		return (NULL);
	}
	token = xstrdup(line);
	explicit_bzero(line, sizeof line);
	return (token);
}

/*
 * Duplicate a descriptor for our own use, non-blocking.  Standard input
 * must be a pipe or a socket, as a host gives it: a file cannot be
 * polled.
 */
static int
bridge_fd(int fd)
{
	struct stat	st;
	int		copy;

	if (fd == STDIN_FILENO && fstat(fd, &st) == 0 &&
	    (S_ISREG(st.st_mode) || S_ISCHR(st.st_mode) ||
	    S_ISDIR(st.st_mode))) {
		fprintf(stderr, "mcpctl connect: standard input must be a "
		    "pipe or a socket, as an MCP host gives it\n");
		return (-1);
	}
	if ((copy = fcntl(fd, F_DUPFD_CLOEXEC, 3)) >= 0)
		evutil_make_socket_nonblocking(copy);
	return (copy);
}

int
mcpctl_connect(int argc, char **argv)
{
	static struct wslay_event_callbacks	 cbs = {
		bridge_recv_cb, bridge_send_cb, bridge_mask_cb,
		bridge_frame_start_cb, bridge_frame_chunk_cb, NULL,
		bridge_msg_cb
	};
	struct timeval	 tv = { BRIDGE_CONNECT_MS / 1000, 0 };
	static const struct option	 longopts[] = {
		{ "endpoint", required_argument, NULL, 'e' },
		{ NULL, 0, NULL, 0 }
	};
	const char	*url = BRIDGE_DEFAULT_URL, *path, *env, *endpoint = NULL;
	char		 host[256], port[16], *token = NULL, epath[256];
	unsigned char	 raw[16];
	char		 key[32];
	int		 ch, fd, in, out, loopback = 0;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "e:T:", longopts, NULL)) != -1) {
		switch (ch) {
		case 'e':
			endpoint = optarg;
			break;
		case 'T':
			free(token);
			if ((token = bridge_token_file(optarg)) == NULL)
				return (1);
			break;
		default:
			fprintf(stderr, "usage: mcpctl connect [-T token-file] "
			    "[--endpoint path] [url]\n");
			return (2);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc > 1) {
		fprintf(stderr, "usage: mcpctl connect [-T token-file] "
		    "[--endpoint path] [url]\n");
		return (2);
	}
	if (argc == 1)
		url = argv[0];
	if (token == NULL && (env = getenv("MCPCTL_TOKEN")) != NULL &&
	    *env != '\0')
		token = xstrdup(env);
	if (bridge_url(url, host, sizeof host, port, sizeof port,
	    &path) != 0) {
		fprintf(stderr, "mcpctl connect: %s: expected ws://host[:port]"
		    "/path (wss:// is not supported)\n", url);
		return (2);
	}
	/* A virtual endpoint's WebSocket is <path>/ws at the same server. */
	if (endpoint != NULL) {
		if (endpoint[0] != '/' || strlen(endpoint) > 128 ||
		    endpoint[strspn(endpoint, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
		    "abcdefghijklmnopqrstuvwxyz0123456789-_.~/")] != '\0') {
			fprintf(stderr, "mcpctl connect: --endpoint %s: "
			    "expected a path such as /mcp/research\n",
			    endpoint);
			return (2);
		}
		snprintf(epath, sizeof epath, "%s/ws", endpoint);
		path = epath;
	}
	if ((fd = bridge_dial(host, port, &loopback)) < 0)
		return (1);
	/* ws:// only: a token to another host crosses the network as it
	 * is. */
	if (token != NULL && !loopback)
		fprintf(stderr, "mcpctl connect: warning: the token goes to %s "
		    "unencrypted (ws://); keep the bridge on the gateway's "
		    "host, or behind a tunnel\n", host);
	if ((in = bridge_fd(STDIN_FILENO)) < 0)
		return (1);
	if ((out = bridge_fd(STDOUT_FILENO)) < 0) {
		fprintf(stderr, "mcpctl connect: %s\n", strerror(errno));
		return (1);
	}

	br.base = event_base_new();
	strmap_init(&br.asked);
	strmap_init(&br.theirs);
	br.term = evsignal_new(br.base, SIGTERM, bridge_term_cb, NULL);
	evsignal_add(br.term, NULL);
	br.in = iochan_new(br.base, in, bridge_in_read, NULL,
	    bridge_in_event, NULL);
	br.out = iochan_new(br.base, out, NULL, bridge_out_drain,
	    bridge_out_event, NULL);
	br.sock = iochan_new(br.base, fd, bridge_sock_read, bridge_sock_drain,
	    bridge_sock_event, NULL);
	br.timer = evtimer_new(br.base, bridge_timer_cb, NULL);
	evtimer_add(br.timer, &tv);
	if (wslay_event_context_client_init(&br.ws, &cbs, NULL) != 0) {
		fprintf(stderr, "mcpctl connect: out of memory\n");
		return (1);
	}
	/* wslay checks each frame; ws_msg the message, in one buffer. */
	wslay_event_config_set_no_buffering(br.ws, 1);
	wslay_event_config_set_max_recv_msg_length(br.ws, BRIDGE_MAX_LINE);
	ws_msg_init(&br.msg, BRIDGE_MAX_LINE);
	br.deadline = evtimer_new(br.base, bridge_deadline_cb, NULL);

	if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw) {
		fprintf(stderr, "mcpctl connect: getrandom: %s\n",
		    strerror(errno));
		return (1);
	}
	EVP_EncodeBlock((unsigned char *)key, raw, sizeof raw);
	if (ws_accept(key, strlen(key), br.accept) != 0) {
		fprintf(stderr, "mcpctl connect: cannot compute the "
		    "handshake\n");
		return (1);
	}
	evbuffer_add_printf(iochan_output(br.sock), "GET %s HTTP/1.1\r\n"
	    "Host: %s%s%s:%s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
	    "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n"
	    "Sec-WebSocket-Protocol: mcp\r\n", path,
	    strchr(host, ':') != NULL ? "[" : "", host,
	    strchr(host, ':') != NULL ? "]" : "", port, key);
	if (token != NULL) {
		evbuffer_add_printf(iochan_output(br.sock), "Authorization: "
		    "Bearer %s\r\n", token);
		explicit_bzero(token, strlen(token));
		free(token);
	}
	evbuffer_add(iochan_output(br.sock), "\r\n", 2);

	br.status = 1;
	event_base_dispatch(br.base);
	/* What is still queued for the host goes out before we exit. */
	iochan_flush_wait(br.out, 2000);
	return (br.status);
}
