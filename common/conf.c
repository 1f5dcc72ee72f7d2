/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <libconfig.h>

#include "conf.h"
#include "conf_priv.h"
#include "log.h"
#include "naming.h"
#include "proxy_parse.h"
#include "secret.h"
#include "xmalloc.h"

#define CONF_MAX_SERVERS	256


const char *const conf_transport_names[] = {
	[TRANSPORT_STDIO] = "stdio",
	[TRANSPORT_HTTP] = "http",
	[TRANSPORT_SSE] = "sse",
	[TRANSPORT_WS] = "ws",
};

const char *const conf_strategy_names[] = {
	[STRATEGY_CLIENT] = "client",
	[STRATEGY_DEFAULTS] = "defaults",
	[STRATEGY_DECLINE] = "decline",
	[STRATEGY_LLM] = "llm",
	[STRATEGY_TOOL] = "tool",
};

const char *const conf_llm_provider_names[] = {
	[LLM_OPENAI] = "openai",
	[LLM_ANTHROPIC] = "anthropic",
	[LLM_OLLAMA] = "ollama",
};

const char *const conf_isolation_names[] = {
	[ISOLATION_SHARED] = "shared",
	[ISOLATION_PER_SESSION] = "per-session",
};

const char *const conf_era_names[] = {
	[ERA_AUTO] = "auto",
	[ERA_2025] = "2025",
	[ERA_2026] = "2026",
};

const char *
conf_era_name(enum era e)
{
	return (conf_era_names[e]);
}

const char *
conf_transport_name(enum transport t)
{
	return (conf_transport_names[t]);
}

const char *
conf_strategy_name(enum strategy s)
{
	return (conf_strategy_names[s]);
}

const char *
conf_isolation_name(enum isolation i)
{
	return (conf_isolation_names[i]);
}

const char *
conf_llm_provider_name(enum llm_provider p)
{
	return (conf_llm_provider_names[p]);
}

/* Wipe a string that may hold a secret. */
static void
explicit_bzero_str(char *s)
{
	if (s != NULL)
		explicit_bzero(s, strlen(s));
}

#define CONF_MAX_CLIENTS	1024

/*
 * Is s a valid client name?  It prefixes the client's tools as "name__",
 * and a second session's as "name__2__": no "__" in a name, so no
 * client's tools are ever named inside another's.
 */
static int
valid_client_name(const char *s)
{
	return (strstr(s, "__") == NULL && conf_valid_name(s, 32));
}

/*
 * Check a token as written: a literal one (no ${...} reference) must be
 * long enough to be worth guessing at; references are checked when they
 * are expanded, at startup and by -n.
 */
static int
conf_check_token(struct conf_ctx *ctx, const config_setting_t *s,
    const char *token)
{
	char	*v, why[256];
	size_t	 len;

	if (strstr(token, "${") != NULL)
		return (0);
	if ((v = secret_expand(token, why, sizeof why)) == NULL)
		return (conf_error(ctx, s, "%s", why));
	len = strlen(v);
	explicit_bzero(v, len);
	free(v);
	if (len < CONF_MIN_TOKEN)
		return (conf_error(ctx, s, "a token must have at least %d "
		    "characters (this one has %zu)", CONF_MIN_TOKEN, len));
	return (0);
}

/*
 * Check a request_state_key as written: a literal one must be long enough
 * to be a key; a ${env:..} or ${file:..} reference is checked when it is
 * expanded.
 */
static int
conf_check_state_key(struct conf_ctx *ctx, const config_setting_t *s,
    const char *key)
{
	if (strstr(key, "${") != NULL)
		return (0);
	if (strlen(key) < CONF_MIN_STATE_KEY)
		return (conf_error(ctx, s, "request_state_key must have at "
		    "least %d characters (this one has %zu)",
		    CONF_MIN_STATE_KEY, strlen(key)));
	return (0);
}

/* Read one group of clients. */
static int
parse_client(struct conf_ctx *ctx, const config_setting_t *g,
    struct client_conf *cl)
{
	config_setting_t	*s;
	const char		*key;
	int			 i, n;

