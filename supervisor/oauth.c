/* SPDX-License-Identifier: ISC */
/*
 * OAuth access tokens (oauth = { ... } in mcp-supervisord.conf(5)): the
 * verdict on a bearer token that is none of the static ones.
 *
 * A JSON Web Token names its issuer in "iss", read before anything is
 * verified only to pick the issuer's key set (idp.c); the signature, the
 * issuer, the audience (our resource URL followed by an endpoint, or an
 * extra audience), the dates and the type are then checked by
 * common/jose.  A token whose kid the set lacks, or any token while the
 * issuer has no keys yet, waits once for a refresh (idp_refresh, rate
 * bounded there).  Any other token is introspected (RFC 7662) at the
 * first issuer configured to, and waits for that.
 *
 * Verdicts are cached, keyed by the token's SHA-256: a grant until the
 * token expires (an introspected one for at most OAUTH_INTROSPECT_TTL), a
 * refusal for OAUTH_NEGATIVE_TTL, so that a token costs one verification,
 * not one per request.  The cache holds at most OAUTH_CACHE_MAX entries,
 * the least recently used going first; a reload empties it.
 *
 * A grant's principal is the issuer and the subject (subject_claim); its
 * hash is the credential a session is bound to, so that the same subject
 * with a refreshed token keeps its sessions and no one else reaches them.
 * A grant names the first client whose oauth = { ... } the token matches,
 * else default_client, else none (an unnamed client, MCP only).
 */
#include "config.h"

#include <sys/queue.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>

#include "jose.h"
#include "log.h"
#include "supervisor.h"
#include "oauth_priv.h"
#include "xmalloc.h"

#define OAUTH_CACHE_MAX		16384	/* verdicts kept */
#define OAUTH_NEGATIVE_TTL	30	/* seconds a refusal is kept */
#define OAUTH_INTROSPECT_TTL	300	/* seconds an introspection is kept,
					   at most */
#define OAUTH_WAITS_MAX		1024	/* requests waiting for an issuer */
#define OAUTH_SUBJECT_MAX	512	/* bytes of a subject */

/* One cached verdict. */
struct verdict_entry {
	unsigned char		 digest[32];	/* SHA-256 of the token */
	enum oauth_status	 status;
	struct oauth_grant	*grant;		/* a reference, or NULL */
	const char		*reason;
	char			 why[JOSE_WHY_MAX];
	int64_t			 until;		/* Unix seconds */
	TAILQ_ENTRY(verdict_entry) lru;		/* most recent first */
};
TAILQ_HEAD(verdict_list, verdict_entry);

static const struct oauth_conf	*oc;		/* borrowed from conf */
static struct u64map		 cache;		/* digest's first 8 bytes */
static struct verdict_list	 lru = TAILQ_HEAD_INITIALIZER(lru);
static size_t			 ncache;
/* What the last OAUTH_PENDING verdict needs (oauth_wait takes it). */
static enum wait_kind		 pending_kind;
static struct idp		*pending_idp;
/* The audiences a token may name (resource + each endpoint, extras). */
static char			**audiences;
/* Each audience's endpoint: NULL for the gateway as a whole (the resource,
 * extras), "" for /mcp's, else a virtual endpoint's path.  Owned. */
static char			**aud_base;

/* Counters: refusals by reason (jose_result_name's and ours), the cache. */
static const char *const refusal_names[] = {
	"no_token", "malformed", "too_long", "encrypted", "alg_none",
	"alg_hmac", "alg_unknown", "alg_denied", "crit", "typ",
	"kid_unknown", "kid_ambiguous", "no_key", "signature", "claims",
	"issuer", "audience", "expired", "not_yet_valid", "issued_in_future",
	"internal", "unknown_issuer", "no_subject", "inactive",
	"insufficient_scope", "introspection_failed", "provider_unavailable",
	NULL
};
#define NREFUSALS	(sizeof refusal_names / sizeof refusal_names[0] - 1)
static uint64_t		 m_refusals[NREFUSALS];
static uint64_t		 m_hits, m_misses, m_granted;

void
oauth_no_token(void)
{
	m_refusals[0]++;
}


