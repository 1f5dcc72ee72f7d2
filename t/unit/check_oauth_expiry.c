/* SPDX-License-Identifier: ISC */
/*
 * A connection an OAuth access token opened lasts no longer than the
 * token (supervisor/mcp_ws.c, stream.c, http_request.c): a WebSocket is
 * closed with 1008 "token expired", the standalone stream, a legacy SSE
 * stream and a subscriptions/listen end their response, at the token's
 * exp plus the leeway (the default, 60 s) and not before; the standalone
 * stream is then resumed with a fresh token.  A static token has no
 * expiry.  Time is the harness's: sup_advance fires what is due.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>
#include <openssl/evp.h>

#include "frame.h"
#include "jose.h"
#include "supervisor.h"
#include "xmalloc.h"

#include "jose_sign.h"
#include "sup_check.h"

#define ISS		"https://idp.example.com/realms/x"
#define RES		"https://mcp.example.com"
#define TOKEN_STATIC	"token-any-0123456789ab"
#define LIFE		10	/* seconds a test's token has */
#define LEEWAY		60	/* the default leeway */

static const char conf_expiry[] = SUP_BASE
    "auth_tokens = [ \"" TOKEN_STATIC "\" ];\n"
    "oauth = { resource = \"" RES "/\";\n"
    "  issuers = ( { issuer = \"" ISS "\"; } ); };\n"
    "servers = ( { name = \"a\"; transport = \"stdio\";\n"
    "    command = [ \"true\" ]; } );\n";

/* The same, its leeway changed by a reload. */
#define CONF_LEEWAY(n) SUP_BASE \
    "auth_tokens = [ \"" TOKEN_STATIC "\" ];\n" \
    "oauth = { resource = \"" RES "/\"; leeway = " #n ";\n" \
    "  issuers = ( { issuer = \"" ISS "\"; } ); };\n" \
    "servers = ( { name = \"a\"; transport = \"stdio\";\n" \
    "    command = [ \"true\" ]; } );\n"

static EVP_PKEY	*key;

static void
setup(void)
{
	struct jose_jwks	*set;
	char			*j, *text, why[JOSE_WHY_MAX];

	key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	sup_catalog("a", "{\"tools\":[{\"name\":\"x\",\"inputSchema\":"
	    "{\"type\":\"object\"}}]}");
	sup_start(conf_expiry);
	/* The issuer's keys, as a KEYS frame gives them. */
	j = jwk(key, "k1", "");
	xasprintf(&text, "{\"keys\":[%s]}", j);
	set = jose_jwks_parse(text, strlen(text), why);
	ck_assert_msg(set != NULL, "%s", why);
	idp_set_jwks(idp_find(ISS), set);
	free(text);
	free(j);
}

static void
teardown(void)
{
	sup_stop();
	EVP_PKEY_free(key);
	key = NULL;
}

/* An access token of alice's that expires in some seconds (caller frees). */
static char *
token(long life)
{
	char	*c, *t;

	xasprintf(&c, "{\"iss\":\"" ISS "\",\"sub\":\"alice\",\"aud\":\"" RES
	    "/mcp\",\"exp\":%lld,\"iat\":%lld,\"scope\":\"mcp\"}",
	    (long long)time(NULL) + life, (long long)time(NULL) - 10);
	t = sign(key, "ES256", "{\"alg\":\"ES256\",\"typ\":\"at+jwt\","
	    "\"kid\":\"k1\"}", c);
	free(c);
	return (t);
}

/* How many connections were ended for an expired token (the metric). */
static unsigned long long
expired_count(void)
{
	static const char	 name[] =
	    "mcp_supervisor_oauth_refused_total{reason=\"expired\"} ";
	struct evbuffer		*b = evbuffer_new();
	const char		*p;
	unsigned long long	 n;

	oauth_metrics(b);
	evbuffer_add(b, "", 1);
	p = strstr((const char *)evbuffer_pullup(b, -1), name);
	ck_assert_ptr_nonnull(p);
	n = strtoull(p + sizeof name - 1, NULL, 10);
	evbuffer_free(b);
	return (n);
}

