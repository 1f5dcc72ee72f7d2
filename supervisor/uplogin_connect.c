/* SPDX-License-Identifier: ISC */
/*
 * The link a per-user login shows its user (MCP 2025-11-25, client/
 * elicitation, "Phishing": the server MUST make sure that whoever opens
 * a URL-mode elicitation's link is the user it was made for).  The
 * authorization URL itself is never shown: a user who passed it to
 * someone else would get that person's tokens at the upstream as their
 * own.  The worker shows the gateway's redirect URI with ?login=<id>
 * instead, and that page asks whoever opens it to prove to be the
 * principal the login is for:
 *
 * - a named client's or a static token's principal ("client:", "token:")
 *   by the bearer token its MCP client uses with the gateway, posted in a
 *   form of this page (never in a URL);
 * - an OAuth principal ("oauth:") by logging in at its issuer, the
 *   gateway's authorization server (connect_oauth.c).
 *
 * The browser that proved it gets a cookie, random and for this login
 * only, and is sent on to the authorization URL; the redirect back to
 * the gateway is taken only with that cookie (connect_same_browser).  A
 * wrong proof is refused and logged; after CONNECT_REFUSED_MAX of them
 * the login is dropped.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "b64.h"
#include "form.h"
#include "log.h"
#include "supervisor.h"
#include "uplogin.h"
#include "xmalloc.h"

#define CONNECT_REFUSED_MAX	5	/* wrong proofs, then dropped */
#define CONNECT_FORM_MAX	8192	/* a posted form's bytes */
#define CONNECT_TOKEN_MAX	4096	/* a token's */
#define CONNECT_COOKIE		"mcps_login"
#define CONNECT_COOKIE_AGE	600	/* seconds: a login's whole life */

/*
 * What every page of ours says to the browser besides its body.  The
 * referrer stays on our origin (our URLs hold a login's link), and the
 * form's post carries our Origin (with no-referrer it would be "null").
 */
#define CONNECT_HEADERS \
	"Cache-Control: no-store\r\n" \
	"Referrer-Policy: same-origin\r\n" \
	"X-Frame-Options: DENY\r\n" \
	"Content-Security-Policy: default-src 'none'; frame-ancestors 'none'\r\n"

/* Append text with HTML's five special characters escaped. */
static void
html_add(struct evbuffer *b, const char *s)
{
	for (; *s != '\0'; s++) {
		switch (*s) {
		case '&':
			evbuffer_add(b, "&amp;", 5);
			break;
		case '<':
			evbuffer_add(b, "&lt;", 4);
			break;
		case '>':
			evbuffer_add(b, "&gt;", 4);
			break;
		case '"':
			evbuffer_add(b, "&quot;", 6);
			break;
		case '\'':
			evbuffer_add(b, "&#39;", 5);
			break;
		default:
			evbuffer_add(b, s, 1);
		}
	}
}