/* Count a refusal by reason. */
static void
count_refusal(const char *reason)
{
	size_t	i;

	for (i = 0; i < NREFUSALS; i++) {
		if (strcmp(refusal_names[i], reason) == 0) {
			m_refusals[i]++;
			return;
		}
	}
}

void
oauth_insufficient(void)
{
	count_refusal("insufficient_scope");
}

void
oauth_expired(void)
{
	count_refusal("expired");
}

/* Hash a token: once per request, so the digest is fetched once. */
void
oauth_token_digest(const char *token, size_t len, unsigned char digest[32])
{
	static EVP_MD	*sha256;
	unsigned int	 n = 32;

	if (sha256 == NULL &&
	    (sha256 = EVP_MD_fetch(NULL, "SHA256", NULL)) == NULL)
		fatalx("oauth: no SHA-256");
	if (EVP_Digest(token, len, digest, &n, sha256, NULL) != 1 || n != 32)
		fatalx("oauth: SHA-256 failed");
}

uint64_t
oauth_digest_key(const unsigned char d[32])
{
	uint64_t	k = 0;
	int		i;

	for (i = 0; i < 8; i++)
		k = k << 8 | d[i];
	return (k);
}

struct oauth_grant *
oauth_grant_ref(struct oauth_grant *g)
{
	if (g != NULL)
		g->refs++;
	return (g);
}

void
oauth_grant_unref(struct oauth_grant *g)
{
	size_t	i;

	if (g == NULL || --g->refs > 0)
		return;
	free(g->issuer);
	free(g->subject);
	for (i = 0; g->scopes[i] != NULL; i++)
		free(g->scopes[i]);
	free(g->scopes);
	free(g->client);
	json_decref(g->aud);
	free(g);
}

int
oauth_grant_has(const struct oauth_grant *g, char *const *scopes,
    const char **missing)
{
	size_t	i, j;

	for (i = 0; scopes != NULL && scopes[i] != NULL; i++) {
		for (j = 0; g->scopes[j] != NULL; j++) {
			if (strcmp(g->scopes[j], scopes[i]) == 0)
				break;
		}
		if (g->scopes[j] == NULL) {
			if (missing != NULL)
				*missing = scopes[i];
			return (0);
		}
	}
	return (1);
}

/* Drop a cache entry. */
static void
cache_drop(struct verdict_entry *e)
{
	u64map_del(&cache, oauth_digest_key(e->digest));
	TAILQ_REMOVE(&lru, e, lru);
	ncache--;
	oauth_grant_unref(e->grant);
	free(e);
}

/* Empty the cache. */
static void
cache_clear(void)
{
	struct verdict_entry	*e;

	while ((e = TAILQ_FIRST(&lru)) != NULL)
		cache_drop(e);
}

/* A live cached verdict for a digest, or NULL. */
static struct verdict_entry *
cache_get(const unsigned char digest[32], int64_t now)
{
	struct verdict_entry	*e;

	if ((e = u64map_get(&cache, oauth_digest_key(digest))) == NULL ||
	    memcmp(e->digest, digest, 32) != 0)
		return (NULL);
	if (now >= e->until) {
		cache_drop(e);
		return (NULL);
	}
	TAILQ_REMOVE(&lru, e, lru);
	TAILQ_INSERT_HEAD(&lru, e, lru);
	return (e);
}

/* Keep a verdict (its grant referenced again) until a time. */
static void
cache_put(const unsigned char digest[32], const struct oauth_verdict *v,
    int64_t until)
{
	struct verdict_entry	*e;

	if ((e = u64map_get(&cache, oauth_digest_key(digest))) != NULL)
		cache_drop(e);
	while (ncache >= OAUTH_CACHE_MAX)
		cache_drop(TAILQ_LAST(&lru, verdict_list));
	e = xcalloc(1, sizeof *e);
	memcpy(e->digest, digest, 32);
	e->status = v->status;
	e->grant = oauth_grant_ref(v->grant);
	e->reason = v->reason;
	memcpy(e->why, v->why, sizeof e->why);
	e->until = until;
	u64map_put(&cache, oauth_digest_key(digest), e);
	TAILQ_INSERT_HEAD(&lru, e, lru);
	ncache++;
}

