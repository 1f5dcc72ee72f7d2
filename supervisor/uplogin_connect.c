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

/* What every page of ours says to the browser besides its body. */
#define CONNECT_HEADERS \
	"Cache-Control: no-store\r\n" \
	"Referrer-Policy: no-referrer\r\n" \
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
	char		 text[1024], headers[1024];

	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	evbuffer_add_printf(b, "<!DOCTYPE html>\n<html><head><meta charset="
	    "\"utf-8\"><title>mcp-supervisor login</title></head><body>\n"
	    "<p>");
	html_add(b, text);
	evbuffer_add_printf(b, "</p>\n%s</body></html>\n", form != NULL ?
	    form : "");
	snprintf(headers, sizeof headers, "%s%s", CONNECT_HEADERS,
	    extra != NULL ? extra : "");
	http_reply_buffer(c, status, "text/html; charset=utf-8", headers, b);
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

int
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

/* The cookie's name for a login: its own, so that two at once in one
 * browser do not overwrite each other. */
static void
cookie_name(const struct user_login *l, char *buf, size_t len)
{
	snprintf(buf, len, CONNECT_COOKIE "_%.8s", l->state);
}

int
connect_same_browser(const struct http_request *req,
    const struct user_login *l)
{
	const struct http_header	*h;
	const char			*p, *end, *semi;
	char				 name[64];
	size_t				 n, vlen = strlen(l->cookie);

	if (vlen == 0 || (h = http_header(&req->head, "Cookie")) == NULL)
		return (0);
	cookie_name(l, name, sizeof name);
	n = strlen(name);
	for (p = h->value, end = h->value + h->valuelen; p < end;
	    p = semi + 1) {
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if ((semi = memchr(p, ';', (size_t)(end - p))) == NULL)
			semi = end;
		if ((size_t)(semi - p) == n + 1 + vlen &&
		    memcmp(p, name, n) == 0 && p[n] == '=' &&
		    CRYPTO_memcmp(p + n + 1, l->cookie, vlen) == 0)
			return (1);
	}
	return (0);
}

/* The user is who the login is for: a cookie, and on to the server. */
static void
connect_proved(struct http_conn *c, struct upstream *up,
    struct user_login *l)
{
	unsigned char	 raw[32];
	char		 name[64], path[512], uri[512], *extra;

	fill_random(raw, sizeof raw);
	b64url_encode(raw, sizeof raw, l->cookie);
	OPENSSL_cleanse(raw, sizeof raw);
	cookie_name(l, name, sizeof name);
	uplogin_redirect_uri(uri, sizeof uri);
	log_info("upstream %s: login of %s: the user opened the link and "
	    "proved to be them; on to the authorization server", up->sc->name,
	    l->identity);
	xasprintf(&extra, "Location: %s\r\nSet-Cookie: %s=%s; Path=%s; "
	    "Max-Age=%d; HttpOnly; SameSite=Lax%s\r\n", l->url, name,
	    l->cookie, uplogin_callback_path(path, sizeof path),
	    CONNECT_COOKIE_AGE, strncasecmp(uri, "https:", 6) == 0 ?
	    "; Secure" : "");
	connect_page(c, 303, extra, NULL, "On to the authorization server "
	    "of upstream %s.", up->sc->name);
	explicit_bzero(extra, strlen(extra));
	free(extra);
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
		users_login_done(up, id);
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
	connect_proved(c, up, l);
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
		if (!form_field(form, len, "login", login, sizeof login)) {
			explicit_bzero(form, len);
			return (0);
		}
		connect_check_token(c, req, form, len, login);
		return (1);
	}
	if (strcmp(req->method, "GET") != 0 ||
	    !query_id(req->query, "login", login, sizeof login))
		return (0);
	if ((l = users_login_by_connect(login, &up)) == NULL) {
		connect_page(c, 404, NULL, NULL, "No login waits for this link: "
		    "it expired, was used, or another one was started. Call "
		    "the tool again for a new link.");
		return (1);
	}
	if (strncmp(l->identity, "oauth:", 6) == 0)
		connect_proved(c, up, l);	/* XXX step 2 */
	else
		connect_ask_token(c, up, l);
	return (1);
}
