/* SPDX-License-Identifier: ISC */
/*
 * Which endpoint serves a request: the listeners' services.  The main
 * listener (listen) serves MCP (mcp_http.c: /mcp, /sse, /messages, the
 * WebSocket path), /healthz and /readyz, the OAuth redirect of an
 * upstream's login and the client metadata document (uplogin.c), and
 * /metrics unless metrics_listen is set; the metrics listener serves /metrics, /healthz and /readyz.
 * Every path is under the listener's Host and Origin rules.  MCP needs a
 * token with the MCP right, /metrics one with the metrics right, as soon
 * as any token is configured (auth.c); the health checks need none, and
 * say why the gateway is not ready only to a request that may read the
 * metrics (health.c).
 */
#include "config.h"

#include <string.h>

#include "log.h"
#include "supervisor.h"
#include "uplogin.h"

/* Whether the metrics listener is on loopback only. */
static int	metrics_loopback = 1;

/* Does the main listener serve /metrics? */
static int
main_serves_metrics(const struct http_request *req)
{
	return (conf->metrics_listen == NULL && metrics_path(req));
}

static int
main_check(struct http_conn *c, struct http_request *req)
{
	if (health_path(req))
		return (mcp_http_check_access(c, req, listen_loopback, 0));
	if (uplogin_path(req)) {
		/* A login link's form, posted from the gateway's own page
		 * (at the redirect URI, which may be a public name). */
		if (connect_form_post(req))
			return (mcp_http_check_host_access(c, req,
			    listen_loopback));
		return (mcp_http_check_access(c, req, listen_loopback, 0));
	}
	if (main_serves_metrics(req))
		return (mcp_http_check_access(c, req, listen_loopback,
		    AUTH_METRICS));
	return (mcp_http_service.check(c, req));
}

static void
main_handle(struct http_conn *c, struct http_request *req)
{
	if (health_path(req))
		health_serve(c, req);
	else if (uplogin_path(req))
		uplogin_serve(c, req);
	else if (main_serves_metrics(req))
		metrics_serve(c, req);
	else
		mcp_http_service.handle(c, req);
}

const struct http_service gateway_service = {
	main_check,
	main_handle
};

static int
metrics_check(struct http_conn *c, struct http_request *req)
{
	static const char	 not_found[] = "not found: this listener "
	    "serves /metrics, /healthz and /readyz\n";

	if (!health_path(req) && !metrics_path(req)) {
		http_reply(c, 404, "text/plain; charset=utf-8", NULL,
		    not_found, strlen(not_found));
		return (-1);
	}
	return (mcp_http_check_access(c, req, metrics_loopback,
	    health_path(req) ? 0 : AUTH_METRICS));
}

static void
metrics_handle(struct http_conn *c, struct http_request *req)
{
	if (health_path(req))
		health_serve(c, req);
	else
		metrics_serve(c, req);
}

static const struct http_service metrics_service = {
	metrics_check,
	metrics_handle
};

/*
 * Listen on metrics_listen, if set.  Whether it is on loopback is its own
 * affair: it decides the default Host rule of this listener only, and a
 * metrics listener beyond loopback does not loosen the main one's.
 */
int
metrics_listen_start(char *bound, size_t boundlen)
{
	int	saved = listen_loopback, r;

	if (conf->metrics_listen == NULL)
		return (0);
	listen_loopback = 1;
	r = http_listen(conf->metrics_listen, &metrics_service, bound,
	    boundlen);
	metrics_loopback = listen_loopback;
	listen_loopback = saved;
	return (r);
}