/* Refuse: fill the verdict. */
static void
refuse(struct oauth_verdict *v, const char *reason, const char *why)
{
	v->status = OAUTH_REFUSED;
	v->grant = NULL;
	v->reason = reason;
	snprintf(v->why, sizeof v->why, "%s", why);
}

/* Is a JSON value the string s, or an array holding it? */
static int
claim_has(const json_t *j, const char *s)
{
	size_t	i;

	if (json_is_string(j))
		return (strcmp(json_string_value(j), s) == 0);
	if (!json_is_array(j))
		return (0);
	for (i = 0; i < json_array_size(j); i++) {
		if (json_is_string(json_array_get(j, i)) &&
		    strcmp(json_string_value(json_array_get(j, i)), s) == 0)
			return (1);
	}
	return (0);
}

/* Does a grant (and its claims) match a client's oauth = { ... }? */
static int
oauth_matches(const struct oauth_match *m, const struct oauth_grant *g,
    const json_t *claims)
{
	size_t	i;

	if (m->issuer != NULL && strcmp(m->issuer, g->issuer) != 0)
		return (0);
	if (m->subject != NULL && strcmp(m->subject, g->subject) != 0)
		return (0);
	if (!oauth_grant_has(g, m->scopes, NULL))
		return (0);
	for (i = 0; m->claim_names != NULL && m->claim_names[i] != NULL; i++) {
		if (!claim_has(json_object_get(claims, m->claim_names[i]),
		    m->claim_values[i]))
			return (0);
	}
	return (1);
}

/* Name the client a grant is, and its rights. */
static void
oauth_map(struct oauth_grant *g, const json_t *claims)
{
	const struct client_conf	*cl = NULL;
	size_t				 i;

	for (i = 0; i < conf->nclients && cl == NULL; i++) {
		if (conf->clients[i].oauth != NULL &&
		    oauth_matches(conf->clients[i].oauth, g, claims))
			cl = &conf->clients[i];
	}
	if (cl == NULL && oc->default_client != NULL)
		cl = conf_client_find(conf, oc->default_client);
	g->rights = AUTH_MCP;
	if (cl != NULL) {
		g->client = xstrdup(cl->name);
		if (cl->metrics)
			g->rights |= AUTH_METRICS;
	}
}

/*
 * Make a grant: the principal (issuer, subject), scopes (taken), client.
 * claims: the token's claims or the introspection's answer.
 */