/*
 * Read the frames the gateway sent (unmasked): pings are skipped, a close
 * frame's code is returned with its reason in why; 0 if none came.
 */
static int
ws_close_code(struct sup_conn *c, char *why, size_t whylen)
{
	const unsigned char	*p;
	size_t			 n, len, hdr;
	int			 code = 0, op;

	why[0] = '\0';
	while ((n = evbuffer_get_length(c->in)) >= 2) {
		p = evbuffer_pullup(c->in, -1);
		op = p[0] & 0x0f;
		len = p[1] & 0x7f;
		hdr = 2;
		if (len == 126) {
			ck_assert_uint_ge(n, 4);
			len = (size_t)p[2] << 8 | p[3];
			hdr = 4;
		}
		ck_assert_msg(len < 127 * 1024 && n >= hdr + len,
		    "a partial or huge frame");
		if (op == 0x8) {
			ck_assert_uint_ge(len, 2);
			code = p[hdr] << 8 | p[hdr + 1];
			snprintf(why, whylen, "%.*s", (int)(len - 2),
			    (const char *)p + hdr + 2);
		}
		evbuffer_drain(c->in, hdr + len);
	}
	return (code);
}

/* A WebSocket is closed with 1008 when its token expires, not before. */
START_TEST(test_ws_expires)
{
	struct sup_conn	*c;
	char		*t = token(LIFE), why[128];

	c = sup_ws_open(t);
	ck_assert_uint_eq(session_count(), 1);
	sup_advance(LIFE + LEEWAY - 2);
	ck_assert_int_eq(ws_close_code(c, why, sizeof why), 0);
	ck_assert(!c->eof);
	ck_assert_uint_eq(session_count(), 1);
	ck_assert_uint_eq(expired_count(), 0);
	sup_advance(LIFE + LEEWAY);
	ck_assert_int_eq(ws_close_code(c, why, sizeof why), 1008);
	ck_assert_str_eq(why, "token expired");
	ck_assert(c->eof);
	ck_assert_uint_eq(session_count(), 0);
	ck_assert_uint_eq(expired_count(), 1);
	free(t);
}
END_TEST

/* A WebSocket of a static token has no end. */
START_TEST(test_ws_static)
{
	struct sup_conn	*c;
	char		 why[128];

	c = sup_ws_open(TOKEN_STATIC);
	sup_advance(10 * (LIFE + LEEWAY));
	ck_assert_int_eq(ws_close_code(c, why, sizeof why), 0);
	ck_assert(!c->eof);
	ck_assert_uint_eq(session_count(), 1);
	ck_assert_uint_eq(expired_count(), 0);
}
END_TEST

/* A log message for every session. */
static void
log_all(int n)
{
	sup_send(sup_worker("a"), MSG_NOTIFY, 0, 0, 0, "{\"jsonrpc\":\"2.0\","
	    "\"method\":\"notifications/message\",\"params\":{\"level\":"
	    "\"info\",\"data\":%d}}", n);
}

/*
 * The standalone stream ends (its body finished) when its token expires;
 * the session stays, and the stream is resumed with a fresh token of the
 * same subject, nothing lost.
 */
START_TEST(test_get_expires)
{
	struct sup_client	*cl;
	struct sup_resp		*g;
	char			*t = token(LIFE), *fresh;

	cl = sup_session(t, NULL);
	g = sup_get(cl, NULL);
	ck_assert_int_eq(g->status, 200);
	log_all(1);
	ck_assert_uint_eq(g->nevents, 2);
	ck_assert_str_eq(g->events[1].id, "0-1");
	sup_advance(LIFE + LEEWAY - 2);
	ck_assert(!g->done);
	sup_advance(LIFE + LEEWAY);
	ck_assert(g->done);
	ck_assert_uint_eq(session_count(), 1);
	ck_assert_uint_eq(expired_count(), 1);
	/* Kept for the client, which comes back with a fresh token. */
	log_all(2);
	fresh = token(300);
	free(cl->token);
	cl->token = xstrdup(fresh);
	g = sup_get(cl, "0-1");
	ck_assert_int_eq(g->status, 200);
	ck_assert_uint_eq(g->nevents, 1);
	ck_assert_str_eq(g->events[0].id, "0-2");
	ck_assert_jint(sup_event(g, 0), "params.data", 2);
	/* Its own expiry, not the first token's. */
	sup_advance(LIFE + LEEWAY);
	ck_assert(!g->done);
	free(fresh);
	free(t);
}
END_TEST

