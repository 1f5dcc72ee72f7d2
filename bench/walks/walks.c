/* SPDX-License-Identifier: ISC */
/*
 * What the supervisor's walks of every session cost the loop, in-process:
 * the supervisor linked whole with the unit harness (t/unit/sup_harness.c),
 * sessions made by session_new, and one trigger timed, then the loop's
 * turns until its walk is done.  Prints one JSON object (bench/README.md,
 * "Walks of every session"; bench/walks/run builds and runs it).
 *
 *	walks views SESSIONS TOOLS	a shared upstream's list changes while
 *					every session has a view from a
 *					per-session part of TOOLS tools
 *	walks opens SESSIONS		a worker becomes ready
 *	walks scrape SESSIONS		a /metrics scrape (20 of them)
 *
 * trigger_ms is the call that begins a walk (views); a worker's frame that
 * it is ready is read in one of the turns (opens).  A turn is one pass of
 * the daemon's loop, timed without the harness's playing of workers and
 * clients between turns: what a client's call may wait behind.
 */
#include "config.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <jansson.h>

#include "frame.h"
#include "supervisor.h"
#include "xmalloc.h"

#include "sup_harness.h"
#include "sup_check.h"
#include "sup_priv.h"

#define TURNS_MAX	1000000
#define RELOAD_TURNS	2000	/* turns timed after a reload */
#define NSCRAPES	20

/* What a walk cost: the trigger, then the turns until it was done. */
struct cost {
	double		 trigger_ms;
	unsigned int	 turns;
	double		 longest_ms;
	double		 total_ms;
};

/* Milliseconds on the monotonic clock. */
static double
now_ms_f(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (ts.tv_sec * 1e3 + ts.tv_nsec / 1e6);
}

/* A catalog of n tools, their names of prefix, index and gen (text). */
static char *
tools_json(const char *prefix, int n, int gen)
{
	json_t	*tools = json_array(), *c;
	char	 name[64], *text;
	int	 i;

	for (i = 0; i < n; i++) {
		snprintf(name, sizeof name, "%s%d_%d", prefix, i, gen);
		json_array_append_new(tools, json_pack("{s:s, s:s, s:{s:s, "
		    "s:{s:{s:s, s:s}, s:{s:s}}, s:[s]}}", "name", name,
		    "description", "A tool that does one thing, described at "
		    "the length real servers describe theirs", "inputSchema",
		    "type", "object", "properties", "x", "type", "string",
		    "description", "the x", "y", "type", "integer",
		    "required", "x"));
	}
	c = json_pack("{s:o}", "tools", tools);
	text = json_dumps(c, JSON_COMPACT);
	json_decref(c);
	return (text);
}

/* Turn the loop until done(arg), checked between turns, not timed. */
static void
turns_until(struct cost *c, int (*done)(void *), void *arg)
{
	double	 t, d;

	c->turns = 0;
	c->longest_ms = c->total_ms = 0;
	while (!done(arg)) {
		if (c->turns == TURNS_MAX)
			sup_die("the walk did not end in %u turns", c->turns);
		t = now_ms_f();
		event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
		d = now_ms_f() - t;
		sup_workers_io();
		sup_clients_io();
		c->total_ms += d;
		if (d > c->longest_ms)
			c->longest_ms = d;
		c->turns++;
	}
}

/* Make n sessions as initialize leaves them. */
static struct session **
make_sessions(int n)
{
	struct session	**v;
	int		  i;

	v = xcalloc((size_t)n, sizeof *v);
	for (i = 0; i < n; i++) {
		if ((v[i] = session_new("127.0.0.1", 0)) == NULL)
			sup_die("session %d: %s", i, session_refusal());
		v[i]->initialized = 1;
		v[i]->listed = 1;
		v[i]->client_caps = json_object();
		snprintf(v[i]->version, sizeof v[i]->version, "2025-11-25");
	}
	return (v);
}