static struct oauth_grant *
grant_new(const char *issuer, const char *subject, char **scopes,
    int64_t exp, const json_t *claims)
{
	struct oauth_grant	*g;
	unsigned char		 d[32];
	EVP_MD_CTX		*ctx;
	unsigned int		 n = 32;

	g = xcalloc(1, sizeof *g);
	g->refs = 1;
	g->issuer = xstrdup(issuer);
	g->subject = xstrdup(subject);
	g->scopes = scopes;
	g->exp = exp;
	g->aud = json_incref(json_object_get(claims, "aud"));
	/* The principal's hash: its issuer and subject, with their NULs. */
	if ((ctx = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1 ||
	    EVP_DigestUpdate(ctx, "oauth", 6) != 1 ||
	    EVP_DigestUpdate(ctx, issuer, strlen(issuer) + 1) != 1 ||
	    EVP_DigestUpdate(ctx, subject, strlen(subject) + 1) != 1 ||
	    EVP_DigestFinal_ex(ctx, d, &n) != 1)
		fatalx("oauth: SHA-256 failed");
	EVP_MD_CTX_free(ctx);
	g->id = oauth_digest_key(d) | 1;
	oauth_map(g, claims);
	return (g);
}

/*
 * The subject a token's claims name, or NULL if none fits.  Its strlen
 * is its length: claims and introspection answers are loaded without
 * JSON_ALLOW_NUL (here, common/jwt.c, idp/idp_fetch.c).
 */
static const char *
claims_subject(const json_t *claims)
{
	const char	*s;

	s = json_string_value(json_object_get(claims, oc->subject_claim));
	if (s == NULL || *s == '\0' || strlen(s) > OAUTH_SUBJECT_MAX)
		return (NULL);
	return (s);
}

/* The client an introspection answer names, as its subject; or NULL. */
static const char *
client_subject(const json_t *resp)
{
	const char	*s;

	s = json_string_value(json_object_get(resp, "client_id"));
	if (s == NULL || *s == '\0' || strlen(s) > OAUTH_SUBJECT_MAX)
		return (NULL);
	return (s);
}

/* A verdict from a valid token's grant: the scopes every request needs. */
static void
grant_verdict(struct oauth_verdict *v, struct oauth_grant *g)
{
	const char	*missing = NULL;

	v->grant = g;
	if (!oauth_grant_has(g, oc->scopes, &missing)) {
		v->status = OAUTH_INSUFFICIENT;
		v->reason = "insufficient_scope";
		snprintf(v->why, sizeof v->why, "the token lacks a scope "
		    "every request needs");
		return;
	}
	v->status = OAUTH_GRANTED;
	v->reason = "granted";
	v->why[0] = '\0';
}

/*
 * Read a part of a JWT (0 its header, 1 its payload) without verifying
 * anything: the payload for its iss only (to pick the key set), the
 * header for whether it names a kid.  NULL if it cannot be read.
 */
static json_t *
jwt_peek(const char *token, size_t len, int part)
{
	const char	*p = token, *q;
	unsigned char	*buf;
	size_t		 n, out;
	json_t		*j;

	if (part == 1) {
		if ((p = memchr(token, '.', len)) == NULL)
			return (NULL);
		p++;
	}
	if ((q = memchr(p, '.', len - (size_t)(p - token))) == NULL)
		return (NULL);
	n = (size_t)(q - p);
	buf = xmalloc(jose_b64url_decoded_max(n) + 1);
	if (jose_b64url_decode(p, n, buf, jose_b64url_decoded_max(n),
	    &out) != 0) {
		free(buf);
		return (NULL);
	}
	j = json_loadb((const char *)buf, out, JSON_REJECT_DUPLICATES, NULL);
	free(buf);
	if (!json_is_object(j)) {
		json_decref(j);
		return (NULL);
	}
	return (j);
}

/* Does a JWT's header name no kid? */
static int
jwt_kidless(const char *token, size_t len)
{
	json_t	*h = jwt_peek(token, len, 0);
	int	 none = h != NULL && json_object_get(h, "kid") == NULL;

	json_decref(h);
	return (none);
}

/* The first of our audiences a token's aud holds, or the resource. */
static const char *
pick_audience(const json_t *aud)
{
	size_t	i;

	for (i = 0; audiences[i] != NULL; i++) {
		if (claim_has(aud, audiences[i]))
			return (audiences[i]);
	}
	return (audiences[0]);
}

/* Split a scope claim's string or array into a new vector. */
static char **
scopes_copy(char *const *v, size_t n)
{
	char	**out;
	size_t	  i;

	out = xcalloc(n + 1, sizeof *out);
	for (i = 0; i < n; i++)
		out[i] = xstrdup(v[i]);
	return (out);
}

/* Verify a JWT; OAUTH_PENDING if it needs its issuer's keys. */
static void
check_jwt(const char *token, size_t len, int retry, int64_t now,
    struct oauth_verdict *v)
{
	const struct oauth_issuer_conf	*ic;
	const struct jose_jwks		*set;
	struct jose_policy		 pol;
	struct jose_token		*t;
	struct idp			*idp;
	enum jose_result		 r;
	json_t				*peek, *header, *claims;
	unsigned char			*payload;
	size_t				 plen;
	const char			*iss, *sub;
	char				 why[JOSE_WHY_MAX];

	if ((peek = jwt_peek(token, len, 1)) == NULL) {
		refuse(v, "malformed", "the token is not a JWT");
		return;
	}
	iss = json_string_value(json_object_get(peek, "iss"));
	if (iss == NULL || (ic = conf_oauth_issuer(oc, iss)) == NULL ||
	    (idp = idp_find(iss)) == NULL) {
		json_decref(peek);
		refuse(v, "unknown_issuer", "the token's issuer is not "
		    "one this gateway accepts");
		return;
	}
	json_decref(peek);
	if (idp_keyless(idp)) {
		refuse(v, "provider_unavailable", "the issuer has no key set: "
		    "its tokens are opaque, and this one is not");
		return;
	}
	if ((set = idp_jwks(idp)) == NULL) {
		if (!retry) {
			v->status = OAUTH_PENDING;
			pending_kind = WAIT_KEYS;
			pending_idp = idp;
			return;
		}
		refuse(v, "provider_unavailable", "the issuer's keys are "
		    "not known yet");
		return;
	}
	r = jose_jws_verify(set, ic->algorithms, ic->typ, token, len,
	    &header, &payload, &plen, why);
	/*
	 * An unknown kid, or a token without one that the one key fitting
	 * it does not verify (a provider that rotated its only key and
	 * names none): fresh keys first, at the bounded rate.
	 */
	if (!retry && (r == JOSE_ERR_KID_UNKNOWN || ((r == JOSE_ERR_SIGNATURE ||
	    r == JOSE_ERR_NO_KEY) && jwt_kidless(token, len)))) {
		v->status = OAUTH_PENDING;
		pending_kind = WAIT_KEYS;
		pending_idp = idp;
		return;
	}
	if (r != JOSE_OK) {
		refuse(v, jose_result_name(r), why);
		return;
	}
	json_decref(header);
	claims = json_loadb((const char *)payload, plen,
	    JSON_REJECT_DUPLICATES, NULL);
	free(payload);
	if (claims == NULL) {
		refuse(v, "malformed", "the claims are not JSON with each "
		    "member once");
		return;
	}
	memset(&pol, 0, sizeof pol);
	pol.issuer = ic->issuer;
	pol.audience = pick_audience(json_object_get(claims, "aud"));
	pol.algs = ic->algorithms;
	pol.typ = ic->typ;
	pol.leeway = oc->leeway;
	/* The token owns the claims from here on (jose_token_free). */
	t = xcalloc(1, sizeof *t);
	t->claims = claims;
	if ((r = jose_claims_check(claims, &pol, now, t, why)) != JOSE_OK)
		refuse(v, jose_result_name(r), why);
	else if ((sub = claims_subject(claims)) == NULL)
		refuse(v, "no_subject", "the token names no subject");
	else
		grant_verdict(v, grant_new(ic->issuer, sub,
		    scopes_copy(t->scopes, t->nscopes), t->exp, claims));
	jose_token_free(t);
}

/*
 * The issuer that introspects opaque tokens: the first with no key set
 * (its tokens are all opaque), else the first that introspects; NULL if
 * none does.
 */
static struct idp *
introspector(void)
{
	struct idp	*d, *first = NULL;
	size_t		 i;

	for (i = 0; i < oc->nissuers; i++) {
		if (oc->issuers[i].introspection.client_id == NULL ||
		    (d = idp_find(oc->issuers[i].issuer)) == NULL)
			continue;
		if (idp_keyless(d))
			return (d);
		if (first == NULL)
			first = d;
	}
	return (first);
}

/* Split a space-separated scope string (RFC 7662) into a new vector. */
static char **
scopes_split(const char *s)
{
	char	**out;
	size_t	  n = 0, len;

	out = xcalloc(JOSE_SCOPES_MAX + 1, sizeof *out);
	while (s != NULL && *s != '\0' && n < JOSE_SCOPES_MAX) {
		s += strspn(s, " ");
		if ((len = strcspn(s, " ")) == 0)
			break;
		out[n++] = xstrndup(s, len);
		s += len;
	}
	return (out);
}

/*
 * The verdict of an introspection's answer (RFC 7662, section 2.2): an
 * active token of this issuer, for our audience, in its dates.
 */
static void
introspected_verdict(const struct oauth_issuer_conf *ic, json_t *resp,
    int64_t now, struct oauth_verdict *v, int64_t *until)
{
	json_t		*j;
	const char	*sub;
	int64_t		 exp = 0, nbf = 0;
	size_t		 i;
	int		 has;

	*until = now + OAUTH_NEGATIVE_TTL;
	if (!json_is_object(resp) || !json_is_true(json_object_get(resp,
	    "active"))) {
		refuse(v, "inactive", "the token is not active");
		return;
	}
	if ((j = json_object_get(resp, "iss")) != NULL &&
	    (!json_is_string(j) || strcmp(json_string_value(j),
	    ic->issuer) != 0)) {
		refuse(v, "issuer", "iss is not the configured issuer");
		return;
	}
	/* Bounded as a JWT's are, so exp + leeway cannot overflow. */
	if ((has = jose_numeric_date(resp, "exp", &exp)) == -1 ||
	    jose_numeric_date(resp, "nbf", &nbf) == -1) {
		refuse(v, "claims", "exp or nbf is not a NumericDate");
		return;
	}
	if (has == 1 && now >= exp + (int64_t)oc->leeway) {
		refuse(v, "expired", "the token has expired");
		return;
	}
	if (nbf > now + (int64_t)oc->leeway) {
		refuse(v, "not_yet_valid", "the token is not valid yet");
		return;
	}
	j = json_object_get(resp, "aud");
	for (i = 0; audiences[i] != NULL && !claim_has(j, audiences[i]); i++)
		;
	if (audiences[i] == NULL) {
		refuse(v, "audience", "aud does not hold this resource");
		return;
	}
	/*
	 * RFC 7662 makes sub optional: a token of the client credentials
	 * grant may name only its client (oidc-provider's do).  Its subject
	 * is then the client, as RFC 9068 has it for JWT access tokens.
	 */
	if ((sub = claims_subject(resp)) == NULL &&
	    strcmp(oc->subject_claim, "sub") == 0 &&
	    json_object_get(resp, "sub") == NULL)
		sub = client_subject(resp);
	if (sub == NULL) {
		refuse(v, "no_subject", "the token names no subject");
		return;
	}
	grant_verdict(v, grant_new(ic->issuer, sub, scopes_split(
	    json_string_value(json_object_get(resp, "scope"))), exp, resp));
	*until = now + OAUTH_INTROSPECT_TTL;
	if (exp != 0 && exp < *until)
		*until = exp;
}

/* An opaque token: its cached introspection, or OAUTH_PENDING. */
static void
check_opaque(int retry, struct oauth_verdict *v)
{
	struct idp	*idp;

	if ((idp = introspector()) == NULL) {
		refuse(v, "malformed", "the token is not a JWT, and no "
		    "issuer introspects tokens");
		return;
	}
	if (retry) {
		refuse(v, "introspection_failed", "the token could not be "
		    "introspected");
		return;
	}
	v->status = OAUTH_PENDING;
	pending_kind = WAIT_INTROSPECTION;
	pending_idp = idp;
}

/* May c be in a bearer token (RFC 6750, section 2.1, b64token)? */
static int
b64token_char(unsigned char c)
{
	return ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	    (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
	    c == '~' || c == '+' || c == '/' || c == '=');
}

void
oauth_check(const char *token, size_t len, int retry,
    struct oauth_verdict *v)
{
	struct verdict_entry	*e;
	unsigned char		 digest[32];
	int64_t			 now = (int64_t)time(NULL), until;
	size_t			 i, dots = 0;

	memset(v, 0, sizeof *v);
	if (oc == NULL) {
		refuse(v, "no_token", "no token of this gateway");
		return;
	}
	if (len == 0 || len > JOSE_TOKEN_MAX) {
		refuse(v, len == 0 ? "no_token" : "too_long", len == 0 ?
		    "the token is empty" : "the token is too long");
		count_refusal(v->reason);
		return;
	}
	/* A cached verdict's token was read whole when it was decided. */
	oauth_token_digest(token, len, digest);
	if ((e = cache_get(digest, now)) != NULL) {
		m_hits++;
		v->status = e->status;
		v->grant = oauth_grant_ref(e->grant);
		v->reason = e->reason;
		memcpy(v->why, e->why, sizeof v->why);
		if (v->grant != NULL && v->grant->exp != 0 &&
		    now >= v->grant->exp + (int64_t)oc->leeway) {
			/* Kept a moment too long: expired since. */
			oauth_grant_unref(v->grant);
			cache_drop(e);
			refuse(v, "expired", "the token has expired");
		}
		if (v->status != OAUTH_GRANTED)
			count_refusal(v->reason);
		return;
	}
	m_misses++;
	for (i = 0; i < len; i++) {
		if (!b64token_char((unsigned char)token[i])) {
			refuse(v, "malformed", "the token has characters a "
			    "bearer token may not");
			count_refusal(v->reason);
			return;
		}
		dots += token[i] == '.';
	}
	if (dots == 2)
		check_jwt(token, len, retry, now, v);
	else if (dots == 4)
		refuse(v, "encrypted", "an encrypted token (JWE) is not "
		    "accepted");
	else
		check_opaque(retry, v);
	if (v->status == OAUTH_PENDING) {
		if (oauth_waiting() >= OAUTH_WAITS_MAX)
			refuse(v, "provider_unavailable", "too many tokens "
			    "wait for their issuer");
		else
			return;
	}
	if (v->status == OAUTH_GRANTED)
		m_granted++;
	else
		count_refusal(v->reason);
	/* A grant until the token expires; a refusal a short while. */
	until = now + OAUTH_NEGATIVE_TTL;
	if (v->grant != NULL)
		until = v->grant->exp + (int64_t)oc->leeway;
	/* Not kept: what the issuer's keys or its answer could change. */
	if (strcmp(v->reason, "kid_unknown") != 0 &&
	    strcmp(v->reason, "provider_unavailable") != 0 &&
	    strcmp(v->reason, "introspection_failed") != 0)
		cache_put(digest, v, until);
}

void
oauth_pending_need(enum wait_kind *kind, struct idp **idp)
{
	*kind = pending_kind;
	*idp = pending_idp;
}

void
oauth_introspected(struct idp *idp, const unsigned char digest[32],
    json_t *resp)
{
	const struct oauth_issuer_conf	*ic;
	struct oauth_verdict		 v;
	int64_t				 until;

	if (resp == NULL || oc == NULL || (ic = idp_conf(idp)) == NULL)
		return;
	memset(&v, 0, sizeof v);
	introspected_verdict(ic, resp, (int64_t)time(NULL), &v, &until);
	cache_put(digest, &v, until);
	oauth_grant_unref(v.grant);
}

/* Free the audience list. */
static void
audiences_free(void)
{
	size_t	i;

	for (i = 0; audiences != NULL && audiences[i] != NULL; i++) {
		free(audiences[i]);
		free(aud_base[i]);
	}
	free(audiences);
	free(aud_base);
	audiences = NULL;
	aud_base = NULL;
}

/* Add an audience of an endpoint (ep: see aud_base). */
static void
audience_add(size_t *n, const char *ep, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	if (vasprintf(&audiences[*n], fmt, ap) == -1)
		fatal("%s", __func__);
	va_end(ap);
	aud_base[*n] = ep != NULL ? xstrdup(ep) : NULL;
	(*n)++;
}

/* Is a grant's token for the endpoint a request path is of? */
static int
grant_admits(const struct oauth_grant *g, const char *path)
{
	enum vendpoint_transport	 t;
	struct vendpoint		*vep;
	const char			*ep;
	size_t				 i;

	if (audiences == NULL)
		return (1);
	if ((vep = vendpoint_route(path, &t)) != NULL)
		ep = vendpoint_path(vep);
	else if (strcmp(path, "/mcp") == 0 || strcmp(path, "/sse") == 0 ||
	    strcmp(path, "/messages") == 0 || (conf->ws_path[0] != '\0' &&
	    strcmp(path, conf->ws_path) == 0))
		ep = "";
	else
		return (1);	/* no endpoint: the verdict held one of ours */
	for (i = 0; audiences[i] != NULL; i++) {
		if ((aud_base[i] == NULL || strcmp(aud_base[i], ep) == 0) &&
		    claim_has(g->aud, audiences[i]))
			return (1);
	}
	return (0);
}

void
oauth_check_path(struct oauth_verdict *v, const char *path)
{
	if (v->grant == NULL || grant_admits(v->grant, path))
		return;
	oauth_grant_unref(v->grant);
	refuse(v, "audience", "aud does not hold this endpoint: the token is "
	    "for another of this gateway's");
	count_refusal(v->reason);
}

void
oauth_configure(const struct conf *c)
{
	static const char *const paths[] = { "/mcp", "/sse", "/messages" };
	const char	*p;
	size_t		 i, n = 0, extra = 0;

	cache_clear();
	audiences_free();
	if ((oc = c->oauth) == NULL)
		return;
	for (i = 0; oc->audiences != NULL && oc->audiences[i] != NULL; i++)
		extra++;
	audiences = xcalloc(5 + extra + 4 * c->nendpoints + 1,
	    sizeof *audiences);
	aud_base = xcalloc(5 + extra + 4 * c->nendpoints + 1,
	    sizeof *aud_base);
	/* The resource itself first: what pick_audience falls back on. */
	audience_add(&n, NULL, "%s", oc->resource);
	for (i = 0; i < sizeof paths / sizeof paths[0]; i++)
		audience_add(&n, "", "%s%s", oc->resource, paths[i]);
	if (c->ws_path[0] != '\0')
		audience_add(&n, "", "%s%s", oc->resource, c->ws_path);
	for (i = 0; i < extra; i++)
		audience_add(&n, NULL, "%s", oc->audiences[i]);
	/* Each virtual endpoint's paths (vendpoint.c). */
	for (i = 0; i < c->nendpoints; i++) {
		p = c->endpoints[i].path;
		audience_add(&n, p, "%s%s", oc->resource, p);
		audience_add(&n, p, "%s%s/sse", oc->resource, p);
		audience_add(&n, p, "%s%s/messages", oc->resource, p);
		if (c->ws_path[0] != '\0')
			audience_add(&n, p, "%s%s/ws", oc->resource, p);
	}
}

void
oauth_shutdown(void)
{
	cache_clear();
	audiences_free();
	oc = NULL;
	oauth_waits_clear();
	u64map_free(&cache);
}

int
oauth_enabled(void)
{
	return (oc != NULL);
}

void
oauth_metrics(struct evbuffer *b)
{
	char	labels[128];
	size_t	i;

	if (oc == NULL)
		return;
	prom_header(b, "mcp_supervisor_oauth_refused_total", "counter",
	    "OAuth access tokens refused, by reason.");
	for (i = 0; i < NREFUSALS; i++) {
		prom_labels(labels, sizeof labels, "reason", refusal_names[i],
		    NULL);
		prom_sample_u64(b, "mcp_supervisor_oauth_refused_total",
		    labels, m_refusals[i]);
	}
	prom_header(b, "mcp_supervisor_oauth_verified_total", "counter",
	    "OAuth access tokens verified or introspected and granted.");
	prom_sample_u64(b, "mcp_supervisor_oauth_verified_total", "",
	    m_granted);
	prom_header(b, "mcp_supervisor_oauth_cache_hits_total", "counter",
	    "Requests whose token's verdict was cached.");
	prom_sample_u64(b, "mcp_supervisor_oauth_cache_hits_total", "",
	    m_hits);
	prom_header(b, "mcp_supervisor_oauth_cache_misses_total", "counter",
	    "Requests whose token had to be verified.");
	prom_sample_u64(b, "mcp_supervisor_oauth_cache_misses_total", "",
	    m_misses);
	prom_header(b, "mcp_supervisor_oauth_cache_entries", "gauge",
	    "Verdicts cached.");
	prom_sample_u64(b, "mcp_supervisor_oauth_cache_entries", "",
	    ncache);
	prom_header(b, "mcp_supervisor_oauth_waits_total", "counter",
	    "Requests that waited for an issuer (fresh keys, "
	    "introspection).");
	prom_sample_u64(b, "mcp_supervisor_oauth_waits_total", "",
	    oauth_waits_total());
	prom_header(b, "mcp_supervisor_oauth_introspections_shared_total",
	    "counter", "Requests that waited for an introspection another "
	    "request with the same token had asked for.");
	prom_sample_u64(b, "mcp_supervisor_oauth_introspections_shared_total",
	    "", oauth_waits_shared());
}

json_t *
oauth_status_json(void)
{
	if (oc == NULL)
		return (NULL);
	return (json_pack("{s:s, s:I, s:I, s:I, s:I, s:I}", "resource",
	    oc->resource, "cached", (json_int_t)ncache, "waiting",
	    (json_int_t)oauth_waiting(), "granted", (json_int_t)m_granted,
	    "hits", (json_int_t)m_hits, "misses", (json_int_t)m_misses));
}