/* A standalone stream of a static token has no end. */
START_TEST(test_get_static)
{
	struct sup_client	*cl = sup_session(TOKEN_STATIC, NULL);
	struct sup_resp		*g;

	g = sup_get(cl, NULL);
	ck_assert_int_eq(g->status, 200);
	sup_advance(10 * (LIFE + LEEWAY));
	ck_assert(!g->done);
	ck_assert_uint_eq(expired_count(), 0);
}
END_TEST

/* A legacy SSE stream ends with its token, and its session with it. */
START_TEST(test_legacy_expires)
{
	struct sup_resp	*r;
	char		*t = token(LIFE), h[4096];

	snprintf(h, sizeof h, "Authorization: Bearer %s\r\n"
	    "Accept: text/event-stream\r\n", t);
	r = sup_http("GET", "/sse", h, NULL);
	ck_assert_int_eq(r->status, 200);
	ck_assert_uint_eq(session_count(), 1);
	sup_advance(LIFE + LEEWAY - 2);
	ck_assert(!r->done);
	ck_assert_uint_eq(session_count(), 1);
	sup_advance(LIFE + LEEWAY);
	ck_assert(r->done);
	ck_assert_uint_eq(session_count(), 0);
	ck_assert_uint_eq(expired_count(), 1);
	free(t);
}
END_TEST

/* A 2026-07-28 subscriptions/listen ends with its token. */
START_TEST(test_listen_expires)
{
	struct sup_resp	*r;
	char		*t = token(LIFE);

	r = sup_modern("/mcp", t, "subscriptions/listen", NULL,
	    "\"notifications\":{\"toolsListChanged\":true}", NULL, NULL);
	ck_assert_int_eq(r->status, 200);
	ck_assert_ptr_nonnull(sup_find(r,
	    "notifications/subscriptions/acknowledged"));
	sup_advance(LIFE + LEEWAY - 2);
	ck_assert(!r->done);
	sup_advance(LIFE + LEEWAY);
	ck_assert(r->done);
	ck_assert_uint_eq(expired_count(), 1);
	free(t);
}
END_TEST

/* Reload with a leeway: it must be taken (dies if it was not). */
static void
reload_ok(const char *text)
{
	json_t	*r = sup_reload(text);

	ck_assert_msg(json_is_true(json_object_get(r, "ok")), "reload refused");
	json_decref(r);
}

/*
 * A reload that shortens the leeway ends what a token opened at the new
 * expiry, not the old: the standalone stream and a WebSocket, while a
 * static token's stream still has no end.
 */
START_TEST(test_leeway_shorter)
{
	struct sup_client	*cl;
	struct sup_resp		*g, *gs;
	struct sup_conn		*w;
	char			*t = token(LIFE), why[128];

	cl = sup_session(t, NULL);
	g = sup_get(cl, NULL);
	ck_assert_int_eq(g->status, 200);
	gs = sup_get(sup_session(TOKEN_STATIC, NULL), NULL);
	ck_assert_int_eq(gs->status, 200);
	w = sup_ws_open(t);
	reload_ok(CONF_LEEWAY(0));
	sup_advance(LIFE - 2);
	ck_assert(!g->done);
	ck_assert(!w->eof);
	sup_advance(LIFE + 1);
	ck_assert(g->done);
	ck_assert_int_eq(ws_close_code(w, why, sizeof why), 1008);
	ck_assert(w->eof);
	ck_assert(!gs->done);
	ck_assert_uint_eq(expired_count(), 2);
	/* Taken back: no more ends than there were connections. */
	reload_ok(conf_expiry);
	sup_advance(LIFE + LEEWAY + 1);
	ck_assert(!gs->done);
	ck_assert_uint_eq(expired_count(), 2);
	free(t);
}
END_TEST

