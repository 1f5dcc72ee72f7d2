/* SPDX-License-Identifier: ISC */
/*
 * Who may reach the MCP endpoint, checked on a request's head before its
 * body is read: Host and Origin against DNS rebinding, and the bearer
 * token (one of ours, or an issuer's OAuth access token, which may wait
 * for the issuer) with the right asked for.  A refusal is answered,
 * logged with the peer and what it sent, and counted; the token itself
 * never is.  mcp_http.c, endpoints.c and health.c ask here.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "http_parse.h"
#include "log.h"
#include "supervisor.h"

static const char *const loopback_names[] = {
	"localhost", "127.0.0.1", "[::1]", NULL
};

/*
 * When tokens are configured, a request for a right (AUTH_MCP or
 * AUTH_METRICS) must carry one as a bearer token, and the token must have
 * that right; which one is recorded in req->credential (0 without tokens),
 * so that a session serves only the credential that created it (whom it
 * names: mcp_http_client).  0 when admitted;
 * 401 without a token that matches; 403 with one that lacks the right.
 */
static int
mcp_http_check_auth(struct http_request *req, int right, int nowait,
    struct oauth_verdict *v)
{
	const struct http_header	*h;
	const char			*client;
	int				 rights;

	req->credential = 0;
	oauth_grant_unref(req->grant);
	req->grant = NULL;
	memset(v, 0, sizeof *v);
	if (!auth_required(right))
		return (0);
	h = http_header(&req->head, "Authorization");
	if (h == NULL || h->valuelen < 8 || !http_value_begins(h, "Bearer ")) {
		v->reason = "no_token";
		if (oauth_enabled() && !nowait)
			oauth_no_token();
		return (401);
	}
	if (auth_check(h->value + 7, h->valuelen - 7, &req->credential,
	    &client, &rights) == 0)
		return ((rights & right) != 0 ? 0 : 403);
	if (!oauth_enabled())
		return (401);
	/* Not one of ours: an access token of an issuer's? */
	oauth_check(h->value + 7, h->valuelen - 7, nowait || req->oauth_retry,
	    v);
	oauth_check_path(v, req->path);
	switch (v->status) {
	case OAUTH_PENDING:
		return (1);
	case OAUTH_REFUSED:
		return (401);
	default:
		break;
	}
	req->grant = v->grant;
	v->grant = NULL;
	req->credential = req->grant->id;
	if (v->status == OAUTH_INSUFFICIENT)
		return (403);
	return ((req->grant->rights & right) != 0 ? 0 : 403);
}

int
mcp_http_may(struct http_request *req, int right)
{
	struct oauth_verdict	 v;
	struct oauth_grant	*grant = oauth_grant_ref(req->grant);
	uint64_t		 credential = req->credential;
	int			 r;

	r = mcp_http_check_auth(req, right, 1, &v);
	oauth_grant_unref(req->grant);
	req->grant = grant;
	req->credential = credential;
	return (r == 0);
}

/*
 * The named client a request is, or NULL: its OAuth grant's, or its
 * token's as configured now (looked up, never kept: a reload while its
 * body comes frees the old table).
 */
const char *
mcp_http_client(const struct http_request *req)
{
	const char	*client = NULL;

	if (req->grant != NULL)
		return (req->grant->client);
	if (req->credential != 0)
		(void)auth_client(req->credential, &client);
	return (client);
}

/*
 * Is a parsed authority one of a list of names?  Names are compared
 * ignoring case; an entry without a port matches any port, one with a
 * port must match host:port (raw) exactly.
 */
static int
host_in(const struct http_authority *a, const char *raw, size_t rawlen,
    char *const *names)
{
	size_t	i, nl;

	for (i = 0; names[i] != NULL; i++) {
		nl = strlen(names[i]);
		if (nl == a->hostlen &&
		    strncasecmp(names[i], a->host, nl) == 0)
			return (1);
		if (nl == rawlen && strncasecmp(names[i], raw, nl) == 0)
			return (1);
	}
	return (0);
}

/*
 * Check Host and Origin against DNS rebinding, parsing both strictly.
 * Host must name this server: one of allowed_hosts, or when that is unset
 * and the gateway listens on loopback, a loopback name.  An Origin, when
 * present, must be one of allowed_origins, or when that is unset, an
 * http(s) origin on a loopback name.  Header values are spans, never C
 * strings: every check here is bounded by their length.
 */
