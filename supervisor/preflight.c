/* SPDX-License-Identifier: ISC */
/*
 * What startup checks beyond the file's syntax, in one place so that -n
 * finds everything startup would: the listen address resolves, tokens
 * given by reference expand and are long enough, the users upstreams run
 * as can be switched to, the control socket's path fits, and the lock
 * file's directory is writable.  It also says what is risky but allowed
 * (listening beyond loopback without tokens or allowed_hosts, upstreams
 * left running as root).  Startup, -n and reload run it.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <libgen.h>
#include <netdb.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "redact.h"
#include "secret.h"
#include "supervisor.h"
#include "xmalloc.h"

/* Report an error at a line of the file (0: the file as a whole). */
static int
preflight_error(const struct conf *c, struct conf_at at, char *err,
    size_t errlen, const char *fmt, ...)
{
	va_list	ap;
	char	msg[768];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (at.line > 0)
		snprintf(err, errlen, "%s:%d: %s", conf_at_file(c, at),
		    at.line, msg);
	else
		snprintf(err, errlen, "%s: %s", conf_at_file(c, at), msg);
	return (-1);
}

/* Pass a formatted warning on. */
static void
preflight_warn(void (*warn)(const char *), const char *fmt, ...)
{
	va_list	ap;
	char	msg[768];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	warn(msg);
}

/* Resolve a listen address; *loopback says whether all of it is. */
static int
preflight_listen(const struct conf *c, const char *listen, struct conf_at at,
    int *loopback, char *err, size_t errlen)
{
	struct addrinfo			 hints, *res, *ai;
	const struct sockaddr_in	*s4;
	const struct sockaddr_in6	*s6;
	char				 host[256], port[16], why[256];
	unsigned int			 portno;
	int				 error;

	if (conf_split_listen(listen, host, sizeof host, &portno, why,
	    sizeof why) != 0)
		return (preflight_error(c, at, err, errlen, "%s", why));
	snprintf(port, sizeof port, "%u", portno);
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	if ((error = getaddrinfo(host, port, &hints, &res)) != 0)
		return (preflight_error(c, at, err, errlen, "%s \"%s\": %s",
		    listen == c->listen ? "listen" : "metrics_listen", listen,
		    gai_strerror(error)));
	*loopback = 1;
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		s4 = (const void *)ai->ai_addr;
		s6 = (const void *)ai->ai_addr;
		if (ai->ai_family == AF_INET &&
		    (ntohl(s4->sin_addr.s_addr) >> 24) == 127)
			continue;
		if (ai->ai_family == AF_INET6 &&
		    IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr))
			continue;
		*loopback = 0;
	}
	freeaddrinfo(res);
	return (0);
}

/* Can the upstreams be started as the users they name? */
static int
preflight_users(const struct conf *c, void (*warn)(const char *), char *err,
    size_t errlen)
{
	const struct server_conf	*srv;
	struct passwd			*pw;
	uid_t				 me = geteuid();
	size_t				 i, root = 0, used = 0;
	char				 names[256] = "";
	int				 n, cut = 0;

	for (i = 0; i < c->nservers; i++) {
		srv = &c->servers[i];
		if (srv->user == NULL) {
			if (me != 0)
				continue;
			n = snprintf(names + used, sizeof names - used, "%s%s",
			    root > 0 ? ", " : "", srv->name);
			if (n > 0 && (size_t)n < sizeof names - used)
				used += (size_t)n;
			else {
				names[used] = '\0';
				cut = 1;
			}
			root++;
			continue;
		}
		if ((pw = getpwnam(srv->user)) == NULL)
			return (preflight_error(c, srv->at, err, errlen,
			    "upstream %s: user \"%s\" does not exist",
			    srv->name, srv->user));
		if (me != 0 && pw->pw_uid != me)
			return (preflight_error(c, srv->at, err, errlen,
			    "upstream %s: user \"%s\": mcp-supervisord runs "
			    "as uid %ld, not root, and cannot start upstreams "
			    "as another user", srv->name, srv->user,
			    (long)me));
	}
	if (root > 0)
		preflight_warn(warn, "%s %s%s run%s as root: set user, for "
		    "every upstream or for %s", root == 1 ? "upstream" :
		    "upstreams", names, cut ? ", ..." : "", root == 1 ? "s" :
		    "", root == 1 ? "it" : "each");
	return (0);
}

/* Warn of names in pass_env that our environment does not have. */
static void
preflight_pass_env(const struct conf *c, void (*warn)(const char *))
{
	const struct server_conf	*srv;
	char				 names[256];
	size_t				 i, j, used, unset;
	int				 n, cut;

	for (i = 0; i < c->nservers; i++) {
		srv = &c->servers[i];
		used = unset = 0;
		cut = 0;
		names[0] = '\0';
		for (j = 0; srv->pass_env != NULL && srv->pass_env[j] != NULL;
		    j++) {
			if (getenv(srv->pass_env[j]) != NULL ||
			    (unset++ > 0 && cut))
				continue;
			n = snprintf(names + used, sizeof names - used, "%s%s",
			    unset > 1 ? ", " : "", srv->pass_env[j]);
			if (n > 0 && (size_t)n < sizeof names - used)
				used += (size_t)n;
			else {
				names[used] = '\0';
				cut = 1;
			}
		}
		if (unset > 0)
			preflight_warn(warn, "upstream %s: pass_env names %s%s, "
			    "which mcp-supervisord's environment does not "
			    "have", srv->name, names, cut ? ", ..." : "");
	}
}

