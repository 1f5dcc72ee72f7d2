/* SPDX-License-Identifier: ISC */
/*
 * The tool search index (common/search_index.c) on real servers' tools:
 * quality (recall@5, MRR) of the labelled queries, and latency of a
 * search at a size.  Run by bench/search, which builds it against the
 * build's libcommon.a.
 *
 * usage: search_bench queries.txt catalog-*.json
 *
 * The catalogs are replicated under prefixes s00__, s01__, ... up to each
 * size measured; a replica is the same tool, so the rank of a result is
 * counted among distinct tools (a copy of a tool already ranked takes no
 * rank), the list a user would read once copies are merged.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "search_index.h"

#define MAX_QUERIES	1000
#define MAX_TOOLS	4096
#define ROUNDS_MIN	20000	/* searches timed per size */
#define PAGE		20000	/* results read for a rank */

struct tool {
	char	*server;
	char	*name;
	json_t	*def;
};

struct query {
	char	*text;
	char	*relevant;	/* "server/tool,server/tool" */
};

static struct tool	tools[MAX_TOOLS];
static size_t		ntools;
static struct query	queries[MAX_QUERIES];
static size_t		nqueries;

static int64_t
now_ns(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec);
}

static void
load_catalog(const char *path)
{
	json_error_t	 err;
	json_t		*root, *t;
	size_t		 i;

	if ((root = json_load_file(path, 0, &err)) == NULL) {
		fprintf(stderr, "%s: %s\n", path, err.text);
		exit(1);
	}
	json_array_foreach(json_object_get(root, "tools"), i, t) {
		if (ntools == MAX_TOOLS)
			break;
		tools[ntools].server = strdup(json_string_value(
		    json_object_get(root, "server")));
		tools[ntools].name = strdup(json_string_value(
		    json_object_get(t, "name")));
		tools[ntools].def = json_incref(t);
		ntools++;
	}
	json_decref(root);
}

static int
known(const char *label)
{
	char	buf[256];
	size_t	i;

	for (i = 0; i < ntools; i++) {
		snprintf(buf, sizeof buf, "%s/%s", tools[i].server,
		    tools[i].name);
		if (strcmp(buf, label) == 0)
			return (1);
	}
	return (0);
}

static void
load_queries(const char *path)
{
	FILE	*f;
	char	 line[1024], *tab, *nl, *l, *rel;

	if ((f = fopen(path, "r")) == NULL) {
		perror(path);
		exit(1);
	}
	while (fgets(line, sizeof line, f) != NULL && nqueries < MAX_QUERIES) {
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if ((nl = strchr(line, '\n')) != NULL)
			*nl = '\0';
		if ((tab = strchr(line, '\t')) == NULL) {
			fprintf(stderr, "%s: no tab: %s\n", path, line);
			exit(1);
		}
		*tab = '\0';
		queries[nqueries].relevant = strdup(line);
		queries[nqueries].text = strdup(tab + 1);
		rel = strdup(line);
		for (l = strtok(rel, ","); l != NULL; l = strtok(NULL, ",")) {
			if (!known(l)) {
				fprintf(stderr, "%s: unknown tool %s\n", path,
				    l);
				exit(1);
			}
		}
		free(rel);
		nqueries++;
	}
	fclose(f);
}

/* Index the catalog replicated to at least size tools. */
static struct sidx *
build(size_t size, int flags, size_t *replicas, double *ms)
{
	struct sidx	*x;
	json_t		*copy;
	char		 key[256], group[64];
	size_t		 r, i;
	int64_t		 t0 = now_ns();

	*replicas = size > ntools ? (size + ntools - 1) / ntools : 1;
	x = sidx_new(SIZE_MAX, SIZE_MAX, flags);
	for (r = 0; r < *replicas; r++) {
		for (i = 0; i < ntools; i++) {
			snprintf(key, sizeof key, "s%02zu__%s__%s", r,
			    tools[i].server, tools[i].name);
			snprintf(group, sizeof group, "s%02zu__%s", r,
			    tools[i].server);
			copy = json_copy(tools[i].def);
			json_object_set_new(copy, "name", json_string(key));
			if (sidx_add(x, group, key, copy) != 0) {
				fprintf(stderr, "refused %s\n", key);
				exit(1);
			}
			json_decref(copy);
		}
	}
	*ms = (double)(now_ns() - t0) / 1e6;
	return (x);
}

/* The server/tool of a result's key "sNN__server__tool". */
static const char *
original(const char *key, char *buf, size_t len)
{
	const char	*s = strstr(key, "__") + 2, *t = strstr(s, "__");

	snprintf(buf, len, "%.*s/%s", (int)(t - s), s, t + 2);
	return (buf);
}

static int
relevant(const struct query *q, const char *label)
{
	size_t	n = strlen(label);
	const char *p = q->relevant;

	while ((p = strstr(p, label)) != NULL) {
		if ((p == q->relevant || p[-1] == ',') &&
		    (p[n] == ',' || p[n] == '\0'))
			return (1);
		p += n;
	}
	return (0);
}

