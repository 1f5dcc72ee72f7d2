/* SPDX-License-Identifier: ISC */
/*
 * Notifications to every session: list_changed when the merged catalog
 * or the clients' tools change, and upstream logs tied to no session.  A broadcast is formatted
 * once ("event: message\ndata: ...\n\n") and every standalone and legacy
 * stream it reaches refers to that body; only the id line is a stream's
 * own.
 *
 * Sending to every session at once would stall the loop for as long as
 * that takes (at 20,000 streams, hundreds of milliseconds in which no
 * call is answered), so a broadcast goes out a slice at a time: a round
 * walks the sessions, bringing each up to date with every broadcast it
 * has not had, at most BCAST_TURN_WORK per turn of the loop, and the loop
 * takes its other events between slices (each slice's writes go out at
 * the end of its turn).  Order per session is kept: each session records
 * the number of the last broadcast it had, and anything else sent where
 * broadcasts go (stream_send on its standalone, legacy or WebSocket
 * stream) first brings that session up to date.  A session made later
 * has none of the broadcasts before it.
 *
 * Pending broadcasts are bounded: past BCAST_MAX the round under way is
 * finished at once, which costs a stall but no memory.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "log.h"
#include "sse.h"
#include "stream_priv.h"
#include "xmalloc.h"

#define BCAST_MAX		64	/* broadcasts pending */
#define BCAST_TURN_WORK		256	/* per turn: a session visited is 1 */
#define BCAST_SEND_WORK		32	/* a session sent to is this more */
#define BCAST_NMSG		3	/* messages in one broadcast */
#define BCAST_AHEAD		8	/* sessions fetched ahead (at most a
					   slice's sends) */

enum bcast_kind {
	BCAST_LIST,		/* list_changed */
	BCAST_CTOOLS,		/* tools/list_changed: clients' tools */
	BCAST_LOG		/* notifications/message */
};

/* One broadcast; owned by the list until every session has had it. */
struct bcast {
	uint64_t		 no;
	enum bcast_kind		 kind;
	int			 changed;	/* BCAST_LIST, CTOOLS: catalog
						   bits */
	uint64_t		 except;	/* BCAST_CTOOLS: the order of
						   a session not told, or 0 */
	int			 level;		/* BCAST_LOG: index, -1 unknown */
	size_t			 nmsg;
	char			*msg[BCAST_NMSG];	/* JSON-RPC text */
	size_t			 len[BCAST_NMSG];
	int			 bits[BCAST_NMSG];	/* BCAST_LIST: its
							   lists' bits */
	struct vendpoint_changes *epc;	/* BCAST_LIST: each endpoint's
					   bits (vendpoint.c), or NULL */
	struct stream_body	*body[BCAST_NMSG];	/* formatted, once */
	TAILQ_ENTRY(bcast)	 entry;
};

static TAILQ_HEAD(, bcast)	 bcasts = TAILQ_HEAD_INITIALIZER(bcasts);
static unsigned int		 nbcasts;
static uint64_t			 bcast_last;	/* the last one's number */
static uint64_t			 round_target;	/* the round under way brings
						   every session this far */
static int			 round_on;
static struct session		*cursor;	/* the round's next session */
static struct event		*round_ev;	/* the next slice */

static void	broadcast_run(unsigned int);

/* Free a broadcast. */
static void
bcast_free(struct bcast *b)
{
	size_t	i;

	for (i = 0; i < b->nmsg; i++) {
		free(b->msg[i]);
		if (b->body[i] != NULL)
			stream_body_unref(b->body[i]);
	}
	vendpoint_changes_free(b->epc);
	free(b);
}

/* Add a message to a broadcast. */
static void
bcast_add(struct bcast *b, const char *p, size_t n, int bits)
{
	if (b->nmsg == BCAST_NMSG)
		fatalx("%s: too many messages", __func__);
	b->bits[b->nmsg] = bits;
	b->msg[b->nmsg] = xmalloc(n);
	memcpy(b->msg[b->nmsg], p, n);
	b->len[b->nmsg] = n;
	b->nmsg++;
}

/* The body of a broadcast's message, formatted the first time. */
static struct stream_body *
bcast_body(struct bcast *b, size_t i)
{
	struct evbuffer	*msg, *out;

	if (b->body[i] != NULL)
		return (b->body[i]);
	msg = evbuffer_new();
	out = evbuffer_new();
	evbuffer_add(msg, b->msg[i], b->len[i]);
	sse_add_event_buffer(out, NULL, "message", msg);
	b->body[i] = stream_body_new(out);
	evbuffer_free(msg);
	evbuffer_free(out);
	return (b->body[i]);
}