/* Answer with a page: a title, a paragraph (escaped), and html after. */
static void
connect_page(struct http_conn *c, int status, const char *extra,
    const char *form, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static void
connect_page(struct http_conn *c, int status, const char *extra,
    const char *form, const char *fmt, ...)
{
	struct evbuffer	*b = evbuffer_new();
	va_list		 ap;
	char		 text[1024], *headers;

	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	evbuffer_add_printf(b, "<!DOCTYPE html>\n<html><head><meta charset="
	    "\"utf-8\"><title>mcp-supervisor login</title></head><body>\n"
	    "<p>");
	html_add(b, text);
	evbuffer_add_printf(b, "</p>\n%s</body></html>\n", form != NULL ?
	    form : "");
	xasprintf(&headers, "%s%s", CONNECT_HEADERS, extra != NULL ? extra :
	    "");
	http_reply_buffer(c, status, "text/html; charset=utf-8", headers, b);
	explicit_bzero(headers, strlen(headers));
	free(headers);
	evbuffer_free(b);
}

/* A query parameter (base64url ids only: nothing to decode). */
static int
query_id(const char *q, const char *name, char *buf, size_t len)
{
	return (form_field(q, strlen(q), name, buf, len));
}

/* The origin of our redirect URI, default port left out, as a browser
 * sends it. */
static void
own_origin(char *buf, size_t len)
{
	char	uri[512], *p, *slash;
	size_t	n;

	uplogin_redirect_uri(uri, sizeof uri);
	buf[0] = '\0';
	if ((p = strstr(uri, "://")) == NULL)
		return;
	if ((slash = strchr(p + 3, '/')) != NULL)
		*slash = '\0';
	n = strlen(uri);
	if (strncasecmp(uri, "https://", 8) == 0 && n > 4 &&
	    strcmp(uri + n - 4, ":443") == 0)
		uri[n - 4] = '\0';
	else if (strncasecmp(uri, "http://", 7) == 0 && n > 3 &&
	    strcmp(uri + n - 3, ":80") == 0)
		uri[n - 3] = '\0';
	snprintf(buf, len, "%s", uri);
}

/* Is the request's Origin the redirect URI's? */
static int
connect_own_origin(const struct http_request *req)
{
	const struct http_header	*h;
	char				 mine[512];

	if ((h = http_header(&req->head, "Origin")) == NULL)
		return (0);
	own_origin(mine, sizeof mine);
	return (mine[0] != '\0' && strlen(mine) == h->valuelen &&
	    strncasecmp(mine, h->value, h->valuelen) == 0);
}

int
connect_form_post(const struct http_request *req)
{
	char	path[512];

	return (strcmp(req->method, "POST") == 0 && strcmp(req->path,
	    uplogin_callback_path(path, sizeof path)) == 0 &&
	    connect_own_origin(req));
}

/* Is the redirect URI https? */
static int
redirect_https(void)
{
	char	uri[512];

	uplogin_redirect_uri(uri, sizeof uri);
	return (strncasecmp(uri, "https:", 6) == 0);
}

/*
 * The cookie's name for a login: its own, so that two at once in one
 * browser do not overwrite each other.  Over https a __Host- cookie,
 * which no other host or subdomain can set in the user's browser; over
 * plain http (loopback) any local web server could.
 */
static void
cookie_name(const struct user_login *l, char *buf, size_t len)
{
	snprintf(buf, len, "%s" CONNECT_COOKIE "_%.8s", redirect_https() ?
	    "__Host-" : "", l->state);
}

/* Does the request carry the login's cookie? */
static int
cookie_matches(const struct http_request *req, const struct user_login *l)
{
	const struct http_header	*h;
	const char			*p, *end, *semi;
	char				 name[64];
	size_t				 n, vlen = strlen(l->cookie);

	if (vlen == 0 || (h = http_header(&req->head, "Cookie")) == NULL)
		return (0);
	cookie_name(l, name, sizeof name);
	n = strlen(name);
	p = h->value;
	end = h->value + h->valuelen;
	while (p < end) {
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if ((semi = memchr(p, ';', (size_t)(end - p))) == NULL)
			semi = end;
		if ((size_t)(semi - p) == n + 1 + vlen &&
		    memcmp(p, name, n) == 0 && p[n] == '=' &&
		    CRYPTO_memcmp(p + n + 1, l->cookie, vlen) == 0)
			return (1);
		if (semi == end)
			break;
		p = semi + 1;
	}
	return (0);
}

int
connect_same_browser(const struct http_request *req,
    const struct user_login *l)
{
	return (l->proved && cookie_matches(req, l));
}

/* A new cookie for the login: its Set-Cookie line into buf. */
static void
cookie_new(struct user_login *l, char *buf, size_t len)
{
	unsigned char	 raw[32];
	char		 name[64], path[512];

	fill_random(raw, sizeof raw);
	b64url_encode(raw, sizeof raw, l->cookie);
	OPENSSL_cleanse(raw, sizeof raw);
	cookie_name(l, name, sizeof name);
	snprintf(buf, len, "Set-Cookie: %s=%s; Path=%s; Max-Age=%d; HttpOnly; "
	    "SameSite=Lax%s\r\n", name, l->cookie, redirect_https() ? "/" :
	    uplogin_callback_path(path, sizeof path), CONNECT_COOKIE_AGE,
	    redirect_https() ? "; Secure" : "");
}

/* The user is who the login is for: on to the server (with a cookie,
 * unless the browser has it). */
static void
connect_proved(struct http_conn *c, struct upstream *up,
    struct user_login *l, int has_cookie)
{
	char	*extra, cookie[1024];

	cookie[0] = '\0';
	if (!has_cookie)
		cookie_new(l, cookie, sizeof cookie);
	l->proved = 1;
	log_info("upstream %s: login of %s: the user opened the link and "
	    "proved to be them; on to the authorization server", up->sc->name,
	    l->identity);
	xasprintf(&extra, "Location: %s\r\n%s", l->url, cookie);
	connect_page(c, 303, extra, NULL, "On to the authorization server "
	    "of upstream %s.", up->sc->name);
	explicit_bzero(extra, strlen(extra));
	free(extra);
	explicit_bzero(cookie, sizeof cookie);
}

/* A wrong proof: refused, and after a few the login is dropped. */
static void
connect_refuse(struct http_conn *c, struct upstream *up,
    struct user_login *l, const char *why)
{
	char	*id = xstrdup(l->identity);

	log_warnx("upstream %s: login of %s: the link was opened by someone "
	    "who is not them (%s): refused", up->sc->name, id, why);
	if (++l->refused >= CONNECT_REFUSED_MAX) {
		log_warnx("upstream %s: login of %s: dropped after %d refused "
		    "proofs; its next call asks again", up->sc->name, id,
		    CONNECT_REFUSED_MAX);
		users_login_abort(up, id, "the login's link was opened by "
		    "someone else too often; call again for a new link");
	}
	connect_page(c, 403, NULL, NULL, "This login link is for %s, and you "
	    "did not prove to be them (%s). Open only a login link your own "
	    "MCP client shows you.", id, why);
	free(id);
}

/* The form that asks for the principal's bearer token. */
static void
connect_ask_token(struct http_conn *c, struct upstream *up,
    struct user_login *l)
{
	struct evbuffer	*f = evbuffer_new();
	char		*form;
	size_t		 n;

	evbuffer_add_printf(f, "<form method=\"post\" action=\"\">\n"
	    "<input type=\"hidden\" name=\"login\" value=\"");
	html_add(f, l->connect);
	evbuffer_add_printf(f, "\">\n<p><label>Bearer token: <input type="
	    "\"password\" name=\"token\" autocomplete=\"off\" required>"
	    "</label></p>\n<p><button type=\"submit\">Continue</button></p>\n"
	    "</form>\n");
	n = evbuffer_get_length(f);
	form = xmalloc(n + 1);
	evbuffer_remove(f, form, n);
	form[n] = '\0';
	evbuffer_free(f);
	connect_page(c, 200, NULL, form, "Upstream %s asks %s to log in. To "
	    "make sure that is you, give the bearer token your MCP client "
	    "uses with this gateway. If someone else sent you this link, "
	    "close this page.", up->sc->name, l->identity);
	free(form);
}

/* The form came back: is its token the login's principal's? */
static void
connect_check_token(struct http_conn *c, struct http_request *req,
    char *form, size_t len, const char *login)
{
	struct upstream		*up;
	struct user_login	*l;
	const char		*client;
	char			 token[CONNECT_TOKEN_MAX + 1], who[256];
	uint64_t		 id;
	int			 rights;

	if (!connect_own_origin(req)) {
		explicit_bzero(form, len);
		log_warnx("oauth callback: a login's form posted from another "
		    "origin, or with none: refused");
		connect_page(c, 403, NULL, NULL, "This form is taken only "
		    "from the gateway's own page.");
		return;
	}
	if ((l = users_login_by_connect(login, &up)) == NULL) {
		explicit_bzero(form, len);
		connect_page(c, 404, NULL, NULL, "No login waits for this "
		    "link: it expired, was used, or another one was started. "
		    "Call the tool again for a new link.");
		return;
	}
	if (!form_field(form, len, "token", token, sizeof token) ||
	    token[0] == '\0') {
		explicit_bzero(form, len);
		connect_refuse(c, up, l, "no token, or one too long");
		return;
	}
	explicit_bzero(form, len);
	who[0] = '\0';
	if (auth_check(token, strlen(token), &id, &client, &rights) == 0)
		users_principal(NULL, client, id, who, sizeof who);
	explicit_bzero(token, sizeof token);
	if (who[0] == '\0' || strcmp(who, l->identity) != 0) {
		connect_refuse(c, up, l, who[0] == '\0' ? "a token the gateway "
		    "does not know" : "another principal's token");
		return;
	}
	connect_proved(c, up, l, 0);
}

/* Append a value to a URL's query, percent-encoded. */
static void
query_value(struct evbuffer *b, const char *value)
{
	static const char	 hex[] = "0123456789ABCDEF";
	const unsigned char	*v;

	for (v = (const unsigned char *)value; *v != '\0'; v++) {
		if ((*v >= 'a' && *v <= 'z') || (*v >= 'A' && *v <= 'Z') ||
		    (*v >= '0' && *v <= '9') || *v == '-' || *v == '.' ||
		    *v == '_' || *v == '~')
			evbuffer_add(b, v, 1);
		else
			evbuffer_add_printf(b, "%%%c%c", hex[*v >> 4],
			    hex[*v & 15]);
	}
}

/* Append name=value to a URL's query. */
static void
query_add(struct evbuffer *b, const char *name, const char *value)
{
	evbuffer_add_printf(b, "&%s=", name);
	query_value(b, value);
}

/*
 * The issuer an OAuth principal proves itself at: the one its text names
 * ("oauth:subject@issuer"), else (a long principal is a digest) the only
 * issuer with a login client; NULL if none.
 */
static struct idp *
connect_issuer(const char *identity)
{
	const char	*at = strrchr(identity, '@');
	struct idp	*d, *only = NULL;
	size_t		 i, n = 0;

	if (at != NULL && (d = idp_find(at + 1)) != NULL)
		return (d);
	for (i = 0; (d = idp_nth(i)) != NULL; i++) {
		if (idp_conf(d)->login.client_id != NULL) {
			only = d;
			n++;
		}
	}
	return (n == 1 ? only : NULL);
}

/* Cancel a proof under way at the issuer, wipe its token. */
static void
connect_reset(struct user_login *l)
{
	struct idp	*d;

	/* While it asks, its issuer is the one of that name: a reload
	 * that drops or replaces it answers every ask first. */
	if (l->ask != 0 && l->issuer != NULL &&
	    (d = idp_find(l->issuer)) != NULL)
		idp_wait_cancel(d, l->ask);
	l->ask = 0;
	if (l->wait != 0)
		oauth_wait_cancel(l->wait);
	l->wait = 0;
	if (l->token != NULL) {
		explicit_bzero(l->token, strlen(l->token));
		free(l->token);
		l->token = NULL;
	}
	free(l->issuer);
	l->issuer = NULL;
	explicit_bzero(l->vstate, sizeof l->vstate);
	explicit_bzero(l->verifier, sizeof l->verifier);
	l->check = CHECK_NONE;
}

void
connect_forget(struct user_login *l)
{
	connect_reset(l);
}

static void	connect_verify(struct user_login *, int);

/* The token was checked again once its issuer answered. */
static void
connect_waited(void *arg)
{
	struct user_login	*l = arg;

	l->wait = 0;
	connect_verify(l, 1);
}

/*
 * Is the issuer's token for the gateway, and whose?  The same verdict as
 * a client's token gets (its signature or introspection, issuer,
 * audience, dates), and the same principal; scopes do not matter here.
 */
static void
connect_verify(struct user_login *l, int retry)
{
	struct oauth_verdict	 v;
	char			 who[256], path[512];

	oauth_check(l->token, strlen(l->token), retry, &v);
	if (v.status == OAUTH_PENDING && !retry) {
		l->wait = oauth_wait(l->token, strlen(l->token),
		    connect_waited, l);
		return;
	}
	oauth_check_path(&v, uplogin_callback_path(path, sizeof path));
	explicit_bzero(l->token, strlen(l->token));
	free(l->token);
	l->token = NULL;
	if (v.grant == NULL || (v.status != OAUTH_GRANTED &&
	    v.status != OAUTH_INSUFFICIENT)) {
		l->check = CHECK_FAILED;
		snprintf(l->why, sizeof l->why, "the issuer's token is refused: "
		    "%s", v.status == OAUTH_PENDING ? "its issuer did not "
		    "answer" : v.why);
		oauth_grant_unref(v.grant);
		return;
	}
	users_principal(v.grant, NULL, v.grant->id, who, sizeof who);
	oauth_grant_unref(v.grant);
	if (strcmp(who, l->identity) == 0)
		l->check = CHECK_PROVED;
	else {
		l->check = CHECK_REFUSED;
		snprintf(l->why, sizeof l->why, "logged in at the issuer as %s",
		    who);
	}
}

/* The issuer exchanged the code (answer), or not (why). */
static void
connect_exchanged(void *arg, json_t *answer, const char *why)
{
	struct user_login	*l = arg;
	json_t			*t;

	l->ask = 0;
	t = json_object_get(answer, "access_token");
	if (!json_is_string(t) || json_string_length(t) == 0 ||
	    strlen(json_string_value(t)) != json_string_length(t)) {
		l->check = CHECK_FAILED;
		snprintf(l->why, sizeof l->why, "%s", why != NULL ? why :
		    "the issuer's answer has no access_token");
		return;
	}
	l->token = xstrdup(json_string_value(t));
	explicit_bzero((char *)json_string_value(t), json_string_length(t));
	connect_verify(l, 0);
}

/*
 * An OAuth principal's link: send the browser to log in at the issuer as
 * the gateway's login client (PKCE, a state of its own, our resource), a
 * cookie binding this browser to the proof.
 */
static void
connect_oauth(struct http_conn *c, struct http_request *req,
    struct upstream *up, struct user_login *l)
{
	struct evbuffer	*u;
	struct idp	*d;
	const char	*authz;
	unsigned char	 raw[32], md[32];
	unsigned int	 mdlen = 0;
	char		 challenge[64], uri[512], cookie[1024], *extra;
	char		*const *scopes;
	static const char *const openid[] = { "openid", NULL };
	size_t		 i;

	/* Opened again in the browser that proved it (a second click, a
	 * restored tab): on again, the proof kept. */
	if (l->proved && cookie_matches(req, l)) {
		connect_proved(c, up, l, 1);
		return;
	}
	if ((d = connect_issuer(l->identity)) == NULL ||
	    idp_conf(d)->login.client_id == NULL) {
		log_warnx("upstream %s: login of %s: the gateway cannot make "
		    "sure who opens the link: no issuer of it has a login "
		    "client (see login in mcp-supervisord.conf(5))",
		    up->sc->name, l->identity);
		connect_page(c, 503, NULL, NULL, "The gateway cannot make sure "
		    "you are %s: its administrator must give your issuer a "
		    "login client first.", l->identity);
		return;
	}
	if ((authz = idp_authorization_endpoint(d)) == NULL) {
		connect_page(c, 503, "Retry-After: 5\r\n", NULL, "The "
		    "gateway does not know where %s logs in yet (its "
		    "metadata names no authorization_endpoint, or has not "
		    "been read). Try again in a moment.", idp_conf(d)->issuer);
		return;
	}
	connect_reset(l);
	l->proved = 0;
	l->issuer = xstrdup(idp_conf(d)->issuer);
	fill_random(raw, sizeof raw);
	b64url_encode(raw, sizeof raw, l->vstate);
	fill_random(raw, sizeof raw);
	b64url_encode(raw, sizeof raw, l->verifier);
	OPENSSL_cleanse(raw, sizeof raw);
	if (!EVP_Digest(l->verifier, strlen(l->verifier), md, &mdlen,
	    EVP_sha256(), NULL))
		fatalx("connect_oauth: EVP_Digest");
	b64url_encode(md, sizeof md, challenge);
	uplogin_redirect_uri(uri, sizeof uri);
	u = evbuffer_new();
	evbuffer_add_printf(u, "%s%cresponse_type=code", authz,
	    strchr(authz, '?') != NULL ? '&' : '?');
	query_add(u, "client_id", idp_conf(d)->login.client_id);
	query_add(u, "redirect_uri", uri);
	query_add(u, "state", l->vstate);
	query_add(u, "code_challenge", challenge);
	query_add(u, "code_challenge_method", "S256");
	query_add(u, "resource", conf->oauth->resource);
	/* What every request needs, else OpenID Connect's (some servers
	 * issue no token without a scope): no more than a client has. */
	scopes = conf->oauth->scopes != NULL ? conf->oauth->scopes :
	    (char *const *)openid;
	evbuffer_add_printf(u, "&scope=");
	for (i = 0; scopes[i] != NULL; i++) {
		evbuffer_add_printf(u, "%s", i > 0 ? "%20" : "");
		query_value(u, scopes[i]);
	}
	cookie_new(l, cookie, sizeof cookie);
	evbuffer_add(u, "", 1);
	xasprintf(&extra, "Location: %s\r\n%s",
	    (const char *)evbuffer_pullup(u, -1), cookie);
	evbuffer_free(u);
	log_info("upstream %s: login of %s: the link was opened; the browser "
	    "logs in at %s to prove who it is", up->sc->name, l->identity,
	    idp_conf(d)->issuer);
	connect_page(c, 303, extra, NULL, "On to %s, to make sure you are %s.",
	    idp_conf(d)->issuer, l->identity);
	explicit_bzero(extra, strlen(extra));
	free(extra);
	explicit_bzero(cookie, sizeof cookie);
}

/* The issuer sent the browser back with a code for the proof. */
static void
connect_oauth_back(struct http_conn *c, struct http_request *req,
    struct upstream *up, struct user_login *l)
{
	struct idp	*d;
	char		 code[1024], uri[512], err[64], why[320], iss[512];
	size_t		 i;

	if (!cookie_matches(req, l)) {
		connect_reset(l);
		connect_refuse(c, up, l, "the issuer's answer came to another "
		    "browser");
		return;
	}
	if (l->check == CHECK_NONE) {
		if (form_has(req->query, strlen(req->query), "iss") &&
		    (!form_field(req->query, strlen(req->query), "iss", iss,
		    sizeof iss) || l->issuer == NULL ||
		    strcmp(iss, l->issuer) != 0)) {
			/* RFC 9207: another issuer's answer (a mix-up). */
			l->check = CHECK_FAILED;
			snprintf(l->why, sizeof l->why, "the answer names "
			    "another issuer");
		} else if (form_field(req->query, strlen(req->query), "error",
		    err, sizeof err)) {
			for (i = 0; err[i] != '\0'; i++) {
				if ((unsigned char)err[i] < 0x20 ||
				    (unsigned char)err[i] > 0x7e)
					err[i] = '?';
			}
			l->check = CHECK_FAILED;
			snprintf(l->why, sizeof l->why, "the issuer answered "
			    "%s", err);
		} else if (!form_field(req->query, strlen(req->query), "code",
		    code, sizeof code) || code[0] == '\0') {
			l->check = CHECK_FAILED;
			snprintf(l->why, sizeof l->why, "the issuer's answer "
			    "has no code");
		} else if (l->issuer == NULL ||
		    (d = idp_find(l->issuer)) == NULL) {
			l->check = CHECK_FAILED;
			snprintf(l->why, sizeof l->why, "the issuer is no "
			    "longer configured");
		} else {
			uplogin_redirect_uri(uri, sizeof uri);
			l->check = CHECK_PENDING;
			l->ask = idp_exchange(d, code, l->verifier, uri,
			    connect_exchanged, l);
			explicit_bzero(l->verifier, sizeof l->verifier);
			if (l->ask == 0) {
				l->check = CHECK_FAILED;
				snprintf(l->why, sizeof l->why, "the issuer "
				    "has no login client any more");
			}
		}
		explicit_bzero(code, sizeof code);
	}
	switch (l->check) {
	case CHECK_PENDING:
		connect_page(c, 200, "Refresh: 1\r\n", NULL, "Making sure you "
		    "are %s...", l->identity);
		break;
	case CHECK_PROVED:
		connect_proved(c, up, l, 1);
		break;
	case CHECK_REFUSED:
		snprintf(why, sizeof why, "%s", l->why);
		connect_reset(l);
		connect_refuse(c, up, l, why);
		break;
	default:
		log_warnx("upstream %s: login of %s: the proof at the issuer "
		    "failed: %s", up->sc->name, l->identity, l->why);
		connect_page(c, 502, NULL, NULL, "The gateway could not make "
		    "sure you are %s (%s). Open the login link again.",
		    l->identity, l->why);
		connect_reset(l);
		break;
	}
}

int
connect_serve(struct http_conn *c, struct http_request *req)
{
	struct upstream		*up;
	struct user_login	*l;
	char			 login[64], form[CONNECT_FORM_MAX + 1];
	size_t			 len = evbuffer_get_length(req->body);

	/* A form with a login field is a link's; any other POST is not. */
	if (strcmp(req->method, "POST") == 0) {
		if (len > CONNECT_FORM_MAX)
			return (0);
		evbuffer_copyout(req->body, form, len);
		form[len] = '\0';
		/* The request's copy of a token goes now. */
		if (len > 0)
			explicit_bzero(evbuffer_pullup(req->body, -1), len);
		if (!form_field(form, len, "login", login, sizeof login)) {
			explicit_bzero(form, len);
			return (0);
		}
		connect_check_token(c, req, form, len, login);
		return (1);
	}
	if (strcmp(req->method, "GET") != 0)
		return (0);
	/* The issuer sends back an OAuth principal's proof. */
	if (query_id(req->query, "state", login, sizeof login) &&
	    (l = users_login_by_vstate(login, &up)) != NULL) {
		connect_oauth_back(c, req, up, l);
		return (1);
	}
	if (!query_id(req->query, "login", login, sizeof login))
		return (0);
	if ((l = users_login_by_connect(login, &up)) == NULL) {
		connect_page(c, 404, NULL, NULL, "No login waits for this link: "
		    "it expired, was used, or another one was started. Call "
		    "the tool again for a new link.");
		return (1);
	}
	if (strncmp(l->identity, "oauth:", 6) == 0)
		connect_oauth(c, req, up, l);
	else
		connect_ask_token(c, up, l);
	return (1);
}