/* Print what a walk cost. */
static void
print_cost(const char *walk, int n, const struct cost *c, const char *more)
{
	printf("{\"walk\":\"%s\",\"sessions\":%d,\"trigger_ms\":%.3f,"
	    "\"turns\":%u,\"longest_turn_ms\":%.3f,\"turns_ms\":%.1f%s}\n",
	    walk, n, c->trigger_ms, c->turns, c->longest_ms, c->total_ms,
	    more);
}

struct views_arg {
	struct session	**v;
	int		  n;
	int		  moved;	/* sessions before it have moved */
};

/* Has every session's view the shared upstream's new tool?  (The walk
 * goes in the order the sessions were made.) */
static int
views_done(void *arg)
{
	struct views_arg	*a = arg;

	while (a->moved < a->n && catalog_tool(view_catalog(a->v[a->moved]),
	    "a__a0_1") != NULL)
		a->moved++;
	return (a->moved == a->n);
}

static void
walk_views(int n, int ntools)
{
	struct views_arg	 a;
	struct upstream		*p, *up;
	struct cost		 c;
	char			 conf[1024], more[128], *part, *shared;
	json_t			*j;
	size_t			 heap0;
	double			 t;
	int			 i;

	snprintf(conf, sizeof conf, SUP_BASE "max_sessions = %d;\n"
	    "servers = (\n"
	    "  { name = \"a\"; transport = \"stdio\"; command = [ \"true\" ]; },\n"
	    "  { name = \"p\"; transport = \"stdio\"; command = [ \"true\" ];\n"
	    "    isolation = \"per-session\"; init_timeout = 10; }\n);\n",
	    n + 1);
	shared = tools_json("a", 50, 0);
	sup_catalog("a", shared);
	free(shared);
	sup_start(conf);
	p = upstream_find("p");
	up = upstream_find("a");
	part = tools_json("p", ntools, 0);
	a.n = n;
	a.moved = 0;
	a.v = make_sessions(n);
	heap0 = mallinfo2().uordblks;
	/* Each instance's part comes in a frame of its own, parsed apart. */
	for (i = 0; i < n; i++) {
		j = json_loads(part, 0, NULL);
		view_part(p, a.v[i]->no, j);
		json_decref(j);
	}
	free(part);
	snprintf(more, sizeof more, ",\"tools\":%d,\"parts_heap_kib\":%zu",
	    ntools, (mallinfo2().uordblks - heap0) >> 10);
	shared = tools_json("a", 50, 1);
	json_decref(up->catalog);
	up->catalog = json_loads(shared, 0, NULL);
	free(shared);
	t = now_ms_f();
	catalog_rebuild();
	c.trigger_ms = now_ms_f() - t;
	turns_until(&c, views_done, &a);
	print_cost("views", n, &c, more);
	free(a.v);
	sup_stop();
}

struct opens_arg {
	struct sup_worker	*w;
	unsigned int		 n;
	unsigned int		 told;	/* SESSION_OPEN frames so far */
};

/* Has the worker been told of every session? */
static int
opens_done(void *arg)
{
	struct opens_arg	*a = arg;

	a->told += sup_count(a->w, MSG_SESSION_OPEN);
	sup_forget(a->w);
	return (a->told == a->n);
}

/* Count down turns. */
static int
turns_done(void *arg)
{
	unsigned int	*left = arg;

	return ((*left)-- == 0);
}

enum opens_mode { OPENS, OPENS_CRASH, OPENS_RELOAD };