/* A reload that lengthens the leeway keeps them open until the new end. */
START_TEST(test_leeway_longer)
{
	struct sup_resp	*g;
	struct sup_conn	*w;
	char		*t = token(LIFE), why[128];

	g = sup_get(sup_session(t, NULL), NULL);
	ck_assert_int_eq(g->status, 200);
	w = sup_ws_open(t);
	reload_ok(CONF_LEEWAY(300));
	sup_advance(LIFE + 300 - 2);
	ck_assert(!g->done);
	ck_assert_int_eq(ws_close_code(w, why, sizeof why), 0);
	ck_assert(!w->eof);
	ck_assert_uint_eq(expired_count(), 0);
	sup_advance(LIFE + 300 + 1);
	ck_assert(g->done);
	ck_assert_int_eq(ws_close_code(w, why, sizeof why), 1008);
	ck_assert_uint_eq(expired_count(), 2);
	free(t);
}
END_TEST

/*
 * A WebSocket whose client stopped reading when its token expired: the
 * close frame waits behind what the socket does not take, and the session
 * ends then, not once the connection goes (meanwhile a sweep, a reload or
 * a shutdown freed it, and the connection's end freed it again).
 */
START_TEST(test_ws_expires_stalled)
{
	struct sup_conn	*c;
	char		*t = token(LIFE);
	unsigned char	 ping[6 + 125];
	size_t		 off;
	ssize_t		 n;
	int		 fd, i;

	/* No leeway: the token expires before the connection's write
	 * deadline (60 s) would end it. */
	reload_ok(CONF_LEEWAY(0));
	c = sup_ws_open(t);
	fd = c->fd;
	c->fd = -1;	/* the harness reads it no more */
	ck_assert_int_eq(fcntl(fd, F_SETFL, O_NONBLOCK), 0);
	/* Masked pings (a zero key), whose pongs fill the socket. */
	ping[0] = 0x89;
	ping[1] = 0x80 | 125;
	memset(ping + 2, 0, 4);
	memset(ping + 6, 'p', 125);
	/* Until the gateway stops reading (1 MiB of pongs unwritten). */
	for (i = 0, off = 0; i < 100; ) {
		if ((n = write(fd, ping + off, sizeof ping - off)) < 0) {
			ck_assert_int_eq(errno, EAGAIN);
			sup_turn();
			i++;
			continue;
		}
		off = (off + (size_t)n) % sizeof ping;
		i = 0;
	}
	sup_run();
	ck_assert_uint_eq(session_count(), 1);
	sup_advance(LIFE + 1);
	ck_assert_uint_eq(expired_count(), 1);
	ck_assert_uint_eq(session_count(), 0);
	/* The connection goes with the gateway, after its session. */
	c->fd = fd;
	free(t);
}
END_TEST

static Suite *
expiry_suite(void)
{
	Suite	*s = suite_create("oauth_expiry");
	TCase	*tc = tcase_create("expiry");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_ws_expires);
	tcase_add_test(tc, test_ws_static);
	tcase_add_test(tc, test_ws_expires_stalled);
	tcase_add_test(tc, test_get_expires);
	tcase_add_test(tc, test_get_static);
	tcase_add_test(tc, test_legacy_expires);
	tcase_add_test(tc, test_listen_expires);
	tcase_add_test(tc, test_leeway_shorter);
	tcase_add_test(tc, test_leeway_longer);
	suite_add_tcase(s, tc);
	return (s);
}

int
main(void)
{
	return (sup_check_main(expiry_suite()));
}