	memset(cl, 0, sizeof *cl);
	cl->at = conf_where(ctx, g);
	if (!config_setting_is_group(g))
		return (conf_error(ctx, g, "each entry of clients must be a "
		    "group { name = ...; token = ...; }"));
	n = config_setting_length(g);
	for (i = 0; i < n; i++) {
		s = config_setting_get_elem(g, (unsigned int)i);
		key = config_setting_name(s);
		if (strcmp(key, "name") == 0) {
			if (conf_get_string(ctx, s, &cl->name, 0) != 0)
				return (-1);
			if (!valid_client_name(cl->name))
				return (conf_error(ctx, s, "client name \"%s\" "
				    "must be 1 to 32 characters of A-Z a-z 0-9 "
				    "_ - ., beginning with a letter or digit, "
				    "without __", cl->name));
		} else if (strcmp(key, "token") == 0) {
			if (conf_get_string(ctx, s, &cl->token, 0) != 0 ||
			    conf_check_token(ctx, s, cl->token) != 0)
				return (-1);
		} else if (strcmp(key, "register") == 0) {
			if (conf_get_bool(ctx, s, &cl->may_register) != 0)
				return (-1);
		} else if (strcmp(key, "metrics") == 0) {
			if (conf_get_bool(ctx, s, &cl->metrics) != 0)
				return (-1);
		} else if (strcmp(key, "allow") == 0) {
			if (conf_get_strv(ctx, s, 0, &cl->allow) != 0)
				return (-1);
		} else if (strcmp(key, "deny") == 0) {
			if (conf_get_strv(ctx, s, 0, &cl->deny) != 0)
				return (-1);
		} else if (strcmp(key, "oauth") == 0) {
			if (conf_parse_client_oauth(ctx, s, &cl->oauth) != 0)
				return (-1);
		} else
			return (conf_error(ctx, s, "client: unknown setting "
			    "\"%s\"", key));
	}
	if (cl->name == NULL || (cl->token == NULL && cl->oauth == NULL))
		return (conf_error(ctx, g, "a client needs a name and a "
		    "token (or oauth = { ... })"));
	return (0);
}

/* Read clients = ( ... ). */
static int
parse_clients(struct conf_ctx *ctx, const config_setting_t *list,
    struct conf *conf)
{
	config_setting_t	*s;
	char			 where[512];
	int			 i, n, j;

	if ((n = conf_list_length(ctx, list, "clients must be a list: "
	    "clients = ( { ... }, { ... } );", CONF_MAX_CLIENTS,
	    "clients")) < 0)
		return (-1);
	conf->clients = xcalloc((size_t)n + 1, sizeof *conf->clients);
	for (i = 0; i < n; i++) {
		s = config_setting_get_elem(list, (unsigned int)i);
		conf->nclients++;
		if (parse_client(ctx, s, &conf->clients[i]) != 0)
			return (-1);
		for (j = 0; j < i; j++) {
			if (strcmp(conf->clients[j].name,
			    conf->clients[i].name) == 0)
				return (conf_error(ctx, s, "client name \"%s\" "
				    "already used on %s", conf->clients[i].name,
				    conf_at_text(ctx, conf->clients[j].at,
				    conf->clients[i].at, where, sizeof where)));
		}
	}
	return (0);
}

int
conf_split_listen(const char *addr, char *host, size_t hostlen,
    unsigned int *port, char *err, size_t errlen)
{
	const char	*colon, *h = addr, *p;
	size_t		 len;
	unsigned long	 n = 0;

	if (*addr == '[') {
		if ((colon = strstr(addr, "]:")) == NULL) {
			snprintf(err, errlen, "listen \"%s\": no port; write "
			    "[address]:port, e.g. \"[::1]:8931\"", addr);
			return (-1);
		}
		h = addr + 1;
		len = (size_t)(colon - h);
		colon++;
	} else if ((colon = strchr(addr, ':')) == NULL) {
		snprintf(err, errlen, "listen \"%s\": no port; write "
		    "host:port, e.g. \"127.0.0.1:8931\"", addr);
		return (-1);
	} else if (strchr(colon + 1, ':') != NULL) {
		snprintf(err, errlen, "listen \"%s\": an IPv6 address goes "
		    "in brackets, e.g. \"[::1]:8931\"", addr);
		return (-1);
	} else
		len = (size_t)(colon - addr);
	if (len == 0) {
		snprintf(err, errlen, "listen \"%s\": no host; write "
		    "\"127.0.0.1%s\" for loopback, \"0.0.0.0%s\" for every "
		    "IPv4 address", addr, colon, colon);
		return (-1);
	}
	if (len >= hostlen) {
		snprintf(err, errlen, "listen: the host is too long");
		return (-1);
	}
	for (p = colon + 1; *p >= '0' && *p <= '9' && n <= 65535; p++)
		n = n * 10 + (unsigned long)(*p - '0');
	if (p == colon + 1 || *p != '\0' || n > 65535) {
		snprintf(err, errlen, "listen \"%s\": the port must be a "
		    "number from 1 to 65535 (0 picks a free one)", addr);
		return (-1);
	}
	memcpy(host, h, len);
	host[len] = '\0';
	*port = (unsigned int)n;
	return (0);
}