/* Recall@5 and MRR over the queries; misses printed if verbose. */
static void
quality(struct sidx *x, double *recall, double *mrr, int verbose)
{
	static struct sidx_hit	 hits[PAGE];
	static char		 seen[PAGE][160];
	char			 buf[160];
	size_t		 qi, n, i, j, rank, nseen;
	double		 found = 0, rr = 0;

	for (qi = 0; qi < nqueries; qi++) {
		n = sidx_search(x, queries[qi].text, strlen(queries[qi].text),
		    NULL, hits, PAGE);
		rank = 0;
		nseen = 0;
		for (i = 0; i < n && rank == 0; i++) {
			original(sidx_key(x, hits[i].doc), buf, sizeof buf);
			for (j = 0; j < nseen && strcmp(seen[j], buf) != 0; j++)
				;
			if (j < nseen)
				continue;
			memcpy(seen[nseen++], buf, sizeof buf);
			if (relevant(&queries[qi], buf))
				rank = nseen;
		}
		if (rank >= 1 && rank <= 5)
			found++;
		if (rank > 0)
			rr += 1.0 / (double)rank;
		if (verbose && (rank == 0 || rank > 5))
			printf("  miss (rank %zu, top %s): %s\n", rank,
			    nseen > 0 ? seen[0] : "-", queries[qi].text);
	}
	*recall = found / (double)nqueries;
	*mrr = rr / (double)nqueries;
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t	x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x < y ? -1 : x > y);
}

/* Time searches of limit 10; with a filter hiding every other server. */
static void
latency(struct sidx *x, int filtered, double *p50, double *p99)
{
	struct sidx_hit	 hits[10];
	uint8_t		*vis = NULL;
	int64_t		*t, t0;
	size_t		 i, n, rounds;

	rounds = ROUNDS_MIN / nqueries + 1;
	n = rounds * nqueries;
	t = calloc(n, sizeof *t);
	if (filtered) {
		vis = calloc(sidx_slots(x), 1);
		for (i = 0; i < sidx_slots(x); i++)
			vis[i] = sidx_key(x, (uint32_t)i) != NULL && i % 2;
	}
	for (i = 0; i < n; i++) {
		const struct query *q = &queries[i % nqueries];

		t0 = now_ns();
		sidx_search(x, q->text, strlen(q->text), vis, hits, 10);
		t[i] = now_ns() - t0;
	}
	qsort(t, n, sizeof *t, cmp_i64);
	*p50 = (double)t[n / 2] / 1000;
	*p99 = (double)t[n * 99 / 100] / 1000;
	free(t);
	free(vis);
}

int
main(int argc, char **argv)
{
	static const size_t	sizes[] = { 0, 1000, 10000 };
	static const int	flags[] = { 0, SIDX_STEM };
	struct sidx		*x;
	double			 recall, mrr, ms, p50, p99, fp50, fp99, rms;
	size_t			 s, f, replicas;
	int64_t			 t0;
	int			 verbose = getenv("VERBOSE") != NULL;
	char			 group[64];

	if (argc < 3) {
		fprintf(stderr, "usage: search_bench queries.txt "
		    "catalog.json ...\n");
		return (2);
	}
	for (int i = 2; i < argc; i++)
		load_catalog(argv[i]);
	load_queries(argv[1]);
	printf("{\"servers\": %d, \"tools\": %zu, \"queries\": %zu, "
	    "\"results\": [\n", argc - 2, ntools, nqueries);
	for (f = 0; f < 2; f++) {
		for (s = 0; s < 3; s++) {
			x = build(sizes[s], flags[f], &replicas, &ms);
			quality(x, &recall, &mrr, verbose && s == 0);
			latency(x, 0, &p50, &p99);
			latency(x, 1, &fp50, &fp99);
			/* One server's tools indexed again, as after its
			 * list_changed. */
			snprintf(group, sizeof group, "s00__%s",
			    tools[0].server);
			t0 = now_ns();
			sidx_drop_group(x, group);
			for (size_t i = 0; i < ntools &&
			    strcmp(tools[i].server, tools[0].server) == 0;
			    i++) {
				char key[256];
				json_t *copy = json_copy(tools[i].def);

				snprintf(key, sizeof key, "s00__%s__%s",
				    tools[i].server, tools[i].name);
				json_object_set_new(copy, "name",
				    json_string(key));
				sidx_add(x, group, key, copy);
				json_decref(copy);
			}
			rms = (double)(now_ns() - t0) / 1e6;
			printf("%s{\"stem\": %s, \"tools\": %zu, \"replicas\": "
			    "%zu, \"terms\": %zu, \"bytes\": %zu, "
			    "\"build_ms\": %.1f, \"reindex_one_server_ms\": "
			    "%.2f, \"recall_at_5\": %.3f, \"mrr\": %.3f, "
			    "\"p50_us\": %.1f, \"p99_us\": %.1f, "
			    "\"filtered_p50_us\": %.1f, "
			    "\"filtered_p99_us\": %.1f}\n",
			    f + s > 0 ? "," : "", flags[f] ? "true" : "false",
			    sidx_count(x), replicas, sidx_terms(x),
			    sidx_bytes(x), ms, rms, recall, mrr, p50, p99,
			    fp50, fp99);
			sidx_free(x);
		}
	}
	printf("]}\n");
	return (0);
}
