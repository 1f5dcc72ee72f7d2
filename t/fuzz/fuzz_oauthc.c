/* SPDX-License-Identifier: ISC */
/*
 * Fuzz what the gateway reads from an upstream and its authorization
 * server as an OAuth client (worker/oauthc*.c).  The first byte chooses:
 * a WWW-Authenticate value, a token answer, an authorization response, a
 * registration's answer, or a stored record.
 * A parsed challenge's values are within OAUTHC_PARAM_MAX and hold no
 * control character, and parsing is the same for the value with
 * ", Basic" appended (a later challenge changes nothing found before it);
 * an accepted token is visible ASCII, a refusal says why without '"' or
 * '\'; an accepted authorization response had this login's state; an
 * accepted registration has a printable client_id and a secret exactly
 * when its method needs one; an accepted record is the upstream's, and
 * what is written of it is read back the same.
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

/* Is s visible ASCII, 1 to max bytes? */
static int
visible(const char *s, size_t max)
{
	size_t	i;

	for (i = 0; s[i] != '\0'; i++)
		if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f)
			return (0);
	return (i > 0 && i <= max);
}

static void
fuzz_dcr(const char *p, size_t len)
{
	struct oauthc_reg	r;
	char			why[OAUTHC_WHY_MAX];
	unsigned int		asked = len % 2 ? OAUTHC_AUTH_BASIC :
				    OAUTHC_AUTH_NONE;

	why[0] = '\0';
	if (oauthc_dcr_parse(p, len, asked, &r, why, sizeof why) == 0) {
		CHECK(r.client_id != NULL &&
		    visible(r.client_id, OAUTHC_PARAM_MAX));
		CHECK(r.method == OAUTHC_AUTH_BASIC ||
		    r.method == OAUTHC_AUTH_POST ||
		    r.method == OAUTHC_AUTH_NONE);
		CHECK((r.client_secret != NULL) ==
		    (r.method != OAUTHC_AUTH_NONE));
		CHECK(r.client_secret == NULL ||
		    visible(r.client_secret, OAUTHC_TOKEN_MAX));
	} else {
		CHECK(why[0] != '\0' && strpbrk(why, "\"\\") == NULL);
		CHECK(r.client_id == NULL && r.client_secret == NULL);
	}
	oauthc_reg_clear(&r);
}

static void
fuzz_record(const char *p, size_t len)
{
	struct oauthc_record	r, r2;
	json_t			*o, *w;
	char			why[OAUTHC_WHY_MAX];
	const char		*cid = len % 2 ? "c" : NULL;

	if ((o = json_loadb(p, len, 0, NULL)) == NULL)
		return;
	if (oauthc_record_read(o, "https://h/mcp", cid, &r, why,
	    sizeof why) == 0) {
		CHECK(strcmp(r.resource, "https://h/mcp") == 0);
		CHECK(r.registered != OAUTHC_REG_NONE);
		CHECK(r.registered != OAUTHC_REG_CONFIG ||
		    (cid != NULL && strcmp(r.client_id, cid) == 0));
		w = oauthc_record_json(&r);
		CHECK(oauthc_record_read(w, "https://h/mcp", cid, &r2, why,
		    sizeof why) == 0);
		CHECK(strcmp(r2.client_id, r.client_id) == 0 &&
		    strcmp(r2.issuer, r.issuer) == 0 &&
		    r2.registered == r.registered &&
		    same(r2.access_token, r.access_token) &&
		    same(r2.refresh_token, r.refresh_token) &&
		    same(r2.client_secret, r.client_secret));
		json_decref(w);
	} else
		CHECK(why[0] != '\0');
	json_decref(o);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char	*p = (const char *)data + 1;

	if (size < 1)
		return (0);
	switch (data[0] % 5) {
	case 0:
		fuzz_challenge(p, size - 1);
		break;
	case 1:
		fuzz_token(p, size - 1);
		break;
	case 2:
		fuzz_authz(p, size - 1);
		break;
	case 3:
		fuzz_dcr(p, size - 1);
		break;
	default:
		fuzz_record(p, size - 1);
		break;
	}
	return (0);
}