/* May c be part of an instance name? */
static int
instance_char(char c)
{
	return ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	    (c >= '0' && c <= '9') || c == '_' || c == '-');
}

int
conf_valid_instance(const char *s)
{
	size_t	i;

	for (i = 0; s[i] != '\0'; i++) {
		if (i >= CONF_INSTANCE_MAX || !instance_char(s[i]))
			return (0);
	}
	return (i > 0);
}

void
conf_default_instance(char *buf, size_t len)
{
	char	host[256];
	size_t	i;

	if (gethostname(host, sizeof host) != 0)
		host[0] = '\0';
	host[sizeof host - 1] = '\0';
	for (i = 0; host[i] != '\0' && host[i] != '.' && i + 1 < len &&
	    i < CONF_INSTANCE_MAX; i++) {
		buf[i] = instance_char(host[i]) ? host[i] : '-';
	}
	buf[i] = '\0';
	if (i == 0)
		snprintf(buf, len, "mcp");
}

/* Read the access_log setting: a path, "syslog" or "stderr". */
static int
conf_get_access_log(struct conf_ctx *ctx, const config_setting_t *s,
    struct conf *conf)
{
	if (conf_get_string(ctx, s, &conf->access_log, 0) != 0)
		return (-1);
	if (strcmp(conf->access_log, "syslog") != 0 &&
	    strcmp(conf->access_log, "stderr") != 0 &&
	    conf->access_log[0] != '/')
		return (conf_error(ctx, s, "access_log must be an absolute "
		    "path, \"syslog\" or \"stderr\""));
	return (0);
}

/* Read trusted_proxies: addresses and CIDR blocks. */
static int
conf_get_trusted(struct conf_ctx *ctx, const config_setting_t *s,
    struct conf *conf)
{
	struct netblock	 b;
	size_t		 i;

	if (conf_get_strv(ctx, s, 0, &conf->trusted_proxies) != 0)
		return (-1);
	for (i = 0; conf->trusted_proxies[i] != NULL; i++) {
		if (i >= CONF_MAX_TRUSTED)
			return (conf_error(ctx, s, "trusted_proxies: more than "
			    "%d entries", CONF_MAX_TRUSTED));
		if (netblock_parse(conf->trusted_proxies[i],
		    strlen(conf->trusted_proxies[i]), &b) != 0)
			return (conf_error(ctx, config_setting_get_elem(s,
			    (unsigned int)i), "trusted_proxies: \"%s\" is not "
			    "an IP address or a CIDR block (\"10.0.0.0/8\", "
			    "\"::1\")", conf->trusted_proxies[i]));
	}
	return (0);
}