/* Send one broadcast to one session, if it wants it. */
static void
bcast_apply(struct bcast *b, struct session *s)
{
	struct stream	*st;
	struct evbuffer	*msg;
	size_t		 i;
	int		 changed = 0;

	if (b->kind == BCAST_LIST || b->kind == BCAST_CTOOLS) {
		if (b->except != 0 && s->order == b->except)
			return;
		/* A session of an endpoint hears of what it selects. */
		if ((changed = vendpoint_changes_for(b->epc, s,
		    b->changed)) == 0)
			return;
		/* A session with a view of its own is told by its view
		 * (which holds no client's tools), also of the changes
		 * before it left it. */
		if (b->kind == BCAST_LIST && (s->view != NULL ||
		    b->no <= s->view_left))
			return;
		if (s->modern) {
			listen_list_changed(s, changed);
			return;
		}
	} else if (s->modern || (s->loglevel >= 0 && b->level >= 0 &&
	    b->level < s->loglevel))
		return;
	if (!s->initialized || (st = session_get_stream(s)) == NULL)
		return;
	for (i = 0; i < b->nmsg; i++) {
		if (b->kind != BCAST_LOG && (b->bits[i] & changed) == 0)
			continue;
		if (st->kind == STREAM_GET || st->kind == STREAM_LEGACY) {
			stream_send_body(st, bcast_body(b, i));
			continue;
		}
		msg = evbuffer_new();
		evbuffer_add(msg, b->msg[i], b->len[i]);
		stream_send_direct(st, msg, 0);
		evbuffer_free(msg);
	}
}

int
broadcast_behind(const struct session *s)
{
	return (s->bcast_no < bcast_last);
}

void
broadcast_catch_up(struct session *s)
{
	struct bcast	*b;

	TAILQ_FOREACH(b, &bcasts, entry) {
		if (b->no <= s->bcast_no)
			continue;
		/* Recorded first: what it sends does not catch up again. */
		s->bcast_no = b->no;
		bcast_apply(b, s);
	}
}

/* Begin a round over every session, for every broadcast so far. */
static void
broadcast_round_start(void)
{
	round_on = 1;
	round_target = bcast_last;
	cursor = session_first();
}

/* A round is over: every session has had what it was for. */
static void
broadcast_round_end(void)
{
	struct bcast	*b;

	round_on = 0;
	while ((b = TAILQ_FIRST(&bcasts)) != NULL && b->no <= round_target) {
		TAILQ_REMOVE(&bcasts, b, entry);
		nbcasts--;
		bcast_free(b);
	}
	if (!TAILQ_EMPTY(&bcasts))
		broadcast_round_start();
}

/* The next slice, in the next turn of the loop. */
static void
broadcast_round_cb(evutil_socket_t fd, short events, void *arg)
{
	broadcast_run(BCAST_TURN_WORK);
}

/*
 * Ask the CPU for what sending to the round's next sessions reads, a level
 * at a time for all of them: the sessions; their streams; the streams'
 * connections and kept events; the connections' channels; the channels'
 * output.  At 20,000 sessions none of it is in the cache, and a level's
 * misses then overlap instead of following one another (bench/README.md,
 * "Fetching ahead").  Nothing is kept: each call starts from the cursor.
 */
static void
bcast_prefetch(struct session *from)
{
	struct session		*v[BCAST_AHEAD], *s;
	struct stream		*st[BCAST_AHEAD];
	struct stream_event	*ev;
	size_t			 n = 0, i;
	int			 depth;

	/* What a round reads of a session: its first 96 bytes. */
	for (s = from; s != NULL && n < BCAST_AHEAD; s = session_next(s)) {
		__builtin_prefetch(s);
		__builtin_prefetch((char *)s + 64);
		__builtin_prefetch((char *)s + 95);
		v[n++] = s;
	}
	/* Those the round will send to: their stream, most likely first. */
	for (i = 0; i < n; i++) {
		st[i] = NULL;
		if (!broadcast_behind(v[i]) || v[i]->modern ||
		    !v[i]->initialized)
			continue;
		st[i] = v[i]->only != NULL ? v[i]->only :
		    TAILQ_FIRST(&v[i]->streams);
		if (st[i] == NULL)
			continue;
		__builtin_prefetch(st[i]);
		__builtin_prefetch((char *)st[i] + 64);
		__builtin_prefetch((char *)st[i] + 127);
	}
	for (i = 0; i < n; i++) {
		if (st[i] == NULL)
			continue;
		if (st[i]->conn != NULL)
			http_conn_prefetch(st[i]->conn, 0);
		/* The oldest, which a new one may drop, and the newest. */
		if ((ev = TAILQ_FIRST(&st[i]->events)) != NULL) {
			__builtin_prefetch(ev);
			__builtin_prefetch(st[i]->events.tqh_last);
		}
	}
	for (depth = 1; depth <= 2; depth++) {
		for (i = 0; i < n; i++) {
			if (st[i] != NULL && st[i]->conn != NULL)
				http_conn_prefetch(st[i]->conn, depth);
		}
	}
}