static void
walk_opens(int n, enum opens_mode mode)
{
	struct opens_arg	 a;
	struct session		**v;
	struct cost		 c;
	char			 conf[512], conf2[512];
	unsigned int		 left;
	double			 t;

	snprintf(conf, sizeof conf, SUP_BASE "max_sessions = %d;\n"
	    "servers = ( { name = \"q\"; transport = \"stdio\"; "
	    "command = [ \"true\" ]; } );\n", n + 1);
	sup_manual("q");
	sup_start(conf);
	v = make_sessions(n);
	a.w = sup_worker("q");
	a.n = (unsigned int)n;
	a.told = 0;
	sup_send(a.w, MSG_HELLO, 0, 0, 0, "{\"version\":1}");
	sup_send(a.w, MSG_CATALOG, 0, 0, 0, "{\"tools\":[]}");
	sup_sendq(a.w, MSG_STATUS, 0, 0, 0, "{\"state\":\"ready\","
	    "\"capabilities\":{\"tools\":{}}}");
	c.trigger_ms = 0;
	turns_until(&c, opens_done, &a);
	if (mode == OPENS)
		print_cost("opens", n, &c, "");
	else if (mode == OPENS_CRASH) {
		/* The worker dies: what failing it costs, and its start. */
		t = now_ms_f();
		sup_exit(a.w, 1 << 8);
		c.trigger_ms = now_ms_f() - t;
		c.turns = 0;
		c.longest_ms = c.total_ms = 0;
		print_cost("crash", n, &c, "");
	} else if (mode == OPENS_RELOAD) {
		/* A reload adds an upstream, then removes it. */
		snprintf(conf2, sizeof conf2, SUP_BASE "max_sessions = %d;\n"
		    "servers = ( { name = \"q\"; transport = \"stdio\"; "
		    "command = [ \"true\" ]; },\n  { name = \"r\"; "
		    "transport = \"stdio\"; command = [ \"true\" ]; } );\n",
		    n + 1);
		left = RELOAD_TURNS;
		t = now_ms_f();
		json_decref(sup_reloadq(conf2));
		c.trigger_ms = now_ms_f() - t;
		turns_until(&c, turns_done, &left);
		print_cost("reload-add", n, &c, "");
		t = now_ms_f();
		json_decref(sup_reloadq(conf));
		c.trigger_ms = now_ms_f() - t;
		left = RELOAD_TURNS;
		turns_until(&c, turns_done, &left);
		print_cost("reload-remove", n, &c, "");
	}
	free(v);
	sup_stop();
}

/* Compare two doubles, for qsort. */
static int
cmp_double(const void *a, const void *b)
{
	double	x = *(const double *)a, y = *(const double *)b;

	return (x < y ? -1 : x > y);
}

static void
walk_scrape(int n)
{
	struct session	**v;
	struct evbuffer	*b;
	char		 conf[512];
	double		 t, ms[NSCRAPES];
	size_t		 i;

	snprintf(conf, sizeof conf, SUP_BASE "max_sessions = %d;\n"
	    "servers = ( { name = \"a\"; transport = \"stdio\"; "
	    "command = [ \"true\" ]; } );\n", n + 1);
	sup_start(conf);
	v = make_sessions(n);
	for (i = 0; i < NSCRAPES; i++) {
		b = evbuffer_new();
		t = now_ms_f();
		metrics_write(b);
		ms[i] = now_ms_f() - t;
		evbuffer_free(b);
	}
	qsort(ms, NSCRAPES, sizeof ms[0], cmp_double);
	printf("{\"walk\":\"scrape\",\"sessions\":%d,\"scrapes\":%d,"
	    "\"p50_ms\":%.3f,\"max_ms\":%.3f}\n", n, NSCRAPES,
	    ms[NSCRAPES / 2], ms[NSCRAPES - 1]);
	free(v);
	sup_stop();
}

int
main(int argc, char **argv)
{
	int	n;

	if (argc < 3 || (n = atoi(argv[2])) <= 0) {
		fprintf(stderr, "usage: walks views|opens|scrape SESSIONS "
		    "[TOOLS]\n");
		return (2);
	}
	sup_nofile(1024);
	if (strcmp(argv[1], "views") == 0)
		walk_views(n, argc > 3 ? atoi(argv[3]) : 20);
	else if (strcmp(argv[1], "opens") == 0)
		walk_opens(n, OPENS);
	else if (strcmp(argv[1], "crash") == 0)
		walk_opens(n, OPENS_CRASH);
	else if (strcmp(argv[1], "reload") == 0)
		walk_opens(n, OPENS_RELOAD);
	else if (strcmp(argv[1], "scrape") == 0)
		walk_scrape(n);
	else {
		fprintf(stderr, "walks: unknown walk %s\n", argv[1]);
		return (2);
	}
	return (0);
}