static int
mcp_http_check_host(struct http_request *req, int loopback,
    const char **why)
{
	const struct http_header	*host;
	struct http_authority		 a;

	host = http_header(&req->head, "Host");
	if (host == NULL || host->valuelen == 0) {
		*why = "Host header is required";
		return (400);
	}
	if (http_parse_host(host->value, host->valuelen, &a) != 0) {
		*why = "Host header is malformed";
		return (400);
	}
	if (conf->allowed_hosts != NULL) {
		if (!host_in(&a, host->value, host->valuelen,
		    conf->allowed_hosts)) {
			*why = "Host not allowed";
			return (403);
		}
	} else if (loopback && !host_in(&a, host->value,
	    host->valuelen, (char *const *)loopback_names)) {
		*why = "Host not allowed";
		return (403);
	}
	return (0);
}

static int
mcp_http_check_origin(struct http_request *req, int loopback,
    const char **why)
{
	const struct http_header	*origin;
	struct http_authority		 a;
	char				 scheme[16];
	size_t				 i, olen;
	int				 r;

	if ((r = mcp_http_check_host(req, loopback, why)) != 0)
		return (r);
	if ((origin = http_header(&req->head, "Origin")) == NULL)
		return (0);
	olen = origin->valuelen;
	r = http_parse_origin(origin->value, olen, scheme, &a);
	if (r < 0) {
		*why = "Origin not allowed (malformed)";
		return (403);
	}
	if (conf->allowed_origins != NULL) {
		for (i = 0; conf->allowed_origins[i] != NULL; i++) {
			if (strlen(conf->allowed_origins[i]) == olen &&
			    strncasecmp(conf->allowed_origins[i],
			    origin->value, olen) == 0)
				return (0);
		}
		*why = "Origin not allowed";
		return (403);
	}
	/* Default: http(s)://<loopback name>[:port]; "null" is not. */
	if (r == 0 && (strcmp(scheme, "http") == 0 ||
	    strcmp(scheme, "https") == 0) &&
	    host_in(&a, a.host, a.hostlen, (char *const *)loopback_names))
		return (0);
	*why = "Origin not allowed";
	return (403);
}

/* Append a header value to a log line: printable ASCII, at most 100. */
static void
mcp_http_quote(char *out, size_t outlen, const struct http_header *h)
{
	size_t	i, n = 0;

	for (i = 0; h != NULL && i < h->valuelen && i < 100 &&
	    n + 5 < outlen; i++) {
		if (h->value[i] >= 0x20 && h->value[i] < 0x7f &&
		    h->value[i] != '"' && h->value[i] != '\\')
			out[n++] = h->value[i];
		else
			n += (size_t)snprintf(out + n, outlen - n, "\\x%02x",
			    (unsigned char)h->value[i]);
	}
	out[n] = '\0';
}

/*
 * Log a refused Host or Origin with the peer and what it sent, in the
 * daemon's log and the access log.
 */
static void
mcp_http_log_refusal(struct http_conn *c, struct http_request *req,
    const char *why)
{
	char	host[512], origin[512], refused[1100];

	mcp_http_quote(host, sizeof host, http_header(&req->head, "Host"));
	mcp_http_quote(origin, sizeof origin, http_header(&req->head,
	    "Origin"));
	log_warnx("http %s: %s %s refused: %s (Host \"%s\", Origin \"%s\")",
	    http_conn_peer(c), req->method, req->path, why, host, origin);
	metrics_refused(strncmp(why, "Origin", 6) == 0 ? "origin" : "host");
	snprintf(refused, sizeof refused, "%s: Host %s Origin %s", why, host,
	    origin[0] != '\0' ? origin : "-");
	access_log_http(http_conn_peer(c), req->method, req->path,
	    strncmp(why, "Host header is", 14) == 0 ? 400 : 403, refused);
	http_conn_nolog(c);
}

/*
 * Log a refused bearer token with the peer: whether one was sent and its
 * length, never the token; with OAuth, why it was refused.
 */
static void
mcp_http_log_token(struct http_conn *c, struct http_request *req,
    const struct oauth_verdict *v)
{
	const struct http_header	*h;
	char				 refused[256];

	h = http_header(&req->head, "Authorization");
	if (h == NULL)
		snprintf(refused, sizeof refused, "no Authorization header");
	else if (h->valuelen < 8 || !http_value_begins(h, "Bearer "))
		snprintf(refused, sizeof refused, "Authorization is not a "
		    "bearer token");
	else if (v->reason != NULL && v->status == OAUTH_REFUSED)
		snprintf(refused, sizeof refused, "a bearer token of %zu "
		    "characters refused (%s): %s", h->valuelen - 7, v->reason,
		    v->why);
	else
		snprintf(refused, sizeof refused, "a bearer token of %zu "
		    "characters that matches none", h->valuelen - 7);
	log_warnx("http %s: %s %s refused: %s", http_conn_peer(c),
	    req->method, req->path, refused);
	metrics_refused("token");
	access_log_http(http_conn_peer(c), req->method, req->path, 401,
	    refused);
	http_conn_nolog(c);
}