/* Go on with the round for this much work, then leave it for later. */
static void
broadcast_run(unsigned int budget)
{
	static const struct timeval	 now = { 0, 0 };
	struct session			*s;
	unsigned int			 work = 0, visited = 0;

	while (round_on && work < budget) {
		if ((s = cursor) == NULL) {
			broadcast_round_end();
			continue;
		}
		if (visited++ % BCAST_AHEAD == 0)
			bcast_prefetch(s);
		cursor = session_next(s);
		work++;
		if (broadcast_behind(s)) {
			broadcast_catch_up(s);
			work += BCAST_SEND_WORK;
		}
	}
	if (!round_on)
		return;
	/* A timer, not event_active: the loop polls between slices. */
	if (round_ev == NULL)
		round_ev = evtimer_new(base, broadcast_round_cb, NULL);
	evtimer_add(round_ev, &now);
}

/* Queue a broadcast and send what one slice allows at once. */
static void
broadcast_issue(struct bcast *b)
{
	while (nbcasts >= BCAST_MAX && round_on) {
		log_debug("%u broadcasts pending: finishing a round at once",
		    nbcasts);
		broadcast_run(UINT32_MAX);
	}
	b->no = ++bcast_last;
	TAILQ_INSERT_TAIL(&bcasts, b, entry);
	nbcasts++;
	if (!round_on)
		broadcast_round_start();
	broadcast_run(BCAST_TURN_WORK);
}

void
broadcast_list_changed(int changed)
{
	static const char	 tools[] = "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/tools/list_changed\"}";
	static const char	 resources[] = "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/resources/list_changed\"}";
	static const char	 prompts[] = "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/prompts/list_changed\"}";
	struct bcast		*b;

	if (changed == 0)
		return;
	b = xcalloc(1, sizeof *b);
	b->kind = BCAST_LIST;
	b->changed = changed;
	b->epc = vendpoint_changes_take();
	if (changed & (1 << CATALOG_TOOLS))
		bcast_add(b, tools, sizeof tools - 1, 1 << CATALOG_TOOLS);
	if (changed & ((1 << CATALOG_RESOURCES) | (1 << CATALOG_TEMPLATES)))
		bcast_add(b, resources, sizeof resources - 1,
		    (1 << CATALOG_RESOURCES) | (1 << CATALOG_TEMPLATES));
	if (changed & (1 << CATALOG_PROMPTS))
		bcast_add(b, prompts, sizeof prompts - 1, 1 << CATALOG_PROMPTS);
	broadcast_issue(b);
}

void
broadcast_ctools_changed(const struct session *except)
{
	static const char	 tools[] = "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/tools/list_changed\"}";
	struct bcast		*b;

	b = xcalloc(1, sizeof *b);
	b->kind = BCAST_CTOOLS;
	b->changed = 1 << CATALOG_TOOLS;
	b->except = except != NULL ? except->order : 0;
	b->epc = vendpoint_ctools_take();
	bcast_add(b, tools, sizeof tools - 1, 1 << CATALOG_TOOLS);
	broadcast_issue(b);
}

void
broadcast_log(const char *p, size_t n, int level)
{
	struct bcast	*b;

	b = xcalloc(1, sizeof *b);
	b->kind = BCAST_LOG;
	b->level = level;
	bcast_add(b, p, n, 0);
	broadcast_issue(b);
}

void
broadcast_session_new(struct session *s)
{
	s->bcast_no = bcast_last;
}

void
broadcast_view_left(struct session *s)
{
	s->view_left = bcast_last;
}

void
broadcast_session_gone(struct session *s)
{
	if (cursor == s)
		cursor = session_next(s);
}

void
broadcast_free_all(void)
{
	struct bcast	*b;

	while ((b = TAILQ_FIRST(&bcasts)) != NULL) {
		TAILQ_REMOVE(&bcasts, b, entry);
		bcast_free(b);
	}
	nbcasts = 0;
	round_on = 0;
	cursor = NULL;
	if (round_ev != NULL) {
		event_free(round_ev);
		round_ev = NULL;
	}
}