/* Read the top level. */
static int
parse_root(struct conf_ctx *ctx, config_t *cf, struct conf *conf)
{
	config_setting_t	*root, *s, *servers = NULL;
	const char		*key;
	char			 host[256], why[256], where[512];
	unsigned int		 port;
	long long		 ll;
	int			 i, n, j;

	root = config_root_setting(cf);
	n = config_setting_length(root);
	/* Globals first: server defaults depend on them. */
	for (i = 0; i < n; i++) {
		s = config_setting_get_elem(root, (unsigned int)i);
		key = config_setting_name(s);
		if (strcmp(key, "listen") == 0) {
			if (conf_get_string(ctx, s, &conf->listen, 0) != 0)
				return (-1);
			if (conf_split_listen(conf->listen, host, sizeof host,
			    &port, why, sizeof why) != 0)
				return (conf_error(ctx, s, "%s", why));
			conf->listen_at = conf_where(ctx, s);
		} else if (strcmp(key, "metrics_listen") == 0) {
			if (conf_get_string(ctx, s, &conf->metrics_listen, 0) !=
			    0)
				return (-1);
			if (conf_split_listen(conf->metrics_listen, host,
			    sizeof host, &port, why, sizeof why) != 0)
				return (conf_error(ctx, s, "metrics_%s", why));
			conf->metrics_listen_at = conf_where(ctx, s);
		} else if (strcmp(key, "instance") == 0) {
			if (conf_get_string(ctx, s, &conf->instance, 0) != 0)
				return (-1);
			if (!conf_valid_instance(conf->instance))
				return (conf_error(ctx, s, "instance \"%s\" must "
				    "be 1 to %d characters of A-Z a-z 0-9 _ -",
				    conf->instance, CONF_INSTANCE_MAX));
		} else if (strcmp(key, "access_log") == 0) {
			if (conf_get_access_log(ctx, s, conf) != 0)
				return (-1);
		} else if (strcmp(key, "trusted_proxies") == 0) {
			if (conf_get_trusted(ctx, s, conf) != 0)
				return (-1);
		} else if (strcmp(key, "user") == 0) {
			if (conf_get_string(ctx, s, &conf->user, 0) != 0)
				return (-1);
			if (getpwnam(conf->user) == NULL)
				return (conf_error(ctx, s, "user \"%s\" does not "
				    "exist", conf->user));
		} else if (strcmp(key, "pass_env") == 0) {
			if (conf_get_pass_env(ctx, s, &conf->pass_env) != 0)
				return (-1);
		} else if (strcmp(key, "control") == 0) {
			if (conf_get_string(ctx, s, &conf->control, 0) != 0)
				return (-1);
			if (conf->control[0] != '/')
				return (conf_error(ctx, s, "control must be an "
				    "absolute path"));
		} else if (strcmp(key, "allowed_origins") == 0) {
			if (conf_get_strv(ctx, s, 0, &conf->allowed_origins) != 0)
				return (-1);
		} else if (strcmp(key, "allowed_hosts") == 0) {
			if (conf_get_strv(ctx, s, 0, &conf->allowed_hosts) != 0)
				return (-1);
		} else if (strcmp(key, "auth_tokens") == 0) {
			if (conf_get_strv(ctx, s, 1, &conf->auth_tokens) != 0)
				return (-1);
			for (j = 0; conf->auth_tokens[j] != NULL; j++) {
				if (conf_check_token(ctx, config_setting_get_elem(
				    s, (unsigned int)j), conf->auth_tokens[j]) != 0)
					return (-1);
			}
		} else if (strcmp(key, "metrics_tokens") == 0) {
			if (conf_get_strv(ctx, s, 1, &conf->metrics_tokens) != 0)
				return (-1);
			for (j = 0; conf->metrics_tokens[j] != NULL; j++) {
				if (conf_check_token(ctx, config_setting_get_elem(
				    s, (unsigned int)j), conf->metrics_tokens[j]) !=
				    0)
					return (-1);
			}
		} else if (strcmp(key, "max_message") == 0) {
			if (conf_get_size(ctx, s, 4096, 1ULL << 30,
			    &conf->max_message) != 0)
				return (-1);
		} else if (strcmp(key, "max_body") == 0) {
			if (conf_get_size(ctx, s, 1024, 1ULL << 30,
			    &conf->max_body) != 0)
				return (-1);
		} else if (strcmp(key, "max_sessions") == 0) {
			if (conf_get_int(ctx, s, 1, 1000000, &ll) != 0)
				return (-1);
			conf->max_sessions = (unsigned int)ll;
		} else if (strcmp(key, "max_pending") == 0) {
			if (conf_get_int(ctx, s, 1, 100000, &ll) != 0)
				return (-1);
			conf->max_pending = (unsigned int)ll;
		} else if (strcmp(key, "session_timeout") == 0) {
			if (conf_get_seconds(ctx, s, 10, 7 * 86400,
			    &conf->session_timeout) != 0)
				return (-1);
		} else if (strcmp(key, "request_timeout") == 0) {
			if (conf_get_seconds(ctx, s, 1, 86400,
			    &conf->request_timeout) != 0)
				return (-1);
		} else if (strcmp(key, "server_request_timeout") == 0) {
			if (conf_get_seconds(ctx, s, 1, 86400,
			    &conf->server_request_timeout) != 0)
				return (-1);
		} else if (strcmp(key, "sse_heartbeat") == 0) {
			if (conf_get_seconds(ctx, s, 0, 3600,
			    &conf->sse_heartbeat) != 0)
				return (-1);
		} else if (strcmp(key, "elicitation") == 0) {
			if (conf_get_strategies(ctx, s, conf->elicitation, NULL,
			    &conf->nelicitation) != 0)
				return (-1);
		} else if (strcmp(key, "sampling") == 0) {
			if (conf_get_strategies(ctx, s, conf->sampling,
			    conf->sampling_target, &conf->nsampling) != 0)
				return (-1);
			conf->sampling_at = conf_where(ctx, s);
		} else if (strcmp(key, "llm") == 0) {
			if (conf_parse_llms(ctx, s, conf) != 0)
				return (-1);
		} else if (strcmp(key, "ws_path") == 0) {
			if (conf_get_string(ctx, s, &conf->ws_path, 1) != 0)
				return (-1);
			conf->ws_path_at = conf_where(ctx, s);
			/* What else the gateway serves: conf_check_paths. */
			if (conf->ws_path[0] != '\0' &&
			    (conf->ws_path[0] != '/' ||
			    strpbrk(conf->ws_path, "?# \t") != NULL))
				return (conf_error(ctx, s, "ws_path must be a "
				    "path beginning with /, or \"\" for "
				    "none"));
		} else if (strcmp(key, "ws_lockfile") == 0) {
			if (conf_get_string(ctx, s, &conf->ws_lockfile, 0) != 0)
				return (-1);
			if (conf->ws_lockfile[0] != '/')
				return (conf_error(ctx, s, "ws_lockfile must be "
				    "an absolute path"));
		} else if (strcmp(key, "request_state_key") == 0) {
			if (conf_get_string(ctx, s, &conf->request_state_key,
			    0) != 0 || conf_check_state_key(ctx, s,
			    conf->request_state_key) != 0)
				return (-1);
		} else if (strcmp(key, "request_state_ttl") == 0) {
			if (conf_get_seconds(ctx, s, 5, 86400,
			    &conf->request_state_ttl) != 0)
				return (-1);
		} else if (strcmp(key, "cache_ttl") == 0) {
			if (conf_get_seconds(ctx, s, 0, 86400,
			    &conf->cache_ttl) != 0)
				return (-1);
		} else if (strcmp(key, "client_tool_timeout") == 0) {
			if (conf_get_seconds(ctx, s, 1, 86400,
			    &conf->client_tool_timeout) != 0)
				return (-1);
		} else if (strcmp(key, "client_tools_max") == 0) {
			if (conf_get_int(ctx, s, 0, 10000, &ll) != 0)
				return (-1);
			conf->client_tools_max = (unsigned int)ll;
		} else if (strcmp(key, "clients") == 0) {
			if (parse_clients(ctx, s, conf) != 0)
				return (-1);
		} else if (strcmp(key, "endpoints") == 0) {
			if (conf_parse_endpoints(ctx, s, conf) != 0)
				return (-1);
		} else if (strcmp(key, "oauth") == 0) {
			if (conf_parse_oauth(ctx, s, conf) != 0)
				return (-1);
		} else if (strcmp(key, "oauth_client") == 0) {
			if (conf_parse_oauth_client(ctx, s, conf) != 0)
				return (-1);
		} else if (strcmp(key, "rate_limits") == 0) {
			if (conf_parse_rate_limits(ctx, s, conf) != 0)
				return (-1);
		} else if (strcmp(key, "tracing") == 0) {
			if (conf_parse_tracing(ctx, s, conf) != 0)
				return (-1);
		} else if (strcmp(key, "ws_ping_interval") == 0) {
			if (conf_get_seconds(ctx, s, 0, 3600,
			    &conf->ws_ping_interval) != 0)
				return (-1);
		} else if (strcmp(key, "max_buffered") == 0) {
			if (conf_get_size(ctx, s, 1024 * 1024, 1ULL << 40,
			    &conf->max_buffered) != 0)
				return (-1);
		} else if (strcmp(key, "page_size") == 0) {
			if (conf_get_int(ctx, s, 1, 100000, &ll) != 0)
				return (-1);
			conf->page_size = (unsigned int)ll;
		} else if (strcmp(key, "state_dir") == 0 ||
		    strcmp(key, "pinning") == 0 ||
		    strcmp(key, "discovery") == 0) {
			if (conf_parse_catalog_key(ctx, s, conf) != 0)
				return (-1);
		} else if (strcmp(key, "servers") == 0) {
			if (!config_setting_is_list(s))
				return (conf_error(ctx, s, "servers must be a "
				    "list: servers = ( { ... }, { ... } );"));
			servers = s;
		} else
			return (conf_error(ctx, s, "unknown setting \"%s\"",
			    key));
	}
	if (conf_check_paths(ctx, conf) != 0 ||
	    conf_check_endpoints(ctx, conf) != 0)
		return (-1);
	if (servers == NULL)
		return (conf_check_links(ctx, conf) != 0 ||
		    conf_check_oauth(ctx, conf) != 0 ? -1 : 0);
	n = config_setting_length(servers);
	if (n > CONF_MAX_SERVERS)
		return (conf_error(ctx, servers, "more than %d servers",
		    CONF_MAX_SERVERS));
	conf->servers = xcalloc((size_t)n + 1, sizeof *conf->servers);
	for (i = 0; i < n; i++) {
		s = config_setting_get_elem(servers, (unsigned int)i);
		conf->nservers++;
		if (conf_parse_server(ctx, conf, s, &conf->servers[i]) != 0)
			return (-1);
		for (j = 0; j < i; j++) {
			if (strcmp(conf->servers[j].name,
			    conf->servers[i].name) == 0)
				return (conf_error(ctx, s, "server name \"%s\" "
				    "already used on %s", conf->servers[i].name,
				    conf_at_text(ctx, conf->servers[j].at,
				    conf->servers[i].at, where, sizeof where)));
		}
	}
	if (conf_check_overrides(ctx, conf) != 0 ||
	    conf_check_upoauth(ctx, conf) != 0)
		return (-1);
	return (conf_check_links(ctx, conf) != 0 ||
	    conf_check_oauth(ctx, conf) != 0 ? -1 : 0);
}