/*
 * Refuse an OAuth token without the scopes every request needs (403
 * insufficient_scope, with the scopes, so that the client can step up).
 */
static void
mcp_http_insufficient(struct http_conn *c, struct http_request *req,
    const struct oauth_verdict *v)
{
	char	challenge[2048];

	log_warnx("http %s: %s %s refused: subject %s: %s", http_conn_peer(c),
	    req->method, req->path, req->grant->subject, v->why);
	metrics_refused("token");
	access_log_http(http_conn_peer(c), req->method, req->path, 403,
	    "insufficient_scope");
	http_conn_nolog(c);
	oauth_challenge(req->path, challenge, sizeof challenge,
	    "insufficient_scope", v->why, NULL);
	mcp_http_error(c, 403, JRPC_INVALID_REQUEST,
	    "Forbidden: the token lacks a scope this gateway needs",
	    challenge);
}

/* Refuse a valid token that does not admit to what it asks for. */
static void
mcp_http_forbid(struct http_conn *c, struct http_request *req, int right)
{
	const char	*client = mcp_http_client(req);
	char		 refused[128];

	if (right == AUTH_METRICS)
		snprintf(refused, sizeof refused, "%s%s may not read the "
		    "metrics", client != NULL ? "client " : "this token",
		    client != NULL ? client : "");
	else if (req->grant != NULL)
		snprintf(refused, sizeof refused, "an OAuth token that does "
		    "not admit to MCP");
	else
		snprintf(refused, sizeof refused, "a token of metrics_tokens, "
		    "which admits to /metrics only");
	log_warnx("http %s: %s %s refused: %s", http_conn_peer(c),
	    req->method, req->path, refused);
	metrics_refused("token");
	access_log_http(http_conn_peer(c), req->method, req->path, 403,
	    refused);
	http_conn_nolog(c);
	mcp_http_error(c, 403, JRPC_INVALID_REQUEST, right == AUTH_METRICS ?
	    "Forbidden: this token may not read the metrics" :
	    "Forbidden: this token admits to /metrics only", NULL);
}

/* An OAuth token waited for its issuer: check the request again. */
static void
mcp_http_waited(void *arg)
{
	struct http_conn	*c = arg;
	struct http_request	*req = http_conn_request(c);

	req->oauth_wait = 0;
	req->oauth_retry = 1;
	http_check_again(c);
}

int
mcp_http_check_host_access(struct http_conn *c, struct http_request *req,
    int loopback)
{
	const char	*why;
	int		 status;

	if ((status = mcp_http_check_host(req, loopback, &why)) != 0) {
		mcp_http_log_refusal(c, req, why);
		mcp_http_error(c, status, JRPC_INVALID_REQUEST, why, NULL);
		return (-1);
	}
	return (0);
}

int
mcp_http_check_access(struct http_conn *c, struct http_request *req,
    int loopback, int right)
{
	const struct http_header	*h;
	struct oauth_verdict		 v;
	const char			*why;
	char				 challenge[2048];
	int				 status;

	if ((status = mcp_http_check_origin(req, loopback, &why)) != 0) {
		mcp_http_log_refusal(c, req, why);
		mcp_http_error(c, status, JRPC_INVALID_REQUEST, why, NULL);
		return (-1);
	}
	/* A page of an origin allowed by name may read the answer (CORS);
	 * not by the loopback default: any local server's page would. */
	if (conf->allowed_origins != NULL)
		req->cors = http_header(&req->head, "Origin");
	if (right == 0)
		return (0);
	switch (mcp_http_check_auth(req, right, 0, &v)) {
	case 0:
		return (0);
	case 1:
		/* Wait for the issuer (keys, introspection), then again. */
		h = http_header(&req->head, "Authorization");
		req->oauth_wait = oauth_wait(h->value + 7, h->valuelen - 7,
		    mcp_http_waited, c);
		return (1);
	case 403:
		if (v.status == OAUTH_INSUFFICIENT)
			mcp_http_insufficient(c, req, &v);
		else
			mcp_http_forbid(c, req, right);
		return (-1);
	default:
		mcp_http_log_token(c, req, &v);
		if (oauth_enabled())
			oauth_challenge(req->path, challenge, sizeof challenge,
			    v.status == OAUTH_REFUSED ? "invalid_token" : NULL,
			    v.status == OAUTH_REFUSED ? v.why : NULL, NULL);
		else
			snprintf(challenge, sizeof challenge,
			    "WWW-Authenticate: Bearer realm=\"mcp-supervisor\""
			    "\r\n");
		mcp_http_error(c, 401, JRPC_INVALID_REQUEST,
		    "Unauthorized: a valid bearer token is required",
		    challenge);
		return (-1);
	}
}
