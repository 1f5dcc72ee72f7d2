/* SPDX-License-Identifier: ISC */
/*
 * Behind a proxy (trusted_proxies): the peer a request is logged, counted
 * and refused under is the client the proxy speaks for, not the proxy.  A
 * connection from a trusted address may begin with a PROXY protocol header
 * (version 1 or 2; HAProxy's send-proxy and send-proxy-v2), which gives
 * the client's address for the whole connection; a request on a trusted
 * connection may carry X-Forwarded-For, walked from the nearest hop past
 * every trusted address to the client.  From any other peer neither is
 * looked at: a PROXY header is then a malformed request (400), and
 * X-Forwarded-For is a header like any other.  The parsers are
 * common/proxy_parse.c.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log.h"
#include "proxy_parse.h"
#include "supervisor.h"
#include "xmalloc.h"

static struct netblock	*trusted;
static size_t		 ntrusted;

void
proxy_configure(void)
{
	size_t	i, n = 0;

	free(trusted);
	trusted = NULL;
	ntrusted = 0;
	for (i = 0; conf->trusted_proxies != NULL &&
	    conf->trusted_proxies[i] != NULL; i++)
		n++;
	if (n == 0)
		return;
	trusted = xcalloc(n, sizeof *trusted);
	for (i = 0; i < n; i++) {
		/* Checked when the file was read. */
		if (netblock_parse(conf->trusted_proxies[i],
		    strlen(conf->trusted_proxies[i]), &trusted[ntrusted]) == 0)
			ntrusted++;
	}
}

int
proxy_trusted(const struct netaddr *a)
{
	size_t	i;

	for (i = 0; i < ntrusted; i++) {
		if (netblock_match(&trusted[i], a))
			return (1);
	}
	return (0);
}

/* xff_client's predicate. */
static int
proxy_trusted_cb(const struct netaddr *a, void *arg)
{
	return (proxy_trusted(a));
}

#define XFF_MAX_HEADERS	8

int
proxy_request_peer(const struct netaddr *conn, const struct http_head *h,
    struct netaddr *client, const char **why)
{
	const char	*values[XFF_MAX_HEADERS];
	size_t		 lens[XFF_MAX_HEADERS], i, n = 0;

	*client = *conn;
	if (!proxy_trusted(conn))
		return (0);
	for (i = 0; i < h->nheaders; i++) {
		if (h->headers[i].namelen != 15 || strncasecmp(
		    h->headers[i].name, "X-Forwarded-For", 15) != 0)
			continue;
		if (n == XFF_MAX_HEADERS) {
			*why = "more than 8 X-Forwarded-For headers";
			return (-1);
		}
		values[n] = h->headers[i].value;
		lens[n++] = h->headers[i].valuelen;
	}
	if (n == 0)
		return (0);
	if (xff_client(values, lens, n, proxy_trusted_cb, NULL, client,
	    why) != 0)
		return (-1);
	return (1);
}