/* Make an empty configuration with the defaults. */
static struct conf *
conf_new(const char *file)
{
	struct conf	*conf;

	conf = xcalloc(1, sizeof *conf);
	conf->file = xstrdup(file);
	conf->listen = xstrdup(CONF_DEFAULT_LISTEN);
	conf->control = xstrdup(CONF_DEFAULT_CONTROL);
	conf->instance = xcalloc(1, CONF_INSTANCE_MAX + 1);
	conf_default_instance(conf->instance, CONF_INSTANCE_MAX + 1);
	conf->max_message = 32 * 1024 * 1024;
	conf->max_body = 8 * 1024 * 1024;
	conf->max_sessions = 10000;
	conf->max_pending = 256;
	conf->session_timeout = 1800;
	conf->request_timeout = 300;
	conf->server_request_timeout = 300;
	conf->sse_heartbeat = 15;
	conf->page_size = 500;
	conf->max_buffered = 64 * 1024 * 1024;
	conf->ws_path = xstrdup("/ws");
	conf->state_dir = xstrdup(CONF_DEFAULT_STATE_DIR);
	conf->ws_ping_interval = 30;
	conf->request_state_ttl = 300;
	conf->cache_ttl = 60;
	conf->client_tool_timeout = 30;
	conf->client_tools_max = 128;
	/* The calling client answers when it can, else the gateway
	 * declines: so upstreams are told of both (era_client_caps). */
	conf->elicitation[0] = STRATEGY_CLIENT;
	conf->elicitation[1] = STRATEGY_DECLINE;
	conf->nelicitation = 2;
	conf->sampling[0] = STRATEGY_CLIENT;
	conf->sampling[1] = STRATEGY_DECLINE;
	conf->nsampling = 2;
	return (conf);
}

