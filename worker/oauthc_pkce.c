/* SPDX-License-Identifier: ISC */
/*
 * The authorization code flow's pieces (oauthc.h): random values, PKCE
 * S256 (RFC 7636), the authorization request's URL, and the response
 * checked (state, RFC 9207's iss) before its code goes anywhere.
 * Randomness and SHA-256 are OpenSSL's.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include "log.h"
#include "oauthc.h"
#include "xmalloc.h"

static const char b64url[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

void
oauthc_b64url(const unsigned char *in, size_t len, char *out)
{
	size_t		i, n = 0;
	unsigned int	v;

	for (i = 0; i + 2 < len; i += 3) {
		v = in[i] << 16 | in[i + 1] << 8 | in[i + 2];
		out[n++] = b64url[v >> 18 & 63];
		out[n++] = b64url[v >> 12 & 63];
		out[n++] = b64url[v >> 6 & 63];
		out[n++] = b64url[v & 63];
	}
	if (len - i == 1) {
		v = in[i] << 16;
		out[n++] = b64url[v >> 18 & 63];
		out[n++] = b64url[v >> 12 & 63];
	} else if (len - i == 2) {
		v = in[i] << 16 | in[i + 1] << 8;
		out[n++] = b64url[v >> 18 & 63];
		out[n++] = b64url[v >> 12 & 63];
		out[n++] = b64url[v >> 6 & 63];
	}
	out[n] = '\0';
}

void
oauthc_random(char out[OAUTHC_B64_32])
{
	unsigned char	buf[32];

	if (RAND_bytes(buf, sizeof buf) != 1)
		fatalx("RAND_bytes failed");
	oauthc_b64url(buf, sizeof buf, out);
	OPENSSL_cleanse(buf, sizeof buf);
}

int
oauthc_pkce_challenge(const char *verifier, char challenge[OAUTHC_B64_32])
{
	unsigned char	md[SHA256_DIGEST_LENGTH];
	size_t		i, n = strlen(verifier);

	/* RFC 7636 section 4.1: 43 to 128 unreserved characters. */
	if (n < 43 || n > 128)
		return (-1);
	for (i = 0; i < n; i++)
		if (strchr(b64url, verifier[i]) == NULL &&
		    verifier[i] != '.' && verifier[i] != '~')
			return (-1);
	SHA256((const unsigned char *)verifier, n, md);
	oauthc_b64url(md, sizeof md, challenge);
	return (0);
}

/* Append name=value to u's query, encoded. */
static int
query_add(CURLU *u, const char *name, const char *value)
{
	char	*q;
	int	 rc;

	xasprintf(&q, "%s=%s", name, value);
	rc = curl_url_set(u, CURLUPART_QUERY, q, CURLU_APPENDQUERY |
	    CURLU_URLENCODE) == CURLUE_OK ? 0 : -1;
	free(q);
	return (rc);
}

char *
oauthc_authz_url(const char *endpoint, const char *client_id,
    const char *redirect_uri, const char *scope, const char *state,
    const char *challenge, const char *resource)
{
	CURLU	*u;
	char	*url = NULL, *out = NULL;

	if ((u = curl_url()) == NULL)
		fatalx("curl_url");
	if (curl_url_set(u, CURLUPART_URL, endpoint, 0) == CURLUE_OK &&
	    query_add(u, "response_type", "code") == 0 &&
	    query_add(u, "client_id", client_id) == 0 &&
	    query_add(u, "redirect_uri", redirect_uri) == 0 &&
	    (scope == NULL || scope[0] == '\0' ||
	    query_add(u, "scope", scope) == 0) &&
	    query_add(u, "state", state) == 0 &&
	    query_add(u, "code_challenge", challenge) == 0 &&
	    query_add(u, "code_challenge_method", "S256") == 0 &&
	    query_add(u, "resource", resource) == 0 &&
	    curl_url_get(u, CURLUPART_URL, &url, 0) == CURLUE_OK)
		out = xstrdup(url);
	curl_free(url);
	curl_url_cleanup(u);
	return (out);
}

/* Compare two strings in time that depends only on their lengths. */
static int
const_equal(const char *a, const char *b)
{
	size_t	la = strlen(a), lb = strlen(b);

	if (la != lb)
		return (0);
	return (CRYPTO_memcmp(a, b, la) == 0);
}

