/* SPDX-License-Identifier: ISC */
/*
 * Fuzz what the gateway reads from an upstream and its authorization
 * server as an OAuth client (worker/oauthc*.c).  The first byte chooses:
 * a WWW-Authenticate value, a token answer, or an authorization response.
 * A parsed challenge's values are within OAUTHC_PARAM_MAX and hold no
 * control character, and parsing is the same for the value with
 * ", Basic" appended (a later challenge changes nothing found before it);
 * an accepted token is visible ASCII, a refusal says why without '"' or
 * '\'; an accepted authorization response had this login's state.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oauthc.h"

#define CHECK(x) do {							\
	if (!(x)) {							\
		fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__,	\
		    __LINE__, #x);					\
		abort();						\
	}								\
} while (0)

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Is s NULL, or printable within the bound? */
static int
value_ok(const char *s)
{
	size_t	i;

	if (s == NULL)
		return (1);
	for (i = 0; s[i] != '\0'; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return (0);
	return (i <= OAUTHC_PARAM_MAX);
}

/* Are two strings both NULL or equal? */
static int
same(const char *a, const char *b)
{
	return (a == NULL ? b == NULL : b != NULL && strcmp(a, b) == 0);
}

static void
fuzz_challenge(const char *p, size_t len)
{
	struct oauthc_challenge	 c, d;
	char			*more;
	int			 rc, rc2;

	rc = oauthc_challenge_parse(p, len, &c);
	CHECK(rc >= -1 && rc <= 1);
	if (rc != 1)
		CHECK(c.error == NULL && c.scope == NULL &&
		    c.resource_metadata == NULL);
	CHECK(value_ok(c.error) && value_ok(c.scope) &&
	    value_ok(c.resource_metadata));
	if (rc == 1 && len + 7 <= OAUTHC_CHALLENGE_MAX &&
	    memchr(p, '\0', len) == NULL) {
		more = malloc(len + 8);
		CHECK(more != NULL);
		memcpy(more, p, len);
		memcpy(more + len, ", Basic", 7);
		rc2 = oauthc_challenge_parse(more, len + 7, &d);
		/* A trailing token68 or empty parameter list may absorb it. */
		if (rc2 == 1)
			CHECK(same(c.error, d.error) && same(c.scope, d.scope) &&
			    same(c.resource_metadata, d.resource_metadata));
		oauthc_challenge_clear(&d);
		free(more);
	}
	oauthc_challenge_clear(&c);
}

static void
fuzz_token(const char *p, size_t len)
{
	struct oauthc_token	t;
	char			why[OAUTHC_WHY_MAX];
	size_t			i;

	why[0] = '\0';
	if (oauthc_token_parse(p, len, &t, why, sizeof why) == 0) {
		CHECK(t.access_token != NULL);
		for (i = 0; t.access_token[i] != '\0'; i++)
			CHECK(t.access_token[i] >= 0x20 &&
			    t.access_token[i] < 0x7f);
		CHECK(t.expires_in >= -1 &&
		    t.expires_in <= OAUTHC_EXPIRES_MAX);
	} else {
		CHECK(why[0] != '\0');
		CHECK(strpbrk(why, "\"\\") == NULL);
		CHECK(t.access_token == NULL);
	}
	oauthc_token_clear(&t);
}

static void
fuzz_authz(const char *p, size_t len)
{
	char	*s, *code, why[OAUTHC_WHY_MAX];

	s = malloc(len + 1);
	CHECK(s != NULL);
	memcpy(s, p, len);
	s[len] = '\0';
	if (oauthc_authz_response(s, "S1", "https://as.example", len % 2,
	    &code, why, sizeof why) == 0) {
		CHECK(code != NULL && code[0] != '\0');
		CHECK(strstr(s, "state=S1") != NULL ||
		    (strchr(s, '=') == NULL && strchr(s, '?') == NULL));
		free(code);
	} else
		CHECK(code == NULL && strpbrk(why, "\"\\") == NULL);
	free(s);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char	*p = (const char *)data + 1;

	if (size < 1)
		return (0);
	switch (data[0] % 3) {
	case 0:
		fuzz_challenge(p, size - 1);
		break;
	case 1:
		fuzz_token(p, size - 1);
		break;
	default:
		fuzz_authz(p, size - 1);
		break;
	}
	return (0);
}
