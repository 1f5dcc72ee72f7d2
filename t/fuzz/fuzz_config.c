/* SPDX-License-Identifier: ISC */
/*
 * Fuzz the configuration parser.  Whatever parses must print (conf_print,
 * what -nv shows) to text that parses again to the same configuration,
 * print identically the second time, and survive the JSON form the
 * supervisor sends each worker.  Whatever fails must say "file:line: msg"
 * or "file: msg".
 *
 * Inputs with an @include directive are skipped: libconfig would read
 * whatever file they name.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "conf.h"

#define CHECK(x) do {							\
	if (!(x)) {							\
		fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__,	\
		    __LINE__, #x);					\
		abort();						\
	}								\
} while (0)

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Print a configuration into a new string. */
static char *
print_conf(const struct conf *conf)
{
	char	*buf = NULL;
	size_t	 len = 0;
	FILE	*f = open_memstream(&buf, &len);

	CHECK(f != NULL);
	conf_print(conf, f);
	CHECK(fclose(f) == 0);
	return (buf);
}

/* Compare two optional string vectors. */
static int
strv_same(char **a, char **b)
{
	size_t	i;

	if (a == NULL || b == NULL)
		return (a == b);
	for (i = 0; a[i] != NULL && b[i] != NULL; i++) {
		if (strcmp(a[i], b[i]) != 0)
			return (0);
	}
	return (a[i] == NULL && b[i] == NULL);
}

/* Are two configurations the same, apart from where they came from? */
static int
conf_same(const struct conf *a, const struct conf *b)
{
	size_t	i;

	if (strcmp(a->listen, b->listen) != 0 ||
	    strcmp(a->control, b->control) != 0 ||
	    !strv_same(a->allowed_origins, b->allowed_origins) ||
	    !strv_same(a->allowed_hosts, b->allowed_hosts) ||
	    a->max_message != b->max_message ||
	    a->max_body != b->max_body ||
	    a->max_sessions != b->max_sessions ||
	    a->max_pending != b->max_pending ||
	    a->session_timeout != b->session_timeout ||
	    a->request_timeout != b->request_timeout ||
	    a->server_request_timeout != b->server_request_timeout ||
	    a->nservers != b->nservers)
		return (0);
	for (i = 0; i < a->nservers; i++) {
		if (!conf_server_equal(&a->servers[i], &b->servers[i]))
			return (0);
	}
	return (1);
}

/* A server through JSON text and back, as in a MSG_CONFIG frame. */
static void
json_round_trip(const struct server_conf *srv)
{
	json_t			*j, *j2;
	json_error_t		 jerr;
	struct server_conf	*back;
	char			*s, err[256];

	j = conf_server_to_json(srv);
	CHECK(j != NULL);
	s = json_dumps(j, JSON_COMPACT);
	CHECK(s != NULL);
	j2 = json_loads(s, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
	CHECK(j2 != NULL);
	back = conf_server_from_json(j2, err, sizeof err);
	if (back == NULL)
		fprintf(stderr, "from_json: %s\n%s\n", err, s);
	CHECK(back != NULL);
	CHECK(conf_server_equal(srv, back));
	conf_server_free(back);
	free(back);
	json_decref(j2);
	json_decref(j);
	free(s);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct conf	*conf, *conf2;
	char		*text, *out, *out2, err[1024];
	size_t		 i;

	text = malloc(size + 1);
	CHECK(text != NULL);
	memcpy(text, data, size);
	text[size] = '\0';
	if (strcasestr(text, "@include") != NULL) {
		free(text);
		return (0);
	}
	err[0] = '\0';
	conf = conf_parse(text, "fuzz.conf", err, sizeof err);
	if (conf == NULL) {
		CHECK(strncmp(err, "fuzz.conf:", 10) == 0);
		free(text);
		return (0);
	}
	CHECK(strcmp(conf->file, "fuzz.conf") == 0);
	for (i = 0; i < conf->nservers; i++) {
		CHECK(conf->servers[i].name != NULL);
		CHECK(conf->servers[i].prefix != NULL);
		CHECK(conf->servers[i].transport == TRANSPORT_STDIO ?
		    conf->servers[i].command != NULL :
		    conf->servers[i].url != NULL);
		json_round_trip(&conf->servers[i]);
	}

	out = print_conf(conf);
	conf2 = conf_parse(out, "printed", err, sizeof err);
	if (conf2 == NULL)
		fprintf(stderr, "printed configuration does not parse: %s\n"
		    "--- input\n%s\n--- printed\n%s\n", err, text, out);
	CHECK(conf2 != NULL);
	if (!conf_same(conf, conf2))
		fprintf(stderr, "printed configuration differs\n--- input\n"
		    "%s\n--- printed\n%s\n", text, out);
	CHECK(conf_same(conf, conf2));
	out2 = print_conf(conf2);
	CHECK(strcmp(out, out2) == 0);

	free(out2);
	free(out);
	conf_free(conf2);
	conf_free(conf);
	free(text);
	return (0);
}