/* Decode %XX and '+' of a query value in place; -1 if malformed or a NUL. */
static int
unescape(char *s)
{
	char	*w = s, hex[3] = { 0 };
	long	 v;

	for (; *s != '\0'; s++) {
		if (*s == '+')
			*w++ = ' ';
		else if (*s != '%')
			*w++ = *s;
		else {
			if (s[1] == '\0' || s[2] == '\0')
				return (-1);
			hex[0] = s[1];
			hex[1] = s[2];
			if (strspn(hex, "0123456789abcdefABCDEF") != 2 ||
			    (v = strtol(hex, NULL, 16)) == 0)
				return (-1);
			*w++ = (char)v;
			s += 2;
		}
	}
	*w = '\0';
	return (0);
}

/* The parameters of an authorization response we read. */
struct authz_params {
	char	*code, *state, *iss, *error;
};

/* Split a query into the parameters we read; -1 if one repeats or is malformed. */
static int
query_params(char *q, struct authz_params *p)
{
	char	*kv, *v, **slot;

	while ((kv = strsep(&q, "&")) != NULL) {
		if ((v = strchr(kv, '=')) == NULL)
			continue;
		*v++ = '\0';
		if (strcmp(kv, "code") == 0)
			slot = &p->code;
		else if (strcmp(kv, "state") == 0)
			slot = &p->state;
		else if (strcmp(kv, "iss") == 0)
			slot = &p->iss;
		else if (strcmp(kv, "error") == 0)
			slot = &p->error;
		else
			continue;
		if (*slot != NULL || unescape(v) == -1)
			return (-1);
		*slot = v;
	}
	return (0);
}

/* Does s look like a query or URL rather than a bare code? */
static int
has_params(const char *s)
{
	return (strchr(s, '?') != NULL || strchr(s, '=') != NULL);
}

int
oauthc_authz_response(const char *input, const char *state,
    const char *issuer, int iss_required, char **code, char *why, size_t len)
{
	struct authz_params	 p;
	char			*buf, *q, *e;
	size_t			 i;
	int			 rc = -1;

	*code = NULL;
	memset(&p, 0, sizeof p);
	if (strlen(input) > OAUTHC_PARAM_MAX * 4) {
		snprintf(why, len, "the authorization response is too long");
		return (-1);
	}
	for (i = 0; input[i] != '\0'; i++)
		if ((unsigned char)input[i] <= 0x20 ||
		    (unsigned char)input[i] >= 0x7f) {
			snprintf(why, len, "the authorization response holds "
			    "a space or a control character");
			return (-1);
		}
	if (i == 0) {
		snprintf(why, len, "the authorization response is empty");
		return (-1);
	}
	if (!has_params(input)) {
		if (iss_required) {
			snprintf(why, len, "the server identifies itself in "
			    "its response (RFC 9207): give the whole redirect "
			    "URL, not the code alone");
			return (-1);
		}
		*code = xstrdup(input);
		return (0);
	}
	buf = xstrdup(input);
	q = (q = strchr(buf, '?')) != NULL ? q + 1 : buf;
	if ((e = strchr(q, '#')) != NULL)
		*e = '\0';
	if (query_params(q, &p) == -1) {
		snprintf(why, len, "the authorization response has a "
		    "parameter twice or a malformed one");
		goto out;
	}
	if (p.state == NULL || !const_equal(p.state, state)) {
		snprintf(why, len, "the authorization response's state is "
		    "%s (not this login's)", p.state == NULL ? "missing" :
		    "wrong");
		goto out;
	}
	if (p.iss != NULL ? strcmp(p.iss, issuer) != 0 : iss_required) {
		snprintf(why, len, "the authorization response's iss is %s "
		    "(RFC 9207: a mix-up)", p.iss == NULL ? "missing" :
		    "another server's");
		goto out;
	}
	if (p.error != NULL) {
		for (i = 0; p.error[i] != '\0' && i < 64; i++)
			if (p.error[i] == '"' || p.error[i] == '\\' ||
			    (unsigned char)p.error[i] < 0x20)
				p.error[i] = '?';
		p.error[i] = '\0';
		snprintf(why, len, "the authorization server answered %s",
		    p.error);
		goto out;
	}
	if (p.code == NULL || p.code[0] == '\0') {
		snprintf(why, len, "the authorization response has no code");
		goto out;
	}
	*code = xstrdup(p.code);
	rc = 0;
out:
	OPENSSL_cleanse(buf, strlen(input));
	free(buf);
	return (rc);
}