/* Finish a libconfig parse into a configuration. */
static struct conf *
conf_finish(config_t *cf, int ok, const char *name, char *err, size_t errlen)
{
	struct conf_ctx	 ctx = { name, err, errlen, NULL };
	struct conf	*conf;

	if (!ok) {
		snprintf(err, errlen, "%s:%d: %s",
		    config_error_file(cf) != NULL ? config_error_file(cf) :
		    name, config_error_line(cf), config_error_text(cf));
		config_destroy(cf);
		return (NULL);
	}
	conf = conf_new(name);
	ctx.conf = conf;
	if (parse_root(&ctx, cf, conf) != 0) {
		conf_free(conf);
		conf = NULL;
	}
	config_destroy(cf);
	return (conf);
}

struct conf *
conf_load(const char *file, char *err, size_t errlen)
{
	config_t	cf;
	FILE		*f;
	int		 ok;

	if ((f = fopen(file, "r")) == NULL) {
		snprintf(err, errlen, "%s: %s", file, strerror(errno));
		return (NULL);
	}
	fclose(f);
	config_init(&cf);
	ok = config_read_file(&cf, file);
	return (conf_finish(&cf, ok, file, err, errlen));
}

struct conf *
conf_parse(const char *text, const char *name, char *err, size_t errlen)
{
	config_t	cf;
	int		ok;

	config_init(&cf);
	ok = config_read_string(&cf, text);
	return (conf_finish(&cf, ok, name, err, errlen));
}

