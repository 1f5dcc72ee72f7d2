/* SPDX-License-Identifier: ISC */
/*
 * Verify a file of JWT cases with common/jose and compare each verdict
 * with the one expected.  The cases come from implementations we did not
 * write: t/fixtures/jose-vectors.mjs (npm jose) and the OpenID Provider
 * of t/fixtures/oidc-provider.mjs.  It only verifies: nothing here signs.
 *
 *	jose_cases FILE
 *
 * FILE is JSON:
 *
 *	{ "issuer": ..., "audience": ..., "now": <Unix s>, "leeway": <s>,
 *	  "algs": "RS256 ES256 ...", "typ": "lax" | "at+jwt",
 *	  "jwks": { "keys": [...] },
 *	  "cases": [ { "name": ..., "token": ..., "expect": "ok" | a
 *	      jose_result_name() | "jwks_refused",
 *	      and optionally any of issuer, audience, now, algs, typ, jwks
 *	      for this case alone, and "sub", "client_id", "scopes" [...]
 *	      that a verified token must carry } ] }
 *
 * Prints one line per case ("ok - name" or "not ok - name: ...") and
 * "N passed, N failed"; exits 0 if every case got its verdict, 1 if
 * not, 2 if the file cannot be read.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "jose.h"

/* A member of the case, else of the file. */
static json_t *
pick(json_t *c, json_t *top, const char *name)
{
	json_t	*v = json_object_get(c, name);

	return (v != NULL ? v : json_object_get(top, name));
}

/* Check what a verified token carries against the case. */
static int
carries(json_t *c, const struct jose_token *t, char *msg, size_t len)
{
	json_t		*v, *s;
	const char	*want;
	size_t		 i;

	if ((want = json_string_value(json_object_get(c, "sub"))) != NULL &&
	    (t->sub == NULL || strcmp(t->sub, want) != 0)) {
		snprintf(msg, len, "sub is %s, not %s", t->sub ? t->sub : "-",
		    want);
		return (0);
	}
	if ((want = json_string_value(json_object_get(c, "client_id"))) !=
	    NULL && (t->client_id == NULL || strcmp(t->client_id, want) != 0)) {
		snprintf(msg, len, "client_id is %s, not %s",
		    t->client_id ? t->client_id : "-", want);
		return (0);
	}
	if ((v = json_object_get(c, "scopes")) != NULL) {
		if (json_array_size(v) != t->nscopes) {
			snprintf(msg, len, "%zu scopes, not %zu", t->nscopes,
			    json_array_size(v));
			return (0);
		}
		json_array_foreach(v, i, s)
			if (!jose_token_has_scope(t, json_string_value(s))) {
				snprintf(msg, len, "no scope %s",
				    json_string_value(s));
				return (0);
			}
	}
	return (1);
}

/* Run one case; 1 if it got its verdict. */
static int
run(json_t *top, json_t *c, size_t idx)
{
	struct jose_policy	 pol;
	struct jose_jwks	*set;
	struct jose_token	*t = NULL;
	const char		*name, *token, *want, *typ, *got;
	char			*text, why[JOSE_WHY_MAX] = "", msg[300] = "";
	int			 ok;

	name = json_string_value(json_object_get(c, "name"));
	token = json_string_value(json_object_get(c, "token"));
	want = json_string_value(json_object_get(c, "expect"));
	if (name == NULL || token == NULL || want == NULL) {
		printf("not ok - case %zu: no name, token or expect\n", idx);
		return (0);
	}
	memset(&pol, 0, sizeof pol);
	pol.issuer = json_string_value(pick(c, top, "issuer"));
	pol.audience = json_string_value(pick(c, top, "audience"));
	pol.leeway = json_integer_value(pick(c, top, "leeway"));
	typ = json_string_value(pick(c, top, "typ"));
	pol.typ = typ != NULL && strcmp(typ, "at+jwt") == 0 ?
	    JOSE_TYP_AT_JWT : JOSE_TYP_LAX;
	if (jose_algs_parse(json_string_value(pick(c, top, "algs")) ?
	    json_string_value(pick(c, top, "algs")) : "", &pol.algs, why) ==
	    -1) {
		printf("not ok - %s: algs: %s\n", name, why);
		return (0);
	}
	text = json_dumps(pick(c, top, "jwks"), JSON_COMPACT);
	set = text == NULL ? NULL : jose_jwks_parse(text, strlen(text), why);
	free(text);
	if (set == NULL) {
		got = "jwks_refused";
		ok = strcmp(want, got) == 0;
	} else {
		got = jose_result_name(jose_jwt_verify(set, &pol, token,
		    strlen(token), json_integer_value(pick(c, top, "now")), &t,
		    why));
		ok = strcmp(want, got) == 0 && (t == NULL ||
		    carries(c, t, msg, sizeof msg));
		jose_token_free(t);
		jose_jwks_free(set);
	}
	if (ok)
		printf("ok - %s: %s%s%s\n", name, got, *why ? ": " : "", why);
	else
		printf("not ok - %s: got %s (%s)%s%s, want %s\n", name, got,
		    why, *msg ? ", " : "", msg, want);
	return (ok);
}

int
main(int argc, char *argv[])
{
	json_t		*top, *cases, *c;
	json_error_t	 err;
	size_t		 i, passed = 0, failed = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: jose_cases FILE\n");
		return (2);
	}
	if ((top = json_load_file(argv[1], 0, &err)) == NULL) {
		fprintf(stderr, "%s:%d: %s\n", argv[1], err.line, err.text);
		return (2);
	}
	if (!json_is_array(cases = json_object_get(top, "cases"))) {
		fprintf(stderr, "%s: no cases\n", argv[1]);
		json_decref(top);
		return (2);
	}
	json_array_foreach(cases, i, c) {
		if (run(top, c, i))
			passed++;
		else
			failed++;
	}
	json_decref(top);
	printf("%zu passed, %zu failed\n", passed, failed);
	return (failed == 0 && passed > 0 ? 0 : 1);
}