/* Is the directory of a file there and writable? */
static int
preflight_dir(const char *path)
{
	char	*copy = xstrdup(path);
	int	 rc;

	rc = access(dirname(copy), W_OK | X_OK);
	free(copy);
	return (rc);
}

/*
 * Is an http:// URL's host a loopback name or address (localhost,
 * 127.0.0.0/8, [::1])?  The whole host is compared: http://localhost.
 * example.com and http://127.0.0.1.example.com are not.
 */
static int
http_url_loopback(const char *url)
{
	const char	*a = url + 7, *end, *p, *h = a;
	char		 host[256];
	size_t		 n;
	struct in_addr	 v4;

	end = a + strcspn(a, "/?#");
	for (p = a; p < end; p++) {
		if (*p == '@')
			h = p + 1;	/* after the user information */
	}
	if (*h == '[') {
		n = strcspn(h, "]");
		return (h + n < end && n == 4 && strncmp(h + 1, "::1", 3) == 0);
	}
	n = strcspn(h, ":/?#");
	if (h + n > end)
		n = (size_t)(end - h);
	if (n == 0 || n >= sizeof host)
		return (0);
	memcpy(host, h, n);
	host[n] = '\0';
	if (strcasecmp(host, "localhost") == 0)
		return (1);
	return (inet_pton(AF_INET, host, &v4) == 1 &&
	    (ntohl(v4.s_addr) >> 24) == 127);
}

/*
 * Check the providers: each api_key expands (the variable is set, the
 * file readable) to one non-empty line; a key going to a remote host in
 * clear text is worth a warning.
 */
static int
preflight_llm(const struct conf *c, void (*warn)(const char *), char *err,
    size_t errlen)
{
	const struct llm_conf	*lc;
	char			 why[512], *key;
	size_t			 i;
	int			 bad;

	for (i = 0; i < c->nllms; i++) {
		lc = &c->llms[i];
		if (lc->api_key == NULL)
			continue;
		if ((key = secret_expand(lc->api_key, why, sizeof why)) == NULL)
			return (preflight_error(c, lc->at, err, errlen,
			    "llm %s: api_key: %s", lc->name, why));
		bad = *key == '\0' || strpbrk(key, "\r\n") != NULL;
		explicit_bzero(key, strlen(key));
		free(key);
		if (bad)
			return (preflight_error(c, lc->at, err, errlen,
			    "llm %s: api_key: the key is empty or not one line",
			    lc->name));
		if (strncmp(lc->url, "http://", 7) == 0 &&
		    !http_url_loopback(lc->url))
			preflight_warn(warn, "llm %s: its api_key goes to %s "
			    "without TLS", lc->name, url_redact(lc->url, why,
			    sizeof why));
	}
	return (0);
}

/* Does a client's secret expand to one non-empty line?  (Its worker
 * gets the secret itself.) */
static int
preflight_client_secret(const struct conf *c,
    const struct oauth_issuer_conf *ic, const char *what, const char *ref,
    char *err, size_t errlen)
{
	char	why[512], *v;
	int	bad;

	if (ref == NULL)
		return (0);
	if ((v = secret_expand(ref, why, sizeof why)) == NULL)
		return (preflight_error(c, ic->at, err, errlen, "issuer %s: "
		    "%s client_secret: %s", ic->issuer, what, why));
	bad = *v == '\0' || strpbrk(v, "\r\n") != NULL;
	explicit_bzero(v, strlen(v));
	free(v);
	if (bad)
		return (preflight_error(c, ic->at, err, errlen, "issuer %s: "
		    "%s client_secret is empty or not one line", ic->issuer,
		    what));
	return (0);
}

/*
 * Check the OAuth issuers' client secrets, and say when a per-user
 * upstream's OAuth principals cannot log in: the link they are shown
 * needs a login client at their issuer.
 */