void
conf_server_free(struct server_conf *srv)
{
	if (srv == NULL)
		return;
	free(srv->name);
	conf_strv_free(srv->command);
	conf_strv_free(srv->env);
	conf_strv_free(srv->pass_env);
	conf_strv_free(srv->headers);
	conf_targets_free(srv->sampling_target, srv->nsampling);
	free(srv->ca_file);
	free(srv->user);
	free(srv->cwd);
	free(srv->url);
	free(srv->prefix);
	conf_strv_free(srv->scopes);
	conf_upoauth_free(srv->oauth);
	conf_overrides_free(srv);
	memset(srv, 0, sizeof *srv);
}

void
conf_free(struct conf *conf)
{
	size_t	i;

	if (conf == NULL)
		return;
	for (i = 0; i < conf->nincluded; i++)
		free(conf->included[i]);
	free(conf->included);
	for (i = 0; i < conf->nservers; i++)
		conf_server_free(&conf->servers[i]);
	free(conf->servers);
	for (i = 0; i < conf->nllms; i++)
		conf_llm_free(&conf->llms[i]);
	free(conf->llms);
	conf_targets_free(conf->sampling_target, conf->nsampling);
	free(conf->file);
	free(conf->listen);
	free(conf->user);
	conf_strv_free(conf->pass_env);
	free(conf->control);
	free(conf->instance);
	free(conf->metrics_listen);
	free(conf->access_log);
	conf_strv_free(conf->trusted_proxies);
	free(conf->ws_path);
	free(conf->ws_lockfile);
	free(conf->state_dir);
	explicit_bzero_str(conf->request_state_key);
	free(conf->request_state_key);
	for (i = 0; i < conf->nclients; i++) {
		free(conf->clients[i].name);
		explicit_bzero_str(conf->clients[i].token);
		free(conf->clients[i].token);
		conf_strv_free(conf->clients[i].allow);
		conf_strv_free(conf->clients[i].deny);
		conf_oauth_match_free(conf->clients[i].oauth);
	}
	conf_oauth_free(conf->oauth);
	free(conf->clients);
	conf_endpoints_free(conf);
	conf_rate_limits_free(conf);
	conf_trace_free(conf->tracing);
	conf_oauth_client_free(conf->oauth_client);
	conf_strv_free(conf->allowed_origins);
	conf_strv_free(conf->allowed_hosts);
	conf_strv_free(conf->auth_tokens);
	conf_strv_free(conf->metrics_tokens);
	free(conf);
}