static int
preflight_oauth(const struct conf *c, void (*warn)(const char *), char *err,
    size_t errlen)
{
	const struct oauth_issuer_conf	*ic;
	size_t				 i, j;

	for (i = 0; c->oauth != NULL && i < c->oauth->nissuers; i++) {
		ic = &c->oauth->issuers[i];
		if (preflight_client_secret(c, ic, "introspection",
		    ic->introspection.secret, err, errlen) != 0 ||
		    preflight_client_secret(c, ic, "login", ic->login.secret,
		    err, errlen) != 0)
			return (-1);
	}
	for (i = 0; c->oauth != NULL && i < c->nservers; i++) {
		if (c->servers[i].oauth == NULL ||
		    c->servers[i].oauth->identity != UPOAUTH_PER_USER)
			continue;
		for (j = 0; j < c->oauth->nissuers; j++) {
			ic = &c->oauth->issuers[j];
			if (ic->login.client_id == NULL)
				preflight_warn(warn, "issuer %s has no login "
				    "client: its users cannot log in to "
				    "per-user upstreams (the gateway cannot "
				    "make sure who opens their login links)",
				    ic->issuer);
		}
		break;
	}
	return (0);
}

/* Does request_state_key expand to a key long enough? */
static int
preflight_state_key(const struct conf *c, char *why, size_t len)
{
	char	*v, err[256];
	size_t	 n;

	if (c->request_state_key == NULL)
		return (0);
	if ((v = secret_expand(c->request_state_key, err, sizeof err)) ==
	    NULL) {
		snprintf(why, len, "request_state_key: %s", err);
		return (-1);
	}
	n = strlen(v);
	explicit_bzero(v, n);
	free(v);
	if (n < CONF_MIN_STATE_KEY || n > 256) {
		snprintf(why, len, "request_state_key: %zu characters (it "
		    "needs %d to 256)", n, CONF_MIN_STATE_KEY);
		return (-1);
	}
	return (0);
}

int
preflight(const struct conf *c, int flags, int *scope,
    void (*warn)(const char *), char *err, size_t errlen)
{
	const struct conf_at	 whole = { 0, 0 };	/* the file */
	struct sockaddr_un	 sun;
	struct stat		 st;
	char			 why[512];
	int			 loopback = 1, mloopback = 1, tokens;

	if (flags & PREFLIGHT_RELOAD) {
		loopback = !(flags & PREFLIGHT_WIDE);
		mloopback = !(flags & PREFLIGHT_MWIDE);
	} else {
		if (preflight_listen(c, c->listen, c->listen_at, &loopback,
		    err, errlen) != 0)
			return (-1);
		if (c->metrics_listen != NULL && preflight_listen(c,
		    c->metrics_listen, c->metrics_listen_at, &mloopback,
		    err, errlen) != 0)
			return (-1);
		if (strlen(c->control) >= sizeof sun.sun_path)
			return (preflight_error(c, whole, err, errlen, "control "
			    "socket %s: the path is longer than %zu bytes",
			    c->control, sizeof sun.sun_path - 1));
		/* A configured state_dir must be there (pin_open). */
		if (c->state_dir_at.line != 0 && stat(c->state_dir, &st) != 0)
			return (preflight_error(c, c->state_dir_at, err,
			    errlen, "state_dir %s: %s", c->state_dir,
			    strerror(errno)));
		if (c->state_dir_at.line != 0 && !S_ISDIR(st.st_mode))
			return (preflight_error(c, c->state_dir_at, err,
			    errlen, "state_dir %s: not a directory",
			    c->state_dir));
	}
	if (auth_validate(c, &tokens, why, sizeof why) != 0)
		return (preflight_error(c, whole, err, errlen, "%s", why));
	if (preflight_state_key(c, why, sizeof why) != 0)
		return (preflight_error(c, whole, err, errlen, "%s", why));
	if (c->ws_lockfile != NULL && preflight_dir(c->ws_lockfile) != 0)
		return (preflight_error(c, whole, err, errlen, "ws_lockfile %s: "
		    "its directory: %s", c->ws_lockfile, strerror(errno)));
	if (preflight_users(c, warn, err, errlen) != 0)
		return (-1);
	if (preflight_llm(c, warn, err, errlen) != 0)
		return (-1);
	if (preflight_oauth(c, warn, err, errlen) != 0)
		return (-1);
	preflight_pass_env(c, warn);
	if (scope != NULL)
		*scope = (loopback ? 0 : PREFLIGHT_WIDE) |
		    (mloopback ? 0 : PREFLIGHT_MWIDE);
	/* With oauth every request needs a token; so with a lock file. */
	if (c->oauth != NULL || (c->ws_lockfile != NULL &&
	    c->ws_path[0] != '\0'))
		tokens |= AUTH_MCP | AUTH_METRICS;
	if (!loopback && !(tokens & AUTH_MCP))
		preflight_warn(warn, "listen %s is beyond loopback and there "
		    "are no auth_tokens or clients: any client that can reach "
		    "it can use every upstream", c->listen);
	if (!mloopback && !tokens)
		preflight_warn(warn, "metrics_listen %s is beyond loopback and "
		    "there are no tokens: any client that can reach it can read "
		    "the metrics, which name every upstream; set "
		    "metrics_tokens", c->metrics_listen);
	if (!loopback && c->allowed_hosts == NULL)
		preflight_warn(warn, "listen %s is beyond loopback and there "
		    "are no allowed_hosts: Host headers are not checked",
		    c->listen);
	return (0);
}
